//! Runs the built `paimon-kernel` binary over every table of `conformance/tables/corpus.db`
//! and compares its JSON output with the table's `<table>.expected.json` (written from
//! pypaimon 2.1.0's view of the same table).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::run;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn tables() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus().join("corpus.db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| corpus().join(format!("{n}.expected.json")).exists())
        .collect();
    names.sort();
    assert!(names.len() >= 40, "corpus tables not found: {names:?}");
    names
}

fn table_dir(name: &str) -> PathBuf {
    corpus().join("corpus.db").join(name)
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(corpus().join(format!("{name}.expected.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Run and parse stdout as JSON; a failure message on a non-zero exit.
fn run_json(args: &[&str]) -> Result<Value, String> {
    let out = run(args);
    if !out.status.success() {
        return Err(format!(
            "{args:?} exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "{args:?}: stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn check_all(what: &str, check: impl Fn(&str) -> Result<(), String>) {
    let failures: Vec<String> = tables()
        .iter()
        .filter_map(|t| check(t).err().map(|e| format!("{t}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{what}: {} table(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn snapshots_json_matches_expected() {
    check_all("snapshots --json", |t| {
        let dir = table_dir(t);
        let got = run_json(&["snapshots", "--json", dir.to_str().unwrap()])?;
        let got = got.as_array().ok_or("not an array")?;
        let want = expected(t)["snapshots"].as_array().unwrap().clone();
        if got.len() != want.len() {
            return Err(format!("{} snapshots, expected {}", got.len(), want.len()));
        }
        for (g, w) in got.iter().zip(&want) {
            for (key, value) in w.as_object().unwrap() {
                if g.get(key) != Some(value) {
                    return Err(format!(
                        "snapshot {}: {key} is {:?}, expected {value}",
                        w["id"],
                        g.get(key)
                    ));
                }
            }
        }
        Ok(())
    });
}

#[test]
fn schema_json_is_the_stored_schema_file() {
    check_all("schema --json", |t| {
        let dir = table_dir(t);
        let out = run(&["schema", "--json", dir.to_str().unwrap()]);
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let exp = expected(t);
        let schema_file = dir.join(format!("schema/schema-{}", exp["schema_id"]));
        let stored = std::fs::read_to_string(&schema_file).unwrap();
        let printed = String::from_utf8(out.stdout).unwrap();
        if printed.trim_end_matches('\n') != stored.trim_end_matches('\n') {
            return Err(format!(
                "printed schema differs from {}",
                schema_file.display()
            ));
        }
        let parsed: Value = serde_json::from_str(&printed).map_err(|e| e.to_string())?;
        if parsed["fields"] != exp["fields"] {
            return Err(format!("fields {} != {}", parsed["fields"], exp["fields"]));
        }
        Ok(())
    });
}

/// The comparable part of a `$files` row, keyed by file name.
fn file_key(row: &Value) -> Result<(String, Value), String> {
    let path = row["file_path"]
        .as_str()
        .ok_or("file_path is not a string")?;
    let name = path.rsplit('/').next().unwrap_or(path).to_string();
    let mut picked = serde_json::Map::new();
    for key in [
        "bucket",
        "level",
        "record_count",
        "min_sequence_number",
        "max_sequence_number",
        "first_row_id",
        "write_cols",
        "schema_id",
        "file_format",
    ] {
        picked.insert(
            key.to_string(),
            row.get(key).cloned().unwrap_or(Value::Null),
        );
    }
    Ok((name, Value::Object(picked)))
}

#[test]
fn files_json_matches_expected() {
    check_all("files --json", |t| {
        let dir = table_dir(t);
        let got = run_json(&["files", "--json", dir.to_str().unwrap()])?;
        let got: BTreeMap<String, Value> = got
            .as_array()
            .ok_or("not an array")?
            .iter()
            .map(file_key)
            .collect::<Result<_, _>>()?;
        let want: BTreeMap<String, Value> = expected(t)["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(file_key)
            .collect::<Result<_, _>>()?;
        if got.len() != want.len() {
            return Err(format!("{} files, expected {}", got.len(), want.len()));
        }
        for (name, w) in &want {
            match got.get(name) {
                None => return Err(format!("missing file {name}")),
                Some(g) if g != w => return Err(format!("{name}: {g} != {w}")),
                Some(_) => {}
            }
        }
        Ok(())
    });
}

/// A copy of a corpus table in a fresh temporary directory.
fn copy_table(name: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    crate::copy_dir(&table_dir(name), tmp.path());
    tmp
}

fn assert_fails_naming(args: &[&str], needle: &str) {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: stderr {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: stderr {stderr:?} should name {needle}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn truncated_snapshot_fails_naming_the_file() {
    let tmp = copy_table("append_parquet");
    let latest = std::fs::read_to_string(tmp.path().join("snapshot/LATEST")).unwrap();
    let file = format!("snapshot/snapshot-{}", latest.trim());
    let path = tmp.path().join(&file);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let dir = tmp.path().to_str().unwrap();
    assert_fails_naming(&["info", dir], &file);
    assert_fails_naming(&["files", "--json", dir], &file);
}

#[test]
fn corrupt_manifest_fails_naming_the_file() {
    let tmp = copy_table("append_parquet");
    let mut manifests: Vec<_> = std::fs::read_dir(tmp.path().join("manifest"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        .collect();
    manifests.sort();
    for m in &manifests {
        std::fs::write(tmp.path().join("manifest").join(m), b"Obj\x01garbage").unwrap();
    }
    let dir = tmp.path().to_str().unwrap();
    let out = run(&["files", "--json", dir]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        manifests
            .iter()
            .any(|m| stderr.contains(&format!("manifest/{m}"))),
        "{stderr:?} should name a manifest file"
    );
}

#[test]
fn missing_schema_fails_naming_the_file() {
    let tmp = copy_table("append_parquet");
    std::fs::remove_file(tmp.path().join("schema/schema-0")).unwrap();
    let dir = tmp.path().to_str().unwrap();
    assert_fails_naming(&["schema", dir], "schema/schema-0");
}

#[test]
fn missing_table_and_bad_arguments() {
    let out = run(&["snapshots", "/nonexistent/paimon/table"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    let out = run(&["files", "--snapshot", "1", "--tag", "x", "t"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "conflicting flags are a usage error"
    );
    let out = run(&["info", "ftp://example/t"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported scheme"));
}

/// The `io: R rounds, N requests, C store calls, B bytes fetched, T retries` line of stderr.
fn io_stats_line(stderr: &str) -> BTreeMap<String, u64> {
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("io: ")).collect();
    assert_eq!(lines.len(), 1, "one io line expected in {stderr:?}");
    lines[0]["io: ".len()..]
        .split(", ")
        .map(|part| {
            let (n, what) = part.split_once(' ').unwrap();
            (what.to_string(), n.parse().unwrap())
        })
        .collect()
}

#[test]
fn scan_io_stats_count_the_bytes_of_every_file_read() {
    // append_avro: 2 commits, each wrote one manifest and one Avro data file; a scan of the
    // latest snapshot reads snapshot/LATEST, the snapshot, its schema, its two manifest lists,
    // both manifests and both data files, each whole (Avro data files have no footer index).
    let name = "append_avro";
    let dir = table_dir(name);
    let exp = expected(name);
    let size = |rel: &str| std::fs::metadata(dir.join(rel)).unwrap().len();
    let snapshot: Value = serde_json::from_slice(
        &std::fs::read(dir.join(format!("snapshot/snapshot-{}", exp["snapshot_id"]))).unwrap(),
    )
    .unwrap();
    let mut read = vec![
        "snapshot/LATEST".to_string(),
        format!("snapshot/snapshot-{}", exp["snapshot_id"]),
        format!("schema/schema-{}", snapshot["schemaId"]),
        format!(
            "manifest/{}",
            snapshot["baseManifestList"].as_str().unwrap()
        ),
        format!(
            "manifest/{}",
            snapshot["deltaManifestList"].as_str().unwrap()
        ),
    ];
    let mut manifests: Vec<String> = std::fs::read_dir(dir.join("manifest"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        .map(|n| format!("manifest/{n}"))
        .collect();
    assert_eq!(manifests.len(), 2);
    read.append(&mut manifests);
    let files = exp["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    for f in files {
        // Unpartitioned: `bucket-<b>/<file name>`.
        read.push(format!(
            "bucket-{}/{}",
            f["bucket"],
            f["file_path"].as_str().unwrap()
        ));
    }
    let want_bytes: u64 = read.iter().map(|r| size(r)).sum();

    let out = run(&[
        "scan",
        "--io-stats",
        "--format",
        "jsonl",
        dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // stdout holds only the rows.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.lines().count(),
        exp["row_count"].as_u64().unwrap() as usize
    );
    for line in stdout.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    let stats = io_stats_line(&stderr);
    assert_eq!(stats["bytes fetched"], want_bytes, "files read: {read:?}");
    assert!(stats["requests"] >= read.len() as u64, "{stats:?}");
    assert!(
        stats["rounds"] >= 1 && stats["rounds"] <= stats["requests"],
        "{stats:?}"
    );
    assert!(stats["store calls"] >= 1, "{stats:?}");
    assert_eq!(stats["retries"], 0);

    // The same line for `blob`, and nothing without the flag.
    let out = run(&["scan", "--format", "jsonl", dir.to_str().unwrap()]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let blob = table_dir("blob_single");
    let out = run(&[
        "blob",
        "--io-stats",
        "--row-id",
        "2",
        "--column",
        "data",
        blob.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stats = io_stats_line(&stderr);
    assert!(
        stats["bytes fetched"] >= out.stdout.len() as u64,
        "{stats:?}"
    );
}

#[test]
fn errors_say_what_was_read_not_which_machine() {
    let mut messages = Vec::new();
    let dir = std::fs::canonicalize(table_dir("append_parquet")).unwrap();
    let dir = dir.to_str().unwrap();
    let out = run(&["scan", "--snapshot", "99", dir]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: reading snapshot 99 of table file://{dir}: "
        )),
        "{stderr}"
    );
    assert!(stderr.contains("[1, 2]"), "{stderr}");
    messages.push(stderr);
    let out = run(&["info", "--tag", "nope", dir]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.starts_with(&format!(
            "error: resolving tag 'nope' of table file://{dir}: "
        )),
        "{stderr}"
    );
    messages.push(stderr);

    // A data file that is not Parquet: the split, its snapshot and the file are named.
    let tmp = copy_table("append_parquet");
    let data = std::fs::read_dir(tmp.path().join("bucket-0"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".parquet"))
        .unwrap();
    std::fs::write(tmp.path().join("bucket-0").join(&data), b"not parquet").unwrap();
    let tdir = std::fs::canonicalize(tmp.path()).unwrap();
    let tdir = tdir.to_str().unwrap();
    let out = run(&["scan", tdir]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.starts_with(&format!(
            "error: reading bucket-0 of snapshot 2 of table file://{tdir}: "
        )),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("bucket-0/{data}")), "{stderr}");
    messages.push(stderr);

    for m in &messages {
        for machine in ["PlanScan", "SnapshotResolver", "read_split", "TableProbe"] {
            assert!(!m.contains(machine), "{m}");
        }
    }
}
