//! Reading rows: [`TableScan`]'s projection, filter and limit, [`TableScan::plan`],
//! [`TableScan::to_stream`] and [`TableScan::to_batches`].
//!
//! A read plans the scan (one machine: snapshot, manifests, schemas; see
//! [`paimon_kernel::scan::plan_scan`]), cuts each split into independent parts
//! ([`paimon_kernel::read::independent_parts`]: consecutive data files of an append split, at least 8 MiB per part;
//! primary-key and data-evolution splits stay whole) and reads each part with its own
//! [`read_split`] machine. Parts run concurrently, at most
//! [`TableScan::with_splits_in_flight`] at a time (default: the number of cores, between 2
//! and 4) and, beyond the first, only while the running parts hold at most
//! [`TableScan::with_in_flight_bytes`] of data files (default [`DEFAULT_IN_FLIGHT_BYTES`]),
//! each on its own tokio task, whose steps (assembling batches, merging, decoding small files)
//! run on that task's worker while other parts wait for IO. Each part's machine may also hand
//! out CPU work
//! ([`paimon_kernel::io::Step::Work`], parallelism = the cores): large Parquet files are
//! decoded in column groups, a few MiB at a time and ahead of the reader, on the rayon pool,
//! so one big file or one primary-key merge uses several cores:
//!
//! * **Order**: batches come out in part order (the plan's split order, files in split
//!   order), and in order within a part, whatever order the parts finish in: exactly the
//!   batches of reading the splits one after the other.
//! * **Memory**: the part being consumed (the front part) may hold [`SPLIT_QUEUE_BATCHES`]
//!   finished batches ahead of the consumer; the parts behind it share a read-ahead budget of
//!   [`TableScan::with_read_ahead_bytes`] (default [`DEFAULT_READ_AHEAD_BYTES`], counted as
//!   the Arrow memory size of the queued batches) and wait when it is spent. Each running
//!   part also holds its decoder state (for Parquet, the compressed column chunks of its
//!   current row group per open file). Memory therefore grows with the parts in flight, the
//!   row-group size and the budget, not with the table size.
//! * **Limit**: rows past [`TableScan::with_limit`] are never returned; once the limit is
//!   reached the stream ends, parts not started are never started and running part tasks
//!   are cancelled. Dropping the stream cancels them too.
//!
//! ```no_run
//! # async fn demo() -> paimon_native::Result<()> {
//! use futures::TryStreamExt;
//! use paimon_native::Table;
//!
//! let table = Table::open("conformance/tables/corpus.db/pk_dedup").await?;
//! let mut stream = table
//!     .scan()
//!     .with_projection(["k", "name"])
//!     .with_filter("k > 2")
//!     .with_limit(10)
//!     .to_stream()
//!     .await?;
//! while let Some(batch) = stream.try_next().await? {
//!     println!("{} rows", batch.num_rows());
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Source: Java `org.apache.paimon.table.source.{ReadBuilder, TableScan, TableRead}`.

use std::collections::{BTreeSet, VecDeque};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, Stream, StreamExt};
use paimon_kernel::io::{Io, Machine, Step};
use paimon_kernel::predicate::Predicate;
use paimon_kernel::read::evolution::read_blob_cell;
use paimon_kernel::read::{ReadContext, independent_parts, read_split};
use paimon_kernel::scan::branch::{SCAN_FALLBACK_BRANCH, SCAN_PRIMARY_BRANCH};
use paimon_kernel::scan::planner::read_live_entries;
use paimon_kernel::scan::snapshot_resolver::TimeTravel;
use paimon_kernel::scan::{DataSplit, Plan, ScanRequest, plan_scan};
use paimon_kernel::spec::manifest::ManifestEntry;
use paimon_kernel::spec::options::SOURCE_SPLIT_TARGET_SIZE;
use paimon_kernel::spec::row_range::RowRange;
use paimon_kernel::spec::snapshot::tag_path;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::host::{ObjectStoreHost, cores};
use crate::table::TableScan;

/// Finished batches the part being consumed may hold before the consumer takes them.
pub const SPLIT_QUEUE_BATCHES: usize = 2;

/// Default data-file bytes of the parts read concurrently: 16 MiB. Parts of larger files run
/// one at a time, each decoded on several cores (column groups); on the benchmark tables this
/// measured as fast as two parts at once with 25-40 MiB less peak RSS, while tables of small
/// files still read two or more parts at once to overlap their IO.
pub const DEFAULT_IN_FLIGHT_BYTES: u64 = 16 << 20;

/// Default bytes of decoded batches (Arrow memory size) that the parts read ahead of the one
/// being consumed may hold together: 4 MiB. Larger budgets measured no faster on the benchmark
/// tables (2 cores) and 10-14 MiB more peak RSS at 16 MiB.
pub const DEFAULT_READ_AHEAD_BYTES: usize = 4 << 20;

/// A row filter given to [`TableScan::with_filter`]: a [`Predicate`] or its text (parsed by
/// [`Predicate::parse`] when the scan is planned).
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// An already built predicate.
    Predicate(Predicate),
    /// Text such as `k > 2 AND name IS NOT NULL`.
    Text(String),
}

impl From<Predicate> for Filter {
    fn from(p: Predicate) -> Self {
        Filter::Predicate(p)
    }
}

