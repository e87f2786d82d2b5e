//! Changelog from compaction (`changelog-producer = lookup` / `full-compaction`): writes
//! of lookup tables compact level 0 before the commit and their changelog holds, per key a
//! commit touched, the change from the state before to the state after (`+I`, `-U`/`+U`,
//! `-D`); full compactions of `full-compaction` tables hold the change since the last full
//! compaction. Checked against a model of each merge engine, by reading the changelog files
//! the snapshots list, by our reads, and by Java Paimon 2.0.0 (java-check's `read`
//! when present: rows, and the changelog through `incremental-between` with
//! `incremental-between-scan-mode = changelog`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int8Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::Value;

use crate::common::table_rows;

/// (a, b) of a key.
type State = BTreeMap<i64, (Option<i32>, Option<i32>)>;
/// One changelog record: key, row kind, a, b.
type Change = (i64, String, Option<i32>, Option<i32>);
/// One input row: row kind, key, a, b.
type Op<'a> = (&'a str, i64, Option<i32>, Option<i32>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    Deduplicate,
    /// Deduplicate with deletion vectors (writes compact the touched buckets fully).
    DeduplicateDv,
    PartialUpdate,
    /// Partial-update with `changelog-producer.row-deduplicate` ignoring `b`: no `-U`/`+U`
    /// when `a` did not change.
    PartialUpdateRowDedup,
    Aggregation,
    FirstRow,
}

impl Engine {
    fn options(self) -> &'static str {
        match self {
            Engine::Deduplicate => r#""merge-engine": "deduplicate""#,
            Engine::DeduplicateDv => {
                r#""merge-engine": "deduplicate", "deletion-vectors.enabled": "true""#
            }
            Engine::PartialUpdate => r#""merge-engine": "partial-update""#,
            Engine::PartialUpdateRowDedup => {
                r#""merge-engine": "partial-update", "changelog-producer.row-deduplicate": "true",
                "changelog-producer.row-deduplicate-ignore-fields": "b""#
            }
            Engine::Aggregation => {
                r#""merge-engine": "aggregation", "fields.a.aggregate-function": "sum""#
            }
            Engine::FirstRow => r#""merge-engine": "first-row""#,
        }
    }

    /// The state after `op` (row kind, key, a, b).
    fn apply(self, state: &mut State, kind: &str, k: i64, a: Option<i32>, b: Option<i32>) {
        if kind == "-D" {
            assert!(matches!(self, Engine::Deduplicate | Engine::DeduplicateDv));
            state.remove(&k);
            return;
        }
        let old = state.get(&k).copied();
        let new = match (self, old) {
            (_, None) => (a, b),
            (Engine::Deduplicate | Engine::DeduplicateDv, Some(_)) => (a, b),
            (Engine::PartialUpdate | Engine::PartialUpdateRowDedup, Some((oa, ob))) => {
                (a.or(oa), b.or(ob))
            }
            (Engine::Aggregation, Some((oa, ob))) => (
                match (oa, a) {
                    (Some(x), Some(y)) => Some(x + y),
                    (x, y) => x.or(y),
                },
                b.or(ob),
            ),
            (Engine::FirstRow, Some(o)) => o,
        };
        state.insert(k, new);
    }
}

/// The changelog of going from `before` to `after` over `keys` (Java's lookup changelog:
/// `-U`/`+U` also when the row did not change, except first-row, which emits inserts only,
/// and row-deduplicate, which skips them when the compared value `a` did not change).
fn expected_changes(
    engine: Engine,
    before: &State,
    after: &State,
    keys: &BTreeSet<i64>,
) -> Vec<Change> {
    let mut out = Vec::new();
    for k in keys {
        match (before.get(k), after.get(k)) {
            (None, Some(n)) => out.push((*k, "+I".into(), n.0, n.1)),
            (Some(o), None) => out.push((*k, "-D".into(), o.0, o.1)),
            (Some(o), Some(n)) if engine == Engine::PartialUpdateRowDedup && o.0 == n.0 => {}
            (Some(o), Some(n)) if engine != Engine::FirstRow => {
                out.push((*k, "-U".into(), o.0, o.1));
                out.push((*k, "+U".into(), n.0, n.1));
            }
            _ => {}
        }
    }
    out
}

