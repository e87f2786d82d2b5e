//! Merging the manifests of a snapshot before they become the next snapshot's base manifest
//! list, and reading manifests with a cache.
//!
//! Source: Java `org.apache.paimon.operation.ManifestFileMerger` (`merge`,
//! `tryFullCompaction`, `tryMinorCompaction`), `FileEntry#mergeEntries`,
//! `FileEntry#readDeletedEntries`.
//!
//! * **Full compaction** runs when the manifests that "must change" (holding DELETE entries,
//!   or smaller than `manifest.target-file-size`) add up to
//!   `manifest.full-compaction-threshold-size` (16 MB) or more: every DELETE is resolved
//!   against its ADD, manifests untouched by a deleted partition are kept as they are, the
//!   rest are rewritten (ADD entries only), rolling at the target size.
//! * Otherwise **minor compaction**: consecutive manifests are grouped until a group reaches
//!   the target size, and each such group of two or more is merged into new manifests; a
//!   trailing group is merged only when it has `manifest.merge-min-count` (30) manifests or
//!   more.
//!
//! Rounds: one `Read` round for the manifests it needs, one `Put` round for the merged ones.
//! Java's sorted rewrite (`manifest-sort.enabled`) is not implemented: with that option set,
//! the standard merge runs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures_util::future::try_join_all;

use crate::error::Result;
use crate::io::Io;
use crate::spec::{
    DataField, FileIdentifier, FileKind, ManifestEntry, ManifestFileMeta, decode_manifest,
    merge_entries,
};

use super::changes::PartitionFilter;
use super::meta_writer::{MetaWriter, manifest_path};

/// Manifest merge settings, from the table options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeSettings {
    /// `manifest.target-file-size` in bytes (8 MB).
    pub target_size_bytes: i64,
    /// `manifest.merge-min-count` (30).
    pub min_count: usize,
    /// `manifest.full-compaction-threshold-size` in bytes (16 MB).
    pub full_compaction_threshold_bytes: i64,
}

/// Manifests read so far, by file name (manifests never change once written).
#[derive(Debug, Default)]
pub(crate) struct ManifestCache {
    entries: BTreeMap<String, Arc<Vec<ManifestEntry>>>,
}

impl ManifestCache {
    /// The entries of each of `metas`, reading the ones not cached in one round.
    pub(crate) async fn read<T>(
        &mut self,
        io: &Io<T>,
        metas: &[&ManifestFileMeta],
    ) -> Result<Vec<Arc<Vec<ManifestEntry>>>> {
        let mut missing: Vec<&str> = metas
            .iter()
            .map(|m| m.file_name.as_str())
            .filter(|n| !self.entries.contains_key(*n))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        let read = try_join_all(missing.iter().map(|name| async move {
            let path = manifest_path(name);
            let bytes = io.read(&path).await?;
            decode_manifest(&bytes, &path)
        }))
        .await?;
        for (name, entries) in missing.into_iter().zip(read) {
            self.entries.insert(name.to_string(), Arc::new(entries));
        }
        Ok(metas
            .iter()
            .map(|m| self.entries.get(&m.file_name).cloned().unwrap_or_default())
            .collect())
    }
}

/// Merge `input` (the previous snapshot's base + delta manifests) as Java's
/// `ManifestFileMerger.merge` does; new manifests are written with `writer` (and so are
/// cleaned with the attempt). Returns the manifests of the new base list.
pub(crate) async fn merge_manifests<T>(
    io: &Io<T>,
    writer: &mut MetaWriter,
    cache: &mut ManifestCache,
    input: &[ManifestFileMeta],
    settings: MergeSettings,
    partition_fields: &[DataField],
    schema_id: i64,
) -> Result<Vec<ManifestFileMeta>> {
    if let Some(merged) = try_full_compaction(
        io,
        writer,
        cache,
        input,
        settings,
        partition_fields,
        schema_id,
    )
    .await?
    {
        return Ok(merged);
    }
    try_minor_compaction(io, writer, cache, input, settings, schema_id).await
}

