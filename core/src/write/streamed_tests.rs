//! Data files streamed while they are encoded ([`FileContent::Part`]) and the flush driven a
//! bucket at a time ([`TableWrite::continue_flush`]): the files a host assembles from the
//! parts are byte for byte those of a writer that never streams, and the commit messages
//! are the same.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};

use crate::commit::CommitMessage;
use crate::io::{FileContent, FileToPut};
use crate::spec::{DataField, DataType, TableSchema};
use crate::testkit::kv_schema;
use crate::write::{TableWrite, WriteOptions, WriteRestore};

/// Batch `b` of the input: 5,000 rows, keys spread so that primary-key batches overlap.
fn batch(b: usize) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("k", ArrowType::Int32, false),
        Field::new("v", ArrowType::Utf8, true),
    ]);
    let rows = 5_000;
    let keys = (0..rows).map(|i| ((b * rows + i) * 7_919 % 60_000) as i32);
    let values = (0..rows).map(|i| format!("value-{b}-{i}-{}", (b * 31 + i) * 7_919 % 100_003));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(keys)),
        Arc::new(StringArray::from_iter_values(values)),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

/// What a host did with the writer's files.
#[derive(Default)]
struct Host {
    /// Complete files by path.
    files: BTreeMap<String, Vec<u8>>,
    /// Open uploads: the parts received so far.
    open: BTreeMap<String, (u32, Vec<u8>)>,
    parts: usize,
    /// Takes that handed out something while a flush was still in progress.
    takes_during_flush: usize,
    /// The most bytes one take handed out.
    largest_take: u64,
}

impl Host {
    fn put(&mut self, files: Vec<FileToPut>, part_bytes: usize) {
        let size: u64 = files.iter().map(FileToPut::len).sum();
        self.largest_take = self.largest_take.max(size);
        for f in files {
            assert!(!self.files.contains_key(&f.path), "{} put twice", f.path);
            match f.content {
                FileContent::Bytes(b) => {
                    assert!(
                        !self.open.contains_key(&f.path),
                        "{}: whole put of an upload",
                        f.path
                    );
                    self.files.insert(f.path, b.to_vec());
                }
                FileContent::Part(p) => {
                    self.parts += 1;
                    let (next, bytes) = self.open.entry(f.path.clone()).or_default();
                    assert_eq!(p.part, *next, "{}: parts in order", f.path);
                    *next += 1;
                    if !p.last {
                        assert!(p.bytes.len() >= part_bytes, "{}: a short part", f.path);
                    }
                    bytes.extend_from_slice(&p.bytes);
                    if p.last {
                        let (_, bytes) = self.open.remove(&f.path).unwrap();
                        self.files.insert(f.path, bytes);
                    }
                }
                FileContent::Streamed(_) | FileContent::StreamedRest { .. } => {
                    panic!("{}: no blob references here", f.path)
                }
            }
        }
    }
}

/// Write the input through a writer of `schema` with parts of `part_bytes` (`usize::MAX`:
/// no streaming); `drive` runs each flush to its end a step at a time.
fn run(
    schema: &TableSchema,
    batches: usize,
    part_bytes: usize,
    drive: bool,
) -> (Host, Vec<CommitMessage>) {
    let mut w = TableWrite::try_new(
        schema.clone(),
        WriteRestore::default(),
        WriteOptions {
            seed: 11,
            time_millis: 1_000,
        },
    )
    .unwrap()
    .with_put_part_bytes(part_bytes);
    let mut host = Host::default();
    for b in 0..batches {
        w.write(&batch(b)).unwrap();
        host.put(w.take_files(), part_bytes);
        while drive && w.continue_flush().unwrap() {
            let files = w.take_files();
            if w.flush_in_progress() && !files.is_empty() {
                host.takes_during_flush += 1;
            }
            host.put(files, part_bytes);
        }
        assert!(!drive || !w.flush_in_progress());
    }
    if drive {
        w.flush().unwrap();
        while w.continue_flush().unwrap() {
            host.put(w.take_files(), part_bytes);
        }
    }
    let messages = w.prepare_commit().unwrap();
    host.put(w.take_files(), part_bytes);
    assert!(w.open_uploads().is_empty());
    assert!(
        host.open.is_empty(),
        "uploads left open: {:?}",
        host.open.keys()
    );
    (host, messages)
}

