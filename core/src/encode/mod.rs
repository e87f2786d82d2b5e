//! Encoding: Arrow values as the bytes Paimon stores. The room below every writer (table
//! writes, compaction, the BLOB writers), over `format`, `spec` and `types` only:
//!
//! * this module: the data-file encoders, [`DataFileEncoder`] ([`parquet`], [`orc`], [`avro`]);
//! * [`stats`]: the statistics of a written file (`_VALUE_STATS`, `_KEY_STATS`), collected
//!   while it is encoded;
//! * [`row`]: Arrow rows as [`BinaryRow`](crate::spec::BinaryRow)s (partitions, keys, bucket
//!   keys) and [`Datum`](crate::spec::Datum)s, and the row kinds of a write's input;
//! * `parts`: the parts of a file sent while it is still being encoded.
//!
//! Source: Java `paimon-format` (`FormatWriterFactory` and its Parquet, ORC and Avro writers),
//! `org.apache.paimon.statistics`, `org.apache.paimon.data.BinaryRowWriter`.
//!
//! # Data-file encoders
//!
//! Arrow [`RecordBatch`]es in, the bytes of one Parquet, ORC or Avro data
//! file out, laid out as Java Paimon writes them, so that Java Paimon, pypaimon and this crate's
//! readers ([`crate::format::data_file`]) read back the same values.
//!
//! # Driving order
//!
//! [`DataFileEncoder::try_new`] with the file's Paimon fields (with their ids), then
//! [`DataFileEncoder::write`] any number of batches (columns in field order, Arrow types as
//! [`crate::types::paimon_to_arrow_type`] gives them), checking
//! [`DataFileEncoder::estimated_size_bytes`] to roll files at `target-file-size`, then
//! [`DataFileEncoder::finish`] for the whole file. No IO: the bytes stay in memory until the
//! caller hands them to the host as a `Put`. Memory: Parquet buffers one row group (encoded
//! pages; `file.block-size`, else `parquet.block.size`, default 128 MiB), ORC the rows of one
//! stripe (Arrow slices of the written batches up to `file.block-size`, else `orc.stripe.size`,
//! default 64 MiB of raw size), Avro one block (64000 bytes); the finished part of the file is
//! held too until the caller takes it ([`DataFileEncoder::take_laid_out`], for a streamed
//! `Put`).
//!
//! # Type mapping
//!
//! | Paimon | Parquet (`ParquetSchemaConverter`) | ORC (`OrcTypeUtil`) | Avro (`AvroSchemaConverter`) |
//! |---|---|---|---|
//! | `BOOLEAN` | `boolean` | `boolean` | `boolean` |
//! | `TINYINT` / `SMALLINT` | `int32` `INT(8)` / `INT(16)` | `tinyint` / `smallint` | `int` |
//! | `INT` / `BIGINT` | `int32` / `int64` | `int` / `bigint` | `int` / `long` |
//! | `FLOAT` / `DOUBLE` | `float` / `double` | `float` / `double` | `float` / `double` |
//! | `DECIMAL(p, s)` | `DECIMAL(p, s)` on `int32` (p ≤ 9), `int64` (p ≤ 18), else `fixed_len_byte_array(n)` (fewest bytes for p) | unsupported | `bytes` `decimal(p, s)` (minimal two's complement) |
//! | `CHAR(n)` / `VARCHAR(n)` / `STRING` | `binary` `STRING` | `char(n)` / `varchar(n)` / `string` | `string` |
//! | `BINARY` / `VARBINARY` | `binary` | `binary` | `bytes` |
//! | `DATE` | `int32` `DATE` | `date` | `int` `date` |
//! | `TIME(p)` | `int32` `TIME(MILLIS, utc=true)` | `int` (millis of day) | `int` `time-millis` (p ≤ 3 only) |
//! | `TIMESTAMP(p)` | `int64` `TIMESTAMP(MILLIS, utc=false)` (p ≤ 3), `MICROS` (p ≤ 6), else `int96` | `timestamp` (writer zone UTC) | `long` `timestamp-millis` / `-micros` (p ≤ 6 only) |
//! | `TIMESTAMP_LTZ(p)` | as `TIMESTAMP` with `utc=true`; `int96` for p > 6 | `timestamp with local time zone` | `long` `local-timestamp-millis` / `-micros` (p ≤ 6 only) |
//! | `ARRAY<e>` / `VECTOR<e, n>` | 3-level `LIST`: `repeated group list { element }` | unsupported | `array` |
//! | `MAP<k, v>` | `MAP`: `repeated group key_value { required key; value }` | unsupported | `map` (CHAR/VARCHAR keys) or `array` of `{key, value}` records with `"logicalType": "map"` |
//! | `MULTISET<e>` | as `MAP<e NOT NULL, INT NOT NULL>` | unsupported | as `MAP<e, INT>` |
//! | `ROW<...>` | group | unsupported | record `<parent name>_<field>` |
//! | `VARIANT` | group `{ required binary value; required binary metadata }` (ids 0, 1) | unsupported | unsupported (Java too) |
//! | `BLOB` | unsupported: blob columns live in `.blob` files, not data files | same | same |
//!
//! Nullability: Parquet `OPTIONAL` / `REQUIRED` per type (map keys always `REQUIRED`); Avro
//! `["null", T]` unions with `"default": null` for nullable record fields; ORC has none. A NULL
//! in a `NOT NULL` column is an error (Java throws too).
//!
//! Field ids: Parquet schema elements carry Paimon field ids (`field_id`); array elements get
//! `536870911 + 1024·id + depth`, map keys `536870911 − 1024·id − depth`, map values
//! `536870911 + 1024·id + depth` (Java `SpecialFields`, 32-bit wrapping like Java), where `id`
//! is the enclosing top-level or ROW field and `depth` the list/map nesting (1 for the outer
//! one). ORC types carry the attribute `paimon.id`. Avro carries none. The Parquet message is
//! named `paimon_schema`, the Avro top-level record `org.apache.paimon.avro.generated.record`
//! (or its `avro.row-name-mapping` replacement).
//!
//! See [`parquet`], [`avro`] and [`orc`] for the options each format honours.
//!
//! Source: Java `org.apache.paimon.format.parquet.ParquetWriterFactory`,
//! `ParquetSchemaConverter`, `writer.ParquetRowDataWriter`, `writer.RowDataParquetBuilder`;
//! `org.apache.paimon.format.orc.OrcFileFormat`, `OrcTypeUtil`, `OrcWriterFactory`;
//! `org.apache.paimon.format.avro.AvroFileFormat`, `AvroSchemaConverter`,
//! `FieldWriterFactory`; `org.apache.paimon.CoreOptions`.

