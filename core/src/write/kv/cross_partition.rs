//! Cross-partition updates of dynamic-bucket primary-key tables (`bucket` = -1, a partition
//! key outside the primary key): a key lives in one partition and bucket of the whole table,
//! and a write of the key into another partition moves or merges it there as Java's global
//! index does.
//!
//! Source: Java `org.apache.paimon.crosspartition.GlobalIndexAssigner` (one assigner),
//! `BucketAssigner`, `ExistingProcessor` (`DeleteExistingProcessor`,
//! `UseOldExistingProcessor`, `SkipNewExistingProcessor`) and `IndexBootstrap`.
//!
//! The index maps each live trimmed primary key to its (partition, bucket). The host fills it
//! before the first write from a merged read of the latest snapshot's keys, split by split
//! ([`CrossPartitionIndex::bootstrap`]; Java's `IndexBootstrap`), which also counts the keys
//! of every bucket. Then each input row, in order:
//! * a key in the index under the row's partition goes to its bucket;
//! * a key in the index under another partition: `deduplicate` writes a `-D` of the key (the
//!   row with the old partition's values) to the old bucket and then places the row as a new
//!   key; `partial-update` and `aggregation` write the row into the old partition and bucket
//!   (its partition columns take the old values); `first-row` drops the row;
//! * a new key goes to the first bucket of its partition (in bucket order) holding fewer than
//!   `dynamic-bucket.target-row-num` keys, else to the smallest unused bucket number.
//!
//! Such tables write no hash index files: Java rebuilds the index from the data at each job.
//! The bootstrap reads every level (level 0 of first-row and deletion-vector tables too, which
//! batch reads skip). With deletion vectors, a moved key's `-D` in its old bucket becomes a
//! deletion vector when the writer compacts level 0 before the commit.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int8Array, UInt32Array};

use crate::encode::row::BinaryRowEncoder;
use crate::error::{Error, Result};
use crate::spec::MergeEngine;
use crate::spec::{BinaryRow, DataType};

/// `_VALUE_KIND` byte of a `-D` row.
const DELETE: i8 = 3;

/// The global key index of a cross-partition table write (see the module docs).
#[derive(Debug)]
pub struct CrossPartitionIndex {
    /// Serialized trimmed primary key → (partition id, bucket).
    keys: HashMap<Vec<u8>, (usize, i32)>,
    /// Serialized partitions by id.
    partitions: Vec<Vec<u8>>,
    partition_ids: HashMap<Vec<u8>, usize>,
    /// Keys per bucket of each partition id.
    counts: Vec<BTreeMap<i32, i64>>,
    /// Values of the partition columns, one row per partition id (the table's Arrow types).
    partition_values: Vec<ArrayRef>,
    target_row_num: i64,
    engine: MergeEngine,
}

/// One row of a write after the index placed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacedRow {
    /// Row of the input.
    pub input_row: u32,
    /// The id of the partition the row is written to.
    pub partition: usize,
    /// The partition id whose values replace the row's partition columns (a `-D` of a moved
    /// key, or a merge into the key's old partition); `None`: the row's own.
    pub partition_from: Option<usize>,
    /// Written as a `-D`.
    pub delete: bool,
    /// The bucket.
    pub bucket: i32,
}

impl CrossPartitionIndex {
    /// An empty index for a table with `engine` and `dynamic-bucket.target-row-num`.
    pub fn new(engine: MergeEngine, target_row_num: i64) -> Self {
        CrossPartitionIndex {
            keys: HashMap::new(),
            partitions: Vec::new(),
            partition_ids: HashMap::new(),
            counts: Vec::new(),
            partition_values: Vec::new(),
            target_row_num,
            engine,
        }
    }

    /// Keys in the index.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// No key in the index.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The serialized partition of id `id` (as [`PlacedRow::partition`] names it; empty for
    /// an id this index never gave).
    pub fn partition_bytes(&self, id: usize) -> &[u8] {
        self.partitions.get(id).map_or(&[], Vec::as_slice)
    }

