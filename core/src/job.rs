//! Whole write and compaction jobs as single operations over one [`Io`]: what a host with
//! one writer and no runtime of its own (the browser page) runs to write rows or compact a
//! table, on the same core code the native host drives piece by piece.
//!
//! ```text
//! write_job(io, batches, job)     latest schema and snapshot (and hash index)
//!                                 per batch: the live files of its new partitions, then the
//!                                 completed data files Put (create-new)
//!                                 prepare-commit; lookup tables: level 0 compacted
//!                                 commit (APPEND / OVERWRITE, then COMPACT)
//!                                 the table's maintenance after the commit
//! compact_job(io, full, settings) primary-key tables: the latest snapshot's live files,
//!                                 the primary-key planner, every bucket task; append and
//!                                 data-evolution tables: crate::compact::append_job's plan
//!                                 and rewrites; then one COMPACT commit
//! ```
//!
//! Time, the commit user and the seed of new names come from [`JobSettings`] (the host's), so
//! the same inputs give the same requests on every host. A job that fails before its
//! snapshot is published deletes every file it wrote (best effort) and returns the error;
//! nothing of it is visible. Lost commit races are retried by the commit itself
//! (`commit.max-retries`); a host with several writers should use its own loop with a backoff
//! (the native host does).
//!
//! Source: Java `org.apache.paimon.table.sink.BatchWriteBuilder` / `BatchTableWrite` /
//! `BatchTableCommit` (a batch write and its commit), `MergeTreeWriter#prepareCommit` with
//! `waitCompaction` (lookup tables compact level 0 before the commit),
//! `TableCommitImpl.maintain`, and for [`compact_job`] the batch `CompactAction`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
use bytes::Bytes;
use futures_util::future::{join_all, try_join_all};
use serde::{Deserialize, Serialize};

use crate::canonical::input::{InputFormat, batches_from_bytes};
use crate::commit::after_commit::{MaintainPlan, maintain};
use crate::commit::{
    CommitMessage, CommitMode, CommitOptions, CommitOutcome, CompactIncrement, DataIncrement,
    abort_paths, commit,
};
use crate::compact::append_job::{AppendJobOptions, plan_append_job, run_append_job};
use crate::compact::pk::{
    PkCompactContext, PkCompactRequest, PkCompactStats, PkCompactTask, check_supported,
    plan_pk_compaction, run_compact_task,
};
use crate::error::{Error, Result};
use crate::io::FileToPut;
use crate::io::Io;
use crate::scan::planner::{INDEX_DIR, read_index_entries, read_live_entries};
use crate::scan::snapshot_resolver::{
    latest_snapshot_id, read_latest_schema, read_schema, read_snapshot,
};
use crate::spec::partition::POSTPONE_BUCKET;
use crate::spec::snapshot::BATCH_COMMIT_IDENTIFIER;
use crate::spec::special_fields::ROW_KIND_COLUMN;
use crate::spec::{
    ChangelogProducer, DataField, FileKind, IndexManifestEntry, ManifestEntry, MergeEngine,
    Snapshot, TableSchema,
};
use crate::types::paimon_to_arrow_schema;
use crate::util::NameSource;
use crate::write::kv::dynamic_bucket::{HashIndexRestore, decode_hash_index};
use crate::write::restore::{read_partition_entries, restores_files};
use crate::write::{TableWrite, WriteOptions, WriteRestore};

/// What a job takes from its host: who commits, when, and the seed of every new name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSettings {
    /// The commit user (Java's batch writes use a random UUID).
    pub commit_user: String,
    /// "Now" in epoch millis: the files' creation time, the snapshots' `timeMillis`, the
    /// maintenance after the commit.
    pub time_millis: i64,
    /// Seed of the names of new files (data, manifests, changelog, index).
    pub seed: u64,
    /// The table's root URI as readers will reach it (`file:///warehouse/db.db/t`,
    /// `s3://bucket/t`): managed BLOB descriptors name their packs by full URI, so writes to
    /// tables with managed BLOB columns need it (they fail naming it otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_uri: Option<String>,
}

