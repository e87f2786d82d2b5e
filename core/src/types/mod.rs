//! Paimon type ⇄ Arrow type, and the casts that turn what a data file holds into exactly the
//! Arrow types of the read schema.
//!
//! Two jobs:
//!
//! * [`paimon_to_arrow_type`] / [`paimon_to_arrow_field`] / [`paimon_to_arrow_schema`] map a
//!   Paimon schema to Arrow exactly as pypaimon 2.1.0 does (`PyarrowFieldParser.from_paimon_type`),
//!   so that batches produced here compare equal to pypaimon's.
//! * [`cast_batch_to`] / [`cast_column_to`] convert a decoded batch (whatever physical Arrow
//!   types the Parquet, ORC or Avro decoder produced: dictionary arrays, large string variants,
//!   nanosecond ORC timestamps, `key_value` map entries...) into those exact types, including the
//!   schema-evolution conversions Paimon allows for a column whose type changed (INT→BIGINT,
//!   FLOAT→DOUBLE, DECIMAL rescale, anything→STRING...).
//!
//! Source: Java `org.apache.paimon.arrow.ArrowUtils` (type mapping) and
//! `org.apache.paimon.casting.CastExecutors` / `org.apache.paimon.schema.SchemaEvolutionUtil`
//! (which conversions are allowed); pypaimon `pypaimon/schema/data_types.py`.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, LargeListArray, ListArray, MapArray, RecordBatch,
    RecordBatchOptions, StructArray, new_null_array,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::{DataType as ArrowType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit};

use crate::error::{Error, Result};
use crate::spec::types::{DataField, DataType, TypeKind};

pub mod cast;

/// Name of the element field of an Arrow list (pyarrow and arrow-rs both use `item`).
pub const LIST_ITEM_NAME: &str = "item";
/// Name of the entries field of an Arrow map (pyarrow's `entries`).
pub const MAP_ENTRIES_NAME: &str = "entries";
/// Name of the key field inside map entries.
pub const MAP_KEY_NAME: &str = "key";
/// Name of the value field inside map entries.
pub const MAP_VALUE_NAME: &str = "value";

/// The Arrow time unit pypaimon uses for a timestamp of `precision` fraction digits:
/// 0 → seconds, 1..=3 → milliseconds, 4..=6 → microseconds, 7..=9 → nanoseconds.
pub fn timestamp_unit(precision: u32) -> TimeUnit {
    match precision {
        0 => TimeUnit::Second,
        1..=3 => TimeUnit::Millisecond,
        4..=6 => TimeUnit::Microsecond,
        _ => TimeUnit::Nanosecond,
    }
}

