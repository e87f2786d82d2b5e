//! Writing primary-key tables with deletion vectors (`deletion-vectors.enabled`): every
//! commit compacts level 0 of the buckets it touched up, as Java's lookup compaction does
//! (a key's older row in a level above the output is marked in the bucket's deletion
//! vectors), so batch reads, which skip level 0 and apply vectors without merging, see the
//! merged rows: no level-0 file stays, and the rows of the files above level 0 minus their
//! vectors are exactly the live keys. Checked against a model, Java Paimon 2.0.0
//! (java-check's `read`, when installed: `oracle::java_check`) and
//! pypaimon (`~/.cache/paimon-kernel/venv`, when present; `PAIMON_PYTHON` names another
//! interpreter), on new tables, on a table holding Java-style deletion vectors (higher
//! levels plus vectors over older files) and on the corpus tables `pk_dv` and
//! `pk_first_row_dv_mor`.

use crate::copy_dir;
use crate::oracle::{java_rows, pypaimon_rows, sorted_strings};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::canonical;
use paimon_kernel::format::deletion_vector::{DeletionVector, encode_deletion_vector_index};
use paimon_kernel::spec::{FileKind, IndexFileMeta, decode_index_manifest};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

async fn rows_at(loc: &Path) -> Vec<String> {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let batches = table.scan().to_batches().await.unwrap();
    sorted_strings(&canonical::batches_rows(&batches).unwrap())
}

/// Ours, Java's and pypaimon's reads of `loc` all equal `want`; returns how many external
/// readers checked.
async fn assert_reads(loc: &Path, want: &[String], what: &str) -> usize {
    assert_reads_with(loc, want, what, true).await
}

/// [`assert_reads`], Java's read only when `java` (Java refuses some tables outright).
async fn assert_reads_with(loc: &Path, want: &[String], what: &str, java: bool) -> usize {
    assert_eq!(rows_at(loc).await, want, "{what}: our read");
    let mut checked = 0;
    if let Some(java) = java.then(|| java_rows(loc)).flatten() {
        assert_eq!(java, want, "{what}: Java 2.0.0 reads otherwise");
        checked += 1;
    }
    if let Some(py) = pypaimon_rows(loc) {
        // The corpus encoding of pypaimon's rows and serde's agree on these types; compare
        // parsed values to be independent of key order.
        let parse = |v: &[String]| -> Vec<Value> {
            let mut out: Vec<Value> = v.iter().map(|s| serde_json::from_str(s).unwrap()).collect();
            out.sort_by_key(Value::to_string);
            out
        };
        assert_eq!(parse(&py), parse(want), "{what}: pypaimon reads otherwise");
        checked += 1;
    }
    checked
}

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

/// One input row: `k`, `v`, `n`, row kind (`+I`, `-D`, ...).
type Row<'a> = (i64, Option<&'a str>, Option<i32>, &'a str);

/// Rows `k, v, n` with row kinds.
fn kv_batch(rows: &[Row<'_>]) -> RecordBatch {
    batch(vec![
        (
            "k",
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
        ),
        (
            "v",
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1))),
        ),
        (
            "n",
            Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.2))),
        ),
        (
            "_ROW_KIND",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.3))),
        ),
    ])
}

fn schema(engine: &str, buckets: i32, extra: &str) -> String {
    format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}},
        {{"name": "n", "type": "INT"}}], "primaryKeys": ["k"],
        "options": {{"bucket": "{buckets}", "merge-engine": "{engine}",
        "deletion-vectors.enabled": "true"{extra}}}}}"#
    )
}

async fn write_commit(loc: &Path, b: &RecordBatch) {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let mut w = table.new_write().await.unwrap();
    w.write(b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

/// `n` strings of 200 pseudo-random hex digits (incompressible enough that a file of them
/// is much larger than a file of a few short rows).
fn noise(n: usize) -> Vec<String> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            (0..25)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    format!("{:08x}", x as u32)
                })
                .collect()
        })
        .collect()
}

