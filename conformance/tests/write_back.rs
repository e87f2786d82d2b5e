//! The write acceptance check: every table of the corpus is written again by paimon-kernel and
//! must read back with the corpus' expected rows.
//!
//! For each table of the warehouse (`conformance/tables`, or `$PAIMON_WAREHOUSE`): `create` a
//! new table with the latest schema of the original (fields, keys, options), `write` the rows
//! of its latest expected read as JSONL (canonical values; tables with blobs over 64 bytes,
//! whose JSON holds only a hash, write the original's rows as paimon-kernel reads them, as
//! Arrow), then `scan` the new table and compare with those rows. Tables whose kind the writers do not support yet must fail with an
//! error that says "unsupported", and are listed in `conformance/pending-writes.txt` with the
//! reason; any other failure fails the test.
//!
//! Postpone-bucket tables (`bucket = -2`): with `postpone.batch-write-fixed-bucket` (default
//! `true`) a batch write goes straight into real buckets, as Java 2.0's batch writers do, and
//! the table reads back the same with no file in `bucket-postpone`. With the option `false`
//! every row goes into `bucket-postpone`, which batch reads skip until a compaction moves the
//! rows into real buckets (Java and pypaimon alike): the check is then that the write
//! succeeds, every new file lies in a `bucket-postpone` directory, and the read is empty.
//!
//! The written tables land in `$PAIMON_WRITE_BACK_OUT` (default
//! `$CARGO_TARGET_DIR/write-back`, else a temporary directory) as a warehouse of the corpus
//! layout: `corpus.db/<table>/` plus `<table>.expected.json` with the rows, so that
//! `conformance/pypaimon_read_back.py OUT` can check that pypaimon reads them the same.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_ipc::reader::StreamReader;
use serde_json::{Value, json};

use paimon_kernel::canonical;
use support::{binary, check_rows, warehouse, warehouse_tables};

/// `(table-name prefix, reason)` of `conformance/pending-writes.txt`.
fn pending_writes() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("pending-writes.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(p, why)| (p.trim().to_string(), why.trim().to_string()))
        .collect()
}

fn out_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PAIMON_WRITE_BACK_OUT") {
        return PathBuf::from(d);
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(t).join("write-back");
    }
    std::env::temp_dir().join(format!("paimon-write-back-{}", std::process::id()))
}

fn run(args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new(binary())
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary().display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(out.stdout)
}

/// The create JSON of the original table's latest schema.
fn create_json(table_dir: &Path) -> Value {
    let mut ids: Vec<i64> = std::fs::read_dir(table_dir.join("schema"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .strip_prefix("schema-")
                .and_then(|s| s.parse().ok())
        })
        .collect();
    ids.sort_unstable();
    let latest = ids.last().unwrap();
    let schema: Value = serde_json::from_slice(
        &std::fs::read(table_dir.join(format!("schema/schema-{latest}"))).unwrap(),
    )
    .unwrap();
    json!({
        "fields": schema["fields"],
        "partitionKeys": schema["partitionKeys"],
        "primaryKeys": schema["primaryKeys"],
        "options": schema["options"],
        "comment": schema["comment"],
    })
}

/// True if `v` holds a BLOB rendering without its bytes (`{"len", "sha256"}`: a blob over 64
/// bytes).
fn has_blob_without_bytes(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            (m.contains_key("sha256") && !m.contains_key("hex"))
                || m.values().any(has_blob_without_bytes)
        }
        Value::Array(a) => a.iter().any(has_blob_without_bytes),
        _ => false,
    }
}