    /// The id of the partition `bytes`, adding it with the values of row `row` of
    /// `partition_columns` when new.
    fn partition_id(
        &mut self,
        bytes: &[u8],
        partition_columns: &[ArrayRef],
        row: usize,
    ) -> Result<usize> {
        if let Some(id) = self.partition_ids.get(bytes) {
            return Ok(*id);
        }
        let id = self.partitions.len();
        self.partitions.push(bytes.to_vec());
        self.partition_ids.insert(bytes.to_vec(), id);
        self.counts.push(BTreeMap::new());
        let row_values: Vec<ArrayRef> = partition_columns.iter().map(|c| c.slice(row, 1)).collect();
        self.partition_values = if self.partition_values.is_empty() {
            row_values
        } else {
            self.partition_values
                .iter()
                .zip(&row_values)
                .map(|(a, b)| {
                    arrow_select::concat::concat(&[a.as_ref(), b.as_ref()])
                        .map_err(|e| Error::arrow("collecting partition values", e))
                })
                .collect::<Result<_>>()?
        };
        Ok(id)
    }

    /// Add the live keys of one split of the latest snapshot: `key_columns` (the trimmed
    /// primary key, the table's Arrow types, typed `key_types`) of the merged rows of
    /// `partition`'s bucket `bucket`, whose partition columns are `partition_columns` (the
    /// same values on every row).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a key already in another partition or bucket (Java: "your data
    /// contains duplicates"); encoding errors.
    pub fn bootstrap(
        &mut self,
        key_columns: &[ArrayRef],
        key_types: &[DataType],
        partition: &BinaryRow,
        partition_columns: &[ArrayRef],
        bucket: i32,
    ) -> Result<()> {
        let rows = key_columns.first().map_or(0, |c| c.len());
        if rows == 0 {
            return Ok(());
        }
        let id = self.partition_id(&partition.to_serialized(), partition_columns, 0)?;
        let keys = BinaryRowEncoder::try_new(key_columns, key_types)?;
        for r in 0..rows {
            let key = keys.encode_serialized(r)?;
            if let Some((p, b)) = self.keys.insert(key, (id, bucket))
                && (p, b) != (id, bucket)
            {
                return Err(Error::invalid(format!(
                    "a primary key of this cross-partition table lives in two buckets \
                     (bucket {b} and bucket {bucket}); the table holds duplicate keys"
                )));
            }
            *self.counts[id].entry(bucket).or_insert(0) += 1;
        }
        Ok(())
    }

