//! Append-table compaction: which small files of a bucket (fixed-bucket tables) or of a
//! partition (unaware-bucket tables, `bucket = -1`) are rewritten together, and how the
//! rewritten files are described to the committer.
//!
//! Planning is pure: [`plan_unaware`] mirrors Java's `AppendCompactCoordinator` (one batch
//! run), [`plan_bucketed`] mirrors Java's `BucketedAppendCompactManager` (its best-effort pick,
//! or its full compaction). Each task is a serde value ([`AppendCompactTask`]): read its files
//! in order (the read side's append reader, schema evolution included), write the rows again
//! with the table's writer rolling at `target-file-size`, then [`AppendCompactTask::finish`]
//! turns the written files into the [`CommitMessage`] committed with kind `COMPACT`.
//!
//! Row-tracking tables (`row-tracking.enabled` without data evolution): the rows are read
//! with `_ROW_ID` and `_SEQUENCE_NUMBER` and written with both
//! ([`CompactRewriter::try_new_row_tracking`]), as Java's compactors do.
//!
//! Deletion vectors (`deletion-vectors.enabled`): the planners take the snapshot's live
//! vectors ([`AppendDvIndex`]) and follow Java's deletion-vector modes (see [`plan_unaware`]
//! and [`plan_bucketed`]). A task reads its inputs with their vectors applied
//! ([`AppendCompactTask::deletion_files`]), and when an input had a vector its
//! [`AppendCompactTask::dv_index`] names the index files to replace: [`dv_index_machine`]
//! writes them again without the inputs' vectors, and [`AppendCompactTask::finish`] puts the
//! new and replaced index files into the compact increment.
//!
//! Determinism: where Java iterates a `HashSet` or `HashMap` (the unaware coordinator's files
//! of equal size, its groups of files by index file, a maintainer's vectors), ties are broken
//! by the order the files came in (manifest order).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

use crate::commit::{CommitMessage, CompactIncrement};
use crate::compact::CompactionUnitSummary;
use crate::error::{Error, Result};
use crate::format::deletion_vector::{DeletionVector, decode_deletion_vector_index};
use crate::io::FileToPut;
use crate::io::{Io, IoErrorKind, Machine, Step, Work};
use crate::read::{ReadContext, read_split};
use crate::scan::planner::INDEX_DIR;
use crate::scan::{DataSplit, DeletionFile};
use crate::spec::file_names::INDEX_FILE_PREFIX;
use crate::spec::index_manifest::DELETION_VECTORS_INDEX;
use crate::spec::options::parse_memory_size;
use crate::spec::special_fields::{SEQUENCE_NUMBER, row_tracking_fields};
use crate::spec::{
    BinaryRow, CoreOptions, DataField, DataFileMeta, DeletionVectorMeta, FileKind, FileSource,
    IndexFileMeta, IndexManifestEntry, ManifestEntry, TableSchema,
};
use crate::util::NameSource;
use crate::write::append::deletion_vectors::{put_dv_index_file, roll_index_entries};
use crate::write::{TableWrite, WriteOptions, WriteRestore};

/// Kept at its former path for callers of `compact::append`.
pub use crate::compact::plan::partition_json;

mod rewrite;
pub use rewrite::*;

/// Files a full compaction of a fixed bucket needs at least (without deletion vectors).
///
/// Source: Java `BucketedAppendCompactManager.FULL_COMPACT_MIN_FILE`.
pub const FULL_COMPACT_MIN_FILE: usize = 3;

/// `deletion-vector.index-file.target-size` default: 2 MiB.
pub(crate) const DEFAULT_DV_INDEX_FILE_TARGET_BYTES: i64 = 2 << 20;

/// The options append compaction reads, with Java's defaults.
///
/// Source: Java `org.apache.paimon.CoreOptions` (`targetFileSize(false)`,
/// `compactionFileSize(false)`, `compactionMinFileNum`, `splitOpenFileCost`,
/// `compaction.force-rewrite-all-files`, `compactionDeleteRatioThreshold`,
/// `deletionVectorsEnabled`, `deletionVectorBitmap64`, `deletionVectorIndexFileTargetSize`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppendCompactOptions {
    /// `target-file-size` in bytes (default 256 MiB for append tables).
    pub target_file_size: i64,
    /// Files smaller than this (bytes) are compaction candidates: `target-file-size` ×
    /// `compaction.small-file-ratio` (default 0.7), truncated.
    pub compaction_file_size: i64,
    /// `compaction.min.file-num` (default 5).
    pub min_file_num: usize,
    /// `source.split.open-file-cost` in bytes (default 4 MiB).
    pub open_file_cost: i64,
    /// `compaction.force-rewrite-all-files` (default false).
    pub force_rewrite_all_files: bool,
    /// `deletion-vectors.enabled` (default false): the planners' deletion-vector modes.
    #[serde(default)]
    pub deletion_vectors: bool,
    /// `compaction.delete-ratio-threshold` (default 0.2): an unaware-bucket file whose vector
    /// deletes more than this fraction of its rows is a candidate whatever its size.
    #[serde(default = "default_delete_ratio_threshold")]
    pub delete_ratio_threshold: f64,
    /// `deletion-vectors.bitmap64` (default false): rewritten index files use 64-bit bitmaps.
    #[serde(default)]
    pub dv_bitmap64: bool,
    /// `deletion-vector.index-file.target-size` in bytes (default 2 MiB): rewritten
    /// unaware-bucket index files roll once past it.
    #[serde(default = "default_dv_index_target")]
    pub dv_index_file_target_size: i64,
}

