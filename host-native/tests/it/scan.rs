//! `paimon-kernel scan` over corpus tables: every output format checked for real values from
//! `<table>.expected.json`, filters, limits, projections, time travel, and bad input (missing
//! or truncated data files, unknown columns, bad filters) failing with a precise message.

use crate::copy_dir;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn table_dir(name: &str) -> String {
    corpus()
        .join("corpus.db")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(corpus().join(format!("{name}.expected.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn expected_read(name: &str, label: &str) -> Vec<Value> {
    let exp = expected(name);
    if label == "latest" {
        return exp["rows"].as_array().unwrap().clone();
    }
    exp["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("{name} has no read {label}"))["rows"]
        .as_array()
        .unwrap()
        .clone()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(args)
        .env("COLUMNS", "120")
        .output()
        .unwrap()
}

fn stdout_ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Run and expect failure: exit code 1, no panic, the stderr text.
fn stderr_err(args: &[&str]) -> String {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    err
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn sorted(rows: Vec<Value>) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(Value::to_string).collect();
    v.sort();
    v
}

/// Rows of `want` with only `columns`, in that order.
fn project(want: &[Value], columns: &[&str]) -> Vec<Value> {
    want.iter()
        .map(|r| {
            let mut o = serde_json::Map::new();
            for c in columns {
                o.insert(c.to_string(), r[*c].clone());
            }
            Value::Object(o)
        })
        .collect()
}

#[test]
fn jsonl_returns_the_expected_rows_of_primary_key_and_append_tables() {
    // Types whose arrow-json rendering is the canonical one (ints, doubles, strings).
    for table in [
        "pk_dedup",
        "pk_dedup_avro",
        "pk_dedup_orc",
        "pk_partial_update",
        "pk_first_row",
        "pk_dv",
    ] {
        let got = jsonl(&stdout_ok(&[
            "scan",
            &table_dir(table),
            "--format",
            "jsonl",
        ]));
        let want = expected_read(table, "latest");
        assert_eq!(sorted(got), sorted(want), "{table}");
    }
}

#[test]
fn projection_where_and_limit() {
    let t = table_dir("pk_dedup");
    let want = expected_read("pk_dedup", "latest");
    // --columns keeps the asked order.
    let out = stdout_ok(&["scan", &t, "--format", "jsonl", "--columns", "val,k"]);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("{\"val\":"), "{first}");
    assert_eq!(sorted(jsonl(&out)), sorted(project(&want, &["val", "k"])));
    // --where on the merged rows.
    let got = jsonl(&stdout_ok(&[
        "scan",
        &t,
        "--format",
        "jsonl",
        "--where",
        "k > 300 OR name IS NULL",
    ]));
    let keep: Vec<Value> = want
        .iter()
        .filter(|r| r["k"].as_i64().unwrap() > 300 || r["name"].is_null())
        .cloned()
        .collect();
    assert!(keep.len() >= 3 && keep.len() < want.len());
    assert_eq!(sorted(got), sorted(keep));
    // --limit: exactly N rows, each a real row.
    for n in [0usize, 1, 3, 100] {
        let got = jsonl(&stdout_ok(&[
            "scan",
            &t,
            "--format",
            "jsonl",
            "--limit",
            &n.to_string(),
            "--batch-size",
            "2",
        ]));
        assert_eq!(got.len(), n.min(want.len()), "--limit {n}");
        for r in &got {
            assert!(want.contains(r), "--limit {n}: {r} is not a row");
        }
    }
}

#[test]
fn time_travel_by_snapshot_tag_and_timestamp() {
    let t = table_dir("append_tags_rollback");
    for (args, label) in [
        (vec!["--snapshot", "2"], "snapshot-2"),
        (vec!["--tag", "v1"], "tag-v1"),
        (vec!["--tag", "v4"], "tag-v4"),
    ] {
        let mut all = vec!["scan", t.as_str(), "--format", "jsonl"];
        all.extend(args);
        let got = jsonl(&stdout_ok(&all));
        let want = expected_read("append_tags_rollback", label);
        assert_eq!(sorted(got), sorted(want), "{label}");
    }
    // --timestamp-millis: the commit time of snapshot 1 reads snapshot 1.
    let pk = table_dir("pk_dedup");
    let snap: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&pk).join("snapshot/snapshot-1")).unwrap(),
    )
    .unwrap();
    let millis = snap["timeMillis"].as_i64().unwrap().to_string();
    let got = jsonl(&stdout_ok(&[
        "scan",
        &pk,
        "--format",
        "jsonl",
        "--timestamp-millis",
        &millis,
    ]));
    assert_eq!(sorted(got), sorted(expected_read("pk_dedup", "snapshot-1")));
    let err = stderr_err(&["scan", &pk, "--snapshot", "99"]);
    assert!(err.contains("99"), "{err}");
}

