//! Reading data-evolution splits: files covering the same row ids are merged column-wise
//! (field groups), blob columns are resolved across sequence layers, row ranges and deletion
//! vectors select rows.
//!
//! A split is cut into **row-id groups** ([`row_id_groups`]): files whose row-id ranges
//! overlap. In a group,
//!
//! * every normal data file is a bunch; they are ordered newest (largest
//!   `max_sequence_number`) first and must all cover the same row-id range;
//! * the `.blob` files of one blob column form one blob bunch, read with
//!   [`BlobBunchReader`] (layers newest first, placeholders fall back to older layers);
//! * each read field comes from the first bunch holding it (blob bunch first for a blob
//!   column, then the normal files newest first; `write_cols = null` means every field of the
//!   file's schema); a field no file holds reads as NULL;
//! * `_ROW_ID` is `first_row_id + position`; `_SEQUENCE_NUMBER` is the newest normal file's
//!   `max_sequence_number` (in a group without normal files: the blob bunch's, `-1` for rows
//!   that are placeholders in every layer).
//!
//! The rows read are the **selection** of the group ([`group_selection`]): its range,
//! intersected with the requested row ranges, minus the rows deleted by the deletion vector of
//! the group's anchor (the oldest normal file by `(max_sequence_number, file name)`, positions
//! relative to its first row id). Every bunch reads exactly the selected row ids, so bunches
//! stay aligned; the reader checks the blob bunches' row ids against the selection.
//!
//! Output goes out in windows of `batch_size` rows, fewer when blob bytes are read: a window
//! then holds about [`BLOB_WINDOW_BYTES`] of blob records at most (see [`blob_window_rows`]);
//! memory is one window per bunch plus the decoder state of the open files.
//!
//! Source: Java `org.apache.paimon.operation.DataEvolutionSplitRead`,
//! `org.apache.paimon.reader.DataEvolutionFileReader`, `DataEvolutionIterator`,
//! `org.apache.paimon.io.DataFileRecordReader`; spec `data-evolution.md` §5, §7 and
//! `blob-fallback.md` §2–§4.

pub mod blob_fallback;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};
use futures_util::future::try_join_all;

use crate::error::{Error, Result};
use crate::format::blob::BlobElementKind;
use crate::format::deletion_vector::DeletionVector;
use crate::io::Io;
use crate::read::context::{OutputColumn, ReadContext, Sink, deletion_file};
use crate::read::evolution::blob_fallback::{
    BlobBunchReadOptions, BlobBunchReader, BlobFallbackPlanner, BlobFileRef,
};
use crate::read::file::{FileColumn, FileRead, FileReadSpec, file_field, read_deletion_vector};
use crate::scan::DataSplit;
use crate::spec::row_range::{RowRange, RowRangeIndex};
use crate::spec::special_fields::{ROW_ID, SEQUENCE_NUMBER};
use crate::spec::{DataField, DataFileMeta};
use crate::types::{cast_column_to, paimon_to_arrow_field};

/// Blob record bytes a data-evolution window aims to hold at most when blob bytes (not
/// descriptors) are read: 16 MiB.
pub const BLOB_WINDOW_BYTES: u64 = 16 << 20;

/// Rows per window of a group that reads blob bytes from `bunches` (for each blob bunch read
/// as bytes, the `(file_size, row_count)` of its `.blob` files): `batch_size`, lowered so that
/// `rows × Σ over bunches of the largest mean record size of a file` stays within
/// [`BLOB_WINDOW_BYTES`]; at least 1. Mean sizes come from the file metas (no IO), so a window
/// over a file with very uneven blobs can exceed the budget by that unevenness.
pub fn blob_window_rows(batch_size: usize, bunches: &[Vec<(u64, u64)>]) -> usize {
    let per_row: u64 = bunches
        .iter()
        .map(|files| {
            files
                .iter()
                .map(|&(size, rows)| size.div_ceil(rows.max(1)))
                .max()
                .unwrap_or_default()
        })
        .fold(0u64, u64::saturating_add);
    if per_row == 0 {
        return batch_size.max(1);
    }
    let fit = usize::try_from(BLOB_WINDOW_BYTES / per_row).unwrap_or(usize::MAX);
    fit.clamp(1, batch_size.max(1))
}

/// One row-id group of a split: files whose row-id ranges overlap (transitively).
///
/// Source: Java `DataEvolutionSplitRead#mergeRangesAndSort`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowIdGroup {
    /// The rows of the group: the normal files' common range, or (a group of `.blob` files
    /// only) the union of the files' ranges.
    pub range: RowRange,
    /// Normal data files (indexes into the split's files), newest `max_sequence_number`
    /// first (stable for ties).
    pub normal: Vec<usize>,
    /// `.blob` files (indexes into the split's files), by first row id, then newest first.
    pub blob: Vec<usize>,
}

