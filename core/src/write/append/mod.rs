//! Append tables: rows go straight to rolling data files, no key, no merge (bucket-unaware
//! `bucket = -1` and fixed buckets alike; data-evolution tables with their `.blob` files,
//! [`crate::blob::files`]), and the two writes that change existing rows of such tables.
//!
//! * [`deletion_vectors`]: deleting rows by writing deletion vectors.
//! * [`update`]: partial-column updates of data-evolution tables, by row id.
//!
//! Source: Java `org.apache.paimon.append.AppendOnlyWriter`,
//! `org.apache.paimon.operation.BaseAppendFileStoreWrite`,
//! `org.apache.paimon.deletionvectors.append.AppendDeleteFileMaintainer`.

pub mod deletion_vectors;
pub mod update;
