//! Deleting rows of append and data-evolution tables by writing deletion vectors.
//!
//! Source: Java `org.apache.paimon.deletionvectors.append.AppendDeleteFileMaintainer`
//! (bucket-unaware tables), `BucketedAppendDeleteFileMaintainer` with `BucketedDvMaintainer`
//! (fixed-bucket tables) and `DeletionVectorsIndexFile` (the index file layout,
//! `spec/table-layout.md` §7.2).
//!
//! [`dv_delete_machine`] takes the scan [`Plan`] of the latest snapshot (planned with the
//! delete's filter, so files that cannot match are already left out) and:
//!
//! 1. reads every planned data file with the filter's columns and the row position (rows
//!    already deleted by the file's current deletion vector are skipped), and collects the
//!    positions of the rows where the filter is true (one round per file open, then one per
//!    batch). Data-evolution tables are read split by split through the data-evolution read
//!    (field groups merged) with `_ROW_ID`; a matching row's position is its row id minus the
//!    first row id of its row-id group, in the vector of the group's anchor (the oldest
//!    normal file, which keys the group's vector for every reader);
//! 2. reads the index manifest of the snapshot and the DV index files it has to rewrite
//!    (one `Read` each);
//! 3. builds the new deletion vectors (new positions ∪ the file's existing ones) and writes
//!    them as new DV index files (`Put index/index-<uuid>-<n>`, create-new):
//!    * bucket-unaware tables (`bucket = -1`): the DVs of the changed data files go into new
//!      index files; each index file holding an old DV of a changed data file is deleted and
//!      its other DVs are written again into a new index file (Java's
//!      `writeUnchangedDeletionVector`);
//!    * fixed-bucket tables: the bucket's index files are replaced by new ones holding all
//!      DVs of the bucket.
//!
//! It emits one [`DvDelete`]: the commit messages (index changes only) and the paths
//! written. Nothing is committed; the caller commits the messages (an `APPEND` commit whose
//! DV changes make it an `OVERWRITE` snapshot with conflict checks, as in Java) and deletes
//! the written files when the commit fails.
//!
//! [`check_deletion_vector_changes`] is the commit-time check that makes a delete racing with
//! another change of the same deletion vectors a [`Error::CommitConflict`].

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::Array;
use bytes::Bytes;

use crate::error::{Error, Result};
use crate::evolution::read::row_id_groups;
use crate::format::deletion_vector::{
    DeletionVector, decode_deletion_vector_index, encode_deletion_vector_index,
};
use crate::io::{Io, Machine, PutMode, next_emitted};
use crate::predicate::{BoundPredicate, Predicate};
use crate::read::{FileColumn, FileRead, FileReadSpec, ROW_ID, ReadContext, read_split};
use crate::scan::planner::{INDEX_DIR, read_index_entries};
use crate::scan::{Plan, TableKind};
use crate::spec::data_file::join;
use crate::spec::index_manifest::DELETION_VECTORS_INDEX;
use crate::spec::{
    BinaryRow, CoreOptions, FileKind, IndexFileMeta, IndexManifestEntry, ManifestEntry,
};

use super::NameSource;
use crate::commit::{CommitMessage, DataIncrement};

/// `deletion-vector.index-file.target-size` default: 2 MiB.
const DEFAULT_INDEX_FILE_TARGET_BYTES: i64 = 2 << 20;
/// Rows per batch when scanning data files for matching rows.
const BATCH_ROWS: usize = 8192;

/// What [`dv_delete_machine`] produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DvDelete {
    /// Rows newly deleted (matching rows that were not deleted before).
    pub rows_deleted: u64,
    /// One message per changed (partition, bucket) with `new_index_files` and
    /// `deleted_index_files` set; empty when no row matched.
    pub messages: Vec<CommitMessage>,
    /// Paths (relative to the table root) of the index files written, for cleanup.
    pub written: Vec<String>,
}

/// The new deleted positions of one data file.
#[derive(Debug)]
struct Hit {
    partition: BinaryRow,
    bucket: i32,
    total_buckets: Option<i32>,
    file_name: String,
    positions: Vec<u64>,
}

/// Delete the rows of `plan` (the latest snapshot of an append table with
/// `deletion-vectors.enabled`, planned with `filter`) where `filter` is true, by writing
/// deletion vectors; index file names come from `seed`. See the module docs for the rounds.
///
/// # Errors
/// `Unsupported` for primary-key and postpone-bucket tables, tables without
/// `deletion-vectors.enabled` (naming the option), `index-file-in-data-file-dir` and external
/// index paths; `Invalid` for a filter that does not bind; IO and decoding errors naming the
/// file.
pub fn dv_delete_machine(plan: Plan, filter: Predicate, seed: u64) -> Machine<DvDelete> {
    Machine::once("DeletionVectorDelete", move |io: Io<DvDelete>| async move {
        dv_delete(&io, plan, &filter, seed).await
    })
}

