//! Canonical JSON rendering (copied from core/tests/it/canonical.rs; keep in sync) of Arrow values, following the corpus README's "Canonical value
//! encoding" (`conformance/tables`, /work/shared/corpus/README.md), and a parser for the Paimon
//! type strings of `<table>.expected.json` `fields`.
//!
//! The rendering is driven by Arrow types as [`paimon_kernel::types::paimon_to_arrow_type`]
//! produces them: `LargeBinary` is a BLOB, `Timestamp(_, Some(_))` a TIMESTAMP_LTZ.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use paimon_kernel::spec::types::{DataField, DataType, TypeKind};
use serde_json::{Map, Value, json};

/// `conformance/tables` of this repository.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tables")
}

/// Every row of `batch` as a JSON object keyed by column name, in column order.
pub fn render_batch(batch: &RecordBatch) -> Vec<Value> {
    let schema = batch.schema();
    (0..batch.num_rows())
        .map(|row| {
            let mut obj = Map::new();
            for (i, field) in schema.fields().iter().enumerate() {
                obj.insert(
                    field.name().clone(),
                    render_value(batch.column(i).as_ref(), row),
                );
            }
            Value::Object(obj)
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
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
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
pub fn render_value(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    match array.data_type() {
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
            obj.insert("sha256".into(), json!(sha256_hex(b)));
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
                    .collect(),
            )
        }
        ArrowType::FixedSizeList(..) => {
            let values = array.as_fixed_size_list().value(row);
            Value::Array(
                (0..values.len())
                    .map(|i| render_value(values.as_ref(), i))
                    .collect(),
            )
        }
        ArrowType::Map(..) => {
            let entries = array.as_map().value(row);
            let (k, v) = (entries.column(0), entries.column(1));
            Value::Array(
                (0..entries.len())
                    .map(|i| json!([render_value(k.as_ref(), i), render_value(v.as_ref(), i)]))
                    .collect(),
            )
        }
        ArrowType::Struct(fields) => {
            let s = array.as_struct();
            let mut obj = Map::new();
            for (i, f) in fields.iter().enumerate() {
                obj.insert(f.name().clone(), render_value(s.column(i).as_ref(), row));
            }
            Value::Object(obj)
        }
        other => panic!("no canonical rendering for {other}"),
    }
}

/// SHA-256 (FIPS 180-4), lowercase hex; small and slow, for test renderings of BLOBs.
pub fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for chunk in msg.chunks(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([
                chunk[4 * i],
                chunk[4 * i + 1],
                chunk[4 * i + 2],
                chunk[4 * i + 3],
            ]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (a, b) in h.iter_mut().zip(v) {
            *a = a.wrapping_add(b);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

/// Parse a field list of an expected file (`fields`: id, name, type).
pub fn parse_fields(fields: &Value) -> Vec<DataField> {
    fields
        .as_array()
        .expect("fields array")
        .iter()
        .map(|f| DataField {
            id: f["id"].as_i64().expect("id") as i32,
            name: f["name"].as_str().expect("name").to_string(),
            data_type: parse_type(&f["type"]),
            description: None,
            default_value: None,
        })
        .collect()
}

/// Parse a Paimon type in the schema JSON form (SQL string or nested object).
pub fn parse_type(t: &Value) -> DataType {
    if let Some(s) = t.as_str() {
        return parse_atomic(s);
    }
    let nullable = t.get("nullable").and_then(Value::as_bool).unwrap_or(true);
    let kind = match t["type"].as_str().expect("type") {
        "ARRAY" => TypeKind::Array(Box::new(parse_type(&t["element"]))),
        "MULTISET" => TypeKind::Multiset(Box::new(parse_type(&t["element"]))),
        "MAP" => TypeKind::Map(
            Box::new(parse_type(&t["key"])),
            Box::new(parse_type(&t["value"])),
        ),
        "ROW" => TypeKind::Row(parse_fields(&t["fields"])),
        other => panic!("unknown nested type {other}"),
    };
    DataType { nullable, kind }
}

fn parse_atomic(s: &str) -> DataType {
    let s = s.trim();
    let (s, nullable) = match s.strip_suffix("NOT NULL") {
        Some(rest) => (rest.trim(), false),
        None => (s, true),
    };
    let (name, args): (&str, Vec<u32>) = match s.split_once('(') {
        Some((n, rest)) => {
            let (inner, _) = rest.split_once(')').expect(")");
            (
                n.trim(),
                inner
                    .split(',')
                    .map(|a| a.trim().parse().expect("int"))
                    .collect(),
            )
        }
        None => (s, vec![]),
    };
    let arg = |i: usize, d: u32| args.get(i).copied().unwrap_or(d);
    let kind = match name {
        "BOOLEAN" => TypeKind::Boolean,
        "TINYINT" => TypeKind::TinyInt,
        "SMALLINT" => TypeKind::SmallInt,
        "INT" | "INTEGER" => TypeKind::Int,
        "BIGINT" => TypeKind::BigInt,
        "FLOAT" => TypeKind::Float,
        "DOUBLE" => TypeKind::Double,
        "DECIMAL" => TypeKind::Decimal {
            precision: arg(0, 10),
            scale: arg(1, 0),
        },
        "STRING" => TypeKind::VarChar {
            length: i32::MAX as u32,
        },
        "VARCHAR" => TypeKind::VarChar { length: arg(0, 1) },
        "CHAR" => TypeKind::Char { length: arg(0, 1) },
        "BYTES" => TypeKind::VarBinary {
            length: i32::MAX as u32,
        },
        "VARBINARY" => TypeKind::VarBinary { length: arg(0, 1) },
        "BINARY" => TypeKind::Binary { length: arg(0, 1) },
        "DATE" => TypeKind::Date,
        "TIME" => TypeKind::Time {
            precision: arg(0, 0),
        },
        "TIMESTAMP" => TypeKind::Timestamp {
            precision: arg(0, 6),
        },
        "TIMESTAMP_LTZ" => TypeKind::LocalZonedTimestamp {
            precision: arg(0, 6),
        },
        "BLOB" => TypeKind::Blob,
        "VARIANT" => TypeKind::Variant,
        other => {
            if let Some(p) = s
                .strip_prefix("TIMESTAMP(")
                .and_then(|r| r.split_once(") WITH LOCAL TIME ZONE"))
            {
                TypeKind::LocalZonedTimestamp {
                    precision: p.0.parse().expect("p"),
                }
            } else {
                panic!("unknown type {other} in {s}")
            }
        }
    };
    DataType { nullable, kind }
}

#[test]
fn canonical_helpers() {
    assert_eq!(decimal(-10, 2), "-0.10");
    assert_eq!(decimal(5, 0), "5");
    assert_eq!(date(0), "1970-01-01");
    assert_eq!(date(-25567), "1900-01-01");
    assert_eq!(
        timestamp(-1, &TimeUnit::Nanosecond, false),
        "1969-12-31T23:59:59.999999999"
    );
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
