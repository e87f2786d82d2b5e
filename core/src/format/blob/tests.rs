use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use sha2::{Digest, Sha256};

use super::*;
use crate::io::{IoOp, Machine, MemoryStore, Step};
use crate::util::{hex, unhex};

fn h(s: &str) -> Vec<u8> {
    unhex(&s.split_whitespace().collect::<String>()).unwrap()
}

const RAW_GOLDEN: &str = "
cf114e58 696e6c696e65 1600000000000000 2960c8e9
cf114e58 64657363726970746f72 1a00000000000000 3f69146b
2c083501 04000000 01";

const ARRAY_GOLDEN: &str = "
cf114e58 424342410100000000 00000000 1d00000000000000 9bd49157
cf114e58 42434241 01 04000000 696e6c696e65 64657363726970746f72 0c0d0214 04000000 3100000000000000 d0830771
3a286301 04000000 01";

const MAP_GOLDEN: &str = "
cf114e58 4243424d 01 00000000 00000000 00000000 2100000000000000 8360591e
cf114e58 4243424d 01 04000000 696e6c696e65 64657363726970746f72 64617461 64657363726970746f72
         01020c08 0102080c 04000000 04000000 4700000000000000 6c9f5981
424c8f0101 05000000 01";

#[test]
fn delta_varint_vectors() {
    let cases: &[(&[i64], &str)] = &[
        (&[42], "54"),
        (&[80, 50, 90, 80, 70], "a0013b501313"),
        (&[64], "8001"),
        (&[-64], "7f"),
        (&[8192], "808001"),
        (&[-8192], "ff7f"),
        (&[i64::MIN], "ffffffffffffffffff01"),
        (&[i64::MAX], "feffffffffffffffff01"),
        (&[i64::MAX, i64::MIN], "feffffffffffffffff0102"),
        (&[i64::MIN, i64::MAX], "ffffffffffffffffff0101"),
        (&[], ""),
    ];
    for (values, encoded) in cases {
        assert_eq!(hex(&encode_delta_varint(values)), *encoded, "{values:?}");
        assert_eq!(
            decode_delta_varint(&h(encoded), "x").unwrap(),
            values.to_vec()
        );
    }
    let e = decode_delta_varint(&h("808080"), "idx").unwrap_err();
    assert!(e.to_string().contains("unexpected end of input"), "{e}");
    assert!(e.to_string().contains("idx"), "{e}");
    let e = decode_delta_varint(&[0x80; 11], "idx").unwrap_err();
    assert!(e.to_string().contains("overflow"), "{e}");
}

#[test]
fn raw_golden_bytes_both_directions() {
    let mut w = BlobFileWriter::new();
    assert_eq!(w.push_payload(b"inline"), 4..10);
    assert_eq!(w.push_payload(b"descriptor"), 26..36);
    w.push_null();
    w.push_placeholder();
    let bytes = w.finish().unwrap();
    assert_eq!(hex(&bytes), hex(&h(RAW_GOLDEN)));
    assert_eq!(bytes.len(), 57);

    // The Arrow column encoder: the placeholder comes only from the mask.
    let values = LargeBinaryArray::from(vec![
        Some(b"inline".as_ref()),
        Some(b"descriptor".as_ref()),
        None,
        None,
    ]);
    let mask = BooleanBuffer::from(vec![false, false, false, true]);
    assert_eq!(encode_blob_column(&values, Some(&mask)).unwrap(), bytes);

    let index = decode_blob_file_index(&bytes, "f.blob").unwrap();
    assert_eq!(
        index.entries(),
        &[
            BlobEntry::Record {
                offset_bytes: 0,
                len_bytes: 22
            },
            BlobEntry::Record {
                offset_bytes: 22,
                len_bytes: 26
            },
            BlobEntry::Null,
            BlobEntry::Placeholder,
        ]
    );
    let opts = BlobReadOptions {
        placeholders: PlaceholderPolicy::Mask,
        ..Default::default()
    };
    let rows = decode_blob_rows(&bytes, &index, BlobElementKind::Blob, None, &opts).unwrap();
    let v = rows.values.as_binary::<i64>();
    assert_eq!(v.value(0), b"inline");
    assert_eq!(v.value(1), b"descriptor");
    assert!(v.is_null(2) && v.is_null(3));
    assert_eq!(
        rows.placeholders.unwrap().iter().collect::<Vec<_>>(),
        vec![false, false, false, true]
    );
    assert_eq!(rows.positions, vec![0, 1, 2, 3]);

    // Strict mode names the file and the row.
    let e = decode_blob_rows(
        &bytes,
        &index,
        BlobElementKind::Blob,
        None,
        &BlobReadOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("f.blob") && e.to_string().contains("row 3"),
        "{e}"
    );
    // Without the placeholder row, strict mode reads fine and reports no mask.
    let rows = decode_blob_rows(
        &bytes,
        &index,
        BlobElementKind::Blob,
        Some(&[1, 2]),
        &BlobReadOptions::default(),
    )
    .unwrap();
    assert_eq!(rows.positions, vec![1, 2]);
    assert!(rows.placeholders.is_none());
    assert_eq!(rows.values.as_binary::<i64>().value(0), b"descriptor");
}