/// How [`write_job`] commits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteMode {
    /// Add the rows (`APPEND`; a lookup table's level-0 compaction adds a `COMPACT`).
    #[default]
    Append,
    /// Replace data as Java's `INSERT OVERWRITE`: `partition` (`key → value` text) replaces
    /// that static partition; `None` follows the table's `dynamic-partition-overwrite`
    /// (default true: only the partitions the rows are in; an unpartitioned table whole).
    Overwrite {
        /// The static partition; `None`: dynamic or whole-table overwrite.
        partition: Option<BTreeMap<String, String>>,
    },
}

/// What [`write_job`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteJobOutcome {
    /// Rows written.
    pub rows: u64,
    /// Data files written (before a lookup table's level-0 compaction).
    pub data_files: usize,
    /// The commit.
    pub commit: CommitOutcome,
}

/// What [`compact_job`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactJobOutcome {
    /// The snapshot planned on (`None`: an empty table).
    pub base_snapshot: Option<i64>,
    /// Bucket tasks run (0: nothing to compact, no commit).
    pub tasks: usize,
    /// Files read and files written by the tasks.
    pub files_in: usize,
    /// Files written.
    pub files_out: usize,
    /// The commit (default when there was nothing to compact).
    pub commit: CommitOutcome,
}

/// The live data files of the latest snapshot with the schemas they need.
#[derive(Debug, Clone)]
pub struct LiveFiles {
    /// The latest snapshot.
    pub snapshot: Snapshot,
    /// The table's latest schema.
    pub schema: TableSchema,
    /// Every schema a live file refers to, by id (includes `schema`).
    pub schemas: BTreeMap<i64, TableSchema>,
    /// Live `Add` entries in manifest order.
    pub entries: Vec<ManifestEntry>,
}

/// The latest schema of the table at the IO root.
///
/// # Errors
/// [`Error::Invalid`] when there is no schema file (not a table); IO and decode errors.
pub async fn latest_schema<T>(io: &Io<T>) -> Result<TableSchema> {
    read_latest_schema(io)
        .await?
        .ok_or_else(|| Error::invalid("not a Paimon table: no schema file under schema/"))
}

/// The latest snapshot (`None` for a table without one).
///
/// # Errors
/// IO and decode errors.
pub async fn latest_snapshot<T>(io: &Io<T>) -> Result<Option<Snapshot>> {
    match latest_snapshot_id(io).await? {
        Some(id) => read_snapshot(io, id).await.map(Some),
        None => Ok(None),
    }
}

/// The live files of the latest snapshot, read with `schema` (the latest schema); `None`
/// without a snapshot.
///
/// # Errors
/// IO and decode errors of the manifests and schemas (naming the file).
pub async fn read_latest_live_files<T>(
    io: &Io<T>,
    schema: &TableSchema,
) -> Result<Option<LiveFiles>> {
    let Some(snapshot) = latest_snapshot(io).await? else {
        return Ok(None);
    };
    let entries = read_live_entries(io, &snapshot).await?;
    let ids: BTreeSet<i64> = entries
        .iter()
        .map(|e| e.file.schema_id)
        .filter(|id| *id != schema.id)
        .collect();
    let others = try_join_all(ids.iter().map(|id| read_schema(io, *id))).await?;
    let mut schemas: BTreeMap<i64, TableSchema> = others.into_iter().map(|s| (s.id, s)).collect();
    schemas.insert(schema.id, schema.clone());
    Ok(Some(LiveFiles {
        snapshot,
        schema: schema.clone(),
        schemas,
        entries,
    }))
}

