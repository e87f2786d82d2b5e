//! Entry orders against Java: each expected order is what a `java.util.HashMap` filled with
//! Java Paimon 2.0.0's key objects (`BinaryString`, `Decimal`, `Timestamp`, boxed
//! primitives) in stored order iterates, printed by jshell on Java 17 with `paimon-bundle`
//! 2.0.0 (positions in the stored order).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use arrow_array::builder::{Int32Builder, MapBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BooleanArray, Decimal128Array, Float32Array, Float64Array, Int16Array, Int32Array,
    Int64Array, ListArray, StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType as ArrowType, Field, Fields};

use super::*;

fn ty(s: &str) -> DataType {
    s.parse().unwrap()
}

/// One map holding `keys` with values 0, 1, ... (their stored positions), as the Avro reader
/// decodes a map of non-string keys: a list of `{key, value}` structs.
fn array_map(keys: ArrayRef) -> ArrayRef {
    let n = keys.len();
    let fields = Fields::from(vec![
        Field::new("key", keys.data_type().clone(), false),
        Field::new("value", ArrowType::Int32, true),
    ]);
    let values: ArrayRef = Arc::new(Int32Array::from_iter_values(0..n as i32));
    let entries = StructArray::try_new(fields.clone(), vec![keys, values], None).unwrap();
    let item = Arc::new(Field::new("item", ArrowType::Struct(fields), false));
    Arc::new(
        ListArray::try_new(
            item,
            OffsetBuffer::from_lengths([n]),
            Arc::new(entries),
            None,
        )
        .unwrap(),
    )
}

/// One map with string keys `keys`, values their positions: an Avro `map` as decoded.
fn string_map(keys: &[&str]) -> ArrayRef {
    let mut b = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    for (i, k) in keys.iter().enumerate() {
        b.keys().append_value(k);
        b.values().append_value(i as i32);
    }
    b.append(true).unwrap();
    Arc::new(b.finish())
}

/// The stored positions of the entries of the first map of `array`, in their new order.
fn positions(array: &ArrayRef) -> Vec<i32> {
    let entries = match array.data_type() {
        ArrowType::Map(..) => array.as_map().value(0),
        _ => array.as_list::<i32>().value(0).as_struct().clone(),
    };
    entries
        .column(1)
        .as_primitive::<Int32Type>()
        .values()
        .to_vec()
}

fn order(array: ArrayRef, t: &str) -> Vec<i32> {
    positions(&java_entry_order(&array, &ty(t)).unwrap())
}