pub mod avro;
pub mod orc;
pub mod parquet;
pub(crate) mod parts;
pub mod row;
pub mod stats;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{Field, SchemaRef};

use crate::error::{Error, Result};
use crate::format::data_file::FileFormat;
use crate::spec::{CoreOptions, DataField, DataType};
use crate::types::{cast_column_to, paimon_to_arrow_schema};

/// Streaming encoder of one data file.
///
/// Mirrors the `FormatWriter`s of Java's `FileFormat.createWriterFactory` (Parquet, ORC, Avro)
/// for data files: `write` batches, watch [`Self::estimated_size_bytes`], then [`Self::finish`].
/// See the [module docs](self) for the type mapping.
#[derive(Debug)]
pub struct DataFileEncoder {
    inner: Inner,
    input: InputSchema,
    row_count: u64,
}

#[derive(Debug)]
enum Inner {
    Parquet(Box<parquet::ParquetEncoder>),
    Orc(Box<orc::OrcEncoder>),
    Avro(Box<avro::AvroEncoder>),
}

impl DataFileEncoder {
    /// An encoder of a `format` (`parquet`, `orc` or `avro`, case-insensitive) file holding
    /// `fields`, compressed with `file.compression` of `options` (default `zstd`) and tuned by
    /// the format's options (see [`parquet`], [`orc`], [`avro`]).
    ///
    /// `fields` are the Paimon fields of the file with their ids; for primary-key files they
    /// include the system fields `_KEY_<k>`, `_SEQUENCE_NUMBER` and `_VALUE_KIND` before the
    /// value fields.
    ///
    /// # Errors
    /// * [`Error::Unsupported`] for another format, a codec the format lacks, or a type the
    ///   format cannot hold the way Java writes it (see the module docs).
    /// * [`Error::Invalid`] for a malformed option value.
    pub fn try_new(fields: &[DataField], format: &str, options: &CoreOptions) -> Result<Self> {
        Self::try_new_with_compression(fields, format, options.file_compression(), options)
    }