/// The live `HASH` index files of `snapshot` with their hashes (dynamic-bucket tables).
///
/// # Errors
/// IO and decode errors of the index manifest and index files.
pub async fn read_hash_index<T>(io: &Io<T>, snapshot: &Snapshot) -> Result<Vec<HashIndexRestore>> {
    let entries = read_index_entries(io, snapshot).await?;
    let wanted: Vec<IndexManifestEntry> = WriteRestore::hash_index_entries(&entries)
        .into_iter()
        .cloned()
        .collect();
    let hashes = try_join_all(wanted.iter().map(|e| async move {
        let path = e.index_file.path_in(INDEX_DIR);
        let bytes = io.read(&path).await?;
        decode_hash_index(&bytes, &path)
    }))
    .await?;
    Ok(wanted
        .into_iter()
        .zip(hashes)
        .map(|(e, hashes)| HashIndexRestore {
            partition: e.partition.to_serialized(),
            bucket: e.bucket,
            file: e.index_file,
            hashes,
        })
        .collect())
}

/// Whether a batch write to `schema`'s table compacts level 0 before its commit: primary-key
/// tables that need lookup (Java `CoreOptions#needLookup`: first-row, `changelog-producer =
/// lookup`, deletion vectors, `force-lookup`), unless `write-only` (or
/// `write.compaction-skip`) or postpone buckets.
///
/// # Errors
/// Malformed options (named).
pub fn compacts_level0_after_write(schema: &TableSchema) -> Result<bool> {
    if !schema.is_primary_key_table() {
        return Ok(false);
    }
    let options = schema.core_options();
    let need_lookup = options.deletion_vectors_enabled()?
        || options.merge_engine()? == MergeEngine::FirstRow
        || options.changelog_producer()? == ChangelogProducer::Lookup
        || flag(&schema.options, "force-lookup");
    let write_only =
        flag(&schema.options, "write-only") || flag(&schema.options, "write.compaction-skip");
    Ok(need_lookup && !write_only && options.bucket()? != POSTPONE_BUCKET)
}

