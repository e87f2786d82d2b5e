//! Table options with Java's keys and defaults.
//!
//! Source: Java `org.apache.paimon.CoreOptions` (keys, defaults, fallback keys),
//! `org.apache.paimon.options.OptionsUtils` (value conversion) and
//! `org.apache.paimon.options.MemorySize` (size parsing).
//!
//! [`CoreOptions`] wraps the raw option map of a schema (plus any per-read overrides). Unknown
//! keys are kept and ignored, as Java does. Accessors of typed options return
//! [`Error::Invalid`] naming the key and the value when the value does not parse; absent keys
//! give Java's default. Conversions follow Java: booleans are `true`/`false` in any case,
//! integers are plain decimal (no surrounding whitespace), enums match case-insensitively.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{Error, Result};

/// `bucket`: default -1 (dynamic bucket for primary-key tables, unaware for append tables).
pub const BUCKET: &str = "bucket";
/// `bucket-key`: comma-separated bucket key columns.
pub const BUCKET_KEY: &str = "bucket-key";
/// `file.format`: data file format, default `parquet`.
pub const FILE_FORMAT: &str = "file.format";
/// `file.compression`: data file compression, default `zstd`.
pub const FILE_COMPRESSION: &str = "file.compression";
/// `manifest.compression`: manifest compression, default `zstd`.
pub const MANIFEST_COMPRESSION: &str = "manifest.compression";
/// `merge-engine`: see [`MergeEngine`].
pub const MERGE_ENGINE: &str = "merge-engine";
/// `sequence.field`: comma-separated user sequence fields.
pub const SEQUENCE_FIELD: &str = "sequence.field";
/// `ignore-delete`, default false.
pub const IGNORE_DELETE: &str = "ignore-delete";
/// Fallback keys of `ignore-delete`, checked in this order after the main key.
pub const IGNORE_DELETE_FALLBACK_KEYS: [&str; 3] = [
    "first-row.ignore-delete",
    "deduplicate.ignore-delete",
    "partial-update.ignore-delete",
];
/// `partial-update.remove-record-on-delete`, default false.
pub const PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE: &str = "partial-update.remove-record-on-delete";
/// `partial-update.remove-record-on-sequence-group`: comma-separated sequence fields.
pub const PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP: &str =
    "partial-update.remove-record-on-sequence-group";
/// `aggregation.remove-record-on-delete`, default false.
pub const AGGREGATION_REMOVE_RECORD_ON_DELETE: &str = "aggregation.remove-record-on-delete";
/// `fields.default-aggregate-function`.
pub const FIELDS_DEFAULT_AGG_FUNCTION: &str = "fields.default-aggregate-function";
/// `deletion-vectors.enabled`, default false.
pub const DELETION_VECTORS_ENABLED: &str = "deletion-vectors.enabled";
/// `deletion-vectors.merge-on-read`, default false.
pub const DELETION_VECTORS_MERGE_ON_READ: &str = "deletion-vectors.merge-on-read";
/// `deletion-vectors.bitmap64`, default false.
pub const DELETION_VECTORS_BITMAP64: &str = "deletion-vectors.bitmap64";
/// `index-file-in-data-file-dir`, default false: bucket index files (deletion vectors, hash
/// index) live in the bucket directory instead of `index/`.
pub const INDEX_FILE_IN_DATA_FILE_DIR: &str = "index-file-in-data-file-dir";
/// `changelog-producer`: see [`ChangelogProducer`].
pub const CHANGELOG_PRODUCER: &str = "changelog-producer";
/// `rowkind.field`: a column holding the row kind (`+I`, `-U`, `+U`, `-D`).
pub const ROWKIND_FIELD: &str = "rowkind.field";
/// `row-tracking.enabled`, default false.
pub const ROW_TRACKING_ENABLED: &str = "row-tracking.enabled";
/// `data-evolution.enabled`, default false.
pub const DATA_EVOLUTION_ENABLED: &str = "data-evolution.enabled";
/// `blob-field`: comma-separated BLOB columns.
pub const BLOB_FIELD: &str = "blob-field";
/// `blob-as-descriptor`, default false.
pub const BLOB_AS_DESCRIPTOR: &str = "blob-as-descriptor";
/// `source.split.target-size`, default 128 MiB.
pub const SOURCE_SPLIT_TARGET_SIZE: &str = "source.split.target-size";
/// `source.split.open-file-cost`, default 4 MiB.
pub const SOURCE_SPLIT_OPEN_FILE_COST: &str = "source.split.open-file-cost";
/// `scan.snapshot-id`.
pub const SCAN_SNAPSHOT_ID: &str = "scan.snapshot-id";
/// `scan.tag-name`.
pub const SCAN_TAG_NAME: &str = "scan.tag-name";
/// `scan.timestamp-millis` (fallback key `log.scan.timestamp-millis`).
pub const SCAN_TIMESTAMP_MILLIS: &str = "scan.timestamp-millis";
/// Fallback key of `scan.timestamp-millis`.
pub const SCAN_TIMESTAMP_MILLIS_FALLBACK: &str = "log.scan.timestamp-millis";
/// `scan.timestamp` (a timestamp string in the local time zone; not supported here).
pub const SCAN_TIMESTAMP: &str = "scan.timestamp";
/// `scan.watermark` (not supported here).
pub const SCAN_WATERMARK: &str = "scan.watermark";
/// `scan.version`: a tag name or a snapshot id.
pub const SCAN_VERSION: &str = "scan.version";
/// `partition.default-name`, default `__DEFAULT_PARTITION__`.
pub const PARTITION_DEFAULT_NAME: &str = "partition.default-name";
/// `partition.legacy-name`, default true.
pub const PARTITION_LEGACY_NAME: &str = "partition.legacy-name";
/// `data-file.path-directory`: optional sub directory of the table root for data files.
pub const DATA_FILE_PATH_DIRECTORY: &str = "data-file.path-directory";
/// `dynamic-bucket.target-row-num`, default 2 000 000.
pub const DYNAMIC_BUCKET_TARGET_ROW_NUM: &str = "dynamic-bucket.target-row-num";

