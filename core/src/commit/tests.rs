//! Commit tests over an in-memory store: read back with the scan planner, idempotence,
//! concurrent committers, crash consistency, conflicts, snapshot JSON.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use super::committer::WRITER_VERSION;
use super::*;
use crate::error::Error;
use crate::io::{IoAnswer, IoErrorKind, IoOp, Machine, MemoryStore, PutMode, Step};
use crate::scan::{Plan, ScanRequest, plan_scan};
use crate::spec::snapshot::tests::JAVA_KEYS;
use crate::spec::snapshot::{BATCH_COMMIT_IDENTIFIER, decode_snapshot, snapshot_path};
use crate::spec::{
    BinaryRow, CommitKind, DataFileMeta, DataType, Datum, DeletionVectorMeta, FileSource,
    IndexFileMeta, Snapshot, TableSchema, TypeKind, decode_index_manifest, decode_manifest,
    decode_manifest_list, decode_schema, encode_schema,
};
use crate::testkit;

// ---------------------------------------------------------------------------------------
// Fixtures

fn schema_json(partitioned: bool, primary_key: bool, options: &[(&str, &str)]) -> String {
    let mut opts: BTreeMap<String, String> = BTreeMap::new();
    opts.insert("bucket".into(), if primary_key { "2" } else { "-1" }.into());
    for (k, v) in options {
        opts.insert((*k).into(), (*v).into());
    }
    let opts = serde_json::to_string(&opts).unwrap();
    format!(
        r#"{{"version":3,"id":0,"fields":[
            {{"id":0,"name":"dt","type":"STRING NOT NULL"}},
            {{"id":1,"name":"k","type":"INT NOT NULL"}},
            {{"id":2,"name":"v","type":"STRING"}}],
          "highestFieldId":2,
          "partitionKeys":[{}],
          "primaryKeys":[{}],
          "options":{opts},
          "timeMillis":1700000000000}}"#,
        if partitioned { r#""dt""# } else { "" },
        if primary_key {
            if partitioned { r#""dt","k""# } else { r#""k""# }
        } else {
            ""
        },
    )
}

/// A store holding `schema/schema-0` of a new table.
fn new_table(
    partitioned: bool,
    primary_key: bool,
    options: &[(&str, &str)],
) -> (MemoryStore, TableSchema) {
    let json = schema_json(partitioned, primary_key, options);
    let schema = decode_schema(json.as_bytes(), "schema/schema-0").unwrap();
    let mut store = MemoryStore::new();
    store.objects.insert(
        "schema/schema-0".into(),
        Bytes::from(encode_schema(&schema).unwrap()),
    );
    (store, schema)
}

fn partition(dt: &str) -> BinaryRow {
    BinaryRow::encode(
        &[Datum::String(dt.into())],
        &[DataType::not_null(TypeKind::VarChar {
            length: i32::MAX as u32,
        })],
    )
    .unwrap()
}

fn key(k: i32) -> BinaryRow {
    BinaryRow::encode(&[Datum::Int(k)], &[DataType::not_null(TypeKind::Int)]).unwrap()
}

fn file(name: &str, rows: i64) -> DataFileMeta {
    DataFileMeta {
        file_size: 100 + rows,
        row_count: rows,
        max_sequence_number: rows.saturating_sub(1),
        creation_time_millis: Some(1_700_000_000_000),
        file_source: Some(FileSource::Append),
        value_stats_cols: Some(vec![]),
        ..testkit::data_file(name)
    }
}

fn pk_file(name: &str, rows: i64, level: i32, min: i32, max: i32) -> DataFileMeta {
    DataFileMeta {
        min_key: key(min),
        max_key: key(max),
        level,
        ..file(name, rows)
    }
}

fn message(part: Option<&str>, bucket: i32, new_files: Vec<DataFileMeta>) -> CommitMessage {
    CommitMessage {
        partition: part.map_or_else(BinaryRow::empty, partition),
        bucket,
        total_buckets: None,
        data_increment: DataIncrement {
            new_files,
            ..Default::default()
        },
        compact_increment: CompactIncrement::default(),
    }
}

fn compaction(
    part: Option<&str>,
    bucket: i32,
    before: Vec<DataFileMeta>,
    after: Vec<DataFileMeta>,
) -> CommitMessage {
    CommitMessage {
        partition: part.map_or_else(BinaryRow::empty, partition),
        bucket,
        total_buckets: None,
        data_increment: DataIncrement::default(),
        compact_increment: CompactIncrement {
            compact_before: before,
            compact_after: after,
            ..Default::default()
        },
    }
}

/// Put some bytes where the messages' new files live (the commit never reads them).
fn put_data_files(store: &mut MemoryStore, schema: &TableSchema, messages: &[CommitMessage]) {
    for p in abort::abort_paths(schema, messages).unwrap() {
        store
            .objects
            .insert(p, Bytes::from_static(b"PAR1 fake data PAR1"));
    }
}

fn opts(user: &str, seed: u64) -> CommitOptions {
    CommitOptions::new(user, 1_700_000_000_123, seed)
}

fn run_commit(
    store: &mut MemoryStore,
    schema: &TableSchema,
    messages: Vec<CommitMessage>,
    mode: CommitMode,
    options: CommitOptions,
) -> crate::Result<CommitOutcome> {
    put_data_files(store, schema, &messages);
    let mut out = store.run(commit_machine(schema.clone(), messages, mode, options))?;
    assert_eq!(out.len(), 1);
    Ok(out.remove(0))
}

fn plan(store: &MemoryStore) -> Plan {
    let mut store = store.clone();
    let m: Machine<Plan> = Machine::once("plan", |io| async move {
        plan_scan(&io, &ScanRequest::default()).await
    });
    store.run(m).unwrap().remove(0)
}

