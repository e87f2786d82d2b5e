//! Automatic tags: one tag per period (`tag.automatic-creation` = `process-time` or
//! `watermark`), a tag per batch commit (`batch`), retention of automatic tags
//! (`tag.num-retained-max`) and expiry of tags whose `tagTimeRetained` has passed.
//!
//! Date-times are Java `LocalDateTime`s, held here as "local milliseconds": milliseconds since
//! 1970-01-01T00:00 on the wall clock of the zone (a fixed offset: this crate has no time-zone
//! database). Tag creation times are written in UTC, as [`crate::maintenance::create_tag`]
//! callers on the native host do.
//!
//! Source: Java `org.apache.paimon.tag.{TagAutoManager, TagAutoCreation, TagTimeExtractor,
//! TagPeriodHandler, TagTimeExpire, TagBatchCreation}`, `org.apache.paimon.utils.TagManager`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::Io;
use crate::maintenance::tags::{create_tag, delete_tag};
use crate::scan::snapshot_resolver::{
    earliest_snapshot_id, latest_snapshot_id, list_tags, read_tag, try_read_snapshot,
};
use crate::spec::options::CoreOptions;
use crate::spec::snapshot::{LocalDateTime, Snapshot};
use crate::util::parse_duration_millis;

const MILLIS_PER_HOUR: i64 = 3_600_000;
const MILLIS_PER_DAY: i64 = 86_400_000;
/// Java `TagBatchCreation.BATCH_WRITE_TAG_PREFIX`.
const BATCH_WRITE_TAG_PREFIX: &str = "batch-write-";

/// `tag.automatic-creation` (Java `CoreOptions.TagCreationMode`, without `none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TagCreationMode {
    /// `process-time`: the snapshot's commit time decides the period.
    ProcessTime,
    /// `watermark`: the snapshot's watermark decides; snapshots without one get no tag.
    Watermark,
    /// `batch`: after a commit, the latest snapshot is tagged `batch-write-<yyyy-MM-dd>` (or
    /// `tag.batch.customized-name`), replacing a tag of that name.
    Batch,
}

/// `tag.creation-period` / `tag.creation-period-duration` (Java `TagPeriodHandler`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TagPeriod {
    /// `daily`.
    Daily,
    /// `hourly`.
    Hourly,
    /// `two-hours` (names always `yyyy-MM-dd HH`).
    TwoHours,
    /// `tag.creation-period-duration`, milliseconds (names `yyyyMMddHHmm`).
    Duration(i64),
}

/// `tag.period-formatter` (Java `CoreOptions.TagPeriodFormatter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TagPeriodFormatter {
    /// `with_dashes` (default): `yyyy-MM-dd`, `yyyy-MM-dd HH`.
    WithDashes,
    /// `without_dashes`: `yyyyMMdd`, `yyyyMMdd HH`.
    WithoutDashes,
    /// `without_dashes_and_spaces`: `yyyyMMdd`, `yyyyMMddHH`.
    WithoutDashesAndSpaces,
}

/// The automatic-tag options of a table.
///
/// Source: Java `TagAutoCreation.create`, `TagBatchCreation`, `CoreOptions` (`tag.*`,
/// `sink.process-time-zone`, `sink.watermark-time-zone`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagAutoConfig {
    /// `tag.automatic-creation`.
    pub mode: TagCreationMode,
    /// `tag.creation-period` (default daily) or `tag.creation-period-duration`.
    pub period: TagPeriod,
    /// `tag.period-formatter` (default `with_dashes`).
    pub formatter: TagPeriodFormatter,
    /// `tag.creation-delay`, milliseconds (default 0; must be shorter than the period).
    pub delay_millis: i64,
    /// `tag.num-retained-max`: automatic tags kept (batch mode: all tags).
    pub num_retained_max: Option<i64>,
    /// `tag.default-time-retained`, milliseconds: written into new tags.
    pub default_time_retained_millis: Option<i64>,
    /// `tag.automatic-completion`: a tag for every period, even those without a commit.
    pub automatic_completion: bool,
    /// `sink.process-time-zone` as a fixed offset, milliseconds east of UTC (Java's default,
    /// the JVM's zone, is taken as UTC here).
    pub process_zone_offset_millis: i64,
    /// `sink.watermark-time-zone` (default UTC) as a fixed offset, milliseconds.
    pub watermark_zone_offset_millis: i64,
    /// `tag.batch.customized-name`.
    pub batch_customized_name: Option<String>,
}

