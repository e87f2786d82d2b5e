//! Primary-key compaction (`Table::compact`, `Table::plan_compaction`, the `compact` and
//! `plan-compaction` commands): every primary-key table of the corpus (copied to a temp
//! dir) reads its expected rows after a full and after a normal compaction, and Java Paimon
//! 2.0.0 (java-check's `read`, when installed: `oracle::java_check`) reads what we read;
//! write / compact sequences; a compaction racing writers.

use crate::common::table_rows;
use crate::copy_dir;
use crate::oracle::{java_rows, sorted_strings};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn expected_rows(name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(corpus().join(format!("{name}.expected.json"))).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    sorted_strings(v["rows"].as_array().unwrap())
}

/// The primary-key tables of the corpus whose compaction is supported (`pk_dv` and
/// `pk_first_row_dv_mor` are compacted in `pk_dv.rs`: the first reads empty before, the
/// second is refused by Java).
const SUPPORTED: &[&str] = &[
    "evo_pk",
    "pk_agg_merge_map",
    "pk_aggregation",
    "pk_changelog_input",
    "pk_dedup",
    "pk_dedup_avro",
    "pk_dedup_orc",
    "pk_dedup_partitioned",
    "pk_dedup_seqfield",
    "pk_dv_mor",
    "pk_dynamic_bucket",
    "pk_first_row",
    "pk_partial_update",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_primary_key_tables_read_the_same_after_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let mut java_checked = 0;
    for full in [true, false] {
        for name in SUPPORTED {
            let dir = tmp
                .path()
                .join(if full { "full" } else { "normal" })
                .join(name);
            copy_dir(&corpus().join("corpus.db").join(name), &dir);
            let table = Table::open(dir.to_str().unwrap()).await.unwrap();
            let report = table
                .compact(CompactOptions {
                    full,
                    ..Default::default()
                })
                .await
                .unwrap_or_else(|e| panic!("{name} (full {full}): {e}"));
            let table = Table::open(dir.to_str().unwrap()).await.unwrap();
            let got = table_rows(&table).await;
            if *name == "pk_first_row" {
                // The pypaimon table is all level 0, which batch reads of first-row tables
                // skip (its expected rows are empty); compaction moves every key up.
                assert!(
                    report.snapshot.is_some(),
                    "{name}: level 0 must be compacted"
                );
                let files = table.scan().data_files().await.unwrap().unwrap();
                assert!(files.entries.iter().all(|e| e.file.level > 0), "{name}");
                assert_eq!(got.len(), 13, "{name} (full {full})");
            } else {
                assert_eq!(got, expected_rows(name), "{name} (full {full})");
            }
            if full {
                // Every bucket ends as one max-level run.
                let files = table.scan().data_files().await.unwrap().unwrap();
                let mut runs: BTreeMap<(Vec<u8>, i32), Vec<i32>> = BTreeMap::new();
                for e in &files.entries {
                    runs.entry((e.partition.to_serialized(), e.bucket))
                        .or_default()
                        .push(e.file.level);
                }
                for levels in runs.values() {
                    assert!(levels.iter().all(|l| *l == 5), "{name}: {levels:?}");
                }
                assert!(report.snapshot.is_some(), "{name}");
                let snapshot = table.latest_snapshot().await.unwrap().unwrap();
                assert_eq!(
                    snapshot.commit_kind,
                    paimon_kernel::spec::snapshot::CommitKind::Compact,
                    "{name}"
                );
            }
            if (full || report.snapshot.is_some())
                && let Some(java) = java_rows(&dir)
            {
                assert_eq!(java, got, "{name} (full {full}): Java reads otherwise");
                java_checked += 1;
            }
        }
    }
    eprintln!("compared {java_checked} compacted tables with Java Paimon's read");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_primary_key_tables_say_so() {
    // Append tables are planned by the append coordinator (tasks without output level); a
    // plan only reads, so the repo's table is safe.
    let plan = Table::open(corpus().join("corpus.db/append_parquet").to_str().unwrap())
        .await
        .unwrap()
        .plan_compaction(true)
        .await
        .unwrap();
    assert!(plan.snapshot.is_some());
    assert!(
        plan.units.iter().all(|u| u.output_level.is_none()),
        "{plan:?}"
    );
}

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

/// Rows `k, v = <tag><k>, n = k` for `keys`, with optional row kinds.
fn kv_batch(keys: &[i64], tag: &str, kinds: Option<&[&str]>) -> RecordBatch {
    let mut cols: Vec<(&str, ArrayRef)> = vec![
        ("k", Arc::new(Int64Array::from(keys.to_vec()))),
        (
            "v",
            Arc::new(StringArray::from_iter_values(
                keys.iter().map(|k| format!("{tag}{k}")),
            )),
        ),
        (
            "n",
            Arc::new(Int32Array::from_iter_values(keys.iter().map(|k| *k as i32))),
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

fn model_rows(model: &BTreeMap<i64, String>) -> Vec<String> {
    let rows: Vec<Value> = model
        .iter()
        .map(|(k, v)| serde_json::json!({"k": k, "v": v, "n": *k as i32}))
        .collect();
    sorted_strings(&rows)
}

fn schema(engine: &str, extra: &str) -> String {
    schema_with_buckets(engine, 2, extra)
}

fn schema_with_buckets(engine: &str, buckets: i32, extra: &str) -> String {
    format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}},
        {{"name": "n", "type": "INT"}}], "primaryKeys": ["k"],
        "options": {{"bucket": "{buckets}", "merge-engine": "{engine}"{extra}}}}}"#
    )
}

