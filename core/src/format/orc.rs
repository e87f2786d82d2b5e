//! ORC data files to Arrow, over fetched byte ranges, with orc-rust's synchronous reader.
//!
//! Rounds made by one file:
//! 1. `Read path [size - min(64 KiB, size), size)`: the file tail (postscript, footer and
//!    metadata sections);
//! 2. only if the tail is longer than that suffix: a `Read` of the rest of it;
//! 3. per stripe with at least one row, when the previous stripe is exhausted: one `Read` of
//!    the whole stripe (index, data and stripe footer), unless the stripe lies inside the
//!    tail already read (all stripes of a file smaller than 64 KiB). Unprojected streams of the stripe are
//!    fetched but not decoded (orc-rust reads the stripe footer and the projected streams from
//!    the fetched bytes).
//!
//! The postscript is parsed here first so that its lengths are checked against the file size
//! before orc-rust sees them. Codecs: none, zlib, snappy, lz4, zstd (and lzo), as orc-rust
//! supports them. Timestamps are read at nanosecond precision (`Timestamp(ns)`, ORC
//! `TIMESTAMP_INSTANT` with time zone `UTC`); [`crate::types::cast_batch_to`] converts them to
//! the schema's unit.
//!
//! Known limits of orc-rust 0.9 on corrupt input (not reachable through the checks made here
//! for the tail and stripe ranges): an unknown writer time zone name in a stripe footer panics,
//! and overflowing stream lengths inside a stripe footer overflow an unchecked addition.
//!
//! Source: Java `org.apache.paimon.format.orc.OrcReaderFactory`.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, GenericStringArray, ListArray, MapArray, OffsetSizeTrait, RecordBatch,
    StructArray,
};
use arrow_schema::{ArrowError, DataType as ArrowType, FieldRef, Schema, SchemaRef};
use bytes::{Buf, Bytes};
use orc_rust::arrow_reader::{ArrowReader, ArrowReaderBuilder};
use orc_rust::projection::ProjectionMask;
use orc_rust::reader::ChunkReader;
use orc_rust::reader::metadata::FileMetadata;
use orc_rust::schema::DataType as OrcType;

use crate::error::{Error, Result};
use crate::format::reading::{ResolvedProjection, check_range, extend_tail, read_tail};
use crate::io::Io;
use crate::spec::types::TypeKind;

const FORMAT: &str = "orc";
const MAGIC: &[u8; 3] = b"ORC";

/// Byte ranges of an ORC file fetched so far, as an orc-rust [`ChunkReader`].
///
/// A read of bytes that were not fetched is an IO error (never a zero-filled buffer), so a
/// decoder asking for something unexpected fails instead of decoding garbage.
#[derive(Debug, Clone)]
pub struct FetchedRanges {
    file_size: u64,
    /// `(offset, bytes)`, non-overlapping.
    chunks: Arc<Vec<(u64, Bytes)>>,
}

impl FetchedRanges {
    /// A file of `file_size` bytes of which `chunks` (`(offset, bytes)`) are known.
    pub fn new(file_size: u64, chunks: Vec<(u64, Bytes)>) -> Self {
        FetchedRanges {
            file_size,
            chunks: Arc::new(chunks),
        }
    }

    fn slice(&self, offset: u64, len: u64) -> std::io::Result<Bytes> {
        for (start, bytes) in self.chunks.iter() {
            let end = start.saturating_add(bytes.len() as u64);
            if *start <= offset && offset.saturating_add(len) <= end {
                let from = usize::try_from(offset - start).map_err(std::io::Error::other)?;
                let to = usize::try_from(offset - start + len).map_err(std::io::Error::other)?;
                return Ok(bytes.slice(from..to));
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "bytes {offset}..{} were not fetched (file of {} bytes)",
                offset.saturating_add(len),
                self.file_size
            ),
        ))
    }
}

impl ChunkReader for FetchedRanges {
    type T = bytes::buf::Reader<Bytes>;

