//! Pruning on partition values and min/max/null-count statistics, and scalar evaluation.

use std::cmp::Ordering;

use super::{BoundLeaf, CmpOp, Node, Test, Value, minmax_prunable};
use crate::spec::{BinaryRow, DataField, DataFileMeta, DataType, SimpleStats, TypeKind};

/// Statistics of one column of one data file, as stored in its `_VALUE_STATS` or
/// `_KEY_STATS`, with the field id and type under which the *file* was written.
///
/// Source: Java `org.apache.paimon.stats.SimpleStats` (one column of it) and
/// `SimpleStatsEvolution`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnStats {
    /// Field id of the column in the file's schema.
    pub field_id: i32,
    /// Type of the column in the file's schema (nullability is ignored).
    pub data_type: DataType,
    /// Minimum non-null value; `None` = unknown (or every value is null).
    pub min: Option<Value>,
    /// Maximum non-null value; `None` = unknown (or every value is null).
    pub max: Option<Value>,
    /// Number of nulls; `None` = unknown.
    pub null_count: Option<i64>,
}

impl ColumnStats {
    /// The columns of a `SimpleStats` record (`_VALUE_STATS`, `_KEY_STATS` or
    /// `_PARTITION_STATS`) whose columns are `fields` (the file's fields, in stats order; for
    /// value stats see [`value_stats_fields`]).
    ///
    /// Lenient, because statistics only ever *enable* pruning: when the rows' arity differs
    /// from `fields.len()` the result is empty (no statistics), a min or max that does not
    /// decode is unknown, and a missing null count is unknown.
    pub fn from_simple_stats(stats: &SimpleStats, fields: &[DataField]) -> Vec<ColumnStats> {
        if stats.min_values.arity() != fields.len() || stats.max_values.arity() != fields.len() {
            return Vec::new();
        }
        fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let get = |row: &BinaryRow| {
                    row.field(i, &f.data_type)
                        .ok()
                        .and_then(|d| Value::from_datum(&d))
                };
                ColumnStats {
                    field_id: f.id,
                    data_type: f.data_type.clone(),
                    min: get(&stats.min_values),
                    max: get(&stats.max_values),
                    null_count: stats.null_counts.get(i),
                }
            })
            .collect()
    }
}

/// The fields of a data file's `_VALUE_STATS`: the fields of the file's schema
/// (`file_schema_fields`, schema `_SCHEMA_ID`), projected by `_WRITE_COLS` when set, then by
/// `_VALUE_STATS_COLS` when set (empty list = no value stats); `write_cols` may also name the
/// row-tracking columns `_ROW_ID` and `_SEQUENCE_NUMBER`. `None` when a listed name is not in
/// the schema (the statistics cannot be interpreted: use none).
///
/// Source: Java `org.apache.paimon.stats.SimpleStatsEvolutions` / `EvolutionStatsCache`
/// (`schema.project(writeCols).project(valueStatsCols)`).
pub fn value_stats_fields(
    file: &DataFileMeta,
    file_schema_fields: &[DataField],
) -> Option<Vec<DataField>> {
    // `_ROW_ID` / `_SEQUENCE_NUMBER` in `write_cols`: files a compaction of a row-tracking
    // table wrote (their stats cover both columns too).
    let system = crate::spec::special_fields::row_tracking_fields();
    let project = |fields: &[DataField], names: &[String]| -> Option<Vec<DataField>> {
        names
            .iter()
            .map(|n| {
                fields
                    .iter()
                    .chain(system.iter())
                    .find(|f| &f.name == n)
                    .cloned()
            })
            .collect()
    };
    let written = match &file.write_cols {
        Some(cols) => project(file_schema_fields, cols)?,
        None => file_schema_fields.to_vec(),
    };
    match &file.value_stats_cols {
        Some(cols) => project(&written, cols),
        None => Some(written),
    }
}

fn same_type(a: &DataType, b: &DataType) -> bool {
    a.kind == b.kind
}

