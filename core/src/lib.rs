//! # paimon-kernel
//!
//! The sans-IO core of a Rust implementation of the [Apache Paimon](https://paimon.apache.org)
//! table format. It never performs IO: every operation is a [`io::Machine`] that asks for
//! bytes in rounds of [`io::IoRequest`]s and is driven by a host (`paimon-native` over
//! `object_store`, `paimon-wasm` in the browser, or the conformance replayer).
//!
//! Module map (see `DESIGN.md`):
//! * [`io`]: the IO boundary (requests, answers, machines, an in-memory store).
//! * [`merge`]: merge-on-read of primary-key tables (loser tree over sorted runs, merge
//!   engines, aggregate functions).
//! * [`spec`]: table metadata (snapshot, schema, data types, manifests, data file meta,
//!   binary rows, options).
//! * [`predicate`]: the `--where` filter: parsing, binding, partition/stats pruning, row
//!   filtering.
//! * [`scan`]: resolving the snapshot to read (latest, snapshot id, tag, timestamp).
//! * [`write`](mod@write): writers: rows to data files and commit messages.
//! * [`commit`]: commit messages to a new snapshot (manifests, manifest list, snapshot).
//! * [`compact`]: compaction planners and tasks (primary-key, append, data-evolution).
//! * [`inspect`]: view models of a table's anatomy for inspectors (levels, compaction
//!   preview, field groups, snapshot timeline).
//! * [`canonical`]: Arrow values as the conformance corpus' canonical JSON (tests, the wasm
//!   host's JSON rows), and rows input to writers (Arrow IPC, Parquet, CSV, JSON lines).

#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod canonical;
pub mod commit;
pub mod compact;
pub mod error;
pub mod evolution;
pub mod format;
pub mod inspect;
pub mod io;
pub mod maintenance;
pub mod merge;
pub mod predicate;
pub mod read;
pub mod scan;
pub mod spec;
pub mod types;
pub mod util;
pub mod write;

pub use error::{Error, Result};