fn flag(options: &BTreeMap<String, String>, key: &str) -> bool {
    options
        .get(key)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Put `files` create-new in one round (the [`crate::io::FilePart`]s of one path in order);
/// returns the paths of the files completed. On a failure the files of the round that were
/// written are deleted (best effort) and the first error returned.
///
/// # Errors
/// The first failed `Put` ([`Error::Io`] naming the path; `AlreadyExists` for a name taken).
pub async fn put_files<T>(io: &Io<T>, files: Vec<FileToPut>) -> Result<Vec<String>> {
    // The parts of one streamed file go one after the other; files go at once.
    let groups = crate::io::group_by_path(files);
    let done: Vec<(String, bool)> = groups
        .iter()
        .map(|g| (g[0].path.clone(), crate::io::completes_file(g)))
        .collect();
    let results = join_all(
        groups
            .into_iter()
            .map(|g| crate::io::put_files_in_order(io, g)),
    )
    .await;
    let mut written = Vec::new();
    let mut failure = None;
    for ((path, completes), r) in done.into_iter().zip(results) {
        match r {
            // An upload left open is completed by a later round (or aborted).
            Ok(true) if !completes => {}
            Ok(true) => written.push(path),
            Ok(false) => {
                failure.get_or_insert_with(|| {
                    Error::invalid(format!("new file {path} already exists (a name collision)"))
                });
            }
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    match failure {
        None => Ok(written),
        Some(e) => {
            delete_all(io, &written).await;
            Err(e)
        }
    }
}

/// Put what `writer` has ready, driving its flush in progress to the end
/// ([`TableWrite::continue_flush`]); `written` gets the completed files, `uploads` the
/// streamed files still open (to abort on a failure).
async fn put_flushed<T>(
    io: &Io<T>,
    writer: &mut TableWrite,
    written: &mut Vec<String>,
    uploads: &mut Vec<String>,
) -> Result<()> {
    loop {
        let puts = put_files(io, writer.take_files());
        *uploads = writer.open_uploads();
        written.extend(puts.await?);
        if !writer.continue_flush()? {
            return Ok(());
        }
    }
}

/// Delete `paths`, ignoring failures (cleanup after an error, which is the one to report).
pub async fn delete_all<T>(io: &Io<T>, paths: &[String]) {
    let _ = join_all(paths.iter().map(|p| io.delete(p))).await;
}

/// Write `batches` (columns by name, as [`TableWrite::write`] takes them) to the table at the
/// IO root and commit them; see the module docs.
///
/// # Errors
/// [`Error::Invalid`] naming the column and row for rows that do not fit the table, and for
/// a path that is not a table; [`Error::Unsupported`] for tables this job cannot write
/// (cross-partition updates, which need a merged read of the whole table to bootstrap their
/// key index, and the features [`TableWrite::try_new`] names); IO, compaction and commit
/// errors ([`Error::CommitConflict`], [`Error::PartlyPublished`] when a lookup table's
/// `APPEND` snapshot was published and its `COMPACT` snapshot failed: the written files then
/// stay, being referenced). After any other error nothing is visible and every file the job
/// wrote was deleted.
pub async fn write_job<T: Send + 'static>(
    io: &Io<T>,
    batches: &[RecordBatch],
    mode: &WriteMode,
    settings: &JobSettings,
) -> Result<WriteJobOutcome> {
    let schema = latest_schema(io).await?;
    write_batches(io, &schema, batches, mode, settings).await
}

/// Rows to write as the bytes of a whole input file (what a page gets from a dropped file).
#[derive(Debug, Clone)]
pub struct RowInput {
    /// The input's name, for errors (e.g. the file name).
    pub name: String,
    /// The file's bytes.
    pub bytes: Bytes,
    /// Its format.
    pub format: InputFormat,
}

/// The Arrow schema row inputs of `schema`'s table are read into: the table's columns, then a
/// nullable Utf8 `_ROW_KIND` column (`+I`, `-U`, `+U`, `-D`; primary-key tables), as the
/// CLI's `write` reads its input.
///
/// # Errors
/// A column type with no Arrow mapping (named).
pub fn row_input_schema(schema: &TableSchema) -> Result<SchemaRef> {
    let table = paimon_to_arrow_schema(&schema.fields)?;
    let mut fields: Vec<FieldRef> = table.fields().iter().cloned().collect();
    fields.push(Arc::new(Field::new(ROW_KIND_COLUMN, DataType::Utf8, true)));
    Ok(Arc::new(Schema::new(fields)))
}

/// [`write_job`] of the rows of `input`, parsed with [`batches_from_bytes`] into
/// [`row_input_schema`] of the latest schema.
///
/// # Errors
/// As [`write_job`]; [`Error::Invalid`] naming the input and line for input that does not
/// parse or fit (nothing is written then).
pub async fn write_input_job<T: Send + 'static>(
    io: &Io<T>,
    input: &RowInput,
    mode: &WriteMode,
    settings: &JobSettings,
) -> Result<WriteJobOutcome> {
    let schema = latest_schema(io).await?;
    let batches = batches_from_bytes(
        &input.name,
        input.bytes.clone(),
        input.format,
        &row_input_schema(&schema)?,
    )?;
    write_batches(io, &schema, &batches, mode, settings).await
}

/// [`write_job`] with the latest schema read already.
async fn write_batches<T: Send + 'static>(
    io: &Io<T>,
    schema: &TableSchema,
    batches: &[RecordBatch],
    mode: &WriteMode,
    settings: &JobSettings,
) -> Result<WriteJobOutcome> {
    let mut written = Vec::new();
    let mut uploads = Vec::new();
    match write_job_inner(
        io,
        schema,
        batches,
        mode,
        settings,
        &mut written,
        &mut uploads,
    )
    .await
    {
        Ok(outcome) => Ok(outcome),
        Err(e @ Error::PartlyPublished { .. }) => Err(e),
        Err(e) => {
            delete_all(io, &written).await;
            let _ = join_all(uploads.iter().map(|p| io.put_abort(p))).await;
            Err(e)
        }
    }
}

