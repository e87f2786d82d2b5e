//! Changelog files of `changelog-producer = input`, through [`TableWrite`].

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int8Type, Int32Type, Int64Type};
use arrow_schema::DataType as ArrowType;

use super::*;
use crate::commit::CommitMessage;
use crate::format::data_file::{FileFormat, decode_data_file};
use crate::io::FileToPut;
use crate::spec::{DataFileMeta, FileSource};
use crate::testkit::{kv_input, kv_schema};
use crate::write::{TableWrite, WriteOptions, WriteRestore};

/// Write `rows` in one batch and prepare the commit.
fn write(
    options: &[(&str, &str)],
    rows: &[(i32, &str, &str)],
) -> (Vec<CommitMessage>, Vec<FileToPut>) {
    let mut w = TableWrite::try_new(
        kv_schema(Some("1"), true, options),
        WriteRestore::default(),
        WriteOptions {
            seed: 7,
            time_millis: 1_000,
        },
    )
    .unwrap();
    w.write(&kv_input(rows)).unwrap();
    let messages = w.prepare_commit().unwrap();
    (messages, w.take_files())
}

/// `(k, v, kind byte, sequence)` rows of a written key-value file.
fn read_back(files: &[FileToPut], meta: &DataFileMeta) -> Vec<(i32, String, i8, i64)> {
    let put = files
        .iter()
        .find(|f| f.path == format!("bucket-0/{}", meta.file_name))
        .unwrap();
    let format = FileFormat::from_path(&put.path).unwrap();
    let decoded = decode_data_file(
        put.content.bytes().unwrap().clone(),
        &put.path,
        format,
        None,
        1024,
    )
    .unwrap();
    let schema = decoded.schema.clone();
    let batch = arrow_select::concat::concat_batches(&schema, &decoded.batches).unwrap();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        ["_KEY_k", "_SEQUENCE_NUMBER", "_VALUE_KIND", "k", "v"]
    );
    // Avro has no 8-bit integers: cast to the Paimon types.
    let col = |i: usize, t: ArrowType| arrow_cast::cast(batch.column(i), &t).unwrap();
    let (keys, seqs, kinds) = (
        col(3, ArrowType::Int32),
        col(1, ArrowType::Int64),
        col(2, ArrowType::Int8),
    );
    let keys = keys.as_primitive::<Int32Type>();
    let seqs = seqs.as_primitive::<Int64Type>();
    let kinds = kinds.as_primitive::<Int8Type>();
    let values = arrow_cast::cast(batch.column(4), &ArrowType::Utf8).unwrap();
    let values = values.as_string::<i32>();
    (0..batch.num_rows())
        .map(|i| {
            (
                keys.value(i),
                values.value(i).to_owned(),
                kinds.value(i),
                seqs.value(i),
            )
        })
        .collect()
}

const ROWS: [(i32, &str, &str); 5] = [
    (2, "a", "+I"),
    (1, "b", "+I"),
    (2, "c", "+U"),
    (1, "x", "-D"),
    (3, "d", "+I"),
];

#[test]
fn changelog_file_holds_every_input_record_sorted_with_its_row_kind() {
    let (messages, files) = write(&[("changelog-producer", "input")], &ROWS);
    assert_eq!(messages.len(), 1);
    let inc = &messages[0].data_increment;
    assert_eq!(inc.changelog_files.len(), 1);
    assert_eq!(inc.new_files.len(), 1);
    assert_eq!(files.len(), 2);

    let changelog = &inc.changelog_files[0];
    // Sorted by key then sequence number, not merged: both records of keys 1 and 2 stay.
    assert_eq!(
        read_back(&files, changelog),
        [
            (1, "b".to_owned(), 0, 1),
            (1, "x".to_owned(), 3, 3),
            (2, "a".to_owned(), 0, 0),
            (2, "c".to_owned(), 2, 2),
            (3, "d".to_owned(), 0, 4),
        ]
    );
    assert_eq!(changelog.row_count, 5);
    assert_eq!(changelog.delete_row_count, Some(1));
    assert_eq!(
        (changelog.min_sequence_number, changelog.max_sequence_number),
        (0, 4)
    );
    assert_eq!(changelog.level, 0);
    assert_eq!(changelog.file_source, Some(FileSource::Append));

    // The data file is the merge: the newest record per key.
    let data = &inc.new_files[0];
    assert_eq!(
        read_back(&files, data),
        [
            (1, "x".to_owned(), 3, 3),
            (2, "c".to_owned(), 2, 2),
            (3, "d".to_owned(), 0, 4),
        ]
    );

    // One path factory: same UUID, the changelog file opened first.
    let uuid = &data.file_name["data-".len().."data-".len() + 36];
    assert_eq!(changelog.file_name, format!("changelog-{uuid}-0.parquet"));
    assert_eq!(data.file_name, format!("data-{uuid}-1.parquet"));
}

