//! SQL through DataFusion (`paimon_native::sql`): query results against DataFusion over our
//! own scan output, pushdown seen in the store's reads, INSERT read back by pypaimon and
//! Java, failing inserts, and the `sql` CLI verb.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::{Int32Array, RecordBatch, StringArray};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use paimon_native::Table;
use paimon_native::sql::{self, PaimonTableProvider};

use crate::restore::{batch, recorded_table, write_commit};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables/corpus.db")
}

/// Every row of the batches as text (`a|b|c`), sorted.
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let formatters: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            let cells: Vec<String> = formatters.iter().map(|f| f.value(r).to_string()).collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}

async fn collect(ctx: &SessionContext, query: &str) -> Result<Vec<RecordBatch>, String> {
    match ctx.sql(query).await {
        Ok(frame) => frame.collect().await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A column's name quoted for SQL.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn orderable(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(_, _)
            | DataType::Utf8
            | DataType::Date32
            | DataType::Timestamp(_, _)
    )
}

/// Queries over table `t` that use its columns: filters, group-by, order, limit, joins.
fn queries(schema: &SchemaRef) -> Vec<String> {
    let fields = schema.fields();
    let int = fields
        .iter()
        .find(|f| matches!(f.data_type(), DataType::Int32 | DataType::Int64))
        .map(|f| quoted(f.name()));
    let string = fields
        .iter()
        .find(|f| f.data_type() == &DataType::Utf8)
        .map(|f| quoted(f.name()));
    let plain: Vec<String> = fields
        .iter()
        .filter(|f| orderable(f.data_type()))
        .map(|f| quoted(f.name()))
        .collect();
    let blob: Vec<String> = fields
        .iter()
        .filter(|f| f.data_type() == &DataType::LargeBinary)
        .map(|f| quoted(f.name()))
        .collect();
    let mut q = vec![
        "SELECT * FROM t".to_string(),
        "SELECT count(*) FROM t".to_string(),
    ];
    if !plain.is_empty() {
        let cols = plain.join(", ");
        q.push(format!("SELECT {cols} FROM t"));
        q.push(format!(
            "SELECT {cols} FROM t ORDER BY {} LIMIT 3",
            plain
                .iter()
                .map(|c| format!("{c} DESC NULLS LAST"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(b) = blob.first() {
        // The blob column projected alone, and its length next to a key.
        q.push(format!("SELECT {b} FROM t"));
        q.push(format!("SELECT octet_length({b}) AS n FROM t"));
    }
    if let Some(c) = &int {
        q.push(format!("SELECT * FROM t WHERE {c} > 1"));
        q.push(format!(
            "SELECT * FROM t WHERE {c} BETWEEN 2 AND 4 OR {c} IS NULL"
        ));
        q.push(format!(
            "SELECT {c} FROM t WHERE {c} IN (1, 3, 5) AND NOT {c} = 3"
        ));
        q.push(format!("SELECT * FROM t WHERE {c} % 2 = 0"));
        q.push(format!(
            "SELECT a.{c}, count(*) AS n FROM t a JOIN t b ON a.{c} = b.{c} GROUP BY a.{c}"
        ));
        q.push(format!("SELECT {c} FROM t WHERE {c} > 1 LIMIT 2"));
    }
    if let Some(s) = &string {
        q.push(format!(
            "SELECT {s}, count(*) AS n FROM t WHERE {s} IS NOT NULL GROUP BY {s} HAVING count(*) >= 1"
        ));
        q.push(format!("SELECT * FROM t WHERE {s} LIKE 'a%'"));
        if let Some(c) = &int {
            q.push(format!(
                "SELECT {s}, sum({c}) AS total, max({c}) AS top FROM t GROUP BY {s} ORDER BY total DESC NULLS LAST"
            ));
        }
    }
    q
}

/// Every corpus table of every kind (append, each merge engine, deletion vectors, data
/// evolution, blob tables): each query gives the rows DataFusion gives over our scan output
/// materialised as an in-memory table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_queries_equal_datafusion_over_the_scan_output() {
    let mut names: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 40, "{names:?}");
    let mut checked = 0;
    for name in &names {
        let location = corpus().join(name);
        let table = Table::open(location.to_str().unwrap()).await.unwrap();
        let provider = PaimonTableProvider::try_new(table.scan()).await.unwrap();
        let schema = datafusion::datasource::TableProvider::schema(&provider);
        let ours = sql::session();
        ours.register_table("t", Arc::new(provider)).unwrap();
        let batches = table.scan().to_batches().await.unwrap();
        let reference = SessionContext::new();
        let mem = MemTable::try_new(Arc::clone(&schema), vec![batches]).unwrap();
        reference.register_table("t", Arc::new(mem)).unwrap();
        let partitions = partition_literals(&table, &reference).await;
        let mut qs = queries(&schema);
        if let Some(p) = first_partition_key(&table).await {
            for v in partitions.iter().take(1) {
                qs.push(format!("SELECT * FROM t WHERE {} = {v}", quoted(&p)));
            }
        }
        for q in qs {
            let want = collect(&reference, &q).await;
            let got = collect(&ours, &q).await;
            match (want, got) {
                (Ok(w), Ok(g)) => {
                    assert_eq!(rows(&g), rows(&w), "table {name}: {q}");
                    checked += 1;
                }
                (Err(w), Err(_)) => {
                    // DataFusion cannot run this query on this table's types (both fail).
                    let _ = w;
                }
                (w, g) => panic!("table {name}: {q}: reference {w:?}, ours {g:?}"),
            }
        }
    }
    assert!(checked > 300, "only {checked} queries compared");
}

async fn first_partition_key(table: &Table) -> Option<String> {
    table
        .schema()
        .await
        .unwrap()
        .partition_keys
        .first()
        .cloned()
}

/// SQL literals of the first partition key's values (read from the reference table).
async fn partition_literals(table: &Table, reference: &SessionContext) -> Vec<String> {
    let Some(p) = first_partition_key(table).await else {
        return Vec::new();
    };
    let q = format!(
        "SELECT DISTINCT {} FROM t WHERE {} IS NOT NULL",
        quoted(&p),
        quoted(&p)
    );
    let batches = collect(reference, &q).await.unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let col = b.column(0);
        for r in 0..b.num_rows() {
            let v = datafusion::common::ScalarValue::try_from_array(col, r).unwrap();
            out.push(match col.data_type() {
                DataType::Utf8 => format!("'{}'", v.to_string().replace('\'', "''")),
                DataType::Date32 => format!("DATE '{v}'"),
                _ => v.to_string(),
            });
        }
    }
    out.sort();
    out
}

fn data_reads(reads: &[String]) -> Vec<String> {
    reads
        .iter()
        .filter(|p| p.ends_with(".parquet"))
        .cloned()
        .collect()
}

/// A filter on the partition column reads only that partition's data files (the others are
/// pruned from the manifests), is exact (no filter above the scan) and says so in EXPLAIN.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_filter_reads_only_that_partitions_files() {
    let (table, store) = recorded_table(
        r#"{"fields": [{"name": "dt", "type": "STRING NOT NULL"}, {"name": "k", "type": "INT NOT NULL"},
        {"name": "v", "type": "STRING"}], "partitionKeys": ["dt"], "options": {"bucket": "-1"}}"#,
    )
    .await;
    for (i, dt) in ["2024-01-01", "2024-01-02", "2024-01-03"]
        .iter()
        .enumerate()
    {
        let base = i32::try_from(i).unwrap() * 100;
        write_commit(&table, &batch(dt, base..base + 100)).await;
    }
    let ctx = sql::session();
    sql::register_scan(&ctx, "t", table.scan()).await.unwrap();
    store.take_reads();
    let q = "SELECT count(*) AS n, min(k) AS lo FROM t WHERE dt = '2024-01-02'";
    let out = collect(&ctx, q).await.unwrap();
    assert_eq!(rows(&out), vec!["100|100".to_string()]);
    let reads = data_reads(&store.take_reads());
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert!(reads[0].starts_with("dt=2024-01-02/"), "{reads:?}");

    // The plan: one scan, its filter exact (no FilterExec), two files pruned by partition.
    let frame = ctx
        .sql("SELECT k FROM t WHERE dt = '2024-01-02' AND k > 150")
        .await
        .unwrap();
    let plan = frame.create_physical_plan().await.unwrap();
    let text = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string();
    assert!(!text.contains("FilterExec"), "{text}");
    assert!(
        text.contains("filters=[dt = '2024-01-02' (exact), k > 150 (exact)]"),
        "{text}"
    );
    assert!(
        text.contains("files=1 of 3 (pruned 2 by partition, 0 by stats)"),
        "{text}"
    );
    // A filter DataFusion keeps (a function of a column) is not pushed.
    let frame = ctx
        .sql("SELECT k FROM t WHERE upper(v) = 'V7'")
        .await
        .unwrap();
    let plan = frame.create_physical_plan().await.unwrap();
    let text = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string();
    assert!(text.contains("FilterExec"), "{text}");
    assert!(text.contains("filters=[]"), "{text}");
}

