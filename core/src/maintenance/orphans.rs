//! Remove orphan files: files in the table's directories that no snapshot, tag, long-lived
//! changelog or branch uses.
//!
//! Source: Java `org.apache.paimon.operation.OrphanFilesClean` and `LocalOrphanFilesClean`.
//! Like Java, used files are matched by file name; candidates are the files directly in
//! `manifest/`, `index/`, `statistics/` and in bucket directories (`k=v/.../bucket-N/`, under
//! `data-file.path-directory` when set), plus files in `snapshot/` and `changelog/` that are
//! neither snapshot/changelog files nor hints. Managed-BLOB packs (`*.managed.blob`) are never
//! candidates (shared by many data files; the pack collector reclaims them). A `*.blobref`
//! sidecar is an extra file of its data file: used while the data file is, an orphan otherwise
//! (e.g. of a failed write). The roots of `data-file.external-paths` are listed too, their
//! bucket directories and the `entropy-inject` directories below them
//! (`bucket-N/1001/1111/0010/10010010/<file>`, which Java's non-recursive bucket listing does
//! not reach, so Java never cleans orphans there).

use std::collections::{BTreeMap, BTreeSet};

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::{Io, Machine, ObjectMeta};
use crate::maintenance::files::{
    STATISTICS_DIR, data_root, try_index_manifest, try_manifest_list, try_manifests,
};
use crate::maintenance::{RemovedFile, total_bytes};
use crate::scan::planner::{INDEX_DIR, MANIFEST_DIR};
use crate::scan::snapshot_resolver::read_latest_schema;
use crate::spec::file_names::{
    BUCKET_DIR_PREFIX, CHANGELOG_FILE_PREFIX, MANAGED_BLOB_SUFFIX, SNAPSHOT_FILE_PREFIX,
};
use crate::spec::snapshot::{Snapshot, decode_snapshot, decode_tag};

/// Re-listings of snapshots and tags before giving up on a table that keeps changing.
const MAX_PASSES: usize = 20;

/// Passes in which a snapshot file may be found with a manifest missing before the table is
/// called damaged (an expire deletes manifests before the snapshot file).
const MISSING_RETRIES: usize = 3;

/// What an orphan clean did.
///
/// Source: Java `org.apache.paimon.operation.CleanOrphanFilesResult` (deleted files and
/// bytes), with the paths listed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrphanOutcome {
    /// Orphan files deleted (or, in a dry run, that would be), by path.
    pub removed: Vec<RemovedFile>,
    /// True for a dry run (nothing was deleted).
    pub dry_run: bool,
    /// Snapshot, tag and changelog files whose used files were collected.
    pub metadata_files_read: usize,
    /// Unused candidate files spared because they are not older than the cut-off (or the
    /// host did not say how old they are).
    pub too_young: usize,
}

impl OrphanOutcome {
    /// Known bytes of [`OrphanOutcome::removed`].
    pub fn removed_bytes(&self) -> u64 {
        total_bytes(&self.removed)
    }
}

/// A machine running [`remove_orphan_files`].
pub fn remove_orphans_machine(older_than_millis: i64, dry_run: bool) -> Machine<OrphanOutcome> {
    Machine::once("RemoveOrphanFiles", move |io| async move {
        remove_orphan_files(&io, older_than_millis, dry_run).await
    })
}

/// Is this a candidate file (relative path), given the data root and partition depth?
fn is_candidate(path: &str, data_root: &str, partition_depth: usize) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.ends_with(MANAGED_BLOB_SUFFIX) || name.is_empty() {
        return false;
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts.len() == 2 {
        match parts[0] {
            d if d == MANIFEST_DIR || d == INDEX_DIR || d == STATISTICS_DIR => return true,
            "snapshot" => {
                return !name.starts_with(SNAPSHOT_FILE_PREFIX)
                    && name != "EARLIEST"
                    && name != "LATEST";
            }
            "changelog" => {
                return !name.starts_with(CHANGELOG_FILE_PREFIX)
                    && name != "EARLIEST"
                    && name != "LATEST";
            }
            _ => {}
        }
    }
    let rel = if data_root.is_empty() {
        path
    } else {
        match path
            .strip_prefix(data_root)
            .and_then(|p| p.strip_prefix('/'))
        {
            Some(r) => r,
            None => return false,
        }
    };
    let parts: Vec<&str> = rel.split('/').collect();
    if parts.len() != partition_depth + 2 {
        return false;
    }
    parts[..partition_depth].iter().all(|p| p.contains('='))
        && parts[partition_depth].starts_with(BUCKET_DIR_PREFIX)
}

