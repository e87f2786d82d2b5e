//! View models of a table's anatomy for inspectors (the wasm inspector page draws them):
//! pure functions over metadata a host has already read (live manifest entries, index
//! manifest entries, snapshots, tags, schemas). Nothing here asks for IO.
//!
//! * [`levels`](levels::levels): per partition and bucket, the sorted runs and their files
//!   (level, size, rows, key range, sequence range, deletion vectors), positioned on a key
//!   axis in `[0, 1]`.
//! * [`compaction_preview`]: what `compact` would do now,
//!   from the same planners the native host's `plan-compaction` runs (primary-key universal /
//!   full, append bucketed / unaware, data evolution), as tasks of input file names and output
//!   level.
//! * [`field_groups`](field_groups::field_groups): data-evolution tables: the row-id groups
//!   of each bucket, one band per file (row-id range × written columns), layers newest
//!   first, and which file supplies each column.
//! * [`timeline`](timeline::timeline): one point per snapshot (time, kind, record counts,
//!   live and changed file counts from the manifest lists, tags).
//! * [`managed_blobs`]: data files that list `.blobref` sidecars; [`read_managed_blobs`]
//!   also reads the sidecars: the packs each file references and the files of each pack.
//!
//! Every view is a serde value with camelCase keys (what the JS API hands out); 64-bit
//! integers are plain numbers here (the wasm host turns unsafe ones into strings).
//!
//! Java Paimon has no such views (its nearest relatives are the `$files`, `$snapshots` and
//! `$tags` system tables), so these types mirror no Java class.
//!
//! Design: the views reuse the read side's and the compaction's own functions
//! ([`crate::compact::pk::Levels`], the compaction planners,
//! [`crate::read::evolution::row_id_groups`]) so that what the page draws is what the
//! reader and the compactor do, not a second reading of the rules.

pub mod blobs;
pub mod compaction;
pub mod field_groups;
pub mod levels;
pub mod timeline;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::scan::TableKind;
use crate::spec::index_manifest::DELETION_VECTORS_INDEX;
use crate::spec::partition::render_partition;
use crate::spec::{BinaryRow, DataField, FileKind, IndexManifestEntry, TableSchema};

pub use blobs::{BlobRefFile, ManagedBlobsView, PackUse, managed_blobs, read_managed_blobs};
pub use compaction::{
    CompactionPreview, PreviewTask, compaction_preview, compaction_preview_with_schemas,
};
pub use field_groups::{FieldGroupsView, field_groups};
pub use levels::{LevelsView, levels};
pub use timeline::{SnapshotManifests, TimelineView, timeline};

/// The deletion vector of one data file, as the index manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletionVectorView {
    /// Deleted rows, when recorded (`_CARDINALITY`).
    pub cardinality: Option<i64>,
    /// The index file holding the vector.
    pub index_file: String,
}

/// Deletion vectors by (partition bytes, bucket, data file name), from the live
/// `DELETION_VECTORS` index files.
pub(crate) type DvIndex = BTreeMap<(Vec<u8>, i32, String), DeletionVectorView>;

/// The deletion vectors named by the live index manifest entries.
pub(crate) fn dv_index(index_entries: &[IndexManifestEntry]) -> DvIndex {
    let mut out = DvIndex::new();
    for e in index_entries {
        if e.kind != FileKind::Add || e.index_file.index_type != DELETION_VECTORS_INDEX {
            continue;
        }
        for r in e.index_file.dv_ranges.iter().flatten() {
            out.insert(
                (
                    e.partition.to_serialized(),
                    e.bucket,
                    r.data_file_name.clone(),
                ),
                DeletionVectorView {
                    cardinality: r.cardinality,
                    index_file: e.index_file.file_name.clone(),
                },
            );
        }
    }
    out
}

/// `"append"`, `"primary-key"` or `"data-evolution"`.
///
/// # Errors
/// Invalid table options.
pub(crate) fn table_kind_name(schema: &TableSchema) -> Result<&'static str> {
    Ok(match TableKind::of(schema)? {
        TableKind::Append => "append",
        TableKind::PrimaryKey => "primary-key",
        TableKind::DataEvolution => "data-evolution",
    })
}

/// The partition key fields of `schema`, in key order.
pub(crate) fn partition_fields(schema: &TableSchema) -> Result<Vec<DataField>> {
    Ok(schema.partition_fields()?.into_iter().cloned().collect())
}

/// A partition as the `$files` table renders it (`{v1, v2}`, `{}` when unpartitioned) and
/// as a JSON object by key (the plan JSON's form).
pub(crate) fn partition_forms(
    fields: &[DataField],
    partition: &BinaryRow,
) -> Result<(String, serde_json::Map<String, serde_json::Value>)> {
    Ok((
        render_partition(fields, partition)?,
        crate::compact::plan::partition_json(partition, fields)?,
    ))
}