fn enum_option<E: Copy>(
    options: &CoreOptions,
    key: &str,
    values: &[(&str, E)],
) -> Result<Option<E>> {
    let Some(v) = options.get(key) else {
        return Ok(None);
    };
    values
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(v.trim()))
        .map(|(_, e)| Some(*e))
        .ok_or_else(|| {
            let names: Vec<&str> = values.iter().map(|(n, _)| *n).collect();
            Error::invalid(format!(
                "option {key}: '{v}' is not one of {}",
                names.join(", ")
            ))
        })
}

fn duration_option(options: &CoreOptions, key: &str) -> Result<Option<i64>> {
    options
        .get(key)
        .map(|v| parse_duration_millis(v).map_err(|e| Error::invalid(format!("option {key}: {e}"))))
        .transpose()
}

pub(crate) fn bool_option(options: &CoreOptions, keys: &[&str], default: bool) -> Result<bool> {
    for key in keys {
        if let Some(v) = options.get(key) {
            return match v.trim() {
                t if t.eq_ignore_ascii_case("true") => Ok(true),
                t if t.eq_ignore_ascii_case("false") => Ok(false),
                _ => Err(Error::invalid(format!(
                    "option {key}: '{v}' is not true or false"
                ))),
            };
        }
    }
    Ok(default)
}

/// A fixed zone offset in milliseconds from a Java zone id: `UTC`, `GMT`, `Z`, `+08:00`,
/// `-5`, `UTC+8`, `GMT-08:00`, `UTC+05:30`.
///
/// # Errors
/// [`Error::Unsupported`] for a region id (`Asia/Shanghai`): this crate has no time-zone
/// database; [`Error::Invalid`] for a malformed offset.
pub fn zone_offset_millis(key: &str, zone: &str) -> Result<i64> {
    let z = zone.trim();
    let rest = ["UTC", "GMT", "UT"]
        .iter()
        .find_map(|p| z.strip_prefix(p))
        .unwrap_or(z);
    if rest.is_empty() || rest == "Z" {
        return Ok(0);
    }
    let (sign, body) = match rest.as_bytes().first() {
        Some(b'+') => (1, &rest[1..]),
        Some(b'-') => (-1, &rest[1..]),
        _ => {
            return Err(Error::unsupported(format!(
                "option {key}: time zone '{zone}' (only UTC and fixed offsets such as \
                 '+08:00' or 'GMT-08:00' are supported)"
            )));
        }
    };
    let (h, m) = match body.split_once(':') {
        Some((h, m)) => (h, m),
        None if body.len() == 4 => body.split_at(2),
        None => (body, "0"),
    };
    let bad = || Error::invalid(format!("option {key}: '{zone}' is not a zone offset"));
    let h: i64 = h.parse().map_err(|_| bad())?;
    let m: i64 = m.parse().map_err(|_| bad())?;
    if !(0..=18).contains(&h) || !(0..60).contains(&m) {
        return Err(bad());
    }
    Ok(sign * (h * MILLIS_PER_HOUR + m * 60_000))
}