#[test]
fn changelog_options_pick_format_prefix_compression_and_stats() {
    let (messages, files) = write(
        &[
            ("changelog-producer", "input"),
            ("changelog-file.format", "avro"),
            ("changelog-file.prefix", "cl-"),
            ("changelog-file.compression", "snappy"),
            ("changelog-file.stats-mode", "none"),
        ],
        &ROWS,
    );
    let inc = &messages[0].data_increment;
    let changelog = &inc.changelog_files[0];
    let data = &inc.new_files[0];
    // Another format: another path factory, with its own UUID and counter.
    assert!(changelog.file_name.starts_with("cl-"));
    assert!(changelog.file_name.ends_with("-0.avro"));
    assert!(data.file_name.ends_with("-0.parquet"));
    assert_ne!(changelog.file_name[3..39], data.file_name[5..41]);
    assert_eq!(read_back(&files, changelog).len(), 5);
    let put = files.iter().find(|f| f.path.ends_with(".avro")).unwrap();
    assert!(
        put.content
            .bytes()
            .unwrap()
            .windows(b"snappy".len())
            .any(|w| w == b"snappy"),
        "avro.codec snappy in the header"
    );
    // Stats mode none for changelog files only.
    assert_eq!(changelog.value_stats_cols, Some(vec![]));
    assert_eq!(data.value_stats_cols, None);
}

#[test]
fn no_changelog_without_input_producer_and_ignored_retractions_are_not_changelog() {
    let (messages, files) = write(&[], &ROWS);
    assert!(messages[0].data_increment.changelog_files.is_empty());
    assert_eq!(files.len(), 1);

    let (messages, files) = write(
        &[("changelog-producer", "input"), ("ignore-delete", "true")],
        &ROWS,
    );
    let changelog = &messages[0].data_increment.changelog_files[0];
    let rows = read_back(&files, changelog);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.2 != 3));
    assert_eq!(changelog.delete_row_count, Some(0));
}

#[test]
fn compaction_changelog_producers_write_level_0_without_changelog() {
    // `lookup` and `full-compaction`: the changelog comes from compaction, so the write
    // itself only writes level-0 data files (Java's MergeTreeWriter).
    for producer in ["lookup", "full-compaction"] {
        let (messages, files) = write(&[("changelog-producer", producer)], &ROWS);
        let inc = &messages[0].data_increment;
        assert!(inc.changelog_files.is_empty(), "{producer}");
        assert_eq!(inc.new_files.len(), 1, "{producer}");
        assert_eq!(inc.new_files[0].level, 0);
        assert_eq!(files.len(), 1, "{producer}");
    }
}

#[test]
fn changelog_spec_falls_back_to_level_0_then_table_options() {
    let spec = |pairs: &[(&str, &str)]| {
        KvFileSpec::changelog(&CoreOptions::from_pairs(pairs.iter().copied())).unwrap()
    };
    let s = spec(&[]);
    assert_eq!(
        (s.format.as_str(), s.compression.as_str()),
        ("parquet", "zstd")
    );
    let s = spec(&[
        ("file.format", "ORC"),
        ("file.compression", "lz4"),
        ("file.format.per.level", "0:avro,3:parquet"),
        ("file.compression.per.level", "1:none"),
    ]);
    assert_eq!((s.format.as_str(), s.compression.as_str()), ("avro", "lz4"));
    let s = spec(&[
        ("file.format.per.level", "0:avro"),
        ("changelog-file.format", "Parquet"),
        ("changelog-file.compression", "gzip"),
    ]);
    assert_eq!(
        (s.format.as_str(), s.compression.as_str()),
        ("parquet", "gzip")
    );
    assert!(
        KvFileSpec::changelog(&CoreOptions::from_pairs([("file.format.per.level", "x")])).is_err()
    );
}