fn default_delete_ratio_threshold() -> f64 {
    0.2
}

fn default_dv_index_target() -> i64 {
    DEFAULT_DV_INDEX_FILE_TARGET_BYTES
}

impl AppendCompactOptions {
    /// The options of a table.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the option whose value does not parse.
    pub fn from_options(options: &CoreOptions) -> Result<Self> {
        let target_file_size = memory_option(options, "target-file-size", 256 << 20)?;
        let ratio = match options.get("compaction.small-file-ratio") {
            None => 0.7,
            Some(v) => v.trim().parse::<f64>().map_err(|_| {
                Error::invalid(format!(
                    "option 'compaction.small-file-ratio' = '{v}' is not a number"
                ))
            })?,
        };
        Ok(AppendCompactOptions {
            target_file_size,
            compaction_file_size: (target_file_size as f64 * ratio) as i64,
            min_file_num: int_option(options, "compaction.min.file-num", 5)?,
            open_file_cost: memory_option(options, "source.split.open-file-cost", 4 << 20)?,
            force_rewrite_all_files: bool_option(
                options,
                "compaction.force-rewrite-all-files",
                false,
            )?,
            deletion_vectors: options.deletion_vectors_enabled()?,
            delete_ratio_threshold: match options.get("compaction.delete-ratio-threshold") {
                None => default_delete_ratio_threshold(),
                Some(v) => v.trim().parse::<f64>().map_err(|_| {
                    Error::invalid(format!(
                        "option 'compaction.delete-ratio-threshold' = '{v}' is not a number"
                    ))
                })?,
            },
            dv_bitmap64: options.deletion_vectors_bitmap64()?,
            dv_index_file_target_size: memory_option(
                options,
                "deletion-vector.index-file.target-size",
                DEFAULT_DV_INDEX_FILE_TARGET_BYTES,
            )?,
        })
    }
}

/// A memory-size option in bytes.
pub(crate) fn memory_option(options: &CoreOptions, key: &str, default: i64) -> Result<i64> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => parse_memory_size(v)
            .map_err(|e| Error::invalid(format!("option '{key}' = '{v}': expected {e}"))),
    }
}

/// A non-negative integer option.
pub(crate) fn int_option(options: &CoreOptions, key: &str, default: usize) -> Result<usize> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => v.trim().parse::<usize>().map_err(|_| {
            Error::invalid(format!(
                "option '{key}' = '{v}' is not a non-negative integer"
            ))
        }),
    }
}

/// A boolean option (`true`/`false`, any case).
pub(crate) fn bool_option(options: &CoreOptions, key: &str, default: bool) -> Result<bool> {
    match options.get(key).map(str::trim) {
        None => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(Error::invalid(format!(
            "option '{key}' = '{v}' is not a boolean"
        ))),
    }
}

/// The live deletion vectors of a snapshot's append data files: where each file's vector is
/// (index file, entry) and how many rows it deletes.
///
/// Built from the snapshot's index manifest entries (only `ADD` entries of type
/// `DELETION_VECTORS` count). Unaware-bucket tables (`bucket_unaware`) look vectors up by
/// partition and data file name (Java keeps one maintainer per partition), fixed-bucket
/// tables by partition, bucket and data file name.
///
/// Source: the restore of Java `AppendDeleteFileMaintainer` (`forUnawareAppend`: every
/// deletion-vector index file of the partition) and `BucketedDvMaintainer` (the index files of
/// one bucket).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppendDvIndex {
    bucket_unaware: bool,
    /// Live deletion-vector index entries, manifest order.
    entries: Vec<IndexManifestEntry>,
    /// (partition, bucket or 0 when unaware, data file name) → (entry, range) indexes.
    by_file: BTreeMap<(BinaryRow, i32, String), (usize, usize)>,
}

