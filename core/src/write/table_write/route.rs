//! A batch on its way down: conformed to the table's columns and types ([`TableWrite`]'s
//! `conform`), routed to its (partition, bucket) (fixed buckets, the dynamic-bucket hash
//! index, the cross-partition key index, postpone buckets), then handed to the writer of
//! each (partition, bucket).
//!
//! Source: Java `org.apache.paimon.table.sink.TableWriteImpl#writeAndReturn`,
//! `RowKeyExtractor` and its fixed, dynamic and postpone extractors.

use super::*;

impl TableWrite {
    /// Input columns in table order (cast to the table's types), and the row kinds (Int8
    /// `_VALUE_KIND` bytes) when the input has any.
    pub(super) fn conform(&self, batch: &RecordBatch) -> Result<(Vec<ArrayRef>, Option<ArrayRef>)> {
        let schema = batch.schema();
        for f in schema.fields() {
            if f.name() != ROW_KIND_COLUMN && self.table_arrow.index_of(f.name()).is_err() {
                return Err(Error::invalid(format!(
                    "input column '{}' is not a column of the table (columns: {:?})",
                    f.name(),
                    self.schema.field_names()
                )));
            }
        }
        let mut columns = Vec::with_capacity(self.table_arrow.fields().len());
        for (field, table_field) in self.table_arrow.fields().iter().zip(&self.schema.fields) {
            let Ok(i) = schema.index_of(field.name()) else {
                return Err(Error::invalid(format!(
                    "input has no column '{}' (type {})",
                    field.name(),
                    table_field.data_type
                )));
            };
            let col = batch.column(i);
            let col = if col.data_type() == field.data_type() {
                Arc::clone(col)
            } else {
                conform_column(col, field, &table_field.data_type)?
            };
            if !table_field.data_type.nullable && col.null_count() > 0 {
                let row = (0..col.len()).find(|r| col.is_null(*r)).unwrap_or(0);
                return Err(Error::invalid(format!(
                    "column '{}' is NOT NULL but row {row} of the input holds NULL",
                    field.name()
                )));
            }
            columns.push(col);
        }
        if let Some(inline) = &self.inline {
            inline.encode_columns(&mut columns)?;
        }
        let kinds = match self.rowkind_field {
            Some(i) => Some(row_kinds(&columns[i], &self.schema.fields[i].name)?),
            None => match schema.index_of(ROW_KIND_COLUMN) {
                Ok(i) => Some(row_kinds(batch.column(i), ROW_KIND_COLUMN)?),
                Err(_) => None,
            },
        };
        if let Some(k) = &kinds {
            let k = k.as_primitive::<arrow_array::types::Int8Type>();
            if self.kv.is_none()
                && let Some(row) = k.values().iter().position(|b| *b != 0)
            {
                return Err(Error::invalid(format!(
                    "row {row} of the input is a {} row: append tables take only inserts (+I); \
                     to delete rows of an append table use `delete --where` (the table needs \
                     'deletion-vectors.enabled')",
                    RowKind::from_byte(k.value(row)).map_or("?", RowKind::short_string)
                )));
            }
            if let Some(kv) = &self.kv
                && kv.engine == MergeEngine::FirstRow
                && !kv.ignore_delete
                && let Some(row) = k.values().iter().position(|b| *b == 1 || *b == 3)
            {
                return Err(Error::invalid(format!(
                    "row {row} of the input is a {} row: first-row tables take no retractions \
                     (-U/-D) unless 'ignore-delete' is true",
                    RowKind::from_byte(k.value(row)).map_or("?", RowKind::short_string)
                )));
            }
        }
        Ok((columns, kinds))
    }

    /// Rows of the batch per (serialized partition, bucket), in input order.
    #[allow(clippy::type_complexity)]
    pub(super) fn route(
        &mut self,
        columns: &[ArrayRef],
    ) -> Result<BTreeMap<(Vec<u8>, i32), Vec<u32>>> {
        if self.mode == Mode::KeyValueDynamic {
            return self.route_dynamic(columns);
        }
        let rows = columns.first().map_or(0, |c| c.len());
        let bucket_of: Vec<i32> = match &self.bucket_extractor {
            None if self.mode == Mode::KeyValuePostpone => vec![POSTPONE_BUCKET; rows],
            None => vec![0; rows],
            Some(x) => x.buckets(columns)?,
        };
        let mut out: BTreeMap<(Vec<u8>, i32), Vec<u32>> = BTreeMap::new();
        if self.partition.is_empty() {
            let empty = BinaryRow::empty().to_serialized();
            for (r, b) in bucket_of.iter().enumerate() {
                out.entry((empty.clone(), *b)).or_default().push(r as u32);
            }
            return Ok(out);
        }
        let partitions = self.partition.encoder(columns)?;
        for (r, b) in bucket_of.iter().enumerate() {
            let p = partitions.encode_serialized(r)?;
            out.entry((p, *b)).or_default().push(r as u32);
        }
        Ok(out)
    }

