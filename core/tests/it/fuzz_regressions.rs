//! Regression tests for the inputs the fuzz targets (`fuzz/`) found crashing, minimized with
//! `cargo fuzz tmin` and checked in under `core/tests/data/fuzz/<target>/`. Each input must
//! give the precise error (path and expectation), never a panic; and every checked-in input
//! is also run through the same calls as its fuzz target.

use std::path::{Path, PathBuf};

use paimon_kernel::Error;
use paimon_kernel::format::parquet::{decode_parquet_footer_tail, decode_parquet_metadata};
use paimon_kernel::spec::{decode_index_manifest, decode_manifest, decode_manifest_list};

fn data_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz")
        .join(target)
}

fn input(target: &str, name: &str) -> Vec<u8> {
    let path = data_dir(target).join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every checked-in input of `target`, sorted by name.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let Ok(dir) = std::fs::read_dir(data_dir(target)) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = dir
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// The `parquet_footer` fuzz target's calls.
fn parquet_footer(data: &[u8]) {
    let size = data.len() as u64;
    if let Some(last8) = data.len().checked_sub(8).and_then(|s| data.get(s..)) {
        let _ = decode_parquet_footer_tail("fuzz.parquet", size, last8);
    }
    let _ = decode_parquet_metadata("fuzz.parquet", size, data);
}

/// The `avro_manifest` fuzz target's calls.
fn avro_manifest(data: &[u8]) {
    let _ = decode_manifest_list(data, "manifest/manifest-list-fuzz");
    let _ = decode_manifest(data, "manifest/manifest-fuzz");
    let _ = decode_index_manifest(data, "manifest/index-manifest-fuzz");
}

fn assert_corrupt(result: Result<impl std::fmt::Debug, Error>, want_path: &str, want: &str) {
    match result {
        Err(Error::Corrupt { path, reason, .. }) => {
            assert_eq!(path, want_path);
            assert!(reason.contains(want), "reason {reason:?} lacks {want:?}");
        }
        other => panic!("expected a Corrupt error, got {other:?}"),
    }
}

#[test]
fn parquet_footer_negative_column_chunk_offset() {
    // A footer whose column chunk has a negative data page offset: the parquet crate's
    // `ColumnChunkMetaData::byte_range` asserts on it; we must reject it first.
    let data = input("parquet_footer", "negative-column-chunk-offset");
    let got = decode_parquet_metadata("fuzz.parquet", data.len() as u64, &data);
    assert_corrupt(got, "fuzz.parquet", "negative offset");
}

#[test]
fn avro_manifest_header_map_huge_count() {
    // A manifest whose container header's metadata map announces a block of millions of
    // entries in a file of 2 KB: apache-avro 0.21 reserves them up front (gigabytes), so the
    // header is checked before it is handed over.
    let data = input("avro_manifest", "header-map-huge-count");
    let got = decode_manifest(&data, "manifest/manifest-fuzz");
    assert_corrupt(got, "manifest/manifest-fuzz", "metadata map block of");
    let got = decode_manifest_list(&data, "manifest/manifest-list-fuzz");
    assert_corrupt(got, "manifest/manifest-list-fuzz", "metadata map block of");
}

#[test]
fn avro_manifest_schema_invalid_record_name() {
    // A writer schema whose record name is not a valid Avro name: apache-avro 0.21 unwraps
    // the name check and panics; the decoder must answer an error on the file instead.
    let data = input("avro_manifest", "schema-invalid-record-name");
    let got = decode_manifest(&data, "manifest/manifest-fuzz");
    assert_corrupt(got, "manifest/manifest-fuzz", "bad Avro container");
}

#[test]
fn every_checked_in_input_runs_without_panic() {
    let found = inputs("parquet_footer");
    assert!(!found.is_empty());
    for (_, data) in found {
        parquet_footer(&data);
    }
    let found = inputs("avro_manifest");
    assert!(!found.is_empty());
    for (_, data) in found {
        avro_manifest(&data);
    }
}
