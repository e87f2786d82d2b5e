//! ORC data files, written with orc-rust's Arrow writer and given Java's schema details.
//!
//! Types, as Java's `OrcTypeUtil.convertToOrcSchema` maps them: BOOLEAN, TINYINT, SMALLINT,
//! INT, BIGINT, FLOAT, DOUBLE, DECIMAL, CHAR, VARCHAR, STRING, BINARY/VARBINARY, DATE, TIME (as
//! `int` millis of day, like Java), TIMESTAMP (`timestamp`, writer time zone UTC),
//! TIMESTAMP_LTZ (`timestamp with local time zone`), and nested in each other at any depth
//! ARRAY (`array`), MAP (`map`), `MULTISET<T>` (`map<T, int>`, the element counts, as Java's
//! `OrcFileFormat.refineDataType`) and ROW (`struct`). VECTOR and VARIANT (Java has no ORC type
//! for them either) and BLOB (outside the [`DataFileEncoder`](super::DataFileEncoder), which
//! writes BLOB columns as BYTES) are [`Error::Unsupported`]. The vendored orc-rust writes the
//! DECIMAL (unscaled varints and a scale stream, as Java's `DecimalTreeWriter`) and nested
//! columns (see `vendor/orc-rust/PAIMON-KERNEL-PATCH.md`): a list or map writes the lengths of
//! its non-null values and their entries, a struct its fields for its non-null rows, as Java's
//! `ListTreeWriter` / `MapTreeWriter` / `StructTreeWriter`.
//!
//! Values as Java's ORC writer stores them, nested ones too: CHAR(n) right-padded with spaces
//! to n characters (and cut to n), VARCHAR(n) cut to n characters, TIME as millis of day.
//!
//! Each stripe is encoded by orc-rust into a one-stripe file and moved into this file (an
//! orc-rust writer is not `Send`, so none is kept between calls); the footer is written here from
//! orc-rust's, with what Java's `OrcTypeUtil.convertToOrcSchema` puts there: the attribute
//! `paimon.id` on every column type (a top-level or ROW field: its field id; an array element,
//! map key or map value: the id Java's `SpecialFields` derives from the enclosing field's id and
//! the nesting depth, as in Parquet files), and `char(n)` / `varchar(n)` kinds for CHAR and
//! VARCHAR at every level (STRING stays `string`). The footer is stored in uncompressed
//! ("original") ORC chunks, which every reader accepts whatever the file codec.
//!
//! Options (Java `OrcFileFormat` / `OrcWriterFactory`, ORC defaults):
//!
//! | option | default | effect |
//! |---|---|---|
//! | `file.compression` (or the explicit compression) | `zstd` | codec: `none`, `zlib`, `snappy`, `lz4`, `zstd` (`lzo`: unsupported); `orc.compress` wins |
//! | `orc.compress.size` | 262144 | compression chunk size |
//! | `file.block-size`, else `orc.stripe.size` | 64 MiB | a stripe is closed once the raw size of its rows reaches it |
//! | `write.batch-size` (fallback `orc.write.batch-size`) | 1024 | rows encoded at a time |
//!
//! TIMESTAMP_LTZ values are stored as the instant itself. Java writes them that way only in a
//! UTC JVM or with `orc.timestamp-ltz.legacy.type = false`: by default (`true`) Java shifts
//! them by the JVM zone on write and back on read, so a Java reader in a non-UTC JVM with the
//! default option reads these files shifted by its zone offset (pyarrow and pypaimon read them
//! right). TIMESTAMP (wall-clock) values read the same in every zone.
//!
//! A TIMESTAMP / TIMESTAMP_LTZ value in the second before 1970-01-01T00:00:00 with a fraction
//! over 1 ms (e.g. 23:59:59.999) has no encoding with a positive nanosecond field (ORC readers
//! take a negative second with such a fraction one second early, ORC-763): it is written as the
//! C++ writer (pyarrow) writes it, second 0 and a negative nanosecond field, which Java 1.4.2,
//! pyarrow and our reader read back as the value (the vendored orc-rust patch).
//!
//! Not reproduced: the zstd level (orc-rust always uses zstd's default level 3, Java
//! `file.compression.zstd-level`, default 1), column statistics and row indexes (orc-rust
//! writes none, so readers cannot skip row groups), dictionary encoding of strings.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::cast::AsArray;
use arrow_array::types::Time32MillisecondType;
use arrow_array::{
    Array, ArrayRef, Int32Array, ListArray, MapArray, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType as ArrowType, FieldRef, Schema, SchemaRef, TimeUnit};
use bytes::Bytes;
use orc_rust::compression::{CompressionType, Decompressor};

