//! Evaluation on Arrow record batches with the `arrow-ord` comparison kernels and the Kleene
//! (three-valued) boolean kernels of `arrow-arith`.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, or_kleene};
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Date32Array, Date64Array,
    Decimal128Array, FixedSizeBinaryArray, Float32Array, Float64Array, LargeBinaryArray,
    LargeStringArray, PrimitiveArray, RecordBatch, Scalar, StringArray, StringViewArray,
    Time32MillisecondArray, Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
    TimestampSecondArray,
};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{DataType as ArrowType, TimeUnit};

use super::coerce::{Coerced, Rewritten, rewrite};
use super::{BoundLeaf, CmpOp, Node, Test, Value};
use crate::error::{Error, Result};
use crate::spec::TypeKind;

pub(super) fn evaluate(node: &Node, batch: &RecordBatch) -> Result<BooleanArray> {
    let len = batch.num_rows();
    match node {
        Node::Leaf(leaf) => eval_leaf(leaf, batch),
        Node::And(children) | Node::Or(children) => {
            let is_and = matches!(node, Node::And(_));
            let mut acc: Option<BooleanArray> = None;
            for child in children {
                let v = evaluate(child, batch)?;
                acc = Some(match acc {
                    None => v,
                    Some(a) => combine(&a, &v, is_and)?,
                });
            }
            Ok(acc.unwrap_or_else(|| constant(len, is_and)))
        }
    }
}

fn combine(a: &BooleanArray, b: &BooleanArray, is_and: bool) -> Result<BooleanArray> {
    if is_and {
        and_kleene(a, b).map_err(|e| Error::arrow("filter AND", e))
    } else {
        or_kleene(a, b).map_err(|e| Error::arrow("filter OR", e))
    }
}

fn constant(len: usize, value: bool) -> BooleanArray {
    let values = if value {
        BooleanBuffer::new_set(len)
    } else {
        BooleanBuffer::new_unset(len)
    };
    BooleanArray::new(values, None)
}

/// `value` where `column` is non-null, null where it is null.
fn if_not_null(column: &dyn Array, value: bool) -> BooleanArray {
    let c = constant(column.len(), value);
    BooleanArray::new(c.values().clone(), column.logical_nulls())
}

fn eval_leaf(leaf: &BoundLeaf, batch: &RecordBatch) -> Result<BooleanArray> {
    let name = &leaf.field.name;
    let column = batch.column_by_name(name).ok_or_else(|| {
        Error::invalid(format!(
            "filter column `{name}` is not in the batch (read the filter's referenced columns too)"
        ))
    })?;
    let len = column.len();
    let ctx = || format!("filter on `{name}`");
    Ok(match &leaf.test {
        Test::IsNull => is_null(column).map_err(|e| Error::arrow(ctx(), e))?,
        Test::IsNotNull => is_not_null(column).map_err(|e| Error::arrow(ctx(), e))?,
        Test::Unknown => BooleanArray::new_null(len),
        Test::IfNotNull(b) => if_not_null(column, *b),
        Test::Cmp(op, v) => {
            let lit = to_arrow(v, &leaf.field.data_type.kind, column.data_type(), name)?;
            match rewrite(*op, lit) {
                Rewritten::Cmp(op, arr) => {
                    compare(column, op, arr).map_err(|e| Error::arrow(ctx(), e))?
                }
                Rewritten::IfNotNull(b) => if_not_null(column, b),
                Rewritten::Unknown => BooleanArray::new_null(len),
            }
        }
        Test::In { values, has_null } | Test::NotIn { values, has_null } => {
            let is_in = matches!(leaf.test, Test::In { .. });
            let op = if is_in { CmpOp::Eq } else { CmpOp::NotEq };
            let mut acc: Option<BooleanArray> = None;
            for v in values {
                let lit = to_arrow(v, &leaf.field.data_type.kind, column.data_type(), name)?;
                if let Coerced::Exact(arr) = lit {
                    let r = compare(column, op, arr).map_err(|e| Error::arrow(ctx(), e))?;
                    acc = Some(match acc {
                        None => r,
                        Some(a) => combine(&a, &r, !is_in)?,
                    });
                }
            }
            let mut out = acc.unwrap_or_else(|| if_not_null(column, !is_in));
            if *has_null {
                out = combine(&out, &BooleanArray::new_null(len), !is_in)?;
            }
            out
        }
    })
}

fn compare(
    column: &ArrayRef,
    op: CmpOp,
    literal: ArrayRef,
) -> std::result::Result<BooleanArray, arrow_schema::ArrowError> {
    use arrow_ord::cmp;
    let s = Scalar::new(literal);
    match op {
        CmpOp::Eq => cmp::eq(column, &s),
        CmpOp::NotEq => cmp::neq(column, &s),
        CmpOp::Lt => cmp::lt(column, &s),
        CmpOp::LtEq => cmp::lt_eq(column, &s),
        CmpOp::Gt => cmp::gt(column, &s),
        CmpOp::GtEq => cmp::gt_eq(column, &s),
    }
}

