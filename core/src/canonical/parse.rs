//! Canonical JSON → Arrow: the inverse of [`super::value`] / [`super::rows`], for rows a user
//! hands to a writer (JSON lines, CSV cells) and for round-trip tests over the corpus.
//!
//! The target Arrow type decides how a JSON value is read. Besides the exact canonical form
//! (see the table in [`super`]), the forms a person writes by hand are accepted:
//!
//! | Arrow | accepted JSON |
//! |---|---|
//! | `Int8`..`Int64` | integer number; a string of an integer (`"-12"`, `"+7"`); a number with a zero fraction (`5.0`, `1e3`) |
//! | `Float32`, `Float64` | number; a string of a number; `"NaN"`, `"Infinity"`, `"-Infinity"` (also `"inf"`, any case) |
//! | `Decimal128(p, s)` | string (`"-0.10"`, `"1.5"`, `"12e-1"`) or number, read exactly from its digits (never through a double); at most `s` fraction digits after dropping trailing zeros and at most `p` digits in all |
//! | `Utf8` (also large/view) | string |
//! | `Binary` (also view, fixed size) | hex string, either case |
//! | `LargeBinary` (BLOB) | hex string, or `{"hex": ..}` with optional `len` and `sha256` (checked) |
//! | `Boolean` | `true`/`false`, or the strings `"true"`/`"false"` (any case) |
//! | `Date32` | `"YYYY-MM-DD"` (years may carry a sign and more digits: `"-0001-12-31"`, `"+10000-01-01"`) |
//! | `Time32`/`Time64` | `"HH:MM:SS"` with an optional `.` and 0 to 9 fraction digits |
//! | `Timestamp(unit, None)` | `"YYYY-MM-DDTHH:MM:SS[.f]"` (0 to 9 fraction digits; a space instead of `T` too) |
//! | `Timestamp(unit, Some(_))` | the same with `Z` (UTC) or an offset `±HH:MM` (converted to UTC); without a suffix it is read as UTC |
//! | `List`, `LargeList`, `FixedSizeList` | array (of exactly the list size for fixed-size lists) |
//! | `Map` | array of `[key, value]` pairs, or an object (its keys are read as strings of the key type: `{"1": "a"}` for an `Int32` key) |
//! | `Struct` (ROW, VARIANT) | object keyed by field name; a missing field is NULL; VARIANT is `{"value": hex, "metadata": hex}` |
//!
//! `null` is NULL at every level. Fractions finer than the column's unit, decimals with more
//! digits than the type holds, integers out of range and dates that do not exist are errors:
//! nothing is rounded or truncated. Every error is [`Error::Invalid`] and starts with
//! `column 'c', row r:` (the 0-based row of the input; nested values name their path: `c.f`
//! for a ROW field, `c[]` for an element, `c{key}` / `c{value}` for a map entry) and names the
//! value it could not read.
//!
//! A JSON number read into a decimal column keeps its digits only when it is an integer or
//! has at most 15 significant digits: `serde_json::Value` holds other numbers as a double.
//! Such a number is an error asking for the decimal as a string (hosts that read JSON text
//! can pass those digits as strings; `paimon-kernel`'s JSON lines reader does).
//!
//! Source: the corpus generator's encoding (`make_corpus.py`); no Java counterpart.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::builder::BooleanBuilder;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{
    ArrayRef, BinaryArray, BinaryViewArray, FixedSizeBinaryArray, FixedSizeListArray,
    LargeBinaryArray, LargeListArray, LargeStringArray, ListArray, MapArray, PrimitiveArray,
    RecordBatch, RecordBatchOptions, StringArray, StringViewArray, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType as ArrowType, Field, Fields, SchemaRef, TimeUnit};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::util::{hex, unhex};
use crate::{Error, Result};

/// One column from the canonical JSON `values` (one per row, `null` for NULL), as an array of
/// `field`'s type.
///
/// # Errors
/// [`Error::Invalid`] naming `field`, the 0-based row and the value when a value cannot be
/// read as the field's type (see the module docs) or is `null` in a non-nullable field (also
/// inside nested values); [`Error::Unsupported`] for an Arrow type without a canonical JSON
/// form.
pub fn array_from_values(values: &[&Value], field: &Field) -> Result<ArrayRef> {
    let cells: Vec<Cell<'_>> = values
        .iter()
        .enumerate()
        .map(|(row, v)| Cell {
            row,
            value: Some(Cow::Borrowed(*v)),
        })
        .collect();
    build(&cells, field, field.name())
}

