//! Compaction of primary-key tables from the host: plan on the latest snapshot, run the
//! bucket tasks concurrently, commit their messages as one `COMPACT` snapshot.
//!
//! ```no_run
//! # async fn demo() -> paimon_native::Result<()> {
//! use paimon_native::Table;
//! use paimon_native::compact::CompactOptions;
//! let table = Table::open("file:///tmp/warehouse/db.db/t").await?;
//! let plan = table.plan_compaction(true).await?;
//! println!("{} units", plan.units.len());
//! let report = table.compact(CompactOptions { full: true, ..Default::default() }).await?;
//! println!("snapshot {:?}", report.snapshot);
//! # Ok(()) }
//! ```
//!
//! Tables without primary key go to [`crate::compact_append`] (append and data-evolution
//! compaction, Java's append and data-evolution coordinators), reported in the same shape
//! (output level 0, one entry per task).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use serde::Serialize;

use paimon_kernel::commit::CommitMessage;
use paimon_kernel::compact::CompactionPlan;
use paimon_kernel::compact::pk::{
    PkCompactContext, PkCompactRequest, PkCompactStats, PkCompactTask, compact_task_machine,
    plan_pk_compaction, plan_summary,
};
use paimon_kernel::spec::{DataFileMeta, IndexManifestEntry, ManifestEntry, Snapshot};

use paimon_kernel::job;

use crate::error::{Error, Result};
use crate::table::Table;
use crate::write::{now_millis, random_seed};

/// Bucket tasks run at the same time: the cores this process may use, between 1 and 4. Each
/// task merges and writes one bucket on one core (~65 MiB at a time for buckets of a few
/// hundred thousand rows), so more tasks than cores only add memory.
fn task_concurrency() -> usize {
    crate::host::cores().min(4)
}

/// What [`Table::compact`] compacts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactOptions {
    /// Full compaction: every sorted run of a bucket to the max level. Otherwise the
    /// table's strategy (universal compaction; forced level-0 compaction for lookup tables)
    /// picks per bucket, as one trigger of Java's compaction. Deletion-vector tables are
    /// always compacted fully (their vectors are folded into the rewritten files).
    pub full: bool,
    /// Only partitions matching `key → value` (text; the table's `partition.default-name`
    /// means NULL); empty: every partition.
    pub partition: BTreeMap<String, String>,
    /// Only this bucket.
    pub bucket: Option<i32>,
    /// Commit user (default: a random UUID).
    pub commit_user: Option<String>,
    /// The compaction's current time, epoch millis (default: the host's clock): what
    /// record-level expiry (`record-level.expire-time`) compares the rows' time field with,
    /// and the time of early full compaction and off-peak hours. Outputs still get the
    /// clock's creation time.
    pub now_millis: Option<i64>,
}

/// What [`Table::compact`] did to one bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BucketCompaction {
    /// Partition values by key (JSON; empty for unpartitioned tables).
    pub partition: serde_json::Map<String, serde_json::Value>,
    /// The bucket.
    pub bucket: i32,
    /// The output level.
    pub output_level: i32,
    /// Input files (rewritten or upgraded).
    pub files_in: usize,
    /// Σ size of the input files, bytes.
    pub bytes_in: i64,
    /// Output files (new files and upgraded files at their new level).
    pub files_out: usize,
    /// Σ size of the outputs, bytes.
    pub bytes_out: i64,
    /// Files moved to the output level without a rewrite.
    pub upgraded_files: usize,
    /// Files read and rewritten.
    pub rewritten_files: usize,
    /// Files per level after the compaction (level → count), this bucket's.
    pub levels_after: BTreeMap<i32, usize>,
    /// Changelog files written (`changelog-producer` `lookup` / `full-compaction`).
    pub changelog_files: usize,
    /// Records in those changelog files.
    pub changelog_rows: i64,
}

