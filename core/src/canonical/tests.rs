use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int64Array,
    LargeBinaryArray, RecordBatch, StructArray, Time32MillisecondArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow_schema::{Field, Schema};
use serde_json::json;

use super::*;

fn one(array: ArrayRef) -> Vec<Value> {
    (0..array.len())
        .map(|i| value(array.as_ref(), i).unwrap())
        .collect()
}

#[test]
fn scalars_follow_the_corpus_encoding() {
    // BIGINT is exact beyond 2^53.
    assert_eq!(
        one(Arc::new(Int64Array::from(vec![
            Some(i64::MIN),
            None,
            Some(9_007_199_254_740_993)
        ]))),
        vec![
            json!(-9_223_372_036_854_775_808_i64),
            Value::Null,
            json!(9_007_199_254_740_993_i64)
        ]
    );
    assert_eq!(
        serde_json::to_string(&one(Arc::new(Int64Array::from(vec![i64::MAX])))).unwrap(),
        "[9223372036854775807]"
    );
    assert_eq!(
        one(Arc::new(Float64Array::from(vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            1.5
        ]))),
        vec![
            json!("NaN"),
            json!("Infinity"),
            json!("-Infinity"),
            json!(-0.0),
            json!(1.5)
        ]
    );
    // FLOAT: the exact double of the stored float, not its shortest decimal.
    assert_eq!(
        one(Arc::new(Float32Array::from(vec![0.1_f32]))),
        vec![json!(0.10000000149011612)]
    );
    assert_eq!(
        one(Arc::new(BooleanArray::from(vec![true, false]))),
        vec![json!(true), json!(false)]
    );
    let dec = Decimal128Array::from(vec![-10, 5, 0, 12345])
        .with_precision_and_scale(10, 2)
        .unwrap();
    assert_eq!(
        one(Arc::new(dec)),
        vec![
            json!("-0.10"),
            json!("0.05"),
            json!("0.00"),
            json!("123.45")
        ]
    );
    let dec0 = Decimal128Array::from(vec![i128::from(i64::MIN) * 100])
        .with_precision_and_scale(38, 0)
        .unwrap();
    assert_eq!(one(Arc::new(dec0)), vec![json!("-922337203685477580800")]);
}

#[test]
fn dates_times_and_timestamps() {
    assert_eq!(
        one(Arc::new(Date32Array::from(vec![
            0, -1, 19_723, -719_528, -719_529, 2_932_897
        ]))),
        vec![
            json!("1970-01-01"),
            json!("1969-12-31"),
            json!("2024-01-01"),
            json!("0000-01-01"),
            json!("-0001-12-31"),
            json!("+10000-01-01"),
        ]
    );
    assert_eq!(
        one(Arc::new(Time32MillisecondArray::from(vec![
            0, 45_296_789, 86_399_999
        ]))),
        vec![
            json!("00:00:00.000"),
            json!("12:34:56.789"),
            json!("23:59:59.999")
        ]
    );
    assert_eq!(
        one(Arc::new(TimestampNanosecondArray::from(vec![
            -1,
            1_704_067_200_123_456_789
        ]))),
        vec![
            json!("1969-12-31T23:59:59.999999999"),
            json!("2024-01-01T00:00:00.123456789")
        ]
    );
    let ltz = TimestampMicrosecondArray::from(vec![1_704_067_200_000_001]).with_timezone("UTC");
    assert_eq!(
        one(Arc::new(ltz)),
        vec![json!("2024-01-01T00:00:00.000001000Z")]
    );
}

#[test]
fn blobs_hash_and_show_short_bytes() {
    let long = [7u8; 65];
    let blobs = LargeBinaryArray::from(vec![Some(&b"abc"[..]), Some(&long[..]), None]);
    let got = one(Arc::new(blobs));
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    assert_eq!(
        got[0],
        json!({"len": 3, "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "hex": "616263"})
    );
    assert_eq!(got[1]["len"], json!(65));
    assert!(got[1].get("hex").is_none());
    assert_eq!(got[2], Value::Null);
}

#[test]
fn nested_values_and_rows() {
    let mut list = ListBuilder::new(Int32Builder::new());
    list.values().append_value(1);
    list.values().append_null();
    list.append(true);
    list.append(false);
    let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    map.keys().append_value("b");
    map.values().append_value(2);
    map.keys().append_value("a");
    map.values().append_null();
    map.append(true).unwrap();
    map.append(true).unwrap();
    let inner = StructArray::from(vec![(
        Arc::new(Field::new("x", ArrowType::Int64, true)),
        Arc::new(Int64Array::from(vec![Some(5), None])) as ArrayRef,
    )]);
    let list: ArrayRef = Arc::new(list.finish());
    let map: ArrayRef = Arc::new(map.finish());
    let schema = Schema::new(vec![
        Field::new("l", list.data_type().clone(), true),
        Field::new("m", map.data_type().clone(), true),
        Field::new("r", inner.data_type().clone(), true),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![list, map, Arc::new(inner)]).unwrap();
    let got = rows(&batch).unwrap();
    assert_eq!(
        serde_json::to_string(&got).unwrap(),
        r#"[{"l":[1,null],"m":[["b",2],["a",null]],"r":{"x":5}},{"l":null,"m":[],"r":{"x":null}}]"#
    );
    assert_eq!(batches_rows(&[batch.clone(), batch]).unwrap().len(), 4);
}

#[test]
fn types_without_a_rendering_are_unsupported_and_name_the_column() {
    let col: ArrayRef = Arc::new(arrow_array::DurationSecondArray::from(vec![1]));
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new(
            "d",
            col.data_type().clone(),
            false,
        )])),
        vec![col],
    )
    .unwrap();
    let err = rows(&batch).unwrap_err().to_string();
    assert!(err.contains("Duration") && err.contains("'d'"), "{err}");
}
