//! Coercion of untyped literals to a column's Paimon type, exactly: a literal the type cannot
//! represent becomes its floor plus a marker ([`Coerced::Between`]) and the comparison is
//! rewritten so that no row changes its outcome.

use super::{CmpOp, Leaf, LeafOp, Literal, Test, Timestamp, Value};
use crate::error::{Error, Result};
use crate::spec::binary_row::civil_from_days;
use crate::spec::{DataField, TypeKind};

const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// A literal after coercion to a type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Coerced<T> {
    /// `NULL`.
    Null,
    /// Exactly representable.
    Exact(T),
    /// Strictly between `v` and the next representable value (or above `v` when `v` is the
    /// largest value).
    Between(T),
    /// Below every representable value.
    BelowAll,
}

impl<T> Coerced<T> {
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Coerced<U> {
        match self {
            Coerced::Null => Coerced::Null,
            Coerced::Exact(v) => Coerced::Exact(f(v)),
            Coerced::Between(v) => Coerced::Between(f(v)),
            Coerced::BelowAll => Coerced::BelowAll,
        }
    }
}

/// What `x <op> literal` becomes once the literal is coerced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rewritten<T> {
    Cmp(CmpOp, T),
    IfNotNull(bool),
    Unknown,
}

pub(crate) fn rewrite<T>(op: CmpOp, c: Coerced<T>) -> Rewritten<T> {
    match c {
        Coerced::Null => Rewritten::Unknown,
        Coerced::Exact(v) => Rewritten::Cmp(op, v),
        Coerced::Between(v) => match op {
            CmpOp::Eq => Rewritten::IfNotNull(false),
            CmpOp::NotEq => Rewritten::IfNotNull(true),
            CmpOp::Lt | CmpOp::LtEq => Rewritten::Cmp(CmpOp::LtEq, v),
            CmpOp::Gt | CmpOp::GtEq => Rewritten::Cmp(CmpOp::Gt, v),
        },
        Coerced::BelowAll => {
            Rewritten::IfNotNull(matches!(op, CmpOp::NotEq | CmpOp::Gt | CmpOp::GtEq))
        }
    }
}

pub(crate) fn bind_leaf(leaf: &Leaf, field: &DataField, negate: bool) -> Result<Test> {
    let kind = &field.data_type.kind;
    let coerce_all = |lits: &[Literal]| -> Result<(Vec<Value>, bool)> {
        let mut values: Vec<Value> = Vec::new();
        let mut has_null = false;
        for lit in lits {
            match coerce(lit, kind).map_err(|why| literal_error(leaf, field, lit, &why))? {
                Coerced::Null => has_null = true,
                Coerced::Exact(v) => {
                    if !values.contains(&v) {
                        values.push(v);
                    }
                }
                // Never equal to any value of the column.
                Coerced::Between(_) | Coerced::BelowAll => {}
            }
        }
        Ok((values, has_null))
    };
    let needs_comparable = !matches!(leaf.op, LeafOp::IsNull | LeafOp::IsNotNull);
    if needs_comparable && !comparable(kind) {
        return Err(Error::unsupported(format!(
            "filter on column `{}`{} of type {:?}: only IS [NOT] NULL is supported for it",
            field.name,
            super::at(leaf.position),
            kind
        )));
    }
    Ok(match &leaf.op {
        LeafOp::IsNull | LeafOp::IsNotNull => {
            if matches!(leaf.op, LeafOp::IsNull) != negate {
                Test::IsNull
            } else {
                Test::IsNotNull
            }
        }
        LeafOp::Compare(op, lit) => {
            let op = if negate { op.negate() } else { *op };
            let c = coerce(lit, kind).map_err(|why| literal_error(leaf, field, lit, &why))?;
            match rewrite(op, c) {
                Rewritten::Cmp(op, v) => Test::Cmp(op, v),
                Rewritten::IfNotNull(b) => Test::IfNotNull(b),
                Rewritten::Unknown => Test::Unknown,
            }
        }
        LeafOp::In(lits) | LeafOp::NotIn(lits) => {
            let (values, has_null) = coerce_all(lits)?;
            if matches!(leaf.op, LeafOp::In(_)) != negate {
                Test::In { values, has_null }
            } else {
                Test::NotIn { values, has_null }
            }
        }
    })
}

