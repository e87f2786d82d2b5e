//! Compaction of append tables with deletion vectors (`paimon_native::compact_append::run`):
//! tables written and deleted from (`delete --where`) by us, then compacted. After each
//! compaction the rows read back equal a model (ours, and Java 2.0.0's through
//! java-check's `read` when installed), the vectors of the compacted files are gone from
//! the latest index manifest, the files not compacted keep theirs (same positions), and every
//! vector in the index belongs to a live data file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::{create, java_read_lines, ok, table_rows, write};
use crate::oracle::sorted_strings;
use paimon_kernel::format::deletion_vector::decode_deletion_vector_index;
use paimon_kernel::scan::planner::read_index_entries;
use paimon_kernel::schema::alter::SchemaChange;
use paimon_kernel::spec::{CommitKind, FileKind, IndexManifestEntry};
use paimon_native::Table;
use paimon_native::compact_append::{AppendCompactOptions, AppendCompactReport, plan, run};
use serde_json::{Value, json};

/// Delete with the `delete --where` command.
fn delete(table: &str, filter: &str) {
    ok(&["delete", table, "--where", filter]);
}

fn row(id: i64, p: &str) -> Value {
    json!({"id": id, "p": p, "v": format!("v{id}")})
}

fn schema(bucket: &str, options: Value) -> Value {
    let mut o = json!({"deletion-vectors.enabled": "true", "bucket": bucket});
    if bucket != "-1" {
        o["bucket-key"] = json!("id");
    }
    for (k, v) in options.as_object().unwrap() {
        o[k] = v.clone();
    }
    json!({"fields": [
        {"name": "id", "type": "INT"}, {"name": "p", "type": "STRING"},
        {"name": "v", "type": "STRING"}],
      "partitionKeys": ["p"], "options": o})
}

/// Live data files: name → (partition JSON, bucket, file size, row count).
async fn live_files(table: &Table) -> BTreeMap<String, (String, i32, i64, i64)> {
    let files = table.scan().data_files().await.unwrap().unwrap();
    files
        .entries
        .iter()
        .map(|e| {
            let p = format!("{:?}", e.partition);
            (
                e.file.file_name.clone(),
                (p, e.bucket, e.file.file_size, e.file.row_count),
            )
        })
        .collect()
}

/// The latest index manifest's entries (all must be `DELETION_VECTORS` ADDs).
async fn index_entries(table: &Table) -> Vec<IndexManifestEntry> {
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    let entries = table
        .host()
        .run_once(paimon_kernel::io::Machine::once(
            "index",
            move |io: paimon_kernel::io::Io<Vec<IndexManifestEntry>>| async move {
                read_index_entries(&io, &snapshot).await
            },
        ))
        .await
        .unwrap();
    for e in &entries {
        assert_eq!(e.kind, FileKind::Add);
        assert_eq!(e.index_file.index_type, "DELETION_VECTORS");
    }
    entries
}

/// Data file → deleted positions of the latest snapshot, read from the index files (CRC
/// checked); each data file has at most one vector, `_ROW_COUNT` is the number of vectors,
/// and with `bucketed` each bucket has at most one index file.
async fn live_dvs(table: &Table, loc: &str, bucketed: bool) -> BTreeMap<String, Vec<u64>> {
    let mut out = BTreeMap::new();
    let mut buckets = BTreeSet::new();
    for e in index_entries(table).await {
        if bucketed {
            assert!(
                buckets.insert((e.partition.clone(), e.bucket)),
                "two index files for bucket {}",
                e.bucket
            );
        } else {
            assert_eq!(e.bucket, 0);
        }
        let ranges = e.index_file.dv_ranges.clone().unwrap();
        assert_eq!(e.index_file.row_count, ranges.len() as i64);
        let path = Path::new(loc).join("index").join(&e.index_file.file_name);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as i64, e.index_file.file_size);
        for (name, dv) in
            decode_deletion_vector_index(&bytes, &ranges, path.to_str().unwrap(), true).unwrap()
        {
            let positions: Vec<u64> = dv.iter().collect();
            assert!(
                out.insert(name.clone(), positions).is_none(),
                "data file {name} has two deletion vectors"
            );
        }
    }
    out
}

