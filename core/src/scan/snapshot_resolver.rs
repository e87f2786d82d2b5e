//! Finding snapshots, schemas and tags of a table: the latest / earliest snapshot, time travel
//! by snapshot id, tag name or timestamp.
//!
//! Source: Java `org.apache.paimon.utils.SnapshotManager`, `HintFileUtils`, `TagManager`,
//! `SchemaManager`, `table.source.snapshot.TimeTravelUtil` and the `StaticFrom*StartingScanner`s.
//! Protocol per `spec/table-layout.md` §4.
//!
//! All functions are `async` over an [`Io`] handle whose paths are relative to the table root
//! (`snapshot/LATEST`, `snapshot/snapshot-3`, `schema/schema-0`, `tag/tag-v1`). They ask for
//! IO in a fixed order, so the same table gives the same rounds on every host:
//!
//! * **latest** ([`latest_snapshot_id`]): `Read snapshot/LATEST`; if it holds a valid id `n > 0`,
//!   `Head snapshot/snapshot-<n+1>`; NotFound → `n`. Otherwise `List snapshot/` and take the
//!   largest `snapshot-<id>`. If the host cannot list (`Unsupported`), probe with `Head`s from
//!   the hint (or from `EARLIEST`, or 1): one `Head` per round at ids `start+1, start+2,
//!   start+4, ...` until one is missing, then a binary search in between (snapshot ids are
//!   contiguous), i.e. O(log n) rounds.
//! * **earliest** ([`earliest_snapshot_id`]): `Read snapshot/EARLIEST`; if valid and
//!   `Head snapshot/snapshot-<n>` exists → `n`; else `List snapshot/` and take the smallest;
//!   without listing, the first existing id between the hint (or 1) and the latest, found by
//!   `Head` (binary search).
//! * Hint files are only hints: a missing, unreadable or malformed hint falls back as above.
//! * Reading many files (all snapshots, all tags) asks for them in one round, in id / name
//!   order.

use std::collections::BTreeMap;

use futures_util::future::join_all;

use crate::error::{Error, Result};
use crate::io::{Io, Machine};
use crate::spec::file_names::{SCHEMA_FILE_PREFIX, SNAPSHOT_FILE_PREFIX};
use crate::spec::options::{
    CoreOptions, SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_TIMESTAMP, SCAN_TIMESTAMP_MILLIS,
    SCAN_TIMESTAMP_MILLIS_FALLBACK, SCAN_VERSION, SCAN_WATERMARK,
};
use crate::spec::schema::{TableSchema, decode_schema, schema_path};
use crate::spec::snapshot::{
    Snapshot, Tag, decode_hint, decode_snapshot, decode_tag, snapshot_path, tag_path,
};

/// `snapshot/LATEST`.
pub const LATEST_HINT: &str = "snapshot/LATEST";
/// `snapshot/EARLIEST`.
pub const EARLIEST_HINT: &str = "snapshot/EARLIEST";
/// How many ids past the earliest one a reader tries when the earliest snapshot vanishes
/// (expired concurrently); Java `SnapshotManager.EARLIEST_SNAPSHOT_DEFAULT_RETRY_NUM`.
pub const EARLIEST_SNAPSHOT_RETRY_NUM: i64 = 300;

/// The time-travel keys of Java `TimeTravelUtil.SCAN_KEYS`, in Java's order; at most one may
/// be set.
pub const TIME_TRAVEL_KEYS: [&str; 5] = [
    SCAN_SNAPSHOT_ID,
    SCAN_TAG_NAME,
    SCAN_WATERMARK,
    SCAN_TIMESTAMP,
    SCAN_TIMESTAMP_MILLIS,
];

/// Read a hint file; `None` when it is missing, unreadable or not a decimal id (Java ignores
/// every failure of reading a hint).
async fn read_hint<T>(io: &Io<T>, path: &str) -> Option<i64> {
    match io.read_opt(path, None).await {
        Ok(Some(bytes)) => decode_hint(&bytes),
        _ => None,
    }
}

async fn exists<T>(io: &Io<T>, path: &str) -> Result<bool> {
    Ok(io.head(path).await?.is_some())
}

async fn snapshot_exists<T>(io: &Io<T>, id: i64) -> Result<bool> {
    exists(io, &snapshot_path(id)).await
}

