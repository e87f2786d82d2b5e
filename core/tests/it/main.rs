//! Integration tests of paimon-kernel (one binary).

#![allow(clippy::unwrap_used)]

mod avro_codecs;
mod canonical;
mod common;
mod corpus_manifests;
mod corpus_metadata;
mod data_files;
mod de_read;
mod fuzz_regressions;
mod layers;
mod merge_corpus;
mod predicate_corpus;
mod predicate_types;
mod read_rows;
mod scan_planner;
mod snapshot_resolver;
mod write_bucket;
mod write_stats;