/// Checks that a table with these options can take deletion-vector deletes.
///
/// # Errors
/// As [`dv_delete_machine`] (the option checks only).
pub fn check_dv_deletable(kind: TableKind, options: &CoreOptions) -> Result<()> {
    if kind == TableKind::PrimaryKey {
        return Err(Error::unsupported(
            "deletion-vector deletes of a primary-key table (delete by writing -D rows)",
        ));
    }
    if !options.deletion_vectors_enabled()? {
        return Err(Error::unsupported(
            "deleting rows of an append table without deletion vectors: set \
             'deletion-vectors.enabled' = 'true' when creating the table (deletes through \
             row tracking are not supported yet)",
        ));
    }
    if options.index_file_in_data_file_dir()? {
        return Err(Error::unsupported(
            "deletion-vector deletes with 'index-file-in-data-file-dir' = 'true'",
        ));
    }
    let bucket = options.bucket()?;
    if bucket != -1 && bucket <= 0 {
        return Err(Error::unsupported(format!(
            "deletion-vector deletes of a table with 'bucket' = '{bucket}'"
        )));
    }
    Ok(())
}

async fn dv_delete(
    io: &Io<DvDelete>,
    plan: Plan,
    filter: &Predicate,
    seed: u64,
) -> Result<DvDelete> {
    let options = CoreOptions::new(plan.options.clone());
    check_dv_deletable(plan.table_kind, &options)?;
    let unaware = options.bucket()? == -1;
    let bitmap64 = options.deletion_vectors_bitmap64()?;
    let target_bytes = match options.get("deletion-vector.index-file.target-size") {
        None => DEFAULT_INDEX_FILE_TARGET_BYTES,
        Some(v) => crate::spec::options::parse_memory_size(v).map_err(|e| {
            Error::invalid(format!(
                "option 'deletion-vector.index-file.target-size' = '{v}': {e}"
            ))
        })?,
    };
    let bound = filter.bind(&plan.schema.fields)?;
    // 1. Matching positions per data file.
    let hits: Vec<Hit> = if options.data_evolution_enabled()? {
        data_evolution_hits(io, &plan, filter, &bound).await?
    } else {
        file_hits(io, &plan, &bound).await?
    };
    if hits.is_empty() {
        return Ok(DvDelete::default());
    }
    let rows_deleted = hits.iter().map(|h| h.positions.len() as u64).sum();

    // 2. The live DV index files of the changed (partition, bucket)s.
    let index_entries = match &plan.snapshot {
        Some(s) => read_index_entries(io, s).await?,
        None => Vec::new(),
    };
    let mut groups: BTreeMap<(BinaryRow, i32), Group> = BTreeMap::new();
    for h in hits {
        let g = groups
            .entry((h.partition.clone(), h.bucket))
            .or_insert_with(|| Group {
                total_buckets: h.total_buckets,
                new_positions: BTreeMap::new(),
            });
        g.new_positions
            .entry(h.file_name)
            .or_default()
            .extend(h.positions);
    }
    let mut names = NameSource::new(seed);
    let uuid = names.uuid();
    let mut writer = IndexWriter {
        uuid,
        next: 0,
        bitmap64,
        target_bytes,
        written: Vec::new(),
    };
    let mut messages = Vec::new();
    for ((partition, bucket), group) in groups {
        let live: Vec<&IndexManifestEntry> = index_entries
            .iter()
            .filter(|e| {
                e.kind == FileKind::Add
                    && e.index_file.index_type == DELETION_VECTORS_INDEX
                    && e.partition == partition
                    && (unaware || e.bucket == bucket)
            })
            .collect();
        // Index files to rewrite: those holding a DV of a changed data file (bucket-unaware)
        // or all of the bucket's (fixed bucket).
        let touched: Vec<&IndexManifestEntry> = live
            .iter()
            .copied()
            .filter(|e| {
                !unaware
                    || e.index_file
                        .dv_ranges
                        .iter()
                        .flatten()
                        .any(|r| group.new_positions.contains_key(&r.data_file_name))
            })
            .collect();
        let mut unchanged_by_file: Vec<Vec<(String, DeletionVector)>> = Vec::new();
        let mut changed: Vec<(String, DeletionVector)> = Vec::new();
        let mut old: BTreeMap<String, DeletionVector> = BTreeMap::new();
        for e in &touched {
            let f = &e.index_file;
            if f.external_path.is_some() {
                return Err(Error::unsupported(format!(
                    "rewriting deletion vector index file {} with an external path",
                    f.file_name
                )));
            }
            let path = f.path_in(INDEX_DIR);
            let bytes = io.read(&path).await?;
            let ranges = f.dv_ranges.clone().unwrap_or_default();
            let mut unchanged = Vec::new();
            for (name, dv) in decode_deletion_vector_index(&bytes, &ranges, &path, false)? {
                if group.new_positions.contains_key(&name) {
                    old.insert(name, dv);
                } else {
                    unchanged.push((name, dv));
                }
            }
            unchanged_by_file.push(unchanged);
        }
        for (name, positions) in group.new_positions {
            let fresh = DeletionVector::from_positions(positions);
            let dv = match old.get(&name) {
                Some(o) => fresh.union(o),
                None => fresh,
            };
            changed.push((name, dv));
        }
        let mut new_files = Vec::new();
        if unaware {
            for unchanged in unchanged_by_file {
                new_files.extend(writer.write(io, unchanged).await?);
            }
            new_files.extend(writer.write(io, changed).await?);
        } else {
            let mut all: Vec<(String, DeletionVector)> =
                unchanged_by_file.into_iter().flatten().collect();
            all.extend(changed);
            all.sort_by(|a, b| a.0.cmp(&b.0));
            new_files.extend(writer.write(io, all).await?);
        }
        messages.push(CommitMessage {
            partition,
            bucket,
            total_buckets: group.total_buckets,
            data_increment: DataIncrement {
                new_index_files: new_files,
                deleted_index_files: touched.iter().map(|e| e.index_file.clone()).collect(),
                ..DataIncrement::default()
            },
            compact_increment: Default::default(),
        });
    }
    Ok(DvDelete {
        rows_deleted,
        messages,
        written: writer.written,
    })
}