#[test]
fn row_id_column_on_row_tracking_tables() {
    let t = table_dir("append_row_tracking");
    let got = jsonl(&stdout_ok(&[
        "scan",
        &t,
        "--format",
        "jsonl",
        "--columns",
        "_ROW_ID,id,v",
    ]));
    assert_eq!(
        sorted(got),
        sorted(expected_read("append_row_tracking", "latest-with-row-id"))
    );
    let err = stderr_err(&["scan", &table_dir("pk_dedup"), "--columns", "_ROW_ID"]);
    assert!(
        err.contains("_ROW_ID") && err.contains("row-tracking"),
        "{err}"
    );
}

#[test]
fn csv_has_a_header_and_the_values() {
    let t = table_dir("append_parquet");
    let out = stdout_ok(&[
        "scan",
        &t,
        "--format",
        "csv",
        "--columns",
        "id,name,day,price",
    ]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("id,name,day,price"));
    let mut got: Vec<String> = lines.map(str::to_string).collect();
    let text = |v: &Value| match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut want: Vec<String> = expected_read("append_parquet", "latest")
        .iter()
        .map(|r| {
            ["id", "name", "day", "price"]
                .iter()
                .map(|c| text(&r[*c]))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    // Nested values become text; every row is there.
    let out = stdout_ok(&["scan", &table_dir("all_types_parquet"), "--format", "csv"]);
    for r in expected_read("all_types_parquet", "latest") {
        let id = format!("{},", r["id"]);
        assert!(
            out.lines().any(|l| l.starts_with(&id)),
            "row {id} missing: {out}"
        );
    }
    assert!(out.contains("héllo wörld"), "{out}");
    assert!(out.contains("\"[1, null, 3]\""), "{out}");
}

#[test]
fn human_table_shows_values_and_splits_wide_rows() {
    let out = stdout_ok(&["scan", &table_dir("pk_dedup")]);
    let want = expected_read("pk_dedup", "latest");
    let header = out.lines().next().unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["k", "name", "val", "cnt", "op"]
    );
    for r in &want {
        let k = r["k"].to_string();
        let name = r["name"].as_str().unwrap_or("NULL");
        assert!(
            out.lines().any(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                cells.first() == Some(&k.as_str()) && cells.get(1) == Some(&name)
            }),
            "row {r} missing in\n{out}"
        );
    }
    assert!(out.ends_with(&format!("({} rows)\n", want.len())), "{out}");
    // all_types has 36 columns: several tables, each line within 120 characters.
    let out = stdout_ok(&["scan", &table_dir("all_types_parquet")]);
    assert!(out.lines().all(|l| l.chars().count() <= 120), "{out}");
    let headers = out
        .lines()
        .filter(|l| l.starts_with("id ") || l.starts_with("t_"))
        .count();
    assert!(headers >= 2, "{out}");
    assert!(out.contains("t_array_row"), "{out}");
    // An empty result still shows the header.
    let out = stdout_ok(&["scan", &table_dir("pk_dedup"), "--where", "k < -1000"]);
    assert!(out.starts_with("k "), "{out}");
    assert!(out.ends_with("(0 rows)\n"), "{out}");
}

#[test]
fn arrow_stream_has_the_schema_even_without_rows() {
    let out = run(&[
        "scan",
        &table_dir("pk_dedup"),
        "--format",
        "arrow",
        "--where",
        "k < -1000",
        "--columns",
        "name,k",
    ]);
    assert!(out.status.success());
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(out.stdout), None).unwrap();
    let names: Vec<String> = reader
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["name", "k"]);
    assert_eq!(reader.map(|b| b.unwrap().num_rows()).sum::<usize>(), 0);
    // --output writes the same stream to a file.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.arrow");
    stdout_ok(&[
        "scan",
        &table_dir("pk_dedup"),
        "--format",
        "arrow",
        "--output",
        file.to_str().unwrap(),
    ]);
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::fs::File::open(&file).unwrap(), None)
            .unwrap();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, expected_read("pk_dedup", "latest").len());
}

