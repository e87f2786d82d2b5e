//! Manifest files (rows of `ManifestEntry`) and the entry-merge rule.
//!
//! Source: Java `org.apache.paimon.manifest.ManifestEntry`, `ManifestEntrySerializer`,
//! `FileKind`, `FileEntry` (`Identifier`, `mergeEntries`). Layout: `spec/table-layout.md`
//! §5.3-5.4.

use std::collections::hash_map::DefaultHasher;
use std::hash::{BuildHasher, BuildHasherDefault};

#[cfg(test)]
use apache_avro::types::Value;
use hashbrown::HashTable;
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};

use crate::error::Result;
use crate::spec::avro::{Rec, check_version, for_each_record};
use crate::spec::avro_write::{
    AvroWriteOptions, TOP_RECORD, field, nested, put_bytes, put_long, record,
    write_encoded_container,
};
use crate::spec::binary_row::{BinaryRow, RowOrigin};
use crate::spec::data_file::{DataFileMeta, corrupt_manifest};

/// Format name used in errors of manifest-family files.
pub const AVRO_MANIFEST_FORMAT: &str = "avro-manifest";

/// Kind of a manifest entry.
///
/// Source: Java `org.apache.paimon.manifest.FileKind` (`_KIND`: 0 = ADD, 1 = DELETE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FileKind {
    /// The file is added.
    Add,
    /// The file is deleted.
    Delete,
}

impl FileKind {
    /// The stored byte value.
    pub fn to_byte(self) -> i32 {
        match self {
            FileKind::Add => 0,
            FileKind::Delete => 1,
        }
    }

    /// From the stored value; `None` if unknown.
    pub fn from_byte(v: i32) -> Option<Self> {
        match v {
            0 => Some(FileKind::Add),
            1 => Some(FileKind::Delete),
            _ => None,
        }
    }

    pub(crate) fn decode(rec: &Rec<'_>) -> Result<Self> {
        let v = rec.int("_KIND")?;
        FileKind::from_byte(v).ok_or_else(|| rec.corrupt(format!("unknown _KIND {v}")))
    }
}

/// One row of a manifest file: a data file added to or deleted from a (partition, bucket).
///
/// Source: Java `org.apache.paimon.manifest.ManifestEntry`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// `_KIND`.
    pub kind: FileKind,
    /// `_PARTITION`: partition values (fields in `partitionKeys` order). Its
    /// [`BinaryRow::origin`] is the manifest file it was read from.
    pub partition: BinaryRow,
    /// `_BUCKET`.
    pub bucket: i32,
    /// `_TOTAL_BUCKETS`: bucket count when written (−1 unaware/dynamic, −2 postpone with
    /// pypaimon).
    pub total_buckets: i32,
    /// `_FILE`.
    pub file: DataFileMeta,
}

/// Identity of a data file across manifest entries.
///
/// Source: Java `org.apache.paimon.manifest.FileEntry.Identifier`: (partition bytes,
/// bucket, level, file name, extra files, embedded index, external path).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileIdentifier {
    /// Partition row.
    pub partition: BinaryRow,
    /// Bucket.
    pub bucket: i32,
    /// Level.
    pub level: i32,
    /// File name.
    pub file_name: String,
    /// Extra files.
    pub extra_files: Vec<String>,
    /// Embedded index bytes.
    pub embedded_index: Option<Vec<u8>>,
    /// External path.
    pub external_path: Option<String>,
}

/// [`FileIdentifier`] borrowed from its entry: what [`merge_entries`]' index hashes and
/// compares (equal exactly when the owned identifiers are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileIdentifierRef<'a> {
    partition: &'a BinaryRow,
    bucket: i32,
    level: i32,
    file_name: &'a str,
    extra_files: &'a [String],
    embedded_index: Option<&'a [u8]>,
    external_path: Option<&'a str>,
}

