//! The streaming k-way merge of sorted runs.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.SortMergeReaderWithLoserTree`,
//! `LoserTree` and `ReducerMergeFunctionWrapper`.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int8Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_buffer::ScalarBuffer;
use arrow_row::{OwnedRow, RowConverter, Rows, SortField};
use arrow_schema::{DataType, Schema, SchemaRef, SortOptions};

use super::config::MergeConfig;
use super::engine::{Engine, InputField};
use super::value::{Cell, Value, build_column};
use super::{RowKind, RunSource};
use crate::error::{Error, Result};

/// Default number of rows per output batch.
pub const DEFAULT_BATCH_SIZE: usize = 4096;

const NO_CURSOR: usize = usize::MAX;

/// The batch a cursor is positioned in, with its converted keys.
struct CursorBatch {
    batch: RecordBatch,
    keys: Rows,
    user_seq: Option<Rows>,
    seq: ScalarBuffer<i64>,
    kinds: ScalarBuffer<i8>,
    row: usize,
    /// Index of `batch` in the reader's window, once a record of it was taken.
    window: Option<usize>,
}

struct Cursor {
    source: Box<dyn RunSource>,
    current: Option<CursorBatch>,
}

/// One record of the current key group.
struct Rec {
    window: usize,
    row: usize,
    seq: i64,
    kind: RowKind,
    user_seq: Option<OwnedRow>,
}

/// A merged output row waiting to be built.
enum Pending {
    /// An input row of a window batch, unchanged.
    Row { window: usize, row: usize },
    /// A computed row: the values of the output columns.
    Computed(Vec<Value>),
}

/// Merges the sorted runs of one section (usually a bucket's split) into batches of merged
/// rows.
///
/// Input: one [`RunSource`] per sorted run. Every batch of every run has the columns of
/// `input_schema`: the key columns (`_KEY_<pk>` for each trimmed primary key, any Paimon
/// type), `_SEQUENCE_NUMBER` (Int64, no nulls), `_VALUE_KIND` (Int8, no nulls, 0..=3), then
/// the value columns named after their table fields (any subset of
/// [`MergeConfig::fields`] that contains [`MergeConfig::read_fields`] of the projection).
/// Rows of a run are sorted by key; equal keys inside a run are allowed (the higher
/// sequence number is newer).
///
/// Records are ordered by key, then the `sequence.field` values (nulls first; descending
/// values with `sequence.field.sort-order = descending`), then `_SEQUENCE_NUMBER`, then
/// retract before add; the records of one key are merged by the merge engine (a single
/// record passes through unchanged) and results whose row kind is `-U`/`-D` are dropped.
///
/// Output: batches of at most `batch_size` rows with the value columns listed in
/// `output_columns` (indexes into the input value columns), schema
/// [`MergeReader::schema`]. Memory: the current batch of each run plus the batches the
/// pending output rows refer to (bounded; compacted when it grows past
/// `2 × runs + 16` batches).
///
/// Source: Java `org.apache.paimon.mergetree.compact.SortMergeReaderWithLoserTree` with the
/// table's `MergeFunction` wrapped in `ReducerMergeFunctionWrapper`, and the drop of
/// non-add results in `MergeFileSplitRead`.
pub struct MergeReader {
    engine: Engine,
    value_offset: usize,
    input_schema: SchemaRef,
    output_schema: SchemaRef,
    output_columns: Vec<usize>,
    batch_size: usize,
    key_converter: RowConverter,
    /// Converter and value-column indexes of `sequence.field`.
    user_seq: Option<(RowConverter, Vec<usize>)>,
    cursors: Vec<Cursor>,
    /// Loser tree: `tree[0]` is the winner, `tree[1..]` the losers of the inner nodes.
    tree: Vec<usize>,
    started: bool,
    finished: bool,
    failed: bool,
    /// Batches referenced by the current group and the pending output rows.
    window: Vec<RecordBatch>,
    pending: Vec<Pending>,
    /// Already built parts of the next output batch.
    chunks: Vec<RecordBatch>,
    chunk_rows: usize,
    group: Vec<Rec>,
    group_key: Vec<u8>,
}

impl std::fmt::Debug for MergeReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergeReader")
            .field("runs", &self.cursors.len())
            .field("output_schema", &self.output_schema)
            .field("batch_size", &self.batch_size)
            .finish()
    }
}