/// How rows with the same primary key merge.
///
/// Source: Java `CoreOptions.MergeEngine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MergeEngine {
    /// `deduplicate` (default): the last row wins.
    Deduplicate,
    /// `partial-update`: the last non-null value per column wins.
    PartialUpdate,
    /// `aggregation`: columns are combined by aggregate functions.
    Aggregation,
    /// `first-row`: the first row wins.
    FirstRow,
}

impl MergeEngine {
    /// The option value (`deduplicate`, `partial-update`, `aggregation`, `first-row`).
    pub fn as_str(self) -> &'static str {
        match self {
            MergeEngine::Deduplicate => "deduplicate",
            MergeEngine::PartialUpdate => "partial-update",
            MergeEngine::Aggregation => "aggregation",
            MergeEngine::FirstRow => "first-row",
        }
    }
}

impl fmt::Display for MergeEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether and how changelog files are produced.
///
/// Source: Java `CoreOptions.ChangelogProducer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangelogProducer {
    /// `none` (default).
    None,
    /// `input`: the input records are written as changelog.
    Input,
    /// `full-compaction`.
    FullCompaction,
    /// `lookup`.
    Lookup,
}

impl ChangelogProducer {
    /// The option value.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangelogProducer::None => "none",
            ChangelogProducer::Input => "input",
            ChangelogProducer::FullCompaction => "full-compaction",
            ChangelogProducer::Lookup => "lookup",
        }
    }
}

impl fmt::Display for ChangelogProducer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One partial-update sequence group: `fields.<ordering fields>.sequence-group =
/// <protected fields>`.
///
/// Source: Java `PartialUpdateMergeFunction.sequenceGroupOrderingFields` /
/// `sequenceGroupProtectedFields`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceGroup {
    /// The option key.
    pub key: String,
    /// Fields that order the group (from the key, split at `,`, not trimmed, as Java).
    pub ordering_fields: Vec<String>,
    /// Fields the group protects (the value split at `,`, not trimmed, as Java).
    pub protected_fields: Vec<String>,
}

/// Table options over the raw string map.
///
/// Source: Java `org.apache.paimon.CoreOptions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoreOptions {
    map: BTreeMap<String, String>,
}

impl CoreOptions {
    /// Wrap a raw option map.
    pub fn new(map: BTreeMap<String, String>) -> Self {
        CoreOptions { map }
    }

