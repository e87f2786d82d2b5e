//! The operations over corpus tables in a `MemoryStore`, checked against the expected files.

use std::path::{Path, PathBuf};

use paimon_kernel::io::{Machine, MemoryStore};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::*;
use paimon_kernel::util::hex;

pub(crate) fn tables_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

pub(crate) fn load(table: &str) -> MemoryStore {
    fn walk(root: &Path, dir: &Path, store: &mut MemoryStore) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, store);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace('\\', "/");
                store.objects.insert(rel, std::fs::read(&p).unwrap().into());
            }
        }
    }
    let root = tables_dir().join("corpus.db").join(table);
    let mut store = MemoryStore::new();
    walk(&root, &root, &mut store);
    store
}

pub(crate) fn expected(table: &str) -> Value {
    let text =
        std::fs::read_to_string(tables_dir().join(format!("{table}.expected.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn run<T: Send + 'static>(store: &mut MemoryStore, m: Machine<T>) -> paimon_kernel::Result<T> {
    Ok(store.run(m)?.pop().unwrap())
}

fn query(j: Value) -> Query {
    serde_json::from_value(j).unwrap()
}

#[test]
fn snapshots_and_summary_match_the_expected_file() {
    for table in [
        "pk_dedup",
        "append_tags_rollback",
        "evo_append",
        "blob_single",
    ] {
        let mut store = load(table);
        let exp = expected(table);
        let got = run(
            &mut store,
            Machine::once("t", |io| async move { snapshots(&io).await }),
        )
        .unwrap();
        let got = got.as_array().unwrap();
        let want = exp["snapshots"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{table}");
        for (g, w) in got.iter().zip(want) {
            for key in [
                "id",
                "schemaId",
                "commitKind",
                "totalRecordCount",
                "deltaRecordCount",
            ] {
                assert_eq!(g[key], w[key], "{table} snapshot {} {key}", w["id"]);
            }
        }
        let s = run(
            &mut store,
            Machine::once("t", |io| async move { summary(&io).await }),
        )
        .unwrap();
        assert_eq!(s["snapshotId"], exp["snapshot_id"], "{table}");
        assert_eq!(s["schemaId"], exp["schema_id"], "{table}");
        assert_eq!(s["primaryKeys"], exp["primary_keys"], "{table}");
        assert_eq!(s["partitionKeys"], exp["partition_keys"], "{table}");
    }
}

#[test]
fn schema_fields_match_the_expected_file_at_every_schema() {
    // evo_append: snapshot 1 still has the old columns, the latest has the evolved ones.
    let mut store = load("evo_append");
    let exp = expected("evo_append");
    let s = run(
        &mut store,
        Machine::once(
            "t",
            |io| async move { schema(&io, &Query::default()).await },
        ),
    )
    .unwrap();
    let want: Vec<(i64, String, String)> = exp["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_i64().unwrap(),
                f["name"].as_str().unwrap().to_string(),
                f["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let got: Vec<(i64, String, String)> = s["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let ty = f["type"].as_str().unwrap().to_string();
            (
                f["id"].as_i64().unwrap(),
                f["name"].as_str().unwrap().to_string(),
                ty,
            )
        })
        .collect();
    assert_eq!(got, want);
    let q = query(serde_json::json!({"snapshotId": 1}));
    let s1 = run(
        &mut store,
        Machine::once("t", |io| async move { schema(&io, &q).await }),
    )
    .unwrap();
    let first_read = exp["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["options"]["scan.snapshot-id"] == "1")
        .unwrap();
    assert_eq!(s1["id"], first_read["schema_id"]);
    assert_ne!(
        s1["fields"], s["fields"],
        "time travel must use the old schema"
    );
}

#[test]
fn files_match_the_expected_file() {
    for table in [
        "pk_dedup",
        "append_partitioned",
        "blob_single",
        "de_dv_delete",
        "pk_postpone",
    ] {
        let mut store = load(table);
        let exp = expected(table);
        let got = run(
            &mut store,
            Machine::once("t", |io| async move { files(&io, &Query::default()).await }),
        )
        .unwrap();
        let key = |name: &str, bucket: i64, level: i64, rows: i64, min: i64, max: i64| {
            (name.to_string(), bucket, level, rows, min, max)
        };
        let mut g: Vec<_> = got["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                key(
                    f["fileName"].as_str().unwrap(),
                    f["bucket"].as_i64().unwrap(),
                    f["level"].as_i64().unwrap(),
                    f["rowCount"].as_i64().unwrap(),
                    f["minSequenceNumber"].as_i64().unwrap(),
                    f["maxSequenceNumber"].as_i64().unwrap(),
                )
            })
            .collect();
        let mut w: Vec<_> = exp["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                key(
                    f["file_path"].as_str().unwrap().rsplit('/').next().unwrap(),
                    f["bucket"].as_i64().unwrap(),
                    f["level"].as_i64().unwrap(),
                    f["record_count"].as_i64().unwrap(),
                    f["min_sequence_number"].as_i64().unwrap(),
                    f["max_sequence_number"].as_i64().unwrap(),
                )
            })
            .collect();
        g.sort();
        w.sort();
        assert_eq!(g, w, "{table}");
        // Every path the page would fetch exists.
        for f in got["files"].as_array().unwrap() {
            let p = f["path"].as_str().unwrap();
            assert!(store.objects.contains_key(p), "{table}: {p}");
        }
        for f in got["indexFiles"].as_array().unwrap() {
            let p = f["path"].as_str().unwrap();
            assert!(store.objects.contains_key(p), "{table}: {p}");
        }
        assert_eq!(
            got["indexFiles"].as_array().unwrap().len(),
            exp["index_files"].as_array().unwrap().len(),
            "{table}"
        );
    }
}

#[test]
fn tags_listed_and_named() {
    let mut store = load("append_tags_rollback");
    let exp = expected("append_tags_rollback");
    let got = run(
        &mut store,
        Machine::once("t", |io| async move { tags(&io, None).await }),
    )
    .unwrap();
    let got: std::collections::BTreeMap<String, i64> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["snapshotId"].as_i64().unwrap(),
            )
        })
        .collect();
    let want: std::collections::BTreeMap<String, i64> = exp["tags"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    let err = run(
        &mut store,
        Machine::once("t", |io| async move {
            tags(&io, Some(vec!["nope".into()])).await
        }),
    )
    .unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn blob_bytes_match_the_expected_rows() {
    for table in ["blob_single", "blob_update"] {
        let mut store = load(table);
        let exp = expected(table);
        let read = exp["additional_reads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == "latest-with-row-id")
            .unwrap();
        let mut checked = 0;
        for row in read["rows"].as_array().unwrap() {
            let row_id = row["_ROW_ID"].as_i64().unwrap();
            let q = query(serde_json::json!({"rowId": row_id, "column": "data"}));
            let got = run(
                &mut store,
                Machine::once("t", |io| async move { blob(&io, &q).await }),
            )
            .unwrap();
            let want = &row["data"];
            match got {
                None => assert!(want.is_null(), "{table} row {row_id}"),
                Some(b) => {
                    assert_eq!(
                        want["len"].as_u64().unwrap(),
                        b.len() as u64,
                        "{table} row {row_id}"
                    );
                    assert_eq!(
                        want["sha256"].as_str().unwrap(),
                        hex(&Sha256::digest(&b)),
                        "{table} row {row_id}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 4, "{table}: {checked}");
    }
}

#[test]
fn bad_queries_are_errors_not_panics() {
    assert!(Query::from_json(Some(r#"{"snapshotID": 1}"#)).is_err());
    assert!(Query::from_json(Some("[1]")).is_err());
    let mut store = load("blob_single");
    for q in [
        serde_json::json!({"rowId": 0}),
        serde_json::json!({"rowId": 0, "column": "label"}),
        serde_json::json!({"rowId": 0, "column": "nope"}),
        serde_json::json!({"rowId": 999, "column": "data"}),
        serde_json::json!({"rowId": -5, "column": "data"}),
        serde_json::json!({"rowId": 0, "column": "data", "snapshotId": 99}),
    ] {
        let q = query(q);
        assert!(
            run(
                &mut store,
                Machine::once("t", |io| async move { blob(&io, &q).await })
            )
            .is_err()
        );
    }
    let mut empty = MemoryStore::new();
    let err = run(
        &mut empty,
        Machine::once("t", |io| async move { summary(&io).await }),
    )
    .unwrap_err();
    assert!(err.to_string().contains("no Paimon table"), "{err}");
}
