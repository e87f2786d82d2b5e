//! Avro data files (object container files) to Arrow, over fetched byte ranges.
//!
//! Avro is row oriented with no footer, so the file is read front to back in windows:
//! 1. `Read path [0, min(size, 1 MiB))`: the header (magic `Obj\x01`, metadata map with
//!    `avro.schema` and `avro.codec`, 16-byte sync marker) and the first blocks; a header
//!    larger than the window is read with a larger window;
//! 2. whenever the next block is not entirely in the current window: one `Read` of the next
//!    window, `[block start, block start + max(1 MiB, block length))` capped at the file size.
//!
//! Each block (`long count`, `long size`, `size` compressed bytes, sync marker) is decompressed
//! with the file codec (`null`, `deflate`, `snappy`, `zstandard` by apache-avro; `bzip2`, `xz`
//! by `spec::avro_codec`) and its rows are decoded straight into Arrow builders by a decoder compiled from the writer schema. The sync marker
//! after every block is checked.
//!
//! Writer schema → Arrow (the file's own types, see [`AvroFileReader::file_schema`]):
//! `["null", T]` / `[T, "null"]` unions → nullable `T` (other unions are unsupported; a
//! non-union type is `NOT NULL`); `boolean`, `int`, `long`, `float`, `double`, `bytes`,
//! `string` → `Boolean`, `Int32`, `Int64`, `Float32`, `Float64`, `Binary`, `Utf8`; `decimal`
//! (bytes or fixed) → `Decimal128(p, s)`; `date` → `Date32`; `time-millis` →
//! `Time32(ms)`; `time-micros` → `Time64(us)`; `timestamp-*` and `local-timestamp-*` →
//! `Timestamp(unit)` without time zone (Paimon writes TIMESTAMP as `timestamp-*` and
//! TIMESTAMP_LTZ as `local-timestamp-*`, both holding epoch values; the read schema decides the
//! time zone); `fixed(n)` → `FixedSizeBinary(n)`; `enum`, `uuid` → `Utf8`; `array` → `List`;
//! `map` → `Map(entries: {key: Utf8, value})` in stored order; `record` → `Struct`.
//!
//! Source: Java `org.apache.paimon.format.avro.AvroBulkFormat`, `AvroSchemaConverter`,
//! `FieldReaderFactory`.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use apache_avro::schema::Schema as AvroSchema;
use apache_avro::{Codec, DeflateSettings, ZstandardSettings};
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Decimal128Builder, FixedSizeBinaryBuilder, Float32Builder,
    Float64Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow_array::{
    Array, ArrayRef, ListArray, MapArray, RecordBatch, RecordBatchOptions, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType as ArrowType, Field, Fields, Schema, SchemaRef, TimeUnit};
use bytes::Bytes;

use crate::error::{Error, Result};
use crate::format::reading::ResolvedProjection;
use crate::io::Io;
use crate::spec::avro_codec::ExtraCodec;

const FORMAT: &str = "avro";
const MAGIC: &[u8; 4] = b"Obj\x01";
const SYNC_LEN: usize = 16;
/// Bytes read per window of an Avro data file.
pub const AVRO_WINDOW_BYTES: u64 = 1024 * 1024;
/// Nesting depth accepted in a writer schema.
const MAX_DEPTH: usize = 64;

/// A cursor over decompressed bytes. Every read is checked.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

type DecodeResult<T> = std::result::Result<T, String>;

impl<'a> Cursor<'a> {
    fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn long(&mut self) -> DecodeResult<i64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .data
                .get(self.pos)
                .ok_or("unexpected end of data in a varint")?;
            self.pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    fn int(&mut self) -> DecodeResult<i32> {
        let v = self.long()?;
        i32::try_from(v).map_err(|_| format!("int value {v} out of range"))
    }

