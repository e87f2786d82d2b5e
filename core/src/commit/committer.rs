//! The commit: commit messages become one or two new snapshots, published atomically with a
//! create-new `Put` of `snapshot/snapshot-<n>` and retried when another committer wins.
//!
//! Source: Java `org.apache.paimon.operation.FileStoreCommitImpl` (`commit`,
//! `overwritePartition`, `tryCommit`, `tryCommitOnce`, `filterCommitted`),
//! `catalog.RenamingSnapshotCommit`, `utils.SnapshotManager#latestSnapshotOfUser`.
//! Protocol: `spec/table-layout.md` §8.
//!
//! # What is committed
//!
//! The messages' files become manifest entries ([`EntryChanges`]) split into two parts, each
//! committed as its own snapshot, in this order (as Java does):
//!
//! 1. the **write part** (new and deleted data files, changelog, index changes of writes):
//!    an `APPEND` snapshot, or `OVERWRITE` when it deletes files or changes deletion vectors,
//!    or in [`CommitMode::Overwrite`] (which also deletes every live file of the overwritten
//!    partitions, and commits no changelog);
//! 2. the **compact part** (compaction before/after files, their changelog and index
//!    changes): a `COMPACT` snapshot.
//!
//! An empty part is skipped (Java's `ignoreEmptyCommit`), except a static overwrite, which
//! always commits (it may just empty partitions).
//!
//! # Requests and rounds
//!
//! Per part and attempt, in order:
//!
//! 1. the latest snapshot ([`latest_snapshot_id`]: `Read snapshot/LATEST`, `Head`s or
//!    `List snapshot/`) and `Read snapshot/snapshot-<n>`; the latest schema id (`List
//!    schema/`);
//! 2. idempotence (first attempt of the first part): the latest snapshot of the commit user,
//!    read backwards in rounds of 16 snapshots from the latest down to
//!    [`CommitOptions::check_from_snapshot`] (or to the first missing snapshot);
//! 3. `Read` of the base and delta manifest lists, then (when needed: overwrite, conflict
//!    checks, manifest merging) of the manifests in one round, and of the index manifest;
//! 4. merged manifests (`Put`, one round, only when a merge happens);
//! 5. the delta and changelog manifests (one `Put` round), then the base, delta and
//!    changelog manifest lists and the new index manifest (one `Put` round), all create-new
//!    under `manifest/`;
//! 6. `Put snapshot/snapshot-<n>` create-new; after success `Put snapshot/LATEST`
//!    (overwrite, best effort). `snapshot/EARLIEST` is not written (Java's commit does not
//!    either; expiration maintains it).
//!
//! # Failures
//!
//! * **Conflicts** ([`Error::CommitConflict`]): checked against the latest snapshot before
//!   anything is written; the commit gives up without retrying.
//! * **Another committer published `snapshot-<n>` first** (`AlreadyExists`, and the object is
//!   not this attempt's snapshot): this attempt's manifest lists, manifests and index manifest
//!   are deleted (manifests merged from the base are kept while a retry can reuse them), then
//!   the commit retries on the new latest snapshot, up to `commit.max-retries` (10) times.
//! * **Any other failure before the publish**: every metadata file this attempt wrote is
//!   deleted (best effort) and the error is returned.
//! * **The snapshot `Put` fails otherwise** (outcome unknown): nothing of the attempt is
//!   deleted, the commit re-reads the latest snapshot and retries; a retry first looks for a
//!   snapshot since the previous attempt's base with the same commit user, identifier and
//!   kind (Java's check), and stops there if it finds one. An attempt whose snapshot id was
//!   taken by a snapshot that is not its own is then cleaned.
//!
//! A crash at any point leaves at most unreferenced files (orphans) under `manifest/`; the
//! table reads at its last published snapshot. Running the same commit again (same user and
//! identifier) publishes only what is missing.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use futures_util::future::{join_all, try_join};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::{Io, Machine, PutMode};
use crate::maintenance::partitions::PartitionExpireConfig;
use crate::scan::planner::read_manifest_list;
use crate::scan::snapshot_resolver::{
    LATEST_HINT, latest_schema_id, latest_snapshot_id, read_snapshot, try_read_snapshot,
};
use crate::spec::binary_row::BinaryRow;
use crate::spec::index_manifest::DELETION_VECTORS_INDEX;
use crate::spec::options::parse_memory_size;
use crate::spec::snapshot::{
    BATCH_COMMIT_IDENTIFIER, CURRENT_SNAPSHOT_VERSION, encode_hint, encode_snapshot, snapshot_path,
};
use crate::spec::{
    CommitKind, DataField, DataType, FileKind, IndexManifestEntry, ManifestCodec, ManifestEntry,
    ManifestFileMeta, Snapshot, TableSchema, combine_index_entries, merge_entries,
};
use crate::util::NameSource;