async fn levels(table: &Table) -> BTreeMap<i32, usize> {
    let mut out = BTreeMap::new();
    for e in table.scan().data_files().await.unwrap().unwrap().entries {
        *out.entry(e.file.level).or_insert(0) += 1;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_compact_write_compact_deduplicate() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    // Trigger 2: two runs already compact by run count.
    let table = Table::create(
        loc.to_str().unwrap(),
        schema(
            "deduplicate",
            r#", "num-sorted-run.compaction-trigger": "2""#,
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut model = BTreeMap::new();
    let all: Vec<i64> = (0..40).collect();
    write_commit(&table, &kv_batch(&all, "a", None)).await;
    model.extend(all.iter().map(|k| (*k, format!("a{k}"))));
    // Updates and deletes.
    let keys: Vec<i64> = (0..10).chain(30..40).collect();
    let kinds: Vec<&str> = (0..10)
        .map(|_| "+U")
        .chain((30..40).map(|_| "-D"))
        .collect();
    write_commit(&table, &kv_batch(&keys, "b", Some(&kinds))).await;
    for k in 0..10 {
        model.insert(k, format!("b{k}"));
    }
    for k in 30..40 {
        model.remove(&k);
    }
    // A full plan lists both buckets; num-levels defaults to trigger + 1 = 3.
    let plan = table.plan_compaction(true).await.unwrap();
    assert_eq!(plan.units.len(), 2);
    assert!(plan.units.iter().all(|u| u.output_level == Some(2)));
    // Two level-0 runs per bucket, the newer one smaller: no size amplification, no size
    // ratio pick, not more runs than the trigger: a normal compaction has nothing to do.
    assert!(table.plan_compaction(false).await.unwrap().units.is_empty());
    let more: Vec<i64> = (40..46).collect();
    write_commit(&table, &kv_batch(&more, "n", None)).await;
    model.extend(more.iter().map(|k| (*k, format!("n{k}"))));
    let report = table.compact(CompactOptions::default()).await.unwrap();
    // Three runs > trigger 2: run-count pick, extended by size ratio to every run, so the
    // output is the max level and deletes are dropped.
    assert!(report.snapshot.is_some());
    assert_eq!(report.buckets.len(), 2);
    assert_eq!(table_rows(&table).await, model_rows(&model));
    assert_eq!(
        levels(&table).await.keys().copied().collect::<Vec<_>>(),
        vec![2]
    );
    let compacted = table.scan().data_files().await.unwrap().unwrap();
    // Deletes were dropped at the max level: every row of the files is a live key.
    let file_rows: i64 = compacted.entries.iter().map(|e| e.file.row_count).sum();
    assert_eq!(file_rows, model.len() as i64);
    assert!(
        compacted
            .entries
            .iter()
            .all(|e| e.file.delete_row_count == Some(0))
    );

    // More writes, a delete of a compacted key, then another compaction.
    let keys: Vec<i64> = (5..15).chain([20]).collect();
    let kinds: Vec<&str> = (5..15).map(|_| "+U").chain(["-D"]).collect();
    write_commit(&table, &kv_batch(&keys, "c", Some(&kinds))).await;
    for k in 5..15 {
        model.insert(k, format!("c{k}"));
    }
    model.remove(&20);
    assert_eq!(table_rows(&table).await, model_rows(&model));
    let report = table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(report.snapshot.is_some());
    assert_eq!(table_rows(&table).await, model_rows(&model));
    assert_eq!(
        levels(&table).await.keys().copied().collect::<Vec<_>>(),
        vec![2]
    );
    // A full compaction of one max-level run per bucket has nothing to do.
    let report = table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(report.snapshot, None);
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model_rows(&model));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_compaction_keeps_deletes_above_older_levels() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(
        loc.to_str().unwrap(),
        schema_with_buckets("deduplicate", 1, "").as_bytes(),
    )
    .await
    .unwrap();
    let mut model = BTreeMap::new();
    // A large max-level run (20000 rows) under small level-0 runs.
    let all: Vec<i64> = (0..20_000).collect();
    write_commit(&table, &kv_batch(&all, "a", None)).await;
    model.extend(all.iter().map(|k| (*k, format!("a{k}"))));
    table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    // A small delete and update: five small level-0 runs above a large max-level run.
    for i in 0..5 {
        let k = [i * 2, i * 2 + 1];
        write_commit(&table, &kv_batch(&k, "d", Some(&["-D", "+U"]))).await;
        model.remove(&k[0]);
        model.insert(k[1], format!("d{}", k[1]));
    }
    let report = table.compact(CompactOptions::default()).await.unwrap();
    // Six runs > trigger 5: the level-0 runs are merged, not into the max level (size
    // ratio stops before the large run), so their deletes are kept.
    assert_eq!(report.buckets.len(), 1);
    let b = &report.buckets[0];
    assert!(b.output_level > 0 && b.output_level < 5, "{b:?}");
    assert_eq!(b.files_in, 5);
    let files = table.scan().data_files().await.unwrap().unwrap();
    let out: Vec<_> = files
        .entries
        .iter()
        .filter(|e| e.file.level == b.output_level)
        .collect();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].file.delete_row_count, Some(5));
    assert_eq!(table_rows(&table).await, model_rows(&model));
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model_rows(&model));
    }
}

