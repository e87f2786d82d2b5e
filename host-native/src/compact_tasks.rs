//! Compaction as values: [`Table::plan_compaction_tasks`] plans on one process (a driver),
//! each [`CompactTask`] runs anywhere with [`Table::run_compaction_task`] (a worker, another
//! process or machine: the task is a serde value) and returns commit messages, and one
//! [`TableCommit::commit`](crate::TableCommit::commit) of every task's messages publishes a
//! single `COMPACT` snapshot.
//!
//! ```no_run
//! # async fn demo() -> paimon_native::Result<()> {
//! use paimon_native::Table;
//! use paimon_native::compact::CompactOptions;
//!
//! let table = Table::open("/warehouse/db.db/orders").await?;
//! let tasks = table.plan_compaction_tasks(&CompactOptions { full: true, ..Default::default() }).await?;
//! let mut messages = Vec::new();
//! for task in &tasks {
//!     // Ship `serde_json::to_vec(task)` to a worker; there: run it.
//!     messages.extend(table.run_compaction_task(task).await?);
//! }
//! if !messages.is_empty() {
//!     table.new_commit(None).commit(messages).await?;
//! }
//! # Ok(()) }
//! ```
//!
//! The tasks are those [`Table::compact`] runs (same planners, same outputs):
//!
//! * primary-key tables: one task per bucket to compact (Java `MergeTreeCompactTask`), with
//!   the schemas its inputs need;
//! * append tables: one task per Java `AppendCompactTask` (unaware bucket) or per bucket
//!   (fixed buckets), with the scan's read context;
//! * data-evolution tables: one task per row-id group; with deletion vectors enabled the
//!   vectors of all the compacted groups of a partition move together, so the whole
//!   compaction is one task.
//!
//! Postpone-bucket tables (`bucket` = -2) are compacted by [`Table::compact`] only (their
//! compaction replays rows into new buckets; `Unsupported` here).
//!
//! A failed task deletes what it wrote. A worker's messages that will not be committed are
//! removed with [`TableCommit::abort`](crate::TableCommit::abort). The commit checks that every
//! input is still live (a concurrent compaction or overwrite makes it a `CommitConflict`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use paimon_kernel::commit::CommitMessage;
use paimon_kernel::compact::append::AppendCompactTask;
use paimon_kernel::compact::append_job::{AppendJobPlan, AppendJobTasks};
use paimon_kernel::compact::data_evolution::DataEvolutionCompactTask;
use paimon_kernel::compact::pk::{PkCompactContext, PkCompactTask, compact_task_machine};
use paimon_kernel::scan::Plan;
use paimon_kernel::spec::{BinaryRow, DataField, TableSchema};

use crate::compact::CompactOptions;
use crate::compact_append::AppendCompactOptions;
use crate::error::{Error, Result};
use crate::table::Table;
use crate::write::{now_millis, random_seed};

/// One compaction task: a plain serde value that can be run on any process that can open
/// the table (see the module docs).
///
/// Source: Java `org.apache.paimon.compact.CompactTask` (primary key),
/// `org.apache.paimon.append.AppendCompactTask`,
/// `org.apache.paimon.append.dataevolution.DataEvolutionCompactTask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactTask {
    /// The snapshot the task was planned on (`None` for a table without snapshots).
    pub snapshot_id: Option<i64>,
    /// The partition of the task's files (the empty row for a whole-table task).
    pub partition: BinaryRow,
    /// The bucket of the task's files (0 for unaware-bucket and data-evolution tables, and
    /// for a whole-table task).
    pub bucket: i32,
    /// Names of the input data files, in read order (empty for a whole-table task).
    pub files: Vec<String>,
    body: TaskBody,
}

/// What a task runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TaskBody {
    /// A primary-key bucket.
    PrimaryKey {
        schema: Box<TableSchema>,
        schemas: BTreeMap<i64, TableSchema>,
        task: Box<PkCompactTask>,
    },
    /// One append task with the scan's read context (its splits left out).
    Append {
        scan: Box<Plan>,
        task: AppendCompactTask,
        bucket_path: String,
        partition_fields: Vec<DataField>,
    },
    /// One data-evolution task (no deletion vectors to move).
    DataEvolution {
        scan: Box<Plan>,
        task: DataEvolutionCompactTask,
        bucket_path: String,
        partition_fields: Vec<DataField>,
    },
    /// The whole append/data-evolution compaction, re-planned where it runs; the run fails
    /// when the latest snapshot is no longer `snapshot_id` (the plan would differ).
    Whole {
        full: bool,
        partition: Option<Vec<(String, String)>>,
        bucket: Option<i32>,
    },
}

