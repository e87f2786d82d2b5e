//! Dynamic-bucket primary-key tables (`bucket` = -1): the hash index that assigns each key to
//! a bucket, and the per-bucket hash index files.
//!
//! A key goes to the bucket its hash already lives in (so a key never appears in two buckets);
//! a new hash goes to the first bucket of its partition that holds fewer than
//! `dynamic-bucket.target-row-num` hashes, else to a new bucket (the smallest unused id), else,
//! once `dynamic-bucket.max-buckets` buckets exist, to one of them picked at random (from the
//! host's seed). Each bucket that received new hashes gets a new `HASH` index file holding
//! every hash of the bucket, replacing the previous one in the same commit message.
//!
//! File layout (Java `IndexFile#writeInts`): the hashes as 4-byte big-endian ints, nothing
//! else; `_ROW_COUNT` is their number. We write them in ascending order (pypaimon's order;
//! Java writes its hash set's iteration order, which readers do not depend on).
//!
//! Source: Java `org.apache.paimon.index.HashBucketAssigner` and `PartitionIndex` (one
//! assigner: every bucket is "mine"), `DynamicBucketIndexMaintainer`, `HashIndexFile`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::spec::IndexFileMeta;
use crate::spec::file_names::INDEX_FILE_PREFIX;
use crate::spec::index_manifest::HASH_INDEX;
use crate::util::NameSource;

/// `dynamic-bucket.max-buckets`: the most buckets a partition may have (`-1`: no limit but
/// Java's `Short.MAX_VALUE`).
pub const DYNAMIC_BUCKET_MAX_BUCKETS: &str = "dynamic-bucket.max-buckets";

/// The hash index file of one (partition, bucket) of the snapshot a writer continues from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashIndexRestore {
    /// Partition, serialized ([`crate::spec::BinaryRow::to_serialized`]).
    pub partition: Vec<u8>,
    /// The bucket.
    pub bucket: i32,
    /// The live index file.
    pub file: IndexFileMeta,
    /// Its hashes, as decoded by [`decode_hash_index`].
    pub hashes: Vec<i32>,
}

