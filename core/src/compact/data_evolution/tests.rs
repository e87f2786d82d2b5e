//! Planner cases of Java's `DataEvolutionCompactCoordinatorTest` (release-2.0.0), as listed
//! in `../shared/spec/data-evolution.md` §10, plus cases derived from
//! `CompactPlanner#compactPlan` by hand.

use super::*;
use crate::spec::{FileKind, FileSource};
use crate::testkit;

fn file(name: &str, first_row_id: i64, rows: i64, size: i64) -> DataFileMeta {
    DataFileMeta {
        file_size: size,
        row_count: rows,
        min_sequence_number: 1,
        max_sequence_number: 1,
        file_source: Some(FileSource::Append),
        first_row_id: Some(first_row_id),
        ..testkit::data_file(name)
    }
}

fn partition(p: i32) -> BinaryRow {
    use crate::spec::{DataType, Datum, TypeKind};
    BinaryRow::encode(&[Datum::Int(p)], &[DataType::not_null(TypeKind::Int)]).unwrap()
}

fn entries(part: &BinaryRow, files: Vec<DataFileMeta>) -> Vec<ManifestEntry> {
    files
        .into_iter()
        .map(|file| ManifestEntry {
            kind: FileKind::Add,
            partition: part.clone(),
            bucket: 0,
            total_buckets: -1,
            file,
        })
        .collect()
}

fn opts(target: i64, open: i64, min: usize) -> DataEvolutionCompactOptions {
    DataEvolutionCompactOptions {
        target_file_size: target,
        open_file_cost: open,
        min_file_num: min,
        compact_blob: false,
        blob_target_file_size: target,
        materialize_deletions: false,
        deletion_vectors: false,
        dv_bitmap64: false,
        dv_index_file_target_size: 2 << 20,
    }
}

fn names(tasks: &[DataEvolutionCompactTask]) -> Vec<Vec<&str>> {
    tasks
        .iter()
        .map(|t| t.files.iter().map(|f| f.file_name.as_str()).collect())
        .collect()
}

const M: i64 = 1 << 20;

#[test]
fn single_file_is_never_a_task() {
    let e = entries(&BinaryRow::empty(), vec![file("f1", 0, 100, 100)]);
    assert!(plan(&e, &opts(128 * M, 4 * M, 2)).unwrap().is_empty());
}

/// Weights 100 each (open cost 1): f1+f2 = 200 > 199 flushes [f1, f2]; f3 alone stays below
/// the min file num. With target 200 no bin exceeds it; the run ends with [f1, f2, f3].
#[test]
fn bin_flushes_when_weight_strictly_exceeds_target() {
    let files = vec![
        file("f1", 0, 100, 100),
        file("f2", 100, 100, 100),
        file("f3", 200, 100, 100),
    ];
    let e = entries(&BinaryRow::empty(), files);
    assert_eq!(
        names(&plan(&e, &opts(199, 1, 2)).unwrap()),
        vec![vec!["f1", "f2"]]
    );
    assert_eq!(
        names(&plan(&e, &opts(200, 1, 2)).unwrap()),
        vec![vec!["f1", "f2", "f3"]]
    );
}

/// A gap in the row ids (200..1000) ends a run: two tasks.
#[test]
fn row_id_gap_cuts_runs() {
    let files = vec![
        file("f1", 0, 100, 100),
        file("f2", 100, 100, 100),
        file("f3", 1000, 100, 100),
        file("f4", 1100, 100, 100),
    ];
    let e = entries(&BinaryRow::empty(), files);
    assert_eq!(
        names(&plan(&e, &opts(128 * M, 4 * M, 2)).unwrap()),
        vec![vec!["f1", "f2"], vec!["f3", "f4"]]
    );
}

