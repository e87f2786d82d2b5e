//! Append planner cases; the expected tasks are derived from Java release-2.0.0's
//! `AppendCompactCoordinator` (unaware bucket) and `BucketedAppendCompactManager` (fixed
//! buckets), as explained per case.

use super::*;
use crate::spec::{DataType, Datum, FileKind, TypeKind};
use crate::testkit;

fn file(name: &str, size: i64, min_seq: i64, rows: i64) -> DataFileMeta {
    DataFileMeta {
        file_size: size,
        row_count: rows,
        min_sequence_number: min_seq,
        max_sequence_number: min_seq + rows - 1,
        file_source: Some(FileSource::Append),
        ..testkit::data_file(name)
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
        deletion_vectors: false,
        delete_ratio_threshold: 0.2,
        dv_bitmap64: false,
        dv_index_file_target_size: 2 << 20,
    }
}

fn no_dvs() -> AppendDvIndex {
    AppendDvIndex::default()
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
    let tasks = plan_unaware(&e, &no_dvs(), &opts(100, 3, 10));
    assert_eq!(names(&tasks), vec![vec!["s5", "s10", "s20", "s40"]]);
    assert_eq!((tasks[0].bucket, tasks[0].total_buckets), (0, None));
    // min 5: the 4 small files are too few.
    assert!(plan_unaware(&e, &no_dvs(), &opts(100, 5, 10)).is_empty());
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
        names(&plan_unaware(&e, &no_dvs(), &opts(10, 2, 0))),
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
    let tasks = plan_unaware(&e, &no_dvs(), &opts(1 << 20, 2, 0));
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
    let tasks = plan_bucketed(&e, &no_dvs(), &opts(100, 3, 0), false);
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
        names(&plan_bucketed(&e, &no_dvs(), &opts(100, 5, 0), true)),
        vec![vec!["b", "c", "d", "e"]]
    );
    let e2 = vec![
        entry(&p, 0, 2, file("s", 10, 0, 10)),
        entry(&p, 0, 2, file("l1", 100, 10, 10)),
        entry(&p, 0, 2, file("l2", 100, 20, 10)),
    ];
    assert!(plan_bucketed(&e2, &no_dvs(), &opts(100, 5, 0), true).is_empty());
    let mut force = opts(100, 5, 0);
    force.force_rewrite_all_files = true;
    assert_eq!(
        names(&plan_bucketed(&e2, &no_dvs(), &force, true)),
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
        deletion_files: Vec::new(),
        dv_index: None,
    };
    let msg = task
        .finish(vec![file("o1", 5, 0, 5), file("o2", 5, 0, 2)], None)
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

/// A live deletion-vector index entry of bucket `bucket` holding vectors of `files`
/// (name, cardinality).
fn dv_index_entry(
    part: &BinaryRow,
    bucket: i32,
    index: &str,
    files: &[(&str, Option<i64>)],
) -> IndexManifestEntry {
    IndexManifestEntry {
        kind: FileKind::Add,
        partition: part.clone(),
        bucket,
        index_file: IndexFileMeta {
            index_type: DELETION_VECTORS_INDEX.into(),
            file_name: index.into(),
            file_size: 100,
            row_count: files.len() as i64,
            dv_ranges: Some(
                files
                    .iter()
                    .enumerate()
                    .map(|(i, (f, c))| DeletionVectorMeta {
                        data_file_name: (*f).into(),
                        offset: 1 + 20 * i as i32,
                        length: 12,
                        cardinality: *c,
                    })
                    .collect(),
            ),
            external_path: None,
            global_index: None,
        },
    }
}

fn dv_opts(target: i64, min: usize) -> AppendCompactOptions {
    AppendCompactOptions {
        deletion_vectors: true,
        ..opts(target, min, 0)
    }
}

fn dvs(entries: &[IndexManifestEntry], unaware: bool) -> AppendDvIndex {
    AppendDvIndex::try_new(entries, &CoreOptions::new(Default::default()), unaware).unwrap()
}

