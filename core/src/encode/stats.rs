//! Statistics of a data file (`_VALUE_STATS`, `_KEY_STATS`, `_VALUE_STATS_COLS`) as Java
//! Paimon 2.0 computes them when it writes the file.
//!
//! Source: Java `org.apache.paimon.statistics.SimpleColStatsCollector` and its `None`,
//! `Counts`, `Full` and `Truncate` collectors, `org.apache.paimon.utils.StatsCollectorFactories`
//! (which mode each column gets), `org.apache.paimon.stats.SimpleStatsConverter` (stats rows,
//! dense store), `org.apache.paimon.io.RollingFileWriter#createStatsProducer` /
//! `KeyValueFileWriterFactory` (collector or format extractor), `RowDataFileWriter`,
//! `KeyValueDataFileWriterImpl` / `KeyValueThinDataFileWriterImpl` (key and value stats of
//! primary-key files), `org.apache.paimon.format.parquet.ParquetSimpleStatsExtractor`,
//! `org.apache.paimon.format.orc.filter.OrcSimpleStatsExtractor` and
//! `org.apache.paimon.format.SimpleStatsCollector` (Avro).
//!
//! # Modes
//!
//! `metadata.stats-mode` (default `truncate(16)`), overridden per column by
//! `fields.<name>.stats-mode`: `none` (no stats: the column is left out of dense stats),
//! `counts` (null count only), `full` (null count, min, max), `truncate(N)` (as `full`, then
//! strings and binaries are cut to `N` characters/bytes: the min is the prefix, the max the
//! prefix with its last code point/byte incremented; if no code point/byte can be incremented
//! the min and max are both null). System columns (`_KEY_*`, `_SEQUENCE_NUMBER`,
//! `_VALUE_KIND`, `_LEVEL`, `rowkind`, `_ROW_ID`) get `truncate(128)` (except in Avro
//! primary-key files, which use the table mode for every column).
//! `metadata.stats-keep-first-n-columns` turns the stats of the columns after the first `N`
//! (system columns not counted) to `none`. Primary-key files use
//! `metadata.stats-mode.per.level` of their level and changelog files
//! `changelog-file.stats-mode` when set.
//!
//! `metadata.stats-dense-store` (default `true`): value stats list only the columns whose stats
//! are not `none`, and `_VALUE_STATS_COLS` names them (`None` when that is every column). With
//! `false`, every column is stored and `none` columns have null min, max and null count. Key
//! stats of primary-key files always cover every key column.
//!
//! # Where the values come from (per file format)
//!
//! Java does not collect min/max itself for Parquet and ORC files: it reads them from the
//! statistics the format writer kept, then applies the mode. So the values depend on the
//! format, and [`StatsFormat`] selects which rules apply:
//!
//! * **Parquet** (parquet-java 1.16, the writer's in-memory footer, row groups merged): min/max
//!   for `BOOLEAN`, integers, `DATE`, `TIME`, `FLOAT`, `DOUBLE`, `DECIMAL`, strings,
//!   `BINARY`/`VARBINARY`, `TIMESTAMP(_LTZ)` of precision ≤ 6; null min/max (null count kept)
//!   for `TIMESTAMP(_LTZ)` of precision 7-9 (stored as INT96) and `BLOB`; **no stats at all**
//!   (like `none`) for `ARRAY`, `MAP`, `MULTISET`, `ROW`, `VARIANT` and `VECTOR`, which have no
//!   column chunk of their own. Floats order as Java's `Float.compare`: `-0.0 < 0.0` and NaN
//!   above everything, so one NaN makes the max NaN.
//! * **ORC** (orc-core 1.9): min/max for `BOOLEAN`, integers, `DATE`, `TIME`, `DECIMAL`,
//!   strings and timestamps; null min/max (null count kept) for binaries and every nested
//!   type. `CHAR(n)` values are padded with spaces (and cut) to `n` characters and
//!   `VARCHAR(n)` values cut to `n` characters before they are compared, as ORC writes them. A
//!   string min or max longer than 1024 bytes is only known as a bound and comes out null.
//!   Floats follow ORC's `<`/`>` updates per row group of `orc.row.index.stride` rows
//!   (default 10000): a NaN sticks only when it is the first value of a row group, `-0.0` and
//!   `0.0` keep whichever came first.
//! * **Avro** (Java collects per row): min/max for every atomic type (timestamps at full
//!   precision); null min/max (null count kept) for `BLOB`, `VARIANT` and nested types. Floats
//!   as for Parquet.
//!
//! Timestamps are taken at the granularity of their type (millis for precision ≤ 3, micros
//! for ≤ 6), which is what Paimon stores.
//!
//! # Not modelled
//!
//! ORC string bounds and float row groups assume one stripe per file (a stripe boundary in the
//! middle of a row group splits that group in Java); ORC timestamps assume a JVM in UTC
//! (ORC's statistics go through the JVM's default time zone).
//!
//! # Cost
//!
//! [`StatsCollector::update`] runs Arrow aggregate kernels per batch (`min`/`max` of
//! primitive, boolean, string and binary arrays) and keeps one owned copy of the current string
//! min/max; floats and ORC strings are a single pass over the values.