/// Spec §10's mixed case: `large` (200 MiB > target 100 MiB) flushes the empty bin and is
/// compacted alone, which needs 2 files: no task; f1, f2 join a bin; `large2` flushes
/// [f1, f2] and is dropped alone; f3, f4 end the run. Partitions plan separately. Blob files
/// of large2 join the run but are never task inputs.
#[test]
fn heavy_groups_flush_and_partitions_plan_separately() {
    let p0 = partition(0);
    let p1 = partition(1);
    let mut e = entries(
        &BinaryRow::empty(),
        vec![
            file("large", 0, 100, 200 * M),
            file("f1", 100, 100, 100),
            file("f2", 200, 100, 100),
            file("large2", 300, 100, 200 * M),
            file("large2-a.blob", 300, 50, 100),
            file("large2-b.blob", 350, 50, 100),
            file("f3", 400, 100, 100),
            file("f4", 500, 100, 100),
        ],
    );
    e.extend(entries(
        &p0,
        vec![file("f5", 600, 100, 100), file("f6", 700, 100, 100)],
    ));
    e.extend(entries(
        &p1,
        vec![file("f7", 800, 100, 100), file("f8", 900, 100, 100)],
    ));
    let tasks = plan(&e, &opts(100 * M, 4 * M, 2)).unwrap();
    assert_eq!(
        names(&tasks),
        vec![
            vec!["f1", "f2"],
            vec!["f3", "f4"],
            vec!["f5", "f6"],
            vec!["f7", "f8"]
        ]
    );
    assert_eq!(tasks[2].partition, p0);
    assert_eq!(tasks[3].partition, p1);
}

/// A heavy group with enough files (a base file and two column updates over the same rows,
/// min file num 3) is a task of its own; the bin before it is flushed first.
#[test]
fn heavy_group_with_enough_files_is_compacted_alone() {
    let e = entries(
        &BinaryRow::empty(),
        vec![
            file("a", 0, 10, 10),
            file("b", 10, 10, 10),
            file("c", 20, 10, 10),
            file("big", 30, 10, 60),
            file("big-u1", 30, 10, 60),
            file("big-u2", 30, 10, 60),
            file("d", 40, 10, 10),
        ],
    );
    // target 100, open cost 1: a+b+c = 30; the big group weighs 180 > 100.
    assert_eq!(
        names(&plan(&e, &opts(100, 1, 3)).unwrap()),
        vec![vec!["a", "b", "c"], vec!["big", "big-u1", "big-u2"]]
    );
}

/// Every file is weighed at least `open_file_cost`: three 1-byte files with open cost 50
/// weigh 150 > 120 after the third file.
#[test]
fn open_file_cost_is_the_least_weight() {
    let e = entries(
        &BinaryRow::empty(),
        vec![
            file("a", 0, 1, 1),
            file("b", 1, 1, 1),
            file("c", 2, 1, 1),
            file("d", 3, 1, 1),
        ],
    );
    assert_eq!(
        names(&plan(&e, &opts(120, 50, 2)).unwrap()),
        vec![vec!["a", "b", "c"]]
    );
}

/// Groups keep manifest order inside; the output range is the first file's.
#[test]
fn update_files_join_their_group_and_finish_keeps_row_ids() {
    let mut upd = file("upd", 0, 10, 5);
    upd.min_sequence_number = 3;
    upd.max_sequence_number = 3;
    upd.write_cols = Some(vec!["v".into()]);
    let mut base2 = file("base2", 10, 5, 5);
    base2.min_sequence_number = 2;
    base2.max_sequence_number = 2;
    let e = entries(
        &BinaryRow::empty(),
        vec![file("base", 0, 10, 5), upd, base2],
    );
    let tasks = plan(&e, &opts(128 * M, 1, 2)).unwrap();
    assert_eq!(names(&tasks), vec![vec!["base", "upd", "base2"]]);
    let task = &tasks[0];
    assert_eq!(task.range_row_count(), 15);
    let out = file("out", 999, 15, 50);
    let msg = task.finish(vec![out.clone()], None).unwrap();
    let after = &msg.compact_increment.compact_after[0];
    assert_eq!(after.first_row_id, Some(0));
    assert_eq!(
        (after.min_sequence_number, after.max_sequence_number),
        (1, 3)
    );
    assert_eq!(msg.compact_increment.compact_before.len(), 3);
    assert_eq!(msg.bucket, 0);
    assert!(task.finish(vec![out.clone(), out], None).is_err());
    assert!(task.finish(vec![file("short", 0, 14, 5)], None).is_err());
}

#[test]
fn overlapping_groups_must_have_identical_ranges() {
    let e = entries(
        &BinaryRow::empty(),
        vec![file("a", 0, 10, 5), file("b", 5, 10, 5)],
    );
    let err = plan(&e, &opts(128 * M, 1, 2)).unwrap_err().to_string();
    assert!(err.contains("\"a\"") && err.contains("\"b\""), "{err}");
}

