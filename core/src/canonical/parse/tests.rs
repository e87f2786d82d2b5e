use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::Array;
use arrow_schema::{DataType as ArrowType, Field, Schema, TimeUnit};
use serde_json::{Value, json};

use super::*;
use crate::canonical;
use crate::spec::types::DataField;
use crate::types::{paimon_to_arrow_field, paimon_to_arrow_type};

/// The Arrow type of a Paimon type string (`"DECIMAL(10, 2)"`, `"MAP<INT, STRING>"`...).
fn paimon(sql: &str) -> ArrowType {
    paimon_to_arrow_type(&crate::spec::types::DataType::parse_sql(sql).unwrap()).unwrap()
}

/// Parse `input` as one value of `t` (nullable) and render it back as canonical JSON.
fn round(t: &ArrowType, input: &Value) -> Result<Value> {
    let array = array_from_values(&[input], &Field::new("c", t.clone(), true))?;
    assert_eq!(array.len(), 1);
    canonical::value(array.as_ref(), 0)
}

/// The error text of parsing `input` as `t` in a column named `c` (nullable).
fn error(t: &ArrowType, input: &Value) -> String {
    let field = Field::new("c", t.clone(), true);
    // Row 2, so that messages must carry the row.
    let values = [&Value::Null, &Value::Null, input];
    match array_from_values(&values, &field) {
        Ok(a) => panic!(
            "{input} as {t} parsed into {:?}",
            canonical::value(a.as_ref(), 2)
        ),
        Err(e) => e.to_string(),
    }
}

