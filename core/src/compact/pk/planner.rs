//! Planning the compaction of a primary-key table: the live files of a snapshot, grouped by
//! (partition, bucket) into [`Levels`], and one [`PkCompactTask`] per bucket that has
//! something to compact.
//!
//! Source: Java `MergeTreeCompactManagerFactory` (strategy and options),
//! `MergeTreeCompactManager#triggerCompaction` (normal and full compaction of one bucket,
//! the drop-delete rule) and the batch compact action (one trigger per bucket).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::incremental::{self, Selection};
use super::levels::{Levels, decode_key};
use super::strategy::{
    CompactStrategy, CompactUnit, EarlyFullCompaction, UniversalCompaction, pick_full_compaction,
};
use crate::commit::changes::PartitionFilter;
use crate::compact::plan::{CompactionPlan, CompactionUnitSummary, partition_json};
use crate::error::{Error, Result};
use crate::read::expire::RecordLevelExpire;
use crate::scan::planner::{DeletionFile, INDEX_DIR};
use crate::spec::index_manifest::DELETION_VECTORS_INDEX;
use crate::spec::options::{ChangelogProducer, parse_memory_size};
use crate::spec::partition::{bucket_path, partition_path};
use crate::spec::{
    BinaryRow, CoreOptions, DataField, DataFileMeta, DataType, FileKind, IndexFileMeta,
    IndexManifestEntry, ManifestEntry, MergeEngine, TableSchema,
};

/// The options of primary-key compaction, parsed once per table.
///
/// Source: Java `CoreOptions` (defaults) and `MergeTreeCompactManagerFactory`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PkCompactOptions {
    /// `num-levels` (default `num-sorted-run.compaction-trigger + 1`).
    pub num_levels: i32,
    /// How normal compaction picks.
    pub strategy: CompactStrategy,
    /// `target-file-size × compaction.small-file-ratio`: smaller files are rewritten rather
    /// than upgraded (bytes).
    pub compaction_file_size: i64,
    /// `target-file-size` (bytes; primary-key default 128 MB): outputs roll at this size.
    pub target_file_size: i64,
    /// `compaction.force-rewrite-all-files`.
    pub force_rewrite_all_files: bool,
    /// Lookup tables (`first-row`, `changelog-producer = lookup`, deletion vectors,
    /// `force-lookup`): level 0 is always compacted up.
    pub need_lookup: bool,
    /// `merge-engine = first-row`: a level-0 record whose key lives in a level above the
    /// output is dropped, and level-0 files are never upgraded below the max level.
    pub first_row: bool,
}

fn int_option(options: &CoreOptions, key: &str, default: i64) -> Result<i64> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map_err(|_| Error::invalid(format!("option '{key}' = '{v}' is not an integer"))),
    }
}

fn bool_option(options: &CoreOptions, key: &str) -> Result<bool> {
    match options.get(key).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(false),
        Some(v) if v == "true" => Ok(true),
        Some(v) if v == "false" => Ok(false),
        Some(v) => Err(Error::invalid(format!(
            "option '{key}' = '{v}' is not a boolean"
        ))),
    }
}

fn memory_option(options: &CoreOptions, key: &str) -> Result<Option<i64>> {
    options
        .get(key)
        .map(|v| {
            parse_memory_size(v).map_err(|e| Error::invalid(format!("option '{key}' = '{v}': {e}")))
        })
        .transpose()
}

/// A duration option (`100 ms`, `30 s`, `5 min`, `1 h`, `2 d`; a bare number is millis) in
/// millis.
fn duration_option(options: &CoreOptions, key: &str) -> Result<Option<i64>> {
    let Some(raw) = options.get(key) else {
        return Ok(None);
    };
    let bad = || Error::invalid(format!("option '{key}' = '{raw}' is not a duration"));
    let t = raw.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let factor: i64 = match unit.trim() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => return Err(bad()),
    };
    n.checked_mul(factor).map(Some).ok_or_else(bad)
}

