//! The snapshot timeline: one point per snapshot (time, commit kind, record counts), with
//! the live and changed data-file counts when the host read the manifest lists, and the tags
//! of each snapshot.
//!
//! File counts come from the manifest lists alone (no manifest is read): a snapshot's live
//! files are Σ added − Σ deleted entries over its base and delta manifest lists, the files
//! its commit added and deleted those of its delta list. Live *bytes* would need every
//! manifest of every snapshot, so they are not part of the timeline
//! ([`TimelineView::live_bytes`] says so).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::spec::manifest_list::ManifestFileMeta;
use crate::spec::snapshot::{Snapshot, Tag};

/// What the timeline says about live bytes.
pub const LIVE_BYTES_NOT_DERIVED: &str = "live bytes per snapshot need every manifest of every \
    snapshot; not derived (the files view shows the bytes of one snapshot)";

/// The manifest lists of one snapshot, as read by the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotManifests {
    /// `baseManifestList` entries.
    pub base: Vec<ManifestFileMeta>,
    /// `deltaManifestList` entries.
    pub delta: Vec<ManifestFileMeta>,
}

/// The timeline of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineView {
    /// One point per snapshot, oldest first.
    pub points: Vec<TimelinePoint>,
    /// Tags whose snapshot is no longer in the list (expired): `(name, snapshot id)`.
    pub detached_tags: Vec<(String, i64)>,
    /// Whether `liveFiles` / `addedFiles` / `deletedFiles` were derived (the host read the
    /// manifest lists).
    pub file_counts: bool,
    /// Live bytes: [`LIVE_BYTES_NOT_DERIVED`].
    pub live_bytes: String,
}

/// One snapshot of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelinePoint {
    /// Snapshot id.
    pub snapshot_id: i64,
    /// Commit time, epoch millis.
    pub time_millis: i64,
    /// `APPEND`, `COMPACT`, `OVERWRITE` or `ANALYZE`.
    pub commit_kind: String,
    /// `operation` (`WRITE`, `DELETE`, `MERGE`, …) when recorded.
    pub operation: Option<String>,
    /// Schema id.
    pub schema_id: i64,
    /// Records of every live data file.
    pub total_record_count: i64,
    /// Added − deleted records of this commit.
    pub delta_record_count: i64,
    /// Changelog records, when recorded.
    pub changelog_record_count: Option<i64>,
    /// Live data files (from the manifest lists), when derived.
    pub live_files: Option<i64>,
    /// Data files this commit added, when derived.
    pub added_files: Option<i64>,
    /// Data files this commit deleted, when derived.
    pub deleted_files: Option<i64>,
    /// Commit user.
    pub commit_user: String,
    /// Tags on this snapshot, by name.
    pub tags: Vec<String>,
}

fn sums(list: &[ManifestFileMeta]) -> (i64, i64) {
    list.iter().fold((0i64, 0i64), |(a, d), m| {
        (
            a.saturating_add(m.num_added_files),
            d.saturating_add(m.num_deleted_files),
        )
    })
}

/// The timeline of `snapshots` (oldest first) with `tags`; `manifests` gives the manifest
/// lists of the snapshots whose file counts are wanted (an empty map: no counts).
pub fn timeline(
    snapshots: &[Snapshot],
    tags: &[(String, Tag)],
    manifests: &BTreeMap<i64, SnapshotManifests>,
) -> TimelineView {
    let mut by_snapshot: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (name, t) in tags {
        by_snapshot
            .entry(t.snapshot.id)
            .or_default()
            .push(name.clone());
    }
    let mut points = Vec::with_capacity(snapshots.len());
    for s in snapshots {
        let counts = manifests.get(&s.id).map(|m| {
            let (ba, bd) = sums(&m.base);
            let (da, dd) = sums(&m.delta);
            (
                ba.saturating_add(da).saturating_sub(bd).saturating_sub(dd),
                da,
                dd,
            )
        });
        let mut names = by_snapshot.remove(&s.id).unwrap_or_default();
        names.sort();
        points.push(TimelinePoint {
            snapshot_id: s.id,
            time_millis: s.time_millis,
            commit_kind: s.commit_kind.to_string(),
            operation: s.operation.clone(),
            schema_id: s.schema_id,
            total_record_count: s.total_record_count,
            delta_record_count: s.delta_record_count,
            changelog_record_count: s.changelog_record_count,
            live_files: counts.map(|c| c.0),
            added_files: counts.map(|c| c.1),
            deleted_files: counts.map(|c| c.2),
            commit_user: s.commit_user.clone(),
            tags: names,
        });
    }
    let detached_tags = by_snapshot
        .into_iter()
        .flat_map(|(id, names)| names.into_iter().map(move |n| (n, id)))
        .collect();
    TimelineView {
        points,
        detached_tags,
        file_counts: !manifests.is_empty(),
        live_bytes: LIVE_BYTES_NOT_DERIVED.to_owned(),
    }
}
