//! Tests of shared-shredding MAP columns: the layout metadata as Java writes it (field
//! dictionary compressed with zstd, lz4 or none, each byte one ISO-8859-1 character) and the
//! entries of each row in Java's order (physical columns, then overflow).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, ListBuilder, MapBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as ArrowType, Field, Fields};

use super::*;

fn metadata(compression: &str) -> HashMap<String, String> {
    let dict = br#"{"a":0,"b":1,"c":2,"z":3}"#;
    let stored = match compression {
        "zstd" => zstd::bulk::compress(dict, 1).unwrap(),
        "lz4" => {
            let block = lz4_flex::block::compress(dict);
            let mut out = (block.len() as u32).to_le_bytes().to_vec();
            out.extend((dict.len() as u32).to_le_bytes());
            out.extend(block);
            out
        }
        _ => dict.to_vec(),
    };
    HashMap::from([
        (STORAGE_LAYOUT.into(), SHARED_SHREDDING.into()),
        (VERSION.into(), "1".into()),
        (FIELD_DICT_COMPRESSION.into(), compression.into()),
        (FIELD_DICT_ORIGINAL_SIZE.into(), dict.len().to_string()),
        (
            FIELD_DICT.into(),
            stored.iter().map(|b| char::from(*b)).collect(),
        ),
        (NUM_COLUMNS.into(), "2".into()),
    ])
}

/// Rows: {a:1, c:NULL} in columns, z in overflow; NULL; {} ; b in column 1 only.
fn physical() -> ArrayRef {
    let mut mapping = ListBuilder::new(Int32Builder::new());
    for row in [[0, 2], [-1, -1], [-1, -1], [-1, 1]] {
        mapping.append_value(row.map(Some));
    }
    let col0: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, None, None]));
    let col1: ArrayRef = Arc::new(Int64Array::from(vec![None, None, None, Some(22)]));
    let mut overflow = MapBuilder::new(None, Int32Builder::new(), Int64Builder::new());
    overflow.keys().append_value(3);
    overflow.values().append_value(9);
    overflow.keys().append_value(7); // an id the dictionary does not know: skipped
    overflow.values().append_value(10);
    overflow.append(true).unwrap();
    for _ in 0..3 {
        overflow.append(false).unwrap();
    }
    let mapping: ArrayRef = Arc::new(mapping.finish());
    let overflow: ArrayRef = Arc::new(overflow.finish());
    let fields = Fields::from(vec![
        Field::new(FIELD_MAPPING, mapping.data_type().clone(), true),
        Field::new("__col_0", ArrowType::Int64, true),
        Field::new("__col_1", ArrowType::Int64, true),
        Field::new(OVERFLOW, overflow.data_type().clone(), true),
    ]);
    Arc::new(
        StructArray::try_new(
            fields,
            vec![mapping, col0, col1, overflow],
            Some(NullBuffer::from(vec![true, false, true, true])),
        )
        .unwrap(),
    )
}

fn entries(map: &ArrayRef, row: usize) -> Vec<(String, Option<i64>)> {
    let m = map.as_map();
    let o = m.value_offsets();
    (o[row] as usize..o[row + 1] as usize)
        .map(|i| {
            let v = m.values().as_primitive::<Int64Type>();
            (
                m.keys().as_string::<i32>().value(i).to_string(),
                (!v.is_null(i)).then(|| v.value(i)),
            )
        })
        .collect()
}

#[test]
fn rows_rebuild_in_javas_entry_order_for_every_dictionary_compression() {
    for compression in ["zstd", "lz4", "none"] {
        let field = Field::new("m", ArrowType::Null, true).with_metadata(metadata(compression));
        let layout = SharedMapLayout::from_field(&field, "f.parquet")
            .unwrap()
            .unwrap();
        assert_eq!(layout.num_columns, 2);
        let map = layout.assemble(&physical(), "f.parquet", "m").unwrap();
        assert_eq!(
            entries(&map, 0),
            [
                ("a".into(), Some(1)),
                ("c".into(), None),
                ("z".into(), Some(9))
            ],
            "{compression}"
        );
        assert!(map.is_null(1));
        assert!(entries(&map, 2).is_empty());
        assert_eq!(entries(&map, 3), [("b".into(), Some(22))]);
    }
}

#[test]
fn other_fields_and_bad_metadata() {
    let plain = Field::new("m", ArrowType::Null, true);
    assert_eq!(SharedMapLayout::from_field(&plain, "f").unwrap(), None);
    let mut m = metadata("zstd");
    m.remove(NUM_COLUMNS);
    let e = SharedMapLayout::from_field(&plain.clone().with_metadata(m), "f.parquet").unwrap_err();
    assert!(
        matches!(e, Error::Corrupt { .. }) && e.to_string().contains(NUM_COLUMNS),
        "{e}"
    );
    let mut m = metadata("none");
    m.insert(VERSION.into(), "2".into());
    let e = SharedMapLayout::from_field(&plain.clone().with_metadata(m), "f.parquet").unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    // A mapping of the wrong width is corrupt, naming the column.
    let mut m = metadata("none");
    m.insert(NUM_COLUMNS.into(), "3".into());
    let layout = SharedMapLayout::from_field(&plain.with_metadata(m), "f.parquet")
        .unwrap()
        .unwrap();
    let e = layout.assemble(&physical(), "f.parquet", "m").unwrap_err();
    assert!(e.to_string().contains("__col_2"), "{e}");
}
