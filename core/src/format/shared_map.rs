//! MAP columns stored with `fields.<name>.map.storage-layout = shared-shredding`: reading the
//! physical row back into the logical `MAP<STRING, V>`.
//!
//! Such a column is stored as a ROW: `__field_mapping ARRAY<INT>` (one entry per physical
//! column: the id of the key stored there in this row, or -1), `__col_0` .. `__col_{n-1}` of
//! the value type, and `__overflow MAP<INT, V>` (key id → value for keys without a column).
//! The key names are in the file: the top-level field's metadata (Parquet: the embedded
//! `ARROW:schema`; ORC: its user metadata `ARROW:schema`) holds
//! `paimon.map.storage-layout = shared-shredding` and `paimon.map.shared-shredding.*`, among
//! them the field dictionary (JSON name → id, compressed with `none`, `lz4` (Paimon's block
//! format: compressed and original lengths, little-endian, then an LZ4 block) or `zstd`, each
//! byte kept as one ISO-8859-1 character).
//!
//! A row's entries are the physical columns in order (those whose mapping names a known key),
//! then the overflow entries in stored order, as Java's reader returns them.
//!
//! Source: Java `org.apache.paimon.data.shredding.{MapSharedShreddingReadPlan,
//! MapSharedShreddingUtils, MapSharedShreddingDefine, MapShreddingDefine}` and
//! `org.apache.paimon.compression.{Lz4BlockCompressor, ZstdBlockCompressor}` (release-2.0.0).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, MapArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType as ArrowType, Field, Fields};

use crate::error::{Error, Result};

/// Field metadata key naming the storage layout.
pub const STORAGE_LAYOUT: &str = "paimon.map.storage-layout";
/// Its value for this layout.
pub const SHARED_SHREDDING: &str = "shared-shredding";
const VERSION: &str = "paimon.map.shared-shredding.version";
const FIELD_DICT: &str = "paimon.map.shared-shredding.field-dict";
const FIELD_DICT_COMPRESSION: &str = "paimon.map.shared-shredding.field-dict-compression";
const FIELD_DICT_ORIGINAL_SIZE: &str = "paimon.map.shared-shredding.field-dict-original-size";
const NUM_COLUMNS: &str = "paimon.map.shared-shredding.num-columns";
/// Name of the per-row column → key id list.
pub const FIELD_MAPPING: &str = "__field_mapping";
/// Name of the overflow map.
pub const OVERFLOW: &str = "__overflow";
const COLUMN_PREFIX: &str = "__col_";

/// The layout of one shared-shredding MAP column of a file (Java
/// `MapSharedShreddingFieldMeta`, the parts a full read needs).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedMapLayout {
    /// Key name of each key id.
    pub names: HashMap<i32, String>,
    /// Number of physical value columns.
    pub num_columns: usize,
}

