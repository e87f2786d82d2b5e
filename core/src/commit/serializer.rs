//! Java's `CommitMessageSerializer` bytes for [`CommitMessage`]s, so a coordinator in another
//! process or language (Java Paimon, Flink) can commit what our writers produce, and we can
//! commit what Java writers produce.
//!
//! Source: Java `org.apache.paimon.table.sink.CommitMessageSerializer` (release-2.0.0,
//! version 12; release-1.4.2 writes version 11), `DataFileMetaSerializer`,
//! `IndexFileMetaSerializer`, `IndexFileMetaV1Deserializer`, `IndexFileMetaV3Deserializer`,
//! `IndexFileMetaV4Deserializer`, `DataFileMeta08Serializer`, `DataFileMeta09Serializer`,
//! `org.apache.paimon.utils.ObjectSerializer`, `SerializationUtils#serializeBinaryRow`,
//! `BinaryRowSerializer`, Flink's `SimpleVersionedSerialization` (for the [file form](encode_file)).
//!
//! # Layout
//! All integers written by the Java `DataOutputView` are big-endian; a boolean is one byte.
//! Java passes the version next to the bytes (`VersionedSerializer`), so [`encode`] returns
//! the bytes of [`VERSION`] and [`decode`] takes the version the bytes were written with.
//!
//! One message (versions 10-12):
//! ```text
//! int32 partition-length (4 + row bytes) ‖ int32 partition arity ‖ partition row bytes
//! int32 bucket ‖ bool has-total-buckets [‖ int32 total-buckets]
//! data files:  new ‖ deleted ‖ changelog     (each a data-file list)
//! index files: new ‖ deleted                 (each an index-file list)
//! compact:     before ‖ after ‖ changelog (data-file lists) ‖ new ‖ deleted (index-file lists)
//! ```
//! A list is `int32 count ‖ count × (int32 row length ‖ BinaryRow bytes)`: each element is a
//! `BinaryRow` of Java's `DataFileMeta.SCHEMA` (20 fields) or `IndexFileMeta.SCHEMA`
//! (7 fields) whose arity is implied by the schema, not stored. Nested values follow the
//! `BinaryRow` layout of [`crate::spec::binary_row`]; `_MIN_KEY`, `_MAX_KEY` and the stats
//! rows are `BYTES` holding serialized rows (`int32 BE arity ‖ row bytes`).
//!
//! Version differences (all decoded here; the release that writes each is in brackets):
//! * 12 (2.0): `_GLOBAL_INDEX` is a row of 6 fields (with `_SOURCE_META`).
//! * 11 (1.4): `_GLOBAL_INDEX` has 5 fields (no `_SOURCE_META`).
//! * 10 (1.3): index rows have 6 fields (no `_GLOBAL_INDEX`).
//! * 9 and below: the message is `partition ‖ bucket ‖ [bool ‖ int32 total-buckets] ‖` the
//!   three data-file lists of the data increment, the three of the compaction, then the new
//!   and (from version 3) the deleted index-file lists, which belong to the compaction when it has files, else
//!   to the data increment (Java `CommitMessageSerializer#deserialize`).
//! * 8: data-file rows have 20 fields but `_WRITE_COLS` is ignored (read as `None`).
//! * 5-8: index rows have 5 fields (no `_EXTERNAL_PATH`).
//! * 6-7 (1.1, 1.2): data-file rows have 18 fields (up to `_EXTERNAL_PATH`); below 7 there is
//!   no total-buckets flag.
//! * 4-5: 17 data-file fields (up to `_VALUE_STATS_COLS`).
//! * 3 (0.9): 16 data-file fields (up to `_FILE_SOURCE`). Below 5, deletion-vector ranges are
//!   rows of 3 fields (no `_CARDINALITY`, read as `None` as Java's `IndexFileMetaV1Deserializer`
//!   does).
//! * 1-2 (0.8 and before; Java 2.0 reads both the same way, `DataFileMeta08Serializer` and
//!   `IndexFileMetaV1Deserializer`): data-file rows have 15 fields (up to
//!   `_EMBEDDED_FILE_INDEX`; no `_FILE_SOURCE`, read as `None`), and the message has a single
//!   index-file list after the six data-file lists, the new index files (of the compaction
//!   when it has files, else of the data increment); there are no deleted index files.
//!
//! `DataFileMeta.SCHEMA` is the same in release-1.4.2 and release-2.0.0 (20 fields, up to
//! `_WRITE_COLS`); [`DataFileMeta::write_cols_sequences`] (a later field) has no place in
//! these bytes, so encoding a file that has it is [`Error::Unsupported`].
//!
//! Java quirk: Java reads `_CREATION_TIME` without looking at its null bit, so a null creation
//! time comes back as epoch 0 in Java; [`decode`] gives `None` for it.

use crate::commit::message::{CommitMessage, CompactIncrement, DataIncrement};
use crate::error::{Error, Result};
use crate::spec::binary_row::{BinaryRow, Datum, RowOrigin};
use crate::spec::data_file::{DataFileMeta, FileSource, NullCounts, SimpleStats};
use crate::spec::index_manifest::{DeletionVectorMeta, GlobalIndexMeta, IndexFileMeta};
use crate::spec::types::{DataField, DataType, TypeKind};

