//! Writing tables: create, write rows, commit.
//!
//! ```text
//! Table::create(location, schema JSON)            schema/schema-0 (create-new)
//! table.new_write()  -> TableWriter               latest snapshot (and hash index), no data files yet
//!   writer.write(&batch)                          first the live files of the batch's new partitions
//!                                                 (manifests pruned by partition stats), then
//!                                                 data files Put (create-new) as they complete
//!   writer.prepare_commit() -> Vec<CommitMessage>
//! table.new_commit(user).commit(messages)       manifests, manifest list, snapshot-N
//!   (or commit_with_identifier / overwrite / abort)
//! ```
//!
//! Time and the seed of new file names come from this host (the system clock and the OS's
//! random source); the core itself takes them as inputs, so a recorded write replays to the
//! same requests. Source: Java `org.apache.paimon.table.sink.BatchWriteBuilder` (new write,
//! new commit), `TableWriteImpl`, `TableCommitImpl`.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::StreamExt;
use std::collections::{BTreeMap, BTreeSet};

use paimon_kernel::commit::{
    CommitMessage, CommitMode, CommitOptions, CommitOutcome, abort_machine, commit_machine,
};
use paimon_kernel::evolution::row_range::RowRange;
use paimon_kernel::io::{IoAnswer, IoErrorKind, IoOp, PutMode};
use paimon_kernel::spec::snapshot::BATCH_COMMIT_IDENTIFIER;
use paimon_kernel::spec::{BinaryRow, DataField, ManifestEntry, Snapshot};
use paimon_kernel::write::blob_refs::{has_blob_references, resolve_blob_references_machine};
use paimon_kernel::write::create::{create_table_machine, new_table_schema};
use paimon_kernel::write::dynamic_bucket::HashIndexRestore;
use paimon_kernel::write::postpone_fixed::PostponeBucketPlanner;
use paimon_kernel::write::restore::{read_partition_entries, restores_files};
use paimon_kernel::write::{FileToPut, TableWrite, WriteOptions, WriteRestore};

use crate::error::{Error, Result};
use crate::host::ObjectStoreHost;
use crate::table::Table;

/// Rounds of `commit.max-retries` immediate retries a contended commit gets, with a backoff
/// between rounds.
const CONTENDED_ROUNDS: u32 = 10;

/// The loop of [`TableCommit::run`] always returns from its last round.
fn unreachable_contended() -> Result<CommitOutcome> {
    Err(Error::kernel(
        "committing",
        paimon_kernel::Error::CommitContended {
            detail: "no commit round ran".into(),
        },
    ))
}

/// Files `Put` at once by a writer.
const PUT_CONCURRENCY: usize = 8;

/// Milliseconds since the epoch, from the system clock (0 before 1970).
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// 64 random bits from the OS (the seed of new file names).
pub(crate) fn random_seed() -> u64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        // No OS randomness: fall back to the clock and the process id, still unique enough
        // across processes for file names (every Put of a new file is create-new anyway).
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        return t ^ (u64::from(std::process::id()) << 32);
    }
    u64::from_le_bytes(b)
}

impl Table {
    /// Create a table at `location` from Paimon's schema JSON (see
    /// [`paimon_kernel::write::create::new_table_schema`]) and open it.
    ///
    /// # Errors
    /// [`Error::Kernel`] for an invalid schema (naming the field or option) or when a table
    /// already exists there; location and store errors as [`Table::open`].
    pub async fn create(location: &str, schema_json: &[u8]) -> Result<Table> {
        Self::create_with_host(ObjectStoreHost::open(location)?, schema_json).await
    }

    /// As [`Table::create`], at the root of `host` (e.g. an in-memory store shared by
    /// several tables' handles).
    ///
    /// # Errors
    /// As [`Table::create`].
    pub async fn create_with_host(host: ObjectStoreHost, schema_json: &[u8]) -> Result<Table> {
        let schema = new_table_schema(schema_json, now_millis())
            .map_err(|e| Error::kernel(format!("creating table {}", host.url()), e))?;
        let machine =
            create_table_machine(schema).describe(format!("creating table {}", host.url()));
        host.run_to_vec(machine).await?;
        Table::open_with_host(host).await
    }

    /// A writer for the table's latest schema, continuing after the latest snapshot's files.
    /// The files are restored lazily, per partition, when a batch first holds rows of it
    /// ([`TableWriter::write`]); append tables with `bucket` = -1 and postpone-bucket tables
    /// with `postpone.batch-write-fixed-bucket` = `false` read no manifest at all (Java's
    /// writers ignore their previous files). Postpone-bucket tables with the option `true`
    /// (the default) are written as a batch job of Java's engines writes them, straight into
    /// real buckets ([`paimon_kernel::write::postpone_fixed`]): every live file is read up
    /// front for the partitions' bucket counts and postpone rows. (Java's core
    /// `BatchWriteBuilder` and its streaming writers always write `bucket-postpone` files;
    /// a caller committing streaming-style with [`TableCommit::commit_with_identifier`] that
    /// wants those sets the option `false`.)
    ///
    /// # Errors
    /// As [`Table::schema`] and [`Table::latest_snapshot`]; [`Error::Kernel`] with
    /// `Unsupported` for tables this writer cannot write yet (the message names the feature).
    pub async fn new_write(&self) -> Result<TableWriter> {
        self.new_write_as(None).await
    }

