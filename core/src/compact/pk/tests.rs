//! Unit tests of levels and the pickers. The expected picks follow Java's
//! `UniversalCompactionTest` / `ForceUpLevel0CompactionTest` cases (same inputs, same
//! answers, derived from Java's rules).

use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use arrow_array::{Array, ArrayRef, Int8Array, Int32Array, Int64Array, RecordBatch};

use super::levels::{LevelSortedRun, Levels, SortedRun};
use super::strategy::{
    CompactStrategy, EarlyFullCompaction, UniversalCompaction, pick_full_compaction,
};
use crate::merge::{MemoryRunSource, MergeConfig, MergeEngine, MergeReader, RunSource};
use crate::spec::{BinaryRow, DataField, DataFileMeta, DataType, SimpleStats, TypeKind};
use crate::testkit;

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn file(size: i64, level: i32) -> DataFileMeta {
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    DataFileMeta {
        file_size: size,
        row_count: 1,
        level,
        creation_time_millis: Some(0),
        ..testkit::data_file(format!("f{n}.parquet"))
    }
}

fn level(l: i32, size: i64) -> LevelSortedRun {
    LevelSortedRun {
        level: l,
        run: SortedRun {
            files: vec![file(size, l)],
        },
    }
}

fn level0(sizes: &[i64]) -> Vec<LevelSortedRun> {
    sizes.iter().map(|s| level(0, *s)).collect()
}

fn sizes_of(files: &[DataFileMeta]) -> Vec<i64> {
    files.iter().map(|f| f.file_size).collect()
}

fn universal(max_size_amp: i64, size_ratio: i64, trigger: usize) -> UniversalCompaction {
    UniversalCompaction::new(max_size_amp, size_ratio, trigger)
}

#[test]
fn output_level_of_create_unit() {
    let c = universal(25, 1, 3);
    let runs: Vec<LevelSortedRun> = [0, 0, 1, 3, 4].iter().map(|l| level(*l, 1)).collect();
    let out: Vec<i32> = (1..=5)
        .map(|n| c.create_unit(&runs, 5, n).output_level)
        .collect();
    assert_eq!(out, vec![1, 1, 2, 3, 5]);
}

#[test]
fn pick_by_size_amp_ratio_and_run_count() {
    let c = universal(25, 1, 3);
    let pick = c.pick(3, &level0(&[1, 2, 3, 3])).unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 2, 3, 3]);
    assert_eq!(pick.output_level, 2);

    let runs = vec![level(0, 1), level(1, 1), level(2, 1), level(3, 50)];
    let pick = c.pick(4, &runs).unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 1, 1]);
    assert_eq!(pick.output_level, 2);

    let runs = vec![level(0, 1), level(1, 2), level(2, 3), level(3, 50)];
    let pick = c.pick(4, &runs).unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 2, 3]);
}

#[test]
fn no_output_level_0() {
    let c = universal(25, 1, 3);
    let pick = c
        .pick(3, &[level(0, 1), level(0, 1), level(1, 1), level(2, 50)])
        .unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 1, 1]);
    assert_eq!(pick.output_level, 1);
    let pick = c
        .pick(3, &[level(0, 1), level(0, 2), level(1, 3), level(2, 50)])
        .unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 2, 3]);

    let c = universal(200, 1, 5);
    let pick = c.pick(6, &level0(&[1, 1, 1, 1024, 1024 * 1024])).unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 1, 1, 1024, 1024 * 1024]);
    assert_eq!(pick.output_level, 5);
}

/// Java's `addSize`: a new run of size 1 in front.
fn add_size(sizes: &[i64]) -> Vec<i64> {
    let mut v = vec![1];
    v.extend_from_slice(sizes);
    v
}

#[test]
fn size_amplification_sequence() {
    let c = universal(25, 0, 1);
    let expected: &[&[i64]] = &[
        &[2],
        &[3],
        &[4],
        &[1, 4],
        &[6],
        &[1, 6],
        &[8],
        &[1, 8],
        &[1, 1, 8],
        &[11],
        &[1, 11],
        &[1, 1, 11],
        &[14],
        &[1, 14],
        &[1, 1, 14],
        &[1, 1, 1, 14],
        &[18],
    ];
    let mut sizes = vec![1];
    for want in expected {
        sizes = add_size(&sizes);
        if let Some(unit) = c.pick_for_size_amp(3, &level0(&sizes)) {
            sizes = vec![unit.files.iter().map(|f| f.file_size).sum()];
        }
        assert_eq!(&sizes, want);
    }
}

/// Java's `pickForSizeRatio` helper: runs at levels 0, 1, 2, …; the picked sizes are
/// replaced by their sum in front.
fn pick_ratio(c: &UniversalCompaction, sizes: &[i64]) -> Vec<i64> {
    let runs: Vec<LevelSortedRun> = sizes
        .iter()
        .enumerate()
        .map(|(i, s)| level(i as i32, *s))
        .collect();
    let Some(unit) = c.pick_for_size_ratio(sizes.len() as i32, &runs) else {
        return sizes.to_vec();
    };
    let picked = sizes_of(&unit.files);
    let mut rest = sizes.to_vec();
    for p in &picked {
        if let Some(i) = rest.iter().position(|s| s == p) {
            rest.remove(i);
        }
    }
    rest.insert(0, picked.iter().sum());
    rest
}

#[test]
fn size_ratio_sequence() {
    let c = universal(25, 1, 5);
    let expected: &[&[i64]] = &[
        &[5],
        &[1, 5],
        &[1, 1, 5],
        &[1, 1, 1, 5],
        &[4, 5],
        &[1, 4, 5],
        &[1, 1, 4, 5],
        &[3, 4, 5],
        &[1, 3, 4, 5],
        &[2, 3, 4, 5],
        &[1, 2, 3, 4, 5],
        &[16],
        &[1, 16],
        &[1, 1, 16],
        &[1, 1, 1, 16],
        &[4, 16],
        &[1, 4, 16],
        &[1, 1, 4, 16],
        &[3, 4, 16],
        &[1, 3, 4, 16],
        &[2, 3, 4, 16],
        &[1, 2, 3, 4, 16],
        &[11, 16],
    ];
    let mut sizes = vec![1, 1, 1, 1];
    for want in expected {
        sizes = pick_ratio(&c, &add_size(&sizes));
        assert_eq!(&sizes, want);
    }
}

#[test]
fn size_ratio_threshold() {
    assert_eq!(
        pick_ratio(&universal(25, 10, 2), &[8, 9, 10]),
        vec![8, 9, 10]
    );
    assert_eq!(pick_ratio(&universal(25, 20, 2), &[8, 9, 10]), vec![27]);
}

#[test]
fn off_peak_ratio_widens_size_ratio() {
    let mut c = universal(25, 10, 2);
    c.off_peak_ratio = 10;
    assert_eq!(pick_ratio(&c, &[8, 9, 10]), vec![27]);
}

