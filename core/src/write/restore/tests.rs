//! Scoped restore: only the manifests and files of the written partitions are read, and the
//! sequence numbers continue exactly as with a restore of the whole table.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use bytes::Bytes;

use super::*;
use crate::commit::{CommitMessage, CommitMode, CommitOptions, commit_machine};
use crate::io::{IoOp, Machine, MemoryStore, Step, Work};
use crate::scan::planner::read_live_entries;
use crate::spec::schema::encode_schema;
use crate::spec::snapshot::{decode_snapshot, snapshot_path};
use crate::write::{TableWrite, WriteOptions, WriteRestore};

fn schema(bucket: i32) -> TableSchema {
    let mut options = BTreeMap::from([("bucket".to_owned(), bucket.to_string())]);
    if bucket > 0 {
        options.insert("bucket-key".into(), "k".into());
    }
    TableSchema {
        version: 3,
        id: 0,
        fields: vec![
            DataField::new(
                0,
                "dt",
                crate::spec::DataType::parse_sql("STRING NOT NULL").unwrap(),
            ),
            DataField::new(
                1,
                "k",
                crate::spec::DataType::parse_sql("INT NOT NULL").unwrap(),
            ),
            DataField::new(2, "v", crate::spec::DataType::parse_sql("STRING").unwrap()),
        ],
        highest_field_id: 2,
        partition_keys: vec!["dt".into()],
        primary_keys: Vec::new(),
        options,
        comment: None,
        time_millis: 0,
        raw_json: None,
    }
}

fn batch(dt: &str, ks: std::ops::Range<i32>) -> RecordBatch {
    let n = ks.len();
    let schema = Schema::new(vec![
        Field::new("dt", ArrowType::Utf8, false),
        Field::new("k", ArrowType::Int32, false),
        Field::new("v", ArrowType::Utf8, true),
    ]);
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(dt, n))),
        Arc::new(Int32Array::from_iter_values(ks.clone())),
        Arc::new(StringArray::from_iter_values(ks.map(|k| format!("v{k}")))),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

fn options(seed: u64) -> WriteOptions {
    WriteOptions {
        seed,
        time_millis: 1_700_000_000_000,
    }
}

/// Drive `m` over `store`, returning its one result and the paths it read.
fn run_recording<T: Send + 'static>(
    store: &mut MemoryStore,
    mut m: Machine<T>,
) -> (T, Vec<String>) {
    let mut reads = Vec::new();
    let mut out = None;
    loop {
        match m.step().unwrap() {
            Step::NeedIo(round) => {
                for req in round {
                    if let IoOp::Read { path, .. } = &req.op {
                        reads.push(path.clone());
                    }
                    let answer = store.answer(&req.op);
                    m.provide(req.id, answer).unwrap();
                }
            }
            Step::Emit(x) => out = Some(x),
            Step::Work(items) => items.into_iter().for_each(Work::run),
            Step::Wait => {}
            Step::Done => break,
        }
    }
    (out.unwrap(), reads)
}