    fn take(&mut self, len: usize) -> DecodeResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|e| *e <= self.data.len())
            .ok_or_else(|| format!("{len} bytes needed, {} left", self.remaining()))?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn len_prefixed(&mut self) -> DecodeResult<&'a [u8]> {
        let len = self.long()?;
        let len = usize::try_from(len).map_err(|_| format!("negative length {len}"))?;
        self.take(len)
    }

    /// The item count of the next array / map block (0 at the end), checked against the bytes
    /// left (every item of a supported type takes at least one byte... or is a record, whose
    /// count is bounded the same way to stop runaway loops).
    fn block_count(&mut self) -> DecodeResult<usize> {
        let mut count = self.long()?;
        if count < 0 {
            count = count.checked_neg().ok_or("invalid block count")?;
            let _size_bytes = self.long()?;
        }
        let count = usize::try_from(count).map_err(|_| "invalid block count".to_string())?;
        if count > self.remaining().saturating_add(1).saturating_mul(8) {
            return Err(format!(
                "block of {count} items in {} bytes",
                self.remaining()
            ));
        }
        Ok(count)
    }
}

/// A decoder for one Avro type, appending to Arrow builders.
enum Node {
    Nullable {
        null_index: i64,
        inner: Box<Node>,
    },
    Bool(BooleanBuilder),
    Int {
        builder: Int32Builder,
        data_type: ArrowType,
    },
    Long {
        builder: Int64Builder,
        data_type: ArrowType,
    },
    Float(Float32Builder),
    Double(Float64Builder),
    Bytes(BinaryBuilder),
    Str(StringBuilder),
    Fixed {
        size: usize,
        builder: FixedSizeBinaryBuilder,
    },
    Decimal {
        precision: u8,
        scale: i8,
        fixed: Option<usize>,
        builder: Decimal128Builder,
    },
    Enum {
        symbols: Vec<String>,
        builder: StringBuilder,
    },
    List {
        item: Box<Node>,
        offsets: Vec<i32>,
        valid: Vec<bool>,
    },
    Map {
        keys: StringBuilder,
        value: Box<Node>,
        offsets: Vec<i32>,
        valid: Vec<bool>,
    },
    Record {
        names: Vec<String>,
        fields: Vec<Node>,
        valid: Vec<bool>,
    },
}

fn compile(
    schema: &AvroSchema,
    names: &mut BTreeMap<String, AvroSchema>,
    depth: usize,
) -> DecodeResult<Node> {
    if depth > MAX_DEPTH {
        return Err("writer schema nested too deeply (or recursive)".into());
    }
    let int = |data_type| Node::Int {
        builder: Int32Builder::new(),
        data_type,
    };
    let long = |data_type| Node::Long {
        builder: Int64Builder::new(),
        data_type,
    };
    Ok(match schema {
        AvroSchema::Union(u) => {
            let variants = u.variants();
            match variants {
                [one] => compile(one, names, depth + 1)?,
                [AvroSchema::Null, other] => Node::Nullable {
                    null_index: 0,
                    inner: Box::new(compile(other, names, depth + 1)?),
                },
                [other, AvroSchema::Null] => Node::Nullable {
                    null_index: 1,
                    inner: Box::new(compile(other, names, depth + 1)?),
                },
                _ => {
                    return Err(format!(
                        "union of {} types other than [null, T]",
                        variants.len()
                    ));
                }
            }
        }
        AvroSchema::Null => return Err("a column of Avro type null".into()),
        AvroSchema::Boolean => Node::Bool(BooleanBuilder::new()),
        AvroSchema::Int => int(ArrowType::Int32),
        AvroSchema::Long => long(ArrowType::Int64),
        AvroSchema::Float => Node::Float(Float32Builder::new()),
        AvroSchema::Double => Node::Double(Float64Builder::new()),
        AvroSchema::Bytes => Node::Bytes(BinaryBuilder::new()),
        AvroSchema::String | AvroSchema::Uuid => Node::Str(StringBuilder::new()),
        AvroSchema::Date => int(ArrowType::Date32),
        AvroSchema::TimeMillis => int(ArrowType::Time32(TimeUnit::Millisecond)),
        AvroSchema::TimeMicros => long(ArrowType::Time64(TimeUnit::Microsecond)),
        AvroSchema::TimestampMillis | AvroSchema::LocalTimestampMillis => {
            long(ArrowType::Timestamp(TimeUnit::Millisecond, None))
        }
        AvroSchema::TimestampMicros | AvroSchema::LocalTimestampMicros => {
            long(ArrowType::Timestamp(TimeUnit::Microsecond, None))
        }
        AvroSchema::TimestampNanos | AvroSchema::LocalTimestampNanos => {
            long(ArrowType::Timestamp(TimeUnit::Nanosecond, None))
        }
        AvroSchema::Duration => fixed(12)?,
        AvroSchema::Fixed(f) => {
            names.insert(f.name.fullname(None), schema.clone());
            fixed(f.size)?
        }
        AvroSchema::Enum(e) => {
            names.insert(e.name.fullname(None), schema.clone());
            Node::Enum {
                symbols: e.symbols.clone(),
                builder: StringBuilder::new(),
            }
        }
        AvroSchema::Decimal(d) => {
            let precision = decimal_meta(d.precision)?;
            let scale = decimal_meta(d.scale)?;
            if !(1..=38).contains(&precision) || scale > precision {
                return Err(format!(
                    "decimal({precision}, {scale}) does not fit Decimal128"
                ));
            }
            let fixed = match d.inner.as_ref() {
                AvroSchema::Bytes => None,
                AvroSchema::Fixed(f) => Some(f.size),
                other => return Err(format!("decimal over {other:?}")),
            };
            Node::Decimal {
                precision,
                scale: i8::try_from(scale).map_err(|_| "decimal scale too large")?,
                fixed,
                builder: Decimal128Builder::new(),
            }
        }
        AvroSchema::BigDecimal => return Err("big-decimal is not supported".into()),
        AvroSchema::Array(a) => Node::List {
            item: Box::new(compile(&a.items, names, depth + 1)?),
            offsets: vec![0],
            valid: Vec::new(),
        },
        AvroSchema::Map(m) => Node::Map {
            keys: StringBuilder::new(),
            value: Box::new(compile(&m.types, names, depth + 1)?),
            offsets: vec![0],
            valid: Vec::new(),
        },
        AvroSchema::Record(r) => {
            names.insert(r.name.fullname(None), schema.clone());
            let mut fields = Vec::with_capacity(r.fields.len());
            for f in &r.fields {
                fields.push(
                    compile(&f.schema, names, depth + 1)
                        .map_err(|e| format!("field {}: {e}", f.name))?,
                );
            }
            Node::Record {
                names: r.fields.iter().map(|f| f.name.clone()).collect(),
                fields,
                valid: Vec::new(),
            }
        }
        AvroSchema::Ref { name } => {
            let full = name.fullname(None);
            let target = names
                .get(&full)
                .cloned()
                .ok_or_else(|| format!("unknown named type {full}"))?;
            compile(&target, names, depth + 1)?
        }
    })
}

