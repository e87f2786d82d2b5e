//! Manifest list files (rows of `ManifestFileMeta`).
//!
//! Source: Java `org.apache.paimon.manifest.ManifestFileMeta`, `ManifestFileMetaSerializer`,
//! `ManifestList`. Layout: `spec/table-layout.md` §5.2.

use apache_avro::types::Value;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::Result;
use crate::spec::avro::{Rec, check_version, read_records};
use crate::spec::avro_write::{
    AvroWriteOptions, TOP_RECORD, array, field, nested, nfield, opt, record, simple_stats_schema,
    strings, write_container,
};
use crate::spec::binary_row::RowOrigin;
use crate::spec::data_file::SimpleStats;
use crate::spec::manifest::AVRO_MANIFEST_FORMAT;

/// Metadata of one manifest file, as listed in a manifest list.
///
/// Source: Java `org.apache.paimon.manifest.ManifestFileMeta`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ManifestFileMeta {
    /// `_FILE_NAME`: manifest file name (in `manifest/`).
    pub file_name: String,
    /// `_FILE_SIZE`: bytes of the manifest file.
    pub file_size: i64,
    /// `_NUM_ADDED_FILES`: ADD entries.
    pub num_added_files: i64,
    /// `_NUM_DELETED_FILES`: DELETE entries.
    pub num_deleted_files: i64,
    /// `_PARTITION_STATS`: min/max/null counts over the partition fields of the entries.
    pub partition_stats: SimpleStats,
    /// `_SCHEMA_ID`.
    pub schema_id: i64,
    /// `_MIN_BUCKET`.
    pub min_bucket: Option<i32>,
    /// `_MAX_BUCKET`.
    pub max_bucket: Option<i32>,
    /// `_MIN_LEVEL`.
    pub min_level: Option<i32>,
    /// `_MAX_LEVEL`.
    pub max_level: Option<i32>,
    /// `_MIN_ROW_ID`: min first row id over the entries (row tracking).
    pub min_row_id: Option<i64>,
    /// `_MAX_ROW_ID`: max last row id over the entries.
    pub max_row_id: Option<i64>,
    /// `_TOTAL_BUCKETS` (newer writers, pypaimon 2.1.0).
    pub total_buckets: Option<i32>,
    /// `_EXTRA_FILES` (newer writers).
    pub extra_files: Option<Vec<String>>,
}

impl ManifestFileMeta {
    fn decode(rec: &Rec<'_>, origin: &RowOrigin) -> Result<Self> {
        check_version(rec, 2)?;
        Ok(ManifestFileMeta {
            file_name: rec.string("_FILE_NAME")?,
            file_size: rec.long("_FILE_SIZE")?,
            num_added_files: rec.long("_NUM_ADDED_FILES")?,
            num_deleted_files: rec.long("_NUM_DELETED_FILES")?,
            partition_stats: SimpleStats::decode(
                &rec.record("_PARTITION_STATS", "_PARTITION_STATS")?,
                origin,
            )?,
            schema_id: rec.long("_SCHEMA_ID")?,
            min_bucket: rec.opt_int("_MIN_BUCKET")?,
            max_bucket: rec.opt_int("_MAX_BUCKET")?,
            min_level: rec.opt_int("_MIN_LEVEL")?,
            max_level: rec.opt_int("_MAX_LEVEL")?,
            min_row_id: rec.opt_long("_MIN_ROW_ID")?,
            max_row_id: rec.opt_long("_MAX_ROW_ID")?,
            total_buckets: rec.opt_int("_TOTAL_BUCKETS")?,
            extra_files: rec.opt_string_array("_EXTRA_FILES")?,
        })
    }
}

/// Decode a manifest list file (Avro object container of `ManifestFileMeta` records,
/// `_VERSION` 2).
///
/// Fields are matched by name from the writer schema; unknown fields are ignored and missing
/// nullable fields read as `None`.
///
/// # Errors
/// [`Error::Corrupt`](crate::Error::Corrupt) (format `avro-manifest`, naming `path`) for bad
/// Avro or a missing/mistyped field; [`Error::Unsupported`](crate::Error::Unsupported) for
/// `_VERSION` ≠ 2.
pub fn decode_manifest_list(bytes: &[u8], path: &str) -> Result<Vec<ManifestFileMeta>> {
    let records = read_records(bytes, path, AVRO_MANIFEST_FORMAT)?;
    let origin = RowOrigin::new(path);
    records
        .iter()
        .enumerate()
        .map(|(i, fields)| {
            let what = format!("manifest file meta {i}");
            ManifestFileMeta::decode(
                &Rec::new(fields, path, AVRO_MANIFEST_FORMAT, &what),
                &origin,
            )
        })
        .collect()
}

