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

use std::fmt;
use std::ops::Range;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

pub use crate::error::IoErrorKind;

mod machine;
mod memory;
pub mod put;

pub use machine::{Io, Machine, Work, WorkHandle, next_emitted};
pub use memory::MemoryStore;
pub use put::{
    DEFAULT_PUT_PART_BYTES, FileContent, FilePart, FilePiece, FileToPut, StreamedFile,
    completes_file, group_by_path, put_file, put_file_in_parts, put_file_machine,
    put_files_in_order,
};

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

#[cfg(test)]
mod tests;