    /// Build from `(key, value)` pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        CoreOptions {
            map: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The same options with `key` set to `value` (e.g. a per-read `scan.snapshot-id`).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.map.insert(key.into(), value.into());
        self
    }

    /// These options overlaid with `overrides` (dynamic options of a read win).
    pub fn with_overrides(mut self, overrides: &BTreeMap<String, String>) -> Self {
        for (k, v) in overrides {
            self.map.insert(k.clone(), v.clone());
        }
        self
    }

    /// The raw map.
    pub fn map(&self) -> &BTreeMap<String, String> {
        &self.map
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(String::as_str)
    }

    /// True if `key` is set.
    pub fn contains(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// The key and value of the first of `key`, then `fallbacks`, that is set.
    fn get_with_fallback<'a>(
        &'a self,
        key: &'a str,
        fallbacks: &[&'a str],
    ) -> Option<(&'a str, &'a str)> {
        std::iter::once(key)
            .chain(fallbacks.iter().copied())
            .find_map(|k| self.get(k).map(|v| (k, v)))
    }

    fn bool_of(&self, key: &str, fallbacks: &[&str], default: bool) -> Result<bool> {
        match self.get_with_fallback(key, fallbacks) {
            None => Ok(default),
            Some((k, v)) => parse_bool(k, v),
        }
    }

    fn i64_of(&self, key: &str, fallbacks: &[&str]) -> Result<Option<i64>> {
        match self.get_with_fallback(key, fallbacks) {
            None => Ok(None),
            Some((k, v)) => v
                .parse::<i64>()
                .map(Some)
                .map_err(|_| invalid(k, v, "a long")),
        }
    }

    fn memory_of(&self, key: &str, default_bytes: i64) -> Result<i64> {
        match self.get(key) {
            None => Ok(default_bytes),
            Some(v) => parse_memory_size(v).map_err(|e| invalid(key, v, &e)),
        }
    }

    /// `bucket` (default -1). `-1` dynamic/unaware, `-2` postpone, `> 0` fixed.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not an int.
    pub fn bucket(&self) -> Result<i32> {
        match self.get(BUCKET) {
            None => Ok(-1),
            Some(v) => v.parse::<i32>().map_err(|_| invalid(BUCKET, v, "an int")),
        }
    }

    /// `bucket-key` split at `,` (not trimmed, as Java); `None` when unset or blank.
    pub fn bucket_key(&self) -> Option<Vec<String>> {
        self.get(BUCKET_KEY)
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.split(',').map(str::to_string).collect())
    }

    /// `file.format`, lower-cased (Java `normalizeFileFormat`); default `parquet`.
    pub fn file_format(&self) -> String {
        self.get(FILE_FORMAT).unwrap_or("parquet").to_lowercase()
    }

    /// `file.compression`; default `zstd`.
    pub fn file_compression(&self) -> &str {
        self.get(FILE_COMPRESSION).unwrap_or("zstd")
    }

    /// `manifest.compression`; default `zstd`.
    pub fn manifest_compression(&self) -> &str {
        self.get(MANIFEST_COMPRESSION).unwrap_or("zstd")
    }

    /// `merge-engine`; default [`MergeEngine::Deduplicate`]. Case-insensitive.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the value and the accepted ones.
    pub fn merge_engine(&self) -> Result<MergeEngine> {
        let Some(v) = self.get(MERGE_ENGINE) else {
            return Ok(MergeEngine::Deduplicate);
        };
        [
            MergeEngine::Deduplicate,
            MergeEngine::PartialUpdate,
            MergeEngine::Aggregation,
            MergeEngine::FirstRow,
        ]
        .into_iter()
        .find(|e| e.as_str().eq_ignore_ascii_case(v))
        .ok_or_else(|| {
            invalid(
                MERGE_ENGINE,
                v,
                "one of deduplicate, partial-update, aggregation, first-row",
            )
        })
    }

    /// `sequence.field` split at `,` and trimmed; empty when unset.
    pub fn sequence_field(&self) -> Vec<String> {
        self.get(SEQUENCE_FIELD)
            .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default()
    }

    /// `ignore-delete` with its fallback keys `first-row.ignore-delete`,
    /// `deduplicate.ignore-delete`, `partial-update.ignore-delete`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if the value found is not a boolean.
    pub fn ignore_delete(&self) -> Result<bool> {
        self.bool_of(IGNORE_DELETE, &IGNORE_DELETE_FALLBACK_KEYS, false)
    }

    /// `partial-update.remove-record-on-delete`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn partial_update_remove_record_on_delete(&self) -> Result<bool> {
        self.bool_of(PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE, &[], false)
    }

    /// `partial-update.remove-record-on-sequence-group` split at `,`; empty when unset.
    pub fn partial_update_remove_record_on_sequence_group(&self) -> Vec<String> {
        self.get(PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP)
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// `aggregation.remove-record-on-delete`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn aggregation_remove_record_on_delete(&self) -> Result<bool> {
        self.bool_of(AGGREGATION_REMOVE_RECORD_ON_DELETE, &[], false)
    }

    /// The raw value of `fields.<field>.<suffix>` (e.g. `list-agg-delimiter`, `distinct`).
    pub fn field_option(&self, field: &str, suffix: &str) -> Option<&str> {
        self.get(&format!("fields.{field}.{suffix}"))
    }

    /// `fields.<field>.sequence-group` split at `,` (not trimmed): the fields protected by
    /// the sequence group ordered by `field`.
    pub fn field_sequence_group(&self, field: &str) -> Option<Vec<String>> {
        self.field_option(field, "sequence-group")
            .map(|v| v.split(',').map(str::to_string).collect())
    }

    /// Every sequence group, in key order: keys starting with `fields` and ending with
    /// `sequence-group`, as Java's `PartialUpdateMergeFunction` scans them.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a key that looks like a sequence group but is not of the form
    /// `fields.<fields>.sequence-group`.
    pub fn sequence_groups(&self) -> Result<Vec<SequenceGroup>> {
        let mut out = Vec::new();
        for (k, v) in &self.map {
            if !(k.starts_with("fields") && k.ends_with("sequence-group")) {
                continue;
            }
            let inner = k
                .strip_prefix("fields.")
                .and_then(|r| r.strip_suffix(".sequence-group"))
                .ok_or_else(|| Error::invalid(format!("invalid sequence-group option: {k}")))?;
            out.push(SequenceGroup {
                key: k.clone(),
                ordering_fields: inner.split(',').map(str::to_string).collect(),
                protected_fields: v.split(',').map(str::to_string).collect(),
            });
        }
        Ok(out)
    }

    /// `fields.<field>.aggregate-function` (e.g. `sum`, `last_non_null_value`).
    pub fn field_aggregate_function(&self, field: &str) -> Option<&str> {
        self.field_option(field, "aggregate-function")
    }

    /// `fields.default-aggregate-function`.
    pub fn fields_default_aggregate_function(&self) -> Option<&str> {
        self.get(FIELDS_DEFAULT_AGG_FUNCTION)
    }

    /// `fields.<field>.ignore-retract`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn field_ignore_retract(&self, field: &str) -> Result<bool> {
        self.bool_of(&format!("fields.{field}.ignore-retract"), &[], false)
    }

    /// `deletion-vectors.enabled`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn deletion_vectors_enabled(&self) -> Result<bool> {
        self.bool_of(DELETION_VECTORS_ENABLED, &[], false)
    }

    /// `index-file-in-data-file-dir`; default false. When true, an index file without an
    /// external path is `<bucket path>/<file name>` (Java `IndexInDataFileDirPathFactory`).
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn index_file_in_data_file_dir(&self) -> Result<bool> {
        self.bool_of(INDEX_FILE_IN_DATA_FILE_DIR, &[], false)
    }

    /// `deletion-vectors.merge-on-read`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn deletion_vectors_merge_on_read(&self) -> Result<bool> {
        self.bool_of(DELETION_VECTORS_MERGE_ON_READ, &[], false)
    }

    /// `deletion-vectors.bitmap64`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn deletion_vectors_bitmap64(&self) -> Result<bool> {
        self.bool_of(DELETION_VECTORS_BITMAP64, &[], false)
    }

    /// Whether a batch scan skips level-0 files (Java `CoreOptions.batchScanSkipLevel0`):
    /// with deletion vectors, unless `deletion-vectors.merge-on-read`; otherwise only for the
    /// `first-row` merge engine.
    ///
    /// # Errors
    /// [`Error::Invalid`] if one of the options involved has an invalid value.
    pub fn batch_scan_skip_level0(&self) -> Result<bool> {
        if self.deletion_vectors_enabled()? {
            return Ok(!self.deletion_vectors_merge_on_read()?);
        }
        Ok(self.merge_engine()? == MergeEngine::FirstRow)
    }

    /// `changelog-producer`; default [`ChangelogProducer::None`]. Case-insensitive.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the value.
    pub fn changelog_producer(&self) -> Result<ChangelogProducer> {
        let Some(v) = self.get(CHANGELOG_PRODUCER) else {
            return Ok(ChangelogProducer::None);
        };
        [
            ChangelogProducer::None,
            ChangelogProducer::Input,
            ChangelogProducer::FullCompaction,
            ChangelogProducer::Lookup,
        ]
        .into_iter()
        .find(|e| e.as_str().eq_ignore_ascii_case(v))
        .ok_or_else(|| {
            invalid(
                CHANGELOG_PRODUCER,
                v,
                "one of none, input, full-compaction, lookup",
            )
        })
    }

    /// `rowkind.field`.
    pub fn rowkind_field(&self) -> Option<&str> {
        self.get(ROWKIND_FIELD)
    }

    /// `row-tracking.enabled`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn row_tracking_enabled(&self) -> Result<bool> {
        self.bool_of(ROW_TRACKING_ENABLED, &[], false)
    }

    /// `data-evolution.enabled`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn data_evolution_enabled(&self) -> Result<bool> {
        self.bool_of(DATA_EVOLUTION_ENABLED, &[], false)
    }

    /// `blob-field` split at `,` and trimmed; empty when unset.
    pub fn blob_field(&self) -> Vec<String> {
        self.get(BLOB_FIELD)
            .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default()
    }

    /// `blob-as-descriptor`; default false.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn blob_as_descriptor(&self) -> Result<bool> {
        self.bool_of(BLOB_AS_DESCRIPTOR, &[], false)
    }

    /// `source.split.target-size` in bytes; default 128 MiB.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a memory size.
    pub fn split_target_size_bytes(&self) -> Result<i64> {
        self.memory_of(SOURCE_SPLIT_TARGET_SIZE, 128 << 20)
    }

    /// `source.split.open-file-cost` in bytes; default 4 MiB.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a memory size.
    pub fn split_open_file_cost_bytes(&self) -> Result<i64> {
        self.memory_of(SOURCE_SPLIT_OPEN_FILE_COST, 4 << 20)
    }

    /// `scan.snapshot-id`.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a long.
    pub fn scan_snapshot_id(&self) -> Result<Option<i64>> {
        self.i64_of(SCAN_SNAPSHOT_ID, &[])
    }

    /// `scan.tag-name`.
    pub fn scan_tag_name(&self) -> Option<&str> {
        self.get(SCAN_TAG_NAME)
    }

    /// `scan.timestamp-millis` (or its fallback `log.scan.timestamp-millis`), epoch millis.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a long.
    pub fn scan_timestamp_millis(&self) -> Result<Option<i64>> {
        self.i64_of(SCAN_TIMESTAMP_MILLIS, &[SCAN_TIMESTAMP_MILLIS_FALLBACK])
    }

    /// `partition.default-name`; default `__DEFAULT_PARTITION__`.
    pub fn partition_default_name(&self) -> &str {
        self.get(PARTITION_DEFAULT_NAME)
            .unwrap_or("__DEFAULT_PARTITION__")
    }

    /// `partition.legacy-name`; default true.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a boolean.
    pub fn partition_legacy_name(&self) -> Result<bool> {
        self.bool_of(PARTITION_LEGACY_NAME, &[], true)
    }

    /// `data-file.path-directory`.
    pub fn data_file_path_directory(&self) -> Option<&str> {
        self.get(DATA_FILE_PATH_DIRECTORY)
    }

    /// `data-file.path-directory` without trailing `/`, `""` when unset: the directory under
    /// the table root that holds the partition and bucket directories.
    pub fn data_root(&self) -> String {
        self.data_file_path_directory()
            .map(|d| d.trim_end_matches('/').to_string())
            .unwrap_or_default()
    }

    /// How partition values become directory names: `partition.default-name` and
    /// `partition.legacy-name`.
    ///
    /// # Errors
    /// [`Error::Invalid`] if `partition.legacy-name` is not a boolean.
    pub fn partition_naming(&self) -> Result<crate::spec::partition::PartitionNaming> {
        Ok(crate::spec::partition::PartitionNaming {
            default_name: self.partition_default_name().to_owned(),
            legacy_name: self.partition_legacy_name()?,
        })
    }

    /// `dynamic-bucket.target-row-num`; default 2 000 000.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a long.
    pub fn dynamic_bucket_target_row_num(&self) -> Result<i64> {
        Ok(self
            .i64_of(DYNAMIC_BUCKET_TARGET_ROW_NUM, &[])?
            .unwrap_or(2_000_000))
    }

    /// `postpone.default-bucket-num`: the bucket count of a partition of a postpone-bucket
    /// table that is compacted for the first time; default 1.
    ///
    /// Source: Java `CoreOptions.POSTPONE_DEFAULT_BUCKET_NUM`.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not an int greater than 0.
    pub fn postpone_default_bucket_num(&self) -> Result<i32> {
        const KEY: &str = "postpone.default-bucket-num";
        match self.get(KEY) {
            None => Ok(1),
            Some(v) => match v.trim().parse::<i32>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(invalid(KEY, v, "an int greater than 0")),
            },
        }
    }

    /// `postpone.target-row-num-per-bucket` (no default): with it, a partition compacted for
    /// the first time gets `ceil(rows / target)` buckets (at least 1).
    ///
    /// Source: Java `CoreOptions.POSTPONE_TARGET_ROW_NUM_PER_BUCKET`.
    ///
    /// # Errors
    /// [`Error::Invalid`] if not a long greater than 0.
    pub fn postpone_target_row_num_per_bucket(&self) -> Result<Option<i64>> {
        const KEY: &str = "postpone.target-row-num-per-bucket";
        match self.i64_of(KEY, &[])? {
            Some(n) if n <= 0 => Err(invalid(
                KEY,
                self.get(KEY).unwrap_or_default(),
                "a long greater than 0",
            )),
            other => Ok(other),
        }
    }
}