impl From<&str> for Filter {
    fn from(s: &str) -> Self {
        Filter::Text(s.to_string())
    }
}

impl From<String> for Filter {
    fn from(s: String) -> Self {
        Filter::Text(s)
    }
}

/// What a [`TableScan`] reads besides the snapshot: columns, filter, limit, batch size and
/// parallelism. Part of every `TableScan`; set through its `with_*` methods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadOptions {
    /// Output columns (`None`: every column of the read schema).
    pub projection: Option<Vec<String>>,
    /// Row filter.
    pub filter: Option<Filter>,
    /// Maximum rows returned.
    pub limit: Option<u64>,
    /// Rows per batch (0: [`paimon_kernel::read::DEFAULT_BATCH_SIZE`]).
    pub batch_size: usize,
    /// Splits (or independent parts of splits) read concurrently (0: the default, see the
    /// module docs).
    pub splits_in_flight: usize,
    /// Bytes of decoded batches that parts behind the one being consumed may hold (0: the
    /// default [`DEFAULT_READ_AHEAD_BYTES`]).
    pub read_ahead_bytes: usize,
    /// Data-file bytes the parts read concurrently may hold together; the first part always
    /// runs (0: the default [`DEFAULT_IN_FLIGHT_BYTES`]).
    pub in_flight_bytes: u64,
    /// Smallest independent part of an append split, in data-file bytes (`None`:
    /// [`paimon_kernel::read::MIN_PART_BYTES`]; `Some(0)`: one part per data file).
    pub min_part_bytes: Option<i64>,
    /// Row-range pushdown (row-tracking tables): only rows whose `_ROW_ID` lies in these
    /// inclusive ranges.
    pub row_ranges: Option<Vec<RowRange>>,
    /// `blob-as-descriptor`: blob columns return serialized blob descriptors (URI = table
    /// location + file path) instead of bytes.
    pub blob_as_descriptor: bool,
    /// Read every level, level 0 of first-row tables too (see
    /// [`paimon_kernel::scan::planner::ScanRequest::all_levels`]).
    pub all_levels: bool,
    /// `source.split.target-size` for this scan's plan, in bytes (`None`: the table's
    /// option, default 128 MiB).
    pub split_target_size: Option<u64>,
}

/// Default splits in flight: the available cores, clamped to 2..=4.
pub(crate) fn default_splits_in_flight() -> usize {
    cores().clamp(2, 4)
}

