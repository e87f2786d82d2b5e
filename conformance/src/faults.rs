//! Fault injection: a scripted host that answers a case's operation from the table's files and
//! perturbs the answers on purpose. For every case and perturbation the outcome must be the
//! correct result or a precise error (one naming the object that was perturbed): never a
//! panic, never wrong rows.
//!
//! Perturbations (see [`Fault`]): answers of a round handed to the machine in reverse order;
//! a snapshot file that disappears between `LATEST` and its read; a truncated body; a
//! transient error that the host retries; a transient error surfaced to the core; `List`
//! unsupported; a ranged read answered with bytes beyond the range. For writes: a `Put` that
//! fails, a `Put` whose answer is lost, and a crash right after a `Put` (the store keeps
//! what was applied; `tests/crash.rs` checks the table and resumes the write from there).
//!
//! The fault host retries like a real host: every request is attempted against the (possibly
//! flaky) store and a failed attempt is tried again as the [`RetryPolicy`] it is given says
//! (the tests pass the native host's policy, `paimon_native::HostOptions::retries`), so a
//! transient failure that the host recovers from never reaches the core.

use std::panic::{AssertUnwindSafe, catch_unwind};

use paimon_kernel::io::{IoAnswer, IoErrorKind, IoOp, Machine, MemoryStore, RequestId, Step};
use paimon_kernel::{Error, Result};

use crate::driver::{Driver, Outcome, block_on_ready};
use crate::format::Case;
use crate::operation::run_operation;

/// A host's retry policy: whether `op`, whose attempt number `attempt` (1 for the first)
/// failed with `kind`, is attempted again.
pub type RetryPolicy<'a> = &'a dyn Fn(&IoOp, IoErrorKind, u32) -> bool;

/// One perturbation. Those with a `target` perturb only the `target`-th eligible request of
/// the operation (counted over all machines, from 0), so that each eligible request can be
/// broken on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The answers of every round are provided in reverse id order.
    ReorderAnswers,
    /// Every `snapshot/snapshot-<n>` read answers `NotFound` (listing still shows it): the
    /// snapshot expired between `LATEST` (or the listing) and its read.
    ExpiredSnapshot,
    /// The `target`-th read answering bytes gets only the first half of them.
    TruncatedBody {
        /// Which read.
        target: usize,
    },
    /// The first `failures` attempts of every request fail with `Transient`, later ones get
    /// the right answer. Under a policy that retries at least `failures` times the core
    /// never sees the failures and the result must be correct; otherwise the request
    /// surfaces `Transient` to the core.
    TransientRetried {
        /// Failed attempts per request before the store answers.
        failures: u32,
    },
    /// The `target`-th request is answered `Transient` (the host gave up).
    TransientSurfaced {
        /// Which request.
        target: usize,
    },
    /// Every `List` answers `Unsupported` (plain HTTP).
    ListUnsupported,
    /// Every ranged read answers one byte more than asked.
    ExtraBytes,
    /// The `target`-th `Put` (counted over all machines, in request order) is not applied
    /// and answers `Transient`: the write failed.
    PutFails {
        /// Which `Put`.
        target: usize,
    },
    /// The `target`-th `Put` is applied but answers `Transient`: the write happened, its
    /// answer was lost (a timeout after the store took it).
    PutLost {
        /// Which `Put`.
        target: usize,
    },
    /// The process dies right after the `target`-th `Put` is applied: the driver answers
    /// nothing more (later requests of the round included) and returns an error naming the
    /// object ([`FaultDriver::crashed_after`]).
    CrashAfterPut {
        /// Which `Put`.
        target: usize,
    },
}

impl Fault {
    /// Short name for reports.
    pub fn name(&self) -> String {
        match self {
            Fault::ReorderAnswers => "reorder",
            Fault::ExpiredSnapshot => "expired-snapshot",
            Fault::TruncatedBody { .. } => "truncated",
            Fault::TransientRetried { failures } => {
                return format!("transient-retried-{failures}x");
            }
            Fault::TransientSurfaced { .. } => "transient-surfaced",
            Fault::ListUnsupported => "list-unsupported",
            Fault::ExtraBytes => "extra-bytes",
            Fault::PutFails { .. } => "put-fails",
            Fault::PutLost { .. } => "put-lost",
            Fault::CrashAfterPut { .. } => "crash-after-put",
        }
        .to_string()
    }
}

/// A [`Driver`] answering from a store with one [`Fault`], retrying failed attempts by a
/// [`RetryPolicy`].
pub struct FaultDriver<'a> {
    store: MemoryStore,
    fault: Fault,
    retry: RetryPolicy<'a>,
    /// Attempts that failed and were tried again (over all requests).
    pub retries: usize,
    /// Requests seen so far (over all machines).
    requests_seen: usize,
    /// Eligible reads seen so far (for [`Fault::TruncatedBody`]).
    reads_seen: usize,
    /// `Put`s seen so far (for the `Put` faults).
    puts_seen: usize,
    /// The path of the `Put` after which the process died ([`Fault::CrashAfterPut`]).
    crashed_after: Option<String>,
    /// Paths whose answers were perturbed.
    pub perturbed: Vec<String>,
}

