//! Data-evolution compaction: the field groups of a row-id range (a normal file and the
//! newer partial-column files over exactly the same rows) merged into one normal file.
//!
//! [`plan`] mirrors the planner of Java release-2.0.0's `DataEvolutionCompactCoordinator`
//! (see `../shared/spec/data-evolution.md` §8.1 for the rules; where the release differs from
//! the spec the release is followed, see [`plan`]). Each task ([`DataEvolutionCompactTask`],
//! a serde value) is executed by reading its files through the data-evolution read (the
//! newest field group wins per column) with the latest schema's non-BLOB fields, writing the
//! rows as exactly one normal file, then [`DataEvolutionCompactTask::finish`] gives that file
//! the input range's first row id and the inputs' merged sequence range, so `_ROW_ID` and
//! `_SEQUENCE_NUMBER` read the same before and after, and builds the `COMPACT` commit
//! message.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::commit::{CommitMessage, CompactIncrement};
use crate::compact::CompactionUnitSummary;
use crate::compact::append::{
    AppendDvIndex, DEFAULT_DV_INDEX_FILE_TARGET_BYTES, bool_option, int_option, memory_option,
    unit_summary,
};
use crate::error::{Error, Result};
use crate::format::blob::BlobElementKind;
use crate::scan::DeletionFile;
use crate::spec::{BinaryRow, CoreOptions, DataField, DataFileMeta, ManifestEntry, TableSchema};

/// The options the data-evolution planner reads, with Java's defaults.
///
/// Source: Java `DataEvolutionCompactCoordinator` constructor (`targetFileSize(false)`,
/// `splitOpenFileCost`, `compactionMinFileNum`, `blob-compaction.enabled`,
/// `data-evolution.compaction.rewrite-row-ids`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataEvolutionCompactOptions {
    /// `target-file-size` in bytes (default 256 MiB).
    pub target_file_size: i64,
    /// `source.split.open-file-cost` in bytes (default 4 MiB): the least weight of a file.
    pub open_file_cost: i64,
    /// `compaction.min.file-num` (default 5): normal files a bin needs to become a task.
    pub min_file_num: usize,
    /// `blob-compaction.enabled` (default false): `.blob` files are compacted too.
    #[serde(default)]
    pub compact_blob: bool,
    /// `blob.target-file-size` in bytes (default `target-file-size`): small `.blob` files are
    /// merged up to this size.
    #[serde(default)]
    pub blob_target_file_size: i64,
    /// `data-evolution.compaction.rewrite-row-ids` with `deletion-vectors.enabled`: bins
    /// holding an anchor with a vector are materialized (deleted rows dropped, new row ids).
    #[serde(default)]
    pub materialize_deletions: bool,
    /// `deletion-vectors.enabled`: the vectors of the tasks' anchors move to their outputs
    /// ([`deletion_vectors::rewrite_deletion_vectors`]).
    #[serde(default)]
    pub deletion_vectors: bool,
    /// `deletion-vectors.bitmap64` (default false): rewritten index files use 64-bit bitmaps.
    #[serde(default)]
    pub dv_bitmap64: bool,
    /// `deletion-vector.index-file.target-size` in bytes (default 2 MiB): index files roll
    /// once past it.
    #[serde(default = "default_dv_index_target")]
    pub dv_index_file_target_size: i64,
}

fn default_dv_index_target() -> i64 {
    DEFAULT_DV_INDEX_FILE_TARGET_BYTES
}

impl DataEvolutionCompactOptions {
    /// The options of a table.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming an option that does not parse.
    /// `data-evolution.compaction.rewrite-row-ids` counts only with `deletion-vectors.enabled`
    /// (Java ignores it otherwise).
    pub fn from_options(options: &CoreOptions) -> Result<Self> {
        let target_file_size = memory_option(options, "target-file-size", 256 << 20)?;
        Ok(DataEvolutionCompactOptions {
            target_file_size,
            compact_blob: bool_option(options, "blob-compaction.enabled", false)?,
            blob_target_file_size: memory_option(
                options,
                "blob.target-file-size",
                target_file_size,
            )?,
            open_file_cost: memory_option(options, "source.split.open-file-cost", 4 << 20)?,
            min_file_num: int_option(options, "compaction.min.file-num", 5)?,
            materialize_deletions: bool_option(
                options,
                "data-evolution.compaction.rewrite-row-ids",
                false,
            )? && options.deletion_vectors_enabled()?,
            deletion_vectors: options.deletion_vectors_enabled()?,
            dv_bitmap64: options.deletion_vectors_bitmap64()?,
            dv_index_file_target_size: memory_option(
                options,
                "deletion-vector.index-file.target-size",
                DEFAULT_DV_INDEX_FILE_TARGET_BYTES,
            )?,
        })
    }
}

