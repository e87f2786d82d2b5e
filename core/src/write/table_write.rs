//! The table writer: routes rows to one writer per (partition, bucket) and turns them into data
//! files and commit messages.
//!
//! Source: Java `org.apache.paimon.table.sink.TableWriteImpl`,
//! `org.apache.paimon.operation.AbstractFileStoreWrite` (one writer per partition and bucket,
//! restored from the latest snapshot), `AppendOnlyWriter` (rows go straight to a rolling file
//! writer), `MergeTreeWriter` (a write buffer sorted by key and sequence number, merged per
//! key when it is flushed into level-0 files), `RowDataRollingFileWriter` /
//! `KeyValueFileWriterFactory` (rolling at `target-file-size`).
//!
//! Driving order (the writer is pure; the host does the IO):
//! 1. [`TableWrite::try_new`] with the table's latest schema and a [`WriteRestore`] built from
//!    the live files of the latest snapshot ([`WriteRestore::from_entries`]); or with an empty
//!    one and [`TableWrite::restore_on_demand`], then before each batch the live files of the
//!    partitions [`TableWrite::partitions_to_restore`] names, given to
//!    [`TableWrite::restore_partitions`] (see [`crate::write::restore`]).
//! 2. [`TableWrite::write`] for each input batch; after each call, [`TableWrite::take_files`]
//!    gives the files completed so far and the parts of large files still being encoded
//!    ([`crate::write::FilePart`]): `Put` each one (create-new; one path's parts in order)
//!    before going on, then [`TableWrite::continue_flush`] and take again while it returns
//!    `true` (a primary-key flush that the full write buffer started goes on a bucket, and a
//!    part, at a time), so memory stays bounded.
//! 3. Optionally [`TableWrite::flush`] and the same `take_files`/`continue_flush` loop, so
//!    that the last flush is put a bucket at a time too; then
//!    [`TableWrite::prepare_commit`] flushes the rest and returns the [`CommitMessage`]s;
//!    `Put` the files of a last [`TableWrite::take_files`], then commit the messages (or, on
//!    an abort, delete the files and abort the [`TableWrite::open_uploads`]).
//!
//! Postpone-bucket tables (`bucket = -2`): [`TableWrite::try_new`] writes `bucket-postpone`
//! files ([`crate::write::postpone`]); a batch write with `postpone.batch-write-fixed-bucket`
//! (default `true`, [`crate::write::postpone_fixed::writes_fixed_buckets`]) turns the writer
//! into a fixed-bucket one with [`TableWrite::into_postpone_fixed_bucket`] before step 2.
//!
//! Memory: append writers hold what their encoders buffer (a row group, a stripe or a block)
//! and less than a part ([`TableWrite::with_put_part_bytes`], 8 MiB) of the file laid out
//! before it; primary-key writers hold their write buffer, flushed into level-0 sorted runs of
//! every bucket when the buffered bytes of all buckets exceed `write-buffer-size`. A flush
//! driven by [`TableWrite::continue_flush`] holds one bucket's sorted positions, a chunk of
//! rows, the open files' encoders and about a part of output at a time; one run by `write`,
//! `flush` or `prepare_commit` alone holds every file it writes until the host takes them. A
//! fixed-bucket postpone write also holds the rows of partitions whose bucket count is not
//! known until `prepare_commit`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int8Array, Int64Array, RecordBatch, UInt32Array};
use arrow_schema::{DataType as ArrowType, Field, SchemaRef};

use crate::commit::{CommitMessage, DataIncrement};
use crate::error::{Error, Result};
use crate::merge::{MemoryRunSource, MergeConfig, MergeEngine, MergeReader, RowKind, RunSource};
use crate::spec::index_manifest::HASH_INDEX;
use crate::spec::options::ChangelogProducer;
use crate::spec::options::parse_memory_size;
use crate::spec::partition::{PartitionNaming, bucket_path, partition_path};
use crate::spec::{
    BinaryRow, CoreOptions, DataField, DataFileMeta, DataType, FileKind, FileSource,
    IndexManifestEntry, ManifestEntry, SimpleStats, TableSchema, TypeKind,
};
use crate::types::paimon_to_arrow_schema;
use crate::write::blob_write::{BlobFiles, BlobLayout};
use crate::write::bucket::{FixedBucketRowKeyExtractor, bucket_hash};
use crate::write::cross_partition::CrossPartitionIndex;
use crate::write::dynamic_bucket::{DYNAMIC_BUCKET_MAX_BUCKETS, DynamicBuckets, HashIndexRestore};
use crate::write::encode::DataFileEncoder;
use crate::write::external::{DataFilePlacer, ExternalPaths};
use crate::write::file::{DEFAULT_PUT_PART_BYTES, FileParts};
use crate::write::ids::NameSource;
use crate::write::inline_blob::InlineBlobColumns;
use crate::write::kv_file::{
    ChangelogNames, FinishedKvFile, KvFileBuilder, KvFileSpec, changelog_prefix,
};
use crate::write::managed_blob::{ManagedBlobColumns, PackTarget, PackWriters};
use crate::write::postpone::{POSTPONE_BUCKET, PostponeWrite};
use crate::write::postpone_fixed::{PartitionStats, PostponeBucketPlanner};
use crate::write::row::{BinaryRowEncoder, binary_row_at};
use crate::write::stats::StatsCollector;

/// Name of the optional input column that gives each row's kind (`+I`, `-U`, `+U`, `-D`; a
/// Utf8 column, or Int8 with the `_VALUE_KIND` bytes 0..=3). Rows without it are inserts.
pub const ROW_KIND_COLUMN: &str = "_ROW_KIND";

/// Field id offset of the `_KEY_<name>` columns of key-value files (Java
/// `SpecialFields.KEY_FIELD_ID_START`).
pub const KEY_FIELD_ID_START: i32 = i32::MAX / 2;
/// Field id of `_SEQUENCE_NUMBER`.
pub const SEQUENCE_NUMBER_FIELD_ID: i32 = i32::MAX - 1;
/// Field id of `_VALUE_KIND`.
pub const VALUE_KIND_FIELD_ID: i32 = i32::MAX - 2;

/// What a writer needs to know about the table's current files: the largest sequence number
/// per (partition, bucket), so new rows continue after it, and the bucket count the files were
/// written with.
///
/// Source: Java `AbstractFileStoreWrite#createWriterContainer` (restore of a bucket's files).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteRestore {
    /// Largest `_MAX_SEQUENCE_NUMBER` of the live files of each (serialized partition,
    /// bucket).
    pub max_sequence_numbers: BTreeMap<(Vec<u8>, i32), i64>,
    /// `_TOTAL_BUCKETS` of the live files of fixed-bucket tables (the first seen).
    pub total_buckets: Option<i32>,
    /// Dynamic-bucket primary-key tables: the live `HASH` index file of every (partition,
    /// bucket) and its hashes (read by the host; see [`WriteRestore::hash_index_entries`]).
    pub hash_index: Vec<HashIndexRestore>,
}

impl WriteRestore {
    /// From the live `Add` entries of the latest snapshot (an empty slice for a new table).
    pub fn from_entries(entries: &[ManifestEntry]) -> Self {
        let mut out = WriteRestore::default();
        for e in entries {
            out.add_entry(e);
            if e.total_buckets > 0 && out.total_buckets.is_none() {
                out.total_buckets = Some(e.total_buckets);
            }
        }
        out
    }

    /// Take `e`'s `_MAX_SEQUENCE_NUMBER` into its (partition, bucket)'s maximum.
    fn add_entry(&mut self, e: &ManifestEntry) {
        let key = (e.partition.to_serialized(), e.bucket);
        let seq = e.file.max_sequence_number;
        self.max_sequence_numbers
            .entry(key)
            .and_modify(|m| *m = (*m).max(seq))
            .or_insert(seq);
    }

    /// The live `HASH` index entries of a snapshot's index manifest, whose files a writer of a
    /// dynamic-bucket table needs in [`WriteRestore::hash_index`] (decode each with
    /// [`crate::write::dynamic_bucket::decode_hash_index`]).
    pub fn hash_index_entries(index: &[IndexManifestEntry]) -> Vec<&IndexManifestEntry> {
        index
            .iter()
            .filter(|e| e.kind == FileKind::Add && e.index_file.index_type == HASH_INDEX)
            .collect()
    }
}

/// Inputs of a write that come from the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// Seed of the names of new files.
    pub seed: u64,
    /// Wall-clock time in epoch millis, recorded as the files' creation time.
    pub time_millis: i64,
}

pub use crate::write::file::FileToPut;

/// Kind of writer the table needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Append table, bucket −1: every row to bucket 0.
    AppendUnaware,
    /// Append table with `bucket` > 0 and a bucket key.
    AppendFixed,
    /// Primary-key table with `bucket` > 0.
    KeyValueFixed,
    /// Primary-key table with `bucket` = −2: every row to `bucket-postpone`, unsorted.
    KeyValuePostpone,
    /// Primary-key table with `bucket` = −2 written by a batch job straight into real
    /// buckets, the count chosen per partition ([`crate::write::postpone_fixed`]).
    KeyValuePostponeFixed,
    /// Primary-key table with `bucket` = −1 whose primary key holds every partition key: the
    /// hash index assigns buckets.
    KeyValueDynamic,
}

/// Writes rows of one table. See the module docs for the driving order.
#[derive(Debug)]
pub struct TableWrite {
    schema: TableSchema,
    options: CoreOptions,
    mode: Mode,
    /// Arrow schema of the table's columns (the expected input, `_ROW_KIND` aside).
    table_arrow: SchemaRef,
    partition_fields: Vec<DataField>,
    partition_idx: Vec<usize>,
    /// Bucket of a row (fixed-bucket tables).
    bucket_extractor: Option<FixedBucketRowKeyExtractor>,
    num_buckets: i32,
    rowkind_field: Option<usize>,
    naming: PartitionNaming,
    data_root: String,
    format: String,
    target_file_size: u64,
    write_buffer_size: u64,
    restore: WriteRestore,
    /// [`TableWrite::restore_on_demand`]: the (serialized) partitions whose files are in
    /// `restore`; `None`: `restore` covers the whole table.
    restored: Option<BTreeSet<Vec<u8>>>,
    names: NameSource,
    time_millis: i64,
    writers: BTreeMap<(Vec<u8>, i32), BucketWriter>,
    done: Vec<FileToPut>,
    /// Key-value layout (key columns, `_SEQUENCE_NUMBER`, `_VALUE_KIND`, values).
    kv: Option<Arc<KvLayout>>,
    buffered_bytes: u64,
    /// Postpone-bucket tables: names and options of the files.
    postpone: Option<PostponeWrite>,
    /// Append tables with BLOB columns: the normal file's columns and the `.blob` writers'.
    blob: Option<BlobLayout>,
    /// Primary-key tables with managed BLOB columns (see [`crate::write::managed_blob`]).
    managed: Option<ManagedBlobColumns>,
    /// BLOB columns stored inline in the data file (see [`crate::write::inline_blob`]).
    inline: Option<InlineBlobColumns>,
    /// The table's root URI as Java writes it into pack descriptors (`file:/tmp/t`); needed
    /// by tables with managed BLOB columns ([`TableWrite::with_table_uri`]).
    table_uri: Option<String>,
    /// Data evolution: every file counts its sequence numbers from 0 (the commit stamps the
    /// snapshot id), as Java's data-evolution append writer does.
    sequence_per_file: bool,
    /// Dynamic-bucket tables: the bucket assigner and hash index maintainers.
    dynamic: Option<DynamicBuckets>,
    /// `data-file.external-paths`: the roots new data files go to, `None` for the table
    /// directory.
    external: Option<ExternalPaths>,
    /// Cross-partition dynamic-bucket tables: the global key index (instead of `dynamic`).
    cross: Option<CrossPartitionIndex>,
    /// Dynamic-bucket tables: `index-<uuid>-` names of new index files and their counter.
    index_uuid: String,
    index_files_named: u32,
    /// Postpone-bucket tables written into real buckets: the bucket counts and the rows
    /// waiting for theirs.
    postpone_fixed: Option<PostponeFixed>,
    /// Part size of data files streamed while they are encoded, in bytes
    /// ([`TableWrite::with_put_part_bytes`]).
    part_bytes: usize,
    /// The flush of the write buffers in progress ([`TableWrite::continue_flush`]).
    flush: Option<Flush>,
}