/// A record batch of `schema` from JSON objects keyed by column name, one per row. A column
/// missing from a row is NULL; key order does not matter.
///
/// # Errors
/// [`Error::Invalid`] naming the key and the row when a row has a key that is not a column;
/// otherwise as [`array_from_values`].
pub fn batch_from_rows(rows: &[Map<String, Value>], schema: &SchemaRef) -> Result<RecordBatch> {
    batch_from_rows_at(rows, schema, 0)
}

/// As [`batch_from_rows`], with rows numbered from `first_row` in error messages (for a
/// caller that converts a long input in chunks).
///
/// # Errors
/// As [`batch_from_rows`].
pub fn batch_from_rows_at(
    rows: &[Map<String, Value>],
    schema: &SchemaRef,
    first_row: usize,
) -> Result<RecordBatch> {
    let names: BTreeSet<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    for (i, row) in rows.iter().enumerate() {
        if let Some(key) = row.keys().find(|k| !names.contains(k.as_str())) {
            return Err(Error::invalid(format!(
                "column '{key}', row {}: there is no such column (columns: {})",
                first_row + i,
                names_list(schema.fields())
            )));
        }
    }
    let mut columns = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let cells: Vec<Cell<'_>> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| Cell {
                row: first_row + i,
                value: Some(Cow::Borrowed(r.get(field.name()).unwrap_or(&NULL))),
            })
            .collect();
        columns.push(build(&cells, field, field.name())?);
    }
    RecordBatch::try_new_with_options(
        Arc::clone(schema),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows.len())),
    )
    .map_err(|e| Error::arrow("building a record batch from JSON rows", e))
}

static NULL: Value = Value::Null;

/// One value to convert: the input row it belongs to and the value; `None` is a placeholder
/// under a NULL parent (a ROW or fixed-size list that is NULL), which is NULL without the
/// nullability check.
struct Cell<'a> {
    row: usize,
    value: Option<Cow<'a, Value>>,
}

/// The column (or nested path) being converted.
struct Ctx<'f> {
    path: &'f str,
    field: &'f Field,
}

impl Ctx<'_> {
    /// The value of `cell`, `None` for NULL (checking the field's nullability).
    fn value<'c>(&self, cell: &'c Cell<'_>) -> Result<Option<&'c Value>> {
        match cell.value.as_deref() {
            None => Ok(None),
            Some(Value::Null) if self.field.is_nullable() => Ok(None),
            Some(Value::Null) => Err(Error::invalid(format!(
                "column '{}', row {}: NULL in a NOT NULL field of type {}",
                self.path,
                cell.row,
                type_label(self.field.data_type())
            ))),
            Some(v) => Ok(Some(v)),
        }
    }

    /// The error for `value` in `row`, which cannot be read for `reason`.
    fn bad(&self, row: usize, value: &Value, reason: &str) -> Error {
        Error::invalid(format!(
            "column '{}', row {row}: cannot read {} as {}: {reason}",
            self.path,
            show(value),
            type_label(self.field.data_type())
        ))
    }

    fn arrow(&self, e: arrow_schema::ArrowError) -> Error {
        Error::arrow(format!("column '{}'", self.path), e)
    }
}

/// Short JSON text of a value for error messages.
fn show(v: &Value) -> String {
    const MAX_CHARS: usize = 80;
    let text = v.to_string();
    if text.chars().count() <= MAX_CHARS {
        text
    } else {
        let mut cut: String = text.chars().take(MAX_CHARS).collect();
        cut.push('…');
        cut
    }
}

fn names_list(fields: &Fields) -> String {
    fields
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Paimon name of an Arrow type as [`crate::types::paimon_to_arrow_type`] maps it, for
/// messages.
fn type_label(t: &ArrowType) -> String {
    match t {
        ArrowType::Boolean => "BOOLEAN".into(),
        ArrowType::Int8 => "TINYINT".into(),
        ArrowType::Int16 => "SMALLINT".into(),
        ArrowType::Int32 => "INT".into(),
        ArrowType::Int64 => "BIGINT".into(),
        ArrowType::Float32 => "FLOAT".into(),
        ArrowType::Float64 => "DOUBLE".into(),
        ArrowType::Decimal128(p, s) => format!("DECIMAL({p}, {s})"),
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => "STRING".into(),
        ArrowType::Binary | ArrowType::BinaryView => "BYTES".into(),
        ArrowType::FixedSizeBinary(n) => format!("BINARY({n})"),
        ArrowType::LargeBinary => "BLOB".into(),
        ArrowType::Date32 => "DATE".into(),
        ArrowType::Time32(u) | ArrowType::Time64(u) => format!("TIME ({})", unit_name(u)),
        ArrowType::Timestamp(u, None) => format!("TIMESTAMP ({})", unit_name(u)),
        ArrowType::Timestamp(u, Some(_)) => format!("TIMESTAMP_LTZ ({})", unit_name(u)),
        ArrowType::List(_) | ArrowType::LargeList(_) => "ARRAY".into(),
        ArrowType::FixedSizeList(_, n) => format!("VECTOR of {n}"),
        ArrowType::Map(..) => "MAP".into(),
        ArrowType::Struct(_) => "ROW".into(),
        other => other.to_string(),
    }
}

fn unit_name(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::Second => "seconds",
        TimeUnit::Millisecond => "milliseconds",
        TimeUnit::Microsecond => "microseconds",
        TimeUnit::Nanosecond => "nanoseconds",
    }
}