async fn write_job_inner<T: Send + 'static>(
    io: &Io<T>,
    schema: &TableSchema,
    batches: &[RecordBatch],
    mode: &WriteMode,
    settings: &JobSettings,
    written: &mut Vec<String>,
    uploads: &mut Vec<String>,
) -> Result<WriteJobOutcome> {
    let mut seeds = NameSource::new(settings.seed);
    let dynamic_bucket = schema.is_primary_key_table() && schema.core_options().bucket()? == -1;
    let mut restore = WriteRestore::default();
    let mut snapshot = None;
    let mut planner = None;
    if crate::write::kv::postpone_fixed::writes_fixed_buckets(schema)? {
        // A batch write of a postpone-bucket table goes into real buckets.
        let files = read_latest_live_files(io, schema).await?;
        let entries = files.as_ref().map_or(&[][..], |f| &f.entries[..]);
        let overwrite = matches!(mode, WriteMode::Overwrite { .. });
        planner = Some(
            crate::write::kv::postpone_fixed::PostponeBucketPlanner::try_new(
                schema, entries, overwrite,
            )?,
        );
        snapshot = files.map(|f| f.snapshot);
    } else if restores_files(schema).unwrap_or(true) {
        snapshot = latest_snapshot(io).await?;
        if let (Some(s), true) = (&snapshot, dynamic_bucket) {
            restore.hash_index = read_hash_index(io, s).await?;
        }
    }
    let mut writer = TableWrite::try_new(
        schema.clone(),
        restore,
        WriteOptions {
            seed: seeds.next_u64(),
            time_millis: settings.time_millis,
        },
    )?
    .with_commit_user(&settings.commit_user)?;
    if let Some(p) = planner {
        writer = writer.into_postpone_fixed_bucket(p)?;
    }
    if let Some(uri) = &settings.table_uri {
        writer = writer.with_table_uri(uri);
    }
    if let Some((keys, _)) = writer.cross_partition_columns() {
        return Err(Error::unsupported(format!(
            "cross-partition updates (primary key {} without every partition key) in a \
             one-shot write job: write such tables from the native host",
            keys.join(", ")
        )));
    }
    writer = writer.restore_on_demand();
    let partition_fields: Vec<DataField> =
        schema.partition_fields()?.into_iter().cloned().collect();
    let mut outcome = WriteJobOutcome::default();
    for batch in batches {
        let partitions = writer.partitions_to_restore(batch)?;
        if !partitions.is_empty() {
            let entries = match &snapshot {
                Some(s) => {
                    let set: BTreeSet<_> = partitions.iter().cloned().collect();
                    read_partition_entries(io, s, &set, &partition_fields).await?
                }
                None => Vec::new(),
            };
            writer.restore_partitions(&partitions, &entries)?;
        }
        let resolved;
        let batch = if crate::blob::references::has_blob_references(writer.schema(), batch)? {
            resolved = crate::blob::references::resolve_blob_references(io, writer.schema(), batch)
                .await?;
            &resolved
        } else {
            batch
        };
        writer.write(batch)?;
        outcome.rows += batch.num_rows() as u64;
        put_flushed(io, &mut writer, written, uploads).await?;
    }
    let mut messages = writer.prepare_commit()?;
    written.extend(put_files(io, writer.take_files()).await?);
    outcome.data_files = messages
        .iter()
        .map(|m| m.data_increment.new_files.len())
        .sum();
    let overwrite = matches!(mode, WriteMode::Overwrite { .. });
    if compacts_level0_after_write(schema)?
        && messages
            .iter()
            .any(|m| !m.data_increment.new_files.is_empty())
    {
        let previous = if overwrite {
            None
        } else {
            read_latest_live_files(io, schema).await?
        };
        let (entries, schemas, index_entries) = match previous {
            Some(f) => {
                let index = dv_index_entries(io, schema, &f.snapshot).await?;
                (f.entries, f.schemas, index)
            }
            None => (Vec::new(), BTreeMap::new(), Vec::new()),
        };
        let request = PkCompactRequest {
            now_millis: settings.time_millis,
            index_entries,
            schemas: schemas.clone(),
            ..Default::default()
        };
        let tasks = plan_written_buckets(
            schema,
            entries,
            &messages,
            &touched_buckets(&messages),
            &request,
        )?;
        let mut schemas = schemas;
        schemas.insert(schema.id, schema.clone());
        let (results, _) = run_tasks(
            io,
            schema,
            &schemas,
            tasks,
            &mut seeds,
            settings.time_millis,
            written,
        )
        .await?;
        fold_compact_results(&mut messages, results);
    }
    let options = CommitOptions::new(
        settings.commit_user.clone(),
        settings.time_millis,
        seeds.next_u64(),
    )
    .with_identifier(BATCH_COMMIT_IDENTIFIER);
    let commit_mode = match mode {
        WriteMode::Append => CommitMode::Append,
        WriteMode::Overwrite { partition } => CommitMode::Overwrite {
            partition_filter: partition.clone(),
            dynamic: partition.is_none()
                && schema
                    .options
                    .get("dynamic-partition-overwrite")
                    .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false")),
        },
    };
    // As Java, an overwrite commits no changelog: its changelog files are deleted after.
    let changelog = if overwrite {
        changelog_only(&messages)
    } else {
        Vec::new()
    };
    outcome.commit = commit(io, schema, messages, &commit_mode, &options).await?;
    if outcome.commit.snapshot_ids.is_empty() && outcome.commit.already_committed {
        // This user's batch commit is in the table already (Java applies a batch commit once
        // per user): nothing references what this run wrote.
        delete_all(io, written).await;
        written.clear();
        return Ok(outcome);
    }
    if !changelog.is_empty() {
        let paths = abort_paths(schema, &changelog)?;
        delete_all(io, &paths).await;
    }
    maintain_after(io, schema, settings, &mut outcome.commit).await;
    Ok(outcome)
}