impl CompactTask {
    /// Rows of the input files (before merging), for sizing work.
    pub fn input_rows(&self) -> i64 {
        match &self.body {
            TaskBody::PrimaryKey { task, .. } => task.unit.files.iter().map(|f| f.row_count).sum(),
            TaskBody::Append { task, .. } => task.files.iter().map(|f| f.row_count).sum(),
            TaskBody::DataEvolution { task, .. } => task.files.iter().map(|f| f.row_count).sum(),
            TaskBody::Whole { .. } => 0,
        }
    }

    /// Bytes of the input files.
    pub fn input_bytes(&self) -> i64 {
        match &self.body {
            TaskBody::PrimaryKey { task, .. } => task.unit.files.iter().map(|f| f.file_size).sum(),
            TaskBody::Append { task, .. } => task.files.iter().map(|f| f.file_size).sum(),
            TaskBody::DataEvolution { task, .. } => task.files.iter().map(|f| f.file_size).sum(),
            TaskBody::Whole { .. } => 0,
        }
    }

    /// Whether the task is the whole compaction of the table (see the module docs).
    pub fn is_whole(&self) -> bool {
        matches!(self.body, TaskBody::Whole { .. })
    }
}

impl Table {
    /// Plan the compaction [`Table::compact`] would do with `options` (its commit user is not
    /// used), as tasks to run separately. Nothing to compact: no task.
    ///
    /// # Errors
    /// As [`Table::plan_compaction`]; `Unsupported` for postpone-bucket tables.
    pub async fn plan_compaction_tasks(
        &self,
        options: &CompactOptions,
    ) -> Result<Vec<CompactTask>> {
        let context = format!("planning the compaction tasks of table {}", self.location());
        let schema = self.schema().await?;
        if schema.is_primary_key_table() {
            if schema.core_options().bucket().ok()
                == Some(paimon_kernel::spec::partition::POSTPONE_BUCKET)
            {
                return Err(Error::kernel(
                    context,
                    paimon_kernel::Error::unsupported(
                        "compaction tasks of a postpone-bucket table (bucket = -2); use compact",
                    ),
                ));
            }
            let (plan, tasks, inputs) = self.plan_tasks(options).await?;
            let Some(inputs) = inputs else {
                return Ok(Vec::new());
            };
            return Ok(tasks
                .into_iter()
                .map(|task| CompactTask {
                    snapshot_id: plan.snapshot,
                    partition: task.partition.clone(),
                    bucket: task.bucket,
                    files: task
                        .unit
                        .files
                        .iter()
                        .map(|f| f.file_name.clone())
                        .collect(),
                    body: TaskBody::PrimaryKey {
                        schema: Box::new(inputs.schema.clone()),
                        schemas: inputs.schemas.clone(),
                        task: Box::new(task),
                    },
                })
                .collect());
        }
        let opts = append_options(options);
        let planned = crate::compact_append::prepare(self, &opts).await?;
        let snapshot_id = planned.scan.snapshot.as_ref().map(|s| s.id);
        if planned.tasks.is_empty() {
            return Ok(Vec::new());
        }
        let mut scan = planned.scan.clone();
        scan.splits.clear();
        let bucket_path = |partition: &BinaryRow, bucket: i32| {
            planned
                .bucket_paths
                .get(&(partition.clone(), bucket))
                .cloned()
                .ok_or_else(|| {
                    Error::kernel(
                        &context,
                        paimon_kernel::Error::invalid(format!(
                            "no bucket directory for bucket {bucket} of a compaction task"
                        )),
                    )
                })
        };
        let names = |files: &[paimon_kernel::spec::DataFileMeta]| {
            files.iter().map(|f| f.file_name.clone()).collect()
        };
        match &planned.tasks {
            AppendJobTasks::Append(tasks) => tasks
                .iter()
                .map(|task| {
                    Ok(CompactTask {
                        snapshot_id,
                        partition: task.partition.clone(),
                        bucket: task.bucket,
                        files: names(&task.files),
                        body: TaskBody::Append {
                            scan: Box::new(scan.clone()),
                            task: task.clone(),
                            bucket_path: bucket_path(&task.partition, task.bucket)?,
                            partition_fields: planned.partition_fields.clone(),
                        },
                    })
                })
                .collect(),
            AppendJobTasks::DataEvolution(_) if planned.data_evolution.is_some() && dv(&scan) => {
                Ok(vec![CompactTask {
                    snapshot_id,
                    partition: BinaryRow::empty(),
                    bucket: 0,
                    files: Vec::new(),
                    body: TaskBody::Whole {
                        full: opts.full,
                        partition: opts.partition.clone(),
                        bucket: opts.bucket,
                    },
                }])
            }
            AppendJobTasks::DataEvolution(tasks) => tasks
                .iter()
                .map(|task| {
                    Ok(CompactTask {
                        snapshot_id,
                        partition: task.partition.clone(),
                        bucket: 0,
                        files: names(&task.files),
                        body: TaskBody::DataEvolution {
                            scan: Box::new(scan.clone()),
                            task: task.clone(),
                            bucket_path: bucket_path(&task.partition, 0)?,
                            partition_fields: planned.partition_fields.clone(),
                        },
                    })
                })
                .collect(),
        }
    }

