//! Java Paimon's cast rules: which cast a column type change may use, and the values a read
//! of a file written before the change returns, character for character as Java reads them.
//!
//! * [`resolve_rule`] picks the [`CastRule`] Java's `CastExecutors.resolve` picks (the same
//!   lookup: the exact target type, then its root, then its families, each against the input's
//!   root and then its families; a later rule replaces an earlier one for the same pair).
//! * [`has_cast_executor`] is Java's `CastExecutors.resolve(..) != null`: the rule exists and
//!   builds an executor for these types (`NumericPrimitiveToTimestamp` only does `INT` and
//!   `BIGINT`). `ALTER TABLE` accepts a type change only then (with
//!   `DataTypeCasts.supportsCast`), and a read of older files then applies that executor.
//! * [`evolve_column`] converts a decoded column from the type the file was written with to the
//!   read type, as Java's `SchemaEvolutionUtil.createCastExecutor` does: `ROW` fields matched
//!   by field id, `ARRAY` elements and `MAP` values converted recursively, anything else
//!   through the resolved rule.
//!
//! Values follow Java exactly: integer narrowing wraps (`(byte) 300` is `44`), floating to
//! integer saturates first (`(int) 1e10` is `2147483647`), decimals round `HALF_UP` and a value
//! that no longer fits the target precision reads as `NULL`, strings parse with
//! `BinaryStringUtils` (no trimming for integers, `Float.parseFloat` for floats), timestamps
//! format with `DateTimeUtils.formatTimestamp`, and `CHAR(n)`/`VARCHAR(n)` targets truncate or
//! pad. Java's "default time zone" (`TIMESTAMP WITH LOCAL TIME ZONE` to and from other types)
//! is UTC here: the core takes no time zone from its host.
//!
//! Source: Java `org.apache.paimon.casting.CastExecutors` and its `*CastRule` classes,
//! `org.apache.paimon.utils.{BinaryStringUtils, DateTimeUtils, DecimalUtils}`,
//! `org.apache.paimon.schema.SchemaEvolutionUtil` (release-2.0.0).

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder,
    Float64Builder, Int8Builder, Int16Builder, Int32Builder, Int64Builder, StringBuilder,
    Time32MillisecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, ListArray, MapArray, PrimitiveArray, StructArray, new_null_array,
};
use arrow_schema::{DataType as ArrowType, Field, TimeUnit};

use crate::error::{Error, Result};
use crate::spec::binary_row::{
    civil_from_days, decimal_to_plain_string, java_double_to_string, java_float_to_string,
};
use crate::spec::types::{DataType, MAX_LENGTH, TypeKind};
use crate::types::{paimon_to_arrow_type, timestamp_unit};

const MILLIS_PER_DAY: i64 = 86_400_000;

mod execute;
mod rule;
mod text;
mod value;

use execute::*;
pub use rule::{CastRule, evolution_supported, has_cast_executor, resolve_rule};
use text::*;
use value::*;

// ---------------------------------------------------------------------------------------------
// Reading with a changed column type
// ---------------------------------------------------------------------------------------------

/// Why a cast failed.
#[derive(Debug)]
enum Failure {
    /// No rule, or one this crate does not run: `Unsupported`.
    Unsupported(String),
    /// A value Java's executor rejects too (a string that is not a number...): `Invalid`.
    Value(String),
}

type CastOutcome<T> = std::result::Result<T, Failure>;

/// Convert `column`, decoded from a data file whose schema gives the column type `file_type`,
/// to the read type `read_type` and then exactly to `target` (the Arrow field of the read
/// field: [`crate::types::paimon_to_arrow_field`]), as Java reads a column whose type changed
/// since the file was written (`SchemaEvolutionUtil.createCastExecutor`): see the module docs.
/// When both types are equal (up to nullability) this is [`crate::types::cast_column_to`].
///
/// # Errors
/// * [`Error::Unsupported`] naming `path`, the column and both types when Java has no cast
///   executor for the change, or it is one this crate does not run (see
///   [`evolution_supported`]).
/// * [`Error::Invalid`] naming `path`, the column and the value when Java's executor rejects a
///   value as well (e.g. `'abc'` read as `INT`).
/// * As [`crate::types::cast_column_to`] for the decoded column itself.
pub fn evolve_column(
    column: &ArrayRef,
    file_type: &DataType,
    read_type: &DataType,
    target: &Field,
    path: &str,
) -> Result<ArrayRef> {
    if file_type.kind == read_type.kind {
        return crate::types::cast_column_to(column, target, path);
    }
    let file_arrow = paimon_to_arrow_type(file_type)?;
    let normalized =
        crate::types::cast_column_to(column, &Field::new(target.name(), file_arrow, true), path)?;
    let evolved = evolve(&normalized, file_type, read_type).map_err(|f| match f {
        Failure::Unsupported(why) => Error::unsupported(format!(
            "reading {path}: column {} changed type from {file_type} to {read_type}: {why}",
            target.name()
        )),
        Failure::Value(why) => Error::invalid(format!(
            "reading {path}: column {} ({file_type} in the file) as {read_type}: {why}",
            target.name()
        )),
    })?;
    crate::types::cast_column_to(&evolved, target, path)
}