/// Live files as (partition dt or "", bucket, level, name).
fn live(store: &MemoryStore) -> BTreeSet<(String, i32, i32, String)> {
    let p = plan(store);
    p.splits
        .iter()
        .flat_map(|s| {
            let dt = s
                .partition
                .fields(
                    &p.schema
                        .partition_fields()
                        .unwrap()
                        .iter()
                        .map(|f| f.data_type.clone())
                        .collect::<Vec<_>>(),
                )
                .unwrap()
                .first()
                .map_or(String::new(), |d| d.to_string());
            s.data_files
                .iter()
                .map(move |f| (dt.clone(), s.bucket, f.level, f.file_name.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn names(set: &BTreeSet<(String, i32, i32, String)>) -> BTreeSet<String> {
    set.iter().map(|f| f.3.clone()).collect()
}

fn snapshot(store: &MemoryStore, id: i64) -> Snapshot {
    let path = snapshot_path(id);
    decode_snapshot(&store.objects[&path], &path).unwrap()
}

fn snapshot_ids(store: &MemoryStore) -> Vec<i64> {
    store
        .objects
        .keys()
        .filter_map(|k| k.strip_prefix("snapshot/snapshot-")?.parse().ok())
        .collect::<BTreeSet<i64>>()
        .into_iter()
        .collect()
}

/// Every metadata file referenced by some snapshot.
fn referenced(store: &MemoryStore) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for id in snapshot_ids(store) {
        let s = snapshot(store, id);
        let mut lists = vec![s.base_manifest_list.clone(), s.delta_manifest_list.clone()];
        lists.extend(s.changelog_manifest_list.clone());
        for l in lists {
            let path = format!("manifest/{l}");
            for m in decode_manifest_list(&store.objects[&path], &path).unwrap() {
                out.insert(format!("manifest/{}", m.file_name));
            }
            out.insert(path);
        }
        if let Some(i) = s.index_manifest {
            out.insert(format!("manifest/{i}"));
        }
    }
    out
}

fn manifest_files(store: &MemoryStore) -> BTreeSet<String> {
    store
        .objects
        .keys()
        .filter(|k| k.starts_with("manifest/"))
        .cloned()
        .collect()
}

/// The table is consistent: snapshots 1..=n without gaps, every referenced file present,
/// LATEST (if any) not beyond the last snapshot, and the planner reads the last one.
fn assert_consistent(store: &MemoryStore) {
    let ids = snapshot_ids(store);
    assert_eq!(
        ids,
        (1..=ids.len() as i64).collect::<Vec<_>>(),
        "snapshot ids"
    );
    for f in referenced(store) {
        assert!(
            store.objects.contains_key(&f),
            "{f} is referenced but missing"
        );
    }
    if let Some(h) = store.objects.get("snapshot/LATEST") {
        let h: i64 = std::str::from_utf8(h).unwrap().parse().unwrap();
        assert!(h <= ids.len() as i64);
    }
    let p = plan(store);
    assert_eq!(p.snapshot.map(|s| s.id), ids.last().copied());
}

// ---------------------------------------------------------------------------------------
// Append, overwrite, compaction, read back

#[test]
fn append_commits_read_back_with_the_planner() {
    let (mut store, schema) = new_table(true, false, &[]);
    let m1 = vec![
        message(Some("a"), 0, vec![file("data-a1.parquet", 10)]),
        message(
            Some("b"),
            0,
            vec![file("data-b1.parquet", 5), file("data-b2.parquet", 7)],
        ),
    ];
    let out = run_commit(&mut store, &schema, m1, CommitMode::Append, opts("u1", 1)).unwrap();
    assert_eq!(
        out,
        CommitOutcome {
            snapshot_ids: vec![1],
            already_committed: false,
            attempts: 1,
            ..CommitOutcome::default()
        }
    );
    let s1 = snapshot(&store, 1);
    assert_eq!(s1.version, 3);
    assert_eq!(s1.commit_kind, CommitKind::Append);
    assert_eq!(s1.commit_user, "u1");
    assert_eq!(s1.commit_identifier, BATCH_COMMIT_IDENTIFIER);
    assert_eq!(s1.time_millis, 1_700_000_000_123);
    assert_eq!((s1.total_record_count, s1.delta_record_count), (22, 22));
    assert_eq!(s1.schema_id, 0);
    assert_eq!(s1.next_row_id, Some(0));
    assert_eq!(s1.changelog_manifest_list, None);
    assert_eq!(s1.index_manifest, None);
    assert_eq!(s1.writer_version.as_deref(), Some(WRITER_VERSION));
    assert!(s1.uuid.is_some());
    assert_eq!(&store.objects["snapshot/LATEST"][..], b"1");
    // Base list empty, delta list one manifest with three ADDs.
    let base = decode_manifest_list(
        &store.objects[&format!("manifest/{}", s1.base_manifest_list)],
        "b",
    )
    .unwrap();
    assert!(base.is_empty());
    assert_eq!(
        s1.base_manifest_list_size,
        Some(store.objects[&format!("manifest/{}", s1.base_manifest_list)].len() as i64)
    );
    let delta = decode_manifest_list(
        &store.objects[&format!("manifest/{}", s1.delta_manifest_list)],
        "d",
    )
    .unwrap();
    assert_eq!(delta.len(), 1);
    assert_eq!(
        (delta[0].num_added_files, delta[0].num_deleted_files),
        (3, 0)
    );
    assert_eq!(
        delta[0].file_size,
        store.objects[&format!("manifest/{}", delta[0].file_name)].len() as i64
    );
    assert_eq!(
        names(&live(&store)),
        ["data-a1.parquet", "data-b1.parquet", "data-b2.parquet"]
            .map(String::from)
            .into()
    );
    assert_consistent(&store);

    // Second commit.
    let m2 = vec![message(Some("a"), 0, vec![file("data-a2.parquet", 3)])];
    let out = run_commit(&mut store, &schema, m2, CommitMode::Append, opts("u2", 2)).unwrap();
    assert_eq!(out.snapshot_ids, vec![2]);
    let s2 = snapshot(&store, 2);
    assert_eq!((s2.total_record_count, s2.delta_record_count), (25, 3));
    let base = decode_manifest_list(
        &store.objects[&format!("manifest/{}", s2.base_manifest_list)],
        "b",
    )
    .unwrap();
    assert_eq!(base.len(), 1, "previous delta manifest becomes the base");
    assert_eq!(live(&store).len(), 4);
    assert_eq!(&store.objects["snapshot/LATEST"][..], b"2");
    assert_consistent(&store);
}

#[test]
fn empty_commit_publishes_nothing_unless_asked() {
    let (mut store, schema) = new_table(false, false, &[]);
    let out = run_commit(
        &mut store,
        &schema,
        vec![],
        CommitMode::Append,
        opts("u", 1),
    )
    .unwrap();
    assert_eq!(out, CommitOutcome::default());
    assert!(snapshot_ids(&store).is_empty());
    let mut o = opts("u", 1);
    o.ignore_empty_commit = false;
    let out = run_commit(&mut store, &schema, vec![], CommitMode::Append, o).unwrap();
    assert_eq!(out.snapshot_ids, vec![1]);
    assert_eq!(snapshot(&store, 1).total_record_count, 0);
}

#[test]
fn overwrite_static_dynamic_and_whole_table() {
    let (mut store, schema) = new_table(true, false, &[]);
    let m = vec![
        message(Some("a"), 0, vec![file("a1.parquet", 1)]),
        message(Some("b"), 0, vec![file("b1.parquet", 2)]),
        message(Some("c"), 0, vec![file("c1.parquet", 4)]),
    ];
    run_commit(&mut store, &schema, m, CommitMode::Append, opts("u1", 1)).unwrap();

    // Static: partition b only.
    let spec: BTreeMap<String, String> = [("dt".to_string(), "b".to_string())].into();
    let mode = CommitMode::Overwrite {
        partition_filter: Some(spec.clone()),
        dynamic: false,
    };
    let m = vec![message(Some("b"), 0, vec![file("b2.parquet", 8)])];
    let out = run_commit(&mut store, &schema, m, mode.clone(), opts("u2", 2)).unwrap();
    assert_eq!(out.snapshot_ids, vec![2]);
    let s = snapshot(&store, 2);
    assert_eq!(s.commit_kind, CommitKind::Overwrite);
    assert_eq!((s.total_record_count, s.delta_record_count), (13, 6));
    assert_eq!(
        names(&live(&store)),
        ["a1.parquet", "b2.parquet", "c1.parquet"]
            .map(String::from)
            .into()
    );
    // A file outside the static spec is refused.
    let bad = vec![message(Some("a"), 0, vec![file("a9.parquet", 1)])];
    let err = run_commit(&mut store, &schema, bad, mode, opts("u3", 3)).unwrap_err();
    assert!(err.to_string().contains("a9.parquet"), "{err}");

    // Dynamic: only partition c is replaced.
    let mode = CommitMode::Overwrite {
        partition_filter: None,
        dynamic: true,
    };
    let m = vec![message(Some("c"), 0, vec![file("c2.parquet", 16)])];
    run_commit(&mut store, &schema, m, mode.clone(), opts("u4", 4)).unwrap();
    assert_eq!(
        names(&live(&store)),
        ["a1.parquet", "b2.parquet", "c2.parquet"]
            .map(String::from)
            .into()
    );
    assert_eq!(snapshot(&store, 3).total_record_count, 25);
    // Dynamic without files: nothing to do.
    let out = run_commit(&mut store, &schema, vec![], mode, opts("u5", 5)).unwrap();
    assert!(out.snapshot_ids.is_empty());

    // Whole table (static, no spec): an empty overwrite truncates.
    let mode = CommitMode::Overwrite {
        partition_filter: None,
        dynamic: false,
    };
    let out = run_commit(&mut store, &schema, vec![], mode, opts("u6", 6)).unwrap();
    assert_eq!(out.snapshot_ids, vec![4]);
    assert!(live(&store).is_empty());
    let s = snapshot(&store, 4);
    assert_eq!((s.total_record_count, s.delta_record_count), (0, -25));
    assert_consistent(&store);
}

#[test]
fn compaction_and_write_in_one_commit_are_two_snapshots() {
    let (mut store, schema) = new_table(false, true, &[]);
    let m = vec![message(
        None,
        0,
        vec![pk_file("l0-a", 5, 0, 1, 5), pk_file("l0-b", 5, 0, 3, 9)],
    )];
    run_commit(&mut store, &schema, m, CommitMode::Append, opts("w", 1)).unwrap();
    let mut msg = compaction(
        None,
        0,
        vec![pk_file("l0-a", 5, 0, 1, 5), pk_file("l0-b", 5, 0, 3, 9)],
        vec![pk_file("l5-c", 8, 5, 1, 9)],
    );
    msg.data_increment.new_files = vec![pk_file("l0-d", 2, 0, 2, 4)];
    let out = run_commit(
        &mut store,
        &schema,
        vec![msg],
        CommitMode::Append,
        opts("w2", 2),
    )
    .unwrap();
    assert_eq!(out.snapshot_ids, vec![2, 3]);
    assert_eq!(snapshot(&store, 2).commit_kind, CommitKind::Append);
    let s3 = snapshot(&store, 3);
    assert_eq!(s3.commit_kind, CommitKind::Compact);
    assert_eq!((s3.total_record_count, s3.delta_record_count), (10, -2));
    assert_eq!(
        live(&store)
            .into_iter()
            .map(|f| (f.2, f.3))
            .collect::<BTreeSet<_>>(),
        [(0, "l0-d".to_string()), (5, "l5-c".to_string())].into()
    );
    assert_consistent(&store);
}

#[test]
fn changelog_and_index_manifests() {
    let (mut store, schema) = new_table(false, true, &[("deletion-vectors.enabled", "true")]);
    let dv = |name: &str, files: &[&str]| IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: name.into(),
        file_size: 10,
        row_count: files.len() as i64,
        dv_ranges: Some(
            files
                .iter()
                .map(|f| DeletionVectorMeta {
                    data_file_name: (*f).into(),
                    offset: 1,
                    length: 4,
                    cardinality: Some(1),
                })
                .collect(),
        ),
        external_path: None,
        global_index: None,
    };
    let mut m = message(None, 0, vec![pk_file("f1", 5, 1, 1, 5)]);
    m.data_increment.changelog_files = vec![file("changelog-1.parquet", 5)];
    run_commit(
        &mut store,
        &schema,
        vec![m],
        CommitMode::Append,
        opts("u1", 1),
    )
    .unwrap();
    let s1 = snapshot(&store, 1);
    assert_eq!(s1.changelog_record_count, Some(5));
    let cl = s1.changelog_manifest_list.clone().unwrap();
    let cl = decode_manifest_list(&store.objects[&format!("manifest/{cl}")], "c").unwrap();
    assert_eq!(cl.len(), 1);
    assert_eq!(cl[0].num_added_files, 1);

    // A compaction adding a deletion vector to f1: index manifest with one DV entry.
    let mut c = compaction(None, 0, vec![], vec![]);
    c.compact_increment.new_index_files = vec![dv("index-1", &["f1"])];
    let out = run_commit(
        &mut store,
        &schema,
        vec![c],
        CommitMode::Append,
        opts("u2", 2),
    )
    .unwrap();
    assert_eq!(out.snapshot_ids, vec![2]);
    let s2 = snapshot(&store, 2);
    assert_eq!(s2.commit_kind, CommitKind::Compact);
    let im = s2.index_manifest.clone().unwrap();
    let entries = decode_index_manifest(&store.objects[&format!("manifest/{im}")], "i").unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].index_file.file_name, "index-1");
    // The planner sees the deletion file.
    let p = plan(&store);
    let dfs = p.splits[0].deletion_files.clone().unwrap();
    assert_eq!(dfs[0].as_ref().unwrap().path, "index/index-1");

    // An unrelated append keeps the index manifest.
    let m = message(None, 1, vec![pk_file("f2", 1, 0, 7, 7)]);
    run_commit(
        &mut store,
        &schema,
        vec![m],
        CommitMode::Append,
        opts("u3", 3),
    )
    .unwrap();
    assert_eq!(snapshot(&store, 3).index_manifest, Some(im.clone()));

    // Replacing the DV of bucket 0 (bucketed DV: per bucket replace).
    let mut c = compaction(None, 0, vec![], vec![]);
    c.compact_increment.deleted_index_files = vec![dv("index-1", &["f1"])];
    c.compact_increment.new_index_files = vec![dv("index-2", &["f1"])];
    run_commit(
        &mut store,
        &schema,
        vec![c],
        CommitMode::Append,
        opts("u4", 4),
    )
    .unwrap();
    let im = snapshot(&store, 4).index_manifest.unwrap();
    let entries = decode_index_manifest(&store.objects[&format!("manifest/{im}")], "i").unwrap();
    assert_eq!(
        entries
            .iter()
            .map(|e| e.index_file.file_name.as_str())
            .collect::<Vec<_>>(),
        vec!["index-2"]
    );

    // Overwriting the table drops its index files too.
    let mode = CommitMode::Overwrite {
        partition_filter: None,
        dynamic: true,
    };
    run_commit(&mut store, &schema, vec![], mode, opts("u5", 5)).unwrap();
    let im = snapshot(&store, 5).index_manifest.unwrap();
    assert!(
        decode_index_manifest(&store.objects[&format!("manifest/{im}")], "i")
            .unwrap()
            .is_empty()
    );
    assert_consistent(&store);
}

#[test]
fn overwrite_of_a_primary_key_table_upgrades_disjoint_files() {
    let (mut store, schema) = new_table(false, true, &[]);
    let mode = CommitMode::Overwrite {
        partition_filter: None,
        dynamic: true,
    };
    let m = vec![
        message(
            None,
            0,
            vec![pk_file("b", 2, 0, 5, 9), pk_file("a", 2, 0, 1, 4)],
        ),
        message(
            None,
            1,
            vec![pk_file("c", 2, 0, 1, 4), pk_file("d", 2, 0, 4, 6)],
        ),
    ];
    run_commit(&mut store, &schema, m, mode, opts("u", 1)).unwrap();
    let levels: BTreeMap<String, i32> = live(&store).into_iter().map(|f| (f.3, f.2)).collect();
    // Bucket 0 is disjoint: upgraded to the max level 5; bucket 1 overlaps: stays at 0.
    assert_eq!(levels["a"], 5);
    assert_eq!(levels["b"], 5);
    assert_eq!(levels["c"], 0);
    assert_eq!(levels["d"], 0);
}

// ---------------------------------------------------------------------------------------
// Row tracking

#[test]
fn row_tracking_assigns_first_row_ids() {
    let (mut store, schema) = new_table(true, false, &[("row-tracking.enabled", "true")]);
    let m = vec![
        message(
            Some("a"),
            0,
            vec![file("a1.parquet", 10), file("a2.parquet", 5)],
        ),
        message(Some("b"), 0, vec![file("b1.parquet", 3)]),
    ];
    run_commit(&mut store, &schema, m, CommitMode::Append, opts("u", 1)).unwrap();
    let s1 = snapshot(&store, 1);
    assert_eq!(s1.next_row_id, Some(18));
    let p = plan(&store);
    let mut ids: BTreeMap<String, (Option<i64>, i64, i64)> = BTreeMap::new();
    for s in &p.splits {
        for f in &s.data_files {
            ids.insert(
                f.file_name.clone(),
                (f.first_row_id, f.min_sequence_number, f.max_sequence_number),
            );
        }
    }
    // Partitions in Java's HashMap order of their BinaryRow hash codes, files in order.
    let a_first = ids["a1.parquet"].0.unwrap();
    assert_eq!(ids["a2.parquet"].0, Some(a_first + 10));
    if a_first == 0 {
        assert_eq!(ids["b1.parquet"].0, Some(15));
    } else {
        assert_eq!((a_first, ids["b1.parquet"].0), (3, Some(0)));
    }
    // Sequence numbers from the snapshot id (min was 0).
    assert_eq!((ids["a1.parquet"].1, ids["a1.parquet"].2), (1, 1));
    // Manifest row id bounds.
    let delta = decode_manifest_list(
        &store.objects[&format!("manifest/{}", s1.delta_manifest_list)],
        "d",
    )
    .unwrap();
    assert_eq!(
        (delta[0].min_row_id, delta[0].max_row_id),
        (Some(0), Some(17))
    );
    // The next commit continues from nextRowId.
    let m = vec![message(Some("a"), 0, vec![file("a3.parquet", 2)])];
    run_commit(&mut store, &schema, m, CommitMode::Append, opts("u2", 2)).unwrap();
    assert_eq!(snapshot(&store, 2).next_row_id, Some(20));
    let p = plan(&store);
    let a3 = p
        .splits
        .iter()
        .flat_map(|s| &s.data_files)
        .find(|f| f.file_name == "a3.parquet")
        .unwrap();
    assert_eq!(a3.first_row_id, Some(18));
}

// ---------------------------------------------------------------------------------------
// Idempotence

#[test]
fn the_same_commit_twice_gives_one_snapshot() {
    let (mut store, schema) = new_table(true, false, &[]);
    let m = vec![message(Some("a"), 0, vec![file("a1.parquet", 10)])];
    let first = run_commit(
        &mut store,
        &schema,
        m.clone(),
        CommitMode::Append,
        opts("u", 1),
    )
    .unwrap();
    assert_eq!(first.snapshot_ids, vec![1]);
    // Another user commits in between.
    let other = vec![message(Some("b"), 0, vec![file("b1.parquet", 1)])];
    run_commit(&mut store, &schema, other, CommitMode::Append, opts("v", 2)).unwrap();
    // The same (user, identifier) again, with another seed: nothing new.
    let again = run_commit(
        &mut store,
        &schema,
        m.clone(),
        CommitMode::Append,
        opts("u", 3),
    )
    .unwrap();
    assert_eq!(
        again,
        CommitOutcome {
            snapshot_ids: vec![],
            already_committed: true,
            attempts: 0,
            ..CommitOutcome::default()
        }
    );
    assert_eq!(snapshot_ids(&store), vec![1, 2]);
    // With check_from_snapshot after the user's snapshot, it is not seen: committed again
    // (the caller said nothing of it can be older), and the append check does not refuse.
    let streaming = |id: i64| opts("s", 10 + id as u64).with_identifier(id);
    let m = |n: &str| vec![message(Some("c"), 0, vec![file(n, 1)])];
    assert_eq!(
        run_commit(
            &mut store,
            &schema,
            m("c1"),
            CommitMode::Append,
            streaming(5)
        )
        .unwrap()
        .snapshot_ids,
        vec![3]
    );
    // Streaming identifiers: an older or equal identifier is committed, a newer one is not.
    let out = run_commit(
        &mut store,
        &schema,
        m("c1"),
        CommitMode::Append,
        streaming(4),
    )
    .unwrap();
    assert!(out.already_committed && out.snapshot_ids.is_empty());
    let out = run_commit(
        &mut store,
        &schema,
        m("c2"),
        CommitMode::Append,
        streaming(6),
    )
    .unwrap();
    assert_eq!(out.snapshot_ids, vec![4]);
    let out = run_commit(
        &mut store,
        &schema,
        m("c3"),
        CommitMode::Append,
        streaming(6).with_check_from_snapshot(Some(4)),
    )
    .unwrap();
    assert_eq!(
        out.snapshot_ids,
        vec![5],
        "snapshot 4 is not after snapshot 4"
    );
    assert_consistent(&store);
}

#[test]
fn a_commit_cut_between_its_two_snapshots_completes_the_second_only() {
    let (mut store, schema) = new_table(false, true, &[]);
    run_commit(
        &mut store,
        &schema,
        vec![message(None, 0, vec![pk_file("x", 5, 0, 1, 5)])],
        CommitMode::Append,
        opts("w", 1),
    )
    .unwrap();
    let mut msg = compaction(
        None,
        0,
        vec![pk_file("x", 5, 0, 1, 5)],
        vec![pk_file("y", 5, 1, 1, 5)],
    );
    msg.data_increment.new_files = vec![pk_file("z", 1, 0, 9, 9)];
    // Publish only the write part: stop right after its snapshot Put.
    let mut m = commit_machine(
        schema.clone(),
        vec![msg.clone()],
        CommitMode::Append,
        opts("u", 7),
    );
    drive_until_put(&mut store, &mut m, |op| op.path() == "snapshot/snapshot-2");
    drop(m);
    assert_eq!(snapshot_ids(&store), vec![1, 2]);
    let out = run_commit(
        &mut store,
        &schema,
        vec![msg],
        CommitMode::Append,
        opts("u", 8),
    )
    .unwrap();
    assert_eq!(
        out,
        CommitOutcome {
            snapshot_ids: vec![3],
            already_committed: true,
            attempts: 1,
            ..CommitOutcome::default()
        }
    );
    assert_eq!(snapshot(&store, 3).commit_kind, CommitKind::Compact);
    assert_eq!(names(&live(&store)), ["y", "z"].map(String::from).into());
    assert_consistent(&store);
}

// ---------------------------------------------------------------------------------------
// Drivers

/// Drive `m` over `store`, answering every request, until a `Put` matching `stop` has been
/// applied (then return without answering further), or the machine ends.
fn drive_until_put<T: Send + 'static>(
    store: &mut MemoryStore,
    m: &mut Machine<T>,
    stop: impl Fn(&IoOp) -> bool,
) {
    loop {
        match m.step().unwrap() {
            Step::NeedIo(round) => {
                let mut hit = false;
                for r in round {
                    let a = store.answer(&r.op);
                    hit |= matches!(r.op, IoOp::Put { .. }) && stop(&r.op);
                    m.provide(r.id, a).unwrap();
                }
                if hit {
                    return;
                }
            }
            Step::Done => return,
            Step::Emit(_) | Step::Work(_) | Step::Wait => {}
        }
    }
}