fn decimal_meta(v: usize) -> DecodeResult<u8> {
    u8::try_from(v).map_err(|_| format!("decimal precision/scale {v} too large"))
}

fn fixed(size: usize) -> DecodeResult<Node> {
    let width = i32::try_from(size).map_err(|_| format!("fixed size {size} too large"))?;
    Ok(Node::Fixed {
        size,
        builder: FixedSizeBinaryBuilder::new(width),
    })
}

fn decimal_from_be(bytes: &[u8]) -> DecodeResult<i128> {
    if bytes.len() > 16 {
        return Err(format!("decimal of {} bytes exceeds 128 bits", bytes.len()));
    }
    let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(buf))
}

fn nulls(valid: &mut Vec<bool>) -> Option<NullBuffer> {
    let v = std::mem::take(valid);
    if v.iter().all(|b| *b) {
        None
    } else {
        Some(NullBuffer::from(v))
    }
}

fn offset(len: usize) -> DecodeResult<i32> {
    i32::try_from(len).map_err(|_| "more than 2^31 nested values in one batch".to_string())
}

impl Node {
    fn is_nullable(&self) -> bool {
        matches!(self, Node::Nullable { .. })
    }

    fn data_type(&self) -> ArrowType {
        match self {
            Node::Nullable { inner, .. } => inner.data_type(),
            Node::Bool(_) => ArrowType::Boolean,
            Node::Int { data_type, .. } | Node::Long { data_type, .. } => data_type.clone(),
            Node::Float(_) => ArrowType::Float32,
            Node::Double(_) => ArrowType::Float64,
            Node::Bytes(_) => ArrowType::Binary,
            Node::Str(_) | Node::Enum { .. } => ArrowType::Utf8,
            Node::Fixed { size, .. } => {
                ArrowType::FixedSizeBinary(i32::try_from(*size).unwrap_or(i32::MAX))
            }
            Node::Decimal {
                precision, scale, ..
            } => ArrowType::Decimal128(*precision, *scale),
            Node::List { item, .. } => ArrowType::List(Arc::new(item.field("item"))),
            Node::Map { value, .. } => ArrowType::Map(Arc::new(Self::entries_field(value)), false),
            Node::Record { names, fields, .. } => {
                ArrowType::Struct(Self::struct_fields(names, fields))
            }
        }
    }