use super::changes::{
    EntryChanges, PartitionFilter, changed_partitions, group_by_partition_java_order,
    upgrade_for_overwrite,
};
use super::conflict::{ConflictContext, check_conflicts, check_hash_index_changes};
use super::merger::{ManifestCache, MergeSettings, merge_manifests};
use super::message::CommitMessage;
use super::meta_writer::MetaWriter;
use super::row_tracking::assign_row_tracking;

mod parts;
use parts::*;

/// `manifest.target-file-size` default: 8 MB.
pub const DEFAULT_MANIFEST_TARGET_FILE_SIZE: i64 = 8 << 20;
/// `manifest.merge-min-count` default.
pub const DEFAULT_MANIFEST_MERGE_MIN_COUNT: usize = 30;
/// `manifest.full-compaction-threshold-size` default: 16 MB.
pub const DEFAULT_MANIFEST_FULL_COMPACTION_THRESHOLD: i64 = 16 << 20;
/// `commit.max-retries` default.
pub const DEFAULT_COMMIT_MAX_RETRIES: u32 = 10;
/// The `writerVersion` [`CommitOptions::new`] puts into snapshots.
pub const WRITER_VERSION: &str = concat!("paimon-kernel-", env!("CARGO_PKG_VERSION"));

/// Snapshots read per round when searching backwards for the commit user's latest snapshot.
const USER_SEARCH_BATCH: i64 = 16;

fn batch_identifier() -> i64 {
    BATCH_COMMIT_IDENTIFIER
}

fn yes() -> bool {
    true
}

/// Inputs of a commit that come from the host: who commits, when, and the seed of new names.
/// Plain serde data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitOptions {
    /// `commitUser`. With the batch identifier every batch commit needs its own user (Java
    /// gives each batch write a random UUID): a snapshot of this user is taken as this commit
    /// already published.
    pub commit_user: String,
    /// `commitIdentifier`; [`BATCH_COMMIT_IDENTIFIER`] (`i64::MAX`) for batch commits,
    /// increasing ids (checkpoints) for streaming ones.
    #[serde(default = "batch_identifier")]
    pub commit_identifier: i64,
    /// `timeMillis` of the new snapshots, epoch millis (the core has no clock).
    pub time_millis: i64,
    /// Seed of the names, UUIDs and Avro sync markers of the files the commit writes.
    pub seed: u64,
    /// The snapshot the committed writes were based on, if known: only later snapshots are
    /// searched for this commit (user and identifier) before the first attempt. `None`
    /// searches back to the earliest snapshot, as Java's `filterCommitted` does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_from_snapshot: Option<i64>,
    /// `watermark` of this commit (the snapshot keeps the max with the previous one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watermark: Option<i64>,
    /// `properties` of the new snapshots (omitted when empty).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
    /// `operation` of the new snapshots (`WRITE`, `OVERWRITE`, `TRUNCATE`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// `writerVersion` of the new snapshots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_version: Option<String>,
    /// Check an `APPEND` against the latest snapshot too (Java
    /// `appendCommitCheckConflict`); deletes, overwrites and compactions are always checked.
    #[serde(default)]
    pub check_append_conflicts: bool,
    /// Skip a write part with no change (Java `ignoreEmptyCommit`, default true); `false`
    /// publishes an empty `APPEND` snapshot.
    #[serde(default = "yes")]
    pub ignore_empty_commit: bool,
}

impl CommitOptions {
    /// A batch commit by `commit_user` at `time_millis` with names seeded by `seed`, writing
    /// [`WRITER_VERSION`].
    pub fn new(commit_user: impl Into<String>, time_millis: i64, seed: u64) -> Self {
        CommitOptions {
            commit_user: commit_user.into(),
            commit_identifier: BATCH_COMMIT_IDENTIFIER,
            time_millis,
            seed,
            check_from_snapshot: None,
            watermark: None,
            properties: BTreeMap::new(),
            operation: None,
            writer_version: Some(WRITER_VERSION.to_string()),
            check_append_conflicts: false,
            ignore_empty_commit: true,
        }
    }

    /// With another commit identifier.
    pub fn with_identifier(mut self, identifier: i64) -> Self {
        self.commit_identifier = identifier;
        self
    }

    /// With [`CommitOptions::check_from_snapshot`].
    pub fn with_check_from_snapshot(mut self, id: Option<i64>) -> Self {
        self.check_from_snapshot = id;
        self
    }
}

/// Whether a commit adds to the table or replaces partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum CommitMode {
    /// Add the messages' changes (Java `FileStoreCommit#commit`).
    Append,
    /// Replace data (Java `overwritePartition`, `INSERT OVERWRITE`): every live file of the
    /// overwritten partitions is deleted and the new files added, in one `OVERWRITE`
    /// snapshot.
    Overwrite {
        /// Static partition spec (`key → value` as text, `partition.default-name` for NULL;
        /// some keys may be left out); `None` or empty: the whole table. Every new file must
        /// lie in it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition_filter: Option<BTreeMap<String, String>>,
        /// Dynamic partition overwrite (Java `dynamic-partition-overwrite`, default true): on
        /// a partitioned table, overwrite only the partitions the new files are in (nothing
        /// when there are none), ignoring `partition_filter`.
        #[serde(default = "yes")]
        dynamic: bool,
    },
    /// Drop partitions (Java `FileStoreCommit#dropPartitions`): one `OVERWRITE` snapshot
    /// deleting every live data file and index file of `partitions`, with no messages. It is
    /// always published: the commit user and identifier are not looked up in earlier
    /// snapshots.
    DropPartitions {
        /// The partition rows (serde: hex of each serialized `BinaryRow`); not empty.
        partitions: BTreeSet<BinaryRow>,
    },
}

