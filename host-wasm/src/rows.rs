//! Arrow record batches → JSON rows in the corpus' canonical value encoding (see the corpus
//! README, "Canonical value encoding"): what `scanRows` returns and what the tests compare
//! with `<table>.expected.json`.
//!
//! | Paimon type | JSON |
//! |---|---|
//! | TINYINT..BIGINT | number |
//! | FLOAT, DOUBLE | number; `"NaN"`, `"Infinity"`, `"-Infinity"` as strings |
//! | DECIMAL(p, s) | string with exactly `s` fraction digits |
//! | CHAR/VARCHAR/STRING | string |
//! | BINARY/VARBINARY/BYTES | lowercase hex |
//! | BLOB | `{"len", "sha256", "hex"}` (`hex` only when len ≤ 64) |
//! | DATE | `"YYYY-MM-DD"` |
//! | TIME(p) | `"HH:MM:SS.mmm"` |
//! | TIMESTAMP(p) | `"YYYY-MM-DDTHH:MM:SS.fffffffff"` |
//! | TIMESTAMP_LTZ(p) | the same with a `Z` suffix |
//! | ARRAY | array; MAP: array of `[key, value]`; ROW: object by field name |
//! | VARIANT | `{"value": hex, "metadata": hex}` |

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use paimon_kernel::spec::{DataType, TypeKind};
use paimon_kernel::{Error, Result};
use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

/// Lowercase hex of `b`.
pub fn hex(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push(D[usize::from(x >> 4)] as char);
        s.push(D[usize::from(x & 15)] as char);
    }
    s
}

fn float(v: f64) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// Proleptic Gregorian (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's algorithm.
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
    if (0..=9999).contains(&y) {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!("{y}-{m:02}-{d:02}")
    }
}