fn build(cells: &[Cell<'_>], field: &Field, path: &str) -> Result<ArrayRef> {
    let ctx = Ctx { path, field };
    let t = field.data_type();
    Ok(match t {
        ArrowType::Boolean => {
            let mut b = BooleanBuilder::with_capacity(cells.len());
            for c in cells {
                match ctx.value(c)? {
                    None => b.append_null(),
                    Some(v) => b.append_value(boolean(v).map_err(|m| ctx.bad(c.row, v, &m))?),
                }
            }
            Arc::new(b.finish())
        }
        ArrowType::Int8 => primitive::<Int8Type>(cells, &ctx, |v| narrow(integer(v)?))?,
        ArrowType::Int16 => primitive::<Int16Type>(cells, &ctx, |v| narrow(integer(v)?))?,
        ArrowType::Int32 => primitive::<Int32Type>(cells, &ctx, |v| narrow(integer(v)?))?,
        ArrowType::Int64 => primitive::<Int64Type>(cells, &ctx, |v| narrow(integer(v)?))?,
        ArrowType::Float32 => primitive::<Float32Type>(cells, &ctx, float32)?,
        ArrowType::Float64 => primitive::<Float64Type>(cells, &ctx, float64)?,
        ArrowType::Decimal128(p, s) => {
            let (p, s) = (*p, *s);
            primitive::<Decimal128Type>(cells, &ctx, |v| decimal(v, p, s))?
        }
        ArrowType::Utf8 => Arc::new(strings(cells, &ctx)?.into_iter().collect::<StringArray>()),
        ArrowType::LargeUtf8 => Arc::new(
            strings(cells, &ctx)?
                .into_iter()
                .collect::<LargeStringArray>(),
        ),
        ArrowType::Utf8View => Arc::new(
            strings(cells, &ctx)?
                .into_iter()
                .collect::<StringViewArray>(),
        ),
        ArrowType::Binary => Arc::new(BinaryArray::from_iter(binaries(cells, &ctx, None)?)),
        ArrowType::BinaryView => Arc::new(BinaryViewArray::from_iter(binaries(cells, &ctx, None)?)),
        ArrowType::FixedSizeBinary(n) => {
            let len = usize::try_from(*n).unwrap_or(0);
            let values = binaries(cells, &ctx, Some(len))?;
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(values.into_iter(), *n)
                    .map_err(|e| ctx.arrow(e))?,
            )
        }
        ArrowType::LargeBinary => Arc::new(LargeBinaryArray::from_iter(blobs(cells, &ctx)?)),
        ArrowType::Date32 => primitive::<Date32Type>(cells, &ctx, |v| {
            let days = date(text(v)?)?;
            i32::try_from(days).map_err(|_| "out of range".to_string())
        })?,
        ArrowType::Time32(TimeUnit::Second) => {
            primitive::<Time32SecondType>(cells, &ctx, |v| time32(v, &TimeUnit::Second))?
        }
        ArrowType::Time32(TimeUnit::Millisecond) => {
            primitive::<Time32MillisecondType>(cells, &ctx, |v| time32(v, &TimeUnit::Millisecond))?
        }
        ArrowType::Time64(TimeUnit::Microsecond) => {
            primitive::<Time64MicrosecondType>(cells, &ctx, |v| time64(v, &TimeUnit::Microsecond))?
        }
        ArrowType::Time64(TimeUnit::Nanosecond) => {
            primitive::<Time64NanosecondType>(cells, &ctx, |v| time64(v, &TimeUnit::Nanosecond))?
        }
        ArrowType::Timestamp(unit, tz) => {
            let with_zone = tz.is_some();
            let parse = |v: &Value| timestamp(v, unit, with_zone);
            match unit {
                TimeUnit::Second => primitive::<TimestampSecondType>(cells, &ctx, parse)?,
                TimeUnit::Millisecond => primitive::<TimestampMillisecondType>(cells, &ctx, parse)?,
                TimeUnit::Microsecond => primitive::<TimestampMicrosecondType>(cells, &ctx, parse)?,
                TimeUnit::Nanosecond => primitive::<TimestampNanosecondType>(cells, &ctx, parse)?,
            }
        }
        ArrowType::List(item) => {
            let (offsets, children, nulls) = list_children(cells, &ctx, None)?;
            let values = build(&children, item, &format!("{path}[]"))?;
            let offsets = i32_offsets(&offsets, &ctx)?;
            Arc::new(
                ListArray::try_new(Arc::clone(item), offsets, values, nulls)
                    .map_err(|e| ctx.arrow(e))?,
            )
        }
        ArrowType::LargeList(item) => {
            let (offsets, children, nulls) = list_children(cells, &ctx, None)?;
            let values = build(&children, item, &format!("{path}[]"))?;
            let offsets = OffsetBuffer::from_lengths(offsets);
            Arc::new(
                LargeListArray::try_new(Arc::clone(item), offsets, values, nulls)
                    .map_err(|e| ctx.arrow(e))?,
            )
        }
        ArrowType::FixedSizeList(item, n) => {
            let size = usize::try_from(*n).unwrap_or(0);
            let (_, children, nulls) = list_children(cells, &ctx, Some(size))?;
            let values = build(&children, item, &format!("{path}[]"))?;
            Arc::new(
                FixedSizeListArray::try_new(Arc::clone(item), *n, values, nulls)
                    .map_err(|e| ctx.arrow(e))?,
            )
        }
        ArrowType::Map(entries, ordered) => map(cells, &ctx, entries, *ordered)?,
        ArrowType::Struct(fields) => structs(cells, &ctx, fields)?,
        other => {
            return Err(Error::unsupported(format!(
                "Arrow type {other} from canonical JSON (column '{path}')"
            )));
        }
    })
}