#[test]
fn hand_written_forms_read_as_the_canonical_value() {
    let ms_utc = ArrowType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
    let us = ArrowType::Timestamp(TimeUnit::Microsecond, None);
    let cases: Vec<(ArrowType, Value, Value)> = vec![
        // Integers: numbers, strings, integral doubles.
        (paimon("TINYINT"), json!(5), json!(5)),
        (paimon("TINYINT"), json!("-128"), json!(-128)),
        (paimon("SMALLINT"), json!(" +7 "), json!(7)),
        (paimon("INT"), json!(5.0), json!(5)),
        (paimon("INT"), json!(1e3), json!(1000)),
        (paimon("BIGINT"), json!(i64::MAX), json!(i64::MAX)),
        (
            paimon("BIGINT"),
            json!("-9223372036854775808"),
            json!(i64::MIN),
        ),
        // Floats.
        (paimon("DOUBLE"), json!(1.5), json!(1.5)),
        (paimon("DOUBLE"), json!("1.5"), json!(1.5)),
        (paimon("DOUBLE"), json!(3), json!(3.0)),
        (paimon("DOUBLE"), json!(-0.0), json!(-0.0)),
        (paimon("DOUBLE"), json!("NaN"), json!("NaN")),
        (paimon("DOUBLE"), json!("nan"), json!("NaN")),
        (paimon("DOUBLE"), json!("Infinity"), json!("Infinity")),
        (paimon("DOUBLE"), json!("-Infinity"), json!("-Infinity")),
        (paimon("DOUBLE"), json!("inf"), json!("Infinity")),
        (paimon("DOUBLE"), json!("-inf"), json!("-Infinity")),
        (paimon("DOUBLE"), json!("1e300"), json!(1e300)),
        (paimon("FLOAT"), json!(0.1), json!(0.10000000149011612)),
        (paimon("FLOAT"), json!("0.1"), json!(0.10000000149011612)),
        (
            paimon("FLOAT"),
            json!(0.10000000149011612),
            json!(0.10000000149011612),
        ),
        (paimon("FLOAT"), json!("-Infinity"), json!("-Infinity")),
        // Decimals: exact digits, padded to the scale.
        (paimon("DECIMAL(10, 2)"), json!("1.5"), json!("1.50")),
        (paimon("DECIMAL(10, 2)"), json!(1.5), json!("1.50")),
        (paimon("DECIMAL(10, 2)"), json!(12), json!("12.00")),
        (paimon("DECIMAL(10, 2)"), json!("-0.10"), json!("-0.10")),
        (paimon("DECIMAL(10, 2)"), json!("1.500000"), json!("1.50")),
        (paimon("DECIMAL(10, 2)"), json!("12e-1"), json!("1.20")),
        (paimon("DECIMAL(10, 2)"), json!("1E2"), json!("100.00")),
        (paimon("DECIMAL(10, 2)"), json!("+.5"), json!("0.50")),
        (paimon("DECIMAL(10, 2)"), json!("7."), json!("7.00")),
        (paimon("DECIMAL(10, 2)"), json!("-0"), json!("0.00")),
        (
            paimon("DECIMAL(10, 2)"),
            json!("0e999999999999"),
            json!("0.00"),
        ),
        (
            paimon("DECIMAL(10, 2)"),
            json!(12345678.99),
            json!("12345678.99"),
        ),
        (
            paimon("DECIMAL(38, 10)"),
            json!("-9999999999999999999999999999.9999999999"),
            json!("-9999999999999999999999999999.9999999999"),
        ),
        (
            paimon("DECIMAL(20, 0)"),
            json!(12345678901234567890_u64),
            json!("12345678901234567890"),
        ),
        (paimon("DECIMAL(5, 0)"), json!("1.0e4"), json!("10000")),
        // Strings, binaries, booleans.
        (paimon("STRING"), json!(""), json!("")),
        (paimon("STRING"), json!("héllo"), json!("héllo")),
        (paimon("BYTES"), json!("00FfaB"), json!("00ffab")),
        (paimon("BYTES"), json!(""), json!("")),
        (paimon("BOOLEAN"), json!(true), json!(true)),
        (paimon("BOOLEAN"), json!("FALSE"), json!(false)),
        (paimon("BOOLEAN"), json!("true"), json!(true)),
        // Dates and times.
        (paimon("DATE"), json!("2024-02-29"), json!("2024-02-29")),
        (paimon("DATE"), json!("2024-1-5"), json!("2024-01-05")),
        (paimon("DATE"), json!("0000-01-01"), json!("0000-01-01")),
        (paimon("DATE"), json!("-0001-12-31"), json!("-0001-12-31")),
        (paimon("DATE"), json!("+10000-01-01"), json!("+10000-01-01")),
        (paimon("TIME(3)"), json!("12:34:56"), json!("12:34:56.000")),
        (
            paimon("TIME(3)"),
            json!("12:34:56.7"),
            json!("12:34:56.700"),
        ),
        (paimon("TIME(3)"), json!("23:59:59."), json!("23:59:59.000")),
        (
            paimon("TIME(3)"),
            json!("12:34:56.789000000"),
            json!("12:34:56.789"),
        ),
        (
            us.clone(),
            json!("2024-01-02 03:04:05"),
            json!("2024-01-02T03:04:05.000000000"),
        ),
        (
            us.clone(),
            json!("1969-12-31T23:59:59.999999"),
            json!("1969-12-31T23:59:59.999999000"),
        ),
        (
            us.clone(),
            json!("2024-01-02T03:04:05.123456000"),
            json!("2024-01-02T03:04:05.123456000"),
        ),
        (
            paimon("TIMESTAMP(0)"),
            json!("0001-01-01T00:00:00"),
            json!("0001-01-01T00:00:00.000000000"),
        ),
        (
            ms_utc.clone(),
            json!("2024-01-02T03:04:05.678Z"),
            json!("2024-01-02T03:04:05.678000000Z"),
        ),
        (
            ms_utc.clone(),
            json!("2024-01-02 03:04:05.678"),
            json!("2024-01-02T03:04:05.678000000Z"),
        ),
        (
            ms_utc.clone(),
            json!("2024-01-02T04:34:05+01:30"),
            json!("2024-01-02T03:04:05.000000000Z"),
        ),
        (
            ms_utc,
            json!("2024-01-01T23:04:05-0400"),
            json!("2024-01-02T03:04:05.000000000Z"),
        ),
        // BLOBs: hex or the object form (its length and hash are checked).
        (paimon("BLOB"), json!("616263"), blob_json(b"abc")),
        (paimon("BLOB"), json!({"hex": "616263"}), blob_json(b"abc")),
        (paimon("BLOB"), blob_json(b"abc"), blob_json(b"abc")),
        (paimon("BLOB"), blob_json(b""), blob_json(b"")),
        // Nested.
        (
            paimon("ARRAY<INT>"),
            json!([1, null, "3"]),
            json!([1, null, 3]),
        ),
        (paimon("ARRAY<INT>"), json!([]), json!([])),
        (
            paimon("ARRAY<ARRAY<STRING>>"),
            json!([["a"], null, []]),
            json!([["a"], null, []]),
        ),
        (
            paimon("MAP<STRING, INT>"),
            json!({"b": 1, "a": null}),
            json!([["b", 1], ["a", null]]),
        ),
        (
            paimon("MAP<STRING, INT>"),
            json!([["b", 1], ["b", 2]]),
            json!([["b", 1], ["b", 2]]),
        ),
        (
            paimon("MAP<INT, ARRAY<STRING>>"),
            json!({"1": ["x"], "-2": []}),
            json!([[1, ["x"]], [-2, []]]),
        ),
        (
            paimon("MAP<DATE, DECIMAL(4, 1)>"),
            json!([["2024-01-01", 1.5]]),
            json!([["2024-01-01", "1.5"]]),
        ),
        (
            paimon("ROW<x INT, y STRING, z ARRAY<DOUBLE>>"),
            json!({"x": 5}),
            json!({"x": 5, "y": null, "z": null}),
        ),
        (
            paimon("ROW<x INT, y STRING>"),
            json!({"y": "s", "x": "1"}),
            json!({"x": 1, "y": "s"}),
        ),
        (
            paimon("ARRAY<ROW<k STRING, v INT>>"),
            json!([{"k": "a", "v": 1}, null, {}]),
            json!([{"k": "a", "v": 1}, null, {"k": null, "v": null}]),
        ),
        (
            paimon("VARIANT"),
            json!({"value": "0C01", "metadata": "010000"}),
            json!({"value": "0c01", "metadata": "010000"}),
        ),
        (
            paimon("VECTOR<FLOAT, 2>"),
            json!([1, "2.5"]),
            json!([1.0, 2.5]),
        ),
        (
            paimon("MULTISET<STRING>"),
            json!({"a": 2}),
            json!([["a", 2]]),
        ),
    ];
    for (t, input, want) in cases {
        let got = round(&t, &input).unwrap_or_else(|e| panic!("{input} as {t}: {e}"));
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&want).unwrap(),
            "{input} as {t}"
        );
        // NULL reads as NULL everywhere.
        assert_eq!(round(&t, &Value::Null).unwrap(), Value::Null, "{t}");
    }
}

