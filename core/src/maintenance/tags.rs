//! Tags (create, delete, list) and rollback.
//!
//! Source: Java `org.apache.paimon.utils.TagManager` (`createTag`, `deleteTag`, `doClean`),
//! `org.apache.paimon.operation.TagDeletion`, `org.apache.paimon.table.RollbackHelper` and
//! `AbstractFileStoreTable.rollbackTo`.

use std::collections::BTreeSet;

use bytes::Bytes;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::{Io, PutMode};
use crate::maintenance::RemovedFile;
use crate::maintenance::expire::tagged_snapshots;
use crate::maintenance::files::{
    TablePaths, data_file_key, delete_all, live_data_file_keys, manifest_skipping_set,
    try_manifest_list, try_manifests, unused_metadata_files,
};
use crate::scan::snapshot_resolver::{
    EARLIEST_HINT, LATEST_HINT, earliest_snapshot, earliest_snapshot_id, latest_snapshot_id,
    list_tags, read_latest_schema, read_tag, try_read_snapshot,
};
use crate::spec::manifest::{FileKind, merge_entries};
use crate::spec::snapshot::{
    JavaDuration, LocalDateTime, Tag, encode_hint, encode_snapshot, encode_tag, snapshot_path,
    tag_path,
};

/// One tag as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagInfo {
    /// Tag name.
    pub name: String,
    /// The tagged snapshot id.
    pub snapshot_id: i64,
    /// The tagged snapshot's commit time, milliseconds since the epoch.
    pub snapshot_time_millis: i64,
    /// Rows of the tagged snapshot.
    pub record_count: i64,
    /// `tagTimeRetained` in milliseconds, when set.
    pub time_retained_millis: Option<i64>,
}

/// Every tag, ordered by snapshot id then name (Java `TagManager.tags`).
///
/// # Errors
/// As [`list_tags`].
pub async fn list_tag_infos<T>(io: &Io<T>) -> Result<Vec<TagInfo>> {
    Ok(list_tags(io)
        .await?
        .into_iter()
        .map(|(name, tag)| TagInfo {
            name,
            snapshot_id: tag.snapshot.id,
            snapshot_time_millis: tag.snapshot.time_millis,
            record_count: tag.snapshot.total_record_count,
            time_retained_millis: tag.tag_time_retained.map(|d| {
                d.seconds
                    .saturating_mul(1000)
                    .saturating_add(i64::from(d.nanos / 1_000_000))
            }),
        })
        .collect())
}

fn check_tag_name(name: &str) -> Result<()> {
    if name.trim().is_empty() {
        return Err(Error::invalid("tag name must not be blank"));
    }
    if name.contains('/') {
        return Err(Error::invalid(format!(
            "tag name '{name}' must not contain '/'"
        )));
    }
    Ok(())
}

/// Create tag `name` on snapshot `snapshot_id` (the latest when `None`).
///
/// With `time_retained_millis` the tag file also holds `tagCreateTime` (`create_time`, the
/// host's local date-time) and `tagTimeRetained`, as Java writes them; without it the tag file
/// is the snapshot JSON, readable by old Java readers. Written create-new.
///
/// # Errors
/// [`Error::Invalid`] for a blank name or one with `/`, a tag that exists already, a table
/// without snapshots or a snapshot that does not exist.
pub async fn create_tag<T>(
    io: &Io<T>,
    name: &str,
    snapshot_id: Option<i64>,
    time_retained_millis: Option<i64>,
    create_time: LocalDateTime,
) -> Result<TagInfo> {
    check_tag_name(name)?;
    if read_tag(io, name).await?.is_some() {
        return Err(Error::invalid(format!("tag '{name}' already exists")));
    }
    let id = match snapshot_id {
        Some(id) => id,
        None => latest_snapshot_id(io)
            .await?
            .ok_or_else(|| Error::invalid("cannot create a tag: the table has no snapshot"))?,
    };
    let snapshot = try_read_snapshot(io, id).await?.ok_or_else(|| {
        Error::invalid(format!(
            "cannot create tag '{name}': snapshot {id} does not exist"
        ))
    })?;
    let bytes = match time_retained_millis {
        None => encode_snapshot(&snapshot)?,
        Some(ms) => encode_tag(&Tag {
            snapshot: snapshot.clone(),
            tag_create_time: Some(create_time),
            tag_time_retained: Some(JavaDuration {
                seconds: ms.div_euclid(1000),
                nanos: u32::try_from(ms.rem_euclid(1000) * 1_000_000).unwrap_or(0),
            }),
        })?,
    };
    let path = tag_path(name);
    if !io
        .put(&path, Bytes::from(bytes), PutMode::CreateNew)
        .await?
    {
        return Err(Error::invalid(format!("tag '{name}' already exists")));
    }
    Ok(TagInfo {
        name: name.to_string(),
        snapshot_id: snapshot.id,
        snapshot_time_millis: snapshot.time_millis,
        record_count: snapshot.total_record_count,
        time_retained_millis,
    })
}

