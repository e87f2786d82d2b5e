//! Java's cast rules against Java itself: `java_casts.tsv` holds, per line, a type the file was
//! written with, the read type, an input value and what Java 2.0.0's
//! `CastExecutors.resolve(from, to).cast(value)` returned (`NORULE`: no executor; `ERR ...`:
//! the executor threw; `NULL`; else the value). It was captured by
//! `conformance/java-check/j20/gen.sh cast-probe` (`CastProbe.java`, JVM time zone UTC) from the
//! cases of `conformance/java-check/j20/cast-cases.py`.
//!
//! Value texts: integers and booleans as Java prints them, FLOAT/DOUBLE as `f`/`d` + the hex
//! of their bits, DECIMAL as plain text, DATE/TIME as the internal int, TIMESTAMP as
//! `millis,nanosOfMilli`, binaries as hex, strings with `\\` and `\uXXXX` escapes for controls.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType,
};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int8Array, Int16Array, Int32Array, Int64Array, StringArray, Time32MillisecondArray,
};

use super::*;
use crate::spec::types::DataType;
use crate::types::paimon_to_arrow_field;

fn ty(s: &str) -> DataType {
    s.parse().unwrap()
}

fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if (c as u32) < 0x20 {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// A one-value column of `t` from the probe's input text, in `t`'s Arrow type; `None` when no
/// data file of `t` can hold the value (a timestamp finer than the type's Arrow unit, or out of
/// the unit's range).
fn input(t: &DataType, v: &str) -> Option<ArrayRef> {
    let arrow = paimon_to_arrow_type(t).unwrap();
    let a: ArrayRef = match &t.kind {
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => Arc::new(StringArray::from(vec![v])),
        TypeKind::Boolean => Arc::new(BooleanArray::from(vec![v == "true"])),
        TypeKind::TinyInt => Arc::new(Int8Array::from(vec![v.parse::<i8>().unwrap()])),
        TypeKind::SmallInt => Arc::new(Int16Array::from(vec![v.parse::<i16>().unwrap()])),
        TypeKind::Int => Arc::new(Int32Array::from(vec![v.parse::<i32>().unwrap()])),
        TypeKind::BigInt => Arc::new(Int64Array::from(vec![v.parse::<i64>().unwrap()])),
        TypeKind::Date => Arc::new(Date32Array::from(vec![v.parse::<i32>().unwrap()])),
        TypeKind::Time { .. } => Arc::new(Time32MillisecondArray::from(vec![
            v.parse::<i32>().unwrap(),
        ])),
        TypeKind::Float => Arc::new(Float32Array::from(vec![f32::from_bits(
            u32::from_str_radix(v, 16).unwrap(),
        )])),
        TypeKind::Double => Arc::new(Float64Array::from(vec![f64::from_bits(
            u64::from_str_radix(v, 16).unwrap(),
        )])),
        TypeKind::Decimal { precision, scale } => {
            let (neg, digits, s) = parse_big_decimal(v).unwrap();
            let u = round_decimal(neg, &digits, s, *precision, *scale).unwrap();
            Arc::new(
                Decimal128Array::from(vec![u])
                    .with_precision_and_scale(*precision as u8, *scale as i8)
                    .unwrap(),
            )
        }
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => {
            Arc::new(BinaryArray::from(vec![unhex(v).as_slice()]))
        }
        TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. } => {
            let (m, n) = v.split_once(',').unwrap();
            let (m, n): (i64, i32) = (m.parse().unwrap(), n.parse().unwrap());
            let ArrowType::Timestamp(unit, _) = &arrow else {
                unreachable!()
            };
            let raw = ts_in_unit(m, n, *unit).ok()?;
            let exact = match unit {
                TimeUnit::Second => m.rem_euclid(1000) == 0 && n == 0,
                TimeUnit::Millisecond => n == 0,
                TimeUnit::Microsecond => n % 1000 == 0,
                TimeUnit::Nanosecond => true,
            };
            if !exact {
                return None;
            }
            build(vec![Some(Value::Ts(m, n))], t).ok()?;
            let _ = raw;
            build(vec![Some(Value::Ts(m, n))], t).unwrap()
        }
        _ => panic!("input type {t}"),
    };
    assert_eq!(a.data_type(), &arrow, "{t}");
    Some(a)
}