impl ManifestEntry {
    fn identifier_ref(&self) -> FileIdentifierRef<'_> {
        FileIdentifierRef {
            partition: &self.partition,
            bucket: self.bucket,
            level: self.file.level,
            file_name: &self.file.file_name,
            extra_files: &self.file.extra_files,
            embedded_index: self.file.embedded_index.as_deref(),
            external_path: self.file.external_path.as_deref(),
        }
    }

    /// The file identity used by [`merge_entries`].
    pub fn identifier(&self) -> FileIdentifier {
        FileIdentifier {
            partition: self.partition.clone(),
            bucket: self.bucket,
            level: self.file.level,
            file_name: self.file.file_name.clone(),
            extra_files: self.file.extra_files.clone(),
            embedded_index: self.file.embedded_index.clone(),
            external_path: self.file.external_path.clone(),
        }
    }

    fn decode(rec: &Rec<'_>, origin: &RowOrigin) -> Result<Self> {
        check_version(rec, 2)?;
        Ok(ManifestEntry {
            kind: FileKind::decode(rec)?,
            partition: BinaryRow::from_serialized_shared(rec.bytes("_PARTITION")?, origin.clone())?,
            bucket: rec.int("_BUCKET")?,
            total_buckets: rec.int("_TOTAL_BUCKETS")?,
            file: DataFileMeta::decode(&rec.record("_FILE", "_FILE")?, origin)?,
        })
    }
}

/// Decode a manifest file (Avro object container of `ManifestEntry` records, `_VERSION` 2).
///
/// Fields are matched by name from the writer schema; unknown fields are ignored and missing
/// nullable fields read as `None`. Every [`BinaryRow`] of the result has `path` as its origin.
///
/// # Errors
/// [`Error::Corrupt`](crate::Error::Corrupt) (format `avro-manifest`, naming `path`) for bad
/// Avro, a missing required field, a wrong field type or a bad binary row;
/// [`Error::Unsupported`](crate::Error::Unsupported) for `_VERSION` ≠ 2 (1 asks to recreate
/// the table).
pub fn decode_manifest(bytes: &[u8], path: &str) -> Result<Vec<ManifestEntry>> {
    let mut entries = Vec::new();
    decode_manifest_into(bytes, path, &mut entries)?;
    Ok(entries)
}

/// As [`decode_manifest`], appending the entries to `out` (a planner gathering many manifests
/// into one `Vec` of known capacity). On error, `out` may hold some entries of this file.
///
/// # Errors
/// As [`decode_manifest`].
pub fn decode_manifest_into(bytes: &[u8], path: &str, out: &mut Vec<ManifestEntry>) -> Result<()> {
    // Each entry is decoded as its Avro record comes: a manifest of many entries is never
    // held as generic Avro values all at once (they take several times the entries' size).
    let origin = RowOrigin::new(path);
    for_each_record(bytes, path, AVRO_MANIFEST_FORMAT, |i, fields| {
        let what = format!("manifest entry {i}");
        out.push(ManifestEntry::decode(
            &Rec::new(&fields, path, AVRO_MANIFEST_FORMAT, &what),
            &origin,
        )?);
        Ok(())
    })
}

/// Encode a manifest file with Java's Avro schema (`_VERSION` 2 then the `ManifestEntry`
/// fields; `spec/table-layout.md` §5.3, §5.5).
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) if Avro encoding fails.
pub fn encode_manifest(entries: &[ManifestEntry], options: &AvroWriteOptions) -> Result<Vec<u8>> {
    // Each entry laid out straight into its block: a value tree per entry, validated
    // against the schema field by field, cost ~10x the encoding (a commit that rewrites the
    // manifests of a large table spent nearly all its time there).
    write_encoded_container(&manifest_schema(), entries, put_entry, options)
}

/// Java's Avro schema of a manifest file.
fn manifest_schema() -> Json {
    record(
        TOP_RECORD,
        vec![
            field("_VERSION", json!("int")),
            field("_KIND", json!("int")),
            field("_PARTITION", json!("bytes")),
            field("_BUCKET", json!("int")),
            field("_TOTAL_BUCKETS", json!("int")),
            field(
                "_FILE",
                DataFileMeta::avro_schema(&nested(TOP_RECORD, "_FILE")),
            ),
        ],
    )
}

/// One entry of a manifest file in Avro's binary encoding ([`manifest_schema`]).
fn put_entry(out: &mut Vec<u8>, e: &ManifestEntry) {
    put_long(out, 2);
    put_long(out, i64::from(e.kind.to_byte()));
    put_bytes(out, e.partition.serialized());
    put_long(out, i64::from(e.bucket));
    put_long(out, i64::from(e.total_buckets));
    e.file.put_avro(out);
}