impl TagAutoConfig {
    /// The automatic-tag configuration of a table's options; `None` when
    /// `tag.automatic-creation` is unset or `none`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a malformed value or a `tag.creation-delay` not shorter than the
    /// period (Java `TagPeriodHandler.validateDelay`); [`Error::Unsupported`] for a region
    /// time-zone id.
    pub fn from_options(options: &CoreOptions) -> Result<Option<Self>> {
        #[derive(Clone, Copy)]
        enum Mode {
            None,
            Some(TagCreationMode),
        }
        let mode = enum_option(
            options,
            "tag.automatic-creation",
            &[
                ("none", Mode::None),
                ("process-time", Mode::Some(TagCreationMode::ProcessTime)),
                ("watermark", Mode::Some(TagCreationMode::Watermark)),
                ("batch", Mode::Some(TagCreationMode::Batch)),
            ],
        )?;
        let Some(Mode::Some(mode)) = mode else {
            return Ok(None);
        };
        let period = match duration_option(options, "tag.creation-period-duration")? {
            Some(ms) if ms <= 0 => {
                return Err(Error::invalid(
                    "option tag.creation-period-duration must be positive",
                ));
            }
            Some(ms) => TagPeriod::Duration(ms),
            None => enum_option(
                options,
                "tag.creation-period",
                &[
                    ("daily", TagPeriod::Daily),
                    ("hourly", TagPeriod::Hourly),
                    ("two-hours", TagPeriod::TwoHours),
                ],
            )?
            .unwrap_or(TagPeriod::Daily),
        };
        let formatter = enum_option(
            options,
            "tag.period-formatter",
            &[
                ("with_dashes", TagPeriodFormatter::WithDashes),
                ("without_dashes", TagPeriodFormatter::WithoutDashes),
                (
                    "without_dashes_and_spaces",
                    TagPeriodFormatter::WithoutDashesAndSpaces,
                ),
            ],
        )?
        .unwrap_or(TagPeriodFormatter::WithDashes);
        let num_retained_max = options
            .get("tag.num-retained-max")
            .map(|v| {
                v.trim().parse::<i32>().map(i64::from).map_err(|_| {
                    Error::invalid(format!(
                        "option tag.num-retained-max: '{v}' is not a 32-bit integer"
                    ))
                })
            })
            .transpose()?;
        let config = TagAutoConfig {
            mode,
            period,
            formatter,
            delay_millis: duration_option(options, "tag.creation-delay")?.unwrap_or(0),
            num_retained_max,
            default_time_retained_millis: duration_option(options, "tag.default-time-retained")?,
            automatic_completion: bool_option(options, &["tag.automatic-completion"], false)?,
            process_zone_offset_millis: options
                .get("sink.process-time-zone")
                .map(|z| zone_offset_millis("sink.process-time-zone", z))
                .transpose()?
                .unwrap_or(0),
            watermark_zone_offset_millis: options
                .get("sink.watermark-time-zone")
                .map(|z| zone_offset_millis("sink.watermark-time-zone", z))
                .transpose()?
                .unwrap_or(0),
            batch_customized_name: options.get("tag.batch.customized-name").map(str::to_string),
        };
        if mode != TagCreationMode::Batch && config.period_millis() <= config.delay_millis {
            return Err(Error::invalid(format!(
                "option tag.creation-delay ({} ms) must be shorter than the tag period ({} ms)",
                config.delay_millis,
                config.period_millis()
            )));
        }
        Ok(Some(config))
    }

    /// One period in milliseconds.
    pub fn period_millis(&self) -> i64 {
        match self.period {
            TagPeriod::Daily => MILLIS_PER_DAY,
            TagPeriod::Hourly => MILLIS_PER_HOUR,
            TagPeriod::TwoHours => 2 * MILLIS_PER_HOUR,
            TagPeriod::Duration(ms) => ms,
        }
    }

