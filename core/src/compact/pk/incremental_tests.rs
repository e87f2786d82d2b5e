//! Incremental selection end to end over an in-memory store: tables whose runs are a small
//! newest run, a large run in the middle and a small oldest run; rows read before and after
//! a normal compaction (a read merges every record: the full-merge model), with the
//! safe-subset checks on, and bypassed to show each counterexample.

use std::collections::BTreeMap;

use super::{BYPASS_CHECKS, INCREMENTAL_SELECTION, NON_JAVA_PICKS};
use crate::commit::{CommitMessage, CommitMode, CommitOptions, CompactIncrement, commit};
use crate::error::Result;
use crate::io::{Machine, MemoryStore};
use crate::job::{CompactJobOutcome, compact_job, latest_schema, read_latest_live_files};
use crate::scan::planner::ScanRequest;
use crate::schema::create::{create_table_machine, new_table_schema};
use crate::spec::DataFileMeta;
use crate::testkit::{csv_input, job_settings, memory_table, read_latest, write_job};

fn table(fields: &str, options: &str) -> MemoryStore {
    let json = format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}{fields}],
        "primaryKeys": ["k"], "options": {{"bucket": "1",
        "num-sorted-run.compaction-trigger": "2", "{INCREMENTAL_SELECTION}": "true"{options}}}}}"#
    );
    memory_table(&json)
}

fn write(store: &mut MemoryStore, csv: &str, n: u64) {
    write_job(store, csv_input(csv), n).unwrap();
}

fn live_files(store: &mut MemoryStore) -> Vec<DataFileMeta> {
    let m = Machine::once("files", |io| async move {
        let schema = latest_schema(&io).await?;
        read_latest_live_files(&io, &schema).await
    });
    let files = store.run(m).unwrap().remove(0).unwrap();
    files.entries.into_iter().map(|e| e.file).collect()
}

/// Move every level-0 file to `level` without rewriting it (a compaction that only
/// upgrades, as Java commits one).
fn move_level0_to(store: &mut MemoryStore, level: i32, n: u64) {
    let before: Vec<DataFileMeta> = live_files(store)
        .into_iter()
        .filter(|f| f.level == 0)
        .collect();
    let after = before
        .iter()
        .map(|f| DataFileMeta { level, ..f.clone() })
        .collect();
    let message = CommitMessage {
        partition: crate::spec::BinaryRow::empty(),
        bucket: 0,
        total_buckets: Some(1),
        data_increment: Default::default(),
        compact_increment: CompactIncrement {
            compact_before: before,
            compact_after: after,
            ..Default::default()
        },
    };
    let m = Machine::once("upgrade", move |io| async move {
        let schema = latest_schema(&io).await?;
        let options = CommitOptions::new(format!("mover-{n}"), 1_767_225_600_000, n);
        commit(&io, &schema, vec![message], &CommitMode::Append, &options).await
    });
    store.run(m).unwrap();
}

fn compact(store: &mut MemoryStore, bypass: bool) -> Result<CompactJobOutcome> {
    static SEED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1000);
    let seed = SEED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    BYPASS_CHECKS.with(|b| b.set(bypass));
    let m = Machine::once("compact", move |io| async move {
        compact_job(&io, false, &job_settings(seed)).await
    });
    let out = store.run(m).map(|mut v| v.remove(0));
    BYPASS_CHECKS.with(|b| b.set(false));
    out
}

/// Every row of the latest snapshot in canonical JSON, sorted.
fn rows(store: &mut MemoryStore) -> Vec<String> {
    let batches = read_latest(store, None, ScanRequest::default());
    let mut out: Vec<String> = crate::canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();
    out.sort();
    out
}

/// Levels of the live files: level → file count.
fn levels(store: &mut MemoryStore) -> BTreeMap<i32, usize> {
    let mut out = BTreeMap::new();
    for f in live_files(store) {
        *out.entry(f.level).or_insert(0) += 1;
    }
    out
}

