//! Partial-column updates of data-evolution tables (`paimon-kernel update`), checked against a
//! model: after inserts and several updates (some columns, several row-id ranges, partitions,
//! BLOB columns with explicit NULLs), the table reads back the model's rows with unchanged
//! `_ROW_ID`s and `_SEQUENCE_NUMBER` = the snapshot of each row's latest change; every update
//! file covers exactly one live normal file's row-id range and writes only the set columns;
//! untouched blob rows are placeholders (`-2`), not copies.
//!
//! The tables land, like the write-back tables, in a warehouse of the corpus layout:
//! `$PAIMON_UPDATE_OUT` (default `$CARGO_TARGET_DIR/update-back`; not the write-back
//! directory, which `write_back` empties first) with a `<table>.expected.json`, so that CI's
//! `conformance/pypaimon_read_back.py` has pypaimon 2.1 read them too.

#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::{LargeBinaryArray, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_schema::{DataType, Field, Schema};
use serde_json::{Value, json};

use paimon_kernel::canonical;
use support::{binary, check_rows};

fn out_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PAIMON_UPDATE_OUT") {
        return PathBuf::from(d);
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(t).join("update-back");
    }
    std::env::temp_dir().join(format!("paimon-update-{}", std::process::id()))
}

fn run(args: &[&str]) -> Result<String, String> {
    let out = Command::new(binary()).args(args).output().unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

fn scan(table: &Path, columns: &str) -> Vec<Value> {
    let out = Command::new(binary())
        .args(["scan", table.to_str().unwrap(), "--format", "arrow"])
        .args(["--columns", columns])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reader = StreamReader::try_new(std::io::Cursor::new(out.stdout), None).unwrap();
    let mut rows = Vec::new();
    for b in reader {
        rows.extend(canonical::rows(&b.unwrap()).unwrap());
    }
    rows
}

fn write_jsonl(path: &Path, rows: &[Value]) {
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// The canonical JSON of a BLOB value.
fn blob_value(bytes: Option<&[u8]>) -> Value {
    let arr = LargeBinaryArray::from(vec![bytes]);
    let schema = Schema::new(vec![Field::new("b", DataType::LargeBinary, true)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(arr)]).unwrap();
    canonical::rows(&batch).unwrap()[0]["b"].clone()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A live data file: (name, first row id, row count, write cols).
fn live_files(table: &Path) -> Vec<(String, i64, i64, Vec<String>)> {
    let out = run(&["files", table.to_str().unwrap(), "--json"]).unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let cols = match &f["write_cols"] {
                Value::Array(a) => a.iter().map(|c| c.as_str().unwrap().to_owned()).collect(),
                _ => Vec::new(),
            };
            (
                f["file_path"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_owned(),
                f["first_row_id"].as_i64().unwrap(),
                f["record_count"].as_i64().unwrap(),
                cols,
            )
        })
        .collect()
}

fn write_expected(out: &Path, name: &str, rows: &[Value], sort_key: &[&str]) {
    let exp = json!({
        "format_version": 1,
        "table": name,
        "database": "corpus",
        "path": format!("corpus.db/{name}"),
        "sort_key": sort_key,
        "rows": rows,
        "row_count": rows.len(),
    });
    std::fs::write(
        out.join(format!("{name}.expected.json")),
        serde_json::to_string_pretty(&exp).unwrap(),
    )
    .unwrap();
}

#[test]
fn updates_of_some_columns_over_partitions_and_ranges() {
    let out = out_dir();
    let name = "de_update_columns";
    let dest = out.join("corpus.db").join(name);
    let _ = std::fs::remove_dir_all(&dest);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    let t = dest.to_str().unwrap();
    let schema = out.join(format!("{name}.schema.json"));
    std::fs::write(
        &schema,
        r#"{"fields": [{"id": 0, "name": "dt", "type": "STRING"}, {"id": 1, "name": "id", "type": "INT"},
            {"id": 2, "name": "name", "type": "STRING"}, {"id": 3, "name": "score", "type": "DOUBLE"}],
            "partitionKeys": ["dt"],
            "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}"#,
    )
    .unwrap();
    run(&["create", t, "--schema", schema.to_str().unwrap()]).unwrap();
    // Model: row id → (row, sequence number).
    let mut model: BTreeMap<i64, (Value, i64)> = BTreeMap::new();
    let mut inserted: BTreeMap<i64, Value> = BTreeMap::new();
    let mut snapshot = 0i64;
    for batch in 0..3 {
        let rows: Vec<Value> = (0..6)
            .map(|i| {
                let id = batch * 6 + i;
                json!({"dt": if id % 2 == 0 { "a" } else { "b" }, "id": id,
                       "name": format!("n{id}"), "score": id as f64 * 1.5})
            })
            .collect();
        let input = out.join(format!("{name}.in{batch}.jsonl"));
        write_jsonl(&input, &rows);
        run(&["write", t, "--input", input.to_str().unwrap()]).unwrap();
        snapshot += 1;
        for r in rows {
            inserted.insert(r["id"].as_i64().unwrap(), r);
        }
    }
    // Row ids: each commit numbers its rows after the previous commits' (the order inside a
    // commit follows its files); read them once, then they never change.
    for r in scan(&dest, "id,_ROW_ID") {
        let id = r["id"].as_i64().unwrap();
        let rid = r["_ROW_ID"].as_i64().unwrap();
        let commit = id / 6;
        assert!(
            (commit * 6..commit * 6 + 6).contains(&rid),
            "row {id} of commit {} got _ROW_ID {rid}",
            commit + 1
        );
        model.insert(rid, (inserted[&id].clone(), commit + 1));
    }
    assert_eq!(model.len(), 18);
    let check = |model: &BTreeMap<i64, (Value, i64)>| {
        let got = scan(&dest, "dt,id,name,score,_ROW_ID,_SEQUENCE_NUMBER");
        let want: Vec<Value> = model
            .iter()
            .map(|(rid, (r, seq))| {
                let mut r = r.clone();
                r["_ROW_ID"] = json!(rid);
                r["_SEQUENCE_NUMBER"] = json!(seq);
                r
            })
            .collect();
        check_rows(name, "update", &got, &want).unwrap();
    };
    check(&model);
    // Updates: (row ids, columns → value of row id).
    let updates: Vec<(Vec<i64>, Vec<&str>)> = vec![
        (vec![1, 4, 7, 17], vec!["score"]),
        (vec![4, 5, 9], vec!["name", "score"]),
        (vec![0, 2, 3], vec!["name"]),
    ];
    for (u, (ids, cols)) in updates.iter().enumerate() {
        let rows: Vec<Value> = ids
            .iter()
            .map(|rid| {
                let mut r = json!({"_ROW_ID": rid});
                for c in cols {
                    r[*c] = match *c {
                        "name" => json!(format!("u{u}-{rid}")),
                        _ => json!(-(*rid as f64) - u as f64),
                    };
                }
                r
            })
            .collect();
        let input = out.join(format!("{name}.update{u}.jsonl"));
        write_jsonl(&input, &rows);
        let before = live_files(&dest);
        run(&["update", t, "--input", input.to_str().unwrap()]).unwrap();
        snapshot += 1;
        // Each touched range (a live normal file) gets a file covering exactly it, with
        // write_cols = the set columns; every row of the range takes the new sequence number.
        let after = live_files(&dest);
        let new: Vec<_> = after.iter().filter(|f| !before.contains(f)).collect();
        let normal_ranges: Vec<(i64, i64)> = before
            .iter()
            .filter(|f| !f.0.ends_with(".blob"))
            .map(|f| (f.1, f.2))
            .collect();
        let mut touched: Vec<(i64, i64)> = normal_ranges
            .iter()
            .filter(|(first, n)| ids.iter().any(|id| *first <= *id && *id < first + n))
            .copied()
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let mut got: Vec<(i64, i64)> = new.iter().map(|f| (f.1, f.2)).collect();
        got.sort_unstable();
        assert_eq!(got, touched, "update {u}: new files' ranges");
        for f in &new {
            let want: Vec<String> = cols.iter().map(|c| (*c).to_owned()).collect();
            assert_eq!(f.3, want, "update {u}: write_cols of {}", f.0);
        }
        for (first, n) in &touched {
            for rid in *first..first + n {
                model.get_mut(&rid).unwrap().1 = snapshot;
            }
        }
        for r in &rows {
            let rid = r["_ROW_ID"].as_i64().unwrap();
            let row = &mut model.get_mut(&rid).unwrap().0;
            for c in cols {
                row[*c] = r[*c].clone();
            }
        }
        check(&model);
    }
    // Bad updates change nothing.
    let before = live_files(&dest);
    for (rows, why) in [
        (
            vec![json!({"_ROW_ID": 999, "name": "x"})],
            "not in the table",
        ),
        (
            vec![
                json!({"_ROW_ID": 1, "name": "x"}),
                json!({"_ROW_ID": 1, "name": "y"}),
            ],
            "given twice",
        ),
        (vec![json!({"_ROW_ID": 1, "dt": "c"})], "partition key"),
        (
            vec![json!({"_ROW_ID": 1, "name": "x"}), json!({"_ROW_ID": 2})],
            "every line must set the columns of the first line",
        ),
    ] {
        let input = out.join(format!("{name}.bad.jsonl"));
        write_jsonl(&input, &rows);
        let err = run(&["update", t, "--input", input.to_str().unwrap()]).unwrap_err();
        assert!(err.contains(why), "{why}: {err}");
    }
    assert_eq!(live_files(&dest), before);
    let rows: Vec<Value> = model.values().map(|(r, _)| r.clone()).collect();
    write_expected(&out, name, &rows, &["id"]);
}

#[test]
fn blob_updates_write_placeholders_for_untouched_rows() {
    let out = out_dir();
    let name = "de_update_blob";
    let dest = out.join("corpus.db").join(name);
    let _ = std::fs::remove_dir_all(&dest);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    let t = dest.to_str().unwrap();
    let schema = out.join(format!("{name}.schema.json"));
    std::fs::write(
        &schema,
        r#"{"fields": [{"id": 0, "name": "id", "type": "INT"}, {"id": 1, "name": "name", "type": "STRING"},
            {"id": 2, "name": "pic", "type": "BLOB"}],
            "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}"#,
    )
    .unwrap();
    run(&["create", t, "--schema", schema.to_str().unwrap()]).unwrap();
    let pic = |id: i64, version: u8| -> Vec<u8> { vec![id as u8 ^ version; 10 + id as usize] };
    let mut model: BTreeMap<i64, Value> = BTreeMap::new();
    let rows: Vec<Value> = (0..8)
        .map(|id| json!({"id": id, "name": format!("n{id}"), "pic": hex(&pic(id, 0))}))
        .collect();
    let input = out.join(format!("{name}.in.jsonl"));
    write_jsonl(&input, &rows);
    run(&["write", t, "--input", input.to_str().unwrap()]).unwrap();
    for id in 0..8 {
        model.insert(
            id,
            json!({"id": id, "name": format!("n{id}"), "pic": blob_value(Some(&pic(id, 0)))}),
        );
    }
    // Update 1: new blobs for rows 2 and 5, NULL for row 6.
    let upd = vec![
        json!({"_ROW_ID": 2, "pic": hex(&pic(2, 7))}),
        json!({"_ROW_ID": 5, "pic": hex(&pic(5, 7))}),
        json!({"_ROW_ID": 6, "pic": null}),
    ];
    let input = out.join(format!("{name}.update0.jsonl"));
    write_jsonl(&input, &upd);
    let before = live_files(&dest);
    run(&["update", t, "--input", input.to_str().unwrap()]).unwrap();
    model.get_mut(&2).unwrap()["pic"] = blob_value(Some(&pic(2, 7)));
    model.get_mut(&5).unwrap()["pic"] = blob_value(Some(&pic(5, 7)));
    model.get_mut(&6).unwrap()["pic"] = blob_value(None);
    let new: Vec<_> = live_files(&dest)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    assert_eq!(new.len(), 1, "{new:?}");
    assert!(new[0].0.ends_with(".blob"), "{new:?}");
    assert_eq!((new[0].1, new[0].2), (0, 8));
    assert_eq!(new[0].3, vec!["pic".to_owned()]);
    // The blob file: 5 placeholders, 1 null, 2 records of the new payloads only.
    let bytes = std::fs::read(dest.join("bucket-0").join(&new[0].0)).unwrap();
    let index = paimon_kernel::format::blob::decode_blob_file_index(&bytes, &new[0].0).unwrap();
    assert_eq!(index.row_count(), 8);
    assert_eq!(index.placeholder_count(), 5);
    assert_eq!(index.null_count(), 1);
    // Update 2: a name only (the blobs stay, read through both layers).
    let input = out.join(format!("{name}.update1.jsonl"));
    write_jsonl(&input, &[json!({"_ROW_ID": 5, "name": "renamed"})]);
    run(&["update", t, "--input", input.to_str().unwrap()]).unwrap();
    model.get_mut(&5).unwrap()["name"] = json!("renamed");
    let got = scan(&dest, "id,name,pic");
    let want: Vec<Value> = model.values().cloned().collect();
    check_rows(name, "update", &got, &want).unwrap();
    write_expected(&out, name, &want, &["id"]);
}
