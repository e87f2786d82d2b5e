//! The write buffer of a primary-key bucket writer: rows buffered in the key-value file
//! layout ([`KvLayout`]: `_KEY_` columns, `_SEQUENCE_NUMBER`, `_VALUE_KIND`, the values),
//! sorted by key, `sequence.field` and sequence number without moving them
//! ([`SortedBuffer`]), and merged per key with the table's merge engine when they are
//! flushed into level-0 files.
//!
//! Source: Java `org.apache.paimon.mergetree.MergeTreeWriter` (the write buffer and its
//! flush), `SortBufferWriteBuffer`, `org.apache.paimon.mergetree.compact.MergeFunction`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow_schema::SchemaRef;

use crate::encode::row::RowProjection;
use crate::error::{Error, Result};
use crate::merge::{MemoryRunSource, MergeConfig, MergeEngine, MergeReader, RunSource};
use crate::spec::options::ChangelogProducer;
use crate::spec::special_fields::key_value_fields;
use crate::spec::{DataField, TableSchema};
use crate::types::paimon_to_arrow_schema;

#[derive(Debug)]
pub(crate) struct KvLayout {
    /// The trimmed primary key of a conformed batch, as a [`BinaryRow`](crate::spec::BinaryRow)
    /// (prepared once).
    pub(crate) key: RowProjection,
    pub(crate) file_fields: Vec<DataField>,
    /// The trimmed primary key fields as table fields (names without `_KEY_`).
    pub(crate) plain_key_fields: Vec<DataField>,
    pub(crate) file_schema: SchemaRef,
    pub(crate) engine: MergeEngine,
    pub(crate) ignore_delete: bool,
    pub(crate) merge: MergeConfig,
    /// `changelog-producer = input`: flushes also write the sorted input as changelog files.
    pub(crate) changelog_input: bool,
}

impl KvLayout {
    pub(crate) fn try_new(schema: &TableSchema) -> Result<Self> {
        let trimmed = schema.trimmed_primary_keys()?;
        let mut key_idx = Vec::new();
        let mut plain_key_fields = Vec::new();
        for k in &trimmed {
            let i = schema
                .fields
                .iter()
                .position(|f| &f.name == k)
                .ok_or_else(|| Error::invalid(format!("primary key '{k}' is not a column")))?;
            key_idx.push(i);
            plain_key_fields.push(schema.fields[i].clone());
        }
        let file_fields = key_value_fields(&plain_key_fields, &schema.fields);
        let file_schema = paimon_to_arrow_schema(&file_fields)?;
        let options = schema.core_options();
        let merge = MergeConfig::from_table_schema(schema)?;
        let key = RowProjection::try_new(
            key_idx,
            plain_key_fields
                .iter()
                .map(|f| f.data_type.clone())
                .collect(),
        )?;
        Ok(KvLayout {
            key,
            file_fields,
            plain_key_fields,
            file_schema,
            engine: merge.engine,
            ignore_delete: options.ignore_delete()?,
            merge,
            changelog_input: options.changelog_producer()? == ChangelogProducer::Input,
        })
    }

    /// A buffered batch in the file layout without the retractions (`-U`/`-D`) when the
    /// table sets `ignore-delete`.
    pub(crate) fn without_ignored(&self, batch: RecordBatch) -> Result<RecordBatch> {
        if !self.ignore_delete {
            return Ok(batch);
        }
        let kinds = batch
            .column(self.key.len() + 1)
            .as_primitive::<arrow_array::types::Int8Type>();
        let keep = arrow_array::BooleanArray::from_iter(
            kinds.values().iter().map(|b| Some(*b == 0 || *b == 2)),
        );
        arrow_select::filter::filter_record_batch(&batch, &keep)
            .map_err(|e| Error::arrow("dropping ignored retractions", e))
    }