/// A primitive column: `parse` reads one non-null value, its error is the reason.
fn primitive<T: ArrowPrimitiveType>(
    cells: &[Cell<'_>],
    ctx: &Ctx<'_>,
    parse: impl Fn(&Value) -> Result<T::Native, String>,
) -> Result<ArrayRef> {
    let mut out = Vec::with_capacity(cells.len());
    for c in cells {
        out.push(match ctx.value(c)? {
            None => None,
            Some(v) => Some(parse(v).map_err(|m| ctx.bad(c.row, v, &m))?),
        });
    }
    // `T` is the primitive type of the field's type (see `build`), so the types are compatible.
    Ok(Arc::new(
        out.into_iter()
            .collect::<PrimitiveArray<T>>()
            .with_data_type(ctx.field.data_type().clone()),
    ))
}

fn strings<'c>(cells: &'c [Cell<'_>], ctx: &Ctx<'_>) -> Result<Vec<Option<&'c str>>> {
    let mut out = Vec::with_capacity(cells.len());
    for c in cells {
        out.push(match ctx.value(c)? {
            None => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(v) => return Err(ctx.bad(c.row, v, "expected a JSON string")),
        });
    }
    Ok(out)
}

/// Hex strings as bytes; `len` is the required length of a fixed-size binary.
fn binaries(cells: &[Cell<'_>], ctx: &Ctx<'_>, len: Option<usize>) -> Result<Vec<Option<Vec<u8>>>> {
    let mut out = Vec::with_capacity(cells.len());
    for c in cells {
        out.push(match ctx.value(c)? {
            None => None,
            Some(v) => {
                let bytes = hex_bytes(v).map_err(|m| ctx.bad(c.row, v, &m))?;
                if let Some(n) = len.filter(|n| *n != bytes.len()) {
                    return Err(ctx.bad(
                        c.row,
                        v,
                        &format!("{} bytes, the type holds exactly {n}", bytes.len()),
                    ));
                }
                Some(bytes)
            }
        });
    }
    Ok(out)
}

fn hex_bytes(v: &Value) -> Result<Vec<u8>, String> {
    match v {
        Value::String(s) => unhex(s).ok_or_else(|| "not a string of hex digit pairs".to_string()),
        _ => Err("expected a hex string".into()),
    }
}

/// BLOB values: a hex string or `{"hex", "len"?, "sha256"?}`.
fn blobs(cells: &[Cell<'_>], ctx: &Ctx<'_>) -> Result<Vec<Option<Vec<u8>>>> {
    let mut out = Vec::with_capacity(cells.len());
    for c in cells {
        out.push(match ctx.value(c)? {
            None => None,
            Some(v) => Some(blob(v).map_err(|m| ctx.bad(c.row, v, &m))?),
        });
    }
    Ok(out)
}

fn blob(v: &Value) -> Result<Vec<u8>, String> {
    let Value::Object(m) = v else {
        return hex_bytes(v).map_err(|m| format!("{m} (or an object with \"hex\")"));
    };
    if let Some(k) = m
        .keys()
        .find(|k| !matches!(k.as_str(), "hex" | "len" | "sha256"))
    {
        return Err(format!(
            "unknown key \"{k}\" (a BLOB object has \"hex\", \"len\", \"sha256\")"
        ));
    }
    let Some(h) = m.get("hex") else {
        return Err(
            "a BLOB object needs \"hex\" (the canonical JSON of a blob over 64 bytes \
                    holds only its length and hash, not its bytes)"
                .into(),
        );
    };
    let bytes = hex_bytes(h).map_err(|e| format!("\"hex\": {e}"))?;
    if let Some(len) = m.get("len")
        && len.as_u64() != Some(bytes.len() as u64)
    {
        return Err(format!(
            "\"len\" {len} but \"hex\" holds {} bytes",
            bytes.len()
        ));
    }
    if let Some(sha) = m.get("sha256") {
        let want = hex(&Sha256::digest(&bytes));
        if !sha.as_str().is_some_and(|s| s.eq_ignore_ascii_case(&want)) {
            return Err(format!(
                "\"sha256\" {sha} is not the hash of \"hex\" ({want})"
            ));
        }
    }
    Ok(bytes)
}

fn boolean(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s.trim().eq_ignore_ascii_case("true") => Ok(true),
        Value::String(s) if s.trim().eq_ignore_ascii_case("false") => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

/// The text of a string value (trimmed), for types written as text.
fn text(v: &Value) -> Result<&str, String> {
    match v {
        Value::String(s) => Ok(s.trim()),
        _ => Err("expected a JSON string".into()),
    }
}

/// An integer from a number or a string of one.
fn integer(v: &Value) -> Result<i128, String> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                Ok(i128::from(u))
            } else {
                // A double: only integral values below 2^53 are certainly what was written.
                const EXACT: f64 = 9_007_199_254_740_992.0;
                match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() <= EXACT => Ok(f as i128),
                    Some(f) if f.fract() == 0.0 => {
                        Err("too large to be exact as a JSON double; write it as an integer".into())
                    }
                    _ => Err("not an integer".into()),
                }
            }
        }
        Value::String(s) => {
            let t = s.trim();
            let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err("not an integer".into());
            }
            t.parse::<i128>().map_err(|_| "out of range".to_string())
        }
        _ => Err("expected an integer (number or string)".into()),
    }
}