/// Matching positions of the data files of an append table: each file read with the
/// filter's columns and the row position (rows its vector deletes already skipped).
async fn file_hits(io: &Io<DvDelete>, plan: &Plan, bound: &BoundPredicate) -> Result<Vec<Hit>> {
    let mut columns: Vec<FileColumn> = bound
        .referenced_fields()
        .into_iter()
        .map(|f| FileColumn::Field(f.clone()))
        .collect();
    columns.push(FileColumn::Position);
    let spec = FileReadSpec::try_new(columns)?;
    let position_col = spec.columns.len() - 1;
    let mut hits: Vec<Hit> = Vec::new();
    for split in &plan.splits {
        for (i, file) in split.data_files.iter().enumerate() {
            let path = split.file_path(file);
            let file_schema = plan.schemas.get(&file.schema_id).ok_or_else(|| {
                Error::invalid(format!(
                    "data file {path} names schema {} which the plan does not hold",
                    file.schema_id
                ))
            })?;
            let deletion_file = split
                .deletion_files
                .as_ref()
                .and_then(|d| d.get(i))
                .and_then(Option::as_ref);
            let mut reader = FileRead::open(
                io,
                &path,
                file,
                file_schema,
                &spec,
                deletion_file,
                BATCH_ROWS,
            )
            .await?;
            let mut positions = Vec::new();
            while let Some(batch) = reader.next_batch(io).await? {
                let selected = bound.evaluate(&batch)?;
                let pos = batch
                    .column(position_col)
                    .as_any()
                    .downcast_ref::<arrow_array::Int64Array>()
                    .ok_or_else(|| Error::invalid("position column is not Int64"))?;
                for row in 0..batch.num_rows() {
                    if selected.is_valid(row) && selected.value(row) {
                        positions.push(u64::try_from(pos.value(row)).unwrap_or_default());
                    }
                }
            }
            if !positions.is_empty() {
                hits.push(Hit {
                    partition: split.partition.clone(),
                    bucket: split.bucket,
                    total_buckets: split.total_buckets,
                    file_name: file.file_name.clone(),
                    positions,
                });
            }
        }
    }
    Ok(hits)
}

