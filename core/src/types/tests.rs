use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, DictionaryArray, Float32Array, Int32Array, Int64Array, LargeStringArray,
    RecordBatch, StringArray, TimestampNanosecondArray, types::Int32Type,
};
use arrow_schema::{DataType as ArrowType, Field, Schema, TimeUnit};

use super::*;
use crate::spec::types::{DataField, DataType, TypeKind};

fn n(kind: TypeKind) -> DataType {
    DataType::nullable(kind)
}

fn field(id: i32, name: &str, data_type: DataType) -> DataField {
    DataField {
        id,
        name: name.to_string(),
        data_type,
        description: None,
        default_value: None,
    }
}

/// Expected values transcribed from pypaimon 2.1.0 `PyarrowFieldParser.from_paimon_type`.
#[test]
fn paimon_types_map_like_pypaimon() {
    use TypeKind::*;
    let cases: Vec<(TypeKind, ArrowType)> = vec![
        (Boolean, ArrowType::Boolean),
        (TinyInt, ArrowType::Int8),
        (SmallInt, ArrowType::Int16),
        (Int, ArrowType::Int32),
        (BigInt, ArrowType::Int64),
        (Float, ArrowType::Float32),
        (Double, ArrowType::Float64),
        (
            Decimal {
                precision: 38,
                scale: 10,
            },
            ArrowType::Decimal128(38, 10),
        ),
        (Char { length: 5 }, ArrowType::Utf8),
        (
            VarChar {
                length: i32::MAX as u32,
            },
            ArrowType::Utf8,
        ),
        (Binary { length: 4 }, ArrowType::Binary),
        (VarBinary { length: 16 }, ArrowType::Binary),
        (Blob, ArrowType::LargeBinary),
        (Date, ArrowType::Date32),
        (
            Time { precision: 0 },
            ArrowType::Time32(TimeUnit::Millisecond),
        ),
        (
            Timestamp { precision: 0 },
            ArrowType::Timestamp(TimeUnit::Second, None),
        ),
        (
            Timestamp { precision: 3 },
            ArrowType::Timestamp(TimeUnit::Millisecond, None),
        ),
        (
            Timestamp { precision: 4 },
            ArrowType::Timestamp(TimeUnit::Microsecond, None),
        ),
        (
            Timestamp { precision: 9 },
            ArrowType::Timestamp(TimeUnit::Nanosecond, None),
        ),
        (
            LocalZonedTimestamp { precision: 6 },
            ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
    ];
    for (kind, arrow) in cases {
        assert_eq!(
            paimon_to_arrow_type(&n(kind.clone())).unwrap(),
            arrow,
            "{kind:?}"
        );
    }
    let map = n(Map(
        Box::new(DataType::not_null(VarChar { length: 10 })),
        Box::new(DataType::not_null(BigInt)),
    ));
    assert_eq!(
        paimon_to_arrow_type(&map).unwrap(),
        ArrowType::Map(
            Arc::new(Field::new(
                "entries",
                ArrowType::Struct(
                    vec![
                        Field::new("key", ArrowType::Utf8, false),
                        Field::new("value", ArrowType::Int64, false)
                    ]
                    .into()
                ),
                false
            )),
            false
        )
    );
    let row = n(Row(vec![
        field(1, "x", DataType::not_null(Int)),
        field(2, "z", n(Array(Box::new(n(Double))))),
    ]));
    assert_eq!(
        paimon_to_arrow_type(&row).unwrap(),
        ArrowType::Struct(
            vec![
                Field::new("x", ArrowType::Int32, false),
                Field::new(
                    "z",
                    ArrowType::List(Arc::new(Field::new("item", ArrowType::Float64, true))),
                    true
                )
            ]
            .into()
        )
    );
    assert_eq!(
        paimon_to_arrow_type(&n(Variant)).unwrap(),
        ArrowType::Struct(
            vec![
                Field::new("value", ArrowType::Binary, false),
                Field::new("metadata", ArrowType::Binary, false)
            ]
            .into()
        )
    );
    assert!(matches!(
        paimon_to_arrow_type(&n(Other("GEOMETRY".into()))),
        Err(Error::Unsupported { .. })
    ));
    let schema = paimon_to_arrow_schema(&[
        field(0, "id", DataType::not_null(Int)),
        field(1, "s", n(Blob)),
    ])
    .unwrap();
    assert!(!schema.field(0).is_nullable());
    assert_eq!(schema.field(1).data_type(), &ArrowType::LargeBinary);
}

#[test]
fn evolution_and_physical_casts() {
    let target = Arc::new(Schema::new(vec![
        Field::new("big", ArrowType::Int64, true),
        Field::new("dbl", ArrowType::Float64, true),
        Field::new("s", ArrowType::Utf8, true),
        Field::new(
            "ts",
            ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("renamed", ArrowType::Utf8, false),
    ]));
    let dict: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
    let file_schema = Arc::new(Schema::new(vec![
        Field::new("i", ArrowType::Int32, true),
        Field::new("f", ArrowType::Float32, true),
        Field::new("d", dict.data_type().clone(), true),
        Field::new("t", ArrowType::Timestamp(TimeUnit::Nanosecond, None), true),
        Field::new("old", ArrowType::LargeUtf8, true),
    ]));
    let batch = RecordBatch::try_new(
        file_schema,
        vec![
            Arc::new(Int32Array::from(vec![Some(1), None, Some(-3)])),
            Arc::new(Float32Array::from(vec![0.1, 1.5, -0.0])),
            Arc::new(dict),
            Arc::new(TimestampNanosecondArray::from(vec![
                1_000, 2_000_000, -5_000,
            ])),
            Arc::new(LargeStringArray::from(vec!["x", "y", "z"])),
        ],
    )
    .unwrap();
    let out = cast_batch_to(&batch, &target, "f.parquet").unwrap();
    assert_eq!(out.schema(), target);
    let big = out.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(
        big.iter().collect::<Vec<_>>(),
        vec![Some(1), None, Some(-3)]
    );
    let dbl = out
        .column(1)
        .as_any()
        .downcast_ref::<arrow_array::Float64Array>()
        .unwrap();
    assert_eq!(dbl.value(0), f64::from(0.1f32));
    let s = out
        .column(2)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(
        s.iter().collect::<Vec<_>>(),
        vec![Some("a"), Some("b"), Some("a")]
    );
    let ts = out
        .column(3)
        .as_any()
        .downcast_ref::<arrow_array::TimestampMicrosecondArray>()
        .unwrap();
    assert_eq!(ts.values().to_vec(), vec![1, 2_000, -5]);
}

#[test]
fn disallowed_casts_and_nulls_name_file_and_column() {
    let column: ArrayRef = Arc::new(arrow_array::BooleanArray::from(vec![true]));
    let err = cast_column_to(
        &column,
        &Field::new("when", ArrowType::Date32, true),
        "bucket-0/data-1.orc",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("bucket-0/data-1.orc") && err.contains("when"),
        "{err}"
    );

    let column: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None]));
    let err = cast_column_to(&column, &Field::new("k", ArrowType::Int32, false), "p")
        .unwrap_err()
        .to_string();
    assert!(err.contains("NOT NULL") && err.contains('k'), "{err}");

    // Narrowing that overflows is an error, not a silent NULL.
    let column: ArrayRef = Arc::new(Int64Array::from(vec![1i64 << 40]));
    assert!(cast_column_to(&column, &Field::new("n", ArrowType::Int32, true), "p").is_err());
}

