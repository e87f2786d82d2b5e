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

/// Write `records` (each a `Value::Record`) with `schema` into an Avro object container.
pub(crate) fn write_container(
    schema: &Json,
    records: Vec<Value>,
    options: &AvroWriteOptions,
) -> Result<Vec<u8>> {
    let schema = Schema::parse(schema)
        .map_err(|e| Error::invalid(format!("internal Avro schema error: {e}")))?;
    let mut writer = Writer::builder()
        .schema(&schema)
        .writer(Vec::new())
        .codec(options.codec.codec())
        .marker(options.sync_marker)
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