impl PkCompactOptions {
    /// Parse the options of `options`; `now_millis` is the planning time (early full
    /// compaction, off-peak hours, the hour taken in UTC); `files` are the bucket's files
    /// (the last full compaction is estimated from the newest max-level file).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming a malformed option.
    pub fn try_new(options: &CoreOptions, now_millis: i64, files: &[DataFileMeta]) -> Result<Self> {
        let trigger = int_option(options, "num-sorted-run.compaction-trigger", 5)?;
        let trigger_runs = usize::try_from(trigger).map_err(|_| {
            Error::invalid(format!(
                "option 'num-sorted-run.compaction-trigger' = {trigger} must not be negative"
            ))
        })?;
        let num_levels = i32::try_from(int_option(options, "num-levels", trigger + 1)?)
            .map_err(|_| Error::invalid("option 'num-levels' is out of range"))?;
        let max_level = num_levels - 1;
        let last_full = files
            .iter()
            .filter(|f| f.level == max_level)
            .filter_map(|f| f.creation_time_millis)
            .max();
        let early = EarlyFullCompaction {
            interval_millis: duration_option(options, "compaction.optimization-interval")?,
            total_size_threshold: memory_option(options, "compaction.total-size-threshold")?,
            incremental_size_threshold: memory_option(
                options,
                "compaction.incremental-size-threshold",
            )?,
            last_full_compaction_millis: last_full,
            now_millis,
        };
        let early_full = (early.interval_millis.is_some()
            || early.total_size_threshold.is_some()
            || early.incremental_size_threshold.is_some())
        .then_some(early);
        let start = int_option(options, "compaction.offpeak.start.hour", -1)?;
        let end = int_option(options, "compaction.offpeak.end.hour", -1)?;
        let ratio = int_option(options, "compaction.offpeak-ratio", 0)?;
        let hour = now_millis.rem_euclid(86_400_000) / 3_600_000;
        let off_peak = if start == -1 || end == -1 || start == end {
            false
        } else if start < end {
            start <= hour && hour < end
        } else {
            hour < end || start <= hour
        };
        let universal = UniversalCompaction {
            max_size_amp: int_option(options, "compaction.max-size-amplification-percent", 200)?,
            size_ratio: int_option(options, "compaction.size-ratio", 1)?,
            num_run_compaction_trigger: trigger_runs,
            early_full,
            off_peak_ratio: if off_peak { ratio } else { 0 },
        };
        let engine = options.merge_engine()?;
        let first_row = engine == MergeEngine::FirstRow;
        let need_lookup = first_row
            || options.changelog_producer()? == ChangelogProducer::Lookup
            || options.deletion_vectors_enabled()?
            || bool_option(options, "force-lookup")?;
        let strategy = if need_lookup {
            let gentle = options
                .get("lookup-compact")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("gentle"));
            let max_interval = if gentle {
                let n = int_option(options, "lookup-compact.max-interval", trigger * 2)?;
                Some(i32::try_from(n).map_err(|_| {
                    Error::invalid("option 'lookup-compact.max-interval' is out of range")
                })?)
            } else {
                None
            };
            CompactStrategy::ForceUpLevel0 {
                universal,
                max_interval,
            }
        } else if bool_option(options, "compaction.force-up-level-0")? {
            CompactStrategy::ForceUpLevel0 {
                universal,
                max_interval: None,
            }
        } else {
            CompactStrategy::Universal(universal)
        };
        let target_file_size = memory_option(options, "target-file-size")?.unwrap_or(128 << 20);
        let ratio: f64 = match options.get("compaction.small-file-ratio") {
            None => 0.7,
            Some(v) => v.trim().parse().map_err(|_| {
                Error::invalid(format!(
                    "option 'compaction.small-file-ratio' = '{v}' is not a number"
                ))
            })?,
        };
        Ok(PkCompactOptions {
            num_levels,
            strategy,
            compaction_file_size: (target_file_size as f64 * ratio) as i64,
            target_file_size,
            force_rewrite_all_files: bool_option(options, "compaction.force-rewrite-all-files")?,
            need_lookup,
            first_row,
        })
    }
}

