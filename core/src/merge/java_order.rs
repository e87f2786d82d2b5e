//! The Java objects Java Paimon's collection aggregators hash, rebuilt from merge values:
//! array elements of `collect` with `distinct` (Java's boxed primitives, `BinaryString`,
//! `Decimal`, `Timestamp`, `GenericVariant`) and the nested-key rows of `nested_update` /
//! `nested_partial_update` (a `BinaryRow` projected from the element row), with Java's
//! `hashCode`, `equals` and `compareTo`, so that [`JavaHashMap`](crate::util::java_hash::JavaHashMap) orders them
//! as Java does.
//!
//! Source: Java `org.apache.paimon.data.{BinaryString, Decimal, Timestamp, BinaryRow}`,
//! `org.apache.paimon.data.variant.GenericVariant`, `java.lang.{Boolean, Byte, Short, Integer,
//! Long, Float, Double}#hashCode/compareTo`, `java.math.BigDecimal#hashCode`,
//! `InternalArray#createElementGetter` (which object an element of each type is).

use std::cmp::Ordering;

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_schema::{DataType as ArrowType, TimeUnit};

use super::value::Value;
use crate::error::{Error, Result};
use crate::spec::binary_row::{BinaryRow, Datum};
use crate::spec::murmur::hash_bytes;
use crate::spec::{DataType, TypeKind};
use crate::util::java_hash::JavaKey;

/// How `collect` with `distinct` gathers the elements of an ARRAY of this element type.
///
/// Source: Java `FieldCollectAgg` (a `HashSet` of the elements, or a list with a record
/// equaliser for constructed types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Distinct {
    /// A `java.util.HashSet` of the element objects: Java's hash order.
    HashSet(ElementKind),
    /// ROW, ARRAY, MAP, MULTISET, VECTOR: the accumulator as it is, then each input element
    /// not equal to one already gathered, in order.
    Equaliser,
    /// BINARY / VARBINARY (`byte[]`): Java's set compares arrays by identity, so no element
    /// is ever a duplicate and the order is that of `System.identityHashCode`, which cannot be
    /// reproduced; every element is kept, accumulator then input, in order.
    Identity,
    /// BLOB and other types without a reproducible Java object: duplicates dropped, first
    /// occurrences in order.
    FirstSeen,
}

/// The Java class of an element in a `HashSet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ElementKind {
    Boolean,
    Byte,
    Short,
    /// `INT`, `DATE`, `TIME` (`Integer`).
    Int,
    Long,
    Float,
    Double,
    /// `CHAR`, `VARCHAR` (`BinaryString`).
    String,
    /// `DECIMAL(p, s)` (`Decimal`, hashing as its `BigDecimal` of scale `s`).
    Decimal(u32),
    /// `TIMESTAMP`, `TIMESTAMP_LTZ` (`Timestamp`).
    Timestamp,
    /// `VARIANT` (`GenericVariant` at position 0).
    Variant,
}

impl Distinct {
    /// The gathering of `collect` with `distinct` over elements of type `element`.
    pub(crate) fn of(element: &DataType) -> Distinct {
        use ElementKind as E;
        Distinct::HashSet(match &element.kind {
            TypeKind::Boolean => E::Boolean,
            TypeKind::TinyInt => E::Byte,
            TypeKind::SmallInt => E::Short,
            TypeKind::Int | TypeKind::Date | TypeKind::Time { .. } => E::Int,
            TypeKind::BigInt => E::Long,
            TypeKind::Float => E::Float,
            TypeKind::Double => E::Double,
            TypeKind::Char { .. } | TypeKind::VarChar { .. } => E::String,
            TypeKind::Decimal { scale, .. } => E::Decimal(*scale),
            TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. } => E::Timestamp,
            TypeKind::Variant => E::Variant,
            TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => return Distinct::Identity,
            TypeKind::Row(_)
            | TypeKind::Array(_)
            | TypeKind::Map(_, _)
            | TypeKind::Multiset(_)
            | TypeKind::Vector { .. } => return Distinct::Equaliser,
            TypeKind::Blob | TypeKind::Other(_) => return Distinct::FirstSeen,
        })
    }
}