/// Write `batches` with a whole-table restore (as before scoping) and commit them.
fn write_and_commit(
    store: &mut MemoryStore,
    schema: &TableSchema,
    batches: &[RecordBatch],
    seed: u64,
) {
    let restore = match latest(store) {
        Some(s) => {
            let s2 = s.clone();
            let m = Machine::once("live", move |io| async move {
                read_live_entries(&io, &s2).await
            });
            WriteRestore::from_entries(&store.run(m).unwrap().remove(0))
        }
        None => WriteRestore::default(),
    };
    let mut w = TableWrite::try_new(schema.clone(), restore, options(seed)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    let messages = w.prepare_commit().unwrap();
    for f in w.take_files() {
        store
            .objects
            .insert(f.path, f.content.bytes().unwrap().clone());
    }
    let m = commit_machine(
        schema.clone(),
        messages,
        CommitMode::Append,
        CommitOptions::new(format!("user-{seed}"), 1_700_000_000_000, seed),
    );
    store.run(m).unwrap();
}

fn latest(store: &MemoryStore) -> Option<Snapshot> {
    (1..100)
        .rev()
        .find_map(|id| {
            store
                .objects
                .get(&snapshot_path(id))
                .map(|b| (id, b.clone()))
        })
        .map(|(id, b)| decode_snapshot(&b, &snapshot_path(id)).unwrap())
}

fn new_store(schema: &TableSchema) -> MemoryStore {
    let mut store = MemoryStore::new();
    store.objects.insert(
        "schema/schema-0".into(),
        Bytes::from(encode_schema(schema).unwrap()),
    );
    store
}

fn partition(dt: &str) -> BinaryRow {
    BinaryRow::encode(
        &[crate::spec::Datum::String(dt.into())],
        &[crate::spec::DataType::parse_sql("STRING NOT NULL").unwrap()],
    )
    .unwrap()
}

/// (bucket, min, max sequence number) of every new file of `messages`.
fn sequences(messages: &[CommitMessage]) -> Vec<(i32, i64, i64)> {
    let mut out: Vec<(i32, i64, i64)> = messages
        .iter()
        .flat_map(|m| {
            m.data_increment
                .new_files
                .iter()
                .map(|f| (m.bucket, f.min_sequence_number, f.max_sequence_number))
        })
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn a_write_to_one_partition_reads_only_its_manifests_and_continues_its_sequences() {
    let schema = schema(2);
    let mut store = new_store(&schema);
    // Three commits, one partition each (two of 'b'): one manifest per commit.
    write_and_commit(&mut store, &schema, &[batch("a", 0..10)], 1);
    write_and_commit(&mut store, &schema, &[batch("b", 0..10)], 2);
    write_and_commit(&mut store, &schema, &[batch("c", 0..10)], 3);
    write_and_commit(&mut store, &schema, &[batch("b", 10..16)], 4);
    let snapshot = latest(&store).unwrap();
    assert_eq!(snapshot.id, 4);

    let input = batch("b", 100..108);
    let mut lazy = TableWrite::try_new(schema.clone(), WriteRestore::default(), options(9))
        .unwrap()
        .restore_on_demand();
    assert!(lazy.restores_files());
    let wanted = lazy.partitions_to_restore(&input).unwrap();
    assert_eq!(wanted, vec![partition("b")]);

    // The manifest lists of snapshot 4 hold 4 manifests; 2 can hold partition 'b'.
    let all = {
        let s = snapshot.clone();
        let m = Machine::once(
            "m",
            move |io| async move { read_data_manifests(&io, &s).await },
        );
        store.run(m).unwrap().remove(0)
    };
    assert_eq!(all.len(), 4);
    let set: BTreeSet<BinaryRow> = wanted.iter().cloned().collect();
    let fields = vec![schema.fields[0].clone()];
    assert_eq!(manifests_for_partitions(&all, &set, &fields).len(), 2);

    let (entries, reads) = {
        let (s, set, fields) = (snapshot.clone(), set.clone(), fields.clone());
        run_recording(
            &mut store,
            Machine::once("restore", move |io| async move {
                read_partition_entries(&io, &s, &set, &fields).await
            }),
        )
    };
    let lists = reads
        .iter()
        .filter(|p| p.starts_with("manifest/manifest-list-"))
        .count();
    let manifests = reads
        .iter()
        .filter(|p| {
            p.starts_with("manifest/manifest-") && !p.starts_with("manifest/manifest-list-")
        })
        .count();
    assert_eq!((reads.len(), lists, manifests), (4, 2, 2), "{reads:?}");
    // Partition 'b': two commits, each one file per bucket it wrote (both buckets).
    assert_eq!(entries.len(), 4);
    assert!(entries.iter().all(|e| e.partition == partition("b")));

    lazy.restore_partitions(&wanted, &entries).unwrap();
    assert!(lazy.partitions_to_restore(&input).unwrap().is_empty());
    lazy.write(&input).unwrap();
    let lazy_seqs = sequences(&lazy.prepare_commit().unwrap());

    // The same write with the whole table restored.
    let full_restore = {
        let s = snapshot.clone();
        let m = Machine::once(
            "live",
            move |io| async move { read_live_entries(&io, &s).await },
        );
        WriteRestore::from_entries(&store.run(m).unwrap().remove(0))
    };
    let b0 = full_restore.max_sequence_numbers[&(partition("b").to_serialized(), 0)];
    let b1 = full_restore.max_sequence_numbers[&(partition("b").to_serialized(), 1)];
    let mut full = TableWrite::try_new(schema.clone(), full_restore, options(9)).unwrap();
    full.write(&input).unwrap();
    let full_seqs = sequences(&full.prepare_commit().unwrap());
    assert_eq!(lazy_seqs, full_seqs);
    // 16 rows of 'b' so far: each bucket's new file starts after its own maximum.
    assert_eq!(lazy_seqs.len(), 2);
    assert_eq!((lazy_seqs[0].0, lazy_seqs[0].1), (0, b0 + 1));
    assert_eq!((lazy_seqs[1].0, lazy_seqs[1].1), (1, b1 + 1));
    assert_eq!(b0 + b1 + 2, 16);
}

#[test]
fn rows_of_a_partition_not_restored_are_refused() {
    let schema = schema(2);
    let mut w = TableWrite::try_new(schema, WriteRestore::default(), options(1))
        .unwrap()
        .restore_on_demand();
    let err = w.write(&batch("x", 0..4)).unwrap_err().to_string();
    assert!(
        err.contains("partition 'dt=x' of the input is not restored"),
        "{err}"
    );
    w.restore_partitions(&[partition("x")], &[]).unwrap();
    w.write(&batch("x", 0..4)).unwrap();
    let seqs = sequences(&w.prepare_commit().unwrap());
    assert!(seqs.iter().all(|s| s.1 == 0), "{seqs:?}");
}

#[test]
fn a_rescaled_partition_is_unsupported_when_restored() {
    let mut store = new_store(&schema(2));
    write_and_commit(&mut store, &schema(2), &[batch("a", 0..10)], 1);
    let s = latest(&store).unwrap();
    let set = BTreeSet::from([partition("a")]);
    let fields = vec![schema(2).fields[0].clone()];
    let m = Machine::once("r", move |io| async move {
        read_partition_entries(&io, &s, &set, &fields).await
    });
    let entries = store.run(m).unwrap().remove(0);
    let mut w = TableWrite::try_new(schema(4), WriteRestore::default(), options(1))
        .unwrap()
        .restore_on_demand();
    let err = w
        .restore_partitions(&[partition("a")], &entries)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'bucket' = 4 to partition 'dt=a' whose files were written for 2 buckets"),
        "{err}"
    );
}

#[test]
fn unaware_append_writers_restore_nothing_and_start_at_sequence_zero() {
    let schema = schema(-1);
    assert!(!restores_files(&schema).unwrap());
    let mut store = new_store(&schema);
    write_and_commit(&mut store, &schema, &[batch("a", 0..10)], 1);
    // Even given the whole table's files, new files start at 0 (Java's AppendFileStoreWrite
    // ignores previous files).
    let s = latest(&store).unwrap();
    let m = Machine::once(
        "live",
        move |io| async move { read_live_entries(&io, &s).await },
    );
    let entries = store.run(m).unwrap().remove(0);
    assert_eq!(entries[0].file.max_sequence_number, 9);
    let mut w = TableWrite::try_new(
        schema.clone(),
        WriteRestore::from_entries(&entries),
        options(2),
    )
    .unwrap()
    .restore_on_demand();
    assert!(!w.restores_files());
    assert!(
        w.partitions_to_restore(&batch("a", 0..5))
            .unwrap()
            .is_empty()
    );
    w.write(&batch("a", 0..5)).unwrap();
    assert_eq!(sequences(&w.prepare_commit().unwrap()), vec![(0, 0, 4)]);
}