/// `LIMIT 10` over a 1 M-row table of four buckets (four splits) reads one split's data file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_reads_one_split() {
    let (table, store) = recorded_table(
        r#"{"fields": [{"name": "dt", "type": "STRING NOT NULL"}, {"name": "k", "type": "INT NOT NULL"},
        {"name": "v", "type": "STRING"}], "options": {"bucket": "4", "bucket-key": "k"}}"#,
    )
    .await;
    write_commit(&table, &batch("x", 0..1_000_000)).await;
    let plan = table.scan().plan().await.unwrap();
    assert_eq!(plan.splits.len(), 4);
    let ctx = sql::session();
    sql::register_scan(&ctx, "t", table.scan()).await.unwrap();
    store.take_reads();
    let out = collect(&ctx, "SELECT k, v FROM t LIMIT 10").await.unwrap();
    assert_eq!(rows(&out).len(), 10);
    let reads = data_reads(&store.take_reads());
    let files: std::collections::BTreeSet<&String> = reads.iter().collect();
    assert_eq!(files.len(), 1, "{reads:?}");
    // Without a limit every split is read, over two partitions.
    let out = collect(&ctx, "SELECT count(*) FROM t WHERE k >= 0")
        .await
        .unwrap();
    assert_eq!(rows(&out), vec!["1000000".to_string()]);
    let reads = data_reads(&store.take_reads());
    let files: std::collections::BTreeSet<&String> = reads.iter().collect();
    assert_eq!(files.len(), 4, "{reads:?}");
}