#[test]
fn array_golden_bytes_both_directions() {
    let mut w = BlobFileWriter::new();
    w.push_payload(&encode_array_payload(&[]));
    w.push_payload(&encode_array_payload(&[
        Some(b"inline"),
        None,
        Some(b""),
        Some(b"descriptor"),
    ]));
    w.push_null();
    w.push_placeholder();
    let bytes = w.finish().unwrap();
    assert_eq!(hex(&bytes), hex(&h(ARRAY_GOLDEN)));

    let index = decode_blob_file_index(&bytes, "a.blob").unwrap();
    let opts = BlobReadOptions {
        placeholders: PlaceholderPolicy::Mask,
        ..Default::default()
    };
    let rows = decode_blob_rows(&bytes, &index, BlobElementKind::Array, None, &opts).unwrap();
    assert_eq!(
        rows.values.data_type(),
        &BlobElementKind::Array.arrow_type()
    );
    let list = rows.values.as_list::<i32>();
    assert_eq!(list.value(0).len(), 0);
    assert!(!list.is_null(0));
    let second = list.value(1);
    let items = second.as_binary::<i64>();
    assert_eq!(items.len(), 4);
    assert_eq!(items.value(0), b"inline");
    assert!(items.is_null(1));
    assert!(!items.is_null(2) && items.value(2).is_empty());
    assert_eq!(items.value(3), b"descriptor");
    assert!(list.is_null(2) && list.is_null(3));
    assert!(rows.placeholders.unwrap().value(3));
}

#[test]
fn map_golden_bytes_both_directions() {
    let mut w = BlobFileWriter::new();
    w.push_payload(&encode_map_payload(&[]).unwrap());
    w.push_payload(
        &encode_map_payload(&[
            (None, None),
            (Some(b""), Some(b"")),
            (Some(b"inline"), Some(b"data")),
            (Some(b"descriptor"), Some(b"descriptor")),
        ])
        .unwrap(),
    );
    w.push_null();
    w.push_placeholder();
    let bytes = w.finish().unwrap();
    assert_eq!(hex(&bytes), hex(&h(MAP_GOLDEN)));

    let index = decode_blob_file_index(&bytes, "m.blob").unwrap();
    let rec = &bytes[index.entries()[1].payload_range().unwrap().start as usize
        ..index.entries()[1].payload_range().unwrap().end as usize];
    let entries = decode_map_payload(rec, BlobMapKeyKind::String, "m.blob", 1).unwrap();
    let key = |i: usize| entries[i].0.clone().map(|r| rec[r].to_vec());
    let val = |i: usize| entries[i].1.clone().map(|r| rec[r].to_vec());
    assert_eq!((key(0), val(0)), (None, None));
    assert_eq!((key(1), val(1)), (Some(vec![]), Some(vec![])));
    assert_eq!(
        (key(2), val(2)),
        (Some(b"inline".to_vec()), Some(b"data".to_vec()))
    );
    assert_eq!(key(3), Some(b"descriptor".to_vec()));

    // Arrow maps cannot hold the null key of row 1; the empty map and nulls decode.
    let opts = BlobReadOptions {
        placeholders: PlaceholderPolicy::Mask,
        ..Default::default()
    };
    let kind = BlobElementKind::Map(BlobMapKeyKind::String);
    let e = decode_blob_rows(&bytes, &index, kind, None, &opts).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    let rows = decode_blob_rows(&bytes, &index, kind, Some(&[0, 2, 3]), &opts).unwrap();
    let map = rows.values.as_map();
    assert_eq!(map.value_length(0), 0);
    assert!(!map.is_null(0) && map.is_null(1) && map.is_null(2));

    // Duplicate keys are refused by the encoder.
    assert!(encode_map_payload(&[(None, None), (None, Some(b"x"))]).is_err());
    assert!(encode_map_payload(&[(Some(b"k"), None), (Some(b"k"), Some(b"x"))]).is_err());
}