    /// First-row tables take no retraction unless `ignore-delete` drops them: the error
    /// for the first one among `batches` (checked before anything is written).
    pub(crate) fn check_first_row_retractions(&self, batches: &[RecordBatch]) -> Result<()> {
        if self.ignore_delete || self.engine != MergeEngine::FirstRow {
            return Ok(());
        }
        let k = self.key.len();
        for b in batches {
            let kinds = b
                .column(k + 1)
                .as_primitive::<arrow_array::types::Int8Type>();
            if let Some(row) = kinds.values().iter().position(|b| *b == 1 || *b == 3) {
                let seq = b
                    .column(k)
                    .as_primitive::<arrow_array::types::Int64Type>()
                    .value(row);
                return Err(Error::invalid(format!(
                    "first-row tables take no retractions (-U/-D) unless 'ignore-delete' is \
                     true; the input holds one (sequence number {seq} of its bucket)"
                )));
            }
        }
        Ok(())
    }

    /// The buffer of a postpone-bucket writer as written: input order, no merge, sequence
    /// numbers `-1`, retractions dropped under `ignore-delete`; first-row tables reject
    /// retractions as their merge would.
    pub(crate) fn postpone_records(&self, batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
        let k = self.key.len();
        let batches = batches
            .into_iter()
            .map(|b| self.without_ignored(b))
            .collect::<Result<Vec<_>>>()?;
        self.check_first_row_retractions(&batches)?;
        batches
            .into_iter()
            .map(|b| {
                let mut cols = b.columns().to_vec();
                cols[k] = Arc::new(Int64Array::from(vec![-1i64; b.num_rows()]));
                RecordBatch::try_new(Arc::clone(&self.file_schema), cols)
                    .map_err(|e| Error::arrow("building the postpone records", e))
            })
            .collect()
    }

    /// The buffer sorted by (key, `sequence.field`, sequence number), its rows left in
    /// place, with the ranges holding one key each; first-row retractions are refused here,
    /// before anything is written.
    pub(crate) fn sort_buffer(&self, batches: Vec<RecordBatch>) -> Result<SortedBuffer> {
        let batches = batches
            .into_iter()
            .map(|b| self.without_ignored(b))
            .filter(|b| b.as_ref().map_or(true, |b| b.num_rows() > 0))
            .collect::<Result<Vec<_>>>()?;
        self.check_first_row_retractions(&batches)?;
        let k = self.key.len();
        // Sort keys: the key columns, then sequence.field columns, then _SEQUENCE_NUMBER.
        // One converter each, so rows of different batches compare.
        let key_converter = arrow_row::RowConverter::new(
            (0..k)
                .map(|i| arrow_row::SortField::new(self.file_schema.field(i).data_type().clone()))
                .collect(),
        )
        .map_err(|e| Error::arrow("comparing primary keys", e))?;
        let seq_fields = self.merge_sequence_columns()?;
        let mut key_rows = Vec::with_capacity(batches.len());
        let mut seq_rows = Vec::with_capacity(batches.len());
        let mut seqs = Vec::with_capacity(batches.len());
        for b in &batches {
            key_rows.push(
                key_converter
                    .convert_columns(&b.columns()[..k])
                    .map_err(|e| Error::arrow("comparing primary keys", e))?,
            );
            if let Some((conv, cols)) = &seq_fields {
                let cols: Vec<ArrayRef> = cols.iter().map(|c| Arc::clone(b.column(*c))).collect();
                seq_rows.push(
                    conv.convert_columns(&cols)
                        .map_err(|e| Error::arrow("comparing sequence.field", e))?,
                );
            }
            seqs.push(
                b.column(k)
                    .as_primitive::<arrow_array::types::Int64Type>()
                    .values()
                    .clone(),
            );
        }
        let mut order: Vec<(usize, usize)> = batches
            .iter()
            .enumerate()
            .flat_map(|(i, b)| (0..b.num_rows()).map(move |r| (i, r)))
            .collect();
        order.sort_unstable_by(|&(ab, ar), &(bb, br)| {
            key_rows[ab]
                .row(ar)
                .cmp(&key_rows[bb].row(br))
                .then_with(|| match seq_rows.is_empty() {
                    true => std::cmp::Ordering::Equal,
                    false => seq_rows[ab].row(ar).cmp(&seq_rows[bb].row(br)),
                })
                .then_with(|| seqs[ab][ar].cmp(&seqs[bb][br]))
                .then_with(|| (ab, ar).cmp(&(bb, br)))
        });
        let mut groups: Vec<(usize, usize)> = Vec::new();
        let mut start = 0;
        for i in 1..=order.len() {
            if i == order.len() || {
                let (a, b) = (order[i], order[start]);
                key_rows[a.0].row(a.1) != key_rows[b.0].row(b.1)
            } {
                groups.push((start, i));
                start = i;
            }
        }
        Ok(SortedBuffer {
            batches,
            order,
            groups,
        })
    }