    fn pattern(&self) -> &'static [Piece] {
        use Piece::*;
        match (self.period, self.formatter) {
            (TagPeriod::Daily, TagPeriodFormatter::WithDashes) => {
                &[Year, Lit(b'-'), Month, Lit(b'-'), Day]
            }
            (TagPeriod::Daily, _) => &[Year, Month, Day],
            (TagPeriod::Hourly, TagPeriodFormatter::WithoutDashes) => {
                &[Year, Month, Day, Lit(b' '), Hour]
            }
            (TagPeriod::Hourly, TagPeriodFormatter::WithoutDashesAndSpaces) => {
                &[Year, Month, Day, Hour]
            }
            (TagPeriod::Hourly | TagPeriod::TwoHours, _) => {
                &[Year, Lit(b'-'), Month, Lit(b'-'), Day, Lit(b' '), Hour]
            }
            (TagPeriod::Duration(_), _) => &[Year, Month, Day, Hour, Minute],
        }
    }

    /// The period start a tag name stands for (local millis), `None` when the name is not an
    /// automatic tag of this period and formatter (Java `tagToTime` / `isAutoTag`; a daily
    /// name is read up to its first space).
    pub fn tag_to_time(&self, name: &str) -> Option<i64> {
        let name = match self.period {
            TagPeriod::Daily => name.split(' ').next().unwrap_or(name),
            _ => name,
        };
        parse_pattern(self.pattern(), name)
    }

    /// The tag name of a period start (local millis) (Java `timeToTag`).
    pub fn time_to_tag(&self, local_millis: i64) -> String {
        format_pattern(self.pattern(), local_millis)
    }

    /// The start of the period before the one `local_millis` falls in (Java
    /// `normalizeToPreviousTag`, with Java's truncating division).
    pub fn normalize_to_previous_tag(&self, local_millis: i64) -> i64 {
        let p = self.period_millis();
        (local_millis / p) * p - p
    }
}

#[derive(Debug, Clone, Copy)]
enum Piece {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Lit(u8),
}

fn parse_pattern(pattern: &[Piece], s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let mut i = 0;
    let (mut y, mut mo, mut d, mut h, mut mi) = (0i64, 1u32, 1u32, 0u32, 0u32);
    let digits = |i: &mut usize, n: usize| -> Option<u32> {
        let part = b.get(*i..*i + n)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        *i += n;
        Some(part.iter().fold(0u32, |a, c| a * 10 + u32::from(c - b'0')))
    };
    for p in pattern {
        match p {
            Piece::Year => y = i64::from(digits(&mut i, 4)?),
            Piece::Month => mo = digits(&mut i, 2)?,
            Piece::Day => d = digits(&mut i, 2)?,
            Piece::Hour => h = digits(&mut i, 2)?,
            Piece::Minute => mi = digits(&mut i, 2)?,
            Piece::Lit(c) => {
                if b.get(i) != Some(c) {
                    return None;
                }
                i += 1;
            }
        }
    }
    if i != b.len() || !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return None;
    }
    if h > 23 || mi > 59 {
        return None;
    }
    Some(
        days_from_civil(y, mo, d) * MILLIS_PER_DAY
            + i64::from(h) * MILLIS_PER_HOUR
            + i64::from(mi) * 60_000,
    )
}

fn format_pattern(pattern: &[Piece], local_millis: i64) -> String {
    let t = local_date_time(local_millis);
    let mut out = String::new();
    for p in pattern {
        match p {
            Piece::Year => out.push_str(&format!("{:04}", t.year)),
            Piece::Month => out.push_str(&format!("{:02}", t.month)),
            Piece::Day => out.push_str(&format!("{:02}", t.day)),
            Piece::Hour => out.push_str(&format!("{:02}", t.hour)),
            Piece::Minute => out.push_str(&format!("{:02}", t.minute)),
            Piece::Lit(c) => out.push(char::from(*c)),
        }
    }
    out
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date-time of local milliseconds (or of UTC epoch milliseconds, for UTC).
pub fn local_date_time(millis: i64) -> LocalDateTime {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let ms_of_day = millis.rem_euclid(MILLIS_PER_DAY);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let small = |v: i64| u32::try_from(v).unwrap_or(0);
    LocalDateTime {
        year: i32::try_from(year).unwrap_or(i32::MAX),
        month: small(month),
        day: small(day),
        hour: small(ms_of_day / MILLIS_PER_HOUR),
        minute: small(ms_of_day / 60_000 % 60),
        second: small(ms_of_day / 1000 % 60),
        nano: small(ms_of_day % 1000 * 1_000_000),
    }
}

/// Local milliseconds of a civil date-time (the inverse of [`local_date_time`]).
pub fn local_millis(t: &LocalDateTime) -> i64 {
    days_from_civil(i64::from(t.year), t.month, t.day) * MILLIS_PER_DAY
        + i64::from(t.hour) * MILLIS_PER_HOUR
        + i64::from(t.minute) * 60_000
        + i64::from(t.second) * 1000
        + i64::from(t.nano / 1_000_000)
}

/// What automatic tagging did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoTagOutcome {
    /// Tags created, in order, with their snapshot ids.
    pub created: Vec<(String, i64)>,
    /// Tags deleted (retention, replaced batch tags, expired retention times), in order.
    pub deleted: Vec<String>,
}