impl AppendDvIndex {
    /// The vectors of `index_entries` (a snapshot's index manifest; other index types are
    /// ignored).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for index files with an external path or tables with
    /// `index-file-in-data-file-dir` (when any vector exists); [`Error::Invalid`] when two
    /// index files hold a vector of the same data file, or an index file has no ranges.
    pub fn try_new(
        index_entries: &[IndexManifestEntry],
        options: &CoreOptions,
        bucket_unaware: bool,
    ) -> Result<Self> {
        let entries: Vec<IndexManifestEntry> = index_entries
            .iter()
            .filter(|e| {
                e.kind == FileKind::Add && e.index_file.index_type == DELETION_VECTORS_INDEX
            })
            .cloned()
            .collect();
        if !entries.is_empty() && options.index_file_in_data_file_dir()? {
            return Err(Error::unsupported(
                "compacting a table with deletion vectors and 'index-file-in-data-file-dir' = \
                 'true'",
            ));
        }
        let mut by_file = BTreeMap::new();
        for (i, e) in entries.iter().enumerate() {
            let f = &e.index_file;
            if f.external_path.is_some() {
                return Err(Error::unsupported(format!(
                    "compacting with deletion vector index file {} at an external path",
                    f.file_name
                )));
            }
            let ranges = f.dv_ranges.as_ref().ok_or_else(|| {
                Error::invalid(format!(
                    "deletion vector index file {} has no deletion vector ranges",
                    f.file_name
                ))
            })?;
            let bucket = if bucket_unaware { 0 } else { e.bucket };
            for (j, r) in ranges.iter().enumerate() {
                let key = (e.partition.clone(), bucket, r.data_file_name.clone());
                if let Some((other, _)) = by_file.insert(key, (i, j)) {
                    return Err(Error::invalid(format!(
                        "data file {} has deletion vectors in two index files ({} and {})",
                        r.data_file_name, entries[other].index_file.file_name, f.file_name
                    )));
                }
            }
        }
        Ok(AppendDvIndex {
            bucket_unaware,
            entries,
            by_file,
        })
    }

    /// True when no data file has a vector.
    pub fn is_empty(&self) -> bool {
        self.by_file.is_empty()
    }

    /// The index file and range holding the vector of `file` in (`partition`, `bucket`).
    pub(crate) fn holder(
        &self,
        partition: &BinaryRow,
        bucket: i32,
        file: &str,
    ) -> Option<(&IndexManifestEntry, &DeletionVectorMeta)> {
        let bucket = if self.bucket_unaware { 0 } else { bucket };
        let (i, j) = *self
            .by_file
            .get(&(partition.clone(), bucket, file.to_owned()))?;
        let e = self.entries.get(i)?;
        Some((e, e.index_file.dv_ranges.as_ref()?.get(j)?))
    }

    /// Where the vector of `file` is, as the read side wants it (`None`: no vector).
    pub(crate) fn deletion_file(
        &self,
        partition: &BinaryRow,
        bucket: i32,
        file: &str,
    ) -> Option<DeletionFile> {
        self.holder(partition, bucket, file)
            .map(|(e, r)| DeletionFile {
                path: e.index_file.path_in(INDEX_DIR),
                offset: i64::from(r.offset),
                length: i64::from(r.length),
                cardinality: r.cardinality,
                index_file_size: e.index_file.file_size,
            })
    }

    /// The index files of one fixed bucket, manifest order.
    fn bucket_files(&self, partition: &BinaryRow, bucket: i32) -> Vec<IndexFileMeta> {
        self.entries
            .iter()
            .filter(|e| &e.partition == partition && e.bucket == bucket)
            .map(|e| e.index_file.clone())
            .collect()
    }

    /// Java `AppendCompactCoordinator#tooHighDeleteRatio`: the file has a vector and its
    /// cardinality is unknown or above `row_count` × `threshold`.
    fn too_high_delete_ratio(
        &self,
        partition: &BinaryRow,
        file: &DataFileMeta,
        threshold: f64,
    ) -> bool {
        match self.holder(partition, 0, &file.file_name) {
            None => false,
            Some((_, r)) => match r.cardinality {
                None => true,
                Some(c) => c as f64 > file.row_count as f64 * threshold,
            },
        }
    }
}

/// How a compaction task changes the deletion-vector index: the vectors of its input files
/// go, and the index files that held them are replaced.
///
/// Source: Java `AppendDeleteFileMaintainer#notifyRemovedDeletionVector` and `#persist`
/// (unaware bucket), `BucketedDvMaintainer#removeDeletionVectorOf` and
/// `#writeDeletionVectorsIndex` (fixed buckets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DvIndexRewrite {
    /// The index files replaced (read, then deleted by the commit), manifest order.
    pub replaced: Vec<IndexFileMeta>,
    /// Fixed buckets (`true`): every vector left in the bucket goes into one new file, written
    /// even when no vector is left (Java's `writeSingleFile`, a file of the version byte
    /// alone). Unaware bucket (`false`): each replaced file's remaining vectors go into new
    /// files rolling at `target_size_bytes`, none when no vector remains (Java's
    /// `writeUnchangedDeletionVector` with `writeWithRolling`).
    pub single_file: bool,
    /// Write 64-bit bitmaps (`deletion-vectors.bitmap64`).
    pub bitmap64: bool,
    /// `deletion-vector.index-file.target-size` in bytes.
    pub target_size_bytes: i64,
}

