//! From commit messages to manifest entries, and the partition sets and filters a commit works
//! with.
//!
//! Source: Java `org.apache.paimon.operation.commit.ManifestEntryChanges` (entries of the
//! append and compact parts), `FileStoreCommitImpl#tryUpgrade` (overwrite upgrade),
//! `org.apache.paimon.partition.PartitionPredicate` (static and multiple-partition filters).
//!
//! Some Java steps iterate a `HashMap` keyed by `BinaryRow` (row-id assignment grouped by
//! partition, overwrite upgrade per bucket); their order is reproduced with
//! [`java_hash_map_order`] and [`BinaryRow::hash_code`] so that row ids and manifest entry
//! order match Java's for the same inputs.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::predicate::{BoundPredicate, CmpOp, Literal, Predicate};
use crate::spec::{
    BinaryRow, DataField, DataType, Datum, FileKind, IndexFileMeta, IndexManifestEntry,
    ManifestEntry, ManifestFileMeta,
};

use crate::util::java_hash::{JavaHashMap, JavaKey};

use super::message::CommitMessage;

/// The manifest entries of a set of commit messages, split as Java commits them: the append
/// part (new and deleted data files, changelog, index changes of writes) and the compact part
/// (compaction before/after files, its changelog and index changes).
///
/// Source: Java `ManifestEntryChanges#collect`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryChanges {
    /// ADD of `new_files`, DELETE of `deleted_files`, message by message.
    pub append_table_files: Vec<ManifestEntry>,
    /// ADD of the writes' changelog files.
    pub append_changelog: Vec<ManifestEntry>,
    /// DELETE of `deleted_index_files` then ADD of `new_index_files`, message by message.
    pub append_index_files: Vec<IndexManifestEntry>,
    /// DELETE of `compact_before`, ADD of `compact_after`, message by message.
    pub compact_table_files: Vec<ManifestEntry>,
    /// ADD of the compactions' changelog files.
    pub compact_changelog: Vec<ManifestEntry>,
    /// DELETE of the compactions' deleted index files, then ADD of their new index files.
    pub compact_index_files: Vec<IndexManifestEntry>,
}

impl EntryChanges {
    /// Collect `messages` in order. `default_total_buckets` (the table's `bucket` option) is
    /// the `_TOTAL_BUCKETS` of entries whose message does not say.
    pub fn collect(messages: &[CommitMessage], default_total_buckets: i32) -> Self {
        let mut c = EntryChanges::default();
        for m in messages {
            let total = m.total_buckets.unwrap_or(default_total_buckets);
            let entry = |kind, file: &crate::spec::DataFileMeta| ManifestEntry {
                kind,
                partition: m.partition.clone(),
                bucket: m.bucket,
                total_buckets: total,
                file: file.clone(),
            };
            let index = |kind, file: &IndexFileMeta| IndexManifestEntry {
                kind,
                partition: m.partition.clone(),
                bucket: m.bucket,
                index_file: file.clone(),
            };
            let d = &m.data_increment;
            c.append_table_files
                .extend(d.new_files.iter().map(|f| entry(FileKind::Add, f)));
            c.append_table_files
                .extend(d.deleted_files.iter().map(|f| entry(FileKind::Delete, f)));
            c.append_changelog
                .extend(d.changelog_files.iter().map(|f| entry(FileKind::Add, f)));
            c.append_index_files.extend(
                d.deleted_index_files
                    .iter()
                    .map(|f| index(FileKind::Delete, f)),
            );
            c.append_index_files
                .extend(d.new_index_files.iter().map(|f| index(FileKind::Add, f)));
            let k = &m.compact_increment;
            c.compact_table_files
                .extend(k.compact_before.iter().map(|f| entry(FileKind::Delete, f)));
            c.compact_table_files
                .extend(k.compact_after.iter().map(|f| entry(FileKind::Add, f)));
            c.compact_changelog
                .extend(k.changelog_files.iter().map(|f| entry(FileKind::Add, f)));
            c.compact_index_files.extend(
                k.deleted_index_files
                    .iter()
                    .map(|f| index(FileKind::Delete, f)),
            );
            c.compact_index_files
                .extend(k.new_index_files.iter().map(|f| index(FileKind::Add, f)));
        }
        c
    }
}