/// The Arrow type of a Paimon type, as pypaimon maps it.
///
/// | Paimon | Arrow |
/// |---|---|
/// | `BOOLEAN` | `Boolean` |
/// | `TINYINT`/`SMALLINT`/`INT`/`BIGINT` | `Int8`/`Int16`/`Int32`/`Int64` |
/// | `FLOAT`/`DOUBLE` | `Float32`/`Float64` |
/// | `DECIMAL(p, s)` | `Decimal128(p, s)` |
/// | `CHAR`/`VARCHAR`/`STRING` | `Utf8` |
/// | `BINARY`/`VARBINARY`/`BYTES` | `Binary` |
/// | `BLOB` | `LargeBinary` |
/// | `DATE` | `Date32` |
/// | `TIME(p)` | `Time32(Millisecond)` |
/// | `TIMESTAMP(p)` | `Timestamp(unit(p), None)`, see [`timestamp_unit`] |
/// | `TIMESTAMP_LTZ(p)` | `Timestamp(unit(p), "UTC")` |
/// | `ARRAY<e>` | `List(item: e)` |
/// | `MAP<k, v>` | `Map(entries: Struct{key: k NOT NULL, value: v}, unsorted)` |
/// | `MULTISET<e>` | `Map(entries: Struct{key: e NOT NULL, value: Int32 NOT NULL})` |
/// | `ROW<...>` | `Struct(...)` |
/// | `VARIANT` | `Struct{value: Binary NOT NULL, metadata: Binary NOT NULL}` |
/// | `VECTOR<e, n>` | `FixedSizeList(item: e, n)` |
///
/// Nullability of nested fields (list items, map values, struct fields) comes from the Paimon
/// types; the nullability of the outer type is the caller's (see [`paimon_to_arrow_field`]).
///
/// # Errors
/// [`Error::Unsupported`] for types kept as [`TypeKind::Other`] (GEOMETRY...) and for a
/// decimal precision/scale that does not fit `Decimal128`.
pub fn paimon_to_arrow_type(data_type: &DataType) -> Result<ArrowType> {
    Ok(match &data_type.kind {
        TypeKind::Boolean => ArrowType::Boolean,
        TypeKind::TinyInt => ArrowType::Int8,
        TypeKind::SmallInt => ArrowType::Int16,
        TypeKind::Int => ArrowType::Int32,
        TypeKind::BigInt => ArrowType::Int64,
        TypeKind::Float => ArrowType::Float32,
        TypeKind::Double => ArrowType::Float64,
        TypeKind::Decimal { precision, scale } => {
            let p = u8::try_from(*precision)
                .ok()
                .filter(|p| (1..=38).contains(p));
            let s = i8::try_from(*scale)
                .ok()
                .filter(|s| u32::from(s.unsigned_abs()) <= *precision);
            match (p, s) {
                (Some(p), Some(s)) => ArrowType::Decimal128(p, s),
                _ => {
                    return Err(Error::unsupported(format!(
                        "DECIMAL({precision}, {scale}) as an Arrow Decimal128"
                    )));
                }
            }
        }
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => ArrowType::Utf8,
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => ArrowType::Binary,
        TypeKind::Blob => ArrowType::LargeBinary,
        TypeKind::Date => ArrowType::Date32,
        TypeKind::Time { .. } => ArrowType::Time32(TimeUnit::Millisecond),
        TypeKind::Timestamp { precision } => ArrowType::Timestamp(timestamp_unit(*precision), None),
        TypeKind::LocalZonedTimestamp { precision } => {
            ArrowType::Timestamp(timestamp_unit(*precision), Some("UTC".into()))
        }
        TypeKind::Variant => ArrowType::Struct(Fields::from(vec![
            Field::new("value", ArrowType::Binary, false),
            Field::new("metadata", ArrowType::Binary, false),
        ])),
        TypeKind::Array(element) => ArrowType::List(Arc::new(Field::new(
            LIST_ITEM_NAME,
            paimon_to_arrow_type(element)?,
            element.nullable,
        ))),
        TypeKind::Vector { element, length } => {
            let length = i32::try_from(*length).map_err(|_| {
                Error::unsupported(format!(
                    "VECTOR of length {length} as an Arrow FixedSizeList"
                ))
            })?;
            ArrowType::FixedSizeList(
                Arc::new(Field::new(
                    LIST_ITEM_NAME,
                    paimon_to_arrow_type(element)?,
                    element.nullable,
                )),
                length,
            )
        }
        TypeKind::Map(key, value) => map_type(
            paimon_to_arrow_type(key)?,
            paimon_to_arrow_type(value)?,
            value.nullable,
        ),
        TypeKind::Multiset(element) => {
            map_type(paimon_to_arrow_type(element)?, ArrowType::Int32, false)
        }
        TypeKind::Row(fields) => ArrowType::Struct(
            fields
                .iter()
                .map(paimon_to_arrow_field)
                .collect::<Result<Vec<_>>>()?
                .into(),
        ),
        TypeKind::Other(sql) => {
            return Err(Error::unsupported(format!("reading columns of type {sql}")));
        }
    })
}

fn map_type(key: ArrowType, value: ArrowType, value_nullable: bool) -> ArrowType {
    ArrowType::Map(
        Arc::new(Field::new(
            MAP_ENTRIES_NAME,
            ArrowType::Struct(Fields::from(vec![
                Field::new(MAP_KEY_NAME, key, false),
                Field::new(MAP_VALUE_NAME, value, value_nullable),
            ])),
            false,
        )),
        false,
    )
}

/// The Arrow field of a Paimon field: its name, [`paimon_to_arrow_type`] and the nullability of
/// its type. No field metadata is attached (pypaimon only adds `description`; ids are not
/// carried in Arrow schemas).
///
/// # Errors
/// As [`paimon_to_arrow_type`].
pub fn paimon_to_arrow_field(field: &DataField) -> Result<Field> {
    Ok(Field::new(
        field.name.clone(),
        paimon_to_arrow_type(&field.data_type)?,
        field.data_type.nullable,
    ))
}

/// The Arrow schema of a list of Paimon fields (a table schema or a projection of it), fields in
/// the given order.
///
/// # Errors
/// As [`paimon_to_arrow_type`].
pub fn paimon_to_arrow_schema(fields: &[DataField]) -> Result<SchemaRef> {
    Ok(Arc::new(Schema::new(
        fields
            .iter()
            .map(paimon_to_arrow_field)
            .collect::<Result<Vec<_>>>()?,
    )))
}

