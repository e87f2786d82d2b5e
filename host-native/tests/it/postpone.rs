//! Compaction of postpone-bucket primary-key tables (`bucket = -2`): the rows written to
//! `bucket-postpone` (invisible to batch reads) move into real buckets, replayed in write
//! order, and read as a fixed-bucket table written in that order would. Checked against a
//! model and Java Paimon 2.0.0 (see [`crate::oracle`]) on the corpus table `pk_postpone`
//! (real buckets written by pypaimon's fixed-bucket postpone writer, plus postpone files) and
//! on tables written here with the deduplicate, partial-update and first-row engines.

use crate::copy_dir;
use crate::oracle::{java_rows, sorted_strings};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::canonical;
use paimon_kernel::spec::snapshot::CommitKind;
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::{Value, json};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

async fn rows(loc: &Path) -> Vec<String> {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let batches = table.scan().to_batches().await.unwrap();
    sorted_strings(&canonical::batches_rows(&batches).unwrap())
}

async fn compact(loc: &Path) -> paimon_native::compact::CompactReport {
    Table::open(loc.to_str().unwrap())
        .await
        .unwrap()
        .compact(CompactOptions::default())
        .await
        .unwrap()
}

/// (partition bytes, bucket, level, total buckets) of every live file.
async fn live(loc: &Path) -> Vec<(Vec<u8>, i32, i32, i32)> {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let files = table.scan().data_files().await.unwrap().unwrap();
    files
        .entries
        .iter()
        .map(|e| {
            (
                e.partition.to_serialized(),
                e.bucket,
                e.file.level,
                e.total_buckets,
            )
        })
        .collect()
}

/// Every data file under the table's real bucket directories is live in some snapshot: the
/// compactions left nothing behind (new files they consumed are deleted).
async fn no_stray_files(loc: &Path) {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let latest = table.latest_snapshot().await.unwrap().unwrap().id;
    let mut known = BTreeSet::new();
    for id in 1..=latest {
        let files = table
            .scan()
            .with_snapshot_id(id)
            .data_files()
            .await
            .unwrap()
            .unwrap();
        known.extend(files.entries.iter().map(|e| e.file.file_name.clone()));
    }
    let mut stack = vec![loc.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let in_bucket = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("bucket-"));
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if in_bucket {
                assert!(known.contains(&name), "{name} is in no snapshot");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_postpone_table_moves_its_postponed_rows_into_real_buckets() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("pk_postpone");
    copy_dir(&corpus().join("corpus.db/pk_postpone"), &loc);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(corpus().join("pk_postpone.expected.json")).unwrap(),
    )
    .unwrap();
    // The model: the visible rows, then commit 3's rows (make_corpus.py: keys
    // 1, 4, 7, … below 4 × rows per commit, `v = c2-postponed-<k>`), which win.
    let mut model: BTreeMap<i64, String> = expected["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["k"].as_i64().unwrap(),
                r["v"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let per_commit = expected["snapshots"][0]["deltaRecordCount"]
        .as_i64()
        .unwrap();
    for k in (1..4 * per_commit).step_by(3) {
        model.insert(k, format!("c2-postponed-{k}"));
    }
    let model_rows: Vec<String> = sorted_strings(
        &model
            .iter()
            .map(|(k, v)| json!({"k": k, "v": v}))
            .collect::<Vec<_>>(),
    );
    assert_ne!(
        rows(&loc).await,
        model_rows,
        "postponed rows are invisible before"
    );

    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    // The postpone files, and the real buckets' level-0 files (compacted after the replay).
    let plan = table.plan_compaction(false).await.unwrap();
    assert_eq!(plan.units[0].bucket, -2, "{plan:?}");
    assert!(
        plan.units[1..]
            .iter()
            .all(|u| u.bucket >= 0 && u.output_level.is_none())
    );
    let report = compact(&loc).await;
    assert_eq!(report.base_snapshot, Some(3));
    assert_eq!(report.snapshot, Some(4));
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    assert_eq!(snapshot.commit_kind, CommitKind::Compact);
    assert_eq!(rows(&loc).await, model_rows);
    // The partition keeps the 2 buckets its real files were written for.
    for (_, bucket, _, total) in live(&loc).await {
        assert!(bucket >= 0, "no postpone file is left");
        assert_eq!(total, 2);
    }
    no_stray_files(&loc).await;
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model_rows, "Java reads the compacted table");
    }
    // No postpone file is left to move.
    let plan = table.plan_compaction(false).await.unwrap();
    assert!(plan.units.iter().all(|u| u.bucket >= 0), "{plan:?}");
}

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

