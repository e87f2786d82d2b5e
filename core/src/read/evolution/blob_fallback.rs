//! Blob fallback: reading one blob bunch (all `.blob` files of one field in one row-id group)
//! across sequence layers.
//!
//! Files of a bunch that share a `max_sequence_number` form a **layer**; files must not overlap
//! within a layer but overlap across layers. A newer layer may cover only part of the range and
//! may hold placeholder entries (`-2`, "not updated here"). Each output row takes the newest
//! layer's entry that is not a placeholder (an explicit null wins); a row that is a placeholder
//! (or a gap) in every layer reads as a null blob with `_SEQUENCE_NUMBER = -1`. Resolved rows
//! report `_ROW_ID = first_row_id + position` and their file's `max_sequence_number`.
//!
//! The work is split in three pure steps and one async driver:
//!
//! 1. [`BlobFallbackPlanner`] (no IO) validates the files and yields [`BlobWindowPlan`]s of at
//!    most `batch_size` output rows: for every output row id and every layer (newest first),
//!    which file and row index holds it, or a gap. All layers step through the same row ids, so
//!    they stay aligned; row-range pushdown applies to every layer, gaps included. A bunch with a
//!    single layer takes the plain concatenating fast path (only rows that files hold, no gap
//!    padding, placeholders pass through to the caller's [`PlaceholderPolicy`]).
//! 2. [`resolve_window`] (no IO) picks the winning entry of every row from the files' index
//!    entries (which are known without reading any payload).
//! 3. [`assemble_window`] (no IO) builds the output column plus `_ROW_ID` and
//!    `_SEQUENCE_NUMBER` from the decoded rows of the winning files.
//! 4. [`BlobBunchReader::next_batch`] drives 1–3 over an [`Io`]: one round for the indexes of
//!    newly touched files, one round for the winning records. Only winning rows are read; older
//!    layers' records under a resolved row are never fetched. Memory is one window of values plus
//!    the indexes of the files the window touches.
//!
//! Deletion vectors are not applied here (the caller filters rows by row id).
//!
//! Source: Java `org.apache.paimon.operation.BlobFallbackRecordReader`,
//! `org.apache.paimon.operation.AllPlaceholdersRecordReader`,
//! `org.apache.paimon.operation.DataEvolutionSplitRead` (blob bunches); spec
//! `blob-fallback.md`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, new_null_array};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder};
use futures_util::future::try_join_all;

use crate::error::{Error, Result};
use crate::format::blob::{
    BlobElementKind, BlobEntry, BlobFileIndex, BlobReadOptions, BlobRows, BlobValueMode,
    PlaceholderPolicy, read_blob_index, read_blob_rows,
};
use crate::io::Io;
use crate::spec::DataFileMeta;
use crate::spec::row_range::{RowRange, intersect_sorted, sort_and_merge};

/// `_SEQUENCE_NUMBER` reported for rows that are a placeholder in every layer.
pub const ALL_PLACEHOLDER_SEQUENCE_NUMBER: i64 = -1;

/// The metadata of one `.blob` file that the fallback needs (a subset of the manifest's
/// `DataFileMeta`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobFileRef {
    /// Path of the file, as the host reads it.
    pub path: String,
    /// File size in bytes (`DataFileMeta.file_size`; locates the footer).
    pub file_size: u64,
    /// `_ROW_ID` of the file's first row.
    pub first_row_id: i64,
    /// Number of rows (index entries).
    pub row_count: u64,
    /// `max_sequence_number`: the layer key and the `_SEQUENCE_NUMBER` of its rows.
    pub max_sequence_number: i64,
    /// Schema id the file was written with (not used for matching: layers of different schema
    /// ids read together as long as `write_cols` agree).
    pub schema_id: i64,
    /// `write_cols` (for a `.blob` file: the blob column); all files of a bunch must agree.
    pub write_cols: Option<Vec<String>>,
}

impl BlobFileRef {
    /// The fallback's view of a manifest data file `meta` read from `path` (usually
    /// [`DataFileMeta::path_in_bucket`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the file when it has no `first_row_id` or a negative size or
    /// row count.
    pub fn try_from_data_file(meta: &DataFileMeta, path: impl Into<String>) -> Result<Self> {
        let path = path.into();
        let bad = |what: &str| Error::invalid(format!("blob file {path} {what}"));
        Ok(BlobFileRef {
            file_size: u64::try_from(meta.file_size).map_err(|_| bad("has a negative size"))?,
            first_row_id: meta
                .first_row_id
                .ok_or_else(|| bad("has no first_row_id (row tracking is required)"))?,
            row_count: u64::try_from(meta.row_count)
                .map_err(|_| bad("has a negative row count"))?,
            max_sequence_number: meta.max_sequence_number,
            schema_id: meta.schema_id,
            write_cols: meta.write_cols.clone(),
            path,
        })
    }