fn narrow<T: TryFrom<i128>>(v: i128) -> Result<T, String> {
    T::try_from(v).map_err(|_| "out of range".to_string())
}

/// True for the spellings of NaN and infinity that Rust's float parser accepts.
fn is_non_finite_text(t: &str) -> bool {
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    ["nan", "inf", "infinity"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

fn float64(v: &Value) -> Result<f64, String> {
    let f = match v {
        Value::Number(n) => n.as_f64().ok_or("not a number")?,
        Value::String(s) => {
            let t = s.trim();
            let f: f64 = t.parse().map_err(|_| "not a number".to_string())?;
            if !f.is_finite() && !is_non_finite_text(t) {
                return Err("out of range".into());
            }
            return Ok(f);
        }
        _ => return Err("expected a number (or \"NaN\", \"Infinity\", \"-Infinity\")".into()),
    };
    Ok(f)
}

fn float32(v: &Value) -> Result<f32, String> {
    // Parse the decimal text as f32 directly: rounding through f64 first could round twice.
    let t = match v {
        // The text of a number is never NaN or infinity.
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_string(),
        _ => return Err("expected a number (or \"NaN\", \"Infinity\", \"-Infinity\")".into()),
    };
    let f: f32 = t.parse().map_err(|_| "not a number".to_string())?;
    if !f.is_finite() && !is_non_finite_text(&t) {
        return Err("out of range".into());
    }
    Ok(f)
}

/// Significant digits of a JSON double that are certainly the digits that were written.
const EXACT_DOUBLE_DIGITS: usize = 15;

fn decimal(v: &Value, precision: u8, scale: i8) -> Result<i128, String> {
    match v {
        Value::String(s) => decimal_text(s.trim(), precision, scale),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            decimal_text(&n.to_string(), precision, scale)
        }
        Value::Number(n) => {
            // serde_json keeps this number as a double; its shortest text has the digits
            // that were written only if there were at most 15 of them.
            let t = n.to_string();
            let mantissa = t.split(['e', 'E']).next().unwrap_or("");
            let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
            let significant = digits.trim_start_matches('0').trim_end_matches('0').len();
            if significant > EXACT_DOUBLE_DIGITS {
                return Err(format!(
                    "a JSON number with more than {EXACT_DOUBLE_DIGITS} significant digits is \
                     not exact; write the decimal as a string"
                ));
            }
            decimal_text(&t, precision, scale)
        }
        _ => Err("expected a decimal (string or number)".into()),
    }
}

/// The unscaled value of the decimal text `t` (`[+-]digits[.digits][e[+-]digits]`) at `scale`,
/// exactly; too many fraction digits or more than `precision` digits are errors.
fn decimal_text(t: &str, precision: u8, scale: i8) -> Result<i128, String> {
    let not_decimal = || "not a decimal number".to_string();
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exp) = match body.split_once(['e', 'E']) {
        Some((m, e)) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(not_decimal());
            }
            // Absurd exponents only matter for zero, which any exponent keeps at zero.
            (
                m,
                e.parse::<i64>()
                    .unwrap_or(if e.starts_with('-') { -9999 } else { 9999 }),
            )
        }
        None => (body, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(not_decimal());
    }
    let all = format!("{int_part}{frac_part}");
    let digits = all.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    // unscaled = digits × 10^shift
    let shift = exp - frac_part.len() as i64 + i64::from(scale);
    let kept: Cow<'_, str> = if shift < 0 {
        let drop = usize::try_from(-shift).unwrap_or(usize::MAX);
        let cut = digits.len().checked_sub(drop).filter(|c| *c > 0);
        match cut {
            Some(cut) if digits[cut..].bytes().all(|b| b == b'0') => Cow::Borrowed(&digits[..cut]),
            _ => return Err(format!("more than {scale} fraction digits")),
        }
    } else {
        let zeros = usize::try_from(shift).unwrap_or(usize::MAX);
        if zeros > usize::from(precision) {
            return Err(too_many_digits(precision, scale));
        }
        Cow::Owned(format!("{digits}{}", "0".repeat(zeros)))
    };
    if kept.len() > usize::from(precision) {
        return Err(too_many_digits(precision, scale));
    }
    // At most 38 digits: fits an i128.
    let magnitude: i128 = kept.parse().map_err(|_| not_decimal())?;
    Ok(if negative { -magnitude } else { magnitude })
}