/// Ids of the files `<dir><prefix><id>` directly under `dir` (sorted, deduplicated); `None`
/// when the host cannot list. Names whose suffix is not a decimal id (temp files such as
/// `snapshot-1<uuid>.tmp`) are skipped, as in Java's `listVersionedFiles`.
async fn list_ids<T>(io: &Io<T>, dir: &str, prefix: &str) -> Result<Option<Vec<i64>>> {
    let Some(objects) = io.list(dir).await? else {
        return Ok(None);
    };
    let mut ids: Vec<i64> = objects
        .iter()
        .filter_map(|o| o.path.strip_prefix(dir)?.strip_prefix(prefix))
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|s| s.parse().ok())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    Ok(Some(ids))
}

/// The last existing id at or after `start` (which must exist), given that ids are contiguous:
/// gallop (`start+1`, `start+2`, `start+4`, ...) to a missing id, then binary search.
async fn probe_last_existing<T>(io: &Io<T>, start: i64, exists_at: Numbered) -> Result<i64> {
    let mut known = start;
    let mut step: i64 = 1;
    let missing = loop {
        let Some(probe) = known.checked_add(step) else {
            return Ok(known);
        };
        if exists_at.exists(io, probe).await? {
            known = probe;
            step = step.saturating_mul(2);
        } else {
            break probe;
        }
    };
    // known exists, missing does not; search in (known, missing).
    let (mut lo, mut hi) = (known, missing);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if exists_at.exists(io, mid).await? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The first existing id in `lo..=hi` given that `hi` exists and existence is monotonic
/// (missing ids, then existing ones).
async fn probe_first_existing<T>(io: &Io<T>, lo: i64, hi: i64, exists_at: Numbered) -> Result<i64> {
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if exists_at.exists(io, mid).await? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(hi)
}

/// A family of numbered metadata files, for the probes.
#[derive(Debug, Clone, Copy)]
enum Numbered {
    /// `snapshot/snapshot-<id>`
    Snapshot,
    /// `schema/schema-<id>`
    Schema,
}

impl Numbered {
    async fn exists<T>(self, io: &Io<T>, id: i64) -> Result<bool> {
        match self {
            Numbered::Snapshot => snapshot_exists(io, id).await,
            Numbered::Schema => exists(io, &schema_path(id)).await,
        }
    }
}

/// The id of the latest snapshot, `None` when the table has no snapshot.
///
/// Source: Java `HintFileUtils.findLatest`. Requests: see the module docs.
///
/// # Errors
/// [`Error::Io`] when a `Head` or `List` fails (other than NotFound / Unsupported).
pub async fn latest_snapshot_id<T>(io: &Io<T>) -> Result<Option<i64>> {
    let hint = read_hint(io, LATEST_HINT).await.filter(|n| *n > 0);
    // The largest id known to exist (the one after a stale hint).
    let mut known = None;
    if let Some(n) = hint {
        match n.checked_add(1) {
            Some(next) if snapshot_exists(io, next).await? => known = Some(next),
            _ => return Ok(Some(n)),
        }
    }
    if let Some(ids) = list_ids(io, "snapshot/", SNAPSHOT_FILE_PREFIX).await? {
        return Ok(ids.last().copied());
    }
    // No listing: probe forward from there, or from the earliest hint, or from 1.
    let start = match known {
        Some(n) => n,
        None => {
            let first = read_hint(io, EARLIEST_HINT)
                .await
                .filter(|n| *n > 0)
                .unwrap_or(1);
            if !snapshot_exists(io, first).await? {
                return Ok(None);
            }
            first
        }
    };
    probe_last_existing(io, start, Numbered::Snapshot)
        .await
        .map(Some)
}

/// The id of the earliest snapshot still present, `None` when the table has no snapshot.
///
/// Source: Java `HintFileUtils.findEarliest`. Requests: see the module docs.
///
/// # Errors
/// [`Error::Io`] when a `Head` or `List` fails (other than NotFound / Unsupported).
pub async fn earliest_snapshot_id<T>(io: &Io<T>) -> Result<Option<i64>> {
    let hint = read_hint(io, EARLIEST_HINT).await;
    if let Some(n) = hint
        && snapshot_exists(io, n).await?
    {
        return Ok(Some(n));
    }
    if let Some(ids) = list_ids(io, "snapshot/", SNAPSHOT_FILE_PREFIX).await? {
        return Ok(ids.first().copied());
    }
    let Some(latest) = latest_snapshot_id(io).await? else {
        return Ok(None);
    };
    let lo = hint.filter(|h| (1..=latest).contains(h)).unwrap_or(1);
    probe_first_existing(io, lo, latest, Numbered::Snapshot)
        .await
        .map(Some)
}

/// Read snapshot `id`; `Ok(None)` when its file does not exist.
///
/// # Errors
/// [`Error::Corrupt`] for a bad file; [`Error::Io`] for a failed read.
pub async fn try_read_snapshot<T>(io: &Io<T>, id: i64) -> Result<Option<Snapshot>> {
    let path = snapshot_path(id);
    match io.read_opt(&path, None).await? {
        Some(bytes) => decode_snapshot(&bytes, &path).map(Some),
        None => Ok(None),
    }
}

/// Read snapshot `id`.
///
/// # Errors
/// [`Error::Io`] with kind NotFound naming `snapshot/snapshot-<id>` when it does not exist;
/// [`Error::Corrupt`] for a bad file.
pub async fn read_snapshot<T>(io: &Io<T>, id: i64) -> Result<Snapshot> {
    let path = snapshot_path(id);
    let bytes = io.read(&path).await?;
    decode_snapshot(&bytes, &path)
}

/// Read schema `id` (`schema/schema-<id>`).
///
/// # Errors
/// [`Error::Io`] NotFound when it does not exist; [`Error::Corrupt`] for a bad file.
pub async fn read_schema<T>(io: &Io<T>, id: i64) -> Result<TableSchema> {
    let path = schema_path(id);
    let bytes = io.read(&path).await?;
    decode_schema(&bytes, &path)
}

/// The id of the latest schema (`schema/schema-<id>` with the largest id); `None` when there
/// is no schema file, i.e. no table. Lists `schema/`; without listing, probes with `Head` from
/// `schema/schema-0` (schema ids are contiguous from 0).
///
/// Source: Java `SchemaManager.latest`.
///
/// # Errors
/// [`Error::Io`] when a `Head` or `List` fails.
pub async fn latest_schema_id<T>(io: &Io<T>) -> Result<Option<i64>> {
    if let Some(ids) = list_ids(io, "schema/", SCHEMA_FILE_PREFIX).await? {
        return Ok(ids.last().copied());
    }
    if !exists(io, &schema_path(0)).await? {
        return Ok(None);
    }
    probe_last_existing(io, 0, Numbered::Schema).await.map(Some)
}

/// Read the latest schema; `None` when there is no schema file.
///
/// # Errors
/// As [`latest_schema_id`] and [`read_schema`].
pub async fn read_latest_schema<T>(io: &Io<T>) -> Result<Option<TableSchema>> {
    match latest_schema_id(io).await? {
        Some(id) => read_schema(io, id).await.map(Some),
        None => Ok(None),
    }
}

/// The schemas of a read of one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSchemas {
    /// The schema rows are read with (columns, keys, options): the table's latest schema for
    /// a read of the latest snapshot, the snapshot's own schema for time travel.
    pub read: TableSchema,
    /// The snapshot's own schema (`schemaId`); equal to `read` unless the table was altered
    /// after the snapshot was committed.
    pub snapshot: TableSchema,
}

