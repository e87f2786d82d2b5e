use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array,
    Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, LargeBinaryArray, RecordBatch,
    StringArray, Time32MillisecondArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    TimestampNanosecondArray, TimestampSecondArray,
};
use arrow_schema::{DataType as ArrowType, Field, Schema, TimeUnit};

use super::*;
use crate::spec::{DataField, DataType, TypeKind};

// ---------------------------------------------------------------------------------------
// helpers

fn field(id: i32, name: &str, kind: TypeKind) -> DataField {
    DataField {
        id,
        name: name.to_string(),
        data_type: DataType::nullable(kind),
        description: None,
        default_value: None,
    }
}

/// The read schema used by most tests.
fn schema() -> Vec<DataField> {
    vec![
        field(0, "t", TypeKind::TinyInt),
        field(1, "s", TypeKind::SmallInt),
        field(2, "i", TypeKind::Int),
        field(3, "b", TypeKind::BigInt),
        field(4, "f", TypeKind::Float),
        field(5, "d", TypeKind::Double),
        field(
            6,
            "dec",
            TypeKind::Decimal {
                precision: 10,
                scale: 2,
            },
        ),
        field(7, "str", TypeKind::VarChar { length: 100 }),
        field(8, "bin", TypeKind::VarBinary { length: 100 }),
        field(9, "flag", TypeKind::Boolean),
        field(10, "dt", TypeKind::Date),
        field(11, "tm", TypeKind::Time { precision: 3 }),
        field(12, "ts0", TypeKind::Timestamp { precision: 0 }),
        field(13, "ts3", TypeKind::Timestamp { precision: 3 }),
        field(14, "ts6", TypeKind::Timestamp { precision: 6 }),
        field(15, "ts9", TypeKind::Timestamp { precision: 9 }),
        field(16, "ltz", TypeKind::LocalZonedTimestamp { precision: 6 }),
        field(
            17,
            "arr",
            TypeKind::Array(Box::new(DataType::nullable(TypeKind::Int))),
        ),
        field(18, "blob", TypeKind::Blob),
        field(19, "My Col", TypeKind::Int),
    ]
}

