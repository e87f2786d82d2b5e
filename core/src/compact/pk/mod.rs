//! Compaction of primary-key tables: levels, universal compaction, merge-tree rewrite.
//!
//! * [`levels`]: the files of one bucket by level ([`Levels`]), sorted runs.
//! * [`strategy`]: picking a [`CompactUnit`]: universal compaction, forced level-0
//!   compaction (lookup tables), full compaction. Pure functions with Java's rules.
//! * [`planner`]: a snapshot's live files to one [`PkCompactTask`] per bucket (serde
//!   values: plan on a coordinator, run anywhere).
//! * [`task`]: running a task as a [`crate::io::Machine`]: inputs read and merged with the
//!   read side's [`crate::merge::MergeReader`], outputs written at the output level, a
//!   [`crate::commit::CommitMessage`] with the `compact_increment`, to be committed (kind
//!   `COMPACT`) by [`crate::commit::commit_machine`].
//!
//! Driving order: [`plan_pk_compaction`] on the latest snapshot's live entries; run each
//! task with [`compact_task_machine`]; commit the messages together.
//!
//! Deletion-vector tables are compacted fully, their vectors folded into rewritten files
//! and the bucket's vector index files removed (Java's lookup compaction, which marks old
//! positions in new vectors instead, is not implemented).
//!
//! Not supported (errors saying so): `changelog-producer` `lookup` and
//! `full-compaction` (their compactions produce changelog), postpone buckets, record-level
//! expiry, external data paths, and `force-lookup` tables other than `deduplicate` without
//! `sequence.field` and `first-row`: Java's lookup merge function (`LookupMergeFunction`,
//! the lowest high level holds a key's merged history) is not applied. First-row tables get
//! Java's lookup rule for their compactions (level-0 keys found in a higher level are
//! dropped), read from the higher levels' keys.
//!
//! Source: Java `org.apache.paimon.mergetree` (`Levels`, `compact.*`).

pub mod levels;
pub mod planner;
pub mod strategy;
pub mod task;

#[cfg(test)]
mod tests;

pub use levels::{LevelSortedRun, Levels, SortedRun};
pub use planner::{
    PkCompactOptions, PkCompactRequest, PkCompactTask, check_supported, plan_pk_compaction,
    plan_summary,
};
pub use strategy::{CompactStrategy, CompactUnit, EarlyFullCompaction, UniversalCompaction};
pub use task::{PkCompactContext, PkCompactStats, compact_task_machine, is_pure_upgrade};