#[test]
fn append_files_streamed_in_parts_equal_the_unstreamed_files() {
    for (format, options) in [
        ("avro", vec![]),
        ("orc", vec![("orc.stripe.size", "64kb")]),
        ("parquet", vec![("parquet.block.size", "64kb")]),
    ] {
        let mut opts = vec![
            ("bucket", "-1"),
            ("file.format", format),
            ("target-file-size", "512kb"),
        ];
        opts.extend(options);
        let schema = kv_schema(None, false, &opts);
        let (whole, whole_messages) = run(&schema, 40, usize::MAX, false);
        let (streamed, messages) = run(&schema, 40, 64 << 10, false);
        assert_eq!(whole.parts, 0, "{format}");
        assert!(streamed.parts > 10, "{format}: {} parts", streamed.parts);
        assert!(
            whole.files.len() > 1,
            "{format}: {} files",
            whole.files.len()
        );
        assert_eq!(
            streamed.files.keys().collect::<Vec<_>>(),
            whole.files.keys().collect::<Vec<_>>(),
            "{format}"
        );
        for (path, bytes) in &whole.files {
            assert!(streamed.files[path] == *bytes, "{format}: {path} differs");
        }
        assert_eq!(messages, whole_messages, "{format}");
        let sizes: Vec<i64> = messages[0]
            .data_increment
            .new_files
            .iter()
            .map(|f| f.file_size)
            .collect();
        let actual: Vec<i64> = messages[0]
            .data_increment
            .new_files
            .iter()
            .map(|f| whole.files[&format!("bucket-0/{}", f.file_name)].len() as i64)
            .collect();
        assert_eq!(sizes, actual, "{format}: file sizes in the metadata");
    }
}

#[test]
fn primary_key_flush_driven_a_step_at_a_time_gives_the_same_files() {
    for format in ["parquet", "orc", "avro"] {
        let schema = kv_schema(
            None,
            true,
            &[
                ("bucket", "3"),
                ("file.format", format),
                ("parquet.block.size", "64kb"),
                ("orc.stripe.size", "64kb"),
                ("write-buffer-size", "4mb"),
                ("target-file-size", "2mb"),
                ("changelog-producer", "input"),
            ],
        );
        let (whole, whole_messages) = run(&schema, 30, usize::MAX, false);
        let (driven, messages) = run(&schema, 30, 128 << 10, true);
        assert_eq!(whole.parts, 0, "{format}");
        assert!(driven.parts > 0, "{format}: no parts");
        assert!(
            driven.takes_during_flush > 3,
            "{format}: {} takes during flushes",
            driven.takes_during_flush
        );
        assert!(
            driven.largest_take * 4 < whole.largest_take,
            "{format}: largest take {} streamed, {} whole",
            driven.largest_take,
            whole.largest_take
        );
        assert_eq!(
            driven.files.keys().collect::<Vec<_>>(),
            whole.files.keys().collect::<Vec<_>>(),
            "{format}"
        );
        for (path, bytes) in &whole.files {
            assert!(driven.files[path] == *bytes, "{format}: {path} differs");
        }
        assert_eq!(messages, whole_messages, "{format}");
    }
}

/// A BLOB table's input: `k` and a blob of 8 KiB that compresses poorly; with `references`,
/// every seventh row of batches 1, 11, 21, … is a blob descriptor of 20,000 bytes of
/// `file:/src/big.bin` (so files that already sent parts take references: their rest is a
/// streamed file with copies).
fn blob_batch(b: usize, rows: usize, references: bool) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("k", ArrowType::Int32, false),
        Field::new("b", ArrowType::LargeBinary, true),
    ]);
    let keys: Vec<i32> = (0..rows).map(|i| (b * rows + i) as i32).collect();
    let blobs: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| {
            if references && b % 10 == 1 && k % 7 == 3 {
                let offset = (*k as i64 * 131) % 50_000;
                return crate::format::blob_descriptor::BlobDescriptor::new(
                    "file:/src/big.bin",
                    offset,
                    20_000,
                )
                .serialize();
            }
            let mut x = (*k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            (0..1024)
                .flat_map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x.to_le_bytes()
                })
                .collect()
        })
        .collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(keys)),
        Arc::new(arrow_array::LargeBinaryArray::from_iter_values(
            blobs.iter().map(Vec::as_slice),
        )),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

