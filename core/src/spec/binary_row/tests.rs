use super::*;
use crate::spec::types::DataField;
use crate::util::unhex;

fn nn(kind: TypeKind) -> DataType {
    DataType::not_null(kind)
}

fn n(kind: TypeKind) -> DataType {
    DataType::nullable(kind)
}

fn string() -> DataType {
    n(TypeKind::VarChar {
        length: i32::MAX as u32,
    })
}

fn hexs(s: &str) -> Vec<u8> {
    unhex(&s.replace(' ', "")).unwrap()
}

/// Test vectors of `spec/table-layout.md` §6, both directions.
#[test]
fn spec_vectors() {
    let cases: Vec<(&str, Vec<DataType>, Vec<Datum>)> = vec![
        ("00000000 0000000000000000", vec![], vec![]),
        (
            "00000001 0000000000000000 0100000000000000",
            vec![n(TypeKind::Int)],
            vec![Datum::Int(1)],
        ),
        (
            "00000002 0000000000000000 0800000018000000 0c00000000000000 3230323430353134",
            vec![string(), n(TypeKind::Int)],
            vec![Datum::String("20240514".into()), Datum::Int(12)],
        ),
        (
            "00000002 0002000000000000 6100000000000081 0000000000000000",
            vec![string(), n(TypeKind::BigInt)],
            vec![Datum::String("a".into()), Datum::Null],
        ),
    ];
    for (hex, types, values) in cases {
        let bytes = hexs(hex);
        let row = BinaryRow::from_serialized(&bytes, "vec").unwrap();
        assert_eq!(row.arity(), types.len());
        assert_eq!(row.fields(&types).unwrap(), values, "{hex}");
        let encoded = BinaryRow::encode(&values, &types).unwrap();
        assert_eq!(encoded.to_serialized(), bytes, "{hex}");
        assert_eq!(encoded, row);
    }
    assert_eq!(
        BinaryRow::empty().to_serialized(),
        BinaryRow::EMPTY_SERIALIZED.to_vec()
    );
    assert!(
        BinaryRow::from_serialized(
            &hexs("00000002 0002000000000000 6100000000000081 0000000000000000"),
            "x"
        )
        .unwrap()
        .is_null_at(1)
        .unwrap()
    );
}