/// What [`Table::compact`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CompactReport {
    /// The snapshot compacted.
    pub base_snapshot: Option<i64>,
    /// The `COMPACT` snapshot committed (`None` when there was nothing to compact).
    pub snapshot: Option<i64>,
    /// One entry per compacted bucket, in (partition, bucket) order.
    pub buckets: Vec<BucketCompaction>,
    /// The commit stands but its maintenance (expiry, automatic tags) failed: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maintenance_warning: Option<String>,
}

impl Table {
    /// The compaction a [`Table::compact`] with `full` would do now: one unit per bucket.
    ///
    /// # Errors
    /// Reading the snapshot; `Unsupported` for primary-key features whose
    /// compaction is not implemented (postpone buckets).
    pub async fn plan_compaction(&self, full: bool) -> Result<CompactionPlan> {
        let schema = self.schema().await?;
        if !schema.is_primary_key_table() {
            return crate::compact_append::plan(self, full).await;
        }
        if is_postpone(&schema) {
            let options = CompactOptions {
                full,
                ..Default::default()
            };
            return crate::compact_postpone::plan(self, &options).await;
        }
        let (plan, _, _) = self
            .plan_tasks(&CompactOptions {
                full,
                ..Default::default()
            })
            .await?;
        Ok(plan)
    }

    /// [`Table::compact`] of an append or data-evolution table
    /// ([`crate::compact_append::run`]), reported per task (output level 0).
    async fn compact_append(&self, options: CompactOptions) -> Result<CompactReport> {
        let report = crate::compact_append::run(
            self,
            &crate::compact_append::AppendCompactOptions {
                full: options.full,
                partition: if options.partition.is_empty() {
                    None
                } else {
                    Some(options.partition.into_iter().collect())
                },
                bucket: options.bucket,
            },
        )
        .await?;
        Ok(CompactReport {
            base_snapshot: report.planned_on,
            snapshot: report.snapshot_id,
            maintenance_warning: report.maintenance_warning,
            buckets: report
                .tasks
                .into_iter()
                .map(|t| BucketCompaction {
                    partition: t.partition,
                    bucket: t.bucket,
                    output_level: 0,
                    files_in: t.files_in.len(),
                    bytes_in: t.bytes_in,
                    files_out: t.files_out.len(),
                    bytes_out: t.bytes_out,
                    upgraded_files: 0,
                    rewritten_files: t.files_in.len(),
                    levels_after: BTreeMap::new(),
                    changelog_files: 0,
                    changelog_rows: 0,
                })
                .collect(),
        })
    }

    pub(crate) async fn plan_tasks(
        &self,
        options: &CompactOptions,
    ) -> Result<(CompactionPlan, Vec<PkCompactTask>, Option<PlanInputs>)> {
        let context = format!("planning the compaction of table {}", self.location());
        let schema = self.schema().await?;
        paimon_kernel::compact::pk::check_supported(&schema)
            .map_err(|e| Error::kernel(&context, e))?;
        let Some(files) = self.scan().data_files().await? else {
            return Ok((CompactionPlan::default(), Vec::new(), None));
        };
        let index_entries = self
            .dv_index_entries(&files.schema, &files.snapshot)
            .await?;
        let request = PkCompactRequest {
            full: options.full,
            partition: options.partition.clone(),
            bucket: options.bucket,
            now_millis: options.now_millis.unwrap_or_else(now_millis),
            index_entries,
            schemas: files.schemas.clone(),
        };
        let tasks = plan_pk_compaction(&files.schema, &files.entries, &request)
            .map_err(|e| Error::kernel(&context, e))?;
        let plan = plan_summary(&files.schema, Some(files.snapshot.id), &tasks)
            .map_err(|e| Error::kernel(&context, e))?;
        Ok((
            plan,
            tasks,
            Some(PlanInputs {
                snapshot: files.snapshot.id,
                schema: files.schema,
                schemas: files.schemas,
                entries: files.entries,
            }),
        ))
    }