/// One append compaction task: files of one (partition, bucket) rewritten together, in this
/// order (their rows keep this order in the outputs).
///
/// Source: Java `org.apache.paimon.append.AppendCompactTask` (unaware bucket, bucket 0) and
/// the file lists `BucketedAppendCompactManager` hands to its rewriter (fixed buckets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppendCompactTask {
    /// Partition of the files.
    pub partition: BinaryRow,
    /// Bucket of the files (0 for unaware-bucket tables).
    pub bucket: i32,
    /// The bucket count of the files' manifest entries (`None` for unaware-bucket tables,
    /// whose entries record `-1` or `0`).
    pub total_buckets: Option<i32>,
    /// The input files, in rewrite order.
    pub files: Vec<DataFileMeta>,
    /// The deletion vectors of `files` (same order, `None`: no vector), applied when the
    /// inputs are read; empty when no input has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletion_files: Vec<Option<DeletionFile>>,
    /// The index change of the task (`None`: no input has a vector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dv_index: Option<DvIndexRewrite>,
}

impl AppendCompactTask {
    /// The commit message of this task once its rows were written into `outputs` (in write
    /// order) and, for a task with a [`DvIndexRewrite`], its index files rewritten by
    /// [`dv_index_machine`] (`index`): the inputs are `compact_before`, the outputs
    /// `compact_after` with file source `COMPACT` and sequence numbers counted on from the
    /// first input's minimum, one per row, as Java's `BaseAppendFileStoreWrite#compactRewrite`
    /// counts them (outputs that store `_SEQUENCE_NUMBER`, see
    /// [`CompactRewriter::try_new_row_tracking`], keep the range of their rows); the index files go to the compact increment's `new_index_files` and
    /// `deleted_index_files` (Java `AppendCompactTask#doCompact`; fixed buckets list the
    /// replaced file too, which Java leaves to the index manifest's per-bucket replacement).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the task has no input file, an output has a negative row
    /// count, or `index` is given for a task without a [`DvIndexRewrite`] or missing for one
    /// with it.
    pub fn finish(
        &self,
        outputs: Vec<DataFileMeta>,
        index: Option<DvIndexOutput>,
    ) -> Result<CommitMessage> {
        let first = self
            .files
            .first()
            .ok_or_else(|| Error::invalid("an append compaction task without input files"))?;
        let index = match (&self.dv_index, index) {
            (Some(_), Some(i)) => i,
            (None, None) => DvIndexOutput::default(),
            (Some(_), None) => {
                return Err(Error::invalid(
                    "an append compaction task with deletion vectors finished without its \
                     rewritten index files",
                ));
            }
            (None, Some(_)) => {
                return Err(Error::invalid(
                    "an append compaction task without deletion vectors finished with index \
                     files",
                ));
            }
        };
        let mut next = first.min_sequence_number;
        let mut after = Vec::with_capacity(outputs.len());
        for mut f in outputs {
            if f.row_count < 0 {
                return Err(Error::invalid(format!(
                    "compaction output {} has row count {}",
                    f.file_name, f.row_count
                )));
            }
            // Outputs that store `_SEQUENCE_NUMBER` (row-tracking tables) keep the range of
            // their rows' values (Java `RowDataFileSequenceNumberTracker`).
            let stores_sequence = f
                .write_cols
                .as_ref()
                .is_some_and(|c| c.iter().any(|n| n == SEQUENCE_NUMBER));
            if !stores_sequence {
                f.min_sequence_number = next;
                f.max_sequence_number = next.saturating_add(f.row_count).saturating_sub(1);
            }
            next = next.saturating_add(f.row_count);
            f.file_source = Some(FileSource::Compact);
            after.push(f);
        }
        Ok(CommitMessage {
            partition: self.partition.clone(),
            bucket: self.bucket,
            total_buckets: self.total_buckets,
            data_increment: Default::default(),
            compact_increment: CompactIncrement {
                compact_before: self.files.clone(),
                compact_after: after,
                new_index_files: index.new_index_files,
                deleted_index_files: index.deleted_index_files,
                ..CompactIncrement::default()
            },
        })
    }

    /// Total bytes of the input files.
    pub fn input_bytes(&self) -> i64 {
        self.files.iter().map(|f| f.file_size.max(0)).sum()
    }

    /// The task as a plan unit (`output_level` `None`, no upgrade, file names sorted).
    /// `partition_fields`: the table's partition key fields, in key order.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the partition does not decode with those fields.
    pub fn summary(&self, partition_fields: &[DataField]) -> Result<CompactionUnitSummary> {
        unit_summary(&self.partition, self.bucket, &self.files, partition_fields)
    }
}

