//! Machines and the [`Io`] handle their operations are written against: requests registered
//! by awaiting an IO call, handed out as rounds by [`Machine::step`], answered by the host;
//! CPU work handed out as [`Work`] items.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use super::{IoAnswer, IoErrorKind, IoOp, IoRequest, ObjectMeta, PutMode, RequestId, Step};
use crate::error::{Error, Result};

/// Shared state between a machine and the [`Io`] handles of its operation.
struct IoState<T> {
    next_id: u64,
    /// Requests made since the last round was handed out.
    fresh: Vec<IoRequest>,
    /// Requests handed out and not yet answered.
    outstanding: BTreeMap<RequestId, IoOp>,
    /// Answers not yet taken by their future.
    answers: BTreeMap<RequestId, (IoOp, IoAnswer)>,
    /// Wakers of futures waiting for an answer: combinators such as `FuturesUnordered`
    /// (used by `join_all`/`try_join_all` above 30 futures) only re-poll woken futures.
    wakers: BTreeMap<RequestId, Waker>,
    /// Results emitted by the operation, not yet handed to the host.
    emitted: std::collections::VecDeque<T>,
    /// Work items the host may run at once (1: run work inline).
    parallelism: usize,
    /// Work made since the last step, not yet handed out.
    fresh_work: Vec<Work>,
    /// Counters of work made and finished, shared with the work items.
    work: Arc<WorkCounters>,
}

/// How many [`Work`] items of a machine exist and how many finished.
#[derive(Default)]
struct WorkCounters {
    made: AtomicU64,
    finished: AtomicU64,
}

/// One piece of CPU work handed to the host by [`Step::Work`]: decoding, merging... It does
/// no IO, and its result goes back to the operation that made it when it finishes.
pub struct Work {
    job: Box<dyn FnOnce() + Send>,
}

impl Work {
    /// Run the work to completion on the calling thread.
    pub fn run(self) {
        (self.job)()
    }
}

impl fmt::Debug for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Work")
    }
}

enum SlotState<R> {
    Running(Option<Waker>),
    Done(R),
    Taken,
}

/// The result of work started with [`Io::spawn_work`]: await it to get the value. Dropping
/// it discards the result (the work still runs).
pub struct WorkHandle<R> {
    slot: Arc<Mutex<SlotState<R>>>,
}

impl<R> fmt::Debug for WorkHandle<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &*lock(&self.slot) {
            SlotState::Running(_) => "running",
            SlotState::Done(_) => "done",
            SlotState::Taken => "taken",
        };
        f.debug_struct("WorkHandle").field("state", &state).finish()
    }
}

impl<R> WorkHandle<R> {
    /// The result if the work has finished, without waiting; `None` while it runs (and after
    /// the result was taken).
    pub fn try_take(&mut self) -> Option<R> {
        let mut slot = lock(&self.slot);
        match std::mem::replace(&mut *slot, SlotState::Taken) {
            SlotState::Done(r) => Some(r),
            other => {
                *slot = other;
                None
            }
        }
    }
}

impl<R> Future for WorkHandle<R> {
    type Output = R;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let mut slot = lock(&self.slot);
        match std::mem::replace(&mut *slot, SlotState::Taken) {
            SlotState::Done(r) => Poll::Ready(r),
            SlotState::Running(_) => {
                *slot = SlotState::Running(Some(cx.waker().clone()));
                Poll::Pending
            }
            // Polled after completion: a bug of the caller; stay pending rather than panic
            // (the machine then reports a protocol error).
            SlotState::Taken => Poll::Pending,
        }
    }
}

/// The operation's handle to ask for IO and to emit results. Cheap to clone.
///
/// All methods are `async`: they register a request and complete when the host answered it.
/// Awaiting several of them concurrently (`futures::future::join_all`) puts them in one round.
pub struct Io<T = ()> {
    state: Arc<Mutex<IoState<T>>>,
}

