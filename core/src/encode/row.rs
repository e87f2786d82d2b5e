//! Arrow rows as Paimon [`BinaryRow`]s (partitions, keys, bucket keys) and [`Datum`]s.
//!
//! Source: Java `org.apache.paimon.data.BinaryRowWriter` / `AbstractBinaryWriter` (the bytes),
//! `org.apache.paimon.utils.RowHelper` and the generated projections of
//! `org.apache.paimon.codegen.ProjectionCodeGenerator` (how nulls are written), and
//! `org.apache.paimon.arrow.converter.Arrow2PaimonVectorConverter` (what an Arrow value means
//! as a Paimon internal value). Byte layout: `spec/table-layout.md` §6.
//!
//! The Arrow side is what [`crate::types::paimon_to_arrow_type`] produces for the Paimon type
//! (`Int32` for `INT`, `Date32` for `DATE`, `Timestamp(unit, tz)` for `TIMESTAMP(p)`, ...).
//! Some equivalent physical types are accepted as well: `LargeUtf8`/`Utf8View` for strings,
//! `LargeBinary`/`BinaryView`/`FixedSizeBinary` for binaries, any `Timestamp` unit (the unit
//! of the array decides how values are read), `Time32(Second)`/`Time64` for `TIME`, `Date64`
//! for `DATE`. Anything else is an [`Error::Invalid`] naming the column.
//!
//! [`BinaryRowEncoder`] writes flat rows straight into a byte buffer (no [`Datum`] per cell):
//! the bucket of every row of a batch is computed without allocating per row. Rows with a
//! nested field (`ARRAY`, `MAP`, `MULTISET`, `ROW`, `VARIANT`) go through [`datum_at`] and
//! [`BinaryRow::encode`].

use std::sync::{Arc, OnceLock};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Decimal128Array,
    FixedSizeBinaryArray, Int8Array, LargeBinaryArray, LargeStringArray, PrimitiveArray,
    StringArray, StringViewArray,
};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType as ArrowType, TimeUnit};

use crate::error::{Error, Result};
use crate::spec::binary_row::{
    BinaryRow, Datum, MAX_COMPACT_DECIMAL_PRECISION, MAX_COMPACT_TIMESTAMP_PRECISION, RowOrigin,
    null_bits_size_in_bytes,
};
use crate::spec::types::{DataType, TypeKind};

/// Origin of rows built here (shown in errors about them).
fn encoded_origin() -> RowOrigin {
    static ORIGIN: OnceLock<RowOrigin> = OnceLock::new();
    ORIGIN
        .get_or_init(|| RowOrigin::new("row encoded from arrow"))
        .clone()
}

fn mismatch(ty: &DataType, arrow: &ArrowType) -> Error {
    Error::invalid(format!(
        "arrow column of type {arrow} cannot hold Paimon {} values",
        ty.sql_string()
    ))
}

/// `(epoch millis, nano of milli)` of a timestamp `value` counted in `unit` (floor division,
/// as Java `Timestamp.fromMicros`).
///
/// # Errors
/// [`Error::Invalid`] if seconds overflow the millisecond range.
pub(crate) fn timestamp_parts(value: i64, unit: TimeUnit) -> Result<(i64, i32)> {
    Ok(match unit {
        TimeUnit::Second => (
            value.checked_mul(1000).ok_or_else(|| {
                Error::invalid(format!(
                    "timestamp of {value} seconds overflows epoch millis"
                ))
            })?,
            0,
        ),
        TimeUnit::Millisecond => (value, 0),
        TimeUnit::Microsecond => (
            value.div_euclid(1000),
            (value.rem_euclid(1000) * 1000) as i32,
        ),
        TimeUnit::Nanosecond => (
            value.div_euclid(1_000_000),
            value.rem_euclid(1_000_000) as i32,
        ),
    })
}

/// Milliseconds of the day of a TIME value at `row` of a `Time32`/`Time64` array.
fn time_millis_at(array: &dyn Array, row: usize) -> Option<i32> {
    Some(match array.data_type() {
        ArrowType::Time32(TimeUnit::Millisecond) => {
            array.as_primitive::<Time32MillisecondType>().value(row)
        }
        ArrowType::Time32(TimeUnit::Second) => array
            .as_primitive::<Time32SecondType>()
            .value(row)
            .wrapping_mul(1000),
        ArrowType::Time64(TimeUnit::Microsecond) => array
            .as_primitive::<Time64MicrosecondType>()
            .value(row)
            .div_euclid(1000) as i32,
        ArrowType::Time64(TimeUnit::Nanosecond) => array
            .as_primitive::<Time64NanosecondType>()
            .value(row)
            .div_euclid(1_000_000) as i32,
        _ => return None,
    })
}

