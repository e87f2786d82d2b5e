//! Data file metadata (`_FILE` record of manifest entries) and simple stats.
//!
//! Source: Java `org.apache.paimon.io.DataFileMeta`, `DataFileMetaSerializer`,
//! `org.apache.paimon.stats.SimpleStats`, `org.apache.paimon.manifest.FileSource`.
//! Layout: `spec/table-layout.md` §5.5-5.6.

use std::ops::RangeInclusive;

use apache_avro::types::Value;
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};

use crate::error::{Error, Result};
use crate::spec::avro::Rec;
use crate::spec::avro_write::{
    array, field, nested, nfield, opt, put_array, put_bytes, put_long, put_opt, put_strings,
    record, simple_stats_schema,
};
use crate::spec::binary_row::{BinaryRow, RowOrigin};

/// Where a data file came from.
///
/// Source: Java `org.apache.paimon.manifest.FileSource` (`_FILE_SOURCE`: 0 = APPEND,
/// 1 = COMPACT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FileSource {
    /// Written by a writer from new records.
    Append,
    /// Written by compaction.
    Compact,
}

impl FileSource {
    /// The stored byte value.
    pub fn to_byte(self) -> i32 {
        match self {
            FileSource::Append => 0,
            FileSource::Compact => 1,
        }
    }

    /// From the stored value; `None` if unknown.
    pub fn from_byte(v: i32) -> Option<Self> {
        match v {
            0 => Some(FileSource::Append),
            1 => Some(FileSource::Compact),
            _ => None,
        }
    }
}

/// Per-column null counts of [`SimpleStats`] (`_NULL_COUNTS`), `None` where a count is
/// unknown (a null element).
///
/// Packed 8 bytes a column (a plan holds one list per data file): an unknown count is stored
/// as `i64::MIN`, so a stored count of exactly `i64::MIN` (no writer can produce one: counts
/// are non-negative) reads as unknown, which only makes a filter keep the file. Serde form:
/// the list of counts and `null`s, as `Vec<Option<i64>>`.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct NullCounts(Box<[i64]>);

const UNKNOWN_NULL_COUNT: i64 = i64::MIN;

impl NullCounts {
    /// Number of columns.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if there are no columns (no stats, or a null `_NULL_COUNTS` array).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The count of column `i`: `None` if unknown or `i` is out of range.
    pub fn get(&self, i: usize) -> Option<i64> {
        self.0.get(i).copied().filter(|&c| c != UNKNOWN_NULL_COUNT)
    }

    /// The counts in column order, `None` where unknown.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<i64>> + '_ {
        self.0
            .iter()
            .map(|&c| (c != UNKNOWN_NULL_COUNT).then_some(c))
    }

    /// The counts as a list, `None` where unknown.
    pub fn to_vec(&self) -> Vec<Option<i64>> {
        self.iter().collect()
    }
}

impl FromIterator<Option<i64>> for NullCounts {
    fn from_iter<I: IntoIterator<Item = Option<i64>>>(iter: I) -> Self {
        NullCounts(
            iter.into_iter()
                .map(|c| c.unwrap_or(UNKNOWN_NULL_COUNT))
                .collect(),
        )
    }
}

impl From<Vec<Option<i64>>> for NullCounts {
    fn from(counts: Vec<Option<i64>>) -> Self {
        counts.into_iter().collect()
    }
}

impl PartialEq<Vec<Option<i64>>> for NullCounts {
    fn eq(&self, other: &Vec<Option<i64>>) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == *b)
    }
}

impl std::fmt::Debug for NullCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for NullCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for NullCounts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(Vec::<Option<i64>>::deserialize(d)?.into())
    }
}

/// Min/max values and null counts of a set of columns.
///
/// Source: Java `org.apache.paimon.stats.SimpleStats`. The columns are given by the context
/// (see `spec/table-layout.md` §5.6); all are nullable, a null min/max means unknown.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SimpleStats {
    /// `_MIN_VALUES`: per-column minimums.
    pub min_values: BinaryRow,
    /// `_MAX_VALUES`: per-column maximums.
    pub max_values: BinaryRow,
    /// `_NULL_COUNTS`: per-column null counts (a null element = unknown). A null array in
    /// the file reads as empty.
    pub null_counts: NullCounts,
}