/// Convert `batch` (columns as decoded from a data file) into exactly `target`.
///
/// Columns are matched **by position**: column `i` of `batch` becomes field `i` of `target`
/// (name, type and nullability of the target field; the caller has already resolved file columns
/// to table fields by field id, and renames are applied here). Each column goes through
/// [`cast_column_to`].
///
/// # Errors
/// * [`Error::Invalid`] if the column counts differ.
/// * [`Error::Corrupt`] (format `data-file`) naming `file_path` and the column when a column
///   cannot be converted (a type the schema does not allow, an overflow of a narrowing cast, a
///   NULL in a `NOT NULL` column).
pub fn cast_batch_to(
    batch: &RecordBatch,
    target: &SchemaRef,
    file_path: &str,
) -> Result<RecordBatch> {
    if batch.num_columns() != target.fields().len() {
        return Err(Error::invalid(format!(
            "reading {file_path}: {} decoded columns for a read schema of {} fields",
            batch.num_columns(),
            target.fields().len()
        )));
    }
    let columns = batch
        .columns()
        .iter()
        .zip(target.fields())
        .map(|(column, field)| cast_column_to(column, field, file_path))
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(Arc::clone(target), columns, &options).map_err(|e| {
        Error::corrupt(
            file_path,
            "data-file",
            format!("batch does not match the read schema: {e}"),
        )
    })
}

/// Convert one decoded column into `target`'s Arrow type (see the module docs for what may be
/// converted), checking `target`'s nullability.
///
/// Allowed conversions (everything else is an error):
/// * identical types; dictionary-encoded arrays (unpacked first); `Null` arrays (all NULL);
/// * any of `Utf8`/`LargeUtf8`/`Utf8View` to each other, any binary flavour (incl.
///   `FixedSizeBinary`) to `Binary`/`LargeBinary`, binary to string (UTF-8 checked);
/// * numeric ⇄ numeric, decimal and boolean (Paimon's numeric primitive, decimal and
///   boolean rules; a narrowing cast that overflows is an error, unlike Java which wraps);
/// * integer, decimal, boolean and date to string; string to numeric, decimal, boolean,
///   date, time, timestamp and binary;
/// * timestamp to timestamp (any unit, with or without time zone: the stored instant is kept),
///   timestamp to date and time, date to timestamp, time to time, `Date64` to `Date32`;
/// * `List`/`LargeList`/`FixedSizeList` to `List`/`FixedSizeList`, `Map` to `Map` and
///   `Struct` to `Struct`, converting children recursively. Struct children are matched by name;
///   a target child missing from the file reads as NULL. Map entries are matched by position
///   (key, value), whatever the file names them. A `List` of two-field structs converts to a
///   `Map` (Java's Avro writer stores maps with non-string keys as arrays of `{key, value}`
///   records).
///
/// # Errors
/// [`Error::Corrupt`] (format `data-file`) naming `file_path`, the column and both types.
pub fn cast_column_to(column: &ArrayRef, target: &Field, file_path: &str) -> Result<ArrayRef> {
    let out = cast_array(column, target.data_type()).map_err(|reason| {
        column_error(
            file_path,
            target.name(),
            column.data_type(),
            target,
            &reason,
        )
    })?;
    if !target.is_nullable() && out.null_count() > 0 {
        return Err(Error::corrupt(
            file_path,
            "data-file",
            format!(
                "column {}: {} NULL value(s) in a NOT NULL column",
                target.name(),
                out.null_count()
            ),
        ));
    }
    Ok(out)
}

fn column_error(path: &str, name: &str, from: &ArrowType, to: &Field, reason: &str) -> Error {
    Error::corrupt(
        path,
        "data-file",
        format!(
            "column {name}: cannot read file type {from} as {}: {reason}",
            to.data_type()
        ),
    )
}

type CastResult = std::result::Result<ArrayRef, String>;

