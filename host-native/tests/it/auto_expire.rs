//! Maintenance after a commit (Java's batch `TableCommitImpl.maintain`): snapshot expire
//! with the table's options, decoupled changelogs kept as `changelog/changelog-N` and
//! expired by their own options, `write-only`, a failing expire that leaves the commit
//! standing, automatic tags per period (delay, completion, retention, retention time) and
//! batch tags. Commits run at fixed times through `TableCommit::with_time_millis`; the
//! expected files were worked out by hand from Java 2.0's `ExpireSnapshotsImpl`,
//! `ExpireChangelogImpl`, `TagAutoCreation` and `TagBatchCreation`.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::commit::CommitOutcome;
use paimon_native::Table;

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;
/// 2024-01-01T00:00:00Z.
const JAN_1: i64 = 1_704_067_200_000;

fn pk_schema(options: &str) -> Vec<u8> {
    format!(
        r#"{{"fields": [{{"name": "p", "type": "INT"}}, {{"name": "k", "type": "BIGINT"}},
        {{"name": "v", "type": "STRING"}}], "partitionKeys": ["p"], "primaryKeys": ["p", "k"],
        "options": {{"bucket": "1"{options}}}}}"#
    )
    .into_bytes()
}

fn rows(round: i64) -> RecordBatch {
    let n = 4;
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "p",
            Arc::new(Int32Array::from_iter_values((0..n).map(|k| (k % 2) as i32))),
        ),
        (
            "k",
            Arc::new(Int64Array::from_iter_values((0..n).map(|k| k + round))),
        ),
        (
            "v",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|k| format!("r{round}k{k}")),
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

async fn commit_at(table: &Table, round: i64, time_millis: i64) -> CommitOutcome {
    let mut w = table.new_write().await.unwrap();
    w.write(&rows(round)).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table
        .new_commit(None)
        .with_time_millis(time_millis)
        .commit(messages)
        .await
        .unwrap()
}

/// Ids of the files `<dir>/<sub>/<prefix>N`.
fn ids(dir: &Path, sub: &str, prefix: &str) -> BTreeSet<i64> {
    let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
        return BTreeSet::new();
    };
    entries
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()?
                .strip_prefix(prefix)?
                .parse()
                .ok()
        })
        .collect()
}

fn set(v: &[i64]) -> BTreeSet<i64> {
    v.iter().copied().collect()
}

async fn tag_names(table: &Table) -> Vec<(String, i64)> {
    let mut t: Vec<(String, i64)> = table
        .tag_infos()
        .await
        .unwrap()
        .into_iter()
        .map(|t| (t.name, t.snapshot_id))
        .collect();
    t.sort();
    t
}

async fn rows_at(table: &Table, snapshot: Option<i64>, tag: Option<&str>) -> Vec<String> {
    let mut scan = table.scan();
    if let Some(id) = snapshot {
        scan = scan.with_snapshot_id(id);
    }
    if let Some(t) = tag {
        scan = scan.with_tag(t);
    }
    let batches = scan.to_batches().await.unwrap();
    let mut out: Vec<String> = paimon_kernel::canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(serde_json::Value::to_string)
        .collect();
    out.sort();
    out
}

/// When java-check is installed ([`crate::oracle::java_check`]): Java Paimon 2.0.0 reads every
/// remaining snapshot and tag with our rows.
async fn java_agrees(dir: &Path, table: &Table) {
    let Some(read) = crate::oracle::java_check("read") else {
        return;
    };
    let mut targets: Vec<(String, String)> = Vec::new();
    for s in table.snapshots().await.unwrap() {
        targets.push(("--snapshot".into(), s.id.to_string()));
    }
    for t in table.tag_infos().await.unwrap() {
        targets.push(("--tag".into(), t.name));
    }
    assert!(!targets.is_empty());
    for (flag, value) in targets {
        let out = std::process::Command::new(&read)
            .arg(dir)
            .args([&flag, &value])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "java {flag} {value}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut java: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(str::to_string)
            .collect();
        java.sort();
        let ours = if flag == "--tag" {
            rows_at(table, None, Some(&value)).await
        } else {
            rows_at(table, Some(value.parse().unwrap()), None).await
        };
        assert_eq!(java, ours, "java {flag} {value}");
    }
}