/// What deleting a tag did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagDeleteOutcome {
    /// The tagged snapshot id.
    pub snapshot_id: i64,
    /// Files deleted besides the tag file: those only the tag kept alive (its snapshot had
    /// expired and no neighbour tag or snapshot uses them).
    pub deleted_files: Vec<RemovedFile>,
}

/// Delete tag `name`. When its snapshot has expired and no other tag names that snapshot,
/// the data files, manifests and index files only this tag used are deleted too (Java
/// `TagManager.deleteTag`: compared with the neighbour tag before it and the earliest
/// snapshot or next tag after it).
///
/// # Errors
/// [`Error::Invalid`] for a bad name or a tag that does not exist; IO failures.
pub async fn delete_tag<T>(io: &Io<T>, name: &str) -> Result<TagDeleteOutcome> {
    check_tag_name(name)?;
    let tag = read_tag(io, name)
        .await?
        .ok_or_else(|| Error::invalid(format!("tag '{name}' does not exist")))?;
    let tagged = tag.snapshot;
    let mut outcome = TagDeleteOutcome {
        snapshot_id: tagged.id,
        deleted_files: Vec::new(),
    };
    if io.head(&snapshot_path(tagged.id)).await?.is_some() {
        io.delete(&tag_path(name)).await?;
        return Ok(outcome);
    }
    let all = list_tags(io).await?;
    io.delete(&tag_path(name)).await?;
    if all
        .iter()
        .filter(|(n, t)| n != name && t.snapshot.id == tagged.id)
        .count()
        > 0
    {
        return Ok(outcome);
    }
    let others: Vec<_> = tagged_snapshots(io).await?;
    let left = others.iter().rev().find(|s| s.id < tagged.id).cloned();
    let right_tag = others.iter().find(|s| s.id > tagged.id).cloned();
    let earliest = earliest_snapshot(io).await?;
    let right = match (earliest, right_tag) {
        (Some(e), Some(t)) => Some(if e.id < t.id { e } else { t }),
        (e, t) => e.or(t),
    };
    let neighbours: Vec<_> = left.into_iter().chain(right).collect();
    // Branches share the table's files (one made from this tag starts with its files): with
    // any branch, only the tag file goes; its files are left to `remove-orphans`.
    if super::expire::has_branches(io).await? {
        return Ok(outcome);
    }
    let schema = read_latest_schema(io)
        .await?
        .ok_or_else(|| Error::invalid("no table here: schema/ holds no schema file"))?;
    let paths = TablePaths::new(&schema)?;

    // Data files: the tag's live files that no neighbour uses.
    let keep = join_all(neighbours.iter().map(|s| live_data_file_keys(io, s))).await;
    let mut keep_set = Some(BTreeSet::new());
    for k in keep {
        match (k, keep_set.as_mut()) {
            (Ok(k), Some(all)) => all.extend(k),
            _ => keep_set = None,
        }
    }
    if let Some(keep_set) = keep_set {
        let mut metas = Vec::new();
        for list in [&tagged.base_manifest_list, &tagged.delta_manifest_list] {
            metas.extend(try_manifest_list(io, list).await?.unwrap_or_default());
        }
        if let Some(entries) = try_manifests(io, &metas).await? {
            let mut files = Vec::new();
            for e in merge_entries(entries)? {
                if e.kind == FileKind::Add && !keep_set.contains(&data_file_key(&e)) {
                    files.extend(paths.data_files(&e)?);
                }
            }
            delete_all(io, &files).await?;
            outcome.deleted_files.extend(files);
        }
    }
    // Manifests.
    let sets = join_all(neighbours.iter().map(|s| manifest_skipping_set(io, s))).await;
    let mut skipping = Some(BTreeSet::new());
    for set in sets {
        match (set, skipping.as_mut()) {
            (Ok(set), Some(all)) => all.extend(set),
            _ => skipping = None,
        }
    }
    if let Some(mut seen) = skipping {
        let files = unused_metadata_files(io, &paths, &tagged, false, &mut seen).await?;
        delete_all(io, &files).await?;
        outcome.deleted_files.extend(files);
    }
    Ok(outcome)
}