fn blob_json(b: &[u8]) -> Value {
    canonical::value(&arrow_array::LargeBinaryArray::from(vec![b]), 0).unwrap()
}

#[test]
fn bad_values_are_errors_naming_column_row_and_value() {
    let ns = ArrowType::Timestamp(TimeUnit::Nanosecond, None);
    let ms = ArrowType::Timestamp(TimeUnit::Millisecond, None);
    // (type, value, path named in the message, words the message must hold)
    let cases: Vec<(ArrowType, Value, &str, &str)> = vec![
        (paimon("TINYINT"), json!(128), "c", "out of range"),
        (paimon("TINYINT"), json!("-129"), "c", "out of range"),
        (
            paimon("BIGINT"),
            json!("9223372036854775808"),
            "c",
            "out of range",
        ),
        (
            paimon("BIGINT"),
            json!(18446744073709551615_u64),
            "c",
            "out of range",
        ),
        (paimon("BIGINT"), json!(1e19), "c", "too large to be exact"),
        (paimon("INT"), json!("abc"), "c", "not an integer"),
        (paimon("INT"), json!("1.5"), "c", "not an integer"),
        (paimon("INT"), json!(1.5), "c", "not an integer"),
        (paimon("INT"), json!(""), "c", "not an integer"),
        (paimon("INT"), json!(true), "c", "expected an integer"),
        (paimon("FLOAT"), json!("1e39"), "c", "out of range"),
        (paimon("FLOAT"), json!(1e300), "c", "out of range"),
        (paimon("DOUBLE"), json!("1e400"), "c", "out of range"),
        (paimon("DOUBLE"), json!("one"), "c", "not a number"),
        (paimon("DOUBLE"), json!([1.0]), "c", "expected a number"),
        (
            paimon("DECIMAL(4, 2)"),
            json!("1.234"),
            "c",
            "more than 2 fraction digits",
        ),
        (
            paimon("DECIMAL(4, 2)"),
            json!(1.005),
            "c",
            "more than 2 fraction digits",
        ),
        (
            paimon("DECIMAL(4, 2)"),
            json!("100"),
            "c",
            "more than 4 digits",
        ),
        (
            paimon("DECIMAL(4, 2)"),
            json!("1e2"),
            "c",
            "more than 4 digits",
        ),
        (
            paimon("DECIMAL(4, 2)"),
            json!("1e99999"),
            "c",
            "more than 4 digits",
        ),
        (
            paimon("DECIMAL(4, 2)"),
            json!("1e-99999"),
            "c",
            "fraction digits",
        ),
        (
            paimon("DECIMAL(38, 2)"),
            json!(0.12345678901234566),
            "c",
            "write the decimal as a string",
        ),
        (paimon("DECIMAL(4, 2)"), json!("1,5"), "c", "not a decimal"),
        (paimon("DECIMAL(4, 2)"), json!("."), "c", "not a decimal"),
        (paimon("DECIMAL(4, 2)"), json!("1e"), "c", "not a decimal"),
        (paimon("DECIMAL(4, 2)"), json!("--1"), "c", "not a decimal"),
        (
            paimon("DECIMAL(4, 2)"),
            json!(false),
            "c",
            "expected a decimal",
        ),
        (paimon("STRING"), json!(5), "c", "expected a JSON string"),
        (
            paimon("STRING"),
            json!({"a": 1}),
            "c",
            "expected a JSON string",
        ),
        (paimon("BYTES"), json!("abc"), "c", "hex digit pairs"),
        (paimon("BYTES"), json!("zz"), "c", "hex digit pairs"),
        (paimon("BYTES"), json!([0]), "c", "expected a hex string"),
        (
            ArrowType::FixedSizeBinary(4),
            json!("0001"),
            "c",
            "exactly 4",
        ),
        (
            paimon("BLOB"),
            json!({"len": 100, "sha256": "00"}),
            "c",
            "needs \"hex\"",
        ),
        (
            paimon("BLOB"),
            json!({"hex": "00", "len": 2}),
            "c",
            "\"len\" 2",
        ),
        (
            paimon("BLOB"),
            json!({"hex": "00", "sha256": "00"}),
            "c",
            "\"sha256\"",
        ),
        (
            paimon("BLOB"),
            json!({"hex": "00", "size": 1}),
            "c",
            "unknown key \"size\"",
        ),
        (paimon("BLOB"), json!(7), "c", "hex string"),
        (
            paimon("BOOLEAN"),
            json!("yes"),
            "c",
            "expected true or false",
        ),
        (paimon("BOOLEAN"), json!(1), "c", "expected true or false"),
        (
            paimon("DATE"),
            json!("2023-02-29"),
            "c",
            "day 29 is not 1..28",
        ),
        (paimon("DATE"), json!("2024-13-01"), "c", "month 13"),
        (paimon("DATE"), json!("20240101"), "c", "not a date"),
        (paimon("DATE"), json!("24-01-01"), "c", "not a date"),
        (paimon("DATE"), json!(19723), "c", "expected a JSON string"),
        (
            paimon("TIME(3)"),
            json!("24:00:00"),
            "c",
            "not a time of day",
        ),
        (paimon("TIME(3)"), json!("12:34"), "c", "not a time"),
        (
            paimon("TIME(3)"),
            json!("12:34:56.1234"),
            "c",
            "more fraction digits",
        ),
        (
            paimon("TIME(3)"),
            json!("12:34:56.1234567890"),
            "c",
            "not a time",
        ),
        (
            ms.clone(),
            json!("2024-01-02T03:04:05.0001"),
            "c",
            "milliseconds",
        ),
        (
            ms.clone(),
            json!("2024-01-02T03:04:05Z"),
            "c",
            "no zone suffix",
        ),
        (ms.clone(), json!("2024-01-02"), "c", "not a timestamp"),
        (ms.clone(), json!("2024-02-30T00:00:00"), "c", "day 30"),
        (
            ArrowType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            json!("2024-01-02T03:04:05+25:00"),
            "c",
            "bad zone offset",
        ),
        (
            ns.clone(),
            json!("2300-01-01T00:00:00"),
            "c",
            "out of range",
        ),
        (ns, json!("1600-01-01T00:00:00"), "c", "out of range"),
        (
            paimon("ARRAY<INT>"),
            json!({"a": 1}),
            "c",
            "expected a JSON array",
        ),
        (
            paimon("ARRAY<INT>"),
            json!([1, "x"]),
            "c[]",
            "not an integer",
        ),
        (
            paimon("ARRAY<INT NOT NULL>"),
            json!([1, null]),
            "c[]",
            "NULL in a NOT NULL field",
        ),
        (paimon("VECTOR<INT, 3>"), json!([1, 2]), "c", "exactly 3"),
        (
            paimon("MAP<STRING, INT>"),
            json!("a=1"),
            "c",
            "[key, value] pairs",
        ),
        (
            paimon("MAP<STRING, INT>"),
            json!([["a"]]),
            "c",
            "[key, value] pair",
        ),
        (
            paimon("MAP<INT, INT>"),
            json!([[null, 1]]),
            "c{key}",
            "NULL in a NOT NULL field",
        ),
        (
            paimon("MAP<INT, INT>"),
            json!({"x": 1}),
            "c{key}",
            "not an integer",
        ),
        (
            paimon("MAP<STRING, INT>"),
            json!({"a": "b"}),
            "c{value}",
            "not an integer",
        ),
        (
            paimon("ROW<x INT>"),
            json!([1]),
            "c",
            "expected a JSON object",
        ),
        (
            paimon("ROW<x INT>"),
            json!({"y": 1}),
            "c",
            "no field 'y' (fields: x)",
        ),
        (
            paimon("ROW<x ROW<y DATE>>"),
            json!({"x": {"y": "2024-02-30"}}),
            "c.x.y",
            "day 30",
        ),
        (
            paimon("VARIANT"),
            json!({"metadata": "01"}),
            "c.value",
            "NULL in a NOT NULL field",
        ),
        (
            paimon("VARIANT"),
            json!({"value": "0g", "metadata": "01"}),
            "c.value",
            "hex",
        ),
    ];
    for (t, input, path, words) in cases {
        let e = error(&t, &input);
        let shown = show(&input);
        assert!(
            e.starts_with(&format!("column '{path}', row 2: "))
                && e.contains(words)
                // Nested values show the part that failed, not the whole value.
                && (e.contains(&shown) || e.contains("NULL") || t.is_nested()),
            "{input} as {t}: {e}"
        );
    }
}

