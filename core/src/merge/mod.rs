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
//!   with `arrow_select::interleave` from the input batches. `partial-update` and
//!   `aggregation` work on field values that stay references into the input arrays until an
//!   aggregate function computes a new value; columns are again built with `interleave`.
//!
//! Source: Java `org.apache.paimon.mergetree.compact` (`SortMergeReaderWithLoserTree`,
//! `ReducerMergeFunctionWrapper`, the merge functions and `aggregate.*`).

mod agg;
mod config;
mod engine;
mod reader;
mod value;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use arrow_array::RecordBatch;
use futures_util::future::BoxFuture;

pub use config::{FieldMergeOptions, MergeConfig, MergeEngine, SequenceGroup};
pub use reader::{DEFAULT_BATCH_SIZE, MergeReader};

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