    /// The file's row-id range.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the file when `row_count` is 0 or the range overflows.
    pub fn row_range(&self) -> Result<RowRange> {
        RowRange::of_file(self.first_row_id, self.row_count, &self.path)
    }
}

/// Where one layer holds one output row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobSlot {
    /// No file of this layer covers the row: it acts as a placeholder.
    Gap,
    /// Row `row` (0-based position) of file `file` (index into the planner's files).
    File {
        /// Index into [`BlobFallbackPlanner::files`].
        file: usize,
        /// Row position inside the file.
        row: u64,
    },
}

/// One layer's slots for the rows of a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobLayerWindow {
    /// The layer's `max_sequence_number`.
    pub max_sequence_number: i64,
    /// One slot per output row of the window.
    pub slots: Vec<BlobSlot>,
}

/// The plan of one output batch: its row ids and, per layer (newest first), where each row
/// lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobWindowPlan {
    /// Output row ids, ascending.
    pub row_ids: Vec<i64>,
    /// Layers, newest (largest `max_sequence_number`) first.
    pub layers: Vec<BlobLayerWindow>,
}

impl BlobWindowPlan {
    /// Number of output rows.
    pub fn len(&self) -> usize {
        self.row_ids.len()
    }

    /// True if the window has no rows.
    pub fn is_empty(&self) -> bool {
        self.row_ids.is_empty()
    }

    /// Every file the window touches, with its rows (ascending), over all layers.
    pub fn file_rows(&self) -> BTreeMap<usize, Vec<u64>> {
        let mut out: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
        for l in &self.layers {
            for s in &l.slots {
                if let BlobSlot::File { file, row } = *s {
                    out.entry(file).or_default().push(row);
                }
            }
        }
        out
    }
}

#[derive(Debug, Clone)]
struct Layer {
    max_sequence_number: i64,
    /// File indexes sorted by first row id.
    files: Vec<usize>,
}

/// Validates a blob bunch and plans its read window by window (pure, no IO).
#[derive(Debug, Clone)]
pub struct BlobFallbackPlanner {
    files: Vec<BlobFileRef>,
    ranges: Vec<RowRange>,
    layers: Vec<Layer>,
    emit: Vec<RowRange>,
    cursor: Option<(usize, i64)>,
    batch_size: usize,
}

impl BlobFallbackPlanner {
    /// Plan the bunch `files`, restricted to `row_ranges` when given (any order; they are
    /// sorted and merged), in windows of at most `batch_size` rows.
    ///
    /// Output rows: with several layers, every row id of `[min first_row_id, max last row id]`
    /// (∩ `row_ranges`); with one layer (fast path), the row ids its files hold (∩
    /// `row_ranges`).
    ///
    /// # Errors
    /// [`Error::Invalid`] for no files, `batch_size` 0, a file without rows, files with
    /// different `write_cols` (naming both), or two files of one layer whose row-id ranges
    /// overlap (naming both files, their ranges and the layer's sequence number).
    pub fn try_new(
        files: Vec<BlobFileRef>,
        row_ranges: Option<&[RowRange]>,
        batch_size: usize,
    ) -> Result<Self> {
        if batch_size == 0 {
            return Err(Error::invalid("blob bunch batch size must be at least 1"));
        }
        let Some(first) = files.first() else {
            return Err(Error::invalid("a blob bunch needs at least one file"));
        };
        for f in &files[1..] {
            if f.write_cols != first.write_cols {
                return Err(Error::invalid(format!(
                    "All files in this bunch should have the same write columns: {} has {:?}, {} has {:?}",
                    first.path, first.write_cols, f.path, f.write_cols
                )));
            }
        }
        let ranges = files
            .iter()
            .map(BlobFileRef::row_range)
            .collect::<Result<Vec<_>>>()?;
        // Layers by max_sequence_number, newest first.
        let mut by_seq: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (i, f) in files.iter().enumerate() {
            by_seq.entry(f.max_sequence_number).or_default().push(i);
        }
        let mut layers = Vec::with_capacity(by_seq.len());
        for (seq, mut members) in by_seq.into_iter().rev() {
            members.sort_by_key(|&i| (ranges[i].from, ranges[i].to));
            for w in members.windows(2) {
                let (a, b) = (w[0], w[1]);
                if ranges[a].to >= ranges[b].from {
                    return Err(Error::invalid(format!(
                        "Blob files within a same max_seq_num should not overlap: {} {} and {} {} (max_sequence_number {seq})",
                        files[a].path, ranges[a], files[b].path, ranges[b]
                    )));
                }
            }
            layers.push(Layer {
                max_sequence_number: seq,
                files: members,
            });
        }
        let covered = if layers.len() == 1 {
            sort_and_merge(&ranges)
        } else {
            let from = ranges.iter().map(|r| r.from).min().unwrap_or_default();
            let to = ranges.iter().map(|r| r.to).max().unwrap_or_default();
            vec![RowRange { from, to }]
        };
        let emit = match row_ranges {
            Some(rr) => intersect_sorted(&covered, &sort_and_merge(rr)),
            None => covered,
        };
        let cursor = emit.first().map(|r| (0, r.from));
        Ok(BlobFallbackPlanner {
            files,
            ranges,
            layers,
            emit,
            cursor,
            batch_size,
        })
    }