/// `v` clamped into `[min, max]` with exactness.
fn clamp(v: i128, min: i128, max: i128) -> Coerced<i128> {
    if v < min {
        Coerced::BelowAll
    } else if v > max {
        Coerced::Between(max)
    } else {
        Coerced::Exact(v)
    }
}

/// `floor(v / divisor)` with exactness (`divisor > 0`).
fn floor_div(v: i128, divisor: i128) -> Coerced<i128> {
    let q = v.div_euclid(divisor);
    if v.rem_euclid(divisor) == 0 {
        Coerced::Exact(q)
    } else {
        Coerced::Between(q)
    }
}

/// Combines an inexact step with a clamp: `Between(x)` stays `Between` after clamping.
fn then_clamp(c: Coerced<i128>, min: i128, max: i128) -> Coerced<i128> {
    match c {
        Coerced::Exact(v) => clamp(v, min, max),
        Coerced::Between(v) => match clamp(v, min, max) {
            Coerced::Exact(v) => Coerced::Between(v),
            other => other,
        },
        other => other,
    }
}

fn int_array(v: i128, dt: &ArrowType) -> Option<Coerced<ArrayRef>> {
    fn mk<T: arrow_array::ArrowPrimitiveType>(
        v: i128,
        min: i128,
        max: i128,
        conv: impl Fn(i128) -> Option<T::Native>,
    ) -> Option<Coerced<ArrayRef>> {
        let c = clamp(v, min, max);
        let c = match c {
            Coerced::Exact(x) => Coerced::Exact(conv(x)?),
            Coerced::Between(x) => Coerced::Between(conv(x)?),
            Coerced::BelowAll => Coerced::BelowAll,
            Coerced::Null => Coerced::Null,
        };
        Some(c.map(|n| Arc::new(PrimitiveArray::<T>::from_iter_values([n])) as ArrayRef))
    }
    match dt {
        ArrowType::Int8 => {
            mk::<Int8Type>(v, i8::MIN.into(), i8::MAX.into(), |x| i8::try_from(x).ok())
        }
        ArrowType::Int16 => mk::<Int16Type>(v, i16::MIN.into(), i16::MAX.into(), |x| {
            i16::try_from(x).ok()
        }),
        ArrowType::Int32 => mk::<Int32Type>(v, i32::MIN.into(), i32::MAX.into(), |x| {
            i32::try_from(x).ok()
        }),
        ArrowType::Int64 => mk::<Int64Type>(v, i64::MIN.into(), i64::MAX.into(), |x| {
            i64::try_from(x).ok()
        }),
        ArrowType::UInt8 => mk::<UInt8Type>(v, 0, u8::MAX.into(), |x| u8::try_from(x).ok()),
        ArrowType::UInt16 => mk::<UInt16Type>(v, 0, u16::MAX.into(), |x| u16::try_from(x).ok()),
        ArrowType::UInt32 => mk::<UInt32Type>(v, 0, u32::MAX.into(), |x| u32::try_from(x).ok()),
        ArrowType::UInt64 => mk::<UInt64Type>(v, 0, u64::MAX.into(), |x| u64::try_from(x).ok()),
        _ => None,
    }
}