#[test]
fn map_with_int_keys_decodes_to_arrow() {
    let mut w = BlobFileWriter::new();
    let k1 = 7i32.to_le_bytes();
    let k2 = (-1i32).to_le_bytes();
    w.push_payload(&encode_map_payload(&[(Some(&k1), Some(b"a")), (Some(&k2), None)]).unwrap());
    let bytes = w.finish().unwrap();
    let index = decode_blob_file_index(&bytes, "m.blob").unwrap();
    let kind = BlobElementKind::Map(BlobMapKeyKind::Int);
    let rows = decode_blob_rows(&bytes, &index, kind, None, &Default::default()).unwrap();
    let map = rows.values.as_map();
    let keys = map.keys().as_primitive::<Int32Type>();
    assert_eq!(keys.values().to_vec(), vec![7, -1]);
    let vals = map.values().as_binary::<i64>();
    assert_eq!(vals.value(0), b"a");
    assert!(vals.is_null(1));
    // A 3-byte key under an INT key type is corrupt.
    let mut w = BlobFileWriter::new();
    w.push_payload(&encode_map_payload(&[(Some(b"abc"), Some(b"a"))]).unwrap());
    let bytes = w.finish().unwrap();
    let index = decode_blob_file_index(&bytes, "m.blob").unwrap();
    let e = decode_blob_rows(&bytes, &index, kind, None, &Default::default()).unwrap_err();
    assert!(e.to_string().contains("map key 0 of row 0"), "{e}");
}

fn file_with(data: &[u8], index: &[i64]) -> Vec<u8> {
    let idx = encode_delta_varint(index);
    let mut f = data.to_vec();
    f.extend_from_slice(&idx);
    f.extend_from_slice(&(idx.len() as i32).to_le_bytes());
    f.push(1);
    f
}

#[test]
fn reader_edge_cases() {
    let err = |f: &[u8]| decode_blob_file_index(f, "e.blob").unwrap_err().to_string();
    for n in 0..5 {
        assert!(err(&vec![0u8; n]).contains("smaller than footer"));
    }
    assert!(err(&h("ffffffff01")).contains("invalid index length -1"));
    assert!(err(&h("0100000001")).contains("invalid index length 1"));
    assert!(err(&h("0000000002")).contains("unsupported version"));
    assert!(err(&h("80 01000000 01")).contains("invalid index"));
    for bad in [-3i64, 0, 15] {
        assert!(err(&file_with(&[], &[bad])).contains("invalid record length"));
    }
    assert!(err(&file_with(&[0; 15], &[16])).contains("exceeds the data region"));
    assert!(
        err(&file_with(&[0; 17], &[16]))
            .contains("indexed records use 16 bytes, but data region contains 17 bytes")
    );
    assert_eq!(
        decode_blob_file_index(&h("0000000001"), "e")
            .unwrap()
            .row_count(),
        0
    );
    let idx = decode_blob_file_index(&file_with(&[0; 16], &[-1, 16, -2]), "e").unwrap();
    assert_eq!(
        idx.entries(),
        &[
            BlobEntry::Null,
            BlobEntry::Record {
                offset_bytes: 0,
                len_bytes: 16
            },
            BlobEntry::Placeholder
        ]
    );
    assert_eq!((idx.null_count(), idx.placeholder_count()), (1, 1));
    let e = idx.check_row_count(4).unwrap_err().to_string();
    assert!(
        e.contains("index has 3 rows") && e.contains("4") && e.contains("e"),
        "{e}"
    );
}

