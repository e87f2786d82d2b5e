//! # paimon-kernel
//!
//! The sans-IO core of a Rust implementation of the [Apache Paimon](https://paimon.apache.org)
//! table format. It never performs IO: every operation is a [`io::Machine`] that asks for
//! bytes in rounds of [`io::IoRequest`]s and is driven by a host (`paimon-native` over
//! `object_store`, `paimon-wasm` in the browser, or the conformance replayer).
//!
//! ## Layers
//!
//! One rule: **a module imports only from the layers below it**, never from its own layer or
//! one above (test code may use any layer to build its tables). From the bottom up:
//!
//! 1. [`error`]: the crate's one error type.
//! 2. [`util`]: small helpers (bytes, hex, durations, memory sizes, the names of new files).
//! 3. [`io`]: the IO boundary (requests, answers, machines, an in-memory store, `Put`s).
//! 4. [`spec`]: facts of the format (snapshot, schema, data types, manifests, data file
//!    meta, binary rows, options, system fields, file names).
//! 5. [`types`], [`format`], [`predicate`]: Paimon ⇄ Arrow types and Java's casts; the
//!    pure codecs of Paimon's files; the `--where` filter and its pruning.
//! 6. [`encode`], [`merge`], [`scan`], [`canonical`]: data-file encoders and statistics;
//!    merge-on-read (loser tree, merge engines, aggregates); snapshot resolution and scan
//!    planning; canonical JSON and writer input.
//! 7. [`blob`]: BLOB descriptors, `.blob` files, managed packs, inline columns, validation
//!    and resolution on read.
//! 8. [`read`], [`maintenance`]: reading splits into Arrow batches; expiring snapshots,
//!    orphan files, tags, rollback.
//! 9. [`commit`], [`schema`]: commit messages to a new snapshot (and what a commit runs
//!    after it); creating and altering tables.
//! 10. [`write`](mod@write): rows to data files and commit messages.
//! 11. [`compact`]: compaction planners and tasks (primary-key, append, data-evolution).
//! 12. [`inspect`], [`job`]: view models of a table's anatomy; whole write and compaction
//!     jobs over one IO.
//!
//! The test `layers` (`core/tests/it/layers.rs`) reads this list and fails when a module
//! names (`crate::x`) a module of its own layer or of a layer above. See `ARCHITECTURE.md`
//! at the repository root for the map of each room.

#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod blob;
pub mod canonical;
pub mod commit;
pub mod compact;
pub mod encode;
pub mod error;
pub mod format;
pub mod inspect;
pub mod io;
pub mod job;
pub mod maintenance;
pub mod merge;
pub mod predicate;
pub mod read;
pub mod scan;
pub mod schema;
pub mod spec;
pub mod types;
pub mod util;
pub mod write;

#[cfg(test)]
mod testkit;

pub use error::{Error, Result};
