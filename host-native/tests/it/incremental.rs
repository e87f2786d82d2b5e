//! Incremental selection (`kernel.compaction.incremental-selection`): tables whose sorted
//! runs are a small newest run, a large run in the middle and a small oldest run (level-0
//! files moved up with upgrade-only commits, as Java commits them); a normal compaction
//! leaves the large run in place, every row reads as before (the full merge), and Java
//! Paimon 2.0.0 reads the compacted table (java-check's `read` when present).

use crate::common::table_rows;
use crate::oracle::{java_rows, sorted_strings};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::commit::message::{CommitMessage, CompactIncrement};
use paimon_kernel::spec::{BinaryRow, DataFileMeta};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;

async fn live_files(table: &Table) -> Vec<DataFileMeta> {
    let files = table.scan().data_files().await.unwrap().unwrap();
    files.entries.into_iter().map(|e| e.file).collect()
}

/// Level → file names.
async fn levels(table: &Table) -> BTreeMap<i32, Vec<String>> {
    let mut out: BTreeMap<i32, Vec<String>> = BTreeMap::new();
    for f in live_files(table).await {
        out.entry(f.level).or_default().push(f.file_name);
    }
    out
}

async fn write(table: &Table, batch: &RecordBatch) {
    let mut w = table.new_write().await.unwrap();
    w.write(batch).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

/// Move the level-0 files to `level` without rewriting them.
async fn move_level0_to(table: &Table, level: i32) {
    let before: Vec<DataFileMeta> = live_files(table)
        .await
        .into_iter()
        .filter(|f| f.level == 0)
        .collect();
    let after = before
        .iter()
        .map(|f| DataFileMeta { level, ..f.clone() })
        .collect();
    let message = CommitMessage {
        partition: BinaryRow::empty(),
        bucket: 0,
        total_buckets: Some(1),
        data_increment: Default::default(),
        compact_increment: CompactIncrement {
            compact_before: before,
            compact_after: after,
            ..Default::default()
        },
    };
    table.new_commit(None).commit(vec![message]).await.unwrap();
}

/// Columns `k` (keys) plus `cols`.
fn batch(keys: Vec<i64>, cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let mut fields = vec![Field::new("k", arrow_schema::DataType::Int64, false)];
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(keys))];
    for (n, a) in cols {
        fields.push(Field::new(n, a.data_type().clone(), true));
        arrays.push(a);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

async fn create(loc: &Path, fields: &str, options: &str) -> Table {
    let schema = format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}{fields}], "primaryKeys": ["k"],
        "options": {{"bucket": "1", "num-sorted-run.compaction-trigger": "2",
        "kernel.compaction.incremental-selection": "true"{options}}}}}"#
    );
    Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap()
}

/// Write `runs` (oldest, middle, newest) and move them to levels 5, 3 and 0.
async fn layout(table: &Table, runs: [RecordBatch; 3]) {
    let [oldest, middle, newest] = runs;
    write(table, &oldest).await;
    move_level0_to(table, 5).await;
    write(table, &middle).await;
    move_level0_to(table, 3).await;
    write(table, &newest).await;
    let lv = levels(table).await;
    assert_eq!(lv.keys().copied().collect::<Vec<_>>(), vec![0, 3, 5]);
}