fn schema_json(producer: &str, extra: &str) -> String {
    format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "a", "type": "INT"}},
        {{"name": "b", "type": "INT"}}], "primaryKeys": ["k"],
        "options": {{"bucket": "1", "changelog-producer": "{producer}", {extra}}}}}"#
    )
}

pub(crate) fn batch(ops: &[Op<'_>]) -> RecordBatch {
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "k",
            Arc::new(Int64Array::from_iter_values(ops.iter().map(|o| o.1))),
        ),
        (
            "a",
            Arc::new(Int32Array::from_iter(ops.iter().map(|o| o.2))),
        ),
        (
            "b",
            Arc::new(Int32Array::from_iter(ops.iter().map(|o| o.3))),
        ),
        (
            "_ROW_KIND",
            Arc::new(StringArray::from_iter_values(ops.iter().map(|o| o.0))),
        ),
    ];
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), *n != "k"))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

async fn write_commit(table: &Table, b: &RecordBatch) {
    let mut w = table.new_write().await.unwrap();
    w.write(b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

fn state_rows(state: &State) -> Vec<String> {
    let mut v: Vec<String> = state
        .iter()
        .map(|(k, (a, b))| serde_json::json!({"k": k, "a": a, "b": b}).to_string())
        .collect();
    v.sort();
    v
}

/// The changelog files of the bucket directory.
fn changelog_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir.join("bucket-0"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("changelog-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The records of changelog files `names`, ordered by key then sequence number.
fn read_changes(dir: &Path, names: &BTreeSet<String>) -> Vec<Change> {
    let mut recs: Vec<(i64, i64, Change)> = Vec::new();
    for n in names {
        let file = std::fs::File::open(dir.join("bucket-0").join(n)).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for b in reader {
            let b = b.unwrap();
            let col = |name: &str| b.column(b.schema().index_of(name).unwrap()).clone();
            let key = col("_KEY_k");
            let seq = col("_SEQUENCE_NUMBER");
            let kind = col("_VALUE_KIND");
            let a = col("a");
            let bb = col("b");
            for r in 0..b.num_rows() {
                let kind = match kind.as_primitive::<Int8Type>().value(r) {
                    0 => "+I",
                    1 => "-U",
                    2 => "+U",
                    _ => "-D",
                };
                let k = key.as_primitive::<Int64Type>().value(r);
                let get = |c: &ArrayRef| {
                    let c = c.as_primitive::<Int32Type>();
                    c.is_valid(r).then(|| c.value(r))
                };
                recs.push((
                    k,
                    seq.as_primitive::<Int64Type>().value(r),
                    (k, kind.into(), get(&a), get(&bb)),
                ));
            }
        }
    }
    recs.sort_by_key(|(k, s, c)| (*k, *s, c.1 == "+U"));
    recs.into_iter().map(|(_, _, c)| c).collect()
}

fn java_script() -> Option<PathBuf> {
    crate::oracle::java_check("read")
}

/// Java's output lines for `args` (sorted), when the checker exists.
pub(crate) fn java_lines(dir: &Path, args: &[&str]) -> Option<Vec<String>> {
    let script = java_script()?;
    let out = Command::new(&script).arg(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "java read of {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| match l.split_once('\t') {
            Some((kind, row)) => {
                format!("{kind}\t{}", serde_json::from_str::<Value>(row).unwrap())
            }
            None => serde_json::from_str::<Value>(l).unwrap().to_string(),
        })
        .collect();
    lines.sort();
    Some(lines)
}

fn change_lines(changes: &[Change]) -> Vec<String> {
    let mut v: Vec<String> = changes
        .iter()
        .map(|(k, kind, a, b)| format!("{kind}\t{}", serde_json::json!({"k": k, "a": a, "b": b})))
        .collect();
    v.sort();
    v
}

async fn latest_id(table: &Table) -> i64 {
    table.latest_snapshot().await.unwrap().map_or(0, |s| s.id)
}

/// Checks after a commit from snapshot `from`: rows, the new changelog files, the
/// snapshot's changelog record count, and Java's rows and changelog.
async fn check_commit(
    dir: &Path,
    from: i64,
    state: &State,
    expected: &[Change],
    seen: &mut BTreeSet<String>,
    what: &str,
) -> bool {
    let table = Table::open(dir.to_str().unwrap()).await.unwrap();
    assert_eq!(table_rows(&table).await, state_rows(state), "{what}: rows");
    let now = changelog_files(dir);
    let new: BTreeSet<String> = now.difference(seen).cloned().collect();
    *seen = now;
    assert_eq!(read_changes(dir, &new), expected, "{what}: changelog files");
    let to = latest_id(&table).await;
    let mut counted = 0;
    for id in from + 1..=to {
        let s = table.snapshot(id).await.unwrap();
        counted += s.changelog_record_count.unwrap_or(0);
        assert_eq!(
            s.changelog_manifest_list.is_some(),
            s.changelog_record_count.unwrap_or(0) > 0,
            "{what}: snapshot {id} lists changelog manifests iff it has changelog records"
        );
    }
    assert_eq!(
        counted,
        expected.len() as i64,
        "{what}: changelog record count"
    );
    let Some(java) = java_lines(dir, &[]) else {
        return false;
    };
    assert_eq!(java, state_rows(state), "{what}: Java's rows");
    if from > 0 {
        let between = format!("incremental-between={from},{to}");
        let java = java_lines(
            dir,
            &[
                "--row-kind",
                "--option",
                &between,
                "--option",
                "incremental-between-scan-mode=changelog",
            ],
        )
        .unwrap_or_default();
        assert_eq!(java, change_lines(expected), "{what}: Java's changelog");
    }
    true
}

/// `changelog-producer = lookup` on every merge engine: four commits of upserts (and
/// deletes for deduplicate) over keys at several levels; each commit's changelog is exactly
/// the model's change, and the table ends with several levels, so lookups cross levels.
#[tokio::test]
async fn lookup_changelog_per_engine_matches_the_model_and_java() {
    let tmp = tempfile::tempdir().unwrap();
    let mut java_checked = 0;
    for engine in [
        Engine::Deduplicate,
        Engine::DeduplicateDv,
        Engine::PartialUpdate,
        Engine::PartialUpdateRowDedup,
        Engine::Aggregation,
        Engine::FirstRow,
    ] {
        let dir = tmp.path().join(format!("{engine:?}"));
        let location = dir.to_str().unwrap().to_owned();
        Table::create(
            &location,
            schema_json("lookup", engine.options()).as_bytes(),
        )
        .await
        .unwrap();
        let dedup = matches!(engine, Engine::Deduplicate | Engine::DeduplicateDv);
        // The first commit is large, so later small level-0 files are forced up to the
        // level above it rather than merged into it (universal size ratio).
        let mut first = vec![
            ("+I", 1, Some(1), Some(10)),
            ("+I", 2, Some(2), Some(20)),
            ("+I", 3, Some(3), None),
            ("+I", 4, Some(4), Some(40)),
        ];
        first.extend((100..400).map(|k| ("+I", k, Some(k as i32), None)));
        let commits: Vec<Vec<Op<'_>>> = vec![
            first,
            vec![
                ("+I", 2, None, Some(21)),
                ("+I", 3, Some(30), Some(31)),
                ("+I", 5, Some(5), None),
                if dedup {
                    ("-D", 4, None, None)
                } else {
                    ("+I", 4, Some(1), None)
                },
                if dedup {
                    ("-D", 9, None, None)
                } else {
                    ("+I", 6, None, Some(60))
                },
            ],
            vec![("+I", 2, Some(7), None), ("+I", 5, None, Some(50))],
            vec![
                ("+I", 1, Some(100), None),
                ("+I", 2, Some(1), Some(1)),
                ("+I", 4, Some(44), Some(44)),
                ("+I", 7, Some(7), Some(7)),
            ],
        ];
        let mut state = State::new();
        let mut seen = BTreeSet::new();
        for (i, ops) in commits.iter().enumerate() {
            let table = Table::open(&location).await.unwrap();
            let from = latest_id(&table).await;
            let before = state.clone();
            for (kind, k, a, b) in ops {
                engine.apply(&mut state, kind, *k, *a, *b);
            }
            let keys: BTreeSet<i64> = ops.iter().map(|o| o.1).collect();
            let expected = expected_changes(engine, &before, &state, &keys);
            write_commit(&table, &batch(ops)).await;
            let what = format!("{engine:?} commit {}", i + 1);
            if check_commit(&dir, from, &state, &expected, &mut seen, &what).await {
                java_checked += 1;
            }
        }
        // Level 0 never stays: the lookup writer compacted it before each commit.
        let table = Table::open(&location).await.unwrap();
        let files = table.scan().data_files().await.unwrap().unwrap().entries;
        let levels: BTreeSet<i32> = files.iter().map(|e| e.file.level).collect();
        assert!(!levels.contains(&0), "{engine:?}: {levels:?}");
        if engine != Engine::DeduplicateDv {
            assert!(levels.len() >= 2, "{engine:?}: several levels {levels:?}");
        }
    }
    eprintln!("Java checked {java_checked} commits");
}

/// `changelog-producer = full-compaction`: writes leave no changelog; each full compaction
/// emits the change since the previous one (the max level's records are the before image),
/// without unchanged updates under `changelog-producer.row-deduplicate`.
#[tokio::test]
async fn full_compaction_changelog_matches_the_model_and_java() {
    let tmp = tempfile::tempdir().unwrap();
    let deduplicate: Vec<Vec<Vec<Op<'_>>>> = vec![
        vec![
            vec![("+I", 1, Some(1), None), ("+I", 2, Some(2), None)],
            vec![("+I", 3, Some(3), None), ("+I", 2, Some(22), None)],
        ],
        vec![
            vec![("-D", 3, None, None), ("+I", 4, Some(4), Some(4))],
            vec![("+I", 1, Some(11), None), ("-D", 4, None, None)],
            vec![("+I", 5, Some(5), None)],
        ],
    ];
    // Row deduplicate ignoring `b`: key 1 only changes `b` (no changelog), key 2 changes
    // `a` back and forth within a round (no changelog either), key 3 changes `a`.
    let row_dedup: Vec<Vec<Vec<Op<'_>>>> = vec![
        vec![vec![
            ("+I", 1, Some(1), Some(1)),
            ("+I", 2, Some(2), None),
            ("+I", 3, Some(3), None),
        ]],
        vec![
            vec![("+I", 1, None, Some(10)), ("+I", 2, Some(20), None)],
            vec![("+I", 2, Some(2), Some(2)), ("+I", 3, Some(30), None)],
        ],
    ];
    for (engine, rounds) in [
        (Engine::Deduplicate, deduplicate),
        (Engine::PartialUpdateRowDedup, row_dedup),
    ] {
        let dir = tmp.path().join(format!("{engine:?}"));
        let location = dir.to_str().unwrap().to_owned();
        Table::create(
            &location,
            schema_json("full-compaction", engine.options()).as_bytes(),
        )
        .await
        .unwrap();
        let mut state = State::new();
        let mut seen = BTreeSet::new();
        for (r, round) in rounds.iter().enumerate() {
            let before = state.clone();
            let mut keys = BTreeSet::new();
            for (i, ops) in round.iter().enumerate() {
                let table = Table::open(&location).await.unwrap();
                let from = latest_id(&table).await;
                for (kind, k, a, b) in ops {
                    engine.apply(&mut state, kind, *k, *a, *b);
                    keys.insert(*k);
                }
                write_commit(&table, &batch(ops)).await;
                let what = format!("{engine:?} round {r} write {i}");
                check_commit(&dir, from, &state, &[], &mut seen, &what).await;
            }
            let table = Table::open(&location).await.unwrap();
            let from = latest_id(&table).await;
            table
                .compact(CompactOptions {
                    full: true,
                    ..Default::default()
                })
                .await
                .unwrap();
            let expected = expected_changes(engine, &before, &state, &keys);
            if engine == Engine::PartialUpdateRowDedup && r == 1 {
                assert_eq!(expected.len(), 2, "only key 3 changes: {expected:?}");
            }
            let what = format!("{engine:?} round {r} full compaction");
            check_commit(&dir, from, &state, &expected, &mut seen, &what).await;
        }
    }
}