fn is_snapshot_file(path: &str) -> bool {
    path.strip_prefix("snapshot/snapshot-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

impl<'a> FaultDriver<'a> {
    /// A driver over `store` with `fault`, retrying as `retry` says.
    pub fn new(store: MemoryStore, fault: Fault, retry: RetryPolicy<'a>) -> Self {
        FaultDriver {
            store,
            fault,
            retry,
            retries: 0,
            requests_seen: 0,
            reads_seen: 0,
            puts_seen: 0,
            crashed_after: None,
            perturbed: Vec::new(),
        }
    }

    /// The store as the run left it.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// The store as the run left it, taken.
    pub fn into_store(self) -> MemoryStore {
        self.store
    }

    /// The path of the `Put` after which the process died, once it did.
    pub fn crashed_after(&self) -> Option<&str> {
        self.crashed_after.as_deref()
    }

    /// Requests answered so far (over all machines).
    pub fn requests_seen(&self) -> usize {
        self.requests_seen
    }

    /// Attempt number `attempt` (from 1) of `op` against the store.
    fn attempt(&mut self, op: &IoOp, attempt: u32) -> IoAnswer {
        match self.fault {
            Fault::TransientRetried { failures } if attempt <= failures => IoAnswer::Error {
                kind: IoErrorKind::Transient,
                detail: format!("injected failure of attempt {attempt}"),
            },
            _ => self.store.answer(op),
        }
    }

    fn answer(&mut self, op: &IoOp) -> IoAnswer {
        let index = self.requests_seen;
        self.requests_seen += 1;
        let put = match op {
            IoOp::Put { .. } => {
                self.puts_seen += 1;
                Some(self.puts_seen - 1)
            }
            _ => None,
        };
        if let Fault::PutFails { target } = self.fault
            && put == Some(target)
        {
            // Not applied, never retried: the store did not take it.
            self.perturbed.push(op.path().to_string());
            return IoAnswer::error(IoErrorKind::Transient);
        }
        let mut attempt = 1u32;
        let mut answer = loop {
            let answer = self.attempt(op, attempt);
            match &answer {
                IoAnswer::Error { kind, .. } if (self.retry)(op, *kind, attempt) => {
                    self.retries += 1;
                    attempt += 1;
                }
                _ => break answer,
            }
        };
        if matches!(self.fault, Fault::TransientRetried { .. })
            && matches!(
                answer,
                IoAnswer::Error {
                    kind: IoErrorKind::Transient,
                    ..
                }
            )
        {
            // The host gave up: the core sees the failure of this path.
            self.perturbed.push(op.path().to_string());
        }
        match (self.fault, op) {
            (Fault::ExpiredSnapshot, IoOp::Read { path, .. }) if is_snapshot_file(path) => {
                self.perturbed.push(path.clone());
                answer = IoAnswer::error(IoErrorKind::NotFound);
            }
            (Fault::TransientSurfaced { target }, _) if target == index => {
                self.perturbed.push(op.path().to_string());
                answer = IoAnswer::error(IoErrorKind::Transient);
            }
            (Fault::ListUnsupported, IoOp::List { prefix }) => {
                self.perturbed.push(prefix.clone());
                answer = IoAnswer::error(IoErrorKind::Unsupported);
            }
            (
                Fault::ExtraBytes,
                IoOp::Read {
                    path,
                    range: Some(r),
                },
            ) => {
                if let IoAnswer::Bytes { bytes } = &answer {
                    let mut longer = bytes.to_vec();
                    // The object's next byte when there is one, else a zero.
                    let next = self
                        .store
                        .objects
                        .get(path)
                        .and_then(|b| usize::try_from(r.end).ok().and_then(|e| b.get(e)))
                        .copied()
                        .unwrap_or(0);
                    longer.push(next);
                    self.perturbed.push(path.clone());
                    answer = IoAnswer::bytes(longer);
                }
            }
            (Fault::PutLost { target }, IoOp::Put { path, .. }) if put == Some(target) => {
                self.perturbed.push(path.clone());
                answer = IoAnswer::error(IoErrorKind::Transient);
            }
            (Fault::CrashAfterPut { target }, IoOp::Put { path, .. }) if put == Some(target) => {
                self.perturbed.push(path.clone());
                self.crashed_after = Some(path.clone());
            }
            (Fault::TruncatedBody { target }, IoOp::Read { path, .. }) => {
                if let IoAnswer::Bytes { bytes } = &answer
                    && !bytes.is_empty()
                {
                    if self.reads_seen == target {
                        self.perturbed.push(path.clone());
                        answer = IoAnswer::bytes(bytes.slice(0..bytes.len() / 2));
                    }
                    self.reads_seen += 1;
                }
            }
            _ => {}
        }
        answer
    }
}

impl Driver for FaultDriver<'_> {
    async fn drive<T: Send + 'static>(
        &mut self,
        _label: &str,
        mut machine: Machine<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        loop {
            match machine.step()? {
                Step::NeedIo(round) => {
                    let mut answers: Vec<(RequestId, IoAnswer)> = Vec::new();
                    for r in &round {
                        answers.push((r.id, self.answer(&r.op)));
                        if let Some(path) = &self.crashed_after {
                            // The process is gone: nothing more is answered or applied.
                            return Err(Error::Protocol {
                                detail: format!("injected crash after the put of {path}"),
                            });
                        }
                    }
                    if self.fault == Fault::ReorderAnswers {
                        answers.reverse();
                    }
                    for (id, a) in answers {
                        machine.provide(id, a)?;
                    }
                }
                Step::Emit(item) => out.push(item),
                Step::Work(items) => items.into_iter().for_each(|w| w.run()),
                Step::Wait => {}
                Step::Done => return Ok(out),
            }
        }
    }
}

