//! `Table::alter` / `alter` and `Table::delete_where` / `delete`: plain reads use the latest
//! schema and time travel the snapshot's, writes after an alter record the new schema and read
//! back merged with older files, every kind of change and rejection, deletes on primary-key
//! tables, and pypaimon reading an altered table (when its venv is installed).

use std::path::{Path, PathBuf};
use std::process::Command;

use paimon_kernel::canonical;
use paimon_kernel::schema::alter::SchemaChange;
use paimon_kernel::spec::DataType;
use paimon_native::Table;
use serde_json::{Value, json};

use crate::common::{create, ok, run, write};

/// Run expecting a failure; its stderr.
fn fails(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        !out.status.success(),
        "{args:?} should fail, printed {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}

/// `scan --format jsonl` with `extra` flags, rows sorted by their text.
fn scan(table: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["scan", table, "--format", "jsonl"];
    args.extend_from_slice(extra);
    let mut rows: Vec<Value> = ok(&args)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    rows.sort_by_key(Value::to_string);
    rows
}

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(Value::to_string);
    rows
}

fn schema_id(table: &str) -> i64 {
    let v: Value = serde_json::from_str(&ok(&["--json", "schema", table])).unwrap();
    v["id"].as_i64().unwrap()
}

fn ty(s: &str) -> DataType {
    DataType::parse_sql(s).unwrap()
}

fn append_schema() -> Value {
    json!({"fields": [{"name": "id", "type": "INT"}, {"name": "name", "type": "STRING"}]})
}

