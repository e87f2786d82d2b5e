//! Batch writes of postpone-bucket tables straight into real buckets
//! (`postpone.batch-write-fixed-bucket`, default `true`, as Java 2.0's batch writers): bucket
//! counts per partition (known, inferred from the rows, from the postpone rows too), level-0
//! files with `_TOTAL_BUCKETS`, rows placed as a fixed-bucket table of that count places them,
//! sequence numbers continuing, the option `false` keeping `bucket-postpone` files, and the
//! postpone compaction of what the two leave. Java Paimon 2.0.0 and pypaimon 2.1.0 read the
//! results when installed (see [`crate::oracle`]).

use crate::common::table_rows;
use crate::oracle::{java_rows, pypaimon_rows_result, sorted_strings};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::schema::alter::SchemaChange;
use paimon_kernel::spec::snapshot::CommitKind;
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::json;

fn batch(rows: &[(&str, i64, &str)]) -> RecordBatch {
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
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))),
        ),
        (
            "n",
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|r| r.1 as i32),
            )),
        ),
    ];
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

async fn create(loc: &Path, bucket: &str, options: &str) -> Table {
    let schema = format!(
        r#"{{"fields": [{{"name": "dt", "type": "STRING NOT NULL"}},
        {{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}},
        {{"name": "n", "type": "INT"}}], "partitionKeys": ["dt"], "primaryKeys": ["dt", "k"],
        "options": {{"bucket": "{bucket}"{options}}}}}"#
    );
    Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap()
}

