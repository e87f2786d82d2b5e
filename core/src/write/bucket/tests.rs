use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, Decimal128Array, Int32Array, Int64Array, StringArray,
    TimestampMillisecondArray,
};

use super::*;
use crate::spec::types::DataField;
use crate::util::unhex;

fn t(kind: TypeKind) -> DataType {
    DataType::nullable(kind)
}

fn row(hex: &str) -> BinaryRow {
    let bytes = unhex(&hex.replace(' ', "")).unwrap();
    BinaryRow::from_serialized(&bytes, "test").unwrap()
}

/// Hashes and buckets of the `spec/table-layout.md` §6 vectors, as computed by pypaimon 2.1.0's
/// port of `MurmurHashUtils.hashBytesByWords` / `DefaultBucketFunction`.
#[test]
fn murmur_vectors() {
    let cases = [
        (
            "00000001 0000000000000000 0100000000000000",
            1_465_514_398,
            [0, 0, 1, 5, 14],
        ),
        (
            "00000002 0000000000000000 0800000018000000 0c00000000000000 3230323430353134",
            231_719_776,
            [0, 0, 1, 1, 0],
        ),
        (
            "00000002 0002000000000000 6100000000000081 0000000000000000",
            -578_290_962,
            [0, 0, 0, 4, 2],
        ),
        ("00000000 0000000000000000", -1_670_924_195, [0, 1, 2, 3, 3]),
    ];
    for (hex, hash, buckets) in cases {
        let r = row(hex);
        assert_eq!(r.hash_code(), hash, "{hex}");
        for (n, b) in [1, 2, 3, 7, 16].into_iter().zip(buckets) {
            assert_eq!(bucket_of(hash, n), b, "{hex} % {n}");
        }
    }
    assert_eq!(BinaryRow::empty().hash_code(), -1_670_924_195);
}

#[test]
fn bucket_of_is_abs_of_remainder() {
    assert_eq!(bucket_of(-7, 3), 1);
    assert_eq!(bucket_of(i32::MIN, 7), 2);
    assert_eq!(bucket_of(i32::MAX, 7), 1);
    assert_eq!(bucket_of(5, 0), 0);
}

#[test]
fn column_buckets_equal_row_buckets() {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![Some("20240514"), Some("a"), None])),
        Arc::new(Int32Array::from(vec![Some(12), None, Some(3)])),
    ];
    let types = vec![t(TypeKind::VarChar { length: 10 }), t(TypeKind::Int)];
    let got = buckets(&columns, &types, 5).unwrap();
    let rows = crate::encode::row::binary_rows(&columns, &types).unwrap();
    let want: Vec<i32> = rows.iter().map(|r| bucket_of(r.hash_code(), 5)).collect();
    assert_eq!(got, want);
    assert_eq!(got[0], bucket_of(231_719_776, 5));
    assert!(buckets(&columns, &types, 0).is_err());
}

#[test]
fn mod_function() {
    let f = BucketFunction::try_new(BucketFunctionType::Mod, &[t(TypeKind::Int)]).unwrap();
    let col: ArrayRef = Arc::new(Int32Array::from(vec![
        Some(-7),
        Some(7),
        None,
        Some(i32::MIN),
    ]));
    assert_eq!(
        f.buckets(std::slice::from_ref(&col), 3).unwrap(),
        vec![2, 1, 0, 1]
    );
    let rows = crate::encode::row::binary_rows(&[col], &[t(TypeKind::Int)]).unwrap();
    let per_row: Vec<i32> = rows.iter().map(|r| f.bucket(r, 3).unwrap()).collect();
    assert_eq!(per_row, vec![2, 1, 0, 1]);

    let f = BucketFunction::try_new(BucketFunctionType::Mod, &[t(TypeKind::BigInt)]).unwrap();
    let col: ArrayRef = Arc::new(Int64Array::from(vec![-1, 10_000_000_000]));
    assert_eq!(
        f.buckets(&[col], 7).unwrap(),
        vec![6, 10_000_000_000i64.rem_euclid(7) as i32]
    );

    for bad in [
        vec![t(TypeKind::VarChar { length: 3 })],
        vec![t(TypeKind::Int), t(TypeKind::Int)],
    ] {
        let err = BucketFunction::try_new(BucketFunctionType::Mod, &bad).unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
    }
}