    /// Run the compaction [`Table::compact`] would run, without committing it: the commit
    /// messages of every task (compaction increments, the changelog files and deletion-vector
    /// index files they write; data-evolution tables also the index-only messages that move
    /// deletion vectors), in plan order, for [`TableCommit::commit`](crate::TableCommit::commit)
    /// here or elsewhere (they travel as Java `CommitMessageSerializer` bytes through
    /// `paimon_kernel::commit::serializer`). The files are written; nothing is published, and
    /// the caller deletes them (e.g. [`TableCommit::abort`](crate::TableCommit::abort)) when it
    /// does not commit. Empty when there is nothing to compact.
    ///
    /// # Errors
    /// As [`Table::compact`] before its commit; postpone-bucket tables are `Unsupported`
    /// (their compaction rewrites buckets and commits in steps).
    pub async fn prepare_compaction(&self, options: CompactOptions) -> Result<Vec<CommitMessage>> {
        let schema = self.schema().await?;
        if !schema.is_primary_key_table() {
            return crate::compact_append::prepare_messages(
                self,
                &crate::compact_append::AppendCompactOptions {
                    full: options.full,
                    partition: if options.partition.is_empty() {
                        None
                    } else {
                        Some(options.partition.into_iter().collect())
                    },
                    bucket: options.bucket,
                },
            )
            .await;
        }
        if is_postpone(&schema) {
            return Err(Error::kernel(
                format!("preparing the compaction of table {}", self.location()),
                paimon_kernel::Error::unsupported(
                    "a compaction of a postpone-bucket table (bucket = -2) without its commit",
                ),
            ));
        }
        let (_, tasks, inputs) = self.plan_tasks(&options).await?;
        let Some(inputs) = inputs else {
            return Ok(Vec::new());
        };
        if tasks.is_empty() {
            return Ok(Vec::new());
        }
        let (messages, _) = self.run_planned_tasks(&tasks, &inputs).await?;
        Ok(messages)
    }

    /// Compact the table: plan on the latest snapshot, run every bucket's task (inputs
    /// merged with the table's merge engine, outputs written at the output level), commit
    /// the results as one `COMPACT` snapshot. Nothing to compact: no commit, an empty
    /// report.
    ///
    /// # Errors
    /// As [`Table::plan_compaction`]; read, merge and write errors of a task (its outputs
    /// are deleted); commit errors, e.g. `CommitConflict` when a concurrent commit removed
    /// an input file (the outputs are deleted, nothing is visible), also raised by a task
    /// when expiry already deleted that file.
    pub async fn compact(&self, options: CompactOptions) -> Result<CompactReport> {
        let schema = self.schema().await?;
        if !schema.is_primary_key_table() {
            return self.compact_append(options).await;
        }
        if is_postpone(&schema) {
            return crate::compact_postpone::run(self, &options).await;
        }
        let (plan, tasks, inputs) = self.plan_tasks(&options).await?;
        let Some(inputs) = inputs else {
            return Ok(CompactReport::default());
        };
        if tasks.is_empty() {
            return Ok(CompactReport {
                base_snapshot: Some(inputs.snapshot),
                ..Default::default()
            });
        }
        let (messages, stats) = self.run_planned_tasks(&tasks, &inputs).await?;
        let commit = self.new_commit(options.commit_user.clone());
        let outcome = match commit.commit(messages.clone()).await {
            Ok(o) => o,
            Err(e) => {
                let _ = commit.abort(messages).await;
                return Err(e);
            }
        };
        let mut buckets = Vec::new();
        for ((unit, m), s) in plan_units(&plan, &tasks)
            .into_iter()
            .zip(&messages)
            .zip(stats)
        {
            let c = &m.compact_increment;
            let size = |v: &[DataFileMeta]| v.iter().map(|f| f.file_size).sum::<i64>();
            let levels_after = levels_after(&inputs.entries, m);
            buckets.push(BucketCompaction {
                partition: unit.0,
                bucket: m.bucket,
                output_level: unit.1,
                files_in: c.compact_before.len(),
                bytes_in: size(&c.compact_before),
                files_out: c.compact_after.len(),
                bytes_out: size(&c.compact_after),
                upgraded_files: s.upgraded_files,
                rewritten_files: s.rewritten_files,
                levels_after,
                changelog_files: c.changelog_files.len(),
                changelog_rows: c.changelog_files.iter().map(|f| f.row_count).sum(),
            });
        }
        Ok(CompactReport {
            base_snapshot: Some(inputs.snapshot),
            snapshot: outcome.snapshot_ids.last().copied(),
            buckets,
            maintenance_warning: outcome.maintenance_warning,
        })
    }
}