#[test]
fn early_full_compaction() {
    let runs = [level(0, 1), level(1, 3), level(2, 5)];
    let mut c = universal(100, 1, 3);
    // Never fully compacted: full compaction.
    c.early_full = Some(EarlyFullCompaction {
        interval_millis: Some(1000),
        now_millis: 0,
        ..Default::default()
    });
    assert_eq!(sizes_of(&c.pick(3, &runs).unwrap().files), vec![1, 3, 5]);
    // Within the interval: nothing (size amplification 4 × 100 ≤ 100 × 5).
    c.early_full = Some(EarlyFullCompaction {
        interval_millis: Some(1000),
        last_full_compaction_millis: Some(1000),
        now_millis: 1500,
        ..Default::default()
    });
    assert!(c.pick(3, &runs).is_none());
    // Interval elapsed.
    c.early_full = Some(EarlyFullCompaction {
        interval_millis: Some(1000),
        last_full_compaction_millis: Some(0),
        now_millis: 1001,
        ..Default::default()
    });
    assert_eq!(c.pick(3, &runs).unwrap().output_level, 2);
    // Total size threshold.
    c.early_full = Some(EarlyFullCompaction {
        total_size_threshold: Some(10),
        ..Default::default()
    });
    assert_eq!(sizes_of(&c.pick(3, &runs).unwrap().files), vec![1, 3, 5]);
    assert!(
        c.pick(3, &[level(0, 2), level(1, 6), level(2, 10)])
            .is_none()
    );
    assert!(c.pick(3, &[level(3, 5)]).is_none());
    // Incremental size threshold: runs not at the max level above 3 bytes.
    c.early_full = Some(EarlyFullCompaction {
        incremental_size_threshold: Some(3),
        ..Default::default()
    });
    assert_eq!(c.pick(3, &runs).unwrap().files.len(), 3);
}

#[test]
fn force_up_level0_lookup() {
    let s = CompactStrategy::ForceUpLevel0 {
        universal: universal(25, 1, 3),
        max_interval: None,
    };
    let pick = s.pick(3, &level0(&[1, 2, 2, 2])).unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 2, 2, 2]);
    assert_eq!(pick.output_level, 2);
    let pick = s.pick(3, &[level(0, 1), level(1, 2), level(2, 2)]).unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 2, 2]);
    assert_eq!(pick.output_level, 2);
    let pick = s.pick(3, &[level(0, 1), level(2, 2)]).unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1]);
    assert_eq!(pick.output_level, 1);
    // Nothing at level 0: nothing to force.
    assert!(s.pick(3, &[level(1, 1), level(2, 200)]).is_none());
}

#[test]
fn force_up_level0_gentle_one_trigger() {
    // Gentle mode: one plan is one trigger; Java forces on the max-interval-th trigger.
    let gentle = |n| CompactStrategy::ForceUpLevel0 {
        universal: universal(25, 1, 5),
        max_interval: Some(n),
    };
    assert!(gentle(5).pick(3, &level0(&[1, 2, 2, 2])).is_none());
    let pick = gentle(1).pick(3, &level0(&[1, 2, 2, 2])).unwrap();
    assert_eq!(sizes_of(&pick.files), vec![1, 2, 2, 2]);
    assert_eq!(pick.output_level, 2);
}

#[test]
fn full_compaction_picks() {
    let runs = [level(0, 1), level(3, 10)];
    let u = pick_full_compaction(6, &runs, false, |_| false).unwrap();
    assert_eq!(
        (u.output_level, u.files.len(), u.file_rewrite),
        (5, 2, false)
    );
    // A single max-level run: nothing, unless every file is rewritten.
    let only_max = [level(5, 10)];
    assert!(pick_full_compaction(6, &only_max, false, |_| false).is_none());
    let u = pick_full_compaction(6, &only_max, true, |_| false).unwrap();
    assert_eq!(
        (u.output_level, u.files.len(), u.file_rewrite),
        (5, 1, true)
    );
    assert!(pick_full_compaction(6, &[], false, |_| false).is_none());
    // A single run below the max level goes up.
    let u = pick_full_compaction(6, &[level(2, 10)], false, |_| false).unwrap();
    assert_eq!(u.output_level, 5);
}

fn int_key(v: i32) -> BinaryRow {
    crate::encode::row::binary_row_at(
        &[Arc::new(Int32Array::from(vec![v])) as ArrayRef],
        &[DataType::not_null(TypeKind::Int)],
        0,
    )
    .unwrap()
}

