//! The statistics the write side collects (`paimon_kernel::encode::stats`) against the
//! `_KEY_STATS` / `_VALUE_STATS` / `_VALUE_STATS_COLS` pypaimon 2.1.0 recorded for every data
//! file of the corpus (see `write_bucket` for which tables).
//!
//! The collector follows Java Paimon 2.0, not pypaimon. Where they differ the file is counted
//! under a named difference instead of failing; any other mismatch fails:
//!
//! * `pypaimon writes no value stats`: without `metadata.stats-mode = full` pypaimon records
//!   empty value stats (`_VALUE_STATS_COLS = []`); Java's default `truncate(16)` records
//!   stats for every column it can.
//! * `pypaimon does not truncate key stats`: Java keeps `_KEY_` columns at `truncate(128)`
//!   (Avro files: the table mode); pypaimon stores the full min/max.
//! * `postpone bucket: pypaimon writes key stats` / `... value stats`: Java writes
//!   postpone-bucket files as Avro with `metadata.stats-mode = none` (null key stats, no
//!   value stats); pypaimon records full key stats (and value stats in `full` mode).
//! * with `full` value stats (warehouses written with `metadata.stats-mode = full`):
//!   `parquet nested column` (Java Parquet has no statistics for nested columns and leaves
//!   them out of the dense stats; pypaimon stores null min/max with a null count),
//!   `parquet INT96 timestamp` (Java: no min/max for precision > 6; pypaimon: micros),
//!   `orc binary` (Java ORC: no binary min/max), `NaN` (Java's max is NaN; pyarrow skips
//!   NaN), `orc long string` (ORC keeps strings over 1024 bytes as bounds only),
//!   `pypaimon truncates nanosecond timestamps` (TIMESTAMP(7..9) stats cut to micros by
//!   pypaimon; Java ORC/Avro keep the nanos).

use std::collections::BTreeMap;

use paimon_kernel::encode::stats::{
    SimpleColStats, StatsCollector, StatsFormat, postpone_bucket_options,
};
use paimon_kernel::format::data_file::FileFormat;
use paimon_kernel::spec::{DataField, DataType, Datum, SimpleStats, TypeKind};

use crate::write_bucket::{TableFile, read_columns, table_files, table_roots};

fn stats_format(f: FileFormat) -> StatsFormat {
    match f {
        FileFormat::Parquet => StatsFormat::Parquet,
        FileFormat::Orc => StatsFormat::Orc,
        FileFormat::Avro => StatsFormat::Avro,
    }
}

/// The collector Java would use for `file`, with `extra` options on top of the table's.
fn collector_for(file: &TableFile, extra: &[(String, String)]) -> StatsCollector {
    let schema = &file.schema;
    let mut options = schema.core_options();
    if file.entry.bucket == -2 {
        options = postpone_bucket_options(&options);
    }
    for (k, v) in extra {
        options = options.with(k.clone(), v.clone());
    }
    let meta = &file.entry.file;
    if schema.primary_keys.is_empty() {
        let fields: Vec<DataField> = match &meta.write_cols {
            Some(cols) => cols
                .iter()
                .map(|c| schema.field(c).unwrap().clone())
                .collect(),
            None => schema.fields.clone(),
        };
        StatsCollector::for_append(&fields, &options, stats_format(file.format)).unwrap()
    } else {
        let keys: Vec<DataField> = schema
            .trimmed_primary_keys()
            .unwrap()
            .iter()
            .map(|k| schema.field(k).unwrap().clone())
            .collect();
        let changelog = meta.file_name.starts_with("changelog-");
        let c =
            StatsCollector::for_key_value(&keys, &schema.fields, &options, meta.level, changelog)
                .unwrap();
        assert_eq!(
            c.format(),
            stats_format(file.format),
            "{}",
            file.path.display()
        );
        c
    }
}

/// The collector fed with every row of `file`; `Err` if the file's columns cannot be read.
fn collect(
    file: &TableFile,
    extra: &[(String, String)],
) -> Result<(StatsCollector, usize), String> {
    let mut c = collector_for(file, extra);
    let batches = read_columns(file, c.write_fields())?.ok_or("a column is missing")?;
    let mut rows = 0;
    for b in &batches {
        c.update(b).unwrap();
        rows += b.first().map_or(0, |c| c.len());
    }
    assert_eq!(
        rows as i64,
        file.entry.file.row_count,
        "{}",
        file.path.display()
    );
    Ok((c, rows))
}