/// One bucket's compaction: a serde value, planned on a coordinator and executed anywhere
/// ([`super::task::compact_task_machine`]).
///
/// Source: Java `MergeTreeCompactTask` / `FileRewriteCompactTask` inputs (the unit, the
/// drop-delete flag, the max level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PkCompactTask {
    /// The partition.
    pub partition: BinaryRow,
    /// The bucket.
    pub bucket: i32,
    /// `_TOTAL_BUCKETS` of the bucket's files.
    pub total_buckets: Option<i32>,
    /// The bucket directory, relative to the table root (no trailing `/`).
    pub bucket_path: String,
    /// The files and output level.
    pub unit: CompactUnit,
    /// Drop retractions from the output (the output is the oldest data of the bucket).
    pub drop_delete: bool,
    /// The bucket's max level.
    pub max_level: i32,
    /// Lookup tables (first-row, `changelog-producer = lookup`, deletion vectors,
    /// `force-lookup`; not with `changelog-producer = full-compaction`): the bucket's files
    /// above the output level (not inputs), read as lookup-only runs: first-row drops keys
    /// they hold, other engines merge a key's lowest hit with its level-0 records and take
    /// it as the changelog's before image.
    pub lookup_files: Vec<DataFileMeta>,
    /// Files smaller than this are rewritten rather than upgraded (bytes).
    pub compaction_file_size: i64,
    /// Outputs roll at this size (bytes).
    pub target_file_size: i64,
    /// `compaction.force-rewrite-all-files`.
    pub force_rewrite_all_files: bool,
    /// Lookup tables other than `deduplicate` without `sequence.field`: a level-0 file is
    /// rewritten, not upgraded, below the max level (and when the level's format differs).
    pub rewrite_level0_upgrades: bool,
    /// Deletion-vector tables: the deletion vector of each file of the bucket that has one,
    /// by data file name. Inputs and lookup files are read with their vectors applied.
    #[serde(default)]
    pub deletion_files: BTreeMap<String, DeletionFile>,
    /// Deletion-vector tables: the bucket's live deletion-vector index files. When the task
    /// changes the bucket's vectors (a rewritten input had one, or a lookup hit marks a row
    /// of a file above the output level deleted), its commit replaces them with one new
    /// index file holding all the bucket's vectors.
    #[serde(default)]
    pub deleted_index_files: Vec<IndexFileMeta>,
    /// `deletion-vectors.enabled`: the task maintains the bucket's deletion vectors (Java's
    /// `BucketedDvMaintainer` in the lookup rewriter).
    #[serde(default)]
    pub deletion_vectors: bool,
    /// `record-level.expire-time`: the expiry at the planning time. The task reads its
    /// inputs (and, but in first-row tables, its lookup files) without expired rows.
    #[serde(default)]
    pub record_level_expire: Option<RecordLevelExpire>,
    /// Names of the unit's files whose statistics show expired rows
    /// ([`RecordLevelExpire::is_expire_file`] at the planning time): rewritten, never
    /// upgraded.
    #[serde(default)]
    pub expired_files: Vec<String>,
}

impl PkCompactTask {
    /// The plan summary of the task (`upgrade` false; see [`plan_summary`]).
    fn summary(&self, partition_fields: &[DataField]) -> Result<CompactionUnitSummary> {
        let mut files: Vec<String> = self
            .unit
            .files
            .iter()
            .map(|f| f.file_name.clone())
            .collect();
        files.sort();
        Ok(CompactionUnitSummary {
            partition: partition_json(&self.partition, partition_fields)?,
            bucket: self.bucket,
            output_level: Some(self.unit.output_level),
            upgrade: false,
            files,
        })
    }
}

/// A bucket's partition, `_TOTAL_BUCKETS` and live files.
type BucketFiles = (BinaryRow, i32, Vec<DataFileMeta>);

/// What to compact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PkCompactRequest {
    /// Full compaction (every run of a bucket to the max level).
    pub full: bool,
    /// Only partitions matching this spec (`key → value` text; empty: all).
    pub partition: BTreeMap<String, String>,
    /// Only this bucket.
    pub bucket: Option<i32>,
    /// Planning time in epoch millis (early full compaction, off-peak hours, record-level
    /// expiry).
    pub now_millis: i64,
    /// Schemas of the live files by id (record-level expiry reads a file's statistics with
    /// the file's schema; the table's latest schema need not be here). Only needed with
    /// `record-level.expire-time` and files of older schemas.
    pub schemas: BTreeMap<i64, TableSchema>,
    /// The snapshot's index manifest entries (deletion-vector tables: where the deletion
    /// vectors of the data files are; ignored otherwise).
    pub index_entries: Vec<IndexManifestEntry>,
}

