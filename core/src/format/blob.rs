//! The `.blob` data file format: encode, decode and ranged reads.
//!
//! A `.blob` file holds the values of exactly one column of type `BLOB`, `ARRAY<BLOB>` or
//! `MAP<K, BLOB>` (see `spec/blob-format.md`):
//!
//! ```text
//! record*  |  index = delta-varint(long[rowCount])  |  indexLength: i32 LE  |  version: u8 = 1
//! record   =  magic cf 11 4e 58 | payload | recordLength: i64 LE (= payload + 16) | CRC32: u32 LE
//! ```
//!
//! Index entries are the record length (≥ 16), `-1` for a null row or `-2` for a placeholder
//! row (data-evolution "not updated here, fall back to an older file"); null and placeholder
//! rows have no record bytes and do not advance the record offset.
//!
//! Reading is ranged: [`read_blob_index`] fetches the footer and the index (one range read of
//! the file tail, a second one only when the index is larger than the speculative tail), then
//! [`read_blob_rows`] fetches only the records of the selected rows (adjacent records are
//! fetched with one range). One blob of a large file therefore costs at most three range
//! reads. Every record that is read is verified (magic, in-record length, CRC32).
//!
//! Placeholders never travel inside values: a read either rejects them
//! ([`PlaceholderPolicy::Reject`], an error naming the file and row) or reports them in a
//! per-row mask beside the Arrow array ([`PlaceholderPolicy::Mask`]; the value slot is null).
//!
//! Source: Java `org.apache.paimon.format.blob.BlobFormatWriter`, `BlobFormatReader`,
//! `BlobFileMeta`, `RawBlobElementSerializer`, `ArrayBlobElementSerializer`,
//! `MapBlobElementSerializer` and `org.apache.paimon.utils.DeltaVarintCompressor`.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{BooleanBufferBuilder, LargeBinaryBuilder};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Int8Array, Int16Array, Int32Array,
    Int64Array, LargeBinaryArray, ListArray, MapArray, StringArray, StructArray,
    Time32MillisecondArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType as ArrowType, Field, Fields, TimeUnit};
use bytes::Bytes;
use futures_util::future::try_join_all;

use crate::error::{Error, Result};
use crate::format::blob_descriptor::{BlobDescriptor, is_blob_descriptor, is_blob_view_struct};
use crate::io::Io;
use crate::io::{FileContent, FilePiece, StreamedFile};
use crate::spec::{DataType, TypeKind};

mod payload;
pub use payload::*;

mod writer;
pub use writer::*;

/// Record magic `0x584E11CF`, stored little-endian as `cf 11 4e 58`.
pub const BLOB_RECORD_MAGIC: u32 = 0x584E_11CF;
/// The only file version (last byte of the footer).
pub const BLOB_FILE_VERSION: u8 = 1;
/// Footer length in bytes: `indexLength` (i32 LE) + version (u8).
pub const BLOB_FOOTER_LEN: u64 = 5;
/// Smallest record: 4 magic + 8 length + 4 CRC bytes around an empty payload.
pub const BLOB_MIN_RECORD_LEN: u64 = 16;
/// Index sentinel of a null row.
pub const BLOB_NULL_LENGTH: i64 = -1;
/// Index sentinel of a placeholder row.
pub const BLOB_PLACEHOLDER_LENGTH: i64 = -2;
/// Magic of an `ARRAY<BLOB>` payload, stored as `42 43 42 41` ("BCBA").
pub const BLOB_ARRAY_MAGIC: u32 = 0x4142_4342;
/// Magic of a `MAP<K, BLOB>` payload, stored as `42 43 42 4d` ("BCBM").
pub const BLOB_MAP_MAGIC: u32 = 0x4D42_4342;
/// Version byte of array and map payloads.
pub const BLOB_ELEMENT_VERSION: u8 = 1;

/// How many tail bytes [`read_blob_index`] asks for in its first read, hoping that the footer
/// and the whole index fit (true for files with up to a few thousand rows).
pub const BLOB_TAIL_PREFETCH_BYTES: u64 = 16 * 1024;

const FORMAT: &str = "blob";
const ARRAY_HEADER_LEN: usize = 9;
const ARRAY_MIN_PAYLOAD: usize = 13;
const MAP_MIN_PAYLOAD: usize = 17;

fn corrupt(path: &str, reason: impl Into<String>) -> Error {
    Error::corrupt(path, FORMAT, reason)
}

// ---------------------------------------------------------------------------------------------
// Delta-varint
// ---------------------------------------------------------------------------------------------

/// Encode `values` with Paimon's delta-varint scheme: wrapping deltas, ZigZag, unsigned
/// LEB128. Empty input gives an empty vector.
///
/// Source: Java `org.apache.paimon.utils.DeltaVarintCompressor#compress`.
pub fn encode_delta_varint(values: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 2);
    let mut prev = 0i64;
    for &v in values {
        let d = v.wrapping_sub(prev);
        prev = v;
        let mut z = ((d << 1) ^ (d >> 63)) as u64;
        loop {
            let low = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                out.push(low);
                break;
            }
            out.push(low | 0x80);
        }
    }
    out
}

