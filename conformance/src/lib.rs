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
//!   [`operation::Driver`] and recorded in its own transcript section.
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

pub mod faults;
pub mod format;
pub mod operation;
pub mod record;
pub mod replay;
pub mod write;

pub use format::{Case, Transcript};
pub use operation::{Driver, Operation, Outcome, run_operation};
pub use replay::{ReplayError, replay_case};
