//! The library API (`Table`, `TableScan`) over the corpus tables, against their expected files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use paimon_native::Table;
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(corpus().join(format!("{name}.expected.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

async fn open(name: &str) -> Table {
    Table::open(corpus().join("corpus.db").join(name).to_str().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latest_snapshot_schema_and_tags_match_expected() {
    let mut names: Vec<String> = std::fs::read_dir(corpus().join("corpus.db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let exp = expected(&name);
        let table = open(&name).await;
        let latest = table.latest_snapshot().await.unwrap().unwrap();
        assert_eq!(Value::from(latest.id), exp["snapshot_id"], "{name}");
        let (snapshot, schema) = table.scan().snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot, latest);
        assert_eq!(Value::from(schema.id), exp["schema_id"], "{name}");
        // The expected fields are verbatim from the schema file.
        let raw: Value = serde_json::from_str(schema.raw_json.as_deref().unwrap()).unwrap();
        assert_eq!(raw["fields"], exp["fields"], "{name}");
        let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
        let want: Vec<&str> = exp["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, want, "{name}");
        let tags: BTreeMap<String, i64> = table
            .tags()
            .await
            .unwrap()
            .into_iter()
            .map(|(n, t)| (n, t.snapshot.id))
            .collect();
        let want: BTreeMap<String, i64> = serde_json::from_value(exp["tags"].clone()).unwrap();
        assert_eq!(tags, want, "{name}");
        // Every tag resolves to its snapshot through a scan.
        for (tag, id) in &want {
            let (s, _) = table
                .scan()
                .with_tag(tag)
                .snapshot()
                .await
                .unwrap()
                .unwrap();
            assert_eq!(s.id, *id, "{name} tag {tag}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_travel_by_id_and_timestamp() {
    let table = open("append_tags_rollback").await;
    let snapshots = table.snapshots().await.unwrap();
    assert_eq!(
        snapshots.iter().map(|s| s.id).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    for s in &snapshots {
        assert_eq!(&table.snapshot(s.id).await.unwrap(), s);
        let (at, _) = table
            .scan()
            .with_timestamp_millis(s.time_millis)
            .snapshot()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(at.id, s.id, "timestamp of snapshot {}", s.id);
    }
    let err = table
        .scan()
        .with_timestamp_millis(snapshots[0].time_millis - 1)
        .snapshot()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no snapshot earlier than or equal to"),
        "{err}"
    );
    let err = table.snapshot(9).await.unwrap_err().to_string();
    assert!(
        err.contains("out of the available snapshot id range [1, 5]"),
        "{err}"
    );
    // Files at snapshot 1 (tag v1) are those of the expected time-travel read's snapshot.
    let files = table.scan().with_snapshot_id(1).files().await.unwrap();
    let rows: i64 = files.iter().map(|f| f.record_count).sum();
    assert_eq!(rows, snapshots[0].total_record_count);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_come_from_the_core_planner() {
    for name in [
        "append_parquet",
        "append_partitioned",
        "pk_dedup",
        "append_tags_rollback",
    ] {
        let exp = expected(name);
        let table = open(name).await;
        let plan = table.scan().plan().await.unwrap();
        assert_eq!(
            Value::from(plan.snapshot.as_ref().unwrap().id),
            exp["snapshot_id"],
            "{name}"
        );
        assert_eq!(Value::from(plan.schema.id), exp["schema_id"], "{name}");
        // Every live data file is in exactly one split.
        let mut planned: Vec<String> = plan
            .splits
            .iter()
            .flat_map(|s| s.data_files.iter().map(|f| f.file_name.clone()))
            .collect();
        planned.sort();
        let mut live: Vec<String> = exp["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["file_path"].as_str().unwrap().to_string())
            .collect();
        live.sort();
        assert_eq!(planned, live, "{name}");
        // Plans are plain serde values.
        let json = serde_json::to_string(&plan).unwrap();
        assert!(json.contains("\"splits\""));
    }
    // Time travel goes through the same request.
    let table = open("append_tags_rollback").await;
    let plan = table.scan().with_tag("v1").plan().await.unwrap();
    assert_eq!(plan.snapshot.unwrap().id, 1);
    let plan = table
        .scan()
        .with_tag("v1")
        .with_snapshot_id(4)
        .plan()
        .await
        .unwrap();
    assert_eq!(
        plan.snapshot.unwrap().id,
        4,
        "the last time-travel setter wins"
    );
}

/// `$files` stats columns follow Java's `SimpleStatsEvolution`: they cover the columns of the
/// snapshot's schema, a column the file's schema does not have counts every row as null, and
/// keys render with the file schema's primary key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_stats_columns_follow_schema_evolution() {
    for name in ["evo_append", "evo_pk", "de_update"] {
        let table = open(name).await;
        let (_, schema) = table.scan().snapshot().await.unwrap().unwrap();
        let rows = table.scan().files().await.unwrap();
        assert!(!rows.is_empty(), "{name}");
        for row in rows {
            let file_schema = table.schema_by_id(row.schema_id).await.unwrap();
            let mut names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
            names.sort_unstable();
            for (i, field) in schema.fields.iter().enumerate() {
                let written = file_schema.fields.iter().any(|f| f.id == field.id)
                    && row
                        .write_cols
                        .as_ref()
                        .is_none_or(|cols| cols.contains(&field.name));
                let entry = format!("{}={}", field.name, row.record_count);
                if !written {
                    assert!(
                        row.null_value_counts.contains(&entry),
                        "{name} {}: column {} ({i}) is not in the file: {}",
                        row.file_path,
                        field.name,
                        row.null_value_counts
                    );
                }
            }
            // Name-sorted, every column of the read schema.
            let keys: Vec<&str> = row
                .null_value_counts
                .trim_matches(|c| c == '{' || c == '}')
                .split(", ")
                .map(|kv| kv.split('=').next().unwrap())
                .collect();
            assert_eq!(keys, names, "{name}");
            assert_eq!(
                row.min_key.is_some(),
                !schema.primary_keys.is_empty(),
                "{name}"
            );
        }
    }
}
