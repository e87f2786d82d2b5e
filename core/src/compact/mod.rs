//! Compaction: planning (pure) and tasks (machines) for primary-key, append and
//! data-evolution tables.
//!
//! A planner reads the latest snapshot's live files and returns serde tasks; a task reads
//! its input files, writes outputs (and deletion-vector index files, changelog files), and
//! yields a [`crate::commit::CommitMessage`] whose `compact_increment` is committed with
//! kind `COMPACT` by the one committer ([`crate::commit::commit_machine`]).
//!
//! * [`plan`]: the plan JSON shared by every table kind (the shape of the Java oracle's
//!   `plan-compaction`).
//! * `pk`: levels, universal compaction, merge-tree rewrite (primary-key tables).
//! * `append`: bucketed and unaware-bucket append compaction.
//! * `data_evolution`: field groups merged into normal files.

pub mod append;
pub mod append_job;
pub mod data_evolution;
pub mod pk;
pub mod plan;

pub use plan::{CompactionPlan, CompactionUnitSummary};
