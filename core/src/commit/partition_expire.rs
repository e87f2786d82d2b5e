//! Partition expiry's drops: the expired partitions of the latest snapshot
//! ([`select_expired_partitions`]) dropped with one `OVERWRITE` commit per batch, the
//! `expire_partitions` procedure and what a commit's maintenance runs
//! ([`crate::commit::after_commit`]).
//!
//! Source: Java `org.apache.paimon.operation.PartitionExpire#expire` (selection and batches)
//! and `FileStoreCommit#dropPartitions` (the drop commit).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::commit::{CommitMode, CommitOptions, commit};
use crate::error::{Error, Result};
use crate::io::{Io, Machine};
use crate::maintenance::partitions::{
    ExpiredPartition, PartitionExpireConfig, select_expired_partitions,
};
use crate::scan::snapshot_resolver::read_latest_schema;

/// What [`expire_partitions`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionExpireOutcome {
    /// The expired partitions, in Java's order (values joined by `,` and sorted as text, then
    /// cut to `partition.expiration-max-num`).
    pub partitions: Vec<ExpiredPartition>,
    /// The `OVERWRITE` snapshots that dropped them, one per batch (empty in a dry run).
    pub snapshot_ids: Vec<i64>,
}

/// Expire partitions as Java's `NormalPartitionExpire.expire`: select them
/// ([`select_expired_partitions`]) and, unless `dry_run`, drop them in batches of
/// `batch_size` (all at once when it is zero or less or not smaller than their number), one
/// `OVERWRITE` snapshot per batch committed with `commit_options` (its user and identifier
/// are not checked for an earlier commit, as Java's `dropPartitions`).
///
/// # Errors
/// [`Error::Invalid`] for a table without schema; as [`select_expired_partitions`]; the
/// commit's errors (a conflict with a concurrent commit: earlier batches stay dropped).
pub async fn expire_partitions<T>(
    io: &Io<T>,
    config: &PartitionExpireConfig,
    now_millis: i64,
    commit_options: &CommitOptions,
    dry_run: bool,
) -> Result<PartitionExpireOutcome> {
    let Some(schema) = read_latest_schema(io).await? else {
        return Err(Error::invalid(
            "expiring partitions: the table has no schema",
        ));
    };
    let partitions = select_expired_partitions(io, &schema, config, now_millis).await?;
    let mut outcome = PartitionExpireOutcome {
        partitions,
        snapshot_ids: Vec::new(),
    };
    if dry_run || outcome.partitions.is_empty() {
        return Ok(outcome);
    }
    let size = match usize::try_from(config.batch_size) {
        Ok(n) if n > 0 && n < outcome.partitions.len() => n,
        _ => outcome.partitions.len(),
    };
    for batch in outcome.partitions.chunks(size) {
        let mode = CommitMode::DropPartitions {
            partitions: batch
                .iter()
                .map(|p| p.partition.clone())
                .collect::<BTreeSet<_>>(),
        };
        let done = commit(io, &schema, Vec::new(), &mode, commit_options).await?;
        outcome.snapshot_ids.extend(done.snapshot_ids);
    }
    Ok(outcome)
}

/// A machine running [`expire_partitions`].
pub fn expire_partitions_machine(
    config: PartitionExpireConfig,
    now_millis: i64,
    commit_options: CommitOptions,
    dry_run: bool,
) -> Machine<PartitionExpireOutcome> {
    Machine::once("ExpirePartitions", move |io| async move {
        expire_partitions(&io, &config, now_millis, &commit_options, dry_run).await
    })
}

#[cfg(test)]
mod tests;