fn evolve(array: &ArrayRef, from: &DataType, to: &DataType) -> CastOutcome<ArrayRef> {
    if from.kind == to.kind {
        return Ok(Arc::clone(array));
    }
    let to_arrow = paimon_to_arrow_type(to).map_err(|e| Failure::Unsupported(e.to_string()))?;
    match (&from.kind, &to.kind) {
        (TypeKind::Row(from_fields), TypeKind::Row(to_fields)) => {
            let s = array
                .as_struct_opt()
                .ok_or_else(|| not_as(array, "a ROW"))?;
            let ArrowType::Struct(arrow_fields) = &to_arrow else {
                return Err(not_as(array, "a ROW"));
            };
            let mut children = Vec::with_capacity(to_fields.len());
            for (to_field, arrow_field) in to_fields.iter().zip(arrow_fields.iter()) {
                let child = match from_fields.iter().position(|f| f.id == to_field.id) {
                    Some(i) => evolve(s.column(i), &from_fields[i].data_type, &to_field.data_type)
                        .map_err(|f| nested(f, &format!("field {}", to_field.name)))?,
                    None => new_null_array(arrow_field.data_type(), s.len()),
                };
                children.push(child);
            }
            let out = StructArray::try_new_with_length(
                arrow_fields.clone(),
                children,
                s.nulls().cloned(),
                s.len(),
            )
            .map_err(|e| Failure::Value(e.to_string()))?;
            Ok(Arc::new(out))
        }
        (TypeKind::Array(from_elem), TypeKind::Array(to_elem)) => {
            let l = array
                .as_list_opt::<i32>()
                .ok_or_else(|| not_as(array, "an ARRAY"))?;
            let ArrowType::List(item) = &to_arrow else {
                return Err(not_as(array, "an ARRAY"));
            };
            let values =
                evolve(l.values(), from_elem, to_elem).map_err(|f| nested(f, "element"))?;
            let out = ListArray::try_new(
                Arc::clone(item),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )
            .map_err(|e| Failure::Value(e.to_string()))?;
            Ok(Arc::new(out))
        }
        (TypeKind::Map(from_key, from_value), TypeKind::Map(to_key, to_value)) => {
            if from_key != to_key {
                return Err(Failure::Unsupported(format!(
                    "map keys changed type from {from_key} to {to_key} (Java casts map values only)"
                )));
            }
            let m = array.as_map_opt().ok_or_else(|| not_as(array, "a MAP"))?;
            let ArrowType::Map(entries_field, sorted) = &to_arrow else {
                return Err(not_as(array, "a MAP"));
            };
            let ArrowType::Struct(kv) = entries_field.data_type() else {
                return Err(not_as(array, "a MAP"));
            };
            let values =
                evolve(m.values(), from_value, to_value).map_err(|f| nested(f, "map value"))?;
            let entries =
                StructArray::try_new(kv.clone(), vec![Arc::clone(m.keys()), values], None)
                    .map_err(|e| Failure::Value(e.to_string()))?;
            let out = MapArray::try_new(
                Arc::clone(entries_field),
                m.offsets().clone(),
                entries,
                m.nulls().cloned(),
                *sorted,
            )
            .map_err(|e| Failure::Value(e.to_string()))?;
            Ok(Arc::new(out))
        }
        _ => cast_by_rule(array, from, to),
    }
}

fn not_as(array: &ArrayRef, what: &str) -> Failure {
    Failure::Value(format!(
        "decoded values of Arrow type {} cannot be read as {what}",
        array.data_type()
    ))
}

fn nested(f: Failure, at: &str) -> Failure {
    match f {
        Failure::Unsupported(m) => Failure::Unsupported(format!("{at}: {m}")),
        Failure::Value(m) => Failure::Value(format!("{at}: {m}")),
    }
}

/// Apply Java's resolved rule to every value of `array` (of the Arrow type of `from`).
fn cast_by_rule(array: &ArrayRef, from: &DataType, to: &DataType) -> CastOutcome<ArrayRef> {
    let Some(rule) = resolve_rule(from, to) else {
        return Err(Failure::Unsupported(
            "Java has no cast rule for it (CastExecutors)".to_string(),
        ));
    };
    if !has_cast_executor(from, to) {
        return Err(Failure::Unsupported(format!(
            "Java's {rule:?} rule has no executor for these types"
        )));
    }
    if !evolution_supported(from, to) {
        return Err(Failure::Unsupported(format!(
            "Java's {rule:?} rule is not implemented by this reader"
        )));
    }
    let len = array.len();
    let mut out = Vec::with_capacity(len);
    match rule {
        CastRule::ArrayToString | CastRule::MapToString | CastRule::RowToString => {
            for row in 0..len {
                out.push(java_string_at(array.as_ref(), from, row)?.map(Value::Str));
            }
        }
        _ => {
            for row in 0..len {
                let v = match value_at(array.as_ref(), from, row)? {
                    None => None,
                    Some(v) => cast_value(v, from, to, rule)?,
                };
                out.push(v);
            }
        }
    }
    build(out, to)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