/// Where to roll back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RollbackTarget {
    /// A snapshot id (a tag on it is used when the snapshot itself expired).
    Snapshot(i64),
    /// A tag name.
    Tag(String),
}

/// What a rollback did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RollbackOutcome {
    /// The snapshot the table is at now.
    pub snapshot_id: i64,
    /// Snapshot files deleted (newer than the target), descending.
    pub deleted_snapshots: Vec<i64>,
    /// Long-lived changelog files (`changelog/changelog-N`) deleted.
    pub deleted_changelogs: Vec<i64>,
    /// Tags deleted (on snapshots newer than the target).
    pub deleted_tags: Vec<String>,
    /// True when the target snapshot file was restored from the tag.
    pub restored_snapshot: bool,
}

/// Roll the table back to a snapshot or tag (Java `rollbackTo` with a file-system catalog):
/// `snapshot/LATEST` is set to the target, newer snapshots are deleted newest first, then
/// newer long-lived changelogs and tags on newer snapshots; rolling back to a tag whose
/// snapshot expired writes the snapshot file back and sets `snapshot/EARLIEST`. Data files
/// and manifests of the deleted snapshots are left for the orphan clean (as Java 2.0).
///
/// # Errors
/// [`Error::Invalid`] when the snapshot (and no tag on it) or the tag does not exist.
pub async fn rollback<T>(io: &Io<T>, target: &RollbackTarget) -> Result<RollbackOutcome> {
    let (snapshot, from_tag) = match target {
        RollbackTarget::Snapshot(id) => match try_read_snapshot(io, *id).await? {
            Some(s) => (s, false),
            None => {
                let tags = list_tags(io).await?;
                let tag = tags
                    .into_iter()
                    .find(|(_, t)| t.snapshot.id == *id)
                    .ok_or_else(|| {
                        Error::invalid(format!("rollback snapshot {id} does not exist"))
                    })?;
                (tag.1.snapshot, true)
            }
        },
        RollbackTarget::Tag(name) => {
            check_tag_name(name)?;
            let tag = read_tag(io, name)
                .await?
                .ok_or_else(|| Error::invalid(format!("tag '{name}' does not exist")))?;
            (tag.snapshot, true)
        }
    };
    let id = snapshot.id;
    let mut outcome = RollbackOutcome {
        snapshot_id: id,
        ..RollbackOutcome::default()
    };
    let earliest = earliest_snapshot_id(io).await?;
    let latest = latest_snapshot_id(io).await?;
    if let (Some(earliest), Some(latest)) = (earliest, latest) {
        io.put(
            LATEST_HINT,
            Bytes::from(encode_hint(id)),
            PutMode::Overwrite,
        )
        .await?;
        let to = earliest.max(id.saturating_add(1));
        let mut n = latest;
        while n >= to {
            if io.head(&snapshot_path(n)).await?.is_some() {
                io.delete(&snapshot_path(n)).await?;
                outcome.deleted_snapshots.push(n);
            }
            n -= 1;
        }
    }
    // Long-lived changelogs.
    if let Some(objects) = io.list("changelog/").await? {
        let mut ids: Vec<i64> = objects
            .iter()
            .filter_map(|o| o.path.strip_prefix("changelog/changelog-")?.parse().ok())
            .collect();
        ids.sort_unstable();
        let newer: Vec<i64> = ids.iter().copied().filter(|c| *c > id).collect();
        if !newer.is_empty() {
            let hint = ids.iter().copied().filter(|c| *c <= id).max().unwrap_or(-1);
            io.put(
                "changelog/LATEST",
                Bytes::from(encode_hint(hint)),
                PutMode::Overwrite,
            )
            .await?;
            for c in newer.iter().rev() {
                io.delete(&format!("changelog/changelog-{c}")).await?;
                outcome.deleted_changelogs.push(*c);
            }
        }
    }
    // Tags on newer snapshots.
    for (name, tag) in list_tags(io).await?.into_iter().rev() {
        if tag.snapshot.id <= id {
            break;
        }
        io.delete(&tag_path(&name)).await?;
        outcome.deleted_tags.push(name);
    }
    if from_tag && io.head(&snapshot_path(id)).await?.is_none() {
        let bytes = encode_snapshot(&snapshot)?;
        io.put(&snapshot_path(id), Bytes::from(bytes), PutMode::CreateNew)
            .await?;
        io.put(
            EARLIEST_HINT,
            Bytes::from(encode_hint(id)),
            PutMode::Overwrite,
        )
        .await?;
        outcome.restored_snapshot = true;
    }
    Ok(outcome)
}
