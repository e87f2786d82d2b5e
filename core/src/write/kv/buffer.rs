//! The write buffer of a primary-key bucket writer: rows buffered in the key-value file
//! layout ([`KvLayout`]: `_KEY_` columns, `_SEQUENCE_NUMBER`, `_VALUE_KIND`, the values),
//! each batch sorted by key, `sequence.field` and sequence number as it is buffered
//! ([`KvLayout::sorted_batch`]), the sorted batches merged into one order without moving their rows
//! ([`SortedBuffer`]) and merged per key with the table's merge engine when they are
//! flushed into level-0 files.
//!
//! Why sorted batches: a flush gathers its rows in key order. Sorting the whole buffer at the flush
//! made that gather read at random over the buffer (a cache miss per value); a batch sorted
//! while it is still in the cache costs one copy of it, and the gather then reads every batch
//! front to back. Keys compare by a 16-byte prefix of their sort bytes first.
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
    /// Sort keys of the key columns (one converter, so rows of every batch compare).
    key_converter: arrow_row::RowConverter,
    /// Keys whose sort bytes are at most 16 bytes of one length: their 16-byte prefixes
    /// are the keys (no rows are kept).
    short_fixed_keys: bool,
    /// Sort keys of the `sequence.field` columns (positions in the file layout), if any.
    sequence_converter: Option<(arrow_row::RowConverter, Vec<usize>)>,
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
        let key_types: Vec<_> = (0..trimmed.len())
            .map(|i| file_schema.field(i).data_type().clone())
            .collect();
        let short_fixed_keys = short_fixed_keys(&key_types);
        let key_converter = arrow_row::RowConverter::new(
            key_types
                .into_iter()
                .map(arrow_row::SortField::new)
                .collect(),
        )
        .map_err(|e| Error::arrow("comparing primary keys", e))?;
        let sequence_converter = sequence_columns(
            &file_schema,
            &merge.sequence_fields,
            merge.sequence_ascending,
        )?;
        Ok(KvLayout {
            key_converter,
            short_fixed_keys,
            sequence_converter,
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

    /// A batch in the file layout as the write buffer holds it: without the retractions
    /// `ignore-delete` drops, sorted by (key, `sequence.field`, sequence number) while it is
    /// still in the cache. `None` when no row is left.
    ///
    /// A flush merges the sorted batches ([`Self::sort_buffer`]) rather than sorting the
    /// whole buffer, so its gather reads each batch front to back instead of at random over
    /// the buffer.
    pub(crate) fn sorted_batch(&self, batch: RecordBatch) -> Result<Option<RecordBatch>> {
        let batch = self.without_ignored(batch)?;
        let n = batch.num_rows();
        if n == 0 {
            return Ok(None);
        }
        let keys = self.sort_keys(&batch)?;
        if (1..n).all(|r| keys.cmp_rows(r - 1, &keys, r).is_le()) {
            return Ok(Some(batch));
        }
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_unstable_by(|&a, &b| keys.cmp_rows(a as usize, &keys, b as usize));
        let take = arrow_array::UInt32Array::from(order);
        arrow_select::take::take_record_batch(&batch, &take)
            .map(Some)
            .map_err(|e| Error::arrow("sorting buffered rows", e))
    }

    /// The sort keys of the rows of a batch in the file layout.
    fn sort_keys(&self, batch: &RecordBatch) -> Result<SortKeys> {
        let k = self.key.len();
        let sequences = batch
            .column(k)
            .as_primitive::<arrow_array::types::Int64Type>()
            .values()
            .clone();
        self.keys_of(
            &batch.columns()[..k],
            |c| batch.columns().get(c).cloned(),
            sequences,
        )
    }

    /// The sort keys of the rows of an input batch (its table columns, before the file
    /// layout), a row's position standing for its sequence number.
    pub(crate) fn input_sort_keys(&self, columns: &[ArrayRef]) -> Result<SortKeys> {
        let n = columns.first().map_or(0, |c| c.len());
        let values = self.key.len() + 2;
        let column = |c: usize| c.checked_sub(values).and_then(|c| columns.get(c)).cloned();
        self.keys_of(&self.key.columns(columns)?, column, (0..n as i64).collect())
    }

    /// The sort keys of `keys` (the key columns), the `sequence.field` columns (by their
    /// position in the file layout, from `column`) and `sequences`.
    fn keys_of(
        &self,
        keys: &[ArrayRef],
        column: impl Fn(usize) -> Option<ArrayRef>,
        sequences: arrow_buffer::ScalarBuffer<i64>,
    ) -> Result<SortKeys> {
        let keys = self
            .key_converter
            .convert_columns(keys)
            .map_err(|e| Error::arrow("comparing primary keys", e))?;
        let seq_keys = match &self.sequence_converter {
            Some((conv, cols)) => {
                let cols = cols
                    .iter()
                    .map(|c| {
                        column(*c).ok_or_else(|| {
                            Error::invalid(format!("sequence.field column #{c} is missing"))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Some(
                    conv.convert_columns(&cols)
                        .map_err(|e| Error::arrow("comparing sequence.field", e))?,
                )
            }
            None => None,
        };
        Ok(SortKeys {
            prefixes: key_prefixes(&keys),
            keys: (!self.short_fixed_keys).then_some(keys),
            seq_keys,
            sequences,
        })
    }

    /// The positions `0..rows.len()` of `rows` (rows of one bucket, ascending, of an input
    /// batch whose sort keys are `keys` ([`Self::input_sort_keys`])) in the order the bucket's
    /// write buffer sorts them: by (key, `sequence.field`, position). Taking the rows in this
    /// order, with sequence numbers given in input order, makes a batch already sorted.
    pub(crate) fn input_order(&self, keys: &SortKeys, rows: &[u32]) -> Vec<u32> {
        let mut order: Vec<u32> = (0..rows.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            keys.cmp_rows(rows[a as usize] as usize, keys, rows[b as usize] as usize)
        });
        order
    }

    /// The write buffer in order of (key, `sequence.field`, sequence number), its rows left
    /// in place, with the ranges holding one key each: the sorted batches
    /// ([`Self::sorted_batch`]) merged, the earlier batch first on ties. First-row
    /// retractions are refused here, before anything is written.
    pub(crate) fn sort_buffer(&self, batches: Vec<RecordBatch>) -> Result<SortedBuffer> {
        self.check_first_row_retractions(&batches)?;
        let sorted = batches
            .iter()
            .map(|b| self.sort_keys(b))
            .collect::<Result<Vec<_>>>()?;
        // The batches one after another, each in order: a stable sort finds them as runs
        // and merges them, an earlier batch's row first on ties.
        let total: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let mut order: Vec<MergeEntry> = Vec::with_capacity(total);
        for (i, r) in sorted.iter().enumerate() {
            order.extend(
                r.prefixes
                    .iter()
                    .enumerate()
                    .map(|(row, prefix)| MergeEntry {
                        prefix: *prefix,
                        batch: i as u32,
                        row: row as u32,
                    }),
            );
        }
        order.sort_by(|a, b| {
            a.prefix.cmp(&b.prefix).then_with(|| {
                sorted[a.batch as usize].cmp_rows(
                    a.row as usize,
                    &sorted[b.batch as usize],
                    b.row as usize,
                )
            })
        });
        let order: Vec<(usize, usize)> = order
            .into_iter()
            .map(|e| (e.batch as usize, e.row as usize))
            .collect();
        let mut groups: Vec<(usize, usize)> = Vec::new();
        let mut start = 0;
        for i in 1..=order.len() {
            if i == order.len() || {
                let (a, b) = (order[i], order[start]);
                !sorted[a.0].same_key(a.1, &sorted[b.0], b.1)
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

/// `sequence.field` columns (positions in the file layout) and their converter: descending
/// with nulls last when the sequence order is descending, else ascending with nulls first.
fn sequence_columns(
    file_schema: &SchemaRef,
    names: &[String],
    ascending: bool,
) -> Result<Option<(arrow_row::RowConverter, Vec<usize>)>> {
    if names.is_empty() {
        return Ok(None);
    }
    let mut fields = Vec::new();
    let mut cols = Vec::new();
    for n in names {
        let i = file_schema
            .fields()
            .iter()
            .rposition(|f| f.name() == n)
            .ok_or_else(|| Error::invalid(format!("sequence.field '{n}' is not a column")))?;
        fields.push(arrow_row::SortField::new_with_options(
            file_schema.field(i).data_type().clone(),
            arrow_schema::SortOptions {
                descending: !ascending,
                nulls_first: ascending,
            },
        ));
        cols.push(i);
    }
    let conv = arrow_row::RowConverter::new(fields)
        .map_err(|e| Error::arrow("comparing sequence.field", e))?;
    Ok(Some((conv, cols)))
}

/// The sort keys of the rows of a batch of the write buffer ([`KvLayout::sort_keys`]): made
/// when the batch is sorted, and again per bucket when the buffer is flushed (so the buffer
/// holds no more than its rows), or of an input batch's rows before they are buffered.
pub(crate) struct SortKeys {
    /// Per row, the first 16 bytes of its key's sort bytes (big-endian, zero padded): most
    /// comparisons end here, without looking up the rows.
    prefixes: Vec<[u64; 2]>,
    /// The keys' sort bytes, unless every key of the table is at most 16 bytes of one
    /// length (integer, date, timestamp keys; [`KvLayout`]): then the prefixes are the keys.
    keys: Option<arrow_row::Rows>,
    seq_keys: Option<arrow_row::Rows>,
    /// The `_SEQUENCE_NUMBER` column.
    sequences: arrow_buffer::ScalarBuffer<i64>,
}

impl SortKeys {
    /// Row `a` of this batch against row `b` of `other` by key.
    #[inline]
    fn cmp_keys(&self, a: usize, other: &SortKeys, b: usize) -> std::cmp::Ordering {
        self.prefixes[a]
            .cmp(&other.prefixes[b])
            .then_with(|| match (&self.keys, &other.keys) {
                (Some(x), Some(y)) => x.row(a).cmp(&y.row(b)),
                _ => std::cmp::Ordering::Equal,
            })
    }

    /// Whether row `a` of this batch and row `b` of `other` hold the same key.
    fn same_key(&self, a: usize, other: &SortKeys, b: usize) -> bool {
        self.cmp_keys(a, other, b).is_eq()
    }

    /// Row `a` of this batch against row `b` of `other` by (key, `sequence.field`, sequence
    /// number).
    #[inline]
    fn cmp_rows(&self, a: usize, other: &SortKeys, b: usize) -> std::cmp::Ordering {
        self.cmp_keys(a, other, b)
            .then_with(|| match (&self.seq_keys, &other.seq_keys) {
                (Some(x), Some(y)) => x.row(a).cmp(&y.row(b)),
                _ => std::cmp::Ordering::Equal,
            })
            .then_with(|| self.sequences[a].cmp(&other.sequences[b]))
    }
}

/// Whether the sort bytes of every key of these types are at most 16 bytes of one length:
/// fixed-width primitive columns (one validity byte and the value each).
fn short_fixed_keys(types: &[arrow_schema::DataType]) -> bool {
    let mut len = 0;
    for t in types {
        match t.primitive_width() {
            Some(w) if t.is_primitive() => len += 1 + w,
            _ => return false,
        }
    }
    len <= 16
}

/// Per row of `keys`, the first 16 bytes of its sort bytes as two big-endian words, zero
/// padded (which keeps the order: a shorter row sorts first where the bytes it has agree).
fn key_prefixes(keys: &arrow_row::Rows) -> Vec<[u64; 2]> {
    keys.iter()
        .map(|row| {
            let bytes = row.data();
            let mut b = [0u8; 16];
            let n = bytes.len().min(16);
            b[..n].copy_from_slice(&bytes[..n]);
            let (hi, lo) = b.split_at(8);
            [
                u64::from_be_bytes(hi.try_into().unwrap_or_default()),
                u64::from_be_bytes(lo.try_into().unwrap_or_default()),
            ]
        })
        .collect()
}

/// A row of the write buffer while the sorted batches merge: its key prefix (compared
/// without looking up the batch), batch and row.
#[derive(Clone, Copy)]
struct MergeEntry {
    prefix: [u64; 2],
    batch: u32,
    row: u32,
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int8Array, StringArray};

    /// `(s STRING NOT NULL, n BIGINT, x INT)`, primary key `s`, `sequence.field` = `n`.
    fn layout() -> KvLayout {
        let schema = crate::schema::create::new_table_schema(
            br#"{"fields": [{"name": "s", "type": "STRING NOT NULL"},
                {"name": "n", "type": "BIGINT"}, {"name": "x", "type": "INT"}],
               "primaryKeys": ["s"], "options": {"bucket": "1", "sequence.field": "n"}}"#,
            0,
        )
        .unwrap();
        KvLayout::try_new(&schema).unwrap()
    }

    /// Rows `(key, n)` in the file layout with sequence numbers from `first`.
    fn batch(kv: &KvLayout, first: i64, rows: &[(&str, Option<i64>)]) -> RecordBatch {
        let keys = StringArray::from_iter_values(rows.iter().map(|r| r.0));
        let n = Int64Array::from_iter(rows.iter().map(|r| r.1));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(keys.clone()),
            Arc::new(Int64Array::from_iter_values(
                first..first + rows.len() as i64,
            )),
            Arc::new(Int8Array::from(vec![0i8; rows.len()])),
            Arc::new(keys),
            Arc::new(n),
            Arc::new(arrow_array::Int32Array::from(vec![None; rows.len()])),
        ];
        RecordBatch::try_new(Arc::clone(&kv.file_schema), cols).unwrap()
    }

    #[test]
    fn merged_sorted_batches_give_the_order_of_key_sequence_field_and_sequence_number() {
        let kv = layout();
        // Keys sharing their first 16 sort bytes and more, short keys, a key repeated
        // within a batch and across batches, NULL and equal sequence.field values.
        let long = "a-key-that-is-longer-than-sixteen-bytes-";
        let inputs: Vec<Vec<(String, Option<i64>)>> = (0..7)
            .map(|b| {
                (0..40)
                    .map(|i| {
                        let k = (i * 7 + b * 3) % 13;
                        let key = match k % 3 {
                            0 => format!("{long}{k}"),
                            1 => format!("{long}{k}{long}"),
                            _ => format!("k{k}"),
                        };
                        let n = match (i + b) % 4 {
                            0 => None,
                            v => Some((v % 2) as i64),
                        };
                        (key, n)
                    })
                    .collect()
            })
            .collect();
        let mut runs = Vec::new();
        let mut expected = Vec::new();
        let mut seq = 0;
        for rows in &inputs {
            let rows: Vec<(&str, Option<i64>)> =
                rows.iter().map(|(k, n)| (k.as_str(), *n)).collect();
            for (k, n) in &rows {
                expected.push((k.to_string(), *n, seq));
                seq += 1;
            }
            runs.push(
                kv.sorted_batch(batch(&kv, seq - rows.len() as i64, &rows))
                    .unwrap()
                    .unwrap(),
            );
        }
        // Ascending sequence.field sorts NULL first (Option's order).
        expected.sort();
        let sorted = kv.sort_buffer(runs).unwrap();
        let actual: Vec<(String, Option<i64>, i64)> = sorted
            .order
            .iter()
            .map(|&(b, r)| {
                let batch = &sorted.batches[b];
                let s = batch.column(0).as_string::<i32>().value(r).to_owned();
                let n = batch
                    .column(4)
                    .as_primitive::<arrow_array::types::Int64Type>();
                let seq = batch
                    .column(1)
                    .as_primitive::<arrow_array::types::Int64Type>();
                (s, n.is_valid(r).then(|| n.value(r)), seq.value(r))
            })
            .collect();
        assert_eq!(actual, expected);
        // One group per key, in order.
        let keys: Vec<&str> = sorted
            .groups
            .iter()
            .map(|(s, e)| {
                assert!(actual[*s..*e].iter().all(|r| r.0 == actual[*s].0));
                actual[*s].0.as_str()
            })
            .collect();
        let mut distinct: Vec<&str> = expected.iter().map(|r| r.0.as_str()).collect();
        distinct.dedup();
        assert_eq!(keys, distinct);
    }

    #[test]
    fn short_fixed_keys_are_the_keys_encoded_in_at_most_16_bytes_of_one_length() {
        use arrow_schema::DataType as A;
        let cases: Vec<(Vec<A>, bool)> = vec![
            (vec![A::Int32], true),
            (vec![A::Int64], true),
            (vec![A::Int64, A::Int32], true),
            (vec![A::Date32, A::Int16, A::Int8], true),
            (
                vec![A::Timestamp(arrow_schema::TimeUnit::Microsecond, None)],
                true,
            ),
            (vec![A::Float64], true),
            (vec![A::Int64, A::Int64], false),
            (vec![A::Decimal128(20, 2)], false),
            (vec![A::Utf8], false),
            (vec![A::Boolean], false),
        ];
        for (types, short) in cases {
            assert_eq!(short_fixed_keys(&types), short, "{types:?}");
            if !short {
                continue;
            }
            let conv = arrow_row::RowConverter::new(
                types
                    .iter()
                    .cloned()
                    .map(arrow_row::SortField::new)
                    .collect(),
            )
            .unwrap();
            let cols: Vec<ArrayRef> = types
                .iter()
                .map(|t| arrow_array::new_null_array(t, 3))
                .map(|a| arrow_cast::cast(&a, &a.data_type().clone()).unwrap())
                .collect();
            let rows = conv.convert_columns(&cols).unwrap();
            let widths: usize = types.iter().map(|t| 1 + t.primitive_width().unwrap()).sum();
            assert!(rows.iter().all(|r| r.data().len() == widths), "{types:?}");
        }
    }
}
