//! [`ObjectStoreHost`]: answers the core's rounds of IO with object_store calls.
//!
//! # How a round is answered
//!
//! 1. Ranged `Read`s of the same object are sorted and *coalesced*: ranges closer than
//!    [`HostOptions::coalesce_gap_bytes`] become one `get_range` of at most
//!    [`HostOptions::max_coalesced_bytes`] (a single range longer than that is fetched alone).
//!    Every request id is answered with exactly the bytes it asked for, sliced out of the
//!    fetched buffer. If a coalesced fetch fails (other than `NotFound`), its members are
//!    fetched one by one so that one bad range cannot fail its neighbours.
//! 2. All resulting store calls run concurrently, at most [`HostOptions::max_in_flight`] at a
//!    time; answers are handed to the machine in completion order (the machine matches them by
//!    [`RequestId`]).
//! 3. Failures the store classifies as passing (timeouts, connection resets, HTTP 5xx and 429)
//!    are retried up to [`HostOptions::max_attempts`] times with exponential backoff, except
//!    `Put` in create-new mode (not idempotent: a retry could see its own first write).
//!    object_store's cloud clients also retry internally; this loop is a second line.
//!
//! # Error mapping (object_store → [`IoErrorKind`])
//!
//! | object_store | answer |
//! |---|---|
//! | `NotFound`, a `Read` range starting at or past the end of the object | `NotFound` / `Other` |
//! | `AlreadyExists`, `Precondition` on a create-new `Put` | `AlreadyExists` |
//! | `NotSupported`, `NotImplemented`, any non-passing `List` failure on an HTTP store | `Unsupported` |
//! | timeouts, connection errors, HTTP 5xx / 429 (after retries) | `Transient` |
//! | anything else (permissions, bad paths, short reads...) | `Other` |
//!
//! The object_store message is passed along as the answer's `detail`.
//!
//! # Absolute paths
//!
//! Request paths are relative to the table root, except absolute paths (external data and index
//! files, `paimon_kernel::io::is_absolute`): `Read`, `Head`, `Put` and `Delete` of one go to
//! the store [`TableLocation::resolve`] picks (the table's own when the path is under the table
//! root, else a store kept per scheme and authority); a scheme without a store is answered
//! `Unsupported`, and so is a `List` of an absolute prefix (the core never lists one).
//!
//! # CPU work and threads
//!
//! [`Machine::step`] is where the core decodes and merges; it is synchronous CPU work. The
//! host runs it under [`tokio::task::block_in_place`] when driven on a multi-thread runtime:
//! the worker thread becomes a blocking thread for the duration of the step while the runtime
//! keeps polling other tasks (other machines' IO) on its remaining workers. To use several
//! cores, drive independent machines (one per split) on their own tasks:
//! [`ObjectStoreHost::spawn`] / [`ObjectStoreHost::run_all`]. On a current-thread runtime the
//! step runs inline (`block_in_place` is not available there). There is no `spawn_blocking`:
//! a machine is driven start to finish by one task. Machines driven here keep the default
//! parallelism of 1 (their CPU work runs inline in the step); the row reads of
//! [`crate::TableScan::to_stream`] are driven by `scan.rs`, which raises it and runs the
//! machines' [`paimon_kernel::io::Step::Work`] items on the rayon pool.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutOptions, PutPayload};
use paimon_kernel::io::{
    IoAnswer, IoErrorKind, IoOp, IoRequest, Machine, ObjectMeta, PutMode, RequestId, Step,
    is_absolute,
};

use crate::error::{Error, Result};
use crate::location::{Resolved, StoreKind, TableLocation};

/// The cores this process may use (at least 1): the parallelism of the CPU work hosts run
/// (reads' work items, compaction tasks).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Tuning of an [`ObjectStoreHost`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostOptions {
    /// Store calls in flight at once within a round (default 32).
    pub max_in_flight: usize,
    /// Ranged reads of one object whose gap is at most this many bytes are fetched together
    /// (default 1 MiB, 64 KiB for local files).
    pub coalesce_gap_bytes: u64,
    /// Upper bound of one coalesced fetch in bytes (default 16 MiB).
    pub max_coalesced_bytes: u64,
    /// Attempts for a call failing with a passing error, first included (default 3).
    pub max_attempts: u32,
    /// Backoff before the first retry; doubles on each further retry (default 100 ms).
    pub retry_backoff: Duration,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            max_in_flight: 32,
            coalesce_gap_bytes: 1 << 20,
            max_coalesced_bytes: 16 << 20,
            max_attempts: 3,
            retry_backoff: Duration::from_millis(100),
        }
    }
}

