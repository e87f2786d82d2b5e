//! Conflict detection between the files a commit changes and the live files of the snapshot
//! it commits on.
//!
//! Source: Java `org.apache.paimon.operation.commit.ConflictDetection#checkConflicts`, in
//! Java's order:
//!
//! 1. unless the commit is an OVERWRITE, the bucket count (`_TOTAL_BUCKETS` > 0) of each
//!    partition is the same over the base and the delta entries;
//! 2. the delta alone adds no file twice;
//! 3. base + delta merged: no file is added while already live, and every DELETE finds its
//!    live file ("File deletion conflicts", naming the file);
//! 4. primary-key tables: the files of one (partition, bucket, level ≥ 1) have disjoint key
//!    ranges ("LSM conflicts");
//! 5. data-evolution tables: Java's row-id existence check and, for compactions, its row-id
//!    range check (`checkRowIdExistence`, `checkRowIdRangeConflicts`).
//!
//! Every failure is an [`Error::CommitConflict`]: the commit gives up without retrying.
//! Deletion-vector index changes (Java's `SimpleFileEntryWithDV` pairing for bucket-unaware
//! tables) are checked by
//! [`check_deletion_vector_changes`], which the committer calls after these checks.
//! A deletion conflict whose partitions are all past `partition.expiration-time` (values-time
//! strategy, at the commit's time) says so, as Java's partition-expire hint does.
//! Not implemented: the global-index row-range check and the `rowIdCheckFromSnapshot` column
//! check.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::spec::index_manifest::DELETION_VECTORS_INDEX;
use crate::spec::{
    BinaryRow, CommitKind, DataField, DataType, Datum, FileIdentifier, FileKind,
    IndexManifestEntry, ManifestEntry,
};

use super::changes::decode_key;
use crate::maintenance::partitions::PartitionExpireConfig;
use crate::spec::file_names::{is_blob_file, is_vector_store_file};

/// What the checks need to know about the table.
#[derive(Debug, Clone)]
pub struct ConflictContext<'a> {
    /// Partition fields (for messages).
    pub partition_fields: &'a [DataField],
    /// Trimmed primary key types; `None` for tables without key-range checks (append tables,
    /// `pk-clustering-override`).
    pub key_types: Option<&'a [DataType]>,
    /// `data-evolution.enabled` (row-id checks).
    pub data_evolution: bool,
    /// Commit user of the base snapshot (for messages).
    pub base_commit_user: &'a str,
    /// Commit user of this commit (for messages).
    pub commit_user: &'a str,
    /// The table's partition expiry and the commit's time (epoch millis): with the
    /// `values-time` strategy it explains a deletion conflict whose partitions are all
    /// expired (Java `ConflictDetection`'s partition-expire check).
    pub partition_expire: Option<(&'a PartitionExpireConfig, i64)>,
}

impl ConflictContext<'_> {
    fn conflict(&self, what: String) -> Error {
        Error::CommitConflict {
            detail: format!(
                "{what} Give up committing. Base commit user is: {}; current commit user is: \
                 {}. Conflicts are normal when several jobs write the same partitions (or a \
                 job restarts from an old state); nothing was published.",
                self.base_commit_user, self.commit_user
            ),
        }
    }

    fn partition_string(&self, partition: &BinaryRow) -> String {
        if self.partition_fields.is_empty() {
            return "the table".to_string();
        }
        let types: Vec<DataType> = self
            .partition_fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        match partition.fields(&types) {
            Ok(values) => {
                let parts: Vec<String> = self
                    .partition_fields
                    .iter()
                    .zip(values)
                    .map(|(f, v)| {
                        let v = if v.is_null() {
                            "null".to_string()
                        } else {
                            v.to_string()
                        };
                        format!("{}={v}", f.name)
                    })
                    .collect();
                format!("partition {}", parts.join(", "))
            }
            Err(_) => format!("partition {partition:?}"),
        }
    }

    fn describe(&self, e: &ManifestEntry) -> String {
        format!(
            "{} ({}, bucket {}, level {})",
            e.file.file_name,
            self.partition_string(&e.partition),
            e.bucket,
            e.file.level
        )
    }
}

