//! Data-evolution tables with deletion vectors: writes, deletes (vectors keyed by each
//! row-id group's anchor), column updates and compactions (the anchors' vectors move to the
//! outputs). After every step our rows with `_ROW_ID` equal a model, and pypaimon and Java
//! Paimon 2.0.0 read the final table as the model (when installed), Java with `_ROW_ID` too.
//! (Java 1.4.2 refused these tables: "Data evolution config must disabled with
//! deletion-vectors.enabled".)

use std::path::Path;

use serde_json::{Value, json};

use crate::delete_dv::{check_pypaimon, create, live_dvs, model_rows, ok, write};

/// Our rows with `_ROW_ID` (sorted canonical JSON lines).
fn rows_with_row_id(loc: &str) -> Vec<String> {
    let out = ok(&[
        "scan",
        loc,
        "--columns",
        "_ROW_ID,id,name,v",
        "--format",
        "jsonl",
    ]);
    let mut rows: Vec<String> = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap().to_string())
        .collect();
    rows.sort();
    rows
}

fn row(row_id: i64, id: i64) -> Value {
    json!({"_ROW_ID": row_id, "id": id, "name": format!("n{id}"), "v": id * 10})
}

/// The model without `_ROW_ID` (a default read).
fn plain(model: &[Value]) -> Vec<Value> {
    model
        .iter()
        .map(|r| json!({"id": r["id"], "name": r["name"], "v": r["v"]}))
        .collect()
}