/// How the k-th `Put` (0-based) of a run is disturbed.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// Applied, then the host stops answering (a crash).
    Crash,
    /// Applied, but answered with an error (outcome unknown to the machine).
    AppliedButError,
    /// Not applied, answered with an error.
    Rejected,
}

/// Drive `m` with the `k`-th Put disturbed as `cut`. Returns the machine's result (`None`
/// for a crash) and whether the k-th Put happened at all.
fn drive_with_cut(
    store: &mut MemoryStore,
    mut m: Machine<CommitOutcome>,
    k: usize,
    cut: Cut,
) -> (Option<crate::Result<CommitOutcome>>, bool) {
    let mut puts = 0;
    let mut out = None;
    loop {
        let step = match m.step() {
            Ok(s) => s,
            Err(e) => return (Some(Err(e)), puts > k),
        };
        match step {
            Step::NeedIo(round) => {
                let mut crashed = false;
                for r in round {
                    let is_put = matches!(r.op, IoOp::Put { .. });
                    let answer = if is_put && puts == k {
                        match cut {
                            Cut::Crash => {
                                store.answer(&r.op);
                                crashed = true;
                                IoAnswer::error(IoErrorKind::Other)
                            }
                            Cut::AppliedButError => {
                                store.answer(&r.op);
                                IoAnswer::error(IoErrorKind::Transient)
                            }
                            Cut::Rejected => IoAnswer::error(IoErrorKind::Other),
                        }
                    } else {
                        store.answer(&r.op)
                    };
                    if is_put {
                        puts += 1;
                    }
                    m.provide(r.id, answer).unwrap();
                }
                if crashed {
                    return (None, true);
                }
            }
            Step::Emit(o) => out = Some(Ok(o)),
            Step::Done => return (out, puts > k),
            Step::Work(_) | Step::Wait => {}
        }
    }
}

