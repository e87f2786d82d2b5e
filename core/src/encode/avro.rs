//! Avro data files (object container files) as Java Paimon writes them.
//!
//! Schema: Java's `AvroSchemaConverter` (see the [parent module](super) for the type table):
//! top-level record `org.apache.paimon.avro.generated.record`, a nested ROW named after its
//! parent plus `_<field>`, nullable types as `["null", T]` with `"default": null` on record
//! fields, maps with CHAR/VARCHAR keys as Avro `map`s and other maps as an `array` of
//! `{key, value}` records (named `<name>`, with `<name>_key` / `<name>_value` for nested
//! records) marked `"logicalType": "map"`, `MULTISET<e>` as a map to a nullable `int`. The schema
//! JSON has Java's shape (`Schema.toString()`: `namespace` written only where it changes).
//! Record names can be replaced with `avro.row-name-mapping` (`old:new,...`); its Iceberg mode
//! (the `iceberg` key, which adds `field-id` properties) is not reproduced.
//!
//! Values: Java's `FieldWriterFactory`: TINYINT/SMALLINT as `int`, TIME as `int` millis,
//! TIMESTAMP(0..3) as `long` epoch millis, TIMESTAMP(4..6) as micros, DECIMAL as the minimal
//! big-endian two's complement of the unscaled value, arrays and maps as one block (count,
//! items, 0), an empty array or map as a single 0.
//!
//! Container (Java `DataFileWriter`): header with `avro.schema` and `avro.codec`, a 16-byte
//! sync marker (an input, see [`super::DataFileEncoder::with_sync_marker`]; by default derived
//! from the schema), blocks closed once their uncompressed size reaches 64000 bytes (Java's
//! default sync interval).
//!
//! Codec (Java `AvroFileFormat.createCodecFactory`): `avro.codec` if set (`null`, `deflate`,
//! `snappy`, `bzip2`, `xz`, `zstandard`), else `zstd` → `zstandard` at
//! `file.compression.zstd-level` (default 1), else the compression name as an Avro codec name
//! (`none`/`uncompressed` are taken as `null`, which Java rejects).

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;

use apache_avro::{Codec, DeflateSettings, ZstandardSettings};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, FixedSizeListArray, ListArray, MapArray,
    StringArray,
};
use arrow_buffer::NullBuffer;
use serde_json::{Map as JsonMap, Value as Json, json};
use sha2::{Digest, Sha256};

use super::encode_error;
use crate::error::{Error, Result};
use crate::spec::{CoreOptions, DataField, DataType, TypeKind};

/// Top-level record name (Java `AvroSchemaConverter.convertToSchema`).
pub const AVRO_TOP_RECORD_NAME: &str = "org.apache.paimon.avro.generated.record";
/// Java `DataFileConstants.DEFAULT_SYNC_INTERVAL`: a block is closed once its uncompressed
/// size reaches this.
const SYNC_INTERVAL_BYTES: usize = 64_000;
const MAGIC: &[u8] = b"Obj\x01";

/// Block codec of an Avro data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AvroCodec {
    Null,
    Deflate,
    Snappy,
    Zstandard(u8),
    Bzip2,
    Xz(u32),
}