    /// The merged records of the key groups `range` of `sorted`, in the file layout.
    ///
    /// `rows`: the chunk's records in sorted order when the caller has gathered them already
    /// (for the changelog of `changelog-producer = input`); partial-update and aggregation
    /// merge those instead of gathering them again.
    pub(crate) fn merge_chunk(
        &self,
        sorted: &SortedBuffer,
        range: std::ops::Range<usize>,
        rows: Option<&RecordBatch>,
    ) -> Result<RecordBatch> {
        let groups = &sorted.groups[range];
        match self.engine {
            // The last record of each key.
            MergeEngine::Deduplicate => {
                let idx: Vec<(usize, usize)> =
                    groups.iter().map(|(_, e)| sorted.order[e - 1]).collect();
                sorted.gather(&self.file_schema, &idx)
            }
            // The first record of each key (no retractions: refused by `sort_buffer`).
            MergeEngine::FirstRow => {
                let idx: Vec<(usize, usize)> =
                    groups.iter().map(|(s, _)| sorted.order[*s]).collect();
                sorted.gather(&self.file_schema, &idx)
            }
            MergeEngine::PartialUpdate | MergeEngine::Aggregation => {
                let (Some(first), Some(last)) = (groups.first(), groups.last()) else {
                    return Ok(RecordBatch::new_empty(Arc::clone(&self.file_schema)));
                };
                match rows {
                    Some(rows) => self.merge_sorted(rows, groups.len()),
                    None => {
                        let rows =
                            sorted.gather(&self.file_schema, &sorted.order[first.0..last.1])?;
                        self.merge_sorted(&rows, groups.len())
                    }
                }
            }
        }
    }

    /// `sequence.field` columns (positions in the file layout) and their converter.
    #[allow(clippy::type_complexity)]
    pub(crate) fn merge_sequence_columns(
        &self,
    ) -> Result<Option<(arrow_row::RowConverter, Vec<usize>)>> {
        let names = &self.merge.sequence_fields;
        if names.is_empty() {
            return Ok(None);
        }
        let descending = !self.merge.sequence_ascending;
        let mut fields = Vec::new();
        let mut cols = Vec::new();
        for n in names {
            let i = self
                .file_schema
                .fields()
                .iter()
                .rposition(|f| f.name() == n)
                .ok_or_else(|| Error::invalid(format!("sequence.field '{n}' is not a column")))?;
            fields.push(arrow_row::SortField::new_with_options(
                self.file_schema.field(i).data_type().clone(),
                arrow_schema::SortOptions {
                    descending,
                    nulls_first: !descending,
                },
            ));
            cols.push(i);
        }
        let conv = arrow_row::RowConverter::new(fields)
            .map_err(|e| Error::arrow("comparing sequence.field", e))?;
        Ok(Some((conv, cols)))
    }

