//! Compacting append and data-evolution tables: [`plan`] and [`run`].
//!
//! ```text
//! plan(table, full)        scan plan of the latest snapshot (files, schemas, options)
//!                          → core planner → CompactionPlan (JSON units)
//! run(table, opts)         the same plan, then per task:
//!                            core rewrite_machine: read its files (the read_split machine:
//!                            schema evolution, field groups, deletion vectors) →
//!                            CompactRewriter (the core writer, latest schema) → Put
//!                            (create-new)
//!                            → core dv_index_machine (tasks whose inputs have deletion
//!                            vectors: their index files written again without them)
//!                            → task.finish(outputs, index) → CommitMessage (compact
//!                            before/after, new/deleted index files)
//!                          one commit of every message: a COMPACT snapshot
//! ```
//!
//! Planners: unaware-bucket append tables follow Java's `AppendCompactCoordinator` (the
//! same plan with or without `full`: Java's coordinator has no full mode), fixed-bucket append
//! tables Java's `BucketedAppendCompactManager` (best-effort pick, or its full compaction with
//! `full`), data-evolution tables Java release-2.0.0's `DataEvolutionCompactCoordinator` (no
//! full mode either). See [`paimon_kernel::compact::append`] and
//! [`paimon_kernel::compact::data_evolution`].
//!
//! Append tables with deletion vectors (`deletion-vectors.enabled`) are planned in Java's
//! deletion-vector modes from the snapshot's index manifest; the vectors of the compacted
//! files leave the index with the commit (see [`paimon_kernel::compact::append`]).
//!
//! Not supported (the error says so): primary-key tables (see [`crate::compact`]),
//! data-evolution files with deletion vectors, row-tracking tables without data evolution
//! (Java rewrites their `_ROW_ID`/`_SEQUENCE_NUMBER` into the files), `.blob` file
//! compaction.
//!
//! A compaction racing other commits is checked by the commit (its inputs must still be live;
//! data-evolution row-id checks): on a conflict nothing is published and the files written
//! are deleted.

use std::collections::BTreeMap;

use paimon_kernel::commit::CommitMessage;
use paimon_kernel::compact::CompactionPlan;
use paimon_kernel::compact::append::{
    AppendCompactOptions as CompactSettings, AppendCompactTask, AppendDvIndex, CompactRewriter,
    dv_index_machine, partition_json, plan_bucketed, plan_unaware, rewrite_machine,
};
use paimon_kernel::compact::data_evolution::{
    self, DataEvolutionCompactOptions, DataEvolutionCompactTask, write_layout,
};
use paimon_kernel::read::ReadContext;
use paimon_kernel::scan::{DataSplit, DeletionFile, Plan, TableKind};
use paimon_kernel::spec::partition::{PartitionNaming, partition_values};
use paimon_kernel::spec::{BinaryRow, CoreOptions, DataField, FileKind, ManifestEntry};
use paimon_kernel::write::WriteOptions;

use crate::error::{Error, Result};
use crate::table::Table;
use crate::write::{delete_paths, now_millis, random_seed};

/// What [`run`] compacts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppendCompactOptions {
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

/// What [`run`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppendCompactReport {
    /// The snapshot the compaction was planned on (`None` for a table without snapshots).
    pub planned_on: Option<i64>,
    /// The `COMPACT` snapshot committed (`None` when there was nothing to compact).
    pub snapshot_id: Option<i64>,
    /// One entry per task, in plan order.
    pub tasks: Vec<AppendCompactTaskReport>,
    /// The commit stands but its maintenance (expiry, automatic tags) failed: why.
    pub maintenance_warning: Option<String>,
}