/// The `id` values of data file `name` of the table at `loc`, in file order.
fn ids_of_file(loc: &str, name: &str) -> Vec<i64> {
    fn find(dir: &Path, name: &str) -> Option<PathBuf> {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                if let Some(p) = find(&e.path(), name) {
                    return Some(p);
                }
            } else if e.file_name().to_str() == Some(name) {
                return Some(e.path());
            }
        }
        None
    }
    let path = find(Path::new(loc), name).unwrap();
    let bytes = bytes::Bytes::from(std::fs::read(&path).unwrap());
    let decoded = paimon_kernel::format::data_file::decode_data_file(
        bytes,
        path.to_str().unwrap(),
        paimon_kernel::format::data_file::FileFormat::Parquet,
        Some(&["id".to_string()]),
        1024,
    )
    .unwrap();
    let mut ids = Vec::new();
    for b in &decoded.batches {
        let col = b
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .unwrap();
        ids.extend(col.values().iter().map(|v| i64::from(*v)));
    }
    ids
}

/// Compact and check the invariants of the module docs against `model`; returns the report
/// and the compacted files' names.
async fn compact_and_check(
    loc: &str,
    full: bool,
    bucketed: bool,
    model: &[Value],
) -> (AppendCompactReport, BTreeSet<String>) {
    let table = Table::open(loc).await.unwrap();
    let files_before = live_files(&table).await;
    let dvs_before = live_dvs(&table, loc, bucketed).await;
    assert_eq!(
        table_rows(&table).await,
        sorted_strings(model),
        "before compaction"
    );
    let planned = plan(&table, full).await.unwrap();
    let report = run(
        &table,
        &AppendCompactOptions {
            full,
            ..AppendCompactOptions::default()
        },
    )
    .await
    .unwrap();
    let mut planned_units: Vec<Vec<String>> =
        planned.units.iter().map(|u| u.files.clone()).collect();
    let mut done: Vec<Vec<String>> = report
        .tasks
        .iter()
        .map(|t| {
            let mut f = t.files_in.clone();
            f.sort();
            f
        })
        .collect();
    planned_units.sort();
    done.sort();
    assert_eq!(planned_units, done, "plan-compaction and compact agree");
    let compacted: BTreeSet<String> = report
        .tasks
        .iter()
        .flat_map(|t| t.files_in.clone())
        .collect();
    let table = Table::open(loc).await.unwrap();
    if !report.tasks.is_empty() {
        let snapshot = table.latest_snapshot().await.unwrap().unwrap();
        assert_eq!(Some(snapshot.id), report.snapshot_id);
        assert_eq!(snapshot.commit_kind, CommitKind::Compact);
    }
    let files_after = live_files(&table).await;
    for f in &compacted {
        assert!(files_before.contains_key(f) && !files_after.contains_key(f));
    }
    // Rows written = live rows of the inputs (deleted rows dropped).
    for t in &report.tasks {
        let live: i64 = t
            .files_in
            .iter()
            .map(|f| files_before[f].3 - dvs_before.get(f).map_or(0, |d| d.len() as i64))
            .sum();
        assert_eq!(t.rows, live, "rows of the task over {:?}", t.files_in);
    }
    let dvs_after = live_dvs(&table, loc, bucketed).await;
    let expected: BTreeMap<String, Vec<u64>> = dvs_before
        .iter()
        .filter(|(f, _)| !compacted.contains(*f))
        .map(|(f, d)| (f.clone(), d.clone()))
        .collect();
    assert_eq!(dvs_after, expected, "vectors after the compaction");
    for f in dvs_after.keys() {
        assert!(files_after.contains_key(f), "vector of dead file {f}");
    }
    assert_eq!(
        table_rows(&table).await,
        sorted_strings(model),
        "after compaction"
    );
    if let Some(java) = java_read_lines(loc) {
        assert_eq!(java, sorted_strings(model), "Java 2.0.0 after compaction");
    }
    (report, compacted)
}

