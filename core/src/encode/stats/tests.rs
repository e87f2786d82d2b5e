use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder};
use arrow_array::{
    ArrayRef, BinaryArray, Float32Array, Float64Array, Int8Array, Int32Array, Int64Array,
    LargeStringArray, StringArray, TimestampMicrosecondArray, TimestampNanosecondArray,
};

use super::*;

fn t(kind: TypeKind) -> DataType {
    DataType::nullable(kind)
}

fn string() -> DataType {
    t(TypeKind::VarChar {
        length: VARCHAR_MAX_LENGTH,
    })
}

fn f(id: i32, name: &str, ty: DataType) -> DataField {
    DataField::new(id, name, ty)
}

fn opts(pairs: &[(&str, &str)]) -> CoreOptions {
    CoreOptions::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn s(v: &str) -> Datum {
    Datum::String(v.to_string())
}

fn col(stats: &SimpleColStats) -> (Datum, Datum, Option<i64>) {
    (stats.min.clone(), stats.max.clone(), stats.null_count)
}

#[test]
fn parse_modes() {
    assert_eq!(StatsMode::parse("none").unwrap(), StatsMode::None);
    assert_eq!(StatsMode::parse("Counts").unwrap(), StatsMode::Counts);
    assert_eq!(StatsMode::parse("FULL").unwrap(), StatsMode::Full);
    assert_eq!(
        StatsMode::parse("truncate(16)").unwrap(),
        StatsMode::Truncate(16)
    );
    for bad in [
        "truncate(0)",
        "truncate( 16)",
        "truncate()",
        "trunc(3)",
        "truncate(99999999999)",
    ] {
        assert!(StatsMode::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn string_truncation() {
    assert_eq!(truncate_min_string("abcdef", 3), "abc");
    assert_eq!(truncate_min_string("ab", 3), "ab");
    assert_eq!(truncate_max_string("abcdef", 3).unwrap(), "abd");
    assert_eq!(truncate_max_string("abc", 3).unwrap(), "abc");
    // Code points, not bytes.
    assert_eq!(truncate_min_string("äöüß", 2), "äö");
    assert_eq!(truncate_max_string("äöüß", 2).unwrap(), "ä÷");
    // The last code point cannot be incremented: the one before is.
    assert_eq!(truncate_max_string("a\u{10FFFF}b", 2).unwrap(), "b");
    assert_eq!(truncate_max_string("\u{10FFFF}\u{10FFFF}x", 2), None);
    // U+D7FF + 1 is a lone surrogate: Java's encoder writes '?'.
    assert_eq!(truncate_max_string("a\u{D7FF}b", 2).unwrap(), "a?");
}

#[test]
fn binary_truncation() {
    assert_eq!(truncate_min_binary(&[1, 2, 3], 2), &[1, 2]);
    assert_eq!(truncate_max_binary(&[1, 2, 3], 2).unwrap(), vec![1, 3]);
    assert_eq!(truncate_max_binary(&[1, 0xFF, 3], 2).unwrap(), vec![2]);
    assert_eq!(truncate_max_binary(&[1, 2], 2).unwrap(), vec![1, 2]);
    assert_eq!(truncate_max_binary(&[0xFF, 0xFF, 0], 2), None);
}

fn list_column(rows: &[Option<Vec<i32>>]) -> ArrayRef {
    let mut b = ListBuilder::new(Int32Builder::new());
    for r in rows {
        match r {
            Some(v) => {
                for x in v {
                    b.values().append_value(*x);
                }
                b.append(true);
            }
            None => b.append(false),
        }
    }
    Arc::new(b.finish())
}

fn sample_fields() -> Vec<DataField> {
    vec![
        f(0, "id", t(TypeKind::Int)),
        f(1, "name", string()),
        f(2, "score", t(TypeKind::Double)),
        f(3, "tags", t(TypeKind::Array(Box::new(t(TypeKind::Int))))),
    ]
}

fn sample_batches() -> Vec<Vec<ArrayRef>> {
    vec![
        vec![
            Arc::new(Int32Array::from(vec![Some(5), None, Some(-3)])),
            Arc::new(StringArray::from(vec![
                Some("a fairly long string value"),
                Some("b"),
                None,
            ])),
            Arc::new(Float64Array::from(vec![Some(0.0), Some(-0.0), None])),
            list_column(&[Some(vec![1]), None, Some(vec![])]),
        ],
        vec![
            Arc::new(Int32Array::from(vec![Some(9)])),
            Arc::new(StringArray::from(vec![Some("Z")])),
            Arc::new(Float64Array::from(vec![Some(f64::NAN)])),
            list_column(&[None]),
        ],
    ]
}

fn collect(fields: &[DataField], options: &CoreOptions, format: StatsFormat) -> StatsCollector {
    let mut c = StatsCollector::for_append(fields, options, format).unwrap();
    for batch in sample_batches() {
        c.update(&batch).unwrap();
    }
    c
}

#[test]
fn parquet_default_truncate16_dense() {
    let fields = sample_fields();
    let c = collect(&fields, &CoreOptions::default(), StatsFormat::Parquet);
    assert_eq!(c.row_count(), 4);
    let cols = c.column_stats().unwrap();
    assert_eq!(col(&cols[0]), (Datum::Int(-3), Datum::Int(9), Some(1)));
    assert_eq!(
        col(&cols[1]),
        (s("Z"), s("b"), Some(1)),
        "min 'Z' < 'a...' bytewise"
    );
    // -0.0 < 0.0 and NaN above everything (Java Float.compare).
    let (min, max, nulls) = col(&cols[2]);
    assert!(matches!(min, Datum::Double(v) if v == 0.0 && v.is_sign_negative()));
    assert!(matches!(max, Datum::Double(v) if v.is_nan()));
    assert_eq!(nulls, Some(1));
    // Nested columns have no Parquet column chunk statistics.
    assert!(cols[3].is_none());

    let (stats, value_cols) = c.finish().unwrap();
    assert_eq!(
        value_cols,
        Some(vec!["id".to_string(), "name".into(), "score".into()])
    );
    assert_eq!(stats.null_counts, vec![Some(1), Some(1), Some(1)]);
    let types: Vec<DataType> = fields[..3].iter().map(|f| f.data_type.clone()).collect();
    let min = stats.min_values.fields(&types).unwrap();
    assert_eq!(min[0], Datum::Int(-3));
}

#[test]
fn truncate_applies_to_min_and_max() {
    let fields = vec![f(0, "name", string())];
    let mut c = StatsCollector::for_append(
        &fields,
        &opts(&[("metadata.stats-mode", "truncate(4)")]),
        StatsFormat::Parquet,
    )
    .unwrap();
    c.update(&[Arc::new(StringArray::from(vec!["abcdefg", "abcdzzz", "ab"])) as ArrayRef])
        .unwrap();
    let cols = c.column_stats().unwrap();
    assert_eq!(col(&cols[0]), (s("ab"), s("abce"), Some(0)));
}

#[test]
fn avro_keeps_nested_null_counts() {
    let fields = sample_fields();
    let c = collect(
        &fields,
        &opts(&[("metadata.stats-mode", "full")]),
        StatsFormat::Avro,
    );
    let cols = c.column_stats().unwrap();
    assert_eq!(col(&cols[1]), (s("Z"), s("b"), Some(1)));
    assert_eq!(col(&cols[3]), (Datum::Null, Datum::Null, Some(2)));
    let (stats, value_cols) = c.finish().unwrap();
    assert_eq!(value_cols, None);
    assert_eq!(stats.null_counts.len(), 4);
}

#[test]
fn modes_per_field_counts_none_and_keep_first() {
    let fields = sample_fields();
    let options = opts(&[
        ("fields.id.stats-mode", "counts"),
        ("fields.score.stats-mode", "none"),
    ]);
    let c = collect(&fields, &options, StatsFormat::Avro);
    let cols = c.column_stats().unwrap();
    assert_eq!(col(&cols[0]), (Datum::Null, Datum::Null, Some(1)));
    assert!(cols[2].is_none());
    let (_, value_cols) = c.finish().unwrap();
    assert_eq!(
        value_cols,
        Some(vec!["id".to_string(), "name".into(), "tags".into()])
    );

    // Non-dense store: every column, none ones as nulls.
    let sparse = opts(&[
        ("fields.score.stats-mode", "none"),
        ("metadata.stats-dense-store", "false"),
    ]);
    let c = collect(&fields, &sparse, StatsFormat::Avro);
    let (stats, value_cols) = c.finish().unwrap();
    assert_eq!(value_cols, None);
    assert_eq!(stats.null_counts, vec![Some(1), Some(1), None, Some(2)]);

    // Only the first two columns keep stats.
    let keep = opts(&[("metadata.stats-keep-first-n-columns", "2")]);
    let c = collect(&fields, &keep, StatsFormat::Avro);
    let (_, value_cols) = c.finish().unwrap();
    assert_eq!(value_cols, Some(vec!["id".to_string(), "name".into()]));

    // All none: no stats at all.
    let c = collect(
        &fields,
        &opts(&[("metadata.stats-mode", "none")]),
        StatsFormat::Parquet,
    );
    let (stats, value_cols) = c.finish().unwrap();
    assert_eq!(value_cols, Some(vec![]));
    assert_eq!(stats, SimpleStats::empty());
}

#[test]
fn timestamps_by_format() {
    let fields = vec![
        f(0, "t6", t(TypeKind::Timestamp { precision: 6 })),
        f(1, "t9", t(TypeKind::Timestamp { precision: 9 })),
    ];
    let batch: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(-1),
            Some(5),
            None,
        ])),
        Arc::new(TimestampNanosecondArray::from(vec![
            Some(1_000_001),
            None,
            Some(-7),
        ])),
    ];
    let mut parquet =
        StatsCollector::for_append(&fields, &CoreOptions::default(), StatsFormat::Parquet).unwrap();
    parquet.update(&batch).unwrap();
    let cols = parquet.column_stats().unwrap();
    assert_eq!(
        col(&cols[0]),
        (
            Datum::Timestamp {
                millis: -1,
                nanos_of_milli: 999_000
            },
            Datum::Timestamp {
                millis: 0,
                nanos_of_milli: 5_000
            },
            Some(1)
        )
    );
    // INT96 in Parquet: no min/max.
    assert_eq!(col(&cols[1]), (Datum::Null, Datum::Null, Some(1)));

    let mut avro =
        StatsCollector::for_append(&fields, &CoreOptions::default(), StatsFormat::Avro).unwrap();
    avro.update(&batch).unwrap();
    let cols = avro.column_stats().unwrap();
    assert_eq!(
        col(&cols[1]),
        (
            Datum::Timestamp {
                millis: -1,
                nanos_of_milli: 999_993
            },
            Datum::Timestamp {
                millis: 1,
                nanos_of_milli: 1
            },
            Some(1)
        )
    );
}