#[test]
fn selection_reports_original_positions() {
    let mut w = BlobFileWriter::new();
    for _ in 0..3 {
        w.push_payload(b"");
    }
    let bytes = w.finish().unwrap();
    let idx = decode_blob_file_index(&bytes, "s").unwrap();
    let rows = decode_blob_rows(
        &bytes,
        &idx,
        BlobElementKind::Blob,
        Some(&[0, 2]),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(rows.positions, vec![0, 2]);
    assert_eq!(
        idx.entries()[2],
        BlobEntry::Record {
            offset_bytes: 32,
            len_bytes: 16
        }
    );
    for bad in [&[3u64][..], &[2, 1], &[1, 1]] {
        assert!(
            decode_blob_rows(
                &bytes,
                &idx,
                BlobElementKind::Blob,
                Some(bad),
                &Default::default()
            )
            .is_err()
        );
    }
}

#[test]
fn corrupt_records_name_file_and_row() {
    let good = h(RAW_GOLDEN);
    let idx = decode_blob_file_index(&good, "c.blob").unwrap();
    let read = |f: &[u8]| {
        decode_blob_rows(
            f,
            &idx,
            BlobElementKind::Blob,
            Some(&[1]),
            &Default::default(),
        )
        .unwrap_err()
        .to_string()
    };
    let mut bad_magic = good.clone();
    bad_magic[22] = 0;
    let e = read(&bad_magic);
    assert!(
        e.contains("c.blob") && e.contains("row 1") && e.contains("magic"),
        "{e}"
    );
    let mut bad_crc = good.clone();
    bad_crc[27] ^= 0xff; // payload byte of row 1
    let e = read(&bad_crc);
    assert!(e.contains("CRC mismatch") && e.contains("row 1"), "{e}");
    let mut bad_len = good.clone();
    bad_len[36] = 0x1b; // in-record length of row 1
    let e = read(&bad_len);
    assert!(e.contains("length") && e.contains("row 1"), "{e}");
    // Truncated index: drop one index byte but keep the declared length.
    let mut trunc = good[..52].to_vec();
    trunc.truncate(51);
    trunc.extend_from_slice(&4i32.to_le_bytes());
    trunc.push(1);
    assert!(decode_blob_file_index(&trunc, "c.blob").is_err());
    // A cut varint at the end of the index.
    let f = file_with(&[], &[]);
    let mut cut = vec![0x80];
    cut.extend_from_slice(&1i32.to_le_bytes());
    cut.push(1);
    assert!(
        decode_blob_file_index(&cut, "c.blob")
            .unwrap_err()
            .to_string()
            .contains("unexpected end of input")
    );
    assert_eq!(f.len(), 5);
    // Bad array payloads.
    let mut w = BlobFileWriter::new();
    let mut p = encode_array_payload(&[Some(b"ab")]);
    p[4] = 2;
    w.push_payload(&p);
    let mut q = encode_array_payload(&[Some(b"ab")]);
    q[0] = 0;
    w.push_payload(&q);
    w.push_payload(b"short");
    let f = w.finish().unwrap();
    let idx = decode_blob_file_index(&f, "arr.blob").unwrap();
    for (row, needle) in [(0u64, "version"), (1, "magic"), (2, "fewer than 13")] {
        let e = decode_blob_rows(
            &f,
            &idx,
            BlobElementKind::Array,
            Some(&[row]),
            &Default::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(needle) && e.contains(&format!("row {row}")),
            "{e}"
        );
    }
}

#[test]
fn element_kind_from_data_type() {
    use crate::spec::DataType as T;
    let blob = T::nullable(TypeKind::Blob);
    assert_eq!(
        BlobElementKind::try_from_data_type(&blob).unwrap(),
        BlobElementKind::Blob
    );
    assert_eq!(
        BlobElementKind::try_from_data_type(&T::nullable(TypeKind::Array(Box::new(blob.clone()))))
            .unwrap(),
        BlobElementKind::Array
    );
    let map = T::nullable(TypeKind::Map(
        Box::new(T::not_null(TypeKind::VarChar { length: 10 })),
        Box::new(blob.clone()),
    ));
    assert_eq!(
        BlobElementKind::try_from_data_type(&map).unwrap(),
        BlobElementKind::Map(BlobMapKeyKind::String)
    );
    for bad in [
        T::nullable(TypeKind::Int),
        T::nullable(TypeKind::Array(Box::new(T::nullable(TypeKind::Array(
            Box::new(blob.clone()),
        ))))),
        T::nullable(TypeKind::Map(
            Box::new(T::nullable(TypeKind::Double)),
            Box::new(blob.clone()),
        )),
    ] {
        assert!(BlobElementKind::try_from_data_type(&bad).is_err());
    }
}

/// A store that logs every read so the IO pattern can be asserted.
fn run_logged<T: Send + 'static>(
    store: &MemoryStore,
    machine: Machine<T>,
) -> (Result<Vec<T>>, Vec<String>) {
    let mut m = machine;
    let mut store = store.clone();
    let mut log = Vec::new();
    let mut out = Vec::new();
    loop {
        match m.step() {
            Err(e) => return (Err(e), log),
            Ok(Step::NeedIo(round)) => {
                for r in round {
                    if let IoOp::Read { path, range } = &r.op {
                        log.push(format!("{path} {range:?}"));
                    }
                    let a = store.answer(&r.op);
                    m.provide(r.id, a).unwrap();
                }
            }
            Ok(Step::Emit(x)) => out.push(x),
            Ok(Step::Work(items)) => items.into_iter().for_each(|w| w.run()),
            Ok(Step::Wait) => {}
            Ok(Step::Done) => return (Ok(out), log),
        }
    }
}

