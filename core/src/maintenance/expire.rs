//! Expire snapshots and the changelog files they own; with a changelog lifecycle decoupled
//! from the snapshots' (`changelog.num-retained.*` / `changelog.time-retained` longer than
//! the snapshots'), expired snapshots become long-lived changelogs (`changelog/changelog-N`)
//! that expire by their own options.
//!
//! Source: Java `org.apache.paimon.table.ExpireSnapshotsImpl`,
//! `org.apache.paimon.table.ExpireChangelogImpl`,
//! `org.apache.paimon.operation.{SnapshotDeletion, ChangelogDeletion}`,
//! `org.apache.paimon.options.ExpireConfig`.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::{Io, Machine, PutMode};
use crate::maintenance::files::{
    DataFileKey, MetadataParts, TablePaths, data_file_key, delete_all, live_data_file_keys,
    manifest_skipping_set, present_manifest_skipping_set, try_manifest_list, try_manifests,
    unused_list_files, unused_metadata_parts,
};
use crate::maintenance::{RemovedFile, total_bytes};
use crate::scan::planner::MANIFEST_DIR;
use crate::scan::snapshot_resolver::{
    EARLIEST_HINT, earliest_snapshot_id, latest_snapshot_id, list_tags, read_latest_schema,
    try_read_snapshot,
};
use crate::spec::data_file::FileSource;
use crate::spec::manifest::{FileKind, ManifestEntry};
use crate::spec::options::{ChangelogProducer, CoreOptions};
use crate::spec::snapshot::{
    Snapshot, decode_snapshot, encode_hint, encode_snapshot, snapshot_path,
};
use crate::util::parse_duration_millis;

/// `snapshot.num-retained.min` default.
const DEFAULT_RETAIN_MIN: i64 = 10;
/// `snapshot.num-retained.max` default (Java `Integer.MAX_VALUE`).
const DEFAULT_RETAIN_MAX: i64 = i32::MAX as i64;
/// `snapshot.time-retained` default: one hour.
const DEFAULT_TIME_RETAINED_MILLIS: i64 = 3_600_000;
/// `snapshot.expire.limit` default.
const DEFAULT_MAX_DELETES: i64 = 50;

/// What to keep when expiring snapshots.
///
/// Source: Java `org.apache.paimon.options.ExpireConfig` (the snapshot half; the changelog
/// half is [`ChangelogRetention`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpireConfig {
    /// `snapshot.num-retained.max`: snapshots beyond this many (newest first) expire
    /// whatever their age.
    pub retain_max: i64,
    /// `snapshot.num-retained.min` (≥ 1): at least this many newest snapshots stay.
    pub retain_min: i64,
    /// `snapshot.time-retained` in milliseconds: a snapshot expires only once the snapshot
    /// after it is older than this.
    pub time_retained_millis: i64,
    /// `snapshot.expire.limit`: at most this many snapshots expire in one call.
    pub max_deletes: i64,
    /// `consumer.changelog-only`: consumers do not protect snapshots.
    pub consumer_changelog_only: bool,
}

impl Default for ExpireConfig {
    fn default() -> Self {
        ExpireConfig {
            retain_max: DEFAULT_RETAIN_MAX,
            retain_min: DEFAULT_RETAIN_MIN,
            time_retained_millis: DEFAULT_TIME_RETAINED_MILLIS,
            max_deletes: DEFAULT_MAX_DELETES,
            consumer_changelog_only: false,
        }
    }
}

/// An int option (`None` when unset).
///
/// # Errors
/// [`Error::Invalid`] naming the option when it is not a 32-bit integer.
pub(crate) fn int_option(options: &CoreOptions, key: &str) -> Result<Option<i64>> {
    options
        .get(key)
        .map(|v| {
            v.trim()
                .parse::<i32>()
                .map(i64::from)
                .map_err(|_| Error::invalid(format!("option {key}: '{v}' is not a 32-bit integer")))
        })
        .transpose()
}

/// A duration option in milliseconds (`None` when unset).
///
/// # Errors
/// [`Error::Invalid`] naming the option when it does not parse.
pub(crate) fn duration_option(options: &CoreOptions, key: &str) -> Result<Option<i64>> {
    options
        .get(key)
        .map(|v| parse_duration_millis(v).map_err(|e| Error::invalid(format!("option {key}: {e}"))))
        .transpose()
}