fn comparable(kind: &TypeKind) -> bool {
    matches!(
        kind,
        TypeKind::Boolean
            | TypeKind::TinyInt
            | TypeKind::SmallInt
            | TypeKind::Int
            | TypeKind::BigInt
            | TypeKind::Float
            | TypeKind::Double
            | TypeKind::Decimal { .. }
            | TypeKind::Char { .. }
            | TypeKind::VarChar { .. }
            | TypeKind::Binary { .. }
            | TypeKind::VarBinary { .. }
            | TypeKind::Date
            | TypeKind::Time { .. }
            | TypeKind::Timestamp { .. }
            | TypeKind::LocalZonedTimestamp { .. }
    )
}

fn literal_error(leaf: &Leaf, field: &DataField, lit: &Literal, why: &str) -> Error {
    Error::invalid(format!(
        "filter literal {lit} cannot be compared with column `{}`{} of type {}: {why}",
        field.name,
        super::at(leaf.position),
        type_name(&field.data_type.kind)
    ))
}

fn type_name(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Boolean => "BOOLEAN".into(),
        TypeKind::TinyInt => "TINYINT".into(),
        TypeKind::SmallInt => "SMALLINT".into(),
        TypeKind::Int => "INT".into(),
        TypeKind::BigInt => "BIGINT".into(),
        TypeKind::Float => "FLOAT".into(),
        TypeKind::Double => "DOUBLE".into(),
        TypeKind::Decimal { precision, scale } => format!("DECIMAL({precision}, {scale})"),
        TypeKind::Char { length } => format!("CHAR({length})"),
        TypeKind::VarChar { length } => format!("VARCHAR({length})"),
        TypeKind::Binary { length } => format!("BINARY({length})"),
        TypeKind::VarBinary { length } => format!("VARBINARY({length})"),
        TypeKind::Date => "DATE".into(),
        TypeKind::Time { precision } => format!("TIME({precision})"),
        TypeKind::Timestamp { precision } => format!("TIMESTAMP({precision})"),
        TypeKind::LocalZonedTimestamp { precision } => {
            format!("TIMESTAMP({precision}) WITH LOCAL TIME ZONE")
        }
        other => format!("{other:?}"),
    }
}