/// Plan the compaction of a primary-key table from the live files of a snapshot: per
/// (partition, bucket), [`Levels`] of its files, then a full compaction
/// ([`pick_full_compaction`]) or the table's strategy ([`CompactStrategy::pick`]); units
/// that are empty or a single file already at the output level are dropped (normal
/// compaction). `drop_delete = output level ≠ 0 && output level ≥ highest non-empty level`.
///
/// Deletion-vector tables (`deletion-vectors.enabled`) compact as lookup tables (level 0 is
/// always compacted up) and every output level drops retractions (their batch reads skip
/// level 0 and read the other levels without merging); a full compaction of a bucket that
/// is one max-level run rewrites the files that have vectors, one by one. The task reads
/// files with their vectors ([`PkCompactTask::deletion_files`], from
/// `request.index_entries`), marks the rows its outputs replace in files above the output
/// level, and replaces the bucket's index files ([`PkCompactTask::deleted_index_files`]).
///
/// Record-level expiry (`record-level.expire-time`; [`crate::read::expire`]): the task carries
/// the expiry at `request.now_millis` and filters expired rows out of what it reads; the
/// files whose statistics show expired rows are listed in [`PkCompactTask::expired_files`]
/// (rewritten, not upgraded), and a full compaction of a bucket that is one max-level run
/// rewrites them one by one (Java's `CompactStrategy#pickFullCompaction`). Normal
/// compaction picks as without expiry.
///
/// Tasks are in (partition bytes, bucket) order.
///
/// # Errors
/// [`Error::Unsupported`] for tables whose compaction is not implemented (see
/// [`check_supported`]); [`Error::Invalid`] for malformed options or a partition spec naming
/// a non-partition key.
pub fn plan_pk_compaction(
    schema: &TableSchema,
    entries: &[ManifestEntry],
    request: &PkCompactRequest,
) -> Result<Vec<PkCompactTask>> {
    check_supported(schema)?;
    let options = schema.core_options();
    let expire = RecordLevelExpire::try_from_schema(schema, request.now_millis)?;
    let trimmed = schema.trimmed_primary_keys()?;
    let key_types: Vec<DataType> = trimmed
        .iter()
        .map(|k| {
            schema
                .field(k)
                .map(|f| f.data_type.clone())
                .ok_or_else(|| Error::invalid(format!("primary key '{k}' is not a column")))
        })
        .collect::<Result<_>>()?;
    let partition_fields: Vec<DataField> = schema
        .partition_keys
        .iter()
        .map(|k| {
            schema
                .field(k)
                .cloned()
                .ok_or_else(|| Error::invalid(format!("partition key '{k}' is not a column")))
        })
        .collect::<Result<_>>()?;
    let naming = options.partition_naming()?;
    let filter = PartitionFilter::from_spec(
        &request.partition,
        &partition_fields,
        options.partition_default_name(),
    )?;
    let data_root = options
        .data_file_path_directory()
        .unwrap_or_default()
        .to_owned();
    let mut buckets: BTreeMap<(Vec<u8>, i32), BucketFiles> = BTreeMap::new();
    for e in entries {
        if request.bucket.is_some_and(|b| b != e.bucket) {
            continue;
        }
        if !filter.test(&e.partition, &partition_fields)? {
            continue;
        }
        buckets
            .entry((e.partition.to_serialized(), e.bucket))
            .or_insert_with(|| (e.partition.clone(), e.total_buckets, Vec::new()))
            .2
            .push(e.file.clone());
    }
    let engine = options.merge_engine()?;
    let producer = options.changelog_producer()?;
    let deletion_vectors = options.deletion_vectors_enabled()?;
    let dv_indexes = if deletion_vectors {
        let in_bucket_dir = options.index_file_in_data_file_dir()?;
        bucket_dv_indexes(&request.index_entries, |partition, bucket| {
            if !in_bucket_dir {
                return Ok(INDEX_DIR.to_owned());
            }
            let ppath = partition_path(&partition_fields, partition, &naming)?;
            Ok(bucket_path(&data_root, &ppath, bucket))
        })?
    } else {
        BTreeMap::new()
    };
    let selection = incremental::selection(schema)?;
    let mut tasks = Vec::new();
    for ((partition_bytes, bucket), (partition, total_buckets, files)) in buckets {
        let (deletion_files, deleted_index_files) = dv_indexes
            .get(&(partition_bytes, bucket))
            .cloned()
            .unwrap_or_default();
        let opts = PkCompactOptions::try_new(&options, request.now_millis, &files)?;
        let levels = Levels::try_new(files, opts.num_levels, &key_types)?;
        let runs = levels.level_sorted_runs();
        let num_levels = levels.number_of_levels();
        let mut expired = Vec::new();
        if let Some(x) = &expire {
            for f in levels.all_files() {
                if x.is_expire_file(&f, schema, &request.schemas)? {
                    expired.push(f.file_name);
                }
            }
        }
        let mut keep_retractions = false;
        let unit = if request.full {
            pick_full_compaction(num_levels, &runs, opts.force_rewrite_all_files, |f| {
                expired.contains(&f.file_name) || deletion_files.contains_key(&f.file_name)
            })
        } else {
            let java = opts.strategy.pick(num_levels, &runs);
            let unit = match &selection {
                Selection::Incremental(regrouping)
                    if incremental::plain_bucket_regroups(
                        regrouping,
                        &levels.all_files(),
                        schema,
                        &request.schemas,
                    )? =>
                {
                    incremental::pick(
                        regrouping,
                        opts.strategy.universal(),
                        num_levels,
                        &runs,
                        java,
                    )
                    .map(|p| {
                        keep_retractions = p.keep_retractions;
                        p.unit
                    })
                }
                _ => java,
            };
            unit.filter(|u| !u.files.is_empty())
                .filter(|u| u.files.len() > 1 || u.files[0].level != u.output_level)
        };
        let Some(unit) = unit else {
            continue;
        };
        expired.retain(|name| unit.files.iter().any(|f| &f.file_name == name));
        let drop_delete = !keep_retractions
            && unit.output_level != 0
            && (unit.output_level >= levels.non_empty_highest_level() || deletion_vectors);
        // Java's lookup rewriter (not with changelog-producer = full-compaction, whose
        // rewriter never looks up) sees the bucket's files above the output level.
        let lookup_files = if opts.need_lookup && producer != ChangelogProducer::FullCompaction {
            let inputs: Vec<&str> = unit.files.iter().map(|f| f.file_name.as_str()).collect();
            levels
                .all_files()
                .into_iter()
                .filter(|f| f.level > unit.output_level && !inputs.contains(&f.file_name.as_str()))
                .collect()
        } else {
            Vec::new()
        };
        let ppath = partition_path(&partition_fields, &partition, &naming)?;
        tasks.push(PkCompactTask {
            bucket_path: bucket_path(&data_root, &ppath, bucket),
            partition,
            bucket,
            total_buckets: Some(total_buckets),
            unit,
            drop_delete,
            max_level: levels.max_level(),
            lookup_files,
            compaction_file_size: opts.compaction_file_size,
            target_file_size: opts.target_file_size,
            force_rewrite_all_files: opts.force_rewrite_all_files,
            rewrite_level0_upgrades: opts.need_lookup
                && producer != ChangelogProducer::FullCompaction
                && !(engine == MergeEngine::Deduplicate && options.sequence_field().is_empty()),
            deletion_files,
            deleted_index_files,
            deletion_vectors,
            record_level_expire: expire.clone(),
            expired_files: expired,
        });
    }
    // Keys decode at planning time so that a task never meets an undecodable key later.
    for t in &tasks {
        for f in &t.unit.files {
            decode_key(&f.min_key, &key_types)?;
            decode_key(&f.max_key, &key_types)?;
        }
    }
    Ok(tasks)
}

