use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeListArray,
    Float32Array, Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, LargeBinaryArray,
    LargeStringArray, StringArray, StructArray, Time32MillisecondArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray,
};
use arrow_schema::{DataType as ArrowType, Field};

use super::*;
use crate::spec::types::DataField;
use crate::util::hex;

fn t(kind: TypeKind) -> DataType {
    DataType::nullable(kind)
}

/// Every flat type with nulls, short/long strings, compact/non-compact decimals and
/// timestamps, negative sub-milli timestamps.
fn flat_columns() -> (Vec<ArrayRef>, Vec<DataType>) {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
        Arc::new(Int8Array::from(vec![Some(-1), Some(127), None])),
        Arc::new(Int16Array::from(vec![None, Some(-300), Some(7)])),
        Arc::new(Int32Array::from(vec![Some(1), Some(i32::MIN), None])),
        Arc::new(Int64Array::from(vec![Some(i64::MAX), None, Some(-5)])),
        Arc::new(Float32Array::from(vec![Some(1.5), Some(f32::NAN), None])),
        Arc::new(Float64Array::from(vec![None, Some(-0.0), Some(1e300)])),
        Arc::new(
            Decimal128Array::from(vec![Some(12345), None, Some(-99)])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ),
        Arc::new(
            Decimal128Array::from(vec![
                Some(-99_999_999_999_999_999_999_999_999_999_999_999_999),
                None,
                Some(1),
            ])
            .with_precision_and_scale(38, 5)
            .unwrap(),
        ),
        Arc::new(StringArray::from(vec![
            Some("a"),
            Some("exactly7"),
            Some("a much longer string, past seven bytes"),
        ])),
        Arc::new(BinaryArray::from(vec![
            Some(&b""[..]),
            None,
            Some(&b"0123456789"[..]),
        ])),
        Arc::new(Date32Array::from(vec![Some(19000), Some(-1), None])),
        Arc::new(Time32MillisecondArray::from(vec![
            Some(3_600_000),
            None,
            Some(0),
        ])),
        Arc::new(TimestampMillisecondArray::from(vec![
            Some(-1),
            Some(1_700_000_000_123),
            None,
        ])),
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(-1),
            None,
            Some(1_700_000_000_123_456),
        ])),
        Arc::new(
            TimestampNanosecondArray::from(vec![None, Some(-1_500_001), Some(42)])
                .with_timezone("UTC"),
        ),
        Arc::new(TimestampSecondArray::from(vec![Some(-2), Some(0), None])),
    ];
    let types = vec![
        t(TypeKind::Boolean),
        t(TypeKind::TinyInt),
        t(TypeKind::SmallInt),
        t(TypeKind::Int),
        t(TypeKind::BigInt),
        t(TypeKind::Float),
        t(TypeKind::Double),
        t(TypeKind::Decimal {
            precision: 10,
            scale: 2,
        }),
        t(TypeKind::Decimal {
            precision: 38,
            scale: 5,
        }),
        t(TypeKind::VarChar { length: 100 }),
        t(TypeKind::VarBinary { length: 100 }),
        t(TypeKind::Date),
        t(TypeKind::Time { precision: 3 }),
        t(TypeKind::Timestamp { precision: 3 }),
        t(TypeKind::Timestamp { precision: 6 }),
        t(TypeKind::LocalZonedTimestamp { precision: 9 }),
        t(TypeKind::Timestamp { precision: 0 }),
    ];
    (columns, types)
}

#[test]
fn flat_rows_match_datum_encoding() {
    let (columns, types) = flat_columns();
    let encoder = BinaryRowEncoder::try_new(&columns, &types).unwrap();
    assert_eq!(encoder.num_rows(), 3);
    let rows = binary_rows(&columns, &types).unwrap();
    for (row, got) in rows.iter().enumerate() {
        let datums: Vec<Datum> = columns
            .iter()
            .zip(&types)
            .map(|(c, ty)| datum_at(c.as_ref(), ty, row).unwrap())
            .collect();
        let want = BinaryRow::encode(&datums, &types).unwrap();
        assert_eq!(hex(got.row_bytes()), hex(want.row_bytes()), "row {row}");
        assert_eq!(got.fields(&types).unwrap(), datums, "row {row}");
        assert_eq!(binary_row_at(&columns, &types, row).unwrap(), *got);
        assert_eq!(
            hex(&encoder.encode_serialized(row).unwrap()),
            hex(&want.to_serialized()),
            "row {row}"
        );
        let mut scratch = vec![0xff; 3];
        assert_eq!(
            encoder.hash_code(row, &mut scratch).unwrap(),
            want.hash_code()
        );
    }
}