/// A non-null element of a `collect` set as the Java object it is (equality as Java's
/// `equals`: floats by `floatToIntBits`, so every NaN is one element and `-0.0 != 0.0`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum JavaElement {
    Boolean(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    /// `Float.floatToIntBits`.
    Float(u32),
    /// `Double.doubleToLongBits`.
    Double(u64),
    /// UTF-8 bytes.
    String(Vec<u8>),
    Decimal {
        unscaled: i128,
        scale: u32,
    },
    Timestamp {
        millis: i64,
        nanos_of_milli: i32,
    },
    Variant {
        value: Vec<u8>,
        metadata: Vec<u8>,
    },
}

/// Java `Float.floatToIntBits` (every NaN is `0x7fc00000`).
fn float_bits(v: f32) -> u32 {
    if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() }
}

/// Java `Double.doubleToLongBits` (every NaN is `0x7ff8000000000000`).
fn double_bits(v: f64) -> u64 {
    if v.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        v.to_bits()
    }
}

/// Java `BigInteger#hashCode` of `v`: over the 32-bit words of the magnitude, most
/// significant first (no leading zero words), `h = 31 * h + word`, times the sign.
fn big_integer_hash(v: i128) -> i32 {
    let mag = v.unsigned_abs();
    let mut h: i32 = 0;
    let words = (128 - mag.leading_zeros()).div_ceil(32);
    for k in (0..words).rev() {
        let word = (mag >> (32 * k)) as u32;
        h = h.wrapping_mul(31).wrapping_add(word as i32);
    }
    if v < 0 { h.wrapping_neg() } else { h }
}

/// Java `Arrays.hashCode(byte[])`.
fn bytes_hash(b: &[u8]) -> i32 {
    b.iter().fold(1i32, |h, &x| {
        h.wrapping_mul(31).wrapping_add(i32::from(x as i8))
    })
}

impl JavaKey for JavaElement {
    fn hash_code(&self) -> i32 {
        match self {
            JavaElement::Boolean(b) => {
                if *b {
                    1231
                } else {
                    1237
                }
            }
            JavaElement::Byte(v) => i32::from(*v),
            JavaElement::Short(v) => i32::from(*v),
            JavaElement::Int(v) => *v,
            JavaElement::Long(v) => (*v ^ ((*v as u64) >> 32) as i64) as i32,
            JavaElement::Float(bits) => *bits as i32,
            JavaElement::Double(bits) => (*bits ^ (*bits >> 32)) as i32,
            JavaElement::String(b) => hash_bytes(b),
            // BigDecimal#hashCode: 31 * unscaledValue.hashCode() + scale.
            JavaElement::Decimal { unscaled, scale } => big_integer_hash(*unscaled)
                .wrapping_mul(31)
                .wrapping_add(*scale as i32),
            JavaElement::Timestamp {
                millis,
                nanos_of_milli,
            } => ((*millis as i32) ^ ((*millis >> 32) as i32))
                .wrapping_mul(31)
                .wrapping_add(*nanos_of_milli),
            // Objects.hash(Arrays.hashCode(value), Arrays.hashCode(metadata), pos = 0).
            JavaElement::Variant { value, metadata } => 31i32
                .wrapping_add(bytes_hash(value))
                .wrapping_mul(31)
                .wrapping_add(bytes_hash(metadata))
                .wrapping_mul(31),
        }
    }