    /// As [`Self::try_new`] with an explicit compression (e.g. from
    /// `file.compression.per.level` or `changelog-file.compression`) instead of
    /// `file.compression`.
    ///
    /// # Errors
    /// As [`Self::try_new`].
    pub fn try_new_with_compression(
        fields: &[DataField],
        format: &str,
        compression: &str,
        options: &CoreOptions,
    ) -> Result<Self> {
        // A BLOB column in a data file (managed BLOBs and inline descriptors of primary-key
        // tables) holds serialized descriptors: plain binary in every format, as Java writes.
        let fields = &blobs_as_binary(fields);
        let input = InputSchema::try_new(fields)?;
        let inner = match FileFormat::from_name(format)? {
            FileFormat::Parquet => Inner::Parquet(Box::new(parquet::ParquetEncoder::try_new(
                fields,
                compression,
                options,
            )?)),
            FileFormat::Orc => Inner::Orc(Box::new(orc::OrcEncoder::try_new(
                fields,
                compression,
                options,
            )?)),
            FileFormat::Avro => Inner::Avro(Box::new(avro::AvroEncoder::try_new(
                fields,
                compression,
                options,
            )?)),
        };
        Ok(DataFileEncoder {
            inner,
            input,
            row_count: 0,
        })
    }

    /// Use `marker` as the 16-byte sync marker of an Avro file (the core has no randomness:
    /// by default the marker is derived from the Avro schema). Call it before writing; no
    /// effect once the first Avro block is out, nor on Parquet and ORC.
    pub fn with_sync_marker(mut self, marker: [u8; 16]) -> Self {
        if let Inner::Avro(avro) = &mut self.inner {
            avro.set_sync_marker(marker);
        }
        self
    }

    /// The file format being written.
    pub fn format(&self) -> FileFormat {
        match self.inner {
            Inner::Parquet(_) => FileFormat::Parquet,
            Inner::Orc(_) => FileFormat::Orc,
            Inner::Avro(_) => FileFormat::Avro,
        }
    }

    /// Append the rows of `batch`: its columns are the fields in order, with the Arrow types
    /// of [`crate::types::paimon_to_arrow_type`] (other types are converted when
    /// [`crate::types::cast_column_to`] allows it). Empty batches are fine.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a column count or type that does not match, a NULL in a
    /// `NOT NULL` column, or a value the format cannot hold (e.g. an ORC timestamp in the last
    /// second before 1970 with more than millisecond digits). ORC encodes a stripe once it is
    /// full, so such a value may only be reported by a later `write` or by [`Self::finish`].
    /// After an error the file is incomplete: drop the encoder.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let columns = self.input.conform(batch)?;
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        match &mut self.inner {
            Inner::Parquet(p) => p.write(&columns, rows)?,
            Inner::Orc(o) => o.write(&columns, rows)?,
            Inner::Avro(a) => a.write(&columns, rows)?,
        }
        self.row_count += rows as u64;
        Ok(())
    }

    /// Bytes of the file so far: bytes already laid out (flushed row groups, stripes or blocks)
    /// plus an estimate of what is buffered (encoded pages of the open row group, raw size of
    /// the open ORC stripe, the open Avro block). For rolling files at `target-file-size`.
    pub fn estimated_size_bytes(&self) -> u64 {
        match &self.inner {
            Inner::Parquet(p) => p.estimated_size_bytes(),
            Inner::Orc(o) => o.estimated_size_bytes(),
            Inner::Avro(a) => a.estimated_size_bytes(),
        }
    }

    /// Rows written so far.
    pub fn row_count(&self) -> u64 {
        self.row_count
    }

    /// Bytes of the file laid out for good (Parquet's magic and closed row groups, ORC's
    /// magic and finished stripes, Avro's header and finished blocks) and not yet taken with
    /// [`Self::take_laid_out`].
    pub fn laid_out_bytes(&self) -> usize {
        match &self.inner {
            Inner::Parquet(p) => p.laid_out_bytes(),
            Inner::Orc(o) => o.laid_out_bytes(),
            Inner::Avro(a) => a.laid_out_bytes(),
        }
    }

    /// Take the bytes counted by [`Self::laid_out_bytes`], so that a caller can send the start
    /// of a large file (a streamed, multipart `Put`) while the rest is encoded. The file is
    /// every take, in order, followed by what [`Self::finish`] returns; the bytes are the same
    /// as those of a file never taken from.
    ///
    /// # Errors
    /// An internal failure flushing the Parquet writer's buffer.
    pub fn take_laid_out(&mut self) -> Result<Vec<u8>> {
        match &mut self.inner {
            Inner::Parquet(p) => p.take_laid_out(),
            Inner::Orc(o) => Ok(o.take_laid_out()),
            Inner::Avro(a) => Ok(a.take_laid_out()),
        }
    }

    /// Flush what is buffered and return the file's bytes not yet taken with
    /// [`Self::take_laid_out`] (the whole file when nothing was taken).
    ///
    /// # Errors
    /// An encoding failure of the underlying writer (for ORC also of the rows of the last
    /// stripe, see [`Self::write`]).
    pub fn finish(self) -> Result<Vec<u8>> {
        match self.inner {
            Inner::Parquet(p) => p.finish(),
            Inner::Orc(o) => o.finish(),
            Inner::Avro(a) => a.finish(),
        }
    }
}