#[test]
fn ranged_read_of_one_blob_in_a_large_file() {
    // 3000 rows of 100 bytes: the index (3000 bytes) fits in the 16 KiB tail; 300 rows of
    // 100 KiB: the file is ~30 MB.
    let mut w = BlobFileWriter::new();
    for i in 0..300u32 {
        let mut v = vec![(i % 251) as u8; 100 * 1024];
        v[..4].copy_from_slice(&i.to_le_bytes());
        w.push_payload(&v);
    }
    let bytes = w.finish().unwrap();
    let size = bytes.len() as u64;
    let mut store = MemoryStore::new();
    store.objects.insert("big.blob".into(), Bytes::from(bytes));
    let m: Machine<Vec<u8>> = Machine::once("one", move |io: Io<Vec<u8>>| async move {
        let v = read_blob_value(&io, "big.blob", size, BlobElementKind::Blob, 123).await?;
        Ok(v.map(|a| a.as_binary::<i64>().value(0).to_vec())
            .unwrap_or_default())
    });
    let (out, log) = run_logged(&store, m);
    let v = out.unwrap().remove(0);
    assert_eq!(&v[..4], &123u32.to_le_bytes());
    assert_eq!(v.len(), 100 * 1024);
    assert_eq!(log.len(), 2, "{log:?}");
    let rec = 100 * 1024 + 16;
    assert_eq!(log[1], format!("big.blob {:?}", Some(123 * rec..124 * rec)));

    // A large index needs one more read; adjacent selected records share a read.
    let mut w = BlobFileWriter::new();
    for i in 0..20_000u32 {
        w.push_payload(&i.to_le_bytes());
    }
    let bytes = w.finish().unwrap();
    let size = bytes.len() as u64;
    let mut store = MemoryStore::new();
    store.objects.insert("many.blob".into(), Bytes::from(bytes));
    let m: Machine<Vec<u64>> = Machine::once("sel", move |io: Io<Vec<u64>>| async move {
        let index = read_blob_index(&io, "many.blob", size, Some(20_000)).await?;
        let rows = read_blob_rows(
            &io,
            &index,
            BlobElementKind::Blob,
            Some(&[5, 6, 7, 19_999]),
            &Default::default(),
        )
        .await?;
        let vals = rows.values.as_binary::<i64>();
        Ok((0..vals.len())
            .map(|i| u32::from_le_bytes(vals.value(i).try_into().unwrap()) as u64)
            .collect())
    });
    let (out, log) = run_logged(&store, m);
    assert_eq!(out.unwrap()[0], vec![5, 6, 7, 19_999]);
    assert_eq!(log.len(), 4, "tail, index head, two record runs: {log:?}");
    assert_eq!(log[2], format!("many.blob {:?}", Some(5 * 20..8 * 20)));

    // Wrong expected row count is a precise error.
    let m: Machine<()> = Machine::once("cnt", move |io: Io<()>| async move {
        read_blob_index(&io, "many.blob", size, Some(7)).await?;
        Ok(())
    });
    let (out, _) = run_logged(&store, m);
    let e = out.unwrap_err().to_string();
    assert!(e.contains("many.blob") && e.contains("20000"), "{e}");
}

