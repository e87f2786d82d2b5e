//! The IO boundary: every byte the core needs is asked for as data.
//!
//! A [`Machine`] is an operation (resolve a snapshot, plan a scan, read a split, later commit)
//! that the host drives:
//!
//! ```text
//! loop {
//!     match machine.step()? {
//!         Step::NeedIo(round) => for req in round { machine.provide(req.id, host.answer(&req.op))? },
//!         Step::Emit(item)    => out.push(item),
//!         Step::Work(items)   => for w in items { w.run() },   // or on other threads
//!         Step::Wait          => { /* wait until one handed-out Work item finished */ }
//!         Step::Done          => break,
//!     }
//! }
//! ```
//!
//! * A *round* is the `Vec<IoRequest>` of one [`Step::NeedIo`]. The host answers **every**
//!   request of a round (in any order, matched by [`RequestId`]) before calling `step` again; it
//!   may fetch them concurrently, coalesce ranges or retry, but it answers each id with exactly
//!   the bytes asked for.
//! * Request ids are sequential per machine, starting at 0, and requests are produced in a fixed
//!   order: the same inputs give the same rounds on every host. This is what makes transcripts
//!   (record/replay) and fault injection possible.
//! * `NotFound` (and every other [`IoErrorKind`]) is an *answer*: the machine decides whether it
//!   is an error (a missing data file) or expected (probing `snapshot-(n+1)`).
//!
//! * Paths are `/`-separated and relative to the host's root (the table root, or the warehouse
//!   root), never starting with `/`, with one exception: an *absolute path* ([`is_absolute`]),
//!   either a URI that starts with a scheme and `:/` ([`uri_scheme`]):
//!   `file:/tmp/ext/bucket-0/data-1.parquet`, `file:///tmp/...`, `s3://bucket/key`,
//!   `oss://...`, or a local path starting with `/`. The core sends such paths exactly as the
//!   table metadata holds them: Paimon's `_EXTERNAL_PATH` of a data file or index file (tables
//!   written with `data-file.external-paths`) is a full path outside the table directory, a
//!   Java `org.apache.paimon.fs.Path` string (literal, not percent-encoded). The host resolves
//!   an absolute path itself (through the store of the table root when the path is under it,
//!   else a store for its scheme and authority), or answers `Unsupported` with a detail naming
//!   the path when it cannot reach it. Everything else is relative to the host root.
//! * **CPU work** ([`Step::Work`]): a host that can run code on other threads declares it
//!   with [`Machine::with_parallelism`]; the operation then hands out pieces of CPU work
//!   ([`Io::spawn_work`]: decoding a chunk of rows of a column group, ...) as [`Work`] items instead
//!   of running them inline. The host runs every item exactly once, on any thread, and may
//!   step the machine again right away; [`Step::Wait`] means the operation cannot go on
//!   before one of the items handed out finished. Work never does IO. The bytes a read asks
//!   for do not depend on the parallelism, but how they are cut into requests may (a Parquet
//!   file decoded in column groups asks for each group's column chunks), so transcripts are
//!   recorded and replayed at parallelism 1. With the default parallelism of 1, work runs
//!   inline and neither step appears.
//!
//! Internally the operations are written as `async` code over an [`Io`] handle: awaiting an IO
//! call registers a request and suspends; [`Machine::step`] polls the operation with a no-op
//! waker and turns the requests registered since the last step into one round. There is no
//! executor, timer, thread or runtime in the core: the compiler-generated state machine is the
//! machine, and the host is the only thing that makes progress happen.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Id of one request within one machine, sequential from 0 in the order requests are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// How a [`IoOp::Put`] treats an existing object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PutMode {
    /// Fail with [`IoErrorKind::AlreadyExists`] if the path exists (atomic create, used to
    /// publish snapshots).
    CreateNew,
    /// Replace whatever is there (hint files such as `snapshot/LATEST`).
    Overwrite,
}