    fn field(&self, name: &str) -> Field {
        Field::new(name, self.data_type(), self.is_nullable())
    }

    fn struct_fields(names: &[String], fields: &[Node]) -> Fields {
        names
            .iter()
            .zip(fields)
            .map(|(n, f)| f.field(n))
            .collect::<Vec<_>>()
            .into()
    }

    fn entries_field(value: &Node) -> Field {
        Field::new(
            "entries",
            ArrowType::Struct(
                vec![
                    Field::new("key", ArrowType::Utf8, false),
                    value.field("value"),
                ]
                .into(),
            ),
            false,
        )
    }

    fn append_null(&mut self) {
        match self {
            Node::Nullable { inner, .. } => inner.append_null(),
            Node::Bool(b) => b.append_null(),
            Node::Int { builder, .. } => builder.append_null(),
            Node::Long { builder, .. } => builder.append_null(),
            Node::Float(b) => b.append_null(),
            Node::Double(b) => b.append_null(),
            Node::Bytes(b) => b.append_null(),
            Node::Str(b) | Node::Enum { builder: b, .. } => b.append_null(),
            Node::Fixed { builder, .. } => builder.append_null(),
            Node::Decimal { builder, .. } => builder.append_null(),
            Node::List { offsets, valid, .. } | Node::Map { offsets, valid, .. } => {
                let last = offsets.last().copied().unwrap_or(0);
                offsets.push(last);
                valid.push(false);
            }
            Node::Record { fields, valid, .. } => {
                for f in fields {
                    f.append_null();
                }
                valid.push(false);
            }
        }
    }