impl AvroCodec {
    /// `avro.codec` value (Java `CodecFactory.fromString`, default levels: xz 6, zstandard 3).
    fn from_avro_name(name: &str, zstd_level: Option<u8>) -> Result<Self> {
        Ok(match name.trim().to_ascii_lowercase().as_str() {
            "null" | "none" | "uncompressed" => AvroCodec::Null,
            "deflate" => AvroCodec::Deflate,
            "snappy" => AvroCodec::Snappy,
            "bzip2" => AvroCodec::Bzip2,
            "xz" => AvroCodec::Xz(6),
            "zstandard" => AvroCodec::Zstandard(zstd_level.unwrap_or(3)),
            other => {
                return Err(Error::unsupported(format!(
                    "compression '{other}' for Avro data files"
                )));
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            AvroCodec::Null => "null",
            AvroCodec::Deflate => "deflate",
            AvroCodec::Snappy => "snappy",
            AvroCodec::Zstandard(_) => "zstandard",
            AvroCodec::Bzip2 => "bzip2",
            AvroCodec::Xz(_) => "xz",
        }
    }

    fn compress(self, block: &mut Vec<u8>) -> Result<()> {
        let codec = match self {
            AvroCodec::Null => return Ok(()),
            AvroCodec::Deflate => Codec::Deflate(DeflateSettings::default()),
            AvroCodec::Snappy => Codec::Snappy,
            AvroCodec::Zstandard(level) => Codec::Zstandard(ZstandardSettings::new(level)),
            AvroCodec::Bzip2 => {
                let mut encoder =
                    bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
                encoder
                    .write_all(block)
                    .map_err(|e| encode_error("avro", e))?;
                *block = encoder.finish().map_err(|e| encode_error("avro", e))?;
                return Ok(());
            }
            AvroCodec::Xz(level) => {
                let mut encoder = liblzma::write::XzEncoder::new(Vec::new(), level);
                encoder
                    .write_all(block)
                    .map_err(|e| encode_error("avro", e))?;
                *block = encoder.finish().map_err(|e| encode_error("avro", e))?;
                return Ok(());
            }
        };
        codec.compress(block).map_err(|e| encode_error("avro", e))
    }
}

/// The codec Java picks for `compression` and `options`.
fn codec_of(compression: &str, options: &CoreOptions) -> Result<AvroCodec> {
    if let Some(name) = options.get("avro.codec") {
        return AvroCodec::from_avro_name(name, None);
    }
    if compression.trim().eq_ignore_ascii_case("zstd") {
        let text = options.get("file.compression.zstd-level").unwrap_or("1");
        let level = text
            .trim()
            .parse::<i64>()
            .map_err(|_| Error::invalid(format!("file.compression.zstd-level '{text}'")))?;
        let level = u8::try_from(level)
            .ok()
            .filter(|l| (1..=22).contains(l))
            .ok_or_else(|| {
                Error::unsupported(format!("Avro zstandard level {level} (1..=22 supported)"))
            })?;
        return Ok(AvroCodec::Zstandard(level));
    }
    AvroCodec::from_avro_name(compression, None)
}

/// Streaming Avro encoder, see the [module docs](self).
#[derive(Debug)]
pub(crate) struct AvroEncoder {
    fields: Arc<[DataField]>,
    schema_json: String,
    codec: AvroCodec,
    sync_marker: [u8; 16],
    /// Header and finished blocks (the header is written with the first block or at the end,
    /// so that the sync marker can still be set after construction).
    out: Vec<u8>,
    /// Bytes of `out` already handed out by [`AvroEncoder::take_laid_out`].
    taken: u64,
    /// True once the header is written.
    header_written: bool,
    block: Vec<u8>,
    block_rows: u64,
    /// Uncompressed and compressed bytes of the finished blocks (to estimate the open one).
    raw_block_bytes: u64,
    compressed_block_bytes: u64,
}

impl AvroEncoder {
    pub(crate) fn try_new(
        fields: &[DataField],
        compression: &str,
        options: &CoreOptions,
    ) -> Result<Self> {
        let mapping = row_name_mapping(options);
        let schema = avro_schema(fields, &mapping)?;
        let schema_json = schema.to_string();
        // Validates names (Avro names are [A-Za-z_][A-Za-z0-9_]*; Java rejects others too).
        apache_avro::Schema::parse_str(&schema_json).map_err(|e| {
            Error::unsupported(format!("writing these fields as an Avro data file: {e}"))
        })?;
        let digest = Sha256::digest(schema_json.as_bytes());
        let mut sync_marker = [0u8; 16];
        sync_marker.copy_from_slice(&digest[..16]);
        Ok(AvroEncoder {
            fields: fields.into(),
            schema_json,
            codec: codec_of(compression, options)?,
            sync_marker,
            out: Vec::new(),
            taken: 0,
            header_written: false,
            block: Vec::with_capacity(SYNC_INTERVAL_BYTES + 1024),
            block_rows: 0,
            raw_block_bytes: 0,
            compressed_block_bytes: 0,
        })
    }

    /// Takes effect only before the header is written (no block flushed yet).
    pub(crate) fn set_sync_marker(&mut self, marker: [u8; 16]) {
        if !self.header_written {
            self.sync_marker = marker;
        }
    }

    pub(crate) fn write(&mut self, columns: &[ArrayRef], rows: usize) -> Result<()> {
        let fields = Arc::clone(&self.fields);
        let nodes = columns
            .iter()
            .zip(fields.iter())
            .map(|(c, f)| Node::try_new(c.as_ref(), &f.data_type, &f.name))
            .collect::<Result<Vec<_>>>()?;
        for row in 0..rows {
            for node in &nodes {
                node.encode(row, &mut self.block)?;
            }
            self.block_rows += 1;
            if self.block.len() >= SYNC_INTERVAL_BYTES {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    fn write_header(&mut self) {
        if self.header_written {
            return;
        }
        self.header_written = true;
        self.out.extend_from_slice(MAGIC);
        // Metadata map: one block of two entries, then the end of the map.
        put_long(&mut self.out, 2);
        put_bytes(&mut self.out, b"avro.schema");
        put_bytes(&mut self.out, self.schema_json.as_bytes());
        put_bytes(&mut self.out, b"avro.codec");
        put_bytes(&mut self.out, self.codec.name().as_bytes());
        put_long(&mut self.out, 0);
        self.out.extend_from_slice(&self.sync_marker);
    }

    fn flush_block(&mut self) -> Result<()> {
        self.write_header();
        if self.block_rows == 0 {
            return Ok(());
        }
        let mut data = std::mem::take(&mut self.block);
        self.raw_block_bytes += data.len() as u64;
        self.codec.compress(&mut data)?;
        self.compressed_block_bytes += data.len() as u64;
        put_long(&mut self.out, self.block_rows as i64);
        put_long(&mut self.out, data.len() as i64);
        self.out.extend_from_slice(&data);
        self.out.extend_from_slice(&self.sync_marker);
        self.block_rows = 0;
        data.clear();
        self.block = data;
        Ok(())
    }

    /// Finished bytes, plus the open block scaled by the compression ratio seen so far.
    pub(crate) fn estimated_size_bytes(&self) -> u64 {
        let header = if !self.header_written {
            self.schema_json.len() as u64 + 64
        } else {
            0
        };
        let open = self.block.len() as u64;
        let open = match self.raw_block_bytes {
            0 => open,
            raw => open * self.compressed_block_bytes / raw,
        };
        self.taken + self.out.len() as u64 + header + open
    }

    /// Bytes laid out (header and finished blocks) and not yet taken.
    pub(crate) fn laid_out_bytes(&self) -> usize {
        self.out.len()
    }

    /// Take the bytes laid out since the last take: the file continues after them.
    pub(crate) fn take_laid_out(&mut self) -> Vec<u8> {
        let out = std::mem::take(&mut self.out);
        self.taken += out.len() as u64;
        out
    }

    /// The bytes of the file not yet taken.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>> {
        self.flush_block()?;
        Ok(self.out)
    }
}

/// `avro.row-name-mapping` (`old:new,old2:new2`).
fn row_name_mapping(options: &CoreOptions) -> Vec<(String, String)> {
    options
        .get("avro.row-name-mapping")
        .map(|v| {
            v.split(',')
                .filter_map(|pair| pair.split_once(':'))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The Avro schema of `fields` as Java's `AvroSchemaConverter.convertToSchema(rowType)`
/// produces it, in the JSON shape of Java's `Schema.toString()`.
///
/// # Errors
/// [`Error::Unsupported`] for types Java's converter rejects (VARIANT, TIME(p > 3),
/// TIMESTAMP(p > 6)) and BLOB.
pub fn avro_schema_json(fields: &[DataField], options: &CoreOptions) -> Result<String> {
    Ok(avro_schema(fields, &row_name_mapping(options))?.to_string())
}

fn avro_schema(fields: &[DataField], mapping: &[(String, String)]) -> Result<Json> {
    let mut converter = SchemaConverter {
        mapping,
        defined: BTreeSet::new(),
    };
    let top = converter.mapped(AVRO_TOP_RECORD_NAME);
    converter.record(&top, fields, None)
}

struct SchemaConverter<'a> {
    mapping: &'a [(String, String)],
    defined: BTreeSet<String>,
}

impl SchemaConverter<'_> {
    fn mapped(&self, name: &str) -> String {
        self.mapping
            .iter()
            .find(|(k, _)| k == name)
            .map_or_else(|| name.to_string(), |(_, v)| v.clone())
    }

    /// A record named `full_name` inside namespace `enclosing` (`None` at the top).
    fn record(
        &mut self,
        full_name: &str,
        fields: &[DataField],
        enclosing: Option<&str>,
    ) -> Result<Json> {
        if !self.defined.insert(full_name.to_string()) {
            // Java writes a named schema once, then refers to it by name.
            return Ok(Json::String(full_name.to_string()));
        }
        let (space, short) = match full_name.rsplit_once('.') {
            Some((space, short)) => (Some(space), short),
            None => (None, full_name),
        };
        let mut out = JsonMap::new();
        out.insert("type".into(), json!("record"));
        out.insert("name".into(), json!(short));
        match (space, enclosing) {
            (Some(s), e) if Some(s) != e => {
                out.insert("namespace".into(), json!(s));
            }
            (None, Some(_)) => {
                out.insert("namespace".into(), json!(""));
            }
            _ => {}
        }
        let namespace = space.unwrap_or("");
        let mut json_fields = Vec::with_capacity(fields.len());
        for field in fields {
            let nested = format!("{full_name}_{}", field.name);
            let t = self.convert(&field.data_type, &nested, namespace, &field.name)?;
            let mut f = JsonMap::new();
            f.insert("name".into(), json!(field.name));
            f.insert("type".into(), t);
            if field.data_type.nullable {
                f.insert("default".into(), Json::Null);
            }
            json_fields.push(Json::Object(f));
        }
        out.insert("fields".into(), Json::Array(json_fields));
        Ok(Json::Object(out))
    }

    /// Java `AvroSchemaConverter.convertToSchema(dataType, rowName, rowNameMapping)`.
    fn convert(
        &mut self,
        t: &DataType,
        row_name: &str,
        namespace: &str,
        column: &str,
    ) -> Result<Json> {
        let row_name = self.mapped(row_name);
        let logical = |base: &str, logical: &str| json!({"type": base, "logicalType": logical});
        let schema = match &t.kind {
            TypeKind::Boolean => json!("boolean"),
            TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int => json!("int"),
            TypeKind::BigInt => json!("long"),
            TypeKind::Float => json!("float"),
            TypeKind::Double => json!("double"),
            TypeKind::Char { .. } | TypeKind::VarChar { .. } => json!("string"),
            TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => json!("bytes"),
            TypeKind::Timestamp { precision } => match precision {
                0..=3 => logical("long", "timestamp-millis"),
                4..=6 => logical("long", "timestamp-micros"),
                _ => return Err(unsupported(t, column)),
            },
            TypeKind::LocalZonedTimestamp { precision } => match precision {
                0..=3 => logical("long", "local-timestamp-millis"),
                4..=6 => logical("long", "local-timestamp-micros"),
                _ => return Err(unsupported(t, column)),
            },
            TypeKind::Date => logical("int", "date"),
            TypeKind::Time { precision } if *precision <= 3 => logical("int", "time-millis"),
            TypeKind::Decimal { precision, scale } => json!({
                "type": "bytes",
                "logicalType": "decimal",
                "precision": precision,
                "scale": scale,
            }),
            TypeKind::Row(fields) => self.record(&row_name, fields, Some(namespace))?,
            TypeKind::Map(key, value) => self.map(key, value, &row_name, namespace, column)?,
            TypeKind::Multiset(element) => {
                let count = DataType::nullable(TypeKind::Int);
                self.map(element, &count, &row_name, namespace, column)?
            }
            TypeKind::Array(element) | TypeKind::Vector { element, .. } => {
                json!({"type": "array", "items": self.convert(element, &row_name, namespace, column)?})
            }
            TypeKind::Time { .. } | TypeKind::Variant | TypeKind::Blob | TypeKind::Other(_) => {
                return Err(unsupported(t, column));
            }
        };
        Ok(if t.nullable {
            json!(["null", schema])
        } else {
            schema
        })
    }

    fn map(
        &mut self,
        key: &DataType,
        value: &DataType,
        row_name: &str,
        namespace: &str,
        column: &str,
    ) -> Result<Json> {
        if is_string_key(key) {
            return Ok(
                json!({"type": "map", "values": self.convert(value, row_name, namespace, column)?}),
            );
        }
        // Avro maps have string keys only: other maps are arrays of {key, value} records.
        let fields = [
            DataField::new(0, "key", key.clone()),
            DataField::new(1, "value", value.clone()),
        ];
        let record = self.key_value_record(row_name, &fields, namespace, column)?;
        Ok(json!({"type": "array", "items": record, "logicalType": "map"}))
    }

    /// The `{key, value}` record of an array map: named `row_name`, its nested records
    /// `<row_name>_key` / `<row_name>_value`.
    fn key_value_record(
        &mut self,
        row_name: &str,
        fields: &[DataField; 2],
        namespace: &str,
        column: &str,
    ) -> Result<Json> {
        if !self.defined.insert(row_name.to_string()) {
            return Ok(Json::String(row_name.to_string()));
        }
        let (space, short) = match row_name.rsplit_once('.') {
            Some((space, short)) => (Some(space), short),
            None => (None, row_name),
        };
        let mut out = JsonMap::new();
        out.insert("type".into(), json!("record"));
        out.insert("name".into(), json!(short));
        match space {
            Some(s) if s != namespace => {
                out.insert("namespace".into(), json!(s));
            }
            None if !namespace.is_empty() => {
                out.insert("namespace".into(), json!(""));
            }
            _ => {}
        }
        let inner_namespace = space.unwrap_or("");
        let mut json_fields = Vec::with_capacity(2);
        for field in fields {
            let nested = format!("{row_name}_{}", field.name);
            let t = self.convert(&field.data_type, &nested, inner_namespace, column)?;
            let mut f = JsonMap::new();
            f.insert("name".into(), json!(field.name));
            f.insert("type".into(), t);
            if field.name == "value" && field.data_type.nullable {
                f.insert("default".into(), Json::Null);
            }
            json_fields.push(Json::Object(f));
        }
        out.insert("fields".into(), Json::Array(json_fields));
        Ok(Json::Object(out))
    }
}

/// Java `AvroSchemaConverter.isArrayMap`: only CHAR/VARCHAR keys make an Avro `map`.
fn is_string_key(key: &DataType) -> bool {
    matches!(key.kind, TypeKind::Char { .. } | TypeKind::VarChar { .. })
}

fn unsupported(t: &DataType, column: &str) -> Error {
    Error::unsupported(format!(
        "writing {t} (column {column}) to an Avro data file (Java's AvroSchemaConverter rejects it)"
    ))
}

/// One column (or nested part) of a batch, ready to encode row by row.
struct Node<'a> {
    /// Write a `["null", T]` union index before the value.
    union: bool,
    nulls: Option<&'a NullBuffer>,
    value: Value<'a>,
    name: &'a str,
}

enum Value<'a> {
    Boolean(&'a BooleanArray),
    Int8(&'a [i8]),
    Int16(&'a [i16]),
    Int32(&'a [i32]),
    Int64(&'a [i64]),
    /// Epoch seconds written as milliseconds.
    SecondsAsMillis(&'a [i64]),
    Float32(&'a [f32]),
    Float64(&'a [f64]),
    Decimal(&'a [i128]),
    String(&'a StringArray),
    Bytes(&'a BinaryArray),
    List {
        list: &'a ListArray,
        item: Box<Node<'a>>,
    },
    FixedList {
        list: &'a FixedSizeListArray,
        item: Box<Node<'a>>,
    },
    /// Avro `map` (string keys).
    StringMap {
        map: &'a MapArray,
        keys: &'a StringArray,
        value: Box<Node<'a>>,
    },
    /// Array of `{key, value}` records.
    ArrayMap {
        map: &'a MapArray,
        key: Box<Node<'a>>,
        value: Box<Node<'a>>,
    },
    Record(Vec<Node<'a>>),
}

fn wrong_array(name: &str, t: &DataType, array: &dyn Array) -> Error {
    Error::invalid(format!(
        "writing column {name}: {t} expects another Arrow type than {}",
        array.data_type()
    ))
}

impl<'a> Node<'a> {
    fn try_new(array: &'a dyn Array, t: &DataType, name: &'a str) -> Result<Self> {
        let wrong = || wrong_array(name, t, array);
        let value = match &t.kind {
            TypeKind::Boolean => Value::Boolean(array.as_boolean_opt().ok_or_else(wrong)?),
            TypeKind::TinyInt => Value::Int8(
                array
                    .as_primitive_opt::<Int8Type>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::SmallInt => Value::Int16(
                array
                    .as_primitive_opt::<Int16Type>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::Int => Value::Int32(
                array
                    .as_primitive_opt::<Int32Type>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::Date => Value::Int32(
                array
                    .as_primitive_opt::<Date32Type>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::Time { .. } => Value::Int32(
                array
                    .as_primitive_opt::<Time32MillisecondType>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::BigInt => Value::Int64(
                array
                    .as_primitive_opt::<Int64Type>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision } => {
                match precision {
                    0 => Value::SecondsAsMillis(
                        array
                            .as_primitive_opt::<TimestampSecondType>()
                            .ok_or_else(wrong)?
                            .values(),
                    ),
                    1..=3 => Value::Int64(
                        array
                            .as_primitive_opt::<TimestampMillisecondType>()
                            .ok_or_else(wrong)?
                            .values(),
                    ),
                    4..=6 => Value::Int64(
                        array
                            .as_primitive_opt::<TimestampMicrosecondType>()
                            .ok_or_else(wrong)?
                            .values(),
                    ),
                    _ => return Err(unsupported(t, name)),
                }
            }
            TypeKind::Float => Value::Float32(
                array
                    .as_primitive_opt::<Float32Type>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::Double => Value::Float64(
                array
                    .as_primitive_opt::<Float64Type>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::Decimal { .. } => Value::Decimal(
                array
                    .as_primitive_opt::<Decimal128Type>()
                    .ok_or_else(wrong)?
                    .values(),
            ),
            TypeKind::Char { .. } | TypeKind::VarChar { .. } => {
                Value::String(array.as_string_opt::<i32>().ok_or_else(wrong)?)
            }
            TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => {
                Value::Bytes(array.as_binary_opt::<i32>().ok_or_else(wrong)?)
            }
            TypeKind::Array(element) => {
                let list = array.as_list_opt::<i32>().ok_or_else(wrong)?;
                Value::List {
                    list,
                    item: Box::new(Node::try_new(list.values().as_ref(), element, name)?),
                }
            }
            TypeKind::Vector { element, .. } => {
                let list = array.as_fixed_size_list_opt().ok_or_else(wrong)?;
                Value::FixedList {
                    list,
                    item: Box::new(Node::try_new(list.values().as_ref(), element, name)?),
                }
            }
            TypeKind::Map(key, value) => Self::map(array, key, value, t, name)?,
            TypeKind::Multiset(element) => {
                let count = DataType::nullable(TypeKind::Int);
                Self::map(array, element, &count, t, name)?
            }
            TypeKind::Row(fields) => {
                let s = array.as_struct_opt().ok_or_else(wrong)?;
                if s.num_columns() != fields.len() {
                    return Err(wrong());
                }
                Value::Record(
                    s.columns()
                        .iter()
                        .zip(fields)
                        .map(|(c, f)| Node::try_new(c.as_ref(), &f.data_type, name))
                        .collect::<Result<Vec<_>>>()?,
                )
            }
            TypeKind::Variant | TypeKind::Blob | TypeKind::Other(_) => {
                return Err(unsupported(t, name));
            }
        };
        Ok(Node {
            union: t.nullable,
            nulls: array.nulls(),
            value,
            name,
        })
    }

    fn map(
        array: &'a dyn Array,
        key: &DataType,
        value: &DataType,
        t: &DataType,
        name: &'a str,
    ) -> Result<Value<'a>> {
        let map = array
            .as_map_opt()
            .ok_or_else(|| wrong_array(name, t, array))?;
        // Arrow map keys are never NULL; Paimon may still declare a nullable key type.
        let value_node = Box::new(Node::try_new(map.values().as_ref(), value, name)?);
        if is_string_key(key) {
            let keys = map
                .keys()
                .as_string_opt::<i32>()
                .ok_or_else(|| wrong_array(name, t, array))?;
            Ok(Value::StringMap {
                map,
                keys,
                value: value_node,
            })
        } else {
            Ok(Value::ArrayMap {
                map,
                key: Box::new(Node::try_new(map.keys().as_ref(), key, name)?),
                value: value_node,
            })
        }
    }

    fn encode(&self, i: usize, out: &mut Vec<u8>) -> Result<()> {
        let is_null = self.nulls.is_some_and(|n| n.is_null(i));
        if self.union {
            if is_null {
                out.push(0);
                return Ok(());
            }
            out.push(2); // zig-zag 1: the second branch of ["null", T]
        } else if is_null {
            return Err(Error::invalid(format!(
                "writing column {}: NULL in a NOT NULL field",
                self.name
            )));
        }
        match &self.value {
            Value::Boolean(a) => out.push(u8::from(a.value(i))),
            Value::Int8(v) => put_long(out, i64::from(v[i])),
            Value::Int16(v) => put_long(out, i64::from(v[i])),
            Value::Int32(v) => put_long(out, i64::from(v[i])),
            Value::Int64(v) => put_long(out, v[i]),
            Value::SecondsAsMillis(v) => put_long(
                out,
                v[i].checked_mul(1000).ok_or_else(|| {
                    Error::invalid(format!(
                        "writing column {}: timestamp {} s overflows milliseconds",
                        self.name, v[i]
                    ))
                })?,
            ),
            Value::Float32(v) => out.extend_from_slice(&v[i].to_le_bytes()),
            Value::Float64(v) => out.extend_from_slice(&v[i].to_le_bytes()),
            Value::Decimal(v) => put_bytes(
                out,
                crate::util::minimal_twos_complement(&v[i].to_be_bytes()),
            ),
            Value::String(a) => put_bytes(out, a.value(i).as_bytes()),
            Value::Bytes(a) => put_bytes(out, a.value(i)),
            Value::List { list, item } => {
                let offsets = list.value_offsets();
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                put_items(out, end - start, |out| {
                    (start..end).try_for_each(|j| item.encode(j, out))
                })?;
            }
            Value::FixedList { list, item } => {
                let start = list.value_offset(i) as usize;
                let len = list.value_length() as usize;
                put_items(out, len, |out| {
                    (start..start + len).try_for_each(|j| item.encode(j, out))
                })?;
            }
            Value::StringMap { map, keys, value } => {
                let offsets = map.value_offsets();
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                put_items(out, end - start, |out| {
                    (start..end).try_for_each(|j| {
                        put_bytes(out, keys.value(j).as_bytes());
                        value.encode(j, out)
                    })
                })?;
            }
            Value::ArrayMap { map, key, value } => {
                let offsets = map.value_offsets();
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                put_items(out, end - start, |out| {
                    (start..end).try_for_each(|j| {
                        key.encode(j, out)?;
                        value.encode(j, out)
                    })
                })?;
            }
            Value::Record(children) => {
                for child in children {
                    child.encode(i, out)?;
                }
            }
        }
        Ok(())
    }
}

/// An Avro array or map of `count` items: one block (`count`, items) and the closing 0, or a
/// lone 0 when empty (Java's `BinaryEncoder` with `setItemCount`).
fn put_items(
    out: &mut Vec<u8>,
    count: usize,
    items: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<()> {
    if count > 0 {
        put_long(out, count as i64);
        items(out)?;
    }
    out.push(0);
    Ok(())
}

/// Avro `long`/`int`: zig-zag varint.
fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Avro `bytes`/`string`: length then the bytes.
fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

#[cfg(test)]
pub(super) fn test_minimal_twos_complement(v: i128) -> Vec<u8> {
    crate::util::minimal_twos_complement(&v.to_be_bytes()).to_vec()
}