#[test]
fn orc_strings_char_padding_and_long_bounds() {
    let fields = vec![
        f(0, "c", t(TypeKind::Char { length: 3 })),
        f(1, "v", t(TypeKind::VarChar { length: 2 })),
        f(2, "s", string()),
        f(3, "b", t(TypeKind::VarBinary { length: 10 })),
    ];
    let long_max = "z".repeat(2000);
    let batch: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["a", "bcde", ""])),
        Arc::new(StringArray::from(vec!["xyz", "ab", "b"])),
        Arc::new(StringArray::from(vec!["m", long_max.as_str(), "a"])),
        Arc::new(BinaryArray::from(vec![&b"x"[..], b"y", b"z"])),
    ];
    let mut c = StatsCollector::for_append(
        &fields,
        &opts(&[("metadata.stats-mode", "full")]),
        StatsFormat::Orc,
    )
    .unwrap();
    c.update(&batch).unwrap();
    let cols = c.column_stats().unwrap();
    // CHAR(3): "a  ", "bcd", "   ".
    assert_eq!(col(&cols[0]), (s("   "), s("bcd"), Some(0)));
    // VARCHAR(2): "xy", "ab", "b".
    assert_eq!(col(&cols[1]), (s("ab"), s("xy"), Some(0)));
    // The max is only known as an upper bound.
    assert_eq!(col(&cols[2]), (s("a"), Datum::Null, Some(0)));
    assert_eq!(col(&cols[3]), (Datum::Null, Datum::Null, Some(0)));
}

