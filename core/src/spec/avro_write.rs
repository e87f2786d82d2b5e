//! Writing manifest-family Avro files with Java's schemas.
//!
//! Source: Java `org.apache.paimon.format.avro.AvroSchemaConverter` (nullable `T` →
//! `["null", T]` with default null; nested record name = parent name + `_` + field name; top
//! level `org.apache.paimon.avro.generated.record`), the `SCHEMA` row types of
//! `ManifestFileMeta`, `ManifestEntry`, `DataFileMeta`, `SimpleStats`, `IndexManifestEntry`,
//! `DeletionVectorMeta`, `GlobalIndexMeta`, and `VersionedObjectSerializer` (`_VERSION` first).

use apache_avro::types::Value;
use apache_avro::{Codec, Schema, Writer};
use serde_json::{Value as Json, json};

use crate::error::{Error, Result};

/// Top-level Avro record name Java uses.
pub(crate) const TOP_RECORD: &str = "org.apache.paimon.avro.generated.record";

/// Compression of manifest-family Avro files (`manifest.compression`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestCodec {
    /// `null` codec (no compression).
    Null,
    /// `deflate`.
    Deflate,
    /// `snappy` (with the per-block CRC32 Avro requires).
    Snappy,
    /// `zstandard` at the given level (Java default level 1).
    Zstd(u8),
}

impl ManifestCodec {
    /// From a `manifest.compression` value: `none`/`null`/`uncompressed`, `deflate`/`gzip`,
    /// `snappy`, `zstd`/`zstandard` (level 1), case-insensitive.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for any other codec (e.g. `lz4`, which Avro lacks).
    pub fn from_option(value: &str) -> Result<Self> {
        match value.to_ascii_lowercase().as_str() {
            "none" | "null" | "uncompressed" => Ok(ManifestCodec::Null),
            "deflate" | "gzip" => Ok(ManifestCodec::Deflate),
            "snappy" => Ok(ManifestCodec::Snappy),
            "zstd" | "zstandard" => Ok(ManifestCodec::Zstd(1)),
            other => Err(Error::unsupported(format!(
                "manifest.compression '{other}' for Avro manifests"
            ))),
        }
    }

    fn codec(self) -> Codec {
        match self {
            ManifestCodec::Null => Codec::Null,
            ManifestCodec::Deflate => Codec::Deflate(apache_avro::DeflateSettings::default()),
            ManifestCodec::Snappy => Codec::Snappy,
            ManifestCodec::Zstd(level) => {
                Codec::Zstandard(apache_avro::ZstandardSettings::new(level))
            }
        }
    }
}

/// Every codec, for tests that run each.
#[cfg(test)]
pub(crate) const EVERY_CODEC: [ManifestCodec; 4] = [
    ManifestCodec::Null,
    ManifestCodec::Deflate,
    ManifestCodec::Snappy,
    ManifestCodec::Zstd(1),
];

/// How to write a manifest-family Avro file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvroWriteOptions {
    /// Block compression.
    pub codec: ManifestCodec,
    /// The 16-byte sync marker (an input: the core has no randomness; derive it from the
    /// commit's seed).
    pub sync_marker: [u8; 16],
}

impl Default for AvroWriteOptions {
    /// zstd level 1, all-zero sync marker.
    fn default() -> Self {
        AvroWriteOptions {
            codec: ManifestCodec::Zstd(1),
            sync_marker: [0; 16],
        }
    }
}

/// `{"name": name, "type": ty}` (NOT NULL field).
pub(crate) fn field(name: &str, ty: Json) -> Json {
    json!({ "name": name, "type": ty })
}

/// `{"name": name, "type": ["null", ty], "default": null}` (nullable field).
pub(crate) fn nfield(name: &str, ty: Json) -> Json {
    json!({ "name": name, "type": ["null", ty], "default": null })
}

/// A record type named `name` with `fields`.
pub(crate) fn record(name: &str, fields: Vec<Json>) -> Json {
    json!({ "type": "record", "name": name, "fields": fields })
}

/// Array type of `items`.
pub(crate) fn array(items: Json) -> Json {
    json!({ "type": "array", "items": items })
}

