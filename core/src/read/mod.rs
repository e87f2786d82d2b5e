//! Reading rows: one split at a time, streamed as Arrow record batches.
//!
//! A [`ReadContext`] is built once per scan from the [`Plan`] (read schema, file schemas,
//! options) and the user's projection, filter and limit; [`read_split`] then turns one
//! [`DataSplit`] into a [`Machine`] emitting batches of the output schema.
//!
//! * Append tables: the split's files in order; deletion vectors applied; the filter applied
//!   to rows.
//! * Primary-key tables: the split's files are cut into key-overlap sections and sorted runs
//!   ([`crate::scan::split::interval_partition`]); each section is merged with the table's
//!   merge engine ([`crate::merge::MergeReader`]); the filter is applied after the merge.
//!   Memory: one batch per sorted run of the current section plus the output batch.
//! * Data-evolution tables: see [`evolution`] (row-id ranges: [`crate::spec::row_range`]).
//! * Record-level expiry ([`expire`]): the row filter by time field that compaction applies
//!   and table creation and writes validate (below both of them).
//!
//! Source: Java `org.apache.paimon.operation.{RawFileSplitRead, MergeFileSplitRead,
//! DataEvolutionSplitRead}`.

pub mod evolution;
pub mod expire;
pub mod file;

mod context;

pub use context::{DEFAULT_BATCH_SIZE, OutputColumn, ReadContext};
pub(crate) use context::{Sink, deletion_file};

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema};
use futures_util::future::BoxFuture;

use crate::error::{Error, Result};
use crate::io::{Io, Machine};
use crate::merge::{MergeReader, RunSource};
use crate::scan::split::{KeyedFile, interval_partition};
use crate::scan::{DataSplit, DeletionFile, TableKind};
use crate::spec::row_range::RowRangeIndex;
use crate::spec::special_fields::{ROW_ID, SEQUENCE_NUMBER, VALUE_KIND};
use crate::spec::{DataField, DataFileMeta, TableSchema};

pub use file::{FileColumn, FileRead, FileReadSpec, POSITION};

/// A machine reading one split; emits batches of [`ReadContext::output_schema`].
pub fn read_split(ctx: Arc<ReadContext>, split: DataSplit) -> Machine<RecordBatch> {
    Machine::new("read_split", move |io: Io<RecordBatch>| async move {
        let mut sink = Sink::new(&ctx, &io);
        read_split_into(&io, &ctx, &split, &mut sink).await
    })
}

/// Default smallest part for [`independent_parts`], in bytes of data files (sum of
/// `DataFileMeta::file_size`): 8 MiB. Consecutive small files share a part so that a part's
/// decoding outweighs the host's cost of scheduling it (a table of many small files read on
/// many threads otherwise spends more CPU than it gains).
pub const MIN_PART_BYTES: i64 = 8 << 20;

/// `split` cut into parts that read independently: reading each part with [`read_split`] and
/// concatenating the outputs in order gives exactly the batches (rows, order, batch
/// boundaries) of reading `split` itself. Hosts with threads read the parts concurrently.
///
/// Append splits (without row ranges) become parts of consecutive data files, each part
/// holding files until their sizes reach `min_part_bytes` (hosts use [`MIN_PART_BYTES`]; a
/// file of that size or more is a part of its own; 0: one part per file), with their
/// deletion files; every other split (primary-key merges,
/// data-evolution row-id groups) stays whole. Limits apply per [`read_split`] machine, so a
/// host reading parts must apply the scan's limit to the concatenated output.
pub fn independent_parts(
    ctx: &ReadContext,
    split: DataSplit,
    min_part_bytes: i64,
) -> Vec<DataSplit> {
    if ctx.table_kind != TableKind::Append || ctx.row_ranges.is_some() || split.data_files.len() < 2
    {
        return vec![split];
    }
    let DataSplit {
        snapshot_id,
        partition,
        bucket,
        bucket_path,
        total_buckets,
        data_files,
        deletion_files,
        raw_convertible,
    } = split;
    let mut parts: Vec<DataSplit> = Vec::new();
    let mut files = Vec::new();
    let mut deletions = Vec::new();
    let mut bytes: i64 = 0;
    let count = data_files.len();
    for (i, file) in data_files.into_iter().enumerate() {
        bytes = bytes.saturating_add(file.file_size.max(0));
        files.push(file);
        deletions.push(
            deletion_files
                .as_ref()
                .and_then(|d| d.get(i).cloned().flatten()),
        );
        if bytes >= min_part_bytes || i + 1 == count {
            parts.push(DataSplit {
                snapshot_id,
                partition: partition.clone(),
                bucket,
                bucket_path: bucket_path.clone(),
                total_buckets,
                data_files: std::mem::take(&mut files),
                deletion_files: deletion_files
                    .as_ref()
                    .map(|_| std::mem::take(&mut deletions)),
                raw_convertible,
            });
            deletions.clear();
            bytes = 0;
        }
    }
    parts
}