    fn len(&self) -> u64 {
        self.file_size
    }

    fn get_read(&self, offset_from_start: u64) -> std::io::Result<Self::T> {
        for (start, bytes) in self.chunks.iter() {
            let end = start.saturating_add(bytes.len() as u64);
            if *start <= offset_from_start && offset_from_start < end {
                let from =
                    usize::try_from(offset_from_start - start).map_err(std::io::Error::other)?;
                return Ok(bytes.slice(from..).reader());
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("offset {offset_from_start} was not fetched"),
        ))
    }

    fn get_bytes(&self, offset_from_start: u64, length: u64) -> std::io::Result<Bytes> {
        self.slice(offset_from_start, length)
    }
}

/// Lengths read from an ORC postscript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrcPostscript {
    /// Length of the postscript itself (the file's last byte).
    pub postscript_len: u64,
    /// Length of the (compressed) footer section.
    pub footer_len: u64,
    /// Length of the (compressed) metadata section.
    pub metadata_len: u64,
}

impl OrcPostscript {
    /// Bytes at the end of the file holding metadata, footer, postscript and its length byte.
    pub fn tail_len(&self) -> Option<u64> {
        self.metadata_len
            .checked_add(self.footer_len)?
            .checked_add(self.postscript_len)?
            .checked_add(1)
    }
}

fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Parse the postscript of an ORC file from its last bytes (`tail`, at least the postscript and
/// its length byte) and check the section lengths against `file_size`.
///
/// # Errors
/// [`Error::Corrupt`] for a missing `ORC` magic, a malformed postscript or sections that do
/// not fit in the file.
pub fn decode_orc_postscript(path: &str, file_size: u64, tail: &[u8]) -> Result<OrcPostscript> {
    let bad = |reason: String| Error::corrupt(path, FORMAT, reason);
    let Some((&ps_len, rest)) = tail.split_last() else {
        return Err(bad("empty file".into()));
    };
    let ps_len = usize::from(ps_len);
    if ps_len == 0 || ps_len > rest.len() {
        return Err(bad(format!(
            "postscript length {ps_len} does not fit in {} tail bytes",
            rest.len()
        )));
    }
    let ps = &rest[rest.len() - ps_len..];
    let mut pos = 0;
    let (mut footer_len, mut metadata_len, mut magic_ok) = (None, None, false);
    while pos < ps.len() {
        let key = read_varint(ps, &mut pos).ok_or_else(|| bad("truncated postscript".into()))?;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                let v =
                    read_varint(ps, &mut pos).ok_or_else(|| bad("truncated postscript".into()))?;
                match field {
                    1 => footer_len = Some(v),
                    5 => metadata_len = Some(v),
                    _ => {}
                }
            }
            2 => {
                let len =
                    read_varint(ps, &mut pos).ok_or_else(|| bad("truncated postscript".into()))?;
                let end = usize::try_from(len)
                    .ok()
                    .and_then(|l| pos.checked_add(l))
                    .filter(|e| *e <= ps.len())
                    .ok_or_else(|| bad("truncated postscript".into()))?;
                if field == 8000 && &ps[pos..end] == MAGIC {
                    magic_ok = true;
                }
                pos = end;
            }
            1 => pos += 8,
            5 => pos += 4,
            _ => {
                return Err(bad(format!(
                    "postscript field {field} has wire type {wire}"
                )));
            }
        }
    }
    if !magic_ok {
        return Err(bad("postscript has no ORC magic".into()));
    }
    let postscript = OrcPostscript {
        postscript_len: ps_len as u64,
        footer_len: footer_len.ok_or_else(|| bad("postscript has no footer length".into()))?,
        metadata_len: metadata_len.unwrap_or(0),
    };
    match postscript.tail_len() {
        // The file starts with the 3-byte magic.
        Some(t) if t.checked_add(3).is_some_and(|n| n <= file_size) => Ok(postscript),
        _ => Err(bad(format!(
            "footer of {} bytes and metadata of {} bytes do not fit in a file of {file_size} bytes",
            postscript.footer_len, postscript.metadata_len
        ))),
    }
}