/// Decode a delta-varint byte string (the inverse of [`encode_delta_varint`]).
///
/// # Errors
/// [`Error::Corrupt`] naming `path` when the input ends inside a varint or a varint is longer
/// than 10 bytes.
///
/// Source: Java `org.apache.paimon.utils.DeltaVarintCompressor#decompress`.
pub fn decode_delta_varint(bytes: &[u8], path: &str) -> Result<Vec<i64>> {
    decode_varints(bytes).map_err(|r| corrupt(path, format!("invalid delta-varint data: {r}")))
}

fn decode_varints(bytes: &[u8]) -> std::result::Result<Vec<i64>, &'static str> {
    let mut out = Vec::new();
    let mut prev = 0i64;
    let mut i = 0usize;
    while i < bytes.len() {
        let mut z = 0u64;
        let mut shift = 0u32;
        loop {
            let Some(&b) = bytes.get(i) else {
                return Err("unexpected end of input");
            };
            i += 1;
            if shift > 63 {
                return Err("varint overflow");
            }
            z |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
        prev = prev.wrapping_add(d);
        out.push(prev);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Column kinds
// ---------------------------------------------------------------------------------------------

/// The key type of a `MAP<K, BLOB>` column, which fixes the key byte encoding.
///
/// Source: Java `org.apache.paimon.format.blob.MapBlobElementSerializer` (key codecs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobMapKeyKind {
    /// `TINYINT`: 1 byte.
    TinyInt,
    /// `SMALLINT`: i16 LE.
    SmallInt,
    /// `INT`: i32 LE.
    Int,
    /// `DATE`: days since epoch, i32 LE.
    Date,
    /// `TIME`: millis of day, i32 LE.
    Time,
    /// `BIGINT`: i64 LE.
    BigInt,
    /// `BOOLEAN`: `00` / `01`.
    Boolean,
    /// `DECIMAL(p, s)`: unscaled i64 LE for p ≤ 18, else minimal big-endian two's complement.
    Decimal {
        /// Precision, 1..=38.
        precision: u8,
        /// Scale.
        scale: i8,
    },
    /// `BINARY` / `VARBINARY`: raw bytes.
    Binary,
    /// `CHAR` / `VARCHAR`: UTF-8 bytes.
    String,
}

impl BlobMapKeyKind {
    fn fixed_len(self) -> Option<usize> {
        match self {
            Self::TinyInt | Self::Boolean => Some(1),
            Self::SmallInt => Some(2),
            Self::Int | Self::Date | Self::Time => Some(4),
            Self::BigInt => Some(8),
            Self::Decimal { precision, .. } if precision <= 18 => Some(8),
            Self::Decimal { .. } | Self::Binary | Self::String => None,
        }
    }

    /// The Arrow type keys are decoded into: `Int8`, `Int16`, `Int32`, `Date32`,
    /// `Time32(Millisecond)`, `Int64`, `Boolean`, `Decimal128(p, s)`, `Binary`, `Utf8`.
    pub fn arrow_type(self) -> ArrowType {
        match self {
            Self::TinyInt => ArrowType::Int8,
            Self::SmallInt => ArrowType::Int16,
            Self::Int => ArrowType::Int32,
            Self::Date => ArrowType::Date32,
            Self::Time => ArrowType::Time32(TimeUnit::Millisecond),
            Self::BigInt => ArrowType::Int64,
            Self::Boolean => ArrowType::Boolean,
            Self::Decimal { precision, scale } => ArrowType::Decimal128(precision, scale),
            Self::Binary => ArrowType::Binary,
            Self::String => ArrowType::Utf8,
        }
    }
}

/// Which element serializer a `.blob` file column uses.
///
/// Source: Java `org.apache.paimon.format.blob.BlobElementSerializerFactory`,
/// `org.apache.paimon.types.BlobType#isBlobFileField`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobElementKind {
    /// `BLOB`: the payload is the blob bytes.
    Blob,
    /// `ARRAY<BLOB>`: the payload is a `BCBA` array payload.
    Array,
    /// `MAP<K, BLOB>`: the payload is a `BCBM` map payload with keys of this kind.
    Map(BlobMapKeyKind),
}

