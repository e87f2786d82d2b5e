//! The entry order of the MAP (and MULTISET) values Java's Avro reader returns.
//!
//! Java reads an Avro map into a `java.util.HashMap` and wraps it in a `GenericMap`, so its
//! entries come out in that hash map's iteration order, not in the order they are stored:
//! a map with `CHAR`/`VARCHAR` keys is an Avro `map` (`MapReader`), one with other keys an Avro
//! array of `{key, value}` records (`ArrayMapReader`); only an Avro `map` whose values are
//! `CHAR`/`VARCHAR` keeps the stored order (`StringMapReader`, `AvroBytesStringMap`). The order
//! shows in every read of such a column and in its value after a cast to STRING
//! (`{k2 -> v, k1 -> v}`), so [`java_entry_order`] puts the entries of each decoded map in
//! that order.
//!
//! A `java.util.HashMap` filled by `put` in stored order iterates by bucket (`(h ^ h >>> 16) &
//! (capacity - 1)`, `h` the key's `hashCode`), and within a bucket in insertion order; the
//! capacity starts at 16 and doubles when the size exceeds 3/4 of it, or when a bucket would
//! hold a 9th entry while the capacity is below 64. Key hash codes, as Java's key objects
//! have them: `BinaryString` (CHAR/VARCHAR): Murmur3 of the UTF-8 bytes
//! ([`crate::spec::murmur::hash_bytes`]); `Boolean`: 1231 / 1237; `Byte`, `Short`,
//! `Integer` (also DATE, TIME): the value; `Long`: `(int) (v ^ v >>> 32)`; `Float` /
//! `Double`: of their bits (NaN canonical); `Decimal`: `BigDecimal#hashCode`; `Timestamp`:
//! `31 * ((int) ms ^ (int) (ms >> 32)) + nanosOfMilli`. Keys of other types (BINARY and
//! VARBINARY are `byte[]`, hashed by identity) have no reproducible Java order: their maps
//! keep the stored order. Not modelled: a bucket of 9+ colliding keys at capacity ≥ 64, which
//! Java turns into a tree (its iteration then starts at the tree's root); keys stored twice
//! in one map (Paimon's writers never store them).
//!
//! Source: Java `org.apache.paimon.format.avro.FieldReaderFactory` (`MapReader`,
//! `ArrayMapReader`, `StringMapReader`), `AvroSchemaConverter#isArrayMap`,
//! `org.apache.paimon.data.GenericMap`, `java.util.HashMap#putVal` / `resize` / `treeifyBin`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, ListArray, MapArray, StructArray, UInt32Array};
use arrow_schema::{ArrowError, DataType as ArrowType, TimeUnit};

use crate::spec::murmur::hash_bytes;
use crate::spec::types::{DataType, TypeKind};

/// Whether a column of type `t` read from Avro holds maps whose entries Java reorders.
pub fn reorders(t: &DataType) -> bool {
    match &t.kind {
        TypeKind::Map(k, v) => {
            (!(is_string(k) && is_string(v)) && key_hashable(k)) || reorders(k) || reorders(v)
        }
        TypeKind::Multiset(e) => key_hashable(e) || reorders(e),
        TypeKind::Array(e) => reorders(e),
        TypeKind::Vector { element, .. } => reorders(element),
        TypeKind::Row(fields) => fields.iter().any(|f| reorders(&f.data_type)),
        _ => false,
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t.kind, TypeKind::Char { .. } | TypeKind::VarChar { .. })
}

/// Key types whose Java hash code is a function of the value.
fn key_hashable(t: &DataType) -> bool {
    matches!(
        t.kind,
        TypeKind::Char { .. }
            | TypeKind::VarChar { .. }
            | TypeKind::Boolean
            | TypeKind::TinyInt
            | TypeKind::SmallInt
            | TypeKind::Int
            | TypeKind::BigInt
            | TypeKind::Float
            | TypeKind::Double
            | TypeKind::Decimal { .. }
            | TypeKind::Date
            | TypeKind::Time { .. }
            | TypeKind::Timestamp { .. }
            | TypeKind::LocalZonedTimestamp { .. }
    )
}

