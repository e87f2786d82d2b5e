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
//!    ([`crate::io::FilePart`]): `Put` each one (create-new; one path's parts in order)
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
//! files ([`crate::write::kv::postpone`]); a batch write with `postpone.batch-write-fixed-bucket`
//! (default `true`, [`crate::write::kv::postpone_fixed::writes_fixed_buckets`]) turns the writer
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
use arrow_schema::{Field, SchemaRef};

use crate::blob::files::{BlobFiles, BlobLayout};
use crate::blob::inline::InlineBlobColumns;
use crate::blob::managed::{ManagedBlobColumns, PackTarget, PackWriters};
use crate::commit::{CommitMessage, DataIncrement};
use crate::encode::DataFileEncoder;
use crate::encode::parts::FileParts;
use crate::encode::row::{BinaryRowEncoder, RowProjection, row_kinds};
use crate::encode::stats::StatsCollector;
use crate::error::{Error, Result};
use crate::io::{DEFAULT_PUT_PART_BYTES, FileToPut};
use crate::merge::{MergeEngine, RowKind};
use crate::spec::file_names::DATA_FILE_PREFIX;
use crate::spec::index_manifest::HASH_INDEX;
use crate::spec::options::ChangelogProducer;
use crate::spec::options::parse_memory_size;
use crate::spec::partition::{POSTPONE_BUCKET, PartitionNaming, bucket_path, partition_path};
use crate::spec::special_fields::ROW_KIND_COLUMN;
use crate::spec::{
    BinaryRow, CoreOptions, DataField, DataFileMeta, DataType, FileKind, FileSource,
    IndexManifestEntry, ManifestEntry, SimpleStats, TableSchema,
};
use crate::types::paimon_to_arrow_schema;
use crate::util::NameSource;
use crate::write::bucket::FixedBucketRowKeyExtractor;
use crate::write::external::{DataFilePlacer, ExternalPaths};
use crate::write::kv::buffer::{FLUSH_CHUNK_ROWS, KvLayout, SortedBuffer};
use crate::write::kv::cross_partition::CrossPartitionIndex;
use crate::write::kv::dynamic_bucket::{
    DYNAMIC_BUCKET_MAX_BUCKETS, DynamicBuckets, HashIndexRestore,
};
use crate::write::kv::file::{
    ChangelogNames, FinishedKvFile, KvFileBuilder, KvFileSpec, changelog_prefix,
};
use crate::write::kv::postpone::PostponeWrite;
use crate::write::kv::postpone_fixed::{PartitionStats, PostponeBucketPlanner};

mod buckets;
mod flush;
mod route;

use buckets::{BucketWriter, close_append_file};
use flush::Flush;
use route::conform_column;

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
    /// [`crate::write::kv::dynamic_bucket::decode_hash_index`]).
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
    /// buckets, the count chosen per partition ([`crate::write::kv::postpone_fixed`]).
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
    /// The partition columns of a conformed batch, as a [`BinaryRow`] (prepared once).
    partition: RowProjection,
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
    /// Primary-key tables with managed BLOB columns (see [`crate::blob::managed`]).
    managed: Option<ManagedBlobColumns>,
    /// BLOB columns stored inline in the data file (see [`crate::blob::inline`]).
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

/// State of a postpone-bucket table's batch write into real buckets.
#[derive(Debug)]
struct PostponeFixed {
    planner: PostponeBucketPlanner,
    /// Rows of partitions without a bucket count yet (conformed columns, row kinds).
    pending: Vec<(Vec<ArrayRef>, Option<ArrayRef>)>,
    /// What the pending rows bring to each of their partitions.
    stats: BTreeMap<Vec<u8>, PartitionStats>,
    /// The table's column types: a pending row's serialized size is its [`BinaryRow`]'s
    /// (prepared once).
    row_types: Vec<DataType>,
}

impl TableWrite {
    /// Write stored bytes as they are: BLOB values that are serialized blob descriptors are
    /// not read as file references (see [`crate::blob::references`]). For rewrites of values
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
            crate::read::expire::RecordLevelExpire::try_from_schema(&schema, 0)?;
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
        let partition_fields: Vec<DataField> = partition_idx
            .iter()
            .map(|i| schema.fields[*i].clone())
            .collect();
        let partition = RowProjection::try_new(
            partition_idx,
            partition_fields
                .iter()
                .map(|f| f.data_type.clone())
                .collect(),
        )?;
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
                crate::blob::validation::validate_blob_fields(&schema)?;
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
            partition,
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
    /// [`crate::write::kv::postpone_fixed`]): each partition's bucket count comes from `planner`
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
            row_types: self
                .schema
                .fields
                .iter()
                .map(|f| f.data_type.clone())
                .collect(),
        });
        Ok(self)
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

    /// Set the table's root URI (a host location such as `file:///tmp/t` or `s3://b/t`; see
    /// [`crate::blob::managed::java_table_uri`]): managed BLOB descriptors name their pack
    /// by its full URI, as Java does.
    pub fn with_table_uri(mut self, location: &str) -> Self {
        self.table_uri = Some(crate::blob::managed::java_table_uri(location));
        self
    }

    /// The commit user the messages will be committed with. Only postpone-bucket tables
    /// need it before the commit (it is part of their file names, see
    /// [`crate::write::kv::postpone`]); without it they use a UUID drawn from the seed.
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
        if self.partition.is_empty() {
            wanted.insert(BinaryRow::empty().to_serialized());
        } else {
            let schema = batch.schema();
            let mut pcols = Vec::with_capacity(self.partition_fields.len());
            for (idx, field) in self.partition.indices().iter().zip(&self.partition_fields) {
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
            let partitions = BinaryRowEncoder::try_new(&pcols, self.partition.types())?;
            for r in 0..batch.num_rows() {
                wanted.insert(partitions.encode_serialized(r)?);
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
    /// ([`crate::blob::inline`]).
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
    /// [`FileContent::Part`]: crate::io::FileContent::Part
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
    /// [`FileContent::Part`]: crate::io::FileContent::Part
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
    /// global key index, before the first write (see [`crate::write::kv::cross_partition`]).
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