    /// Cross-partition tables: the rows of a conformed batch as the global key index places
    /// them (moved keys' `-D` rows and merges into old partitions added, first-row
    /// duplicates dropped), with their rows per (serialized partition, bucket) as
    /// [`TableWrite::route`] gives them.
    #[allow(clippy::type_complexity)]
    pub(super) fn place_cross_partition(
        &mut self,
        columns: &[ArrayRef],
        kinds: Option<&ArrayRef>,
    ) -> Result<(
        Vec<ArrayRef>,
        Option<ArrayRef>,
        BTreeMap<(Vec<u8>, i32), Vec<u32>>,
    )> {
        let kv = self
            .kv
            .as_ref()
            .ok_or_else(|| Error::invalid("key-value writer without key layout"))?;
        let key_cols = kv.key.columns(columns)?;
        let pcols = self.partition.columns(columns)?;
        let index = self
            .cross
            .as_mut()
            .ok_or_else(|| Error::invalid("cross-partition writer without index"))?;
        let placed = index.place(&pcols, self.partition.types(), &key_cols, kv.key.types())?;
        let (columns, kinds) =
            index.materialize(&placed, columns, self.partition.indices(), kinds)?;
        let mut groups: BTreeMap<(Vec<u8>, i32), Vec<u32>> = BTreeMap::new();
        for (row, p) in placed.iter().enumerate() {
            let partition = index.partition_bytes(p.partition).to_vec();
            groups
                .entry((partition, p.bucket))
                .or_default()
                .push(row as u32);
        }
        Ok((columns, kinds, groups))
    }

    /// [`TableWrite::route`] of a dynamic-bucket table: each row's bucket from the hash index,
    /// in input order (Java assigns record by record).
    #[allow(clippy::type_complexity)]
    pub(super) fn route_dynamic(
        &mut self,
        columns: &[ArrayRef],
    ) -> Result<BTreeMap<(Vec<u8>, i32), Vec<u32>>> {
        let rows = columns.first().map_or(0, |c| c.len());
        let kv = self
            .kv
            .as_ref()
            .ok_or_else(|| Error::invalid("key-value writer without key layout"))?;
        let keys = kv.key.encoder(columns)?;
        let partitions = self.partition.encoder(columns)?;
        let unpartitioned = self.partition.is_empty();
        let empty = BinaryRow::empty().to_serialized();
        let assigner = self
            .dynamic
            .as_mut()
            .ok_or_else(|| Error::invalid("dynamic bucket writer without assigner"))?;
        let mut out: BTreeMap<(Vec<u8>, i32), Vec<u32>> = BTreeMap::new();
        let mut scratch = Vec::new();
        for r in 0..rows {
            let p = if unpartitioned {
                empty.clone()
            } else {
                partitions.encode_serialized(r)?
            };
            let hash = keys.hash_code(r, &mut scratch)?;
            let b = assigner.assign(&p, hash)?;
            out.entry((p, b)).or_default().push(r as u32);
        }
        Ok(out)
    }

