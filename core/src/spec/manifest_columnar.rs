//! Manifest-family files written as Parquet or ORC (table option `manifest.format` = `parquet`
//! / `orc`, written by older Java releases and other implementations), read into the same
//! generic records as the Avro manifests so that one set of field decoders serves every
//! format.
//!
//! Source: Java `org.apache.paimon.manifest.ManifestFile` / `ManifestList` /
//! `IndexManifestFile`, which write their row types (`ManifestEntry.SCHEMA`,
//! `ManifestFileMeta.SCHEMA`, `IndexManifestEntry.SCHEMA`) with the `FileFormat` named by
//! `manifest.format`. The columns are the Avro fields by name (`_VERSION`, `_KIND`,
//! `_PARTITION`, `_FILE` ...); nested rows are Parquet groups / ORC structs, arrays are
//! Parquet LISTs / ORC lists, `BinaryRow` fields are binary.
//!
//! The format is decided by the file's magic bytes, never by the option, so a table whose
//! option changed over time (any mix of formats) reads: Avro `Obj\x01` (first four bytes),
//! Parquet `PAR1` (first and last four bytes), ORC `ORC` (first three bytes).
//!
//! Mapping from Arrow (as decoded by the `parquet` / `orc-rust` readers) to Avro values:
//! Int8/Int16/Int32 → `Int`; Int64 → `Long`; Boolean → `Boolean`; Float32/64 →
//! `Float`/`Double`; Utf8 (all widths) → `String`; Binary (all widths) → `Bytes`; Struct →
//! `Record` (fields in column order); List → `Array`; Timestamp (any unit) →
//! `LocalTimestampMillis` (floored to millis); Date32 → `Date`; a null slot → `Null`. Other
//! Arrow types are reported as corrupt (no manifest field uses them).

use apache_avro::types::Value;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use bytes::Bytes;

use crate::error::{Error, Result};

/// `corrupt` format name of Parquet manifest files.
pub const PARQUET_MANIFEST_FORMAT: &str = "parquet-manifest";
/// `corrupt` format name of ORC manifest files.
pub const ORC_MANIFEST_FORMAT: &str = "orc-manifest";

/// The container format of a manifest-family file, from its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestFileFormat {
    /// Avro object container (`Obj\x01`).
    Avro,
    /// Parquet (`PAR1` at both ends).
    Parquet,
    /// ORC (`ORC` at the start).
    Orc,
}

impl ManifestFileFormat {
    /// Sniff the format of `bytes`; `None` when no magic matches (the caller reports the file
    /// as corrupt).
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"Obj\x01") {
            Some(Self::Avro)
        } else if bytes.len() >= 8 && bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1") {
            Some(Self::Parquet)
        } else if bytes.starts_with(b"ORC") {
            Some(Self::Orc)
        } else {
            None
        }
    }
}

/// Decode every row of a Parquet or ORC manifest-family file into generic records
/// (field name, value), as the Avro path does.
///
/// # Errors
/// [`Error::Corrupt`] (format `parquet-manifest` / `orc-manifest`, naming `path`) when the
/// file does not decode or holds a column type no manifest uses.
pub(crate) fn read_columnar_records(
    bytes: &[u8],
    path: &str,
    format: ManifestFileFormat,
) -> Result<Vec<Vec<(String, Value)>>> {
    let name = match format {
        ManifestFileFormat::Parquet => PARQUET_MANIFEST_FORMAT,
        ManifestFileFormat::Orc => ORC_MANIFEST_FORMAT,
        ManifestFileFormat::Avro => {
            return Err(Error::corrupt(
                path,
                super::manifest::AVRO_MANIFEST_FORMAT,
                "an Avro file handed to the columnar manifest reader",
            ));
        }
    };
    // The decoders may panic on hostile bytes: report those as a corrupt file.
    std::panic::catch_unwind(|| {
        let batches = match format {
            ManifestFileFormat::Parquet => parquet_batches(bytes, path)?,
            _ => orc_batches(bytes, path)?,
        };
        let mut out = Vec::new();
        for batch in &batches {
            batch_records(batch, path, name, &mut out)?;
        }
        Ok(out)
    })
    .unwrap_or_else(|_| {
        Err(Error::corrupt(
            path,
            name,
            "the decoder rejected the file (panicked)",
        ))
    })
}

fn parquet_batches(bytes: &[u8], path: &str) -> Result<Vec<RecordBatch>> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let bad =
        |e: &dyn std::fmt::Display| Error::corrupt(path, PARQUET_MANIFEST_FORMAT, e.to_string());
    let reader = ParquetRecordBatchReaderBuilder::try_new(Bytes::copy_from_slice(bytes))
        .map_err(|e| bad(&e))?
        .build()
        .map_err(|e| bad(&e))?;
    reader
        .map(|b| b.map_err(|e| bad(&e)))
        .collect::<Result<Vec<_>>>()
}

