//! Merge functions: what one key's records (oldest first) merge into.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.{DeduplicateMergeFunction,
//! FirstRowMergeFunction, PartialUpdateMergeFunction}` and
//! `aggregate.AggregateMergeFunction`.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeSet;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, ArrowNativeTypeOp, PrimitiveArray, RecordBatch, StringArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as ArrowType, TimeUnit};

use super::RowKind;
use super::agg::{FieldAgg, SimpleAgg, SumType};
use super::config::{MergeConfig, MergeEngine};
use super::value::{ColumnBuilder, Value, compare_nulls_first};
use crate::error::{Error, Result};
use crate::spec::DataField;

/// A value column of the merge input: its table field and Arrow type.
pub(crate) struct InputField<'a> {
    pub(crate) field: &'a DataField,
    pub(crate) arrow: &'a ArrowType,
}

/// The merge function of a reader, built for its input value columns.
pub(crate) enum Engine {
    Deduplicate { ignore_delete: bool },
    FirstRow { ignore_delete: bool },
    PartialUpdate(PartialUpdate),
    Aggregate(Aggregate),
}

impl Engine {
    pub(crate) fn try_new(cfg: &MergeConfig, input: &[InputField<'_>]) -> Result<Self> {
        Ok(match cfg.engine {
            MergeEngine::Deduplicate => Engine::Deduplicate {
                ignore_delete: cfg.ignore_delete,
            },
            MergeEngine::FirstRow => Engine::FirstRow {
                ignore_delete: cfg.ignore_delete,
            },
            MergeEngine::PartialUpdate => {
                Engine::PartialUpdate(PartialUpdate::try_new(cfg, input)?)
            }
            MergeEngine::Aggregation => Engine::Aggregate(Aggregate::try_new(cfg, input)?),
        })
    }
}

/// The add records (`+I`/`+U`) of one key group, oldest first, as rows of the reader's
/// window batches: the input of the column-wise fast paths.
pub(crate) struct GroupView<'a> {
    /// The window batches.
    pub(crate) window: &'a [RecordBatch],
    /// Index of the first value column in the batches.
    pub(crate) value_offset: usize,
    /// The null buffers of the value columns of every window batch, `width` per batch
    /// (`None`: the column has no nulls in that batch).
    pub(crate) nulls: &'a [Option<NullBuffer>],
    /// Value columns per window batch.
    pub(crate) width: usize,
    /// (window batch, row) of each record.
    pub(crate) recs: &'a [(usize, usize)],
}

impl GroupView<'_> {
    /// The array of value column `c` of record `rec` and the record's row in it.
    fn at(&self, rec: usize, c: usize) -> (&ArrayRef, usize) {
        let (w, r) = self.recs[rec];
        (&self.window[w].columns()[self.value_offset + c], r)
    }

    /// Whether value column `c` of record `rec` is not null (no call through the array).
    #[inline]
    fn is_valid(&self, rec: usize, c: usize) -> bool {
        let (w, r) = self.recs[rec];
        match &self.nulls[w * self.width + c] {
            None => true,
            Some(n) => n.is_valid(r),
        }
    }

    /// Whether the integer `sum` (null-skipping, oldest first) of column `c` has no
    /// overflow; `false` also for a column of another type.
    fn sum_fits<T: ArrowPrimitiveType>(&self, c: usize) -> bool
    where
        T::Native: ArrowNativeTypeOp,
    {
        let mut acc: Option<T::Native> = None;
        for rec in 0..self.recs.len() {
            if !self.is_valid(rec, c) {
                continue;
            }
            let (a, r) = self.at(rec, c);
            let Some(v) = a.as_primitive_opt::<T>().and_then(|p| p.values().get(r)) else {
                return false;
            };
            acc = match acc {
                None => Some(*v),
                Some(x) => match x.add_checked(*v) {
                    Ok(y) => Some(y),
                    Err(_) => return false,
                },
            };
        }
        true
    }
}