/// Create the automatic tags the snapshots since the last automatic tag call for, then keep
/// at most `tag.num-retained-max` automatic tags (Java `TagAutoCreation.run`, or for `batch`
/// `TagBatchCreation.createTag`). `now_millis` (epoch millis) is the creation time written
/// into tags with `tag.default-time-retained`.
///
/// # Errors
/// [`Error::Invalid`] when a snapshot already has an automatic tag of another name or one
/// snapshot holds two automatic tags (Java's checks); [`Error::Unsupported`] when the store
/// cannot list; IO failures.
pub async fn create_auto_tags<T>(
    io: &Io<T>,
    config: &TagAutoConfig,
    now_millis: i64,
) -> Result<AutoTagOutcome> {
    if config.mode == TagCreationMode::Batch {
        return create_batch_tag(io, config, now_millis).await;
    }
    let mut outcome = AutoTagOutcome::default();
    let auto_tags = |tags: Vec<(String, crate::spec::snapshot::Tag)>| {
        tags.into_iter()
            .filter_map(|(name, tag)| Some((config.tag_to_time(&name)?, name, tag.snapshot.id)))
            .collect::<Vec<_>>()
    };
    let existing = auto_tags(list_tags(io).await?);
    let (mut next_snapshot, mut next_tag) = match existing.iter().max_by_key(|(t, _, _)| *t) {
        None => (earliest_snapshot_id(io).await?.unwrap_or(1), None),
        Some((time, _, id)) => (id + 1, Some(time + config.period_millis())),
    };
    loop {
        let Some(snapshot) = try_read_snapshot(io, next_snapshot).await? else {
            match earliest_snapshot_id(io).await? {
                Some(e) if e > next_snapshot => {
                    next_snapshot = e;
                    continue;
                }
                _ => break,
            }
        };
        if let Some(created) = try_create_tag(
            io,
            config,
            &snapshot,
            &mut next_tag,
            now_millis,
            &mut outcome,
        )
        .await?
        {
            outcome.created.push((created, snapshot.id));
        }
        next_snapshot += 1;
    }
    Ok(outcome)
}

async fn try_create_tag<T>(
    io: &Io<T>,
    config: &TagAutoConfig,
    snapshot: &Snapshot,
    next_tag: &mut Option<i64>,
    now_millis: i64,
    outcome: &mut AutoTagOutcome,
) -> Result<Option<String>> {
    let time = match config.mode {
        TagCreationMode::ProcessTime => {
            Some(snapshot.time_millis + config.process_zone_offset_millis)
        }
        _ => snapshot
            .watermark
            .filter(|w| *w != i64::MIN)
            .map(|w| w.saturating_add(config.watermark_zone_offset_millis)),
    };
    let Some(time) = time else {
        return Ok(None);
    };
    let period = config.period_millis();
    if next_tag.is_some_and(|n| time - config.delay_millis < n + period) {
        return Ok(None);
    }
    let mut this_tag = config.normalize_to_previous_tag(time);
    if config.automatic_completion
        && let Some(n) = *next_tag
    {
        this_tag = n;
    }
    let name = config.time_to_tag(this_tag);
    let mut created = None;
    if read_tag(io, &name).await?.is_none() {
        // Java `TagManager.validateNoAutoTag`.
        let others: Vec<String> = list_tags(io)
            .await?
            .into_iter()
            .filter(|(n, t)| t.snapshot.id == snapshot.id && config.tag_to_time(n).is_some())
            .map(|(n, _)| n)
            .collect();
        if !others.is_empty() {
            return Err(Error::invalid(format!(
                "snapshot {} is already auto-tagged with {others:?}; not creating tag '{name}'",
                snapshot.id
            )));
        }
        create_tag(
            io,
            &name,
            Some(snapshot.id),
            config.default_time_retained_millis,
            local_date_time(now_millis),
        )
        .await?;
        created = Some(name);
    }
    *next_tag = Some(this_tag + period);
    if let Some(max) = config.num_retained_max {
        let mut by_snapshot: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for (_, name, id) in list_tags(io)
            .await?
            .into_iter()
            .filter_map(|(name, tag)| Some((config.tag_to_time(&name)?, name, tag.snapshot.id)))
        {
            by_snapshot.entry(id).or_default().push(name);
        }
        let excess = usize::try_from(i64::try_from(by_snapshot.len()).unwrap_or(i64::MAX) - max)
            .unwrap_or(0);
        for (id, names) in by_snapshot.into_iter().take(excess) {
            let [name] = names.as_slice() else {
                return Err(Error::invalid(format!(
                    "there are more than 1 auto-created tags of snapshot {id}: {}",
                    names.join(",")
                )));
            };
            delete_tag(io, name).await?;
            outcome.deleted.push(name.clone());
        }
    }
    Ok(created)
}

