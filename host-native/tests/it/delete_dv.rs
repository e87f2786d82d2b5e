//! `Table::delete_where` / `delete` on append tables with `deletion-vectors.enabled`: deletes
//! write deletion-vector index files (bucket-unaware: per data file, rewriting the other DVs
//! of a touched index file; fixed bucket: one replaced index file per bucket). Rows read back
//! equal a model after every delete, as read by us, by Java 2.0.0 (java-check's `read`,
//! when installed) and by pypaimon (when its venv is installed); the index manifest holds one
//! DV per data file with the model's deleted positions; races are commit conflicts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use paimon_kernel::format::deletion_vector::decode_deletion_vector_index;
use paimon_kernel::scan::planner::read_index_entries;
use paimon_kernel::spec::FileKind;
use paimon_kernel::write::append::deletion_vectors::dv_delete_machine;
use paimon_native::Table;
use serde_json::{Value, json};

use crate::common::{java_read_lines, table_rows};

pub(crate) fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(args)
        .output()
        .unwrap()
}

pub(crate) fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub(crate) fn create(dir: &Path, name: &str, schema: Value) -> String {
    let loc = dir.join(name);
    let file = dir.join(format!("{name}.schema.json"));
    std::fs::write(&file, schema.to_string()).unwrap();
    ok(&[
        "create",
        loc.to_str().unwrap(),
        "--schema",
        file.to_str().unwrap(),
    ]);
    loc.to_str().unwrap().to_owned()
}

/// Write JSON rows with the `write` command (one snapshot).
pub(crate) fn write(table: &str, rows: &[Value]) {
    let file = PathBuf::from(format!("{table}.input.jsonl"));
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    ok(&["write", table, "--input", file.to_str().unwrap()]);
}

fn schema(bucket: &str) -> Value {
    let mut options = json!({"deletion-vectors.enabled": "true", "bucket": bucket});
    if bucket != "-1" {
        options["bucket-key"] = json!("id");
    }
    json!({"fields": [
        {"name": "id", "type": "INT"}, {"name": "p", "type": "STRING"},
        {"name": "v", "type": "STRING"}],
      "partitionKeys": ["p"], "options": options})
}

fn row(id: i64, p: &str) -> Value {
    json!({"id": id, "p": p, "v": format!("v{id}")})
}

/// Our rows of the latest snapshot as sorted canonical JSON lines.
async fn our_rows(loc: &str) -> Vec<String> {
    table_rows(&Table::open(loc).await.unwrap()).await
}

pub(crate) fn model_rows(model: &[Value]) -> Vec<String> {
    let mut rows: Vec<String> = model.iter().map(|r| r.to_string()).collect();
    rows.sort();
    rows
}

fn pypaimon_python() -> Option<PathBuf> {
    let venv = std::env::var_os("PAIMON_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/paimon-kernel/venv"))
        })?;
    let py = venv.join("bin/python");
    py.exists().then_some(py)
}