    /// Rows of the batch per (serialized partition, bucket) for the partitions whose bucket
    /// count is known; the other rows are kept (with their partitions' row counts and
    /// serialized sizes) for [`TableWrite::plan_pending_buckets`].
    #[allow(clippy::type_complexity)]
    pub(super) fn route_postpone_fixed(
        &mut self,
        columns: &[ArrayRef],
        kinds: Option<&ArrayRef>,
    ) -> Result<BTreeMap<(Vec<u8>, i32), Vec<u32>>> {
        let rows = columns.first().map_or(0, |c| c.len());
        let mut by_partition: BTreeMap<Vec<u8>, Vec<u32>> = BTreeMap::new();
        if self.partition.is_empty() {
            by_partition.insert(
                BinaryRow::empty().to_serialized(),
                (0..rows as u32).collect(),
            );
        } else {
            let encoder = self.partition.encoder(columns)?;
            for r in 0..rows {
                by_partition
                    .entry(encoder.encode_serialized(r)?)
                    .or_default()
                    .push(r as u32);
            }
        }
        let extractor = self
            .bucket_extractor
            .clone()
            .ok_or_else(|| Error::invalid("fixed-bucket postpone writer without bucket key"))?;
        let state = self
            .postpone_fixed
            .as_mut()
            .ok_or_else(|| Error::invalid("fixed-bucket postpone writer without planner"))?;
        let mut out: BTreeMap<(Vec<u8>, i32), Vec<u32>> = BTreeMap::new();
        for (partition, rows) in by_partition {
            let idx = UInt32Array::from(rows.clone());
            let take = |c: &ArrayRef| {
                arrow_select::take::take(c.as_ref(), &idx, None)
                    .map_err(|e| Error::arrow("selecting the rows of a partition", e))
            };
            let cols = columns.iter().map(take).collect::<Result<Vec<_>>>()?;
            match state.planner.count(&partition) {
                Some(n) => {
                    for (r, b) in rows.iter().zip(extractor.buckets_with(&cols, n)?) {
                        out.entry((partition.clone(), b)).or_default().push(*r);
                    }
                }
                None => {
                    let stats = state.stats.entry(partition).or_default();
                    stats.rows += rows.len() as i64;
                    if state.planner.needs_sizes() {
                        let encoder = BinaryRowEncoder::try_new(&cols, &state.row_types)?;
                        let mut buf = Vec::new();
                        for r in 0..rows.len() {
                            encoder.encode_into(r, &mut buf)?;
                            stats.serialized_bytes =
                                stats.serialized_bytes.saturating_add(buf.len() as i64);
                        }
                    }
                    let kinds = kinds.map(take).transpose()?;
                    state.pending.push((cols, kinds));
                }
            }
        }
        Ok(out)
    }

    /// Write the rows of `groups` ((partition, bucket) → row positions of `columns`).
    pub(super) fn write_groups(
        &mut self,
        groups: BTreeMap<(Vec<u8>, i32), Vec<u32>>,
        columns: &[ArrayRef],
        kinds: Option<&ArrayRef>,
    ) -> Result<()> {
        let n = columns.first().map_or(0, |c| c.len());
        // Primary-key buckets that sort what they buffer take their rows in key order here
        // (one copy, not a copy per bucket and a sorted copy); postpone buckets keep the input
        // order, and managed BLOB columns are written out in input order first.
        let presort = match (&self.kv, &self.postpone, &self.managed) {
            (Some(kv), None, None) => Some((Arc::clone(kv), kv.input_sort_keys(columns)?)),
            _ => None,
        };
        for ((partition, bucket), rows) in groups {
            let order = presort
                .as_ref()
                .map(|(kv, keys)| kv.input_order(keys, &rows));
            let taken: Vec<u32> = match &order {
                Some(order) => order.iter().map(|j| rows[*j as usize]).collect(),
                None => rows,
            };
            // Every row in one group, in order (one partition and bucket): no copy (and, when
            // sorted, no second look at the keys).
            if taken.len() == n && taken.iter().enumerate().all(|(i, r)| *r as usize == i) {
                let cols = columns.to_vec();
                self.write_bucket(partition, bucket, cols, kinds.cloned(), order.as_deref())?;
                continue;
            }
            let idx = UInt32Array::from(taken);
            let cols = columns
                .iter()
                .map(|c| arrow_select::take::take(c.as_ref(), &idx, None))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::arrow("selecting the rows of a bucket", e))?;
            let kinds = kinds
                .map(|k| arrow_select::take::take(k, &idx, None))
                .transpose()
                .map_err(|e| Error::arrow("selecting the row kinds of a bucket", e))?;
            self.write_bucket(partition, bucket, cols, kinds, order.as_deref())?;
        }
        Ok(())
    }
}

/// Cast an input column to the table column's Arrow type, refusing lossy casts.
pub(super) fn conform_column(col: &ArrayRef, field: &Field, ty: &DataType) -> Result<ArrayRef> {
    let opts = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    if !arrow_cast::can_cast_types(col.data_type(), field.data_type()) {
        return Err(Error::invalid(format!(
            "input column '{}' has type {} which cannot be written to a {} column",
            field.name(),
            col.data_type(),
            ty
        )));
    }
    arrow_cast::cast_with_options(col, field.data_type(), &opts).map_err(|e| {
        Error::invalid(format!(
            "input column '{}' ({}) does not fit the column type {ty}: {e}",
            field.name(),
            col.data_type()
        ))
    })
}