    /// Run one task planned by [`Table::plan_compaction_tasks`] (on this table, possibly in
    /// another process): its outputs are written, nothing is committed. Returns the commit
    /// messages to commit together with the other tasks'.
    ///
    /// # Errors
    /// Read, merge and write errors (what the task wrote is deleted); `CommitConflict` when
    /// an input data file is gone because a later snapshot replaced it (and expiry deleted
    /// it), and for a whole-table task when the table moved past the planned snapshot.
    pub async fn run_compaction_task(&self, task: &CompactTask) -> Result<Vec<CommitMessage>> {
        let what = format!(
            "compacting bucket {} of table {}",
            task.bucket,
            self.location()
        );
        match &task.body {
            TaskBody::PrimaryKey {
                schema,
                schemas,
                task: pk,
            } => {
                let ctx = Arc::new(PkCompactContext {
                    schema: (**schema).clone(),
                    schemas: schemas.clone(),
                    seed: random_seed(),
                    time_millis: now_millis(),
                    batch_size: paimon_kernel::read::DEFAULT_BATCH_SIZE,
                });
                let machine = compact_task_machine(ctx, (**pk).clone()).describe(what);
                match self.host().run_once(machine).await {
                    Ok((message, _)) => Ok(vec![message]),
                    Err(e) => {
                        let is_input = |name: &str| {
                            task.files.iter().any(|f| f == name)
                                || pk.lookup_files.iter().any(|f| f.file_name == name)
                        };
                        Err(crate::compact::vanished_input_as_conflict(
                            self,
                            task.snapshot_id,
                            is_input,
                            e,
                        )
                        .await)
                    }
                }
            }
            TaskBody::Append {
                scan,
                task: t,
                bucket_path,
                partition_fields,
            } => {
                let plan = job_plan(
                    scan,
                    AppendJobTasks::Append(vec![t.clone()]),
                    (t.partition.clone(), t.bucket),
                    bucket_path,
                    partition_fields,
                );
                Ok(crate::compact_append::execute(self, &plan).await?.0)
            }
            TaskBody::DataEvolution {
                scan,
                task: t,
                bucket_path,
                partition_fields,
            } => {
                let plan = job_plan(
                    scan,
                    AppendJobTasks::DataEvolution(vec![t.clone()]),
                    (t.partition.clone(), 0),
                    bucket_path,
                    partition_fields,
                );
                Ok(crate::compact_append::execute(self, &plan).await?.0)
            }
            TaskBody::Whole {
                full,
                partition,
                bucket,
            } => {
                let opts = AppendCompactOptions {
                    full: *full,
                    partition: partition.clone(),
                    bucket: *bucket,
                };
                let planned = crate::compact_append::prepare(self, &opts).await?;
                let now = planned.scan.snapshot.as_ref().map(|s| s.id);
                if now != task.snapshot_id {
                    return Err(Error::kernel(
                        what,
                        paimon_kernel::Error::CommitConflict {
                            detail: format!(
                                "the compaction was planned on snapshot {:?}, the table is at \
                                 {now:?} now: plan again",
                                task.snapshot_id
                            ),
                        },
                    ));
                }
                Ok(crate::compact_append::execute(self, &planned).await?.0)
            }
        }
    }
}

/// The append planner's options for `options`.
fn append_options(options: &CompactOptions) -> AppendCompactOptions {
    AppendCompactOptions {
        full: options.full,
        partition: if options.partition.is_empty() {
            None
        } else {
            Some(options.partition.clone().into_iter().collect())
        },
        bucket: options.bucket,
    }
}

