//! Expiring partitions over an in-memory table: both strategies, Java's order and limits, the
//! drop commits.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::*;
use crate::commit::{CommitMessage, DataIncrement, commit_machine};
use crate::io::MemoryStore;
use crate::scan::planner::read_live_entries;
use crate::scan::snapshot_resolver::{latest_snapshot_id, read_snapshot};
use crate::spec::snapshot::decode_snapshot;
use crate::spec::{
    BinaryRow, CommitKind, CoreOptions, DataFileMeta, DataType, Datum, FileSource, TableSchema,
    TypeKind, decode_schema, encode_schema,
};
use crate::testkit;

fn options(kv: &[(&str, &str)]) -> CoreOptions {
    CoreOptions::new(
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

// ---------------------------------------------------------------------------------------
// Expiring over an in-memory table: partitions (dt STRING, hr INT), one file each.

const DAY: i64 = 86_400_000;
/// 2024-01-10T00:00:00Z.
const NOW: i64 = 1_704_844_800_000;

fn table(options: &[(&str, &str)]) -> (MemoryStore, TableSchema) {
    let opts: BTreeMap<String, String> = std::iter::once(("bucket".to_string(), "-1".to_string()))
        .chain(options.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    let json = format!(
        r#"{{"version":3,"id":0,"fields":[
            {{"id":0,"name":"dt","type":"STRING"}},
            {{"id":1,"name":"hr","type":"INT"}},
            {{"id":2,"name":"v","type":"STRING"}}],
          "highestFieldId":2,"partitionKeys":["dt","hr"],"primaryKeys":[],
          "options":{},"timeMillis":1700000000000}}"#,
        serde_json::to_string(&opts).unwrap()
    );
    let schema = decode_schema(json.as_bytes(), "schema/schema-0").unwrap();
    let mut store = MemoryStore::new();
    store.objects.insert(
        "schema/schema-0".into(),
        Bytes::from(encode_schema(&schema).unwrap()),
    );
    (store, schema)
}

fn row(dt: Option<&str>, hr: i32) -> BinaryRow {
    BinaryRow::encode(
        &[
            dt.map_or(Datum::Null, |d| Datum::String(d.into())),
            Datum::Int(hr),
        ],
        &[
            DataType::nullable(TypeKind::VarChar {
                length: i32::MAX as u32,
            }),
            DataType::nullable(TypeKind::Int),
        ],
    )
    .unwrap()
}

fn data_file(name: &str, created: i64) -> DataFileMeta {
    DataFileMeta {
        file_size: 100,
        row_count: 1,
        creation_time_millis: Some(created),
        file_source: Some(FileSource::Append),
        value_stats_cols: Some(vec![]),
        ..testkit::data_file(name)
    }
}

/// Commit one file per `(dt, hr, created)`.
fn fill(store: &mut MemoryStore, schema: &TableSchema, parts: &[(Option<&str>, i32, i64)]) {
    let messages: Vec<CommitMessage> = parts
        .iter()
        .enumerate()
        .map(|(i, (dt, hr, created))| CommitMessage {
            partition: row(*dt, *hr),
            bucket: 0,
            total_buckets: None,
            data_increment: DataIncrement {
                new_files: vec![data_file(&format!("f{i}.parquet"), *created)],
                ..Default::default()
            },
            compact_increment: Default::default(),
        })
        .collect();
    store
        .run(commit_machine(
            schema.clone(),
            messages,
            CommitMode::Append,
            CommitOptions::new("writer", NOW - DAY, 1),
        ))
        .unwrap();
}

fn expire(
    store: &mut MemoryStore,
    options: &[(&str, &str)],
    dry_run: bool,
) -> PartitionExpireOutcome {
    let config = PartitionExpireConfig::from_options(&self::options(options))
        .unwrap()
        .unwrap();
    store
        .run(expire_partitions_machine(
            config,
            NOW,
            CommitOptions::new("writer", NOW, 2),
            dry_run,
        ))
        .unwrap()
        .remove(0)
}

fn shown(outcome: &PartitionExpireOutcome) -> Vec<String> {
    outcome
        .partitions
        .iter()
        .map(ExpiredPartition::display)
        .collect()
}

fn live_partitions(store: &MemoryStore) -> Vec<String> {
    let mut store = store.clone();
    let m = Machine::once("live", |io| async move {
        let id = latest_snapshot_id(&io).await?.unwrap();
        let s = read_snapshot(&io, id).await?;
        read_live_entries(&io, &s).await
    });
    let mut names: Vec<String> = store
        .run(m)
        .unwrap()
        .remove(0)
        .into_iter()
        .map(|e| e.file.file_name)
        .collect();
    names.sort();
    names
}