    /// As [`Table::new_write`], for messages that will be committed by `commit_user`.
    /// Postpone-bucket tables (`bucket = -2`) put the commit user into their file names, as
    /// Java does; pass the user given to [`Table::new_commit`] (with `None` their names carry
    /// a random one).
    ///
    /// # Errors
    /// As [`Table::new_write`]; `Invalid` for an empty user.
    pub async fn new_write_as(&self, commit_user: Option<&str>) -> Result<TableWriter> {
        let schema = self.schema().await?;
        let dynamic_bucket =
            schema.is_primary_key_table() && schema.core_options().bucket().ok() == Some(-1);
        let partition_fields: Vec<DataField> = schema
            .partition_fields()
            .map_err(|e| Error::kernel(format!("writing to table {}", self.location()), e))?
            .into_iter()
            .cloned()
            .collect();
        // Cross-partition updates (Java's global index): every partition may be written, so
        // the whole table is restored up front and the key index bootstrapped below.
        let cross_partition = dynamic_bucket
            && schema
                .partition_keys
                .iter()
                .any(|p| !schema.primary_keys.contains(p));
        let context = || format!("writing to table {}", self.location());
        let fixed_postpone = paimon_kernel::write::postpone_fixed::writes_fixed_buckets(&schema)
            .map_err(|e| Error::kernel(context(), e))?;
        let mut planner = None;
        let mut restore = WriteRestore::default();
        let mut snapshot = None;
        if fixed_postpone {
            // A batch write of a postpone-bucket table goes into real buckets: the known
            // bucket counts and the postpone rows come from every live file.
            let files = self.scan().data_files().await?;
            let entries = files.as_ref().map_or(&[][..], |f| &f.entries[..]);
            planner = Some(
                PostponeBucketPlanner::try_new(&schema, entries, false)
                    .map_err(|e| Error::kernel(context(), e))?,
            );
            snapshot = files.map(|f| f.snapshot);
        } else if cross_partition {
            if let Some(files) = self.scan().data_files().await? {
                restore = WriteRestore::from_entries(&files.entries);
                snapshot = Some(files.snapshot);
            }
        } else if restores_files(&schema).unwrap_or(true) {
            // An invalid 'bucket' is reported by `TableWrite::try_new` below.
            snapshot = self.latest_snapshot().await?;
            if let (Some(s), true) = (&snapshot, dynamic_bucket) {
                restore.hash_index = self.read_hash_index(s).await?;
            }
        }
        let inner = TableWrite::try_new(
            schema.clone(),
            restore,
            WriteOptions {
                seed: random_seed(),
                time_millis: now_millis(),
            },
        )
        .map(|w| {
            let w = w.with_table_uri(self.location());
            if cross_partition {
                w
            } else {
                w.restore_on_demand()
            }
        })
        .and_then(|w| match commit_user {
            Some(user) => w.with_commit_user(user),
            None => Ok(w),
        })
        .and_then(|w| match planner {
            Some(p) => w.into_postpone_fixed_bucket(p),
            None => Ok(w),
        })
        .map_err(|e| Error::kernel(context(), e))?;
        let mut inner = inner;
        if let (Some(s), Some((keys, parts))) = (&snapshot, inner.cross_partition_columns()) {
            self.bootstrap_key_index(&mut inner, s, &schema, keys, parts)
                .await?;
        }
        Ok(TableWriter {
            table: self.clone(),
            inner,
            snapshot,
            partition_fields,
            written: Vec::new(),
            rows: 0,
            ignore_previous_files: false,
        })
    }

    /// Fill the global key index of a cross-partition write from a merged read of
    /// `snapshot`'s keys at every level (level 0 of first-row tables too), split by split
    /// (Java `IndexBootstrap`; with
    /// `cross-partition-upsert.index-ttl`, only splits holding a file created within it).
    async fn bootstrap_key_index(
        &self,
        inner: &mut TableWrite,
        snapshot: &Snapshot,
        schema: &paimon_kernel::spec::TableSchema,
        keys: Vec<String>,
        partitions: Vec<String>,
    ) -> Result<()> {
        let context = format!(
            "bootstrapping the key index of cross-partition table {}",
            self.location()
        );
        let ttl = schema
            .options
            .get("cross-partition-upsert.index-ttl")
            .map(|v| paimon_kernel::maintenance::duration::parse_duration_millis(v))
            .transpose()
            .map_err(|e| Error::kernel(&context, e))?;
        let now = now_millis();
        let columns: Vec<String> = keys.into_iter().chain(partitions).collect();
        let splits = self
            .scan()
            .with_snapshot_id(snapshot.id)
            .with_projection(columns)
            .with_all_levels()
            .batches_by_split()
            .await?;
        for (split, batches) in splits {
            if let Some(ttl) = ttl
                && !split.data_files.iter().any(|f| {
                    f.creation_time_millis
                        .is_some_and(|t| now <= t.saturating_add(ttl))
                })
            {
                continue;
            }
            for b in &batches {
                inner
                    .bootstrap_cross_partition(b, &split.partition, split.bucket)
                    .map_err(|e| Error::kernel(&context, e))?;
            }
        }
        Ok(())
    }

    /// The live files of `partitions` in `snapshot`: only the manifests whose partition
    /// statistics may hold one of them are read.
    async fn read_partition_files(
        &self,
        snapshot: &Snapshot,
        partitions: &[BinaryRow],
        partition_fields: &[DataField],
    ) -> Result<Vec<ManifestEntry>> {
        let snapshot = snapshot.clone();
        let set: BTreeSet<BinaryRow> = partitions.iter().cloned().collect();
        let fields = partition_fields.to_vec();
        self.run(
            "WriteRestore",
            format!(
                "restoring the files of {} partition(s) of snapshot {} for a writer",
                set.len(),
                snapshot.id
            ),
            move |io| async move { read_partition_entries(&io, &snapshot, &set, &fields).await },
        )
        .await
    }

    /// The live `HASH` index files of `snapshot` and their hashes (dynamic-bucket tables).
    async fn read_hash_index(&self, snapshot: &Snapshot) -> Result<Vec<HashIndexRestore>> {
        let snapshot = snapshot.clone();
        self.run(
            "HashIndexReader",
            format!("reading the hash index of snapshot {}", snapshot.id),
            move |io| async move { paimon_kernel::write::job::read_hash_index(&io, &snapshot).await },
        )
        .await
    }
}

/// Writes rows to a table; see the module docs.
#[derive(Debug)]
pub struct TableWriter {
    table: Table,
    inner: TableWrite,
    /// The snapshot the writer continues after (`None`: an empty table, or a writer that
    /// restores nothing).
    snapshot: Option<Snapshot>,
    /// The table's partition fields (to prune manifests by their partition statistics).
    partition_fields: Vec<DataField>,
    /// Paths of every file this writer `Put`, for an abort.
    written: Vec<String>,
    rows: u64,
    /// The messages are for an overwrite: lookup tables compact level 0 without the
    /// table's existing files.
    ignore_previous_files: bool,
}

impl TableWriter {
    /// Prepare messages for [`TableCommit::overwrite`]: the level-0 compaction of lookup
    /// and deletion-vector tables before the commit leaves the table's existing files out
    /// (the overwrite removes them; Java's `withIgnorePreviousFiles`). Without it, such an
    /// overwrite's compaction conflicts with the overwrite itself.
    pub fn for_overwrite(mut self) -> Self {
        self.ignore_previous_files = true;
        // Postpone-bucket tables written into real buckets: the postpone rows the overwrite
        // removes do not count towards a new partition's bucket count (as Spark's).
        self.inner.ignore_postpone_rows();
        self
    }

    /// The Arrow schema input batches should have (the table's columns; a `_ROW_KIND` Utf8
    /// column may be added for primary-key tables).
    pub fn input_schema(&self) -> SchemaRef {
        self.inner.input_schema()
    }

    /// Rows written so far.
    pub fn rows_written(&self) -> u64 {
        self.rows
    }

    /// Files written so far.
    pub fn files_written(&self) -> usize {
        self.written.len()
    }