/// Two writers of a lookup table prepare on the same snapshot: the second commit publishes
/// its `APPEND` snapshot, then its level-0 compaction conflicts (a full compaction after the
/// first commit removed the level-5 file it merged). The error says so (`PartlyPublished`), the published
/// snapshot's files stay, and every row of both writes reads.
#[tokio::test]
async fn a_conflicting_level0_compaction_keeps_the_published_append() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let location = dir.to_str().unwrap().to_owned();
    Table::create(
        &location,
        schema_json("lookup", r#""merge-engine": "deduplicate""#).as_bytes(),
    )
    .await
    .unwrap();
    let table = Table::open(&location).await.unwrap();
    write_commit(
        &table,
        &batch(&[("+I", 1, Some(1), None), ("+I", 2, Some(2), None)]),
    )
    .await;
    let table = Table::open(&location).await.unwrap();
    let mut a = table.new_write().await.unwrap();
    let mut b = table.new_write().await.unwrap();
    // Disjoint keys (both writers number from the same sequence); the second writer's level
    // 0 is as large as level 5, so its compaction merges the level-5 file.
    a.write(&batch(&[("+I", 2, Some(20), None)])).await.unwrap();
    b.write(&batch(&[
        ("+I", 1, Some(10), None),
        ("+I", 3, Some(3), None),
    ]))
    .await
    .unwrap();
    let ma = a.prepare_commit().await.unwrap();
    let mb = b.prepare_commit().await.unwrap();
    table.new_commit(None).commit(ma).await.unwrap();
    // A full compaction rewrites the level-5 file the second writer's compaction merged.
    table
        .compact(CompactOptions {
            full: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let err = table.new_commit(None).commit(mb).await.unwrap_err();
    let Some(paimon_kernel::Error::PartlyPublished { published, detail }) = err.as_kernel() else {
        panic!("expected PartlyPublished, got {err}");
    };
    assert_eq!(published.len(), 1, "{detail}");
    assert!(!detail.contains("nothing was published"), "{detail}");
    let table = Table::open(&location).await.unwrap();
    let s = table.snapshot(published[0]).await.unwrap();
    assert_eq!(s.commit_kind.to_string(), "APPEND");
    let mut want = State::new();
    want.insert(1, (Some(10), None));
    want.insert(2, (Some(20), None));
    want.insert(3, (Some(3), None));
    assert_eq!(table_rows(&table).await, state_rows(&want));
    // A compaction finishes the lost work: level 0 goes up, the rows stay.
    table.compact(CompactOptions::default()).await.unwrap();
    let table = Table::open(&location).await.unwrap();
    assert_eq!(table_rows(&table).await, state_rows(&want));
    let levels: BTreeSet<i32> = table
        .scan()
        .data_files()
        .await
        .unwrap()
        .unwrap()
        .entries
        .iter()
        .map(|e| e.file.level)
        .collect();
    assert!(!levels.contains(&0), "{levels:?}");
}

/// An overwrite commits no changelog and leaves no changelog file; `write-only` writers of
/// lookup tables do not compact (as Java), so their rows stay in level 0 without changelog.
#[tokio::test]
async fn overwrite_and_write_only_write_no_changelog() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let location = dir.to_str().unwrap().to_owned();
    Table::create(
        &location,
        schema_json("lookup", r#""merge-engine": "deduplicate""#).as_bytes(),
    )
    .await
    .unwrap();
    let table = Table::open(&location).await.unwrap();
    write_commit(&table, &batch(&[("+I", 1, Some(1), None)])).await;
    let first = changelog_files(&dir);
    assert_eq!(first.len(), 1);
    let mut w = table.new_write().await.unwrap().for_overwrite();
    w.write(&batch(&[("+I", 2, Some(2), None)])).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    assert!(
        messages
            .iter()
            .any(|m| !m.compact_increment.changelog_files.is_empty())
    );
    table
        .new_commit(None)
        .overwrite(None, messages)
        .await
        .unwrap();
    let table = Table::open(&location).await.unwrap();
    let s = table.latest_snapshot().await.unwrap().unwrap();
    assert_eq!(s.changelog_record_count.unwrap_or(0), 0);
    assert_eq!(
        changelog_files(&dir),
        first,
        "the overwrite's changelog file is deleted"
    );
    let mut want = State::new();
    want.insert(2, (Some(2), None));
    assert_eq!(table_rows(&table).await, state_rows(&want));

    let dir = tmp.path().join("w");
    let location = dir.to_str().unwrap().to_owned();
    Table::create(
        &location,
        schema_json(
            "lookup",
            r#""merge-engine": "deduplicate", "write-only": "true""#,
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let table = Table::open(&location).await.unwrap();
    write_commit(&table, &batch(&[("+I", 1, Some(1), None)])).await;
    assert!(changelog_files(&dir).is_empty());
    let levels: Vec<i32> = table
        .scan()
        .data_files()
        .await
        .unwrap()
        .unwrap()
        .entries
        .iter()
        .map(|e| e.file.level)
        .collect();
    assert_eq!(levels, [0]);
}