impl TableScan {
    /// Return only these columns, in this order. Names are fields of the read schema (the
    /// latest schema; the snapshot's for time travel); `_ROW_ID` and `_SEQUENCE_NUMBER` are
    /// allowed on row-tracking tables. An unknown name fails the read ([`Error::Kernel`] naming
    /// it and the columns).
    pub fn with_projection<I, S>(mut self, columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.read.projection = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Return only rows matching `filter` (a [`Predicate`] or its text, see
    /// [`Predicate::parse`]). The filter also prunes partitions and files when planning; on
    /// primary-key tables it applies to merged rows.
    pub fn with_filter(mut self, filter: impl Into<Filter>) -> Self {
        self.read.filter = Some(filter.into());
        self
    }

    /// Return at most `rows` rows (the first ones in split order).
    pub fn with_limit(mut self, rows: u64) -> Self {
        self.read.limit = Some(rows);
        self
    }

    /// Rows per output batch (0: [`paimon_kernel::read::DEFAULT_BATCH_SIZE`]). Batches may be
    /// smaller (end of a file or section, filtered rows).
    pub fn with_batch_size(mut self, rows: usize) -> Self {
        self.read.batch_size = rows;
        self
    }

    /// Read at most `splits` splits concurrently (0: the default, see the module docs; 1:
    /// one after the other).
    pub fn with_splits_in_flight(mut self, splits: usize) -> Self {
        self.read.splits_in_flight = splits;
        self
    }

    /// Let the parts read concurrently hold at most `bytes` of data files together (the first
    /// part always runs; 0: [`DEFAULT_IN_FLIGHT_BYTES`]); see the module docs.
    pub fn with_in_flight_bytes(mut self, bytes: u64) -> Self {
        self.read.in_flight_bytes = bytes;
        self
    }

    /// Let the parts read ahead of the one being consumed hold at most `bytes` of decoded
    /// batches together (0: [`DEFAULT_READ_AHEAD_BYTES`]); see the module docs.
    pub fn with_read_ahead_bytes(mut self, bytes: usize) -> Self {
        self.read.read_ahead_bytes = bytes;
        self
    }

    /// Cut append splits into independent parts of at least `bytes` of data files (0: one
    /// part per file; default [`paimon_kernel::read::MIN_PART_BYTES`]); see the module docs.
    pub fn with_min_part_bytes(mut self, bytes: i64) -> Self {
        self.read.min_part_bytes = Some(bytes);
        self
    }

    /// Plan splits of about `bytes` of data files (the dynamic option
    /// `source.split.target-size`, as Java's `ReadBuilder` takes it from the table's options;
    /// default 128 MiB). Smaller targets give more, smaller splits: what a distributed read
    /// (Ray, Daft) asks for when a table has fewer splits than workers. Files are never cut:
    /// an append split holds at least one data file, a primary-key split at least one
    /// section of overlapping sorted runs.
    pub fn with_split_target_size(mut self, bytes: u64) -> Self {
        self.read.split_target_size = Some(bytes);
        self
    }

    /// Return only rows whose `_ROW_ID` lies in `ranges` (inclusive, any order; row-tracking
    /// tables). Files holding none of them are not read.
    pub fn with_row_ranges(mut self, ranges: Vec<RowRange>) -> Self {
        self.read.row_ranges = Some(ranges);
        self
    }

    /// Return blob columns as serialized blob descriptors pointing into the `.blob` files
    /// (option `blob-as-descriptor`) instead of their bytes.
    pub fn with_blob_as_descriptor(mut self, on: bool) -> Self {
        self.read.blob_as_descriptor = on;
        self
    }

    /// Plan and read every level: level 0 of first-row (and deletion-vector) primary-key
    /// tables too, which a batch read skips (Java `withLevelFilter(level -> true)`).
    pub(crate) fn with_all_levels(mut self) -> Self {
        self.read.all_levels = true;
        self
    }

    /// The bytes of one blob: column `column` (a `BLOB` column of a data-evolution table) of
    /// the row with `_ROW_ID = row_id`, read with ranged reads only (the plan is restricted to
    /// that row; see [`paimon_kernel::read::evolution::read_blob_cell`]). `None` for a null
    /// blob.
    ///
    /// # Errors
    /// [`Error::Kernel`]: unknown column, a row id no file holds, a deleted row, corrupt files.
    pub async fn read_blob(&self, row_id: i64, column: &str) -> Result<Option<bytes::Bytes>> {
        let what = format!(
            "reading column '{column}' of row id {row_id} in {} of table {}",
            self.travel,
            self.table.location()
        );
        let range = RowRange::try_new(row_id, row_id).map_err(|e| Error::kernel(&what, e))?;
        let request = self.request(None).with_row_ranges(vec![range]);
        let column = column.to_string();
        self.table
            .host()
            .run_once(
                Machine::once("ReadBlob", move |io: Io<Option<bytes::Bytes>>| async move {
                    let plan = plan_scan(&io, &request).await?;
                    read_blob_cell(&io, &plan, row_id, &column).await
                })
                .describe(what),
            )
            .await
    }

    /// The read options set so far.
    pub fn read_options(&self) -> &ReadOptions {
        &self.read
    }

    /// The filter as a predicate.
    pub(crate) fn predicate(&self) -> Result<Option<Predicate>> {
        match &self.read.filter {
            None => Ok(None),
            Some(Filter::Predicate(p)) => Ok(Some(p.clone())),
            Some(Filter::Text(t)) => Predicate::parse(t)
                .map(Some)
                .map_err(|e| Error::kernel(self.reading(), e)),
        }
    }

    /// The core's scan request for this scan.
    fn request(&self, filter: Option<Predicate>) -> ScanRequest {
        let request = ScanRequest::default();
        let request = match &self.travel {
            TimeTravel::Latest => request,
            TimeTravel::SnapshotId(id) => request.with_snapshot_id(*id),
            TimeTravel::Tag(tag) => request.with_tag(tag),
            TimeTravel::TimestampMillis(t) => request.with_timestamp_millis(*t),
            TimeTravel::Version(v) => request.with_option("scan.version", v),
        };
        let request = match &self.read.row_ranges {
            Some(r) => request.with_row_ranges(r.clone()),
            None => request,
        };
        let request = match self.read.split_target_size {
            Some(bytes) => request.with_option(
                SOURCE_SPLIT_TARGET_SIZE,
                &bytes.clamp(1, i64::MAX as u64).to_string(),
            ),
            None => request,
        };
        let mut request = if self.read.blob_as_descriptor {
            request.with_option("blob-as-descriptor", "true")
        } else {
            request
        };
        request.all_levels = self.read.all_levels;
        match filter {
            Some(f) => request.with_filter(f),
            None => request,
        }
    }

    /// Plan the scan: the snapshot, its schema, the effective options and the splits (files
    /// that cannot match the filter are left out).
    ///
    /// # Errors
    /// [`Error::Kernel`]: a filter that does not parse, an unknown snapshot id or tag, a
    /// missing or corrupt metadata file (naming it).
    pub async fn plan(&self) -> Result<Plan> {
        self.plan_with(self.predicate()?).await
    }

    pub(crate) async fn plan_with(&self, filter: Option<Predicate>) -> Result<Plan> {
        let request = self.request(filter);
        self.table
            .run_machine(
                Machine::once("PlanScan", move |io: Io<Plan>| async move {
                    plan_scan(&io, &request).await
                })
                .describe(self.reading()),
            )
            .await
    }

    /// Plan the scan as [`TableScan::to_stream`] reads it: when the table's options set
    /// `scan.fallback-branch` (or `scan.primary-branch`), two plans, the first branch's and the
    /// second branch's splits of the partitions the first lacks; otherwise one plan and
    /// `None`. The second plan is also `None` when the other branch does not exist (Java logs
    /// an error and reads the scanned branch alone) or adds no partition.
    ///
    /// # Errors
    /// As [`TableScan::plan`] for either branch; `Invalid` when the two branches' row types
    /// differ (beyond nullability); `Unsupported` for a projection or filter when the
    /// branches name their columns differently.
    pub async fn plan_with_fallback(&self) -> Result<(Plan, Option<Plan>)> {
        let filter = self.predicate()?;
        let plan = self.plan_with(filter.clone()).await?;
        match self.branch_pair(plan, filter).await? {
            BranchPair::One(plan) => Ok((*plan, None)),
            BranchPair::Two { first, second } => {
                let second = Some(second.1).filter(|p| !p.splits.is_empty());
                Ok((first.1, second))
            }
        }
    }

    /// The branches a scan whose own plan is `plan` reads.
    ///
    /// Source: Java `FileStoreTableFactory.create` (wrapping with `scan.fallback-branch` /
    /// `scan.primary-branch`), `FallbackReadFileStoreTable` (`FallbackReadScan.plan`,
    /// `validateSchema`, `rewriteOtherOptions`). With `scan.fallback-branch = B` the scanned
    /// branch comes first, with `scan.primary-branch = B` (and no fallback branch) `B` comes
    /// first. Partitions with live files in the first branch are complete and read from it;
    /// the second branch's partitions that the first lacks are read from the second branch
    /// with its own schema. A snapshot id asked of the scanned branch is mapped to `B`'s
    /// snapshot committed at or before that snapshot's time (Java `earlierOrEqualTimeMills`);
    /// a tag is looked up in `B` too, and a tag `B` lacks adds nothing. As in Java, the
    /// options come from the scanned branch's latest schema also for time travel (one more
    /// schema read then; a read of the latest snapshot needs none).
    async fn branch_pair(&self, plan: Plan, filter: Option<Predicate>) -> Result<BranchPair> {
        // Java decides on the branch's latest schema, also for time travel (whose plan reads
        // with the snapshot's own schema): read it then.
        let latest_options = match self.travel {
            TimeTravel::Latest => None,
            _ => Some(self.table.schema().await?.options),
        };
        let options = latest_options.as_ref().unwrap_or(&plan.options);
        let option = |key: &str| {
            options
                .get(key)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let (name, scanned_first) =
            match (option(SCAN_FALLBACK_BRANCH), option(SCAN_PRIMARY_BRANCH)) {
                (Some(b), _) => (b, true),
                (None, Some(b)) => (b, false),
                (None, None) => return Ok(BranchPair::One(Box::new(plan))),
            };
        if name == self.table.branch() {
            return Ok(BranchPair::One(Box::new(plan)));
        }
        let Some(other_table) = self.table.try_branch(&name).await? else {
            return Ok(BranchPair::One(Box::new(plan)));
        };
        let travel = match (&self.travel, &plan.snapshot) {
            (TimeTravel::SnapshotId(_), Some(s)) => TimeTravel::TimestampMillis(s.time_millis),
            (t, _) => t.clone(),
        };
        // A tag the other branch lacks contributes nothing (as Java's reads show).
        if let TimeTravel::Tag(tag) = &travel {
            let path = tag_path(tag);
            let exists = other_table
                .run_machine(
                    Machine::once("BranchTagProbe", move |io: Io<bool>| async move {
                        Ok(io.head(&path).await?.is_some())
                    })
                    .describe(format!("looking for tag {tag} of branch {name}")),
                )
                .await?;
            if !exists {
                return Ok(BranchPair::One(Box::new(plan)));
            }
        }
        let other = TableScan {
            table: other_table,
            travel,
            read: self.read.clone(),
        };
        let other_plan = other.plan_with(filter.clone()).await?;
        let context = |e| Error::kernel(other.reading(), e);
        let (ours, theirs) = (&plan.schema.fields, &other_plan.schema.fields);
        if ours.len() != theirs.len()
            || ours
                .iter()
                .zip(theirs)
                .any(|(a, b)| a.data_type.kind != b.data_type.kind)
        {
            return Err(context(paimon_kernel::Error::invalid(format!(
                "branches {} and {name} do not have the same row type: a fallback or \
                 primary branch must have the scanned branch's columns",
                self.table.branch()
            ))));
        }
        let renamed = ours.iter().zip(theirs).any(|(a, b)| a.name != b.name);
        if renamed && (self.read.projection.is_some() || filter.is_some()) {
            return Err(context(paimon_kernel::Error::unsupported(format!(
                "a projection or filter on a table whose branch {name} names its columns \
                 differently"
            ))));
        }
        let (first, mut second) = if scanned_first {
            ((self.clone(), plan), (other, other_plan))
        } else {
            ((other, other_plan), (self.clone(), plan))
        };
        // Partitions present in the first branch (any live file, whatever the filter: a
        // filtered partition of the first branch is still complete there).
        let mut complete: BTreeSet<Vec<u8>> = BTreeSet::new();
        if let Some(snapshot) = first.1.snapshot.clone() {
            let entries = first
                .0
                .table
                .run_machine(
                    Machine::once(
                        "FallbackPartitions",
                        move |io: Io<Vec<ManifestEntry>>| async move {
                            read_live_entries(&io, &snapshot).await
                        },
                    )
                    .describe(format!("listing the partitions of {}", first.0.reading())),
                )
                .await?;
            complete.extend(entries.iter().map(|e| e.partition.row_bytes().to_vec()));
        }
        second
            .1
            .splits
            .retain(|s| !complete.contains(s.partition.row_bytes()));
        Ok(BranchPair::Two {
            first: Box::new(first),
            second: Box::new(second),
        })
    }

    /// Stream the rows of `plan` (this scan's reading options).
    pub(crate) fn stream_plan(
        &self,
        plan: Plan,
        filter: Option<&Predicate>,
    ) -> Result<RecordBatchStream> {
        let ctx = ReadContext::try_new(
            &plan,
            self.read.projection.as_deref(),
            filter,
            self.read.limit,
            self.read.batch_size,
        )
        .map_err(|e| Error::kernel(self.reading(), e))?
        .with_blob_descriptor_uri_prefix(format!(
            "{}/",
            self.table.location().trim_end_matches('/')
        ));
        let in_flight = match self.read.splits_in_flight {
            0 => default_splits_in_flight(),
            n => n,
        };
        let read_ahead = match self.read.read_ahead_bytes {
            0 => DEFAULT_READ_AHEAD_BYTES,
            n => n,
        };
        let in_flight_bytes = match self.read.in_flight_bytes {
            0 => DEFAULT_IN_FLIGHT_BYTES,
            n => n,
        };
        Ok(stream_splits(
            self.table.host().clone(),
            Arc::new(ctx),
            plan.splits,
            in_flight,
            in_flight_bytes,
            read_ahead,
            self.read
                .min_part_bytes
                .unwrap_or(paimon_kernel::read::MIN_PART_BYTES),
        ))
    }

    /// Stream the rows of `plan` (or of some of its splits: a plan whose `splits` were
    /// narrowed, e.g. one split shipped to a worker) with this scan's projection, filter,
    /// limit and parallelism. The scan's time travel and branch are not used: the plan says
    /// what to read. Files are read from this scan's table location.
    ///
    /// # Errors
    /// As [`TableScan::to_stream`] (an unknown column, a filter that does not parse or names
    /// an unknown column); items fail naming the data file that is missing or corrupt.
    pub fn read_plan(&self, plan: Plan) -> Result<RecordBatchStream> {
        let filter = self.predicate()?;
        self.stream_plan(plan, filter.as_ref())
    }

    /// Plan the scan and stream its rows as Arrow record batches of
    /// [`RecordBatchStream::schema`] (see the module docs for order, memory and limit).
    ///
    /// # Errors
    /// As [`TableScan::plan`], plus an unknown column or a filter naming one (`Invalid`).
    /// Items of the stream fail with [`Error::Kernel`] naming the data file that is missing
    /// or corrupt; the stream ends after its first error.
    pub async fn to_stream(&self) -> Result<RecordBatchStream> {
        let filter = self.predicate()?;
        let plan = self.plan_with(filter.clone()).await?;
        let (first, (scan, plan)) = match self.branch_pair(plan, filter.clone()).await? {
            BranchPair::One(plan) => return self.stream_plan(*plan, filter.as_ref()),
            BranchPair::Two { first, second } => (*first, *second),
        };
        let main = first.0.stream_plan(first.1, filter.as_ref())?;
        // The second branch's rows follow, under the first branch's column names.
        let schema = main.schema();
        let rest = scan.stream_plan(plan, filter.as_ref())?;
        let reading = scan.reading();
        let out = Arc::clone(&schema);
        let rest = rest.map(move |batch| {
            let batch = batch?;
            RecordBatch::try_new(Arc::clone(&out), batch.columns().to_vec()).map_err(|e| {
                Error::kernel(
                    reading.clone(),
                    paimon_kernel::Error::invalid(format!(
                        "the second branch's rows do not fit the first branch's columns: {e}"
                    )),
                )
            })
        });
        // One limit over both parts; the stream ends after its first error.
        let limit = self.read.limit;
        let inner = main
            .inner
            .chain(rest)
            .scan((0u64, false), move |(seen, failed), batch| {
                if *failed || limit.is_some_and(|l| *seen >= l) {
                    return std::future::ready(None);
                }
                let item = match batch {
                    Ok(b) => {
                        let rows = b.num_rows() as u64;
                        let keep = limit.map_or(rows, |l| rows.min(l - *seen));
                        *seen += keep;
                        Ok(if keep == rows {
                            b
                        } else {
                            b.slice(0, keep as usize)
                        })
                    }
                    Err(e) => {
                        *failed = true;
                        Err(e)
                    }
                };
                std::future::ready(Some(item))
            });
        Ok(RecordBatchStream {
            schema,
            inner: Box::pin(inner),
        })
    }

    /// Read the rows of each split of the plan separately (no limit, no fallback branch):
    /// (split, its batches), in split order. The global key index of a cross-partition
    /// write is bootstrapped from this (each split is one partition and bucket).
    ///
    /// # Errors
    /// As [`TableScan::to_batches`].
    pub(crate) async fn batches_by_split(
        &self,
    ) -> Result<Vec<(paimon_kernel::scan::planner::DataSplit, Vec<RecordBatch>)>> {
        use futures::TryStreamExt;
        let filter = self.predicate()?;
        let plan = self.plan_with(filter.clone()).await?;
        let mut out = Vec::with_capacity(plan.splits.len());
        for split in &plan.splits {
            let mut one = plan.clone();
            one.splits = vec![split.clone()];
            let batches: Vec<RecordBatch> = self
                .stream_plan(one, filter.as_ref())?
                .try_collect()
                .await?;
            out.push((split.clone(), batches));
        }
        Ok(out)
    }

    /// Read every row into memory (see [`TableScan::to_stream`]).
    ///
    /// # Errors
    /// As [`TableScan::to_stream`] and its items.
    pub async fn to_batches(&self) -> Result<Vec<RecordBatch>> {
        use futures::TryStreamExt;
        self.to_stream().await?.try_collect().await
    }
}

impl crate::table::Table {
    /// A plan of the one split `split` (e.g. decoded from Java's `DataSplit` bytes, which carry
    /// no schema) read with this table's latest schema, as Java's `TableRead` of the table
    /// reads a split: the schemas its files were written with are read by id. Read it with
    /// [`TableScan::read_plan`].
    ///
    /// # Errors
    /// [`Error::Kernel`] when a schema is missing or corrupt.
    pub async fn plan_for_split(&self, split: DataSplit) -> Result<Plan> {
        let schema = self.schema().await?;
        let mut ids: Vec<i64> = split.data_files.iter().map(|f| f.schema_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut schemas = std::collections::BTreeMap::new();
        for id in ids {
            if id == schema.id {
                continue;
            }
            schemas.insert(id, self.schema_by_id(id).await?);
        }
        schemas.insert(schema.id, schema.clone());
        let table_kind = paimon_kernel::scan::TableKind::of(&schema).map_err(|e| {
            Error::kernel(format!("reading a split of table {}", self.location()), e)
        })?;
        let snapshot = self.snapshot(split.snapshot_id).await.ok();
        Ok(Plan {
            snapshot,
            options: schema.options.clone(),
            schema,
            schemas,
            table_kind,
            splits: vec![split],
            row_ranges: None,
            pruned: Default::default(),
        })
    }

    /// The table root as Java names it in split bytes: `file:/path` for a local table, the URL
    /// otherwise.
    pub fn java_root(&self) -> String {
        let url = self.location().trim_end_matches('/');
        match url.strip_prefix("file://") {
            Some(rest) => format!("file:{rest}"),
            None => url.to_string(),
        }
    }
}

/// The branches one scan reads (see [`TableScan::branch_pair`]).
enum BranchPair {
    /// The scanned branch alone.
    One(Box<Plan>),
    /// Two branches: the first's plan, then the second's splits of the partitions the first
    /// lacks; each with the scan (branch, time travel) that planned it.
    Two {
        first: Box<(TableScan, Plan)>,
        second: Box<(TableScan, Plan)>,
    },
}

/// Record batches of one read, in split order, with their schema known up front (also when
/// there are no rows). A [`Stream`] of `Result<RecordBatch>`.
pub struct RecordBatchStream {
    schema: SchemaRef,
    inner: BoxStream<'static, Result<RecordBatch>>,
}

impl std::fmt::Debug for RecordBatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordBatchStream")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl RecordBatchStream {
    /// A stream of `inner`'s batches, all of `schema`.
    #[cfg(feature = "sql")]
    pub(crate) fn from_parts(
        schema: SchemaRef,
        inner: BoxStream<'static, Result<RecordBatch>>,
    ) -> Self {
        RecordBatchStream { schema, inner }
    }

    /// The Arrow schema of every batch (projection applied).
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

impl Stream for RecordBatchStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// A queued batch and the bytes it was admitted with.
type Queued = Result<(RecordBatch, usize)>;

/// Read-ahead accounting shared by the consumer and every running part.
#[derive(Debug)]
struct Flow {
    /// Bytes of decoded batches queued in all parts, not yet taken by the consumer.
    buffered: AtomicUsize,
    /// Limit on `buffered` for parts other than the front one.
    budget: usize,
    /// Woken whenever the consumer takes a batch or the front part changes.
    changed: Notify,
}

/// Per-part state shared with its task.
#[derive(Debug, Default)]
struct PartShared {
    /// Batches queued, not yet taken.
    queued: AtomicUsize,
    /// Whether the consumer is reading this part now.
    front: AtomicBool,
}

impl Flow {
    /// Wait until `part` may queue a batch of `bytes`: the front part may hold
    /// [`SPLIT_QUEUE_BATCHES`] batches, the others share [`ReadOptions::read_ahead_bytes`].
    async fn admit(&self, part: &PartShared, bytes: usize) {
        loop {
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            let room = if part.front.load(Ordering::Acquire) {
                part.queued.load(Ordering::Acquire) < SPLIT_QUEUE_BATCHES
            } else {
                self.buffered.load(Ordering::Acquire).saturating_add(bytes) <= self.budget
            };
            if room {
                break;
            }
            changed.await;
        }
        self.buffered.fetch_add(bytes, Ordering::AcqRel);
        part.queued.fetch_add(1, Ordering::AcqRel);
    }

    /// The consumer took a batch of `bytes` from `part`.
    fn taken(&self, part: &PartShared, bytes: usize) {
        self.buffered.fetch_sub(bytes, Ordering::AcqRel);
        part.queued.fetch_sub(1, Ordering::AcqRel);
        self.changed.notify_waiters();
    }
}

/// A running part: its batches arrive on `rx`; the task is aborted when this is dropped.
struct RunningPart {
    /// Data-file bytes of the part ([`part_bytes`]).
    bytes: u64,
    rx: mpsc::UnboundedReceiver<Queued>,
    shared: Arc<PartShared>,
    task: JoinHandle<()>,
}

impl Drop for RunningPart {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// State of a part-ordered, bounded-parallel read.
struct ReadState {
    host: ObjectStoreHost,
    ctx: Arc<ReadContext>,
    flow: Arc<Flow>,
    /// Splits not yet cut into parts.
    splits: std::vec::IntoIter<DataSplit>,
    /// Parts of the current split not yet started.
    waiting: VecDeque<DataSplit>,
    running: VecDeque<RunningPart>,
    in_flight: usize,
    /// Data-file bytes the running parts may hold together (see [`admit_part`]).
    in_flight_bytes: u64,
    /// Smallest part cut from an append split (data-file bytes).
    min_part_bytes: i64,
    /// Rows still allowed (`None`: no limit).
    remaining: Option<u64>,
    finished: bool,
}

impl ReadState {
    fn next_part(&mut self) -> Option<DataSplit> {
        loop {
            if let Some(part) = self.waiting.pop_front() {
                return Some(part);
            }
            let split = self.splits.next()?;
            self.waiting = independent_parts(&self.ctx, split, self.min_part_bytes).into();
        }
    }

    fn start_parts(&mut self) {
        while self.running.len() < self.in_flight {
            let Some(part) = self.next_part() else {
                return;
            };
            let bytes = part_bytes(&part);
            let running_bytes: u64 = self.running.iter().map(|p| p.bytes).sum();
            if !admit_part(
                self.running.len(),
                running_bytes,
                bytes,
                self.in_flight_bytes,
            ) {
                self.waiting.push_front(part);
                return;
            }
            let (tx, rx) = mpsc::unbounded_channel();
            let shared = Arc::new(PartShared::default());
            if self.running.is_empty() {
                shared.front.store(true, Ordering::Release);
            }
            let task = tokio::spawn(drive_split(
                self.host.clone(),
                Arc::clone(&self.ctx),
                part,
                Sender {
                    tx,
                    flow: Arc::clone(&self.flow),
                    part: Arc::clone(&shared),
                },
            ));
            self.running.push_back(RunningPart {
                bytes,
                rx,
                shared,
                task,
            });
        }
    }

    /// The next batch in part order, `None` at the end (or once the limit is reached).
    async fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if self.finished || self.remaining == Some(0) {
                self.finish();
                return None;
            }
            self.start_parts();
            let front = self.running.front_mut()?;
            match front.rx.recv().await {
                Some(Ok((batch, bytes))) => {
                    self.flow.taken(&front.shared, bytes);
                    let batch = match self.remaining {
                        Some(left) if (batch.num_rows() as u64) >= left => {
                            // `left < num_rows` fits in usize.
                            self.remaining = Some(0);
                            batch.slice(0, usize::try_from(left).unwrap_or(batch.num_rows()))
                        }
                        Some(left) => {
                            self.remaining = Some(left - batch.num_rows() as u64);
                            batch
                        }
                        None => batch,
                    };
                    if batch.num_rows() == 0 {
                        continue;
                    }
                    return Some(Ok(batch));
                }
                Some(Err(e)) => {
                    self.finish();
                    return Some(Err(e));
                }
                None => {
                    self.running.pop_front();
                    if let Some(next) = self.running.front() {
                        next.shared.front.store(true, Ordering::Release);
                        self.flow.changed.notify_waiters();
                    }
                }
            }
        }
    }

    /// Stop: cancel running parts, never start the others.
    fn finish(&mut self) {
        self.finished = true;
        self.running.clear();
        self.waiting.clear();
        self.splits = Vec::new().into_iter();
    }
}

/// Stream `splits` through `read_split` machines (one per independent part), `in_flight` at a
/// time, in order, reading ahead at most `read_ahead_bytes` beyond the front part.
fn stream_splits(
    host: ObjectStoreHost,
    ctx: Arc<ReadContext>,
    splits: Vec<DataSplit>,
    in_flight: usize,
    in_flight_bytes: u64,
    read_ahead_bytes: usize,
    min_part_bytes: i64,
) -> RecordBatchStream {
    let schema = Arc::clone(&ctx.output_schema);
    let state = ReadState {
        host,
        remaining: ctx.limit,
        ctx,
        flow: Arc::new(Flow {
            buffered: AtomicUsize::new(0),
            budget: read_ahead_bytes,
            changed: Notify::new(),
        }),
        splits: splits.into_iter(),
        waiting: VecDeque::new(),
        running: VecDeque::new(),
        in_flight: in_flight.max(1),
        in_flight_bytes,
        min_part_bytes,
        finished: false,
    };
    let inner = futures::stream::unfold(state, |mut state| async move {
        let item = state.next_batch().await?;
        Some((item, state))
    });
    RecordBatchStream {
        schema,
        inner: Box::pin(inner),
    }
}

/// Data-file bytes of a part (sum of `DataFileMeta::file_size`).
fn part_bytes(part: &DataSplit) -> u64 {
    part.data_files
        .iter()
        .map(|f| u64::try_from(f.file_size).unwrap_or(0))
        .sum()
}

/// Whether a part of `bytes` data-file bytes may start while `running` parts of
/// `running_bytes` run: the first always, the others only while all of them together stay
/// within `budget` bytes. Large files are decoded on several cores each (column groups), so a
/// second large part mostly adds memory; small parts run side by side to overlap their IO.
fn admit_part(running: usize, running_bytes: u64, bytes: u64, budget: u64) -> bool {
    running == 0 || running_bytes.saturating_add(bytes) <= budget
}

/// The sending side of a running part.
struct Sender {
    tx: mpsc::UnboundedSender<Queued>,
    flow: Arc<Flow>,
    part: Arc<PartShared>,
}

impl Sender {
    /// Queue `batch` once the read-ahead rules allow; `false` when the consumer is gone.
    async fn send(&self, batch: RecordBatch) -> bool {
        let bytes = batch.get_array_memory_size();
        self.flow.admit(&self.part, bytes).await;
        self.tx.send(Ok((batch, bytes))).is_ok()
    }
}

/// Drive one split's machine, sending its batches to `tx`; a failure is sent as the last item.
/// Ends early (without error) when the receiver is gone.
async fn drive_split(host: ObjectStoreHost, ctx: Arc<ReadContext>, split: DataSplit, tx: Sender) {
    let context = format!(
        "reading {} of snapshot {} of table {}",
        split.bucket_path.trim_end_matches('/'),
        split.snapshot_id,
        host.url()
    );
    let machine = read_split(ctx, split).with_parallelism(cores());
    if let Err(e) = drive_machine(&host, machine, &tx).await {
        let e = match e {
            DriveError::Kernel(e) => Error::kernel(context, e),
            DriveError::Task(detail) => Error::Task {
                machine: context,
                detail,
            },
            DriveError::Closed => return,
        };
        let _ = tx.tx.send(Err(e));
    }
}

/// The outcome of one work item: `Err` when it panicked (or its thread went away).
fn work_done(
    done: std::result::Result<Option<String>, oneshot::error::RecvError>,
) -> std::result::Result<(), DriveError> {
    match done {
        Ok(None) => Ok(()),
        Ok(Some(panic)) => Err(DriveError::Task(format!("decoding panicked: {panic}"))),
        Err(_) => Err(DriveError::Task("a decoding task went away".into())),
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

enum DriveError {
    Kernel(paimon_kernel::Error),
    Task(String),
    /// The consumer is gone.
    Closed,
}

async fn drive_machine(
    host: &ObjectStoreHost,
    mut machine: Machine<RecordBatch>,
    tx: &Sender,
) -> std::result::Result<(), DriveError> {
    // Work items handed out by the machine, running on the rayon pool.
    let mut running: FuturesUnordered<oneshot::Receiver<Option<String>>> = FuturesUnordered::new();
    loop {
        // Reap finished work (a panic in one is an error of the read).
        while let Some(Some(done)) = running.next().now_or_never() {
            work_done(done)?;
        }
        // The step decodes and merges: CPU work, run right here on this task's worker (a
        // hand-off to the blocking pool per step cost 5-7 % of the CPU and as much wall time
        // on two cores; the heavy decoding is handed out as work items anyway). A panic in it
        // is an error of the read, as one in a work item is.
        let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| machine.step()))
            .map_err(|p| DriveError::Task(format!("reading panicked: {}", panic_message(&*p))))?;
        match step.map_err(DriveError::Kernel)? {
            Step::NeedIo(round) => {
                for (id, answer) in host.answer_round(round).await {
                    machine.provide(id, answer).map_err(DriveError::Kernel)?;
                }
            }
            Step::Emit(batch) => {
                if !tx.send(batch).await {
                    return Err(DriveError::Closed);
                }
            }
            Step::Work(items) => {
                for item in items {
                    let (tx, rx) = oneshot::channel();
                    rayon::spawn(move || {
                        let run =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| item.run()));
                        let _ = tx.send(run.err().map(|p| panic_message(&p)));
                    });
                    running.push(rx);
                }
            }
            Step::Wait => match running.next().await {
                Some(done) => work_done(done)?,
                None => {
                    return Err(DriveError::Kernel(paimon_kernel::Error::Protocol {
                        detail: "the read waits for CPU work, but none is running".into(),
                    }));
                }
            },
            Step::Done => return Ok(()),
        }
    }
}

#[cfg(test)]
mod admission_tests {
    use super::admit_part;

    #[test]
    fn parts_beyond_the_first_start_within_the_byte_budget() {
        let mib = 1u64 << 20;
        // The first part runs whatever its size.
        assert!(admit_part(0, 0, 100 * mib, 16 * mib));
        // A second large part waits; small ones join while the total fits.
        assert!(!admit_part(1, 17 * mib, 17 * mib, 16 * mib));
        assert!(admit_part(1, 7 * mib, 9 * mib, 16 * mib));
        assert!(!admit_part(1, 7 * mib, 9 * mib + 1, 16 * mib));
        assert!(admit_part(3, 3 * mib, mib, 16 * mib));
    }
}