/// One compaction task of an [`AppendCompactReport`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendCompactTaskReport {
    /// Partition values by key (the plan JSON's form).
    pub partition: serde_json::Map<String, serde_json::Value>,
    /// The bucket.
    pub bucket: i32,
    /// Input data files (removed by the commit), in read order.
    pub files_in: Vec<String>,
    /// Output data files (added by the commit), in write order.
    pub files_out: Vec<String>,
    /// Bytes of the input files.
    pub bytes_in: i64,
    /// Bytes of the output files.
    pub bytes_out: i64,
    /// Rows written.
    pub rows: i64,
}

/// The tasks of one table kind.
#[derive(Debug, Clone)]
enum Tasks {
    Append(Vec<AppendCompactTask>),
    DataEvolution(Vec<DataEvolutionCompactTask>),
}

/// A plan with the scan plan it was made from.
#[derive(Debug, Clone)]
struct Planned {
    scan: Plan,
    tasks: Tasks,
    /// Bucket directory of each (partition, bucket) of the scan.
    bucket_paths: BTreeMap<(BinaryRow, i32), String>,
    partition_fields: Vec<DataField>,
}

/// Plan the compaction of the table's latest snapshot (nothing is written).
///
/// # Errors
/// [`Error::Kernel`]: `Unsupported` for the table kinds and features listed in the module
/// docs; `Invalid` for bad options (named); read errors of the scan.
pub async fn plan(table: &Table, full: bool) -> Result<CompactionPlan> {
    let opts = AppendCompactOptions {
        full,
        ..AppendCompactOptions::default()
    };
    let planned = prepare(table, &opts).await?;
    let context = || format!("planning the compaction of table {}", table.location());
    let mut units = Vec::new();
    match &planned.tasks {
        Tasks::Append(tasks) => {
            for t in tasks {
                units.push(
                    t.summary(&planned.partition_fields)
                        .map_err(|e| Error::kernel(context(), e))?,
                );
            }
        }
        Tasks::DataEvolution(tasks) => {
            for t in tasks {
                units.push(
                    t.summary(&planned.partition_fields)
                        .map_err(|e| Error::kernel(context(), e))?,
                );
            }
        }
    }
    let mut plan = CompactionPlan {
        snapshot: planned.scan.snapshot.as_ref().map(|s| s.id),
        units,
    };
    plan.sort();
    Ok(plan)
}

/// Plan, run every task and commit the results as one `COMPACT` snapshot.
///
/// # Errors
/// As [`plan`]; read, write and store errors of the tasks; commit errors (`CommitConflict`
/// when a concurrent commit removed an input or, on data-evolution tables, changed the row-id
/// ranges). After an error nothing is published and the files written are deleted.
pub async fn run(table: &Table, opts: &AppendCompactOptions) -> Result<AppendCompactReport> {
    let planned = prepare(table, opts).await?;
    let planned_on = planned.scan.snapshot.as_ref().map(|s| s.id);
    let mut written: Vec<String> = Vec::new();
    let result = execute(table, &planned, &mut written).await;
    let (messages, tasks) = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = delete_paths(table.host(), written).await;
            return Err(e);
        }
    };
    if messages.is_empty() {
        return Ok(AppendCompactReport {
            planned_on,
            snapshot_id: None,
            tasks,
            maintenance_warning: None,
        });
    }
    match table.new_commit(None).commit(messages).await {
        Ok(outcome) => Ok(AppendCompactReport {
            planned_on,
            snapshot_id: outcome.snapshot_ids.last().copied(),
            tasks,
            maintenance_warning: outcome.maintenance_warning,
        }),
        Err(e) => {
            let _ = delete_paths(table.host(), written).await;
            Err(e)
        }
    }
}