fn all_types() -> (Vec<DataType>, Vec<Datum>) {
    let row_ty = n(TypeKind::Row(vec![
        DataField {
            id: 1,
            name: "a".into(),
            data_type: n(TypeKind::Int),
            description: None,
            default_value: None,
        },
        DataField {
            id: 2,
            name: "b".into(),
            data_type: string(),
            description: None,
            default_value: None,
        },
    ]));
    let types = vec![
        n(TypeKind::Boolean),
        n(TypeKind::TinyInt),
        n(TypeKind::SmallInt),
        n(TypeKind::Int),
        n(TypeKind::BigInt),
        n(TypeKind::Float),
        n(TypeKind::Double),
        n(TypeKind::Decimal {
            precision: 10,
            scale: 2,
        }),
        n(TypeKind::Decimal {
            precision: 38,
            scale: 10,
        }),
        n(TypeKind::Char { length: 5 }),
        string(),
        string(),
        n(TypeKind::VarBinary { length: 16 }),
        n(TypeKind::Binary { length: 9 }),
        n(TypeKind::Date),
        n(TypeKind::Time { precision: 3 }),
        n(TypeKind::Timestamp { precision: 3 }),
        n(TypeKind::Timestamp { precision: 9 }),
        n(TypeKind::LocalZonedTimestamp { precision: 6 }),
        n(TypeKind::Array(Box::new(string()))),
        n(TypeKind::Map(
            Box::new(nn(TypeKind::VarChar { length: 10 })),
            Box::new(n(TypeKind::BigInt)),
        )),
        row_ty,
        n(TypeKind::Decimal {
            precision: 20,
            scale: 0,
        }),
        n(TypeKind::Timestamp { precision: 6 }),
        n(TypeKind::Variant),
        n(TypeKind::Array(Box::new(n(TypeKind::Decimal {
            precision: 30,
            scale: 3,
        })))),
    ];
    let values = vec![
        Datum::Boolean(true),
        Datum::TinyInt(-128),
        Datum::SmallInt(-2),
        Datum::Int(i32::MIN),
        Datum::BigInt(i64::MAX),
        Datum::Float(-1.5),
        Datum::Double(f64::NAN),
        Datum::Decimal {
            unscaled: -12345,
            precision: 10,
            scale: 2,
        },
        Datum::Decimal {
            unscaled: -(10i128.pow(38) - 1),
            precision: 38,
            scale: 10,
        },
        Datum::String("ab".into()),
        Datum::String("".into()),
        Datum::String("a longer string ü".into()),
        Datum::Binary(vec![1, 2, 3, 4, 5, 6, 7]),
        Datum::Binary(vec![0xff; 9]),
        Datum::Date(19724),
        Datum::Time(45_296_789),
        Datum::Timestamp {
            millis: -1,
            nanos_of_milli: 0,
        },
        Datum::Timestamp {
            millis: 1_704_164_645_123,
            nanos_of_milli: 456_789,
        },
        Datum::Timestamp {
            millis: 0,
            nanos_of_milli: 1000,
        },
        Datum::Array(vec![
            Datum::String("x".into()),
            Datum::Null,
            Datum::String("twelve bytes".into()),
        ]),
        Datum::Map(vec![
            (Datum::String("k1".into()), Datum::BigInt(7)),
            (Datum::String("key number two".into()), Datum::Null),
        ]),
        Datum::Row(vec![Datum::Int(3), Datum::String("nested string".into())]),
        Datum::Null,
        Datum::Null,
        Datum::Variant {
            value: vec![1, 2, 3],
            metadata: vec![9],
        },
        Datum::Array(vec![
            Datum::Decimal {
                unscaled: 1,
                precision: 30,
                scale: 3,
            },
            Datum::Null,
        ]),
    ];
    (types, values)
}

#[test]
fn round_trip_all_types() {
    let (types, values) = all_types();
    let row = BinaryRow::encode(&values, &types).unwrap();
    let bytes = row.to_serialized();
    let back = BinaryRow::from_serialized(&bytes, "rt").unwrap();
    assert_eq!(back.fields(&types).unwrap(), values);
    // Re-encoding the decoded values gives the same bytes.
    assert_eq!(
        BinaryRow::encode(&back.fields(&types).unwrap(), &types)
            .unwrap()
            .to_serialized(),
        bytes
    );
    // Null non-compact decimal / timestamp reserve var bytes (Java RowHelper behaviour):
    // the slot holds an offset with length 0.
    let w = null_bits_size_in_bytes(types.len());
    let slot = |i: usize| {
        u64::from_le_bytes(
            row.row_bytes()[w + 8 * i..w + 8 * i + 8]
                .try_into()
                .unwrap(),
        )
    };
    assert_ne!(slot(22) >> 32, 0);
    assert_eq!(slot(22) & 0xffff_ffff, 0);
    assert_ne!(slot(23) >> 32, 0);
    assert!(row.is_null_at(22).unwrap() && row.is_null_at(23).unwrap());
    // Compact decimal stored as unscaled i64.
    assert_eq!(slot(7) as i64, -12345);
}

