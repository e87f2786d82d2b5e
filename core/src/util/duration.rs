//! Durations as Java writes them in options and procedure arguments.
//!
//! Source: Java `org.apache.paimon.utils.TimeUtils.parseDuration`.

use crate::error::{Error, Result};

/// Units and their labels, as Java's `TimeUtils.TimeUnit` (plural labels end in `s`).
const UNITS: &[(&[&str], Unit)] = &[
    (&["d", "day", "days"], Unit::Millis(86_400_000)),
    (&["h", "hour", "hours"], Unit::Millis(3_600_000)),
    (&["min", "m", "minute", "minutes"], Unit::Millis(60_000)),
    (
        &["s", "sec", "secs", "second", "seconds"],
        Unit::Millis(1_000),
    ),
    (
        &["ms", "milli", "millis", "millisecond", "milliseconds"],
        Unit::Millis(1),
    ),
    (
        &["µs", "micro", "micros", "microsecond", "microseconds"],
        Unit::Fraction(1_000),
    ),
    (
        &["ns", "nano", "nanos", "nanosecond", "nanoseconds"],
        Unit::Fraction(1_000_000),
    ),
];

#[derive(Clone, Copy)]
enum Unit {
    /// Milliseconds per unit.
    Millis(i64),
    /// Units per millisecond (the result is truncated, as Java's `Duration.toMillis`).
    Fraction(i64),
}

/// Parse a duration such as `1 d`, `2 h`, `30 min`, `0 s`, `1d`, `100ms` or `500` (no unit:
/// milliseconds) into milliseconds.
///
/// Rules (Java `TimeUtils.parseDuration`): surrounding whitespace is trimmed; the text starts
/// with decimal digits (no sign); the rest, trimmed and lower-cased, is empty or one of the
/// unit labels `d|day|days`, `h|hour|hours`, `min|m|minute|minutes`,
/// `s|sec|secs|second|seconds`, `ms|milli|millis|millisecond|milliseconds`,
/// `µs|micro|micros|microsecond|microseconds`, `ns|nano|nanos|nanosecond|nanoseconds`.
/// Sub-millisecond results are truncated.
///
/// # Errors
/// [`Error::Invalid`] naming the text for an empty text, a missing number, a number that
/// does not fit 64 bits (also after conversion to milliseconds) or an unknown unit.
pub fn parse_duration_millis(text: &str) -> Result<i64> {
    let bad = |why: &str| Error::invalid(format!("invalid duration '{text}': {why}"));
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(bad("empty"));
    }
    let digits = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, rest) = trimmed.split_at(digits);
    if number.is_empty() {
        return Err(bad("it does not start with a number"));
    }
    let value: i64 = number
        .parse()
        .map_err(|_| bad("the number does not fit 64 bits"))?;
    let label = rest.trim().to_lowercase();
    if label.is_empty() {
        return Ok(value);
    }
    let unit = UNITS
        .iter()
        .find(|(labels, _)| labels.contains(&label.as_str()))
        .map(|(_, u)| *u)
        .ok_or_else(|| bad("unknown unit (use d, h, min, s, ms, µs or ns, or their long forms)"))?;
    match unit {
        Unit::Millis(per) => value
            .checked_mul(per)
            .ok_or_else(|| bad("too large in milliseconds")),
        Unit::Fraction(per) => Ok(value / per),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_java_forms() {
        for (text, millis) in [
            ("1 d", 86_400_000),
            ("1d", 86_400_000),
            ("2 h", 7_200_000),
            ("2 HOURS", 7_200_000),
            ("30 min", 1_800_000),
            ("30m", 1_800_000),
            ("0 s", 0),
            ("5 secs", 5_000),
            ("100ms", 100),
            ("100", 100),
            ("  7 days ", 604_800_000),
            ("2500 µs", 2),
            ("1999999 ns", 1),
        ] {
            assert_eq!(parse_duration_millis(text).unwrap(), millis, "{text}");
        }
    }

    #[test]
    fn rejects_bad_text() {
        for text in [
            "",
            "  ",
            "d",
            "-1 s",
            "1.5 h",
            "3 weeks",
            "99999999999999999999 s",
        ] {
            assert!(parse_duration_millis(text).is_err(), "{text}");
        }
        assert!(parse_duration_millis("9223372036854775807 d").is_err());
    }
}
