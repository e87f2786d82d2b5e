//! Primary-key (key-value) tables: rows buffered and sorted by key and sequence number,
//! merged per key, flushed into level-0 key-value files.
//!
//! * `buffer`: the write buffer, sorted and merged per key when it is flushed.
//! * [`file`]: format, compression and names of level-0 data and changelog files.
//! * [`dynamic_bucket`]: dynamic-bucket tables (`bucket = -1`): the hash index assigning keys
//!   to buckets.
//! * [`cross_partition`]: cross-partition updates (a key moves between partitions).
//! * [`postpone`], [`postpone_fixed`]: postpone-bucket tables (`bucket = -2`), written to
//!   `bucket-postpone` or straight into real buckets.
//!
//! Source: Java `org.apache.paimon.mergetree.MergeTreeWriter`,
//! `org.apache.paimon.operation.KeyValueFileStoreWrite`,
//! `org.apache.paimon.io.KeyValueFileWriterFactory`, `org.apache.paimon.index.HashIndexMaintainer`,
//! `org.apache.paimon.crosspartition.GlobalIndexAssigner`,
//! `org.apache.paimon.postpone.PostponeBucketWriter`.

pub(crate) mod buffer;
pub mod cross_partition;
pub mod dynamic_bucket;
pub mod file;
pub mod postpone;
pub mod postpone_fixed;