/// A machine reading splits one after the other (for hosts without threads); the limit
/// applies to the whole read.
pub fn read_splits(ctx: Arc<ReadContext>, splits: Vec<DataSplit>) -> Machine<RecordBatch> {
    Machine::new("read_splits", move |io: Io<RecordBatch>| async move {
        let mut sink = Sink::new(&ctx, &io);
        for split in &splits {
            if sink.full() {
                break;
            }
            read_split_into(&io, &ctx, split, &mut sink).await?;
        }
        Ok(())
    })
}

async fn read_split_into(
    io: &Io<RecordBatch>,
    ctx: &ReadContext,
    split: &DataSplit,
    sink: &mut Sink<'_>,
) -> Result<()> {
    match ctx.table_kind {
        TableKind::Append if ctx.row_ranges.is_none() => {
            read_append_split(io, ctx, split, sink).await
        }
        // Files a compaction of a row-tracking table wrote store their row ids and have no
        // `first_row_id`: such splits are read whole and filtered by `_ROW_ID`.
        TableKind::Append if split.data_files.iter().any(|f| f.first_row_id.is_none()) => {
            read_append_split(io, ctx, split, sink).await
        }
        // Row-tracking append tables with row ranges read like data-evolution splits (every
        // file is its own row-id group).
        TableKind::Append | TableKind::DataEvolution => {
            crate::read::evolution::read_data_evolution_split(io, ctx, split, sink).await
        }
        TableKind::PrimaryKey if reads_raw(ctx, split) => {
            read_append_split(io, ctx, split, sink).await
        }
        TableKind::PrimaryKey => read_primary_key_split(io, ctx, split, sink).await,
    }
}

/// Whether a primary-key split is read file by file without merging: the planner marked it
/// raw-convertible (one file without delete rows, or files above level 0 that need no
/// merge) and every file records its delete row count (a file of an old writer without the
/// count may hold delete rows and is merged). Rows are then returned as stored, whatever
/// their row kind: pypaimon 2.1.0 records `deleteRowCount = 0` for files holding `-D`/`-U`
/// rows, and Java reads such a single file raw too, so its delete rows stay visible.
///
/// Source: Java `PrimaryKeyTableRawFileSplitReadProvider.match`.
fn reads_raw(ctx: &ReadContext, split: &DataSplit) -> bool {
    split.raw_convertible
        && split
            .data_files
            .iter()
            .all(|f| f.delete_row_count.is_some())
        && ctx
            .columns
            .iter()
            .all(|c| matches!(c, OutputColumn::Field(_)))
}

/// Append (and raw data-evolution) split: files in order; with row ranges (row-tracking
/// tables) only the rows whose `_ROW_ID` lies in them.
///
/// Row-tracking tables: `_ROW_ID` is the value a compaction stored in the file (a
/// `_ROW_ID` column listed in its `write_cols`), else `first_row_id + position`;
/// `_SEQUENCE_NUMBER` the stored value, else the file's `max_sequence_number` (Java
/// `DataFileRecordReader` / `ColumnarRowIterator#assignRowTracking`).
async fn read_append_split(
    io: &Io<RecordBatch>,
    ctx: &ReadContext,
    split: &DataSplit,
    sink: &mut Sink<'_>,
) -> Result<()> {
    let needed = ctx.needed_fields();
    let row_ranges = ctx.row_ranges.as_ref();
    let wants_row_id = ctx.columns.contains(&OutputColumn::RowId) || row_ranges.is_some();
    let wants_seq = ctx.columns.contains(&OutputColumn::SequenceNumber);
    let mut file_columns: Vec<FileColumn> = needed.into_iter().map(FileColumn::Field).collect();
    if wants_row_id {
        file_columns.push(FileColumn::Position);
        file_columns.push(FileColumn::Tracking(ROW_ID));
    }
    if wants_seq {
        file_columns.push(FileColumn::Tracking(SEQUENCE_NUMBER));
    }
    let spec = FileReadSpec::try_new(file_columns)?;
    for (i, file) in split.data_files.iter().enumerate() {
        if sink.full() {
            break;
        }
        let path = split.file_path(file);
        let mut reader = FileRead::open(
            io,
            &path,
            file,
            ctx.file_schema(file)?,
            &spec,
            deletion_file(split, i),
            ctx.batch_size,
        )
        .await?;
        while let Some(batch) = reader.next_batch(io).await? {
            let batch = add_row_tracking_columns(batch, file, &path, wants_row_id, wants_seq)?;
            let batch = match row_ranges {
                Some(index) => select_row_ranges(batch, index, &path)?,
                None => batch,
            };
            sink.push(batch).await?;
            if sink.full() {
                break;
            }
        }
    }
    Ok(())
}