/// One data-evolution compaction task: the normal files of whole row-id groups of one
/// partition, over one contiguous row-id range, merged into one normal file.
///
/// Source: Java `org.apache.paimon.append.dataevolution.DataEvolutionNormalCompactTask`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataEvolutionCompactTask {
    /// Partition of the files.
    pub partition: BinaryRow,
    /// Normal tasks: the input normal files, row-id groups in row-id order, each group's
    /// files in manifest order. Blob tasks: the `.blob` files of one BLOB column, by first
    /// row id then sequence number.
    pub files: Vec<DataFileMeta>,
    /// What the task rewrites.
    #[serde(default)]
    pub kind: DataEvolutionTaskKind,
    /// Materializing tasks: the deletion vector of each file of `files` (same order, `None`:
    /// no vector), applied when the files are read; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletion_files: Vec<Option<DeletionFile>>,
}

/// The kind of a data-evolution compaction task.
///
/// Source: Java `DataEvolutionCompactTask.TaskType` (`NORMAL`, `BLOB`,
/// `MATERIALIZE_DELETION`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataEvolutionTaskKind {
    /// Normal files of whole row-id groups merged into one normal file (Java
    /// `DataEvolutionNormalCompactTask`).
    #[default]
    Normal,
    /// `.blob` files of one BLOB column over one contiguous row-id range merged into one
    /// `.blob` file (Java `DataEvolutionBlobCompactTask`).
    Blob,
    /// Normal files with their `.blob` files, read with their deletion vectors applied and
    /// written again as new rows (new row ids at commit, no vector left; Java
    /// `DataEvolutionMaterializeDeletionCompactTask`).
    MaterializeDeletions,
}

impl DataEvolutionCompactTask {
    /// The first row id of the task's range (the first input's).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a task without files or a first file without a row id.
    pub fn first_row_id(&self) -> Result<i64> {
        let first = self
            .files
            .first()
            .ok_or_else(|| Error::invalid("a data-evolution compaction task without files"))?;
        first.first_row_id.ok_or_else(|| {
            Error::invalid(format!("data file {} has no first row id", first.file_name))
        })
    }

    /// Rows of the task's range: the sum of the row counts of the first file of each row-id
    /// group (the files of a group cover the same rows).
    pub fn range_row_count(&self) -> i64 {
        let mut rows = 0i64;
        let mut seen: Vec<i64> = Vec::new();
        for f in &self.files {
            let start = f.first_row_id.unwrap_or(i64::MIN);
            if !seen.contains(&start) {
                seen.push(start);
                rows = rows.saturating_add(f.row_count);
            }
        }
        rows
    }

    /// Total bytes of the input files.
    pub fn input_bytes(&self) -> i64 {
        self.files.iter().map(|f| f.file_size.max(0)).sum()
    }

    /// The task as a plan unit (bucket 0, `output_level` `None`, file names sorted).
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the partition does not decode with `partition_fields`.
    pub fn summary(&self, partition_fields: &[DataField]) -> Result<CompactionUnitSummary> {
        unit_summary(&self.partition, 0, &self.files, partition_fields)
    }

