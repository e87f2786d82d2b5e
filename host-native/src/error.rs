//! The native host's one error type.

use paimon_kernel::io::IoErrorKind;

/// Result alias of the native host.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the native host. Errors from the core keep their detail and
/// get the table location (and what was being done) as context.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The table location is not a path or URL this host can open (unknown scheme, bad URL,
    /// a path object_store cannot represent).
    #[error("invalid table location {location:?}: {reason}")]
    Location {
        /// The location as given.
        location: String,
        /// What is wrong with it.
        reason: String,
    },

    /// object_store could not be configured for the location (missing bucket, bad credentials
    /// configuration...). Failures of individual requests are answered to the core instead
    /// and come back as [`Error::Kernel`] with an `Io` source.
    #[error("cannot open object store for {location}: {source}")]
    ObjectStore {
        /// The table location.
        location: String,
        /// The object_store error.
        #[source]
        source: object_store::Error,
    },

    /// The location holds neither a schema nor a snapshot file.
    #[error("no Paimon table at {location}: neither snapshot/ nor schema/ files were found")]
    NotATable {
        /// The table location.
        location: String,
    },

    /// The core failed: corrupt metadata, a missing file, an unknown snapshot or tag, an IO
    /// failure answered by this host...
    #[error("{context}: {source}")]
    Kernel {
        /// What was being done, with the table location, e.g. `reading snapshot 3 of table
        /// file:///t`.
        context: String,
        /// The core's error, which names the file (relative to the table root) and the problem.
        #[source]
        source: paimon_kernel::Error,
    },

    /// A spawned task running a machine panicked or was cancelled.
    #[error("{machine}: the task failed: {detail}")]
    Task {
        /// What the task was doing (the machine's description, with the table location).
        machine: String,
        /// What happened.
        detail: String,
    },
}

impl Error {
    /// Wrap a core error with context.
    pub fn kernel(context: impl Into<String>, source: paimon_kernel::Error) -> Self {
        Error::Kernel {
            context: context.into(),
            source,
        }
    }

    /// The core error, if this is one.
    pub fn as_kernel(&self) -> Option<&paimon_kernel::Error> {
        match self {
            Error::Kernel { source, .. } => Some(source),
            _ => None,
        }
    }

    /// The IO failure kind, if this error is an IO failure answered by the host.
    pub fn io_kind(&self) -> Option<IoErrorKind> {
        match self.as_kernel() {
            Some(paimon_kernel::Error::Io { kind, .. }) => Some(*kind),
            _ => None,
        }
    }
}