/// Java `TagBatchCreation.createTag` and `expireTag`.
async fn create_batch_tag<T>(
    io: &Io<T>,
    config: &TagAutoConfig,
    now_millis: i64,
) -> Result<AutoTagOutcome> {
    let mut outcome = AutoTagOutcome::default();
    let Some(latest) = latest_snapshot_id(io).await? else {
        return Ok(outcome);
    };
    let Some(snapshot) = try_read_snapshot(io, latest).await? else {
        return Ok(outcome);
    };
    let name = match &config.batch_customized_name {
        Some(n) => n.clone(),
        None => {
            let t = local_date_time(snapshot.time_millis + config.process_zone_offset_millis);
            format!(
                "{BATCH_WRITE_TAG_PREFIX}{:04}-{:02}-{:02}",
                t.year, t.month, t.day
            )
        }
    };
    if read_tag(io, &name).await?.is_some() {
        delete_tag(io, &name).await?;
        outcome.deleted.push(name.clone());
    }
    create_tag(
        io,
        &name,
        Some(snapshot.id),
        config.default_time_retained_millis,
        local_date_time(now_millis),
    )
    .await?;
    outcome.created.push((name, snapshot.id));
    let Some(max) = config.num_retained_max else {
        return Ok(outcome);
    };
    let modified: BTreeMap<String, Option<i64>> = io
        .list("tag/")
        .await?
        .unwrap_or_default()
        .into_iter()
        .filter_map(|o| {
            Some((
                o.path.strip_prefix("tag/tag-")?.to_string(),
                o.modified_millis,
            ))
        })
        .collect();
    let mut by_snapshot: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (name, tag) in list_tags(io).await? {
        by_snapshot.entry(tag.snapshot.id).or_default().push(name);
    }
    let mut count = i64::try_from(by_snapshot.values().map(Vec::len).sum::<usize>()).unwrap_or(0);
    for (_, mut names) in by_snapshot {
        if count <= max {
            break;
        }
        let len = i64::try_from(names.len()).unwrap_or(0);
        if count - len > max {
            for n in names {
                delete_tag(io, &n).await?;
                outcome.deleted.push(n);
            }
            count -= len;
        } else {
            names.sort_by_key(|n| (modified.get(n).copied().flatten(), n.clone()));
            for n in names {
                delete_tag(io, &n).await?;
                outcome.deleted.push(n);
                count -= 1;
                if count == max {
                    break;
                }
            }
            break;
        }
    }
    Ok(outcome)
}