/// The system tables have Java's columns and this table's rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_tables_answer_sql() {
    let ctx = sql::session();
    let location = corpus().join("append_tags_rollback");
    sql::register_table(&ctx, "t", location.to_str().unwrap())
        .await
        .unwrap();
    let table = Table::open(location.to_str().unwrap()).await.unwrap();
    let snapshots = table.snapshots().await.unwrap();
    let out = collect(&ctx, "SELECT snapshot_id, commit_kind FROM t$snapshots")
        .await
        .unwrap();
    let want: Vec<String> = snapshots
        .iter()
        .map(|s| format!("{}|{}", s.id, s.commit_kind))
        .collect();
    let mut want = want;
    want.sort();
    assert_eq!(rows(&out), want);
    let tags = table.tags().await.unwrap();
    let out = collect(&ctx, "SELECT tag_name, snapshot_id FROM t$tags")
        .await
        .unwrap();
    let mut want: Vec<String> = tags
        .iter()
        .map(|(n, t)| format!("{n}|{}", t.snapshot.id))
        .collect();
    want.sort();
    assert_eq!(rows(&out), want);
    let files = table.scan().files().await.unwrap();
    let out = collect(&ctx, "SELECT sum(record_count), count(*) FROM t$files")
        .await
        .unwrap();
    let total: i64 = files.iter().map(|f| f.record_count).sum();
    assert_eq!(rows(&out), vec![format!("{total}|{}", files.len())]);
    let out = collect(&ctx, "SELECT schema_id, primary_keys FROM t$schemas")
        .await
        .unwrap();
    assert_eq!(rows(&out), vec!["0|[]".to_string()]);
    let out = collect(&ctx, "SELECT count(*) FROM t$manifests")
        .await
        .unwrap();
    let manifests = table.scan().manifest_rows().await.unwrap();
    assert_eq!(rows(&out), vec![manifests.len().to_string()]);
    // Column names and order as Java's FilesTable.
    let out = collect(&ctx, "SELECT * FROM t$files LIMIT 0")
        .await
        .unwrap();
    let names: Vec<String> = out
        .first()
        .map(|b| {
            b.schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect()
        })
        .unwrap_or_default();
    if !names.is_empty() {
        assert_eq!(names[16], "deleteRowCount");
    }
}