/// The add-only key groups of the pending output rows whose merge was deferred: they are
/// merged column by column when the output is built ([`Engine::fill_column`]), so the
/// per-cell work runs in one loop per column and aggregate, with the column type resolved
/// once.
#[derive(Debug, Default)]
pub(crate) struct Deferred {
    /// (window batch, row) of the records of every group, oldest first, group after group.
    pub(crate) recs: Vec<(usize, usize)>,
    /// End (exclusive) in `recs` of each group.
    pub(crate) ends: Vec<usize>,
}

impl Deferred {
    /// Add a group; returns its index.
    pub(crate) fn push(&mut self, recs: &[(usize, usize)]) -> usize {
        self.recs.extend_from_slice(recs);
        self.ends.push(self.recs.len());
        self.ends.len() - 1
    }

    pub(crate) fn clear(&mut self) {
        self.recs.clear();
        self.ends.clear();
    }

    /// The records of groups `groups`, group by group.
    #[inline]
    fn groups(
        &self,
        groups: std::ops::Range<usize>,
    ) -> impl Iterator<Item = &[(usize, usize)]> + '_ {
        let mut start = match groups.start.checked_sub(1) {
            Some(p) => self.ends.get(p).copied().unwrap_or(0),
            None => 0,
        };
        self.ends
            .get(groups)
            .unwrap_or(&[])
            .iter()
            .map(move |&end| {
                let recs = self.recs.get(start..end).unwrap_or(&[]);
                start = end;
                recs
            })
    }
}

/// What [`Engine::fill_column`] reads: the window batches and the deferred groups.
pub(crate) struct FillInput<'a> {
    pub(crate) window: &'a [RecordBatch],
    pub(crate) value_offset: usize,
    /// As [`GroupView::nulls`].
    pub(crate) nulls: &'a [Option<NullBuffer>],
    pub(crate) width: usize,
    pub(crate) deferred: &'a Deferred,
}