impl BlobElementKind {
    /// The serializer for a column of type `data_type`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for any type other than `BLOB`, `ARRAY<BLOB>` and `MAP<K, BLOB>`
    /// with a supported key type.
    pub fn try_from_data_type(data_type: &DataType) -> Result<Self> {
        let unsupported = || {
            Error::unsupported(format!(
                "element type {data_type:?} for the blob file format"
            ))
        };
        match &data_type.kind {
            TypeKind::Blob => Ok(Self::Blob),
            TypeKind::Array(e) if e.kind == TypeKind::Blob => Ok(Self::Array),
            TypeKind::Map(k, v) if v.kind == TypeKind::Blob => {
                let key = match &k.kind {
                    TypeKind::TinyInt => BlobMapKeyKind::TinyInt,
                    TypeKind::SmallInt => BlobMapKeyKind::SmallInt,
                    TypeKind::Int => BlobMapKeyKind::Int,
                    TypeKind::Date => BlobMapKeyKind::Date,
                    TypeKind::Time { .. } => BlobMapKeyKind::Time,
                    TypeKind::BigInt => BlobMapKeyKind::BigInt,
                    TypeKind::Boolean => BlobMapKeyKind::Boolean,
                    TypeKind::Decimal { precision, scale } => BlobMapKeyKind::Decimal {
                        precision: u8::try_from(*precision)
                            .ok()
                            .filter(|p| (1..=38).contains(p))
                            .ok_or_else(unsupported)?,
                        scale: i8::try_from(*scale).map_err(|_| unsupported())?,
                    },
                    TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => BlobMapKeyKind::Binary,
                    TypeKind::Char { .. } | TypeKind::VarChar { .. } => BlobMapKeyKind::String,
                    _ => return Err(unsupported()),
                };
                Ok(Self::Map(key))
            }
            _ => Err(unsupported()),
        }
    }

    /// The Arrow type values are read into: `LargeBinary` for `BLOB`, `List<LargeBinary>`
    /// (item field `item`) for `ARRAY<BLOB>`, `Map<K, LargeBinary>` (fields `entries`, `key`,
    /// `value`, unsorted) for `MAP<K, BLOB>`. In descriptor mode every binary holds serialized
    /// [`BlobDescriptor`] bytes instead of blob bytes.
    pub fn arrow_type(self) -> ArrowType {
        match self {
            Self::Blob => ArrowType::LargeBinary,
            Self::Array => ArrowType::List(Arc::new(list_item_field())),
            Self::Map(k) => ArrowType::Map(Arc::new(map_entries_field(k)), false),
        }
    }
}

fn list_item_field() -> Field {
    Field::new("item", ArrowType::LargeBinary, true)
}

fn map_struct_fields(k: BlobMapKeyKind) -> Fields {
    Fields::from(vec![
        Field::new("key", k.arrow_type(), false),
        Field::new("value", ArrowType::LargeBinary, true),
    ])
}

fn map_entries_field(k: BlobMapKeyKind) -> Field {
    Field::new("entries", ArrowType::Struct(map_struct_fields(k)), false)
}

// ---------------------------------------------------------------------------------------------
// Index and footer
// ---------------------------------------------------------------------------------------------

/// One row of a `.blob` file as described by its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobEntry {
    /// Index entry `-1`: the value is null; no record.
    Null,
    /// Index entry `-2`: the row is a placeholder; no record.
    Placeholder,
    /// A record at `offset_bytes` (from the start of the file) of `len_bytes` (≥ 16, magic and
    /// CRC included).
    Record {
        /// Offset of the record's magic in the file.
        offset_bytes: u64,
        /// Whole record length in bytes.
        len_bytes: u64,
    },
}

impl BlobEntry {
    /// Byte range of the record in the file, `None` for null and placeholder rows.
    pub fn record_range(&self) -> Option<Range<u64>> {
        match *self {
            Self::Record {
                offset_bytes,
                len_bytes,
            } => Some(offset_bytes..offset_bytes + len_bytes),
            _ => None,
        }
    }

    /// Byte range of the payload in the file (`offset + 4 .. offset + len - 12`).
    pub fn payload_range(&self) -> Option<Range<u64>> {
        match *self {
            Self::Record {
                offset_bytes,
                len_bytes,
            } => Some(offset_bytes + 4..(offset_bytes + len_bytes).saturating_sub(12)),
            _ => None,
        }
    }
}

/// The decoded index of one `.blob` file: one [`BlobEntry`] per row.
///
/// Source: Java `org.apache.paimon.format.blob.BlobFileMeta`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobFileIndex {
    path: String,
    file_size: u64,
    index_start: u64,
    entries: Vec<BlobEntry>,
}

impl BlobFileIndex {
    /// Path of the file (as given to the decoder).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// File size in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// Start of the index = end of the record region, in bytes.
    pub fn index_start(&self) -> u64 {
        self.index_start
    }

    /// Number of rows (index entries), null and placeholder rows included.
    pub fn row_count(&self) -> u64 {
        self.entries.len() as u64
    }

    /// All entries in row order.
    pub fn entries(&self) -> &[BlobEntry] {
        &self.entries
    }

