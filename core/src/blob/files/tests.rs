use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, LargeBinaryArray, RecordBatch, StringArray};

use crate::commit::CommitMessage;
use crate::commit::row_tracking::assign_row_tracking;
use crate::format::blob::{BlobEntry, decode_blob_file_index};
use crate::io::FileToPut;
use crate::schema::create::new_table_schema;
use crate::spec::{BinaryRow, DataFileMeta, FileKind, FileSource, ManifestEntry, TableSchema};
use crate::write::{TableWrite, WriteOptions, WriteRestore};

fn schema(fields: &str, options: &str) -> TableSchema {
    let json = format!(r#"{{"fields": [{fields}], "options": {{{options}}}}}"#);
    new_table_schema(json.as_bytes(), 0).unwrap()
}

const DE: &str = r#""row-tracking.enabled": "true", "data-evolution.enabled": "true""#;
const BLOB_FIELDS: &str = r#"{"id": 0, "name": "id", "type": "INT"},
    {"id": 1, "name": "thumb", "type": "BLOB"},
    {"id": 2, "name": "name", "type": "STRING"},
    {"id": 3, "name": "full", "type": "BLOB"}"#;

fn blob_batch(rows: i32) -> RecordBatch {
    let ids: ArrayRef = Arc::new(Int32Array::from_iter_values(0..rows));
    let thumb: ArrayRef = Arc::new(LargeBinaryArray::from_iter(
        (0..rows).map(|i| (i % 3 != 2).then(|| vec![i as u8; i as usize])),
    ));
    let names: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..rows).map(|i| format!("n{i}")),
    ));
    let full: ArrayRef = Arc::new(LargeBinaryArray::from_iter_values(
        (0..rows).map(|i| vec![0xA0 ^ i as u8; 100]),
    ));
    RecordBatch::try_from_iter([
        ("id", ids),
        ("thumb", thumb),
        ("name", names),
        ("full", full),
    ])
    .unwrap()
}

fn write(schema: TableSchema, batches: &[RecordBatch]) -> (Vec<CommitMessage>, Vec<FileToPut>) {
    let mut w = TableWrite::try_new(
        schema,
        WriteRestore::default(),
        WriteOptions {
            seed: 7,
            time_millis: 1_000,
        },
    )
    .unwrap();
    let mut files = Vec::new();
    for b in batches {
        w.write(b).unwrap();
        files.extend(w.take_files());
    }
    let messages = w.prepare_commit().unwrap();
    files.extend(w.take_files());
    (messages, files)
}

fn new_files(messages: &[CommitMessage]) -> Vec<DataFileMeta> {
    messages
        .iter()
        .flat_map(|m| m.data_increment.new_files.clone())
        .collect()
}

fn bytes_of<'a>(files: &'a [FileToPut], name: &str) -> &'a [u8] {
    files
        .iter()
        .find(|f| f.path.ends_with(&format!("/{name}")))
        .unwrap()
        .content
        .bytes()
        .unwrap()
}

/// Payload of each row of a `.blob` file (`None` for null rows).
fn blob_rows(bytes: &[u8]) -> Vec<Option<Vec<u8>>> {
    let index = decode_blob_file_index(bytes, "test.blob").unwrap();
    index
        .entries()
        .iter()
        .map(|e| match e {
            BlobEntry::Null => None,
            e => {
                let r = e.payload_range().unwrap();
                Some(bytes[r.start as usize..r.end as usize].to_vec())
            }
        })
        .collect()
}

#[test]
fn blob_columns_go_to_blob_files_after_their_data_file() {
    let (messages, files) = write(schema(BLOB_FIELDS, DE), &[blob_batch(5)]);
    let metas = new_files(&messages);
    assert_eq!(metas.len(), 3, "{metas:#?}");
    let (data, thumb, full) = (&metas[0], &metas[1], &metas[2]);
    let prefix = data.file_name.strip_suffix("0.parquet").unwrap();
    assert_eq!(thumb.file_name, format!("{prefix}1.blob"));
    assert_eq!(full.file_name, format!("{prefix}2.blob"));
    assert_eq!(data.write_cols, Some(vec!["id".into(), "name".into()]));
    assert_eq!(thumb.write_cols, Some(vec!["thumb".into()]));
    assert_eq!(full.write_cols, Some(vec!["full".into()]));
    for m in &metas {
        assert_eq!(m.row_count, 5);
        assert_eq!(m.first_row_id, None);
        assert_eq!(m.file_source, Some(FileSource::Append));
        assert_eq!((m.min_sequence_number, m.max_sequence_number), (0, 4));
        assert_eq!(m.schema_id, 0);
        assert_eq!(m.level, 0);
        assert_eq!(m.delete_row_count, Some(0));
        assert_eq!(m.creation_time_millis, Some(1_000));
        assert_eq!(m.file_size as usize, bytes_of(&files, &m.file_name).len());
    }
    // Data file statistics cover its two columns; blob files have none (dense store).
    assert_eq!(data.value_stats_cols, None);
    assert_eq!(data.value_stats.null_counts, vec![Some(0), Some(0)]);
    assert_eq!(thumb.value_stats_cols, Some(vec![]));
    assert!(thumb.value_stats.null_counts.is_empty());
    assert_eq!(
        thumb.value_stats.min_values,
        BinaryRow::encode(&[], &[]).unwrap()
    );
    let thumbs = blob_rows(bytes_of(&files, &thumb.file_name));
    let want: Vec<Option<Vec<u8>>> = (0..5)
        .map(|i| (i % 3 != 2).then(|| vec![i as u8; i as usize]))
        .collect();
    assert_eq!(thumbs, want);
    let fulls = blob_rows(bytes_of(&files, &full.file_name));
    assert_eq!(fulls[4], Some(vec![0xA4; 100]));
}

