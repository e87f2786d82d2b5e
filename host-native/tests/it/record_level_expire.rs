//! Record-level expiry of primary-key tables (`record-level.expire-time` with
//! `record-level.time-field`), as Java's `RecordLevelExpire`: compaction drops the rows whose
//! time field is older than the expire time (the time injected through
//! `CompactOptions::now_millis`); reads return them until then. Java Paimon 2.0.0 (whose
//! `RecordLevelExpire` is the same class as 2.0's) reads every result, when its checker is
//! installed (see [`crate::oracle`]).

use crate::common::table_rows;
use crate::oracle::java_rows;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    TimestampMillisecondArray,
};
use arrow_schema::{Field, Schema};
use paimon_kernel::canonical;
use paimon_native::Table;
use paimon_native::compact::{CompactOptions, CompactReport};

/// The injected "now" of the compactions: 2023-11-14T22:13:20Z, epoch seconds.
const NOW: i64 = 1_700_000_000;

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

/// The time column of `time_type` for times in epoch seconds (`None`: NULL), each value
/// within its second (millis, micros) so that the conversion to seconds is exercised.
fn time_column(time_type: &str, seconds: &[Option<i64>]) -> ArrayRef {
    match time_type {
        "INT" => Arc::new(Int32Array::from_iter(
            seconds.iter().map(|s| s.map(|s| s as i32)),
        )),
        "BIGINT" => Arc::new(Int64Array::from_iter(seconds.iter().copied())),
        // Epoch millis: BIGINT values >= 10^12 are millis.
        "BIGINT millis" => Arc::new(Int64Array::from_iter(
            seconds.iter().map(|s| s.map(|s| s * 1000 + 999)),
        )),
        "TIMESTAMP(3)" => Arc::new(TimestampMillisecondArray::from_iter(
            seconds.iter().map(|s| s.map(|s| s * 1000 + 500)),
        )),
        "TIMESTAMP_LTZ(6)" => Arc::new(
            TimestampMicrosecondArray::from_iter(
                seconds.iter().map(|s| s.map(|s| s * 1_000_000 + 999_999)),
            )
            .with_timezone("UTC"),
        ),
        other => panic!("no column for {other}"),
    }
}

fn sql_type(time_type: &str) -> &str {
    time_type.trim_end_matches(" millis")
}

async fn create(loc: &Path, time_type: &str, extra: &str) -> Table {
    let schema = format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}},
        {{"name": "t", "type": "{}"}}], "primaryKeys": ["k"],
        "options": {{"record-level.expire-time": "1 h", "record-level.time-field": "t"{extra}}}}}"#,
        sql_type(time_type)
    );
    Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap()
}

