//! `BinaryRow` bytes (partitions, keys, stats) and the [`Datum`] values they hold.
//!
//! Source: Java `org.apache.paimon.data.BinaryRow`, `BinaryArray`, `BinaryMap`,
//! `BinaryRowWriter`, `AbstractBinaryWriter`, `BinaryArrayWriter`, `RowHelper` and
//! `org.apache.paimon.utils.SerializationUtils#serializeBinaryRow`. Layout: `spec/table-layout.md`
//! §6.
//!
//! A serialized row is `int32 BE arity ‖ row bytes`. Row bytes are
//! `[header + null bits: W][fixed slots: 8 × arity][variable part]` with
//! `W = ((arity + 63 + 8) / 64) × 8`, all numbers little-endian. Variable-length values
//! (strings and binaries longer than 7 bytes, non-compact DECIMAL/TIMESTAMP, nested
//! ARRAY/MAP/ROW, VARIANT) live in the variable part, addressed by `(offset << 32) | length`
//! with the offset relative to the start of the enclosing row/array. Nested arrays are
//! `int32 size ‖ null bits in 4-byte words ‖ fixed-width elements ‖ variable part`; maps are
//! `int32 key-array bytes ‖ key array ‖ value array`.
//!
//! Every offset and length read from the bytes is bound-checked; a bad one is an
//! [`Error::Corrupt`] naming the file the row came from ([`BinaryRow::origin`]).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::spec::types::{DataType, TypeKind};

mod render;
pub use render::*;

mod write;
use write::*;

const FORMAT: &str = "binary-row";

/// Largest precision of a DECIMAL stored inline as an unscaled `i64` ("compact").
///
/// Source: Java `org.apache.paimon.data.Decimal#isCompact`.
pub const MAX_COMPACT_DECIMAL_PRECISION: u32 = 18;

/// Largest precision of a TIMESTAMP stored inline as epoch millis ("compact").
///
/// Source: Java `org.apache.paimon.data.Timestamp#isCompact`.
pub const MAX_COMPACT_TIMESTAMP_PRECISION: u32 = 3;

/// One Paimon value in its internal representation.
///
/// Source: Java internal data structures (`BinaryString`, `Decimal`, `Timestamp`,
/// `InternalArray`, `InternalMap`, `InternalRow`, boxed primitives).
///
/// Ordering (`Ord`) compares values of the same variant naturally (strings and binaries by
/// unsigned bytes, floats by IEEE total order as Java's `Float.compare`, decimals by value,
/// nested values lexicographically); values of different variants order by variant, with
/// `Null` first. `Display` renders Java's `toString` of the internal value (what
/// `partition.legacy-name = true` puts into directory names): DATE as its day count, TIME
/// as its millis, TIMESTAMP as Java `LocalDateTime#toString`.
#[derive(Debug, Clone)]
pub enum Datum {
    /// SQL NULL.
    Null,
    /// `BOOLEAN`
    Boolean(bool),
    /// `TINYINT`
    TinyInt(i8),
    /// `SMALLINT`
    SmallInt(i16),
    /// `INT`
    Int(i32),
    /// `BIGINT`
    BigInt(i64),
    /// `FLOAT`
    Float(f32),
    /// `DOUBLE`
    Double(f64),
    /// `DECIMAL(precision, scale)`: value = `unscaled × 10^-scale`.
    Decimal {
        /// Unscaled value (at most 38 digits).
        unscaled: i128,
        /// Total digits of the type.
        precision: u32,
        /// Fraction digits of the type.
        scale: u32,
    },
    /// `CHAR` / `VARCHAR` / `STRING` (UTF-8; invalid sequences are replaced by U+FFFD).
    String(String),
    /// `BINARY` / `VARBINARY` / `BYTES` / `BLOB` bytes.
    Binary(Vec<u8>),
    /// `DATE`: days since 1970-01-01.
    Date(i32),
    /// `TIME`: milliseconds of the day.
    Time(i32),
    /// `TIMESTAMP` and `TIMESTAMP WITH LOCAL TIME ZONE`: epoch millis plus nanos within the
    /// milli (`0..1_000_000`). For LTZ the instant is UTC.
    Timestamp {
        /// Milliseconds since 1970-01-01T00:00:00.
        millis: i64,
        /// Nanoseconds within the millisecond, `0..1_000_000`.
        nanos_of_milli: i32,
    },
    /// `ARRAY` elements.
    Array(Vec<Datum>),
    /// `MAP` entries in stored order (`MULTISET`: element → count as `Int`).
    Map(Vec<(Datum, Datum)>),
    /// `ROW` fields.
    Row(Vec<Datum>),
    /// `VARIANT`: raw Parquet-variant `value` and `metadata` bytes.
    Variant {
        /// Variant value bytes.
        value: Vec<u8>,
        /// Variant metadata bytes.
        metadata: Vec<u8>,
    },
}