/// A flush of the write buffers in progress: the buckets still to flush, and the one being
/// flushed.
struct Flush {
    keys: std::collections::VecDeque<(Vec<u8>, i32)>,
    bucket: Option<BucketFlush>,
}

impl std::fmt::Debug for Flush {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flush")
            .field("buckets_left", &self.keys.len())
            .field(
                "bucket",
                &self
                    .bucket
                    .as_ref()
                    .map(|b| (&b.key, b.next, b.chunks.len())),
            )
            .finish()
    }
}

/// The flush of one primary-key bucket's buffer in progress: its sorted rows, their chunks
/// and the next one, and the open level-0 data and changelog files.
struct BucketFlush {
    key: (Vec<u8>, i32),
    sorted: SortedBuffer,
    chunks: Vec<(usize, usize)>,
    next: usize,
    data: RollingKv,
    log: Option<RollingKv>,
}

/// State of a postpone-bucket table's batch write into real buckets.
#[derive(Debug)]
struct PostponeFixed {
    planner: PostponeBucketPlanner,
    /// Rows of partitions without a bucket count yet (conformed columns, row kinds).
    pending: Vec<(Vec<ArrayRef>, Option<ArrayRef>)>,
    /// What the pending rows bring to each of their partitions.
    stats: BTreeMap<Vec<u8>, PartitionStats>,
}

#[derive(Debug)]
struct KvLayout {
    key_idx: Vec<usize>,
    file_fields: Vec<DataField>,
    /// The trimmed primary key fields as table fields (names without `_KEY_`).
    plain_key_fields: Vec<DataField>,
    file_schema: SchemaRef,
    engine: MergeEngine,
    ignore_delete: bool,
    merge: MergeConfig,
    /// `changelog-producer = input`: flushes also write the sorted input as changelog files.
    changelog_input: bool,
}

#[derive(Debug)]
struct BucketWriter {
    partition: BinaryRow,
    bucket: i32,
    bucket_dir: String,
    /// Where the writer's data, changelog and `.blob` files go (the bucket directory or
    /// `data-file.external-paths`).
    placer: DataFilePlacer,
    /// `<data-file.prefix><uuid>-`: one UUID per bucket writer, as Java's path factory.
    name_prefix: String,
    /// The UUID of `name_prefix`.
    uuid: String,
    /// Extension: `.<format>`.
    name_suffix: String,
    files_named: u32,
    next_sequence: i64,
    new_files: Vec<DataFileMeta>,
    /// Append: the open file.
    open: Option<OpenFile>,
    /// Key-value: buffered rows in the file layout, not yet sorted.
    buffer: Vec<RecordBatch>,
    /// Key-value with `changelog-producer = input`: changelog files written so far.
    changelog_files: Vec<DataFileMeta>,
    /// Key-value with `changelog-producer = input`: how changelog files are named (set at the
    /// first flush).
    changelog_names: Option<ChangelogNames>,
    /// Managed BLOB columns: the open `.managed.blob` packs.
    packs: PackWriters,
}

#[derive(Debug)]
struct OpenFile {
    name: String,
    encoder: DataFileEncoder,
    stats: StatsCollector,
    min_sequence: i64,
    max_sequence: i64,
    /// The `.blob` files of this file's rows (tables with BLOB columns).
    blobs: Option<BlobFiles>,
    /// Parts of the file sent while it is encoded.
    parts: FileParts,
}

impl TableWrite {
    /// Write stored bytes as they are: BLOB values that are serialized blob descriptors are
    /// not read as file references (see [`crate::write::blob_refs`]). For rewrites of values
    /// read back from the table (append and data-evolution compaction), whose bytes must
    /// never be reinterpreted; managed columns of primary-key tables keep references (their
    /// replayed values are descriptors of packs, copied as Java's writers copy them).
    pub fn without_blob_references(mut self) -> Self {
        if let Some(b) = &mut self.blob {
            b.references = false;
        }
        self
    }

    /// The table schema this writer writes.
    pub fn schema(&self) -> &TableSchema {
        &self.schema
    }

    /// A writer for `schema` (the table's latest schema), continuing after `restore`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for tables we cannot write yet (e.g. BLOB columns of an append
    /// table without data evolution, rescaled buckets), naming the feature; [`Error::Invalid`] for
    /// bad options (named), e.g. row tracking on a table that is not an append table with
    /// `bucket` = -1.
    pub fn try_new(
        schema: TableSchema,
        mut restore: WriteRestore,
        options: WriteOptions,
    ) -> Result<Self> {
        let core = schema.core_options();
        let bucket = core.bucket()?;
        let pk = schema.is_primary_key_table();
        if pk {
            // Java's key-value writers build the record-level expiry (used by their
            // compactions) when they are created: bad options fail every write.
            crate::compact::pk::expire::RecordLevelExpire::try_from_schema(&schema, 0)?;
        }
        let mode = match (pk, bucket) {
            (false, -1) => Mode::AppendUnaware,
            (false, b) if b > 0 => Mode::AppendFixed,
            (true, b) if b > 0 => Mode::KeyValueFixed,
            (true, -1) => {
                // Cross-partition tables write no hash index files.
                if cross_partition_key(&schema).is_none() && core.index_file_in_data_file_dir()? {
                    return Err(Error::unsupported(
                        "writing dynamic-bucket tables with 'index-file-in-data-file-dir' = true",
                    ));
                }
                Mode::KeyValueDynamic
            }
            (true, POSTPONE_BUCKET) => Mode::KeyValuePostpone,
            (false, POSTPONE_BUCKET) => {
                return Err(Error::invalid(
                    "'bucket' = -2 (postpone bucket) needs a primary key",
                ));
            }
            (_, b) => {
                return Err(Error::invalid(format!(
                    "option 'bucket' = {b} is not valid"
                )));
            }
        };
        if let (Some(total), true) = (restore.total_buckets, bucket > 0)
            && total != bucket
        {
            return Err(Error::unsupported(format!(
                "writing with 'bucket' = {bucket} to a table whose files were written for {total} \
                 buckets (rescaling)"
            )));
        }
        // Row tracking: new files carry no first row id (the commit assigns it); data
        // evolution: inserts are whole-row files, BLOB columns go to `.blob` files.
        let row_tracking = core.row_tracking_enabled()?;
        let data_evolution = core.data_evolution_enabled()?;
        if (row_tracking || data_evolution) && mode != Mode::AppendUnaware {
            return Err(Error::invalid(
                "row tracking and data evolution need an append table with 'bucket' = -1",
            ));
        }
        if data_evolution && !row_tracking {
            return Err(Error::invalid(
                "'data-evolution.enabled' needs 'row-tracking.enabled' = true",
            ));
        }
        // Deletion vectors need nothing here: primary-key tables get theirs when the host
        // compacts level 0 of every touched bucket before the commit (`compact::pk`; postpone
        // files when a compaction moves them to real buckets); new files of append tables,
        // data evolution included, have none (deletes write them, `write::deletion_vectors`).
        let external = ExternalPaths::from_options(&core)?;
        if external.is_some() && core.index_file_in_data_file_dir()? {
            return Err(Error::unsupported(
                "writing tables with data-file.external-paths and \
                 'index-file-in-data-file-dir' = true",
            ));
        }
        // `lookup` and `full-compaction` changelog comes from compaction (the host compacts
        // level 0 of lookup tables before the commit, see `compact::pk`).
        match core.changelog_producer()? {
            ChangelogProducer::None => {}
            ChangelogProducer::Input
            | ChangelogProducer::Lookup
            | ChangelogProducer::FullCompaction
                if pk => {}
            other => {
                return Err(Error::unsupported(format!(
                    "writing tables with changelog-producer = {other}{}",
                    if pk {
                        " (its changelog comes from compaction)"
                    } else {
                        " on a table without primary key"
                    }
                )));
            }
        }
        let format = core.file_format().to_ascii_lowercase();
        let index_of = |name: &str| -> Result<usize> {
            schema
                .fields
                .iter()
                .position(|f| f.name == name)
                .ok_or_else(|| Error::invalid(format!("column '{name}' is not in the schema")))
        };
        let partition_idx = schema
            .partition_keys
            .iter()
            .map(|k| index_of(k))
            .collect::<Result<Vec<_>>>()?;
        let partition_fields = partition_idx
            .iter()
            .map(|i| schema.fields[*i].clone())
            .collect();
        let bucket_extractor = match mode {
            Mode::AppendUnaware | Mode::KeyValuePostpone | Mode::KeyValueDynamic => None,
            _ => Some(FixedBucketRowKeyExtractor::try_new(&schema)?),
        };
        let rowkind_field = core.rowkind_field().map(index_of).transpose()?;
        let naming = core.partition_naming()?;
        let data_root = core
            .get("data-file.path-directory")
            .map(str::to_owned)
            .unwrap_or_default();
        let target_default = if pk { 128 << 20 } else { 256 << 20 };
        let target_file_size = memory_option(&core, "target-file-size", target_default)?;
        let write_buffer_size = memory_option(&core, "write-buffer-size", 256 << 20)?;
        let kv = if pk {
            Some(Arc::new(KvLayout::try_new(&schema)?))
        } else {
            None
        };
        let (blob, managed) = if pk {
            let managed = ManagedBlobColumns::try_new(&schema, &core)?;
            if managed.is_some() {
                crate::write::blob_validation::validate_blob_fields(&schema)?;
            }
            (None, managed)
        } else {
            (BlobLayout::try_new(&schema, &core, target_file_size)?, None)
        };
        let inline = InlineBlobColumns::try_new(&schema, &core)?;
        let table_arrow = paimon_to_arrow_schema(&schema.fields)?;
        let mut names = NameSource::new(options.seed);
        let postpone = match (&kv, mode) {
            (Some(kv), Mode::KeyValuePostpone) => {
                Some(PostponeWrite::new(&kv.file_fields, &core, &mut names))
            }
            _ => None,
        };
        let cross = (mode == Mode::KeyValueDynamic && cross_partition_key(&schema).is_some())
            .then(|| -> Result<CrossPartitionIndex> {
                Ok(CrossPartitionIndex::new(
                    core.merge_engine()?,
                    core.dynamic_bucket_target_row_num()?,
                ))
            })
            .transpose()?;
        let (dynamic, index_uuid) = if mode == Mode::KeyValueDynamic && cross.is_none() {
            let max_buckets = match core.get(DYNAMIC_BUCKET_MAX_BUCKETS) {
                None => -1,
                Some(v) => v.trim().parse::<i32>().map_err(|_| {
                    Error::invalid(format!(
                        "option '{DYNAMIC_BUCKET_MAX_BUCKETS}' = '{v}': not an integer"
                    ))
                })?,
            };
            let random = names.fork();
            let uuid = names.uuid();
            let assigner = DynamicBuckets::new(
                core.dynamic_bucket_target_row_num()?,
                max_buckets,
                std::mem::take(&mut restore.hash_index),
                random,
            )?;
            (Some(assigner), uuid)
        } else {
            (None, String::new())
        };
        Ok(TableWrite {
            external,
            cross,
            dynamic,
            index_uuid,
            index_files_named: 0,
            options: core,
            mode,
            table_arrow,
            partition_fields,
            partition_idx,
            bucket_extractor,
            num_buckets: bucket,
            rowkind_field,
            naming,
            data_root,
            format,
            target_file_size,
            write_buffer_size,
            restore,
            restored: None,
            names,
            time_millis: options.time_millis,
            writers: BTreeMap::new(),
            done: Vec::new(),
            kv,
            buffered_bytes: 0,
            postpone,
            blob,
            managed,
            inline,
            table_uri: None,
            sequence_per_file: data_evolution,
            schema,
            postpone_fixed: None,
            part_bytes: DEFAULT_PUT_PART_BYTES,
            flush: None,
        })
    }

