//! Canonical JSON of Arrow values: the value encoding of the conformance corpus' expected
//! files (`conformance/tables/<table>.expected.json`, corpus README "Canonical value
//! encoding"). Used by the conformance harness, the wasm host's `scanRows` and the tests to
//! compare what the core reads with what pypaimon read. Pure: no IO. [`parse`] reads canonical
//! JSON back into Arrow; [`input`] reads the rows a user hands to a writer (Arrow IPC, Parquet,
//! CSV, JSON lines) into record batches.
//!
//! The rendering follows the Arrow types that [`crate::types::paimon_to_arrow_type`]
//! produces, so a value's Paimon type is known from its Arrow type:
//!
//! | Paimon type | Arrow | JSON |
//! |---|---|---|
//! | TINYINT..BIGINT | `Int8`..`Int64` | number (exact integer; BIGINT may exceed 2^53) |
//! | FLOAT, DOUBLE | `Float32`, `Float64` | number (FLOAT as the exact double of the float); `"NaN"`, `"Infinity"`, `"-Infinity"` as strings; `-0.0` kept |
//! | DECIMAL(p, s) | `Decimal128(p, s)` | string with exactly `s` fraction digits, e.g. `"-0.10"` |
//! | CHAR/VARCHAR/STRING | `Utf8` | string |
//! | BINARY/VARBINARY/BYTES | `Binary` | lowercase hex string |
//! | BLOB | `LargeBinary` | `{"len": n, "sha256": hex, "hex": hex}`, `hex` only when n ≤ 64 |
//! | BOOLEAN | `Boolean` | `true`/`false` |
//! | DATE | `Date32` | `"YYYY-MM-DD"` (proleptic Gregorian) |
//! | TIME(p) | `Time32(Millisecond)` | `"HH:MM:SS.mmm"` |
//! | TIMESTAMP(p) | `Timestamp(unit, None)` | `"YYYY-MM-DDTHH:MM:SS.fffffffff"`, always 9 fraction digits |
//! | TIMESTAMP_LTZ(p) | `Timestamp(unit, Some(_))` | the same (the UTC instant) with a `Z` suffix |
//! | ARRAY, VECTOR | `List`, `FixedSizeList` | array |
//! | MAP, MULTISET | `Map` | array of `[key, value]` pairs in stored order |
//! | ROW | `Struct` | object keyed by field name, in field order |
//! | VARIANT | `Struct{value, metadata}` | `{"value": hex, "metadata": hex}` (as a ROW of two binaries) |
//!
//! NULL is `null` at any level. Years outside 0..=9999 are written with a sign and at least
//! four digits (`"-0001-01-01"`, `"+10000-01-01"`, ISO 8601 expanded years); the corpus has
//! none. `LargeUtf8`, `LargeList`, `Utf8View`/`BinaryView`, the other `Time32`/`Time64` units
//! and `FixedSizeBinary` (as binary) are accepted too.
//!
//! Source: the corpus generator's encoding (pypaimon 2.1.0 reads, `make_corpus.py`); no Java
//! counterpart.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

use crate::spec::binary_row::{civil_from_days, decimal_to_plain_string};
use crate::util::hex;
use crate::{Error, Result};

pub mod input;
pub mod parse;

/// Every row of `batch` as a JSON object keyed by column name, in column order.
///
/// # Errors
/// [`Error::Unsupported`] for a column whose Arrow type has no canonical rendering (see the
/// module table), naming the column.
pub fn rows(batch: &RecordBatch) -> Result<Vec<Value>> {
    let schema = batch.schema();
    let mut out = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let mut obj = Map::with_capacity(batch.num_columns());
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let v = value(column.as_ref(), i).map_err(|e| match e {
                Error::Unsupported { feature } => {
                    Error::unsupported(format!("{feature} (column '{}')", field.name()))
                }
                other => other,
            })?;
            obj.insert(field.name().clone(), v);
        }
        out.push(Value::Object(obj));
    }
    Ok(out)
}

/// The rows of every batch, in order (as [`rows`]).
///
/// # Errors
/// As [`rows`].
pub fn batches_rows(batches: &[RecordBatch]) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for b in batches {
        out.extend(rows(b)?);
    }
    Ok(out)
}