    fn compare_to(&self, other: &Self) -> Option<Ordering> {
        Some(match (self, other) {
            (JavaElement::Boolean(a), JavaElement::Boolean(b)) => a.cmp(b),
            (JavaElement::Byte(a), JavaElement::Byte(b)) => a.cmp(b),
            (JavaElement::Short(a), JavaElement::Short(b)) => a.cmp(b),
            (JavaElement::Int(a), JavaElement::Int(b)) => a.cmp(b),
            (JavaElement::Long(a), JavaElement::Long(b)) => a.cmp(b),
            // Float.compare / Double.compare: numeric, then by the (canonical) bits as signed
            // integers (-0.0 < 0.0, NaN above everything).
            (JavaElement::Float(a), JavaElement::Float(b)) => {
                let (x, y) = (f32::from_bits(*a), f32::from_bits(*b));
                x.partial_cmp(&y)
                    .filter(|o| o.is_ne())
                    .unwrap_or_else(|| (*a as i32).cmp(&(*b as i32)))
            }
            (JavaElement::Double(a), JavaElement::Double(b)) => {
                let (x, y) = (f64::from_bits(*a), f64::from_bits(*b));
                x.partial_cmp(&y)
                    .filter(|o| o.is_ne())
                    .unwrap_or_else(|| (*a as i64).cmp(&(*b as i64)))
            }
            (JavaElement::String(a), JavaElement::String(b)) => a.cmp(b),
            (
                JavaElement::Decimal { unscaled: a, .. },
                JavaElement::Decimal { unscaled: b, .. },
            ) => a.cmp(b),
            (
                JavaElement::Timestamp {
                    millis: a,
                    nanos_of_milli: an,
                },
                JavaElement::Timestamp {
                    millis: b,
                    nanos_of_milli: bn,
                },
            ) => a.cmp(b).then(an.cmp(bn)),
            // GenericVariant is not Comparable; other pairs never share a set.
            _ => return None,
        })
    }
}

fn element_error(kind: ElementKind, v: &Value) -> Error {
    Error::invalid(format!(
        "collect: an element of kind {kind:?} is not a value of that type ({v:?})"
    ))
}

/// Epoch millis and nanos within the milli of row `i` of a timestamp array.
fn timestamp_at(a: &dyn Array, i: usize) -> Option<(i64, i32)> {
    let (v, per_milli) = match a.data_type() {
        ArrowType::Timestamp(TimeUnit::Second, _) => {
            return Some((
                a.as_primitive::<TimestampSecondType>()
                    .value(i)
                    .saturating_mul(1000),
                0,
            ));
        }
        ArrowType::Timestamp(TimeUnit::Millisecond, _) => {
            return Some((a.as_primitive::<TimestampMillisecondType>().value(i), 0));
        }
        ArrowType::Timestamp(TimeUnit::Microsecond, _) => {
            (a.as_primitive::<TimestampMicrosecondType>().value(i), 1_000)
        }
        ArrowType::Timestamp(TimeUnit::Nanosecond, _) => (
            a.as_primitive::<TimestampNanosecondType>().value(i),
            1_000_000,
        ),
        _ => return None,
    };
    let millis = v.div_euclid(per_milli);
    let nanos = v.rem_euclid(per_milli) * (1_000_000 / per_milli);
    Some((millis, nanos as i32))
}

/// Milliseconds of the day of row `i` of a time array.
fn time_at(a: &dyn Array, i: usize) -> Option<i32> {
    Some(match a.data_type() {
        ArrowType::Time32(TimeUnit::Millisecond) => {
            a.as_primitive::<Time32MillisecondType>().value(i)
        }
        ArrowType::Time32(TimeUnit::Second) => a
            .as_primitive::<Time32SecondType>()
            .value(i)
            .saturating_mul(1000),
        ArrowType::Time64(TimeUnit::Microsecond) => {
            (a.as_primitive::<Time64MicrosecondType>().value(i) / 1000) as i32
        }
        ArrowType::Time64(TimeUnit::Nanosecond) => {
            (a.as_primitive::<Time64NanosecondType>().value(i) / 1_000_000) as i32
        }
        _ => return None,
    })
}