#[test]
fn levels_order_runs() {
    let mut a = file(10, 0);
    a.max_sequence_number = 5;
    a.min_sequence_number = 3;
    let mut b = file(10, 0);
    b.max_sequence_number = 9;
    let mut c = file(10, 0);
    c.max_sequence_number = 5;
    c.min_sequence_number = 1;
    let mut d = file(10, 2);
    d.min_key = int_key(50);
    let mut e = file(10, 2);
    e.min_key = int_key(7);
    let mut f = file(10, 4);
    f.min_key = int_key(1);
    let levels = Levels::try_new(
        vec![
            a.clone(),
            b.clone(),
            c.clone(),
            d.clone(),
            e.clone(),
            f.clone(),
        ],
        3,
        &[DataType::not_null(TypeKind::Int)],
    )
    .unwrap();
    // A file at level 4 extends the levels to 5.
    assert_eq!(levels.number_of_levels(), 5);
    assert_eq!(levels.max_level(), 4);
    assert_eq!(levels.non_empty_highest_level(), 4);
    assert_eq!(levels.number_of_sorted_runs(), 5);
    let runs = levels.level_sorted_runs();
    let shape: Vec<(i32, Vec<String>)> = runs
        .iter()
        .map(|r| {
            (
                r.level,
                r.run.files.iter().map(|f| f.file_name.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (0, vec![b.file_name.clone()]),
            (0, vec![c.file_name.clone()]),
            (0, vec![a.file_name.clone()]),
            (2, vec![e.file_name.clone(), d.file_name.clone()]),
            (4, vec![f.file_name.clone()]),
        ]
    );
    let empty = Levels::try_new(Vec::new(), 6, &[]).unwrap();
    assert_eq!(empty.non_empty_highest_level(), -1);
    assert!(Levels::try_new(Vec::new(), 1, &[]).is_err());
}

fn poll_all(reader: &mut MergeReader) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    loop {
        let mut fut = std::pin::pin!(reader.next_batch());
        match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(Some(b))) => out.push(b),
            Poll::Ready(Ok(None)) => return out,
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The merge reader's key-value output: keys, sequence numbers and kinds of the merged
/// records; retractions kept or dropped.
#[test]
fn merge_reader_key_value_output() {
    let field = |id, name: &str, nullable| DataField {
        id,
        name: name.into(),
        data_type: DataType {
            nullable,
            kind: TypeKind::Int,
        },
        description: None,
        default_value: None,
    };
    for engine in [MergeEngine::Deduplicate, MergeEngine::PartialUpdate] {
        let config = MergeConfig::new(
            engine,
            vec![field(0, "k", false), field(1, "v", true)],
            vec!["k".into()],
            vec![],
        );
        let read = config.read_fields(&["k".to_string(), "v".to_string()]);
        let schema = config.input_schema(&read).unwrap();
        let run = |k: Vec<i32>, seq: Vec<i64>, kind: Vec<i8>, v: Vec<Option<i32>>| {
            let cols: Vec<ArrayRef> = vec![
                Arc::new(Int32Array::from(k.clone())),
                Arc::new(Int64Array::from(seq)),
                Arc::new(Int8Array::from(kind)),
                Arc::new(Int32Array::from(k)),
                Arc::new(Int32Array::from(v)),
            ];
            let batch = RecordBatch::try_new(Arc::clone(&schema), cols).unwrap();
            Box::new(MemoryRunSource::new([batch])) as Box<dyn RunSource>
        };
        for keep in [true, false] {
            let runs = vec![
                run(
                    vec![1, 2, 3, 4],
                    vec![0, 1, 2, 3],
                    vec![0, 0, 0, 3],
                    vec![Some(10), Some(20), Some(30), None],
                ),
                run(vec![2, 3], vec![5, 6], vec![2, 0], vec![Some(21), None]),
            ];
            let runs = if engine == MergeEngine::PartialUpdate {
                // Partial update takes no deletes without its options: only adds.
                vec![
                    run(
                        vec![1, 2, 3],
                        vec![0, 1, 2],
                        vec![0, 0, 0],
                        vec![Some(10), Some(20), Some(30)],
                    ),
                    run(vec![2, 3], vec![5, 6], vec![2, 0], vec![Some(21), None]),
                ]
            } else {
                runs
            };
            let mut reader =
                MergeReader::try_new(&config, Arc::clone(&schema), vec![0, 1], runs, 2)
                    .unwrap()
                    .with_key_value_output(keep);
            let batches = poll_all(&mut reader);
            let batch = arrow_select::concat::concat_batches(&reader.schema(), &batches).unwrap();
            let col = |i: usize| -> Vec<Option<i64>> {
                let c = arrow_cast::cast(batch.column(i), &arrow_schema::DataType::Int64).unwrap();
                let c = c.as_any().downcast_ref::<Int64Array>().unwrap();
                c.iter().collect()
            };
            let names: Vec<String> = reader
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            assert_eq!(
                names,
                ["_KEY_k", "_SEQUENCE_NUMBER", "_VALUE_KIND", "k", "v"]
            );
            match (engine, keep) {
                (MergeEngine::Deduplicate, true) => {
                    assert_eq!(col(0), [Some(1), Some(2), Some(3), Some(4)]);
                    assert_eq!(col(1), [Some(0), Some(5), Some(6), Some(3)]);
                    assert_eq!(col(2), [Some(0), Some(2), Some(0), Some(3)]);
                    assert_eq!(col(4), [Some(10), Some(21), None, None]);
                }
                (MergeEngine::Deduplicate, false) => {
                    assert_eq!(col(0), [Some(1), Some(2), Some(3)]);
                    assert_eq!(col(1), [Some(0), Some(5), Some(6)]);
                    assert_eq!(col(2), [Some(0), Some(2), Some(0)]);
                }
                _ => {
                    // Partial update: computed rows get the last record's sequence and +I.
                    assert_eq!(col(0), [Some(1), Some(2), Some(3)]);
                    assert_eq!(col(1), [Some(0), Some(5), Some(6)]);
                    assert_eq!(col(2), [Some(0), Some(0), Some(0)]);
                    assert_eq!(col(4), [Some(10), Some(21), Some(30)]);
                }
            }
        }
    }
}

fn pk_schema(options: &str) -> crate::spec::TableSchema {
    let json = format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}, {{"name": "v", "type": "STRING"}}],
        "primaryKeys": ["k"], "options": {{"bucket": "1"{options}}}}}"#
    );
    crate::schema::create::new_table_schema(json.as_bytes(), 0).unwrap()
}

fn long_key(v: i64) -> BinaryRow {
    crate::encode::row::binary_row_at(
        &[Arc::new(Int64Array::from(vec![v])) as ArrayRef],
        &[DataType::not_null(TypeKind::BigInt)],
        0,
    )
    .unwrap()
}

fn names(files: &[DataFileMeta]) -> Vec<String> {
    files.iter().map(|f| f.file_name.clone()).collect()
}

fn entry(size: i64, level: i32, keys: (i64, i64)) -> crate::spec::ManifestEntry {
    let mut f = file(size, level);
    f.min_key = long_key(keys.0);
    f.max_key = long_key(keys.1);
    crate::spec::ManifestEntry {
        kind: crate::spec::FileKind::Add,
        partition: BinaryRow::empty(),
        bucket: 0,
        total_buckets: 1,
        file: f,
    }
}