    fn decode(&mut self, c: &mut Cursor<'_>) -> DecodeResult<()> {
        match self {
            Node::Nullable { null_index, inner } => {
                let branch = c.long()?;
                if branch == *null_index {
                    inner.append_null();
                } else if branch == 1 - *null_index {
                    inner.decode(c)?;
                } else {
                    return Err(format!("union branch {branch} of a [null, T] union"));
                }
            }
            Node::Bool(b) => match c.take(1)?[0] {
                0 => b.append_value(false),
                1 => b.append_value(true),
                other => return Err(format!("boolean byte {other}")),
            },
            Node::Int { builder, .. } => builder.append_value(c.int()?),
            Node::Long { builder, .. } => builder.append_value(c.long()?),
            Node::Float(b) => {
                let raw = c.take(4)?;
                b.append_value(f32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]));
            }
            Node::Double(b) => {
                let raw = c.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(raw);
                b.append_value(f64::from_le_bytes(a));
            }
            Node::Bytes(b) => b.append_value(c.len_prefixed()?),
            Node::Str(b) => {
                let s = std::str::from_utf8(c.len_prefixed()?)
                    .map_err(|e| format!("invalid UTF-8 string: {e}"))?;
                b.append_value(s);
            }
            Node::Fixed { size, builder } => {
                let raw = c.take(*size)?;
                builder.append_value(raw).map_err(|e| e.to_string())?;
            }
            Node::Decimal { fixed, builder, .. } => {
                let raw = match fixed {
                    Some(n) => c.take(*n)?,
                    None => c.len_prefixed()?,
                };
                builder.append_value(decimal_from_be(raw)?);
            }
            Node::Enum { symbols, builder } => {
                let i = c.int()?;
                let s = usize::try_from(i)
                    .ok()
                    .and_then(|i| symbols.get(i))
                    .ok_or_else(|| format!("enum index {i} of {} symbols", symbols.len()))?;
                builder.append_value(s);
            }
            Node::List {
                item,
                offsets,
                valid,
            } => {
                let mut total = offsets.last().copied().unwrap_or(0);
                loop {
                    let count = c.block_count()?;
                    if count == 0 {
                        break;
                    }
                    for _ in 0..count {
                        item.decode(c)?;
                    }
                    total = total
                        .checked_add(offset(count)?)
                        .ok_or("more than 2^31 list items in one batch")?;
                }
                offsets.push(total);
                valid.push(true);
            }
            Node::Map {
                keys,
                value,
                offsets,
                valid,
            } => {
                let mut total = offsets.last().copied().unwrap_or(0);
                loop {
                    let count = c.block_count()?;
                    if count == 0 {
                        break;
                    }
                    for _ in 0..count {
                        let k = std::str::from_utf8(c.len_prefixed()?)
                            .map_err(|e| format!("invalid UTF-8 map key: {e}"))?;
                        keys.append_value(k);
                        value.decode(c)?;
                    }
                    total = total
                        .checked_add(offset(count)?)
                        .ok_or("more than 2^31 map entries in one batch")?;
                }
                offsets.push(total);
                valid.push(true);
            }
            Node::Record {
                names,
                fields,
                valid,
            } => {
                for (name, f) in names.iter().zip(fields.iter_mut()) {
                    f.decode(c).map_err(|e| format!("field {name}: {e}"))?;
                }
                valid.push(true);
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> DecodeResult<ArrayRef> {
        let retype = |array: ArrayRef, data_type: &ArrowType| -> DecodeResult<ArrayRef> {
            if array.data_type() == data_type {
                return Ok(array);
            }
            let data = array
                .into_data()
                .into_builder()
                .data_type(data_type.clone())
                .build()
                .map_err(|e| e.to_string())?;
            Ok(arrow_array::make_array(data))
        };
        Ok(match self {
            Node::Nullable { inner, .. } => inner.finish()?,
            Node::Bool(b) => Arc::new(b.finish()),
            Node::Int { builder, data_type } => retype(Arc::new(builder.finish()), data_type)?,
            Node::Long { builder, data_type } => retype(Arc::new(builder.finish()), data_type)?,
            Node::Float(b) => Arc::new(b.finish()),
            Node::Double(b) => Arc::new(b.finish()),
            Node::Bytes(b) => Arc::new(b.finish()),
            Node::Str(b) | Node::Enum { builder: b, .. } => Arc::new(b.finish()),
            Node::Fixed { builder, .. } => Arc::new(builder.finish()),
            Node::Decimal {
                precision,
                scale,
                builder,
                ..
            } => Arc::new(
                builder
                    .finish()
                    .with_precision_and_scale(*precision, *scale)
                    .map_err(|e| e.to_string())?,
            ),
            Node::List {
                item,
                offsets,
                valid,
            } => {
                let field = Arc::new(item.field("item"));
                let values = item.finish()?;
                let offs = OffsetBuffer::new(std::mem::replace(offsets, vec![0]).into());
                Arc::new(
                    ListArray::try_new(field, offs, values, nulls(valid))
                        .map_err(|e| e.to_string())?,
                )
            }
            Node::Map {
                keys,
                value,
                offsets,
                valid,
            } => {
                let entries_field = Self::entries_field(value);
                let ArrowType::Struct(kv_fields) = entries_field.data_type().clone() else {
                    return Err("map entries are not a struct".into());
                };
                let entries = StructArray::try_new(
                    kv_fields,
                    vec![Arc::new(keys.finish()) as ArrayRef, value.finish()?],
                    None,
                )
                .map_err(|e| e.to_string())?;
                let offs = OffsetBuffer::new(std::mem::replace(offsets, vec![0]).into());
                Arc::new(
                    MapArray::try_new(Arc::new(entries_field), offs, entries, nulls(valid), false)
                        .map_err(|e| e.to_string())?,
                )
            }
            Node::Record {
                names,
                fields,
                valid,
            } => {
                let struct_fields = Self::struct_fields(names, fields);
                let len = valid.len();
                let children = fields
                    .iter_mut()
                    .map(Node::finish)
                    .collect::<DecodeResult<Vec<_>>>()?;
                Arc::new(
                    StructArray::try_new_with_length(struct_fields, children, nulls(valid), len)
                        .map_err(|e| e.to_string())?,
                )
            }
        })
    }
}

/// How the blocks of a file are compressed.
enum BlockCodec {
    /// A codec apache-avro decodes (`null`, `deflate`, `snappy`, `zstandard`).
    Avro(Codec),
    /// `bzip2` or `xz`, decoded by [`ExtraCodec`].
    Extra(ExtraCodec),
}

/// The parsed header of an Avro object container file.
struct Header {
    len: usize,
    schema: AvroSchema,
    codec: BlockCodec,
    sync: [u8; SYNC_LEN],
}

/// Parse the header from the start of a file; `Ok(None)` when `bytes` is too short to hold it.
fn decode_header(path: &str, bytes: &[u8]) -> Result<Option<Header>> {
    let corrupt = |reason: String| Error::corrupt(path, FORMAT, reason);
    if bytes.len() < MAGIC.len() {
        return Ok(None);
    }
    if &bytes[..4] != MAGIC {
        return Err(corrupt("missing Obj\\x01 magic".into()));
    }
    let mut c = Cursor {
        data: bytes,
        pos: 4,
    };
    let mut meta: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    loop {
        let Ok(mut count) = c.long() else {
            return Ok(None);
        };
        if count == 0 {
            break;
        }
        if count < 0 {
            count = count
                .checked_neg()
                .ok_or_else(|| corrupt("invalid header map block".into()))?;
            if c.long().is_err() {
                return Ok(None);
            }
        }
        for _ in 0..count {
            let (Ok(k), Ok(v)) = (c.len_prefixed(), c.len_prefixed()) else {
                return Ok(None);
            };
            meta.insert(String::from_utf8_lossy(k).into_owned(), v.to_vec());
        }
    }
    let Ok(sync) = c.take(SYNC_LEN) else {
        return Ok(None);
    };
    let mut sync_arr = [0u8; SYNC_LEN];
    sync_arr.copy_from_slice(sync);
    let schema_json = meta
        .get("avro.schema")
        .ok_or_else(|| corrupt("header has no avro.schema".into()))?;
    let schema_json = std::str::from_utf8(schema_json)
        .map_err(|e| corrupt(format!("avro.schema is not UTF-8: {e}")))?;
    let schema = AvroSchema::parse_str(schema_json)
        .map_err(|e| corrupt(format!("invalid avro.schema: {e}")))?;
    let codec = match meta.get("avro.codec").map(Vec::as_slice) {
        None | Some(b"null") => BlockCodec::Avro(Codec::Null),
        Some(b"deflate") => BlockCodec::Avro(Codec::Deflate(DeflateSettings::default())),
        Some(b"snappy") => BlockCodec::Avro(Codec::Snappy),
        Some(b"zstandard") => BlockCodec::Avro(Codec::Zstandard(ZstandardSettings::default())),
        Some(other) => match ExtraCodec::from_name(other) {
            Some(extra) => BlockCodec::Extra(extra),
            None => {
                return Err(Error::unsupported(format!(
                    "Avro codec {:?} in {path}",
                    String::from_utf8_lossy(other)
                )));
            }
        },
    };
    Ok(Some(Header {
        len: c.pos,
        schema,
        codec,
        sync: sync_arr,
    }))
}

/// Streaming reader of one Avro data file (see the module docs for its rounds).
pub struct AvroFileReader {
    path: String,
    file_size: u64,
    sync: [u8; SYNC_LEN],
    codec: BlockCodec,
    root: Node,
    /// The null branch of a writer schema `["null", record]` (rows are its other branch).
    row_null_index: Option<i64>,
    file_schema: SchemaRef,
    projection: ResolvedProjection,
    batch_size: usize,
    /// Current window of the file: bytes from `window_start`.
    window: Bytes,
    window_start: u64,
    /// File offset of the next block.
    next_block: u64,
    /// Decompressed current block, its remaining row count, and decode position.
    block: Vec<u8>,
    block_rows_left: usize,
    block_pos: usize,
    block_index: usize,
}

impl std::fmt::Debug for AvroFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AvroFileReader")
            .field("path", &self.path)
            .field("file_size", &self.file_size)
            .field("next_block", &self.next_block)
            .finish()
    }
}