impl SimpleStats {
    /// Empty stats: zero-arity rows and no null counts (Java `SimpleStats.EMPTY_STATS`).
    pub fn empty() -> Self {
        SimpleStats {
            min_values: BinaryRow::empty(),
            max_values: BinaryRow::empty(),
            null_counts: NullCounts::default(),
        }
    }

    pub(crate) fn decode(rec: &Rec<'_>, origin: &RowOrigin) -> Result<Self> {
        Ok(SimpleStats {
            min_values: BinaryRow::from_serialized_shared(
                rec.bytes("_MIN_VALUES")?,
                origin.clone(),
            )?,
            max_values: BinaryRow::from_serialized_shared(
                rec.bytes("_MAX_VALUES")?,
                origin.clone(),
            )?,
            null_counts: rec
                .opt_nullable_long_array("_NULL_COUNTS")?
                .unwrap_or_default(),
        })
    }

    /// This record in Avro's binary encoding ([`simple_stats_schema`]), as [`Self::to_avro`]
    /// encodes.
    pub(crate) fn put_avro(&self, out: &mut Vec<u8>) {
        put_bytes(out, self.min_values.serialized());
        put_bytes(out, self.max_values.serialized());
        put_opt(out, Some(&self.null_counts), |out, counts| {
            put_array(out, counts.iter(), |out, c| {
                put_opt(out, c, put_long);
            });
        });
    }

    pub(crate) fn to_avro(&self) -> Value {
        Value::Record(vec![
            (
                "_MIN_VALUES".into(),
                Value::Bytes(self.min_values.to_serialized()),
            ),
            (
                "_MAX_VALUES".into(),
                Value::Bytes(self.max_values.to_serialized()),
            ),
            (
                "_NULL_COUNTS".into(),
                opt(Some(&self.null_counts), |v| {
                    Value::Array(v.iter().map(|c| opt(c, Value::Long)).collect())
                }),
            ),
        ])
    }
}

/// Compression extensions that may follow the format extension of a data file name
/// (`data-….json.gz`, `data-….csv.zst`).
const COMPRESSION_EXTENSIONS: &[&str] = &[
    "gz", "gzip", "zst", "zstd", "lz4", "snappy", "bz2", "deflate", "lzo", "br", "xz", "zlib",
];

/// Metadata of one data file.
///
/// Source: Java `org.apache.paimon.io.DataFileMeta` (every field of the `_FILE` record, in
/// order; `spec/table-layout.md` §5.5).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataFileMeta {
    /// `_FILE_NAME`: file name, relative to the bucket directory.
    pub file_name: String,
    /// `_FILE_SIZE`: bytes.
    pub file_size: i64,
    /// `_ROW_COUNT`: rows, including retract rows of KV files.
    pub row_count: i64,
    /// `_MIN_KEY`: min key (KV files); the empty row for append files.
    pub min_key: BinaryRow,
    /// `_MAX_KEY`: max key (KV files); the empty row for append files.
    pub max_key: BinaryRow,
    /// `_KEY_STATS`: stats of the trimmed primary key fields.
    pub key_stats: SimpleStats,
    /// `_VALUE_STATS`: stats of the value columns (see [`DataFileMeta::value_stats_cols`]).
    pub value_stats: SimpleStats,
    /// `_MIN_SEQUENCE_NUMBER`.
    pub min_sequence_number: i64,
    /// `_MAX_SEQUENCE_NUMBER`.
    pub max_sequence_number: i64,
    /// `_SCHEMA_ID`: schema the file was written with.
    pub schema_id: i64,
    /// `_LEVEL`: LSM level (0 for append files).
    pub level: i32,
    /// `_EXTRA_FILES`: extra files in the directory of the data file.
    pub extra_files: Vec<String>,
    /// `_CREATION_TIME`: wall-clock local date-time as millis (no zone).
    pub creation_time_millis: Option<i64>,
    /// `_DELETE_ROW_COUNT`: retract rows (pypaimon writes 0 even when there are some).
    pub delete_row_count: Option<i64>,
    /// `_EMBEDDED_FILE_INDEX`: inlined data-file index bytes.
    pub embedded_index: Option<Vec<u8>>,
    /// `_FILE_SOURCE`.
    pub file_source: Option<FileSource>,
    /// `_VALUE_STATS_COLS`: columns of `value_stats`; `None` = all columns of the file,
    /// empty = no value stats.
    pub value_stats_cols: Option<Vec<String>>,
    /// `_EXTERNAL_PATH`: full path when written outside the table root.
    pub external_path: Option<String>,
    /// `_FIRST_ROW_ID`: row id of the first row (row tracking).
    pub first_row_id: Option<i64>,
    /// `_WRITE_COLS`: physically written columns, `None` = all.
    pub write_cols: Option<Vec<String>>,
    /// `_WRITE_COLS_SEQUENCES`: per-column max sequence numbers after data-evolution
    /// compaction.
    pub write_cols_sequences: Option<Vec<i64>>,
}