/// A base table with one snapshot, and a two-part commit on it that merges manifests.
fn crash_fixture() -> (MemoryStore, TableSchema, Vec<CommitMessage>) {
    let (mut store, schema) = new_table(
        true,
        true,
        &[
            ("manifest.merge-min-count", "2"),
            ("changelog-producer", "input"),
        ],
    );
    for (i, dt) in ["a", "b"].iter().enumerate() {
        run_commit(
            &mut store,
            &schema,
            vec![message(
                Some(dt),
                0,
                vec![pk_file(&format!("{dt}-x"), 5, 0, 1, 5)],
            )],
            CommitMode::Append,
            opts(&format!("base{i}"), 100 + i as u64),
        )
        .unwrap();
    }
    let mut msg = compaction(
        Some("a"),
        0,
        vec![pk_file("a-x", 5, 0, 1, 5)],
        vec![pk_file("a-y", 5, 1, 1, 5)],
    );
    msg.data_increment.new_files = vec![pk_file("a-z", 1, 0, 9, 9)];
    msg.data_increment.changelog_files = vec![file("changelog-a", 1)];
    let msgs = vec![msg, message(Some("b"), 1, vec![pk_file("b-w", 2, 0, 3, 4)])];
    put_data_files(&mut store, &schema, &msgs);
    (store, schema, msgs)
}