impl FillInput<'_> {
    /// The null buffers of value column `c`, one per window batch.
    fn col_nulls(&self, c: usize) -> Vec<Option<&NullBuffer>> {
        (0..self.window.len())
            .map(|w| self.nulls[w * self.width + c].as_ref())
            .collect()
    }

    /// Value column `c` of every window batch as `A`.
    fn arrays<A: 'static>(&self, c: usize) -> Result<Vec<&A>> {
        self.window
            .iter()
            .map(|b| {
                b.columns()[self.value_offset + c]
                    .as_any()
                    .downcast_ref::<A>()
                    .ok_or_else(|| Error::invalid("merge: a value column changed its type"))
            })
            .collect()
    }

    /// Push, for each group of `groups`, the record `pick` selects (a null when `None`).
    #[inline]
    fn fill_pick(
        &self,
        groups: std::ops::Range<usize>,
        col: &mut ColumnBuilder<'static>,
        mut pick: impl FnMut(&[(usize, usize)]) -> Option<(usize, usize)>,
    ) {
        for recs in self.deferred.groups(groups) {
            match pick(recs) {
                Some((w, r)) => col.push_base(w, r, 1),
                None => col.push_null(),
            }
        }
    }

    /// Push the newest (`last`) or oldest non-null value of column `c` of each group.
    fn fill_non_null(
        &self,
        c: usize,
        groups: std::ops::Range<usize>,
        col: &mut ColumnBuilder<'static>,
        last: bool,
    ) {
        let nulls = self.col_nulls(c);
        if nulls.iter().all(Option::is_none) {
            // No nulls in the column: the newest (oldest) value.
            return if last {
                self.fill_pick(groups, col, |recs| recs.last().copied())
            } else {
                self.fill_pick(groups, col, |recs| recs.first().copied())
            };
        }
        let valid = |&(w, r): &(usize, usize)| nulls[w].is_none_or(|n| n.is_valid(r));
        if last {
            self.fill_pick(groups, col, |recs| recs.iter().rev().copied().find(valid));
        } else {
            self.fill_pick(groups, col, |recs| recs.iter().copied().find(valid));
        }
    }

    /// Push the `max` (ties: the older value) or `min` (ties: the newer) of the non-null
    /// values of column `c` of each group, values compared with `cmp(w, r, w2, r2)`.
    fn fill_extreme(
        &self,
        c: usize,
        groups: std::ops::Range<usize>,
        col: &mut ColumnBuilder<'static>,
        max: bool,
        cmp: impl Fn(usize, usize, usize, usize) -> Ordering,
    ) {
        let nulls = self.col_nulls(c);
        self.fill_pick(groups, col, |recs| {
            let mut best: Option<(usize, usize)> = None;
            for &(w, r) in recs {
                if !nulls[w].is_none_or(|n| n.is_valid(r)) {
                    continue;
                }
                best = Some(match best {
                    None => (w, r),
                    Some((bw, br)) => {
                        let ord = cmp(bw, br, w, r);
                        let keep = if max {
                            ord != Ordering::Less
                        } else {
                            ord == Ordering::Less
                        };
                        if keep { (bw, br) } else { (w, r) }
                    }
                });
            }
            best
        });
    }

    /// [`FillInput::fill_extreme`] of a primitive column.
    fn fill_extreme_prim<T: ArrowPrimitiveType>(
        &self,
        c: usize,
        groups: std::ops::Range<usize>,
        col: &mut ColumnBuilder<'static>,
        max: bool,
    ) -> Result<()> {
        let vals: Vec<&[T::Native]> = self
            .arrays::<PrimitiveArray<T>>(c)?
            .into_iter()
            .map(|a| a.values().as_ref())
            .collect();
        self.fill_extreme(c, groups, col, max, |w, r, w2, r2| {
            vals[w][r].compare(vals[w2][r2])
        });
        Ok(())
    }

    /// Push the `sum` (null-skipping, oldest first) of column `c` of each group: the input
    /// row when a single value is non-null.
    ///
    /// # Errors
    /// Integer overflow (the reader checks integer sums before deferring a group).
    fn fill_sum<T: ArrowPrimitiveType>(
        &self,
        c: usize,
        groups: std::ops::Range<usize>,
        col: &mut ColumnBuilder<'static>,
        wrap: fn(T::Native) -> Value,
    ) -> Result<()>
    where
        T::Native: ArrowNativeTypeOp,
    {
        let nulls = self.col_nulls(c);
        let vals: Vec<&[T::Native]> = self
            .arrays::<PrimitiveArray<T>>(c)?
            .into_iter()
            .map(|a| a.values().as_ref())
            .collect();
        for recs in self.deferred.groups(groups) {
            let mut acc: Option<T::Native> = None;
            let mut single = None;
            for &(w, r) in recs {
                if !nulls[w].is_none_or(|n| n.is_valid(r)) {
                    continue;
                }
                let v = vals[w][r];
                acc = Some(match acc {
                    None => {
                        single = Some((w, r));
                        v
                    }
                    Some(x) => {
                        single = None;
                        x.add_checked(v)
                            .map_err(|_| Error::invalid("merge: overflow in a deferred sum"))?
                    }
                });
            }
            match (acc, single) {
                (None, _) => col.push_null(),
                (Some(_), Some((w, r))) => col.push_base(w, r, 1),
                (Some(x), None) => col.push_value(Cow::Owned(wrap(x))),
            }
        }
        Ok(())
    }
}