fn pk_schema() -> Value {
    json!({"fields": [
        {"name": "k", "type": "INT"}, {"name": "p", "type": "STRING"},
        {"name": "v", "type": "INT"}, {"name": "s", "type": "STRING"}],
      "primaryKeys": ["k", "p"], "partitionKeys": ["p"], "options": {"bucket": "2"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_reads_use_the_latest_schema_and_time_travel_the_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "t", append_schema());
    write(
        &t,
        &[json!({"id": 1, "name": "a"}), json!({"id": 2, "name": "b"})],
    );
    let out = ok(&[
        "--json",
        "alter",
        &t,
        "--rename-column",
        "name=label",
        "--add-column",
        "score DOUBLE",
    ]);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["schemaId"],
        json!(1)
    );
    // No write since the alter: the latest snapshot still records schema 0.
    let table = Table::open(&t).await.unwrap();
    assert_eq!(table.latest_snapshot().await.unwrap().unwrap().schema_id, 0);
    let latest = sorted(vec![
        json!({"id": 1, "label": "a", "score": null}),
        json!({"id": 2, "label": "b", "score": null}),
    ]);
    assert_eq!(scan(&t, &[]), latest);
    let rows = canonical::batches_rows(&table.scan().to_batches().await.unwrap()).unwrap();
    assert_eq!(sorted(rows), latest);
    assert_eq!(
        scan(&t, &["--where", "label = 'b'"]),
        vec![json!({"id": 2, "label": "b", "score": null})]
    );
    assert_eq!(
        scan(&t, &["--where", "score IS NOT NULL"]),
        Vec::<Value>::new()
    );
    // Time travel reads with the snapshot's schema.
    let old = sorted(vec![
        json!({"id": 1, "name": "a"}),
        json!({"id": 2, "name": "b"}),
    ]);
    assert_eq!(scan(&t, &["--snapshot", "1"]), old);
    let at1 = table.scan().with_snapshot_id(1);
    assert_eq!(at1.plan().await.unwrap().schema.id, 0);
    assert_eq!(at1.snapshot().await.unwrap().unwrap().1.id, 0);
    assert_eq!(table.scan().plan().await.unwrap().schema.id, 1);
    assert_eq!(table.scan().snapshot().await.unwrap().unwrap().1.id, 1);
    assert_eq!(schema_id(&t), 1);
    // The `schema` command still shows a snapshot's own schema on request.
    let v: Value = serde_json::from_str(&ok(&["--json", "schema", &t, "--snapshot", "1"])).unwrap();
    assert_eq!(v["id"], json!(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_after_an_alter_use_the_new_schema_and_merge_with_older_files() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "t", append_schema());
    write(&t, &[json!({"id": 1, "name": "a"})]);
    ok(&[
        "alter",
        &t,
        "--rename-column",
        "name=label",
        "--add-column",
        "score DOUBLE FIRST",
    ]);
    write(&t, &[json!({"id": 2, "label": "b", "score": 1.5})]);
    // The new file records schema 1.
    let table = Table::open(&t).await.unwrap();
    let files = table.scan().data_files().await.unwrap().unwrap();
    let mut ids: Vec<i64> = files.entries.iter().map(|e| e.file.schema_id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1]);
    assert_eq!(files.snapshot.schema_id, 1);
    assert_eq!(
        scan(&t, &[]),
        sorted(vec![
            json!({"score": null, "id": 1, "label": "a"}),
            json!({"score": 1.5, "id": 2, "label": "b"}),
        ])
    );
    assert_eq!(
        scan(&t, &["--where", "score > 1"]),
        vec![json!({"score": 1.5, "id": 2, "label": "b"})]
    );
    // A type change (widening), then rows beyond the old type.
    ok(&["alter", &t, "--alter-type", "id BIGINT"]);
    write(
        &t,
        &[json!({"score": 2.5, "id": 5_000_000_000_i64, "label": "c"})],
    );
    assert_eq!(
        scan(&t, &["--where", "id > 1"]),
        sorted(vec![
            json!({"score": 1.5, "id": 2, "label": "b"}),
            json!({"score": 2.5, "id": 5_000_000_000_i64, "label": "c"}),
        ])
    );
    // Older snapshots keep their own schema.
    assert_eq!(
        scan(&t, &["--snapshot", "2"]),
        sorted(vec![
            json!({"score": null, "id": 1, "label": "a"}),
            json!({"score": 1.5, "id": 2, "label": "b"}),
        ])
    );
    assert_eq!(
        scan(&t, &["--snapshot", "1"]),
        vec![json!({"id": 1, "name": "a"})]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_change_through_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "pk", pk_schema());
    write(
        &t,
        &[
            json!({"k": 1, "p": "x", "v": 10, "s": "one"}),
            json!({"k": 2, "p": "y", "v": 20, "s": "two"}),
        ],
    );
    let table = Table::open(&t).await.unwrap();
    let schema = table
        .alter(vec![
            SchemaChange::update_column_type("v", ty("BIGINT")),
            SchemaChange::rename_column("s", "label"),
            SchemaChange::AddColumn {
                name: "w".into(),
                data_type: ty("STRING"),
                description: Some("added".into()),
                position: Some(paimon_kernel::schema::alter::ColumnMove::After("v".into())),
            },
            SchemaChange::set_option("snapshot.num-retained.max", "10"),
        ])
        .await
        .unwrap();
    assert_eq!(schema.id, 1);
    assert_eq!(schema.field_names(), ["k", "p", "v", "w", "label"]);
    assert_eq!(schema.field("w").unwrap().id, 4);
    assert_eq!(schema.options["snapshot.num-retained.max"], "10");
    let schema = table
        .alter(vec![
            SchemaChange::drop_column("label"),
            SchemaChange::remove_option("snapshot.num-retained.max"),
        ])
        .await
        .unwrap();
    assert_eq!(schema.id, 2);
    assert_eq!(schema.field_names(), ["k", "p", "v", "w"]);
    assert!(!schema.options.contains_key("snapshot.num-retained.max"));
    // Upsert one key with the new schema; the other keeps its evolved old row.
    write(
        &t,
        &[json!({"k": 1, "p": "x", "v": 5_000_000_000_i64, "w": "new"})],
    );
    assert_eq!(
        scan(&t, &[]),
        sorted(vec![
            json!({"k": 1, "p": "x", "v": 5_000_000_000_i64, "w": "new"}),
            json!({"k": 2, "p": "y", "v": 20, "w": null}),
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_changes_name_what_breaks_a_rule_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "pk", pk_schema());
    write(&t, &[json!({"k": 1, "p": "x", "v": 10, "s": "one"})]);
    for (args, needle) in [
        (vec!["--drop-column", "p"], "'p': it is a partition key"),
        (vec!["--drop-column", "k"], "'k': it is a primary key"),
        (
            vec!["--drop-column", "nope"],
            "column 'nope' does not exist",
        ),
        (
            vec!["--rename-column", "p=q"],
            "cannot rename partition column 'p'",
        ),
        (vec!["--rename-column", "v=s"], "column 's' already exists"),
        (
            vec!["--alter-type", "v DATE"],
            "column 'v' from INT to DATE",
        ),
        (vec!["--alter-type", "k BIGINT"], "'k': it is a primary key"),
        (
            vec!["--add-column", "x INT NOT NULL"],
            "'x' cannot be added as NOT NULL",
        ),
        (
            vec!["--add-column", "v STRING"],
            "column 'v' already exists",
        ),
        (
            vec!["--set", "merge-engine=first-row"],
            "option 'merge-engine' cannot be changed",
        ),
        (vec!["--set", "bucket=-1"], "cannot be changed to -1"),
        (vec!["--reset", "bucket"], "'bucket' cannot be reset"),
        (
            vec!["--set", "type=format-table"],
            "option 'type' cannot be changed",
        ),
        // A valid change before an invalid one: nothing is written either.
        (
            vec!["--add-column", "fine INT", "--drop-column", "p"],
            "partition key",
        ),
        (vec![], "at least one of --add-column"),
        (vec!["--alter-type", "v"], "expected 'NAME TYPE'"),
    ] {
        let mut a = vec!["alter", t.as_str()];
        a.extend(args.iter().copied());
        let e = fails(&a);
        assert!(e.contains(needle), "{args:?}: {e}");
    }
    assert_eq!(schema_id(&t), 0);
    // Allowed by Java Paimon 2.0 (`TimestampToStringCastRule`): the old file reads as Java's
    // text of the timestamp.
    let ts = create(
        dir.path(),
        "ts",
        json!({"fields": [{"name": "t", "type": "TIMESTAMP(3)"}]}),
    );
    write(&ts, &[json!({"t": "2024-01-02T03:04:05.006"})]);
    let table = Table::open(&ts).await.unwrap();
    // Refused by Java (no cast rule from TIMESTAMP to BOOLEAN): nothing is written.
    let e = table
        .alter(vec![SchemaChange::update_column_type("t", ty("BOOLEAN"))])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("BOOLEAN"), "{e}");
    assert_eq!(schema_id(&ts), 0);
    table
        .alter(vec![SchemaChange::update_column_type("t", ty("STRING"))])
        .await
        .unwrap();
    assert_eq!(schema_id(&ts), 1);
    assert_eq!(
        scan(&ts, &[]),
        vec![json!({"t": "2024-01-02 03:04:05.006"})]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_apply_in_command_line_order_and_options_follow_renames() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(
        dir.path(),
        "t",
        json!({"fields": [{"name": "k", "type": "INT"}, {"name": "v", "type": "INT"},
                          {"name": "seq", "type": "INT"}],
               "primaryKeys": ["k"],
               "options": {"bucket": "1", "sequence.field": "seq"}}),
    );
    write(&t, &[json!({"k": 1, "v": 1, "seq": 1})]);
    ok(&[
        "alter",
        &t,
        "--rename-column",
        "v=value",
        "--alter-type",
        "value BIGINT",
        "--rename-column",
        "seq=version",
        "--rename-column",
        "k=id",
        "--set",
        "snapshot.num-retained.min=2",
        "--reset",
        "snapshot.num-retained.min",
    ]);
    let table = Table::open(&t).await.unwrap();
    let schema = table.schema().await.unwrap();
    assert_eq!(schema.field_names(), ["id", "value", "version"]);
    assert_eq!(schema.field("value").unwrap().data_type, ty("BIGINT"));
    assert_eq!(schema.primary_keys, ["id"]);
    assert_eq!(schema.options["sequence.field"], "version");
    assert!(!schema.options.contains_key("snapshot.num-retained.min"));
    // An older version (lower sequence field) loses to the stored row, a newer one wins: the
    // renamed sequence field is still in force over old and new files.
    write(&t, &[json!({"id": 1, "value": 50, "version": 0})]);
    assert_eq!(
        scan(&t, &[]),
        vec![json!({"id": 1, "value": 1, "version": 1})]
    );
    write(&t, &[json!({"id": 1, "value": 70, "version": 2})]);
    assert_eq!(
        scan(&t, &[]),
        vec![json!({"id": 1, "value": 70, "version": 2})]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_alters_both_land() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "t", append_schema());
    let a = Table::open(&t).await.unwrap();
    let b = Table::open(&t).await.unwrap();
    let (ra, rb) = tokio::join!(
        a.alter(vec![SchemaChange::add_column("x", ty("INT"))]),
        b.alter(vec![SchemaChange::add_column("y", ty("INT"))]),
    );
    let mut ids = vec![ra.unwrap().id, rb.unwrap().id];
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    let schema = a.schema().await.unwrap();
    let mut names = schema.field_names();
    names.sort_unstable();
    assert_eq!(names, ["id", "name", "x", "y"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_on_a_partitioned_primary_key_table() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "pk", pk_schema());
    let rows: Vec<Value> = (1..=8)
        .map(|k| json!({"k": k, "p": if k % 2 == 0 { "x" } else { "y" }, "v": k * 10, "s": format!("s{k}")}))
        .collect();
    write(&t, &rows);
    let out = ok(&["--json", "delete", &t, "--where", "v >= 50 AND v < 80"]);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"rows": 3, "snapshots": [2]})
    );
    let left: Vec<Value> = rows
        .iter()
        .filter(|r| !(50..80).contains(&r["v"].as_i64().unwrap()))
        .cloned()
        .collect();
    assert_eq!(scan(&t, &[]), sorted(left.clone()));
    // A filter on the partition column; then one matching nothing commits nothing.
    let out = ok(&["delete", &t, "--where", "p = 'y'"]);
    assert!(out.contains("deleted 2 rows; snapshot 3"), "{out}");
    let left: Vec<Value> = left.into_iter().filter(|r| r["p"] == "x").collect();
    assert_eq!(scan(&t, &[]), sorted(left.clone()));
    let out = ok(&["delete", &t, "--where", "k > 100"]);
    assert!(out.contains("deleted 0 rows; no snapshot"), "{out}");
    let table = Table::open(&t).await.unwrap();
    assert_eq!(table.latest_snapshot().await.unwrap().unwrap().id, 3);
    // The deleted rows are still there in time travel.
    assert_eq!(scan(&t, &["--snapshot", "1"]), sorted(rows));
    // After an alter, deletes read and write with the new schema.
    ok(&[
        "alter",
        &t,
        "--add-column",
        "w STRING",
        "--rename-column",
        "s=label",
    ]);
    let outcome = table.delete_where("label = 's2'", None).await.unwrap();
    assert_eq!(outcome.rows_deleted, 1);
    assert_eq!(outcome.commit.snapshot_ids, [4]);
    let left: Vec<Value> = left
        .into_iter()
        .filter(|r| r["k"] != 2)
        .map(|r| json!({"k": r["k"], "p": r["p"], "v": r["v"], "label": r["s"], "w": null}))
        .collect();
    assert_eq!(scan(&t, &[]), sorted(left));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_rules_of_other_tables() {
    let dir = tempfile::tempdir().unwrap();
    // Append tables: unsupported (deletion vectors or row tracking needed).
    let t = create(dir.path(), "append", append_schema());
    write(&t, &[json!({"id": 1, "name": "a"})]);
    let table = Table::open(&t).await.unwrap();
    let e = table.delete_where("id = 1", None).await.unwrap_err();
    assert!(
        matches!(
            e.as_kernel(),
            Some(paimon_kernel::Error::Unsupported { .. })
        ),
        "{e}"
    );
    let e = fails(&["delete", &t, "--where", "id = 1"]);
    assert!(
        e.contains("deletion-vectors.enabled")
            && e.contains("row tracking")
            && e.contains("not supported yet"),
        "{e}"
    );
    assert_eq!(scan(&t, &[]), vec![json!({"id": 1, "name": "a"})]);
    // Merge engines that keep deleted keys.
    let mut first_row = pk_schema();
    first_row["options"]["merge-engine"] = json!("first-row");
    let t = create(dir.path(), "first_row", first_row);
    let e = fails(&["delete", &t, "--where", "k = 1"]);
    assert!(e.contains("first-row cannot delete"), "{e}");
    let mut partial = pk_schema();
    partial["options"]["merge-engine"] = json!("partial-update");
    let t = create(dir.path(), "partial", partial.clone());
    let e = fails(&["delete", &t, "--where", "k = 1"]);
    assert!(e.contains("partial-update.remove-record-on-delete"), "{e}");
    // Allowed with partial-update.remove-record-on-delete: the key is gone.
    partial["options"]["partial-update.remove-record-on-delete"] = json!("true");
    let t = create(dir.path(), "partial_rm", partial);
    let rows = [
        json!({"k": 1, "p": "x", "v": 1, "s": "a"}),
        json!({"k": 2, "p": "x", "v": 2, "s": "b"}),
    ];
    write(&t, &rows);
    ok(&["delete", &t, "--where", "k = 1"]);
    assert_eq!(scan(&t, &[]), vec![rows[1].clone()]);
    // A filter naming an unknown column.
    let e = fails(&["delete", &t, "--where", "nope = 1"]);
    assert!(e.contains("nope"), "{e}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pypaimon_reads_altered_tables() {
    let Some(python) = pypaimon_python() else {
        println!("pypaimon venv not installed: skipping the pypaimon read of altered tables");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("corpus.db");
    std::fs::create_dir_all(&db).unwrap();
    // Append: rename, add, widen, then more rows.
    let a = create(&db, "altered_append", append_schema());
    write(
        &a,
        &[json!({"id": 1, "name": "a"}), json!({"id": 2, "name": "b"})],
    );
    ok(&[
        "alter",
        &a,
        "--rename-column",
        "name=label",
        "--add-column",
        "score DOUBLE",
        "--alter-type",
        "id BIGINT",
    ]);
    write(
        &a,
        &[json!({"id": 5_000_000_000_i64, "label": "c", "score": 0.5})],
    );
    // Primary key: partitioned, upserts across schemas, a drop and a delete.
    let p = create(&db, "altered_pk", pk_schema());
    write(
        &p,
        &[
            json!({"k": 1, "p": "x", "v": 10, "s": "one"}),
            json!({"k": 2, "p": "y", "v": 20, "s": "two"}),
            json!({"k": 3, "p": "y", "v": 30, "s": "three"}),
        ],
    );
    ok(&[
        "alter",
        &p,
        "--add-column",
        "w STRING AFTER k",
        "--alter-type",
        "v BIGINT",
        "--drop-column",
        "s",
    ]);
    write(
        &p,
        &[json!({"k": 2, "p": "y", "w": "new", "v": 7_000_000_000_i64})],
    );
    ok(&["delete", &p, "--where", "k = 3"]);
    for (name, loc) in [("altered_append", &a), ("altered_pk", &p)] {
        let table = Table::open(loc).await.unwrap();
        let mut rows = Vec::new();
        for b in table.scan().to_batches().await.unwrap() {
            rows.extend(canonical::rows(&b).unwrap());
        }
        let exp = json!({"format_version": 1, "table": name, "database": "corpus",
                         "path": format!("corpus.db/{name}"), "rows": rows});
        std::fs::write(
            dir.path().join(format!("{name}.expected.json")),
            exp.to_string(),
        )
        .unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/pypaimon_read_back.py");
    let out = Command::new(python)
        .arg(script)
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("2 passed, 0 failed"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