/// Streaming reader of one ORC data file (see the module docs for its rounds).
pub struct OrcFileReader {
    path: String,
    file_size: u64,
    /// The file tail: `(offset, bytes)` up to the end of the file.
    tail: (u64, Bytes),
    metadata: Arc<FileMetadata>,
    file_schema: SchemaRef,
    projection: ResolvedProjection,
    mask: ProjectionMask,
    batch_size: usize,
    next_stripe: usize,
    current: Option<(usize, ArrowReader<FetchedRanges>)>,
}

impl std::fmt::Debug for OrcFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrcFileReader")
            .field("path", &self.path)
            .field("file_size", &self.file_size)
            .field("next_stripe", &self.next_stripe)
            .finish()
    }
}

impl OrcFileReader {
    /// Read the tail of `path` (`file_size` bytes) and prepare to decode the columns named in
    /// `projection` (`None`: all), `batch_size` rows per batch.
    ///
    /// # Errors
    /// [`Error::Io`] from the reads; [`Error::Corrupt`] for an invalid tail.
    pub async fn open<T>(
        io: &Io<T>,
        path: &str,
        file_size: u64,
        projection: Option<&[String]>,
        batch_size: usize,
    ) -> Result<Self> {
        if file_size < 4 {
            return Err(Error::corrupt(
                path,
                FORMAT,
                format!("file of {file_size} bytes is too small to be ORC"),
            ));
        }
        let tail = read_tail(io, path, file_size).await?;
        let postscript = decode_orc_postscript(path, file_size, &tail)?;
        let needed = postscript
            .tail_len()
            .ok_or_else(|| Error::corrupt(path, FORMAT, "tail length overflows"))?;
        let tail = extend_tail(io, path, file_size, tail, needed).await?;
        let tail_start = file_size - tail.len() as u64;
        Self::from_tail(path, file_size, tail_start, tail, projection, batch_size)
    }

    /// Build the reader from the fetched tail `tail` starting at `tail_start` (no IO).
    ///
    /// # Errors
    /// [`Error::Corrupt`] for an invalid tail or stripe ranges outside the file.
    pub fn from_tail(
        path: &str,
        file_size: u64,
        tail_start: u64,
        tail: Bytes,
        projection: Option<&[String]>,
        batch_size: usize,
    ) -> Result<Self> {
        let fetched = FetchedRanges::new(file_size, vec![(tail_start, tail.clone())]);
        let builder = ArrowReaderBuilder::try_new(fetched)
            .map_err(|e| Error::corrupt(path, FORMAT, format!("invalid file tail: {e}")))?;
        let metadata = Arc::new(builder.file_metadata().clone());
        let file_schema = with_field_metadata(builder.schema(), &metadata);
        let projection = ResolvedProjection::new(&file_schema, projection);
        let names: Vec<&str> = projection
            .roots
            .iter()
            .map(|&i| file_schema.field(i).name().as_str())
            .collect();
        let mask = ProjectionMask::named_roots(metadata.root_data_type(), &names);
        for (i, stripe) in metadata.stripe_metadatas().iter().enumerate() {
            stripe_range(path, file_size, i, stripe)?;
        }
        Ok(OrcFileReader {
            path: path.to_string(),
            file_size,
            tail: (tail_start, tail),
            metadata,
            file_schema,
            projection,
            mask,
            batch_size: batch_size.max(1),
            next_stripe: 0,
            current: None,
        })
    }