/// Raw `i64` values and unit of a timestamp array.
fn timestamp_values(array: &dyn Array) -> Option<(ScalarBuffer<i64>, TimeUnit)> {
    Some(match array.data_type() {
        ArrowType::Timestamp(TimeUnit::Second, _) => (
            array.as_primitive::<TimestampSecondType>().values().clone(),
            TimeUnit::Second,
        ),
        ArrowType::Timestamp(TimeUnit::Millisecond, _) => (
            array
                .as_primitive::<TimestampMillisecondType>()
                .values()
                .clone(),
            TimeUnit::Millisecond,
        ),
        ArrowType::Timestamp(TimeUnit::Microsecond, _) => (
            array
                .as_primitive::<TimestampMicrosecondType>()
                .values()
                .clone(),
            TimeUnit::Microsecond,
        ),
        ArrowType::Timestamp(TimeUnit::Nanosecond, _) => (
            array
                .as_primitive::<TimestampNanosecondType>()
                .values()
                .clone(),
            TimeUnit::Nanosecond,
        ),
        _ => return None,
    })
}

/// Bytes of a string or binary value at `row` (any string/binary flavour).
fn bytes_at(array: &dyn Array, row: usize) -> Option<&[u8]> {
    Some(match array.data_type() {
        ArrowType::Utf8 => array.as_string::<i32>().value(row).as_bytes(),
        ArrowType::LargeUtf8 => array.as_string::<i64>().value(row).as_bytes(),
        ArrowType::Utf8View => array.as_string_view().value(row).as_bytes(),
        ArrowType::Binary => array.as_binary::<i32>().value(row),
        ArrowType::LargeBinary => array.as_binary::<i64>().value(row),
        ArrowType::BinaryView => array.as_binary_view().value(row),
        ArrowType::FixedSizeBinary(_) => array.as_fixed_size_binary().value(row),
        _ => return None,
    })
}

fn is_string_type(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View
    )
}

fn is_binary_type(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Binary
            | ArrowType::LargeBinary
            | ArrowType::BinaryView
            | ArrowType::FixedSizeBinary(_)
    )
}