/// `YYYY-MM-DDTHH:MM:SS.fffffffff` of nanoseconds since the epoch.
pub fn timestamp(nanos: i128) -> String {
    let day_nanos: i128 = 86_400 * 1_000_000_000;
    let days = nanos.div_euclid(day_nanos);
    let rest = nanos.rem_euclid(day_nanos);
    let secs = rest / 1_000_000_000;
    let frac = rest % 1_000_000_000;
    // |days| is far below i64::MAX for any i64 nanosecond/second input.
    let days = i64::try_from(days).unwrap_or(i64::MAX);
    format!(
        "{}T{:02}:{:02}:{:02}.{frac:09}",
        date(days),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn type_error(dt: &DataType, arrow: &ArrowType) -> Error {
    Error::invalid(format!(
        "cannot render a {} column held as Arrow {arrow}",
        dt.sql_string()
    ))
}

/// The canonical JSON of row `i` of `array`, whose Paimon type is `dt`.
///
/// # Errors
/// [`Error::Invalid`] when the Arrow type does not match what the core produces for `dt`.
pub fn value(array: &dyn Array, i: usize, dt: &DataType) -> Result<Value> {
    if array.is_null(i) {
        return Ok(Value::Null);
    }
    let bad = || type_error(dt, array.data_type());
    Ok(match (&dt.kind, array.data_type()) {
        (TypeKind::Boolean, ArrowType::Boolean) => Value::Bool(array.as_boolean().value(i)),
        (TypeKind::TinyInt, ArrowType::Int8) => array.as_primitive::<Int8Type>().value(i).into(),
        (TypeKind::SmallInt, ArrowType::Int16) => array.as_primitive::<Int16Type>().value(i).into(),
        (TypeKind::Int, ArrowType::Int32) => array.as_primitive::<Int32Type>().value(i).into(),
        (TypeKind::BigInt, ArrowType::Int64) => array.as_primitive::<Int64Type>().value(i).into(),
        (TypeKind::Float, ArrowType::Float32) => {
            float(f64::from(array.as_primitive::<Float32Type>().value(i)))
        }
        (TypeKind::Double, ArrowType::Float64) => {
            float(array.as_primitive::<Float64Type>().value(i))
        }
        (TypeKind::Decimal { .. }, ArrowType::Decimal128(..)) => {
            Value::String(array.as_primitive::<Decimal128Type>().value_as_string(i))
        }
        (TypeKind::Char { .. } | TypeKind::VarChar { .. }, ArrowType::Utf8) => {
            Value::String(array.as_string::<i32>().value(i).to_string())
        }
        (TypeKind::Char { .. } | TypeKind::VarChar { .. }, ArrowType::LargeUtf8) => {
            Value::String(array.as_string::<i64>().value(i).to_string())
        }
        (TypeKind::Binary { .. } | TypeKind::VarBinary { .. }, ArrowType::Binary) => {
            Value::String(hex(array.as_binary::<i32>().value(i)))
        }
        (TypeKind::Binary { .. } | TypeKind::VarBinary { .. }, ArrowType::LargeBinary) => {
            Value::String(hex(array.as_binary::<i64>().value(i)))
        }
        (TypeKind::Blob, ArrowType::LargeBinary | ArrowType::Binary) => {
            let b = if let ArrowType::LargeBinary = array.data_type() {
                array.as_binary::<i64>().value(i)
            } else {
                array.as_binary::<i32>().value(i)
            };
            let mut m = Map::new();
            m.insert("len".into(), b.len().into());
            m.insert("sha256".into(), Value::String(hex(&Sha256::digest(b))));
            if b.len() <= 64 {
                m.insert("hex".into(), Value::String(hex(b)));
            }
            Value::Object(m)
        }
        (TypeKind::Date, ArrowType::Date32) => {
            Value::String(date(i64::from(array.as_primitive::<Date32Type>().value(i))))
        }
        (TypeKind::Time { .. }, ArrowType::Time32(TimeUnit::Millisecond)) => {
            let ms = i64::from(array.as_primitive::<Time32MillisecondType>().value(i));
            let (s, ms) = (ms.div_euclid(1000), ms.rem_euclid(1000));
            Value::String(format!(
                "{:02}:{:02}:{:02}.{ms:03}",
                s / 3600,
                s / 60 % 60,
                s % 60
            ))
        }
        (
            TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. },
            ArrowType::Timestamp(unit, _),
        ) => {
            let nanos: i128 = match unit {
                TimeUnit::Second => {
                    i128::from(array.as_primitive::<TimestampSecondType>().value(i)) * 1_000_000_000
                }
                TimeUnit::Millisecond => {
                    i128::from(array.as_primitive::<TimestampMillisecondType>().value(i))
                        * 1_000_000
                }
                TimeUnit::Microsecond => {
                    i128::from(array.as_primitive::<TimestampMicrosecondType>().value(i)) * 1_000
                }
                TimeUnit::Nanosecond => {
                    i128::from(array.as_primitive::<TimestampNanosecondType>().value(i))
                }
            };
            let mut s = timestamp(nanos);
            if matches!(dt.kind, TypeKind::LocalZonedTimestamp { .. }) {
                s.push('Z');
            }
            Value::String(s)
        }
        (TypeKind::Array(e), ArrowType::List(_)) => {
            list(array.as_list::<i32>().value(i).as_ref(), e)?
        }
        (TypeKind::Array(e), ArrowType::LargeList(_)) => {
            list(array.as_list::<i64>().value(i).as_ref(), e)?
        }
        (TypeKind::Vector { element, .. }, ArrowType::FixedSizeList(..)) => {
            list(array.as_fixed_size_list().value(i).as_ref(), element)?
        }
        (TypeKind::Map(k, v), ArrowType::Map(..)) => {
            let entries = array.as_map().value(i);
            let (keys, values) = (entries.column(0), entries.column(1));
            let mut out = Vec::with_capacity(entries.len());
            for j in 0..entries.len() {
                out.push(Value::Array(vec![
                    value(keys.as_ref(), j, k)?,
                    value(values.as_ref(), j, v)?,
                ]));
            }
            Value::Array(out)
        }
        (TypeKind::Multiset(e), ArrowType::Map(..)) => {
            let entries = array.as_map().value(i);
            let int = DataType {
                kind: TypeKind::Int,
                nullable: false,
            };
            let (keys, values) = (entries.column(0), entries.column(1));
            let mut out = Vec::with_capacity(entries.len());
            for j in 0..entries.len() {
                out.push(Value::Array(vec![
                    value(keys.as_ref(), j, e)?,
                    value(values.as_ref(), j, &int)?,
                ]));
            }
            Value::Array(out)
        }
        (TypeKind::Row(fields), ArrowType::Struct(_)) => {
            let s = array.as_struct();
            if s.num_columns() != fields.len() {
                return Err(bad());
            }
            let mut m = Map::new();
            for (f, col) in fields.iter().zip(s.columns()) {
                m.insert(f.name.clone(), value(col.as_ref(), i, &f.data_type)?);
            }
            Value::Object(m)
        }
        (TypeKind::Variant, ArrowType::Struct(_)) => {
            let s = array.as_struct();
            let part = |name: &str| -> Result<Value> {
                let c = s.column_by_name(name).ok_or_else(bad)?;
                match c.data_type() {
                    ArrowType::Binary => Ok(Value::String(hex(c.as_binary::<i32>().value(i)))),
                    ArrowType::LargeBinary => Ok(Value::String(hex(c.as_binary::<i64>().value(i)))),
                    _ => Err(bad()),
                }
            };
            let mut m = Map::new();
            m.insert("value".into(), part("value")?);
            m.insert("metadata".into(), part("metadata")?);
            Value::Object(m)
        }
        _ => return Err(bad()),
    })
}

fn list(values: &dyn Array, element: &DataType) -> Result<Value> {
    (0..values.len())
        .map(|j| value(values, j, element))
        .collect::<Result<Vec<_>>>()
        .map(Value::Array)
}

/// Rows of `batches` as JSON objects keyed by column name in column order; `columns` gives
/// each column's name and Paimon type (the batch's columns in the same order).
///
/// # Errors
/// A batch whose column count differs from `columns`; as [`value`].
pub fn to_rows(batches: &[RecordBatch], columns: &[(String, DataType)]) -> Result<Vec<Value>> {
    let mut rows = Vec::new();
    for b in batches {
        if b.num_columns() != columns.len() {
            return Err(Error::invalid(format!(
                "batch has {} columns, expected {}",
                b.num_columns(),
                columns.len()
            )));
        }
        let cols: Vec<&ArrayRef> = b.columns().iter().collect();
        for i in 0..b.num_rows() {
            let mut m = Map::new();
            for ((name, dt), col) in columns.iter().zip(&cols) {
                m.insert(name.clone(), value(col.as_ref(), i, dt)?);
            }
            rows.push(Value::Object(m));
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_timestamps_follow_the_canonical_encoding() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(-1), "1969-12-31");
        assert_eq!(date(19_723), "2024-01-01");
        assert_eq!(date(-719_528), "0000-01-01");
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000000000");
        assert_eq!(timestamp(-1), "1969-12-31T23:59:59.999999999");
        assert_eq!(
            timestamp(1_704_067_200_123_456_789),
            "2024-01-01T00:00:00.123456789"
        );
    }

    #[test]
    fn floats_and_hex() {
        assert_eq!(float(f64::NAN), Value::String("NaN".into()));
        assert_eq!(float(f64::NEG_INFINITY), Value::String("-Infinity".into()));
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
    }
}