async fn new_table(dir: &Path, options: &str) -> Table {
    Table::create(dir.to_str().unwrap(), &pk_schema(options))
        .await
        .unwrap()
}

/// Java's rules after every commit: `snapshot.num-retained.min` 2, `.max` 4,
/// `snapshot.time-retained` 1 h; a snapshot expires once the snapshot after it is older
/// than the time retained, or when beyond the max.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_expire_after_each_commit_by_min_max_and_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "4",
        "snapshot.time-retained": "1 h""#,
    )
    .await;
    // Commit times (minutes after JAN_1) and the snapshots left after each commit.
    let steps: [(i64, &[i64]); 8] = [
        (0, &[1]),
        (10, &[1, 2]),
        // 3 commits within the hour: min 2 keeps 2 and 3, time keeps 1 (2 is young).
        (20, &[1, 2, 3]),
        (30, &[1, 2, 3, 4]),
        // Max 4: snapshot 1 goes whatever its age.
        (40, &[2, 3, 4, 5]),
        // 2 h later: 2, 3 and 4 have successors older than 1 h; 5 stays (min 2).
        (160, &[5, 6]),
        (170, &[5, 6, 7]),
        // 3 h later: 5's and 6's successors are old: they go; 7 stays (min 2).
        (350, &[7, 8]),
    ];
    for (round, (minute, want)) in steps.iter().enumerate() {
        let outcome = commit_at(&table, round as i64, JAN_1 + minute * 60_000).await;
        assert_eq!(outcome.maintenance_warning, None);
        assert_eq!(
            ids(&dir, "snapshot", "snapshot-"),
            set(want),
            "after commit {}",
            round + 1
        );
        let m = outcome.maintenance.unwrap();
        assert_eq!(m.expire.earliest_snapshot, want.first().copied());
    }
    // The latest snapshot reads every row written.
    let batches = table.scan().to_batches().await.unwrap();
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    // Keys: p=0 holds 0..=9, p=1 holds 1..=10 after 8 rounds.
    assert_eq!(n, 20);
    java_agrees(&dir, &table).await;
    assert_eq!(
        std::fs::read_to_string(dir.join("snapshot/EARLIEST")).unwrap(),
        "7"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_only_keeps_every_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "write-only": "true", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1",
        "tag.automatic-creation": "process-time""#,
    )
    .await;
    for round in 0..3 {
        let outcome = commit_at(&table, round, JAN_1 + round * DAY).await;
        assert_eq!(outcome.maintenance, None);
        assert_eq!(outcome.maintenance_warning, None);
    }
    assert_eq!(ids(&dir, "snapshot", "snapshot-"), set(&[1, 2, 3]));
    assert!(tag_names(&table).await.is_empty());
}

/// An expire that fails (a corrupt consumer file) after a successful commit: the snapshot
/// is visible, the outcome carries the warning, nothing was expired.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_expire_leaves_the_commit_standing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1""#,
    )
    .await;
    commit_at(&table, 0, JAN_1).await;
    std::fs::create_dir_all(dir.join("consumer")).unwrap();
    std::fs::write(dir.join("consumer/consumer-broken"), "not json").unwrap();
    let outcome = commit_at(&table, 1, JAN_1 + DAY).await;
    assert_eq!(outcome.snapshot_ids, vec![2]);
    assert_eq!(outcome.maintenance, None);
    let warning = outcome.maintenance_warning.unwrap();
    assert!(warning.contains("consumer/consumer-broken"), "{warning}");
    assert_eq!(ids(&dir, "snapshot", "snapshot-"), set(&[1, 2]));
    let batches = table.scan().to_batches().await.unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 8);
    // Repaired, the next commit expires as usual.
    std::fs::remove_file(dir.join("consumer/consumer-broken")).unwrap();
    let outcome = commit_at(&table, 2, JAN_1 + 2 * DAY).await;
    assert_eq!(outcome.maintenance_warning, None);
    assert_eq!(ids(&dir, "snapshot", "snapshot-"), set(&[3]));
}