    /// Place the rows of one input batch: `partition_columns` and `key_columns` (trimmed
    /// primary key, typed `partition_types` / `key_types`) are the batch's. Returns the rows
    /// to write, in order (a row may give two, or none).
    ///
    /// # Errors
    /// Encoding errors.
    pub fn place(
        &mut self,
        partition_columns: &[ArrayRef],
        partition_types: &[DataType],
        key_columns: &[ArrayRef],
        key_types: &[DataType],
    ) -> Result<Vec<PlacedRow>> {
        let rows = key_columns.first().map_or(0, |c| c.len());
        let keys = BinaryRowEncoder::try_new(key_columns, key_types)?;
        let parts = BinaryRowEncoder::try_new(partition_columns, partition_types)?;
        let mut out = Vec::with_capacity(rows);
        for r in 0..rows {
            let bytes = parts.encode_serialized(r)?;
            let id = self.partition_id(&bytes, partition_columns, r)?;
            let key = keys.encode_serialized(r)?;
            let input_row = r as u32;
            match self.keys.get(&key).copied() {
                Some((old, bucket)) if old == id => out.push(PlacedRow {
                    input_row,
                    partition: id,
                    partition_from: None,
                    delete: false,
                    bucket,
                }),
                Some((old, old_bucket)) => match self.engine {
                    MergeEngine::Deduplicate => {
                        out.push(PlacedRow {
                            input_row,
                            partition: old,
                            partition_from: Some(old),
                            delete: true,
                            bucket: old_bucket,
                        });
                        if let Some(c) = self.counts[old].get_mut(&old_bucket) {
                            *c -= 1;
                        }
                        let bucket = self.assign(id);
                        self.keys.insert(key, (id, bucket));
                        out.push(PlacedRow {
                            input_row,
                            partition: id,
                            partition_from: None,
                            delete: false,
                            bucket,
                        });
                    }
                    MergeEngine::PartialUpdate | MergeEngine::Aggregation => {
                        out.push(PlacedRow {
                            input_row,
                            partition: old,
                            partition_from: Some(old),
                            delete: false,
                            bucket: old_bucket,
                        });
                    }
                    MergeEngine::FirstRow => {}
                },
                None => {
                    let bucket = self.assign(id);
                    self.keys.insert(key, (id, bucket));
                    out.push(PlacedRow {
                        input_row,
                        partition: id,
                        partition_from: None,
                        delete: false,
                        bucket,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Java `BucketAssigner#assignBucket` with one assigner.
    fn assign(&mut self, partition: usize) -> i32 {
        let counts = &mut self.counts[partition];
        for (bucket, count) in counts.iter_mut() {
            if *count < self.target_row_num {
                *count += 1;
                return *bucket;
            }
        }
        let mut b = 0;
        while counts.contains_key(&b) {
            b += 1;
        }
        counts.insert(b, 1);
        b
    }

    /// The columns of `placed` rows of a batch (`columns`, of which `partition_idx` are the
    /// partition columns) with their row kinds (`kinds`: Int8 `_VALUE_KIND` bytes, `None`: all
    /// inserts).
    ///
    /// # Errors
    /// Arrow errors.
    pub fn materialize(
        &self,
        placed: &[PlacedRow],
        columns: &[ArrayRef],
        partition_idx: &[usize],
        kinds: Option<&ArrayRef>,
    ) -> Result<(Vec<ArrayRef>, Option<ArrayRef>)> {
        let take = UInt32Array::from_iter_values(placed.iter().map(|p| p.input_row));
        let mut out = Vec::with_capacity(columns.len());
        for (i, c) in columns.iter().enumerate() {
            let col = match partition_idx.iter().position(|p| *p == i) {
                Some(j) if placed.iter().any(|p| p.partition_from.is_some()) => {
                    let sources: Vec<(usize, usize)> = placed
                        .iter()
                        .map(|p| match p.partition_from {
                            Some(id) => (1, id),
                            None => (0, p.input_row as usize),
                        })
                        .collect();
                    arrow_select::interleave::interleave(
                        &[c.as_ref(), self.partition_values[j].as_ref()],
                        &sources,
                    )
                    .map_err(|e| Error::arrow("moving rows to their key's partition", e))?
                }
                _ => arrow_select::take::take(c.as_ref(), &take, None)
                    .map_err(|e| Error::arrow("placing the rows of a batch", e))?,
            };
            out.push(col);
        }
        let any_delete = placed.iter().any(|p| p.delete);
        let kinds = match (kinds, any_delete) {
            (None, false) => None,
            (kinds, _) => {
                let base = kinds.map(|k| k.as_any().downcast_ref::<Int8Array>());
                let values: Vec<i8> = placed
                    .iter()
                    .map(|p| {
                        if p.delete {
                            DELETE
                        } else {
                            base.flatten().map_or(0, |k| k.value(p.input_row as usize))
                        }
                    })
                    .collect();
                Some(Arc::new(Int8Array::from(values)) as ArrayRef)
            }
        };
        Ok((out, kinds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::TypeKind;
    use arrow_array::{Int64Array, StringArray};

    fn cols(parts: &[&str], keys: &[i64]) -> (Vec<ArrayRef>, Vec<ArrayRef>) {
        (
            vec![Arc::new(StringArray::from(parts.to_vec())) as ArrayRef],
            vec![Arc::new(Int64Array::from(keys.to_vec())) as ArrayRef],
        )
    }

    fn place(index: &mut CrossPartitionIndex, parts: &[&str], keys: &[i64]) -> Vec<PlacedRow> {
        let (p, k) = cols(parts, keys);
        index
            .place(
                &p,
                &[DataType::parse_sql("STRING NOT NULL").unwrap()],
                &k,
                &[DataType::not_null(TypeKind::BigInt)],
            )
            .unwrap()
    }

    fn row(
        input_row: u32,
        partition: usize,
        partition_from: Option<usize>,
        delete: bool,
        bucket: i32,
    ) -> PlacedRow {
        PlacedRow {
            input_row,
            partition,
            partition_from,
            delete,
            bucket,
        }
    }

    #[test]
    fn new_keys_fill_buckets_in_order_and_moved_keys_free_their_slot() {
        let mut index = CrossPartitionIndex::new(MergeEngine::Deduplicate, 2);
        let placed = place(&mut index, &["a", "a", "a", "a", "a"], &[1, 2, 3, 1, 4]);
        let buckets: Vec<i32> = placed.iter().map(|p| p.bucket).collect();
        assert_eq!(buckets, vec![0, 0, 1, 0, 1], "target 2 keys per bucket");
        // Key 2 moves to b: a -D in a's bucket 0, then a new key of b; a's bucket 0 has room
        // again for key 5.
        let placed = place(&mut index, &["b", "a"], &[2, 5]);
        assert_eq!(
            placed,
            vec![
                row(0, 0, Some(0), true, 0),
                row(0, 1, None, false, 0),
                row(1, 0, None, false, 0)
            ]
        );
        assert_eq!(index.len(), 5);
    }

    #[test]
    fn other_engines_merge_into_the_old_partition_or_drop_the_row() {
        let mut index = CrossPartitionIndex::new(MergeEngine::PartialUpdate, 10);
        place(&mut index, &["a"], &[1]);
        assert_eq!(
            place(&mut index, &["b"], &[1]),
            vec![row(0, 0, Some(0), false, 0)]
        );
        let mut index = CrossPartitionIndex::new(MergeEngine::FirstRow, 10);
        place(&mut index, &["a"], &[1]);
        assert!(place(&mut index, &["b"], &[1]).is_empty());
    }

    #[test]
    fn materialized_rows_take_the_old_partition_values() {
        let mut index = CrossPartitionIndex::new(MergeEngine::Deduplicate, 10);
        let (p, k) = cols(&["a"], &[7]);
        index
            .bootstrap(
                &k,
                &[DataType::not_null(TypeKind::BigInt)],
                &BinaryRow::empty(),
                &p,
                3,
            )
            .unwrap();
        let placed = place(&mut index, &["b"], &[7]);
        assert_eq!(placed[0], row(0, 0, Some(0), true, 3));
        let (p, k) = cols(&["b"], &[7]);
        let columns = vec![p[0].clone(), k[0].clone()];
        let (out, kinds) = index.materialize(&placed, &columns, &[0], None).unwrap();
        let dt = out[0].as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(dt.iter().collect::<Vec<_>>(), vec![Some("a"), Some("b")]);
        let kinds = kinds.unwrap();
        let kinds = kinds.as_any().downcast_ref::<Int8Array>().unwrap();
        assert_eq!(kinds.values().to_vec(), vec![DELETE, 0]);
        // A key bootstrapped twice in different buckets: duplicates in the table.
        let e = index
            .bootstrap(
                &k,
                &[DataType::not_null(TypeKind::BigInt)],
                &BinaryRow::empty(),
                &p,
                4,
            )
            .unwrap_err();
        assert!(e.to_string().contains("duplicate"), "{e}");
    }
}