/// The value tree [`encode_manifest`] once built for `write_container`: the oracle its
/// direct encoding is checked against.
#[cfg(test)]
pub(crate) fn encode_manifest_values(
    entries: &[ManifestEntry],
    options: &AvroWriteOptions,
) -> Result<Vec<u8>> {
    let records = entries
        .iter()
        .map(|e| {
            Value::Record(vec![
                ("_VERSION".into(), Value::Int(2)),
                ("_KIND".into(), Value::Int(e.kind.to_byte())),
                (
                    "_PARTITION".into(),
                    Value::Bytes(e.partition.to_serialized()),
                ),
                ("_BUCKET".into(), Value::Int(e.bucket)),
                ("_TOTAL_BUCKETS".into(), Value::Int(e.total_buckets)),
                ("_FILE".into(), e.file.to_avro()),
            ])
        })
        .collect();
    crate::spec::avro_write::write_container(&manifest_schema(), records, options)
}

/// Merge manifest entries read in order (base manifests, then delta manifests).
///
/// Source: Java `FileEntry#mergeEntries`. ADD puts the identity; DELETE of a present identity
/// removes both; DELETE of an absent identity is kept (its ADD is in an earlier manifest, e.g.
/// for an incremental read). Result order: first insertion order of the surviving entries.
/// The live data files of a snapshot are the `Add` entries of the result.
///
/// # Errors
/// [`Error::Corrupt`](crate::Error::Corrupt) naming the manifest of the offending entry (the
/// origin of its partition row) when an ADD repeats an identity already present.
pub fn merge_entries(
    entries: impl IntoIterator<Item = ManifestEntry>,
) -> Result<Vec<ManifestEntry>> {
    // Merged in place (a `Vec` given is reused): only a position per identity and a keep flag
    // per entry are held beside the entries, never a second copy of them or of their
    // identities (the index hashes an entry's identity and compares entries themselves).
    let mut entries: Vec<ManifestEntry> = entries.into_iter().collect();
    let mut keep = vec![true; entries.len()];
    let hasher = BuildHasherDefault::<DefaultHasher>::default();
    let rehash = |&i: &usize| hasher.hash_one(entries[i].identifier_ref());
    let mut index: HashTable<usize> = HashTable::with_capacity(entries.len());
    for (pos, entry) in entries.iter().enumerate() {
        let id = entry.identifier_ref();
        let hash = hasher.hash_one(id);
        let same = |&i: &usize| entries[i].identifier_ref() == id;
        match entry.kind {
            FileKind::Add => {
                if index.find(hash, same).is_some() {
                    return Err(corrupt_manifest(
                        entry.partition.origin(),
                        format!(
                            "trying to add file {} (bucket {}, level {}) which is already added",
                            entry.file.file_name, entry.bucket, entry.file.level
                        ),
                    ));
                }
                index.insert_unique(hash, pos, rehash);
            }
            FileKind::Delete => match index.find_entry(hash, same) {
                Ok(added) => {
                    let (i, _) = added.remove();
                    keep[i] = false;
                    keep[pos] = false;
                }
                Err(absent) => {
                    absent.into_table().insert_unique(hash, pos, rehash);
                }
            },
        }
    }
    drop(index);
    let mut flags = keep.into_iter();
    entries.retain(|_| flags.next().unwrap_or(true));
    Ok(entries)
}

#[cfg(test)]
mod encode_tests {
    use super::*;
    use crate::spec::avro_write::EVERY_CODEC;
    use crate::spec::data_file::{FileSource, NullCounts, SimpleStats};
    use crate::spec::{DataType, Datum, TypeKind};

    fn row(values: &[i64]) -> BinaryRow {
        let types = vec![DataType::not_null(TypeKind::BigInt); values.len()];
        let datums: Vec<Datum> = values.iter().map(|v| Datum::BigInt(*v)).collect();
        BinaryRow::encode(&datums, &types).unwrap()
    }