/// The version [`encode`] writes: Java `CommitMessageSerializer.CURRENT_VERSION` of
/// release-2.0.0.
pub const VERSION: i32 = 12;

/// The version Java Paimon release-1.4.x writes (and reads as its newest).
pub const VERSION_1_4: i32 = 11;

/// The oldest version [`decode`] reads (Java 2.0 reads versions 1 to 12).
pub const MIN_DECODE_VERSION: i32 = 1;

/// The oldest version [`encode_version`] writes.
pub const MIN_ENCODE_VERSION: i32 = 10;

const FORMAT: &str = "commit-message";
const DEFAULT_ORIGIN: &str = "commit message bytes";

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/// Java `CommitMessageSerializer#serialize` bytes of `msg` at [`VERSION`].
///
/// # Errors
/// [`Error::Unsupported`] if a data file has `write_cols_sequences` (no field for it in
/// these bytes); [`Error::Invalid`] if a value does not fit (e.g. a list of more than
/// `i32::MAX` entries).
pub fn encode(msg: &CommitMessage) -> Result<Vec<u8>> {
    encode_version(VERSION, msg)
}

/// Like [`encode`] for an older reader: `version` 10, 11 ([`VERSION_1_4`], what Java
/// release-1.4.x reads) or 12.
///
/// # Errors
/// As [`encode`]; [`Error::Unsupported`] for other versions, and for index files the
/// version cannot carry (a global index below 11, a global index's `source_meta` below 12).
pub fn encode_version(version: i32, msg: &CommitMessage) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_message(&mut out, version, msg)?;
    Ok(out)
}

/// Decode Java `CommitMessageSerializer#deserialize(version, bytes)`: one message that
/// fills `bytes` exactly.
///
/// # Errors
/// [`Error::Unsupported`] for versions outside [`MIN_DECODE_VERSION`]..=[`VERSION`];
/// [`Error::Corrupt`] (naming "commit message bytes") for truncated, trailing or malformed
/// bytes.
pub fn decode(version: i32, bytes: &[u8]) -> Result<CommitMessage> {
    let mut r = Reader::new(bytes, RowOrigin::new(DEFAULT_ORIGIN));
    let msg = read_message(&mut r, version)?;
    r.finish()?;
    Ok(msg)
}

/// Java `CommitMessageSerializer#serializeList` bytes at [`VERSION`]:
/// `int32 count ‖ count × message` (messages back to back, without lengths).
///
/// # Errors
/// As [`encode`].
pub fn encode_list(msgs: &[CommitMessage]) -> Result<Vec<u8>> {
    encode_list_version(VERSION, msgs)
}

/// [`encode_list`] at `version` (see [`encode_version`]).
///
/// # Errors
/// As [`encode_version`].
pub fn encode_list_version(version: i32, msgs: &[CommitMessage]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_len(&mut out, msgs.len(), "commit message list")?;
    for m in msgs {
        write_message(&mut out, version, m)?;
    }
    Ok(out)
}

/// Decode Java `CommitMessageSerializer#deserializeList(version, view)` bytes that fill
/// `bytes` exactly.
///
/// # Errors
/// As [`decode`].
pub fn decode_list(version: i32, bytes: &[u8]) -> Result<Vec<CommitMessage>> {
    decode_list_from(version, bytes, RowOrigin::new(DEFAULT_ORIGIN))
}

fn decode_list_from(version: i32, bytes: &[u8], origin: RowOrigin) -> Result<Vec<CommitMessage>> {
    let mut r = Reader::new(bytes, origin);
    let n = r.count("commit message list")?;
    let mut out = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        out.push(read_message(&mut r, version)?);
    }
    r.finish()?;
    Ok(out)
}

/// The commit-message file form: Flink's `SimpleVersionedSerialization
/// #writeVersionAndSerialize` layout around the list form,
/// `int32 BE version ‖ int32 BE length ‖ length bytes of` [`encode_list`], at [`VERSION`].
///
/// What `paimon-kernel write --prepare-only FILE` writes and `commit --messages FILE` reads.
/// Java reads it with `ByteBuffer.getInt()` twice and
/// `new CommitMessageSerializer().deserializeList(version, new DataInputDeserializer(rest))`.
///
/// # Errors
/// As [`encode`]; [`Error::Invalid`] if the list exceeds 2 GiB.
pub fn encode_file(msgs: &[CommitMessage]) -> Result<Vec<u8>> {
    encode_file_version(VERSION, msgs)
}

