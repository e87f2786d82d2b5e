//! Partition expiration (`partition.expiration-time`): which partitions are old enough to
//! go. Dropping them is a commit: [`crate::commit::partition_expire`].
//!
//! * [`PartitionTimeExtractor`]: the local date-time of a partition's values
//!   (`partition.timestamp-pattern`, `partition.timestamp-formatter`).
//! * [`PartitionExpireConfig`]: the table options (`partition.expiration-time`,
//!   `partition.expiration-strategy`, `partition.expiration-max-num`,
//!   `partition.expiration-batch-size`, `partition.expiration-check-interval`,
//!   `end-input.check-partition-expire`).
//! * [`select_expired_partitions`]: the partitions to expire, over an [`Io`]; dropping a
//!   batch ([`crate::commit::partition_expire::expire_partitions`]) is one commit in
//!   [`CommitMode::DropPartitions`](crate::commit::CommitMode::DropPartitions) (an
//!   `OVERWRITE` snapshot deleting every live data file and index file of the batch's
//!   partitions).
//!
//! # Times
//!
//! Partition times are local date-times without a zone, as Java's `LocalDateTime`. Java
//! compares them with `LocalDateTime.now()` of the JVM's zone; this crate has no clock and no
//! zone: the host gives "now" as epoch milliseconds and it is taken as a UTC local date-time
//! (as the JVM does when its zone is UTC). With the `update-time` strategy file creation
//! times (`_CREATION_TIME`, local milliseconds, written as UTC by this crate) are compared
//! with now minus the expiration time in milliseconds.
//!
//! Source: Java `org.apache.paimon.operation.NormalPartitionExpire`,
//! `org.apache.paimon.partition.{PartitionTimeExtractor, PartitionExpireStrategy,
//! PartitionValuesTimeExpireStrategy, PartitionUpdateTimeExpireStrategy}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::Io;
use crate::maintenance::auto_tag::{bool_option, days_from_civil};
use crate::maintenance::expire::{duration_option, int_option};
use crate::scan::planner::read_live_entries;
use crate::scan::snapshot_resolver::{latest_snapshot_id, read_snapshot};
use crate::spec::TableSchema;
use crate::spec::binary_row::BinaryRow;
use crate::spec::options::CoreOptions;

const NANOS_PER_SECOND: i128 = 1_000_000_000;
const NANOS_PER_DAY: i128 = 86_400 * NANOS_PER_SECOND;

/// Java `partition.expiration-max-num` default.
pub const DEFAULT_MAX_EXPIRES: i64 = 100;
/// Java `partition.expiration-check-interval` default: one hour, in milliseconds.
pub const DEFAULT_CHECK_INTERVAL_MILLIS: i64 = 3_600_000;

/// A local date-time (no zone) as nanoseconds since 1970-01-01T00:00 of the same calendar:
/// Java `LocalDateTime` reduced to an ordered number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LocalNanos(pub i128);

impl LocalNanos {
    /// The date-time of a proleptic Gregorian date and a time of day (`nanos` of the second).
    pub fn of(
        year: i64,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
        nanos: u32,
    ) -> Self {
        let days = i128::from(days_from_civil(year, month, day));
        let time = i128::from(hour) * 3_600 + i128::from(minute) * 60 + i128::from(second);
        LocalNanos(days * NANOS_PER_DAY + time * NANOS_PER_SECOND + i128::from(nanos))
    }

    /// Epoch milliseconds read as a UTC local date-time.
    pub fn from_utc_millis(millis: i64) -> Self {
        LocalNanos(i128::from(millis) * 1_000_000)
    }
}

