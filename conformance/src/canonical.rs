//! Canonical JSON view of Arrow results, following the corpus README's "Canonical value
//! encoding" (the encoding of `conformance/tables/<table>.expected.json` rows): integers as
//! numbers, floats with `"NaN"`/`"Infinity"` strings, decimals as strings, dates and
//! timestamps as ISO strings (nanosecond fraction, `Z` for local-zone timestamps), binary as
//! hex, BLOB as `{len, sha256, hex (up to 64 bytes)}`, lists as arrays, maps as `[key, value]`
//! pairs, rows as objects in column order.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use paimon_kernel::{Error, Result};
use serde_json::{Map, Value, json};

/// Every row of `batch` as a JSON object keyed by column name, in column order.
///
/// # Errors
/// [`Error::Unsupported`] for an Arrow type without a canonical rendering.
pub fn render_batch(batch: &RecordBatch) -> Result<Vec<Value>> {
    let schema = batch.schema();
    (0..batch.num_rows())
        .map(|row| {
            let mut obj = Map::new();
            for (i, field) in schema.fields().iter().enumerate() {
                obj.insert(
                    field.name().clone(),
                    render_value(batch.column(i).as_ref(), row)?,
                );
            }
            Ok(Value::Object(obj))
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn float(v: f64) -> Value {
    if v.is_nan() {
        json!("NaN")
    } else if v == f64::INFINITY {
        json!("Infinity")
    } else if v == f64::NEG_INFINITY {
        json!("-Infinity")
    } else {
        json!(v)
    }
}

fn decimal(v: i128, scale: i8) -> String {
    let neg = v < 0;
    let digits = v.unsigned_abs().to_string();
    let scale = scale.max(0) as usize;
    let s = if scale == 0 {
        digits
    } else {
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (int, frac) = padded.split_at(padded.len() - scale);
        format!("{int}.{frac}")
    };
    if neg { format!("-{s}") } else { s }
}

/// Proleptic Gregorian civil date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

fn timestamp(value: i64, unit: &TimeUnit, tz: bool) -> String {
    let per_sec: i64 = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let secs = value.div_euclid(per_sec);
    let nanos = value.rem_euclid(per_sec) * (1_000_000_000 / per_sec);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}.{:09}{}",
        date(days),
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        nanos,
        if tz { "Z" } else { "" }
    )
}

fn time_of_day(nanos: i64) -> String {
    let ms = nanos / 1_000_000;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// One value of `array` at `row`, canonical JSON.
///
/// # Errors
/// [`Error::Unsupported`] for an Arrow type without a canonical rendering.
pub fn render_value(array: &dyn Array, row: usize) -> Result<Value> {
    if array.is_null(row) {
        return Ok(Value::Null);
    }
    Ok(match array.data_type() {
        ArrowType::Boolean => json!(array.as_boolean().value(row)),
        ArrowType::Int8 => json!(array.as_primitive::<Int8Type>().value(row)),
        ArrowType::Int16 => json!(array.as_primitive::<Int16Type>().value(row)),
        ArrowType::Int32 => json!(array.as_primitive::<Int32Type>().value(row)),
        ArrowType::Int64 => json!(array.as_primitive::<Int64Type>().value(row)),
        ArrowType::Float32 => float(f64::from(array.as_primitive::<Float32Type>().value(row))),
        ArrowType::Float64 => float(array.as_primitive::<Float64Type>().value(row)),
        ArrowType::Decimal128(_, s) => {
            json!(decimal(
                array.as_primitive::<Decimal128Type>().value(row),
                *s
            ))
        }
        ArrowType::Utf8 => json!(array.as_string::<i32>().value(row)),
        ArrowType::LargeUtf8 => json!(array.as_string::<i64>().value(row)),
        ArrowType::Binary => json!(hex(array.as_binary::<i32>().value(row))),
        ArrowType::FixedSizeBinary(_) => json!(hex(array.as_fixed_size_binary().value(row))),
        ArrowType::LargeBinary => {
            let b = array.as_binary::<i64>().value(row);
            let mut obj = Map::new();
            obj.insert("len".into(), json!(b.len()));
            obj.insert("sha256".into(), json!(crate::format::sha256_hex(b)));
            if b.len() <= 64 {
                obj.insert("hex".into(), json!(hex(b)));
            }
            Value::Object(obj)
        }
        ArrowType::Date32 => json!(date(i64::from(
            array.as_primitive::<Date32Type>().value(row)
        ))),
        ArrowType::Time32(TimeUnit::Millisecond) => json!(time_of_day(
            i64::from(array.as_primitive::<Time32MillisecondType>().value(row)) * 1_000_000
        )),
        ArrowType::Time64(TimeUnit::Microsecond) => json!(time_of_day(
            array.as_primitive::<Time64MicrosecondType>().value(row) * 1_000
        )),
        ArrowType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            json!(timestamp(v, unit, tz.is_some()))
        }
        ArrowType::List(_) => {
            let l = array.as_list::<i32>();
            let values = l.value(row);
            Value::Array(
                (0..values.len())
                    .map(|i| render_value(values.as_ref(), i))
                    .collect::<Result<_>>()?,
            )
        }
        ArrowType::FixedSizeList(..) => {
            let values = array.as_fixed_size_list().value(row);
            Value::Array(
                (0..values.len())
                    .map(|i| render_value(values.as_ref(), i))
                    .collect::<Result<_>>()?,
            )
        }
        ArrowType::Map(..) => {
            let entries = array.as_map().value(row);
            let (k, v) = (entries.column(0), entries.column(1));
            Value::Array(
                (0..entries.len())
                    .map(|i| {
                        Ok(json!([
                            render_value(k.as_ref(), i)?,
                            render_value(v.as_ref(), i)?
                        ]))
                    })
                    .collect::<Result<_>>()?,
            )
        }
        ArrowType::Struct(fields) => {
            let s = array.as_struct();
            let mut obj = Map::new();
            for (i, f) in fields.iter().enumerate() {
                obj.insert(f.name().clone(), render_value(s.column(i).as_ref(), row)?);
            }
            Value::Object(obj)
        }
        other => {
            return Err(Error::Unsupported {
                feature: format!("canonical JSON rendering of Arrow type {other}"),
            });
        }
    })
}
