//! Java's text of values: strings parsed as `BinaryStringUtils` and `DateTimeUtils` parse them
//! (numbers, booleans, dates, times, timestamps) and values formatted as Java prints them
//! (timestamps, times, dates, nested values as strings).
//!
//! Source: Java `org.apache.paimon.utils.BinaryStringUtils`, `DateTimeUtils`,
//! `org.apache.paimon.casting.{ArrayToStringCastRule, MapToStringCastRule, RowToStringCastRule}`.

use super::*;

/// Java `new BigDecimal(String)`: optional sign, digits with an optional point, an optional
/// exponent; (negative, digits, scale) or `None`.
pub(super) fn parse_big_decimal(s: &str) -> Option<(bool, String, i64)> {
    let b = s.as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut digits = String::new();
    let mut frac = 0i64;
    let mut seen_point = false;
    while i < b.len() {
        match b[i] {
            c @ b'0'..=b'9' => {
                digits.push(char::from(c));
                if seen_point {
                    frac += 1;
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        i += 1;
    }
    if digits.is_empty() {
        return None;
    }
    let mut exp = 0i64;
    if i < b.len() {
        if !matches!(b[i], b'e' | b'E') {
            return None;
        }
        let rest = &s[i + 1..];
        let e: i32 = rest.strip_prefix('+').unwrap_or(rest).parse().ok()?;
        if rest.starts_with("+-") || rest.is_empty() {
            return None;
        }
        exp = i64::from(e);
    }
    Some((negative, digits, frac - exp))
}

/// Java `BinaryStringUtils.toBoolean`.
pub(super) fn string_to_boolean(s: &str) -> CastOutcome<bool> {
    match s.to_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "1" => Ok(true),
        "f" | "false" | "n" | "no" | "0" => Ok(false),
        _ => Err(value_error(format!("Cannot parse '{s}' as BOOLEAN."))),
    }
}

/// Java `BinaryStringUtils.toLong` / `toInt` (then `toShort`, `toByte`): an optional sign,
/// digits, and an ignored fraction of digits after a point; no spaces; the value must lie in
/// `min..=max`.
pub(super) fn java_to_integral(s: &str, min: i128, max: i128) -> CastOutcome<i128> {
    let fail = |why: &str| value_error(format!("For input string: '{s}'. {why}"));
    let b = s.as_bytes();
    if b.is_empty() {
        return Err(fail("Input is empty."));
    }
    let mut i = 0;
    let negative = b[0] == b'-';
    if negative || b[0] == b'+' {
        i = 1;
        if b.len() == 1 {
            return Err(fail("Input has only positive or negative symbol."));
        }
    }
    let limit = if negative { -min } else { max };
    let mut acc: i128 = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        if c == b'.' {
            break;
        }
        if !c.is_ascii_digit() {
            return Err(fail("Invalid character found."));
        }
        acc = acc * 10 + i128::from(c - b'0');
        if acc > limit {
            return Err(fail("Overflow."));
        }
    }
    if b[i..].iter().any(|c| !c.is_ascii_digit()) {
        return Err(fail("Invalid character found."));
    }
    Ok(if negative { -acc } else { acc })
}

/// The numeric part of a Java `Double.parseDouble` / `Float.parseFloat` input, or its special
/// value: trimmed, an optional `f`/`d` suffix, `NaN`, `Infinity`.
pub(super) fn java_float_text(s: &str) -> CastOutcome<std::result::Result<String, f64>> {
    let t = s.trim_matches(|c: char| c <= ' ');
    let (sign, body) = match t.as_bytes().first() {
        Some(b'-') => (-1.0, &t[1..]),
        Some(b'+') => (1.0, &t[1..]),
        _ => (1.0, t),
    };
    match body {
        "NaN" => return Ok(Err(f64::NAN)),
        "Infinity" => return Ok(Err(sign * f64::INFINITY)),
        _ => {}
    }
    let body = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
    let bad = || value_error(format!("For input string: \"{s}\""));
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |x: &str| x.bytes().all(|c| c.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err(bad());
    }
    if let Some(e) = exponent {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        if e.is_empty() || !digits(e) {
            return Err(bad());
        }
    }
    let mut text = String::with_capacity(t.len() + 2);
    if sign < 0.0 {
        text.push('-');
    }
    text.push_str(if int.is_empty() { "0" } else { int });
    if !frac.is_empty() {
        text.push('.');
        text.push_str(frac);
    }
    if let Some(e) = exponent {
        text.push('e');
        text.push_str(e);
    }
    Ok(Ok(text))
}

/// Java `Double.parseDouble` (decimal notation; hexadecimal floats are not read).
pub(super) fn java_parse_double(s: &str) -> CastOutcome<f64> {
    match java_float_text(s)? {
        Err(special) => Ok(special),
        Ok(text) => text
            .parse()
            .map_err(|_| value_error(format!("For input string: \"{s}\""))),
    }
}

/// Java `Float.parseFloat` (rounded once, to the nearest `float`).
pub(super) fn java_parse_float(s: &str) -> CastOutcome<f32> {
    match java_float_text(s)? {
        Err(special) => Ok(special as f32),
        Ok(text) => text
            .parse()
            .map_err(|_| value_error(format!("For input string: \"{s}\""))),
    }
}

/// Java `StringUtils.isNumeric`: an optional leading `-`, then digits only.
pub(super) fn is_numeric(s: &str) -> bool {
    let body = s.strip_prefix('-').unwrap_or(s);
    !body.is_empty() && body.chars().all(|c| c.is_ascii_digit())
}

/// Java `DateTimeUtils.isInteger`: one or more ASCII digits.
pub(super) fn is_integer(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

pub(super) fn parse_int(s: &str) -> Option<i32> {
    if is_integer(s) { s.parse().ok() } else { None }
}

pub(super) fn is_leap(y: i64) -> bool {
    y % 400 == 0 || (y % 4 == 0 && y % 100 != 0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Java `BinaryStringUtils.toDate`: a day number, or `DateTimeUtils.parseDate`
/// (`y[-m[-d]][ ...]`, each part trimmed).
pub(super) fn string_to_date(s: &str) -> CastOutcome<i32> {
    if is_numeric(s) {
        return java_to_integral(s, i32::MIN.into(), i32::MAX.into()).map(|v| v as i32);
    }
    let fail = || value_error(format!("For input string: '{s}'."));
    let date = match s.find(' ') {
        Some(ws) if ws > 0 => &s[..ws],
        _ => s,
    };
    let parts: Vec<&str> = date.splitn(3, '-').collect();
    let num = |p: &str| parse_int(p.trim()).ok_or_else(fail);
    let (y, m, d) = match parts.as_slice() {
        [y] => (num(y)?, 1, 1),
        [y, m] => (num(y)?, num(m)?, 1),
        [y, m, d] => (num(y)?, num(m)?, num(d)?),
        _ => return Err(fail()),
    };
    let (y, m, d) = (i64::from(y), i64::from(m), i64::from(d));
    let legal = (0..=9999).contains(&y)
        && (1..=12).contains(&m)
        && (1..=31).contains(&d)
        && !(m == 2 && d > 28 && !(is_leap(y) && d == 29))
        && (d != 31 || [1, 3, 5, 7, 8, 10, 12].contains(&m));
    if !legal {
        return Err(fail());
    }
    Ok(days_from_civil(y, m, d) as i32)
}

/// Java `BinaryStringUtils.toTime`: a number of milliseconds, or `DateTimeUtils.parseTime`
/// (`h[:m[:s[.fff]]]` with an optional `+h[:m]`/`-h[:m]` zone, applied as Java applies it).
pub(super) fn string_to_time(v: &str) -> CastOutcome<i32> {
    if is_numeric(v) {
        return java_to_integral(v, i32::MIN.into(), i32::MAX.into()).map(|v| v as i32);
    }
    let fail = || value_error(format!("For input string: '{v}'."));
    let int = |p: &str| parse_int(p.trim()).ok_or_else(fail);
    let mut operator = -1;
    let mut end = v.len();
    let mut zone = v.find('-');
    if zone.is_none() {
        zone = v.find('+');
        operator = 1;
    }
    let (zone_hour, zone_minute) = match zone {
        None => (0, 0),
        Some(z) => {
            end = z;
            match v[z..].find(':').map(|c| c + z) {
                None => (int(&v[z + 1..])?, 0),
                Some(c3) => (int(&v[z + 1..c3])?, int(&v[c3 + 1..])?),
            }
        }
    };
    let (hour, minute, second, milli) = match v.find(':') {
        None => (int(v.get(..end).ok_or_else(fail)?)?, 0, 0, 0),
        Some(c1) => {
            let hour = int(v.get(..c1).ok_or_else(fail)?)?;
            match v[c1 + 1..].find(':').map(|c| c + c1 + 1) {
                None => (hour, int(v.get(c1 + 1..end).ok_or_else(fail)?)?, 0, 0),
                Some(c2) => {
                    let minute = int(&v[c1 + 1..c2])?;
                    match v[c2..].find('.').map(|d| d + c2) {
                        None => (hour, minute, int(v.get(c2 + 1..end).ok_or_else(fail)?)?, 0),
                        Some(dot) => (
                            hour,
                            minute,
                            int(&v[c2 + 1..dot])?,
                            parse_fraction(v.get(dot + 1..end).ok_or_else(fail)?.trim()),
                        ),
                    }
                }
            }
        }
    };
    let hour = hour.wrapping_add(operator * zone_hour);
    let minute = minute.wrapping_add(operator * zone_minute);
    Ok(hour
        .wrapping_mul(3_600_000)
        .wrapping_add(minute.wrapping_mul(60_000))
        .wrapping_add(second.wrapping_mul(1000))
        .wrapping_add(milli))
}

/// Java `DateTimeUtils.parseFraction`: milliseconds of a fraction, rounded at the fourth digit.
pub(super) fn parse_fraction(v: &str) -> i32 {
    let b = v.as_bytes();
    let mut multiplier = 100;
    let mut r = 0;
    for (i, c) in b.iter().enumerate() {
        let x = if c.is_ascii_digit() {
            i32::from(c - b'0')
        } else {
            0
        };
        r += multiplier * x;
        if multiplier < 10 {
            if b.get(i + 1).is_some_and(|n| *n >= b'5') {
                r += 1;
            }
            break;
        }
        multiplier /= 10;
    }
    r
}

/// Java `BinaryStringUtils.fromMillisToTimestamp`: an epoch number in the unit of `precision`
/// (0, 3, 6 or 9); `None` for other precisions (Java throws).
pub(super) fn epoch_to_timestamp(epoch: i64, precision: u32) -> Option<(i64, i32)> {
    let (mut millis, mut nanos) = match precision {
        0 => (epoch.wrapping_mul(1000), 0),
        3 => (epoch, 0),
        6 => (epoch / 1000, ((epoch % 1000) * 1000) as i32),
        9 => (epoch / 1_000_000, (epoch % 1_000_000) as i32),
        _ => return None,
    };
    if nanos < 0 {
        nanos += 1_000_000;
        millis -= 1;
    }
    Some((millis, nanos))
}

/// Consume 1..=max ASCII digits at `*i`.
pub(super) fn digits_at(b: &[u8], i: &mut usize, min: usize, max: usize) -> Option<i64> {
    let start = *i;
    while *i < b.len() && *i - start < max && b[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i - start < min {
        return None;
    }
    std::str::from_utf8(&b[start..*i]).ok()?.parse().ok()
}

/// Java `DateTimeUtils.parseTimestampData`: `yyyy-M-d[ H:m:s[.fffffffff]]` (four digits for
/// the year, one or two for month, day, hour, minute and second), an invalid day clamped to the
/// month's last day and `24:00:00` read as the next midnight, as Java's SMART resolver does,
/// the fraction cut to `precision` digits.
pub(super) fn parse_timestamp(s: &str, precision: u32) -> Option<(i64, i32)> {
    let b = s.as_bytes();
    let mut i = 0;
    // `yyyy` without a sign: exactly four digits.
    let year = digits_at(b, &mut i, 4, 4)?;
    let expect = |i: &mut usize, c: u8| {
        if b.get(*i) == Some(&c) {
            *i += 1;
            true
        } else {
            false
        }
    };
    if !expect(&mut i, b'-') {
        return None;
    }
    let month = digits_at(b, &mut i, 1, 2)?;
    if !expect(&mut i, b'-') {
        return None;
    }
    let day = digits_at(b, &mut i, 1, 2)?;
    let (mut hour, mut minute, mut second, mut nanos) = (0, 0, 0, 0i64);
    if i < b.len() {
        let time = (|| {
            let mut j = i;
            if !expect(&mut j, b' ') {
                return None;
            }
            let h = digits_at(b, &mut j, 1, 2)?;
            if !expect(&mut j, b':') {
                return None;
            }
            let mi = digits_at(b, &mut j, 1, 2)?;
            if !expect(&mut j, b':') {
                return None;
            }
            let se = digits_at(b, &mut j, 0, 2).unwrap_or(0);
            let mut n = 0i64;
            if expect(&mut j, b'.') {
                let start = j;
                let f = digits_at(b, &mut j, 0, 9).unwrap_or(0);
                n = f * 10i64.pow(9 - (j - start) as u32);
            }
            (j == b.len()).then_some((h, mi, se, n))
        })()?;
        (hour, minute, second, nanos) = time;
    }
    // The SMART resolver reads 24:00:00 as the midnight that ends the day.
    let end_of_day = hour == 24 && minute == 0 && second == 0 && nanos == 0;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || (hour > 23 && !end_of_day)
        || minute > 59
        || second > 59
    {
        return None;
    }
    let last = match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 31,
    };
    let day = day.min(last);
    let step = 10i64.pow(9 - precision.min(9));
    let nanos = nanos - nanos % step;
    let days = days_from_civil(year, month, day) + i64::from(end_of_day);
    let hour = if end_of_day { 0 } else { hour };
    let millis = days
        .checked_mul(MILLIS_PER_DAY)?
        .checked_add(hour * 3_600_000 + minute * 60_000 + second * 1000 + nanos / 1_000_000)?;
    Some((millis, (nanos % 1_000_000) as i32))
}

/// Java `DateTimeUtils.truncate`: keep `precision` fraction digits (a precision up to 3 cuts
/// the epoch milliseconds toward zero).
pub(super) fn truncate_timestamp(millis: i64, nanos: i32, precision: u32) -> (i64, i32) {
    let nano_of_second = millis.rem_euclid(1000) * 1_000_000 + i64::from(nanos);
    let text = format!("{nano_of_second:09}");
    let significant = text.trim_end_matches('0').len();
    if significant <= precision as usize {
        (millis, nanos)
    } else if precision <= 3 {
        let step = 10i64.pow(3 - precision);
        ((millis / step) * step, 0)
    } else {
        let step = 10i32.pow(9 - precision);
        (millis, (nanos / step) * step)
    }
}

/// Java's `int4`/`int2` of `DateTimeUtils`: fixed digits by division (no sign handling).
pub(super) fn push_digits(out: &mut String, v: i64, width: u32) {
    for k in (0..width).rev() {
        let digit = (v / 10i64.pow(k)) % 10;
        out.push(char::from_u32((i64::from(b'0') + digit) as u32).unwrap_or('?'));
    }
}

/// Java `DateTimeUtils.formatTimestamp(ts, precision)`: `yyyy-MM-dd HH:mm:ss` and the nanos
/// of the second, trailing zeros dropped while longer than `precision`.
pub(super) fn format_timestamp(millis: i64, nanos: i32, precision: u32) -> String {
    let mut date = millis / MILLIS_PER_DAY;
    let mut time = millis % MILLIS_PER_DAY;
    if time < 0 {
        date -= 1;
        time += MILLIS_PER_DAY;
    }
    let nano_of_day = time * 1_000_000 + i64::from(nanos);
    let (y, mo, d) = civil_from_days(date);
    let second_of_day = nano_of_day / 1_000_000_000;
    let mut out = String::with_capacity(29);
    push_digits(&mut out, y, 4);
    out.push('-');
    push_digits(&mut out, i64::from(mo), 2);
    out.push('-');
    push_digits(&mut out, i64::from(d), 2);
    out.push(' ');
    push_digits(&mut out, second_of_day / 3600, 2);
    out.push(':');
    push_digits(&mut out, second_of_day / 60 % 60, 2);
    out.push(':');
    push_digits(&mut out, second_of_day % 60, 2);
    let mut fraction = format!("{:09}", nano_of_day % 1_000_000_000);
    while fraction.len() > precision as usize && fraction.ends_with('0') {
        fraction.pop();
    }
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(&fraction);
    }
    out
}

/// Java `DateTimeUtils.formatTimestampMillis(time, precision)`: `HH:mm:ss[.fff]`.
pub(super) fn format_time(time: i32, precision: u32) -> String {
    let mut t = i64::from(time);
    while t < 0 {
        t += MILLIS_PER_DAY;
    }
    let mut out = String::with_capacity(12);
    push_digits(&mut out, t / 3_600_000, 2);
    out.push(':');
    push_digits(&mut out, t % 3_600_000 / 60_000, 2);
    out.push(':');
    push_digits(&mut out, t % 60_000 / 1000, 2);
    let mut ms = t % 1000;
    let mut p = precision;
    if p > 0 {
        out.push('.');
        while p > 0 {
            push_digits(&mut out, ms / 100, 1);
            ms = ms % 100 * 10;
            if ms == 0 {
                break;
            }
            p -= 1;
        }
    }
    out
}

/// Java `DateTimeUtils.formatDate`: `yyyy-MM-dd`.
pub(super) fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(i64::from(days));
    let mut out = String::with_capacity(10);
    push_digits(&mut out, y, 4);
    out.push('-');
    push_digits(&mut out, i64::from(m), 2);
    out.push('-');
    push_digits(&mut out, i64::from(d), 2);
    out
}

/// Java's cast of the value at `row` to `STRING` (`CastExecutors.resolve(type, STRING)`) as the
/// `ARRAY`/`MAP`/`ROW` to-string rules render elements: `[a, b]`, `{k -> v}`, `{a, b}`, NULL
/// elements as `null`; `None` for a NULL value.
pub(super) fn java_string_at(
    array: &dyn Array,
    ty: &DataType,
    row: usize,
) -> CastOutcome<Option<String>> {
    if array.is_null(row) {
        return Ok(None);
    }
    let or_null = |s: Option<String>| s.unwrap_or_else(|| "null".to_string());
    Ok(Some(match &ty.kind {
        TypeKind::Array(e) => {
            let l = array
                .as_list_opt::<i32>()
                .ok_or_else(|| mismatch(array, ty))?;
            let items = l.value(row);
            let mut parts = Vec::with_capacity(items.len());
            for i in 0..items.len() {
                parts.push(or_null(java_string_at(items.as_ref(), e, i)?));
            }
            format!("[{}]", parts.join(", "))
        }
        TypeKind::Map(k, v) => {
            let m = array.as_map_opt().ok_or_else(|| mismatch(array, ty))?;
            let offsets = m.value_offsets();
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let mut parts = Vec::with_capacity(end - start);
            for i in start..end {
                parts.push(format!(
                    "{} -> {}",
                    or_null(java_string_at(m.keys().as_ref(), k, i)?),
                    or_null(java_string_at(m.values().as_ref(), v, i)?)
                ));
            }
            format!("{{{}}}", parts.join(", "))
        }
        TypeKind::Row(fields) => {
            let s = array.as_struct_opt().ok_or_else(|| mismatch(array, ty))?;
            let mut parts = Vec::with_capacity(fields.len());
            for (c, f) in s.columns().iter().zip(fields) {
                parts.push(or_null(java_string_at(c.as_ref(), &f.data_type, row)?));
            }
            format!("{{{}}}", parts.join(", "))
        }
        _ => {
            let string = DataType::nullable(TypeKind::VarChar { length: MAX_LENGTH });
            let Some(rule) = resolve_rule(ty, &string).filter(|_| has_cast_executor(ty, &string))
            else {
                return Err(Failure::Unsupported(format!(
                    "Java cannot cast elements of type {ty} to STRING"
                )));
            };
            match value_at(array, ty, row)? {
                None => return Ok(None),
                Some(v) => match cast_value(v, ty, &string, rule)? {
                    Some(Value::Str(s)) => s,
                    _ => return Ok(None),
                },
            }
        }
    }))
}