    /// Write a postpone-bucket table (`bucket = -2`) straight into real buckets, as Java's
    /// batch writers do with `postpone.batch-write-fixed-bucket` (see
    /// [`crate::write::postpone_fixed`]): each partition's bucket count comes from `planner`
    /// (rows of partitions it does not know yet wait in memory until
    /// [`TableWrite::prepare_commit`], which plans them from what they bring); rows go to
    /// level-0 files of their bucket, sequence numbers continue after the bucket's files (so
    /// the writer restores files like a fixed-bucket writer: [`TableWrite::restores_files`]
    /// is `true`), and each message's `_TOTAL_BUCKETS` is its partition's count. Commit the
    /// messages with append conflict checks.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a writer of another table kind, or a bucket key that is not a
    /// column.
    pub fn into_postpone_fixed_bucket(mut self, planner: PostponeBucketPlanner) -> Result<Self> {
        if self.mode != Mode::KeyValuePostpone {
            return Err(Error::invalid(
                "a fixed-bucket batch write needs a postpone-bucket primary-key table",
            ));
        }
        // Java writes through a copy of the table with 'bucket' = 1 (the count is chosen
        // per row): the bucket key and function are the table's.
        let mut one = self.schema.clone();
        one.options.insert("bucket".to_owned(), "1".to_owned());
        self.bucket_extractor = Some(FixedBucketRowKeyExtractor::try_new(&one)?);
        self.postpone = None;
        self.mode = Mode::KeyValuePostponeFixed;
        self.postpone_fixed = Some(PostponeFixed {
            planner,
            pending: Vec::new(),
            stats: BTreeMap::new(),
        });
        Ok(self)
    }

    /// Rows of the batch per (serialized partition, bucket) for the partitions whose bucket
    /// count is known; the other rows are kept (with their partitions' row counts and
    /// serialized sizes) for [`TableWrite::plan_pending_buckets`].
    #[allow(clippy::type_complexity)]
    fn route_postpone_fixed(
        &mut self,
        columns: &[ArrayRef],
        kinds: Option<&ArrayRef>,
    ) -> Result<BTreeMap<(Vec<u8>, i32), Vec<u32>>> {
        let rows = columns.first().map_or(0, |c| c.len());
        let mut by_partition: BTreeMap<Vec<u8>, Vec<u32>> = BTreeMap::new();
        if self.partition_idx.is_empty() {
            by_partition.insert(
                BinaryRow::empty().to_serialized(),
                (0..rows as u32).collect(),
            );
        } else {
            let (pcols, ptypes) = self.partition_columns(columns);
            let encoder = BinaryRowEncoder::try_new(&pcols, &ptypes)?;
            for r in 0..rows {
                by_partition
                    .entry(encoder.encode(r)?.to_serialized())
                    .or_default()
                    .push(r as u32);
            }
        }
        let extractor = self
            .bucket_extractor
            .clone()
            .ok_or_else(|| Error::invalid("fixed-bucket postpone writer without bucket key"))?;
        let types: Vec<DataType> = self
            .schema
            .fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        let state = self
            .postpone_fixed
            .as_mut()
            .ok_or_else(|| Error::invalid("fixed-bucket postpone writer without planner"))?;
        let mut out: BTreeMap<(Vec<u8>, i32), Vec<u32>> = BTreeMap::new();
        for (partition, rows) in by_partition {
            let idx = UInt32Array::from(rows.clone());
            let take = |c: &ArrayRef| {
                arrow_select::take::take(c.as_ref(), &idx, None)
                    .map_err(|e| Error::arrow("selecting the rows of a partition", e))
            };
            let cols = columns.iter().map(take).collect::<Result<Vec<_>>>()?;
            match state.planner.count(&partition) {
                Some(n) => {
                    for (r, b) in rows.iter().zip(extractor.buckets_with(&cols, n)?) {
                        out.entry((partition.clone(), b)).or_default().push(*r);
                    }
                }
                None => {
                    let stats = state.stats.entry(partition).or_default();
                    stats.rows += rows.len() as i64;
                    if state.planner.needs_sizes() {
                        let encoder = BinaryRowEncoder::try_new(&cols, &types)?;
                        let mut buf = Vec::new();
                        for r in 0..rows.len() {
                            encoder.encode_into(r, &mut buf)?;
                            stats.serialized_bytes =
                                stats.serialized_bytes.saturating_add(buf.len() as i64);
                        }
                    }
                    let kinds = kinds.map(take).transpose()?;
                    state.pending.push((cols, kinds));
                }
            }
        }
        Ok(out)
    }

    /// An overwrite: the rows of `bucket-postpone` files do not count towards the bucket
    /// count of a partition of a fixed-bucket postpone write (see
    /// [`PostponeBucketPlanner::ignore_postpone_rows`]). Nothing for other writers.
    pub fn ignore_postpone_rows(&mut self) {
        if let Some(state) = &mut self.postpone_fixed {
            state.planner.ignore_postpone_rows();
        }
    }

    /// Plan the bucket counts of the partitions whose rows wait (fixed-bucket postpone
    /// writes) and write those rows.
    fn plan_pending_buckets(&mut self) -> Result<()> {
        let Some(state) = self.postpone_fixed.as_mut() else {
            return Ok(());
        };
        if state.pending.is_empty() {
            return Ok(());
        }
        let stats = std::mem::take(&mut state.stats);
        state.planner.plan(&stats);
        let pending = std::mem::take(&mut state.pending);
        for (columns, kinds) in pending {
            let groups = self.route_postpone_fixed(&columns, kinds.as_ref())?;
            self.write_groups(groups, &columns, kinds.as_ref())?;
        }
        Ok(())
    }

