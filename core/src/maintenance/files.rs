//! Shared helpers of the maintenance operations: where a table's files live, tolerant
//! metadata reads and batched deletes.

use std::collections::BTreeSet;

use futures_util::future::join_all;

use crate::error::{Error, Result};
use crate::io::{Io, IoErrorKind};
use crate::maintenance::RemovedFile;
use crate::scan::planner::{INDEX_DIR, MANIFEST_DIR};
use crate::spec::binary_row::BinaryRow;
use crate::spec::index_manifest::{IndexManifestEntry, decode_index_manifest};
use crate::spec::manifest::{FileKind, ManifestEntry, decode_manifest, merge_entries};
use crate::spec::manifest_list::{ManifestFileMeta, decode_manifest_list};
use crate::spec::partition::{PartitionNaming, bucket_path, partition_path};
use crate::spec::schema::TableSchema;
use crate::spec::snapshot::Snapshot;
use crate::spec::types::DataField;

/// Directory of statistics files (Java `FileStorePathFactory.statisticsPath`).
pub(crate) const STATISTICS_DIR: &str = "statistics";

/// Where the files of a table live: partition directories, bucket directories, index files.
pub(crate) struct TablePaths {
    keys: Vec<DataField>,
    naming: PartitionNaming,
    data_root: String,
    index_in_bucket: bool,
}

impl TablePaths {
    pub(crate) fn new(schema: &TableSchema) -> Result<Self> {
        let options = schema.core_options();
        Ok(TablePaths {
            keys: schema.partition_fields()?.into_iter().cloned().collect(),
            naming: options.partition_naming()?,
            data_root: data_root(schema),
            index_in_bucket: options.index_file_in_data_file_dir()?,
        })
    }

    fn bucket_dir(&self, partition: &BinaryRow, bucket: i32) -> Result<String> {
        let dir = partition_path(&self.keys, partition, &self.naming)?;
        Ok(bucket_path(&self.data_root, &dir, bucket))
    }

    /// The data file of `entry` and its extra files.
    pub(crate) fn data_files(&self, entry: &ManifestEntry) -> Result<Vec<RemovedFile>> {
        let dir = self.bucket_dir(&entry.partition, entry.bucket)?;
        let mut out = vec![RemovedFile {
            path: entry.file.path_in_bucket(&dir),
            size_bytes: u64::try_from(entry.file.file_size).ok(),
        }];
        out.extend(
            entry
                .file
                .extra_file_paths(&dir)
                .into_iter()
                .map(|path| RemovedFile {
                    path,
                    size_bytes: None,
                }),
        );
        Ok(out)
    }

    /// The index file of `entry`.
    pub(crate) fn index_file(&self, entry: &IndexManifestEntry) -> Result<RemovedFile> {
        let dir = if self.index_in_bucket {
            self.bucket_dir(&entry.partition, entry.bucket)?
        } else {
            INDEX_DIR.to_string()
        };
        Ok(RemovedFile {
            path: entry.index_file.path_in(&dir),
            size_bytes: u64::try_from(entry.index_file.file_size).ok(),
        })
    }
}

/// `data-file.path-directory` without trailing `/`, `""` when unset.
pub(crate) fn data_root(schema: &TableSchema) -> String {
    schema.core_options().data_root()
}

/// Key of a data file for skip sets: (partition bytes, bucket, file name), as Java's
/// `FileDeletionBase.containsDataFile`.
pub(crate) type DataFileKey = (Vec<u8>, i32, String);

pub(crate) fn data_file_key(e: &ManifestEntry) -> DataFileKey {
    (
        e.partition.row_bytes().to_vec(),
        e.bucket,
        e.file.file_name.clone(),
    )
}

/// Read a manifest list; `Ok(None)` when it does not exist.
pub(crate) async fn try_manifest_list<T>(
    io: &Io<T>,
    name: &str,
) -> Result<Option<Vec<ManifestFileMeta>>> {
    let path = format!("{MANIFEST_DIR}/{name}");
    match io.read_opt(&path, None).await? {
        Some(bytes) => decode_manifest_list(&bytes, &path).map(Some),
        None => Ok(None),
    }
}