    /// Entry of row `row` (0-based position in the file).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the file when `row` is out of range.
    pub fn entry(&self, row: u64) -> Result<BlobEntry> {
        usize::try_from(row)
            .ok()
            .and_then(|r| self.entries.get(r).copied())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "row {row} is out of range of blob file {} with {} rows",
                    self.path,
                    self.entries.len()
                ))
            })
    }

    /// Number of null (`-1`) entries.
    pub fn null_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, BlobEntry::Null))
            .count()
    }

    /// Number of placeholder (`-2`) entries.
    pub fn placeholder_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, BlobEntry::Placeholder))
            .count()
    }

    /// Check that the index has `expected` rows (the data file meta's `row_count`).
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the file and both counts.
    pub fn check_row_count(&self, expected: u64) -> Result<()> {
        if self.row_count() != expected {
            return Err(corrupt(
                &self.path,
                format!(
                    "index has {} rows, but the file meta says {expected}",
                    self.row_count()
                ),
            ));
        }
        Ok(())
    }
}

/// Decode the 5-byte footer of a file of `file_size` bytes; returns the index length in bytes.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` when the file is smaller than the footer, `footer` is not
/// 5 bytes, the version is not 1 ("unsupported version", checked first) or the index length is
/// negative or larger than the file.
pub fn decode_blob_footer(footer: &[u8], file_size: u64, path: &str) -> Result<u64> {
    if file_size < BLOB_FOOTER_LEN {
        return Err(corrupt(
            path,
            format!("file size {file_size} is smaller than footer size {BLOB_FOOTER_LEN}"),
        ));
    }
    let [a, b, c, d, version] = footer else {
        return Err(corrupt(
            path,
            format!("footer must be 5 bytes, got {}", footer.len()),
        ));
    };
    if *version != BLOB_FILE_VERSION {
        return Err(corrupt(
            path,
            format!("unsupported version: {version} (expected {BLOB_FILE_VERSION})"),
        ));
    }
    let index_len = i32::from_le_bytes([*a, *b, *c, *d]);
    match u64::try_from(index_len) {
        Ok(len) if len <= file_size - BLOB_FOOTER_LEN => Ok(len),
        _ => Err(corrupt(
            path,
            format!(
                "invalid index length {index_len} (file size {file_size}, at most {} allowed)",
                file_size - BLOB_FOOTER_LEN
            ),
        )),
    }
}

/// Decode the index bytes of a file of `file_size` bytes into a [`BlobFileIndex`], walking the
/// records' offsets.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` (and the row, where there is one) when the index is not
/// valid delta-varint, a record length is below 16 or a negative value other than -1/-2, a
/// record exceeds the data region, or the records do not fill the data region exactly.
pub fn decode_blob_index(index: &[u8], file_size: u64, path: &str) -> Result<BlobFileIndex> {
    let index_start = file_size
        .checked_sub(BLOB_FOOTER_LEN)
        .and_then(|x| x.checked_sub(index.len() as u64))
        .ok_or_else(|| {
            corrupt(
                path,
                format!(
                    "index of {} bytes does not fit in a file of {file_size} bytes",
                    index.len()
                ),
            )
        })?;
    let raw = decode_varints(index).map_err(|r| corrupt(path, format!("invalid index: {r}")))?;
    let mut entries = Vec::with_capacity(raw.len());
    let mut offset = 0u64;
    for (row, len) in raw.into_iter().enumerate() {
        let entry = match len {
            BLOB_NULL_LENGTH => BlobEntry::Null,
            BLOB_PLACEHOLDER_LENGTH => BlobEntry::Placeholder,
            len => {
                let len = u64::try_from(len)
                    .ok()
                    .filter(|l| *l >= BLOB_MIN_RECORD_LEN)
                    .ok_or_else(|| {
                        corrupt(path, format!("invalid record length {len} at row {row}"))
                    })?;
                if len > index_start - offset {
                    return Err(corrupt(
                        path,
                        format!(
                            "record length {len} at row {row} (offset {offset}) exceeds the data region of {index_start} bytes"
                        ),
                    ));
                }
                let e = BlobEntry::Record {
                    offset_bytes: offset,
                    len_bytes: len,
                };
                offset += len;
                e
            }
        };
        entries.push(entry);
    }
    if offset != index_start {
        return Err(corrupt(
            path,
            format!(
                "indexed records use {offset} bytes, but data region contains {index_start} bytes"
            ),
        ));
    }
    Ok(BlobFileIndex {
        path: path.to_string(),
        file_size,
        index_start,
        entries,
    })
}

/// Decode the footer and index of a whole `.blob` file held in memory.
///
/// # Errors
/// As [`decode_blob_footer`] and [`decode_blob_index`].
pub fn decode_blob_file_index(file: &[u8], path: &str) -> Result<BlobFileIndex> {
    let size = file.len() as u64;
    let footer_at = file.len().saturating_sub(BLOB_FOOTER_LEN as usize);
    let index_len = decode_blob_footer(&file[footer_at..], size, path)?;
    let index_at = footer_at - index_len as usize;
    decode_blob_index(&file[index_at..footer_at], size, path)
}