impl ExpireConfig {
    /// The configuration a table's options ask for (Java's defaults for unset keys).
    /// `consumer_changelog_only` holds only with a decoupled changelog lifecycle (Java
    /// `CoreOptions.consumerChangelogOnly`).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a malformed value.
    pub fn from_options(options: &CoreOptions) -> Result<Self> {
        let mut config = ExpireConfig {
            retain_max: int_option(options, "snapshot.num-retained.max")?
                .unwrap_or(DEFAULT_RETAIN_MAX),
            retain_min: int_option(options, "snapshot.num-retained.min")?
                .unwrap_or(DEFAULT_RETAIN_MIN),
            time_retained_millis: duration_option(options, "snapshot.time-retained")?
                .unwrap_or(DEFAULT_TIME_RETAINED_MILLIS),
            max_deletes: int_option(options, "snapshot.expire.limit")?
                .unwrap_or(DEFAULT_MAX_DELETES),
            consumer_changelog_only: match options.get("consumer.changelog-only") {
                None => false,
                Some(v) if v.trim().eq_ignore_ascii_case("true") => true,
                Some(v) if v.trim().eq_ignore_ascii_case("false") => false,
                Some(v) => {
                    return Err(Error::invalid(format!(
                        "option consumer.changelog-only: '{v}' is not true or false"
                    )));
                }
            },
        };
        if config.consumer_changelog_only
            && ChangelogRetention::from_options(options)?
                .decoupled(&config)
                .is_none()
        {
            config.consumer_changelog_only = false;
        }
        Ok(config)
    }

    fn check(&self) -> Result<()> {
        if self.retain_min < 1 {
            return Err(Error::invalid(format!(
                "snapshot.num-retained.min must be at least 1, got {}",
                self.retain_min
            )));
        }
        if self.retain_max < self.retain_min {
            return Err(Error::invalid(format!(
                "snapshot.num-retained.max ({}) must not be less than snapshot.num-retained.min ({})",
                self.retain_max, self.retain_min
            )));
        }
        if self.max_deletes < 1 {
            return Err(Error::invalid(format!(
                "snapshot.expire.limit must be at least 1, got {}",
                self.max_deletes
            )));
        }
        if self.time_retained_millis < 0 {
            return Err(Error::invalid(
                "snapshot.time-retained must not be negative",
            ));
        }
        Ok(())
    }
}

/// The changelog half of Java's `ExpireConfig` as the table's options set it: unset values
/// fall back to the snapshots' ([`ChangelogRetention::decoupled`]).
///
/// Source: Java `org.apache.paimon.options.ExpireConfig`, `CoreOptions.expireConfig`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangelogRetention {
    /// `changelog.num-retained.max`.
    pub retain_max: Option<i64>,
    /// `changelog.num-retained.min`.
    pub retain_min: Option<i64>,
    /// `changelog.time-retained`, milliseconds.
    pub time_retained_millis: Option<i64>,
    /// `changelog-producer` is not `none` (Java `SnapshotDeletion.produceChangelog`).
    pub produce_changelog: bool,
}

/// What to keep when expiring long-lived changelogs (a decoupled changelog lifecycle).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangelogExpireConfig {
    /// `changelog.num-retained.max` (or the snapshots').
    pub retain_max: i64,
    /// `changelog.num-retained.min` (or the snapshots').
    pub retain_min: i64,
    /// `changelog.time-retained` (or the snapshots'), milliseconds.
    pub time_retained_millis: i64,
    /// `snapshot.expire.limit`.
    pub max_deletes: i64,
    /// `changelog-producer` is not `none`: the changelog of a snapshot is its changelog
    /// manifest list; otherwise its delta (the `APPEND` files), which the snapshot expire then
    /// keeps for the changelog.
    pub produce_changelog: bool,
}

impl ChangelogRetention {
    /// The changelog retention keys of a table's options.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a malformed value.
    pub fn from_options(options: &CoreOptions) -> Result<Self> {
        Ok(ChangelogRetention {
            retain_max: int_option(options, "changelog.num-retained.max")?,
            retain_min: int_option(options, "changelog.num-retained.min")?,
            time_retained_millis: duration_option(options, "changelog.time-retained")?,
            produce_changelog: options.changelog_producer()? != ChangelogProducer::None,
        })
    }

