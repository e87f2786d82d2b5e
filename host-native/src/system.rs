//! Rows of Paimon's metadata system tables (`$files`, `$manifests`), rendered as Java renders
//! them, as plain serde values (the CLI prints them as JSON or as text tables).

use std::collections::BTreeMap;

use paimon_kernel::Result;
use paimon_kernel::spec::binary_row::{BinaryRow, Datum};
use paimon_kernel::spec::data_file::{DataFileMeta, FileSource};
use paimon_kernel::spec::manifest::ManifestEntry;
use paimon_kernel::spec::manifest_list::ManifestFileMeta;
use paimon_kernel::spec::partition::{bucket_path, partition_path, render_partition};
use paimon_kernel::spec::schema::TableSchema;
use paimon_kernel::spec::types::{DataField, DataType};
use serde::Serialize;

/// One row of the `$files` system table: a live data file of a snapshot.
///
/// Source: Java `org.apache.paimon.table.system.FilesTable` (columns in its order), plus
/// `extra_files` and `external_path` from `DataFileMeta`. String columns are rendered as Java
/// does: `partition` as the partition row cast to STRING (`{v1, v2}`), `min_key`/`max_key` as
/// `Arrays.toString` of the trimmed primary key (`[1, a]`, `None` for append tables),
/// `*_value_stats`/`null_value_counts` as a name-sorted `{a=1, b=x}` over the table's current
/// columns (stats evolved from the file's schema by field id: a column the file does not have
/// counts `record_count` nulls).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileRow {
    /// Partition as `{v1, v2}` (`{}` for an unpartitioned table).
    pub partition: String,
    /// Bucket (`-2` for the postpone bucket).
    pub bucket: i32,
    /// Full path: external path, or `<table>/<partition path>bucket-<n>/<file name>`.
    pub file_path: String,
    /// Format from the file name (`parquet`, `orc`, `avro`, `blob`...).
    pub file_format: String,
    /// Schema id the file was written with.
    pub schema_id: i64,
    /// LSM level.
    pub level: i32,
    /// Rows in the file.
    pub record_count: i64,
    /// File size in bytes.
    pub file_size_in_bytes: i64,
    /// Smallest primary key, `None` for files without keys.
    pub min_key: Option<String>,
    /// Largest primary key, `None` for files without keys.
    pub max_key: Option<String>,
    /// Null count per column, `{name=count}`.
    pub null_value_counts: String,
    /// Minimum per column, `{name=value}`.
    pub min_value_stats: String,
    /// Maximum per column, `{name=value}`.
    pub max_value_stats: String,
    /// Smallest sequence number in the file.
    pub min_sequence_number: i64,
    /// Largest sequence number in the file.
    pub max_sequence_number: i64,
    /// Creation time in epoch millis (Java shows a `TIMESTAMP(3)`), if recorded.
    pub creation_time: Option<i64>,
    /// Deleted (retract) rows in the file, if recorded.
    #[serde(rename = "deleteRowCount")]
    pub delete_row_count: Option<i64>,
    /// `APPEND` or `COMPACT`, if recorded.
    pub file_source: Option<String>,
    /// First row id (row-tracking tables).
    pub first_row_id: Option<i64>,
    /// Columns physically written (data evolution), `None` = all.
    pub write_cols: Option<Vec<String>>,
    /// Extra files next to the data file.
    pub extra_files: Vec<String>,
    /// External path, if the file lives outside the table directory.
    pub external_path: Option<String>,
}

/// One row of the `$manifests` system table.
///
/// Source: Java `org.apache.paimon.table.system.ManifestsTable` (columns in its order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManifestRow {
    /// Manifest file name (in `manifest/`).
    pub file_name: String,
    /// Size in bytes.
    pub file_size: i64,
    /// ADD entries.
    pub num_added_files: i64,
    /// DELETE entries.
    pub num_deleted_files: i64,
    /// Schema id the manifest was written with.
    pub schema_id: i64,
    /// Smallest partition as `{v1, v2}`.
    pub min_partition_stats: Option<String>,
    /// Largest partition as `{v1, v2}`.
    pub max_partition_stats: Option<String>,
    /// Smallest row id (row-tracking tables).
    pub min_row_id: Option<i64>,
    /// Largest row id (row-tracking tables).
    pub max_row_id: Option<i64>,
}

