//! Cross-partition updates of dynamic-bucket primary-key tables (`bucket` = -1, a partition
//! key outside the primary key), as Java's global index: a key lives in one partition of the
//! whole table; `deduplicate` moves it to the partition of its newest row, `partial-update`
//! and `aggregation` merge later rows into the partition it was first written to. Each write
//! bootstraps the index from the table's data. Checked against a model and Java Paimon 2.0.0
//! (see [`crate::oracle`]).

use crate::oracle::{java_rows, sorted_strings};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::canonical;
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::json;

/// A row `(dt, k, v, n, row kind)`.
type Row<'a> = (&'a str, i64, Option<&'a str>, Option<i32>, &'a str);

fn batch(rows: &[Row<'_>]) -> RecordBatch {
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "dt",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
        ),
        (
            "k",
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
        ),
        (
            "v",
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.2))),
        ),
        (
            "n",
            Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.3))),
        ),
        (
            "_ROW_KIND",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.4))),
        ),
    ];
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

async fn create(loc: &Path, options: &str) -> Table {
    let schema = format!(
        r#"{{"fields": [{{"name": "dt", "type": "STRING NOT NULL"}},
        {{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}},
        {{"name": "n", "type": "INT"}}], "partitionKeys": ["dt"], "primaryKeys": ["k"],
        "options": {{"bucket": "-1"{options}}}}}"#
    );
    Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap()
}