impl<T> Clone for Io<T> {
    fn clone(&self) -> Self {
        Io {
            state: Arc::clone(&self.state),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock means a panic elsewhere already happened; the state itself is still
    // consistent (every mutation is a single push/insert), so keep going.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<T> Io<T> {
    fn register(&self, op: IoOp) -> RequestId {
        let mut st = lock(&self.state);
        let id = RequestId(st.next_id);
        st.next_id += 1;
        st.fresh.push(IoRequest { id, op });
        id
    }

    /// Perform `op` and return the host's raw answer (errors included).
    pub async fn call(&self, op: IoOp) -> IoAnswer {
        let id = self.register(op);
        AnswerFuture {
            state: Arc::clone(&self.state),
            id,
        }
        .await
    }

    /// Read a whole object. `NotFound` and other failures become [`Error::Io`].
    pub async fn read(&self, path: &str) -> Result<Bytes> {
        match self.read_opt(path, None).await? {
            Some(b) => Ok(b),
            None => Err(Error::io(path, IoErrorKind::NotFound, "")),
        }
    }

    /// Read `range` of an object; checks that exactly `range.end - range.start` bytes came
    /// back.
    pub async fn read_range(&self, path: &str, range: Range<u64>) -> Result<Bytes> {
        match self.read_opt(path, Some(range)).await? {
            Some(b) => Ok(b),
            None => Err(Error::io(path, IoErrorKind::NotFound, "")),
        }
    }

    /// Read an object or a range of it; `Ok(None)` when it does not exist.
    pub async fn read_opt(&self, path: &str, range: Option<Range<u64>>) -> Result<Option<Bytes>> {
        let op = IoOp::Read {
            path: path.to_string(),
            range: range.clone(),
        };
        match self.call(op).await {
            IoAnswer::Bytes { bytes } => {
                if let Some(r) = range {
                    let want = r.end.saturating_sub(r.start);
                    if bytes.len() as u64 != want {
                        return Err(Error::Protocol {
                            detail: format!(
                                "read of {path} range {}..{} answered with {} bytes, expected {want}",
                                r.start,
                                r.end,
                                bytes.len()
                            ),
                        });
                    }
                }
                Ok(Some(bytes))
            }
            IoAnswer::Error {
                kind: IoErrorKind::NotFound,
                ..
            } => Ok(None),
            IoAnswer::Error { kind, detail } => Err(Error::io(path, kind, detail)),
            other => Err(unexpected_answer(path, "bytes", &other)),
        }
    }

    /// Size of an object in bytes; `Ok(None)` when it does not exist.
    pub async fn head(&self, path: &str) -> Result<Option<u64>> {
        match self
            .call(IoOp::Head {
                path: path.to_string(),
            })
            .await
        {
            IoAnswer::Head { size_bytes } => Ok(Some(size_bytes)),
            IoAnswer::Error {
                kind: IoErrorKind::NotFound,
                ..
            } => Ok(None),
            IoAnswer::Error { kind, detail } => Err(Error::io(path, kind, detail)),
            other => Err(unexpected_answer(path, "head", &other)),
        }
    }

    /// List objects under `prefix`, sorted by path. `Ok(None)` when the host cannot list
    /// (`Unsupported`); an absent directory lists as empty.
    pub async fn list(&self, prefix: &str) -> Result<Option<Vec<ObjectMeta>>> {
        match self
            .call(IoOp::List {
                prefix: prefix.to_string(),
            })
            .await
        {
            IoAnswer::List { mut objects } => {
                objects.sort();
                Ok(Some(objects))
            }
            IoAnswer::Error {
                kind: IoErrorKind::Unsupported,
                ..
            } => Ok(None),
            IoAnswer::Error {
                kind: IoErrorKind::NotFound,
                ..
            } => Ok(Some(Vec::new())),
            IoAnswer::Error { kind, detail } => Err(Error::io(prefix, kind, detail)),
            other => Err(unexpected_answer(prefix, "list", &other)),
        }
    }

    /// Write an object. Returns `Ok(false)` when `mode` is [`PutMode::CreateNew`] and the
    /// object already exists.
    pub async fn put(&self, path: &str, bytes: Bytes, mode: PutMode) -> Result<bool> {
        match self
            .call(IoOp::Put {
                path: path.to_string(),
                bytes,
                mode,
            })
            .await
        {
            IoAnswer::Done => Ok(true),
            IoAnswer::Error {
                kind: IoErrorKind::AlreadyExists,
                ..
            } if mode == PutMode::CreateNew => Ok(false),
            IoAnswer::Error { kind, detail } => Err(Error::io(path, kind, detail)),
            other => Err(unexpected_answer(path, "done", &other)),
        }
    }

    /// Delete an object; a missing object is not an error.
    pub async fn delete(&self, path: &str) -> Result<()> {
        match self
            .call(IoOp::Delete {
                path: path.to_string(),
            })
            .await
        {
            IoAnswer::Done
            | IoAnswer::Error {
                kind: IoErrorKind::NotFound,
                ..
            } => Ok(()),
            IoAnswer::Error { kind, detail } => Err(Error::io(path, kind, detail)),
            other => Err(unexpected_answer(path, "done", &other)),
        }
    }

    /// Send part `part` of the streamed write of `path` ([`IoOp::PutPart`]).
    pub async fn put_part(&self, path: &str, part: u32, bytes: Bytes) -> Result<()> {
        let op = IoOp::PutPart {
            path: path.to_string(),
            part,
            bytes,
        };
        self.expect_done(path, op).await
    }

    /// Complete the streamed write of `path` after `parts` parts ([`IoOp::PutComplete`]).
    /// Returns `Ok(false)` when the host found an object at `path` already.
    pub async fn put_complete(&self, path: &str, parts: u32) -> Result<bool> {
        let op = IoOp::PutComplete {
            path: path.to_string(),
            parts,
        };
        match self.call(op).await {
            IoAnswer::Done => Ok(true),
            IoAnswer::Error {
                kind: IoErrorKind::AlreadyExists,
                ..
            } => Ok(false),
            IoAnswer::Error { kind, detail } => Err(Error::io(path, kind, detail)),
            other => Err(unexpected_answer(path, "done", &other)),
        }
    }

    /// Abort the streamed write of `path` ([`IoOp::PutAbort`]); a host without an open upload
    /// there answers `Done` or `NotFound`, both fine.
    pub async fn put_abort(&self, path: &str) -> Result<()> {
        let op = IoOp::PutAbort {
            path: path.to_string(),
        };
        match self.call(op).await {
            IoAnswer::Done
            | IoAnswer::Error {
                kind: IoErrorKind::NotFound,
                ..
            } => Ok(()),
            IoAnswer::Error { kind, detail } => Err(Error::io(path, kind, detail)),
            other => Err(unexpected_answer(path, "done", &other)),
        }
    }

    async fn expect_done(&self, path: &str, op: IoOp) -> Result<()> {
        match self.call(op).await {
            IoAnswer::Done => Ok(()),
            IoAnswer::Error { kind, detail } => Err(Error::io(path, kind, detail)),
            other => Err(unexpected_answer(path, "done", &other)),
        }
    }

    /// Work items the host runs at once: 1 when work runs inline (the default), more when
    /// the host said so with [`Machine::with_parallelism`]. Operations use it to decide
    /// how finely to cut their CPU work (e.g. into column groups).
    pub fn parallelism(&self) -> usize {
        lock(&self.state).parallelism
    }

    /// Start `f` as a piece of CPU work and return a handle to await its result.
    ///
    /// With parallelism 1, `f` runs right here, before this returns. Otherwise it becomes a
    /// [`Work`] item of the machine's next step and the host runs it, possibly on another
    /// thread while the operation goes on; awaiting the handle before it finished makes the
    /// machine [`Step::Wait`]. `f` must not do IO (it has no [`Io`]) and should be at least
    /// tens of microseconds of work: each item costs a hand-off to another thread.
    pub fn spawn_work<R, F>(&self, f: F) -> WorkHandle<R>
    where
        R: Send + 'static,
        F: FnOnce() -> R + Send + 'static,
    {
        let mut st = lock(&self.state);
        if st.parallelism <= 1 {
            drop(st);
            return WorkHandle {
                slot: Arc::new(Mutex::new(SlotState::Done(f()))),
            };
        }
        let slot = Arc::new(Mutex::new(SlotState::Running(None)));
        let theirs = Arc::clone(&slot);
        let counters = Arc::clone(&st.work);
        counters.made.fetch_add(1, Ordering::SeqCst);
        st.fresh_work.push(Work {
            job: Box::new(move || {
                let value = f();
                let waker = match std::mem::replace(&mut *lock(&theirs), SlotState::Done(value)) {
                    SlotState::Running(waker) => waker,
                    _ => None,
                };
                counters.finished.fetch_add(1, Ordering::SeqCst);
                if let Some(w) = waker {
                    w.wake();
                }
            }),
        });
        WorkHandle { slot }
    }

    /// Hand a result to the host. The operation goes on until its next IO; to keep memory
    /// bounded, emit with [`Io::emit_and_yield`], which suspends until the host took the item.
    pub fn emit(&self, item: T) {
        lock(&self.state).emitted.push_back(item);
    }

    /// Emit `item` and suspend until the host took it (backpressure for streams).
    pub async fn emit_and_yield(&self, item: T) {
        self.emit(item);
        YieldNow { yielded: false }.await
    }
}

struct AnswerFuture<T> {
    state: Arc<Mutex<IoState<T>>>,
    id: RequestId,
}

impl<T> Future for AnswerFuture<T> {
    type Output = IoAnswer;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<IoAnswer> {
        let mut st = lock(&self.state);
        match st.answers.remove(&self.id) {
            Some((_, answer)) => Poll::Ready(answer),
            None => {
                st.wakers.insert(self.id, cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            Poll::Ready(())
        } else {
            self.yielded = true;
            Poll::Pending
        }
    }
}

type BoxedOp = Pin<Box<dyn Future<Output = Result<()>> + Send>>;

/// A resumable operation driven by the host through rounds of IO. `T` is what it emits.
///
/// Errors returned by [`Machine::step`] are final: the machine is finished after one.
pub struct Machine<T> {
    name: &'static str,
    description: Option<String>,
    state: Arc<Mutex<IoState<T>>>,
    op: Option<BoxedOp>,
    failed: bool,
}

impl<T> fmt::Debug for Machine<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.state);
        f.debug_struct("Machine")
            .field("name", &self.name)
            .field("next_request_id", &st.next_id)
            .field("outstanding", &st.outstanding.len())
            .field("finished", &self.op.is_none())
            .finish()
    }
}

/// Drive a nested `machine` within an operation that has its own [`Io`] until it emits a
/// value (`Some`) or ends (`None`): its IO requests become `io`'s (each round's requests
/// concurrently), its work runs inline (parallelism 1). Call again for the next value.
///
/// # Errors
/// The nested machine's errors.
pub async fn next_emitted<T, R: Send + 'static>(
    io: &Io<T>,
    machine: &mut Machine<R>,
) -> Result<Option<R>> {
    loop {
        match machine.step()? {
            Step::NeedIo(requests) => {
                let answers =
                    futures_util::future::join_all(requests.into_iter().map(|r| async move {
                        let answer = io.call(r.op).await;
                        (r.id, answer)
                    }))
                    .await;
                for (id, answer) in answers {
                    machine.provide(id, answer)?;
                }
            }
            Step::Emit(value) => return Ok(Some(value)),
            Step::Work(items) => items.into_iter().for_each(Work::run),
            Step::Wait => {}
            Step::Done => return Ok(None),
        }
    }
}

