//! Merge-on-read of primary-key tables: a streaming k-way merge of sorted runs (a loser
//! tree) feeding the table's merge engine.
//!
//! Primary-key data files are key-value files (`spec/pk-merge.md` §1): `_KEY_<pk>` columns,
//! `_SEQUENCE_NUMBER` (Int64), `_VALUE_KIND` (Int8 row kind), then the table columns. Each
//! sorted run is sorted by key; the runs of a section overlap. The caller decodes the files
//! of each run (casting to the read types) and hands every run to a [`MergeReader`] as a
//! [`RunSource`], pulled one batch at a time; the reader emits batches of merged rows.
//!
//! Design:
//! * Keys (any Paimon key type) are compared as `arrow-row` byte strings, converted once per
//!   input batch; `sequence.field` values likewise (with the configured sort order, nulls
//!   first).
//! * The merge never sorts the split: a loser tree over the run heads yields records in
//!   (key, sequence.field, `_SEQUENCE_NUMBER`, retract-before-add) order; the records of one
//!   key form a group that is merged as soon as the next key shows up.
//! * `deduplicate` and `first-row` pick one input row per key, so output columns are copied
//!   from the input batches as runs of rows (`MutableArrayData`, or `interleave` for
//!   scattered rows). `partial-update` and `aggregation` work on field values that stay
//!   references into the input arrays until an aggregate function computes a new value.
//!   Their add-only key groups (without sequence groups, with value-selecting or numeric
//!   `sum`/`max`/`min` aggregates) are only recorded while merging and merged column by
//!   column when the output batch is built: one typed loop per column over all such groups.
//!
//! ## Element order of aggregated collections
//!
//! The ARRAY results that Java builds in a `java.util.HashSet` / `HashMap` come out in that
//! map's iteration order, which is part of the value a reader sees. We give the same order,
//! computed from the format's own values: the element's Java object and its `hashCode`
//! (`merge/java_order.rs`) and OpenJDK's `HashMap` bins, resizes and tree bins
//! (`util/java_hash.rs`). The
//! same aggregate functions run on merge-on-read and in compaction, so a table reads alike
//! through Java and through us before and after either side compacts it
//! (`conformance/java-tables`, `j200_agg_*` and `compactions.json`).
//!
//! * `collect` with `distinct = true`: the accumulator's elements, then the input's, are
//!   added to a `HashSet` of the element objects (`Integer`, `Long`, `BinaryString`,
//!   `Decimal`, `Timestamp`, `GenericVariant`, ...); the result is its iteration order.
//!   Elements of constructed types (ROW, ARRAY, MAP, MULTISET, VECTOR) are gathered as Java's
//!   record equaliser does: the accumulator as it is, then each input element not equal to an
//!   earlier one, in order. BINARY / VARBINARY elements are `byte[]`, equal only by identity in
//!   Java: every element is kept, accumulator then input. BLOB elements: first occurrences in
//!   order.
//! * `nested_update` with `nested-key`: a `HashMap` from the key row (a [`BinaryRow`](crate::spec::BinaryRow) of
//!   the key fields, hashed as Java's `BinaryRow#hashCode`) to the element, filled by `put`
//!   with the accumulator's elements then the input's; retraction removes keys from a map of
//!   the accumulator. Without `nested-key` the elements are kept in order.
//! * `nested_partial_update`: the same key rows in a `HashMap` filled by `computeIfAbsent`
//!   (new keys go to the head of their bin, not the tail).
//! * `merge_map` and other MAP results keep first-seen entry order; MAP entry order is not part
//!   of the value.
//!
//! One order cannot be derived from the data: two distinct nested-key rows with equal 32-bit
//! hash codes in the same tree bin (eight or more keys in one bin of a map of at least 64 bins)
//! are ordered in Java by `System.identityHashCode`, a per-object random number, so Java itself
//! can give either order; we order such a pair as if the newer key's identity hash were the
//! smaller, one of the two orders Java can give.
//!
//! Driving order: build a [`MergeConfig`] (usually [`MergeConfig::from_table_schema`]); take
//! the value columns to read from [`MergeConfig::read_fields`] (the projection first) and the
//! input schema from [`MergeConfig::input_schema`]; wrap each sorted run in a [`RunSource`];
//! then call [`MergeReader::next_batch`] until it returns `None`.
//!
//! ```
//! use std::sync::Arc;
//! use std::task::{Context, Poll, Waker};
//! use arrow_array::{ArrayRef, Int8Array, Int32Array, Int64Array, RecordBatch};
//! use paimon_kernel::merge::{MemoryRunSource, MergeConfig, MergeEngine, MergeReader, RunSource};
//! use paimon_kernel::spec::{DataField, DataType, TypeKind};
//!
//! let field = |id, name: &str, nullable| DataField {
//!     id,
//!     name: name.into(),
//!     data_type: DataType { nullable, kind: TypeKind::Int },
//!     description: None,
//!     default_value: None,
//! };
//! let config = MergeConfig::new(
//!     MergeEngine::Deduplicate,
//!     vec![field(0, "k", false), field(1, "v", true)],
//!     vec!["k".into()],
//!     vec![],
//! );
//! let read = config.read_fields(&["v".to_string()]);
//! let schema = config.input_schema(&read).unwrap();
//! // _KEY_k, _SEQUENCE_NUMBER, _VALUE_KIND (0 = +I, 3 = -D), v
//! let run = |k: Vec<i32>, seq: Vec<i64>, kind: Vec<i8>, v: Vec<i32>| {
//!     let cols: Vec<ArrayRef> = vec![
//!         Arc::new(Int32Array::from(k)),
//!         Arc::new(Int64Array::from(seq)),
//!         Arc::new(Int8Array::from(kind)),
//!         Arc::new(Int32Array::from(v)),
//!     ];
//!     let batch = RecordBatch::try_new(Arc::clone(&schema), cols).unwrap();
//!     Box::new(MemoryRunSource::new([batch])) as Box<dyn RunSource>
//! };
//! let runs = vec![
//!     run(vec![1, 2, 3], vec![0, 1, 2], vec![0, 0, 0], vec![10, 20, 30]),
//!     run(vec![2, 3], vec![3, 4], vec![0, 3], vec![21, 0]),
//! ];
//! let mut reader = MergeReader::try_new(&config, Arc::clone(&schema), vec![0], runs, 1024).unwrap();
//! // In-memory runs never suspend: poll once (inside a Machine, just `.await`).
//! let mut fut = std::pin::pin!(reader.next_batch());
//! let Poll::Ready(Ok(Some(batch))) = fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
//! else {
//!     panic!("expected a batch")
//! };
//! let v: Vec<i32> = batch.column(0).as_any().downcast_ref::<Int32Array>().unwrap().values().to_vec();
//! assert_eq!(v, vec![10, 21]); // key 2 updated, key 3 deleted
//! ```
//!
//! Source: Java `org.apache.paimon.mergetree.compact` (`SortMergeReaderWithLoserTree`,
//! `ReducerMergeFunctionWrapper`, the merge functions and `aggregate.*`).