/// Deletion vectors and deletion-vector index files of each (partition bytes, bucket).
type BucketDvIndexes =
    BTreeMap<(Vec<u8>, i32), (BTreeMap<String, DeletionFile>, Vec<IndexFileMeta>)>;

/// The live deletion-vector index files of `entries` per (partition bytes, bucket), with
/// the deletion file of each data file they cover; `index_dir` gives the directory of an
/// index file without external path.
fn bucket_dv_indexes(
    entries: &[IndexManifestEntry],
    index_dir: impl Fn(&BinaryRow, i32) -> Result<String>,
) -> Result<BucketDvIndexes> {
    let mut out: BucketDvIndexes = BTreeMap::new();
    for e in entries {
        if e.kind != FileKind::Add || e.index_file.index_type != DELETION_VECTORS_INDEX {
            continue;
        }
        let path = e.index_file.path_in(&index_dir(&e.partition, e.bucket)?);
        let (files, indexes) = out
            .entry((e.partition.to_serialized(), e.bucket))
            .or_default();
        for r in e.index_file.dv_ranges.iter().flatten() {
            files.insert(
                r.data_file_name.clone(),
                DeletionFile {
                    path: path.clone(),
                    offset: i64::from(r.offset),
                    length: i64::from(r.length),
                    cardinality: r.cardinality,
                    index_file_size: e.index_file.file_size,
                },
            );
        }
        indexes.push(e.index_file.clone());
    }
    Ok(out)
}