impl Datum {
    /// True for [`Datum::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    fn rank(&self) -> u8 {
        match self {
            Datum::Null => 0,
            Datum::Boolean(_) => 1,
            Datum::TinyInt(_) => 2,
            Datum::SmallInt(_) => 3,
            Datum::Int(_) => 4,
            Datum::BigInt(_) => 5,
            Datum::Float(_) => 6,
            Datum::Double(_) => 7,
            Datum::Decimal { .. } => 8,
            Datum::String(_) => 9,
            Datum::Binary(_) => 10,
            Datum::Date(_) => 11,
            Datum::Time(_) => 12,
            Datum::Timestamp { .. } => 13,
            Datum::Array(_) => 14,
            Datum::Map(_) => 15,
            Datum::Row(_) => 16,
            Datum::Variant { .. } => 17,
        }
    }

    /// The value as Java's cast to `STRING` renders it (`CastExecutors.resolve(type, STRING)`):
    /// what `partition.legacy-name = false` directory names and the `$files` `partition`
    /// column use. `None` for NULL.
    ///
    /// DATE → `yyyy-MM-dd`; TIME(p) → `HH:mm:ss[.fff]` (trailing zeros of the millis dropped,
    /// at most `p` digits); TIMESTAMP(p) → `yyyy-MM-dd HH:mm:ss[.f…]` (nanos with trailing
    /// zeros dropped down to `p` digits); TIMESTAMP_LTZ is rendered in UTC (Java uses the
    /// JVM's zone); BINARY as its bytes read as UTF-8; numbers, booleans and decimals as
    /// Java's `toString`; ARRAY/MAP/ROW as `[a, b]`, `{k -> v}`, `{a, b}`.
    pub fn cast_to_string(&self, ty: &DataType) -> Option<String> {
        let s = match (self, &ty.kind) {
            (Datum::Null, _) => return None,
            (Datum::Date(d), _) => format_date(*d),
            (Datum::Time(ms), TypeKind::Time { precision }) => format_time(*ms, *precision),
            (Datum::Time(ms), _) => format_time(*ms, 0),
            (
                Datum::Timestamp {
                    millis,
                    nanos_of_milli,
                },
                TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision },
            ) => format_timestamp(*millis, *nanos_of_milli, *precision),
            (
                Datum::Timestamp {
                    millis,
                    nanos_of_milli,
                },
                _,
            ) => format_timestamp(*millis, *nanos_of_milli, 9),
            (Datum::Binary(b), _) => String::from_utf8_lossy(b).into_owned(),
            (Datum::Array(items), TypeKind::Array(elem)) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|d| d.cast_to_string(elem).unwrap_or_else(|| "null".into()))
                    .collect();
                format!("[{}]", parts.join(", "))
            }
            (Datum::Map(entries), TypeKind::Map(k, v)) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|(a, b)| {
                        format!(
                            "{} -> {}",
                            a.cast_to_string(k).unwrap_or_else(|| "null".into()),
                            b.cast_to_string(v).unwrap_or_else(|| "null".into())
                        )
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            (Datum::Row(values), TypeKind::Row(fields)) => {
                let parts: Vec<String> = values
                    .iter()
                    .zip(fields)
                    .map(|(d, f)| {
                        d.cast_to_string(&f.data_type)
                            .unwrap_or_else(|| "null".into())
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            (other, _) => other.to_string(),
        };
        Some(s)
    }
}

impl PartialEq for Datum {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Datum {}

impl PartialOrd for Datum {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Datum {
    fn cmp(&self, other: &Self) -> Ordering {
        use Datum::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Boolean(a), Boolean(b)) => a.cmp(b),
            (TinyInt(a), TinyInt(b)) => a.cmp(b),
            (SmallInt(a), SmallInt(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            (BigInt(a), BigInt(b)) => a.cmp(b),
            (Float(a), Float(b)) => a.total_cmp(b),
            (Double(a), Double(b)) => a.total_cmp(b),
            (
                Decimal {
                    unscaled: a,
                    scale: sa,
                    ..
                },
                Decimal {
                    unscaled: b,
                    scale: sb,
                    ..
                },
            ) => cmp_decimal(*a, *sa, *b, *sb),
            (String(a), String(b)) => a.cmp(b),
            (Binary(a), Binary(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (Time(a), Time(b)) => a.cmp(b),
            (
                Timestamp {
                    millis: a,
                    nanos_of_milli: na,
                },
                Timestamp {
                    millis: b,
                    nanos_of_milli: nb,
                },
            ) => (a, na).cmp(&(b, nb)),
            (Array(a), Array(b)) => a.cmp(b),
            (Map(a), Map(b)) => a.cmp(b),
            (Row(a), Row(b)) => a.cmp(b),
            (
                Variant {
                    value: a,
                    metadata: ma,
                },
                Variant {
                    value: b,
                    metadata: mb,
                },
            ) => (a, ma).cmp(&(b, mb)),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

impl Hash for Datum {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Datum::Null => {}
            Datum::Boolean(v) => v.hash(state),
            Datum::TinyInt(v) => v.hash(state),
            Datum::SmallInt(v) => v.hash(state),
            Datum::Int(v) | Datum::Date(v) | Datum::Time(v) => v.hash(state),
            Datum::BigInt(v) => v.hash(state),
            Datum::Float(v) => v.to_bits().hash(state),
            Datum::Double(v) => v.to_bits().hash(state),
            Datum::Decimal {
                unscaled, scale, ..
            } => {
                // Equal decimals of different scales must hash alike: strip trailing zeros.
                let (mut u, mut s) = (*unscaled, *scale);
                while s > 0 && u % 10 == 0 {
                    u /= 10;
                    s -= 1;
                }
                u.hash(state);
                s.hash(state);
            }
            Datum::String(v) => v.hash(state),
            Datum::Binary(v) => v.hash(state),
            Datum::Timestamp {
                millis,
                nanos_of_milli,
            } => {
                millis.hash(state);
                nanos_of_milli.hash(state);
            }
            Datum::Array(v) | Datum::Row(v) => v.hash(state),
            Datum::Map(v) => v.hash(state),
            Datum::Variant { value, metadata } => {
                value.hash(state);
                metadata.hash(state);
            }
        }
    }
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

fn cmp_decimal(a: i128, sa: u32, b: i128, sb: u32) -> Ordering {
    if sa == sb {
        return a.cmp(&b);
    }
    let scaled = if sa < sb {
        pow10(sb - sa)
            .and_then(|p| a.checked_mul(p))
            .map(|a2| a2.cmp(&b))
    } else {
        pow10(sa - sb)
            .and_then(|p| b.checked_mul(p))
            .map(|b2| a.cmp(&b2))
    };
    scaled.unwrap_or_else(|| {
        let fa = a as f64 / 10f64.powi(sa as i32);
        let fb = b as f64 / 10f64.powi(sb as i32);
        fa.total_cmp(&fb)
    })
}

impl fmt::Display for Datum {
    /// Java `toString` of the internal value (see the type docs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => f.write_str("null"),
            Datum::Boolean(v) => write!(f, "{v}"),
            Datum::TinyInt(v) => write!(f, "{v}"),
            Datum::SmallInt(v) => write!(f, "{v}"),
            Datum::Int(v) | Datum::Date(v) | Datum::Time(v) => write!(f, "{v}"),
            Datum::BigInt(v) => write!(f, "{v}"),
            Datum::Float(v) => f.write_str(&java_float_to_string(*v)),
            Datum::Double(v) => f.write_str(&java_double_to_string(*v)),
            Datum::Decimal {
                unscaled, scale, ..
            } => f.write_str(&decimal_to_plain_string(*unscaled, *scale)),
            Datum::String(s) => f.write_str(s),
            Datum::Binary(b) => f.write_str(&crate::util::hex(b)),
            Datum::Timestamp {
                millis,
                nanos_of_milli,
            } => f.write_str(&format_local_date_time(*millis, *nanos_of_milli)),
            Datum::Array(items) => {
                f.write_str("[")?;
                for (i, d) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("]")
            }
            Datum::Map(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}={v}")?;
                }
                f.write_str("}")
            }
            Datum::Row(values) => {
                f.write_str("(")?;
                for (i, d) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str(")")
            }
            Datum::Variant { value, metadata } => {
                write!(
                    f,
                    "variant(value={}, metadata={})",
                    crate::util::hex(value),
                    crate::util::hex(metadata)
                )
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// BinaryRow
// ---------------------------------------------------------------------------------------------

/// A binary row: its serialized form (`int32 BE arity ‖ row bytes`, the arity checked
/// non-negative and the row bytes at least header + fixed slots long), and the file it came
/// from for error messages.
///
/// Source: Java `org.apache.paimon.data.BinaryRow`.
///
/// 24 bytes inline (two shared pointers, the first to a slice): a plan holds seven rows per data file (partition,
/// min/max key, min/max of the key and value stats), so the row's own size is most of a
/// [`crate::spec::ManifestEntry`]'s. Clones share the bytes. Equality, ordering and hashing
/// use `(arity, bytes)` only (like Java's byte-wise `BinaryRow#equals`), never the origin.
/// Serde form: the lowercase hex of the serialized bytes (`"00000000" + "0000000000000000"`
/// for the empty row).
#[derive(Clone)]
pub struct BinaryRow {
    serialized: Arc<[u8]>,
    origin: RowOrigin,
}

/// The file (or a description) a [`BinaryRow`] came from, named in the errors about it: a
/// shared handle of one pointer, made once per file and cloned into each of its rows.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RowOrigin(Arc<String>);

impl RowOrigin {
    /// A handle naming `origin`.
    pub fn new(origin: impl Into<String>) -> Self {
        RowOrigin(Arc::new(origin.into()))
    }
}

impl std::ops::Deref for RowOrigin {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for RowOrigin {
    fn from(origin: &str) -> Self {
        RowOrigin::new(origin)
    }
}

impl fmt::Display for RowOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RowOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0.as_str(), f)
    }
}

impl PartialEq for BinaryRow {
    fn eq(&self, other: &Self) -> bool {
        self.serialized == other.serialized
    }
}

impl Eq for BinaryRow {}

impl Hash for BinaryRow {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.arity().hash(state);
        self.row_bytes().hash(state);
    }
}

impl PartialOrd for BinaryRow {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BinaryRow {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.arity(), self.row_bytes()).cmp(&(other.arity(), other.row_bytes()))
    }
}

impl fmt::Debug for BinaryRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BinaryRow(arity={}, {})",
            self.arity(),
            crate::util::hex(self.row_bytes())
        )
    }
}

