//! Compacting append and data-evolution tables as operations over one [`Io`]: the plan
//! ([`plan_append_job`]: the latest snapshot's scan plan, then the append or data-evolution
//! planner) and the rewrite of every task ([`run_append_job`]), which a host commits as one
//! `COMPACT` snapshot. The native host's `compact` and the browser's one-shot
//! [`crate::job::compact_job`] both run these.
//!
//! ```text
//! plan_append_job      scan plan of the latest snapshot (files, schemas, options), the
//!                      task filter, the deletion-vector index → the core planner
//! run_append_job       per task: read its files (the read_split machine: schema evolution,
//!                      field groups, deletion vectors) → CompactRewriter (latest schema) →
//!                      Put (create-new); tasks whose inputs have deletion vectors write their
//!                      index files again without them → task.finish → CommitMessage
//! ```
//!
//! Planners: unaware-bucket append tables follow Java's `AppendCompactCoordinator`,
//! fixed-bucket append tables Java's `BucketedAppendCompactManager` (its full compaction with
//! `full`), data-evolution tables Java release-2.0.0's `DataEvolutionCompactCoordinator`. See
//! [`crate::compact::append`] and [`crate::compact::data_evolution`].
//!
//! Row-tracking append tables (`row-tracking.enabled` without data evolution; Java allows them
//! only with `bucket` = -1) are planned as other unaware-bucket append tables; their tasks read
//! `_ROW_ID` and `_SEQUENCE_NUMBER` with the rows and write both into the outputs, so no row
//! changes its id or sequence number (see [`CompactRewriter::try_new_row_tracking`]).
//!
//! Data-evolution tables with deletion vectors: the tasks read their rows without the vectors
//! (row ids stay), then the anchors' vectors move to the outputs in one more commit message
//! per partition ([`data_evolution::deletion_vectors`]).
//!
//! With `blob-compaction.enabled`, `.blob` files are planned and merged too
//! ([`data_evolution::plan_with_blobs`], [`data_evolution::blob`]).
//!
//! With `data-evolution.compaction.rewrite-row-ids` (and deletion vectors), bins with
//! deleted rows are materialized as Java 2.0 does: read with their vectors, written as new
//! rows (every column, BLOB columns to `.blob` files) that the commit gives new row ids, the
//! vectors dropped.
//!
//! Not supported (the error says so): primary-key tables.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::commit::CommitMessage;
use crate::compact::append::{
    AppendCompactOptions as CompactSettings, AppendCompactTask, AppendDvIndex, CompactRewriter,
    plan_bucketed, plan_unaware, rewrite_split, rewrite_task_dv_index,
};
use crate::compact::data_evolution::{
    self, BlobFields, DataEvolutionCompactOptions, DataEvolutionCompactTask, DataEvolutionTaskKind,
    write_layout,
};
use crate::error::{Error, Result};
use crate::io::Io;
use crate::read::ReadContext;
use crate::scan::planner::{ScanRequest, plan_scan, read_index_entries};
use crate::scan::{DataSplit, DeletionFile, Plan, TableKind};
use crate::spec::partition::partition_values;
use crate::spec::special_fields::row_tracking_fields;
use crate::spec::{BinaryRow, CoreOptions, DataField, DataFileMeta, FileKind, ManifestEntry};
use crate::util::NameSource;
use crate::write::WriteOptions;

/// What [`plan_append_job`] plans.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppendJobOptions {
    /// Full compaction (fixed-bucket append tables: Java's full compaction of each bucket;
    /// no effect on unaware-bucket and data-evolution tables, whose Java planners have no full
    /// mode).
    pub full: bool,
    /// Only partitions whose values match every `(key, value)` pair (values as in partition
    /// directory names, e.g. `("dt", "2024-01-01")`); `None`: every partition.
    pub partition: Option<Vec<(String, String)>>,
    /// Only this bucket (unaware-bucket and data-evolution tables have only bucket 0).
    pub bucket: Option<i32>,
}

/// The tasks of one table kind.
#[derive(Debug, Clone)]
pub enum AppendJobTasks {
    /// Append tables (unaware or fixed bucket).
    Append(Vec<AppendCompactTask>),
    /// Data-evolution tables.
    DataEvolution(Vec<DataEvolutionCompactTask>),
}

impl AppendJobTasks {
    /// The number of tasks.
    pub fn len(&self) -> usize {
        match self {
            AppendJobTasks::Append(t) => t.len(),
            AppendJobTasks::DataEvolution(t) => t.len(),
        }
    }