/// Verify one record's framing (magic, in-record length, CRC32 over magic + payload + length)
/// and return its payload. `row` is only used in error messages.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` and `row` on a short record, wrong magic, a length field
/// that disagrees with the record size, or a CRC mismatch.
pub fn decode_blob_record<'a>(record: &'a [u8], path: &str, row: u64) -> Result<&'a [u8]> {
    let n = record.len();
    if (n as u64) < BLOB_MIN_RECORD_LEN {
        return Err(corrupt(
            path,
            format!("record of row {row} has {n} bytes, fewer than {BLOB_MIN_RECORD_LEN}"),
        ));
    }
    let magic = u32::from_le_bytes([record[0], record[1], record[2], record[3]]);
    if magic != BLOB_RECORD_MAGIC {
        return Err(corrupt(
            path,
            format!(
                "wrong record magic {magic:#010x} at row {row} (expected {BLOB_RECORD_MAGIC:#010x})"
            ),
        ));
    }
    let mut len8 = [0u8; 8];
    len8.copy_from_slice(&record[n - 12..n - 4]);
    let stored_len = i64::from_le_bytes(len8);
    if u64::try_from(stored_len).ok() != Some(n as u64) {
        return Err(corrupt(
            path,
            format!("record of row {row} stores length {stored_len}, but the index says {n}"),
        ));
    }
    let mut crc4 = [0u8; 4];
    crc4.copy_from_slice(&record[n - 4..]);
    let stored_crc = u32::from_le_bytes(crc4);
    let crc = crc32fast::hash(&record[..n - 4]);
    if crc != stored_crc {
        return Err(corrupt(
            path,
            format!(
                "CRC mismatch in record of row {row}: stored {stored_crc:#010x}, computed {crc:#010x}"
            ),
        ));
    }
    Ok(&record[4..n - 12])
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/// What to do with placeholder (`-2`) rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlaceholderPolicy {
    /// A placeholder is an error naming the file and row (plain reads of a single layer).
    #[default]
    Reject,
    /// A placeholder reads as a null slot with its bit set in [`BlobRows::placeholders`].
    Mask,
}

/// What values a read produces.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BlobValueMode {
    /// The blob bytes (`blob-as-descriptor = false`).
    #[default]
    Bytes,
    /// Serialized v2 [`BlobDescriptor`]s `(uri, payload offset, payload length)` pointing into
    /// the file (`blob-as-descriptor = true`); no payload bytes of scalar blobs are read.
    Descriptor {
        /// The URI written into descriptors, usually the file's full path.
        uri: String,
    },
}

/// Options of [`read_blob_rows`] / [`decode_blob_rows`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlobReadOptions {
    /// Placeholder handling.
    pub placeholders: PlaceholderPolicy,
    /// Bytes or descriptors.
    pub values: BlobValueMode,
}

/// Rows read from one `.blob` file.
#[derive(Debug, Clone)]
pub struct BlobRows {
    /// For each output row, its 0-based row position in the file (ascending).
    pub positions: Vec<u64>,
    /// The values, of [`BlobElementKind::arrow_type`]; null for null and placeholder rows.
    pub values: ArrayRef,
    /// With [`PlaceholderPolicy::Mask`]: `Some` with one bit per output row (set = placeholder)
    /// when at least one output row is a placeholder; `None` otherwise.
    pub placeholders: Option<BooleanBuffer>,
}

fn check_selection(index: &BlobFileIndex, selection: Option<&[u64]>) -> Result<Vec<u64>> {
    let n = index.row_count();
    let Some(sel) = selection else {
        return Ok((0..n).collect());
    };
    for (i, &p) in sel.iter().enumerate() {
        if p >= n {
            return Err(Error::invalid(format!(
                "selected row {p} is out of range of blob file {} with {n} rows",
                index.path
            )));
        }
        if i > 0 && sel[i - 1] >= p {
            return Err(Error::invalid(format!(
                "row selection of blob file {} is not strictly ascending at {p}",
                index.path
            )));
        }
    }
    Ok(sel.to_vec())
}

/// Which record bytes are needed for `positions` under `options`: `(row, record range)`.
fn needed_records(
    index: &BlobFileIndex,
    kind: BlobElementKind,
    positions: &[u64],
    options: &BlobReadOptions,
) -> Result<Vec<(u64, Range<u64>)>> {
    let mut out = Vec::new();
    for &p in positions {
        let e = index.entry(p)?;
        if e == BlobEntry::Placeholder && options.placeholders == PlaceholderPolicy::Reject {
            return Err(placeholder_error(&index.path, p));
        }
        let raw_descriptor = kind == BlobElementKind::Blob
            && matches!(options.values, BlobValueMode::Descriptor { .. });
        if let Some(r) = e.record_range()
            && !raw_descriptor
        {
            out.push((p, r));
        }
    }
    Ok(out)
}