/// The probe's text of the one value of `a` (of `t`'s Arrow type).
fn render(t: &DataType, a: &ArrayRef) -> String {
    if a.is_null(0) {
        return "NULL".into();
    }
    match &t.kind {
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => escape(a.as_string::<i32>().value(0)),
        TypeKind::Boolean => a.as_boolean().value(0).to_string(),
        TypeKind::TinyInt => a.as_primitive::<Int8Type>().value(0).to_string(),
        TypeKind::SmallInt => a.as_primitive::<Int16Type>().value(0).to_string(),
        TypeKind::Int => a.as_primitive::<Int32Type>().value(0).to_string(),
        TypeKind::BigInt => a.as_primitive::<Int64Type>().value(0).to_string(),
        TypeKind::Date => a.as_primitive::<Date32Type>().value(0).to_string(),
        TypeKind::Time { .. } => a
            .as_primitive::<Time32MillisecondType>()
            .value(0)
            .to_string(),
        TypeKind::Float => format!("f{:x}", a.as_primitive::<Float32Type>().value(0).to_bits()),
        TypeKind::Double => format!("d{:x}", a.as_primitive::<Float64Type>().value(0).to_bits()),
        TypeKind::Decimal { scale, .. } => {
            decimal_to_plain_string(a.as_primitive::<Decimal128Type>().value(0), *scale)
        }
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => {
            crate::util::hex(a.as_binary::<i32>().value(0))
        }
        TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. } => {
            match value_at(a.as_ref(), t, 0).unwrap() {
                Some(Value::Ts(m, n)) => format!("{m},{n}"),
                other => panic!("{other:?}"),
            }
        }
        _ => panic!("output type {t}"),
    }
}

#[test]
fn every_cast_reads_as_java_casts() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in include_str!("java_casts.tsv").lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let [from, to, value, java] = cols[..] else {
            panic!("bad line {line:?}");
        };
        if java == "BADINPUT" {
            continue;
        }
        let (from, to) = (ty(from), ty(to));
        if from.kind == to.kind {
            continue;
        }
        let field =
            paimon_to_arrow_field(&crate::spec::DataField::new(0, "c", to.clone())).unwrap();
        let Some(column) = input(&from, value) else {
            continue;
        };
        let got = evolve_column(&column, &from, &to, &field, "f.parquet");
        // Nanosecond Arrow timestamps span 1677-09-21..2262-04-11 only; Java's reach further.
        if matches!(&got, Err(Error::Invalid(m)) if m.contains("does not fit Nanosecond")) {
            continue;
        }
        let ok = match (&got, java) {
            (Err(Error::Unsupported { .. }), "NORULE") => true,
            (Err(Error::Invalid(_)), j) if j.starts_with("ERR ") => true,
            (Ok(a), j) => render(&to, a) == j,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{from} -> {to} of {value:?}: Java {java:?}, ours {:?}",
                got.map(|a| render(&to, &a))
            ));
        }
        checked += 1;
    }
    assert!(checked > 2500, "{checked}");
    assert!(
        failures.is_empty(),
        "{} of {checked} casts differ from Java:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn evolve_to(column: ArrayRef, from: &str, to: &str) -> Result<ArrayRef> {
    let (from, to) = (ty(from), ty(to));
    let field = paimon_to_arrow_field(&crate::spec::DataField::new(0, "c", to.clone())).unwrap();
    evolve_column(&column, &from, &to, &field, "f.parquet")
}

fn strings(a: &ArrayRef) -> Vec<Option<String>> {
    a.as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_owned))
        .collect()
}

/// `ArrayToStringCastRule`, `MapToStringCastRule`, `RowToStringCastRule`: elements cast to
/// `STRING` one by one, NULL elements as `null`, no length limit applied to the result.
#[test]
fn nested_values_to_string_as_java_renders_them() {
    use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
    let mut lb = ListBuilder::new(Int32Builder::new());
    lb.append_value([Some(1), None, Some(-3)]);
    lb.append_null();
    lb.append_value(std::iter::empty::<Option<i32>>());
    let out = evolve_to(Arc::new(lb.finish()), "ARRAY<INT>", "VARCHAR(4)").unwrap();
    assert_eq!(
        strings(&out),
        [
            Some("[1, null, -3]".to_string()),
            None,
            Some("[]".to_string())
        ]
    );

    let mut mb = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    mb.keys().append_value("a");
    mb.values().append_value(1);
    mb.keys().append_value("b");
    mb.values().append_null();
    mb.append(true).unwrap();
    let out = evolve_to(Arc::new(mb.finish()), "MAP<STRING, INT>", "STRING").unwrap();
    assert_eq!(strings(&out), [Some("{a -> 1, b -> null}".to_string())]);

    let row: ArrayRef = Arc::new(StructArray::from(vec![
        (
            Arc::new(Field::new("x", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(7), None])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("d", ArrowType::Date32, true)),
            Arc::new(Date32Array::from(vec![Some(19_727), Some(0)])) as ArrayRef,
        ),
    ]));
    let out = evolve_to(row, "ROW<x INT, d DATE>", "STRING").unwrap();
    assert_eq!(
        strings(&out),
        [
            Some("{7, 2024-01-05}".to_string()),
            Some("{null, 1970-01-01}".to_string())
        ]
    );
}