use super::{array_element_field_id, encode_error, map_key_field_id, map_value_field_id};
use crate::error::{Error, Result};
use crate::spec::options::parse_memory_size;
use crate::spec::{CoreOptions, DataField, DataType, TypeKind};
use crate::types::paimon_to_arrow_field;

/// Java `OrcTypeUtil.PAIMON_ORC_FIELD_ID_KEY`.
pub const ORC_FIELD_ID_ATTRIBUTE: &str = "paimon.id";
/// ORC `orc.stripe.size` default.
const DEFAULT_STRIPE_SIZE_BYTES: i64 = 64 << 20;
/// ORC `orc.compress.size` default.
const DEFAULT_COMPRESSION_CHUNK_BYTES: i64 = 256 << 10;
/// Java `CoreOptions.WRITE_BATCH_SIZE` default.
const DEFAULT_WRITE_BATCH_SIZE: i64 = 1024;
/// Largest chunk of an ORC compression stream (3-byte header, length in 23 bits).
const MAX_CHUNK_BYTES: usize = (1 << 23) - 1;

/// `VARCHAR(2147483647)` is `STRING`.
const VARCHAR_MAX_LENGTH: u32 = i32::MAX as u32;

/// ORC `Type.Kind` values (orc_proto.proto).
const KIND_VARCHAR: u64 = 16;
const KIND_CHAR: u64 = 17;

/// A `Write` into a buffer the encoder can still read (orc-rust's writer owns its sink and
/// does not give it back).
#[derive(Debug, Clone, Default)]
struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl SharedBuffer {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Streaming ORC encoder, see the [module docs](self).
///
/// orc-rust's writer is not `Send`, so none is kept between calls: the rows of the open stripe
/// are kept as Arrow batches, and each stripe is encoded by its own orc-rust writer into a
/// one-stripe file whose stripe is then moved into this file (stripes hold no absolute
/// offsets); the footer is written here, from the one-stripe files' footers.
pub(crate) struct OrcEncoder {
    write_schema: SchemaRef,
    fields: Vec<DataField>,
    /// What Java puts on each ORC type below the root, in column order.
    types: Vec<OrcTypeNote>,
    settings: WriterSettings,
    stripe_size_bytes: usize,
    /// Batches of the open stripe, and their raw size.
    open: Vec<RecordBatch>,
    buffered_bytes: usize,
    /// `ORC` and the finished stripes.
    body: Vec<u8>,
    /// Bytes of the body already handed out by [`OrcEncoder::take_laid_out`].
    taken: u64,
    /// `StripeInformation` of each finished stripe, with its offset in `body`.
    stripes: Vec<Vec<u8>>,
    rows: u64,
    /// Tail of the first one-stripe file (types, codec, writer id).
    template: Option<Tail>,
}

impl std::fmt::Debug for OrcEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrcEncoder")
            .field("write_schema", &self.write_schema)
            .field("stripe_size_bytes", &self.stripe_size_bytes)
            .field("buffered_bytes", &self.buffered_bytes)
            .field("stripes", &self.stripes.len())
            .finish_non_exhaustive()
    }
}

/// orc-rust writer settings.
#[derive(Debug, Clone, Copy)]
struct WriterSettings {
    compression: Option<CompressionType>,
    chunk_bytes: usize,
    batch_size: usize,
}

/// The tail of an orc-rust file: its postscript and its decompressed footer.
#[derive(Debug, Clone)]
struct Tail {
    postscript: Vec<u8>,
    footer: Vec<u8>,
    compressed: bool,
}

fn usize_option(options: &CoreOptions, keys: &[&str], default: i64) -> Result<usize> {
    let found = keys.iter().find_map(|k| options.get(k).map(|v| (*k, v)));
    let value = match found {
        None => default,
        Some((k, v)) => parse_memory_size(v)
            .map_err(|e| Error::invalid(format!("option {k}='{v}': expected {e}")))?,
    };
    usize::try_from(value)
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| Error::invalid(format!("{keys:?} = {value}: expected a positive number")))
}

/// The codec of a `file.compression` / `orc.compress` value (Java
/// `CompressionKind.valueOf(name.toUpperCase())`).
fn codec(name: &str) -> Result<Option<CompressionType>> {
    Ok(match name.trim().to_ascii_lowercase().as_str() {
        "none" | "uncompressed" => None,
        "zlib" => Some(CompressionType::Zlib),
        "snappy" => Some(CompressionType::Snappy),
        "lz4" => Some(CompressionType::Lz4),
        "zstd" => Some(CompressionType::Zstd),
        other => {
            return Err(Error::unsupported(format!(
                "compression '{other}' for ORC data files"
            )));
        }
    })
}