    /// The commit message once the rows were written into `outputs`, which must be exactly
    /// one file with the range's row count: it gets the range's first row id and the inputs'
    /// (min of minimum, max of maximum) sequence numbers; `write_cols` is `write_cols` (the
    /// names the file holds, `None` when it holds every field of the latest schema). Bucket
    /// 0, `total_buckets` `None`, as Java's task.
    ///
    /// # Errors
    /// [`Error::Invalid`] when there is not exactly one output, or it does not hold the
    /// range's rows.
    pub fn finish(
        &self,
        outputs: Vec<DataFileMeta>,
        write_cols: Option<Vec<String>>,
    ) -> Result<CommitMessage> {
        let first_row_id = self.first_row_id()?;
        let [mut out]: [DataFileMeta; 1] = outputs.try_into().map_err(|o: Vec<DataFileMeta>| {
            Error::invalid(format!(
                "data-evolution compaction must write exactly one file, wrote {}",
                o.len()
            ))
        })?;
        let rows = self.range_row_count();
        if out.row_count != rows {
            return Err(Error::invalid(format!(
                "data-evolution compaction output {} has {} rows, the input range [{first_row_id}, \
                 {}] has {rows}",
                out.file_name,
                out.row_count,
                first_row_id.saturating_add(rows).saturating_sub(1)
            )));
        }
        out.first_row_id = Some(first_row_id);
        out.min_sequence_number = self
            .files
            .iter()
            .map(|f| f.min_sequence_number)
            .min()
            .unwrap_or(0);
        out.max_sequence_number = self
            .files
            .iter()
            .map(|f| f.max_sequence_number)
            .max()
            .unwrap_or(0);
        out.write_cols = write_cols;
        out.write_cols_sequences = None;
        Ok(CommitMessage {
            partition: self.partition.clone(),
            bucket: 0,
            total_buckets: None,
            data_increment: Default::default(),
            compact_increment: CompactIncrement {
                compact_before: self.files.clone(),
                compact_after: vec![out],
                ..CompactIncrement::default()
            },
        })
    }
}

impl DataEvolutionCompactTask {
    /// The commit message of a [`DataEvolutionTaskKind::MaterializeDeletions`] task whose
    /// live rows were written into `outputs` (normal and `.blob` files as the append writer
    /// writes them: `APPEND` source, no first row id, sequence numbers from 0): the commit
    /// gives them new row ids and the snapshot id as sequence number, as Java's
    /// `RowTrackingCommitUtils` does for such files. Bucket 0, no total buckets.
    pub fn finish_materialized(&self, outputs: Vec<DataFileMeta>) -> CommitMessage {
        CommitMessage {
            partition: self.partition.clone(),
            bucket: 0,
            total_buckets: None,
            data_increment: Default::default(),
            compact_increment: CompactIncrement {
                compact_before: self.files.clone(),
                compact_after: outputs,
                ..CompactIncrement::default()
            },
        }
    }
}

/// How a data-evolution task reads and writes with the latest schema `schema`: the schema the
/// rewriter writes (the BLOB columns that live in `.blob` files left out; BLOB columns stored
/// inline, `blob-descriptor-field` / `blob-view-field`, are normal columns and stay), the
/// names of its fields (the read's projection), and the output's `write_cols` (`None` when
/// nothing was left out, else those names), as Java's normal task does
/// (`DataEvolutionNormalCompactTask`: `fieldNamesInBlobFile(rowType, blobInlineField())`).
///
/// # Errors
/// [`Error::Invalid`] for a table whose columns are all BLOB columns.
pub fn write_layout(
    schema: &TableSchema,
) -> Result<(TableSchema, Vec<String>, Option<Vec<String>>)> {
    let inline = crate::blob::validation::blob_inline_fields(&schema.core_options());
    let mut out = schema.clone();
    out.fields.retain(|f| {
        BlobElementKind::try_from_data_type(&f.data_type).is_err() || inline.contains(&f.name)
    });
    if out.fields.is_empty() {
        return Err(Error::invalid(
            "a data-evolution table whose columns are all BLOB columns has no normal file to \
             compact",
        ));
    }
    let names: Vec<String> = out.fields.iter().map(|f| f.name.clone()).collect();
    let write_cols = (out.fields.len() != schema.fields.len()).then(|| names.clone());
    Ok((out, names, write_cols))
}

/// `[start, end]` (inclusive) of a file's rows; `adjacent` adds one to the end so that files
/// that follow each other without a gap overlap.
fn row_range(f: &DataFileMeta, adjacent: bool) -> Result<(i64, i64)> {
    let start = f.first_row_id.ok_or_else(|| {
        Error::invalid(format!(
            "data file {} of a data-evolution table has no first row id",
            f.file_name
        ))
    })?;
    let end = start
        .checked_add(f.row_count)
        .and_then(|e| if adjacent { Some(e) } else { e.checked_sub(1) })
        .ok_or_else(|| {
            Error::invalid(format!(
                "data file {} has an invalid row range (first row id {start}, {} rows)",
                f.file_name, f.row_count
            ))
        })?;
    Ok((start, end))
}