/// Matching rows of a data-evolution table: each split read through the data-evolution read
/// (field groups merged, deleted rows skipped) with the filter's columns and `_ROW_ID`; a
/// matching row is deleted in the vector of its row-id group's anchor (the oldest normal
/// file), at its row id minus the group's first row id.
///
/// Source: Java `DataEvolutionSplitRead#applyDeletionVector` (vectors keyed by the anchor,
/// positions relative to its range), `DataEvolutionUtils#retrieveAnchorFile`.
async fn data_evolution_hits(
    io: &Io<DvDelete>,
    plan: &Plan,
    filter: &Predicate,
    bound: &BoundPredicate,
) -> Result<Vec<Hit>> {
    let mut names: Vec<String> = bound.referenced_columns();
    names.push(ROW_ID.to_owned());
    let ctx = Arc::new(ReadContext::try_new(
        plan,
        Some(&names),
        Some(filter),
        None,
        BATCH_ROWS,
    )?);
    let mut hits: Vec<Hit> = Vec::new();
    for split in &plan.splits {
        let files = &split.data_files;
        let groups = row_id_groups(files, |f| split.file_path(f))?;
        let mut row_ids: Vec<i64> = Vec::new();
        let mut read = read_split(Arc::clone(&ctx), split.clone());
        while let Some(batch) = next_emitted(io, &mut read).await? {
            let selected = bound.evaluate(&batch)?;
            let ids = batch
                .column_by_name(ROW_ID)
                .and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>())
                .ok_or_else(|| Error::invalid("the read returned no _ROW_ID column"))?;
            for row in 0..batch.num_rows() {
                if selected.is_valid(row) && selected.value(row) {
                    row_ids.push(ids.value(row));
                }
            }
        }
        row_ids.sort_unstable();
        let mut next = 0;
        for group in &groups {
            let end = next + row_ids[next..].partition_point(|id| *id <= group.range.to);
            let ids = &row_ids[next..end];
            next = end;
            if ids.is_empty() {
                continue;
            }
            let anchor = group.anchor(files).ok_or_else(|| {
                Error::invalid(format!(
                    "row-id group {} of a data-evolution table has no normal data file to \
                     hold its deletion vector",
                    group.range
                ))
            })?;
            let mut positions = Vec::with_capacity(ids.len());
            for id in ids {
                let p = id
                    .checked_sub(group.range.from)
                    .and_then(|p| u64::try_from(p).ok())
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "_ROW_ID {id} lies outside its row-id group {}",
                            group.range
                        ))
                    })?;
                positions.push(p);
            }
            hits.push(Hit {
                partition: split.partition.clone(),
                bucket: split.bucket,
                total_buckets: split.total_buckets,
                file_name: files[anchor].file_name.clone(),
                positions,
            });
        }
        if next != row_ids.len() {
            return Err(Error::invalid(format!(
                "_ROW_ID {} lies in no row-id group of its split",
                row_ids[next]
            )));
        }
    }
    Ok(hits)
}

/// The changes of one (partition, bucket).
struct Group {
    total_buckets: Option<i32>,
    /// Newly matched positions by data file name.
    new_positions: BTreeMap<String, Vec<u64>>,
}

/// Writes DV index files, rolling at the target size (Java
/// `DeletionVectorsIndexFile#writeWithRolling`).
struct IndexWriter {
    uuid: String,
    next: u64,
    bitmap64: bool,
    target_bytes: i64,
    written: Vec<String>,
}

impl IndexWriter {
    async fn write(
        &mut self,
        io: &Io<DvDelete>,
        dvs: Vec<(String, DeletionVector)>,
    ) -> Result<Vec<IndexFileMeta>> {
        let mut out = Vec::new();
        for chunk in roll_index_entries(dvs, self.bitmap64, self.target_bytes)? {
            out.push(self.put(io, chunk).await?);
        }
        Ok(out)
    }

    async fn put(
        &mut self,
        io: &Io<DvDelete>,
        dvs: Vec<(String, DeletionVector)>,
    ) -> Result<IndexFileMeta> {
        let file_name = format!("index-{}-{}", self.uuid, self.next);
        self.next += 1;
        let (meta, path) = put_dv_index_file(io, INDEX_DIR, file_name, &dvs, self.bitmap64).await?;
        self.written.push(path);
        Ok(meta)
    }
}

/// Cut vectors into index files as Java's `DeletionVectorIndexFileWriter#writeWithRolling`:
/// entries are added to a file (which starts with its version byte) until its size passes
/// `target_bytes`; no file for no vectors.
pub(crate) fn roll_index_entries(
    dvs: Vec<(String, DeletionVector)>,
    bitmap64: bool,
    target_bytes: i64,
) -> Result<Vec<Vec<(String, DeletionVector)>>> {
    let mut out = Vec::new();
    let mut chunk = Vec::new();
    let mut pos: i64 = 1;
    for (name, dv) in dvs {
        let (entry, _) = if bitmap64 {
            dv.encode_64()?
        } else {
            dv.encode_32()?
        };
        pos = pos.saturating_add(entry.len() as i64);
        chunk.push((name, dv));
        if pos > target_bytes {
            out.push(std::mem::take(&mut chunk));
            pos = 1;
        }
    }
    if !chunk.is_empty() {
        out.push(chunk);
    }
    Ok(out)
}