/// What a commit did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitOutcome {
    /// Ids of the snapshots this run published, in order (empty when there was nothing to
    /// commit or everything was already committed).
    pub snapshot_ids: Vec<i64>,
    /// True when (a part of) this commit was found already published (same commit user and
    /// identifier) and was not published again.
    pub already_committed: bool,
    /// Publish attempts made (1 per part without contention).
    pub attempts: u32,
    /// What the host's maintenance after the commit did (snapshot/changelog expire,
    /// automatic tags; see [`crate::commit::after_commit`]); `None` when it did not run
    /// (`write-only`, the core's commit alone) or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance: Option<super::after_commit::MaintainOutcome>,
    /// Why the maintenance after a successful commit failed. The commit itself stands (Java
    /// throws from `TableCommitImpl.maintain` instead; here the snapshot is visible and only
    /// reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance_warning: Option<String>,
    /// True when the maintenance after this commit was started in the background
    /// (`snapshot.expire.execution-mode` = `async` after a streaming commit) and the commit
    /// returned without waiting for it; `maintenance` is then `None`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub maintenance_in_background: bool,
}

/// A machine running [`commit`]; it emits one [`CommitOutcome`].
///
/// `schema` is the table's latest schema (partition keys and types, primary keys, options:
/// `bucket`, `manifest.compression`, `manifest.target-file-size`, `manifest.merge-min-count`,
/// `manifest.full-compaction-threshold-size`, `commit.max-retries`, `row-tracking.enabled`,
/// `data-evolution.enabled`, `overwrite-upgrade`, ...). Paths are relative to the table root
/// (main branch).
pub fn commit_machine(
    schema: TableSchema,
    messages: Vec<CommitMessage>,
    mode: CommitMode,
    options: CommitOptions,
) -> Machine<CommitOutcome> {
    Machine::once("Committer", move |io: Io<CommitOutcome>| async move {
        commit(&io, &schema, messages, &mode, &options).await
    })
}

/// Commit `messages` to the table at the IO root. See the module docs.
///
/// # Errors
/// [`Error::CommitConflict`] for a conflict; [`Error::Invalid`] for bad options, a static
/// overwrite with files outside its partitions, or after `commit.max-retries` lost races;
/// [`Error::Io`] / [`Error::Corrupt`] from the reads and writes.
pub async fn commit<T>(
    io: &Io<T>,
    schema: &TableSchema,
    messages: Vec<CommitMessage>,
    mode: &CommitMode,
    options: &CommitOptions,
) -> Result<CommitOutcome> {
    let table = TableSettings::from_schema(schema)?;
    let parts = plan_parts(&table, &messages, mode, options)?;
    let mut outcome = CommitOutcome::default();
    if parts.is_empty() {
        return Ok(outcome);
    }
    let mut committer = Committer {
        io,
        writer: MetaWriter::new(
            NameSource::new(options.seed),
            table.codec,
            table.merge.target_size_bytes,
            table.partition_types.clone(),
        ),
        table: &table,
        options,
        cache: ManifestCache::default(),
    };
    // Which parts are already published (Java `filterCommitted`, refined per part); a
    // partition drop is never filtered (Java `dropPartitions` overwrites directly).
    let done = if matches!(mode, CommitMode::DropPartitions { .. }) {
        vec![false; parts.len()]
    } else {
        committer.committed_parts(&parts).await?
    };
    for (part, done) in parts.iter().zip(done) {
        if done {
            outcome.already_committed = true;
            continue;
        }
        let r = match committer.try_commit(part).await {
            Ok(r) => r,
            Err(e) if !outcome.snapshot_ids.is_empty() => {
                let kind = match part.kind {
                    CommitKind::Compact => "COMPACT",
                    _ => "second",
                };
                let cause = e.to_string().replace(
                    "nothing was published",
                    "the rest of the commit was published",
                );
                return Err(Error::PartlyPublished {
                    published: outcome.snapshot_ids.clone(),
                    detail: format!(
                        "the {kind} part of this commit failed after its first part was \
                         published: the written rows are committed, do not write them again \
                         (the failed part's files are unreferenced; compact the table to \
                         finish its work: until then batch reads of first-row and \
                         deletion-vector tables skip these rows, which are at level 0): {cause}"
                    ),
                });
            }
            Err(e) => return Err(e),
        };
        outcome.attempts += r.attempts;
        if r.ours {
            outcome.snapshot_ids.push(r.snapshot_id);
        } else {
            outcome.already_committed = true;
        }
    }
    Ok(outcome)
}

