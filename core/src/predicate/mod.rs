//! Predicates: the `--where` filter of a read, pushed down to partition and file pruning and
//! always re-applied to the rows.
//!
//! Source: Java `org.apache.paimon.predicate.{Predicate, LeafPredicate, CompoundPredicate,
//! PredicateBuilder}`.
//!
//! # Life of a filter
//!
//! 1. [`Predicate::parse`] turns the SQL-like string form into an unbound [`Predicate`] tree
//!    over column *names* and untyped [`Literal`]s (or build one with [`Predicate::compare`],
//!    [`Predicate::and`], ...).
//! 2. [`Predicate::bind`] resolves the names against the read schema's fields, coerces every
//!    literal to its column's Paimon type (an error if impossible, e.g. `'abc'` for an `INT`
//!    column) and pushes `NOT` down to the leaves (negation normal form). The result is a
//!    [`BoundPredicate`].
//! 3. Pruning, conservative by construction: [`BoundPredicate::partition_may_match`] on exact
//!    partition values and [`BoundPredicate::stats_may_match`] on min/max/null-count statistics
//!    of a data file. `false` means "no row of this partition/file can satisfy the filter".
//! 4. Row filtering, always: [`BoundPredicate::evaluate`] gives a selection over an Arrow
//!    `RecordBatch` (columns found by name) and [`BoundPredicate::filter_batch`] applies it.
//!    Columns the filter reads but the projection drops must be read anyway:
//!    [`BoundPredicate::referenced_columns`].
//!
//! # Semantics
//!
//! SQL three-valued logic: a comparison with a NULL operand is *unknown*, `NOT unknown` is
//! unknown, `unknown AND false` is false, `unknown OR true` is true, and a row is selected only
//! when the filter is *true*. `x IN (1, NULL)` is true for `x = 1` and unknown otherwise;
//! `x NOT IN (1, NULL)` is never true.
//!
//! Literals are compared exactly against the column's values: a literal that the column type
//! cannot represent (`i > 2.5` on an `INT` column, `ts > TIMESTAMP '2024-01-01 00:00:00.5'` on a
//! `TIMESTAMP(0)` column, `b > 300` on a `TINYINT`) is rewritten to the equivalent comparison
//! with the nearest representable value (`i >= 3`) or to a constant for non-null rows, never
//! rounded. The exception is floating point: a number for a `FLOAT`/`DOUBLE` column is the
//! nearest float/double, as a SQL cast gives (`f = 0.1` matches the stored float `0.1`).
//!
//! Floating point values are ordered as Arrow's comparison kernels (and Java's
//! `Double.compare`) order them: IEEE 754 total order, so `-0.0 < 0.0` and `NaN` is equal to
//! itself and greater than every other value.
//!
//! # What pruning trusts (and what it does not)
//!
//! * Statistics are used only when the statistics column has the same field id and the same
//!   type as the read column (files written under an older schema with `INT` where the table
//!   now has `BIGINT`, or with a dropped and re-added column, are never pruned on that column).
//! * A missing min or max, or a missing null count, means "unknown": may match.
//! * Never pruned on min/max: `FLOAT`/`DOUBLE` for upper-bound comparisons (`>`, `>=`, `<>`,
//!   `NOT IN`; writers such as pyarrow skip `NaN` in min/max, and `NaN` sorts last) and for
//!   comparisons with zero (the sign of a zero bound is writer-dependent), `TIMESTAMP(p)` and
//!   `TIMESTAMP_LTZ(p)` with `p > 6` (pypaimon truncates their statistics to microseconds),
//!   `BLOB` (null counts are wrong), `VARIANT` and nested types.
//! * Strings and binaries: Java's `truncate(n)` statistics keep `min <= every value <= max` (min
//!   is a prefix, max a prefix with its last code point incremented, or no max at all), and all
//!   pruning rules here only rely on those bounds, so truncated statistics are safe.

mod coerce;
mod eval;
mod parser;
mod stats;

#[cfg(test)]
mod tests;

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::spec::{BinaryRow, DataField, DataType, Datum, TypeKind};

pub use parser::ParseError;
pub use stats::{ColumnStats, value_stats_fields};