impl RowIdGroup {
    /// The anchor: the oldest normal file by `(max_sequence_number, file name)`, which keys
    /// the group's deletion vector.
    pub fn anchor(&self, files: &[DataFileMeta]) -> Option<usize> {
        self.normal.iter().copied().min_by(|&a, &b| {
            (files[a].max_sequence_number, &files[a].file_name)
                .cmp(&(files[b].max_sequence_number, &files[b].file_name))
        })
    }
}

/// The row-id range of a data file, with errors naming `path`.
fn file_range(file: &DataFileMeta, path: &str) -> Result<RowRange> {
    let first = file.first_row_id.ok_or_else(|| {
        Error::invalid(format!(
            "data file {path} of a row-tracking table has no first_row_id"
        ))
    })?;
    let count = u64::try_from(file.row_count).map_err(|_| {
        Error::invalid(format!(
            "data file {path} has a negative row count {}",
            file.row_count
        ))
    })?;
    RowRange::of_file(first, count, path)
}

/// Cut `files` (a split's data files) into row-id groups, ordered by range: sort by
/// `(from, to)`, a file joins the current group when it starts at or before the group's end
/// (adjacent files are different groups).
///
/// # Errors
/// [`Error::Invalid`] naming the file for a file without `first_row_id` or rows; naming both
/// files when two normal files of one group cover different ranges; naming the file when a
/// `.blob` file reaches outside the range of the group's normal files.
pub fn row_id_groups(
    files: &[DataFileMeta],
    path_of: impl Fn(&DataFileMeta) -> String,
) -> Result<Vec<RowIdGroup>> {
    let mut ranged: Vec<(RowRange, usize)> = files
        .iter()
        .enumerate()
        .map(|(i, f)| Ok((file_range(f, &path_of(f))?, i)))
        .collect::<Result<_>>()?;
    ranged.sort_by_key(|(r, i)| (r.from, r.to, *i));
    let mut clusters: Vec<(i64, Vec<(RowRange, usize)>)> = Vec::new();
    for (r, i) in ranged {
        match clusters.last_mut() {
            Some((end, members)) if r.from <= *end => {
                *end = (*end).max(r.to);
                members.push((r, i));
            }
            _ => clusters.push((r.to, vec![(r, i)])),
        }
    }
    let mut out = Vec::with_capacity(clusters.len());
    for (_, mut members) in clusters {
        // Input order inside a group, then the stable sorts below.
        members.sort_by_key(|(_, i)| *i);
        let mut normal: Vec<(RowRange, usize)> = Vec::new();
        let mut blob: Vec<(RowRange, usize)> = Vec::new();
        for m in members {
            if files[m.1].is_blob_file() {
                blob.push(m);
            } else {
                normal.push(m);
            }
        }
        normal.sort_by_key(|(_, i)| std::cmp::Reverse(files[*i].max_sequence_number));
        blob.sort_by_key(|(r, i)| (r.from, std::cmp::Reverse(files[*i].max_sequence_number)));
        let range = match normal.first() {
            Some(&(first, fi)) => {
                for &(r, i) in &normal[1..] {
                    if r != first {
                        return Err(Error::invalid(format!(
                            "Data files of one row-id group should all have the same row-id range: {} covers {first}, {} covers {r}",
                            path_of(&files[fi]),
                            path_of(&files[i])
                        )));
                    }
                }
                for &(r, i) in &blob {
                    if r.from < first.from || r.to > first.to {
                        return Err(Error::invalid(format!(
                            "blob file {} covers {r}, outside the range {first} of data file {}",
                            path_of(&files[i]),
                            path_of(&files[fi])
                        )));
                    }
                }
                first
            }
            None => {
                let from = blob.iter().map(|(r, _)| r.from).min().unwrap_or_default();
                let to = blob.iter().map(|(r, _)| r.to).max().unwrap_or_default();
                RowRange { from, to }
            }
        };
        out.push(RowIdGroup {
            range,
            normal: normal.into_iter().map(|(_, i)| i).collect(),
            blob: blob.into_iter().map(|(_, i)| i).collect(),
        });
    }
    Ok(out)
}

/// The row ids a group reads, as sorted, disjoint, non-adjacent ranges: `range` ∩
/// `requested` (all of `range` when `None`), minus `deleted` row ids (ascending).
pub fn group_selection(
    range: RowRange,
    requested: Option<&RowRangeIndex>,
    deleted: impl IntoIterator<Item = i64>,
) -> Vec<RowRange> {
    let base = match requested {
        Some(index) => index.intersected_ranges(range.from, range.to),
        None => vec![range],
    };
    let mut out: Vec<RowRange> = Vec::with_capacity(base.len());
    let mut deleted = deleted.into_iter().peekable();
    for r in base {
        let mut next = r.from;
        while let Some(&d) = deleted.peek() {
            if d > r.to {
                break;
            }
            deleted.next();
            if d < next {
                continue;
            }
            if d > next {
                out.push(RowRange {
                    from: next,
                    to: d - 1,
                });
            }
            next = d + 1;
        }
        if next <= r.to {
            out.push(RowRange {
                from: next,
                to: r.to,
            });
        }
    }
    out
}