    /// Write the rows of `groups` ((partition, bucket) → row positions of `columns`).
    fn write_groups(
        &mut self,
        groups: BTreeMap<(Vec<u8>, i32), Vec<u32>>,
        columns: &[ArrayRef],
        kinds: Option<&ArrayRef>,
    ) -> Result<()> {
        let n = columns.first().map_or(0, |c| c.len());
        for ((partition, bucket), rows) in groups {
            // Every row in one group, in order (one partition and bucket): no copy.
            if rows.len() == n && rows.iter().enumerate().all(|(i, r)| *r as usize == i) {
                self.write_bucket(partition, bucket, columns.to_vec(), kinds.cloned())?;
                continue;
            }
            let idx = UInt32Array::from(rows);
            let cols = columns
                .iter()
                .map(|c| arrow_select::take::take(c.as_ref(), &idx, None))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::arrow("selecting the rows of a bucket", e))?;
            let kinds = kinds
                .map(|k| arrow_select::take::take(k, &idx, None))
                .transpose()
                .map_err(|e| Error::arrow("selecting the row kinds of a bucket", e))?;
            self.write_bucket(partition, bucket, cols, kinds)?;
        }
        Ok(())
    }

    /// Set the table's root URI (a host location such as `file:///tmp/t` or `s3://b/t`; see
    /// [`crate::write::managed_blob::java_table_uri`]): managed BLOB descriptors name their pack
    /// by its full URI, as Java does.
    pub fn with_table_uri(mut self, location: &str) -> Self {
        self.table_uri = Some(crate::write::managed_blob::java_table_uri(location));
        self
    }

    /// The commit user the messages will be committed with. Only postpone-bucket tables
    /// need it before the commit (it is part of their file names, see
    /// [`crate::write::postpone`]); without it they use a UUID drawn from the seed.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty user.
    pub fn with_commit_user(mut self, commit_user: &str) -> Result<Self> {
        if let Some(p) = self.postpone.take() {
            self.postpone = Some(p.with_commit_user(commit_user)?);
        }
        Ok(self)
    }

    /// Restore lazily: the [`WriteRestore`] given to [`TableWrite::try_new`] holds no data
    /// files (only the hash index of a dynamic-bucket table); before each
    /// [`TableWrite::write`] the host gives the live files of the partitions
    /// [`TableWrite::partitions_to_restore`] names to [`TableWrite::restore_partitions`].
    ///
    /// Source: Java `AbstractFileStoreWrite#createWriterContainer` (a writer's files are
    /// scanned when the writer of its partition and bucket is first created).
    pub fn restore_on_demand(mut self) -> Self {
        self.restored = Some(BTreeSet::new());
        self
    }

    /// Whether new files continue after the table's existing files (their sequence numbers).
    /// `false` for append tables with `bucket` = -1 and postpone-bucket tables, whose writers
    /// ignore previous files as Java's `AppendFileStoreWrite` and
    /// `PostponeBucketFileStoreWrite` do: they need no restore at all.
    pub fn restores_files(&self) -> bool {
        !matches!(self.mode, Mode::AppendUnaware | Mode::KeyValuePostpone)
    }

    /// With [`TableWrite::restore_on_demand`]: the partitions of `batch`'s rows whose files
    /// are not restored yet, in byte order of their serialized rows (the empty row for an
    /// unpartitioned table). Empty otherwise, and when [`TableWrite::restores_files`] is
    /// `false`. A batch lacking a partition column gives an empty list ([`TableWrite::write`]
    /// names the column).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the column for partition values that do not fit the column's
    /// type.
    pub fn partitions_to_restore(&self, batch: &RecordBatch) -> Result<Vec<BinaryRow>> {
        let Some(restored) = &self.restored else {
            return Ok(Vec::new());
        };
        if !self.restores_files() || batch.num_rows() == 0 {
            return Ok(Vec::new());
        }
        let mut wanted: BTreeSet<Vec<u8>> = BTreeSet::new();
        if self.partition_idx.is_empty() {
            wanted.insert(BinaryRow::empty().to_serialized());
        } else {
            let schema = batch.schema();
            let mut pcols = Vec::with_capacity(self.partition_idx.len());
            for (idx, field) in self.partition_idx.iter().zip(&self.partition_fields) {
                let arrow_field = self.table_arrow.field(*idx);
                let Ok(i) = schema.index_of(&field.name) else {
                    return Ok(Vec::new());
                };
                let col = batch.column(i);
                pcols.push(if col.data_type() == arrow_field.data_type() {
                    Arc::clone(col)
                } else {
                    conform_column(col, arrow_field, &field.data_type)?
                });
            }
            let ptypes: Vec<DataType> = self
                .partition_fields
                .iter()
                .map(|f| f.data_type.clone())
                .collect();
            for r in 0..batch.num_rows() {
                wanted.insert(binary_row_at(&pcols, &ptypes, r)?.to_serialized());
            }
        }
        wanted
            .into_iter()
            .filter(|p| !restored.contains(p))
            .map(|p| BinaryRow::from_serialized(&p, "partition of the input"))
            .collect()
    }

    /// With [`TableWrite::restore_on_demand`]: take the live files of `partitions` (the
    /// latest snapshot's `Add` entries of these partitions, e.g. from
    /// [`crate::write::restore::read_partition_entries`]; entries of other partitions are
    /// ignored). New rows of these partitions continue after the files' sequence numbers.
    ///
    /// # Errors
    /// [`Error::Invalid`] without [`TableWrite::restore_on_demand`]; [`Error::Unsupported`]
    /// when a file of a fixed-bucket table was written for another bucket count (rescaling),
    /// naming the partition.
    pub fn restore_partitions(
        &mut self,
        partitions: &[BinaryRow],
        entries: &[ManifestEntry],
    ) -> Result<()> {
        if self.restored.is_none() {
            return Err(Error::invalid(
                "restore_partitions needs a writer made with TableWrite::restore_on_demand",
            ));
        }
        let keys: BTreeSet<Vec<u8>> = partitions.iter().map(BinaryRow::to_serialized).collect();
        for e in entries {
            if !keys.contains(&e.partition.to_serialized()) {
                continue;
            }
            if self.num_buckets > 0 && e.total_buckets > 0 && e.total_buckets != self.num_buckets {
                let ppath = partition_path(&self.partition_fields, &e.partition, &self.naming)?;
                return Err(Error::unsupported(format!(
                    "writing with 'bucket' = {} to partition '{}' whose files were written \
                     for {} buckets (rescaling)",
                    self.num_buckets,
                    ppath.trim_end_matches('/'),
                    e.total_buckets
                )));
            }
            self.restore.add_entry(e);
        }
        if let Some(restored) = &mut self.restored {
            restored.extend(keys);
        }
        Ok(())
    }

    /// The Arrow schema input batches should have (the table's columns in order; a
    /// `_ROW_KIND` column may be added on primary-key tables).
    pub fn input_schema(&self) -> SchemaRef {
        Arc::clone(&self.table_arrow)
    }

    /// Write the rows of `batch`. Columns are matched by name; every table column must be
    /// present; other Arrow types are cast to the column's type when the values fit.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the column and row, before anything of this batch is
    /// written: an unknown or missing column, a value that does not fit the column's type, a
    /// NULL in a NOT NULL column, a bad row kind, a retraction on an append table, a value of
    /// a BLOB column stored inline that is not a blob descriptor or view struct
    /// ([`crate::write::inline_blob`]).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let (columns, kinds) = self.conform(batch)?;
        // A flush the host did not drive to its end ends now, before new rows are buffered.
        self.finish_flush()?;
        let (columns, kinds, groups) = if self.cross.is_some() {
            self.place_cross_partition(&columns, kinds.as_ref())?
        } else if self.mode == Mode::KeyValuePostponeFixed {
            let groups = self.route_postpone_fixed(&columns, kinds.as_ref())?;
            (columns, kinds, groups)
        } else {
            let groups = self.route(&columns)?;
            (columns, kinds, groups)
        };
        self.write_groups(groups, &columns, kinds.as_ref())?;
        if self.kv.is_some() && self.buffered_bytes > self.write_buffer_size {
            self.start_flush();
            self.continue_flush()?;
        }
        Ok(())
    }

    /// Files completed so far, and parts of files being encoded ([`FileContent::Part`],
    /// one path's parts in order), to be written by the host now (create-new).
    ///
    /// [`FileContent::Part`]: crate::write::file::FileContent::Part
    pub fn take_files(&mut self) -> Vec<FileToPut> {
        std::mem::take(&mut self.done)
    }

    /// Stream data files of at least `bytes` bytes of laid-out content in parts of about that
    /// size while they are encoded (default [`DEFAULT_PUT_PART_BYTES`], 8 MiB): their parts
    /// come out of [`TableWrite::take_files`] as [`FileContent::Part`]s. The bytes of every
    /// file are the same whatever the part size. Hosts on S3 need at least
    /// [`crate::io::MIN_PUT_PART_BYTES`]; `usize::MAX` turns streaming off. A part holds
    /// whole row groups (Parquet), stripes (ORC) or blocks (Avro), so it can be larger.
    ///
    /// [`FileContent::Part`]: crate::write::file::FileContent::Part
    pub fn with_put_part_bytes(mut self, bytes: usize) -> Self {
        self.part_bytes = bytes.max(1);
        self
    }

    /// Start flushing every write buffer and open file now, to be driven by
    /// [`TableWrite::continue_flush`] so that the host puts each bucket's files before the
    /// next bucket is flushed. Rows waiting for a bucket count (postpone tables written into
    /// real buckets) are placed first. [`TableWrite::prepare_commit`] then has nothing left
    /// to flush. A flush in progress is finished first.
    ///
    /// # Errors
    /// Encoding errors of the flush in progress, or of placing waiting rows.
    pub fn flush(&mut self) -> Result<()> {
        self.plan_pending_buckets()?;
        self.finish_flush()?;
        self.start_flush();
        Ok(())
    }

    /// Go on with the flush in progress (started by [`TableWrite::flush`], or by
    /// [`TableWrite::write`] when the write buffer is full) until the files and parts waiting
    /// in [`TableWrite::take_files`] reach a part ([`TableWrite::with_put_part_bytes`]) or
    /// the flush ends. Returns `false` when no flush was in progress: the driving loop is
    ///
    /// ```text
    /// writer.write(batch)?;            // or writer.flush()?
    /// loop {
    ///     put(writer.take_files());
    ///     if !writer.continue_flush()? { break; }
    /// }
    /// ```
    ///
    /// A host that never calls it loses nothing: the next `write`, `flush` or
    /// `prepare_commit` finishes the flush first (holding all of its files until then).
    ///
    /// # Errors
    /// Encoding errors (naming the file); the writer is unusable afterwards.
    pub fn continue_flush(&mut self) -> Result<bool> {
        let Some(mut flush) = self.flush.take() else {
            return Ok(false);
        };
        loop {
            if let Some(mut bucket) = flush.bucket.take() {
                if self.flush_kv_step(&mut bucket)? {
                    flush.bucket = Some(bucket);
                } else {
                    self.finish_kv_flush(bucket)?;
                }
            } else if let Some(key) = flush.keys.pop_front() {
                if self.kv.is_some() {
                    flush.bucket = self.start_kv_flush(&key)?;
                } else {
                    self.close_append(&key)?;
                }
            } else {
                return Ok(true);
            }
            let waiting: u64 = self.done.iter().map(FileToPut::len).sum();
            if waiting >= self.part_bytes as u64 {
                self.flush = Some(flush);
                return Ok(true);
            }
        }
    }

    /// True while a flush is in progress (see [`TableWrite::continue_flush`]).
    pub fn flush_in_progress(&self) -> bool {
        self.flush.is_some()
    }

    /// Paths of files whose first parts were handed out and whose last part was not: the
    /// uploads a host must abort ([`IoOp::PutAbort`](crate::io::IoOp::PutAbort)) when it
    /// gives up the write.
    pub fn open_uploads(&self) -> Vec<String> {
        let mut out = BTreeSet::new();
        for w in self.writers.values() {
            if let Some(path) = w.open.as_ref().and_then(|o| o.parts.path()) {
                out.insert(path.to_owned());
            }
            out.extend(w.packs.open_uploads().map(str::to_owned));
            if let Some(blobs) = w.open.as_ref().and_then(|o| o.blobs.as_ref()) {
                out.extend(blobs.open_uploads());
            }
        }
        if let Some(b) = self.flush.as_ref().and_then(|f| f.bucket.as_ref()) {
            for rolling in std::iter::once(&b.data).chain(&b.log) {
                if let Some(path) = rolling.open.as_ref().and_then(|f| f.parts_path()) {
                    out.insert(path.to_owned());
                }
            }
        }
        out.into_iter().collect()
    }

    /// Flush every writer and return one commit message per (partition, bucket) that wrote
    /// files. Afterwards [`TableWrite::take_files`] gives the last files to `Put`; the writer
    /// can be used for the next commit.
    ///
    /// # Errors
    /// Encoding errors (naming the file).
    pub fn prepare_commit(&mut self) -> Result<Vec<CommitMessage>> {
        self.plan_pending_buckets()?;
        self.flush_all()?;
        for w in self.writers.values_mut() {
            w.packs.finish_all(&w.bucket_dir, &mut self.done)?;
        }
        let total_buckets = match self.mode {
            Mode::AppendUnaware => None,
            Mode::KeyValuePostpone => Some(POSTPONE_BUCKET),
            Mode::KeyValueDynamic => Some(-1),
            _ => Some(self.num_buckets),
        };
        let mut out = Vec::new();
        for ((partition, _), w) in self.writers.iter_mut() {
            if w.new_files.is_empty() && w.changelog_files.is_empty() {
                continue;
            }
            let total_buckets = match &self.postpone_fixed {
                Some(state) => state.planner.count(partition),
                None => total_buckets,
            };
            out.push(CommitMessage {
                partition: w.partition.clone(),
                bucket: w.bucket,
                total_buckets,
                data_increment: DataIncrement {
                    new_files: std::mem::take(&mut w.new_files),
                    changelog_files: std::mem::take(&mut w.changelog_files),
                    ..DataIncrement::default()
                },
                compact_increment: Default::default(),
            });
        }
        if let Some(dynamic) = &mut self.dynamic {
            let updates =
                dynamic.prepare_commit("index", &self.index_uuid, &mut self.index_files_named);
            for u in updates {
                let partition = BinaryRow::from_serialized(&u.partition, "partition of the input")?;
                let pos = match out
                    .iter()
                    .position(|m| m.bucket == u.bucket && m.partition == partition)
                {
                    Some(p) => p,
                    None => {
                        out.push(CommitMessage {
                            partition,
                            bucket: u.bucket,
                            total_buckets,
                            data_increment: DataIncrement::default(),
                            compact_increment: Default::default(),
                        });
                        out.len() - 1
                    }
                };
                let inc = &mut out[pos].data_increment;
                inc.new_index_files.push(u.file);
                inc.deleted_index_files.extend(u.replaced);
                self.done.push(FileToPut::whole(u.path, u.bytes));
            }
        }
        Ok(out)
    }

    /// Input columns in table order (cast to the table's types), and the row kinds (Int8
    /// `_VALUE_KIND` bytes) when the input has any.
    fn conform(&self, batch: &RecordBatch) -> Result<(Vec<ArrayRef>, Option<ArrayRef>)> {
        let schema = batch.schema();
        for f in schema.fields() {
            if f.name() != ROW_KIND_COLUMN && self.table_arrow.index_of(f.name()).is_err() {
                return Err(Error::invalid(format!(
                    "input column '{}' is not a column of the table (columns: {:?})",
                    f.name(),
                    self.schema.field_names()
                )));
            }
        }
        let mut columns = Vec::with_capacity(self.table_arrow.fields().len());
        for (field, table_field) in self.table_arrow.fields().iter().zip(&self.schema.fields) {
            let Ok(i) = schema.index_of(field.name()) else {
                return Err(Error::invalid(format!(
                    "input has no column '{}' (type {})",
                    field.name(),
                    table_field.data_type
                )));
            };
            let col = batch.column(i);
            let col = if col.data_type() == field.data_type() {
                Arc::clone(col)
            } else {
                conform_column(col, field, &table_field.data_type)?
            };
            if !table_field.data_type.nullable && col.null_count() > 0 {
                let row = (0..col.len()).find(|r| col.is_null(*r)).unwrap_or(0);
                return Err(Error::invalid(format!(
                    "column '{}' is NOT NULL but row {row} of the input holds NULL",
                    field.name()
                )));
            }
            columns.push(col);
        }
        if let Some(inline) = &self.inline {
            inline.encode_columns(&mut columns)?;
        }
        let kinds = match self.rowkind_field {
            Some(i) => Some(row_kinds(&columns[i], &self.schema.fields[i].name)?),
            None => match schema.index_of(ROW_KIND_COLUMN) {
                Ok(i) => Some(row_kinds(batch.column(i), ROW_KIND_COLUMN)?),
                Err(_) => None,
            },
        };
        if let Some(k) = &kinds {
            let k = k.as_primitive::<arrow_array::types::Int8Type>();
            if self.kv.is_none()
                && let Some(row) = k.values().iter().position(|b| *b != 0)
            {
                return Err(Error::invalid(format!(
                    "row {row} of the input is a {} row: append tables take only inserts (+I); \
                     to delete rows of an append table use `delete --where` (the table needs \
                     'deletion-vectors.enabled')",
                    RowKind::from_byte(k.value(row)).map_or("?", RowKind::short_string)
                )));
            }
            if let Some(kv) = &self.kv
                && kv.engine == MergeEngine::FirstRow
                && !kv.ignore_delete
                && let Some(row) = k.values().iter().position(|b| *b == 1 || *b == 3)
            {
                return Err(Error::invalid(format!(
                    "row {row} of the input is a {} row: first-row tables take no retractions \
                     (-U/-D) unless 'ignore-delete' is true",
                    RowKind::from_byte(k.value(row)).map_or("?", RowKind::short_string)
                )));
            }
        }
        Ok((columns, kinds))
    }

    /// Rows of the batch per (serialized partition, bucket), in input order.
    #[allow(clippy::type_complexity)]
    fn route(&mut self, columns: &[ArrayRef]) -> Result<BTreeMap<(Vec<u8>, i32), Vec<u32>>> {
        if self.mode == Mode::KeyValueDynamic {
            return self.route_dynamic(columns);
        }
        let rows = columns.first().map_or(0, |c| c.len());
        let bucket_of: Vec<i32> = match &self.bucket_extractor {
            None if self.mode == Mode::KeyValuePostpone => vec![POSTPONE_BUCKET; rows],
            None => vec![0; rows],
            Some(x) => x.buckets(columns)?,
        };
        let mut out: BTreeMap<(Vec<u8>, i32), Vec<u32>> = BTreeMap::new();
        if self.partition_idx.is_empty() {
            let empty = BinaryRow::empty().to_serialized();
            for (r, b) in bucket_of.iter().enumerate() {
                out.entry((empty.clone(), *b)).or_default().push(r as u32);
            }
            return Ok(out);
        }
        let (pcols, ptypes) = self.partition_columns(columns);
        for (r, b) in bucket_of.iter().enumerate() {
            let p = binary_row_at(&pcols, &ptypes, r)?.to_serialized();
            out.entry((p, *b)).or_default().push(r as u32);
        }
        Ok(out)
    }

    /// The partition columns of conformed `columns` and their types.
    fn partition_columns(&self, columns: &[ArrayRef]) -> (Vec<ArrayRef>, Vec<DataType>) {
        let cols = self
            .partition_idx
            .iter()
            .map(|i| Arc::clone(&columns[*i]))
            .collect();
        let types = self
            .partition_fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        (cols, types)
    }

    /// The trimmed primary key columns of conformed `columns` and their types.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a table without primary key.
    fn key_columns(&self, columns: &[ArrayRef]) -> Result<(Vec<ArrayRef>, Vec<DataType>)> {
        let kv = self
            .kv
            .as_ref()
            .ok_or_else(|| Error::invalid("key-value writer without key layout"))?;
        let cols = kv
            .key_idx
            .iter()
            .map(|i| Arc::clone(&columns[*i]))
            .collect();
        let types = kv
            .plain_key_fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        Ok((cols, types))
    }

    /// Cross-partition tables: the rows of a conformed batch as the global key index places
    /// them (moved keys' `-D` rows and merges into old partitions added, first-row
    /// duplicates dropped), with their rows per (serialized partition, bucket) as
    /// [`TableWrite::route`] gives them.
    #[allow(clippy::type_complexity)]
    fn place_cross_partition(
        &mut self,
        columns: &[ArrayRef],
        kinds: Option<&ArrayRef>,
    ) -> Result<(
        Vec<ArrayRef>,
        Option<ArrayRef>,
        BTreeMap<(Vec<u8>, i32), Vec<u32>>,
    )> {
        let (key_cols, key_types) = self.key_columns(columns)?;
        let (pcols, ptypes) = self.partition_columns(columns);
        let index = self
            .cross
            .as_mut()
            .ok_or_else(|| Error::invalid("cross-partition writer without index"))?;
        let placed = index.place(&pcols, &ptypes, &key_cols, &key_types)?;
        let (columns, kinds) = index.materialize(&placed, columns, &self.partition_idx, kinds)?;
        let mut groups: BTreeMap<(Vec<u8>, i32), Vec<u32>> = BTreeMap::new();
        for (row, p) in placed.iter().enumerate() {
            let partition = index.partition_bytes(p.partition).to_vec();
            groups
                .entry((partition, p.bucket))
                .or_default()
                .push(row as u32);
        }
        Ok((columns, kinds, groups))
    }

    /// The trimmed primary key and partition columns a cross-partition table's index is
    /// bootstrapped from ([`TableWrite::bootstrap_cross_partition`]); `None` for other
    /// tables.
    pub fn cross_partition_columns(&self) -> Option<(Vec<String>, Vec<String>)> {
        self.cross.as_ref()?;
        let kv = self.kv.as_ref()?;
        Some((
            kv.plain_key_fields.iter().map(|f| f.name.clone()).collect(),
            self.partition_fields
                .iter()
                .map(|f| f.name.clone())
                .collect(),
        ))
    }

    /// Cross-partition tables: add the live keys of one split of the latest snapshot to the
    /// global key index, before the first write (see [`crate::write::cross_partition`]).
    /// `batch` holds the merged rows' [`TableWrite::cross_partition_columns`] (keys, then
    /// partition columns) of `partition`'s bucket `bucket`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for another table kind, a key already placed elsewhere, or a batch
    /// without those columns.
    pub fn bootstrap_cross_partition(
        &mut self,
        batch: &RecordBatch,
        partition: &BinaryRow,
        bucket: i32,
    ) -> Result<()> {
        let (keys, parts) = self.cross_partition_columns().ok_or_else(|| {
            Error::invalid("bootstrap_cross_partition on a table without cross-partition updates")
        })?;
        let column = |name: &String, i: usize| -> Result<ArrayRef> {
            let col = batch.column_by_name(name).ok_or_else(|| {
                Error::invalid(format!("the bootstrap batch has no column '{name}'"))
            })?;
            let field = self.table_arrow.field(i);
            if col.data_type() == field.data_type() {
                Ok(Arc::clone(col))
            } else {
                let ty = self
                    .kv
                    .as_ref()
                    .and_then(|kv| kv.plain_key_fields.iter().find(|f| &f.name == name))
                    .or_else(|| self.partition_fields.iter().find(|f| &f.name == name))
                    .map(|f| f.data_type.clone())
                    .ok_or_else(|| Error::invalid(format!("no column '{name}'")))?;
                conform_column(col, field, &ty)
            }
        };
        let index_of = |name: &String| -> Result<usize> {
            self.table_arrow
                .index_of(name)
                .map_err(|_| Error::invalid(format!("no column '{name}'")))
        };
        let key_cols = keys
            .iter()
            .map(|n| column(n, index_of(n)?))
            .collect::<Result<Vec<_>>>()?;
        let part_cols = parts
            .iter()
            .map(|n| column(n, index_of(n)?))
            .collect::<Result<Vec<_>>>()?;
        let key_types: Vec<DataType> = self
            .kv
            .as_ref()
            .map(|kv| {
                kv.plain_key_fields
                    .iter()
                    .map(|f| f.data_type.clone())
                    .collect()
            })
            .unwrap_or_default();
        let index = self
            .cross
            .as_mut()
            .ok_or_else(|| Error::invalid("cross-partition writer without index"))?;
        index.bootstrap(&key_cols, &key_types, partition, &part_cols, bucket)
    }

    /// [`TableWrite::route`] of a dynamic-bucket table: each row's bucket from the hash index,
    /// in input order (Java assigns record by record).
    #[allow(clippy::type_complexity)]
    fn route_dynamic(
        &mut self,
        columns: &[ArrayRef],
    ) -> Result<BTreeMap<(Vec<u8>, i32), Vec<u32>>> {
        let rows = columns.first().map_or(0, |c| c.len());
        let (key_cols, key_types) = self.key_columns(columns)?;
        let keys = BinaryRowEncoder::try_new(&key_cols, &key_types)?;
        let (pcols, ptypes) = self.partition_columns(columns);
        let partitions = BinaryRowEncoder::try_new(&pcols, &ptypes)?;
        let empty = BinaryRow::empty().to_serialized();
        let assigner = self
            .dynamic
            .as_mut()
            .ok_or_else(|| Error::invalid("dynamic bucket writer without assigner"))?;
        let mut out: BTreeMap<(Vec<u8>, i32), Vec<u32>> = BTreeMap::new();
        for r in 0..rows {
            let p = if pcols.is_empty() {
                empty.clone()
            } else {
                partitions.encode(r)?.to_serialized()
            };
            let hash = bucket_hash(&keys.encode(r)?);
            let b = assigner.assign(&p, hash)?;
            out.entry((p, b)).or_default().push(r as u32);
        }
        Ok(out)
    }

    fn writer(&mut self, partition: Vec<u8>, bucket: i32) -> Result<&mut BucketWriter> {
        let key = (partition, bucket);
        if !self.writers.contains_key(&key) {
            let row = BinaryRow::from_serialized(&key.0, "partition of the input")?;
            let ppath = partition_path(&self.partition_fields, &row, &self.naming)?;
            let next_sequence = if !self.restores_files() {
                0
            } else if self.restored.as_ref().is_some_and(|r| !r.contains(&key.0)) {
                return Err(Error::invalid(format!(
                    "partition '{}' of the input is not restored: give its files to \
                     TableWrite::restore_partitions first",
                    ppath.trim_end_matches('/')
                )));
            } else {
                self.restore
                    .max_sequence_numbers
                    .get(&key)
                    .map_or(0, |m| m.saturating_add(1))
            };
            let mut prefix = self
                .options
                .get("data-file.prefix")
                .unwrap_or("data-")
                .to_owned();
            let mut format = self.format.clone();
            if let Some(p) = &self.postpone {
                prefix = p.file_prefix(&prefix);
                format.clone_from(&p.format);
            }
            let uuid = self.names.uuid();
            let name_prefix = format!("{prefix}{uuid}-");
            let bucket_dir = bucket_path(&self.data_root, &ppath, bucket);
            let placer = DataFilePlacer::new(&bucket_dir, self.external.as_ref(), &mut self.names);
            self.writers.insert(
                key.clone(),
                BucketWriter {
                    partition: row,
                    bucket,
                    bucket_dir,
                    placer,
                    name_prefix,
                    uuid,
                    name_suffix: format!(".{format}"),
                    files_named: 0,
                    next_sequence,
                    new_files: Vec::new(),
                    open: None,
                    buffer: Vec::new(),
                    changelog_files: Vec::new(),
                    changelog_names: None,
                    packs: PackWriters::default(),
                },
            );
        }
        self.writers
            .get_mut(&key)
            .ok_or_else(|| Error::invalid("bucket writer vanished"))
    }

    fn write_bucket(
        &mut self,
        partition: Vec<u8>,
        bucket: i32,
        columns: Vec<ArrayRef>,
        kinds: Option<ArrayRef>,
    ) -> Result<()> {
        let rows = columns.first().map_or(0, |c| c.len());
        let mut columns = columns;
        if let Some(managed) = self.managed.clone() {
            let table_uri = self.table_uri.clone().ok_or_else(|| {
                Error::invalid(
                    "writing managed BLOB columns needs the table's URI (TableWrite::with_table_uri)",
                )
            })?;
            let mut packs = Vec::new();
            let part_bytes = self.part_bytes;
            let w = self.writer(partition.clone(), bucket)?;
            let (prefix, counter) = (w.name_prefix.clone(), &mut w.files_named);
            let mut next_stem = || {
                let n = *counter;
                *counter += 1;
                format!("{prefix}{n}")
            };
            let mut target = PackTarget {
                bucket_dir: &w.bucket_dir,
                table_uri: &table_uri,
                next_stem: &mut next_stem,
                part_bytes,
            };
            w.packs.externalize(
                &managed,
                &mut columns,
                kinds.as_ref(),
                &mut target,
                &mut packs,
            )?;
            self.done.extend(packs);
        }
        if let Some(kv) = &self.kv {
            let key_cols: Vec<ArrayRef> = kv
                .key_idx
                .iter()
                .map(|i| Arc::clone(&columns[*i]))
                .collect();
            let file_schema = Arc::clone(&kv.file_schema);
            let w = self.writer(partition, bucket)?;
            let first = w.next_sequence;
            w.next_sequence += rows as i64;
            let seq: ArrayRef = Arc::new(Int64Array::from_iter_values(first..first + rows as i64));
            let kinds = kinds.unwrap_or_else(|| Arc::new(Int8Array::from(vec![0i8; rows])));
            let mut cols = key_cols;
            cols.push(seq);
            cols.push(kinds);
            cols.extend(columns);
            let batch = RecordBatch::try_new(file_schema, cols)
                .map_err(|e| Error::arrow("building the key-value rows of a bucket", e))?;
            let size = batch.get_array_memory_size() as u64;
            w.buffer.push(batch);
            self.buffered_bytes += size;
            return Ok(());
        }
        let format = self.format.clone();
        let options = self.options.clone();
        let target = self.target_file_size;
        let time_millis = self.time_millis;
        let schema_id = self.schema.id;
        let sequence_per_file = self.sequence_per_file;
        let part_bytes = self.part_bytes;
        let blob = self.blob.clone();
        // Tables with BLOB columns: the normal file holds the other columns.
        let (fields, file_arrow, file_columns) = match &blob {
            Some(b) => (
                b.normal_fields.clone(),
                paimon_to_arrow_schema(&b.normal_fields)?,
                b.normal_columns(&columns),
            ),
            None => (
                self.schema.fields.clone(),
                Arc::clone(&self.table_arrow),
                columns.clone(),
            ),
        };
        let batch = RecordBatch::try_new(file_arrow, file_columns)
            .map_err(|e| Error::arrow("building the rows of a bucket", e))?;
        let w = self.writer(partition, bucket)?;
        if w.open.is_none() {
            let first = if sequence_per_file {
                0
            } else {
                w.next_sequence
            };
            w.open = Some(OpenFile {
                name: w.next_file_name(),
                encoder: DataFileEncoder::try_new(&fields, &format, &options)?,
                stats: StatsCollector::new(&fields, &options)?,
                min_sequence: first,
                max_sequence: first - 1,
                blobs: blob.as_ref().map(BlobLayout::new_files),
                parts: FileParts::default(),
            });
        }
        let Some(open) = w.open.as_mut() else {
            return Err(Error::invalid("no open file"));
        };
        open.encoder.write(&batch)?;
        open.stats.update(batch.columns())?;
        let placer = &mut w.placer;
        let mut parts: Vec<FileToPut> = open
            .parts
            .next_part(&mut open.encoder, part_bytes, || placer.place(&open.name))?
            .into_iter()
            .collect();
        if let (Some(layout), Some(files)) = (&blob, open.blobs.as_mut()) {
            let (prefix, counter) = (&w.name_prefix, &mut w.files_named);
            let mut next_name = || {
                let n = *counter;
                *counter += 1;
                format!("{prefix}{n}.blob")
            };
            let mut place = |name: &str| placer.place(name);
            files.write(
                layout,
                &columns,
                &mut next_name,
                part_bytes,
                &mut place,
                &mut parts,
            )?;
        }
        open.max_sequence += rows as i64;
        w.next_sequence += rows as i64;
        let files = if open.encoder.estimated_size_bytes() >= target {
            close_append_file(w, blob.as_ref(), schema_id, time_millis)?
        } else {
            Vec::new()
        };
        self.done.extend(parts);
        self.done.extend(files);
        Ok(())
    }

    /// Flush everything now: a flush in progress, then every buffer and open file.
    fn flush_all(&mut self) -> Result<()> {
        self.finish_flush()?;
        self.start_flush();
        self.finish_flush()
    }

    /// Start a flush of every bucket writer (no work done yet).
    fn start_flush(&mut self) {
        if self.flush.is_some() {
            return;
        }
        self.flush = Some(Flush {
            keys: self.writers.keys().cloned().collect(),
            bucket: None,
        });
        self.buffered_bytes = 0;
    }

    /// Drive the flush in progress, if any, to its end.
    fn finish_flush(&mut self) -> Result<()> {
        while self.flush.is_some() {
            self.continue_flush()?;
        }
        Ok(())
    }

    /// Close the open file of append bucket `key`, if any.
    fn close_append(&mut self, key: &(Vec<u8>, i32)) -> Result<()> {
        let schema_id = self.schema.id;
        let time_millis = self.time_millis;
        if let Some(w) = self.writers.get_mut(key)
            && w.open.is_some()
        {
            let f = close_append_file(w, self.blob.as_ref(), schema_id, time_millis)?;
            self.done.extend(f);
        }
        Ok(())
    }

    /// Start the flush of a bucket's buffer: sort it by key and sequence; the steps
    /// ([`Self::flush_kv_step`]) merge each key's records with the merge engine and write the
    /// result as level-0 files rolling at `target-file-size`. Postpone-bucket files (not
    /// sorted) are written here at once. `None` when nothing is left to do.
    ///
    /// The buffer is never copied whole: the sort orders (batch, row) positions, and the
    /// output is gathered, merged and encoded in chunks of about [`FLUSH_CHUNK_ROWS`] input
    /// rows, so a flush holds the buffer, its sort keys and positions (about 33 bytes per
    /// row for a BIGINT key), one chunk, and the open files' encoders.
    fn start_kv_flush(&mut self, key: &(Vec<u8>, i32)) -> Result<Option<BucketFlush>> {
        let Some(kv) = self.kv.clone() else {
            return Ok(None);
        };
        let Some(w) = self.writers.get_mut(key) else {
            return Ok(None);
        };
        if w.buffer.is_empty() {
            return Ok(None);
        }
        let batches = std::mem::take(&mut w.buffer);
        if let Some(p) = &self.postpone {
            let spec = KvFileSpec {
                format: p.format.clone(),
                compression: p.options.file_compression().to_owned(),
            };
            let mut rolling = RollingKv::new(spec, false, p.options.clone());
            for batch in &kv.postpone_records(batches)? {
                self.write_kv_chunk(key, &mut rolling, batch)?;
            }
            self.close_kv_file(key, &mut rolling)?;
            return Ok(None);
        }
        let sorted = kv.sort_buffer(batches)?;
        let data_spec = KvFileSpec {
            format: self.format.clone(),
            compression: self.options.file_compression().to_owned(),
        };
        let data = RollingKv::new(data_spec, false, self.options.clone());
        let log = match kv.changelog_input {
            true => Some(RollingKv::new(
                KvFileSpec::changelog(&self.options)?,
                true,
                self.options.clone(),
            )),
            false => None,
        };
        let chunks = sorted.chunks(FLUSH_CHUNK_ROWS);
        Ok(Some(BucketFlush {
            key: key.clone(),
            sorted,
            chunks,
            next: 0,
            data,
            log,
        }))
    }

    /// Write the next chunk of a bucket's flush; `false` when no chunk was left.
    fn flush_kv_step(&mut self, b: &mut BucketFlush) -> Result<bool> {
        let Some(kv) = self.kv.clone() else {
            return Ok(false);
        };
        let Some(&(first, last)) = b.chunks.get(b.next) else {
            return Ok(false);
        };
        b.next += 1;
        // Java opens the changelog file first (it sees the first record before the merge
        // emits anything), so a changelog file takes the lower counter value.
        let rows = match &mut b.log {
            Some(log) => {
                let (s, e) = (b.sorted.groups[first].0, b.sorted.groups[last - 1].1);
                let rows = b.sorted.gather(&kv.file_schema, &b.sorted.order[s..e])?;
                self.write_kv_chunk(&b.key, log, &rows)?;
                Some(rows)
            }
            None => None,
        };
        let merged = kv.merge_chunk(&b.sorted, first..last, rows.as_ref())?;
        self.write_kv_chunk(&b.key, &mut b.data, &merged)?;
        Ok(true)
    }

    /// Close a bucket flush's open files (the changelog file first).
    fn finish_kv_flush(&mut self, b: BucketFlush) -> Result<()> {
        let BucketFlush {
            key,
            sorted,
            mut data,
            mut log,
            ..
        } = b;
        drop(sorted);
        if let Some(log) = &mut log {
            self.close_kv_file(&key, log)?;
        }
        self.close_kv_file(&key, &mut data)
    }

    /// Write a sorted chunk of bucket `key` to `rolling`'s open level-0 file (a data or a
    /// changelog file), opening one first when none is open, and
    /// closing it when, at a check every [`ROLL_CHECK_RECORDS`] records, the encoder's
    /// estimate has reached `target-file-size`.
    fn write_kv_chunk(
        &mut self,
        key: &(Vec<u8>, i32),
        rolling: &mut RollingKv,
        batch: &RecordBatch,
    ) -> Result<()> {
        // Java checks the size every 1,000 records of the rolling writer: cut the chunk
        // there, unless even twice the chunk's in-memory size cannot bring the open file to
        // the target (then no check inside the chunk can roll, and one write is cheaper).
        let open_size = rolling
            .open
            .as_ref()
            .map_or(0, |f| f.estimated_size_bytes());
        let bound = 2 * batch.get_array_memory_size() as u64 + (64 << 10);
        if open_size.saturating_add(bound) < self.target_file_size {
            rolling.records += batch.num_rows() as u64;
            return self.write_kv_piece(key, rolling, batch, false);
        }
        let mut start = 0;
        while start < batch.num_rows() {
            let to_check = ROLL_CHECK_RECORDS - rolling.records % ROLL_CHECK_RECORDS;
            let len = (batch.num_rows() - start).min(to_check as usize);
            rolling.records += len as u64;
            let check = rolling.records.is_multiple_of(ROLL_CHECK_RECORDS);
            self.write_kv_piece(key, rolling, &batch.slice(start, len), check)?;
            start += len;
        }
        Ok(())
    }

    /// [`Self::write_kv_chunk`] of one piece; with `check`, the file is closed once the
    /// encoder's estimate reaches `target-file-size`.
    fn write_kv_piece(
        &mut self,
        key: &(Vec<u8>, i32),
        rolling: &mut RollingKv,
        batch: &RecordBatch,
        check: bool,
    ) -> Result<()> {
        let changelog = rolling.changelog;
        let Some(kv) = &self.kv else {
            return Ok(());
        };
        let Some(w) = self.writers.get_mut(key) else {
            return Ok(());
        };
        let file = match &mut rolling.open {
            Some(f) => f,
            None => {
                let name = if changelog {
                    w.next_changelog_name(
                        &self.options,
                        &rolling.spec,
                        &self.format,
                        &mut self.names,
                    )
                } else {
                    w.next_file_name()
                };
                let managed = match (&self.managed, changelog) {
                    (Some(m), false) => Some(m.file_positions(kv.key_idx.len())),
                    _ => None,
                };
                rolling.open.insert(KvFileBuilder::try_new(
                    name,
                    &kv.file_fields,
                    &kv.plain_key_fields,
                    &rolling.spec,
                    &rolling.options,
                    0,
                    changelog,
                    managed,
                )?)
            }
        };
        file.write(batch)?;
        let name = file.name.clone();
        let managed = file.has_refs();
        let part = file.next_part(self.part_bytes, || {
            if managed {
                // A file with a sidecar stays next to it, in the bucket directory.
                (format!("{}/{name}", w.bucket_dir), None)
            } else {
                w.placer.place(&name)
            }
        })?;
        self.done.extend(part);
        if check && file.estimated_size_bytes() >= self.target_file_size {
            self.close_kv_file(key, rolling)?;
        }
        Ok(())
    }

    /// Finish `rolling`'s open level-0 file of bucket `key`, if any: its bytes (and managed
    /// BLOB tables' sidecar) to put, its metadata in the bucket's new files or (changelog
    /// files) changelog files.
    fn close_kv_file(&mut self, key: &(Vec<u8>, i32), rolling: &mut RollingKv) -> Result<()> {
        let changelog = rolling.changelog;
        let Some(file) = rolling.open.take() else {
            return Ok(());
        };
        let Some(w) = self.writers.get_mut(key) else {
            return Ok(());
        };
        let FinishedKvFile {
            mut meta,
            tail,
            refs,
            parts,
        } = file.finish(0, FileSource::Append, self.schema.id, self.time_millis)?;
        if let Some(refs) = refs {
            let (sidecar, name) = refs.finish(&w.bucket_dir, &meta.file_name)?;
            meta.extra_files.push(name);
            let (put, _) = parts.finish(tail, || {
                (format!("{}/{}", w.bucket_dir, meta.file_name), None)
            });
            self.done.push(put);
            self.done.push(sidecar);
        } else {
            let (put, external) = parts.finish(tail, || w.placer.place(&meta.file_name));
            meta.external_path = external;
            self.done.push(put);
        }
        if changelog {
            w.changelog_files.push(meta);
        } else {
            w.new_files.push(meta);
        }
        Ok(())
    }
}

