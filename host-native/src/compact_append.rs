//! Compacting append and data-evolution tables: [`plan`] and [`run`], over the core's
//! [`paimon_kernel::compact::append_job`] (the same code the browser host runs).
//!
//! ```text
//! plan(table, full)        plan_append_job: scan plan of the latest snapshot (files,
//!                          schemas, options) → core planner → CompactionPlan (JSON units)
//! run(table, opts)         the same plan, then run_append_job, per task:
//!                            read its files (the read_split machine: schema evolution,
//!                            field groups, deletion vectors) → CompactRewriter (the core
//!                            writer, latest schema) → Put (create-new)
//!                            → tasks whose inputs have deletion vectors: their index files
//!                            written again without them
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
//! Data-evolution tables with deletion vectors: the vectors of the compacted row-id groups
//! move to the outputs in one more message per partition (see
//! [`paimon_kernel::compact::data_evolution::deletion_vectors`]).
//!
//! Row-tracking append tables without data evolution keep every row's `_ROW_ID` and
//! `_SEQUENCE_NUMBER`: the outputs store both, as Java's compactors write them.
//!
//! Not supported (the error says so): primary-key tables (see [`crate::compact`]),
//! data-evolution files with deletion vectors, `.blob` file compaction.
//!
//! A compaction racing other commits is checked by the commit (its inputs must still be live;
//! data-evolution row-id checks): on a conflict nothing is published and the files written
//! are deleted.

use paimon_kernel::commit::CommitMessage;
use paimon_kernel::compact::CompactionPlan;
use paimon_kernel::compact::append_job::{
    AppendJobOptions, AppendJobPlan, AppendJobTasks, plan_append_job, run_append_job,
};
use paimon_kernel::compact::plan::partition_json;
use paimon_kernel::job::delete_all;
use paimon_kernel::util::NameSource;

