//! Committing: commit messages from writers and compaction tasks become new snapshots.
//!
//! See `DESIGN.md` ("The flow of one write, commit and compaction"). The commit is a
//! [`crate::io::Machine`] like the reads ([`commit_machine`]): it reads the latest snapshot,
//! checks conflicts, writes manifests, manifest lists and the index manifest with create-new
//! `Put`s, and publishes `snapshot/snapshot-N` with a create-new `Put`, retrying on a new
//! base when another committer wins. [`abort_machine`] deletes the files of messages that
//! will not be committed.
//!
//! * [`message`]: the commit messages (serde values).
//! * [`serializer`]: Java `CommitMessageSerializer` bytes of commit messages.
//! * [`changes`]: messages to manifest entries; partition filters; Java `HashMap` orders.
//! * [`conflict`]: conflict detection against the latest snapshot.
//! * [`row_tracking`]: row ids and sequence numbers of row-tracking tables.
//! * [`merger`]: merging the previous manifests into the next base manifest list.
//! * [`committer`]: the commit itself (idempotence, retries, publishing).
//! * [`mod@abort`]: deleting the files of uncommitted messages.
//! * [`after_commit`]: the maintenance a commit runs after it (Java `TableCommitImpl`:
//!   automatic tags, partition expiry, snapshot and changelog expire), over
//!   [`crate::maintenance`].
//! * [`partition_expire`]: dropping expired partitions, one `OVERWRITE` commit per batch.

pub mod abort;
pub mod after_commit;
pub mod changes;
pub mod committer;
pub mod conflict;
pub mod merger;
pub mod message;
pub(crate) mod meta_writer;
pub mod partition_expire;
pub mod row_tracking;
pub mod serializer;
pub mod split_serializer;

#[cfg(test)]
mod tests;

pub use abort::{abort, abort_machine, abort_paths};
pub use after_commit::{MaintainOutcome, MaintainPlan, maintain, maintain_machine};
pub use committer::{CommitMode, CommitOptions, CommitOutcome, commit, commit_machine};
pub use message::{CommitMessage, CompactIncrement, DataIncrement};
pub use partition_expire::{PartitionExpireOutcome, expire_partitions, expire_partitions_machine};