/// `SchemaEvolutionUtil.createCastExecutor`: ROW fields matched by field id (a field the file
/// lacks reads as NULL), ARRAY elements and MAP values cast one by one.
#[test]
fn nested_types_evolve_by_field_id_and_element() {
    let row: ArrayRef = Arc::new(StructArray::from(vec![
        (
            Arc::new(Field::new("a", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(300), None])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("b", ArrowType::Utf8, true)),
            Arc::new(StringArray::from(vec![Some("x"), Some("y")])) as ArrayRef,
        ),
    ]));
    let from: DataType = serde_json::from_str(
        r#"{"type": "ROW", "fields": [{"id": 1, "name": "a", "type": "INT"},
            {"id": 2, "name": "b", "type": "STRING"}]}"#,
    )
    .unwrap();
    // b renamed to b2 and moved first, a changed to STRING, c added.
    let to: DataType = serde_json::from_str(
        r#"{"type": "ROW", "fields": [{"id": 2, "name": "b2", "type": "STRING"},
            {"id": 1, "name": "a", "type": "STRING"}, {"id": 3, "name": "c", "type": "INT"}]}"#,
    )
    .unwrap();
    let field = paimon_to_arrow_field(&crate::spec::DataField::new(0, "r", to.clone())).unwrap();
    let out = evolve_column(&row, &from, &to, &field, "f.parquet").unwrap();
    let s = out.as_struct();
    assert_eq!(strings(s.column(0)), [Some("x".into()), Some("y".into())]);
    assert_eq!(strings(s.column(1)), [Some("300".into()), None]);
    assert_eq!(s.column(2).null_count(), 2);

    let mut lb = arrow_array::builder::ListBuilder::new(arrow_array::builder::Int32Builder::new());
    lb.append_value([Some(1), None]);
    let out = evolve_to(Arc::new(lb.finish()), "ARRAY<INT>", "ARRAY<BIGINT>").unwrap();
    let l = out.as_list::<i32>();
    assert_eq!(
        l.value(0)
            .as_primitive::<Int64Type>()
            .iter()
            .collect::<Vec<_>>(),
        [Some(1), None]
    );
}

/// A type change Java has no executor for is `Unsupported`, naming the column and both types,
/// never "corrupt"; a value Java's executor rejects is `Invalid`, naming the value.
#[test]
fn errors_name_the_column_types_and_value() {
    let e = evolve_to(
        Arc::new(Int8Array::from(vec![1])),
        "TINYINT",
        "TIMESTAMP(3)",
    )
    .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("f.parquet")
            && m.contains("column c")
            && m.contains("TINYINT")
            && m.contains("TIMESTAMP(3)"),
        "{m}"
    );
    let e = evolve_to(
        Arc::new(StringArray::from(vec!["12", "x1"])),
        "STRING",
        "INT",
    )
    .unwrap_err();
    assert!(matches!(e, Error::Invalid(_)), "{e}");
    assert!(e.to_string().contains("'x1'"), "{e}");
    let e = evolve_to(
        Arc::new(StringArray::from(vec!["[1]"])),
        "STRING",
        "ARRAY<INT>",
    )
    .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
}

/// What `ALTER TABLE` accepts and what reads evolve come from the same rules.
#[test]
fn rule_resolution_matches_javas_lookup_order() {
    let r = |a: &str, b: &str| resolve_rule(&ty(a), &ty(b));
    assert_eq!(
        r("DECIMAL(5, 2)", "BIGINT"),
        Some(CastRule::DecimalToNumericPrimitive)
    );
    assert_eq!(
        r("BOOLEAN", "DECIMAL(5, 2)"),
        Some(CastRule::BooleanToNumeric)
    );
    assert_eq!(
        r("TIMESTAMP(3)", "BIGINT"),
        Some(CastRule::TimestampToNumericPrimitive)
    );
    assert_eq!(r("TIMESTAMP(3)", "TINYINT"), None);
    // Timestamps, times and dates go to the nullable STRING type only.
    assert_eq!(
        r("TIMESTAMP(3)", "STRING"),
        Some(CastRule::TimestampToString)
    );
    assert_eq!(r("TIMESTAMP(3)", "STRING NOT NULL"), None);
    assert_eq!(r("DATE", "VARCHAR(10)"), None);
    assert_eq!(r("INT", "VARCHAR(10)"), Some(CastRule::NumericToString));
    assert_eq!(r("TIME(0)", "TIME(3)"), None);
    // A rule without an executor: only INT and BIGINT become timestamps.
    assert!(has_cast_executor(&ty("BIGINT"), &ty("TIMESTAMP(3)")));
    assert!(!has_cast_executor(&ty("DOUBLE"), &ty("TIMESTAMP(3)")));
    assert!(evolution_supported(&ty("ARRAY<INT>"), &ty("STRING")));
    assert!(!evolution_supported(&ty("ARRAY<VARIANT>"), &ty("STRING")));
}