/// The level-0 files of one kind (data or changelog) a flush writes: their format and
/// compression, the options their encoder and statistics take, the open one, and the records
/// written so far (Java `RollingFileWriterImpl#recordCount`, never reset on a roll).
struct RollingKv {
    spec: KvFileSpec,
    changelog: bool,
    options: CoreOptions,
    open: Option<KvFileBuilder>,
    records: u64,
}

impl RollingKv {
    fn new(spec: KvFileSpec, changelog: bool, options: CoreOptions) -> Self {
        RollingKv {
            spec,
            changelog,
            options,
            open: None,
            records: 0,
        }
    }
}

/// A rolling writer compares its open file's size with `target-file-size` every this many
/// records (Java `RollingFileWriter.CHECK_ROLLING_RECORD_CNT`).
const ROLL_CHECK_RECORDS: u64 = 1_000;

/// Input rows a flush gathers, merges and encodes at a time (more for one key whose records
/// alone exceed it).
const FLUSH_CHUNK_ROWS: usize = 16 * 1024;

/// A bucket's write buffer sorted by (key, `sequence.field`, sequence number) without moving
/// its rows: `order` holds (batch, row) positions of `batches` in sorted order, `groups` the
/// ranges of `order` that hold one key each.
struct SortedBuffer {
    batches: Vec<RecordBatch>,
    order: Vec<(usize, usize)>,
    groups: Vec<(usize, usize)>,
}