/// A plan unit of files of one (partition, bucket) (`output_level` `None`, no upgrade).
pub(crate) fn unit_summary(
    partition: &BinaryRow,
    bucket: i32,
    files: &[DataFileMeta],
    partition_fields: &[DataField],
) -> Result<CompactionUnitSummary> {
    let mut names: Vec<String> = files.iter().map(|f| f.file_name.clone()).collect();
    names.sort();
    Ok(CompactionUnitSummary {
        partition: partition_json(partition, partition_fields)?,
        bucket,
        output_level: None,
        upgrade: false,
        files: names,
    })
}

/// The live files grouped by (partition, bucket), groups in first-seen order, files in the
/// order given.
fn group_by_bucket(entries: &[ManifestEntry]) -> Vec<((BinaryRow, i32, i32), Vec<DataFileMeta>)> {
    let mut index: BTreeMap<(BinaryRow, i32), usize> = BTreeMap::new();
    let mut out: Vec<((BinaryRow, i32, i32), Vec<DataFileMeta>)> = Vec::new();
    for e in entries {
        let key = (e.partition.clone(), e.bucket);
        let i = *index.entry(key).or_insert_with(|| {
            out.push(((e.partition.clone(), e.bucket, e.total_buckets), Vec::new()));
            out.len() - 1
        });
        out[i].1.push(e.file.clone());
    }
    out
}