/// One IO operation, as plain data. Paths are relative to the host's root (usually the table
/// root or the warehouse root), `/`-separated, never starting with `/`; or absolute paths
/// (external data and index files, see the module docs and [`is_absolute`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum IoOp {
    /// Read an object, or the byte range `range` (start inclusive, end exclusive, in bytes)
    /// of it. Answer: [`IoAnswer::Bytes`] with exactly `range.end - range.start` bytes, or the
    /// whole object when `range` is `None`.
    Read {
        /// Object path.
        path: String,
        /// Byte range, `None` for the whole object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        range: Option<Range<u64>>,
    },
    /// Object metadata. Answer: [`IoAnswer::Head`].
    Head {
        /// Object path.
        path: String,
    },
    /// Objects whose path starts with `prefix` (recursively). Answer: [`IoAnswer::List`],
    /// in any order (the core sorts). `Unsupported` is a valid answer (plain HTTP). An
    /// absolute `prefix` (an external data root, `file:/ext/`) is answered with absolute
    /// paths of the same form, or `Unsupported` by a host that cannot list there.
    List {
        /// Path prefix, usually a directory ending in `/`.
        prefix: String,
    },
    /// Write an object. Answer: [`IoAnswer::Done`], or `AlreadyExists` under
    /// [`PutMode::CreateNew`].
    Put {
        /// Object path.
        path: String,
        /// The whole content.
        #[serde(with = "serde_bytes_hex")]
        bytes: Bytes,
        /// Create-new or overwrite.
        mode: PutMode,
    },
    /// Delete an object. Answer: [`IoAnswer::Done`]; `NotFound` is also fine for callers
    /// that clean up.
    Delete {
        /// Object path.
        path: String,
    },
    /// One part of a streamed (multipart) write of a new object: parts are numbered from 0,
    /// sent one at a time in order, each answered ([`IoAnswer::Done`]) before the next is
    /// sent; part 0 starts the upload. Nothing is visible at `path` before
    /// [`IoOp::PutComplete`]. A host may require every part but the last to be at least
    /// 5 MiB (S3): the core sends parts of at least [`MIN_PUT_PART_BYTES`] except the last.
    /// Streamed writes are only used for new files with unique names (data and blob files),
    /// never for snapshots or hints.
    PutPart {
        /// Object path.
        path: String,
        /// Part number, from 0.
        part: u32,
        /// The part's bytes.
        #[serde(with = "serde_bytes_hex")]
        bytes: Bytes,
    },
    /// Finish the streamed write of `path` after its `parts` parts: the object appears whole.
    /// Answer: [`IoAnswer::Done`], or `AlreadyExists` when a host that can tell finds an
    /// object there already (create-new).
    PutComplete {
        /// Object path.
        path: String,
        /// Number of parts sent (at least 1).
        parts: u32,
    },
    /// Give up the streamed write of `path`: the parts sent are discarded and nothing appears.
    /// Answer: [`IoAnswer::Done`] (also when no upload is open for `path`).
    PutAbort {
        /// Object path.
        path: String,
    },
}

/// The smallest part of a streamed write except the last, in bytes (5 MiB, the S3 minimum).
pub const MIN_PUT_PART_BYTES: usize = 5 << 20;

impl IoOp {
    /// The path this operation is about (the prefix for `List`).
    pub fn path(&self) -> &str {
        match self {
            IoOp::Read { path, .. }
            | IoOp::Head { path }
            | IoOp::Put { path, .. }
            | IoOp::Delete { path }
            | IoOp::PutPart { path, .. }
            | IoOp::PutComplete { path, .. }
            | IoOp::PutAbort { path } => path,
            IoOp::List { prefix } => prefix,
        }
    }
}

/// The scheme of `path` if it is an absolute URI, `None` if it is relative to the host root.
///
/// An absolute URI starts with a scheme (an ASCII letter, then letters, digits, `+`, `-` or
/// `.`) followed by `:/`: `file:/tmp/t/x.parquet` and `file:///tmp/t/x.parquet` give `file`,
/// `s3://bucket/k` gives `s3`. Relative paths written by Paimon never match: partition values
/// and names are escaped (`:` becomes `%3A`), and bucket, manifest and index paths have no `:`.
/// Source: Java `org.apache.paimon.fs.Path` (a path string with a scheme is absolute).
pub fn uri_scheme(path: &str) -> Option<&str> {
    let (scheme, rest) = path.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (valid && rest.starts_with('/')).then_some(scheme)
}

