//! Java's cast executors on one value: integer wrapping, floating saturation, `HALF_UP`
//! decimals, and the rule-by-rule conversions.
//!
//! Source: Java `org.apache.paimon.casting.*CastRule` executors,
//! `org.apache.paimon.utils.DecimalUtils`.

use super::*;

pub(super) fn length_of(t: &DataType) -> usize {
    match t.kind {
        TypeKind::Char { length }
        | TypeKind::VarChar { length }
        | TypeKind::Binary { length }
        | TypeKind::VarBinary { length } => length as usize,
        _ => MAX_LENGTH as usize,
    }
}

/// Java `BinaryStringUtils.toCharacterString`: cut to the target length in characters, and pad
/// a `CHAR(n)` target with spaces.
pub(super) fn to_character_string(s: String, to: &DataType) -> String {
    let n = length_of(to);
    let chars = s.chars().count();
    if chars > n {
        s.chars().take(n).collect()
    } else if chars < n && matches!(to.kind, TypeKind::Char { .. }) {
        let mut s = s;
        s.extend(std::iter::repeat_n(' ', n - chars));
        s
    } else {
        s
    }
}

/// Java `BinaryStringUtils.toBinaryString`: `BINARY(n)` cut or zero-padded to `n` bytes,
/// `VARBINARY(n)` cut to at most `n`.
pub(super) fn to_binary_string(mut b: Vec<u8>, to: &DataType) -> Vec<u8> {
    let n = length_of(to);
    if matches!(to.kind, TypeKind::Binary { .. }) || b.len() > n {
        b.resize(n, 0);
    }
    b
}

/// Narrow an integral value to the integer target type as Java's `(byte)`, `(short)`, `(int)`
/// casts do (two's complement wrap).
pub(super) fn wrap_to(v: i64, to: &TypeKind) -> i64 {
    match to {
        TypeKind::TinyInt => i64::from(v as i8),
        TypeKind::SmallInt => i64::from(v as i16),
        TypeKind::Int => i64::from(v as i32),
        _ => v,
    }
}

/// Java `Number.xxxValue()` of a `double` (or a `float` widened to one) into an integer
/// target: `(long)`/`(int)` saturate (NaN is 0), `(short)`/`(byte)` go through `(int)` and wrap.
pub(super) fn float_to_integral(v: f64, to: &TypeKind) -> i64 {
    match to {
        TypeKind::BigInt => v as i64,
        _ => wrap_to(i64::from(v as i32), to),
    }
}

pub(super) fn numeric_target(v: NumberValue, to: &TypeKind) -> Option<Value> {
    Some(match (v, to) {
        (NumberValue::Long(i), TypeKind::Float) => Value::Float(i as f32),
        (NumberValue::Long(i), TypeKind::Double) => Value::Double(i as f64),
        (NumberValue::Long(i), t) => Value::Int(wrap_to(i, t)),
        (NumberValue::Float(f), TypeKind::Float) => Value::Float(f),
        (NumberValue::Float(f), TypeKind::Double) => Value::Double(f64::from(f)),
        (NumberValue::Float(f), t) => Value::Int(float_to_integral(f64::from(f), t)),
        (NumberValue::Double(d), TypeKind::Float) => Value::Float(d as f32),
        (NumberValue::Double(d), TypeKind::Double) => Value::Double(d),
        (NumberValue::Double(d), t) => Value::Int(float_to_integral(d, t)),
    })
}

#[derive(Debug, Clone, Copy)]
pub(super) enum NumberValue {
    Long(i64),
    Float(f32),
    Double(f64),
}

pub(super) fn value_error(what: impl std::fmt::Display) -> Failure {
    Failure::Value(what.to_string())
}

