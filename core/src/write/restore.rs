//! Scoped restore of a writer: the live files of only the partitions a write touches.
//!
//! A [`crate::write::TableWrite`] made with [`crate::write::TableWrite::restore_on_demand`]
//! knows nothing of the table's files at first. Before each batch the host asks it which
//! partitions the batch needs ([`crate::write::TableWrite::partitions_to_restore`]), reads
//! their live files with [`read_partition_entries`] (manifests pruned by the manifest list's
//! partition statistics, entries by partition) and hands them over
//! ([`crate::write::TableWrite::restore_partitions`]). Append tables with `bucket` = -1 and
//! postpone-bucket tables restore nothing.
//!
//! Source: Java `AbstractFileStoreWrite#createWriterContainer` and `#scanExistingFileMetas`
//! (a manifest scan filtered by the writer's partition and bucket, when a writer of that
//! partition and bucket is first created; `AppendFileStoreWrite` and
//! `PostponeBucketFileStoreWrite` ignore previous files).

use std::collections::BTreeSet;

use crate::commit::changes::PartitionFilter;
use crate::error::Result;
use crate::io::Io;
use crate::scan::planner::{live_of_merged, read_data_manifests, read_manifest_entries};
use crate::spec::manifest::merge_entries;
use crate::spec::partition::POSTPONE_BUCKET;
use crate::spec::{BinaryRow, DataField, ManifestEntry, ManifestFileMeta, Snapshot, TableSchema};

/// Whether writers of `schema` continue after the table's files (see
/// [`crate::write::TableWrite::restores_files`]): `false` for append tables with `bucket` =
/// -1 and postpone-bucket (`bucket` = -2) primary-key tables, which need no manifest read.
///
/// # Errors
/// [`crate::Error::Invalid`] for an option `bucket` that is not an integer.
pub fn restores_files(schema: &TableSchema) -> Result<bool> {
    let bucket = schema.core_options().bucket()?;
    Ok(!matches!(
        (schema.is_primary_key_table(), bucket),
        (false, -1) | (true, POSTPONE_BUCKET)
    ))
}

/// The manifests of a snapshot's lists (base then delta) whose partition statistics may hold
/// one of `partitions` (unpartitioned tables: every manifest).
///
/// Source: Java `ManifestsReader` with a partition filter (`MultiplePartitionPredicate`).
pub fn manifests_for_partitions<'a>(
    manifests: &'a [ManifestFileMeta],
    partitions: &BTreeSet<BinaryRow>,
    partition_fields: &[DataField],
) -> Vec<&'a ManifestFileMeta> {
    let filter = PartitionFilter::Set(partitions.clone());
    manifests
        .iter()
        .filter(|m| filter.may_match_manifest(m, partition_fields))
        .collect()
}

/// The live `Add` entries of `snapshot` whose partition is one of `partitions`, in Java's
/// order, reading only the manifests [`manifests_for_partitions`] keeps (one round for the two
/// manifest lists, one for the manifests).
///
/// # Errors
/// IO failures; corrupt manifests (naming the file); a `DELETE` entry without its `ADD`
/// ([`crate::Error::Corrupt`] naming the snapshot).
pub async fn read_partition_entries<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
    partitions: &BTreeSet<BinaryRow>,
    partition_fields: &[DataField],
) -> Result<Vec<ManifestEntry>> {
    if partitions.is_empty() {
        return Ok(Vec::new());
    }
    let manifests = read_data_manifests(io, snapshot).await?;
    let wanted: Vec<ManifestFileMeta> =
        manifests_for_partitions(&manifests, partitions, partition_fields)
            .into_iter()
            .cloned()
            .collect();
    let entries = read_manifest_entries(io, &wanted).await?;
    // An ADD and the DELETE of the same file share their partition: filtering before the
    // merge keeps every pair together.
    let merged = merge_entries(
        entries
            .into_iter()
            .filter(|e| partitions.contains(&e.partition)),
    )?;
    live_of_merged(snapshot.id, merged)
}

#[cfg(test)]
#[path = "restore/tests.rs"]
mod tests;