/// Table options the commit uses.
#[derive(Debug, Clone)]
struct TableSettings {
    schema_id: i64,
    partition_fields: Vec<DataField>,
    partition_types: Vec<DataType>,
    /// Trimmed primary key types for key-range checks and overwrite upgrade.
    key_types: Option<Vec<DataType>>,
    bucket: i32,
    bucket_unaware: bool,
    /// `deletion-vectors.enabled`.
    deletion_vectors: bool,
    row_tracking: bool,
    partition_group_on_commit: bool,
    data_evolution: bool,
    codec: ManifestCodec,
    merge: MergeSettings,
    max_retries: u32,
    default_partition_name: String,
    overwrite_upgrade: bool,
    max_level: i32,
    /// `partition.expiration-time` and friends, when set and valid (conflict messages only).
    partition_expire: Option<PartitionExpireConfig>,
}

fn option_bool(schema: &TableSchema, key: &str, default: bool) -> Result<bool> {
    match schema.options.get(key) {
        None => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(Error::invalid(format!(
            "invalid value '{v}' for option '{key}': expected true or false"
        ))),
    }
}

fn option_int<N: std::str::FromStr>(schema: &TableSchema, key: &str, default: N) -> Result<N> {
    match schema.options.get(key) {
        None => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| {
            Error::invalid(format!(
                "invalid value '{v}' for option '{key}': expected a non-negative integer"
            ))
        }),
    }
}

fn option_memory(schema: &TableSchema, key: &str, default: i64) -> Result<i64> {
    match schema.options.get(key) {
        None => Ok(default),
        Some(v) => parse_memory_size(v)
            .map_err(|e| Error::invalid(format!("invalid value '{v}' for option '{key}': {e}"))),
    }
}

impl TableSettings {
    fn from_schema(schema: &TableSchema) -> Result<Self> {
        let options = schema.core_options();
        let partition_fields: Vec<DataField> =
            schema.partition_fields()?.into_iter().cloned().collect();
        let partition_types = partition_fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        let pk_clustering_override = option_bool(schema, "pk-clustering-override", false)?;
        let key_types = if schema.is_primary_key_table() && !pk_clustering_override {
            Some(crate::scan::planner::key_types(schema)?)
        } else {
            None
        };
        let bucket = options.bucket()?;
        let num_levels: i32 = match schema.options.get("num-levels") {
            Some(_) => option_int(schema, "num-levels", 0)?,
            None => {
                option_int::<i32>(schema, "num-sorted-run.compaction-trigger", 5)?.saturating_add(1)
            }
        };
        Ok(TableSettings {
            schema_id: schema.id,
            partition_fields,
            partition_types,
            key_types,
            bucket,
            bucket_unaware: !schema.is_primary_key_table() && bucket == -1,
            deletion_vectors: options.deletion_vectors_enabled()?,
            row_tracking: options.row_tracking_enabled()?,
            partition_group_on_commit: option_bool(
                schema,
                "row-tracking.partition-group-on-commit",
                true,
            )?,
            data_evolution: options.data_evolution_enabled()?,
            codec: ManifestCodec::from_option(options.manifest_compression())?,
            merge: MergeSettings {
                target_size_bytes: option_memory(
                    schema,
                    "manifest.target-file-size",
                    DEFAULT_MANIFEST_TARGET_FILE_SIZE,
                )?,
                min_count: option_int(
                    schema,
                    "manifest.merge-min-count",
                    DEFAULT_MANIFEST_MERGE_MIN_COUNT,
                )?,
                full_compaction_threshold_bytes: option_memory(
                    schema,
                    "manifest.full-compaction-threshold-size",
                    DEFAULT_MANIFEST_FULL_COMPACTION_THRESHOLD,
                )?,
            },
            max_retries: option_int(schema, "commit.max-retries", DEFAULT_COMMIT_MAX_RETRIES)?,
            default_partition_name: options.partition_default_name().to_string(),
            overwrite_upgrade: option_bool(schema, "overwrite-upgrade", true)?,
            max_level: num_levels.saturating_sub(1),
            // A bad option fails the maintenance after the commit, not the commit.
            partition_expire: PartitionExpireConfig::from_options(&options).ok().flatten(),
        })
    }
}

/// The result of committing one part.
struct PartResult {
    snapshot_id: i64,
    /// Published by this run (false: found published by an earlier run).
    ours: bool,
    attempts: u32,
}

/// An attempt whose snapshot `Put` failed with an unknown outcome.
struct Uncertain {
    id: i64,
    uuid: String,
    files: Vec<String>,
}

/// A manifest merge of a lost attempt, for reuse by the next one (Java
/// `ManifestMergeResult`).
struct MergeReuse {
    before: Vec<ManifestFileMeta>,
    after: Vec<ManifestFileMeta>,
    /// Files among `after` written by the merge (deleted if not reused).
    new_files: Vec<String>,
}