/// Partitions whose live files a commit's conflict check has to read: those of the data file
/// changes, and those of deletion-vector and global index changes.
///
/// Source: Java `ManifestEntryChanges#changedPartitions`.
pub fn changed_partitions(
    data: &[ManifestEntry],
    index: &[IndexManifestEntry],
) -> BTreeSet<BinaryRow> {
    let mut out: BTreeSet<BinaryRow> = data.iter().map(|e| e.partition.clone()).collect();
    out.extend(
        index
            .iter()
            .filter(|e| {
                e.index_file.index_type == crate::spec::index_manifest::DELETION_VECTORS_INDEX
                    || e.index_file.global_index.is_some()
            })
            .map(|e| e.partition.clone()),
    );
    out
}

/// A distinct key of a Java `HashMap` (told apart by `index`) with Java hash code `hash`, of
/// a class that is not `Comparable` (`BinaryRow`, a partition-and-bucket pair).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct HashedKey {
    index: usize,
    hash: i32,
}

impl JavaKey for HashedKey {
    fn hash_code(&self) -> i32 {
        self.hash
    }

    fn compare_to(&self, _other: &Self) -> Option<Ordering> {
        None
    }
}

/// The iteration order of a Java `HashMap` (`new HashMap<>()`) into which distinct keys with
/// these `hash_codes` were `put` in order: indexes into `hash_codes`. The map is modelled
/// bin by bin, resizes and tree bins included ([`JavaHashMap`]).
pub fn java_hash_map_order(hash_codes: &[i32]) -> Vec<usize> {
    let mut map: JavaHashMap<HashedKey, usize> = JavaHashMap::new();
    for (index, &hash) in hash_codes.iter().enumerate() {
        map.put(Some(HashedKey { index, hash }), index);
    }
    map.into_values()
}

/// Group `entries` by partition in the order Java's `Collectors.groupingBy(partition)` (a
/// `HashMap`) yields the groups, keeping the entries' order inside a group.
///
/// Source: `FileStoreCommitImpl#tryCommitOnce` (`row-tracking.partition-group-on-commit`).
pub fn group_by_partition_java_order(entries: Vec<ManifestEntry>) -> Vec<ManifestEntry> {
    let mut keys: Vec<BinaryRow> = Vec::new();
    let mut index: BTreeMap<BinaryRow, usize> = BTreeMap::new();
    let mut groups: Vec<Vec<ManifestEntry>> = Vec::new();
    for e in entries {
        let i = *index.entry(e.partition.clone()).or_insert_with(|| {
            keys.push(e.partition.clone());
            groups.push(Vec::new());
            keys.len() - 1
        });
        groups[i].push(e);
    }
    let hashes: Vec<i32> = keys.iter().map(BinaryRow::hash_code).collect();
    let mut slots: Vec<Option<Vec<ManifestEntry>>> = groups.into_iter().map(Some).collect();
    java_hash_map_order(&hashes)
        .into_iter()
        .flat_map(|i| slots[i].take().unwrap_or_default())
        .collect()
}

/// Which partitions a commit touches or overwrites.
#[derive(Debug, Clone)]
pub enum PartitionFilter {
    /// Every partition (unpartitioned tables, whole-table overwrite).
    All,
    /// Exactly these partitions (dynamic overwrite, conflict checks).
    Set(BTreeSet<BinaryRow>),
    /// Partitions matching a static partition spec (`INSERT OVERWRITE ... PARTITION (...)`),
    /// possibly naming only some of the partition keys.
    Spec {
        /// The spec, as given.
        spec: BTreeMap<String, String>,
        /// The spec bound to the partition fields.
        predicate: BoundPredicate,
    },
}