/// pypaimon reads `corpus.db/<name>` of `warehouse` as `model` (skipped without the venv).
pub(crate) fn check_pypaimon(warehouse: &Path, name: &str, model: &[Value]) {
    let Some(python) = pypaimon_python() else {
        println!("pypaimon venv not installed: skipping the pypaimon read of {name}");
        return;
    };
    let exp = json!({"format_version": 1, "table": name, "database": "corpus",
                     "path": format!("corpus.db/{name}"), "rows": model});
    let check = warehouse.join(format!("check-{name}"));
    std::fs::create_dir_all(&check).unwrap();
    std::os::unix::fs::symlink(warehouse.join("corpus.db"), check.join("corpus.db")).unwrap();
    std::fs::write(check.join(format!("{name}.expected.json")), exp.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/pypaimon_read_back.py");
    let out = Command::new(python)
        .arg(script)
        .arg(&check)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed, 0 failed"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The DVs of the latest snapshot: data file name → deleted positions, checking that every
/// index entry is a `DELETION_VECTORS` ADD, each data file has one DV, `_ROW_COUNT` = number
/// of ranges, and (fixed buckets) one index file per bucket.
pub(crate) async fn live_dvs(loc: &str, bucketed: bool) -> BTreeMap<String, Vec<u64>> {
    let table = Table::open(loc).await.unwrap();
    let plan = table.scan().plan().await.unwrap();
    let snapshot = plan.snapshot.clone().unwrap();
    let entries = table
        .host()
        .run_once(paimon_kernel::io::Machine::once(
            "index",
            move |io: paimon_kernel::io::Io<Vec<paimon_kernel::spec::IndexManifestEntry>>| async move {
                read_index_entries(&io, &snapshot).await
            },
        ))
        .await
        .unwrap();
    let mut out = BTreeMap::new();
    let mut buckets = std::collections::BTreeSet::new();
    for e in entries {
        assert_eq!(e.kind, FileKind::Add);
        assert_eq!(e.index_file.index_type, "DELETION_VECTORS");
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
            assert!(
                out.insert(name.clone(), dv.iter().collect::<Vec<u64>>())
                    .is_none(),
                "data file {name} has two deletion vectors"
            );
        }
    }
    out
}

async fn delete(loc: &str, filter: &str) -> u64 {
    let table = Table::open(loc).await.unwrap();
    table.delete_where(filter, None).await.unwrap().rows_deleted
}

async fn latest_snapshot(loc: &str) -> i64 {
    let table = Table::open(loc).await.unwrap();
    table.scan().plan().await.unwrap().snapshot.unwrap().id
}

/// Three writes (two partitions), then deletes hitting one file, the same file again plus
/// files of both partitions, then (after another write) old and new files, and nothing; after each, our rows, Java's and pypaimon's equal
/// the model and the DVs hold the deleted positions.
async fn deletes_follow_the_model(bucket: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("corpus.db");
    std::fs::create_dir_all(&db).unwrap();
    let name = format!("dv_delete_bucket{}", bucket.replace('-', "m"));
    let loc = create(&db, &name, schema(bucket));
    let mut model: Vec<Value> = Vec::new();
    for batch in [0..6, 6..12, 12..15] {
        let rows: Vec<Value> = batch
            .map(|i| row(i, if i % 2 == 0 { "a" } else { "b" }))
            .collect();
        write(&loc, &rows);
        model.extend(rows);
    }
    let bucketed = bucket != "-1";
    assert!(live_dvs(&loc, bucketed).await.is_empty());
    type Matches = fn(i64, &str) -> bool;
    let deletes: [(&str, u64, Matches); 3] = [
        ("id = 2", 1, |id, _| id == 2),
        ("id <= 4 OR id = 13", 5, |id, _| id <= 4 || id == 13),
        ("id = 2 OR id = 8 OR (p = 'b' AND id > 6)", 6, |id, p| {
            id == 2 || id == 8 || (p == "b" && id > 6)
        }),
    ];
    let mut snapshot = latest_snapshot(&loc).await;
    let mut written = 15;
    for (i, (filter, expected, matches)) in deletes.into_iter().enumerate() {
        if i == 2 {
            // New files next to files with DVs: the last delete hits both.
            let rows: Vec<Value> = (15..18)
                .map(|i| row(i, if i % 2 == 0 { "a" } else { "b" }))
                .collect();
            write(&loc, &rows);
            model.extend(rows);
            written += 3;
            snapshot += 1;
        }
        let deleted = delete(&loc, filter).await;
        assert_eq!(deleted, expected, "rows deleted by {filter}");
        model.retain(|r| !matches(r["id"].as_i64().unwrap(), r["p"].as_str().unwrap()));
        assert_eq!(latest_snapshot(&loc).await, snapshot + 1, "{filter}");
        snapshot += 1;
        assert_eq!(our_rows(&loc).await, model_rows(&model), "after {filter}");
        let dvs = live_dvs(&loc, bucketed).await;
        let deleted_total: usize = dvs.values().map(Vec::len).sum();
        assert_eq!(deleted_total, written - model.len(), "after {filter}");
        if let Some(java) = java_read_lines(&loc) {
            assert_eq!(java, model_rows(&model), "Java 2.0.0 after {filter}");
        }
    }
    // No match: nothing is committed.
    assert_eq!(delete(&loc, "id = 100").await, 0);
    assert_eq!(delete(&loc, "id = 2").await, 0);
    assert_eq!(latest_snapshot(&loc).await, snapshot);
    // The deletes are OVERWRITE snapshots (Java: a commit with DV changes) without data changes.
    let snap: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&loc).join(format!("snapshot/snapshot-{snapshot}")))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(snap["commitKind"], "OVERWRITE");
    assert_eq!(snap["deltaRecordCount"], 0);
    assert!(snap["indexManifest"].is_string());
    check_pypaimon(dir.path(), &name, &model);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unaware_bucket_deletes_write_deletion_vectors() {
    deletes_follow_the_model("-1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_bucket_deletes_replace_the_bucket_index_file() {
    deletes_follow_the_model("2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_tables_without_deletion_vectors_say_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(
        dir.path(),
        "plain",
        json!({"fields": [{"name": "id", "type": "INT"}]}),
    );
    write(&loc, &[json!({"id": 1})]);
    let table = Table::open(&loc).await.unwrap();
    let err = table.delete_where("id = 1", None).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("deletion-vectors.enabled") && text.contains("unsupported"),
        "{text}"
    );
    assert_eq!(our_rows(&loc).await, vec![r#"{"id":1}"#.to_string()]);
}

/// A delete computed on snapshot N commits after another delete of rows of the same data
/// file (and bucket): a commit conflict, and the table keeps the other delete only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_deletes_of_one_file_conflict() {
    for bucket in ["-1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        let loc = create(dir.path(), "race", schema(bucket));
        let rows: Vec<Value> = (0..20).map(|i| row(i, "a")).collect();
        write(&loc, &rows);
        // Make the file have a DV already for the second round.
        assert_eq!(delete(&loc, "id = 0").await, 1);
        let table = Table::open(&loc).await.unwrap();
        let plan = table.scan().with_filter("id = 1").plan().await.unwrap();
        let pred = paimon_kernel::predicate::Predicate::parse("id = 1").unwrap();
        let stale = table
            .host()
            .run_once(dv_delete_machine(plan, pred, 7))
            .await
            .unwrap();
        assert_eq!(stale.rows_deleted, 1);
        // Touches every bucket, so also the one of row 1.
        assert_eq!(delete(&loc, "id >= 2").await, 18);
        let err = table
            .new_commit(None)
            .commit(stale.messages)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err.as_kernel(),
                Some(paimon_kernel::Error::CommitConflict { .. })
            ),
            "bucket {bucket}: {err}"
        );
        let expected = model_rows(&[row(1, "a")]);
        assert_eq!(our_rows(&loc).await, expected, "bucket {bucket}");
    }
}

/// `write --overwrite` of a partition drops the DVs of its replaced files (their index files
/// leave the index manifest); a later delete in another partition still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overwrite_drops_the_deletion_vectors_of_the_partition() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(dir.path(), "ow", schema("-1"));
    write(
        &loc,
        &(0..6)
            .map(|i| row(i, if i % 2 == 0 { "a" } else { "b" }))
            .collect::<Vec<_>>(),
    );
    assert_eq!(delete(&loc, "id = 0 OR id = 1").await, 2);
    assert_eq!(live_dvs(&loc, false).await.len(), 2);
    let file = PathBuf::from(format!("{loc}.ow.jsonl"));
    std::fs::write(&file, format!("{}\n", row(10, "a"))).unwrap();
    ok(&[
        "write",
        &loc,
        "--input",
        file.to_str().unwrap(),
        "--overwrite",
    ]);
    assert_eq!(live_dvs(&loc, false).await.len(), 1);
    assert_eq!(delete(&loc, "id = 3").await, 1);
    let expected = model_rows(&[row(10, "a"), row(5, "b")]);
    assert_eq!(our_rows(&loc).await, expected);
    if let Some(java) = java_read_lines(&loc) {
        assert_eq!(java, expected);
    }
}