/// The changelog files of `messages`, as messages holding nothing else (what an overwrite
/// deletes after its commit: Java commits no changelog for an overwrite).
pub fn changelog_only(messages: &[CommitMessage]) -> Vec<CommitMessage> {
    messages
        .iter()
        .filter(|m| {
            !m.data_increment.changelog_files.is_empty()
                || !m.compact_increment.changelog_files.is_empty()
        })
        .map(|m| CommitMessage {
            partition: m.partition.clone(),
            bucket: m.bucket,
            total_buckets: m.total_buckets,
            data_increment: DataIncrement {
                changelog_files: m.data_increment.changelog_files.clone(),
                ..Default::default()
            },
            compact_increment: CompactIncrement {
                changelog_files: m.compact_increment.changelog_files.clone(),
                ..Default::default()
            },
        })
        .collect()
}

/// Java's `TableCommitImpl.maintain` after a commit: a failure is reported in the outcome,
/// the commit stands.
async fn maintain_after<T>(
    io: &Io<T>,
    schema: &TableSchema,
    settings: &JobSettings,
    outcome: &mut CommitOutcome,
) {
    let plan = match MaintainPlan::from_options(&schema.core_options()) {
        Ok(Some(plan)) => plan,
        Ok(None) => return,
        Err(e) => {
            outcome.maintenance_warning = Some(e.to_string());
            return;
        }
    };
    let drop_commit = CommitOptions::new(
        settings.commit_user.clone(),
        settings.time_millis,
        NameSource::new(settings.seed ^ 0x6d61_696e).next_u64(),
    );
    match maintain(io, &plan, settings.time_millis, &drop_commit).await {
        Ok(done) => outcome.maintenance = Some(done),
        Err(e) => outcome.maintenance_warning = Some(e.to_string()),
    }
}

/// The index manifest entries of `snapshot` when `schema` has deletion vectors; empty
/// otherwise.
async fn dv_index_entries<T>(
    io: &Io<T>,
    schema: &TableSchema,
    snapshot: &Snapshot,
) -> Result<Vec<IndexManifestEntry>> {
    if !schema.core_options().deletion_vectors_enabled()? || snapshot.index_manifest.is_none() {
        return Ok(Vec::new());
    }
    read_index_entries(io, snapshot).await
}