/// Unaware bucket (`bucket = -1`), Java's deletion-vector mode of `AppendCompactCoordinator`.
/// Partition a: two big files BA (ids 0..2000) and BB (2000..4000), then three commits of
/// small files in both partitions. Deletes: id 7 (BA, 1 of 2000 rows) together with a row of
/// the first small file of a (one index file holds both vectors), ids 2000..2600 (BB, 30% >
/// `compaction.delete-ratio-threshold` 0.2), a row of b's second small file. With
/// `target-file-size` set so that BA and BB are not small, the compaction takes every small
/// file and BB (its delete ratio), not BA: BA keeps its vector, written again into a new
/// index file because its old one held the compacted small file's vector too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unaware_bucket_compaction_removes_the_vectors_of_compacted_files() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(
        dir.path(),
        "dv_unaware",
        schema("-1", json!({"compaction.min.file-num": "2"})),
    );
    let mut model: Vec<Value> = Vec::new();
    for range in [0..2000, 2000..4000] {
        let rows: Vec<Value> = range.map(|i| row(i, "a")).collect();
        write(&loc, &rows);
        model.extend(rows);
    }
    for c in 0..3 {
        let rows: Vec<Value> = (0..6)
            .map(|i| {
                let id = 10_000 + c * 10 + i;
                row(id, if i % 2 == 0 { "a" } else { "b" })
            })
            .collect();
        write(&loc, &rows);
        model.extend(rows);
    }
    let table = Table::open(&loc).await.unwrap();
    let files = live_files(&table).await;
    assert_eq!(files.len(), 8);
    let big = |f: &(String, i32, i64, i64)| f.3 == 2000;
    let small_max = files
        .values()
        .filter(|f| !big(f))
        .map(|f| f.2)
        .max()
        .unwrap();
    let big_min = files
        .values()
        .filter(|f| big(f))
        .map(|f| f.2)
        .min()
        .unwrap();
    assert!(small_max < big_min);
    // compaction_file_size = target × 0.7 lands between the small and the big files.
    let target = ((small_max + big_min) / 2) * 10 / 7;
    table
        .alter(vec![SchemaChange::set_option(
            "target-file-size",
            target.to_string(),
        )])
        .await
        .unwrap();
    type Matches = fn(i64) -> bool;
    let deletes: [(&str, Matches); 3] = [
        ("id = 7 OR id = 10002", |id| id == 7 || id == 10_002),
        ("id >= 2000 AND id < 2600", |id| (2000..2600).contains(&id)),
        ("id = 10013", |id| id == 10_013),
    ];
    for (filter, matches) in deletes {
        delete(&loc, filter);
        model.retain(|r| !matches(r["id"].as_i64().unwrap()));
    }
    let dvs = live_dvs(&table, &loc, false).await;
    assert_eq!(dvs.len(), 4);
    let ba = dvs
        .iter()
        .find(|(_, d)| d.as_slice() == [7])
        .map(|(n, _)| n.clone())
        .unwrap();
    let bb = dvs
        .iter()
        .find(|(_, d)| d.len() == 600)
        .map(|(n, _)| n.clone())
        .unwrap();
    // BA's vector shares an index file with a small file's.
    let holders = index_entries(&table).await;
    let ba_holder = holders
        .iter()
        .find(|e| {
            e.index_file
                .dv_ranges
                .iter()
                .flatten()
                .any(|r| r.data_file_name == ba)
        })
        .unwrap();
    assert_eq!(ba_holder.index_file.row_count, 2);

    let (report, compacted) = compact_and_check(&loc, false, false, &model).await;
    assert!(compacted.contains(&bb), "BB (30% deleted) is compacted");
    assert!(!compacted.contains(&ba), "BA (0.05% deleted) is not");
    let small: BTreeSet<String> = files
        .iter()
        .filter(|(_, f)| !big(f))
        .map(|(n, _)| n.clone())
        .collect();
    assert!(small.is_subset(&compacted));
    assert_eq!(compacted.len(), 7);
    assert!(report.snapshot_id.is_some());
    let after = index_entries(&table).await;
    assert_eq!(after.len(), 1);
    assert_eq!(
        after[0]
            .index_file
            .dv_ranges
            .iter()
            .flatten()
            .map(|r| r.data_file_name.clone())
            .collect::<Vec<_>>(),
        vec![ba.clone()]
    );
    assert_ne!(
        after[0].index_file.file_name,
        ba_holder.index_file.file_name
    );

    // A later delete and compaction work on the compacted table.
    delete(&loc, "id = 10004 OR id = 9");
    model.retain(|r| ![10_004, 9].contains(&r["id"].as_i64().unwrap()));
    let (_, compacted) = compact_and_check(&loc, false, false, &model).await;
    assert!(!compacted.contains(&ba));
    let dvs = live_dvs(&Table::open(&loc).await.unwrap(), &loc, false).await;
    assert_eq!(dvs.get(&ba).map(Vec::as_slice), Some(&[7, 9][..]));
}