    /// The changelog expire configuration when the changelog lifecycle is decoupled from
    /// `snapshots` (a changelog value, or its fallback to the snapshots', keeps more than the
    /// snapshots'); `None` otherwise (changelog files expire with their snapshots).
    pub fn decoupled(&self, snapshots: &ExpireConfig) -> Option<ChangelogExpireConfig> {
        let config = ChangelogExpireConfig {
            retain_max: self.retain_max.unwrap_or(snapshots.retain_max),
            retain_min: self.retain_min.unwrap_or(snapshots.retain_min),
            time_retained_millis: self
                .time_retained_millis
                .unwrap_or(snapshots.time_retained_millis),
            max_deletes: snapshots.max_deletes,
            produce_changelog: self.produce_changelog,
        };
        (config.retain_max > snapshots.retain_max
            || config.retain_min > snapshots.retain_min
            || config.time_retained_millis > snapshots.time_retained_millis)
            .then_some(config)
    }
}

/// What an expire did (Java's `expire()` returns only the number of snapshots expired).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpireOutcome {
    /// Ids of the snapshot files deleted, ascending.
    pub expired_snapshots: Vec<i64>,
    /// Data, changelog, manifest, index and statistics files deleted (snapshot files not
    /// included).
    pub deleted_files: Vec<RemovedFile>,
    /// The earliest snapshot afterwards (`snapshot/EARLIEST`), `None` without snapshots.
    pub earliest_snapshot: Option<i64>,
    /// Ids of the expired snapshots kept as long-lived changelogs (`changelog/changelog-N`;
    /// a decoupled changelog lifecycle), ascending.
    #[serde(default)]
    pub changelogs_kept: Vec<i64>,
    /// Ids of the long-lived changelog files deleted, ascending.
    #[serde(default)]
    pub expired_changelogs: Vec<i64>,
}

impl ExpireOutcome {
    /// Known bytes of [`ExpireOutcome::deleted_files`].
    pub fn deleted_bytes(&self) -> u64 {
        total_bytes(&self.deleted_files)
    }
}

/// A machine running [`expire_snapshots`].
pub fn expire_machine(config: ExpireConfig, now_millis: i64) -> Machine<ExpireOutcome> {
    Machine::once("ExpireSnapshots", move |io| async move {
        expire_snapshots(&io, &config, now_millis).await
    })
}

/// A machine running [`expire_with_changelogs`].
pub fn expire_with_changelogs_machine(
    config: ExpireConfig,
    changelog: Option<ChangelogExpireConfig>,
    now_millis: i64,
) -> Machine<ExpireOutcome> {
    Machine::once("ExpireSnapshots", move |io| async move {
        expire_with_changelogs(&io, &config, changelog.as_ref(), now_millis).await
    })
}

/// Expire snapshots and, with a decoupled changelog lifecycle (`changelog` is `Some`), keep
/// the expired snapshots as long-lived changelogs and then expire those (Java's
/// `newExpireRunnable`: `ExpireSnapshotsImpl.expire` then `ExpireChangelogImpl.expire`).
///
/// # Errors
/// As [`expire_snapshots`] and [`expire_changelogs`].
pub async fn expire_with_changelogs<T>(
    io: &Io<T>,
    config: &ExpireConfig,
    changelog: Option<&ChangelogExpireConfig>,
    now_millis: i64,
) -> Result<ExpireOutcome> {
    let mut outcome = expire_snapshots_inner(io, config, changelog, now_millis).await?;
    if let Some(changelog) = changelog {
        let more = expire_changelogs(io, changelog, now_millis).await?;
        outcome.expired_changelogs = more.expired_changelogs;
        outcome.deleted_files.extend(more.deleted_files);
    }
    Ok(outcome)
}

