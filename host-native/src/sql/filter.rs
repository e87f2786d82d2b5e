//! DataFusion filters as our [`Predicate`]s.
//!
//! A filter DataFusion hands to the provider is translated when every part of it is one of:
//!
//! * `column <op> literal` / `literal <op> column` (`=`, `<>`, `<`, `<=`, `>`, `>=`), with the
//!   literal of the column's own Arrow type (DataFusion's type coercion and simplifier put the
//!   cast on the literal; the string types `Utf8`/`LargeUtf8`/`Utf8View` count as one type,
//!   and so do the binary types);
//! * `column IS [NOT] NULL`, `column [NOT] IN (literals)`, `column [NOT] BETWEEN l AND h`, a
//!   bare `BOOLEAN` column;
//! * `AND`, `OR` and `NOT` of translated filters.
//!
//! Such a filter is **exact**: our reader evaluates it on every row (after the merge on
//! primary-key tables) with SQL's three-valued logic and Arrow's comparison order (floats in
//! IEEE 754 total order, strings and binaries by unsigned bytes), as DataFusion's own kernels
//! do, and the planner also prunes partitions and files with it. A column under a cast or a
//! function, a literal of another type, or an expression over two columns is not translated
//! (DataFusion filters those rows itself): an exact rewrite of a lossy cast (`BIGINT` to
//! `DOUBLE`) would prune files whose rows DataFusion's cast would keep.
//!
//! One filter is **inexact**: a top-level `column LIKE 'prefix%…'` on a string column is
//! pushed as the range `column >= 'prefix' AND column < 'prefiy'` (the prefix with its last
//! character incremented), which prunes files and drops rows that cannot match; DataFusion
//! applies the `LIKE` itself to the rows left.

use arrow_schema::{DataType, Schema, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::{Between, InList, Like};
use datafusion::logical_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use paimon_kernel::predicate::{CmpOp, Literal, Predicate, Timestamp};

/// A DataFusion filter as a predicate, and how faithfully it stands for the filter.
#[derive(Debug, Clone, PartialEq)]
pub struct PushedFilter {
    /// Our predicate.
    pub predicate: Predicate,
    /// `Exact`: the predicate selects the same rows; `Inexact`: a superset.
    pub pushdown: TableProviderFilterPushDown,
}

/// Translate one filter (a conjunct of the query's `WHERE`) over a table of `schema`; `None`
/// when it cannot be pushed (DataFusion then filters the rows alone).
pub fn translate(expr: &Expr, schema: &Schema) -> Option<PushedFilter> {
    if let Some(predicate) = exact(expr, schema) {
        return Some(PushedFilter {
            predicate,
            pushdown: TableProviderFilterPushDown::Exact,
        });
    }
    prefix_like(expr, schema).map(|predicate| PushedFilter {
        predicate,
        pushdown: TableProviderFilterPushDown::Inexact,
    })
}

/// The predicate selecting exactly the rows `expr` selects, if there is one.
fn exact(expr: &Expr, schema: &Schema) -> Option<Predicate> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => Some(exact(left, schema)?.and(exact(right, schema)?)),
            Operator::Or => Some(exact(left, schema)?.or(exact(right, schema)?)),
            _ => {
                let op = cmp_op(*op)?;
                if let (Some((column, ty)), Some(value)) = (column(left, schema), literal(right)) {
                    return Some(Predicate::compare(column, op, lit_for(ty, value)?));
                }
                let (column, ty) = column(right, schema)?;
                let value = literal(left)?;
                Some(Predicate::compare(column, op.flip(), lit_for(ty, value)?))
            }
        },
        Expr::Not(inner) => Some(exact(inner, schema)?.not()),
        Expr::IsNull(inner) => {
            let (column, ty) = column(inner, schema)?;
            comparable(ty).then(|| Predicate::is_null(column))
        }
        Expr::IsNotNull(inner) => {
            let (column, ty) = column(inner, schema)?;
            comparable(ty).then(|| Predicate::is_not_null(column))
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => {
            let (column, ty) = column(expr, schema)?;
            let values = list
                .iter()
                .map(|e| lit_for(ty, literal(e)?))
                .collect::<Option<Vec<_>>>()?;
            Some(if *negated {
                Predicate::not_in(column, values)
            } else {
                Predicate::is_in(column, values)
            })
        }
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => {
            let (column, ty) = column(expr, schema)?;
            let low = lit_for(ty, literal(low)?)?;
            let high = lit_for(ty, literal(high)?)?;
            let range = Predicate::compare(column.clone(), CmpOp::GtEq, low)
                .and(Predicate::compare(column, CmpOp::LtEq, high));
            Some(if *negated { range.not() } else { range })
        }
        Expr::Column(_) => {
            let (column, ty) = column(expr, schema)?;
            (ty == &DataType::Boolean)
                .then(|| Predicate::compare(column, CmpOp::Eq, Literal::Boolean(true)))
        }
        Expr::Literal(ScalarValue::Boolean(Some(b)), _) => Some(if *b {
            Predicate::And(Vec::new())
        } else {
            Predicate::Or(Vec::new())
        }),
        _ => None,
    }
}