fn bind(text: &str) -> BoundPredicate {
    Predicate::parse(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .bind(&schema())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn bind_err(text: &str) -> String {
    Predicate::parse(text)
        .unwrap()
        .bind(&schema())
        .unwrap_err()
        .to_string()
}

fn ts(s: &str) -> Timestamp {
    coerce::parse_timestamp(s).unwrap()
}

fn date(s: &str) -> i32 {
    coerce::parse_date(s).unwrap()
}

/// A one-column array of `dt` from values of the matching variant.
fn array_of(dt: &ArrowType, vals: &[Option<Value>]) -> ArrayRef {
    macro_rules! prim {
        ($arr:ty, $var:ident) => {
            Arc::new(<$arr>::from(
                vals.iter()
                    .map(|v| match v {
                        Some(Value::$var(x)) => Some(*x),
                        None => None,
                        other => panic!("{other:?} for {dt}"),
                    })
                    .collect::<Vec<_>>(),
            )) as ArrayRef
        };
    }
    let ts_in = |unit: i128| -> Vec<Option<i64>> {
        vals.iter()
            .map(|v| match v {
                Some(Value::Timestamp(t)) => Some((t.epoch_nanos().div_euclid(unit)) as i64),
                None => None,
                other => panic!("{other:?} for {dt}"),
            })
            .collect()
    };
    match dt {
        ArrowType::Boolean => prim!(BooleanArray, Boolean),
        ArrowType::Int8 => prim!(Int8Array, TinyInt),
        ArrowType::Int16 => prim!(Int16Array, SmallInt),
        ArrowType::Int32 => prim!(Int32Array, Int),
        ArrowType::Int64 => prim!(Int64Array, BigInt),
        ArrowType::Float32 => prim!(Float32Array, Float),
        ArrowType::Float64 => prim!(Float64Array, Double),
        ArrowType::Date32 => prim!(Date32Array, Date),
        ArrowType::Time32(TimeUnit::Millisecond) => prim!(Time32MillisecondArray, Time),
        ArrowType::Decimal128(p, s) => Arc::new(
            Decimal128Array::from(
                vals.iter()
                    .map(|v| match v {
                        Some(Value::Decimal(x)) => Some(*x),
                        None => None,
                        other => panic!("{other:?}"),
                    })
                    .collect::<Vec<_>>(),
            )
            .with_precision_and_scale(*p, *s)
            .unwrap(),
        ),
        ArrowType::Utf8 => Arc::new(StringArray::from(
            vals.iter()
                .map(|v| match v {
                    Some(Value::String(x)) => Some(x.as_str()),
                    None => None,
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>(),
        )),
        ArrowType::Binary | ArrowType::LargeBinary => {
            let v: Vec<Option<&[u8]>> = vals
                .iter()
                .map(|v| match v {
                    Some(Value::Binary(x)) => Some(x.as_slice()),
                    None => None,
                    other => panic!("{other:?}"),
                })
                .collect();
            if *dt == ArrowType::Binary {
                Arc::new(BinaryArray::from(v))
            } else {
                Arc::new(LargeBinaryArray::from(v))
            }
        }
        ArrowType::Timestamp(unit, tz) => {
            let tz = tz.clone();
            match unit {
                TimeUnit::Second => {
                    Arc::new(TimestampSecondArray::from(ts_in(1_000_000_000)).with_timezone_opt(tz))
                }
                TimeUnit::Millisecond => Arc::new(
                    TimestampMillisecondArray::from(ts_in(1_000_000)).with_timezone_opt(tz),
                ),
                TimeUnit::Microsecond => {
                    Arc::new(TimestampMicrosecondArray::from(ts_in(1_000)).with_timezone_opt(tz))
                }
                TimeUnit::Nanosecond => {
                    Arc::new(TimestampNanosecondArray::from(ts_in(1)).with_timezone_opt(tz))
                }
            }
        }
        other => panic!("no test array for {other}"),
    }
}

/// A table of rows over `fields`: the batch (Arrow types as the reader maps them) and the rows
/// as `(field id, value)` pairs for the scalar evaluator.
struct Table {
    fields: Vec<DataField>,
    rows: Vec<Vec<Option<Value>>>,
}

impl Table {
    fn batch(&self) -> RecordBatch {
        let mut cols = Vec::new();
        let mut arrow_fields = Vec::new();
        for (c, f) in self.fields.iter().enumerate() {
            let dt = crate::types::paimon_to_arrow_type(&f.data_type).unwrap();
            let vals: Vec<Option<Value>> = self.rows.iter().map(|r| r[c].clone()).collect();
            cols.push(array_of(&dt, &vals));
            arrow_fields.push(Field::new(&f.name, dt, true));
        }
        RecordBatch::try_new(Arc::new(Schema::new(arrow_fields)), cols).unwrap()
    }

    fn row(&self, r: usize) -> Vec<(i32, Option<Value>)> {
        self.fields
            .iter()
            .zip(&self.rows[r])
            .map(|(f, v)| (f.id, v.clone()))
            .collect()
    }

    /// Indices selected by the Arrow evaluation, checked against the scalar evaluation.
    fn selected(&self, p: &BoundPredicate) -> Vec<usize> {
        let mask = p.evaluate(&self.batch()).unwrap();
        assert_eq!(mask.len(), self.rows.len());
        let mut out = Vec::new();
        for r in 0..self.rows.len() {
            let arrow = if mask.is_null(r) {
                None
            } else {
                Some(mask.value(r))
            };
            assert_eq!(arrow, p.evaluate_row(&self.row(r)), "row {r} of {p}");
            if arrow == Some(true) {
                out.push(r);
            }
        }
        out
    }

    /// Per-column stats over the rows (exact min/max of non-null values).
    fn stats(&self) -> Vec<ColumnStats> {
        self.fields
            .iter()
            .enumerate()
            .map(|(c, f)| {
                let vals: Vec<&Value> = self.rows.iter().filter_map(|r| r[c].as_ref()).collect();
                let mut min: Option<&Value> = None;
                let mut max: Option<&Value> = None;
                for v in &vals {
                    if min.is_none_or(|m| v.compare(m) == Some(Ordering::Less)) {
                        min = Some(v);
                    }
                    if max.is_none_or(|m| v.compare(m) == Some(Ordering::Greater)) {
                        max = Some(v);
                    }
                }
                ColumnStats {
                    field_id: f.id,
                    data_type: f.data_type.clone(),
                    min: min.cloned(),
                    max: max.cloned(),
                    null_count: Some((self.rows.len() - vals.len()) as i64),
                }
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// parser

#[test]
fn parses_the_issue_example_and_prints_canonically() {
    let p = Predicate::parse("a = 1 AND (b <> 'x' OR c IS NULL) AND d IN (1,2,3) AND NOT e >= 2.5")
        .unwrap();
    assert_eq!(
        p.to_string(),
        "(a = 1 AND (b <> 'x' OR c IS NULL) AND d IN (1, 2, 3) AND NOT e >= 2.5)"
    );
    assert_eq!(p.referenced_columns(), vec!["a", "b", "c", "d", "e"]);
}

#[test]
fn parses_valid_forms() {
    let cases = [
        // precedence: NOT > AND > OR
        ("a = 1 OR b = 2 AND c = 3", "(a = 1 OR (b = 2 AND c = 3))"),
        ("a = 1 AND b = 2 OR c = 3", "((a = 1 AND b = 2) OR c = 3)"),
        ("NOT a = 1 AND b = 2", "(NOT a = 1 AND b = 2)"),
        ("NOT a = 1 OR NOT b = 2", "(NOT a = 1 OR NOT b = 2)"),
        ("NOT NOT a = 1", "NOT NOT a = 1"),
        ("NOT (a = 1 OR b = 2)", "NOT (a = 1 OR b = 2)"),
        ("((a = 1))", "a = 1"),
        // keywords in any case
        (
            "a is not null and b Not In (1) or not c iS nUlL",
            "((a IS NOT NULL AND b NOT IN (1)) OR NOT c IS NULL)",
        ),
        // operators
        ("a != 1", "a <> 1"),
        ("a == 1", "a = 1"),
        (
            "a<=1 AND a>=2 AND a<3 AND a>4",
            "(a <= 1 AND a >= 2 AND a < 3 AND a > 4)",
        ),
        // literal on the left flips the operator
        ("1 < a", "a > 1"),
        ("'x' >= a", "a <= 'x'"),
        // literals
        ("a = -3.5e2", "a = -3.5e2"),
        ("a = +7", "a = 7"),
        ("a = .5", "a = .5"),
        ("a = 'it''s'", "a = 'it''s'"),
        ("a = ''", "a = ''"),
        ("a = TRUE OR a = false", "(a = TRUE OR a = FALSE)"),
        ("a = NULL", "a = NULL"),
        ("a = X'0aFF'", "a = X'0aff'"),
        ("a = DATE '2024-02-29'", "a = DATE '2024-02-29'"),
        ("a = date '1969-12-31'", "a = DATE '1969-12-31'"),
        (
            "a < TIMESTAMP '2024-01-01 12:34:56.789'",
            "a < TIMESTAMP '2024-01-01 12:34:56.789'",
        ),
        (
            "a < TIMESTAMP '1969-12-31T23:59:59.000000001'",
            "a < TIMESTAMP '1969-12-31 23:59:59.000000001'",
        ),
        (
            "a < TIMESTAMP '2024-01-01'",
            "a < TIMESTAMP '2024-01-01 00:00:00'",
        ),
        ("a > TIME '23:59:59.5'", "a > TIME '23:59:59.5'"),
        ("a IN (1, NULL, 'x')", "a IN (1, NULL, 'x')"),
        // identifiers
        ("`my col` = 1", "`my col` = 1"),
        ("\"My\"\"Col\" = 1", "`My\"Col` = 1"),
        ("`a``b` = 1", "`a``b` = 1"),
        ("`and` = 1", "`and` = 1"),
        ("_x$1 = 1", "_x$1 = 1"),
        // bare boolean column and constants
        ("flag", "flag = TRUE"),
        ("NOT flag AND (flag)", "(NOT flag = TRUE AND flag = TRUE)"),
        ("TRUE", "TRUE"),
        ("FALSE OR a = 1", "(FALSE OR a = 1)"),
        ("TRUE = flag", "flag = TRUE"),
        ("  a=1  ", "a = 1"),
        (
            "a BETWEEN 1 AND 5 AND b = 2",
            "((a >= 1 AND a <= 5) AND b = 2)",
        ),
        (
            "a not between -1 and 'x' or b = 2",
            "(NOT (a >= -1 AND a <= 'x') OR b = 2)",
        ),
        ("`between` = 1", "`between` = 1"),
    ];
    for (text, want) in cases {
        let p = Predicate::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(p.to_string(), want, "{text}");
        // The canonical form parses back to the same tree.
        let again = Predicate::parse(want).unwrap_or_else(|e| panic!("{want}: {e}"));
        assert_eq!(again.to_string(), want, "{want}");
    }
}

#[test]
fn parse_errors_name_position_and_expectation() {
    let cases: &[(&str, usize, &str, &str)] = &[
        ("a = ", 5, "a literal after the operator", "end of input"),
        (
            "a = 1 AND",
            10,
            "a column, literal, NOT or '('",
            "end of input",
        ),
        (
            "a = 1 AND OR b = 1",
            11,
            "a column, literal, NOT or '('",
            "'OR'",
        ),
        (
            "a IN (1, 2",
            11,
            "',' or ')' in the IN list",
            "end of input",
        ),
        ("a IN 1", 6, "'(' after IN", "number 1"),
        ("a IN (b)", 7, "a literal in the IN list", "identifier b"),
        ("(a = 1", 7, "')' or AND/OR", "end of input"),
        ("a = 1)", 6, "end of input (unbalanced ')')", "')'"),
        ("a = 1 b = 2", 7, "AND, OR or end of input", "identifier b"),
        (
            "a = 'abc",
            5,
            "a closing ' for the string starting here",
            "end of input",
        ),
        (
            "`abc = 1",
            1,
            "a closing ` for the quoted identifier starting here",
            "end of input",
        ),
        ("a IS 1", 6, "NULL or NOT NULL", "number 1"),
        ("a IS NOT 1", 10, "NULL", "number 1"),
        (
            "a = b",
            5,
            "a literal (comparing two columns is not supported)",
            "identifier b",
        ),
        (
            "1 = 2",
            1,
            "a column on one side of the comparison",
            "a comparison of two literals",
        ),
        (
            "1 AND a = 1",
            3,
            "a comparison operator (=, <>, <, <=, >, >=) after the literal",
            "'AND'",
        ),
        (
            "a LIKE 'x'",
            3,
            "a comparison operator (=, <>, <, <=, >, >=), IS [NOT] NULL, [NOT] IN or [NOT] BETWEEN",
            "identifier LIKE",
        ),
        (
            "a BETWEEN 1 OR 2",
            13,
            "AND between the BETWEEN bounds",
            "'OR'",
        ),
        (
            "a BETWEEN b AND 2",
            11,
            "a literal after BETWEEN",
            "identifier b",
        ),
        (
            "a = 1x",
            6,
            "an operator or separator after the number",
            "'x'",
        ),
        ("a = 1e", 6, "exponent digits after 'e'", "e"),
        (
            "a # 1",
            3,
            "a column, literal, operator or parenthesis",
            "'#'",
        ),
        ("a ! 1", 3, "'!='", "'!'"),
        ("a = -'x'", 6, "a number after '-'", "string 'x'"),
        ("a = DATE 1", 10, "a quoted string after DATE", "number 1"),
        (
            "a = X'abc'",
            5,
            "an even number of hex digits in X'...'",
            "X'abc'",
        ),
        (
            "é = 1 AND ?",
            11,
            "a column, literal, operator or parenthesis",
            "'?'",
        ),
        ("``", 1, "a column name", "an empty quoted identifier"),
        ("", 1, "a column, literal, NOT or '('", "end of input"),
        ("a = NOT", 5, "a literal after the operator", "'NOT'"),
    ];
    for (text, pos, expected, found) in cases {
        let e = Predicate::try_parse(text).unwrap_err();
        assert_eq!(
            (e.position, e.expected.as_str(), e.found.as_str()),
            (*pos, *expected, *found),
            "{text}"
        );
    }
    let e = Predicate::try_parse("a = DATE '2024-02-30'").unwrap_err();
    assert_eq!(e.position, 10);
    assert!(e.expected.contains("day 30 is not 1..29"), "{e}");
    let e = Predicate::try_parse("a = TIMESTAMP '2024-01-01 24:00:00'").unwrap_err();
    assert_eq!(e.position, 15);
    let e = Predicate::try_parse("a = TIME '12:00:00.1234567890'").unwrap_err();
    assert!(e.expected.contains("fraction"), "{e}");
    // The crate error carries the same text.
    assert_eq!(
        Predicate::parse("a = ").unwrap_err().to_string(),
        "invalid filter: at position 5: expected a literal after the operator, found end of input"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!("{}a = 1{}", "(".repeat(100_000), ")".repeat(100_000));
    let e = Predicate::try_parse(&text).unwrap_err();
    assert_eq!(e.position, 257);
    let text = format!("{}a = 1", "NOT ".repeat(100_000));
    assert!(Predicate::try_parse(&text).is_err());
    // 200 levels are fine.
    let text = format!("{}a = 1{}", "(".repeat(200), ")".repeat(200));
    assert_eq!(Predicate::parse(&text).unwrap().to_string(), "a = 1");
}

#[test]
fn builders_match_the_parser() {
    let built = Predicate::compare("a", CmpOp::Eq, Literal::Number("1".into()))
        .and(Predicate::is_null("b").or(Predicate::is_in(
            "c",
            vec![Literal::String("x".into()), Literal::Null],
        )))
        .and(Predicate::not_in("d", vec![Literal::Boolean(true)]).not());
    assert_eq!(
        built.to_string(),
        "(a = 1 AND (b IS NULL OR c IN ('x', NULL)) AND NOT d NOT IN (TRUE))"
    );
}

// ---------------------------------------------------------------------------------------
// binding and coercion

#[test]
fn binding_pushes_not_down_and_coerces_exactly() {
    let cases = [
        ("NOT (i = 1 AND b IS NULL)", "(i <> 1 OR b IS NOT NULL)"),
        ("NOT (i < 1 OR NOT b >= 2)", "(i >= 1 AND b >= 2)"),
        ("NOT i IN (1, NULL)", "i NOT IN (1, NULL)"),
        ("NOT i NOT IN (1, 1, 2)", "i IN (1, 2)"),
        ("NOT NOT i IS NOT NULL", "i IS NOT NULL"),
        ("i = NULL", "i = NULL"),
        ("NOT i = NULL", "i = NULL"),
        ("5 > i", "i < 5"),
        // integers: fractions and out-of-range literals
        ("i > 2.5", "i > 2"),
        ("i >= 2.5", "i > 2"),
        ("i < 2.5", "i <= 2"),
        ("i <= 2.5", "i <= 2"),
        ("i < -2.5", "i <= -3"),
        ("i = 2.5", "i IS NOT NULL AND FALSE"),
        ("i <> 2.5", "i IS NOT NULL AND TRUE"),
        ("i = 2.0", "i = 2"),
        ("i = 2e1", "i = 20"),
        ("i = '7'", "i = 7"),
        ("t > 300", "t > 127"),
        ("t < 300", "t <= 127"),
        ("t < -300", "t IS NOT NULL AND FALSE"),
        ("t >= -128.5", "t IS NOT NULL AND TRUE"),
        ("b = 9223372036854775807", "b = 9223372036854775807"),
        ("b > 9223372036854775808", "b > 9223372036854775807"),
        ("i IN (1, 2.5, 3e0, NULL)", "i IN (1, 3, NULL)"),
        // decimals at the column scale (unscaled values)
        ("dec = 1.5", "dec = 150u"),
        ("dec = 1.005", "dec IS NOT NULL AND FALSE"),
        ("dec >= 1.005", "dec > 100u"),
        ("dec >= -1.005", "dec > -101u"),
        ("dec < 1e20", "dec <= 9999999999u"),
        ("dec > -1e20", "dec IS NOT NULL AND TRUE"),
        // more digits than i128 holds: the dropped digits still count
        (
            "dec < 1.000000000000000000000000000000000000001",
            "dec <= 100u",
        ),
        (
            "dec = 1.000000000000000000000000000000000000001",
            "dec IS NOT NULL AND FALSE",
        ),
        (
            "dec >= -1.000000000000000000000000000000000000001",
            "dec > -101u",
        ),
        (
            "dec = 1.000000000000000000000000000000000000000",
            "dec = 100u",
        ),
        (
            "dec > 99999999999999999999999999999999999999999",
            "dec > 9999999999u",
        ),
        (
            "dec < -99999999999999999999999999999999999999999",
            "dec IS NOT NULL AND FALSE",
        ),
        ("b < 1e-50", "b <= 0"),
        ("b > -1e-50", "b > -1"),
        ("b = 0e-50", "b = 0"),
        // floats
        ("d > 0.1", "d > 0.1"),
        ("f = 0.5", "f = 0.5"),
        ("f = 0.1", "f = 0.1"),
        ("f < 1e39", "f <= 3.4028235e38"),
        ("f > -1e39", "f > -inf"),
        ("f <= 0.1", "f <= 0.1"),
        ("f >= 0.1", "f >= 0.1"),
        // strings and binaries
        ("str = 12", "str = '12'"),
        ("str = 'a''b'", "str = 'a''b'"),
        ("bin = 'ab'", "bin = X'6162'"),
        ("bin = X'00ff'", "bin = X'00ff'"),
        ("flag = 'TRUE'", "flag = TRUE"),
        ("flag", "flag = TRUE"),
        // dates, times and timestamps
        ("dt = '2024-01-01'", "dt = DATE '2024-01-01'"),
        (
            "dt < TIMESTAMP '2024-01-01 10:00:00'",
            "dt <= DATE '2024-01-01'",
        ),
        (
            "dt >= TIMESTAMP '2024-01-01 00:00:00'",
            "dt >= DATE '2024-01-01'",
        ),
        ("dt = '2024-01-01 00:00:01'", "dt IS NOT NULL AND FALSE"),
        ("tm < '12:00:00.0005'", "tm <= TIME '12:00:00'"),
        ("tm = TIME '12:00:00.5'", "tm = TIME '12:00:00.5'"),
        (
            "ts0 > TIMESTAMP '2024-01-01 00:00:00.5'",
            "ts0 > TIMESTAMP '2024-01-01 00:00:00'",
        ),
        (
            "ts0 = TIMESTAMP '2024-01-01 00:00:00.5'",
            "ts0 IS NOT NULL AND FALSE",
        ),
        (
            "ts3 >= DATE '2024-01-01'",
            "ts3 >= TIMESTAMP '2024-01-01 00:00:00'",
        ),
        (
            "ts3 < '1969-12-31 23:59:59.9995'",
            "ts3 <= TIMESTAMP '1969-12-31 23:59:59.999'",
        ),
        (
            "ts9 = '2024-01-01 00:00:00.123456789'",
            "ts9 = TIMESTAMP '2024-01-01 00:00:00.123456789'",
        ),
        (
            "ltz > TIMESTAMP '2024-01-01 00:00:00.0000001'",
            "ltz > TIMESTAMP '2024-01-01 00:00:00'",
        ),
        // names: exact, then case-insensitive, quoted
        ("I = 1", "i = 1"),
        ("`my col` = 1", "`My Col` = 1"),
        // constants
        ("TRUE AND i = 1", "(TRUE AND i = 1)"),
        ("NOT TRUE", "FALSE"),
        ("arr IS NULL", "arr IS NULL"),
    ];
    for (text, want) in cases {
        assert_eq!(bind(text).to_string(), want, "{text}");
    }
    assert_eq!(
        bind("b > 1 AND (i = 1 OR str IS NULL) AND b < 3").referenced_columns(),
        vec!["b", "i", "str"]
    );
}

#[test]
fn binding_errors() {
    let e = bind_err("i = 'abc'");
    assert_eq!(
        e,
        "filter literal 'abc' cannot be compared with column `i` (at position 1) of type INT: 'abc' is not a number"
    );
    let e = bind_err("x = 1 AND nope = 2");
    assert!(
        e.starts_with("filter column `x` (at position 1) does not exist; columns are: t, s, i, b"),
        "{e}"
    );
    assert!(bind_err("dt = 'yesterday'").contains("is not a date"));
    assert!(bind_err("dt = 5").contains("a numeric literal does not fit"));
    assert!(bind_err("i = TRUE").contains("a BOOLEAN literal does not fit"));
    assert!(bind_err("flag = 'yes'").contains("expected 'true' or 'false'"));
    assert!(bind_err("str = DATE '2024-01-01'").contains("type VARCHAR(100)"));
    assert!(bind_err("i").contains("a BOOLEAN literal does not fit"));
    let e = Predicate::parse("arr = 1")
        .unwrap()
        .bind(&schema())
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    let e = Predicate::parse("blob IN ('x')")
        .unwrap()
        .bind(&schema())
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    // Ambiguous case-insensitive match.
    let fields = vec![field(0, "Ab", TypeKind::Int), field(1, "aB", TypeKind::Int)];
    let e = Predicate::parse("ab = 1")
        .unwrap()
        .bind(&fields)
        .unwrap_err();
    assert!(e.to_string().contains("ambiguous"), "{e}");
    assert_eq!(
        Predicate::parse("Ab = 1")
            .unwrap()
            .bind(&fields)
            .unwrap()
            .to_string(),
        "Ab = 1"
    );
}

// ---------------------------------------------------------------------------------------
// evaluation on batches

fn typed_table() -> Table {
    let s = |x: &str| Some(Value::String(x.to_string()));
    let rows: Vec<Vec<Option<Value>>> = vec![
        vec![
            Some(Value::TinyInt(1)),
            Some(Value::SmallInt(100)),
            Some(Value::Int(1)),
            Some(Value::BigInt(10)),
            Some(Value::Float(0.5)),
            Some(Value::Double(-1.5)),
            Some(Value::Decimal(150)),
            s("apple"),
            Some(Value::Binary(b"ab".to_vec())),
            Some(Value::Boolean(true)),
            Some(Value::Date(date("2024-01-01"))),
            Some(Value::Time(43_200_000)),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00"))),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00.123"))),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00.123456"))),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00.123456789"))),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00"))),
        ],
        vec![
            Some(Value::TinyInt(-128)),
            Some(Value::SmallInt(-5)),
            Some(Value::Int(2)),
            Some(Value::BigInt(i64::MAX)),
            Some(Value::Float(f32::NAN)),
            Some(Value::Double(0.0)),
            Some(Value::Decimal(-1)),
            s("banana"),
            Some(Value::Binary(vec![0xff])),
            Some(Value::Boolean(false)),
            Some(Value::Date(date("1969-12-31"))),
            Some(Value::Time(0)),
            Some(Value::Timestamp(ts("1969-12-31 23:59:59"))),
            Some(Value::Timestamp(ts("1969-12-31 23:59:59.999"))),
            Some(Value::Timestamp(ts("1969-12-31 23:59:59.999999"))),
            Some(Value::Timestamp(ts("1969-12-31 23:59:59.999999999"))),
            Some(Value::Timestamp(ts("2024-06-30 12:00:00.5"))),
        ],
        vec![None; 17],
        vec![
            Some(Value::TinyInt(127)),
            Some(Value::SmallInt(0)),
            Some(Value::Int(3)),
            Some(Value::BigInt(-10)),
            Some(Value::Float(-0.0)),
            Some(Value::Double(f64::INFINITY)),
            Some(Value::Decimal(9_999_999_999)),
            s(""),
            Some(Value::Binary(vec![])),
            Some(Value::Boolean(true)),
            Some(Value::Date(date("2024-12-31"))),
            Some(Value::Time(86_399_999)),
            Some(Value::Timestamp(ts("2038-01-19 03:14:08"))),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00.124"))),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00.123457"))),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00.123456788"))),
            Some(Value::Timestamp(ts("2024-01-01 00:00:00.000001"))),
        ],
    ];
    let fields: Vec<DataField> = schema().into_iter().take(17).collect();
    Table { fields, rows }
}