fn crash_expected_live() -> BTreeSet<String> {
    ["a-y", "a-z", "b-x", "b-w"].map(String::from).into()
}

#[test]
fn crash_after_every_put_then_rerun_commits_exactly_once() {
    let (base_store, schema, msgs) = crash_fixture();
    let base_ids = snapshot_ids(&base_store);
    let base_live = names(&live(&base_store));
    let mut k = 0;
    loop {
        let mut store = base_store.clone();
        let m = commit_machine(
            schema.clone(),
            msgs.clone(),
            CommitMode::Append,
            opts("c", 42),
        );
        let (result, happened) = drive_with_cut(&mut store, m, k, Cut::Crash);
        if !happened {
            // Past the last Put: the uncut run.
            assert_eq!(result.unwrap().unwrap().snapshot_ids, vec![3, 4]);
            break;
        }
        assert!(result.is_none());
        assert_consistent(&store);
        let ids = snapshot_ids(&store);
        assert!(ids.len() <= base_ids.len() + 2);
        if ids == base_ids {
            assert_eq!(names(&live(&store)), base_live, "cut after put {k}");
        }
        // Rerun (same seed: names already taken are skipped; another seed works too).
        for seed in [42, 43] {
            let mut s = store.clone();
            let out = s
                .run(commit_machine(
                    schema.clone(),
                    msgs.clone(),
                    CommitMode::Append,
                    opts("c", seed),
                ))
                .unwrap()
                .remove(0);
            assert_eq!(snapshot_ids(&s), vec![1, 2, 3, 4], "cut after put {k}");
            assert_eq!(names(&live(&s)), crash_expected_live(), "cut after put {k}");
            assert_eq!(
                out.snapshot_ids.len(),
                4 - ids.len(),
                "cut after put {k}: {out:?}"
            );
            assert_eq!(
                out.already_committed,
                ids.len() > 2,
                "cut after put {k}: {out:?}"
            );
            assert_eq!(snapshot(&s, 3).commit_kind, CommitKind::Append);
            assert_eq!(snapshot(&s, 4).commit_kind, CommitKind::Compact);
            assert_consistent(&s);
        }
        k += 1;
    }
    assert!(k >= 8, "{k} puts");
}

#[test]
fn failed_puts_clean_up_or_complete() {
    let (base_store, schema, msgs) = crash_fixture();
    for cut in [Cut::Rejected, Cut::AppliedButError] {
        let mut k = 0;
        loop {
            let mut store = base_store.clone();
            let m = commit_machine(
                schema.clone(),
                msgs.clone(),
                CommitMode::Append,
                opts("c", 42),
            );
            let (result, happened) = drive_with_cut(&mut store, m, k, cut);
            if !happened {
                break;
            }
            let result = result.unwrap();
            assert_consistent(&store);
            match result {
                // The snapshot and LATEST Puts are retried or ignored: the commit completes.
                Ok(_) => {
                    assert_eq!(snapshot_ids(&store), vec![1, 2, 3, 4], "{cut:?} {k}");
                    assert_eq!(names(&live(&store)), crash_expected_live());
                }
                Err(err) => {
                    // An IO error of the first part; or of the COMPACT part after the
                    // APPEND snapshot (3) was published, which the error says.
                    match &err {
                        Error::Io { .. } => {
                            assert_eq!(snapshot_ids(&store), vec![1, 2], "{cut:?} {k}")
                        }
                        Error::PartlyPublished { published, detail } => {
                            assert_eq!(published, &vec![3], "{cut:?} {k}");
                            assert!(detail.contains("IO error"), "{cut:?} {k}: {detail}");
                            assert_eq!(snapshot_ids(&store), vec![1, 2, 3], "{cut:?} {k}");
                        }
                        other => panic!("{cut:?} {k}: {other}"),
                    }
                    // Everything the failed attempt wrote is gone (an object whose Put was
                    // applied but answered with an error too).
                    let unreferenced: Vec<String> = manifest_files(&store)
                        .difference(&referenced(&store))
                        .cloned()
                        .collect();
                    assert!(unreferenced.is_empty(), "{cut:?} {k}: {unreferenced:?}");
                    let mut s = store.clone();
                    s.run(commit_machine(
                        schema.clone(),
                        msgs.clone(),
                        CommitMode::Append,
                        opts("c", 7),
                    ))
                    .unwrap();
                    assert_eq!(snapshot_ids(&s), vec![1, 2, 3, 4]);
                    assert_eq!(names(&live(&s)), crash_expected_live());
                }
            }
            k += 1;
        }
        assert!(k >= 8);
    }
}

// ---------------------------------------------------------------------------------------
// Concurrency

/// Run `machines` against one store, one round each in turn.
fn interleave(
    store: &mut MemoryStore,
    mut machines: Vec<Machine<CommitOutcome>>,
) -> Vec<crate::Result<CommitOutcome>> {
    let mut results: Vec<Option<crate::Result<CommitOutcome>>> =
        machines.iter().map(|_| None).collect();
    let mut done = vec![false; machines.len()];
    while done.iter().any(|d| !d) {
        for (i, m) in machines.iter_mut().enumerate() {
            if done[i] {
                continue;
            }
            // Advance this machine by one round (or to its end).
            loop {
                match m.step() {
                    Err(e) => {
                        results[i] = Some(Err(e));
                        done[i] = true;
                        break;
                    }
                    Ok(Step::NeedIo(round)) => {
                        for r in round {
                            let a = store.answer(&r.op);
                            m.provide(r.id, a).unwrap();
                        }
                        break;
                    }
                    Ok(Step::Emit(o)) => results[i] = Some(Ok(o)),
                    Ok(Step::Done) => {
                        done[i] = true;
                        break;
                    }
                    Ok(Step::Work(_) | Step::Wait) => {}
                }
            }
        }
    }
    results.into_iter().map(|r| r.unwrap()).collect()
}