/// Steps through selected ranges in windows of row ids.
#[derive(Debug)]
struct RowIdCursor {
    ranges: Vec<RowRange>,
    index: usize,
    next: i64,
}

impl RowIdCursor {
    fn new(ranges: Vec<RowRange>) -> Self {
        let next = ranges.first().map(|r| r.from).unwrap_or_default();
        RowIdCursor {
            ranges,
            index: 0,
            next,
        }
    }

    /// Up to `n` next row ids; empty at the end.
    fn next_window(&mut self, n: usize) -> Vec<i64> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let Some(r) = self.ranges.get(self.index) else {
                break;
            };
            let room = (n - out.len()) as i64;
            let last = r.to.min(self.next.saturating_add(room - 1));
            out.extend(self.next..=last);
            if last == r.to {
                self.index += 1;
                if let Some(n) = self.ranges.get(self.index) {
                    self.next = n.from;
                }
            } else {
                self.next = last + 1;
            }
        }
        out
    }
}

/// Batches buffered until a window takes them.
#[derive(Debug, Default)]
struct RowBuffer {
    batches: VecDeque<RecordBatch>,
    rows: usize,
}

impl RowBuffer {
    fn push(&mut self, batch: RecordBatch) {
        if batch.num_rows() > 0 {
            self.rows += batch.num_rows();
            self.batches.push_back(batch);
        }
    }

    /// The first `n` buffered rows (`n <= self.rows`), as one batch of `schema`.
    fn take(&mut self, n: usize, schema: &SchemaRef) -> Result<RecordBatch> {
        let mut parts = Vec::new();
        let mut need = n;
        while need > 0 {
            let Some(b) = self.batches.pop_front() else {
                break;
            };
            if b.num_rows() <= need {
                need -= b.num_rows();
                parts.push(b);
            } else {
                parts.push(b.slice(0, need));
                self.batches.push_front(b.slice(need, b.num_rows() - need));
                need = 0;
            }
        }
        self.rows -= n - need;
        arrow_select::concat::concat_batches(schema, &parts)
            .map_err(|e| Error::arrow("buffering a field group", e))
    }
}

/// A normal data file of a group, read with its assigned fields and filtered to the
/// selection.
struct NormalBunch {
    path: String,
    first_row_id: i64,
    row_count: u64,
    reader: FileRead,
    /// Absolute selection; `None` = every row of the file.
    selection: Option<Vec<RowRange>>,
    selection_index: usize,
    /// Schema of the buffered batches (assigned fields, without the position column).
    schema: SchemaRef,
    buffer: RowBuffer,
}

impl NormalBunch {
    /// The next `n` selected rows, in the bunch's schema.
    async fn take<T>(&mut self, io: &Io<T>, n: usize) -> Result<RecordBatch> {
        while self.buffer.rows < n {
            let Some(batch) = self.reader.next_batch(io).await? else {
                return Err(Error::corrupt(
                    &self.path,
                    "data-file",
                    format!(
                        "the file ended before all rows of its field group were read (it should hold {} rows from row id {})",
                        self.row_count, self.first_row_id
                    ),
                ));
            };
            let batch = self.select(batch)?;
            self.buffer.push(batch);
        }
        self.buffer.take(n, &self.schema)
    }

    /// Drop the position column (last) and the rows outside the selection.
    fn select(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        let last = batch.num_columns() - 1;
        let positions = batch
            .column(last)
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| Error::invalid("position column is not Int64"))?
            .clone();
        if let Some(p) = positions.values().last()
            && u64::try_from(*p).map_or(true, |p| p >= self.row_count)
        {
            return Err(Error::corrupt(
                &self.path,
                "data-file",
                format!(
                    "the file holds more rows than its row count {} in the manifest",
                    self.row_count
                ),
            ));
        }
        let mut batch = batch;
        batch.remove_column(last);
        let Some(selection) = &self.selection else {
            return Ok(batch);
        };
        let mut k = self.selection_index;
        let keep: BooleanArray = positions
            .values()
            .iter()
            .map(|&p| {
                let rid = self.first_row_id + p;
                while selection.get(k).is_some_and(|r| r.to < rid) {
                    k += 1;
                }
                Some(selection.get(k).is_some_and(|r| r.from <= rid))
            })
            .collect();
        self.selection_index = k;
        arrow_select::filter::filter_record_batch(&batch, &keep)
            .map_err(|e| Error::arrow(format!("selecting rows of {}", self.path), e))
    }
}