#[test]
fn evaluates_every_type_with_nulls() {
    let table = typed_table();
    let cases: &[(&str, &[usize])] = &[
        ("t = 1", &[0]),
        ("t >= -128", &[0, 1, 3]),
        ("t > 126.5", &[3]),
        ("t < 1000", &[0, 1, 3]),
        ("s <> 0", &[0, 1]),
        ("i IN (1, 3)", &[0, 3]),
        ("i NOT IN (1, 3)", &[1]),
        ("b > 0", &[0, 1]),
        ("b = 9223372036854775807", &[1]),
        ("b >= 9223372036854775807.5", &[]),
        // floats: total order, NaN greatest and equal to itself, -0.0 < 0.0
        ("f > 0.4", &[0, 1]),
        ("f = '-0.0'", &[3]),
        ("f < 0", &[3]),
        ("f = 'NaN'", &[1]),
        ("d >= 0", &[1, 3]),
        ("d < 1e308", &[0, 1]),
        ("dec = 1.5", &[0]),
        ("dec < 0", &[1]),
        ("dec >= 99999999.99", &[3]),
        ("dec > 1.499", &[0, 3]),
        ("str = 'apple'", &[0]),
        ("str < 'b'", &[0, 3]),
        ("str >= ''", &[0, 1, 3]),
        ("str IN ('banana', 'cherry')", &[1]),
        ("bin = 'ab'", &[0]),
        ("bin > X'00'", &[0, 1]),
        ("bin = X''", &[3]),
        ("flag", &[0, 3]),
        ("NOT flag", &[1]),
        ("flag = FALSE", &[1]),
        ("dt < DATE '2024-01-01'", &[1]),
        ("dt = '2024-12-31'", &[3]),
        ("dt <= TIMESTAMP '2024-01-01 00:00:01'", &[0, 1]),
        ("tm >= '12:00:00'", &[0, 3]),
        ("tm < TIME '00:00:00.001'", &[1]),
        ("ts0 < '1970-01-01'", &[1]),
        ("ts0 > TIMESTAMP '2038-01-19 03:14:07.9'", &[3]),
        ("ts3 = '2024-01-01 00:00:00.123'", &[0]),
        ("ts3 > '2024-01-01 00:00:00.1235'", &[3]),
        ("ts6 < '1970-01-01'", &[1]),
        ("ts6 >= '2024-01-01 00:00:00.1234565'", &[3]),
        ("ts6 >= '2024-01-01 00:00:00.1234555'", &[0, 3]),
        ("ts9 > '2024-01-01 00:00:00.123456788'", &[0]),
        ("ts9 <= '2024-01-01 00:00:00.123456788'", &[1, 3]),
        ("ltz > DATE '2024-01-01'", &[1, 3]),
        ("ltz = '2024-06-30 12:00:00.5'", &[1]),
        // null handling
        ("i BETWEEN 2 AND 3", &[1, 3]),
        ("i NOT BETWEEN 2 AND 3", &[0]),
        ("i IS NULL", &[2]),
        ("ts9 IS NOT NULL", &[0, 1, 3]),
        ("NOT i = 1", &[1, 3]),
        ("i = 1 OR i IS NULL", &[0, 2]),
    ];
    for (text, want) in cases {
        let p = bind(text);
        assert_eq!(table.selected(&p), *want, "{text} (bound: {p})");
    }
}

