//! Java continues what we wrote and compacted: for each merge engine, two writes and a
//! compaction of ours (normal, then full), read by us and pypaimon 2.1.0 (where its venv is
//! installed), then Java Paimon 2.0.0 writes on top and compacts with its own strategy, and
//! our reader and Java's give the rows of a model of the engine; we compact again. The Java
//! part runs where java-check is installed (`conformance/java-check/install.sh`).

use crate::common::table_rows;
use crate::oracle::{
    java_compact, java_rows, java_write, java_write_script, pypaimon_rows, sorted_strings,
};
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Engine {
    Deduplicate,
    PartialUpdate,
    Aggregation,
    FirstRow,
    PartialUpdateLookup,
    AggregationIncremental,
    FirstRowIncremental,
}

impl Engine {
    fn options(self) -> &'static str {
        match self {
            Engine::Deduplicate => r#""merge-engine": "deduplicate""#,
            Engine::PartialUpdate => r#""merge-engine": "partial-update""#,
            Engine::Aggregation => {
                r#""merge-engine": "aggregation", "fields.n.aggregate-function": "sum""#
            }
            Engine::FirstRow => r#""merge-engine": "first-row""#,
            Engine::FirstRowIncremental => {
                r#""merge-engine": "first-row", "kernel.compaction.incremental-selection": "true""#
            }
            Engine::PartialUpdateLookup => {
                r#""merge-engine": "partial-update", "changelog-producer": "lookup""#
            }
            Engine::AggregationIncremental => {
                r#""merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "fields.v.aggregate-function": "max", "kernel.compaction.incremental-selection": "true""#
            }
        }
    }

    /// Fold a row (`v`, `n`, either may be null) into the model.
    fn apply(
        self,
        model: &mut BTreeMap<i64, (Option<String>, Option<i64>)>,
        k: i64,
        v: Option<String>,
        n: Option<i64>,
    ) {
        match self {
            Engine::Deduplicate => {
                model.insert(k, (v, n));
            }
            Engine::PartialUpdate | Engine::PartialUpdateLookup => {
                let e = model.entry(k).or_insert((None, None));
                if v.is_some() {
                    e.0 = v;
                }
                if n.is_some() {
                    e.1 = n;
                }
            }
            Engine::Aggregation | Engine::AggregationIncremental => {
                let e = model.entry(k).or_insert((None, None));
                if self == Engine::AggregationIncremental {
                    if v.is_some() && (e.0.is_none() || v > e.0) {
                        e.0 = v;
                    }
                } else if v.is_some() {
                    e.0 = v;
                }
                if let Some(n) = n {
                    e.1 = Some(e.1.unwrap_or(0) + n);
                }
            }
            Engine::FirstRow | Engine::FirstRowIncremental => {
                model.entry(k).or_insert((v, n));
            }
        }
    }
}

fn batch(rows: &[(i64, Option<String>, Option<i64>)]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k", arrow_schema::DataType::Int64, false),
            Field::new("v", arrow_schema::DataType::Utf8, true),
            Field::new("n", arrow_schema::DataType::Int64, true),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))) as ArrayRef,
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1.clone()))),
            Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.2))),
        ],
    )
    .unwrap()
}

fn model_rows(model: &BTreeMap<i64, (Option<String>, Option<i64>)>) -> Vec<String> {
    let rows: Vec<Value> = model
        .iter()
        .map(|(k, (v, n))| json!({"k": k, "v": v, "n": n}))
        .collect();
    sorted_strings(&rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_writes_and_compacts_on_top_of_our_compacted_tables() {
    let engines = [
        Engine::Deduplicate,
        Engine::PartialUpdate,
        Engine::Aggregation,
        Engine::FirstRow,
        Engine::PartialUpdateLookup,
        Engine::AggregationIncremental,
        Engine::FirstRowIncremental,
    ];
    let tmp = tempfile::tempdir().unwrap();
    for engine in engines {
        for full in [false, true] {
            // `<warehouse>/<db>.db/<table>`, the layout pypaimon's catalog reads.
            let dir = tmp
                .path()
                .join("wh/db.db")
                .join(format!("{engine:?}-{full}").to_lowercase());
            let schema = format!(
                r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}},
                {{"name": "n", "type": "BIGINT"}}], "primaryKeys": ["k"],
                "options": {{"bucket": "2", "num-sorted-run.compaction-trigger": "2", {}}}}}"#,
                engine.options()
            );
            let table = Table::create(dir.to_str().unwrap(), schema.as_bytes())
                .await
                .unwrap();
            let mut model = BTreeMap::new();
            // Our two writes: every key, then half of them with some nulls.
            let a: Vec<(i64, Option<String>, Option<i64>)> = (0..400)
                .map(|k| (k, Some(format!("a{k}")), Some(k)))
                .collect();
            let b: Vec<(i64, Option<String>, Option<i64>)> = (0..200)
                .map(|k| (k, (k % 3 != 0).then(|| format!("b{k}")), Some(1)))
                .collect();
            for rows in [&a, &b] {
                let mut w = table.new_write().await.unwrap();
                w.write(&batch(rows)).await.unwrap();
                table
                    .new_commit(None)
                    .commit(w.prepare_commit().await.unwrap())
                    .await
                    .unwrap();
                for (k, v, n) in rows.iter().cloned() {
                    engine.apply(&mut model, k, v, n);
                }
            }
            table
                .compact(CompactOptions {
                    full,
                    ..Default::default()
                })
                .await
                .unwrap();
            let want = model_rows(&model);
            assert_eq!(
                table_rows(&table).await,
                want,
                "{engine:?} full {full}: ours"
            );
            if let Some(py) = pypaimon_rows(&dir) {
                assert_eq!(py, want, "{engine:?} full {full}: pypaimon");
            }
            if java_write_script().is_none() {
                continue;
            }
            // Java appends (new and existing keys, some nulls) and compacts with its strategy.
            let c: Vec<(i64, Option<String>, Option<i64>)> = (150..500)
                .map(|k| {
                    (
                        k,
                        (k % 4 != 0).then(|| format!("c{k}")),
                        (k % 5 != 0).then_some(2),
                    )
                })
                .collect();
            let json_rows: Vec<Value> = c
                .iter()
                .map(|(k, v, n)| json!({"k": k, "v": v, "n": n}))
                .collect();
            assert!(java_write(&dir, &json_rows));
            for (k, v, n) in c {
                engine.apply(&mut model, k, v, n);
            }
            assert!(java_compact(&dir, false));
            let want = model_rows(&model);
            let table = Table::open(dir.to_str().unwrap()).await.unwrap();
            assert_eq!(
                table_rows(&table).await,
                want,
                "{engine:?} full {full}: after Java"
            );
            assert_eq!(
                java_rows(&dir).unwrap(),
                want,
                "{engine:?} full {full}: Java"
            );
            // And we compact what Java wrote.
            table.compact(CompactOptions::default()).await.unwrap();
            assert_eq!(
                table_rows(&table).await,
                want,
                "{engine:?} full {full}: compacted again"
            );
        }
    }
}
