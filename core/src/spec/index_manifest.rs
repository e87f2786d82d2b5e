//! Index manifest files (rows of `IndexManifestEntry`): deletion-vector, hash and global index
//! files.
//!
//! Source: Java `org.apache.paimon.manifest.IndexManifestEntry`,
//! `IndexManifestEntrySerializer`, `org.apache.paimon.index.IndexFileMeta`,
//! `DeletionVectorMeta`, `GlobalIndexMeta`. Layout: `spec/table-layout.md` §7.1.

use apache_avro::types::Value;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::Result;
use crate::spec::avro::{Rec, check_version, read_records};
use crate::spec::avro_write::{
    AvroWriteOptions, TOP_RECORD, array, field, nested, nfield, opt, record, write_container,
};
use crate::spec::binary_row::{BinaryRow, RowOrigin};
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
    fn decode(rec: &Rec<'_>, origin: &RowOrigin) -> Result<Self> {
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
    let origin = RowOrigin::new(path);
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

/// Encode an index manifest with Java's Avro schema (`_VERSION` 1 then the
/// `IndexManifestEntry` fields; `spec/table-layout.md` §7.1).
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) if Avro encoding fails.
pub fn encode_index_manifest(
    entries: &[IndexManifestEntry],
    options: &AvroWriteOptions,
) -> Result<Vec<u8>> {
    let dv_name = nested(TOP_RECORD, "_DELETIONS_VECTORS_RANGES");
    let gi_name = nested(TOP_RECORD, "_GLOBAL_INDEX");
    let schema = record(
        TOP_RECORD,
        vec![
            field("_VERSION", json!("int")),
            field("_KIND", json!("int")),
            field("_PARTITION", json!("bytes")),
            field("_BUCKET", json!("int")),
            field("_INDEX_TYPE", json!("string")),
            field("_FILE_NAME", json!("string")),
            field("_FILE_SIZE", json!("long")),
            field("_ROW_COUNT", json!("long")),
            nfield(
                "_DELETIONS_VECTORS_RANGES",
                array(json!([
                    "null",
                    record(
                        &dv_name,
                        vec![
                            field("f0", json!("string")),
                            field("f1", json!("int")),
                            field("f2", json!("int")),
                            nfield("_CARDINALITY", json!("long")),
                        ],
                    )
                ])),
            ),
            nfield("_EXTERNAL_PATH", json!("string")),
            nfield(
                "_GLOBAL_INDEX",
                record(
                    &gi_name,
                    vec![
                        field("_ROW_RANGE_START", json!("long")),
                        field("_ROW_RANGE_END", json!("long")),
                        field("_INDEX_FIELD_ID", json!("int")),
                        nfield("_EXTRA_FIELD_IDS", array(json!("int"))),
                        nfield("_INDEX_META", json!("bytes")),
                        nfield("_SOURCE_META", json!("bytes")),
                    ],
                ),
            ),
        ],
    );
    let records = entries
        .iter()
        .map(|e| {
            let f = &e.index_file;
            Value::Record(vec![
                ("_VERSION".into(), Value::Int(1)),
                ("_KIND".into(), Value::Int(e.kind.to_byte())),
                (
                    "_PARTITION".into(),
                    Value::Bytes(e.partition.to_serialized()),
                ),
                ("_BUCKET".into(), Value::Int(e.bucket)),
                ("_INDEX_TYPE".into(), Value::String(f.index_type.clone())),
                ("_FILE_NAME".into(), Value::String(f.file_name.clone())),
                ("_FILE_SIZE".into(), Value::Long(f.file_size)),
                ("_ROW_COUNT".into(), Value::Long(f.row_count)),
                (
                    "_DELETIONS_VECTORS_RANGES".into(),
                    opt(f.dv_ranges.as_deref(), |ranges| {
                        Value::Array(
                            ranges
                                .iter()
                                .map(|r| {
                                    opt(Some(r), |r| {
                                        Value::Record(vec![
                                            ("f0".into(), Value::String(r.data_file_name.clone())),
                                            ("f1".into(), Value::Int(r.offset)),
                                            ("f2".into(), Value::Int(r.length)),
                                            (
                                                "_CARDINALITY".into(),
                                                opt(r.cardinality, Value::Long),
                                            ),
                                        ])
                                    })
                                })
                                .collect(),
                        )
                    }),
                ),
                (
                    "_EXTERNAL_PATH".into(),
                    opt(f.external_path.clone(), Value::String),
                ),
                (
                    "_GLOBAL_INDEX".into(),
                    opt(f.global_index.as_ref(), |g| {
                        Value::Record(vec![
                            ("_ROW_RANGE_START".into(), Value::Long(g.row_range_start)),
                            ("_ROW_RANGE_END".into(), Value::Long(g.row_range_end)),
                            ("_INDEX_FIELD_ID".into(), Value::Int(g.index_field_id)),
                            (
                                "_EXTRA_FIELD_IDS".into(),
                                opt(g.extra_field_ids.as_deref(), |ids| {
                                    Value::Array(ids.iter().map(|i| Value::Int(*i)).collect())
                                }),
                            ),
                            (
                                "_INDEX_META".into(),
                                opt(g.index_meta.clone(), Value::Bytes),
                            ),
                            (
                                "_SOURCE_META".into(),
                                opt(g.source_meta.clone(), Value::Bytes),
                            ),
                        ])
                    }),
                ),
            ])
        })
        .collect();
    write_container(&schema, records, options)
}