/// One writer per call (each bootstraps the key index), committed.
async fn write(loc: &Path, rows: &[Row<'_>]) {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let mut w = table.new_write().await.unwrap();
    w.write(&batch(rows)).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

async fn rows(loc: &Path) -> Vec<String> {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let batches = table.scan().to_batches().await.unwrap();
    sorted_strings(&canonical::batches_rows(&batches).unwrap())
}

/// key → (dt, v, n).
type Model = BTreeMap<i64, (String, Option<String>, Option<i32>)>;

fn model_rows(model: &Model) -> Vec<String> {
    sorted_strings(
        &model
            .iter()
            .map(|(k, (dt, v, n))| json!({"dt": dt, "k": k, "v": v, "n": n}))
            .collect::<Vec<_>>(),
    )
}

async fn check(loc: &Path, model: &Model, what: &str) {
    assert_eq!(rows(loc).await, model_rows(model), "{what}: our read");
    if let Some(java) = java_rows(loc) {
        assert_eq!(java, model_rows(model), "{what}: Java 2.0.0");
    }
}

/// Keys per (partition, bucket) of the live files' rows, and no hash index files.
async fn buckets(loc: &Path) -> BTreeMap<(String, i32), usize> {
    assert!(
        !loc.join("index").exists(),
        "cross-partition tables have no hash index"
    );
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let files = table.scan().data_files().await.unwrap().unwrap();
    let mut out = BTreeMap::new();
    for e in &files.entries {
        *out.entry((format!("{:?}", e.partition), e.bucket))
            .or_insert(0) += 1;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deduplicate_keys_move_to_their_newest_partition() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    create(&loc, r#", "dynamic-bucket.target-row-num": "4""#).await;
    let mut model = Model::new();
    let apply = |model: &mut Model, rows: &[Row<'_>]| {
        for (dt, k, v, n, kind) in rows {
            if *kind == "-D" || *kind == "-U" {
                model.remove(k);
            } else {
                model.insert(*k, (dt.to_string(), v.map(str::to_owned), *n));
            }
        }
    };
    let names: Vec<String> = (0..30).map(|i| format!("v{i}")).collect();
    let commits: Vec<Vec<Row<'_>>> = vec![
        (0..10)
            .map(|k| {
                (
                    "a",
                    k,
                    Some(names[k as usize].as_str()),
                    Some(k as i32),
                    "+I",
                )
            })
            .collect(),
        vec![
            // Moved, then moved again in the same batch.
            ("b", 3, Some("to-b"), None, "+I"),
            ("c", 3, Some("to-c"), Some(33), "+U"),
            // Deleted from another partition than its own: gone.
            ("b", 4, None, None, "-D"),
            // Updated in place.
            ("a", 5, Some("same"), Some(55), "+U"),
            ("b", 20, Some("new"), None, "+I"),
        ],
        vec![
            ("a", 3, Some("back"), Some(3), "+I"),
            ("c", 20, Some("c20"), None, "+I"),
            ("a", 4, Some("again"), None, "+I"),
            ("a", 6, None, None, "-D"),
        ],
    ];
    for (i, rows) in commits.iter().enumerate() {
        write(&loc, rows).await;
        apply(&mut model, rows);
        check(&loc, &model, &format!("commit {i}")).await;
    }
    // Ten keys at 4 per bucket in partition a: buckets 0, 1, 2.
    let b = buckets(&loc).await;
    assert!(
        b.keys().filter(|(p, _)| p.contains('a')).count() >= 3,
        "{b:?}"
    );
    // Compaction keeps the rows.
    Table::open(loc.to_str().unwrap())
        .await
        .unwrap()
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    check(&loc, &model, "after a full compaction").await;
    // A write after the compaction still finds every key.
    let rows = [
        ("d", 3, Some("d3"), None, "+I"),
        ("d", 7, Some("d7"), Some(7), "+I"),
    ];
    write(&loc, &rows).await;
    apply(&mut model, &rows);
    check(&loc, &model, "after the compaction").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_update_and_aggregation_merge_into_the_first_partition() {
    let tmp = tempfile::tempdir().unwrap();
    // Partial update: later rows' non-null columns merge into the key's first partition.
    let loc = tmp.path().join("pu");
    create(&loc, r#", "merge-engine": "partial-update""#).await;
    write(
        &loc,
        &[
            ("a", 1, Some("v1"), None, "+I"),
            ("b", 2, None, Some(2), "+I"),
        ],
    )
    .await;
    write(
        &loc,
        &[
            ("b", 1, None, Some(10), "+I"),
            ("c", 2, Some("w"), None, "+I"),
        ],
    )
    .await;
    write(
        &loc,
        &[
            ("c", 1, Some("v3"), None, "+I"),
            ("c", 3, Some("x"), Some(3), "+I"),
        ],
    )
    .await;
    let mut model = Model::new();
    model.insert(1, ("a".into(), Some("v3".into()), Some(10)));
    model.insert(2, ("b".into(), Some("w".into()), Some(2)));
    model.insert(3, ("c".into(), Some("x".into()), Some(3)));
    check(&loc, &model, "partial-update").await;

    // Aggregation: sums land in the first partition.
    let loc = tmp.path().join("agg");
    create(
        &loc,
        r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum""#,
    )
    .await;
    write(&loc, &[("a", 1, Some("x"), Some(1), "+I")]).await;
    write(
        &loc,
        &[
            ("b", 1, Some("y"), Some(2), "+I"),
            ("b", 1, Some("z"), Some(4), "+I"),
        ],
    )
    .await;
    let mut model = Model::new();
    model.insert(1, ("a".into(), Some("z".into()), Some(7)));
    check(&loc, &model, "aggregation").await;
}

/// First-row: a key keeps its first row wherever later rows of it go (another partition's
/// rows of the key are dropped, as Java's `SkipNewExistingProcessor`); the bootstrap reads
/// every level, so keys a Java writer left in level 0 count too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_row_keeps_each_key_where_it_was_first_written() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("fr");
    create(&loc, r#", "merge-engine": "first-row""#).await;
    write(
        &loc,
        &[
            ("a", 1, Some("a1"), Some(1), "+I"),
            ("a", 2, Some("a2"), None, "+I"),
        ],
    )
    .await;
    write(
        &loc,
        &[
            // Another partition: dropped.
            ("b", 1, Some("b1"), Some(10), "+I"),
            // The same partition: the first row stays.
            ("a", 2, Some("a2-again"), Some(2), "+I"),
            ("b", 3, Some("b3"), None, "+I"),
            // New in this batch, then again in another partition: the first stays.
            ("c", 4, Some("c4"), None, "+I"),
            ("a", 4, Some("a4"), None, "+I"),
        ],
    )
    .await;
    let mut model = Model::new();
    model.insert(1, ("a".into(), Some("a1".into()), Some(1)));
    model.insert(2, ("a".into(), Some("a2".into()), None));
    model.insert(3, ("b".into(), Some("b3".into()), None));
    model.insert(4, ("c".into(), Some("c4".into()), None));
    check(&loc, &model, "first-row").await;
    // Keys left in level 0 (`write-only`: no compaction at write, as a streaming writer
    // leaves them; a batch read skips level 0): the next write's bootstrap still sees key 5
    // in partition d, so key 5 in e is dropped.
    let loc = tmp.path().join("fr_level0");
    create(
        &loc,
        r#", "merge-engine": "first-row", "write-only": "true""#,
    )
    .await;
    write(&loc, &[("d", 5, Some("d5"), None, "+I")]).await;
    write(&loc, &[("e", 5, Some("e5"), None, "+I")]).await;
    Table::open(loc.to_str().unwrap())
        .await
        .unwrap()
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut model = Model::new();
    model.insert(5, ("d".into(), Some("d5".into()), None));
    check(&loc, &model, "first-row over level 0").await;
}

/// Deletion vectors: the same moves as without them (a moved key's `-D` in its old bucket
/// becomes a deletion vector when the writer compacts level 0 before the commit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_vector_tables_move_keys_as_without_them() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("dv");
    create(&loc, r#", "deletion-vectors.enabled": "true""#).await;
    let mut model = Model::new();
    let commits: Vec<Vec<Row<'_>>> = vec![
        vec![
            ("a", 1, Some("a1"), Some(1), "+I"),
            ("a", 2, Some("a2"), None, "+I"),
            ("b", 3, Some("b3"), None, "+I"),
        ],
        vec![
            ("b", 1, Some("b1"), Some(10), "+I"),
            ("a", 2, Some("a2x"), None, "+U"),
            ("c", 3, None, None, "-D"),
        ],
        vec![
            ("c", 1, Some("c1"), None, "+I"),
            ("a", 3, Some("a3"), None, "+I"),
        ],
    ];
    for (i, rows) in commits.iter().enumerate() {
        write(&loc, rows).await;
        for (dt, k, v, n, kind) in rows {
            if *kind == "-D" {
                model.remove(k);
            } else {
                model.insert(*k, (dt.to_string(), v.map(str::to_owned), *n));
            }
        }
        check(&loc, &model, &format!("deletion vectors, commit {i}")).await;
    }
    // The moved keys' old rows are deleted by vectors (index files), not by merging.
    let index: Vec<String> = std::fs::read_dir(loc.join("index"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(index.iter().any(|n| n.starts_with("index-")), "{index:?}");
}
