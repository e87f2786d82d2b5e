//! Commit messages: what a writer (or a compaction task) hands to the one committer.

use serde::{Deserialize, Serialize};

use crate::spec::{BinaryRow, DataFileMeta, IndexFileMeta};

/// Files a write added or removed in one bucket, outside compaction.
///
/// Source: Java `org.apache.paimon.io.DataIncrement`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataIncrement {
    /// New data files (level 0 for primary-key tables).
    pub new_files: Vec<DataFileMeta>,
    /// Data files this write deletes (e.g. an overwrite's replaced files).
    pub deleted_files: Vec<DataFileMeta>,
    /// New changelog files (`changelog-producer = input`).
    pub changelog_files: Vec<DataFileMeta>,
    /// New index files (hash index, deletion vectors).
    pub new_index_files: Vec<IndexFileMeta>,
    /// Index files replaced by `new_index_files`.
    pub deleted_index_files: Vec<IndexFileMeta>,
}

/// Files a compaction read (before) and wrote (after) in one bucket.
///
/// Source: Java `org.apache.paimon.io.CompactIncrement`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactIncrement {
    /// Input files, removed by the commit (a file upgraded to another level appears here at
    /// its old level and in `compact_after` at its new one).
    pub compact_before: Vec<DataFileMeta>,
    /// Output files.
    pub compact_after: Vec<DataFileMeta>,
    /// Changelog files the compaction produced (`lookup`, `full-compaction`).
    pub changelog_files: Vec<DataFileMeta>,
    /// New index files (deletion vectors).
    pub new_index_files: Vec<IndexFileMeta>,
    /// Index files replaced by `new_index_files`.
    pub deleted_index_files: Vec<IndexFileMeta>,
}

/// What one writer of one (partition, bucket) hands to the committer: a plain serde value,
/// so it may be produced in another thread, process or machine; Java's
/// `CommitMessageSerializer` bytes of it: [`crate::commit::serializer`].
///
/// Source: Java `org.apache.paimon.table.sink.CommitMessageImpl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitMessage {
    /// Partition values (fields in `partitionKeys` order; the empty row when unpartitioned).
    pub partition: BinaryRow,
    /// Bucket: `0..N-1` for fixed buckets, `0` for unaware-bucket append tables, the assigned
    /// bucket for dynamic-bucket tables, `-2` for the postpone bucket.
    pub bucket: i32,
    /// The bucket count the files were written for (`None` when unknown, as Java allows).
    pub total_buckets: Option<i32>,
    /// Files written by the write.
    pub data_increment: DataIncrement,
    /// Files written and removed by compaction.
    pub compact_increment: CompactIncrement,
}

impl CommitMessage {
    /// A message that changes nothing.
    pub fn is_empty(&self) -> bool {
        let d = &self.data_increment;
        let c = &self.compact_increment;
        d.new_files.is_empty()
            && d.deleted_files.is_empty()
            && d.changelog_files.is_empty()
            && d.new_index_files.is_empty()
            && d.deleted_index_files.is_empty()
            && c.compact_before.is_empty()
            && c.compact_after.is_empty()
            && c.changelog_files.is_empty()
            && c.new_index_files.is_empty()
            && c.deleted_index_files.is_empty()
    }
}