#[test]
fn string_keys_iterate_in_java_hash_map_order() {
    assert_eq!(order(string_map(&["k", "z"]), "MAP<STRING, INT>"), [1, 0]);
    assert_eq!(
        order(string_map(&["k10", "nul"]), "MAP<STRING, INT>"),
        [1, 0]
    );
    let many: Vec<String> = (0..20).map(|i| format!("key{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(
        order(string_map(&many), "MAP<STRING, BIGINT>"),
        [
            19, 7, 14, 0, 18, 2, 4, 3, 9, 16, 5, 6, 8, 12, 11, 15, 13, 10, 17, 1
        ]
    );
    assert_eq!(
        order(
            string_map(&["", "é", "日本語", "abcde", "abcd", "x\u{ff}\u{100}", "zz"]),
            "MAP<VARCHAR(10), INT>"
        ),
        [0, 3, 5, 2, 1, 6, 4]
    );
}

#[test]
fn string_values_of_string_keys_keep_the_stored_order() {
    // Java's StringMapReader (AvroBytesStringMap) keeps the file's order.
    let mut b = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    b.keys().append_value("k");
    b.values().append_value("0");
    b.keys().append_value("z");
    b.values().append_value("1");
    b.append(true).unwrap();
    let array: ArrayRef = Arc::new(b.finish());
    assert!(!reorders(&ty("MAP<STRING, STRING>")));
    let out = java_entry_order(&array, &ty("MAP<STRING, STRING>")).unwrap();
    assert_eq!(out.as_map().keys().as_string::<i32>().value(0), "k");
}

#[test]
fn integer_keys_follow_resizes_and_the_small_table_treeify_resize() {
    let int = |v: Vec<i32>| array_map(Arc::new(Int32Array::from(v)));
    assert_eq!(order(int(vec![1, -1]), "MAP<INT, STRING>"), [1, 0]);
    // Ten keys in one bucket of 16: the 9th makes Java resize to 32 instead of treeifying.
    assert_eq!(
        order(int((0..10).map(|i| i * 16).collect()), "MAP<INT, STRING>"),
        [0, 2, 4, 6, 8, 1, 3, 5, 7, 9]
    );
    let forty: Vec<i32> = (0..40).map(|i| (i * 7919) % 1000 - 500).collect();
    assert_eq!(
        order(int(forty), "MAP<INT, INT>"),
        [
            3, 7, 11, 30, 21, 26, 31, 16, 6, 35, 2, 8, 39, 12, 29, 22, 25, 32, 15, 5, 36, 1, 9, 19,
            38, 28, 18, 23, 33, 14, 4, 37, 0, 10, 20, 27, 17, 24, 34, 13
        ]
    );
    let shorts = array_map(Arc::new(Int16Array::from(vec![300, -2, 17])));
    assert_eq!(order(shorts, "MAP<SMALLINT, INT>"), [1, 2, 0]);
    let longs = array_map(Arc::new(Int64Array::from(vec![
        1 << 32,
        1,
        -1,
        5_000_000_000,
        i64::MIN,
        77,
    ])));
    assert_eq!(order(longs, "MAP<BIGINT, INT>"), [2, 4, 0, 1, 3, 5]);
    let bools = array_map(Arc::new(BooleanArray::from(vec![true, false])));
    assert_eq!(order(bools, "MAP<BOOLEAN, INT>"), [1, 0]);
}

#[test]
fn floating_decimal_and_timestamp_keys_hash_as_java_objects() {
    let doubles = array_map(Arc::new(Float64Array::from(vec![
        0.1,
        -0.0,
        f64::NAN,
        1e300,
        2.5,
    ])));
    assert_eq!(order(doubles, "MAP<DOUBLE, INT>"), [1, 0, 4, 3, 2]);
    let floats = array_map(Arc::new(Float32Array::from(vec![
        0.1,
        -0.0,
        f32::NAN,
        3e38,
        2.5,
    ])));
    assert_eq!(order(floats, "MAP<FLOAT, INT>"), [1, 2, 4, 0, 3]);
    let decimals = Decimal128Array::from(vec![
        125,
        -125,
        12_345_678_901_234_567_890_123_456,
        0,
        -9_876_543_210_987_654_321_099,
        429_496_729_600,
    ])
    .with_precision_and_scale(38, 2)
    .unwrap();
    assert_eq!(
        order(array_map(Arc::new(decimals)), "MAP<DECIMAL(38, 2), INT>"),
        [1, 3, 0, 5, 4, 2]
    );
    // Timestamp.fromEpochMillis(ms, nanosOfMilli) as microseconds: (1700000000123, 456000),
    // (-1, 999000), (0, 0), (253402300799999, 0), (1700000000000, 1000), (-5000, 0),
    // (86400000, 7000).
    let ts = TimestampMicrosecondArray::from(vec![
        1_700_000_000_123_456,
        -1,
        0,
        253_402_300_799_999_000,
        1_700_000_000_000_001,
        -5_000_000,
        86_400_000_007,
    ]);
    assert_eq!(
        order(array_map(Arc::new(ts)), "MAP<TIMESTAMP(6), INT>"),
        [2, 3, 1, 4, 5, 6, 0]
    );
}

#[test]
fn nested_maps_are_reordered_inside_arrays_and_rows() {
    let inner = string_map(&["k", "z"]);
    let item = Arc::new(Field::new("item", inner.data_type().clone(), true));
    let list: ArrayRef =
        Arc::new(ListArray::try_new(item, OffsetBuffer::from_lengths([1]), inner, None).unwrap());
    let out = java_entry_order(&list, &ty("ARRAY<MAP<STRING, INT>>")).unwrap();
    assert_eq!(positions(&out.as_list::<i32>().value(0)), [1, 0]);
}

#[test]
fn keys_without_a_reproducible_java_hash_keep_the_stored_order() {
    // BINARY keys are byte[] in Java: identity hash codes.
    assert!(!reorders(&ty("MAP<BYTES, INT>")));
    assert!(reorders(&ty("ARRAY<MAP<BYTES, MAP<INT, INT>>>")));
}