/// Write rows `(k, v, t in epoch seconds)` and commit them.
async fn write(table: &Table, time_type: &str, rows: &[(i64, &str, Option<i64>)]) {
    let times: Vec<Option<i64>> = rows.iter().map(|r| r.2).collect();
    let b = batch(vec![
        (
            "k",
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
        ),
        (
            "v",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
        ),
        ("t", time_column(time_type, &times)),
    ]);
    let mut w = table.new_write().await.unwrap();
    w.write(&b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

async fn compact_at(table: &Table, full: bool, now_seconds: i64) -> CompactReport {
    table
        .compact(CompactOptions {
            full,
            now_millis: Some(now_seconds * 1000 + 250),
            ..Default::default()
        })
        .await
        .unwrap()
}

/// `(k, v)` of every row read, in key order.
async fn keys(table: &Table) -> Vec<(i64, String)> {
    let batches = table.scan().to_batches().await.unwrap();
    let mut out: Vec<(i64, String)> = canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["k"].as_i64().unwrap(),
                r["v"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

fn kv(pairs: &[(i64, &str)]) -> Vec<(i64, String)> {
    pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
}

/// Java 2.0.0 reads what we read (when installed).
async fn java_agrees(loc: &Path, table: &Table) -> bool {
    match java_rows(loc) {
        Some(java) => {
            assert_eq!(java, table_rows(table).await, "Java 2.0.0 reads otherwise");
            true
        }
        None => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_level_expire_by_time_type() {
    let dir = tempfile::tempdir().unwrap();
    let mut java_checked = 0;
    for time_type in [
        "INT",
        "BIGINT",
        "BIGINT millis",
        "TIMESTAMP(3)",
        "TIMESTAMP_LTZ(6)",
    ] {
        let loc = dir.path().join(time_type.replace([' ', '(', ')'], "_"));
        let table = create(&loc, time_type, r#", "bucket": "1""#).await;
        // Expire 1 h at NOW: a row is kept while NOW <= t + 3600 (t in seconds).
        let rows_in = [
            (0, "ancient", Some(1)),
            (1, "expired", Some(NOW - 3601)),
            (2, "boundary", Some(NOW - 3600)),
            (3, "null", None),
            (4, "future", Some(NOW + 3600)),
        ];
        write(&table, time_type, &rows_in).await;
        // Reads do not filter expired rows (Java's neither): only compaction drops them.
        assert_eq!(keys(&table).await.len(), 5, "{time_type}");
        let report = compact_at(&table, true, NOW).await;
        assert!(report.snapshot.is_some(), "{time_type}");
        assert_eq!(
            keys(&table).await,
            kv(&[(2, "boundary"), (3, "null"), (4, "future")]),
            "{time_type}"
        );
        if java_agrees(&loc, &table).await {
            java_checked += 1;
        }
    }
    eprintln!("Java 2.0.0 read {java_checked} of 5 tables");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_level_expire_rewrites_and_picks_expired_files() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    // Small files count as large (not rewritten for their size): a file is rewritten only
    // when it must be.
    let table = create(
        &loc,
        "INT",
        r#", "bucket": "1", "compaction.small-file-ratio": "0.000001""#,
    )
    .await;
    // A file without expired rows is only moved to the max level by a full compaction.
    write(
        &table,
        "INT",
        &[(1, "a1", Some(NOW + 3600)), (2, "a2", Some(NOW + 10))],
    )
    .await;
    let first = table.scan().data_files().await.unwrap().unwrap().entries[0]
        .file
        .file_name
        .clone();
    let report = compact_at(&table, true, NOW).await;
    assert_eq!(
        (
            report.buckets[0].upgraded_files,
            report.buckets[0].rewritten_files
        ),
        (1, 0)
    );
    let files = table.scan().data_files().await.unwrap().unwrap().entries;
    assert_eq!(files.len(), 1);
    assert_eq!(
        (files[0].file.file_name.clone(), files[0].file.level),
        (first.clone(), 5)
    );

    // A level-0 file whose statistics show an expired row is rewritten instead of upgraded
    // (Java's MergeTreeCompactTask#upgrade), without the row; the other file stays.
    write(
        &table,
        "INT",
        &[(3, "b3", Some(NOW + 3600)), (4, "b4", Some(NOW - 7200))],
    )
    .await;
    assert_eq!(keys(&table).await.len(), 4);
    let report = compact_at(&table, true, NOW).await;
    assert_eq!(report.buckets[0].rewritten_files, 1);
    assert_eq!(keys(&table).await, kv(&[(1, "a1"), (2, "a2"), (3, "b3")]));
    let files = table.scan().data_files().await.unwrap().unwrap().entries;
    assert!(files.iter().any(|e| e.file.file_name == first));
    assert!(files.iter().all(|e| e.file.level == 5));

    // One max-level run: nothing to do while nothing is expired.
    assert_eq!(compact_at(&table, true, NOW).await.snapshot, None);
    // At NOW + 3611 the first file's minimum (NOW + 10) is expired: a normal compaction
    // still has nothing to do, a full one rewrites that file alone
    // (CompactStrategy#pickFullCompaction) and drops key 2.
    let later = NOW + 3611;
    assert_eq!(compact_at(&table, false, later).await.snapshot, None);
    let report = compact_at(&table, true, later).await;
    assert_eq!(report.buckets[0].rewritten_files, 1);
    assert_eq!(report.buckets[0].files_in, 1);
    assert_eq!(keys(&table).await, kv(&[(1, "a1"), (3, "b3")]));
    let files = table.scan().data_files().await.unwrap().unwrap().entries;
    assert!(files.iter().all(|e| e.file.file_name != first));
    java_agrees(&loc, &table).await;

    // As in Java, rows are filtered before the merge: a newer record of a key whose time is
    // expired is dropped, and the older record of the key (not expired) is what remains.
    write(&table, "INT", &[(1, "new1", Some(1))]).await;
    assert_eq!(keys(&table).await, kv(&[(1, "new1"), (3, "b3")]));
    compact_at(&table, true, NOW).await;
    assert_eq!(keys(&table).await, kv(&[(1, "a1"), (3, "b3")]));
    java_agrees(&loc, &table).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_level_expire_in_write_compaction_and_postpone_tables() {
    let dir = tempfile::tempdir().unwrap();
    // Deletion-vector tables compact level 0 at every batch write (as Java's writers), at
    // the host's clock: rows already expired never become readable.
    let loc = dir.path().join("dv");
    let table = create(
        &loc,
        "BIGINT",
        r#", "bucket": "1", "deletion-vectors.enabled": "true""#,
    )
    .await;
    let now = paimon_native::write::now_millis() / 1000;
    write(
        &table,
        "BIGINT",
        &[(1, "old", Some(1)), (2, "fresh", Some(now + 3600))],
    )
    .await;
    assert_eq!(keys(&table).await, kv(&[(2, "fresh")]));
    java_agrees(&loc, &table).await;

    // Postpone-bucket tables: the replay into real buckets writes every row; the bucket
    // compaction that follows drops the expired ones when it rewrites them. A normal
    // compaction of one new level-0 run picks nothing (the rows stay at level 0, readable);
    // a full one rewrites them.
    let loc = dir.path().join("postpone");
    let table = create(
        &loc,
        "TIMESTAMP(3)",
        r#", "bucket": "-2", "postpone.batch-write-fixed-bucket": "false""#,
    )
    .await;
    write(
        &table,
        "TIMESTAMP(3)",
        &[(1, "old", Some(NOW - 7200)), (2, "fresh", Some(NOW))],
    )
    .await;
    assert!(keys(&table).await.is_empty());
    let report = compact_at(&table, false, NOW).await;
    assert!(report.snapshot.is_some());
    assert_eq!(keys(&table).await, kv(&[(1, "old"), (2, "fresh")]));
    java_agrees(&loc, &table).await;
    compact_at(&table, true, NOW).await;
    assert_eq!(keys(&table).await, kv(&[(2, "fresh")]));
    java_agrees(&loc, &table).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_level_expire_options_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    // The time field must be an INT, BIGINT or TIMESTAMP column (Java's SchemaValidation).
    let bad = r#"{"fields": [{"name": "k", "type": "INT NOT NULL"}, {"name": "t", "type": "STRING"}],
        "primaryKeys": ["k"], "options": {"record-level.expire-time": "1 h",
        "record-level.time-field": "t"}}"#;
    let e = Table::create(dir.path().join("a").to_str().unwrap(), bad.as_bytes())
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("record-level.time-field") && e.contains("but field type is STRING"),
        "{e}"
    );
    // An expire time without a time field: the table is created (as in Java), every write
    // fails with Java's message.
    let no_field = r#"{"fields": [{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "STRING"},
        {"name": "t", "type": "INT"}], "primaryKeys": ["k"],
        "options": {"bucket": "1", "record-level.expire-time": "1 h"}}"#;
    let table = Table::create(dir.path().join("b").to_str().unwrap(), no_field.as_bytes())
        .await
        .unwrap();
    let b = batch(vec![
        ("k", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("v", Arc::new(StringArray::from(vec!["x"]))),
        ("t", Arc::new(Int32Array::from(vec![1]))),
    ]);
    let attempt = async {
        let mut w = table.new_write().await?;
        w.write(&b).await?;
        w.prepare_commit().await
    };
    let e = attempt.await.err().unwrap().to_string();
    assert!(
        e.contains("You should set time field for record-level expire."),
        "{e}"
    );
}