impl HostOptions {
    /// Whether a call that failed with `kind` on attempt `attempt` (1 for the first) is tried
    /// again: only `Transient` failures of retryable calls (see [`is_retryable`]), while
    /// `attempt < max_attempts`. This is the policy of every store call of
    /// [`ObjectStoreHost`]; other hosts (the conformance fault host) apply it as is.
    pub fn retries(&self, kind: IoErrorKind, retryable: bool, attempt: u32) -> bool {
        kind == IoErrorKind::Transient && retryable && attempt < self.max_attempts
    }

    /// Defaults suited to a store kind (smaller coalescing gap for local files).
    pub fn for_kind(kind: StoreKind) -> Self {
        let mut o = HostOptions::default();
        if matches!(kind, StoreKind::Local | StoreKind::Memory) {
            o.coalesce_gap_bytes = 64 << 10;
        }
        o
    }
}

/// Counters of what a host did, for tests and measurements. All counts since creation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostStats {
    /// Rounds answered.
    pub rounds: u64,
    /// Requests answered.
    pub requests: u64,
    /// Calls made to the object store (retries and coalesced fetches count once each).
    pub store_calls: u64,
    /// Bytes received from the object store by reads.
    pub bytes_fetched: u64,
    /// Retries after passing failures.
    pub retries: u64,
    /// Parts of streamed writes sent ([`IoOp::PutPart`]).
    pub parts_put: u64,
}

#[derive(Debug, Default)]
struct Counters {
    rounds: AtomicU64,
    requests: AtomicU64,
    store_calls: AtomicU64,
    bytes_fetched: AtomicU64,
    retries: AtomicU64,
    parts_put: AtomicU64,
}

#[derive(Debug)]
struct Inner {
    location: TableLocation,
    options: HostOptions,
    counters: Counters,
    /// Streamed writes in progress ([`IoOp::PutPart`]), by request path.
    uploads: std::sync::Mutex<std::collections::HashMap<String, Upload>>,
}

/// One streamed write in progress: the store's multipart upload, where the object goes, and
/// the next part number expected.
struct Upload {
    upload: UploadSink,
    store: Arc<dyn ObjectStore>,
    location: Path,
    next_part: u32,
}

/// Where the parts of a streamed write go: the store's multipart upload, or, for a store
/// without one (HTTP/WebDAV), a buffer written with one create-new `put` at the end (the
/// file is then held whole until it completes).
enum UploadSink {
    Multipart(Box<dyn object_store::MultipartUpload>),
    Buffered(Vec<Bytes>),
}

impl UploadSink {
    fn put_part(&mut self, bytes: Bytes) -> object_store::UploadPart {
        match self {
            UploadSink::Multipart(u) => u.put_part(PutPayload::from(bytes)),
            UploadSink::Buffered(parts) => {
                parts.push(bytes);
                Box::pin(std::future::ready(Ok(())))
            }
        }
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        match self {
            UploadSink::Multipart(u) => u.abort().await,
            UploadSink::Buffered(parts) => {
                parts.clear();
                Ok(())
            }
        }
    }

    async fn complete(
        &mut self,
        store: &dyn ObjectStore,
        location: &Path,
    ) -> object_store::Result<()> {
        match self {
            UploadSink::Multipart(u) => u.complete().await.map(|_| ()),
            UploadSink::Buffered(parts) => {
                let payload: PutPayload = std::mem::take(parts).into_iter().collect();
                let opts = PutOptions {
                    mode: object_store::PutMode::Create,
                    ..Default::default()
                };
                store.put_opts(location, payload, opts).await.map(|_| ())
            }
        }
    }
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload")
            .field("location", &self.location)
            .field("next_part", &self.next_part)
            .finish()
    }
}

/// Answers rounds of [`IoRequest`]s against an object store rooted at a table directory, and
/// drives [`Machine`]s to completion. Cheap to clone (shared state behind an `Arc`).
#[derive(Debug, Clone)]
pub struct ObjectStoreHost {
    inner: Arc<Inner>,
}

/// A failure of one store call: kind and the object_store message.
type Failure = (IoErrorKind, String);

impl ObjectStoreHost {
    /// A host over `location` with [`HostOptions::for_kind`] defaults.
    pub fn new(location: TableLocation) -> Self {
        let options = HostOptions::for_kind(location.kind);
        Self::with_options(location, options)
    }