/// The schemas a read of `snapshot` asked for by `travel` uses.
///
/// Java opens a table with its latest schema (`FileStoreTableFactory` reads
/// `SchemaManager.latest`) and switches to the snapshot's schema only when a time-travel
/// option is set (`AbstractFileStoreTable#tryTimeTravel`). So:
///
/// * [`TimeTravel::Latest`]: one round `Read schema/schema-<s>` + `Head schema/schema-<s+1>`
///   (`s` = the snapshot's `schemaId`). NotFound means schema `s` is the latest (schema ids
///   are contiguous); otherwise the latest id is found from `s+1` (a `List schema/`, or
///   `Head` probes when listing is `Unsupported`) and that schema is read too.
/// * time travel: `Read schema/schema-<s>`; `read` is the snapshot's schema. (Java also
///   overlays the latest schema's options on it; that is not done here.)
///
/// # Errors
/// [`Error::Io`] NotFound / [`Error::Corrupt`] for a missing or bad schema file.
pub async fn read_schemas_for<T>(
    io: &Io<T>,
    travel: &TimeTravel,
    snapshot: &Snapshot,
) -> Result<ReadSchemas> {
    let id = snapshot.schema_id;
    if *travel != TimeTravel::Latest {
        let schema = read_schema(io, id).await?;
        return Ok(ReadSchemas {
            read: schema.clone(),
            snapshot: schema,
        });
    }
    let newer_id = id.saturating_add(1);
    let (own, newer) =
        futures_util::future::try_join(read_schema(io, id), exists(io, &schema_path(newer_id)))
            .await?;
    if !newer {
        return Ok(ReadSchemas {
            read: own.clone(),
            snapshot: own,
        });
    }
    let latest_id = match list_ids(io, "schema/", SCHEMA_FILE_PREFIX).await? {
        Some(ids) => ids.last().copied().unwrap_or(newer_id).max(newer_id),
        None => probe_last_existing(io, newer_id, Numbered::Schema).await?,
    };
    Ok(ReadSchemas {
        read: read_schema(io, latest_id).await?,
        snapshot: own,
    })
}