fn replaced(t: &AppendCompactTask) -> Vec<&str> {
    t.dv_index
        .as_ref()
        .map(|d| d.replaced.iter().map(|f| f.file_name.as_str()).collect())
        .unwrap_or_default()
}

/// Unaware bucket with deletion vectors (Java's `packInDeletionVectorVMode`), target 100
/// (small < 70), min 3, open cost 0, delete-ratio threshold 0.2. Candidates: a(10), b(20)
/// (small, vectors in i1), c(80, 5 of 10 rows deleted > 0.2: candidate although big; vector
/// in i2), s1(5), s2(6) (small, no vector). Not candidates: d(80, 1 of 10 rows deleted, in
/// i2), e(90, no vector). Groups by index file sorted by size: i1 [a, b] = 30, i2 [c] = 80;
/// the bin never reaches 200, and the last bin is always a task: [a, b, c], replacing i1
/// and i2 (d's vector is written again by the task). The 2 files without vectors are fewer
/// than min 3: no task (with min 2: one). Without `deletion-vectors.enabled` the same files
/// give Java's plain plan: the four small files [s1, s2, a, b].
#[test]
fn unaware_with_deletion_vectors_compacts_files_with_vectors_by_index_file() {
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 0, 0, file("a", 10, 1, 10)),
        entry(&p, 0, 0, file("c", 80, 11, 10)),
        entry(&p, 0, 0, file("b", 20, 21, 10)),
        entry(&p, 0, 0, file("d", 80, 31, 10)),
        entry(&p, 0, 0, file("e", 90, 41, 10)),
        entry(&p, 0, 0, file("s1", 5, 51, 10)),
        entry(&p, 0, 0, file("s2", 6, 61, 10)),
    ];
    let index = dvs(
        &[
            dv_index_entry(&p, 0, "i1", &[("a", Some(1)), ("b", Some(2))]),
            dv_index_entry(&p, 0, "i2", &[("c", Some(5)), ("d", Some(1))]),
        ],
        true,
    );
    let tasks = plan_unaware(&e, &index, &dv_opts(100, 3));
    assert_eq!(names(&tasks), vec![vec!["a", "b", "c"]]);
    let t = &tasks[0];
    assert_eq!(replaced(t), vec!["i1", "i2"]);
    let dv = t.dv_index.as_ref().unwrap();
    assert!(!dv.single_file);
    assert_eq!(dv.target_size_bytes, 2 << 20);
    let deletion: Vec<(String, i64, Option<i64>)> = t
        .deletion_files
        .iter()
        .map(|d| {
            let d = d.as_ref().unwrap();
            (d.path.clone(), d.offset, d.cardinality)
        })
        .collect();
    assert_eq!(
        deletion,
        vec![
            ("index/i1".to_string(), 1, Some(1)),
            ("index/i1".to_string(), 21, Some(2)),
            ("index/i2".to_string(), 1, Some(5)),
        ]
    );
    assert_eq!(
        names(&plan_unaware(&e, &index, &dv_opts(100, 2))),
        vec![vec!["a", "b", "c"], vec!["s1", "s2"]]
    );
    // An unknown cardinality makes d a candidate too (Java: `cardinality == null`).
    let unknown = dvs(
        &[
            dv_index_entry(&p, 0, "i1", &[("a", Some(1)), ("b", Some(2))]),
            dv_index_entry(&p, 0, "i2", &[("c", Some(5)), ("d", None)]),
        ],
        true,
    );
    assert_eq!(
        names(&plan_unaware(&e, &unknown, &dv_opts(100, 3))),
        vec![vec!["a", "b", "c", "d"]]
    );
    // Without deletion vectors: the plain plan, no vectors attached.
    let plain = plan_unaware(&e, &no_dvs(), &opts(100, 3, 0));
    assert_eq!(names(&plain), vec![vec!["s1", "s2", "a", "b"]]);
    assert!(plain[0].dv_index.is_none() && plain[0].deletion_files.is_empty());
}