/// One element of a compiled `DateTimeFormatter.ofPattern` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Literal(char),
    /// A number of `min..=max` digits.
    Number {
        field: Field,
        min: usize,
        max: usize,
        /// Java's `SignStyle.EXCEEDS_PAD` (`yyyy` and longer): strict parsing without a sign
        /// fails on more than `min` digits.
        exceeds_pad: bool,
    },
    /// Two digits of a year from 2000 (`yy`).
    ReducedYear,
    /// A fixed number of fraction digits (`S...`).
    Fraction(usize),
    /// An optional section (`[...]`): parsed when all of it matches, else skipped whole.
    Optional(Vec<Item>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl Item {
    /// Width of a fixed-width numeric item (taking part in Java's adjacent value parsing).
    fn fixed_width(&self) -> Option<usize> {
        match self {
            Item::Number { min, max, .. } if min == max => Some(*min),
            Item::ReducedYear => Some(2),
            Item::Fraction(w) => Some(*w),
            _ => None,
        }
    }
}

/// A compiled `partition.timestamp-formatter` (a Java `DateTimeFormatter.ofPattern`
/// pattern): letters `y`/`u` (year), `M` (month, 1 or 2 letters), `d`, `H`, `m`, `s` (1 or 2
/// letters), `S` (fraction of a second, 1 to 9 letters), text in single quotes (`''` is a
/// quote), optional sections in `[ ]` (nested; parsed whole or skipped, without
/// backtracking) and any other non-letter character as a literal. Parsing is Java's strict parsing
/// with the SMART resolver: a variable-width number followed directly by fixed-width ones
/// leaves them their digits (`yyyyMMdd`), month 1-12, day 1-31 clamped to the month's length,
/// hour 0-23 (24:00:00 is the next day), minute and second 0-59.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimestampFormatter {
    items: Vec<Item>,
}

/// The fields a parse found.
#[derive(Debug, Default, Clone)]
struct Parsed {
    year: Option<i64>,
    month: Option<i64>,
    day: Option<i64>,
    hour: Option<i64>,
    minute: Option<i64>,
    second: Option<i64>,
    nano: Option<i64>,
}

impl Parsed {
    fn set(&mut self, field: Field, value: i64) -> Option<()> {
        let slot = match field {
            Field::Year => &mut self.year,
            Field::Month => &mut self.month,
            Field::Day => &mut self.day,
            Field::Hour => &mut self.hour,
            Field::Minute => &mut self.minute,
            Field::Second => &mut self.second,
        };
        // Java: a field parsed twice with different values does not resolve.
        match slot {
            Some(v) if *v != value => None,
            _ => {
                *slot = Some(value);
                Some(())
            }
        }
    }
}