/// `column LIKE 'abc%…'` (no escape, case-sensitive, not negated) as `column >= 'abc' AND
/// column < 'abd'`: a superset of the matching rows.
fn prefix_like(expr: &Expr, schema: &Schema) -> Option<Predicate> {
    let Expr::Like(Like {
        negated: false,
        expr,
        pattern,
        escape_char: None,
        case_insensitive: false,
    }) = expr
    else {
        return None;
    };
    let (column, ty) = column(expr, schema)?;
    if !is_string(ty) {
        return None;
    }
    let pattern = match literal(pattern)? {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => s.clone(),
        _ => return None,
    };
    let prefix: String = pattern
        .chars()
        .take_while(|c| *c != '%' && *c != '_' && *c != '\\')
        .collect();
    if prefix.is_empty() {
        return None;
    }
    let lower = Predicate::compare(column.clone(), CmpOp::GtEq, Literal::String(prefix.clone()));
    Some(match successor(&prefix) {
        Some(upper) => lower.and(Predicate::compare(
            column,
            CmpOp::Lt,
            Literal::String(upper),
        )),
        None => lower,
    })
}

/// The smallest string greater than every string starting with `prefix`, in byte order: the
/// prefix with its last character incremented (characters that have no successor dropped).
fn successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let mut next = u32::from(last) + 1;
        if (0xD800..=0xDFFF).contains(&next) {
            next = 0xE000;
        }
        if let Some(c) = char::from_u32(next) {
            chars.push(c);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The comparison operator of `op`, when it is one.
fn cmp_op(op: Operator) -> Option<CmpOp> {
    Some(match op {
        Operator::Eq => CmpOp::Eq,
        Operator::NotEq => CmpOp::NotEq,
        Operator::Lt => CmpOp::Lt,
        Operator::LtEq => CmpOp::LtEq,
        Operator::Gt => CmpOp::Gt,
        Operator::GtEq => CmpOp::GtEq,
        _ => return None,
    })
}

/// A bare column of the table: its name and Arrow type.
fn column<'a>(expr: &Expr, schema: &'a Schema) -> Option<(String, &'a DataType)> {
    let Expr::Column(c) = expr else {
        return None;
    };
    let field = schema.field_with_name(&c.name).ok()?;
    Some((c.name.clone(), field.data_type()))
}

/// The value of a literal expression.
fn literal(expr: &Expr) -> Option<&ScalarValue> {
    match expr {
        Expr::Literal(v, _) => Some(v),
        _ => None,
    }
}

fn is_string(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    )
}

fn is_binary(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

/// Whether our predicates compare values of columns of this Arrow type.
fn comparable(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(_, _)
            | DataType::Date32
            | DataType::Time32(TimeUnit::Millisecond)
            | DataType::Timestamp(_, _)
    ) || is_string(ty)
        || is_binary(ty)
}

/// `value` as a literal for a column of type `ty`, when it has that type (or, for strings
/// and binaries, a type of the same family). NULL, NaN and infinities are not translated.
fn lit_for(ty: &DataType, value: &ScalarValue) -> Option<Literal> {
    if !comparable(ty) {
        return None;
    }
    let same = value.data_type() == *ty
        || (is_string(ty) && is_string(&value.data_type()))
        || (is_binary(ty) && is_binary(&value.data_type()));
    if !same {
        return None;
    }
    Some(match value {
        ScalarValue::Boolean(Some(b)) => Literal::Boolean(*b),
        ScalarValue::Int8(Some(v)) => Literal::Number(v.to_string()),
        ScalarValue::Int16(Some(v)) => Literal::Number(v.to_string()),
        ScalarValue::Int32(Some(v)) => Literal::Number(v.to_string()),
        ScalarValue::Int64(Some(v)) => Literal::Number(v.to_string()),
        // Rust prints the shortest text that parses back to the same float.
        ScalarValue::Float32(Some(v)) if v.is_finite() => Literal::Number(v.to_string()),
        ScalarValue::Float64(Some(v)) if v.is_finite() => Literal::Number(v.to_string()),
        ScalarValue::Decimal128(Some(v), _, scale) => Literal::Number(decimal_text(*v, *scale)?),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Literal::String(s.clone()),
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b)) => Literal::Binary(b.clone()),
        ScalarValue::Date32(Some(d)) => Literal::Date(*d),
        ScalarValue::Time32Millisecond(Some(ms)) => Literal::Time(i64::from(*ms) * 1_000_000),
        ScalarValue::TimestampSecond(Some(v), _) => timestamp(i128::from(*v) * 1_000_000_000)?,
        ScalarValue::TimestampMillisecond(Some(v), _) => timestamp(i128::from(*v) * 1_000_000)?,
        ScalarValue::TimestampMicrosecond(Some(v), _) => timestamp(i128::from(*v) * 1_000)?,
        ScalarValue::TimestampNanosecond(Some(v), _) => timestamp(i128::from(*v))?,
        _ => return None,
    })
}

