//! Append and data-evolution compaction (`paimon_native::compact_append::{plan, run}`): the
//! corpus' append and data-evolution tables (copied to a temp dir) and tables written by our
//! writer, compacted; rows (and `_ROW_ID`, `_SEQUENCE_NUMBER` on row-tracking tables) read
//! the same before and after, the file counts drop as planned, and Java 2.0.0
//! (java-check's `read`) reads the compacted copies as we do.

use crate::common::java_read_lines_result;
use crate::copy_dir;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::canonical;
use paimon_kernel::schema::alter::SchemaChange;
use paimon_kernel::spec::CommitKind;
use paimon_native::Table;
use paimon_native::compact_append::{AppendCompactOptions, plan, run};
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables/corpus.db")
}

/// A copy of corpus table `name` in a temp dir (the repo's tables are never modified).
fn copy_table(name: &str) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    copy_dir(&corpus().join(name), &dir);
    let loc = dir.to_str().unwrap().to_string();
    (tmp, loc)
}

/// Every row as canonical JSON, sorted; with `_ROW_ID` when `tracking`.
async fn rows(table: &Table, tracking: bool) -> Vec<String> {
    let mut scan = table.scan();
    if tracking {
        let schema = table.schema().await.unwrap();
        let mut cols = schema.field_names();
        cols.push("_ROW_ID");
        scan = scan.with_projection(cols);
    }
    let batches = scan.to_batches().await.unwrap();
    let mut out: Vec<String> = canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    out.sort();
    out
}

/// `_ROW_ID` → `_SEQUENCE_NUMBER` of every row.
async fn sequence_numbers(table: &Table) -> std::collections::BTreeMap<i64, i64> {
    let batches = table
        .scan()
        .with_projection(["_ROW_ID", "_SEQUENCE_NUMBER"])
        .to_batches()
        .await
        .unwrap();
    let mut out = std::collections::BTreeMap::new();
    for b in &batches {
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let seqs = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.insert(ids.value(i), seqs.value(i));
        }
    }
    out
}

