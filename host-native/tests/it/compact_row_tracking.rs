//! Compaction of row-tracking append tables without data evolution (`row-tracking.enabled`,
//! `bucket` = -1): tables created, written and deleted from with the CLI, compacted with
//! `paimon-kernel compact`. Every row keeps its `_ROW_ID` and `_SEQUENCE_NUMBER` (read by us
//! and by Java 2.0.0 through java-check's `read --columns ...,_ROW_ID,_SEQUENCE_NUMBER`
//! when installed), the outputs are laid out as Java's compactors write them (the table's
//! columns, then `_ROW_ID` and `_SEQUENCE_NUMBER`; `write_cols` naming them; no
//! `first_row_id`), the commit assigns no row ids and later writes continue at `nextRowId`.

use std::path::Path;

use paimon_kernel::canonical;
use paimon_kernel::spec::{CommitKind, FileSource};
use paimon_native::Table;
use serde_json::{Value, json};

use crate::common::{create, ok, write};
use crate::oracle::java_rows_with;

/// `paimon-kernel compact TABLE --json`.
fn compact(table: &str) -> Value {
    serde_json::from_str(&ok(&["compact", table, "--json"])).unwrap()
}

fn row(id: i64, p: &str) -> Value {
    json!({"id": id, "p": p, "v": format!("v{id}")})
}

/// The table's columns followed by the two row-tracking columns.
fn tracked_columns(fields: &[&str]) -> Vec<String> {
    fields
        .iter()
        .map(|f| f.to_string())
        .chain(["_ROW_ID".to_string(), "_SEQUENCE_NUMBER".to_string()])
        .collect()
}

/// Our rows with `_ROW_ID` and `_SEQUENCE_NUMBER` (sorted canonical JSON).
async fn our_rows(table: &Table, columns: &[String]) -> Vec<String> {
    let batches = table
        .scan()
        .with_projection(columns.to_vec())
        .to_batches()
        .await
        .unwrap();
    let mut rows: Vec<String> = canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    rows.sort();
    rows
}

/// Java 2.0.0 reads the same rows, row ids and sequence numbers (skipped without the checker).
fn check_java(loc: &str, columns: &[String], ours: &[String]) {
    let cols = columns.join(",");
    match java_rows_with(Path::new(loc), &["--columns", &cols]) {
        None => eprintln!("java-check not installed: Java read of {loc} skipped"),
        Some(java) => assert_eq!(java, ours, "Java 2.0.0 reads {loc} differently"),
    }
}

/// The rows' `_ROW_ID`s (sorted).
fn row_ids(rows: &[String]) -> Vec<i64> {
    let mut ids: Vec<i64> = rows
        .iter()
        .map(|r| {
            serde_json::from_str::<Value>(r).unwrap()["_ROW_ID"]
                .as_i64()
                .unwrap()
        })
        .collect();
    ids.sort();
    ids
}

/// Checks the live files compactions wrote (file source `COMPACT`; at least one): Java's
/// layout of row-tracking outputs, sequence ranges inside the rows' values.
async fn check_outputs(table: &Table, columns: &[String]) {
    let files = table.scan().data_files().await.unwrap().unwrap();
    let outputs: Vec<_> = files
        .entries
        .iter()
        .map(|e| &e.file)
        .filter(|f| f.file_source == Some(FileSource::Compact))
        .collect();
    assert!(!outputs.is_empty());
    for f in outputs {
        let name = &f.file_name;
        assert_eq!(f.first_row_id, None, "{name}");
        assert_eq!(f.write_cols.as_deref(), Some(columns), "{name}");
        assert!(
            0 < f.min_sequence_number && f.min_sequence_number <= f.max_sequence_number,
            "{name}: {}..{}",
            f.min_sequence_number,
            f.max_sequence_number
        );
    }
}

/// The number of tasks (one per bucket entry of the report).
fn tasks(report: &Value) -> usize {
    report["buckets"].as_array().unwrap().len()
}

