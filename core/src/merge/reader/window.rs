//! The output window of the merge: the input batches pending rows point into, and the
//! output batches built from them.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.SortMergeReaderWithLoserTree` (records
//! handed out while their batches stay alive).

use super::*;

impl MergeReader {
    /// Bound the batches kept alive by pending rows: build them once the window holds more
    /// than `2 × runs + 16` batches.
    pub(super) fn bound_window(&mut self) -> Result<()> {
        if self.window.len() > 2 * self.cursors.len() + 16 && self.pending_rows > 0 {
            let chunk = self.build_pending()?;
            self.chunk_rows += chunk.num_rows();
            self.chunks.push(chunk);
        }
        Ok(())
    }

    /// Build the pending rows into a batch and release the window.
    fn build_pending(&mut self) -> Result<RecordBatch> {
        let rows = std::mem::take(&mut self.pending_rows);
        let mut columns = Vec::with_capacity(self.output_schema.fields().len());
        if let Some(kv) = &mut self.kv {
            for c in 0..self.value_offset - 2 {
                let arrays: Vec<&dyn Array> =
                    self.window.iter().map(|b| b.column(c).as_ref()).collect();
                let col = if kv.src.is_empty() {
                    arrow_array::new_empty_array(self.input_schema.field(c).data_type())
                } else {
                    arrow_select::interleave::interleave(&arrays, &kv.src)
                        .map_err(|e| Error::arrow("merge: building output keys", e))?
                };
                columns.push(col);
            }
            kv.src.clear();
            columns.push(Arc::new(arrow_array::Int64Array::from(std::mem::take(
                &mut kv.seq,
            ))));
            columns.push(Arc::new(arrow_array::Int8Array::from(std::mem::take(
                &mut kv.kind,
            ))));
        }
        let kv_columns = columns.len();
        for (j, (&c, col)) in self
            .output_columns
            .iter()
            .zip(self.columns.iter_mut())
            .enumerate()
        {
            let input = FillInput {
                window: &self.window,
                value_offset: self.value_offset,
                nulls: &self.window_nulls,
                width: self.input_schema.fields().len() - self.value_offset,
                deferred: &self.deferred,
            };
            let engine = &self.engine;
            col.resolve_deferred(|first, n, col| {
                engine.fill_column(&input, c, first..first + n, col)
            })?;
            let bases: Vec<ArrayRef> = self
                .window
                .iter()
                .map(|b| Arc::clone(b.column(self.value_offset + c)))
                .collect();
            columns.push(col.finish(self.output_schema.field(kv_columns + j).data_type(), &bases)?);
        }
        if let Some(flags) = self.kv.as_mut().and_then(|kv| kv.changelog.as_mut()) {
            columns.push(Arc::new(arrow_array::BooleanArray::from(std::mem::take(
                flags,
            ))));
        }
        self.release_window();
        RecordBatch::try_new_with_options(
            Arc::clone(&self.output_schema),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| Error::arrow("merge: building an output batch", e))
    }

    /// Drop the window batches. Called between groups only (`bound_window` and `flush` run
    /// when the group is empty), so no record refers to them any more.
    fn release_window(&mut self) {
        self.window.clear();
        self.window_nulls.clear();
        self.deferred.clear();
        for c in &mut self.cursors {
            if let Some(cb) = c.current.as_mut() {
                cb.window = None;
            }
        }
    }

    pub(super) fn flush(&mut self) -> Result<RecordBatch> {
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

/// Add `batch` to the window, with the null buffers of its value columns (from
/// `value_offset`).
pub(super) fn push_window(
    window: &mut Vec<RecordBatch>,
    nulls: &mut Vec<Option<NullBuffer>>,
    value_offset: usize,
    batch: &RecordBatch,
) {
    window.push(batch.clone());
    nulls.extend(
        batch.columns()[value_offset..]
            .iter()
            .map(|c| c.nulls().filter(|n| n.null_count() > 0).cloned()),
    );
}

/// Index of `cb`'s batch in the window, pushing it there the first time.
pub(super) fn window_of(
    window: &mut Vec<RecordBatch>,
    nulls: &mut Vec<Option<NullBuffer>>,
    value_offset: usize,
    cb: &mut CursorBatch,
) -> usize {
    if let Some(i) = cb.window {
        return i;
    }
    push_window(window, nulls, value_offset, &cb.batch);
    let i = window.len() - 1;
    cb.window = Some(i);
    i
}