impl Engine {
    /// Append the rows of value column `c` of deferred groups `groups` to `col`.
    ///
    /// # Errors
    /// [`Error::Invalid`] if the engine never defers groups or a column does not have its
    /// schema type.
    pub(crate) fn fill_column(
        &self,
        input: &FillInput<'_>,
        c: usize,
        groups: std::ops::Range<usize>,
        col: &mut ColumnBuilder<'static>,
    ) -> Result<()> {
        let s = match self {
            Engine::PartialUpdate(_) => SimpleAgg::LastNonNull,
            Engine::Aggregate(a) => a
                .simple
                .as_ref()
                .and_then(|s| s.get(c).copied())
                .ok_or_else(|| Error::invalid("merge: deferred group without a fast form"))?,
            _ => {
                return Err(Error::invalid(
                    "merge: deferred group of a row-picking engine",
                ));
            }
        };
        match s {
            SimpleAgg::Last => input.fill_pick(groups, col, |recs| recs.last().copied()),
            SimpleAgg::First => input.fill_pick(groups, col, |recs| recs.first().copied()),
            SimpleAgg::LastNonNull => input.fill_non_null(c, groups, col, true),
            SimpleAgg::FirstNonNull => input.fill_non_null(c, groups, col, false),
            SimpleAgg::Sum(t) => match t {
                SumType::I8 => input.fill_sum::<Int8Type>(c, groups, col, Value::I8)?,
                SumType::I16 => input.fill_sum::<Int16Type>(c, groups, col, Value::I16)?,
                SumType::I32 => input.fill_sum::<Int32Type>(c, groups, col, Value::I32)?,
                SumType::I64 => input.fill_sum::<Int64Type>(c, groups, col, Value::I64)?,
                SumType::F32 => input.fill_sum::<Float32Type>(c, groups, col, Value::F32)?,
                SumType::F64 => input.fill_sum::<Float64Type>(c, groups, col, Value::F64)?,
            },
            SimpleAgg::Max | SimpleAgg::Min => {
                let max = s == SimpleAgg::Max;
                let dt = input
                    .window
                    .first()
                    .map(|b| b.columns()[input.value_offset + c].data_type().clone());
                macro_rules! prim {
                    ($t:ty) => {
                        input.fill_extreme_prim::<$t>(c, groups, col, max)?
                    };
                }
                match dt {
                    None => {}
                    Some(ArrowType::Int8) => prim!(Int8Type),
                    Some(ArrowType::Int16) => prim!(Int16Type),
                    Some(ArrowType::Int32) => prim!(Int32Type),
                    Some(ArrowType::Int64) => prim!(Int64Type),
                    Some(ArrowType::Float32) => prim!(Float32Type),
                    Some(ArrowType::Float64) => prim!(Float64Type),
                    Some(ArrowType::Date32) => prim!(Date32Type),
                    Some(ArrowType::Decimal128(_, _)) => prim!(Decimal128Type),
                    Some(ArrowType::Timestamp(TimeUnit::Second, _)) => {
                        prim!(TimestampSecondType)
                    }
                    Some(ArrowType::Timestamp(TimeUnit::Millisecond, _)) => {
                        prim!(TimestampMillisecondType)
                    }
                    Some(ArrowType::Timestamp(TimeUnit::Microsecond, _)) => {
                        prim!(TimestampMicrosecondType)
                    }
                    Some(ArrowType::Timestamp(TimeUnit::Nanosecond, _)) => {
                        prim!(TimestampNanosecondType)
                    }
                    Some(ArrowType::Utf8) => {
                        let arrays = input.arrays::<StringArray>(c)?;
                        input.fill_extreme(c, groups, col, max, |w, r, w2, r2| {
                            arrays[w].value(r).cmp(arrays[w2].value(r2))
                        });
                    }
                    Some(other) => {
                        return Err(Error::invalid(format!(
                            "merge: deferred max/min of a {other} column"
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the add-only group `g` (two or more records) can be deferred to
    /// [`Engine::fill_column`]; otherwise the record-by-record merge decides (and reports
    /// its errors).
    pub(crate) fn can_defer(&self, g: &GroupView<'_>) -> bool {
        match self {
            Engine::PartialUpdate(p) => p.can_defer(g),
            Engine::Aggregate(a) => a.can_defer(g),
            _ => false,
        }
    }
}

fn init_row(values: Vec<Value>, nullable: &[bool]) -> Result<Vec<Value>> {
    for (i, v) in values.iter().enumerate() {
        if v.is_null() && !nullable[i] {
            return Err(Error::invalid(format!("Field {i} can not be null")));
        }
    }
    Ok(values)
}

/// `aggregation` merge engine.
pub(crate) struct Aggregate {
    aggs: Vec<FieldAgg>,
    /// The fast-path form of every aggregate, if all have one.
    simple: Option<Vec<SimpleAgg>>,
    remove_record_on_delete: bool,
    nullable: Vec<bool>,
}

impl Aggregate {
    fn try_new(cfg: &MergeConfig, input: &[InputField<'_>]) -> Result<Self> {
        let mut aggs = Vec::with_capacity(input.len());
        for f in input {
            let name = &f.field.name;
            let opts = cfg.field_options(name);
            let func = if cfg.sequence_fields.contains(name) {
                "last_value".to_string()
            } else if cfg.primary_keys.contains(name) {
                "primary-key".to_string()
            } else {
                opts.aggregate_function
                    .clone()
                    .or_else(|| cfg.default_aggregate_function.clone())
                    .unwrap_or_else(|| "last_non_null_value".to_string())
            };
            aggs.push(FieldAgg::try_new(
                &func,
                f.field,
                f.arrow,
                &opts,
                cfg.aggregation_remove_record_on_delete,
            )?);
        }
        let simple = aggs.iter().map(FieldAgg::simple).collect();
        Ok(Aggregate {
            aggs,
            simple,
            remove_record_on_delete: cfg.aggregation_remove_record_on_delete,
            nullable: input.iter().map(|f| f.field.data_type.nullable).collect(),
        })
    }

    /// Whether an add-only group can be merged column by column: every aggregate has a
    /// fast form and no integer `sum` overflows (an error of the record-by-record merge,
    /// also for columns not in the output).
    fn can_defer(&self, g: &GroupView<'_>) -> bool {
        let Some(simple) = self.simple.as_ref() else {
            return false;
        };
        simple.iter().enumerate().all(|(c, s)| match s {
            SimpleAgg::Sum(SumType::I8) => g.sum_fits::<Int8Type>(c),
            SimpleAgg::Sum(SumType::I16) => g.sum_fits::<Int16Type>(c),
            SimpleAgg::Sum(SumType::I32) => g.sum_fits::<Int32Type>(c),
            SimpleAgg::Sum(SumType::I64) => g.sum_fits::<Int64Type>(c),
            _ => true,
        })
    }

    /// Merge `records` (kind, values), oldest first. Returns the result kind and row.
    pub(crate) fn merge(
        &mut self,
        records: impl Iterator<Item = Result<(RowKind, Vec<Value>)>>,
    ) -> Result<(RowKind, Vec<Value>)> {
        for a in &mut self.aggs {
            a.reset();
        }
        let mut row = vec![Value::Null; self.aggs.len()];
        let mut delete_row = false;
        for rec in records {
            let (kind, input) = rec?;
            delete_row = self.remove_record_on_delete && kind == RowKind::Delete;
            if delete_row {
                row = init_row(input, &self.nullable)?;
                continue;
            }
            let retract = kind.is_retract();
            for ((acc, inp), agg) in row.iter_mut().zip(input).zip(&mut self.aggs) {
                let a = std::mem::replace(acc, Value::Null);
                *acc = if retract {
                    agg.retract(a, inp)?
                } else {
                    agg.agg(a, inp)?
                };
            }
        }
        Ok((
            if delete_row {
                RowKind::Delete
            } else {
                RowKind::Insert
            },
            row,
        ))
    }
}

/// `partial-update` merge engine.
pub(crate) struct PartialUpdate {
    ignore_delete: bool,
    remove_record_on_delete: bool,
    /// The table has sequence groups (Java `fieldSequenceEnabled`).
    sequence_enabled: bool,
    /// Per input column: index into `groups` if the column is an ordering or protected
    /// field of a sequence group.
    group_of: Vec<Option<usize>>,
    /// Ordering fields (input column indexes) of each group.
    groups: Vec<Vec<usize>>,
    aggs: Vec<Option<FieldAgg>>,
    /// Input columns of ordering fields listed in
    /// `partial-update.remove-record-on-sequence-group`.
    partial_delete: BTreeSet<usize>,
    nullable: Vec<bool>,
    /// Input columns of NOT NULL fields.
    not_null: Vec<usize>,
}

const PU_DELETE_MSG: &str = "By default, Partial update can not accept delete records, you can choose one of the following solutions:\n1. Configure 'ignore-delete' to ignore delete records.\n2. Configure 'partial-update.remove-record-on-delete' to remove the whole row when receiving delete records.\n3. Configure 'sequence-group's to retract partial columns. Also configure 'partial-update.remove-record-on-sequence-group' to remove the whole row when receiving deleted records of `specified sequence group`.";

impl PartialUpdate {
    fn try_new(cfg: &MergeConfig, input: &[InputField<'_>]) -> Result<Self> {
        let names: Vec<&str> = cfg.fields.iter().map(|f| f.name.as_str()).collect();
        let require = |n: &String| {
            names.iter().position(|x| *x == n).ok_or_else(|| {
                Error::invalid(format!("Field {n} can not be found in table schema"))
            })
        };
        // Table-level validation (Java PartialUpdateMergeFunction.Factory).
        let mut table_group_of: Vec<Option<usize>> = vec![None; names.len()];
        let mut table_groups: Vec<Vec<usize>> = Vec::new();
        let mut all_sequence_fields: Vec<&str> = Vec::new();
        let mut protected: Vec<&str> = Vec::new();
        for g in &cfg.sequence_groups {
            let key = format!("fields.{}.sequence-group", g.ordering.join(","));
            let ordering = g.ordering.iter().map(require).collect::<Result<Vec<_>>>()?;
            let gi = table_groups.len();
            table_groups.push(ordering.clone());
            for p in &g.protected {
                let idx = require(p)?;
                if cfg.primary_keys.contains(p) {
                    return Err(pk_in_group(&key, p));
                }
                if table_group_of[idx].is_some() {
                    return Err(Error::invalid(format!(
                        "Field {p} is defined repeatedly by multiple groups: {key}"
                    )));
                }
                table_group_of[idx] = Some(gi);
                protected.push(names[idx]);
            }
            for idx in ordering {
                if cfg.primary_keys.iter().any(|k| k == names[idx]) {
                    return Err(pk_in_group(&key, names[idx]));
                }
                all_sequence_fields.push(names[idx]);
                table_group_of[idx] = Some(gi);
            }
        }
        let func_of = |name: &str| -> Result<Option<String>> {
            if all_sequence_fields.contains(&name) {
                return Ok(None);
            }
            if cfg.primary_keys.iter().any(|k| k == name) {
                return Ok(Some("primary-key".into()));
            }
            let func = cfg
                .field_options
                .get(name)
                .and_then(|o| o.aggregate_function.clone())
                .or_else(|| cfg.default_aggregate_function.clone());
            if let Some(f) = &func
                && f != "last_non_null_value"
                && !protected.contains(&name)
            {
                return Err(Error::invalid(format!(
                    "Must use sequence group for aggregation functions but not found for field {name}."
                )));
            }
            Ok(func)
        };
        // Validate every table field's function, as Java does at factory creation.
        for n in &names {
            func_of(n)?;
        }
        let ignore_delete = cfg.ignore_delete;
        let remove_on_delete = cfg.partial_update_remove_record_on_delete;
        let remove_on_group = &cfg.partial_update_remove_record_on_sequence_group;
        if remove_on_delete && ignore_delete {
            return Err(conflict(
                "ignore-delete",
                "partial-update.remove-record-on-delete",
            ));
        }
        if !remove_on_group.is_empty() && ignore_delete {
            return Err(conflict(
                "ignore-delete",
                "partial-update.remove-record-on-sequence-group",
            ));
        }
        if remove_on_delete && !table_groups.is_empty() {
            return Err(conflict(
                "sequence-group",
                "partial-update.remove-record-on-delete",
            ));
        }
        for f in remove_on_group {
            if !all_sequence_fields.contains(&f.as_str()) {
                return Err(Error::invalid(format!(
                    "field '{}' defined in 'partial-update.remove-record-on-sequence-group' option must be part of sequence groups",
                    remove_on_group.join(",")
                )));
            }
        }

        // Project onto the input columns (Java Factory.create(readType)).
        let input_index =
            |table_idx: usize| input.iter().position(|f| f.field.name == names[table_idx]);
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_map: Vec<Option<usize>> = vec![None; table_groups.len()];
        let mut group_of = Vec::with_capacity(input.len());
        let mut aggs = Vec::with_capacity(input.len());
        for f in input {
            let t = require(&f.field.name)?;
            let g = match table_group_of[t] {
                None => None,
                Some(tg) => Some(match group_map[tg] {
                    Some(ig) => ig,
                    None => {
                        let ordering = table_groups[tg]
                            .iter()
                            .map(|o| {
                                input_index(*o).ok_or_else(|| {
                                    Error::invalid(format!(
                                        "partial-update: sequence field '{}' of field '{}' is not in the read columns",
                                        names[*o], f.field.name
                                    ))
                                })
                            })
                            .collect::<Result<Vec<_>>>()?;
                        groups.push(ordering);
                        group_map[tg] = Some(groups.len() - 1);
                        groups.len() - 1
                    }
                }),
            };
            group_of.push(g);
            aggs.push(match func_of(&f.field.name)? {
                None => None,
                Some(func) => Some(FieldAgg::try_new(
                    &func,
                    f.field,
                    f.arrow,
                    &cfg.field_options(&f.field.name),
                    cfg.aggregation_remove_record_on_delete,
                )?),
            });
        }
        let partial_delete = remove_on_group
            .iter()
            .filter_map(|n| input.iter().position(|f| &f.field.name == n))
            .collect();
        Ok(PartialUpdate {
            ignore_delete,
            remove_record_on_delete: remove_on_delete,
            sequence_enabled: !table_groups.is_empty(),
            group_of,
            groups,
            aggs,
            partial_delete,
            nullable: input.iter().map(|f| f.field.data_type.nullable).collect(),
            not_null: (0..input.len())
                .filter(|c| !input[*c].field.data_type.nullable)
                .collect(),
        })
    }

    fn compare_group(&self, g: usize, input: &[Value], row: &[Value]) -> Result<Ordering> {
        for &f in &self.groups[g] {
            let o = compare_nulls_first(&input[f], &row[f])?;
            if o != Ordering::Equal {
                return Ok(o);
            }
        }
        Ok(Ordering::Equal)
    }

    fn group_is_empty(&self, g: usize, input: &[Value]) -> bool {
        self.groups[g].iter().all(|f| input[*f].is_null())
    }

    /// Whether an add-only group can be merged column by column (newest non-null value
    /// of every column): no sequence groups and no null in a NOT NULL column.
    fn can_defer(&self, g: &GroupView<'_>) -> bool {
        self.groups.is_empty()
            && self
                .not_null
                .iter()
                .all(|&c| (0..g.recs.len()).all(|r| g.is_valid(r, c)))
    }

    /// Merge `records` (kind, values), oldest first.
    pub(crate) fn merge(
        &mut self,
        records: impl Iterator<Item = Result<(RowKind, Vec<Value>)>>,
    ) -> Result<(RowKind, Vec<Value>)> {
        for a in self.aggs.iter_mut().flatten() {
            a.reset();
        }
        let n = self.nullable.len();
        let mut row = vec![Value::Null; n];
        let mut meet_insert = false;
        let mut filled = false;
        let mut delete_row = false;
        for rec in records {
            let (kind, input) = rec?;
            delete_row = false;
            if kind.is_retract() {
                if !filled {
                    row = init_row(input.clone(), &self.nullable)?;
                    filled = true;
                }
                if self.ignore_delete {
                    continue;
                }
                if self.sequence_enabled {
                    delete_row = self.retract_with_groups(kind, input, &mut row)?;
                    continue;
                }
                if self.remove_record_on_delete {
                    if kind == RowKind::Delete {
                        delete_row = true;
                        row = init_row(input, &self.nullable)?;
                    }
                    continue;
                }
                return Err(Error::invalid(PU_DELETE_MSG));
            }
            if self.groups.is_empty() {
                for (i, v) in input.into_iter().enumerate() {
                    if !v.is_null() {
                        row[i] = v;
                    } else if !self.nullable[i] {
                        return Err(Error::invalid(format!("Field {i} can not be null")));
                    }
                }
            } else {
                self.update_with_groups(input, &mut row)?;
            }
            meet_insert = true;
            filled = true;
        }
        let kind = if delete_row || !meet_insert {
            RowKind::Delete
        } else {
            RowKind::Insert
        };
        Ok((kind, row))
    }

    fn update_with_groups(&mut self, input: Vec<Value>, row: &mut [Value]) -> Result<()> {
        let n = row.len();
        let mut processed = vec![false; n];
        for i in 0..n {
            match self.group_of[i] {
                Some(g) => {
                    if processed[i] {
                        continue;
                    }
                    if self.group_is_empty(g, &input) {
                        for &f in &self.groups[g] {
                            processed[f] = true;
                        }
                        continue;
                    }
                    let field = input[i].clone();
                    if self.compare_group(g, &input, row)? != Ordering::Less {
                        if self.groups[g].contains(&i) {
                            for &f in &self.groups[g] {
                                row[f] = input[f].clone();
                                processed[f] = true;
                            }
                            continue;
                        }
                        let acc = std::mem::replace(&mut row[i], Value::Null);
                        row[i] = match &mut self.aggs[i] {
                            None => field,
                            Some(a) => a.agg(acc, field)?,
                        };
                    } else if let Some(a) = &mut self.aggs[i] {
                        let acc = std::mem::replace(&mut row[i], Value::Null);
                        row[i] = a.agg_reversed(acc, field)?;
                    }
                }
                None => {
                    let field = input[i].clone();
                    match &mut self.aggs[i] {
                        Some(a) => {
                            let acc = std::mem::replace(&mut row[i], Value::Null);
                            row[i] = a.agg(acc, field)?;
                        }
                        None => {
                            if !field.is_null() {
                                row[i] = field;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Returns true when the record turned the row into a delete.
    fn retract_with_groups(
        &mut self,
        kind: RowKind,
        input: Vec<Value>,
        row: &mut Vec<Value>,
    ) -> Result<bool> {
        let n = row.len();
        let mut updated: BTreeSet<usize> = BTreeSet::new();
        let mut processed = vec![false; n];
        for i in 0..n {
            let Some(g) = self.group_of[i] else {
                continue;
            };
            if processed[i] {
                continue;
            }
            if self.group_is_empty(g, &input) {
                for &f in &self.groups[g] {
                    processed[f] = true;
                }
                continue;
            }
            if self.compare_group(g, &input, row)? != Ordering::Less {
                if self.groups[g].contains(&i) {
                    for &f in &self.groups[g].clone() {
                        if !updated.contains(&f) {
                            if kind == RowKind::Delete && self.partial_delete.contains(&f) {
                                *row = init_row(input, &self.nullable)?;
                                return Ok(true);
                            }
                            row[f] = input[f].clone();
                            updated.insert(f);
                        }
                        processed[f] = true;
                    }
                } else {
                    let acc = std::mem::replace(&mut row[i], Value::Null);
                    row[i] = match &mut self.aggs[i] {
                        None => Value::Null,
                        Some(a) => a.retract(acc, input[i].clone())?,
                    };
                }
            } else if let Some(a) = &mut self.aggs[i] {
                let acc = std::mem::replace(&mut row[i], Value::Null);
                row[i] = a.retract(acc, input[i].clone())?;
            }
        }
        Ok(false)
    }
}

fn pk_in_group(key: &str, field: &str) -> Error {
    Error::invalid(format!(
        "The sequence-group '{key}' contains primary key field '{field}', which is not allowed. Primary key columns cannot be put in sequence-group."
    ))
}

fn conflict(a: &str, b: &str) -> Error {
    Error::invalid(format!(
        "{a} and {b} have conflicting behavior so should not be enabled at the same time."
    ))
}