/// Write one deletion-vector index file `dir/file_name` (`Put`, create-new) holding `dvs`
/// (data file name, vector) in that order, with 64-bit bitmaps when `bitmap64`; `dvs` may be
/// empty (a file of the version byte alone, as Java writes when a bucket's last vector goes).
/// Returns its [`IndexFileMeta`] (`row_count` = number of vectors) and its path.
///
/// # Errors
/// Encoding errors; IO errors of the `Put`; [`Error::Invalid`] when the file already exists
/// (a reused file-name seed).
///
/// Source: Java `DeletionVectorIndexFileWriter#writeSingleFile`.
pub(crate) async fn put_dv_index_file<T: Send + 'static>(
    io: &Io<T>,
    dir: &str,
    file_name: String,
    dvs: &[(String, DeletionVector)],
    bitmap64: bool,
) -> Result<(IndexFileMeta, String)> {
    let (bytes, ranges) = encode_deletion_vector_index(dvs, bitmap64)?;
    let path = join(dir, &file_name);
    let file_size = bytes.len() as i64;
    if !io
        .put(&path, Bytes::from(bytes), PutMode::CreateNew)
        .await?
    {
        return Err(Error::invalid(format!(
            "deletion vector index file {path} already exists (file-name seed reused)"
        )));
    }
    Ok((
        IndexFileMeta {
            index_type: DELETION_VECTORS_INDEX.to_string(),
            file_name,
            file_size,
            row_count: ranges.len() as i64,
            dv_ranges: Some(ranges),
            external_path: None,
            global_index: None,
        },
        path,
    ))
}