/// The value at `row` of `array` as the Paimon internal value of `data_type`.
///
/// Nested types are converted recursively: `ARRAY` from `List`/`LargeList`/`FixedSizeList`,
/// `MAP` and `MULTISET` from `Map` (entries in stored order; a multiset's counts are `Int`),
/// `ROW` from `Struct` (fields by position), `VARIANT` from a `Struct{value, metadata}`.
///
/// # Errors
/// [`Error::Invalid`] if `row` is out of bounds or the Arrow type cannot hold values of
/// `data_type` (see the module docs); [`Error::Unsupported`] for `VECTOR` and unknown types.
pub fn datum_at(array: &dyn Array, data_type: &DataType, row: usize) -> Result<Datum> {
    if row >= array.len() {
        return Err(Error::invalid(format!(
            "row {row} requested from an arrow column of {} rows",
            array.len()
        )));
    }
    if array.is_null(row) {
        return Ok(Datum::Null);
    }
    let at = array.data_type();
    let bad = || mismatch(data_type, at);
    Ok(match &data_type.kind {
        TypeKind::Boolean => Datum::Boolean(
            array
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::TinyInt => Datum::TinyInt(
            array
                .as_primitive_opt::<Int8Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::SmallInt => Datum::SmallInt(
            array
                .as_primitive_opt::<Int16Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Int => Datum::Int(
            array
                .as_primitive_opt::<Int32Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::BigInt => Datum::BigInt(
            array
                .as_primitive_opt::<Int64Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Float => Datum::Float(
            array
                .as_primitive_opt::<Float32Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Double => Datum::Double(
            array
                .as_primitive_opt::<Float64Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Decimal { precision, scale } => {
            let arr = decimal_array(array, data_type)?;
            Datum::Decimal {
                unscaled: arr.value(row),
                precision: *precision,
                scale: *scale,
            }
        }
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => {
            if !is_string_type(at) {
                return Err(bad());
            }
            let bytes = bytes_at(array, row).ok_or_else(bad)?;
            Datum::String(String::from_utf8_lossy(bytes).into_owned())
        }
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } | TypeKind::Blob => {
            if !is_binary_type(at) {
                return Err(bad());
            }
            Datum::Binary(bytes_at(array, row).ok_or_else(bad)?.to_vec())
        }
        TypeKind::Date => match at {
            ArrowType::Date32 => Datum::Date(array.as_primitive::<Date32Type>().value(row)),
            ArrowType::Date64 => Datum::Date(
                array
                    .as_primitive::<Date64Type>()
                    .value(row)
                    .div_euclid(86_400_000) as i32,
            ),
            _ => return Err(bad()),
        },
        TypeKind::Time { .. } => Datum::Time(time_millis_at(array, row).ok_or_else(bad)?),
        TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. } => {
            let (values, unit) = timestamp_values(array).ok_or_else(bad)?;
            let (millis, nanos_of_milli) = timestamp_parts(values[row], unit)?;
            Datum::Timestamp {
                millis,
                nanos_of_milli,
            }
        }
        TypeKind::Array(element) => {
            let items = match at {
                ArrowType::List(_) => array.as_list::<i32>().value(row),
                ArrowType::LargeList(_) => array.as_list::<i64>().value(row),
                ArrowType::FixedSizeList(_, _) => array.as_fixed_size_list().value(row),
                _ => return Err(bad()),
            };
            Datum::Array(
                (0..items.len())
                    .map(|i| datum_at(items.as_ref(), element, i))
                    .collect::<Result<_>>()?,
            )
        }
        TypeKind::Map(key, value) => Datum::Map(map_entries(array, row, key, value, data_type)?),
        TypeKind::Multiset(element) => {
            let count = DataType::not_null(TypeKind::Int);
            Datum::Map(map_entries(array, row, element, &count, data_type)?)
        }
        TypeKind::Row(fields) => {
            let s = array.as_struct_opt().ok_or_else(bad)?;
            if s.num_columns() != fields.len() {
                return Err(bad());
            }
            Datum::Row(
                s.columns()
                    .iter()
                    .zip(fields)
                    .map(|(c, f)| datum_at(c.as_ref(), &f.data_type, row))
                    .collect::<Result<_>>()?,
            )
        }
        TypeKind::Variant => {
            let s = array.as_struct_opt().ok_or_else(bad)?;
            let (Some(value), Some(metadata)) =
                (s.column_by_name("value"), s.column_by_name("metadata"))
            else {
                return Err(bad());
            };
            let value = bytes_at(value.as_ref(), row).ok_or_else(bad)?.to_vec();
            let metadata = bytes_at(metadata.as_ref(), row).ok_or_else(bad)?.to_vec();
            Datum::Variant { value, metadata }
        }
        TypeKind::Vector { .. } | TypeKind::Other(_) => {
            return Err(Error::unsupported(format!(
                "Paimon values of type {} from arrow",
                data_type.sql_string()
            )));
        }
    })
}

fn decimal_array<'a>(array: &'a dyn Array, data_type: &DataType) -> Result<&'a Decimal128Array> {
    let TypeKind::Decimal { scale, .. } = &data_type.kind else {
        return Err(mismatch(data_type, array.data_type()));
    };
    match array.data_type() {
        ArrowType::Decimal128(_, s) if i64::from(*s) == i64::from(*scale) => {
            Ok(array.as_primitive::<Decimal128Type>())
        }
        other => Err(mismatch(data_type, other)),
    }
}

fn map_entries(
    array: &dyn Array,
    row: usize,
    key: &DataType,
    value: &DataType,
    data_type: &DataType,
) -> Result<Vec<(Datum, Datum)>> {
    let map = array
        .as_map_opt()
        .ok_or_else(|| mismatch(data_type, array.data_type()))?;
    let entries = map.value(row);
    if entries.num_columns() != 2 {
        return Err(mismatch(data_type, array.data_type()));
    }
    let (keys, values) = (entries.column(0), entries.column(1));
    (0..entries.len())
        .map(|i| {
            Ok((
                datum_at(keys.as_ref(), key, i)?,
                datum_at(values.as_ref(), value, i)?,
            ))
        })
        .collect()
}

/// One column prepared for encoding: the typed array, looked up once.
enum Col<'a> {
    Bool(&'a BooleanArray),
    I8(&'a PrimitiveArray<Int8Type>),
    I16(&'a PrimitiveArray<Int16Type>),
    /// `INT`, `DATE` (from `Date32`).
    I32(&'a dyn Array, ScalarBuffer<i32>),
    I64(&'a PrimitiveArray<Int64Type>),
    F32(&'a PrimitiveArray<Float32Type>),
    F64(&'a PrimitiveArray<Float64Type>),
    /// `DATE` from `Date64`, `TIME` from any unit: converted per value.
    Converted(&'a dyn Array, &'a DataType),
    DecimalCompact(&'a Decimal128Array),
    DecimalWide(&'a Decimal128Array),
    Str(&'a StringArray),
    LargeStr(&'a LargeStringArray),
    StrView(&'a StringViewArray),
    Bin(&'a BinaryArray),
    LargeBin(&'a LargeBinaryArray),
    BinView(&'a BinaryViewArray),
    FixedBin(&'a FixedSizeBinaryArray),
    TimestampCompact(&'a dyn Array, ScalarBuffer<i64>, TimeUnit),
    TimestampWide(&'a dyn Array, ScalarBuffer<i64>, TimeUnit),
}

impl<'a> Col<'a> {
    fn is_null(&self, row: usize) -> bool {
        match self {
            Col::Bool(a) => a.is_null(row),
            Col::I8(a) => a.is_null(row),
            Col::I16(a) => a.is_null(row),
            Col::I32(a, _) => a.is_null(row),
            Col::I64(a) => a.is_null(row),
            Col::F32(a) => a.is_null(row),
            Col::F64(a) => a.is_null(row),
            Col::Converted(a, _) => a.is_null(row),
            Col::DecimalCompact(a) | Col::DecimalWide(a) => a.is_null(row),
            Col::Str(a) => a.is_null(row),
            Col::LargeStr(a) => a.is_null(row),
            Col::StrView(a) => a.is_null(row),
            Col::Bin(a) => a.is_null(row),
            Col::LargeBin(a) => a.is_null(row),
            Col::BinView(a) => a.is_null(row),
            Col::FixedBin(a) => a.is_null(row),
            Col::TimestampCompact(a, _, _) | Col::TimestampWide(a, _, _) => a.is_null(row),
        }
    }

    fn prepare(array: &'a dyn Array, ty: &'a DataType) -> Result<Option<Self>> {
        let at = array.data_type();
        let bad = || mismatch(ty, at);
        Ok(Some(match &ty.kind {
            TypeKind::Boolean => Col::Bool(
                array
                    .as_any()
                    .downcast_ref::<BooleanArray>()
                    .ok_or_else(bad)?,
            ),
            TypeKind::TinyInt => Col::I8(array.as_primitive_opt().ok_or_else(bad)?),
            TypeKind::SmallInt => Col::I16(array.as_primitive_opt().ok_or_else(bad)?),
            TypeKind::Int => Col::I32(
                array,
                array
                    .as_primitive_opt::<Int32Type>()
                    .ok_or_else(bad)?
                    .values()
                    .clone(),
            ),
            TypeKind::BigInt => Col::I64(array.as_primitive_opt().ok_or_else(bad)?),
            TypeKind::Float => Col::F32(array.as_primitive_opt().ok_or_else(bad)?),
            TypeKind::Double => Col::F64(array.as_primitive_opt().ok_or_else(bad)?),
            TypeKind::Date => match at {
                ArrowType::Date32 => {
                    Col::I32(array, array.as_primitive::<Date32Type>().values().clone())
                }
                ArrowType::Date64 => Col::Converted(array, ty),
                _ => return Err(bad()),
            },
            TypeKind::Time { .. } => match at {
                ArrowType::Time32(TimeUnit::Millisecond) => Col::I32(
                    array,
                    array
                        .as_primitive::<Time32MillisecondType>()
                        .values()
                        .clone(),
                ),
                ArrowType::Time32(_) | ArrowType::Time64(_) => Col::Converted(array, ty),
                _ => return Err(bad()),
            },
            TypeKind::Decimal { precision, .. } => {
                let arr = decimal_array(array, ty)?;
                if *precision <= MAX_COMPACT_DECIMAL_PRECISION {
                    Col::DecimalCompact(arr)
                } else {
                    Col::DecimalWide(arr)
                }
            }
            TypeKind::Char { .. } | TypeKind::VarChar { .. } => match at {
                ArrowType::Utf8 => Col::Str(array.as_string()),
                ArrowType::LargeUtf8 => Col::LargeStr(array.as_string()),
                ArrowType::Utf8View => Col::StrView(array.as_string_view()),
                _ => return Err(bad()),
            },
            TypeKind::Binary { .. } | TypeKind::VarBinary { .. } | TypeKind::Blob => match at {
                ArrowType::Binary => Col::Bin(array.as_binary()),
                ArrowType::LargeBinary => Col::LargeBin(array.as_binary()),
                ArrowType::BinaryView => Col::BinView(array.as_binary_view()),
                ArrowType::FixedSizeBinary(_) => Col::FixedBin(array.as_fixed_size_binary()),
                _ => return Err(bad()),
            },
            TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision } => {
                let (values, unit) = timestamp_values(array).ok_or_else(bad)?;
                if *precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                    Col::TimestampCompact(array, values, unit)
                } else {
                    Col::TimestampWide(array, values, unit)
                }
            }
            TypeKind::Array(_)
            | TypeKind::Multiset(_)
            | TypeKind::Map(_, _)
            | TypeKind::Row(_)
            | TypeKind::Variant => return Ok(None),
            TypeKind::Vector { .. } | TypeKind::Other(_) => {
                return Err(Error::unsupported(format!(
                    "binary row values of type {}",
                    ty.sql_string()
                )));
            }
        }))
    }
}

fn round_to_word(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Append `bytes` zero-padded to 8 bytes; `(offset << 32) | len`.
fn append_var(out: &mut Vec<u8>, bytes: &[u8]) -> Result<u64> {
    let off = out.len();
    out.extend_from_slice(bytes);
    out.resize(off + round_to_word(bytes.len()), 0);
    let (Ok(off32), Ok(len32)) = (u32::try_from(off), u32::try_from(bytes.len())) else {
        return Err(Error::invalid("binary row encode: row exceeds 4 GiB"));
    };
    Ok((u64::from(off32) << 32) | u64::from(len32))
}

fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    out[at..at + bytes.len()].copy_from_slice(bytes);
}

fn write_var_bytes(out: &mut Vec<u8>, slot: usize, bytes: &[u8]) -> Result<()> {
    if bytes.len() <= 7 {
        let mut v = [0u8; 8];
        v[..bytes.len()].copy_from_slice(bytes);
        v[7] = 0x80 | bytes.len() as u8;
        put(out, slot, &v);
    } else {
        let v = append_var(out, bytes)?;
        put(out, slot, &v.to_le_bytes());
    }
    Ok(())
}

/// Minimal big-endian two's-complement bytes of `v` (Java `BigInteger#toByteArray`) at the
/// start of a 16-byte buffer, and their length.
fn min_be_bytes(v: i128) -> ([u8; 16], usize) {
    let full = v.to_be_bytes();
    let min = crate::util::minimal_twos_complement(&full);
    let mut out = [0u8; 16];
    out[..min.len()].copy_from_slice(min);
    (out, min.len())
}

/// Encodes rows of a set of Arrow columns as [`BinaryRow`] bytes, byte for byte as Java's
/// `BinaryRowWriter` through `RowHelper` / a generated projection writes them (row kind
/// INSERT; a null non-compact DECIMAL/TIMESTAMP still reserves its 16/8 var bytes).
///
/// Source: Java `org.apache.paimon.data.BinaryRowWriter`, `org.apache.paimon.utils.RowHelper`.
pub struct BinaryRowEncoder<'a> {
    columns: Vec<&'a ArrayRef>,
    types: &'a [DataType],
    /// Typed flat columns; `None` when some field is nested (rows then go through
    /// [`datum_at`] and [`BinaryRow::encode`]).
    flat: Option<Vec<Col<'a>>>,
    num_rows: usize,
}

impl<'a> BinaryRowEncoder<'a> {
    /// An encoder over `columns` typed by `types` (one type per column, same length).
    ///
    /// # Errors
    /// [`Error::Invalid`] if the counts or the column lengths differ, or a column's Arrow type
    /// cannot hold its Paimon type; [`Error::Unsupported`] for types without a binary-row form
    /// (`VECTOR`, unknown types).
    pub fn try_new(columns: &'a [ArrayRef], types: &'a [DataType]) -> Result<Self> {
        Self::over(columns.iter().collect(), types)
    }

    /// An encoder over the columns at `indices` of `columns` (a batch's columns), typed by
    /// `types` (one type per index): the rows [`RowProjection::encoder`] encodes.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an index past the columns; as [`BinaryRowEncoder::try_new`].
    pub fn try_new_projected(
        columns: &'a [ArrayRef],
        indices: &[usize],
        types: &'a [DataType],
    ) -> Result<Self> {
        let projected = indices
            .iter()
            .map(|&i| {
                columns.get(i).ok_or_else(|| {
                    Error::invalid(format!(
                        "binary row encode: column #{i} of a batch of {} columns",
                        columns.len()
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Self::over(projected, types)
    }

    fn over(columns: Vec<&'a ArrayRef>, types: &'a [DataType]) -> Result<Self> {
        if columns.len() != types.len() {
            return Err(Error::invalid(format!(
                "binary row encode: {} columns for {} types",
                columns.len(),
                types.len()
            )));
        }
        let num_rows = columns.first().map_or(0, |c| c.len());
        if let Some(c) = columns.iter().find(|c| c.len() != num_rows) {
            return Err(Error::invalid(format!(
                "binary row encode: columns of {num_rows} and {} rows",
                c.len()
            )));
        }
        let mut flat = Some(Vec::with_capacity(columns.len()));
        for (c, ty) in columns.iter().copied().zip(types) {
            match Col::prepare(c.as_ref(), ty)? {
                Some(col) => {
                    if let Some(f) = flat.as_mut() {
                        f.push(col);
                    }
                }
                None => flat = None,
            }
        }
        Ok(BinaryRowEncoder {
            columns,
            types,
            flat,
            num_rows,
        })
    }

    /// Number of rows of the columns.
    pub fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// Number of fields of each row.
    pub fn arity(&self) -> usize {
        self.types.len()
    }

    /// Write the row bytes (header, null bits, fixed slots, var part; no arity prefix) of row
    /// `row` into `out`, replacing its content.
    ///
    /// # Errors
    /// [`Error::Invalid`] if `row` is out of bounds, a compact DECIMAL does not fit 64 bits or
    /// a timestamp overflows epoch millis.
    pub fn encode_into(&self, row: usize, out: &mut Vec<u8>) -> Result<()> {
        if row >= self.num_rows {
            return Err(Error::invalid(format!(
                "binary row encode: row {row} of {} rows",
                self.num_rows
            )));
        }
        let Some(cols) = &self.flat else {
            let values = self
                .columns
                .iter()
                .zip(self.types)
                .map(|(c, ty)| datum_at(c.as_ref(), ty, row))
                .collect::<Result<Vec<_>>>()?;
            let encoded = BinaryRow::encode(&values, self.types)?;
            out.clear();
            out.extend_from_slice(encoded.row_bytes());
            return Ok(());
        };
        let arity = cols.len();
        let null_bytes = null_bits_size_in_bytes(arity);
        out.clear();
        out.resize(null_bytes + 8 * arity, 0);
        for (i, col) in cols.iter().enumerate() {
            let slot = null_bytes + 8 * i;
            if col.is_null(row) {
                let bit = i + 8;
                out[bit >> 3] |= 1 << (bit & 7);
                let reserve = match col {
                    Col::DecimalWide(_) => 16,
                    Col::TimestampWide(..) => 8,
                    _ => 0,
                };
                if reserve > 0 {
                    let v = append_var(out, &[0; 16][..reserve])?;
                    put(out, slot, &(v & !0xffff_ffff).to_le_bytes());
                }
                continue;
            }
            match col {
                Col::Bool(a) => out[slot] = u8::from(a.value(row)),
                Col::I8(a) => out[slot] = a.value(row) as u8,
                Col::I16(a) => put(out, slot, &a.value(row).to_le_bytes()),
                Col::I32(_, v) => put(out, slot, &v[row].to_le_bytes()),
                Col::I64(a) => put(out, slot, &a.value(row).to_le_bytes()),
                Col::F32(a) => put(out, slot, &a.value(row).to_le_bytes()),
                Col::F64(a) => put(out, slot, &a.value(row).to_le_bytes()),
                Col::Converted(a, ty) => {
                    let v = match datum_at(*a, ty, row)? {
                        Datum::Date(v) | Datum::Time(v) => v,
                        other => {
                            return Err(Error::invalid(format!(
                                "binary row encode: unexpected value {other:?}"
                            )));
                        }
                    };
                    put(out, slot, &v.to_le_bytes());
                }
                Col::DecimalCompact(a) => {
                    let unscaled = a.value(row);
                    let v = i64::try_from(unscaled).map_err(|_| {
                        Error::invalid(format!(
                            "binary row encode: unscaled decimal {unscaled} does not fit a \
                             compact DECIMAL (precision <= 18)"
                        ))
                    })?;
                    put(out, slot, &v.to_le_bytes());
                }
                Col::DecimalWide(a) => {
                    let (bytes, len) = min_be_bytes(a.value(row));
                    let v = append_var(out, &bytes)?;
                    // The slot records the real length, not the reserved 16.
                    put(out, slot, &((v & !0xffff_ffff) | len as u64).to_le_bytes());
                }
                Col::Str(a) => write_var_bytes(out, slot, a.value(row).as_bytes())?,
                Col::LargeStr(a) => write_var_bytes(out, slot, a.value(row).as_bytes())?,
                Col::StrView(a) => write_var_bytes(out, slot, a.value(row).as_bytes())?,
                Col::Bin(a) => write_var_bytes(out, slot, a.value(row))?,
                Col::LargeBin(a) => write_var_bytes(out, slot, a.value(row))?,
                Col::BinView(a) => write_var_bytes(out, slot, a.value(row))?,
                Col::FixedBin(a) => write_var_bytes(out, slot, a.value(row))?,
                Col::TimestampCompact(_, v, unit) => {
                    let (millis, _) = timestamp_parts(v[row], *unit)?;
                    put(out, slot, &millis.to_le_bytes());
                }
                Col::TimestampWide(_, v, unit) => {
                    let (millis, nanos) = timestamp_parts(v[row], *unit)?;
                    let v = append_var(out, &millis.to_le_bytes())?;
                    let v = (v & !0xffff_ffff) | u64::from(nanos as u32);
                    put(out, slot, &v.to_le_bytes());
                }
            }
        }
        Ok(())
    }

    /// Row `row` as a [`BinaryRow`].
    ///
    /// # Errors
    /// As [`BinaryRowEncoder::encode_into`].
    pub fn encode(&self, row: usize) -> Result<BinaryRow> {
        let mut out = Vec::new();
        self.encode_into(row, &mut out)?;
        BinaryRow::from_row_bytes(self.arity(), &out, encoded_origin())
    }

    /// Row `row` in the serialized form of [`BinaryRow::to_serialized`] (`int32 BE arity ‖
    /// row bytes`), the key of per-partition maps, without a [`BinaryRow`] in between.
    ///
    /// # Errors
    /// As [`BinaryRowEncoder::encode_into`]; [`Error::Invalid`] if the arity does not fit an
    /// `int32`.
    pub fn encode_serialized(&self, row: usize) -> Result<Vec<u8>> {
        let arity = i32::try_from(self.arity()).map_err(|_| {
            Error::invalid(format!("binary row arity {} is too large", self.arity()))
        })?;
        let mut out = Vec::new();
        self.encode_into(row, &mut out)?;
        out.splice(0..0, arity.to_be_bytes());
        Ok(out)
    }

    /// Java `BinaryRow#hashCode` of row `row` (as [`BinaryRow::hash_code`]), encoded into
    /// `scratch` (its content replaced) instead of a new buffer.
    ///
    /// # Errors
    /// As [`BinaryRowEncoder::encode_into`].
    pub fn hash_code(&self, row: usize, scratch: &mut Vec<u8>) -> Result<i32> {
        self.encode_into(row, scratch)?;
        Ok(crate::spec::murmur::hash_bytes(scratch))
    }
}

/// Row `row` of `columns` (typed by `types`) as a [`BinaryRow`], as Java's `BinaryRowWriter`
/// writes it (see [`BinaryRowEncoder`]).
///
/// # Errors
/// As [`BinaryRowEncoder::try_new`] and [`BinaryRowEncoder::encode_into`].
pub fn binary_row_at(columns: &[ArrayRef], types: &[DataType], row: usize) -> Result<BinaryRow> {
    BinaryRowEncoder::try_new(columns, types)?.encode(row)
}

/// Every row of `columns` as a [`BinaryRow`] (see [`BinaryRowEncoder`]).
///
/// # Errors
/// As [`binary_row_at`].
pub fn binary_rows(columns: &[ArrayRef], types: &[DataType]) -> Result<Vec<BinaryRow>> {
    let encoder = BinaryRowEncoder::try_new(columns, types)?;
    let origin = encoded_origin();
    let mut buf = Vec::new();
    (0..encoder.num_rows())
        .map(|row| {
            encoder.encode_into(row, &mut buf)?;
            BinaryRow::from_row_bytes(encoder.arity(), &buf, origin.clone())
        })
        .collect()
}

/// The columns of a batch that form a [`BinaryRow`] (the partition, the primary key, the
/// bucket key): their positions among the batch's columns and their Paimon types. A writer
/// prepares one per row kind it needs once, from its schema; a batch then gets one
/// [`BinaryRowEncoder`] per projection ([`RowProjection::encoder`]) for all of its rows.
///
/// Source: Java's generated projections (`org.apache.paimon.codegen.ProjectionCodeGenerator`),
/// created once per writer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowProjection {
    indices: Vec<usize>,
    types: Vec<DataType>,
}

impl RowProjection {
    /// The projection of the columns at `indices`, typed by `types` (one type per index).
    ///
    /// # Errors
    /// [`Error::Invalid`] if the counts differ.
    pub fn try_new(indices: Vec<usize>, types: Vec<DataType>) -> Result<Self> {
        if indices.len() != types.len() {
            return Err(Error::invalid(format!(
                "row projection: {} columns for {} types",
                indices.len(),
                types.len()
            )));
        }
        Ok(RowProjection { indices, types })
    }

    /// Positions of the projected columns among a batch's columns.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// Paimon types of the projected columns.
    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// Number of projected columns.
    pub fn len(&self) -> usize {
        self.indices.len()
    }

    /// True when no column is projected (an unpartitioned table's partition).
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// The projected columns of `columns` (a batch's columns), in projection order.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an index past the columns.
    pub fn columns(&self, columns: &[ArrayRef]) -> Result<Vec<ArrayRef>> {
        self.indices
            .iter()
            .map(|&i| {
                columns.get(i).map(Arc::clone).ok_or_else(|| {
                    Error::invalid(format!(
                        "row projection: column #{i} of a batch of {} columns",
                        columns.len()
                    ))
                })
            })
            .collect()
    }

    /// The encoder of the projected rows of `columns` (a batch's columns).
    ///
    /// # Errors
    /// As [`BinaryRowEncoder::try_new_projected`].
    pub fn encoder<'a>(&'a self, columns: &'a [ArrayRef]) -> Result<BinaryRowEncoder<'a>> {
        BinaryRowEncoder::try_new_projected(columns, &self.indices, &self.types)
    }
}

/// Row kinds as `_VALUE_KIND` bytes from a Utf8 (`+I`, `-U`, `+U`, `-D`) or Int8 (0..=3)
/// column.
pub(crate) fn row_kinds(col: &ArrayRef, name: &str) -> Result<ArrayRef> {
    let bad = |row: usize, v: String| {
        Error::invalid(format!(
            "row {row} of column '{name}': '{v}' is not a row kind (+I, -U, +U, -D)"
        ))
    };
    let mut out = Vec::with_capacity(col.len());
    match col.data_type() {
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => {
            let s = arrow_cast::cast(col, &ArrowType::Utf8)
                .map_err(|e| Error::arrow("reading row kinds", e))?;
            let s = s.as_string::<i32>();
            for r in 0..s.len() {
                if s.is_null(r) {
                    out.push(0);
                    continue;
                }
                let v = s.value(r);
                let b = match v {
                    "+I" => 0,
                    "-U" => 1,
                    "+U" => 2,
                    "-D" => 3,
                    _ => return Err(bad(r, v.to_owned())),
                };
                out.push(b);
            }
        }
        ArrowType::Int8 => {
            let a = col.as_primitive::<arrow_array::types::Int8Type>();
            for r in 0..a.len() {
                let b = if a.is_null(r) { 0 } else { a.value(r) };
                if !(0..=3).contains(&b) {
                    return Err(bad(r, b.to_string()));
                }
                out.push(b);
            }
        }
        other => {
            return Err(Error::invalid(format!(
                "column '{name}' gives row kinds and must be a string (+I, -U, +U, -D), got {other}"
            )));
        }
    }
    Ok(Arc::new(Int8Array::from(out)))
}

#[cfg(test)]
mod tests;