fn snapshot_kind(store: &MemoryStore, id: i64) -> CommitKind {
    let bytes = &store.objects[&format!("snapshot/snapshot-{id}")];
    decode_snapshot(bytes, "s").unwrap().commit_kind
}

fn dated() -> Vec<(Option<&'static str>, i32, i64)> {
    vec![
        (Some("2024-01-09"), 1, NOW - 10 * DAY), // f0: 1 day old by value
        (Some("2024-01-01"), 3, NOW - DAY),      // f1: 9 days
        (Some("2023-12-25"), 2, NOW - DAY),      // f2: 16 days
        (Some("2024-01-01"), 12, NOW - 20 * DAY), // f3: 9 days
        (Some("no-date"), 0, NOW - 30 * DAY),    // f4: never parses
        (None, 5, NOW - 30 * DAY),               // f5: NULL dt
    ]
}

#[test]
fn values_time_in_java_order_with_batches() {
    let (mut store, schema) = table(&[]);
    fill(&mut store, &schema, &dated());
    // Dry run: text order of "dt,hr" ("2024-01-01,12" before "2024-01-01,3").
    let opts = [
        ("partition.expiration-time", "5 d"),
        ("partition.expiration-batch-size", "2"),
    ];
    let dry = expire(&mut store, &opts, true);
    assert_eq!(
        shown(&dry),
        [
            "dt=2023-12-25, hr=2",
            "dt=2024-01-01, hr=12",
            "dt=2024-01-01, hr=3"
        ]
    );
    assert!(dry.snapshot_ids.is_empty());
    assert_eq!(live_partitions(&store).len(), 6);
    // Two batches: two OVERWRITE snapshots.
    let done = expire(&mut store, &opts, false);
    assert_eq!(shown(&done), shown(&dry));
    assert_eq!(done.snapshot_ids, vec![2, 3]);
    assert_eq!(snapshot_kind(&store, 2), CommitKind::Overwrite);
    assert_eq!(snapshot_kind(&store, 3), CommitKind::Overwrite);
    assert_eq!(
        live_partitions(&store),
        ["f0.parquet", "f4.parquet", "f5.parquet"]
    );
    // Nothing left to expire: no commit.
    let again = expire(&mut store, &opts, false);
    assert!(again.partitions.is_empty() && again.snapshot_ids.is_empty());
    assert!(!store.objects.contains_key("snapshot/snapshot-4"));
}

#[test]
fn values_time_boundary_and_max_num() {
    let (mut store, schema) = table(&[]);
    fill(&mut store, &schema, &dated());
    // Exactly 9 days: 2024-01-01T00:00 is not before the cut-off, so it stays (strict).
    let out = expire(&mut store, &[("partition.expiration-time", "9 d")], true);
    assert_eq!(shown(&out), ["dt=2023-12-25, hr=2"]);
    let out = expire(
        &mut store,
        &[
            ("partition.expiration-time", "1 h"),
            ("partition.expiration-max-num", "2"),
        ],
        false,
    );
    assert_eq!(shown(&out), ["dt=2023-12-25, hr=2", "dt=2024-01-01, hr=12"]);
    assert_eq!(out.snapshot_ids, vec![2]);
    assert_eq!(
        live_partitions(&store),
        ["f0.parquet", "f1.parquet", "f4.parquet", "f5.parquet"]
    );
    // A pattern using hr: 2024-01-09 at 01:00 is 23 h old.
    let out = expire(
        &mut store,
        &[
            ("partition.expiration-time", "22 h"),
            ("partition.timestamp-pattern", "$dt $hr:00:00"),
        ],
        true,
    );
    assert_eq!(shown(&out), ["dt=2024-01-01, hr=3", "dt=2024-01-09, hr=1"]);
}

