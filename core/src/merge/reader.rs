//! The streaming k-way merge of sorted runs.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.SortMergeReaderWithLoserTree`,
//! `LoserTree` and `ReducerMergeFunctionWrapper`.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Int8Type, Int16Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_row::{OwnedRow, Row, RowConverter, Rows, SortField};
use arrow_schema::{DataType, Schema, SchemaRef, SortOptions, TimeUnit};

use super::config::MergeConfig;
use super::engine::{Deferred, Engine, FillInput, GroupView, InputField};
use super::value::{ColumnBuilder, OutCell, Value};
use super::{RowKind, RunSource};
use crate::error::{Error, Result};

mod group;
mod window;

use window::window_of;

/// Default number of rows per output batch.
pub const DEFAULT_BATCH_SIZE: usize = 4096;

const NO_CURSOR: usize = usize::MAX;

/// Name of the Boolean column that marks changelog records in the output of a merge with
/// changelog ([`MergeReader::with_compaction_lookup`]).
pub const CHANGELOG_COLUMN: &str = "_CHANGELOG";

/// The primary keys of one batch in comparable form.
enum Keys {
    /// A single integer-like key column widened to i64 (nulls, never in valid data, sort
    /// first as in `arrow-row`).
    Int {
        values: ScalarBuffer<i64>,
        nulls: Option<NullBuffer>,
    },
    /// Any key types: `arrow-row` byte strings.
    Rows(Rows),
}

/// One key of a [`Keys`]; keys of one reader are all of the same variant.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum KeyRef<'a> {
    Int(Option<i64>),
    Row(Row<'a>),
}

impl Keys {
    fn get(&self, i: usize) -> KeyRef<'_> {
        match self {
            Keys::Int { values, nulls } => KeyRef::Int(match nulls {
                Some(n) if n.is_null(i) => None,
                _ => Some(values[i]),
            }),
            Keys::Rows(rows) => KeyRef::Row(rows.row(i)),
        }
    }

    /// The first row `r > 0` whose key is smaller than the key of row `r - 1`.
    fn unsorted_at(&self, len: usize) -> Option<usize> {
        if let Keys::Int {
            values,
            nulls: None,
        } = self
        {
            return values.windows(2).position(|w| w[1] < w[0]).map(|r| r + 1);
        }
        (1..len).find(|r| self.get(*r) < self.get(r - 1))
    }
}

/// A key kept across batches (the current group's key).
enum OwnedKey {
    Int(Option<i64>),
    Bytes(Vec<u8>),
}

impl OwnedKey {
    fn set(&mut self, k: KeyRef<'_>) {
        match (self, k) {
            (OwnedKey::Bytes(b), KeyRef::Row(r)) => {
                b.clear();
                b.extend_from_slice(r.data());
            }
            (this, KeyRef::Row(r)) => *this = OwnedKey::Bytes(r.data().to_vec()),
            (this, KeyRef::Int(v)) => *this = OwnedKey::Int(v),
        }
    }

    /// Order of this key against `k` (keys of one reader have one variant).
    fn cmp_ref(&self, k: KeyRef<'_>) -> Ordering {
        match (self, k) {
            (OwnedKey::Int(a), KeyRef::Int(b)) => a.cmp(&b),
            (OwnedKey::Bytes(a), KeyRef::Row(r)) => a.as_slice().cmp(r.data()),
            (OwnedKey::Int(_), KeyRef::Row(_)) => Ordering::Less,
            (OwnedKey::Bytes(_), KeyRef::Int(_)) => Ordering::Greater,
        }
    }
}

/// How a reader turns key columns into [`Keys`].
enum KeyMode {
    Int,
    Rows(RowConverter),
}

/// Whether a single key column of type `dt` is compared as a widened integer.
fn is_int_key(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Date32
            | DataType::Timestamp(_, _)
    )
}