impl Table {
    /// The index manifest entries of `snapshot` when `schema` has deletion vectors (where
    /// the planner finds each data file's vector); empty otherwise.
    pub(crate) async fn dv_index_entries(
        &self,
        schema: &paimon_kernel::spec::TableSchema,
        snapshot: &Snapshot,
    ) -> Result<Vec<IndexManifestEntry>> {
        let enabled = schema
            .core_options()
            .deletion_vectors_enabled()
            .map_err(|e| Error::kernel(format!("table {}", self.location()), e))?;
        if !enabled || snapshot.index_manifest.is_none() {
            return Ok(Vec::new());
        }
        let snapshot = snapshot.clone();
        self.run(
            "IndexManifestReader",
            format!("reading the index manifest of snapshot {}", snapshot.id),
            move |io| async move {
                paimon_kernel::scan::planner::read_index_entries(&io, &snapshot).await
            },
        )
        .await
    }

    /// Run `tasks` concurrently; on a failure, delete the outputs of the tasks that
    /// finished and return the first error.
    /// [`Table::run_compact_tasks`] of tasks planned on `inputs`, an input that vanished
    /// meanwhile told as a conflict ([`vanished_input_as_conflict`]).
    async fn run_planned_tasks(
        &self,
        tasks: &[PkCompactTask],
        inputs: &PlanInputs,
    ) -> Result<(Vec<CommitMessage>, Vec<PkCompactStats>)> {
        match self
            .run_compact_tasks(tasks, &inputs.schema, &inputs.schemas)
            .await
        {
            Ok(done) => Ok(done),
            Err(e) => {
                let is_input = |name: &str| inputs.entries.iter().any(|e| e.file.file_name == name);
                Err(vanished_input_as_conflict(self, Some(inputs.snapshot), is_input, e).await)
            }
        }
    }

    pub(crate) async fn run_compact_tasks(
        &self,
        tasks: &[PkCompactTask],
        schema: &paimon_kernel::spec::TableSchema,
        schemas: &BTreeMap<i64, paimon_kernel::spec::TableSchema>,
    ) -> Result<(Vec<CommitMessage>, Vec<PkCompactStats>)> {
        let time_millis = now_millis();
        let host = self.host().clone();
        let location = self.location().to_owned();
        let outcomes: Vec<Result<(CommitMessage, PkCompactStats)>> =
            futures::stream::iter(tasks.iter().cloned().map(|task| {
                let ctx = Arc::new(PkCompactContext {
                    schema: schema.clone(),
                    schemas: schemas.clone(),
                    seed: random_seed(),
                    time_millis,
                    batch_size: paimon_kernel::read::DEFAULT_BATCH_SIZE,
                });
                let host = host.clone();
                let what = format!("compacting bucket {} of table {location}", task.bucket);
                async move {
                    let machine = compact_task_machine(ctx, task).describe(what);
                    host.run_once(machine).await
                }
            }))
            .buffered(task_concurrency())
            .collect()
            .await;
        let mut messages = Vec::new();
        let mut stats = Vec::new();
        let mut failure = None;
        for o in outcomes {
            match o {
                Ok((m, s)) => {
                    messages.push(m);
                    stats.push(s);
                }
                Err(e) if failure.is_none() => failure = Some(e),
                Err(_) => {}
            }
        }
        if let Some(e) = failure {
            let _ = self.new_commit(None).abort(messages).await;
            return Err(e);
        }
        Ok((messages, stats))
    }
}

