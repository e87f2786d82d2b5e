//! ORC tables (`file.format` = `orc`) with nested columns: ARRAY, MAP, MULTISET and ROW in each
//! other, with NULLs at every level, empty lists and maps, decimals, timestamps, TIME, CHAR and
//! VARCHAR inside. Created, written (three commits) and fully compacted with the CLI, on a
//! primary-key table and a fixed-bucket append table; after each step our read equals the model
//! (the input rows, merged by key on the primary-key table), and so do pypaimon 2.1.0's (venv
//! `~/.cache/paimon-kernel/venv`, when installed) and Java Paimon 2.0.0's
//! (java-check's `read`, when present). MULTISET, which pypaimon has no Arrow type for, is
//! in a table of its own that only we and Java read.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use paimon_kernel::canonical;
use paimon_kernel::spec::CommitKind;
use paimon_native::Table;
use serde_json::{Map, Value, json};

use crate::common::ok;
use crate::oracle::{java_rows, pypaimon_rows, sorted_strings};

/// `create` the table `<warehouse>/db.db/<name>` (the layout pypaimon's catalog reads).
fn create(warehouse: &Path, name: &str, schema: &Value) -> String {
    let loc = warehouse.join("db.db").join(name);
    let file = warehouse.join(format!("{name}.schema.json"));
    std::fs::write(&file, schema.to_string()).unwrap();
    ok(&[
        "create",
        loc.to_str().unwrap(),
        "--schema",
        file.to_str().unwrap(),
    ]);
    loc.to_str().unwrap().to_owned()
}

/// `write` JSON rows (one snapshot).
fn write(table: &str, rows: &[Map<String, Value>]) {
    let file = format!("{table}.input.jsonl");
    let text: String = rows
        .iter()
        .map(|r| format!("{}\n", Value::from(r.clone())))
        .collect();
    std::fs::write(&file, text).unwrap();
    ok(&["write", table, "--input", &file]);
}

fn nested_fields() -> Value {
    json!([
        {"name": "k", "type": "INT NOT NULL"},
        {"name": "tags", "type": {"type": "ARRAY", "element": "STRING"}},
        {"name": "points", "type": {"type": "ARRAY", "element": {"type": "ROW", "fields": [
            {"name": "x", "type": "DECIMAL(10, 2)"},
            {"name": "y", "type": "TIMESTAMP(6)"},
            {"name": "c", "type": "CHAR(3)"},
        ]}}},
        {"name": "attrs", "type": {"type": "MAP", "key": "STRING NOT NULL", "value": {"type": "ROW", "fields": [
            {"name": "v", "type": "INT"},
            {"name": "d", "type": "DECIMAL(38, 10)"},
        ]}}},
        {"name": "deep", "type": {"type": "ROW", "fields": [
            {"name": "a", "type": {"type": "ARRAY", "element": {"type": "MAP", "key": "INT NOT NULL", "value": "VARCHAR(5)"}}},
            {"name": "t", "type": "TIME(3)"},
            {"name": "b", "type": {"type": "ROW", "fields": [
                {"name": "z", "type": "BIGINT"},
                {"name": "ltz", "type": "TIMESTAMP(3) WITH LOCAL TIME ZONE"},
            ]}},
        ]}},
        {"name": "nums", "type": {"type": "ARRAY", "element": {"type": "ARRAY", "element": "DECIMAL(5, 2) NOT NULL"}}},
        {"name": "misc", "type": {"type": "ROW", "fields": [
            {"name": "b", "type": "BYTES"},
            {"name": "ti", "type": "TINYINT"},
            {"name": "si", "type": "SMALLINT"},
            {"name": "f", "type": "FLOAT"},
            {"name": "d", "type": "DOUBLE"},
            {"name": "dt", "type": "DATE"},
            {"name": "bo", "type": "BOOLEAN"},
        ]}},
    ])
}

/// Row `k` in variant `v` (0..5): all set, all NULL, empty lists and maps, NULLs inside, some
/// NULL rows. CHAR values have their full length (readers differ on trimming the padding).
fn nested_row(k: i64, v: i64) -> Map<String, Value> {
    let full = json!({
        "tags": ["a", format!("t{k}")],
        "points": [{"x": format!("{k}.50"), "y": "2024-01-02T03:04:05.123456", "c": "abc"}],
        "attrs": [[format!("key{k}"), {"v": k, "d": "1234567890123456789.0123456789"}]],
        "deep": {"a": [[[1, "xy"]]], "t": "12:34:56.789", "b": {"z": k * 1000, "ltz": "2024-01-01T00:00:00.001"}},
        "nums": [["1.25", "-3.00"]],
        "misc": {"b": "00ff", "ti": -128, "si": 32767, "f": 1.5, "d": -2.25, "dt": "1969-12-31", "bo": true},
    });
    let mut row = match v {
        0 => full,
        1 => json!({}),
        2 => json!({
            "tags": [], "points": [], "attrs": [],
            "deep": {"a": [], "t": null, "b": null},
            "nums": [[]], "misc": {},
        }),
        3 => json!({
            "tags": [null, "c"],
            "points": [null, {"x": null, "y": null, "c": null}, {"x": "-0.01", "y": "1900-01-01T00:00:00", "c": "é z"}],
            "attrs": [["n", null], ["m", {"v": null, "d": null}], ["", {"v": -1, "d": "-0.0000000001"}]],
            "deep": {"a": [null, [], [[2, null], [3, "zzzzz"]]], "t": "00:00:00", "b": {"z": null, "ltz": null}},
            "nums": [null, ["0.00"], []],
            "misc": {"b": "", "ti": null, "si": -1, "f": null, "d": null, "dt": null, "bo": false},
        }),
        _ => json!({"tags": [format!("only{k}")], "deep": null, "misc": null}),
    };
    let row = row.as_object_mut().unwrap();
    row.insert("k".into(), json!(k));
    row.clone()
}