/// A compaction whose commit stands but whose expire fails reports the warning (the CLI
/// prints it on stderr).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_expire_after_a_compaction_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(&dir, r#", "snapshot.num-retained.min": "1""#).await;
    commit_at(&table, 0, JAN_1).await;
    commit_at(&table, 1, JAN_1).await;
    std::fs::create_dir_all(dir.join("consumer")).unwrap();
    std::fs::write(dir.join("consumer/consumer-broken"), "not json").unwrap();
    let report = table
        .compact(paimon_native::compact::CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(report.snapshot, Some(3));
    let warning = report.maintenance_warning.unwrap();
    assert!(warning.contains("consumer/consumer-broken"), "{warning}");
    assert_eq!(ids(&dir, "snapshot", "snapshot-"), set(&[1, 2, 3]));
}

/// Data files in the bucket directories, by path relative to the table.
fn data_files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in std::fs::read_dir(dir).unwrap() {
        let p = p.unwrap();
        let name = p.file_name().to_string_lossy().to_string();
        if !name.starts_with("p=") {
            continue;
        }
        for b in std::fs::read_dir(p.path()).unwrap() {
            let b = b.unwrap();
            for f in std::fs::read_dir(b.path()).unwrap() {
                let f = f.unwrap().file_name().to_string_lossy().to_string();
                out.insert(format!("{name}/{}/{f}", b.file_name().to_string_lossy()));
            }
        }
    }
    out
}

/// `changelog.num-retained.max` 4 and `changelog.time-retained` 1 d keep changelogs longer
/// than snapshots (max 2, 1 h): expired snapshots become `changelog/changelog-N`, which
/// expire by the changelog options; the latest long-lived changelog always stays. Without a
/// changelog producer a changelog is its snapshot's delta: the files an overwrite deleted
/// stay until the overwrite's changelog expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decoupled_changelogs_outlive_their_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2",
        "changelog.num-retained.max": "4", "changelog.time-retained": "1 d""#,
    )
    .await;
    let steps: [(&[i64], &[i64]); 8] = [
        (&[1], &[]),
        // Snapshot 2 is the commit itself (not older than 1 h): 1 stays.
        (&[1, 2], &[]),
        (&[2, 3], &[1]),
        // Commit 4 overwrites the table.
        (&[3, 4], &[1, 2]),
        // 4 snapshots and changelogs at most: changelog 1 goes.
        (&[4, 5], &[2, 3]),
        (&[5, 6], &[3, 4]),
        (&[6, 7], &[4, 5]),
        // The overwrite's changelog goes, with the files it replaced.
        (&[7, 8], &[5, 6]),
    ];
    let mut before_overwrite = BTreeSet::new();
    for (round, (snapshots, changelogs)) in steps.iter().enumerate() {
        let time = JAN_1 + round as i64 * 2 * HOUR;
        let outcome = if round == 3 {
            before_overwrite = data_files(&dir);
            assert_eq!(before_overwrite.len(), 6);
            let mut w = table.new_write().await.unwrap();
            w.write(&rows(3)).await.unwrap();
            let messages = w.prepare_commit().await.unwrap();
            table
                .new_commit(None)
                .with_time_millis(time)
                .overwrite(None, messages)
                .await
                .unwrap()
        } else {
            commit_at(&table, round as i64, time).await
        };
        assert_eq!(outcome.maintenance_warning, None);
        let round = round + 1;
        assert_eq!(
            ids(&dir, "snapshot", "snapshot-"),
            set(snapshots),
            "commit {round}"
        );
        assert_eq!(
            ids(&dir, "changelog", "changelog-"),
            set(changelogs),
            "commit {round}"
        );
        let files = data_files(&dir);
        // Snapshot 4 (the overwrite) expired with commit 6; the files it replaced stay for
        // changelogs 2..=4 and go with changelog 4 (commit 8).
        assert_eq!(
            before_overwrite.is_subset(&files),
            (3..8).contains(&round) || round < 3,
            "commit {round}"
        );
        if round == 6 {
            assert_eq!(
                std::fs::read_to_string(dir.join("changelog/LATEST")).unwrap(),
                "4"
            );
            assert_eq!(
                std::fs::read_to_string(dir.join("changelog/EARLIEST")).unwrap(),
                "3"
            );
            // A changelog file is the snapshot's JSON.
            let text = std::fs::read_to_string(dir.join("changelog/changelog-4")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["id"], 4);
            assert_eq!(v["timeMillis"], JAN_1 + 3 * 2 * HOUR);
            assert_eq!(v["commitKind"], "OVERWRITE");
        }
    }
    assert!(before_overwrite.is_disjoint(&data_files(&dir)));
    assert_eq!(data_files(&dir).len(), 2 * 5);
    // Every file left is used by a snapshot or a long-lived changelog, and every file those
    // name is there: an orphan clean with no age limit finds nothing to remove.
    let orphans = table.remove_orphans_before(i64::MAX, true).await.unwrap();
    assert!(orphans.removed.is_empty(), "{:?}", orphans.removed);
    // The latest snapshot holds the overwrite's rows and the 4 commits after it.
    let batches = table.scan().to_batches().await.unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 14);
    java_agrees(&dir, &table).await;
}