/// The scan plan of the latest snapshot and the compaction tasks on it.
async fn prepare(table: &Table, opts: &AppendCompactOptions) -> Result<Planned> {
    let context = || format!("planning the compaction of table {}", table.location());
    let scan = table.scan().plan().await?;
    let options = CoreOptions::new(scan.options.clone());
    let kernel = |e| Error::kernel(context(), e);
    let de = options.data_evolution_enabled().map_err(kernel)?;
    let dv_enabled = options.deletion_vectors_enabled().map_err(kernel)?;
    match scan.table_kind {
        TableKind::PrimaryKey => {
            return Err(kernel(paimon_kernel::Error::unsupported(
                "append compaction of a primary-key table (use primary-key compaction)",
            )));
        }
        TableKind::Append if options.row_tracking_enabled().map_err(kernel)? => {
            return Err(kernel(paimon_kernel::Error::unsupported(
                "compacting a row-tracking table without data evolution (its rewritten files \
                 must store _ROW_ID and _SEQUENCE_NUMBER)",
            )));
        }
        _ => {}
    }
    let partition_fields: Vec<DataField> = scan
        .schema
        .partition_keys
        .iter()
        .map(|k| {
            scan.schema.field(k).cloned().ok_or_else(|| {
                kernel(paimon_kernel::Error::invalid(format!(
                    "partition key '{k}' is not a column"
                )))
            })
        })
        .collect::<Result<_>>()?;
    if let Some(filter) = &opts.partition
        && let Some((k, _)) = filter
            .iter()
            .find(|(k, _)| !scan.schema.partition_keys.contains(k))
    {
        return Err(kernel(paimon_kernel::Error::invalid(format!(
            "'{k}' is not a partition key of the table (partition keys: {})",
            scan.schema.partition_keys.join(", ")
        ))));
    }
    let naming = PartitionNaming {
        default_name: options.partition_default_name().to_owned(),
        legacy_name: options.partition_legacy_name().map_err(kernel)?,
    };
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
                                partition_values(&partition_fields, &split.partition, &naming)
                                    .map_err(kernel)?;
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
        // Data-evolution files with vectors are not compacted; nor are vectors of a table
        // whose `deletion-vectors.enabled` was turned off (the planner would not see them).
        if (de || !dv_enabled)
            && let Some(deletions) = &split.deletion_files
            && let Some((i, _)) = deletions.iter().enumerate().find(|(_, d)| d.is_some())
        {
            let name = split
                .data_files
                .get(i)
                .map_or("?", |f| f.file_name.as_str());
            let why = if de {
                ""
            } else {
                " while 'deletion-vectors.enabled' is false"
            };
            return Err(kernel(paimon_kernel::Error::unsupported(format!(
                "compacting data files with deletion vectors (data file {name} has one){why}"
            ))));
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
    let tasks = if de {
        let settings = DataEvolutionCompactOptions::from_options(&options).map_err(kernel)?;
        Tasks::DataEvolution(data_evolution::plan(&entries, &settings).map_err(kernel)?)
    } else {
        let settings = CompactSettings::from_options(&options).map_err(kernel)?;
        let bucketed = options.bucket().map_err(kernel)? > 0;
        let index_entries = match &scan.snapshot {
            Some(snapshot) if settings.deletion_vectors && snapshot.index_manifest.is_some() => {
                let snapshot = snapshot.clone();
                table
                    .run(
                        "IndexManifestReader",
                        format!("reading the index manifest of snapshot {}", snapshot.id),
                        move |io| async move {
                            paimon_kernel::scan::planner::read_index_entries(&io, &snapshot).await
                        },
                    )
                    .await?
            }
            _ => Vec::new(),
        };
        let dvs = AppendDvIndex::try_new(&index_entries, &options, !bucketed).map_err(kernel)?;
        if bucketed {
            Tasks::Append(plan_bucketed(&entries, &dvs, &settings, opts.full))
        } else {
            Tasks::Append(plan_unaware(&entries, &dvs, &settings))
        }
    };
    Ok(Planned {
        scan,
        tasks,
        bucket_paths,
        partition_fields,
    })
}

/// One task to read and rewrite.
struct Job<'a> {
    partition: &'a BinaryRow,
    bucket: i32,
    total_buckets: Option<i32>,
    files: &'a [paimon_kernel::spec::DataFileMeta],
    /// The deletion vectors of `files` (same order), empty when none has one.
    deletion_files: &'a [Option<DeletionFile>],
    data_evolution: bool,
}

