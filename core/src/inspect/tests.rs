//! Unit tests of the view models over hand-built metadata.

use std::collections::BTreeMap;

use super::*;
use crate::spec::index_manifest::{DeletionVectorMeta, IndexFileMeta};
use crate::spec::{
    BinaryRow, DataFileMeta, DataType, Datum, FileKind, ManifestEntry, ManifestFileMeta,
    SimpleStats, Snapshot, Tag, TypeKind, decode_schema, decode_snapshot,
};
use crate::testkit;

fn schema(fields: &str, pk: &[&str], partition: &[&str], options: &str) -> TableSchema {
    let json = format!(
        r#"{{"version": 3, "id": 0, "fields": [{fields}], "highestFieldId": 9,
        "partitionKeys": {partition:?}, "primaryKeys": {pk:?}, "options": {{{options}}},
        "timeMillis": 0}}"#
    );
    decode_schema(json.as_bytes(), "schema-0").unwrap()
}

fn pk_schema(options: &str) -> TableSchema {
    schema(
        r#"{"id": 0, "name": "k", "type": "INT NOT NULL"}, {"id": 1, "name": "v", "type": "STRING"}"#,
        &["k"],
        &[],
        options,
    )
}

fn int_key(k: i32) -> BinaryRow {
    BinaryRow::encode(&[Datum::Int(k)], &[DataType::not_null(TypeKind::Int)]).unwrap()
}

fn file(name: &str, level: i32, size: i64, seq: (i64, i64)) -> DataFileMeta {
    DataFileMeta {
        file_size: size,
        row_count: 10,
        min_sequence_number: seq.0,
        max_sequence_number: seq.1,
        level,
        creation_time_millis: Some(0),
        ..testkit::data_file(name)
    }
}

fn keyed(name: &str, level: i32, keys: (i32, i32), seq: (i64, i64)) -> DataFileMeta {
    let mut f = file(name, level, 1000, seq);
    f.min_key = int_key(keys.0);
    f.max_key = int_key(keys.1);
    f
}

fn entries(bucket: i32, files: Vec<DataFileMeta>) -> Vec<ManifestEntry> {
    files
        .into_iter()
        .map(|file| ManifestEntry {
            kind: FileKind::Add,
            partition: BinaryRow::empty(),
            bucket,
            total_buckets: 2,
            file,
        })
        .collect()
}