/// A partitioned row-tracking table: five writes, an ALTER TABLE ADD COLUMN, two more
/// writes; compacted (one task per partition, old files read with schema evolution); rows,
/// row ids and sequence numbers unchanged; a write after it continues at `nextRowId`; a
/// second compaction reads the first one's stored ids back and keeps them too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn written_row_tracking_table_keeps_row_ids() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(
        dir.path(),
        "t",
        json!({"fields": [
            {"name": "id", "type": "INT"}, {"name": "p", "type": "STRING"},
            {"name": "v", "type": "STRING"}],
          "partitionKeys": ["p"],
          "options": {"bucket": "-1", "row-tracking.enabled": "true",
                      "compaction.min.file-num": "3"}}),
    );
    for n in 0..5i64 {
        let rows: Vec<Value> = (0..4)
            .map(|i| row(n * 4 + i, if i % 2 == 0 { "a" } else { "b" }))
            .collect();
        write(&loc, &rows);
    }
    ok(&["alter", &loc, "--add-column", "w STRING"]);
    for n in 5..7i64 {
        let rows: Vec<Value> = (0..3)
            .map(|i| {
                let mut r = row(n * 4 + i, if i == 1 { "b" } else { "a" });
                r["w"] = json!(format!("w{n}"));
                r
            })
            .collect();
        write(&loc, &rows);
    }
    let table = Table::open(&loc).await.unwrap();
    let columns = tracked_columns(&["id", "p", "v", "w"]);
    let before = our_rows(&table, &columns).await;
    assert_eq!(row_ids(&before), (0..26).collect::<Vec<_>>());
    check_java(&loc, &columns, &before);

    let report = compact(&loc);
    assert_eq!(tasks(&report), 2, "{report}");
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    assert_eq!(snapshot.commit_kind, CommitKind::Compact);
    assert_eq!(snapshot.next_row_id, Some(26));
    assert_eq!(our_rows(&table, &columns).await, before);
    check_outputs(&table, &columns).await;
    check_java(&loc, &columns, &before);

    // Later writes continue at the next row id, with their snapshot as sequence number.
    for n in 0..2i64 {
        write(&loc, &[row(100 + n, "a"), row(200 + n, "b")]);
    }
    let after_writes = our_rows(&table, &columns).await;
    assert_eq!(row_ids(&after_writes), (0..30).collect::<Vec<_>>());
    let new_rows: Vec<Value> = after_writes
        .iter()
        .map(|r| serde_json::from_str::<Value>(r).unwrap())
        .filter(|r| r["id"].as_i64().unwrap() >= 100)
        .collect();
    let mut got: Vec<(i64, i64, i64)> = new_rows
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["_ROW_ID"].as_i64().unwrap(),
                r["_SEQUENCE_NUMBER"].as_i64().unwrap(),
            )
        })
        .collect();
    got.sort();
    // Per write: the next two row ids (partitions in the commit's order), the write's
    // snapshot as sequence number.
    let compact_snapshot = snapshot.id;
    let write_of = |id: i64| if id % 100 == 0 { 0 } else { 1 };
    for w in 0..2i64 {
        let mut ids: Vec<i64> = got
            .iter()
            .filter(|(id, _, _)| write_of(*id) == w)
            .map(|(_, row_id, seq)| {
                assert_eq!(*seq, compact_snapshot + 1 + w);
                *row_id
            })
            .collect();
        ids.sort();
        assert_eq!(ids, vec![26 + 2 * w, 27 + 2 * w], "{got:?}");
    }

    // Each partition: the compacted file and two new ones → a second compaction over files
    // with stored ids and files without.
    let report = compact(&loc);
    assert_eq!(tasks(&report), 2, "{report}");
    assert_eq!(our_rows(&table, &columns).await, after_writes);
    check_outputs(&table, &columns).await;
    let files = table.scan().data_files().await.unwrap().unwrap();
    assert_eq!(files.entries.len(), 2);
    check_java(&loc, &columns, &after_writes);
}

/// A row-tracking table with deletion vectors: rows deleted with `delete --where`, then
/// compacted: the deleted rows are gone, the others keep their row ids (now with gaps) and
/// sequence numbers, the vectors of the compacted files are dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_tracking_table_with_deletion_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(
        dir.path(),
        "t",
        json!({"fields": [
            {"name": "id", "type": "INT"}, {"name": "p", "type": "STRING"},
            {"name": "v", "type": "STRING"}],
          "options": {"bucket": "-1", "row-tracking.enabled": "true",
                      "deletion-vectors.enabled": "true", "compaction.min.file-num": "3"}}),
    );
    for n in 0..4i64 {
        let rows: Vec<Value> = (0..5).map(|i| row(n * 5 + i, "a")).collect();
        write(&loc, &rows);
    }
    ok(&["delete", &loc, "--where", "id IN (0, 3, 6, 9, 12, 15, 18)"]);
    let table = Table::open(&loc).await.unwrap();
    let columns = tracked_columns(&["id", "p", "v"]);
    let before = our_rows(&table, &columns).await;
    let expected_ids: Vec<i64> = (0..20).filter(|i| i % 3 != 0).collect();
    assert_eq!(row_ids(&before), expected_ids);
    check_java(&loc, &columns, &before);

    let report = compact(&loc);
    assert_eq!(tasks(&report), 1, "{report}");
    assert_eq!(our_rows(&table, &columns).await, before);
    check_outputs(&table, &columns).await;
    let files = table.scan().data_files().await.unwrap().unwrap();
    assert_eq!(files.entries.len(), 1);
    assert_eq!(files.entries[0].file.row_count, before.len() as i64);
    check_java(&loc, &columns, &before);

    write(&loc, &[row(50, "a")]);
    let rows = our_rows(&table, &columns).await;
    assert_eq!(*row_ids(&rows).last().unwrap(), 20);
}