/// Level-0 compaction of a batch write to a lookup table (first-row, `changelog-producer =
/// lookup`, `force-lookup`, deletion vectors; not with `write-only`), before its commit.
/// With `ignore_previous_files` (an overwrite) only the write's own files are compacted.
///
/// Java's batch writers of lookup tables wait at `prepareCommit` until level 0 is
/// compacted (`MergeTreeCompactManager#compactNotCompleted`), because batch reads of
/// first-row and deletion-vector tables skip level 0: without it such a table written by a
/// batch job would read empty. For each bucket the write touched, the bucket's live files
/// plus the write's new level-0 files are planned with the table's strategy (first-row
/// and deletion-vector tables force level 0 up; the latter mark the rows the outputs replace
/// in the bucket's vector index) and compacted; the
/// compact increment goes into the bucket's message (the new files appear in `new_files`
/// and `compact_before`: the commit publishes an `APPEND` and a `COMPACT` snapshot). Other
/// tables: `messages` unchanged.
///
/// Returns the messages and the paths of the compaction outputs (for an abort).
///
/// # Errors
/// Reading the table's files, compaction task errors (their outputs are deleted).
pub(crate) async fn compact_level0_after_write(
    table: &Table,
    messages: Vec<CommitMessage>,
    ignore_previous_files: bool,
) -> Result<(Vec<CommitMessage>, Vec<String>)> {
    let context = format!(
        "compacting level 0 of a write to table {}",
        table.location()
    );
    let schema = table.schema().await?;
    let lookup = paimon_kernel::job::compacts_level0_after_write(&schema)
        .map_err(|e| Error::kernel(&context, e))?;
    if !lookup
        || messages
            .iter()
            .all(|m| m.data_increment.new_files.is_empty())
    {
        return Ok((messages, Vec::new()));
    }
    let previous = if ignore_previous_files {
        None
    } else {
        table.scan().data_files().await?
    };
    let (entries, schemas, index_entries) = match previous {
        Some(f) => {
            let index = table.dv_index_entries(&schema, &f.snapshot).await?;
            (f.entries, f.schemas, index)
        }
        None => (Vec::new(), BTreeMap::new(), Vec::new()),
    };
    let touched = job::touched_buckets(&messages);
    compact_buckets(
        table,
        &schema,
        schemas,
        entries,
        index_entries,
        messages,
        &touched,
        false,
        now_millis(),
    )
    .await
}

/// Compact buckets `touched` ((serialized partition, bucket)) of `messages` once with
/// `schema`'s strategy (`full`: fully) at `now_millis` (epoch millis: record-level expiry, early
/// full compaction), over `entries` (the buckets' live files) plus the
/// messages' new files; each task's compact increment goes into its bucket's message.
/// Returns the messages and the paths the compactions wrote (for an abort).
///
/// # Errors
/// Planning and task errors (the tasks' outputs are deleted).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn compact_buckets(
    table: &Table,
    schema: &paimon_kernel::spec::TableSchema,
    mut schemas: BTreeMap<i64, paimon_kernel::spec::TableSchema>,
    entries: Vec<ManifestEntry>,
    index_entries: Vec<IndexManifestEntry>,
    mut messages: Vec<CommitMessage>,
    touched: &[(Vec<u8>, i32)],
    full: bool,
    now_millis: i64,
) -> Result<(Vec<CommitMessage>, Vec<String>)> {
    let context = format!(
        "compacting the written buckets of table {}",
        table.location()
    );
    schemas.insert(schema.id, schema.clone());
    let request = PkCompactRequest {
        full,
        now_millis,
        index_entries,
        schemas: schemas.clone(),
        ..Default::default()
    };
    let tasks = job::plan_written_buckets(schema, entries, &messages, touched, &request)
        .map_err(|e| Error::kernel(&context, e))?;
    let (results, _) = table.run_compact_tasks(&tasks, schema, &schemas).await?;
    // Everything the compactions wrote: outputs, changelog and index files.
    let outputs = paimon_kernel::commit::abort_paths(schema, &results)
        .map_err(|e| Error::kernel(&context, e))?;
    job::fold_compact_results(&mut messages, results);
    Ok((messages, outputs))
}