/// Daily process-time tags: a commit tags the period before its own; `tag.num-retained-max`
/// 2 keeps the 2 newest automatic tags; a manual tag is not an automatic one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daily_tags_with_retention() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "tag.automatic-creation": "process-time", "tag.num-retained-max": "2""#,
    )
    .await;
    let s = |d: &str, id: i64| (d.to_string(), id);
    commit_at(&table, 0, JAN_1 + 10 * HOUR).await;
    table.create_tag("manual", Some(1), None).await.unwrap();
    assert_eq!(
        tag_names(&table).await,
        vec![s("2023-12-31", 1), s("manual", 1)]
    );
    commit_at(&table, 1, JAN_1 + 20 * HOUR).await;
    assert_eq!(tag_names(&table).await.len(), 2);
    let out = commit_at(&table, 2, JAN_1 + DAY + HOUR).await;
    assert_eq!(
        out.maintenance.unwrap().auto_tags.created,
        vec![s("2024-01-01", 3)]
    );
    let out = commit_at(&table, 3, JAN_1 + 2 * DAY + 5 * HOUR).await;
    let m = out.maintenance.unwrap();
    assert_eq!(m.auto_tags.created, vec![s("2024-01-02", 4)]);
    assert_eq!(m.auto_tags.deleted, vec!["2023-12-31".to_string()]);
    // Two days later without completion: the period before the commit's, 2024-01-03 is
    // skipped.
    commit_at(&table, 4, JAN_1 + 4 * DAY + 12 * HOUR).await;
    assert_eq!(
        tag_names(&table).await,
        vec![s("2024-01-02", 4), s("2024-01-04", 5), s("manual", 1)]
    );
    // A tag reads its snapshot.
    let batches = table
        .scan()
        .with_tag("2024-01-02")
        .to_batches()
        .await
        .unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 12);
    java_agrees(&dir, &table).await;
}