impl AvroFileReader {
    /// Read the header of `path` (`file_size` bytes) and prepare to decode the columns named
    /// in `projection` (`None`: all), `batch_size` rows per batch.
    ///
    /// # Errors
    /// [`Error::Io`] from the reads; [`Error::Corrupt`] for an invalid header;
    /// [`Error::Unsupported`] for a writer schema that is not a record of supported types.
    pub async fn open<T>(
        io: &Io<T>,
        path: &str,
        file_size: u64,
        projection: Option<&[String]>,
        batch_size: usize,
    ) -> Result<Self> {
        let mut window_len = file_size.min(AVRO_WINDOW_BYTES);
        let (window, header) = loop {
            let window = io.read_range(path, 0..window_len).await?;
            if let Some(h) = decode_header(path, &window)? {
                break (window, h);
            }
            if window_len >= file_size {
                return Err(Error::corrupt(path, FORMAT, "file ends inside the header"));
            }
            window_len = window_len.saturating_mul(4).min(file_size);
        };
        let mut names = BTreeMap::new();
        let root = compile(&header.schema, &mut names, 0)
            .map_err(|e| Error::unsupported(format!("Avro writer schema of {path}: {e}")))?;
        // Java writes the rows of a file holding only some columns (a data-evolution field
        // group, `write-cols`) as `["null", record]`: each row is a union branch, never null.
        let (root, row_null_index) = match root {
            Node::Nullable { null_index, inner } if matches!(*inner, Node::Record { .. }) => {
                (*inner, Some(null_index))
            }
            other => (other, None),
        };
        let Node::Record {
            names: field_names,
            fields,
            ..
        } = &root
        else {
            return Err(Error::unsupported(format!(
                "Avro data file {path} whose writer schema is not a record"
            )));
        };
        let file_schema = Arc::new(Schema::new(Node::struct_fields(field_names, fields)));
        let projection = ResolvedProjection::new(&file_schema, projection);
        Ok(AvroFileReader {
            path: path.to_string(),
            file_size,
            sync: header.sync,
            codec: header.codec,
            root,
            row_null_index,
            file_schema,
            projection,
            batch_size: batch_size.max(1),
            window,
            window_start: 0,
            next_block: header.len as u64,
            block: Vec::new(),
            block_rows_left: 0,
            block_pos: 0,
            block_index: 0,
        })
    }