/// Commit-time check of a commit's deletion-vector index changes against the latest
/// snapshot: `live` is its index manifest, `base` the live data files of the changed
/// partitions, `changes` this commit's index changes (DELETE and ADD entries).
///
/// * Bucket-unaware tables (Java `ConflictDetection` with `SimpleFileEntryWithDV`): every
///   data file that gets a new DV must still be live, and the index file the commit replaces
///   for it must be the one holding its DV now (none if it has none); every deleted index
///   file must be live.
/// * Fixed buckets: every data file that gets a new DV must still be live, and each DELETE
///   names the live index file of its bucket; with `check_bucketed` (non-compaction commits)
///   an ADD also goes to a bucket without one or replaces it in the same commit. Java
///   replaces the bucket's file without such checks, which can lose a concurrent change;
///   here that race is a conflict (compaction messages written by Java, which add without
///   deleting, still commit).
///
/// # Errors
/// [`Error::CommitConflict`] naming the data or index file.
pub fn check_deletion_vector_changes(
    live: &[IndexManifestEntry],
    changes: &[IndexManifestEntry],
    base: &[ManifestEntry],
    delta: &[ManifestEntry],
    bucket_unaware: bool,
    check_bucketed: bool,
) -> Result<()> {
    let is_dv = |e: &&IndexManifestEntry| e.index_file.index_type == DELETION_VECTORS_INDEX;
    let conflict = |what: String| Error::CommitConflict {
        detail: format!(
            "{what}: another commit changed the same deletion vectors or data files since \
             this change was computed; nothing was published, run it again"
        ),
    };
    check_deleted_files_vectors(live, changes, delta, bucket_unaware)?;
    if !changes.iter().any(|e| is_dv(&e)) {
        return Ok(());
    }
    // Whether each data file of the changed partitions is live after the commit.
    let mut live_data: BTreeMap<&str, bool> = BTreeMap::new();
    for e in base.iter().chain(delta) {
        live_data.insert(e.file.file_name.as_str(), e.kind == FileKind::Add);
    }
    if bucket_unaware {
        for d in changes
            .iter()
            .filter(is_dv)
            .filter(|e| e.kind == FileKind::Delete)
        {
            if !live
                .iter()
                .filter(is_dv)
                .any(|l| l.index_file.file_name == d.index_file.file_name)
            {
                return Err(conflict(format!(
                    "deletion vector index file {} is no longer live",
                    d.index_file.file_name
                )));
            }
        }
        for a in changes
            .iter()
            .filter(is_dv)
            .filter(|e| e.kind == FileKind::Add)
        {
            for r in a.index_file.dv_ranges.iter().flatten() {
                let name = r.data_file_name.as_str();
                if live_data.get(name) != Some(&true) {
                    return Err(conflict(format!(
                        "data file {name} of a new deletion vector is no longer live"
                    )));
                }
                let now = dv_holder(live.iter(), name);
                let replaced =
                    dv_holder(changes.iter().filter(|e| e.kind == FileKind::Delete), name);
                if now != replaced {
                    return Err(conflict(format!(
                        "the deletion vector of data file {name} is now in {} but this commit \
                         replaces {}",
                        now.as_deref().unwrap_or("no index file"),
                        replaced.as_deref().unwrap_or("none")
                    )));
                }
            }
        }
        return Ok(());
    }
    // Every new or grown vector must belong to a data file that is still live (a compaction
    // that marked rows of a file another commit has since rewritten would resurrect its
    // keys); vectors carried over unchanged from a replaced index file are not checked.
    let carried: BTreeMap<(&BinaryRow, i32, &str), Option<i64>> = changes
        .iter()
        .filter(is_dv)
        .filter(|e| e.kind == FileKind::Delete)
        .flat_map(|e| {
            e.index_file.dv_ranges.iter().flatten().map(move |r| {
                (
                    (&e.partition, e.bucket, r.data_file_name.as_str()),
                    r.cardinality,
                )
            })
        })
        .collect();
    for a in changes
        .iter()
        .filter(is_dv)
        .filter(|e| e.kind == FileKind::Add)
    {
        for r in a.index_file.dv_ranges.iter().flatten() {
            let key = (&a.partition, a.bucket, r.data_file_name.as_str());
            let unchanged = r.cardinality.is_some() && carried.get(&key) == Some(&r.cardinality);
            if !unchanged && live_data.get(r.data_file_name.as_str()) != Some(&true) {
                return Err(conflict(format!(
                    "data file {} of a new deletion vector of bucket {} is no longer live",
                    r.data_file_name, a.bucket
                )));
            }
        }
    }
    for c in changes.iter().filter(is_dv) {
        let current: Vec<&IndexManifestEntry> = live
            .iter()
            .filter(is_dv)
            .filter(|l| l.partition == c.partition && l.bucket == c.bucket)
            .collect();
        let ok = match c.kind {
            FileKind::Delete => current
                .iter()
                .any(|l| l.index_file.file_name == c.index_file.file_name),
            // Compactions: Java's messages add a bucket's new index file without deleting
            // the old one (the index manifest replaces it per bucket), so only the deletes
            // are checked.
            FileKind::Add if !check_bucketed => true,
            FileKind::Add => current.iter().all(|l| {
                changes.iter().filter(is_dv).any(|d| {
                    d.kind == FileKind::Delete && d.index_file.file_name == l.index_file.file_name
                })
            }),
        };
        if !ok {
            return Err(conflict(format!(
                "the deletion vectors of bucket {} changed (this commit {} {}, the live index \
                 files are [{}])",
                c.bucket,
                if c.kind == FileKind::Delete {
                    "replaces"
                } else {
                    "adds"
                },
                c.index_file.file_name,
                current
                    .iter()
                    .map(|l| l.index_file.file_name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

/// The name of the first deletion-vector index file of `entries` holding a vector of data
/// file `name`.
fn dv_holder<'a>(
    entries: impl Iterator<Item = &'a IndexManifestEntry>,
    name: &str,
) -> Option<String> {
    entries
        .filter(|e| e.index_file.index_type == DELETION_VECTORS_INDEX)
        .find(|e| {
            e.index_file
                .dv_ranges
                .iter()
                .flatten()
                .any(|r| r.data_file_name == name)
        })
        .map(|e| e.index_file.file_name.clone())
}

/// Every data file a commit deletes (and does not add back under the same name, as an
/// upgrade to another level does) must go with the deletion vector it has now: the index
/// file the commit replaces for it (a DELETE whose ranges name it; in a fixed bucket, an ADD
/// without any DELETE of that bucket replaces all its live files, as Java's messages do) must
/// be the live index file holding its vector, none when it has none. Otherwise rows another
/// commit deleted since (a vector it added or extended) would come back with the rewritten
/// rows.
///
/// Source: Java `ConflictDetection#buildDeltaEntriesWithDV` (data files paired with their
/// deletion vector file; Java pairs them for bucket-unaware tables only).
fn check_deleted_files_vectors(
    live: &[IndexManifestEntry],
    changes: &[IndexManifestEntry],
    delta: &[ManifestEntry],
    bucket_unaware: bool,
) -> Result<()> {
    let is_dv = |e: &&IndexManifestEntry| e.index_file.index_type == DELETION_VECTORS_INDEX;
    let readded: std::collections::BTreeSet<&str> = delta
        .iter()
        .filter(|e| e.kind == FileKind::Add)
        .map(|e| e.file.file_name.as_str())
        .collect();
    // Fixed buckets whose live files an ADD replaces implicitly.
    let implicit = |p: &BinaryRow, b: i32| {
        !bucket_unaware
            && changes
                .iter()
                .filter(is_dv)
                .any(|c| c.kind == FileKind::Add && &c.partition == p && c.bucket == b)
            && !changes
                .iter()
                .filter(is_dv)
                .any(|c| c.kind == FileKind::Delete && &c.partition == p && c.bucket == b)
    };
    for d in delta.iter().filter(|e| e.kind == FileKind::Delete) {
        let name = d.file.file_name.as_str();
        if readded.contains(name) {
            continue;
        }
        let in_scope = |e: &&IndexManifestEntry| {
            is_dv(e) && e.kind == FileKind::Add && (bucket_unaware || e.bucket == d.bucket)
        };
        let now = dv_holder(live.iter().filter(in_scope), name);
        let replaced = if implicit(&d.partition, d.bucket) {
            now.clone()
        } else {
            dv_holder(
                changes
                    .iter()
                    .filter(is_dv)
                    .filter(|e| e.kind == FileKind::Delete),
                name,
            )
        };
        if replaced != now {
            return Err(Error::CommitConflict {
                detail: format!(
                    "data file {name} is deleted with the deletion vector of {} but its vector \
                     is now in {}: another commit deleted rows of it since this change was \
                     planned; nothing was published, run it again",
                    replaced.as_deref().unwrap_or("no index file"),
                    now.as_deref().unwrap_or("no index file")
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::DeletionVectorMeta;

    #[test]
    fn index_files_roll_after_the_entry_that_passes_the_target() {
        let dvs: Vec<(String, DeletionVector)> = (0..3)
            .map(|i| (format!("f{i}"), DeletionVector::from_positions([1, 5, 9])))
            .collect();
        let entry = dvs[0].1.encode_32().unwrap().0.len() as i64;
        let sizes = |target: i64| -> Vec<usize> {
            roll_index_entries(dvs.clone(), false, target)
                .unwrap()
                .iter()
                .map(Vec::len)
                .collect()
        };
        // The version byte plus two entries pass 1 + 2 × entry - 1: roll after the second.
        assert_eq!(sizes(2 * entry), vec![2, 1]);
        assert_eq!(sizes(1 + 3 * entry), vec![3]);
        assert_eq!(sizes(1), vec![1, 1, 1]);
        assert!(roll_index_entries(Vec::new(), false, 1).unwrap().is_empty());
    }

    fn dv_entry(kind: FileKind, bucket: i32, index: &str, data: &[&str]) -> IndexManifestEntry {
        IndexManifestEntry {
            kind,
            partition: BinaryRow::empty(),
            bucket,
            index_file: IndexFileMeta {
                index_type: DELETION_VECTORS_INDEX.into(),
                file_name: index.into(),
                file_size: 10,
                row_count: data.len() as i64,
                dv_ranges: Some(
                    data.iter()
                        .map(|d| DeletionVectorMeta {
                            data_file_name: (*d).into(),
                            offset: 1,
                            length: 1,
                            cardinality: Some(1),
                        })
                        .collect(),
                ),
                external_path: None,
                global_index: None,
            },
        }
    }

    fn data(name: &str) -> ManifestEntry {
        use crate::spec::{DataFileMeta, FileSource, SimpleStats};
        ManifestEntry {
            kind: FileKind::Add,
            partition: BinaryRow::empty(),
            bucket: 0,
            total_buckets: -1,
            file: DataFileMeta {
                file_name: name.into(),
                file_size: 100,
                row_count: 10,
                min_key: BinaryRow::empty(),
                max_key: BinaryRow::empty(),
                key_stats: SimpleStats::empty(),
                value_stats: SimpleStats::empty(),
                min_sequence_number: 0,
                max_sequence_number: 9,
                schema_id: 0,
                level: 0,
                extra_files: vec![],
                creation_time_millis: None,
                delete_row_count: Some(0),
                embedded_index: None,
                file_source: Some(FileSource::Append),
                value_stats_cols: None,
                external_path: None,
                first_row_id: None,
                write_cols: None,
                write_cols_sequences: None,
            },
        }
    }

    fn is_conflict(r: Result<()>) -> bool {
        matches!(r, Err(Error::CommitConflict { .. }))
    }

    #[test]
    fn unaware_changes_must_replace_the_live_holder() {
        let live = vec![dv_entry(FileKind::Add, 0, "i1", &["f1", "f2"])];
        let base = vec![data("f1"), data("f2"), data("f3")];
        // Replace i1 (f1 changed, f2 re-added) and add f3's first DV: fine.
        let ok = vec![
            dv_entry(FileKind::Delete, 0, "i1", &["f1", "f2"]),
            dv_entry(FileKind::Add, 0, "i2", &["f2"]),
            dv_entry(FileKind::Add, 0, "i3", &["f1", "f3"]),
        ];
        check_deletion_vector_changes(&live, &ok, &base, &[], true, true).unwrap();
        // i1 was replaced meanwhile by i9.
        let now = vec![dv_entry(FileKind::Add, 0, "i9", &["f1", "f2"])];
        assert!(is_conflict(check_deletion_vector_changes(
            &now,
            &ok,
            &base,
            &[],
            true,
            true
        )));
        // f3 got a DV meanwhile, this commit adds one as if it had none.
        let now = vec![
            dv_entry(FileKind::Add, 0, "i1", &["f1", "f2"]),
            dv_entry(FileKind::Add, 0, "i8", &["f3"]),
        ];
        assert!(is_conflict(check_deletion_vector_changes(
            &now,
            &ok,
            &base,
            &[],
            true,
            true
        )));
        // f3 is no longer live.
        let gone = vec![data("f1"), data("f2")];
        assert!(is_conflict(check_deletion_vector_changes(
            &live,
            &ok,
            &gone,
            &[],
            true,
            true
        )));
    }

    #[test]
    fn bucketed_changes_must_replace_the_live_bucket_file() {
        let base = vec![data("f1"), data("f2"), data("f5")];
        let live = vec![dv_entry(FileKind::Add, 1, "i1", &["f1"])];
        let replace = vec![
            dv_entry(FileKind::Delete, 1, "i1", &["f1"]),
            dv_entry(FileKind::Add, 1, "i2", &["f1", "f2"]),
        ];
        check_deletion_vector_changes(&live, &replace, &base, &[], false, true).unwrap();
        // A first file for bucket 0 is fine; one for bucket 1 without replacing i1 is not.
        let first = vec![dv_entry(FileKind::Add, 0, "i3", &["f5"])];
        check_deletion_vector_changes(&live, &first, &base, &[], false, true).unwrap();
        let blind = vec![dv_entry(FileKind::Add, 1, "i3", &["f2"])];
        assert!(is_conflict(check_deletion_vector_changes(
            &live,
            &blind,
            &base,
            &[],
            false,
            true
        )));
        // Compactions may add without deleting, as Java's do.
        check_deletion_vector_changes(&live, &blind, &base, &[], false, false).unwrap();
        // Replacing a file that is gone, also by a compaction.
        let now = vec![dv_entry(FileKind::Add, 1, "i7", &["f1"])];
        for check_bucketed in [true, false] {
            assert!(is_conflict(check_deletion_vector_changes(
                &now,
                &replace,
                &base,
                &[],
                false,
                check_bucketed
            )));
        }
        // A new vector of a data file that is gone (f2), also by a compaction; a vector
        // carried over unchanged from the replaced file (f1) is not checked.
        let without_f2 = vec![data("f5")];
        for check_bucketed in [true, false] {
            assert!(is_conflict(check_deletion_vector_changes(
                &live,
                &replace,
                &without_f2,
                &[],
                false,
                check_bucketed
            )));
        }
        let carried = vec![
            dv_entry(FileKind::Delete, 1, "i1", &["f1"]),
            dv_entry(FileKind::Add, 1, "i2", &["f1", "f5"]),
        ];
        check_deletion_vector_changes(&live, &carried, &without_f2, &[], false, false).unwrap();
    }

    #[test]
    fn deleted_data_files_go_with_their_live_vector() {
        let deleted = |name: &str| ManifestEntry {
            kind: FileKind::Delete,
            ..data(name)
        };
        // Bucket-unaware: f1 has a vector in i1 now.
        let live = vec![dv_entry(FileKind::Add, 0, "i1", &["f1", "f2"])];
        // A compaction of f1 planned when f1 had no vector: conflict.
        assert!(is_conflict(check_deletion_vector_changes(
            &live,
            &[],
            &[data("f1"), data("f2")],
            &[deleted("f1")],
            true,
            false
        )));
        // Planned with i1 (replacing it, keeping f2's vector): fine.
        let replaces = vec![
            dv_entry(FileKind::Delete, 0, "i1", &["f1", "f2"]),
            dv_entry(FileKind::Add, 0, "i2", &["f2"]),
        ];
        check_deletion_vector_changes(
            &live,
            &replaces,
            &[data("f1"), data("f2")],
            &[deleted("f1")],
            true,
            false,
        )
        .unwrap();
        // Planned with i0, which another commit replaced by i1 meanwhile: conflict.
        let stale = vec![
            dv_entry(FileKind::Delete, 0, "i0", &["f1"]),
            dv_entry(FileKind::Add, 0, "i2", &["f2"]),
        ];
        assert!(is_conflict(check_deletion_vector_changes(
            &live,
            &stale,
            &[data("f1"), data("f2")],
            &[deleted("f1")],
            true,
            false
        )));
        // A file without a vector deleted without index changes: fine; a file moved to
        // another level (deleted and added back) keeps its vector.
        check_deletion_vector_changes(
            &live,
            &[],
            &[data("f1"), data("f3")],
            &[deleted("f3"), deleted("f1"), data("f1")],
            true,
            false,
        )
        .unwrap();
        // Fixed bucket: an ADD without a DELETE of the bucket (Java's compaction messages)
        // replaces its live file implicitly.
        let java_style = vec![dv_entry(FileKind::Add, 0, "i5", &["f2"])];
        check_deletion_vector_changes(
            &live,
            &java_style,
            &[data("f1"), data("f2")],
            &[deleted("f1")],
            false,
            false,
        )
        .unwrap();
        // ... but without any index change the live vector must not exist.
        assert!(is_conflict(check_deletion_vector_changes(
            &live,
            &[],
            &[data("f1"), data("f2")],
            &[deleted("f1")],
            false,
            false
        )));
    }
}