/// The Java object of a non-null element (`None` for NULL).
///
/// # Errors
/// [`Error::Invalid`] when `v` is not a value of `kind`.
pub(crate) fn java_element(kind: ElementKind, v: &Value) -> Result<Option<JavaElement>> {
    if v.is_null() {
        return Ok(None);
    }
    if let Value::Ref(a, i) = v {
        match kind {
            ElementKind::Timestamp => {
                let (millis, nanos_of_milli) =
                    timestamp_at(a.as_ref(), *i).ok_or_else(|| element_error(kind, v))?;
                return Ok(Some(JavaElement::Timestamp {
                    millis,
                    nanos_of_milli,
                }));
            }
            ElementKind::Int => {
                if let Some(t) = time_at(a.as_ref(), *i) {
                    return Ok(Some(JavaElement::Int(t)));
                }
            }
            ElementKind::Variant => {
                let s = a.as_struct_opt().ok_or_else(|| element_error(kind, v))?;
                let bytes = |name: &str| -> Result<Vec<u8>> {
                    let c = s
                        .column_by_name(name)
                        .ok_or_else(|| element_error(kind, v))?;
                    match Value::at(c, *i).scalar()? {
                        Value::Bin(b) => Ok(b),
                        Value::Null => Ok(Vec::new()),
                        _ => Err(element_error(kind, v)),
                    }
                };
                return Ok(Some(JavaElement::Variant {
                    value: bytes("value")?,
                    metadata: bytes("metadata")?,
                }));
            }
            _ => {}
        }
    }
    let s = v.scalar()?;
    Ok(Some(match (kind, s) {
        (ElementKind::Boolean, Value::Bool(b)) => JavaElement::Boolean(b),
        (ElementKind::Byte, Value::I8(x)) => JavaElement::Byte(x),
        (ElementKind::Short, Value::I16(x)) => JavaElement::Short(x),
        (ElementKind::Int, Value::I32(x)) => JavaElement::Int(x),
        (ElementKind::Long, Value::I64(x)) => JavaElement::Long(x),
        (ElementKind::Float, Value::F32(x)) => JavaElement::Float(float_bits(x)),
        (ElementKind::Double, Value::F64(x)) => JavaElement::Double(double_bits(x)),
        (ElementKind::String, Value::Str(x)) => JavaElement::String(x.into_bytes()),
        (ElementKind::Decimal(scale), Value::Dec(unscaled)) => {
            JavaElement::Decimal { unscaled, scale }
        }
        _ => return Err(element_error(kind, v)),
    }))
}

/// A nested key: the row bytes Java's key projection writes (a `BinaryRow` of the key
/// fields, row kind INSERT), compared by bytes and hashed by Java `BinaryRow#hashCode`. Not
/// `Comparable` in Java.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct KeyRow(Vec<u8>);

impl JavaKey for KeyRow {
    fn hash_code(&self) -> i32 {
        hash_bytes(&self.0)
    }

    fn compare_to(&self, _other: &Self) -> Option<Ordering> {
        None
    }
}

impl KeyRow {
    /// The key row of `values` typed by `types` (the nested-key fields of one element row).
    ///
    /// # Errors
    /// [`Error::Invalid`] / [`Error::Unsupported`] for a value that does not match its type
    /// or a type a binary row cannot hold.
    pub(crate) fn encode(values: &[&Value], types: &[DataType]) -> Result<KeyRow> {
        let datums = values
            .iter()
            .zip(types)
            .map(|(v, t)| datum_of(v, t))
            .collect::<Result<Vec<_>>>()?;
        let row = BinaryRow::encode(&datums, types)?;
        Ok(KeyRow(row.row_bytes().to_vec()))
    }

    /// Java `BinaryRow#anyNull` of the key.
    pub(crate) fn any_null(values: &[&Value]) -> bool {
        values.iter().any(|v| v.is_null())
    }
}

fn datum_error(t: &DataType, v: &Value) -> Error {
    Error::invalid(format!("nested key: {v:?} is not a value of type {t}"))
}