fn model_rows(model: &BTreeMap<i64, (Option<String>, Option<i32>)>) -> Vec<String> {
    let rows: Vec<Value> = model
        .iter()
        .map(|(k, (v, n))| serde_json::json!({"k": k, "v": v, "n": n}))
        .collect();
    sorted_strings(&rows)
}

/// Live data files per level, and the number of deletion vectors in the live index.
async fn layout(loc: &Path) -> (BTreeMap<i32, usize>, usize) {
    let (levels, vectors, _, _) = dv_layout(loc).await;
    (levels, vectors)
}

/// Live data files per level, the number of deletion vectors in the live index, the rows
/// of the files above level 0 that no vector marks, and the positions the vectors mark.
async fn dv_layout(loc: &Path) -> (BTreeMap<i32, usize>, usize, i64, i64) {
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let mut levels = BTreeMap::new();
    let mut rows = 0;
    let mut live = std::collections::BTreeSet::new();
    for e in table.scan().data_files().await.unwrap().unwrap().entries {
        *levels.entry(e.file.level).or_insert(0) += 1;
        if e.file.level > 0 {
            rows += e.file.row_count;
            live.insert(e.file.file_name.clone());
        }
    }
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    let mut vectors = 0;
    let mut marked = 0;
    if let Some(name) = &snapshot.index_manifest {
        let path = loc.join("manifest").join(name);
        for e in decode_index_manifest(&std::fs::read(&path).unwrap(), path.to_str().unwrap())
            .unwrap()
            .iter()
            .filter(|e| e.kind == FileKind::Add && e.index_file.index_type == "DELETION_VECTORS")
        {
            for r in e.index_file.dv_ranges.iter().flatten() {
                assert!(
                    live.contains(&r.data_file_name),
                    "vector of a dead file {r:?}"
                );
                vectors += 1;
                marked += r.cardinality.unwrap();
            }
        }
    }
    (levels, vectors, rows - marked, marked)
}

/// A deduplicate table written by several commits (inserts, updates, deletes, keys moving
/// in and out) reads the model's rows, by us, Java and pypaimon. The first commit's large
/// file goes to the max level; later small commits land below it and mark the rows they
/// replace there (three keys of the second commit exist: three positions).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deduplicate_commits_read_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("wh/db.db/t");
    std::fs::create_dir_all(loc.parent().unwrap()).unwrap();
    Table::create(
        loc.to_str().unwrap(),
        schema("deduplicate", 2, "").as_bytes(),
    )
    .await
    .unwrap();
    let mut model: BTreeMap<i64, (Option<String>, Option<i32>)> = BTreeMap::new();
    let mut checked = 0;
    let long = noise(400);
    let commits: Vec<Vec<Row<'_>>> = vec![
        (1..=400)
            .map(|k| (k, Some(long[k as usize - 1].as_str()), Some(k as i32), "+I"))
            .collect(),
        vec![
            (3, Some("b"), Some(30), "+U"),
            (4, None, Some(40), "+I"),
            (5, Some("x"), None, "-D"),
            (421, Some("b"), Some(21), "+I"),
            (3, Some("b2"), Some(31), "+U"),
        ],
        vec![
            (5, Some("c"), Some(50), "+I"),
            (6, None, None, "-D"),
            (7, None, None, "-D"),
            (421, None, None, "-D"),
            (422, Some("c"), None, "+I"),
        ],
        vec![(6, Some("d"), Some(6), "+I"), (1, None, None, "-D")],
    ];
    for (i, rows) in commits.iter().enumerate() {
        write_commit(&loc, &kv_batch(rows)).await;
        for (k, v, n, kind) in rows {
            if *kind == "-D" {
                model.remove(k);
            } else {
                model.insert(*k, (v.map(str::to_owned), *n));
            }
        }
        let (levels, vectors, live, marked) = dv_layout(&loc).await;
        assert!(!levels.contains_key(&0), "commit {i}: {levels:?}");
        assert_eq!(live, model.len() as i64, "commit {i}: {levels:?}");
        match i {
            0 => assert_eq!((levels.clone(), vectors), (BTreeMap::from([(5, 2)]), 0)),
            1 => {
                assert_eq!(
                    marked, 3,
                    "keys 3, 4 and 5 replaced: {levels:?} {vectors} {live}"
                );
                assert!(levels.contains_key(&4), "{levels:?}");
            }
            _ => assert!(marked >= 3, "{marked}"),
        }
        checked += assert_reads(&loc, &model_rows(&model), &format!("commit {i}")).await;
    }
    assert_eq!(model.len(), 399);
    eprintln!("external readers checked {checked} times");
}

