//! Row filtering on every atomic type as the reader delivers it (Parquet, ORC, Avro): literals
//! written from the corpus's expected values select exactly the rows holding that value, and
//! `<` / `>=` split the non-null rows around it.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use paimon_kernel::io::{Io, Machine};
use paimon_kernel::predicate::Predicate;
use paimon_kernel::read::{ReadContext, read_splits};
use paimon_kernel::scan::{Plan, ScanRequest, plan_scan};
use paimon_kernel::spec::{DataField, TypeKind};
use serde_json::Value;

use crate::canonical::render_batch;
use crate::common::load_table;

fn read_all(table: &str) -> (Plan, Vec<RecordBatch>) {
    let mut store = load_table(table);
    let request = ScanRequest::default();
    let plan_machine: Machine<Plan> = Machine::once("plan", move |io: Io<Plan>| async move {
        plan_scan(&io, &request).await
    });
    let plan = store.run(plan_machine).unwrap().remove(0);
    let ctx = ReadContext::try_new(&plan, None, None, None, 0).unwrap();
    let batches = store
        .run(read_splits(Arc::new(ctx), plan.splits.clone()))
        .unwrap();
    (plan, batches)
}

/// The filter literal for a canonical value of `field` (None for nested types).
fn literal(field: &DataField, v: &Value) -> Option<String> {
    let s = |v: &Value| v.as_str().map(str::to_owned);
    let quote = |x: &str| format!("'{}'", x.replace('\'', "''"));
    Some(match &field.data_type.kind {
        TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::BigInt => v.to_string(),
        TypeKind::Float | TypeKind::Double => match v {
            Value::String(x) => quote(x),
            other => other.to_string(),
        },
        TypeKind::Decimal { .. } => s(v)?,
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => quote(&s(v)?),
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => format!("X'{}'", s(v)?),
        TypeKind::Boolean => v.to_string().to_uppercase(),
        TypeKind::Date => format!("DATE '{}'", s(v)?),
        TypeKind::Time { .. } => format!("TIME '{}'", s(v)?),
        TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. } => format!(
            "TIMESTAMP '{}'",
            s(v)?.trim_end_matches('Z').replace('T', " ")
        ),
        _ => return None,
    })
}

/// A literal strictly between the canonical value `v` and the next value the column can hold
/// (or the previous one): `(literal, above)`. `None` where no such literal is written here.
fn off_grid(field: &DataField, v: &Value) -> Option<(String, bool)> {
    let s = v.as_str();
    match &field.data_type.kind {
        TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::BigInt => {
            let n = v.as_i64()?;
            Some((format!("{n}.5"), n >= 0))
        }
        TypeKind::Decimal { .. } => {
            let s = s?;
            let lit = if s.contains('.') {
                format!("{s}5")
            } else {
                format!("{s}.5")
            };
            Some((lit, !s.starts_with('-')))
        }
        TypeKind::Date => Some((format!("TIMESTAMP '{} 00:00:00.5'", s?), true)),
        TypeKind::Time { .. } => Some((format!("TIME '{}5'", s?), true)),
        TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision }
            if *precision < 9 =>
        {
            // 9 fraction digits, the last ones zero below the column's precision: + 1 ns.
            let t = s?.trim_end_matches('Z').replace('T', " ");
            let t = format!("{}1", t.strip_suffix('0')?);
            Some((format!("TIMESTAMP '{t}'"), true))
        }
        _ => None,
    }
}

/// Text of a canonical value (`-0.0` and `0.0` differ, unlike `Value` equality).
fn canonical_text(v: &Value) -> String {
    v.to_string()
}

fn selected(batches: &[RecordBatch], fields: &[DataField], filter: &str) -> Vec<usize> {
    let bound = Predicate::parse(filter)
        .unwrap_or_else(|e| panic!("{filter}: {e}"))
        .bind(fields)
        .unwrap_or_else(|e| panic!("{filter}: {e}"));
    let mut out = Vec::new();
    let mut base = 0;
    for b in batches {
        let mask = bound
            .evaluate(b)
            .unwrap_or_else(|e| panic!("{filter}: {e}"));
        for r in 0..mask.len() {
            if mask.is_valid(r) && mask.value(r) {
                out.push(base + r);
            }
        }
        base += b.num_rows();
    }
    out
}