/// Coerces `lit` to a value of `kind`; `Err(reason)` when the literal has no meaning for the
/// type.
pub(crate) fn coerce(
    lit: &Literal,
    kind: &TypeKind,
) -> std::result::Result<Coerced<Value>, String> {
    if *lit == Literal::Null {
        return Ok(Coerced::Null);
    }
    let wrong = || Err(format!("a {} literal does not fit", literal_kind(lit)));
    match kind {
        TypeKind::Boolean => match lit {
            Literal::Boolean(b) => Ok(Coerced::Exact(Value::Boolean(*b))),
            Literal::String(s) if s.trim().eq_ignore_ascii_case("true") => {
                Ok(Coerced::Exact(Value::Boolean(true)))
            }
            Literal::String(s) if s.trim().eq_ignore_ascii_case("false") => {
                Ok(Coerced::Exact(Value::Boolean(false)))
            }
            Literal::String(_) => Err("expected 'true' or 'false'".into()),
            _ => wrong(),
        },
        TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::BigInt => {
            let (min, max): (i128, i128) = match kind {
                TypeKind::TinyInt => (i8::MIN.into(), i8::MAX.into()),
                TypeKind::SmallInt => (i16::MIN.into(), i16::MAX.into()),
                TypeKind::Int => (i32::MIN.into(), i32::MAX.into()),
                _ => (i64::MIN.into(), i64::MAX.into()),
            };
            let dec = number_of(lit)?;
            let c = match dec.floor_at_scale(0) {
                Floor::Below => Coerced::BelowAll,
                Floor::Above => Coerced::Between(max),
                Floor::Value(v, exact) => {
                    if v < min {
                        Coerced::BelowAll
                    } else if v > max {
                        Coerced::Between(max)
                    } else if exact {
                        Coerced::Exact(v)
                    } else {
                        Coerced::Between(v)
                    }
                }
            };
            // In range by construction.
            Ok(c.map(|v| match kind {
                TypeKind::TinyInt => Value::TinyInt(v as i8),
                TypeKind::SmallInt => Value::SmallInt(v as i16),
                TypeKind::Int => Value::Int(v as i32),
                _ => Value::BigInt(v as i64),
            }))
        }
        TypeKind::Float | TypeKind::Double => {
            let text = match lit {
                Literal::Number(n) => n.clone(),
                Literal::String(s) => s.trim().to_string(),
                _ => return wrong(),
            };
            let t: f64 = text
                .parse()
                .map_err(|_| format!("'{text}' is not a number"))?;
            if matches!(kind, TypeKind::Double) {
                return Ok(Coerced::Exact(Value::Double(t)));
            }
            // FLOAT rounds like a SQL cast (`f = 0.1` means the float nearest 0.1); only a
            // finite literal beyond the float range keeps its exact meaning.
            let v = t as f32;
            Ok(if v.is_finite() || !t.is_finite() {
                Coerced::Exact(Value::Float(v))
            } else if t > 0.0 {
                Coerced::Between(Value::Float(f32::MAX))
            } else {
                Coerced::Between(Value::Float(f32::NEG_INFINITY))
            })
        }
        TypeKind::Decimal { precision, scale } => {
            let dec = number_of(lit)?;
            let max = 10i128.checked_pow(*precision).map_or(i128::MAX, |p| p - 1);
            let c = match dec.floor_at_scale(*scale) {
                Floor::Below => Coerced::BelowAll,
                Floor::Above => Coerced::Between(max),
                Floor::Value(v, exact) => {
                    if v < -max {
                        Coerced::BelowAll
                    } else if v > max {
                        Coerced::Between(max)
                    } else if exact {
                        Coerced::Exact(v)
                    } else {
                        Coerced::Between(v)
                    }
                }
            };
            Ok(c.map(Value::Decimal))
        }
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => match lit {
            Literal::String(s) => Ok(Coerced::Exact(Value::String(s.clone()))),
            Literal::Number(n) => Ok(Coerced::Exact(Value::String(n.clone()))),
            Literal::Boolean(b) => Ok(Coerced::Exact(Value::String(b.to_string()))),
            _ => wrong(),
        },
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => match lit {
            Literal::String(s) => Ok(Coerced::Exact(Value::Binary(s.as_bytes().to_vec()))),
            Literal::Binary(b) => Ok(Coerced::Exact(Value::Binary(b.clone()))),
            _ => wrong(),
        },
        TypeKind::Date => {
            let ts = match lit {
                Literal::Date(d) => return Ok(Coerced::Exact(Value::Date(*d))),
                Literal::String(s) => {
                    if let Ok(d) = parse_date(s.trim()) {
                        return Ok(Coerced::Exact(Value::Date(d)));
                    }
                    parse_timestamp(s.trim())
                        .map_err(|why| format!("'{s}' is not a date 'yyyy-mm-dd': {why}"))?
                }
                Literal::Timestamp(t) => *t,
                _ => return wrong(),
            };
            let days = ts.millis.div_euclid(MILLIS_PER_DAY);
            let exact = ts.millis.rem_euclid(MILLIS_PER_DAY) == 0 && ts.nanos_of_milli == 0;
            Ok(match i32::try_from(days) {
                Ok(d) if exact => Coerced::Exact(Value::Date(d)),
                Ok(d) => Coerced::Between(Value::Date(d)),
                Err(_) if days < 0 => Coerced::BelowAll,
                Err(_) => Coerced::Between(Value::Date(i32::MAX)),
            })
        }
        TypeKind::Time { .. } => {
            let nanos = match lit {
                Literal::Time(n) => *n,
                Literal::String(s) => parse_time_nanos(s.trim())
                    .map_err(|why| format!("'{s}' is not a time 'hh:mm:ss': {why}"))?,
                _ => return wrong(),
            };
            // Paimon stores TIME as milliseconds of the day.
            let ms = nanos.div_euclid(1_000_000);
            let v = Value::Time(i32::try_from(ms).map_err(|_| "time out of range".to_string())?);
            Ok(if nanos.rem_euclid(1_000_000) == 0 {
                Coerced::Exact(v)
            } else {
                Coerced::Between(v)
            })
        }
        TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision } => {
            let ts = match lit {
                Literal::Timestamp(t) => *t,
                Literal::Date(d) => Timestamp {
                    millis: i64::from(*d) * MILLIS_PER_DAY,
                    nanos_of_milli: 0,
                },
                Literal::String(s) => parse_timestamp(s.trim()).map_err(|why| {
                    format!("'{s}' is not a timestamp 'yyyy-mm-dd hh:mm:ss[.f]': {why}")
                })?,
                _ => return wrong(),
            };
            let unit = 10i128.pow(9u32.saturating_sub((*precision).min(9)));
            let n = ts.epoch_nanos();
            let floor = n.div_euclid(unit) * unit;
            let v = Timestamp::from_epoch_nanos(floor).ok_or("timestamp out of range")?;
            Ok(if floor == n {
                Coerced::Exact(Value::Timestamp(v))
            } else {
                Coerced::Between(Value::Timestamp(v))
            })
        }
        _ => Err("the column type is not comparable".into()),
    }
}