impl SortedBuffer {
    /// Consecutive ranges `first..last` of `groups` holding about `rows` input rows each
    /// (at least one group).
    fn chunks(&self, rows: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut first = 0;
        while first < self.groups.len() {
            let start = self.groups[first].0;
            let mut last = first + 1;
            while last < self.groups.len() && self.groups[last].1 - start <= rows {
                last += 1;
            }
            out.push((first, last));
            first = last;
        }
        out
    }

    /// The rows at `positions`, in that order, as one batch of `schema`.
    fn gather(&self, schema: &SchemaRef, positions: &[(usize, usize)]) -> Result<RecordBatch> {
        let columns = (0..schema.fields().len())
            .map(|c| {
                let arrays: Vec<&dyn Array> =
                    self.batches.iter().map(|b| b.column(c).as_ref()).collect();
                arrow_select::interleave::interleave(&arrays, positions)
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::arrow("gathering sorted rows of the write buffer", e))?;
        RecordBatch::try_new(Arc::clone(schema), columns)
            .map_err(|e| Error::arrow("building sorted rows of the write buffer", e))
    }
}

impl BucketWriter {
    /// `<prefix><uuid>-<n>.<format>`, `n` counting this writer's files from 0 (Java
    /// `DataFilePathFactory#newPath`).
    fn next_file_name(&mut self) -> String {
        let n = self.files_named;
        self.files_named += 1;
        format!("{}{n}{}", self.name_prefix, self.name_suffix)
    }