/// Cast one non-null value of type `from` to `to` with Java's `rule` (`None`: Java's result is
/// NULL, a decimal that overflows its precision).
pub(super) fn cast_value(
    v: Value,
    from: &DataType,
    to: &DataType,
    rule: CastRule,
) -> CastOutcome<Option<Value>> {
    use CastRule::*;
    let wrong = |v: &Value| Failure::Value(format!("internal: {v:?} is not a {from} value"));
    let decimal_target = || match to.kind {
        TypeKind::Decimal { precision, scale } => Ok((precision, scale)),
        _ => Err(Failure::Value(format!("internal: {to} is not a DECIMAL"))),
    };
    let ts_precision = |t: &DataType| match t.kind {
        TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision } => {
            precision
        }
        _ => 0,
    };
    Ok(match (rule, v) {
        (DecimalToDecimal, Value::Decimal(u, _, s)) => {
            let (p, ts) = decimal_target()?;
            round_decimal(u < 0, &u.unsigned_abs().to_string(), i64::from(s), p, ts)
                .map(|u| Value::Decimal(u, p, ts))
        }
        (NumericPrimitiveToDecimal, v) => {
            let (p, ts) = decimal_target()?;
            let (neg, digits, scale) = match v {
                Value::Int(i) => (i < 0, i.unsigned_abs().to_string(), 0),
                Value::Float(f) => parse_big_decimal(&java_double_to_string(f64::from(f)))
                    .ok_or_else(|| value_error(format!("{f} has no decimal value")))?,
                Value::Double(d) => parse_big_decimal(&java_double_to_string(d))
                    .ok_or_else(|| value_error(format!("{d} has no decimal value")))?,
                other => return Err(wrong(&other)),
            };
            round_decimal(neg, &digits, scale, p, ts).map(|u| Value::Decimal(u, p, ts))
        }
        (DecimalToNumericPrimitive, Value::Decimal(u, p, s)) => Some(match to.kind {
            TypeKind::Float => Value::Float(decimal_to_double(u, p, s) as f32),
            TypeKind::Double => Value::Double(decimal_to_double(u, p, s)),
            ref t => {
                // Rounded down (toward zero); BigInteger.longValue keeps the low 64 bits.
                let whole = u / 10i128.pow(s);
                Value::Int(wrap_to(whole as i64, t))
            }
        }),
        (NumericPrimitive, v) => {
            let n = match v {
                Value::Int(i) => NumberValue::Long(i),
                Value::Float(f) => NumberValue::Float(f),
                Value::Double(d) => NumberValue::Double(d),
                other => return Err(wrong(&other)),
            };
            numeric_target(n, &to.kind)
        }
        (NumericPrimitiveToTimestamp, Value::Int(i)) => Some(Value::Ts(i.wrapping_mul(1000), 0)),
        (BooleanToNumeric, Value::Bool(b)) => {
            let i = i64::from(b);
            match to.kind {
                TypeKind::Decimal { precision, scale } => {
                    round_decimal(false, &i.to_string(), 0, precision, scale)
                        .map(|u| Value::Decimal(u, precision, scale))
                }
                ref t => numeric_target(NumberValue::Long(i), t),
            }
        }
        (NumericToBoolean, Value::Int(i)) => Some(Value::Bool(i != 0)),
        (NumericToString, v) => {
            let s = match v {
                Value::Int(i) => i.to_string(),
                Value::Float(f) => java_float_to_string(f),
                Value::Double(d) => java_double_to_string(d),
                Value::Decimal(u, _, s) => decimal_to_plain_string(u, s),
                other => return Err(wrong(&other)),
            };
            Some(Value::Str(to_character_string(s, to)))
        }
        (BooleanToString, Value::Bool(b)) => {
            Some(Value::Str(to_character_string(b.to_string(), to)))
        }
        (TimestampToString, Value::Ts(m, n)) => {
            Some(Value::Str(format_timestamp(m, n, ts_precision(from))))
        }
        (TimeToString, Value::Time(t)) => {
            let p = match from.kind {
                TypeKind::Time { precision } => precision,
                _ => 0,
            };
            Some(Value::Str(format_time(t, p)))
        }
        (DateToString, Value::Date(d)) => Some(Value::Str(format_date(d))),
        (StringToString, Value::Str(s)) => Some(Value::Str(to_character_string(s, to))),
        (StringToBoolean, Value::Str(s)) => Some(Value::Bool(string_to_boolean(&s)?)),
        (StringToDecimal, Value::Str(s)) => {
            let (p, ts) = decimal_target()?;
            let (neg, digits, scale) = parse_big_decimal(&s)
                .ok_or_else(|| value_error(format!("'{s}' is not a decimal number")))?;
            round_decimal(neg, &digits, scale, p, ts).map(|u| Value::Decimal(u, p, ts))
        }
        (StringToNumericPrimitive, Value::Str(s)) => Some(match to.kind {
            TypeKind::Float => Value::Float(java_parse_float(&s)?),
            TypeKind::Double => Value::Double(java_parse_double(&s)?),
            TypeKind::BigInt => {
                Value::Int(java_to_integral(&s, i64::MIN.into(), i64::MAX.into())? as i64)
            }
            TypeKind::Int => {
                Value::Int(java_to_integral(&s, i32::MIN.into(), i32::MAX.into())? as i64)
            }
            TypeKind::SmallInt => {
                Value::Int(java_to_integral(&s, i16::MIN.into(), i16::MAX.into())? as i64)
            }
            TypeKind::TinyInt => {
                Value::Int(java_to_integral(&s, i8::MIN.into(), i8::MAX.into())? as i64)
            }
            _ => return Err(wrong(&Value::Str(s))),
        }),
        (StringToDate, Value::Str(s)) => Some(Value::Date(string_to_date(&s)?)),
        (StringToTime, Value::Str(s)) => Some(Value::Time(string_to_time(&s)?)),
        (StringToTimestamp, Value::Str(s)) => {
            let p = ts_precision(to);
            let (m, n) = if matches!(to.kind, TypeKind::Timestamp { .. }) && is_numeric(&s) {
                let epoch = java_to_integral(&s, i64::MIN.into(), i64::MAX.into())? as i64;
                epoch_to_timestamp(epoch, p).ok_or_else(|| {
                    value_error(format!(
                        "'{s}': unsupported precision {p} for an epoch number"
                    ))
                })?
            } else {
                parse_timestamp(&s, p)
                    .ok_or_else(|| value_error(format!("'{s}' is not a timestamp")))?
            };
            Some(Value::Ts(m, n))
        }
        (StringToBinary, Value::Str(s)) => Some(Value::Bytes(to_binary_string(s.into_bytes(), to))),
        (TimestampToTimestamp, Value::Ts(m, n)) => {
            let (pin, pout) = (ts_precision(from), ts_precision(to));
            let (m, n) = if pin <= pout {
                (m, n)
            } else {
                truncate_timestamp(m, n, pout)
            };
            Some(Value::Ts(m, n))
        }
        (TimestampToDate, Value::Ts(m, _)) => Some(Value::Date(
            if matches!(from.kind, TypeKind::Timestamp { .. }) {
                (m / MILLIS_PER_DAY) as i32
            } else {
                m.div_euclid(MILLIS_PER_DAY) as i32
            },
        )),
        (TimestampToTime, Value::Ts(m, _)) => {
            Some(Value::Time(m.rem_euclid(MILLIS_PER_DAY) as i32))
        }
        (DateToTimestamp, Value::Date(d)) => {
            Some(Value::Ts(i64::from(d).wrapping_mul(MILLIS_PER_DAY), 0))
        }
        (TimeToTimestamp, Value::Time(t)) => Some(Value::Ts(i64::from(t), 0)),
        (TimestampToNumericPrimitive, Value::Ts(m, _)) => {
            Some(Value::Int(wrap_to(m / 1000, &to.kind)))
        }
        (BinaryToBinary, Value::Bytes(b)) => Some(Value::Bytes(to_binary_string(b, to))),
        (BinaryToString, Value::Bytes(b)) => {
            Some(Value::Str(String::from_utf8_lossy(&b).into_owned()))
        }
        (rule, v) => {
            return Err(Failure::Unsupported(format!(
                "{rule:?} of the value {v:?} is not run by this reader"
            )));
        }
    })
}