/// `rel` without the `entropy-inject` directories between a `bucket-*` directory and the
/// file name (`p=1/bucket-0/1001/1111/0010/10010010/f` → `p=1/bucket-0/f`), else as it is.
/// Source: Java `EntropyInjectExternalPathProvider` (four directories of 4, 4, 4 and 8 binary
/// digits).
fn without_entropy_dirs(rel: &str) -> std::borrow::Cow<'_, str> {
    let parts: Vec<&str> = rel.split('/').collect();
    let n = parts.len();
    let is_bits = |p: &str, len: usize| p.len() == len && p.bytes().all(|b| b == b'0' || b == b'1');
    if n >= 6
        && parts[n - 6].starts_with(BUCKET_DIR_PREFIX)
        && [4, 4, 4, 8]
            .iter()
            .zip(&parts[n - 5..n - 1])
            .all(|(len, p)| is_bits(p, *len))
    {
        let mut kept = parts[..n - 5].to_vec();
        kept.push(parts[n - 1]);
        std::borrow::Cow::Owned(kept.join("/"))
    } else {
        std::borrow::Cow::Borrowed(rel)
    }
}

/// Delete the files of the table that nothing uses and that were last modified before
/// `older_than_millis` (milliseconds since the epoch; Java's default is now minus one day).
/// With `dry_run` nothing is deleted and the outcome lists what would be.
///
/// Rounds: the schema; `List ""` (the whole table); `List <root>/` of each root of
/// `data-file.external-paths` (their bucket directories' files are candidates too, also
/// below `entropy-inject` directories; a root answered `Unsupported` is skipped); then passes of `List snapshot/`, `tag/`,
/// `changelog/`, `branch/` (and the branches' own directories), reads of the snapshot, tag
/// and changelog files not read yet (snapshots newer than one read whole are skipped), their
/// manifest lists, manifests and index manifests, until a pass finds nothing to read; then
/// one round of deletes.
///
/// # Errors
/// [`Error::Unsupported`] when the host cannot list; [`Error::Invalid`] when a snapshot,
/// tag or changelog file still exists but one of its manifest lists, manifests or index
/// manifests is missing (the table is damaged: nothing is deleted), or when the table keeps
/// changing for 20 listings; IO and decode errors.
pub async fn remove_orphan_files<T>(
    io: &Io<T>,
    older_than_millis: i64,
    dry_run: bool,
) -> Result<OrphanOutcome> {
    let schema = read_latest_schema(io)
        .await?
        .ok_or_else(|| Error::invalid("no table here: schema/ holds no schema file"))?;
    let root = data_root(&schema);
    let depth = schema.partition_keys.len();
    let Some(listing) = io.list("").await? else {
        return Err(Error::unsupported(
            "removing orphan files needs a store that can list files",
        ));
    };
    let mut candidates: Vec<ObjectMeta> = listing
        .into_iter()
        .filter(|o| is_candidate(&o.path, &root, depth))
        .collect();
    // Data files under `data-file.external-paths`: the bucket directories below each root
    // (Java's `OrphanFilesClean` lists them too); a root the host cannot list is skipped.
    for ext in crate::spec::external_paths::listed_roots(&schema.core_options()) {
        let prefix = format!("{}/", ext.trim_end_matches('/'));
        let Some(listing) = io.list(&prefix).await? else {
            continue;
        };
        candidates.extend(listing.into_iter().filter(|o| {
            o.path.strip_prefix(&prefix).is_some_and(|rel| {
                let rel = without_entropy_dirs(rel);
                rel.split('/').any(|p| p.starts_with(BUCKET_DIR_PREFIX))
                    && is_candidate(&rel, &root, depth)
            })
        }));
    }
    let used = collect_used_files(io).await?;

    let mut outcome = OrphanOutcome {
        dry_run,
        metadata_files_read: used.read.len(),
        ..OrphanOutcome::default()
    };
    candidates.retain(|o| {
        let name = o.path.rsplit('/').next().unwrap_or(&o.path);
        let in_meta_dir = o.path.starts_with("snapshot/") || o.path.starts_with("changelog/");
        in_meta_dir || !used.names.contains(name)
    });
    for o in candidates {
        if o.modified_millis.is_some_and(|t| t < older_than_millis) {
            outcome.removed.push(RemovedFile {
                path: o.path,
                size_bytes: Some(o.size_bytes),
            });
        } else {
            outcome.too_young += 1;
        }
    }
    if !dry_run {
        let results = join_all(outcome.removed.iter().map(|f| io.delete(&f.path))).await;
        results.into_iter().collect::<Result<Vec<()>>>()?;
    }
    Ok(outcome)
}

