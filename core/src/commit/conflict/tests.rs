//! The commit-time checks of deletion-vector index changes ([`check_deletion_vector_changes`]).

use super::*;
use crate::spec::{DeletionVectorMeta, IndexFileMeta};
use crate::testkit;

fn dv_entry(kind: FileKind, bucket: i32, index: &str, data: &[&str]) -> IndexManifestEntry {
    IndexManifestEntry {
        kind,
        partition: BinaryRow::empty(),
        bucket,
        index_file: IndexFileMeta {
            index_type: DELETION_VECTORS_INDEX.into(),
            file_name: index.into(),
            file_size: 10,
            row_count: data.len() as i64,
            dv_ranges: Some(
                data.iter()
                    .map(|d| DeletionVectorMeta {
                        data_file_name: (*d).into(),
                        offset: 1,
                        length: 1,
                        cardinality: Some(1),
                    })
                    .collect(),
            ),
            external_path: None,
            global_index: None,
        },
    }
}

fn data(name: &str) -> ManifestEntry {
    use crate::spec::{DataFileMeta, FileSource};
    ManifestEntry {
        kind: FileKind::Add,
        partition: BinaryRow::empty(),
        bucket: 0,
        total_buckets: -1,
        file: DataFileMeta {
            file_size: 100,
            row_count: 10,
            max_sequence_number: 9,
            file_source: Some(FileSource::Append),
            ..testkit::data_file(name)
        },
    }
}

fn is_conflict(r: Result<()>) -> bool {
    matches!(r, Err(Error::CommitConflict { .. }))
}

#[test]
fn unaware_changes_must_replace_the_live_holder() {
    let live = vec![dv_entry(FileKind::Add, 0, "i1", &["f1", "f2"])];
    let base = vec![data("f1"), data("f2"), data("f3")];
    // Replace i1 (f1 changed, f2 re-added) and add f3's first DV: fine.
    let ok = vec![
        dv_entry(FileKind::Delete, 0, "i1", &["f1", "f2"]),
        dv_entry(FileKind::Add, 0, "i2", &["f2"]),
        dv_entry(FileKind::Add, 0, "i3", &["f1", "f3"]),
    ];
    check_deletion_vector_changes(&live, &ok, &base, &[], true, true).unwrap();
    // i1 was replaced meanwhile by i9.
    let now = vec![dv_entry(FileKind::Add, 0, "i9", &["f1", "f2"])];
    assert!(is_conflict(check_deletion_vector_changes(
        &now,
        &ok,
        &base,
        &[],
        true,
        true
    )));
    // f3 got a DV meanwhile, this commit adds one as if it had none.
    let now = vec![
        dv_entry(FileKind::Add, 0, "i1", &["f1", "f2"]),
        dv_entry(FileKind::Add, 0, "i8", &["f3"]),
    ];
    assert!(is_conflict(check_deletion_vector_changes(
        &now,
        &ok,
        &base,
        &[],
        true,
        true
    )));
    // f3 is no longer live.
    let gone = vec![data("f1"), data("f2")];
    assert!(is_conflict(check_deletion_vector_changes(
        &live,
        &ok,
        &gone,
        &[],
        true,
        true
    )));
}