async fn live_files(table: &Table) -> Vec<String> {
    let mut names: Vec<String> = table
        .scan()
        .data_files()
        .await
        .unwrap()
        .map(|f| f.entries.iter().map(|e| e.file.file_name.clone()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// Compacts `table` (after setting `options` through ALTER TABLE) and checks: rows before =
/// rows after, the live files lost exactly the plan's inputs and gained the outputs, and the
/// commit is a COMPACT snapshot. Returns (plan units, files before, files after).
async fn compact_and_check(
    table: &Table,
    tracking: bool,
    full: bool,
    options: &[(&str, &str)],
) -> (usize, usize, usize) {
    if !options.is_empty() {
        table
            .alter(
                options
                    .iter()
                    .map(|(k, v)| SchemaChange::set_option(*k, *v))
                    .collect(),
            )
            .await
            .unwrap();
    }
    let before_rows = rows(table, tracking).await;
    let before_seqs = if tracking {
        sequence_numbers(table).await
    } else {
        Default::default()
    };
    let before_files = live_files(table).await;
    let planned = plan(table, full).await.unwrap();
    let report = run(
        table,
        &AppendCompactOptions {
            full,
            ..AppendCompactOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(report.tasks.len(), planned.units.len());
    // The plan's units are sorted (partition, bucket, first file); the report is in task
    // order: compare as sorted lists.
    let mut units: Vec<(String, i32, Vec<String>)> = planned
        .units
        .iter()
        .map(|u| {
            let p = Value::Object(u.partition.clone()).to_string();
            (p, u.bucket, u.files.clone())
        })
        .collect();
    let mut done: Vec<(String, i32, Vec<String>)> = report
        .tasks
        .iter()
        .map(|t| {
            assert!(t.bytes_out > 0 && t.bytes_in > 0);
            let mut inputs = t.files_in.clone();
            inputs.sort();
            let p = Value::Object(t.partition.clone()).to_string();
            (p, t.bucket, inputs)
        })
        .collect();
    units.sort();
    done.sort();
    assert_eq!(units, done);
    let after_files = live_files(table).await;
    if planned.units.is_empty() {
        assert_eq!(report.snapshot_id, None);
        assert_eq!(after_files, before_files);
    } else {
        let id = report.snapshot_id.unwrap();
        let snapshot = table.latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.id, id);
        assert_eq!(snapshot.commit_kind, CommitKind::Compact);
        let mut expected: Vec<String> = before_files
            .iter()
            .filter(|f| !report.tasks.iter().any(|t| t.files_in.contains(f)))
            .cloned()
            .chain(report.tasks.iter().flat_map(|t| t.files_out.clone()))
            .collect();
        expected.sort();
        assert_eq!(after_files, expected);
    }
    // ORC CHAR values read right-trimmed whatever ORC type holds them (as Java reads them), so
    // pypaimon's plain-string `all_types_orc.t_char` reads the same before and after
    // compaction rewrote it as a padded ORC char(5).
    assert_eq!(rows(table, tracking).await, before_rows);
    if tracking {
        // Data-evolution tables: `_SEQUENCE_NUMBER` is the file's maximum (no file stores
        // it): rows of a row-id group older than the newest group of their task read the
        // task's maximum afterwards, as with Java release-2.0.0; never lower than before.
        // (Row-tracking tables without data evolution store it: their callers check equality.)
        let after = sequence_numbers(table).await;
        for (row_id, seq) in &before_seqs {
            let now = after[row_id];
            assert!(
                now >= *seq,
                "row {row_id}: sequence number {seq} became {now}"
            );
        }
    }
    (planned.units.len(), before_files.len(), after_files.len())
}

fn check_java(loc: &str, ours: &[String]) {
    match java_read_lines_result(loc) {
        None => eprintln!("java-check not installed: skipped for {loc}"),
        Some(Ok(java)) => assert_eq!(java, ours, "Java 2.0.0 reads {loc} differently"),
        Some(Err(e)) => panic!("Java 2.0.0 cannot read {loc}: {e}"),
    }
}

/// The corpus' append tables (no row tracking): with `compaction.min.file-num` = 2 every
/// table of at least two small files gets one task per partition (unaware bucket) or bucket
/// (fixed bucket, full compaction: at least 3 files). Expected task counts come from the
/// file layout of each table (one file per commit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_unaware_append_tables() {
    for (name, tasks, files_after) in [
        ("append_parquet", 1, 1),
        ("append_avro", 1, 1),
        ("append_orc", 1, 1),
        ("all_types_parquet", 1, 1),
        ("all_types_avro", 1, 1),
        ("evo_append", 1, 1),
        ("codec_parquet_gzip", 0, 1),
        ("codec_avro_snappy", 0, 1),
        ("variant_parquet", 0, 1),
    ] {
        let (_tmp, loc) = copy_table(name);
        let table = Table::open(&loc).await.unwrap();
        let (units, _, after) =
            compact_and_check(&table, false, false, &[("compaction.min.file-num", "2")]).await;
        assert_eq!((units, after), (tasks, files_after), "{name}");
        check_java(&loc, &rows(&table, false).await);
    }
}

/// `all_types_orc` (every type, nested ones and a TIMESTAMP in the second before the epoch
/// included) compacts into one ORC file that reads the same. (Java 2.0.0 is not asked: it
/// trims the padding of CHAR values read from ORC.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_orc_table_of_every_type_compacts() {
    let (_tmp, loc) = copy_table("all_types_orc");
    let table = Table::open(&loc).await.unwrap();
    let (units, before, after) =
        compact_and_check(&table, false, false, &[("compaction.min.file-num", "2")]).await;
    assert_eq!((units, before, after), (1, 2, 1));
}

/// `append_partitioned`: 20 files over partitions; one task per partition with ≥ 2 files.
/// `append_tags_rollback`: 4 partitions × 2 files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_partitioned_append_tables() {
    for name in ["append_partitioned", "append_tags_rollback"] {
        corpus_partitioned_append_table(name).await;
    }
}

async fn corpus_partitioned_append_table(name: &str) {
    let (_tmp, loc) = copy_table(name);
    let table = Table::open(&loc).await.unwrap();
    let files = table.scan().data_files().await.unwrap().unwrap();
    let mut per_partition: std::collections::BTreeMap<Vec<u8>, usize> = Default::default();
    for e in &files.entries {
        *per_partition
            .entry(e.partition.to_serialized())
            .or_default() += 1;
    }
    let expected_tasks = per_partition.values().filter(|n| **n >= 2).count();
    let expected_after = per_partition
        .values()
        .map(|n| if *n >= 2 { 1 } else { *n })
        .sum::<usize>();
    let (units, _, after) =
        compact_and_check(&table, false, false, &[("compaction.min.file-num", "2")]).await;
    assert_eq!((units, after), (expected_tasks, expected_after));
    check_java(&loc, &rows(&table, false).await);
}

/// `append_fixed_bucket` (3 buckets, 6 files): full compaction needs 3 files per bucket;
/// best effort with min 2 compacts every bucket holding 2+ files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_fixed_bucket_append_table() {
    let (_tmp, loc) = copy_table("append_fixed_bucket");
    let table = Table::open(&loc).await.unwrap();
    let files = table.scan().data_files().await.unwrap().unwrap();
    let mut per_bucket = [0usize; 3];
    for e in &files.entries {
        per_bucket[e.bucket as usize] += 1;
    }
    let expected = per_bucket.iter().filter(|n| **n >= 2).count();
    let (units, before, after) =
        compact_and_check(&table, false, false, &[("compaction.min.file-num", "2")]).await;
    assert_eq!(units, expected);
    assert_eq!(
        before - after,
        per_bucket
            .iter()
            .filter(|n| **n >= 2)
            .map(|n| n - 1)
            .sum::<usize>()
    );
    check_java(&loc, &rows(&table, false).await);
}