fn schema_json(pk: bool) -> String {
    let pk = if pk {
        r#", "primaryKeys": ["dt", "k"], "options": {"bucket": "2"}"#
    } else {
        r#", "options": {"bucket": "-1"}"#
    };
    format!(
        r#"{{"fields": [{{"name": "dt", "type": "STRING NOT NULL"}}, {{"name": "k", "type": "INT NOT NULL"}},
        {{"name": "v", "type": "STRING"}}, {{"name": "n", "type": "BIGINT"}}], "partitionKeys": ["dt"]{pk}}}"#
    )
}

/// Our own rows of a table as canonical JSON, sorted (as the oracles print them).
async fn our_rows(dir: &Path) -> Vec<String> {
    let table = Table::open(dir.to_str().unwrap()).await.unwrap();
    let batches = table.scan().to_batches().await.unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let mut buf = Vec::new();
        let mut w = arrow_json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow_json::writer::LineDelimited>(&mut buf);
        w.write(b).unwrap();
        w.finish().unwrap();
        for line in String::from_utf8(buf).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            out.push(v);
        }
    }
    crate::oracle::sorted_strings(&out)
}

/// `INSERT INTO` (VALUES and SELECT) and `INSERT OVERWRITE` into an append and a primary-key
/// table, each one commit; pypaimon and Java read what we read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_commit_once_and_other_readers_agree() {
    let dir = tempfile::tempdir().unwrap();
    for (name, pk) in [("append_t", false), ("pk_t", true)] {
        let loc = dir.path().join("wh/db.db").join(name);
        Table::create(loc.to_str().unwrap(), schema_json(pk).as_bytes())
            .await
            .unwrap();
    }
    let ctx = sql::session();
    sql::register_warehouse(&ctx, dir.path().join("wh").to_str().unwrap())
        .await
        .unwrap();
    let out = collect(
        &ctx,
        "INSERT INTO db.append_t VALUES ('a', 1, 'x', 10), ('a', 2, NULL, 20), ('b', 3, 'z', NULL)",
    )
    .await
    .unwrap();
    assert_eq!(rows(&out), vec!["3".to_string()]);
    collect(
        &ctx,
        "INSERT INTO db.pk_t SELECT dt, k, v, n FROM db.append_t",
    )
    .await
    .unwrap();
    collect(
        &ctx,
        "INSERT INTO db.pk_t VALUES ('a', 1, 'updated', 11), ('c', 9, 'new', 90)",
    )
    .await
    .unwrap();
    // Overwrite partition 'b' of the append table (dynamic partition overwrite).
    collect(
        &ctx,
        "INSERT OVERWRITE db.append_t SELECT 'b', 30, 'over', CAST(300 AS BIGINT)",
    )
    .await
    .unwrap();
    let pk = collect(&ctx, "SELECT dt, k, v, n FROM db.pk_t")
        .await
        .unwrap();
    assert_eq!(
        rows(&pk),
        vec!["a|1|updated|11", "a|2|NULL|20", "b|3|z|NULL", "c|9|new|90"]
    );
    let ap = collect(&ctx, "SELECT dt, k, v, n FROM db.append_t")
        .await
        .unwrap();
    assert_eq!(rows(&ap), vec!["a|1|x|10", "a|2|NULL|20", "b|30|over|300"]);
    // One snapshot per statement.
    let snaps = collect(&ctx, "SELECT commit_kind FROM db.append_t$snapshots")
        .await
        .unwrap();
    assert_eq!(rows(&snaps), vec!["APPEND", "OVERWRITE"]);
    for name in ["append_t", "pk_t"] {
        let loc = dir.path().join("wh/db.db").join(name);
        let ours = our_rows(&loc).await;
        assert_eq!(ours.len(), if name == "pk_t" { 4 } else { 3 });
        if let Some(py) = crate::oracle::pypaimon_rows(&loc) {
            assert_eq!(py, ours, "pypaimon reads {name}");
        }
        if let Some(java) = crate::oracle::java_rows(&loc) {
            assert_eq!(java, ours, "Java reads {name}");
        }
    }
}

