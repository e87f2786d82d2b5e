//! The write API (`Table::create`, `TableWriter`, `TableCommit`) and the `create`/`write`
//! commands: what is written reads back, commits are atomic, concurrent committers lose
//! nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::canonical;
use paimon_native::Table;
use serde_json::Value;

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

async fn rows(table: &Table) -> Vec<Value> {
    let batches = table.scan().to_batches().await.unwrap();
    let mut out = canonical::batches_rows(&batches).unwrap();
    out.sort_by_key(|r| r.to_string());
    out
}

async fn write_commit(table: &Table, b: &RecordBatch) -> Vec<i64> {
    let mut w = table.new_write().await.unwrap();
    w.write(b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table
        .new_commit(None)
        .commit(messages)
        .await
        .unwrap()
        .snapshot_ids
}

const PK_SCHEMA: &str = r#"{"fields": [{"name": "k", "type": "BIGINT"}, {"name": "v", "type": "STRING"},
    {"name": "n", "type": "INT"}], "primaryKeys": ["k"], "options": {"bucket": "3"}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn primary_key_upserts_and_deletes_read_back_merged() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(loc.to_str().unwrap(), PK_SCHEMA.as_bytes())
        .await
        .unwrap();
    let keys: Vec<i64> = (0..100).collect();
    let b1 = batch(vec![
        ("k", Arc::new(Int64Array::from(keys.clone()))),
        (
            "v",
            Arc::new(StringArray::from_iter_values(
                keys.iter().map(|k| format!("v{k}")),
            )),
        ),
        (
            "n",
            Arc::new(Int32Array::from_iter_values(keys.iter().map(|k| *k as i32))),
        ),
    ]);
    assert_eq!(write_commit(&table, &b1).await, vec![1]);
    // Second commit: update even keys below 50, delete keys 90.., one key updated twice in the
    // same batch (the later row wins).
    let mut ks = Vec::new();
    let mut vs = Vec::new();
    let mut kinds = Vec::new();
    for k in (0..50).step_by(2) {
        ks.push(k);
        vs.push(format!("u{k}"));
        kinds.push("+U");
    }
    for k in 90..100 {
        ks.push(k);
        vs.push(String::new());
        kinds.push("-D");
    }
    ks.push(4);
    vs.push("again".into());
    kinds.push("+U");
    let b2 = batch(vec![
        ("k", Arc::new(Int64Array::from(ks.clone()))),
        ("v", Arc::new(StringArray::from(vs.clone()))),
        ("n", Arc::new(Int32Array::from(vec![None; ks.len()]))),
        ("_ROW_KIND", Arc::new(StringArray::from(kinds))),
    ]);
    assert_eq!(write_commit(&table, &b2).await, vec![2]);

    let mut want: BTreeMap<i64, (String, Option<i32>)> = keys
        .iter()
        .map(|k| (*k, (format!("v{k}"), Some(*k as i32))))
        .collect();
    for k in (0..50).step_by(2) {
        want.insert(k, (format!("u{k}"), None));
    }
    want.insert(4, ("again".into(), None));
    for k in 90..100 {
        want.remove(&k);
    }
    let mut want: Vec<Value> = want
        .into_iter()
        .map(|(k, (v, n))| serde_json::json!({"k": k, "v": v, "n": n}))
        .collect();
    want.sort_by_key(|r| r.to_string());
    assert_eq!(rows(&table).await, want);

    // Sequence numbers of the second commit continue after the first one's, per bucket.
    let files = table.scan().data_files().await.unwrap().unwrap();
    let snap = table.latest_snapshot().await.unwrap().unwrap();
    assert_eq!(
        snap.total_record_count,
        files.entries.iter().map(|e| e.file.row_count).sum::<i64>()
    );
    let mut by_bucket: BTreeMap<i32, Vec<(i64, i64)>> = BTreeMap::new();
    for e in &files.entries {
        by_bucket
            .entry(e.bucket)
            .or_default()
            .push((e.file.min_sequence_number, e.file.max_sequence_number));
        assert_eq!(e.file.level, 0);
        assert_eq!(e.total_buckets, 3);
    }
    for (bucket, mut ranges) in by_bucket {
        ranges.sort_unstable();
        for pair in ranges.windows(2) {
            assert!(pair[0].1 < pair[1].0, "bucket {bucket}: {ranges:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_rejected_by_column_and_row_and_nothing_is_committed() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(loc.to_str().unwrap(), PK_SCHEMA.as_bytes())
        .await
        .unwrap();
    let mut w = table.new_write().await.unwrap();
    let bad = batch(vec![
        ("k", Arc::new(Int64Array::from(vec![Some(1), None]))),
        ("v", Arc::new(StringArray::from(vec!["a", "b"]))),
        ("n", Arc::new(Int32Array::from(vec![1, 2]))),
    ]);
    let e = w.write(&bad).await.unwrap_err().to_string();
    assert!(e.contains("'k'") && e.contains("row 1"), "{e}");
    let unknown = batch(vec![
        ("k", Arc::new(Int64Array::from(vec![1]))),
        ("v", Arc::new(StringArray::from(vec!["a"]))),
        ("n", Arc::new(Int32Array::from(vec![1]))),
        ("extra", Arc::new(Int32Array::from(vec![1]))),
    ]);
    let e = w.write(&unknown).await.unwrap_err().to_string();
    assert!(e.contains("'extra'"), "{e}");
    let kind = batch(vec![
        ("k", Arc::new(Int64Array::from(vec![1]))),
        ("v", Arc::new(StringArray::from(vec!["a"]))),
        ("n", Arc::new(Int32Array::from(vec![1]))),
        ("_ROW_KIND", Arc::new(StringArray::from(vec!["+X"]))),
    ]);
    let e = w.write(&kind).await.unwrap_err().to_string();
    assert!(e.contains("+X") && e.contains("row 0"), "{e}");
    assert!(w.prepare_commit().await.unwrap().is_empty());
    assert!(table.latest_snapshot().await.unwrap().is_none());
    assert!(!loc.join("bucket-0").exists() && !loc.join("bucket-1").exists());

    // Written but aborted: the data files are gone and no snapshot exists.
    let mut w = table.new_write().await.unwrap();
    let good = batch(vec![
        ("k", Arc::new(Int64Array::from(vec![1, 2, 3]))),
        ("v", Arc::new(StringArray::from(vec!["a", "b", "c"]))),
        ("n", Arc::new(Int32Array::from(vec![1, 2, 3]))),
    ]);
    w.write(&good).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    assert!(!messages.is_empty());
    table.new_commit(None).abort(messages).await.unwrap();
    let data_files: Vec<_> = walk(&loc)
        .into_iter()
        .filter(|p| p.contains("bucket-"))
        .collect();
    assert!(data_files.is_empty(), "{data_files:?}");
    assert!(table.latest_snapshot().await.unwrap().is_none());
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p.to_string_lossy().into_owned());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overwrite_replaces_a_static_partition_or_the_written_ones() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(
        loc.to_str().unwrap(),
        br#"{"fields": [{"name": "p", "type": "STRING"}, {"name": "x", "type": "INT"}],
             "partitionKeys": ["p"]}"#,
    )
    .await
    .unwrap();
    let b = |p: Vec<&str>, x: Vec<i32>| {
        batch(vec![
            ("p", Arc::new(StringArray::from(p)) as ArrayRef),
            ("x", Arc::new(Int32Array::from(x))),
        ])
    };
    write_commit(&table, &b(vec!["a", "a", "b", "c"], vec![1, 2, 3, 4])).await;
    // Static: p=a replaced by one row.
    let mut w = table.new_write().await.unwrap();
    w.write(&b(vec!["a"], vec![10])).await.unwrap();
    let m = w.prepare_commit().await.unwrap();
    let spec = BTreeMap::from([("p".to_string(), "a".to_string())]);
    table
        .new_commit(None)
        .overwrite(Some(spec), m)
        .await
        .unwrap();
    let got: Vec<String> = rows(&table).await.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        got,
        vec![
            r#"{"p":"a","x":10}"#,
            r#"{"p":"b","x":3}"#,
            r#"{"p":"c","x":4}"#
        ]
    );
    // Dynamic (the default): only partition b is replaced.
    let mut w = table.new_write().await.unwrap();
    w.write(&b(vec!["b", "b"], vec![30, 31])).await.unwrap();
    let m = w.prepare_commit().await.unwrap();
    table.new_commit(None).overwrite(None, m).await.unwrap();
    let got: Vec<String> = rows(&table).await.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        got,
        vec![
            r#"{"p":"a","x":10}"#,
            r#"{"p":"b","x":30}"#,
            r#"{"p":"b","x":31}"#,
            r#"{"p":"c","x":4}"#
        ]
    );
    let snaps = table.snapshots().await.unwrap();
    let kinds: Vec<String> = snaps.iter().map(|s| s.commit_kind.to_string()).collect();
    assert_eq!(kinds, vec!["APPEND", "OVERWRITE", "OVERWRITE"]);
}

