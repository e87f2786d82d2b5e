//! Crash consistency of writes, over every recorded `write` case.
//!
//! For each `Put` of the case's transcript in turn (data files, schema, manifests, manifest
//! lists, snapshot, `LATEST` hint), the operation runs over an empty in-memory store with one
//! fault ([`Fault::CrashAfterPut`]: the process dies right after the `Put` is applied;
//! [`Fault::PutFails`]: the `Put` is not applied and fails; [`Fault::PutLost`]: it is applied
//! but its answer is lost). Then, on the store the run left:
//!
//! * (a) the table reads at the last snapshot published before the cut, with that snapshot's
//!   rows (as a clean run up to there reads them), and
//! * (b) no snapshot beyond it is visible (listing, `LATEST` resolution and the hint agree);
//! * (c) the interrupted step is run again as a restarted process would: a cut in a commit
//!   runs the same commit again (same messages, commit user, identifier and seed), which must
//!   publish exactly once (one new snapshot, or none when the cut came after its snapshot
//!   was published); a cut while the data files were written writes them again under a new
//!   seed and commits. The remaining commits of the case follow, and the table must end with
//!   the case's expected snapshots and rows.
//!
//! A run that survives its fault (a lost `LATEST` hint, a snapshot `Put` whose outcome the
//! commit resolves by retrying) must end in the expected state without any rerun. An error
//! must name the object whose `Put` was perturbed. Prints the number of runs per fault.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use paimon_conformance::Operation;
use paimon_conformance::driver::block_on_ready;
use paimon_conformance::faults::{Fault, FaultDriver, expected_outcome, run_with_fault};
use paimon_conformance::operation::{run_operation, run_scan};
use paimon_conformance::record::{Recorder, StoreDriver};
use paimon_conformance::replay::LoadedCase;
use paimon_conformance::write::{
    CommitSpec, CreateSpec, PreparedCommit, commit_prepared, create_table, prepare_commit,
    put_files,
};
use paimon_kernel::io::{Io, IoErrorKind, IoOp, Machine, MemoryStore};
use paimon_kernel::scan::snapshot_resolver::{LATEST_HINT, latest_snapshot_id, list_snapshots};
use serde_json::Value;

/// A restarted writer draws a new seed for its data files: this is added to the case's.
const RESTART_SEED_OFFSET: u64 = 0x5EED_0000_0000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Every recorded `write` case.
fn write_cases() -> Vec<LoadedCase> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| LoadedCase::load(d, &root().join("blobs")).unwrap())
        .filter(|c| matches!(c.case.operation, Operation::Write { .. }))
        .collect()
}

fn specs(case: &LoadedCase) -> (Option<CreateSpec>, Vec<CommitSpec>) {
    match &case.case.operation {
        Operation::Write { create, commits } => (create.clone(), commits.clone()),
        _ => unreachable!("write cases only"),
    }
}

/// What a reader sees of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    /// `(id, commit user, commit identifier, commit kind)` of every snapshot, by id.
    snapshots: Vec<(i64, String, i64, String)>,
    /// Rows of a scan of the latest snapshot (canonical JSON), sorted.
    rows: Vec<String>,
}

fn sorted_rows(scan_json: &Value) -> Vec<String> {
    let mut rows: Vec<String> = scan_json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    rows.sort();
    rows
}

/// Read the table in `store`: its snapshots, the latest one as `LATEST` resolution finds it
/// (which must be the last listed one, with the hint not beyond it), and a scan's rows.
fn observe(store: &MemoryStore) -> Result<State, String> {
    let mut s = store.clone();
    let listed = s
        .run(Machine::once("snapshots", |io: Io<_>| async move {
            list_snapshots(&io).await
        }))
        .map_err(|e| format!("listing snapshots: {e}"))?
        .pop()
        .unwrap();
    let latest = s
        .run(Machine::once("latest", |io: Io<_>| async move {
            latest_snapshot_id(&io).await
        }))
        .map_err(|e| format!("resolving the latest snapshot: {e}"))?
        .pop()
        .unwrap();
    let last_listed = listed.last().map(|s| s.id);
    if latest != last_listed {
        return Err(format!(
            "LATEST resolves to {latest:?}, the listing ends at {last_listed:?}"
        ));
    }
    if let Some(hint) = store.objects.get(LATEST_HINT) {
        let hint: i64 = String::from_utf8_lossy(hint).trim().parse().unwrap_or(-1);
        if Some(hint) > last_listed {
            return Err(format!(
                "the LATEST hint says {hint}, beyond the last snapshot {last_listed:?}"
            ));
        }
    }
    let mut driver = StoreDriver {
        store: &mut s,
        recorder: None,
    };
    let scan = block_on_ready(run_scan(&mut driver, &Operation::scan()))
        .and_then(|r| r)
        .map_err(|e| format!("scanning the latest snapshot: {e}"))?;
    let scan: Value = serde_json::from_str(&scan.json).unwrap();
    Ok(State {
        snapshots: listed
            .iter()
            .map(|s| {
                (
                    s.id,
                    s.commit_user.clone(),
                    s.commit_identifier,
                    s.commit_kind.to_string(),
                )
            })
            .collect(),
        rows: sorted_rows(&scan),
    })
}

