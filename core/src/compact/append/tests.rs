//! Append planner cases; the expected tasks are derived from Java release-2.0.0's
//! `AppendCompactCoordinator` (unaware bucket) and `BucketedAppendCompactManager` (fixed
//! buckets), as explained per case.

use super::*;
use crate::spec::{DataType, Datum, FileKind, SimpleStats, TypeKind};

fn file(name: &str, size: i64, min_seq: i64, rows: i64) -> DataFileMeta {
    DataFileMeta {
        file_name: name.into(),
        file_size: size,
        row_count: rows,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: SimpleStats::empty(),
        value_stats: SimpleStats::empty(),
        min_sequence_number: min_seq,
        max_sequence_number: min_seq + rows - 1,
        schema_id: 0,
        level: 0,
        extra_files: vec![],
        creation_time_millis: None,
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(FileSource::Append),
        value_stats_cols: None,
        external_path: None,
        first_row_id: None,
        write_cols: None,
        write_cols_sequences: None,
    }
}

fn partition(p: i32) -> BinaryRow {
    BinaryRow::encode(&[Datum::Int(p)], &[DataType::not_null(TypeKind::Int)]).unwrap()
}

fn entry(part: &BinaryRow, bucket: i32, total: i32, file: DataFileMeta) -> ManifestEntry {
    ManifestEntry {
        kind: FileKind::Add,
        partition: part.clone(),
        bucket,
        total_buckets: total,
        file,
    }
}

fn opts(target: i64, min: usize, open: i64) -> AppendCompactOptions {
    AppendCompactOptions {
        target_file_size: target,
        compaction_file_size: (target as f64 * 0.7) as i64,
        min_file_num: min,
        open_file_cost: open,
        force_rewrite_all_files: false,
    }
}

fn names(tasks: &[AppendCompactTask]) -> Vec<Vec<&str>> {
    tasks
        .iter()
        .map(|t| t.files.iter().map(|f| f.file_name.as_str()).collect())
        .collect()
}

#[test]
fn options_follow_java_defaults() {
    let o = AppendCompactOptions::from_options(&CoreOptions::new(Default::default())).unwrap();
    assert_eq!(o.target_file_size, 256 << 20);
    // 256 MiB × 0.7, truncated: Java `compactionFileSize(false)`.
    assert_eq!(o.compaction_file_size, 187_904_819);
    assert_eq!(o.min_file_num, 5);
    assert_eq!(o.open_file_cost, 4 << 20);
    let mut m = std::collections::BTreeMap::new();
    m.insert("compaction.min.file-num".to_string(), "x".to_string());
    let err = AppendCompactOptions::from_options(&CoreOptions::new(m)).unwrap_err();
    assert!(err.to_string().contains("compaction.min.file-num"), "{err}");
}

/// Unaware bucket, target 100 (small < 70), open cost 10, min 3. Files by size: s5(5),
/// s10(10), s20(20), s40(40), big(80, not small). Bins: 15, 35, 65, 115 (< 200) never
/// "enough content"; the last bin has 4 ≥ 3 files: one task, sorted by size.
#[test]
fn unaware_packs_small_files_by_size() {
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 0, 0, file("s40", 40, 1, 1)),
        entry(&p, 0, 0, file("big", 80, 2, 1)),
        entry(&p, 0, 0, file("s10", 10, 3, 1)),
        entry(&p, 0, 0, file("s20", 20, 4, 1)),
        entry(&p, 0, 0, file("s5", 5, 5, 1)),
    ];
    let tasks = plan_unaware(&e, &opts(100, 3, 10));
    assert_eq!(names(&tasks), vec![vec!["s5", "s10", "s20", "s40"]]);
    assert_eq!((tasks[0].bucket, tasks[0].total_buckets), (0, None));
    // min 5: the 4 small files are too few.
    assert!(plan_unaware(&e, &opts(100, 5, 10)).is_empty());
}

/// Target 10 (small < 7), open cost 0: a bin is "enough" once it has 2+ files and weighs
/// ≥ 20. Sizes 6,6,6,6,6: [6,6]=12, [6,6,6]=18, [6,6,6,6]=24 → task of 4; the last file alone
/// stays (1 < min 2). Equal sizes keep their input order.
#[test]
fn unaware_flushes_bins_of_twice_the_target() {
    let p = BinaryRow::empty();
    let e: Vec<_> = (0..5)
        .map(|i| entry(&p, 0, 0, file(&format!("f{i}"), 6, i, 1)))
        .collect();
    assert_eq!(
        names(&plan_unaware(&e, &opts(10, 2, 0))),
        vec![vec!["f0", "f1", "f2", "f3"]]
    );
}