/// Normal compaction of the layout; returns the middle run's file, checked to be still live
/// at level 3.
async fn compact_keeps_middle(table: &Table) -> (String, usize) {
    let middle = levels(table).await[&3][0].clone();
    let report = table.compact(CompactOptions::default()).await.unwrap();
    assert_eq!(report.buckets.len(), 1);
    let after = levels(table).await;
    assert_eq!(after.get(&3), Some(&vec![middle.clone()]));
    (middle, report.buckets[0].files_in)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_aggregation_and_partial_update_regroup_past_history() {
    let filler: Vec<i64> = (100..5100).collect();
    let n = filler.len();
    // Aggregation: sum (bounded by the statistics), max, bool_or.
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("agg");
    let table = create(
        &loc,
        r#", {"name": "n", "type": "BIGINT"}, {"name": "s", "type": "STRING"}, {"name": "b", "type": "BOOLEAN"}"#,
        r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "fields.s.aggregate-function": "max", "fields.b.aggregate-function": "bool_or""#,
    )
    .await;
    let agg = |keys: Vec<i64>, n: Vec<i64>, s: Vec<&str>, b: Vec<bool>| {
        batch(
            keys,
            vec![
                ("n", Arc::new(Int64Array::from(n)) as ArrayRef),
                ("s", Arc::new(StringArray::from(s))),
                ("b", Arc::new(BooleanArray::from(b))),
            ],
        )
    };
    let mut mk = vec![1];
    mk.extend(&filler);
    layout(
        &table,
        [
            agg(vec![1, 2], vec![5, 1], vec!["x", "a"], vec![false, false]),
            agg(mk, vec![-7; n + 1], vec!["m"; n + 1], vec![true; n + 1]),
            agg(
                vec![1, 2, 3],
                vec![3, 2, 4],
                vec!["w", "b", "c"],
                vec![false; 3],
            ),
        ],
    )
    .await;
    let before = table_rows(&table).await;
    assert!(before.contains(&r#"{"k":1,"n":1,"s":"x","b":true}"#.to_owned()));
    let (_, files_in) = compact_keeps_middle(&table).await;
    assert_eq!(files_in, 2);
    assert_eq!(table_rows(&table).await, before);
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, before);
    }

    // Partial-update: every field in a sequence group, aggregated; deletes ignored.
    let loc = dir.path().join("partial");
    let table = create(
        &loc,
        r#", {"name": "g", "type": "INT"}, {"name": "n", "type": "INT"}, {"name": "s", "type": "STRING"}"#,
        r#", "merge-engine": "partial-update", "ignore-delete": "true", "fields.g.sequence-group": "n,s", "fields.n.aggregate-function": "sum", "fields.s.aggregate-function": "min""#,
    )
    .await;
    let pu = |keys: Vec<i64>, g: Vec<i32>, n: Vec<i32>, s: Vec<&str>| {
        batch(
            keys,
            vec![
                ("g", Arc::new(Int32Array::from(g)) as ArrayRef),
                ("n", Arc::new(Int32Array::from(n))),
                ("s", Arc::new(StringArray::from(s))),
            ],
        )
    };
    let mut mk = vec![1];
    mk.extend(&filler);
    layout(
        &table,
        [
            pu(vec![1, 2], vec![1, 1], vec![5, 1], vec!["x", "a"]),
            pu(mk, vec![2; n + 1], vec![-7; n + 1], vec!["m"; n + 1]),
            pu(
                vec![1, 2, 3],
                vec![1, 3, 1],
                vec![3, 2, 4],
                vec!["w", "b", "c"],
            ),
        ],
    )
    .await;
    let before = table_rows(&table).await;
    let (_, files_in) = compact_keeps_middle(&table).await;
    assert_eq!(files_in, 2);
    assert_eq!(table_rows(&table).await, before);
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, before);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookup_tables_compact_level0_above_history() {
    let filler: Vec<i64> = (100..5100).collect();
    let n = filler.len();
    let dir = tempfile::tempdir().unwrap();
    // First-row with lookup changelog; write-only so that level 0 waits for the compaction.
    let loc = dir.path().join("first_row");
    let table = create(
        &loc,
        r#", {"name": "s", "type": "STRING"}"#,
        r#", "merge-engine": "first-row", "changelog-producer": "lookup", "write-only": "true""#,
    )
    .await;
    let s = |keys: Vec<i64>, v: &str| {
        let len = keys.len();
        batch(
            keys,
            vec![("s", Arc::new(StringArray::from(vec![v; len])) as ArrayRef)],
        )
    };
    layout(
        &table,
        [
            s(vec![1, 2], "a"),
            s(filler.clone(), "m"),
            s(vec![1, 3, 150], "x"),
        ],
    )
    .await;
    let (_, files_in) = compact_keeps_middle(&table).await;
    assert_eq!(files_in, 1);
    let lv = levels(&table).await;
    assert_eq!(lv.keys().copied().collect::<Vec<_>>(), vec![2, 3, 5]);
    let mut model: Vec<serde_json::Value> = vec![
        serde_json::json!({"k": 1, "s": "a"}),
        serde_json::json!({"k": 2, "s": "a"}),
        serde_json::json!({"k": 3, "s": "x"}),
    ];
    model.extend(filler.iter().map(|k| serde_json::json!({"k": k, "s": "m"})));
    let model = sorted_strings(&model);
    assert_eq!(table_rows(&table).await, model);
    // The changelog of the compaction holds only the new key.
    assert_eq!(changelog(&loc), vec![(3, 0)]);
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, model);
    }

    // Partial-update with lookup changelog: the nearest state merges with level 0.
    let loc = dir.path().join("partial_lookup");
    let table = create(
        &loc,
        r#", {"name": "s", "type": "STRING"}, {"name": "n", "type": "INT"}"#,
        r#", "merge-engine": "partial-update", "changelog-producer": "lookup", "write-only": "true""#,
    )
    .await;
    let pu = |keys: Vec<i64>, s: Vec<Option<&str>>, v: Vec<Option<i32>>| {
        batch(
            keys,
            vec![
                ("s", Arc::new(StringArray::from(s)) as ArrayRef),
                ("n", Arc::new(Int32Array::from(v))),
            ],
        )
    };
    let mut mk = vec![1];
    mk.extend(&filler);
    layout(
        &table,
        [
            pu(vec![1, 2], vec![Some("a"); 2], vec![Some(1); 2]),
            pu(mk, vec![Some("b"); n + 1], vec![None; n + 1]),
            pu(vec![1, 3], vec![None, Some("x")], vec![Some(7), Some(3)]),
        ],
    )
    .await;
    let before = table_rows(&table).await;
    let one: Vec<&String> = before
        .iter()
        .filter(|r| r.starts_with(r#"{"k":1,"#))
        .collect();
    assert_eq!(one, vec![r#"{"k":1,"s":"b","n":7}"#], "{}", before.len());
    let (_, files_in) = compact_keeps_middle(&table).await;
    assert_eq!(files_in, 1);
    assert_eq!(table_rows(&table).await, before);
    // Changelog: -U/+U of key 1 (before: the nearest state), +I of key 3.
    assert_eq!(changelog(&loc), vec![(1, 1), (1, 2), (3, 0)]);
    if let Some(java) = java_rows(&loc) {
        assert_eq!(java, before);
    }
}

/// (key, row kind byte) of every record of the changelog files in `bucket-0`, sorted.
fn changelog(loc: &Path) -> Vec<(i64, i8)> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int8Type, Int64Type};
    let mut out = Vec::new();
    for e in std::fs::read_dir(loc.join("bucket-0")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if !name.starts_with("changelog-") {
            continue;
        }
        let file = std::fs::File::open(loc.join("bucket-0").join(&name)).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for b in reader {
            let b = b.unwrap();
            let keys = b.column(b.schema().index_of("_KEY_k").unwrap()).clone();
            let kinds = b
                .column(b.schema().index_of("_VALUE_KIND").unwrap())
                .clone();
            for r in 0..b.num_rows() {
                out.push((
                    keys.as_primitive::<Int64Type>().value(r),
                    kinds.as_primitive::<Int8Type>().value(r),
                ));
            }
        }
    }
    out.sort();
    out
}