/// Read tag `name` (`tag/tag-<name>`); `Ok(None)` when it does not exist.
///
/// Source: Java `TagManager.get`.
///
/// # Errors
/// [`Error::Invalid`] for a blank name; [`Error::Corrupt`] for a bad file; [`Error::Io`] for a
/// failed read.
pub async fn read_tag<T>(io: &Io<T>, name: &str) -> Result<Option<Tag>> {
    if name.trim().is_empty() {
        return Err(Error::invalid("tag name must not be blank"));
    }
    let path = tag_path(name);
    match io.read_opt(&path, None).await? {
        Some(bytes) => decode_tag(&bytes, &path).map(Some),
        None => Ok(None),
    }
}

/// Every tag with its name, sorted by tagged snapshot id, then name (Java `TagManager.tags`).
/// Lists `tag/`, then reads every `tag-<name>` file in one round (in name order); a tag
/// deleted in between is skipped.
///
/// # Errors
/// [`Error::Unsupported`] when the host cannot list (tags need a listable source; a named tag
/// can still be read with [`read_tag`]); [`Error::Corrupt`] / [`Error::Io`] as [`read_tag`].
pub async fn list_tags<T>(io: &Io<T>) -> Result<Vec<(String, Tag)>> {
    let Some(objects) = io.list("tag/").await? else {
        return Err(Error::unsupported(
            "listing tags needs a source that can list files; name a tag instead (scan.tag-name)",
        ));
    };
    let names: Vec<String> = objects
        .iter()
        .filter_map(|o| o.path.strip_prefix("tag/")?.strip_prefix("tag-"))
        .filter(|n| !n.is_empty() && !n.contains('/'))
        .map(str::to_string)
        .collect();
    let reads = join_all(names.iter().map(|n| read_tag(io, n))).await;
    let mut tags = Vec::new();
    for (name, tag) in names.into_iter().zip(reads) {
        if let Some(tag) = tag? {
            tags.push((name, tag));
        }
    }
    tags.sort_by(|a, b| (a.1.snapshot.id, &a.0).cmp(&(b.1.snapshot.id, &b.0)));
    Ok(tags)
}

/// Ids of the snapshot files present, ascending: from a listing of `snapshot/`, or (without
/// listing) every id between the earliest and the latest snapshot.
///
/// # Errors
/// As [`latest_snapshot_id`].
pub async fn list_snapshot_ids<T>(io: &Io<T>) -> Result<Vec<i64>> {
    if let Some(ids) = list_ids(io, "snapshot/", SNAPSHOT_FILE_PREFIX).await? {
        return Ok(ids);
    }
    let (Some(earliest), Some(latest)) = (
        earliest_snapshot_id(io).await?,
        latest_snapshot_id(io).await?,
    ) else {
        return Ok(Vec::new());
    };
    Ok((earliest..=latest).collect())
}