/// A filter over columns (by name) and untyped literals, as parsed or built; not yet checked
/// against a schema. Bind it with [`Predicate::bind`].
///
/// Source: Java `org.apache.paimon.predicate.Predicate` (`LeafPredicate` and
/// `CompoundPredicate`), plus `NOT`, which Java expresses through `Predicate.negate()`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Predicate {
    /// A test on one column.
    Leaf(Leaf),
    /// True when every child is true (an empty `And` is true).
    And(Vec<Predicate>),
    /// True when some child is true (an empty `Or` is false).
    Or(Vec<Predicate>),
    /// Negation (three-valued: `NOT unknown` is unknown).
    Not(Box<Predicate>),
}

/// A test on one column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Leaf {
    /// Column name as written (resolved case-sensitively first, then case-insensitively).
    pub column: String,
    /// The test.
    pub op: LeafOp,
    /// 1-based character position of the column in the parsed string (0 when built in code);
    /// used in bind errors.
    pub position: usize,
}

/// The test of a [`Leaf`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LeafOp {
    /// `column <op> literal`.
    Compare(CmpOp, Literal),
    /// `column IS NULL`.
    IsNull,
    /// `column IS NOT NULL`.
    IsNotNull,
    /// `column IN (literals)`.
    In(Vec<Literal>),
    /// `column NOT IN (literals)`.
    NotIn(Vec<Literal>),
}

/// A comparison operator, written `column <op> literal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `<>` (also `!=`)
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl CmpOp {
    /// The operator `op'` with `NOT (x op v)` equivalent to `x op' v` (also under three-valued
    /// logic).
    pub fn negate(self) -> Self {
        match self {
            CmpOp::Eq => CmpOp::NotEq,
            CmpOp::NotEq => CmpOp::Eq,
            CmpOp::Lt => CmpOp::GtEq,
            CmpOp::LtEq => CmpOp::Gt,
            CmpOp::Gt => CmpOp::LtEq,
            CmpOp::GtEq => CmpOp::Lt,
        }
    }

    /// The operator `op'` with `v op x` equivalent to `x op' v`.
    pub fn flip(self) -> Self {
        match self {
            CmpOp::Eq => CmpOp::Eq,
            CmpOp::NotEq => CmpOp::NotEq,
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtEq => CmpOp::GtEq,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtEq => CmpOp::LtEq,
        }
    }

    /// The SQL symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::NotEq => "<>",
            CmpOp::Lt => "<",
            CmpOp::LtEq => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtEq => ">=",
        }
    }

    /// Whether `ordering` (of `x` against the literal) satisfies `x <op> literal`.
    pub fn test(self, ordering: Ordering) -> bool {
        match self {
            CmpOp::Eq => ordering == Ordering::Equal,
            CmpOp::NotEq => ordering != Ordering::Equal,
            CmpOp::Lt => ordering == Ordering::Less,
            CmpOp::LtEq => ordering != Ordering::Greater,
            CmpOp::Gt => ordering == Ordering::Greater,
            CmpOp::GtEq => ordering != Ordering::Less,
        }
    }
}

/// An untyped literal as written in a filter; coerced to the column's type by
/// [`Predicate::bind`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Literal {
    /// `NULL`
    Null,
    /// `TRUE` / `FALSE`
    Boolean(bool),
    /// A number as written, optionally signed, with optional fraction and exponent: `-12`,
    /// `2.5`, `1e3`. Kept as text so that it is coerced exactly (`DECIMAL`, `BIGINT`).
    Number(String),
    /// `'text'` (`''` inside the quotes is one quote).
    String(String),
    /// `X'0aff'` (hex digits, either case).
    Binary(Vec<u8>),
    /// `DATE 'yyyy-mm-dd'`: days since 1970-01-01.
    Date(i32),
    /// `TIME 'hh:mm:ss[.fffffffff]'`: nanoseconds of the day.
    Time(i64),
    /// `TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.fffffffff]'` (time zone free; compared with
    /// `TIMESTAMP_LTZ` columns as UTC).
    Timestamp(Timestamp),
}

/// A time-zone-free timestamp with nanosecond precision, split as Paimon stores it.
///
/// Source: Java `org.apache.paimon.data.Timestamp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp {
    /// Milliseconds since 1970-01-01 00:00:00 (may be negative).
    pub millis: i64,
    /// Nanoseconds within the millisecond, 0..=999_999.
    pub nanos_of_milli: u32,
}

impl Timestamp {
    /// Nanoseconds since the epoch.
    pub fn epoch_nanos(self) -> i128 {
        i128::from(self.millis) * 1_000_000 + i128::from(self.nanos_of_milli)
    }