#[test]
fn descriptor_mode_reads_no_payload() {
    let bytes = h(RAW_GOLDEN);
    let size = bytes.len() as u64;
    let mut store = MemoryStore::new();
    store.objects.insert("t/f.blob".into(), Bytes::from(bytes));
    let m: Machine<BlobRows> = Machine::once("d", move |io: Io<BlobRows>| async move {
        let index = read_blob_index(&io, "t/f.blob", size, Some(4)).await?;
        let opts = BlobReadOptions {
            placeholders: PlaceholderPolicy::Mask,
            values: BlobValueMode::Descriptor {
                uri: "oss://b/t/f.blob".into(),
            },
        };
        read_blob_rows(&io, &index, BlobElementKind::Blob, None, &opts).await
    });
    let (out, log) = run_logged(&store, m);
    assert_eq!(log.len(), 1, "only the tail: {log:?}");
    let rows = out.unwrap().remove(0);
    let v = rows.values.as_binary::<i64>();
    let d0 = BlobDescriptor::deserialize(v.value(0)).unwrap();
    assert_eq!(d0, BlobDescriptor::new("oss://b/t/f.blob", 4, 6));
    let d1 = BlobDescriptor::deserialize(v.value(1)).unwrap();
    assert_eq!((d1.offset(), d1.length()), (26, 10));
    assert!(v.is_null(2) && v.is_null(3));

    // Array elements become descriptors too (the record is read for its element index).
    let bytes = h(ARRAY_GOLDEN);
    let idx = decode_blob_file_index(&bytes, "a").unwrap();
    let opts = BlobReadOptions {
        placeholders: PlaceholderPolicy::Mask,
        values: BlobValueMode::Descriptor { uri: "a".into() },
    };
    let rows = decode_blob_rows(&bytes, &idx, BlobElementKind::Array, Some(&[1]), &opts).unwrap();
    let items = rows.values.as_list::<i32>().value(0);
    let items = items.as_binary::<i64>();
    let d = BlobDescriptor::deserialize(items.value(3)).unwrap();
    let at = d.offset() as usize;
    assert_eq!(&bytes[at..at + d.length() as usize], b"descriptor");
    assert!(items.is_null(1));
}

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn expected(table: &str) -> serde_json::Value {
    let p = corpus_dir().join(format!("{table}.expected.json"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn corpus_file(table: &str, file: &str) -> Vec<u8> {
    std::fs::read(corpus_dir().join("corpus.db").join(table).join(file)).unwrap()
}

#[test]
fn corpus_blob_files_decode_with_expected_counts() {
    let mut checked = 0;
    for table in ["blob_single", "blob_multi", "blob_nested", "blob_update"] {
        let exp = expected(table);
        let fields = exp["fields"].as_array().unwrap();
        for bf in exp["blob_files"].as_array().unwrap() {
            let file = bf["file"].as_str().unwrap();
            let bytes = corpus_file(table, file);
            let index = decode_blob_file_index(&bytes, file).unwrap();
            assert_eq!(index.row_count(), bf["entries"].as_u64().unwrap(), "{file}");
            assert_eq!(
                index.null_count() as u64,
                bf["null_entries"].as_u64().unwrap()
            );
            assert_eq!(
                index.placeholder_count() as u64,
                bf["placeholder_entries"].as_u64().unwrap()
            );
            let col = bf["write_cols"][0].as_str().unwrap();
            let ty = &fields.iter().find(|f| f["name"] == col).unwrap()["type"];
            let kind = if ty == "BLOB" {
                BlobElementKind::Blob
            } else if ty["type"] == "ARRAY" {
                BlobElementKind::Array
            } else {
                BlobElementKind::Map(BlobMapKeyKind::String)
            };
            // Every record verifies (magic, length, CRC) and every payload decodes.
            let opts = BlobReadOptions {
                placeholders: PlaceholderPolicy::Mask,
                ..Default::default()
            };
            let rows = decode_blob_rows(&bytes, &index, kind, None, &opts).unwrap();
            assert_eq!(rows.values.len() as u64, index.row_count());
            assert_eq!(
                rows.values.null_count(),
                index.null_count() + index.placeholder_count()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 12);
}

fn sha(b: &[u8]) -> String {
    hex(&Sha256::digest(b))
}

#[test]
fn corpus_blob_single_sizes_and_sha256() {
    let exp = expected("blob_single");
    let read = exp["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "latest-with-row-id")
        .unwrap();
    let by_row_id: Vec<(i64, serde_json::Value)> = read["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["_ROW_ID"].as_i64().unwrap(), r["data"].clone()))
        .collect();
    let files = exp["files"].as_array().unwrap();
    let mut seen = 0;
    for bf in exp["blob_files"].as_array().unwrap() {
        let file = bf["file"].as_str().unwrap();
        let bytes = corpus_file("blob_single", file);
        // The file size in the data file meta is the file's size.
        let name = file.rsplit('/').next().unwrap();
        assert!(files.iter().any(|f| f["file_path"] == name));
        let index = decode_blob_file_index(&bytes, file).unwrap();
        let size = bytes.len() as u64;
        let first = bf["first_row_id"].as_i64().unwrap();
        // Read through the ranged reader over an in-memory store.
        let mut store = MemoryStore::new();
        store.objects.insert(file.to_string(), Bytes::from(bytes));
        let path = file.to_string();
        let m: Machine<BlobRows> = Machine::once("r", move |io: Io<BlobRows>| async move {
            let index = read_blob_index(&io, &path, size, Some(5)).await?;
            read_blob_rows(
                &io,
                &index,
                BlobElementKind::Blob,
                None,
                &Default::default(),
            )
            .await
        });
        let rows = store.run(m).unwrap().remove(0);
        let v = rows.values.as_binary::<i64>();
        for (i, pos) in rows.positions.iter().enumerate() {
            let row_id = first + *pos as i64;
            let want = &by_row_id.iter().find(|(r, _)| *r == row_id).unwrap().1;
            if want.is_null() {
                assert!(v.is_null(i), "row id {row_id}");
                assert_eq!(index.entries()[*pos as usize], BlobEntry::Null);
            } else {
                assert_eq!(v.value(i).len() as u64, want["len"].as_u64().unwrap());
                assert_eq!(sha(v.value(i)), want["sha256"].as_str().unwrap());
                seen += 1;
            }
        }
    }
    assert_eq!(seen, 8);
}

fn canon_blob(b: &[u8]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    m.insert("len".into(), b.len().into());
    m.insert("sha256".into(), sha(b).into());
    if b.len() <= 64 {
        m.insert("hex".into(), hex(b).into());
    }
    serde_json::Value::Object(m)
}

#[test]
fn corpus_blob_nested_values_match_expected_rows() {
    let exp = expected("blob_nested");
    let read = exp["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "latest-with-row-id")
        .unwrap();
    let rows_exp = read["rows"].as_array().unwrap();
    let got = Arc::new(Mutex::new(0));
    for bf in exp["blob_files"].as_array().unwrap() {
        let file = bf["file"].as_str().unwrap();
        let col = bf["write_cols"][0].as_str().unwrap();
        let bytes = corpus_file("blob_nested", file);
        let index = decode_blob_file_index(&bytes, file).unwrap();
        let kind = if col == "parts" {
            BlobElementKind::Array
        } else {
            BlobElementKind::Map(BlobMapKeyKind::String)
        };
        let rows = decode_blob_rows(&bytes, &index, kind, None, &Default::default()).unwrap();
        for (i, pos) in rows.positions.iter().enumerate() {
            let row_id = bf["first_row_id"].as_i64().unwrap() + *pos as i64;
            let want = &rows_exp
                .iter()
                .find(|r| r["_ROW_ID"].as_i64() == Some(row_id))
                .unwrap()[col];
            let have = if rows.values.is_null(i) {
                serde_json::Value::Null
            } else if col == "parts" {
                let l = rows.values.as_list::<i32>().value(i);
                let b = l.as_binary::<i64>();
                serde_json::Value::Array(
                    (0..b.len())
                        .map(|j| {
                            if b.is_null(j) {
                                serde_json::Value::Null
                            } else {
                                canon_blob(b.value(j))
                            }
                        })
                        .collect(),
                )
            } else {
                let m = rows.values.as_map();
                let s = m.value(i);
                let k = s.column(0).as_string::<i32>();
                let v = s.column(1).as_binary::<i64>();
                serde_json::Value::Array(
                    (0..k.len())
                        .map(|j| {
                            let val = if v.is_null(j) {
                                serde_json::Value::Null
                            } else {
                                canon_blob(v.value(j))
                            };
                            serde_json::json!([k.value(j), val])
                        })
                        .collect(),
                )
            };
            assert_eq!(&have, want, "{file} row {row_id}");
            *got.lock().unwrap() += 1;
        }
    }
    assert_eq!(*got.lock().unwrap(), 10);
}

#[test]
fn mutated_and_truncated_files_never_panic() {
    let kinds = [
        BlobElementKind::Blob,
        BlobElementKind::Array,
        BlobElementKind::Map(BlobMapKeyKind::String),
        BlobElementKind::Map(BlobMapKeyKind::Decimal {
            precision: 20,
            scale: 2,
        }),
        BlobElementKind::Map(BlobMapKeyKind::Boolean),
    ];
    let opts = BlobReadOptions {
        placeholders: PlaceholderPolicy::Mask,
        values: BlobValueMode::Bytes,
    };
    let mut outcomes = [0usize; 2];
    for golden in [RAW_GOLDEN, ARRAY_GOLDEN, MAP_GOLDEN] {
        let good = h(golden);
        let mut variants = Vec::new();
        for i in 0..good.len() {
            for x in [0x01u8, 0x80, 0xff] {
                let mut b = good.clone();
                b[i] ^= x;
                variants.push(b);
            }
            variants.push(good[..i].to_vec());
        }
        for bytes in variants {
            let Ok(index) = decode_blob_file_index(&bytes, "fuzz.blob") else {
                outcomes[0] += 1;
                continue;
            };
            for kind in kinds {
                let r = decode_blob_rows(&bytes, &index, kind, None, &opts);
                outcomes[usize::from(r.is_ok())] += 1;
            }
        }
    }
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}

#[test]
fn corpus_blob_files_reencode_to_identical_bytes() {
    let mut checked = 0;
    for table in ["blob_single", "blob_multi", "blob_nested", "blob_update"] {
        let exp = expected(table);
        for bf in exp["blob_files"].as_array().unwrap() {
            let file = bf["file"].as_str().unwrap();
            let bytes = corpus_file(table, file);
            let index = decode_blob_file_index(&bytes, file).unwrap();
            let col = bf["write_cols"][0].as_str().unwrap();
            let kind = match col {
                "parts" => BlobElementKind::Array,
                "named" => BlobElementKind::Map(BlobMapKeyKind::String),
                _ => BlobElementKind::Blob,
            };
            let opts = BlobReadOptions {
                placeholders: PlaceholderPolicy::Mask,
                ..Default::default()
            };
            let rows = decode_blob_rows(&bytes, &index, kind, None, &opts).unwrap();
            let again =
                encode_blob_array(rows.values.as_ref(), kind, rows.placeholders.as_ref()).unwrap();
            assert!(again == bytes, "{file} re-encodes differently");
            checked += 1;
        }
    }
    assert_eq!(checked, 12);
}

#[test]
fn typed_map_keys_round_trip() {
    use arrow_array::builder::{Decimal128Builder, LargeBinaryBuilder, MapBuilder};
    let p = 20u8;
    let mut b = MapBuilder::new(
        None,
        Decimal128Builder::new()
            .with_precision_and_scale(p, 2)
            .unwrap(),
        LargeBinaryBuilder::new(),
    );
    for (k, v) in [
        (-1i128, "neg"),
        (0, "zero"),
        (128, "x"),
        (-129, "y"),
        (10i128.pow(19), "big"),
    ] {
        b.keys().append_value(k);
        b.values().append_value(v);
    }
    b.append(true).unwrap();
    let map = b.finish();
    let kind = BlobElementKind::Map(BlobMapKeyKind::Decimal {
        precision: p,
        scale: 2,
    });
    let bytes = encode_blob_array(&map, kind, None).unwrap();
    let index = decode_blob_file_index(&bytes, "d").unwrap();
    let rec = index.entries()[0].payload_range().unwrap();
    let payload = &bytes[rec.start as usize..rec.end as usize];
    let entries = decode_map_payload(
        payload,
        BlobMapKeyKind::Decimal {
            precision: p,
            scale: 2,
        },
        "d",
        0,
    )
    .unwrap();
    let key_hex: Vec<String> = entries
        .iter()
        .map(|(k, _)| hex(&payload[k.clone().unwrap()]))
        .collect();
    // Java BigInteger.toByteArray: minimal two's complement.
    assert_eq!(
        key_hex,
        vec!["ff", "00", "0080", "ff7f", "008ac7230489e80000"]
    );
    let rows = decode_blob_rows(&bytes, &index, kind, None, &Default::default()).unwrap();
    assert_eq!(
        rows.values
            .as_map()
            .keys()
            .as_primitive::<arrow_array::types::Decimal128Type>()
            .values()
            .to_vec(),
        vec![-1, 0, 128, -129, 10i128.pow(19)]
    );
    assert_eq!(
        encode_blob_array(rows.values.as_ref(), kind, None).unwrap(),
        bytes
    );
}
