//! Reading rows: every read of every corpus table (latest, earlier snapshots, tags,
//! projections) returns the expected rows, compared as parsed values after sorting.

use std::sync::Arc;

use arrow_array::RecordBatch;
use paimon_kernel::io::{Io, Machine, MemoryStore};
use paimon_kernel::predicate::Predicate;
use paimon_kernel::read::{ReadContext, read_splits};
use paimon_kernel::scan::{Plan, ScanRequest, plan_scan};
use serde_json::Value;

use crate::canonical::render_batch;
use crate::common::{corpus_tables, expected, load_table};

/// Plan and read `table` with `options` and `projection`; rows rendered canonically.
pub fn read_rows(
    store: &mut MemoryStore,
    options: &serde_json::Map<String, Value>,
    projection: Option<Vec<String>>,
    batch_size: usize,
) -> paimon_kernel::Result<Vec<Value>> {
    read_filtered(store, options, projection, None, batch_size).map(|(rows, _)| rows)
}

/// As [`read_rows`] with a filter; also returns the number of planned data files.
pub fn read_filtered(
    store: &mut MemoryStore,
    options: &serde_json::Map<String, Value>,
    projection: Option<Vec<String>>,
    filter: Option<&str>,
    batch_size: usize,
) -> paimon_kernel::Result<(Vec<Value>, usize)> {
    let mut request = ScanRequest::default();
    for (k, v) in options {
        request = request.with_option(k, v.as_str().unwrap());
    }
    let filter = filter.map(Predicate::parse).transpose()?;
    if let Some(f) = &filter {
        request = request.with_filter(f.clone());
    }
    let plan_machine: Machine<Plan> = Machine::once("plan", move |io: Io<Plan>| async move {
        plan_scan(&io, &request).await
    });
    let plan = store.run(plan_machine)?.remove(0);
    let files = plan.splits.iter().map(|s| s.data_files.len()).sum();
    let ctx = ReadContext::try_new(
        &plan,
        projection.as_deref(),
        filter.as_ref(),
        None,
        batch_size,
    )?;
    let batches: Vec<RecordBatch> = store.run(read_splits(Arc::new(ctx), plan.splits.clone()))?;
    Ok((batches.iter().flat_map(render_batch).collect(), files))
}

fn sorted(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    v.sort();
    v
}

/// Compare one read; `Err` with a readable diff.
fn check(table: &str, label: &str, got: &[Value], want: &[Value]) -> Result<(), String> {
    let (g, w) = (sorted(got), sorted(want));
    if g == w {
        return Ok(());
    }
    let missing: Vec<&String> = w.iter().filter(|r| !g.contains(r)).take(3).collect();
    let extra: Vec<&String> = g.iter().filter(|r| !w.contains(r)).take(3).collect();
    Err(format!(
        "{table} [{label}]: got {} rows, want {}\n  missing: {missing:#?}\n  unexpected: {extra:#?}",
        g.len(),
        w.len()
    ))
}

