//! Scan planning: from a snapshot to the live data files and their splits.
//!
//! Source: Java `org.apache.paimon.operation.{AbstractFileStoreScan, KeyValueFileStoreScan,
//! AppendOnlyFileStoreScan}`, `org.apache.paimon.table.source.snapshot.SnapshotReaderImpl`,
//! `org.apache.paimon.table.source.AbstractBatchTableScan`.
//!
//! Rounds of IO, in order: snapshot resolution and the read schema (see
//! [`super::snapshot_resolver::resolve_read`]); base and
//! delta manifest lists (one round); every manifest (one round); the index manifest when
//! deletion vectors are on; the schemas of files written under other schema ids (one round).

use std::collections::{BTreeMap, HashMap};

use futures_util::future::try_join_all;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::Io;
use crate::predicate::{BoundPredicate, ColumnStats, Predicate, value_stats_fields};
use crate::spec::CoreOptions;
use crate::spec::options::MergeEngine;
use crate::spec::partition::{POSTPONE_BUCKET, bucket_path, partition_path};
use crate::spec::row_range::{RowRange, RowRangeIndex};
use crate::spec::schema::{decode_schema, schema_path};
use crate::spec::snapshot::Snapshot;
use crate::spec::{
    BinaryRow, DataField, DataFileMeta, Datum, FileKind, IndexManifestEntry, ManifestEntry,
    ManifestFileMeta, TableSchema, decode_index_manifest, decode_manifest_into,
    decode_manifest_list, merge_entries,
};

use super::split::{
    KeyedFile, SplitGroup, append_splits, data_evolution_splits, merge_tree_splits,
};

/// Directory of manifests, manifest lists and index manifests, relative to the table root.
pub const MANIFEST_DIR: &str = "manifest";
/// Directory of index files (deletion vectors, hash index), relative to the table root.
pub const INDEX_DIR: &str = "index";
/// Index type of deletion-vector index files.
pub const DELETION_VECTORS_INDEX: &str = "DELETION_VECTORS";

/// How the rows of a table are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    /// Append table: files are read and concatenated.
    Append,
    /// Primary-key table: sorted runs are merged by key with a merge engine.
    PrimaryKey,
    /// Append table with row tracking and data evolution: files of one row-id range are
    /// merged column-wise (field groups).
    DataEvolution,
}

impl TableKind {
    /// The kind of a table with this schema.
    pub fn of(schema: &TableSchema) -> Result<TableKind> {
        let options = schema.core_options();
        Ok(if schema.is_primary_key_table() {
            TableKind::PrimaryKey
        } else if options.row_tracking_enabled()? && options.data_evolution_enabled()? {
            TableKind::DataEvolution
        } else {
            TableKind::Append
        })
    }
}

/// Deletion vector of one data file: where its bitmap lives in an index file.
///
/// Source: Java `org.apache.paimon.table.source.DeletionFile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletionFile {
    /// Index file path, relative to the table root (or absolute when external).
    pub path: String,
    /// Offset in bytes of the entry (its length field) in the index file.
    pub offset: i64,
    /// Length in bytes as recorded in the index manifest.
    pub length: i64,
    /// Number of deleted rows, when recorded.
    pub cardinality: Option<i64>,
    /// Size in bytes of the whole index file (bounds the entry read).
    pub index_file_size: i64,
}

/// A unit of reading: files of one partition and bucket.
///
/// Source: Java `org.apache.paimon.table.source.DataSplit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataSplit {
    /// Snapshot the split was planned from.
    pub snapshot_id: i64,
    /// Partition values.
    pub partition: BinaryRow,
    /// Bucket number.
    pub bucket: i32,
    /// Directory of the bucket relative to the table root, e.g. `dt=2024-01-01/bucket-0`.
    pub bucket_path: String,
    /// Total buckets recorded in the manifest entry.
    pub total_buckets: Option<i32>,
    /// The data files.
    pub data_files: Vec<DataFileMeta>,
    /// Deletion vector of each data file (same order), when deletion vectors are on.
    pub deletion_files: Option<Vec<Option<DeletionFile>>>,
    /// Whether the files can be read without merging.
    pub raw_convertible: bool,
}