    /// No task: nothing to compact.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A plan with the scan plan it was made from.
#[derive(Debug, Clone)]
pub struct AppendJobPlan {
    /// The scan plan of the latest snapshot.
    pub scan: Plan,
    /// The tasks.
    pub tasks: AppendJobTasks,
    /// Bucket directory of each (partition, bucket) of the scan.
    pub bucket_paths: BTreeMap<(BinaryRow, i32), String>,
    /// The partition key fields.
    pub partition_fields: Vec<DataField>,
    /// Data-evolution tables: the planner's options and the snapshot's deletion vectors,
    /// which [`run_append_job`] moves to the outputs
    /// ([`data_evolution::deletion_vectors::rewrite_deletion_vectors`]).
    pub data_evolution: Option<(DataEvolutionCompactOptions, AppendDvIndex)>,
}

/// Plan the compaction of the latest snapshot of the append or data-evolution table at the
/// IO root (nothing is written).
///
/// # Errors
/// `Unsupported` for the table kinds and features listed in the module docs; `Invalid` for
/// bad options (named) and a partition filter on a column that is not a partition key; read
/// errors of the scan.
pub async fn plan_append_job<T>(io: &Io<T>, opts: &AppendJobOptions) -> Result<AppendJobPlan> {
    let scan = plan_scan(io, &ScanRequest::default()).await?;
    let options = CoreOptions::new(scan.options.clone());
    let de = options.data_evolution_enabled()?;
    let dv_enabled = options.deletion_vectors_enabled()?;
    match scan.table_kind {
        TableKind::PrimaryKey => {
            return Err(Error::unsupported(
                "append compaction of a primary-key table (use primary-key compaction)",
            ));
        }
        TableKind::Append if options.row_tracking_enabled()? && options.bucket()? != -1 => {
            return Err(Error::invalid(
                "a row-tracking table needs 'bucket' = -1 (Java refuses other bucket modes)",
            ));
        }
        _ => {}
    }
    let partition_fields: Vec<DataField> = scan
        .schema
        .partition_keys
        .iter()
        .map(|k| {
            scan.schema
                .field(k)
                .cloned()
                .ok_or_else(|| Error::invalid(format!("partition key '{k}' is not a column")))
        })
        .collect::<Result<_>>()?;
    if let Some(filter) = &opts.partition
        && let Some((k, _)) = filter
            .iter()
            .find(|(k, _)| !scan.schema.partition_keys.contains(k))
    {
        return Err(Error::invalid(format!(
            "'{k}' is not a partition key of the table (partition keys: {})",
            scan.schema.partition_keys.join(", ")
        )));
    }
    let naming = options.partition_naming()?;
    let mut entries: Vec<ManifestEntry> = Vec::new();
    let mut bucket_paths = BTreeMap::new();
    let mut selected: BTreeMap<(BinaryRow, i32), bool> = BTreeMap::new();
    for split in &scan.splits {
        let key = (split.partition.clone(), split.bucket);
        let keep = match selected.get(&key) {
            Some(k) => *k,
            None => {
                let k = opts.bucket.is_none_or(|b| b == split.bucket)
                    && match &opts.partition {
                        None => true,
                        Some(filter) => {
                            let values =
                                partition_values(&partition_fields, &split.partition, &naming)?;
                            filter
                                .iter()
                                .all(|(k, v)| values.iter().any(|(pk, pv)| pk == k && pv == v))
                        }
                    };
                selected.insert(key.clone(), k);
                k
            }
        };
        if !keep {
            continue;
        }
        // Vectors of a table whose `deletion-vectors.enabled` was turned off are not
        // compacted (the planners would not see them, and the rows they delete would return).
        if !dv_enabled
            && let Some(deletions) = &split.deletion_files
            && let Some((i, _)) = deletions.iter().enumerate().find(|(_, d)| d.is_some())
        {
            let name = split
                .data_files
                .get(i)
                .map_or("?", |f| f.file_name.as_str());
            return Err(Error::unsupported(format!(
                "compacting data files with deletion vectors (data file {name} has one) while \
                 'deletion-vectors.enabled' is false"
            )));
        }
        bucket_paths
            .entry(key)
            .or_insert_with(|| split.bucket_path.clone());
        for f in &split.data_files {
            entries.push(ManifestEntry {
                kind: FileKind::Add,
                partition: split.partition.clone(),
                bucket: split.bucket,
                total_buckets: split.total_buckets.unwrap_or(-1),
                file: f.clone(),
            });
        }
    }
    let index_entries = match &scan.snapshot {
        Some(snapshot) if dv_enabled && snapshot.index_manifest.is_some() => {
            read_index_entries(io, snapshot).await?
        }
        _ => Vec::new(),
    };
    let mut data_evolution = None;
    let tasks = if de {
        let settings = DataEvolutionCompactOptions::from_options(&options)?;
        let blob_fields = BlobFields::new(&scan.schema, &scan.schemas);
        let dvs = AppendDvIndex::try_new(&index_entries, &options, true)?;
        let tasks =
            data_evolution::plan_with_blobs(&entries, &settings, Some(&blob_fields), Some(&dvs))?;
        // Materializing changes row ids, which global indexes point at: Java drops them; not
        // done here.
        if tasks
            .iter()
            .any(|t| t.kind == DataEvolutionTaskKind::MaterializeDeletions)
            && let Some(e) = index_entries
                .iter()
                .find(|e| e.kind == FileKind::Add && e.index_file.global_index.is_some())
        {
            return Err(Error::unsupported(format!(
                "materializing deletions ('data-evolution.compaction.rewrite-row-ids') of a \
                 table with global index files (index file {})",
                e.index_file.file_name
            )));
        }
        data_evolution = Some((settings, dvs));
        AppendJobTasks::DataEvolution(tasks)
    } else {
        let settings = CompactSettings::from_options(&options)?;
        let bucketed = options.bucket()? > 0;
        let dvs = AppendDvIndex::try_new(&index_entries, &options, !bucketed)?;
        if bucketed {
            AppendJobTasks::Append(plan_bucketed(&entries, &dvs, &settings, opts.full))
        } else {
            AppendJobTasks::Append(plan_unaware(&entries, &dvs, &settings))
        }
    };
    Ok(AppendJobPlan {
        scan,
        tasks,
        bucket_paths,
        partition_fields,
        data_evolution,
    })
}

/// One task to read and rewrite.
struct Job<'a> {
    partition: &'a BinaryRow,
    bucket: i32,
    total_buckets: Option<i32>,
    files: &'a [DataFileMeta],
    /// The deletion vectors of `files` (same order), empty when none has one.
    deletion_files: &'a [Option<DeletionFile>],
    data_evolution: bool,
    /// Row-tracking append table: the rows keep their `_ROW_ID` and `_SEQUENCE_NUMBER` in
    /// the outputs ([`CompactRewriter::try_new_row_tracking`]).
    row_tracking: bool,
}