fn placeholder_error(path: &str, row: u64) -> Error {
    Error::invalid(format!(
        "blob file {path} row {row} is a placeholder (-2), which this read does not allow"
    ))
}

/// Decode `selection` (ascending row positions, all rows when `None`) of an in-memory file
/// (`file` = the whole file, `index` = its decoded index).
///
/// # Errors
/// As [`read_blob_rows`].
pub fn decode_blob_rows(
    file: &[u8],
    index: &BlobFileIndex,
    kind: BlobElementKind,
    selection: Option<&[u64]>,
    options: &BlobReadOptions,
) -> Result<BlobRows> {
    let positions = check_selection(index, selection)?;
    let needed = needed_records(index, kind, &positions, options)?;
    let mut records = Vec::with_capacity(needed.len());
    for (row, r) in needed {
        let bytes = usize::try_from(r.start)
            .ok()
            .zip(usize::try_from(r.end).ok())
            .and_then(|(a, b)| file.get(a..b))
            .ok_or_else(|| {
                corrupt(
                    &index.path,
                    format!("record of row {row} lies outside the file"),
                )
            })?;
        records.push((row, Bytes::copy_from_slice(bytes)));
    }
    assemble_rows(index, kind, positions, records, options)
}

/// Read the footer and index of a `.blob` file of `file_size` bytes (from the data file meta),
/// and check the row count against `expected_row_count` when given.
///
/// IO: one range read of the last `min(file_size, BLOB_TAIL_PREFETCH_BYTES)` bytes; a second
/// range read of the rest of the index only when it is larger than that tail.
///
/// # Errors
/// IO errors of the reads; the errors of [`decode_blob_footer`] / [`decode_blob_index`] /
/// [`BlobFileIndex::check_row_count`].
pub async fn read_blob_index<T>(
    io: &Io<T>,
    path: &str,
    file_size: u64,
    expected_row_count: Option<u64>,
) -> Result<BlobFileIndex> {
    if file_size < BLOB_FOOTER_LEN {
        decode_blob_footer(&[], file_size, path)?;
    }
    let tail_len = file_size.min(BLOB_TAIL_PREFETCH_BYTES);
    let tail = io.read_range(path, file_size - tail_len..file_size).await?;
    let footer_at = tail.len() - BLOB_FOOTER_LEN as usize;
    let index_len = decode_blob_footer(&tail[footer_at..], file_size, path)?;
    let have = (footer_at) as u64;
    let index = if index_len <= have {
        decode_blob_index(
            &tail[(have - index_len) as usize..footer_at],
            file_size,
            path,
        )?
    } else {
        let index_start = file_size - BLOB_FOOTER_LEN - index_len;
        let head = io
            .read_range(path, index_start..file_size - tail_len)
            .await?;
        let mut all = Vec::with_capacity(index_len as usize);
        all.extend_from_slice(&head);
        all.extend_from_slice(&tail[..footer_at]);
        decode_blob_index(&all, file_size, path)?
    };
    if let Some(n) = expected_row_count {
        index.check_row_count(n)?;
    }
    Ok(index)
}

/// Read `selection` (strictly ascending 0-based row positions, every row when `None`) of the
/// file described by `index`, fetching only the records of the selected rows (one range read
/// per run of adjacent records, all in one round; none for scalar blobs in descriptor mode).
///
/// Output: [`BlobRows`] with the values as [`BlobElementKind::arrow_type`], positions mapping
/// each output row back to its file row, and the placeholder mask.
///
/// # Errors
/// [`Error::Invalid`] for a selection out of range or not ascending, or a placeholder under
/// [`PlaceholderPolicy::Reject`] (naming file and row); [`Error::Corrupt`] naming file and row
/// for a bad record or element payload; IO errors.
pub async fn read_blob_rows<T>(
    io: &Io<T>,
    index: &BlobFileIndex,
    kind: BlobElementKind,
    selection: Option<&[u64]>,
    options: &BlobReadOptions,
) -> Result<BlobRows> {
    let positions = check_selection(index, selection)?;
    let needed = needed_records(index, kind, &positions, options)?;
    // Coalesce runs of adjacent records into one range read each.
    type Run = (Range<u64>, Vec<(u64, Range<u64>)>);
    let mut runs: Vec<Run> = Vec::new();
    for (row, r) in needed {
        match runs.last_mut() {
            Some((run, members)) if run.end == r.start => {
                run.end = r.end;
                members.push((row, r));
            }
            _ => runs.push((r.clone(), vec![(row, r)])),
        }
    }
    let path = index.path.as_str();
    let fetched = try_join_all(runs.iter().map(|(r, _)| io.read_range(path, r.clone()))).await?;
    let mut records = Vec::new();
    for ((run, members), bytes) in runs.into_iter().zip(fetched) {
        for (row, r) in members {
            let a = (r.start - run.start) as usize;
            let b = (r.end - run.start) as usize;
            records.push((row, bytes.slice(a..b)));
        }
    }
    assemble_rows(index, kind, positions, records, options)
}