#[test]
fn planner_rules_per_table_kind() {
    use super::planner::{PkCompactRequest, plan_pk_compaction, plan_summary};
    let entries = vec![entry(10, 0, (5, 8)), entry(1000, 5, (0, 100))];
    let normal = PkCompactRequest::default();
    let full = PkCompactRequest {
        full: true,
        ..Default::default()
    };

    // First-row: level 0 forced up below the max level, keys of the max level looked up,
    // deletes kept, the level-0 file rewritten rather than moved.
    let first_row = pk_schema(r#", "merge-engine": "first-row""#);
    let tasks = plan_pk_compaction(&first_row, &entries, &normal).unwrap();
    assert_eq!(tasks.len(), 1);
    let t = &tasks[0];
    assert_eq!(t.unit.output_level, 4);
    assert_eq!(sizes_of(&t.unit.files), vec![10]);
    assert!(!t.drop_delete);
    assert_eq!(sizes_of(&t.lookup_files), vec![1000]);
    assert!(t.rewrite_level0_upgrades);
    assert!(!super::is_pure_upgrade(t));
    assert_eq!(t.max_level, 5);
    assert_eq!(t.bucket_path, "bucket-0");
    // Tasks are serde values.
    let json = serde_json::to_string(t).unwrap();
    assert_eq!(
        &serde_json::from_str::<super::PkCompactTask>(&json).unwrap(),
        t
    );

    // Deduplicate: two runs are below the trigger; a full compaction takes both to the max
    // level and drops deletes.
    let dedup = pk_schema("");
    assert!(
        plan_pk_compaction(&dedup, &entries, &normal)
            .unwrap()
            .is_empty()
    );
    let tasks = plan_pk_compaction(&dedup, &entries, &full).unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].unit.output_level, 5);
    assert!(tasks[0].drop_delete);
    assert!(tasks[0].lookup_files.is_empty());
    assert_eq!(tasks[0].compaction_file_size, (128 << 20) * 7 / 10);
    // A single file below the max level only moves up (the plan says "upgrade").
    let one = vec![entry(10, 3, (0, 1))];
    let tasks = plan_pk_compaction(&dedup, &one, &full).unwrap();
    let plan = plan_summary(&dedup, Some(7), &tasks).unwrap();
    assert_eq!(plan.snapshot, Some(7));
    assert_eq!(plan.units.len(), 1);
    assert!(plan.units[0].upgrade);
    assert_eq!(plan.units[0].output_level, Some(5));
    // Bucket filter.
    let other_bucket = PkCompactRequest {
        full: true,
        bucket: Some(1),
        ..Default::default()
    };
    assert!(
        plan_pk_compaction(&dedup, &entries, &other_bucket)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn unsupported_tables_are_named() {
    use super::planner::{PkCompactRequest, plan_pk_compaction};
    // Record-level expiry is planned; without a time field it is invalid, as in Java.
    let options = r#", "record-level.expire-time": "1 d""#;
    let e = plan_pk_compaction(&pk_schema(options), &[], &PkCompactRequest::default()).unwrap_err();
    assert!(
        matches!(&e, crate::error::Error::Invalid(m) if m.contains("'record-level.time-field'")),
        "{options}: {e}"
    );
    // Changelog row deduplication is planned like any lookup table.
    let dedup = pk_schema(
        r#", "changelog-producer": "lookup", "changelog-producer.row-deduplicate": "true""#,
    );
    assert!(plan_pk_compaction(&dedup, &[], &PkCompactRequest::default()).is_ok());
}

#[test]
fn deletion_vector_tables_compact_as_lookup_tables() {
    use super::planner::{PkCompactRequest, plan_pk_compaction};
    use crate::spec::{DeletionVectorMeta, FileKind, IndexFileMeta, IndexManifestEntry};
    let dv = pk_schema(r#", "deletion-vectors.enabled": "true""#);
    let max = entry(1000, 5, (0, 100));
    let other = entry(1000, 5, (101, 200));
    let index = IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: "index-dv-0".into(),
        file_size: 64,
        row_count: 1,
        dv_ranges: Some(vec![DeletionVectorMeta {
            data_file_name: max.file.file_name.clone(),
            offset: 1,
            length: 22,
            cardinality: Some(2),
        }]),
        external_path: None,
        global_index: None,
    };
    let index_entries = vec![IndexManifestEntry {
        kind: FileKind::Add,
        partition: BinaryRow::empty(),
        bucket: 0,
        index_file: index.clone(),
    }];
    let request = PkCompactRequest {
        index_entries: index_entries.clone(),
        ..Default::default()
    };
    // One max-level run with a vector: nothing for a normal compaction.
    let tasks = plan_pk_compaction(&dv, &[max.clone(), other.clone()], &request).unwrap();
    assert!(tasks.is_empty(), "{tasks:?}");
    // A full compaction rewrites only the file with the vector, file by file.
    let full = PkCompactRequest {
        full: true,
        ..request.clone()
    };
    let tasks = plan_pk_compaction(&dv, &[max.clone(), other.clone()], &full).unwrap();
    assert_eq!(tasks.len(), 1);
    let t = &tasks[0];
    assert_eq!(t.unit.output_level, 5);
    assert!(t.unit.file_rewrite);
    assert_eq!(names(&t.unit.files), vec![max.file.file_name.clone()]);
    assert!(t.drop_delete && t.deletion_vectors);
    assert_eq!(t.deleted_index_files, vec![index.clone()]);
    let d = &t.deletion_files[&max.file.file_name];
    assert_eq!(
        (d.path.as_str(), d.offset, d.length),
        ("index/index-dv-0", 1, 22)
    );
    assert_eq!(d.cardinality, Some(2));
    assert!(!t.deletion_files.contains_key(&other.file.file_name));
    assert!(!super::is_pure_upgrade(t));
    // Without vectors, a full compaction of one max-level run has nothing to do.
    let none = plan_pk_compaction(
        &dv,
        std::slice::from_ref(&other),
        &PkCompactRequest {
            full: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(none.is_empty());
    // A normal request with level 0: level 0 is forced up to the level below the next run
    // (Java's ForceUpLevel0Compaction), the max level is looked up, and retractions are
    // dropped although level 5 holds older data.
    let l0 = entry(10, 0, (5, 8));
    let tasks = plan_pk_compaction(&dv, &[l0.clone(), max.clone(), other], &request).unwrap();
    assert_eq!(tasks.len(), 1);
    let t = &tasks[0];
    assert_eq!(t.unit.output_level, 4);
    assert_eq!(names(&t.unit.files), vec![l0.file.file_name.clone()]);
    assert_eq!(t.lookup_files.len(), 2);
    assert!(t.drop_delete);
    assert_eq!(t.deleted_index_files.len(), 1);
    // Its level-0 file moves up with a read (the lookup marks rows of level 5).
    let mut clean = l0.file.clone();
    clean.delete_row_count = Some(0);
    clean.file_size = 1 << 30;
    let mut upgrade = t.clone();
    upgrade.unit.files = vec![clean];
    assert!(!super::is_pure_upgrade(&upgrade));
    upgrade.lookup_files.clear();
    assert!(super::is_pure_upgrade(&upgrade));
}

/// A run whose batches come from files of one level.
struct LevelRun {
    inner: MemoryRunSource,
    level: i32,
}

impl RunSource for LevelRun {
    fn next_batch(
        &mut self,
    ) -> futures_util::future::BoxFuture<'_, crate::error::Result<Option<RecordBatch>>> {
        self.inner.next_batch()
    }

    fn batch_level(&self) -> i32 {
        self.level
    }
}

/// One record of a changelog test: key, sequence number, row kind byte, values.
type TestRec = (i32, i64, i8, Vec<Option<i32>>);

/// Merge `runs` (level, records; the last `lookup` runs lookup-only) of a table with
/// value columns `k` + `values` and return (data records, changelog records) as
/// (key, seq, kind, values).
fn changelog_merge(
    config: &MergeConfig,
    runs: Vec<(i32, Vec<TestRec>)>,
    lookup: usize,
    mode: Option<crate::merge::ChangelogMode>,
    keep_retract: bool,
) -> (Vec<TestRec>, Vec<TestRec>) {
    let names: Vec<String> = config.fields.iter().map(|f| f.name.clone()).collect();
    let read = config.read_fields(&names);
    let schema = config.input_schema(&read).unwrap();
    let width = names.len() - 1;
    let sources: Vec<Box<dyn RunSource>> = runs
        .into_iter()
        .map(|(level, recs)| {
            let mut cols: Vec<ArrayRef> = vec![
                Arc::new(Int32Array::from_iter_values(recs.iter().map(|r| r.0))),
                Arc::new(Int64Array::from_iter_values(recs.iter().map(|r| r.1))),
                Arc::new(Int8Array::from_iter_values(recs.iter().map(|r| r.2))),
                Arc::new(Int32Array::from_iter_values(recs.iter().map(|r| r.0))),
            ];
            for c in 0..width {
                cols.push(Arc::new(Int32Array::from_iter(recs.iter().map(|r| r.3[c]))));
            }
            let batch = RecordBatch::try_new(Arc::clone(&schema), cols).unwrap();
            Box::new(LevelRun {
                inner: MemoryRunSource::new([batch]),
                level,
            }) as Box<dyn RunSource>
        })
        .collect();
    let output: Vec<usize> = (0..names.len()).collect();
    let mut reader = MergeReader::try_new(config, Arc::clone(&schema), output, sources, 3)
        .unwrap()
        .with_key_value_output(keep_retract);
    if lookup > 0 || mode.is_some() {
        reader = reader.with_compaction_lookup(lookup, mode).unwrap();
    }
    let batches = poll_all(&mut reader);
    let batch = arrow_select::concat::concat_batches(&reader.schema(), &batches).unwrap();
    let int = |i: usize, r: usize| -> Option<i64> {
        let c = arrow_cast::cast(batch.column(i), &arrow_schema::DataType::Int64).unwrap();
        let c = c.as_any().downcast_ref::<Int64Array>().unwrap();
        c.is_valid(r).then(|| c.value(r))
    };
    let flag_col = mode.map(|_| batch.num_columns() - 1);
    let (mut data, mut log) = (Vec::new(), Vec::new());
    for r in 0..batch.num_rows() {
        let rec = (
            int(0, r).unwrap() as i32,
            int(1, r).unwrap(),
            int(2, r).unwrap() as i8,
            (0..width)
                .map(|c| int(4 + c, r).map(|v| v as i32))
                .collect(),
        );
        let is_log = flag_col.is_some_and(|c| {
            batch
                .column(c)
                .as_any()
                .downcast_ref::<arrow_array::BooleanArray>()
                .unwrap()
                .value(r)
        });
        if is_log {
            log.push(rec)
        } else {
            data.push(rec)
        }
    }
    (data, log)
}

fn int_field(id: i32, name: &str, nullable: bool) -> DataField {
    DataField {
        id,
        name: name.into(),
        data_type: DataType {
            nullable,
            kind: TypeKind::Int,
        },
        description: None,
        default_value: None,
    }
}

const I: i8 = 0;
const UB: i8 = 1;
const UA: i8 = 2;
const D: i8 = 3;

/// Java's `LookupChangelogMergeFunctionWrapperTest#testDeduplicate` cases (without row
/// deduplication), one key per case: records of the inputs at levels 0..2 and lookup hits
/// of level 2.
#[test]
fn lookup_changelog_deduplicate_follows_java() {
    let mut config = MergeConfig::new(
        MergeEngine::Deduplicate,
        vec![int_field(0, "k", false), int_field(1, "v", true)],
        vec!["k".into()],
        vec![],
    );
    config.lookup = true;
    let v = |x: i32| vec![Some(x)];
    let runs = vec![
        // Level 0: keys 2..7.
        (
            0,
            vec![
                (2, 2, I, v(2)),
                (3, 1, UA, v(2)),
                (4, 2, I, v(2)),
                (5, 2, I, v(2)),
                (6, 1, UB, v(2)),
                (7, 2, D, v(2)),
            ],
        ),
        // Level 1 inputs: keys 1, 2.
        (1, vec![(1, 2, I, v(2)), (2, 1, I, v(1))]),
        // Level 2 inputs: key 1.
        (2, vec![(1, 1, I, v(1))]),
        // Lookup-only level 2 (above the output level): keys 4, 5, 7, 10.
        (
            2,
            vec![
                (4, 1, I, v(1)),
                (5, 1, D, v(1)),
                (7, 1, D, v(1)),
                (10, 1, I, v(1)),
            ],
        ),
    ];
    let (data, log) = changelog_merge(
        &config,
        runs,
        1,
        Some(crate::merge::ChangelogMode::Lookup),
        true,
    );
    assert_eq!(
        data,
        vec![
            (1, 2, I, v(2)),  // no level 0: no changelog
            (2, 2, I, v(2)),  // level 0 over level 1
            (3, 1, UA, v(2)), // level 0 alone, nothing found
            (4, 2, I, v(2)),  // level 0 over the lookup hit
            (5, 2, I, v(2)),  // the lookup hit is a delete
            (6, 1, UB, v(2)), // a retraction alone (kept: not the oldest level)
            (7, 2, D, v(2)),  // delete over a deleted hit
        ]
    );
    assert_eq!(
        log,
        vec![
            (2, 1, UB, v(1)),
            (2, 2, UA, v(2)),
            (3, 1, I, v(2)),
            (4, 1, UB, v(1)),
            (4, 2, UA, v(2)),
            (5, 2, I, v(2)),
        ]
    );
    // Without changelog the lookup-only run still never makes output on its own.
    let runs = vec![
        (0, vec![(4, 2, I, v(2))]),
        (2, vec![(4, 1, I, v(1)), (9, 1, I, v(9))]),
    ];
    let (data, log) = changelog_merge(&config, runs, 1, None, false);
    assert_eq!(data, vec![(4, 2, I, v(2))]);
    assert!(log.is_empty());
}

/// Partial update in a lookup table: the lookup hit is merged under the level-0 records,
/// and of the inputs only the lowest positive level takes part (Java's
/// `LookupMergeFunction`: it already holds the merged history below it).
#[test]
fn lookup_merge_partial_update_uses_the_lowest_high_level() {
    let mut config = MergeConfig::new(
        MergeEngine::PartialUpdate,
        vec![
            int_field(0, "k", false),
            int_field(1, "a", true),
            int_field(2, "b", true),
        ],
        vec!["k".into()],
        vec![],
    );
    config.lookup = true;
    let runs = || {
        vec![
            (
                0,
                vec![
                    (1, 5, I, vec![None, Some(5)]),
                    (2, 6, I, vec![None, Some(7)]),
                ],
            ),
            (1, vec![(2, 3, I, vec![None, Some(2)])]),
            (3, vec![(2, 1, I, vec![Some(9), Some(9)])]),
            // Lookup-only level 4.
            (4, vec![(1, 1, I, vec![Some(1), Some(1)])]),
        ]
    };
    let (data, log) = changelog_merge(
        &config,
        runs(),
        1,
        Some(crate::merge::ChangelogMode::Lookup),
        true,
    );
    assert_eq!(
        data,
        vec![
            (1, 5, I, vec![Some(1), Some(5)]),
            (2, 6, I, vec![None, Some(7)])
        ]
    );
    assert_eq!(
        log,
        vec![
            (1, 1, UB, vec![Some(1), Some(1)]),
            (1, 5, UA, vec![Some(1), Some(5)]),
            (2, 3, UB, vec![None, Some(2)]),
            (2, 6, UA, vec![None, Some(7)]),
        ]
    );
    // A plain merge (not a lookup table) would take `a` = 9 from level 3.
    config.lookup = false;
    let plain: Vec<_> = runs().into_iter().take(3).collect();
    let (data, _) = changelog_merge(&config, plain, 0, None, true);
    assert_eq!(data[1], (2, 6, I, vec![Some(9), Some(7)]));
    // Reads of a lookup table apply the same rule without lookup runs.
    config.lookup = true;
    let plain: Vec<_> = runs().into_iter().take(3).collect();
    let (data, _) = changelog_merge(&config, plain, 0, None, true);
    assert_eq!(data[1], (2, 6, I, vec![None, Some(7)]));
}

/// Java's `FullChangelogMergeFunctionWrapper`: the before image is the max-level record.
#[test]
fn full_compaction_changelog_follows_java() {
    let config = MergeConfig::new(
        MergeEngine::Deduplicate,
        vec![int_field(0, "k", false), int_field(1, "v", true)],
        vec!["k".into()],
        vec![],
    );
    let v = |x: i32| vec![Some(x)];
    let runs = vec![
        (
            0,
            vec![
                (1, 5, I, v(1)),
                (3, 5, I, v(2)),
                (4, 5, D, v(0)),
                (5, 6, D, v(0)),
                (6, 5, I, v(2)),
            ],
        ),
        (0, vec![(5, 4, I, v(5))]),
        (1, vec![(6, 2, I, v(1))]),
        (2, vec![(2, 1, I, v(2)), (3, 1, I, v(1)), (4, 1, I, v(1))]),
    ];
    let (data, log) = changelog_merge(
        &config,
        runs,
        0,
        Some(crate::merge::ChangelogMode::FullCompaction { max_level: 2 }),
        false,
    );
    assert_eq!(
        data,
        vec![
            (1, 5, I, v(1)),
            (2, 1, I, v(2)),
            (3, 5, I, v(2)),
            (6, 5, I, v(2)),
        ]
    );
    assert_eq!(
        log,
        vec![
            (1, 5, I, v(1)),  // one new record
            (3, 1, UB, v(1)), // changed
            (3, 5, UA, v(2)),
            (4, 1, D, v(1)), // deleted
            (6, 5, I, v(2)), // new key over a lower level
        ]
    );
}

/// Java's `FirstRowMergeFunctionWrapper`: a key a higher level holds is dropped; a new
/// key is emitted as data and changelog; a key with an input above level 0 keeps its
/// first row without changelog.
#[test]
fn first_row_lookup_changelog_follows_java() {
    let config = MergeConfig::new(
        MergeEngine::FirstRow,
        vec![int_field(0, "k", false), int_field(1, "v", true)],
        vec!["k".into()],
        vec![],
    );
    let v = |x: i32| vec![Some(x)];
    let runs = vec![
        (0, vec![(1, 5, I, v(1)), (2, 5, I, v(2)), (3, 5, I, v(3))]),
        (0, vec![(1, 6, I, v(9))]),
        (1, vec![(3, 1, I, v(30))]),
        (3, vec![(2, 1, I, v(20))]),
    ];
    let (data, log) = changelog_merge(
        &config,
        runs,
        1,
        Some(crate::merge::ChangelogMode::Lookup),
        true,
    );
    assert_eq!(data, vec![(1, 5, I, v(1)), (3, 1, I, v(30))]);
    assert_eq!(log, vec![(1, 5, I, v(1))]);
}

fn postpone_entry(
    bucket: i32,
    total: i32,
    level: i32,
    rows: i64,
    created: i64,
) -> crate::spec::ManifestEntry {
    let mut f = file(100, level);
    f.row_count = rows;
    f.creation_time_millis = Some(created);
    crate::spec::ManifestEntry {
        kind: crate::spec::FileKind::Add,
        partition: BinaryRow::empty(),
        bucket,
        total_buckets: total,
        file: f,
    }
}

#[test]
fn postpone_partitions_get_known_then_row_count_then_default_bucket_counts() {
    use super::postpone::{PostponePartition, plan_postpone_compaction};
    let plan = |options: &str, entries: &[crate::spec::ManifestEntry]| -> Vec<PostponePartition> {
        let mut schema = pk_schema(options);
        schema.options.insert("bucket".into(), "-2".into());
        plan_postpone_compaction(&schema, entries, &std::collections::BTreeMap::new()).unwrap()
    };
    // Replay order: creation time, then manifest order.
    let postponed = vec![
        postpone_entry(-2, -2, 0, 5, 30),
        postpone_entry(-2, -2, 0, 4, 10),
        postpone_entry(-2, -2, 0, 2, 30),
    ];
    let p = plan("", &postponed);
    assert_eq!(p.len(), 1);
    assert_eq!(
        p[0].total_buckets, 1,
        "postpone.default-bucket-num defaults to 1"
    );
    let order: Vec<&str> = p[0]
        .postpone_files
        .iter()
        .map(|f| f.file_name.as_str())
        .collect();
    let names: Vec<&str> = postponed
        .iter()
        .map(|e| e.file.file_name.as_str())
        .collect();
    assert_eq!(order, vec![names[1], names[0], names[2]]);
    assert!(p[0].level0_buckets.is_empty());
    assert_eq!(
        plan(r#", "postpone.default-bucket-num": "3""#, &postponed)[0].total_buckets,
        3
    );
    // ceil(11 rows / 4) = 3, whatever the default.
    let with_target =
        r#", "postpone.default-bucket-num": "7", "postpone.target-row-num-per-bucket": "4""#;
    assert_eq!(plan(with_target, &postponed)[0].total_buckets, 3);
    // Real-bucket files fix the count; their level-0 buckets are compacted too.
    let mut known = postponed.clone();
    known.push(postpone_entry(1, 5, 0, 1, 0));
    known.push(postpone_entry(3, 5, 2, 1, 0));
    let p = plan(with_target, &known);
    assert_eq!(p[0].total_buckets, 5);
    assert_eq!(p[0].level0_buckets, vec![1]);
    assert_eq!(p[0].real_entries.len(), 2);
    // Only level-0 files: still a partition to compact; nothing at all: none.
    assert_eq!(plan("", &known[3..]).len(), 1);
    assert!(plan("", &known[4..]).is_empty());
    // Files written for two bucket counts: an error naming the counts.
    let mut mixed = known.clone();
    mixed.push(postpone_entry(0, 4, 1, 1, 0));
    let mut schema = pk_schema("");
    schema.options.insert("bucket".into(), "-2".into());
    let e = plan_postpone_compaction(&schema, &mixed, &std::collections::BTreeMap::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("5") && e.contains("4 buckets"), "{e}");
    // Not a postpone table: refused; BLOB columns (managed): planned as any other.
    assert!(
        plan_postpone_compaction(&pk_schema(""), &known, &std::collections::BTreeMap::new())
            .is_err()
    );
    let planned = plan_postpone_compaction(&schema, &known, &std::collections::BTreeMap::new())
        .unwrap()
        .len();
    schema
        .fields
        .push(DataField::new(9, "b", DataType::parse_sql("BLOB").unwrap()));
    let with_blob = plan_postpone_compaction(&schema, &known, &std::collections::BTreeMap::new())
        .unwrap()
        .len();
    assert_eq!(with_blob, planned);
}

#[test]
fn postpone_bucket_messages_fold_into_one_compact_increment() {
    use super::postpone::fold_bucket_message;
    use crate::commit::{CommitMessage, CompactIncrement, DataIncrement};
    let (new_a, new_b, new_c) = (file(1, 0), file(2, 0), file(3, 0));
    let old = file(50, 5);
    let out = file(60, 5);
    let mut upgraded_c = new_c.clone();
    upgraded_c.level = 4;
    let m = CommitMessage {
        partition: BinaryRow::empty(),
        bucket: 2,
        total_buckets: Some(3),
        data_increment: DataIncrement {
            new_files: vec![new_a.clone(), new_b.clone(), new_c.clone()],
            changelog_files: vec![file(4, 0)],
            ..Default::default()
        },
        compact_increment: CompactIncrement {
            compact_before: vec![new_a.clone(), old.clone(), new_c.clone()],
            compact_after: vec![out.clone(), upgraded_c.clone()],
            changelog_files: vec![file(5, 0)],
            ..Default::default()
        },
    };
    let (folded, consumed) = fold_bucket_message(m);
    assert!(folded.data_increment.new_files.is_empty());
    let c = &folded.compact_increment;
    // The old file is removed; new files the compaction read are not (no snapshot had them).
    assert_eq!(names(&c.compact_before), names(&[old]));
    assert_eq!(names(&c.compact_after), names(&[new_b, out, upgraded_c]));
    assert_eq!(c.changelog_files.len(), 2);
    // Consumed and not upgraded: deleted by the host.
    assert_eq!(names(&consumed), names(&[new_a]));
    assert_eq!(folded.total_buckets, Some(3));
}

/// A level-`level` file of keys `keys` whose value statistics give `min_t` as the minimum of
/// the INT column `t` (fields `k BIGINT`, `t INT`).
fn timed_entry(
    size: i64,
    level: i32,
    keys: (i64, i64),
    min_t: Option<i32>,
) -> crate::spec::ManifestEntry {
    let mut e = entry(size, level, keys);
    let types = [
        DataType::not_null(TypeKind::BigInt),
        DataType::nullable(TypeKind::Int),
    ];
    let row = |t: Option<i32>| {
        crate::encode::row::binary_row_at(
            &[
                Arc::new(Int64Array::from(vec![keys.0])) as ArrayRef,
                Arc::new(Int32Array::from(vec![t])) as ArrayRef,
            ],
            &types,
            0,
        )
        .unwrap()
    };
    e.file.value_stats = SimpleStats {
        min_values: row(min_t),
        max_values: row(min_t.map(|t| t + 10_000)),
        null_counts: vec![Some(0), Some(0)].into(),
    };
    e
}

fn expiring_schema() -> crate::spec::TableSchema {
    let json =
        br#"{"fields": [{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "t", "type": "INT"}],
        "primaryKeys": ["k"], "options": {"bucket": "1", "record-level.expire-time": "100 s",
        "record-level.time-field": "t"}}"#;
    crate::schema::create::new_table_schema(json, 0).unwrap()
}

#[test]
fn record_level_expiry_picks_and_rewrites_expired_files() {
    use super::planner::{PkCompactRequest, plan_pk_compaction, plan_summary};
    let schema = expiring_schema();
    // now = 1000 s, expire = 100 s: a file whose minimum time is below 900 holds expired rows.
    let expired = timed_entry(1000, 5, (0, 10), Some(899));
    let fresh = timed_entry(1000, 5, (11, 20), Some(900));
    let untimed = timed_entry(1000, 5, (21, 30), None);
    let max_only = vec![expired.clone(), fresh.clone(), untimed.clone()];
    let normal = PkCompactRequest {
        now_millis: 1_000_000,
        ..Default::default()
    };
    let full = PkCompactRequest {
        full: true,
        ..normal.clone()
    };
    // Normal compaction of one max-level run: nothing (the strategy ignores expiry).
    assert!(
        plan_pk_compaction(&schema, &max_only, &normal)
            .unwrap()
            .is_empty()
    );
    // Full compaction of one max-level run: only the expired file, rewritten alone.
    let tasks = plan_pk_compaction(&schema, &max_only, &full).unwrap();
    assert_eq!(tasks.len(), 1);
    let t = &tasks[0];
    assert!(t.unit.file_rewrite);
    assert_eq!(t.unit.output_level, 5);
    assert_eq!(names(&t.unit.files), vec![expired.file.file_name.clone()]);
    assert_eq!(t.expired_files, vec![expired.file.file_name.clone()]);
    let x = t.record_level_expire.as_ref().unwrap();
    assert_eq!((x.now_seconds, x.expire_seconds), (1000, 100));
    assert_eq!(x.time_field.name, "t");
    // One second later the fresh file's minimum (900) is expired too.
    let later = PkCompactRequest {
        now_millis: 1_001_000,
        ..full.clone()
    };
    let tasks = plan_pk_compaction(&schema, &max_only, &later).unwrap();
    assert_eq!(
        tasks[0].expired_files,
        vec![expired.file.file_name.clone(), fresh.file.file_name.clone()]
    );
    // Without expiry the same bucket has nothing to do.
    let plain = pk_schema("");
    assert!(
        plan_pk_compaction(&plain, &max_only, &full)
            .unwrap()
            .is_empty()
    );

    // A large file one level below the max: a full compaction would move it up (an
    // upgrade); with expired rows it is rewritten, so the plan says no upgrade.
    let mid = timed_entry(1000, 3, (0, 10), Some(10));
    let tasks = plan_pk_compaction(&schema, std::slice::from_ref(&mid), &full).unwrap();
    assert_eq!(tasks[0].expired_files, vec![mid.file.file_name.clone()]);
    assert!(!super::is_pure_upgrade(&tasks[0]));
    let plan = plan_summary(&schema, Some(1), &tasks).unwrap();
    assert!(!plan.units[0].upgrade);
    let fresh_mid = timed_entry(1000, 3, (0, 10), Some(990));
    let tasks = plan_pk_compaction(&schema, &[fresh_mid], &full).unwrap();
    assert!(tasks[0].expired_files.is_empty());
    assert!(super::is_pure_upgrade(&tasks[0]));
    // Files of other buckets or outside the unit are not listed.
    let tasks = plan_pk_compaction(&schema, &[mid.clone(), fresh.clone()], &normal).unwrap();
    assert!(tasks.is_empty());
}

fn why(s: super::incremental::Selection) -> String {
    match s {
        super::incremental::Selection::Conservative(why) => why,
        other => panic!("expected a conservative selection, got {other:?}"),
    }
}

fn agg_schema(fields: &str, options: &str) -> crate::spec::TableSchema {
    let json = format!(
        r#"{{"fields": [{{"name": "k", "type": "BIGINT NOT NULL"}}{fields}],
        "primaryKeys": ["k"], "options": {{"bucket": "1",
        "kernel.compaction.incremental-selection": "true"{options}}}}}"#
    );
    crate::schema::create::new_table_schema(json.as_bytes(), 0).unwrap()
}