fn orc_batches(bytes: &[u8], path: &str) -> Result<Vec<RecordBatch>> {
    use orc_rust::arrow_reader::ArrowReaderBuilder;
    let bad = |e: &dyn std::fmt::Display| Error::corrupt(path, ORC_MANIFEST_FORMAT, e.to_string());
    let reader = ArrowReaderBuilder::try_new(Bytes::copy_from_slice(bytes))
        .map_err(|e| bad(&e))?
        .build();
    reader
        .map(|b| b.map_err(|e| bad(&e)))
        .collect::<Result<Vec<_>>>()
}

fn batch_records(
    batch: &RecordBatch,
    path: &str,
    format: &'static str,
    out: &mut Vec<Vec<(String, Value)>>,
) -> Result<()> {
    let schema = batch.schema();
    for row in 0..batch.num_rows() {
        let mut fields = Vec::with_capacity(batch.num_columns());
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let value = value_at(column.as_ref(), row).map_err(|reason| {
                Error::corrupt(
                    path,
                    format,
                    format!("row {row}, column {}: {reason}", field.name()),
                )
            })?;
            fields.push((field.name().clone(), value));
        }
        out.push(fields);
    }
    Ok(())
}

/// The Avro value of `array[row]` (see the module docs for the mapping).
fn value_at(array: &dyn Array, row: usize) -> std::result::Result<Value, String> {
    if array.is_null(row) {
        return Ok(Value::Null);
    }
    Ok(match array.data_type() {
        ArrowType::Boolean => Value::Boolean(array.as_boolean().value(row)),
        ArrowType::Int8 => Value::Int(i32::from(array.as_primitive::<Int8Type>().value(row))),
        ArrowType::Int16 => Value::Int(i32::from(array.as_primitive::<Int16Type>().value(row))),
        ArrowType::Int32 => Value::Int(array.as_primitive::<Int32Type>().value(row)),
        ArrowType::Int64 => Value::Long(array.as_primitive::<Int64Type>().value(row)),
        ArrowType::Float32 => Value::Float(array.as_primitive::<Float32Type>().value(row)),
        ArrowType::Float64 => Value::Double(array.as_primitive::<Float64Type>().value(row)),
        ArrowType::Date32 => Value::Date(array.as_primitive::<Date32Type>().value(row)),
        ArrowType::Utf8 => Value::String(array.as_string::<i32>().value(row).to_string()),
        ArrowType::LargeUtf8 => Value::String(array.as_string::<i64>().value(row).to_string()),
        ArrowType::Utf8View => Value::String(array.as_string_view().value(row).to_string()),
        ArrowType::Binary => Value::Bytes(array.as_binary::<i32>().value(row).to_vec()),
        ArrowType::LargeBinary => Value::Bytes(array.as_binary::<i64>().value(row).to_vec()),
        ArrowType::BinaryView => Value::Bytes(array.as_binary_view().value(row).to_vec()),
        ArrowType::FixedSizeBinary(_) => {
            Value::Bytes(array.as_fixed_size_binary().value(row).to_vec())
        }
        ArrowType::Timestamp(unit, _) => {
            let millis = match unit {
                TimeUnit::Second => array
                    .as_primitive::<TimestampSecondType>()
                    .value(row)
                    .checked_mul(1000)
                    .ok_or("timestamp seconds overflow millis")?,
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => array
                    .as_primitive::<TimestampMicrosecondType>()
                    .value(row)
                    .div_euclid(1000),
                TimeUnit::Nanosecond => array
                    .as_primitive::<TimestampNanosecondType>()
                    .value(row)
                    .div_euclid(1_000_000),
            };
            Value::LocalTimestampMillis(millis)
        }
        ArrowType::Struct(fields) => {
            let s = array.as_struct();
            let mut out = Vec::with_capacity(fields.len());
            for (f, col) in fields.iter().zip(s.columns()) {
                out.push((f.name().clone(), value_at(col.as_ref(), row)?));
            }
            Value::Record(out)
        }
        ArrowType::List(_) => {
            let items = array.as_list::<i32>().value(row);
            list_values(items.as_ref())?
        }
        ArrowType::LargeList(_) => {
            let items = array.as_list::<i64>().value(row);
            list_values(items.as_ref())?
        }
        other => return Err(format!("unsupported column type {other} in a manifest")),
    })
}

fn list_values(items: &dyn Array) -> std::result::Result<Value, String> {
    (0..items.len())
        .map(|i| value_at(items, i))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::ManifestFileFormat;

    #[test]
    fn sniffs_the_magic_bytes() {
        assert_eq!(
            ManifestFileFormat::sniff(b"Obj\x01rest"),
            Some(ManifestFileFormat::Avro)
        );
        assert_eq!(
            ManifestFileFormat::sniff(b"PAR1....PAR1"),
            Some(ManifestFileFormat::Parquet)
        );
        // Parquet needs the trailing magic too.
        assert_eq!(ManifestFileFormat::sniff(b"PAR1...."), None);
        assert_eq!(
            ManifestFileFormat::sniff(b"ORC\x0a\x03"),
            Some(ManifestFileFormat::Orc)
        );
        assert_eq!(ManifestFileFormat::sniff(b"Ob"), None);
    }
}