    /// The next batch of projected columns, or `None` at the end of the file.
    ///
    /// # Errors
    /// [`Error::Io`] from the reads; [`Error::Corrupt`] naming the stripe for data that does
    /// not decode.
    pub async fn next_batch<T>(&mut self, io: &Io<T>) -> Result<Option<RecordBatch>> {
        loop {
            if let Some((stripe, reader)) = &mut self.current {
                match reader.next() {
                    Some(Ok(batch)) => {
                        let batch = self.projection.apply(&batch, &self.path, FORMAT)?;
                        return trim_chars(batch, &self.metadata, &self.path).map(Some);
                    }
                    Some(Err(e)) => {
                        return Err(Error::corrupt(
                            &self.path,
                            FORMAT,
                            format!("stripe {stripe}: {e}"),
                        ));
                    }
                    None => self.current = None,
                }
            }
            let stripes = self.metadata.stripe_metadatas();
            let Some(info) = stripes.get(self.next_stripe) else {
                return Ok(None);
            };
            let index = self.next_stripe;
            self.next_stripe += 1;
            if info.number_of_rows() == 0 {
                continue;
            }
            let range = stripe_range(&self.path, self.file_size, index, info)?;
            let fetched = if range.start >= self.tail.0 {
                // The stripe lies inside the tail read at open (small files).
                FetchedRanges::new(self.file_size, vec![self.tail.clone()])
            } else {
                let bytes = io.read_range(&self.path, range.clone()).await?;
                FetchedRanges::new(
                    self.file_size,
                    vec![self.tail.clone(), (range.start, bytes)],
                )
            };
            let start = usize::try_from(range.start)
                .map_err(|_| Error::corrupt(&self.path, FORMAT, "stripe offset too large"))?;
            let reader = ArrowReaderBuilder::try_new(fetched)
                .map_err(|e| Error::corrupt(&self.path, FORMAT, format!("invalid file tail: {e}")))?
                .with_projection(self.mask.clone())
                .with_batch_size(self.batch_size)
                .with_file_byte_range(start..start.saturating_add(1))
                .build();
            self.current = Some((index, reader));
        }
    }

    /// The file's Arrow schema (all columns).
    pub fn file_schema(&self) -> &SchemaRef {
        &self.file_schema
    }

    /// The schema of the returned batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.projection.schema
    }

    /// Rows in the file per its footer.
    pub fn row_count(&self) -> u64 {
        self.metadata.number_of_rows()
    }
}

/// User metadata key of the serialized Arrow schema Java writes into ORC files (base64 text
/// of an Arrow IPC schema message; Java `FormatMetadataUtils.ARROW_SCHEMA_METADATA_KEY`).
const ARROW_SCHEMA: &str = "ARROW:schema";

/// `schema` with the metadata Java attached to its top-level fields (the shared-shredding MAP
/// layout) taken from the file's `ARROW:schema` user metadata, matched by field name. A file
/// without it, or whose value does not decode as base64 text of an Arrow schema, has none
/// (Java's `OrcReaderFactory.readFieldMetadata` ignores it the same way).
fn with_field_metadata(schema: SchemaRef, metadata: &FileMetadata) -> SchemaRef {
    use base64::Engine;
    let Some(encoded) = metadata.user_custom_metadata().get(ARROW_SCHEMA) else {
        return schema;
    };
    let Some(arrow) = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim_ascii())
        .ok()
        .and_then(|b| arrow_ipc::convert::try_schema_from_ipc_buffer(&b).ok())
    else {
        return schema;
    };
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| match arrow.field_with_name(f.name()) {
            Ok(a) if !a.metadata().is_empty() => {
                Arc::new(f.as_ref().clone().with_metadata(a.metadata().clone()))
            }
            _ => Arc::clone(f),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// `batch` with the trailing spaces of every ORC `CHAR(n)` value removed, at any depth: the
/// ORC writer pads CHAR values to their length and Java's ORC reader trims them back
/// (`CharTreeReader`: right trim), so a CHAR column reads as written.
fn trim_chars(batch: RecordBatch, metadata: &FileMetadata, path: &str) -> Result<RecordBatch> {
    let children = metadata.root_data_type().children();
    if !children.iter().any(|c| c.data_type().holds_char()) {
        return Ok(batch);
    }
    let schema = batch.schema();
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        columns.push(match children.iter().find(|c| c.name() == field.name()) {
            Some(c) if c.data_type().holds_char() => trim_array(column, c.data_type())
                .map_err(|e| Error::arrow(format!("reading {path}: column {}", field.name()), e))?,
            _ => Arc::clone(column),
        });
    }
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| Error::arrow(format!("reading {path}"), e))
}