/// Target 10 (small < 7), open cost 0: groups i3 [r(5)], i1 [p(30)], i2 [q(30)] (p and q
/// are candidates by their delete ratio). The bin [r, p] weighs 35 ≥ 20 with 2 files: a
/// task; q is left in the last bin, which is a task of one file (Java's task accepts one
/// input with deletion vectors). No group is split over two tasks.
#[test]
fn unaware_with_deletion_vectors_cuts_bins_between_index_files() {
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 0, 0, file("p", 30, 1, 10)),
        entry(&p, 0, 0, file("q", 30, 11, 10)),
        entry(&p, 0, 0, file("r", 5, 21, 10)),
    ];
    let index = dvs(
        &[
            dv_index_entry(&p, 0, "i1", &[("p", Some(9))]),
            dv_index_entry(&p, 0, "i2", &[("q", Some(3))]),
            dv_index_entry(&p, 0, "i3", &[("r", Some(1))]),
        ],
        true,
    );
    let tasks = plan_unaware(&e, &index, &dv_opts(10, 5));
    assert_eq!(names(&tasks), vec![vec!["r", "p"], vec!["q"]]);
    assert_eq!(replaced(&tasks[0]), vec!["i1", "i3"]);
    assert_eq!(replaced(&tasks[1]), vec!["i2"]);
}

/// Fixed bucket, full compaction with deletion vectors (Java `FullCompactTask` with a
/// `BucketedDvMaintainer`), target 100 (small < 70). Files in sequence order big1(100),
/// big2(100, vector), s(10): big1 is skipped, big2 stops the skipping (a file with a vector
/// is always compacted), and the rest [big2, s] is a task although small files do not
/// outnumber big ones; the bucket's index files (i7, i8) are replaced by one file. Without
/// deletion vectors the same bucket has no task. A deletion-vector bucket of one small file
/// without a vector is still rewritten (no 3-file minimum), without an index change.
#[test]
fn bucketed_full_with_deletion_vectors() {
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 1, 2, file("s", 10, 20, 10)),
        entry(&p, 1, 2, file("big1", 100, 0, 10)),
        entry(&p, 1, 2, file("big2", 100, 10, 10)),
        entry(&p, 0, 2, file("x", 10, 0, 10)),
    ];
    let index = dvs(
        &[
            dv_index_entry(&p, 1, "i7", &[("big2", Some(1))]),
            dv_index_entry(&p, 1, "i8", &[]),
            dv_index_entry(&p, 0, "i9", &[("zz", Some(1))]),
        ],
        false,
    );
    let tasks = plan_bucketed(&e, &index, &dv_opts(100, 5), true);
    assert_eq!(names(&tasks), vec![vec!["big2", "s"], vec!["x"]]);
    assert_eq!(replaced(&tasks[0]), vec!["i7", "i8"]);
    assert!(tasks[0].dv_index.as_ref().unwrap().single_file);
    assert_eq!(
        tasks[0]
            .deletion_files
            .iter()
            .map(|d| d.as_ref().map(|d| d.path.as_str()))
            .collect::<Vec<_>>(),
        vec![Some("index/i7"), None]
    );
    // Bucket 0: x has no vector, the task leaves the index alone.
    assert!(tasks[1].dv_index.is_none() && tasks[1].deletion_files.is_empty());
    assert!(plan_bucketed(&e, &no_dvs(), &opts(100, 5, 0), true).is_empty());
}