/// The corpus' data-evolution tables: with `compaction.min.file-num` = 2 the field groups of
/// each row-id run are merged into one normal file; `_ROW_ID` and `_SEQUENCE_NUMBER` read the
/// same. Tables with deletion vectors are refused (unsupported).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_data_evolution_tables() {
    for name in [
        "de_update",
        "blob_single",
        "blob_multi",
        "blob_nested",
        "blob_update",
    ] {
        corpus_data_evolution_table(name).await;
    }
}

async fn corpus_data_evolution_table(name: &str) {
    let (_tmp, loc) = copy_table(name);
    let table = Table::open(&loc).await.unwrap();
    let (units, before, after) =
        compact_and_check(&table, true, false, &[("compaction.min.file-num", "2")]).await;
    eprintln!("{name}: {units} tasks, {before} -> {after} files");
    if name == "de_update" {
        assert!(units >= 1 && after < before, "{units} {before} {after}");
    }
    match java_read_lines_result(&loc) {
        None => {}
        Some(Ok(java)) => {
            // Java reads the table columns only.
            assert_eq!(
                java,
                rows(&table, false).await,
                "Java reads {name} differently"
            );
        }
        Some(Err(e)) => panic!("Java 2.0.0 cannot read {name}: {e}"),
    }
}

/// The corpus' row-tracking append table (no data evolution): its two files compacted into
/// one that stores `_ROW_ID` and `_SEQUENCE_NUMBER` (no `first_row_id`); every row keeps both,
/// as Java 2.0.0 reads them too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_row_tracking_table() {
    let (_tmp, loc) = copy_table("append_row_tracking");
    let table = Table::open(&loc).await.unwrap();
    let before = sequence_numbers(&table).await;
    let (units, before_files, after_files) =
        compact_and_check(&table, true, false, &[("compaction.min.file-num", "2")]).await;
    assert_eq!((units, before_files, after_files), (1, 2, 1));
    assert_eq!(sequence_numbers(&table).await, before);
    let files = table.scan().data_files().await.unwrap().unwrap();
    let out = &files.entries[0].file;
    assert_eq!(out.first_row_id, None);
    assert_eq!(
        out.write_cols.as_deref(),
        Some(&["id", "v", "_ROW_ID", "_SEQUENCE_NUMBER"].map(String::from)[..])
    );
    let ours = rows_with(&table, &["id", "v", "_ROW_ID", "_SEQUENCE_NUMBER"]).await;
    match crate::oracle::java_rows_with(
        Path::new(&loc),
        &["--columns", "id,v,_ROW_ID,_SEQUENCE_NUMBER"],
    ) {
        None => eprintln!("java-check not installed: skipped for {loc}"),
        Some(java) => assert_eq!(java, ours, "Java 2.0.0 reads {loc} differently"),
    }
}