fn literal_kind(lit: &Literal) -> &'static str {
    match lit {
        Literal::Null => "NULL",
        Literal::Boolean(_) => "BOOLEAN",
        Literal::Number(_) => "numeric",
        Literal::String(_) => "string",
        Literal::Binary(_) => "binary",
        Literal::Date(_) => "DATE",
        Literal::Time(_) => "TIME",
        Literal::Timestamp(_) => "TIMESTAMP",
    }
}

/// A decimal number `sign * (magnitude + δ) * 10^-scale` with `0 <= δ < 1`, `δ > 0` exactly
/// when `sticky` (digits beyond `i128` were dropped).
struct Decimal {
    negative: bool,
    magnitude: i128,
    /// May be negative (`1e5` is magnitude 1, scale -5).
    scale: i64,
    sticky: bool,
}

enum Floor {
    /// Floor at the requested scale and whether it is exact.
    Value(i128, bool),
    /// Above every `i128` at that scale.
    Above,
    /// Below every `i128` at that scale.
    Below,
}

impl Decimal {
    fn floor_at_scale(&self, target: u32) -> Floor {
        let shift = i64::from(target) - self.scale;
        let signed = if self.negative {
            -self.magnitude
        } else {
            self.magnitude
        };
        let (q, on_grid) = if shift >= 0 {
            let factor = u32::try_from(shift)
                .ok()
                .and_then(|s| 10i128.checked_pow(s));
            match factor.and_then(|f| signed.checked_mul(f)) {
                Some(v) => (v, true),
                None if self.magnitude == 0 => (0, true),
                None if self.negative => return Floor::Below,
                None => return Floor::Above,
            }
        } else {
            match u32::try_from(-shift)
                .ok()
                .and_then(|s| 10i128.checked_pow(s))
            {
                Some(d) => (signed.div_euclid(d), signed.rem_euclid(d) == 0),
                // |signed| < 10^39 <= divisor: the value is in (-1, 1).
                None if self.magnitude == 0 => (0, true),
                None if self.negative => (-1, false),
                None => (0, false),
            }
        };
        if !self.sticky {
            return Floor::Value(q, on_grid);
        }
        // The dropped digits move a positive value up within its cell, a negative one down;
        // a negative value on the grid falls into the cell below.
        if self.negative && on_grid {
            match q.checked_sub(1) {
                Some(q) => Floor::Value(q, false),
                None => Floor::Below,
            }
        } else {
            Floor::Value(q, false)
        }
    }
}

fn number_of(lit: &Literal) -> std::result::Result<Decimal, String> {
    let text = match lit {
        Literal::Number(n) => n.as_str(),
        Literal::String(s) => s.trim(),
        _ => return Err(format!("a {} literal does not fit", literal_kind(lit))),
    };
    parse_decimal(text).ok_or_else(|| format!("'{text}' is not a number"))
}

/// `[+-]digits[.digits][e[+-]digits]` exactly (digits beyond `i128` are dropped and
/// remembered as `sticky`); `None` if malformed.
fn parse_decimal(text: &str) -> Option<Decimal> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, text.get(1..)?),
        b'+' => (false, text.get(1..)?),
        _ => (false, text),
    };
    let (num, exp) = match rest.find(['e', 'E']) {
        Some(i) => (rest.get(..i)?, rest.get(i + 1..)?.parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = match num.find('.') {
        Some(i) => (num.get(..i)?, num.get(i + 1..)?),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut magnitude: i128 = 0;
    let mut sticky = false;
    let mut scale: i64 = 0;
    let mut full = false;
    for (c, in_frac) in int
        .chars()
        .map(|c| (c, false))
        .chain(frac.chars().map(|c| (c, true)))
    {
        let d = c.to_digit(10)?;
        if !full {
            match magnitude
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(d)))
            {
                Some(m) => {
                    magnitude = m;
                    if in_frac {
                        scale += 1;
                    }
                    continue;
                }
                None => full = true,
            }
        }
        sticky |= d != 0;
        if !in_frac {
            // An integer digit that does not fit: the value is ten times larger.
            scale -= 1;
        }
    }
    Some(Decimal {
        negative,
        magnitude,
        scale: scale.checked_sub(exp)?,
        sticky,
    })
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn fixed_digits(s: &str, what: &str) -> std::result::Result<u32, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("bad {what} '{s}'"));
    }
    s.parse().map_err(|_| format!("bad {what} '{s}'"))
}