/// Nested record name (Java: parent name + `_` + field name).
pub(crate) fn nested(parent: &str, field: &str) -> String {
    format!("{parent}_{field}")
}

/// SimpleStats record (`_MIN_VALUES`, `_MAX_VALUES`, `_NULL_COUNTS`).
pub(crate) fn simple_stats_schema(name: &str) -> Json {
    record(
        name,
        vec![
            field("_MIN_VALUES", json!("bytes")),
            field("_MAX_VALUES", json!("bytes")),
            nfield("_NULL_COUNTS", array(json!(["null", "long"]))),
        ],
    )
}

/// A nullable value: `Union(0, Null)` or `Union(1, v)`.
pub(crate) fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> Value) -> Value {
    match v {
        None => Value::Union(0, Box::new(Value::Null)),
        Some(x) => Value::Union(1, Box::new(f(x))),
    }
}

/// Array of strings.
pub(crate) fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().map(|s| Value::String(s.clone())).collect())
}

/// Avro `long` (zigzag varint); an `int` encodes the same as the `long` of its value.
pub(crate) fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        if z < 0x80 {
            out.push(z as u8);
            return;
        }
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
}

/// Avro `bytes` / `string`: length then content.
pub(crate) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// A nullable value (`["null", T]`): branch 0 for null, else branch 1 and the value.
pub(crate) fn put_opt<T>(out: &mut Vec<u8>, v: Option<T>, put: impl FnOnce(&mut Vec<u8>, T)) {
    match v {
        None => put_long(out, 0),
        Some(x) => {
            put_long(out, 1);
            put(out, x);
        }
    }
}

/// An array as one block: its length and items, then the empty block that ends it (only
/// the end for an empty array), as the `apache-avro` writer lays it out.
pub(crate) fn put_array<T>(
    out: &mut Vec<u8>,
    items: impl ExactSizeIterator<Item = T>,
    mut put: impl FnMut(&mut Vec<u8>, T),
) {
    if items.len() > 0 {
        put_long(out, items.len() as i64);
        for item in items {
            put(out, item);
        }
    }
    put_long(out, 0);
}

/// An array of strings.
pub(crate) fn put_strings(out: &mut Vec<u8>, v: &[String]) {
    put_array(out, v.iter(), |out, s| put_bytes(out, s.as_bytes()));
}

/// The `apache-avro` writer closes a block once the encoded records reach this many bytes.
const BLOCK_BYTES: usize = 16_000;

/// Write `records` into an Avro object container of `schema`, each record laid out in Avro's
/// binary encoding by `put` (which must follow `schema`), in blocks closed as the
/// `apache-avro` writer closes them: the bytes are those of [`write_container`] of the
/// records as values, without building a value per field. The same inputs give the same
/// bytes.
pub(crate) fn write_encoded_container<T>(
    schema: &Json,
    records: &[T],
    mut put: impl FnMut(&mut Vec<u8>, &T),
    options: &AvroWriteOptions,
) -> Result<Vec<u8>> {
    let schema = Schema::parse(schema)
        .map_err(|e| Error::invalid(format!("internal Avro schema error: {e}")))?;
    let mut out = header(&schema, options)?;
    let codec = options.codec.codec();
    let encode_error =
        |e: &dyn std::fmt::Display| Error::invalid(format!("Avro manifest encode: {e}"));
    // zstd: one context for every block of the file, each block a frame as the codec writes
    // it (a streaming frame: the input, then its end); the codec makes a context per block,
    // which cost ~9 % of a commit rewriting 100,000 entries.
    let mut zstd_context = match options.codec {
        ManifestCodec::Zstd(level) => {
            let mut context = zstd::zstd_safe::CCtx::create();
            context
                .set_parameter(zstd::zstd_safe::CParameter::CompressionLevel(i32::from(
                    level,
                )))
                .map_err(|code| encode_error(&zstd::zstd_safe::get_error_name(code)))?;
            Some(context)
        }
        _ => None,
    };
    let mut compress = |block: &mut Vec<u8>| -> Result<()> {
        match &mut zstd_context {
            Some(context) => {
                use std::io::Write;
                let mut encoder = zstd::stream::write::Encoder::with_context(
                    Vec::with_capacity(block.len() / 2),
                    context,
                );
                encoder.write_all(block).map_err(|e| encode_error(&e))?;
                *block = encoder.finish().map_err(|e| encode_error(&e))?;
                Ok(())
            }
            None => codec.compress(block).map_err(|e| encode_error(&e)),
        }
    };
    let mut block = Vec::with_capacity(2 * BLOCK_BYTES);
    let mut count = 0i64;
    let mut close = |out: &mut Vec<u8>, block: &mut Vec<u8>, count: &mut i64| -> Result<()> {
        compress(block)?;
        put_long(out, *count);
        put_bytes(out, block);
        out.extend_from_slice(&options.sync_marker);
        block.clear();
        *count = 0;
        Ok(())
    };
    for r in records {
        put(&mut block, r);
        count += 1;
        if block.len() >= BLOCK_BYTES {
            close(&mut out, &mut block, &mut count)?;
        }
    }
    if count > 0 {
        close(&mut out, &mut block, &mut count)?;
    }
    Ok(out)
}