#[test]
fn incremental_selection_by_table_kind() {
    use super::incremental::{Regrouping, Selection, selection};
    let on = r#", "kernel.compaction.incremental-selection": "true""#;
    assert_eq!(selection(&pk_schema("")).unwrap(), Selection::Java);
    assert!(
        selection(&pk_schema(
            r#", "kernel.compaction.incremental-selection": "maybe""#
        ))
        .unwrap_err()
        .to_string()
        .contains("kernel.compaction.incremental-selection")
    );
    // Lookup tables.
    for extra in [
        r#", "merge-engine": "first-row""#,
        r#", "merge-engine": "first-row", "changelog-producer": "lookup""#,
        r#", "merge-engine": "partial-update", "changelog-producer": "lookup""#,
        r#", "merge-engine": "aggregation", "force-lookup": "true""#,
    ] {
        assert_eq!(
            selection(&pk_schema(&format!("{on}{extra}"))).unwrap(),
            Selection::Incremental(Regrouping::Lookup),
            "{extra}"
        );
    }
    // Tables that keep Java's selection, with the reason.
    assert!(why(selection(&pk_schema(on)).unwrap()).contains("deduplicate"));
    assert!(
        why(selection(&pk_schema(&format!(
            r#"{on}, "merge-engine": "first-row", "deletion-vectors.enabled": "true""#
        )))
        .unwrap())
        .contains("deletion-vector")
    );
    assert!(
        why(selection(&pk_schema(&format!(
            r#"{on}, "merge-engine": "first-row", "changelog-producer": "input""#
        )))
        .unwrap())
        .contains("first-row")
    );
    let n = r#", {"name": "n", "type": "BIGINT"}"#;
    let d = r#", {"name": "d", "type": "DOUBLE"}"#;
    let conservative = [
        // last_non_null_value by default.
        (
            n,
            r#", "merge-engine": "aggregation""#,
            "last_non_null_value",
        ),
        (
            n,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "first_value""#,
            "first_value",
        ),
        (
            d,
            r#", "merge-engine": "aggregation", "fields.d.aggregate-function": "sum""#,
            "'sum' on DOUBLE",
        ),
        (
            r#", {"name": "m", "type": "DECIMAL(10, 2)"}"#,
            r#", "merge-engine": "aggregation", "fields.m.aggregate-function": "sum""#,
            "'sum' on DECIMAL(10, 2)",
        ),
        (
            n,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "aggregation.remove-record-on-delete": "true""#,
            "remove-record-on-delete",
        ),
        (
            n,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "max", "fields.n.ignore-retract": "true""#,
            "ignore-retract",
        ),
        (
            n,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "sequence.field": "n""#,
            "sequence.field",
        ),
        (
            n,
            r#", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "changelog-producer": "full-compaction""#,
            "full-compaction",
        ),
        // Sparse overwrite.
        (
            n,
            r#", "merge-engine": "partial-update""#,
            "sparse overwrite",
        ),
        (
            r#", {"name": "g", "type": "INT"}, {"name": "n", "type": "BIGINT"}"#,
            r#", "merge-engine": "partial-update", "fields.g.sequence-group": "n""#,
            "no aggregate function",
        ),
        (
            r#", {"name": "g", "type": "INT"}, {"name": "h", "type": "INT"}, {"name": "n", "type": "BIGINT"}"#,
            r#", "merge-engine": "partial-update", "fields.g.sequence-group": "h,n", "fields.h.sequence-group": "n", "fields.n.aggregate-function": "max""#,
            "ordering field of a sequence group and protected",
        ),
    ];
    for (fields, options, reason) in conservative {
        let got = why(selection(&agg_schema(fields, options)).unwrap());
        assert!(got.contains(reason), "{options}: {got}");
    }
    // The safe subset.
    assert_eq!(
        selection(&agg_schema(
            r#", {"name": "a", "type": "INT"}, {"name": "b", "type": "STRING"}, {"name": "c", "type": "BOOLEAN"}"#,
            r#", "merge-engine": "aggregation", "fields.a.aggregate-function": "sum", "fields.b.aggregate-function": "max", "fields.c.aggregate-function": "bool_or""#,
        ))
        .unwrap(),
        Selection::Incremental(Regrouping::Plain {
            int_sums: vec![int_field(1, "a", true)],
            no_retractions: false,
        })
    );
    let grouped = r#", {"name": "g", "type": "INT"}, {"name": "a", "type": "INT"}, {"name": "b", "type": "STRING"}"#;
    let groups = r#", "merge-engine": "partial-update", "fields.g.sequence-group": "a,b", "fields.a.aggregate-function": "sum", "fields.b.aggregate-function": "min""#;
    for (ignore, no_retractions) in [("", true), (r#", "ignore-delete": "true""#, false)] {
        assert_eq!(
            selection(&agg_schema(grouped, &format!("{groups}{ignore}"))).unwrap(),
            Selection::Incremental(Regrouping::Plain {
                int_sums: vec![int_field(2, "a", true)],
                no_retractions,
            })
        );
    }
}

/// Runs of one file each at `(level, size)`, newest first.
fn runs(spec: &[(i32, i64)]) -> Vec<LevelSortedRun> {
    spec.iter().map(|(l, s)| level(*l, *s)).collect()
}

#[test]
fn incremental_picks_keep_large_history_in_place() {
    use super::incremental::{IncrementalPick, Regrouping, pick};
    let u = universal(200, 1, 3);
    let lookup = CompactStrategy::ForceUpLevel0 {
        universal: u.clone(),
        max_interval: None,
    };
    let plain = CompactStrategy::Universal(u.clone());
    let sums = Regrouping::Plain {
        int_sums: Vec::new(),
        no_retractions: false,
    };
    // Two small level-0 runs, a large run at level 3 and a small oldest run: Java's size
    // amplification takes everything.
    let r = runs(&[(0, 10), (0, 10), (3, 300), (5, 100)]);
    let java = lookup.pick(6, &r).unwrap();
    assert_eq!(java.files.len(), 4);
    assert_eq!(java.output_level, 5);
    // Lookup tables: the level-0 runs go one level above the large run.
    let p = pick(&Regrouping::Lookup, &u, 6, &r, Some(java.clone())).unwrap();
    assert_eq!(sizes_of(&p.unit.files), vec![10, 10]);
    assert_eq!(p.unit.output_level, 2);
    assert!(!p.keep_retractions);
    // Plain tables: the oldest run is large against the level-0 runs too; the output goes
    // to the highest level no retained run holds.
    let p = pick(&sums, &u, 6, &r, plain.pick(6, &r)).unwrap();
    assert_eq!(sizes_of(&p.unit.files), vec![10, 10]);
    assert_eq!(p.unit.output_level, 4);
    assert!(p.keep_retractions);
    // A small oldest run is selected past the large one (not adjacent): merged with the
    // level-0 runs at its own level, the large run stays.
    let r = runs(&[(0, 10), (0, 10), (3, 300), (5, 20)]);
    let p = pick(&sums, &u, 6, &r, plain.pick(6, &r)).unwrap();
    assert_eq!(sizes_of(&p.unit.files), vec![10, 10, 20]);
    assert_eq!(p.unit.output_level, 5);
    // ... while a lookup table stops at the large run.
    let p = pick(&Regrouping::Lookup, &u, 6, &r, lookup.pick(6, &r)).unwrap();
    assert_eq!(sizes_of(&p.unit.files), vec![10, 10]);
    assert_eq!(p.unit.output_level, 2);
    // Java's unit without a retained run is Java's plan.
    let r = runs(&[(0, 10), (0, 10), (4, 15), (5, 1000)]);
    let java = lookup.pick(6, &r).unwrap();
    assert_eq!(
        pick(&Regrouping::Lookup, &u, 6, &r, Some(java.clone())),
        Some(IncrementalPick {
            unit: java,
            keep_retractions: false
        })
    );
    // Nothing picked by Java: nothing.
    assert_eq!(pick(&sums, &u, 6, &r[2..], None), None);
    // The large run at level 1: no level above it, Java's forced level-0 pick (with level 1).
    let r = runs(&[(0, 10), (1, 500), (5, 10_000)]);
    let java = lookup.pick(6, &r).unwrap();
    let p = pick(&Regrouping::Lookup, &u, 6, &r, Some(java)).unwrap();
    assert_eq!(sizes_of(&p.unit.files), vec![10, 500]);
    assert_eq!(p.unit.output_level, 4);
    // Plain: a single selected run compacts nothing; every level held by history: Java.
    let r = runs(&[(0, 10), (3, 300), (4, 5000), (5, 100_000)]);
    assert!(plain.pick(6, &r).is_some());
    assert_eq!(pick(&sums, &u, 6, &r, plain.pick(6, &r)), None);
    let r = runs(&[
        (0, 10),
        (0, 10),
        (1, 100),
        (2, 1_000),
        (3, 10_000),
        (4, 100_000),
        (5, 1_000_000),
    ]);
    let java = plain.pick(6, &r).unwrap();
    let p = pick(&sums, &u, 6, &r, Some(java.clone())).unwrap();
    assert_eq!(p.unit, java);
    assert!(!p.keep_retractions);
}