/// Fixed bucket, best effort with deletion vectors: the pick is Java's window as without
/// vectors (min 3: [a, b, c]); the task reads b with its vector and replaces the bucket's
/// index file. A pick without vectors leaves the index alone.
#[test]
fn bucketed_best_effort_with_deletion_vectors() {
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 3, 4, file("a", 10, 0, 10)),
        entry(&p, 3, 4, file("b", 10, 10, 10)),
        entry(&p, 3, 4, file("c", 10, 20, 10)),
        entry(&p, 3, 4, file("d", 10, 30, 10)),
    ];
    let with = dvs(
        &[dv_index_entry(
            &p,
            3,
            "i1",
            &[("b", Some(2)), ("d", Some(1))],
        )],
        false,
    );
    let tasks = plan_bucketed(&e, &with, &dv_opts(100, 3), false);
    assert_eq!(names(&tasks), vec![vec!["a", "b", "c"]]);
    assert_eq!(replaced(&tasks[0]), vec!["i1"]);
    let only_d = dvs(&[dv_index_entry(&p, 3, "i1", &[("d", Some(1))])], false);
    let tasks = plan_bucketed(&e, &only_d, &dv_opts(100, 3), false);
    assert_eq!(names(&tasks), vec![vec!["a", "b", "c"]]);
    assert!(tasks[0].dv_index.is_none());
}

#[test]
fn dv_index_refuses_two_vectors_of_one_file_and_external_paths() {
    let p = BinaryRow::empty();
    let o = CoreOptions::new(Default::default());
    let two = [
        dv_index_entry(&p, 0, "i1", &[("a", Some(1))]),
        dv_index_entry(&p, 0, "i2", &[("a", Some(1))]),
    ];
    let err = AppendDvIndex::try_new(&two, &o, true).unwrap_err();
    assert!(err.to_string().contains("data file a"), "{err}");
    let mut ext = dv_index_entry(&p, 0, "i1", &[("a", Some(1))]);
    ext.index_file.external_path = Some("s3://x/i1".into());
    let err = AppendDvIndex::try_new(&[ext], &o, true).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}

/// Runs a machine against an in-memory store.
fn run<T: Send + 'static>(store: &mut crate::io::MemoryStore, m: Machine<T>) -> T {
    store.run(m).unwrap().pop().unwrap()
}

/// An index file at `index/<name>` holding `dvs`, with its live entry.
fn put_index(
    store: &mut crate::io::MemoryStore,
    bucket: i32,
    name: &str,
    dvs: &[(String, DeletionVector)],
) -> IndexManifestEntry {
    let (bytes, ranges) =
        crate::format::deletion_vector::encode_deletion_vector_index(dvs, false).unwrap();
    let size = bytes.len() as i64;
    store
        .objects
        .insert(format!("index/{name}"), bytes::Bytes::from(bytes));
    IndexManifestEntry {
        kind: FileKind::Add,
        partition: BinaryRow::empty(),
        bucket,
        index_file: IndexFileMeta {
            index_type: DELETION_VECTORS_INDEX.into(),
            file_name: name.into(),
            file_size: size,
            row_count: ranges.len() as i64,
            dv_ranges: Some(ranges),
            external_path: None,
            global_index: None,
        },
    }
}

fn read_index(store: &crate::io::MemoryStore, f: &IndexFileMeta) -> Vec<(String, Vec<u64>)> {
    let bytes = store
        .objects
        .get(&format!("index/{}", f.file_name))
        .unwrap();
    crate::format::deletion_vector::decode_deletion_vector_index(
        bytes,
        f.dv_ranges.as_deref().unwrap(),
        &f.file_name,
        true,
    )
    .unwrap()
    .into_iter()
    .map(|(n, dv)| (n, dv.iter().collect()))
    .collect()
}

