//! Data files under `data-file.external-paths` (two local directories, strategy
//! `round-robin`): a partitioned primary-key table and a partitioned append table written in
//! several commits, compacted (a full primary-key compaction, an append compaction) and
//! expired. Every data file lands in the external directories (none in the table's bucket
//! directories) with its full path as `_EXTERNAL_PATH`, both directories take files, expire
//! deletes the external files no snapshot needs, an aborted write deletes its external files,
//! and our reader, Java Paimon 2.0.0 (java-check's `read`, when present) and pypaimon
//! (its venv, when installed) read the model rows. Also: postpone-bucket tables and their
//! compaction, `changelog-producer = input` changelog files, data-evolution updates, `.blob`
//! files and compaction, deletion-vector writes, remove-orphans over the roots, strategy
//! `entropy-inject` (hash directories below the bucket directories), and the refusal of bad
//! options.

use crate::common::table_rows;
use crate::oracle::{java_rows, sorted_strings};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::maintenance::ExpireConfig;
use paimon_kernel::write::external::entropy_dirs;
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::{Value, json};

/// Every file below `dir`, recursively.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(files_below(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out.sort();
    out
}

/// The local path of a `file:` external path as Java prints it (`file:/tmp/x`).
fn local_of(external: &str) -> PathBuf {
    let rest = external
        .strip_prefix("file:")
        .unwrap_or_else(|| panic!("not a file: URI: {external}"));
    assert!(
        !rest.starts_with("//"),
        "Java prints file:/path, not file:///path: {external}"
    );
    PathBuf::from(rest)
}

struct Dirs {
    _tmp: tempfile::TempDir,
    table: PathBuf,
    ext: [PathBuf; 2],
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("db.db").join("t");
    let ext = [tmp.path().join("ext1"), tmp.path().join("ext2")];
    Dirs {
        _tmp: tmp,
        table,
        ext,
    }
}

/// `"options"` entries for the external paths: the roots as `file://` URLs with a trailing
/// slash (Java and we record them as `file:/...`), strategy `round-robin`.
fn external_options(d: &Dirs) -> String {
    external_options_with(d, "round-robin")
}

/// [`external_options`] with another strategy.
fn external_options_with(d: &Dirs, strategy: &str) -> String {
    format!(
        r#""data-file.external-paths": "file://{}/, file://{}",
        "data-file.external-paths.strategy": "{strategy}""#,
        d.ext[0].display(),
        d.ext[1].display()
    )
}

/// Create the table of `d`: columns `p` (the partition key), `k`, `v`; primary key
/// `(p, k)` when `primary_key`; `options` (JSON members) plus the external-path options.
async fn pkv_table(d: &Dirs, primary_key: bool, options: &str) -> Table {
    pkv_table_with(d, primary_key, options, "round-robin").await
}

/// [`pkv_table`] with the external-path strategy `strategy`.
async fn pkv_table_with(d: &Dirs, primary_key: bool, options: &str, strategy: &str) -> Table {
    let keys = if primary_key {
        r#", "primaryKeys": ["p", "k"]"#
    } else {
        ""
    };
    let schema = format!(
        r#"{{"fields": [{{"name": "p", "type": "STRING NOT NULL"}},
        {{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}}],
        "partitionKeys": ["p"]{keys}, "options": {{{options}, {}}}}}"#,
        external_options_with(d, strategy)
    );
    std::fs::create_dir_all(d.table.parent().unwrap()).unwrap();
    Table::create(d.table.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap()
}

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