/// Render `$manifests` rows. `schema` is the table's schema (for the partition type).
///
/// # Errors
/// `Corrupt` when a partition stats row does not decode with the partition type.
pub fn manifest_rows(
    schema: &TableSchema,
    manifests: &[ManifestFileMeta],
) -> Result<Vec<ManifestRow>> {
    let keys: Vec<DataField> = schema.partition_fields()?.into_iter().cloned().collect();
    manifests
        .iter()
        .map(|m| {
            let stats = &m.partition_stats;
            let render = |row: &BinaryRow| -> Result<Option<String>> {
                if row.arity() == 0 && !keys.is_empty() {
                    return Ok(None);
                }
                render_partition(&keys, row).map(Some)
            };
            Ok(ManifestRow {
                file_name: m.file_name.clone(),
                file_size: m.file_size,
                num_added_files: m.num_added_files,
                num_deleted_files: m.num_deleted_files,
                schema_id: m.schema_id,
                min_partition_stats: render(&stats.min_values)?,
                max_partition_stats: render(&stats.max_values)?,
                min_row_id: m.min_row_id,
                max_row_id: m.max_row_id,
            })
        })
        .collect()
}

/// Render `$files` rows for live manifest entries.
///
/// * `schema`: the table's schema (partition type, current columns for the stats columns);
/// * `schemas`: every schema a file refers to, by id (for keys and stats);
/// * `table_url`: prefix of `file_path`.
///
/// # Errors
/// `Invalid` when a file's schema is not in `schemas`; `Corrupt` when a partition, key or
/// stats row does not decode with its type.
pub fn file_rows(
    schema: &TableSchema,
    schemas: &BTreeMap<i64, TableSchema>,
    table_url: &str,
    entries: &[ManifestEntry],
) -> Result<Vec<FileRow>> {
    let keys: Vec<DataField> = schema.partition_fields()?.into_iter().cloned().collect();
    let options = schema.core_options();
    let naming = options.partition_naming()?;
    let data_root = match options.data_file_path_directory() {
        Some(dir) => format!("{}/{dir}", table_url.trim_end_matches('/')),
        None => table_url.trim_end_matches('/').to_string(),
    };
    entries
        .iter()
        .map(|e| {
            let file = &e.file;
            let data_schema = schemas.get(&file.schema_id).ok_or_else(|| {
                paimon_kernel::Error::invalid(format!(
                    "data file {} refers to schema {} which was not read",
                    file.file_name, file.schema_id
                ))
            })?;
            let ppath = partition_path(&keys, &e.partition, &naming)?;
            let bucket_dir = bucket_path(&data_root, &ppath, e.bucket);
            let (min_key, max_key) = render_keys(data_schema, file)?;
            let stats = render_stats(schema, data_schema, file)?;
            Ok(FileRow {
                partition: render_partition(&keys, &e.partition)?,
                bucket: e.bucket,
                file_path: file.path_in_bucket(&bucket_dir),
                file_format: file.file_format(),
                schema_id: file.schema_id,
                level: file.level,
                record_count: file.row_count,
                file_size_in_bytes: file.file_size,
                min_key,
                max_key,
                null_value_counts: stats.0,
                min_value_stats: stats.1,
                max_value_stats: stats.2,
                min_sequence_number: file.min_sequence_number,
                max_sequence_number: file.max_sequence_number,
                creation_time: file.creation_time_millis,
                delete_row_count: file.delete_row_count,
                file_source: file.file_source.map(|s| {
                    match s {
                        FileSource::Append => "APPEND",
                        FileSource::Compact => "COMPACT",
                    }
                    .to_string()
                }),
                first_row_id: file.first_row_id,
                write_cols: file.write_cols.clone(),
                extra_files: file.extra_files.clone(),
                external_path: file.external_path.clone(),
            })
        })
        .collect()
}