/// The smallest `nextSnapshot` of the consumers in `consumer/`, `None` without consumers.
async fn min_consumer_next_snapshot<T>(io: &Io<T>) -> Result<Option<i64>> {
    let Some(objects) = io.list("consumer/").await? else {
        return Err(Error::unsupported(
            "expiring snapshots needs a store that can list files (consumer/)",
        ));
    };
    let names: Vec<&str> = objects
        .iter()
        .filter(|o| {
            o.path
                .strip_prefix("consumer/consumer-")
                .is_some_and(|n| !n.is_empty() && !n.contains('/'))
        })
        .map(|o| o.path.as_str())
        .collect();
    let reads = join_all(names.iter().map(|p| io.read_opt(p, None))).await;
    let mut min: Option<i64> = None;
    for (path, read) in names.iter().zip(reads) {
        let Some(bytes) = read? else { continue };
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(*path, "consumer", e.to_string()))?;
        let next = value
            .get("nextSnapshot")
            .and_then(serde_json::Value::as_i64)
            .ok_or_else(|| Error::corrupt(*path, "consumer", "no integer nextSnapshot"))?;
        min = Some(min.map_or(next, |m| m.min(next)));
    }
    Ok(min)
}

/// Expire snapshots as Java's `ExpireSnapshotsImpl.expire` does.
///
/// Keeps the newest `retain_min` snapshots, expires snapshots beyond the newest
/// `retain_max`, and in between expires a snapshot only when the snapshot after it is older
/// than `now_millis - time_retained_millis`; consumers (`consumer/consumer-*`) protect their
/// `nextSnapshot` and later (unless `consumer_changelog_only`); at most `max_deletes` go at
/// once. Files used by a tag are kept. See the [module docs](crate::maintenance) for the
/// order of deletes.
///
/// Rounds: `snapshot/LATEST` / `EARLIEST` probing; the candidate snapshots; the schema; the
/// tags; delta manifests of expired snapshots and live files of the tags that protect them;
/// the deletes of data and changelog files; manifest lists of the kept snapshots and tags;
/// metadata deletes; one delete per snapshot file (ascending); `Put snapshot/EARLIEST`.
///
/// # Errors
/// [`Error::Invalid`] for an inconsistent configuration; [`Error::Unsupported`] when the
/// host cannot list (tags and consumers need it); [`Error::Io`] for a failed read or delete
/// (an unreadable manifest of an expired snapshot is skipped, as Java does, leaving its
/// files to the orphan clean).
pub async fn expire_snapshots<T>(
    io: &Io<T>,
    config: &ExpireConfig,
    now_millis: i64,
) -> Result<ExpireOutcome> {
    expire_snapshots_inner(io, config, None, now_millis).await
}

async fn expire_snapshots_inner<T>(
    io: &Io<T>,
    config: &ExpireConfig,
    decoupled: Option<&ChangelogExpireConfig>,
    now_millis: i64,
) -> Result<ExpireOutcome> {
    config.check()?;
    let Some(latest) = latest_snapshot_id(io).await? else {
        return Ok(ExpireOutcome::default());
    };
    let Some(earliest) = earliest_snapshot_id(io).await? else {
        return Ok(ExpireOutcome::default());
    };
    let min = latest
        .saturating_sub(config.retain_max)
        .saturating_add(1)
        .max(earliest);
    let mut max_exclusive = latest.saturating_sub(config.retain_min).saturating_add(1);
    if !config.consumer_changelog_only
        && let Some(next) = min_consumer_next_snapshot(io).await?
    {
        max_exclusive = max_exclusive.min(next);
    }
    max_exclusive = max_exclusive.min(earliest.saturating_add(config.max_deletes));
    let older_than = now_millis.saturating_sub(config.time_retained_millis);

    let mut end = max_exclusive;
    if min < max_exclusive {
        let nexts = join_all((min..max_exclusive).map(|id| try_read_snapshot(io, id + 1))).await;
        for (id, next) in (min..max_exclusive).zip(nexts) {
            if let Some(next) = next?
                && older_than <= next.time_millis
            {
                end = id;
                break;
            }
        }
    }
    expire_until(io, earliest, end, decoupled).await
}