/// Run the checks of the module docs over `base` (the merged live entries of the changed
/// partitions of the latest snapshot) and `delta` (this commit's entries).
///
/// # Errors
/// [`Error::CommitConflict`] naming the first conflict found; [`Error::Corrupt`] if a key
/// does not decode.
pub fn check_conflicts(
    ctx: &ConflictContext<'_>,
    base: &[ManifestEntry],
    delta: &[ManifestEntry],
    kind: CommitKind,
    next_row_id: Option<i64>,
) -> Result<()> {
    if kind != CommitKind::Overwrite {
        check_bucket_keep_same(ctx, base.iter().chain(delta))?;
    }
    // The delta alone must not add one file twice.
    merge_checked(ctx, delta.iter().cloned())?;
    let merged = merge_checked(ctx, base.iter().chain(delta).cloned())?;
    if let Some(e) = merged.iter().find(|e| e.kind == FileKind::Delete) {
        if let Some(expiry) = ctx
            .partition_expire
            .and_then(|(config, now)| config.values_expiry(ctx.partition_fields, now))
        {
            let mut partitions: Vec<&BinaryRow> = merged
                .iter()
                .filter(|e| e.kind == FileKind::Delete)
                .map(|e| &e.partition)
                .collect();
            partitions.sort();
            partitions.dedup();
            if partitions.iter().all(|p| expiry.is_expired(p)) {
                let names: Vec<String> =
                    partitions.iter().map(|p| ctx.partition_string(p)).collect();
                return Err(ctx.conflict(format!(
                    "This commit writes to expired partitions ({}): partition expiry dropped \
                     them meanwhile (partition.expiration-time). Leave such rows out of the \
                     writes, or every later commit to them fails the same way.",
                    names.join("; ")
                )));
            }
        }
        return Err(ctx.conflict(format!(
            "File deletion conflicts detected! Trying to delete file {} which is not \
             previously added (it is not live in the latest snapshot).",
            ctx.describe(e)
        )));
    }
    if let Some(key_types) = ctx.key_types {
        check_key_ranges(ctx, &merged, key_types)?;
    }
    if ctx.data_evolution {
        check_row_id_existence(ctx, base, delta, next_row_id, kind)?;
        if kind == CommitKind::Compact {
            check_row_id_ranges(ctx, &merged)?;
        }
    }
    Ok(())
}

