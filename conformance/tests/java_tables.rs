//! Tables written by Java Paimon (`conformance/java-tables`, see its README): Paimon 0.9.0
//! Avro manifests, 1.4.2 ORC and Parquet manifests (`manifest.format`), and a 1.4.2 table with
//! a branch and `scan.fallback-branch`. Every read of every `<table>.expected.json` (rows
//! captured with Java 1.4.2) is done through the CLI, `paimon-kernel scan TABLE --format
//! arrow ARGS...`, and compared as canonical rows in any order. The manifest files themselves
//! are also decoded one by one through the core API.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_ipc::reader::StreamReader;
use serde_json::Value;

use paimon_kernel::canonical;
use paimon_kernel::spec::{decode_index_manifest, decode_manifest, decode_manifest_list};
use support::{binary, check_rows, warehouse_tables};

fn java_tables() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("java-tables")
}

/// Canonical rows of `paimon-kernel scan DIR --format arrow ARGS...`.
fn scan_rows(dir: &Path, args: &[String]) -> Result<Vec<Value>, String> {
    let out = Command::new(binary())
        .arg("scan")
        .arg(dir)
        .args(["--format", "arrow"])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary().display()))?;
    if !out.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let reader = StreamReader::try_new(std::io::Cursor::new(out.stdout), None)
        .map_err(|e| format!("stdout is not an Arrow IPC stream: {e}"))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| format!("bad Arrow IPC batch: {e}"))?;
        rows.extend(canonical::rows(&batch).map_err(|e| format!("rendering rows: {e}"))?);
    }
    Ok(rows)
}