impl DataSplit {
    /// Path of a data file of this split, relative to the table root (or absolute when the
    /// file is external).
    pub fn file_path(&self, file: &DataFileMeta) -> String {
        file.path_in_bucket(&self.bucket_path)
    }

    /// Total rows of the split's files (unmerged).
    pub fn row_count(&self) -> i64 {
        self.data_files.iter().map(|f| f.row_count).sum()
    }
}

/// What to scan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScanRequest {
    /// Table option overrides for this scan (`scan.snapshot-id`, `scan.tag-name`,
    /// `scan.timestamp-millis`, `source.split.target-size`, ...), applied on top of the
    /// schema's options.
    pub options: BTreeMap<String, String>,
    /// Row filter, used here only to skip partitions and files that cannot hold a matching
    /// row (partition values; key statistics of primary-key tables; value statistics of
    /// append tables). Readers must still apply it to rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Predicate>,
    /// Row-range pushdown (row-tracking tables only): inclusive `_ROW_ID` ranges, any order.
    /// Files whose row-id range intersects none of them are skipped; readers return only rows
    /// inside them (see [`Plan::row_ranges`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_ranges: Option<Vec<RowRange>>,
    /// Plan every level: level 0 of first-row and deletion-vector primary-key tables too,
    /// which a batch scan skips (Java `withLevelFilter(level -> true)`, as its
    /// `IndexBootstrap` reads the keys of a cross-partition table).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_levels: bool,
}

impl ScanRequest {
    /// Scan a given snapshot id.
    pub fn with_snapshot_id(mut self, id: i64) -> Self {
        self.options
            .insert("scan.snapshot-id".to_string(), id.to_string());
        self
    }

    /// Scan the snapshot of a tag.
    pub fn with_tag(mut self, tag: &str) -> Self {
        self.options
            .insert("scan.tag-name".to_string(), tag.to_string());
        self
    }

    /// Scan the latest snapshot committed at or before `millis` (epoch milliseconds).
    pub fn with_timestamp_millis(mut self, millis: i64) -> Self {
        self.options
            .insert("scan.timestamp-millis".to_string(), millis.to_string());
        self
    }

    /// Skip partitions and files that cannot match `filter` (rows are not filtered here).
    pub fn with_filter(mut self, filter: Predicate) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Read only rows whose `_ROW_ID` lies in `ranges` (row-tracking tables).
    pub fn with_row_ranges(mut self, ranges: Vec<RowRange>) -> Self {
        self.row_ranges = Some(ranges);
        self
    }

    /// Set any option for this scan.
    pub fn with_option(mut self, key: &str, value: &str) -> Self {
        self.options.insert(key.to_string(), value.to_string());
        self
    }
}

/// The result of planning: splits plus everything a split reader needs besides bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The snapshot read; `None` for a table without snapshots (no splits).
    pub snapshot: Option<Snapshot>,
    /// The read schema: the table's latest schema for a read of the latest snapshot, the
    /// snapshot's schema for time travel (see
    /// [`read_schemas_for`](super::snapshot_resolver::read_schemas_for)).
    pub schema: TableSchema,
    /// The effective options (schema options plus the request's overrides).
    pub options: BTreeMap<String, String>,
    /// Every schema a data file of the plan was written with, by id (the read schema too).
    pub schemas: BTreeMap<i64, TableSchema>,
    /// How rows are read.
    pub table_kind: TableKind,
    /// The splits, in Java's order (partition, then bucket, in first-seen manifest order).
    pub splits: Vec<DataSplit>,
    /// The request's row ranges, sorted and merged (adjacent ranges merge); readers built
    /// from this plan return only rows inside them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_ranges: Option<Vec<RowRange>>,
    /// What the filter and row ranges left out of the live files (counts; not serialized
    /// when nothing was pruned).
    #[serde(default, skip_serializing_if = "Pruned::is_empty")]
    pub pruned: Pruned,
}