fn time_unit_nanos(unit: &TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// The literal `v` (a value of Paimon type `kind`) as a one-element array of the column's
/// Arrow type `dt`, with exactness when `dt` is coarser.
fn to_arrow(v: &Value, kind: &TypeKind, dt: &ArrowType, name: &str) -> Result<Coerced<ArrayRef>> {
    let unsupported = || {
        Error::unsupported(format!(
            "filter on column `{name}`: comparing a {kind:?} literal with Arrow type {dt}"
        ))
    };
    let arr = |a: ArrayRef| Ok(Coerced::Exact(a));
    match (v, dt) {
        (Value::Boolean(b), ArrowType::Boolean) => arr(Arc::new(BooleanArray::from(vec![*b]))),
        (Value::TinyInt(x), _) => int_array(i128::from(*x), dt).ok_or_else(unsupported),
        (Value::SmallInt(x), _) => int_array(i128::from(*x), dt).ok_or_else(unsupported),
        (Value::Int(x), _) => int_array(i128::from(*x), dt).ok_or_else(unsupported),
        (Value::BigInt(x), _) => int_array(i128::from(*x), dt).ok_or_else(unsupported),
        (Value::Float(f), ArrowType::Float32) => arr(Arc::new(Float32Array::from(vec![*f]))),
        (Value::Float(f), ArrowType::Float64) => {
            arr(Arc::new(Float64Array::from(vec![f64::from(*f)])))
        }
        (Value::Double(f), ArrowType::Float64) => arr(Arc::new(Float64Array::from(vec![*f]))),
        (Value::Decimal(u), ArrowType::Decimal128(p, s)) => {
            let TypeKind::Decimal { scale, .. } = kind else {
                return Err(unsupported());
            };
            let from = i32::try_from(*scale).map_err(|_| unsupported())?;
            let to = i32::from(*s);
            let c = if to >= from {
                let f = 10i128.checked_pow((to - from).unsigned_abs());
                match f.and_then(|f| u.checked_mul(f)) {
                    Some(x) => Coerced::Exact(x),
                    None if *u > 0 => Coerced::Between(i128::MAX),
                    None => Coerced::BelowAll,
                }
            } else {
                match 10i128.checked_pow((from - to).unsigned_abs()) {
                    Some(d) => floor_div(*u, d),
                    None if *u >= 0 => Coerced::Between(0),
                    None => Coerced::Between(-1),
                }
            };
            let (p, s) = (*p, *s);
            let build = |x: i128| -> Result<ArrayRef> {
                Decimal128Array::from(vec![x])
                    .with_precision_and_scale(p, s)
                    .map(|a| Arc::new(a) as ArrayRef)
                    .map_err(|e| Error::arrow(format!("filter on `{name}`"), e))
            };
            Ok(match c {
                Coerced::Exact(x) => Coerced::Exact(build(x)?),
                Coerced::Between(x) => Coerced::Between(build(x)?),
                Coerced::BelowAll => Coerced::BelowAll,
                Coerced::Null => Coerced::Null,
            })
        }
        (Value::String(s), ArrowType::Utf8) => arr(Arc::new(StringArray::from(vec![s.as_str()]))),
        (Value::String(s), ArrowType::LargeUtf8) => {
            arr(Arc::new(LargeStringArray::from(vec![s.as_str()])))
        }
        (Value::String(s), ArrowType::Utf8View) => {
            arr(Arc::new(StringViewArray::from(vec![s.as_str()])))
        }
        (Value::Binary(b), ArrowType::Binary) => {
            arr(Arc::new(BinaryArray::from(vec![b.as_slice()])))
        }
        (Value::Binary(b), ArrowType::LargeBinary) => {
            arr(Arc::new(LargeBinaryArray::from(vec![b.as_slice()])))
        }
        (Value::Binary(b), ArrowType::BinaryView) => {
            arr(Arc::new(BinaryViewArray::from(vec![b.as_slice()])))
        }
        (Value::Binary(b), ArrowType::FixedSizeBinary(n))
            if usize::try_from(*n).is_ok_and(|n| n == b.len()) =>
        {
            let a = FixedSizeBinaryArray::try_from_iter(std::iter::once(b.as_slice()))
                .map_err(|e| Error::arrow(format!("filter on `{name}`"), e))?;
            arr(Arc::new(a))
        }
        (Value::Date(d), ArrowType::Date32) => arr(Arc::new(Date32Array::from(vec![*d]))),
        (Value::Date(d), ArrowType::Date64) => arr(Arc::new(Date64Array::from(vec![
            i64::from(*d) * 86_400_000,
        ]))),
        (Value::Time(ms), ArrowType::Time32(TimeUnit::Millisecond)) => {
            arr(Arc::new(Time32MillisecondArray::from(vec![*ms])))
        }
        (Value::Time(ms), ArrowType::Time32(TimeUnit::Second)) => {
            Ok(floor_div(i128::from(*ms), 1000)
                .map(|s| Arc::new(Time32SecondArray::from(vec![s as i32])) as ArrayRef))
        }
        (Value::Time(ms), ArrowType::Time64(TimeUnit::Microsecond)) => {
            arr(Arc::new(Time64MicrosecondArray::from(vec![
                i64::from(*ms) * 1000,
            ])))
        }
        (Value::Time(ms), ArrowType::Time64(TimeUnit::Nanosecond)) => {
            arr(Arc::new(Time64NanosecondArray::from(vec![
                i64::from(*ms) * 1_000_000,
            ])))
        }
        (Value::Timestamp(t), ArrowType::Timestamp(unit, tz)) => {
            let c = then_clamp(
                floor_div(t.epoch_nanos(), time_unit_nanos(unit)),
                i64::MIN.into(),
                i64::MAX.into(),
            );
            let tz = tz.clone();
            // In i64 range by the clamp.
            Ok(c.map(|x| {
                let x = x as i64;
                let a: ArrayRef = match unit {
                    TimeUnit::Second => {
                        Arc::new(TimestampSecondArray::from(vec![x]).with_timezone_opt(tz))
                    }
                    TimeUnit::Millisecond => {
                        Arc::new(TimestampMillisecondArray::from(vec![x]).with_timezone_opt(tz))
                    }
                    TimeUnit::Microsecond => {
                        Arc::new(TimestampMicrosecondArray::from(vec![x]).with_timezone_opt(tz))
                    }
                    TimeUnit::Nanosecond => {
                        Arc::new(TimestampNanosecondArray::from(vec![x]).with_timezone_opt(tz))
                    }
                };
                a
            }))
        }
        _ => Err(unsupported()),
    }
}