#[test]
fn bucketed_changes_must_replace_the_live_bucket_file() {
    let base = vec![data("f1"), data("f2"), data("f5")];
    let live = vec![dv_entry(FileKind::Add, 1, "i1", &["f1"])];
    let replace = vec![
        dv_entry(FileKind::Delete, 1, "i1", &["f1"]),
        dv_entry(FileKind::Add, 1, "i2", &["f1", "f2"]),
    ];
    check_deletion_vector_changes(&live, &replace, &base, &[], false, true).unwrap();
    // A first file for bucket 0 is fine; one for bucket 1 without replacing i1 is not.
    let first = vec![dv_entry(FileKind::Add, 0, "i3", &["f5"])];
    check_deletion_vector_changes(&live, &first, &base, &[], false, true).unwrap();
    let blind = vec![dv_entry(FileKind::Add, 1, "i3", &["f2"])];
    assert!(is_conflict(check_deletion_vector_changes(
        &live,
        &blind,
        &base,
        &[],
        false,
        true
    )));
    // Compactions may add without deleting, as Java's do.
    check_deletion_vector_changes(&live, &blind, &base, &[], false, false).unwrap();
    // Replacing a file that is gone, also by a compaction.
    let now = vec![dv_entry(FileKind::Add, 1, "i7", &["f1"])];
    for check_bucketed in [true, false] {
        assert!(is_conflict(check_deletion_vector_changes(
            &now,
            &replace,
            &base,
            &[],
            false,
            check_bucketed
        )));
    }
    // A new vector of a data file that is gone (f2), also by a compaction; a vector
    // carried over unchanged from the replaced file (f1) is not checked.
    let without_f2 = vec![data("f5")];
    for check_bucketed in [true, false] {
        assert!(is_conflict(check_deletion_vector_changes(
            &live,
            &replace,
            &without_f2,
            &[],
            false,
            check_bucketed
        )));
    }
    let carried = vec![
        dv_entry(FileKind::Delete, 1, "i1", &["f1"]),
        dv_entry(FileKind::Add, 1, "i2", &["f1", "f5"]),
    ];
    check_deletion_vector_changes(&live, &carried, &without_f2, &[], false, false).unwrap();
}

#[test]
fn deleted_data_files_go_with_their_live_vector() {
    let deleted = |name: &str| ManifestEntry {
        kind: FileKind::Delete,
        ..data(name)
    };
    // Bucket-unaware: f1 has a vector in i1 now.
    let live = vec![dv_entry(FileKind::Add, 0, "i1", &["f1", "f2"])];
    // A compaction of f1 planned when f1 had no vector: conflict.
    assert!(is_conflict(check_deletion_vector_changes(
        &live,
        &[],
        &[data("f1"), data("f2")],
        &[deleted("f1")],
        true,
        false
    )));
    // Planned with i1 (replacing it, keeping f2's vector): fine.
    let replaces = vec![
        dv_entry(FileKind::Delete, 0, "i1", &["f1", "f2"]),
        dv_entry(FileKind::Add, 0, "i2", &["f2"]),
    ];
    check_deletion_vector_changes(
        &live,
        &replaces,
        &[data("f1"), data("f2")],
        &[deleted("f1")],
        true,
        false,
    )
    .unwrap();
    // Planned with i0, which another commit replaced by i1 meanwhile: conflict.
    let stale = vec![
        dv_entry(FileKind::Delete, 0, "i0", &["f1"]),
        dv_entry(FileKind::Add, 0, "i2", &["f2"]),
    ];
    assert!(is_conflict(check_deletion_vector_changes(
        &live,
        &stale,
        &[data("f1"), data("f2")],
        &[deleted("f1")],
        true,
        false
    )));
    // A file without a vector deleted without index changes: fine; a file moved to
    // another level (deleted and added back) keeps its vector.
    check_deletion_vector_changes(
        &live,
        &[],
        &[data("f1"), data("f3")],
        &[deleted("f3"), deleted("f1"), data("f1")],
        true,
        false,
    )
    .unwrap();
    // Fixed bucket: an ADD without a DELETE of the bucket (Java's compaction messages)
    // replaces its live file implicitly.
    let java_style = vec![dv_entry(FileKind::Add, 0, "i5", &["f2"])];
    check_deletion_vector_changes(
        &live,
        &java_style,
        &[data("f1"), data("f2")],
        &[deleted("f1")],
        false,
        false,
    )
    .unwrap();
    // ... but without any index change the live vector must not exist.
    assert!(is_conflict(check_deletion_vector_changes(
        &live,
        &[],
        &[data("f1"), data("f2")],
        &[deleted("f1")],
        false,
        false
    )));
}