/// The rows of `columns` as canonical JSON, sorted.
async fn rows_with(table: &Table, columns: &[&str]) -> Vec<String> {
    let batches = table
        .scan()
        .with_projection(columns.to_vec())
        .to_batches()
        .await
        .unwrap();
    let mut out: Vec<String> = canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    out.sort();
    out
}

fn batch(ids: std::ops::Range<i64>, tag: &str) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", arrow_schema::DataType::Int64, true),
        Field::new("p", arrow_schema::DataType::Utf8, true),
        Field::new("v", arrow_schema::DataType::Int32, true),
    ]);
    let ids: Vec<i64> = ids.collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.clone())),
        Arc::new(StringArray::from_iter_values(
            ids.iter().map(|i| if i % 2 == 0 { "a" } else { "b" }),
        )),
        Arc::new(Int32Array::from_iter_values(
            ids.iter().map(|i| (*i as i32) * 10 + tag.len() as i32),
        )),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

async fn commit_batch(table: &Table, b: &RecordBatch) {
    let mut w = table.new_write().await.unwrap();
    w.write(b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

/// Many small commits to an unaware-bucket partitioned table, an ALTER TABLE (add column)
/// between them: per partition one task over every small file; rows (old files read with
/// schema evolution, output in the latest schema) unchanged; Java reads the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn written_unaware_table_with_alter() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t").to_str().unwrap().to_string();
    let schema = r#"{"fields": [{"name": "id", "type": "BIGINT"}, {"name": "p", "type": "STRING"},
        {"name": "v", "type": "INT"}], "partitionKeys": ["p"],
        "options": {"bucket": "-1", "compaction.min.file-num": "4"}}"#;
    let table = Table::create(&loc, schema.as_bytes()).await.unwrap();
    for i in 0..3 {
        commit_batch(&table, &batch(i * 10..i * 10 + 10, "x")).await;
    }
    table
        .alter(vec![SchemaChange::AddColumn {
            name: "w".into(),
            data_type: paimon_kernel::spec::DataType::parse_sql("STRING").unwrap(),
            description: None,
            position: None,
        }])
        .await
        .unwrap();
    for i in 3..6 {
        let b = batch(i * 10..i * 10 + 10, "y");
        let w: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..10).map(|j| format!("w{i}-{j}")),
        ));
        let mut cols = b.columns().to_vec();
        cols.push(w);
        let mut fields: Vec<Field> = b.schema().fields().iter().map(|f| (**f).clone()).collect();
        fields.push(Field::new("w", arrow_schema::DataType::Utf8, true));
        let b = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap();
        commit_batch(&table, &b).await;
    }
    // 6 commits × 2 partitions = 12 files; min 4 → one task per partition.
    let (units, before, after) = compact_and_check(&table, false, false, &[]).await;
    assert_eq!((units, before, after), (2, 12, 2));
    let files = table.scan().data_files().await.unwrap().unwrap();
    assert!(
        files
            .entries
            .iter()
            .all(|e| e.file.schema_id == files.schema.id)
    );
    // A second run has nothing left to do (one file per partition).
    assert!(plan(&table, false).await.unwrap().units.is_empty());
    check_java(&loc, &rows(&table, false).await);
}

/// A fixed-bucket table (4 buckets) after 6 commits: full compaction rewrites each bucket
/// with ≥ 3 small files into one file, keeping row order by sequence number; best effort
/// (min 5) takes the first 5 files of each bucket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn written_fixed_bucket_tables() {
    written_fixed_bucket_table(true).await;
    written_fixed_bucket_table(false).await;
}

