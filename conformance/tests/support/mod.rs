//! Shared by the conformance tests: the warehouse under test, its tables and expected reads,
//! the `paimon-kernel` binary, canonical rendering and row comparison.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The warehouse whose tables are checked: `$PAIMON_WAREHOUSE` (a directory written by
/// `make_corpus.py`, holding `manifest.json` and `<table>.expected.json` files), else this
/// repository's `conformance/tables`.
pub fn warehouse() -> PathBuf {
    match std::env::var_os("PAIMON_WAREHOUSE") {
        Some(w) if !w.is_empty() => PathBuf::from(w),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("tables"),
    }
}

/// A table of the warehouse: name, directory and expected file.
#[derive(Debug, Clone)]
pub struct WarehouseTable {
    /// Table name.
    pub name: String,
    /// Table directory.
    pub dir: PathBuf,
    /// Parsed `<table>.expected.json`.
    pub expected: Value,
}

/// Every table of `warehouse` that has an expected file, by name. Tables come from
/// `manifest.json` (`tables[].path`, `tables[].expected`) when present, else from the
/// `*.expected.json` files (their `path`, relative to the warehouse).
pub fn warehouse_tables(warehouse: &Path) -> Vec<WarehouseTable> {
    let mut out = Vec::new();
    let manifest = warehouse.join("manifest.json");
    let entries: Vec<(String, String)> = if manifest.exists() {
        let m: Value = read_json(&manifest);
        m["tables"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no tables array", manifest.display()))
            .iter()
            .map(|t| {
                (
                    t["path"].as_str().unwrap().to_string(),
                    t["expected"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    } else {
        let mut v = Vec::new();
        for e in
            std::fs::read_dir(warehouse).unwrap_or_else(|e| panic!("{}: {e}", warehouse.display()))
        {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".expected.json") {
                let exp: Value = read_json(&warehouse.join(&name));
                v.push((exp["path"].as_str().unwrap().to_string(), name));
            }
        }
        v
    };
    for (path, expected) in entries {
        let exp_path = warehouse.join(&expected);
        if !exp_path.exists() {
            continue;
        }
        let expected = read_json(&exp_path);
        out.push(WarehouseTable {
            name: expected["table"].as_str().unwrap_or(&path).to_string(),
            dir: warehouse.join(&path),
            expected,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One read of an expected file: `rows` (label `latest`) or an `additional_reads` entry.
#[derive(Debug, Clone)]
pub struct ExpectedRead {
    /// `latest` or the entry's label.
    pub label: String,
    /// `scan.snapshot-id`, if set.
    pub snapshot: Option<String>,
    /// `scan.tag-name`, if set.
    pub tag: Option<String>,
    /// `scan.timestamp-millis`, if set.
    pub timestamp_millis: Option<String>,
    /// Options other than those three (a read the CLI cannot express).
    pub other_options: Vec<String>,
    /// Projection, if any.
    pub projection: Option<Vec<String>>,
    /// Expected rows (canonical JSON).
    pub rows: Vec<Value>,
}

/// Every read of an expected file.
pub fn expected_reads(expected: &Value) -> Vec<ExpectedRead> {
    let mut reads = vec![ExpectedRead {
        label: "latest".to_string(),
        snapshot: None,
        tag: None,
        timestamp_millis: None,
        other_options: Vec::new(),
        projection: None,
        rows: expected["rows"].as_array().cloned().unwrap_or_default(),
    }];
    for r in expected["additional_reads"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let options = r["options"].as_object().cloned().unwrap_or_default();
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        reads.push(ExpectedRead {
            label: r["label"].as_str().unwrap_or("?").to_string(),
            snapshot: options.get("scan.snapshot-id").map(text),
            tag: options.get("scan.tag-name").map(text),
            timestamp_millis: options.get("scan.timestamp-millis").map(text),
            other_options: options
                .keys()
                .filter(|k| {
                    !matches!(
                        k.as_str(),
                        "scan.snapshot-id" | "scan.tag-name" | "scan.timestamp-millis"
                    )
                })
                .cloned()
                .collect(),
            projection: r["projection"]
                .as_array()
                .map(|p| p.iter().map(|c| c.as_str().unwrap().to_string()).collect()),
            rows: r["rows"].as_array().cloned().unwrap_or_default(),
        });
    }
    reads
}

/// The `paimon-kernel` binary: `$PAIMON_KERNEL_BIN`, else the one of this workspace, built
/// (or found fresh) by `cargo build --workspace --all-targets` (the same selection as
/// `cargo test --workspace`, so that no second set of dependency artifacts is built), or by
/// `cargo build -p paimon-native --bin paimon-kernel` when another target does not compile.
pub fn binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(b) = std::env::var_os("PAIMON_KERNEL_BIN") {
            return PathBuf::from(b);
        }
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let build = |args: &[&str]| {
            let out = Command::new(&cargo)
                .current_dir(&workspace)
                .arg("build")
                .args(args)
                .args(["--message-format=json", "--quiet"])
                .output()
                .expect("run cargo build");
            let exe = String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|m| {
                    m["target"]["name"] == "paimon-kernel"
                        && m["target"]["kind"][0] == "bin"
                        && m["profile"]["test"] == false
                })
                .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
                .next_back();
            match exe {
                Some(exe) if out.status.success() => Ok(exe),
                _ => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
            }
        };
        // Another target of the workspace failing to compile must not stop this check.
        build(&["--workspace", "--all-targets"])
            .or_else(|_| build(&["-p", "paimon-native", "--bin", "paimon-kernel"]))
            .unwrap_or_else(|e| panic!("cannot build paimon-kernel: {e}"))
    })
    .clone()
}

/// Reads not supported yet: `(table-name prefix, reason)`, from `conformance/pending-reads.txt`
/// (shared with the core's read tests).
pub fn pending_reads() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("pending-reads.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(p, why)| (p.trim().to_string(), why.trim().to_string()))
        .collect()
}

/// Why reads of `table` are pending, if they are.
pub fn pending(pending: &[(String, String)], table: &str) -> Option<String> {
    pending
        .iter()
        .find(|(prefix, _)| table.starts_with(prefix.as_str()))
        .map(|(_, why)| why.clone())
}

fn sorted(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    v.sort();
    v
}

/// Compare one read, rows in any order; `Err` with a readable diff.
pub fn check_rows(table: &str, label: &str, got: &[Value], want: &[Value]) -> Result<(), String> {
    let (g, w) = (sorted(got), sorted(want));
    if g == w {
        return Ok(());
    }
    let missing: Vec<&String> = w.iter().filter(|r| !g.contains(r)).take(3).collect();
    let extra: Vec<&String> = g.iter().filter(|r| !w.contains(r)).take(3).collect();
    Err(format!(
        "{table} [{label}]: got {} rows, want {}\n  missing: {missing:#?}\n  unexpected: {extra:#?}",
        g.len(),
        w.len()
    ))
}