/// How one run under a fault ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The exact expected result.
    Correct,
    /// An error that names a perturbed object (or a perturbation that did not apply).
    PreciseError(String),
    /// An error that names none of the perturbed objects.
    ImpreciseError(String),
    /// A result that differs from the expected one: a bug.
    WrongResult(String),
    /// The core panicked: a bug.
    Panic(String),
}

impl Verdict {
    /// Correct result or precise error.
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Correct | Verdict::PreciseError(_))
    }
}

/// Result of one run: the verdict and whether the fault fired at all.
#[derive(Debug, Clone)]
pub struct Run {
    /// The verdict.
    pub verdict: Verdict,
    /// Whether any answer was perturbed (a targeted fault past the last eligible request
    /// does not fire).
    pub fired: bool,
    /// Requests the operation made (over all machines).
    pub requests: usize,
    /// Failed attempts the host tried again.
    pub retries: usize,
}

/// Run `case` over `store` with `fault`, the host retrying as `retry` says, and judge the
/// outcome against `expected`.
pub fn run_with_fault(
    case: &Case,
    store: &MemoryStore,
    fault: Fault,
    retry: RetryPolicy<'_>,
    expected: &Outcome,
) -> Run {
    let mut driver = FaultDriver::new(store.clone(), fault, retry);
    let result = catch_unwind(AssertUnwindSafe(|| {
        block_on_ready(run_operation(&mut driver, &case.operation)).and_then(|r| r)
    }));
    let fired = !driver.perturbed.is_empty()
        || driver.retries > 0
        || matches!(fault, Fault::ReorderAnswers);
    let verdict = match result {
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "non-string panic".to_string());
            Verdict::Panic(msg)
        }
        Ok(Ok(outcome)) => {
            if outcome == *expected || accepted_alternative(case, fault).as_ref() == Some(&outcome)
            {
                Verdict::Correct
            } else {
                Verdict::WrongResult(first_difference(&outcome.json, &expected.json))
            }
        }
        Ok(Err(e)) => {
            let msg = e.to_string();
            let names = driver.perturbed.iter().any(|p| {
                let file = p.rsplit('/').next().unwrap_or(p);
                msg.contains(p.as_str()) || (!file.is_empty() && msg.contains(file))
            }) || (fault == Fault::ListUnsupported && msg.contains("list"));
            if names {
                Verdict::PreciseError(msg)
            } else {
                Verdict::ImpreciseError(msg)
            }
        }
    };
    Run {
        verdict,
        fired,
        requests: driver.requests_seen,
        retries: driver.retries,
    }
}

/// A second correct outcome of `case` under `fault`, where one exists: listing snapshots when
/// every snapshot expires between the listing and its read gives no snapshots (expired
/// snapshots are skipped, as Java's `SnapshotManager.safelyGetAllSnapshots`).
pub fn accepted_alternative(case: &Case, fault: Fault) -> Option<Outcome> {
    match (&case.operation, fault) {
        (crate::Operation::Snapshots, Fault::ExpiredSnapshot) => Some(Outcome {
            json: "[]\n".to_string(),
            arrow: None,
        }),
        _ => None,
    }
}

fn first_difference(got: &str, want: &str) -> String {
    let line = got
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(got.lines().count().min(want.lines().count()));
    format!(
        "line {}: got {:?}, expected {:?}",
        line + 1,
        got.lines().nth(line).unwrap_or("<end>"),
        want.lines().nth(line).unwrap_or("<end>")
    )
}

/// Expected outcome of a loaded case, as an [`Outcome`].
pub fn expected_outcome(json: &str, arrow: Option<&[u8]>) -> Outcome {
    Outcome {
        json: json.to_string(),
        arrow: arrow.map(<[u8]>::to_vec),
    }
}

/// Indexes `0..n` thinned to at most `max` evenly spaced ones (first and last kept).
pub fn spread(n: usize, max: usize) -> Vec<usize> {
    if n <= max || max < 2 {
        return (0..n.min(max.max(1))).collect();
    }
    let mut out: Vec<usize> = (0..max).map(|i| i * (n - 1) / (max - 1)).collect();
    out.dedup();
    out
}