/// An insert whose input fails after files were written leaves no snapshot and no file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_insert_leaves_nothing_visible() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let schema = r#"{"fields": [{"name": "k", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}],
        "options": {"bucket": "-1", "target-file-size": "1 kb"}}"#;
    let table = Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap();
    let ctx = sql::session();
    sql::register_table(&ctx, "t", loc.to_str().unwrap())
        .await
        .unwrap();
    collect(&ctx, "INSERT INTO t VALUES (1, 'kept')")
        .await
        .unwrap();
    let files_before = count_files(&loc);
    // A source whose second batch holds a NULL key: the first batch's rows roll into files.
    let src = Schema::new(vec![
        Field::new("k", DataType::Int32, true),
        Field::new("v", DataType::Utf8, true),
    ]);
    let good = RecordBatch::try_new(
        Arc::new(src.clone()),
        vec![
            Arc::new(Int32Array::from_iter_values(0..5_000)),
            Arc::new(StringArray::from_iter_values(
                (0..5_000).map(|i| format!("row {i}")),
            )),
        ],
    )
    .unwrap();
    let bad = RecordBatch::try_new(
        Arc::new(src.clone()),
        vec![
            Arc::new(Int32Array::from(vec![Some(1), None])),
            Arc::new(StringArray::from(vec![Some("a"), Some("b")])),
        ],
    )
    .unwrap();
    let mem = MemTable::try_new(Arc::new(src), vec![vec![good, bad]]).unwrap();
    ctx.register_table("src", Arc::new(mem)).unwrap();
    let err = collect(&ctx, "INSERT INTO t SELECT k, v FROM src")
        .await
        .unwrap_err();
    assert!(err.contains("non-nullable"), "{err}");
    assert_eq!(count_files(&loc), files_before, "{err}");
    assert_eq!(table.snapshots().await.unwrap().len(), 1);
    let out = collect(&ctx, "SELECT * FROM t").await.unwrap();
    assert_eq!(rows(&out), vec!["1|kept"]);
    // A table opened at a snapshot takes no INSERT.
    sql::register_scan(&ctx, "old", table.scan().with_snapshot_id(1))
        .await
        .unwrap();
    let err = collect(&ctx, "INSERT INTO old VALUES (2, 'x')")
        .await
        .unwrap_err();
    assert!(
        err.contains("INSERT needs the table at its latest snapshot"),
        "{err}"
    );
}

fn count_files(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            n += count_files(&e.path());
        } else {
            n += 1;
        }
    }
    n
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(args)
        .output()
        .unwrap()
}

/// `paimon-kernel sql`: rows, formats, `--explain`, and clear errors with exit code 1.
#[test]
fn the_sql_verb_runs_queries_and_reports_errors() {
    let t = format!(
        "t={}",
        corpus().join("append_partitioned").to_str().unwrap()
    );
    let out = cli(&[
        "sql",
        "SELECT count(*) AS n FROM t",
        "--table",
        &t,
        "--format",
        "jsonl",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let table = corpus().join("append_partitioned");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let want = rt.block_on(async {
        let t = Table::open(table.to_str().unwrap()).await.unwrap();
        t.scan()
            .to_batches()
            .await
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>()
    });
    assert_eq!(n["n"], serde_json::json!(want));

    let schema = rt.block_on(async {
        Table::open(table.to_str().unwrap())
            .await
            .unwrap()
            .schema()
            .await
            .unwrap()
    });
    let p = schema.partition_keys[0].clone();
    let out = cli(&[
        "sql",
        &format!("SELECT * FROM t WHERE \"{p}\" IS NULL"),
        "--table",
        &t,
        "--explain",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PaimonScanExec"), "{text}");
    assert!(
        text.contains(&format!("filter pushed: {p} IS NULL (exact")),
        "{text}"
    );
    assert!(text.contains("by partition"), "{text}");

    let warehouse = corpus().parent().unwrap().to_str().unwrap().to_string();
    let out = cli(&[
        "sql",
        "SELECT count(*) FROM corpus.pk_dedup",
        "--warehouse",
        &warehouse,
        "--format",
        "csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mismatch = format!("SELECT * FROM t WHERE \"{p}\" = 'x' + 1");
    for (query, needle) in [
        ("SELEC 1", "SQL"),
        ("SELECT * FROM nope", "nope"),
        ("SELECT no_such_column FROM t", "no_such_column"),
        (mismatch.as_str(), "Utf8"),
    ] {
        let out = cli(&["sql", query, "--table", &t]);
        assert_eq!(out.status.code(), Some(1), "{query}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: "), "{query}: {err}");
        assert!(err.contains(needle), "{query}: {err}");
    }
    let out = cli(&["sql", "SELECT 1", "--table", "no-equals-sign"]);
    assert_eq!(out.status.code(), Some(1));
}