enum Attempt {
    Published { id: i64 },
    Lost { reuse: Option<MergeReuse> },
    Uncertain(Uncertain, Error),
}

struct Committer<'a, T> {
    io: &'a Io<T>,
    writer: MetaWriter,
    table: &'a TableSettings,
    options: &'a CommitOptions,
    cache: ManifestCache,
}

/// Delete `paths` (one round), ignoring failures: cleanup is best effort.
async fn delete_quietly<T>(io: &Io<T>, paths: &[String]) {
    let _ = join_all(paths.iter().map(|p| io.delete(p))).await;
}

/// `Some` of the list of `current` with the first occurrence of the run `replaced` replaced
/// by `replacement` (Java `ListUtils.tryReplace`).
fn try_replace(
    current: &[ManifestFileMeta],
    replaced: &[ManifestFileMeta],
    replacement: &[ManifestFileMeta],
) -> Option<Vec<ManifestFileMeta>> {
    if replaced.is_empty() || replaced.len() > current.len() {
        return None;
    }
    let start = (0..=current.len() - replaced.len())
        .find(|&s| current[s..s + replaced.len()] == *replaced)?;
    let mut out = current[..start].to_vec();
    out.extend_from_slice(replacement);
    out.extend_from_slice(&current[start + replaced.len()..]);
    Some(out)
}

fn part_rank(kind: CommitKind) -> u8 {
    match kind {
        CommitKind::Compact => 1,
        _ => 0,
    }
}