impl TimestampFormatter {
    /// Compile `pattern`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for too many pattern letters, an unclosed quote, a `]` without a
    /// `[` or reserved characters (`{ } #`, as Java); [`Error::Unsupported`] for other pattern
    /// letters (text months, am/pm, zones, ...). Messages name
    /// `partition.timestamp-formatter`. A `[` left open is closed at the end, as Java does.
    pub fn new(pattern: &str) -> Result<Self> {
        let bad = |what: String| {
            Error::invalid(format!(
                "option partition.timestamp-formatter '{pattern}': {what}"
            ))
        };
        let chars: Vec<char> = pattern.chars().collect();
        // The open optional sections, innermost last; `items` is the current section.
        let mut open: Vec<Vec<Item>> = Vec::new();
        let mut items = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '[' {
                open.push(std::mem::take(&mut items));
                i += 1;
                continue;
            }
            if c == ']' {
                let Some(outer) = open.pop() else {
                    return Err(bad("']' without a previous '['".into()));
                };
                let section = std::mem::replace(&mut items, outer);
                items.push(Item::Optional(section));
                i += 1;
                continue;
            }
            if c == '\'' {
                let mut j = i + 1;
                if chars.get(j) == Some(&'\'') {
                    items.push(Item::Literal('\''));
                    i = j + 1;
                    continue;
                }
                loop {
                    match chars.get(j) {
                        None => return Err(bad("unclosed quote".into())),
                        Some('\'') if chars.get(j + 1) == Some(&'\'') => {
                            items.push(Item::Literal('\''));
                            j += 2;
                        }
                        Some('\'') => break,
                        Some(&ch) => {
                            items.push(Item::Literal(ch));
                            j += 1;
                        }
                    }
                }
                i = j + 1;
                continue;
            }
            if c.is_ascii_alphabetic() {
                let mut n = 1;
                while chars.get(i + n) == Some(&c) {
                    n += 1;
                }
                let number = |field, n: usize| match n {
                    1 => Ok(Item::Number {
                        field,
                        min: 1,
                        max: 19,
                        exceeds_pad: false,
                    }),
                    2 => Ok(Item::Number {
                        field,
                        min: 2,
                        max: 2,
                        exceeds_pad: false,
                    }),
                    _ => Err(bad(format!("too many pattern letters: {c}"))),
                };
                let item = match c {
                    'y' | 'u' => match n {
                        2 => Item::ReducedYear,
                        _ => Item::Number {
                            field: Field::Year,
                            min: n,
                            max: 19,
                            exceeds_pad: n >= 4,
                        },
                    },
                    'M' if n <= 2 => number(Field::Month, n)?,
                    'M' if n <= 5 => {
                        return Err(Error::unsupported(format!(
                            "option partition.timestamp-formatter '{pattern}': month names \
                             (MMM) are not supported"
                        )));
                    }
                    'M' => return Err(bad(format!("too many pattern letters: {c}"))),
                    'd' => number(Field::Day, n)?,
                    'H' => number(Field::Hour, n)?,
                    'm' => number(Field::Minute, n)?,
                    's' => number(Field::Second, n)?,
                    'S' if n <= 9 => Item::Fraction(n),
                    'S' => return Err(bad("more than 9 fraction letters (S)".into())),
                    _ => {
                        return Err(Error::unsupported(format!(
                            "option partition.timestamp-formatter '{pattern}': pattern letter \
                             '{c}' is not supported (supported: y u M d H m s S)"
                        )));
                    }
                };
                items.push(item);
                i += n;
                continue;
            }
            if matches!(c, '{' | '}' | '#') {
                return Err(bad(format!("reserved character '{c}'")));
            }
            items.push(Item::Literal(c));
            i += 1;
        }
        // Java closes sections left open at the end of the pattern.
        while let Some(outer) = open.pop() {
            let section = std::mem::replace(&mut items, outer);
            items.push(Item::Optional(section));
        }
        Ok(TimestampFormatter { items })
    }

    /// Parse the whole of `text`; `None` when it does not match.
    fn parse(&self, text: &str) -> Option<Parsed> {
        let chars: Vec<char> = text.chars().collect();
        let mut pos = 0;
        let mut parsed = Parsed::default();
        parse_items(&self.items, &chars, &mut pos, &mut parsed)?;
        (pos == chars.len()).then_some(parsed)
    }

    /// `text` as a local date-time: Java's `LocalDateTime.parse`, else `LocalDate.parse` at
    /// midnight (a pattern without a time, or a time that does not resolve). `None` when
    /// neither parses.
    pub fn parse_date_time(&self, text: &str) -> Option<LocalNanos> {
        let p = self.parse(text)?;
        let (year, month, day) = (p.year?, p.month?, p.day?);
        if !(-999_999_999..=999_999_999).contains(&year)
            || !(1..=12).contains(&month)
            || !(1..=31).contains(&day)
        {
            return None;
        }
        let month = u32::try_from(month).ok()?;
        let day = u32::try_from(day).ok()?.min(days_in_month(year, month));
        let in_range = |v: Option<i64>, hi: i64| v.is_none_or(|v| (0..=hi).contains(&v));
        if !in_range(p.hour, 24)
            || !in_range(p.minute, 59)
            || !in_range(p.second, 59)
            || !in_range(p.nano, 999_999_999)
        {
            return None;
        }
        let date = LocalNanos::of(year, month, day, 0, 0, 0, 0);
        // The time resolves from the hour, with the minute, second and fraction each only
        // when the coarser one is there.
        let time_resolves = p.hour.is_some()
            && (p.second.is_none() || p.minute.is_some())
            && (p.nano.is_none() || p.second.is_some());
        if !time_resolves {
            return Some(date);
        }
        let (h, m, s, n) = (
            p.hour.unwrap_or(0),
            p.minute.unwrap_or(0),
            p.second.unwrap_or(0),
            p.nano.unwrap_or(0),
        );
        if h == 24 && (m, s, n) != (0, 0, 0) {
            return None;
        }
        let nanos = (i128::from(h) * 3_600 + i128::from(m) * 60 + i128::from(s)) * NANOS_PER_SECOND
            + i128::from(n);
        Some(LocalNanos(date.0 + nanos))
    }
}