#[test]
fn every_read_of_the_java_tables_matches_java() {
    let tables = warehouse_tables(&java_tables());
    assert_eq!(tables.len(), 7, "tables in {}", java_tables().display());
    let mut failures = Vec::new();
    let mut reads = 0;
    for t in &tables {
        let mut all = vec![(
            "latest".to_string(),
            Vec::new(),
            t.expected["rows"].as_array().cloned().unwrap(),
        )];
        for r in t.expected["additional_reads"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let args: Vec<String> = r["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            all.push((
                r["label"].as_str().unwrap().to_string(),
                args,
                r["rows"].as_array().cloned().unwrap(),
            ));
        }
        for (label, args, want) in all {
            reads += 1;
            assert!(!want.is_empty(), "{} [{label}]: no expected rows", t.name);
            let outcome =
                scan_rows(&t.dir, &args).and_then(|got| check_rows(&t.name, &label, &got, &want));
            if let Err(e) = outcome {
                failures.push(format!("{e}\n  args: {args:?}"));
            }
        }
    }
    println!(
        "{} java tables, {reads} reads, {} failed",
        tables.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rows of the fallback table as JSON text, sorted.
fn sorted_text(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(Value::to_string).collect();
    v.sort();
    v
}

/// The branch's own tag (`branch/branch-b1/tag/tag-bt`, b1's snapshot 3, its latest). Java
/// 1.4.2 cannot read it through the `branch` dynamic option ("Tag 'bt' doesn't exist"), so it
/// is checked against Java's rows of the branch's latest snapshot.
#[test]
fn a_branch_tag_reads_the_branch_snapshot_it_pins() {
    let dir = java_tables().join("p142_fallback");
    let expected: Value = serde_json::from_slice(
        &std::fs::read(java_tables().join("p142_fallback.expected.json")).unwrap(),
    )
    .unwrap();
    let branch_latest = expected["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "branch b1")
        .unwrap()["rows"]
        .as_array()
        .cloned()
        .unwrap();
    let got = scan_rows(
        &dir,
        &["--branch".into(), "b1".into(), "--tag".into(), "bt".into()],
    )
    .unwrap();
    assert_eq!(sorted_text(&got), sorted_text(&branch_latest));
    // The main branch has no tag bt.
    let err = scan_rows(&dir, &["--tag".into(), "bt".into()]).unwrap_err();
    assert!(err.contains("bt"), "{err}");
    // A branch that does not exist is an error naming it.
    let err = scan_rows(&dir, &["--branch".into(), "nope".into()]).unwrap_err();
    assert!(err.contains("branch nope"), "{err}");
}

/// Filters and limits apply to both parts of a fallback read: `id > 3` keeps main's d1 row 6
/// and b1's d2 row 5 and d3 row 4; a limit of 4 stops inside the fallback part.
#[test]
fn fallback_reads_filter_and_limit_across_both_branches() {
    let dir = java_tables().join("p142_fallback");
    let got = scan_rows(&dir, &["--where".into(), "id > 3".into()]).unwrap();
    assert_eq!(
        sorted_text(&got),
        vec![
            r#"{"dt":"d1","id":6,"v":"main-6"}"#,
            r#"{"dt":"d2","id":5,"v":"b1-5"}"#,
            r#"{"dt":"d3","id":4,"v":"b1-4"}"#,
        ]
    );
    let got = scan_rows(&dir, &["--limit".into(), "4".into()]).unwrap();
    assert_eq!(got.len(), 4);
    // Partition filters: d2 only exists in the fallback branch.
    let got = scan_rows(&dir, &["--where".into(), "dt = 'd2'".into()]).unwrap();
    assert_eq!(
        sorted_text(&got),
        vec![
            r#"{"dt":"d2","id":3,"v":"b1-3x"}"#,
            r#"{"dt":"d2","id":5,"v":"b1-5"}"#,
        ]
    );
    // Projection.
    let got = scan_rows(&dir, &["--columns".into(), "v".into()]).unwrap();
    assert_eq!(got.len(), 6);
    assert!(got.iter().any(|r| r["v"] == "b1-4"), "{got:?}");
}

/// Every manifest-family file of every Java table decodes through the core API, whatever its
/// container (Avro, ORC, Parquet), with the entry counts the manifest lists announce.
#[test]
fn every_manifest_file_of_the_java_tables_decodes() {
    let mut counts = [0usize; 3];
    for t in warehouse_tables(&java_tables()) {
        let dir = t.dir.join("manifest");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut announced = std::collections::BTreeMap::new();
        for name in names.iter().filter(|n| n.starts_with("manifest-list-")) {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            for m in decode_manifest_list(&bytes, name).unwrap_or_else(|e| panic!("{e}")) {
                announced.insert(m.file_name.clone(), m.num_added_files + m.num_deleted_files);
            }
            counts[0] += 1;
        }
        for name in names
            .iter()
            .filter(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let entries = decode_manifest(&bytes, name).unwrap_or_else(|e| panic!("{e}"));
            assert!(!entries.is_empty(), "{name}");
            if let Some(n) = announced.get(name) {
                assert_eq!(*n, entries.len() as i64, "{}: {name}", t.name);
            }
            for e in &entries {
                assert!(e.file.file_name.starts_with("data-"), "{name}: {e:?}");
                assert!(e.file.row_count > 0, "{name}: {e:?}");
            }
            counts[1] += 1;
        }
        for name in names.iter().filter(|n| n.starts_with("index-manifest-")) {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let entries = decode_index_manifest(&bytes, name).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                entries.iter().all(|e| e.index_file.index_type == "HASH"),
                "{name}: {entries:?}"
            );
            counts[2] += 1;
        }
    }
    // Manifest lists, manifests and (dynamic-bucket primary-key tables) index manifests of
    // all three containers.
    assert!(counts.iter().all(|c| *c >= 6), "{counts:?}");
}

/// Copy a directory tree.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// `scan.primary-branch = b1` instead of the fallback option (set with our `alter`): b1's
/// partitions (d1, d2, d3: all of them) come from b1, so the read equals b1's. Java 1.4.2's
/// reader gave the same five rows on this table (`/work/java-check/read`, by hand).
#[test]
fn a_primary_branch_is_read_first() {
    let dir = std::env::temp_dir().join(format!("java_tables_primary_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&java_tables().join("p142_fallback"), &dir);
    let out = Command::new(binary())
        .arg("alter")
        .arg(&dir)
        .args([
            "--reset",
            "scan.fallback-branch",
            "--set",
            "scan.primary-branch=b1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: Value = serde_json::from_slice(
        &std::fs::read(java_tables().join("p142_fallback.expected.json")).unwrap(),
    )
    .unwrap();
    let branch_latest = expected["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "branch b1")
        .unwrap()["rows"]
        .as_array()
        .cloned()
        .unwrap();
    let got = scan_rows(&dir, &[]).unwrap();
    assert_eq!(sorted_text(&got), sorted_text(&branch_latest));
    std::fs::remove_dir_all(&dir).unwrap();
}