/// Java `RangeHelper#mergeOverlappingRanges`: items sorted by (start, end), grouped while a
/// start is at most the running end; each group keeps the input order.
fn merge_overlapping<T: Clone>(items: &[(T, (i64, i64))]) -> Vec<Vec<T>> {
    let mut idx: Vec<usize> = (0..items.len()).collect();
    idx.sort_by_key(|i| items[*i].1);
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut end = i64::MIN;
    for i in idx {
        let (s, e) = items[i].1;
        match groups.last_mut() {
            Some(g) if s <= end => {
                g.push(i);
                end = end.max(e);
            }
            _ => {
                groups.push(vec![i]);
                end = e;
            }
        }
    }
    groups
        .into_iter()
        .map(|mut g| {
            g.sort_unstable();
            g.into_iter().map(|i| items[i].0.clone()).collect()
        })
        .collect()
}

/// A bin of row-id groups (Java's `CompactBin`).
#[derive(Default)]
struct Bin {
    files: Vec<DataFileMeta>,
    weight: i64,
    /// An anchor of the bin has a deletion vector (materializing mode only).
    materialize: bool,
}

/// Plan the compaction of a data-evolution table from the live files of one snapshot.
///
/// Per partition (first-seen order): files (normal and `.blob`) are cut into continuous runs
/// (ranges `[first, first + rows]`, so adjacent files join and a gap cuts); in a run the
/// normal files form row-id groups (overlapping ranges, which must be identical); a group
/// weighs Σ max(file size, `open_file_cost`). Walking the groups in row-id order: a group
/// heavier than `target_file_size` flushes the bin, then is flushed alone; otherwise it joins
/// the bin, which is flushed once its weight exceeds `target_file_size`; the bin is flushed at
/// the end of each run. A flushed bin becomes a task when it holds at least `min_file_num`
/// normal files (so a heavy group alone needs that many files too). Every live normal file is
/// a candidate, whatever its size. `.blob` files are not compacted here (see
/// [`plan_with_blobs`] for `blob-compaction.enabled`).
///
/// Differences to `../shared/spec/data-evolution.md` §8 (release-2.0.0 followed): the
/// release has no candidate-range pre-pass (§8.3: its scanner reads every manifest); with
/// deletion vectors and `rewrite-row-ids` the release materializes deletions (see
/// [`plan_with_blobs`]).
///
/// # Errors
/// [`Error::Invalid`] for a file without a first row id, for a row-id group whose files do
/// not all have the same range (Java: "Data files … should be all row id ranges same."), and
/// for `blob-compaction.enabled` (use [`plan_with_blobs`]).
///
/// Source: Java `DataEvolutionCompactCoordinator.CompactPlanner#compactPlan` (release-2.0.0,
/// without vector and deletion materializing).
pub fn plan(
    entries: &[ManifestEntry],
    options: &DataEvolutionCompactOptions,
) -> Result<Vec<DataEvolutionCompactTask>> {
    plan_with_blobs(entries, options, None, None)
}

/// The BLOB columns of a table's schemas, for planning `.blob` compaction: a `.blob` file's
/// column is `write_cols[0]` looked up in the file's own schema (so renames are followed);
/// only columns of the latest schema stored in `.blob` files are compacted.
#[derive(Debug, Clone)]
pub struct BlobFields<'a> {
    schemas: &'a BTreeMap<i64, TableSchema>,
    current: BTreeSet<i32>,
}