    /// From nanoseconds since the epoch; `None` when the milliseconds overflow `i64`.
    pub fn from_epoch_nanos(nanos: i128) -> Option<Self> {
        let millis = i64::try_from(nanos.div_euclid(1_000_000)).ok()?;
        let nanos_of_milli = u32::try_from(nanos.rem_euclid(1_000_000)).ok()?;
        Some(Timestamp {
            millis,
            nanos_of_milli,
        })
    }
}

/// A value of a column's Paimon type: a literal after coercion, a partition value, or a min /
/// max statistic. The variant follows the type: `CHAR`/`VARCHAR` are `String`, `BINARY`/
/// `VARBINARY` are `Binary`, `TIMESTAMP` and `TIMESTAMP_LTZ` are `Timestamp`.
///
/// Source: the internal data classes of Java `org.apache.paimon.data` (`BinaryString`,
/// `Decimal`, `Timestamp`, boxed primitives).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Value {
    /// `BOOLEAN`
    Boolean(bool),
    /// `TINYINT`
    TinyInt(i8),
    /// `SMALLINT`
    SmallInt(i16),
    /// `INT`
    Int(i32),
    /// `BIGINT`
    BigInt(i64),
    /// `FLOAT`
    Float(f32),
    /// `DOUBLE`
    Double(f64),
    /// `DECIMAL(p, s)`: the unscaled value at the column's scale `s`.
    Decimal(i128),
    /// `CHAR` / `VARCHAR` / `STRING`
    String(String),
    /// `BINARY` / `VARBINARY` / `BYTES`
    Binary(Vec<u8>),
    /// `DATE`: days since 1970-01-01.
    Date(i32),
    /// `TIME`: milliseconds of the day.
    Time(i32),
    /// `TIMESTAMP` / `TIMESTAMP_LTZ`.
    Timestamp(Timestamp),
}

impl Value {
    /// The value held by a decoded [`Datum`]; `None` for [`Datum::Null`] and for values that
    /// predicates never compare (`ARRAY`, `MAP`, `ROW`, `VARIANT`) or that are out of range (a
    /// timestamp whose nanos-of-milli is outside `0..1_000_000`). A `DECIMAL` keeps its
    /// unscaled value: it is compared only with columns of the same type, hence scale.
    pub fn from_datum(datum: &Datum) -> Option<Value> {
        Some(match datum {
            Datum::Boolean(b) => Value::Boolean(*b),
            Datum::TinyInt(v) => Value::TinyInt(*v),
            Datum::SmallInt(v) => Value::SmallInt(*v),
            Datum::Int(v) => Value::Int(*v),
            Datum::BigInt(v) => Value::BigInt(*v),
            Datum::Float(v) => Value::Float(*v),
            Datum::Double(v) => Value::Double(*v),
            Datum::Decimal { unscaled, .. } => Value::Decimal(*unscaled),
            Datum::String(v) => Value::String(v.clone()),
            Datum::Binary(v) => Value::Binary(v.clone()),
            Datum::Date(v) => Value::Date(*v),
            Datum::Time(v) => Value::Time(*v),
            Datum::Timestamp {
                millis,
                nanos_of_milli,
            } => Value::Timestamp(Timestamp {
                millis: *millis,
                nanos_of_milli: u32::try_from(*nanos_of_milli)
                    .ok()
                    .filter(|n| *n < 1_000_000)?,
            }),
            Datum::Null
            | Datum::Array(_)
            | Datum::Map(_)
            | Datum::Row(_)
            | Datum::Variant { .. } => return None,
        })
    }

    /// Compares two values of the same variant; `None` for different variants. Floats use the
    /// IEEE 754 total order (like Arrow's kernels), strings and binaries unsigned bytes.
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        Some(match (self, other) {
            (Value::Boolean(a), Value::Boolean(b)) => a.cmp(b),
            (Value::TinyInt(a), Value::TinyInt(b)) => a.cmp(b),
            (Value::SmallInt(a), Value::SmallInt(b)) => a.cmp(b),
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::BigInt(a), Value::BigInt(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::Double(a), Value::Double(b)) => a.total_cmp(b),
            (Value::Decimal(a), Value::Decimal(b)) => a.cmp(b),
            (Value::String(a), Value::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Value::Binary(a), Value::Binary(b)) => a.cmp(b),
            (Value::Date(a), Value::Date(b)) => a.cmp(b),
            (Value::Time(a), Value::Time(b)) => a.cmp(b),
            (Value::Timestamp(a), Value::Timestamp(b)) => a.cmp(b),
            _ => return None,
        })
    }
}