/// Run every task; the commit messages and the reports, in plan order.
async fn execute(
    table: &Table,
    planned: &Planned,
    written: &mut Vec<String>,
) -> Result<(Vec<CommitMessage>, Vec<AppendCompactTaskReport>)> {
    let context = || format!("compacting table {}", table.location());
    let kernel = |e| Error::kernel(context(), e);
    let schema = &planned.scan.schema;
    let mut messages = Vec::new();
    let mut reports = Vec::new();
    match &planned.tasks {
        Tasks::Append(tasks) => {
            let ctx = ReadContext::try_new(&planned.scan, None, None, None, 0).map_err(kernel)?;
            let ctx = std::sync::Arc::new(ctx);
            for task in tasks {
                let job = Job {
                    partition: &task.partition,
                    bucket: task.bucket,
                    total_buckets: task.total_buckets,
                    files: &task.files,
                    deletion_files: &task.deletion_files,
                    data_evolution: false,
                };
                let outputs = rewrite(table, planned, &ctx, schema.clone(), &job, written).await?;
                let index = match dv_index_machine(task, random_seed()) {
                    Some(machine) => {
                        let machine = machine.describe(format!(
                            "rewriting the deletion-vector index files of a compaction task of \
                             table {}",
                            table.location()
                        ));
                        let output = table.host().run_once(machine).await?;
                        written.extend(output.paths.iter().cloned());
                        Some(output)
                    }
                    None => None,
                };
                let message = task.finish(outputs, index).map_err(kernel)?;
                reports.push(report(planned, &message)?);
                messages.push(message);
            }
        }
        Tasks::DataEvolution(tasks) => {
            let (write_schema, names, write_cols) = write_layout(schema).map_err(kernel)?;
            let ctx =
                ReadContext::try_new(&planned.scan, Some(&names), None, None, 0).map_err(kernel)?;
            let ctx = std::sync::Arc::new(ctx);
            for task in tasks {
                let job = Job {
                    partition: &task.partition,
                    bucket: 0,
                    total_buckets: None,
                    files: &task.files,
                    deletion_files: &[],
                    data_evolution: true,
                };
                let outputs =
                    rewrite(table, planned, &ctx, write_schema.clone(), &job, written).await?;
                let message = task.finish(outputs, write_cols.clone()).map_err(kernel)?;
                reports.push(report(planned, &message)?);
                messages.push(message);
            }
        }
    }
    Ok((messages, reports))
}

/// Read the job's files and write their rows again; the new files' metadata in write order.
async fn rewrite(
    table: &Table,
    planned: &Planned,
    ctx: &std::sync::Arc<ReadContext>,
    write_schema: paimon_kernel::spec::TableSchema,
    job: &Job<'_>,
    written: &mut Vec<String>,
) -> Result<Vec<paimon_kernel::spec::DataFileMeta>> {
    let context = || format!("compacting table {}", table.location());
    let kernel = |e| Error::kernel(context(), e);
    let bucket_path = planned
        .bucket_paths
        .get(&(job.partition.clone(), job.bucket))
        .cloned()
        .ok_or_else(|| {
            kernel(paimon_kernel::Error::invalid(format!(
                "no bucket directory for bucket {} of a compaction task",
                job.bucket
            )))
        })?;
    let split = DataSplit {
        snapshot_id: planned.scan.snapshot.as_ref().map_or(0, |s| s.id),
        partition: job.partition.clone(),
        bucket: job.bucket,
        bucket_path,
        total_buckets: job.total_buckets,
        data_files: job.files.to_vec(),
        deletion_files: (!job.deletion_files.is_empty()).then(|| job.deletion_files.to_vec()),
        raw_convertible: !job.data_evolution,
    };
    let rewriter = CompactRewriter::try_new(
        write_schema,
        job.partition.clone(),
        job.bucket,
        job.total_buckets,
        job.data_evolution,
        WriteOptions {
            seed: random_seed(),
            time_millis: now_millis(),
        },
    )
    .map_err(kernel)?;
    let machine = rewrite_machine(std::sync::Arc::clone(ctx), split, rewriter).describe(format!(
        "rewriting the files of a compaction task of table {}",
        table.location()
    ));
    let output = table.host().run_once(machine).await?;
    written.extend(output.paths);
    Ok(output.files)
}