#[test]
fn concurrent_committers_each_land_exactly_once() {
    for (n, merge_min) in [(2usize, "30"), (5, "2")] {
        let (mut store, schema) =
            new_table(true, false, &[("manifest.merge-min-count", merge_min)]);
        run_commit(
            &mut store,
            &schema,
            vec![message(Some("a"), 0, vec![file("base.parquet", 1)])],
            CommitMode::Append,
            opts("base", 1),
        )
        .unwrap();
        let mut machines = Vec::new();
        let mut expected: BTreeSet<String> = ["base.parquet".to_string()].into();
        for i in 0..n {
            let name = format!("f{i}.parquet");
            expected.insert(name.clone());
            let msgs = vec![message(
                Some(["a", "b"][i % 2]),
                0,
                vec![file(&name, 1 + i as i64)],
            )];
            put_data_files(&mut store, &schema, &msgs);
            machines.push(commit_machine(
                schema.clone(),
                msgs,
                CommitMode::Append,
                opts(&format!("user{i}"), 1000 + i as u64),
            ));
        }
        let results = interleave(&mut store, machines);
        let mut ids: Vec<i64> = Vec::new();
        let mut total_attempts = 0;
        for r in &results {
            let r = r.as_ref().unwrap();
            assert!(!r.already_committed);
            ids.extend(&r.snapshot_ids);
            total_attempts += r.attempts;
        }
        ids.sort_unstable();
        assert_eq!(ids, (2..=(n as i64 + 1)).collect::<Vec<_>>());
        assert!(total_attempts > n as u32, "the committers raced");
        assert_eq!(
            snapshot_ids(&store),
            (1..=(n as i64 + 1)).collect::<Vec<_>>()
        );
        let users: Vec<String> = (2..=(n as i64 + 1))
            .map(|id| snapshot(&store, id).commit_user)
            .collect();
        assert_eq!(users.iter().collect::<BTreeSet<_>>().len(), n);
        assert_eq!(names(&live(&store)), expected);
        let last = snapshot(&store, n as i64 + 1);
        assert_eq!(last.total_record_count, 1 + (1..=n as i64).sum::<i64>());
        assert_consistent(&store);
        // Lost attempts cleaned their files.
        let unreferenced: Vec<String> = manifest_files(&store)
            .difference(&referenced(&store))
            .cloned()
            .collect();
        assert!(unreferenced.is_empty(), "{unreferenced:?}");
    }
}

#[test]
fn concurrent_conflicting_deletes_one_wins() {
    let (mut store, schema) = new_table(false, false, &[]);
    run_commit(
        &mut store,
        &schema,
        vec![message(None, 0, vec![file("x.parquet", 3)])],
        CommitMode::Append,
        opts("base", 1),
    )
    .unwrap();
    let delete_x = |i: usize| {
        let mut m = message(None, 0, vec![file(&format!("y{i}.parquet"), 1)]);
        m.data_increment.deleted_files = vec![file("x.parquet", 3)];
        m
    };
    let machines = (0..2)
        .map(|i| {
            commit_machine(
                schema.clone(),
                vec![delete_x(i)],
                CommitMode::Append,
                opts(&format!("u{i}"), 50 + i as u64),
            )
        })
        .collect();
    let results = interleave(&mut store, machines);
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(ok, 1, "{results:?}");
    let err = results.into_iter().find_map(|r| r.err()).unwrap();
    assert!(matches!(err, Error::CommitConflict { .. }), "{err}");
    assert!(err.to_string().contains("x.parquet"), "{err}");
    assert_consistent(&store);
}

// ---------------------------------------------------------------------------------------
// Conflicts

#[test]
fn deleting_a_file_that_is_not_live_names_it() {
    let (mut store, schema) = new_table(true, false, &[]);
    run_commit(
        &mut store,
        &schema,
        vec![message(Some("a"), 0, vec![file("a1.parquet", 1)])],
        CommitMode::Append,
        opts("u", 1),
    )
    .unwrap();
    let before = store.objects.clone();
    let mut m = message(Some("a"), 0, vec![]);
    m.data_increment.deleted_files = vec![file("ghost.parquet", 1)];
    let err = run_commit(
        &mut store,
        &schema,
        vec![m],
        CommitMode::Append,
        opts("v", 2),
    )
    .unwrap_err();
    assert!(matches!(err, Error::CommitConflict { .. }), "{err}");
    assert!(err.to_string().contains("ghost.parquet"), "{err}");
    assert!(err.to_string().contains("dt=a"), "{err}");
    // Nothing was written.
    assert_eq!(store.objects, before);

    // A compaction whose input is gone.
    let c = compaction(
        Some("a"),
        0,
        vec![file("gone.parquet", 1)],
        vec![file("new.parquet", 1)],
    );
    let err = run_commit(
        &mut store,
        &schema,
        vec![c],
        CommitMode::Append,
        opts("w", 3),
    )
    .unwrap_err();
    assert!(err.to_string().contains("gone.parquet"), "{err}");

    // Adding a file that is live already (checked appends).
    let mut o = opts("x", 4);
    o.check_append_conflicts = true;
    let m = vec![message(Some("a"), 0, vec![file("a1.parquet", 1)])];
    let err = run_commit(&mut store, &schema, m, CommitMode::Append, o).unwrap_err();
    assert!(err.to_string().contains("already added"), "{err}");
    assert_consistent(&store);
}

#[test]
fn overlapping_level_one_key_ranges_are_rejected() {
    let (mut store, schema) = new_table(false, true, &[]);
    let c = compaction(None, 0, vec![], vec![pk_file("l1-a", 5, 1, 1, 10)]);
    run_commit(
        &mut store,
        &schema,
        vec![c],
        CommitMode::Append,
        opts("u", 1),
    )
    .unwrap();
    // Another level-1 file overlapping [1, 10] in the same bucket.
    let c = compaction(None, 0, vec![], vec![pk_file("l1-b", 5, 1, 10, 20)]);
    let err = run_commit(
        &mut store,
        &schema,
        vec![c],
        CommitMode::Append,
        opts("v", 2),
    )
    .unwrap_err();
    assert!(matches!(err, Error::CommitConflict { .. }), "{err}");
    assert!(err.to_string().contains("LSM conflicts"), "{err}");
    assert!(
        err.to_string().contains("l1-a") && err.to_string().contains("l1-b"),
        "{err}"
    );
    // Disjoint, another level, or another bucket: fine.
    for (i, (name, level, bucket, lo, hi)) in [
        ("l1-c", 1, 0, 11, 20),
        ("l2-d", 2, 0, 1, 10),
        ("l1-e", 1, 1, 1, 10),
    ]
    .into_iter()
    .enumerate()
    {
        let c = compaction(None, bucket, vec![], vec![pk_file(name, 1, level, lo, hi)]);
        run_commit(
            &mut store,
            &schema,
            vec![c],
            CommitMode::Append,
            opts(&format!("w{i}"), 3 + i as u64),
        )
        .unwrap();
    }
    assert_eq!(live(&store).len(), 4);
}

