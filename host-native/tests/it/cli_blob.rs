//! `paimon-kernel blob` and `scan --row-ids / --blob-as-descriptor` over the data-evolution
//! corpus tables, checked against the expected `latest-with-row-id` reads.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::run;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn with_row_id_rows(table: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(corpus().join(format!("{table}.expected.json"))).unwrap();
    let exp: Value = serde_json::from_str(&text).unwrap();
    exp["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "latest-with-row-id")
        .unwrap()["rows"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn blob_writes_each_blob_of_the_expected_reads() {
    let mut checked = 0;
    for (table, columns) in [
        ("blob_single", &["data"][..]),
        ("blob_update", &["data"][..]),
        ("blob_multi", &["thumb", "full"][..]),
    ] {
        let dir = corpus().join("corpus.db").join(table);
        let dir = dir.to_str().unwrap();
        for row in with_row_id_rows(table) {
            let id = row["_ROW_ID"].as_i64().unwrap().to_string();
            for column in columns {
                let out = run(&["blob", dir, "--row-id", &id, "--column", column]);
                let want = &row[*column];
                if want.is_null() {
                    assert!(!out.status.success(), "{table} row {id} {column}");
                    assert!(
                        String::from_utf8_lossy(&out.stderr).contains("is NULL"),
                        "{table} row {id}"
                    );
                    continue;
                }
                assert!(
                    out.status.success(),
                    "{table} row {id}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(out.stdout.len() as u64, want["len"].as_u64().unwrap());
                let sha: String = Sha256::digest(&out.stdout)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                assert_eq!(sha, want["sha256"].as_str().unwrap(), "{table} row {id}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn scan_row_ids_returns_the_rows_with_those_ids() {
    for table in [
        "blob_update",
        "de_update",
        "de_dv_delete",
        "append_row_tracking",
    ] {
        let dir = corpus().join("corpus.db").join(table);
        let out = run(&[
            "scan",
            dir.to_str().unwrap(),
            "--row-ids",
            "1-3,9",
            "--columns",
            "_ROW_ID",
            "--format",
            "jsonl",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut got: Vec<i64> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["_ROW_ID"]
                    .as_i64()
                    .unwrap()
            })
            .collect();
        got.sort_unstable();
        let mut want: Vec<i64> = with_row_id_rows(table)
            .iter()
            .map(|r| r["_ROW_ID"].as_i64().unwrap())
            .filter(|id| matches!(id, 1..=3 | 9))
            .collect();
        want.sort_unstable();
        assert_eq!(got, want, "{table}");
    }
    let dir = corpus().join("corpus.db").join("blob_single");
    let out = run(&["scan", dir.to_str().unwrap(), "--row-ids", "3-1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--row-ids"));
}

#[test]
fn scan_blob_as_descriptor_returns_descriptors_into_the_blob_files() {
    let dir = corpus().join("corpus.db").join("blob_single");
    let out = run(&[
        "scan",
        dir.to_str().unwrap(),
        "--columns",
        "_ROW_ID,data",
        "--blob-as-descriptor",
        "--row-ids",
        "7",
        "--format",
        "jsonl",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hex = line["data"].as_str().unwrap();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let d = paimon_kernel::format::blob_descriptor::BlobDescriptor::deserialize(&bytes).unwrap();
    assert!(d.uri().ends_with(".blob"), "{}", d.uri());
    assert!(d.uri().starts_with("file://"), "{}", d.uri());
    assert_eq!(d.length(), 4096);
}

/// Sum of the sizes of the files under `dir`, recursively.
fn tree_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                tree_size(&e.path())
            } else {
                e.metadata().unwrap().len()
            }
        })
        .sum()
}

/// `(requests, bytes fetched)` from an `--io-stats` line on stderr.
fn io_stats(stderr: &[u8]) -> (u64, u64) {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().find(|l| l.starts_with("io: ")).unwrap();
    let num_before = |what: &str| -> u64 {
        let head = &line[..line.find(what).unwrap()];
        head.trim_end().rsplit(' ').next().unwrap().parse().unwrap()
    };
    (num_before(" requests"), num_before(" bytes fetched"))
}

#[test]
fn blob_and_scan_print_io_stats_and_blob_reads_only_the_record_and_the_tail() {
    // blob_single row id 8: the 65,536-byte blob (record of 65,552 bytes) in a .blob file of
    // about 333 KB; the planning reads snapshot, schema and manifests only.
    let dir = corpus().join("corpus.db").join("blob_single");
    let metadata: u64 = ["snapshot", "schema", "manifest"]
        .iter()
        .map(|d| tree_size(&dir.join(d)))
        .sum();
    let out = run(&[
        "blob",
        dir.to_str().unwrap(),
        "--row-id",
        "8",
        "--column",
        "data",
        "--io-stats",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), 65_536);
    let (requests, bytes) = io_stats(&out.stderr);
    assert!(bytes >= 65_552, "{bytes}");
    assert!(
        bytes <= 65_552 + 16 * 1024 + metadata,
        "{bytes} > record + tail + {metadata}"
    );
    assert!(requests >= 2, "{requests}");
    // scan: every blob byte of the table once.
    let blobs: u64 = std::fs::read_dir(dir.join("bucket-0"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".blob"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let out = run(&[
        "scan",
        dir.to_str().unwrap(),
        "--format",
        "arrow",
        "--output",
        "/dev/null",
        "--io-stats",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, bytes) = io_stats(&out.stderr);
    assert!(bytes > blobs * 9 / 10, "{bytes} of {blobs} blob bytes");
    // At most the table once, plus each .blob file's tail (read before its records).
    let most = tree_size(&dir) + 2 * 16 * 1024;
    assert!(bytes <= most, "{bytes} > {most}");
}

/// `blob-descriptor` prints a file reference that `write` copies in: the `blob` read of the
/// written row gives the file's bytes (whole, and a range).
#[test]
fn blob_descriptor_references_are_written_by_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("photo.bin");
    let bytes: Vec<u8> = (0..70_000u32).map(|i| (i * 13 + i / 256) as u8).collect();
    std::fs::write(&src, &bytes).unwrap();
    let table = tmp.path().join("t");
    let schema = tmp.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
            "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}"#,
    )
    .unwrap();
    let t = table.to_str().unwrap();
    assert!(
        run(&["create", t, "--schema", schema.to_str().unwrap()])
            .status
            .success()
    );
    let hex = |args: &[&str]| {
        let out = run(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let whole = hex(&["blob-descriptor", src.to_str().unwrap()]);
    let part = hex(&[
        "blob-descriptor",
        &format!("file:{}", src.display()),
        "--offset",
        "100",
        "--length",
        "50",
    ]);
    let input = tmp.path().join("rows.jsonl");
    std::fs::write(
        &input,
        format!("{{\"id\": 1, \"b\": \"{whole}\"}}\n{{\"id\": 2, \"b\": \"{part}\"}}\n"),
    )
    .unwrap();
    let out = run(&["write", t, "--input", input.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (row_id, want) in [("0", &bytes[..]), ("1", &bytes[100..150])] {
        let out = run(&["blob", t, "--row-id", row_id, "--column", "b"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout == want, "row id {row_id}");
    }
}