    /// A host over `location` with explicit options.
    pub fn with_options(location: TableLocation, options: HostOptions) -> Self {
        ObjectStoreHost {
            inner: Arc::new(Inner {
                location,
                options,
                counters: Counters::default(),
                uploads: Default::default(),
            }),
        }
    }

    /// Parse a table location (see [`TableLocation::parse`]) and build a host for it.
    pub fn open(location: &str) -> Result<Self> {
        Ok(Self::new(TableLocation::parse(location)?))
    }

    /// As [`ObjectStoreHost::open`] with object-store options (see
    /// [`TableLocation::parse_with_options`]).
    ///
    /// # Errors
    /// As [`TableLocation::parse_with_options`].
    pub fn open_with_options(location: &str, options: &[(String, String)]) -> Result<Self> {
        Ok(Self::new(TableLocation::parse_with_options(
            location, options,
        )?))
    }

    /// The location this host is rooted at.
    pub fn location(&self) -> &TableLocation {
        &self.inner.location
    }

    /// The location's URL, for messages.
    pub fn url(&self) -> &str {
        &self.inner.location.url
    }

    /// The object store (paths relative to the table root).
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.inner.location.store
    }

    /// The store and path a request path goes to: relative paths to [`Self::store`], absolute
    /// paths (external files) as [`TableLocation::resolve`] says.
    fn resolve(&self, path: &str) -> Result<Resolved, Failure> {
        self.inner.location.resolve(path)
    }

    /// Options in force.
    pub fn options(&self) -> &HostOptions {
        &self.inner.options
    }

    /// Counters since creation.
    pub fn stats(&self) -> HostStats {
        let c = &self.inner.counters;
        HostStats {
            rounds: c.rounds.load(Ordering::Relaxed),
            requests: c.requests.load(Ordering::Relaxed),
            store_calls: c.store_calls.load(Ordering::Relaxed),
            bytes_fetched: c.bytes_fetched.load(Ordering::Relaxed),
            retries: c.retries.load(Ordering::Relaxed),
            parts_put: c.parts_put.load(Ordering::Relaxed),
        }
    }

    /// Drive `machine` to the end, calling `on_emit` for each item it emits, in order.
    ///
    /// Each step runs under `block_in_place` on a multi-thread runtime (see the module docs).
    ///
    /// Errors: [`Error::Kernel`] when the machine fails (including IO failures it could not
    /// work around), with the machine's [`Machine::description`] as context (`table <url>`
    /// for an undescribed machine).
    pub async fn drive<T: Send + 'static>(
        &self,
        machine: Machine<T>,
        mut on_emit: impl FnMut(T),
    ) -> Result<()> {
        self.drive_async(machine, |item| {
            on_emit(item);
            std::future::ready(true)
        })
        .await
    }

    /// Drive `machine`, awaiting `on_emit` for each emitted item; `on_emit` returns `false` to
    /// stop early (the machine is dropped, `Ok(())` is returned).
    ///
    /// Errors: as [`ObjectStoreHost::drive`].
    pub async fn drive_async<T, F, Fut>(
        &self,
        mut machine: Machine<T>,
        mut on_emit: F,
    ) -> Result<()>
    where
        T: Send + 'static,
        F: FnMut(T) -> Fut,
        Fut: Future<Output = bool>,
    {
        let context = |m: &Machine<T>| self.context_of(m);
        loop {
            let step =
                step_machine(&mut machine).map_err(|e| Error::kernel(context(&machine), e))?;
            match step {
                Step::NeedIo(round) => {
                    for (id, answer) in self.answer_round(round).await {
                        machine
                            .provide(id, answer)
                            .map_err(|e| Error::kernel(context(&machine), e))?;
                    }
                }
                Step::Emit(item) => {
                    if !on_emit(item).await {
                        return Ok(());
                    }
                }
                Step::Work(items) => items.into_iter().for_each(|w| w.run()),
                Step::Wait => {}
                Step::Done => return Ok(()),
            }
        }
    }

    /// Drive `machine` on its own task and stream what it emits, with backpressure: at most
    /// `buffer` items wait in the channel, and the machine is not stepped while it is full
    /// (a streaming reader holds about `buffer` batches). A failure arrives as the last item.
    /// Dropping the stream stops the machine at its next emit. Must be called within a tokio
    /// runtime.
    pub fn stream<T: Send + 'static>(
        &self,
        machine: Machine<T>,
        buffer: usize,
    ) -> impl futures::Stream<Item = Result<T>> + Send + 'static {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<T>>(buffer.max(1));
        let host = self.clone();
        tokio::spawn(async move {
            let items = tx.clone();
            let result = host
                .drive_async(machine, move |item| {
                    let items = items.clone();
                    async move { items.send(Ok(item)).await.is_ok() }
                })
                .await;
            if let Err(e) = result {
                let _ = tx.send(Err(e)).await;
            }
        });
        futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        })
    }

    /// Drive `machine` to the end and collect what it emits.
    pub async fn run_to_vec<T: Send + 'static>(&self, machine: Machine<T>) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.drive(machine, |item| out.push(item)).await?;
        Ok(out)
    }

    /// What `machine` does, for messages: its [`Machine::description`], or `table <url>`.
    fn context_of<T: Send + 'static>(&self, machine: &Machine<T>) -> String {
        match machine.description() {
            Some(d) => d.to_string(),
            None => format!("table {}", self.url()),
        }
    }

    /// Drive `machine` to the end and return its single emitted value.
    ///
    /// Errors: [`Error::Kernel`] with a protocol error when it emitted nothing or more than
    /// one value.
    pub async fn run_once<T: Send + 'static>(&self, machine: Machine<T>) -> Result<T> {
        let name = machine.name();
        let context = self.context_of(&machine);
        let mut items = self.run_to_vec(machine).await?;
        if items.len() != 1 {
            return Err(Error::kernel(
                context,
                paimon_kernel::Error::Protocol {
                    detail: format!("expected one result, got {}", items.len()),
                },
            ));
        }
        items.pop().ok_or_else(|| unreachable_empty(name))
    }

    /// Drive `machine` on its own tokio task (so that independent machines use several
    /// cores), collecting what it emits. Must be called within a tokio runtime.
    pub fn spawn<T: Send + 'static>(
        &self,
        machine: Machine<T>,
    ) -> tokio::task::JoinHandle<Result<Vec<T>>> {
        let host = self.clone();
        tokio::spawn(async move { host.run_to_vec(machine).await })
    }

    /// Drive every machine on its own task, concurrently, and return their outputs in the
    /// order of `machines`. The first error (in that order) is returned.
    pub async fn run_all<T: Send + 'static>(
        &self,
        machines: Vec<Machine<T>>,
    ) -> Result<Vec<Vec<T>>> {
        let handles: Vec<_> = machines
            .into_iter()
            .map(|m| (self.context_of(&m), self.spawn(m)))
            .collect();
        let mut out = Vec::with_capacity(handles.len());
        for (context, handle) in handles {
            let items = handle.await.map_err(|e| Error::Task {
                machine: context,
                detail: e.to_string(),
            })??;
            out.push(items);
        }
        Ok(out)
    }

    /// Answer one round: every request gets exactly one answer, in completion order.
    pub async fn answer_round(&self, round: Vec<IoRequest>) -> Vec<(RequestId, IoAnswer)> {
        let c = &self.inner.counters;
        c.rounds.fetch_add(1, Ordering::Relaxed);
        c.requests.fetch_add(round.len() as u64, Ordering::Relaxed);
        let jobs = plan_jobs(round, &self.inner.options);
        futures::stream::iter(jobs)
            .map(|job| self.run_job(job))
            .buffer_unordered(self.inner.options.max_in_flight.max(1))
            .flat_map(futures::stream::iter)
            .collect()
            .await
    }

    /// Answer one operation on its own (no coalescing).
    pub async fn answer(&self, op: &IoOp) -> IoAnswer {
        let round = vec![IoRequest {
            id: RequestId(0),
            op: op.clone(),
        }];
        match self.answer_round(round).await.pop() {
            Some((_, answer)) => answer,
            None => IoAnswer::Error {
                kind: IoErrorKind::Other,
                detail: "no answer".to_string(),
            },
        }
    }

    async fn run_job(&self, job: Job) -> Vec<(RequestId, IoAnswer)> {
        match job {
            Job::Single(req) => {
                let answer = self.answer_single(&req.op).await;
                vec![(req.id, answer)]
            }
            Job::Ranges {
                path,
                fetch,
                members,
            } => self.answer_ranges(&path, fetch, members).await,
        }
    }

    async fn answer_ranges(
        &self,
        path: &str,
        fetch: Range<u64>,
        members: Vec<(RequestId, Range<u64>)>,
    ) -> Vec<(RequestId, IoAnswer)> {
        let fetched = self.get_range(path, fetch.clone()).await;
        match fetched {
            Ok(bytes) => members
                .into_iter()
                .map(|(id, r)| (id, slice_answer(path, &bytes, &fetch, &r)))
                .collect(),
            Err((kind, _)) if members.len() > 1 && kind != IoErrorKind::NotFound => {
                // One member may reach past the end of the object; fetch each on its own.
                let singles = members.into_iter().map(|(id, r)| async move {
                    let answer = match self.get_range(path, r.clone()).await {
                        Ok(bytes) => slice_answer(path, &bytes, &r, &r),
                        Err((kind, detail)) => IoAnswer::Error { kind, detail },
                    };
                    (id, answer)
                });
                futures::future::join_all(singles).await
            }
            Err((kind, detail)) => members
                .into_iter()
                .map(|(id, _)| {
                    (
                        id,
                        IoAnswer::Error {
                            kind,
                            detail: detail.clone(),
                        },
                    )
                })
                .collect(),
        }
    }

    async fn get_range(&self, path: &str, range: Range<u64>) -> Result<Bytes, Failure> {
        let Resolved {
            store,
            path: location,
        } = self.resolve(path)?;
        if range.start == range.end {
            // object_store rejects empty ranges; still answer NotFound for a missing object.
            self.retrying(true, false, || store.head(&location)).await?;
            return Ok(Bytes::new());
        }
        let bytes = self
            .retrying(true, false, || store.get_range(&location, range.clone()))
            .await?;
        self.count_bytes(bytes.len());
        Ok(bytes)
    }

    async fn answer_single(&self, op: &IoOp) -> IoAnswer {
        let result = match op {
            IoOp::Read { path, range: None } => self.read_whole(path).await,
            IoOp::Read {
                path,
                range: Some(r),
            } => {
                if r.start > r.end {
                    Err((
                        IoErrorKind::Other,
                        format!("invalid range {}..{}", r.start, r.end),
                    ))
                } else {
                    self.get_range(path, r.clone()).await.map(IoAnswer::bytes)
                }
            }
            IoOp::Head { path } => self.head(path).await,
            IoOp::List { prefix } => self.list(prefix).await,
            IoOp::Put { path, bytes, mode } => self.put(path, bytes.clone(), *mode).await,
            IoOp::Delete { path } => self.delete(path).await,
            IoOp::PutPart { path, part, bytes } => self.put_part(path, *part, bytes.clone()).await,
            IoOp::PutComplete { path, parts } => self.put_complete(path, *parts).await,
            IoOp::PutAbort { path } => self.put_abort(path).await,
        };
        result.unwrap_or_else(|(kind, detail)| IoAnswer::Error { kind, detail })
    }

    async fn read_whole(&self, path: &str) -> Result<IoAnswer, Failure> {
        let Resolved {
            store,
            path: location,
        } = self.resolve(path)?;
        let bytes = self
            .retrying(true, false, || async {
                store.get(&location).await?.bytes().await
            })
            .await?;
        self.count_bytes(bytes.len());
        Ok(IoAnswer::bytes(bytes))
    }

    async fn head(&self, path: &str) -> Result<IoAnswer, Failure> {
        let Resolved {
            store,
            path: location,
        } = self.resolve(path)?;
        let meta = self.retrying(true, false, || store.head(&location)).await?;
        Ok(IoAnswer::Head {
            size_bytes: meta.size,
        })
    }

    async fn list(&self, prefix: &str) -> Result<IoAnswer, Failure> {
        if is_absolute(prefix) {
            return self.list_absolute(prefix).await;
        }
        // object_store lists by directory; list the prefix's directory and filter by string.
        let dir = prefix.rsplit_once('/').map_or("", |(d, _)| d);
        let dir = if dir.is_empty() {
            None
        } else {
            Some(parse_path(dir)?)
        };
        let listed = self
            .retrying(true, false, || {
                self.inner
                    .location
                    .list_store
                    .list(dir.as_ref())
                    .try_collect::<Vec<_>>()
            })
            .await;
        let metas = match listed {
            Ok(m) => m,
            Err((kind, detail))
                if self.location().kind == StoreKind::Http
                    && !matches!(kind, IoErrorKind::Transient | IoErrorKind::NotFound) =>
            {
                return Err((
                    IoErrorKind::Unsupported,
                    format!("this HTTP server cannot list: {detail}"),
                ));
            }
            Err(e) => return Err(e),
        };
        let mut objects: Vec<ObjectMeta> = metas
            .into_iter()
            .filter(|m| m.location.as_ref().starts_with(prefix))
            .map(|m| ObjectMeta {
                path: m.location.to_string(),
                size_bytes: m.size,
                modified_millis: Some(m.last_modified.timestamp_millis()),
            })
            .collect();
        objects.sort();
        Ok(IoAnswer::List { objects })
    }

    /// `List` of an absolute prefix (an external data root, see [`TableLocation::resolve`]):
    /// the prefix's directory in the store it resolves to, the objects named back by absolute
    /// paths of the prefix's form (`file:/ext/p=1/bucket-0/data-0.parquet`).
    async fn list_absolute(&self, prefix: &str) -> Result<IoAnswer, Failure> {
        let dir = prefix.rsplit_once('/').map_or(prefix, |(d, _)| d);
        let Resolved { store, path } = self.resolve(dir)?;
        let listed = self
            .retrying(true, false, || {
                store.list(Some(&path)).try_collect::<Vec<_>>()
            })
            .await?;
        let base = path.as_ref();
        let mut objects: Vec<ObjectMeta> = listed
            .into_iter()
            .filter_map(|m| {
                let loc = m.location.as_ref();
                let rel = if base.is_empty() {
                    loc
                } else {
                    loc.strip_prefix(base)?.strip_prefix('/')?
                };
                let abs = format!("{dir}/{rel}");
                abs.starts_with(prefix).then(|| ObjectMeta {
                    path: abs,
                    size_bytes: m.size,
                    modified_millis: Some(m.last_modified.timestamp_millis()),
                })
            })
            .collect();
        objects.sort();
        Ok(IoAnswer::List { objects })
    }

    async fn put(&self, path: &str, bytes: Bytes, mode: PutMode) -> Result<IoAnswer, Failure> {
        let Resolved {
            store,
            path: location,
        } = self.resolve(path)?;
        let create = mode == PutMode::CreateNew;
        let store_mode = if create {
            object_store::PutMode::Create
        } else {
            object_store::PutMode::Overwrite
        };
        self.retrying(!create, create, || {
            let opts = PutOptions {
                mode: store_mode.clone(),
                ..PutOptions::default()
            };
            store.put_opts(&location, PutPayload::from(bytes.clone()), opts)
        })
        .await?;
        Ok(IoAnswer::Done)
    }

    fn uploads(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Upload>> {
        self.inner.uploads.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A part of a streamed write: part 0 starts the store's multipart upload. Parts are not
    /// retried (a part's payload is consumed by the attempt); the core aborts on a failure.
    async fn put_part(&self, path: &str, part: u32, bytes: Bytes) -> Result<IoAnswer, Failure> {
        if part == 0 {
            let Resolved {
                store,
                path: location,
            } = self.resolve(path)?;
            self.inner
                .counters
                .store_calls
                .fetch_add(1, Ordering::Relaxed);
            let upload = match store.put_multipart(&location).await {
                Ok(u) => UploadSink::Multipart(u),
                Err(object_store::Error::NotImplemented { .. }) => UploadSink::Buffered(Vec::new()),
                Err(e) => return Err((map_error(&e, false), e.to_string())),
            };
            let previous = self.uploads().insert(
                path.to_string(),
                Upload {
                    upload,
                    store,
                    location,
                    next_part: 0,
                },
            );
            if let Some(mut p) = previous {
                // A new upload of the same path replaces an abandoned one.
                let _ = p.upload.abort().await;
            }
        }
        let sending = {
            let mut uploads = self.uploads();
            let Some(up) = uploads.get_mut(path) else {
                return Err((
                    IoErrorKind::Other,
                    format!("part {part} of {path}: no streamed write is open there"),
                ));
            };
            if up.next_part != part {
                return Err((
                    IoErrorKind::Other,
                    format!(
                        "part {part} of {path} out of order (expected part {})",
                        up.next_part
                    ),
                ));
            }
            up.next_part += 1;
            up.upload.put_part(bytes)
        };
        self.inner
            .counters
            .store_calls
            .fetch_add(1, Ordering::Relaxed);
        sending
            .await
            .map_err(|e| (map_error(&e, false), e.to_string()))?;
        self.inner
            .counters
            .parts_put
            .fetch_add(1, Ordering::Relaxed);
        Ok(IoAnswer::Done)
    }

    /// Complete a streamed write: the object appears. Create-new is checked with a `Head`
    /// first (not atomic: streamed writes are only used for new files with unique names).
    async fn put_complete(&self, path: &str, parts: u32) -> Result<IoAnswer, Failure> {
        let Some(mut up) = self.uploads().remove(path) else {
            return Err((
                IoErrorKind::NotFound,
                format!("{path}: no streamed write is open there"),
            ));
        };
        if up.next_part != parts {
            let _ = up.upload.abort().await;
            return Err((
                IoErrorKind::Other,
                format!(
                    "{path}: completed after {parts} parts, {} sent",
                    up.next_part
                ),
            ));
        }
        let exists = self
            .retrying(true, false, || up.store.head(&up.location))
            .await;
        match exists {
            Ok(_) => {
                let _ = up.upload.abort().await;
                return Err((IoErrorKind::AlreadyExists, format!("{path} exists")));
            }
            Err((IoErrorKind::NotFound, _)) => {}
            Err(e) => {
                let _ = up.upload.abort().await;
                return Err(e);
            }
        }
        self.inner
            .counters
            .store_calls
            .fetch_add(1, Ordering::Relaxed);
        up.upload
            .complete(up.store.as_ref(), &up.location)
            .await
            .map_err(|e| (map_error(&e, false), e.to_string()))?;
        Ok(IoAnswer::Done)
    }

    /// Abort a streamed write (nothing open is fine).
    async fn put_abort(&self, path: &str) -> Result<IoAnswer, Failure> {
        let Some(mut up) = self.uploads().remove(path) else {
            return Ok(IoAnswer::Done);
        };
        self.inner
            .counters
            .store_calls
            .fetch_add(1, Ordering::Relaxed);
        up.upload
            .abort()
            .await
            .map_err(|e| (map_error(&e, false), e.to_string()))?;
        Ok(IoAnswer::Done)
    }

    async fn delete(&self, path: &str) -> Result<IoAnswer, Failure> {
        let Resolved {
            store,
            path: location,
        } = self.resolve(path)?;
        self.retrying(true, false, || store.delete(&location))
            .await?;
        Ok(IoAnswer::Done)
    }

    fn count_bytes(&self, n: usize) {
        self.inner
            .counters
            .bytes_fetched
            .fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Run a store call, retrying passing failures when `idempotent`.
    async fn retrying<R, F, Fut>(
        &self,
        idempotent: bool,
        create_new: bool,
        mut call: F,
    ) -> Result<R, Failure>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = object_store::Result<R>>,
    {
        let options = &self.inner.options;
        let counters = &self.inner.counters;
        let mut attempt = 1u32;
        let mut backoff = options.retry_backoff;
        loop {
            counters.store_calls.fetch_add(1, Ordering::Relaxed);
            match call().await {
                Ok(r) => return Ok(r),
                Err(e) => {
                    let kind = map_error(&e, create_new);
                    if options.retries(kind, idempotent, attempt) {
                        counters.retries.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(backoff).await;
                        backoff = backoff.saturating_mul(2);
                        attempt += 1;
                        continue;
                    }
                    return Err((kind, e.to_string()));
                }
            }
        }
    }
}

/// Whether the host may retry `op` after a passing failure: every operation is idempotent
/// except a `Put` in create-new mode (a retry could see its own first write as
/// `AlreadyExists`).
pub fn is_retryable(op: &IoOp) -> bool {
    !matches!(
        op,
        IoOp::Put {
            mode: PutMode::CreateNew,
            ..
        } | IoOp::PutPart { .. }
            | IoOp::PutComplete { .. }
    )
}

fn unreachable_empty(name: &str) -> Error {
    Error::Task {
        machine: name.to_string(),
        detail: "no result".to_string(),
    }
}

fn step_machine<T: Send + 'static>(machine: &mut Machine<T>) -> paimon_kernel::Result<Step<T>> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| machine.step())
        }
        _ => machine.step(),
    }
}