#[test]
fn layout_details() {
    // Decimal(20, 0) of 1: one BE byte in a 16-byte var region, slot = offset << 32 | 1.
    let ty = vec![n(TypeKind::Decimal {
        precision: 20,
        scale: 0,
    })];
    let row = BinaryRow::encode(
        &[Datum::Decimal {
            unscaled: 1,
            precision: 20,
            scale: 0,
        }],
        &ty,
    )
    .unwrap();
    assert_eq!(
        crate::util::hex(&row.to_serialized()),
        "00000001".to_owned() + "0000000000000000" + "0100000010000000" + "01" + &"00".repeat(15)
    );
    // Timestamp(6): slot = offset << 32 | nanos, var = millis LE.
    let ty = vec![n(TypeKind::Timestamp { precision: 6 })];
    let row = BinaryRow::encode(
        &[Datum::Timestamp {
            millis: 2,
            nanos_of_milli: 5000,
        }],
        &ty,
    )
    .unwrap();
    assert_eq!(
        crate::util::hex(&row.to_serialized()),
        "00000001".to_owned() + "0000000000000000" + "8813000010000000" + "0200000000000000"
    );
    // Array<INT> [1, null]: size 2, one null word, 4-byte elements, rounded to 8.
    let bytes = write_array(&[Datum::Int(1), Datum::Null], &n(TypeKind::Int)).unwrap();
    assert_eq!(
        crate::util::hex(&bytes),
        "02000000".to_owned() + "02000000" + "01000000" + "00000000"
    );
}

#[test]
fn corrupt_rows_name_the_file() {
    let check = |bytes: &[u8], types: &[DataType]| {
        let err = BinaryRow::from_serialized(bytes, "manifest/m-1")
            .and_then(|r| r.fields(types))
            .unwrap_err();
        match err {
            Error::Corrupt { path, format, .. } => {
                assert_eq!(path, "manifest/m-1");
                assert_eq!(format, "binary-row");
            }
            other => panic!("unexpected {other:?}"),
        }
    };
    check(&[0, 0, 0], &[]);
    check(&hexs("ffffffff"), &[]);
    check(&hexs("00000001 0000000000000000"), &[n(TypeKind::Int)]);
    // var part offset beyond the row
    check(
        &hexs("00000001 0000000000000000 0900000040000000"),
        &[string()],
    );
    // inline length > 7
    check(
        &hexs("00000001 0000000000000000 6100000000000088"),
        &[string()],
    );
    // arity mismatch with the types
    check(&hexs("00000001 0000000000000000 0100000000000000"), &[]);
    // nested array with a huge size
    check(
        &hexs("00000001 0000000000000000 0800000010000000 ffffff7f00000000"),
        &[n(TypeKind::Array(Box::new(n(TypeKind::Int))))],
    );
}

#[test]
fn java_renderings() {
    assert_eq!(java_double_to_string(1.0), "1.0");
    assert_eq!(java_double_to_string(0.001), "0.001");
    assert_eq!(java_double_to_string(1e7), "1.0E7");
    assert_eq!(java_double_to_string(1.5e-5), "1.5E-5");
    assert_eq!(java_double_to_string(-0.0), "-0.0");
    assert_eq!(java_double_to_string(123456.789), "123456.789");
    assert_eq!(java_float_to_string(0.1), "0.1");
    assert_eq!(java_float_to_string(f32::INFINITY), "Infinity");
    assert_eq!(decimal_to_plain_string(-10, 2), "-0.10");
    assert_eq!(decimal_to_plain_string(12345, 2), "123.45");
    assert_eq!(decimal_to_plain_string(5, 0), "5");
    assert_eq!(format_date(19724), "2024-01-02");
    assert_eq!(format_date(0), "1970-01-01");
    assert_eq!(format_date(-1), "1969-12-31");
    assert_eq!(format_time(45_296_789, 3), "12:34:56.789");
    assert_eq!(format_time(45_296_000, 3), "12:34:56.0");
    assert_eq!(format_time(45_296_000, 0), "12:34:56");
    assert_eq!(
        format_timestamp(1_704_164_645_123, 456_000, 6),
        "2024-01-02 03:04:05.123456"
    );
    assert_eq!(
        format_timestamp(1_704_164_645_000, 0, 3),
        "2024-01-02 03:04:05.000"
    );
    assert_eq!(
        format_timestamp(1_704_164_645_000, 0, 0),
        "2024-01-02 03:04:05"
    );
    assert_eq!(
        format_local_date_time(1_704_164_640_000, 0),
        "2024-01-02T03:04"
    );
    assert_eq!(
        format_local_date_time(1_704_164_645_100, 0),
        "2024-01-02T03:04:05.100"
    );
    assert_eq!(
        format_local_date_time(1_704_164_645_100, 1),
        "2024-01-02T03:04:05.100000001"
    );
    assert_eq!(Datum::Date(19724).to_string(), "19724");
    assert_eq!(
        Datum::Date(19724)
            .cast_to_string(&n(TypeKind::Date))
            .unwrap(),
        "2024-01-02"
    );
    assert!(Datum::Null.cast_to_string(&n(TypeKind::Int)).is_none());
}

