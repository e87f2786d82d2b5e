//! Java Paimon 2.0.0 reads every table of the corpus (`conformance/tables/corpus.db`) as we do:
//! the latest snapshot through java-check's `read` (one JVM, `batch`) against our reader's
//! canonical rows, line for line. What Java 2.0.0 reads otherwise is listed here and in
//! conformance/java-check/README.md, and checked to stay so (a difference that goes away
//! fails too, so the list stays true):
//!
//! * `pk_first_row_dv_mor`: Java refuses first-row tables with deletion vectors;
//! * `all_types_orc`: Java's ORC reader fails on pre-1970 timestamps with digits below the
//!   millisecond (`t_ts9`, `t_ltz6`, `t_ltz9`); the other columns are compared (among them
//!   `t_char`, a `CHAR(5)` that pypaimon stored as a plain ORC string: Java and we read its
//!   five spaces as `""`);
//! * `pk_agg_merge_map`: Java's `merge_map` result is a `java.util.HashMap`, so its entries
//!   come in hash order; compared with each map's entries sorted.

use std::path::Path;

use paimon_native::Table;
use serde_json::Value;

use crate::oracle::{java_batch, jcmd, sorted_strings};

/// Columns of `all_types_orc` that Java 2.0.0 fails on.
const ORC_DIFFERENT: [&str; 3] = ["t_ts9", "t_ltz6", "t_ltz9"];

/// Our rows of `loc` (only `columns` when given), sorted canonical JSON lines.
async fn our_rows(loc: &str, columns: Option<&[String]>) -> Vec<String> {
    let table = Table::open(loc).await.unwrap();
    let mut scan = table.scan();
    if let Some(c) = columns {
        scan = scan.with_projection(c.iter().cloned());
    }
    sorted_strings(
        &paimon_kernel::canonical::batches_rows(&scan.to_batches().await.unwrap()).unwrap(),
    )
}

/// Each map of column `m` with its entries sorted, so that entry order does not count.
fn sort_maps(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(entries) = v["m"].as_array_mut() {
                entries.sort_by_key(|e| e.to_string());
            }
            v.to_string()
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_reads_every_corpus_table_as_we_do() {
    if crate::oracle::java_check("batch").is_none() {
        return;
    }
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables/corpus.db");
    let mut tables: Vec<(String, String)> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("snapshot").is_dir())
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_owned();
            (name, p.to_str().unwrap().to_owned())
        })
        .collect();
    tables.sort();
    assert!(tables.len() >= 40, "{} corpus tables", tables.len());
    // all_types_orc: every column but the ones Java reads otherwise.
    let orc = &tables.iter().find(|t| t.0 == "all_types_orc").unwrap().1;
    let schema = Table::open(orc).await.unwrap().schema().await.unwrap();
    let orc_columns: Vec<String> = schema
        .fields
        .iter()
        .map(|f| f.name.clone())
        .filter(|n| !ORC_DIFFERENT.contains(&n.as_str()))
        .collect();
    assert_eq!(orc_columns.len() + ORC_DIFFERENT.len(), schema.fields.len());
    let mut commands = Vec::new();
    for (name, loc) in &tables {
        commands.push(jcmd(&["read", loc]));
        if name == "all_types_orc" {
            commands.push(jcmd(&["read", loc, "--columns", &orc_columns.join(",")]));
        }
    }
    let java = java_batch(&commands).unwrap();
    let mut at = 0;
    let mut compared = 0;
    for (name, loc) in &tables {
        let j = &java[at];
        at += 1;
        match name.as_str() {
            "pk_first_row_dv_mor" => {
                let e = j.error.as_deref().unwrap_or_default();
                assert!(
                    j.code == 1
                        && e.contains("First row merge engine does not need deletion vectors"),
                    "{name}: Java now reads it ({:?}): compare it",
                    j.error
                );
            }
            "all_types_orc" => {
                assert_eq!(
                    j.code, 1,
                    "{name}: Java now reads every column: compare them"
                );
                let j = &java[at];
                at += 1;
                assert_eq!(
                    j.sorted(name),
                    our_rows(loc, Some(&orc_columns)).await,
                    "{name} without {ORC_DIFFERENT:?}"
                );
                compared += 1;
            }
            "pk_agg_merge_map" => {
                let (theirs, ours) = (j.sorted(name), our_rows(loc, None).await);
                assert_ne!(
                    theirs, ours,
                    "{name}: Java's map order is ours now: compare as is"
                );
                assert_eq!(sort_maps(&theirs), sort_maps(&ours), "{name}");
                compared += 1;
            }
            _ => {
                assert_eq!(j.sorted(name), our_rows(loc, None).await, "{name}");
                compared += 1;
            }
        }
    }
    assert_eq!(at, java.len());
    println!(
        "{compared} of {} corpus tables read alike by Java 2.0.0",
        tables.len()
    );
}