/// Parse `items` at `pos` (advanced past what they matched) into `parsed`; `None` when an
/// item does not match.
fn parse_items(items: &[Item], chars: &[char], pos: &mut usize, parsed: &mut Parsed) -> Option<()> {
    for (k, item) in items.iter().enumerate() {
        match item {
            Item::Literal(c) => {
                if chars.get(*pos) != Some(c) {
                    return None;
                }
                *pos += 1;
            }
            Item::Number {
                field,
                min,
                max,
                exceeds_pad,
            } => {
                let (min, max) = (*min, *max);
                let avail = digits_at(chars, *pos);
                let take = if min == max {
                    min
                } else {
                    // Java's adjacent value parsing: fixed-width numbers right after this
                    // one keep their digits.
                    let reserved: usize = items[k + 1..].iter().map_while(Item::fixed_width).sum();
                    if reserved > 0 {
                        min.max(avail.min(max + reserved).saturating_sub(reserved))
                    } else {
                        avail.min(max)
                    }
                };
                if take < min || avail < take || (*exceeds_pad && take > min) {
                    return None;
                }
                let value = number(&chars[*pos..*pos + take])?;
                parsed.set(*field, value)?;
                *pos += take;
            }
            Item::ReducedYear => {
                if digits_at(chars, *pos) < 2 {
                    return None;
                }
                let value = number(&chars[*pos..*pos + 2])?;
                parsed.set(Field::Year, 2000 + value)?;
                *pos += 2;
            }
            Item::Optional(section) => {
                // Java: the section is parsed whole or not at all, without backtracking
                // into the items after it.
                let (mut p, mut at) = (parsed.clone(), *pos);
                if parse_items(section, chars, &mut at, &mut p).is_some() {
                    (*parsed, *pos) = (p, at);
                }
            }
            Item::Fraction(width) => {
                if digits_at(chars, *pos) < *width {
                    return None;
                }
                let mut nano = number(&chars[*pos..*pos + width])?;
                for _ in *width..9 {
                    nano *= 10;
                }
                if parsed.nano.is_some_and(|v| v != nano) {
                    return None;
                }
                parsed.nano = Some(nano);
                *pos += width;
            }
        }
    }
    Some(())
}

fn digits_at(chars: &[char], pos: usize) -> usize {
    chars.get(pos..).map_or(0, |rest| {
        rest.iter().take_while(|c| c.is_ascii_digit()).count()
    })
}

fn number(digits: &[char]) -> Option<i64> {
    digits.iter().try_fold(0i64, |acc, c| {
        acc.checked_mul(10)?.checked_add(i64::from(c.to_digit(10)?))
    })
}