/// The canonical JSON of the value at index `i` of `array` (`null` when it is null).
///
/// # Errors
/// [`Error::Unsupported`] for an Arrow type without a canonical rendering (see the module
/// table). `i` must be below `array.len()` (Arrow panics otherwise).
pub fn value(array: &dyn Array, i: usize) -> Result<Value> {
    if array.is_null(i) {
        return Ok(Value::Null);
    }
    Ok(match array.data_type() {
        ArrowType::Boolean => Value::Bool(array.as_boolean().value(i)),
        ArrowType::Int8 => array.as_primitive::<Int8Type>().value(i).into(),
        ArrowType::Int16 => array.as_primitive::<Int16Type>().value(i).into(),
        ArrowType::Int32 => array.as_primitive::<Int32Type>().value(i).into(),
        ArrowType::Int64 => array.as_primitive::<Int64Type>().value(i).into(),
        ArrowType::Float32 => float(f64::from(array.as_primitive::<Float32Type>().value(i))),
        ArrowType::Float64 => float(array.as_primitive::<Float64Type>().value(i)),
        ArrowType::Decimal128(_, scale) => Value::String(decimal(
            array.as_primitive::<Decimal128Type>().value(i),
            *scale,
        )),
        ArrowType::Utf8 => Value::String(array.as_string::<i32>().value(i).to_string()),
        ArrowType::LargeUtf8 => Value::String(array.as_string::<i64>().value(i).to_string()),
        ArrowType::Utf8View => Value::String(array.as_string_view().value(i).to_string()),
        ArrowType::Binary => Value::String(hex(array.as_binary::<i32>().value(i))),
        ArrowType::BinaryView => Value::String(hex(array.as_binary_view().value(i))),
        ArrowType::FixedSizeBinary(_) => Value::String(hex(array.as_fixed_size_binary().value(i))),
        ArrowType::LargeBinary => blob(array.as_binary::<i64>().value(i)),
        ArrowType::Date32 => {
            Value::String(date(i64::from(array.as_primitive::<Date32Type>().value(i))))
        }
        ArrowType::Time32(unit) | ArrowType::Time64(unit) => {
            let v = match (array.data_type(), unit) {
                (ArrowType::Time32(_), TimeUnit::Second) => {
                    i64::from(array.as_primitive::<Time32SecondType>().value(i))
                }
                (ArrowType::Time32(_), TimeUnit::Millisecond) => {
                    i64::from(array.as_primitive::<Time32MillisecondType>().value(i))
                }
                (ArrowType::Time64(_), TimeUnit::Microsecond) => {
                    array.as_primitive::<Time64MicrosecondType>().value(i)
                }
                (ArrowType::Time64(_), TimeUnit::Nanosecond) => {
                    array.as_primitive::<Time64NanosecondType>().value(i)
                }
                (other, _) => return Err(no_rendering(other)),
            };
            Value::String(time_of_day(i128::from(v) * nanos_per(unit)))
        }
        ArrowType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(i),
                TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(i),
                TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(i),
            };
            let mut s = timestamp(i128::from(v) * nanos_per(unit));
            if tz.is_some() {
                s.push('Z');
            }
            Value::String(s)
        }
        ArrowType::List(_) => list(array.as_list::<i32>().value(i).as_ref())?,
        ArrowType::LargeList(_) => list(array.as_list::<i64>().value(i).as_ref())?,
        ArrowType::FixedSizeList(..) => list(array.as_fixed_size_list().value(i).as_ref())?,
        ArrowType::Map(..) => {
            let entries = array.as_map().value(i);
            let (keys, values) = (entries.column(0), entries.column(1));
            let mut out = Vec::with_capacity(entries.len());
            for j in 0..entries.len() {
                out.push(Value::Array(vec![
                    value(keys.as_ref(), j)?,
                    value(values.as_ref(), j)?,
                ]));
            }
            Value::Array(out)
        }
        ArrowType::Struct(fields) => {
            let s = array.as_struct();
            let mut obj = Map::with_capacity(fields.len());
            for (f, column) in fields.iter().zip(s.columns()) {
                obj.insert(f.name().clone(), value(column.as_ref(), i)?);
            }
            Value::Object(obj)
        }
        other => return Err(no_rendering(other)),
    })
}

fn no_rendering(t: &ArrowType) -> Error {
    Error::unsupported(format!("canonical JSON of Arrow type {t}"))
}

fn list(values: &dyn Array) -> Result<Value> {
    (0..values.len())
        .map(|j| value(values, j))
        .collect::<Result<Vec<_>>>()
        .map(Value::Array)
}

fn float(v: f64) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        // Finite, so `from_f64` always succeeds.
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// `{"len", "sha256", "hex"}` of a BLOB value.
fn blob(b: &[u8]) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("len".into(), b.len().into());
    m.insert("sha256".into(), Value::String(hex(&Sha256::digest(b))));
    if b.len() <= 64 {
        m.insert("hex".into(), Value::String(hex(b)));
    }
    Value::Object(m)
}

/// Plain decimal string of `unscaled × 10^-scale`; a negative scale appends zeros.
fn decimal(unscaled: i128, scale: i8) -> String {
    match u32::try_from(scale) {
        Ok(s) => decimal_to_plain_string(unscaled, s),
        Err(_) if unscaled == 0 => "0".into(),
        Err(_) => format!(
            "{unscaled}{}",
            "0".repeat(usize::from(scale.unsigned_abs()))
        ),
    }
}

fn nanos_per(unit: &TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

const NANOS_PER_DAY: i128 = 86_400 * 1_000_000_000;

/// `YYYY-MM-DD` of a day count since 1970-01-01; see the module docs for other years.
fn date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        let sign = if y < 0 { '-' } else { '+' };
        format!("{sign}{:04}-{m:02}-{d:02}", y.unsigned_abs())
    }
}

/// `HH:MM:SS.mmm` of nanoseconds since midnight (truncated to milliseconds).
fn time_of_day(nanos: i128) -> String {
    let ms = nanos.div_euclid(1_000_000);
    let (s, ms) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    format!("{:02}:{:02}:{:02}.{ms:03}", s / 3600, s / 60 % 60, s % 60)
}

/// `YYYY-MM-DDTHH:MM:SS.fffffffff` of nanoseconds since the epoch.
fn timestamp(nanos: i128) -> String {
    let days = nanos.div_euclid(NANOS_PER_DAY);
    let rest = nanos.rem_euclid(NANOS_PER_DAY);
    let (secs, frac) = (rest / 1_000_000_000, rest % 1_000_000_000);
    // An i64 count of seconds spans fewer than 2^47 days.
    let days = i64::try_from(days).unwrap_or(i64::MAX);
    format!(
        "{}T{:02}:{:02}:{:02}.{frac:09}",
        date(days),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests;