#[test]
fn nulls_respect_nullability_at_every_level() {
    let field = Field::new("k", ArrowType::Int32, false);
    let e = array_from_values(&[&json!(1), &Value::Null], &field)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "column 'k', row 1: NULL in a NOT NULL field of type INT");

    // Non-nullable children under a NULL parent are fine (masked by the parent).
    for t in [
        paimon("ROW<a INT NOT NULL, b ROW<c STRING NOT NULL>>"),
        paimon("VARIANT"),
        paimon("VECTOR<INT NOT NULL, 2>"),
        paimon("ARRAY<ROW<a INT NOT NULL>>"),
    ] {
        let a = array_from_values(&[&Value::Null], &Field::new("c", t.clone(), true)).unwrap();
        assert!(a.is_null(0), "{t}");
    }
    let a = array_from_values(
        &[&json!([null, {"a": 1}])],
        &Field::new("c", paimon("ARRAY<ROW<a INT NOT NULL>>"), true),
    )
    .unwrap();
    assert_eq!(
        canonical::value(a.as_ref(), 0).unwrap(),
        json!([null, {"a": 1}])
    );
}

#[test]
fn unsupported_types_are_unsupported_and_name_the_column() {
    let field = Field::new("d", ArrowType::Duration(TimeUnit::Second), true);
    let e = array_from_values(&[&json!(1)], &field).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("'d'"), "{e}");
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn rows_by_column_name() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", ArrowType::Int64, false),
        Field::new("name", ArrowType::Utf8, true),
        Field::new("tags", paimon("ARRAY<STRING>"), true),
    ]));
    let rows = vec![
        obj(json!({"name": "a", "k": 1, "tags": ["x"]})),
        obj(json!({"k": "2"})),
        obj(json!({"k": 3, "name": null, "tags": null})),
    ];
    let batch = batch_from_rows(&rows, &schema).unwrap();
    assert_eq!(batch.schema(), schema);
    assert_eq!(
        serde_json::to_string(&canonical::rows(&batch).unwrap()).unwrap(),
        r#"[{"k":1,"name":"a","tags":["x"]},{"k":2,"name":null,"tags":null},{"k":3,"name":null,"tags":null}]"#
    );

    // An unknown key names itself and the row.
    let bad = vec![obj(json!({"k": 1})), obj(json!({"k": 2, "nmae": "x"}))];
    let e = batch_from_rows(&bad, &schema).unwrap_err().to_string();
    assert_eq!(
        e,
        "column 'nmae', row 1: there is no such column (columns: k, name, tags)"
    );
    // A missing non-nullable column is a NULL in it.
    let e = batch_from_rows(&[obj(json!({"name": "x"}))], &schema)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "column 'k', row 0: NULL in a NOT NULL field of type BIGINT"
    );
    // Rows counted from `first_row`.
    let e = batch_from_rows_at(
        &[obj(json!({"k": 1})), obj(json!({"k": "x"}))],
        &schema,
        100,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "column 'k', row 101: cannot read \"x\" as BIGINT: not an integer"
    );

    // No rows, and no columns.
    assert_eq!(batch_from_rows(&[], &schema).unwrap().num_rows(), 0);
    let none = Arc::new(Schema::empty());
    assert_eq!(
        batch_from_rows(&[Map::new(), Map::new()], &none)
            .unwrap()
            .num_rows(),
        2
    );
}

