//! Java's renderings of numbers, dates and times (`Double.toString`, `LocalDate`,
//! `LocalDateTime`, ...), as a [`Datum`] prints.
//!
//! Source: Java `java.lang.Double#toString`, `java.math.BigDecimal#toPlainString`,
//! `org.apache.paimon.utils.DateTimeUtils`.

/// Java `Double.toString`: shortest round-trip digits, plain notation for
/// `1e-3 <= |v| < 1e7` (always with a fraction, `1.0`), else `d.dddE±n`; `NaN`, `Infinity`.
pub fn java_double_to_string(v: f64) -> String {
    java_float_like(
        v.is_nan(),
        v.is_infinite(),
        v == 0.0,
        v.is_sign_negative(),
        v.abs(),
        || (format!("{v}"), format!("{v:e}")),
    )
}

/// Java `Float.toString` (same rules as [`java_double_to_string`], shortest digits of the
/// `f32`).
pub fn java_float_to_string(v: f32) -> String {
    java_float_like(
        v.is_nan(),
        v.is_infinite(),
        v == 0.0,
        v.is_sign_negative(),
        f64::from(v.abs()),
        || (format!("{v}"), format!("{v:e}")),
    )
}

fn java_float_like(
    nan: bool,
    inf: bool,
    zero: bool,
    neg: bool,
    abs: f64,
    render: impl FnOnce() -> (String, String),
) -> String {
    if nan {
        return "NaN".into();
    }
    if inf {
        return if neg { "-Infinity" } else { "Infinity" }.into();
    }
    if zero {
        return if neg { "-0.0" } else { "0.0" }.into();
    }
    let (plain, sci) = render();
    if (1e-3..1e7).contains(&abs) {
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        // Rust: `1.5e7`, `1e-5`; Java: `1.5E7`, `1.0E-5`.
        let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
        if mantissa.contains('.') {
            format!("{mantissa}E{exp}")
        } else {
            format!("{mantissa}.0E{exp}")
        }
    }
}

/// Java `BigDecimal#toPlainString` of `unscaled × 10^-scale` (e.g. `-10`, 2 → `-0.10`).
pub fn decimal_to_plain_string(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        format!("{sign}{int}.{frac}")
    } else {
        format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
    }
}

/// Proleptic Gregorian (year, month, day) of `days` since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn java_year(y: i64) -> String {
    if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    }
}

/// `yyyy-MM-dd` of a DATE day count (Java `DateTimeUtils.formatDate`).
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(i64::from(days));
    format!("{}-{m:02}-{d:02}", java_year(y))
}

/// `HH:mm:ss[.fff]` of a TIME millis-of-day at `precision` (Java
/// `DateTimeUtils.formatTimestampMillis`: fraction digits stop at the last non-zero one).
pub fn format_time(millis_of_day: i32, precision: u32) -> String {
    let mut t = i64::from(millis_of_day).rem_euclid(86_400_000);
    let h = t / 3_600_000;
    t %= 3_600_000;
    let m = t / 60_000;
    t %= 60_000;
    let s = t / 1000;
    let mut ms = t % 1000;
    let mut out = format!("{h:02}:{m:02}:{s:02}");
    let mut p = precision;
    if p > 0 {
        out.push('.');
        while p > 0 {
            out.push(char::from(b'0' + (ms / 100) as u8));
            ms = (ms % 100) * 10;
            if ms == 0 {
                break;
            }
            p -= 1;
        }
    }
    out
}

fn split_epoch_millis(millis: i64) -> (i64, i64, i64, i64, i64) {
    let days = millis.div_euclid(86_400_000);
    let ms_of_day = millis.rem_euclid(86_400_000);
    let h = ms_of_day / 3_600_000;
    let mi = ms_of_day % 3_600_000 / 60_000;
    let s = ms_of_day % 60_000 / 1000;
    let ms = ms_of_day % 1000;
    (days, h, mi, s, ms)
}

/// `yyyy-MM-dd HH:mm:ss[.f…]` of a timestamp at `precision` (Java
/// `DateTimeUtils.formatTimestamp`: the 9-digit nanos with trailing zeros removed while longer
/// than `precision`).
pub fn format_timestamp(millis: i64, nanos_of_milli: i32, precision: u32) -> String {
    let (days, h, mi, s, ms) = split_epoch_millis(millis);
    let (y, mo, d) = civil_from_days(days);
    let nanos = ms * 1_000_000 + i64::from(nanos_of_milli);
    let mut frac = format!("{nanos:09}");
    while frac.len() > precision as usize && frac.ends_with('0') {
        frac.pop();
    }
    let mut out = format!("{}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}", java_year(y));
    if !frac.is_empty() {
        out.push('.');
        out.push_str(&frac);
    }
    out
}

/// Java `LocalDateTime#toString` of a timestamp: `yyyy-MM-ddTHH:mm`, then `:ss` when seconds
/// or nanos are non-zero, then `.SSS`, `.SSSSSS` or `.SSSSSSSSS` as needed.
pub fn format_local_date_time(millis: i64, nanos_of_milli: i32) -> String {
    let (days, h, mi, s, ms) = split_epoch_millis(millis);
    let (y, mo, d) = civil_from_days(days);
    let nanos = ms * 1_000_000 + i64::from(nanos_of_milli);
    let mut out = format!("{}-{mo:02}-{d:02}T{h:02}:{mi:02}", java_year(y));
    if s > 0 || nanos > 0 {
        out.push_str(&format!(":{s:02}"));
        if nanos > 0 {
            if nanos % 1_000_000 == 0 {
                out.push_str(&format!(".{:03}", nanos / 1_000_000));
            } else if nanos % 1000 == 0 {
                out.push_str(&format!(".{:06}", nanos / 1000));
            } else {
                out.push_str(&format!(".{nanos:09}"));
            }
        }
    }
    out
}