impl Predicate {
    /// Parses the `--where` string form.
    ///
    /// Grammar (keywords case-insensitive; `NOT` binds tighter than `AND`, `AND` tighter than
    /// `OR`; a comparison binds tighter than `NOT`, so `NOT a >= 2` is `NOT (a >= 2)`):
    ///
    /// ```text
    /// filter    := or
    /// or        := and (OR and)*
    /// and       := not (AND not)*
    /// not       := NOT not | '(' or ')' | predicate
    /// predicate := column (op literal | IS [NOT] NULL | [NOT] IN '(' literal (',' literal)* ')'
    ///                     | [NOT] BETWEEN literal AND literal)   -- inclusive bounds
    ///            | literal op column
    ///            | column                      -- a BOOLEAN column, same as column = TRUE
    ///            | TRUE | FALSE                -- an empty AND / an empty OR
    /// op        := = | == | <> | != | < | <= | > | >=
    /// column    := name | `name` | "name"      -- `` and "" escape the quote inside
    /// literal   := [+|-] number | 'string' | TRUE | FALSE | NULL | X'hex'
    ///            | DATE 'yyyy-mm-dd' | TIME 'hh:mm:ss[.f]' | TIMESTAMP 'yyyy-mm-dd[ hh:mm:ss[.f]]'
    /// ```
    ///
    /// # Errors
    /// [`Error::Invalid`] with the 1-based character position and what was expected (see
    /// [`ParseError`]); [`Predicate::try_parse`] gives the structured error.
    pub fn parse(text: &str) -> Result<Predicate> {
        parser::parse(text).map_err(|e| Error::invalid(format!("invalid filter: {e}")))
    }

    /// Parses like [`Predicate::parse`] but returns the structured error.
    ///
    /// # Errors
    /// A [`ParseError`] with position, expectation and what was found.
    pub fn try_parse(text: &str) -> std::result::Result<Predicate, ParseError> {
        parser::parse(text)
    }

    /// `column <op> literal`.
    pub fn compare(column: impl Into<String>, op: CmpOp, literal: Literal) -> Self {
        Self::leaf(column, LeafOp::Compare(op, literal))
    }

    /// `column IS NULL`.
    pub fn is_null(column: impl Into<String>) -> Self {
        Self::leaf(column, LeafOp::IsNull)
    }

    /// `column IS NOT NULL`.
    pub fn is_not_null(column: impl Into<String>) -> Self {
        Self::leaf(column, LeafOp::IsNotNull)
    }

    /// `column IN (literals)`.
    pub fn is_in(column: impl Into<String>, literals: Vec<Literal>) -> Self {
        Self::leaf(column, LeafOp::In(literals))
    }

    /// `column NOT IN (literals)`.
    pub fn not_in(column: impl Into<String>, literals: Vec<Literal>) -> Self {
        Self::leaf(column, LeafOp::NotIn(literals))
    }

    /// A leaf built in code (position 0).
    pub fn leaf(column: impl Into<String>, op: LeafOp) -> Self {
        Predicate::Leaf(Leaf {
            column: column.into(),
            op,
            position: 0,
        })
    }

    /// `self AND other` (flattened).
    pub fn and(self, other: Predicate) -> Self {
        let mut children = Vec::new();
        for p in [self, other] {
            match p {
                Predicate::And(c) => children.extend(c),
                p => children.push(p),
            }
        }
        Predicate::And(children)
    }

    /// `self OR other` (flattened).
    pub fn or(self, other: Predicate) -> Self {
        let mut children = Vec::new();
        for p in [self, other] {
            match p {
                Predicate::Or(c) => children.extend(c),
                p => children.push(p),
            }
        }
        Predicate::Or(children)
    }