/// The hashes of a `HASH` index file: `bytes` as 4-byte big-endian ints.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` when the length is not a multiple of 4.
pub fn decode_hash_index(bytes: &[u8], path: &str) -> Result<Vec<i32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Error::corrupt(
            path,
            "hash index",
            format!(
                "hash index file of {} bytes: not a whole number of 4-byte ints",
                bytes.len()
            ),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// The bytes of a `HASH` index file holding `hashes` (4-byte big-endian ints, in the given
/// order).
pub fn encode_hash_index(hashes: impl IntoIterator<Item = i32>) -> Vec<u8> {
    hashes.into_iter().flat_map(i32::to_be_bytes).collect()
}

/// Buckets of one partition: where each known hash lives and how full the buckets are.
///
/// Source: Java `org.apache.paimon.index.PartitionIndex`.
#[derive(Debug, Default)]
struct PartitionIndex {
    hash_to_bucket: HashMap<i32, i32>,
    /// Buckets not yet known to be full, with their hash counts, by ascending id (Java's
    /// `HashMap<Integer, Long>` iterates small non-negative ids in ascending order).
    non_full: BTreeMap<i32, i64>,
    /// Every bucket of the partition, in the order they became known.
    all: Vec<i32>,
    all_set: BTreeSet<i32>,
}

/// Bucket assignment and hash index maintenance of a dynamic-bucket table's writer.
#[derive(Debug)]
pub(crate) struct DynamicBuckets {
    target_row_num: i64,
    max_buckets: i32,
    /// Largest bucket id assigned by this writer so far (Java's assigner-wide counter).
    max_bucket_id: i32,
    partitions: HashMap<Vec<u8>, PartitionIndex>,
    /// Restored index files by (partition, bucket).
    restored: BTreeMap<(Vec<u8>, i32), HashIndexRestore>,
    /// Hash sets of buckets that received rows, and whether they changed.
    maintainers: BTreeMap<(Vec<u8>, i32), Maintainer>,
    random: NameSource,
}

#[derive(Debug)]
struct Maintainer {
    /// The live index file this bucket's next file replaces.
    live: Option<IndexFileMeta>,
    hashes: BTreeSet<i32>,
    modified: bool,
}

impl DynamicBuckets {
    /// An assigner continuing from `restored` (every live `HASH` index file).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a `target_row_num` below 1.
    pub(crate) fn new(
        target_row_num: i64,
        max_buckets: i32,
        restored: Vec<HashIndexRestore>,
        random: NameSource,
    ) -> Result<Self> {
        if target_row_num < 1 {
            return Err(Error::invalid(format!(
                "option 'dynamic-bucket.target-row-num' = {target_row_num}: must be positive"
            )));
        }
        if max_buckets == 0 || max_buckets < -1 {
            return Err(Error::invalid(format!(
                "option '{DYNAMIC_BUCKET_MAX_BUCKETS}' = {max_buckets}: must be -1 or positive"
            )));
        }
        Ok(DynamicBuckets {
            target_row_num,
            max_buckets,
            max_bucket_id: 0,
            partitions: HashMap::new(),
            restored: restored
                .into_iter()
                .map(|r| ((r.partition.clone(), r.bucket), r))
                .collect(),
            maintainers: BTreeMap::new(),
            random,
        })
    }

    fn load(&self, partition: &[u8]) -> PartitionIndex {
        let mut index = PartitionIndex::default();
        for ((p, bucket), r) in &self.restored {
            if p.as_slice() != partition {
                continue;
            }
            for h in &r.hashes {
                index.hash_to_bucket.insert(*h, *bucket);
            }
            *index.non_full.entry(*bucket).or_insert(0) += r.hashes.len() as i64;
            if index.all_set.insert(*bucket) {
                index.all.push(*bucket);
            }
        }
        index
    }

    /// The bucket of a key with hash `hash` (Java `BinaryRow#hashCode` of the trimmed primary
    /// key) in `partition` (serialized), recording the hash in that bucket's index.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the partition has `Short.MAX_VALUE` buckets and no limit is
    /// set (Java: increase the target bucket row number).
    pub(crate) fn assign(&mut self, partition: &[u8], hash: i32) -> Result<i32> {
        if !self.partitions.contains_key(partition) {
            let loaded = self.load(partition);
            self.partitions.insert(partition.to_vec(), loaded);
        }
        let target = self.target_row_num;
        let max_buckets = self.max_buckets;
        let max_bucket_id = self.max_bucket_id;
        let index = self
            .partitions
            .get_mut(partition)
            .ok_or_else(|| Error::invalid("partition index vanished"))?;
        let bucket = match index.hash_to_bucket.get(&hash) {
            Some(b) => *b,
            None => {
                let b = assign_new(index, hash, target, max_buckets, max_bucket_id, || {
                    self.random.next_u64()
                })?;
                index.hash_to_bucket.insert(hash, b);
                b
            }
        };
        self.max_bucket_id = self.max_bucket_id.max(bucket);
        let key = (partition.to_vec(), bucket);
        let restored = &self.restored;
        let m = self.maintainers.entry(key).or_insert_with_key(|k| {
            let r = restored.get(k);
            Maintainer {
                live: r.map(|r| r.file.clone()),
                hashes: r
                    .map(|r| r.hashes.iter().copied().collect())
                    .unwrap_or_default(),
                modified: false,
            }
        });
        if m.hashes.insert(hash) {
            m.modified = true;
        }
        Ok(bucket)
    }

    /// For every bucket whose hashes changed since the last call: the new index file to `Put`
    /// under `index_dir` (named `index-<uuid>-<n>` from `names`) and the file it replaces.
    /// The new file becomes the bucket's live one.
    pub(crate) fn prepare_commit(
        &mut self,
        index_dir: &str,
        uuid: &str,
        counter: &mut u32,
    ) -> Vec<IndexUpdate> {
        let mut out = Vec::new();
        for ((partition, bucket), m) in &mut self.maintainers {
            if !m.modified {
                continue;
            }
            let bytes = encode_hash_index(m.hashes.iter().copied());
            let file_name = format!("{INDEX_FILE_PREFIX}{uuid}-{counter}");
            *counter += 1;
            let file = IndexFileMeta {
                index_type: HASH_INDEX.to_owned(),
                file_name: file_name.clone(),
                file_size: bytes.len() as i64,
                row_count: m.hashes.len() as i64,
                dv_ranges: None,
                external_path: None,
                global_index: None,
            };
            let replaced = m.live.replace(file.clone());
            m.modified = false;
            out.push(IndexUpdate {
                partition: partition.clone(),
                bucket: *bucket,
                path: if index_dir.is_empty() {
                    file_name
                } else {
                    format!("{index_dir}/{file_name}")
                },
                bytes: Bytes::from(bytes),
                file,
                replaced,
            });
        }
        out
    }
}

/// A new hash index file of one bucket.
#[derive(Debug)]
pub(crate) struct IndexUpdate {
    pub(crate) partition: Vec<u8>,
    pub(crate) bucket: i32,
    pub(crate) path: String,
    pub(crate) bytes: Bytes,
    pub(crate) file: IndexFileMeta,
    pub(crate) replaced: Option<IndexFileMeta>,
}

/// Java `PartitionIndex#assign` for a hash not seen before.
fn assign_new(
    index: &mut PartitionIndex,
    _hash: i32,
    target: i64,
    max_buckets: i32,
    max_bucket_id: i32,
    mut random: impl FnMut() -> u64,
) -> Result<i32> {
    // An existing bucket with room, in ascending order; full ones are forgotten.
    let mut full = Vec::new();
    let mut chosen = None;
    for (bucket, count) in index.non_full.iter_mut() {
        if *count < target {
            *count += 1;
            chosen = Some(*bucket);
            break;
        }
        full.push(*bucket);
    }
    for b in full {
        index.non_full.remove(&b);
    }
    if let Some(b) = chosen {
        return Ok(b);
    }
    let global_max = if max_buckets == -1 {
        i32::from(i16::MAX)
    } else {
        max_buckets
    } - 1;
    if index.all_set.is_empty() || max_bucket_id < global_max {
        if let Some(b) = (0..=global_max).find(|b| !index.all_set.contains(b)) {
            index.non_full.insert(b, 1);
            index.all_set.insert(b);
            index.all.push(b);
            return Ok(b);
        }
        if max_buckets == -1 {
            return Err(Error::invalid(format!(
                "dynamic bucket: too many buckets ({max_bucket_id}); increase \
                 'dynamic-bucket.target-row-num' ({target})"
            )));
        }
    }
    // Every allowed bucket exists and is full: one of them at random.
    let n = index.all.len() as u64;
    if n == 0 {
        return Err(Error::invalid("dynamic bucket: no bucket to assign to"));
    }
    Ok(index.all[(random() % n) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn restore(bucket: i32, hashes: &[i32]) -> HashIndexRestore {
        HashIndexRestore {
            partition: vec![1],
            bucket,
            file: IndexFileMeta {
                index_type: HASH_INDEX.into(),
                file_name: format!("index-old-{bucket}"),
                file_size: 4 * hashes.len() as i64,
                row_count: hashes.len() as i64,
                dv_ranges: None,
                external_path: None,
                global_index: None,
            },
            hashes: hashes.to_vec(),
        }
    }

    #[test]
    fn hash_index_bytes_round_trip() {
        let bytes = encode_hash_index([-771300025, 1, 0x0102_0304]);
        assert_eq!(&bytes[8..], &[1, 2, 3, 4]);
        assert_eq!(
            decode_hash_index(&bytes, "f").unwrap(),
            vec![-771300025, 1, 0x0102_0304]
        );
        let err = decode_hash_index(&bytes[..5], "index/x").unwrap_err();
        assert!(err.to_string().contains("index/x"), "{err}");
    }

    #[test]
    fn new_keys_fill_buckets_in_order_then_open_new_ones() {
        let mut d = DynamicBuckets::new(2, -1, Vec::new(), NameSource::new(1)).unwrap();
        let got: Vec<i32> = [10, 11, 10, 12, 13, 14]
            .iter()
            .map(|h| d.assign(&[1], *h).unwrap())
            .collect();
        assert_eq!(got, vec![0, 0, 0, 1, 1, 2]);
        // Another partition starts from bucket 0 again.
        assert_eq!(d.assign(&[2], 10).unwrap(), 0);
        let mut n = 0;
        let updates = d.prepare_commit("index", "u", &mut n);
        let per: Vec<(Vec<u8>, i32, i64)> = updates
            .iter()
            .map(|u| (u.partition.clone(), u.bucket, u.file.row_count))
            .collect();
        assert_eq!(
            per,
            vec![
                (vec![1], 0, 2),
                (vec![1], 1, 2),
                (vec![1], 2, 1),
                (vec![2], 0, 1)
            ]
        );
        assert_eq!(updates[0].path, "index/index-u-0");
        assert_eq!(n, 4);
        // Nothing changed since: no new files.
        assert!(d.prepare_commit("index", "u", &mut n).is_empty());
        // A known key changes nothing either.
        d.assign(&[1], 13).unwrap();
        assert!(d.prepare_commit("index", "u", &mut n).is_empty());
    }

    #[test]
    fn restored_keys_keep_their_bucket_and_files_are_replaced() {
        let restored = vec![restore(0, &[5, 6]), restore(3, &[7])];
        let mut d = DynamicBuckets::new(2, -1, restored, NameSource::new(1)).unwrap();
        assert_eq!(d.assign(&[1], 7).unwrap(), 3);
        assert_eq!(d.assign(&[1], 6).unwrap(), 0);
        // Bucket 0 is full (2 of 2): the new hash goes to bucket 3, which has room.
        assert_eq!(d.assign(&[1], 8).unwrap(), 3);
        // Now both are full: a new bucket, the smallest unused id.
        assert_eq!(d.assign(&[1], 9).unwrap(), 1);
        let mut n = 0;
        let updates = d.prepare_commit("index", "u", &mut n);
        let got: Vec<(i32, Vec<i32>, Option<String>)> = updates
            .iter()
            .map(|u| {
                (
                    u.bucket,
                    decode_hash_index(&u.bytes, "x").unwrap(),
                    u.replaced.as_ref().map(|f| f.file_name.clone()),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (1, vec![9], None),
                (3, vec![7, 8], Some("index-old-3".to_owned())),
            ]
        );
    }

    #[test]
    fn max_buckets_caps_new_buckets() {
        let mut d = DynamicBuckets::new(1, 2, Vec::new(), NameSource::new(3)).unwrap();
        assert_eq!(d.assign(&[1], 1).unwrap(), 0);
        assert_eq!(d.assign(&[1], 2).unwrap(), 1);
        for h in 3..20 {
            let b = d.assign(&[1], h).unwrap();
            assert!(b == 0 || b == 1, "{b}");
            // The same key keeps its bucket.
            assert_eq!(d.assign(&[1], h).unwrap(), b);
        }
        assert!(DynamicBuckets::new(0, -1, Vec::new(), NameSource::new(1)).is_err());
        assert!(DynamicBuckets::new(1, 0, Vec::new(), NameSource::new(1)).is_err());
    }
}