/// Every existing snapshot in id order. The snapshot files are read in one round; ids whose
/// file is gone (expired meanwhile) are skipped.
///
/// # Errors
/// As [`list_snapshot_ids`] and [`try_read_snapshot`].
pub async fn list_snapshots<T>(io: &Io<T>) -> Result<Vec<Snapshot>> {
    let ids = list_snapshot_ids(io).await?;
    let reads = join_all(ids.iter().map(|id| try_read_snapshot(io, *id))).await;
    let mut out = Vec::with_capacity(ids.len());
    for r in reads {
        if let Some(s) = r? {
            out.push(s);
        }
    }
    Ok(out)
}

/// The earliest snapshot: read from the earliest id, moving on (one round per id, at most
/// [`EARLIEST_SNAPSHOT_RETRY_NUM`] times) when it vanished meanwhile. `None` without
/// snapshots.
///
/// Source: Java `SnapshotManager.earliestSnapshot` / `retryEarliestSnapshot`.
///
/// # Errors
/// [`Error::Io`] / [`Error::Corrupt`]; [`Error::Invalid`] when no snapshot is found in the
/// retry window.
pub async fn earliest_snapshot<T>(io: &Io<T>) -> Result<Option<Snapshot>> {
    let Some(first) = earliest_snapshot_id(io).await? else {
        return Ok(None);
    };
    let stop = first.saturating_add(EARLIEST_SNAPSHOT_RETRY_NUM);
    let mut id = first;
    loop {
        if let Some(s) = try_read_snapshot(io, id).await? {
            return Ok(Some(s));
        }
        id += 1;
        if id > stop {
            return Err(Error::invalid(format!(
                "cannot find the earliest snapshot from #{first} to #{stop}"
            )));
        }
    }
}

/// The snapshot to read "as of" `time_millis`: the latest snapshot whose `timeMillis` is ≤
/// `time_millis`, by binary search over `[earliest, latest]` (one snapshot read per round).
/// `None` when there is no snapshot or the earliest one is later than `time_millis`.
///
/// Source: Java `SnapshotManager.earlierOrEqualTimeMills` (used by `scan.timestamp-millis`):
/// a snapshot with exactly `time_millis` ends the search; commit times are assumed
/// non-decreasing with the id.
///
/// # Errors
/// [`Error::Io`] (e.g. a snapshot inside the range is missing) / [`Error::Corrupt`].
pub async fn snapshot_at_or_before_timestamp<T>(
    io: &Io<T>,
    time_millis: i64,
) -> Result<Option<Snapshot>> {
    let Some(mut latest) = latest_snapshot_id(io).await? else {
        return Ok(None);
    };
    let Some(earliest_snapshot) = earliest_snapshot(io).await? else {
        return Ok(None);
    };
    if earliest_snapshot.time_millis > time_millis {
        return Ok(None);
    }
    let mut earliest = earliest_snapshot.id;
    let mut found = None;
    while earliest <= latest {
        let mid = earliest + (latest - earliest) / 2;
        let s = if mid == earliest_snapshot.id {
            earliest_snapshot.clone()
        } else {
            read_snapshot(io, mid).await?
        };
        match s.time_millis.cmp(&time_millis) {
            std::cmp::Ordering::Greater => latest = mid - 1,
            std::cmp::Ordering::Less => {
                earliest = mid + 1;
                found = Some(s);
            }
            std::cmp::Ordering::Equal => {
                found = Some(s);
                break;
            }
        }
    }
    Ok(found)
}

/// Which snapshot a read asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeTravel {
    /// The latest snapshot (no time-travel option).
    Latest,
    /// `scan.snapshot-id`.
    SnapshotId(i64),
    /// `scan.tag-name`.
    Tag(String),
    /// `scan.timestamp-millis` (or `log.scan.timestamp-millis`), epoch millis.
    TimestampMillis(i64),
    /// `scan.version`: a tag name if such a tag exists, else a snapshot id if all digits.
    Version(String),
}