#[test]
fn three_valued_logic() {
    let table = Table {
        fields: vec![
            field(2, "i", TypeKind::Int),
            field(3, "b", TypeKind::BigInt),
        ],
        rows: vec![
            vec![Some(Value::Int(1)), Some(Value::BigInt(1))],
            vec![Some(Value::Int(2)), None],
            vec![None, Some(Value::BigInt(1))],
            vec![None, None],
        ],
    };
    let cases: &[(&str, &[usize])] = &[
        ("i = NULL", &[]),
        ("NOT i = NULL", &[]),
        ("i <> NULL OR i = 1", &[0]),
        ("i IN (1, NULL)", &[0]),
        ("NOT i IN (1, NULL)", &[]),
        ("i NOT IN (2, NULL)", &[]),
        ("i NOT IN (2)", &[0]),
        ("i IN (NULL)", &[]),
        ("i IN (2.5)", &[]),
        ("NOT i IN (2.5)", &[0, 1]),
        // unknown AND false = false; NOT false = true
        ("NOT (i = 1 AND b = 2)", &[0, 1, 2]),
        // unknown OR true = true
        ("i = 1 OR b = 1", &[0, 2]),
        // NOT (unknown OR false) = unknown
        ("NOT (i = 5 OR b = 5)", &[0]),
        ("NOT (i IS NULL OR b = 1)", &[]),
        ("NOT (i IS NULL OR b = 2)", &[0]),
        ("NOT i = 2.5", &[0, 1]),
        ("TRUE", &[0, 1, 2, 3]),
        ("FALSE", &[]),
        ("NOT FALSE AND i IS NULL", &[2, 3]),
    ];
    for (text, want) in cases {
        let p = Predicate::parse(text).unwrap().bind(&schema()).unwrap();
        assert_eq!(table.selected(&p), *want, "{text} (bound: {p})");
    }
    // Explicit null markers in the selection (unknown stays null, not false).
    let mask = Predicate::parse("i = 1")
        .unwrap()
        .bind(&schema())
        .unwrap()
        .evaluate(&table.batch())
        .unwrap();
    assert_eq!(
        mask.iter().collect::<Vec<_>>(),
        vec![Some(true), Some(false), None, None]
    );
}