impl Default for BinaryRow {
    fn default() -> Self {
        BinaryRow::empty()
    }
}

impl Serialize for BinaryRow {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&crate::util::hex(&self.serialized))
    }
}

impl<'de> Deserialize<'de> for BinaryRow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let bytes = crate::util::unhex(&s)
            .ok_or_else(|| serde::de::Error::custom("binary row: invalid hex"))?;
        BinaryRow::from_serialized(&bytes, "serialized binary row")
            .map_err(serde::de::Error::custom)
    }
}

/// Width in bytes of the header + null bits of a row of `arity` fields:
/// `((arity + 63 + 8) / 64) × 8`.
pub fn null_bits_size_in_bytes(arity: usize) -> usize {
    arity.saturating_add(63 + 8) / 64 * 8
}

fn corrupt(origin: &str, reason: impl Into<String>) -> Error {
    Error::corrupt(origin, FORMAT, reason)
}

/// The empty row's serialized bytes and default origin, shared by every empty row: the
/// partition of an unpartitioned table and the keys and key stats of every append file are
/// most rows of a large plan.
fn shared_empty() -> &'static (Arc<[u8]>, RowOrigin) {
    static EMPTY: OnceLock<(Arc<[u8]>, RowOrigin)> = OnceLock::new();
    EMPTY.get_or_init(|| {
        (
            Arc::from(&BinaryRow::EMPTY_SERIALIZED[..]),
            RowOrigin::new("empty row"),
        )
    })
}