impl DataFileMeta {
    pub(crate) fn decode(rec: &Rec<'_>, origin: &RowOrigin) -> Result<Self> {
        let file_source = rec
            .opt_int("_FILE_SOURCE")?
            .map(|v| {
                FileSource::from_byte(v)
                    .ok_or_else(|| rec.corrupt(format!("unknown _FILE_SOURCE {v}")))
            })
            .transpose()?;
        Ok(DataFileMeta {
            file_name: rec.string("_FILE_NAME")?,
            file_size: rec.long("_FILE_SIZE")?,
            row_count: rec.long("_ROW_COUNT")?,
            min_key: BinaryRow::from_serialized_shared(rec.bytes("_MIN_KEY")?, origin.clone())?,
            max_key: BinaryRow::from_serialized_shared(rec.bytes("_MAX_KEY")?, origin.clone())?,
            key_stats: SimpleStats::decode(&rec.record("_KEY_STATS", "_KEY_STATS")?, origin)?,
            value_stats: SimpleStats::decode(&rec.record("_VALUE_STATS", "_VALUE_STATS")?, origin)?,
            min_sequence_number: rec.long("_MIN_SEQUENCE_NUMBER")?,
            max_sequence_number: rec.long("_MAX_SEQUENCE_NUMBER")?,
            schema_id: rec.long("_SCHEMA_ID")?,
            level: rec.int("_LEVEL")?,
            extra_files: rec.opt_string_array("_EXTRA_FILES")?.unwrap_or_default(),
            creation_time_millis: rec.opt_long("_CREATION_TIME")?,
            delete_row_count: rec.opt_long("_DELETE_ROW_COUNT")?,
            embedded_index: rec.opt_bytes("_EMBEDDED_FILE_INDEX")?,
            file_source,
            value_stats_cols: rec.opt_string_array("_VALUE_STATS_COLS")?,
            external_path: rec.opt_string("_EXTERNAL_PATH")?,
            first_row_id: rec.opt_long("_FIRST_ROW_ID")?,
            write_cols: rec.opt_string_array("_WRITE_COLS")?,
            write_cols_sequences: rec.opt_long_array("_WRITE_COLS_SEQUENCES")?,
        })
    }

    /// Avro schema of the `_FILE` record named `name` (Java `DataFileMeta.SCHEMA`).
    pub(crate) fn avro_schema(name: &str) -> Json {
        record(
            name,
            vec![
                field("_FILE_NAME", json!("string")),
                field("_FILE_SIZE", json!("long")),
                field("_ROW_COUNT", json!("long")),
                field("_MIN_KEY", json!("bytes")),
                field("_MAX_KEY", json!("bytes")),
                field(
                    "_KEY_STATS",
                    simple_stats_schema(&nested(name, "_KEY_STATS")),
                ),
                field(
                    "_VALUE_STATS",
                    simple_stats_schema(&nested(name, "_VALUE_STATS")),
                ),
                field("_MIN_SEQUENCE_NUMBER", json!("long")),
                field("_MAX_SEQUENCE_NUMBER", json!("long")),
                field("_SCHEMA_ID", json!("long")),
                field("_LEVEL", json!("int")),
                field("_EXTRA_FILES", array(json!("string"))),
                nfield(
                    "_CREATION_TIME",
                    json!({"type": "long", "logicalType": "timestamp-millis"}),
                ),
                nfield("_DELETE_ROW_COUNT", json!("long")),
                nfield("_EMBEDDED_FILE_INDEX", json!("bytes")),
                nfield("_FILE_SOURCE", json!("int")),
                nfield("_VALUE_STATS_COLS", array(json!("string"))),
                nfield("_EXTERNAL_PATH", json!("string")),
                nfield("_FIRST_ROW_ID", json!("long")),
                nfield("_WRITE_COLS", array(json!("string"))),
                nfield("_WRITE_COLS_SEQUENCES", array(json!("long"))),
            ],
        )
    }