#[test]
fn filter_batch_keeps_schema_and_selected_rows() {
    let table = typed_table();
    let batch = table.batch();
    let p = bind("i >= 2 AND str IS NOT NULL");
    let out = p.filter_batch(&batch).unwrap();
    assert_eq!(out.schema(), batch.schema());
    assert_eq!(out.num_rows(), 2);
    let i = out
        .column_by_name("i")
        .unwrap()
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap();
    assert_eq!(i.values().to_vec(), vec![2, 3]);
    // A column the filter needs but the batch lacks.
    let e = bind("ltz IS NULL AND arr IS NULL")
        .filter_batch(&batch)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("filter column `arr` is not in the batch"),
        "{e}"
    );
}

#[test]
fn evaluates_on_other_arrow_units_and_types() {
    // TIMESTAMP(9) literal against columns in every unit, and an INT literal on Int64.
    let values = [
        "2024-01-01 00:00:00",
        "2024-01-01 00:00:00.001",
        "2024-01-01 00:00:01",
        "1969-12-31 23:59:59",
        "1970-01-01 00:00:00",
    ];
    let vals: Vec<Option<Value>> = values
        .iter()
        .map(|v| Some(Value::Timestamp(ts(v))))
        .collect();
    // In seconds, row 1 (00:00:00.001) is stored as 00:00:00.
    for (unit, tz, want_gt, want_ge_milli) in [
        (TimeUnit::Second, None, vec![2], vec![2]),
        (TimeUnit::Millisecond, None, vec![1, 2], vec![1, 2]),
        (TimeUnit::Microsecond, Some("UTC"), vec![1, 2], vec![1, 2]),
        (TimeUnit::Nanosecond, None, vec![1, 2], vec![1, 2]),
    ] {
        let dt = ArrowType::Timestamp(unit, tz.map(Into::into));
        let col = array_of(&dt, &vals);
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("ts9", dt.clone(), true)])),
            vec![col],
        )
        .unwrap();
        let sel = |text: &str| -> Vec<usize> {
            let m = bind(text).evaluate(&batch).unwrap();
            (0..m.len())
                .filter(|&r| m.is_valid(r) && m.value(r))
                .collect()
        };
        assert_eq!(sel("ts9 > '2024-01-01 00:00:00.0000005'"), want_gt, "{dt}");
        assert_eq!(
            sel("ts9 = '2024-01-01 00:00:00.0000005'"),
            Vec::<usize>::new(),
            "{dt}"
        );
        assert_eq!(
            sel("ts9 >= '2024-01-01 00:00:00.001'"),
            want_ge_milli,
            "{dt}"
        );
        assert_eq!(
            sel("ts9 = '2024-01-01'"),
            if unit == TimeUnit::Second {
                vec![0, 1]
            } else {
                vec![0]
            },
            "{dt}"
        );
        assert_eq!(sel("ts9 < '1970-01-01'"), vec![3], "{dt}");
        // Flooring before the epoch rounds towards minus infinity.
        assert_eq!(sel("ts9 < '1969-12-31 23:59:59.9999995'"), vec![3], "{dt}");
        assert_eq!(
            sel("ts9 >= '1969-12-31 23:59:59.9999995'"),
            vec![0, 1, 2, 4],
            "{dt}"
        );
    }
    // An INT column delivered as Int64 (e.g. before a cast), and a TINYINT literal clamp.
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("t", ArrowType::Int64, true)])),
        vec![Arc::new(Int64Array::from(vec![Some(1), Some(500), None]))],
    )
    .unwrap();
    let m = bind("t < 100").evaluate(&batch).unwrap();
    assert_eq!(
        m.iter().collect::<Vec<_>>(),
        vec![Some(true), Some(false), None]
    );
    // Time32 as Time32(Second) is floored exactly.
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new(
            "tm",
            ArrowType::Time32(TimeUnit::Second),
            true,
        )])),
        vec![Arc::new(arrow_array::Time32SecondArray::from(vec![10, 11]))],
    )
    .unwrap();
    let m = bind("tm > TIME '00:00:10.5'").evaluate(&batch).unwrap();
    assert_eq!(m.iter().collect::<Vec<_>>(), vec![Some(false), Some(true)]);
    // An unsupported pairing is an error, not a wrong answer.
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("i", ArrowType::Utf8, true)])),
        vec![Arc::new(StringArray::from(vec!["1"]))],
    )
    .unwrap();
    let e = bind("i = 1").evaluate(&batch).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
}

// ---------------------------------------------------------------------------------------
// pruning

fn cs(
    id: i32,
    kind: TypeKind,
    min: Option<Value>,
    max: Option<Value>,
    nulls: Option<i64>,
) -> ColumnStats {
    ColumnStats {
        field_id: id,
        data_type: DataType::nullable(kind),
        min,
        max,
        null_count: nulls,
    }
}