impl OrcEncoder {
    pub(crate) fn try_new(
        fields: &[DataField],
        compression: &str,
        options: &CoreOptions,
    ) -> Result<Self> {
        let mut write_fields = Vec::with_capacity(fields.len());
        let mut types = Vec::new();
        for field in fields {
            check_supported(&field.data_type, &field.name)?;
            let arrow = paimon_to_arrow_field(field)?;
            write_fields.push(arrow.clone().with_data_type(time_as_int(arrow.data_type())));
            orc_types(&field.data_type, field.id, field.id, 0, &mut types);
        }
        let write_schema = Arc::new(Schema::new(write_fields));
        let codec_name = options.get("orc.compress").unwrap_or(compression);
        let stripe_size_bytes = usize_option(
            options,
            &["file.block-size", "orc.stripe.size"],
            DEFAULT_STRIPE_SIZE_BYTES,
        )?;
        let chunk_bytes = usize_option(
            options,
            &["orc.compress.size"],
            DEFAULT_COMPRESSION_CHUNK_BYTES,
        )?
        .min(MAX_CHUNK_BYTES);
        let batch_size = usize_option(
            options,
            &["write.batch-size", "orc.write.batch-size"],
            DEFAULT_WRITE_BATCH_SIZE,
        )?;
        let settings = WriterSettings {
            compression: codec(codec_name)?,
            chunk_bytes,
            batch_size,
        };
        Ok(OrcEncoder {
            write_schema,
            fields: fields.to_vec(),
            types,
            settings,
            stripe_size_bytes,
            open: Vec::new(),
            buffered_bytes: 0,
            body: b"ORC".to_vec(),
            taken: 0,
            stripes: Vec::new(),
            rows: 0,
            template: None,
        })
    }

    pub(crate) fn write(&mut self, columns: &[ArrayRef], rows: usize) -> Result<()> {
        let columns = columns
            .iter()
            .zip(&self.fields)
            .zip(self.write_schema.fields())
            .map(|((c, field), target)| fit_column(&field.data_type, c, target.data_type()))
            .collect::<Result<Vec<_>>>()?;
        let batch = RecordBatch::try_new(Arc::clone(&self.write_schema), columns)
            .map_err(|e| Error::arrow("writing an ORC data file", e))?;
        let row_bytes = (raw_bytes(&batch) / rows).max(1);
        let mut offset = 0;
        while offset < rows {
            let room = self.stripe_size_bytes.saturating_sub(self.buffered_bytes);
            let take = (room / row_bytes).max(1).min(rows - offset);
            self.open.push(batch.slice(offset, take));
            self.buffered_bytes += take * row_bytes;
            offset += take;
            if self.buffered_bytes >= self.stripe_size_bytes {
                self.flush_stripe()?;
            }
        }
        Ok(())
    }

    /// Encode the open stripe and move it into the file.
    fn flush_stripe(&mut self) -> Result<()> {
        if self.open.is_empty() {
            return Ok(());
        }
        let batches = std::mem::take(&mut self.open);
        self.buffered_bytes = 0;
        let file = encode_one_stripe_file(&self.write_schema, self.settings, &batches)?;
        let tail = read_tail(&file)?;
        let mut found = 0;
        for f in fields_of(&tail.footer)? {
            let (3, FieldValue::Bytes(info)) = (f.number, &f.value) else {
                continue;
            };
            found += 1;
            let mut offset = None;
            let mut length = 0u64;
            let mut rows = 0u64;
            for i in fields_of(info)? {
                match (i.number, i.value) {
                    (1, FieldValue::Varint(v)) => offset = Some(v),
                    (2..=4, FieldValue::Varint(v)) => length += v,
                    (5, FieldValue::Varint(v)) => rows = v,
                    _ => {}
                }
            }
            let start = offset
                .and_then(|o| usize::try_from(o).ok())
                .ok_or_else(|| tail_error("stripe without offset"))?;
            let end = usize::try_from(length)
                .ok()
                .and_then(|l| start.checked_add(l))
                .filter(|end| *end <= file.len())
                .ok_or_else(|| tail_error("stripe outside the file"))?;
            let mut moved = Vec::with_capacity(info.len() + 4);
            put_tag(&mut moved, 1, 0);
            put_varint(&mut moved, self.taken + self.body.len() as u64);
            for i in fields_of(info)? {
                if i.number != 1 {
                    moved.extend_from_slice(i.raw);
                }
            }
            self.body.extend_from_slice(&file[start..end]);
            self.stripes.push(moved);
            self.rows += rows;
        }
        if found != 1 {
            return Err(tail_error(&format!("{found} stripes where 1 was written")));
        }
        if self.template.is_none() {
            self.template = Some(tail);
        }
        Ok(())
    }