/// The canonical rows the table's reader must return for the JSON input `rows`.
async fn model(table: &str, rows: &[Map<String, Value>]) -> Vec<String> {
    let t = Table::open(table).await.unwrap();
    let schema =
        paimon_kernel::types::paimon_to_arrow_schema(&t.schema().await.unwrap().fields).unwrap();
    let batch = canonical::parse::batch_from_rows(rows, &Arc::clone(&schema)).unwrap();
    sorted_strings(&canonical::rows(&batch).unwrap())
}

async fn our_rows(table: &str) -> Vec<String> {
    let t = Table::open(table).await.unwrap();
    let batches = t.scan().to_batches().await.unwrap();
    sorted_strings(&canonical::batches_rows(&batches).unwrap())
}

/// Ours, pypaimon's (`pypaimon`) and Java's reads of `table` equal `want`.
async fn check_reads(table: &str, want: &[String], pypaimon: bool, what: &str) {
    assert_eq!(our_rows(table).await, want, "{what}: our read");
    let dir = Path::new(table);
    match java_rows(dir) {
        Some(java) => assert_eq!(java, want, "{what}: Java 2.0.0 reads otherwise"),
        None => println!("{what}: java-check not installed: Java read skipped"),
    }
    if pypaimon {
        match pypaimon_rows(dir) {
            Some(py) => assert_eq!(py, want, "{what}: pypaimon reads otherwise"),
            None => println!("{what}: pypaimon venv not installed: pypaimon read skipped"),
        }
    }
}

/// `compact --full`, then: a `COMPACT` snapshot, only ORC files, one per bucket.
async fn compact_full(table: &str) {
    ok(&["compact", table, "--full"]);
    let t = Table::open(table).await.unwrap();
    let snapshot = t.latest_snapshot().await.unwrap().unwrap();
    assert_eq!(snapshot.commit_kind, CommitKind::Compact, "{table}");
    let files: Value = serde_json::from_str(&ok(&["files", table, "--json"])).unwrap();
    let files = files.as_array().unwrap();
    let mut per_bucket = BTreeMap::<i64, usize>::new();
    for f in files {
        let path = f["file_path"].as_str().unwrap();
        assert!(path.ends_with(".orc"), "{path}");
        *per_bucket.entry(f["bucket"].as_i64().unwrap()).or_default() += 1;
    }
    assert!(per_bucket.values().all(|n| *n == 1), "{per_bucket:?}");
}

/// The three commits: keys 0..30, 20..50 (updates) and 45..60, each in other variants.
fn commits() -> Vec<Vec<Map<String, Value>>> {
    vec![
        (0..30).map(|k| nested_row(k, k % 5)).collect(),
        (20..50).map(|k| nested_row(k, (k + 2) % 5)).collect(),
        (45..60).map(|k| nested_row(k, (k + 1) % 5)).collect(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orc_primary_key_table_with_nested_columns_writes_and_compacts() {
    let tmp = tempfile::tempdir().unwrap();
    let table = create(
        tmp.path(),
        "pk_nested",
        &json!({
            "fields": nested_fields(),
            "primaryKeys": ["k"],
            "options": {"bucket": "2", "file.format": "orc"},
        }),
    );
    let mut latest = BTreeMap::new();
    for (i, rows) in commits().iter().enumerate() {
        write(&table, rows);
        for r in rows {
            latest.insert(r["k"].as_i64().unwrap(), r.clone());
        }
        let rows: Vec<_> = latest.values().cloned().collect();
        let want = model(&table, &rows).await;
        check_reads(&table, &want, true, &format!("pk commit {}", i + 1)).await;
    }
    let rows: Vec<_> = latest.values().cloned().collect();
    let want = model(&table, &rows).await;
    compact_full(&table).await;
    check_reads(&table, &want, true, "pk after compact --full").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orc_append_table_with_nested_columns_writes_and_compacts() {
    let tmp = tempfile::tempdir().unwrap();
    let table = create(
        tmp.path(),
        "append_nested",
        &json!({
            "fields": nested_fields(),
            "options": {"bucket": "2", "bucket-key": "k", "file.format": "orc", "file.compression": "zlib"},
        }),
    );
    let mut all = Vec::new();
    for rows in commits() {
        write(&table, &rows);
        all.extend(rows);
    }
    let want = model(&table, &all).await;
    check_reads(&table, &want, true, "append").await;
    compact_full(&table).await;
    check_reads(&table, &want, true, "append after compact --full").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orc_multiset_columns_are_written_as_maps_of_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let table = create(
        tmp.path(),
        "multiset",
        &json!({
            "fields": [
                {"name": "k", "type": "INT NOT NULL"},
                {"name": "ms", "type": {"type": "MULTISET", "element": "VARCHAR(3)"}},
                {"name": "lm", "type": {"type": "ARRAY", "element": {"type": "MULTISET", "element": "INT"}}},
            ],
            "primaryKeys": ["k"],
            "options": {"bucket": "1", "file.format": "orc"},
        }),
    );
    let rows: Vec<Map<String, Value>> = [
        json!({"k": 1, "ms": [["x", 2], ["yz", 1]], "lm": [[[1, 3]], [], null]}),
        json!({"k": 2, "ms": [], "lm": []}),
        json!({"k": 3}),
    ]
    .iter()
    .map(|v| v.as_object().unwrap().clone())
    .collect();
    write(&table, &rows);
    write(&table, &rows[..1]);
    let want = model(&table, &rows).await;
    check_reads(&table, &want, false, "multiset").await;
    compact_full(&table).await;
    check_reads(&table, &want, false, "multiset after compact --full").await;
}