impl<T: Send + 'static> Machine<T> {
    /// Build a machine from an operation. `name` appears in debug output and protocol errors.
    ///
    /// `body` receives the [`Io`] handle and returns the operation's future.
    pub fn new<F, Fut>(name: &'static str, body: F) -> Self
    where
        F: FnOnce(Io<T>) -> Fut,
        Fut: Future<Output = Result<()>> + Send + 'static,
    {
        let state = Arc::new(Mutex::new(IoState {
            next_id: 0,
            fresh: Vec::new(),
            outstanding: BTreeMap::new(),
            answers: BTreeMap::new(),
            wakers: BTreeMap::new(),
            emitted: std::collections::VecDeque::new(),
            parallelism: 1,
            fresh_work: Vec::new(),
            work: Arc::new(WorkCounters::default()),
        }));
        let io = Io {
            state: Arc::clone(&state),
        };
        Machine {
            name,
            description: None,
            state,
            op: Some(Box::pin(body(io))),
            failed: false,
        }
    }

    /// A machine that computes one value and emits it once.
    pub fn once<F, Fut>(name: &'static str, body: F) -> Self
    where
        F: FnOnce(Io<T>) -> Fut,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        Machine::new(name, move |io: Io<T>| {
            let fut = body(io.clone());
            async move {
                let value = fut.await?;
                io.emit(value);
                Ok(())
            }
        })
    }

    /// Let the operation hand out up to `n` [`Work`] items at once ([`Step::Work`]) instead
    /// of running its CPU work inline. `n` is a hint for how finely to cut work (usually
    /// the cores the host may use); 0 and 1 mean inline. Call before the first step.
    pub fn with_parallelism(self, n: usize) -> Self {
        lock(&self.state).parallelism = n.max(1);
        self
    }

    /// Advance until the machine needs IO, emits a result, finishes or fails.
    ///
    /// Errors: [`Error::Protocol`] if requests of the previous round are unanswered; any
    /// error of the operation itself.
    pub fn step(&mut self) -> Result<Step<T>> {
        if self.failed {
            return Err(Error::Protocol {
                detail: format!("{}: step called after the machine failed", self.name),
            });
        }
        {
            let mut st = lock(&self.state);
            if let Some(item) = st.emitted.pop_front() {
                return Ok(Step::Emit(item));
            }
            if let Some((id, op)) = st.outstanding.iter().next() {
                let detail = format!(
                    "{}: step called before request {id} ({} {}) was answered",
                    self.name,
                    op_name(op),
                    op.path()
                );
                return Err(Error::Protocol { detail });
            }
            if !st.fresh_work.is_empty() {
                return Ok(Step::Work(std::mem::take(&mut st.fresh_work)));
            }
            if !st.fresh.is_empty() {
                return Ok(Step::NeedIo(hand_out(&mut st)));
            }
        }
        let Some(op) = self.op.as_mut() else {
            return Ok(Step::Done);
        };
        let counters = Arc::clone(&lock(&self.state).work);
        let mut cx = Context::from_waker(Waker::noop());
        let polled = loop {
            let finished_before = counters.finished.load(Ordering::SeqCst);
            let polled = op.as_mut().poll(&mut cx);
            if polled.is_ready() {
                break polled;
            }
            let st = lock(&self.state);
            if !st.emitted.is_empty() || !st.fresh_work.is_empty() || !st.fresh.is_empty() {
                break polled;
            }
            let finished = counters.finished.load(Ordering::SeqCst);
            if finished < counters.made.load(Ordering::SeqCst) {
                return Ok(Step::Wait);
            }
            if finished == finished_before {
                break polled;
            }
            // Work finished while the operation was being polled: poll again.
        };
        let mut st = lock(&self.state);
        match polled {
            Poll::Ready(Ok(())) => {
                self.op = None;
                // Work whose handle was dropped unawaited is not needed any more.
                st.fresh_work.clear();
                if !st.fresh.is_empty() {
                    self.failed = true;
                    return Err(Error::Protocol {
                        detail: format!("{}: finished with unawaited requests", self.name),
                    });
                }
                Ok(match st.emitted.pop_front() {
                    Some(item) => Step::Emit(item),
                    None => Step::Done,
                })
            }
            Poll::Ready(Err(e)) => {
                self.op = None;
                self.failed = true;
                Err(e)
            }
            Poll::Pending => {
                // Results first, then work (so it runs while the IO is done); a round made in
                // the same poll is handed out by a later step.
                if let Some(item) = st.emitted.pop_front() {
                    Ok(Step::Emit(item))
                } else if !st.fresh_work.is_empty() {
                    Ok(Step::Work(std::mem::take(&mut st.fresh_work)))
                } else if !st.fresh.is_empty() {
                    Ok(Step::NeedIo(hand_out(&mut st)))
                } else {
                    self.op = None;
                    self.failed = true;
                    Err(Error::Protocol {
                        detail: format!(
                            "{}: operation suspended without asking for IO or emitting",
                            self.name
                        ),
                    })
                }
            }
        }
    }

    /// Answer request `id` of the current round.
    ///
    /// Errors: [`Error::Protocol`] if `id` was not asked in the current round or was answered
    /// already.
    pub fn provide(&mut self, id: RequestId, answer: IoAnswer) -> Result<()> {
        let mut st = lock(&self.state);
        match st.outstanding.remove(&id) {
            Some(op) => {
                st.answers.insert(id, (op, answer));
                let waker = st.wakers.remove(&id);
                drop(st);
                if let Some(w) = waker {
                    w.wake();
                }
                Ok(())
            }
            None => Err(Error::Protocol {
                detail: format!(
                    "{}: answer for request {id}, which is not outstanding",
                    self.name
                ),
            }),
        }
    }

    /// The machine's name (an identifier for debug output and protocol errors, not for users;
    /// see [`Machine::describe`]).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Say what the machine does, in the user's words and with the table it works on, e.g.
    /// `reading snapshot 3 of table file:///t`. Hosts put it in front of the machine's
    /// errors (`reading snapshot 3 of table file:///t: <cause>`).
    pub fn describe(mut self, what: impl Into<String>) -> Self {
        self.description = Some(what.into());
        self
    }

    /// What the machine does, as given to [`Machine::describe`]; `None` if never described.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
}

fn hand_out<T>(st: &mut IoState<T>) -> Vec<IoRequest> {
    let round = std::mem::take(&mut st.fresh);
    for r in &round {
        st.outstanding.insert(r.id, r.op.clone());
    }
    round
}

fn op_name(op: &IoOp) -> &'static str {
    match op {
        IoOp::Read { .. } => "read",
        IoOp::Head { .. } => "head",
        IoOp::List { .. } => "list",
        IoOp::Put { .. } => "put",
        IoOp::Delete { .. } => "delete",
        IoOp::PutPart { .. } => "put_part",
        IoOp::PutComplete { .. } => "put_complete",
        IoOp::PutAbort { .. } => "put_abort",
    }
}

/// The error for an answer of the wrong kind (`bytes` asked, `head` answered, ...).
fn unexpected_answer(path: &str, expected: &str, got: &IoAnswer) -> Error {
    let got = match got {
        IoAnswer::Bytes { .. } => "bytes",
        IoAnswer::Head { .. } => "head",
        IoAnswer::List { .. } => "list",
        IoAnswer::Done => "done",
        IoAnswer::Error { .. } => "error",
    };
    Error::Protocol {
        detail: format!("request for {path} expected a {expected} answer, got {got}"),
    }
}