    /// Java `OrcBulkWriter.length`: file length plus a fifth of the buffered size (here the
    /// raw size of the buffered rows).
    pub(crate) fn estimated_size_bytes(&self) -> u64 {
        self.taken + (self.body.len() + self.buffered_bytes.div_ceil(5)) as u64
    }

    /// Bytes laid out (`ORC` and finished stripes) and not yet taken.
    pub(crate) fn laid_out_bytes(&self) -> usize {
        self.body.len()
    }

    /// Take the bytes laid out since the last take: the file continues after them.
    pub(crate) fn take_laid_out(&mut self) -> Vec<u8> {
        let out = std::mem::take(&mut self.body);
        self.taken += out.len() as u64;
        out
    }

    pub(crate) fn finish(mut self) -> Result<Vec<u8>> {
        self.flush_stripe()?;
        let template = match self.template.take() {
            Some(t) => t,
            // No rows: the tail of an empty orc-rust file.
            None => read_tail(&encode_one_stripe_file(
                &self.write_schema,
                self.settings,
                &[],
            )?)?,
        };
        let footer = paimon_footer(
            &template.footer,
            &self.types,
            &self.stripes,
            self.taken + self.body.len() as u64,
            self.rows,
        )?;
        let framed = if template.compressed {
            original_chunks(&footer)
        } else {
            footer
        };
        let mut postscript = Vec::with_capacity(template.postscript.len() + 4);
        for f in fields_of(&template.postscript)? {
            match f.number {
                1 => {
                    put_tag(&mut postscript, 1, 0);
                    put_varint(&mut postscript, framed.len() as u64);
                }
                // No stripe statistics: an empty metadata section.
                5 => {
                    put_tag(&mut postscript, 5, 0);
                    put_varint(&mut postscript, 0);
                }
                _ => postscript.extend_from_slice(f.raw),
            }
        }
        let postscript_len =
            u8::try_from(postscript.len()).map_err(|_| tail_error("postscript over 255 bytes"))?;
        let mut out = self.body;
        out.reserve(framed.len() + postscript.len() + 1);
        out.extend_from_slice(&framed);
        out.extend_from_slice(&postscript);
        out.push(postscript_len);
        Ok(out)
    }
}

/// An orc-rust file of `batches` in one stripe (none when there are no rows).
fn encode_one_stripe_file(
    schema: &SchemaRef,
    settings: WriterSettings,
    batches: &[RecordBatch],
) -> Result<Vec<u8>> {
    let buffer = SharedBuffer::default();
    let mut builder = orc_rust::ArrowWriterBuilder::new(buffer.clone(), Arc::clone(schema))
        .with_batch_size(settings.batch_size)
        // One stripe: the encoder decides where stripes end.
        .with_stripe_byte_size(usize::MAX)
        .with_compression_block_size(settings.chunk_bytes);
    if let Some(codec) = settings.compression {
        builder = builder.with_compression(codec);
    }
    let mut writer = builder.try_build().map_err(|e| encode_error("ORC", e))?;
    for batch in batches {
        writer.write(batch).map_err(write_error)?;
    }
    writer.close().map_err(|e| encode_error("ORC", e))?;
    Ok(buffer.take())
}

/// An orc-rust write failure; a timestamp it cannot store (seconds beyond the ORC base) is
/// [`Error::Unsupported`].
fn write_error(e: orc_rust::error::OrcError) -> Error {
    if matches!(e, orc_rust::error::OrcError::EncodeTimestamp { .. }) {
        return Error::unsupported(format!(
            "writing to an ORC data file: {e} (a timestamp ORC cannot hold)"
        ));
    }
    encode_error("ORC", e)
}

fn tail_error(reason: &str) -> Error {
    Error::invalid(format!("internal: orc-rust file tail: {reason}"))
}

/// Whether Java writes `t` to ORC: the primitives orc-rust writes, and ARRAY, MAP, MULTISET
/// (as `map<element, int>`) and ROW of them (Java `OrcTypeUtil.convertToOrcType`).
fn check_supported(t: &DataType, column: &str) -> Result<()> {
    match &t.kind {
        TypeKind::Boolean
        | TypeKind::TinyInt
        | TypeKind::SmallInt
        | TypeKind::Int
        | TypeKind::BigInt
        | TypeKind::Float
        | TypeKind::Double
        | TypeKind::Char { .. }
        | TypeKind::VarChar { .. }
        | TypeKind::Binary { .. }
        | TypeKind::VarBinary { .. }
        | TypeKind::Decimal { .. }
        | TypeKind::Date
        | TypeKind::Time { .. }
        | TypeKind::Timestamp { .. }
        | TypeKind::LocalZonedTimestamp { .. } => Ok(()),
        TypeKind::Array(e) | TypeKind::Multiset(e) => check_supported(e, column),
        TypeKind::Map(k, v) => {
            check_supported(k, column)?;
            check_supported(v, column)
        }
        TypeKind::Row(fields) => fields
            .iter()
            .try_for_each(|f| check_supported(&f.data_type, column)),
        _ => Err(Error::unsupported(format!(
            "writing {t} (in column {column}) to an ORC data file (Java's ORC writer has no \
             ORC type for it either)"
        ))),
    }
}