/// `array` (a column of type `t` as the Avro reader decoded it: a map as `Map` or as a `List`
/// of `{key, value}` structs) with the entries of every map in Java's order (module docs).
///
/// # Errors
/// An [`ArrowError`] when the decoded shape does not match `t` (a bug of the caller).
pub fn java_entry_order(array: &ArrayRef, t: &DataType) -> Result<ArrayRef, ArrowError> {
    if !reorders(t) {
        return Ok(Arc::clone(array));
    }
    match (&t.kind, array.data_type()) {
        (TypeKind::Map(k, v), _) => {
            let reorder = !(is_string(k) && is_string(v)) && key_hashable(k);
            map_entries(array, k, v, reorder)
        }
        (TypeKind::Multiset(e), _) => {
            let int = DataType {
                kind: TypeKind::Int,
                nullable: false,
            };
            map_entries(array, e, &int, key_hashable(e))
        }
        (TypeKind::Array(e), ArrowType::List(item))
        | (TypeKind::Vector { element: e, .. }, ArrowType::List(item)) => {
            let l = array.as_list::<i32>();
            let values = java_entry_order(l.values(), e)?;
            let item = Arc::new(
                item.as_ref()
                    .clone()
                    .with_data_type(values.data_type().clone()),
            );
            Ok(Arc::new(ListArray::try_new(
                item,
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?))
        }
        (TypeKind::Row(fields), ArrowType::Struct(arrow_fields)) => {
            let s = array.as_struct();
            let columns = arrow_fields
                .iter()
                .zip(s.columns())
                .map(
                    |(af, c)| match fields.iter().find(|f| &f.name == af.name()) {
                        Some(f) => java_entry_order(c, &f.data_type),
                        None => Ok(Arc::clone(c)),
                    },
                )
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Arc::new(StructArray::try_new(
                arrow_fields.clone(),
                columns,
                s.nulls().cloned(),
            )?))
        }
        _ => Ok(Arc::clone(array)),
    }
}

/// A map column (`Map` or `List<Struct<key, value>>`): nested maps of keys and values put in
/// Java's order, then, when `reorder`, the entries of each map.
fn map_entries(
    array: &ArrayRef,
    key: &DataType,
    value: &DataType,
    reorder: bool,
) -> Result<ArrayRef, ArrowError> {
    let (offsets, entries) = match array.data_type() {
        ArrowType::Map(..) => {
            let m = array.as_map();
            (m.offsets().clone(), m.entries().clone())
        }
        ArrowType::List(_) => {
            let l = array.as_list::<i32>();
            (l.offsets().clone(), l.values().as_struct().clone())
        }
        other => {
            return Err(ArrowError::InvalidArgumentError(format!(
                "an Avro map decoded as {other}"
            )));
        }
    };
    if entries.num_columns() != 2 {
        return Err(ArrowError::InvalidArgumentError(format!(
            "an Avro map entry of {} fields",
            entries.num_columns()
        )));
    }
    let keys = java_entry_order(entries.column(0), key)?;
    let values = java_entry_order(entries.column(1), value)?;
    let mut entries = StructArray::try_new(
        entries.fields().clone(),
        vec![keys, values],
        entries.nulls().cloned(),
    )?;
    if reorder {
        let mut take = Vec::with_capacity(entries.len());
        let mut hashes = Vec::new();
        for w in offsets.windows(2) {
            let (start, end) = (w[0] as usize, w[1] as usize);
            hashes.clear();
            for i in start..end {
                match key_hash(entries.column(0), i, key) {
                    Some(h) => hashes.push(h),
                    None => break,
                }
            }
            if hashes.len() == end - start {
                take.extend(
                    hash_map_order(&hashes)
                        .into_iter()
                        .map(|i| (start + i) as u32),
                );
            } else {
                take.extend(start as u32..end as u32);
            }
        }
        let indices = UInt32Array::from(take);
        entries = arrow_select::take::take(&entries, &indices, None)?
            .as_struct()
            .clone();
    }
    let entries_type = entries.data_type().clone();
    Ok(match array.data_type() {
        ArrowType::Map(field, sorted) => {
            let field = Arc::new(field.as_ref().clone().with_data_type(entries_type));
            let nulls = array.as_map().nulls().cloned();
            Arc::new(MapArray::try_new(field, offsets, entries, nulls, *sorted)?)
        }
        ArrowType::List(item) => {
            let item = Arc::new(item.as_ref().clone().with_data_type(entries_type));
            let nulls = array.as_list::<i32>().nulls().cloned();
            Arc::new(ListArray::try_new(item, offsets, Arc::new(entries), nulls)?)
        }
        other => {
            return Err(ArrowError::InvalidArgumentError(format!(
                "an Avro map decoded as {other}"
            )));
        }
    })
}

/// The positions of keys with Java hash codes `hashes` (inserted in this order) in the
/// iteration order of a `java.util.HashMap` (module docs).
pub fn hash_map_order(hashes: &[i32]) -> Vec<usize> {
    let spread = |h: i32| {
        let h = h as u32;
        (h ^ (h >> 16)) as usize
    };
    let mut capacity = 16usize;
    let mut counts = vec![0usize; capacity];
    let recount = |capacity: usize, inserted: &[i32]| {
        let mut counts = vec![0usize; capacity];
        for h in inserted {
            counts[spread(*h) & (capacity - 1)] += 1;
        }
        counts
    };
    for (i, h) in hashes.iter().enumerate() {
        let bucket = spread(*h) & (capacity - 1);
        let before = counts[bucket];
        counts[bucket] += 1;
        // `treeifyBin` of a small table resizes it instead.
        if before >= 8 && capacity < 64 {
            capacity *= 2;
            counts = recount(capacity, &hashes[..=i]);
        }
        if i + 1 > capacity / 4 * 3 {
            capacity *= 2;
            counts = recount(capacity, &hashes[..=i]);
        }
    }
    let mut order: Vec<usize> = (0..hashes.len()).collect();
    order.sort_by_key(|&i| spread(hashes[i]) & (capacity - 1));
    order
}