#[test]
fn datum_order() {
    assert!(Datum::Null < Datum::Int(i32::MIN));
    assert!(Datum::String("a".into()) < Datum::String("b".into()));
    assert!(Datum::String("z".into()) < Datum::String("ü".into()));
    assert!(
        Datum::Decimal {
            unscaled: 100,
            precision: 5,
            scale: 2
        } == Datum::Decimal {
            unscaled: 1,
            precision: 5,
            scale: 0
        }
    );
    assert!(Datum::Double(-0.0) < Datum::Double(0.0));
    assert!(Datum::Double(f64::INFINITY) < Datum::Double(f64::NAN));
    assert!(
        Datum::Timestamp {
            millis: 1,
            nanos_of_milli: 5
        } > Datum::Timestamp {
            millis: 1,
            nanos_of_milli: 4
        }
    );
}

#[test]
fn serialized_form_round_trips_and_empty_rows_share_bytes() {
    let types = [
        DataType::nullable(TypeKind::Int),
        DataType::nullable(TypeKind::VarChar { length: 100 }),
    ];
    let row = BinaryRow::encode(
        &[Datum::Int(7), Datum::String("a long enough".into())],
        &types,
    )
    .unwrap();
    let serialized = row.to_serialized();
    assert_eq!(serialized[..4], 2i32.to_be_bytes());
    assert_eq!(&serialized[4..], row.row_bytes());
    assert_eq!(row.serialized(), &serialized[..]);
    let back = BinaryRow::from_serialized(&serialized, "m").unwrap();
    assert_eq!(back, row);
    assert_eq!(back.arity(), 2);
    assert_eq!(back.origin(), "m");
    assert_eq!(
        back.fields(&types).unwrap(),
        vec![Datum::Int(7), Datum::String("a long enough".into())]
    );
    let copied = BinaryRow::from_row_bytes(2, row.row_bytes(), RowOrigin::new("x")).unwrap();
    assert_eq!(copied, row);

    // Every empty row, however made, points at the same bytes and keeps its own origin.
    let a = BinaryRow::from_serialized(&BinaryRow::EMPTY_SERIALIZED, "manifest-a").unwrap();
    let b = BinaryRow::empty();
    assert_eq!(a, b);
    assert_eq!(a.origin(), "manifest-a");
    assert_eq!(a.serialized().as_ptr(), b.serialized().as_ptr());
    assert_eq!(a.arity(), 0);
    assert_eq!(a.row_bytes(), &[0u8; 8]);

    // Arity and length are checked when the row is made, not when it is read.
    let err = BinaryRow::from_serialized(&[0, 0, 0, 2, 0, 0, 0, 0], "bad.avro").unwrap_err();
    assert!(err.to_string().contains("bad.avro"), "{err}");
    assert!(BinaryRow::from_serialized(&[0xff, 0, 0, 0], "neg.avro").is_err());
    assert!(BinaryRow::from_row_bytes(1, &[0; 8], RowOrigin::new("short")).is_err());
}

/// A plan holds seven rows per live data file: the row is two pointers.
#[cfg(target_pointer_width = "64")]
#[test]
fn binary_row_is_two_pointers() {
    assert_eq!(std::mem::size_of::<BinaryRow>(), 24);
}
