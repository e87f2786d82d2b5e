//! Our compaction plans of primary-key tables equal Java Paimon 2.0.0's on the same snapshot
//! (java-check's `plan`, when installed: `oracle::java_check`, every plan of a test in one
//! JVM through `batch`): every primary-key table of the corpus and the Java-written tables
//! (normal and full), and write / compact sequences over tables of several strategies and
//! merge engines (universal with different triggers, ratios and amplification, first-row,
//! partial-update and aggregation with and without lookup, lookup tables forcing level 0 up,
//! deletion vectors, `compaction.force-up-level-0`), with our incremental selection off and
//! on, compared before every compaction. (Append and data-evolution plans: `java_compact`.)

use crate::copy_dir;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;

fn java_plan_script() -> Option<PathBuf> {
    crate::oracle::java_check("plan")
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
    if java_plan_script().is_none() {
        return;
    }
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
    let mut dirs = Vec::new();
    let mut commands = Vec::new();
    for src in tables {
        let dir = tmp.path().join(src.file_name().unwrap());
        copy_dir(&src, &dir);
        let d = dir.to_str().unwrap();
        commands.push(crate::oracle::jcmd(&["plan", d]));
        commands.push(crate::oracle::jcmd(&["plan", d, "--full"]));
        dirs.push(dir);
    }
    let java = crate::oracle::java_batch(&commands).unwrap();
    let mut units = 0;
    for (i, dir) in dirs.iter().enumerate() {
        let table = Table::open(dir.to_str().unwrap()).await.unwrap();
        for (j, full) in [false, true].into_iter().enumerate() {
            let ours = our_plan(&table, full).await;
            let what = format!("{} (full {full})", dir.display());
            assert_eq!(ours, plan_lines(&java[2 * i + j], &what), "{what}");
            units += ours.len();
        }
    }
    assert!(units > 20, "{units} units compared");
}

fn batch(keys: impl Iterator<Item = i64>, tag: &str) -> RecordBatch {
    let keys: Vec<i64> = keys.collect();
    let v: Vec<String> = keys.iter().map(|k| format!("{tag}-{k}")).collect();
    let n: Vec<i64> = keys.iter().map(|k| k % 7).collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k", arrow_schema::DataType::Int64, false),
            Field::new("v", arrow_schema::DataType::Utf8, true),
            Field::new("n", arrow_schema::DataType::Int64, true),
        ])),
        vec![
            Arc::new(Int64Array::from(keys)) as ArrayRef,
            Arc::new(StringArray::from(v)),
            Arc::new(Int64Array::from(n)),
        ],
    )
    .unwrap()
}