fn int_keys(col: &ArrayRef) -> Option<Keys> {
    fn widen<T>(v: &[T]) -> ScalarBuffer<i64>
    where
        T: Copy + Into<i64>,
    {
        v.iter().map(|x| (*x).into()).collect::<Vec<i64>>().into()
    }
    let values = match col.data_type() {
        DataType::Int8 => widen(col.as_primitive_opt::<Int8Type>()?.values()),
        DataType::Int16 => widen(col.as_primitive_opt::<Int16Type>()?.values()),
        DataType::Int32 => widen(col.as_primitive_opt::<Int32Type>()?.values()),
        DataType::Date32 => widen(col.as_primitive_opt::<Date32Type>()?.values()),
        DataType::Int64 => col.as_primitive_opt::<Int64Type>()?.values().clone(),
        DataType::Timestamp(TimeUnit::Second, _) => col
            .as_primitive_opt::<TimestampSecondType>()?
            .values()
            .clone(),
        DataType::Timestamp(TimeUnit::Millisecond, _) => col
            .as_primitive_opt::<TimestampMillisecondType>()?
            .values()
            .clone(),
        DataType::Timestamp(TimeUnit::Microsecond, _) => col
            .as_primitive_opt::<TimestampMicrosecondType>()?
            .values()
            .clone(),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => col
            .as_primitive_opt::<TimestampNanosecondType>()?
            .values()
            .clone(),
        _ => return None,
    };
    Some(Keys::Int {
        values,
        nulls: col.nulls().filter(|n| n.null_count() > 0).cloned(),
    })
}

/// The batch a cursor is positioned in, with its converted keys.
struct CursorBatch {
    batch: RecordBatch,
    keys: Keys,
    user_seq: Option<Rows>,
    seq: ScalarBuffer<i64>,
    kinds: ScalarBuffer<i8>,
    row: usize,
    /// Index of `batch` in the reader's window, once a record of it was taken.
    window: Option<usize>,
    /// Level of the data file the batch came from ([`RunSource::batch_level`]).
    level: i32,
    /// Data file and file position of each row ([`RunSource::batch_positions`]), kept for
    /// lookup-only runs of compactions that mark deletion vectors.
    origin: Option<(Arc<str>, ScalarBuffer<i64>)>,
}

struct Cursor {
    source: Box<dyn RunSource>,
    current: Option<CursorBatch>,
}

/// One record of the current key group.
#[derive(Clone)]
struct Rec {
    window: usize,
    row: usize,
    seq: i64,
    kind: RowKind,
    user_seq: Option<OwnedRow>,
    /// Level of the record's data file.
    level: i32,
    /// The record comes from a lookup-only run ([`MergeReader::with_compaction_lookup`]).
    lookup: bool,
    /// Data file and file position of a lookup-only record
    /// ([`MergeReader::with_deletion_vector_marks`]).
    origin: Option<(Arc<str>, i64)>,
}