#[test]
fn list_of_key_value_records_casts_to_map() {
    use arrow_array::{MapArray, StructArray};
    let kv = StructArray::from(vec![
        (
            Arc::new(Field::new("key", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("value", ArrowType::Utf8, true)),
            Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])) as ArrayRef,
        ),
    ]);
    let item = Arc::new(Field::new("item", kv.data_type().clone(), false));
    let list = arrow_array::ListArray::new(
        item,
        arrow_buffer::OffsetBuffer::from_lengths([2, 0, 1]),
        Arc::new(kv),
        Some(arrow_buffer::NullBuffer::from(vec![true, false, true])),
    );
    let target_type = paimon_to_arrow_type(&n(TypeKind::Map(
        Box::new(DataType::not_null(TypeKind::Int)),
        Box::new(n(TypeKind::VarChar { length: 10 })),
    )))
    .unwrap();
    let column: ArrayRef = Arc::new(list);
    let out = cast_column_to(
        &column,
        &Field::new("m", target_type.clone(), true),
        "f.avro",
    )
    .unwrap();
    assert_eq!(out.data_type(), &target_type);
    let m = out.as_any().downcast_ref::<MapArray>().unwrap();
    assert_eq!(m.value_offsets(), &[0, 2, 2, 3]);
    assert!(m.is_null(1));
    let values = m.values().as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(
        values.iter().collect::<Vec<_>>(),
        vec![Some("a"), None, Some("c")]
    );
}