    /// The next changelog file name: `<changelog-file.prefix><uuid>-<n>.<format>`, sharing
    /// the data files' UUID and counter when the changelog format is `data_format` (Java
    /// keeps one `DataFilePathFactory` per format), else with a UUID and counter of its own.
    fn next_changelog_name(
        &mut self,
        options: &CoreOptions,
        spec: &KvFileSpec,
        data_format: &str,
        name_source: &mut NameSource,
    ) -> String {
        let names = self.changelog_names.get_or_insert_with(|| {
            let prefix = changelog_prefix(options);
            if spec.format == data_format {
                ChangelogNames::Shared {
                    prefix: format!("{prefix}{}-", self.uuid),
                }
            } else {
                ChangelogNames::Own {
                    prefix: format!("{prefix}{}-", name_source.uuid()),
                    count: 0,
                }
            }
        });
        let n = match names {
            ChangelogNames::Shared { .. } => {
                let n = self.files_named;
                self.files_named += 1;
                n
            }
            ChangelogNames::Own { count, .. } => {
                let n = *count;
                *count += 1;
                n
            }
        };
        let (ChangelogNames::Shared { prefix } | ChangelogNames::Own { prefix, .. }) = names;
        format!("{prefix}{n}.{}", spec.format)
    }
}

/// Close the open file of an append bucket writer: the data file, then (tables with BLOB
/// columns) the `.blob` files of its rows, column by column, the order the commit's row-id
/// assignment expects.
fn close_append_file(
    w: &mut BucketWriter,
    blob: Option<&BlobLayout>,
    schema_id: i64,
    time_millis: i64,
) -> Result<Vec<FileToPut>> {
    let Some(open) = w.open.take() else {
        return Err(Error::invalid("no open file to close"));
    };
    let row_count = open.encoder.row_count() as i64;
    let (value_stats, value_stats_cols) = open.stats.finish()?;
    let tail = open.encoder.finish()?;
    let file_size = open.parts.file_size(&tail) as i64;
    let (put, external_path) = open.parts.finish(tail, || w.placer.place(&open.name));
    let meta = DataFileMeta {
        file_name: open.name.clone(),
        file_size,
        row_count,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: SimpleStats::empty(),
        value_stats,
        min_sequence_number: open.min_sequence,
        max_sequence_number: open.max_sequence,
        schema_id,
        level: 0,
        extra_files: Vec::new(),
        creation_time_millis: Some(time_millis),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(FileSource::Append),
        value_stats_cols,
        external_path,
        // Row tracking: the commit assigns it.
        first_row_id: None,
        write_cols: blob.map(|b| b.normal_names.clone()),
        write_cols_sequences: None,
    };
    let mut out = vec![put];
    w.new_files.push(meta);
    if let (Some(layout), Some(files)) = (blob, open.blobs) {
        for f in files.finish(layout, row_count, schema_id, time_millis)? {
            let mut meta = f.meta;
            let (put, external_path, size) = f
                .parts
                .finish_content(f.content, || w.placer.place(&meta.file_name));
            meta.external_path = external_path;
            meta.file_size = size as i64;
            out.push(put);
            w.new_files.push(meta);
        }
    }
    Ok(out)
}

impl KvLayout {
    fn try_new(schema: &TableSchema) -> Result<Self> {
        let trimmed = schema.trimmed_primary_keys()?;
        let mut key_idx = Vec::new();
        let mut key_fields = Vec::new();
        let mut plain_key_fields = Vec::new();
        for k in &trimmed {
            let i = schema
                .fields
                .iter()
                .position(|f| &f.name == k)
                .ok_or_else(|| Error::invalid(format!("primary key '{k}' is not a column")))?;
            let f = &schema.fields[i];
            key_idx.push(i);
            plain_key_fields.push(f.clone());
            key_fields.push(DataField::new(
                KEY_FIELD_ID_START + f.id,
                format!("_KEY_{}", f.name),
                f.data_type.with_nullable(false),
            ));
        }
        let mut file_fields = key_fields;
        file_fields.push(DataField::new(
            SEQUENCE_NUMBER_FIELD_ID,
            "_SEQUENCE_NUMBER",
            DataType::not_null(TypeKind::BigInt),
        ));
        file_fields.push(DataField::new(
            VALUE_KIND_FIELD_ID,
            "_VALUE_KIND",
            DataType::not_null(TypeKind::TinyInt),
        ));
        file_fields.extend(schema.fields.iter().cloned());
        let file_schema = paimon_to_arrow_schema(&file_fields)?;
        let options = schema.core_options();
        let merge = MergeConfig::from_table_schema(schema)?;
        Ok(KvLayout {
            key_idx,
            file_fields,
            plain_key_fields,
            file_schema,
            engine: merge.engine,
            ignore_delete: options.ignore_delete()?,
            merge,
            changelog_input: options.changelog_producer()? == ChangelogProducer::Input,
        })
    }

    /// A buffered batch in the file layout without the retractions (`-U`/`-D`) when the
    /// table sets `ignore-delete`.
    fn without_ignored(&self, batch: RecordBatch) -> Result<RecordBatch> {
        if !self.ignore_delete {
            return Ok(batch);
        }
        let kinds = batch
            .column(self.key_idx.len() + 1)
            .as_primitive::<arrow_array::types::Int8Type>();
        let keep = arrow_array::BooleanArray::from_iter(
            kinds.values().iter().map(|b| Some(*b == 0 || *b == 2)),
        );
        arrow_select::filter::filter_record_batch(&batch, &keep)
            .map_err(|e| Error::arrow("dropping ignored retractions", e))
    }

    /// First-row tables take no retraction unless `ignore-delete` drops them: the error
    /// for the first one among `batches` (checked before anything is written).
    fn check_first_row_retractions(&self, batches: &[RecordBatch]) -> Result<()> {
        if self.ignore_delete || self.engine != MergeEngine::FirstRow {
            return Ok(());
        }
        let k = self.key_idx.len();
        for b in batches {
            let kinds = b
                .column(k + 1)
                .as_primitive::<arrow_array::types::Int8Type>();
            if let Some(row) = kinds.values().iter().position(|b| *b == 1 || *b == 3) {
                let seq = b
                    .column(k)
                    .as_primitive::<arrow_array::types::Int64Type>()
                    .value(row);
                return Err(Error::invalid(format!(
                    "first-row tables take no retractions (-U/-D) unless 'ignore-delete' is \
                     true; the input holds one (sequence number {seq} of its bucket)"
                )));
            }
        }
        Ok(())
    }