#[test]
fn projected_rows_are_the_rows_of_the_projected_columns() {
    let (columns, types) = flat_columns();
    // Out of order, one column twice: a bucket key may name the columns in any order.
    let indices = vec![3, 0, 8, 3];
    let ptypes: Vec<DataType> = indices.iter().map(|&i| types[i].clone()).collect();
    let projection = RowProjection::try_new(indices.clone(), ptypes.clone()).unwrap();
    assert_eq!(projection.len(), 4);
    assert!(!projection.is_empty());
    let pcols = projection.columns(&columns).unwrap();
    let want: Vec<ArrayRef> = indices.iter().map(|&i| Arc::clone(&columns[i])).collect();
    assert_eq!(pcols.len(), want.len());
    for (got, want) in pcols.iter().zip(&want) {
        assert!(Arc::ptr_eq(got, want));
    }
    let encoder = projection.encoder(&columns).unwrap();
    assert_eq!(encoder.num_rows(), 3);
    for row in 0..3 {
        let want = binary_row_at(&want, &ptypes, row).unwrap();
        assert_eq!(
            hex(encoder.encode(row).unwrap().row_bytes()),
            hex(want.row_bytes())
        );
    }
    assert!(RowProjection::default().is_empty());
    let err = RowProjection::try_new(vec![0, 1], vec![t(TypeKind::Int)]).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    let past = RowProjection::try_new(vec![columns.len()], vec![t(TypeKind::Int)]).unwrap();
    assert!(matches!(past.columns(&columns), Err(Error::Invalid(_))));
    assert!(matches!(past.encoder(&columns), Err(Error::Invalid(_))));
}

#[test]
fn datum_values() {
    let (columns, types) = flat_columns();
    let at = |c: usize, r: usize| datum_at(columns[c].as_ref(), &types[c], r).unwrap();
    assert_eq!(at(0, 1), Datum::Null);
    assert_eq!(
        at(8, 0),
        Datum::Decimal {
            unscaled: -99_999_999_999_999_999_999_999_999_999_999_999_999,
            precision: 38,
            scale: 5
        }
    );
    assert_eq!(
        at(13, 0),
        Datum::Timestamp {
            millis: -1,
            nanos_of_milli: 0
        }
    );
    // -1 µs = 1969-12-31T23:59:59.999999: millis -1, 999 µs into that milli.
    assert_eq!(
        at(14, 0),
        Datum::Timestamp {
            millis: -1,
            nanos_of_milli: 999_000
        }
    );
    assert_eq!(
        at(15, 1),
        Datum::Timestamp {
            millis: -2,
            nanos_of_milli: 499_999
        }
    );
    assert_eq!(
        at(16, 0),
        Datum::Timestamp {
            millis: -2000,
            nanos_of_milli: 0
        }
    );
    assert_eq!(at(12, 0), Datum::Time(3_600_000));
}

/// Test vectors of `spec/table-layout.md` §6.
#[test]
fn spec_test_vectors() {
    let one: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(vec![1]))];
    let row = binary_row_at(&one, &[t(TypeKind::Int)], 0).unwrap();
    assert_eq!(
        hex(&row.to_serialized()),
        "0000000100000000000000000100000000000000"
    );
    let two: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["20240514"])),
        Arc::new(Int32Array::from(vec![12])),
    ];
    let types = [t(TypeKind::VarChar { length: 10 }), t(TypeKind::Int)];
    let row = binary_row_at(&two, &types, 0).unwrap();
    assert_eq!(
        hex(&row.to_serialized()),
        "00000002000000000000000008000000180000000c000000000000003230323430353134"
    );
    let nulls: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["a"])),
        Arc::new(Int64Array::from(vec![None::<i64>])),
    ];
    let types = [t(TypeKind::VarChar { length: 10 }), t(TypeKind::BigInt)];
    let row = binary_row_at(&nulls, &types, 0).unwrap();
    assert_eq!(
        hex(&row.to_serialized()),
        "00000002000200000000000061000000000000810000000000000000"
    );
}