async fn written_fixed_bucket_table(full: bool) {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t").to_str().unwrap().to_string();
    let schema = r#"{"fields": [{"name": "id", "type": "BIGINT"}, {"name": "p", "type": "STRING"},
        {"name": "v", "type": "INT"}],
        "options": {"bucket": "4", "bucket-key": "id"}}"#;
    let table = Table::create(&loc, schema.as_bytes()).await.unwrap();
    for i in 0..6 {
        commit_batch(&table, &batch(i * 40..i * 40 + 40, "x")).await;
    }
    let (units, before, after) = compact_and_check(&table, false, full, &[]).await;
    assert_eq!(units, 4);
    assert_eq!(before, 24);
    assert_eq!(after, if full { 4 } else { 8 });
    // Within a bucket the compacted file holds its rows in sequence order: ids ascending
    // (each commit wrote larger ids).
    let files = table.scan().data_files().await.unwrap().unwrap();
    for e in &files.entries {
        assert!(e.file.min_sequence_number <= e.file.max_sequence_number);
    }
    // The scan reads bucket after bucket: ids ascend within each, so at most 3 descents.
    let batches = table.scan().to_batches().await.unwrap();
    let ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(ids.len(), 240);
    let descents = ids.windows(2).filter(|w| w[1] < w[0]).count();
    assert!(
        descents <= 3,
        "{descents} descents: rows left sequence order"
    );
    check_java(&loc, &rows(&table, false).await);
}

/// A data-evolution table written by our writer: three commits, ALTER TABLE ADD COLUMN, two
/// more commits (each commit one file, consecutive row ids 0..49). With min file num 2 the
/// five row-id groups form one run, one bin, one task: one file over [0, 49] in the latest
/// schema, `_ROW_ID` unchanged, older files read with schema evolution (the new column NULL).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn written_data_evolution_table_with_alter() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t").to_str().unwrap().to_string();
    let schema = r#"{"fields": [{"name": "id", "type": "BIGINT"}, {"name": "p", "type": "STRING"},
        {"name": "v", "type": "INT"}],
        "options": {"bucket": "-1", "row-tracking.enabled": "true",
        "data-evolution.enabled": "true", "compaction.min.file-num": "2"}}"#;
    let table = Table::create(&loc, schema.as_bytes()).await.unwrap();
    for i in 0..3 {
        commit_batch(&table, &batch(i * 10..i * 10 + 10, "x")).await;
    }
    table
        .alter(vec![SchemaChange::AddColumn {
            name: "w".into(),
            data_type: paimon_kernel::spec::DataType::parse_sql("STRING").unwrap(),
            description: None,
            position: None,
        }])
        .await
        .unwrap();
    for i in 3..5 {
        let b = batch(i * 10..i * 10 + 10, "y");
        let w: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..10).map(|j| format!("w{i}-{j}")),
        ));
        let mut cols = b.columns().to_vec();
        cols.push(w);
        let mut fields: Vec<Field> = b.schema().fields().iter().map(|f| (**f).clone()).collect();
        fields.push(Field::new("w", arrow_schema::DataType::Utf8, true));
        let b = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap();
        commit_batch(&table, &b).await;
    }
    let (units, before, after) = compact_and_check(&table, true, false, &[]).await;
    assert_eq!((units, before, after), (1, 5, 1));
    let files = table.scan().data_files().await.unwrap().unwrap();
    let out = &files.entries[0].file;
    assert_eq!(out.schema_id, files.schema.id);
    assert_eq!((out.first_row_id, out.row_count), (Some(0), 50));
    assert_eq!((out.min_sequence_number, out.max_sequence_number), (1, 5));
    assert_eq!(out.write_cols, None);
    match java_read_lines_result(&loc) {
        None => {}
        Some(Ok(java)) => assert_eq!(java, rows(&table, false).await),
        Some(Err(e)) => panic!("Java 2.0.0 cannot read the compacted table: {e}"),
    }
}