/// What a key group merges into.
enum Merged {
    /// Nothing (a retraction, or a merge result that is not an add).
    Dropped,
    /// An input row of a window batch, unchanged.
    Row { window: usize, row: usize },
    /// The cells in the reader's `cells` scratch list, one per output column.
    Cells,
    /// Deferred group `.0` (see [`Deferred`]).
    Deferred(usize),
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
/// Cost: keys that only one run holds at a time pass through as slices of their batch
/// (no per-row merge work); a single integer-like key is compared natively; the groups of
/// `partial-update` without sequence groups and of `aggregation` with value-selecting
/// functions and numeric `sum`/`max`/`min` are deferred and merged column by column, when
/// the output batch is built, into references to input rows (sums of two or more values
/// are computed natively).
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
    key_mode: KeyMode,
    /// Converter and value-column indexes of `sequence.field`.
    user_seq: Option<(RowConverter, Vec<usize>)>,
    cursors: Vec<Cursor>,
    /// Loser tree: `tree[0]` is the winner, `tree[1..]` the losers of the inner nodes.
    tree: Vec<usize>,
    /// Head key of every cursor as an order-preserving integer (integer keys: the key, a
    /// null key `i128::MIN`, an exhausted run `i128::MAX`; other keys: 0, no order).
    heads: Vec<i128>,
    /// `_SEQUENCE_NUMBER` of every cursor's head (integer keys, no `sequence.field`; else 0):
    /// the order of heads with equal keys.
    head_seqs: Vec<i64>,
    started: bool,
    finished: bool,
    failed: bool,
    /// Use the pass-through and column-wise fast paths (tests compare against `false`).
    fast: bool,
    /// Batches referenced by the current group and the pending output rows.
    window: Vec<RecordBatch>,
    /// The null buffers of the value columns of each window batch (`None`: no nulls), one
    /// per value column, window batch after window batch.
    window_nulls: Vec<Option<NullBuffer>>,
    /// The pending output rows, column by column (bases: the window batches' columns).
    columns: Vec<ColumnBuilder<'static>>,
    /// Rows in `columns`.
    pending_rows: usize,
    /// Scratch cells of a computed row.
    cells: Vec<OutCell>,
    /// Already built parts of the next output batch.
    chunks: Vec<RecordBatch>,
    chunk_rows: usize,
    group: Vec<Rec>,
    group_key: OwnedKey,
    /// Scratch (window, row) list of the group, for the column-wise fast paths.
    group_rows: Vec<(usize, usize)>,
    /// The deferred groups of the pending rows (their cells: [`ColumnBuilder::push_deferred`]).
    deferred: Deferred,
    /// Key-value output ([`MergeReader::with_key_value_output`]): the key, sequence number
    /// and row kind of every pending row.
    kv: Option<KvOutput>,
    /// Row kind of the last [`Merged::Cells`] result.
    cells_kind: RowKind,
    /// [`MergeConfig::lookup`]: merge a key's level-0 records and its lowest positive-level
    /// record only.
    lookup_merge: bool,
    /// Compactions of lookup tables and compactions with changelog
    /// ([`MergeReader::with_compaction_lookup`]).
    special: Option<CompactionLookup>,
    /// Treat retract results as results while merging a group (changelog needs them).
    force_keep: bool,
    /// [`MergeReader::with_deletion_vector_marks`]: the file positions of lookup hits, by
    /// data file name.
    marks: Option<BTreeMap<Arc<str>, Vec<u64>>>,
    /// A lookup hit to mark had no file position.
    unmarkable: bool,
}

/// How a compaction derives changelog from a key's records.
///
/// Source: Java `LookupChangelogMergeFunctionWrapper`, `FullChangelogMergeFunctionWrapper`,
/// `FirstRowMergeFunctionWrapper`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangelogMode {
    /// `changelog-producer = lookup`: for a key with level-0 records, the before image is
    /// the record of the lowest positive level (among the inputs, else the lookup hit) and
    /// the after image the merge result: `+I` (no before, or a retract before), `-D` (the
    /// result is a retraction), `-U` + `+U` otherwise. First-row tables emit `+I` for keys
    /// no positive level holds.
    Lookup,
    /// `changelog-producer = full-compaction` (the compaction outputs to `max_level`): the
    /// before image is the key's record at `max_level`, the after image the merge of all its
    /// records, with the same four cases.
    FullCompaction {
        /// The bucket's max level.
        max_level: i32,
    },
}

/// State of [`MergeReader::with_compaction_lookup`].
#[derive(Debug, Clone, Copy)]
struct CompactionLookup {
    /// Runs with this index or higher are lookup-only.
    lookup_from: usize,
    changelog: Option<ChangelogMode>,
    first_row: bool,
}

/// What [`MergeReader::take_deletion_vector_marks`] returns: file positions (ascending,
/// distinct) of lookup hits by data file name.
pub type DeletionVectorMarks = BTreeMap<Arc<str>, Vec<u64>>;

