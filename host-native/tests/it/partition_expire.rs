//! Partition expiration (Java's `partition.expiration-time`, `expire_partitions`): the
//! library call, the after-commit check (`end-input.check-partition-expire`) and the CLI;
//! rows left checked against what Java Paimon 2.0.0 reads.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::spec::CommitKind;
use paimon_native::Table;

use crate::common::table_rows;

const DAY: i64 = 86_400_000;
/// 2024-01-10T12:00:00Z.
const NOW: i64 = 1_704_888_000_000;

fn schema(options: &str) -> Vec<u8> {
    format!(
        r#"{{"fields": [{{"name": "dt", "type": "STRING"}}, {{"name": "k", "type": "BIGINT"}},
        {{"name": "v", "type": "STRING"}}], "partitionKeys": ["dt"],
        "options": {{"bucket": "-1"{options}}}}}"#
    )
    .into_bytes()
}

fn batch(dts: &[&str]) -> RecordBatch {
    let n = dts.len() as i64;
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "dt",
            Arc::new(StringArray::from_iter_values(dts.iter().copied())),
        ),
        ("k", Arc::new(Int64Array::from_iter_values(0..n))),
        (
            "v",
            Arc::new(StringArray::from_iter_values(
                dts.iter().map(|d| format!("v-{d}")),
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

async fn write(table: &Table, dts: &[&str], time: i64) -> paimon_kernel::commit::CommitOutcome {
    let mut w = table.new_write().await.unwrap();
    w.write(&batch(dts)).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table
        .new_commit(None)
        .with_time_millis(time)
        .commit(messages)
        .await
        .unwrap()
}

/// The `dt` values of the latest snapshot's rows, sorted.
async fn dts(table: &Table) -> Vec<String> {
    let batches = table.scan().to_batches().await.unwrap();
    let mut out: Vec<String> = paimon_kernel::canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(|r| r["dt"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

async fn java_agrees(dir: &Path, table: &Table) {
    if let Some(java) = crate::oracle::java_rows(dir) {
        assert_eq!(java, table_rows(table).await, "Java 2.0.0 reads other rows");
    }
}

const DATES: [&str; 6] = [
    "2024-01-01",
    "2024-01-05",
    "2024-01-05",
    "2024-01-08",
    "2024-01-10",
    "not-a-date",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_expire_drops_old_partitions_in_one_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = Table::create(dir.to_str().unwrap(), &schema(""))
        .await
        .unwrap();
    write(&table, &DATES, NOW - DAY).await;
    // Unset: asking for a config without an expiration time is an error naming the option.
    let err = table.partition_expire_config(&[]).await.unwrap_err();
    assert!(
        err.to_string().contains("partition.expiration-time"),
        "{err}"
    );
    let config = table
        .partition_expire_config(&[("partition.expiration-time".into(), "3 d".into())])
        .await
        .unwrap();
    // Cut-off 2024-01-07T12:00: 01-01 and 01-05 go; "not-a-date" never parses and stays.
    let dry = table
        .expire_partitions(config.clone(), NOW, true)
        .await
        .unwrap();
    let shown: Vec<String> = dry.partitions.iter().map(|p| p.display()).collect();
    assert_eq!(shown, ["dt=2024-01-01", "dt=2024-01-05"]);
    assert!(dry.snapshot_ids.is_empty());
    assert_eq!(table.snapshots().await.unwrap().len(), 1);

    let done = table.expire_partitions(config, NOW, false).await.unwrap();
    assert_eq!(done.partitions, dry.partitions);
    assert_eq!(done.snapshot_ids, vec![2]);
    let snapshots = table.snapshots().await.unwrap();
    let last = snapshots.last().unwrap();
    assert_eq!((last.id, last.commit_kind), (2, CommitKind::Overwrite));
    assert_eq!(last.total_record_count, 3);
    assert_eq!(last.delta_record_count, -3);
    assert_eq!(
        dts(&table).await,
        ["2024-01-08", "2024-01-10", "not-a-date"]
    );
    java_agrees(&dir, &table).await;

    // update-time: files record the writer's clock (not the commit time): a day from now,
    // every file is older than 12 h; max-num 2 keeps the last in text order.
    let config = table
        .partition_expire_config(&[
            ("partition.expiration-time".into(), "12 h".into()),
            ("partition.expiration-strategy".into(), "update-time".into()),
            ("partition.expiration-max-num".into(), "2".into()),
        ])
        .await
        .unwrap();
    let now = paimon_native::write::now_millis();
    let kept = table
        .expire_partitions(config.clone(), now, false)
        .await
        .unwrap();
    assert!(kept.partitions.is_empty() && kept.snapshot_ids.is_empty());
    let done = table
        .expire_partitions(config, now + DAY, false)
        .await
        .unwrap();
    let shown: Vec<String> = done.partitions.iter().map(|p| p.display()).collect();
    assert_eq!(shown, ["dt=2024-01-08", "dt=2024-01-10"]);
    assert_eq!(done.snapshot_ids, vec![3]);
    assert_eq!(dts(&table).await, ["not-a-date"]);
    java_agrees(&dir, &table).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_commit_only_with_end_input_check() {
    let tmp = tempfile::tempdir().unwrap();
    // Default check interval (1 h): a batch commit never checks, and no warning any more.
    let dir = tmp.path().join("plain");
    let table = Table::create(
        dir.to_str().unwrap(),
        &schema(r#", "partition.expiration-time": "3 d""#),
    )
    .await
    .unwrap();
    let out = write(&table, &DATES, NOW).await;
    assert_eq!(out.maintenance_warning, None);
    assert!(out.maintenance.unwrap().expired_partitions.is_empty());
    assert_eq!(dts(&table).await.len(), 6);

    let dir = tmp.path().join("end-input");
    let table = Table::create(
        dir.to_str().unwrap(),
        &schema(
            r#", "partition.expiration-time": "3 d", "end-input.check-partition-expire": "true",
            "partition.timestamp-formatter": "yyyy-MM-dd", "partition.expiration-batch-size": "1""#,
        ),
    )
    .await
    .unwrap();
    let out = write(&table, &DATES, NOW).await;
    assert_eq!(out.snapshot_ids, vec![1]);
    assert_eq!(out.maintenance_warning, None);
    let expired: Vec<String> = out
        .maintenance
        .unwrap()
        .expired_partitions
        .iter()
        .map(|p| p.display())
        .collect();
    assert_eq!(expired, ["dt=2024-01-01", "dt=2024-01-05"]);
    // One OVERWRITE snapshot per batch of one partition.
    let kinds: Vec<(i64, CommitKind)> = table
        .snapshots()
        .await
        .unwrap()
        .iter()
        .map(|s| (s.id, s.commit_kind))
        .collect();
    assert_eq!(
        kinds,
        [
            (1, CommitKind::Append),
            (2, CommitKind::Overwrite),
            (3, CommitKind::Overwrite)
        ]
    );
    assert_eq!(
        dts(&table).await,
        ["2024-01-08", "2024-01-10", "not-a-date"]
    );
    java_agrees(&dir, &table).await;

    // A bad strategy is reported as a warning after the commit, which stands.
    let dir = tmp.path().join("bad");
    let table = Table::create(
        dir.to_str().unwrap(),
        &schema(r#", "partition.expiration-time": "3 d", "partition.expiration-strategy": "x""#),
    )
    .await
    .unwrap();
    let out = write(&table, &DATES, NOW).await;
    assert_eq!(out.snapshot_ids, vec![1]);
    let warning = out.maintenance_warning.unwrap();
    assert!(
        warning.contains("partition.expiration-strategy"),
        "{warning}"
    );
}

#[test]
fn cli_expire_partitions() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let loc = dir.to_str().unwrap();
    let schema_path = tmp.path().join("schema.json");
    std::fs::write(&schema_path, schema("")).unwrap();
    // yyyyMMdd values far in the past and the future: independent of the clock.
    let input = tmp.path().join("rows.jsonl");
    std::fs::write(
        &input,
        "{\"dt\": \"20000101\", \"k\": 1, \"v\": \"a\"}\n\
         {\"dt\": \"20000102\", \"k\": 2, \"v\": \"b\"}\n\
         {\"dt\": \"20991231\", \"k\": 3, \"v\": \"c\"}\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_paimon-kernel");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["create", loc, "--schema", schema_path.to_str().unwrap()]);
    run(&["write", loc, "--input", input.to_str().unwrap()]);
    let dry = run(&[
        "expire-partitions",
        loc,
        "--expiration-time",
        "1 d",
        "--timestamp-formatter",
        "yyyyMMdd",
        "--dry-run",
    ]);
    assert!(dry.starts_with("dt=20000101\ndt=20000102\n"), "{dry}");
    assert!(dry.contains("would expire 2 partitions"), "{dry}");
    let out = run(&[
        "--json",
        "expire-partitions",
        loc,
        "--expiration-time",
        "1 d",
        "--timestamp-pattern",
        "$dt",
        "--timestamp-formatter",
        "yyyyMMdd",
        "--max-expires",
        "1",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["expired_partitions"], serde_json::json!(["dt=20000101"]));
    assert_eq!(v["partitions"], serde_json::json!([{"dt": "20000101"}]));
    assert_eq!(v["snapshot_ids"], serde_json::json!([2]));
    assert_eq!(v["dry_run"], serde_json::json!(false));
    let none = run(&[
        "expire-partitions",
        loc,
        "--expiration-time",
        "1 d",
        "--strategy",
        "values-time",
    ]);
    // Without the formatter "20000102" is no date: nothing expires.
    assert_eq!(none.trim(), "No expired partitions.");
    // Errors name the option.
    let bad = std::process::Command::new(bin)
        .args([
            "expire-partitions",
            loc,
            "--expiration-time",
            "1 d",
            "--strategy",
            "x",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("partition.expiration-strategy"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let scanned = run(&["scan", loc, "--format", "jsonl"]);
    let mut left: Vec<&str> = scanned.lines().collect();
    left.sort();
    assert_eq!(
        left,
        [
            r#"{"dt":"20000102","k":2,"v":"b"}"#,
            r#"{"dt":"20991231","k":3,"v":"c"}"#
        ]
    );
    if let Some(java) = crate::oracle::java_rows(&dir) {
        assert_eq!(java.len(), 2);
        assert!(
            java[0].contains("20000102") && java[1].contains("20991231"),
            "{java:?}"
        );
    }
}