impl BinaryRow {
    /// Serialized bytes of the empty row (`EMPTY_ROW`): arity 0 and 8 zero bytes.
    pub const EMPTY_SERIALIZED: [u8; 12] = [0; 12];

    /// The empty row (arity 0), used as the partition of unpartitioned tables and the
    /// min/max key of append files. Allocates nothing.
    pub fn empty() -> Self {
        let (serialized, origin) = shared_empty();
        BinaryRow {
            serialized: serialized.clone(),
            origin: origin.clone(),
        }
    }

    /// Parse a serialized row (`int32 BE arity ‖ row bytes`, Java
    /// `SerializationUtils.deserializeBinaryRow`). `path` names the file for errors.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the buffer is shorter than 4 bytes, the arity is negative, or the
    /// row bytes are shorter than the header + fixed slots of that arity.
    pub fn from_serialized(bytes: &[u8], path: &str) -> Result<Self> {
        Self::from_serialized_shared(bytes, RowOrigin::new(path))
    }

    /// Like [`BinaryRow::from_serialized`] with a shared origin (one per manifest).
    /// The empty row's bytes are shared, not allocated per row.
    pub fn from_serialized_shared(bytes: &[u8], origin: RowOrigin) -> Result<Self> {
        let Some((head, rest)) = bytes.split_first_chunk::<4>() else {
            return Err(corrupt(
                &origin,
                format!(
                    "serialized binary row of {} bytes is shorter than its 4-byte arity",
                    bytes.len()
                ),
            ));
        };
        checked_arity(i32::from_be_bytes(*head), rest.len(), &origin)?;
        let serialized = if bytes == Self::EMPTY_SERIALIZED {
            shared_empty().0.clone()
        } else {
            Arc::from(bytes)
        };
        Ok(BinaryRow { serialized, origin })
    }