/// A clean run of a case, step by step: the prepared commits and the state after the create
/// (`states[0]`) and after each commit (`states[i + 1]`).
struct Reference {
    create: Option<CreateSpec>,
    commits: Vec<CommitSpec>,
    prepared: Vec<PreparedCommit>,
    states: Vec<State>,
}

fn run_sync<F: std::future::Future>(f: F) -> F::Output {
    block_on_ready(f).unwrap()
}

impl Reference {
    fn build(case: &LoadedCase) -> Reference {
        let name = &case.case.name;
        let (create, commits) = specs(case);
        let mut store = MemoryStore::new();
        let mut states = Vec::new();
        let mut prepared = Vec::new();
        if let Some(c) = &create {
            let mut d = StoreDriver {
                store: &mut store,
                recorder: None,
            };
            run_sync(create_table(&mut d, c)).unwrap();
        }
        states.push(observe(&store).unwrap());
        for (i, spec) in commits.iter().enumerate() {
            let mut d = StoreDriver {
                store: &mut store,
                recorder: None,
            };
            let p = run_sync(prepare_commit(&mut d, i, spec, spec.seed)).unwrap();
            run_sync(put_files(&mut d, i, &p.files)).unwrap();
            let outcome = run_sync(commit_prepared(&mut d, i, &p)).unwrap();
            assert_eq!(
                outcome.snapshot_ids.len(),
                1,
                "{name}: commit {i} should publish one snapshot: {outcome:?}"
            );
            prepared.push(p);
            let state = observe(&store).unwrap();
            assert_eq!(state.snapshots.len(), i + 1, "{name}: after commit {i}");
            states.push(state);
        }
        let expected: Value = serde_json::from_str(&case.expected_json).unwrap();
        assert_eq!(
            states.last().unwrap().rows,
            sorted_rows(&expected["read"]),
            "{name}: the step-by-step run reads other rows than expected/"
        );
        Reference {
            create,
            commits,
            prepared,
            states,
        }
    }
}

/// `(section label, path)` of every `Put` of the transcript, in request order.
fn puts(case: &LoadedCase) -> Vec<(String, String)> {
    case.transcript
        .sections
        .iter()
        .flat_map(|s| {
            s.rounds
                .iter()
                .flat_map(|r| &r.requests)
                .filter(|q| q.op == "put")
                .map(|q| (s.label.clone(), q.path.clone().unwrap()))
        })
        .collect()
}