/// The binary-row datum of merge value `v` of type `t`.
fn datum_of(v: &Value, t: &DataType) -> Result<Datum> {
    if v.is_null() {
        return Ok(Datum::Null);
    }
    if let Value::Ref(a, i) = v {
        match &t.kind {
            TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. } => {
                let (millis, nanos_of_milli) =
                    timestamp_at(a.as_ref(), *i).ok_or_else(|| datum_error(t, v))?;
                return Ok(Datum::Timestamp {
                    millis,
                    nanos_of_milli,
                });
            }
            TypeKind::Time { .. } => {
                return time_at(a.as_ref(), *i)
                    .map(Datum::Time)
                    .ok_or_else(|| datum_error(t, v));
            }
            _ => {}
        }
    }
    Ok(match &t.kind {
        TypeKind::Array(e) | TypeKind::Vector { element: e, .. } => Datum::Array(
            v.list_elements()?
                .iter()
                .map(|x| datum_of(x, e))
                .collect::<Result<_>>()?,
        ),
        TypeKind::Multiset(e) => {
            let int = DataType::not_null(TypeKind::Int);
            Datum::Map(
                v.map_entries()?
                    .iter()
                    .map(|(k, c)| Ok((datum_of(k, e)?, datum_of(c, &int)?)))
                    .collect::<Result<_>>()?,
            )
        }
        TypeKind::Map(kt, vt) => Datum::Map(
            v.map_entries()?
                .iter()
                .map(|(k, x)| Ok((datum_of(k, kt)?, datum_of(x, vt)?)))
                .collect::<Result<_>>()?,
        ),
        TypeKind::Row(fields) => Datum::Row(
            v.struct_fields(fields.len())?
                .iter()
                .zip(fields)
                .map(|(x, f)| datum_of(x, &f.data_type))
                .collect::<Result<_>>()?,
        ),
        _ => match (&t.kind, v.scalar()?) {
            (TypeKind::Boolean, Value::Bool(b)) => Datum::Boolean(b),
            (TypeKind::TinyInt, Value::I8(x)) => Datum::TinyInt(x),
            (TypeKind::SmallInt, Value::I16(x)) => Datum::SmallInt(x),
            (TypeKind::Int, Value::I32(x)) => Datum::Int(x),
            (TypeKind::Date, Value::I32(x)) => Datum::Date(x),
            (TypeKind::BigInt, Value::I64(x)) => Datum::BigInt(x),
            (TypeKind::Float, Value::F32(x)) => Datum::Float(x),
            (TypeKind::Double, Value::F64(x)) => Datum::Double(x),
            (TypeKind::Decimal { precision, scale }, Value::Dec(unscaled)) => Datum::Decimal {
                unscaled,
                precision: *precision,
                scale: *scale,
            },
            (TypeKind::Char { .. } | TypeKind::VarChar { .. }, Value::Str(s)) => Datum::String(s),
            (
                TypeKind::Binary { .. } | TypeKind::VarBinary { .. } | TypeKind::Blob,
                Value::Bin(b),
            ) => Datum::Binary(b),
            _ => return Err(datum_error(t, v)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hash codes of Java objects, as `jshell` prints them (Java 17): `Long.hashCode(-1L)`,
    /// `Double.hashCode(-0.0)`, `Float.hashCode(Float.NaN)`,
    /// `new BigDecimal("-123456789012345678901234.567").hashCode()`,
    /// `new BigDecimal("12.34").hashCode()`, `Boolean.hashCode(true)`.
    #[test]
    fn element_hash_codes_are_javas() {
        assert_eq!(JavaElement::Long(-1).hash_code(), 0);
        assert_eq!(JavaElement::Long((7 << 32) | 7).hash_code(), 0);
        assert_eq!(
            JavaElement::Double(double_bits(-0.0)).hash_code(),
            -2147483648
        );
        assert_eq!(
            JavaElement::Float(float_bits(f32::NAN)).hash_code(),
            2143289344
        );
        assert_eq!(
            JavaElement::Decimal {
                unscaled: 1234,
                scale: 2
            }
            .hash_code(),
            31 * 1234 + 2
        );
        assert_eq!(JavaElement::Boolean(true).hash_code(), 1231);
        // BigInteger: 2^32 + 5 has the words [1, 5]: 31 * 1 + 5.
        assert_eq!(big_integer_hash((1 << 32) + 5), 36);
        assert_eq!(big_integer_hash(-((1 << 32) + 5)), -36);
        assert_eq!(big_integer_hash(0), 0);
    }
}