/// The snapshot asked for, for messages: `the latest snapshot`, `snapshot 3`, `tag 'v1'`,
/// `the latest snapshot at or before 1700000000000 (epoch ms)`, `version 'v1'`.
impl std::fmt::Display for TimeTravel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeTravel::Latest => f.write_str("the latest snapshot"),
            TimeTravel::SnapshotId(id) => write!(f, "snapshot {id}"),
            TimeTravel::Tag(tag) => write!(f, "tag '{tag}'"),
            TimeTravel::TimestampMillis(t) => {
                write!(f, "the latest snapshot at or before {t} (epoch ms)")
            }
            TimeTravel::Version(v) => write!(f, "version '{v}'"),
        }
    }
}

impl TimeTravel {
    /// The time travel asked for by `options` (Java `TimeTravelUtil.tryTravelToSnapshot`).
    ///
    /// # Errors
    /// [`Error::Invalid`] when more than one of [`TIME_TRAVEL_KEYS`] is set (`scan.version`
    /// counts too), or a value does not parse; [`Error::Unsupported`] for `scan.watermark`
    /// and `scan.timestamp` (a local-time-zone timestamp string; use
    /// `scan.timestamp-millis`).
    pub fn from_options(options: &CoreOptions) -> Result<Self> {
        let mut set: Vec<&str> = TIME_TRAVEL_KEYS
            .iter()
            .copied()
            .filter(|k| options.contains(k))
            .collect();
        if !options.contains(SCAN_TIMESTAMP_MILLIS)
            && options.contains(SCAN_TIMESTAMP_MILLIS_FALLBACK)
        {
            set.push(SCAN_TIMESTAMP_MILLIS);
        }
        if options.contains(SCAN_VERSION) {
            set.push(SCAN_VERSION);
        }
        if set.len() > 1 {
            return Err(Error::invalid(format!(
                "only one of the following options may be set: {}, {SCAN_VERSION}; got {}",
                TIME_TRAVEL_KEYS.join(", "),
                set.join(", ")
            )));
        }
        Ok(match set.first().copied() {
            None => TimeTravel::Latest,
            Some(SCAN_SNAPSHOT_ID) => match options.scan_snapshot_id()? {
                Some(id) => TimeTravel::SnapshotId(id),
                None => TimeTravel::Latest,
            },
            Some(SCAN_TAG_NAME) => {
                TimeTravel::Tag(options.scan_tag_name().unwrap_or_default().to_string())
            }
            Some(SCAN_TIMESTAMP_MILLIS) => match options.scan_timestamp_millis()? {
                Some(t) => TimeTravel::TimestampMillis(t),
                None => TimeTravel::Latest,
            },
            Some(SCAN_VERSION) => {
                TimeTravel::Version(options.get(SCAN_VERSION).unwrap_or_default().to_string())
            }
            Some(other) => {
                return Err(Error::unsupported(format!(
                    "time travel by '{other}' (use scan.snapshot-id, scan.tag-name or \
                     scan.timestamp-millis)"
                )));
            }
        })
    }
}

