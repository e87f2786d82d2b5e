//! The buckets-and-levels view: per partition and bucket, the sorted runs of the bucket
//! (primary-key tables: every level-0 file is a run, every non-empty higher level one run, as
//! [`Levels`] orders them) and their files, each placed on the bucket's key axis.
//!
//! Key axis: with one numeric (or date / time / timestamp) key column, a file spans
//! `[(min − lo) / (hi − lo), (max − lo) / (hi − lo)]` of the bucket's key values
//! (`KeyAxis::Value`); with other keys, the distinct min/max keys of the bucket are sorted
//! (the key order of the merge) and a file spans the ranks of its min and max key divided by
//! the last rank (`KeyAxis::Rank`). Append and data-evolution files have no keys
//! (`KeyAxis::None`, positions 0): the page lays them out by sequence order and size.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{DeletionVectorView, dv_index, partition_fields, partition_forms};
use crate::compact::pk::levels::decode_key;
use crate::compact::pk::{Levels, PkCompactOptions};
use crate::error::{Error, Result};
use crate::spec::{
    DataFileMeta, DataType, Datum, FileSource, IndexManifestEntry, ManifestEntry, TableSchema,
};

/// How file positions on the key axis were computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyAxis {
    /// Proportional to the value of the single numeric key column.
    Value,
    /// By the rank of the file's min/max key among the bucket's keys.
    Rank,
    /// No keys (append and data-evolution tables): position by order.
    None,
}

/// The buckets and levels of one snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LevelsView {
    /// The snapshot the files are from (`None` for a table without snapshots).
    pub snapshot_id: Option<i64>,
    /// `append`, `primary-key` or `data-evolution`.
    pub table_kind: String,
    /// The trimmed primary key columns (empty for tables without primary key).
    pub key_columns: Vec<String>,
    /// How `x0`/`x1` of the files were computed.
    pub key_axis: KeyAxis,
    /// Levels of a bucket (`num-levels`, default `num-sorted-run.compaction-trigger + 1`);
    /// 1 for tables without primary key.
    pub num_levels: i32,
    /// Every partition (or the chosen one), in partition-bytes order.
    pub partitions: Vec<PartitionLevels>,
    /// Every partition of the snapshot, rendered (for a chooser), in the same order.
    pub all_partitions: Vec<String>,
}

/// The buckets of one partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionLevels {
    /// The partition as `$files` renders it (`{2024-01-01, 12}`; `{}` unpartitioned).
    pub partition: String,
    /// The partition values by key (plan JSON form).
    pub partition_values: serde_json::Map<String, serde_json::Value>,
    /// The buckets, by bucket number.
    pub buckets: Vec<BucketLevels>,
}

/// The sorted runs of one bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BucketLevels {
    /// The bucket.
    pub bucket: i32,
    /// `_TOTAL_BUCKETS` of the bucket's first entry.
    pub total_buckets: i32,
    /// Live data files.
    pub file_count: usize,
    /// Σ file size, bytes.
    pub total_bytes: i64,
    /// Σ row count.
    pub total_rows: i64,
    /// Sorted runs (primary-key tables: level-0 files + non-empty higher levels, what the
    /// universal compaction counts against `num-sorted-run.compaction-trigger`); `None` for
    /// tables without primary key.
    pub sorted_run_count: Option<usize>,
    /// Files per level (level → count).
    pub files_per_level: BTreeMap<i32, usize>,
    /// How this bucket's files were placed on the key axis.
    pub key_axis: KeyAxis,
    /// The runs, newest first: level-0 files (one run each, newest first), then levels 1, 2,
    /// … (primary-key tables); for other tables one run per level, files by sequence number.
    pub runs: Vec<RunView>,
}

/// One sorted run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    /// The run's level.
    pub level: i32,
    /// Its files, in key order (primary-key tables) or sequence order.
    pub files: Vec<LevelFile>,
}