/// Reads not supported yet: `conformance/pending-reads.txt` (`<table prefix><TAB><reason>`
/// lines), shared with the CLI harness `conformance/tests/corpus_scan.rs`. Everything else must
/// match; trim the list as support lands (a pending read that passes is reported in the test
/// output).
fn pending(table: &str) -> Option<String> {
    let path = crate::common::corpus_root().join("../pending-reads.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .find(|(prefix, _)| table.starts_with(prefix.trim()))
        .map(|(_, why)| why.trim().to_string())
}

#[test]
fn every_read_of_every_corpus_table_returns_the_expected_rows() {
    let mut failures = Vec::new();
    let mut pending_failures = 0;
    let mut reads = 0;
    for table in corpus_tables() {
        let exp = expected(&table);
        let mut store = load_table(&table);
        let mut cases = vec![(
            "latest".to_string(),
            serde_json::Map::new(),
            None,
            exp["rows"].as_array().unwrap().clone(),
        )];
        for r in exp["additional_reads"].as_array().unwrap() {
            let projection = r["projection"].as_array().map(|p| {
                p.iter()
                    .map(|c| c.as_str().unwrap().to_string())
                    .collect::<Vec<_>>()
            });
            cases.push((
                r["label"].as_str().unwrap().to_string(),
                r["options"].as_object().unwrap().clone(),
                projection,
                r["rows"].as_array().unwrap().clone(),
            ));
        }
        for (label, options, projection, want) in cases {
            reads += 1;
            let outcome = match read_rows(&mut store, &options, projection, 0) {
                Ok(got) => check(&table, &label, &got, &want),
                Err(e) => Err(format!("{table} [{label}]: error: {e}")),
            };
            match (outcome, pending(&table)) {
                (Ok(()), Some(_)) => println!("pending read now passes: {table} [{label}]"),
                (Ok(()), None) => {}
                (Err(e), Some(why)) => {
                    pending_failures += 1;
                    println!("pending ({why}): {e}");
                }
                (Err(e), None) => failures.push(e),
            }
        }
    }
    println!(
        "{reads} reads, {pending_failures} pending, {} failed",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {reads} reads failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn batch_size_does_not_change_primary_key_results() {
    for table in [
        "pk_dedup",
        "pk_partial_update",
        "pk_aggregation",
        "pk_dedup_seqfield",
    ] {
        let exp = expected(table);
        let want = exp["rows"].as_array().unwrap().clone();
        let mut store = load_table(table);
        for batch_size in [1, 2, 3, 7] {
            let got = read_rows(&mut store, &serde_json::Map::new(), None, batch_size).unwrap();
            check(table, &format!("batch size {batch_size}"), &got, &want).unwrap();
        }
    }
}

/// A filtered read returns exactly the rows of the unfiltered read that satisfy the filter
/// (evaluated here on the canonical rows), and partition filters prune files.
#[test]
fn filters_prune_safely_and_apply_to_rows() {
    type Keep = fn(&Value) -> bool;
    let cases: &[(&str, &str, Keep)] = &[
        ("append_partitioned", "region = 'eu'", |r| {
            r["region"] == "eu"
        }),
        ("append_partitioned", "region IS NULL OR yr > 2023", |r| {
            r["region"].is_null() || r["yr"].as_i64().is_some_and(|y| y > 2023)
        }),
        ("pk_dedup", "k IN (1, 2, 3) AND NOT k = 2", |r| {
            matches!(r["k"].as_i64(), Some(1 | 3))
        }),
        ("pk_dedup", "val > 0", |r| {
            r["val"].as_f64().is_some_and(|v| v > 0.0)
        }),
        ("pk_dedup_partitioned", "dt = '2024-01-02'", |r| {
            r["dt"] == "2024-01-02"
        }),
        ("append_parquet", "id >= 5 AND id < 9", |r| {
            r["id"].as_i64().is_some_and(|v| (5..9).contains(&v))
        }),
    ];
    for (table, filter, keep) in cases {
        let mut store = load_table(table);
        let empty = serde_json::Map::new();
        let (all, all_files) = read_filtered(&mut store, &empty, None, None, 0).unwrap();
        let (got, files) = read_filtered(&mut store, &empty, None, Some(filter), 0).unwrap();
        let want: Vec<Value> = all.into_iter().filter(keep).collect();
        assert!(
            !want.is_empty(),
            "{table} {filter}: the case selects nothing"
        );
        check(table, filter, &got, &want).unwrap();
        assert!(files <= all_files);
        if filter.starts_with("region = ") || filter.starts_with("dt = ") {
            assert!(
                files < all_files,
                "{table} {filter}: partition filter pruned nothing"
            );
        }
    }
}

/// A primary-key merge opens its sorted runs together: the data files of a section are
/// requested in one IO round (their footers, which hold these small files whole), not one
/// round per file before the first merged row comes out.
#[test]
fn a_primary_key_merge_opens_its_runs_in_one_round() {
    use paimon_kernel::io::Step;
    use paimon_kernel::read::read_split;
    let mut store = load_table("pk_dedup");
    let plan_machine: Machine<Plan> = Machine::once("plan", |io: Io<Plan>| async move {
        plan_scan(&io, &ScanRequest::default()).await
    });
    let plan = store.run(plan_machine).unwrap().remove(0);
    let ctx = Arc::new(ReadContext::try_new(&plan, None, None, None, 0).unwrap());
    let split = plan
        .splits
        .iter()
        .max_by_key(|s| s.data_files.len())
        .unwrap()
        .clone();
    let files = split.data_files.len();
    assert!(files >= 3, "pk_dedup's largest split holds {files} files");
    let mut machine = read_split(ctx, split);
    let (mut rounds, mut reads_in_first) = (0, 0);
    loop {
        match machine.step().unwrap() {
            Step::NeedIo(round) => {
                rounds += 1;
                if rounds == 1 {
                    reads_in_first = round.len();
                }
                for req in round {
                    let answer = store.answer(&req.op);
                    machine.provide(req.id, answer).unwrap();
                }
            }
            Step::Work(items) => items.into_iter().for_each(paimon_kernel::io::Work::run),
            Step::Wait => {}
            Step::Emit(_) | Step::Done => break,
        }
    }
    assert_eq!(reads_in_first, files, "every run's file in the first round");
    assert_eq!(rounds, 1, "{rounds} rounds before the first batch");
}