/// Names of the files in the table's `bucket-0` directory, sorted.
fn data_files(loc: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(Path::new(loc).join("bucket-0"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Java 2.0.0 reads `columns` of `loc` as `want` (sorted canonical JSON lines), when installed.
fn check_java(loc: &str, columns: &str, want: &[String], what: &str) {
    if let Some(java) = crate::oracle::java_rows_with(Path::new(loc), &["--columns", columns]) {
        assert_eq!(java, want, "Java 2.0.0: {what}");
    }
}

fn check(loc: &str, model: &[Value], step: &str) {
    assert_eq!(
        rows_with_row_id(loc),
        model_rows(model),
        "ours after {step}"
    );
}

/// Three writes (row-id groups [0, 3], [4, 7], [8, 11]), a column update (a field group over
/// [0, 3]), deletes in every group, a compaction into one file over [0, 11] whose vector
/// holds every deleted row at its new position, a delete and a write after it, and a second
/// compaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_updates_and_compactions_keep_row_ids_and_deletions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("corpus.db");
    std::fs::create_dir_all(&db).unwrap();
    let name = "de_dv";
    let loc = create(
        &db,
        name,
        json!({"fields": [
            {"name": "id", "type": "INT"}, {"name": "name", "type": "STRING"},
            {"name": "v", "type": "BIGINT NOT NULL"}],
          "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
                      "deletion-vectors.enabled": "true", "compaction.min.file-num": "2"}}),
    );
    let mut model: Vec<Value> = Vec::new();
    for batch in [0..4i64, 4..8, 8..12] {
        let rows: Vec<Value> = batch.map(|i| row(i, i)).collect();
        write(&loc, &plain(&rows));
        model.extend(rows);
    }
    check(&loc, &model, "the writes");

    // A column update of rows 1 and 2: a field group over [0, 3].
    let update = Path::new(&loc).with_extension("update.jsonl");
    std::fs::write(
        &update,
        "{\"_ROW_ID\":1,\"name\":\"u1\"}\n{\"_ROW_ID\":2,\"name\":\"u2\"}\n",
    )
    .unwrap();
    ok(&["update", &loc, "--input", update.to_str().unwrap()]);
    model[1]["name"] = json!("u1");
    model[2]["name"] = json!("u2");
    check(&loc, &model, "the update");

    // Deletes: the vectors go to the anchors (the oldest normal file of each group), at
    // row id minus the group's first row id.
    let out = ok(&["delete", &loc, "--where", "id = 2 OR id = 5 OR v = 110"]);
    assert!(out.contains("deleted 3 rows"), "{out}");
    model.retain(|r| ![2, 5, 11].contains(&r["id"].as_i64().unwrap()));
    check(&loc, &model, "the delete");
    let dvs = live_dvs(&loc, false).await;
    let mut positions: Vec<Vec<u64>> = dvs.values().cloned().collect();
    positions.sort();
    assert_eq!(positions, vec![vec![1], vec![2], vec![3]]);
    // A row already deleted is not deleted again; a deleted row cannot be updated.
    let out = ok(&["delete", &loc, "--where", "id = 2"]);
    assert!(out.contains("deleted 0 rows"), "{out}");
    std::fs::write(&update, "{\"_ROW_ID\":5,\"name\":\"x\"}\n").unwrap();
    let failed = crate::delete_dv::run(&["update", &loc, "--input", update.to_str().unwrap()]);
    assert!(!failed.status.success());
    assert!(
        String::from_utf8_lossy(&failed.stderr).contains("_ROW_ID 5 was deleted"),
        "{}",
        String::from_utf8_lossy(&failed.stderr)
    );

    // Compaction: 4 normal files in one run → one file over [0, 11].
    let files_before = data_files(&loc);
    ok(&["compact", &loc]);
    check(&loc, &model, "the compaction");
    let dvs = live_dvs(&loc, false).await;
    assert_eq!(dvs.len(), 1, "{dvs:?}");
    let (output, positions) = dvs.iter().next().unwrap();
    assert!(!files_before.contains(output), "{output} is not a new file");
    assert_eq!(positions, &vec![2, 5, 11]);

    // A delete and a write after the compaction, then a second compaction.
    ok(&["delete", &loc, "--where", "id = 0"]);
    model.retain(|r| r["id"] != json!(0));
    let rows: Vec<Value> = (12..16).map(|i| row(i, i)).collect();
    write(&loc, &plain(&rows));
    model.extend(rows);
    check(&loc, &model, "a delete and a write after the compaction");
    ok(&["compact", &loc]);
    check(&loc, &model, "the second compaction");
    let dvs = live_dvs(&loc, false).await;
    assert_eq!(dvs.len(), 1, "{dvs:?}");
    assert_eq!(dvs.values().next().unwrap(), &vec![0, 2, 5, 11]);
    let plan: Value = serde_json::from_str(&ok(&["plan-compaction", &loc, "--json"])).unwrap();
    assert_eq!(
        plan["units"],
        json!([]),
        "one file left: nothing to compact"
    );
    check_pypaimon(dir.path(), name, &plain(&model));
    check_java(
        &loc,
        "_ROW_ID,id,name,v",
        &model_rows(&model),
        "the last compaction",
    );
}

/// The corpus' data-evolution tables with deletion vectors (written by pypaimon: deletes by
/// row id and predicate, MERGE INTO, updates after deletes), compacted: the rows with
/// `_ROW_ID` equal the corpus' expected read, written back by our writer they read the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_tables_with_deletion_vectors_compact() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables");
    for (name, columns) in [
        ("de_dv_delete", "_ROW_ID,id,grp,score"),
        ("de_merge_into", "_ROW_ID,id,name,age"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().join(name);
        crate::copy_dir(&corpus.join("corpus.db").join(name), &loc);
        let loc = loc.to_str().unwrap();
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(corpus.join(format!("{name}.expected.json"))).unwrap(),
        )
        .unwrap();
        let read = expected["additional_reads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == "latest-with-row-id")
            .unwrap();
        let want = model_rows(read["rows"].as_array().unwrap());
        let ours = |loc: &str| {
            let out = ok(&["scan", loc, "--columns", columns, "--format", "jsonl"]);
            let mut rows: Vec<String> = out
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap().to_string())
                .collect();
            rows.sort();
            rows
        };
        assert_eq!(ours(loc), want, "{name} before");
        ok(&["alter", loc, "--set", "compaction.min.file-num=2"]);
        let out = ok(&["compact", loc]);
        assert!(out.contains("compacted into snapshot"), "{name}: {out}");
        assert_eq!(ours(loc), want, "{name} after the compaction");
        assert_eq!(live_dvs(loc, false).await.len(), 1, "{name}");
        check_java(loc, columns, &want, name);
    }
}