/// The snapshot a read of `travel` sees; `Ok(None)` only for [`TimeTravel::Latest`] on a
/// table without snapshots.
///
/// # Errors
/// [`Error::Invalid`] with Java's messages: no snapshot at all, a snapshot id outside
/// `[earliest, latest]`, an unknown tag, no snapshot at or before a timestamp, a version that
/// is neither a tag nor a snapshot id; [`Error::Io`] / [`Error::Corrupt`] from the reads.
pub async fn resolve_snapshot<T>(io: &Io<T>, travel: &TimeTravel) -> Result<Option<Snapshot>> {
    match travel {
        TimeTravel::Latest => match latest_snapshot_id(io).await? {
            Some(id) => read_snapshot(io, id).await.map(Some),
            None => Ok(None),
        },
        TimeTravel::SnapshotId(id) => {
            if let Some(s) = try_read_snapshot(io, *id).await? {
                return Ok(Some(s));
            }
            let earliest = earliest_snapshot_id(io).await?;
            let latest = latest_snapshot_id(io).await?;
            match (earliest, latest) {
                (Some(e), Some(l)) if *id < e || *id > l => Err(Error::invalid(format!(
                    "the specified scan snapshot id {id} is out of the available snapshot id \
                     range [{e}, {l}]"
                ))),
                (Some(_), Some(_)) => Err(Error::io(
                    snapshot_path(*id),
                    crate::io::IoErrorKind::NotFound,
                    "snapshot inside the available range is missing",
                )),
                _ => Err(Error::invalid(format!(
                    "cannot read snapshot {id}: there is currently no snapshot"
                ))),
            }
        }
        TimeTravel::Tag(name) => match read_tag(io, name).await? {
            Some(tag) => Ok(Some(tag.snapshot)),
            None => Err(Error::invalid(format!("tag '{name}' doesn't exist"))),
        },
        TimeTravel::TimestampMillis(t) => match snapshot_at_or_before_timestamp(io, *t).await? {
            Some(s) => Ok(Some(s)),
            None => {
                let earliest = earliest_snapshot(io).await?;
                Err(Error::invalid(format!(
                    "there is currently no snapshot earlier than or equal to timestamp [{t}], \
                     the earliest snapshot's timestamp is [{}]",
                    earliest.map_or("null".to_string(), |s| s.time_millis.to_string())
                )))
            }
        },
        TimeTravel::Version(v) => {
            if let Some(tag) = read_tag(io, v).await? {
                return Ok(Some(tag.snapshot));
            }
            if v.starts_with("watermark-") {
                return Err(Error::unsupported(format!(
                    "time travel to watermark version '{v}'"
                )));
            }
            match v.parse::<i64>() {
                Ok(id) if v.bytes().all(|b| b.is_ascii_digit()) => {
                    Box::pin(resolve_snapshot(io, &TimeTravel::SnapshotId(id))).await
                }
                _ => Err(Error::invalid(format!(
                    "cannot find a time travel version for '{v}': no such tag and not a \
                     snapshot id"
                ))),
            }
        }
    }
}

/// Resolve the snapshot a read with `options` sees (`scan.snapshot-id`, `scan.tag-name`,
/// `scan.timestamp-millis`, `scan.version`, or the latest) and the schema the read uses: the
/// table's **latest** schema for a plain read, the snapshot's own schema (`schemaId`) for time
/// travel, as Java (see [`read_schemas_for`]).
///
/// Returns `Ok(None)` for a table that exists (has a schema) but has no snapshot yet.
///
/// # Errors
/// [`Error::Invalid`] "no Paimon table" when there is neither a snapshot nor a schema file;
/// otherwise as [`TimeTravel::from_options`], [`resolve_snapshot`] and [`read_schemas_for`].
pub async fn resolve<T>(
    io: &Io<T>,
    options: &CoreOptions,
) -> Result<Option<(Snapshot, TableSchema)>> {
    Ok(resolve_read(io, options)
        .await?
        .map(|(snapshot, schemas)| (snapshot, schemas.read)))
}

/// [`resolve`], also returning the snapshot's own schema (see [`ReadSchemas`]).
///
/// # Errors
/// As [`resolve`].
pub async fn resolve_read<T>(
    io: &Io<T>,
    options: &CoreOptions,
) -> Result<Option<(Snapshot, ReadSchemas)>> {
    let travel = TimeTravel::from_options(options)?;
    let Some(snapshot) = resolve_snapshot(io, &travel).await? else {
        if latest_schema_id(io).await?.is_none() {
            return Err(Error::invalid(
                "no Paimon table here: neither snapshot/ nor schema/ files were found",
            ));
        }
        return Ok(None);
    };
    let schemas = read_schemas_for(io, &travel, &snapshot).await?;
    Ok(Some((snapshot, schemas)))
}

/// A machine running [`resolve`] with `options`; it emits one value.
pub fn resolve_machine(options: CoreOptions) -> Machine<Option<(Snapshot, TableSchema)>> {
    Machine::once("SnapshotResolver", move |io| async move {
        resolve(&io, &options).await
    })
}

/// Tag names by snapshot id, from [`list_tags`] output.
pub fn tags_by_snapshot(tags: &[(String, Tag)]) -> BTreeMap<i64, Vec<String>> {
    let mut m: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (name, tag) in tags {
        m.entry(tag.snapshot.id).or_default().push(name.clone());
    }
    m
}

#[cfg(test)]
mod read_schema_tests {
    use super::*;
    use crate::io::{IoAnswer, IoErrorKind, IoOp, MemoryStore, Step};