impl<'a> BlobFields<'a> {
    /// The BLOB-file columns of `latest` (every BLOB, `ARRAY<BLOB>` and `MAP<K, BLOB>`
    /// column not named by `blob-descriptor-field`, `blob.stored-descriptor-fields` or
    /// `blob-view-field`), resolving files through `schemas` (schema id → schema).
    ///
    /// Source: Java `DataEvolutionCompactCoordinator` (`currentBlobFieldIds`) and
    /// `CompactPlanner#blobFieldId`.
    pub fn new(latest: &TableSchema, schemas: &'a BTreeMap<i64, TableSchema>) -> Self {
        let options = latest.core_options();
        let inline: Vec<String> = [
            "blob-descriptor-field",
            "blob.stored-descriptor-fields",
            "blob-view-field",
        ]
        .iter()
        .filter_map(|k| options.get(k))
        .flat_map(|v| {
            v.split(',')
                .map(|s| s.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
        let current = latest
            .fields
            .iter()
            .filter(|f| {
                BlobElementKind::try_from_data_type(&f.data_type).is_ok()
                    && !inline.contains(&f.name)
            })
            .map(|f| f.id)
            .collect();
        BlobFields { schemas, current }
    }

    /// The field id of a `.blob` file's column.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a file without exactly one write column, or whose column is not
    /// in its schema.
    fn field_id(&self, f: &DataFileMeta) -> Result<i32> {
        let column = match f.write_cols.as_deref() {
            Some([c]) => c,
            _ => {
                return Err(Error::invalid(format!(
                    "blob file {} should name exactly one write column",
                    f.file_name
                )));
            }
        };
        self.schemas
            .get(&f.schema_id)
            .and_then(|s| s.field(column))
            .map(|field| field.id)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "blob file {} holds column {column}, which its schema {} does not have",
                    f.file_name, f.schema_id
                ))
            })
    }
}

/// [`plan`], and with `blob-compaction.enabled` also the `.blob` files (`blob_fields` is then
/// required): after each flushed bin, the `.blob` files belonging to its normal files (a
/// `.blob` file belongs to the normal file with the greatest first row id not after its own,
/// when it starts inside that file's range) are grouped per BLOB column; `.blob` files
/// whose ranges overlap (several versions of the same rows) form one task, and small files
/// (under `blob.target-file-size`) with consecutive ranges are merged in runs of at least two,
/// a run cut once it reaches the target size. When the bin became a normal task, its blob
/// files are grouped together; otherwise each normal file's are grouped alone. Blob tasks of a
/// bin follow its normal task, by first row id.
///
/// # Errors
/// As [`plan`]; [`Error::Invalid`] for blob compaction without `blob_fields` and for `.blob`
/// files whose column cannot be resolved.
///
/// Materializing (`materialize_deletions`, with the planned snapshot's vectors in
/// `deletions`): a row-id group weighs Σ max(⌈file size × rows left / rows⌉,
/// `open_file_cost`), rows left by its anchor's vector; a flushed bin with an anchor that has
/// a vector becomes one [`DataEvolutionTaskKind::MaterializeDeletions`] task of its normal
/// files and their `.blob` files, whatever their number, each with its vector.
///
/// Source: Java `DataEvolutionCompactCoordinator.CompactPlanner#compactPlan`,
/// `#triggerMaterializeTask`, `#triggerNonMaterializeTask`, `#blobFileGroupsToCompact`, `#fileGroupsToCompact`,
/// `#smallFileGroupsToCompact` (release-2.0.0; `BLOB_COMPACT_MIN_FILE_NUM` = 2).
pub fn plan_with_blobs(
    entries: &[ManifestEntry],
    options: &DataEvolutionCompactOptions,
    blob_fields: Option<&BlobFields<'_>>,
    deletions: Option<&AppendDvIndex>,
) -> Result<Vec<DataEvolutionCompactTask>> {
    let deletions = deletions.filter(|_| options.materialize_deletions);
    let blobs = match (options.compact_blob, blob_fields) {
        (false, _) => None,
        (true, Some(b)) => Some(b),
        (true, None) => {
            return Err(Error::invalid(
                "planning .blob compaction needs the table's schemas",
            ));
        }
    };
    let mut partitions: Vec<(BinaryRow, Vec<DataFileMeta>)> = Vec::new();
    for e in entries {
        match partitions.iter_mut().find(|(p, _)| *p == e.partition) {
            Some((_, files)) => files.push(e.file.clone()),
            None => partitions.push((e.partition.clone(), vec![e.file.clone()])),
        }
    }
    let mut tasks = Vec::new();
    for (partition, files) in partitions {
        let keyed = files
            .iter()
            .map(|f| Ok((f.clone(), row_range(f, true)?)))
            .collect::<Result<Vec<_>>>()?;
        for run in merge_overlapping(&keyed) {
            // Blob files by the normal file they belong to (by name).
            let mut owners: BTreeMap<i64, &DataFileMeta> = BTreeMap::new();
            for f in run.iter().filter(|f| !f.is_blob_file()) {
                owners.insert(row_range(f, false)?.0, f);
            }
            let mut blob_files: BTreeMap<String, Vec<DataFileMeta>> = BTreeMap::new();
            if blobs.is_some() || deletions.is_some() {
                for b in run.iter().filter(|f| f.is_blob_file()) {
                    let start = row_range(b, false)?.0;
                    if let Some((_, owner)) = owners.range(..=start).next_back() {
                        let (_, end) = row_range(owner, false)?;
                        if start <= end {
                            blob_files
                                .entry(owner.file_name.clone())
                                .or_default()
                                .push(b.clone());
                        }
                    }
                }
            }
            let normal = run
                .iter()
                .filter(|f| !f.is_blob_file())
                .map(|f| Ok((f.clone(), row_range(f, false)?)))
                .collect::<Result<Vec<_>>>()?;
            let mut bin = Bin::default();
            let flush = |bin: Bin, tasks: &mut Vec<DataEvolutionCompactTask>| {
                flush_bin(
                    &partition,
                    bin,
                    options,
                    blobs,
                    deletions,
                    &blob_files,
                    tasks,
                )
            };
            for group in merge_overlapping(&normal) {
                let first = row_range(&group[0], false)?;
                for f in &group[1..] {
                    if row_range(f, false)? != first {
                        let names: Vec<&str> = group.iter().map(|f| f.file_name.as_str()).collect();
                        return Err(Error::invalid(format!(
                            "data files {names:?} overlap but do not all cover the same row-id \
                             range"
                        )));
                    }
                }
                // Materializing: the anchor's vector, and the weight of the rows left.
                let anchor_deleted = match deletions {
                    None => None,
                    Some(dvs) => {
                        let anchor = group
                            .iter()
                            .min_by(|a, b| {
                                (a.max_sequence_number, &a.file_name)
                                    .cmp(&(b.max_sequence_number, &b.file_name))
                            })
                            .ok_or_else(|| Error::invalid("an empty row-id group"))?;
                        dvs.deletion_file(&partition, 0, &anchor.file_name)
                            .map(|d| (anchor.row_count, d.cardinality))
                    }
                };
                let ratio = match anchor_deleted {
                    Some((rows, Some(deleted))) if rows > 0 => {
                        (rows - deleted).max(0) as f64 / rows as f64
                    }
                    _ => 1.0,
                };
                let weight = group.iter().fold(0i64, |w, f| {
                    let size = (f.file_size as f64 * ratio).ceil() as i64;
                    w.saturating_add(size.max(options.open_file_cost))
                });
                let materialize = anchor_deleted.is_some();
                if weight > options.target_file_size {
                    flush(std::mem::take(&mut bin), &mut tasks)?;
                    flush(
                        Bin {
                            files: group,
                            weight,
                            materialize,
                        },
                        &mut tasks,
                    )?;
                } else {
                    bin.files.extend(group);
                    bin.materialize |= materialize;
                    bin.weight = bin.weight.saturating_add(weight);
                    if bin.weight > options.target_file_size {
                        flush(std::mem::take(&mut bin), &mut tasks)?;
                    }
                }
            }
            flush(bin, &mut tasks)?;
        }
    }
    Ok(tasks)
}