/// A flush far larger than one chunk of [`crate::write::table_write`] (16,384 input rows):
/// 60,000 records over 20,000 keys in several batches, rolled at a small
/// `target-file-size`. The data files, read in the message's order, hold the model's
/// merge (the newest record per key, retractions kept at level 0), keys strictly ascending
/// across files, each file's metadata matching its rows; the changelog files hold every
/// input record sorted by key and sequence number.
#[test]
fn a_flush_of_many_chunks_rolls_sorted_files_holding_the_model() {
    let values: Vec<String> = (0..60_000)
        .map(|i| format!("value-{i:05}-{}", i * 7919 % 1000))
        .collect();
    let rows: Vec<(i32, &str, &str)> = (0..60_000usize)
        .map(|i| {
            let k = ((i * 7_919) % 20_000) as i32;
            let kind = if i % 11 == 0 { "-D" } else { "+I" };
            (k, values[i].as_str(), kind)
        })
        .collect();
    let mut w = TableWrite::try_new(
        kv_schema(
            Some("1"),
            true,
            &[
                ("changelog-producer", "input"),
                ("target-file-size", "128kb"),
            ],
        ),
        WriteRestore::default(),
        WriteOptions {
            seed: 7,
            time_millis: 1_000,
        },
    )
    .unwrap();
    for part in rows.chunks(7_000) {
        w.write(&kv_input(part)).unwrap();
    }
    let messages = w.prepare_commit().unwrap();
    let files = w.take_files();
    let inc = &messages[0].data_increment;
    assert!(
        inc.new_files.len() > 2,
        "{} data files",
        inc.new_files.len()
    );
    assert!(inc.changelog_files.len() > 2);

    // The model: the newest record (the last in input order) per key.
    let mut model: BTreeMap<i32, (String, i8, i64)> = BTreeMap::new();
    for (seq, (k, v, kind)) in rows.iter().enumerate() {
        let kind = if *kind == "-D" { 3 } else { 0 };
        model.insert(*k, (v.to_string(), kind, seq as i64));
    }
    let mut data = Vec::new();
    let mut last_key = None;
    for meta in &inc.new_files {
        let got = read_back(&files, meta);
        assert_eq!(meta.row_count, got.len() as i64);
        assert_eq!(meta.level, 0);
        assert_eq!(
            meta.delete_row_count,
            Some(got.iter().filter(|r| r.2 == 3).count() as i64)
        );
        assert_eq!(
            meta.min_sequence_number,
            got.iter().map(|r| r.3).min().unwrap()
        );
        assert_eq!(
            meta.max_sequence_number,
            got.iter().map(|r| r.3).max().unwrap()
        );
        let first = got.first().unwrap().0;
        assert!(
            last_key.is_none_or(|l| l < first),
            "files overlap at key {first}"
        );
        last_key = Some(got.last().unwrap().0);
        data.extend(got);
    }
    let want: Vec<(i32, String, i8, i64)> = model
        .into_iter()
        .map(|(k, (v, kind, seq))| (k, v, kind, seq))
        .collect();
    assert_eq!(data, want);

    let log: Vec<_> = inc
        .changelog_files
        .iter()
        .flat_map(|m| read_back(&files, m))
        .collect();
    let mut want_log: Vec<(i32, String, i8, i64)> = rows
        .iter()
        .enumerate()
        .map(|(seq, (k, v, kind))| {
            (
                *k,
                v.to_string(),
                if *kind == "-D" { 3 } else { 0 },
                seq as i64,
            )
        })
        .collect();
    want_log.sort_by_key(|r| (r.0, r.3));
    assert_eq!(log, want_log);
}