fn parse_path(path: &str) -> Result<Path, Failure> {
    Path::parse(path).map_err(|e| (IoErrorKind::Other, format!("invalid path {path:?}: {e}")))
}

/// Answer `want` out of `bytes`, which hold `fetched` of the object.
fn slice_answer(path: &str, bytes: &Bytes, fetched: &Range<u64>, want: &Range<u64>) -> IoAnswer {
    let start = want.start - fetched.start;
    let end = want.end - fetched.start;
    if end > bytes.len() as u64 {
        return IoAnswer::Error {
            kind: IoErrorKind::Other,
            detail: format!(
                "range {}..{} of {path} reaches past the end of the object ({} bytes from offset {})",
                want.start,
                want.end,
                bytes.len(),
                fetched.start
            ),
        };
    }
    // Both fit in usize: end <= bytes.len().
    IoAnswer::bytes(bytes.slice(start as usize..end as usize))
}

/// Map an object_store error to the kind answered to the core.
pub(crate) fn map_error(e: &object_store::Error, create_new: bool) -> IoErrorKind {
    use object_store::Error as E;
    match e {
        E::NotFound { .. } => IoErrorKind::NotFound,
        E::AlreadyExists { .. } => IoErrorKind::AlreadyExists,
        E::Precondition { .. } if create_new => IoErrorKind::AlreadyExists,
        E::NotSupported { .. } | E::NotImplemented { .. } => IoErrorKind::Unsupported,
        _ if is_transient(e) => IoErrorKind::Transient,
        _ => IoErrorKind::Other,
    }
}