    /// Write `batch` (columns by name); completed data files are written to the store now.
    ///
    /// # Errors
    /// [`Error::Kernel`] with `Invalid` naming the column and row for input that does not fit
    /// the table (nothing of the batch is written then); store errors of the `Put`s.
    pub async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let partitions = self
            .inner
            .partitions_to_restore(batch)
            .map_err(|e| self.context(e))?;
        if !partitions.is_empty() {
            let entries = match &self.snapshot {
                Some(s) => {
                    self.table
                        .read_partition_files(s, &partitions, &self.partition_fields)
                        .await?
                }
                None => Vec::new(),
            };
            self.inner
                .restore_partitions(&partitions, &entries)
                .map_err(|e| self.context(e))?;
        }
        let resolved;
        let batch =
            if has_blob_references(self.inner.schema(), batch).map_err(|e| self.context(e))? {
                let machine =
                    resolve_blob_references_machine(self.inner.schema().clone(), batch.clone())
                        .describe(format!("writing to table {}", self.table.location()));
                resolved = self.table.host().run_once(machine).await?;
                &resolved
            } else {
                batch
            };
        self.inner.write(batch).map_err(|e| self.context(e))?;
        self.rows += batch.num_rows() as u64;
        self.put_flushed().await
    }

    /// Put what the writer has ready, driving a flush in progress to its end one step at a
    /// time ([`TableWrite::continue_flush`]): each bucket's files (and the parts of large
    /// files) are written before the next bucket is flushed.
    async fn put_flushed(&mut self) -> Result<()> {
        loop {
            let files = self.inner.take_files();
            self.put_files(files).await?;
            if !self.inner.continue_flush().map_err(|e| self.context(e))? {
                return Ok(());
            }
        }
    }

    /// Flush everything and return the commit messages (one per partition and bucket that got
    /// files). The writer can go on writing for a next commit. Lookup tables (first-row,
    /// `changelog-producer = lookup`, `force-lookup`, deletion vectors) also compact
    /// the touched buckets' level 0 (see [`crate::compact`]): their messages carry a compact
    /// increment too.
    ///
    /// # Errors
    /// Encoding and store errors; compaction errors (lookup tables).
    pub async fn prepare_commit(&mut self) -> Result<Vec<CommitMessage>> {
        self.inner.flush().map_err(|e| self.context(e))?;
        self.put_flushed().await?;
        let messages = self.inner.prepare_commit().map_err(|e| self.context(e))?;
        let files = self.inner.take_files();
        self.put_files(files).await?;
        // Lookup tables: level 0 compacted before the commit, as Java's batch writers do.
        let (messages, outputs) = crate::compact::compact_level0_after_write(
            &self.table,
            messages,
            self.ignore_previous_files,
        )
        .await?;
        self.written.extend(outputs);
        Ok(messages)
    }

    /// A writer of `table` around `inner`, which was given everything it restores (no lazy
    /// restore): the postpone compaction's fixed-bucket replay.
    pub(crate) fn with_inner(table: &Table, inner: TableWrite) -> TableWriter {
        TableWriter {
            table: table.clone(),
            inner,
            snapshot: None,
            partition_fields: Vec::new(),
            written: Vec::new(),
            rows: 0,
            ignore_previous_files: false,
        }
    }

    /// [`TableWriter::prepare_commit`] without the level-0 compaction of lookup tables.
    ///
    /// # Errors
    /// Encoding and store errors.
    pub(crate) async fn prepare_commit_uncompacted(&mut self) -> Result<Vec<CommitMessage>> {
        self.inner.flush().map_err(|e| self.context(e))?;
        self.put_flushed().await?;
        let messages = self.inner.prepare_commit().map_err(|e| self.context(e))?;
        let files = self.inner.take_files();
        self.put_files(files).await?;
        Ok(messages)
    }

    /// Paths of every file this writer wrote (taken: the writer forgets them).
    pub(crate) fn take_written(&mut self) -> Vec<String> {
        std::mem::take(&mut self.written)
    }

    /// Delete every file this writer wrote (use when the messages will not be committed).
    ///
    /// # Errors
    /// Store errors other than a missing file.
    pub async fn abort(mut self) -> Result<()> {
        for path in self.inner.open_uploads() {
            // Nothing is visible at an open upload's path: dropping its parts is enough.
            let _ = self.table.host().answer(&IoOp::PutAbort { path }).await;
        }
        let paths = std::mem::take(&mut self.written);
        delete_paths(self.table.host(), paths).await
    }

    fn context(&self, e: paimon_kernel::Error) -> Error {
        Error::kernel(format!("writing to table {}", self.table.location()), e)
    }

    async fn put_files(&mut self, files: Vec<FileToPut>) -> Result<()> {
        let host = self.table.host().clone();
        let context = format!("writing to table {}", self.table.location());
        // The parts of one streamed file go one after the other; files go at once.
        let groups = paimon_kernel::write::group_by_path(files);
        let results: Vec<(String, bool, Result<()>)> = futures::stream::iter(groups)
            .map(|group| {
                let host = host.clone();
                let context = context.clone();
                async move {
                    let path = group[0].path.clone();
                    let completes = paimon_kernel::write::completes_file(&group);
                    for f in group {
                        if let Err(e) = put_new_file(&host, f, &context).await {
                            return (path, completes, Err(e));
                        }
                    }
                    (path, completes, Ok(()))
                }
            })
            .buffer_unordered(PUT_CONCURRENCY)
            .collect()
            .await;
        let mut failure = None;
        for (path, completes, result) in results {
            match result {
                // An upload left open is completed by a later put (or aborted).
                Ok(()) if !completes => {}
                Ok(()) => self.written.push(path),
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Part size of streamed writes: 8 MiB (see [`paimon_kernel::write::file`]).
const PUT_PART_BYTES: usize = paimon_kernel::write::file::DEFAULT_PUT_PART_BYTES;

/// Write one new file (create-new): whole bytes with one `Put`, a streamed file (blob bytes
/// copied from file references) in parts through [`paimon_kernel::write::put_file_machine`],
/// and one part of a file streamed while it is encoded (the file completes after its last).
///
/// # Errors
/// [`Error::Kernel`] under `context`: the store error naming the path, `AlreadyExists` for a
/// name taken, the source's error for a failed copy.
pub(crate) async fn put_new_file(
    host: &ObjectStoreHost,
    file: FileToPut,
    context: &str,
) -> Result<()> {
    let path = file.path.clone();
    let written = match file.content {
        paimon_kernel::write::FileContent::Bytes(bytes) => {
            match host
                .answer(&IoOp::Put {
                    path: path.clone(),
                    bytes,
                    mode: PutMode::CreateNew,
                })
                .await
            {
                IoAnswer::Done => true,
                IoAnswer::Error {
                    kind: IoErrorKind::AlreadyExists,
                    ..
                } => false,
                IoAnswer::Error { kind, detail } => {
                    return Err(Error::kernel(
                        context,
                        paimon_kernel::Error::io(path, kind, detail),
                    ));
                }
                other => {
                    return Err(Error::kernel(
                        context,
                        paimon_kernel::Error::Protocol {
                            detail: format!("put of {path} answered with {other:?}"),
                        },
                    ));
                }
            }
        }
        paimon_kernel::write::FileContent::Streamed(_)
        | paimon_kernel::write::FileContent::Part(_)
        | paimon_kernel::write::FileContent::StreamedRest { .. } => {
            let machine = paimon_kernel::write::put_file_machine(file, PUT_PART_BYTES)
                .describe(context.to_string());
            host.run_once(machine).await?
        }
    };
    if written {
        Ok(())
    } else {
        Err(Error::kernel(
            context,
            paimon_kernel::Error::io(
                path,
                IoErrorKind::AlreadyExists,
                "a new file name was taken",
            ),
        ))
    }
}

/// Delete `paths` (missing ones are fine).
pub(crate) async fn delete_paths(host: &ObjectStoreHost, paths: Vec<String>) -> Result<()> {
    let answers: Vec<(String, IoAnswer)> = futures::stream::iter(paths)
        .map(|path| {
            let host = host.clone();
            async move {
                let a = host.answer(&IoOp::Delete { path: path.clone() }).await;
                (path, a)
            }
        })
        .buffer_unordered(PUT_CONCURRENCY)
        .collect()
        .await;
    for (path, a) in answers {
        if let IoAnswer::Error { kind, detail } = a
            && kind != IoErrorKind::NotFound
        {
            return Err(Error::kernel(
                format!("deleting files of table {}", host.url()),
                paimon_kernel::Error::io(path, kind, detail),
            ));
        }
    }
    Ok(())
}

/// Commits messages to a table as one coordinator; see the module docs.
///
/// Source: Java `org.apache.paimon.table.sink.TableCommitImpl` (batch commit).
///
/// Clones share one background maintenance queue (Java's single maintenance thread of a
/// `TableCommitImpl`, used with `snapshot.expire.execution-mode` = `async`).
#[derive(Debug, Clone)]
pub struct TableCommit {
    table: Table,
    commit_user: String,
    /// Fixed commit time (epoch millis) instead of the system clock.
    time_millis: Option<i64>,
    /// Maintenance running after streaming commits in async mode.
    background: std::sync::Arc<std::sync::Mutex<BackgroundMaintenance>>,
}

/// The maintenance queue of a [`TableCommit`] in async mode.
#[derive(Debug, Default)]
struct BackgroundMaintenance {
    /// The newest task; each task first waits for the one before it, so plans run one at a
    /// time in commit order.
    last: Option<tokio::task::JoinHandle<()>>,
    /// The first failure not yet reported (later ones are dropped, as Java keeps the first).
    failure: Option<Error>,
}

/// A background maintenance task of `table` that panicked or was cancelled.
fn maintenance_task_failed(table: &Table, e: &tokio::task::JoinError) -> Error {
    Error::Task {
        machine: format!("maintenance after a commit to {}", table.location()),
        detail: e.to_string(),
    }
}

/// Lock the queue; a poisoned lock still holds consistent data (every update is one
/// assignment).
fn lock_background(
    m: &std::sync::Mutex<BackgroundMaintenance>,
) -> std::sync::MutexGuard<'_, BackgroundMaintenance> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Table {
    /// A committer for this table. `commit_user` defaults to a random UUID, as Java's batch
    /// writes do (a commit whose user and identifier are already in a snapshot is not applied
    /// again).
    pub fn new_commit(&self, commit_user: Option<String>) -> TableCommit {
        let commit_user = commit_user
            .unwrap_or_else(|| paimon_kernel::write::NameSource::new(random_seed()).uuid());
        TableCommit {
            table: self.clone(),
            commit_user,
            time_millis: None,
            background: Default::default(),
        }
    }
}

impl TableCommit {
    /// Commit at a fixed time (milliseconds since the epoch) instead of the system clock: the
    /// snapshot's `timeMillis` and the "now" of the maintenance after the commit (expire,
    /// automatic tags). For tests and replays.
    pub fn with_time_millis(mut self, time_millis: i64) -> Self {
        self.time_millis = Some(time_millis);
        self
    }

    /// The commit user.
    pub fn commit_user(&self) -> &str {
        &self.commit_user
    }

    /// Commit `messages` as a batch commit (identifier `i64::MAX`): one `APPEND` snapshot for
    /// written files (and one `COMPACT` snapshot for compaction results).
    ///
    /// # Errors
    /// [`Error::Kernel`]: a conflict (`CommitConflict`), too many lost races, IO failures;
    /// `PartlyPublished` when the `APPEND` snapshot of a lookup table's write was published
    /// and its `COMPACT` snapshot failed (do not abort such messages: the published snapshot
    /// references their data files). After other errors nothing is visible; the data files
    /// of the messages stay (use [`TableCommit::abort`]).
    pub async fn commit(&self, messages: Vec<CommitMessage>) -> Result<CommitOutcome> {
        self.run(messages, CommitMode::Append, BATCH_COMMIT_IDENTIFIER)
            .await
    }

    /// Commit `messages` with an identifier of the caller's (streaming-style commits; the
    /// same user and identifier are never applied twice).
    ///
    /// With `snapshot.expire.execution-mode` = `async` the maintenance after the commit runs
    /// in the background (the outcome says `maintenance_in_background`); its failure is
    /// reported as `maintenance_warning` of the next commit's outcome, or by
    /// [`TableCommit::wait_maintenance`]. `tag.automatic-creation` = `batch` makes no tag
    /// here (Java: only at the end of a batch job).
    ///
    /// # Errors
    /// As [`TableCommit::commit`].
    pub async fn commit_with_identifier(
        &self,
        identifier: i64,
        messages: Vec<CommitMessage>,
    ) -> Result<CommitOutcome> {
        self.run(messages, CommitMode::Append, identifier).await
    }

    /// Overwrite: `partition` (`key → value`, some keys may be left out) is replaced by the
    /// messages' files; `None` follows the table's `dynamic-partition-overwrite` (default
    /// true: only the partitions the new files are in; an unpartitioned table is replaced
    /// whole).
    ///
    /// # Errors
    /// As [`TableCommit::commit`]; `Invalid` when a new file lies outside `partition`.
    pub async fn overwrite(
        &self,
        partition: Option<BTreeMap<String, String>>,
        messages: Vec<CommitMessage>,
    ) -> Result<CommitOutcome> {
        let schema = self.table.schema().await?;
        let dynamic = match (
            &partition,
            schema.options.get("dynamic-partition-overwrite"),
        ) {
            (Some(_), _) => false,
            (None, Some(v)) => !v.eq_ignore_ascii_case("false"),
            (None, None) => true,
        };
        let mode = CommitMode::Overwrite {
            partition_filter: partition,
            dynamic,
        };
        // As Java, an overwrite commits no changelog: its changelog files (input or
        // compaction changelog) are deleted after the commit.
        let changelog = paimon_kernel::write::job::changelog_only(&messages);
        let outcome = self.run(messages, mode, BATCH_COMMIT_IDENTIFIER).await?;
        if !changelog.is_empty() {
            // Best effort: an orphan changelog file is harmless.
            let _ = self.abort(changelog).await;
        }
        Ok(outcome)
    }

    /// Delete the files the messages added (they will not be committed).
    ///
    /// # Errors
    /// Store errors other than a missing file.
    pub async fn abort(&self, messages: Vec<CommitMessage>) -> Result<()> {
        let schema = self.table.schema().await?;
        let machine = abort_machine(schema, messages).describe(format!(
            "aborting a commit to table {}",
            self.table.location()
        ));
        self.table.host().run_to_vec(machine).await?;
        Ok(())
    }

    async fn run(
        &self,
        messages: Vec<CommitMessage>,
        mode: CommitMode,
        identifier: i64,
    ) -> Result<CommitOutcome> {
        self.run_checked(messages, mode, identifier, None).await
    }

    /// [`TableCommit::run`] with the data-evolution row-id check from snapshot `check_from`
    /// (the snapshot an update was computed on).
    async fn run_checked(
        &self,
        messages: Vec<CommitMessage>,
        mode: CommitMode,
        identifier: i64,
        check_from: Option<i64>,
    ) -> Result<CommitOutcome> {
        let schema = self.table.schema().await?;
        // The core retries a lost race right away, `commit.max-retries` times; between such
        // rounds this host waits (exponential backoff with jitter, 10 ms doubling to 10 s, as
        // Java's `commit.min-retry-wait` / `commit.max-retry-wait`) and runs the same commit
        // again: its user and identifier make a rerun safe (never applied twice).
        let mut wait_millis: u64 = 10;
        for round in 0..=CONTENDED_ROUNDS {
            let time_millis = self.time_millis.unwrap_or_else(now_millis);
            let options = CommitOptions::new(self.commit_user.clone(), time_millis, random_seed())
                .with_identifier(identifier)
                .with_check_from_snapshot(check_from);
            let machine = commit_machine(schema.clone(), messages.clone(), mode.clone(), options)
                .describe(format!("committing to table {}", self.table.location()));
            match self.table.host().run_once(machine).await {
                Err(e)
                    if round < CONTENDED_ROUNDS
                        && matches!(
                            e.as_kernel(),
                            Some(paimon_kernel::Error::CommitContended { .. })
                        ) =>
                {
                    let jitter = random_seed() % wait_millis.max(1);
                    tokio::time::sleep(std::time::Duration::from_millis(wait_millis + jitter))
                        .await;
                    wait_millis = (wait_millis * 2).min(10_000);
                }
                Ok(mut outcome) => {
                    self.maintain(&mut outcome, identifier, time_millis).await;
                    return Ok(outcome);
                }
                other => return other,
            }
        }
        unreachable_contended()
    }

    /// Java's `TableCommitImpl.maintain`: after every commit, even an empty one; a failure
    /// is reported in `outcome`, the commit stands. A streaming commit (`identifier` not
    /// the batch one) in async mode queues the plan and returns.
    async fn maintain(&self, outcome: &mut CommitOutcome, identifier: i64, time_millis: i64) {
        let stream = identifier != BATCH_COMMIT_IDENTIFIER;
        let plan = match self.table.maintenance_plan().await {
            Ok(Some(plan)) if stream => plan.for_stream_commit(),
            Ok(Some(plan)) => plan,
            Ok(None) => return,
            Err(e) => {
                outcome.maintenance_warning = Some(e.to_string());
                return;
            }
        };
        if stream && plan.asynchronous {
            let mut queue = lock_background(&self.background);
            outcome.maintenance_warning = queue.failure.take().map(|e| e.to_string());
            let previous = queue.last.take();
            let (table, user, shared) = (
                self.table.clone(),
                self.commit_user.clone(),
                self.background.clone(),
            );
            queue.last = Some(tokio::spawn(async move {
                let mut failure = match previous {
                    Some(p) => p.await.err().map(|e| maintenance_task_failed(&table, &e)),
                    None => None,
                };
                if let Err(e) = table.run_maintain_plan(plan, time_millis, &user).await {
                    failure.get_or_insert(e);
                }
                if let Some(e) = failure {
                    lock_background(&shared).failure.get_or_insert(e);
                }
            }));
            outcome.maintenance_in_background = true;
            return;
        }
        match self
            .table
            .run_maintain_plan(plan, time_millis, &self.commit_user)
            .await
        {
            Ok(done) => outcome.maintenance = Some(done),
            Err(e) => outcome.maintenance_warning = Some(e.to_string()),
        }
    }

    /// True while maintenance started in the background by an earlier commit (async mode)
    /// is still running or queued.
    pub fn maintenance_pending(&self) -> bool {
        lock_background(&self.background)
            .last
            .as_ref()
            .is_some_and(|t| !t.is_finished())
    }

    /// Wait for the maintenance started in the background by earlier commits (async mode)
    /// and return its first failure not yet reported. Returns at once when none runs.
    ///
    /// # Errors
    /// The failure of a background maintenance ([`Error::Kernel`] from a step,
    /// [`Error::Task`] when its task panicked).
    pub async fn wait_maintenance(&self) -> Result<()> {
        let last = lock_background(&self.background).last.take();
        if let Some(task) = last
            && let Err(e) = task.await
        {
            lock_background(&self.background)
                .failure
                .get_or_insert(maintenance_task_failed(&self.table, &e));
        }
        match lock_background(&self.background).failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Table {
    /// Apply `changes` to the table's latest schema and write the result as the next schema
    /// (`schema/schema-<id+1>`, create-new; a concurrent alter that took the id is retried on
    /// the new latest schema). Returns the new schema; later writes use it and reads evolve
    /// older files to it by field id. See
    /// [`paimon_kernel::write::alter::apply_schema_changes`] for the rules.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid` naming the column, option or types of a change that breaks
    /// Paimon's rules (nothing is written); `Unsupported` for a type change this reader cannot
    /// apply to old files; store errors.
    pub async fn alter(
        &self,
        changes: Vec<paimon_kernel::write::alter::SchemaChange>,
    ) -> Result<paimon_kernel::spec::TableSchema> {
        let machine = paimon_kernel::write::alter::alter_table_machine(changes, now_millis())
            .describe(format!("altering table {}", self.location()));
        self.host().run_once(machine).await
    }

    /// Delete the rows matching `filter` (a [`crate::Filter`]: predicate text such as
    /// `k > 2 AND dt = '2024-01-01'`, or a built predicate) in one commit.
    ///
    /// Primary-key tables: the matching rows (of the latest snapshot, merged, read with the
    /// latest schema) are written back as `-D` rows and committed as one `APPEND` snapshot, as
    /// Java's batch delete on a primary-key table does. The merge engine must drop deleted
    /// keys (Java `PrimaryKeyTableUtils.validatePKUpsertDeletable`): `deduplicate`,
    /// `partial-update` with `partial-update.remove-record-on-delete` (or
    /// `partial-update.remove-record-on-sequence-group`), `aggregation` with
    /// `aggregation.remove-record-on-delete`. No matching row: nothing is committed.
    ///
    /// Append tables with `deletion-vectors.enabled` (`bucket` = -1 or > 0): the matching rows
    /// of each live data file get deletion vectors, written as new DV index files and committed
    /// as index changes only (an `OVERWRITE` snapshot, as Java's commit of DV changes; see
    /// [`paimon_kernel::write::deletion_vectors`]). On data-evolution tables a matching row is
    /// deleted in the vector of its row-id group's anchor (the oldest normal file), at its
    /// `_ROW_ID` minus the group's first row id. `rows_deleted` counts rows not deleted
    /// before. No matching row: nothing is committed.
    ///
    /// # Errors
    /// [`Error::Kernel`] with `Unsupported` for append tables (data evolution included)
    /// without `deletion-vectors.enabled` and tables [`Table::new_write`] cannot write; `Invalid` for a merge engine that keeps deleted keys, `ignore-delete` tables and a
    /// filter that does not parse or names an unknown column; `CommitConflict` when another
    /// commit changed the deletion vectors of the same data files (or bucket) meanwhile; read,
    /// write and commit errors (the files written are deleted then).
    pub async fn delete_where(
        &self,
        filter: impl Into<crate::Filter>,
        commit_user: Option<String>,
    ) -> Result<DeleteOutcome> {
        let schema = self.schema().await?;
        let context = format!("deleting rows of table {}", self.location());
        if schema.primary_keys.is_empty() {
            return self
                .delete_with_deletion_vectors(filter.into(), commit_user, &schema, &context)
                .await;
        }
        check_deletable(&schema).map_err(|e| Error::kernel(&context, e))?;
        let mut writer = self.new_write().await?;
        let rows: Result<u64> = async {
            // Stored blob descriptors, not the bytes they point at: a `-D` row carries the
            // values as stored (managed BLOB columns are nulled on retractions anyway).
            let mut stream = self
                .scan()
                .with_filter(filter)
                .with_blob_as_descriptor(true)
                .to_stream()
                .await?;
            let mut rows = 0u64;
            while let Some(batch) = futures::TryStreamExt::try_next(&mut stream).await? {
                if batch.num_rows() == 0 {
                    continue;
                }
                let deletes = as_deletes(&batch, &writer.input_schema(), &schema)
                    .map_err(|e| Error::kernel(&context, e))?;
                writer.write(&deletes).await?;
                rows += batch.num_rows() as u64;
            }
            Ok(rows)
        }
        .await;
        let rows = match rows {
            Ok(rows) => rows,
            Err(e) => {
                let _ = writer.abort().await;
                return Err(e);
            }
        };
        if rows == 0 {
            writer.abort().await?;
            return Ok(DeleteOutcome {
                rows_deleted: 0,
                commit: CommitOutcome::default(),
            });
        }
        let committed: Result<CommitOutcome> = async {
            let messages = writer.prepare_commit().await?;
            self.new_commit(commit_user).commit(messages).await
        }
        .await;
        match committed {
            Ok(commit) => Ok(DeleteOutcome {
                rows_deleted: rows,
                commit,
            }),
            Err(e) => {
                // A partly published commit references the written files: keep them.
                if !matches!(
                    e.as_kernel(),
                    Some(paimon_kernel::Error::PartlyPublished { .. })
                ) {
                    let _ = writer.abort().await;
                }
                Err(e)
            }
        }
    }
}

impl Table {
    /// The append-table branch of [`Table::delete_where`]: the matching rows get deletion
    /// vectors ([`paimon_kernel::write::deletion_vectors`]) committed as one snapshot with
    /// index changes only. Index files written for a commit that fails are deleted.
    async fn delete_with_deletion_vectors(
        &self,
        filter: crate::Filter,
        commit_user: Option<String>,
        schema: &paimon_kernel::spec::TableSchema,
        context: &str,
    ) -> Result<DeleteOutcome> {
        use paimon_kernel::write::deletion_vectors::{check_dv_deletable, dv_delete_machine};
        let kernel = |e| Error::kernel(context, e);
        let kind = paimon_kernel::scan::TableKind::Append;
        check_dv_deletable(kind, &schema.core_options()).map_err(kernel)?;
        let predicate = match &filter {
            crate::Filter::Predicate(p) => p.clone(),
            crate::Filter::Text(t) => {
                paimon_kernel::predicate::Predicate::parse(t).map_err(kernel)?
            }
        };
        let plan = self.scan().with_filter(filter).plan().await?;
        let machine =
            dv_delete_machine(plan, predicate, random_seed()).describe(context.to_string());
        let delete = self.host().run_once(machine).await?;
        if delete.messages.is_empty() {
            return Ok(DeleteOutcome::default());
        }
        match self.new_commit(commit_user).commit(delete.messages).await {
            Ok(commit) => Ok(DeleteOutcome {
                rows_deleted: delete.rows_deleted,
                commit,
            }),
            Err(e) => {
                let _ = delete_paths(self.host(), delete.written).await;
                Err(e)
            }
        }
    }
}

/// What [`Table::delete_where`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOutcome {
    /// Rows that matched the filter and were deleted.
    pub rows_deleted: u64,
    /// The commit (no snapshot when nothing matched).
    pub commit: CommitOutcome,
}

/// Whether rows of a table with `schema` can be deleted by writing `-D` rows.
fn check_deletable(schema: &paimon_kernel::spec::TableSchema) -> paimon_kernel::Result<()> {
    use paimon_kernel::spec::MergeEngine;
    if schema.primary_keys.is_empty() {
        return Err(paimon_kernel::Error::unsupported(
            "deleting rows of a table without primary key needs 'deletion-vectors.enabled'",
        ));
    }
    let options = schema.core_options();
    let flag = |key: &str| {
        schema
            .options
            .get(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    };
    if flag("ignore-delete") {
        return Err(paimon_kernel::Error::invalid(
            "the table sets 'ignore-delete' = 'true': its merge would drop the deletes",
        ));
    }
    match options.merge_engine()? {
        MergeEngine::Deduplicate => Ok(()),
        MergeEngine::PartialUpdate
            if flag("partial-update.remove-record-on-delete")
                || schema
                    .options
                    .contains_key("partial-update.remove-record-on-sequence-group") =>
        {
            Ok(())
        }
        MergeEngine::PartialUpdate => Err(paimon_kernel::Error::invalid(
            "merge engine partial-update keeps keys on delete: set \
             'partial-update.remove-record-on-delete' = 'true' (without sequence groups) or \
             'partial-update.remove-record-on-sequence-group' to delete rows",
        )),
        MergeEngine::Aggregation if flag("aggregation.remove-record-on-delete") => Ok(()),
        MergeEngine::Aggregation => Err(paimon_kernel::Error::invalid(
            "merge engine aggregation keeps keys on delete: set \
             'aggregation.remove-record-on-delete' = 'true' to delete rows",
        )),
        other => Err(paimon_kernel::Error::invalid(format!(
            "merge engine {} cannot delete rows",
            other.as_str()
        ))),
    }
}

/// `batch` (rows read with the table's schema) as writer input: the writer's columns by name
/// and a `_ROW_KIND` column of `-D` (the `rowkind.field` column too, when the table has one).
fn as_deletes(
    batch: &RecordBatch,
    input: &SchemaRef,
    schema: &paimon_kernel::spec::TableSchema,
) -> paimon_kernel::Result<RecordBatch> {
    use arrow_array::{ArrayRef, StringArray};
    use paimon_kernel::write::table_write::ROW_KIND_COLUMN;
    let deletes: ArrayRef = std::sync::Arc::new(StringArray::from(vec!["-D"; batch.num_rows()]));
    let rowkind_field = schema.options.get("rowkind.field");
    let mut fields = Vec::with_capacity(input.fields().len() + 1);
    let mut columns = Vec::with_capacity(input.fields().len() + 1);
    for field in input.fields() {
        let column = if rowkind_field == Some(field.name()) {
            std::sync::Arc::clone(&deletes)
        } else {
            let i = batch.schema().index_of(field.name()).map_err(|_| {
                paimon_kernel::Error::invalid(format!(
                    "the rows read have no column '{}'",
                    field.name()
                ))
            })?;
            std::sync::Arc::clone(batch.column(i))
        };
        fields.push(arrow_schema::Field::new(
            field.name(),
            column.data_type().clone(),
            field.is_nullable(),
        ));
        columns.push(column);
    }
    fields.push(arrow_schema::Field::new(
        ROW_KIND_COLUMN,
        arrow_schema::DataType::Utf8,
        false,
    ));
    columns.push(deletes);
    RecordBatch::try_new(
        std::sync::Arc::new(arrow_schema::Schema::new(fields)),
        columns,
    )
    .map_err(|e| paimon_kernel::Error::arrow("building the delete rows", e))
}

/// What [`Table::update`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateOutcome {
    /// Rows whose columns were set.
    pub rows_updated: u64,
    /// Row-id ranges (live normal files) that got new files.
    pub ranges: usize,
    /// The commit.
    pub commit: CommitOutcome,
}

impl Table {
    /// Set columns of existing rows of a data-evolution table by `_ROW_ID`, in one commit.
    ///
    /// `batch` has a non-null `_ROW_ID` column (BIGINT) and the columns to set (by name, any
    /// order; Arrow types cast to the columns' types). Each touched row-id range (a live
    /// normal file's range) gets files covering exactly that range with only those columns
    /// (`write_cols`): the non-BLOB ones hold every row of the range (the current value where
    /// the row is not updated), each BLOB one its new values and placeholders for the other
    /// rows (see [`paimon_kernel::write::update`]). The commit checks, from the snapshot the
    /// update was computed on, that no other commit wrote the same columns of those rows
    /// meanwhile (a commit conflict otherwise).
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid` for a table without data evolution, a missing or null
    /// `_ROW_ID`, a `_ROW_ID` given twice or not in the table, an unknown or partition column,
    /// NULL in a NOT NULL column, a `_ROW_ID` deleted by a deletion vector; a commit
    /// conflict; store errors (the files written are deleted after any failure).
    pub async fn update(
        &self,
        batch: &RecordBatch,
        commit_user: Option<String>,
    ) -> Result<UpdateOutcome> {
        use arrow_array::Array;
        use arrow_array::cast::AsArray;
        use paimon_kernel::write::update::{RangeUpdate, UpdateWriter};

        let context = format!("updating table {}", self.location());
        let invalid = |m: String| Error::kernel(&context, paimon_kernel::Error::invalid(m));
        let schema = self.schema().await?;
        let mut writer = UpdateWriter::try_new(
            schema.clone(),
            WriteOptions {
                seed: random_seed(),
                time_millis: now_millis(),
            },
        )
        .map_err(|e| Error::kernel(&context, e))?;
        let resolved;
        let batch =
            if has_blob_references(&schema, batch).map_err(|e| Error::kernel(&context, e))? {
                let machine = resolve_blob_references_machine(schema.clone(), batch.clone())
                    .describe(context.clone());
                resolved = self.host().run_once(machine).await?;
                &resolved
            } else {
                batch
            };
        let input = batch.schema();
        let row_id_col = input
            .index_of("_ROW_ID")
            .map_err(|_| invalid("the input has no _ROW_ID column".into()))?;
        let row_ids = arrow_cast::cast(batch.column(row_id_col), &arrow_schema::DataType::Int64)
            .map_err(|e| invalid(format!("column _ROW_ID: {e}")))?;
        if row_ids.null_count() > 0 {
            return Err(invalid("column _ROW_ID has NULL values".into()));
        }
        let row_ids = row_ids
            .as_primitive::<arrow_array::types::Int64Type>()
            .clone();
        // Update columns in table order.
        let mut columns: Vec<(usize, usize)> = Vec::new(); // (table position, input position)
        for (i, f) in input.fields().iter().enumerate() {
            if i == row_id_col {
                continue;
            }
            let pos = schema
                .fields
                .iter()
                .position(|t| &t.name == f.name())
                .ok_or_else(|| invalid(format!("column '{}' is not in the table", f.name())))?;
            columns.push((pos, i));
        }
        if columns.is_empty() {
            return Err(invalid("the input sets no column besides _ROW_ID".into()));
        }
        columns.sort_unstable();
        let Some(files) = self.scan().data_files().await? else {
            return Err(invalid("the table has no rows to update".into()));
        };
        let base_snapshot = files.snapshot.id;
        // Live normal-file ranges: (first row id, row count) → (partition, bucket).
        let mut ranges: BTreeMap<i64, (i64, paimon_kernel::spec::BinaryRow, i32)> = BTreeMap::new();
        for e in &files.entries {
            if e.file.file_name.ends_with(".blob") {
                continue;
            }
            let Some(first) = e.file.first_row_id else {
                continue;
            };
            ranges
                .entry(first)
                .or_insert_with(|| (e.file.row_count, e.partition.clone(), e.bucket));
        }
        // Input rows by range (a row id given twice is found below, per range).
        let mut by_range: BTreeMap<i64, Vec<(i64, usize)>> = BTreeMap::new();
        for (i, id) in row_ids.values().iter().enumerate() {
            let start = ranges
                .range(..=*id)
                .next_back()
                .filter(|(first, (count, _, _))| *id < **first + *count)
                .map(|(first, _)| *first)
                .ok_or_else(|| invalid(format!("_ROW_ID {id} (row {i}) is not in the table")))?;
            by_range.entry(start).or_default().push((*id, i));
        }
        // Current values of the update columns over the touched ranges, except BLOB columns
        // in `.blob` files (placeholders keep theirs); columns stored inline are copied as
        // stored (descriptors, view structs: read with `blob-as-descriptor`).
        let table_arrow = paimon_kernel::types::paimon_to_arrow_schema(&schema.fields)
            .map_err(|e| Error::kernel(&context, e))?;
        let inline =
            paimon_kernel::write::blob_validation::blob_inline_fields(&schema.core_options());
        let is_blob = |pos: usize| {
            let field = &schema.fields[pos];
            !inline.contains(&field.name)
                && (matches!(field.data_type.kind, paimon_kernel::spec::TypeKind::Blob)
                    || paimon_kernel::format::blob::BlobElementKind::try_from_data_type(
                        &field.data_type,
                    )
                    .is_ok())
        };
        let copied: Vec<usize> = columns
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| !is_blob(*p))
            .collect();
        let current = if copied.is_empty() {
            None
        } else {
            let mut names: Vec<String> = copied
                .iter()
                .map(|p| schema.fields[*p].name.clone())
                .collect();
            names.push("_ROW_ID".into());
            let wanted: Vec<RowRange> = by_range
                .keys()
                .map(|first| RowRange {
                    from: *first,
                    to: *first + ranges[first].0 - 1,
                })
                .collect();
            let batches = self
                .scan()
                .with_projection(names)
                .with_row_ranges(wanted)
                .with_blob_as_descriptor(true)
                .to_batches()
                .await?;
            let all = arrow_select::concat::concat_batches(
                &std::sync::Arc::new(
                    batches
                        .first()
                        .map_or_else(arrow_schema::Schema::empty, |b| b.schema().as_ref().clone()),
                ),
                &batches,
            )
            .map_err(|e| invalid(format!("reading the current values: {e}")))?;
            Some(all)
        };
        // Position in `current` of each row of the touched ranges, a dense slot per row of
        // each range (`NOT_READ`: the read did not return it: a deletion vector hides it).
        const NOT_READ: u32 = u32::MAX;
        // (first row id, slots), ascending by first row id.
        let mut current_pos: Vec<(i64, Vec<u32>)> = Vec::new();
        if let Some(cur) = &current {
            for first in by_range.keys() {
                let n = usize::try_from(ranges[first].0)
                    .map_err(|_| invalid("bad row count".into()))?;
                current_pos.push((*first, vec![NOT_READ; n]));
            }
            let ids = cur
                .column_by_name("_ROW_ID")
                .ok_or_else(|| invalid("the read returned no _ROW_ID".into()))?
                .as_primitive::<arrow_array::types::Int64Type>();
            // Rows come a split at a time, in row-id order within a range: keep the range of
            // the previous row and search only when a row lies outside it.
            let mut last = 0usize;
            for (i, id) in ids.values().iter().enumerate() {
                let i = u32::try_from(i)
                    .ok()
                    .filter(|i| *i != NOT_READ)
                    .ok_or_else(|| invalid("more than 2^32 - 1 current rows".into()))?;
                let within = |(first, slots): &(i64, Vec<u32>)| {
                    usize::try_from(*id - *first)
                        .ok()
                        .filter(|k| *k < slots.len())
                };
                if current_pos.get(last).and_then(within).is_none() {
                    last = current_pos
                        .partition_point(|(first, _)| *first <= *id)
                        .saturating_sub(1);
                }
                // A row outside every touched range is not needed (the read returns only
                // theirs; nothing to place if it did not).
                if let Some(slot) = current_pos.get_mut(last).and_then(|range| {
                    let k = within(range)?;
                    range.1.get_mut(k)
                }) {
                    *slot = i;
                }
            }
        }
        let mut rows_updated = 0u64;
        for (first, touched_rows) in &by_range {
            let (count, partition, bucket) = ranges[first].clone();
            let n = usize::try_from(count).map_err(|_| invalid("bad row count".into()))?;
            let mut touched = vec![false; n];
            let mut from_input: Vec<Option<u32>> = vec![None; n];
            for (id, i) in touched_rows {
                let at = (*id - *first) as usize;
                if touched[at] {
                    return Err(invalid(format!("_ROW_ID {id} is given twice")));
                }
                touched[at] = true;
                from_input[at] = Some(*i as u32);
            }
            let slots = current_pos
                .binary_search_by_key(first, |(f, _)| *f)
                .ok()
                .and_then(|k| current_pos.get(k))
                .map(|(_, slots)| slots);
            rows_updated += touched_rows.len() as u64;
            let mut cols = Vec::new();
            for (pos, input_pos) in &columns {
                let field = &schema.fields[*pos];
                let target = table_arrow.field(*pos).data_type().clone();
                let given = arrow_cast::cast(batch.column(*input_pos), &target)
                    .map_err(|e| invalid(format!("column '{}': {e}", field.name)))?;
                let picked = arrow_select::take::take(
                    given.as_ref(),
                    &arrow_array::UInt32Array::from(from_input.clone()),
                    None,
                )
                .map_err(|e| invalid(format!("column '{}': {e}", field.name)))?;
                let values = if is_blob(*pos) {
                    picked
                } else {
                    let cur = current
                        .as_ref()
                        .and_then(|c| c.column_by_name(&field.name))
                        .ok_or_else(|| invalid(format!("no current values of '{}'", field.name)))?;
                    // A row deleted by a deletion vector stays deleted (the vector is the
                    // anchor's, which an update does not replace): its slot holds NULL, or
                    // for a NOT NULL column the first updated row's value, never read.
                    let first_touched = touched.iter().position(|t| *t).unwrap_or_default();
                    let mut idx: Vec<(usize, usize)> = Vec::with_capacity(n);
                    for (r, t) in touched.iter().enumerate() {
                        let at = slots
                            .and_then(|s| s.get(r))
                            .copied()
                            .filter(|at| *at != NOT_READ);
                        if *t {
                            if at.is_none() {
                                let id = *first + r as i64;
                                return Err(invalid(format!(
                                    "_ROW_ID {id} was deleted (a deletion vector hides it)"
                                )));
                            }
                            idx.push((1, r));
                        } else if let Some(at) = at {
                            idx.push((0, at as usize));
                        } else if field.data_type.nullable {
                            idx.push((2, 0));
                        } else {
                            idx.push((1, first_touched));
                        }
                    }
                    let null = arrow_array::new_null_array(&target, 1);
                    let cur = arrow_cast::cast(cur, &target)
                        .map_err(|e| invalid(format!("column '{}': {e}", field.name)))?;
                    arrow_select::interleave::interleave(
                        &[cur.as_ref(), picked.as_ref(), null.as_ref()],
                        &idx,
                    )
                    .map_err(|e| invalid(format!("column '{}': {e}", field.name)))?
                };
                cols.push((field.name.clone(), values));
            }
            writer
                .write_range(RangeUpdate {
                    partition,
                    bucket,
                    first_row_id: *first,
                    columns: cols,
                    touched,
                })
                .map_err(|e| Error::kernel(&context, e))?;
        }
        // Put the files, then commit; any failure deletes them.
        let mut written: Vec<String> = Vec::new();
        let result: Result<CommitOutcome> = async {
            for f in writer.take_files() {
                let path = f.path.clone();
                put_new_file(self.host(), f, &context).await?;
                written.push(path);
            }
            let messages = writer.prepare_commit();
            self.new_commit(commit_user)
                .run_checked(
                    messages,
                    CommitMode::Append,
                    BATCH_COMMIT_IDENTIFIER,
                    Some(base_snapshot),
                )
                .await
        }
        .await;
        match result {
            Ok(commit) => Ok(UpdateOutcome {
                rows_updated,
                ranges: by_range.len(),
                commit,
            }),
            Err(e) => {
                let _ = delete_paths(self.host(), written).await;
                Err(e)
            }
        }
    }
}