/// Whether `path` is absolute rather than relative to the host root: an absolute URI (see
/// [`uri_scheme`]) or a local path starting with `/` (pypaimon writes a local external path
/// whose name holds `%`, `?` or `#` without its `file:` scheme).
pub fn is_absolute(path: &str) -> bool {
    path.starts_with('/') || uri_scheme(path).is_some()
}

/// A request of a round: an id and the operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoRequest {
    /// Id to answer with.
    pub id: RequestId,
    /// What is asked.
    #[serde(flatten)]
    pub op: IoOp,
}

/// Metadata of one object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectMeta {
    /// Path, relative to the host root like the request's.
    pub path: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Last modification time in milliseconds since the epoch, when the host knows it (used
    /// by orphan-file cleaning to spare young files; `None` = unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_millis: Option<i64>,
}

/// Why an IO operation did not succeed. Small and serde-able: it crosses the boundary and is
/// stored in transcripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoErrorKind {
    /// The object does not exist.
    NotFound,
    /// `Put` with [`PutMode::CreateNew`] found an existing object.
    AlreadyExists,
    /// The host cannot do this operation (e.g. `List` over plain HTTP).
    Unsupported,
    /// A passing failure; the host already retried as it saw fit.
    Transient,
    /// Anything else.
    Other,
}

impl fmt::Display for IoErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoErrorKind::NotFound => "not found",
            IoErrorKind::AlreadyExists => "already exists",
            IoErrorKind::Unsupported => "unsupported",
            IoErrorKind::Transient => "transient failure",
            IoErrorKind::Other => "IO error",
        })
    }
}

/// The host's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum IoAnswer {
    /// Bytes of a `Read`.
    Bytes {
        /// The bytes.
        #[serde(with = "serde_bytes_hex")]
        bytes: Bytes,
    },
    /// Answer to `Head`.
    Head {
        /// Size in bytes.
        size_bytes: u64,
    },
    /// Answer to `List`.
    List {
        /// Objects under the prefix.
        objects: Vec<ObjectMeta>,
    },
    /// `Put` or `Delete` succeeded.
    Done,
    /// The operation failed.
    Error {
        /// What kind of failure.
        kind: IoErrorKind,
        /// Human detail from the host (not interpreted).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        detail: String,
    },
}

impl IoAnswer {
    /// An error answer without detail.
    pub fn error(kind: IoErrorKind) -> Self {
        IoAnswer::Error {
            kind,
            detail: String::new(),
        }
    }

    /// A bytes answer.
    pub fn bytes(bytes: impl Into<Bytes>) -> Self {
        IoAnswer::Bytes {
            bytes: bytes.into(),
        }
    }
}