use crate::compact::vanished_input_as_conflict;
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
        AppendJobTasks::Append(tasks) => {
            for t in tasks {
                units.push(
                    t.summary(&planned.partition_fields)
                        .map_err(|e| Error::kernel(context(), e))?,
                );
            }
        }
        AppendJobTasks::DataEvolution(tasks) => {
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
/// ranges; also before the commit when expiry already deleted such a removed input). After an
/// error nothing is published and the files written are deleted.
pub async fn run(table: &Table, opts: &AppendCompactOptions) -> Result<AppendCompactReport> {
    let planned = prepare(table, opts).await?;
    let planned_on = planned.scan.snapshot.as_ref().map(|s| s.id);
    let (messages, written) = execute(table, &planned).await?;
    // Index-only messages (the deletion vectors a data-evolution compaction moves) are not
    // tasks.
    let tasks = match messages
        .iter()
        .filter(|m| {
            let c = &m.compact_increment;
            !(c.compact_before.is_empty() && c.compact_after.is_empty())
        })
        .map(|m| report(&planned, m))
        .collect::<Result<Vec<_>>>()
    {
        Ok(t) => t,
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

/// Plan and run every task like [`run`], without the commit: the commit messages in plan
/// order (see [`Table::prepare_compaction`]).
///
/// # Errors
/// As [`run`] before its commit.
pub async fn prepare_messages(
    table: &Table,
    opts: &AppendCompactOptions,
) -> Result<Vec<CommitMessage>> {
    let planned = prepare(table, opts).await?;
    Ok(execute(table, &planned).await?.0)
}

/// The scan plan of the latest snapshot and the compaction tasks on it
/// ([`plan_append_job`]).
pub(crate) async fn prepare(table: &Table, opts: &AppendCompactOptions) -> Result<AppendJobPlan> {
    let opts = AppendJobOptions {
        full: opts.full,
        partition: opts.partition.clone(),
        bucket: opts.bucket,
    };
    table
        .run(
            "AppendCompactPlan",
            "planning the compaction",
            move |io| async move { plan_append_job(&io, &opts).await },
        )
        .await
}

/// Run every task ([`run_append_job`]): the commit messages in plan order and every path
/// written. On a failure the files written are deleted before the error is returned.
///
/// An input data file that a later snapshot replaced and expiry deleted before a task read
/// it is a `CommitConflict` ([`vanished_input_as_conflict`]).
pub(crate) async fn execute(
    table: &Table,
    planned: &AppendJobPlan,
) -> Result<(Vec<CommitMessage>, Vec<String>)> {
    match run_tasks(table, planned).await {
        Ok(done) => Ok(done),
        Err(e) => {
            let is_input = |name: &str| {
                let named = |files: &[paimon_kernel::spec::DataFileMeta]| {
                    files.iter().any(|f| f.file_name == name)
                };
                match &planned.tasks {
                    AppendJobTasks::Append(tasks) => tasks.iter().any(|t| named(&t.files)),
                    AppendJobTasks::DataEvolution(tasks) => tasks.iter().any(|t| named(&t.files)),
                }
            };
            let planned_on = planned.scan.snapshot.as_ref().map(|s| s.id);
            Err(vanished_input_as_conflict(table, planned_on, is_input, e).await)
        }
    }
}

async fn run_tasks(
    table: &Table,
    planned: &AppendJobPlan,
) -> Result<(Vec<CommitMessage>, Vec<String>)> {
    let plan = planned.clone();
    let seed = random_seed();
    let time_millis = now_millis();
    table
        .run("AppendCompactTasks", "compacting", move |io| async move {
            let mut seeds = NameSource::new(seed);
            let mut written = Vec::new();
            match run_append_job(&io, &plan, &mut seeds, time_millis, &mut written).await {
                Ok(messages) => Ok((messages, written)),
                Err(e) => {
                    delete_all(&io, &written).await;
                    Err(e)
                }
            }
        })
        .await
}

fn report(planned: &AppendJobPlan, message: &CommitMessage) -> Result<AppendCompactTaskReport> {
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
    use paimon_kernel::spec::BinaryRow;
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
        execute(table, &planned).await.unwrap()
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
            .alter(vec![
                paimon_kernel::schema::alter::SchemaChange::set_option(
                    "compaction.min.file-num",
                    "2",
                ),
            ])
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

    /// `de_merge_into` (data evolution with deletion vectors: 5 files, 2 anchors with a
    /// vector): the compaction's files are written, then a delete commits new vectors for
    /// the same anchors. The compaction's commit conflicts (the index file it replaces is
    /// gone), the delete is kept, and a new compaction moves every vector.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_delete_racing_a_data_evolution_compaction_is_never_lost() {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().join("de_merge_into");
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../conformance/tables/corpus.db/de_merge_into"),
            &loc,
        );
        let table = Table::open(loc.to_str().unwrap()).await.unwrap();
        let cols: Vec<String> = ["_ROW_ID", "id", "name", "age"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let before = rows(&table, Some(cols.clone())).await;
        assert_eq!(before.len(), 7);
        let (messages, written) = stage(&table).await;
        // One task over rows [0, 8], then the index message moving the two vectors.
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[1].compact_increment.deleted_index_files.len(), 1);
        let deleted = table.delete_where("id = 4", None).await.unwrap();
        assert_eq!(deleted.rows_deleted, 1);
        let after_delete = rows(&table, Some(cols.clone())).await;
        assert_eq!(after_delete.len(), 6);
        let err = table.new_commit(None).commit(messages).await.unwrap_err();
        assert!(
            matches!(
                err.as_kernel(),
                Some(paimon_kernel::Error::CommitConflict { .. })
            ),
            "{err}"
        );
        assert_eq!(rows(&table, Some(cols.clone())).await, after_delete);
        assert!(exists(&loc, &written) <= written.len());
        let again = run(&table, &AppendCompactOptions::default()).await.unwrap();
        assert!(again.snapshot_id.is_some());
        assert_eq!(again.tasks.len(), 1);
        assert_eq!(rows(&table, Some(cols)).await, after_delete);
    }
}