impl PartitionFilter {
    /// A filter for a static partition spec (`key → value` as text; the table's
    /// `partition.default-name` means NULL), as Java's `createPartitionPredicate`. An empty
    /// spec is the whole table.
    ///
    /// # Errors
    /// [`Error::Invalid`] when a key is not a partition key or a value does not parse as the
    /// key's type.
    pub fn from_spec(
        spec: &BTreeMap<String, String>,
        partition_fields: &[DataField],
        default_name: &str,
    ) -> Result<Self> {
        if spec.is_empty() {
            return Ok(PartitionFilter::All);
        }
        let mut leaves = Vec::with_capacity(spec.len());
        for (key, value) in spec {
            if !partition_fields.iter().any(|f| &f.name == key) {
                return Err(Error::invalid(format!(
                    "overwrite partition spec names '{key}', which is not a partition key of \
                     {:?}",
                    partition_fields.iter().map(|f| &f.name).collect::<Vec<_>>()
                )));
            }
            leaves.push(if value == default_name {
                Predicate::is_null(key.as_str())
            } else {
                Predicate::compare(key.as_str(), CmpOp::Eq, Literal::String(value.clone()))
            });
        }
        let Some(predicate) = leaves.into_iter().reduce(Predicate::and) else {
            return Ok(PartitionFilter::All);
        };
        let predicate = predicate
            .bind(partition_fields)
            .map_err(|e| Error::invalid(format!("overwrite partition spec {spec:?}: {e}")))?;
        Ok(PartitionFilter::Spec {
            spec: spec.clone(),
            predicate,
        })
    }

    /// Whether `partition` is selected.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the row does not decode with `partition_fields`' types.
    pub fn test(&self, partition: &BinaryRow, partition_fields: &[DataField]) -> Result<bool> {
        Ok(match self {
            PartitionFilter::All => true,
            PartitionFilter::Set(set) => set.contains(partition),
            PartitionFilter::Spec { predicate, .. } => {
                let types: Vec<DataType> = partition_fields
                    .iter()
                    .map(|f| f.data_type.clone())
                    .collect();
                let values = partition.fields(&types)?;
                predicate.partition_may_match(&values, partition_fields)
            }
        })
    }

    /// Whether a manifest may hold entries of a selected partition, judged from its partition
    /// statistics (Java `PartitionPredicate#test(rowCount, min, max, nullCounts)`). `true`
    /// when unsure.
    pub fn may_match_manifest(
        &self,
        meta: &ManifestFileMeta,
        partition_fields: &[DataField],
    ) -> bool {
        let row_count = meta.num_added_files.saturating_add(meta.num_deleted_files);
        match self {
            PartitionFilter::All => true,
            PartitionFilter::Spec { predicate, .. } => {
                let stats = crate::predicate::ColumnStats::from_simple_stats(
                    &meta.partition_stats,
                    partition_fields,
                );
                stats.is_empty() || predicate.stats_may_match(row_count, &stats)
            }
            PartitionFilter::Set(set) => {
                set_may_match_stats(set, meta, partition_fields, row_count).unwrap_or(true)
            }
        }
    }
}