fn invalid(key: &str, value: &str, expected: &str) -> Error {
    Error::invalid(format!(
        "invalid value '{value}' for option '{key}': expected {expected}"
    ))
}

fn parse_bool(key: &str, value: &str) -> Result<bool> {
    if value.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if value.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(invalid(key, value, "true or false"))
    }
}

/// Parse a memory size the way Java's `MemorySize.parseBytes` does: digits, optional
/// whitespace, optional unit (case-insensitive) `b`/`bytes`, `k`/`kb`/`kibibytes`,
/// `m`/`mb`/`mebibytes`, `g`/`gb`/`gibibytes`, `t`/`tb`/`tebibytes` (powers of 1024); no unit
/// means bytes. Surrounding whitespace is ignored. Returns bytes.
///
/// # Errors
/// A message (without the key) for empty text, a missing number, an unknown unit or an
/// overflow of a signed 64-bit byte count.
pub fn parse_memory_size(text: &str) -> std::result::Result<i64, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("a memory size, got an empty string".into());
    }
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits_end);
    if number.is_empty() {
        return Err("a memory size starting with a number".into());
    }
    let value: i64 = number
        .parse()
        .map_err(|_| format!("a memory size, '{number}' overflows a 64-bit number"))?;
    let unit = unit.trim().to_lowercase();
    let multiplier: i64 = match unit.as_str() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kibibytes" => 1 << 10,
        "m" | "mb" | "mebibytes" => 1 << 20,
        "g" | "gb" | "gibibytes" => 1 << 30,
        "t" | "tb" | "tebibytes" => 1 << 40,
        other => {
            return Err(format!(
                "a memory size, unit '{other}' is not one of b, k, kb, m, mb, g, gb, t, tb, \
                 bytes, kibibytes, mebibytes, gibibytes, tebibytes"
            ));
        }
    };
    value
        .checked_mul(multiplier)
        .ok_or_else(|| format!("a memory size, '{text}' overflows a 64-bit byte count"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> CoreOptions {
        CoreOptions::from_pairs(pairs.iter().copied())
    }

    #[test]
    fn java_defaults() {
        let o = CoreOptions::default();
        assert_eq!(o.bucket().unwrap(), -1);
        assert_eq!(o.bucket_key(), None);
        assert_eq!(o.file_format(), "parquet");
        assert_eq!(o.file_compression(), "zstd");
        assert_eq!(o.manifest_compression(), "zstd");
        assert_eq!(o.merge_engine().unwrap(), MergeEngine::Deduplicate);
        assert!(o.sequence_field().is_empty());
        assert!(!o.ignore_delete().unwrap());
        assert!(!o.partial_update_remove_record_on_delete().unwrap());
        assert!(!o.deletion_vectors_enabled().unwrap());
        assert!(!o.deletion_vectors_merge_on_read().unwrap());
        assert!(!o.deletion_vectors_bitmap64().unwrap());
        assert_eq!(o.changelog_producer().unwrap(), ChangelogProducer::None);
        assert!(!o.row_tracking_enabled().unwrap());
        assert!(!o.data_evolution_enabled().unwrap());
        assert!(o.blob_field().is_empty());
        assert!(!o.blob_as_descriptor().unwrap());
        assert_eq!(o.split_target_size_bytes().unwrap(), 134_217_728);
        assert_eq!(o.split_open_file_cost_bytes().unwrap(), 4_194_304);
        assert_eq!(o.scan_snapshot_id().unwrap(), None);
        assert_eq!(o.scan_timestamp_millis().unwrap(), None);
        assert_eq!(o.partition_default_name(), "__DEFAULT_PARTITION__");
        assert!(o.partition_legacy_name().unwrap());
        assert_eq!(o.data_file_path_directory(), None);
        assert_eq!(o.dynamic_bucket_target_row_num().unwrap(), 2_000_000);
        assert!(!o.batch_scan_skip_level0().unwrap());
    }

    #[test]
    fn typed_values() {
        let o = opts(&[
            ("bucket", "3"),
            ("bucket-key", "a,b"),
            ("file.format", "ORC"),
            ("merge-engine", "Partial-Update"),
            ("sequence.field", "s1, s2"),
            ("deduplicate.ignore-delete", "TRUE"),
            ("fields.a,b.sequence-group", "c,d"),
            ("fields.x.aggregate-function", "sum"),
            ("fields.x.ignore-retract", "true"),
            ("fields.default-aggregate-function", "last_value"),
            ("changelog-producer", "input"),
            ("blob-field", "img, doc"),
            ("source.split.target-size", "64 mb"),
            ("source.split.open-file-cost", "4096"),
            ("log.scan.timestamp-millis", "1700000000000"),
            ("some.unknown.key", "whatever"),
        ]);
        assert_eq!(o.bucket().unwrap(), 3);
        assert_eq!(o.bucket_key(), Some(vec!["a".into(), "b".into()]));
        assert_eq!(o.file_format(), "orc");
        assert_eq!(o.merge_engine().unwrap(), MergeEngine::PartialUpdate);
        assert_eq!(o.sequence_field(), vec!["s1", "s2"]);
        assert!(o.ignore_delete().unwrap());
        assert_eq!(
            o.sequence_groups().unwrap(),
            vec![SequenceGroup {
                key: "fields.a,b.sequence-group".into(),
                ordering_fields: vec!["a".into(), "b".into()],
                protected_fields: vec!["c".into(), "d".into()],
            }]
        );
        assert_eq!(
            o.field_sequence_group("a,b"),
            Some(vec!["c".into(), "d".into()])
        );
        assert_eq!(o.field_aggregate_function("x"), Some("sum"));
        assert!(o.field_ignore_retract("x").unwrap());
        assert!(!o.field_ignore_retract("y").unwrap());
        assert_eq!(o.fields_default_aggregate_function(), Some("last_value"));
        assert_eq!(o.changelog_producer().unwrap(), ChangelogProducer::Input);
        assert_eq!(o.blob_field(), vec!["img", "doc"]);
        assert_eq!(o.split_target_size_bytes().unwrap(), 64 << 20);
        assert_eq!(o.split_open_file_cost_bytes().unwrap(), 4096);
        assert_eq!(o.scan_timestamp_millis().unwrap(), Some(1_700_000_000_000));
        assert_eq!(o.get("some.unknown.key"), Some("whatever"));
        // The main key wins over the fallback keys.
        let o = opts(&[
            ("ignore-delete", "false"),
            ("first-row.ignore-delete", "true"),
        ]);
        assert!(!o.ignore_delete().unwrap());
    }

    #[test]
    fn batch_scan_skip_level0_follows_java() {
        let cases: &[(&[(&str, &str)], bool)] = &[
            (&[], false),
            (&[("merge-engine", "first-row")], true),
            (&[("deletion-vectors.enabled", "true")], true),
            (
                &[
                    ("deletion-vectors.enabled", "true"),
                    ("deletion-vectors.merge-on-read", "true"),
                ],
                false,
            ),
            (
                &[
                    ("deletion-vectors.enabled", "true"),
                    ("deletion-vectors.merge-on-read", "true"),
                    ("merge-engine", "first-row"),
                ],
                false,
            ),
            (&[("deletion-vectors.merge-on-read", "true")], false),
        ];
        for (pairs, want) in cases {
            assert_eq!(
                opts(pairs).batch_scan_skip_level0().unwrap(),
                *want,
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn invalid_values_name_key_and_value() {
        type Check = Box<dyn Fn(&CoreOptions) -> Result<()>>;
        let checks: Vec<(CoreOptions, Check, &str, &str)> = vec![
            (
                opts(&[("bucket", "two")]),
                Box::new(|o| o.bucket().map(drop)),
                "bucket",
                "two",
            ),
            (
                opts(&[("bucket", " 2")]),
                Box::new(|o| o.bucket().map(drop)),
                "bucket",
                " 2",
            ),
            (
                opts(&[("merge-engine", "dedup")]),
                Box::new(|o| o.merge_engine().map(drop)),
                "merge-engine",
                "dedup",
            ),
            (
                opts(&[("changelog-producer", "x")]),
                Box::new(|o| o.changelog_producer().map(drop)),
                "changelog-producer",
                "x",
            ),
            (
                opts(&[("partial-update.ignore-delete", "yes")]),
                Box::new(|o| o.ignore_delete().map(drop)),
                "partial-update.ignore-delete",
                "yes",
            ),
            (
                opts(&[("deletion-vectors.enabled", "1")]),
                Box::new(|o| o.batch_scan_skip_level0().map(drop)),
                "deletion-vectors.enabled",
                "1",
            ),
            (
                opts(&[("source.split.target-size", "12 parsecs")]),
                Box::new(|o| o.split_target_size_bytes().map(drop)),
                "source.split.target-size",
                "12 parsecs",
            ),
            (
                opts(&[("scan.snapshot-id", "latest")]),
                Box::new(|o| o.scan_snapshot_id().map(drop)),
                "scan.snapshot-id",
                "latest",
            ),
        ];
        for (o, f, key, value) in checks {
            let err = f(&o).unwrap_err();
            let msg = err.to_string();
            assert!(matches!(err, Error::Invalid(_)), "{msg}");
            assert!(msg.contains(key) && msg.contains(value), "{msg}");
        }
        assert!(
            opts(&[
                ("fields.a.sequence-groupx", "b"),
                ("fieldsX.sequence-group", "c")
            ])
            .sequence_groups()
            .is_err()
        );
    }

    #[test]
    fn memory_sizes_like_java() {
        for (text, bytes) in [
            ("0", 0),
            ("1234", 1234),
            ("128 mb", 128 << 20),
            ("4mb", 4 << 20),
            ("  16 KB ", 16 << 10),
            ("1g", 1 << 30),
            ("2 tebibytes", 2 << 40),
            ("7 bytes", 7),
            ("9223372036854775807", i64::MAX),
        ] {
            assert_eq!(parse_memory_size(text), Ok(bytes), "{text}");
        }
        for bad in [
            "",
            "  ",
            "mb",
            "-1",
            "1.5mb",
            "10 xb",
            "9223372036854775808",
            "8388608 tb",
        ] {
            assert!(parse_memory_size(bad).is_err(), "{bad}");
        }
    }
}
