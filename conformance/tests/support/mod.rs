//! Shared by the conformance tests: the warehouse under test, its tables and expected reads,
//! the `paimon-kernel` binary, canonical rendering and row comparison.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use arrow_ipc::reader::StreamReader;
use serde_json::Value;

use paimon_kernel::canonical;

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
    /// Top-level ARRAY columns whose element order is compared as a multiset
    /// ([`hash_ordered_columns`]).
    pub unordered: Vec<String>,
}

/// The columns of a table with `options` whose array elements Java 2.0 and pypaimon 2.1.0
/// order differently: aggregation by `collect` with `distinct`, `nested_update` and
/// `nested_partial_update`. Java returns them in the iteration order of its hash set / map
/// (which paimon-kernel reproduces, `merge::java_order`), pypaimon in order of arrival, so a
/// table written by pypaimon is compared with its own read element for element but not in
/// order.
pub fn hash_ordered_columns(options: &Value) -> Vec<String> {
    let Some(options) = options.as_object() else {
        return Vec::new();
    };
    options
        .iter()
        .filter_map(|(k, v)| {
            let column = k
                .strip_prefix("fields.")?
                .strip_suffix(".aggregate-function")?;
            let distinct = options
                .get(&format!("fields.{column}.distinct"))
                .and_then(Value::as_str)
                .is_some_and(|d| d.eq_ignore_ascii_case("true"));
            match v.as_str()? {
                "nested_update" | "nested_partial_update" => Some(column.to_string()),
                "collect" if distinct => Some(column.to_string()),
                _ => None,
            }
        })
        .collect()
}

/// `rows` with the array values of `columns` sorted (by each element's JSON text).
pub fn sort_elements(rows: &[Value], columns: &[String]) -> Vec<Value> {
    if columns.is_empty() {
        return rows.to_vec();
    }
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            for c in columns {
                if let Some(Value::Array(a)) = r.get_mut(c.as_str()) {
                    a.sort_by_cached_key(Value::to_string);
                }
            }
            r
        })
        .collect()
}