/// [`encode_file`] at `version` (see [`encode_version`]).
///
/// # Errors
/// As [`encode_version`].
pub fn encode_file_version(version: i32, msgs: &[CommitMessage]) -> Result<Vec<u8>> {
    let body = encode_list_version(version, msgs)?;
    let mut out = Vec::with_capacity(8 + body.len());
    out.extend_from_slice(&version.to_be_bytes());
    write_len(&mut out, body.len(), "commit message file")?;
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decode the [file form](encode_file) of any version [`decode`] reads; `path` names the
/// file in errors.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` if the header is short, the length does not match the
/// remaining bytes, or the list is malformed; [`Error::Unsupported`] for an unknown version.
pub fn decode_file(bytes: &[u8], path: &str) -> Result<Vec<CommitMessage>> {
    let origin = RowOrigin::new(path);
    let mut r = Reader::new(bytes, origin.clone());
    let version = r.i32("version")?;
    let len = r.count("payload length")?;
    let body = r.take(len, "payload")?;
    r.finish()?;
    decode_list_from(version, body, origin)
}

// ---------------------------------------------------------------------------------------------
// Schemas (Java DataFileMeta.SCHEMA, IndexFileMeta.SCHEMA and their older forms)
// ---------------------------------------------------------------------------------------------

fn ty(nullable: bool, kind: TypeKind) -> DataType {
    DataType { nullable, kind }
}

fn string(nullable: bool) -> DataType {
    ty(
        nullable,
        TypeKind::VarChar {
            length: i32::MAX as u32,
        },
    )
}

fn bytes_ty(nullable: bool) -> DataType {
    ty(
        nullable,
        TypeKind::VarBinary {
            length: i32::MAX as u32,
        },
    )
}

fn bigint(nullable: bool) -> DataType {
    ty(nullable, TypeKind::BigInt)
}

fn int(nullable: bool) -> DataType {
    ty(nullable, TypeKind::Int)
}

fn array(nullable: bool, elem: DataType) -> DataType {
    ty(nullable, TypeKind::Array(Box::new(elem)))
}

fn row(nullable: bool, fields: Vec<(&str, DataType)>) -> DataType {
    let fields = fields
        .into_iter()
        .enumerate()
        .map(|(i, (name, t))| DataField::new(i as i32, name, t))
        .collect();
    ty(nullable, TypeKind::Row(fields))
}

/// Java `SimpleStats.SCHEMA`.
fn simple_stats_type() -> DataType {
    row(
        false,
        vec![
            ("_MIN_VALUES", bytes_ty(false)),
            ("_MAX_VALUES", bytes_ty(false)),
            ("_NULL_COUNTS", array(true, bigint(true))),
        ],
    )
}

/// Java `DataFileMeta.SCHEMA` (release-1.4.2 and release-2.0.0), field types only, cut to
/// the fields of `version` (`DataFileMeta08Serializer` below 3, `DataFileMeta09Serializer`,
/// `DataFileMeta10LegacySerializer`, `DataFileMeta12LegacySerializer` below 8).
fn data_file_types(version: i32) -> Vec<DataType> {
    let arity = match version {
        ..=2 => 15,
        3 => 16,
        4..=5 => 17,
        6..=7 => 18,
        _ => 20,
    };
    let mut types = vec![
        string(false),                                  // _FILE_NAME
        bigint(false),                                  // _FILE_SIZE
        bigint(false),                                  // _ROW_COUNT
        bytes_ty(false),                                // _MIN_KEY
        bytes_ty(false),                                // _MAX_KEY
        simple_stats_type(),                            // _KEY_STATS
        simple_stats_type(),                            // _VALUE_STATS
        bigint(false),                                  // _MIN_SEQUENCE_NUMBER
        bigint(false),                                  // _MAX_SEQUENCE_NUMBER
        bigint(false),                                  // _SCHEMA_ID
        int(false),                                     // _LEVEL
        array(false, string(false)),                    // _EXTRA_FILES
        ty(true, TypeKind::Timestamp { precision: 3 }), // _CREATION_TIME
        bigint(true),                                   // _DELETE_ROW_COUNT
        bytes_ty(true),                                 // _EMBEDDED_FILE_INDEX
        ty(true, TypeKind::TinyInt),                    // _FILE_SOURCE
        array(true, string(false)),                     // _VALUE_STATS_COLS
        string(true),                                   // _EXTERNAL_PATH
        bigint(true),                                   // _FIRST_ROW_ID
        array(true, string(false)),                     // _WRITE_COLS
    ];
    types.truncate(arity);
    types
}

/// Java `DeletionVectorMeta.SCHEMA` (no `_CARDINALITY` below version 5).
fn dv_meta_type(version: i32) -> DataType {
    let mut fields = vec![
        ("f0", string(false)),
        ("f1", int(false)),
        ("f2", int(false)),
    ];
    if version >= 5 {
        fields.push(("_CARDINALITY", bigint(true)));
    }
    row(false, fields)
}

/// Java `GlobalIndexMeta.SCHEMA`: 6 fields from version 12, 5 in version 11.
fn global_index_type(version: i32) -> DataType {
    let mut fields = vec![
        ("_ROW_RANGE_START", bigint(false)),
        ("_ROW_RANGE_END", bigint(false)),
        ("_INDEX_FIELD_ID", int(false)),
        ("_EXTRA_FIELD_IDS", array(true, int(false))),
        ("_INDEX_META", bytes_ty(true)),
    ];
    if version >= 12 {
        fields.push(("_SOURCE_META", bytes_ty(true)));
    }
    row(true, fields)
}

/// Java `IndexFileMeta.SCHEMA` of `version` (`IndexFileMetaV1Deserializer.SCHEMA` below 5,
/// `V2` for 5-8, `V3` for 9-10, `V4` for 11).
fn index_file_types(version: i32) -> Vec<DataType> {
    let mut types = vec![
        string(false),                      // _INDEX_TYPE
        string(false),                      // _FILE_NAME
        bigint(false),                      // _FILE_SIZE
        bigint(false),                      // _ROW_COUNT
        array(true, dv_meta_type(version)), // _DELETIONS_VECTORS_RANGES
    ];
    if version >= 9 {
        types.push(string(true)); // _EXTERNAL_PATH
    }
    if version >= 11 {
        types.push(global_index_type(version)); // _GLOBAL_INDEX
    }
    types
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

fn check_encode_version(version: i32) -> Result<()> {
    if (MIN_ENCODE_VERSION..=VERSION).contains(&version) {
        Ok(())
    } else {
        Err(Error::unsupported(format!(
            "encoding commit message version {version} (supported: {MIN_ENCODE_VERSION}..={VERSION})"
        )))
    }
}

fn write_len(out: &mut Vec<u8>, n: usize, what: &str) -> Result<()> {
    let n = i32::try_from(n)
        .map_err(|_| Error::invalid(format!("{what}: {n} exceeds the int32 range of Java")))?;
    out.extend_from_slice(&n.to_be_bytes());
    Ok(())
}

fn write_message(out: &mut Vec<u8>, version: i32, msg: &CommitMessage) -> Result<()> {
    check_encode_version(version)?;
    let partition = msg.partition.to_serialized();
    write_len(out, partition.len(), "partition")?;
    out.extend_from_slice(&partition);
    out.extend_from_slice(&msg.bucket.to_be_bytes());
    match msg.total_buckets {
        Some(n) => {
            out.push(1);
            out.extend_from_slice(&n.to_be_bytes());
        }
        None => out.push(0),
    }
    let d = &msg.data_increment;
    let c = &msg.compact_increment;
    let data_types = data_file_types(version);
    let index_types = index_file_types(version);
    for files in [&d.new_files, &d.deleted_files, &d.changelog_files] {
        write_data_files(out, files, &data_types)?;
    }
    for files in [&d.new_index_files, &d.deleted_index_files] {
        write_index_files(out, files, version, &index_types)?;
    }
    for files in [&c.compact_before, &c.compact_after, &c.changelog_files] {
        write_data_files(out, files, &data_types)?;
    }
    for files in [&c.new_index_files, &c.deleted_index_files] {
        write_index_files(out, files, version, &index_types)?;
    }
    Ok(())
}

fn write_row(out: &mut Vec<u8>, values: &[Datum], types: &[DataType], what: &str) -> Result<()> {
    let row = BinaryRow::encode(values, types)?;
    write_len(out, row.row_bytes().len(), what)?;
    out.extend_from_slice(row.row_bytes());
    Ok(())
}

fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> Datum) -> Datum {
    v.map_or(Datum::Null, f)
}

fn strings(v: &[String]) -> Datum {
    Datum::Array(v.iter().map(|s| Datum::String(s.clone())).collect())
}

fn stats_datum(s: &SimpleStats) -> Datum {
    Datum::Row(vec![
        Datum::Binary(s.min_values.to_serialized()),
        Datum::Binary(s.max_values.to_serialized()),
        Datum::Array(
            s.null_counts
                .iter()
                .map(|c| opt(c, Datum::BigInt))
                .collect(),
        ),
    ])
}

fn write_data_files(out: &mut Vec<u8>, files: &[DataFileMeta], types: &[DataType]) -> Result<()> {
    write_len(out, files.len(), "data file list")?;
    for f in files {
        write_data_file_row(out, f, types)?;
    }
    Ok(())
}

/// Java `DataFileMetaSerializer#serialize` bytes of `f` (release-1.4.2 and release-2.0.0:
/// `int32 length ‖ BinaryRow` of `DataFileMeta.SCHEMA`), appended to `out`: the data files of
/// Java's `DataSplit` bytes.
///
/// # Errors
/// As [`encode`].
pub(crate) fn write_data_file(out: &mut Vec<u8>, f: &DataFileMeta) -> Result<()> {
    write_data_file_row(out, f, &data_file_types(VERSION))
}

/// Decode one Java `DataFileMetaSerializer` record at the reader's position.
///
/// # Errors
/// [`Error::Corrupt`] for truncated or malformed bytes.
pub(crate) fn read_data_file(r: &mut Reader<'_>) -> Result<DataFileMeta> {
    let types = data_file_types(VERSION);
    let values = r.row(&types, "data file")?;
    let mut fields = Fields {
        r,
        what: "data file",
        values,
    };
    data_file_from_fields(&mut fields, VERSION)
}

fn write_data_file_row(out: &mut Vec<u8>, f: &DataFileMeta, types: &[DataType]) -> Result<()> {
    {
        if f.write_cols_sequences.is_some() {
            return Err(Error::unsupported(format!(
                "data file {}: _WRITE_COLS_SEQUENCES in Java CommitMessageSerializer bytes \
                 (release-2.0.0 has no field for it)",
                f.file_name
            )));
        }
        let values = vec![
            Datum::String(f.file_name.clone()),
            Datum::BigInt(f.file_size),
            Datum::BigInt(f.row_count),
            Datum::Binary(f.min_key.to_serialized()),
            Datum::Binary(f.max_key.to_serialized()),
            stats_datum(&f.key_stats),
            stats_datum(&f.value_stats),
            Datum::BigInt(f.min_sequence_number),
            Datum::BigInt(f.max_sequence_number),
            Datum::BigInt(f.schema_id),
            Datum::Int(f.level),
            strings(&f.extra_files),
            opt(f.creation_time_millis, |millis| Datum::Timestamp {
                millis,
                nanos_of_milli: 0,
            }),
            opt(f.delete_row_count, Datum::BigInt),
            opt(f.embedded_index.clone(), Datum::Binary),
            opt(f.file_source, |s| Datum::TinyInt(s.to_byte() as i8)),
            opt(f.value_stats_cols.as_deref(), strings),
            opt(f.external_path.clone(), Datum::String),
            opt(f.first_row_id, Datum::BigInt),
            opt(f.write_cols.as_deref(), strings),
        ];
        write_row(out, &values, types, &format!("data file {}", f.file_name))?;
    }
    Ok(())
}

fn write_index_files(
    out: &mut Vec<u8>,
    files: &[IndexFileMeta],
    version: i32,
    types: &[DataType],
) -> Result<()> {
    write_len(out, files.len(), "index file list")?;
    for f in files {
        let dv = f.dv_ranges.as_ref().map(|ranges| {
            Datum::Array(
                ranges
                    .iter()
                    .map(|r| {
                        Datum::Row(vec![
                            Datum::String(r.data_file_name.clone()),
                            Datum::Int(r.offset),
                            Datum::Int(r.length),
                            opt(r.cardinality, Datum::BigInt),
                        ])
                    })
                    .collect(),
            )
        });
        let mut values = vec![
            Datum::String(f.index_type.clone()),
            Datum::String(f.file_name.clone()),
            Datum::BigInt(f.file_size),
            Datum::BigInt(f.row_count),
            dv.unwrap_or(Datum::Null),
            opt(f.external_path.clone(), Datum::String),
        ];
        match (&f.global_index, version) {
            (None, v) if v < 11 => {}
            (Some(_), v) if v < 11 => {
                return Err(Error::unsupported(format!(
                    "index file {}: a global index in commit message version {v} (needs 11+)",
                    f.file_name
                )));
            }
            (None, _) => values.push(Datum::Null),
            (Some(g), v) => {
                let mut fields = vec![
                    Datum::BigInt(g.row_range_start),
                    Datum::BigInt(g.row_range_end),
                    Datum::Int(g.index_field_id),
                    opt(g.extra_field_ids.as_ref(), |ids| {
                        Datum::Array(ids.iter().map(|i| Datum::Int(*i)).collect())
                    }),
                    opt(g.index_meta.clone(), Datum::Binary),
                ];
                if v >= 12 {
                    fields.push(opt(g.source_meta.clone(), Datum::Binary));
                } else if g.source_meta.is_some() {
                    return Err(Error::unsupported(format!(
                        "index file {}: a global index source meta in commit message version \
                         {v} (needs 12)",
                        f.file_name
                    )));
                }
                values.push(Datum::Row(fields));
            }
        }
        write_row(out, &values, types, &format!("index file {}", f.file_name))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/// A cursor over Java `DataOutputView` bytes (big-endian), whose errors are `Corrupt` naming
/// the origin and format.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    origin: RowOrigin,
    format: &'static str,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], origin: RowOrigin) -> Self {
        Self::with_format(buf, origin, FORMAT)
    }

    /// A reader of bytes of `format` (for errors).
    pub(crate) fn with_format(buf: &'a [u8], origin: RowOrigin, format: &'static str) -> Self {
        Reader {
            buf,
            pos: 0,
            origin,
            format,
        }
    }

    pub(crate) fn corrupt(&self, reason: impl Into<String>) -> Error {
        Error::corrupt(&*self.origin, self.format, reason)
    }

    /// The origin given to the reader.
    pub(crate) fn origin(&self) -> RowOrigin {
        self.origin.clone()
    }

    /// `DataInput#readLong`.
    pub(crate) fn i64(&mut self, what: &str) -> Result<i64> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// `DataInput#readByte`.
    pub(crate) fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    /// `DataInput#readUTF`: `uint16 length ‖ modified UTF-8`.
    pub(crate) fn utf(&mut self, what: &str) -> Result<String> {
        let b = self.take(2, what)?;
        let n = usize::from(u16::from_be_bytes([b[0], b[1]]));
        let bytes = self.take(n, what)?;
        decode_modified_utf8(bytes)
            .ok_or_else(|| self.corrupt(format!("{what}: malformed modified UTF-8")))
    }

    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len());
        let Some(end) = end else {
            return Err(self.corrupt(format!(
                "{what}: {n} bytes at offset {} exceed the {} bytes",
                self.pos,
                self.buf.len()
            )));
        };
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn i32(&mut self, what: &str) -> Result<i32> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn count(&mut self, what: &str) -> Result<usize> {
        let n = self.i32(what)?;
        usize::try_from(n).map_err(|_| self.corrupt(format!("{what}: negative length {n}")))
    }

    pub(crate) fn bool(&mut self, what: &str) -> Result<bool> {
        match self.take(1, what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.corrupt(format!("{what}: boolean byte {b}"))),
        }
    }

    pub(crate) fn finish(&self) -> Result<()> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(self.corrupt(format!(
                "{} trailing bytes after offset {}",
                self.buf.len() - self.pos,
                self.pos
            )))
        }
    }

    /// One `BinaryRowSerializer` row (`int32 length ‖ bytes`) decoded with `types`.
    fn row(&mut self, types: &[DataType], what: &str) -> Result<Vec<Datum>> {
        let len = self.count(what)?;
        let bytes = self.take(len, what)?;
        BinaryRow::from_row_bytes(types.len(), bytes, self.origin.clone())?.fields(types)
    }
}