    /// A row of `arity` fields over `data` (row bytes, no arity prefix), copied.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if `arity` does not fit an `int32` or `data` is shorter than the
    /// header + fixed slots.
    pub fn from_row_bytes(arity: usize, data: &[u8], origin: RowOrigin) -> Result<Self> {
        let arity_i32 = i32::try_from(arity)
            .map_err(|_| corrupt(&origin, format!("binary row arity {arity} is too large")))?;
        checked_arity(arity_i32, data.len(), &origin)?;
        let serialized: Arc<[u8]> = arity_i32
            .to_be_bytes()
            .iter()
            .chain(data)
            .copied()
            .collect();
        Ok(BinaryRow { serialized, origin })
    }

    /// Number of fields.
    pub fn arity(&self) -> usize {
        // The constructors checked the prefix: 4 bytes, non-negative.
        let head: [u8; 4] = self
            .serialized
            .first_chunk::<4>()
            .copied()
            .unwrap_or_default();
        i32::from_be_bytes(head).max(0) as usize
    }

    /// The row bytes (header, null bits, fixed slots, variable part).
    pub fn row_bytes(&self) -> &[u8] {
        self.serialized.get(4..).unwrap_or_default()
    }

    /// Java `BinaryRow#hashCode`: [`crate::spec::murmur::hash_bytes`] of the row bytes (header with the row kind,
    /// null bits, fixed slots and variable part). The bucket of a row and the iteration order
    /// of Java hash maps keyed by rows come from it.
    pub fn hash_code(&self) -> i32 {
        super::murmur::hash_bytes(self.row_bytes())
    }

    /// Path of the file the row was read from (or a description), used in errors.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The same row with another origin.
    pub fn with_origin(mut self, origin: RowOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// `int32 BE arity ‖ row bytes` (Java `SerializationUtils.serializeBinaryRow`), borrowed.
    pub fn serialized(&self) -> &[u8] {
        &self.serialized
    }

    /// `int32 BE arity ‖ row bytes` (Java `SerializationUtils.serializeBinaryRow`).
    pub fn to_serialized(&self) -> Vec<u8> {
        self.serialized.to_vec()
    }

    /// The row-kind byte (byte 0; 0 = INSERT in stored rows).
    pub fn row_kind_byte(&self) -> u8 {
        self.row_bytes().first().copied().unwrap_or(0)
    }

    fn reader(&self) -> Result<RowReader<'_>> {
        RowReader::new(self.row_bytes(), self.arity(), &self.origin)
    }

    /// True if field `pos` is null.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if `pos >= arity`.
    pub fn is_null_at(&self, pos: usize) -> Result<bool> {
        let reader = self.reader()?;
        reader.check_pos(pos)?;
        Ok(reader.is_null(pos))
    }

    /// Field `pos` decoded as `ty` (nullability of `ty` is not enforced: a set null bit gives
    /// [`Datum::Null`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming [`BinaryRow::origin`] if `pos >= arity` or an offset, length,
    /// nested size or inline length is out of bounds; [`Error::Unsupported`] for types
    /// without a binary-row form here (`VECTOR`, `GEOMETRY`, ...).
    pub fn field(&self, pos: usize, ty: &DataType) -> Result<Datum> {
        let reader = self.reader()?;
        reader.check_pos(pos)?;
        reader.get(pos, ty)
    }

    /// All fields decoded with `types` (one per field).
    ///
    /// # Errors
    /// [`Error::Corrupt`] if `types.len() != arity` or any field is corrupt.
    pub fn fields(&self, types: &[DataType]) -> Result<Vec<Datum>> {
        if types.len() != self.arity() {
            return Err(corrupt(
                &self.origin,
                format!(
                    "binary row has {} fields, expected {} ({})",
                    self.arity(),
                    types.len(),
                    crate::util::hex(self.row_bytes())
                ),
            ));
        }
        let reader = self.reader()?;
        types
            .iter()
            .enumerate()
            .map(|(i, ty)| reader.get(i, ty))
            .collect()
    }