#[test]
fn a_changed_bucket_count_is_rejected() {
    let (mut store, schema) = new_table(false, true, &[]);
    let mut m = compaction(None, 0, vec![], vec![pk_file("a", 1, 1, 1, 1)]);
    m.total_buckets = Some(2);
    run_commit(
        &mut store,
        &schema,
        vec![m],
        CommitMode::Append,
        opts("u", 1),
    )
    .unwrap();
    let mut m = compaction(None, 1, vec![], vec![pk_file("b", 1, 1, 1, 1)]);
    m.total_buckets = Some(4);
    let err = run_commit(
        &mut store,
        &schema,
        vec![m],
        CommitMode::Append,
        opts("v", 2),
    )
    .unwrap_err();
    assert!(err.to_string().contains("Total buckets"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Manifests: merging and rolling

#[test]
fn manifests_are_merged_at_the_min_count() {
    let (mut store, schema) = new_table(true, false, &[("manifest.merge-min-count", "3")]);
    for i in 0..6 {
        let m = vec![message(
            Some(["a", "b"][i % 2]),
            0,
            vec![file(&format!("f{i}"), 1)],
        )];
        run_commit(
            &mut store,
            &schema,
            m,
            CommitMode::Append,
            opts(&format!("u{i}"), i as u64),
        )
        .unwrap();
    }
    // Deleting a file: the DELETE goes to the delta, the merge resolves it later.
    let mut m = message(Some("a"), 0, vec![]);
    m.data_increment.deleted_files = vec![file("f0", 1)];
    run_commit(
        &mut store,
        &schema,
        vec![m],
        CommitMode::Append,
        opts("d", 9),
    )
    .unwrap();
    for i in 7..10 {
        let m = vec![message(Some("b"), 0, vec![file(&format!("f{i}"), 1)])];
        run_commit(
            &mut store,
            &schema,
            m,
            CommitMode::Append,
            opts(&format!("u{i}"), i as u64),
        )
        .unwrap();
    }
    let last = *snapshot_ids(&store).last().unwrap();
    for id in 1..=last {
        let s = snapshot(&store, id);
        let path = format!("manifest/{}", s.base_manifest_list);
        let base = decode_manifest_list(&store.objects[&path], &path).unwrap();
        assert!(
            base.len() < 4,
            "snapshot {id}: {} base manifests",
            base.len()
        );
    }
    let expected: BTreeSet<String> = ["f1", "f2", "f3", "f4", "f5", "f7", "f8", "f9"]
        .map(String::from)
        .into();
    assert_eq!(names(&live(&store)), expected);
    assert_eq!(snapshot(&store, last).total_record_count, 8);
    assert_consistent(&store);
}

#[test]
fn full_compaction_of_manifests_resolves_deletes() {
    let (mut store, schema) = new_table(
        false,
        false,
        &[
            ("manifest.full-compaction-threshold-size", "1 b"),
            ("manifest.merge-min-count", "100"),
        ],
    );
    for i in 0..3 {
        let m = vec![message(None, 0, vec![file(&format!("f{i}"), 1)])];
        run_commit(
            &mut store,
            &schema,
            m,
            CommitMode::Append,
            opts(&format!("u{i}"), i as u64),
        )
        .unwrap();
    }
    let mut m = message(None, 0, vec![]);
    m.data_increment.deleted_files = vec![file("f1", 1)];
    run_commit(
        &mut store,
        &schema,
        vec![m],
        CommitMode::Append,
        opts("d", 9),
    )
    .unwrap();
    run_commit(
        &mut store,
        &schema,
        vec![message(None, 0, vec![file("f3", 1)])],
        CommitMode::Append,
        opts("e", 10),
    )
    .unwrap();
    let s = snapshot(&store, 5);
    let path = format!("manifest/{}", s.base_manifest_list);
    let base = decode_manifest_list(&store.objects[&path], &path).unwrap();
    assert_eq!(base.len(), 1);
    assert_eq!((base[0].num_added_files, base[0].num_deleted_files), (2, 0));
    let entries = decode_manifest(
        &store.objects[&format!("manifest/{}", base[0].file_name)],
        "m",
    )
    .unwrap();
    assert_eq!(
        entries
            .iter()
            .map(|e| e.file.file_name.as_str())
            .collect::<Vec<_>>(),
        vec!["f0", "f2"]
    );
    assert_eq!(
        names(&live(&store)),
        ["f0", "f2", "f3"].map(String::from).into()
    );
}

#[test]
fn manifests_roll_at_the_target_size() {
    let (mut store, schema) = new_table(false, false, &[("manifest.target-file-size", "1 kb")]);
    let files: Vec<DataFileMeta> = (0..2500)
        .map(|i| file(&format!("data-{i:05}.parquet"), 1))
        .collect();
    run_commit(
        &mut store,
        &schema,
        vec![message(None, 0, files)],
        CommitMode::Append,
        opts("u", 1),
    )
    .unwrap();
    let s = snapshot(&store, 1);
    let path = format!("manifest/{}", s.delta_manifest_list);
    let delta = decode_manifest_list(&store.objects[&path], &path).unwrap();
    assert_eq!(
        delta.iter().map(|m| m.num_added_files).collect::<Vec<_>>(),
        vec![1000, 1000, 500],
        "checked every 1000 entries"
    );
    assert_eq!(live(&store).len(), 2500);
}

// ---------------------------------------------------------------------------------------
// Abort

#[test]
fn abort_deletes_the_new_files_only() {
    let (mut store, schema) = new_table(true, false, &[("index-file-in-data-file-dir", "false")]);
    let mut f = file("data-1.parquet", 1);
    f.extra_files = vec!["data-1.parquet.index".into()];
    let mut m = message(Some("a b"), 0, vec![f]);
    m.data_increment.changelog_files = vec![file("changelog-1.parquet", 1)];
    m.compact_increment.compact_before = vec![file("kept.parquet", 1)];
    m.compact_increment.compact_after = vec![file("kept.parquet", 1), file("data-2.parquet", 1)];
    m.compact_increment.new_index_files = vec![IndexFileMeta {
        index_type: "HASH".into(),
        file_name: "index-9".into(),
        file_size: 4,
        row_count: 1,
        dv_ranges: None,
        external_path: None,
        global_index: None,
    }];
    let paths = abort::abort_paths(&schema, &[m.clone()]).unwrap();
    assert_eq!(
        paths,
        vec![
            "dt=a b/bucket-0/data-1.parquet",
            "dt=a b/bucket-0/data-1.parquet.index",
            "dt=a b/bucket-0/changelog-1.parquet",
            "dt=a b/bucket-0/data-2.parquet",
            "index/index-9",
        ]
    );
    for p in paths
        .iter()
        .chain(["dt=a b/bucket-0/kept.parquet".to_string()].iter())
    {
        store.objects.insert(p.clone(), Bytes::from_static(b"x"));
    }
    store.run(abort_machine(schema, vec![m])).unwrap();
    let left: Vec<&String> = store
        .objects
        .keys()
        .filter(|k| !k.starts_with("schema/"))
        .collect();
    assert_eq!(left, vec!["dt=a b/bucket-0/kept.parquet"]);
}

// ---------------------------------------------------------------------------------------
// Snapshot JSON and serde

fn keys(bytes: &[u8]) -> Vec<String> {
    match serde_json::from_slice::<serde_json::Value>(bytes).unwrap() {
        serde_json::Value::Object(m) => m.keys().cloned().collect(),
        _ => panic!("not an object"),
    }
}

fn corpus_snapshot(table: &str, id: i64) -> Option<Vec<u8>> {
    let path = format!(
        "{}/../conformance/tables/corpus.db/{table}/snapshot/snapshot-{id}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).ok()
}

#[test]
fn snapshot_json_has_javas_fields_in_javas_order() {
    // A row-tracking append like corpus `append_row_tracking` snapshot 1 (pypaimon), and a
    // plain append like `append_parquet` snapshot 1.
    for (table, rt) in [("append_row_tracking", true), ("append_parquet", false)] {
        let options: Vec<(&str, &str)> = if rt {
            vec![("row-tracking.enabled", "true")]
        } else {
            vec![]
        };
        let (mut store, schema) = new_table(false, false, &options);
        run_commit(
            &mut store,
            &schema,
            vec![message(None, 0, vec![file("f.parquet", 3)])],
            CommitMode::Append,
            opts("u", 1),
        )
        .unwrap();
        let ours = keys(&store.objects["snapshot/snapshot-1"]);
        // Java's order.
        let order: Vec<&str> = JAVA_KEYS
            .iter()
            .copied()
            .filter(|k| ours.iter().any(|o| o == k))
            .collect();
        assert_eq!(ours, order);
        // Same fields as the corpus snapshot (pypaimon writes them in another order and no
        // `nextRowId` without row tracking; Java always writes it).
        let corpus = corpus_snapshot(table, 1).expect("corpus snapshot");
        let mut theirs: BTreeSet<String> = keys(&corpus).into_iter().collect();
        if !rt {
            theirs.insert("nextRowId".into());
        }
        assert_eq!(
            ours.iter().cloned().collect::<BTreeSet<_>>(),
            theirs,
            "{table}"
        );
        // Pretty-printed like Jackson.
        let text = std::str::from_utf8(&store.objects["snapshot/snapshot-1"]).unwrap();
        assert!(
            text.starts_with("{\n  \"version\" : 3,\n  \"uuid\" : \""),
            "{text}"
        );
    }
}

#[test]
fn options_and_modes_are_serde_values() {
    let mut o = CommitOptions::new("u", 5, 9);
    o.properties.insert("k".into(), "v".into());
    let json = serde_json::to_string(&o).unwrap();
    assert_eq!(serde_json::from_str::<CommitOptions>(&json).unwrap(), o);
    let minimal: CommitOptions =
        serde_json::from_str(r#"{"commit_user":"u","time_millis":1,"seed":2}"#).unwrap();
    assert_eq!(minimal.commit_identifier, BATCH_COMMIT_IDENTIFIER);
    assert!(minimal.ignore_empty_commit);
    for mode in [
        CommitMode::Append,
        CommitMode::Overwrite {
            partition_filter: Some([("dt".to_string(), "a".to_string())].into()),
            dynamic: false,
        },
    ] {
        let json = serde_json::to_string(&mode).unwrap();
        assert_eq!(serde_json::from_str::<CommitMode>(&json).unwrap(), mode);
    }
    let m: CommitMode = serde_json::from_str(r#"{"mode":"overwrite"}"#).unwrap();
    assert_eq!(
        m,
        CommitMode::Overwrite {
            partition_filter: None,
            dynamic: true
        }
    );
}

#[test]
fn same_inputs_same_puts() {
    let run = || {
        let (mut store, schema) = new_table(true, false, &[]);
        let m = vec![message(Some("a"), 0, vec![file("a1.parquet", 10)])];
        run_commit(&mut store, &schema, m, CommitMode::Append, opts("u", 77)).unwrap();
        store.objects
    };
    assert_eq!(run(), run());
}

#[test]
fn put_modes_are_create_new_except_the_hint() {
    let (mut store, schema) = new_table(false, false, &[]);
    let msgs = vec![message(None, 0, vec![file("a", 1)])];
    put_data_files(&mut store, &schema, &msgs);
    let mut m = commit_machine(schema, msgs, CommitMode::Append, opts("u", 1));
    let mut puts = Vec::new();
    loop {
        match m.step().unwrap() {
            Step::NeedIo(round) => {
                for r in round {
                    if let IoOp::Put { path, mode, .. } = &r.op {
                        puts.push((path.clone(), *mode));
                    }
                    let a = store.answer(&r.op);
                    m.provide(r.id, a).unwrap();
                }
            }
            Step::Done => break,
            _ => {}
        }
    }
    let last = puts.pop().unwrap();
    assert_eq!(last, ("snapshot/LATEST".to_string(), PutMode::Overwrite));
    assert_eq!(
        puts.pop().unwrap(),
        ("snapshot/snapshot-1".to_string(), PutMode::CreateNew)
    );
    assert!(
        puts.iter()
            .all(|(p, mode)| p.starts_with("manifest/") && *mode == PutMode::CreateNew)
    );
    // Delta manifest, then base and delta lists.
    assert_eq!(puts.len(), 3, "{puts:?}");
}

// ---------------------------------------------------------------------------------------
// Publish outcomes

/// Drive `m`; the first `Put` of `snapshot/snapshot-*` is handed to `on_publish`, which
/// returns the answer (and may change the store).
fn drive_with_publish_hook(
    store: &mut MemoryStore,
    mut m: Machine<CommitOutcome>,
    mut on_publish: impl FnMut(&mut MemoryStore, &IoOp) -> IoAnswer,
) -> crate::Result<CommitOutcome> {
    let mut hooked = false;
    let mut out = None;
    loop {
        match m.step()? {
            Step::NeedIo(round) => {
                for r in round {
                    let is_publish = matches!(&r.op, IoOp::Put { path, .. }
                        if path.starts_with("snapshot/snapshot-"));
                    let answer = if is_publish && !hooked {
                        hooked = true;
                        on_publish(store, &r.op)
                    } else {
                        store.answer(&r.op)
                    };
                    m.provide(r.id, answer)?;
                }
            }
            Step::Emit(o) => out = Some(o),
            Step::Done => return Ok(out.expect("an outcome")),
            Step::Work(_) | Step::Wait => {}
        }
    }
}

#[test]
fn already_exists_for_our_own_snapshot_is_success() {
    // A host that retried the create-new Put itself answers AlreadyExists for our own bytes.
    let (mut store, schema) = new_table(false, false, &[]);
    let msgs = vec![message(None, 0, vec![file("a", 1)])];
    let m = commit_machine(schema, msgs, CommitMode::Append, opts("u", 1));
    let out = drive_with_publish_hook(&mut store, m, |store, op| {
        store.answer(op);
        IoAnswer::error(IoErrorKind::AlreadyExists)
    })
    .unwrap();
    assert_eq!(out.snapshot_ids, vec![1]);
    assert_eq!(out.attempts, 1);
    assert_consistent(&store);
}

#[test]
fn an_unknown_publish_outcome_is_resolved_on_retry() {
    let (base, schema) = new_table(false, false, &[]);
    let msgs = vec![message(None, 0, vec![file("a", 1)])];

    // The Put failed and another committer took the id meanwhile: our attempt's files go,
    // the retry publishes after it.
    let mut store = base.clone();
    let m = commit_machine(
        schema.clone(),
        msgs.clone(),
        CommitMode::Append,
        opts("u", 1),
    );
    let out = drive_with_publish_hook(&mut store, m, |store, _| {
        let other = vec![message(None, 0, vec![file("b", 2)])];
        run_commit(store, &schema, other, CommitMode::Append, opts("v", 2)).unwrap();
        IoAnswer::error(IoErrorKind::Transient)
    })
    .unwrap();
    assert_eq!(out.snapshot_ids, vec![2]);
    assert_eq!(out.attempts, 2);
    assert_eq!(snapshot(&store, 1).commit_user, "v");
    assert_eq!(names(&live(&store)), ["a", "b"].map(String::from).into());
    let unreferenced: Vec<String> = manifest_files(&store)
        .difference(&referenced(&store))
        .cloned()
        .collect();
    assert!(unreferenced.is_empty(), "{unreferenced:?}");

    // The Put landed but was answered with an error: the retry finds it, once.
    let mut store = base.clone();
    let m = commit_machine(schema.clone(), msgs, CommitMode::Append, opts("u", 1));
    let out = drive_with_publish_hook(&mut store, m, |store, op| {
        store.answer(op);
        IoAnswer::error(IoErrorKind::Other)
    })
    .unwrap();
    assert_eq!(
        out,
        CommitOutcome {
            snapshot_ids: vec![1],
            already_committed: false,
            attempts: 1,
            ..CommitOutcome::default()
        }
    );
    assert_eq!(snapshot_ids(&store), vec![1]);
    assert_eq!(&store.objects["snapshot/LATEST"][..], b"1");
}

#[test]
fn out_of_retries_fails_and_cleans_up() {
    // Every publish loses against a snapshot that appears just before it.
    let (mut store, schema) = new_table(false, false, &[("commit.max-retries", "2")]);
    let msgs = vec![message(None, 0, vec![file("a", 1)])];
    put_data_files(&mut store, &schema, &msgs);
    let mut m = commit_machine(schema.clone(), msgs, CommitMode::Append, opts("u", 1));
    let mut n = 0;
    let result = loop {
        match m.step() {
            Err(e) => break Err(e),
            Ok(Step::NeedIo(round)) => {
                for r in round {
                    if let IoOp::Put { path, .. } = &r.op
                        && path.starts_with("snapshot/snapshot-")
                    {
                        n += 1;
                        let other = vec![message(None, 0, vec![file(&format!("o{n}"), 1)])];
                        run_commit(
                            &mut store,
                            &schema,
                            other,
                            CommitMode::Append,
                            opts(&format!("o{n}"), 100 + n),
                        )
                        .unwrap();
                    }
                    let a = store.answer(&r.op);
                    m.provide(r.id, a).unwrap();
                }
            }
            Ok(Step::Done) => break Ok(()),
            Ok(_) => {}
        }
    };
    let err = result.unwrap_err();
    assert!(err.to_string().contains("failed after 2 retries"), "{err}");
    assert_eq!(n, 3, "1 attempt + 2 retries");
    assert_consistent(&store);
    let unreferenced: Vec<String> = manifest_files(&store)
        .difference(&referenced(&store))
        .cloned()
        .collect();
    assert!(unreferenced.is_empty(), "{unreferenced:?}");
}