async fn write(table: &Table, rows: &[(&str, i64, &str)]) {
    let mut w = table.new_write().await.unwrap();
    w.write(&batch(rows)).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

type Model = BTreeMap<(String, i64), String>;

fn apply(model: &mut Model, rows: &[(&str, i64, &str)]) {
    for (dt, k, v) in rows {
        model.insert(((*dt).to_owned(), *k), (*v).to_owned());
    }
}

fn model_rows(model: &Model) -> Vec<String> {
    let rows: Vec<_> = model
        .iter()
        .map(|((dt, k), v)| json!({"dt": dt, "k": k, "v": v, "n": *k as i32}))
        .collect();
    sorted_strings(&rows)
}

/// (partition value, bucket) → (total buckets, levels, rows) of the live files.
async fn layout(table: &Table) -> BTreeMap<(String, i32), (i32, Vec<i32>, i64)> {
    let mut out: BTreeMap<(String, i32), (i32, Vec<i32>, i64)> = BTreeMap::new();
    let Some(files) = table.scan().data_files().await.unwrap() else {
        return out;
    };
    for e in files.entries {
        let types = [paimon_kernel::spec::DataType::parse_sql("STRING NOT NULL").unwrap()];
        let dt = match e.partition.fields(&types).unwrap().remove(0) {
            paimon_kernel::spec::Datum::String(s) => s,
            other => panic!("{other:?}"),
        };
        let slot = out
            .entry((dt, e.bucket))
            .or_insert((e.total_buckets, Vec::new(), 0));
        assert_eq!(slot.0, e.total_buckets);
        slot.1.push(e.file.level);
        slot.2 += e.file.row_count;
    }
    out
}

/// What the oracles read equals `expected` (each when installed).
fn oracles_agree(loc: &Path, expected: &[String]) -> (bool, bool) {
    let java = java_rows(loc).map(|j| assert_eq!(j, expected, "Java 2.0.0 reads otherwise"));
    let py = pypaimon_rows_result(loc).map(|r| {
        assert_eq!(r.unwrap(), expected, "pypaimon reads otherwise");
    });
    (java.is_some(), py.is_some())
}

fn warehouse_table(dir: &Path, name: &str) -> PathBuf {
    let loc = dir.join("wh").join("db.db").join(name);
    std::fs::create_dir_all(loc.parent().unwrap()).unwrap();
    loc
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_writes_of_postpone_tables_go_into_real_buckets() {
    let dir = tempfile::tempdir().unwrap();
    let loc = warehouse_table(dir.path(), "t");
    // Bucket counts of new partitions from their rows: ceil(rows / 3).
    let table = create(&loc, "-2", r#", "postpone.target-row-num-per-bucket": "3""#).await;
    let mut model = Model::new();
    let first: Vec<(&str, i64, &str)> = (0..7)
        .map(|k| ("a", k, "a1"))
        .chain([("b", 0, "b1"), ("b", 1, "b1")])
        .collect();
    write(&table, &first).await;
    apply(&mut model, &first);
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    assert_eq!(snapshot.commit_kind, CommitKind::Append);
    // Readable at once: level-0 files of real buckets, 3 buckets for a's 7 rows, 1 for b's 2.
    assert_eq!(table_rows(&table).await, model_rows(&model));
    let l = layout(&table).await;
    assert!(l.keys().all(|(_, b)| *b >= 0), "{l:?}");
    assert!(
        l.values()
            .all(|(_, levels, _)| levels.iter().all(|x| *x == 0))
    );
    assert!(
        l.iter()
            .all(|((dt, _), (total, _, _))| *total == if dt == "a" { 3 } else { 1 })
    );
    assert!(!loc.join("dt=a/bucket-postpone").exists());
    // The rows are placed as a fixed-bucket table of that count places them.
    let fixed = create(&dir.path().join("fixed3"), "3", "").await;
    write(&fixed, &first[..7]).await;
    let fixed_layout = layout(&fixed).await;
    for b in 0..3 {
        assert_eq!(
            l.get(&("a".to_owned(), b)).map(|s| s.2),
            fixed_layout.get(&("a".to_owned(), b)).map(|s| s.2),
            "bucket {b}"
        );
    }

    // A second write keeps the known counts (20 rows into a stay in 3 buckets) and its
    // updates win: sequence numbers continue after the buckets' files.
    let second: Vec<(&str, i64, &str)> = (0..20).map(|k| ("a", k, "a2")).collect();
    write(&table, &second).await;
    apply(&mut model, &second);
    assert_eq!(table_rows(&table).await, model_rows(&model));
    let l = layout(&table).await;
    assert!(
        l.iter()
            .all(|((dt, _), (total, _, _))| *total == if dt == "a" { 3 } else { 1 })
    );

    // With the option false a write goes to bucket-postpone (unread until a compaction);
    // a later fixed-bucket write to that partition counts those rows: 5 + 1 rows → 2
    // buckets.
    let set = |v: &str| SchemaChange::SetOption {
        key: "postpone.batch-write-fixed-bucket".to_owned(),
        value: v.to_owned(),
    };
    table.alter(vec![set("false")]).await.unwrap();
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let postponed: Vec<(&str, i64, &str)> = (0..5).map(|k| ("c", k, "c1")).collect();
    write(&table, &postponed).await;
    assert!(loc.join("dt=c/bucket-postpone").exists());
    assert_eq!(table_rows(&table).await, model_rows(&model));
    table.alter(vec![set("true")]).await.unwrap();
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    write(&table, &[("c", 10, "c2")]).await;
    apply(&mut model, &[("c", 10, "c2")]);
    assert_eq!(table_rows(&table).await, model_rows(&model));
    let l = layout(&table).await;
    assert!(
        l.iter()
            .filter(|((dt, b), _)| dt == "c" && *b >= 0)
            .all(|(_, (total, _, _))| *total == 2),
        "{l:?}"
    );
    let (java, py) = oracles_agree(&loc, &model_rows(&model));
    eprintln!("read by Java 2.0.0: {java}, pypaimon: {py}");

    // The postpone compaction moves c's postpone rows into its 2 buckets (the count its
    // real-bucket files have) and compacts the level-0 files of every bucket.
    let report = table.compact(CompactOptions::default()).await.unwrap();
    assert!(report.snapshot.is_some());
    apply(&mut model, &postponed);
    assert_eq!(table_rows(&table).await, model_rows(&model));
    let l = layout(&table).await;
    assert!(l.keys().all(|(_, b)| *b >= 0), "{l:?}");
    assert!(
        l.iter()
            .all(|((dt, _), (total, _, _))| *total == [3, 1, 2][(dt.as_bytes()[0] - b'a') as usize])
    );
    oracles_agree(&loc, &model_rows(&model));

    // An overwrite of partition b writes into b's known bucket count.
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let mut w = table.new_write().await.unwrap().for_overwrite();
    w.write(&batch(&[("b", 7, "b2")])).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    assert!(messages.iter().all(|m| m.total_buckets == Some(1)));
    table
        .new_commit(None)
        .overwrite(None, messages)
        .await
        .unwrap();
    model.retain(|(dt, _), _| dt != "b");
    apply(&mut model, &[("b", 7, "b2")]);
    assert_eq!(table_rows(&table).await, model_rows(&model));
    oracles_agree(&loc, &model_rows(&model));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_bucket_batch_writes_by_size_and_of_deletion_vector_tables() {
    let dir = tempfile::tempdir().unwrap();
    // By serialized size (default 1 GiB per bucket): a small write is one bucket.
    let loc = warehouse_table(dir.path(), "by_size");
    let table = create(&loc, "-2", "").await;
    let rows_in: Vec<(&str, i64, &str)> = (0..50).map(|k| ("x", k, "v")).collect();
    write(&table, &rows_in).await;
    let l = layout(&table).await;
    assert_eq!(
        l.keys().cloned().collect::<Vec<_>>(),
        vec![("x".to_owned(), 0)]
    );
    assert_eq!(l[&("x".to_owned(), 0)].0, 1);
    // A target of 1 kb: 50 rows of 40 bytes (BinaryRow: 8 header + 4×8 slots) are 2000
    // bytes → 2 buckets.
    let loc = warehouse_table(dir.path(), "by_size_small");
    let table = create(&loc, "-2", r#", "postpone.target-size-per-bucket": "1 kb""#).await;
    write(&table, &rows_in).await;
    let l = layout(&table).await;
    assert!(l.values().all(|(total, _, _)| *total == 2), "{l:?}");
    let mut model = Model::new();
    apply(&mut model, &rows_in);
    assert_eq!(table_rows(&table).await, model_rows(&model));
    oracles_agree(&loc, &model_rows(&model));

    // Deletion vectors: the write is write-only (as Java's), so its level-0 files are not
    // compacted and batch reads (which skip level 0 of such tables) see nothing until a
    // compaction.
    let loc = warehouse_table(dir.path(), "dv");
    let table = create(&loc, "-2", r#", "deletion-vectors.enabled": "true""#).await;
    write(&table, &rows_in).await;
    assert!(table_rows(&table).await.is_empty());
    assert!(
        layout(&table)
            .await
            .values()
            .all(|(_, levels, _)| levels.iter().all(|x| *x == 0))
    );
    table.compact(CompactOptions::default()).await.unwrap();
    assert_eq!(table_rows(&table).await, model_rows(&model));
    oracles_agree(&loc, &model_rows(&model));
}