    /// Encode `values` typed by `types` the way Java's `BinaryRowWriter` (through
    /// `RowHelper`) does: row kind INSERT, null non-compact DECIMAL/TIMESTAMP still reserve
    /// their 16/8 var bytes, var data 8-byte aligned and zero padded.
    ///
    /// # Errors
    /// [`Error::Invalid`] if the lengths differ or a value does not match its type.
    pub fn encode(values: &[Datum], types: &[DataType]) -> Result<BinaryRow> {
        if values.len() != types.len() {
            return Err(Error::invalid(format!(
                "binary row encode: {} values for {} types",
                values.len(),
                types.len()
            )));
        }
        let data = write_row(values, types)?;
        Self::from_row_bytes(values.len(), &data, encoded_row_origin())
    }
}

/// The origin of rows built in memory ("encoded row"), shared.
fn encoded_row_origin() -> RowOrigin {
    static ORIGIN: OnceLock<RowOrigin> = OnceLock::new();
    ORIGIN.get_or_init(|| RowOrigin::new("encoded row")).clone()
}

/// `arity` as a field count, checked non-negative and against `row_len` (header + fixed
/// slots).
fn checked_arity(arity: i32, row_len: usize, origin: &str) -> Result<usize> {
    let arity = usize::try_from(arity)
        .map_err(|_| corrupt(origin, format!("negative binary row arity {arity}")))?;
    let fixed = fixed_part_size(arity)
        .ok_or_else(|| corrupt(origin, format!("binary row arity {arity} is too large")))?;
    if row_len < fixed {
        return Err(corrupt(
            origin,
            format!("binary row of arity {arity} needs at least {fixed} bytes, has {row_len}"),
        ));
    }
    Ok(arity)
}

fn fixed_part_size(arity: usize) -> Option<usize> {
    arity
        .checked_mul(8)?
        .checked_add(null_bits_size_in_bytes(arity))
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/// Bytes of a fixed slot / element.
fn element_size(ty: &DataType) -> Result<usize> {
    Ok(match &ty.kind {
        TypeKind::Boolean | TypeKind::TinyInt => 1,
        TypeKind::SmallInt => 2,
        TypeKind::Int | TypeKind::Float | TypeKind::Date | TypeKind::Time { .. } => 4,
        TypeKind::BigInt
        | TypeKind::Double
        | TypeKind::Decimal { .. }
        | TypeKind::Char { .. }
        | TypeKind::VarChar { .. }
        | TypeKind::Binary { .. }
        | TypeKind::VarBinary { .. }
        | TypeKind::Timestamp { .. }
        | TypeKind::LocalZonedTimestamp { .. }
        | TypeKind::Variant
        | TypeKind::Blob
        | TypeKind::Array(_)
        | TypeKind::Multiset(_)
        | TypeKind::Map(_, _)
        | TypeKind::Row(_) => 8,
        TypeKind::Vector { .. } | TypeKind::Other(_) => {
            return Err(Error::unsupported(format!(
                "binary row values of type {:?}",
                ty.kind
            )));
        }
    })
}

/// A container (row or array) of fixed slots over a byte slice whose var offsets are relative
/// to the slice start.
struct Container<'a> {
    buf: &'a [u8],
    origin: &'a str,
}