/// Rows `p, k, v` for `(p, k, v)` triples, with optional row kinds.
fn rows_batch(rows: &[(&str, i64, String)], kinds: Option<&[&str]>) -> RecordBatch {
    let mut cols: Vec<(&str, ArrayRef)> = vec![
        (
            "p",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
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
    ];
    if let Some(kinds) = kinds {
        cols.push(("_ROW_KIND", Arc::new(StringArray::from(kinds.to_vec()))));
    }
    batch(cols)
}

async fn write_commit(table: &Table, b: &RecordBatch) {
    let mut w = table.new_write().await.unwrap();
    w.write(b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

fn json_rows(rows: impl IntoIterator<Item = (String, i64, String)>) -> Vec<String> {
    let rows: Vec<Value> = rows
        .into_iter()
        .map(|(p, k, v)| json!({"p": p, "k": k, "v": v}))
        .collect();
    sorted_strings(&rows)
}

/// The live files' external paths; asserts every live file has one, under one of the
/// external roots, in its partition's bucket directory, and exists.
async fn live_external_paths(table: &Table, d: &Dirs) -> BTreeSet<PathBuf> {
    let files = table.scan().data_files().await.unwrap().unwrap();
    let mut out = BTreeSet::new();
    for e in &files.entries {
        let ext = e
            .file
            .external_path
            .as_deref()
            .unwrap_or_else(|| panic!("{} has no external path", e.file.file_name));
        let local = local_of(ext);
        assert!(
            d.ext.iter().any(|root| local.starts_with(root)),
            "{ext} is not under an external root"
        );
        let suffix = format!("/bucket-{}/{}", e.bucket, e.file.file_name);
        assert!(ext.ends_with(&suffix), "{ext} does not end with {suffix}");
        assert!(ext.contains("/p="), "{ext}: no partition directory");
        assert!(local.is_file(), "{ext} does not exist");
        out.insert(local);
    }
    out
}

/// The files in the external roots, and asserts the table directory holds no data files.
fn files_on_disk(d: &Dirs) -> BTreeSet<PathBuf> {
    for f in files_below(&d.table) {
        let rel = f
            .strip_prefix(&d.table)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            !rel.contains("bucket-"),
            "a data file in the table directory: {rel}"
        );
    }
    d.ext.iter().flat_map(|r| files_below(r)).collect()
}

fn assert_both_roots_used(paths: &BTreeSet<PathBuf>, d: &Dirs) {
    for root in &d.ext {
        assert!(
            paths.iter().any(|p| p.starts_with(root)),
            "no file in {}: {paths:?}",
            root.display()
        );
    }
}

fn expire_all_but_latest() -> ExpireConfig {
    ExpireConfig {
        retain_max: 1,
        retain_min: 1,
        time_retained_millis: 0,
        max_deletes: i64::MAX,
        consumer_changelog_only: false,
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `${PAIMON_VENV:-~/.cache/paimon-kernel/venv}/bin/python`, when installed.
fn pypaimon_python() -> Option<PathBuf> {
    let venv = std::env::var_os("PAIMON_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/paimon-kernel/venv"))
        })?;
    let py = venv.join("bin/python");
    py.exists().then_some(py)
}

/// pypaimon's rows of the table `db.t` in the warehouse `d`, when its venv is installed.
fn pypaimon_rows(d: &Dirs) -> Option<Vec<String>> {
    let python = pypaimon_python()?;
    let warehouse = d.table.parent().unwrap().parent().unwrap();
    let script = r#"
import json, sys
from pypaimon import CatalogFactory
catalog = CatalogFactory.create({"warehouse": sys.argv[1]})
table = catalog.get_table("db.t")
rb = table.new_read_builder()
splits = rb.new_scan().plan().splits()
for row in rb.new_read().to_arrow(splits).to_pylist():
    print(json.dumps({"p": row["p"], "k": row["k"], "v": row["v"]}))
"#;
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(warehouse)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pypaimon read failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Some(sorted_strings(&rows))
}

/// Java's and pypaimon's reads (when installed) equal `model`.
fn check_other_readers(d: &Dirs, model: &[String], what: &str) {
    match java_rows(&d.table) {
        Some(java) => {
            assert_eq!(java, model, "{what}: Java 2.0.0 reads otherwise");
            println!("{what}: Java 2.0.0 reads the {} model rows", model.len());
        }
        None => println!("{what}: java-check not installed: Java read skipped"),
    }
    match pypaimon_rows(d) {
        Some(py) => {
            assert_eq!(py, model, "{what}: pypaimon reads otherwise");
            println!("{what}: pypaimon reads the {} model rows", model.len());
        }
        None => println!("{what}: pypaimon venv not installed: pypaimon read skipped"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn primary_key_table_writes_compacts_and_expires_in_external_paths() {
    let d = dirs();
    let table = pkv_table(&d, true, r#""bucket": "2", "target-file-size": "2 kb""#).await;
    let mut model: BTreeMap<(String, i64), String> = BTreeMap::new();
    // Three commits: inserts (large enough to roll several files per bucket), updates,
    // deletes.
    let inserts: Vec<(&str, i64, String)> = ["a", "b"]
        .iter()
        .flat_map(|p| (0..2_500).map(move |k| (*p, k, format!("{p}-first-{k}"))))
        .collect();
    write_commit(&table, &rows_batch(&inserts, None)).await;
    model.extend(
        inserts
            .iter()
            .map(|(p, k, v)| ((p.to_string(), *k), v.clone())),
    );
    let updates: Vec<(&str, i64, String)> = (0..50).map(|k| ("a", k, format!("upd-{k}"))).collect();
    write_commit(&table, &rows_batch(&updates, None)).await;
    model.extend(
        updates
            .iter()
            .map(|(p, k, v)| ((p.to_string(), *k), v.clone())),
    );
    let deletes: Vec<(&str, i64, String)> = (100..120).map(|k| ("b", k, String::new())).collect();
    let kinds = vec!["-D"; deletes.len()];
    write_commit(&table, &rows_batch(&deletes, Some(&kinds))).await;
    for (p, k, _) in &deletes {
        model.remove(&(p.to_string(), *k));
    }
    let expected = json_rows(model.iter().map(|((p, k), v)| (p.clone(), *k, v.clone())));
    let live = live_external_paths(&table, &d).await;
    assert_both_roots_used(&live, &d);
    assert_eq!(
        files_on_disk(&d),
        live,
        "every written file is live before compaction"
    );
    assert_eq!(table_rows(&table).await, expected);

    // A full compaction rewrites every bucket into the external roots.
    let report = table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(report.snapshot.is_some());
    let compacted = live_external_paths(&table, &d).await;
    // Rewritten files are new; a file only moved up a level keeps its path.
    let rewritten: BTreeSet<&PathBuf> = compacted.difference(&live).collect();
    assert!(rewritten.len() >= 2, "{rewritten:?}");
    assert_eq!(table_rows(&table).await, expected);

    // Expire everything but the compacted snapshot: the external inputs are deleted.
    let out = table
        .expire_with(expire_all_but_latest(), now())
        .await
        .unwrap();
    assert!(!out.expired_snapshots.is_empty());
    assert_eq!(files_on_disk(&d), compacted, "only the live files remain");
    assert_eq!(table_rows(&table).await, expected);
    check_other_readers(&d, &expected, "primary-key table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_table_writes_compacts_and_expires_in_external_paths() {
    let d = dirs();
    let table = pkv_table(&d, false, r#""bucket": "-1""#).await;
    let mut model: Vec<(String, i64, String)> = Vec::new();
    for commit in 0..6 {
        let rows: Vec<(&str, i64, String)> = ["x", "y"]
            .iter()
            .flat_map(|p| (0..20).map(move |k| (*p, commit * 100 + k, format!("{p}-{commit}-{k}"))))
            .collect();
        write_commit(&table, &rows_batch(&rows, None)).await;
        model.extend(rows.iter().map(|(p, k, v)| (p.to_string(), *k, v.clone())));
    }
    let expected = json_rows(model.clone());
    let live = live_external_paths(&table, &d).await;
    // Six commits, one file per partition each.
    assert_eq!(live.len(), 12);
    assert_eq!(files_on_disk(&d), live);
    assert_eq!(table_rows(&table).await, expected);

    // An aborted write deletes its external files.
    let mut w = table.new_write().await.unwrap();
    w.write(&rows_batch(&[("x", 999, "gone".into())], None))
        .await
        .unwrap();
    let messages = w.prepare_commit().await.unwrap();
    let written: Vec<String> = messages
        .iter()
        .flat_map(|m| &m.data_increment.new_files)
        .map(|f| f.external_path.clone().expect("an external path"))
        .collect();
    assert_eq!(written.len(), 1);
    assert!(local_of(&written[0]).is_file());
    table.new_commit(None).abort(messages).await.unwrap();
    assert!(
        !local_of(&written[0]).exists(),
        "abort deletes {}",
        written[0]
    );
    assert_eq!(files_on_disk(&d), live);

    // Append compaction: each partition's six small files into one, in the external roots.
    let report = table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(report.snapshot.is_some());
    let compacted = live_external_paths(&table, &d).await;
    assert_eq!(compacted.len(), 2, "{compacted:?}");
    assert!(compacted.is_disjoint(&live));
    assert_eq!(table_rows(&table).await, expected);

    let out = table
        .expire_with(expire_all_but_latest(), now())
        .await
        .unwrap();
    assert!(!out.expired_snapshots.is_empty());
    assert_eq!(files_on_disk(&d), compacted, "only the live files remain");
    assert_eq!(table_rows(&table).await, expected);
    check_other_readers(&d, &expected, "append table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_external_path_options_are_refused_before_writing() {
    let d = dirs();
    for (options, needle) in [
        (
            r#""data-file.external-paths": "/no/scheme", "data-file.external-paths.strategy": "round-robin""#,
            "has no scheme",
        ),
        (
            r#""data-file.external-paths": "file:/x", "data-file.external-paths.strategy": "sideways""#,
            "data-file.external-paths.strategy",
        ),
    ] {
        let dir = d.table.with_file_name(format!("t{}", needle.len()));
        let schema = format!(
            r#"{{"fields": [{{"name": "p", "type": "STRING NOT NULL"}},
            {{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}}],
            "options": {{{options}}}}}"#
        );
        std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
        let table = match Table::create(dir.to_str().unwrap(), schema.as_bytes()).await {
            Ok(t) => t,
            Err(e) => {
                assert!(e.to_string().contains(needle), "create, {needle}: {e}");
                continue;
            }
        };
        let err = match table.new_write().await {
            Err(e) => e.to_string(),
            Ok(mut w) => w
                .write(&rows_batch(&[("x", 1, "v".into())], None))
                .await
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default(),
        };
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postpone_bucket_and_changelog_files_go_to_external_paths() {
    // Postpone bucket: the writes go to `bucket-postpone` under the roots, the compaction
    // moves the rows to real buckets under the roots.
    let d = dirs();
    let table = pkv_table(
        &d,
        true,
        r#""bucket": "-2", "postpone.batch-write-fixed-bucket": "false""#,
    )
    .await;
    let mut model: BTreeMap<(String, i64), String> = BTreeMap::new();
    for round in 0..3 {
        let rows: Vec<(&str, i64, String)> = ["a", "b"]
            .iter()
            .flat_map(|p| (round * 5..round * 5 + 10).map(move |k| (*p, k, format!("r{round}"))))
            .collect();
        write_commit(&table, &rows_batch(&rows, None)).await;
        model.extend(
            rows.iter()
                .map(|(p, k, v)| ((p.to_string(), *k), v.clone())),
        );
    }
    let written = files_on_disk(&d);
    assert_eq!(written.len(), 6, "{written:?}");
    assert!(
        written
            .iter()
            .all(|f| f.to_string_lossy().contains("/bucket-postpone/data-")),
        "{written:?}"
    );
    let report = table.compact(CompactOptions::default()).await.unwrap();
    assert!(report.snapshot.is_some());
    let expected = json_rows(model.iter().map(|((p, k), v)| (p.clone(), *k, v.clone())));
    let live = live_external_paths(&table, &d).await;
    assert!(!live.is_empty());
    assert!(
        live.iter()
            .all(|f| !f.to_string_lossy().contains("postpone"))
    );
    assert_eq!(table_rows(&table).await, expected);
    check_other_readers(&d, &expected, "postpone-bucket table");

    // changelog-producer = input: the changelog files go to the roots too.
    let d = dirs();
    let table = pkv_table(&d, true, r#""bucket": "1", "changelog-producer": "input""#).await;
    let rows: Vec<(&str, i64, String)> = (0..10).map(|k| ("a", k, format!("v{k}"))).collect();
    write_commit(&table, &rows_batch(&rows, None)).await;
    write_commit(&table, &rows_batch(&rows[..3], None)).await;
    let on_disk = files_on_disk(&d);
    let changelog: Vec<&PathBuf> = on_disk
        .iter()
        .filter(|f| {
            f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("changelog-")
        })
        .collect();
    assert_eq!(changelog.len(), 2, "{on_disk:?}");
    assert!(
        changelog
            .iter()
            .all(|f| f.to_string_lossy().contains("/p=a/bucket-0/"))
    );
    let live = live_external_paths(&table, &d).await;
    assert_eq!(live.len(), 2);
    let expected = json_rows(rows.iter().map(|(p, k, v)| (p.to_string(), *k, v.clone())));
    assert_eq!(table_rows(&table).await, expected);
    check_other_readers(&d, &expected, "changelog-producer input table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_evolution_updates_and_deletion_vector_writes_go_to_external_paths() {
    // Data evolution: inserts, a partial-column update by `_ROW_ID`, a compaction.
    let d = dirs();
    let table = pkv_table(&d, false, r#""bucket": "-1", "row-tracking.enabled": "true", "data-evolution.enabled": "true", "compaction.min.file-num": "2""#).await;
    let rows: Vec<(&str, i64, String)> = (0..10).map(|k| ("a", k, format!("v{k}"))).collect();
    write_commit(&table, &rows_batch(&rows[..5], None)).await;
    write_commit(&table, &rows_batch(&rows[5..], None)).await;
    let update = batch(vec![
        ("_ROW_ID", Arc::new(Int64Array::from(vec![2, 3]))),
        ("v", Arc::new(StringArray::from(vec!["new2", "new3"]))),
    ]);
    table.update(&update, None).await.unwrap();
    let mut model: Vec<(String, i64, String)> = rows
        .iter()
        .map(|(p, k, v)| (p.to_string(), *k, v.clone()))
        .collect();
    model[2].2 = "new2".into();
    model[3].2 = "new3".into();
    let expected = json_rows(model);
    let live = live_external_paths(&table, &d).await;
    assert_eq!(
        live.len(),
        3,
        "the inserts' files and the update's `v` file"
    );
    assert_eq!(files_on_disk(&d), live);
    assert_eq!(table_rows(&table).await, expected);
    let report = table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(report.snapshot.is_some());
    let compacted = live_external_paths(&table, &d).await;
    assert!(compacted.difference(&live).count() >= 1, "{compacted:?}");
    assert_eq!(table_rows(&table).await, expected);
    check_other_readers(&d, &expected, "data-evolution table");

    // Deletion vectors: each write compacts level 0 before the commit; the outputs go to the
    // roots, the vectors' index files stay in `index/`.
    let d = dirs();
    let table = pkv_table(
        &d,
        true,
        r#""bucket": "1", "deletion-vectors.enabled": "true""#,
    )
    .await;
    let rows: Vec<(&str, i64, String)> = (0..10).map(|k| ("a", k, format!("v{k}"))).collect();
    write_commit(&table, &rows_batch(&rows, None)).await;
    let updates: Vec<(&str, i64, String)> = (0..3).map(|k| ("a", k, format!("u{k}"))).collect();
    write_commit(&table, &rows_batch(&updates, None)).await;
    let mut model: BTreeMap<i64, String> = rows.iter().map(|(_, k, v)| (*k, v.clone())).collect();
    model.extend(updates.iter().map(|(_, k, v)| (*k, v.clone())));
    let expected = json_rows(model.iter().map(|(k, v)| ("a".to_string(), *k, v.clone())));
    live_external_paths(&table, &d).await;
    assert!(
        files_below(&d.table.join("index")).iter().any(|f| f
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("index-")),
        "the deletion vectors are in the table's index directory"
    );
    assert_eq!(table_rows(&table).await, expected);
    check_other_readers(&d, &expected, "deletion-vector table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_orphans_cleans_the_external_bucket_directories() {
    let d = dirs();
    let table = pkv_table(&d, false, r#""bucket": "-1""#).await;
    let rows: Vec<(&str, i64, String)> = (0..10).map(|k| ("x", k, format!("v{k}"))).collect();
    write_commit(&table, &rows_batch(&rows[..5], None)).await;
    write_commit(&table, &rows_batch(&rows[5..], None)).await;
    let live = live_external_paths(&table, &d).await;
    // Strays in both roots' bucket directories, and a file outside any bucket directory.
    let strays = [
        d.ext[0].join("p=x/bucket-0/data-stray-0.parquet"),
        d.ext[1].join("p=y/bucket-0/data-stray-1.parquet"),
    ];
    for s in &strays {
        std::fs::create_dir_all(s.parent().unwrap()).unwrap();
        std::fs::write(s, b"not parquet").unwrap();
    }
    let other = d.ext[0].join("NOTES");
    std::fs::write(&other, b"kept").unwrap();
    let out = table
        .remove_orphans_before(now() + 60_000, false)
        .await
        .unwrap();
    let removed: BTreeSet<PathBuf> = out
        .removed
        .iter()
        .filter(|f| f.path.starts_with("file:"))
        .map(|f| local_of(&f.path))
        .collect();
    assert_eq!(
        removed,
        strays.iter().cloned().collect(),
        "{:?}",
        out.removed
    );
    assert!(strays.iter().all(|s| !s.exists()));
    assert!(other.exists());
    let mut left = files_on_disk(&d);
    left.remove(&other);
    assert_eq!(left, live, "the live files stay");
    let expected = json_rows(rows.iter().map(|(p, k, v)| (p.to_string(), *k, v.clone())));
    assert_eq!(table_rows(&table).await, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blob_files_of_data_evolution_tables_go_to_external_paths() {
    let d = dirs();
    let schema = format!(
        r#"{{"fields": [{{"name": "id", "type": "INT"}}, {{"name": "data", "type": "BLOB"}}],
        "options": {{"bucket": "-1", "row-tracking.enabled": "true",
        "data-evolution.enabled": "true", {}}}}}"#,
        external_options(&d)
    );
    std::fs::create_dir_all(d.table.parent().unwrap()).unwrap();
    let table = Table::create(d.table.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap();
    let b = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", arrow_schema::DataType::Int32, true),
            Field::new("data", arrow_schema::DataType::LargeBinary, true),
        ])),
        vec![
            Arc::new(arrow_array::Int32Array::from(vec![1, 2, 3])),
            Arc::new(arrow_array::LargeBinaryArray::from_iter_values([
                b"one".as_slice(),
                b"two two",
                &[7u8; 300],
            ])),
        ],
    )
    .unwrap();
    write_commit(&table, &b).await;
    let on_disk = files_on_disk(&d);
    assert!(
        on_disk
            .iter()
            .any(|f| f.to_string_lossy().ends_with(".blob")),
        "{on_disk:?}"
    );
    let files = table.scan().data_files().await.unwrap().unwrap();
    assert_eq!(files.entries.len(), 2, "a data file and a .blob file");
    let live: BTreeSet<PathBuf> = files
        .entries
        .iter()
        .map(|e| local_of(e.file.external_path.as_deref().unwrap()))
        .collect();
    assert_eq!(on_disk, live);
    let ours = table_rows(&table).await;
    assert_eq!(ours.len(), 3);
    assert!(ours[0].contains(&hex_of(b"one")), "{ours:?}");
    if let Some(java) = java_rows(&d.table) {
        assert_eq!(java, ours, "Java 2.0.0 reads otherwise");
        println!("blob table: Java 2.0.0 reads our 3 rows");
    }
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The live files' external paths of an `entropy-inject` table; asserts each is
/// `<root>/p=<p>/bucket-<n>/<entropy dirs of the name>/<name>` under one of the roots (the
/// entropy directories are pinned against Java's in the core's unit tests) and exists.
async fn live_entropy_paths(table: &Table, d: &Dirs) -> BTreeSet<PathBuf> {
    let files = table.scan().data_files().await.unwrap().unwrap();
    let mut out = BTreeSet::new();
    for e in &files.entries {
        let name = &e.file.file_name;
        let ext = e
            .file
            .external_path
            .as_deref()
            .unwrap_or_else(|| panic!("{name} has no external path"));
        let local = local_of(ext);
        let root = d
            .ext
            .iter()
            .find(|root| local.starts_with(root))
            .unwrap_or_else(|| panic!("{ext} is not under an external root"));
        let rel = local
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let parts: Vec<&str> = rel.split('/').collect();
        assert_eq!(parts.len(), 7, "{rel}");
        assert!(parts[0].starts_with("p="), "{rel}: no partition directory");
        assert_eq!(parts[1], format!("bucket-{}", e.bucket), "{rel}");
        assert_eq!(parts[2..6].join("/"), entropy_dirs(name), "{rel}");
        assert_eq!(parts[6], name.as_str(), "{rel}");
        assert!(local.is_file(), "{ext} does not exist");
        out.insert(local);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entropy_inject_writes_compacts_cleans_orphans_and_expires() {
    // A primary-key table whose writers roll several files per bucket (Java checks the
    // size every 1,000 records: about 1,250 rows per bucket give two files each).
    let d = dirs();
    let table = pkv_table_with(
        &d,
        true,
        r#""bucket": "2", "target-file-size": "2 kb""#,
        "entropy-inject",
    )
    .await;
    let mut model: BTreeMap<(String, i64), String> = BTreeMap::new();
    let inserts: Vec<(&str, i64, String)> = ["a", "b"]
        .iter()
        .flat_map(|p| (0..2_500).map(move |k| (*p, k, format!("{p}-first-{k}"))))
        .collect();
    write_commit(&table, &rows_batch(&inserts, None)).await;
    let updates: Vec<(&str, i64, String)> = (0..50).map(|k| ("a", k, format!("upd-{k}"))).collect();
    write_commit(&table, &rows_batch(&updates, None)).await;
    for (p, k, v) in inserts.iter().chain(&updates) {
        model.insert((p.to_string(), *k), v.clone());
    }
    let deletes: Vec<(&str, i64, String)> = (100..120).map(|k| ("b", k, String::new())).collect();
    let kinds = vec!["-D"; deletes.len()];
    write_commit(&table, &rows_batch(&deletes, Some(&kinds))).await;
    for (p, k, _) in &deletes {
        model.remove(&(p.to_string(), *k));
    }
    let expected = json_rows(model.iter().map(|((p, k), v)| (p.clone(), *k, v.clone())));
    let live = live_entropy_paths(&table, &d).await;
    assert_both_roots_used(&live, &d);
    assert_eq!(files_on_disk(&d), live);
    assert_eq!(table_rows(&table).await, expected);

    let report = table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(report.snapshot.is_some());
    let compacted = live_entropy_paths(&table, &d).await;
    assert!(compacted.difference(&live).count() >= 2, "{compacted:?}");
    assert_eq!(table_rows(&table).await, expected);

    // Orphans below entropy directories are found; a file in a directory that is not
    // Java's entropy layout is not a candidate.
    let strays = [
        d.ext[0].join("p=a/bucket-0/0000/1111/0000/11110000/data-stray-0.parquet"),
        d.ext[1].join("p=b/bucket-1/1010/1010/1010/10101010/data-stray-1.parquet"),
        d.ext[1].join("p=b/bucket-1/data-stray-2.parquet"),
    ];
    let kept = d.ext[0].join("p=a/bucket-0/12/data-kept.parquet");
    for f in strays.iter().chain([&kept]) {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, b"not parquet").unwrap();
    }
    let out = table
        .remove_orphans_before(now() + 60_000, false)
        .await
        .unwrap();
    let removed: BTreeSet<PathBuf> = out
        .removed
        .iter()
        .filter(|f| f.path.starts_with("file:"))
        .map(|f| local_of(&f.path))
        .collect();
    assert_eq!(
        removed,
        strays.iter().cloned().collect(),
        "{:?}",
        out.removed
    );
    assert!(kept.exists());
    std::fs::remove_file(&kept).unwrap();
    let everything: BTreeSet<PathBuf> = live.union(&compacted).cloned().collect();
    assert_eq!(files_on_disk(&d), everything, "the used files stay");

    let out = table
        .expire_with(expire_all_but_latest(), now())
        .await
        .unwrap();
    assert!(!out.expired_snapshots.is_empty());
    assert_eq!(files_on_disk(&d), compacted, "only the live files remain");
    assert_eq!(table_rows(&table).await, expected);
    check_other_readers(&d, &expected, "entropy-inject primary-key table");

    // An append table writing one file per partition in each of six commits (enough for a
    // compaction): as in Java, each new
    // writer's first file goes to the second root (the provider starts at the first and
    // advances before choosing), also the compaction's.
    let d = dirs();
    let table = pkv_table_with(&d, false, r#""bucket": "-1""#, "entropy-inject").await;
    let mut model: Vec<(String, i64, String)> = Vec::new();
    for commit in 0..6 {
        let rows: Vec<(&str, i64, String)> = ["x", "y"]
            .iter()
            .flat_map(|p| (0..20).map(move |k| (*p, commit * 100 + k, format!("{p}-{commit}-{k}"))))
            .collect();
        write_commit(&table, &rows_batch(&rows, None)).await;
        model.extend(rows.iter().map(|(p, k, v)| (p.to_string(), *k, v.clone())));
    }
    let expected = json_rows(model);
    let live = live_entropy_paths(&table, &d).await;
    assert_eq!(live.len(), 12);
    assert!(live.iter().all(|f| f.starts_with(&d.ext[1])), "{live:?}");
    let report = table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(report.snapshot.is_some());
    let compacted = live_entropy_paths(&table, &d).await;
    assert_eq!(compacted.len(), 2, "{compacted:?}");
    assert!(
        compacted.iter().all(|f| f.starts_with(&d.ext[1])),
        "{compacted:?}"
    );
    assert_eq!(table_rows(&table).await, expected);
    check_other_readers(&d, &expected, "entropy-inject append table");
}