fn report(planned: &Planned, message: &CommitMessage) -> Result<AppendCompactTaskReport> {
    let c = &message.compact_increment;
    Ok(AppendCompactTaskReport {
        partition: partition_json(&message.partition, &planned.partition_fields)
            .map_err(|e| Error::kernel("reporting a compaction task", e))?,
        bucket: message.bucket,
        files_in: c
            .compact_before
            .iter()
            .map(|f| f.file_name.clone())
            .collect(),
        files_out: c
            .compact_after
            .iter()
            .map(|f| f.file_name.clone())
            .collect(),
        bytes_in: c.compact_before.iter().map(|f| f.file_size).sum(),
        bytes_out: c.compact_after.iter().map(|f| f.file_size).sum(),
        rows: c.compact_after.iter().map(|f| f.row_count).sum(),
    })
}

#[cfg(test)]
mod tests {
    //! Races between a compaction and other commits: the compaction is planned and its files
    //! written, another commit lands, then the compaction commits.

    use super::*;
    use paimon_kernel::canonical;
    use paimon_kernel::commit::DataIncrement;
    use std::path::Path;

    async fn rows(table: &Table, columns: Option<Vec<String>>) -> Vec<String> {
        let mut scan = table.scan();
        if let Some(c) = columns {
            scan = scan.with_projection(c);
        }
        let batches = scan.to_batches().await.unwrap();
        let mut out: Vec<String> = canonical::batches_rows(&batches)
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        out.sort();
        out
    }

    async fn append(table: &Table, ids: std::ops::Range<i64>) {
        use arrow_array::{ArrayRef, Int64Array, RecordBatch};
        let schema = arrow_schema::Schema::new(vec![arrow_schema::Field::new(
            "id",
            arrow_schema::DataType::Int64,
            true,
        )]);
        let col: ArrayRef = std::sync::Arc::new(Int64Array::from_iter_values(ids));
        let batch = RecordBatch::try_new(std::sync::Arc::new(schema), vec![col]).unwrap();
        let mut w = table.new_write().await.unwrap();
        w.write(&batch).await.unwrap();
        let m = w.prepare_commit().await.unwrap();
        table.new_commit(None).commit(m).await.unwrap();
    }

    /// Planned and written, not committed yet.
    async fn stage(table: &Table) -> (Vec<CommitMessage>, Vec<String>) {
        let planned = prepare(table, &AppendCompactOptions::default())
            .await
            .unwrap();
        let mut written = Vec::new();
        let (messages, _) = execute(table, &planned, &mut written).await.unwrap();
        (messages, written)
    }