/// Timeouts, connection failures, HTTP 5xx and 429.
fn is_transient(e: &object_store::Error) -> bool {
    use object_store::client::HttpErrorKind;
    use std::io::ErrorKind;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                ErrorKind::TimedOut
                    | ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::ConnectionRefused
                    | ErrorKind::NotConnected
                    | ErrorKind::BrokenPipe
                    | ErrorKind::Interrupted
                    | ErrorKind::WouldBlock
            )
        {
            return true;
        }
        if let Some(h) = err.downcast_ref::<object_store::client::HttpError>()
            && matches!(
                h.kind(),
                HttpErrorKind::Connect
                    | HttpErrorKind::Request
                    | HttpErrorKind::Timeout
                    | HttpErrorKind::Interrupted
            )
        {
            return true;
        }
        cur = err.source();
    }
    // object_store's retry error keeps the status in its message only. 501 (Not
    // Implemented) and 505 are answers about the request itself: retrying cannot help.
    let text = e.to_string();
    let permanent_5xx = text.contains("status code: 501") || text.contains("status code: 505");
    text.contains("timed out")
        || text.contains("Timeout")
        || (text.contains("status code: 5") && !permanent_5xx)
        || text.contains("status code: 429")
}

/// Requests answered by one fetch: id and the range each asked for.
type Members = Vec<(RequestId, Range<u64>)>;