impl<'a> Container<'a> {
    fn bytes(&self, at: usize, len: usize, what: &str) -> Result<&'a [u8]> {
        at.checked_add(len)
            .and_then(|end| self.buf.get(at..end))
            .ok_or_else(|| {
                corrupt(
                    self.origin,
                    format!(
                        "{what}: {len} bytes at offset {at} exceed the {}-byte section",
                        self.buf.len()
                    ),
                )
            })
    }

    fn u64_at(&self, at: usize) -> Result<u64> {
        let b = self.bytes(at, 8, "fixed slot")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// Decode the value of type `ty` whose fixed slot starts at `slot`.
    fn value(&self, slot: usize, ty: &DataType) -> Result<Datum> {
        let b = |n: usize| self.bytes(slot, n, "fixed slot");
        Ok(match &ty.kind {
            TypeKind::Boolean => Datum::Boolean(b(1)?[0] != 0),
            TypeKind::TinyInt => Datum::TinyInt(b(1)?[0] as i8),
            TypeKind::SmallInt => {
                let x = b(2)?;
                Datum::SmallInt(i16::from_le_bytes([x[0], x[1]]))
            }
            TypeKind::Int | TypeKind::Date | TypeKind::Time { .. } | TypeKind::Float => {
                let x = b(4)?;
                let v = [x[0], x[1], x[2], x[3]];
                match &ty.kind {
                    TypeKind::Int => Datum::Int(i32::from_le_bytes(v)),
                    TypeKind::Date => Datum::Date(i32::from_le_bytes(v)),
                    TypeKind::Time { .. } => Datum::Time(i32::from_le_bytes(v)),
                    _ => Datum::Float(f32::from_le_bytes(v)),
                }
            }
            TypeKind::BigInt => Datum::BigInt(self.u64_at(slot)? as i64),
            TypeKind::Double => Datum::Double(f64::from_bits(self.u64_at(slot)?)),
            TypeKind::Decimal { precision, scale } => {
                let raw = self.u64_at(slot)?;
                let unscaled = if *precision <= MAX_COMPACT_DECIMAL_PRECISION {
                    i128::from(raw as i64)
                } else {
                    let (off, len) = split_offset_len(raw);
                    if len == 0 || len > 16 {
                        return Err(corrupt(
                            self.origin,
                            format!("non-compact decimal of {len} bytes (expected 1..=16)"),
                        ));
                    }
                    let bytes = self.bytes(off, len, "decimal var part")?;
                    be_bytes_to_i128(bytes)
                };
                Datum::Decimal {
                    unscaled,
                    precision: *precision,
                    scale: *scale,
                }
            }
            TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision } => {
                let raw = self.u64_at(slot)?;
                if *precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                    Datum::Timestamp {
                        millis: raw as i64,
                        nanos_of_milli: 0,
                    }
                } else {
                    let off = (raw >> 32) as usize;
                    let nanos = raw as u32 as i32;
                    if !(0..1_000_000).contains(&nanos) {
                        return Err(corrupt(
                            self.origin,
                            format!("timestamp nano-of-milli {nanos} out of range"),
                        ));
                    }
                    let m = self.bytes(off, 8, "timestamp var part")?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(m);
                    Datum::Timestamp {
                        millis: i64::from_le_bytes(a),
                        nanos_of_milli: nanos,
                    }
                }
            }
            TypeKind::Char { .. } | TypeKind::VarChar { .. } => {
                let bytes = self.var_bytes(slot)?;
                Datum::String(String::from_utf8_lossy(bytes).into_owned())
            }
            TypeKind::Binary { .. } | TypeKind::VarBinary { .. } | TypeKind::Blob => {
                Datum::Binary(self.var_bytes(slot)?.to_vec())
            }
            TypeKind::Variant => {
                let (off, len) = split_offset_len(self.u64_at(slot)?);
                let all = self.bytes(off, len, "variant var part")?;
                let Some((vs, rest)) = all.split_first_chunk::<4>() else {
                    return Err(corrupt(self.origin, "variant shorter than 4 bytes"));
                };
                let vs = i32::from_le_bytes(*vs);
                let vs = usize::try_from(vs)
                    .ok()
                    .filter(|v| *v <= rest.len())
                    .ok_or_else(|| {
                        corrupt(
                            self.origin,
                            format!("variant value size {vs} exceeds {} bytes", rest.len()),
                        )
                    })?;
                Datum::Variant {
                    value: rest[..vs].to_vec(),
                    metadata: rest[vs..].to_vec(),
                }
            }
            TypeKind::Array(elem) => {
                let (off, len) = split_offset_len(self.u64_at(slot)?);
                let sub = self.bytes(off, len, "nested array")?;
                Datum::Array(read_array(sub, elem, self.origin)?)
            }
            TypeKind::Map(k, v) => {
                let (off, len) = split_offset_len(self.u64_at(slot)?);
                let sub = self.bytes(off, len, "nested map")?;
                Datum::Map(read_map(sub, k, v, self.origin)?)
            }
            TypeKind::Multiset(elem) => {
                let (off, len) = split_offset_len(self.u64_at(slot)?);
                let sub = self.bytes(off, len, "nested multiset")?;
                let count = DataType::not_null(TypeKind::Int);
                Datum::Map(read_map(sub, elem, &count, self.origin)?)
            }
            TypeKind::Row(fields) => {
                let (off, len) = split_offset_len(self.u64_at(slot)?);
                let sub = self.bytes(off, len, "nested row")?;
                let reader = RowReader::new(sub, fields.len(), self.origin)?;
                let values = fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| reader.get(i, &f.data_type))
                    .collect::<Result<Vec<_>>>()?;
                Datum::Row(values)
            }
            TypeKind::Vector { .. } | TypeKind::Other(_) => {
                return Err(Error::unsupported(format!(
                    "binary row values of type {:?}",
                    ty.kind
                )));
            }
        })
    }

    /// String/binary bytes: inline (mark bit set, ≤ 7 bytes in the slot) or var part.
    fn var_bytes(&self, slot: usize) -> Result<&'a [u8]> {
        let raw = self.u64_at(slot)?;
        if raw & (1 << 63) != 0 {
            let len = ((raw >> 56) & 0x7f) as usize;
            if len > 7 {
                return Err(corrupt(
                    self.origin,
                    format!("inline value length {len} exceeds 7 bytes"),
                ));
            }
            self.bytes(slot, len, "inline value")
        } else {
            let (off, len) = split_offset_len(raw);
            self.bytes(off, len, "var-length value")
        }
    }
}

