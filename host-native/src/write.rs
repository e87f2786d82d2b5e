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

use paimon_kernel::blob::references::{has_blob_references, resolve_blob_references_machine};
use paimon_kernel::commit::{
    CommitMessage, CommitMode, CommitOptions, CommitOutcome, abort_machine, commit_machine,
};
use paimon_kernel::io::FileToPut;
use paimon_kernel::io::{IoAnswer, IoErrorKind, IoOp, PutMode};
use paimon_kernel::schema::create::{create_table_machine, new_table_schema};
use paimon_kernel::spec::row_range::RowRange;
use paimon_kernel::spec::snapshot::BATCH_COMMIT_IDENTIFIER;
use paimon_kernel::spec::{BinaryRow, DataField, ManifestEntry, Snapshot};
use paimon_kernel::write::kv::dynamic_bucket::HashIndexRestore;
use paimon_kernel::write::kv::postpone_fixed::PostponeBucketPlanner;
use paimon_kernel::write::restore::{read_partition_entries, restores_files};
use paimon_kernel::write::{TableWrite, WriteOptions, WriteRestore};

use crate::error::{Error, Result};
use crate::host::ObjectStoreHost;
use crate::table::Table;

mod delete;
pub use delete::*;

mod commit;
pub use commit::*;

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
    /// [`paimon_kernel::schema::create::new_table_schema`]) and open it.
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
    /// real buckets ([`paimon_kernel::write::kv::postpone_fixed`]): every live file is read up
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
        let fixed_postpone =
            paimon_kernel::write::kv::postpone_fixed::writes_fixed_buckets(&schema)
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
            .map(|v| paimon_kernel::util::parse_duration_millis(v))
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
            move |io| async move { paimon_kernel::job::read_hash_index(&io, &snapshot).await },
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
        let groups = paimon_kernel::io::group_by_path(files);
        let results: Vec<(String, bool, Result<()>)> = futures::stream::iter(groups)
            .map(|group| {
                let host = host.clone();
                let context = context.clone();
                async move {
                    let path = group[0].path.clone();
                    let completes = paimon_kernel::io::completes_file(&group);
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

/// Part size of streamed writes: 8 MiB (see [`paimon_kernel::io::put`]).
const PUT_PART_BYTES: usize = paimon_kernel::io::DEFAULT_PUT_PART_BYTES;

/// Write one new file (create-new): whole bytes with one `Put`, a streamed file (blob bytes
/// copied from file references) in parts through [`paimon_kernel::io::put_file_machine`],
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
        paimon_kernel::io::FileContent::Bytes(bytes) => {
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
        paimon_kernel::io::FileContent::Streamed(_)
        | paimon_kernel::io::FileContent::Part(_)
        | paimon_kernel::io::FileContent::StreamedRest { .. } => {
            let machine = paimon_kernel::io::put_file_machine(file, PUT_PART_BYTES)
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