fn read_message(r: &mut Reader<'_>, version: i32) -> Result<CommitMessage> {
    if !(MIN_DECODE_VERSION..=VERSION).contains(&version) {
        return Err(Error::unsupported(format!(
            "commit message version {version} in {} (supported: {MIN_DECODE_VERSION}..={VERSION})",
            r.origin
        )));
    }
    let plen = r.count("partition length")?;
    let pbytes = r.take(plen, "partition")?;
    let partition = BinaryRow::from_serialized_shared(pbytes, r.origin.clone())?;
    let bucket = r.i32("bucket")?;
    let total_buckets = if version >= 7 && r.bool("has total buckets")? {
        Some(r.i32("total buckets")?)
    } else {
        None
    };
    let data_types = data_file_types(version);
    let index_types = index_file_types(version);
    let mut d = DataIncrement::default();
    let mut c = CompactIncrement::default();
    if version >= 10 {
        d.new_files = read_data_files(r, version, &data_types)?;
        d.deleted_files = read_data_files(r, version, &data_types)?;
        d.changelog_files = read_data_files(r, version, &data_types)?;
        d.new_index_files = read_index_files(r, version, &index_types)?;
        d.deleted_index_files = read_index_files(r, version, &index_types)?;
        c.compact_before = read_data_files(r, version, &data_types)?;
        c.compact_after = read_data_files(r, version, &data_types)?;
        c.changelog_files = read_data_files(r, version, &data_types)?;
        c.new_index_files = read_index_files(r, version, &index_types)?;
        c.deleted_index_files = read_index_files(r, version, &index_types)?;
    } else {
        d.new_files = read_data_files(r, version, &data_types)?;
        d.deleted_files = read_data_files(r, version, &data_types)?;
        d.changelog_files = read_data_files(r, version, &data_types)?;
        c.compact_before = read_data_files(r, version, &data_types)?;
        c.compact_after = read_data_files(r, version, &data_types)?;
        c.changelog_files = read_data_files(r, version, &data_types)?;
        let new_index = read_index_files(r, version, &index_types)?;
        // Versions 1-2 have no deleted index files.
        let deleted_index = if version > 2 {
            read_index_files(r, version, &index_types)?
        } else {
            Vec::new()
        };
        if c.compact_before.is_empty() && c.compact_after.is_empty() && c.changelog_files.is_empty()
        {
            d.new_index_files = new_index;
            d.deleted_index_files = deleted_index;
        } else {
            c.new_index_files = new_index;
            c.deleted_index_files = deleted_index;
        }
    }
    Ok(CommitMessage {
        partition,
        bucket,
        total_buckets,
        data_increment: d,
        compact_increment: c,
    })
}