impl<T> Committer<'_, T> {
    async fn latest_snapshot(&self) -> Result<Option<Snapshot>> {
        match latest_snapshot_id(self.io).await? {
            Some(id) => read_snapshot(self.io, id).await.map(Some),
            None => Ok(None),
        }
    }

    /// Which parts are already published. Java `filterCommitted`: when the commit user's
    /// latest snapshot has a larger identifier, everything; the same identifier, the parts up
    /// to that snapshot's kind (the write part, or both when it is the `COMPACT` snapshot,
    /// always the last part); a smaller one, nothing.
    async fn committed_parts(&self, parts: &[Part]) -> Result<Vec<bool>> {
        let none = vec![false; parts.len()];
        let Some(latest) = latest_snapshot_id(self.io).await? else {
            return Ok(none);
        };
        let lower = self
            .options
            .check_from_snapshot
            .map_or(1, |id| id.saturating_add(1));
        let Some(found) = self.latest_snapshot_of_user(latest, lower).await? else {
            return Ok(none);
        };
        let ours = self.options.commit_identifier;
        Ok(parts
            .iter()
            .map(|p| match found.commit_identifier.cmp(&ours) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Equal => part_rank(p.kind) <= part_rank(found.commit_kind),
            })
            .collect())
    }

    /// The latest snapshot in `lower..=latest` committed by the commit user, searching down
    /// from `latest` and stopping at the first missing (expired) snapshot.
    async fn latest_snapshot_of_user(&self, latest: i64, lower: i64) -> Result<Option<Snapshot>> {
        let mut hi = latest;
        while hi >= lower.max(1) {
            let lo = lower.max(1).max(hi - USER_SEARCH_BATCH + 1);
            let read = join_all((lo..=hi).rev().map(|id| try_read_snapshot(self.io, id))).await;
            for s in read {
                match s? {
                    None => return Ok(None),
                    Some(s) if s.commit_user == self.options.commit_user => return Ok(Some(s)),
                    Some(_) => {}
                }
            }
            hi = lo - 1;
        }
        Ok(None)
    }

    /// Snapshots `from..=to` (one round), skipping missing ones.
    async fn snapshots_between(&self, from: i64, to: i64) -> Result<Vec<Snapshot>> {
        let read = join_all((from.max(1)..=to).map(|id| try_read_snapshot(self.io, id))).await;
        let mut out = Vec::new();
        for s in read {
            if let Some(s) = s? {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// Java `tryCommit`: attempts until published, found published, or out of retries.
    async fn try_commit(&mut self, part: &Part) -> Result<PartResult> {
        let mut attempts: u32 = 0;
        // Base snapshot id of the previous failed attempt (`Some(None)`: it had no base).
        let mut previous_base: Option<Option<i64>> = None;
        let mut reuse: Option<MergeReuse> = None;
        let mut uncertain: Vec<Uncertain> = Vec::new();
        let mut last_error: Option<Error> = None;
        loop {
            let latest = match self.latest_snapshot().await {
                Ok(l) => l,
                Err(e) => {
                    self.drop_reuse(&mut reuse).await;
                    return Err(e);
                }
            };
            if let (Some(prev), Some(latest)) = (previous_base, &latest) {
                let from = prev.map_or(1, |p| p.saturating_add(1));
                let seen = match self.snapshots_between(from, latest.id - 1).await {
                    Ok(mut s) => {
                        s.push(latest.clone());
                        s
                    }
                    Err(e) => {
                        self.drop_reuse(&mut reuse).await;
                        return Err(e);
                    }
                };
                // Attempts with an unknown outcome whose id another snapshot took are void.
                let mut still = Vec::new();
                for u in uncertain.drain(..) {
                    match seen.iter().find(|s| s.id == u.id) {
                        Some(s) if s.uuid.as_deref() != Some(u.uuid.as_str()) => {
                            delete_quietly(self.io, &u.files).await;
                        }
                        _ => still.push(u),
                    }
                }
                uncertain = still;
                if let Some(found) = seen.iter().find(|s| {
                    s.commit_user == self.options.commit_user
                        && s.commit_identifier == self.options.commit_identifier
                        && s.commit_kind == part.kind
                }) {
                    self.drop_reuse(&mut reuse).await;
                    let ours = uncertain
                        .iter()
                        .any(|u| Some(u.uuid.as_str()) == found.uuid.as_deref());
                    if ours {
                        self.write_latest_hint(found.id).await;
                    }
                    return Ok(PartResult {
                        snapshot_id: found.id,
                        ours,
                        attempts,
                    });
                }
            }
            if attempts > self.table.max_retries {
                self.drop_reuse(&mut reuse).await;
                let cause = last_error.map_or_else(
                    || "another committer published first every time".to_string(),
                    |e| e.to_string(),
                );
                return Err(Error::CommitContended {
                    detail: format!(
                        "commit of {} snapshot by user {} failed after {} retries ({cause}); \
                         there may be commit conflicts between several jobs",
                        part.kind, self.options.commit_user, self.table.max_retries
                    ),
                });
            }
            attempts += 1;
            let base_id = latest.as_ref().map(|s| s.id);
            match self.attempt(part, latest.as_ref(), reuse.take()).await? {
                Attempt::Published { id } => {
                    self.write_latest_hint(id).await;
                    return Ok(PartResult {
                        snapshot_id: id,
                        ours: true,
                        attempts,
                    });
                }
                Attempt::Lost { reuse: r } => {
                    reuse = r;
                    last_error = None;
                }
                Attempt::Uncertain(u, e) => {
                    uncertain.push(u);
                    last_error = Some(e);
                }
            }
            previous_base = Some(base_id);
        }
    }

    async fn drop_reuse(&self, reuse: &mut Option<MergeReuse>) {
        if let Some(r) = reuse.take() {
            delete_quietly(self.io, &r.new_files).await;
        }
    }

    /// `Put snapshot/LATEST` (overwrite); a failure is ignored (it is only a hint).
    async fn write_latest_hint(&self, id: i64) {
        let _ = self
            .io
            .put(
                LATEST_HINT,
                Bytes::from(encode_hint(id)),
                PutMode::Overwrite,
            )
            .await;
    }

    /// Live entries (merged; ADD entries, and DELETE entries that found no ADD) of the
    /// partitions selected by `filter` among `manifests`.
    async fn live_entries(
        &mut self,
        manifests: &[ManifestFileMeta],
        filter: &PartitionFilter,
    ) -> Result<Vec<ManifestEntry>> {
        let fields = &self.table.partition_fields;
        let selected: Vec<&ManifestFileMeta> = manifests
            .iter()
            .filter(|m| filter.may_match_manifest(m, fields))
            .collect();
        let read = self.cache.read(self.io, &selected).await?;
        let mut entries = Vec::new();
        for e in read.iter().flat_map(|v| v.iter()) {
            if filter.test(&e.partition, fields)? {
                entries.push(e.clone());
            }
        }
        merge_entries(entries)
    }

    /// Java `tryCommitOnce` from the conflict checks on. Errors after cleaning up.
    async fn attempt(
        &mut self,
        part: &Part,
        latest: Option<&Snapshot>,
        reuse: Option<MergeReuse>,
    ) -> Result<Attempt> {
        let mut reused_files: Vec<String> = Vec::new();
        let result = self
            .attempt_inner(part, latest, reuse, &mut reused_files)
            .await;
        match result {
            Ok(r) => Ok(r),
            Err(e) => {
                let mut files = self.writer.take_written();
                files.extend(reused_files);
                delete_quietly(self.io, &files).await;
                Err(e)
            }
        }
    }

    async fn attempt_inner(
        &mut self,
        part: &Part,
        latest: Option<&Snapshot>,
        reuse: Option<MergeReuse>,
        reused_files: &mut Vec<String>,
    ) -> Result<Attempt> {
        let table = self.table;
        let io = self.io;
        let new_id = latest.map_or(1, |s| s.id + 1);
        let first_row_id_start = latest.and_then(|s| s.next_row_id).unwrap_or(0);

        // The snapshot's manifests and the latest schema id.
        let (manifests, schema_id) = match latest {
            Some(s) => {
                let (lists, schema_id) = try_join(
                    try_join(
                        read_manifest_list(io, &s.base_manifest_list),
                        read_manifest_list(io, &s.delta_manifest_list),
                    ),
                    latest_schema_id(io),
                )
                .await?;
                let mut all = lists.0;
                all.extend(lists.1);
                (all, schema_id)
            }
            None => (Vec::new(), latest_schema_id(io).await?),
        };
        let schema_id = schema_id.unwrap_or(table.schema_id).max(table.schema_id);
        // Deletion-vector tables: a commit that deletes data files is checked against the
        // live vectors of those files.
        let needs_index = part.overwrite.is_some()
            || !part.index.is_empty()
            || (table.deletion_vectors
                && part.detect_conflicts
                && part.table_files.iter().any(|e| e.kind == FileKind::Delete));
        let old_index_entries = match latest {
            Some(s) if needs_index && s.index_manifest.is_some() => {
                crate::scan::planner::read_index_entries(io, s).await?
            }
            _ => Vec::new(),
        };

        // Changes, with the overwritten files.
        let mut delta: Vec<ManifestEntry> = Vec::new();
        let mut index: Vec<IndexManifestEntry> = Vec::new();
        if let (Some(filter), Some(_)) = (&part.overwrite, latest) {
            let fields = &table.partition_fields;
            let only_real_buckets = table.bucket != crate::spec::partition::POSTPONE_BUCKET;
            for e in self.live_entries(&manifests, filter).await? {
                if e.kind == FileKind::Add && !(only_real_buckets && e.bucket < 0) {
                    delta.push(ManifestEntry {
                        kind: FileKind::Delete,
                        ..e
                    });
                }
            }
            for e in &old_index_entries {
                if filter.test(&e.partition, fields)? {
                    index.push(IndexManifestEntry {
                        kind: FileKind::Delete,
                        ..e.clone()
                    });
                }
            }
        }
        delta.extend(part.table_files.iter().cloned());
        index.extend(part.index.iter().cloned());

        // Conflicts.
        if let (Some(latest), true) = (latest, part.detect_conflicts) {
            let changed = changed_partitions(&delta, &index);
            let filter = if table.partition_fields.is_empty() {
                PartitionFilter::All
            } else {
                PartitionFilter::Set(changed)
            };
            let base = if delta.is_empty() && index.is_empty() {
                Vec::new()
            } else {
                self.live_entries(&manifests, &filter).await?
            };
            let ctx = ConflictContext {
                partition_fields: &table.partition_fields,
                key_types: table.key_types.as_deref(),
                data_evolution: table.data_evolution,
                base_commit_user: &latest.commit_user,
                commit_user: &self.options.commit_user,
                partition_expire: table
                    .partition_expire
                    .as_ref()
                    .map(|c| (c, self.options.time_millis)),
            };
            check_conflicts(&ctx, &base, &delta, part.kind, latest.next_row_id)?;
            super::conflict::check_deletion_vector_changes(
                &old_index_entries,
                &index,
                &base,
                &delta,
                table.bucket_unaware,
                part.kind != CommitKind::Compact,
            )?;
        }

        // Base manifest list: the previous manifests, merged.
        let (previous_total, watermark) = match latest {
            Some(s) => (
                s.total_record_count,
                match (self.options.watermark, s.watermark) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                },
            ),
            None => (0, self.options.watermark),
        };
        let mut reused_after = None;
        let mut merge_new_files = Vec::new();
        if let Some(r) = reuse {
            let replaced = if r.before.is_empty() {
                manifests.is_empty().then(|| r.after.clone())
            } else {
                try_replace(&manifests, &r.before, &r.after)
            };
            match replaced {
                Some(after) => {
                    reused_files.extend(r.new_files.iter().cloned());
                    merge_new_files = r.new_files;
                    reused_after = Some(after);
                }
                // Not reusable (the base changed under it): nothing refers to its files.
                None => delete_quietly(io, &r.new_files).await,
            }
        }
        let merge_after = match reused_after {
            Some(after) => after,
            None => {
                let mark = self.writer.written_len();
                let after = merge_manifests(
                    io,
                    &mut self.writer,
                    &mut self.cache,
                    &manifests,
                    table.merge,
                    &table.partition_fields,
                    schema_id,
                )
                .await?;
                merge_new_files = self.writer.written_since(mark);
                after
            }
        };

        // Row tracking.
        let mut next_row_id = first_row_id_start;
        if table.row_tracking {
            if table.partition_group_on_commit {
                delta = group_by_partition_java_order(delta);
            }
            let (assigned, next) = assign_row_tracking(new_id, first_row_id_start, delta)?;
            delta = assigned;
            next_row_id = next;
        }

        let added: i64 = delta
            .iter()
            .filter(|e| e.kind == FileKind::Add)
            .map(|e| e.file.row_count)
            .sum();
        let deleted: i64 = delta
            .iter()
            .filter(|e| e.kind == FileKind::Delete)
            .map(|e| e.file.row_count)
            .sum();
        let delta_record_count = added - deleted;
        let total_record_count = previous_total + delta_record_count;

        // Delta and changelog manifests, then the lists and the index manifest.
        let written = self
            .writer
            .write_manifests(io, &[&delta, &part.changelog], schema_id)
            .await?;
        let (delta_manifests, changelog_manifests) = {
            let mut it = written.into_iter();
            (it.next().unwrap_or_default(), it.next().unwrap_or_default())
        };
        check_hash_index_changes(&old_index_entries, &index)?;
        let new_index = if index.is_empty() {
            None
        } else {
            Some(combine_index_entries(
                &old_index_entries,
                &index,
                table.bucket_unaware,
            )?)
        };
        let mut lists: Vec<&[ManifestFileMeta]> = vec![&merge_after, &delta_manifests];
        if !part.changelog.is_empty() {
            lists.push(&changelog_manifests);
        }
        let (names, index_name) = self
            .writer
            .write_lists(io, &lists, new_index.as_deref())
            .await?;
        let name_at = |i: usize| names.get(i).cloned();
        let (base_list, delta_list) = match (name_at(0), name_at(1)) {
            (Some(b), Some(d)) => (b, d),
            _ => {
                return Err(Error::invalid("internal: manifest lists were not written"));
            }
        };
        let changelog_list = if part.changelog.is_empty() {
            None
        } else {
            name_at(2)
        };
        let index_manifest = match index_name {
            Some(n) => Some(n),
            None => latest.and_then(|s| s.index_manifest.clone()),
        };

        let statistics = self.inherited_statistics(latest, schema_id).await?;
        let uuid = self.writer.next_uuid();
        let snapshot = Snapshot {
            version: CURRENT_SNAPSHOT_VERSION,
            uuid: Some(uuid.clone()),
            id: new_id,
            schema_id,
            base_manifest_list: base_list.0,
            base_manifest_list_size: Some(base_list.1),
            delta_manifest_list: delta_list.0,
            delta_manifest_list_size: Some(delta_list.1),
            changelog_manifest_list: changelog_list.as_ref().map(|l| l.0.clone()),
            changelog_manifest_list_size: changelog_list.as_ref().map(|l| l.1),
            index_manifest,
            commit_user: self.options.commit_user.clone(),
            writer_version: self.options.writer_version.clone(),
            commit_identifier: self.options.commit_identifier,
            commit_kind: part.kind,
            time_millis: self.options.time_millis,
            total_record_count,
            delta_record_count,
            changelog_record_count: (!part.changelog.is_empty())
                .then(|| part.changelog.iter().map(|e| e.file.row_count).sum()),
            watermark,
            statistics,
            properties: (!self.options.properties.is_empty())
                .then(|| self.options.properties.clone()),
            next_row_id: Some(next_row_id),
            operation: self.options.operation.clone(),
        };
        let bytes = Bytes::from(encode_snapshot(&snapshot)?);

        // Publish.
        let path = snapshot_path(new_id);
        match io.put(&path, bytes.clone(), PutMode::CreateNew).await {
            Ok(true) => {
                self.writer.take_written();
                Ok(Attempt::Published { id: new_id })
            }
            Ok(false) => {
                // Our own earlier Put answered late (a host retry)? Then it is published.
                if let Ok(Some(existing)) = io.read_opt(&path, None).await
                    && existing == bytes
                {
                    self.writer.take_written();
                    return Ok(Attempt::Published { id: new_id });
                }
                // Lost the race: drop what this attempt wrote, keep merged manifests for reuse.
                let files = self.writer.take_written();
                let keep: BTreeSet<&String> = merge_new_files.iter().collect();
                let to_delete: Vec<String> = files
                    .iter()
                    .chain(reused_files.iter())
                    .filter(|f| !keep.contains(f))
                    .cloned()
                    .collect();
                reused_files.clear();
                delete_quietly(io, &to_delete).await;
                Ok(Attempt::Lost {
                    reuse: Some(MergeReuse {
                        before: manifests,
                        after: merge_after,
                        new_files: merge_new_files,
                    }),
                })
            }
            Err(e) => {
                let mut files = self.writer.take_written();
                files.append(reused_files);
                Ok(Attempt::Uncertain(
                    Uncertain {
                        id: new_id,
                        uuid,
                        files,
                    },
                    e,
                ))
            }
        }
    }

    /// The previous snapshot's statistics file, when its schema is the current one (Java
    /// reads the statistics file for its `schemaId`). A missing or unreadable file is not
    /// inherited.
    async fn inherited_statistics(
        &self,
        latest: Option<&Snapshot>,
        schema_id: i64,
    ) -> Result<Option<String>> {
        let Some(name) = latest.and_then(|s| s.statistics.clone()) else {
            return Ok(None);
        };
        let path = format!("statistics/{name}");
        let Some(bytes) = self.io.read_opt(&path, None).await? else {
            return Ok(None);
        };
        let stats_schema = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("schemaId").and_then(serde_json::Value::as_i64));
        Ok((stats_schema == Some(schema_id)).then_some(name))
    }
}