/// The buckets (serialized partition, bucket) of `messages` that got new data files.
pub fn touched_buckets(messages: &[CommitMessage]) -> Vec<(Vec<u8>, i32)> {
    messages
        .iter()
        .filter(|m| !m.data_increment.new_files.is_empty())
        .map(|m| (m.partition.to_serialized(), m.bucket))
        .collect()
}

/// Plan the compaction of buckets `touched` ((serialized partition, bucket)) of a write once
/// with `request`, over `entries` (their live files; others are dropped) plus the messages'
/// new data files.
///
/// # Errors
/// As [`plan_pk_compaction`].
pub fn plan_written_buckets(
    schema: &TableSchema,
    mut entries: Vec<ManifestEntry>,
    messages: &[CommitMessage],
    touched: &[(Vec<u8>, i32)],
    request: &PkCompactRequest,
) -> Result<Vec<PkCompactTask>> {
    entries.retain(|e| touched.contains(&(e.partition.to_serialized(), e.bucket)));
    for m in messages {
        for f in &m.data_increment.new_files {
            entries.push(ManifestEntry {
                kind: FileKind::Add,
                partition: m.partition.clone(),
                bucket: m.bucket,
                total_buckets: m.total_buckets.unwrap_or(-1),
                file: f.clone(),
            });
        }
    }
    plan_pk_compaction(schema, &entries, request)
}

/// Put each task result's compact increment into the message of its bucket.
pub fn fold_compact_results(messages: &mut [CommitMessage], results: Vec<CommitMessage>) {
    for r in results {
        if let Some(m) = messages
            .iter_mut()
            .find(|m| m.partition == r.partition && m.bucket == r.bucket)
        {
            m.compact_increment = r.compact_increment;
        }
    }
}

