//! `paimon-kernel blob` and `scan --row-ids / --blob-as-descriptor` over the data-evolution
//! corpus tables, checked against the expected `latest-with-row-id` reads.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use sha2::{Digest, Sha256};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(args)
        .output()
        .unwrap()
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