/// One data file of the levels view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LevelFile {
    /// File name (relative to the bucket directory).
    pub file_name: String,
    /// LSM level.
    pub level: i32,
    /// Bytes.
    pub file_size: i64,
    /// Rows (retractions included).
    pub row_count: i64,
    /// Min key as text (`[1, a]`), `None` without keys.
    pub min_key: Option<String>,
    /// Max key as text.
    pub max_key: Option<String>,
    /// Start on the bucket's key axis, `0..=1` (0 without keys).
    pub x0: f64,
    /// End on the bucket's key axis, `0..=1` (0 without keys).
    pub x1: f64,
    /// Min sequence number.
    pub min_sequence_number: i64,
    /// Max sequence number.
    pub max_sequence_number: i64,
    /// Schema the file was written with.
    pub schema_id: i64,
    /// `_DELETE_ROW_COUNT`, when recorded.
    pub delete_row_count: Option<i64>,
    /// The file's deletion vector, if one is live.
    pub deletion_vector: Option<DeletionVectorView>,
    /// `_CREATION_TIME` in millis (local date-time of the writer).
    pub creation_time_millis: Option<i64>,
    /// `APPEND` or `COMPACT`, when recorded.
    pub file_source: Option<String>,
    /// First row id (row-tracking tables).
    pub first_row_id: Option<i64>,
    /// Extra files (e.g. `.blobref` sidecars).
    pub extra_files: Vec<String>,
}

/// The file as a [`LevelFile`] without key positions.
fn level_file(f: &DataFileMeta, dv: Option<&DeletionVectorView>) -> LevelFile {
    LevelFile {
        file_name: f.file_name.clone(),
        level: f.level,
        file_size: f.file_size,
        row_count: f.row_count,
        min_key: None,
        max_key: None,
        x0: 0.0,
        x1: 0.0,
        min_sequence_number: f.min_sequence_number,
        max_sequence_number: f.max_sequence_number,
        schema_id: f.schema_id,
        delete_row_count: f.delete_row_count,
        deletion_vector: dv.cloned(),
        creation_time_millis: f.creation_time_millis,
        file_source: f.file_source.map(|s| {
            match s {
                FileSource::Append => "APPEND",
                FileSource::Compact => "COMPACT",
            }
            .to_owned()
        }),
        first_row_id: f.first_row_id,
        extra_files: f.extra_files.clone(),
    }
}

/// A key value as a number, for a proportional axis.
fn key_number(d: &Datum) -> Option<f64> {
    Some(match d {
        Datum::TinyInt(v) => f64::from(*v),
        Datum::SmallInt(v) => f64::from(*v),
        Datum::Int(v) | Datum::Date(v) | Datum::Time(v) => f64::from(*v),
        Datum::BigInt(v) => *v as f64,
        Datum::Float(v) => f64::from(*v),
        Datum::Double(v) => *v,
        Datum::Decimal {
            unscaled, scale, ..
        } => *unscaled as f64 / 10f64.powi(i32::try_from(*scale).unwrap_or(0)),
        Datum::Timestamp {
            millis,
            nanos_of_milli,
        } => *millis as f64 + f64::from(*nanos_of_milli) / 1e6,
        _ => return None,
    })
    .filter(|x| x.is_finite())
}

/// A key as text: `[v1, v2]` (values cast to STRING, `null` for NULL).
fn key_text(values: &[Datum], types: &[DataType]) -> String {
    let parts: Vec<String> = values
        .iter()
        .zip(types)
        .map(|(v, t)| v.cast_to_string(t).unwrap_or_else(|| "null".to_owned()))
        .collect();
    format!("[{}]", parts.join(", "))
}

/// The decoded min and max keys of each file of a bucket.
type BucketKeys = Vec<(Vec<Datum>, Vec<Datum>)>;

