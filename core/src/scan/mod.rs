//! Scan planning: resolving the snapshot to read, then (in other modules) planning splits.

pub mod snapshot_resolver;