/// `yyyy-mm-dd` (year 0..=9999, month and day 1 or 2 digits) to days since 1970-01-01.
pub(crate) fn parse_date(s: &str) -> std::result::Result<i32, String> {
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("'{s}' is not yyyy-mm-dd"));
    };
    if y.len() != 4 || m.is_empty() || m.len() > 2 || d.is_empty() || d.len() > 2 {
        return Err(format!("'{s}' is not yyyy-mm-dd"));
    }
    let y = fixed_digits(y, "year")?;
    let m = fixed_digits(m, "month")?;
    let d = fixed_digits(d, "day")?;
    if !(1..=12).contains(&m) {
        return Err(format!("month {m} is not 1..12"));
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in_month = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=days_in_month).contains(&d) {
        return Err(format!("day {d} is not 1..{days_in_month} for month {m}"));
    }
    i32::try_from(days_from_civil(i64::from(y), m, d)).map_err(|_| "date out of range".into())
}

/// `hh:mm[:ss[.fffffffff]]` to nanoseconds of the day.
pub(crate) fn parse_time_nanos(s: &str) -> std::result::Result<i64, String> {
    let (hms, frac) = match s.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 || parts.iter().any(|p| p.len() != 2) {
        return Err(format!("'{s}' is not hh:mm:ss"));
    }
    if frac.is_some() && parts.len() != 3 {
        return Err(format!("'{s}' is not hh:mm:ss"));
    }
    let h = fixed_digits(parts[0], "hour")?;
    let m = fixed_digits(parts[1], "minute")?;
    let sec = match parts.get(2) {
        Some(p) => fixed_digits(p, "second")?,
        None => 0,
    };
    if h > 23 || m > 59 || sec > 59 {
        return Err(format!("'{s}' is not a valid time of day"));
    }
    let mut nanos: i64 = 0;
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("fraction '{f}' is not 1..9 digits"));
        }
        let v: i64 = f.parse().map_err(|_| format!("bad fraction '{f}'"))?;
        nanos = v * 10i64.pow(9 - f.len() as u32);
    }
    Ok(((i64::from(h) * 60 + i64::from(m)) * 60 + i64::from(sec)) * 1_000_000_000 + nanos)
}

/// `yyyy-mm-dd[( |T)hh:mm[:ss[.fffffffff]]]`.
pub(crate) fn parse_timestamp(s: &str) -> std::result::Result<Timestamp, String> {
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (
            s.get(..i).unwrap_or(""),
            Some(s.get(i + 1..).unwrap_or("").trim_start()),
        ),
        None => (s, None),
    };
    let days = parse_date(date)?;
    let nanos = match time {
        Some(t) => parse_time_nanos(t)?,
        None => 0,
    };
    let total = i128::from(days) * i128::from(NANOS_PER_DAY) + i128::from(nanos);
    Timestamp::from_epoch_nanos(total).ok_or_else(|| "timestamp out of range".into())
}

pub(crate) fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(i64::from(days));
    format!("{y:04}-{m:02}-{d:02}")
}

pub(crate) fn format_time_nanos(nanos: i64) -> String {
    let secs = nanos.div_euclid(1_000_000_000);
    let frac = nanos.rem_euclid(1_000_000_000);
    let base = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac == 0 {
        base
    } else {
        let f = format!("{frac:09}");
        format!("{base}.{}", f.trim_end_matches('0'))
    }
}

pub(crate) fn format_timestamp(t: Timestamp) -> String {
    let n = t.epoch_nanos();
    let day_nanos = i128::from(NANOS_PER_DAY);
    let days = n.div_euclid(day_nanos);
    let rest = n.rem_euclid(day_nanos);
    format!(
        "{} {}",
        format_date(i32::try_from(days).unwrap_or(i32::MAX)),
        format_time_nanos(i64::try_from(rest).unwrap_or(0))
    )
}