/// The rows of `batch` (which has a `_ROW_ID` column) whose row id lies in `index`.
fn select_row_ranges(batch: RecordBatch, index: &RowRangeIndex, path: &str) -> Result<RecordBatch> {
    let ids = batch
        .column_by_name(ROW_ID)
        .and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>())
        .ok_or_else(|| Error::invalid(format!("read of {path} has no _ROW_ID column")))?;
    let keep: arrow_array::BooleanArray = ids
        .iter()
        .map(|id| Some(id.is_some_and(|id| index.contains(id))))
        .collect();
    arrow_select::filter::filter_record_batch(&batch, &keep)
        .map_err(|e| Error::arrow(format!("row ranges of {path}"), e))
}

/// Resolve the row-tracking columns of a batch read with [`FileColumn::Position`] and
/// [`FileColumn::Tracking`] columns: `_ROW_ID` keeps its stored values and takes
/// `first_row_id + position` where none is stored; `_SEQUENCE_NUMBER` keeps its stored
/// values and takes the file's `max_sequence_number` elsewhere. The position column is
/// dropped.
///
/// # Errors
/// [`Error::Corrupt`] when a row has no stored `_ROW_ID` and the file no `first_row_id`.
fn add_row_tracking_columns(
    batch: RecordBatch,
    file: &DataFileMeta,
    path: &str,
    row_id: bool,
    seq: bool,
) -> Result<RecordBatch> {
    use arrow_array::{Array, Int64Array};
    if !row_id && !seq {
        return Ok(batch);
    }
    let schema = batch.schema();
    let int64 = |name: &str| -> Result<Option<Int64Array>> {
        match schema.index_of(name) {
            Ok(i) => batch
                .column(i)
                .as_any()
                .downcast_ref::<Int64Array>()
                .cloned()
                .map(Some)
                .ok_or_else(|| Error::invalid(format!("column {name} of {path} is not Int64"))),
            Err(_) => Ok(None),
        }
    };
    let mut fields: Vec<Field> = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<arrow_array::ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        match f.name().as_str() {
            POSITION | ROW_ID | SEQUENCE_NUMBER => {}
            _ => {
                fields.push(f.as_ref().clone());
                columns.push(Arc::clone(c));
            }
        }
    }
    if row_id {
        let stored = int64(ROW_ID)?;
        let positions = int64(POSITION)?
            .ok_or_else(|| Error::invalid(format!("read of {path} has no position column")))?;
        let all_stored = stored.as_ref().is_some_and(|s| s.null_count() == 0);
        let ids: Int64Array = if all_stored {
            stored.unwrap_or_else(|| Int64Array::from(Vec::<i64>::new()))
        } else {
            let first = file.first_row_id.ok_or_else(|| {
                Error::corrupt(
                    path,
                    "manifest",
                    "data file of a row-tracking table without first_row_id nor stored _ROW_ID",
                )
            })?;
            (0..batch.num_rows())
                .map(|i| match &stored {
                    Some(s) if s.is_valid(i) => Ok(s.value(i)),
                    _ => first.checked_add(positions.value(i)).ok_or_else(|| {
                        Error::corrupt(path, "manifest", "row id overflows a BIGINT")
                    }),
                })
                .collect::<Result<Vec<i64>>>()?
                .into()
        };
        columns.push(Arc::new(ids));
        fields.push(Field::new(ROW_ID, arrow_schema::DataType::Int64, false));
    }
    if seq {
        let max = file.max_sequence_number;
        let seqs = match int64(SEQUENCE_NUMBER)? {
            Some(s) if s.null_count() == 0 => s,
            Some(s) => s.iter().map(|v| Some(v.unwrap_or(max))).collect(),
            None => Int64Array::from_value(max, batch.num_rows()),
        };
        columns.push(Arc::new(seqs));
        fields.push(Field::new(
            SEQUENCE_NUMBER,
            arrow_schema::DataType::Int64,
            false,
        ));
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| Error::arrow(format!("row tracking columns of {path}"), e))
}

