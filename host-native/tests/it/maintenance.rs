//! Table maintenance: expire, orphan clean, tags, rollback. Every retained snapshot must
//! read back what it read before; the files left must be exactly those the retained
//! snapshots and tags reference (computed here from the read API, by name).

use crate::copy_dir;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::canonical;
use paimon_kernel::maintenance::{ExpireConfig, RollbackTarget};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::Value;

const PK_SCHEMA: &[u8] =
    br#"{"fields": [{"name": "p", "type": "INT"}, {"name": "k", "type": "BIGINT"},
    {"name": "v", "type": "STRING"}], "partitionKeys": ["p"], "primaryKeys": ["p", "k"],
    "options": {"bucket": "2"}}"#;

const APPEND_SCHEMA: &[u8] =
    br#"{"fields": [{"name": "p", "type": "INT"}, {"name": "w", "type": "INT"},
    {"name": "i", "type": "INT"}], "partitionKeys": ["p"], "options": {"bucket": "-1"}}"#;

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

fn pk_batch(rows: &[(i32, i64, String)]) -> RecordBatch {
    batch(vec![
        (
            "p",
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))) as ArrayRef,
        ),
        (
            "k",
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
        ),
        (
            "v",
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.2.clone()),
            )),
        ),
    ])
}

async fn write_commit(table: &Table, b: &RecordBatch) -> i64 {
    let mut w = table.new_write().await.unwrap();
    w.write(b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    let ids = table
        .new_commit(None)
        .commit(messages)
        .await
        .unwrap()
        .snapshot_ids;
    assert_eq!(ids.len(), 1);
    ids[0]
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
    let mut out: Vec<String> = canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    out.sort();
    out
}

/// Relative paths of every file under `dir`.
fn walk(dir: &Path) -> BTreeSet<String> {
    fn go(base: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                go(base, &p, out);
            } else {
                out.insert(p.strip_prefix(base).unwrap().to_str().unwrap().to_string());
            }
        }
    }
    let mut out = BTreeSet::new();
    go(dir, dir, &mut out);
    out
}

/// The table's data and manifest files as (kind, name): `manifest/<name>` and the names of
/// files in bucket directories.
fn present_files(dir: &Path) -> BTreeSet<String> {
    walk(dir)
        .into_iter()
        .filter_map(|p| {
            if let Some(m) = p.strip_prefix("manifest/") {
                return Some(format!("manifest/{m}"));
            }
            let (parent, name) = p.rsplit_once('/')?;
            parent
                .rsplit('/')
                .next()
                .is_some_and(|d| d.starts_with("bucket-"))
                .then(|| format!("data/{name}"))
        })
        .collect()
}

/// What the retained snapshots and the tags reference, from the read API.
async fn referenced_files(table: &Table) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut scans: Vec<paimon_native::TableScan> = table
        .snapshots()
        .await
        .unwrap()
        .iter()
        .map(|s| table.scan().with_snapshot_id(s.id))
        .collect();
    for (name, _) in table.tags().await.unwrap() {
        scans.push(table.scan().with_tag(name));
    }
    for scan in scans {
        let (snapshot, _, manifests) = scan.manifests().await.unwrap().unwrap();
        out.insert(format!("manifest/{}", snapshot.base_manifest_list));
        out.insert(format!("manifest/{}", snapshot.delta_manifest_list));
        if let Some(c) = &snapshot.changelog_manifest_list {
            out.insert(format!("manifest/{c}"));
        }
        for m in manifests {
            out.insert(format!("manifest/{}", m.file_name));
        }
        let files = scan.data_files().await.unwrap().unwrap();
        for e in files.entries {
            out.insert(format!("data/{}", e.file.file_name));
            for x in e.file.extra_files {
                out.insert(format!("data/{x}"));
            }
        }
    }
    out
}

async fn assert_files_exactly_referenced(table: &Table, dir: &Path) {
    let present = present_files(dir);
    let referenced = referenced_files(table).await;
    let missing: Vec<_> = referenced.difference(&present).collect();
    let extra: Vec<_> = present.difference(&referenced).collect();
    assert!(missing.is_empty(), "referenced but missing: {missing:?}");
    assert!(extra.is_empty(), "present but unreferenced: {extra:?}");
}