/// Read the value of one row of a `.blob` file of `file_size` bytes: at most three range reads
/// (file tail, rest of the index if larger than the tail, the record). `Ok(None)` for a null
/// row.
///
/// # Errors
/// As [`read_blob_index`] and [`read_blob_rows`] (placeholders are rejected).
pub async fn read_blob_value<T>(
    io: &Io<T>,
    path: &str,
    file_size: u64,
    kind: BlobElementKind,
    row: u64,
) -> Result<Option<ArrayRef>> {
    let index = read_blob_index(io, path, file_size, None).await?;
    let rows = read_blob_rows(io, &index, kind, Some(&[row]), &BlobReadOptions::default()).await?;
    Ok(if rows.values.is_null(0) {
        None
    } else {
        Some(rows.values)
    })
}

fn descriptor_bytes(uri: &str, file_range: Range<u64>) -> Vec<u8> {
    BlobDescriptor::new(
        uri,
        file_range.start as i64,
        (file_range.end - file_range.start) as i64,
    )
    .serialize()
}

/// Turn verified records into the output columns. `records` holds `(row, record bytes)` for
/// every needed row, in ascending row order.
fn assemble_rows(
    index: &BlobFileIndex,
    kind: BlobElementKind,
    positions: Vec<u64>,
    records: Vec<(u64, Bytes)>,
    options: &BlobReadOptions,
) -> Result<BlobRows> {
    let path = index.path.as_str();
    let descriptor_uri = match &options.values {
        BlobValueMode::Bytes => None,
        BlobValueMode::Descriptor { uri } => Some(uri.as_str()),
    };
    let mut mask = BooleanBufferBuilder::new(positions.len());
    let mut any_placeholder = false;
    let mut records = records.into_iter().peekable();
    // Per output row: None = null slot, Some((payload, payload offset in file)).
    let mut payloads: Vec<Option<(Bytes, u64)>> = Vec::with_capacity(positions.len());
    for &p in &positions {
        let entry = index.entry(p)?;
        mask.append(entry == BlobEntry::Placeholder);
        any_placeholder |= entry == BlobEntry::Placeholder;
        let BlobEntry::Record { offset_bytes, .. } = entry else {
            payloads.push(None);
            continue;
        };
        let payload_at = offset_bytes + 4;
        match records.peek() {
            Some((row, rec)) if *row == p => {
                decode_blob_record(rec, path, p)?;
                let payload = rec.slice(4..rec.len() - 12);
                records.next();
                payloads.push(Some((payload, payload_at)));
            }
            // Scalar blob in descriptor mode: nothing was read.
            _ => {
                let len = entry
                    .payload_range()
                    .map(|r| r.end - r.start)
                    .unwrap_or_default();
                let uri = descriptor_uri.unwrap_or_default();
                let d = descriptor_bytes(uri, payload_at..payload_at + len);
                payloads.push(Some((Bytes::from(d), payload_at)));
            }
        }
    }
    let placeholders = any_placeholder.then(|| mask.finish());
    let values: ArrayRef = match kind {
        BlobElementKind::Blob => {
            let mut b = LargeBinaryBuilder::new();
            for p in &payloads {
                match p {
                    Some((bytes, _)) => b.append_value(bytes),
                    None => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        BlobElementKind::Array => build_array_column(&positions, &payloads, descriptor_uri, path)?,
        BlobElementKind::Map(k) => {
            build_map_column(&positions, &payloads, k, descriptor_uri, path)?
        }
    };
    Ok(BlobRows {
        positions,
        values,
        placeholders,
    })
}

fn element_value(
    payload: &Bytes,
    payload_at: u64,
    r: &Range<usize>,
    descriptor_uri: Option<&str>,
) -> Vec<u8> {
    match descriptor_uri {
        None => payload[r.clone()].to_vec(),
        Some(uri) => {
            let a = payload_at + r.start as u64;
            descriptor_bytes(uri, a..a + (r.end - r.start) as u64)
        }
    }
}

fn build_array_column(
    positions: &[u64],
    payloads: &[Option<(Bytes, u64)>],
    descriptor_uri: Option<&str>,
    path: &str,
) -> Result<ArrayRef> {
    let mut items = LargeBinaryBuilder::new();
    let mut offsets = Vec::with_capacity(payloads.len() + 1);
    offsets.push(0i32);
    let mut count = 0usize;
    let mut valid = BooleanBufferBuilder::new(payloads.len());
    for (p, &row) in payloads.iter().zip(positions) {
        if let Some((payload, at)) = p {
            for e in decode_array_payload(payload, path, row)? {
                match e {
                    Some(r) => items.append_value(element_value(payload, *at, &r, descriptor_uri)),
                    None => items.append_null(),
                }
                count += 1;
            }
        }
        valid.append(p.is_some());
        let off = i32::try_from(count)
            .map_err(|_| Error::unsupported(format!("more than 2^31 array elements in {path}")))?;
        offsets.push(off);
    }
    let list = ListArray::try_new(
        Arc::new(list_item_field()),
        OffsetBuffer::new(offsets.into()),
        Arc::new(items.finish()),
        Some(NullBuffer::new(valid.finish())),
    )
    .map_err(|e| Error::arrow(format!("array<blob> column of {path}"), e))?;
    Ok(Arc::new(list))
}

fn build_keys(kind: BlobMapKeyKind, keys: &[&[u8]]) -> Result<ArrayRef> {
    fn fixed<const N: usize>(k: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(k);
        a
    }
    // Keys were validated by `decode_map_payload` (widths, UTF-8, booleans, decimals).
    Ok(match kind {
        BlobMapKeyKind::TinyInt => Arc::new(Int8Array::from_iter_values(
            keys.iter().map(|k| i8::from_le_bytes(fixed(k))),
        )),
        BlobMapKeyKind::SmallInt => Arc::new(Int16Array::from_iter_values(
            keys.iter().map(|k| i16::from_le_bytes(fixed(k))),
        )),
        BlobMapKeyKind::Int => Arc::new(Int32Array::from_iter_values(
            keys.iter().map(|k| i32::from_le_bytes(fixed(k))),
        )),
        BlobMapKeyKind::Date => Arc::new(Date32Array::from_iter_values(
            keys.iter().map(|k| i32::from_le_bytes(fixed(k))),
        )),
        BlobMapKeyKind::Time => Arc::new(Time32MillisecondArray::from_iter_values(
            keys.iter().map(|k| i32::from_le_bytes(fixed(k))),
        )),
        BlobMapKeyKind::BigInt => Arc::new(Int64Array::from_iter_values(
            keys.iter().map(|k| i64::from_le_bytes(fixed(k))),
        )),
        BlobMapKeyKind::Boolean => Arc::new(BooleanArray::from(
            keys.iter().map(|k| k[0] == 1).collect::<Vec<_>>(),
        )),
        BlobMapKeyKind::Decimal { precision, scale } => {
            let vals = keys
                .iter()
                .map(|k| decimal_key(k, precision).map_err(Error::invalid))
                .collect::<Result<Vec<_>>>()?;
            Arc::new(
                Decimal128Array::from_iter_values(vals)
                    .with_precision_and_scale(precision, scale)
                    .map_err(|e| Error::arrow("blob map decimal keys", e))?,
            )
        }
        BlobMapKeyKind::Binary => Arc::new(arrow_array::BinaryArray::from_iter_values(
            keys.iter().copied(),
        )),
        BlobMapKeyKind::String => Arc::new(StringArray::from_iter_values(
            keys.iter()
                .map(|k| std::str::from_utf8(k).unwrap_or_default()),
        )),
    })
}

fn build_map_column(
    positions: &[u64],
    payloads: &[Option<(Bytes, u64)>],
    kind: BlobMapKeyKind,
    descriptor_uri: Option<&str>,
    path: &str,
) -> Result<ArrayRef> {
    let mut key_bytes: Vec<&[u8]> = Vec::new();
    let mut values = LargeBinaryBuilder::new();
    let mut offsets = Vec::with_capacity(payloads.len() + 1);
    offsets.push(0i32);
    let mut valid = BooleanBufferBuilder::new(payloads.len());
    for (p, &row) in payloads.iter().zip(positions) {
        if let Some((payload, at)) = p {
            for (i, (k, v)) in decode_map_payload(payload, kind, path, row)?
                .into_iter()
                .enumerate()
            {
                let Some(k) = k else {
                    return Err(Error::unsupported(format!(
                        "null key (entry {i}) in map of row {row} of blob file {path}: Arrow maps cannot hold null keys"
                    )));
                };
                key_bytes.push(&payload[k]);
                match v {
                    Some(r) => values.append_value(element_value(payload, *at, &r, descriptor_uri)),
                    None => values.append_null(),
                }
            }
        }
        valid.append(p.is_some());
        let off = i32::try_from(key_bytes.len())
            .map_err(|_| Error::unsupported(format!("more than 2^31 map entries in {path}")))?;
        offsets.push(off);
    }
    let keys = build_keys(kind, &key_bytes)?;
    let entries = StructArray::try_new(
        map_struct_fields(kind),
        vec![keys, Arc::new(values.finish())],
        None,
    )
    .map_err(|e| Error::arrow(format!("map<k, blob> entries of {path}"), e))?;
    let map = MapArray::try_new(
        Arc::new(map_entries_field(kind)),
        OffsetBuffer::new(offsets.into()),
        entries,
        Some(NullBuffer::new(valid.finish())),
        false,
    )
    .map_err(|e| Error::arrow(format!("map<k, blob> column of {path}"), e))?;
    Ok(Arc::new(map))
}

#[cfg(test)]
mod tests;