/// What a machine wants next.
#[derive(Debug)]
pub enum Step<T> {
    /// Answer every request of this round, then call `step` again.
    NeedIo(Vec<IoRequest>),
    /// A result (a plan, a record batch...). Call `step` again for more.
    Emit(T),
    /// CPU work to run, each item exactly once, on any thread (see the module docs). The
    /// host may call `step` again before the items finished. Only produced by machines
    /// given a parallelism above 1 ([`Machine::with_parallelism`]).
    Work(Vec<Work>),
    /// The operation waits for [`Work`] handed out earlier: call `step` again once at least
    /// one more item finished running (or right away; it then answers `Wait` again).
    Wait,
    /// Finished; `step` must not be called again.
    Done,
}

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
            other => Err(Error::unexpected_answer(path, "bytes", &other)),
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
            other => Err(Error::unexpected_answer(path, "head", &other)),
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
            other => Err(Error::unexpected_answer(prefix, "list", &other)),
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
            other => Err(Error::unexpected_answer(path, "done", &other)),
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
            other => Err(Error::unexpected_answer(path, "done", &other)),
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
            other => Err(Error::unexpected_answer(path, "done", &other)),
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
            other => Err(Error::unexpected_answer(path, "done", &other)),
        }
    }

    async fn expect_done(&self, path: &str, op: IoOp) -> Result<()> {
        match self.call(op).await {
            IoAnswer::Done => Ok(()),
            IoAnswer::Error { kind, detail } => Err(Error::io(path, kind, detail)),
            other => Err(Error::unexpected_answer(path, "done", &other)),
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

/// Serde helper: bytes as a lowercase hex string (readable in transcripts and debug JSON).
pub mod serde_bytes_hex {
    use bytes::Bytes;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serialize as hex.
    pub fn serialize<S: Serializer>(b: &Bytes, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&crate::util::hex(b))
    }

    /// Deserialize from hex.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Bytes, D::Error> {
        let s = String::deserialize(d)?;
        crate::util::unhex(&s)
            .map(Bytes::from)
            .ok_or_else(|| serde::de::Error::custom("invalid hex string"))
    }
}