/// A primary-key table with 9 snapshots: upserts over two partitions with two full
/// compactions in between (so snapshots delete files), tags `t2` and `t5`.
async fn build_pk_table(dir: &Path) -> (Table, BTreeMap<i64, Vec<String>>) {
    let table = Table::create(dir.to_str().unwrap(), PK_SCHEMA)
        .await
        .unwrap();
    for round in 0..7i64 {
        let rows: Vec<(i32, i64, String)> = (0..20)
            .map(|k| {
                (
                    (k % 2) as i32,
                    (k + round * 5) % 30,
                    format!("r{round}k{k}"),
                )
            })
            .collect();
        write_commit(&table, &pk_batch(&rows)).await;
        if round == 2 || round == 4 {
            let report = table
                .compact(CompactOptions {
                    full: true,
                    ..CompactOptions::default()
                })
                .await
                .unwrap();
            assert!(report.snapshot.is_some());
        }
    }
    table.create_tag("t2", Some(2), None).await.unwrap();
    table.create_tag("t5", Some(5), None).await.unwrap();
    let mut rows = BTreeMap::new();
    for s in table.snapshots().await.unwrap() {
        rows.insert(s.id, rows_at(&table, Some(s.id), None).await);
    }
    assert_eq!(
        rows.keys().copied().collect::<Vec<_>>(),
        (1..=9).collect::<Vec<_>>()
    );
    (table, rows)
}

fn config(retain_max: i64, retain_min: i64, time_millis: i64, max_deletes: i64) -> ExpireConfig {
    ExpireConfig {
        retain_max,
        retain_min,
        time_retained_millis: time_millis,
        max_deletes,
        consumer_changelog_only: false,
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expire_keeps_retained_snapshots_readable_and_exactly_their_files() {
    // (retain max, min, time retained, limit) → first retained snapshot
    let cases = [
        (config(3, 3, 0, 50), 7),
        (config(3, 1, 0, 50), 9),
        (config(100, 2, 0, 50), 8),
        (config(100, 1, 0, 3), 4),
        (config(100, 1, 3_600_000, 50), 1),
        (config(4, 1, 3_600_000, 50), 6),
    ];
    for (cfg, first) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t");
        let (table, before) = build_pk_table(&dir).await;
        let before_tags = (
            rows_at(&table, None, Some("t2")).await,
            rows_at(&table, None, Some("t5")).await,
        );
        let out = table.expire_with(cfg.clone(), now()).await.unwrap();
        assert_eq!(
            out.expired_snapshots,
            (1..first).collect::<Vec<_>>(),
            "{cfg:?}"
        );
        let ids: Vec<i64> = table
            .snapshots()
            .await
            .unwrap()
            .iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids, (first..=9).collect::<Vec<_>>(), "{cfg:?}");
        assert_eq!(
            std::fs::read_to_string(dir.join("snapshot/EARLIEST")).unwrap(),
            first.to_string()
        );
        for id in ids {
            assert_eq!(
                rows_at(&table, Some(id), None).await,
                before[&id],
                "snapshot {id}"
            );
        }
        assert_eq!(rows_at(&table, None, Some("t2")).await, before_tags.0);
        assert_eq!(rows_at(&table, None, Some("t5")).await, before_tags.1);
        assert_files_exactly_referenced(&table, &dir).await;
        if first > 1 {
            assert!(!out.deleted_files.is_empty());
            assert!(out.deleted_bytes() > 0);
        }
        java_reads_equal(&dir, &table, &before).await;
    }
}