/// The files used by every snapshot, tag and long-lived changelog of the table and of its
/// branches (see [`remove_orphan_files`] for the rounds and errors).
pub(crate) async fn collect_used_files<T>(io: &Io<T>) -> Result<UsedFiles> {
    let mut used = UsedFiles::default();
    let mut passes = 0;
    loop {
        passes += 1;
        if passes > MAX_PASSES {
            return Err(Error::invalid(format!(
                "the table's snapshots kept changing over {MAX_PASSES} listings; orphan clean \
                 stopped without deleting anything"
            )));
        }
        // What still needs reading: tags not read; snapshots not read unless newer than a
        // snapshot of the same root read whole (an old file a newer snapshot uses is live in
        // that one too; its new files are younger than the cut-off); changelogs whose
        // snapshot was not read whole.
        let fresh: Vec<MetadataFile> = list_metadata_files(io)
            .await?
            .into_iter()
            .filter(|f| !used.read.contains(&f.path))
            .filter(|f| match (f.kind, f.id) {
                // One found with a manifest missing is read again whatever its id.
                _ if used.missing_seen.contains_key(&f.path) => true,
                (MetadataKind::Snapshot, Some(id)) => {
                    used.max_read.get(&f.root).is_none_or(|m| id <= *m)
                }
                (MetadataKind::Changelog, Some(id)) => {
                    !used.snapshots_read.contains(&(f.root.clone(), id))
                }
                _ => true,
            })
            .collect();
        if fresh.is_empty() {
            break;
        }
        let results = join_all(
            fresh
                .iter()
                .map(|f| used_by_metadata_file(io, &f.path, f.kind == MetadataKind::Changelog)),
        )
        .await;
        for (f, r) in fresh.into_iter().zip(results) {
            let u = match r? {
                MetadataRead::Gone => None,
                MetadataRead::Used(u) => Some(u),
                MetadataRead::Missing(missing) => {
                    // A concurrent expire deletes a snapshot's manifests before its snapshot
                    // file: read it again after the next listing, and call the table damaged
                    // only if the file stays while its manifest stays missing.
                    let seen = used.missing_seen.entry(f.path.clone()).or_insert(0);
                    *seen += 1;
                    if *seen >= MISSING_RETRIES {
                        return Err(Error::invalid(format!(
                            "{} is live but {missing} is missing; orphan clean stopped without \
                             deleting anything (the table is damaged: restore the file or roll \
                             back)",
                            f.path
                        )));
                    }
                    continue;
                }
            };
            if let Some(u) = u {
                used.names.extend(u.names);
                used.without_sidecar.extend(u.without_sidecar);
                used.live_sidecars.extend(u.live_sidecars);
                if let (MetadataKind::Snapshot, Some(id)) = (f.kind, f.id) {
                    let max = used.max_read.entry(f.root.clone()).or_insert(id);
                    *max = (*max).max(id);
                    used.snapshots_read.insert((f.root.clone(), id));
                }
            }
            used.read.insert(f.path);
        }
    }
    Ok(used)
}