fn too_many_digits(precision: u8, scale: i8) -> String {
    format!(
        "more than {precision} digits ({} before the point)",
        i16::from(precision) - i16::from(scale)
    )
}

const NANOS_PER_SECOND: i128 = 1_000_000_000;
const NANOS_PER_DAY: i128 = 86_400 * NANOS_PER_SECOND;

fn nanos_per(unit: &TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => NANOS_PER_SECOND,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// `nanos` in `unit`, which must divide it.
fn in_unit(nanos: i128, unit: &TimeUnit) -> Result<i128, String> {
    let per = nanos_per(unit);
    if nanos.rem_euclid(per) != 0 {
        return Err(format!(
            "more fraction digits than the column holds ({})",
            unit_name(unit)
        ));
    }
    Ok(nanos.div_euclid(per))
}

/// `[+-]YYYY-MM-DD` (a year of 4 or more digits) to days since 1970-01-01.
fn date(t: &str) -> Result<i64, String> {
    let bad = || "not a date YYYY-MM-DD".to_string();
    let (negative, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut parts = rest.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let number = |s: &str, min_len: usize, max_len: usize| -> Result<i64, String> {
        if s.len() < min_len || s.len() > max_len || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    let year = number(y, 4, 9)?;
    let year = if negative { -year } else { year };
    let (month, day) = (number(m, 1, 2)?, number(d, 1, 2)?);
    if !(1..=12).contains(&month) {
        return Err(format!("month {month} is not 1..12"));
    }
    let leap = year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0);
    let days_in_month = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=days_in_month).contains(&day) {
        return Err(format!(
            "day {day} is not 1..{days_in_month} in {year}-{month:02}"
        ));
    }
    Ok(days_from_civil(year, month, day))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `HH:MM:SS[.f]` (0 to 9 fraction digits) to nanoseconds since midnight.
fn time_of_day(t: &str) -> Result<i128, String> {
    let bad = || "not a time HH:MM:SS[.fffffffff]".to_string();
    let (hms, frac) = t.split_once('.').unwrap_or((t, ""));
    let mut parts = hms.split(':');
    let (Some(h), Some(m), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let two = |p: &str| -> Result<i128, String> {
        if p.len() != 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        p.parse().map_err(|_| bad())
    };
    let (h, m, s) = (two(h)?, two(m)?, two(s)?);
    if h > 23 || m > 59 || s > 59 {
        return Err(format!("{t} is not a time of day"));
    }
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let frac_nanos = if frac.is_empty() {
        0
    } else {
        let exp = u32::try_from(9 - frac.len()).unwrap_or(0);
        frac.parse::<i128>().map_err(|_| bad())? * 10_i128.pow(exp)
    };
    Ok(((h * 60 + m) * 60 + s) * NANOS_PER_SECOND + frac_nanos)
}

fn time32(v: &Value, unit: &TimeUnit) -> Result<i32, String> {
    narrow(in_unit(time_of_day(text(v)?)?, unit)?)
}

fn time64(v: &Value, unit: &TimeUnit) -> Result<i64, String> {
    narrow(in_unit(time_of_day(text(v)?)?, unit)?)
}

/// `DATE(T| )TIME[Z|±HH:MM]` in `unit`; a zone suffix only when `with_zone` (TIMESTAMP_LTZ).
fn timestamp(v: &Value, unit: &TimeUnit, with_zone: bool) -> Result<i64, String> {
    let t = text(v)?;
    // The date ends at the first `T` or space (its sign and dashes come before).
    let Some(split) = t.find(['T', 't', ' ']) else {
        return Err("not a timestamp YYYY-MM-DDTHH:MM:SS[.fffffffff]".into());
    };
    let days = date(&t[..split])?;
    let rest = t[split + 1..].trim_start();
    let (time, offset_seconds) = split_zone(rest)?;
    if offset_seconds.is_some() && !with_zone {
        return Err("a TIMESTAMP without time zone takes no zone suffix (Z or an offset)".into());
    }
    let nanos = i128::from(days) * NANOS_PER_DAY + time_of_day(time)?
        - i128::from(offset_seconds.unwrap_or(0)) * NANOS_PER_SECOND;
    narrow(in_unit(nanos, unit)?)
}

/// The time part and the zone offset in seconds (`Z` is 0), `None` without a suffix.
fn split_zone(t: &str) -> Result<(&str, Option<i64>), String> {
    if let Some(time) = t.strip_suffix(['Z', 'z']) {
        return Ok((time, Some(0)));
    }
    let Some(at) = t.rfind(['+', '-']) else {
        return Ok((t, None));
    };
    let (time, zone) = (&t[..at], &t[at..]);
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
    let bad = || format!("bad zone offset {zone} (expected Z or ±HH:MM)");
    if !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let h: i64 = digits[..2].parse().map_err(|_| bad())?;
    let m: i64 = digits
        .get(2..)
        .filter(|s| !s.is_empty())
        .map_or(Ok(0), |s| s.parse().map_err(|_| bad()))?;
    if h > 18 || m > 59 {
        return Err(bad());
    }
    Ok((time.trim_end(), Some(sign * (h * 3600 + m * 60))))
}

/// For each list cell: its length, its elements as cells (placeholders under a NULL
/// fixed-size list) and the list's validity.
type ListParts<'a> = (Vec<usize>, Vec<Cell<'a>>, Option<NullBuffer>);

fn list_children<'a>(
    cells: &'a [Cell<'_>],
    ctx: &Ctx<'_>,
    fixed: Option<usize>,
) -> Result<ListParts<'a>> {
    let mut lengths = Vec::with_capacity(cells.len());
    let mut children = Vec::new();
    let mut valid = Vec::with_capacity(cells.len());
    for c in cells {
        match ctx.value(c)? {
            None => {
                valid.push(false);
                let n = fixed.unwrap_or(0);
                lengths.push(n);
                children.extend((0..n).map(|_| Cell {
                    row: c.row,
                    value: None,
                }));
            }
            Some(v @ Value::Array(items)) => {
                if let Some(n) = fixed.filter(|n| *n != items.len()) {
                    return Err(ctx.bad(
                        c.row,
                        v,
                        &format!("{} elements, the type holds exactly {n}", items.len()),
                    ));
                }
                valid.push(true);
                lengths.push(items.len());
                children.extend(items.iter().map(|v| Cell {
                    row: c.row,
                    value: Some(Cow::Borrowed(v)),
                }));
            }
            Some(v) => return Err(ctx.bad(c.row, v, "expected a JSON array")),
        }
    }
    Ok((lengths, children, nulls(valid)))
}

fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|v| *v) {
        None
    } else {
        Some(NullBuffer::from(valid))
    }
}

fn i32_offsets(lengths: &[usize], ctx: &Ctx<'_>) -> Result<OffsetBuffer<i32>> {
    let total: usize = lengths.iter().sum();
    if i32::try_from(total).is_err() {
        return Err(Error::invalid(format!(
            "column '{}': {total} nested values do not fit one Arrow list batch",
            ctx.path
        )));
    }
    Ok(OffsetBuffer::from_lengths(lengths.iter().copied()))
}

fn map(cells: &[Cell<'_>], ctx: &Ctx<'_>, entries: &Arc<Field>, ordered: bool) -> Result<ArrayRef> {
    let ArrowType::Struct(kv) = entries.data_type() else {
        return Err(Error::unsupported(format!(
            "map column '{}' whose entries are not a struct",
            ctx.path
        )));
    };
    let (Some(key_field), Some(value_field), 2) = (kv.first(), kv.get(1), kv.len()) else {
        return Err(Error::unsupported(format!(
            "map column '{}' whose entries are not (key, value)",
            ctx.path
        )));
    };
    let mut lengths = Vec::with_capacity(cells.len());
    let mut valid = Vec::with_capacity(cells.len());
    let mut keys: Vec<Cell<'_>> = Vec::new();
    let mut values: Vec<Cell<'_>> = Vec::new();
    for c in cells {
        match ctx.value(c)? {
            None => {
                valid.push(false);
                lengths.push(0);
            }
            Some(Value::Array(pairs)) => {
                for pair in pairs {
                    match pair {
                        Value::Array(kv) if kv.len() == 2 => {
                            keys.push(Cell {
                                row: c.row,
                                value: Some(Cow::Borrowed(&kv[0])),
                            });
                            values.push(Cell {
                                row: c.row,
                                value: Some(Cow::Borrowed(&kv[1])),
                            });
                        }
                        other => {
                            return Err(ctx.bad(
                                c.row,
                                other,
                                "a map entry must be a [key, value] pair",
                            ));
                        }
                    }
                }
                valid.push(true);
                lengths.push(pairs.len());
            }
            Some(Value::Object(obj)) => {
                for (k, v) in obj {
                    keys.push(Cell {
                        row: c.row,
                        value: Some(Cow::Owned(Value::String(k.clone()))),
                    });
                    values.push(Cell {
                        row: c.row,
                        value: Some(Cow::Borrowed(v)),
                    });
                }
                valid.push(true);
                lengths.push(obj.len());
            }
            Some(v) => {
                return Err(ctx.bad(
                    c.row,
                    v,
                    "expected an array of [key, value] pairs or an object",
                ));
            }
        }
    }
    let key_array = build(&keys, key_field, &format!("{}{{key}}", ctx.path))?;
    let value_array = build(&values, value_field, &format!("{}{{value}}", ctx.path))?;
    let entry_array = StructArray::try_new(kv.clone(), vec![key_array, value_array], None)
        .map_err(|e| ctx.arrow(e))?;
    let offsets = i32_offsets(&lengths, ctx)?;
    Ok(Arc::new(
        MapArray::try_new(
            Arc::clone(entries),
            offsets,
            entry_array,
            nulls(valid),
            ordered,
        )
        .map_err(|e| ctx.arrow(e))?,
    ))
}

fn structs(cells: &[Cell<'_>], ctx: &Ctx<'_>, fields: &Fields) -> Result<ArrayRef> {
    let mut valid = Vec::with_capacity(cells.len());
    let mut children: Vec<Vec<Cell<'_>>> = fields
        .iter()
        .map(|_| Vec::with_capacity(cells.len()))
        .collect();
    for c in cells {
        match ctx.value(c)? {
            None => {
                valid.push(false);
                for child in &mut children {
                    child.push(Cell {
                        row: c.row,
                        value: None,
                    });
                }
            }
            Some(v @ Value::Object(obj)) => {
                if let Some(k) = obj.keys().find(|k| fields.find(k).is_none()) {
                    return Err(ctx.bad(
                        c.row,
                        v,
                        &format!("no field '{k}' (fields: {})", names_list(fields)),
                    ));
                }
                valid.push(true);
                for (f, child) in fields.iter().zip(&mut children) {
                    child.push(Cell {
                        row: c.row,
                        value: Some(Cow::Borrowed(obj.get(f.name()).unwrap_or(&NULL))),
                    });
                }
            }
            Some(v) => {
                return Err(ctx.bad(c.row, v, "expected a JSON object keyed by field name"));
            }
        }
    }
    let columns = fields
        .iter()
        .zip(&children)
        .map(|(f, cells)| build(cells, f, &format!("{}.{}", ctx.path, f.name())))
        .collect::<Result<Vec<_>>>()?;
    let nulls = nulls(valid);
    if fields.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(cells.len(), nulls)));
    }
    Ok(Arc::new(
        StructArray::try_new(fields.clone(), columns, nulls).map_err(|e| ctx.arrow(e))?,
    ))
}

#[cfg(test)]
mod tests;