/// Field accessors over decoded values, with errors naming the field.
struct Fields<'r, 'a> {
    r: &'r Reader<'a>,
    what: &'static str,
    values: Vec<Datum>,
}

impl Fields<'_, '_> {
    fn take(&mut self, i: usize) -> Datum {
        self.values
            .get_mut(i)
            .map(|d| std::mem::replace(d, Datum::Null))
            .unwrap_or(Datum::Null)
    }

    fn bad(&self, name: &str, d: &Datum) -> Error {
        self.r.corrupt(format!(
            "{} field {name}: unexpected value {d:?}",
            self.what
        ))
    }

    fn string(&mut self, i: usize, name: &str) -> Result<String> {
        match self.take(i) {
            Datum::String(s) => Ok(s),
            d => Err(self.bad(name, &d)),
        }
    }

    fn opt_string(&mut self, i: usize, name: &str) -> Result<Option<String>> {
        match self.take(i) {
            Datum::Null => Ok(None),
            Datum::String(s) => Ok(Some(s)),
            d => Err(self.bad(name, &d)),
        }
    }

    fn long(&mut self, i: usize, name: &str) -> Result<i64> {
        match self.take(i) {
            Datum::BigInt(v) => Ok(v),
            d => Err(self.bad(name, &d)),
        }
    }