    fn exists(dir: &Path, written: &[String]) -> usize {
        written.iter().filter(|p| dir.join(p).exists()).count()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_append_racing_a_compaction_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().join("t");
        let schema = r#"{"fields": [{"name": "id", "type": "BIGINT"}],
            "options": {"compaction.min.file-num": "2"}}"#;
        let table = Table::create(loc.to_str().unwrap(), schema.as_bytes())
            .await
            .unwrap();
        for i in 0..3 {
            append(&table, i * 10..i * 10 + 10).await;
        }
        let (messages, written) = stage(&table).await;
        assert_eq!(messages.len(), 1);
        append(&table, 100..105).await;
        table.new_commit(None).commit(messages).await.unwrap();
        let got = rows(&table, None).await;
        assert_eq!(got.len(), 35);
        assert!(got.contains(&r#"{"id":104}"#.to_string()));
        assert_eq!(exists(&loc, &written), written.len());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_second_compaction_of_the_same_files_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().join("t");
        let schema = r#"{"fields": [{"name": "id", "type": "BIGINT"}],
            "options": {"compaction.min.file-num": "2"}}"#;
        let table = Table::create(loc.to_str().unwrap(), schema.as_bytes())
            .await
            .unwrap();
        for i in 0..3 {
            append(&table, i * 10..i * 10 + 10).await;
        }
        let before = rows(&table, None).await;
        let (messages, _written) = stage(&table).await;
        // Another compaction of the same files wins the race.
        let other = run(&table, &AppendCompactOptions::default()).await.unwrap();
        assert!(other.snapshot_id.is_some());
        let err = table.new_commit(None).commit(messages).await.unwrap_err();
        assert!(
            matches!(
                err.as_kernel(),
                Some(paimon_kernel::Error::CommitConflict { .. })
            ),
            "{err}"
        );
        assert_eq!(rows(&table, None).await, before);
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy_dir(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), target).unwrap();
            }
        }
    }

    /// `de_update` (rows 0..9 in two row-id groups, each a base file and three column
    /// updates): the compaction merges both groups into one file over [0, 9]. An update of
    /// rows [0, 5] (a copy of their base file, all columns: it brings back the original
    /// values of the columns updated since) committed before the compaction makes the compaction's commit conflict (Java's row-id range check: the
    /// update's range would overlap the output's without being equal); the update is never
    /// lost.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_column_update_racing_a_data_evolution_compaction_is_never_lost() {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().join("de_update");
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../conformance/tables/corpus.db/de_update"),
            &loc,
        );
        let table = Table::open(loc.to_str().unwrap()).await.unwrap();
        table
            .alter(vec![paimon_kernel::write::alter::SchemaChange::set_option(
                "compaction.min.file-num",
                "2",
            )])
            .await
            .unwrap();
        let (messages, written) = stage(&table).await;
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].compact_increment.compact_before.len(), 8);
        // The racing update: the update file of b, c over rows [0, 5], under a new name.
        let files = table.scan().data_files().await.unwrap().unwrap();
        let source = files
            .entries
            .iter()
            .find(|e| e.file.first_row_id == Some(0) && e.file.write_cols.is_none())
            .unwrap()
            .file
            .clone();
        let mut update = source.clone();
        update.file_name = "data-racing-update-0.parquet".into();
        update.min_sequence_number = 0;
        update.max_sequence_number = 0;
        std::fs::copy(
            loc.join("bucket-0").join(&source.file_name),
            loc.join("bucket-0").join(&update.file_name),
        )
        .unwrap();
        let racing = CommitMessage {
            partition: BinaryRow::empty(),
            bucket: 0,
            total_buckets: None,
            data_increment: DataIncrement {
                new_files: vec![update],
                ..DataIncrement::default()
            },
            compact_increment: Default::default(),
        };
        let cols: Vec<String> = ["id", "a", "b", "c", "d", "_ROW_ID", "_SEQUENCE_NUMBER"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let schema = table.schema().await.unwrap();
        assert_eq!(schema.field_names(), cols[..5].to_vec());
        let before_update = rows(&table, Some(cols.clone())).await;
        table.new_commit(None).commit(vec![racing]).await.unwrap();
        let after_update = rows(&table, Some(cols.clone())).await;
        assert_ne!(after_update, before_update);
        let result = table.new_commit(None).commit(messages).await;
        match result {
            Err(e) => assert!(
                matches!(
                    e.as_kernel(),
                    Some(paimon_kernel::Error::CommitConflict { .. })
                ),
                "{e}"
            ),
            Ok(_) => panic!("the compaction over the updated range committed"),
        }
        assert_eq!(rows(&table, Some(cols)).await, after_update);
        assert!(exists(&loc, &written) <= written.len());
    }
}