/// Java `HiveBucketFunctionTest`.
#[test]
fn hive_function() {
    let types = vec![
        t(TypeKind::Int),
        t(TypeKind::VarChar {
            length: i32::MAX as u32,
        }),
        t(TypeKind::VarBinary {
            length: i32::MAX as u32,
        }),
        t(TypeKind::Decimal {
            precision: 10,
            scale: 4,
        }),
    ];
    let f = BucketFunction::try_new(BucketFunctionType::Hive, &types).unwrap();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![Some(7), None])),
        Arc::new(StringArray::from(vec![Some("hello"), None])),
        Arc::new(BinaryArray::from(vec![Some(&[1u8, 2, 3][..]), None])),
        Arc::new(
            Decimal128Array::from(vec![Some(123_400), None])
                .with_precision_and_scale(10, 4)
                .unwrap(),
        ),
    ];
    // "hello".hashCode() = 99162322; hashBytes([1, 2, 3]) = 1026;
    // new BigDecimal("12.34").hashCode() = 31 * 1234 + 2.
    let expected: i32 = 31i32
        .wrapping_mul(31i32.wrapping_mul(31 * 7 + 99_162_322).wrapping_add(1026))
        .wrapping_add(31 * 1234 + 2);
    let want = (expected & i32::MAX) % 8;
    assert_eq!(f.buckets(&columns, 8).unwrap(), vec![want, 0]);
    let rows = crate::encode::row::binary_rows(&columns, &types).unwrap();
    assert_eq!(f.bucket(&rows[0], 8).unwrap(), want);
    assert_eq!(f.bucket(&rows[1], 8).unwrap(), 0);

    // Timestamps: null hashes to 0, a value is unsupported (Java throws).
    let ts = [t(TypeKind::Timestamp { precision: 3 })];
    let f = BucketFunction::try_new(BucketFunctionType::Hive, &ts).unwrap();
    let col: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![None, Some(1)]));
    let err = f.buckets(std::slice::from_ref(&col), 4).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert_eq!(f.buckets(&[col.slice(0, 1)], 4).unwrap(), vec![0]);
}

#[test]
fn hive_decimal_hash_is_big_decimal_hash_of_normalized_value() {
    // BigDecimal("0").hashCode() = 0; ("1E+2" → 100, scale 0) = 31 * 100.
    assert_eq!(hive_hash_decimal(0, 3), 0);
    assert_eq!(hive_hash_decimal(10_000, 2), 31 * 100);
    assert_eq!(hive_hash_decimal(-1_234, 2), 31 * -1234 + 2);
    // Two 32-bit words: BigInteger hash of 2^32 + 5 is 31 * 1 + 5.
    assert_eq!(hive_hash_decimal((1i128 << 32) + 5, 0), 31 * (31 + 5));
    assert_eq!(
        hive_hash_decimal(-((1i128 << 32) + 5), 1),
        31 * -(31 + 5) + 1
    );
}

#[test]
fn function_type_option() {
    let opts = |v: &str| CoreOptions::from_pairs([(BUCKET_FUNCTION_TYPE, v)]);
    assert_eq!(
        BucketFunctionType::from_options(&CoreOptions::default()).unwrap(),
        BucketFunctionType::Default
    );
    assert_eq!(
        BucketFunctionType::from_options(&opts("MOD")).unwrap(),
        BucketFunctionType::Mod
    );
    assert_eq!(
        BucketFunctionType::from_options(&opts("hive")).unwrap(),
        BucketFunctionType::Hive
    );
    assert!(BucketFunctionType::from_options(&opts("murmur")).is_err());
}

fn schema(pk: &[&str], partition: &[&str], options: &[(&str, &str)]) -> TableSchema {
    TableSchema {
        version: 3,
        id: 0,
        fields: vec![
            DataField::new(0, "p", DataType::not_null(TypeKind::VarChar { length: 5 })),
            DataField::new(1, "k", DataType::not_null(TypeKind::Int)),
            DataField::new(2, "v", t(TypeKind::VarChar { length: 5 })),
        ],
        highest_field_id: 2,
        partition_keys: partition.iter().map(|s| s.to_string()).collect(),
        primary_keys: pk.iter().map(|s| s.to_string()).collect(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        comment: None,
        time_millis: 0,
        raw_json: None,
    }
}

#[test]
fn fixed_bucket_extractor_uses_trimmed_primary_keys_or_bucket_key() {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["x", "y"])),
        Arc::new(Int32Array::from(vec![1, 2])),
        Arc::new(StringArray::from(vec!["a", "b"])),
    ];
    let pk = FixedBucketRowKeyExtractor::try_new(&schema(&["p", "k"], &["p"], &[("bucket", "4")]))
        .unwrap();
    assert_eq!(pk.bucket_key_indices(), &[1]);
    let want = buckets(&columns[1..2], &[DataType::not_null(TypeKind::Int)], 4).unwrap();
    assert_eq!(pk.buckets(&columns).unwrap(), want);

    let append = FixedBucketRowKeyExtractor::try_new(&schema(
        &[],
        &[],
        &[("bucket", "4"), ("bucket-key", "v")],
    ))
    .unwrap();
    assert_eq!(append.bucket_key_indices(), &[2]);

    let no_key = FixedBucketRowKeyExtractor::try_new(&schema(&[], &[], &[("bucket", "4")]));
    assert!(no_key.is_err());
    let one = FixedBucketRowKeyExtractor::try_new(&schema(&[], &[], &[("bucket", "1")])).unwrap();
    assert_eq!(one.buckets(&columns).unwrap(), vec![0, 0]);
    assert!(
        FixedBucketRowKeyExtractor::try_new(&schema(&["k"], &[], &[("bucket", "-1")])).is_err()
    );
}