use std::cmp::Ordering;

use arrow_arith::aggregate;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType as ArrowType, TimeUnit};

use crate::error::{Error, Result};
use crate::spec::binary_row::{BinaryRow, Datum};
use crate::spec::data_file::SimpleStats;
use crate::spec::options::CoreOptions;
use crate::spec::special_fields::{
    KEY_FIELD_PREFIX, SEQUENCE_NUMBER, SEQUENCE_NUMBER_FIELD_ID, SYSTEM_FIELD_ID_START, VALUE_KIND,
    VALUE_KIND_FIELD_ID, is_system_field,
};
use crate::spec::types::{DataField, DataType, TypeKind};
use crate::types::paimon_to_arrow_type;

mod column;
use column::*;

/// `metadata.stats-mode` (default `truncate(16)`).
pub const METADATA_STATS_MODE: &str = "metadata.stats-mode";
/// `metadata.stats-mode.per.level` (`level:mode,...`), for primary-key files.
pub const METADATA_STATS_MODE_PER_LEVEL: &str = "metadata.stats-mode.per.level";
/// `metadata.stats-dense-store` (default `true`).
pub const METADATA_STATS_DENSE_STORE: &str = "metadata.stats-dense-store";
/// `metadata.stats-keep-first-n-columns` (default `-1`: all).
pub const METADATA_STATS_KEEP_FIRST_N_COLUMNS: &str = "metadata.stats-keep-first-n-columns";
/// `changelog-file.stats-mode` (default: the data file mode).
pub const CHANGELOG_FILE_STATS_MODE: &str = "changelog-file.stats-mode";
/// `data-file.thin-mode` (default `false`): primary-key files without `_KEY_` columns.
pub const DATA_FILE_THIN_MODE: &str = "data-file.thin-mode";
const FILE_FORMAT_PER_LEVEL: &str = "file.format.per.level";
const CHANGELOG_FILE_FORMAT: &str = "changelog-file.format";
const ORC_ROW_INDEX_STRIDE: &str = "orc.row.index.stride";
const DEFAULT_STATS_MODE: &str = "truncate(16)";

/// Longest string min/max ORC records exactly (`StringStatisticsImpl.MAX_BYTES_RECORDED`).
const ORC_MAX_BYTES_RECORDED: usize = 1024;
/// Java `VarCharType.MAX_LENGTH`: `STRING`.
const VARCHAR_MAX_LENGTH: u32 = i32::MAX as u32;

/// The options Java's postpone-bucket writer (`bucket = -2`, files in `bucket-postpone`) writes
/// its files with: the table's, with `file.format = avro` and `metadata.stats-mode = none`
/// (Java `PostponeBucketFileStoreWrite`; Java keeps the table's format and mode when Avro
/// cannot hold the schema, which is not checked here). So such files have no value stats and
/// null key stats.
pub fn postpone_bucket_options(options: &CoreOptions) -> CoreOptions {
    options
        .clone()
        .with("file.format", "avro")
        .with(METADATA_STATS_MODE, "none")
}

/// How much of a column's statistics is kept.
///
/// Source: Java `SimpleColStatsCollector#from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsMode {
    /// `none`: nothing.
    None,
    /// `counts`: the null count.
    Counts,
    /// `truncate(N)`: null count, min and max, strings and binaries cut to `N`.
    Truncate(usize),
    /// `full`: null count, min and max.
    Full,
}