/// `t` with every `Time32(ms)` (TIME, nested too) as `Int32`: Java writes TIME as ORC `int`
/// millis of day.
fn time_as_int(t: &ArrowType) -> ArrowType {
    let field = |f: &FieldRef| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(time_as_int(f.data_type())),
        )
    };
    match t {
        ArrowType::Time32(TimeUnit::Millisecond) => ArrowType::Int32,
        ArrowType::List(f) => ArrowType::List(field(f)),
        ArrowType::Map(f, sorted) => ArrowType::Map(field(f), *sorted),
        ArrowType::Struct(fs) => ArrowType::Struct(fs.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// Whether [`fit_column`] changes values of type `t`.
fn needs_fitting(t: &DataType) -> bool {
    match &t.kind {
        TypeKind::Time { .. } | TypeKind::Char { .. } => true,
        TypeKind::VarChar { length } => *length != VARCHAR_MAX_LENGTH,
        TypeKind::Array(e) | TypeKind::Multiset(e) => needs_fitting(e),
        TypeKind::Map(k, v) => needs_fitting(k) || needs_fitting(v),
        TypeKind::Row(fields) => fields.iter().any(|f| needs_fitting(&f.data_type)),
        _ => false,
    }
}

/// `column` (of Paimon type `t`) as Java's ORC writer stores it, with Arrow type `target`
/// ([`time_as_int`] of its type), at every nesting level: TIME as `int` millis of day (Java
/// `OrcTypeUtil`); CHAR(n) right-padded with spaces to `n` characters and cut to `n` (ORC
/// `CharTreeWriter`; Java's ORC reader trims the padding again); VARCHAR(n) cut to `n`
/// characters (`VarcharTreeWriter`).
fn fit_column(t: &DataType, column: &ArrayRef, target: &ArrowType) -> Result<ArrayRef> {
    if !needs_fitting(t) {
        return Ok(Arc::clone(column));
    }
    let mismatch = || {
        Error::invalid(format!(
            "writing a {t} column to ORC: got Arrow {}",
            column.data_type()
        ))
    };
    let fitted: ArrayRef = match (&t.kind, target) {
        (TypeKind::Time { .. }, _) => {
            let times = column
                .as_primitive_opt::<Time32MillisecondType>()
                .ok_or_else(mismatch)?;
            Arc::new(Int32Array::new(
                times.values().clone(),
                times.nulls().cloned(),
            ))
        }
        (TypeKind::Char { length }, _) | (TypeKind::VarChar { length }, _) => {
            let pad = matches!(t.kind, TypeKind::Char { .. });
            let strings = column.as_string_opt::<i32>().ok_or_else(mismatch)?;
            match fit_chars(strings, *length as usize, pad) {
                Some(fitted) => Arc::new(fitted),
                None => Arc::clone(column),
            }
        }
        (TypeKind::Array(e), ArrowType::List(item)) => {
            let list = column.as_list_opt::<i32>().ok_or_else(mismatch)?;
            let values = fit_column(e, list.values(), item.data_type())?;
            Arc::new(
                ListArray::try_new(
                    Arc::clone(item),
                    list.offsets().clone(),
                    values,
                    list.nulls().cloned(),
                )
                .map_err(|e| Error::arrow("writing an ORC data file", e))?,
            )
        }
        (TypeKind::Map(k, v), ArrowType::Map(entries, sorted)) => {
            let map = column.as_map_opt().ok_or_else(mismatch)?;
            let ArrowType::Struct(kv) = entries.data_type() else {
                return Err(mismatch());
            };
            let (Some(key_type), Some(value_type)) = (kv.first(), kv.get(1)) else {
                return Err(mismatch());
            };
            let keys = fit_column(k, map.keys(), key_type.data_type())?;
            let values = fit_column(v, map.values(), value_type.data_type())?;
            let fitted_entries = StructArray::try_new(
                kv.clone(),
                vec![keys, values],
                map.entries().nulls().cloned(),
            )
            .map_err(|e| Error::arrow("writing an ORC data file", e))?;
            Arc::new(
                MapArray::try_new(
                    Arc::clone(entries),
                    map.offsets().clone(),
                    fitted_entries,
                    map.nulls().cloned(),
                    *sorted,
                )
                .map_err(|e| Error::arrow("writing an ORC data file", e))?,
            )
        }
        (TypeKind::Multiset(e), ArrowType::Map(..)) => {
            // The counts (INT NOT NULL) need no fitting.
            let as_map = DataType {
                nullable: t.nullable,
                kind: TypeKind::Map(e.clone(), Box::new(DataType::not_null(TypeKind::Int))),
            };
            return fit_column(&as_map, column, target);
        }
        (TypeKind::Row(fields), ArrowType::Struct(arrow_fields)) => {
            let rows = column.as_struct_opt().ok_or_else(mismatch)?;
            if rows.num_columns() != fields.len() || arrow_fields.len() != fields.len() {
                return Err(mismatch());
            }
            let children = fields
                .iter()
                .zip(rows.columns())
                .zip(arrow_fields.iter())
                .map(|((f, c), af)| fit_column(&f.data_type, c, af.data_type()))
                .collect::<Result<Vec<_>>>()?;
            Arc::new(
                StructArray::try_new(arrow_fields.clone(), children, rows.nulls().cloned())
                    .map_err(|e| Error::arrow("writing an ORC data file", e))?,
            )
        }
        _ => return Err(mismatch()),
    };
    Ok(fitted)
}

/// `value` cut to `n` characters, and padded to `n` with spaces when `pad`; `None` when it
/// is already so.
fn fit_char(value: &str, n: usize, pad: bool) -> Option<String> {
    // At most `n` bytes means at most `n` characters.
    if !pad && value.len() <= n {
        return None;
    }
    let chars = value.chars().count();
    if chars > n {
        let end = value.char_indices().nth(n).map_or(value.len(), |(i, _)| i);
        Some(value[..end].to_string())
    } else if pad && chars < n {
        let mut padded = String::with_capacity(value.len() + n - chars);
        padded.push_str(value);
        padded.extend(std::iter::repeat_n(' ', n - chars));
        Some(padded)
    } else {
        None
    }
}

/// The column with every value fitted by [`fit_char`]; `None` when no value changes.
fn fit_chars(array: &StringArray, n: usize, pad: bool) -> Option<StringArray> {
    if !array
        .iter()
        .flatten()
        .any(|v| fit_char(v, n, pad).is_some())
    {
        return None;
    }
    Some(
        array
            .iter()
            .map(|v| v.map(|v| fit_char(v, n, pad).unwrap_or_else(|| v.to_string())))
            .collect(),
    )
}

/// Raw (in-memory) size of a batch's rows: value bytes of strings and binaries, fixed widths
/// of the rest, the entries of lists and maps and the fields of structs.
fn raw_bytes(batch: &RecordBatch) -> usize {
    batch.columns().iter().map(raw_bytes_of).sum()
}

fn raw_bytes_of(c: &ArrayRef) -> usize {
    let n = c.len();
    // The entries `offsets[0]..offsets[n]` of a list or map.
    let entries = |values: &ArrayRef, first: usize, last: usize| {
        raw_bytes_of(&values.slice(first, last.saturating_sub(first)))
    };
    match c.data_type() {
        ArrowType::Utf8 => {
            let o = c.as_string::<i32>().value_offsets();
            (o[n] - o[0]) as usize + 4 * n
        }
        ArrowType::Binary => {
            let o = c.as_binary::<i32>().value_offsets();
            (o[n] - o[0]) as usize + 4 * n
        }
        ArrowType::Boolean => n.div_ceil(8),
        ArrowType::Timestamp(..) => 12 * n,
        ArrowType::List(_) => {
            let list = c.as_list::<i32>();
            let o = list.value_offsets();
            4 * n + entries(list.values(), o[0] as usize, o[n] as usize)
        }
        ArrowType::Map(..) => {
            let map = c.as_map();
            let o = map.value_offsets();
            let (first, last) = (o[0] as usize, o[n] as usize);
            4 * n + entries(map.keys(), first, last) + entries(map.values(), first, last)
        }
        ArrowType::Struct(_) => c.as_struct().columns().iter().map(raw_bytes_of).sum(),
        t => t.primitive_width().unwrap_or(8) * n,
    }
}

// ---------------------------------------------------------------------------------------
// Footer rewrite
// ---------------------------------------------------------------------------------------

/// The postscript and the decompressed footer of an orc-rust file.
fn read_tail(file: &[u8]) -> Result<Tail> {
    let len = file.len();
    let ps_len = usize::from(*file.last().ok_or_else(|| tail_error("empty file"))?);
    let ps_start = len
        .checked_sub(1 + ps_len)
        .ok_or_else(|| tail_error("postscript longer than the file"))?;
    let postscript = &file[ps_start..len - 1];
    let mut footer_len = None;
    let mut compressed = false;
    for f in fields_of(postscript)? {
        match (f.number, f.value) {
            (1, FieldValue::Varint(v)) => footer_len = Some(v),
            (2, FieldValue::Varint(kind)) => compressed = kind != 0,
            _ => {}
        }
    }
    let footer_len = footer_len
        .and_then(|l| usize::try_from(l).ok())
        .ok_or_else(|| tail_error("no footer length"))?;
    let footer_start = ps_start
        .checked_sub(footer_len)
        .ok_or_else(|| tail_error("footer longer than the file"))?;
    let footer = if compressed {
        let file = Bytes::copy_from_slice(file);
        let metadata = orc_rust::reader::metadata::read_metadata(&mut file.clone())
            .map_err(|e| encode_error("ORC", e))?;
        let mut out = Vec::new();
        Decompressor::new(
            file.slice(footer_start..ps_start),
            metadata.compression(),
            Vec::new(),
        )
        .read_to_end(&mut out)
        .map_err(|e| encode_error("ORC", e))?;
        out
    } else {
        file[footer_start..ps_start].to_vec()
    };
    Ok(Tail {
        postscript: postscript.to_vec(),
        footer,
        compressed,
    })
}

/// What Java's `OrcTypeUtil.convertToOrcSchema` puts on one ORC type besides its kind.
#[derive(Debug, Clone, Copy)]
struct OrcTypeNote {
    /// The `paimon.id` attribute.
    field_id: i32,
    /// `char(n)` / `varchar(n)`: the ORC kind and `n`.
    char_kind: Option<(u64, u32)>,
}

/// Appends the notes of the ORC types of `t` (in column order: the type, then each child's
/// subtree) to `out`, as Java's `OrcTypeUtil.convertToOrcType(t, field_id, depth)` with the
/// attribute then set to `id`: an array element, a map key and a map value take the ids
/// `SpecialFields` derives from the field id and depth; ROW fields their own ids from depth 0.
/// `MULTISET<T>` is `MAP<T, INT NOT NULL>` (Java `OrcFileFormat.refineDataType`).
fn orc_types(t: &DataType, id: i32, field_id: i32, depth: i32, out: &mut Vec<OrcTypeNote>) {
    let char_kind = match t.kind {
        TypeKind::Char { length } => Some((KIND_CHAR, length)),
        TypeKind::VarChar { length } if length != VARCHAR_MAX_LENGTH => {
            Some((KIND_VARCHAR, length))
        }
        _ => None,
    };
    out.push(OrcTypeNote {
        field_id: id,
        char_kind,
    });
    let child = depth + 1;
    match &t.kind {
        TypeKind::Array(e) => {
            orc_types(
                e,
                array_element_field_id(field_id, child),
                field_id,
                child,
                out,
            );
        }
        TypeKind::Map(k, v) => {
            orc_types(k, map_key_field_id(field_id, child), field_id, child, out);
            orc_types(v, map_value_field_id(field_id, child), field_id, child, out);
        }
        TypeKind::Multiset(e) => {
            orc_types(e, map_key_field_id(field_id, child), field_id, child, out);
            out.push(OrcTypeNote {
                field_id: map_value_field_id(field_id, child),
                char_kind: None,
            });
        }
        TypeKind::Row(fields) => {
            for f in fields {
                orc_types(&f.data_type, f.id, f.id, 0, out);
            }
        }
        _ => {}
    }
}

/// The footer of the assembled file: the template's, with `stripes`, the content length and
/// row count of the assembled file, and on the column types (`types`: every type below the
/// root, in column order) Java's `paimon.id` attributes and CHAR/VARCHAR kinds.
fn paimon_footer(
    template: &[u8],
    types: &[OrcTypeNote],
    stripes: &[Vec<u8>],
    content_length: u64,
    rows: u64,
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(template.len() + stripes.len() * 24 + types.len() * 24);
    put_tag(&mut out, 1, 0);
    put_varint(&mut out, 3);
    put_tag(&mut out, 2, 0);
    put_varint(&mut out, content_length);
    for stripe in stripes {
        put_len_delimited(&mut out, 3, stripe);
    }
    let mut type_index = 0usize;
    for f in fields_of(template)? {
        match (f.number, f.value) {
            (1..=3 | 6, _) => {}
            (4, FieldValue::Bytes(payload)) => {
                // Type 0 is the root struct (no attribute in Java either); type i is types[i - 1].
                let note = type_index.checked_sub(1).and_then(|i| types.get(i));
                type_index += 1;
                match note {
                    Some(note) => put_len_delimited(&mut out, 4, &paimon_type(payload, note)?),
                    None if type_index == 1 => out.extend_from_slice(f.raw),
                    None => return Err(tail_error("more column types than the schema has")),
                }
            }
            _ => out.extend_from_slice(f.raw),
        }
    }
    if type_index != types.len() + 1 {
        return Err(tail_error(&format!(
            "{type_index} column types where {} were expected",
            types.len() + 1
        )));
    }
    put_tag(&mut out, 6, 0);
    put_varint(&mut out, rows);
    Ok(out)
}

/// An ORC `Type` message with Java's `paimon.id` attribute and CHAR/VARCHAR kind.
fn paimon_type(payload: &[u8], note: &OrcTypeNote) -> Result<Vec<u8>> {
    let (kind, max_length) = match note.char_kind {
        Some((kind, length)) => (Some(kind), Some(length)),
        None => (None, None),
    };
    let mut t = Vec::with_capacity(payload.len() + 24);
    for tf in fields_of(payload)? {
        if kind.is_some() && tf.number == 1 {
            continue;
        }
        t.extend_from_slice(tf.raw);
    }
    if let Some(kind) = kind {
        put_tag(&mut t, 1, 0);
        put_varint(&mut t, kind);
    }
    if let Some(max_length) = max_length {
        put_tag(&mut t, 4, 0);
        put_varint(&mut t, u64::from(max_length));
    }
    let mut pair = Vec::new();
    put_len_delimited(&mut pair, 1, ORC_FIELD_ID_ATTRIBUTE.as_bytes());
    put_len_delimited(&mut pair, 2, note.field_id.to_string().as_bytes());
    put_len_delimited(&mut t, 7, &pair);
    Ok(t)
}

/// `data` as ORC compression chunks stored uncompressed ("original").
fn original_chunks(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 3 * (data.len() / MAX_CHUNK_BYTES + 1));
    for chunk in data.chunks(MAX_CHUNK_BYTES) {
        let header = ((chunk.len() as u32) << 1) | 1;
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(chunk);
    }
    out
}

enum FieldValue<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

struct ProtoField<'a> {
    number: u64,
    value: FieldValue<'a>,
    /// The whole field: tag and value.
    raw: &'a [u8],
}