/// `partition` and `bucket` restrict the compaction: only the named partition's task runs
/// (values as in directory names), only the named bucket's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_and_bucket_filters() {
    let (_tmp, loc) = copy_table("append_partitioned");
    let table = Table::open(&loc).await.unwrap();
    table
        .alter(vec![SchemaChange::set_option(
            "compaction.min.file-num",
            "2",
        )])
        .await
        .unwrap();
    let all = plan(&table, false).await.unwrap();
    assert!(all.units.len() >= 2, "{all:?}");
    let target = &all.units[1];
    let filter: Vec<(String, String)> = target
        .partition
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        })
        .collect();
    let before = rows(&table, false).await;
    let report = run(
        &table,
        &AppendCompactOptions {
            partition: Some(filter),
            ..AppendCompactOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(report.tasks.len(), 1);
    assert_eq!(report.tasks[0].partition, target.partition);
    let mut inputs = report.tasks[0].files_in.clone();
    inputs.sort();
    assert_eq!(inputs, target.files);
    assert_eq!(rows(&table, false).await, before);
    // The other partitions are still to do.
    assert_eq!(
        plan(&table, false).await.unwrap().units.len(),
        all.units.len() - 1
    );
    let err = run(
        &table,
        &AppendCompactOptions {
            partition: Some(vec![("nope".into(), "x".into())]),
            ..AppendCompactOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("'nope' is not a partition key"),
        "{err}"
    );

    let (_tmp2, loc2) = copy_table("append_fixed_bucket");
    let table = Table::open(&loc2).await.unwrap();
    table
        .alter(vec![SchemaChange::set_option(
            "compaction.min.file-num",
            "2",
        )])
        .await
        .unwrap();
    let all = plan(&table, false).await.unwrap();
    let bucket = all.units[0].bucket;
    let report = run(
        &table,
        &AppendCompactOptions {
            bucket: Some(bucket),
            ..AppendCompactOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(report.tasks.len(), 1);
    assert_eq!(report.tasks[0].bucket, bucket);
}

/// The corpus' BLOB tables with `blob-compaction.enabled` (and `compaction.min.file-num` =
/// 2): the normal files and the `.blob` files of each column are compacted as Java's planner
/// groups them (`blob_update`: the update layers with placeholders merged into one file per
/// range); rows and `_ROW_ID` read the same (`_SEQUENCE_NUMBER` becomes the merged file's
/// largest, as in Java: its outputs hold no sequence column), the new `.blob` files are
/// `COMPACT` files over the inputs' row range, and Java 2.0.0 (where it reads the table) reads
/// the same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_blob_tables_compact_their_blob_files() {
    for (name, blob_tasks) in [("blob_single", 1), ("blob_multi", 2), ("blob_update", 2)] {
        let (_tmp, loc) = copy_table(name);
        let table = Table::open(&loc).await.unwrap();
        table
            .alter(vec![
                SchemaChange::set_option("blob-compaction.enabled", "true"),
                SchemaChange::set_option("compaction.min.file-num", "2"),
            ])
            .await
            .unwrap();
        let before = rows(&table, true).await;
        let blobs_before: Vec<String> = live_files(&table)
            .await
            .into_iter()
            .filter(|f| f.ends_with(".blob"))
            .collect();
        let report = run(&table, &AppendCompactOptions::default()).await.unwrap();
        assert!(report.snapshot_id.is_some(), "{name}");
        let blob_reports: Vec<_> = report
            .tasks
            .iter()
            .filter(|t| t.files_out.iter().all(|f| f.ends_with(".blob")))
            .collect();
        assert_eq!(blob_reports.len(), blob_tasks, "{name}: {report:?}");
        assert_eq!(rows(&table, true).await, before, "{name}");
        let files = table.scan().data_files().await.unwrap().unwrap();
        for t in &blob_reports {
            let out = files
                .entries
                .iter()
                .find(|e| e.file.file_name == t.files_out[0])
                .unwrap();
            assert_eq!(
                out.file.file_source,
                Some(paimon_kernel::spec::FileSource::Compact)
            );
            assert!(
                t.files_in.iter().all(|f| blobs_before.contains(f)),
                "{name}"
            );
        }
        let blobs_after = files
            .entries
            .iter()
            .filter(|e| e.file.is_blob_file())
            .count();
        assert!(blobs_after < blobs_before.len(), "{name}");
        match java_read_lines_result(&loc) {
            Some(Ok(java)) => assert_eq!(java, rows(&table, false).await, "Java reads {name}"),
            Some(Err(e)) => panic!("Java 2.0.0 cannot read {name}: {e}"),
            None => {}
        }
    }
}