/// Live data files a plan left out, by reason. Files skipped by the batch scan's level rules
/// (level 0 of deletion-vector and first-row tables, the postpone bucket) are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pruned {
    /// Live data files considered (after the level rules, before any pruning).
    pub live_files: u64,
    /// Files whose partition values cannot match the filter.
    pub by_partition: u64,
    /// Files whose key (primary-key tables) or value (append tables) statistics cannot match
    /// the filter.
    pub by_stats: u64,
    /// Files whose row-id range holds none of the requested row ranges.
    pub by_row_range: u64,
}

impl Pruned {
    /// Whether nothing was pruned and nothing counted (plans of an empty table).
    pub fn is_empty(&self) -> bool {
        *self == Pruned::default()
    }
}

/// Plan a batch scan of the table at the IO root.
///
/// Errors: IO failures, corrupt metadata (naming the file), invalid options or an unknown
/// snapshot/tag.
pub async fn plan_scan<T>(io: &Io<T>, request: &ScanRequest) -> Result<Plan> {
    let travel = CoreOptions::new(request.options.clone());
    let resolved = super::snapshot_resolver::resolve_read(io, &travel).await?;
    let mut schemas = BTreeMap::new();
    // The snapshot's own schema when the read uses a newer one (reused if files need it).
    let mut snapshot_schema = None;
    let (snapshot, schema) = match resolved {
        Some((snapshot, read)) => {
            if read.snapshot.id != read.read.id {
                snapshot_schema = Some(read.snapshot);
            }
            (Some(snapshot), read.read)
        }
        None => match super::snapshot_resolver::read_latest_schema(io).await? {
            Some(schema) => (None, schema),
            None => {
                return Err(Error::invalid(
                    "no table here: schema/ holds no schema file".to_string(),
                ));
            }
        },
    };
    let options = schema.core_options().with_overrides(&request.options);
    let table_kind = TableKind::of(&schema)?;
    let row_ranges = match &request.row_ranges {
        Some(r) if !options.row_tracking_enabled()? => {
            return Err(Error::invalid(format!(
                "row ranges ({} given) need a table with row-tracking.enabled",
                r.len()
            )));
        }
        Some(r) => Some(RowRangeIndex::new(r)),
        None => None,
    };
    let Some(snapshot) = snapshot else {
        schemas.insert(schema.id, schema.clone());
        return Ok(Plan {
            snapshot: None,
            schema,
            options: options.map().clone(),
            schemas,
            table_kind,
            splits: Vec::new(),
            row_ranges: row_ranges.map(|r| r.ranges().to_vec()),
            pruned: Pruned::default(),
        });
    };

    let entries = read_live_entries(io, &snapshot).await?;
    let filter = request
        .filter
        .as_ref()
        .map(|f| f.bind(&schema.fields))
        .transpose()?;

    // Filters of a batch scan.
    let bucket_option = options.bucket()?;
    let skip_level0 = table_kind == TableKind::PrimaryKey
        && !request.all_levels
        && options.batch_scan_skip_level0()?;
    let only_real_buckets = bucket_option == POSTPONE_BUCKET;
    let entries: Vec<ManifestEntry> = entries
        .into_iter()
        .filter(|e| !(only_real_buckets && e.bucket < 0))
        .filter(|e| !(skip_level0 && e.file.level == 0))
        .collect();
    let mut pruned = Pruned {
        live_files: entries.len() as u64,
        ..Pruned::default()
    };
    let entries = match &filter {
        Some(f) => prune(entries, f, &schema, table_kind, io, &mut pruned).await?,
        None => entries,
    };
    let before_ranges = entries.len() as u64;
    // Row ranges: skip files whose row-id range intersects none (files without a first row
    // id cannot be placed and are kept; the reader rejects them).
    let entries: Vec<ManifestEntry> = match &row_ranges {
        Some(index) => entries
            .into_iter()
            .filter(|e| {
                e.file.row_id_range().is_none_or(|r| {
                    !r.is_empty()
                        && index.intersects(RowRange {
                            from: *r.start(),
                            to: *r.end(),
                        })
                })
            })
            .collect(),
        None => entries,
    };
    pruned.by_row_range = before_ranges - entries.len() as u64;

    // Group by partition then bucket, in first-seen order (Java's LinkedHashMap), then by
    // partition first (Java groups with a map of maps): a stable sort of the groups by their
    // partition's first position.
    let (keys, group_of) = group_by_bucket(&entries);
    let files_of = move_files_into_groups(entries, group_of, keys.len());
    let mut groups: Vec<(GroupKey, Vec<DataFileMeta>)> = keys.into_iter().zip(files_of).collect();
    groups.sort_by_key(|(key, _)| key.partition_rank);

    let target_size = options.split_target_size_bytes()?;
    let open_file_cost = options.split_open_file_cost_bytes()?;
    let partition_fields = schema.partition_fields()?;
    let partition_keys: Vec<DataField> = partition_fields.into_iter().cloned().collect();
    let naming = options.partition_naming()?;
    let data_root = options.data_root();

    // Deletion vectors.
    let deletion_vectors = options.deletion_vectors_enabled()?;
    let dv_map = if deletion_vectors {
        let in_bucket_dir = options.index_file_in_data_file_dir()?;
        let index_dir = |partition: &BinaryRow, bucket: i32| -> Result<String> {
            if !in_bucket_dir {
                return Ok(INDEX_DIR.to_string());
            }
            let partition_dir = partition_path(&partition_keys, partition, &naming)?;
            Ok(bucket_path(&data_root, &partition_dir, bucket))
        };
        read_deletion_files(io, &snapshot, index_dir).await?
    } else {
        BTreeMap::new()
    };
    let key_types = key_types(&schema)?;
    let merge_engine = if table_kind == TableKind::PrimaryKey {
        Some(options.merge_engine()?)
    } else {
        None
    };
    let count_blob_size = !options.blob_as_descriptor()?;

    let mut splits = Vec::new();
    for (key, files) in groups {
        let GroupKey {
            partition,
            bucket,
            total_buckets,
            ..
        } = key;
        let groups: Vec<SplitGroup> = match table_kind {
            TableKind::Append => append_splits(files, target_size, open_file_cost),
            TableKind::DataEvolution => {
                data_evolution_splits(files, target_size, open_file_cost, count_blob_size)
            }
            TableKind::PrimaryKey => {
                let keyed = files
                    .into_iter()
                    .map(|f| keyed_file(f, &key_types))
                    .collect::<Result<Vec<_>>>()?;
                merge_tree_splits(
                    keyed,
                    target_size,
                    open_file_cost,
                    deletion_vectors,
                    merge_engine == Some(MergeEngine::FirstRow),
                )
            }
        };
        let partition_dir = partition_path(&partition_keys, &partition, &naming)?;
        let bucket_path = bucket_path(&data_root, &partition_dir, bucket);
        let dvs = dv_map.get(&(partition.row_bytes().to_vec(), bucket));
        for g in groups {
            let deletion_files = deletion_vectors.then(|| {
                g.files
                    .iter()
                    .map(|f| dvs.and_then(|m| m.get(&f.file_name)).cloned())
                    .collect()
            });
            splits.push(DataSplit {
                snapshot_id: snapshot.id,
                partition: partition.clone(),
                bucket,
                bucket_path: bucket_path.clone(),
                total_buckets,
                data_files: g.files,
                deletion_files,
                raw_convertible: g.raw_convertible,
            });
        }
    }

    // Schemas of the files.
    schemas.insert(schema.id, schema.clone());
    if let Some(s) = snapshot_schema
        && splits
            .iter()
            .any(|sp| sp.data_files.iter().any(|f| f.schema_id == s.id))
    {
        schemas.insert(s.id, s);
    }
    let mut missing: Vec<i64> = splits
        .iter()
        .flat_map(|s| s.data_files.iter().map(|f| f.schema_id))
        .filter(|id| !schemas.contains_key(id))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    let loaded = try_join_all(missing.iter().map(|&id| async move {
        let path = schema_path(id);
        let bytes = io.read(&path).await?;
        decode_schema(&bytes, &path)
    }))
    .await?;
    for s in loaded {
        schemas.insert(s.id, s);
    }

    Ok(Plan {
        snapshot: Some(snapshot),
        schema,
        options: options.map().clone(),
        schemas,
        table_kind,
        splits,
        row_ranges: row_ranges.map(|r| r.ranges().to_vec()),
        pruned,
    })
}

