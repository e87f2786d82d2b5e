//! Integration tests of paimon-native: the `paimon-kernel` CLI over the conformance corpus.

#![allow(clippy::unwrap_used)]

mod alter_delete;
mod append_dv_compact;
mod auto_expire;
mod blob_refs;
mod changelog;
mod cli;
mod cli_blob;
mod commit_messages;
mod common;
mod compact_append;
mod compact_pk;
mod compact_row_tracking;
mod cross_partition;
mod data_evolution_dv;
mod delete_dv;
mod dynamic_bucket;
mod external_paths;
mod http;
mod incremental;
mod inline_blob;
mod java_blob;
mod java_compact;
mod java_continues;
mod java_corpus;
mod java_splits;
mod maintenance;
mod managed_blob;
mod oracle;
mod orc_nested;
mod partition_expire;
mod pk_dv;
mod plan_java;
mod postpone;
mod postpone_fixed;
mod record_level_expire;
mod restore;
mod retract;
mod scan;
mod scenarios;
#[cfg(feature = "sql")]
mod sql;
mod streamed_write;
mod table;
mod write;

// `crate::copy_dir` for the modules that copy corpus tables.
use common::copy_dir;