async fn try_minor_compaction<T>(
    io: &Io<T>,
    writer: &mut MetaWriter,
    cache: &mut ManifestCache,
    input: &[ManifestFileMeta],
    settings: MergeSettings,
    schema_id: i64,
) -> Result<Vec<ManifestFileMeta>> {
    // Plan the groups first (sizes only, as indexes into `input`), then read and write them
    // in one round each.
    enum Slot {
        Keep(usize),
        Merge(Vec<usize>),
    }
    fn flush(candidates: &mut Vec<usize>, slots: &mut Vec<Slot>) {
        if candidates.len() == 1 {
            slots.extend(candidates.drain(..).map(Slot::Keep));
        } else {
            slots.push(Slot::Merge(std::mem::take(candidates)));
        }
    }
    let mut slots: Vec<Slot> = Vec::new();
    let mut candidates: Vec<usize> = Vec::new();
    let mut total: i64 = 0;
    for (i, m) in input.iter().enumerate() {
        total = total.saturating_add(m.file_size);
        candidates.push(i);
        if total >= settings.target_size_bytes {
            flush(&mut candidates, &mut slots);
            total = 0;
        }
    }
    if candidates.len() >= settings.min_count {
        flush(&mut candidates, &mut slots);
    } else {
        slots.extend(candidates.into_iter().map(Slot::Keep));
    }
    if !slots.iter().any(|s| matches!(s, Slot::Merge(_))) {
        return Ok(input.to_vec());
    }
    let to_read: Vec<&ManifestFileMeta> = slots
        .iter()
        .flat_map(|s| match s {
            Slot::Merge(group) => group.iter().map(|&i| &input[i]).collect::<Vec<_>>(),
            Slot::Keep(_) => Vec::new(),
        })
        .collect();
    let mut read = cache.read(io, &to_read).await?.into_iter();
    let mut merged_groups: Vec<Vec<ManifestEntry>> = Vec::new();
    for s in &slots {
        if let Slot::Merge(group) = s {
            let mut entries = Vec::new();
            for _ in group {
                entries.extend(read.next().map(|e| e.as_ref().clone()).unwrap_or_default());
            }
            merged_groups.push(merge_entries(entries)?);
        }
    }
    let groups: Vec<&[ManifestEntry]> = merged_groups.iter().map(Vec::as_slice).collect();
    let mut written = writer
        .write_manifests(io, &groups, schema_id)
        .await?
        .into_iter();
    let mut out = Vec::new();
    for s in slots {
        match s {
            Slot::Keep(i) => out.push(input[i].clone()),
            Slot::Merge(_) => out.extend(written.next().unwrap_or_default()),
        }
    }
    Ok(out)
}

async fn try_full_compaction<T>(
    io: &Io<T>,
    writer: &mut MetaWriter,
    cache: &mut ManifestCache,
    input: &[ManifestFileMeta],
    settings: MergeSettings,
    partition_fields: &[DataField],
    schema_id: i64,
) -> Result<Option<Vec<ManifestFileMeta>>> {
    let must_change =
        |m: &ManifestFileMeta| m.num_deleted_files > 0 || m.file_size < settings.target_size_bytes;
    let delta_size: i64 = input
        .iter()
        .filter(|m| must_change(m))
        .map(|m| m.file_size)
        .fold(0, i64::saturating_add);
    if delta_size < settings.full_compaction_threshold_bytes.max(1) {
        return Ok(None);
    }
    // Identities of every DELETE entry.
    let with_deletes: Vec<&ManifestFileMeta> =
        input.iter().filter(|m| m.num_deleted_files > 0).collect();
    let mut deleted: BTreeSet<FileIdentifier> = BTreeSet::new();
    for entries in cache.read(io, &with_deletes).await? {
        deleted.extend(
            entries
                .iter()
                .filter(|e| e.kind == FileKind::Delete)
                .map(ManifestEntry::identifier),
        );
    }
    // Manifests that cannot hold a deleted file are kept without reading them.
    let filter = if deleted.is_empty() {
        None
    } else if partition_fields.is_empty() {
        Some(PartitionFilter::All)
    } else {
        Some(PartitionFilter::Set(
            deleted.iter().map(|d| d.partition.clone()).collect(),
        ))
    };
    let mut result: Vec<ManifestFileMeta> = Vec::new();
    let mut to_merge: Vec<&ManifestFileMeta> = Vec::new();
    for m in input {
        let keep_as_is = !must_change(m)
            && filter
                .as_ref()
                .is_none_or(|f| !f.may_match_manifest(m, partition_fields));
        if keep_as_is {
            result.push(m.clone());
        } else {
            to_merge.push(m);
        }
    }
    if to_merge.len() <= 1 {
        return Ok(None);
    }
    let mut rewritten: Vec<ManifestEntry> = Vec::new();
    for (m, entries) in to_merge.iter().zip(cache.read(io, &to_merge).await?) {
        let mut require_change = must_change(m);
        let mut kept = Vec::new();
        for e in entries.iter().filter(|e| e.kind == FileKind::Add) {
            if deleted.contains(&e.identifier()) {
                require_change = true;
            } else {
                kept.push(e.clone());
            }
        }
        if require_change {
            rewritten.extend(kept);
        } else {
            result.push((*m).clone());
        }
    }
    let merged = writer
        .write_manifests(io, &[rewritten.as_slice()], schema_id)
        .await?;
    result.extend(merged.into_iter().flatten());
    Ok(Some(result))
}