/// `data-evolution.compaction.rewrite-row-ids` with deletion vectors (Java 2.0's
/// materializing compaction), on a table with a BLOB column: the bins with deleted rows are
/// written again without them, BLOB values into new `.blob` files; the commit gives the rows
/// new row ids from the snapshot's `nextRowId` and no vector is left. The rows read the same
/// (by us and pypaimon).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn materializing_compaction_drops_deleted_rows_and_renumbers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("corpus.db");
    std::fs::create_dir_all(&db).unwrap();
    let name = "de_dv_materialize";
    let loc = create(
        &db,
        name,
        json!({"fields": [
            {"name": "id", "type": "INT"}, {"name": "b", "type": "BLOB"}],
          "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
                      "deletion-vectors.enabled": "true",
                      "data-evolution.compaction.rewrite-row-ids": "true"}}),
    );
    let mut model: Vec<Value> = Vec::new();
    for batch in [0..5i64, 5..10] {
        let rows: Vec<Value> = batch
            .map(|i| json!({"id": i, "b": format!("{:02x}{:02x}", i, i + 1)}))
            .collect();
        write(&loc, &rows);
        model.extend(rows);
    }
    ok(&["delete", &loc, "--where", "id = 1 OR id = 7 OR id = 8"]);
    model.retain(|r| ![1, 7, 8].contains(&r["id"].as_i64().unwrap()));
    let scan = |columns: &str| {
        let out = ok(&["scan", &loc, "--columns", columns, "--format", "jsonl"]);
        let mut rows: Vec<String> = out.lines().map(str::to_owned).collect();
        rows.sort();
        rows
    };
    let before = scan("id,b");
    assert_eq!(before.len(), 7);
    let canonical_before = canonical_rows(&loc).await;
    let out = ok(&["compact", &loc]);
    assert!(out.contains("compacted into snapshot 4"), "{out}");
    assert_eq!(scan("id,b"), before);
    // New row ids: the 7 live rows numbered from the old nextRowId (10).
    let ids: Vec<i64> = scan("_ROW_ID")
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["_ROW_ID"]
                .as_i64()
                .unwrap()
        })
        .collect();
    let mut ids = ids;
    ids.sort_unstable();
    assert_eq!(ids, (10..17).collect::<Vec<i64>>());
    assert!(live_dvs(&loc, false).await.is_empty());
    let snapshot: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&loc).join("snapshot/snapshot-4")).unwrap(),
    )
    .unwrap();
    assert_eq!(snapshot["commitKind"], "COMPACT");
    assert_eq!(snapshot["nextRowId"], 17);
    // The rows as the canonical renderer prints them (BLOBs with length and hash).
    let canonical = canonical_rows(&loc).await;
    let mut ids: Vec<i64> = canonical
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    let model_ids: Vec<i64> = model.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, model_ids);
    assert_eq!(model_rows(&canonical), model_rows(&canonical_before));
    check_pypaimon(dir.path(), name, &canonical);
    if let Some(java) = crate::oracle::java_rows(Path::new(&loc)) {
        assert_eq!(java, model_rows(&canonical), "Java 2.0.0 after renumbering");
    }
}

/// Every row of the latest snapshot, as canonical JSON values.
async fn canonical_rows(loc: &str) -> Vec<Value> {
    let table = paimon_native::Table::open(loc).await.unwrap();
    let batches = table.scan().to_batches().await.unwrap();
    paimon_kernel::canonical::batches_rows(&batches).unwrap()
}