impl MergeReader {
    /// Build a reader over `runs`.
    ///
    /// * `input_schema`: the schema of every input batch (see the type docs).
    /// * `output_columns`: indexes into the input value columns (0 = the column after
    ///   `_VALUE_KIND`), in output order.
    /// * `batch_size`: maximum rows per output batch (0 is treated as 1).
    ///
    /// # Errors
    /// [`Error::Invalid`] if the schema does not have the key-value layout of `config`
    /// (wrong key count, `_SEQUENCE_NUMBER`/`_VALUE_KIND` types, a value column that is not
    /// a table field, an output index out of range, a `sequence.field` not read) or the
    /// merge engine options are invalid (as Java's merge function factories);
    /// [`Error::Unsupported`] for an aggregate function or key type not supported.
    pub fn try_new(
        config: &MergeConfig,
        input_schema: SchemaRef,
        output_columns: Vec<usize>,
        runs: Vec<Box<dyn RunSource>>,
        batch_size: usize,
    ) -> Result<Self> {
        let key_count = config.trimmed_primary_keys().len();
        let fields = input_schema.fields();
        if fields.len() < key_count + 2 {
            return Err(Error::invalid(format!(
                "merge input has {} columns, expected at least {} key columns, _SEQUENCE_NUMBER and _VALUE_KIND",
                fields.len(),
                key_count
            )));
        }
        let seq_field = &fields[key_count];
        let kind_field = &fields[key_count + 1];
        if seq_field.data_type() != &DataType::Int64 {
            return Err(Error::invalid(format!(
                "merge input column {key_count} ({}) must be _SEQUENCE_NUMBER of type Int64, got {}",
                seq_field.name(),
                seq_field.data_type()
            )));
        }
        if kind_field.data_type() != &DataType::Int8 {
            return Err(Error::invalid(format!(
                "merge input column {} ({}) must be _VALUE_KIND of type Int8, got {}",
                key_count + 1,
                kind_field.name(),
                kind_field.data_type()
            )));
        }
        let value_offset = key_count + 2;
        let value_fields = &fields[value_offset..];
        let mut table_fields = Vec::with_capacity(value_fields.len());
        for f in value_fields {
            let tf = config
                .fields
                .iter()
                .find(|t| &t.name == f.name())
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "merge input value column '{}' is not a field of the table",
                        f.name()
                    ))
                })?;
            table_fields.push(tf);
        }
        let inputs: Vec<InputField<'_>> = table_fields
            .iter()
            .zip(value_fields)
            .map(|(t, f)| InputField {
                field: t,
                arrow: f.data_type(),
            })
            .collect();
        let engine = Engine::try_new(config, &inputs)?;
        for &c in &output_columns {
            if c >= value_fields.len() {
                return Err(Error::invalid(format!(
                    "merge output column {c} out of range: the input has {} value columns",
                    value_fields.len()
                )));
            }
        }
        let output_schema = Arc::new(Schema::new(
            output_columns
                .iter()
                .map(|c| Arc::clone(&value_fields[*c]))
                .collect::<Vec<_>>(),
        ));
        let key_converter = RowConverter::new(
            fields[..key_count]
                .iter()
                .map(|f| SortField::new(f.data_type().clone()))
                .collect(),
        )
        .map_err(|e| Error::unsupported(format!("merge: primary key types: {e}")))?;
        let user_seq = if config.sequence_fields.is_empty() {
            None
        } else {
            let opts = SortOptions {
                descending: !config.sequence_ascending,
                nulls_first: true,
            };
            let mut idx = Vec::new();
            let mut sort = Vec::new();
            for name in &config.sequence_fields {
                let i = value_fields
                    .iter()
                    .position(|f| f.name() == name)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "sequence.field '{name}' is not among the merge input value columns"
                        ))
                    })?;
                idx.push(i);
                sort.push(SortField::new_with_options(
                    value_fields[i].data_type().clone(),
                    opts,
                ));
            }
            let conv = RowConverter::new(sort)
                .map_err(|e| Error::unsupported(format!("merge: sequence.field types: {e}")))?;
            Some((conv, idx))
        };
        let cursors = runs
            .into_iter()
            .map(|source| Cursor {
                source,
                current: None,
            })
            .collect();
        Ok(MergeReader {
            engine,
            value_offset,
            input_schema,
            output_schema,
            output_columns,
            batch_size: batch_size.max(1),
            key_converter,
            user_seq,
            cursors,
            tree: Vec::new(),
            started: false,
            finished: false,
            failed: false,
            window: Vec::new(),
            pending: Vec::new(),
            chunks: Vec::new(),
            chunk_rows: 0,
            group: Vec::new(),
            group_key: Vec::new(),
        })
    }

    /// Schema of the output batches: the projected value columns.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.output_schema)
    }

    /// The next batch of merged rows, `None` when all runs are exhausted.
    ///
    /// # Errors
    /// Errors of the run sources; [`Error::Invalid`] for a batch that does not match the
    /// input schema or a run whose keys go backwards; [`Error::Corrupt`] for a null or
    /// unknown `_VALUE_KIND`/null `_SEQUENCE_NUMBER`; merge engine errors (retract input
    /// to first-row or partial-update without the options that allow it, arithmetic
    /// overflow of `sum`/`product`, unsupported retraction...).
    ///
    /// An error is final: later calls return [`Error::Invalid`].
    pub async fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.failed {
            return Err(Error::invalid(
                "merge: next_batch called after the merge reader failed",
            ));
        }
        let out = self.advance().await;
        if out.is_err() {
            self.failed = true;
            self.pending.clear();
            self.chunks.clear();
            self.window.clear();
            self.group.clear();
        }
        out
    }

    async fn advance(&mut self) -> Result<Option<RecordBatch>> {
        if !self.started {
            self.started = true;
            for i in 0..self.cursors.len() {
                self.load(i).await?;
            }
            let k = self.cursors.len();
            self.tree = vec![NO_CURSOR; k];
            for i in (0..k).rev() {
                self.adjust(i);
            }
        }
        loop {
            if self.chunk_rows + self.pending.len() >= self.batch_size {
                return self.flush().map(Some);
            }
            if self.finished {
                if self.chunk_rows + self.pending.len() > 0 {
                    return self.flush().map(Some);
                }
                return Ok(None);
            }
            let w = self.tree.first().copied().unwrap_or(NO_CURSOR);
            let Some(cb) = self.cursors.get(w).and_then(|c| c.current.as_ref()) else {
                self.finish_group()?;
                self.finished = true;
                continue;
            };
            let key = cb.keys.row(cb.row);
            if !self.group.is_empty() && key.data() != self.group_key.as_slice() {
                self.finish_group()?;
                continue;
            }
            if self.group.is_empty() {
                self.group_key.clear();
                self.group_key.extend_from_slice(key.data());
            }
            self.take(w)?;
            let exhausted = match self.cursors[w].current.as_mut() {
                Some(cb) => {
                    cb.row += 1;
                    cb.row >= cb.batch.num_rows()
                }
                None => true,
            };
            if exhausted {
                self.load(w).await?;
            }
            self.adjust(w);
        }
    }

    /// Move the winner's current record into the group.
    fn take(&mut self, w: usize) -> Result<()> {
        let Some(cb) = self.cursors[w].current.as_mut() else {
            return Ok(());
        };
        let window = match cb.window {
            Some(i) => i,
            None => {
                self.window.push(cb.batch.clone());
                cb.window = Some(self.window.len() - 1);
                self.window.len() - 1
            }
        };
        let kind = RowKind::from_byte(cb.kinds[cb.row]).ok_or_else(|| {
            Error::corrupt(
                format!("sorted run {w}"),
                "key-value",
                format!(
                    "Unsupported byte value {} for _VALUE_KIND",
                    cb.kinds[cb.row]
                ),
            )
        })?;
        self.group.push(Rec {
            window,
            row: cb.row,
            seq: cb.seq[cb.row],
            kind,
            user_seq: cb.user_seq.as_ref().map(|r| r.row(cb.row).owned()),
        });
        Ok(())
    }

    /// Load the next non-empty batch of run `i` (or mark it exhausted).
    async fn load(&mut self, i: usize) -> Result<()> {
        let previous_last = self.cursors[i].current.as_ref().and_then(|cb| {
            cb.batch
                .num_rows()
                .checked_sub(1)
                .map(|r| cb.keys.row(r).owned())
        });
        self.cursors[i].current = None;
        loop {
            let Some(batch) = self.cursors[i].source.next_batch().await? else {
                return Ok(());
            };
            if batch.num_rows() == 0 {
                continue;
            }
            let cb = self.prepare(i, batch)?;
            if let Some(prev) = &previous_last
                && cb.keys.row(0) < prev.row()
            {
                return Err(Error::invalid(format!(
                    "merge: sorted run {i} is not sorted by key across batches"
                )));
            }
            self.cursors[i].current = Some(cb);
            return Ok(());
        }
    }

    fn prepare(&self, run: usize, batch: RecordBatch) -> Result<CursorBatch> {
        let expected = self.input_schema.fields();
        if batch.num_columns() != expected.len() {
            return Err(Error::invalid(format!(
                "merge: a batch of sorted run {run} has {} columns, expected {}",
                batch.num_columns(),
                expected.len()
            )));
        }
        for (i, (col, f)) in batch.columns().iter().zip(expected.iter()).enumerate() {
            if col.data_type() != f.data_type() {
                return Err(Error::invalid(format!(
                    "merge: column {i} ({}) of a batch of sorted run {run} has type {}, expected {}",
                    f.name(),
                    col.data_type(),
                    f.data_type()
                )));
            }
        }
        let key_count = self.value_offset - 2;
        let seq_col = batch.column(key_count);
        let kind_col = batch.column(key_count + 1);
        if seq_col.null_count() > 0 || kind_col.null_count() > 0 {
            return Err(Error::corrupt(
                format!("sorted run {run}"),
                "key-value",
                "null _SEQUENCE_NUMBER or _VALUE_KIND",
            ));
        }
        let seq = seq_col.as_primitive::<Int64Type>().values().clone();
        let kinds = kind_col.as_primitive::<Int8Type>().values().clone();
        let keys = self
            .key_converter
            .convert_columns(&batch.columns()[..key_count])
            .map_err(|e| Error::arrow("merge: converting primary keys", e))?;
        for r in 1..keys.num_rows() {
            if keys.row(r) < keys.row(r - 1) {
                return Err(Error::invalid(format!(
                    "merge: sorted run {run} is not sorted by key (row {r} of a batch is smaller than row {})",
                    r - 1
                )));
            }
        }
        let user_seq = match &self.user_seq {
            None => None,
            Some((conv, idx)) => {
                let cols: Vec<ArrayRef> = idx
                    .iter()
                    .map(|i| Arc::clone(batch.column(self.value_offset + i)))
                    .collect();
                Some(
                    conv.convert_columns(&cols)
                        .map_err(|e| Error::arrow("merge: converting sequence.field", e))?,
                )
            }
        };
        Ok(CursorBatch {
            batch,
            keys,
            user_seq,
            seq,
            kinds,
            row: 0,
            window: None,
        })
    }

    /// Record order of the current heads of cursors `a` and `b`; exhausted cursors last.
    fn beats(&self, a: usize, b: usize) -> bool {
        if a == NO_CURSOR {
            return b != NO_CURSOR;
        }
        if b == NO_CURSOR {
            return false;
        }
        let (ca, cb) = (&self.cursors[a].current, &self.cursors[b].current);
        let (x, y) = match (ca, cb) {
            (None, _) => return false,
            (Some(_), None) => return true,
            (Some(x), Some(y)) => (x, y),
        };
        let mut o = x.keys.row(x.row).cmp(&y.keys.row(y.row));
        if o == Ordering::Equal
            && let (Some(ux), Some(uy)) = (&x.user_seq, &y.user_seq)
        {
            o = ux.row(x.row).cmp(&uy.row(y.row));
        }
        if o == Ordering::Equal {
            o = x.seq[x.row].cmp(&y.seq[y.row]);
        }
        if o == Ordering::Equal {
            let add = |k: i8| RowKind::from_byte(k).is_some_and(RowKind::is_add);
            o = add(x.kinds[x.row]).cmp(&add(y.kinds[y.row]));
        }
        match o {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => a < b,
        }
    }

    /// Replay the path of leaf `leaf` after its head changed.
    fn adjust(&mut self, leaf: usize) {
        let k = self.cursors.len();
        let mut winner = leaf;
        let mut node = (leaf + k) / 2;
        while node > 0 {
            let stored = self.tree[node];
            // An unset node (NO_CURSOR during the build) beats everything.
            let stored_wins = if stored == NO_CURSOR {
                winner != NO_CURSOR
            } else {
                winner != NO_CURSOR && self.beats(stored, winner)
            };
            if stored_wins {
                self.tree[node] = winner;
                winner = stored;
            }
            node /= 2;
        }
        if let Some(t) = self.tree.get_mut(0) {
            *t = winner;
        }
    }

    fn values_of(&self, rec: &Rec) -> Vec<Value> {
        let batch = &self.window[rec.window];
        batch.columns()[self.value_offset..]
            .iter()
            .map(|c| Value::at(c, rec.row))
            .collect()
    }

    /// Merge the current group and queue its result.
    fn finish_group(&mut self) -> Result<()> {
        if self.group.is_empty() {
            return Ok(());
        }
        let mut group = std::mem::take(&mut self.group);
        if group.len() > 1 {
            group.sort_by(|a, b| {
                a.user_seq
                    .cmp(&b.user_seq)
                    .then(a.seq.cmp(&b.seq))
                    .then(a.kind.is_add().cmp(&b.kind.is_add()))
            });
        }
        let result = if group.len() == 1 {
            let r = &group[0];
            r.kind.is_add().then_some(Pending::Row {
                window: r.window,
                row: r.row,
            })
        } else {
            match &mut self.engine {
                Engine::Deduplicate { ignore_delete } => {
                    let ignore = *ignore_delete;
                    group
                        .iter()
                        .rev()
                        .find(|r| !(ignore && r.kind.is_retract()))
                        .filter(|r| r.kind.is_add())
                        .map(|r| Pending::Row {
                            window: r.window,
                            row: r.row,
                        })
                }
                Engine::FirstRow { ignore_delete } => {
                    if !*ignore_delete && group.iter().any(|r| r.kind.is_retract()) {
                        return Err(Error::invalid(
                            "By default, First row merge engine can not accept DELETE/UPDATE_BEFORE records.\nYou can config 'ignore-delete' to ignore the DELETE/UPDATE_BEFORE records.",
                        ));
                    }
                    group
                        .iter()
                        .find(|r| r.kind.is_add())
                        .map(|r| Pending::Row {
                            window: r.window,
                            row: r.row,
                        })
                }
                Engine::PartialUpdate(_) | Engine::Aggregate(_) => {
                    let inputs: Vec<(RowKind, Vec<Value>)> =
                        group.iter().map(|r| (r.kind, self.values_of(r))).collect();
                    let records = inputs.into_iter().map(Ok);
                    let (kind, row) = match &mut self.engine {
                        Engine::PartialUpdate(p) => p.merge(records)?,
                        Engine::Aggregate(a) => a.merge(records)?,
                        _ => return Ok(()),
                    };
                    kind.is_add().then(|| {
                        Pending::Computed(
                            self.output_columns
                                .iter()
                                .map(|c| row[*c].clone())
                                .collect(),
                        )
                    })
                }
            }
        };
        // Keep the group's allocation for the next key.
        group.clear();
        self.group = group;
        if let Some(p) = result {
            self.pending.push(p);
        }
        // Bound the batches kept alive by pending rows.
        if self.window.len() > 2 * self.cursors.len() + 16 && !self.pending.is_empty() {
            let chunk = self.build_pending()?;
            self.chunk_rows += chunk.num_rows();
            self.chunks.push(chunk);
        }
        Ok(())
    }

    /// Build the pending rows into a batch and release the window.
    fn build_pending(&mut self) -> Result<RecordBatch> {
        let pending = std::mem::take(&mut self.pending);
        let mut columns = Vec::with_capacity(self.output_columns.len());
        for (j, &c) in self.output_columns.iter().enumerate() {
            let bases: Vec<ArrayRef> = self
                .window
                .iter()
                .map(|b| Arc::clone(b.column(self.value_offset + c)))
                .collect();
            let dt = self.output_schema.field(j).data_type();
            let cells = pending.iter().map(|p| match p {
                Pending::Row { window, row } => Cell::Base(*window, *row),
                Pending::Computed(values) => Cell::Val(&values[j]),
            });
            columns.push(build_column(dt, &bases, cells)?);
        }
        self.window.clear();
        for c in &mut self.cursors {
            if let Some(cb) = c.current.as_mut() {
                cb.window = None;
            }
        }
        RecordBatch::try_new_with_options(
            Arc::clone(&self.output_schema),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(pending.len())),
        )
        .map_err(|e| Error::arrow("merge: building an output batch", e))
    }

    fn flush(&mut self) -> Result<RecordBatch> {
        let last = self.build_pending()?;
        if self.chunks.is_empty() {
            return Ok(last);
        }
        let mut parts = std::mem::take(&mut self.chunks);
        self.chunk_rows = 0;
        parts.push(last);
        arrow_select::concat::concat_batches(&self.output_schema, &parts)
            .map_err(|e| Error::arrow("merge: concatenating output", e))
    }
}