#[test]
fn stats_truth_table() {
    // `i` (id 2, INT) in [10, 20] with 1 null out of 10 rows.
    let i_stats = |min, max, nulls| vec![cs(2, TypeKind::Int, min, max, nulls)];
    let full = i_stats(Some(Value::Int(10)), Some(Value::Int(20)), Some(1));
    let cases: &[(&str, bool)] = &[
        ("i = 10", true),
        ("i = 20", true),
        ("i = 9", false),
        ("i = 21", false),
        ("i = 15.5", false),
        ("i <> 15", true),
        ("i < 10", false),
        ("i < 10.5", true),
        ("i <= 10", true),
        ("i <= 9.9", false),
        ("i > 20", false),
        ("i > 19.5", true),
        ("i >= 20", true),
        ("i >= 21", false),
        ("i IN (1, 2, 30)", false),
        ("i IN (1, 15)", true),
        ("i IN (NULL)", false),
        ("i IN (1, NULL)", false),
        ("i NOT IN (1)", true),
        ("i NOT IN (15, NULL)", false),
        ("i IS NULL", true),
        ("i IS NOT NULL", true),
        ("i = NULL", false),
        ("i = 1 OR i = 15", true),
        ("i = 1 OR i = 25", false),
        ("i = 15 AND i = 25", false),
        ("NOT i < 30", false),
        ("NOT i > 30", true),
        // other columns are unknown: may match
        ("b = 1", true),
        ("i = 1 OR b = 1", true),
        ("i = 1 AND b = 1", false),
    ];
    for (text, want) in cases {
        assert_eq!(bind(text).stats_may_match(10, &full), *want, "{text}");
    }
    // A single-valued column: `<>` and NOT IN can prune.
    let single = i_stats(Some(Value::Int(7)), Some(Value::Int(7)), Some(0));
    for (text, want) in [
        ("i <> 7", false),
        ("i <> 8", true),
        ("i NOT IN (6, 7)", false),
        ("i NOT IN (6)", true),
        ("i IS NULL", false),
        ("i IS NOT NULL", true),
        ("i = 7.5", false),
        ("i <> 7.5", true),
    ] {
        assert_eq!(bind(text).stats_may_match(10, &single), want, "{text}");
    }
    // All null.
    let all_null = i_stats(None, None, Some(10));
    for (text, want) in [
        ("i = 1", false),
        ("i <> 1", false),
        ("i IN (1)", false),
        ("i NOT IN (1)", false),
        ("i IS NULL", true),
        ("i IS NOT NULL", false),
        ("i <> 2.5", false),
        ("NOT i IS NULL", false),
    ] {
        assert_eq!(bind(text).stats_may_match(10, &all_null), want, "{text}");
    }
    // Unknown stats: only the always-unknown tests prune.
    for stats in [
        i_stats(None, None, None),
        i_stats(None, None, Some(1)),
        vec![],
    ] {
        for text in [
            "i = 1",
            "i > 100",
            "i IS NULL",
            "i IS NOT NULL",
            "i <> 15",
            "i NOT IN (1)",
        ] {
            assert!(bind(text).stats_may_match(10, &stats), "{text} {stats:?}");
        }
        assert!(!bind("i = NULL").stats_may_match(10, &stats));
        assert!(!bind("i NOT IN (1, NULL)").stats_may_match(10, &stats));
    }
    // One bound only: it prunes on its side.
    let min_only = i_stats(Some(Value::Int(10)), None, Some(1));
    let max_only = i_stats(None, Some(Value::Int(20)), Some(1));
    for (text, with_min, with_max) in [
        ("i = 1", false, true),
        ("i = 30", true, false),
        ("i < 10", false, true),
        ("i >= 21", true, false),
        ("i IN (1, 30)", true, true),
        ("i IN (1, 2)", false, true),
        ("i <> 10", true, true),
        ("i NOT IN (10)", true, true),
    ] {
        assert_eq!(
            bind(text).stats_may_match(10, &min_only),
            with_min,
            "{text} min only"
        );
        assert_eq!(
            bind(text).stats_may_match(10, &max_only),
            with_max,
            "{text} max only"
        );
    }
    // Null count unknown but bounds known: bounds still prune.
    let no_nulls_known = i_stats(Some(Value::Int(10)), Some(Value::Int(20)), None);
    assert!(!bind("i = 1").stats_may_match(10, &no_nulls_known));
    assert!(bind("i IS NULL").stats_may_match(10, &no_nulls_known));
}

#[test]
fn stats_of_an_evolved_column_are_not_trusted() {
    // The file wrote field 3 (`b`, now BIGINT) as INT: stats of another type are ignored.
    let old_type = vec![cs(
        3,
        TypeKind::Int,
        Some(Value::Int(1)),
        Some(Value::Int(2)),
        Some(0),
    )];
    assert!(bind("b > 100").stats_may_match(5, &old_type));
    let same = vec![cs(
        3,
        TypeKind::BigInt,
        Some(Value::BigInt(1)),
        Some(Value::BigInt(2)),
        Some(0),
    )];
    assert!(!bind("b > 100").stats_may_match(5, &same));
    // Another field id (a dropped and re-added column of the same name): ignored.
    let other_id = vec![cs(
        99,
        TypeKind::BigInt,
        Some(Value::BigInt(1)),
        Some(Value::BigInt(2)),
        Some(0),
    )];
    assert!(bind("b > 100").stats_may_match(5, &other_id));
    // Nullability differences do not matter.
    let mut not_null = same.clone();
    not_null[0].data_type = DataType::not_null(TypeKind::BigInt);
    assert!(!bind("b > 100").stats_may_match(5, &not_null));
    // A renamed column keeps its id: the stats still apply.
    let renamed = vec![DataField {
        name: "renamed".into(),
        ..field(3, "b", TypeKind::BigInt)
    }];
    let p = Predicate::parse("renamed > 100")
        .unwrap()
        .bind(&renamed)
        .unwrap();
    assert!(!p.stats_may_match(5, &same));
}

#[test]
fn never_pruned_types() {
    let t = |v: &str| Some(Value::Timestamp(ts(v)));
    // TIMESTAMP(9) with a max truncated to microseconds below the true max.
    let ts9 = vec![cs(
        15,
        TypeKind::Timestamp { precision: 9 },
        t("2024-01-01 00:00:00"),
        t("2024-01-01 00:00:00.000001"),
        Some(0),
    )];
    assert!(bind("ts9 > '2024-01-01 00:00:00.0000015'").stats_may_match(3, &ts9));
    assert!(bind("ts9 = '2030-01-01'").stats_may_match(3, &ts9));
    assert!(!bind("ts9 IS NULL").stats_may_match(3, &ts9));
    // TIMESTAMP(6) is fine.
    let ts6 = vec![cs(
        14,
        TypeKind::Timestamp { precision: 6 },
        t("2024-01-01 00:00:00"),
        t("2024-01-01 00:00:00.000001"),
        Some(0),
    )];
    assert!(!bind("ts6 > '2024-01-01 00:00:00.0000015'").stats_may_match(3, &ts6));
    // BLOB: null counts are wrong in `.blob` files.
    let blob = vec![cs(18, TypeKind::Blob, None, None, Some(0))];
    assert!(bind("blob IS NULL").stats_may_match(3, &blob));
    // Doubles: upper-bound tests and zero literals never prune; NaN bounds never prune.
    let d = |min: f64, max: f64| {
        vec![cs(
            5,
            TypeKind::Double,
            Some(Value::Double(min)),
            Some(Value::Double(max)),
            Some(0),
        )]
    };
    let bounds = d(1.0, 2.0);
    for (text, want) in [
        ("d = 5", false),
        ("d < 0.5", false),
        ("d <= 0.5", false),
        ("d IN (5, 6)", false),
        ("d > 5", true),
        ("d >= 5", true),
        ("d <> 1.5", true),
        ("d NOT IN (1.5)", true),
        ("d = 0", true),
        ("d < 0", true),
        ("d = 'NaN'", true),
        ("d IN (5, 0)", true),
    ] {
        assert_eq!(bind(text).stats_may_match(3, &bounds), want, "{text}");
    }
    // pyarrow skips NaN: a file with {2.0, NaN} reports [2.0, 2.0].
    assert!(bind("d NOT IN (2)").stats_may_match(3, &d(2.0, 2.0)));
    assert!(bind("d <> 2").stats_may_match(3, &d(2.0, 2.0)));
    assert!(bind("d > 2").stats_may_match(3, &d(2.0, 2.0)));
    assert!(bind("d = 5").stats_may_match(3, &d(f64::NAN, 2.0)));
    assert!(bind("d < -1").stats_may_match(3, &d(0.0, 2.0)));
    assert!(bind("d < -1").stats_may_match(3, &d(-0.0, 2.0)));
}

#[test]
fn truncated_string_stats_are_safe() {
    // Java truncate(4): min 'abcd' (prefix of 'abcdzz'), max 'abcf' (prefix 'abce' + 1).
    let s = |x: &str| Some(Value::String(x.to_string()));
    let stats = vec![cs(
        7,
        TypeKind::VarChar { length: 100 },
        s("abcd"),
        s("abcf"),
        Some(0),
    )];
    for (text, want) in [
        ("str = 'abcdzz'", true),
        ("str = 'abcezzz'", true),
        ("str > 'abcezzz'", true),
        ("str >= 'abcf'", true),
        ("str > 'abcf'", false),
        ("str < 'abcd'", false),
        ("str <= 'abcd'", true),
        ("str = 'abc'", false),
        ("str <> 'abcd'", true),
    ] {
        assert_eq!(bind(text).stats_may_match(2, &stats), want, "{text}");
    }
}

// ---------------------------------------------------------------------------------------
// partitions