    /// The buffer of a postpone-bucket writer as written: input order, no merge, sequence
    /// numbers `-1`, retractions dropped under `ignore-delete`; first-row tables reject
    /// retractions as their merge would.
    fn postpone_records(&self, batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
        let k = self.key_idx.len();
        let batches = batches
            .into_iter()
            .map(|b| self.without_ignored(b))
            .collect::<Result<Vec<_>>>()?;
        self.check_first_row_retractions(&batches)?;
        batches
            .into_iter()
            .map(|b| {
                let mut cols = b.columns().to_vec();
                cols[k] = Arc::new(Int64Array::from(vec![-1i64; b.num_rows()]));
                RecordBatch::try_new(Arc::clone(&self.file_schema), cols)
                    .map_err(|e| Error::arrow("building the postpone records", e))
            })
            .collect()
    }

    /// The buffer sorted by (key, `sequence.field`, sequence number), its rows left in
    /// place, with the ranges holding one key each; first-row retractions are refused here,
    /// before anything is written.
    fn sort_buffer(&self, batches: Vec<RecordBatch>) -> Result<SortedBuffer> {
        let batches = batches
            .into_iter()
            .map(|b| self.without_ignored(b))
            .filter(|b| b.as_ref().map_or(true, |b| b.num_rows() > 0))
            .collect::<Result<Vec<_>>>()?;
        self.check_first_row_retractions(&batches)?;
        let k = self.key_idx.len();
        // Sort keys: the key columns, then sequence.field columns, then _SEQUENCE_NUMBER.
        // One converter each, so rows of different batches compare.
        let key_converter = arrow_row::RowConverter::new(
            (0..k)
                .map(|i| arrow_row::SortField::new(self.file_schema.field(i).data_type().clone()))
                .collect(),
        )
        .map_err(|e| Error::arrow("comparing primary keys", e))?;
        let seq_fields = self.merge_sequence_columns()?;
        let mut key_rows = Vec::with_capacity(batches.len());
        let mut seq_rows = Vec::with_capacity(batches.len());
        let mut seqs = Vec::with_capacity(batches.len());
        for b in &batches {
            key_rows.push(
                key_converter
                    .convert_columns(&b.columns()[..k])
                    .map_err(|e| Error::arrow("comparing primary keys", e))?,
            );
            if let Some((conv, cols)) = &seq_fields {
                let cols: Vec<ArrayRef> = cols.iter().map(|c| Arc::clone(b.column(*c))).collect();
                seq_rows.push(
                    conv.convert_columns(&cols)
                        .map_err(|e| Error::arrow("comparing sequence.field", e))?,
                );
            }
            seqs.push(
                b.column(k)
                    .as_primitive::<arrow_array::types::Int64Type>()
                    .values()
                    .clone(),
            );
        }
        let mut order: Vec<(usize, usize)> = batches
            .iter()
            .enumerate()
            .flat_map(|(i, b)| (0..b.num_rows()).map(move |r| (i, r)))
            .collect();
        order.sort_unstable_by(|&(ab, ar), &(bb, br)| {
            key_rows[ab]
                .row(ar)
                .cmp(&key_rows[bb].row(br))
                .then_with(|| match seq_rows.is_empty() {
                    true => std::cmp::Ordering::Equal,
                    false => seq_rows[ab].row(ar).cmp(&seq_rows[bb].row(br)),
                })
                .then_with(|| seqs[ab][ar].cmp(&seqs[bb][br]))
                .then_with(|| (ab, ar).cmp(&(bb, br)))
        });
        let mut groups: Vec<(usize, usize)> = Vec::new();
        let mut start = 0;
        for i in 1..=order.len() {
            if i == order.len() || {
                let (a, b) = (order[i], order[start]);
                key_rows[a.0].row(a.1) != key_rows[b.0].row(b.1)
            } {
                groups.push((start, i));
                start = i;
            }
        }
        Ok(SortedBuffer {
            batches,
            order,
            groups,
        })
    }

    /// The merged records of the key groups `range` of `sorted`, in the file layout.
    ///
    /// `rows`: the chunk's records in sorted order when the caller has gathered them already
    /// (for the changelog of `changelog-producer = input`); partial-update and aggregation
    /// merge those instead of gathering them again.
    fn merge_chunk(
        &self,
        sorted: &SortedBuffer,
        range: std::ops::Range<usize>,
        rows: Option<&RecordBatch>,
    ) -> Result<RecordBatch> {
        let groups = &sorted.groups[range];
        match self.engine {
            // The last record of each key.
            MergeEngine::Deduplicate => {
                let idx: Vec<(usize, usize)> =
                    groups.iter().map(|(_, e)| sorted.order[e - 1]).collect();
                sorted.gather(&self.file_schema, &idx)
            }
            // The first record of each key (no retractions: refused by `sort_buffer`).
            MergeEngine::FirstRow => {
                let idx: Vec<(usize, usize)> =
                    groups.iter().map(|(s, _)| sorted.order[*s]).collect();
                sorted.gather(&self.file_schema, &idx)
            }
            MergeEngine::PartialUpdate | MergeEngine::Aggregation => {
                let (Some(first), Some(last)) = (groups.first(), groups.last()) else {
                    return Ok(RecordBatch::new_empty(Arc::clone(&self.file_schema)));
                };
                match rows {
                    Some(rows) => self.merge_sorted(rows, groups.len()),
                    None => {
                        let rows =
                            sorted.gather(&self.file_schema, &sorted.order[first.0..last.1])?;
                        self.merge_sorted(&rows, groups.len())
                    }
                }
            }
        }
    }

    /// `sequence.field` columns (positions in the file layout) and their converter.
    #[allow(clippy::type_complexity)]
    fn merge_sequence_columns(&self) -> Result<Option<(arrow_row::RowConverter, Vec<usize>)>> {
        let names = &self.merge.sequence_fields;
        if names.is_empty() {
            return Ok(None);
        }
        let descending = !self.merge.sequence_ascending;
        let mut fields = Vec::new();
        let mut cols = Vec::new();
        for n in names {
            let i = self
                .file_schema
                .fields()
                .iter()
                .rposition(|f| f.name() == n)
                .ok_or_else(|| Error::invalid(format!("sequence.field '{n}' is not a column")))?;
            fields.push(arrow_row::SortField::new_with_options(
                self.file_schema.field(i).data_type().clone(),
                arrow_schema::SortOptions {
                    descending,
                    nulls_first: !descending,
                },
            ));
            cols.push(i);
        }
        let conv = arrow_row::RowConverter::new(fields)
            .map_err(|e| Error::arrow("comparing sequence.field", e))?;
        Ok(Some((conv, cols)))
    }

    /// Merge the groups of a sorted batch with the read side's merge engine: one record per
    /// key (in the file layout) with the engine's row kind and the key group's largest
    /// sequence number; a key of one record keeps it unchanged.
    fn merge_sorted(&self, sorted: &RecordBatch, groups: usize) -> Result<RecordBatch> {
        let k = self.key_idx.len();
        let value_names: Vec<String> = self.file_fields[k + 2..]
            .iter()
            .map(|f| f.name.clone())
            .collect();
        let read = self.merge.read_fields(&value_names);
        let input_schema = self.merge.input_schema(&read)?;
        if input_schema.fields().len() != sorted.num_columns() {
            return Err(Error::unsupported(
                "merging a write buffer whose merge needs extra columns",
            ));
        }
        let input = RecordBatch::try_new(Arc::clone(&input_schema), sorted.columns().to_vec())
            .map_err(|e| Error::arrow("building the merge input", e))?;
        let runs: Vec<Box<dyn RunSource>> = vec![Box::new(MemoryRunSource::new([input]))];
        let output: Vec<usize> = (0..value_names.len()).collect();
        // Key-value output with retractions kept: a level-0 file holds each key's merge
        // result whatever its row kind (Java's write buffer: a single record unchanged, a
        // merged one with the merge function's kind, e.g. `-D` under
        // `remove-record-on-delete`).
        let mut reader =
            MergeReader::try_new(&self.merge, input_schema, output, runs, groups.max(1))?
                .with_key_value_output(true);
        let mut merged = Vec::new();
        loop {
            let fut = std::pin::pin!(reader.next_batch());
            let mut fut = fut;
            match fut
                .as_mut()
                .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
            {
                std::task::Poll::Ready(Ok(Some(b))) => merged.push(b),
                std::task::Poll::Ready(Ok(None)) => break,
                std::task::Poll::Ready(Err(e)) => return Err(e),
                std::task::Poll::Pending => {
                    return Err(Error::invalid("in-memory merge suspended"));
                }
            }
        }
        let merged = arrow_select::concat::concat_batches(&reader.schema(), &merged)
            .map_err(|e| Error::arrow("concatenating merged rows", e))?;
        RecordBatch::try_new(Arc::clone(&self.file_schema), merged.columns().to_vec())
            .map_err(|e| Error::arrow("building merged rows", e))
    }
}

/// A memory-size option in bytes, Java's default when absent.
fn memory_option(options: &CoreOptions, key: &str, default: u64) -> Result<u64> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => parse_memory_size(v)
            .ok()
            .and_then(|b| u64::try_from(b).ok())
            .ok_or_else(|| Error::invalid(format!("option '{key}' = '{v}' is not a memory size"))),
    }
}

/// Cast an input column to the table column's Arrow type, refusing lossy casts.
fn conform_column(col: &ArrayRef, field: &Field, ty: &DataType) -> Result<ArrayRef> {
    let opts = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    if !arrow_cast::can_cast_types(col.data_type(), field.data_type()) {
        return Err(Error::invalid(format!(
            "input column '{}' has type {} which cannot be written to a {} column",
            field.name(),
            col.data_type(),
            ty
        )));
    }
    arrow_cast::cast_with_options(col, field.data_type(), &opts).map_err(|e| {
        Error::invalid(format!(
            "input column '{}' ({}) does not fit the column type {ty}: {e}",
            field.name(),
            col.data_type()
        ))
    })
}

/// Row kinds as `_VALUE_KIND` bytes from a Utf8 (`+I`, `-U`, `+U`, `-D`) or Int8 (0..=3)
/// column.
pub(crate) fn row_kinds(col: &ArrayRef, name: &str) -> Result<ArrayRef> {
    let bad = |row: usize, v: String| {
        Error::invalid(format!(
            "row {row} of column '{name}': '{v}' is not a row kind (+I, -U, +U, -D)"
        ))
    };
    let mut out = Vec::with_capacity(col.len());
    match col.data_type() {
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => {
            let s = arrow_cast::cast(col, &ArrowType::Utf8)
                .map_err(|e| Error::arrow("reading row kinds", e))?;
            let s = s.as_string::<i32>();
            for r in 0..s.len() {
                if s.is_null(r) {
                    out.push(0);
                    continue;
                }
                let v = s.value(r);
                let b = match v {
                    "+I" => 0,
                    "-U" => 1,
                    "+U" => 2,
                    "-D" => 3,
                    _ => return Err(bad(r, v.to_owned())),
                };
                out.push(b);
            }
        }
        ArrowType::Int8 => {
            let a = col.as_primitive::<arrow_array::types::Int8Type>();
            for r in 0..a.len() {
                let b = if a.is_null(r) { 0 } else { a.value(r) };
                if !(0..=3).contains(&b) {
                    return Err(bad(r, b.to_string()));
                }
                out.push(b);
            }
        }
        other => {
            return Err(Error::invalid(format!(
                "column '{name}' gives row kinds and must be a string (+I, -U, +U, -D), got {other}"
            )));
        }
    }
    Ok(Arc::new(Int8Array::from(out)))
}

/// A partition key outside the primary key: the table has cross-partition updates (Java
/// `TableSchema#crossPartitionUpdate`).
fn cross_partition_key(schema: &TableSchema) -> Option<&String> {
    if schema.primary_keys.is_empty() {
        return None;
    }
    schema
        .partition_keys
        .iter()
        .find(|p| !schema.primary_keys.contains(p))
}