/// Read manifests in one round; `Ok(None)` when one of them does not exist.
pub(crate) async fn try_manifests<T>(
    io: &Io<T>,
    manifests: &[ManifestFileMeta],
) -> Result<Option<Vec<ManifestEntry>>> {
    let reads = join_all(manifests.iter().map(|m| async move {
        let path = format!("{MANIFEST_DIR}/{}", m.file_name);
        match io.read_opt(&path, None).await? {
            Some(bytes) => decode_manifest(&bytes, &path).map(Some),
            None => Ok(None),
        }
    }))
    .await;
    let mut out = Vec::new();
    for r in reads {
        match r? {
            Some(entries) => out.extend(entries),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// Read an index manifest; `Ok(None)` when it does not exist.
pub(crate) async fn try_index_manifest<T>(
    io: &Io<T>,
    name: &str,
) -> Result<Option<Vec<IndexManifestEntry>>> {
    let path = format!("{MANIFEST_DIR}/{name}");
    match io.read_opt(&path, None).await? {
        Some(bytes) => decode_index_manifest(&bytes, &path).map(Some),
        None => Ok(None),
    }
}

/// The live data files of `snapshot` (base and delta manifests merged), by key.
///
/// # Errors
/// [`Error::Io`] NotFound naming the missing manifest list or manifest; decode errors.
pub(crate) async fn live_data_file_keys<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
) -> Result<BTreeSet<DataFileKey>> {
    let mut manifests = Vec::new();
    for list in [&snapshot.base_manifest_list, &snapshot.delta_manifest_list] {
        match try_manifest_list(io, list).await? {
            Some(m) => manifests.extend(m),
            None => return Err(missing(&format!("{MANIFEST_DIR}/{list}"))),
        }
    }
    let Some(entries) = try_manifests(io, &manifests).await? else {
        return Err(missing(&format!("a manifest of snapshot {}", snapshot.id)));
    };
    Ok(merge_entries(entries)?
        .into_iter()
        .filter(|e| e.kind == FileKind::Add)
        .map(|e| data_file_key(&e))
        .collect())
}

pub(crate) fn missing(path: &str) -> Error {
    Error::io(path, IoErrorKind::NotFound, "")
}

/// Delete `files` in one round (a missing file is fine).
///
/// # Errors
/// The first failed delete.
pub(crate) async fn delete_all<T>(io: &Io<T>, files: &[RemovedFile]) -> Result<()> {
    let results = join_all(files.iter().map(|f| io.delete(&f.path))).await;
    results.into_iter().collect::<Result<Vec<()>>>()?;
    Ok(())
}

/// Names of the manifest-directory files (lists, manifests, index manifest), index files and
/// statistics file a snapshot uses, for skip sets.
pub(crate) async fn manifest_skipping_set<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
) -> Result<BTreeSet<String>> {
    skipping_set(io, snapshot, false).await
}

/// As [`manifest_skipping_set`], skipping manifest lists and index manifests that are gone
/// (a long-lived changelog's, cleaned by the snapshot expire; Java
/// `ChangelogDeletion.manifestSkippingSet`).
pub(crate) async fn present_manifest_skipping_set<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
) -> Result<BTreeSet<String>> {
    skipping_set(io, snapshot, true).await
}

async fn skipping_set<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
    skip_missing: bool,
) -> Result<BTreeSet<String>> {
    let mut set = BTreeSet::new();
    for list in [&snapshot.base_manifest_list, &snapshot.delta_manifest_list] {
        let Some(metas) = try_manifest_list(io, list).await? else {
            if skip_missing {
                continue;
            }
            return Err(missing(&format!("{MANIFEST_DIR}/{list}")));
        };
        set.insert(list.clone());
        set.extend(metas.into_iter().map(|m| m.file_name));
    }
    if let Some(index) = &snapshot.index_manifest {
        match try_index_manifest(io, index).await? {
            Some(entries) => {
                set.insert(index.clone());
                set.extend(entries.into_iter().map(|e| e.index_file.file_name));
            }
            None if skip_missing => {}
            None => return Err(missing(&format!("{MANIFEST_DIR}/{index}"))),
        }
    }
    if let Some(stats) = &snapshot.statistics {
        set.insert(stats.clone());
    }
    Ok(set)
}