fn check_bucket_keep_same<'a>(
    ctx: &ConflictContext<'_>,
    entries: impl Iterator<Item = &'a ManifestEntry>,
) -> Result<()> {
    let mut totals: BTreeMap<&BinaryRow, i32> = BTreeMap::new();
    for e in entries.filter(|e| e.total_buckets > 0) {
        match totals.get(&e.partition) {
            None => {
                totals.insert(&e.partition, e.total_buckets);
            }
            Some(&old) if old != e.total_buckets => {
                return Err(ctx.conflict(format!(
                    "Total buckets of {} changed from {old} to {} without overwrite.",
                    ctx.partition_string(&e.partition),
                    e.total_buckets
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Java `FileEntry#mergeEntries` with conflict errors: ADD of a present identity fails;
/// DELETE removes a present identity or stays.
fn merge_checked(
    ctx: &ConflictContext<'_>,
    entries: impl Iterator<Item = ManifestEntry>,
) -> Result<Vec<ManifestEntry>> {
    let mut slots: Vec<Option<ManifestEntry>> = Vec::new();
    let mut index: BTreeMap<FileIdentifier, usize> = BTreeMap::new();
    for e in entries {
        let id = e.identifier();
        match e.kind {
            FileKind::Add => {
                if index.contains_key(&id) {
                    return Err(ctx.conflict(format!(
                        "File deletion conflicts detected! Trying to add file {} which is \
                         already added.",
                        ctx.describe(&e)
                    )));
                }
                index.insert(id, slots.len());
                slots.push(Some(e));
            }
            FileKind::Delete => match index.remove(&id) {
                Some(i) => slots[i] = None,
                None => {
                    index.insert(id, slots.len());
                    slots.push(Some(e));
                }
            },
        }
    }
    Ok(slots.into_iter().flatten().collect())
}

fn check_key_ranges(
    ctx: &ConflictContext<'_>,
    merged: &[ManifestEntry],
    key_types: &[DataType],
) -> Result<()> {
    type Keyed<'a> = (Vec<Datum>, Vec<Datum>, &'a ManifestEntry);
    let mut levels: BTreeMap<(&BinaryRow, i32, i32), Vec<Keyed<'_>>> = BTreeMap::new();
    for e in merged.iter().filter(|e| e.file.level >= 1) {
        let min = decode_key(&e.file.min_key, key_types)?;
        let max = decode_key(&e.file.max_key, key_types)?;
        levels
            .entry((&e.partition, e.bucket, e.file.level))
            .or_default()
            .push((min, max, e));
    }
    for files in levels.values_mut() {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        for w in files.windows(2) {
            if w[0].1 >= w[1].0 {
                return Err(ctx.conflict(format!(
                    "LSM conflicts detected! The key ranges of files {} and {} overlap.",
                    ctx.describe(w[0].2),
                    ctx.describe(w[1].2)
                )));
            }
        }
    }
    Ok(())
}

fn dedicated_storage_file(name: &str) -> bool {
    is_blob_file(name) || is_vector_store_file(name)
}

/// Inclusive row-id range of a file with a first row id.
fn row_range(e: &ManifestEntry) -> Option<(i64, i64)> {
    e.file.row_id_range().map(|r| (*r.start(), *r.end()))
}

/// Sorted, merged ranges (adjacent ranges merge when `merge_adjacent`).
fn range_index(mut ranges: Vec<(i64, i64)>, merge_adjacent: bool) -> Vec<(i64, i64)> {
    ranges.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (a, b) in ranges {
        match out.last_mut() {
            Some(last) if a <= last.1 || (merge_adjacent && a == last.1.saturating_add(1)) => {
                last.1 = last.1.max(b);
            }
            _ => out.push((a, b)),
        }
    }
    out
}

fn index_contains(index: &[(i64, i64)], r: (i64, i64)) -> bool {
    index.iter().any(|&(a, b)| a <= r.0 && r.1 <= b)
}

/// Java `ConflictDetection#checkRowIdExistence`: the row ids a data-evolution commit refers
/// to must still exist. A compaction's outputs must lie inside the (adjacent-merged) ranges of
/// the live normal files of their bucket; other commits' files with an id below the base's
/// `nextRowId` must match one range of the live normal files (overlaps merged) exactly
/// (dedicated BLOB/vector files: lie inside one).
fn check_row_id_existence(
    ctx: &ConflictContext<'_>,
    base: &[ManifestEntry],
    delta: &[ManifestEntry],
    next_row_id: Option<i64>,
    kind: CommitKind,
) -> Result<()> {
    let existing: Vec<&ManifestEntry> = base
        .iter()
        .filter(|e| e.file.first_row_id.is_some() && !dedicated_storage_file(&e.file.file_name))
        .collect();
    let fail = |e: &ManifestEntry| {
        ctx.conflict(format!(
            "Row ID existence conflict: file {} references first row id {:?} and {} rows, but \
             no matching file exists in the latest snapshot (rewritten by a concurrent \
             compaction or removed by an overwrite?).",
            ctx.describe(e),
            e.file.first_row_id,
            e.file.row_count
        ))
    };
    if kind == CommitKind::Compact {
        let mut by_bucket: BTreeMap<(&BinaryRow, i32), Vec<(i64, i64)>> = BTreeMap::new();
        for e in &existing {
            if let Some(r) = row_range(e) {
                by_bucket
                    .entry((&e.partition, e.bucket))
                    .or_default()
                    .push(r);
            }
        }
        let by_bucket: BTreeMap<_, _> = by_bucket
            .into_iter()
            .map(|(k, v)| (k, range_index(v, true)))
            .collect();
        for e in delta.iter().filter(|e| e.kind == FileKind::Add) {
            let Some(r) = row_range(e) else { continue };
            let ok = by_bucket
                .get(&(&e.partition, e.bucket))
                .is_some_and(|idx| index_contains(idx, r));
            if !ok {
                return Err(fail(e));
            }
        }
        return Ok(());
    }
    let Some(next) = next_row_id else {
        return Ok(());
    };
    let to_check: Vec<&ManifestEntry> = delta
        .iter()
        .filter(|e| e.kind == FileKind::Add && e.file.first_row_id.is_some_and(|f| f < next))
        .collect();
    if to_check.is_empty() {
        return Ok(());
    }
    let merged = range_index(
        existing.iter().filter_map(|e| row_range(e)).collect(),
        false,
    );
    for e in to_check {
        let Some(r) = row_range(e) else { continue };
        let ok = if dedicated_storage_file(&e.file.file_name) {
            index_contains(&merged, r)
        } else {
            merged.contains(&r)
        };
        if !ok {
            return Err(fail(e));
        }
    }
    Ok(())
}

/// Java `ConflictDetection#checkRowIdRangeConflicts` (compactions of data-evolution tables):
/// live normal files whose row-id ranges overlap must all have the same range, and every live
/// dedicated BLOB/vector file must lie inside one normal file's range.
fn check_row_id_ranges(ctx: &ConflictContext<'_>, merged: &[ManifestEntry]) -> Result<()> {
    let with_ids: Vec<(&ManifestEntry, (i64, i64))> = merged
        .iter()
        .filter_map(|e| row_range(e).map(|r| (e, r)))
        .collect();
    let mut data: Vec<(&ManifestEntry, (i64, i64))> = with_ids
        .iter()
        .filter(|(e, _)| !dedicated_storage_file(&e.file.file_name))
        .copied()
        .collect();
    data.sort_by_key(|(_, r)| *r);
    // Groups of overlapping ranges must hold one range only.
    let mut group_end: Option<i64> = None;
    let mut group_range: Option<(i64, i64)> = None;
    let mut group_first: Option<&ManifestEntry> = None;
    for (e, r) in &data {
        match group_end {
            Some(end) if r.0 <= end => {
                if group_range != Some(*r) {
                    return Err(ctx.conflict(format!(
                        "For a data-evolution table, concurrent 'MERGE INTO' and 'COMPACT' \
                         operations conflict: files {} and {} have overlapping but different \
                         row-id ranges.",
                        group_first.map_or_else(String::new, |f| ctx.describe(f)),
                        ctx.describe(e)
                    )));
                }
                group_end = Some(end.max(r.1));
            }
            _ => {
                group_end = Some(r.1);
                group_range = Some(*r);
                group_first = Some(e);
            }
        }
    }
    let data_index = range_index(data.iter().map(|(_, r)| *r).collect(), false);
    for (e, r) in with_ids
        .iter()
        .filter(|(e, _)| dedicated_storage_file(&e.file.file_name))
    {
        if !index_contains(&data_index, *r) {
            return Err(ctx.conflict(format!(
                "For a data-evolution table, concurrent 'MERGE INTO' and 'COMPACT' operations \
                 conflict: dedicated file {} with row ids {}..={} is not covered by one data \
                 file range.",
                ctx.describe(e),
                r.0,
                r.1
            )));
        }
    }
    Ok(())
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

/// Hash index files (dynamic-bucket tables) replace each other per (partition, bucket), so a
/// writer that restored an older index file than the live one would drop the keys another
/// commit assigned meanwhile, and a later write could put such a key into a second bucket.
/// Each `HASH` change must replace exactly the live file of its bucket (or add the first one).
/// Java has no such check (it supports one writing job per dynamic-bucket table); this makes
/// two racing writers a [`Error::CommitConflict`] instead of a silently broken index.
pub(crate) fn check_hash_index_changes(
    live: &[IndexManifestEntry],
    changes: &[IndexManifestEntry],
) -> Result<()> {
    use crate::spec::index_manifest::HASH_INDEX;
    let is_hash = |e: &&IndexManifestEntry| e.index_file.index_type == HASH_INDEX;
    for c in changes.iter().filter(is_hash) {
        let current = live
            .iter()
            .filter(is_hash)
            .find(|l| l.partition == c.partition && l.bucket == c.bucket);
        let replaced_here = changes.iter().filter(is_hash).any(|d| {
            d.kind == FileKind::Delete && d.partition == c.partition && d.bucket == c.bucket
        });
        let ok = match c.kind {
            FileKind::Delete => {
                current.is_some_and(|l| l.index_file.file_name == c.index_file.file_name)
            }
            FileKind::Add => current.is_none() || replaced_here,
        };
        if !ok {
            return Err(Error::CommitConflict {
                detail: format!(
                    "the hash index of bucket {} changed since this write started (it {} {}, \
                     the live file is {}): another writer committed to the same dynamic \
                     bucket; nothing was published, write again",
                    c.bucket,
                    if c.kind == FileKind::Delete {
                        "replaces"
                    } else {
                        "adds"
                    },
                    c.index_file.file_name,
                    current.map_or("none", |l| l.index_file.file_name.as_str())
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