/// A blob bunch of a group.
struct BlobBunch {
    /// Paths of the bunch's files (for errors).
    paths: Vec<String>,
    reader: BlobBunchReader,
    /// Arrow field of the output column.
    field: Arc<Field>,
    /// Buffered columns: value, `_ROW_ID`, `_SEQUENCE_NUMBER`.
    schema: SchemaRef,
    buffer: RowBuffer,
}

impl BlobBunch {
    /// The next `n` rows as (value, `_ROW_ID`, `_SEQUENCE_NUMBER`), checked against the
    /// expected row ids.
    async fn take<T>(&mut self, io: &Io<T>, row_ids: &[i64]) -> Result<RecordBatch> {
        let n = row_ids.len();
        while self.buffer.rows < n {
            let Some(b) = self.reader.next_batch(io).await? else {
                return Err(self.misaligned(row_ids));
            };
            let values = cast_column_to(&b.values, &self.field, &self.paths.join(", "))?;
            let batch = RecordBatch::try_new(
                Arc::clone(&self.schema),
                vec![values, Arc::new(b.row_ids), Arc::new(b.sequence_numbers)],
            )
            .map_err(|e| Error::arrow("assembling a blob bunch batch", e))?;
            self.buffer.push(batch);
        }
        let out = self.buffer.take(n, &self.schema)?;
        let ids = out
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| Error::invalid("blob bunch row ids are not Int64"))?;
        if ids.values().as_ref() != row_ids {
            return Err(self.misaligned(row_ids));
        }
        Ok(out)
    }

    fn misaligned(&self, row_ids: &[i64]) -> Error {
        Error::invalid(format!(
            "blob files {} do not hold the rows {}..={} of their field group (blob files must cover the same row ids as the group's data files)",
            self.paths.join(", "),
            row_ids.first().copied().unwrap_or_default(),
            row_ids.last().copied().unwrap_or_default()
        ))
    }
}

/// Where an output field comes from in a group.
#[derive(Debug, Clone, Copy)]
enum Provider {
    /// Column `column` of normal bunch `bunch`.
    Normal { bunch: usize, column: usize },
    /// Blob bunch `bunch`.
    Blob(usize),
    /// No file holds it.
    Null,
}

