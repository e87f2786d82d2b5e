//! Reading a snapshot's manifests and live data files: IO-generic compositions of the core's
//! decoders (`decode_manifest_list`, `decode_manifest`, `merge_entries`), usable by any host.
//!
//! Rounds: one round reads the snapshot's manifest lists (base, delta); one round reads every
//! manifest they name, in list order.

use futures::future::try_join_all;
use paimon_kernel::Result;
use paimon_kernel::io::Io;
use paimon_kernel::spec::manifest::{FileKind, ManifestEntry, decode_manifest, merge_entries};
use paimon_kernel::spec::manifest_list::{ManifestFileMeta, decode_manifest_list};
use paimon_kernel::spec::snapshot::Snapshot;

/// Path of a manifest or manifest list file, relative to the table root.
pub fn manifest_path(file_name: &str) -> String {
    format!("manifest/{file_name}")
}

/// The data manifests of a snapshot, as Java `ManifestList#readAllManifests`: the base list
/// (all files before the commit) followed by the delta list (the commit's changes).
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotManifests {
    /// Entries of `baseManifestList`.
    pub base: Vec<ManifestFileMeta>,
    /// Entries of `deltaManifestList`.
    pub delta: Vec<ManifestFileMeta>,
}

impl SnapshotManifests {
    /// Base then delta manifests.
    pub fn all(&self) -> impl Iterator<Item = &ManifestFileMeta> {
        self.base.iter().chain(&self.delta)
    }
}

/// Read the base and delta manifest lists of `snapshot` (one round).
///
/// # Errors
/// `Io` when a list is missing, `Corrupt` (naming `manifest/<list>`) when it does not decode.
pub async fn read_snapshot_manifests<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
) -> Result<SnapshotManifests> {
    let paths = [
        manifest_path(&snapshot.base_manifest_list),
        manifest_path(&snapshot.delta_manifest_list),
    ];
    let bytes = try_join_all(paths.iter().map(|p| io.read(p))).await?;
    let base = decode_manifest_list(&bytes[0], &paths[0])?;
    let delta = decode_manifest_list(&bytes[1], &paths[1])?;
    Ok(SnapshotManifests { base, delta })
}

/// The live data files of `snapshot`: every manifest of the base and delta lists read in one
/// round, entries merged (ADD then DELETE of the same file cancel), `Add` entries kept in
/// manifest order. Postpone-bucket (`-2`) files are included.
///
/// # Errors
/// As [`read_snapshot_manifests`]; `Io`/`Corrupt` naming `manifest/<file>` for a manifest.
pub async fn read_live_entries<T>(io: &Io<T>, snapshot: &Snapshot) -> Result<Vec<ManifestEntry>> {
    let manifests = read_snapshot_manifests(io, snapshot).await?;
    let paths: Vec<String> = manifests
        .all()
        .map(|m| manifest_path(&m.file_name))
        .collect();
    let contents = try_join_all(paths.iter().map(|p| io.read(p))).await?;
    let mut entries = Vec::new();
    for (path, bytes) in paths.iter().zip(&contents) {
        entries.extend(decode_manifest(bytes, path)?);
    }
    Ok(merge_entries(entries)?
        .into_iter()
        .filter(|e| e.kind == FileKind::Add)
        .collect())
}