/// Write `batches` blob batches through a writer of `schema` with parts of `part_bytes`, and
/// put every file into a memory store (streamed files in parts of 64 KiB). Returns the
/// store's objects (the source object aside), the messages, and how many parts and rests the
/// writer handed out, and how many of them were streamed rests.
fn run_blobs(
    schema: &TableSchema,
    batches: usize,
    references: bool,
    part_bytes: usize,
) -> (
    BTreeMap<String, bytes::Bytes>,
    Vec<CommitMessage>,
    (usize, usize),
) {
    let mut store = crate::io::MemoryStore::new();
    let source: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    store
        .objects
        .insert("file:/src/big.bin".into(), bytes::Bytes::from(source));
    let mut w = TableWrite::try_new(
        schema.clone(),
        WriteRestore::default(),
        WriteOptions {
            seed: 5,
            time_millis: 1_000,
        },
    )
    .unwrap()
    .with_table_uri("file:/t")
    .with_put_part_bytes(part_bytes);
    let (mut streamed, mut rests) = (0, 0);
    let mut put = |store: &mut crate::io::MemoryStore, files: Vec<FileToPut>| {
        for f in files {
            match f.content {
                FileContent::Part(_) => streamed += 1,
                FileContent::StreamedRest { .. } => {
                    streamed += 1;
                    rests += 1;
                }
                _ => {}
            }
            let written = store.run(crate::io::put_file_machine(f, 64 << 10)).unwrap();
            assert_eq!(written, vec![true]);
        }
    };
    for b in 0..batches {
        w.write(&blob_batch(b, 200, references)).unwrap();
        put(&mut store, w.take_files());
        while w.continue_flush().unwrap() {
            put(&mut store, w.take_files());
        }
    }
    let messages = w.prepare_commit().unwrap();
    put(&mut store, w.take_files());
    assert!(store.uploads.is_empty(), "uploads left open");
    store.objects.remove("file:/src/big.bin");
    (store.objects, messages, (streamed, rests))
}

#[test]
fn blob_files_and_managed_packs_streamed_in_parts_equal_the_unstreamed_ones() {
    let blob_fields = |primary_key: bool, options: &[(&str, &str)]| {
        let mut s = kv_schema(None, primary_key, options);
        s.fields[1] = DataField::new(1, "b", DataType::parse_sql("BLOB").unwrap());
        s
    };
    let cases = [
        // Append `.blob` files (row tracking, as Java requires for BLOB columns).
        (
            "append",
            blob_fields(
                false,
                &[
                    ("bucket", "-1"),
                    ("row-tracking.enabled", "true"),
                    ("data-evolution.enabled", "true"),
                    ("blob.target-file-size", "3mb"),
                ],
            ),
        ),
        // Managed packs of a primary-key table.
        (
            "managed",
            blob_fields(true, &[("bucket", "2"), ("blob.target-file-size", "3mb")]),
        ),
    ];
    for (what, schema) in cases {
        for references in [false, true] {
            let (whole, whole_messages, (none, _)) = run_blobs(&schema, 20, references, usize::MAX);
            let (objects, messages, (streamed, rests)) =
                run_blobs(&schema, 20, references, 256 << 10);
            assert_eq!(none, 0, "{what}");
            assert!(
                streamed > 10,
                "{what} {references}: {streamed} streamed pieces"
            );
            if references {
                assert!(rests > 0, "{what}: no streamed rest");
            }
            assert_eq!(
                objects.keys().collect::<Vec<_>>(),
                whole.keys().collect::<Vec<_>>(),
                "{what} {references}"
            );
            for (path, bytes) in &whole {
                assert!(
                    objects[path] == *bytes,
                    "{what} {references}: {path} differs"
                );
            }
            assert_eq!(messages, whole_messages, "{what} {references}");
        }
    }
}