/// A primary-key table with `bucket` = -2 (an invalid `bucket` is reported by the planner).
fn is_postpone(schema: &paimon_kernel::spec::TableSchema) -> bool {
    schema.core_options().bucket().ok() == Some(paimon_kernel::spec::partition::POSTPONE_BUCKET)
}

/// What planning read, kept for running the tasks.
pub(crate) struct PlanInputs {
    pub(crate) snapshot: i64,
    pub(crate) schema: paimon_kernel::spec::TableSchema,
    pub(crate) schemas: BTreeMap<i64, paimon_kernel::spec::TableSchema>,
    pub(crate) entries: Vec<ManifestEntry>,
}

/// (partition JSON, output level) of each task, in task order.
fn plan_units(
    plan: &CompactionPlan,
    tasks: &[PkCompactTask],
) -> Vec<(serde_json::Map<String, serde_json::Value>, i32)> {
    tasks
        .iter()
        .map(|t| {
            let first = t.unit.files.iter().map(|f| f.file_name.as_str()).min();
            let partition = plan
                .units
                .iter()
                .find(|u| u.bucket == t.bucket && u.files.first().map(String::as_str) == first)
                .map(|u| u.partition.clone())
                .unwrap_or_default();
            (partition, t.unit.output_level)
        })
        .collect()
}

/// Files per level of the message's bucket after applying it to `entries`.
pub(crate) fn levels_after(entries: &[ManifestEntry], m: &CommitMessage) -> BTreeMap<i32, usize> {
    let c = &m.compact_increment;
    let key = |f: &DataFileMeta| (f.file_name.clone(), f.level);
    let removed: Vec<(String, i32)> = c.compact_before.iter().map(key).collect();
    let mut out = BTreeMap::new();
    for e in entries {
        if e.bucket != m.bucket || e.partition != m.partition {
            continue;
        }
        if removed.contains(&key(&e.file)) {
            continue;
        }
        *out.entry(e.file.level).or_insert(0) += 1;
    }
    for f in &c.compact_after {
        *out.entry(f.level).or_insert(0) += 1;
    }
    out
}

/// A compaction's `error`, told as the conflict it is when an input vanished under it: a
/// task found an input data file (`is_input` of its name) `NotFound`, and the table's latest
/// snapshot, a later one than `planned_on`, no longer holds that file. A concurrent commit
/// replaced it (an overwrite, another compaction) and expiry deleted it; running the same
/// tasks again cannot succeed, planning again can. Any other error, and a missing file that
/// the latest snapshot still holds (a damaged table), is returned as it is.
pub(crate) async fn vanished_input_as_conflict(
    table: &Table,
    planned_on: Option<i64>,
    is_input: impl Fn(&str) -> bool,
    error: Error,
) -> Error {
    let Error::Kernel { context, source } = &error else {
        return error;
    };
    let Some(path) = missing_path(source) else {
        return error;
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    if !is_input(name) {
        return error;
    }
    let latest = match table.scan().data_files().await {
        Ok(Some(files)) => files,
        _ => return error,
    };
    if Some(latest.snapshot.id) == planned_on
        || latest.entries.iter().any(|e| e.file.file_name == name)
    {
        return error;
    }
    let planned = planned_on.map_or_else(|| "no snapshot".to_string(), |id| id.to_string());
    Error::kernel(
        context.clone(),
        paimon_kernel::Error::CommitConflict {
            detail: format!(
                "input data file {path} of the compaction planned on snapshot {planned} is gone: \
                 the latest snapshot {} no longer holds it (a concurrent commit replaced it and \
                 expiry deleted it); plan the compaction again",
                latest.snapshot.id
            ),
        },
    )
}

/// The path of a `NotFound` IO failure, under any context the core wrapped it in.
fn missing_path(error: &paimon_kernel::Error) -> Option<&str> {
    match error {
        paimon_kernel::Error::Io {
            path,
            kind: paimon_kernel::io::IoErrorKind::NotFound,
            ..
        } => Some(path),
        paimon_kernel::Error::Context { source, .. } => missing_path(source),
        _ => None,
    }
}