/// The Arrow form of the fields that `write` expects.
#[derive(Debug)]
struct InputSchema {
    fields: Vec<DataField>,
    arrow: SchemaRef,
}

impl InputSchema {
    fn try_new(fields: &[DataField]) -> Result<Self> {
        Ok(InputSchema {
            fields: fields.to_vec(),
            arrow: paimon_to_arrow_schema(fields)?,
        })
    }

    /// The columns of `batch` with exactly the expected Arrow types.
    fn conform(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        if batch.num_columns() != self.fields.len() {
            return Err(Error::invalid(format!(
                "writing a data file of {} fields: the batch has {} columns",
                self.fields.len(),
                batch.num_columns()
            )));
        }
        let mut out = Vec::with_capacity(self.fields.len());
        for ((column, field), arrow) in batch
            .columns()
            .iter()
            .zip(&self.fields)
            .zip(self.arrow.fields())
        {
            let column = if column.data_type() == arrow.data_type() {
                Arc::clone(column)
            } else {
                convert(column, arrow).map_err(|e| {
                    Error::invalid(format!(
                        "writing column {}: cannot take {} as {}: {e}",
                        field.name,
                        column.data_type(),
                        arrow.data_type()
                    ))
                })?
            };
            if !field.data_type.nullable && column.null_count() > 0 {
                return Err(Error::invalid(format!(
                    "writing column {}: {} NULL value(s) in a NOT NULL column",
                    field.name,
                    column.null_count()
                )));
            }
            out.push(column);
        }
        Ok(out)
    }
}

fn convert(column: &ArrayRef, target: &Field) -> Result<ArrayRef> {
    // Nullability is checked by the caller with the column's name.
    let target = target.clone().with_nullable(true);
    cast_column_to(column, &target, "<data file being written>")
}

/// `fields` with every `BLOB` type (nested too) replaced by `BYTES` (its physical type in
/// Parquet, ORC and Avro data files).
fn blobs_as_binary(fields: &[DataField]) -> Vec<DataField> {
    fn ty(t: &DataType) -> DataType {
        use crate::spec::TypeKind as K;
        let kind = match &t.kind {
            K::Blob => K::VarBinary {
                length: crate::spec::types::MAX_LENGTH,
            },
            K::Array(e) => K::Array(Box::new(ty(e))),
            K::Multiset(e) => K::Multiset(Box::new(ty(e))),
            K::Map(k, v) => K::Map(Box::new(ty(k)), Box::new(ty(v))),
            K::Row(fs) => K::Row(blobs_as_binary(fs)),
            other => other.clone(),
        };
        DataType {
            nullable: t.nullable,
            kind,
        }
    }
    fields
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.data_type = ty(&f.data_type);
            f
        })
        .collect()
}

/// Java `SpecialFields.STRUCTURED_TYPE_FIELD_ID_BASE` (`Integer.MAX_VALUE / 4`).
const STRUCTURED_TYPE_FIELD_ID_BASE: i32 = i32::MAX / 4;
/// Java `SpecialFields.STRUCTURED_TYPE_FIELD_DEPTH_LIMIT`.
const STRUCTURED_TYPE_FIELD_DEPTH_LIMIT: i32 = 1 << 10;

/// Id of the element of the array field `field_id` at nesting `depth` (Java
/// `SpecialFields.getArrayElementFieldId`, with Java's wrapping `int` arithmetic).
pub(crate) fn array_element_field_id(field_id: i32, depth: i32) -> i32 {
    STRUCTURED_TYPE_FIELD_ID_BASE
        .wrapping_add(field_id.wrapping_mul(STRUCTURED_TYPE_FIELD_DEPTH_LIMIT))
        .wrapping_add(depth)
}

/// Id of the key of the map field `field_id` at nesting `depth` (Java
/// `SpecialFields.getMapKeyFieldId`).
pub(crate) fn map_key_field_id(field_id: i32, depth: i32) -> i32 {
    STRUCTURED_TYPE_FIELD_ID_BASE
        .wrapping_sub(field_id.wrapping_mul(STRUCTURED_TYPE_FIELD_DEPTH_LIMIT))
        .wrapping_sub(depth)
}

/// Id of the value of the map field `field_id` at nesting `depth` (Java
/// `SpecialFields.getMapValueFieldId`).
pub(crate) fn map_value_field_id(field_id: i32, depth: i32) -> i32 {
    array_element_field_id(field_id, depth)
}

/// An encoding failure of an underlying writer (parquet, orc-rust, Avro codecs).
fn encode_error(format: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid(format!("encoding a {format} data file: {e}"))
}