fn lookup<'a>(leaf: &BoundLeaf, columns: &'a [ColumnStats]) -> Option<&'a ColumnStats> {
    columns
        .iter()
        .find(|c| c.field_id == leaf.field.id && same_type(&c.data_type, &leaf.field.data_type))
}

pub(super) fn stats_may_match(node: &Node, row_count: i64, columns: &[ColumnStats]) -> bool {
    match node {
        Node::And(c) => c.iter().all(|n| stats_may_match(n, row_count, columns)),
        Node::Or(c) => c.iter().any(|n| stats_may_match(n, row_count, columns)),
        Node::Leaf(leaf) if never_true(&leaf.test) => false,
        Node::Leaf(leaf) => match lookup(leaf, columns) {
            Some(s) => leaf_may_match(leaf, row_count, s),
            None => true,
        },
    }
}

/// Tests that are true for no value at all (`x = NULL`, `x NOT IN (.., NULL)`, `x = 2.5` on an
/// INT column, `x IN ()`).
fn never_true(test: &Test) -> bool {
    match test {
        Test::Unknown | Test::IfNotNull(false) | Test::NotIn { has_null: true, .. } => true,
        Test::In { values, .. } => values.is_empty(),
        _ => false,
    }
}

fn is_float(kind: &TypeKind) -> bool {
    matches!(kind, TypeKind::Float | TypeKind::Double)
}

/// NaN or a zero of either sign.
fn float_unsafe(v: &Value) -> bool {
    match v {
        Value::Float(f) => f.is_nan() || *f == 0.0,
        Value::Double(f) => f.is_nan() || *f == 0.0,
        _ => false,
    }
}

fn leaf_may_match(leaf: &BoundLeaf, row_count: i64, s: &ColumnStats) -> bool {
    let kind = &leaf.field.data_type.kind;
    if matches!(kind, TypeKind::Blob) {
        // `.blob` files report a null count of 0 even when they hold nulls.
        return true;
    }
    let all_null = s.null_count.is_some_and(|n| n == row_count);
    let no_null = s.null_count == Some(0);
    match &leaf.test {
        Test::IsNull => return !no_null,
        Test::IsNotNull => return !all_null,
        Test::Unknown => return false,
        Test::IfNotNull(b) => return *b && !all_null,
        Test::NotIn { has_null: true, .. } => return false,
        Test::In {
            values,
            has_null: _,
        } if values.is_empty() => return false,
        Test::Cmp(..) | Test::In { .. } | Test::NotIn { .. } => {}
    }
    if all_null {
        return false;
    }
    if !minmax_prunable(&leaf.field.data_type) {
        return true;
    }
    // Each bound is used on its own: a writer may drop one (Java's truncated string max).
    let (min, max) = (s.min.as_ref(), s.max.as_ref());
    let float = is_float(kind);
    if float && (min.is_some_and(float_unsafe) || max.is_some_and(float_unsafe)) {
        return true;
    }
    // Each helper is `true` only when the bound is known, comparable and proves it.
    let min_is = |v: &Value, f: fn(Ordering) -> bool| min.and_then(|m| m.compare(v)).is_some_and(f);
    let max_is = |v: &Value, f: fn(Ordering) -> bool| max.and_then(|m| m.compare(v)).is_some_and(f);
    let outside = |v: &Value| min_is(v, Ordering::is_gt) || max_is(v, Ordering::is_lt);
    let only = |v: &Value| min_is(v, Ordering::is_eq) && max_is(v, Ordering::is_eq);
    let cannot = match &leaf.test {
        Test::Cmp(op, v) => {
            if float && (float_unsafe(v) || !matches!(op, CmpOp::Eq | CmpOp::Lt | CmpOp::LtEq)) {
                return true;
            }
            match op {
                CmpOp::Eq => outside(v),
                CmpOp::NotEq => only(v),
                CmpOp::Lt => min_is(v, Ordering::is_ge),
                CmpOp::LtEq => min_is(v, Ordering::is_gt),
                CmpOp::Gt => max_is(v, Ordering::is_le),
                CmpOp::GtEq => max_is(v, Ordering::is_lt),
            }
        }
        Test::In { values, .. } => {
            if float && values.iter().any(float_unsafe) {
                return true;
            }
            values.iter().all(outside)
        }
        // Cannot match only when every value equals one listed value.
        Test::NotIn { values, .. } => !float && values.iter().any(only),
        Test::IsNull | Test::IsNotNull | Test::IfNotNull(_) | Test::Unknown => false,
    };
    !cannot
}