/// Primary-key split: sections of overlapping files, each merged.
async fn read_primary_key_split(
    io: &Io<RecordBatch>,
    ctx: &ReadContext,
    split: &DataSplit,
    sink: &mut Sink<'_>,
) -> Result<()> {
    let config = ctx
        .merge
        .as_ref()
        .ok_or_else(|| Error::invalid("primary-key read without a merge configuration"))?;
    if ctx
        .columns
        .iter()
        .any(|c| !matches!(c, OutputColumn::Field(_)))
    {
        return Err(Error::unsupported(
            "_ROW_ID / _SEQUENCE_NUMBER columns on primary-key tables",
        ));
    }
    let key_names = config.trimmed_primary_keys();
    let key_fields: Vec<DataField> = key_names
        .iter()
        .map(|k| {
            ctx.schema
                .field(k)
                .cloned()
                .ok_or_else(|| Error::invalid(format!("primary key {k} is not a field")))
        })
        .collect::<Result<_>>()?;
    let needed: Vec<String> = ctx.needed_fields().into_iter().map(|f| f.name).collect();
    let value_names = config.read_fields(&needed);
    let value_fields: Vec<DataField> = value_names
        .iter()
        .map(|n| {
            ctx.schema
                .field(n)
                .cloned()
                .ok_or_else(|| Error::invalid(format!("merge field {n} is not a field")))
        })
        .collect::<Result<_>>()?;
    // File layout: key fields (read from their value columns, renamed _KEY_x), sequence,
    // kind, value fields.
    let mut file_columns: Vec<FileColumn> = Vec::new();
    for f in &key_fields {
        let mut k = f.clone();
        k.name = format!("_KEY_{}", f.name);
        file_columns.push(FileColumn::Field(k));
    }
    file_columns.push(FileColumn::System(SEQUENCE_NUMBER));
    file_columns.push(FileColumn::System(VALUE_KIND));
    file_columns.extend(value_fields.iter().cloned().map(FileColumn::Field));
    let spec = Arc::new(FileReadSpec::try_new(file_columns)?);
    let output_columns: Vec<usize> = needed
        .iter()
        .map(|n| {
            value_names
                .iter()
                .position(|v| v == n)
                .unwrap_or(usize::MAX)
        })
        .collect();
    if output_columns.contains(&usize::MAX) {
        return Err(Error::invalid("merge output column not among merge fields"));
    }

    // Sections and sorted runs.
    let key_types: Vec<_> = key_fields.iter().map(|f| f.data_type.clone()).collect();
    let mut keyed = Vec::with_capacity(split.data_files.len());
    for (i, f) in split.data_files.iter().enumerate() {
        let decode = |row: &crate::spec::BinaryRow| -> Result<Vec<crate::spec::Datum>> {
            if row.arity() == 0 {
                Ok(Vec::new())
            } else {
                row.fields(&key_types)
            }
        };
        keyed.push(KeyedFile {
            min_key: decode(&f.min_key)?,
            max_key: decode(&f.max_key)?,
            file: (i, f.clone()),
        });
    }
    let sections = interval_partition(keyed);
    for section in sections {
        if sink.full() {
            break;
        }
        let runs: Vec<Box<dyn RunSource>> = section
            .into_iter()
            .map(|run| {
                let files: Vec<RunFile> = run
                    .into_iter()
                    .map(|kf| {
                        let (i, f) = kf.file;
                        let schema = ctx.file_schema(&f)?.clone();
                        Ok(RunFile {
                            path: split.file_path(&f),
                            deletion: deletion_file(split, i).cloned(),
                            file: f,
                            schema,
                        })
                    })
                    .collect::<Result<_>>()?;
                Ok(Box::new(FileRunSource {
                    io: io.clone(),
                    spec: Arc::clone(&spec),
                    files: files.into_iter().collect(),
                    current: None,
                    batch_size: ctx.batch_size,
                    level: 0,
                }) as Box<dyn RunSource>)
            })
            .collect::<Result<_>>()?;
        let mut merge = MergeReader::try_new(
            config,
            Arc::clone(&spec.schema),
            output_columns.clone(),
            runs,
            ctx.batch_size,
        )?;
        while let Some(batch) = merge.next_batch().await? {
            sink.push(batch).await?;
            if sink.full() {
                break;
            }
        }
    }
    Ok(())
}

struct RunFile {
    path: String,
    file: DataFileMeta,
    schema: TableSchema,
    deletion: Option<DeletionFile>,
}

/// A sorted run read file after file.
struct FileRunSource {
    io: Io<RecordBatch>,
    spec: Arc<FileReadSpec>,
    files: std::collections::VecDeque<RunFile>,
    current: Option<FileRead>,
    batch_size: usize,
    /// Level of the file being read.
    level: i32,
}

impl RunSource for FileRunSource {
    fn batch_level(&self) -> i32 {
        self.level
    }

    fn next_batch(&mut self) -> BoxFuture<'_, Result<Option<RecordBatch>>> {
        Box::pin(async move {
            loop {
                if let Some(reader) = &mut self.current {
                    if let Some(b) = reader.next_batch(&self.io).await? {
                        return Ok(Some(b));
                    }
                    self.current = None;
                }
                let Some(f) = self.files.pop_front() else {
                    return Ok(None);
                };
                self.level = f.file.level;
                self.current = Some(
                    FileRead::open(
                        &self.io,
                        &f.path,
                        &f.file,
                        &f.schema,
                        &self.spec,
                        f.deletion.as_ref(),
                        self.batch_size,
                    )
                    .await?,
                );
            }
        })
    }
}