#[test]
fn orc_doubles_follow_row_groups() {
    let fields = vec![f(0, "x", t(TypeKind::Float))];
    let options = opts(&[("orc.row.index.stride", "2")]);
    let mut c = StatsCollector::for_append(&fields, &options, StatsFormat::Orc).unwrap();
    // Groups: [NaN, 1], [2, NaN], [-0.0, 0.0]: the first NaN sticks in group 1 and merging
    // with `<`/`>` never replaces it.
    c.update(&[Arc::new(Float32Array::from(vec![f32::NAN, 1.0, 2.0])) as ArrayRef])
        .unwrap();
    c.update(&[Arc::new(Float32Array::from(vec![f32::NAN, -0.0, 0.0])) as ArrayRef])
        .unwrap();
    let cols = c.column_stats().unwrap();
    assert!(matches!(cols[0].min, Datum::Float(v) if v.is_nan()));
    assert!(matches!(cols[0].max, Datum::Float(v) if v.is_nan()));

    let mut c = StatsCollector::for_append(&fields, &options, StatsFormat::Orc).unwrap();
    c.update(&[Arc::new(Float32Array::from(vec![1.0, f32::NAN, 0.0, -0.0])) as ArrayRef])
        .unwrap();
    let cols = c.column_stats().unwrap();
    assert!(matches!(cols[0].min, Datum::Float(v) if v == 0.0 && v.is_sign_positive()));
    assert_eq!(cols[0].max, Datum::Float(1.0));
}

fn kv_fields() -> (Vec<DataField>, Vec<DataField>) {
    let keys = vec![f(0, "k", string())];
    let values = vec![f(0, "k", string()), f(1, "v", t(TypeKind::BigInt))];
    (keys, values)
}