/// Run every task of `plan` in plan order: the commit messages, one per task. The seeds of
/// the outputs' names are drawn from `seeds`; `time_millis` is their creation time. Every
/// path written (data and index files) is added to `written`, also on failure (a failed
/// rewrite deletes its own files first), so the caller can delete them when the commit fails.
///
/// # Errors
/// Read, write and store errors of the tasks.
pub async fn run_append_job<T: Send + 'static>(
    io: &Io<T>,
    plan: &AppendJobPlan,
    seeds: &mut NameSource,
    time_millis: i64,
    written: &mut Vec<String>,
) -> Result<Vec<CommitMessage>> {
    let schema = &plan.scan.schema;
    let mut messages = Vec::new();
    match &plan.tasks {
        AppendJobTasks::Append(tasks) => {
            // Row-tracking tables: read every field with `_ROW_ID` and `_SEQUENCE_NUMBER`
            // (Java `AppendOnlyFileStore#newWrite`: `SpecialFields.rowTypeWithRowTracking`).
            let row_tracking =
                CoreOptions::new(plan.scan.options.clone()).row_tracking_enabled()?;
            let names = row_tracking.then(|| {
                let mut names: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
                names.extend(row_tracking_fields().map(|f| f.name));
                names
            });
            let ctx = {
                let mut c = ReadContext::try_new(&plan.scan, names.as_deref(), None, None, 0)?;
                // Stored blob descriptors are rewritten as stored.
                c.descriptor_columns.clear();
                Arc::new(c)
            };
            for task in tasks {
                let job = Job {
                    partition: &task.partition,
                    bucket: task.bucket,
                    total_buckets: task.total_buckets,
                    files: &task.files,
                    deletion_files: &task.deletion_files,
                    data_evolution: false,
                    row_tracking,
                };
                let outputs = rewrite(
                    io,
                    plan,
                    &ctx,
                    schema.clone(),
                    &job,
                    seeds,
                    time_millis,
                    written,
                )
                .await?;
                let index = rewrite_task_dv_index(io, task, seeds.next_u64()).await?;
                if let Some(i) = &index {
                    written.extend(i.paths.iter().cloned());
                }
                messages.push(task.finish(outputs, index)?);
            }
        }
        AppendJobTasks::DataEvolution(tasks) => {
            let (write_schema, names, write_cols) = write_layout(schema)?;
            // Columns stored inline (blob descriptors, view structs) are rewritten as stored,
            // never resolved to the bytes they point at.
            let ctx = {
                let mut c = ReadContext::try_new(&plan.scan, Some(&names), None, None, 0)?;
                c.descriptor_columns.clear();
                Arc::new(c)
            };
            let full_ctx = {
                let mut c = ReadContext::try_new(&plan.scan, None, None, None, 0)?;
                c.blob_as_descriptor = false;
                c.descriptor_columns.clear();
                Arc::new(c)
            };
            for task in tasks {
                if task.kind == DataEvolutionTaskKind::Blob {
                    let bucket_path = bucket_path(plan, &task.partition, 0)?;
                    messages.push(
                        data_evolution::blob::run_blob_task(
                            io,
                            &plan.scan,
                            task,
                            &bucket_path,
                            seeds,
                            time_millis,
                            written,
                        )
                        .await?,
                    );
                    continue;
                }
                if task.kind == DataEvolutionTaskKind::MaterializeDeletions {
                    // Every column (BLOB columns to `.blob` files), the vectors applied; the
                    // outputs are new rows: the commit gives them row ids.
                    let job = Job {
                        partition: &task.partition,
                        bucket: 0,
                        total_buckets: None,
                        files: &task.files,
                        deletion_files: &task.deletion_files,
                        data_evolution: true,
                        row_tracking: false,
                    };
                    let outputs = rewrite(
                        io,
                        plan,
                        &full_ctx,
                        schema.clone(),
                        &job,
                        seeds,
                        time_millis,
                        written,
                    )
                    .await?;
                    messages.push(task.finish_materialized(outputs));
                    continue;
                }
                let job = Job {
                    partition: &task.partition,
                    bucket: 0,
                    total_buckets: None,
                    files: &task.files,
                    deletion_files: &[],
                    data_evolution: true,
                    row_tracking: false,
                };
                let outputs = rewrite(
                    io,
                    plan,
                    &ctx,
                    write_schema.clone(),
                    &job,
                    seeds,
                    time_millis,
                    written,
                )
                .await?;
                messages.push(task.finish(outputs, write_cols.clone())?);
            }
            if let Some((settings, dvs)) = &plan.data_evolution {
                let index = data_evolution::deletion_vectors::rewrite_deletion_vectors(
                    io,
                    dvs,
                    &messages,
                    settings,
                    seeds.next_u64(),
                    written,
                )
                .await?;
                messages.extend(index);
            }
        }
    }
    Ok(messages)
}