fn days_in_month(year: i64, month: u32) -> u32 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Java's default partition time format (no `partition.timestamp-formatter`):
/// `y-M-d[ H:m:s[.f]]`, year 1 to 10 digits, month, day, hour, minute and second 1 or 2
/// digits, fraction 1 to 9 digits, resolved leniently (month 13 is January of the next year,
/// hour 24 the next day, ...); a text that is only a date is that date at midnight.
///
/// Source: Java `PartitionTimeExtractor.toLocalDateTimeDefault`.
pub fn parse_default_date_time(text: &str) -> Option<LocalNanos> {
    let chars: Vec<char> = text.chars().collect();
    let mut pos = 0;
    let num = |pos: &mut usize, min: usize, max: usize| -> Option<i64> {
        let take = digits_at(&chars, *pos).min(max);
        if take < min {
            return None;
        }
        let v = number(&chars[*pos..*pos + take])?;
        *pos += take;
        Some(v)
    };
    let year = num(&mut pos, 1, 10)?;
    let expect = |pos: &mut usize, c: char| -> Option<()> {
        (chars.get(*pos) == Some(&c)).then(|| *pos += 1)
    };
    expect(&mut pos, '-')?;
    let month = num(&mut pos, 1, 2)?;
    expect(&mut pos, '-')?;
    let day = num(&mut pos, 1, 2)?;
    let mut time = 0i128;
    if pos < chars.len() {
        expect(&mut pos, ' ')?;
        let h = num(&mut pos, 1, 2)?;
        expect(&mut pos, ':')?;
        let m = num(&mut pos, 1, 2)?;
        expect(&mut pos, ':')?;
        let s = num(&mut pos, 1, 2)?;
        let mut nano = 0i64;
        if pos < chars.len() {
            expect(&mut pos, '.')?;
            let start = pos;
            let f = num(&mut pos, 1, 9)?;
            nano = f * 10i64.pow(u32::try_from(9 - (pos - start)).ok()?);
        }
        time = (i128::from(h) * 3_600 + i128::from(m) * 60 + i128::from(s)) * NANOS_PER_SECOND
            + i128::from(nano);
    }
    if pos != chars.len() || year > 999_999_999 {
        return None;
    }
    // Lenient: January 1st plus (month - 1) months plus (day - 1) days.
    let months = year * 12 + (month - 1);
    let (y, m) = (
        months.div_euclid(12),
        u32::try_from(months.rem_euclid(12) + 1).ok()?,
    );
    let first = LocalNanos::of(y, m, 1, 0, 0, 0, 0);
    Some(LocalNanos(
        first.0 + (i128::from(day) - 1) * NANOS_PER_DAY + time,
    ))
}

/// The time of a partition from its values (Java `PartitionTimeExtractor`).
///
/// Without a pattern the first partition value is the time text; with one, each `$key` in it
/// is replaced by that key's value, keys in partition order (Java substitutes with
/// `String.replaceAll`, a regular expression; keys and values where that differs from plain
/// text are refused, see [`PartitionTimeExtractor::extract`]). The text is parsed with the
/// formatter, or with [`parse_default_date_time`] without one.
///
/// Source: Java `org.apache.paimon.partition.PartitionTimeExtractor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionTimeExtractor {
    pattern: Option<String>,
    formatter: Option<TimestampFormatter>,
}

impl PartitionTimeExtractor {
    /// An extractor for `partition.timestamp-pattern` and `partition.timestamp-formatter`.
    ///
    /// # Errors
    /// As [`TimestampFormatter::new`].
    pub fn new(pattern: Option<&str>, formatter: Option<&str>) -> Result<Self> {
        Ok(PartitionTimeExtractor {
            pattern: pattern.map(str::to_string),
            formatter: formatter.map(TimestampFormatter::new).transpose()?,
        })
    }