fn decode(stats: &SimpleStats, fields: &[DataField]) -> Vec<SimpleColStats> {
    let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
    let min = stats.min_values.fields(&types).unwrap();
    let max = stats.max_values.fields(&types).unwrap();
    min.into_iter()
        .zip(max)
        .zip(stats.null_counts.iter())
        .map(|((min, max), n)| SimpleColStats {
            min,
            max,
            null_count: n,
        })
        .collect()
}

/// A timestamp cut to microseconds.
fn micros(d: &Datum) -> Datum {
    match d {
        Datum::Timestamp {
            millis,
            nanos_of_milli,
        } => Datum::Timestamp {
            millis: *millis,
            nanos_of_milli: nanos_of_milli - nanos_of_milli % 1000,
        },
        other => other.clone(),
    }
}

fn is_nan(d: &Datum) -> bool {
    matches!(d, Datum::Float(v) if v.is_nan()) || matches!(d, Datum::Double(v) if v.is_nan())
}

/// Why Java's column stats (`ours`) legitimately differ from pypaimon's (`theirs`), if a known
/// reason applies.
fn known_difference(
    format: StatsFormat,
    ty: &DataType,
    ours: &SimpleColStats,
    theirs: &SimpleColStats,
) -> Option<&'static str> {
    let nested = matches!(
        ty.kind,
        TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Multiset(_) | TypeKind::Row(_)
    ) || ty.kind == TypeKind::Variant;
    if ours.null_count != theirs.null_count && !(format == StatsFormat::Parquet && nested) {
        return None;
    }
    match (&ty.kind, format) {
        (_, StatsFormat::Parquet) if nested && ours.is_none() => Some("parquet nested column"),
        (
            TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision },
            StatsFormat::Parquet,
        ) if *precision > 6 && ours.min.is_null() => Some("parquet INT96 timestamp"),
        (TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision }, _)
            if *precision > 6
                && micros(&ours.min) == micros(&theirs.min)
                && micros(&ours.max) == micros(&theirs.max) =>
        {
            Some("pypaimon truncates nanosecond timestamps")
        }
        (TypeKind::Binary { .. } | TypeKind::VarBinary { .. }, StatsFormat::Orc)
            if ours.min.is_null() =>
        {
            Some("orc binary")
        }
        (TypeKind::Float | TypeKind::Double, _) if is_nan(&ours.max) || is_nan(&ours.min) => {
            Some("NaN")
        }
        (TypeKind::Char { .. } | TypeKind::VarChar { .. }, StatsFormat::Orc)
            if ours.min.is_null() || ours.max.is_null() =>
        {
            Some("orc long string")
        }
        _ => None,
    }
}

#[derive(Default)]
struct Tally {
    files: usize,
    rows: usize,
    kv_files: usize,
    key_stats_equal: usize,
    value_stats_equal: usize,
    value_columns_equal: usize,
    differences: BTreeMap<&'static str, usize>,
    unexpected: Vec<String>,
    skipped: Vec<String>,
}