    /// `NOT self`.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Self {
        Predicate::Not(Box::new(self))
    }

    /// Column names as written, deduplicated, in order of first appearance.
    pub fn referenced_columns(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        self.visit_leaves(&mut |leaf| {
            if !out.contains(&leaf.column) {
                out.push(leaf.column.clone());
            }
        });
        out
    }

    fn visit_leaves(&self, f: &mut impl FnMut(&Leaf)) {
        match self {
            Predicate::Leaf(l) => f(l),
            Predicate::And(c) | Predicate::Or(c) => c.iter().for_each(|p| p.visit_leaves(f)),
            Predicate::Not(p) => p.visit_leaves(f),
        }
    }

    /// Resolves column names against `fields` (the read schema), coerces the literals to the
    /// columns' types and pushes `NOT` down to the leaves.
    ///
    /// Names resolve exactly first, then case-insensitively when that is unambiguous.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown or ambiguous column, a literal the column's type
    /// cannot take (`'abc'` for `INT`), or a bare non-`BOOLEAN` column used as a condition;
    /// [`Error::Unsupported`] for comparisons on nested, `VARIANT` or `BLOB` columns.
    pub fn bind(&self, fields: &[DataField]) -> Result<BoundPredicate> {
        let node = bind_node(self, fields, false)?;
        Ok(BoundPredicate { node })
    }
}

