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
//! [`check_deletion_vector_changes`](crate::commit::conflict::check_deletion_vector_changes)
//! is the commit-time check that makes a delete racing with another change of the same
//! deletion vectors a [`Error::CommitConflict`].

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::Array;
use bytes::Bytes;

use crate::error::{Error, Result};
use crate::format::deletion_vector::{
    DeletionVector, decode_deletion_vector_index, encode_deletion_vector_index,
};
use crate::io::{Io, Machine, PutMode, next_emitted};
use crate::predicate::{BoundPredicate, Predicate};
use crate::read::evolution::row_id_groups;
use crate::read::{FileColumn, FileRead, FileReadSpec, ReadContext, read_split};
use crate::scan::planner::{INDEX_DIR, read_index_entries};
use crate::scan::{Plan, TableKind};
use crate::spec::data_file::join;
use crate::spec::file_names::INDEX_FILE_PREFIX;
use crate::spec::index_manifest::DELETION_VECTORS_INDEX;
use crate::spec::special_fields::ROW_ID;
use crate::spec::{BinaryRow, CoreOptions, FileKind, IndexFileMeta, IndexManifestEntry};

use crate::commit::{CommitMessage, DataIncrement};
use crate::util::NameSource;

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
        let file_name = format!("{INDEX_FILE_PREFIX}{}-{}", self.uuid, self.next);
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