#[test]
fn data_file_stats_match_the_manifests() {
    let mut t = Tally::default();
    for root in table_roots() {
        for file in table_files(&root) {
            let (ours, rows) = match collect(&file, &[]) {
                Ok(r) => r,
                Err(e) => {
                    // Only extra warehouses may hold layouts the plain reader cannot map.
                    let shipped = file.path.to_string_lossy().contains("/conformance/");
                    if shipped {
                        t.unexpected.push(format!("{}: {e}", file.path.display()));
                    }
                    t.skipped.push(format!("{}: {e}", file.path.display()));
                    continue;
                }
            };
            t.files += 1;
            t.rows += rows;
            let meta = &file.entry.file;
            let name = file.path.display().to_string();
            let format = ours.format();

            // Key stats of primary-key files.
            if !file.schema.primary_keys.is_empty() {
                t.kv_files += 1;
                let key_stats = ours.finish_key_stats().unwrap();
                if key_stats == meta.key_stats {
                    t.key_stats_equal += 1;
                } else {
                    // pypaimon keeps the full min/max: Java's with `full` key columns.
                    let full: Vec<(String, String)> = ours
                        .write_fields()
                        .iter()
                        .filter(|f| f.name.starts_with("_KEY_"))
                        .map(|f| (format!("fields.{}.stats-mode", f.name), "full".into()))
                        .collect();
                    let (untruncated, _) = collect(&file, &full).unwrap();
                    if file.entry.bucket == -2 {
                        *t.differences
                            .entry("postpone bucket: pypaimon writes key stats")
                            .or_default() += 1;
                    } else if untruncated.finish_key_stats().unwrap() == meta.key_stats {
                        *t.differences
                            .entry("pypaimon does not truncate key stats")
                            .or_default() += 1;
                    } else {
                        t.unexpected.push(format!(
                            "{name}: key stats {key_stats:?} != manifest {:?}",
                            meta.key_stats
                        ));
                    }
                }
            }

            // Value stats.
            let (value_stats, value_cols) = ours.finish().unwrap();
            if value_stats == meta.value_stats && value_cols == meta.value_stats_cols {
                t.value_stats_equal += 1;
                continue;
            }
            if meta.value_stats_cols.as_deref() == Some(&[])
                && meta.value_stats.min_values.arity() == 0
            {
                *t.differences
                    .entry("pypaimon writes no value stats")
                    .or_default() += 1;
                continue;
            }
            if file.entry.bucket == -2 {
                *t.differences
                    .entry("postpone bucket: pypaimon writes value stats")
                    .or_default() += 1;
                continue;
            }
            // pypaimon wrote value stats (`full`): compare column by column.
            let first_value = if file.schema.primary_keys.is_empty() {
                0
            } else {
                ours.write_fields().len() - file.schema.fields.len()
            };
            let value_fields = &ours.write_fields()[first_value..];
            let our_cols = &ours.column_stats().unwrap()[first_value..];
            let their_fields: Vec<DataField> = match &meta.value_stats_cols {
                Some(cols) => cols
                    .iter()
                    .map(|c| value_fields.iter().find(|f| &f.name == c).unwrap().clone())
                    .collect(),
                None => value_fields.to_vec(),
            };
            let theirs = decode(&meta.value_stats, &their_fields);
            let mut all_known = true;
            for (field, their) in their_fields.iter().zip(&theirs) {
                let i = value_fields
                    .iter()
                    .position(|f| f.name == field.name)
                    .unwrap();
                let our = &our_cols[i];
                if our == their {
                    t.value_columns_equal += 1;
                } else if let Some(why) = known_difference(format, &field.data_type, our, their) {
                    *t.differences.entry(why).or_default() += 1;
                } else {
                    all_known = false;
                    t.unexpected.push(format!(
                        "{name} column {}: ours {our:?}, manifest {their:?}",
                        field.name
                    ));
                }
            }
            if all_known && value_cols == meta.value_stats_cols {
                // Same columns, only known value differences: the bytes of the rest agree.
                let ours_bytes = decode(&value_stats, &their_fields);
                for ((f, a), b) in their_fields.iter().zip(&ours_bytes).zip(&theirs) {
                    if a == b {
                        continue;
                    }
                    assert!(
                        known_difference(format, &f.data_type, a, b).is_some(),
                        "{name} {}",
                        f.name
                    );
                }
            }
        }
    }
    eprintln!(
        "stats check: {} files ({} primary-key), {} rows; key stats equal: {}, value stats \
         equal: {}, value columns equal: {}; differences from pypaimon: {:?}",
        t.files,
        t.kv_files,
        t.rows,
        t.key_stats_equal,
        t.value_stats_equal,
        t.value_columns_equal,
        t.differences
    );
    for s in &t.skipped {
        eprintln!("stats check skipped {}", &s[..s.len().min(300)]);
    }
    assert!(t.unexpected.is_empty(), "{}", t.unexpected.join("\n"));
    assert!(t.files >= 200, "{} files", t.files);
    assert!(t.kv_files >= 100, "{} primary-key files", t.kv_files);
    let known_key: usize = [
        "pypaimon does not truncate key stats",
        "postpone bucket: pypaimon writes key stats",
    ]
    .iter()
    .map(|k| t.differences.get(k).copied().unwrap_or(0))
    .sum();
    assert_eq!(t.key_stats_equal + known_key, t.kv_files);
}