/// `tag.creation-delay` 2 h holds a period's tag until 2 h after it ends; with
/// `tag.automatic-completion` the missed periods are tagged one per commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_and_completion() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "tag.automatic-creation": "process-time", "tag.creation-delay": "2 h",
        "tag.automatic-completion": "true""#,
    )
    .await;
    let s = |d: &str, id: i64| (d.to_string(), id);
    commit_at(&table, 0, JAN_1 + 10 * HOUR).await;
    // The first tag: no delay check.
    assert_eq!(tag_names(&table).await, vec![s("2023-12-31", 1)]);
    // 01-02 01:00 minus 2 h is before 01-02: no tag yet.
    commit_at(&table, 1, JAN_1 + DAY + HOUR).await;
    assert_eq!(tag_names(&table).await.len(), 1);
    // 01-04 05:00: completion tags 2024-01-01 on snapshot 3 only (one tag per snapshot).
    commit_at(&table, 2, JAN_1 + 3 * DAY + 5 * HOUR).await;
    assert_eq!(
        tag_names(&table).await,
        vec![s("2023-12-31", 1), s("2024-01-01", 3)]
    );
    commit_at(&table, 3, JAN_1 + 3 * DAY + 6 * HOUR).await;
    assert_eq!(
        tag_names(&table).await,
        vec![s("2023-12-31", 1), s("2024-01-01", 3), s("2024-01-02", 4)]
    );
    // Completion caught up: 2024-01-03 ended at 01-04 00:00, plus the 2 h delay has passed.
    commit_at(&table, 4, JAN_1 + 3 * DAY + 7 * HOUR).await;
    assert_eq!(tag_names(&table).await.last(), Some(&s("2024-01-03", 5)));
    // 01-05 01:00: 2024-01-04 waits for its delay.
    commit_at(&table, 5, JAN_1 + 4 * DAY + HOUR).await;
    assert_eq!(tag_names(&table).await.len(), 4);
    commit_at(&table, 6, JAN_1 + 4 * DAY + 2 * HOUR).await;
    assert_eq!(tag_names(&table).await.last(), Some(&s("2024-01-04", 7)));
}

/// Hourly names without dashes, and `tag.default-time-retained`: the tag file holds the
/// creation time (UTC) and retention; a commit after it passed deletes the tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hourly_names_and_time_retained() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "tag.automatic-creation": "process-time", "tag.creation-period": "hourly",
        "tag.period-formatter": "without_dashes", "tag.default-time-retained": "90 min""#,
    )
    .await;
    let s = |d: &str, id: i64| (d.to_string(), id);
    commit_at(&table, 0, JAN_1 + 10 * HOUR + 30 * 60_000).await;
    assert_eq!(tag_names(&table).await, vec![s("20240101 09", 1)]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("tag/tag-20240101 09")).unwrap())
            .unwrap();
    assert_eq!(v["tagCreateTime"], serde_json::json!([2024, 1, 1, 10, 30]));
    assert_eq!(v["tagTimeRetained"].as_f64(), Some(5400.0));
    // 11:45: tag 10 created; 09's retention (until 12:00) holds.
    commit_at(&table, 1, JAN_1 + 11 * HOUR + 45 * 60_000).await;
    assert_eq!(
        tag_names(&table).await,
        vec![s("20240101 09", 1), s("20240101 10", 2)]
    );
    // 12:01: 09 (created 10:30) expired; tag 11 created.
    let out = commit_at(&table, 2, JAN_1 + 12 * HOUR + 60_000).await;
    assert_eq!(
        out.maintenance.unwrap().expired_tags,
        vec!["20240101 09".to_string()]
    );
    assert_eq!(
        tag_names(&table).await,
        vec![s("20240101 10", 2), s("20240101 11", 3)]
    );
    java_agrees(&dir, &table).await;
}