/// Read a manifest list file.
pub async fn read_manifest_list<T>(io: &Io<T>, file_name: &str) -> Result<Vec<ManifestFileMeta>> {
    let path = format!("{MANIFEST_DIR}/{file_name}");
    let bytes = io.read(&path).await?;
    decode_manifest_list(&bytes, &path)
}

/// The manifests of a snapshot: base list then delta list, in order.
pub async fn read_data_manifests<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
) -> Result<Vec<ManifestFileMeta>> {
    let (base, delta) = futures_util::future::try_join(
        read_manifest_list(io, &snapshot.base_manifest_list),
        read_manifest_list(io, &snapshot.delta_manifest_list),
    )
    .await?;
    let mut all = base;
    all.extend(delta);
    Ok(all)
}

/// One (partition, bucket) of a plan: its partition row and bucket, the total buckets of its
/// first entry, and the rank of its partition among the plan's partitions in first-seen order.
struct GroupKey {
    partition: BinaryRow,
    bucket: i32,
    total_buckets: Option<i32>,
    partition_rank: usize,
}

/// The (partition, bucket) groups of `entries` in first-seen order, and each entry's group.
fn group_by_bucket(entries: &[ManifestEntry]) -> (Vec<GroupKey>, Vec<usize>) {
    let mut groups: Vec<GroupKey> = Vec::new();
    let mut index: HashMap<(&[u8], i32), usize> = HashMap::new();
    let mut partitions: HashMap<&[u8], usize> = HashMap::new();
    let mut group_of: Vec<usize> = Vec::with_capacity(entries.len());
    for e in entries {
        let key = (e.partition.row_bytes(), e.bucket);
        let g = match index.get(&key) {
            Some(&g) => g,
            None => {
                let rank = partitions.len();
                let partition_rank = *partitions.entry(e.partition.row_bytes()).or_insert(rank);
                index.insert(key, groups.len());
                groups.push(GroupKey {
                    partition: e.partition.clone(),
                    bucket: e.bucket,
                    total_buckets: Some(e.total_buckets),
                    partition_rank,
                });
                groups.len() - 1
            }
        };
        group_of.push(g);
    }
    (groups, group_of)
}

