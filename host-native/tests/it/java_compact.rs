//! Append and data-evolution compaction against Java Paimon 2.0.0's coordinators
//! (`AppendCompactCoordinator`, `DataEvolutionCompactCoordinator`; java-check `plan --append` /
//! `plan --data-evolution` and `write compact`, all Java steps of the test in two JVMs through
//! `batch`): for every table, our plan has Java's tasks (the same input files per task, each
//! task's files in Java's order), our compaction and Java's on copies of the same table leave
//! the same files (row counts, row-id ranges, sequence ranges, levels, write columns; names
//! aside) and the same rows, Java reads our outputs and we read Java's.

use std::collections::BTreeMap;
use std::path::Path;

use paimon_kernel::canonical;
use paimon_native::Table;
use paimon_native::compact_append::{AppendCompactOptions, run as compact_append};
use serde_json::{Value, json};

use crate::delete_dv::{create, ok, write};
use crate::oracle::{java_batch, jcmd, sorted_strings};

/// Our rows (with `_ROW_ID` on row-tracking tables), sorted canonical JSON lines.
async fn rows(loc: &str, columns: Option<&[&str]>) -> Vec<String> {
    let table = Table::open(loc).await.unwrap();
    let mut scan = table.scan();
    if let Some(c) = columns {
        scan = scan.with_projection(c.iter().copied());
    }
    sorted_strings(&canonical::batches_rows(&scan.to_batches().await.unwrap()).unwrap())
}

/// What the live files are, names aside: one line per file, sorted.
async fn layout(loc: &str) -> Vec<String> {
    let table = Table::open(loc).await.unwrap();
    let files = table.scan().data_files().await.unwrap().unwrap();
    let mut out: Vec<String> = files
        .entries
        .iter()
        .map(|e| {
            let f = &e.file;
            json!({
                "partition": hex(e.partition.row_bytes()),
                "bucket": e.bucket,
                "blob": f.file_name.ends_with(".blob"),
                "level": f.level,
                "rows": f.row_count,
                "first_row_id": f.first_row_id,
                "seq": [f.min_sequence_number, f.max_sequence_number],
                "write_cols": f.write_cols,
                "deletes": f.delete_row_count,
            })
            .to_string()
        })
        .collect();
    out.sort();
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Our plan: per task (partition JSON, sorted files), sorted.
async fn our_tasks(loc: &str) -> Vec<(String, Vec<String>)> {
    let table = Table::open(loc).await.unwrap();
    let plan = table.plan_compaction(false).await.unwrap();
    let mut v: Vec<(String, Vec<String>)> = plan
        .units
        .iter()
        .map(|u| {
            let mut f = u.files.clone();
            f.sort();
            (Value::Object(u.partition.clone()).to_string(), f)
        })
        .collect();
    v.sort();
    v
}

/// Java's plan lines as (partition JSON, files in task order).
fn java_tasks(lines: &[String]) -> Vec<(String, Vec<String>)> {
    lines
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let files = v["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_owned())
                .collect();
            (v["partition"].to_string(), files)
        })
        .collect()
}

struct Case {
    name: &'static str,
    loc: String,
    de: bool,
}