fn resolve<'a>(fields: &'a [DataField], leaf: &Leaf) -> Result<&'a DataField> {
    if let Some(f) = fields.iter().find(|f| f.name == leaf.column) {
        return Ok(f);
    }
    let mut matches = fields
        .iter()
        .filter(|f| f.name.eq_ignore_ascii_case(&leaf.column));
    match (matches.next(), matches.next()) {
        (Some(f), None) => Ok(f),
        (Some(_), Some(_)) => Err(Error::invalid(format!(
            "filter column `{}`{} is ambiguous (several columns differ only in case)",
            leaf.column,
            at(leaf.position)
        ))),
        _ => Err(Error::invalid(format!(
            "filter column `{}`{} does not exist; columns are: {}",
            leaf.column,
            at(leaf.position),
            fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn at(position: usize) -> String {
    if position == 0 {
        String::new()
    } else {
        format!(" (at position {position})")
    }
}

fn bind_node(p: &Predicate, fields: &[DataField], negate: bool) -> Result<Node> {
    Ok(match p {
        Predicate::Not(inner) => bind_node(inner, fields, !negate)?,
        Predicate::And(c) | Predicate::Or(c) => {
            let children = c
                .iter()
                .map(|p| bind_node(p, fields, negate))
                .collect::<Result<Vec<_>>>()?;
            if matches!(p, Predicate::And(_)) != negate {
                Node::And(children)
            } else {
                Node::Or(children)
            }
        }
        Predicate::Leaf(leaf) => {
            let field = resolve(fields, leaf)?;
            let test = coerce::bind_leaf(leaf, field, negate)?;
            Node::Leaf(BoundLeaf {
                field: field.clone(),
                test,
            })
        }
    })
}

/// A predicate bound to a schema: columns resolved to fields (name, id, type), literals
/// coerced to the column types, `NOT` pushed down to the leaves (negation normal form: only
/// `AND`/`OR` above the leaves).
///
/// Source: Java `org.apache.paimon.predicate.Predicate` after `PredicateBuilder` binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundPredicate {
    node: Node,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Node {
    Leaf(BoundLeaf),
    And(Vec<Node>),
    Or(Vec<Node>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct BoundLeaf {
    field: DataField,
    test: Test,
}

/// A leaf test after coercion; every literal is a [`Value`] of the field's type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Test {
    IsNull,
    IsNotNull,
    /// `x <op> v`: unknown for null `x`.
    Cmp(CmpOp, Value),
    /// The constant for non-null `x`, unknown for null `x` (`x = 2.5` on an INT column).
    IfNotNull(bool),
    /// Unknown for every row (`x = NULL`).
    Unknown,
    /// `x IN (values [, NULL])`.
    In {
        values: Vec<Value>,
        has_null: bool,
    },
    /// `x NOT IN (values [, NULL])`.
    NotIn {
        values: Vec<Value>,
        has_null: bool,
    },
}

impl Node {
    fn visit_leaves<'a>(&'a self, f: &mut impl FnMut(&'a BoundLeaf)) {
        match self {
            Node::Leaf(l) => f(l),
            Node::And(c) | Node::Or(c) => c.iter().for_each(|n| n.visit_leaves(f)),
        }
    }
}

impl BoundPredicate {
    /// The fields the filter reads, deduplicated by field id, in order of first appearance.
    pub fn referenced_fields(&self) -> Vec<&DataField> {
        let mut out: Vec<&DataField> = Vec::new();
        self.node.visit_leaves(&mut |leaf| {
            if !out.iter().any(|f| f.id == leaf.field.id) {
                out.push(&leaf.field);
            }
        });
        out
    }

    /// Names (as in the bound schema) of the columns the filter reads, deduplicated, in order
    /// of first appearance. A reader must decode these even when the projection drops them,
    /// filter, then drop them.
    pub fn referenced_columns(&self) -> Vec<String> {
        self.referenced_fields()
            .into_iter()
            .map(|f| f.name.clone())
            .collect()
    }

    /// The top-level conjuncts (`a AND (b OR c)` gives `a` and `b OR c`); a predicate that is
    /// not an `AND` is its own only conjunct; an empty `AND` gives none.
    ///
    /// Source: Java `PredicateBuilder.splitAnd`.
    pub fn split_and(&self) -> Vec<BoundPredicate> {
        match &self.node {
            Node::And(c) => c
                .iter()
                .map(|n| BoundPredicate { node: n.clone() })
                .collect(),
            n => vec![BoundPredicate { node: n.clone() }],
        }
    }

    /// `AND` of `predicates`; `None` when empty.
    ///
    /// Source: Java `PredicateBuilder.and`.
    pub fn and_all(predicates: Vec<BoundPredicate>) -> Option<BoundPredicate> {
        let mut nodes: Vec<Node> = Vec::new();
        for p in predicates {
            match p.node {
                Node::And(c) => nodes.extend(c),
                n => nodes.push(n),
            }
        }
        match nodes.len() {
            0 => None,
            1 => nodes.pop().map(|node| BoundPredicate { node }),
            _ => Some(BoundPredicate {
                node: Node::And(nodes),
            }),
        }
    }

    /// The conjuncts that only read fields with ids in `field_ids`, ANDed; `None` when there
    /// are none. With the partition fields' ids this is the partition filter.
    ///
    /// Source: Java `PredicateBuilder.splitAnd` + `PartitionPredicateVisitor`.
    pub fn conjuncts_on(&self, field_ids: &[i32]) -> Option<BoundPredicate> {
        let picked = self
            .split_and()
            .into_iter()
            .filter(|c| {
                c.referenced_fields()
                    .iter()
                    .all(|f| field_ids.contains(&f.id))
            })
            .collect();
        Self::and_all(picked)
    }

    /// The partition filter: the conjuncts that only read `partition_fields` (matched by field
    /// id), ANDed; `None` when there are none.
    pub fn partition_predicate(&self, partition_fields: &[DataField]) -> Option<BoundPredicate> {
        let ids: Vec<i32> = partition_fields.iter().map(|f| f.id).collect();
        self.conjuncts_on(&ids)
    }

    /// `false` when no row of a partition with these exact values can satisfy the filter.
    ///
    /// `partition_values[i]` is the value of `partition_fields[i]` ([`Datum::Null`] for a null
    /// partition value, i.e. the default partition name), decoded from the manifest entry's
    /// `_PARTITION` row. Leaves on other columns (the whole predicate may be passed, not only
    /// [`BoundPredicate::partition_predicate`]) count as "may match", and so do leaves whose
    /// field has another type in `partition_fields` and values that cannot be compared
    /// (a `Datum` of an unexpected variant). The answer is exact for conjunctions of leaves
    /// that read only partition columns.
    ///
    /// Source: Java `PartitionPredicate` / `LeafPredicate.test(InternalRow)`.
    pub fn partition_may_match(
        &self,
        partition_values: &[Datum],
        partition_fields: &[DataField],
    ) -> bool {
        let slots: Vec<stats::Slot> = partition_values
            .iter()
            .map(|d| match d {
                Datum::Null => stats::Slot::Null,
                d => Value::from_datum(d).map_or(stats::Slot::Opaque, stats::Slot::Value),
            })
            .collect();
        stats::partition_may_match(&self.node, &slots, partition_fields)
    }

    /// [`BoundPredicate::partition_may_match`] on a `_PARTITION` binary row.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the row does not decode with the partition fields' types.
    pub fn partition_row_may_match(
        &self,
        partition: &BinaryRow,
        partition_fields: &[DataField],
    ) -> Result<bool> {
        let types: Vec<DataType> = partition_fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        let values = partition.fields(&types)?;
        Ok(self.partition_may_match(&values, partition_fields))
    }

    /// [`BoundPredicate::partition_may_match`] on [`Value`]s (`None` = null).
    pub fn partition_values_may_match(
        &self,
        partition_values: &[Option<Value>],
        partition_fields: &[DataField],
    ) -> bool {
        let slots: Vec<stats::Slot> = partition_values
            .iter()
            .map(|v| v.clone().map_or(stats::Slot::Null, stats::Slot::Value))
            .collect();
        stats::partition_may_match(&self.node, &slots, partition_fields)
    }

    /// `false` when no row of a data file with these statistics can satisfy the filter.
    ///
    /// `row_count` is the file's row count; `columns` the statistics the file has (value
    /// stats, key stats; see [`ColumnStats::from_simple_stats`] and [`value_stats_fields`]),
    /// each with the *file's* field id and type. Columns without an entry, or whose entry's id
    /// or type differs from the bound field, count as unknown (may match). See the module docs
    /// for what is never pruned.
    ///
    /// The same test prunes a whole manifest on its `_PARTITION_STATS` (partition fields as
    /// columns, `row_count` = `num_added_files + num_deleted_files`), as Java's
    /// `ManifestsReader` does.
    ///
    /// Primary-key tables: a file's rows are not the table's rows until merged. As Java's
    /// `KeyValueFileStoreScan` does, prune single files only on *key* statistics (every
    /// version of a key lives in the key range of its file); on *value* statistics drop a
    /// whole bucket only when no file of it may match (and never for the `partial-update` or
    /// `aggregation` merge engines without deletion vectors), or single files when the
    /// bucket's files do not overlap in keys. Otherwise an older matching version could
    /// survive the merge in place of the newer, non-matching one.
    pub fn stats_may_match(&self, row_count: i64, columns: &[ColumnStats]) -> bool {
        stats::stats_may_match(&self.node, row_count, columns)
    }

    /// Three-valued evaluation on one row given as `(field id, value)` pairs (`None` = null).
    /// `Some(true)` = selected; a field missing from `row` is treated as null.
    pub fn evaluate_row(&self, row: &[(i32, Option<Value>)]) -> Option<bool> {
        stats::eval_row(&self.node, &|id| {
            row.iter()
                .find(|(fid, _)| *fid == id)
                .and_then(|(_, v)| v.as_ref())
        })
    }

    /// Selection over `batch`: `true` for the rows where the filter is true, `false` or null
    /// where it is false or unknown. Columns are found by name (the bound field names); their
    /// Arrow types may be any of the types the reader produces for the field's Paimon type.
    ///
    /// # Errors
    /// [`Error::Invalid`] if a referenced column is missing from the batch;
    /// [`Error::Unsupported`]/[`Error::Arrow`] if a column's Arrow type cannot be compared
    /// with the literal.
    pub fn evaluate(&self, batch: &arrow_array::RecordBatch) -> Result<arrow_array::BooleanArray> {
        eval::evaluate(&self.node, batch)
    }

    /// `batch` with only the rows where the filter is true (same schema).
    ///
    /// # Errors
    /// As [`BoundPredicate::evaluate`].
    pub fn filter_batch(
        &self,
        batch: &arrow_array::RecordBatch,
    ) -> Result<arrow_array::RecordBatch> {
        let mask = self.evaluate(batch)?;
        arrow_select::filter::filter_record_batch(batch, &mask)
            .map_err(|e| Error::arrow("filter", e))
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("NULL"),
            Literal::Boolean(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            Literal::Number(n) => f.write_str(n),
            Literal::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Binary(b) => write!(f, "X'{}'", crate::util::hex(b)),
            Literal::Date(d) => write!(f, "DATE '{}'", coerce::format_date(*d)),
            Literal::Time(n) => write!(f, "TIME '{}'", coerce::format_time_nanos(*n)),
            Literal::Timestamp(t) => write!(f, "TIMESTAMP '{}'", coerce::format_timestamp(*t)),
        }
    }
}

fn write_column(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    let bare = name.chars().enumerate().all(|(i, c)| {
        c == '_' || c.is_ascii_alphabetic() || (i > 0 && (c.is_ascii_digit() || c == '$'))
    }) && !name.is_empty()
        && !parser::is_keyword(name);
    if bare {
        f.write_str(name)
    } else {
        write!(f, "`{}`", name.replace('`', "``"))
    }
}

fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T], null: bool) -> fmt::Result {
    f.write_str("(")?;
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{v}")?;
    }
    if null {
        f.write_str(if items.is_empty() { "NULL" } else { ", NULL" })?;
    }
    f.write_str(")")
}

fn write_children<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    children: &[T],
    sep: &str,
    empty: &str,
) -> fmt::Result {
    if children.is_empty() {
        return f.write_str(empty);
    }
    f.write_str("(")?;
    for (i, c) in children.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{c}")?;
    }
    f.write_str(")")
}