/// Work for one store call (or one coalesced group of ranged reads).
#[derive(Debug, PartialEq, Eq)]
enum Job {
    /// A request answered by its own call.
    Single(IoRequest),
    /// Ranged reads of `path` answered from one fetch of `fetch`.
    Ranges {
        path: String,
        fetch: Range<u64>,
        members: Vec<(RequestId, Range<u64>)>,
    },
}

/// Group a round into jobs: valid ranged reads of the same object are coalesced; everything
/// else is a job of its own. Jobs keep the order of their first request.
fn plan_jobs(round: Vec<IoRequest>, options: &HostOptions) -> Vec<Job> {
    use std::collections::BTreeMap;
    let mut by_path: BTreeMap<String, Vec<(RequestId, Range<u64>)>> = BTreeMap::new();
    let mut jobs: Vec<(RequestId, Job)> = Vec::new();
    for req in round {
        match req.op {
            IoOp::Read {
                path,
                range: Some(r),
            } if r.start < r.end => by_path.entry(path).or_default().push((req.id, r)),
            op => jobs.push((req.id, Job::Single(IoRequest { id: req.id, op }))),
        }
    }
    for (path, ranges) in by_path {
        for (fetch, members) in coalesce(
            ranges,
            options.coalesce_gap_bytes,
            options.max_coalesced_bytes,
        ) {
            let first = members
                .iter()
                .map(|(id, _)| *id)
                .min()
                .unwrap_or(RequestId(0));
            jobs.push((
                first,
                Job::Ranges {
                    path: path.clone(),
                    fetch,
                    members,
                },
            ));
        }
    }
    jobs.sort_by_key(|(id, _)| *id);
    jobs.into_iter().map(|(_, j)| j).collect()
}

/// Merge ranges (non-empty, `start < end`) whose gap is at most `gap` bytes while the merged
/// fetch stays within `max_bytes` (a longer single range stays alone). Returns each fetch range
/// with the requests it answers.
fn coalesce(
    mut ranges: Vec<(RequestId, Range<u64>)>,
    gap: u64,
    max_bytes: u64,
) -> Vec<(Range<u64>, Members)> {
    ranges.sort_by_key(|(id, r)| (r.start, r.end, *id));
    let mut out: Vec<(Range<u64>, Members)> = Vec::new();
    for (id, r) in ranges {
        if let Some((fetch, members)) = out.last_mut() {
            let end = fetch.end.max(r.end);
            if r.start <= fetch.end.saturating_add(gap) && end - fetch.start <= max_bytes {
                fetch.end = end;
                members.push((id, r));
                continue;
            }
        }
        out.push((r.clone(), vec![(id, r)]));
    }
    out
}

#[cfg(test)]
mod tests;
