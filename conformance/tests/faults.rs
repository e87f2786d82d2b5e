//! Fault injection over every recorded read case (write cases: tests/crash.rs): the outcome is the expected result or a precise
//! error, never a panic or wrong rows. Prints the matrix (cases × faults, pass counts).
//!
//! The fault host retries with the native host's policy (`HostOptions::retries`,
//! `host::is_retryable`): transient failures of fewer attempts than `max_attempts` must give
//! the correct result, `max_attempts` of them a precise error.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use paimon_conformance::Operation;
use paimon_conformance::faults::{Fault, Verdict, expected_outcome, run_with_fault, spread};
use paimon_conformance::record::load_dir;
use paimon_conformance::replay::LoadedCase;
use paimon_kernel::io::{IoErrorKind, IoOp};
use paimon_native::HostOptions;
use paimon_native::host::is_retryable;

/// Targeted faults run at most this many times per case (targets spread over the case).
const MAX_TARGETS: usize = 12;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

#[derive(Default)]
struct Cell {
    cases: usize,
    runs: usize,
    correct: usize,
    precise: usize,
    imprecise: usize,
    wrong: usize,
    panics: usize,
}

#[test]
fn fault_matrix() {
    // Panics are caught and counted; keep their messages out of the output.
    std::panic::set_hook(Box::new(|_| {}));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let options = HostOptions::default();
    let policy = |op: &IoOp, kind: IoErrorKind, attempt: u32| {
        options.retries(kind, is_retryable(op), attempt)
    };
    let max = options.max_attempts;
    assert!(max >= 2, "the native host retries");
    let mut matrix: BTreeMap<String, Cell> = BTreeMap::new();
    let mut bugs: Vec<String> = Vec::new();
    let mut imprecise: Vec<String> = Vec::new();
    let mut stores = BTreeMap::new();
    for dir in &dirs {
        let case = LoadedCase::load(dir, &root().join("blobs")).unwrap();
        if matches!(case.case.operation, Operation::Write { .. }) {
            // Writes start from an empty store; tests/crash.rs injects their faults.
            continue;
        }
        let store = stores
            .entry(case.case.table.clone())
            .or_insert_with(|| {
                load_dir(&root().join("tables/corpus.db").join(&case.case.table)).unwrap()
            })
            .clone();
        let expected = expected_outcome(&case.expected_json, case.expected_arrow.as_deref());
        let rounds = case.transcript.sections.iter().flat_map(|s| &s.rounds);
        let reads = rounds
            .clone()
            .flat_map(|r| &r.answers)
            .filter(|a| a.answer == "bytes" && a.len.unwrap_or(0) > 0)
            .count();
        let requests = case.transcript.request_count();
        let mut faults = vec![
            Fault::ReorderAnswers,
            Fault::ExpiredSnapshot,
            Fault::TransientRetried { failures: 1 },
            Fault::TransientRetried { failures: max - 1 },
            Fault::TransientRetried { failures: max },
            Fault::ListUnsupported,
            Fault::ExtraBytes,
        ];
        faults.extend(
            spread(reads, MAX_TARGETS)
                .into_iter()
                .map(|target| Fault::TruncatedBody { target }),
        );
        faults.extend(
            spread(requests, MAX_TARGETS)
                .into_iter()
                .map(|target| Fault::TransientSurfaced { target }),
        );
        let mut seen = BTreeMap::new();
        for fault in faults {
            let run = run_with_fault(&case.case, &store, fault, &policy, &expected);
            if let Fault::TransientRetried { failures } = fault {
                // Retried by the policy, not merely survived: every request failed `failures`
                // times (or, when the host gives up, the first one failed `max` times).
                if failures < max {
                    let want = run.requests * failures as usize;
                    if run.retries != want || run.verdict != Verdict::Correct {
                        bugs.push(format!(
                            "{} [{fault:?}]: {} retries of {} requests, {:?}",
                            case.case.name, run.retries, run.requests, run.verdict
                        ));
                    }
                } else if !matches!(run.verdict, Verdict::PreciseError(_)) {
                    bugs.push(format!(
                        "{} [{fault:?}]: expected a precise error, got {:?}",
                        case.case.name, run.verdict
                    ));
                }
            }
            let cell = matrix.entry(fault.name()).or_default();
            if seen.insert(fault.name(), ()).is_none() {
                cell.cases += 1;
            }
            cell.runs += 1;
            let what = format!("{} [{fault:?}]", case.case.name);
            match run.verdict {
                Verdict::Correct => cell.correct += 1,
                Verdict::PreciseError(_) => cell.precise += 1,
                Verdict::ImpreciseError(e) => {
                    cell.imprecise += 1;
                    imprecise.push(format!("{what}: {e}"));
                }
                Verdict::WrongResult(d) => {
                    cell.wrong += 1;
                    bugs.push(format!("{what}: WRONG RESULT {d}"));
                }
                Verdict::Panic(p) => {
                    cell.panics += 1;
                    bugs.push(format!("{what}: PANIC {p}"));
                }
            }
        }
    }
    let _ = std::panic::take_hook();
    println!(
        "{:<20} {:>6} {:>6} {:>8} {:>8} {:>10} {:>6} {:>6}",
        "fault", "cases", "runs", "correct", "precise", "imprecise", "wrong", "panic"
    );
    for (name, c) in &matrix {
        println!(
            "{:<20} {:>6} {:>6} {:>8} {:>8} {:>10} {:>6} {:>6}",
            name, c.cases, c.runs, c.correct, c.precise, c.imprecise, c.wrong, c.panics
        );
    }
    for line in imprecise.iter().take(40) {
        println!("imprecise: {line}");
    }
    assert!(bugs.is_empty(), "{} bugs:\n{}", bugs.len(), bugs.join("\n"));
}