fn split_offset_len(raw: u64) -> (usize, usize) {
    ((raw >> 32) as usize, (raw & 0xffff_ffff) as usize)
}

fn be_bytes_to_i128(bytes: &[u8]) -> i128 {
    let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut a = [fill; 16];
    a[16 - bytes.len()..].copy_from_slice(bytes);
    i128::from_be_bytes(a)
}

struct RowReader<'a> {
    c: Container<'a>,
    arity: usize,
    null_bytes: usize,
}

impl<'a> RowReader<'a> {
    fn new(buf: &'a [u8], arity: usize, origin: &'a str) -> Result<Self> {
        let fixed = fixed_part_size(arity)
            .ok_or_else(|| corrupt(origin, format!("binary row arity {arity} is too large")))?;
        if buf.len() < fixed {
            return Err(corrupt(
                origin,
                format!(
                    "binary row of arity {arity} needs at least {fixed} bytes, has {}",
                    buf.len()
                ),
            ));
        }
        Ok(RowReader {
            c: Container { buf, origin },
            arity,
            null_bytes: null_bits_size_in_bytes(arity),
        })
    }

    fn check_pos(&self, pos: usize) -> Result<()> {
        if pos >= self.arity {
            return Err(corrupt(
                self.c.origin,
                format!(
                    "field {pos} requested from a binary row of arity {}",
                    self.arity
                ),
            ));
        }
        Ok(())
    }

    fn is_null(&self, pos: usize) -> bool {
        let bit = pos + 8;
        self.c
            .buf
            .get(bit >> 3)
            .is_some_and(|b| b & (1 << (bit & 7)) != 0)
    }

    fn get(&self, pos: usize, ty: &DataType) -> Result<Datum> {
        if self.is_null(pos) {
            return Ok(Datum::Null);
        }
        self.c.value(self.null_bytes + 8 * pos, ty)
    }
}

/// Header bytes of an array of `n` elements: `4 + ((n + 31) / 32) × 4`.
fn array_header_size(n: usize) -> Option<usize> {
    n.checked_add(31)?
        .checked_div(32)?
        .checked_mul(4)?
        .checked_add(4)
}

fn read_array(buf: &[u8], elem: &DataType, origin: &str) -> Result<Vec<Datum>> {
    let c = Container { buf, origin };
    let head = c.bytes(0, 4, "array size")?;
    let n = i32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let n = usize::try_from(n)
        .map_err(|_| corrupt(origin, format!("negative binary array size {n}")))?;
    let width = element_size(elem)?;
    let header = array_header_size(n);
    let end = header.and_then(|h| n.checked_mul(width)?.checked_add(h));
    let (Some(header), Some(end)) = (header, end) else {
        return Err(corrupt(
            origin,
            format!("binary array size {n} is too large"),
        ));
    };
    if end > buf.len() {
        return Err(corrupt(
            origin,
            format!(
                "binary array of {n} elements needs {end} bytes, section has {}",
                buf.len()
            ),
        ));
    }
    (0..n)
        .map(|i| {
            let null = buf[4 + (i >> 3)] & (1 << (i & 7)) != 0;
            if null {
                Ok(Datum::Null)
            } else {
                c.value(header + i * width, elem)
            }
        })
        .collect()
}

fn read_map(
    buf: &[u8],
    key: &DataType,
    value: &DataType,
    origin: &str,
) -> Result<Vec<(Datum, Datum)>> {
    let c = Container { buf, origin };
    let head = c.bytes(0, 4, "map key-array size")?;
    let kb = i32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let kb = usize::try_from(kb)
        .map_err(|_| corrupt(origin, format!("negative map key-array size {kb}")))?;
    let keys = c.bytes(4, kb, "map key array")?;
    let values = &buf[4 + kb..];
    let keys = read_array(keys, key, origin)?;
    let values = read_array(values, value, origin)?;
    if keys.len() != values.len() {
        return Err(corrupt(
            origin,
            format!("map has {} keys but {} values", keys.len(), values.len()),
        ));
    }
    Ok(keys.into_iter().zip(values).collect())
}

#[cfg(test)]
mod tests;
