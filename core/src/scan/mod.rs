//! Scan planning: resolving the snapshot to read, reading its manifests into the live data
//! files, and cutting them into splits.
//!
//! Source: Java `org.apache.paimon.table.source` and `org.apache.paimon.operation` scans.

pub mod branch;
pub mod planner;
pub mod snapshot_resolver;
pub mod split;

pub use planner::{DataSplit, DeletionFile, Plan, Pruned, ScanRequest, TableKind, plan_scan};