    fn opt_long(&mut self, i: usize, name: &str) -> Result<Option<i64>> {
        match self.take(i) {
            Datum::Null => Ok(None),
            Datum::BigInt(v) => Ok(Some(v)),
            d => Err(self.bad(name, &d)),
        }
    }

    fn int(&mut self, i: usize, name: &str) -> Result<i32> {
        match self.take(i) {
            Datum::Int(v) => Ok(v),
            d => Err(self.bad(name, &d)),
        }
    }

    fn opt_bytes(&mut self, i: usize, name: &str) -> Result<Option<Vec<u8>>> {
        match self.take(i) {
            Datum::Null => Ok(None),
            Datum::Binary(b) => Ok(Some(b)),
            d => Err(self.bad(name, &d)),
        }
    }

    fn serialized_row(&mut self, i: usize, name: &str) -> Result<BinaryRow> {
        match self.take(i) {
            Datum::Binary(b) => BinaryRow::from_serialized_shared(&b, self.r.origin.clone()),
            d => Err(self.bad(name, &d)),
        }
    }

    fn opt_strings(&mut self, i: usize, name: &str) -> Result<Option<Vec<String>>> {
        match self.take(i) {
            Datum::Null => Ok(None),
            Datum::Array(items) => items
                .into_iter()
                .map(|d| match d {
                    Datum::String(s) => Ok(s),
                    d => Err(self.bad(name, &d)),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            d => Err(self.bad(name, &d)),
        }
    }

    fn nested(&mut self, i: usize, name: &str, what: &'static str) -> Result<Option<Self>> {
        match self.take(i) {
            Datum::Null => Ok(None),
            Datum::Row(values) => Ok(Some(Fields {
                r: self.r,
                what,
                values,
            })),
            d => Err(self.bad(name, &d)),
        }
    }

    fn stats(&mut self, i: usize, name: &str) -> Result<SimpleStats> {
        let Some(mut s) = self.nested(i, name, "simple stats")? else {
            return Err(self.bad(name, &Datum::Null));
        };
        let min_values = s.serialized_row(0, "_MIN_VALUES")?;
        let max_values = s.serialized_row(1, "_MAX_VALUES")?;
        let null_counts = match s.take(2) {
            Datum::Null => NullCounts::default(),
            Datum::Array(items) => items
                .into_iter()
                .map(|d| match d {
                    Datum::Null => Ok(None),
                    Datum::BigInt(v) => Ok(Some(v)),
                    d => Err(s.bad("_NULL_COUNTS", &d)),
                })
                .collect::<Result<NullCounts>>()?,
            d => return Err(s.bad("_NULL_COUNTS", &d)),
        };
        Ok(SimpleStats {
            min_values,
            max_values,
            null_counts,
        })
    }
}

fn read_list<T>(
    r: &mut Reader<'_>,
    what: &'static str,
    types: &[DataType],
    mut f: impl FnMut(&mut Fields<'_, '_>) -> Result<T>,
) -> Result<Vec<T>> {
    let n = r.count(what)?;
    let mut out = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let values = r.row(types, what)?;
        let mut fields = Fields { r, what, values };
        out.push(f(&mut fields)?);
    }
    Ok(out)
}

fn read_data_files(
    r: &mut Reader<'_>,
    version: i32,
    types: &[DataType],
) -> Result<Vec<DataFileMeta>> {
    read_list(r, "data file", types, |f| data_file_from_fields(f, version))
}

/// A data file from its decoded `DataFileMeta.SCHEMA` fields (`version`: of the commit
/// message bytes).
fn data_file_from_fields(f: &mut Fields<'_, '_>, version: i32) -> Result<DataFileMeta> {
    {
        // Absent (null) below version 3.
        let file_source = match f.take(15) {
            Datum::Null => None,
            Datum::TinyInt(v) => Some(FileSource::from_byte(i32::from(v)).ok_or_else(|| {
                f.r.corrupt(format!("data file field _FILE_SOURCE: unknown value {v}"))
            })?),
            d => return Err(f.bad("_FILE_SOURCE", &d)),
        };
        let creation_time_millis = match f.take(12) {
            Datum::Null => None,
            Datum::Timestamp { millis, .. } => Some(millis),
            d => return Err(f.bad("_CREATION_TIME", &d)),
        };
        Ok(DataFileMeta {
            file_name: f.string(0, "_FILE_NAME")?,
            file_size: f.long(1, "_FILE_SIZE")?,
            row_count: f.long(2, "_ROW_COUNT")?,
            min_key: f.serialized_row(3, "_MIN_KEY")?,
            max_key: f.serialized_row(4, "_MAX_KEY")?,
            key_stats: f.stats(5, "_KEY_STATS")?,
            value_stats: f.stats(6, "_VALUE_STATS")?,
            min_sequence_number: f.long(7, "_MIN_SEQUENCE_NUMBER")?,
            max_sequence_number: f.long(8, "_MAX_SEQUENCE_NUMBER")?,
            schema_id: f.long(9, "_SCHEMA_ID")?,
            level: f.int(10, "_LEVEL")?,
            extra_files: f.opt_strings(11, "_EXTRA_FILES")?.unwrap_or_default(),
            creation_time_millis,
            delete_row_count: f.opt_long(13, "_DELETE_ROW_COUNT")?,
            embedded_index: f.opt_bytes(14, "_EMBEDDED_FILE_INDEX")?,
            file_source,
            value_stats_cols: f.opt_strings(16, "_VALUE_STATS_COLS")?,
            external_path: f.opt_string(17, "_EXTERNAL_PATH")?,
            first_row_id: f.opt_long(18, "_FIRST_ROW_ID")?,
            // Version 8 readers ignore it (Java `DataFileMetaFirstRowIdLegacySerializer`).
            write_cols: if version == 8 {
                None
            } else {
                f.opt_strings(19, "_WRITE_COLS")?
            },
            write_cols_sequences: None,
        })
    }
}

fn read_index_files(
    r: &mut Reader<'_>,
    version: i32,
    types: &[DataType],
) -> Result<Vec<IndexFileMeta>> {
    read_list(r, "index file", types, |f| {
        let dv_ranges = match f.take(4) {
            Datum::Null => None,
            Datum::Array(items) => Some(
                items
                    .into_iter()
                    .map(|d| {
                        let Datum::Row(values) = d else {
                            return Err(f.bad("_DELETIONS_VECTORS_RANGES", &d));
                        };
                        let mut m = Fields {
                            r: f.r,
                            what: "deletion vector meta",
                            values,
                        };
                        Ok(DeletionVectorMeta {
                            data_file_name: m.string(0, "f0")?,
                            offset: m.int(1, "f1")?,
                            length: m.int(2, "f2")?,
                            cardinality: m.opt_long(3, "_CARDINALITY")?,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
            d => return Err(f.bad("_DELETIONS_VECTORS_RANGES", &d)),
        };
        let global_index = if version >= 11 {
            match f.nested(6, "_GLOBAL_INDEX", "global index meta")? {
                None => None,
                Some(mut g) => Some(GlobalIndexMeta {
                    row_range_start: g.long(0, "_ROW_RANGE_START")?,
                    row_range_end: g.long(1, "_ROW_RANGE_END")?,
                    index_field_id: g.int(2, "_INDEX_FIELD_ID")?,
                    extra_field_ids: match g.take(3) {
                        Datum::Null => None,
                        Datum::Array(items) => Some(
                            items
                                .into_iter()
                                .map(|d| match d {
                                    Datum::Int(v) => Ok(v),
                                    d => Err(g.bad("_EXTRA_FIELD_IDS", &d)),
                                })
                                .collect::<Result<Vec<_>>>()?,
                        ),
                        d => return Err(g.bad("_EXTRA_FIELD_IDS", &d)),
                    },
                    index_meta: g.opt_bytes(4, "_INDEX_META")?,
                    source_meta: if version >= 12 {
                        g.opt_bytes(5, "_SOURCE_META")?
                    } else {
                        None
                    },
                }),
            }
        } else {
            None
        };
        Ok(IndexFileMeta {
            index_type: f.string(0, "_INDEX_TYPE")?,
            file_name: f.string(1, "_FILE_NAME")?,
            file_size: f.long(2, "_FILE_SIZE")?,
            row_count: f.long(3, "_ROW_COUNT")?,
            dv_ranges,
            external_path: f.opt_string(5, "_EXTERNAL_PATH")?,
            global_index,
        })
    })
}

#[cfg(test)]
mod tests;

/// Java's modified UTF-8 (`DataInput#readUTF`): NUL as `C0 80`, characters beyond the BMP as
/// two 3-byte surrogates. `None` for malformed bytes.
pub(crate) fn decode_modified_utf8(bytes: &[u8]) -> Option<String> {
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (unit, len) = if b & 0x80 == 0 {
            (u16::from(b), 1)
        } else if b & 0xE0 == 0xC0 {
            let c = *bytes.get(i + 1)?;
            if c & 0xC0 != 0x80 {
                return None;
            }
            ((u16::from(b & 0x1F) << 6) | u16::from(c & 0x3F), 2)
        } else if b & 0xF0 == 0xE0 {
            let (c, d) = (*bytes.get(i + 1)?, *bytes.get(i + 2)?);
            if c & 0xC0 != 0x80 || d & 0xC0 != 0x80 {
                return None;
            }
            (
                (u16::from(b & 0x0F) << 12) | (u16::from(c & 0x3F) << 6) | u16::from(d & 0x3F),
                3,
            )
        } else {
            return None;
        };
        units.push(unit);
        i += len;
    }
    String::from_utf16(&units).ok()
}

/// Java's modified UTF-8 of `s` (`DataOutput#writeUTF` without the length).
pub(crate) fn encode_modified_utf8(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for u in s.encode_utf16() {
        match u {
            0x0001..=0x007F => out.push(u as u8),
            0x0000 | 0x0080..=0x07FF => {
                out.push(0xC0 | ((u >> 6) as u8 & 0x1F));
                out.push(0x80 | (u as u8 & 0x3F));
            }
            _ => {
                out.push(0xE0 | ((u >> 12) as u8 & 0x0F));
                out.push(0x80 | ((u >> 6) as u8 & 0x3F));
                out.push(0x80 | (u as u8 & 0x3F));
            }
        }
    }
    out
}