/// The data files of `entries` moved into their groups (`group_of[i]` is entry `i`'s), each
/// group's files in entry order. Entries are moved from the back and the source's memory is
/// given back as it empties, so a plan of many files holds about one copy of its file
/// metadata while it moves, not two.
fn move_files_into_groups(
    mut entries: Vec<ManifestEntry>,
    mut group_of: Vec<usize>,
    groups: usize,
) -> Vec<Vec<DataFileMeta>> {
    let mut sizes = vec![0usize; groups];
    for &g in &group_of {
        sizes[g] += 1;
    }
    let mut files_of: Vec<Vec<DataFileMeta>> =
        sizes.iter().map(|&n| Vec::with_capacity(n)).collect();
    while let (Some(e), Some(g)) = (entries.pop(), group_of.pop()) {
        files_of[g].push(e.file);
        // Give back each emptied 32nd (a shrinking reallocation; moves nothing on allocators
        // that can trim in place), so the entries and their groups overlap by 1/32 at most.
        if entries.len() < entries.capacity() / 32 * 31 {
            entries.shrink_to_fit();
            group_of.shrink_to_fit();
        }
    }
    for files in &mut files_of {
        files.reverse();
    }
    files_of
}

/// Every manifest entry of the given manifests, in manifest order (one round of reads).
///
/// The manifests' bytes are read together, then decoded in order into one `Vec` sized from
/// the manifest list's entry counts (at most one entry per 16 bytes read, so a corrupt count
/// cannot reserve more than the files could hold): a plan of many files holds its entries
/// once, not once per manifest and again gathered.
pub async fn read_manifest_entries<T>(
    io: &Io<T>,
    manifests: &[ManifestFileMeta],
) -> Result<Vec<ManifestEntry>> {
    let files = try_join_all(manifests.iter().map(|m| async move {
        let path = format!("{MANIFEST_DIR}/{}", m.file_name);
        let bytes = io.read(&path).await?;
        Ok::<_, Error>((path, bytes))
    }))
    .await?;
    let counted: i64 = manifests
        .iter()
        .map(|m| {
            m.num_added_files
                .max(0)
                .saturating_add(m.num_deleted_files.max(0))
        })
        .fold(0, i64::saturating_add);
    let read: usize = files.iter().map(|(_, b)| b.len()).sum();
    let mut entries = Vec::with_capacity(usize::try_from(counted).unwrap_or(0).min(read / 16));
    for (path, bytes) in files {
        decode_manifest_into(&bytes, &path, &mut entries)?;
    }
    Ok(entries)
}