    /// The files, in input order (plans refer to them by index).
    pub fn files(&self) -> &[BlobFileRef] {
        &self.files
    }

    /// The layers as `(max_sequence_number, file indexes sorted by first row id)`, newest
    /// first.
    pub fn layers(&self) -> Vec<(i64, Vec<usize>)> {
        self.layers
            .iter()
            .map(|l| (l.max_sequence_number, l.files.clone()))
            .collect()
    }

    /// True for the single-layer fast path.
    pub fn is_single_layer(&self) -> bool {
        self.layers.len() == 1
    }

    /// The output row ids as sorted, merged ranges.
    pub fn output_ranges(&self) -> &[RowRange] {
        &self.emit
    }

    /// Total number of output rows.
    pub fn row_count(&self) -> u64 {
        self.emit.iter().map(RowRange::count).sum()
    }

    /// The next window, `None` when every output row was planned.
    pub fn next_window(&mut self) -> Option<BlobWindowPlan> {
        let (mut ri, mut next) = self.cursor?;
        let mut row_ids = Vec::with_capacity(self.batch_size);
        while row_ids.len() < self.batch_size {
            let Some(r) = self.emit.get(ri) else { break };
            let room = (self.batch_size - row_ids.len()) as i64;
            let last = r.to.min(next.saturating_add(room - 1));
            row_ids.extend(next..=last);
            if last == r.to {
                ri += 1;
                match self.emit.get(ri) {
                    Some(n) => next = n.from,
                    None => break,
                }
            } else {
                next = last + 1;
            }
        }
        self.cursor = self.emit.get(ri).map(|_| (ri, next));
        let layers = self
            .layers
            .iter()
            .map(|l| {
                let mut k = 0usize;
                let slots = row_ids
                    .iter()
                    .map(|&rid| {
                        while k < l.files.len() && self.ranges[l.files[k]].to < rid {
                            k += 1;
                        }
                        match l.files.get(k) {
                            Some(&f) if self.ranges[f].from <= rid => BlobSlot::File {
                                file: f,
                                row: (rid - self.ranges[f].from) as u64,
                            },
                            _ => BlobSlot::Gap,
                        }
                    })
                    .collect();
                BlobLayerWindow {
                    max_sequence_number: l.max_sequence_number,
                    slots,
                }
            })
            .collect();
        Some(BlobWindowPlan { row_ids, layers })
    }
}

/// The winner of one output row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobResolution {
    /// The row's value is entry `row` of file `file` (a record or an explicit null; in the
    /// single-layer fast path possibly a placeholder).
    Entry {
        /// Index into the planner's files.
        file: usize,
        /// Row position inside the file.
        row: u64,
    },
    /// Every layer has a placeholder or a gap here: a null blob with `_SEQUENCE_NUMBER` -1.
    AllPlaceholder,
}

/// Resolve every row of `plan`: walk the layers newest first and take the first slot whose
/// entry is not a placeholder (gaps count as placeholders; a null entry wins). With a single
/// layer, every file entry wins as it is (placeholders included: no fallback is possible).
///
/// `entry(file, row)` returns the index entry of a file row (from its [`BlobFileIndex`]).
///
/// # Errors
/// Whatever `entry` returns.
pub fn resolve_window(
    plan: &BlobWindowPlan,
    mut entry: impl FnMut(usize, u64) -> Result<BlobEntry>,
) -> Result<Vec<BlobResolution>> {
    let single = plan.layers.len() == 1;
    let mut out = Vec::with_capacity(plan.len());
    for i in 0..plan.len() {
        let mut res = BlobResolution::AllPlaceholder;
        for l in &plan.layers {
            let Some(BlobSlot::File { file, row }) = l.slots.get(i).copied() else {
                continue;
            };
            if single || entry(file, row)? != BlobEntry::Placeholder {
                res = BlobResolution::Entry { file, row };
                break;
            }
        }
        out.push(res);
    }
    Ok(out)
}