/// An in-memory object store answering requests: for tests, docs and the wasm in-memory source.
///
/// Paths are keys; `List` returns every key starting with the prefix.
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    /// Objects by path.
    pub objects: BTreeMap<String, Bytes>,
    /// Streamed writes in progress: path → (parts received, bytes so far).
    pub uploads: BTreeMap<String, (u32, Vec<u8>)>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answer one operation, mutating the store for `Put`/`Delete`.
    pub fn answer(&mut self, op: &IoOp) -> IoAnswer {
        match op {
            IoOp::Read { path, range } => match self.objects.get(path) {
                None => IoAnswer::error(IoErrorKind::NotFound),
                Some(b) => match range {
                    None => IoAnswer::bytes(b.clone()),
                    Some(r) => {
                        let len = b.len() as u64;
                        if r.start > r.end || r.end > len {
                            IoAnswer::Error {
                                kind: IoErrorKind::Other,
                                detail: format!(
                                    "range {}..{} out of bounds of {len} bytes",
                                    r.start, r.end
                                ),
                            }
                        } else {
                            IoAnswer::bytes(b.slice(r.start as usize..r.end as usize))
                        }
                    }
                },
            },
            IoOp::Head { path } => match self.objects.get(path) {
                None => IoAnswer::error(IoErrorKind::NotFound),
                Some(b) => IoAnswer::Head {
                    size_bytes: b.len() as u64,
                },
            },
            IoOp::List { prefix } => IoAnswer::List {
                objects: self
                    .objects
                    .range(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(prefix.as_str()))
                    .map(|(k, v)| ObjectMeta {
                        path: k.clone(),
                        size_bytes: v.len() as u64,
                        modified_millis: None,
                    })
                    .collect(),
            },
            IoOp::Put { path, bytes, mode } => {
                if *mode == PutMode::CreateNew && self.objects.contains_key(path) {
                    IoAnswer::error(IoErrorKind::AlreadyExists)
                } else {
                    self.objects.insert(path.clone(), bytes.clone());
                    IoAnswer::Done
                }
            }
            IoOp::Delete { path } => match self.objects.remove(path) {
                Some(_) => IoAnswer::Done,
                None => IoAnswer::error(IoErrorKind::NotFound),
            },
            IoOp::PutPart { path, part, bytes } => {
                let upload = self.uploads.entry(path.clone()).or_default();
                if *part != upload.0 {
                    return IoAnswer::Error {
                        kind: IoErrorKind::Other,
                        detail: format!(
                            "part {part} of {path} out of order (expected {})",
                            upload.0
                        ),
                    };
                }
                upload.0 += 1;
                upload.1.extend_from_slice(bytes);
                IoAnswer::Done
            }
            IoOp::PutComplete { path, parts } => match self.uploads.remove(path) {
                Some((n, _)) if n != *parts => IoAnswer::Error {
                    kind: IoErrorKind::Other,
                    detail: format!("{path}: completed after {parts} parts, {n} received"),
                },
                Some(_) if self.objects.contains_key(path) => {
                    IoAnswer::error(IoErrorKind::AlreadyExists)
                }
                Some((_, bytes)) => {
                    self.objects.insert(path.clone(), Bytes::from(bytes));
                    IoAnswer::Done
                }
                None => IoAnswer::error(IoErrorKind::NotFound),
            },
            IoOp::PutAbort { path } => {
                self.uploads.remove(path);
                IoAnswer::Done
            }
        }
    }

    /// Drive `machine` to the end over this store, collecting what it emits.
    pub fn run<T: Send + 'static>(&mut self, mut machine: Machine<T>) -> Result<Vec<T>> {
        let mut out = Vec::new();
        loop {
            match machine.step()? {
                Step::NeedIo(round) => {
                    for req in round {
                        let answer = self.answer(&req.op);
                        machine.provide(req.id, answer)?;
                    }
                }
                Step::Emit(item) => out.push(item),
                Step::Work(items) => items.into_iter().for_each(Work::run),
                Step::Wait => {}
                Step::Done => return Ok(out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::future::join_all;

    #[test]
    fn absolute_uris_are_told_from_relative_paths() {
        assert_eq!(
            uri_scheme("file:/tmp/ext/bucket-0/data-1.parquet"),
            Some("file")
        );
        assert_eq!(uri_scheme("file:///tmp/ext/data-1.parquet"), Some("file"));
        assert_eq!(uri_scheme("s3://bucket/wh/t/bucket-0/f"), Some("s3"));
        assert_eq!(uri_scheme("oss+x-1.y://b/k"), Some("oss+x-1.y"));
        for relative in [
            "bucket-0/data-1.parquet",
            "dt=2024-01-01 10%3A00/bucket-0/f",
            "index/index-1",
            "a:b",
            "1s3://b/k",
            ":/x",
            "",
        ] {
            assert_eq!(uri_scheme(relative), None, "{relative}");
            assert!(!is_absolute(relative), "{relative}");
        }
        assert!(is_absolute("/tmp/ext/dt=a%3Ab/bucket-0/f") && is_absolute("s3://b/k"));
        assert_eq!(uri_scheme("/tmp/ext/f"), None);
    }

    #[test]
    fn rounds_are_sequential_and_concurrent_reads_share_a_round() {
        let mut store = MemoryStore::new();
        store
            .objects
            .insert("a".into(), Bytes::from_static(b"hello"));
        store
            .objects
            .insert("b".into(), Bytes::from_static(b"world"));
        let mut m: Machine<String> = Machine::once("test", |io: Io<String>| async move {
            let first = io.read_range("a", 1..3).await?;
            let both = join_all([io.read("a"), io.read("b")]).await;
            let mut s = String::from_utf8_lossy(&first).to_string();
            for b in both {
                s.push_str(&String::from_utf8_lossy(&b?));
            }
            Ok(s)
        });
        let Step::NeedIo(r1) = m.step().unwrap() else {
            panic!("expected io")
        };
        assert_eq!(r1.len(), 1);
        assert_eq!(r1[0].id, RequestId(0));
        m.provide(r1[0].id, store.answer(&r1[0].op)).unwrap();
        let Step::NeedIo(r2) = m.step().unwrap() else {
            panic!("expected io")
        };
        assert_eq!(
            r2.iter().map(|r| r.id.0).collect::<Vec<_>>(),
            vec![1, 2],
            "both reads in one round, in order"
        );
        // Answer out of order.
        m.provide(r2[1].id, store.answer(&r2[1].op)).unwrap();
        m.provide(r2[0].id, store.answer(&r2[0].op)).unwrap();
        let Step::Emit(s) = m.step().unwrap() else {
            panic!("expected emit")
        };
        assert_eq!(s, "elhelloworld");
        assert!(matches!(m.step().unwrap(), Step::Done));
    }

    #[test]
    fn large_joins_complete_in_one_round() {
        for n in [31usize, 40, 100, 1000] {
            let mut store = MemoryStore::new();
            for i in 0..n {
                store
                    .objects
                    .insert(format!("o{i}"), Bytes::from(vec![1u8; i % 7]));
            }
            let m: Machine<usize> = Machine::once("join", move |io: Io<usize>| async move {
                let got = futures_util::future::try_join_all((0..n).map(|i| {
                    let io = io.clone();
                    async move { io.read(&format!("o{i}")).await }
                }))
                .await?;
                Ok(got.iter().map(|b| b.len()).sum())
            });
            let mut rounds = 0;
            let mut m = m;
            let total = loop {
                match m.step().unwrap() {
                    Step::NeedIo(round) => {
                        rounds += 1;
                        assert_eq!(round.len(), n);
                        for r in round {
                            let a = store.answer(&r.op);
                            m.provide(r.id, a).unwrap();
                        }
                    }
                    Step::Emit(t) => break t,
                    Step::Work(_) | Step::Wait => panic!("no work at parallelism 1"),
                    Step::Done => panic!("no result"),
                }
            };
            assert_eq!(rounds, 1);
            assert_eq!(total, (0..n).map(|i| i % 7).sum::<usize>());
        }
    }

    /// An operation mixing IO and work: reads two objects, hashes each in a work item while
    /// the next read is asked for, then reads an object named by the results.
    fn work_machine() -> Machine<String> {
        Machine::once("work", |io: Io<String>| async move {
            let a = io.read("a").await?;
            let ha = io.spawn_work(move || a.iter().map(|&b| u64::from(b)).sum::<u64>());
            let b = io.read("b").await?;
            let hb = io.spawn_work(move || b.len() as u64);
            let (ha, hb) = (ha.await, hb.await);
            let c = io.read(&format!("c{}", (ha + hb) % 2)).await?;
            Ok(format!("{ha} {hb} {}", String::from_utf8_lossy(&c)))
        })
    }

    fn work_store() -> MemoryStore {
        let mut store = MemoryStore::new();
        for (k, v) in [("a", "xyz"), ("b", "hello"), ("c0", "even"), ("c1", "odd")] {
            store.objects.insert(k.into(), Bytes::from(v));
        }
        store
    }

    /// Drive `m`, running work items on other threads and joining them only on `Wait`;
    /// returns the result, the IO log (id, path) and the steps seen.
    fn drive_threaded(mut m: Machine<String>) -> (String, Vec<(u64, String)>, Vec<&'static str>) {
        let store = work_store();
        let (mut log, mut steps, mut threads, mut out) = (vec![], vec![], vec![], None);
        loop {
            match m.step().unwrap() {
                Step::NeedIo(round) => {
                    steps.push("io");
                    for r in round {
                        log.push((r.id.0, r.op.path().to_string()));
                        m.provide(r.id, store.clone().answer(&r.op)).unwrap();
                    }
                }
                Step::Work(items) => {
                    steps.push("work");
                    for w in items {
                        threads.push(std::thread::spawn(move || {
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            w.run()
                        }));
                    }
                }
                Step::Wait => {
                    steps.push("wait");
                    threads.pop().expect("a running item").join().unwrap();
                }
                Step::Emit(s) => out = Some(s),
                Step::Done => break,
            }
        }
        (out.unwrap(), log, steps)
    }

    #[test]
    fn work_runs_inline_at_parallelism_one() {
        let mut store = work_store();
        // MemoryStore::run would run Work items too; check that none are made.
        let mut m = work_machine();
        let mut seen = vec![];
        let out = loop {
            match m.step().unwrap() {
                Step::NeedIo(round) => {
                    for r in round {
                        m.provide(r.id, store.answer(&r.op)).unwrap();
                    }
                }
                Step::Emit(s) => break s,
                Step::Work(_) => seen.push("work"),
                Step::Wait => seen.push("wait"),
                Step::Done => panic!("no result"),
            }
        };
        assert!(seen.is_empty(), "{seen:?}");
        // x+y+z = 120+121+122 = 363, "hello" = 5: 368 is even.
        assert_eq!(out, "363 5 even");
    }

    #[test]
    fn work_is_handed_out_and_waited_for_without_changing_the_requests() {
        let (inline, inline_log, _) = drive_threaded(work_machine());
        let (parallel, parallel_log, steps) = drive_threaded(work_machine().with_parallelism(4));
        assert_eq!(parallel, "363 5 even");
        assert_eq!(inline, parallel);
        assert_eq!(inline_log, parallel_log, "same requests, same ids");
        assert_eq!(
            parallel_log
                .iter()
                .map(|(_, p)| p.as_str())
                .collect::<Vec<_>>(),
            ["a", "b", "c0"]
        );
        // The first item is handed out before the read of b, and the machine waits for the
        // items (they sleep; one or two waits, as the threads finish) before reading c.
        assert_eq!(steps[..4], ["io", "work", "io", "work"]);
        assert_eq!(steps.last(), Some(&"io"));
        let waits = steps[4..steps.len() - 1].iter();
        assert!(
            waits.len() >= 1 && waits.into_iter().all(|s| *s == "wait"),
            "{steps:?}"
        );
        // MemoryStore::run runs work inline when handed out.
        let out = work_store()
            .run(work_machine().with_parallelism(2))
            .unwrap();
        assert_eq!(out, vec!["363 5 even".to_string()]);
    }

    #[test]
    fn waiting_with_no_work_running_is_a_protocol_error() {
        // A handle awaited twice is a caller bug: reported, never a hang or a panic.
        let mut m: Machine<()> = Machine::new("t", |io: Io<()>| async move {
            let mut h = io.spawn_work(|| 1u8);
            (&mut h).await;
            (&mut h).await;
            Ok(())
        })
        .with_parallelism(2);
        let Step::Work(items) = m.step().unwrap() else {
            panic!("expected work")
        };
        items.into_iter().for_each(Work::run);
        assert!(matches!(m.step(), Err(Error::Protocol { .. })));
    }

    #[test]
    fn protocol_errors_are_reported() {
        let mut m: Machine<()> = Machine::once("test", |io: Io<()>| async move {
            io.read("x").await?;
            Ok(())
        });
        let Step::NeedIo(r) = m.step().unwrap() else {
            panic!()
        };
        assert!(matches!(m.step(), Err(Error::Protocol { .. })));
        assert!(m.provide(RequestId(7), IoAnswer::Done).is_err());
        m.provide(r[0].id, IoAnswer::error(IoErrorKind::NotFound))
            .unwrap();
        let m2: Machine<()> = Machine::once("t", |io: Io<()>| async move {
            io.read("x").await?;
            Ok(())
        });
        let mut store = MemoryStore::new();
        let err = store.run(m2).unwrap_err();
        assert!(err.to_string().contains("x"), "{err}");
    }

    #[test]
    fn short_range_answer_is_an_error() {
        let mut m: Machine<()> = Machine::once("t", |io: Io<()>| async move {
            io.read_range("x", 0..4).await?;
            Ok(())
        });
        let Step::NeedIo(r) = m.step().unwrap() else {
            panic!()
        };
        m.provide(r[0].id, IoAnswer::bytes(vec![1u8, 2])).unwrap();
        assert!(matches!(m.step(), Err(Error::Protocol { .. })));
    }

    #[test]
    fn put_create_new_reports_existing() {
        let mut store = MemoryStore::new();
        let m: Machine<(bool, bool)> = Machine::once("t", |io: Io<(bool, bool)>| async move {
            let a = io
                .put("s", Bytes::from_static(b"1"), PutMode::CreateNew)
                .await?;
            let b = io
                .put("s", Bytes::from_static(b"2"), PutMode::CreateNew)
                .await?;
            Ok((a, b))
        });
        assert_eq!(store.run(m).unwrap(), vec![(true, false)]);
        assert_eq!(store.objects["s"], Bytes::from_static(b"1"));
    }
}