/// Read a data-evolution split (or a row-tracking append split under row ranges) into `sink`.
///
/// # Errors
/// Invalid row-id layouts (see [`row_id_groups`]); a blob bunch not aligned with its data
/// files or with overlapping files in one layer (naming the files); a `.blob` index whose row
/// count differs from the manifest's; a NOT NULL field no file holds; IO and decoding errors.
pub(crate) async fn read_data_evolution_split(
    io: &Io<RecordBatch>,
    ctx: &ReadContext,
    split: &DataSplit,
    sink: &mut Sink<'_>,
) -> Result<()> {
    let files = &split.data_files;
    let groups = row_id_groups(files, |f| split.file_path(f))?;
    let needed = ctx.needed_fields();
    let wants_row_id = ctx.columns.contains(&OutputColumn::RowId);
    let wants_seq = ctx.columns.contains(&OutputColumn::SequenceNumber);
    let mut out_fields: Vec<Field> = needed
        .iter()
        .map(paimon_to_arrow_field)
        .collect::<Result<_>>()?;
    if wants_row_id {
        out_fields.push(Field::new(ROW_ID, ArrowType::Int64, false));
    }
    if wants_seq {
        out_fields.push(Field::new(SEQUENCE_NUMBER, ArrowType::Int64, false));
    }
    let out_schema: SchemaRef = Arc::new(Schema::new(out_fields));
    for group in groups {
        if sink.full() {
            break;
        }
        read_group(io, ctx, split, &group, &needed, &out_schema, sink).await?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn read_group(
    io: &Io<RecordBatch>,
    ctx: &ReadContext,
    split: &DataSplit,
    group: &RowIdGroup,
    needed: &[DataField],
    out_schema: &SchemaRef,
    sink: &mut Sink<'_>,
) -> Result<()> {
    let files = &split.data_files;
    if let Some(index) = &ctx.row_ranges
        && !index.intersects(group.range)
    {
        return Ok(());
    }
    // Deletion vector of the anchor.
    let anchor = group.anchor(files);
    let deleted: Vec<i64> = match anchor.and_then(|a| deletion_file(split, a).map(|d| (a, d))) {
        Some((a, d)) => {
            let dv: DeletionVector = read_deletion_vector(io, d, &files[a].file_name).await?;
            dv.iter()
                .filter_map(|p| i64::try_from(p).ok())
                .filter_map(|p| group.range.from.checked_add(p))
                .collect()
        }
        None => Vec::new(),
    };
    let selection = group_selection(group.range, ctx.row_ranges.as_ref(), deleted);
    if selection.is_empty() {
        return Ok(());
    }
    let whole = selection.len() == 1 && selection[0] == group.range;

    // Blob bunches by field id, in first-file order.
    let mut blob_bunches: Vec<(i32, Vec<usize>)> = Vec::new();
    for &i in &group.blob {
        let f = &files[i];
        let path = split.file_path(f);
        let column = f
            .write_cols
            .as_ref()
            .and_then(|c| c.first())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "blob file {path} has no write_cols naming its blob column"
                ))
            })?;
        let id = ctx
            .file_schema(f)?
            .field(column)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "blob file {path} holds column {column}, which its schema {} lacks",
                    f.schema_id
                ))
            })?
            .id;
        match blob_bunches.iter_mut().find(|(fid, _)| *fid == id) {
            Some((_, v)) => v.push(i),
            None => blob_bunches.push((id, vec![i])),
        }
    }

    // Assign fields.
    let mut normal_fields: Vec<Vec<DataField>> = vec![Vec::new(); group.normal.len()];
    let mut blob_used: Vec<bool> = vec![false; blob_bunches.len()];
    let mut providers = Vec::with_capacity(needed.len());
    for field in needed {
        if let Some(b) = blob_bunches.iter().position(|(id, _)| *id == field.id) {
            blob_used[b] = true;
            providers.push(Provider::Blob(b));
            continue;
        }
        let mut provider = Provider::Null;
        for (k, &i) in group.normal.iter().enumerate() {
            let f = &files[i];
            if file_field(field, ctx.file_schema(f)?, f.write_cols.as_deref()).is_some() {
                provider = Provider::Normal {
                    bunch: k,
                    column: normal_fields[k].len(),
                };
                normal_fields[k].push(field.clone());
                break;
            }
        }
        if matches!(provider, Provider::Null) && !field.data_type.nullable {
            return Err(Error::invalid(format!(
                "Field {} is not null but can't find any file contains it (row ids {})",
                field.name, group.range
            )));
        }
        providers.push(provider);
    }
    // Without normal files, `_SEQUENCE_NUMBER` comes from the first blob bunch.
    let seq_from_blob =
        group.normal.is_empty() && ctx.columns.contains(&OutputColumn::SequenceNumber);
    if seq_from_blob && !blob_used.is_empty() {
        blob_used[0] = true;
    }

    // Open the normal bunches with fields.
    let selection_ref = &selection;
    let opens = group
        .normal
        .iter()
        .enumerate()
        .filter(|(k, _)| !normal_fields[*k].is_empty())
        .map(|(k, &i)| {
            let f = &files[i];
            let path = split.file_path(f);
            let mut columns: Vec<FileColumn> = normal_fields[k]
                .iter()
                .cloned()
                .map(FileColumn::Field)
                .collect();
            columns.push(FileColumn::Position);
            async move {
                let spec = FileReadSpec::try_new(columns)?;
                let fields: Vec<Field> = spec.schema.fields()[..spec.schema.fields().len() - 1]
                    .iter()
                    .map(|f| f.as_ref().clone())
                    .collect();
                let reader = FileRead::open(
                    io,
                    &path,
                    f,
                    ctx.file_schema(f)?,
                    &spec,
                    None,
                    ctx.batch_size,
                )
                .await?;
                let first_row_id = f.first_row_id.unwrap_or_default();
                Ok::<_, Error>((
                    k,
                    NormalBunch {
                        path,
                        first_row_id,
                        row_count: u64::try_from(f.row_count).unwrap_or_default(),
                        reader,
                        selection: (!whole).then(|| selection_ref.clone()),
                        selection_index: 0,
                        schema: Arc::new(Schema::new(fields)),
                        buffer: RowBuffer::default(),
                    },
                ))
            }
        });
    let mut normal: BTreeMap<usize, NormalBunch> = try_join_all(opens).await?.into_iter().collect();

    // Rows per window: fewer when blob bytes are read (memory).
    let byte_bunches: Vec<Vec<(u64, u64)>> = blob_bunches
        .iter()
        .enumerate()
        .filter(|(b, (id, _))| {
            blob_used[*b] && !ctx.blob_as_descriptor && needed.iter().any(|f| f.id == *id)
        })
        .map(|(_, (_, members))| {
            members
                .iter()
                .map(|&i| {
                    let f = &files[i];
                    (
                        u64::try_from(f.file_size).unwrap_or_default(),
                        u64::try_from(f.row_count).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .collect();
    let window = blob_window_rows(ctx.batch_size, &byte_bunches);

    // Blob bunch readers.
    let mut blobs: BTreeMap<usize, BlobBunch> = BTreeMap::new();
    for (b, (id, members)) in blob_bunches.iter().enumerate() {
        if !blob_used[b] {
            continue;
        }
        let refs = members
            .iter()
            .map(|&i| BlobFileRef::try_from_data_file(&files[i], split.file_path(&files[i])))
            .collect::<Result<Vec<_>>>()?;
        let paths: Vec<String> = refs.iter().map(|r| r.path.clone()).collect();
        let planner = BlobFallbackPlanner::try_new(refs, Some(&selection), window)?;
        let read_field = needed.iter().find(|f| f.id == *id);
        let (kind, field, descriptor) = match read_field {
            Some(f) => (
                BlobElementKind::try_from_data_type(&f.data_type)?,
                Arc::new(paimon_to_arrow_field(f)?),
                ctx.blob_as_descriptor,
            ),
            // Opened only for `_SEQUENCE_NUMBER`: read descriptors (no payload bytes).
            None => {
                let first = &files[members[0]];
                let column = first
                    .write_cols
                    .as_ref()
                    .and_then(|c| c.first())
                    .cloned()
                    .unwrap_or_default();
                let f = ctx
                    .file_schema(first)?
                    .field(&column)
                    .cloned()
                    .ok_or_else(|| {
                        Error::invalid(format!("blob column {column} is not in its file's schema"))
                    })?;
                (
                    BlobElementKind::try_from_data_type(&f.data_type)?,
                    Arc::new(paimon_to_arrow_field(&f)?),
                    true,
                )
            }
        };
        let options = BlobBunchReadOptions {
            descriptor_uri_prefix: descriptor.then(|| ctx.blob_descriptor_uri_prefix.clone()),
            ..Default::default()
        };
        let schema = Arc::new(Schema::new(vec![
            field.as_ref().clone(),
            Field::new(ROW_ID, ArrowType::Int64, false),
            Field::new(SEQUENCE_NUMBER, ArrowType::Int64, false),
        ]));
        blobs.insert(
            b,
            BlobBunch {
                paths,
                reader: BlobBunchReader::new(planner, kind, options),
                field,
                schema,
                buffer: RowBuffer::default(),
            },
        );
    }

    let newest_seq = group.normal.first().map(|&i| files[i].max_sequence_number);
    let wants_row_id = ctx.columns.contains(&OutputColumn::RowId);
    let mut cursor = RowIdCursor::new(selection);
    loop {
        if sink.full() {
            break;
        }
        let row_ids = cursor.next_window(window);
        if row_ids.is_empty() {
            break;
        }
        let n = row_ids.len();
        let mut normal_batches: BTreeMap<usize, RecordBatch> = BTreeMap::new();
        for (k, bunch) in normal.iter_mut() {
            normal_batches.insert(*k, bunch.take(io, n).await?);
        }
        let mut blob_batches: BTreeMap<usize, RecordBatch> = BTreeMap::new();
        for (b, bunch) in blobs.iter_mut() {
            blob_batches.insert(*b, bunch.take(io, &row_ids).await?);
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(out_schema.fields().len());
        for (provider, target) in providers.iter().zip(out_schema.fields()) {
            columns.push(match *provider {
                Provider::Normal { bunch, column } => normal_batches[&bunch].column(column).clone(),
                Provider::Blob(b) => blob_batches[&b].column(0).clone(),
                Provider::Null => arrow_array::new_null_array(target.data_type(), n),
            });
        }
        if wants_row_id {
            columns.push(Arc::new(Int64Array::from(row_ids.clone())));
        }
        if ctx.columns.contains(&OutputColumn::SequenceNumber) {
            columns.push(match (newest_seq, blob_batches.values().next()) {
                (Some(s), _) => Arc::new(Int64Array::from_value(s, n)),
                (None, Some(b)) => b.column(2).clone(),
                (None, None) => {
                    return Err(Error::invalid(format!(
                        "row-id group {} has no file to read _SEQUENCE_NUMBER from",
                        group.range
                    )));
                }
            });
        }
        let batch = RecordBatch::try_new_with_options(
            Arc::clone(out_schema),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(n)),
        )
        .map_err(|e| Error::arrow("assembling a data-evolution batch", e))?;
        sink.push(batch).await?;
    }
    Ok(())
}

/// The bytes of the blob in column `column` at row id `row_id` of a planned data-evolution
/// table (plan it with the row range `[row_id, row_id]` so only the files holding the row are
/// listed), using ranged reads only: the newest layer's `.blob` file whose entry for the row is
/// not a placeholder wins (its footer and index, then the one record). `Ok(None)` for a null
/// blob, a row that is a placeholder in every layer, or a column no `.blob` file of the row
/// holds.
///
/// # Errors
/// [`Error::Invalid`] for an unknown column, a row id no data file of the plan holds, a row
/// deleted by a deletion vector; [`Error::Unsupported`] for a column that is not a scalar
/// `BLOB`; corrupt files and index row counts that differ from the manifest (naming the file);
/// IO errors.
pub async fn read_blob_cell<T>(
    io: &Io<T>,
    plan: &crate::scan::Plan,
    row_id: i64,
    column: &str,
) -> Result<Option<bytes::Bytes>> {
    use crate::format::blob::{BlobEntry, decode_blob_record, read_blob_index};
    let field = plan.schema.field(column).ok_or_else(|| {
        Error::invalid(format!(
            "unknown column '{column}'; the table has: {}",
            plan.schema.field_names().join(", ")
        ))
    })?;
    if BlobElementKind::try_from_data_type(&field.data_type)? != BlobElementKind::Blob {
        return Err(Error::unsupported(format!(
            "reading one blob of column {column}: only BLOB columns (not ARRAY/MAP of BLOB)"
        )));
    }
    for split in &plan.splits {
        let files = &split.data_files;
        let groups = row_id_groups(files, |f| split.file_path(f))?;
        let Some(group) = groups.iter().find(|g| g.range.contains(row_id)) else {
            continue;
        };
        if let Some(a) = group.anchor(files)
            && let Some(d) = deletion_file(split, a)
        {
            let dv = read_deletion_vector(io, d, &files[a].file_name).await?;
            let position = u64::try_from(row_id - group.range.from).unwrap_or_default();
            if dv.is_deleted(position) {
                return Err(Error::invalid(format!(
                    "row id {row_id} is deleted (deletion vector of {})",
                    split.file_path(&files[a])
                )));
            }
        }
        // Blob files of the column holding the row, newest layer first.
        let mut layers: Vec<(usize, RowRange)> = Vec::new();
        for &i in &group.blob {
            let f = &files[i];
            let range = file_range(f, &split.file_path(f))?;
            let holds = f
                .write_cols
                .as_ref()
                .and_then(|c| c.first())
                .is_some_and(|c| file_field_id(plan, f, c) == Some(field.id));
            if holds && range.contains(row_id) {
                layers.push((i, range));
            }
        }
        layers.sort_by_key(|(i, _)| std::cmp::Reverse(files[*i].max_sequence_number));
        for (i, range) in layers {
            let f = &files[i];
            let path = split.file_path(f);
            let size = u64::try_from(f.file_size)
                .map_err(|_| Error::invalid(format!("blob file {path} has a negative size")))?;
            let index = read_blob_index(io, &path, size, u64::try_from(f.row_count).ok()).await?;
            let row = (row_id - range.from) as u64;
            let record = match index.entry(row)? {
                BlobEntry::Placeholder => continue,
                BlobEntry::Null => return Ok(None),
                e @ BlobEntry::Record { .. } => e.record_range(),
            };
            let Some(record) = record else {
                return Ok(None);
            };
            // One range read of the record; the payload is a slice of it (no copy).
            let bytes = io.read_range(&path, record).await?;
            let payload_len = decode_blob_record(&bytes, &path, row)?.len();
            return Ok(Some(bytes.slice(4..4 + payload_len)));
        }
        return Ok(None);
    }
    Err(Error::invalid(format!(
        "no data file of the plan holds row id {row_id}"
    )))
}

/// The id (in `file`'s schema) of column `name`.
fn file_field_id(plan: &crate::scan::Plan, file: &DataFileMeta, name: &str) -> Option<i32> {
    plan.schemas.get(&file.schema_id)?.field(name).map(|f| f.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, first: i64, rows: i64, seq: i64) -> DataFileMeta {
        DataFileMeta {
            file_name: name.to_string(),
            first_row_id: Some(first),
            row_count: rows,
            max_sequence_number: seq,
            min_sequence_number: seq,
            ..DataFileMeta::test_default()
        }
    }

    fn r(from: i64, to: i64) -> RowRange {
        RowRange { from, to }
    }

    fn groups(files: &[DataFileMeta]) -> Result<Vec<RowIdGroup>> {
        row_id_groups(files, |f| f.file_name.clone())
    }

    #[test]
    fn groups_of_unordered_discontiguous_and_overlapping_files() {
        let files = vec![
            file("c.parquet", 20, 5, 1),
            file("a.parquet", 0, 10, 1),
            file("a2.parquet", 0, 10, 3),
            file("a.blob", 5, 5, 1),
            file("a0.blob", 0, 5, 1),
            file("a1.blob", 0, 3, 4),
            // Adjacent to [0, 9]: its own group.
            file("b.parquet", 10, 2, 2),
        ];
        let g = groups(&files).unwrap();
        assert_eq!(
            g,
            vec![
                RowIdGroup {
                    range: r(0, 9),
                    normal: vec![2, 1],
                    blob: vec![5, 4, 3],
                },
                RowIdGroup {
                    range: r(10, 11),
                    normal: vec![6],
                    blob: vec![],
                },
                RowIdGroup {
                    range: r(20, 24),
                    normal: vec![0],
                    blob: vec![],
                },
            ]
        );
        assert_eq!(g[0].anchor(&files), Some(1));
    }

    #[test]
    fn anchor_ties_break_by_file_name() {
        let files = vec![file("b.parquet", 0, 4, 1), file("a.parquet", 0, 4, 1)];
        let g = groups(&files).unwrap();
        assert_eq!(g[0].anchor(&files), Some(1));
        // Equal sequence numbers keep input order among the normal files.
        assert_eq!(g[0].normal, vec![0, 1]);
    }

    #[test]
    fn bad_layouts_name_the_files() {
        let err = groups(&[file("a.parquet", 0, 10, 1), file("b.parquet", 5, 10, 2)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a.parquet") && err.contains("b.parquet"),
            "{err}"
        );
        let err = groups(&[file("a.parquet", 0, 10, 1), file("x.blob", 8, 5, 1)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("x.blob") && err.contains("[8, 12]"), "{err}");
        let mut f = file("n.parquet", 0, 3, 1);
        f.first_row_id = None;
        let err = groups(&[f]).unwrap_err().to_string();
        assert!(
            err.contains("n.parquet") && err.contains("first_row_id"),
            "{err}"
        );
        let err = groups(&[file("e.parquet", 0, 0, 1)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("e.parquet"), "{err}");
    }

    #[test]
    fn selection_intersects_requested_ranges_and_drops_deleted_rows() {
        let index = RowRangeIndex::new(&[r(12, 14), r(0, 3), r(4, 5), r(18, 30)]);
        assert_eq!(
            group_selection(r(2, 19), Some(&index), []),
            vec![r(2, 5), r(12, 14), r(18, 19)]
        );
        assert_eq!(
            group_selection(r(2, 19), Some(&index), [0, 2, 4, 13, 14, 18, 25]),
            vec![r(3, 3), r(5, 5), r(12, 12), r(19, 19)]
        );
        assert_eq!(group_selection(r(0, 4), None, [0, 4]), vec![r(1, 3)]);
        assert_eq!(group_selection(r(0, 1), None, [0, 1]), vec![]);
        assert_eq!(group_selection(r(6, 8), Some(&index), []), vec![]);
    }

    #[test]
    fn split_ranges_come_from_each_file_not_the_first_and_last() {
        // Files listed out of order, with a gap and an overlap.
        let files = [r(20, 29), r(0, 9), r(5, 14)];
        let index = RowRangeIndex::new(&[r(12, 22), r(3, 3)]);
        assert_eq!(
            index.split_ranges(&files),
            vec![r(3, 3), r(12, 14), r(20, 22)]
        );
    }

    #[test]
    fn cursor_steps_across_ranges_in_windows() {
        let mut c = RowIdCursor::new(vec![r(0, 2), r(5, 5), r(7, 9)]);
        assert_eq!(c.next_window(2), vec![0, 1]);
        assert_eq!(c.next_window(2), vec![2, 5]);
        assert_eq!(c.next_window(4), vec![7, 8, 9]);
        assert!(c.next_window(4).is_empty());
    }

    #[test]
    fn blob_windows_are_bounded_by_the_mean_record_size() {
        const MIB: u64 = 1 << 20;
        // No blob bytes read (no bunch, or descriptors only): batch size as it is.
        assert_eq!(blob_window_rows(8192, &[]), 8192);
        assert_eq!(blob_window_rows(0, &[]), 1);
        // The bench table: one 138,413,804-byte file of 104 rows = 1,330,902 bytes a row
        // (rounded up): 16 MiB holds 12 of them.
        assert_eq!(blob_window_rows(8192, &[vec![(138_413_804, 104)]]), 12);
        // Small blobs: the batch size wins.
        assert_eq!(blob_window_rows(8192, &[vec![(1024 * 1000, 1000)]]), 8192);
        assert_eq!(blob_window_rows(4, &[vec![(1024 * 1000, 1000)]]), 4);
        // A bunch counts its largest mean (4 MiB a row), bunches add up (4 + 4 MiB).
        let layers = vec![(10 * MIB, 10), (40 * MIB, 10)];
        assert_eq!(blob_window_rows(8192, std::slice::from_ref(&layers)), 4);
        assert_eq!(blob_window_rows(8192, &[layers.clone(), layers]), 2);
        // One blob larger than the budget: one row a window, never zero.
        assert_eq!(blob_window_rows(8192, &[vec![(1 << 40, 1)]]), 1);
        // A file meta claiming zero rows does not divide by zero.
        assert_eq!(blob_window_rows(8192, &[vec![(64 * MIB, 0)]]), 1);
    }
}