    const SNAPSHOT_1: &str = r#"{"version": 3, "id": 1, "schemaId": 0,
        "baseManifestList": "b", "deltaManifestList": "d", "totalRecordCount": 0,
        "deltaRecordCount": 0, "commitUser": "u", "commitIdentifier": 1,
        "commitKind": "APPEND", "timeMillis": 1}"#;

    fn schema(id: i64) -> bytes::Bytes {
        format!(
            r#"{{"version": 3, "id": {id}, "fields": [], "highestFieldId": -1,
                "partitionKeys": [], "primaryKeys": [], "options": {{}}}}"#
        )
        .into()
    }

    /// A table with snapshot 1 (schema 0) and schemas `0..schemas`.
    fn store(schemas: i64) -> MemoryStore {
        let mut s = MemoryStore::new();
        s.objects
            .insert("snapshot/snapshot-1".into(), SNAPSHOT_1.into());
        s.objects.insert(LATEST_HINT.into(), "1".into());
        for id in 0..schemas {
            s.objects.insert(schema_path(id), schema(id));
        }
        s
    }

    /// Resolve `travel`: (read schema id, snapshot schema id) and the requests after the
    /// snapshot was read, one line per round.
    fn resolve_with(
        store: &MemoryStore,
        travel: TimeTravel,
        list: bool,
    ) -> ((i64, i64), Vec<String>) {
        let mut store = store.clone();
        let mut m = Machine::once("t", move |io| async move {
            let snapshot = resolve_snapshot(&io, &travel).await?.unwrap();
            io.emit_and_yield(None).await;
            let s = read_schemas_for(&io, &travel, &snapshot).await?;
            Ok(Some((s.read.id, s.snapshot.id)))
        });
        let (mut rounds, mut started, mut out) = (Vec::new(), false, None);
        loop {
            match m.step().unwrap() {
                Step::NeedIo(round) => {
                    let mut line = Vec::new();
                    for r in round {
                        let kind = match &r.op {
                            IoOp::Read { .. } => "Read",
                            IoOp::Head { .. } => "Head",
                            IoOp::List { .. } => "List",
                            IoOp::Put { .. } => "Put",
                            IoOp::Delete { .. } => "Delete",
                            _ => "streamed put",
                        };
                        line.push(format!("{kind} {}", r.op.path()));
                        let answer = match &r.op {
                            IoOp::List { .. } if !list => IoAnswer::error(IoErrorKind::Unsupported),
                            op => store.answer(op),
                        };
                        m.provide(r.id, answer).unwrap();
                    }
                    if started {
                        rounds.push(line.join(" + "));
                    }
                }
                Step::Emit(None) => started = true,
                Step::Emit(Some(v)) => out = Some(v),
                Step::Done => break,
                Step::Work(_) | Step::Wait => unreachable!(),
            }
        }
        (out.unwrap(), rounds)
    }

    #[test]
    fn a_plain_read_uses_the_latest_schema() {
        // Not altered since the snapshot: one round, the schema and a Head of the next id.
        let (ids, rounds) = resolve_with(&store(1), TimeTravel::Latest, true);
        assert_eq!(ids, (0, 0));
        assert_eq!(rounds, ["Read schema/schema-0 + Head schema/schema-1"]);
        // Altered twice: the latest by listing, or by probing without listing.
        let (ids, rounds) = resolve_with(&store(3), TimeTravel::Latest, true);
        assert_eq!(ids, (2, 0));
        assert_eq!(
            rounds,
            [
                "Read schema/schema-0 + Head schema/schema-1",
                "List schema/",
                "Read schema/schema-2"
            ]
        );
        let (ids, rounds) = resolve_with(&store(3), TimeTravel::Latest, false);
        assert_eq!(ids, (2, 0));
        assert_eq!(
            rounds,
            [
                "Read schema/schema-0 + Head schema/schema-1",
                "List schema/",
                "Head schema/schema-2",
                "Head schema/schema-4",
                "Head schema/schema-3",
                "Read schema/schema-2"
            ]
        );
    }

    #[test]
    fn time_travel_uses_the_snapshots_schema() {
        let (ids, rounds) = resolve_with(&store(3), TimeTravel::SnapshotId(1), true);
        assert_eq!(ids, (0, 0));
        assert_eq!(rounds, ["Read schema/schema-0"]);
    }
}