/// Write one table again; `Ok(Some(reason))` when it is pending and failed as unsupported.
fn write_back(
    name: &str,
    src: &Path,
    expected: &Value,
    out: &Path,
    pending: Option<&String>,
) -> Result<Option<String>, String> {
    let dest = out.join("corpus.db").join(name);
    let _ = std::fs::remove_dir_all(&dest);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    let schema_file = out.join(format!("{name}.schema.json"));
    std::fs::write(&schema_file, create_json(src).to_string()).unwrap();
    let rows: Vec<Value> = expected["rows"].as_array().cloned().unwrap_or_default();
    let input = if rows.iter().any(has_blob_without_bytes) {
        // The JSON of a blob over 64 bytes has only its length and hash: write the original
        // table's rows as read by paimon-kernel (Arrow), still compared with the expected rows.
        let input = out.join(format!("{name}.rows.arrow"));
        let arrow = run(&["scan", src.to_str().unwrap(), "--format", "arrow"])
            .map_err(|e| format!("{name}: reading the original failed: {e}"))?;
        std::fs::write(&input, arrow).unwrap();
        input
    } else {
        let input = out.join(format!("{name}.rows.jsonl"));
        let mut text = String::new();
        for r in &rows {
            text.push_str(&r.to_string());
            text.push('\n');
        }
        std::fs::write(&input, text).unwrap();
        input
    };
    let dest_s = dest.to_str().unwrap();
    let attempt = run(&["create", dest_s, "--schema", schema_file.to_str().unwrap()])
        .and_then(|_| run(&["write", dest_s, "--input", input.to_str().unwrap()]));
    match (attempt, pending) {
        (Err(e), Some(why)) if e.to_lowercase().contains("unsupported") => {
            return Ok(Some(format!("{why} ({e})")));
        }
        (Err(e), _) => return Err(format!("{name}: writing failed: {e}")),
        (Ok(_), Some(why)) => {
            return Err(format!(
                "{name}: listed in pending-writes.txt ({why}) but the write succeeded: \
                 remove the line"
            ));
        }
        (Ok(_), None) => {}
    }
    // Postpone bucket without fixed-bucket batch writes: the rows are written but invisible
    // to batch reads.
    let options = &create_json(src)["options"];
    let postpone = options["bucket"].as_str() == Some("-2");
    let fixed = options["postpone.batch-write-fixed-bucket"]
        .as_str()
        .is_none_or(|v| !v.eq_ignore_ascii_case("false"));
    let rows = if postpone && !fixed {
        check_all_in_bucket_postpone(name, &dest)?;
        Vec::new()
    } else {
        if postpone {
            check_none_in_bucket_postpone(name, &dest)?;
        }
        rows
    };
    let stdout = run(&["scan", dest_s, "--format", "arrow"])
        .map_err(|e| format!("{name}: reading back failed: {e}"))?;
    let reader = StreamReader::try_new(std::io::Cursor::new(stdout), None).unwrap();
    let mut got = Vec::new();
    for b in reader {
        got.extend(canonical::rows(&b.unwrap()).unwrap());
    }
    // ORC CHAR: pypaimon's source holds CHAR values as plain ORC strings, the table written
    // again as padded ORC char(n); both read right-trimmed, as Java reads them.
    check_rows(name, "write-back", &got, &rows)?;
    let mut exp = json!({
        "format_version": 1,
        "table": name,
        "database": "corpus",
        "path": format!("corpus.db/{name}"),
        "sort_key": expected["sort_key"],
        "rows": rows,
    });
    exp["row_count"] = json!(got.len());
    std::fs::write(
        out.join(format!("{name}.expected.json")),
        serde_json::to_string_pretty(&exp).unwrap(),
    )
    .unwrap();
    Ok(None)
}

/// No file under `dir` lies in a `bucket-postpone` directory (a postpone-bucket table's
/// batch write went into real buckets).
fn check_none_in_bucket_postpone(name: &str, dir: &Path) -> Result<(), String> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name() == Some("bucket-postpone".as_ref()) {
                return Err(format!(
                    "{name}: postpone-bucket table with fixed-bucket batch writes: {} exists",
                    p.display()
                ));
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    Ok(())
}

/// Every data file under `dir` (outside `schema/`, `snapshot/`, `manifest/`) lies in a
/// `bucket-postpone` directory, and there is at least one.
fn check_all_in_bucket_postpone(name: &str, dir: &Path) -> Result<(), String> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    let data: Vec<_> = files
        .iter()
        .filter_map(|p| p.strip_prefix(dir).ok())
        .filter(|p| {
            !["schema", "snapshot", "manifest"]
                .iter()
                .any(|top| p.starts_with(top))
        })
        .collect();
    let outside: Vec<_> = data
        .iter()
        .filter(|p| p.parent().and_then(Path::file_name) != Some("bucket-postpone".as_ref()))
        .collect();
    if data.is_empty() || !outside.is_empty() {
        return Err(format!(
            "{name}: postpone-bucket write: expected data files in bucket-postpone only, got \
             {data:?}"
        ));
    }
    Ok(())
}

#[test]
fn every_corpus_table_written_again_reads_back_the_same() {
    let wh = warehouse();
    let out = out_dir();
    // A fresh directory: no table of an earlier run may be read back by the pypaimon check.
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let pending = pending_writes();
    let mut failures = Vec::new();
    let (mut passed, mut skipped) = (0, 0);
    for t in warehouse_tables(&wh) {
        let why = pending
            .iter()
            .find(|(p, _)| t.name.starts_with(p.as_str()))
            .map(|(_, w)| w);
        match write_back(&t.name, &t.dir, &t.expected, &out, why) {
            Ok(None) => passed += 1,
            Ok(Some(reason)) => {
                skipped += 1;
                println!("pending write {}: {reason}", t.name);
            }
            Err(e) => failures.push(e),
        }
    }
    println!(
        "write-back: {passed} tables written and read back, {skipped} pending, {} failed (out: {})",
        failures.len(),
        out.display()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(passed > 0, "no table was written");
}