/// Partial-update: each commit's non-null columns update the merged row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_update_commits_read_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("wh/db.db/t");
    std::fs::create_dir_all(loc.parent().unwrap()).unwrap();
    Table::create(
        loc.to_str().unwrap(),
        schema("partial-update", 2, "").as_bytes(),
    )
    .await
    .unwrap();
    let mut model: BTreeMap<i64, (Option<String>, Option<i32>)> = BTreeMap::new();
    let long = noise(300);
    let commits: Vec<Vec<Row<'_>>> = vec![
        (1..=300)
            .map(|k| (k, Some(long[k as usize - 1].as_str()), None, "+I"))
            .collect(),
        (3..=10).map(|k| (k, None, Some(k as i32), "+I")).collect(),
        vec![(4, Some("c"), None, "+I"), (9, Some("c"), Some(90), "+I")],
        vec![(4, None, Some(44), "+I"), (301, Some("d"), None, "+I")],
    ];
    for (i, rows) in commits.iter().enumerate() {
        write_commit(&loc, &kv_batch(rows)).await;
        for (k, v, n, _) in rows {
            let e = model.entry(*k).or_insert((None, None));
            if let Some(v) = v {
                e.0 = Some((*v).to_owned());
            }
            if let Some(n) = n {
                e.1 = Some(*n);
            }
        }
        let (levels, _, live, marked) = dv_layout(&loc).await;
        assert!(!levels.contains_key(&0), "commit {i}: {levels:?}");
        assert_eq!(live, model.len() as i64, "commit {i}: {levels:?}");
        if i == 1 {
            assert_eq!(marked, 8, "keys 3..=10 merged with their level-5 rows");
        }
        assert_reads(&loc, &model_rows(&model), &format!("commit {i}")).await;
    }
    assert_eq!(
        model.get(&4),
        Some(&(Some("c".to_owned()), Some(44))),
        "partial update merged"
    );
}

