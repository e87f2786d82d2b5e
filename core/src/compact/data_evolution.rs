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

use serde::{Deserialize, Serialize};

use crate::commit::{CommitMessage, CompactIncrement};
use crate::compact::CompactionUnitSummary;
use crate::compact::append::{bool_option, int_option, memory_option, unit_summary};
use crate::error::{Error, Result};
use crate::format::blob::BlobElementKind;
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
}

impl DataEvolutionCompactOptions {
    /// The options of a table.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming an option that does not parse; [`Error::Unsupported`] for
    /// `blob-compaction.enabled = true` (compacting `.blob` files is not implemented) and for
    /// `data-evolution.compaction.rewrite-row-ids = true` together with
    /// `deletion-vectors.enabled = true` (Java's materializing of deletions, which rewrites row
    /// ids; without deletion vectors Java ignores the option, and so does this planner).
    pub fn from_options(options: &CoreOptions) -> Result<Self> {
        if bool_option(options, "blob-compaction.enabled", false)? {
            return Err(Error::unsupported(
                "data-evolution compaction of .blob files ('blob-compaction.enabled' = true)",
            ));
        }
        if bool_option(options, "data-evolution.compaction.rewrite-row-ids", false)?
            && options.deletion_vectors_enabled()?
        {
            return Err(Error::unsupported(
                "data-evolution compaction that materializes deletion vectors and rewrites row \
                 ids ('data-evolution.compaction.rewrite-row-ids' = true)",
            ));
        }
        Ok(DataEvolutionCompactOptions {
            target_file_size: memory_option(options, "target-file-size", 256 << 20)?,
            open_file_cost: memory_option(options, "source.split.open-file-cost", 4 << 20)?,
            min_file_num: int_option(options, "compaction.min.file-num", 5)?,
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
    /// The input normal files: row-id groups in row-id order, each group's files in manifest
    /// order.
    pub files: Vec<DataFileMeta>,
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

/// How a data-evolution task reads and writes with the latest schema `schema`: the schema the
/// rewriter writes (the BLOB columns, which live in `.blob` files, left out), the names of its
/// fields (the read's projection), and the output's `write_cols` (`None` when nothing was left
/// out, else those names), as Java's normal task does.
///
/// # Errors
/// [`Error::Invalid`] for a table whose columns are all BLOB columns.
pub fn write_layout(
    schema: &TableSchema,
) -> Result<(TableSchema, Vec<String>, Option<Vec<String>>)> {
    let mut out = schema.clone();
    out.fields
        .retain(|f| BlobElementKind::try_from_data_type(&f.data_type).is_err());
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
/// a candidate, whatever its size. `.blob` files are never compacted (see
/// [`DataEvolutionCompactOptions::from_options`]).
///
/// Differences to `../shared/spec/data-evolution.md` §8 (release-2.0.0 followed): the
/// release has no candidate-range pre-pass (§8.3: its scanner reads every manifest); with
/// deletion vectors and `rewrite-row-ids` the release materializes deletions (refused here).
///
/// # Errors
/// [`Error::Invalid`] for a file without a first row id and for a row-id group whose files do
/// not all have the same range (Java: "Data files … should be all row id ranges same.").
///
/// Source: Java `DataEvolutionCompactCoordinator.CompactPlanner#compactPlan` (release-2.0.0,
/// without blob, vector and deletion materializing).
pub fn plan(
    entries: &[ManifestEntry],
    options: &DataEvolutionCompactOptions,
) -> Result<Vec<DataEvolutionCompactTask>> {
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
            let normal = run
                .iter()
                .filter(|f| !f.is_blob_file())
                .map(|f| Ok((f.clone(), row_range(f, false)?)))
                .collect::<Result<Vec<_>>>()?;
            let mut bin = Bin::default();
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
                let weight = group.iter().fold(0i64, |w, f| {
                    w.saturating_add(f.file_size.max(options.open_file_cost))
                });
                if weight > options.target_file_size {
                    flush(&partition, std::mem::take(&mut bin), options, &mut tasks);
                    flush(
                        &partition,
                        Bin {
                            files: group,
                            weight,
                        },
                        options,
                        &mut tasks,
                    );
                } else {
                    bin.files.extend(group);
                    bin.weight = bin.weight.saturating_add(weight);
                    if bin.weight > options.target_file_size {
                        flush(&partition, std::mem::take(&mut bin), options, &mut tasks);
                    }
                }
            }
            flush(&partition, bin, options, &mut tasks);
        }
    }
    Ok(tasks)
}

fn flush(
    partition: &BinaryRow,
    bin: Bin,
    options: &DataEvolutionCompactOptions,
    tasks: &mut Vec<DataEvolutionCompactTask>,
) {
    if !bin.files.is_empty() && bin.files.len() >= options.min_file_num {
        tasks.push(DataEvolutionCompactTask {
            partition: partition.clone(),
            files: bin.files,
        });
    }
}

#[cfg(test)]
mod tests;