/// Expire snapshots `[earliest, end_exclusive)` (Java `expireUntil`).
async fn expire_until<T>(
    io: &Io<T>,
    earliest: i64,
    end_exclusive: i64,
    decoupled: Option<&ChangelogExpireConfig>,
) -> Result<ExpireOutcome> {
    // With a decoupled changelog and no changelog producer, the changelog of a snapshot is
    // the APPEND files of its delta: the changelog expire deletes them (Java
    // `SnapshotDeletion.planDeletedInDeltaManifest`, unknown source counted as APPEND).
    let keep_append = decoupled.is_some_and(|c| !c.produce_changelog);
    if end_exclusive <= earliest {
        if io.head(EARLIEST_HINT).await?.is_none() {
            put_earliest_hint(io, earliest).await?;
        }
        return Ok(ExpireOutcome {
            earliest_snapshot: Some(earliest),
            ..ExpireOutcome::default()
        });
    }
    let reads = join_all((earliest..=end_exclusive).map(|id| try_read_snapshot(io, id))).await;
    let mut including_end = Vec::new();
    for r in reads {
        if let Some(s) = r? {
            including_end.push(s);
        }
    }
    let Some(begin) = including_end.first().map(|s| s.id) else {
        return Ok(ExpireOutcome::default());
    };
    let excluding_end: Vec<&Snapshot> = including_end
        .iter()
        .filter(|s| s.id != end_exclusive)
        .collect();
    let schema = read_latest_schema(io)
        .await?
        .ok_or_else(|| Error::invalid("no table here: schema/ holds no schema file"))?;
    let paths = TablePaths::new(&schema)?;
    let tagged = tagged_snapshots(io).await?;

    // Data files deleted by the snapshots (begin, end]: not used by the newer snapshots, so
    // only the nearest older tag can still need them.
    let nearest_tag = |id: i64| tagged.iter().rev().find(|t| t.id < id);
    let mut tag_ids: BTreeSet<i64> = BTreeSet::new();
    for s in including_end.iter().filter(|s| s.id != begin) {
        if let Some(t) = nearest_tag(s.id) {
            tag_ids.insert(t.id);
        }
    }
    let tag_list: Vec<&Snapshot> = tagged.iter().filter(|t| tag_ids.contains(&t.id)).collect();
    let tag_files = join_all(tag_list.iter().map(|t| live_data_file_keys(io, t))).await;
    // A tag whose files cannot be read protects everything of the snapshots after it.
    let skippers: BTreeMap<i64, Option<BTreeSet<DataFileKey>>> = tag_list
        .iter()
        .zip(tag_files)
        .map(|(t, r)| (t.id, r.ok()))
        .collect();
    let expiring: Vec<&Snapshot> = including_end.iter().filter(|s| s.id != begin).collect();
    let planned = join_all(expiring.iter().map(|s| deleted_in_delta(io, s))).await;
    let mut data_files: Vec<RemovedFile> = Vec::new();
    let mut seen_paths: BTreeSet<String> = BTreeSet::new();
    for (s, deleted) in expiring.iter().zip(planned) {
        let skip = match nearest_tag(s.id) {
            None => None,
            Some(t) => match skippers.get(&t.id) {
                Some(Some(set)) => Some(set),
                _ => continue,
            },
        };
        for e in deleted? {
            if skip.is_some_and(|set| set.contains(&data_file_key(&e))) {
                continue;
            }
            if keep_append && e.file.file_source.unwrap_or(FileSource::Append) == FileSource::Append
            {
                continue;
            }
            for f in paths.data_files(&e)? {
                if seen_paths.insert(f.path.clone()) {
                    data_files.push(f);
                }
            }
        }
    }
    // Changelog files of the expired snapshots (kept with a decoupled changelog).
    let changelogs = if decoupled.is_some() {
        Vec::new()
    } else {
        join_all(excluding_end.iter().map(|s| added_in_changelog(io, s))).await
    };
    for entries in changelogs {
        for e in entries? {
            for f in paths.data_files(&e)?.into_iter().take(1) {
                if seen_paths.insert(f.path.clone()) {
                    data_files.push(f);
                }
            }
        }
    }
    // Branches share the table's data files and manifests (a branch made from a tag starts
    // with its snapshot's files): with any branch, no file is deleted here; the expired
    // snapshots' files are left to `remove-orphans`, which reads every branch.
    let branches = has_branches(io).await?;
    if branches {
        data_files.clear();
    }
    delete_all(io, &data_files).await?;
    let mut outcome = ExpireOutcome {
        deleted_files: data_files,
        ..ExpireOutcome::default()
    };

    let Some(last) = including_end.last() else {
        return Ok(outcome);
    };
    if last.id != end_exclusive {
        // The end snapshot vanished (another expire runs): stop here, as Java does.
        return Ok(outcome);
    }
    // Manifests, index files and statistics not used by the end snapshot or any older tag.
    let mut keep: Vec<&Snapshot> = tagged.iter().filter(|t| t.id < end_exclusive).collect();
    keep.push(last);
    let sets = join_all(keep.iter().map(|s| manifest_skipping_set(io, s))).await;
    let mut skipping: Option<BTreeSet<String>> = Some(BTreeSet::new());
    for set in sets {
        match (set, skipping.as_mut()) {
            (Ok(set), Some(all)) => all.extend(set),
            _ => skipping = None,
        }
    }
    // A decoupled changelog keeps the changelog list, and without a changelog producer the
    // base and delta lists too (Java `SnapshotDeletion.planManifestsCleaner`).
    let parts = MetadataParts {
        data_lists: decoupled.is_none_or(|c| c.produce_changelog),
        changelog_list: decoupled.is_none(),
        index_and_stats: true,
    };
    if let Some(mut seen) = skipping.filter(|_| !branches) {
        let mut metadata = Vec::new();
        for s in &excluding_end {
            metadata.extend(unused_metadata_parts(io, &paths, s, parts, &mut seen).await?);
        }
        delete_all(io, &metadata).await?;
        outcome.deleted_files.extend(metadata);
    }
    for s in &excluding_end {
        if decoupled.is_some() {
            io.put(
                &changelog_path(s.id),
                Bytes::from(encode_snapshot(s)?),
                PutMode::Overwrite,
            )
            .await?;
            io.put(
                CHANGELOG_LATEST_HINT,
                Bytes::from(encode_hint(s.id)),
                PutMode::Overwrite,
            )
            .await?;
            outcome.changelogs_kept.push(s.id);
        }
        io.delete(&snapshot_path(s.id)).await?;
        outcome.expired_snapshots.push(s.id);
    }
    put_earliest_hint(io, end_exclusive).await?;
    outcome.earliest_snapshot = Some(end_exclusive);
    Ok(outcome)
}