/// When java-check is installed ([`crate::oracle::java_check`]): Java 2.0.0 reads every
/// remaining snapshot with the rows we read.
async fn java_reads_equal(dir: &Path, table: &Table, before: &BTreeMap<i64, Vec<String>>) {
    let Some(read) = crate::oracle::java_check("read") else {
        return;
    };
    for s in table.snapshots().await.unwrap() {
        let out = std::process::Command::new(&read)
            .arg(dir)
            .args(["--snapshot", &s.id.to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut rows: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        rows.sort();
        assert_eq!(rows, before[&s.id], "java, snapshot {}", s.id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expire_twice_then_delete_tags_frees_exactly_the_tag_only_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let (table, before) = build_pk_table(&dir).await;
    // Two steps (limit 3, then the rest) end where one step would.
    let out = table.expire_with(config(2, 1, 0, 3), now()).await.unwrap();
    assert_eq!(out.expired_snapshots, vec![1, 2, 3]);
    let out = table.expire_with(config(2, 2, 0, 50), now()).await.unwrap();
    assert_eq!(out.expired_snapshots, vec![4, 5, 6, 7]);
    assert_files_exactly_referenced(&table, &dir).await;
    assert_eq!(rows_at(&table, None, Some("t2")).await, before[&2]);

    let deleted = table.delete_tag("t2").await.unwrap();
    assert_eq!(deleted.snapshot_id, 2);
    assert!(!deleted.deleted_files.is_empty());
    assert_files_exactly_referenced(&table, &dir).await;
    assert_eq!(rows_at(&table, None, Some("t5")).await, before[&5]);
    table.delete_tag("t5").await.unwrap();
    assert_files_exactly_referenced(&table, &dir).await;
    for id in [8, 9] {
        assert_eq!(rows_at(&table, Some(id), None).await, before[&id]);
    }
    assert!(table.delete_tag("t5").await.is_err());
    let tags = table.tag_infos().await.unwrap();
    assert!(tags.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumers_protect_their_next_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let (table, _) = build_pk_table(&dir).await;
    std::fs::create_dir_all(dir.join("consumer")).unwrap();
    std::fs::write(dir.join("consumer/consumer-c1"), r#"{"nextSnapshot":4}"#).unwrap();
    let out = table.expire_with(config(2, 1, 0, 50), now()).await.unwrap();
    assert_eq!(out.expired_snapshots, vec![1, 2, 3]);
    assert_files_exactly_referenced(&table, &dir).await;
}

fn set_old(path: &Path, age: Duration) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

fn plant(dir: &Path, rel: &str, age: Duration) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, b"orphan bytes").unwrap();
    set_old(&p, age);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_clean_removes_old_unreferenced_files_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let (table, before) = build_pk_table(&dir).await;
    // Make every real file old too: only unreferenced ones may go.
    for f in walk(&dir) {
        set_old(&dir.join(&f), Duration::from_secs(3 * 86_400));
    }
    let day2 = Duration::from_secs(2 * 86_400);
    let old_orphans = [
        "manifest/manifest-orphan-0",
        "index/index-orphan-0",
        "statistics/stats-orphan",
        "p=0/bucket-0/data-orphan-0.parquet",
        "p=1/bucket-1/data-orphan-1.parquet",
        "p=7/bucket-0/data-orphan-2.parquet",
        "snapshot/.snapshot-9.tmp",
        // The sidecar of no used data file (e.g. of a failed write): an orphan, as in Java.
        "p=0/bucket-0/data-x.parquet.blobref",
    ];
    for o in old_orphans {
        plant(&dir, o, day2);
    }
    // Kept: young, managed BLOB, out of the layout.
    plant(
        &dir,
        "p=0/bucket-0/data-young.parquet",
        Duration::from_secs(60),
    );
    plant(&dir, "p=0/bucket-0/pack-1.managed.blob", day2);
    plant(&dir, "README.txt", day2);
    plant(&dir, "p=0/other/data-z.parquet", day2);
    let all_before = walk(&dir);

    let dry = table.remove_orphans(86_400_000, true).await.unwrap();
    assert!(dry.dry_run);
    let mut want: Vec<&str> = old_orphans.to_vec();
    want.sort_unstable();
    let got: Vec<&str> = dry.removed.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(got, want);
    assert_eq!(dry.removed_bytes(), 12 * old_orphans.len() as u64);
    assert_eq!(dry.too_young, 1);
    assert_eq!(walk(&dir), all_before, "a dry run deletes nothing");

    let real = table.remove_orphans(86_400_000, false).await.unwrap();
    assert_eq!(real.removed, dry.removed);
    let after = walk(&dir);
    let gone: BTreeSet<String> = all_before.difference(&after).cloned().collect();
    assert_eq!(gone, want.iter().map(|s| s.to_string()).collect());
    for id in 1..=9 {
        assert_eq!(rows_at(&table, Some(id), None).await, before[&id]);
    }
    // Again: nothing left to do.
    let again = table.remove_orphans(86_400_000, false).await.unwrap();
    assert!(again.removed.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_clean_stops_when_a_live_manifest_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let (table, _) = build_pk_table(&dir).await;
    plant(
        &dir,
        "p=0/bucket-0/data-orphan.parquet",
        Duration::from_secs(2 * 86_400),
    );
    let latest = table.latest_snapshot().await.unwrap().unwrap();
    std::fs::remove_file(dir.join("manifest").join(&latest.delta_manifest_list)).unwrap();
    let err = table
        .remove_orphans(0, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is missing"), "{err}");
    assert!(err.contains(&latest.delta_manifest_list), "{err}");
    assert!(dir.join("p=0/bucket-0/data-orphan.parquet").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_to_snapshot_and_to_tag_of_an_expired_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let (table, before) = build_pk_table(&dir).await;
    table.create_tag("t8", Some(8), None).await.unwrap();
    let out = table
        .rollback_to(RollbackTarget::Snapshot(6))
        .await
        .unwrap();
    assert_eq!(out.deleted_snapshots, vec![9, 8, 7]);
    assert_eq!(out.deleted_tags, vec!["t8".to_string()]);
    assert_eq!(
        std::fs::read_to_string(dir.join("snapshot/LATEST")).unwrap(),
        "6"
    );
    assert_eq!(rows_at(&table, None, None).await, before[&6]);
    // The table goes on from 6.
    let id = write_commit(&table, &pk_batch(&[(0, 1000, "after".into())])).await;
    assert_eq!(id, 7);

    // Expire past t2, then roll back to it: the snapshot file comes back from the tag.
    table.expire_with(config(1, 1, 0, 50), now()).await.unwrap();
    assert_eq!(table.snapshots().await.unwrap().len(), 1);
    let out = table
        .rollback_to(RollbackTarget::Tag("t2".into()))
        .await
        .unwrap();
    assert!(out.restored_snapshot);
    assert_eq!(out.deleted_tags, vec!["t5".to_string()]);
    assert_eq!(out.deleted_snapshots, vec![7]);
    assert_eq!(
        std::fs::read_to_string(dir.join("snapshot/EARLIEST")).unwrap(),
        "2"
    );
    assert_eq!(rows_at(&table, None, None).await, before[&2]);
    assert_eq!(rows_at(&table, Some(2), None).await, before[&2]);
    // Rolled-back files are young: a clean with a cut-off in the future takes them.
    table
        .remove_orphans_before(now() + 60_000, false)
        .await
        .unwrap();
    assert_files_exactly_referenced(&table, &dir).await;
    assert_eq!(rows_at(&table, None, None).await, before[&2]);
    assert!(
        table
            .rollback_to(RollbackTarget::Snapshot(42))
            .await
            .is_err()
    );
    assert!(
        table
            .rollback_to(RollbackTarget::Tag("nope".into()))
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tag_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = Table::create(dir.to_str().unwrap(), PK_SCHEMA)
        .await
        .unwrap();
    assert!(
        table.create_tag("a", None, None).await.is_err(),
        "no snapshot yet"
    );
    write_commit(&table, &pk_batch(&[(0, 1, "x".into())])).await;
    let info = table
        .create_tag("a", None, Some(7 * 86_400_000))
        .await
        .unwrap();
    assert_eq!(info.snapshot_id, 1);
    assert!(table.create_tag("a", None, None).await.is_err(), "exists");
    assert!(table.create_tag(" ", None, None).await.is_err(), "blank");
    assert!(
        table.create_tag("b", Some(5), None).await.is_err(),
        "no snapshot 5"
    );
    let tags = table.tags().await.unwrap();
    assert_eq!(tags.len(), 1);
    assert_eq!(tags[0].1.tag_time_retained.unwrap().seconds, 7 * 86_400);
    assert!(tags[0].1.tag_create_time.is_some());
    // Without retention the tag file is the snapshot file, byte for byte (as Java).
    table.create_tag("plain", Some(1), None).await.unwrap();
    assert_eq!(
        std::fs::read(dir.join("tag/tag-plain")).unwrap(),
        std::fs::read(dir.join("snapshot/snapshot-1")).unwrap()
    );
}

fn cli(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_subcommands() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let (_table, before) = build_pk_table(&dir).await;
    let loc = dir.to_str().unwrap();
    let out = cli(&["tag", "create", loc, "t7", "--snapshot", "7"]);
    assert_eq!(out.trim(), "created tag t7 on snapshot 7");
    let list: Value = serde_json::from_str(&cli(&["--json", "tag", "list", loc])).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["t2", "t5", "t7"]);
    let out: Value = serde_json::from_str(&cli(&[
        "--json",
        "expire",
        loc,
        "--retain-max",
        "3",
        "--retain-min",
        "3",
        "--older-than",
        "0 s",
    ]))
    .unwrap();
    assert_eq!(
        out["expired_snapshots"],
        serde_json::json!([1, 2, 3, 4, 5, 6])
    );
    assert_eq!(out["earliest_snapshot"], 7);
    assert!(out["deleted_bytes"].as_u64().unwrap() > 0);
    let text = cli(&["expire", loc, "--retain-min", "1", "--older-than", "1d"]);
    assert!(text.starts_with("expired 0 snapshots"), "{text}");

    plant(
        &dir,
        "p=1/bucket-0/data-o.parquet",
        Duration::from_secs(3600),
    );
    let out: Value = serde_json::from_str(&cli(&[
        "--json",
        "remove-orphans",
        loc,
        "--older-than",
        "30min",
        "--dry-run",
    ]))
    .unwrap();
    assert_eq!(out["orphan_files"], 1);
    assert_eq!(out["deleted_files"], 0);
    assert!(dir.join("p=1/bucket-0/data-o.parquet").exists());
    let text = cli(&["remove-orphans", loc, "--older-than", "30 min"]);
    assert!(text.contains("deleted 1 orphan files (12 bytes)"), "{text}");
    assert!(!dir.join("p=1/bucket-0/data-o.parquet").exists());

    let text = cli(&["rollback", loc, "--tag", "t7"]);
    assert!(
        text.starts_with("rolled back to snapshot 7; deleted 2 snapshots"),
        "{text}"
    );
    let text = cli(&["tag", "delete", loc, "t2"]);
    assert!(
        text.starts_with("deleted tag t2 (snapshot 2); deleted "),
        "{text}"
    );
    let table = Table::open(loc).await.unwrap();
    assert_eq!(rows_at(&table, None, None).await, before[&7]);
    assert_eq!(rows_at(&table, None, Some("t5")).await, before[&5]);

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(["expire", loc, "--older-than", "3 weeks"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown unit"));
}

/// Tiny fixed-seed generator (xorshift) for the concurrent test's choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Writers append and overwrite their own partitions, compaction, expire and orphan clean run
/// in loops, a verifier reads every snapshot it sees against the model: no lost row, no
/// missing file; after a final expire and clean, no unreferenced file.
///
/// 30 seconds by default; the soak of the README is this test run longer:
/// `PAIMON_SOAK_SECS=600 cargo test --release -p paimon-native --test it concurrent_writers`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_expire_and_orphan_clean_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = Table::create(dir.to_str().unwrap(), APPEND_SCHEMA)
        .await
        .unwrap();
    let run_for = Duration::from_secs(
        std::env::var("PAIMON_SOAK_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(30),
    );
    let stop = Arc::new(AtomicBool::new(false));
    // Snapshot id → rows of every writer's partition as of that commit (per writer, its
    // whole partition content, since overwrites rewrite it).
    type Model = Arc<std::sync::Mutex<BTreeMap<i64, (i32, BTreeSet<(i32, i32)>)>>>;
    let model: Model = Arc::default();
    let writers = 2;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let table = table.clone();
        let stop = Arc::clone(&stop);
        let model = Arc::clone(&model);
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (w as u64 + 1));
            let mut mine: BTreeSet<(i32, i32)> = BTreeSet::new();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let overwrite = rng.next().is_multiple_of(4) && !mine.is_empty();
                let new_rows: Vec<(i32, i32)> = (0..3).map(|j| (w, i * 3 + j)).collect();
                i += 1;
                let rows: Vec<(i32, i32)> = if overwrite {
                    mine.iter()
                        .copied()
                        .chain(new_rows.iter().copied())
                        .collect()
                } else {
                    new_rows.clone()
                };
                let b = batch(vec![
                    (
                        "p",
                        Arc::new(Int32Array::from(vec![w; rows.len()])) as ArrayRef,
                    ),
                    (
                        "w",
                        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
                    ),
                    (
                        "i",
                        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
                    ),
                ]);
                let mut writer = table.new_write().await.unwrap();
                writer.write(&b).await.unwrap();
                let messages = writer.prepare_commit().await.unwrap();
                let commit = table.new_commit(None);
                let outcome = if overwrite {
                    let part = BTreeMap::from([("p".to_string(), w.to_string())]);
                    commit.overwrite(Some(part), messages).await.unwrap()
                } else {
                    commit.commit(messages).await.unwrap()
                };
                mine.extend(new_rows);
                let id = outcome.snapshot_ids[0];
                model.lock().unwrap().insert(id, (w, mine.clone()));
            }
        }));
    }
    // Compaction of the small files; a COMPACT snapshot changes no row (writer -1 in the
    // model). A compaction racing an overwrite of its partition may fail with a conflict.
    let compactor = {
        let table = table.clone();
        let stop = Arc::clone(&stop);
        let model = Arc::clone(&model);
        tokio::spawn(async move {
            let (mut done, mut conflicts) = (0, 0);
            while !stop.load(Ordering::Relaxed) {
                match table
                    .compact(paimon_native::compact::CompactOptions::default())
                    .await
                {
                    Ok(r) => {
                        if let Some(id) = r.snapshot {
                            model.lock().unwrap().insert(id, (-1, BTreeSet::new()));
                            done += 1;
                        }
                    }
                    Err(e) => {
                        assert!(e.to_string().contains("conflict"), "{e}");
                        conflicts += 1;
                    }
                }
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            (done, conflicts)
        })
    };
    let expire = {
        let table = table.clone();
        let stop = Arc::clone(&stop);
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let out = table.expire_with(config(6, 3, 0, 5), now()).await.unwrap();
                n += out.expired_snapshots.len();
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            n
        })
    };
    let cleaner = {
        let table = table.clone();
        let stop = Arc::clone(&stop);
        let dir = dir.clone();
        tokio::spawn(async move {
            let mut removed: usize = 0;
            let mut k: usize = 0;
            while !stop.load(Ordering::Relaxed) {
                // An old orphan in each round: it must go; files of commits in flight are
                // young and must stay.
                plant(
                    &dir,
                    &format!("p=0/bucket-0/data-planted-{k}.parquet"),
                    Duration::from_secs(3600),
                );
                k += 1;
                let out = table.remove_orphans(8_000, false).await.unwrap();
                removed += out.removed.len();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (k, removed)
        })
    };
    let verifier = {
        let table = table.clone();
        let stop = Arc::clone(&stop);
        let model = Arc::clone(&model);
        let dir = dir.clone();
        tokio::spawn(async move {
            let mut verified = 0;
            while !stop.load(Ordering::Relaxed) {
                let snaps = table.snapshots().await.unwrap();
                for s in snaps {
                    let want = {
                        let m = model.lock().unwrap();
                        // Every commit up to s must be known to the model.
                        if (1..=s.id).any(|id| !m.contains_key(&id)) {
                            continue;
                        }
                        let mut per_writer: BTreeMap<i32, BTreeSet<(i32, i32)>> = BTreeMap::new();
                        for (_, (w, rows)) in m.range(..=s.id).filter(|(_, (w, _))| *w >= 0) {
                            per_writer.insert(*w, rows.clone());
                        }
                        let mut all: Vec<String> = per_writer
                            .into_iter()
                            .flat_map(|(w, rows)| {
                                rows.into_iter().map(move |(_, i)| {
                                    serde_json::json!({"p": w, "w": w, "i": i}).to_string()
                                })
                            })
                            .collect();
                        all.sort();
                        all
                    };
                    match table.scan().with_snapshot_id(s.id).to_batches().await {
                        Ok(batches) => {
                            let mut got: Vec<String> = canonical::batches_rows(&batches)
                                .unwrap()
                                .iter()
                                .map(Value::to_string)
                                .collect();
                            got.sort();
                            assert_eq!(got, want, "snapshot {}", s.id);
                            verified += 1;
                        }
                        Err(e) => {
                            // Only a snapshot being expired may lose files: its snapshot
                            // file must be gone shortly.
                            let path = dir.join(format!("snapshot/snapshot-{}", s.id));
                            let mut waited = 0;
                            while path.exists() && waited < 100 {
                                tokio::time::sleep(Duration::from_millis(100)).await;
                                waited += 1;
                            }
                            assert!(!path.exists(), "snapshot {} lost a file: {e}", s.id);
                        }
                    }
                }
            }
            verified
        })
    };
    tokio::time::sleep(run_for).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    let (compactions, conflicts) = compactor.await.unwrap();
    let expired = expire.await.unwrap();
    let (planted, removed) = cleaner.await.unwrap();
    let verified = verifier.await.unwrap();
    let last = table.latest_snapshot().await.unwrap().unwrap().id;
    eprintln!(
        "{last} snapshots committed ({compactions} compactions, {conflicts} compaction \
         conflicts), {expired} expired, {verified} snapshot reads verified, {removed} of \
         {planted} planted orphans removed"
    );
    assert!(compactions > 0, "compaction did something");
    assert!(expired > 0, "expire did something");
    assert!(verified > 10, "verifier read {verified} snapshots");
    assert!(
        removed >= planted.saturating_sub(1),
        "{removed} of {planted} planted orphans"
    );

    // Final: expire to the minimum, clean everything unreferenced, check.
    table
        .expire_with(config(3, 3, 0, i64::from(i32::MAX)), now())
        .await
        .unwrap();
    table
        .remove_orphans_before(now() + 60_000, false)
        .await
        .unwrap();
    assert_files_exactly_referenced(&table, &dir).await;
    let snaps = table.snapshots().await.unwrap();
    assert_eq!(snaps.len(), 3);
    let m = model.lock().unwrap().clone();
    for s in snaps {
        let mut per_writer: BTreeMap<i32, BTreeSet<(i32, i32)>> = BTreeMap::new();
        for (_, (w, rows)) in m.range(..=s.id).filter(|(_, (w, _))| *w >= 0) {
            per_writer.insert(*w, rows.clone());
        }
        let n: usize = per_writer.values().map(BTreeSet::len).sum();
        assert_eq!(rows_at(&table, Some(s.id), None).await.len(), n);
    }
    let left: Vec<String> = walk(&dir)
        .into_iter()
        .filter(|p| p.contains("planted"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A branch made from a tag shares the tag's files: expiring the tagged snapshot and then
/// deleting the tag must leave every snapshot of the branch readable (Java 2.0 would delete
/// the files; ours leave them to `remove-orphans`, which reads branches).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expire_and_tag_delete_keep_the_files_of_branches() {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/java-tables/p142_fallback");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    copy_dir(&src, &dir);
    let table = Table::open(dir.to_str().unwrap()).await.unwrap();
    let branch = table.with_branch("b1").await.unwrap();
    let mut before = BTreeMap::new();
    for s in branch.snapshots().await.unwrap() {
        before.insert(s.id, rows_at(&branch, Some(s.id), None).await);
    }
    assert!(before.len() >= 2, "{before:?}");
    let out = table
        .expire_with(config(1, 1, 0, 100), now())
        .await
        .unwrap();
    assert!(!out.expired_snapshots.is_empty());
    table.delete_tag("t1").await.unwrap();
    let branch = table.with_branch("b1").await.unwrap();
    for (id, rows) in &before {
        assert_eq!(
            &rows_at(&branch, Some(*id), None).await,
            rows,
            "branch snapshot {id}"
        );
    }
    // Nothing the branch uses is an orphan either.
    table
        .remove_orphans_before(now() + 60_000, false)
        .await
        .unwrap();
    let branch = table.with_branch("b1").await.unwrap();
    for (id, rows) in &before {
        assert_eq!(
            &rows_at(&branch, Some(*id), None).await,
            rows,
            "branch snapshot {id}"
        );
    }
}

/// A compaction task whose input files a later overwrite replaced and expiry then deleted
/// fails with a commit conflict naming the file (plan again), for append and primary-key
/// tables; a live input that is missing stays the IO error it is (a damaged table).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_whose_inputs_expiry_deleted_conflicts() {
    let append_rows = |i: i32| {
        batch(vec![
            ("p", Arc::new(Int32Array::from(vec![0, 0])) as ArrayRef),
            ("w", Arc::new(Int32Array::from(vec![i, i]))),
            ("i", Arc::new(Int32Array::from(vec![2 * i, 2 * i + 1]))),
        ])
    };
    let pk_rows = |i: i64| pk_batch(&[(0, i, format!("v{i}")), (0, i + 100, "x".into())]);
    for (kind, schema) in [("append", APPEND_SCHEMA), ("primary-key", PK_SCHEMA)] {
        let batch_of = |i: i32| {
            if kind == "append" {
                append_rows(i)
            } else {
                pk_rows(i as i64)
            }
        };
        for damaged in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("t");
            let table = Table::create(dir.to_str().unwrap(), schema).await.unwrap();
            for i in 0..6 {
                write_commit(&table, &batch_of(i)).await;
            }
            let options = CompactOptions {
                full: true,
                ..Default::default()
            };
            let tasks = table.plan_compaction_tasks(&options).await.unwrap();
            assert!(!tasks.is_empty(), "{kind}: nothing to compact");
            let inputs: BTreeSet<String> =
                tasks.iter().flat_map(|t| t.files.iter().cloned()).collect();
            assert!(inputs.len() >= 3, "{kind}: {inputs:?}");
            if damaged {
                // A live input deleted behind the table's back.
                let victim = inputs.iter().next().unwrap();
                let path = find_file(&dir, victim).unwrap();
                std::fs::remove_file(path).unwrap();
            } else {
                // Overwrite the partition, then expire every older snapshot: the planned
                // inputs are no longer referenced and are deleted.
                let mut w = table.new_write().await.unwrap();
                w.write(&batch_of(7)).await.unwrap();
                let messages = w.prepare_commit().await.unwrap();
                let part = BTreeMap::from([("p".to_string(), "0".to_string())]);
                table
                    .new_commit(None)
                    .overwrite(Some(part), messages)
                    .await
                    .unwrap();
                table
                    .expire_with(config(1, 1, 0, 100), now())
                    .await
                    .unwrap();
                for f in &inputs {
                    assert!(find_file(&dir, f).is_none(), "{kind}: {f} not expired");
                }
            }
            let mut errors = Vec::new();
            for task in &tasks {
                match table.run_compaction_task(task).await {
                    Ok(messages) => table.new_commit(None).abort(messages).await.unwrap(),
                    Err(e) => errors.push(e),
                }
            }
            assert!(
                !errors.is_empty(),
                "{kind} damaged={damaged}: no task failed"
            );
            for e in &errors {
                let conflict = matches!(
                    e.as_kernel(),
                    Some(paimon_kernel::Error::CommitConflict { .. })
                );
                let text = e.to_string();
                assert_eq!(conflict, !damaged, "{kind} damaged={damaged}: {text}");
                assert!(
                    inputs.iter().any(|f| text.contains(f.as_str())),
                    "{kind}: the error names no input file: {text}"
                );
                if damaged {
                    assert!(text.contains("not found"), "{text}");
                } else {
                    assert!(text.contains("no longer holds it"), "{text}");
                }
            }
        }
    }
}

/// The path of the file named `name` under `dir`, if any.
fn find_file(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}
