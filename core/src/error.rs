//! The core's one error type.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Result alias of the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the core. Every variant names what failed and where
/// (a path, a file format, a field) so that a user can act on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The host answered an IO request with a failure the operation cannot work around
    /// (a data file that is `NotFound`, a transient error after the host's retries...).
    #[error("IO error on {path}: {}", io_cause(*kind, detail))]
    Io {
        /// Path (or prefix) of the request.
        path: String,
        /// Failure kind as answered by the host.
        kind: IoErrorKind,
        /// Host detail, may be empty.
        detail: String,
    },

    /// Bytes or JSON that do not follow the format.
    #[error("corrupt {format} file {path}: {reason}")]
    Corrupt {
        /// File path (or a description of the buffer when no path is known).
        path: String,
        /// Format name: `snapshot`, `schema`, `avro-manifest`, `parquet`, `blob`, ...
        format: &'static str,
        /// What was expected and what was found.
        reason: String,
    },

    /// Valid input that uses something this implementation does not support (a merge engine,
    /// an aggregate function, a format version...).
    #[error("unsupported: {feature}")]
    Unsupported {
        /// What is not supported, with its context.
        feature: String,
    },

    /// A request that cannot be satisfied: an unknown snapshot id or tag, an unknown column,
    /// a bad option value.
    #[error("{0}")]
    Invalid(String),

    /// The host broke the IO protocol (answered an id that was not asked, or a range with the
    /// wrong length, or stepped a machine before answering its round).
    #[error("IO protocol violation: {detail}")]
    Protocol {
        /// What happened.
        detail: String,
    },

    /// A commit conflicts with the table as it is now (a file to delete is no longer live, a
    /// file is added twice, key ranges of one LSM level overlap, the bucket count of a
    /// partition changed...). Retrying the same commit cannot succeed; nothing was published.
    #[error("commit conflict: {detail}")]
    CommitConflict {
        /// What conflicts, naming the files or partitions.
        detail: String,
    },

    /// A commit of two parts (an `APPEND` snapshot, then a `COMPACT` snapshot: writes of
    /// lookup and deletion-vector tables) published its first part and then failed (a
    /// conflict, lost races, IO). The published snapshots are in the table and reference the
    /// written data files: a host must not delete the commit's files (only the failed part's
    /// own outputs are unreferenced, left for orphan cleaning) nor write the data again.
    #[error("commit partly published (snapshots {published:?}): {detail}")]
    PartlyPublished {
        /// Ids of the snapshots published.
        published: Vec<i64>,
        /// What failed after them.
        detail: String,
    },

    /// A commit lost the race to publish its snapshot `commit.max-retries` times in a row
    /// (other committers published first). Nothing of it was published; running the same
    /// commit again later (same user and identifier) is safe and is what a host does after
    /// a backoff.
    #[error("commit contended: {detail}")]
    CommitContended {
        /// Which commit, how many attempts, the last cause.
        detail: String,
    },

    /// Another error, with what was being done when it happened (`reading input rows.csv,
    /// line 3`). Its text is `{context}: {source}`.
    #[error("{context}: {source}")]
    Context {
        /// What was being done, naming the input or file.
        context: String,
        /// The error.
        #[source]
        source: Box<Error>,
    },

    /// An Arrow kernel failed.
    #[error("arrow error{}: {source}", if context.is_empty() { String::new() } else { format!(" in {context}") })]
    Arrow {
        /// Where.
        context: String,
        /// The Arrow error.
        #[source]
        source: arrow_schema::ArrowError,
    },
}

/// `not found`, `transient failure (detail)`...; for [`IoErrorKind::Other`] the detail alone
/// (it already says what failed).
fn io_cause(kind: IoErrorKind, detail: &str) -> String {
    match (kind, detail.is_empty()) {
        (_, true) => kind.to_string(),
        (IoErrorKind::Other, false) => detail.to_string(),
        (_, false) => format!("{kind} ({detail})"),
    }
}

impl Error {
    /// An IO failure answered by the host.
    pub fn io(path: impl Into<String>, kind: IoErrorKind, detail: impl Into<String>) -> Self {
        Error::Io {
            path: path.into(),
            kind,
            detail: detail.into(),
        }
    }

    /// Corrupt input in `path` of format `format`.
    pub fn corrupt(
        path: impl Into<String>,
        format: &'static str,
        reason: impl Into<String>,
    ) -> Self {
        Error::Corrupt {
            path: path.into(),
            format,
            reason: reason.into(),
        }
    }

    /// Something unsupported.
    pub fn unsupported(feature: impl Into<String>) -> Self {
        Error::Unsupported {
            feature: feature.into(),
        }
    }

    /// An invalid request or option.
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }

    /// An Arrow error with context.
    pub fn arrow(context: impl Into<String>, source: arrow_schema::ArrowError) -> Self {
        Error::Arrow {
            context: context.into(),
            source,
        }
    }

    /// `source` with what was being done (see [`Error::Context`]).
    pub fn context(context: impl Into<String>, source: Error) -> Self {
        Error::Context {
            context: context.into(),
            source: Box::new(source),
        }
    }

    /// True if this is an IO `NotFound` (also under [`Error::Context`]).
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Io { kind, .. } => *kind == IoErrorKind::NotFound,
            Error::Context { source, .. } => source.is_not_found(),
            _ => false,
        }
    }
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
