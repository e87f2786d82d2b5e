//! # paimon-conformance
//!
//! Recorded IO transcripts of real reads of the corpus tables (`conformance/tables`) and of
//! writes of new tables, and a replayer that runs the same core machines from a transcript
//! alone, on any host (native `cargo test`, wasm under Node), and checks the result (and every
//! `Put` body) byte for byte.
//!
//! * [`mod@format`]: the on-disk format (`case.json`, `transcript.jsonl`, `blobs/`,
//!   `expected/`), documented in `conformance/README.md`.
//! * [`operation`]: what a case runs: an [`operation::Operation`] is a fixed sequence of core
//!   machines (plan, then one reader per split in plan order), each driven by a
//!   [`driver::Driver`] and recorded in its own transcript section; [`scan`] is the scan they
//!   share, [`driver`] how a machine is driven and what an outcome is, [`digest`] the content
//!   hashes. Imports go one way: `digest`, `driver` < `scan` < `write` < `operation` <
//!   `format` < `record`, `replay`, `faults`.
//! * [`replay`]: the strict replayer: a request that is not the next one in the transcript is
//!   an error (IO drift), and so is a result that differs from `expected/`.
//! * [`record`]: building a transcript while a real host answers (used by `paimon-native`'s
//!   recording host).
//! * [`mod@write`]: the `write` operation (create, then per commit: restore, data file `Put`s,
//!   commit; then a read back), in steps the crash tests can cut and resume.
//! * [`faults`]: a scripted host that perturbs the answers (reordering, expired snapshots,
//!   truncated bodies, transient errors, unsupported listing, oversized ranges; for writes,
//!   a failed or lost `Put` and a crash after a `Put`).
//!
//! Rows are rendered with [`paimon_kernel::canonical`] (the corpus' canonical JSON).

#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod digest;
pub mod driver;
pub mod faults;
pub mod format;
pub mod operation;
pub mod record;
pub mod replay;
pub mod scan;
pub mod write;

pub use driver::{Driver, Outcome};
pub use format::{Case, Transcript};
pub use operation::{Operation, run_operation};
pub use replay::{ReplayError, replay_case};