/// The live data files of a snapshot (ADD entries after merging base and delta manifests),
/// in Java's order. Postpone-bucket and level-0 files included: this is what `$files` lists.
///
/// Errors: a DELETE entry whose ADD is missing (the snapshot's manifests are inconsistent).
pub async fn read_live_entries<T>(io: &Io<T>, snapshot: &Snapshot) -> Result<Vec<ManifestEntry>> {
    let manifests = read_data_manifests(io, snapshot).await?;
    let entries = read_manifest_entries(io, &manifests).await?;
    live_of_merged(snapshot.id, merge_entries(entries)?)
}

/// The ADD entries of merged manifest entries (`merged` from [`merge_entries`]) of snapshot
/// `snapshot_id`.
///
/// Errors: a DELETE entry left over (its ADD is missing: the manifests are inconsistent).
pub(crate) fn live_of_merged(
    snapshot_id: i64,
    merged: Vec<ManifestEntry>,
) -> Result<Vec<ManifestEntry>> {
    // Every entry must be an ADD: checked first, so `merged` is returned as it is (no copy
    // of a large plan's entries).
    if let Some(e) = merged.iter().find(|e| e.kind == FileKind::Delete) {
        return Err(Error::corrupt(
            format!("snapshot-{snapshot_id}"),
            "manifest",
            format!(
                "DELETE entry for data file {} (bucket {}) without a matching ADD",
                e.file.file_name, e.bucket
            ),
        ));
    }
    Ok(merged)
}

/// Entries of the snapshot's index manifest (empty when it has none).
pub async fn read_index_entries<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
) -> Result<Vec<IndexManifestEntry>> {
    let Some(name) = &snapshot.index_manifest else {
        return Ok(Vec::new());
    };
    let path = format!("{MANIFEST_DIR}/{name}");
    let bytes = io.read(&path).await?;
    decode_index_manifest(&bytes, &path)
}

type DvMap = BTreeMap<(Vec<u8>, i32), BTreeMap<String, DeletionFile>>;

/// Deletion files by (partition bytes, bucket) and data file name. `index_dir` gives the
/// directory of an index file of a partition and bucket that has no external path: `index`,
/// or the bucket directory under `index-file-in-data-file-dir`.
async fn read_deletion_files<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
    index_dir: impl Fn(&BinaryRow, i32) -> Result<String>,
) -> Result<DvMap> {
    let mut map: DvMap = BTreeMap::new();
    for e in read_index_entries(io, snapshot).await? {
        if e.kind != FileKind::Add || e.index_file.index_type != DELETION_VECTORS_INDEX {
            continue;
        }
        let path = match &e.index_file.external_path {
            Some(p) => p.clone(),
            None => e.index_file.path_in(&index_dir(&e.partition, e.bucket)?),
        };
        let per_bucket = map
            .entry((e.partition.row_bytes().to_vec(), e.bucket))
            .or_default();
        for r in e.index_file.dv_ranges.iter().flatten() {
            per_bucket.insert(
                r.data_file_name.clone(),
                DeletionFile {
                    path: path.clone(),
                    offset: i64::from(r.offset),
                    length: i64::from(r.length),
                    cardinality: r.cardinality,
                    index_file_size: e.index_file.file_size,
                },
            );
        }
    }
    Ok(map)
}

/// Types of the trimmed primary key (the key of KeyValue files), in key order.
pub fn key_types(schema: &TableSchema) -> Result<Vec<crate::spec::DataType>> {
    if !schema.is_primary_key_table() {
        return Ok(Vec::new());
    }
    schema
        .trimmed_primary_keys()?
        .iter()
        .map(|k| {
            schema.field(k).map(|f| f.data_type.clone()).ok_or_else(|| {
                Error::invalid(format!(
                    "primary key {k} is not a field of schema {}",
                    schema.id
                ))
            })
        })
        .collect()
}