impl SharedMapLayout {
    /// The layout described by an Arrow field's metadata, `None` when the field is not stored
    /// shared-shredded.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming `path` for missing or malformed layout metadata;
    /// [`Error::Unsupported`] for another metadata version or dictionary compression.
    pub fn from_field(field: &Field, path: &str) -> Result<Option<Self>> {
        let m = field.metadata();
        if m.get(STORAGE_LAYOUT).map(String::as_str) != Some(SHARED_SHREDDING) {
            return Ok(None);
        }
        let corrupt = |why: String| {
            Error::corrupt(
                path,
                "data-file",
                format!("shared-shredding MAP column {}: {why}", field.name()),
            )
        };
        let required = |k: &str| {
            m.get(k)
                .ok_or_else(|| corrupt(format!("no {k} in the field metadata")))
        };
        let int = |k: &str| -> Result<usize> {
            required(k)?
                .parse()
                .map_err(|_| corrupt(format!("{k} is not a number")))
        };
        let version = int(VERSION)?;
        if version != 1 {
            return Err(Error::unsupported(format!(
                "shared-shredding MAP column {} of {path}: metadata version {version}",
                field.name()
            )));
        }
        let original = int(FIELD_DICT_ORIGINAL_SIZE)?;
        // A file without the key uses the default compression.
        let compression = m
            .get(FIELD_DICT_COMPRESSION)
            .map_or("zstd".to_string(), |c| c.to_ascii_lowercase());
        let stored: Vec<u8> = required(FIELD_DICT)?
            .chars()
            .map(|c| u8::try_from(u32::from(c)))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| corrupt("the field dictionary holds a non-ISO-8859-1 character".into()))?;
        let dict = match compression.as_str() {
            "none" => stored,
            "zstd" => zstd::bulk::decompress(&stored, original)
                .map_err(|e| corrupt(format!("zstd field dictionary: {e}")))?,
            "lz4" => {
                let body = stored.get(8..).ok_or_else(|| {
                    corrupt("lz4 field dictionary shorter than its header".into())
                })?;
                lz4_flex::block::decompress(body, original)
                    .map_err(|e| corrupt(format!("lz4 field dictionary: {e}")))?
            }
            other => {
                return Err(Error::unsupported(format!(
                    "shared-shredding MAP column {} of {path}: field dictionary compression {other}",
                    field.name()
                )));
            }
        };
        let by_name: BTreeMap<String, i32> =
            serde_json::from_slice(&dict).map_err(|e| corrupt(format!("field dictionary: {e}")))?;
        Ok(Some(SharedMapLayout {
            names: by_name.into_iter().map(|(n, id)| (id, n)).collect(),
            num_columns: int(NUM_COLUMNS)?,
        }))
    }

    /// The logical map of each row of the physical struct `column` (see the module docs):
    /// `Map(entries: Struct{key: Utf8 NOT NULL, value: V})` with `V` the Arrow type of the
    /// physical value columns; NULL rows stay NULL.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming `path` when the struct does not have the layout's children
    /// or a row's field mapping is malformed.
    pub fn assemble(&self, column: &ArrayRef, path: &str, name: &str) -> Result<ArrayRef> {
        let corrupt = |why: String| {
            Error::corrupt(
                path,
                "data-file",
                format!("shared-shredding MAP column {name}: {why}"),
            )
        };
        let s = column
            .as_struct_opt()
            .ok_or_else(|| corrupt(format!("stored as {}, not a ROW", column.data_type())))?;
        let child = |n: &str| s.column_by_name(n);
        let mapping = child(FIELD_MAPPING)
            .and_then(|c| c.as_list_opt::<i32>())
            .ok_or_else(|| corrupt(format!("no {FIELD_MAPPING} list")))?;
        let mapping_values = mapping
            .values()
            .as_primitive_opt::<Int32Type>()
            .ok_or_else(|| corrupt(format!("{FIELD_MAPPING} is not a list of INT")))?;
        let columns: Vec<&ArrayRef> = (0..self.num_columns)
            .map(|c| {
                child(&format!("{COLUMN_PREFIX}{c}"))
                    .ok_or_else(|| corrupt(format!("no physical column {COLUMN_PREFIX}{c}")))
            })
            .collect::<Result<_>>()?;
        let overflow = child(OVERFLOW).map(|o| {
            o.as_map_opt()
                .ok_or_else(|| corrupt(format!("{OVERFLOW} is not a MAP")))
        });
        let overflow = overflow.transpose()?;
        let value_type = match (columns.first(), overflow) {
            (Some(c), _) => c.data_type().clone(),
            (None, Some(o)) => o.values().data_type().clone(),
            (None, None) => return Err(corrupt("neither value columns nor overflow".into())),
        };
        // The sources of `interleave`: the value columns, then the overflow values.
        let mut sources: Vec<ArrayRef> = columns.iter().map(|c| Arc::clone(c)).collect();
        if let Some(o) = overflow {
            let values = if o.values().data_type() == &value_type {
                Arc::clone(o.values())
            } else {
                arrow_cast::cast(o.values(), &value_type).map_err(|e| {
                    corrupt(format!(
                        "overflow values do not match the value columns: {e}"
                    ))
                })?
            };
            sources.push(values);
        }
        let overflow_source = columns.len();
        let mut keys = StringBuilder::new();
        let mut picks: Vec<(usize, usize)> = Vec::new();
        let mut offsets: Vec<usize> = Vec::with_capacity(s.len());
        for row in 0..s.len() {
            if s.is_null(row) {
                offsets.push(0);
                continue;
            }
            let before = picks.len();
            if mapping.is_null(row) {
                return Err(corrupt(format!("row {row}: NULL {FIELD_MAPPING}")));
            }
            let range =
                mapping.value_offsets()[row] as usize..mapping.value_offsets()[row + 1] as usize;
            if range.len() != self.num_columns {
                return Err(corrupt(format!(
                    "row {row}: {FIELD_MAPPING} of {} entries for {} columns",
                    range.len(),
                    self.num_columns
                )));
            }
            for (c, i) in range.enumerate() {
                if mapping_values.is_null(i) {
                    return Err(corrupt(format!("row {row}: NULL in {FIELD_MAPPING}")));
                }
                let id = mapping_values.value(i);
                if let Some(key) = (id >= 0).then(|| self.names.get(&id)).flatten() {
                    keys.append_value(key);
                    picks.push((c, row));
                }
            }
            if let Some(o) = overflow.filter(|o| !o.is_null(row)) {
                let ids = o
                    .keys()
                    .as_primitive_opt::<Int32Type>()
                    .ok_or_else(|| corrupt(format!("{OVERFLOW} keys are not INT")))?;
                let o_offsets = o.value_offsets();
                for i in o_offsets[row] as usize..o_offsets[row + 1] as usize {
                    if ids.is_null(i) {
                        continue;
                    }
                    if let Some(key) = self.names.get(&ids.value(i)) {
                        keys.append_value(key);
                        picks.push((overflow_source, i));
                    }
                }
            }
            offsets.push(picks.len() - before);
        }
        let refs: Vec<&dyn Array> = sources.iter().map(|a| a.as_ref()).collect();
        let values = arrow_select::interleave::interleave(&refs, &picks)
            .map_err(|e| corrupt(format!("gathering map values: {e}")))?;
        let entry_fields = Fields::from(vec![
            Field::new("key", ArrowType::Utf8, false),
            Field::new("value", value_type, true),
        ]);
        let entries = StructArray::try_new(
            entry_fields.clone(),
            vec![Arc::new(keys.finish()) as ArrayRef, values],
            None,
        )
        .map_err(|e| corrupt(e.to_string()))?;
        let map = MapArray::try_new(
            Arc::new(Field::new(
                "entries",
                ArrowType::Struct(entry_fields),
                false,
            )),
            OffsetBuffer::from_lengths(offsets),
            entries,
            s.nulls().cloned(),
            false,
        )
        .map_err(|e| corrupt(e.to_string()))?;
        Ok(Arc::new(map))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