    /// The time of a partition given its keys and values (`None` = NULL), or `Ok(None)` when
    /// it has none: a NULL value used (with a pattern: any NULL value, as Java fails on each
    /// value it substitutes) or a text that does not parse. Java logs such partitions and
    /// never expires them.
    ///
    /// # Errors
    /// [`Error::Unsupported`], with a pattern, for a key with a regular-expression
    /// metacharacter (Java builds the expression `\$key` from it) and for a value with `$`
    /// or `\` (Java reads them as group references and escapes, and mostly fails): plain
    /// replacement would give other times than Java's.
    pub fn extract(&self, keys: &[&str], values: &[Option<&str>]) -> Result<Option<LocalNanos>> {
        let text = match &self.pattern {
            None => match values.first().copied().flatten() {
                Some(v) => v.to_string(),
                None => return Ok(None),
            },
            Some(pattern) => {
                let mut text = pattern.clone();
                for (key, value) in keys.iter().zip(values) {
                    let Some(value) = value else {
                        return Ok(None);
                    };
                    if key.contains(|c: char| "\\^$.|?*+()[]{}".contains(c)) {
                        return Err(Error::unsupported(format!(
                            "option partition.timestamp-pattern: partition key '{key}' has a \
                             regular-expression character, which Java's substitution reads \
                             as one"
                        )));
                    }
                    if value.contains(['$', '\\']) {
                        return Err(Error::unsupported(format!(
                            "option partition.timestamp-pattern: value '{value}' of partition \
                             key '{key}' has '$' or '\\', which Java's substitution reads as a \
                             group reference or an escape"
                        )));
                    }
                    text = text.replace(&format!("${key}"), value);
                }
                text
            }
        };
        Ok(match &self.formatter {
            Some(f) => f.parse_date_time(&text),
            None => parse_default_date_time(&text),
        })
    }
}

/// How a partition's age is measured (`partition.expiration-strategy`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpireStrategy {
    /// `values-time` (default): the time extracted from the partition values.
    ValuesTime,
    /// `update-time`: the newest creation time of the partition's live data files.
    UpdateTime,
}

/// Partition expiration options of a table (plain data; times in milliseconds).
///
/// Source: Java `CoreOptions` `partition.*` options, `AbstractFileStore.newPartitionExpire`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionExpireConfig {
    /// `partition.expiration-time`: a partition older than this goes, in milliseconds.
    pub expiration_millis: i64,
    /// `partition.expiration-check-interval` (default 1 h), in milliseconds.
    pub check_interval_millis: i64,
    /// `partition.expiration-strategy` (default `values-time`).
    pub strategy: ExpireStrategy,
    /// `partition.timestamp-pattern`.
    pub timestamp_pattern: Option<String>,
    /// `partition.timestamp-formatter`.
    pub timestamp_formatter: Option<String>,
    /// `partition.expiration-max-num` (default 100): at most this many partitions per expire.
    pub max_expires: i64,
    /// `partition.expiration-batch-size` (default: the max-num): partitions per drop commit;
    /// zero or less drops all in one commit.
    pub batch_size: i64,
    /// `end-input.check-partition-expire` (default false).
    pub end_input_check: bool,
    /// `partition.default-name`: the value shown for NULL.
    pub default_partition_name: String,
}

impl PartitionExpireConfig {
    /// The configuration of a table's options; `None` without `partition.expiration-time`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a malformed duration, integer or boolean, an unknown strategy, a
    /// negative `partition.expiration-max-num` or a bad formatter (see
    /// [`TimestampFormatter::new`]; [`Error::Unsupported`] for letters this crate does not
    /// parse), each naming the option.
    pub fn from_options(options: &CoreOptions) -> Result<Option<Self>> {
        let Some(expiration_millis) = duration_option(options, "partition.expiration-time")? else {
            return Ok(None);
        };
        let strategy = match options.get("partition.expiration-strategy") {
            None | Some("values-time") => ExpireStrategy::ValuesTime,
            Some("update-time") => ExpireStrategy::UpdateTime,
            Some(other) => {
                return Err(Error::invalid(format!(
                    "option partition.expiration-strategy: unknown strategy '{other}' \
                     (values-time or update-time)"
                )));
            }
        };
        let max_expires =
            int_option(options, "partition.expiration-max-num")?.unwrap_or(DEFAULT_MAX_EXPIRES);
        if max_expires < 0 {
            return Err(Error::invalid(format!(
                "option partition.expiration-max-num: {max_expires} is negative"
            )));
        }
        let timestamp_pattern = options
            .get("partition.timestamp-pattern")
            .map(str::to_string);
        let timestamp_formatter = options
            .get("partition.timestamp-formatter")
            .map(str::to_string);
        PartitionTimeExtractor::new(timestamp_pattern.as_deref(), timestamp_formatter.as_deref())?;
        Ok(Some(PartitionExpireConfig {
            expiration_millis,
            check_interval_millis: duration_option(options, "partition.expiration-check-interval")?
                .unwrap_or(DEFAULT_CHECK_INTERVAL_MILLIS),
            strategy,
            timestamp_pattern,
            timestamp_formatter,
            max_expires,
            batch_size: int_option(options, "partition.expiration-batch-size")?
                .unwrap_or(max_expires),
            end_input_check: bool_option(options, &["end-input.check-partition-expire"], false)?,
            default_partition_name: options.partition_default_name().to_string(),
        }))
    }