impl StatsMode {
    /// Parse a mode as Java does (case-insensitive, no spaces): `none`, `counts`, `full`,
    /// `truncate(N)` with `N > 0`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for anything else.
    pub fn parse(text: &str) -> Result<Self> {
        let upper = text.to_ascii_uppercase();
        match upper.as_str() {
            "NONE" => return Ok(StatsMode::None),
            "COUNTS" => return Ok(StatsMode::Counts),
            "FULL" => return Ok(StatsMode::Full),
            _ => {}
        }
        let n = upper
            .strip_prefix("TRUNCATE(")
            .and_then(|r| r.strip_suffix(')'))
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| Error::invalid(format!("unexpected stats mode '{text}'")))?;
        let n: i32 = n
            .parse()
            .map_err(|_| Error::invalid(format!("stats mode '{text}': length is not an int")))?;
        if n <= 0 {
            return Err(Error::invalid(format!(
                "stats mode '{text}': truncate length should be larger than zero"
            )));
        }
        Ok(StatsMode::Truncate(n as usize))
    }
}

/// Which Java rules produce the statistics: those of the data file's format (see the module
/// docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsFormat {
    /// Parquet: from parquet-java's column chunk statistics.
    Parquet,
    /// ORC: from orc-core's file statistics.
    Orc,
    /// Avro: Java's own per-row collector.
    Avro,
}

impl StatsFormat {
    /// From a `file.format` value (case-insensitive).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for formats other than `parquet`, `orc` and `avro`.
    pub fn from_name(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "parquet" => Ok(StatsFormat::Parquet),
            "orc" => Ok(StatsFormat::Orc),
            "avro" => Ok(StatsFormat::Avro),
            other => Err(Error::unsupported(format!(
                "statistics of '{other}' data files (parquet, orc and avro are supported)"
            ))),
        }
    }
}

/// Statistics of one column: min, max (null = unknown) and null count (`None` = unknown).
/// All three unknown means "no statistics" (Java `SimpleColStats.NONE`).
///
/// Source: Java `org.apache.paimon.format.SimpleColStats`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleColStats {
    /// Minimum, or [`Datum::Null`].
    pub min: Datum,
    /// Maximum, or [`Datum::Null`].
    pub max: Datum,
    /// Null count, or `None`.
    pub null_count: Option<i64>,
}

impl SimpleColStats {
    /// No statistics (`SimpleColStats.NONE`).
    pub fn none() -> Self {
        SimpleColStats {
            min: Datum::Null,
            max: Datum::Null,
            null_count: None,
        }
    }

    /// True for [`SimpleColStats::none`].
    pub fn is_none(&self) -> bool {
        self.min.is_null() && self.max.is_null() && self.null_count.is_none()
    }
}

// ---------------------------------------------------------------------------------------------
// Truncation (Java TruncateSimpleColStatsCollector)
// ---------------------------------------------------------------------------------------------

/// The first `n` code points of `s` (Java `BinaryString#substring(0, n)`).
pub fn truncate_min_string(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((cut, _)) => &s[..cut],
        None => s,
    }
}

/// A string `>= s` of at most `n` code points: `s` itself when it is short enough, else its
/// first `n` code points with the last one that can be incremented incremented (and the rest
/// dropped); `None` when all `n` are U+10FFFF. Incrementing U+D7FF gives a lone surrogate,
/// which Java's UTF-8 encoder writes as `?`; that is reproduced.
pub fn truncate_max_string(s: &str, n: usize) -> Option<String> {
    let Some((cut, _)) = s.char_indices().nth(n) else {
        return Some(s.to_string());
    };
    let prefix: Vec<char> = s[..cut].chars().collect();
    for i in (0..prefix.len()).rev() {
        let next = prefix[i] as u32 + 1;
        if next <= 0x10_FFFF {
            let mut out: String = prefix[..i].iter().collect();
            out.push(char::from_u32(next).unwrap_or('?'));
            return Some(out);
        }
    }
    None
}

/// The first `n` bytes of `b`.
pub fn truncate_min_binary(b: &[u8], n: usize) -> &[u8] {
    &b[..b.len().min(n)]
}

