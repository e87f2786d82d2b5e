//! Index manifest files (rows of `IndexManifestEntry`): deletion-vector, hash and global index
//! files.
//!
//! Source: Java `org.apache.paimon.manifest.IndexManifestEntry`,
//! `IndexManifestEntrySerializer`, `org.apache.paimon.index.IndexFileMeta`,
//! `DeletionVectorMeta`, `GlobalIndexMeta`. Layout: `spec/table-layout.md` §7.1.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::spec::avro::{Rec, check_version, read_records};
use crate::spec::binary_row::BinaryRow;
use crate::spec::data_file::join;
use crate::spec::manifest::{AVRO_MANIFEST_FORMAT, FileKind};

/// Index type of deletion-vector index files.
pub const DELETION_VECTORS_INDEX: &str = "DELETION_VECTORS";
/// Index type of dynamic-bucket hash index files.
pub const HASH_INDEX: &str = "HASH";

/// Where the deletion vector of one data file lies in a DV index file.
///
/// Source: Java `org.apache.paimon.index.DeletionVectorMeta` (`f0`, `f1`, `f2`,
/// `_CARDINALITY`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeletionVectorMeta {
    /// `f0`: data file name.
    pub data_file_name: String,
    /// `f1`: byte offset of the entry (its length field) in the index file.
    pub offset: i32,
    /// `f2`: length as recorded (32-bit: bitmap length; 64-bit: whole entry).
    pub length: i32,
    /// `_CARDINALITY`: number of deleted rows, if recorded.
    pub cardinality: Option<i64>,
}

/// Metadata of a global index file.
///
/// Source: Java `org.apache.paimon.index.GlobalIndexMeta`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GlobalIndexMeta {
    /// `_ROW_RANGE_START`.
    pub row_range_start: i64,
    /// `_ROW_RANGE_END`.
    pub row_range_end: i64,
    /// `_INDEX_FIELD_ID`.
    pub index_field_id: i32,
    /// `_EXTRA_FIELD_IDS`.
    pub extra_field_ids: Option<Vec<i32>>,
    /// `_INDEX_META`.
    pub index_meta: Option<Vec<u8>>,
    /// `_SOURCE_META`.
    pub source_meta: Option<Vec<u8>>,
}

/// Metadata of one index file.
///
/// Source: Java `org.apache.paimon.index.IndexFileMeta`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IndexFileMeta {
    /// `_INDEX_TYPE`: [`HASH_INDEX`], [`DELETION_VECTORS_INDEX`] or a global index type.
    pub index_type: String,
    /// `_FILE_NAME`: in `index/` unless external.
    pub file_name: String,
    /// `_FILE_SIZE`: bytes.
    pub file_size: i64,
    /// `_ROW_COUNT`: HASH: number of ints; DV: number of data files with a DV.
    pub row_count: i64,
    /// `_DELETIONS_VECTORS_RANGES`: DV only, in write order.
    pub dv_ranges: Option<Vec<DeletionVectorMeta>>,
    /// `_EXTERNAL_PATH`: full path when external.
    pub external_path: Option<String>,
    /// `_GLOBAL_INDEX`: global index only.
    pub global_index: Option<GlobalIndexMeta>,
}

impl IndexFileMeta {
    /// Path of the index file: `external_path` if set, else `<index_dir>/<file_name>`
    /// (`index_dir` is `<table root>/index` by default).
    pub fn path_in(&self, index_dir: &str) -> String {
        match &self.external_path {
            Some(p) => p.clone(),
            None => join(index_dir, &self.file_name),
        }
    }
}

/// One row of an index manifest.
///
/// Source: Java `org.apache.paimon.manifest.IndexManifestEntry`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IndexManifestEntry {
    /// `_KIND` (stored index manifests hold only ADD).
    pub kind: FileKind,
    /// `_PARTITION`.
    pub partition: BinaryRow,
    /// `_BUCKET`.
    pub bucket: i32,
    /// The index file.
    pub index_file: IndexFileMeta,
}

impl IndexManifestEntry {
    fn decode(rec: &Rec<'_>, origin: &Arc<str>) -> Result<Self> {
        check_version(rec, 1)?;
        let dv_ranges = rec
            .opt_record_array("_DELETIONS_VECTORS_RANGES", "deletion vector range")?
            .map(|items| {
                items
                    .iter()
                    .map(|r| {
                        Ok(DeletionVectorMeta {
                            data_file_name: r.string("f0")?,
                            offset: r.int("f1")?,
                            length: r.int("f2")?,
                            cardinality: r.opt_long("_CARDINALITY")?,
                        })
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .transpose()?;
        let global_index = rec
            .opt_record("_GLOBAL_INDEX", "_GLOBAL_INDEX")?
            .map(|g| {
                Ok::<_, crate::Error>(GlobalIndexMeta {
                    row_range_start: g.long("_ROW_RANGE_START")?,
                    row_range_end: g.long("_ROW_RANGE_END")?,
                    index_field_id: g.int("_INDEX_FIELD_ID")?,
                    extra_field_ids: g.opt_int_array("_EXTRA_FIELD_IDS")?,
                    index_meta: g.opt_bytes("_INDEX_META")?,
                    source_meta: g.opt_bytes("_SOURCE_META")?,
                })
            })
            .transpose()?;
        Ok(IndexManifestEntry {
            kind: FileKind::decode(rec)?,
            partition: BinaryRow::from_serialized_shared(rec.bytes("_PARTITION")?, origin.clone())?,
            bucket: rec.int("_BUCKET")?,
            index_file: IndexFileMeta {
                index_type: rec.string("_INDEX_TYPE")?,
                file_name: rec.string("_FILE_NAME")?,
                file_size: rec.long("_FILE_SIZE")?,
                row_count: rec.long("_ROW_COUNT")?,
                dv_ranges,
                external_path: rec.opt_string("_EXTERNAL_PATH")?,
                global_index,
            },
        })
    }
}

/// Decode an index manifest (Avro object container of `IndexManifestEntry` records,
/// `_VERSION` 1). The snapshot's index manifest is a full list, not a delta.
///
/// # Errors
/// [`Error::Corrupt`](crate::Error::Corrupt) (format `avro-manifest`, naming `path`) for bad
/// Avro or a missing/mistyped field; [`Error::Unsupported`](crate::Error::Unsupported) for
/// `_VERSION` ≠ 1.
pub fn decode_index_manifest(bytes: &[u8], path: &str) -> Result<Vec<IndexManifestEntry>> {
    let records = read_records(bytes, path, AVRO_MANIFEST_FORMAT)?;
    let origin: Arc<str> = Arc::from(path);
    records
        .iter()
        .enumerate()
        .map(|(i, fields)| {
            let what = format!("index manifest entry {i}");
            IndexManifestEntry::decode(
                &Rec::new(fields, path, AVRO_MANIFEST_FORMAT, &what),
                &origin,
            )
        })
        .collect()
}