    /// Merge the groups of a sorted batch with the read side's merge engine: one record per
    /// key (in the file layout) with the engine's row kind and the key group's largest
    /// sequence number; a key of one record keeps it unchanged.
    pub(crate) fn merge_sorted(&self, sorted: &RecordBatch, groups: usize) -> Result<RecordBatch> {
        let k = self.key.len();
        let value_names: Vec<String> = self.file_fields[k + 2..]
            .iter()
            .map(|f| f.name.clone())
            .collect();
        let read = self.merge.read_fields(&value_names);
        let input_schema = self.merge.input_schema(&read)?;
        if input_schema.fields().len() != sorted.num_columns() {
            return Err(Error::unsupported(
                "merging a write buffer whose merge needs extra columns",
            ));
        }
        let input = RecordBatch::try_new(Arc::clone(&input_schema), sorted.columns().to_vec())
            .map_err(|e| Error::arrow("building the merge input", e))?;
        let runs: Vec<Box<dyn RunSource>> = vec![Box::new(MemoryRunSource::new([input]))];
        let output: Vec<usize> = (0..value_names.len()).collect();
        // Key-value output with retractions kept: a level-0 file holds each key's merge
        // result whatever its row kind (Java's write buffer: a single record unchanged, a
        // merged one with the merge function's kind, e.g. `-D` under
        // `remove-record-on-delete`).
        let mut reader =
            MergeReader::try_new(&self.merge, input_schema, output, runs, groups.max(1))?
                .with_key_value_output(true);
        let mut merged = Vec::new();
        loop {
            let fut = std::pin::pin!(reader.next_batch());
            let mut fut = fut;
            match fut
                .as_mut()
                .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
            {
                std::task::Poll::Ready(Ok(Some(b))) => merged.push(b),
                std::task::Poll::Ready(Ok(None)) => break,
                std::task::Poll::Ready(Err(e)) => return Err(e),
                std::task::Poll::Pending => {
                    return Err(Error::invalid("in-memory merge suspended"));
                }
            }
        }
        let merged = arrow_select::concat::concat_batches(&reader.schema(), &merged)
            .map_err(|e| Error::arrow("concatenating merged rows", e))?;
        RecordBatch::try_new(Arc::clone(&self.file_schema), merged.columns().to_vec())
            .map_err(|e| Error::arrow("building merged rows", e))
    }
}

/// Input rows a flush gathers, merges and encodes at a time (more for one key whose records
/// alone exceed it).
pub(crate) const FLUSH_CHUNK_ROWS: usize = 16 * 1024;

/// A bucket's write buffer sorted by (key, `sequence.field`, sequence number) without moving
/// its rows: `order` holds (batch, row) positions of `batches` in sorted order, `groups` the
/// ranges of `order` that hold one key each.
pub(crate) struct SortedBuffer {
    pub(crate) batches: Vec<RecordBatch>,
    pub(crate) order: Vec<(usize, usize)>,
    pub(crate) groups: Vec<(usize, usize)>,
}

impl SortedBuffer {
    /// Consecutive ranges `first..last` of `groups` holding about `rows` input rows each
    /// (at least one group).
    pub(crate) fn chunks(&self, rows: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut first = 0;
        while first < self.groups.len() {
            let start = self.groups[first].0;
            let mut last = first + 1;
            while last < self.groups.len() && self.groups[last].1 - start <= rows {
                last += 1;
            }
            out.push((first, last));
            first = last;
        }
        out
    }

    /// The rows at `positions`, in that order, as one batch of `schema`.
    pub(crate) fn gather(
        &self,
        schema: &SchemaRef,
        positions: &[(usize, usize)],
    ) -> Result<RecordBatch> {
        let columns = (0..schema.fields().len())
            .map(|c| {
                let arrays: Vec<&dyn Array> =
                    self.batches.iter().map(|b| b.column(c).as_ref()).collect();
                arrow_select::interleave::interleave(&arrays, positions)
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::arrow("gathering sorted rows of the write buffer", e))?;
        RecordBatch::try_new(Arc::clone(schema), columns)
            .map_err(|e| Error::arrow("building sorted rows of the write buffer", e))
    }
}