/// The object container header: magic, the metadata map `avro.schema`, `avro.codec` (in
/// this order, as one block; the `apache-avro` writer iterates a `HashMap` here, which would
/// make the bytes of a file differ from run to run) and the sync marker.
fn header(schema: &Schema, options: &AvroWriteOptions) -> Result<Vec<u8>> {
    let schema_json = serde_json::to_string(schema)
        .map_err(|e| Error::invalid(format!("internal Avro schema error: {e}")))?;
    let codec: &str = match options.codec {
        ManifestCodec::Null => "null",
        ManifestCodec::Deflate => "deflate",
        ManifestCodec::Snappy => "snappy",
        ManifestCodec::Zstd(_) => "zstandard",
    };
    let mut out = b"Obj\x01".to_vec();
    put_long(&mut out, 2);
    put_bytes(&mut out, b"avro.schema");
    put_bytes(&mut out, schema_json.as_bytes());
    put_bytes(&mut out, b"avro.codec");
    put_bytes(&mut out, codec.as_bytes());
    put_long(&mut out, 0);
    out.extend_from_slice(&options.sync_marker);
    Ok(out)
}

/// Write `records` (each a `Value::Record`) with `schema` into an Avro object container.
/// The same inputs give the same bytes.
pub(crate) fn write_container(
    schema: &Json,
    records: Vec<Value>,
    options: &AvroWriteOptions,
) -> Result<Vec<u8>> {
    let schema = Schema::parse(schema)
        .map_err(|e| Error::invalid(format!("internal Avro schema error: {e}")))?;
    let mut writer = Writer::builder()
        .schema(&schema)
        .writer(header(&schema, options)?)
        .codec(options.codec.codec())
        .marker(options.sync_marker)
        .has_header(true)
        .build();
    for r in records {
        writer
            .append(r)
            .map_err(|e| Error::invalid(format!("Avro manifest encode: {e}")))?;
    }
    writer
        .into_inner()
        .map_err(|e| Error::invalid(format!("Avro manifest encode: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_are_deterministic_and_readable() {
        let schema = record(
            TOP_RECORD,
            vec![field("a", json!("long")), nfield("b", json!("string"))],
        );
        let rec = |i: i64| {
            Value::Record(vec![
                ("a".into(), Value::Long(i)),
                ("b".into(), opt(Some(format!("v{i}")), Value::String)),
            ])
        };
        for codec in EVERY_CODEC {
            let options = AvroWriteOptions {
                codec,
                sync_marker: [7; 16],
            };
            let write = || write_container(&schema, (0..300).map(rec).collect(), &options).unwrap();
            let bytes = write();
            for _ in 0..8 {
                assert_eq!(write(), bytes, "{codec:?}");
            }
            let reader = apache_avro::Reader::new(&bytes[..]).unwrap();
            let values: Vec<Value> = reader.map(|v| v.unwrap()).collect();
            assert_eq!(values.len(), 300);
            assert_eq!(values[299], rec(299));
            // Empty containers too.
            let empty = write_container(&schema, vec![], &options).unwrap();
            assert_eq!(apache_avro::Reader::new(&empty[..]).unwrap().count(), 0);
        }
    }
}