#[derive(Default)]
pub(crate) struct UsedFiles {
    /// Snapshot/tag/changelog files already read (or found gone).
    read: BTreeSet<String>,
    /// Metadata files found with a manifest missing, and in how many passes.
    missing_seen: BTreeMap<String, usize>,
    /// Snapshots read whole, by (root, id).
    snapshots_read: BTreeSet<(String, i64)>,
    /// The newest snapshot read whole, per root (`""` or `branch/branch-<name>/`).
    max_read: BTreeMap<String, i64>,
    /// Names of used files.
    pub(crate) names: BTreeSet<String>,
    /// Data files live in a snapshot read (adds minus deletes of its data manifests) that
    /// list no `.blobref` sidecar: (file name, schema id). Such a file may reference
    /// managed-BLOB packs nobody can see.
    pub(crate) without_sidecar: BTreeSet<(String, i64)>,
    /// The `.blobref` sidecars of the data files live in a snapshot read.
    pub(crate) live_sidecars: BTreeSet<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MetadataKind {
    Snapshot,
    Tag,
    Changelog,
}

/// A snapshot, tag or long-lived changelog file of the table or of a branch.
struct MetadataFile {
    /// `""` or `branch/branch-<name>/`.
    root: String,
    kind: MetadataKind,
    /// Snapshot / changelog id.
    id: Option<i64>,
    path: String,
}

/// Every snapshot, tag and long-lived changelog file of the table and of its branches.
async fn list_metadata_files<T>(io: &Io<T>) -> Result<Vec<MetadataFile>> {
    let unsupported =
        || Error::unsupported("removing orphan files needs a store that can list files");
    let branches = io.list("branch/").await?.ok_or_else(unsupported)?;
    let mut roots = vec![String::new()];
    let mut branch_roots: BTreeSet<String> = BTreeSet::new();
    for o in &branches {
        if let Some(rest) = o.path.strip_prefix("branch/")
            && let Some((dir, _)) = rest.split_once('/')
            && dir.starts_with("branch-")
        {
            branch_roots.insert(format!("branch/{dir}/"));
        }
    }
    roots.extend(branch_roots);
    let mut out = Vec::new();
    for root in roots {
        for (dir, prefix, kind) in [
            ("snapshot/", SNAPSHOT_FILE_PREFIX, MetadataKind::Snapshot),
            ("tag/", "tag-", MetadataKind::Tag),
            ("changelog/", CHANGELOG_FILE_PREFIX, MetadataKind::Changelog),
        ] {
            let listing = io
                .list(&format!("{root}{dir}"))
                .await?
                .ok_or_else(unsupported)?;
            for o in listing {
                let Some(name) = o.path.strip_prefix(&format!("{root}{dir}")) else {
                    continue;
                };
                if name.contains('/') {
                    continue;
                }
                let Some(rest) = name.strip_prefix(prefix) else {
                    continue;
                };
                let id = rest.parse::<i64>().ok();
                if rest.is_empty() || (kind != MetadataKind::Tag && id.is_none()) {
                    continue;
                }
                out.push(MetadataFile {
                    root: root.clone(),
                    kind,
                    id: if kind == MetadataKind::Tag { None } else { id },
                    path: o.path,
                });
            }
        }
    }
    Ok(out)
}

/// Names of the files a snapshot, tag or changelog file uses; `Ok(None)` when the file is
/// gone (expired or deleted meanwhile). `long_lived_changelog`: manifest lists and the index
/// manifest may be gone (the snapshot expire of a decoupled changelog deletes the base and
/// delta lists with a changelog producer, and the index manifest; Java's orphan clean reads
/// what is there).
async fn used_by_metadata_file<T>(
    io: &Io<T>,
    path: &str,
    long_lived_changelog: bool,
) -> Result<MetadataRead> {
    let Some(bytes) = io.read_opt(path, None).await? else {
        return Ok(MetadataRead::Gone);
    };
    let is_tag = path
        .rsplit('/')
        .next()
        .is_some_and(|n| n.starts_with("tag-"));
    let snapshot = if is_tag {
        decode_tag(&bytes, path)?.snapshot
    } else {
        decode_snapshot(&bytes, path)?
    };
    match used_by_snapshot(io, &snapshot, long_lived_changelog).await? {
        Ok(names) => Ok(MetadataRead::Used(names)),
        Err(missing) => {
            // Gone meanwhile (a concurrent expire deletes the snapshot file last)?
            if io.head(path).await?.is_none() {
                return Ok(MetadataRead::Gone);
            }
            Ok(MetadataRead::Missing(missing))
        }
    }
}

/// What reading one snapshot, tag or changelog file found.
enum MetadataRead {
    /// The file is gone (expired or deleted meanwhile).
    Gone,
    /// What it uses.
    Used(SnapshotUse),
    /// The file is there but this metadata file it names is not (yet: an expire may be
    /// half-way).
    Missing(String),
}

/// What one snapshot uses.
struct SnapshotUse {
    names: Vec<String>,
    live_sidecars: Vec<String>,
    without_sidecar: Vec<(String, i64)>,
}

/// The names a snapshot uses, or `Err(path)` of the first missing metadata file.
async fn used_by_snapshot<T>(
    io: &Io<T>,
    snapshot: &Snapshot,
    skip_missing_lists: bool,
) -> Result<std::result::Result<SnapshotUse, String>> {
    let mut names = Vec::new();
    let mut lists = vec![
        snapshot.base_manifest_list.clone(),
        snapshot.delta_manifest_list.clone(),
    ];
    lists.extend(snapshot.changelog_manifest_list.clone());
    let mut metas = Vec::new();
    let mut data_metas = 0;
    for (i, list) in lists.into_iter().enumerate() {
        match try_manifest_list(io, &list).await? {
            Some(m) => metas.extend(m),
            None if skip_missing_lists => {}
            None => return Ok(Err(format!("{MANIFEST_DIR}/{list}"))),
        }
        if i < 2 {
            data_metas = metas.len();
        }
        names.push(list);
    }
    let Some(entries) = try_manifests(io, &metas[..data_metas]).await? else {
        return Ok(Err(format!("a manifest of snapshot {}", snapshot.id)));
    };
    let Some(changelog) = try_manifests(io, &metas[data_metas..]).await? else {
        return Ok(Err(format!(
            "a changelog manifest of snapshot {}",
            snapshot.id
        )));
    };
    names.extend(metas.into_iter().map(|m| m.file_name));
    // The data files live in this snapshot (adds minus deletes): their sidecars must exist.
    let mut live_sidecars = Vec::new();
    let mut without_sidecar = Vec::new();
    for e in crate::spec::manifest::merge_entries(entries.iter().cloned())? {
        match e
            .file
            .extra_files
            .iter()
            .find(|x| x.ends_with(crate::spec::file_names::BLOBREF_SUFFIX))
        {
            Some(x) => live_sidecars.push(x.clone()),
            None => without_sidecar.push((e.file.file_name.clone(), e.file.schema_id)),
        }
    }
    for e in entries.into_iter().chain(changelog) {
        names.push(e.file.file_name);
        names.extend(e.file.extra_files);
        if let Some(p) = e.file.external_path
            && let Some(n) = p.rsplit('/').next()
        {
            names.push(n.to_string());
        }
    }
    if let Some(index) = &snapshot.index_manifest {
        let Some(entries) = try_index_manifest(io, index).await? else {
            if skip_missing_lists {
                names.extend(snapshot.statistics.clone());
                return Ok(Ok(SnapshotUse {
                    names,
                    live_sidecars,
                    without_sidecar,
                }));
            }
            return Ok(Err(format!("{MANIFEST_DIR}/{index}")));
        };
        names.push(index.clone());
        names.extend(entries.into_iter().map(|e| e.index_file.file_name));
    }
    names.extend(snapshot.statistics.clone());
    Ok(Ok(SnapshotUse {
        names,
        live_sidecars,
        without_sidecar,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_by_layout() {
        for (path, root, depth, want) in [
            ("manifest/manifest-1", "", 0, true),
            ("index/index-1", "", 0, true),
            ("statistics/stat-1", "", 0, true),
            ("snapshot/snapshot-3", "", 0, false),
            ("snapshot/LATEST", "", 0, false),
            ("snapshot/.tmp-123", "", 0, true),
            ("schema/schema-0", "", 0, false),
            ("tag/tag-a", "", 0, false),
            ("bucket-0/data-1.parquet", "", 0, true),
            ("bucket-0/data-1.parquet", "", 1, false),
            ("dt=1/bucket-0/data-1.parquet", "", 1, true),
            ("dt=1/bucket-0/x.managed.blob", "", 1, false),
            ("dt=1/bucket-0/x.parquet.blobref", "", 1, true),
            ("dt=1/h=2/bucket-0/data-1.orc", "", 2, true),
            ("dt=1/other/data-1.orc", "", 1, false),
            ("data/dt=1/bucket-0/data-1.orc", "data", 1, true),
            ("dt=1/bucket-0/data-1.orc", "data", 1, false),
            ("README", "", 0, false),
        ] {
            assert_eq!(is_candidate(path, root, depth), want, "{path}");
        }
    }

    #[test]
    fn entropy_dirs_are_dropped_below_bucket_directories_only() {
        for (rel, want) in [
            (
                "dt=1/bucket-0/1001/1111/0010/10010010/data-1.parquet",
                "dt=1/bucket-0/data-1.parquet",
            ),
            ("bucket-7/0000/0000/0000/00000000/f", "bucket-7/f"),
            (
                "data/dt=1/bucket-postpone/0101/0110/1001/10110010/a",
                "data/dt=1/bucket-postpone/a",
            ),
            (
                "dt=1/bucket-0/data-1.parquet",
                "dt=1/bucket-0/data-1.parquet",
            ),
            // Not Java's 4/4/4/8 binary digits, or not below a bucket directory: kept.
            (
                "dt=1/bucket-0/1001/1111/0010/1001001/f",
                "dt=1/bucket-0/1001/1111/0010/1001001/f",
            ),
            (
                "dt=1/bucket-0/1001/1121/0010/10010010/f",
                "dt=1/bucket-0/1001/1121/0010/10010010/f",
            ),
            (
                "dt=1/x/1001/1111/0010/10010010/f",
                "dt=1/x/1001/1111/0010/10010010/f",
            ),
            ("1001/1111/0010/10010010/f", "1001/1111/0010/10010010/f"),
        ] {
            assert_eq!(without_entropy_dirs(rel), want, "{rel}");
        }
    }
}