/// `[k1, k2]` of the min/max key with the file schema's trimmed primary key types (the whole
/// row type when the table has no primary key); `None` for an empty key row.
fn render_keys(
    data_schema: &TableSchema,
    file: &DataFileMeta,
) -> Result<(Option<String>, Option<String>)> {
    let names = data_schema.trimmed_primary_keys()?;
    let types: Vec<DataType> = if names.is_empty() {
        data_schema
            .fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect()
    } else {
        names
            .iter()
            .filter_map(|n| data_schema.field(n))
            .map(|f| f.data_type.clone())
            .collect()
    };
    let render = |row: &BinaryRow| -> Result<Option<String>> {
        if row.arity() == 0 {
            return Ok(None);
        }
        let n = row.arity().min(types.len());
        let values = row_fields(row, &types[..n])?;
        let parts: Vec<String> = values.iter().map(ToString::to_string).collect();
        Ok(Some(format!("[{}]", parts.join(", "))))
    };
    Ok((render(&file.min_key)?, render(&file.max_key)?))
}

fn row_fields(row: &BinaryRow, types: &[DataType]) -> Result<Vec<Datum>> {
    types
        .iter()
        .enumerate()
        .map(|(i, ty)| row.field(i, ty))
        .collect()
}

/// `(null_value_counts, min_value_stats, max_value_stats)` over the table's current columns,
/// as Java's `SimpleStatsEvolution` maps the file's stats (by field id, dense
/// `value_stats_cols`, `write_cols`).
fn render_stats(
    schema: &TableSchema,
    data_schema: &TableSchema,
    file: &DataFileMeta,
) -> Result<(String, String, String)> {
    // The columns the file's schema has (restricted to the written ones).
    let data_fields: Vec<&DataField> = match &file.write_cols {
        Some(cols) => data_schema
            .fields
            .iter()
            .filter(|f| cols.contains(&f.name))
            .collect(),
        None => data_schema.fields.iter().collect(),
    };
    // The columns the stats rows hold, in order.
    let stats_fields: Vec<&DataField> = match &file.value_stats_cols {
        Some(cols) => cols
            .iter()
            .filter_map(|c| data_fields.iter().find(|f| &f.name == c).copied())
            .collect(),
        None => data_fields.clone(),
    };
    let stats_types: Vec<DataType> = stats_fields.iter().map(|f| f.data_type.clone()).collect();
    let stats = &file.value_stats;
    if file.value_stats_cols.is_none()
        && file.write_cols.is_none()
        && stats.min_values.arity() == 0
        && data_schema.id == schema.id
    {
        // Java iterates up to the stats row's arity: nothing.
        return Ok(("{}".to_string(), "{}".to_string(), "{}".to_string()));
    }
    let min = if stats.min_values.arity() == 0 {
        Vec::new()
    } else {
        row_fields(
            &stats.min_values,
            &stats_types[..stats.min_values.arity().min(stats_types.len())],
        )?
    };
    let max = if stats.max_values.arity() == 0 {
        Vec::new()
    } else {
        row_fields(
            &stats.max_values,
            &stats_types[..stats.max_values.arity().min(stats_types.len())],
        )?
    };
    let mut nulls: BTreeMap<&str, String> = BTreeMap::new();
    let mut lows: BTreeMap<&str, String> = BTreeMap::new();
    let mut highs: BTreeMap<&str, String> = BTreeMap::new();
    for field in &schema.fields {
        let in_file = data_fields.iter().any(|f| f.id == field.id);
        let pos = stats_fields.iter().position(|f| f.id == field.id);
        let null_count = match pos {
            Some(p) => stats
                .null_counts
                .get(p)
                .map_or("null".to_string(), |c| c.to_string()),
            None if !in_file => file.row_count.to_string(),
            None => "null".to_string(),
        };
        let value = |values: &[Datum]| {
            pos.and_then(|p| values.get(p))
                .map_or("null".to_string(), ToString::to_string)
        };
        nulls.insert(&field.name, null_count);
        lows.insert(&field.name, value(&min));
        highs.insert(&field.name, value(&max));
    }
    let render = |m: &BTreeMap<&str, String>| {
        let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{{{}}}", parts.join(", "))
    };
    Ok((render(&nulls), render(&lows), render(&highs)))
}