#[test]
fn blob_stats_without_dense_store_have_one_null_column() {
    let opts = format!(r#"{DE}, "metadata.stats-dense-store": "false""#);
    let (messages, _) = write(schema(BLOB_FIELDS, &opts), &[blob_batch(2)]);
    let metas = new_files(&messages);
    assert_eq!(metas[1].value_stats_cols, None);
    assert_eq!(metas[1].value_stats.null_counts, vec![None]);
}

#[test]
fn blob_files_roll_at_the_blob_target_size() {
    // (blob.target-file-size, files of the 100-byte column for 4 rows)
    for (target, full_files) in [("1 b", 4), ("150 b", 2), ("1 mb", 1)] {
        roll_case(target, full_files);
    }
}

fn roll_case(target: &str, full_files: usize) {
    let opts = format!(r#"{DE}, "blob.target-file-size": "{target}""#);
    let (messages, files) = write(schema(BLOB_FIELDS, &opts), &[blob_batch(4)]);
    let metas = new_files(&messages);
    let full: Vec<&DataFileMeta> = metas
        .iter()
        .filter(|m| m.write_cols == Some(vec!["full".into()]))
        .collect();
    assert_eq!(full.len(), full_files);
    assert_eq!(full.iter().map(|m| m.row_count).sum::<i64>(), 4);
    let mut names: Vec<&str> = metas.iter().map(|m| m.file_name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), metas.len(), "file names are unique");
    assert_eq!(files.len(), metas.len());
    // The commit gives the data file rows 0..4 and each column's blob files the same rows.
    let entries: Vec<ManifestEntry> = metas
        .into_iter()
        .map(|file| ManifestEntry {
            kind: FileKind::Add,
            partition: BinaryRow::empty(),
            bucket: 0,
            total_buckets: 0,
            file,
        })
        .collect();
    let (assigned, next) = assign_row_tracking(3, 10, entries).unwrap();
    assert_eq!(next, 14);
    let mut start = 10;
    for e in assigned
        .iter()
        .filter(|e| e.file.write_cols == Some(vec!["full".into()]))
    {
        assert_eq!(e.file.first_row_id, Some(start));
        start += e.file.row_count;
    }
    assert_eq!(start, 14);
    assert!(assigned.iter().all(|e| e.file.min_sequence_number == 3));
}

/// The normal file rolls as Java's rolling writer does (its size checked every 1,000
/// records): a full first file of 1,000 rows, then the rest at commit; each closes its own
/// blob files.
#[test]
fn a_rolled_data_file_closes_its_blob_files() {
    let opts = format!(r#"{DE}, "target-file-size": "1 b", "blob.target-file-size": "1 mb""#);
    let (messages, _) = write(
        schema(BLOB_FIELDS, &opts),
        &[blob_batch(600), blob_batch(900)],
    );
    let metas = new_files(&messages);
    let kinds: Vec<(String, i64)> = metas
        .iter()
        .map(|m| {
            (
                m.file_name.rsplit('.').next().unwrap().to_owned(),
                m.row_count,
            )
        })
        .collect();
    let want = [
        ("parquet", 1000),
        ("blob", 1000),
        ("blob", 1000),
        ("parquet", 500),
        ("blob", 500),
        ("blob", 500),
    ]
    .map(|(k, n)| (k.to_owned(), n));
    assert_eq!(kinds, want);
}

#[test]
fn nested_blob_columns_are_written_as_blob_payloads() {
    let fields = r#"{"id": 0, "name": "id", "type": "INT"},
        {"id": 1, "name": "parts", "type": {"type": "ARRAY", "element": "BLOB"}}"#;
    let schema = schema(fields, DE);
    let arrow = crate::types::paimon_to_arrow_schema(&schema.fields).unwrap();
    let mut parts =
        arrow_array::builder::ListBuilder::new(arrow_array::builder::LargeBinaryBuilder::new())
            .with_field(match arrow.field(1).data_type() {
                arrow_schema::DataType::List(f) => Arc::clone(f),
                other => panic!("{other}"),
            });
    parts.values().append_value(b"ab");
    parts.values().append_null();
    parts.append(true);
    parts.append(false);
    let batch = RecordBatch::try_new(
        arrow,
        vec![
            Arc::new(Int32Array::from(vec![1, 2])),
            Arc::new(parts.finish()),
        ],
    )
    .unwrap();
    let (messages, files) = write(schema, &[batch]);
    let metas = new_files(&messages);
    assert_eq!(metas[1].write_cols, Some(vec!["parts".into()]));
    let rows = blob_rows(bytes_of(&files, &metas[1].file_name));
    assert_eq!(
        rows[0].as_deref(),
        Some(&crate::format::blob::encode_array_payload(&[Some(b"ab"), None])[..])
    );
    assert_eq!(rows[1], None);
}

#[test]
fn row_tracking_files_have_no_row_ids_and_all_columns() {
    row_tracking_case(DE, Some((0, 2)));
    row_tracking_case(r#""row-tracking.enabled": "true""#, None);
}

fn row_tracking_case(options: &str, sequences: Option<(i64, i64)>) {
    let fields =
        r#"{"id": 0, "name": "id", "type": "INT"}, {"id": 1, "name": "v", "type": "STRING"}"#;
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
        (
            "v",
            Arc::new(StringArray::from(vec!["a", "b", "c"])) as ArrayRef,
        ),
    ])
    .unwrap();
    let (messages, _) = write(schema(fields, options), &[batch]);
    let metas = new_files(&messages);
    assert_eq!(metas.len(), 1);
    assert_eq!(metas[0].first_row_id, None);
    assert_eq!(metas[0].write_cols, None);
    assert_eq!(metas[0].file_source, Some(FileSource::Append));
    // Data evolution counts per file from 0; plain row tracking continues the bucket's
    // sequence (0 on a new table either way).
    let got = (metas[0].min_sequence_number, metas[0].max_sequence_number);
    assert_eq!(got, sequences.unwrap_or((0, 2)));
}

#[test]
fn unsupported_or_invalid_tables_are_named() {
    let cases: [(&str, &str, &str); 5] = [
        (
            // blob_without_data_evolution
            r#"{"id": 0, "name": "id", "type": "INT"}, {"id": 1, "name": "b", "type": "BLOB"}"#,
            r#""row-tracking.enabled": "true""#,
            "data evolution",
        ),
        (
            // blob_in_a_row
            r#"{"id": 0, "name": "id", "type": "INT"},
       {"id": 1, "name": "r", "type": {"type": "ROW", "fields": [{"id": 2, "name": "b", "type": "BLOB"}]}}"#,
            DE,
            "nested",
        ),
        (
            // only_blobs
            r#"{"id": 1, "name": "b", "type": "BLOB"}"#,
            DE,
            "other normal columns",
        ),
        (
            // primary_key_row_tracking
            r#"{"id": 0, "name": "id", "type": "INT NOT NULL"}"#,
            r#""row-tracking.enabled": "true", "bucket": "1", "primary-key": "id""#,
            "bucket' = -1",
        ),
        (
            // data_evolution_without_row_tracking
            r#"{"id": 0, "name": "id", "type": "INT"}"#,
            r#""data-evolution.enabled": "true""#,
            "row-tracking.enabled",
        ),
    ];
    for (fields, options, message) in cases {
        invalid_case(fields, options, message);
    }
}

fn invalid_case(fields: &str, options: &str, message: &str) {
    // Create checks Java's BLOB schema rules (write/blob_validation.rs), so some of these
    // tables are rejected before they reach the writer.
    let json = format!(r#"{{"fields": [{fields}], "options": {{{options}}}}}"#);
    let err = match new_table_schema(json.as_bytes(), 0) {
        Err(e) => e,
        Ok(schema) => TableWrite::try_new(
            schema,
            WriteRestore::default(),
            WriteOptions {
                seed: 1,
                time_millis: 0,
            },
        )
        .unwrap_err(),
    };
    let text = err.to_string().to_lowercase();
    assert!(text.contains(&message.to_lowercase()), "{err}");
}

#[test]
fn blob_file_payloads_keep_empty_and_null_apart() {
    let (messages, files) = write(schema(BLOB_FIELDS, DE), &[blob_batch(3)]);
    let thumb = &new_files(&messages)[1];
    let rows = blob_rows(bytes_of(&files, &thumb.file_name));
    // Row 0: empty blob (a 16-byte record); row 2: null.
    assert_eq!(rows, vec![Some(vec![]), Some(vec![1]), None]);
    let index = decode_blob_file_index(bytes_of(&files, &thumb.file_name), "t").unwrap();
    assert_eq!(index.null_count(), 1);
    assert_eq!(index.row_count(), 3);
}

/// `b`'s column names over `cols` (nullability from the values).
fn with_columns(b: &RecordBatch, cols: Vec<ArrayRef>) -> RecordBatch {
    RecordBatch::try_from_iter(
        b.schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .zip(cols),
    )
    .unwrap()
}

/// A v2 blob descriptor of `len` bytes at `offset` of `/src`.
fn descriptor(offset: i64, len: i64) -> Vec<u8> {
    crate::format::blob_descriptor::BlobDescriptor::new("file:/src", offset, len).serialize()
}

/// Columns stored inline (`blob-descriptor-field`, `blob-view-field`) stay in the normal file
/// (`write_cols` keeps them, in table order); only the other BLOB columns get `.blob` files.
/// A table whose BLOB columns are all inline writes whole-row files, as Java's
/// `BlobFileContext#create` (no blob file needed) leads to.
#[test]
fn inline_blob_columns_stay_in_the_normal_file() {
    let rows = |n: i32| {
        let mut b = blob_batch(n);
        let thumb: ArrayRef = Arc::new(LargeBinaryArray::from_iter(
            (0..n).map(|i| (i != 1).then(|| descriptor(i as i64, 3))),
        ));
        let mut cols = b.columns().to_vec();
        cols[1] = thumb;
        b = with_columns(&b, cols);
        b
    };
    let (messages, files) = write(
        schema(
            BLOB_FIELDS,
            &format!(r#"{DE}, "blob-descriptor-field": "thumb""#),
        ),
        &[rows(4)],
    );
    let metas = new_files(&messages);
    let write_cols: Vec<_> = metas.iter().map(|m| m.write_cols.clone()).collect();
    assert_eq!(
        write_cols,
        vec![
            Some(vec!["id".into(), "thumb".into(), "name".into()]),
            Some(vec!["full".into()]),
        ]
    );
    // The normal file's statistics cover its three columns (the BLOB one: nulls only).
    assert_eq!(
        metas[0].value_stats.null_counts,
        vec![Some(0), Some(1), Some(0)]
    );
    assert_eq!(blob_rows(bytes_of(&files, &metas[1].file_name)).len(), 4);

    // Every BLOB column inline: whole-row files, no `.blob` file.
    let (messages, _) = write(
        schema(
            BLOB_FIELDS,
            &format!(r#"{DE}, "blob-descriptor-field": "thumb", "blob-view-field": "full""#),
        ),
        &[{
            let b = rows(2);
            let view = crate::format::blob_descriptor::BlobViewStruct {
                identifier: "db.t".into(),
                field_id: 1,
                row_id: 0,
            }
            .serialize()
            .unwrap();
            let mut cols = b.columns().to_vec();
            cols[3] = Arc::new(LargeBinaryArray::from_iter(vec![Some(view), None]));
            with_columns(&b, cols)
        }],
    );
    let metas = new_files(&messages);
    assert_eq!(metas.len(), 1);
    assert_eq!(metas[0].write_cols, None);

    // Raw bytes in an inline column: refused before anything is written.
    let mut w = TableWrite::try_new(
        schema(
            BLOB_FIELDS,
            &format!(r#"{DE}, "blob-descriptor-field": "thumb""#),
        ),
        WriteRestore::default(),
        WriteOptions {
            seed: 7,
            time_millis: 1_000,
        },
    )
    .unwrap();
    let err = w.write(&blob_batch(3)).unwrap_err().to_string();
    assert!(
        err.starts_with("column 'thumb' (blob-descriptor-field), row 0: BLOB inline fields"),
        "{err}"
    );
    assert!(w.take_files().is_empty());
    assert!(w.prepare_commit().unwrap().is_empty());
}

/// Java's rules for BLOB columns cover inline ones: data evolution on append tables, other
/// columns, no partition key.
#[test]
fn inline_blob_columns_follow_the_blob_table_rules() {
    let fields =
        r#"{"id": 0, "name": "id", "type": "INT"}, {"id": 1, "name": "b", "type": "BLOB"}"#;
    for (options, message) in [
        (
            r#""blob-descriptor-field": "b""#,
            "Data evolution config must enabled",
        ),
        (
            r#""blob-view-field": "b""#,
            "Data evolution config must enabled",
        ),
    ] {
        invalid_case(fields, options, message);
    }
}