fn kv_batch(with_keys: bool) -> Vec<ArrayRef> {
    let long_key = format!("{}x", "k".repeat(130));
    let keys: ArrayRef = Arc::new(StringArray::from(vec![long_key.clone(), "a".into()]));
    let mut out = Vec::new();
    if with_keys {
        out.push(keys.clone());
    }
    out.push(Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef);
    out.push(Arc::new(Int8Array::from(vec![0, 3])) as ArrayRef);
    out.push(keys);
    out.push(Arc::new(Int64Array::from(vec![Some(7), None])) as ArrayRef);
    out
}

#[test]
fn key_value_files() {
    let (keys, values) = kv_fields();
    let mut c =
        StatsCollector::for_key_value(&keys, &values, &CoreOptions::default(), 0, false).unwrap();
    let names: Vec<&str> = c.write_fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["_KEY_k", "_SEQUENCE_NUMBER", "_VALUE_KIND", "k", "v"]
    );
    c.update(&kv_batch(true)).unwrap();
    // Key columns are system columns: truncate(128).
    let key_stats = c.finish_key_stats().unwrap();
    let key_types = [string()];
    let kmax = key_stats.max_values.fields(&key_types).unwrap();
    assert_eq!(kmax, vec![s(&format!("{}l", "k".repeat(127)))]);
    assert_eq!(key_stats.null_counts, vec![Some(0)]);
    // Value columns: the table mode, truncate(16).
    let (value_stats, cols) = c.finish().unwrap();
    assert_eq!(cols, None);
    let vtypes = [string(), t(TypeKind::BigInt)];
    let vmax = value_stats.max_values.fields(&vtypes).unwrap();
    assert_eq!(
        vmax,
        vec![s(&format!("{}l", "k".repeat(15))), Datum::BigInt(7)]
    );
    assert_eq!(value_stats.null_counts, vec![Some(0), Some(1)]);

    // Avro primary-key files use the table mode for the key columns too.
    let avro = opts(&[("file.format", "avro")]);
    let mut c = StatsCollector::for_key_value(&keys, &values, &avro, 0, false).unwrap();
    assert_eq!(c.format(), StatsFormat::Avro);
    c.update(&kv_batch(true)).unwrap();
    let kmax = c
        .finish_key_stats()
        .unwrap()
        .max_values
        .fields(&key_types)
        .unwrap();
    assert_eq!(kmax, vec![s(&format!("{}l", "k".repeat(15)))]);

    // Per-level format and mode.
    let levels = opts(&[
        ("file.format.per.level", "0:avro,1:orc"),
        ("metadata.stats-mode.per.level", "1:none"),
    ]);
    let c = StatsCollector::for_key_value(&keys, &values, &levels, 1, false).unwrap();
    assert_eq!(c.format(), StatsFormat::Orc);
    assert_eq!(
        c.modes(),
        vec![
            StatsMode::Truncate(128),
            StatsMode::None,
            StatsMode::None,
            StatsMode::None,
            StatsMode::None
        ]
    );

    // Thin mode: no _KEY_ columns; key stats from the value column (truncate(128)).
    let thin = opts(&[("data-file.thin-mode", "true")]);
    let mut c = StatsCollector::for_key_value(&keys, &values, &thin, 0, false).unwrap();
    assert_eq!(c.write_fields().len(), 4);
    c.update(&kv_batch(false)).unwrap();
    let kmax = c
        .finish_key_stats()
        .unwrap()
        .max_values
        .fields(&key_types)
        .unwrap();
    assert_eq!(kmax, vec![s(&format!("{}l", "k".repeat(127)))]);

    let append = StatsCollector::new(&values, &CoreOptions::default()).unwrap();
    assert!(append.finish_key_stats().is_err());
}

#[test]
fn bad_input() {
    let fields = vec![f(0, "id", t(TypeKind::Int))];
    let mut c = StatsCollector::new(&fields, &CoreOptions::default()).unwrap();
    assert!(c.update(&[]).is_err());
    let err = c
        .update(&[Arc::new(StringArray::from(vec!["x"])) as ArrayRef])
        .unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    // Castable physical types are accepted.
    let mut c = StatsCollector::new(&[f(0, "s", string())], &CoreOptions::default()).unwrap();
    c.update(&[Arc::new(LargeStringArray::from(vec!["q"])) as ArrayRef])
        .unwrap();
    assert_eq!(
        col(&c.column_stats().unwrap()[0]),
        (s("q"), s("q"), Some(0))
    );
    assert!(StatsCollector::new(&fields, &opts(&[("file.format", "csv")])).is_err());
    assert!(StatsCollector::new(&fields, &opts(&[("metadata.stats-mode", "some")])).is_err());
}