/// Fixed buckets (`bucket = 2`): four commits of rows in both partitions and buckets, then
/// deletes of rows of the second and the fourth commit. A best-effort compaction
/// (`compaction.min.file-num` 3) takes the three oldest files of a bucket: the second file's
/// vector goes, the fourth file keeps its vector in the bucket's one new index file. A full
/// compaction then rewrites every file of the buckets (with deletion vectors Java has no
/// three-file minimum), and each bucket whose last vector went keeps an index file without
/// vectors (Java's `writeSingleFile`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_bucket_compaction_rewrites_the_bucket_index_file() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(
        dir.path(),
        "dv_fixed",
        schema("2", json!({"compaction.min.file-num": "3"})),
    );
    let mut model: Vec<Value> = Vec::new();
    for c in 0..4 {
        let rows: Vec<Value> = (0..16)
            .map(|i| {
                let id = 100 * (c + 1) + i;
                row(id, if i % 2 == 0 { "a" } else { "b" })
            })
            .collect();
        write(&loc, &rows);
        model.extend(rows);
    }
    let table = Table::open(&loc).await.unwrap();
    let files = live_files(&table).await;
    // Every (partition, bucket) got a file from every commit.
    let mut per_bucket: BTreeMap<(String, i32), usize> = BTreeMap::new();
    for f in files.values() {
        *per_bucket.entry((f.0.clone(), f.1)).or_default() += 1;
    }
    assert_eq!(per_bucket.len(), 4, "{per_bucket:?}");
    assert!(per_bucket.values().all(|n| *n == 4), "{per_bucket:?}");
    // One row of each file of the second and the fourth commit.
    let mut deleted: Vec<i64> = Vec::new();
    for name in files.keys() {
        let ids = ids_of_file(&loc, name);
        if ids
            .iter()
            .all(|id| (200..300).contains(id) || (400..500).contains(id))
        {
            deleted.push(ids[0]);
        }
    }
    assert_eq!(deleted.len(), 8);
    let filter = deleted
        .iter()
        .map(|id| format!("id = {id}"))
        .collect::<Vec<_>>()
        .join(" OR ");
    delete(&loc, &filter);
    model.retain(|r| !deleted.contains(&r["id"].as_i64().unwrap()));
    let dvs = live_dvs(&table, &loc, true).await;
    assert_eq!(dvs.len(), 8, "the 2nd and 4th file of each bucket");

    let (_, compacted) = compact_and_check(&loc, false, true, &model).await;
    assert_eq!(compacted.len(), 12, "three files of each bucket");
    let dvs_after = live_dvs(&table, &loc, true).await;
    assert_eq!(
        dvs_after.len(),
        4,
        "the 4th file of each bucket keeps its vector"
    );
    assert_eq!(index_entries(&table).await.len(), 4);

    let (_, compacted) = compact_and_check(&loc, true, true, &model).await;
    assert_eq!(compacted.len(), 8, "every file of every bucket");
    let entries = index_entries(&table).await;
    assert_eq!(entries.len(), 4);
    for e in &entries {
        assert_eq!(e.index_file.row_count, 0);
        assert_eq!(e.index_file.file_size, 1);
        assert_eq!(e.index_file.dv_ranges.as_deref(), Some(&[][..]));
    }
    // A delete after the compactions replaces the empty index file of its bucket.
    delete(&loc, "id = 101");
    model.retain(|r| r["id"] != 101);
    let table = Table::open(&loc).await.unwrap();
    assert_eq!(live_dvs(&table, &loc, true).await.len(), 1);
    assert_eq!(index_entries(&table).await.len(), 4);
    assert_eq!(table_rows(&table).await, sorted_strings(&model));
    if let Some(java) = java_read_lines(&loc) {
        assert_eq!(
            java,
            sorted_strings(&model),
            "Java 2.0.0 after the last delete"
        );
    }
}

/// The CLI's `compact` on an unaware-bucket table with deletion vectors commits (no more
/// "unsupported"); data-evolution tables with deletion vectors: `data_evolution_dv.rs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_compacts_a_table_with_deletion_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(dir.path(), "dv_cli", schema("-1", json!({})));
    let mut model = Vec::new();
    for c in 0..2 {
        let rows: Vec<Value> = (0..4).map(|i| row(c * 10 + i, "a")).collect();
        write(&loc, &rows);
        model.extend(rows);
    }
    delete(&loc, "id = 1 OR id = 12");
    model.retain(|r| r["id"] != 1 && r["id"] != 12);
    let out = ok(&["compact", &loc, "--json"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert!(report["snapshot"].is_i64(), "{out}");
    let table = Table::open(&loc).await.unwrap();
    assert!(index_entries(&table).await.is_empty());
    assert_eq!(live_files(&table).await.len(), 1);
    assert_eq!(table_rows(&table).await, sorted_strings(&model));
    if let Some(java) = java_read_lines(&loc) {
        assert_eq!(java, sorted_strings(&model));
    }
}
