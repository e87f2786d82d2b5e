//! Integration tests of paimon-native: the `paimon-kernel` CLI over the conformance corpus.

#![allow(clippy::unwrap_used)]

mod alter_delete;
mod cli;
mod cli_blob;
mod compact_append;
mod compact_pk;
mod delete_dv;
mod dynamic_bucket;
mod http;
mod maintenance;
mod pk_dv;
mod scan;
mod table;
mod write;
