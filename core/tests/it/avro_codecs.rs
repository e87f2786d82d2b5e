//! Avro codecs `bzip2` and `xz`: data files and manifests written by fastavro
//! (`core/tests/data/avro_codecs/make.py` says how each file was made and which values it holds).

use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use bytes::Bytes;
use paimon_kernel::format::data_file::{FileFormat, decode_data_file};
use paimon_kernel::spec::manifest::decode_manifest;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/avro_codecs")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(name)).unwrap()
}

/// Every column of every batch, checked against the rule of `make.py`: row i has key and `k`
/// = i, sequence number 1000 + i, value kind i % 4, `v` = "v-<i>" (null when i % 7 == 0),
/// `d` = i * 0.5 (null when i % 11 == 0).
fn check_rows(batches: &[RecordBatch]) {
    let mut i = 0i32;
    for b in batches {
        let key = b
            .column_by_name("_KEY_k")
            .unwrap()
            .as_primitive::<Int32Type>();
        let seq = b.column_by_name("_SEQUENCE_NUMBER").unwrap();
        let seq = seq.as_primitive::<Int64Type>();
        let kind = b
            .column_by_name("_VALUE_KIND")
            .unwrap()
            .as_primitive::<Int32Type>();
        let k = b.column_by_name("k").unwrap().as_primitive::<Int32Type>();
        let v = b.column_by_name("v").unwrap().as_string::<i32>();
        let d = b.column_by_name("d").unwrap().as_primitive::<Float64Type>();
        for r in 0..b.num_rows() {
            assert_eq!(key.value(r), i);
            assert_eq!(seq.value(r), 1000 + i64::from(i));
            assert_eq!(kind.value(r), i % 4);
            assert_eq!(k.value(r), i);
            if i % 7 == 0 {
                assert!(v.is_null(r), "row {i}: v");
            } else {
                assert_eq!(v.value(r), format!("v-{i}"));
            }
            if i % 11 == 0 {
                assert!(d.is_null(r), "row {i}: d");
            } else {
                assert_eq!(d.value(r), f64::from(i) * 0.5);
            }
            i += 1;
        }
    }
    assert_eq!(i, 1000, "row count");
}

#[test]
fn bzip2_and_xz_data_files_decode() {
    for codec in ["bzip2", "xz"] {
        let name = format!("data-{codec}.avro");
        let bytes = Bytes::from(read(&name));
        // Whole file at once, and in small batches (rows cross the 11 blocks differently).
        for batch_size in [0, 64] {
            let decoded =
                decode_data_file(bytes.clone(), &name, FileFormat::Avro, None, batch_size)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            check_rows(&decoded.batches);
        }
    }
}

#[test]
fn bzip2_and_xz_corrupt_blocks_are_errors() {
    for codec in ["bzip2", "xz"] {
        let name = format!("data-{codec}.avro");
        let mut bytes = read(&name);
        // Flip bytes in the middle of the first block's compressed data (the header with the
        // schema is well under 600 bytes; the first block is ~1 KB).
        let at = 700.min(bytes.len() / 2);
        for b in &mut bytes[at..at + 8] {
            *b ^= 0x5a;
        }
        let err = decode_data_file(Bytes::from(bytes), &name, FileFormat::Avro, None, 0)
            .expect_err("corrupt block decodes");
        assert!(err.to_string().contains(&name), "{err}");
    }
}

#[test]
fn bzip2_and_xz_manifests_decode_like_the_original() {
    let original_path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/tables/corpus.db/append_avro/manifest")
        .join("manifest-167febd0-b5dc-4d80-bbcb-297435668f37-0");
    let original = std::fs::read(&original_path).unwrap();
    let want = decode_manifest(&original, "original").unwrap();
    assert!(!want.is_empty());
    for codec in ["bzip2", "xz"] {
        let name = format!("manifest-{codec}");
        let got = decode_manifest(&read(&name), &name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, want, "{name}");
    }
}