/// Partitions are planned separately, in first-seen order.
#[test]
fn unaware_partitions_are_separate() {
    let (p0, p1) = (partition(0), partition(1));
    let e = vec![
        entry(&p1, 0, 0, file("b1", 1, 1, 1)),
        entry(&p0, 0, 0, file("a1", 1, 2, 1)),
        entry(&p1, 0, 0, file("b2", 1, 3, 1)),
        entry(&p0, 0, 0, file("a2", 2, 4, 1)),
        entry(&p0, 0, 0, file("a3", 3, 5, 1)),
    ];
    let tasks = plan_unaware(&e, &opts(1 << 20, 2, 0));
    assert_eq!(
        names(&tasks),
        vec![vec!["b1", "b2"], vec!["a1", "a2", "a3"]]
    );
    assert_eq!(tasks[0].partition, p1);
}

/// Fixed bucket, best effort (`pickCompactBefore`), target 100, min 3: files in sequence
/// order 150, 100, 10, 10, 10. Window [150] (150 < 200), [150,100]=250 ≥ 200 → drop 150,
/// [100,10], [100,10,10] has 3 files → task.
#[test]
fn bucketed_best_effort_slides_past_large_files() {
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 1, 2, file("c", 10, 20, 10)),
        entry(&p, 1, 2, file("a", 150, 0, 10)),
        entry(&p, 1, 2, file("b", 100, 10, 10)),
        entry(&p, 1, 2, file("d", 10, 30, 10)),
        entry(&p, 1, 2, file("e", 10, 40, 10)),
        entry(&p, 0, 2, file("x", 10, 0, 10)),
    ];
    let tasks = plan_bucketed(&e, &opts(100, 3, 0), false);
    assert_eq!(names(&tasks), vec![vec!["b", "c", "d"]]);
    assert_eq!((tasks[0].bucket, tasks[0].total_buckets), (1, Some(2)));
}

/// Full compaction: leading big files (≥ 70) are skipped; the rest [b(100), c, d, e] has 3
/// small > 1 big and ≥ 3 files → task. Bucket 0 has one file (< 3): nothing. With small
/// files not outnumbering big ones, nothing.
#[test]
fn bucketed_full_skips_leading_large_files() {
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 1, 2, file("a", 150, 0, 10)),
        entry(&p, 1, 2, file("b", 10, 10, 10)),
        entry(&p, 1, 2, file("c", 100, 20, 10)),
        entry(&p, 1, 2, file("d", 10, 30, 10)),
        entry(&p, 1, 2, file("e", 10, 40, 10)),
        entry(&p, 0, 2, file("x", 10, 0, 10)),
    ];
    assert_eq!(
        names(&plan_bucketed(&e, &opts(100, 5, 0), true)),
        vec![vec!["b", "c", "d", "e"]]
    );
    let e2 = vec![
        entry(&p, 0, 2, file("s", 10, 0, 10)),
        entry(&p, 0, 2, file("l1", 100, 10, 10)),
        entry(&p, 0, 2, file("l2", 100, 20, 10)),
    ];
    assert!(plan_bucketed(&e2, &opts(100, 5, 0), true).is_empty());
    let mut force = opts(100, 5, 0);
    force.force_rewrite_all_files = true;
    assert_eq!(
        names(&plan_bucketed(&e2, &force, true)),
        vec![vec!["s", "l1", "l2"]]
    );
}

/// Outputs count sequence numbers on from the first input's minimum, one per row.
#[test]
fn finish_numbers_outputs_from_the_first_input() {
    let task = AppendCompactTask {
        partition: BinaryRow::empty(),
        bucket: 2,
        total_buckets: Some(4),
        files: vec![file("a", 1, 7, 3), file("b", 1, 10, 4)],
    };
    let msg = task
        .finish(vec![file("o1", 5, 0, 5), file("o2", 5, 0, 2)])
        .unwrap();
    let after = &msg.compact_increment.compact_after;
    assert_eq!(
        after
            .iter()
            .map(|f| (f.min_sequence_number, f.max_sequence_number, f.file_source))
            .collect::<Vec<_>>(),
        vec![
            (7, 11, Some(FileSource::Compact)),
            (12, 13, Some(FileSource::Compact))
        ]
    );
    assert_eq!(msg.compact_increment.compact_before, task.files);
    assert_eq!((msg.bucket, msg.total_buckets), (2, Some(4)));
    assert!(msg.data_increment.new_files.is_empty());
}