    /// Whether a batch commit checks partition expiry: Java's batch `TableCommitImpl` checks
    /// once `partition.expiration-check-interval` passed since the committer was created
    /// (minus a random part of the interval), which a short batch job never reaches, unless
    /// the interval is zero or `end-input.check-partition-expire` is true (batch commits carry
    /// identifier `Long.MAX_VALUE`). This crate checks exactly in those two cases.
    pub fn runs_after_commit(&self) -> bool {
        self.end_input_check || self.check_interval_millis == 0
    }

    /// The values-time test the committer uses to explain a conflict (Java
    /// `NormalPartitionExpire.isValueAllExpired`): `None` for the `update-time` strategy or a
    /// formatter that does not compile. `now_millis` (epoch millis, read as UTC) is the
    /// commit's time; `partition_fields` are the table's partition fields in order.
    pub fn values_expiry(
        &self,
        partition_fields: &[crate::spec::DataField],
        now_millis: i64,
    ) -> Option<ValuesExpiry> {
        if self.strategy != ExpireStrategy::ValuesTime {
            return None;
        }
        Some(ValuesExpiry {
            extractor: PartitionTimeExtractor::new(
                self.timestamp_pattern.as_deref(),
                self.timestamp_formatter.as_deref(),
            )
            .ok()?,
            cutoff: LocalNanos::from_utc_millis(now_millis.saturating_sub(self.expiration_millis)),
            keys: partition_fields.iter().map(|f| f.name.clone()).collect(),
            types: partition_fields
                .iter()
                .map(|f| f.data_type.clone())
                .collect(),
        })
    }
}

/// Whether partitions are past `partition.expiration-time` by their values (see
/// [`PartitionExpireConfig::values_expiry`]).
///
/// Source: Java `NormalPartitionExpire.isValueAllExpired`,
/// `PartitionValuesTimeExpireStrategy.isExpired`.
#[derive(Debug, Clone)]
pub struct ValuesExpiry {
    extractor: PartitionTimeExtractor,
    cutoff: LocalNanos,
    keys: Vec<String>,
    types: Vec<crate::spec::DataType>,
}

impl ValuesExpiry {
    /// True when the partition's time is before the cut-off; false when it has no time (a
    /// NULL value, a text that does not parse) or does not decode.
    pub fn is_expired(&self, partition: &BinaryRow) -> bool {
        let Ok(texts) = partition_texts(partition, &self.types) else {
            return false;
        };
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        let values: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
        matches!(self.extractor.extract(&keys, &values), Ok(Some(t)) if t < self.cutoff)
    }
}

/// A partition's values as text (`None` = NULL), as Java's partition strings.
fn partition_texts(
    partition: &BinaryRow,
    types: &[crate::spec::DataType],
) -> Result<Vec<Option<String>>> {
    Ok(partition
        .fields(types)?
        .iter()
        .map(|d| (!d.is_null()).then(|| d.to_string()))
        .collect())
}

/// A partition chosen to expire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpiredPartition {
    /// `(key, value)` in partition key order; NULL shown as `partition.default-name`.
    pub values: Vec<(String, String)>,
    /// The partition row (serde: hex of the serialized `BinaryRow`).
    pub partition: BinaryRow,
}