/// Java `CompactPlanner#triggerTask` for one bin: `#triggerMaterializeTask` when an anchor
/// of the bin has a vector (materializing mode), else `#triggerNonMaterializeTask`.
fn flush_bin(
    partition: &BinaryRow,
    bin: Bin,
    options: &DataEvolutionCompactOptions,
    blobs: Option<&BlobFields<'_>>,
    deletions: Option<&AppendDvIndex>,
    blob_files: &BTreeMap<String, Vec<DataFileMeta>>,
    tasks: &mut Vec<DataEvolutionCompactTask>,
) -> Result<()> {
    if bin.files.is_empty() {
        return Ok(());
    }
    let of = |f: &DataFileMeta| blob_files.get(&f.file_name).cloned().unwrap_or_default();
    if bin.materialize
        && let Some(dvs) = deletions
    {
        let mut files = bin.files.clone();
        for f in &bin.files {
            files.extend(of(f));
        }
        let deletion_files = files
            .iter()
            .map(|f| dvs.deletion_file(partition, 0, &f.file_name))
            .collect();
        tasks.push(DataEvolutionCompactTask {
            partition: partition.clone(),
            files,
            kind: DataEvolutionTaskKind::MaterializeDeletions,
            deletion_files,
        });
        return Ok(());
    }
    let normal_task = bin.files.len() >= options.min_file_num;
    let blob_groups: Vec<Vec<DataFileMeta>> = match blobs {
        None => Vec::new(),
        Some(fields) if normal_task => {
            let all: Vec<DataFileMeta> = bin.files.iter().flat_map(of).collect();
            blob_groups(&all, fields, options.blob_target_file_size)?
        }
        Some(fields) => {
            let mut out = Vec::new();
            for f in &bin.files {
                out.extend(blob_groups(&of(f), fields, options.blob_target_file_size)?);
            }
            out
        }
    };
    if normal_task {
        tasks.push(DataEvolutionCompactTask {
            partition: partition.clone(),
            files: bin.files,
            kind: DataEvolutionTaskKind::Normal,
            deletion_files: Vec::new(),
        });
    }
    for files in blob_groups {
        tasks.push(DataEvolutionCompactTask {
            partition: partition.clone(),
            files,
            kind: DataEvolutionTaskKind::Blob,
            deletion_files: Vec::new(),
        });
    }
    Ok(())
}