/// Key-axis positions of files with decoded `keys`, and the axis used.
fn key_positions(keys: &BucketKeys) -> (KeyAxis, Vec<(f64, f64)>) {
    let numeric: Option<Vec<(f64, f64)>> = keys
        .iter()
        .map(|(lo, hi)| match (lo.as_slice(), hi.as_slice()) {
            ([a], [b]) => Some((key_number(a)?, key_number(b)?)),
            _ => None,
        })
        .collect();
    if let Some(values) = numeric {
        let lo = values.iter().map(|v| v.0).fold(f64::INFINITY, f64::min);
        let hi = values.iter().map(|v| v.1).fold(f64::NEG_INFINITY, f64::max);
        let span = hi - lo;
        let scale = |x: f64| {
            if span > 0.0 {
                ((x - lo) / span).clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        return (
            KeyAxis::Value,
            values.iter().map(|(a, b)| (scale(*a), scale(*b))).collect(),
        );
    }
    let mut all: Vec<&Vec<Datum>> = keys.iter().flat_map(|(a, b)| [a, b]).collect();
    all.sort();
    all.dedup();
    let last = all.len().saturating_sub(1).max(1) as f64;
    let rank = |k: &Vec<Datum>| all.binary_search(&k).unwrap_or(0) as f64 / last;
    (
        KeyAxis::Rank,
        keys.iter().map(|(a, b)| (rank(a), rank(b))).collect(),
    )
}

/// The buckets-and-levels view of `entries` (the live data files of snapshot
/// `snapshot_id`), with deletion vectors from `index_entries`. `partition` (rendered as
/// `$files` renders it, e.g. `{2024-01-01, 12}`) keeps one partition; `None` keeps all.
///
/// Primary-key files' min/max keys decode with `schema`'s trimmed primary key types.
///
/// # Errors
/// [`Error::Invalid`] for an unknown `partition` (naming the partitions there are) or
/// malformed compaction options; [`Error::Corrupt`] for keys or partitions that do not
/// decode.
pub fn levels(
    schema: &TableSchema,
    snapshot_id: Option<i64>,
    entries: &[ManifestEntry],
    index_entries: &[IndexManifestEntry],
    partition: Option<&str>,
) -> Result<LevelsView> {
    let kind = super::table_kind_name(schema)?;
    let pfields = partition_fields(schema)?;
    let pk = schema.is_primary_key_table();
    let key_columns = if pk {
        schema.trimmed_primary_keys()?
    } else {
        Vec::new()
    };
    let key_types: Vec<DataType> = key_columns
        .iter()
        .map(|k| {
            schema
                .field(k)
                .map(|f| f.data_type.clone())
                .ok_or_else(|| Error::invalid(format!("primary key '{k}' is not a column")))
        })
        .collect::<Result<_>>()?;
    let dvs = dv_index(index_entries);
    // (partition bytes) → (bucket → (total buckets, files)).
    type Buckets = BTreeMap<i32, (i32, Vec<DataFileMeta>)>;
    let mut by_partition: BTreeMap<Vec<u8>, (crate::spec::BinaryRow, Buckets)> = BTreeMap::new();
    for e in entries {
        by_partition
            .entry(e.partition.to_serialized())
            .or_insert_with(|| (e.partition.clone(), BTreeMap::new()))
            .1
            .entry(e.bucket)
            .or_insert_with(|| (e.total_buckets, Vec::new()))
            .1
            .push(e.file.clone());
    }
    let options = schema.core_options();
    let mut num_levels = 1;
    let mut axis = if pk { KeyAxis::Value } else { KeyAxis::None };
    let mut all_partitions = Vec::new();
    let mut partitions = Vec::new();
    for (pbytes, (prow, buckets)) in by_partition {
        let (text, values) = partition_forms(&pfields, &prow)?;
        all_partitions.push(text.clone());
        if partition.is_some_and(|p| p != text) {
            continue;
        }
        let mut out_buckets = Vec::new();
        for (bucket, (total_buckets, files)) in buckets {
            let dv = |f: &DataFileMeta| dvs.get(&(pbytes.clone(), bucket, f.file_name.clone()));
            let bucket_view = if pk {
                let opts = PkCompactOptions::try_new(&options, 0, &files)?;
                let lv = Levels::try_new(files.clone(), opts.num_levels, &key_types)?;
                num_levels = num_levels.max(lv.number_of_levels());
                pk_bucket(bucket, total_buckets, &lv, &key_types, &dv, &mut axis)?
            } else {
                plain_bucket(bucket, total_buckets, files, &dv)
            };
            out_buckets.push(bucket_view);
        }
        partitions.push(PartitionLevels {
            partition: text,
            partition_values: values,
            buckets: out_buckets,
        });
    }
    if let Some(p) = partition
        && partitions.is_empty()
    {
        return Err(Error::invalid(format!(
            "no partition {p} in snapshot {}; partitions: {}",
            snapshot_id.map_or_else(|| "none".to_owned(), |s| s.to_string()),
            all_partitions.join(" ")
        )));
    }
    Ok(LevelsView {
        snapshot_id,
        table_kind: kind.to_owned(),
        key_columns,
        key_axis: axis,
        num_levels,
        partitions,
        all_partitions,
    })
}

/// Sums and per-level counts of a bucket's runs.
fn bucket_of(
    bucket: i32,
    total_buckets: i32,
    runs: Vec<RunView>,
    sorted_run_count: Option<usize>,
    key_axis: KeyAxis,
) -> BucketLevels {
    let mut files_per_level = BTreeMap::new();
    let (mut count, mut bytes, mut rows) = (0usize, 0i64, 0i64);
    for f in runs.iter().flat_map(|r| &r.files) {
        *files_per_level.entry(f.level).or_insert(0) += 1;
        count += 1;
        bytes = bytes.saturating_add(f.file_size);
        rows = rows.saturating_add(f.row_count);
    }
    BucketLevels {
        bucket,
        total_buckets,
        file_count: count,
        total_bytes: bytes,
        total_rows: rows,
        sorted_run_count,
        files_per_level,
        key_axis,
        runs,
    }
}

/// A primary-key bucket: the runs of `levels`, files placed on the key axis. `axis` falls
/// back from `Value` to `Rank` when a bucket's keys are not one numeric column.
fn pk_bucket<'a>(
    bucket: i32,
    total_buckets: i32,
    levels: &Levels,
    key_types: &[DataType],
    dv: &impl Fn(&DataFileMeta) -> Option<&'a DeletionVectorView>,
    axis: &mut KeyAxis,
) -> Result<BucketLevels> {
    let runs = levels.level_sorted_runs();
    let mut keys: BucketKeys = Vec::new();
    for r in &runs {
        for f in &r.run.files {
            keys.push((
                decode_key(&f.min_key, key_types)?,
                decode_key(&f.max_key, key_types)?,
            ));
        }
    }
    let (bucket_axis, positions) = key_positions(&keys);
    if bucket_axis == KeyAxis::Rank {
        *axis = KeyAxis::Rank;
    }
    let mut at = 0usize;
    let mut out = Vec::with_capacity(runs.len());
    for r in &runs {
        let mut files = Vec::with_capacity(r.run.files.len());
        for f in &r.run.files {
            let mut lf = level_file(f, dv(f));
            if let (Some((lo, hi)), Some((x0, x1))) = (keys.get(at), positions.get(at)) {
                if !lo.is_empty() {
                    lf.min_key = Some(key_text(lo, key_types));
                    lf.max_key = Some(key_text(hi, key_types));
                }
                lf.x0 = *x0;
                lf.x1 = *x1;
            }
            at += 1;
            files.push(lf);
        }
        out.push(RunView {
            level: r.level,
            files,
        });
    }
    Ok(bucket_of(
        bucket,
        total_buckets,
        out,
        Some(levels.number_of_sorted_runs()),
        bucket_axis,
    ))
}

/// A bucket of a table without primary key: one run per level, files by (min sequence
/// number, file name).
fn plain_bucket<'a>(
    bucket: i32,
    total_buckets: i32,
    mut files: Vec<DataFileMeta>,
    dv: &impl Fn(&DataFileMeta) -> Option<&'a DeletionVectorView>,
) -> BucketLevels {
    files.sort_by(|a, b| {
        (a.level, a.min_sequence_number, &a.file_name).cmp(&(
            b.level,
            b.min_sequence_number,
            &b.file_name,
        ))
    });
    let mut runs: Vec<RunView> = Vec::new();
    for f in &files {
        let lf = level_file(f, dv(f));
        match runs.last_mut() {
            Some(r) if r.level == f.level => r.files.push(lf),
            _ => runs.push(RunView {
                level: f.level,
                files: vec![lf],
            }),
        }
    }
    bucket_of(bucket, total_buckets, runs, None, KeyAxis::None)
}