/// A row `(dt, k, v, n, row kind)`.
type Row<'a> = (&'a str, i64, Option<&'a str>, Option<i32>, &'a str);

async fn write(loc: &Path, rows: &[Row<'_>]) {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let b = batch(vec![
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
    ]);
    let mut w = table.new_write().await.unwrap();
    w.write(&b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

async fn create(loc: &Path, options: &str) {
    let schema = format!(
        r#"{{"fields": [{{"name": "dt", "type": "STRING NOT NULL"}},
        {{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}},
        {{"name": "n", "type": "INT"}}], "partitionKeys": ["dt"], "primaryKeys": ["dt", "k"],
        "options": {{"bucket": "-2", "postpone.batch-write-fixed-bucket": "false"{options}}}}}"#
    );
    Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap();
}

type Model = BTreeMap<(String, i64), (Option<String>, Option<i32>)>;

fn model_rows(model: &Model) -> Vec<String> {
    sorted_strings(
        &model
            .iter()
            .map(|((dt, k), (v, n))| json!({"dt": dt, "k": k, "v": v, "n": n}))
            .collect::<Vec<_>>(),
    )
}

/// Apply `rows` to a deduplicate model.
fn dedup(model: &mut Model, rows: &[Row<'_>]) {
    for (dt, k, v, n, kind) in rows {
        let key = (dt.to_string(), *k);
        if *kind == "-D" || *kind == "-U" {
            model.remove(&key);
        } else {
            model.insert(key, (v.map(str::to_owned), *n));
        }
    }
}

/// Bucket count of each partition's live files (one per partition).
async fn totals(loc: &Path) -> BTreeMap<Vec<u8>, BTreeSet<i32>> {
    let mut out: BTreeMap<Vec<u8>, BTreeSet<i32>> = BTreeMap::new();
    for (p, bucket, _, total) in live(loc).await {
        assert!(bucket >= 0, "no postpone file is left");
        out.entry(p).or_default().insert(total);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deduplicate_postpone_table_reads_as_written_after_each_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    create(
        &loc,
        r#", "postpone.default-bucket-num": "3", "postpone.target-row-num-per-bucket": "4""#,
    )
    .await;
    let mut model = Model::new();
    let values: Vec<String> = (0..40).map(|i| format!("r1-{i}")).collect();
    let round1: Vec<Row> = (0..13)
        .map(|i| {
            (
                "a",
                i,
                Some(values[i as usize].as_str()),
                Some(i as i32),
                "+I",
            )
        })
        .chain((0..3).map(|i| ("b", i, Some("b"), None, "+I")))
        .collect();
    write(&loc, &round1).await;
    dedup(&mut model, &round1);
    // A key written again in a later commit: the later write wins after the replay.
    let again: Vec<Row> = vec![
        ("a", 2, Some("again"), Some(-2), "+I"),
        ("b", 1, None, None, "-D"),
    ];
    write(&loc, &again).await;
    dedup(&mut model, &again);
    assert!(rows(&loc).await.is_empty(), "postponed rows are invisible");

    let report = compact(&loc).await;
    assert!(report.snapshot.is_some());
    assert_eq!(rows(&loc).await, model_rows(&model));
    // New partitions: ceil(rows / target) buckets: a has 14 postponed rows → 4, b 4 → 1.
    let t: Vec<BTreeSet<i32>> = totals(&loc).await.into_values().collect();
    assert_eq!(t, vec![BTreeSet::from([4]), BTreeSet::from([1])]);
    no_stray_files(&loc).await;
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model_rows(&model), "Java after the first compaction");
    }

    // Updates, deletes and a new partition; the known partitions keep their bucket counts.
    let round2: Vec<Row> = (5..11)
        .map(|i| ("a", i, Some("r2"), Some(100 + i as i32), "+U"))
        .chain((0..3).map(|i| ("a", i, None, None, "-D")))
        .chain((0..9).map(|i| ("c", i, Some("c"), Some(i as i32), "+I")))
        .collect();
    write(&loc, &round2).await;
    dedup(&mut model, &round2);
    let round3: Vec<Row> = vec![
        ("a", 1, Some("back"), Some(1), "+I"),
        ("c", 8, None, None, "-D"),
    ];
    write(&loc, &round3).await;
    dedup(&mut model, &round3);
    compact(&loc).await;
    assert_eq!(rows(&loc).await, model_rows(&model));
    let t: Vec<BTreeSet<i32>> = totals(&loc).await.into_values().collect();
    assert_eq!(
        t,
        vec![
            BTreeSet::from([4]),
            BTreeSet::from([1]),
            BTreeSet::from([3])
        ]
    );
    no_stray_files(&loc).await;
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model_rows(&model), "Java after the second compaction");
    }
    // Sequence numbers continue per bucket: every key's newest row wins also after a full
    // compaction.
    Table::open(loc.to_str().unwrap())
        .await
        .unwrap()
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(rows(&loc).await, model_rows(&model));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_update_and_first_row_postpone_tables_merge_in_write_order() {
    let tmp = tempfile::tempdir().unwrap();
    // Partial update: the replay merges the commits' columns in write order.
    let loc = tmp.path().join("pu");
    create(&loc, r#", "merge-engine": "partial-update""#).await;
    write(
        &loc,
        &[
            ("a", 1, Some("v1"), None, "+I"),
            ("a", 2, Some("w"), Some(2), "+I"),
        ],
    )
    .await;
    write(
        &loc,
        &[
            ("a", 1, None, Some(10), "+I"),
            ("a", 2, Some("w2"), None, "+I"),
        ],
    )
    .await;
    compact(&loc).await;
    write(&loc, &[("a", 1, Some("v3"), None, "+I")]).await;
    compact(&loc).await;
    let want = sorted_strings(&[
        json!({"dt": "a", "k": 1, "v": "v3", "n": 10}),
        json!({"dt": "a", "k": 2, "v": "w2", "n": 2}),
    ]);
    assert_eq!(rows(&loc).await, want);
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, want, "Java, partial-update");
    }

    // First row: the first write of a key wins, also against a key already compacted into
    // a real bucket (level 0 is compacted up with lookup, as Java's first-row writers do).
    let loc = tmp.path().join("fr");
    create(&loc, r#", "merge-engine": "first-row""#).await;
    write(&loc, &[("a", 1, Some("first"), Some(1), "+I")]).await;
    write(
        &loc,
        &[
            ("a", 1, Some("second"), Some(2), "+I"),
            ("a", 2, Some("x"), None, "+I"),
        ],
    )
    .await;
    compact(&loc).await;
    write(
        &loc,
        &[
            ("a", 2, Some("late"), None, "+I"),
            ("a", 3, Some("y"), Some(3), "+I"),
        ],
    )
    .await;
    compact(&loc).await;
    let want = sorted_strings(&[
        json!({"dt": "a", "k": 1, "v": "first", "n": 1}),
        json!({"dt": "a", "k": 2, "v": "x", "n": null}),
        json!({"dt": "a", "k": 3, "v": "y", "n": 3}),
    ]);
    assert_eq!(rows(&loc).await, want);
    assert!(
        live(&loc).await.iter().all(|(_, _, level, _)| *level > 0),
        "first-row batch reads skip level 0: none is left"
    );
    no_stray_files(&loc).await;
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, want, "Java, first-row");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_vector_postpone_table_compacts_with_its_vectors() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("dv");
    create(
        &loc,
        r#", "deletion-vectors.enabled": "true", "postpone.default-bucket-num": "2""#,
    )
    .await;
    let mut model = Model::new();
    let values: Vec<String> = (0..60).map(|i| format!("v{i}")).collect();
    let round1: Vec<Row> = (0..60)
        .map(|i| {
            (
                "a",
                i,
                Some(values[i as usize].as_str()),
                Some(i as i32),
                "+I",
            )
        })
        .collect();
    write(&loc, &round1).await;
    dedup(&mut model, &round1);
    compact(&loc).await;
    assert_eq!(rows(&loc).await, model_rows(&model));
    let round2: Vec<Row> = (10..20)
        .map(|i| ("a", i, Some("new"), None, "+U"))
        .chain((40..45).map(|i| ("a", i, None, None, "-D")))
        .collect();
    write(&loc, &round2).await;
    dedup(&mut model, &round2);
    compact(&loc).await;
    assert_eq!(rows(&loc).await, model_rows(&model));
    // Level 0 is compacted up (batch reads of deletion-vector tables skip it) and the
    // replaced rows above it are marked in vectors.
    assert!(
        live(&loc)
            .await
            .iter()
            .all(|(_, b, level, _)| *b >= 0 && *level > 0)
    );
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    assert!(snapshot.index_manifest.is_some(), "vectors were written");
    no_stray_files(&loc).await;
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model_rows(&model), "Java, deletion vectors");
    }
}