    /// This record in Avro's binary encoding ([`Self::avro_schema`]), as the value of
    /// [`Self::to_avro`] encodes.
    pub(crate) fn put_avro(&self, out: &mut Vec<u8>) {
        put_bytes(out, self.file_name.as_bytes());
        put_long(out, self.file_size);
        put_long(out, self.row_count);
        put_bytes(out, self.min_key.serialized());
        put_bytes(out, self.max_key.serialized());
        self.key_stats.put_avro(out);
        self.value_stats.put_avro(out);
        put_long(out, self.min_sequence_number);
        put_long(out, self.max_sequence_number);
        put_long(out, self.schema_id);
        put_long(out, i64::from(self.level));
        put_strings(out, &self.extra_files);
        put_opt(out, self.creation_time_millis, put_long);
        put_opt(out, self.delete_row_count, put_long);
        put_opt(out, self.embedded_index.as_deref(), put_bytes);
        put_opt(out, self.file_source, |out, s| {
            put_long(out, i64::from(s.to_byte()))
        });
        put_opt(out, self.value_stats_cols.as_deref(), put_strings);
        put_opt(out, self.external_path.as_deref(), |out, p| {
            put_bytes(out, p.as_bytes())
        });
        put_opt(out, self.first_row_id, put_long);
        put_opt(out, self.write_cols.as_deref(), put_strings);
        put_opt(out, self.write_cols_sequences.as_deref(), |out, v| {
            put_array(out, v.iter(), |out, x| put_long(out, *x))
        });
    }

    #[cfg(test)]
    pub(crate) fn to_avro(&self) -> Value {
        Value::Record(vec![
            ("_FILE_NAME".into(), Value::String(self.file_name.clone())),
            ("_FILE_SIZE".into(), Value::Long(self.file_size)),
            ("_ROW_COUNT".into(), Value::Long(self.row_count)),
            (
                "_MIN_KEY".into(),
                Value::Bytes(self.min_key.to_serialized()),
            ),
            (
                "_MAX_KEY".into(),
                Value::Bytes(self.max_key.to_serialized()),
            ),
            ("_KEY_STATS".into(), self.key_stats.to_avro()),
            ("_VALUE_STATS".into(), self.value_stats.to_avro()),
            (
                "_MIN_SEQUENCE_NUMBER".into(),
                Value::Long(self.min_sequence_number),
            ),
            (
                "_MAX_SEQUENCE_NUMBER".into(),
                Value::Long(self.max_sequence_number),
            ),
            ("_SCHEMA_ID".into(), Value::Long(self.schema_id)),
            ("_LEVEL".into(), Value::Int(self.level)),
            (
                "_EXTRA_FILES".into(),
                crate::spec::avro_write::strings(&self.extra_files),
            ),
            (
                "_CREATION_TIME".into(),
                opt(self.creation_time_millis, Value::TimestampMillis),
            ),
            (
                "_DELETE_ROW_COUNT".into(),
                opt(self.delete_row_count, Value::Long),
            ),
            (
                "_EMBEDDED_FILE_INDEX".into(),
                opt(self.embedded_index.clone(), Value::Bytes),
            ),
            (
                "_FILE_SOURCE".into(),
                opt(self.file_source, |s| Value::Int(s.to_byte())),
            ),
            (
                "_VALUE_STATS_COLS".into(),
                opt(
                    self.value_stats_cols.as_deref(),
                    crate::spec::avro_write::strings,
                ),
            ),
            (
                "_EXTERNAL_PATH".into(),
                opt(self.external_path.clone(), Value::String),
            ),
            ("_FIRST_ROW_ID".into(), opt(self.first_row_id, Value::Long)),
            (
                "_WRITE_COLS".into(),
                opt(self.write_cols.as_deref(), crate::spec::avro_write::strings),
            ),
            (
                "_WRITE_COLS_SEQUENCES".into(),
                opt(self.write_cols_sequences.as_deref(), |v| {
                    Value::Array(v.iter().map(|x| Value::Long(*x)).collect())
                }),
            ),
        ])
    }