/// A table in the state Java's lookup compaction leaves (an old max-level file, a newer
/// level-4 file with updates, a deletion vector over the old file hiding the updated and a
/// deleted key): Java and we read it the same; our next write keeps the vector and marks
/// more rows; a full compaction applies it (the deleted key stays deleted, updated keys keep
/// their new values) and empties the index.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn existing_deletion_vectors_are_applied_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("wh/db.db/base");
    std::fs::create_dir_all(base.parent().unwrap()).unwrap();
    let table = Table::create(
        base.to_str().unwrap(),
        schema("deduplicate", 1, "").as_bytes(),
    )
    .await
    .unwrap();
    // Old file A: keys 1..=10 at the max level (sequence numbers 0..=9, row i = key i+1).
    write_commit(
        &base,
        &kv_batch(
            &(1..=10)
                .map(|k| (k, Some("a"), Some(k as i32), "+I"))
                .collect::<Vec<_>>(),
        ),
    )
    .await;
    let files = table.scan().data_files().await.unwrap().unwrap();
    assert_eq!(files.entries.len(), 1);
    let a = files.entries[0].file.clone();
    assert_eq!((a.level, a.row_count), (5, 10));
    // The newer file B (keys 3, 4 updated) as Java's lookup compaction leaves it: at
    // level 4, while A's rows of keys 3, 4 and 7 (deleted) are marked in A's vector.
    // Written by a writer of the table with vectors off, then moved to level 4.
    let schema_path = base.join("schema/schema-0");
    let with_dv = std::fs::read_to_string(&schema_path).unwrap();
    let without_dv = with_dv.replace(
        "\"deletion-vectors.enabled\" : \"true\"",
        "\"deletion-vectors.enabled\" : \"false\"",
    );
    assert_ne!(with_dv, without_dv, "schema file layout");
    std::fs::write(&schema_path, &without_dv).unwrap();
    let plain = Table::open(base.to_str().unwrap()).await.unwrap();
    let mut w = plain.new_write().await.unwrap();
    w.write(&kv_batch(&[
        (3, Some("b"), Some(30), "+I"),
        (4, Some("b"), Some(40), "+I"),
    ]))
    .await
    .unwrap();
    let mut messages = w.prepare_commit().await.unwrap();
    std::fs::write(&schema_path, &with_dv).unwrap();
    assert_eq!(messages.len(), 1);
    assert!(messages[0].compact_increment.compact_after.is_empty());
    messages[0].data_increment.new_files[0].level = 4;
    let (bytes, ranges) = encode_deletion_vector_index(
        &[(
            a.file_name.clone(),
            DeletionVector::from_positions([2, 3, 6]),
        )],
        false,
    )
    .unwrap();
    let index_name = "index-pk-dv-test-0".to_owned();
    std::fs::create_dir_all(base.join("index")).unwrap();
    std::fs::write(base.join("index").join(&index_name), &bytes).unwrap();
    messages[0]
        .data_increment
        .new_index_files
        .push(IndexFileMeta {
            index_type: "DELETION_VECTORS".into(),
            file_name: index_name,
            file_size: bytes.len() as i64,
            row_count: 1,
            dv_ranges: Some(ranges),
            external_path: None,
            global_index: None,
        });
    let table = Table::open(base.to_str().unwrap()).await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
    assert_eq!(layout(&base).await, (BTreeMap::from([(4, 1), (5, 1)]), 1));
    let mut model: BTreeMap<i64, (Option<String>, Option<i32>)> = (1..=10)
        .map(|k| (k, (Some("a".to_owned()), Some(k as i32))))
        .collect();
    model.insert(3, (Some("b".into()), Some(30)));
    model.insert(4, (Some("b".into()), Some(40)));
    model.remove(&7);
    assert_reads(&base, &model_rows(&model), "Java-style vectors").await;

    // A write on top: the bucket is compacted with A's vector applied.
    let written = dir.path().join("wh/db.db/written");
    copy_dir(&base, &written);
    write_commit(
        &written,
        &kv_batch(&[
            (4, Some("c"), Some(41), "+U"),
            (11, Some("c"), Some(11), "+I"),
            (1, None, None, "-D"),
        ]),
    )
    .await;
    let mut after = model.clone();
    after.insert(4, (Some("c".into()), Some(41)));
    after.insert(11, (Some("c".into()), Some(11)));
    after.remove(&1);
    let (levels, _, live, _) = dv_layout(&written).await;
    assert!(!levels.contains_key(&0), "{levels:?}");
    assert_eq!(live, after.len() as i64, "{levels:?}");
    assert_reads(&written, &model_rows(&after), "written on vectors").await;
    let snapshot = Table::open(written.to_str().unwrap())
        .await
        .unwrap()
        .latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        snapshot.commit_kind,
        paimon_kernel::spec::snapshot::CommitKind::Compact
    );

    // A full `compact` of the vector table: the same rows, no vectors left (the index is
    // replaced by an empty one, as Java's `writeSingleFile` does). A normal one has nothing
    // to do: no level 0, too few runs.
    for full in [true, false] {
        let c = dir.path().join(format!(
            "wh/db.db/compact_{}",
            if full { "full" } else { "normal" }
        ));
        copy_dir(&base, &c);
        let report = Table::open(c.to_str().unwrap())
            .await
            .unwrap()
            .compact(CompactOptions {
                full,
                ..Default::default()
            })
            .await
            .unwrap();
        if !full {
            assert!(report.snapshot.is_none(), "{report:?}");
            assert_eq!(layout(&c).await, (BTreeMap::from([(4, 1), (5, 1)]), 1));
            continue;
        }
        assert!(report.snapshot.is_some(), "full {full}");
        assert_eq!(report.buckets.len(), 1);
        assert_eq!(report.buckets[0].output_level, 5);
        assert_eq!(report.buckets[0].files_in, 2, "full {full}");
        assert_eq!(
            layout(&c).await,
            (BTreeMap::from([(5, 1)]), 0),
            "full {full}"
        );
        assert_reads(&c, &model_rows(&model), &format!("compact full {full}")).await;
        // Nothing left to do.
        let again = Table::open(c.to_str().unwrap())
            .await
            .unwrap()
            .compact(CompactOptions {
                full,
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(again.snapshot.is_none(), "full {full}: {again:?}");
    }
}

/// Writing on the corpus's vector tables (written by pypaimon, all level 0, which batch
/// reads skip unless `deletion-vectors.merge-on-read`) keeps their merged rows plus ours.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_on_corpus_tables_keep_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    // pk_dv: k, name, val, cnt, op (`rowkind.field` = op).
    let loc = dir.path().join("wh/corpus.db/pk_dv");
    copy_dir(&corpus().join("corpus.db/pk_dv"), &loc);
    // The merged rows of the corpus table: a full compaction of a copy.
    let merged_dir = dir.path().join("wh/corpus.db/pk_dv_merged");
    copy_dir(&loc, &merged_dir);
    Table::open(merged_dir.to_str().unwrap())
        .await
        .unwrap()
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let merged = rows_at(&merged_dir).await;
    assert!(merged.len() > 10, "{merged:?}");
    let mut model: BTreeMap<i64, Value> = merged
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_str(r).unwrap();
            (v["k"].as_i64().unwrap(), v)
        })
        .collect();
    let deleted = *model.keys().next().unwrap();
    let b = batch(vec![
        ("k", Arc::new(Int64Array::from(vec![deleted, 5000, 5001]))),
        (
            "name",
            Arc::new(StringArray::from(vec!["gone", "new", "new"])),
        ),
        (
            "val",
            Arc::new(arrow_array::Float64Array::from(vec![0.0, 1.5, 2.5])),
        ),
        ("cnt", Arc::new(Int32Array::from(vec![0, 7, 8]))),
        ("op", Arc::new(StringArray::from(vec!["-D", "+I", "+I"]))),
    ]);
    write_commit(&loc, &b).await;
    model.remove(&deleted);
    model.insert(
        5000,
        serde_json::json!({"k": 5000, "name": "new", "val": 1.5, "cnt": 7, "op": "+I"}),
    );
    model.insert(
        5001,
        serde_json::json!({"k": 5001, "name": "new", "val": 2.5, "cnt": 8, "op": "+I"}),
    );
    let want = sorted_strings(&model.values().cloned().collect::<Vec<_>>());
    let (levels, dvs) = layout(&loc).await;
    assert_eq!(dvs, 0);
    assert!(levels.keys().all(|l| *l == 5), "{levels:?}");
    assert_reads(&loc, &want, "pk_dv").await;

    // pk_first_row_dv_mor: k, v, ts; first-row keeps the oldest row of a key.
    let loc = dir.path().join("wh/corpus.db/pk_first_row_dv_mor");
    copy_dir(&corpus().join("corpus.db/pk_first_row_dv_mor"), &loc);
    let before = rows_at(&loc).await;
    let mut model: BTreeMap<i64, Value> = before
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_str(r).unwrap();
            (v["k"].as_i64().unwrap(), v)
        })
        .collect();
    assert_eq!(model.len(), 12);
    let existing = *model.keys().next().unwrap();
    // Keys 6000..6010 touch both buckets (a bucket not written keeps its level 0).
    let mut keys = vec![existing];
    keys.extend(6000..6010);
    let values: Vec<String> = keys.iter().map(|k| format!("first-{k}")).collect();
    let millis: Vec<i64> = keys.iter().map(|k| k * 1000).collect();
    let b = batch(vec![
        ("k", Arc::new(Int64Array::from(keys.clone()))),
        ("v", Arc::new(StringArray::from(values))),
        (
            "ts",
            Arc::new(arrow_array::TimestampMillisecondArray::from(millis)),
        ),
    ]);
    write_commit(&loc, &b).await;
    for k in 6000..6010i64 {
        let ts = format!(
            "1970-01-01T01:{:02}:{:02}.000000000",
            (k - 3600) / 60,
            k % 60
        );
        model.insert(
            k,
            serde_json::json!({"k": k, "v": format!("first-{k}"), "ts": ts}),
        );
    }
    let want = sorted_strings(&model.values().cloned().collect::<Vec<_>>());
    let (levels, dvs) = layout(&loc).await;
    assert_eq!(dvs, 0);
    assert!(levels.keys().all(|l| *l == 5), "{levels:?}");
    // Java 2.0.0 does not open first-row tables with deletion vectors at all
    // (`SchemaValidation`: first-row needs no vectors), the corpus table included.
    assert_reads_with(&loc, &want, "pk_first_row_dv_mor", false).await;
}