#[test]
fn partition_pruning() {
    let fields = vec![
        field(
            0,
            "dt",
            TypeKind::VarChar {
                length: 2_147_483_647,
            },
        ),
        field(1, "hr", TypeKind::Int),
        field(2, "v", TypeKind::Double),
    ];
    let parts = &fields[..2];
    let p = Predicate::parse("dt = '20240514' AND hr >= 12 AND v > 1.5")
        .unwrap()
        .bind(&fields)
        .unwrap();
    let part = |dt: Option<&str>, hr: Option<i32>| -> Vec<Datum> {
        vec![
            dt.map_or(Datum::Null, |s| Datum::String(s.into())),
            hr.map_or(Datum::Null, Datum::Int),
        ]
    };
    assert!(p.partition_may_match(&part(Some("20240514"), Some(12)), parts));
    assert!(!p.partition_may_match(&part(Some("20240514"), Some(11)), parts));
    assert!(!p.partition_may_match(&part(Some("20240515"), Some(12)), parts));
    assert!(!p.partition_may_match(&part(None, Some(12)), parts));
    // The extracted partition predicate gives the same answers.
    let pp = p.partition_predicate(parts).unwrap();
    assert_eq!(pp.to_string(), "(dt = '20240514' AND hr >= 12)");
    assert_eq!(pp.referenced_columns(), vec!["dt", "hr"]);
    assert!(pp.partition_may_match(&part(Some("20240514"), Some(23)), parts));
    assert!(!pp.partition_may_match(&part(Some("20240514"), None), parts));
    // OR across partition and value columns is not a partition conjunct, but still safe.
    let mixed = Predicate::parse("hr = 1 OR v > 1.5")
        .unwrap()
        .bind(&fields)
        .unwrap();
    assert!(mixed.partition_predicate(parts).is_none());
    assert!(mixed.partition_may_match(&part(Some("x"), Some(2)), parts));
    let ors = Predicate::parse("hr = 1 OR hr IS NULL OR dt IN ('a', 'b')")
        .unwrap()
        .bind(&fields)
        .unwrap();
    assert!(ors.partition_may_match(&part(Some("z"), None), parts));
    assert!(ors.partition_may_match(&part(Some("b"), Some(5)), parts));
    assert!(!ors.partition_may_match(&part(Some("c"), Some(5)), parts));
    // Null partition values follow three-valued logic.
    let not_eq = Predicate::parse("NOT hr = 1")
        .unwrap()
        .bind(&fields)
        .unwrap();
    assert!(!not_eq.partition_may_match(&part(Some("a"), None), parts));
    assert!(not_eq.partition_may_match(&part(Some("a"), Some(2)), parts));
    // A value of an unexpected variant cannot be judged: keep the partition.
    assert!(p.partition_may_match(&[Datum::BigInt(1), Datum::Int(12)], parts));
    assert!(p.partition_may_match(&[Datum::Array(vec![]), Datum::Int(12)], parts));
    assert!(p.partition_values_may_match(&[Some(Value::BigInt(1)), Some(Value::Int(12))], parts));
    // A partition field with a different type than the read schema: keep.
    let changed = vec![field(0, "dt", TypeKind::Int), field(1, "hr", TypeKind::Int)];
    assert!(p.partition_may_match(&[Datum::Int(1), Datum::Int(12)], &changed));
    // A `_PARTITION` row, golden bytes from spec/table-layout.md §6: ('20240514', 12).
    let row = BinaryRow::from_serialized(
        &crate::util::unhex(
            "00000002000000000000000008000000180000000c000000000000003230323430353134",
        )
        .unwrap(),
        "test",
    )
    .unwrap();
    assert!(p.partition_row_may_match(&row, parts).unwrap());
    let hr_13 = Predicate::parse("hr = 13").unwrap().bind(&fields).unwrap();
    assert!(!hr_13.partition_row_may_match(&row, parts).unwrap());
    // A row that does not decode with the keys is an error, not a guess.
    assert!(p.partition_row_may_match(&row, &fields).is_err());
    // Java splitAnd semantics.
    assert_eq!(p.split_and().len(), 3);
    assert_eq!(BoundPredicate::and_all(p.split_and()).unwrap(), p);
    assert!(p.conjuncts_on(&[5]).is_none());
}

// ---------------------------------------------------------------------------------------
// property: stats pruning never drops a file with a matching row

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

fn prop_fields() -> Vec<DataField> {
    vec![
        field(0, "i", TypeKind::Int),
        field(1, "b", TypeKind::BigInt),
        field(2, "d", TypeKind::Double),
        field(
            3,
            "dec",
            TypeKind::Decimal {
                precision: 5,
                scale: 1,
            },
        ),
        field(4, "s", TypeKind::VarChar { length: 10 }),
        field(5, "dt", TypeKind::Date),
        field(6, "ts", TypeKind::Timestamp { precision: 3 }),
        field(7, "flag", TypeKind::Boolean),
        field(8, "t", TypeKind::TinyInt),
    ]
}

fn random_value(rng: &mut Rng, kind: &TypeKind) -> Option<Value> {
    if rng.below(5) == 0 {
        return None;
    }
    let small = rng.below(9) as i64 - 4;
    Some(match kind {
        TypeKind::Int => Value::Int(small as i32),
        TypeKind::BigInt => Value::BigInt(small * 1_000_000_000_000),
        TypeKind::TinyInt => Value::TinyInt(*rng.pick(&[-128i8, -1, 0, 1, 126, 127])),
        TypeKind::Double => Value::Double(*rng.pick(&[
            -1.5,
            -0.0,
            0.0,
            0.25,
            2.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ])),
        TypeKind::Decimal { .. } => Value::Decimal(i128::from(small) * 7),
        TypeKind::VarChar { .. } => Value::String(
            rng.pick(&["", "a", "ab", "abc", "abd", "b", "ba", "é", "zz"])
                .to_string(),
        ),
        TypeKind::Date => Value::Date(small as i32),
        TypeKind::Timestamp { .. } => Value::Timestamp(Timestamp {
            millis: small * 500,
            nanos_of_milli: 0,
        }),
        TypeKind::Boolean => Value::Boolean(rng.below(2) == 0),
        other => panic!("{other:?}"),
    })
}

fn random_literal(rng: &mut Rng, kind: &TypeKind) -> String {
    if rng.below(12) == 0 {
        return "NULL".into();
    }
    let n = rng.below(11) as i64 - 5;
    let half = if rng.below(3) == 0 { ".5" } else { "" };
    match kind {
        TypeKind::Int | TypeKind::Decimal { .. } => format!("{n}{half}"),
        TypeKind::BigInt => format!("{}{half}", n * 1_000_000_000_000),
        TypeKind::TinyInt => rng
            .pick(&["-129", "-128", "-1", "0", "0.5", "126.5", "127", "200"])
            .to_string(),
        TypeKind::Double => rng
            .pick(&[
                "-1.5",
                "0",
                "-0.0",
                "0.25",
                "1",
                "2",
                "3",
                "'NaN'",
                "'Infinity'",
                "-1e300",
            ])
            .to_string(),
        TypeKind::VarChar { .. } => format!(
            "'{}'",
            rng.pick(&["", "a", "ab", "abc", "abcd", "b", "c", "é", "zz", "zzz"])
        ),
        TypeKind::Date => format!("DATE '1970-01-0{}'", 1 + rng.below(5)),
        TypeKind::Timestamp { .. } => format!(
            "TIMESTAMP '1970-01-01 00:00:0{}.{}'",
            rng.below(3),
            rng.pick(&["0", "5", "25", "0005"])
        ),
        TypeKind::Boolean => rng.pick(&["TRUE", "FALSE"]).to_string(),
        other => panic!("{other:?}"),
    }
}

fn random_predicate(rng: &mut Rng, fields: &[DataField], depth: u32) -> String {
    let r = if depth == 0 { 0 } else { rng.below(6) };
    match r {
        0..=2 => {
            let f = rng.pick(fields);
            let lit = |rng: &mut Rng| random_literal(rng, &f.data_type.kind);
            match rng.below(9) {
                0 => format!("{} IS NULL", f.name),
                1 => format!("{} IS NOT NULL", f.name),
                2 => {
                    let n = 1 + rng.below(3);
                    let items: Vec<String> = (0..n).map(|_| lit(rng)).collect();
                    let not = if rng.below(2) == 0 { "NOT " } else { "" };
                    format!("{} {not}IN ({})", f.name, items.join(", "))
                }
                _ => format!(
                    "{} {} {}",
                    f.name,
                    rng.pick(&["=", "<>", "<", "<=", ">", ">="]),
                    lit(rng)
                ),
            }
        }
        3 => format!(
            "({} AND {})",
            random_predicate(rng, fields, depth - 1),
            random_predicate(rng, fields, depth - 1)
        ),
        4 => format!(
            "({} OR {})",
            random_predicate(rng, fields, depth - 1),
            random_predicate(rng, fields, depth - 1)
        ),
        _ => format!("NOT {}", random_predicate(rng, fields, depth - 1)),
    }
}