/// `array`, decoded from an ORC file, with the trailing spaces of every value that has the
/// Paimon type `CHAR(n)` in `t` (the type of the column in the file's table schema) removed,
/// at any depth, whatever ORC type the writer chose for it.
///
/// Java reads an ORC file with a read schema built from the table type, and ORC's conversion
/// to `char(n)` right-trims (a `string` column written by pypaimon for a CHAR field reads
/// without its trailing spaces); this is that rule.
///
/// # Errors
/// [`ArrowError`] when the decoded nesting does not match `t`.
///
/// Source: Java `org.apache.paimon.format.orc.OrcReaderFactory` (read schema from the
/// table's row type).
pub(crate) fn trim_chars_of_table_type(
    array: &ArrayRef,
    t: &crate::spec::types::DataType,
) -> std::result::Result<ArrayRef, ArrowError> {
    trim_array(array, t)
}

/// Whether the table type `t` holds a `CHAR(n)` at any depth (the columns
/// [`trim_chars_of_table_type`] changes).
pub(crate) fn table_type_holds_char(t: &crate::spec::types::DataType) -> bool {
    t.holds_char()
}

/// A type tree that says where CHAR values sit: the ORC file's type or the table's type.
trait CharTree {
    /// A `CHAR(n)` type.
    fn is_char(&self) -> bool;
    /// Whether a CHAR type sits anywhere in this type.
    fn holds_char(&self) -> bool;
    /// The type of the struct / row field named `name`.
    fn field(&self, name: &str) -> Option<&Self>;
    /// The element type of a list.
    fn element(&self) -> Option<&Self>;
    /// The key and value types of a map.
    fn key_value(&self) -> Option<(&Self, &Self)>;
}

impl CharTree for OrcType {
    fn is_char(&self) -> bool {
        matches!(self, OrcType::Char { .. })
    }
    fn holds_char(&self) -> bool {
        match self {
            OrcType::Char { .. } => true,
            OrcType::Struct { children, .. } => children.iter().any(|c| c.data_type().holds_char()),
            OrcType::List { child, .. } => child.holds_char(),
            OrcType::Map { key, value, .. } => key.holds_char() || value.holds_char(),
            OrcType::Union { variants, .. } => variants.iter().any(CharTree::holds_char),
            _ => false,
        }
    }
    fn field(&self, name: &str) -> Option<&Self> {
        match self {
            OrcType::Struct { children, .. } => children
                .iter()
                .find(|c| c.name() == name)
                .map(|c| c.data_type()),
            _ => None,
        }
    }
    fn element(&self) -> Option<&Self> {
        match self {
            OrcType::List { child, .. } => Some(child),
            _ => None,
        }
    }
    fn key_value(&self) -> Option<(&Self, &Self)> {
        match self {
            OrcType::Map { key, value, .. } => Some((key, value)),
            _ => None,
        }
    }
}

impl CharTree for crate::spec::types::DataType {
    fn is_char(&self) -> bool {
        matches!(self.kind, TypeKind::Char { .. })
    }
    fn holds_char(&self) -> bool {
        match &self.kind {
            TypeKind::Char { .. } => true,
            TypeKind::Row(fields) => fields.iter().any(|f| f.data_type.holds_char()),
            TypeKind::Array(e) | TypeKind::Multiset(e) => e.holds_char(),
            TypeKind::Map(k, v) => k.holds_char() || v.holds_char(),
            _ => false,
        }
    }
    fn field(&self, name: &str) -> Option<&Self> {
        match &self.kind {
            TypeKind::Row(fields) => fields.iter().find(|f| f.name == name).map(|f| &f.data_type),
            _ => None,
        }
    }
    fn element(&self) -> Option<&Self> {
        match &self.kind {
            TypeKind::Array(e) | TypeKind::Multiset(e) => Some(e),
            _ => None,
        }
    }
    fn key_value(&self) -> Option<(&Self, &Self)> {
        match &self.kind {
            TypeKind::Map(k, v) => Some((k, v)),
            _ => None,
        }
    }
}