/// Combine the entries of the previous index manifest with a commit's index changes into the
/// next (full) index manifest.
///
/// Source: Java `org.apache.paimon.manifest.IndexManifestFileHandler` (`spec/table-layout.md`
/// §7.1), per index type:
/// * `DELETION_VECTORS` of bucket-unaware tables (`bucket_unaware`): keyed by index file name;
///   ADD of an existing name, or of a DV for a data file that already has one, is an error;
///   DELETE must exist.
/// * `HASH` and bucketed `DELETION_VECTORS`: keyed by (partition, bucket, index type); all
///   DELETEs first, then ADDs replace.
/// * other (global) types: keyed by file name; DELETEs (must exist) first, then ADDs.
///   (Java's extra overlap validation of retained global index files is not done here.)
///
/// Output order is deterministic: index types in ascending order; within a type, surviving
/// previous entries in their order, then added entries in commit order.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) when a rule above is violated, or a previous
/// entry is not an ADD.
pub fn combine_index_entries(
    previous: &[IndexManifestEntry],
    changes: &[IndexManifestEntry],
    bucket_unaware: bool,
) -> Result<Vec<IndexManifestEntry>> {
    use std::collections::BTreeSet;

    use crate::error::Error;

    if let Some(e) = previous.iter().find(|e| e.kind != FileKind::Add) {
        return Err(Error::invalid(format!(
            "previous index manifest holds a DELETE of {}",
            e.index_file.file_name
        )));
    }
    let mut types: BTreeSet<&str> = BTreeSet::new();
    types.extend(previous.iter().map(|e| e.index_file.index_type.as_str()));
    types.extend(changes.iter().map(|e| e.index_file.index_type.as_str()));
    let mut out = Vec::new();
    for ty in types {
        let prev: Vec<&IndexManifestEntry> = previous
            .iter()
            .filter(|e| e.index_file.index_type == ty)
            .collect();
        let new: Vec<&IndexManifestEntry> = changes
            .iter()
            .filter(|e| e.index_file.index_type == ty)
            .collect();
        let mut kept: Vec<IndexManifestEntry> = prev.iter().map(|e| (*e).clone()).collect();
        if ty == DELETION_VECTORS_INDEX && bucket_unaware {
            let mut dv_files: BTreeSet<String> = kept
                .iter()
                .flat_map(|e| e.index_file.dv_ranges.iter().flatten())
                .map(|r| r.data_file_name.clone())
                .collect();
            for e in new {
                let name = &e.index_file.file_name;
                let ranges = e.index_file.dv_ranges.iter().flatten();
                let pos = kept.iter().position(|k| &k.index_file.file_name == name);
                match e.kind {
                    FileKind::Add => {
                        if pos.is_some() {
                            return Err(Error::invalid(format!(
                                "trying to add index file {name} which is already added"
                            )));
                        }
                        for r in ranges {
                            if !dv_files.insert(r.data_file_name.clone()) {
                                return Err(Error::invalid(format!(
                                    "trying to add a deletion vector for data file {} which \
                                     already has one",
                                    r.data_file_name
                                )));
                            }
                        }
                        kept.push(e.clone());
                    }
                    FileKind::Delete => {
                        let Some(pos) = pos else {
                            return Err(Error::invalid(format!(
                                "trying to delete index file {name} which does not exist"
                            )));
                        };
                        for r in ranges {
                            if !dv_files.remove(&r.data_file_name) {
                                return Err(Error::invalid(format!(
                                    "trying to delete the deletion vector of data file {} \
                                     which does not exist",
                                    r.data_file_name
                                )));
                            }
                        }
                        kept.remove(pos);
                    }
                }
            }
        } else {
            let bucketed = ty == DELETION_VECTORS_INDEX || ty == HASH_INDEX;
            let same = |a: &IndexManifestEntry, b: &IndexManifestEntry| {
                if bucketed {
                    a.partition == b.partition && a.bucket == b.bucket
                } else {
                    a.index_file.file_name == b.index_file.file_name
                }
            };
            for e in new.iter().filter(|e| e.kind == FileKind::Delete) {
                let before = kept.len();
                kept.retain(|k| !same(k, e));
                if !bucketed && kept.len() == before {
                    return Err(Error::invalid(format!(
                        "trying to delete global index file {} which does not exist",
                        e.index_file.file_name
                    )));
                }
            }
            for e in new.iter().filter(|e| e.kind == FileKind::Add) {
                kept.retain(|k| !same(k, e));
                kept.push((*e).clone());
            }
        }
        out.extend(kept);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        kind: FileKind,
        ty: &str,
        name: &str,
        bucket: i32,
        dv_files: &[&str],
    ) -> IndexManifestEntry {
        IndexManifestEntry {
            kind,
            partition: BinaryRow::empty(),
            bucket,
            index_file: IndexFileMeta {
                index_type: ty.into(),
                file_name: name.into(),
                file_size: 1,
                row_count: dv_files.len() as i64,
                dv_ranges: (ty == DELETION_VECTORS_INDEX).then(|| {
                    dv_files
                        .iter()
                        .map(|f| DeletionVectorMeta {
                            data_file_name: (*f).into(),
                            offset: 1,
                            length: 1,
                            cardinality: Some(1),
                        })
                        .collect()
                }),
                external_path: None,
                global_index: None,
            },
        }
    }

    fn names(v: &[IndexManifestEntry]) -> Vec<&str> {
        v.iter().map(|e| e.index_file.file_name.as_str()).collect()
    }

    #[test]
    fn combine_rules() {
        use FileKind::{Add, Delete};
        let dv = DELETION_VECTORS_INDEX;
        // Bucketed (HASH and bucketed DV): deletes first, then adds replace per bucket.
        let prev = vec![
            entry(Add, HASH_INDEX, "h0", 0, &[]),
            entry(Add, HASH_INDEX, "h1", 1, &[]),
            entry(Add, dv, "d0", 0, &["a"]),
        ];
        let changes = vec![
            entry(Add, HASH_INDEX, "h1b", 1, &[]),
            entry(Delete, HASH_INDEX, "h1", 1, &[]),
            entry(Add, dv, "d0b", 0, &["a", "b"]),
        ];
        let out = combine_index_entries(&prev, &changes, false).unwrap();
        assert_eq!(names(&out), vec!["d0b", "h0", "h1b"]);
        // Bucket-unaware DVs: keyed by file name, one DV per data file.
        let out = combine_index_entries(
            &[entry(Add, dv, "d0", 0, &["a"])],
            &[
                entry(Delete, dv, "d0", 0, &["a"]),
                entry(Add, dv, "d1", 0, &["a", "b"]),
            ],
            true,
        )
        .unwrap();
        assert_eq!(names(&out), vec!["d1"]);
        assert!(
            combine_index_entries(
                &[entry(Add, dv, "d0", 0, &["a"])],
                &[entry(Add, dv, "d1", 0, &["a"])],
                true
            )
            .is_err()
        );
        assert!(combine_index_entries(&[], &[entry(Delete, dv, "d0", 0, &["a"])], true).is_err());
        assert!(
            combine_index_entries(
                &[entry(Add, dv, "d0", 0, &[])],
                &[entry(Add, dv, "d0", 0, &[])],
                true
            )
            .is_err()
        );
        // Global index types: keyed by file name, deleting a missing one is an error.
        assert!(
            combine_index_entries(&[], &[entry(Delete, "btree", "g0", 0, &[])], false).is_err()
        );
        let out = combine_index_entries(
            &[entry(Add, "btree", "g0", 0, &[])],
            &[entry(Add, "btree", "g1", 0, &[])],
            false,
        )
        .unwrap();
        assert_eq!(names(&out), vec!["g0", "g1"]);
    }
}