/// Bytes `>= b` of at most `n` bytes: `b` when short enough, else the first `n` bytes with the
/// last non-`0xFF` byte incremented (and the rest dropped); `None` when all are `0xFF`.
pub fn truncate_max_binary(b: &[u8], n: usize) -> Option<Vec<u8>> {
    if b.len() <= n {
        return Some(b.to_vec());
    }
    let mut out = b[..n].to_vec();
    for i in (0..n).rev() {
        if out[i] != 0xFF {
            out[i] += 1;
            out.truncate(i + 1);
            return Some(out);
        }
    }
    None
}

/// Apply `mode` to raw `(min, max, null count)` (Java `SimpleColStatsCollector#convert`).
fn convert(mode: StatsMode, raw: SimpleColStats) -> SimpleColStats {
    match mode {
        StatsMode::None => SimpleColStats::none(),
        StatsMode::Counts => SimpleColStats {
            min: Datum::Null,
            max: Datum::Null,
            null_count: raw.null_count,
        },
        StatsMode::Full => raw,
        StatsMode::Truncate(n) => {
            let min = match raw.min {
                Datum::String(s) => Datum::String(truncate_min_string(&s, n).to_string()),
                Datum::Binary(b) => Datum::Binary(truncate_min_binary(&b, n).to_vec()),
                other => other,
            };
            let max = match raw.max {
                Datum::String(s) => truncate_max_string(&s, n).map(Datum::String),
                Datum::Binary(b) => truncate_max_binary(&b, n).map(Datum::Binary),
                Datum::Null => None,
                other => Some(other),
            };
            match max {
                Some(max) => SimpleColStats {
                    min,
                    max,
                    null_count: raw.null_count,
                },
                None => SimpleColStats {
                    min: Datum::Null,
                    max: Datum::Null,
                    null_count: raw.null_count,
                },
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

fn parse_bool_option(options: &CoreOptions, key: &str, default: bool) -> Result<bool> {
    match options.get(key) {
        None => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(Error::invalid(format!(
            "option {key} = '{v}': expected true or false"
        ))),
    }
}

/// A `level:value,...` map option (Java map options), keyed by level.
fn per_level(options: &CoreOptions, key: &str, level: i32) -> Result<Option<String>> {
    let Some(raw) = options.get(key) else {
        return Ok(None);
    };
    for entry in raw.split(',').filter(|e| !e.trim().is_empty()) {
        let (k, v) = entry
            .split_once(':')
            .ok_or_else(|| Error::invalid(format!("option {key} = '{raw}': expected k:v,...")))?;
        let k: i32 = k
            .trim()
            .parse()
            .map_err(|_| Error::invalid(format!("option {key} = '{raw}': level is not an int")))?;
        if k == level {
            return Ok(Some(v.trim().to_string()));
        }
    }
    Ok(None)
}

/// Java `StatsCollectorFactories#createStatsFactories` (`avro = false`, with the names of the
/// key columns in thin mode) or `#createStatsFactoriesForAvro` (`avro = true`).
fn column_modes(
    options: &CoreOptions,
    stats_mode: &str,
    names: &[String],
    thin_key_names: &[String],
    avro: bool,
) -> Result<Vec<StatsMode>> {
    let table_mode = StatsMode::parse(stats_mode)?;
    let keep_first: i64 = match options.get(METADATA_STATS_KEEP_FIRST_N_COLUMNS) {
        None => -1,
        Some(v) => v.trim().parse().map_err(|_| {
            Error::invalid(format!(
                "option {METADATA_STATS_KEEP_FIRST_N_COLUMNS} = '{v}': expected an int"
            ))
        })?,
    };
    let mut count: i64 = 0;
    let mut modes = Vec::with_capacity(names.len());
    for name in names {
        let field_mode = options.get(&format!("fields.{name}.stats-mode"));
        let mode = if let Some(m) = field_mode {
            count += 1;
            StatsMode::parse(m)?
        } else if !avro
            && (is_system_field(name)
                || thin_key_names.contains(&format!("{KEY_FIELD_PREFIX}{name}")))
        {
            StatsMode::Truncate(128)
        } else {
            let mode = if keep_first >= 0 && count >= keep_first {
                StatsMode::None
            } else {
                table_mode
            };
            count += 1;
            mode
        };
        modes.push(mode);
    }
    Ok(modes)
}

// ---------------------------------------------------------------------------------------------
// The collector
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Layout {
    /// Append data files: every column is a value column.
    Append,
    /// Primary-key files: `[_KEY_ keys.., _SEQUENCE_NUMBER, _VALUE_KIND, values..]`.
    KeyValue { keys: usize },
    /// Thin primary-key files: `[_SEQUENCE_NUMBER, _VALUE_KIND, values..]`; key `i` is value
    /// column `key_to_value[i]`.
    Thin { key_to_value: Vec<usize> },
}

/// Collects the statistics of one data file from its Arrow batches, as Java Paimon 2.0 records
/// them in the file's `DataFileMeta` (see the module docs for the rules).
///
/// Call [`StatsCollector::update`] with every batch written to the file (columns in the order
/// of [`StatsCollector::write_fields`]), then [`StatsCollector::finish`] (and, for primary-key
/// files, [`StatsCollector::finish_key_stats`]).
///
/// Source: Java `StatsCollectingSingleFileWriter`, `RowDataFileWriter`,
/// `KeyValueDataFileWriter`.
#[derive(Debug, Clone)]
pub struct StatsCollector {
    fields: Vec<DataField>,
    columns: Vec<Column>,
    format: StatsFormat,
    dense: bool,
    layout: Layout,
    rows: u64,
    orc_row_group: u64,
}

impl StatsCollector {
    /// A collector for an append-table data file with the columns `fields`, in the format of
    /// `file.format` (default parquet), with `metadata.stats-mode` and the per-field modes.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad option value; [`Error::Unsupported`] for a file format
    /// other than parquet, orc and avro, or a type without an Arrow form.
    pub fn new(fields: &[DataField], options: &CoreOptions) -> Result<Self> {
        Self::for_append(
            fields,
            options,
            StatsFormat::from_name(&options.file_format())?,
        )
    }

    /// As [`StatsCollector::new`] with an explicit format.
    ///
    /// # Errors
    /// As [`StatsCollector::new`].
    pub fn for_append(
        fields: &[DataField],
        options: &CoreOptions,
        format: StatsFormat,
    ) -> Result<Self> {
        let mode = options
            .get(METADATA_STATS_MODE)
            .unwrap_or(DEFAULT_STATS_MODE);
        let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
        // Appends use the same factories for every format (`statsCollectors(fieldNames)`).
        let modes = column_modes(options, mode, &names, &[], false)?;
        Self::build(fields.to_vec(), &modes, format, options, Layout::Append)
    }

    /// A collector for a primary-key data file (`changelog = false`) or changelog file
    /// (`changelog = true`) of LSM level `level`, whose trimmed primary key fields are
    /// `key_fields` (plain table fields) and whose value fields are `value_fields`.
    ///
    /// The format is `file.format.per.level` of the level, else `file.format` (changelog files:
    /// `changelog-file.format` first); the mode `metadata.stats-mode.per.level` of the level,
    /// else `metadata.stats-mode` (changelog files: `changelog-file.stats-mode` first). With
    /// `data-file.thin-mode = true` the file has no `_KEY_` columns and key stats are taken
    /// from the value columns. The columns [`StatsCollector::update`] takes are
    /// [`StatsCollector::write_fields`].
    ///
    /// # Errors
    /// As [`StatsCollector::new`]; [`Error::Invalid`] in thin mode if a key is not a value
    /// field.
    pub fn for_key_value(
        key_fields: &[DataField],
        value_fields: &[DataField],
        options: &CoreOptions,
        level: i32,
        changelog: bool,
    ) -> Result<Self> {
        let format_name = match (changelog, options.get(CHANGELOG_FILE_FORMAT)) {
            (true, Some(f)) => f.to_lowercase(),
            _ => per_level(options, FILE_FORMAT_PER_LEVEL, level)?
                .map(|f| f.to_lowercase())
                .unwrap_or_else(|| options.file_format()),
        };
        let format = StatsFormat::from_name(&format_name)?;
        let mode = match (changelog, options.get(CHANGELOG_FILE_STATS_MODE)) {
            (true, Some(m)) => m.to_string(),
            _ => per_level(options, METADATA_STATS_MODE_PER_LEVEL, level)?.unwrap_or_else(|| {
                options
                    .get(METADATA_STATS_MODE)
                    .unwrap_or(DEFAULT_STATS_MODE)
                    .to_string()
            }),
        };
        let thin = parse_bool_option(options, DATA_FILE_THIN_MODE, false)?;
        let mut fields = Vec::with_capacity(key_fields.len() + 2 + value_fields.len());
        if !thin {
            for k in key_fields {
                fields.push(DataField::new(
                    SYSTEM_FIELD_ID_START.saturating_add(k.id),
                    format!("{KEY_FIELD_PREFIX}{}", k.name),
                    k.data_type.clone(),
                ));
            }
        }
        fields.push(DataField::new(
            SEQUENCE_NUMBER_FIELD_ID,
            SEQUENCE_NUMBER,
            DataType::not_null(TypeKind::BigInt),
        ));
        fields.push(DataField::new(
            VALUE_KIND_FIELD_ID,
            VALUE_KIND,
            DataType::not_null(TypeKind::TinyInt),
        ));
        fields.extend(value_fields.iter().cloned());
        let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
        let key_names: Vec<String> = key_fields
            .iter()
            .map(|k| format!("{KEY_FIELD_PREFIX}{}", k.name))
            .collect();
        let avro = format == StatsFormat::Avro;
        let thin_keys: &[String] = if thin { &key_names } else { &[] };
        let modes = column_modes(options, &mode, &names, thin_keys, avro)?;
        let layout = if thin {
            let key_to_value = key_fields
                .iter()
                .map(|k| {
                    value_fields
                        .iter()
                        .position(|v| v.name == k.name)
                        .ok_or_else(|| {
                            Error::invalid(format!(
                                "thin mode: primary key '{}' is not a value field",
                                k.name
                            ))
                        })
                })
                .collect::<Result<Vec<_>>>()?;
            Layout::Thin { key_to_value }
        } else {
            Layout::KeyValue {
                keys: key_fields.len(),
            }
        };
        // `_SEQUENCE_NUMBER` and `_VALUE_KIND` stats are computed by Java but dropped.
        let system_at = if thin { 0 } else { key_fields.len() };
        let mut collector = Self::build(fields, &modes, format, options, layout)?;
        for column in &mut collector.columns[system_at..system_at + 2] {
            column.acc = Acc::Skip;
            column.mode = StatsMode::None;
        }
        Ok(collector)
    }

    fn build(
        fields: Vec<DataField>,
        modes: &[StatsMode],
        format: StatsFormat,
        options: &CoreOptions,
        layout: Layout,
    ) -> Result<Self> {
        let dense = parse_bool_option(options, METADATA_STATS_DENSE_STORE, true)?;
        let orc_row_group = match options.get(ORC_ROW_INDEX_STRIDE) {
            None => 10_000,
            Some(v) => v.trim().parse::<u64>().map_err(|_| {
                Error::invalid(format!(
                    "option {ORC_ROW_INDEX_STRIDE} = '{v}': expected an int"
                ))
            })?,
        };
        let columns = fields
            .iter()
            .zip(modes)
            .map(|(f, m)| Column::new(f, *m, format))
            .collect::<Result<Vec<_>>>()?;
        Ok(StatsCollector {
            fields,
            columns,
            format,
            dense,
            layout,
            rows: 0,
            orc_row_group,
        })
    }

    /// The columns [`StatsCollector::update`] takes, in order (for primary-key files the
    /// `_KEY_` columns, `_SEQUENCE_NUMBER`, `_VALUE_KIND`, then the values).
    pub fn write_fields(&self) -> &[DataField] {
        &self.fields
    }

    /// The format whose rules apply.
    pub fn format(&self) -> StatsFormat {
        self.format
    }

    /// The mode of each write column (`none` for the dropped `_SEQUENCE_NUMBER` and
    /// `_VALUE_KIND` of primary-key files).
    pub fn modes(&self) -> Vec<StatsMode> {
        self.columns.iter().map(|c| c.mode).collect()
    }

    /// Rows seen so far.
    pub fn row_count(&self) -> u64 {
        self.rows
    }

    /// Add one batch of rows written to the file.
    ///
    /// # Errors
    /// [`Error::Invalid`] if the column count differs from [`StatsCollector::write_fields`],
    /// the columns have different lengths, or a column cannot be read as its field's type.
    pub fn update(&mut self, columns: &[ArrayRef]) -> Result<()> {
        if columns.len() != self.columns.len() {
            return Err(Error::invalid(format!(
                "statistics: {} columns for {} fields",
                columns.len(),
                self.columns.len()
            )));
        }
        let rows = columns.first().map_or(0, |c| c.len());
        if columns.iter().any(|c| c.len() != rows) {
            return Err(Error::invalid("statistics: columns of different lengths"));
        }
        let group = if self.format == StatsFormat::Orc {
            self.orc_row_group
        } else {
            0
        };
        for (col, array) in self.columns.iter_mut().zip(columns) {
            col.update(array, self.rows, group)?;
        }
        self.rows += rows as u64;
        Ok(())
    }

    /// The statistics of every write column, after the modes (Java's `SimpleColStats[]` of the
    /// file).
    ///
    /// # Errors
    /// [`Error::Invalid`] if a string min/max is not UTF-8 or an integer is out of its type's
    /// range (input that does not match the types).
    pub fn column_stats(&self) -> Result<Vec<SimpleColStats>> {
        self.columns.iter().map(Column::stats).collect()
    }

    /// The value statistics (`_VALUE_STATS`) and `_VALUE_STATS_COLS` Java writes for the file:
    /// for append files every column, for primary-key files the value columns. Dense store
    /// keeps the columns whose stats are not `none` and names them (`None` when all are kept).
    ///
    /// # Errors
    /// As [`StatsCollector::column_stats`]; [`Error::Invalid`] if a stats row cannot be
    /// encoded.
    pub fn finish(&self) -> Result<(SimpleStats, Option<Vec<String>>)> {
        let all = self.column_stats()?;
        let first_value = match &self.layout {
            Layout::Append => 0,
            Layout::KeyValue { keys } => keys + 2,
            Layout::Thin { .. } => 2,
        };
        let fields = &self.fields[first_value..];
        let stats = &all[first_value..];
        if !self.dense {
            return Ok((all_mode(fields, stats)?, None));
        }
        let kept: Vec<usize> = (0..stats.len()).filter(|i| !stats[*i].is_none()).collect();
        let types: Vec<DataType> = kept.iter().map(|i| fields[*i].data_type.clone()).collect();
        let mins: Vec<Datum> = kept.iter().map(|i| stats[*i].min.clone()).collect();
        let maxs: Vec<Datum> = kept.iter().map(|i| stats[*i].max.clone()).collect();
        let counts = kept.iter().map(|i| stats[*i].null_count).collect();
        let simple = SimpleStats {
            min_values: BinaryRow::encode(&mins, &types)?,
            max_values: BinaryRow::encode(&maxs, &types)?,
            null_counts: counts,
        };
        let cols = if kept.len() == stats.len() {
            None
        } else {
            Some(kept.iter().map(|i| fields[*i].name.clone()).collect())
        };
        Ok((simple, cols))
    }

    /// The key statistics (`_KEY_STATS`) of a primary-key file: every key column, `none`
    /// columns with null min, max and null count.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an append-file collector; as [`StatsCollector::finish`].
    pub fn finish_key_stats(&self) -> Result<SimpleStats> {
        let all = self.column_stats()?;
        match &self.layout {
            Layout::Append => Err(Error::invalid(
                "key statistics of an append data file collector",
            )),
            Layout::KeyValue { keys } => all_mode(&self.fields[..*keys], &all[..*keys]),
            Layout::Thin { key_to_value } => {
                let fields: Vec<DataField> = key_to_value
                    .iter()
                    .map(|i| self.fields[i + 2].clone())
                    .collect();
                let stats: Vec<SimpleColStats> =
                    key_to_value.iter().map(|i| all[i + 2].clone()).collect();
                all_mode(&fields, &stats)
            }
        }
    }
}

/// Java `SimpleStatsConverter#toBinaryAllMode`.
fn all_mode(fields: &[DataField], stats: &[SimpleColStats]) -> Result<SimpleStats> {
    let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
    let mins: Vec<Datum> = stats.iter().map(|s| s.min.clone()).collect();
    let maxs: Vec<Datum> = stats.iter().map(|s| s.max.clone()).collect();
    Ok(SimpleStats {
        min_values: BinaryRow::encode(&mins, &types)?,
        max_values: BinaryRow::encode(&maxs, &types)?,
        null_counts: stats.iter().map(|s| s.null_count).collect(),
    })
}

#[cfg(test)]
mod tests;