/// The index rewrite of an unaware task over a, c (vectors in i1 with b, and in i2 alone):
/// i1's other vector (b) goes to a new file, i2 leaves nothing (no file); both are
/// replaced. With a 1-byte target every vector rolls into its own file.
#[test]
fn dv_index_machine_rewrites_the_other_vectors() {
    let mut store = crate::io::MemoryStore::new();
    let dv = |ps: &[u64]| DeletionVector::from_positions(ps.iter().copied());
    let i1 = put_index(
        &mut store,
        0,
        "i1",
        &[
            ("a".into(), dv(&[0, 3])),
            ("b".into(), dv(&[1])),
            ("e".into(), dv(&[2, 70000])),
        ],
    );
    let i2 = put_index(&mut store, 0, "i2", &[("c".into(), dv(&[5]))]);
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 0, 0, file("a", 10, 0, 10)),
        entry(&p, 0, 0, file("c", 10, 10, 10)),
    ];
    let index = dvs(&[i1.clone(), i2.clone()], true);
    let tasks = plan_unaware(&e, &index, &dv_opts(100, 5));
    assert_eq!(names(&tasks), vec![vec!["a", "c"]]);
    let out = run(&mut store, dv_index_machine(&tasks[0], 7).unwrap());
    assert_eq!(
        out.deleted_index_files,
        vec![i1.index_file.clone(), i2.index_file.clone()]
    );
    assert_eq!(out.new_index_files.len(), 1);
    assert_eq!(
        read_index(&store, &out.new_index_files[0]),
        vec![
            ("b".to_string(), vec![1]),
            ("e".to_string(), vec![2, 70000])
        ]
    );
    assert_eq!(out.new_index_files[0].row_count, 2);
    assert_eq!(
        out.paths,
        vec![format!("index/{}", out.new_index_files[0].file_name)]
    );
    // The message carries them; a task with vectors needs them.
    let msg = tasks[0]
        .finish(vec![file("o", 10, 0, 16)], Some(out.clone()))
        .unwrap();
    assert_eq!(msg.compact_increment.new_index_files, out.new_index_files);
    assert_eq!(
        msg.compact_increment.deleted_index_files,
        out.deleted_index_files
    );
    assert!(tasks[0].finish(vec![], None).is_err());
    // Rolling at 1 byte: one file per vector.
    let mut small = tasks[0].clone();
    small.dv_index.as_mut().unwrap().target_size_bytes = 1;
    let out = run(&mut store, dv_index_machine(&small, 8).unwrap());
    assert_eq!(
        out.new_index_files
            .iter()
            .map(|f| read_index(&store, f))
            .collect::<Vec<_>>(),
        vec![
            vec![("b".to_string(), vec![1])],
            vec![("e".to_string(), vec![2, 70000])]
        ]
    );
}

/// A fixed bucket's rewrite is one file of every vector left, in data-file-name order, and a
/// file of the version byte alone when none is left (Java's `writeSingleFile`).
#[test]
fn dv_index_machine_writes_one_file_per_bucket() {
    let mut store = crate::io::MemoryStore::new();
    let dv = |ps: &[u64]| DeletionVector::from_positions(ps.iter().copied());
    let i1 = put_index(
        &mut store,
        1,
        "i1",
        &[("z".into(), dv(&[4])), ("a".into(), dv(&[0]))],
    );
    let i2 = put_index(&mut store, 1, "i2", &[("m".into(), dv(&[9]))]);
    let p = BinaryRow::empty();
    let e = vec![
        entry(&p, 1, 2, file("a", 10, 0, 10)),
        entry(&p, 1, 2, file("z", 10, 10, 10)),
        entry(&p, 1, 2, file("m", 10, 20, 10)),
    ];
    let index = dvs(&[i1, i2], false);
    let mut o = dv_opts(100, 2);
    let tasks = plan_bucketed(&e, &index, &o, false);
    assert_eq!(names(&tasks), vec![vec!["a", "z"]]);
    let out = run(&mut store, dv_index_machine(&tasks[0], 1).unwrap());
    assert_eq!(out.new_index_files.len(), 1);
    assert_eq!(
        read_index(&store, &out.new_index_files[0]),
        vec![("m".to_string(), vec![9])]
    );
    assert_eq!(out.deleted_index_files.len(), 2);
    o.min_file_num = 3;
    let tasks = plan_bucketed(&e, &index, &o, false);
    let out = run(&mut store, dv_index_machine(&tasks[0], 2).unwrap());
    assert_eq!(out.new_index_files.len(), 1);
    let f = &out.new_index_files[0];
    assert_eq!((f.file_size, f.row_count), (1, 0));
    assert_eq!(f.dv_ranges.as_deref(), Some(&[][..]));
}