    /// Entries with every optional field set and unset, arrays empty and not, negative
    /// numbers, unknown null counts, rows and strings of many lengths.
    fn entries(n: usize) -> Vec<ManifestEntry> {
        let strs = |i: usize, k: usize| (0..k).map(|j| format!("c{}-{}", i, j)).collect();
        (0..n)
            .map(|i| {
                let stats = |w: usize| SimpleStats {
                    min_values: row(&vec![-(i as i64); w]),
                    max_values: row(&vec![i as i64 * 1_000_003; w]),
                    null_counts: NullCounts::from(
                        (0..w)
                            .map(|j| (j % 3 != 1).then_some((i * j) as i64))
                            .collect::<Vec<_>>(),
                    ),
                };
                ManifestEntry {
                    kind: if i % 5 == 4 {
                        FileKind::Delete
                    } else {
                        FileKind::Add
                    },
                    partition: if i % 2 == 0 {
                        BinaryRow::empty()
                    } else {
                        row(&[i as i64 % 7])
                    },
                    bucket: i as i32 % 9 - 1,
                    total_buckets: if i % 4 == 0 { -1 } else { 8 },
                    file: DataFileMeta {
                        file_name: format!("data-{}-{}.parquet", "x".repeat(i % 70), i),
                        file_size: (i as i64) << 20,
                        row_count: i as i64 * 37,
                        min_key: row(&[i as i64]),
                        max_key: row(&[i as i64 + 5]),
                        key_stats: stats(i % 2),
                        value_stats: stats(i % 11),
                        min_sequence_number: i as i64 - 3,
                        max_sequence_number: i64::MAX - i as i64,
                        schema_id: (i % 3) as i64,
                        level: (i % 6) as i32,
                        extra_files: strs(i, i % 3),
                        creation_time_millis: (i % 2 == 0).then_some(1_700_000_000_000 + i as i64),
                        delete_row_count: (i % 3 == 0).then_some(i as i64 % 4),
                        embedded_index: (i % 7 == 0).then(|| vec![i as u8; i % 40]),
                        file_source: match i % 3 {
                            0 => None,
                            1 => Some(FileSource::Append),
                            _ => Some(FileSource::Compact),
                        },
                        value_stats_cols: match i % 4 {
                            0 => None,
                            1 => Some(Vec::new()),
                            _ => Some(strs(i, 3)),
                        },
                        external_path: (i % 5 == 0).then(|| format!("s3://b/p/{i}")),
                        first_row_id: (i % 2 == 1).then_some(i as i64 * 100),
                        write_cols: (i % 6 == 0).then(|| strs(i, i % 4)),
                        write_cols_sequences: (i % 8 == 0).then(|| vec![i as i64, -1, 0]),
                    },
                }
            })
            .collect()
    }

    /// The direct encoding gives the bytes of the value tree through the `apache-avro`
    /// writer, for every codec and across many blocks, and decodes to the entries.
    #[test]
    fn direct_encoding_matches_the_value_writer_byte_for_byte() {
        let entries = entries(1_500);
        for codec in EVERY_CODEC {
            let options = AvroWriteOptions {
                codec,
                sync_marker: *b"0123456789abcdef",
            };
            for n in [0, 1, 2, 300, entries.len()] {
                let direct = encode_manifest(&entries[..n], &options).unwrap();
                let values = encode_manifest_values(&entries[..n], &options).unwrap();
                assert!(direct == values, "{codec:?}, {n} entries");
            }
            let bytes = encode_manifest(&entries, &options).unwrap();
            assert_eq!(decode_manifest(&bytes, "m").unwrap(), entries, "{codec:?}");
        }
    }
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    fn entry(kind: FileKind, name: &str, bucket: i32) -> ManifestEntry {
        ManifestEntry {
            kind,
            partition: BinaryRow::empty(),
            bucket,
            total_buckets: 2,
            file: DataFileMeta {
                file_name: name.into(),
                row_count: 1,
                ..DataFileMeta::test_default()
            },
        }
    }

    fn names(entries: &[ManifestEntry]) -> Vec<(FileKind, String, i32)> {
        entries
            .iter()
            .map(|e| (e.kind, e.file.file_name.clone(), e.bucket))
            .collect()
    }

    #[test]
    fn merging_drops_added_then_deleted_files_and_keeps_order_and_unmatched_deletes() {
        use FileKind::{Add, Delete};
        let merged = merge_entries(vec![
            entry(Add, "a", 0),
            entry(Add, "b", 0),
            entry(Add, "a", 1), // another identity: same name, other bucket
            entry(Delete, "a", 0),
            entry(Delete, "c", 0), // its ADD is in an earlier manifest: kept
            entry(Add, "d", 1),
            entry(Delete, "e", 1),
            entry(Delete, "e", 1), // a second DELETE of a kept DELETE removes both
        ])
        .unwrap();
        assert_eq!(
            names(&merged),
            vec![
                (Add, "b".to_string(), 0),
                (Add, "a".to_string(), 1),
                (Delete, "c".to_string(), 0),
                (Add, "d".to_string(), 1),
            ]
        );
        let err = merge_entries(vec![entry(Add, "a", 0), entry(Add, "a", 0)]).unwrap_err();
        assert!(err.to_string().contains("trying to add file a"), "{err}");
        // An ADD after an unmatched DELETE of the same identity is a repeated identity too.
        assert!(merge_entries(vec![entry(Delete, "x", 0), entry(Add, "x", 0)]).is_err());
    }
}