#[test]
fn options_follow_java_defaults_and_refuse_unsupported() {
    let o =
        DataEvolutionCompactOptions::from_options(&CoreOptions::new(Default::default())).unwrap();
    assert_eq!(o, opts(256 * M, 4 * M, 5));
    let with = |k: &str, v: &str| {
        let mut m = std::collections::BTreeMap::new();
        m.insert(k.to_string(), v.to_string());
        m
    };
    let blob = DataEvolutionCompactOptions::from_options(&CoreOptions::new(with(
        "blob-compaction.enabled",
        "true",
    )))
    .unwrap();
    assert!(blob.compact_blob);
    assert_eq!(blob.blob_target_file_size, 256 * M);
    // Planning blobs without the schemas is refused.
    let e = entries(&BinaryRow::empty(), vec![file("a", 0, 10, 1)]);
    assert!(matches!(plan(&e, &blob), Err(Error::Invalid { .. })));
    // rewrite-row-ids without deletion vectors: ignored, as release-2.0.0 does.
    let ignored = DataEvolutionCompactOptions::from_options(&CoreOptions::new(with(
        "data-evolution.compaction.rewrite-row-ids",
        "true",
    )));
    assert!(ignored.is_ok());
    assert!(!ignored.unwrap().materialize_deletions);
    let mut both = with("data-evolution.compaction.rewrite-row-ids", "true");
    both.insert("deletion-vectors.enabled".into(), "true".into());
    let materialize = DataEvolutionCompactOptions::from_options(&CoreOptions::new(both)).unwrap();
    assert!(materialize.materialize_deletions && materialize.deletion_vectors);
}

/// Materializing (Java `#triggerMaterializeTask`): a bin whose anchor has a vector becomes
/// one task with the `.blob` files of its normal files and each file's vector, whatever the
/// number of files; the weight counts the rows left (a 10-row anchor with 5 deleted weighs
/// half), so the bin holds one more group before it passes the target; bins without a vector
/// are planned as usual.
#[test]
fn bins_with_deleted_rows_are_materialized() {
    use crate::spec::{DeletionVectorMeta, IndexFileMeta, IndexManifestEntry};
    let schemas = blob_schemas();
    let fields = BlobFields::new(&schemas[&0], &schemas);
    let dv = |data_file: &str, cardinality: i64| IndexManifestEntry {
        kind: FileKind::Add,
        partition: BinaryRow::empty(),
        bucket: 0,
        index_file: IndexFileMeta {
            index_type: "DELETION_VECTORS".into(),
            file_name: format!("index-{data_file}"),
            file_size: 100,
            row_count: 1,
            dv_ranges: Some(vec![DeletionVectorMeta {
                data_file_name: data_file.into(),
                offset: 1,
                length: 20,
                cardinality: Some(cardinality),
            }]),
            external_path: None,
            global_index: None,
        },
    };
    let dvs = AppendDvIndex::try_new(&[dv("n0", 5)], &CoreOptions::new(Default::default()), true)
        .unwrap();
    let files = vec![
        file("n0", 0, 10, 100),
        blob("b0", "b", 0, 10, 50, 1),
        file("n1", 10, 10, 100),
        file("n2", 20, 10, 100),
        // A gap: a new run, no vector.
        file("n3", 40, 10, 100),
        file("n4", 50, 10, 100),
    ];
    let e = entries(&BinaryRow::empty(), files);
    let mut o = opts(160, 1, 5);
    o.materialize_deletions = true;
    o.deletion_vectors = true;
    let tasks = plan_with_blobs(&e, &o, Some(&fields), Some(&dvs)).unwrap();
    // n0 weighs 50: with n1 the bin weighs 150 (not past 160), with n2 250: flushed as one
    // materializing task of 3 normal files and b0, below `min_file_num` = 5; n3, n4: too few.
    assert_eq!(names(&tasks), vec![vec!["n0", "n1", "n2", "b0.blob"]]);
    assert_eq!(tasks[0].kind, DataEvolutionTaskKind::MaterializeDeletions);
    let with_vectors: Vec<bool> = tasks[0]
        .deletion_files
        .iter()
        .map(Option::is_some)
        .collect();
    assert_eq!(with_vectors, [true, false, false, false]);
    // Without the option the same bin is a plain (too small) bin: nothing.
    o.materialize_deletions = false;
    assert!(
        plan_with_blobs(&e, &o, Some(&fields), Some(&dvs))
            .unwrap()
            .is_empty()
    );
}