fn keyed_file(
    file: DataFileMeta,
    key_types: &[crate::spec::DataType],
) -> Result<KeyedFile<Vec<Datum>>> {
    let decode = |row: &BinaryRow| -> Result<Vec<Datum>> {
        if row.arity() == 0 {
            return Ok(Vec::new());
        }
        row.fields(key_types)
    };
    let min_key = decode(&file.min_key)?;
    let max_key = decode(&file.max_key)?;
    Ok(KeyedFile {
        file,
        min_key,
        max_key,
    })
}

/// Serde of a [`TableSchema`] inside plans: its JSON object as Java writes it.
impl Serialize for TableSchema {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let bytes = crate::spec::encode_schema(self).map_err(serde::ser::Error::custom)?;
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(serde::ser::Error::custom)?;
        value.serialize(s)
    }
}

impl<'de> Deserialize<'de> for TableSchema {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        let bytes = serde_json::to_vec(&value).map_err(serde::de::Error::custom)?;
        decode_schema(&bytes, "<plan>").map_err(serde::de::Error::custom)
    }
}

/// Drop entries that cannot hold a row matching `filter`: by partition values, then by key
/// statistics (primary-key tables: the merged rows of a key only come from files whose key
/// range holds it) or value statistics (append tables). Data-evolution tables are only
/// pruned by partition (their columns are spread over files).
async fn prune<T>(
    entries: Vec<ManifestEntry>,
    filter: &BoundPredicate,
    schema: &TableSchema,
    table_kind: TableKind,
    io: &Io<T>,
    pruned: &mut Pruned,
) -> Result<Vec<ManifestEntry>> {
    let partition_fields: Vec<DataField> =
        schema.partition_fields()?.into_iter().cloned().collect();
    let partition_filter = filter.partition_predicate(&partition_fields);
    let partition_types: Vec<_> = partition_fields
        .iter()
        .map(|f| f.data_type.clone())
        .collect();
    // File schemas: statistics are interpreted with the schema the file was written with.
    let mut file_schemas: BTreeMap<i64, TableSchema> = BTreeMap::new();
    file_schemas.insert(schema.id, schema.clone());
    if table_kind != TableKind::DataEvolution {
        let mut ids: Vec<i64> = entries.iter().map(|e| e.file.schema_id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.retain(|id| *id != schema.id);
        for s in try_join_all(ids.iter().map(|&id| async move {
            let path = schema_path(id);
            let bytes = io.read(&path).await?;
            decode_schema(&bytes, &path)
        }))
        .await?
        {
            file_schemas.insert(s.id, s);
        }
    }
    // Key statistics columns: the trimmed primary keys of the file's schema.
    let key_fields = |s: &TableSchema| -> Option<Vec<DataField>> {
        s.trimmed_primary_keys()
            .ok()?
            .iter()
            .map(|k| s.field(k).cloned())
            .collect()
    };
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        if let Some(pf) = &partition_filter {
            let values = e.partition.fields(&partition_types)?;
            if !pf.partition_may_match(&values, &partition_fields) {
                pruned.by_partition += 1;
                continue;
            }
        }
        let keep = match table_kind {
            TableKind::PrimaryKey => match file_schemas.get(&e.file.schema_id).and_then(key_fields)
            {
                Some(fields) => {
                    let stats = ColumnStats::from_simple_stats(&e.file.key_stats, &fields);
                    filter.stats_may_match(e.file.row_count, &stats)
                }
                None => true,
            },
            TableKind::Append => match file_schemas
                .get(&e.file.schema_id)
                .and_then(|s| value_stats_fields(&e.file, &s.fields))
            {
                Some(fields) => {
                    let stats = ColumnStats::from_simple_stats(&e.file.value_stats, &fields);
                    filter.stats_may_match(e.file.row_count, &stats)
                }
                None => true,
            },
            TableKind::DataEvolution => true,
        };
        if keep {
            out.push(e);
        } else {
            pruned.by_stats += 1;
        }
    }
    Ok(out)
}