/// Stats like pyarrow computes them: NaN skipped; and with random signs of zero bounds.
fn writer_stats(table: &Table, rng: &mut Rng) -> Vec<ColumnStats> {
    let mut stats = table.stats();
    for (c, s) in stats.iter_mut().enumerate() {
        if !matches!(s.data_type.kind, TypeKind::Double) {
            continue;
        }
        let vals: Vec<f64> = table
            .rows
            .iter()
            .filter_map(|r| match &r[c] {
                Some(Value::Double(x)) if !x.is_nan() => Some(*x),
                _ => None,
            })
            .collect();
        let flip = |x: f64, rng: &mut Rng| {
            if x == 0.0 && rng.below(2) == 0 { -x } else { x }
        };
        s.min = vals
            .iter()
            .copied()
            .reduce(f64::min)
            .map(|x| Value::Double(flip(x, rng)));
        s.max = vals
            .iter()
            .copied()
            .reduce(f64::max)
            .map(|x| Value::Double(flip(x, rng)));
    }
    for s in stats.iter_mut() {
        // Java `truncate(1)` on strings: min a prefix, max a prefix with its last code point
        // incremented (or no max when that is impossible).
        if let Some(Value::String(m)) = &s.min {
            s.min = Some(Value::String(m.chars().take(1).collect()));
        }
        if let Some(Value::String(m)) = &s.max
            && m.chars().count() > 1
        {
            let first = m.chars().next().unwrap();
            s.max = char::from_u32(first as u32 + 1).map(|c| Value::String(c.to_string()));
        }
        // Some writers drop a bound.
        match rng.below(8) {
            0 => s.min = None,
            1 => s.max = None,
            _ => {}
        }
    }
    stats
}

#[test]
fn property_cannot_match_implies_no_selected_row() {
    let fields = prop_fields();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut pruned, mut checked) = (0, 0);
    for _ in 0..600 {
        let n_rows = 1 + rng.below(4) as usize;
        let rows: Vec<Vec<Option<Value>>> = (0..n_rows)
            .map(|_| {
                fields
                    .iter()
                    .map(|f| random_value(&mut rng, &f.data_type.kind))
                    .collect()
            })
            .collect();
        let table = Table {
            fields: fields.clone(),
            rows,
        };
        let stats_exact = table.stats();
        let stats_writer = writer_stats(&table, &mut rng);
        for _ in 0..40 {
            let text = random_predicate(&mut rng, &fields, 2);
            let p = Predicate::parse(&text)
                .unwrap_or_else(|e| panic!("{text}: {e}"))
                .bind(&fields)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            let selected = table.selected(&p);
            checked += 1;
            for stats in [&stats_exact, &stats_writer] {
                if !p.stats_may_match(n_rows as i64, stats) {
                    pruned += 1;
                    assert!(
                        selected.is_empty(),
                        "pruned but rows {selected:?} match {text} (bound {p}); rows {:?}; stats {stats:?}",
                        table.rows
                    );
                }
            }
            // A one-row table is a partition: pruning on its exact values is exact.
            if n_rows == 1 {
                let may = p.partition_values_may_match(&table.rows[0], &fields);
                assert_eq!(may, !selected.is_empty(), "{text} on {:?}", table.rows[0]);
            }
        }
    }
    eprintln!("pruned {pruned} of {checked}");
    // The test exercises pruning, not only "may match".
    assert!(pruned > checked / 10, "pruned {pruned} of {checked}");
}

// ---------------------------------------------------------------------------------------
// statistics from manifest records

#[test]
fn column_stats_from_simple_stats() {
    let fields = vec![
        field(0, "i", TypeKind::Int),
        field(
            1,
            "s",
            TypeKind::VarChar {
                length: 2_147_483_647,
            },
        ),
        field(2, "ts9", TypeKind::Timestamp { precision: 9 }),
    ];
    let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
    let min = BinaryRow::encode(
        &[
            Datum::Int(3),
            Datum::String("a long string value".into()),
            Datum::Timestamp {
                millis: 1000,
                nanos_of_milli: 5,
            },
        ],
        &types,
    )
    .unwrap();
    let max = BinaryRow::encode(&[Datum::Int(9), Datum::Null, Datum::Null], &types).unwrap();
    let stats = crate::spec::SimpleStats {
        min_values: min,
        max_values: max,
        null_counts: vec![Some(0), Some(2), None].into(),
    };
    let cols = ColumnStats::from_simple_stats(&stats, &fields);
    assert_eq!(
        cols,
        vec![
            cs(
                0,
                TypeKind::Int,
                Some(Value::Int(3)),
                Some(Value::Int(9)),
                Some(0)
            ),
            cs(
                1,
                TypeKind::VarChar {
                    length: 2_147_483_647
                },
                Some(Value::String("a long string value".into())),
                None,
                Some(2)
            ),
            cs(
                2,
                TypeKind::Timestamp { precision: 9 },
                Some(Value::Timestamp(Timestamp {
                    millis: 1000,
                    nanos_of_milli: 5
                })),
                None,
                None
            ),
        ]
    );
    let p = Predicate::parse("i > 9 OR s < 'a'")
        .unwrap()
        .bind(&fields)
        .unwrap();
    assert!(!p.stats_may_match(10, &cols));
    let p = Predicate::parse("i >= 9 OR s < 'a'")
        .unwrap()
        .bind(&fields)
        .unwrap();
    assert!(p.stats_may_match(10, &cols));
    // Arity mismatch (e.g. empty stats of a pypaimon file): no statistics at all.
    assert!(ColumnStats::from_simple_stats(&crate::spec::SimpleStats::empty(), &fields).is_empty());
    assert!(ColumnStats::from_simple_stats(&crate::spec::SimpleStats::empty(), &[]).is_empty());
}

#[test]
fn value_stats_fields_follow_write_cols_and_stats_cols() {
    let schema_fields = vec![
        field(0, "a", TypeKind::Int),
        field(1, "b", TypeKind::BigInt),
        field(2, "c", TypeKind::VarChar { length: 10 }),
    ];
    let mut file = crate::spec::DataFileMeta {
        file_name: "data-0.parquet".into(),
        file_size: 1,
        row_count: 1,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: crate::spec::SimpleStats::empty(),
        value_stats: crate::spec::SimpleStats::empty(),
        min_sequence_number: 0,
        max_sequence_number: 0,
        schema_id: 0,
        level: 0,
        extra_files: vec![],
        creation_time_millis: None,
        delete_row_count: None,
        embedded_index: None,
        file_source: None,
        value_stats_cols: None,
        external_path: None,
        first_row_id: None,
        write_cols: None,
        write_cols_sequences: None,
    };
    let ids = |f: Option<Vec<DataField>>| f.map(|v| v.iter().map(|f| f.id).collect::<Vec<_>>());
    assert_eq!(
        ids(value_stats_fields(&file, &schema_fields)),
        Some(vec![0, 1, 2])
    );
    file.write_cols = Some(vec!["c".into(), "a".into()]);
    assert_eq!(
        ids(value_stats_fields(&file, &schema_fields)),
        Some(vec![2, 0])
    );
    file.value_stats_cols = Some(vec!["a".into()]);
    assert_eq!(
        ids(value_stats_fields(&file, &schema_fields)),
        Some(vec![0])
    );
    file.value_stats_cols = Some(vec![]);
    assert_eq!(ids(value_stats_fields(&file, &schema_fields)), Some(vec![]));
    // A stats column outside the written columns cannot be interpreted.
    file.value_stats_cols = Some(vec!["b".into()]);
    assert_eq!(ids(value_stats_fields(&file, &schema_fields)), None);
    // A row-tracking compaction output: every field, then `_ROW_ID` and `_SEQUENCE_NUMBER`.
    file.value_stats_cols = None;
    file.write_cols = Some(
        ["a", "b", "c", "_ROW_ID", "_SEQUENCE_NUMBER"]
            .map(String::from)
            .to_vec(),
    );
    assert_eq!(
        ids(value_stats_fields(&file, &schema_fields)),
        Some(vec![0, 1, 2, i32::MAX - 5, i32::MAX - 1])
    );
}