/// A `.blob` file of column `col` (schema 0: `id` = 0, `b` = 1, `c` = 2).
fn blob(name: &str, col: &str, first_row_id: i64, rows: i64, size: i64, seq: i64) -> DataFileMeta {
    let mut f = file(&format!("{name}.blob"), first_row_id, rows, size);
    f.write_cols = Some(vec![col.into()]);
    f.min_sequence_number = seq;
    f.max_sequence_number = seq;
    f
}

fn blob_schemas() -> BTreeMap<i64, TableSchema> {
    let schema = crate::spec::schema::decode_schema(
        br#"{"version": 3, "id": 0, "fields": [{"id": 0, "name": "id", "type": "INT"},
            {"id": 1, "name": "b", "type": "BLOB"}, {"id": 2, "name": "c", "type": "BLOB"}],
            "highestFieldId": 2, "partitionKeys": [], "primaryKeys": [],
            "options": {"blob-view-field": "c"}, "timeMillis": 0}"#,
        "schema-0",
    )
    .unwrap();
    BTreeMap::from([(0, schema)])
}

fn blob_opts(min: usize, blob_target: i64) -> DataEvolutionCompactOptions {
    DataEvolutionCompactOptions {
        compact_blob: true,
        blob_target_file_size: blob_target,
        ..opts(1 << 40, 1, min)
    }
}

/// Java `CompactPlanner#fileGroupsToCompact` / `#smallFileGroupsToCompact`: two versions of
/// the same rows form a task; consecutive small files merge in runs of at least two, cut at
/// the target size; a large file and a gap break a run; a column stored inline (`c`, a
/// `blob-view-field`) is never compacted; the normal task comes first.
#[test]
fn blob_files_are_grouped_as_java_groups_them() {
    let schemas = blob_schemas();
    let fields = BlobFields::new(&schemas[&0], &schemas);
    let files = vec![
        file("n0", 0, 100, 10),
        file("n1", 100, 100, 10),
        // Column b over [0, 99]: two layers of [0, 49], then small files.
        blob("b0", "b", 0, 50, 30, 1),
        blob("b0u", "b", 0, 50, 5, 3),
        blob("b1", "b", 50, 25, 10, 1),
        blob("b2", "b", 75, 25, 10, 1),
        // Column b over [100, 199]: small, large, small, small, small (the last run is cut
        // at the target of 25 bytes once it holds two files).
        blob("b3", "b", 100, 10, 10, 2),
        blob("b4", "b", 110, 10, 100, 2),
        blob("b5", "b", 120, 10, 20, 2),
        blob("b6", "b", 130, 10, 20, 2),
        blob("b7", "b", 140, 60, 1, 2),
        // Column c: inline, never compacted.
        blob("c0", "c", 0, 100, 1, 1),
        blob("c1", "c", 100, 100, 1, 1),
    ];
    let e = entries(&BinaryRow::empty(), files);
    // With the normal task, the blobs of n0 and n1 are grouped together: b1, b2, b3 are
    // consecutive and reach the target at b3; b7 is left alone.
    let tasks = plan_with_blobs(&e, &blob_opts(2, 25), Some(&fields), None).unwrap();
    assert_eq!(
        names(&tasks),
        vec![
            vec!["n0", "n1"],
            vec!["b0.blob", "b0u.blob"],
            vec!["b1.blob", "b2.blob", "b3.blob"],
            vec!["b5.blob", "b6.blob"],
        ]
    );
    let kinds: Vec<DataEvolutionTaskKind> = tasks.iter().map(|t| t.kind).collect();
    assert_eq!(
        kinds,
        [
            DataEvolutionTaskKind::Normal,
            DataEvolutionTaskKind::Blob,
            DataEvolutionTaskKind::Blob,
            DataEvolutionTaskKind::Blob
        ]
    );
    // Without enough normal files each normal file's blobs are grouped alone (b3 is then
    // alone in n1's run), and there is no normal task.
    let tasks = plan_with_blobs(&e, &blob_opts(3, 25), Some(&fields), None).unwrap();
    assert_eq!(
        names(&tasks),
        vec![
            vec!["b0.blob", "b0u.blob"],
            vec!["b1.blob", "b2.blob"],
            vec!["b5.blob", "b6.blob"],
        ]
    );
    // Blob compaction off: the normal task alone.
    let off = DataEvolutionCompactOptions {
        compact_blob: false,
        ..blob_opts(2, 25)
    };
    assert_eq!(names(&plan(&e, &off).unwrap()), vec![vec!["n0", "n1"]]);
}