    fn corrupt(&self, reason: String) -> Error {
        Error::corrupt(&self.path, FORMAT, reason)
    }

    /// Bytes `range` of the file from the current window, reading a new window if needed.
    async fn bytes_at<T>(&mut self, io: &Io<T>, range: Range<u64>) -> Result<Bytes> {
        if range.end > self.file_size {
            return Err(self.corrupt(format!(
                "block {} at offset {} extends past the end of the file ({} bytes)",
                self.block_index, range.start, self.file_size
            )));
        }
        let window_end = self.window_start + self.window.len() as u64;
        if range.start < self.window_start || range.end > window_end {
            let want = (range.end - range.start).max(AVRO_WINDOW_BYTES);
            let end = range.start.saturating_add(want).min(self.file_size);
            self.window = io.read_range(&self.path, range.start..end).await?;
            self.window_start = range.start;
        }
        let from = usize::try_from(range.start - self.window_start)
            .map_err(|_| self.corrupt("offset overflow".into()))?;
        let to = usize::try_from(range.end - self.window_start)
            .map_err(|_| self.corrupt("offset overflow".into()))?;
        Ok(self.window.slice(from..to))
    }

    /// Load the next block; `Ok(false)` at the end of the file.
    async fn load_block<T>(&mut self, io: &Io<T>) -> Result<bool> {
        if self.next_block >= self.file_size {
            return Ok(false);
        }
        // Two varints of at most 10 bytes each.
        let head_end = self.next_block.saturating_add(20).min(self.file_size);
        let head = self.bytes_at(io, self.next_block..head_end).await?;
        let mut c = Cursor {
            data: &head,
            pos: 0,
        };
        let (count, size) = match (c.long(), c.long()) {
            (Ok(count), Ok(size)) => (count, size),
            _ => {
                return Err(self.corrupt(format!(
                    "block {}: truncated block header",
                    self.block_index
                )));
            }
        };
        let (Ok(count), Ok(size)) = (usize::try_from(count), u64::try_from(size)) else {
            return Err(self.corrupt(format!(
                "block {}: negative row count {count} or size {size}",
                self.block_index
            )));
        };
        let data_start = self.next_block + c.pos as u64;
        let end = data_start
            .checked_add(size)
            .and_then(|e| e.checked_add(SYNC_LEN as u64))
            .ok_or_else(|| self.corrupt("block size overflows".into()))?;
        let data = self.bytes_at(io, data_start..end).await?;
        let (compressed, sync) = data.split_at(data.len() - SYNC_LEN);
        if sync != self.sync {
            return Err(self.corrupt(format!(
                "block {} at offset {}: sync marker mismatch",
                self.block_index, self.next_block
            )));
        }
        let block = match &self.codec {
            BlockCodec::Avro(codec) => {
                let mut block = compressed.to_vec();
                if matches!(codec, Codec::Snappy) && block.len() < 4 {
                    return Err(self.corrupt(format!(
                        "block {}: snappy block shorter than its CRC",
                        self.block_index
                    )));
                }
                codec.decompress(&mut block).map_err(|e| {
                    self.corrupt(format!(
                        "block {}: cannot decompress: {e}",
                        self.block_index
                    ))
                })?;
                block
            }
            BlockCodec::Extra(codec) => codec.decompress(compressed).map_err(|e| {
                self.corrupt(format!(
                    "block {}: cannot decompress: {e}",
                    self.block_index
                ))
            })?,
        };
        if count > block.len().saturating_mul(8).saturating_add(8) {
            return Err(self.corrupt(format!(
                "block {}: {count} rows in {} bytes",
                self.block_index,
                block.len()
            )));
        }
        self.block = block;
        self.block_rows_left = count;
        self.block_pos = 0;
        self.next_block = end;
        Ok(true)
    }