/// Whether the scan's options enable deletion vectors.
fn dv(scan: &Plan) -> bool {
    paimon_kernel::spec::CoreOptions::new(scan.options.clone())
        .deletion_vectors_enabled()
        .unwrap_or(true)
}

/// A one-task job plan over `scan`.
fn job_plan(
    scan: &Plan,
    tasks: AppendJobTasks,
    key: (BinaryRow, i32),
    bucket_path: &str,
    partition_fields: &[DataField],
) -> AppendJobPlan {
    AppendJobPlan {
        scan: scan.clone(),
        tasks,
        bucket_paths: BTreeMap::from([(key, bucket_path.to_string())]),
        partition_fields: partition_fields.to_vec(),
        data_evolution: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use paimon_kernel::canonical;

    async fn rows(table: &Table) -> Vec<String> {
        let batches = table.scan().to_batches().await.unwrap();
        let mut out: Vec<String> = canonical::batches_rows(&batches)
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        out.sort();
        out
    }

    async fn write(table: &Table, ids: std::ops::Range<i64>) {
        use arrow_array::{ArrayRef, Int64Array, RecordBatch};
        let schema = arrow_schema::Schema::new(vec![
            arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
            arrow_schema::Field::new("v", arrow_schema::DataType::Int64, true),
        ]);
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(ids.clone()));
        let batch = RecordBatch::try_new(Arc::new(schema), vec![ids.clone(), ids]).unwrap();
        let mut w = table.new_write().await.unwrap();
        w.write(&batch).await.unwrap();
        let m = w.prepare_commit().await.unwrap();
        table.new_commit(None).commit(m).await.unwrap();
    }

    /// Tasks planned, serialized, run one by one and committed once give the rows and the
    /// files per bucket of `Table::compact` on a copy of the same table.
    async fn same_as_compact(schema: &str) {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let ta = Table::create(a.to_str().unwrap(), schema.as_bytes())
            .await
            .unwrap();
        let tb = Table::create(b.to_str().unwrap(), schema.as_bytes())
            .await
            .unwrap();
        for i in 0..3 {
            write(&ta, i * 10..i * 10 + 15).await;
            write(&tb, i * 10..i * 10 + 15).await;
        }
        let options = CompactOptions {
            full: true,
            ..Default::default()
        };
        let tasks = ta.plan_compaction_tasks(&options).await.unwrap();
        assert!(!tasks.is_empty());
        let mut messages = Vec::new();
        for task in &tasks {
            let bytes = serde_json::to_vec(task).unwrap();
            let task: CompactTask = serde_json::from_slice(&bytes).unwrap();
            messages.extend(ta.run_compaction_task(&task).await.unwrap());
        }
        ta.new_commit(None).commit(messages).await.unwrap();
        tb.compact(options.clone()).await.unwrap();
        assert_eq!(rows(&ta).await, rows(&tb).await);
        let per_bucket = |files: Vec<crate::system::FileRow>| {
            let mut v: Vec<(i32, i32, i64)> = files
                .iter()
                .map(|f| (f.bucket, f.level, f.record_count))
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            per_bucket(ta.scan().files().await.unwrap()),
            per_bucket(tb.scan().files().await.unwrap())
        );
        assert!(ta.plan_compaction_tasks(&options).await.unwrap().is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn primary_key_tasks_match_compact() {
        same_as_compact(
            r#"{"fields": [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "BIGINT"}],
                "primaryKeys": ["id"], "options": {"bucket": "2"}}"#,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn append_tasks_match_compact() {
        same_as_compact(
            r#"{"fields": [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "BIGINT"}],
                "options": {"compaction.min.file-num": "2"}}"#,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_task_planned_before_a_competing_compaction_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().join("t");
        let schema = r#"{"fields": [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "BIGINT"}],
            "primaryKeys": ["id"], "options": {"bucket": "1"}}"#;
        let t = Table::create(loc.to_str().unwrap(), schema.as_bytes())
            .await
            .unwrap();
        write(&t, 0..10).await;
        write(&t, 5..20).await;
        let options = CompactOptions {
            full: true,
            ..Default::default()
        };
        let tasks = t.plan_compaction_tasks(&options).await.unwrap();
        let messages = t.run_compaction_task(&tasks[0]).await.unwrap();
        t.compact(options.clone()).await.unwrap();
        let err = t.new_commit(None).commit(messages).await.unwrap_err();
        assert!(err.to_string().contains("commit conflict"), "{err}");
        assert_eq!(rows(&t).await.len(), 20);
    }
}