mod agg;
mod config;
mod engine;
mod java_order;
mod reader;
mod value;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_buffer::ScalarBuffer;
use futures_util::future::BoxFuture;

pub use config::{FieldMergeOptions, MergeConfig, MergeEngine, SequenceGroup};
pub use reader::{
    CHANGELOG_COLUMN, ChangelogMode, DEFAULT_BATCH_SIZE, DeletionVectorMarks, MergeReader,
};

use crate::error::Result;

/// Row kind of a key-value record, stored as the `_VALUE_KIND` byte.
///
/// Source: Java `org.apache.paimon.types.RowKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowKind {
    /// `+I` (byte 0).
    Insert,
    /// `-U` (byte 1).
    UpdateBefore,
    /// `+U` (byte 2).
    UpdateAfter,
    /// `-D` (byte 3).
    Delete,
}

impl RowKind {
    /// The kind of `_VALUE_KIND` byte `b`; `None` for bytes other than 0..=3.
    pub fn from_byte(b: i8) -> Option<Self> {
        match b {
            0 => Some(RowKind::Insert),
            1 => Some(RowKind::UpdateBefore),
            2 => Some(RowKind::UpdateAfter),
            3 => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// The `_VALUE_KIND` byte.
    pub fn to_byte(self) -> i8 {
        match self {
            RowKind::Insert => 0,
            RowKind::UpdateBefore => 1,
            RowKind::UpdateAfter => 2,
            RowKind::Delete => 3,
        }
    }

    /// `+I` or `+U`.
    pub fn is_add(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }

    /// `-U` or `-D`.
    pub fn is_retract(self) -> bool {
        !self.is_add()
    }

    /// `+I`, `-U`, `+U` or `-D`.
    pub fn short_string(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }
}

/// One sorted run of a merge: a source of record batches in key order, pulled lazily.
///
/// Every batch has the merge input layout described on [`MergeReader`]. A run may span
/// several files and each file several batches; empty batches are skipped. The returned
/// future is awaited by [`MergeReader::next_batch`], so an implementation can read files
/// through the core's [`crate::io::Io`] handle.
pub trait RunSource: Send {
    /// The next batch of the run, `None` at its end.
    fn next_batch(&mut self) -> BoxFuture<'_, Result<Option<RecordBatch>>>;

    /// The level of the data file the batch last returned by [`RunSource::next_batch`]
    /// came from (a run may hold files of several levels). Lookup merges
    /// ([`MergeConfig::lookup`], compactions with changelog) need it; the default, 0, makes
    /// every record a level-0 record.
    fn batch_level(&self) -> i32 {
        0
    }

    /// The data file the batch last returned by [`RunSource::next_batch`] came from (its
    /// file name) and the file position of each of its rows (0-based row index in the file;
    /// same length as the batch). Compactions that maintain deletion vectors
    /// ([`MergeReader::with_deletion_vector_marks`]) need it for the lookup-only runs; the
    /// default, `None`, leaves their records unmarkable.
    fn batch_positions(&self) -> Option<(Arc<str>, ScalarBuffer<i64>)> {
        None
    }
}

/// A [`RunSource`] over batches already in memory (tests, small inputs).
#[derive(Debug, Default, Clone)]
pub struct MemoryRunSource {
    batches: VecDeque<RecordBatch>,
}

impl MemoryRunSource {
    /// A run made of `batches`, in order.
    pub fn new(batches: impl IntoIterator<Item = RecordBatch>) -> Self {
        MemoryRunSource {
            batches: batches.into_iter().collect(),
        }
    }
}

impl RunSource for MemoryRunSource {
    fn next_batch(&mut self) -> BoxFuture<'_, Result<Option<RecordBatch>>> {
        Box::pin(std::future::ready(Ok(self.batches.pop_front())))
    }
}
