//! Manifest list files (rows of `ManifestFileMeta`).
//!
//! Source: Java `org.apache.paimon.manifest.ManifestFileMeta`, `ManifestFileMetaSerializer`,
//! `ManifestList`. Layout: `spec/table-layout.md` §5.2.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::spec::avro::{Rec, check_version, read_records};
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
    fn decode(rec: &Rec<'_>, origin: &Arc<str>) -> Result<Self> {
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
    let origin: Arc<str> = Arc::from(path);
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