/// Fully parenthesised canonical form, parseable by [`Predicate::parse`].
impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Leaf(l) => {
                write_column(f, &l.column)?;
                match &l.op {
                    LeafOp::Compare(op, lit) => write!(f, " {} {lit}", op.symbol()),
                    LeafOp::IsNull => f.write_str(" IS NULL"),
                    LeafOp::IsNotNull => f.write_str(" IS NOT NULL"),
                    LeafOp::In(v) => {
                        f.write_str(" IN ")?;
                        write_list(f, v, false)
                    }
                    LeafOp::NotIn(v) => {
                        f.write_str(" NOT IN ")?;
                        write_list(f, v, false)
                    }
                }
            }
            Predicate::And(c) => write_children(f, c, " AND ", "TRUE"),
            Predicate::Or(c) => write_children(f, c, " OR ", "FALSE"),
            Predicate::Not(p) => write!(f, "NOT {p}"),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Boolean(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            Value::TinyInt(v) => write!(f, "{v}"),
            Value::SmallInt(v) => write!(f, "{v}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::BigInt(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v:?}"),
            Value::Double(v) => write!(f, "{v:?}"),
            Value::Decimal(v) => write!(f, "{v}u"),
            Value::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Value::Binary(b) => write!(f, "X'{}'", crate::util::hex(b)),
            Value::Date(d) => write!(f, "DATE '{}'", coerce::format_date(*d)),
            Value::Time(ms) => write!(
                f,
                "TIME '{}'",
                coerce::format_time_nanos(i64::from(*ms) * 1_000_000)
            ),
            Value::Timestamp(t) => write!(f, "TIMESTAMP '{}'", coerce::format_timestamp(*t)),
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::And(c) => write_children(f, c, " AND ", "TRUE"),
            Node::Or(c) => write_children(f, c, " OR ", "FALSE"),
            Node::Leaf(l) => {
                write_column(f, &l.field.name)?;
                match &l.test {
                    Test::IsNull => f.write_str(" IS NULL"),
                    Test::IsNotNull => f.write_str(" IS NOT NULL"),
                    Test::Cmp(op, v) => write!(f, " {} {v}", op.symbol()),
                    Test::IfNotNull(b) => {
                        write!(f, " IS NOT NULL AND {}", if *b { "TRUE" } else { "FALSE" })
                    }
                    Test::Unknown => f.write_str(" = NULL"),
                    Test::In { values, has_null } => {
                        f.write_str(" IN ")?;
                        write_list(f, values, *has_null)
                    }
                    Test::NotIn { values, has_null } => {
                        f.write_str(" NOT IN ")?;
                        write_list(f, values, *has_null)
                    }
                }
            }
        }
    }
}

/// Canonical NNF form for logs and tests: `DECIMAL` values print as their unscaled value with
/// a `u` suffix, an empty `AND` as `TRUE`, an empty `OR` as `FALSE`, and a literal that the
/// column cannot represent as `x IS NOT NULL AND TRUE|FALSE`.
impl fmt::Display for BoundPredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.node.fmt(f)
    }
}

/// Whether min/max statistics of `data_type` may be used for pruning at all (see the module
/// docs). Null counts are still used for every type but `BLOB`.
pub fn minmax_prunable(data_type: &DataType) -> bool {
    match &data_type.kind {
        TypeKind::Boolean
        | TypeKind::TinyInt
        | TypeKind::SmallInt
        | TypeKind::Int
        | TypeKind::BigInt
        | TypeKind::Float
        | TypeKind::Double
        | TypeKind::Decimal { .. }
        | TypeKind::Char { .. }
        | TypeKind::VarChar { .. }
        | TypeKind::Binary { .. }
        | TypeKind::VarBinary { .. }
        | TypeKind::Date
        | TypeKind::Time { .. } => true,
        TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision } => {
            *precision <= 6
        }
        _ => false,
    }
}