fn timestamp(epoch_nanos: i128) -> Option<Literal> {
    Timestamp::from_epoch_nanos(epoch_nanos).map(Literal::Timestamp)
}

/// The unscaled decimal `v` at `scale` as text (`12345`, 2 → `123.45`).
fn decimal_text(v: i128, scale: i8) -> Option<String> {
    if scale <= 0 {
        let zeros = "0".repeat(usize::try_from(-i32::from(scale)).ok()?);
        return Some(format!("{v}{zeros}"));
    }
    let scale = usize::try_from(scale).ok()?;
    let digits = v.unsigned_abs().to_string();
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = digits.split_at(digits.len() - scale);
    let sign = if v < 0 { "-" } else { "" };
    Some(format!("{sign}{int}.{frac}"))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::Field;
    use std::ops::Not;

    use datafusion::logical_expr::{col, lit};

    use super::*;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Decimal128(10, 2), true),
            Field::new("f", DataType::Float64, true),
            Field::new("b", DataType::Boolean, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from("UTC"))),
                true,
            ),
        ])
    }

    fn pushed(e: Expr) -> Option<(String, TableProviderFilterPushDown)> {
        translate(&e, &schema()).map(|p| (p.predicate.to_string(), p.pushdown))
    }

    #[test]
    fn comparisons_of_a_column_with_a_literal_of_its_type_are_exact() {
        use TableProviderFilterPushDown::Exact;
        let (text, how) = pushed(col("k").gt(lit(3i32))).unwrap();
        assert_eq!((text.as_str(), how), ("k > 3", Exact));
        let (text, _) = pushed(lit(3i32).lt(col("k"))).unwrap();
        assert_eq!(text, "k > 3");
        let e = col("s")
            .eq(lit("x"))
            .or(col("k").in_list(vec![lit(1i32), lit(2i32)], false));
        let (text, how) = pushed(e).unwrap();
        assert_eq!((text.as_str(), how), ("(s = 'x' OR k IN (1, 2))", Exact));
        let (text, _) = pushed(col("k").between(lit(1i32), lit(5i32)).not()).unwrap();
        assert_eq!(text, "NOT (k >= 1 AND k <= 5)");
        let d = lit(ScalarValue::Decimal128(Some(-1205), 10, 2));
        assert_eq!(pushed(col("d").lt_eq(d)).unwrap().0, "d <= -12.05");
        assert_eq!(pushed(col("b")).unwrap().0, "b = TRUE");
        assert_eq!(pushed(col("s").is_null()).unwrap().0, "s IS NULL");
        let ts = lit(ScalarValue::TimestampMicrosecond(
            Some(1_500),
            Some(Arc::from("UTC")),
        ));
        assert_eq!(
            pushed(col("ts").gt_eq(ts)).unwrap().0,
            "ts >= TIMESTAMP '1970-01-01 00:00:00.0015'"
        );
    }

    #[test]
    fn casts_other_types_and_two_columns_are_not_pushed() {
        assert_eq!(pushed(col("k").gt(lit(3i64))), None);
        assert_eq!(
            pushed(
                Expr::Cast(datafusion::logical_expr::Cast::new(
                    Box::new(col("k")),
                    DataType::Float64
                ))
                .gt(lit(2.5f64))
            ),
            None
        );
        assert_eq!(pushed(col("k").eq(col("d"))), None);
        assert_eq!(pushed(col("f").gt(lit(f64::NAN))), None);
        // One untranslatable side makes the whole OR unsupported.
        assert_eq!(
            pushed(col("k").eq(lit(1i32)).or(col("k").eq(col("d")))),
            None
        );
    }

    #[test]
    fn a_prefix_like_is_an_inexact_range() {
        let (text, how) = pushed(col("s").like(lit("ab%c"))).unwrap();
        assert_eq!(text, "(s >= 'ab' AND s < 'ac')");
        assert_eq!(how, TableProviderFilterPushDown::Inexact);
        assert_eq!(pushed(col("s").like(lit("%ab"))), None);
        assert_eq!(pushed(col("s").not_like(lit("ab%"))), None);
        assert_eq!(successor("a\u{10FFFF}").as_deref(), Some("b"));
    }

    #[test]
    fn decimal_text_places_the_point() {
        assert_eq!(decimal_text(12345, 2).unwrap(), "123.45");
        assert_eq!(decimal_text(-5, 3).unwrap(), "-0.005");
        assert_eq!(decimal_text(7, 0).unwrap(), "7");
        assert_eq!(decimal_text(7, -2).unwrap(), "700");
    }
}