/// Java `MultiplePartitionPredicate#test` over manifest partition stats: for every field, the
/// range `[min, max]` of the set's values (plus "is null" when some value is null) must meet
/// the manifest's range. `None` when the stats cannot be decoded (unsure).
fn set_may_match_stats(
    set: &BTreeSet<BinaryRow>,
    meta: &ManifestFileMeta,
    fields: &[DataField],
    row_count: i64,
) -> Option<bool> {
    if fields.is_empty() {
        return Some(true);
    }
    if set.is_empty() {
        return Some(false);
    }
    let types: Vec<DataType> = fields
        .iter()
        .map(|f| f.data_type.with_nullable(true))
        .collect();
    let stats = &meta.partition_stats;
    if stats.min_values.arity() != fields.len() || stats.max_values.arity() != fields.len() {
        return None;
    }
    let mins = stats.min_values.fields(&types).ok()?;
    let maxs = stats.max_values.fields(&types).ok()?;
    let values: Vec<Vec<Datum>> = set
        .iter()
        .map(|p| p.fields(&types).ok())
        .collect::<Option<_>>()?;
    for i in 0..fields.len() {
        let null_count = stats.null_counts.get(i);
        let has_nulls_in_manifest = null_count.is_none_or(|n| n > 0);
        let all_null_in_manifest = null_count.is_some_and(|n| n >= row_count);
        let set_values: Vec<&Datum> = values.iter().map(|v| &v[i]).collect();
        let set_nulls = set_values.iter().filter(|v| v.is_null()).count();
        let is_null_ok = has_nulls_in_manifest;
        if set_nulls == set_values.len() {
            if !is_null_ok {
                return Some(false);
            }
            continue;
        }
        let non_null = set_values.iter().filter(|v| !v.is_null());
        let lo = non_null.clone().min()?;
        let hi = non_null.max()?;
        // `field >= lo` and `field <= hi` on the manifest's stats (unknown bounds match).
        let ge = !all_null_in_manifest && (maxs[i].is_null() || &maxs[i] >= *lo);
        let le = !all_null_in_manifest && (mins[i].is_null() || &mins[i] <= *hi);
        let (ge, le) = if set_nulls > 0 {
            (ge || is_null_ok, le || is_null_ok)
        } else {
            (ge, le)
        };
        if !(ge && le) {
            return Some(false);
        }
    }
    Some(true)
}

/// Java `FileStoreCommitImpl#tryUpgrade`: the new files of an overwrite of a primary-key table
/// move to the top level `max_level` when every file is at level 0 in a real bucket and, per
/// bucket, their key ranges do not overlap (then they are also sorted by min key); a bucket
/// with overlapping files keeps its files as they are. Buckets are visited in Java's
/// `HashMap` order of `(partition, bucket)`.
///
/// # Errors
/// [`Error::Corrupt`] when a min/max key does not decode with `key_types`.
pub fn upgrade_for_overwrite(
    entries: Vec<ManifestEntry>,
    key_types: &[DataType],
    max_level: i32,
) -> Result<Vec<ManifestEntry>> {
    if entries.iter().any(|e| e.file.level > 0 || e.bucket < 0) {
        return Ok(entries);
    }
    let mut keys: Vec<(BinaryRow, i32)> = Vec::new();
    let mut index: BTreeMap<(BinaryRow, i32), usize> = BTreeMap::new();
    let mut groups: Vec<Vec<ManifestEntry>> = Vec::new();
    for e in entries {
        let key = (e.partition.clone(), e.bucket);
        let i = *index.entry(key.clone()).or_insert_with(|| {
            keys.push(key);
            groups.push(Vec::new());
            keys.len() - 1
        });
        groups[i].push(e);
    }
    // `Objects.hash(partition, bucket)` = 31 * (31 + partition.hashCode()) + bucket.
    let hashes: Vec<i32> = keys
        .iter()
        .map(|(p, b)| {
            31i32
                .wrapping_add(p.hash_code())
                .wrapping_mul(31)
                .wrapping_add(*b)
        })
        .collect();
    let mut out = Vec::new();
    for i in java_hash_map_order(&hashes) {
        let group = std::mem::take(&mut groups[i]);
        let mut keyed = group
            .iter()
            .map(|e| {
                Ok((
                    decode_key(&e.file.min_key, key_types)?,
                    decode_key(&e.file.max_key, key_types)?,
                ))
            })
            .collect::<Result<Vec<(Vec<Datum>, Vec<Datum>)>>>()?
            .into_iter()
            .zip(group.iter().cloned())
            .collect::<Vec<_>>();
        // Java sorts with a stable sort by min key.
        keyed.sort_by(|a, b| a.0.0.cmp(&b.0.0));
        let overlapping = keyed.windows(2).any(|w| w[0].0.1 >= w[1].0.0);
        if overlapping {
            out.extend(group);
        } else {
            out.extend(keyed.into_iter().map(|(_, mut e)| {
                e.file.level = max_level;
                e
            }));
        }
    }
    Ok(out)
}