#[test]
fn long_values_are_cut_in_messages() {
    let long = "x".repeat(500);
    let e = error(&paimon("INT"), &json!(long));
    assert!(e.contains('…') && e.len() < 200, "{e}");
}

// --- The corpus: every expected row set parses back into Arrow and renders identically. ---

fn corpus_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance");
    let dirs: Vec<PathBuf> = ["tables", "oracle-tables"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    assert!(!dirs.is_empty(), "no corpus under {}", root.display());
    dirs
}

fn expected_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".expected.json"))
        .collect();
    files.sort();
    files
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Arrow schema of a read: the fields of its schema, projected by name (`_ROW_ID` is a
/// BIGINT).
fn read_schema(fields: &Value, projection: &Value) -> SchemaRef {
    let fields: Vec<DataField> = fields
        .as_array()
        .unwrap()
        .iter()
        .map(|f| DataField::from_json(f).unwrap())
        .collect();
    let arrow: Vec<Field> = match projection.as_array() {
        None => fields
            .iter()
            .map(|f| paimon_to_arrow_field(f).unwrap())
            .collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                let n = n.as_str().unwrap();
                match fields.iter().find(|f| f.name == n) {
                    Some(f) => paimon_to_arrow_field(f).unwrap(),
                    None if n == "_ROW_ID" => Field::new(n, ArrowType::Int64, true),
                    None => panic!("projected column {n} is not in the schema"),
                }
            })
            .collect(),
    };
    Arc::new(Schema::new(arrow))
}

