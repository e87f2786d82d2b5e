//! Postpone-bucket writes through [`TableWrite`]: names, layout, no merge.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_schema::DataType as ArrowType;

use super::*;
use crate::format::data_file::{FileFormat, decode_data_file};
use crate::spec::{BinaryRow, DataType, TypeKind};
use crate::testkit::{kv_input, kv_schema};
use crate::write::{TableWrite, WriteOptions, WriteRestore};

fn new_write(options: &[(&str, &str)]) -> TableWrite {
    TableWrite::try_new(
        kv_schema(Some("-2"), true, options),
        WriteRestore::default(),
        WriteOptions {
            seed: 3,
            time_millis: 1_000,
        },
    )
    .unwrap()
}

const ROWS: [(i32, &str, &str); 4] = [
    (3, "c", "+I"),
    (1, "a", "+I"),
    (3, "d", "-D"),
    (2, "b", "+U"),
];

#[test]
fn rows_go_unsorted_and_unmerged_to_bucket_postpone_as_avro() {
    let mut w = new_write(&[]).with_commit_user("user-1").unwrap();
    w.write(&kv_input(&ROWS)).unwrap();
    let messages = w.prepare_commit().unwrap();
    let files = w.take_files();
    assert_eq!(messages.len(), 1);
    let m = &messages[0];
    assert_eq!((m.bucket, m.total_buckets), (-2, Some(-2)));
    assert_eq!(m.partition, BinaryRow::empty());
    assert!(m.data_increment.changelog_files.is_empty());
    let meta = &m.data_increment.new_files[0];
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, format!("bucket-postpone/{}", meta.file_name));

    // data--u-<commitUser>-s-<writeId>-w-<uuid>-0.avro
    let name = &meta.file_name;
    let rest = name.strip_prefix("data--u-user-1-s-").unwrap();
    let (write_id, rest) = rest.split_once("-w-").unwrap();
    let write_id: i32 = write_id.parse().unwrap();
    assert!(write_id >= 0);
    assert_eq!(rest.len(), 36 + "-0.avro".len(), "{name}");
    assert!(rest.ends_with("-0.avro"));

    // Input order, own row kinds, sequence numbers -1.
    let put = &files[0];
    let decoded = decode_data_file(
        put.content.bytes().unwrap().clone(),
        &put.path,
        FileFormat::Avro,
        None,
        64,
    )
    .unwrap();
    let batch = arrow_select::concat::concat_batches(&decoded.schema, &decoded.batches).unwrap();
    let col = |i: usize, t: ArrowType| arrow_cast::cast(batch.column(i), &t).unwrap();
    let keys = col(3, ArrowType::Int32);
    let seqs = col(1, ArrowType::Int64);
    let kinds = col(2, ArrowType::Int32);
    assert_eq!(keys.as_primitive::<Int32Type>().values(), &[3, 1, 3, 2]);
    assert_eq!(seqs.as_primitive::<Int64Type>().values(), &[-1, -1, -1, -1]);
    assert_eq!(kinds.as_primitive::<Int32Type>().values(), &[0, 0, 3, 2]);

    assert_eq!(meta.row_count, 4);
    assert_eq!(
        (meta.min_sequence_number, meta.max_sequence_number),
        (-1, -1)
    );
    assert_eq!(meta.level, 0);
    // Stats mode none: no value stats.
    assert_eq!(meta.value_stats_cols, Some(vec![]));
    // First and last record's keys (the file is not sorted).
    assert_ne!(meta.min_key, meta.max_key);
}

#[test]
fn one_write_id_and_commit_user_for_every_bucket_writer() {
    let mut w = new_write(&[("data-file.prefix", "p-")]);
    w.write(&kv_input(&ROWS[..2])).unwrap();
    let first = w.prepare_commit().unwrap();
    w.write(&kv_input(&ROWS[2..])).unwrap();
    let second = w.prepare_commit().unwrap();
    let a = &first[0].data_increment.new_files[0].file_name;
    let b = &second[0].data_increment.new_files[0].file_name;
    // Without a commit user: a UUID from the seed.
    assert!(a.starts_with("p--u-"), "{a}");
    let writer_prefix = |n: &str| n[..n.rfind("-w-").unwrap() + 3].to_owned();
    assert_eq!(writer_prefix(a), writer_prefix(b));
    assert!(a.ends_with("-0.avro") && b.ends_with("-1.avro"), "{a} {b}");
}

#[test]
fn ignore_delete_drops_retractions_and_first_row_rejects_them() {
    let mut w = new_write(&[("ignore-delete", "true")]);
    w.write(&kv_input(&ROWS)).unwrap();
    let m = w.prepare_commit().unwrap();
    assert_eq!(m[0].data_increment.new_files[0].row_count, 3);

    // First-row: refused when the batch arrives, naming the input row.
    let mut w = new_write(&[("merge-engine", "first-row")]);
    let err = w.write(&kv_input(&ROWS)).unwrap_err().to_string();
    assert!(
        err.contains("row 2 ") && err.contains("-D") && err.contains("first-row"),
        "{err}"
    );
}

#[test]
fn postpone_bucket_needs_a_primary_key_and_an_empty_user_is_invalid() {
    let err = TableWrite::try_new(
        kv_schema(Some("-2"), false, &[]),
        WriteRestore::default(),
        WriteOptions {
            seed: 1,
            time_millis: 0,
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("primary key"), "{err}");
    assert!(new_write(&[]).with_commit_user("").is_err());
}

#[test]
fn file_prefix_and_options() {
    let fields = [DataField::new(0, "k", DataType::not_null(TypeKind::Int))];
    let options = CoreOptions::from_pairs([("file.format", "orc")]);
    let p = PostponeWrite::new(&fields, &options, &mut NameSource::new(1))
        .with_commit_user("u")
        .unwrap();
    assert_eq!(p.format, "avro");
    assert_eq!(p.options.get("metadata.stats-mode"), Some("none"));
    assert_eq!(
        p.file_prefix("data-"),
        format!("data--u-u-s-{}-w-", p.write_id)
    );
}