/// `batch`: each commit tags the latest snapshot `batch-write-<date>`, replacing the tag of
/// that day; `tag.num-retained-max` 1 keeps the newest tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_tags() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "tag.automatic-creation": "batch", "tag.num-retained-max": "1""#,
    )
    .await;
    let s = |d: &str, id: i64| (d.to_string(), id);
    commit_at(&table, 0, JAN_1 + 10 * HOUR).await;
    assert_eq!(
        tag_names(&table).await,
        vec![s("batch-write-2024-01-01", 1)]
    );
    commit_at(&table, 1, JAN_1 + 11 * HOUR).await;
    assert_eq!(
        tag_names(&table).await,
        vec![s("batch-write-2024-01-01", 2)]
    );
    let out = commit_at(&table, 2, JAN_1 + DAY).await;
    assert_eq!(
        out.maintenance.unwrap().auto_tags.deleted,
        vec!["batch-write-2024-01-01".to_string()]
    );
    assert_eq!(
        tag_names(&table).await,
        vec![s("batch-write-2024-01-02", 3)]
    );
    java_agrees(&dir, &table).await;
}

/// A streaming commit (the caller's identifier) makes no batch tag: Java makes them only at
/// the end of a batch job. The batch commit after it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_commits_make_no_batch_tags() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(&dir, r#", "tag.automatic-creation": "batch""#).await;
    let committer = table.new_commit(None).with_time_millis(JAN_1);
    for id in 1..=2 {
        let mut w = table.new_write().await.unwrap();
        w.write(&rows(id)).await.unwrap();
        let out = committer
            .commit_with_identifier(id, w.prepare_commit().await.unwrap())
            .await
            .unwrap();
        assert_eq!(out.snapshot_ids, vec![id]);
        assert!(out.maintenance.unwrap().auto_tags.created.is_empty());
    }
    assert!(tag_names(&table).await.is_empty());
    commit_at(&table, 3, JAN_1).await;
    assert_eq!(
        tag_names(&table).await,
        vec![("batch-write-2024-01-01".to_string(), 3)]
    );
}

/// `snapshot.expire.execution-mode` = `async`: a streaming commit returns with its
/// maintenance queued (`maintenance_in_background`); the queue runs one plan at a time in
/// commit order, so after `wait_maintenance` the snapshots left are those of the sync rule
/// (max 2). A failing background expire (a corrupt consumer file) is reported by the next
/// commit's outcome, once, and the commit stands. A batch commit still maintains before
/// it returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_expire_runs_behind_streaming_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "snapshot.expire.execution-mode": "async", "snapshot.num-retained.min": "1",
        "snapshot.num-retained.max": "2""#,
    )
    .await;
    let committer = table.new_commit(None).with_time_millis(JAN_1);
    let commit = |id: i64| {
        let (table, committer) = (table.clone(), committer.clone());
        async move {
            let mut w = table.new_write().await.unwrap();
            w.write(&rows(id)).await.unwrap();
            committer
                .commit_with_identifier(id, w.prepare_commit().await.unwrap())
                .await
                .unwrap()
        }
    };
    for id in 1..=5 {
        let out = commit(id).await;
        assert_eq!(out.snapshot_ids, vec![id]);
        assert!(out.maintenance_in_background);
        assert_eq!(out.maintenance, None);
        assert_eq!(out.maintenance_warning, None);
    }
    committer.wait_maintenance().await.unwrap();
    assert_eq!(ids(&dir, "snapshot", "snapshot-"), set(&[4, 5]));
    assert_eq!(
        std::fs::read_to_string(dir.join("snapshot/EARLIEST")).unwrap(),
        "4"
    );

    std::fs::create_dir_all(dir.join("consumer")).unwrap();
    std::fs::write(dir.join("consumer/consumer-broken"), "not json").unwrap();
    let out = commit(6).await;
    assert_eq!(out.maintenance_warning, None);
    while committer.maintenance_pending() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // Snapshot 6's failed plan is reported by the next commit, which stands.
    let out = commit(7).await;
    assert_eq!(out.snapshot_ids, vec![7]);
    let warning = out.maintenance_warning.unwrap();
    assert!(warning.contains("consumer/consumer-broken"), "{warning}");
    // Snapshot 7's plan fails too; wait_maintenance reports it.
    let err = committer.wait_maintenance().await.unwrap_err();
    assert!(
        err.to_string().contains("consumer/consumer-broken"),
        "{err}"
    );
    committer.wait_maintenance().await.unwrap();
    assert_eq!(ids(&dir, "snapshot", "snapshot-"), set(&[4, 5, 6, 7]));

    // Repaired: a batch commit maintains before it returns.
    std::fs::remove_file(dir.join("consumer/consumer-broken")).unwrap();
    let out = commit_at(&table, 8, JAN_1).await;
    assert!(!out.maintenance_in_background);
    assert_eq!(out.maintenance.unwrap().expire.earliest_snapshot, Some(7));
    assert_eq!(ids(&dir, "snapshot", "snapshot-"), set(&[7, 8]));
    java_agrees(&dir, &table).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tag_options_warn_after_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "tag.automatic-creation": "process-time", "tag.creation-period": "hourly",
        "tag.creation-delay": "1 h""#,
    )
    .await;
    let out = commit_at(&table, 0, JAN_1).await;
    assert_eq!(out.snapshot_ids, vec![1]);
    let warning = out.maintenance_warning.unwrap();
    assert!(warning.contains("tag.creation-delay"), "{warning}");
}