async fn put_earliest_hint<T>(io: &Io<T>, id: i64) -> Result<()> {
    io.put(
        EARLIEST_HINT,
        Bytes::from(encode_hint(id)),
        PutMode::Overwrite,
    )
    .await?;
    Ok(())
}

/// Every tagged snapshot, by id, one per id.
pub(crate) async fn tagged_snapshots<T>(io: &Io<T>) -> Result<Vec<Snapshot>> {
    let mut out: Vec<Snapshot> = Vec::new();
    for (_, tag) in list_tags(io).await? {
        if out.last().is_none_or(|s| s.id != tag.snapshot.id) {
            out.push(tag.snapshot);
        }
    }
    Ok(out)
}

/// The entries a snapshot's delta manifests delete and do not add back (a file that is
/// both deleted and added in one delta, e.g. upgraded to another level, stays). Nothing when
/// the delta manifests are gone (as Java: cleaned already).
async fn deleted_in_delta<T>(io: &Io<T>, snapshot: &Snapshot) -> Result<Vec<ManifestEntry>> {
    let Some(metas) = try_manifest_list(io, &snapshot.delta_manifest_list).await? else {
        return Ok(Vec::new());
    };
    let Some(entries) = try_manifests(io, &metas).await? else {
        return Ok(Vec::new());
    };
    let added: BTreeSet<DataFileKey> = entries
        .iter()
        .filter(|e| e.kind == FileKind::Add)
        .map(data_file_key)
        .collect();
    let mut seen = BTreeSet::new();
    Ok(entries
        .into_iter()
        .filter(|e| e.kind == FileKind::Delete)
        .filter(|e| {
            let key = data_file_key(e);
            !added.contains(&key) && seen.insert(key)
        })
        .collect())
}

/// The files a snapshot's changelog manifests add (nothing when they are gone).
async fn added_in_changelog<T>(io: &Io<T>, snapshot: &Snapshot) -> Result<Vec<ManifestEntry>> {
    let Some(list) = &snapshot.changelog_manifest_list else {
        return Ok(Vec::new());
    };
    let Some(metas) = try_manifest_list(io, list).await? else {
        return Ok(Vec::new());
    };
    let Some(entries) = try_manifests(io, &metas).await? else {
        return Ok(Vec::new());
    };
    Ok(entries
        .into_iter()
        .filter(|e| e.kind == FileKind::Add)
        .collect())
}