#[test]
fn count_format_prints_the_rows_read() {
    let expected = expected_read("pk_dedup", "latest").len();
    assert!(expected > 0);
    let out = stdout_ok(&["scan", &table_dir("pk_dedup"), "--format", "count"]);
    assert_eq!(out, format!("{expected}\n"));
    let out = stdout_ok(&[
        "scan",
        &table_dir("pk_dedup"),
        "--format",
        "count",
        "--where",
        "k < -1000",
    ]);
    assert_eq!(out, "0\n");
    let out = stdout_ok(&[
        "scan",
        &table_dir("pk_dedup"),
        "--format",
        "count",
        "--limit",
        "1",
    ]);
    assert_eq!(out, "1\n");
}

fn first_data_file(table: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(table.join("bucket-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    files.remove(0)
}

#[test]
fn bad_input_fails_with_a_message_naming_the_file_or_column() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("append_parquet");
    copy_dir(Path::new(&table_dir("append_parquet")), &table);
    let t = table.to_str().unwrap();

    let err = stderr_err(&["scan", t, "--columns", "id,nope"]);
    assert!(err.contains("nope"), "{err}");
    let err = stderr_err(&["scan", t, "--where", "id >"]);
    assert!(err.contains("invalid filter"), "{err}");
    let err = stderr_err(&["scan", t, "--where", "missing_col = 1"]);
    assert!(err.contains("missing_col"), "{err}");

    // A truncated parquet file.
    let victim = first_data_file(&table);
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();
    for format in ["jsonl", "arrow", "table", "csv"] {
        let err = stderr_err(&["scan", t, "--format", format]);
        assert!(err.contains(&name), "{format}: {err}");
    }
    // A missing data file.
    std::fs::remove_file(&victim).unwrap();
    let err = stderr_err(&["scan", t, "--format", "jsonl"]);
    assert!(err.contains(&name) && err.contains("not found"), "{err}");
    // Not a table.
    let err = stderr_err(&["scan", dir.path().to_str().unwrap()]);
    assert!(err.contains("no Paimon table"), "{err}");
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(["scan", &table_dir("pk_dedup"), "--format", "jsonl"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!(err, "");
}

/// Library API: reading splits in parallel gives the same batches in the same order as one
/// split at a time; the limit returns the first rows of that order; on both runtime flavors.
async fn parallel_read_matches_serial_read(table: &str) {
    use paimon_native::Table;
    let t = Table::open(&table_dir(table)).await.unwrap();
    let plan = t.scan().plan().await.unwrap();
    assert!(
        plan.splits.len() >= 2,
        "{table}: {} splits",
        plan.splits.len()
    );
    let serial = t
        .scan()
        .with_splits_in_flight(1)
        .with_batch_size(3)
        .to_batches()
        .await
        .unwrap();
    let parallel = t
        .scan()
        .with_splits_in_flight(4)
        .with_batch_size(3)
        .to_batches()
        .await
        .unwrap();
    assert_eq!(serial, parallel, "{table}");
    parts_match_whole_splits(table).await;
    let rows: usize = serial.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, expected_read(table, "latest").len(), "{table}");
    assert!(serial.iter().all(|b| b.num_rows() <= 3));
    let schema = serial[0].schema();
    let all = arrow_select::concat::concat_batches(&schema, &serial).unwrap();
    for limit in [1usize, 4, rows - 1] {
        let limited = t
            .scan()
            .with_limit(limit as u64)
            .with_batch_size(3)
            .to_batches()
            .await
            .unwrap();
        let got = arrow_select::concat::concat_batches(&schema, &limited).unwrap();
        assert_eq!(got, all.slice(0, limit), "{table} limit {limit}");
    }
}

/// Files of append splits are read as separate parts, concurrently: the batches equal the
/// core's whole-split machine reading the splits one after the other, whatever the
/// read-ahead budget.
async fn parts_match_whole_splits(table: &str) {
    use paimon_native::Table;
    let t = Table::open(&table_dir(table)).await.unwrap();
    let plan = t.scan().plan().await.unwrap();
    let ctx = std::sync::Arc::new(
        paimon_kernel::read::ReadContext::try_new(&plan, None, None, None, 3).unwrap(),
    );
    let whole = t
        .host()
        .run_to_vec(paimon_kernel::read::read_splits(
            std::sync::Arc::clone(&ctx),
            plan.splits.clone(),
        ))
        .await
        .unwrap();
    assert!(!whole.is_empty(), "{table}");
    // Part cutting: consecutive files in order, each part closed as soon as it reaches the
    // minimum (only the last part may stay below it), deletion files kept aligned.
    for min_part in [0i64, 1000, 3000, paimon_kernel::read::MIN_PART_BYTES] {
        for split in &plan.splits {
            let parts = paimon_kernel::read::independent_parts(&ctx, split.clone(), min_part);
            let files: Vec<_> = parts.iter().flat_map(|p| p.data_files.clone()).collect();
            assert_eq!(files, split.data_files, "{table} min {min_part}");
            let dvs: Option<Vec<_>> = split.deletion_files.as_ref().map(|_| {
                parts
                    .iter()
                    .flat_map(|p| p.deletion_files.clone().unwrap())
                    .collect()
            });
            assert_eq!(dvs, split.deletion_files, "{table} min {min_part}");
            if parts.len() > 1 {
                for (i, p) in parts.iter().enumerate() {
                    let sizes: Vec<i64> = p.data_files.iter().map(|f| f.file_size).collect();
                    let total: i64 = sizes.iter().sum();
                    let before_last: i64 = total - sizes.last().unwrap();
                    assert!(before_last < min_part.max(1), "{table}: part {i} {sizes:?}");
                    if i + 1 < parts.len() {
                        assert!(total >= min_part, "{table}: part {i} {sizes:?}");
                    }
                }
            }
        }
    }
    // 1 byte: parts behind the front one queue nothing; 1 GiB: no effective bound.
    for (in_flight, read_ahead, min_part) in [
        (1, 0, 0),
        (3, 1usize, 0),
        (3, 1 << 30, 0),
        (3, 1, 1000),
        (3, 1, paimon_kernel::read::MIN_PART_BYTES),
    ] {
        let got = t
            .scan()
            .with_splits_in_flight(in_flight)
            .with_read_ahead_bytes(read_ahead)
            .with_min_part_bytes(min_part)
            .with_batch_size(3)
            .to_batches()
            .await
            .unwrap();
        assert_eq!(
            got, whole,
            "{table} in flight {in_flight} read-ahead {read_ahead} min part {min_part}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parts_of_append_splits_keep_file_order() {
    for table in [
        "append_partitioned",
        "append_fixed_bucket",
        "append_tags_rollback",
        "evo_append",
        "de_dv_delete",
        "blob_update",
        "pk_dedup_partitioned",
    ] {
        parts_match_whole_splits(table).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_reads_keep_split_order_multi_thread() {
    for table in [
        "append_partitioned",
        "append_fixed_bucket",
        "pk_dedup_partitioned",
        "pk_dynamic_bucket",
    ] {
        parallel_read_matches_serial_read(table).await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn parallel_reads_keep_split_order_current_thread() {
    parallel_read_matches_serial_read("append_partitioned").await;
}

#[tokio::test]
async fn library_errors_name_the_column_and_the_filter() {
    use paimon_native::Table;
    let t = Table::open(&table_dir("pk_dedup")).await.unwrap();
    let err = t
        .scan()
        .with_projection(["k", "nope"])
        .to_stream()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    let err = t.scan().with_filter("k >").plan().await.unwrap_err();
    assert!(err.to_string().contains("invalid filter"), "{err}");
    let p = paimon_kernel::predicate::Predicate::parse("k = 4").unwrap();
    let got = t.scan().with_filter(p).to_batches().await.unwrap();
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
}

#[test]
fn jsonl_refuses_nan_and_infinity_instead_of_writing_null() {
    // all_types_parquet holds NaN and +/-Infinity in t_float / t_double.
    let err = stderr_err(&["scan", &table_dir("all_types_parquet"), "--format", "jsonl"]);
    assert!(err.contains("NaN or infinite"), "{err}");
    assert!(err.contains("t_float") || err.contains("t_double"), "{err}");
    // Without those columns the same read works.
    let out = stdout_ok(&[
        "scan",
        &table_dir("all_types_parquet"),
        "--format",
        "jsonl",
        "--columns",
        "id",
    ]);
    assert_eq!(jsonl(&out).len(), 8);
}