fn dv_entry(bucket: i32, data_file: &str, cardinality: i64) -> IndexManifestEntry {
    IndexManifestEntry {
        kind: FileKind::Add,
        partition: BinaryRow::empty(),
        bucket,
        index_file: IndexFileMeta {
            index_type: "DELETION_VECTORS".into(),
            file_name: "index-1-0".into(),
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
    }
}

#[test]
fn levels_of_a_pk_bucket_by_run_with_value_positions_and_deletion_vectors() {
    let s = pk_schema(r#""bucket": "2""#);
    let mut es = entries(
        0,
        vec![
            keyed("l5-b", 5, (50, 100), (0, 9)),
            keyed("l0-old", 0, (0, 40), (10, 19)),
            keyed("l5-a", 5, (0, 49), (0, 9)),
            keyed("l0-new", 0, (20, 60), (20, 29)),
        ],
    );
    es.extend(entries(1, vec![keyed("b1", 0, (7, 7), (0, 0))]));
    let v = levels(&s, Some(3), &es, &[dv_entry(0, "l5-a", 4)], None).unwrap();
    assert_eq!(v.table_kind, "primary-key");
    assert_eq!(v.key_columns, vec!["k"]);
    assert_eq!(v.key_axis, levels::KeyAxis::Value);
    assert_eq!(v.num_levels, 6);
    assert_eq!(v.all_partitions, vec!["{}"]);
    let b0 = &v.partitions[0].buckets[0];
    assert_eq!(b0.bucket, 0);
    assert_eq!(b0.file_count, 4);
    assert_eq!(b0.total_bytes, 4000);
    // Two level-0 runs (newest first) and one level-5 run in key order.
    assert_eq!(b0.sorted_run_count, Some(3));
    let runs: Vec<(i32, Vec<&str>)> = b0
        .runs
        .iter()
        .map(|r| {
            (
                r.level,
                r.files.iter().map(|f| f.file_name.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        vec![
            (0, vec!["l0-new"]),
            (0, vec!["l0-old"]),
            (5, vec!["l5-a", "l5-b"])
        ]
    );
    assert_eq!(b0.files_per_level, BTreeMap::from([(0, 2), (5, 2)]));
    let new = &b0.runs[0].files[0];
    assert_eq!(new.min_key.as_deref(), Some("[20]"));
    assert_eq!(new.max_key.as_deref(), Some("[60]"));
    assert!((new.x0 - 0.2).abs() < 1e-9 && (new.x1 - 0.6).abs() < 1e-9);
    let l5a = &b0.runs[2].files[0];
    assert_eq!(
        l5a.deletion_vector.as_ref().and_then(|d| d.cardinality),
        Some(4)
    );
    assert!(b0.runs[2].files[1].deletion_vector.is_none());
    // A bucket whose keys are one value: every position 0.
    let b1 = &v.partitions[0].buckets[1];
    assert_eq!((b1.runs[0].files[0].x0, b1.runs[0].files[0].x1), (0.0, 0.0));
}

#[test]
fn levels_of_string_keys_are_ranked() {
    let s = schema(
        r#"{"id": 0, "name": "k", "type": "STRING NOT NULL"}"#,
        &["k"],
        &[],
        r#""bucket": "1""#,
    );
    let ty = [DataType::not_null(TypeKind::VarChar { length: 2147483647 })];
    let key = |k: &str| BinaryRow::encode(&[Datum::String(k.into())], &ty).unwrap();
    let mut a = file("a", 0, 10, (0, 0));
    (a.min_key, a.max_key) = (key("apple"), key("melon"));
    let mut b = file("b", 1, 10, (0, 0));
    (b.min_key, b.max_key) = (key("banana"), key("zucchini"));
    let v = levels(&s, Some(1), &entries(0, vec![a, b]), &[], None).unwrap();
    assert_eq!(v.key_axis, levels::KeyAxis::Rank);
    let files: Vec<(String, f64, f64)> = v.partitions[0].buckets[0]
        .runs
        .iter()
        .flat_map(|r| &r.files)
        .map(|f| (f.min_key.clone().unwrap(), f.x0, f.x1))
        .collect();
    // Ranks of apple < banana < melon < zucchini over 3.
    assert_eq!(
        files,
        vec![
            ("[apple]".to_owned(), 0.0, 2.0 / 3.0),
            ("[banana]".to_owned(), 1.0 / 3.0, 1.0)
        ]
    );
}

#[test]
fn levels_of_an_append_table_by_sequence_and_partition_filter() {
    let s = schema(
        r#"{"id": 0, "name": "dt", "type": "STRING"}, {"id": 1, "name": "v", "type": "INT"}"#,
        &[],
        &["dt"],
        "",
    );
    let ty = [DataType::nullable(TypeKind::VarChar { length: 2147483647 })];
    let part = |d: &str| BinaryRow::encode(&[Datum::String(d.into())], &ty).unwrap();
    let mut es = Vec::new();
    for (d, name, seq) in [("d1", "x2", 5), ("d1", "x1", 1), ("d2", "y", 0)] {
        es.push(ManifestEntry {
            kind: FileKind::Add,
            partition: part(d),
            bucket: 0,
            total_buckets: -1,
            file: file(name, 0, 10, (seq, seq)),
        });
    }
    let v = levels(&s, Some(1), &es, &[], Some("{d1}")).unwrap();
    assert_eq!(v.key_axis, levels::KeyAxis::None);
    assert_eq!(v.all_partitions, vec!["{d1}", "{d2}"]);
    assert_eq!(v.partitions.len(), 1);
    let b = &v.partitions[0].buckets[0];
    assert_eq!(b.sorted_run_count, None);
    let names: Vec<&str> = b.runs[0]
        .files
        .iter()
        .map(|f| f.file_name.as_str())
        .collect();
    assert_eq!(names, vec!["x1", "x2"]);
    let err = levels(&s, Some(1), &es, &[], Some("{d9}")).unwrap_err();
    assert!(err.to_string().contains("no partition {d9}"), "{err}");
    assert!(err.to_string().contains("{d1} {d2}"), "{err}");
}

#[test]
fn pk_preview_is_the_planners_plan() {
    let s = pk_schema(r#""bucket": "1""#);
    let es = entries(
        0,
        vec![
            keyed("a", 0, (0, 10), (0, 9)),
            keyed("b", 0, (5, 20), (10, 19)),
            keyed("c", 5, (0, 30), (0, 0)),
        ],
    );
    let p = compaction_preview(&s, Some(2), &es, &[], true, 0).unwrap();
    assert!(p.available);
    assert_eq!(p.planner, "primary-key-full");
    let tasks = crate::compact::pk::plan_pk_compaction(
        &s,
        &es,
        &crate::compact::pk::PkCompactRequest {
            full: true,
            ..Default::default()
        },
    )
    .unwrap();
    let summary = crate::compact::pk::plan_summary(&s, Some(2), &tasks).unwrap();
    assert_eq!(p.tasks.len(), summary.units.len());
    for (t, u) in p.tasks.iter().zip(&summary.units) {
        assert_eq!(t.files, u.files);
        assert_eq!(t.output_level, u.output_level);
        assert_eq!(t.bucket, u.bucket);
        assert_eq!(t.upgrade, u.upgrade);
    }
    assert_eq!(p.tasks[0].files, vec!["a", "b", "c"]);
    assert_eq!(p.tasks[0].output_level, Some(5));
    assert_eq!(p.tasks[0].input_bytes, 3000);
    // Normal compaction: two level-0 runs stay below the trigger of 5: nothing to do.
    let normal = compaction_preview(&s, Some(2), &es, &[], false, 0).unwrap();
    assert_eq!(normal.planner, "primary-key-universal");
    assert!(normal.available && normal.tasks.is_empty());
}

#[test]
fn unsupported_planners_make_the_preview_unavailable() {
    // Postpone buckets are planned (nothing to move here), with a BLOB column too, and with
    // record-level expiry; an expiry without its time field is Java's error.
    let mut postpone = pk_schema(r#""bucket": "-2""#);
    let p = compaction_preview(&postpone, Some(1), &[], &[], false, 0).unwrap();
    assert!(p.available && p.tasks.is_empty(), "{p:?}");
    assert_eq!(p.planner, "primary-key-postpone");
    postpone.fields.push(crate::spec::DataField::new(
        99,
        "b",
        crate::spec::DataType::parse_sql("BLOB").unwrap(),
    ));
    let p = compaction_preview(&postpone, Some(1), &[], &[], false, 0).unwrap();
    assert!(p.available && p.tasks.is_empty(), "{p:?}");
    let expiring = pk_schema(
        r#""bucket": "-2", "record-level.expire-time": "1 d", "record-level.time-field": "k""#,
    );
    let p = compaction_preview(&expiring, Some(1), &[], &[], false, 0).unwrap();
    assert!(p.available && p.tasks.is_empty(), "{p:?}");
    let no_field = pk_schema(r#""bucket": "-2", "record-level.expire-time": "1 d""#);
    let e = compaction_preview(&no_field, Some(1), &[], &[], false, 0);
    let text = match e {
        Ok(p) => p.unavailable_reason.unwrap_or_default(),
        Err(e) => e.to_string(),
    };
    assert!(text.contains("record-level.time-field"), "{text}");
    // Data evolution with deletion vectors is planned as without them (the vectors move to
    // the output when the task runs).
    let de_dv = schema(
        r#"{"id": 0, "name": "v", "type": "INT"}"#,
        &[],
        &[],
        r#""deletion-vectors.enabled": "true", "row-tracking.enabled": "true",
           "data-evolution.enabled": "true", "compaction.min.file-num": "2""#,
    );
    let mut f1 = file("f1", 0, 10, (0, 0));
    let mut f2 = file("f2", 0, 10, (1, 1));
    f1.first_row_id = Some(0);
    f2.first_row_id = Some(0);
    let es = entries(0, vec![f1, f2]);
    let p = compaction_preview(&de_dv, Some(1), &es, &[dv_entry(0, "f1", 1)], false, 0).unwrap();
    assert!(p.available, "{p:?}");
    assert_eq!(p.tasks.len(), 1);
    assert_eq!(p.tasks[0].files, vec!["f1", "f2"]);
}

/// Append tables with deletion vectors: Java's deletion-vector mode of the unaware
/// coordinator; the file with a vector is a task on its own (files with vectors are always
/// compacted), the single file without one is left alone.
#[test]
fn append_preview_with_deletion_vectors() {
    let append_dv = schema(
        r#"{"id": 0, "name": "v", "type": "INT"}"#,
        &[],
        &[],
        r#""deletion-vectors.enabled": "true""#,
    );
    let es = entries(
        0,
        vec![file("f1", 0, 10, (0, 0)), file("f2", 0, 10, (1, 1))],
    );
    let p =
        compaction_preview(&append_dv, Some(1), &es, &[dv_entry(0, "f2", 1)], false, 0).unwrap();
    assert!(p.available, "{p:?}");
    assert_eq!(p.planner, "append-unaware");
    assert_eq!(p.tasks.len(), 1);
    assert_eq!(p.tasks[0].files, vec!["f2"]);
}

#[test]
fn append_preview_packs_small_files() {
    let s = schema(
        r#"{"id": 0, "name": "v", "type": "INT"}"#,
        &[],
        &[],
        r#""compaction.min.file-num": "3""#,
    );
    let es = entries(
        0,
        (0..4)
            .map(|i| file(&format!("f{i}"), 0, 100 + i, (i, i)))
            .collect(),
    );
    let p = compaction_preview(&s, Some(4), &es, &[], false, 0).unwrap();
    assert_eq!(p.planner, "append-unaware");
    assert_eq!(p.tasks.len(), 1);
    assert_eq!(p.tasks[0].files, vec!["f0", "f1", "f2", "f3"]);
    assert_eq!(p.tasks[0].output_level, None);
    assert_eq!(p.tasks[0].input_rows, 40);
}

fn de_file(name: &str, first: i64, rows: i64, seq: i64, cols: Option<&[&str]>) -> DataFileMeta {
    let mut f = file(name, 0, 100, (seq, seq));
    f.first_row_id = Some(first);
    f.row_count = rows;
    f.write_cols = cols.map(|c| c.iter().map(|s| (*s).to_owned()).collect());
    f
}

fn de_schema() -> TableSchema {
    schema(
        r#"{"id": 0, "name": "id", "type": "INT"}, {"id": 1, "name": "a", "type": "STRING"},
           {"id": 2, "name": "pic", "type": "BLOB"}"#,
        &[],
        &[],
        r#""row-tracking.enabled": "true", "data-evolution.enabled": "true""#,
    )
}

#[test]
fn field_groups_layers_and_sources() {
    let s = de_schema();
    let es = entries(
        0,
        vec![
            de_file("base", 0, 10, 1, Some(&["id", "a"])),
            de_file("pic-1.blob", 0, 10, 1, Some(&["pic"])),
            de_file("upd-a", 0, 10, 3, Some(&["a"])),
            de_file("pic-2.blob", 0, 10, 4, Some(&["pic"])),
            de_file("tail", 10, 5, 2, None),
        ],
    );
    let v = field_groups(
        &s,
        &BTreeMap::new(),
        Some(4),
        &es,
        &[dv_entry(0, "base", 2)],
        None,
        None,
    )
    .unwrap();
    assert_eq!(v.table_kind, "data-evolution");
    assert_eq!(
        v.columns
            .iter()
            .map(|c| (c.name.as_str(), c.blob))
            .collect::<Vec<_>>(),
        vec![("id", false), ("a", false), ("pic", true)]
    );
    assert_eq!(v.placeholders, field_groups::PLACEHOLDERS_NOT_IN_METADATA);
    let b = &v.buckets[0];
    assert_eq!((b.row_id_min, b.row_id_max), (0, 14));
    assert_eq!(b.groups.len(), 2);
    let g0 = &b.groups[0];
    assert_eq!((g0.first_row_id, g0.last_row_id), (0, 9));
    assert_eq!(g0.anchor.as_deref(), Some("base"));
    let sources: Vec<(&str, Vec<&str>)> = g0
        .sources
        .iter()
        .map(|c| {
            (
                c.column.as_str(),
                c.files.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        sources,
        vec![
            ("id", vec!["base"]),
            ("a", vec!["upd-a", "base"]),
            ("pic", vec!["pic-2.blob", "pic-1.blob"]),
        ]
    );
    let bands: Vec<(&str, usize, usize, bool)> = b
        .files
        .iter()
        .map(|f| (f.file_name.as_str(), f.group, f.layer, f.blob))
        .collect();
    assert_eq!(
        bands,
        vec![
            ("pic-2.blob", 0, 0, true),
            ("pic-1.blob", 0, 1, true),
            ("upd-a", 0, 0, false),
            ("base", 0, 1, false),
            ("tail", 1, 0, false),
        ]
    );
    let base = b.files.iter().find(|f| f.file_name == "base").unwrap();
    assert_eq!(base.deletion_vector.as_ref().unwrap().cardinality, Some(2));
    // write_cols = null: every column of the file's schema.
    let tail = b.files.iter().find(|f| f.file_name == "tail").unwrap();
    assert_eq!(tail.columns, vec!["id", "a", "pic"]);
    assert_eq!((tail.first_row_id, tail.last_row_id), (10, 14));
}

#[test]
fn field_groups_follow_renames_through_the_file_schema() {
    let old = de_schema();
    let mut new = de_schema();
    new.id = 1;
    new.fields[1].name = "renamed".into();
    let mut f = de_file("base", 0, 10, 1, Some(&["id", "a"]));
    f.schema_id = 0;
    let schemas = BTreeMap::from([(0, old)]);
    let v = field_groups(
        &new,
        &schemas,
        Some(1),
        &entries(0, vec![f]),
        &[],
        None,
        None,
    )
    .unwrap();
    assert_eq!(v.buckets[0].files[0].columns, vec!["id", "renamed"]);
    let err = field_groups(&new, &schemas, Some(1), &[], &[], None, Some(3)).unwrap_err();
    assert!(err.to_string().contains("no files in partition"), "{err}");
}

#[test]
fn field_groups_need_row_ids() {
    let s = de_schema();
    let err = field_groups(
        &s,
        &BTreeMap::new(),
        Some(1),
        &entries(0, vec![file("plain", 0, 1, (0, 0))]),
        &[],
        None,
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("first_row_id"), "{err}");
}

fn snapshot(id: i64, kind: &str, total: i64) -> Snapshot {
    let json = format!(
        r#"{{"version": 3, "id": {id}, "schemaId": 0, "baseManifestList": "b{id}",
        "deltaManifestList": "d{id}", "totalRecordCount": {total}, "deltaRecordCount": 5,
        "commitUser": "u", "commitIdentifier": {id}, "commitKind": "{kind}",
        "timeMillis": {}}}"#,
        1000 * id
    );
    decode_snapshot(json.as_bytes(), "snapshot").unwrap()
}

fn list(added: i64, deleted: i64) -> ManifestFileMeta {
    ManifestFileMeta {
        file_name: "m".into(),
        file_size: 1,
        num_added_files: added,
        num_deleted_files: deleted,
        partition_stats: SimpleStats::empty(),
        schema_id: 0,
        min_bucket: None,
        max_bucket: None,
        min_level: None,
        max_level: None,
        min_row_id: None,
        max_row_id: None,
        total_buckets: None,
        extra_files: None,
    }
}

#[test]
fn timeline_counts_files_from_manifest_lists_and_marks_tags() {
    let snaps = vec![
        snapshot(1, "APPEND", 5),
        snapshot(2, "APPEND", 10),
        snapshot(3, "COMPACT", 10),
    ];
    let tag = |s: Snapshot| Tag {
        snapshot: s,
        tag_create_time: None,
        tag_time_retained: None,
    };
    let tags = vec![
        ("v2".to_owned(), tag(snaps[1].clone())),
        ("a".to_owned(), tag(snaps[1].clone())),
        ("gone".to_owned(), tag(snapshot(0, "APPEND", 0))),
    ];
    let manifests = BTreeMap::from([
        (
            1,
            SnapshotManifests {
                base: vec![],
                delta: vec![list(2, 0)],
            },
        ),
        (
            3,
            SnapshotManifests {
                base: vec![list(2, 0), list(3, 0)],
                delta: vec![list(1, 4)],
            },
        ),
    ]);
    let t = timeline(&snaps, &tags, &manifests);
    assert!(t.file_counts);
    assert_eq!(t.live_bytes, timeline::LIVE_BYTES_NOT_DERIVED);
    type Point<'a> = (
        i64,
        &'a str,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Vec<&'a str>,
    );
    let got: Vec<Point<'_>> = t
        .points
        .iter()
        .map(|p| {
            (
                p.snapshot_id,
                p.commit_kind.as_str(),
                p.live_files,
                p.added_files,
                p.deleted_files,
                p.tags.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "APPEND", Some(2), Some(2), Some(0), vec![]),
            (2, "APPEND", None, None, None, vec!["a", "v2"]),
            (3, "COMPACT", Some(2), Some(1), Some(4), vec![]),
        ]
    );
    assert_eq!(t.detached_tags, vec![("gone".to_owned(), 0)]);
    assert_eq!(t.points[2].time_millis, 3000);
}

#[test]
fn managed_blobs_lists_blobref_sidecars_only() {
    let s = de_schema();
    let mut with = file("d1", 0, 1, (0, 0));
    with.extra_files = vec!["d1.blobref".into(), "d1.index".into()];
    let without = file("d2", 0, 1, (0, 0));
    let v = managed_blobs(&s, &entries(0, vec![without.clone()])).unwrap();
    assert!(v.files.is_empty());
    assert_eq!(v.note, blobs::NO_MANAGED_BLOBS);
    let v = managed_blobs(&s, &entries(0, vec![with, without])).unwrap();
    assert_eq!(v.files.len(), 1);
    assert_eq!(v.files[0].data_file, "d1");
    assert_eq!(v.files[0].blobrefs, vec!["d1.blobref"]);
}
