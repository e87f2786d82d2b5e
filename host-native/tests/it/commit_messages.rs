//! `write --prepare-only` and `commit --messages`: commit messages as Java
//! `CommitMessageSerializer` bytes between processes (see
//! `conformance/commit-messages/README.md`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use paimon_kernel::commit::serializer::{VERSION, decode_file};

const SCHEMA: &str = r#"{"fields":[{"id":0,"name":"id","type":"BIGINT NOT NULL"},
 {"id":1,"name":"name","type":"STRING"},{"id":2,"name":"dt","type":"STRING NOT NULL"}],
 "partitionKeys":["dt"],"primaryKeys":["dt","id"],"options":{"bucket":"2"}}"#;

fn run(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn sorted_rows(loc: &str) -> Vec<String> {
    let out = run(&["scan", loc, "--format", "jsonl"]);
    let mut rows: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    rows.sort();
    rows
}

fn snapshot_count(table: &Path) -> usize {
    std::fs::read_dir(table.join("snapshot"))
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("snapshot-")
            })
            .count()
        })
        .unwrap_or(0)
}

#[test]
fn prepare_only_then_commit_messages() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    let loc = table.to_str().unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();
    run(&["create", loc, "--schema", schema.to_str().unwrap()]);
    let rows = dir.path().join("rows.jsonl");
    std::fs::write(
        &rows,
        "{\"id\":1,\"name\":\"a\",\"dt\":\"2024-01-01\"}\n\
         {\"id\":2,\"name\":\"b\",\"dt\":\"2024-01-02\"}\n\
         {\"id\":3,\"name\":\"c\",\"dt\":\"2024-01-01\"}\n",
    )
    .unwrap();
    let messages = dir.path().join("messages.bin");
    let msg_path = messages.to_str().unwrap();
    run(&[
        "write",
        loc,
        "--input",
        rows.to_str().unwrap(),
        "--prepare-only",
        msg_path,
    ]);
    assert_eq!(snapshot_count(&table), 0, "prepare-only must not commit");
    let bytes = std::fs::read(&messages).unwrap();
    assert_eq!(bytes[..4], VERSION.to_be_bytes());
    let decoded = decode_file(&bytes, msg_path).unwrap();
    // (2024-01-01: ids 1 and 3, 2024-01-02: id 2) over 2 buckets.
    let files: usize = decoded
        .iter()
        .map(|m| m.data_increment.new_files.len())
        .sum();
    assert_eq!(files, 3);
    assert!(decoded.iter().all(|m| m.total_buckets == Some(2)));
    run(&["commit", loc, "--messages", msg_path, "--commit-user", "u1"]);
    assert_eq!(snapshot_count(&table), 1);
    assert_eq!(
        sorted_rows(loc),
        [
            r#"{"id":1,"name":"a","dt":"2024-01-01"}"#,
            r#"{"id":2,"name":"b","dt":"2024-01-02"}"#,
            r#"{"id":3,"name":"c","dt":"2024-01-01"}"#,
        ]
    );
    // The same user's batch commit is applied once.
    let out = run(&["commit", loc, "--messages", msg_path, "--commit-user", "u1"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("committed nothing"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(snapshot_count(&table), 1);
    // Messages of this table committed to another one: refused before anything is
    // published (their files are not there).
    let other = dir.path().join("other");
    let other_loc = other.to_str().unwrap();
    run(&["create", other_loc, "--schema", schema.to_str().unwrap()]);
    let out = Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(["commit", other_loc, "--messages", msg_path])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3 file(s) that are not in table"), "{err}");
    assert_eq!(snapshot_count(&other), 0);
}

#[test]
fn commits_messages_java_wrote() {
    // Data files and messages written by Java Paimon 1.4.2 (`java-write`, version 11), not
    // committed; see conformance/commit-messages/README.md.
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/commit-messages/java-written");
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    crate::copy_dir(&golden.join("table"), &table);
    let loc = table.to_str().unwrap();
    let messages = golden.join("messages.v11.bin");
    let decoded = decode_file(&std::fs::read(&messages).unwrap(), "messages.v11.bin").unwrap();
    assert_eq!(decoded.len(), 3);
    assert_eq!(snapshot_count(&table), 0);
    run(&["commit", loc, "--messages", messages.to_str().unwrap()]);
    assert_eq!(
        sorted_rows(loc),
        [
            r#"{"id":1,"name":"a","dt":"2024-01-01"}"#,
            r#"{"id":2,"name":"bb","dt":"2024-01-02"}"#,
            r#"{"id":3,"name":"c","dt":"2024-01-01"}"#,
        ]
    );
}