/// A partition value: null, a comparable value, or one that cannot be judged.
pub(super) enum Slot {
    Null,
    Value(Value),
    Opaque,
}

pub(super) fn partition_may_match(node: &Node, values: &[Slot], fields: &[DataField]) -> bool {
    match node {
        Node::And(c) => c.iter().all(|n| partition_may_match(n, values, fields)),
        Node::Or(c) => c.iter().any(|n| partition_may_match(n, values, fields)),
        Node::Leaf(leaf) if never_true(&leaf.test) => false,
        Node::Leaf(leaf) => {
            let pos = fields.iter().position(|f| {
                f.id == leaf.field.id && same_type(&f.data_type, &leaf.field.data_type)
            });
            let value = match pos.and_then(|i| values.get(i)) {
                None | Some(Slot::Opaque) => return true,
                Some(Slot::Null) => None,
                Some(Slot::Value(v)) => Some(v),
            };
            // A value of another variant than the literals cannot be compared: keep.
            if let Some(v) = value
                && !literals_comparable(&leaf.test, v)
            {
                return true;
            }
            eval_leaf(leaf, value) == Some(true)
        }
    }
}

fn literals_comparable(test: &Test, v: &Value) -> bool {
    match test {
        Test::Cmp(_, lit) => v.compare(lit).is_some(),
        Test::In { values, .. } | Test::NotIn { values, .. } => {
            values.iter().all(|lit| v.compare(lit).is_some())
        }
        Test::IsNull | Test::IsNotNull | Test::IfNotNull(_) | Test::Unknown => true,
    }
}

/// Three-valued evaluation of a leaf on one value. For a non-null value of another variant
/// than the literals, the comparison is `None` (unknown) and so the leaf is not true.
pub(super) fn eval_leaf(leaf: &BoundLeaf, value: Option<&Value>) -> Option<bool> {
    match &leaf.test {
        Test::IsNull => Some(value.is_none()),
        Test::IsNotNull => Some(value.is_some()),
        Test::Unknown => None,
        Test::IfNotNull(b) => value.map(|_| *b),
        Test::Cmp(op, lit) => Some(op.test(value?.compare(lit)?)),
        Test::In { values, has_null } => {
            let v = value?;
            for lit in values {
                if v.compare(lit)? == Ordering::Equal {
                    return Some(true);
                }
            }
            if *has_null { None } else { Some(false) }
        }
        Test::NotIn { values, has_null } => {
            let v = value?;
            for lit in values {
                if v.compare(lit)? == Ordering::Equal {
                    return Some(false);
                }
            }
            if *has_null { None } else { Some(true) }
        }
    }
}

pub(super) fn eval_row<'a>(node: &Node, get: &dyn Fn(i32) -> Option<&'a Value>) -> Option<bool> {
    match node {
        Node::Leaf(leaf) => eval_leaf(leaf, get(leaf.field.id)),
        Node::And(c) => {
            let mut out = Some(true);
            for n in c {
                match eval_row(n, get) {
                    Some(false) => return Some(false),
                    None => out = None,
                    Some(true) => {}
                }
            }
            out
        }
        Node::Or(c) => {
            let mut out = Some(false);
            for n in c {
                match eval_row(n, get) {
                    Some(true) => return Some(true),
                    None => out = None,
                    Some(false) => {}
                }
            }
            out
        }
    }
}
