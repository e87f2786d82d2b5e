//! Compaction of primary-key tables: levels, universal compaction, merge-tree rewrite.
//!
//! * [`levels`]: the files of one bucket by level ([`Levels`]), sorted runs.
//! * [`strategy`]: picking a [`CompactUnit`]: universal compaction, forced level-0
//!   compaction (lookup tables), full compaction. Pure functions with Java's rules.
//! * [`planner`]: a snapshot's live files to one [`PkCompactTask`] per bucket (serde
//!   values: plan on a coordinator, run anywhere).
//! * [`postpone`]: compaction of postpone-bucket tables.
//! * [`task`]: running a task as a [`crate::io::Machine`]: inputs read and merged with the
//!   read side's [`crate::merge::MergeReader`], outputs written at the output level, a
//!   [`crate::commit::CommitMessage`] with the `compact_increment`, to be committed (kind
//!   `COMPACT`) by [`crate::commit::commit_machine`].
//!
//! Driving order: [`plan_pk_compaction`] on the latest snapshot's live entries; run each
//! task with [`compact_task_machine`]; commit the messages together.
//!
//! Deletion-vector tables compact as lookup tables: level 0 is always compacted up, the rows
//! an output replaces in files above the output level are marked in the bucket's vectors,
//! and the task replaces the bucket's vector index files.
//!
//! Changelog (`changelog-producer` `lookup` and `full-compaction`) is derived by the merge
//! ([`crate::merge::MergeReader::with_compaction_lookup`]) and written as changelog files of
//! the task's message. Lookup tables see the bucket's files above the output level as
//! lookup-only runs (Java's `LookupLevels`): first-row drops keys they hold; other engines
//! merge a key's lookup hit with its level-0 records (Java's `LookupMergeFunction`).
//!
//! Postpone-bucket tables (`bucket = -2`): [`postpone`] plans moving the postpone files'
//! rows into real buckets; the host replays them through a fixed-bucket writer and compacts
//! the buckets it wrote with the planner above.
//!
//! Record-level expiry (`record-level.expire-time`, [`crate::read::expire`]): the compaction reads its
//! inputs without the rows whose time field is expired at the planning time, and rewrites
//! (rather than upgrades) the files whose statistics show such rows.
//!
//! Incremental selection ([`incremental`], our opt-in table option
//! `kernel.compaction.incremental-selection`): normal compaction compacts small recent runs
//! and leaves large historical runs in place, for first-row, lookup partial-update /
//! aggregation, and plain partial-update / aggregation tables whose merge regroups safely.
//!
//! Not supported (errors saying so): external data paths with `index-file-in-data-file-dir`.
//!
//! Source: Java `org.apache.paimon.mergetree` (`Levels`, `compact.*`).

pub mod incremental;
pub mod levels;
pub mod planner;
pub mod postpone;
pub mod strategy;
pub mod task;

#[cfg(test)]
mod tests;

pub use levels::{LevelSortedRun, Levels, SortedRun};
pub use planner::{
    PkCompactOptions, PkCompactRequest, PkCompactTask, check_supported, is_pure_upgrade,
    plan_pk_compaction, plan_summary,
};
pub use strategy::{CompactStrategy, CompactUnit, EarlyFullCompaction, UniversalCompaction};
pub use task::{PkCompactContext, PkCompactStats, compact_task_machine, run_compact_task};