/// Plan the compaction of an unaware-bucket append table (`bucket = -1`): per partition (in
/// first-seen order), the candidates are the files smaller than `compaction_file_size` and,
/// with deletion vectors, the files whose vector deletes more than
/// `delete_ratio_threshold` of their rows (or an unknown number).
///
/// * Without `deletion_vectors`: the candidates sorted by size (ties in input order) are
///   packed into bins; a bin becomes a task once it holds more than one file and its files
///   weigh (size + `open_file_cost` each) at least twice `target_file_size`; the last bin
///   becomes a task when it holds at least `min_file_num` files (and two).
/// * With `deletion_vectors` (Java's deletion-vector mode): candidates with a vector are
///   grouped by the index file holding it (groups in first-seen order, then sorted by total
///   size); whole groups are packed as above, and the last bin is always a task, even of one
///   file (files with vectors must be compacted; a group never spans tasks, so no two tasks
///   replace the same index file). The candidates without a vector, when more than one, are
///   then packed as without deletion vectors (the last bin needs `min_file_num` files).
///
/// `entries` are the live files of one snapshot, `dvs` its vectors. Tasks of files with
/// vectors carry their [`AppendCompactTask::deletion_files`] and a [`DvIndexRewrite`] of the
/// index files holding them (`single_file` false).
///
/// Source: Java `AppendCompactCoordinator` (`shouldCompact`, `tooHighDeleteRatio`,
/// `SubCoordinator#pack`, `#packInDeletionVectorVMode`, `FileBin`), one batch run: the
/// age-based compaction of a streaming coordinator never triggers in a single run. Java
/// release-1.4.2 plans the same.
pub fn plan_unaware(
    entries: &[ManifestEntry],
    dvs: &AppendDvIndex,
    options: &AppendCompactOptions,
) -> Vec<AppendCompactTask> {
    let mut tasks = Vec::new();
    // Java keys sub-coordinators by partition only: every file of an unaware table is in
    // bucket 0.
    let mut partitions: BTreeMap<BinaryRow, usize> = BTreeMap::new();
    let mut groups: Vec<(BinaryRow, Vec<DataFileMeta>)> = Vec::new();
    for e in entries {
        let i = *partitions.entry(e.partition.clone()).or_insert_with(|| {
            groups.push((e.partition.clone(), Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(e.file.clone());
    }
    for (partition, files) in groups {
        let candidates: Vec<DataFileMeta> = files
            .into_iter()
            .filter(|f| {
                f.file_size < options.compaction_file_size
                    || (options.deletion_vectors
                        && dvs.too_high_delete_ratio(&partition, f, options.delete_ratio_threshold))
            })
            .collect();
        let bins = if options.deletion_vectors {
            pack_with_vectors(&partition, candidates, dvs, options)
        } else {
            // Java's task refuses a single input file (`AppendCompactTask#doCompact`); with
            // `compaction.min.file-num` ≤ 1 such a bin is left alone here instead.
            pack_by_size(candidates, options, options.min_file_num.max(2))
        };
        for bin in bins {
            tasks.push(unaware_task(&partition, bin, dvs, options));
        }
    }
    tasks
}

/// Java `SubCoordinator#pack`: files sorted by size (stable), cut into bins of "enough
/// content"; the last bin kept when it has `min_files` files (and at least one).
fn pack_by_size(
    mut files: Vec<DataFileMeta>,
    options: &AppendCompactOptions,
    min_files: usize,
) -> Vec<Vec<DataFileMeta>> {
    files.sort_by_key(|f| f.file_size);
    let mut out = Vec::new();
    let mut bin = FileBin::default();
    for f in files {
        bin.add(f, options);
        if bin.enough_content(options) {
            out.push(bin.drain());
        }
    }
    if !bin.files.is_empty() && bin.files.len() >= min_files {
        out.push(bin.drain());
    }
    out
}

/// Java `SubCoordinator#packInDeletionVectorVMode` (see [`plan_unaware`]).
fn pack_with_vectors(
    partition: &BinaryRow,
    candidates: Vec<DataFileMeta>,
    dvs: &AppendDvIndex,
    options: &AppendCompactOptions,
) -> Vec<Vec<DataFileMeta>> {
    let mut by_index: Vec<(String, Vec<DataFileMeta>)> = Vec::new();
    let mut rest = Vec::new();
    for f in candidates {
        match dvs.holder(partition, 0, &f.file_name) {
            Some((e, _)) => {
                let name = &e.index_file.file_name;
                match by_index.iter_mut().find(|(n, _)| n == name) {
                    Some((_, g)) => g.push(f),
                    None => by_index.push((name.clone(), vec![f])),
                }
            }
            None => rest.push(f),
        }
    }
    // Stable: groups of equal size keep their first-seen order.
    by_index.sort_by_key(|(_, g)| g.iter().map(|f| f.file_size).sum::<i64>());
    let mut out = Vec::new();
    let mut bin = FileBin::default();
    for (_, group) in by_index {
        for f in group {
            bin.add(f, options);
        }
        if bin.enough_content(options) {
            out.push(bin.drain());
        }
    }
    if !bin.files.is_empty() {
        out.push(bin.drain());
    }
    if rest.len() > 1 {
        out.extend(pack_by_size(rest, options, options.min_file_num));
    }
    out
}

/// Java `SubCoordinator.FileBin`.
#[derive(Default)]
struct FileBin {
    files: Vec<DataFileMeta>,
    weight: i64,
}

impl FileBin {
    fn add(&mut self, f: DataFileMeta, options: &AppendCompactOptions) {
        self.weight = self
            .weight
            .saturating_add(f.file_size.saturating_add(options.open_file_cost));
        self.files.push(f);
    }

    fn enough_content(&self, options: &AppendCompactOptions) -> bool {
        self.files.len() > 1 && self.weight >= options.target_file_size.saturating_mul(2)
    }

    fn drain(&mut self) -> Vec<DataFileMeta> {
        self.weight = 0;
        std::mem::take(&mut self.files)
    }
}

fn unaware_task(
    partition: &BinaryRow,
    files: Vec<DataFileMeta>,
    dvs: &AppendDvIndex,
    options: &AppendCompactOptions,
) -> AppendCompactTask {
    let deletion_files: Vec<Option<DeletionFile>> = files
        .iter()
        .map(|f| dvs.deletion_file(partition, 0, &f.file_name))
        .collect();
    // The index files holding an input's vector, manifest order.
    let holders: Vec<&str> = files
        .iter()
        .filter_map(|f| dvs.holder(partition, 0, &f.file_name))
        .map(|(e, _)| e.index_file.file_name.as_str())
        .collect();
    let replaced: Vec<IndexFileMeta> = dvs
        .entries
        .iter()
        .filter(|e| &e.partition == partition && holders.contains(&e.index_file.file_name.as_str()))
        .map(|e| e.index_file.clone())
        .collect();
    finish_task(
        partition.clone(),
        0,
        None,
        files,
        deletion_files,
        replaced,
        false,
        options,
    )
}

/// A task with its deletion files and index rewrite (none when no input has a vector).
#[allow(clippy::too_many_arguments)]
fn finish_task(
    partition: BinaryRow,
    bucket: i32,
    total_buckets: Option<i32>,
    files: Vec<DataFileMeta>,
    deletion_files: Vec<Option<DeletionFile>>,
    replaced: Vec<IndexFileMeta>,
    single_file: bool,
    options: &AppendCompactOptions,
) -> AppendCompactTask {
    let any = deletion_files.iter().any(Option::is_some);
    AppendCompactTask {
        partition,
        bucket,
        total_buckets,
        files,
        deletion_files: if any { deletion_files } else { Vec::new() },
        dv_index: any.then_some(DvIndexRewrite {
            replaced,
            single_file,
            bitmap64: options.dv_bitmap64,
            target_size_bytes: options.dv_index_file_target_size,
        }),
    }
}

/// Plan the compaction of a fixed-bucket append table: per (partition, bucket), the files
/// ordered by minimum sequence number, then
///
/// * `full = false`: Java's best-effort pick: walk the files, keeping a window; the window
///   is a task as soon as it holds `min_file_num` files; when its size reaches twice
///   `target_file_size` first, its oldest file leaves it. No task when the walk ends first.
///   Deletion vectors do not change the pick.
/// * `full = true`: Java's full compaction: leading files of at least
///   `compaction_file_size` are skipped (unless `force_rewrite_all_files`), except that a
///   file with a deletion vector stops the skipping. Without `deletion_vectors`: no task with
///   fewer than [`FULL_COMPACT_MIN_FILE`] files, and the rest is one task when its small
///   files outnumber its big ones and it holds at least [`FULL_COMPACT_MIN_FILE`] files (or
///   always with `force_rewrite_all_files`). With `deletion_vectors` the rest is always one
///   task (when not empty), whatever its size.
///
/// A task with an input that has a vector gets its [`AppendCompactTask::deletion_files`] and
/// a [`DvIndexRewrite`] replacing every index file of the bucket with one file
/// (`single_file`).
///
/// Source: Java `BucketedAppendCompactManager#pickCompactBefore`,
/// `#triggerFullCompaction` and `FullCompactTask`, with the `BucketedDvMaintainer` of a
/// deletion-vector table (same in Java release-1.4.2).
pub fn plan_bucketed(
    entries: &[ManifestEntry],
    dvs: &AppendDvIndex,
    options: &AppendCompactOptions,
    full: bool,
) -> Vec<AppendCompactTask> {
    let mut tasks = Vec::new();
    for ((partition, bucket, total_buckets), mut files) in group_by_bucket(entries) {
        files.sort_by_key(|f| f.min_sequence_number);
        let has_vector = |f: &DataFileMeta| dvs.holder(&partition, bucket, &f.file_name).is_some();
        let picked = if full {
            pick_full(files, options, &has_vector)
        } else {
            pick_best_effort(files, options)
        };
        if let Some(files) = picked {
            let deletion_files: Vec<Option<DeletionFile>> = files
                .iter()
                .map(|f| dvs.deletion_file(&partition, bucket, &f.file_name))
                .collect();
            let replaced = dvs.bucket_files(&partition, bucket);
            tasks.push(finish_task(
                partition.clone(),
                bucket,
                (total_buckets > 0).then_some(total_buckets),
                files,
                deletion_files,
                replaced,
                true,
                options,
            ));
        }
    }
    tasks
}

fn pick_best_effort(
    files: Vec<DataFileMeta>,
    options: &AppendCompactOptions,
) -> Option<Vec<DataFileMeta>> {
    let mut window: std::collections::VecDeque<DataFileMeta> = std::collections::VecDeque::new();
    let mut size: i64 = 0;
    for f in files {
        size = size.saturating_add(f.file_size);
        window.push_back(f);
        if window.len() >= options.min_file_num {
            return Some(window.into_iter().collect());
        } else if size >= options.target_file_size.saturating_mul(2)
            && let Some(old) = window.pop_front()
        {
            size = size.saturating_sub(old.file_size);
        }
    }
    None
}

fn pick_full(
    files: Vec<DataFileMeta>,
    options: &AppendCompactOptions,
    has_vector: &dyn Fn(&DataFileMeta) -> bool,
) -> Option<Vec<DataFileMeta>> {
    let force = options.force_rewrite_all_files;
    let dv = options.deletion_vectors;
    if !force && (files.is_empty() || (!dv && files.len() < FULL_COMPACT_MIN_FILE)) {
        return None;
    }
    let files: Vec<DataFileMeta> = if force {
        files
    } else {
        files
            .into_iter()
            .skip_while(|f| f.file_size >= options.compaction_file_size && !has_vector(f))
            .collect()
    };
    if files.is_empty() {
        return None;
    }
    if dv {
        return Some(files);
    }
    let big = files
        .iter()
        .filter(|f| f.file_size >= options.compaction_file_size)
        .count();
    let small = files.len() - big;
    (force || (small > big && files.len() >= FULL_COMPACT_MIN_FILE)).then_some(files)
}

/// The index files a [`dv_index_machine`] wrote, and those it replaced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DvIndexOutput {
    /// The new index files (`ADD`), in write order.
    pub new_index_files: Vec<IndexFileMeta>,
    /// The replaced index files (`DELETE`): the task's [`DvIndexRewrite::replaced`].
    pub deleted_index_files: Vec<IndexFileMeta>,
    /// Paths `Put`, relative to the table root (or full external paths, see
    /// [`crate::write::external`]).
    pub paths: Vec<String>,
}

/// A machine writing the deletion-vector index files of a compaction task: every vector of
/// the task's [`DvIndexRewrite::replaced`] files except those of its input files, laid out as
/// [`DvIndexRewrite::single_file`] says, in new files `index/index-<uuid>-<n>` (uuid from
/// `seed`). `None` when the task has no [`DvIndexRewrite`].
///
/// Rounds: one `Read` of each replaced file (whole file), then one round of one `Put`
/// (create-new) per new file. Vectors are decoded and written again with the task's bitmap
/// width; unaware-bucket files roll as Java's `DeletionVectorIndexFileWriter#writeWithRolling`
/// (a file is closed once it passes the target size), the single file of a fixed bucket holds
/// the vectors in data-file-name order. On a failure it deletes the files it `Put` (one round
/// of `Delete`s, failures ignored) and fails with the first error.
///
/// # Errors
/// IO errors of the reads and puts (a `Put` finding the file already there is `Invalid`:
/// reused seed); `Corrupt` for index files that do not decode with their recorded ranges.
///
/// Source: Java `AppendDeleteFileMaintainer#persist` (unaware bucket) and
/// `BucketedDvMaintainer#writeDeletionVectorsIndex` (fixed buckets).
pub fn dv_index_machine(task: &AppendCompactTask, seed: u64) -> Option<Machine<DvIndexOutput>> {
    task.dv_index.as_ref()?;
    let task = task.clone();
    Some(Machine::once(
        "CompactDvIndexRewrite",
        move |io: Io<DvIndexOutput>| async move {
            match rewrite_task_dv_index(&io, &task, seed).await? {
                Some(out) => Ok(out),
                None => Err(Error::invalid(
                    "a compaction task without a deletion-vector index",
                )),
            }
        },
    ))
}

/// [`dv_index_machine`]'s work within an operation that has its own [`Io`]; `None` when the
/// task has no [`DvIndexRewrite`].
///
/// # Errors
/// As [`dv_index_machine`].
pub async fn rewrite_task_dv_index<T: Send + 'static>(
    io: &Io<T>,
    task: &AppendCompactTask,
    seed: u64,
) -> Result<Option<DvIndexOutput>> {
    let Some(rewrite) = &task.dv_index else {
        return Ok(None);
    };
    let removed: Vec<String> = task.files.iter().map(|f| f.file_name.clone()).collect();
    let mut paths = Vec::new();
    match rewrite_dv_index(io, rewrite, &removed, seed, &mut paths).await {
        Ok(new_index_files) => Ok(Some(DvIndexOutput {
            new_index_files,
            deleted_index_files: rewrite.replaced.clone(),
            paths,
        })),
        Err(e) => {
            let _ = join_all(paths.iter().map(|p| io.delete(p))).await;
            Err(e)
        }
    }
}

async fn rewrite_dv_index<T: Send + 'static>(
    io: &Io<T>,
    rewrite: &DvIndexRewrite,
    removed: &[String],
    seed: u64,
    paths: &mut Vec<String>,
) -> Result<Vec<IndexFileMeta>> {
    let reads = join_all(rewrite.replaced.iter().map(|f| async move {
        let path = f.path_in(INDEX_DIR);
        let bytes = io.read(&path).await;
        (path, bytes)
    }))
    .await;
    let mut kept_per_file: Vec<Vec<(String, DeletionVector)>> = Vec::new();
    for (f, (path, bytes)) in rewrite.replaced.iter().zip(reads) {
        let bytes = bytes?;
        let ranges = f.dv_ranges.clone().unwrap_or_default();
        let kept = decode_deletion_vector_index(&bytes, &ranges, &path, false)?
            .into_iter()
            .filter(|(name, _)| !removed.contains(name))
            .collect();
        kept_per_file.push(kept);
    }
    let chunks: Vec<Vec<(String, DeletionVector)>> = if rewrite.single_file {
        let mut all: Vec<(String, DeletionVector)> = kept_per_file.into_iter().flatten().collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        vec![all]
    } else {
        let mut out = Vec::new();
        for kept in kept_per_file {
            out.extend(roll_index_entries(
                kept,
                rewrite.bitmap64,
                rewrite.target_size_bytes,
            )?);
        }
        out
    };
    let uuid = NameSource::new(seed).uuid();
    let results = join_all(chunks.iter().enumerate().map(|(i, dvs)| {
        let name = format!("{INDEX_FILE_PREFIX}{uuid}-{i}");
        put_dv_index_file(io, INDEX_DIR, name, dvs, rewrite.bitmap64)
    }))
    .await;
    let mut first_error = None;
    let mut files = Vec::new();
    for r in results {
        match r {
            Ok((meta, path)) => {
                paths.push(path);
                files.push(meta);
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(files),
    }
}

/// `Put` (create-new) every file in one round, recording the paths written.
async fn put_all<T>(io: &Io<T>, files: Vec<FileToPut>, paths: &mut Vec<String>) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    // The parts of one streamed file go one after the other; files go at once.
    let results = join_all(
        crate::io::group_by_path(files)
            .into_iter()
            .map(|g| async move {
                let path = g[0].path.clone();
                let completes = crate::io::completes_file(&g);
                let r = crate::io::put_files_in_order(io, g).await;
                (path, completes, r)
            }),
    )
    .await;
    let mut first_error = None;
    for (path, completes, r) in results {
        match r {
            // An upload left open is completed by a later put (or aborted).
            Ok(true) if !completes => {}
            Ok(true) => paths.push(path),
            Ok(false) => {
                first_error.get_or_insert(Error::io(
                    path,
                    IoErrorKind::AlreadyExists,
                    "a new compaction output already exists",
                ));
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