/// Java's `hashCode` of the key object of entry `i` of `keys` (a key of type `t`); `None`
/// where it has no reproducible value. A NULL key hashes to 0 (`HashMap.hash(null)`).
fn key_hash(keys: &ArrayRef, i: usize, t: &DataType) -> Option<i32> {
    if keys.is_null(i) {
        return Some(0);
    }
    let long = |v: i64| (v ^ ((v as u64) >> 32) as i64) as i32;
    let timestamp = |ms: i64, nanos: i64| {
        31i32
            .wrapping_mul((ms as i32) ^ ((ms >> 32) as i32))
            .wrapping_add(nanos as i32)
    };
    Some(match (&t.kind, keys.data_type()) {
        (TypeKind::Char { .. } | TypeKind::VarChar { .. }, ArrowType::Utf8) => {
            hash_bytes(keys.as_string::<i32>().value(i).as_bytes())
        }
        (TypeKind::Char { .. } | TypeKind::VarChar { .. }, ArrowType::LargeUtf8) => {
            hash_bytes(keys.as_string::<i64>().value(i).as_bytes())
        }
        (TypeKind::Boolean, ArrowType::Boolean) => {
            if keys.as_boolean().value(i) {
                1231
            } else {
                1237
            }
        }
        (_, ArrowType::Int8) => keys.as_primitive::<Int8Type>().value(i) as i32,
        (_, ArrowType::Int16) => keys.as_primitive::<Int16Type>().value(i) as i32,
        (TypeKind::BigInt, ArrowType::Int64) => long(keys.as_primitive::<Int64Type>().value(i)),
        (_, ArrowType::Int32) => keys.as_primitive::<Int32Type>().value(i),
        (_, ArrowType::Date32) => keys.as_primitive::<Date32Type>().value(i),
        (_, ArrowType::Time32(TimeUnit::Millisecond)) => {
            keys.as_primitive::<Time32MillisecondType>().value(i)
        }
        (TypeKind::Float, ArrowType::Float32) => {
            let v = keys.as_primitive::<Float32Type>().value(i);
            (if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() }) as i32
        }
        (TypeKind::Double, ArrowType::Float64) => {
            let v = keys.as_primitive::<Float64Type>().value(i);
            long(
                (if v.is_nan() {
                    0x7ff8_0000_0000_0000
                } else {
                    v.to_bits()
                }) as i64,
            )
        }
        (TypeKind::Decimal { .. }, ArrowType::Decimal128(_, scale)) => {
            decimal_hash(keys.as_primitive::<Decimal128Type>().value(i), *scale)
        }
        (
            TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. },
            ArrowType::Timestamp(unit, _),
        ) => {
            let (ms, nanos) = match unit {
                TimeUnit::Second => {
                    let s = keys.as_primitive::<TimestampSecondType>().value(i);
                    (s.checked_mul(1000)?, 0)
                }
                TimeUnit::Millisecond => {
                    (keys.as_primitive::<TimestampMillisecondType>().value(i), 0)
                }
                TimeUnit::Microsecond => {
                    let us = keys.as_primitive::<TimestampMicrosecondType>().value(i);
                    (us.div_euclid(1000), us.rem_euclid(1000) * 1000)
                }
                TimeUnit::Nanosecond => {
                    let ns = keys.as_primitive::<TimestampNanosecondType>().value(i);
                    (ns.div_euclid(1_000_000), ns.rem_euclid(1_000_000))
                }
            };
            timestamp(ms, nanos)
        }
        _ => return None,
    })
}

/// Java `BigDecimal#hashCode` of `unscaled × 10^-scale`: `31 × BigInteger#hashCode + scale`,
/// the `BigInteger` hash running `h = 31 × h + word` over the big-endian 32-bit words of the
/// magnitude (no leading zero word), times the sign.
fn decimal_hash(unscaled: i128, scale: i8) -> i32 {
    let magnitude = unscaled.unsigned_abs();
    let mut h = 0i32;
    let mut started = false;
    for shift in [96u32, 64, 32, 0] {
        let word = (magnitude >> shift) as u32;
        if word != 0 || started {
            started = true;
            h = h.wrapping_mul(31).wrapping_add(word as i32);
        }
    }
    let signum = unscaled.signum() as i32;
    31i32
        .wrapping_mul(h.wrapping_mul(signum))
        .wrapping_add(i32::from(scale))
}

#[cfg(test)]
mod tests;
