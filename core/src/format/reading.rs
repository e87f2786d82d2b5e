//! What the data-file readers (Parquet, ORC, Avro) share: a projection by column name onto a
//! file's top-level columns, and the tail and byte ranges of a file read through the [`Io`].

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use bytes::Bytes;

use crate::error::{Error, Result};
use crate::io::Io;

/// Bytes read from the end of a Parquet or ORC file by the first request (the footer of a
/// typical data file fits in it; a larger footer costs one more range read).
pub const FOOTER_PREFETCH_BYTES: u64 = 64 * 1024;

/// How a projection by name maps onto a file's top-level columns.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedProjection {
    /// Root column indices to decode, ascending (file order).
    pub(crate) roots: Vec<usize>,
    /// For each output column, its index among the decoded columns (`roots` order).
    pub(crate) reorder: Vec<usize>,
    /// The output schema (file types, requested order).
    pub(crate) schema: SchemaRef,
}

impl ResolvedProjection {
    /// Resolve `projection` (file column names) against `file_schema`.
    pub(crate) fn new(file_schema: &Schema, projection: Option<&[String]>) -> Self {
        let wanted: Vec<usize> = match projection {
            None => (0..file_schema.fields().len()).collect(),
            Some(names) => names
                .iter()
                .filter_map(|n| file_schema.fields().iter().position(|f| f.name() == n))
                .collect(),
        };
        let mut roots = wanted.clone();
        roots.sort_unstable();
        roots.dedup();
        let reorder = wanted
            .iter()
            .map(|w| roots.iter().position(|r| r == w).unwrap_or(0))
            .collect();
        let schema = Arc::new(Schema::new_with_metadata(
            wanted
                .iter()
                .map(|&i| Arc::clone(&file_schema.fields()[i]))
                .collect::<Vec<_>>(),
            file_schema.metadata().clone(),
        ));
        ResolvedProjection {
            roots,
            reorder,
            schema,
        }
    }

    /// Put the decoded columns (in `roots` order) into the output order.
    pub(crate) fn apply(
        &self,
        batch: &RecordBatch,
        path: &str,
        format: &'static str,
    ) -> Result<RecordBatch> {
        self.apply_columns(batch.columns(), batch.num_rows(), path, format)
    }

    /// [`ResolvedProjection::apply`] over the decoded columns (in `roots` order) of a batch of
    /// `rows` rows.
    pub(crate) fn apply_columns(
        &self,
        decoded: &[arrow_array::ArrayRef],
        rows: usize,
        path: &str,
        format: &'static str,
    ) -> Result<RecordBatch> {
        let columns = self
            .reorder
            .iter()
            .map(|&i| {
                decoded.get(i).cloned().ok_or_else(|| {
                    Error::corrupt(path, format, format!("decoder returned no column #{i}"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(Arc::clone(&self.schema), columns, &options).map_err(
            |e| {
                Error::corrupt(
                    path,
                    format,
                    format!("decoded batch does not match the file schema: {e}"),
                )
            },
        )
    }
}

/// Check that `range` lies inside a file of `file_size` bytes.
pub(crate) fn check_range(
    path: &str,
    format: &'static str,
    what: &str,
    start: u64,
    len: u64,
    file_size: u64,
) -> Result<std::ops::Range<u64>> {
    match start.checked_add(len) {
        Some(end) if end <= file_size => Ok(start..end),
        _ => Err(Error::corrupt(
            path,
            format,
            format!(
                "{what} at offset {start} of {len} bytes lies outside the file of {file_size} bytes"
            ),
        )),
    }
}

/// Read the last `min(FOOTER_PREFETCH_BYTES, file_size)` bytes of a file.
pub(crate) async fn read_tail<T>(io: &Io<T>, path: &str, file_size: u64) -> Result<Bytes> {
    let len = file_size.min(FOOTER_PREFETCH_BYTES);
    io.read_range(path, file_size - len..file_size).await
}

/// Extend `tail` (the last `tail.len()` bytes of the file) so that it holds the last `needed`
/// bytes, reading the missing prefix.
pub(crate) async fn extend_tail<T>(
    io: &Io<T>,
    path: &str,
    file_size: u64,
    tail: Bytes,
    needed: u64,
) -> Result<Bytes> {
    let have = tail.len() as u64;
    if needed <= have {
        return Ok(tail);
    }
    let start = file_size.checked_sub(needed).ok_or_else(|| {
        Error::corrupt(
            path,
            "data-file",
            format!("footer of {needed} bytes is larger than the file"),
        )
    })?;
    let prefix = io.read_range(path, start..file_size - have).await?;
    let mut all = Vec::with_capacity(prefix.len() + tail.len());
    all.extend_from_slice(&prefix);
    all.extend_from_slice(&tail);
    Ok(Bytes::from(all))
}

/// Read several ranges of one file in one round (one request per range, in order).
pub(crate) async fn read_ranges<T>(
    io: &Io<T>,
    path: &str,
    ranges: &[std::ops::Range<u64>],
) -> Result<Vec<Bytes>> {
    futures_util::future::try_join_all(ranges.iter().map(|r| io.read_range(path, r.clone()))).await
}