/// `.blob` files to merge, per BLOB column (first-seen order, current columns only): Java
/// `CompactPlanner#blobFileGroupsToCompact`.
fn blob_groups(
    files: &[DataFileMeta],
    fields: &BlobFields<'_>,
    target: i64,
) -> Result<Vec<Vec<DataFileMeta>>> {
    let mut by_field: Vec<(i32, Vec<DataFileMeta>)> = Vec::new();
    for f in files {
        let id = fields.field_id(f)?;
        if !fields.current.contains(&id) {
            continue;
        }
        match by_field.iter_mut().find(|(i, _)| *i == id) {
            Some((_, v)) => v.push(f.clone()),
            None => by_field.push((id, vec![f.clone()])),
        }
    }
    let mut out = Vec::new();
    for (_, files) in by_field {
        out.extend(field_blob_groups(files, target)?);
    }
    Ok(out)
}

/// Java `CompactPlanner#fileGroupsToCompact` for the `.blob` files of one column.
fn field_blob_groups(mut files: Vec<DataFileMeta>, target: i64) -> Result<Vec<Vec<DataFileMeta>>> {
    const MIN_FILES: usize = 2;
    files.sort_by_key(|f| (f.first_row_id, f.max_sequence_number));
    let keyed = files
        .iter()
        .map(|f| Ok((f.clone(), row_range(f, false)?)))
        .collect::<Result<Vec<_>>>()?;
    let mut result: Vec<Vec<DataFileMeta>> = Vec::new();
    let mut small: Vec<DataFileMeta> = Vec::new();
    for mut group in merge_overlapping(&keyed) {
        if group.len() >= MIN_FILES {
            group.sort_by_key(|f| (f.first_row_id, f.max_sequence_number));
            result.push(group);
        } else {
            small.extend(group.into_iter().take(1));
        }
    }
    // Runs of consecutive small files.
    let emit = |run: &mut Vec<DataFileMeta>, result: &mut Vec<Vec<DataFileMeta>>| {
        if run.len() >= MIN_FILES {
            let mut chunk: Vec<DataFileMeta> = Vec::new();
            let mut size = 0i64;
            for f in run.iter() {
                chunk.push(f.clone());
                size = size.saturating_add(f.file_size);
                if size >= target && chunk.len() >= MIN_FILES {
                    result.push(std::mem::take(&mut chunk));
                    size = 0;
                }
            }
            if chunk.len() >= MIN_FILES {
                result.push(chunk);
            }
        }
        run.clear();
    };
    let mut run: Vec<DataFileMeta> = Vec::new();
    let mut expected: Option<i64> = None;
    for f in small {
        if f.file_size >= target {
            emit(&mut run, &mut result);
            expected = None;
            continue;
        }
        let (start, _) = row_range(&f, false)?;
        if !run.is_empty() && Some(start) != expected {
            emit(&mut run, &mut result);
        }
        expected = Some(start.saturating_add(f.row_count));
        run.push(f);
    }
    emit(&mut run, &mut result);
    result.sort_by_key(|g| g[0].first_row_id);
    Ok(result)
}

pub mod blob;
pub mod deletion_vectors;

#[cfg(test)]
mod tests;