#[test]
fn every_atomic_type_filters_rows_as_read() {
    let (mut checked, mut off_grid_checked) = (0, 0);
    for table in ["all_types_parquet", "all_types_orc", "all_types_avro"] {
        let (plan, batches) = read_all(table);
        let rows: Vec<Value> = batches.iter().flat_map(render_batch).collect();
        assert!(rows.len() >= 5, "{table}");
        for field in &plan.schema.fields {
            let column: Vec<&Value> = rows.iter().map(|r| &r[&field.name]).collect();
            let name = format!("`{}`", field.name);
            let non_null: Vec<usize> = (0..rows.len()).filter(|&r| !column[r].is_null()).collect();
            let nulls: Vec<usize> = (0..rows.len()).filter(|&r| column[r].is_null()).collect();
            assert_eq!(
                selected(&batches, &plan.schema.fields, &format!("{name} IS NULL")),
                nulls
            );
            for &r in &non_null {
                let Some(lit) = literal(field, column[r]) else {
                    continue;
                };
                // Canonical text equality (keeps -0.0 apart from 0.0, NaN equal to NaN).
                let same: Vec<usize> = non_null
                    .iter()
                    .copied()
                    .filter(|&o| canonical_text(column[o]) == canonical_text(column[r]))
                    .collect();
                let others: Vec<usize> = non_null
                    .iter()
                    .copied()
                    .filter(|o| !same.contains(o))
                    .collect();
                let sel =
                    |op: &str| selected(&batches, &plan.schema.fields, &format!("{name} {op}"));
                assert_eq!(sel(&format!("= {lit}")), same, "{table}: {name} = {lit}");
                assert_eq!(
                    sel(&format!("IN ({lit}, NULL)")),
                    same,
                    "{table}: {name} IN {lit}"
                );
                assert_eq!(
                    sel(&format!("<> {lit}")),
                    others,
                    "{table}: {name} <> {lit}"
                );
                let lt = sel(&format!("< {lit}"));
                let ge = sel(&format!(">= {lit}"));
                assert!(
                    same.iter().all(|o| ge.contains(o) && !lt.contains(o)),
                    "{table}: {name} {lit}"
                );
                let mut split = [lt.clone(), ge.clone()].concat();
                split.sort_unstable();
                assert_eq!(split, non_null, "{table}: {name} < / >= {lit}");
                assert_eq!(
                    sel(&format!("BETWEEN {lit} AND {lit}")),
                    same,
                    "{table}: {name} BETWEEN {lit}"
                );
                if let Some((e, above)) = off_grid(field, column[r]) {
                    let gt: Vec<usize> = ge.iter().copied().filter(|o| !same.contains(o)).collect();
                    let mut le = [lt.clone(), same.clone()].concat();
                    le.sort_unstable();
                    let (want_lt, want_ge) = if above { (&le, &gt) } else { (&lt, &ge) };
                    let ctx = format!("{table}: {name} vs {e}");
                    assert_eq!(sel(&format!("= {e}")), Vec::<usize>::new(), "{ctx}");
                    assert_eq!(&sel(&format!("< {e}")), want_lt, "{ctx}");
                    assert_eq!(&sel(&format!("<= {e}")), want_lt, "{ctx}");
                    assert_eq!(&sel(&format!("> {e}")), want_ge, "{ctx}");
                    assert_eq!(&sel(&format!(">= {e}")), want_ge, "{ctx}");
                    assert_eq!(&sel(&format!("<> {e}")), &non_null, "{ctx}");
                    off_grid_checked += 1;
                }
                checked += 1;
            }
        }
    }
    eprintln!("{checked} literal checks, {off_grid_checked} off-grid");
    assert!(checked >= 300, "{checked} literal checks");
    assert!(
        off_grid_checked >= 150,
        "{off_grid_checked} off-grid checks"
    );
}