/// The rows each file must decode for `resolutions` (ascending per file).
pub fn winning_rows(resolutions: &[BlobResolution]) -> BTreeMap<usize, Vec<u64>> {
    let mut out: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for r in resolutions {
        if let BlobResolution::Entry { file, row } = *r {
            out.entry(file).or_default().push(row);
        }
    }
    out
}

/// One output batch of a blob bunch.
#[derive(Debug, Clone)]
pub struct BlobBunchBatch {
    /// The blob column ([`BlobElementKind::arrow_type`]: `LargeBinary` for `BLOB`), null for
    /// null and all-placeholder rows.
    pub values: ArrayRef,
    /// `_ROW_ID` of every row (never null).
    pub row_ids: Int64Array,
    /// `_SEQUENCE_NUMBER` of every row: the winning file's `max_sequence_number`, or -1 for
    /// all-placeholder rows (never null).
    pub sequence_numbers: Int64Array,
    /// Single-layer fast path under [`PlaceholderPolicy::Mask`] only: the rows that are
    /// placeholders (bit set), when there is at least one.
    pub placeholders: Option<BooleanBuffer>,
}

/// Build the output batch of a window from its `resolutions` and the `decoded` rows of the
/// winning files (`decoded[file]` must contain every winning row of `file`, e.g. read with
/// [`winning_rows`] as the selection).
///
/// # Errors
/// [`Error::Invalid`] when a winning row is missing from `decoded`, or is a placeholder under
/// [`PlaceholderPolicy::Reject`] (naming file and row); [`Error::Arrow`] if the decoded arrays
/// do not have `kind`'s type.
pub fn assemble_window(
    plan: &BlobWindowPlan,
    resolutions: &[BlobResolution],
    files: &[BlobFileRef],
    decoded: &BTreeMap<usize, BlobRows>,
    kind: BlobElementKind,
    policy: PlaceholderPolicy,
) -> Result<BlobBunchBatch> {
    if resolutions.len() != plan.len() {
        return Err(Error::invalid(format!(
            "{} resolutions for a window of {} rows",
            resolutions.len(),
            plan.len()
        )));
    }
    let null_source = new_null_array(&kind.arrow_type(), 1);
    let mut sources: Vec<&dyn Array> = vec![null_source.as_ref()];
    let mut source_of: BTreeMap<usize, usize> = BTreeMap::new();
    for (f, rows) in decoded {
        source_of.insert(*f, sources.len());
        sources.push(rows.values.as_ref());
    }
    let mut indices = Vec::with_capacity(plan.len());
    let mut row_ids = Vec::with_capacity(plan.len());
    let mut seqs = Vec::with_capacity(plan.len());
    let mut mask = BooleanBufferBuilder::new(plan.len());
    let mut any_placeholder = false;
    for (i, r) in resolutions.iter().enumerate() {
        match *r {
            BlobResolution::AllPlaceholder => {
                indices.push((0, 0));
                row_ids.push(plan.row_ids[i]);
                seqs.push(ALL_PLACEHOLDER_SEQUENCE_NUMBER);
                mask.append(false);
            }
            BlobResolution::Entry { file, row } => {
                let meta = files.get(file).ok_or_else(|| {
                    Error::invalid(format!("resolution refers to unknown file #{file}"))
                })?;
                let missing = || {
                    Error::invalid(format!(
                        "row {row} of blob file {} was not decoded for this window",
                        meta.path
                    ))
                };
                let rows = decoded.get(&file).ok_or_else(missing)?;
                let j = rows.positions.binary_search(&row).map_err(|_| missing())?;
                let is_placeholder = rows.placeholders.as_ref().is_some_and(|m| m.value(j));
                if is_placeholder && policy == PlaceholderPolicy::Reject {
                    return Err(Error::invalid(format!(
                        "blob file {} row {row} is a placeholder (-2) and no older layer exists",
                        meta.path
                    )));
                }
                any_placeholder |= is_placeholder;
                mask.append(is_placeholder);
                indices.push((source_of[&file], j));
                row_ids.push(meta.first_row_id + row as i64);
                seqs.push(meta.max_sequence_number);
            }
        }
    }
    // Every row taken in order from the one decoded file (the usual single-layer window):
    // its column is the output as it is. Interleaving would copy every payload once more.
    let in_order = sources.len() == 2
        && sources[1].len() == indices.len()
        && indices
            .iter()
            .enumerate()
            .all(|(i, &(s, j))| s == 1 && j == i);
    let values = match decoded.values().next() {
        Some(rows) if in_order => Arc::clone(&rows.values),
        _ => arrow_select::interleave::interleave(&sources, &indices)
            .map_err(|e| Error::arrow("assembling a blob bunch window", e))?,
    };
    Ok(BlobBunchBatch {
        values,
        row_ids: Int64Array::from(row_ids),
        sequence_numbers: Int64Array::from(seqs),
        placeholders: any_placeholder.then(|| mask.finish()),
    })
}

