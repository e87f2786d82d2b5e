//! Table maintenance: expire snapshots (with the changelog files they own), remove orphan
//! files, create and delete tags, roll back to a snapshot or tag, choose the partitions to
//! expire. None of it commits: what a commit runs after it (Java `TableCommitImpl.maintain`)
//! and partition expiry's drop commits sit above, in [`crate::commit::after_commit`] and
//! [`crate::commit::partition_expire`].
//!
//! Every operation is an `async fn` over an [`Io`](crate::io::Io) (run it inside a
//! [`Machine`](crate::io::Machine); each has a `*_machine` constructor) so it stays sans-IO:
//! it asks for `Read`, `Head`, `List`, `Put` and `Delete` requests and never reads a clock.
//! The current time is a parameter (`now_millis`, milliseconds since the epoch).
//!
//! # Safety of deletes
//!
//! * [`expire`] deletes, in this order: data files that the expired snapshots deleted and that
//!   no retained snapshot or tag still uses, changelog files of the expired snapshots,
//!   manifests/manifest lists/index files no retained snapshot or tag uses, then the snapshot
//!   files in id order, then writes `snapshot/EARLIEST`. A reader of a retained snapshot or
//!   tag never finds one of its files gone; a crash part way leaves unreferenced files that
//!   [`orphans`] collects.
//! * [`orphans`] lists candidate files first, then collects the used files of every snapshot,
//!   tag, long-lived changelog and branch, re-listing until every file listed was read, found
//!   gone, or is a snapshot newer than one read whole (an old file that a newer snapshot uses
//!   is live in the one read; its new files are younger than the cut-off). So a concurrent
//!   expire cannot leave it with an empty or partial set of used files. A snapshot whose file
//!   is still there but whose manifest is missing stops it with an error. Files younger than
//!   the cut-off are never candidates, which covers files of commits in flight.
//!
//! Source: Java `org.apache.paimon.table.ExpireSnapshotsImpl`,
//! `org.apache.paimon.operation.{SnapshotDeletion, FileDeletionBase, TagDeletion,
//! OrphanFilesClean, LocalOrphanFilesClean}`, `org.apache.paimon.utils.TagManager`,
//! `org.apache.paimon.table.RollbackHelper`.

pub mod auto_tag;
pub mod expire;
mod files;
pub mod orphans;
pub mod packs;
pub mod partitions;
pub mod tags;

use serde::{Deserialize, Serialize};

pub use auto_tag::{AutoTagOutcome, TagAutoConfig, create_auto_tags, expire_tags_by_time};
pub use expire::{
    ChangelogExpireConfig, ChangelogRetention, ExpireConfig, ExpireOutcome, expire_changelogs,
    expire_machine, expire_snapshots, expire_with_changelogs, expire_with_changelogs_machine,
};
pub use orphans::{OrphanOutcome, remove_orphan_files, remove_orphans_machine};
pub use packs::{PackOutcome, collect_packs, collect_packs_machine};
pub use partitions::{
    ExpireStrategy, ExpiredPartition, PartitionExpireConfig, PartitionTimeExtractor,
    select_expired_partitions,
};
pub use tags::{
    RollbackOutcome, RollbackTarget, TagDeleteOutcome, TagInfo, create_tag, delete_tag,
    list_tag_infos, rollback,
};

/// A file removed by a maintenance operation (or that would be, in a dry run).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RemovedFile {
    /// Path relative to the table root (or absolute for external files).
    pub path: String,
    /// Size in bytes when known (from the metadata that named it or from the listing).
    pub size_bytes: Option<u64>,
}

/// Sum of the known sizes of `files`, in bytes.
pub fn total_bytes(files: &[RemovedFile]) -> u64 {
    files
        .iter()
        .filter_map(|f| f.size_bytes)
        .fold(0u64, u64::saturating_add)
}