/// Build the layout: `oldest` rows at the max level (5), `middle` rows (many) at level 3,
/// `newest` rows at level 0. Every CSV has the header `header`.
fn layout(fields: &str, options: &str, header: &str, runs: [&str; 3]) -> MemoryStore {
    let mut store = table(fields, options);
    let [oldest, middle, newest] = runs;
    write(&mut store, &format!("{header}\n{oldest}"), 1);
    move_level0_to(&mut store, 5, 1);
    write(&mut store, &format!("{header}\n{middle}"), 2);
    move_level0_to(&mut store, 3, 2);
    write(&mut store, &format!("{header}\n{newest}"), 3);
    assert_eq!(levels(&mut store), BTreeMap::from([(0, 1), (3, 1), (5, 1)]));
    store
}

/// Many filler rows for the middle run (keys 100..2100), `line(k)` each.
fn filler(line: impl Fn(i64) -> String) -> String {
    (100..2100).map(|k| line(k) + "\n").collect()
}

/// Safe tables: the small newest and oldest runs merge past the large middle one, which
/// stays in place; every row reads the same. Lookup tables stop at the large run.
#[test]
fn safe_tables_merge_past_large_history() {
    let cases = [
        // Aggregation: integer sum (bounded by the statistics), max, bool_or.
        (
            r#", {"name": "n", "type": "BIGINT"}, {"name": "s", "type": "STRING"}, {"name": "b", "type": "BOOLEAN"}"#,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "fields.s.aggregate-function": "max", "fields.b.aggregate-function": "bool_or""#,
            "k,n,s,b",
            [
                "1,5,x,false\n2,1,a,false\n".to_owned(),
                format!("1,-7,y,true\n{}", filler(|k| format!("{k},1,m,false"))),
                "1,3,w,false\n2,2,b,false\n3,4,c,true\n".to_owned(),
            ],
        ),
        // Partial-update: every field in a sequence group and aggregated.
        (
            r#", {"name": "g", "type": "INT"}, {"name": "n", "type": "INT"}, {"name": "s", "type": "STRING"}"#,
            r#", "merge-engine": "partial-update", "fields.g.sequence-group": "n,s", "fields.n.aggregate-function": "sum", "fields.s.aggregate-function": "min""#,
            "k,g,n,s",
            [
                "1,1,5,x\n2,1,1,a\n".to_owned(),
                format!("1,1,-7,y\n{}", filler(|k| format!("{k},1,1,m"))),
                "1,1,3,w\n2,2,2,b\n3,1,4,c\n".to_owned(),
            ],
        ),
    ];
    for (fields, options, header, runs) in cases {
        let mut store = layout(fields, options, header, [&runs[0], &runs[1], &runs[2]]);
        let before = rows(&mut store);
        let out = compact(&mut store, false).unwrap();
        assert_eq!(out.files_in, 2, "{options}");
        assert_eq!(rows(&mut store), before, "{options}");
        // The middle run stays at level 3; the merged runs are at level 5.
        assert_eq!(
            levels(&mut store),
            BTreeMap::from([(3, 1), (5, 1)]),
            "{options}"
        );
        if options.contains("aggregation") {
            assert!(before.iter().any(|r| r.starts_with(r#"{"k":1,"n":1,"#)));
        }
    }
}

/// Each rule of the safe subset has a counterexample: with the checks bypassed, the
/// regrouped merge gives other rows than the full merge (or fails); with them, Java's
/// selection gives the full merge's rows.
#[test]
fn unsafe_configurations_give_wrong_rows_when_regrouped() {
    let n = r#", {"name": "n", "type": "BIGINT"}"#;
    let cases = [
        (
            "first_value ordering",
            n,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "first_value""#,
            "k,n",
            [
                "1,10\n".to_owned(),
                format!("1,20\n{}", filler(|k| format!("{k},0"))),
                "1,30\n2,1\n".to_owned(),
            ],
        ),
        (
            "sparse per-column overwrite",
            r#", {"name": "n", "type": "BIGINT"}, {"name": "s", "type": "STRING"}"#,
            r#", "merge-engine": "partial-update""#,
            "k,n,s",
            [
                "1,10,a\n".to_owned(),
                format!("1,20,b\n{}", filler(|k| format!("{k},0,m"))),
                "1,,\n2,1,c\n".to_owned(),
            ],
        ),
        (
            "floating-point cancellation",
            r#", {"name": "d", "type": "DOUBLE"}"#,
            r#", "merge-engine": "aggregation", "fields.d.aggregate-function": "sum""#,
            "k,d",
            [
                "1,1e20\n".to_owned(),
                format!("1,1.0\n{}", filler(|k| format!("{k},0.0"))),
                "1,-1e20\n2,1.0\n".to_owned(),
            ],
        ),
        (
            "checked overflow",
            n,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum""#,
            "k,n",
            [
                format!("1,{}\n", i64::MAX),
                format!("1,-5\n{}", filler(|k| format!("{k},0"))),
                "1,3\n2,1\n".to_owned(),
            ],
        ),
        (
            "reset on delete",
            n,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "aggregation.remove-record-on-delete": "true""#,
            "k,n,_ROW_KIND",
            [
                "1,5,+I\n".to_owned(),
                format!("1,,-D\n{}", filler(|k| format!("{k},0,+I"))),
                "1,3,+I\n2,1,+I\n".to_owned(),
            ],
        ),
    ];
    for (name, fields, options, header, runs) in cases {
        let runs = [runs[0].as_str(), runs[1].as_str(), runs[2].as_str()];
        // Bypassed: wrong rows, or a failed compaction.
        let mut store = layout(fields, options, header, runs);
        let before = rows(&mut store);
        match compact(&mut store, true) {
            Ok(out) => {
                assert_ne!(name, "checked overflow");
                assert_eq!(out.files_in, 2, "{name}");
                let after = rows(&mut store);
                assert_ne!(after, before, "{name}: regrouping should differ");
                // Only key 1 differs.
                let diff: Vec<&String> = after.iter().filter(|r| !before.contains(r)).collect();
                assert_eq!(diff.len(), 1, "{name}: {diff:?}");
                assert!(diff[0].starts_with(r#"{"k":1,"#), "{name}: {diff:?}");
            }
            Err(e) => {
                assert_eq!(name, "checked overflow", "{e}");
                assert!(e.to_string().contains("overflow"), "{name}: {e}");
            }
        }
        // Checked: Java's selection (everything to the max level), the full merge's rows.
        let mut store = layout(fields, options, header, runs);
        let before = rows(&mut store);
        let out = compact(&mut store, false).unwrap();
        assert_eq!(out.files_in, 3, "{name}");
        assert_eq!(rows(&mut store), before, "{name}");
        assert_eq!(levels(&mut store), BTreeMap::from([(5, 1)]), "{name}");
    }
}

/// Lookup tables (written with `write-only`, so that level 0 waits for the compaction):
/// level 0 goes one level above the large run; the large run and the oldest stay and are
/// looked up. First-row drops keys history holds (a level-0 file of only such keys leaves
/// nothing); partial-update materialises the nearest state with the level-0 records.
#[test]
fn lookup_tables_compact_level0_above_history() {
    let first_row =
        r#", "merge-engine": "first-row", "changelog-producer": "lookup", "write-only": "true""#;
    let s = r#", {"name": "s", "type": "STRING"}"#;
    let history = |newest: &str| {
        layout(
            s,
            first_row,
            "k,s",
            ["1,a\n2,a\n", &filler(|k| format!("{k},m")), newest],
        )
    };
    let mut store = history("1,x\n3,x\n150,x\n");
    let out = compact(&mut store, false).unwrap();
    assert_eq!((out.files_in, out.files_out), (1, 1));
    assert_eq!(levels(&mut store), BTreeMap::from([(2, 1), (3, 1), (5, 1)]));
    let got = rows(&mut store);
    assert_eq!(got.len(), 2 + 2000 + 1);
    for want in [
        r#"{"k":1,"s":"a"}"#,
        r#"{"k":3,"s":"x"}"#,
        r#"{"k":150,"s":"m"}"#,
    ] {
        assert!(got.contains(&want.to_owned()), "{want}");
    }
    // Every key already exists: level 0 is retired, nothing is written.
    let mut store = history("1,x\n150,x\n");
    let out = compact(&mut store, false).unwrap();
    assert_eq!((out.files_in, out.files_out), (1, 0));
    assert_eq!(levels(&mut store), BTreeMap::from([(3, 1), (5, 1)]));
    assert_eq!(rows(&mut store).len(), 2 + 2000);

    // Partial-update with lookup changelog: the nearest state (level 3) merges with level 0.
    let partial = r#", "merge-engine": "partial-update", "changelog-producer": "lookup", "write-only": "true""#;
    let fields = r#", {"name": "s", "type": "STRING"}, {"name": "n", "type": "INT"}"#;
    let mut store = layout(
        fields,
        partial,
        "k,s,n",
        [
            "1,a,1\n2,a,1\n",
            &format!("1,b,\n{}", filler(|k| format!("{k},m,1"))),
            "1,,7\n3,x,3\n",
        ],
    );
    let before = rows(&mut store);
    assert!(before.contains(&r#"{"k":1,"s":"b","n":7}"#.to_owned()));
    let out = compact(&mut store, false).unwrap();
    assert_eq!((out.files_in, out.files_out), (1, 1));
    assert_eq!(levels(&mut store), BTreeMap::from([(2, 1), (3, 1), (5, 1)]));
    assert_eq!(rows(&mut store), before);
    // The materialised state is the nearest one: a full compaction (Java's) agrees.
    let m = Machine::once("full", |io| async move {
        compact_job(&io, true, &job_settings(91)).await
    });
    store.run(m).unwrap();
    assert_eq!(levels(&mut store), BTreeMap::from([(5, 1)]));
    assert_eq!(rows(&mut store), before);
}

/// A task is a serde value carrying its output level, run anywhere; committing its result
/// twice (same commit user and identifier) applies it once.
#[test]
fn tasks_round_trip_and_commit_once() {
    use crate::compact::pk::{
        PkCompactContext, PkCompactRequest, PkCompactTask, plan_pk_compaction, run_compact_task,
    };
    let mut store = layout(
        r#", {"name": "n", "type": "INT"}"#,
        r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "max""#,
        "k,n",
        [
            "1,5\n2,1\n",
            &filler(|k| format!("{k},1")),
            "1,3\n2,2\n3,4\n",
        ],
    );
    let before = rows(&mut store);
    let m = Machine::once("plan", |io| async move {
        let schema = latest_schema(&io).await?;
        let files = read_latest_live_files(&io, &schema).await?.unwrap();
        let request = PkCompactRequest {
            now_millis: 1_767_225_600_000,
            schemas: files.schemas.clone(),
            ..Default::default()
        };
        let tasks = plan_pk_compaction(&schema, &files.entries, &request)?;
        Ok((schema, files.schemas, tasks))
    });
    let (schema, schemas, tasks) = store.run(m).unwrap().remove(0);
    assert_eq!(tasks.len(), 1);
    // The level-0 run and the oldest run, past the large middle run, to the max level; the
    // output keeps retractions though it is the max level.
    assert_eq!(tasks[0].unit.output_level, 5);
    assert_eq!(tasks[0].unit.files.len(), 2);
    assert!(!tasks[0].drop_delete);
    let json = serde_json::to_string(&tasks[0]).unwrap();
    let task: PkCompactTask = serde_json::from_str(&json).unwrap();
    assert_eq!(task, tasks[0]);
    let ctx = PkCompactContext {
        schema: schema.clone(),
        schemas,
        seed: 7,
        time_millis: 1_767_225_600_000,
        batch_size: 1024,
    };
    let m = Machine::once("run", move |io| async move {
        run_compact_task(&io, &ctx, &task).await
    });
    let (message, _) = store.run(m).unwrap().remove(0);
    let commit_once = |store: &mut MemoryStore| {
        let (schema, message) = (schema.clone(), message.clone());
        let m = Machine::once("commit", move |io| async move {
            let options = CommitOptions::new("coordinator", 1_767_225_700_000, 11);
            commit(&io, &schema, vec![message], &CommitMode::Append, &options).await
        });
        store.run(m).unwrap().remove(0)
    };
    let first = commit_once(&mut store);
    assert_eq!(first.snapshot_ids.len(), 1);
    assert!(!first.already_committed);
    let second = commit_once(&mut store);
    assert!(second.snapshot_ids.is_empty());
    assert!(second.already_committed);
    assert_eq!(levels(&mut store), BTreeMap::from([(3, 1), (5, 1)]));
    assert_eq!(rows(&mut store), before);
}

/// Write / compact rounds with a seeded mix of small and large writes, the option on: after
/// every round the rows equal a model of the merge engine (the full merge), and the levels
/// stay valid (the next plan decodes them). Lookup tables compact level 0 in their writes.
#[test]
fn write_compact_rounds_match_the_model() {
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Kind {
        PlainAggregation,
        FirstRow,
        PartialLookup,
    }
    for kind in [Kind::PlainAggregation, Kind::FirstRow, Kind::PartialLookup] {
        let (fields, options) = match kind {
            Kind::PlainAggregation => (
                r#", {"name": "n", "type": "BIGINT"}, {"name": "s", "type": "STRING"}"#,
                r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "fields.s.aggregate-function": "max""#,
            ),
            Kind::FirstRow => (
                r#", {"name": "n", "type": "BIGINT"}, {"name": "s", "type": "STRING"}"#,
                r#", "merge-engine": "first-row""#,
            ),
            Kind::PartialLookup => (
                r#", {"name": "n", "type": "BIGINT"}, {"name": "s", "type": "STRING"}"#,
                r#", "merge-engine": "partial-update", "changelog-producer": "lookup""#,
            ),
        };
        let json = format!(
            r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}{fields}],
            "primaryKeys": ["k"], "options": {{"bucket": "1", "{INCREMENTAL_SELECTION}": "true",
            "num-sorted-run.compaction-trigger": "2", "num-levels": "6"{options}}}}}"#
        );
        let mut store = MemoryStore::new();
        store
            .run(create_table_machine(
                new_table_schema(json.as_bytes(), 0).unwrap(),
            ))
            .unwrap();
        let mut rng = Lcg(17);
        NON_JAVA_PICKS.with(|c| c.set(0));
        // key → (n, s) of the model.
        let mut model: BTreeMap<i64, (Option<i64>, Option<String>)> = BTreeMap::new();
        for round in 0..24u64 {
            let count = if rng.next(6) == 0 {
                300 + rng.next(1200)
            } else {
                1 + rng.next(20)
            };
            let mut csv = String::from("k,n,s\n");
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..count {
                let k = rng.next(3000) as i64;
                if !seen.insert(k) {
                    continue;
                }
                let n = rng.next(100) as i64 - 50;
                let null_s = rng.next(4) == 0;
                let s = format!("v{}", rng.next(1000));
                csv.push_str(&format!("{k},{n},{}\n", if null_s { "" } else { &s }));
                let s = (!null_s).then_some(s);
                match kind {
                    Kind::PlainAggregation => {
                        let e = model.entry(k).or_insert((None, None));
                        e.0 = Some(e.0.unwrap_or(0) + n);
                        if s.is_some() && (e.1.is_none() || s > e.1) {
                            e.1 = s;
                        }
                    }
                    Kind::FirstRow => {
                        model.entry(k).or_insert((Some(n), s));
                    }
                    Kind::PartialLookup => {
                        let e = model.entry(k).or_insert((None, None));
                        e.0 = Some(n);
                        if s.is_some() {
                            e.1 = s;
                        }
                    }
                }
            }
            write(&mut store, &csv, 100 + round);
            if kind == Kind::PlainAggregation {
                compact(&mut store, false).unwrap();
            }
            let want: Vec<String> = {
                let mut v: Vec<String> = model
                    .iter()
                    .map(|(k, (n, s))| serde_json::json!({"k": k, "n": n, "s": s}).to_string())
                    .collect();
                v.sort();
                v
            };
            let got = rows(&mut store);
            assert!(
                got == want,
                "round {round}: {} rows, model {}",
                got.len(),
                want.len()
            );
        }
        // Incremental selection changed some plans.
        let picks = NON_JAVA_PICKS.with(|c| c.get());
        assert!(picks > 0, "no plan differed from Java's");
        eprintln!(
            "{:?}: {picks} plans differed from Java's; levels {:?}",
            kind as u8,
            levels(&mut store)
        );
    }
}