/// Which parts of a snapshot's metadata [`unused_metadata_parts`] may delete.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetadataParts {
    /// The base and delta manifest lists and their manifests.
    pub(crate) data_lists: bool,
    /// The changelog manifest list and its manifests.
    pub(crate) changelog_list: bool,
    /// The index manifest, its index files and the statistics file.
    pub(crate) index_and_stats: bool,
}

/// Manifest lists and manifests (`with_changelog`: also the changelog list), index manifest,
/// index files and statistics file of `snapshot` that `seen` does not hold yet; each is added
/// to `seen`. Missing lists or index manifests contribute nothing (they were cleaned already).
pub(crate) async fn unused_metadata_files<T>(
    io: &Io<T>,
    paths: &TablePaths,
    snapshot: &Snapshot,
    with_changelog: bool,
    seen: &mut BTreeSet<String>,
) -> Result<Vec<RemovedFile>> {
    let parts = MetadataParts {
        data_lists: true,
        changelog_list: with_changelog,
        index_and_stats: true,
    };
    unused_metadata_parts(io, paths, snapshot, parts, seen).await
}

/// A manifest list and its manifests that `seen` does not hold yet (each added to `seen`);
/// only the list's own name when it is gone.
pub(crate) async fn unused_list_files<T>(
    io: &Io<T>,
    list: &str,
    size: Option<i64>,
    seen: &mut BTreeSet<String>,
) -> Result<Vec<RemovedFile>> {
    let mut out = Vec::new();
    for m in try_manifest_list(io, list).await?.unwrap_or_default() {
        if seen.insert(m.file_name.clone()) {
            out.push(RemovedFile {
                path: format!("{MANIFEST_DIR}/{}", m.file_name),
                size_bytes: u64::try_from(m.file_size).ok(),
            });
        }
    }
    if seen.insert(list.to_string()) {
        out.push(RemovedFile {
            path: format!("{MANIFEST_DIR}/{list}"),
            size_bytes: size.and_then(|s| u64::try_from(s).ok()),
        });
    }
    Ok(out)
}

/// As [`unused_metadata_files`], limited to `parts`.
pub(crate) async fn unused_metadata_parts<T>(
    io: &Io<T>,
    paths: &TablePaths,
    snapshot: &Snapshot,
    parts: MetadataParts,
    seen: &mut BTreeSet<String>,
) -> Result<Vec<RemovedFile>> {
    let mut out = Vec::new();
    let mut lists = Vec::new();
    if parts.data_lists {
        lists.push((
            snapshot.base_manifest_list.clone(),
            snapshot.base_manifest_list_size,
        ));
        lists.push((
            snapshot.delta_manifest_list.clone(),
            snapshot.delta_manifest_list_size,
        ));
    }
    if parts.changelog_list
        && let Some(c) = &snapshot.changelog_manifest_list
    {
        lists.push((c.clone(), snapshot.changelog_manifest_list_size));
    }
    for (list, size) in lists {
        out.extend(unused_list_files(io, &list, size, seen).await?);
    }
    if !parts.index_and_stats {
        return Ok(out);
    }
    if let Some(index) = &snapshot.index_manifest
        && let Some(entries) = try_index_manifest(io, index).await?
    {
        for e in &entries {
            if seen.insert(e.index_file.file_name.clone()) {
                out.push(paths.index_file(e)?);
            }
        }
        if seen.insert(index.clone()) {
            out.push(RemovedFile {
                path: format!("{MANIFEST_DIR}/{index}"),
                size_bytes: None,
            });
        }
    }
    if let Some(stats) = &snapshot.statistics
        && seen.insert(stats.clone())
    {
        out.push(RemovedFile {
            path: format!("{STATISTICS_DIR}/{stats}"),
            size_bytes: None,
        });
    }
    Ok(out)
}