/// `partition.expiration-max-num` = 0 with expired partitions fails, as Java's expire does
/// (it limits the list to nothing, then refuses an empty drop); nothing is dropped.
#[test]
fn max_num_zero_fails_when_partitions_are_expired() {
    let (mut store, schema) = table(&[]);
    fill(&mut store, &schema, &dated());
    let config = PartitionExpireConfig::from_options(&options(&[
        ("partition.expiration-time", "9 d"),
        ("partition.expiration-max-num", "0"),
    ]))
    .unwrap()
    .unwrap();
    let err = store
        .run(expire_partitions_machine(
            config.clone(),
            NOW,
            CommitOptions::new("writer", NOW, 2),
            false,
        ))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("partition.expiration-max-num is 0"),
        "{err}"
    );
    assert!(!store.objects.contains_key("snapshot/snapshot-2"));
    // Nothing expired: nothing to refuse.
    let config = PartitionExpireConfig {
        expiration_millis: 1000 * DAY,
        ..config
    };
    let out = store
        .run(expire_partitions_machine(
            config,
            NOW,
            CommitOptions::new("writer", NOW, 2),
            false,
        ))
        .unwrap()
        .remove(0);
    assert!(out.partitions.is_empty());
}

/// A compaction planned before partition expiry dropped its partition conflicts; the error
/// says the partition is expired (Java `ConflictDetection`'s partition-expire check). A
/// conflict in a partition that is not expired keeps the plain message.
#[test]
fn conflict_in_an_expired_partition_says_so() {
    let opts = [("partition.expiration-time", "9 d")];
    let (mut store, schema) = table(&opts);
    fill(&mut store, &schema, &dated());
    let out = expire(&mut store, &opts, false);
    assert_eq!(shown(&out), ["dt=2023-12-25, hr=2"]);
    // f2 (dt=2023-12-25) was dropped; a compaction of it, planned before, commits now.
    let compact = |name: &str, dt: &str, hr: i32| CommitMessage {
        partition: row(Some(dt), hr),
        bucket: 0,
        total_buckets: None,
        data_increment: Default::default(),
        compact_increment: crate::commit::CompactIncrement {
            compact_before: vec![data_file(name, NOW - DAY)],
            compact_after: vec![data_file(&format!("{name}.compacted"), NOW)],
            ..Default::default()
        },
    };
    let err = store
        .run(commit_machine(
            schema.clone(),
            vec![compact("f2.parquet", "2023-12-25", 2)],
            CommitMode::Append,
            CommitOptions::new("compactor", NOW, 3),
        ))
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::CommitConflict { .. }), "{text}");
    assert!(
        text.contains("expired partitions (partition dt=2023-12-25, hr=2)"),
        "{text}"
    );
    // A missing file of a live partition: the plain deletion conflict.
    let err = store
        .run(commit_machine(
            schema.clone(),
            vec![compact("gone.parquet", "2024-01-09", 1)],
            CommitMode::Append,
            CommitOptions::new("compactor", NOW, 4),
        ))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not previously added"), "{err}");
    assert!(!err.contains("expired"), "{err}");
}

#[test]
fn update_time_uses_the_newest_file() {
    let (mut store, schema) = table(&[]);
    let mut parts = dated();
    // A second, new file in 2024-01-01/12 keeps it.
    parts.push((Some("2024-01-01"), 12, NOW - DAY));
    fill(&mut store, &schema, &parts);
    let out = expire(
        &mut store,
        &[
            ("partition.expiration-time", "5 d"),
            ("partition.expiration-strategy", "update-time"),
        ],
        false,
    );
    // NULL shown as the default name; "2024-01-09,1" > "__DEFAULT..." > "2024..."? No:
    // digits sort before '_' and letters, so: 2024-01-09,1 then __DEFAULT_PARTITION__,5
    // then no-date,0.
    assert_eq!(
        shown(&out),
        [
            "dt=2024-01-09, hr=1",
            "dt=__DEFAULT_PARTITION__, hr=5",
            "dt=no-date, hr=0"
        ]
    );
    assert_eq!(out.snapshot_ids, vec![2]);
    assert_eq!(
        live_partitions(&store),
        ["f1.parquet", "f2.parquet", "f3.parquet", "f6.parquet"]
    );
}

#[test]
fn drop_commit_is_not_mistaken_for_an_earlier_commit() {
    // The drop uses the writer's user and the batch identifier, as the write did.
    let (mut store, schema) = table(&[]);
    fill(&mut store, &schema, &dated());
    let out = expire(&mut store, &[("partition.expiration-time", "12 d")], false);
    assert_eq!(shown(&out), ["dt=2023-12-25, hr=2"]);
    assert_eq!(out.snapshot_ids, vec![2]);
    // Unpartitioned tables and empty tables: nothing.
    let (mut store, _) = table(&[]);
    let out = expire(&mut store, &[("partition.expiration-time", "1 d")], false);
    assert_eq!(out, PartitionExpireOutcome::default());
}