/// Delete the tags whose `tagCreateTime` plus `tagTimeRetained` lies before `now_millis`
/// (Java `TagTimeExpire.expire` without an older-than time; tags without both fields stay).
/// Creation times are compared as UTC wall-clock times.
///
/// # Errors
/// As [`delete_tag`] and [`list_tags`].
pub async fn expire_tags_by_time<T>(io: &Io<T>, now_millis: i64) -> Result<Vec<String>> {
    let mut deleted = Vec::new();
    for (name, tag) in list_tags(io).await? {
        let (Some(created), Some(retained)) = (&tag.tag_create_time, tag.tag_time_retained) else {
            continue;
        };
        let retained_millis = retained
            .seconds
            .saturating_mul(1000)
            .saturating_add(i64::from(retained.nanos / 1_000_000));
        if now_millis > local_millis(created).saturating_add(retained_millis) {
            delete_tag(io, &name).await?;
            deleted.push(name);
        }
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(period: TagPeriod, formatter: TagPeriodFormatter) -> TagAutoConfig {
        TagAutoConfig {
            mode: TagCreationMode::ProcessTime,
            period,
            formatter,
            delay_millis: 0,
            num_retained_max: None,
            default_time_retained_millis: None,
            automatic_completion: false,
            process_zone_offset_millis: 0,
            watermark_zone_offset_millis: 0,
            batch_customized_name: None,
        }
    }

    #[test]
    fn names_round_trip_per_period_and_formatter() {
        // 2024-02-29T13:45:07Z
        let t = 1_709_214_307_000;
        for (period, formatter, want, start) in [
            (
                TagPeriod::Daily,
                TagPeriodFormatter::WithDashes,
                "2024-02-28",
                "2024-02-28T00:00",
            ),
            (
                TagPeriod::Daily,
                TagPeriodFormatter::WithoutDashes,
                "20240228",
                "",
            ),
            (
                TagPeriod::Hourly,
                TagPeriodFormatter::WithDashes,
                "2024-02-29 12",
                "",
            ),
            (
                TagPeriod::Hourly,
                TagPeriodFormatter::WithoutDashes,
                "20240229 12",
                "",
            ),
            (
                TagPeriod::Hourly,
                TagPeriodFormatter::WithoutDashesAndSpaces,
                "2024022912",
                "",
            ),
            (
                TagPeriod::TwoHours,
                TagPeriodFormatter::WithoutDashes,
                "2024-02-29 10",
                "",
            ),
            (
                TagPeriod::Duration(30 * 60_000),
                TagPeriodFormatter::WithDashes,
                "202402291300",
                "",
            ),
        ] {
            let c = config(period, formatter);
            let prev = c.normalize_to_previous_tag(t);
            assert_eq!(c.time_to_tag(prev), want, "{period:?} {formatter:?}");
            assert_eq!(c.tag_to_time(want), Some(prev), "{want}");
            let _ = start;
        }
    }

    #[test]
    fn auto_tag_names_are_strict() {
        let daily = config(TagPeriod::Daily, TagPeriodFormatter::WithDashes);
        assert!(daily.tag_to_time("2023-02-29").is_none());
        assert!(daily.tag_to_time("2024-02-29").is_some());
        // Java reads a daily name up to its first space.
        assert!(daily.tag_to_time("2024-02-29 anything").is_some());
        assert!(daily.tag_to_time("2024-2-29").is_none());
        assert!(daily.tag_to_time("my-tag").is_none());
        let hourly = config(TagPeriod::Hourly, TagPeriodFormatter::WithDashes);
        assert!(hourly.tag_to_time("2024-02-29 24").is_none());
        assert!(hourly.tag_to_time("2024-02-29").is_none());
    }

    #[test]
    fn zone_offsets() {
        assert_eq!(zone_offset_millis("k", "UTC").unwrap(), 0);
        assert_eq!(
            zone_offset_millis("k", "+08:00").unwrap(),
            8 * MILLIS_PER_HOUR
        );
        assert_eq!(
            zone_offset_millis("k", "GMT-05:30").unwrap(),
            -(5 * MILLIS_PER_HOUR + 30 * 60_000)
        );
        assert!(matches!(
            zone_offset_millis("k", "Asia/Shanghai"),
            Err(Error::Unsupported { .. })
        ));
    }

    #[test]
    fn civil_round_trip() {
        for ms in [0, 1_709_214_307_123, -86_400_001, 253_402_300_799_000] {
            assert_eq!(local_millis(&local_date_time(ms)), ms);
        }
    }
}