fn rows_file(dir: &Path, name: &str, rows: &[Value]) -> String {
    let f = dir.join(name);
    std::fs::write(
        &f,
        rows.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
    f.to_str().unwrap().to_owned()
}

/// The tables: unaware-bucket append tables (partitioned, small target size so tasks split;
/// with deletion vectors after deletes), data-evolution tables (several row-id ranges, column
/// updates, a small target size so bins flush; one with a `.blob` column and
/// `blob-compaction.enabled`, one with deletion vectors).
fn build(dir: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    let big = |i: i64| "x".repeat(((i * 37) % 400) as usize);
    // 1. partitioned append, 7 commits of uneven sizes.
    let loc = create(
        dir,
        "append_parts",
        json!({"fields": [
            {"name": "id", "type": "INT"}, {"name": "p", "type": "STRING"},
            {"name": "s", "type": "STRING"}],
          "partitionKeys": ["p"],
          "options": {"bucket": "-1", "target-file-size": "4 kb", "compaction.min.file-num": "3"}}),
    );
    for c in 0..7i64 {
        let n = [3, 40, 5, 60, 2, 9, 30][c as usize];
        let rows: Vec<Value> = (0..n)
            .map(|i| {
                let id = c * 100 + i;
                json!({"id": id, "p": if id % 2 == 0 { "a" } else { "b" }, "s": big(id)})
            })
            .collect();
        write(&loc, &rows);
    }
    cases.push(Case {
        name: "append_parts",
        loc,
        de: false,
    });
    // 2. append with deletion vectors: deletes in several files.
    let loc = create(
        dir,
        "append_dv",
        json!({"fields": [{"name": "id", "type": "INT"}, {"name": "s", "type": "STRING"}],
          "options": {"bucket": "-1", "deletion-vectors.enabled": "true",
                      "compaction.min.file-num": "3", "target-file-size": "8 kb"}}),
    );
    for c in 0..5i64 {
        let rows: Vec<Value> = (0..20)
            .map(|i| json!({"id": c * 20 + i, "s": big(c * 20 + i)}))
            .collect();
        write(&loc, &rows);
    }
    ok(&["delete", &loc, "--where", "id < 5"]);
    ok(&["delete", &loc, "--where", "id >= 40 AND id < 55"]);
    cases.push(Case {
        name: "append_dv",
        loc,
        de: false,
    });
    // 3. data evolution: 6 row-id ranges, updates of two columns over some ranges.
    let de_schema = |extra: Value| {
        let mut options = json!({"row-tracking.enabled": "true", "data-evolution.enabled": "true",
                      "compaction.min.file-num": "2", "target-file-size": "6 kb"});
        for (k, v) in extra.as_object().unwrap() {
            options[k] = v.clone();
        }
        json!({"fields": [
            {"name": "id", "type": "INT"}, {"name": "s", "type": "STRING"},
            {"name": "v", "type": "BIGINT"}],
          "options": options})
    };
    let loc = create(dir, "de", de_schema(json!({})));
    for c in 0..6i64 {
        let n = [10, 50, 4, 30, 6, 8][c as usize];
        let rows: Vec<Value> = (0..n)
            .map(|i| json!({"id": c * 100 + i, "s": big(c * 100 + i), "v": i}))
            .collect();
        write(&loc, &rows);
    }
    let upd: Vec<Value> = [0i64, 3, 12, 70, 100]
        .iter()
        .map(|r| json!({"_ROW_ID": r, "v": r * 1000}))
        .collect();
    ok(&[
        "update",
        &loc,
        "--input",
        &rows_file(dir, "de-u1.jsonl", &upd),
    ]);
    let upd: Vec<Value> = [1i64, 64, 99]
        .iter()
        .map(|r| json!({"_ROW_ID": r, "s": format!("u{r}"), "v": -r}))
        .collect();
    ok(&[
        "update",
        &loc,
        "--input",
        &rows_file(dir, "de-u2.jsonl", &upd),
    ]);
    cases.push(Case {
        name: "de",
        loc,
        de: true,
    });
    // 4. data evolution with a `.blob` column, blob files compacted too.
    let loc = create(
        dir,
        "de_blob",
        json!({"fields": [
            {"name": "id", "type": "INT"}, {"name": "v", "type": "BIGINT"},
            {"name": "b", "type": "BLOB"}],
          "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
                      "compaction.min.file-num": "2", "blob-compaction.enabled": "true",
                      "blob.target-file-size": "300 b"}}),
    );
    for c in 0..4i64 {
        let rows: Vec<Value> = (0..6)
            .map(|i| {
                let id = c * 10 + i;
                json!({"id": id, "v": id, "b": hex(big(id).as_bytes())})
            })
            .collect();
        write(&loc, &rows);
    }
    let upd: Vec<Value> = [2i64, 9, 14]
        .iter()
        .map(|r| json!({"_ROW_ID": r, "b": hex(format!("new{r}").as_bytes())}))
        .collect();
    ok(&[
        "update",
        &loc,
        "--input",
        &rows_file(dir, "deb-u1.jsonl", &upd),
    ]);
    cases.push(Case {
        name: "de_blob",
        loc,
        de: true,
    });
    // 5. data evolution with deletion vectors.
    let loc = create(
        dir,
        "de_dv",
        de_schema(json!({"deletion-vectors.enabled": "true"})),
    );
    for c in 0..4i64 {
        let rows: Vec<Value> = (0..12)
            .map(|i| json!({"id": c * 100 + i, "s": big(c * 100 + i), "v": i}))
            .collect();
        write(&loc, &rows);
    }
    ok(&["delete", &loc, "--where", "id = 3 OR id = 105 OR id = 311"]);
    let upd: Vec<Value> = [0i64, 13, 40]
        .iter()
        .map(|r| json!({"_ROW_ID": r, "v": r * 7}))
        .collect();
    ok(&[
        "update",
        &loc,
        "--input",
        &rows_file(dir, "dedv-u1.jsonl", &upd),
    ]);
    cases.push(Case {
        name: "de_dv",
        loc,
        de: true,
    });
    cases
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_and_data_evolution_compaction_equals_javas_coordinators() {
    if crate::oracle::java_check("batch").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = build(dir.path());
    // Java's plans, and Java's compaction of a copy of each table.
    let mut commands = Vec::new();
    let mut java_copies = Vec::new();
    for c in &cases {
        let copy = dir.path().join(format!("{}-java", c.name));
        crate::copy_dir(Path::new(&c.loc), &copy);
        let mode = if c.de { "--data-evolution" } else { "--append" };
        commands.push(jcmd(&["plan", &c.loc, mode]));
        commands.push(jcmd(&["write", "compact", copy.to_str().unwrap()]));
        java_copies.push(copy.to_str().unwrap().to_owned());
    }
    let java = java_batch(&commands).unwrap();
    let mut before = Vec::new();
    let mut tasks = 0;
    for (i, c) in cases.iter().enumerate() {
        let planned = java_tasks(&java[2 * i].sorted(c.name));
        let mut sorted: Vec<(String, Vec<String>)> = planned
            .iter()
            .map(|(p, f)| {
                let mut f = f.clone();
                f.sort();
                (p.clone(), f)
            })
            .collect();
        sorted.sort();
        assert_eq!(our_tasks(&c.loc).await, sorted, "{}: plan", c.name);
        assert!(!planned.is_empty(), "{}: nothing to compact", c.name);
        tasks += planned.len();
        assert_eq!(
            java[2 * i + 1].code,
            0,
            "{}: {:?}",
            c.name,
            java[2 * i + 1].error
        );
        before.push(rows(&c.loc, None).await);
        // Ours: every task's files in Java's order: by size (Java sorts a task's files by
        // size; equal sizes come in its HashSet's order, so only the sizes are compared).
        let table = Table::open(&c.loc).await.unwrap();
        let sizes: BTreeMap<String, i64> = table
            .scan()
            .data_files()
            .await
            .unwrap()
            .unwrap()
            .entries
            .iter()
            .map(|e| (e.file.file_name.clone(), e.file.file_size))
            .collect();
        let report = compact_append(&table, &AppendCompactOptions::default())
            .await
            .unwrap();
        let java_order: BTreeMap<Vec<String>, Vec<String>> = planned
            .iter()
            .map(|(_, f)| {
                let mut k = f.clone();
                k.sort();
                (k, f.clone())
            })
            .collect();
        for t in &report.tasks {
            let mut k = t.files_in.clone();
            k.sort();
            let java = &java_order[&k];
            if c.de {
                assert_eq!(&t.files_in, java, "{}: the order of a task's files", c.name);
            } else {
                let by_size = |f: &[String]| f.iter().map(|n| sizes[n]).collect::<Vec<_>>();
                assert_eq!(
                    by_size(&t.files_in),
                    by_size(java),
                    "{}: the order of a task's files",
                    c.name
                );
            }
        }
    }
    // Both compacted tables: the same layout and rows; Java reads both.
    let mut commands = Vec::new();
    for (c, jc) in cases.iter().zip(&java_copies) {
        commands.push(jcmd(&["read", &c.loc]));
        commands.push(jcmd(&["read", jc]));
        if c.de {
            commands.push(jcmd(&[
                "read",
                &c.loc,
                "--columns",
                "_ROW_ID,_SEQUENCE_NUMBER",
            ]));
        }
    }
    let java = java_batch(&commands).unwrap();
    let mut at = 0;
    for ((c, jc), want) in cases.iter().zip(&java_copies).zip(&before) {
        assert_eq!(
            &rows(&c.loc, None).await,
            want,
            "{}: ours after ours",
            c.name
        );
        assert_eq!(&rows(jc, None).await, want, "{}: ours after Java's", c.name);
        assert_eq!(
            &java[at].sorted(c.name),
            want,
            "{}: Java after ours",
            c.name
        );
        assert_eq!(
            &java[at + 1].sorted(c.name),
            want,
            "{}: Java after Java's",
            c.name
        );
        at += 2;
        if c.de {
            let ids: &[&str] = &["_ROW_ID", "_SEQUENCE_NUMBER"];
            assert_eq!(
                java[at].sorted(c.name),
                rows(&c.loc, Some(ids)).await,
                "{}: row ids and sequence numbers",
                c.name
            );
            assert_eq!(rows(&c.loc, Some(ids)).await, rows(jc, Some(ids)).await);
            at += 1;
        }
        assert_eq!(layout(&c.loc).await, layout(jc).await, "{}: files", c.name);
    }
    assert!(tasks >= cases.len() + 2, "{tasks} tasks");
}