/// Encode a manifest list with Java's Avro schema (`_VERSION` 2 then the `ManifestFileMeta`
/// fields, including the newer nullable `_TOTAL_BUCKETS` and `_EXTRA_FILES`;
/// `spec/table-layout.md` §5.2).
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) if Avro encoding fails.
pub fn encode_manifest_list(
    metas: &[ManifestFileMeta],
    options: &AvroWriteOptions,
) -> Result<Vec<u8>> {
    let schema = record(
        TOP_RECORD,
        vec![
            field("_VERSION", json!("int")),
            field("_FILE_NAME", json!("string")),
            field("_FILE_SIZE", json!("long")),
            field("_NUM_ADDED_FILES", json!("long")),
            field("_NUM_DELETED_FILES", json!("long")),
            field(
                "_PARTITION_STATS",
                simple_stats_schema(&nested(TOP_RECORD, "_PARTITION_STATS")),
            ),
            field("_SCHEMA_ID", json!("long")),
            nfield("_MIN_BUCKET", json!("int")),
            nfield("_MAX_BUCKET", json!("int")),
            nfield("_MIN_LEVEL", json!("int")),
            nfield("_MAX_LEVEL", json!("int")),
            nfield("_MIN_ROW_ID", json!("long")),
            nfield("_MAX_ROW_ID", json!("long")),
            nfield("_TOTAL_BUCKETS", json!("int")),
            nfield("_EXTRA_FILES", array(json!("string"))),
        ],
    );
    let records = metas
        .iter()
        .map(|m| {
            Value::Record(vec![
                ("_VERSION".into(), Value::Int(2)),
                ("_FILE_NAME".into(), Value::String(m.file_name.clone())),
                ("_FILE_SIZE".into(), Value::Long(m.file_size)),
                ("_NUM_ADDED_FILES".into(), Value::Long(m.num_added_files)),
                (
                    "_NUM_DELETED_FILES".into(),
                    Value::Long(m.num_deleted_files),
                ),
                ("_PARTITION_STATS".into(), m.partition_stats.to_avro()),
                ("_SCHEMA_ID".into(), Value::Long(m.schema_id)),
                ("_MIN_BUCKET".into(), opt(m.min_bucket, Value::Int)),
                ("_MAX_BUCKET".into(), opt(m.max_bucket, Value::Int)),
                ("_MIN_LEVEL".into(), opt(m.min_level, Value::Int)),
                ("_MAX_LEVEL".into(), opt(m.max_level, Value::Int)),
                ("_MIN_ROW_ID".into(), opt(m.min_row_id, Value::Long)),
                ("_MAX_ROW_ID".into(), opt(m.max_row_id, Value::Long)),
                ("_TOTAL_BUCKETS".into(), opt(m.total_buckets, Value::Int)),
                (
                    "_EXTRA_FILES".into(),
                    opt(m.extra_files.as_deref(), strings),
                ),
            ])
        })
        .collect();
    write_container(&schema, records, options)
}

/// The [`ManifestFileMeta`] of a manifest file holding `entries` (in file order), as the
/// writers compute it: ADD/DELETE counts, partition stats (per-field min/max over non-null
/// values and null counts, encoded with `partition_types`), bucket and level bounds, row id
/// bounds (`min first_row_id`, `max first_row_id + row_count − 1` over entries with a first
/// row id) and `_TOTAL_BUCKETS` (the entries' bucket count when it is a real one, > 0, as
/// pypaimon writes it; `None` otherwise).
///
/// Source: Java `org.apache.paimon.manifest.ManifestFile.ManifestEntryWriter#result`.
///
/// # Errors
/// [`Error::Corrupt`](crate::Error::Corrupt) if a partition row does not decode with
/// `partition_types`.
pub fn manifest_file_meta_for(
    file_name: &str,
    file_size: i64,
    schema_id: i64,
    entries: &[crate::spec::ManifestEntry],
    partition_types: &[crate::spec::DataType],
) -> Result<ManifestFileMeta> {
    use crate::spec::{BinaryRow, Datum, FileKind};

    let n = partition_types.len();
    let mut mins: Vec<Datum> = vec![Datum::Null; n];
    let mut maxs: Vec<Datum> = vec![Datum::Null; n];
    let mut nulls: Vec<i64> = vec![0; n];
    for e in entries {
        for (i, v) in e.partition.fields(partition_types)?.into_iter().enumerate() {
            if v.is_null() {
                nulls[i] += 1;
                continue;
            }
            if mins[i].is_null() || v < mins[i] {
                mins[i] = v.clone();
            }
            if maxs[i].is_null() || v > maxs[i] {
                maxs[i] = v;
            }
        }
    }
    let nullable: Vec<_> = partition_types
        .iter()
        .map(|t| t.with_nullable(true))
        .collect();
    let stats = SimpleStats {
        min_values: BinaryRow::encode(&mins, &nullable)?,
        max_values: BinaryRow::encode(&maxs, &nullable)?,
        null_counts: nulls.into_iter().map(Some).collect(),
    };
    let row_ids = entries.iter().filter_map(|e| {
        let first = e.file.first_row_id?;
        Some((
            first,
            first.saturating_add(e.file.row_count).saturating_sub(1),
        ))
    });
    let (min_row_id, max_row_id) = row_ids.fold((None, None), |(lo, hi), (a, b)| {
        (
            Some(lo.map_or(a, |x: i64| x.min(a))),
            Some(hi.map_or(b, |x: i64| x.max(b))),
        )
    });
    let adds = entries.iter().filter(|e| e.kind == FileKind::Add).count() as i64;
    Ok(ManifestFileMeta {
        file_name: file_name.to_owned(),
        file_size,
        num_added_files: adds,
        num_deleted_files: entries.len() as i64 - adds,
        partition_stats: stats,
        schema_id,
        min_bucket: entries.iter().map(|e| e.bucket).min(),
        max_bucket: entries.iter().map(|e| e.bucket).max(),
        min_level: entries.iter().map(|e| e.file.level).min(),
        max_level: entries.iter().map(|e| e.file.level).max(),
        min_row_id,
        max_row_id,
        total_buckets: entries.iter().map(|e| e.total_buckets).find(|b| *b > 0),
        extra_files: None,
    })
}