/// Every read of an expected file.
pub fn expected_reads(expected: &Value) -> Vec<ExpectedRead> {
    let unordered = hash_ordered_columns(&expected["options"]);
    let mut reads = vec![ExpectedRead {
        label: "latest".to_string(),
        snapshot: None,
        tag: None,
        timestamp_millis: None,
        other_options: Vec::new(),
        projection: None,
        rows: expected["rows"].as_array().cloned().unwrap_or_default(),
        unordered: unordered.clone(),
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
            unordered: unordered.clone(),
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

/// Run [`binary`] with `args`: its stdout, or `Err` with the exit status and stderr.
pub fn run_cli<S: AsRef<OsStr>>(args: &[S]) -> Result<Vec<u8>, String> {
    let out = Command::new(binary())
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
    Ok(out.stdout)
}

/// The canonical rows of an Arrow IPC stream (the output of `scan --format arrow`).
pub fn arrow_rows(stream: Vec<u8>) -> Result<Vec<Value>, String> {
    let reader = StreamReader::try_new(std::io::Cursor::new(stream), None)
        .map_err(|e| format!("stdout is not an Arrow IPC stream: {e}"))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| format!("bad Arrow IPC batch: {e}"))?;
        rows.extend(canonical::rows(&batch).map_err(|e| format!("rendering rows: {e}"))?);
    }
    Ok(rows)
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
    // VARIANT encodings are not unique: pypaimon 2.1.0 rebuilds a shredded object with its
    // field data in key order, Java 2.0 (and paimon-kernel, byte for byte as Java) with the
    // shredded fields first. Rows equal once every variant is decoded still match here (the
    // Java tables of `java_tables.rs` compare the bytes with Java's).
    let decoded = |rows: &[Value]| -> Option<Vec<String>> {
        let mut v: Vec<String> = rows
            .iter()
            .map(|r| decode_variants(r).map(|r| r.to_string()))
            .collect::<Option<_>>()?;
        v.sort();
        Some(v)
    };
    if let (Some(dg), Some(dw)) = (decoded(got), decoded(want))
        && dg == dw
        && dg != g
    {
        println!("{table} [{label}]: rows equal as decoded VARIANT values (encodings differ)");
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

/// Run one read (`paimon-kernel` with `args`, an Arrow IPC stream on stdout); canonical rows, or the failure (exit status and stderr, or a bad stream).
pub fn scan_rows<S: AsRef<OsStr>>(args: &[S]) -> Result<Vec<Value>, String> {
    arrow_rows(run_cli(args)?)
}

/// `v` with every `{"value": hex, "metadata": hex}` object (a VARIANT in canonical JSON)
/// replaced by its decoded value (`{"variant": ...}`: objects with sorted keys, integers of any
/// width as `"int:N"`, other scalars tagged by type); `None` when a variant does not decode.
pub fn decode_variants(v: &Value) -> Option<Value> {
    Some(match v {
        Value::Object(m)
            if m.len() == 2
                && m.get("value").is_some_and(Value::is_string)
                && m.get("metadata").is_some_and(Value::is_string) =>
        {
            let value = unhex(m["value"].as_str()?)?;
            let metadata = unhex(m["metadata"].as_str()?)?;
            serde_json::json!({ "variant": variant_value(&value, &metadata, 0)? })
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Some((k.clone(), decode_variants(v)?)))
                .collect::<Option<_>>()?,
        ),
        Value::Array(a) => Value::Array(a.iter().map(decode_variants).collect::<Option<_>>()?),
        other => other.clone(),
    })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

fn le(b: &[u8], pos: usize, n: usize) -> Option<u64> {
    let bytes = b.get(pos..pos + n)?;
    Some(
        bytes
            .iter()
            .rev()
            .fold(0u64, |acc, x| acc << 8 | u64::from(*x)),
    )
}

fn signed(b: &[u8], pos: usize, n: usize) -> Option<i64> {
    let u = le(b, pos, n)?;
    let shift = 64 - 8 * n as u32;
    Some(((u << shift) as i64) >> shift)
}

fn metadata_key(m: &[u8], id: usize) -> Option<String> {
    let os = usize::from((m.first()? >> 6) & 3) + 1;
    let n = le(m, 1, os)? as usize;
    if id >= n {
        return None;
    }
    let start = 1 + (n + 2) * os;
    let a = le(m, 1 + (id + 1) * os, os)? as usize;
    let b = le(m, 1 + (id + 2) * os, os)? as usize;
    String::from_utf8(m.get(start + a..start + b)?.to_vec()).ok()
}

/// The variant value at `pos` of `v` as JSON (see [`decode_variants`]).
fn variant_value(v: &[u8], m: &[u8], pos: usize) -> Option<Value> {
    let h = *v.get(pos)?;
    let info = (h >> 2) & 0x3F;
    Some(match h & 3 {
        1 => Value::String(format!(
            "str:{}",
            std::str::from_utf8(v.get(pos + 1..pos + 1 + usize::from(info))?).ok()?
        )),
        2 => {
            let sb = if (info >> 4) & 1 == 1 { 4 } else { 1 };
            let n = le(v, pos + 1, sb)? as usize;
            let ids = usize::from((info >> 2) & 3) + 1;
            let os = usize::from(info & 3) + 1;
            let id_start = pos + 1 + sb;
            let off_start = id_start + n * ids;
            let data = off_start + (n + 1) * os;
            let mut fields = std::collections::BTreeMap::new();
            for i in 0..n {
                let key = metadata_key(m, le(v, id_start + i * ids, ids)? as usize)?;
                let off = le(v, off_start + i * os, os)? as usize;
                fields.insert(key, variant_value(v, m, data + off)?);
            }
            Value::Object(fields.into_iter().collect())
        }
        3 => {
            let sb = if (info >> 2) & 1 == 1 { 4 } else { 1 };
            let n = le(v, pos + 1, sb)? as usize;
            let os = usize::from(info & 3) + 1;
            let off_start = pos + 1 + sb;
            let data = off_start + (n + 1) * os;
            Value::Array(
                (0..n)
                    .map(|i| variant_value(v, m, data + le(v, off_start + i * os, os)? as usize))
                    .collect::<Option<_>>()?,
            )
        }
        _ => Value::String(match info {
            0 => "null".into(),
            1 => "bool:true".into(),
            2 => "bool:false".into(),
            3 => format!("int:{}", signed(v, pos + 1, 1)?),
            4 => format!("int:{}", signed(v, pos + 1, 2)?),
            5 => format!("int:{}", signed(v, pos + 1, 4)?),
            6 => format!("int:{}", signed(v, pos + 1, 8)?),
            7 => format!("double:{}", f64::from_bits(le(v, pos + 1, 8)?)),
            8..=10 => {
                let scale = *v.get(pos + 1)?;
                let n = [4, 8, 16][usize::from(info - 8)];
                let bytes = v.get(pos + 2..pos + 2 + n)?;
                let mut u: i128 = 0;
                for b in bytes.iter().rev() {
                    u = u << 8 | i128::from(*b);
                }
                let shift = 128 - 8 * n as u32;
                format!("decimal:{}e-{scale}", (u << shift) >> shift)
            }
            11 => format!("date:{}", signed(v, pos + 1, 4)?),
            12 => format!("timestamp:{}", signed(v, pos + 1, 8)?),
            13 => format!("timestamp_ntz:{}", signed(v, pos + 1, 8)?),
            14 => format!("float:{}", f32::from_bits(le(v, pos + 1, 4)? as u32)),
            15 => {
                let n = le(v, pos + 1, 4)? as usize;
                let b = v.get(pos + 5..pos + 5 + n)?;
                format!(
                    "binary:{}",
                    b.iter().map(|x| format!("{x:02x}")).collect::<String>()
                )
            }
            16 => {
                let n = le(v, pos + 1, 4)? as usize;
                format!(
                    "str:{}",
                    std::str::from_utf8(v.get(pos + 5..pos + 5 + n)?).ok()?
                )
            }
            other => format!("type{other}:{}", signed(v, pos + 1, 8)?),
        }),
    })
}