fn cast_array(array: &ArrayRef, to: &ArrowType) -> CastResult {
    let from = array.data_type();
    if from == to {
        return Ok(Arc::clone(array));
    }
    match (from, to) {
        (ArrowType::Null, _) => Ok(new_null_array(to, array.len())),
        (ArrowType::Dictionary(_, values), _) => {
            let plain = arrow_cast(array, values)?;
            cast_array(&plain, to)
        }
        (ArrowType::Struct(_), ArrowType::Struct(to_fields)) => {
            cast_struct(array, to_fields, false)
        }
        (
            ArrowType::List(_) | ArrowType::LargeList(_) | ArrowType::FixedSizeList(..),
            ArrowType::List(to_item),
        ) => cast_list(array, to_item),
        (
            ArrowType::List(_) | ArrowType::LargeList(_) | ArrowType::FixedSizeList(..),
            ArrowType::FixedSizeList(to_item, size),
        ) => {
            let list_type = ArrowType::List(Arc::clone(to_item));
            let as_list = cast_list(array, to_item)?;
            if &list_type == to {
                return Ok(as_list);
            }
            let fixed = arrow_cast(&as_list, to)?;
            if fixed.len() != array.len() {
                return Err(format!("lists are not all of length {size}"));
            }
            Ok(fixed)
        }
        (ArrowType::Map(..), ArrowType::Map(to_entries, sorted)) => {
            cast_map(array, to_entries, *sorted)
        }
        // Java's Avro writer stores a MAP whose key is not a string as an array of
        // `{key, value}` records.
        (ArrowType::List(item), ArrowType::Map(to_entries, sorted)) if matches!(item.data_type(), ArrowType::Struct(f) if f.len() == 2) => {
            list_of_pairs_to_map(array, to_entries, *sorted)
        }
        _ if primitive_cast_allowed(from, to) => arrow_cast(array, to),
        _ => Err("conversion not allowed".to_string()),
    }
}

fn arrow_cast(array: &ArrayRef, to: &ArrowType) -> CastResult {
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(array, to, &options).map_err(|e| e.to_string())
}

fn is_integer(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Int8
            | ArrowType::Int16
            | ArrowType::Int32
            | ArrowType::Int64
            | ArrowType::UInt8
            | ArrowType::UInt16
            | ArrowType::UInt32
            | ArrowType::UInt64
    )
}

fn is_numeric(t: &ArrowType) -> bool {
    is_integer(t)
        || matches!(
            t,
            ArrowType::Float16
                | ArrowType::Float32
                | ArrowType::Float64
                | ArrowType::Decimal32(..)
                | ArrowType::Decimal64(..)
                | ArrowType::Decimal128(..)
                | ArrowType::Decimal256(..)
        )
}

fn is_decimal(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Decimal32(..)
            | ArrowType::Decimal64(..)
            | ArrowType::Decimal128(..)
            | ArrowType::Decimal256(..)
    )
}

fn is_string(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View
    )
}

fn is_binary(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Binary
            | ArrowType::LargeBinary
            | ArrowType::BinaryView
            | ArrowType::FixedSizeBinary(_)
    )
}

fn is_time(t: &ArrowType) -> bool {
    matches!(t, ArrowType::Time32(_) | ArrowType::Time64(_))
}

fn is_date(t: &ArrowType) -> bool {
    matches!(t, ArrowType::Date32 | ArrowType::Date64)
}

fn primitive_cast_allowed(from: &ArrowType, to: &ArrowType) -> bool {
    let numeric_like = |t: &ArrowType| is_numeric(t) || matches!(t, ArrowType::Boolean);
    (numeric_like(from) && numeric_like(to))
        || (is_string(from) && is_string(to))
        || (is_binary(from) && matches!(to, ArrowType::Binary | ArrowType::LargeBinary))
        || (is_binary(from) && is_string(to))
        || (is_string(to)
            && (is_integer(from)
                || is_decimal(from)
                || is_date(from)
                || matches!(from, ArrowType::Boolean)))
        || (is_string(from)
            && (numeric_like(to)
                || is_date(to)
                || is_time(to)
                || matches!(
                    to,
                    ArrowType::Timestamp(..) | ArrowType::Binary | ArrowType::LargeBinary
                )))
        || (matches!(from, ArrowType::Timestamp(..))
            && (matches!(to, ArrowType::Timestamp(..)) || is_date(to) || is_time(to)))
        || (is_date(from) && matches!(to, ArrowType::Timestamp(..) | ArrowType::Date32))
        || (is_time(from) && is_time(to))
        // ORC has no TIME type: pyarrow and Java write TIME as INT (milliseconds of the day).
        || (matches!(from, ArrowType::Int32) && matches!(to, ArrowType::Time32(TimeUnit::Millisecond)))
}

