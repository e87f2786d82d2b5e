//! Writing: rows (Arrow) become data files and commit messages.
//!
//! Writers are pure: they buffer rows, encode files into bytes and hand them to the host as
//! `Put` requests; the names of new files come from a host-given seed ([`crate::util::NameSource`]).
//!
//! The flow of a batch ([`TableWrite`]): conformed to the table's columns, routed to its
//! (partition, bucket) ([`bucket`] for fixed buckets, [`kv::dynamic_bucket`] and
//! [`kv::cross_partition`] for dynamic ones), handed to that bucket's writer, which rolls and
//! encodes files ([`crate::encode`]) and turns them into commit messages.
//!
//! * [`table_write`]: [`TableWrite`], the writers per (partition, bucket), file rolling,
//!   commit messages.
//! * [`append`]: append tables (bucket-unaware and fixed buckets), deleting rows by deletion
//!   vectors, partial-column updates of data-evolution tables.
//! * [`kv`]: primary-key tables: the sort buffer, level-0 key-value files, dynamic and
//!   cross-partition buckets, postpone buckets.
//! * [`bucket`]: the bucket of a row of a fixed-bucket table.
//! * [`external`]: data files placed outside the table directory.
//! * [`restore`]: the live files a writer needs, scoped to the partitions it writes.
//!
//! BLOB columns are written through [`crate::blob`]; schema changes are [`crate::schema`]; the
//! one-shot write and compaction jobs are [`crate::job`].
//!
//! Source: Java `org.apache.paimon.table.sink.TableWriteImpl`,
//! `org.apache.paimon.operation.AbstractFileStoreWrite` and its subclasses.

pub mod append;
pub mod bucket;
pub mod external;
pub mod kv;
pub mod restore;
pub mod table_write;

pub use table_write::{TableWrite, WriteOptions, WriteRestore};

#[cfg(test)]
mod streamed_tests;
