//! Retractions (`-U`, `-D`) written to partial-update and aggregation tables: the write
//! buffer merges them with the table's merge engine and level-0 files keep each key's result
//! with its row kind (Java's write buffer), so reads (ours and Java 2.0.0's when
//! java-check's `read` exists) see the engine's semantics: `aggregation` retracts sums,
//! `remove-record-on-delete` removes rows, `delete --where` works on both engines.

use arrow_array::RecordBatch;
use paimon_native::Table;

use crate::changelog::{batch, java_lines};
use crate::common::table_rows;

async fn write_commit(table: &Table, b: &RecordBatch) -> paimon_native::Result<()> {
    let mut w = table.new_write().await?;
    w.write(b).await?;
    let messages = w.prepare_commit().await?;
    table.new_commit(None).commit(messages).await?;
    Ok(())
}

fn expect(rows: &[(i64, Option<i32>, Option<i32>)]) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|(k, a, b)| serde_json::json!({"k": k, "a": a, "b": b}).to_string())
        .collect();
    v.sort();
    v
}

async fn create(dir: &std::path::Path, options: &str) -> Table {
    let json = format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "a", "type": "INT"}},
        {{"name": "b", "type": "INT"}}], "primaryKeys": ["k"],
        "options": {{"bucket": "1", {options}}}}}"#
    );
    Table::create(dir.to_str().unwrap(), json.as_bytes())
        .await
        .unwrap()
}

async fn check(dir: &std::path::Path, want: &[(i64, Option<i32>, Option<i32>)], what: &str) {
    let table = Table::open(dir.to_str().unwrap()).await.unwrap();
    assert_eq!(table_rows(&table).await, expect(want), "{what}");
    if let Some(java) = java_lines(dir, &[]) {
        assert_eq!(java, expect(want), "{what}: Java's rows");
    }
}

#[tokio::test]
async fn aggregation_retractions_and_deletes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("agg");
    let table = create(
        &dir,
        r#""merge-engine": "aggregation", "fields.a.aggregate-function": "sum",
        "aggregation.remove-record-on-delete": "true""#,
    )
    .await;
    write_commit(
        &table,
        &batch(&[
            ("+I", 1, Some(5), Some(1)),
            ("+I", 2, Some(3), Some(2)),
            ("+I", 3, Some(4), Some(3)),
        ]),
    )
    .await
    .unwrap();
    // One commit: a retraction and its replacement in the same buffer (merged there), a
    // retraction alone (merged at read), a delete.
    write_commit(
        &table,
        &batch(&[
            ("-U", 1, Some(5), Some(1)),
            ("+U", 1, Some(7), Some(9)),
            ("-U", 2, Some(1), None),
            ("-D", 3, None, None),
        ]),
    )
    .await
    .unwrap();
    check(
        &dir,
        &[(1, Some(7), Some(9)), (2, Some(2), Some(2))],
        "aggregation",
    )
    .await;
    // `delete --where` on the same table.
    let outcome = table.delete_where("k = 2", None).await.unwrap();
    assert_eq!(outcome.rows_deleted, 1);
    check(&dir, &[(1, Some(7), Some(9))], "aggregation after delete").await;
}

#[tokio::test]
async fn partial_update_deletes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pu");
    let table = create(
        &dir,
        r#""merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true""#,
    )
    .await;
    write_commit(
        &table,
        &batch(&[("+I", 1, Some(1), None), ("+I", 2, Some(2), Some(2))]),
    )
    .await
    .unwrap();
    write_commit(
        &table,
        &batch(&[
            ("+I", 1, None, Some(10)),
            ("-D", 2, None, None),
            ("+I", 3, Some(3), None),
            ("-D", 3, None, None),
            ("+I", 4, Some(4), None),
        ]),
    )
    .await
    .unwrap();
    check(
        &dir,
        &[(1, Some(1), Some(10)), (4, Some(4), None)],
        "partial-update",
    )
    .await;
    let outcome = table.delete_where("k = 4", None).await.unwrap();
    assert_eq!(outcome.rows_deleted, 1);
    check(
        &dir,
        &[(1, Some(1), Some(10))],
        "partial-update after delete",
    )
    .await;

    // Without remove-record-on-delete, partial update takes no deletes (Java's message).
    let dir = tmp.path().join("pu_plain");
    let table = create(&dir, r#""merge-engine": "partial-update""#).await;
    let err = write_commit(
        &table,
        &batch(&[("+I", 1, Some(1), None), ("-D", 1, None, None)]),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("can not accept delete records"), "{err}");
}