/// The directory of a planned (partition, bucket).
fn bucket_path(plan: &AppendJobPlan, partition: &BinaryRow, bucket: i32) -> Result<String> {
    plan.bucket_paths
        .get(&(partition.clone(), bucket))
        .cloned()
        .ok_or_else(|| {
            Error::invalid(format!(
                "no bucket directory for bucket {bucket} of a compaction task"
            ))
        })
}

/// Read the job's files and write their rows again; the new files' metadata in write order.
#[allow(clippy::too_many_arguments)]
async fn rewrite<T>(
    io: &Io<T>,
    plan: &AppendJobPlan,
    ctx: &Arc<ReadContext>,
    write_schema: crate::spec::TableSchema,
    job: &Job<'_>,
    seeds: &mut NameSource,
    time_millis: i64,
    written: &mut Vec<String>,
) -> Result<Vec<DataFileMeta>> {
    let bucket_path = bucket_path(plan, job.partition, job.bucket)?;
    let split = DataSplit {
        snapshot_id: plan.scan.snapshot.as_ref().map_or(0, |s| s.id),
        partition: job.partition.clone(),
        bucket: job.bucket,
        bucket_path,
        total_buckets: job.total_buckets,
        data_files: job.files.to_vec(),
        deletion_files: (!job.deletion_files.is_empty()).then(|| job.deletion_files.to_vec()),
        raw_convertible: !job.data_evolution,
    };
    let write_options = WriteOptions {
        seed: seeds.next_u64(),
        time_millis,
    };
    let rewriter = if job.row_tracking {
        CompactRewriter::try_new_row_tracking(
            write_schema,
            job.partition.clone(),
            job.bucket,
            job.total_buckets,
            write_options,
        )?
    } else {
        CompactRewriter::try_new(
            write_schema,
            job.partition.clone(),
            job.bucket,
            job.total_buckets,
            job.data_evolution,
            write_options,
        )?
    };
    let output = rewrite_split(io, Arc::clone(ctx), split, rewriter).await?;
    written.extend(output.paths);
    Ok(output.files)
}