/// `strings` (the string view of `array`) with trailing spaces removed; `array` itself when no
/// value ends with a space (a column read again after the ORC type already trimmed it, or
/// values that fill their length), so that such a pass allocates nothing.
fn trim_strings<O: OffsetSizeTrait>(strings: &GenericStringArray<O>, array: &ArrayRef) -> ArrayRef {
    if !strings.iter().flatten().any(|s| s.ends_with(' ')) {
        return Arc::clone(array);
    }
    Arc::new(
        strings
            .iter()
            .map(|v| v.map(|s| s.trim_end_matches(' ')))
            .collect::<GenericStringArray<O>>(),
    )
}

/// `array` (decoded with type `t`) with CHAR values right-trimmed of spaces.
fn trim_array<T: CharTree>(array: &ArrayRef, t: &T) -> std::result::Result<ArrayRef, ArrowError> {
    use arrow_array::cast::AsArray;
    if !t.holds_char() {
        return Ok(Arc::clone(array));
    }
    if t.is_char() {
        return Ok(match array.data_type() {
            ArrowType::Utf8 => trim_strings(array.as_string::<i32>(), array),
            ArrowType::LargeUtf8 => trim_strings(array.as_string::<i64>(), array),
            _ => Arc::clone(array),
        });
    }
    Ok(match array.data_type() {
        ArrowType::Struct(fields) => {
            let s = array.as_struct();
            let columns = fields
                .iter()
                .zip(s.columns())
                .map(|(f, c)| match t.field(f.name()) {
                    Some(o) => trim_array(c, o),
                    None => Ok(Arc::clone(c)),
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Arc::new(StructArray::try_new(
                fields.clone(),
                columns,
                s.nulls().cloned(),
            )?)
        }
        ArrowType::List(item) => match t.element() {
            Some(child) => {
                let l = array.as_list::<i32>();
                Arc::new(ListArray::try_new(
                    Arc::clone(item),
                    l.offsets().clone(),
                    trim_array(l.values(), child)?,
                    l.nulls().cloned(),
                )?)
            }
            None => Arc::clone(array),
        },
        ArrowType::Map(entries, sorted) => {
            let (Some((key, value)), ArrowType::Struct(kv)) = (t.key_value(), entries.data_type())
            else {
                return Ok(Arc::clone(array));
            };
            let m = array.as_map();
            let entries_struct = StructArray::try_new(
                kv.clone(),
                vec![trim_array(m.keys(), key)?, trim_array(m.values(), value)?],
                m.entries().nulls().cloned(),
            )?;
            Arc::new(MapArray::try_new(
                Arc::clone(entries),
                m.offsets().clone(),
                entries_struct,
                m.nulls().cloned(),
                *sorted,
            )?)
        }
        _ => Arc::clone(array),
    })
}

/// The byte range of a whole stripe, checked against the file size.
fn stripe_range(
    path: &str,
    file_size: u64,
    index: usize,
    info: &orc_rust::stripe::StripeMetadata,
) -> Result<Range<u64>> {
    let len = info
        .index_length()
        .checked_add(info.data_length())
        .and_then(|l| l.checked_add(info.footer_length()))
        .ok_or_else(|| Error::corrupt(path, FORMAT, format!("stripe {index} length overflows")))?;
    check_range(
        path,
        FORMAT,
        &format!("stripe {index}"),
        info.offset(),
        len,
        file_size,
    )
}

#[cfg(test)]
mod tests;