    /// Path of the data file: `external_path` if set, else `<bucket_path>/<file_name>`
    /// (`bucket_path` without a trailing `/`, see [`crate::spec::partition::bucket_path`]).
    pub fn path_in_bucket(&self, bucket_path: &str) -> String {
        match &self.external_path {
            Some(p) => p.clone(),
            None => join(bucket_path, &self.file_name),
        }
    }

    /// Paths of the extra files: they live in the directory of the data file path.
    pub fn extra_file_paths(&self, bucket_path: &str) -> Vec<String> {
        let path = self.path_in_bucket(bucket_path);
        let dir = path.rfind('/').map_or("", |i| &path[..i]);
        self.extra_files.iter().map(|f| join(dir, f)).collect()
    }

    /// File format from the name: the last extension, or the one before it when the last is
    /// a compression extension (`data-1.json.gz` → `json`); lowercase; `""` without a dot.
    /// Java `DataFileMeta#fileFormat` takes just the last token.
    pub fn file_format(&self) -> String {
        file_format_of(&self.file_name)
    }

    /// True for dedicated BLOB files (`.blob`, including `.managed.blob`).
    pub fn is_blob_file(&self) -> bool {
        super::file_names::is_blob_file(&self.file_name)
    }

    /// Inclusive row id range `first_row_id ..= first_row_id + row_count - 1`; `None` without
    /// a first row id (Java `DataFileMeta#nonNullRowIdRange`). Empty when `row_count` is 0.
    pub fn row_id_range(&self) -> Option<RangeInclusive<i64>> {
        let first = self.first_row_id?;
        Some(first..=first.saturating_add(self.row_count).saturating_sub(1))
    }

    /// Rows that are not retractions: `row_count - delete_row_count` (Java
    /// `addRowCount`); equals `row_count` when the delete count is unknown.
    pub fn add_row_count(&self) -> i64 {
        self.row_count
            .saturating_sub(self.delete_row_count.unwrap_or(0))
    }
}

/// Format of a data file from its name (see [`DataFileMeta::file_format`]).
pub fn file_format_of(file_name: &str) -> String {
    let mut parts = file_name.rsplit('.');
    let last = parts.next().unwrap_or("");
    if !file_name.contains('.') {
        return String::new();
    }
    let last_lower = last.to_ascii_lowercase();
    if COMPRESSION_EXTENSIONS.contains(&last_lower.as_str())
        && let Some(prev) = parts.next()
        && file_name.matches('.').count() >= 2
    {
        return prev.to_ascii_lowercase();
    }
    last_lower
}

pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Error helper: a manifest-family record that failed a consistency rule.
pub(crate) fn corrupt_manifest(path: &str, reason: impl Into<String>) -> Error {
    Error::corrupt(path, "avro-manifest", reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_counts_keep_unknowns_and_serialize_as_a_list() {
        let counts = NullCounts::from(vec![Some(0), None, Some(7), Some(i64::MAX)]);
        assert_eq!(counts.len(), 4);
        assert_eq!(counts.get(0), Some(0));
        assert_eq!(counts.get(1), None);
        assert_eq!(counts.get(3), Some(i64::MAX));
        assert_eq!(counts.get(4), None);
        assert_eq!(
            counts.to_vec(),
            vec![Some(0), None, Some(7), Some(i64::MAX)]
        );
        assert_eq!(
            format!("{counts:?}"),
            "[Some(0), None, Some(7), Some(9223372036854775807)]"
        );
        let json = serde_json::to_string(&counts).unwrap();
        assert_eq!(json, "[0,null,7,9223372036854775807]");
        assert_eq!(serde_json::from_str::<NullCounts>(&json).unwrap(), counts);
        assert!(NullCounts::default().is_empty());
        assert_ne!(counts, vec![Some(0), Some(0), Some(7), Some(i64::MAX)]);
    }

    /// What a plan holds per live data file: the entry inline (its rows, lists and strings
    /// point elsewhere).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn manifest_entry_stays_compact() {
        let size = std::mem::size_of::<crate::spec::ManifestEntry>();
        assert!(size <= 480, "ManifestEntry is {size} bytes");
    }
}