/// The key-value columns of the pending rows (compaction output).
#[derive(Default)]
struct KvOutput {
    /// Keep results that are retractions (`-U`/`-D`) instead of dropping them.
    keep_retract: bool,
    /// (window batch, row) each pending row takes its key columns from.
    src: Vec<(usize, usize)>,
    /// `_SEQUENCE_NUMBER` of each pending row.
    seq: Vec<i64>,
    /// `_VALUE_KIND` byte of each pending row.
    kind: Vec<i8>,
    /// Changelog mode: whether each pending row is a changelog record (`_CHANGELOG`).
    changelog: Option<Vec<bool>>,
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
        let key_mode = if key_count == 1 && is_int_key(fields[0].data_type()) {
            KeyMode::Int
        } else {
            KeyMode::Rows(
                RowConverter::new(
                    fields[..key_count]
                        .iter()
                        .map(|f| SortField::new(f.data_type().clone()))
                        .collect(),
                )
                .map_err(|e| Error::unsupported(format!("merge: primary key types: {e}")))?,
            )
        };
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
        let columns = output_columns
            .iter()
            .map(|_| ColumnBuilder::default())
            .collect();
        Ok(MergeReader {
            engine,
            value_offset,
            input_schema,
            output_schema,
            output_columns,
            batch_size: batch_size.max(1),
            key_mode,
            user_seq,
            cursors,
            tree: Vec::new(),
            heads: Vec::new(),
            head_seqs: Vec::new(),
            started: false,
            finished: false,
            failed: false,
            fast: true,
            window: Vec::new(),
            window_nulls: Vec::new(),
            columns,
            pending_rows: 0,
            cells: Vec::new(),
            chunks: Vec::new(),
            chunk_rows: 0,
            group: Vec::new(),
            group_key: OwnedKey::Int(None),
            group_rows: Vec::new(),
            deferred: Deferred::default(),
            kv: None,
            cells_kind: RowKind::Insert,
            lookup_merge: config.lookup,
            special: None,
            force_keep: false,
            marks: None,
            unmarkable: false,
        })
    }

    /// Emit key-value records instead of value rows: output batches get the input's key
    /// columns, `_SEQUENCE_NUMBER` and `_VALUE_KIND` before the output value columns (the
    /// layout of a key-value data file when the output columns are every value column).
    ///
    /// Each merged record keeps the sequence number and row kind of the input record it
    /// is (a single record, the `deduplicate` / `first-row` pick), or, for results computed
    /// by `partial-update` / `aggregation`, the sequence number of the key's last record and
    /// the engine's result kind. With `keep_retract`, results that are retractions are
    /// emitted too (a compaction whose output is not the oldest data keeps its deletes);
    /// otherwise they are dropped, as in a read.
    ///
    /// Call before the first [`MergeReader::next_batch`].
    ///
    /// Source: Java `MergeTreeCompactRewriter#rewriteCompaction` (the merged `KeyValue`s,
    /// wrapped in a `DropDeleteReader` when deletes may be dropped).
    pub fn with_key_value_output(mut self, keep_retract: bool) -> Self {
        let key_count = self.value_offset;
        let fields = self.input_schema.fields();
        let mut out: Vec<arrow_schema::FieldRef> = fields[..key_count].to_vec();
        out.extend(self.output_schema.fields().iter().cloned());
        self.output_schema = Arc::new(Schema::new(out));
        self.kv = Some(KvOutput {
            keep_retract,
            ..KvOutput::default()
        });
        self
    }

    /// Compaction of a lookup table, or with changelog: the last `lookup_runs` of the runs
    /// are lookup-only (the bucket's files above the output level), and `changelog` says
    /// how changelog records are derived.
    ///
    /// * A key that only lookup-only runs hold is skipped.
    /// * `first-row`: a key that a lookup-only run holds is dropped, unless an input of a
    ///   positive level holds it (Java keeps the merge result then).
    /// * Other engines with [`MergeConfig::lookup`]: a key without an input record of a
    ///   positive level merges the lookup hit of the lowest level with its level-0 records
    ///   (Java's `LookupMergeFunction#insertInto`).
    /// * With `changelog`, output batches get a last column `_CHANGELOG` (Boolean, no nulls):
    ///   `true` rows are changelog records (key, sequence number, row kind and values of the
    ///   before or after image, see [`ChangelogMode`]) in key order, `false` rows the merged
    ///   records as without it.
    ///
    /// Turns the fast paths off (every key is merged as a group). Call after
    /// [`MergeReader::with_key_value_output`] and before the first
    /// [`MergeReader::next_batch`].
    ///
    /// # Errors
    /// [`Error::Invalid`] without key-value output or with more lookup runs than runs.
    ///
    /// Source: Java `LookupMergeTreeCompactRewriter` / `FullChangelogMergeTreeCompactRewriter`
    /// with their merge function wrappers.
    pub fn with_compaction_lookup(
        mut self,
        lookup_runs: usize,
        changelog: Option<ChangelogMode>,
    ) -> Result<Self> {
        let Some(kv) = self.kv.as_mut() else {
            return Err(Error::invalid(
                "merge: compaction lookup needs key-value output",
            ));
        };
        let Some(lookup_from) = self.cursors.len().checked_sub(lookup_runs) else {
            return Err(Error::invalid(format!(
                "merge: {lookup_runs} lookup runs but only {} runs",
                self.cursors.len()
            )));
        };
        if changelog.is_some() {
            kv.changelog = Some(Vec::new());
            let mut fields: Vec<arrow_schema::FieldRef> =
                self.output_schema.fields().iter().cloned().collect();
            fields.push(Arc::new(arrow_schema::Field::new(
                CHANGELOG_COLUMN,
                DataType::Boolean,
                false,
            )));
            self.output_schema = Arc::new(Schema::new(fields));
        }
        self.special = Some(CompactionLookup {
            lookup_from,
            changelog,
            first_row: matches!(self.engine, Engine::FirstRow { .. }),
        });
        self.fast = false;
        Ok(self)
    }

    /// Deletion-vector mode of a compaction with lookup-only runs: a key that no input of a
    /// positive level holds but a lookup-only run does has its record there (the lowest
    /// such level) marked deleted, since the merge result replaces it. The lookup-only runs
    /// must report [`RunSource::batch_positions`]; the marks are taken with
    /// [`MergeReader::take_deletion_vector_marks`]. Call after
    /// [`MergeReader::with_compaction_lookup`].
    ///
    /// # Errors
    /// [`Error::Invalid`] without [`MergeReader::with_compaction_lookup`].
    ///
    /// Source: Java `LookupChangelogMergeFunctionWrapper` with a `BucketedDvMaintainer`
    /// (`notifyNewDeletion` of the lookup hit's file and row position).
    pub fn with_deletion_vector_marks(mut self) -> Result<Self> {
        if self.special.is_none() {
            return Err(Error::invalid(
                "merge: deletion-vector marks need a compaction lookup",
            ));
        }
        self.marks = Some(BTreeMap::new());
        Ok(self)
    }

    /// The marks collected so far ([`MergeReader::with_deletion_vector_marks`]); complete
    /// once [`MergeReader::next_batch`] returned `None`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when a lookup hit came from a run that does not report positions.
    pub fn take_deletion_vector_marks(&mut self) -> Result<DeletionVectorMarks> {
        let mut marks = self.marks.take().unwrap_or_default();
        for positions in marks.values_mut() {
            positions.sort_unstable();
            positions.dedup();
        }
        self.marks = Some(BTreeMap::new());
        if self.unmarkable {
            return Err(Error::invalid(
                "merge: a lookup hit of a deletion-vector compaction has no file position",
            ));
        }
        Ok(marks)
    }

    /// Turn the pass-through and column-wise fast paths off (tests compare both ways).
    #[cfg(test)]
    pub(crate) fn set_fast_paths(&mut self, on: bool) {
        self.fast = on;
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
            for c in &mut self.columns {
                *c = ColumnBuilder::default();
            }
            self.pending_rows = 0;
            self.chunks.clear();
            self.window.clear();
            self.window_nulls.clear();
            self.deferred.clear();
            self.group.clear();
            if let Some(kv) = &mut self.kv {
                kv.src.clear();
                kv.seq.clear();
                kv.kind.clear();
                if let Some(flags) = &mut kv.changelog {
                    flags.clear();
                }
            }
        }
        out
    }

    async fn advance(&mut self) -> Result<Option<RecordBatch>> {
        if !self.started {
            self.started = true;
            // Every run's first batch at once: the runs' files open, fetch and decode side by
            // side (one IO round for all their footers, one for their first column chunks)
            // instead of one file after the other.
            let firsts = futures_util::future::join_all(
                self.cursors.iter_mut().map(|c| c.source.next_batch()),
            )
            .await;
            for (i, first) in firsts.into_iter().enumerate() {
                self.load_from(i, Some(first?)).await?;
            }
            let k = self.cursors.len();
            self.tree = vec![NO_CURSOR; k];
            self.heads = vec![0; k];
            self.head_seqs = vec![0; k];
            for i in (0..k).rev() {
                self.adjust(i);
            }
        }
        loop {
            if self.chunk_rows + self.pending_rows >= self.batch_size {
                return self.flush().map(Some);
            }
            if self.finished {
                if self.chunk_rows + self.pending_rows > 0 {
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
            let key = cb.keys.get(cb.row);
            if !self.group.is_empty() {
                if self.group_key.cmp_ref(key) != Ordering::Equal {
                    self.finish_group()?;
                    continue;
                }
            } else {
                if self.fast {
                    let start = cb.row;
                    let end = self.pass_through_end(w);
                    if end > start {
                        self.pass_through(w, end)?;
                        continue;
                    }
                }
                // `cb` borrows the cursors; `group_key` is a distinct field.
                let Some(cb) = self.cursors.get(w).and_then(|c| c.current.as_ref()) else {
                    continue;
                };
                self.group_key.set(cb.keys.get(cb.row));
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

    /// The smallest head key of the cursors other than the winner `w`: the losers stored
    /// on `w`'s path of the loser tree (the runner-up lost only to `w`).
    fn runner_up_key(&self, w: usize) -> Option<KeyRef<'_>> {
        let k = self.cursors.len();
        let mut node = (w + k) / 2;
        if matches!(self.key_mode, KeyMode::Int) {
            let mut best = i128::MAX;
            while node > 0 {
                if let Some(h) = self.tree.get(node).and_then(|c| self.heads.get(*c)) {
                    best = best.min(*h);
                }
                node /= 2;
            }
            return match best {
                i128::MAX => None,
                i128::MIN => Some(KeyRef::Int(None)),
                b => i64::try_from(b).ok().map(|v| KeyRef::Int(Some(v))),
            };
        }
        let mut best: Option<KeyRef<'_>> = None;
        while node > 0 {
            if let Some(cb) = self
                .tree
                .get(node)
                .and_then(|c| self.cursors.get(*c))
                .and_then(|c| c.current.as_ref())
            {
                let key = cb.keys.get(cb.row);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
            node /= 2;
        }
        best
    }

    /// End of the rows of the winner `w`, from its current row, that are single records of
    /// their key: smaller than every other run's head, different from the next row of the
    /// run, never the batch's last row (the next batch may repeat its key), and fitting in
    /// the output batch. Equals the current row when there is none.
    fn pass_through_end(&self, w: usize) -> usize {
        let Some(cb) = self.cursors.get(w).and_then(|c| c.current.as_ref()) else {
            return 0;
        };
        let r = cb.row;
        let room = self
            .batch_size
            .saturating_sub(self.chunk_rows + self.pending_rows);
        let limit = cb
            .batch
            .num_rows()
            .saturating_sub(1)
            .min(r.saturating_add(room));
        if limit <= r {
            return r;
        }
        let bound = self.runner_up_key(w);
        let mut e = r;
        match (&cb.keys, bound) {
            (
                Keys::Int {
                    values,
                    nulls: None,
                },
                None,
            ) => {
                let v = &values[..limit + 1];
                while e < limit && v[e] < v[e + 1] {
                    e += 1;
                }
            }
            (
                Keys::Int {
                    values,
                    nulls: None,
                },
                Some(KeyRef::Int(Some(b))),
            ) => {
                let v = &values[..limit + 1];
                while e < limit && v[e] < b && v[e] < v[e + 1] {
                    e += 1;
                }
            }
            (keys, bound) => {
                while e < limit {
                    let k = keys.get(e);
                    if bound.is_some_and(|b| k >= b) || k >= keys.get(e + 1) {
                        break;
                    }
                    e += 1;
                }
            }
        }
        e
    }

    /// Emit rows `row..end` of the winner `w` unchanged (single records of their keys),
    /// dropping retractions.
    fn pass_through(&mut self, w: usize, end: usize) -> Result<()> {
        let Some(cb) = self.cursors.get_mut(w).and_then(|c| c.current.as_mut()) else {
            return Ok(());
        };
        let window = window_of(
            &mut self.window,
            &mut self.window_nulls,
            self.value_offset,
            cb,
        );
        let start = cb.row;
        let kinds = &cb.kinds[start..end];
        let keep_retract = self.kv.as_ref().is_some_and(|k| k.keep_retract);
        // +I (0) and +U (2) are the bytes with no bit but bit 1 set.
        let mut spans: Vec<(usize, usize)> = Vec::new();
        if keep_retract {
            if let Some(k) = kinds.iter().find(|k| RowKind::from_byte(**k).is_none()) {
                return Err(bad_kind(w, *k));
            }
            spans.push((start, end - start));
        } else if kinds.iter().all(|k| *k & !2 == 0) {
            spans.push((start, end - start));
        } else {
            let mut from = start;
            for (i, &k) in kinds.iter().enumerate() {
                let r = start + i;
                let kind = RowKind::from_byte(k).ok_or_else(|| bad_kind(w, k))?;
                if kind.is_retract() {
                    if r > from {
                        spans.push((from, r - from));
                    }
                    from = r + 1;
                }
            }
            if end > from {
                spans.push((from, end - from));
            }
        }
        cb.row = end;
        if let Some(kv) = &mut self.kv {
            for &(s, len) in &spans {
                kv.src.extend((s..s + len).map(|r| (window, r)));
                kv.seq.extend_from_slice(&cb.seq[s..s + len]);
                kv.kind.extend_from_slice(&cb.kinds[s..s + len]);
            }
        }
        for (s, len) in spans {
            self.push_rows(window, s, len);
        }
        self.adjust(w);
        self.bound_window()
    }

    /// Queue `len` unchanged rows of window batch `window` from `start`.
    fn push_rows(&mut self, window: usize, start: usize, len: usize) {
        self.pending_rows += len;
        for c in &mut self.columns {
            c.push_base(window, start, len);
        }
    }

    /// Move the winner's current record into the group.
    fn take(&mut self, w: usize) -> Result<()> {
        let Some(cb) = self.cursors[w].current.as_mut() else {
            return Ok(());
        };
        let window = window_of(
            &mut self.window,
            &mut self.window_nulls,
            self.value_offset,
            cb,
        );
        let k = cb.kinds[cb.row];
        let kind = RowKind::from_byte(k).ok_or_else(|| bad_kind(w, k))?;
        self.group.push(Rec {
            window,
            row: cb.row,
            seq: cb.seq[cb.row],
            kind,
            user_seq: cb.user_seq.as_ref().map(|r| r.row(cb.row).owned()),
            level: cb.level,
            lookup: self.special.is_some_and(|s| w >= s.lookup_from),
            origin: cb
                .origin
                .as_ref()
                .and_then(|(f, p)| p.get(cb.row).map(|p| (Arc::clone(f), *p))),
        });
        Ok(())
    }

    /// Load the next non-empty batch of run `i` (or mark it exhausted).
    async fn load(&mut self, i: usize) -> Result<()> {
        self.load_from(i, None).await
    }

    /// As [`Self::load`], starting from `first`, the run's next batch when already taken
    /// from its source (`Some(None)`: the run ended).
    async fn load_from(&mut self, i: usize, mut first: Option<Option<RecordBatch>>) -> Result<()> {
        let previous_last = self.cursors[i].current.as_ref().and_then(|cb| {
            cb.batch.num_rows().checked_sub(1).map(|r| {
                let mut k = OwnedKey::Int(None);
                k.set(cb.keys.get(r));
                k
            })
        });
        self.cursors[i].current = None;
        loop {
            let next = match first.take() {
                Some(taken) => taken,
                None => self.cursors[i].source.next_batch().await?,
            };
            let Some(batch) = next else {
                return Ok(());
            };
            if batch.num_rows() == 0 {
                continue;
            }
            let mut cb = self.prepare(i, batch)?;
            cb.level = self.cursors[i].source.batch_level();
            if self.marks.is_some() && self.special.is_some_and(|s| i >= s.lookup_from) {
                cb.origin = self.cursors[i].source.batch_positions();
            }
            if let Some(prev) = &previous_last
                && prev.cmp_ref(cb.keys.get(0)) == Ordering::Greater
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
        let keys = match &self.key_mode {
            KeyMode::Int => int_keys(batch.column(0))
                .ok_or_else(|| Error::invalid("merge: primary key column is not an integer"))?,
            KeyMode::Rows(conv) => Keys::Rows(
                conv.convert_columns(&batch.columns()[..key_count])
                    .map_err(|e| Error::arrow("merge: converting primary keys", e))?,
            ),
        };
        if let Some(r) = keys.unsorted_at(batch.num_rows()) {
            return Err(Error::invalid(format!(
                "merge: sorted run {run} is not sorted by key (row {r} of a batch is smaller than row {})",
                r - 1
            )));
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
            level: 0,
            origin: None,
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
        let (ha, hb) = (self.heads[a], self.heads[b]);
        if ha != hb {
            return ha < hb;
        }
        // Equal integer keys of live heads, no sequence.field: the sequence number decides.
        if ha != i128::MAX && self.user_seq.is_none() && matches!(self.key_mode, KeyMode::Int) {
            let (sa, sb) = (self.head_seqs[a], self.head_seqs[b]);
            if sa != sb {
                return sa < sb;
            }
        }
        let (ca, cb) = (&self.cursors[a].current, &self.cursors[b].current);
        let (x, y) = match (ca, cb) {
            (None, _) => return false,
            (Some(_), None) => return true,
            (Some(x), Some(y)) => (x, y),
        };
        let mut o = x.keys.get(x.row).cmp(&y.keys.get(y.row));
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
        if matches!(self.key_mode, KeyMode::Int) {
            let (head, seq) = match self.cursors[leaf].current.as_ref() {
                None => (i128::MAX, 0),
                Some(cb) => (
                    match cb.keys.get(cb.row) {
                        KeyRef::Int(Some(v)) => i128::from(v),
                        _ => i128::MIN,
                    },
                    cb.seq.get(cb.row).copied().unwrap_or(0),
                ),
            };
            self.heads[leaf] = head;
            self.head_seqs[leaf] = seq;
        }
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
}

fn bad_kind(run: usize, k: i8) -> Error {
    Error::corrupt(
        format!("sorted run {run}"),
        "key-value",
        format!("Unsupported byte value {k} for _VALUE_KIND"),
    )
}
