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
//! Determinism: where Java iterates a `HashSet` (the unaware coordinator's files of equal
//! size), ties are broken by the order the files came in (manifest order).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

use crate::commit::{CommitMessage, CompactIncrement};
use crate::compact::CompactionUnitSummary;
use crate::error::{Error, Result};
use crate::io::{Io, IoErrorKind, Machine, PutMode, Step, Work};
use crate::read::{ReadContext, read_split};
use crate::scan::DataSplit;
use crate::spec::options::parse_memory_size;
use crate::spec::{
    BinaryRow, CoreOptions, DataField, DataFileMeta, DataType, Datum, FileSource, ManifestEntry,
    TableSchema,
};
use crate::write::{FileToPut, TableWrite, WriteOptions, WriteRestore};

/// Files a full compaction of a fixed bucket needs at least (without deletion vectors).
///
/// Source: Java `BucketedAppendCompactManager.FULL_COMPACT_MIN_FILE`.
pub const FULL_COMPACT_MIN_FILE: usize = 3;

/// The options append compaction reads, with Java's defaults.
///
/// Source: Java `org.apache.paimon.CoreOptions` (`targetFileSize(false)`,
/// `compactionFileSize(false)`, `compactionMinFileNum`, `splitOpenFileCost`,
/// `compaction.force-rewrite-all-files`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl AppendCompactTask {
    /// The commit message of this task once its rows were written into `outputs` (in write
    /// order): the inputs are `compact_before`, the outputs `compact_after` with file source
    /// `COMPACT` and sequence numbers counted on from the first input's minimum, one per row,
    /// as Java's `BaseAppendFileStoreWrite#compactRewrite` counts them.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the task has no input file or an output has a negative row
    /// count.
    pub fn finish(&self, outputs: Vec<DataFileMeta>) -> Result<CommitMessage> {
        let first = self
            .files
            .first()
            .ok_or_else(|| Error::invalid("an append compaction task without input files"))?;
        let mut next = first.min_sequence_number;
        let mut after = Vec::with_capacity(outputs.len());
        for mut f in outputs {
            if f.row_count < 0 {
                return Err(Error::invalid(format!(
                    "compaction output {} has row count {}",
                    f.file_name, f.row_count
                )));
            }
            f.min_sequence_number = next;
            f.max_sequence_number = next.saturating_add(f.row_count).saturating_sub(1);
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

/// Partition values as a JSON object keyed by partition key: integers and booleans as JSON
/// values, NULL as `null`, other types as their string form (the plan JSON's convention).
///
/// # Errors
/// [`Error::Corrupt`] when the row does not decode with `fields`' types.
pub fn partition_json(
    partition: &BinaryRow,
    fields: &[DataField],
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let mut out = serde_json::Map::new();
    if fields.is_empty() {
        return Ok(out);
    }
    let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
    for (f, v) in fields.iter().zip(partition.fields(&types)?) {
        let j = match &v {
            Datum::Null => serde_json::Value::Null,
            Datum::Boolean(b) => serde_json::Value::Bool(*b),
            Datum::TinyInt(x) => serde_json::Value::from(*x),
            Datum::SmallInt(x) => serde_json::Value::from(*x),
            Datum::Int(x) => serde_json::Value::from(*x),
            Datum::BigInt(x) => serde_json::Value::from(*x),
            other => other
                .cast_to_string(&f.data_type)
                .map_or(serde_json::Value::Null, serde_json::Value::String),
        };
        out.insert(f.name.clone(), j);
    }
    Ok(out)
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
/// first-seen order), the files smaller than `compaction_file_size` sorted by size (ties in
/// input order) are packed into bins; a bin becomes a task once it holds more than one file
/// and its files weigh (size + `open_file_cost` each) at least twice `target_file_size`; the
/// last bin becomes a task when it holds at least `min_file_num` files.
///
/// `entries` are the live files of one snapshot (deletion vectors are not considered: the
/// caller refuses tables with deletion vectors).
///
/// Source: Java `AppendCompactCoordinator` (`shouldCompact`, `SubCoordinator#pack`,
/// `FileBin`), one batch run: the age-based compaction of a streaming coordinator never
/// triggers in a single run.
pub fn plan_unaware(
    entries: &[ManifestEntry],
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
        let mut small: Vec<DataFileMeta> = files
            .into_iter()
            .filter(|f| f.file_size < options.compaction_file_size)
            .collect();
        // Stable: equal sizes keep their input order.
        small.sort_by_key(|f| f.file_size);
        let mut bin: Vec<DataFileMeta> = Vec::new();
        let mut bin_weight: i64 = 0;
        for f in small {
            bin_weight =
                bin_weight.saturating_add(f.file_size.saturating_add(options.open_file_cost));
            bin.push(f);
            if bin.len() > 1 && bin_weight >= options.target_file_size.saturating_mul(2) {
                tasks.push(unaware_task(&partition, std::mem::take(&mut bin)));
                bin_weight = 0;
            }
        }
        // Java's task refuses a single input file (`AppendCompactTask#doCompact`); with
        // `compaction.min.file-num` ≤ 1 such a bin is left alone here instead.
        if bin.len() >= options.min_file_num.max(2) {
            tasks.push(unaware_task(&partition, bin));
        }
    }
    tasks
}

fn unaware_task(partition: &BinaryRow, files: Vec<DataFileMeta>) -> AppendCompactTask {
    AppendCompactTask {
        partition: partition.clone(),
        bucket: 0,
        total_buckets: None,
        files,
    }
}

/// Plan the compaction of a fixed-bucket append table: per (partition, bucket), the files
/// ordered by minimum sequence number, then
///
/// * `full = false`: Java's best-effort pick: walk the files, keeping a window; the window
///   is a task as soon as it holds `min_file_num` files; when its size reaches twice
///   `target_file_size` first, its oldest file leaves it. No task when the walk ends first.
/// * `full = true`: Java's full compaction: no task with fewer than
///   [`FULL_COMPACT_MIN_FILE`] files (unless `force_rewrite_all_files`); leading files of at
///   least `compaction_file_size` are skipped; the rest is one task when its small files
///   outnumber its big ones and it holds at least [`FULL_COMPACT_MIN_FILE`] files (or always
///   with `force_rewrite_all_files`).
///
/// Source: Java `BucketedAppendCompactManager#pickCompactBefore` and `FullCompactTask`
/// (without deletion vectors).
pub fn plan_bucketed(
    entries: &[ManifestEntry],
    options: &AppendCompactOptions,
    full: bool,
) -> Vec<AppendCompactTask> {
    let mut tasks = Vec::new();
    for ((partition, bucket, total_buckets), mut files) in group_by_bucket(entries) {
        files.sort_by_key(|f| f.min_sequence_number);
        let picked = if full {
            pick_full(files, options)
        } else {
            pick_best_effort(files, options)
        };
        if let Some(files) = picked {
            tasks.push(AppendCompactTask {
                partition,
                bucket,
                total_buckets: (total_buckets > 0).then_some(total_buckets),
                files,
            });
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
) -> Option<Vec<DataFileMeta>> {
    let force = options.force_rewrite_all_files;
    if !force && (files.is_empty() || files.len() < FULL_COMPACT_MIN_FILE) {
        return None;
    }
    let mut files: Vec<DataFileMeta> = if force {
        files
    } else {
        files
            .into_iter()
            .skip_while(|f| f.file_size >= options.compaction_file_size)
            .collect()
    };
    let big = files
        .iter()
        .filter(|f| f.file_size >= options.compaction_file_size)
        .count();
    let small = files.len() - big;
    if force || (small > big && files.len() >= FULL_COMPACT_MIN_FILE) {
        if files.is_empty() {
            return None;
        }
        Some(std::mem::take(&mut files))
    } else {
        None
    }
}

/// Writes the rows a compaction task read into new data files of one (partition, bucket):
/// the table's writer ([`TableWrite`]) over the latest schema, whose files are then described
/// by [`AppendCompactTask::finish`] or
/// [`DataEvolutionCompactTask::finish`](crate::compact::data_evolution::DataEvolutionCompactTask::finish).
///
/// Driving order: [`CompactRewriter::write`] each batch the task's read emits, `Put` (create
/// new) the files of [`CompactRewriter::take_files`] after each call, then
/// [`CompactRewriter::finish`] and `Put` the last [`CompactRewriter::take_files`].
///
/// Source: the rewriters of Java `BaseAppendFileStoreWrite#compactRewrite` (append) and
/// `DataEvolutionNormalCompactTask#doCompact` (one output file).
#[derive(Debug)]
pub struct CompactRewriter {
    write: TableWrite,
    partition: BinaryRow,
    bucket: i32,
}

impl CompactRewriter {
    /// A rewriter for files of `partition` and `bucket` of a table whose latest schema is
    /// `schema`. `single_file`: never roll (data-evolution tasks write exactly one file, as
    /// Java forces with `target-file-size` = 99999 G). `total_buckets`: the bucket count of the
    /// inputs (fixed-bucket tables; the writer refuses a table whose `bucket` changed since).
    ///
    /// # Errors
    /// As [`TableWrite::try_new`] (e.g. `Unsupported` for layouts the writer cannot write).
    pub fn try_new(
        mut schema: TableSchema,
        partition: BinaryRow,
        bucket: i32,
        total_buckets: Option<i32>,
        single_file: bool,
        options: WriteOptions,
    ) -> Result<Self> {
        if single_file {
            let huge = (i64::MAX / 4).to_string();
            schema
                .options
                .insert("target-file-size".into(), huge.clone());
            schema.options.insert("blob.target-file-size".into(), huge);
        }
        let restore = WriteRestore {
            total_buckets,
            ..WriteRestore::default()
        };
        Ok(CompactRewriter {
            write: TableWrite::try_new(schema, restore, options)?,
            partition,
            bucket,
        })
    }

    /// Columns the input batches must have (by name).
    pub fn input_schema(&self) -> arrow_schema::SchemaRef {
        self.write.input_schema()
    }

    /// Write rows read from the task's files.
    ///
    /// # Errors
    /// As [`TableWrite::write`].
    pub fn write(&mut self, batch: &arrow_array::RecordBatch) -> Result<()> {
        self.write.write(batch)
    }

    /// Files completed so far, to `Put` (create-new) now.
    pub fn take_files(&mut self) -> Vec<FileToPut> {
        self.write.take_files()
    }

    /// Close the open file and return the written files' metadata in write order.
    ///
    /// # Errors
    /// Encoding errors; [`Error::Invalid`] when rows landed in another partition or bucket
    /// than the task's (rows of a fixed bucket always hash back to it while the bucket count
    /// is unchanged).
    pub fn finish(&mut self) -> Result<Vec<DataFileMeta>> {
        let mut out = Vec::new();
        for m in self.write.prepare_commit()? {
            if m.partition != self.partition || m.bucket != self.bucket {
                return Err(Error::invalid(format!(
                    "compaction of bucket {} rewrote rows into bucket {} of another partition \
                     or bucket",
                    self.bucket, m.bucket
                )));
            }
            out.extend(m.data_increment.new_files);
        }
        Ok(out)
    }
}

/// The files one compaction rewrite wrote (see [`rewrite_machine`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewriteOutput {
    /// Metadata of the new files, in write order (before [`AppendCompactTask::finish`] or
    /// [`DataEvolutionCompactTask::finish`](crate::compact::data_evolution::DataEvolutionCompactTask::finish)).
    pub files: Vec<DataFileMeta>,
    /// Paths `Put`, relative to the table root.
    pub paths: Vec<String>,
}

/// A machine running one compaction rewrite: it reads `split` with `ctx` (the read side's
/// [`read_split`] machine, whose rounds become this machine's rounds unchanged), writes the
/// rows through `rewriter` and `Put`s (create-new) each file as it completes, then emits one
/// [`RewriteOutput`].
///
/// Rounds: the read's rounds (footers, column chunks...), interleaved with one round of one
/// `Put` per completed file. On any failure it deletes the files it already `Put` (one round
/// of `Delete`s, failures of which are ignored) and fails with the first error.
pub fn rewrite_machine(
    ctx: Arc<ReadContext>,
    split: DataSplit,
    rewriter: CompactRewriter,
) -> Machine<RewriteOutput> {
    Machine::once("CompactRewrite", move |io: Io<RewriteOutput>| async move {
        let mut rewriter = rewriter;
        let mut paths: Vec<String> = Vec::new();
        let result = rewrite(&io, ctx, split, &mut rewriter, &mut paths).await;
        match result {
            Ok(files) => Ok(RewriteOutput { files, paths }),
            Err(e) => {
                let _ = join_all(paths.iter().map(|p| io.delete(p))).await;
                Err(e)
            }
        }
    })
}

async fn rewrite(
    io: &Io<RewriteOutput>,
    ctx: Arc<ReadContext>,
    split: DataSplit,
    rewriter: &mut CompactRewriter,
    paths: &mut Vec<String>,
) -> Result<Vec<DataFileMeta>> {
    let mut read = read_split(ctx, split);
    loop {
        match read.step()? {
            Step::NeedIo(requests) => {
                let answers = join_all(requests.into_iter().map(|r| async move {
                    let answer = io.call(r.op).await;
                    (r.id, answer)
                }))
                .await;
                for (id, answer) in answers {
                    read.provide(id, answer)?;
                }
            }
            Step::Emit(batch) => {
                if batch.num_rows() > 0 {
                    rewriter.write(&batch)?;
                    put_all(io, rewriter.take_files(), paths).await?;
                }
            }
            // The nested read runs with parallelism 1: its work runs inline.
            Step::Work(items) => items.into_iter().for_each(Work::run),
            Step::Wait => {}
            Step::Done => break,
        }
    }
    let files = rewriter.finish()?;
    put_all(io, rewriter.take_files(), paths).await?;
    Ok(files)
}

/// `Put` (create-new) every file in one round, recording the paths written.
async fn put_all(
    io: &Io<RewriteOutput>,
    files: Vec<FileToPut>,
    paths: &mut Vec<String>,
) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let results = join_all(files.into_iter().map(|f| async move {
        let r = io.put(&f.path, f.bytes, PutMode::CreateNew).await;
        (f.path, r)
    }))
    .await;
    let mut first_error = None;
    for (path, r) in results {
        match r {
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