fn cast_struct(array: &ArrayRef, to_fields: &Fields, by_position: bool) -> CastResult {
    let Some(s) = array.as_any().downcast_ref::<StructArray>() else {
        return Err("not a struct array".to_string());
    };
    let ArrowType::Struct(from_fields) = s.data_type() else {
        return Err("not a struct array".to_string());
    };
    let mut children = Vec::with_capacity(to_fields.len());
    for (i, to_field) in to_fields.iter().enumerate() {
        let source = if by_position {
            Some(i).filter(|i| *i < from_fields.len())
        } else {
            from_fields.iter().position(|f| f.name() == to_field.name())
        };
        let child = match source {
            Some(j) => cast_array(s.column(j), to_field.data_type())
                .map_err(|e| format!("field {}: {e}", to_field.name()))?,
            None if to_field.is_nullable() => new_null_array(to_field.data_type(), s.len()),
            None => return Err(format!("NOT NULL field {} is missing", to_field.name())),
        };
        children.push(child);
    }
    if by_position && from_fields.len() != to_fields.len() {
        return Err(format!(
            "{} fields where {} are expected",
            from_fields.len(),
            to_fields.len()
        ));
    }
    let out =
        StructArray::try_new_with_length(to_fields.clone(), children, s.nulls().cloned(), s.len())
            .map_err(|e| e.to_string())?;
    Ok(Arc::new(out))
}

fn cast_list(array: &ArrayRef, to_item: &FieldRef) -> CastResult {
    let any = array.as_any();
    let (offsets, values, nulls) = if let Some(l) = any.downcast_ref::<ListArray>() {
        (
            l.offsets().clone(),
            Arc::clone(l.values()),
            l.nulls().cloned(),
        )
    } else if let Some(l) = any.downcast_ref::<LargeListArray>() {
        let converted = l
            .offsets()
            .iter()
            .map(|o| i32::try_from(*o).map_err(|_| format!("list offset {o} exceeds i32")))
            .collect::<std::result::Result<Vec<i32>, String>>()?;
        (
            OffsetBuffer::new(ScalarBuffer::from(converted)),
            Arc::clone(l.values()),
            l.nulls().cloned(),
        )
    } else if let Some(l) = any.downcast_ref::<FixedSizeListArray>() {
        let size = usize::try_from(l.value_length()).map_err(|e| e.to_string())?;
        let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(size, l.len()));
        // A FixedSizeList's values may start at an offset when it was sliced.
        let start = l.value_offset(0);
        let start = usize::try_from(start).map_err(|e| e.to_string())?;
        let total = size.checked_mul(l.len()).ok_or("list too long")?;
        (offsets, l.values().slice(start, total), l.nulls().cloned())
    } else {
        return Err("not a list array".to_string());
    };
    let values =
        cast_array(&values, to_item.data_type()).map_err(|e| format!("list element: {e}"))?;
    let out = ListArray::try_new(Arc::clone(to_item), offsets, values, nulls)
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(out))
}

fn cast_map(array: &ArrayRef, to_entries: &FieldRef, sorted: bool) -> CastResult {
    let Some(m) = array.as_any().downcast_ref::<MapArray>() else {
        return Err("not a map array".to_string());
    };
    let ArrowType::Struct(to_kv) = to_entries.data_type() else {
        return Err("map entries are not a struct".to_string());
    };
    let entries: ArrayRef = Arc::new(m.entries().clone());
    let entries = cast_struct(&entries, to_kv, true).map_err(|e| format!("map entries: {e}"))?;
    let Some(entries) = entries.as_any().downcast_ref::<StructArray>() else {
        return Err("map entries are not a struct".to_string());
    };
    let out = MapArray::try_new(
        Arc::clone(to_entries),
        m.offsets().clone(),
        entries.clone(),
        m.nulls().cloned(),
        sorted,
    )
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(out))
}

fn list_of_pairs_to_map(array: &ArrayRef, to_entries: &FieldRef, sorted: bool) -> CastResult {
    let Some(l) = array.as_any().downcast_ref::<ListArray>() else {
        return Err("not a list array".to_string());
    };
    let ArrowType::Struct(to_kv) = to_entries.data_type() else {
        return Err("map entries are not a struct".to_string());
    };
    let entries = cast_struct(l.values(), to_kv, true).map_err(|e| format!("map entries: {e}"))?;
    let Some(entries) = entries.as_any().downcast_ref::<StructArray>() else {
        return Err("map entries are not a struct".to_string());
    };
    if entries.null_count() > 0 {
        return Err("NULL map entry".to_string());
    }
    // Map entries carry no validity of their own.
    let (fields, columns, _) = entries.clone().into_parts();
    let entries = StructArray::try_new(fields, columns, None).map_err(|e| e.to_string())?;
    let out = MapArray::try_new(
        Arc::clone(to_entries),
        l.offsets().clone(),
        entries,
        l.nulls().cloned(),
        sorted,
    )
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