/// Σ rows of the live files and whether every file is above level 0.
async fn file_rows_above_level0(table: &Table) -> (i64, bool) {
    let files = table.scan().data_files().await.unwrap().unwrap();
    (
        files.entries.iter().map(|e| e.file.row_count).sum(),
        files.entries.iter().all(|e| e.file.level > 0),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_row_writes_compact_level0_and_drop_keys_of_higher_levels() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(loc.to_str().unwrap(), schema("first-row", "").as_bytes())
        .await
        .unwrap();
    let mut model = BTreeMap::new();
    // Batch reads of first-row tables skip level 0, so a write compacts its level-0 files
    // before the commit (an APPEND and a COMPACT snapshot), as Java's batch writers do.
    for (tag, keys) in [("a", 0..200), ("b", 100..300), ("c", 290..310)] {
        let keys: Vec<i64> = keys.collect();
        write_commit(&table, &kv_batch(&keys, tag, None)).await;
        for k in &keys {
            model.entry(*k).or_insert(format!("{tag}{k}"));
        }
        assert_eq!(table_rows(&table).await, model_rows(&model), "after {tag}");
        // Keys of higher levels were dropped from each compaction's output: no key is in
        // two files, nothing is left at level 0.
        assert_eq!(
            file_rows_above_level0(&table).await,
            (model.len() as i64, true),
            "after {tag}"
        );
    }
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    assert_eq!(snapshot.id, 6);
    assert_eq!(
        snapshot.commit_kind,
        paimon_kernel::spec::snapshot::CommitKind::Compact
    );
    // Nothing left for a normal compaction; a full one merges every level into the max.
    assert!(table.plan_compaction(false).await.unwrap().units.is_empty());
    table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(table_rows(&table).await, model_rows(&model));
    assert_eq!(
        levels(&table).await.keys().copied().collect::<Vec<_>>(),
        vec![5]
    );
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model_rows(&model));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregation_and_partial_update_compact_through_their_merge() {
    for engine in ["aggregation", "partial-update"] {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().join("t");
        let extra = if engine == "aggregation" {
            r#", "fields.n.aggregate-function": "sum""#
        } else {
            ""
        };
        let table = Table::create(loc.to_str().unwrap(), schema(engine, extra).as_bytes())
            .await
            .unwrap();
        let keys: Vec<i64> = (0..20).collect();
        for round in 0..3 {
            write_commit(&table, &kv_batch(&keys, &format!("r{round}-"), None)).await;
        }
        let before = table_rows(&table).await;
        table
            .compact(CompactOptions {
                full: true,
                ..Default::default()
            })
            .await
            .unwrap();
        let after = table_rows(&table).await;
        assert_eq!(before, after, "{engine}");
        // Sums: n = 3k for aggregation; partial update keeps the last non-null values.
        let first: Value = serde_json::from_str(&after[1]).unwrap();
        if engine == "aggregation" {
            assert_eq!(first["n"], 3, "{after:?}");
        } else {
            assert_eq!(first["v"], "r2-1", "{after:?}");
        }
        // The merged rows are written once; a new write merges on top of them.
        write_commit(&table, &kv_batch(&keys, "x", None)).await;
        table
            .compact(CompactOptions {
                full: true,
                ..Default::default()
            })
            .await
            .unwrap();
        let last: Value = serde_json::from_str(&table_rows(&table).await[1]).unwrap();
        if engine == "aggregation" {
            assert_eq!(last["n"], 4);
        } else {
            assert_eq!(last["v"], "x1");
        }
        if let Some(java) = java_rows(&loc) {
            assert_eq!(java, table_rows(&table).await, "{engine}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_racing_writers_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(
        loc.to_str().unwrap(),
        schema(
            "deduplicate",
            r#", "num-sorted-run.compaction-trigger": "2""#,
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut model = BTreeMap::new();
    for round in 0..6i64 {
        let keys: Vec<i64> = (round * 5..round * 5 + 20).collect();
        let tag = format!("w{round}-");
        for k in &keys {
            model.insert(*k, format!("{tag}{k}"));
        }
        let writer = {
            let table = table.clone();
            let b = kv_batch(&keys, &tag, None);
            tokio::spawn(async move { write_commit(&table, &b).await })
        };
        let compactors: Vec<_> = (0..2)
            .map(|i| {
                let table = table.clone();
                tokio::spawn(async move {
                    table
                        .compact(CompactOptions {
                            full: i == 0,
                            ..Default::default()
                        })
                        .await
                })
            })
            .collect();
        writer.await.unwrap();
        for c in compactors {
            match c.await.unwrap() {
                Ok(_) => {}
                Err(e) => assert!(
                    matches!(
                        e.as_kernel(),
                        Some(paimon_kernel::Error::CommitConflict { .. })
                    ),
                    "a racing compaction may only fail with a commit conflict: {e}"
                ),
            }
        }
        assert_eq!(
            table_rows(&table).await,
            model_rows(&model),
            "round {round}"
        );
    }
    // No output of a failed compaction is left behind: every data file on disk is named
    // by some snapshot.
    let latest = table.latest_snapshot().await.unwrap().unwrap().id;
    let mut named = std::collections::BTreeSet::new();
    for id in 1..=latest {
        let files = table
            .scan()
            .with_snapshot_id(id)
            .data_files()
            .await
            .unwrap()
            .unwrap();
        named.extend(files.entries.into_iter().map(|e| e.file.file_name));
    }
    for bucket in ["bucket-0", "bucket-1"] {
        for f in std::fs::read_dir(loc.join(bucket)).unwrap() {
            let name = f.unwrap().file_name().to_string_lossy().into_owned();
            assert!(named.contains(&name), "orphan {bucket}/{name}");
        }
    }
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model_rows(&model));
    }
}

/// Deletion-vector tables: writers (whose level-0 compaction marks rows above it) race with
/// normal and full compactions. A compaction or a writer's level-0 compaction may only fail
/// with a conflict (a writer's then says `PartlyPublished`, its rows committed at level 0);
/// after a final compaction every round reads the model, by us and by Java, and every vector
/// belongs to a live file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_vector_compaction_racing_writers_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(
        loc.to_str().unwrap(),
        schema(
            "deduplicate",
            r#", "deletion-vectors.enabled": "true", "num-sorted-run.compaction-trigger": "3""#,
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut model = BTreeMap::new();
    let mut partly = 0;
    for round in 0..6i64 {
        let keys: Vec<i64> = (round * 7..round * 7 + 20).collect();
        let tag = format!("w{round}-");
        for k in &keys {
            model.insert(*k, format!("{tag}{k}"));
        }
        let writer = {
            let table = table.clone();
            let b = kv_batch(&keys, &tag, None);
            tokio::spawn(async move {
                let mut w = table.new_write().await.unwrap();
                w.write(&b).await.unwrap();
                let messages = w.prepare_commit().await.unwrap();
                table.new_commit(None).commit(messages).await
            })
        };
        let compactors: Vec<_> = (0..2)
            .map(|i| {
                let table = table.clone();
                tokio::spawn(async move {
                    table
                        .compact(CompactOptions {
                            full: i == 0,
                            ..Default::default()
                        })
                        .await
                })
            })
            .collect();
        if let Err(e) = writer.await.unwrap() {
            assert!(
                matches!(
                    e.as_kernel(),
                    Some(paimon_kernel::Error::PartlyPublished { .. })
                ),
                "a writer may only lose its level-0 compaction: {e}"
            );
            partly += 1;
        }
        for c in compactors {
            if let Err(e) = c.await.unwrap() {
                assert!(
                    matches!(
                        e.as_kernel(),
                        Some(paimon_kernel::Error::CommitConflict { .. })
                    ),
                    "a racing compaction may only fail with a commit conflict: {e}"
                );
            }
        }
        // Level 0 is invisible to batch reads of vector tables: compact what a lost race
        // left there.
        table.compact(CompactOptions::default()).await.unwrap();
        assert!(!levels(&table).await.contains_key(&0), "round {round}");
        assert_eq!(
            table_rows(&table).await,
            model_rows(&model),
            "round {round}"
        );
        if let Some(java) = java_rows(&loc) {
            assert_eq!(java, model_rows(&model), "round {round}: Java");
        }
    }
    // Every vector of the latest index belongs to a live data file.
    let live: std::collections::BTreeSet<String> = table
        .scan()
        .data_files()
        .await
        .unwrap()
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.file.file_name)
        .collect();
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    if let Some(name) = &snapshot.index_manifest {
        let path = loc.join("manifest").join(name);
        for e in paimon_kernel::spec::decode_index_manifest(
            &std::fs::read(&path).unwrap(),
            path.to_str().unwrap(),
        )
        .unwrap()
        {
            for r in e.index_file.dv_ranges.iter().flatten() {
                assert!(live.contains(&r.data_file_name), "{r:?}");
            }
        }
    }
    eprintln!("writers that lost their level-0 compaction: {partly}");
}

#[test]
fn cli_plan_and_compact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pk_dedup_partitioned");
    copy_dir(&corpus().join("corpus.db/pk_dedup_partitioned"), &dir);
    let bin = env!("CARGO_BIN_EXE_paimon-kernel");
    let out = Command::new(bin)
        .args(["plan-compaction", dir.to_str().unwrap(), "--full"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let units = plan["units"].as_array().unwrap();
    assert!(!units.is_empty());
    assert!(units.iter().all(|u| u["output_level"] == 5));
    let partition = units[0]["partition"].as_object().unwrap();
    let spec: Vec<String> = partition
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    let out = Command::new(bin)
        .args([
            "compact",
            dir.to_str().unwrap(),
            "--full",
            "--partition",
            &spec.join(","),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let buckets = report["buckets"].as_array().unwrap();
    let in_partition = units
        .iter()
        .filter(|u| u["partition"] == units[0]["partition"]);
    assert_eq!(buckets.len(), in_partition.count());
    assert!(
        buckets
            .iter()
            .all(|b| b["partition"] == units[0]["partition"])
    );
    // Other partitions are still planned, this one is not.
    let out = Command::new(bin)
        .args(["plan-compaction", dir.to_str().unwrap(), "--full"])
        .output()
        .unwrap();
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        plan["units"].as_array().unwrap().len(),
        units.len() - buckets.len()
    );
    let out = Command::new(bin)
        .args(["scan", dir.to_str().unwrap(), "--format", "count"])
        .output()
        .unwrap();
    assert!(out.status.success());
}