/// Java's plan lines of one `plan` command of a batch (sorted, re-serialized as ours are).
fn plan_lines(o: &crate::oracle::JavaOutcome, what: &str) -> Vec<String> {
    o.sorted(what)
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Write / compact sequences over tables of every strategy and merge engine (universal with
/// different triggers, ratios and amplification; first-row, partial-update and aggregation,
/// with and without lookup; lookup changelog; deletion vectors; forced level-0 compaction),
/// each with our incremental selection off and on. After every write the table is copied
/// and our plans (normal and full) are taken; Java plans every copy in one batch at the end.
/// With incremental selection off every plan equals Java's. With it on, normal plans equal
/// Java's where the selection keeps Java's (deduplicate, deletion vectors, lookup
/// deduplicate) and may differ elsewhere, and full plans always equal Java's. Java reads every
/// final table as we do (the changelog too, for lookup tables).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_compact_sequences_plan_as_java() {
    if java_plan_script().is_none() {
        return;
    }
    // (options, incremental selection may pick otherwise than Java)
    let configs: [(&str, bool); 12] = [
        (
            r#""num-sorted-run.compaction-trigger": "2", "num-levels": "6""#,
            false,
        ),
        (
            r#""num-sorted-run.compaction-trigger": "3", "compaction.size-ratio": "50""#,
            false,
        ),
        (
            r#""num-sorted-run.compaction-trigger": "2", "num-levels": "4", "compaction.max-size-amplification-percent": "50""#,
            false,
        ),
        (
            r#""merge-engine": "first-row", "write-only": "true", "num-sorted-run.compaction-trigger": "3""#,
            true,
        ),
        (
            r#""merge-engine": "first-row", "num-sorted-run.compaction-trigger": "2""#,
            true,
        ),
        (
            r#""merge-engine": "partial-update", "changelog-producer": "lookup", "write-only": "true", "num-sorted-run.compaction-trigger": "2""#,
            true,
        ),
        (
            r#""merge-engine": "partial-update", "num-sorted-run.compaction-trigger": "2", "partial-update.ignore-delete": "true", "fields.n.sequence-group": "v", "fields.v.aggregate-function": "max""#,
            true,
        ),
        (
            r#""merge-engine": "aggregation", "fields.v.aggregate-function": "max", "fields.n.aggregate-function": "sum", "num-sorted-run.compaction-trigger": "2""#,
            true,
        ),
        (
            r#""merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "changelog-producer": "lookup", "num-sorted-run.compaction-trigger": "3""#,
            true,
        ),
        (
            r#""changelog-producer": "lookup", "num-sorted-run.compaction-trigger": "3""#,
            false,
        ),
        (
            r#""deletion-vectors.enabled": "true", "num-sorted-run.compaction-trigger": "2""#,
            false,
        ),
        (
            r#""compaction.force-up-level-0": "true", "num-sorted-run.compaction-trigger": "4""#,
            false,
        ),
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
    // (what, copy, our normal plan, our full plan, incremental may differ)
    type Case = (String, PathBuf, Vec<String>, Vec<String>, bool);
    let mut cases: Vec<Case> = Vec::new();
    // (what, table, first snapshot of the changelog read or None)
    let mut finals: Vec<(String, PathBuf, Option<i64>)> = Vec::new();
    for (i, (options, selective)) in configs.iter().enumerate() {
        for incremental in [false, true] {
            let dir = tmp.path().join(format!("t{i}-{incremental}"));
            let schema = format!(
                r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}},
                {{"name": "n", "type": "BIGINT"}}],
                "primaryKeys": ["k"], "options": {{"bucket": "2",
                "kernel.compaction.incremental-selection": "{incremental}", {options}}}}}"#
            );
            let table = Table::create(dir.to_str().unwrap(), schema.as_bytes())
                .await
                .unwrap();
            for (s, (from, to)) in steps.iter().enumerate() {
                let mut w = table.new_write().await.unwrap();
                w.write(&batch(*from..*to, &format!("s{s}"))).await.unwrap();
                let messages = w.prepare_commit().await.unwrap();
                table.new_commit(None).commit(messages).await.unwrap();
                let copy = tmp.path().join(format!("t{i}-{incremental}-s{s}"));
                copy_dir(&dir, &copy);
                cases.push((
                    format!("{options}, incremental {incremental}, step {s}"),
                    copy,
                    our_plan(&table, false).await,
                    our_plan(&table, true).await,
                    incremental && *selective,
                ));
                // Every other step compacts (normal), so that levels above 0 fill up.
                if s % 2 == 1 {
                    table.compact(CompactOptions::default()).await.unwrap();
                }
            }
            table.compact(CompactOptions::default()).await.unwrap();
            let lookup = options.contains("lookup");
            finals.push((
                format!("{options}, incremental {incremental}"),
                dir,
                lookup.then_some(1),
            ));
        }
    }
    let mut commands = Vec::new();
    for (_, copy, _, _, _) in &cases {
        let d = copy.to_str().unwrap();
        commands.push(crate::oracle::jcmd(&["plan", d]));
        commands.push(crate::oracle::jcmd(&["plan", d, "--full"]));
    }
    for (_, dir, changelog_from) in &finals {
        let d = dir.to_str().unwrap();
        commands.push(crate::oracle::jcmd(&["read", d]));
        if let Some(from) = changelog_from {
            let latest = Table::open(d)
                .await
                .unwrap()
                .latest_snapshot()
                .await
                .unwrap()
                .unwrap()
                .id;
            commands.push(crate::oracle::jcmd(&[
                "read",
                d,
                "--row-kind",
                "--option",
                &format!("incremental-between={from},{latest}"),
                "--option",
                "incremental-between-scan-mode=changelog",
            ]));
        }
    }
    let java = crate::oracle::java_batch(&commands).unwrap();
    let mut at = 0;
    let (mut compared, mut differing, mut normal) = (0, 0, 0);
    for (what, _, ours, ours_full, may_differ) in &cases {
        let (jn, jf) = (plan_lines(&java[at], what), plan_lines(&java[at + 1], what));
        at += 2;
        assert_eq!(ours_full, &jf, "{what}, full");
        if *may_differ {
            differing += usize::from(ours != &jn);
        } else {
            assert_eq!(ours, &jn, "{what}, normal");
        }
        compared += ours.len() + ours_full.len();
        normal += usize::from(!ours.is_empty());
    }
    for (what, dir, changelog_from) in &finals {
        let table = Table::open(dir.to_str().unwrap()).await.unwrap();
        let ours = crate::oracle::sorted_strings(
            &paimon_kernel::canonical::batches_rows(&table.scan().to_batches().await.unwrap())
                .unwrap(),
        );
        assert_eq!(java[at].sorted(what), ours, "{what}: Java's rows");
        at += 1;
        if let Some(from) = changelog_from {
            // Java reads every changelog record the snapshots count.
            let latest = table.latest_snapshot().await.unwrap().unwrap().id;
            let mut records = 0;
            for id in from + 1..=latest {
                records += table
                    .snapshot(id)
                    .await
                    .unwrap()
                    .changelog_record_count
                    .unwrap_or(0);
            }
            let lines = java[at].sorted(&format!("{what}: changelog"));
            assert!(records > 0, "{what}: no changelog");
            assert_eq!(
                lines.len() as i64,
                records,
                "{what}: Java's changelog records"
            );
            at += 1;
        }
    }
    assert!(
        compared > 200 && normal > 40,
        "{compared} units, {normal} normal plans"
    );
    println!("incremental selection planned otherwise than Java {differing} times");
    assert!(
        differing > 0,
        "incremental selection never left Java's plan"
    );
}