/// Run `tasks` concurrently (one IO round carries all of their requests), each with its own
/// seed; every path a task wrote (outputs, changelog, index files) is added to `written`.
///
/// # Errors
/// The first task error (a failed task deletes its own outputs).
async fn run_tasks<T: Send + 'static>(
    io: &Io<T>,
    schema: &TableSchema,
    schemas: &BTreeMap<i64, TableSchema>,
    tasks: Vec<PkCompactTask>,
    seeds: &mut NameSource,
    time_millis: i64,
    written: &mut Vec<String>,
) -> Result<(Vec<CommitMessage>, Vec<PkCompactStats>)> {
    let runs = tasks.into_iter().map(|task| {
        let ctx = Arc::new(PkCompactContext {
            schema: schema.clone(),
            schemas: schemas.clone(),
            seed: seeds.next_u64(),
            time_millis,
            batch_size: crate::read::DEFAULT_BATCH_SIZE,
        });
        async move { run_compact_task(io, &ctx, &task).await }
    });
    let outcomes = join_all(runs.collect::<Vec<_>>()).await;
    let mut messages = Vec::new();
    let mut stats = Vec::new();
    let mut failure = None;
    for o in outcomes {
        match o {
            Ok((m, s)) => {
                messages.push(m);
                stats.push(s);
            }
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    written.extend(abort_paths(schema, &messages)?);
    match failure {
        Some(e) => Err(e),
        None => Ok((messages, stats)),
    }
}

/// Compact the table at the IO root once and commit the results as one `COMPACT` snapshot;
/// see the module docs. Primary-key tables: `full` compacts every sorted run of each bucket
/// to the max level, otherwise the table's strategy picks. Append and data-evolution tables:
/// the planners of [`crate::compact::append_job`] (`full`: fixed-bucket append tables
/// compact each bucket fully).
///
/// # Errors
/// [`Error::Unsupported`] for postpone-bucket tables (compact those from the native host)
/// and for the features the planners name; task and commit errors (`CommitConflict` when a
/// concurrent commit removed an input). After an error nothing is visible and the tasks'
/// outputs are deleted.
pub async fn compact_job<T: Send + 'static>(
    io: &Io<T>,
    full: bool,
    settings: &JobSettings,
) -> Result<CompactJobOutcome> {
    let schema = latest_schema(io).await?;
    if !schema.is_primary_key_table() {
        return compact_append_tables(io, full, settings).await;
    }
    if schema.core_options().bucket()? == POSTPONE_BUCKET {
        return Err(Error::unsupported(
            "compacting postpone-bucket tables in a one-shot compaction job (compact them \
             from the native host)",
        ));
    }
    check_supported(&schema)?;
    let Some(files) = read_latest_live_files(io, &schema).await? else {
        return Ok(CompactJobOutcome::default());
    };
    let index_entries = dv_index_entries(io, &schema, &files.snapshot).await?;
    let request = PkCompactRequest {
        full,
        now_millis: settings.time_millis,
        index_entries,
        schemas: files.schemas.clone(),
        ..Default::default()
    };
    let tasks = plan_pk_compaction(&schema, &files.entries, &request)?;
    let outcome = CompactJobOutcome {
        base_snapshot: Some(files.snapshot.id),
        tasks: tasks.len(),
        ..Default::default()
    };
    if tasks.is_empty() {
        return Ok(outcome);
    }
    let mut seeds = NameSource::new(settings.seed);
    let mut written = Vec::new();
    let messages = run_tasks(
        io,
        &schema,
        &files.schemas,
        tasks,
        &mut seeds,
        settings.time_millis,
        &mut written,
    )
    .await
    .map(|(messages, _)| messages);
    commit_compaction(io, &schema, messages, seeds, settings, &written, outcome).await
}

/// Commit the messages of a compaction's tasks as one `COMPACT` snapshot and run the
/// maintenance after it; the counts of input and output files go into `outcome`. When the
/// tasks or the commit failed, `written` (everything the tasks wrote) is deleted and the
/// error returned.
async fn commit_compaction<T>(
    io: &Io<T>,
    schema: &TableSchema,
    messages: Result<Vec<CommitMessage>>,
    mut seeds: NameSource,
    settings: &JobSettings,
    written: &[String],
    mut outcome: CompactJobOutcome,
) -> Result<CompactJobOutcome> {
    let result = async {
        let messages = messages?;
        outcome.files_in = messages
            .iter()
            .map(|m| m.compact_increment.compact_before.len())
            .sum();
        outcome.files_out = messages
            .iter()
            .map(|m| m.compact_increment.compact_after.len())
            .sum();
        let options = CommitOptions::new(
            settings.commit_user.clone(),
            settings.time_millis,
            seeds.next_u64(),
        );
        commit(io, schema, messages, &CommitMode::Append, &options).await
    }
    .await;
    match result {
        Ok(c) => {
            outcome.commit = c;
            maintain_after(io, schema, settings, &mut outcome.commit).await;
            Ok(outcome)
        }
        Err(e) => {
            delete_all(io, written).await;
            Err(e)
        }
    }
}

/// [`compact_job`] of an append or data-evolution table.
async fn compact_append_tables<T: Send + 'static>(
    io: &Io<T>,
    full: bool,
    settings: &JobSettings,
) -> Result<CompactJobOutcome> {
    let plan = plan_append_job(
        io,
        &AppendJobOptions {
            full,
            ..Default::default()
        },
    )
    .await?;
    let outcome = CompactJobOutcome {
        base_snapshot: plan.scan.snapshot.as_ref().map(|s| s.id),
        tasks: plan.tasks.len(),
        ..Default::default()
    };
    if plan.tasks.is_empty() {
        return Ok(outcome);
    }
    let mut seeds = NameSource::new(settings.seed);
    let mut written = Vec::new();
    let messages = run_append_job(io, &plan, &mut seeds, settings.time_millis, &mut written).await;
    commit_compaction(
        io,
        &plan.scan.schema,
        messages,
        seeds,
        settings,
        &written,
        outcome,
    )
    .await
}

#[cfg(test)]
#[path = "job/tests.rs"]
mod tests;