fn is_snapshot_file(path: &str) -> bool {
    path.strip_prefix("snapshot/snapshot-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The commit index of a `write-i` or `commit-i` label.
fn step_of(label: &str) -> Option<(&str, usize)> {
    let (kind, i) = label.rsplit_once('-')?;
    Some((kind, i.parse().ok()?))
}

/// How one faulted run went, for the summary.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    completed: usize,
    recovered: usize,
}

/// Run `case` with `fault` (at `put`), check the store it leaves, recover and finish.
fn crash_run(
    case: &LoadedCase,
    reference: &Reference,
    all_puts: &[(String, String)],
    put: usize,
    fault: Fault,
    tally: &mut Tally,
) -> Result<(), String> {
    let no_retry = |_: &IoOp, _: IoErrorKind, _: u32| false;
    let (label, path) = &all_puts[put];
    let mut driver = FaultDriver::new(MemoryStore::new(), fault, &no_retry);
    let result = catch_unwind(AssertUnwindSafe(|| {
        block_on_ready(run_operation(&mut driver, &case.case.operation)).and_then(|r| r)
    }))
    .map_err(|_| "the core panicked".to_string())?;
    if driver.perturbed != [path.clone()] {
        return Err(format!(
            "the fault hit {:?}, the transcript's put is {path}",
            driver.perturbed
        ));
    }
    let mut store = driver.into_store();
    let n = reference.commits.len();
    let published_before = all_puts[..put]
        .iter()
        .filter(|(_, p)| is_snapshot_file(p))
        .count();
    let error = match result {
        Ok(_) if matches!(fault, Fault::CrashAfterPut { .. }) => {
            return Err("the run went on after the crash".to_string());
        }
        Ok(_) => {
            // The core got over the fault by itself.
            let state = observe(&store)?;
            if state != reference.states[n] {
                return Err(format!(
                    "completed despite the fault but reads {state:?}, expected {:?}",
                    reference.states[n]
                ));
            }
            tally.completed += 1;
            return Ok(());
        }
        Err(e) => e.to_string(),
    };
    let file = path.rsplit('/').next().unwrap_or(path);
    if !error.contains(file) {
        return Err(format!("the error does not name {path}: {error}"));
    }
    // (a) and (b): the table is exactly as after some clean prefix of the commits (or, when
    // the schema never landed, there is nothing at all).
    if label == "create" && !store.objects.contains_key("schema/schema-0") {
        if !store.objects.is_empty() {
            return Err(format!(
                "no schema after the cut, but objects: {:?}",
                store.objects.keys().collect::<Vec<_>>()
            ));
        }
        let mut d = StoreDriver {
            store: &mut store,
            recorder: None,
        };
        if let Some(c) = &reference.create {
            run_sync(create_table(&mut d, c)).map_err(|e| format!("create again: {e}"))?;
        }
        return finish(d.store, reference, 0, label, tally);
    }
    let state = observe(&store).map_err(|e| format!("after the cut: {e}"))?;
    let visible = state.snapshots.len();
    let allowed: &[usize] = match fault {
        Fault::CrashAfterPut { .. } if is_snapshot_file(path) => &[published_before + 1],
        Fault::CrashAfterPut { .. } | Fault::PutFails { .. } => &[published_before],
        _ => &[published_before, published_before + 1],
    };
    if !allowed.contains(&visible) || reference.states.get(visible) != Some(&state) {
        return Err(format!(
            "after the cut ({error}) the table reads {state:?}; expected the state after \
             {allowed:?} commits: {:?}",
            allowed
                .iter()
                .map(|&j| reference.states.get(j))
                .collect::<Vec<_>>()
        ));
    }
    // (c): run the interrupted step again, then the rest.
    let mut d = StoreDriver {
        store: &mut store,
        recorder: None,
    };
    let next = match step_of(label) {
        None => {
            // The create.
            if !d.store.objects.contains_key("schema/schema-0")
                && let Some(c) = &reference.create
            {
                run_sync(create_table(&mut d, c)).map_err(|e| format!("create again: {e}"))?;
            }
            0
        }
        Some(("write", i)) => {
            let spec = &reference.commits[i];
            let seed = spec.seed.wrapping_add(RESTART_SEED_OFFSET);
            let p = run_sync(prepare_commit(&mut d, i, spec, seed))
                .map_err(|e| format!("write {i} again: {e}"))?;
            run_sync(put_files(&mut d, i, &p.files))
                .map_err(|e| format!("write {i} again: {e}"))?;
            let outcome = run_sync(commit_prepared(&mut d, i, &p))
                .map_err(|e| format!("commit {i} after writing again: {e}"))?;
            if outcome.snapshot_ids != [i as i64 + 1] || outcome.already_committed {
                return Err(format!(
                    "commit {i} after writing again published {outcome:?}"
                ));
            }
            i + 1
        }
        Some(("commit", i)) => {
            let outcome = run_sync(commit_prepared(&mut d, i, &reference.prepared[i]))
                .map_err(|e| format!("commit {i} again: {e}"))?;
            let ok = if visible == i + 1 {
                outcome.snapshot_ids.is_empty() && outcome.already_committed
            } else {
                outcome.snapshot_ids == [i as i64 + 1] && !outcome.already_committed
            };
            if !ok {
                return Err(format!(
                    "commit {i} again with {visible} snapshots visible gave {outcome:?} \
                     (exactly once: one new snapshot, or none when it was published)"
                ));
            }
            i + 1
        }
        Some(other) => return Err(format!("a put in section {other:?}")),
    };
    finish(d.store, reference, next, label, tally)
}

/// After the interrupted step ran again: the state after it, then the remaining commits and
/// the final state.
fn finish(
    store: &mut MemoryStore,
    reference: &Reference,
    next: usize,
    label: &str,
    tally: &mut Tally,
) -> Result<(), String> {
    let n = reference.commits.len();
    let mut d = StoreDriver {
        store,
        recorder: None,
    };
    if next > 0 {
        let state = observe(d.store)?;
        if state != reference.states[next] {
            return Err(format!(
                "after running step {label} again the table reads {state:?}, expected {:?}",
                reference.states[next]
            ));
        }
    }
    for (i, spec) in reference.commits.iter().enumerate().skip(next) {
        let p = run_sync(prepare_commit(&mut d, i, spec, spec.seed))
            .map_err(|e| format!("then write {i}: {e}"))?;
        run_sync(put_files(&mut d, i, &p.files)).map_err(|e| format!("then write {i}: {e}"))?;
        run_sync(commit_prepared(&mut d, i, &p)).map_err(|e| format!("then commit {i}: {e}"))?;
    }
    let state = observe(d.store)?;
    if state != reference.states[n] {
        return Err(format!(
            "after recovering the table reads {state:?}, expected {:?}",
            reference.states[n]
        ));
    }
    tally.recovered += 1;
    Ok(())
}

#[test]
fn every_write_cut_after_any_put_keeps_the_table_consistent_and_resumes_exactly_once() {
    let cases = write_cases();
    assert!(cases.len() >= 3, "only {} write cases", cases.len());
    let mut failures = Vec::new();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut total_puts = 0;
    for case in &cases {
        let reference = Reference::build(case);
        let all_puts = puts(case);
        total_puts += all_puts.len();
        for put in 0..all_puts.len() {
            for fault in [
                Fault::CrashAfterPut { target: put },
                Fault::PutFails { target: put },
                Fault::PutLost { target: put },
            ] {
                let tally = tallies.entry(fault.name()).or_default();
                tally.runs += 1;
                if let Err(e) = crash_run(case, &reference, &all_puts, put, fault, tally) {
                    failures.push(format!(
                        "{} [{} at put {put}, {} in {}]: {e}",
                        case.case.name,
                        fault.name(),
                        all_puts[put].1,
                        all_puts[put].0
                    ));
                }
            }
        }
    }
    println!(
        "{} write cases, {total_puts} puts; runs per fault:",
        cases.len()
    );
    for (name, t) in &tallies {
        println!(
            "  {name:<16} {:>4} runs: {:>4} completed despite the fault, {:>4} recovered",
            t.runs, t.completed, t.recovered
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs failed:\n{}",
        failures.len(),
        total_puts * 3,
        failures.join("\n")
    );
}

/// The transcript recorded through the object_store host is exactly what a run over an
/// in-memory store makes (so the crash runs above cut the recorded IO), and reordered answers
/// change nothing.
#[test]
fn write_cases_run_the_same_on_a_memory_store_and_under_reordered_answers() {
    for case in write_cases() {
        let name = &case.case.name;
        let expected = expected_outcome(&case.expected_json, case.expected_arrow.as_deref());
        let mut store = MemoryStore::new();
        let mut recorder = Recorder::new();
        let mut driver = StoreDriver {
            store: &mut store,
            recorder: Some(&mut recorder),
        };
        let outcome = run_sync(run_operation(&mut driver, &case.case.operation)).unwrap();
        assert_eq!(outcome, expected, "{name}: result over a memory store");
        assert_eq!(
            recorder.transcript, case.transcript,
            "{name}: the memory store run makes other IO than recorded"
        );
        let no_retry = |_: &IoOp, _: IoErrorKind, _: u32| false;
        let run = run_with_fault(
            &case.case,
            &MemoryStore::new(),
            Fault::ReorderAnswers,
            &no_retry,
            &expected,
        );
        assert!(
            run.verdict == paimon_conformance::faults::Verdict::Correct,
            "{name}: reordered answers: {:?}",
            run.verdict
        );
    }
}