/// True if `v` holds a BLOB rendering without its bytes (a blob over 64 bytes).
fn has_blob_without_bytes(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            (m.contains_key("sha256") && m.contains_key("len") && !m.contains_key("hex"))
                || m.values().any(has_blob_without_bytes)
        }
        Value::Array(a) => a.iter().any(has_blob_without_bytes),
        _ => false,
    }
}

#[test]
fn corpus_rows_round_trip() {
    let (mut reads, mut rows_checked, mut without_bytes) = (0, 0, 0);
    let mut types = std::collections::BTreeSet::new();
    for dir in corpus_dirs() {
        for file in expected_files(&dir) {
            let exp = read_json(&file);
            let table_dir = dir.join(exp["path"].as_str().unwrap());
            let latest = exp["schema_id"].as_i64().unwrap();
            let mut all = vec![("latest", latest, Value::Null, &exp["rows"])];
            for r in exp["additional_reads"].as_array().unwrap() {
                all.push((
                    r["label"].as_str().unwrap(),
                    r["schema_id"].as_i64().unwrap_or(latest),
                    r["projection"].clone(),
                    &r["rows"],
                ));
            }
            for (label, schema_id, projection, rows) in all {
                let what = format!("{} {label}", file.display());
                let fields = if schema_id == latest {
                    exp["fields"].clone()
                } else {
                    read_json(&table_dir.join(format!("schema/schema-{schema_id}")))["fields"]
                        .clone()
                };
                let schema = read_schema(&fields, &projection);
                for f in schema.fields() {
                    types.insert(type_label(f.data_type()));
                }
                let (lossy, rows): (Vec<&Value>, Vec<&Value>) = rows
                    .as_array()
                    .unwrap()
                    .iter()
                    .partition(|r| has_blob_without_bytes(r));
                // Rows with a blob over 64 bytes cannot come back: the JSON has no bytes.
                for (i, r) in lossy.iter().enumerate() {
                    let e = batch_from_rows_at(&[obj((*r).clone())], &schema, i)
                        .unwrap_err()
                        .to_string();
                    assert!(e.contains("needs \"hex\""), "{what}: {e}");
                    without_bytes += 1;
                }
                let maps: Vec<Map<String, Value>> =
                    rows.iter().map(|r| obj((*r).clone())).collect();
                let batch =
                    batch_from_rows(&maps, &schema).unwrap_or_else(|e| panic!("{what}: {e}"));
                let back = canonical::rows(&batch).unwrap();
                assert_eq!(back.len(), rows.len(), "{what}");
                for (got, want) in back.iter().zip(&rows) {
                    assert_eq!(
                        serde_json::to_string(got).unwrap(),
                        serde_json::to_string(want).unwrap(),
                        "{what}"
                    );
                }
                // Column by column gives the same arrays.
                for (i, f) in schema.fields().iter().enumerate() {
                    let values: Vec<&Value> = rows.iter().map(|r| &r[f.name().as_str()]).collect();
                    let column = array_from_values(&values, f).unwrap();
                    assert_eq!(column.to_data(), batch.column(i).to_data(), "{what} {}", f);
                }
                reads += 1;
                rows_checked += rows.len();
            }
        }
    }
    // Every type the corpus has must have been through the round trip.
    for t in [
        "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING", "BYTES", "BLOB",
        "BOOLEAN", "DATE", "ARRAY", "MAP", "ROW",
    ] {
        assert!(types.contains(t), "no corpus column of type {t}: {types:?}");
    }
    assert!(types.iter().any(|t| t.starts_with("DECIMAL")), "{types:?}");
    assert!(
        types.iter().any(|t| t.starts_with("TIMESTAMP_LTZ")),
        "{types:?}"
    );
    assert!(types.iter().any(|t| t.starts_with("TIME (")), "{types:?}");
    assert!(reads >= 150, "{reads} reads");
    assert!(rows_checked >= 1000, "{rows_checked} rows");
    assert!(without_bytes > 0, "the corpus has blobs over 64 bytes");
}
