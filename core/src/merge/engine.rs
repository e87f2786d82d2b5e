//! Merge functions: what one key's records (oldest first) merge into.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.{DeduplicateMergeFunction,
//! FirstRowMergeFunction, PartialUpdateMergeFunction}` and
//! `aggregate.AggregateMergeFunction`.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use arrow_array::{ArrayRef, ArrowNativeTypeOp, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType as ArrowType;

use super::RowKind;
use super::agg::{FieldAgg, SimpleAgg, SumType, native_cmp};
use super::config::{MergeConfig, MergeEngine};
use super::value::{OutCell, Value, compare_nulls_first};
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

    fn cell(&self, rec: usize) -> OutCell {
        let (w, r) = self.recs[rec];
        OutCell::Base(w, r)
    }

    fn last_non_null(&self, c: usize) -> OutCell {
        match (0..self.recs.len()).rev().find(|r| self.is_valid(*r, c)) {
            Some(r) => self.cell(r),
            None => OutCell::Val(Value::Null),
        }
    }

    fn first_non_null(&self, c: usize) -> OutCell {
        match (0..self.recs.len()).find(|r| self.is_valid(*r, c)) {
            Some(r) => self.cell(r),
            None => OutCell::Val(Value::Null),
        }
    }

    /// `sum` (null-skipping, oldest first); `None` on integer overflow or a type mismatch.
    fn sum<T: ArrowPrimitiveType>(&self, c: usize, wrap: fn(T::Native) -> Value) -> Option<OutCell>
    where
        T::Native: ArrowNativeTypeOp,
    {
        let mut acc: Option<T::Native> = None;
        let mut single = None;
        for rec in 0..self.recs.len() {
            if !self.is_valid(rec, c) {
                continue;
            }
            let (a, r) = self.at(rec, c);
            let v = *a.as_primitive_opt::<T>()?.values().get(r)?;
            acc = Some(match acc {
                None => {
                    single = Some(rec);
                    v
                }
                Some(x) => {
                    single = None;
                    x.add_checked(v).ok()?
                }
            });
        }
        Some(match (acc, single) {
            (None, _) => OutCell::Val(Value::Null),
            (Some(_), Some(rec)) => self.cell(rec),
            (Some(x), None) => OutCell::Val(wrap(x)),
        })
    }

    /// `max` / `min` over the non-null values: ties keep the older value for `max`, the
    /// newer for `min` (as `FieldAgg::agg`). `None` for an unsupported type.
    fn extreme(&self, c: usize, max: bool) -> Option<OutCell> {
        let mut best: Option<usize> = None;
        for rec in 0..self.recs.len() {
            if !self.is_valid(rec, c) {
                continue;
            }
            best = Some(match best {
                None => rec,
                Some(b) => {
                    let (x, i) = self.at(b, c);
                    let (y, j) = self.at(rec, c);
                    let ord = native_cmp(x.as_ref(), i, y.as_ref(), j)?;
                    let keep = if max {
                        ord != Ordering::Less
                    } else {
                        ord == Ordering::Less
                    };
                    if keep { b } else { rec }
                }
            });
        }
        Some(match best {
            Some(b) => self.cell(b),
            None => OutCell::Val(Value::Null),
        })
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

    /// Merge a group of two or more add records column by column: the output cells
    /// (`output`: input value column indexes), whose row kind is `+I`. `false` when the
    /// fast path does not apply (an aggregate without a fast form, integer overflow of
    /// `sum`): then [`Aggregate::merge`] decides.
    ///
    /// The cells are appended to `out`; on `false` its contents are meaningless.
    pub(crate) fn merge_adds(
        &self,
        g: &GroupView<'_>,
        output: &[usize],
        out: &mut Vec<OutCell>,
    ) -> bool {
        let Some(simple) = self.simple.as_ref() else {
            return false;
        };
        // Every input column is aggregated, as in `merge` (a sum overflow there is an
        // error even when the column is not in the output).
        for (c, s) in simple.iter().enumerate() {
            if matches!(s, SimpleAgg::Sum(_))
                && !output.contains(&c)
                && self.cell(g, c, *s).is_none()
            {
                return false;
            }
        }
        for &c in output {
            match simple.get(c).and_then(|s| self.cell(g, c, *s)) {
                Some(cell) => out.push(cell),
                None => return false,
            }
        }
        true
    }

    fn cell(&self, g: &GroupView<'_>, c: usize, s: SimpleAgg) -> Option<OutCell> {
        Some(match s {
            SimpleAgg::Last => g.cell(g.recs.len().checked_sub(1)?),
            SimpleAgg::First => g.cell(0),
            SimpleAgg::LastNonNull => g.last_non_null(c),
            SimpleAgg::FirstNonNull => g.first_non_null(c),
            SimpleAgg::Max => g.extreme(c, true)?,
            SimpleAgg::Min => g.extreme(c, false)?,
            SimpleAgg::Sum(t) => match t {
                SumType::I8 => g.sum::<Int8Type>(c, Value::I8)?,
                SumType::I16 => g.sum::<Int16Type>(c, Value::I16)?,
                SumType::I32 => g.sum::<Int32Type>(c, Value::I32)?,
                SumType::I64 => g.sum::<Int64Type>(c, Value::I64)?,
                SumType::F32 => g.sum::<Float32Type>(c, Value::F32)?,
                SumType::F64 => g.sum::<Float64Type>(c, Value::F64)?,
            },
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

    /// Merge a group of two or more add records column by column: the output cells
    /// (`output`: input value column indexes), row kind `+I`. `false` when the fast path
    /// does not apply (sequence groups, a null in a NOT NULL column): then
    /// [`PartialUpdate::merge`] decides.
    ///
    /// The cells are appended to `out`; on `false` nothing is appended.
    pub(crate) fn merge_adds(
        &self,
        g: &GroupView<'_>,
        output: &[usize],
        out: &mut Vec<OutCell>,
    ) -> bool {
        if !self.groups.is_empty() {
            return false;
        }
        for &c in &self.not_null {
            if (0..g.recs.len()).any(|r| !g.is_valid(r, c)) {
                return false;
            }
        }
        out.extend(output.iter().map(|&c| g.last_non_null(c)));
        true
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