impl ExpiredPartition {
    /// `k1=v1, k2=v2`, as Java's `expire_partitions` procedure prints a partition.
    pub fn display(&self) -> String {
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The partitions of the latest snapshot that `config` expires at `now_millis` (epoch millis,
/// taken as UTC), in Java's order, at most `max_expires`. Empty for an unpartitioned table
/// or a table without snapshots.
///
/// `values-time`: the partition's time (see [`PartitionTimeExtractor`]) is before now minus
/// the expiration time; partitions whose time cannot be extracted are kept. `update-time`:
/// the newest `_CREATION_TIME` of its live data files is before now minus the expiration time
/// (a partition none of whose files records a creation time is kept).
///
/// # Errors
/// Bad options (see [`PartitionExpireConfig::from_options`]); `Invalid` when partitions are
/// expired and `partition.expiration-max-num` is 0; as [`PartitionTimeExtractor::extract`];
/// IO failures; corrupt manifests.
pub async fn select_expired_partitions<T>(
    io: &Io<T>,
    schema: &TableSchema,
    config: &PartitionExpireConfig,
    now_millis: i64,
) -> Result<Vec<ExpiredPartition>> {
    let fields: Vec<_> = schema.partition_fields()?.into_iter().cloned().collect();
    if fields.is_empty() {
        return Ok(Vec::new());
    }
    let Some(latest) = latest_snapshot_id(io).await? else {
        return Ok(Vec::new());
    };
    let snapshot = read_snapshot(io, latest).await?;
    let mut newest: BTreeMap<BinaryRow, Option<i64>> = BTreeMap::new();
    for e in read_live_entries(io, &snapshot).await? {
        let slot = newest.entry(e.partition.clone()).or_insert(None);
        if let Some(t) = e.file.creation_time_millis {
            *slot = Some(slot.map_or(t, |s: i64| s.max(t)));
        }
    }
    let extractor = PartitionTimeExtractor::new(
        config.timestamp_pattern.as_deref(),
        config.timestamp_formatter.as_deref(),
    )?;
    let cutoff_millis = now_millis.saturating_sub(config.expiration_millis);
    let cutoff = LocalNanos::from_utc_millis(cutoff_millis);
    let keys: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let types: Vec<_> = fields.iter().map(|f| f.data_type.clone()).collect();
    let mut expired: Vec<(String, ExpiredPartition)> = Vec::new();
    for (partition, last_created) in newest {
        let texts = partition_texts(&partition, &types)?;
        let is_expired = match config.strategy {
            ExpireStrategy::ValuesTime => {
                let values: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
                extractor
                    .extract(&keys, &values)?
                    .is_some_and(|time| time < cutoff)
            }
            ExpireStrategy::UpdateTime => last_created.is_some_and(|t| t < cutoff_millis),
        };
        if !is_expired {
            continue;
        }
        let values: Vec<(String, String)> = keys
            .iter()
            .zip(texts)
            .map(|(k, v)| {
                (
                    k.to_string(),
                    v.unwrap_or_else(|| config.default_partition_name.clone()),
                )
            })
            .collect();
        let joined = values
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(",");
        expired.push((joined, ExpiredPartition { values, partition }));
    }
    expired.sort_by(|a, b| a.0.cmp(&b.0));
    let max = usize::try_from(config.max_expires).unwrap_or(0);
    if max == 0 && !expired.is_empty() {
        // Java limits the list to zero and then refuses to drop an empty list.
        return Err(Error::invalid(format!(
            "option partition.expiration-max-num is 0: {} expired partitions cannot be \
             dropped (Java's expire fails the same way)",
            expired.len()
        )));
    }
    Ok(expired.into_iter().take(max).map(|(_, p)| p).collect())
}

#[cfg(test)]
#[path = "partitions/tests.rs"]
mod tests;