    /// The next batch of projected columns, or `None` at the end of the file.
    ///
    /// # Errors
    /// [`Error::Io`] from the reads; [`Error::Corrupt`] naming the block (and field) for data
    /// that does not decode.
    pub async fn next_batch<T>(&mut self, io: &Io<T>) -> Result<Option<RecordBatch>> {
        let mut rows = 0usize;
        while rows < self.batch_size {
            if self.block_rows_left == 0 {
                if !self.load_block(io).await? {
                    break;
                }
                self.block_index += 1;
                continue;
            }
            let mut c = Cursor {
                data: &self.block,
                pos: self.block_pos,
            };
            let take = self.block_rows_left.min(self.batch_size - rows);
            for _ in 0..take {
                let row = match self.row_null_index {
                    None => self.root.decode(&mut c),
                    Some(null_index) => match c.long() {
                        Ok(b) if b == 1 - null_index => self.root.decode(&mut c),
                        Ok(b) if b == null_index => Err("a NULL row".to_string()),
                        Ok(b) => Err(format!("union branch {b} of a [null, record] row")),
                        Err(e) => Err(e),
                    },
                };
                if let Err(e) = row {
                    let block = self.block_index.saturating_sub(1);
                    return Err(Error::corrupt(
                        &self.path,
                        FORMAT,
                        format!("block {block}: {e}"),
                    ));
                }
            }
            self.block_pos = c.pos;
            self.block_rows_left -= take;
            rows += take;
            if self.block_rows_left == 0 && self.block_pos != self.block.len() {
                let block = self.block_index.saturating_sub(1);
                return Err(self.corrupt(format!(
                    "block {block}: {} bytes left after its last row",
                    self.block.len() - self.block_pos
                )));
            }
        }
        if rows == 0 {
            return Ok(None);
        }
        let Node::Record { fields, valid, .. } = &mut self.root else {
            return Err(self.corrupt("writer schema is not a record".into()));
        };
        valid.clear();
        let columns = fields
            .iter_mut()
            .map(Node::finish)
            .collect::<DecodeResult<Vec<_>>>()
            .map_err(|e| Error::corrupt(&self.path, FORMAT, e))?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let batch =
            RecordBatch::try_new_with_options(Arc::clone(&self.file_schema), columns, &options)
                .map_err(|e| self.corrupt(format!("decoded batch: {e}")))?;
        // The decoder produced every column; keep the projected roots, then order them.
        let batch = batch
            .project(&self.projection.roots)
            .map_err(|e| self.corrupt(format!("projection: {e}")))?;
        self.projection.apply(&batch, &self.path, FORMAT).map(Some)
    }

    /// The file's Arrow schema (all columns of the writer schema).
    pub fn file_schema(&self) -> &SchemaRef {
        &self.file_schema
    }

    /// The schema of the returned batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.projection.schema
    }
}