#[test]
fn large_and_view_physical_types() {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(LargeStringArray::from(vec!["hello world!"])),
        Arc::new(LargeBinaryArray::from(vec![&b"xy"[..]])),
    ];
    let types = [t(TypeKind::VarChar { length: 20 }), t(TypeKind::Blob)];
    let row = binary_row_at(&columns, &types, 0).unwrap();
    assert_eq!(
        row.fields(&types).unwrap(),
        vec![
            Datum::String("hello world!".into()),
            Datum::Binary(b"xy".to_vec())
        ]
    );
}

#[test]
fn nested_rows_fall_back_to_datums() {
    let mut list = ListBuilder::new(Int32Builder::new());
    list.values().append_value(1);
    list.values().append_null();
    list.append(true);
    list.append(false);
    let list: ArrayRef = Arc::new(list.finish());

    let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    map.keys().append_value("k");
    map.values().append_value(7);
    map.append(true).unwrap();
    map.append(true).unwrap();
    let map: ArrayRef = Arc::new(map.finish());

    let row_fields = vec![
        DataField::new(1, "x", t(TypeKind::Int)),
        DataField::new(2, "y", t(TypeKind::VarChar { length: 5 })),
    ];
    let st: ArrayRef = Arc::new(StructArray::from(vec![
        (
            Arc::new(Field::new("x", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(3), None])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("y", ArrowType::Utf8, true)),
            Arc::new(StringArray::from(vec![Some("s"), Some("t")])) as ArrayRef,
        ),
    ]));
    let columns = vec![list, map, st];
    let types = vec![
        t(TypeKind::Array(Box::new(t(TypeKind::Int)))),
        t(TypeKind::Map(
            Box::new(DataType::not_null(TypeKind::VarChar { length: 5 })),
            Box::new(t(TypeKind::Int)),
        )),
        t(TypeKind::Row(row_fields)),
    ];
    let rows = binary_rows(&columns, &types).unwrap();
    assert_eq!(
        rows[0].fields(&types).unwrap(),
        vec![
            Datum::Array(vec![Datum::Int(1), Datum::Null]),
            Datum::Map(vec![(Datum::String("k".into()), Datum::Int(7))]),
            Datum::Row(vec![Datum::Int(3), Datum::String("s".into())]),
        ]
    );
    assert_eq!(
        rows[1].fields(&types).unwrap(),
        vec![
            Datum::Null,
            Datum::Map(vec![]),
            Datum::Row(vec![Datum::Null, Datum::String("t".into())]),
        ]
    );
}

#[test]
fn errors() {
    let ints: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(vec![1]))];
    let err = binary_row_at(&ints, &[t(TypeKind::BigInt)], 0).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    let err = binary_row_at(&ints, &[t(TypeKind::Int)], 1).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    let err = binary_row_at(&ints, &[], 0).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    let scale: Vec<ArrayRef> = vec![Arc::new(
        Decimal128Array::from(vec![1])
            .with_precision_and_scale(10, 3)
            .unwrap(),
    )];
    let ty = t(TypeKind::Decimal {
        precision: 10,
        scale: 2,
    });
    assert!(binary_row_at(&scale, &[ty], 0).is_err());
    let vector: Vec<ArrayRef> = vec![Arc::new(FixedSizeListArray::from_iter_primitive::<
        Int32Type,
        _,
        _,
    >(vec![Some(vec![Some(1)])], 1))];
    let vty = t(TypeKind::Vector {
        element: Box::new(t(TypeKind::Int)),
        length: 1,
    });
    let err = binary_row_at(&vector, &[vty], 0).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}

#[test]
fn every_paimon_to_arrow_type_encodes() {
    // The Arrow types `paimon_to_arrow_type` produces are the ones the encoder reads.
    let (columns, types) = flat_columns();
    for (c, ty) in columns.iter().zip(&types) {
        let expected = crate::types::paimon_to_arrow_type(ty).unwrap();
        assert_eq!(c.data_type(), &expected, "{}", ty.sql_string());
    }
}