/// Dynamic-bucket tables (`bucket` = -1) with deletion vectors: the hash index places keys
/// (buckets fill up to `dynamic-bucket.target-row-num`), and every commit compacts the level
/// 0 of the buckets it touched up with their vectors, as for fixed buckets. Several commits
/// of inserts, updates and deletes read the model by us, Java and pypaimon; a key never
/// lands in two buckets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_bucket_commits_read_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("wh/db.db/t");
    std::fs::create_dir_all(loc.parent().unwrap()).unwrap();
    Table::create(
        loc.to_str().unwrap(),
        schema(
            "deduplicate",
            -1,
            r#", "dynamic-bucket.target-row-num": "40""#,
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut model: BTreeMap<i64, (Option<String>, Option<i32>)> = BTreeMap::new();
    let values: Vec<String> = (0..300).map(|i| format!("v{i}")).collect();
    let commits: Vec<Vec<Row<'_>>> = vec![
        (0..100)
            .map(|k| (k, Some(values[k as usize].as_str()), Some(k as i32), "+I"))
            .collect(),
        (50..130)
            .map(|k| (k, Some(values[k as usize + 100].as_str()), None, "+U"))
            .chain((0..10).map(|k| (k * 3, None, None, "-D")))
            .collect(),
        (20..40)
            .map(|k| (k, Some("again"), Some(-1), "+I"))
            .chain((120..125).map(|k| (k, None, None, "-D")))
            .chain([(3, Some("back"), Some(3), "+I")])
            .collect(),
    ];
    let mut checked = 0;
    for (i, rows) in commits.iter().enumerate() {
        write_commit(&loc, &kv_batch(rows)).await;
        for (k, v, n, kind) in rows {
            if *kind == "-D" {
                model.remove(k);
            } else {
                model.insert(*k, (v.map(str::to_owned), *n));
            }
        }
        let (levels, _, live, _) = dv_layout(&loc).await;
        assert!(!levels.contains_key(&0), "commit {i}: {levels:?}");
        assert_eq!(live, model.len() as i64, "commit {i}: {levels:?}");
        checked += assert_reads(&loc, &model_rows(&model), &format!("commit {i}")).await;
    }
    // 130 keys at 40 per bucket: at least 4 buckets.
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let files = table.scan().data_files().await.unwrap().unwrap();
    let buckets: std::collections::BTreeSet<i32> = files.entries.iter().map(|e| e.bucket).collect();
    assert!(buckets.len() >= 4, "{buckets:?}");
    eprintln!("external readers checked {checked} times");
}