const WI_SCHEMA: &[u8] =
    br#"{"fields": [{"name": "w", "type": "INT"}, {"name": "i", "type": "INT"}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_committers_of_one_process_lose_and_double_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(loc.to_str().unwrap(), WI_SCHEMA)
        .await
        .unwrap();
    let got = concurrent_commits(table, 8, 25).await;
    if let Some(java) = crate::oracle::java_rows(&loc) {
        assert_eq!(java, crate::oracle::sorted_strings(&got), "Java's read");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_committers_on_an_in_memory_store_lose_and_double_nothing() {
    let host = paimon_native::ObjectStoreHost::open("memory://").unwrap();
    let table = Table::create_with_host(host, WI_SCHEMA).await.unwrap();
    concurrent_commits(table, 8, 25).await;
}

/// `writers` tasks each write and commit `commits` one-row batches; every commit must land in
/// exactly one snapshot. Returns the final table's rows.
async fn concurrent_commits(table: Table, writers: i32, commits: i32) -> Vec<Value> {
    let mut tasks = Vec::new();
    for w in 0..writers {
        let table = table.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..commits {
                let b = batch(vec![
                    ("w", Arc::new(Int32Array::from(vec![w])) as ArrayRef),
                    ("i", Arc::new(Int32Array::from(vec![i]))),
                ]);
                let ids = write_commit(&table, &b).await;
                assert_eq!(ids.len(), 1);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let snaps = table.snapshots().await.unwrap();
    let ids: Vec<i64> = snaps.iter().map(|s| s.id).collect();
    assert_eq!(ids, (1..=i64::from(writers * commits)).collect::<Vec<_>>());
    let got = rows(&table).await;
    assert_eq!(got.len(), (writers * commits) as usize);
    let mut seen = std::collections::BTreeSet::new();
    for r in &got {
        assert!(
            seen.insert((r["w"].as_i64().unwrap(), r["i"].as_i64().unwrap())),
            "{r}"
        );
    }
    assert_eq!(
        snaps.last().unwrap().total_record_count,
        i64::from(writers * commits)
    );
    got
}

#[test]
fn concurrent_writer_processes_lose_and_double_nothing() {
    use std::process::Command;
    let bin = env!("CARGO_BIN_EXE_paimon-kernel");
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let loc = loc.to_str().unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(&schema, WI_SCHEMA).unwrap();
    let out = Command::new(bin)
        .args(["create", loc, "--schema", schema.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 200 commits in all, one `write` process each, four processes at a time.
    const PROCESSES: i32 = 4;
    const COMMITS: i32 = 50;
    let mut children = Vec::new();
    for p in 0..PROCESSES {
        let input = dir.path().join(format!("rows-{p}.jsonl"));
        let script = (0..COMMITS)
            .map(|i| {
                let rows = dir.path().join(format!("rows-{p}-{i}.jsonl"));
                std::fs::write(&rows, format!("{{\"w\": {p}, \"i\": {i}}}\n")).unwrap();
                format!(
                    "{bin} write {loc} --input {} || exit 1",
                    rows.to_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&input, &script).unwrap();
        children.push(Command::new("sh").arg(&input).spawn().unwrap());
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let out = Command::new(bin)
        .args(["scan", loc, "--format", "jsonl"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut got: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    got.sort();
    let mut want: Vec<String> = (0..PROCESSES)
        .flat_map(|p| (0..COMMITS).map(move |i| format!("{{\"w\":{p},\"i\":{i}}}")))
        .collect();
    want.sort();
    assert_eq!(got, want);
    let snaps: Vec<_> = std::fs::read_dir(dir.path().join("t/snapshot"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .strip_prefix("snapshot-")
                .map(|s| s.parse::<i64>().unwrap())
        })
        .collect();
    let mut snaps = snaps;
    snaps.sort_unstable();
    assert_eq!(
        snaps,
        (1..=i64::from(PROCESSES * COMMITS)).collect::<Vec<_>>()
    );
    if let Some(java) = crate::oracle::java_rows(&dir.path().join("t")) {
        let ours: Vec<Value> = got
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(java, crate::oracle::sorted_strings(&ours), "Java's read");
    }
}

/// Java Paimon 2.0.0 (java-check's `commits`, when installed) commits one-row batches to the
/// table while we commit ours. Java's local-disk commit checks that `snapshot-N` does not
/// exist and then renames its file there under a lock of its own JVM only, so it can replace
/// a snapshot another process published in between; ours is a create-new. Asserted: every
/// commit Java reported is in the table exactly once (we never overwrite or drop a snapshot),
/// the snapshot ids are 1..=N with no gap, no row is doubled, and each of our commits that is
/// missing is explained by a snapshot file Java replaced (our snapshot id holding Java's
/// commit). Those losses are printed, not failed: they are Java's rename, not ours.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_committing_alongside_never_loses_a_java_commit() {
    let Some(script) = crate::oracle::java_check("commits") else {
        println!("java-check not installed: Java committing alongside skipped");
        return;
    };
    const COMMITS: i32 = 100;
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(loc.to_str().unwrap(), WI_SCHEMA)
        .await
        .unwrap();
    let java = std::process::Command::new(&script)
        .arg(&loc)
        .arg("1")
        .arg(COMMITS.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ours: `COMMITS` commits of (w = 0, i), each with its snapshot id and commit user.
    let mut ours: Vec<(i32, i64, String)> = Vec::new();
    for i in 0..COMMITS {
        let b = batch(vec![
            ("w", Arc::new(Int32Array::from(vec![0])) as ArrayRef),
            ("i", Arc::new(Int32Array::from(vec![i]))),
        ]);
        let mut w = table.new_write().await.unwrap();
        w.write(&b).await.unwrap();
        let messages = w.prepare_commit().await.unwrap();
        let commit = table.new_commit(None);
        let user = commit.commit_user().to_owned();
        let ids = commit.commit(messages).await.unwrap().snapshot_ids;
        assert_eq!(ids.len(), 1);
        ours.push((i, ids[0], user));
    }
    let out = java.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let java_ok: Vec<i64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("ok "))
        .map(|i| i.parse().unwrap())
        .collect();
    let java_failed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("failed")).collect();
    let snaps = table.snapshots().await.unwrap();
    let ids: Vec<i64> = snaps.iter().map(|s| s.id).collect();
    assert_eq!(
        ids,
        (1..=ids.len() as i64).collect::<Vec<_>>(),
        "gap in ids"
    );
    let got = rows(&table).await;
    let mut seen = std::collections::BTreeSet::new();
    for r in &got {
        assert!(
            seen.insert((r["w"].as_i64().unwrap(), r["i"].as_i64().unwrap())),
            "doubled {r}"
        );
    }
    // Every Java commit that Java reported is there: we never overwrite or drop one.
    for i in &java_ok {
        assert!(seen.contains(&(1, *i)), "Java's commit {i} is missing");
    }
    // Each of ours that is missing: its snapshot file now holds another commit user's.
    let by_id: BTreeMap<i64, &str> = snaps
        .iter()
        .map(|s| (s.id, s.commit_user.as_str()))
        .collect();
    let mut lost = Vec::new();
    for (i, id, user) in &ours {
        if !seen.contains(&(0, i64::from(*i))) {
            assert_ne!(
                by_id.get(id).copied(),
                Some(user.as_str()),
                "our commit {i} (snapshot {id}) is missing but its snapshot is ours"
            );
            lost.push(*id);
        }
    }
    assert_eq!(
        got.len(),
        java_ok.len() + ours.len() - lost.len(),
        "rows: Java {} ok, ours {}, lost {}",
        java_ok.len(),
        ours.len(),
        lost.len()
    );
    if let Some(java_rows) = crate::oracle::java_rows(&loc) {
        let ours_rows = crate::oracle::sorted_strings(&got);
        assert_eq!(java_rows, ours_rows, "Java reads the final table otherwise");
    }
    println!(
        "Java committing alongside: {} of our commits and {} of Java's ({} failed: {:?}); \
         {} snapshots; our commits lost through Java's rename over our snapshot: {} {:?}",
        ours.len(),
        java_ok.len(),
        java_failed.len(),
        java_failed.first(),
        ids.len(),
        lost.len(),
        lost
    );
}