/// The top-level fields of a protobuf message.
fn fields_of(message: &[u8]) -> Result<Vec<ProtoField<'_>>> {
    let bad = || Error::invalid("internal: malformed protobuf in an orc-rust file tail");
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < message.len() {
        let start = pos;
        let tag = read_varint(message, &mut pos).ok_or_else(bad)?;
        let value = match tag & 7 {
            0 => FieldValue::Varint(read_varint(message, &mut pos).ok_or_else(bad)?),
            1 | 5 => {
                pos += if tag & 7 == 1 { 8 } else { 4 };
                FieldValue::Fixed
            }
            2 => {
                let len = read_varint(message, &mut pos)
                    .and_then(|l| usize::try_from(l).ok())
                    .ok_or_else(bad)?;
                let end = pos.checked_add(len).ok_or_else(bad)?;
                let payload = message.get(pos..end).ok_or_else(bad)?;
                pos = end;
                FieldValue::Bytes(payload)
            }
            _ => return Err(bad()),
        };
        let raw = message.get(start..pos).ok_or_else(bad)?;
        out.push(ProtoField {
            number: tag >> 3,
            value,
            raw,
        });
    }
    Ok(out)
}

fn read_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_tag(out: &mut Vec<u8>, number: u64, wire_type: u64) {
    put_varint(out, (number << 3) | wire_type);
}

