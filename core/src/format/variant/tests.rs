//! Tests of shredded VARIANT rebuilding: the expected bytes are what Java Paimon 2.0.0's reader
//! returns for the same shredded rows (`conformance/java-check` read of pypaimon's
//! `ox_variant_shredded` table, whose file holds exactly these rows).

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Int64Array, StringArray, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as ArrowType, Field, Fields};

use super::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn group(value: ArrayRef, typed: ArrayRef) -> ArrayRef {
    Arc::new(StructArray::from(vec![
        (Arc::new(Field::new(VALUE, ArrowType::Binary, true)), value),
        (
            Arc::new(Field::new(TYPED_VALUE, typed.data_type().clone(), true)),
            typed,
        ),
    ]))
}

/// `{metadata, value, typed_value{city STRING, n BIGINT}}` of five rows: fully shredded,
/// residual only, NULL, shredded plus a residual field, one shredded field.
fn shredded_column() -> ArrayRef {
    let no_bytes = || Arc::new(BinaryArray::from(vec![None::<&[u8]>; 5])) as ArrayRef;
    let city = group(
        no_bytes(),
        Arc::new(StringArray::from(vec![
            Some("Berlin"),
            None,
            None,
            Some("Paris"),
            None,
        ])),
    );
    let n = group(
        no_bytes(),
        Arc::new(Int64Array::from(vec![
            Some(3),
            None,
            None,
            Some(1 << 40),
            Some(7),
        ])),
    );
    let typed: ArrayRef = Arc::new(StructArray::from(vec![
        (
            Arc::new(Field::new("city", city.data_type().clone(), false)),
            city,
        ),
        (Arc::new(Field::new("n", n.data_type().clone(), false)), n),
    ]));
    let metadata = [
        hex("0102000405636974796e"),
        hex("010100056f74686572"),
        vec![],
        hex("01030004050a636974796e6578747261"),
        hex("010100016e"),
    ];
    // Row 4's residual: {"extra": [1, 2]} with key id 2.
    let value = [
        None,
        Some(hex("020100000104")),
        None,
        Some(hex("020102000903020002040c010c02")),
        None,
    ];
    let fields = Fields::from(vec![
        Field::new(METADATA, ArrowType::Binary, false),
        Field::new(VALUE, ArrowType::Binary, true),
        Field::new(TYPED_VALUE, typed.data_type().clone(), true),
    ]);
    Arc::new(
        StructArray::try_new(
            fields,
            vec![
                Arc::new(BinaryArray::from_iter_values(metadata.iter())) as ArrayRef,
                Arc::new(value.iter().map(|v| v.as_deref()).collect::<BinaryArray>()),
                typed,
            ],
            Some(NullBuffer::from(vec![true, true, false, true, true])),
        )
        .unwrap(),
    )
}

#[test]
fn shredded_rows_rebuild_to_javas_bytes() {
    let column = shredded_column();
    assert!(is_shredded(column.data_type()));
    let out = rebuild_column(&column, "f.parquet", "payload").unwrap();
    let s = out.as_struct();
    assert_eq!(s.data_type(), &variant_arrow_type());
    let values = s.column(0).as_binary::<i32>();
    let metadata = s.column(1).as_binary::<i32>();
    let want = [
        ("02020001000709194265726c696e0c03", "0102000405636974796e"),
        ("020100000104", "010100056f74686572"),
        ("", ""),
        (
            // Shredded fields first (city, n), then the residual `extra`: Java's data order.
            "0203000201000f061815506172697318000000000001000003020002040c010c02",
            "01030004050a636974796e6578747261",
        ),
        ("02010000020c07", "010100016e"),
    ];
    for (row, (v, m)) in want.iter().enumerate() {
        if row == 2 {
            assert!(s.is_null(2));
            continue;
        }
        assert_eq!(values.value(row), hex(v).as_slice(), "value of row {row}");
        assert_eq!(
            metadata.value(row),
            hex(m).as_slice(),
            "metadata of row {row}"
        );
    }
}

#[test]
fn malformed_shredding_is_corrupt_naming_the_column() {
    // A residual value that repeats a shredded field.
    let column = shredded_column();
    let s = column.as_struct();
    let mut value: Vec<Option<Vec<u8>>> = vec![None; 5];
    // {"city": 1} with key id 0.
    value[0] = Some(hex("0201000002000c01"));
    let broken = StructArray::try_new(
        s.fields().clone(),
        vec![
            Arc::clone(s.column(0)),
            Arc::new(value.iter().map(|v| v.as_deref()).collect::<BinaryArray>()),
            Arc::clone(s.column(2)),
        ],
        s.nulls().cloned(),
    )
    .unwrap();
    let e = rebuild_column(&(Arc::new(broken) as ArrayRef), "f.parquet", "payload").unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    assert!(
        e.to_string().contains("payload") && e.to_string().contains("f.parquet"),
        "{e}"
    );
}

#[test]
fn the_builder_picks_javas_smallest_encodings() {
    let mut b = Builder::default();
    b.append_long(5);
    b.append_long(300);
    b.append_long(1 << 20);
    b.append_long(1 << 40);
    b.append_decimal(12345, 2);
    b.append_decimal(1_234_567_890_123, 3);
    b.append_string(&"x".repeat(70));
    let (v, m) = b.result().unwrap();
    assert_eq!(&v[..2], &[INT1 << 2, 5]);
    assert_eq!(v[2], INT2 << 2);
    assert_eq!(v[5], INT4 << 2);
    assert_eq!(v[10], INT8 << 2);
    assert_eq!(v[19], DECIMAL4 << 2);
    assert_eq!(v[25], DECIMAL8 << 2);
    assert_eq!(v[35], LONG_STR << 2);
    // No key: metadata of an empty dictionary.
    assert_eq!(m, vec![1, 0, 0]);
}