/// Two nested fields that swapped names (a → tmp, b → a, tmp → b): matched by id, each keeps
/// its values; by name they would trade them. A NOT NULL nested field the file lacks is an
/// error naming the file.
#[test]
fn nested_fields_are_matched_by_id_not_name() {
    use arrow_array::StructArray;
    let file_type = n(TypeKind::Row(vec![
        field(1, "a", n(TypeKind::Int)),
        field(2, "b", n(TypeKind::Int)),
    ]));
    let read_type = n(TypeKind::Row(vec![
        field(2, "a", n(TypeKind::BigInt)),
        field(1, "b", n(TypeKind::Int)),
        field(3, "c", n(TypeKind::Int)),
    ]));
    let column: ArrayRef = Arc::new(StructArray::from(vec![
        (
            Arc::new(Field::new("a", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("b", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![10, 20])) as ArrayRef,
        ),
    ]));
    let target = Field::new("r", paimon_to_arrow_type(&read_type).unwrap(), true);
    let out = cast::evolve_column(&column, &file_type, &read_type, &target, "f.orc").unwrap();
    let s = out.as_any().downcast_ref::<StructArray>().unwrap();
    let a = s.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let b = s.column(1).as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(a.values().to_vec(), vec![10, 20]);
    assert_eq!(b.values().to_vec(), vec![1, 2]);
    assert_eq!(s.column(2).null_count(), 2);
    // Matched by name (cast_column_to), the swapped fields trade values.
    let by_name = cast_column_to(&column, &target, "f.orc").unwrap();
    let by_name = by_name.as_any().downcast_ref::<StructArray>().unwrap();
    let a = by_name
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!(a.values().to_vec(), vec![1, 2]);

    let strict = n(TypeKind::Row(vec![
        field(1, "b", n(TypeKind::Int)),
        field(4, "d", DataType::not_null(TypeKind::Int)),
    ]));
    let target = Field::new("r", paimon_to_arrow_type(&strict).unwrap(), true);
    let err = cast::evolve_column(&column, &file_type, &strict, &target, "f.orc")
        .unwrap_err()
        .to_string();
    assert!(err.contains("f.orc") && err.contains("\"d\""), "{err}");
}

/// A MAP whose key type changed (a ROW key with a renamed field) is refused, as Java refuses it
/// (`SchemaEvolutionUtil`: "Cannot cast map type ... because they have different key types");
/// never read as NULLs.
#[test]
fn a_changed_map_key_type_is_unsupported() {
    use arrow_array::{MapArray, StructArray};
    let key =
        |name: &str| DataType::not_null(TypeKind::Row(vec![field(1, name, n(TypeKind::Int))]));
    let file_type = n(TypeKind::Map(
        Box::new(key("k")),
        Box::new(n(TypeKind::Int)),
    ));
    let read_type = n(TypeKind::Map(
        Box::new(key("kk")),
        Box::new(n(TypeKind::Int)),
    ));
    let file_arrow = paimon_to_arrow_type(&file_type).unwrap();
    let ArrowType::Map(entries_field, _) = &file_arrow else {
        panic!()
    };
    let ArrowType::Struct(kv) = entries_field.data_type() else {
        panic!()
    };
    let ArrowType::Struct(key_fields) = kv[0].data_type() else {
        panic!()
    };
    let keys = StructArray::new(
        key_fields.clone(),
        vec![Arc::new(Int32Array::from(vec![1])) as ArrayRef],
        None,
    );
    let entries = StructArray::new(
        kv.clone(),
        vec![Arc::new(keys), Arc::new(Int32Array::from(vec![7]))],
        None,
    );
    let column: ArrayRef = Arc::new(MapArray::new(
        Arc::clone(entries_field),
        arrow_buffer::OffsetBuffer::from_lengths([1]),
        entries,
        None,
        false,
    ));
    let target = Field::new("m", paimon_to_arrow_type(&read_type).unwrap(), true);
    let err =
        cast::evolve_column(&column, &file_type, &read_type, &target, "f.parquet").unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}
