//! Values between Arrow and Java's casts: one value of a column as Java's internal
//! representation holds it, and the Arrow column built back from cast values.
//!
//! Source: Java `org.apache.paimon.data.InternalRow` accessors (`BinaryString`, `Decimal`,
//! `Timestamp`).

use super::*;

/// A value as Java's internal representation holds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Bool(bool),
    /// `TINYINT`..`BIGINT`.
    Int(i64),
    Float(f32),
    Double(f64),
    /// Unscaled value, precision, scale.
    Decimal(i128, u32, u32),
    Str(String),
    Bytes(Vec<u8>),
    /// Days since 1970-01-01.
    Date(i32),
    /// Milliseconds of the day.
    Time(i32),
    /// Epoch milliseconds and nanoseconds of the millisecond (`0..1_000_000`).
    Ts(i64, i32),
}

pub(super) fn mismatch(array: &dyn Array, ty: &DataType) -> Failure {
    Failure::Value(format!(
        "decoded values of Arrow type {} do not hold {ty}",
        array.data_type()
    ))
}

/// The value at `row` of `array` (of the Arrow type of the scalar type `ty`), `None` for NULL.
pub(super) fn value_at(array: &dyn Array, ty: &DataType, row: usize) -> CastOutcome<Option<Value>> {
    if array.is_null(row) {
        return Ok(None);
    }
    let bad = || mismatch(array, ty);
    Ok(Some(match &ty.kind {
        TypeKind::Boolean => Value::Bool(array.as_boolean_opt().ok_or_else(bad)?.value(row)),
        TypeKind::TinyInt => Value::Int(i64::from(
            array
                .as_primitive_opt::<Int8Type>()
                .ok_or_else(bad)?
                .value(row),
        )),
        TypeKind::SmallInt => Value::Int(i64::from(
            array
                .as_primitive_opt::<Int16Type>()
                .ok_or_else(bad)?
                .value(row),
        )),
        TypeKind::Int => Value::Int(i64::from(
            array
                .as_primitive_opt::<Int32Type>()
                .ok_or_else(bad)?
                .value(row),
        )),
        TypeKind::BigInt => Value::Int(
            array
                .as_primitive_opt::<Int64Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Float => Value::Float(
            array
                .as_primitive_opt::<Float32Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Double => Value::Double(
            array
                .as_primitive_opt::<Float64Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Decimal { precision, scale } => Value::Decimal(
            array
                .as_primitive_opt::<Decimal128Type>()
                .ok_or_else(bad)?
                .value(row),
            *precision,
            *scale,
        ),
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => Value::Str(
            array
                .as_string_opt::<i32>()
                .ok_or_else(bad)?
                .value(row)
                .to_owned(),
        ),
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => Value::Bytes(
            array
                .as_binary_opt::<i32>()
                .ok_or_else(bad)?
                .value(row)
                .to_vec(),
        ),
        TypeKind::Date => Value::Date(
            array
                .as_primitive_opt::<Date32Type>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Time { .. } => Value::Time(
            array
                .as_primitive_opt::<Time32MillisecondType>()
                .ok_or_else(bad)?
                .value(row),
        ),
        TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. } => {
            let (millis, nanos) = match array.data_type() {
                ArrowType::Timestamp(TimeUnit::Second, _) => {
                    let v = array.as_primitive::<TimestampSecondType>().value(row);
                    (
                        v.checked_mul(1000).ok_or_else(|| {
                            Failure::Value(format!("timestamp {v} s out of range"))
                        })?,
                        0,
                    )
                }
                ArrowType::Timestamp(TimeUnit::Millisecond, _) => (
                    array.as_primitive::<TimestampMillisecondType>().value(row),
                    0,
                ),
                ArrowType::Timestamp(TimeUnit::Microsecond, _) => {
                    let v = array.as_primitive::<TimestampMicrosecondType>().value(row);
                    (v.div_euclid(1000), (v.rem_euclid(1000) * 1000) as i32)
                }
                ArrowType::Timestamp(TimeUnit::Nanosecond, _) => {
                    let v = array.as_primitive::<TimestampNanosecondType>().value(row);
                    (v.div_euclid(1_000_000), v.rem_euclid(1_000_000) as i32)
                }
                _ => return Err(bad()),
            };
            Value::Ts(millis, nanos)
        }
        _ => {
            return Err(Failure::Unsupported(format!(
                "values of type {ty} are not cast by this reader"
            )));
        }
    }))
}

/// Build the Arrow array of the scalar type `to` (its [`paimon_to_arrow_type`]) from values
/// already converted to it.
pub(super) fn build(values: Vec<Option<Value>>, to: &DataType) -> CastOutcome<ArrayRef> {
    let n = values.len();
    let wrong = |v: &Value| Failure::Value(format!("internal: {v:?} is not a {to} value"));
    macro_rules! ints {
        ($builder:ty, $t:ty) => {{
            let mut b = <$builder>::with_capacity(n);
            for v in values {
                match v {
                    None => b.append_null(),
                    // The value was narrowed to the target type already.
                    Some(Value::Int(i)) => b.append_value(i as $t),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    Ok(match &to.kind {
        TypeKind::Boolean => {
            let mut b = BooleanBuilder::with_capacity(n);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Value::Bool(x)) => b.append_value(x),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::TinyInt => ints!(Int8Builder, i8),
        TypeKind::SmallInt => ints!(Int16Builder, i16),
        TypeKind::Int => ints!(Int32Builder, i32),
        TypeKind::BigInt => ints!(Int64Builder, i64),
        TypeKind::Float => {
            let mut b = Float32Builder::with_capacity(n);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Value::Float(x)) => b.append_value(x),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::Double => {
            let mut b = Float64Builder::with_capacity(n);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Value::Double(x)) => b.append_value(x),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::Decimal { precision, scale } => {
            let mut b = Decimal128Builder::with_capacity(n);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Value::Decimal(u, _, _)) => b.append_value(u),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            let p = u8::try_from(*precision).map_err(|_| wrong(&Value::Int(0)))?;
            let s = i8::try_from(*scale).map_err(|_| wrong(&Value::Int(0)))?;
            Arc::new(
                b.finish()
                    .with_precision_and_scale(p, s)
                    .map_err(|e| Failure::Value(e.to_string()))?,
            )
        }
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => {
            let mut b = StringBuilder::with_capacity(n, n * 8);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Value::Str(x)) => b.append_value(x),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => {
            let mut b = BinaryBuilder::with_capacity(n, n * 8);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Value::Bytes(x)) => b.append_value(x),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::Date => {
            let mut b = Date32Builder::with_capacity(n);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Value::Date(x)) => b.append_value(x),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::Time { .. } => {
            let mut b = Time32MillisecondBuilder::with_capacity(n);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Value::Time(x)) => b.append_value(x),
                    Some(other) => return Err(wrong(&other)),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision } => {
            let unit = timestamp_unit(*precision);
            let mut raw: Vec<Option<i64>> = Vec::with_capacity(n);
            for v in values {
                raw.push(match v {
                    None => None,
                    Some(Value::Ts(millis, nanos)) => Some(ts_in_unit(millis, nanos, unit)?),
                    Some(other) => return Err(wrong(&other)),
                });
            }
            let tz = matches!(to.kind, TypeKind::LocalZonedTimestamp { .. }).then_some("UTC");
            match unit {
                TimeUnit::Second => {
                    timestamp_array(PrimitiveArray::<TimestampSecondType>::from(raw), tz)
                }
                TimeUnit::Millisecond => {
                    timestamp_array(PrimitiveArray::<TimestampMillisecondType>::from(raw), tz)
                }
                TimeUnit::Microsecond => {
                    timestamp_array(PrimitiveArray::<TimestampMicrosecondType>::from(raw), tz)
                }
                TimeUnit::Nanosecond => {
                    timestamp_array(PrimitiveArray::<TimestampNanosecondType>::from(raw), tz)
                }
            }
        }
        _ => {
            return Err(Failure::Unsupported(format!(
                "values of type {to} are not built by this reader"
            )));
        }
    })
}

pub(super) fn timestamp_array<T: arrow_array::types::ArrowTimestampType>(
    a: PrimitiveArray<T>,
    tz: Option<&str>,
) -> ArrayRef {
    Arc::new(a.with_timezone_opt(tz.map(Arc::<str>::from)))
}

/// A Java timestamp in `unit`: exact for values truncated to the unit's precision, floored
/// otherwise.
pub(super) fn ts_in_unit(millis: i64, nanos: i32, unit: TimeUnit) -> CastOutcome<i64> {
    let out = match unit {
        TimeUnit::Second => Some(millis.div_euclid(1000)),
        TimeUnit::Millisecond => Some(millis),
        TimeUnit::Microsecond => millis
            .checked_mul(1000)
            .and_then(|m| m.checked_add(i64::from(nanos / 1000))),
        TimeUnit::Nanosecond => millis
            .checked_mul(1_000_000)
            .and_then(|m| m.checked_add(i64::from(nanos))),
    };
    out.ok_or_else(|| Failure::Value(format!("timestamp {millis} ms does not fit {unit:?}")))
}