/// Refuse primary-key tables whose compaction is not implemented.
///
/// # Errors
/// [`Error::Unsupported`] naming the feature.
pub fn check_supported(schema: &TableSchema) -> Result<()> {
    if !schema.is_primary_key_table() {
        return Err(Error::unsupported(
            "append and data-evolution compaction is not wired yet (this is primary-key \
             compaction)",
        ));
    }
    let options = schema.core_options();
    if options.bucket()? == crate::spec::partition::POSTPONE_BUCKET {
        return Err(Error::unsupported(
            "planning postpone-bucket tables (bucket = -2) per bucket (their compaction is \
             planned by compact::pk::postpone)",
        ));
    }
    check_compaction_options(&options)
}

/// Refuse the options no primary-key compaction here implements: `data-file.external-paths`
/// together with `index-file-in-data-file-dir` (the vector index files would go to the
/// external paths too). Outputs of tables with external paths go there (see
/// [`crate::write::external`]).
///
/// # Errors
/// [`Error::Unsupported`] naming the option; [`Error::Invalid`] for a bad
/// `data-file.external-paths*` option.
pub(crate) fn check_compaction_options(options: &crate::spec::CoreOptions) -> Result<()> {
    if crate::write::external::ExternalPaths::from_options(options)?.is_some()
        && options.index_file_in_data_file_dir()?
    {
        return Err(Error::unsupported(
            "compacting tables with data-file.external-paths and \
             'index-file-in-data-file-dir' = true",
        ));
    }
    Ok(())
}

/// The plan summary of `tasks` (the `plan-compaction` JSON), sorted.
///
/// # Errors
/// [`Error::Corrupt`] when a partition does not decode.
pub fn plan_summary(
    schema: &TableSchema,
    snapshot: Option<i64>,
    tasks: &[PkCompactTask],
) -> Result<CompactionPlan> {
    let partition_fields: Vec<DataField> = schema
        .partition_keys
        .iter()
        .filter_map(|k| schema.field(k).cloned())
        .collect();
    let mut plan = CompactionPlan {
        snapshot,
        units: tasks
            .iter()
            .map(|t| {
                let mut s = t.summary(&partition_fields)?;
                s.upgrade = is_pure_upgrade(t);
                Ok(s)
            })
            .collect::<Result<_>>()?,
    };
    plan.sort();
    Ok(plan)
}

/// Whether `task` only moves one file to another level (nothing is rewritten or read),
/// judged from the metadata as the task would.
pub fn is_pure_upgrade(task: &PkCompactTask) -> bool {
    let [f] = task.unit.files.as_slice() else {
        return false;
    };
    !task.unit.file_rewrite
        && f.level != task.unit.output_level
        && !must_rewrite(task, f)
        && (!task.deletion_vectors || f.level != 0 || task.lookup_files.is_empty())
}

/// The upgrade rules of one file: rewritten alone instead of upgraded when the output is
/// the max level and the file may hold retractions, with `force_rewrite_all_files`, when
/// its statistics show rows that record-level expiry drops ([`PkCompactTask::expired_files`]),
/// when the file has a deletion vector (the rewrite folds it in), or (lookup tables other
/// than plain `deduplicate`) a level-0 file below the max level.
pub(crate) fn must_rewrite(task: &PkCompactTask, f: &DataFileMeta) -> bool {
    let out = task.unit.output_level;
    (out == task.max_level && f.delete_row_count.is_none_or(|d| d > 0))
        || task.force_rewrite_all_files
        || task.expired_files.contains(&f.file_name)
        || (task.rewrite_level0_upgrades && f.level == 0 && out != task.max_level)
        || (task.deletion_vectors && f.level == 0 && f.delete_row_count.is_none_or(|d| d > 0))
}