/// Options of [`BlobBunchReader`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlobBunchReadOptions {
    /// What to do with placeholders that survive resolution (single-layer fast path only).
    pub placeholders: PlaceholderPolicy,
    /// `blob-as-descriptor`: `Some(prefix)` returns serialized descriptors whose URI is
    /// `prefix + file path` instead of bytes.
    pub descriptor_uri_prefix: Option<String>,
}

/// Reads a blob bunch batch by batch over an [`Io`] (see the module docs for the rounds).
#[derive(Debug)]
pub struct BlobBunchReader {
    planner: BlobFallbackPlanner,
    kind: BlobElementKind,
    options: BlobBunchReadOptions,
    indexes: BTreeMap<usize, Arc<BlobFileIndex>>,
}

impl BlobBunchReader {
    /// A reader over `planner`'s windows for a column of `kind`.
    pub fn new(
        planner: BlobFallbackPlanner,
        kind: BlobElementKind,
        options: BlobBunchReadOptions,
    ) -> Self {
        BlobBunchReader {
            planner,
            kind,
            options,
            indexes: BTreeMap::new(),
        }
    }

    /// The planner (files, layers, output ranges).
    pub fn planner(&self) -> &BlobFallbackPlanner {
        &self.planner
    }

    /// The next batch, `None` at the end.
    ///
    /// IO per batch: one round with the footer/index reads of files first touched by the
    /// window (see [`read_blob_index`]), one round with the records of the winning rows.
    ///
    /// # Errors
    /// IO errors; corrupt files (naming file and row); an index row count that differs from
    /// the file meta's `row_count`; placeholders under [`PlaceholderPolicy::Reject`].
    pub async fn next_batch<T>(&mut self, io: &Io<T>) -> Result<Option<BlobBunchBatch>> {
        let Some(plan) = self.planner.next_window() else {
            return Ok(None);
        };
        let files = &self.planner.files;
        // Files that end before this window are done.
        let start = plan.row_ids.first().copied().unwrap_or_default();
        let ranges = &self.planner.ranges;
        self.indexes.retain(|f, _| ranges[*f].to >= start);
        let touched: Vec<usize> = plan
            .file_rows()
            .into_keys()
            .filter(|f| !self.indexes.contains_key(f))
            .collect();
        let loaded = try_join_all(touched.iter().map(|&f| {
            let m = &files[f];
            read_blob_index(io, &m.path, m.file_size, Some(m.row_count))
        }))
        .await?;
        for (f, idx) in touched.into_iter().zip(loaded) {
            self.indexes.insert(f, Arc::new(idx));
        }
        let indexes = &self.indexes;
        let resolutions = resolve_window(&plan, |f, row| match indexes.get(&f) {
            Some(idx) => idx.entry(row),
            None => Err(Error::invalid(format!(
                "blob file #{f} has no index loaded"
            ))),
        })?;
        let wanted = winning_rows(&resolutions);
        let kind = self.kind;
        let reads = wanted.iter().map(|(&f, rows)| {
            let options = BlobReadOptions {
                placeholders: PlaceholderPolicy::Mask,
                values: match &self.options.descriptor_uri_prefix {
                    None => BlobValueMode::Bytes,
                    Some(p) => BlobValueMode::Descriptor {
                        uri: format!("{p}{}", files[f].path),
                    },
                },
            };
            let index = indexes.get(&f).cloned();
            async move {
                let index = index
                    .ok_or_else(|| Error::invalid(format!("blob file #{f} has no index loaded")))?;
                read_blob_rows(io, &index, kind, Some(rows), &options)
                    .await
                    .map(|r| (f, r))
            }
        });
        let decoded: BTreeMap<usize, BlobRows> = try_join_all(reads).await?.into_iter().collect();
        assemble_window(
            &plan,
            &resolutions,
            files,
            &decoded,
            kind,
            self.options.placeholders,
        )
        .map(Some)
    }
}

#[cfg(test)]
mod tests;