/// Java `DecimalUtils.doubleValue`: compact decimals (precision <= 18) divide the unscaled
/// long by 10^scale, larger ones convert their decimal text exactly.
pub(super) fn decimal_to_double(u: i128, precision: u32, scale: u32) -> f64 {
    if precision <= 18 {
        (u as i64) as f64 / 10f64.powi(scale as i32)
    } else {
        decimal_to_plain_string(u, scale)
            .parse()
            .unwrap_or(f64::NAN)
    }
}

/// `digits × 10^-scale` (with its sign) set to `target_scale` with `HALF_UP` rounding, as
/// Java's `Decimal.fromBigDecimal`; `None` when the result has more than `precision` digits
/// (Java's NULL).
pub(super) fn round_decimal(
    negative: bool,
    digits: &str,
    scale: i64,
    precision: u32,
    target_scale: u32,
) -> Option<i128> {
    let mut d: Vec<u8> = digits.bytes().map(|b| b - b'0').collect();
    let target = i64::from(target_scale);
    if target >= scale {
        let add = usize::try_from(target - scale).ok()?;
        if d.iter().all(|x| *x == 0) {
            d = vec![0];
        } else if add > 80 {
            return None;
        } else {
            d.extend(std::iter::repeat_n(0, add));
        }
    } else {
        let drop = usize::try_from(scale - target).unwrap_or(usize::MAX);
        let round_up = if drop > d.len() {
            d.clear();
            false
        } else {
            let cut = d.len() - drop;
            let up = d[cut] >= 5;
            d.truncate(cut);
            up
        };
        if round_up {
            let mut i = d.len();
            loop {
                if i == 0 {
                    d.insert(0, 1);
                    break;
                }
                i -= 1;
                if d[i] == 9 {
                    d[i] = 0;
                } else {
                    d[i] += 1;
                    break;
                }
            }
        }
    }
    let first = d.iter().position(|x| *x != 0).unwrap_or(d.len());
    let significant = &d[first..];
    if significant.len().max(1) > precision as usize || significant.len() > 38 {
        return None;
    }
    let mut u: i128 = 0;
    for x in significant {
        u = u * 10 + i128::from(*x);
    }
    Some(if negative { -u } else { u })
}
