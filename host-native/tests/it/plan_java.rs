//! Our compaction plans equal Java Paimon 1.4.2's on the same snapshot (java-check's `plan`,
//! when installed: `oracle::java_check`):
//! every primary-key table of the corpus and the Java-written tables (normal and full), and
//! write / compact sequences over tables of several strategies (universal with different
//! triggers, ratios and amplification, lookup tables forcing level 0 up,
//! `compaction.force-up-level-0`), compared before every compaction.

use crate::copy_dir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;

fn java_plan_script() -> Option<PathBuf> {
    crate::oracle::java_check("plan")
}

/// Java's plan: one `{"bucket","output_level","files"}` line per unit, sorted.
fn java_plan(script: &Path, dir: &Path, full: bool) -> Vec<String> {
    let mut cmd = Command::new(script);
    cmd.arg(dir);
    if full {
        cmd.arg("--full");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "java plan of {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.to_string()
        })
        .collect();
    lines.sort();
    lines
}

/// Our plan in the same shape.
async fn our_plan(table: &Table, full: bool) -> Vec<String> {
    let plan = table.plan_compaction(full).await.unwrap();
    let mut lines: Vec<String> = plan
        .units
        .iter()
        .map(|u| {
            let mut files = u.files.clone();
            files.sort();
            serde_json::json!({"bucket": u.bucket, "output_level": u.output_level, "files": files})
                .to_string()
        })
        .collect();
    lines.sort();
    lines
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_plans_equal_java() {
    let Some(script) = java_plan_script() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut tables: Vec<PathBuf> = [
        "evo_pk",
        "pk_agg_merge_map",
        "pk_aggregation",
        "pk_changelog_input",
        "pk_dedup",
        "pk_dedup_avro",
        "pk_dedup_orc",
        "pk_dedup_partitioned",
        "pk_dedup_seqfield",
        "pk_dynamic_bucket",
        "pk_first_row",
        "pk_partial_update",
    ]
    .iter()
    .map(|n| corpus().join("tables/corpus.db").join(n))
    .collect();
    tables.extend(
        ["p090_avro_pk", "p142_orc_pk", "p142_parquet_pk"]
            .iter()
            .map(|n| corpus().join("java-tables").join(n)),
    );
    let mut units = 0;
    for src in tables {
        let dir = tmp.path().join(src.file_name().unwrap());
        copy_dir(&src, &dir);
        let table = Table::open(dir.to_str().unwrap()).await.unwrap();
        for full in [false, true] {
            let ours = our_plan(&table, full).await;
            let java = java_plan(&script, &dir, full);
            assert_eq!(ours, java, "{} (full {full})", dir.display());
            units += ours.len();
        }
    }
    assert!(units > 20, "{units} units compared");
}

fn batch(keys: impl Iterator<Item = i64>, tag: &str) -> RecordBatch {
    let keys: Vec<i64> = keys.collect();
    let v: Vec<String> = keys.iter().map(|k| format!("{tag}-{k}")).collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k", arrow_schema::DataType::Int64, false),
            Field::new("v", arrow_schema::DataType::Utf8, true),
        ])),
        vec![
            Arc::new(Int64Array::from(keys)) as ArrayRef,
            Arc::new(StringArray::from(v)),
        ],
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_compact_sequences_plan_as_java() {
    let Some(script) = java_plan_script() else {
        return;
    };
    let configs = [
        r#""num-sorted-run.compaction-trigger": "2", "num-levels": "6""#,
        r#""num-sorted-run.compaction-trigger": "3", "compaction.size-ratio": "50""#,
        r#""num-sorted-run.compaction-trigger": "2", "num-levels": "4", "compaction.max-size-amplification-percent": "50""#,
        r#""merge-engine": "first-row", "write-only": "true", "num-sorted-run.compaction-trigger": "3""#,
        r#""merge-engine": "partial-update", "changelog-producer": "lookup", "write-only": "true", "num-sorted-run.compaction-trigger": "2""#,
        r#""compaction.force-up-level-0": "true", "num-sorted-run.compaction-trigger": "4""#,
    ];
    // Write sizes (rows) of each step: small, large, small... so that every rule fires.
    let steps: [(i64, i64); 7] = [
        (0, 50),
        (0, 3000),
        (10, 20),
        (2000, 2600),
        (40, 45),
        (5000, 9000),
        (3, 9),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let mut differing = 0;
    let mut compared = 0;
    for (i, options) in configs.iter().enumerate() {
        let dir = tmp.path().join(format!("t{i}"));
        let schema = format!(
            r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}}],
            "primaryKeys": ["k"], "options": {{"bucket": "2", {options}}}}}"#
        );
        let table = Table::create(dir.to_str().unwrap(), schema.as_bytes())
            .await
            .unwrap();
        for (s, (from, to)) in steps.iter().enumerate() {
            let mut w = table.new_write().await.unwrap();
            w.write(&batch(*from..*to, &format!("s{s}"))).await.unwrap();
            let messages = w.prepare_commit().await.unwrap();
            table.new_commit(None).commit(messages).await.unwrap();
            for full in [false, true] {
                let ours = our_plan(&table, full).await;
                let java = java_plan(&script, &dir, full);
                assert_eq!(ours, java, "{options}, step {s}, full {full}");
                compared += ours.len();
                if !full && !ours.is_empty() {
                    differing += 1;
                }
            }
            // Every other step compacts (normal), so that levels above 0 fill up.
            if s % 2 == 1 {
                table.compact(CompactOptions::default()).await.unwrap();
            }
        }
    }
    assert!(
        compared > 50 && differing > 10,
        "{compared} units, {differing} normal plans"
    );
}