/// Whether the table has a branch (`branch/` lists anything). A store that cannot list
/// counts as having one, so nothing a branch may use is deleted.
pub(crate) async fn has_branches<T>(io: &Io<T>) -> Result<bool> {
    Ok(io.list("branch/").await?.is_none_or(|o| !o.is_empty()))
}

/// `changelog/LATEST`: the newest long-lived changelog id.
pub const CHANGELOG_LATEST_HINT: &str = "changelog/LATEST";
/// `changelog/EARLIEST`: the oldest long-lived changelog id.
pub const CHANGELOG_EARLIEST_HINT: &str = "changelog/EARLIEST";

/// Path of long-lived changelog `id` (Java `ChangelogManager.longLivedChangelogPath`).
pub fn changelog_path(id: i64) -> String {
    format!("changelog/changelog-{id}")
}

/// Ids of the long-lived changelog files, ascending (from a listing of `changelog/`).
///
/// # Errors
/// [`Error::Unsupported`] when the host cannot list.
pub async fn long_lived_changelog_ids<T>(io: &Io<T>) -> Result<Vec<i64>> {
    let Some(objects) = io.list("changelog/").await? else {
        return Err(Error::unsupported(
            "expiring changelogs needs a store that can list files (changelog/)",
        ));
    };
    let mut ids: Vec<i64> = objects
        .iter()
        .filter_map(|o| o.path.strip_prefix("changelog/changelog-")?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

async fn try_read_changelog<T>(io: &Io<T>, id: i64) -> Result<Option<Snapshot>> {
    let path = changelog_path(id);
    match io.read_opt(&path, None).await? {
        Some(bytes) => decode_snapshot(&bytes, &path).map(Some),
        None => Ok(None),
    }
}

/// Expire long-lived changelogs as Java's `ExpireChangelogImpl.expire` does.
///
/// Counted against the latest snapshot id: the newest `retain_min` ids stay, ids beyond the
/// newest `retain_max` go, in between a changelog goes only while its own time is older
/// than `now_millis - time_retained_millis`; consumers protect their `nextSnapshot`; at most
/// `max_deletes` go at once; the newest long-lived changelog always stays. Each expired
/// changelog's files are deleted (its changelog manifests' files, or without a changelog
/// list the files its delta deletes that the nearest older tag does not use), then its
/// manifests that the end changelog, the earliest snapshot and older tags do not use, then
/// its file; `changelog/EARLIEST` is written last.
///
/// # Errors
/// [`Error::Invalid`] for an inconsistent configuration; [`Error::Unsupported`] when the
/// host cannot list; [`Error::Io`] for a failed read or delete.
pub async fn expire_changelogs<T>(
    io: &Io<T>,
    config: &ChangelogExpireConfig,
    now_millis: i64,
) -> Result<ExpireOutcome> {
    if config.retain_max < config.retain_min {
        return Err(Error::invalid(format!(
            "changelog.num-retained.max ({}) must not be less than changelog.num-retained.min ({})",
            config.retain_max, config.retain_min
        )));
    }
    let none = ExpireOutcome::default();
    let Some(latest) = latest_snapshot_id(io).await? else {
        return Ok(none);
    };
    let Some(earliest_snapshot) = earliest_snapshot_id(io).await? else {
        return Ok(none);
    };
    let ids = long_lived_changelog_ids(io).await?;
    let (Some(&earliest), Some(&latest_changelog)) = (ids.first(), ids.last()) else {
        return Ok(none);
    };
    let min = latest
        .saturating_sub(config.retain_max)
        .saturating_add(1)
        .max(earliest);
    let mut max_exclusive = latest.saturating_sub(config.retain_min).saturating_add(1);
    if let Some(next) = min_consumer_next_snapshot(io).await? {
        max_exclusive = max_exclusive.min(next);
    }
    max_exclusive = max_exclusive
        .min(earliest.saturating_add(config.max_deletes))
        .min(latest_changelog);
    if max_exclusive <= earliest {
        return Ok(none);
    }
    let older_than = now_millis.saturating_sub(config.time_retained_millis);
    let mut end = max_exclusive;
    if min <= max_exclusive {
        let reads = join_all((min..=max_exclusive).map(|id| try_read_changelog(io, id))).await;
        for (id, read) in (min..=max_exclusive).zip(reads) {
            if let Some(c) = read?
                && older_than <= c.time_millis
            {
                end = id;
                break;
            }
        }
    }
    expire_changelogs_until(io, earliest, end, earliest_snapshot).await
}

/// Expire long-lived changelogs `[earliest, end_exclusive)` (Java
/// `ExpireChangelogImpl.expireUntil` with `ChangelogDeletion`).
async fn expire_changelogs_until<T>(
    io: &Io<T>,
    earliest: i64,
    end_exclusive: i64,
    earliest_snapshot: i64,
) -> Result<ExpireOutcome> {
    let mut outcome = ExpireOutcome::default();
    if end_exclusive <= earliest {
        return Ok(outcome);
    }
    let Some(end) = try_read_changelog(io, end_exclusive).await? else {
        // Java logs this and expires nothing.
        return Ok(outcome);
    };
    let Some(first_snapshot) = try_read_snapshot(io, earliest_snapshot).await? else {
        return Ok(outcome);
    };
    let schema = read_latest_schema(io)
        .await?
        .ok_or_else(|| Error::invalid("no table here: schema/ holds no schema file"))?;
    let paths = TablePaths::new(&schema)?;
    let tagged = tagged_snapshots(io).await?;
    let branches = has_branches(io).await?;
    let mut keep: Vec<&Snapshot> = tagged.iter().filter(|t| t.id < end_exclusive).collect();
    keep.push(&end);
    keep.push(&first_snapshot);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for set in join_all(keep.iter().map(|s| present_manifest_skipping_set(io, s))).await {
        seen.extend(set?);
    }
    let mut tag_files: BTreeMap<i64, Option<BTreeSet<DataFileKey>>> = BTreeMap::new();
    for id in earliest..end_exclusive {
        let Some(changelog) = try_read_changelog(io, id).await? else {
            continue;
        };
        let skip = match tagged.iter().rev().find(|t| t.id < id) {
            None => None,
            Some(t) => {
                if let std::collections::btree_map::Entry::Vacant(v) = tag_files.entry(t.id) {
                    v.insert(live_data_file_keys(io, t).await.ok());
                }
                match tag_files.get(&t.id) {
                    Some(Some(set)) => Some(set),
                    // Java skips a changelog whose tag's files cannot be read.
                    _ => continue,
                }
            }
        };
        let mut files = Vec::new();
        let mut metadata = Vec::new();
        if let Some(list) = &changelog.changelog_manifest_list {
            for e in added_in_changelog(io, &changelog).await? {
                files.extend(paths.data_files(&e)?.into_iter().take(1));
            }
            metadata.extend(
                unused_list_files(io, list, changelog.changelog_manifest_list_size, &mut seen)
                    .await?,
            );
        } else {
            for e in deleted_in_delta(io, &changelog).await? {
                if !skip.is_some_and(|set| set.contains(&data_file_key(&e))) {
                    files.extend(paths.data_files(&e)?);
                }
            }
            for (list, size) in [
                (
                    &changelog.delta_manifest_list,
                    changelog.delta_manifest_list_size,
                ),
                (
                    &changelog.base_manifest_list,
                    changelog.base_manifest_list_size,
                ),
            ] {
                if io.head(&format!("{MANIFEST_DIR}/{list}")).await?.is_some() {
                    metadata.extend(unused_list_files(io, list, size, &mut seen).await?);
                }
            }
        }
        // Branches share the table's files: leave them to `remove-orphans`.
        if !branches {
            delete_all(io, &files).await?;
            outcome.deleted_files.extend(files);
            delete_all(io, &metadata).await?;
            outcome.deleted_files.extend(metadata);
        }
        io.delete(&changelog_path(id)).await?;
        outcome.expired_changelogs.push(id);
    }
    io.put(
        CHANGELOG_EARLIEST_HINT,
        Bytes::from(encode_hint(end_exclusive)),
        PutMode::Overwrite,
    )
    .await?;
    Ok(outcome)
}
