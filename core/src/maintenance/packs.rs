//! Collecting unreferenced managed-BLOB packs (`*.managed.blob`) of primary-key tables.
//!
//! Packs are shared by many data files and are not extra files, so neither expiration nor
//! orphan clean deletes them (Java's released versions leave them forever). A pack may go when
//! no data file that anything can still reach names it in its `.blobref` sidecar:
//!
//! 1. list the table (packs with their modification times);
//! 2. collect the files used by every snapshot, tag and long-lived changelog of the table and
//!    of its branches (as orphan clean does, see [`crate::maintenance::orphans`]);
//! 3. refuse (delete nothing) when a used data file lists no sidecar and was written with a
//!    schema that has managed BLOB columns (it may reference packs nobody can see), or when a
//!    used sidecar is missing from the listing or cannot be decoded;
//! 4. read every used sidecar; a pack whose file name none of them names and that was last
//!    modified before the cut-off (`older_than`, at least as long as any write takes: packs of
//!    writes in flight are younger) is deleted.
//!
//! Safe beside writers (their packs are younger than the cut-off; a compaction only references
//! packs its live inputs reference) and beside expire (a snapshot that vanishes meanwhile took
//! its files with it; a sidecar that vanishes stops the collection).

use std::collections::{BTreeMap, BTreeSet};

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::blob_ref::decode_blobref;
use crate::io::{Io, Machine};
use crate::maintenance::orphans::collect_used_files;
use crate::maintenance::{RemovedFile, total_bytes};
use crate::scan::snapshot_resolver::{read_latest_schema, read_schema};
use crate::spec::file_names::{BLOBREF_SUFFIX, MANAGED_BLOB_SUFFIX};

/// What [`collect_packs`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackOutcome {
    /// Packs deleted (or, with `dry_run`, that would be).
    pub removed: Vec<RemovedFile>,
    /// Nothing was deleted.
    pub dry_run: bool,
    /// Packs in the table.
    pub packs: usize,
    /// Packs some used sidecar names.
    pub referenced: usize,
    /// Unreferenced packs spared because they are not older than the cut-off.
    pub too_young: usize,
    /// Used sidecars read.
    pub sidecars_read: usize,
}

impl PackOutcome {
    /// Bytes of the removed packs.
    pub fn removed_bytes(&self) -> u64 {
        total_bytes(&self.removed)
    }
}

/// A machine running [`collect_packs`].
pub fn collect_packs_machine(older_than_millis: i64, dry_run: bool) -> Machine<PackOutcome> {
    Machine::once("CollectPacks", move |io| async move {
        collect_packs(&io, older_than_millis, dry_run).await
    })
}

/// Delete the managed-BLOB packs that no used data file references and that were last
/// modified before `older_than_millis` (epoch millis). See the module docs.
///
/// # Errors
/// [`Error::Unsupported`] when the host cannot list; [`Error::Invalid`] when a used data file
/// of a managed-BLOB schema has no sidecar, a used sidecar is missing or undecodable (nothing
/// is deleted), or as orphan clean's collection of used files; IO errors.
pub async fn collect_packs<T>(
    io: &Io<T>,
    older_than_millis: i64,
    dry_run: bool,
) -> Result<PackOutcome> {
    read_latest_schema(io)
        .await?
        .ok_or_else(|| Error::invalid("no table here: schema/ holds no schema file"))?;
    let Some(listing) = io.list("").await? else {
        return Err(Error::unsupported(
            "collecting managed-BLOB packs needs a store that can list files",
        ));
    };
    let used = collect_used_files(io).await?;
    // Data files without a sidecar: unsafe when their schema has managed BLOB columns.
    let schema_ids: BTreeSet<i64> = used.without_sidecar.iter().map(|(_, id)| *id).collect();
    let mut managed_schema: BTreeMap<i64, bool> = BTreeMap::new();
    for id in schema_ids {
        let schema = read_schema(io, id).await?;
        managed_schema.insert(
            id,
            !crate::blob::validation::managed_blob_fields(&schema).is_empty(),
        );
    }
    if let Some((file, id)) = used
        .without_sidecar
        .iter()
        .find(|(_, id)| managed_schema.get(id).copied().unwrap_or(true))
    {
        return Err(Error::invalid(format!(
            "data file {file} (schema {id}, which has managed BLOB columns) lists no .blobref \
             sidecar: the packs it references are unknown, so no pack was collected"
        )));
    }
    let paths: BTreeMap<&str, &str> = listing
        .iter()
        .filter(|o| o.path.ends_with(BLOBREF_SUFFIX))
        .map(|o| {
            (
                o.path.rsplit('/').next().unwrap_or(&o.path),
                o.path.as_str(),
            )
        })
        .collect();
    let mut sidecars = Vec::new();
    for name in &used.live_sidecars {
        let Some(path) = paths.get(name.as_str()) else {
            return Err(Error::invalid(format!(
                "the used sidecar {name} is not in the table: no pack was collected (run \
                 again if an expire deleted it meanwhile; otherwise restore it: the packs \
                 its data file references are unknown)"
            )));
        };
        sidecars.push(*path);
    }
    let reads = join_all(sidecars.iter().map(|p| io.read_opt(p, None))).await;
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    for (path, bytes) in sidecars.iter().zip(reads) {
        let Some(bytes) = bytes? else {
            return Err(Error::invalid(format!(
                "the used sidecar {path} vanished while packs were collected (a concurrent \
                 expire?): no pack was collected; run again"
            )));
        };
        let refs = decode_blobref(&bytes, path).map_err(|e| {
            Error::invalid(format!(
                "the used sidecar {path} cannot be read ({e}): no pack was collected"
            ))
        })?;
        referenced.extend(refs.into_iter().map(|r| r.relative_path));
    }
    let mut outcome = PackOutcome {
        dry_run,
        sidecars_read: sidecars.len(),
        ..PackOutcome::default()
    };
    for o in listing
        .iter()
        .filter(|o| o.path.ends_with(MANAGED_BLOB_SUFFIX))
    {
        outcome.packs += 1;
        let name = o.path.rsplit('/').next().unwrap_or(&o.path);
        if referenced.contains(name) {
            outcome.referenced += 1;
        } else if o.modified_millis.is_some_and(|t| t < older_than_millis) {
            outcome.removed.push(RemovedFile {
                path: o.path.clone(),
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