/// The CLI prints a failed maintenance after a commit as a warning; the write succeeds.
#[test]
fn cli_warns_when_maintenance_fails() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let loc = loc.to_str().unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"fields": [{"name": "k", "type": "BIGINT NOT NULL"}], "primaryKeys": ["k"],
        "options": {"bucket": "1", "tag.automatic-creation": "process-time",
        "tag.creation-delay": "2 d"}}"#,
    )
    .unwrap();
    let input = dir.path().join("rows.jsonl");
    std::fs::write(&input, "{\"k\": 1}\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_paimon-kernel");
    let created = std::process::Command::new(bin)
        .args(["create", loc, "--schema", schema.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(created.status.success());
    let out = std::process::Command::new(bin)
        .args(["write", loc, "--input", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: the commit stands") && err.contains("tag.creation-delay"),
        "{err}"
    );
}

/// `consumer.expiration-time`: a consumer whose file was last modified before the commit's
/// time minus the expiration is deleted before the snapshot expire (Java
/// `ConsumerManager.expire`), so it no longer holds snapshots back; a recent consumer stays and
/// keeps protecting its next snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_consumers_expire_before_the_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = new_table(
        &dir,
        r#", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1",
        "consumer.expiration-time": "1 d""#,
    )
    .await;
    commit_at(&table, 0, JAN_1).await;
    commit_at(&table, 1, JAN_1 + HOUR).await;
    std::fs::create_dir_all(dir.join("consumer")).unwrap();
    let consumer = |id: &str, next: i64, modified_millis: i64| {
        let path = dir.join(format!("consumer/consumer-{id}"));
        std::fs::write(&path, format!(r#"{{"nextSnapshot":{next}}}"#)).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(modified_millis as u64);
        f.set_modified(t).unwrap();
    };
    // Idle for more than a day at the next commit (JAN_1 + 2 days) / active an hour before it.
    consumer("idle", 1, JAN_1);
    consumer("active", 2, JAN_1 + 2 * DAY - HOUR);
    let outcome = commit_at(&table, 2, JAN_1 + 2 * DAY).await;
    assert_eq!(outcome.maintenance_warning, None);
    let done = outcome.maintenance.unwrap();
    assert_eq!(done.expired_consumers, vec!["idle".to_string()]);
    assert!(!dir.join("consumer/consumer-idle").exists());
    assert!(dir.join("consumer/consumer-active").exists());
    // Snapshot 1 went (only the idle consumer held it); the active one holds 2.
    assert_eq!(ids(&dir, "snapshot", "snapshot-"), set(&[2, 3]));
}