fn put_len_delimited(out: &mut Vec<u8>, number: u64, payload: &[u8]) {
    put_tag(out, number, 2);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// The column types of an ORC file written here, in column order (the root first): ORC kind,
/// maximum length and `paimon.id` attribute.
#[cfg(test)]
pub(super) fn test_footer_types(file: &[u8]) -> Vec<(u64, Option<u64>, Option<String>)> {
    let tail = read_tail(file).unwrap();
    let mut out = Vec::new();
    for f in fields_of(&tail.footer).unwrap() {
        let (4, FieldValue::Bytes(t)) = (f.number, f.value) else {
            continue;
        };
        let (mut kind, mut max_length, mut id) = (0, None, None);
        for tf in fields_of(t).unwrap() {
            match (tf.number, tf.value) {
                (1, FieldValue::Varint(v)) => kind = v,
                (4, FieldValue::Varint(v)) => max_length = Some(v),
                (7, FieldValue::Bytes(pair)) => {
                    let kv: Vec<_> = fields_of(pair).unwrap();
                    if let [
                        ProtoField {
                            value: FieldValue::Bytes(k),
                            ..
                        },
                        ProtoField {
                            value: FieldValue::Bytes(v),
                            ..
                        },
                    ] = &kv[..]
                        && *k == ORC_FIELD_ID_ATTRIBUTE.as_bytes()
                    {
                        id = Some(String::from_utf8(v.to_vec()).unwrap());
                    }
                }
                _ => {}
            }
        }
        out.push((kind, max_length, id));
    }
    out
}