/// Decode a min/max key row with the trimmed primary key types (the empty row → no fields).
pub fn decode_key(row: &BinaryRow, key_types: &[DataType]) -> Result<Vec<Datum>> {
    if row.arity() == 0 {
        return Ok(Vec::new());
    }
    row.fields(key_types)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::TypeKind;

    fn int_row(v: i32) -> BinaryRow {
        BinaryRow::encode(&[Datum::Int(v)], &[DataType::not_null(TypeKind::Int)]).unwrap()
    }

    /// Goldens from Java (paimon 1.4.2 through jshell): `BinaryRow.EMPTY_ROW.hashCode()`,
    /// `BinaryRow.singleColumn(1).hashCode()`, the hash of `("20240514", 12)`, and the value
    /// order of a `HashMap` holding `singleColumn(i) -> i` for `i` in `0..20`.
    #[test]
    fn binary_row_hash_and_hash_map_order_match_java() {
        assert_eq!(BinaryRow::empty().hash_code(), -1670924195);
        assert_eq!(int_row(1).hash_code(), 1465514398);
        let row = BinaryRow::encode(
            &[Datum::String("20240514".into()), Datum::Int(12)],
            &[
                DataType::nullable(TypeKind::VarChar { length: 100 }),
                DataType::nullable(TypeKind::Int),
            ],
        )
        .unwrap();
        assert_eq!(row.hash_code(), 231719776);
        let hashes: Vec<i32> = (0..20).map(|i| int_row(i).hash_code()).collect();
        assert_eq!(
            java_hash_map_order(&hashes),
            vec![
                3, 1, 13, 9, 12, 19, 4, 8, 11, 14, 7, 2, 15, 17, 5, 16, 6, 10, 0, 18
            ]
        );
    }

    #[test]
    fn hash_map_order_buckets_then_insertion() {
        // Capacity 16: bucket = (h ^ h >>> 16) & 15.
        assert_eq!(java_hash_map_order(&[5, 3, 19, 3]), vec![1, 2, 3, 0]);
        // 13 keys force a resize to 32.
        let hashes: Vec<i32> = (0..13).map(|i| 31 - i).collect();
        let order = java_hash_map_order(&hashes);
        assert_eq!(order[0], 12, "hash 19 & 31 = 19 is the smallest bucket");
        assert_eq!(order[12], 0);
    }

    #[test]
    fn static_spec_filter() {
        let fields = vec![
            DataField::new(
                0,
                "dt",
                DataType::nullable(TypeKind::VarChar {
                    length: u32::MAX >> 1,
                }),
            ),
            DataField::new(1, "h", DataType::nullable(TypeKind::Int)),
        ];
        let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
        let row = |dt: Option<&str>, h: Option<i32>| {
            BinaryRow::encode(
                &[
                    dt.map_or(Datum::Null, |s| Datum::String(s.into())),
                    h.map_or(Datum::Null, Datum::Int),
                ],
                &types,
            )
            .unwrap()
        };
        let spec: BTreeMap<String, String> = [("h".to_string(), "07".to_string())].into();
        let f = PartitionFilter::from_spec(&spec, &fields, "__DEFAULT_PARTITION__").unwrap();
        assert!(f.test(&row(Some("a"), Some(7)), &fields).unwrap());
        assert!(!f.test(&row(Some("a"), Some(8)), &fields).unwrap());
        let spec: BTreeMap<String, String> =
            [("dt".to_string(), "__DEFAULT_PARTITION__".to_string())].into();
        let f = PartitionFilter::from_spec(&spec, &fields, "__DEFAULT_PARTITION__").unwrap();
        assert!(f.test(&row(None, Some(7)), &fields).unwrap());
        assert!(!f.test(&row(Some("x"), Some(7)), &fields).unwrap());
        let spec: BTreeMap<String, String> = [("nope".to_string(), "1".to_string())].into();
        assert!(PartitionFilter::from_spec(&spec, &fields, "d").is_err());
    }
}
