//! Data-file readers against the pypaimon corpus (`conformance/tables`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use paimon_kernel::format::data_file::{DataFileReader, FileFormat, decode_data_file};
use paimon_kernel::io::{Io, IoOp, Machine, MemoryStore, Step};
use paimon_kernel::types::{cast_batch_to, paimon_to_arrow_schema};
use serde_json::Value;

use crate::canonical::{corpus_dir, parse_fields, render_batch};

/// Formats whose readers are implemented.
const LANDED: &[FileFormat] = &[FileFormat::Parquet, FileFormat::Orc, FileFormat::Avro];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if ![
                "manifest",
                "schema",
                "snapshot",
                "index",
                "tag",
                "changelog",
            ]
            .contains(&name.as_str())
            {
                walk(&p, out);
            }
        } else if FileFormat::from_path(&p.to_string_lossy()).is_some_and(|f| LANDED.contains(&f)) {
            out.push(p);
        }
    }
}

/// Every Parquet, ORC and Avro data file of the corpus.
fn corpus_data_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(&corpus_dir().join("corpus.db"), &mut out);
    out
}

fn decode_file(
    path: &Path,
    projection: Option<&[String]>,
) -> paimon_kernel::Result<paimon_kernel::format::data_file::DecodedDataFile> {
    let bytes = Bytes::from(std::fs::read(path).unwrap());
    let format = FileFormat::from_path(&path.to_string_lossy()).unwrap();
    decode_data_file(bytes, &path.to_string_lossy(), format, projection, 0)
}

#[test]
fn every_corpus_data_file_decodes() {
    let files = corpus_data_files();
    let mut by_format = std::collections::BTreeMap::new();
    for path in &files {
        let decoded = decode_file(path, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rows: usize = decoded.batches.iter().map(|b| b.num_rows()).sum();
        for b in &decoded.batches {
            assert_eq!(b.schema(), decoded.file_schema, "{}", path.display());
        }
        let ext = path.extension().unwrap().to_string_lossy().to_string();
        *by_format.entry(ext).or_insert(0usize) += 1;
        assert!(rows > 0, "{}: no rows", path.display());
    }
    eprintln!("decoded corpus data files by format: {by_format:?}");
    assert!(
        by_format.get("parquet").copied().unwrap_or(0) > 100,
        "{by_format:?}"
    );
}

/// Whether every data file of the expected table's latest snapshot ends with `suffix`.
fn file_name_ends(expected: &Value, suffix: &str) -> bool {
    let files = expected["files"].as_array().unwrap();
    !files.is_empty()
        && files
            .iter()
            .all(|f| f["file_path"].as_str().unwrap().ends_with(suffix))
}

fn load_expected(table: &str) -> Value {
    let text =
        std::fs::read_to_string(corpus_dir().join(format!("{table}.expected.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Decode the latest snapshot's files of a simple append table (no deletes, one schema) and
/// compare with `rows` as multisets.
fn check_append_table(table: &str) {
    check_append_table_with_known_failures(table, &[]);
}

/// As [`check_append_table`], except that the files named in `known` (file name prefix, error
/// text) must fail with that error; the rows of the other files must then be a sub-multiset of
/// the expected rows.
fn check_append_table_with_known_failures(table: &str, known: &[(&str, &str)]) {
    let expected = load_expected(table);
    let fields = parse_fields(&expected["fields"]);
    let target = paimon_to_arrow_schema(&fields).unwrap();
    let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
    let table_dir = corpus_dir().join(expected["path"].as_str().unwrap());
    let mut got = Vec::new();
    let mut failed = 0;
    for f in expected["files"].as_array().unwrap() {
        assert!(f["partition"].is_null(), "simple tables only");
        let file_name = f["file_path"].as_str().unwrap();
        let path = table_dir
            .join(format!("bucket-{}", f["bucket"]))
            .join(file_name);
        let decoded = decode_file(&path, Some(&names));
        if let Some((_, text)) = known
            .iter()
            .find(|(prefix, _)| file_name.starts_with(prefix))
        {
            let err = decoded
                .expect_err("known failure now decodes: update the test")
                .to_string();
            assert!(err.contains(text) && err.contains(file_name), "{err}");
            failed += 1;
            continue;
        }
        let decoded = decoded.unwrap_or_else(|e| panic!("{e}"));
        for batch in &decoded.batches {
            let cast = cast_batch_to(batch, &target, &path.to_string_lossy())
                .unwrap_or_else(|e| panic!("{table}: {e}"));
            got.extend(render_batch(&cast));
        }
    }
    // The format decoder gives what the file stores; the table read right-trims CHAR values of
    // ORC files (Java's ORC read schema comes from the table type), and the expected rows are
    // that read: pypaimon stores CHAR as a plain ORC string, with its spaces.
    if file_name_ends(&expected, ".orc") {
        for f in fields
            .iter()
            .filter(|f| f.data_type.to_string().starts_with("CHAR("))
        {
            for row in &mut got {
                if let Some(Value::String(s)) = row.get_mut(f.name.as_str()) {
                    *s = s.trim_end_matches(' ').to_owned();
                }
            }
        }
    }
    assert_eq!(failed, known.len());
    let want = expected["rows"].as_array().unwrap().clone();
    if known.is_empty() {
        assert_eq!(got.len(), want.len(), "{table}: row count");
    }
    assert!(!got.is_empty());
    let mut remaining = want.clone();
    for row in &got {
        match remaining.iter().position(|r| r == row) {
            Some(i) => {
                remaining.swap_remove(i);
            }
            None => {
                // Show the expected row with the same first column for a readable failure.
                let first = fields[0].name.as_str();
                let near: Vec<_> = want.iter().filter(|r| r[first] == row[first]).collect();
                panic!("{table}: decoded row not expected:\n  got  {row}\n  want {near:?}");
            }
        }
    }
}

/// pyarrow's ORC writer stores 1969-12-31T23:59:59.999 as (seconds 0, nanos -1 ms) with a
/// negative nanos field; released orc-rust 0.9 reads the nanos as unsigned (an overflow error,
/// or 1954-01-06T17:59:02.298581532 read 2^61 ns late). The vendored patch fixes it.
#[test]
fn all_types_orc_rows_match_expected() {
    check_append_table("all_types_orc");
}

macro_rules! append_table_cases {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            check_append_table(stringify!($name));
        }
    )*};
}

mod rows_match_expected {
    use super::check_append_table;
    append_table_cases!(
        codec_parquet_snappy,
        codec_parquet_gzip,
        codec_parquet_none,
        append_parquet,
        all_types_parquet,
        variant_parquet,
        codec_orc_zlib,
        codec_orc_snappy,
        codec_orc_lz4,
        append_orc,
        codec_avro_snappy,
        codec_avro_deflate,
        codec_avro_null,
        append_avro,
        all_types_avro,
    );
}

/// A host that answers from a [`MemoryStore`] and records every round.
fn run_recording<T: Send + 'static>(
    store: &mut MemoryStore,
    mut machine: Machine<T>,
) -> (Vec<T>, Vec<Vec<IoOp>>) {
    let mut rounds = Vec::new();
    let mut out = Vec::new();
    loop {
        match machine.step().unwrap() {
            Step::NeedIo(round) => {
                rounds.push(round.iter().map(|r| r.op.clone()).collect());
                for req in round {
                    let answer = store.answer(&req.op);
                    machine.provide(req.id, answer).unwrap();
                }
            }
            Step::Emit(item) => out.push(item),
            Step::Work(items) => items.into_iter().for_each(|w| w.run()),
            Step::Wait => {}
            Step::Done => return (out, rounds),
        }
    }
}

#[test]
fn parquet_projection_reads_only_needed_ranges() {
    let expected = load_expected("all_types_parquet");
    let table_dir = corpus_dir().join(expected["path"].as_str().unwrap());
    let file = &expected["files"][0];
    let local = table_dir
        .join("bucket-0")
        .join(file["file_path"].as_str().unwrap());
    let bytes = Bytes::from(std::fs::read(&local).unwrap());
    let size = bytes.len() as u64;

    // Column chunk ranges, computed independently from the full file.
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&bytes)
        .unwrap();
    let chunk_ranges = |name: &str| -> Vec<std::ops::Range<u64>> {
        meta.row_groups()
            .iter()
            .flat_map(|rg| rg.columns().iter())
            .filter(|c| c.column_path().parts()[0] == name)
            .map(|c| {
                let (s, l) = c.byte_range();
                s..s + l
            })
            .collect()
    };
    let projected = [
        "t_string".to_string(),
        "id".to_string(),
        "t_map_int_arr".to_string(),
    ];
    let mut allowed: Vec<_> = projected.iter().flat_map(|n| chunk_ranges(n)).collect();
    allowed.sort_by_key(|r| r.start);
    assert!(allowed.len() >= 4, "map column has key and value chunks");

    let mut store = MemoryStore::new();
    store.objects.insert("data.parquet".into(), bytes.clone());
    let proj = projected.to_vec();
    let machine = Machine::new("read", move |io: Io<arrow_array::RecordBatch>| async move {
        let mut r = DataFileReader::open(
            &io,
            "data.parquet",
            size,
            FileFormat::Parquet,
            Some(&proj),
            0,
        )
        .await?;
        while let Some(b) = r.next_batch(&io).await? {
            io.emit(b);
        }
        Ok(())
    });
    let (batches, rounds) = run_recording(&mut store, machine);
    assert_eq!(batches.len(), 1);
    let schema = batches[0].schema();
    let names: Vec<_> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        ["t_string", "id", "t_map_int_arr"],
        "projection order"
    );

    // Round 1: one suffix read of at most 64 KiB ending at the file size. The file is smaller
    // than that, so the projected chunks are decoded from it: no further round.
    assert_eq!(rounds[0].len(), 1);
    let IoOp::Read { range: Some(r), .. } = &rounds[0][0] else {
        panic!("{:?}", rounds[0])
    };
    assert_eq!(r.end, size);
    assert_eq!(r.start, size.saturating_sub(64 * 1024));
    assert!(size < 64 * 1024);
    assert_eq!(rounds.len(), 1, "{rounds:?}");
}

/// A file larger than the footer prefetch: after the suffix, one round per row group with
/// exactly the projected column chunks that the suffix does not hold.
#[test]
fn parquet_projection_reads_only_projected_chunks_per_row_group() {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Utf8, true),
        Field::new("c", DataType::Int64, false),
    ]));
    let n = 40_000i64;
    let a: Vec<i64> = (0..n)
        .map(|i| i.wrapping_mul(0x1E37_79B9_7F4A_7C15))
        .collect();
    let b: Vec<Option<String>> = (0..n)
        .map(|i| (i % 3 != 0).then(|| format!("s{}", i * 7919)))
        .collect();
    let c: Vec<i64> = (0..n).map(|i| i * 3).collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(a)) as ArrayRef,
            Arc::new(StringArray::from(b)),
            Arc::new(Int64Array::from(c)),
        ],
    )
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(15_000))
        .set_compression(parquet::basic::Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false)
        .build();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let bytes = Bytes::from(buf);
    let size = bytes.len() as u64;
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&bytes)
        .unwrap();
    assert_eq!(meta.num_row_groups(), 3);
    let suffix = size - 64 * 1024..size;
    let (batches, rounds) = read_recorded(
        bytes,
        FileFormat::Parquet,
        Some(vec!["c".into(), "a".into()]),
        0,
    );
    assert_eq!(read_ranges_of(&rounds[0]), vec![suffix.clone()]);
    let mut expected_rounds = Vec::new();
    for rg in meta.row_groups() {
        let mut chunks: Vec<_> = rg
            .columns()
            .iter()
            .filter(|c| ["a", "c"].contains(&c.column_path().parts()[0].as_str()))
            .map(|c| {
                let (s, l) = c.byte_range();
                s..s + l
            })
            .filter(|r| !(suffix.start <= r.start && r.end <= suffix.end))
            .collect();
        chunks.sort_by_key(|r| r.start);
        if !chunks.is_empty() {
            expected_rounds.push(chunks);
        }
    }
    let got_rounds: Vec<_> = rounds[1..]
        .iter()
        .map(|r| {
            let mut v = read_ranges_of(r);
            v.sort_by_key(|r| r.start);
            v
        })
        .collect();
    assert_eq!(got_rounds, expected_rounds);
    let mut next = 0i64;
    for b in &batches {
        assert_eq!(b.schema().field(0).name(), "c");
        let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let a = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            assert_eq!(c.value(i), next * 3);
            assert_eq!(a.value(i), next.wrapping_mul(0x1E37_79B9_7F4A_7C15));
            next += 1;
        }
    }
    assert_eq!(next, n);
}

#[test]
fn parquet_footer_larger_than_prefetch_takes_a_second_read() {
    // A file whose footer metadata exceeds 64 KiB: many columns with long names.
    use arrow_array::{ArrayRef, Int32Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    let fields: Vec<Field> = (0..700)
        .map(|i| {
            Field::new(
                format!("column_with_a_rather_long_name_{i:04}_{}", "x".repeat(40)),
                DataType::Int32,
                true,
            )
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let columns: Vec<ArrayRef> = (0..700)
        .map(|i| Arc::new(Int32Array::from(vec![i, i + 1])) as ArrayRef)
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let meta_len = u32::from_le_bytes(buf[buf.len() - 8..buf.len() - 4].try_into().unwrap());
    assert!(meta_len > 64 * 1024, "metadata {meta_len} bytes");
    let size = buf.len() as u64;
    let mut store = MemoryStore::new();
    store.objects.insert("f.parquet".into(), Bytes::from(buf));
    let proj = vec!["column_with_a_rather_long_name_0007_".to_string() + &"x".repeat(40)];
    let machine = Machine::new("read", move |io: Io<arrow_array::RecordBatch>| async move {
        let mut r =
            DataFileReader::open(&io, "f.parquet", size, FileFormat::Parquet, Some(&proj), 0)
                .await?;
        while let Some(b) = r.next_batch(&io).await? {
            io.emit(b);
        }
        Ok(())
    });
    let (batches, rounds) = run_recording(&mut store, machine);
    assert_eq!(rounds.len(), 3, "suffix, rest of footer, one column chunk");
    assert_eq!(rounds[2].len(), 1);
    let col = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap();
    assert_eq!(col.values().to_vec(), vec![7, 8]);
}

#[test]
fn missing_projected_names_are_left_out_and_empty_projection_counts_rows() {
    let expected = load_expected("append_parquet");
    let table_dir = corpus_dir().join(expected["path"].as_str().unwrap());
    let path = table_dir
        .join("bucket-0")
        .join(expected["files"][0]["file_path"].as_str().unwrap());
    let first = expected["fields"][0]["name"].as_str().unwrap().to_string();
    let d = decode_file(&path, Some(&["nope".to_string(), first.clone()])).unwrap();
    assert_eq!(d.schema.fields().len(), 1);
    assert_eq!(d.schema.field(0).name(), &first);
    let rows: usize = d.batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(
        rows as i64,
        expected["files"][0]["record_count"].as_i64().unwrap()
    );
    let d = decode_file(&path, Some(&[])).unwrap();
    let empty_rows: usize = d.batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(empty_rows, rows);
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Truncated and corrupted corpus files give errors naming the file, never panics.
#[test]
fn truncated_and_corrupt_files_are_errors() {
    let mut checked = 0;
    let mut corrupt_ok = 0;
    let mut panics = Vec::new();
    for table in [
        "codec_parquet_snappy",
        "codec_parquet_gzip",
        "codec_parquet_none",
        "append_parquet",
        "all_types_parquet",
        "variant_parquet",
        "codec_orc_zlib",
        "codec_orc_snappy",
        "codec_orc_lz4",
        "append_orc",
        "all_types_orc",
        "pk_dedup_orc",
        "codec_avro_snappy",
        "codec_avro_deflate",
        "codec_avro_null",
        "append_avro",
        "all_types_avro",
        "pk_dedup_avro",
    ] {
        let expected = load_expected(table);
        let table_dir = corpus_dir().join(expected["path"].as_str().unwrap());
        let path = table_dir
            .join("bucket-0")
            .join(expected["files"][0]["file_path"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        let format = FileFormat::from_path(&path.to_string_lossy()).unwrap();
        let name = format!("{table}/data");
        let n = bytes.len();
        // Truncations: the file as stored is shorter than its metadata says.
        for cut in [1, 7, n / 3, n / 2, n - 1] {
            let short = Bytes::copy_from_slice(&bytes[..n - cut]);
            let r = std::panic::catch_unwind(|| decode_data_file(short, &name, format, None, 0));
            match r {
                Ok(Err(e)) => assert!(e.to_string().contains(&name), "{e}"),
                Ok(Ok(_)) => panic!("{table}: truncation by {cut} bytes decoded"),
                Err(p) => panics.push(format!("{table} truncated by {cut}: {}", panic_text(&p))),
            }
            checked += 1;
        }
        // Byte flips at fixed positions: an error or (no checksum) a successful decode, never a panic.
        for k in 1..64 {
            let mut bad = bytes.clone();
            let pos = n * k / 64;
            bad[pos] ^= 0x5a;
            bad[(pos + 1) % n] ^= 0xff;
            let r = std::panic::catch_unwind(|| {
                decode_data_file(Bytes::from(bad), &name, format, None, 0)
            });
            match r {
                Ok(Err(e)) => assert!(e.to_string().contains(&name), "{e}"),
                Ok(Ok(_)) => corrupt_ok += 1,
                Err(p) => panics.push(format!("{table} flipped at {pos}: {}", panic_text(&p))),
            }
            checked += 1;
        }
    }
    eprintln!(
        "{checked} damaged files, {corrupt_ok} flips decoded without error, panics: {panics:?}"
    );
    // Known upstream panic (parquet 59 `BitReader::get_batch` asserts the bit width read from
    // a corrupt RLE/bit-packed run header); everything else must be an error.
    let unexpected: Vec<_> = panics
        .iter()
        .filter(|p| !(p.contains("parquet") && p.contains("num_bits <=")))
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?}");
}

fn read_recorded(
    bytes: Bytes,
    format: FileFormat,
    projection: Option<Vec<String>>,
    batch_size: usize,
) -> (Vec<arrow_array::RecordBatch>, Vec<Vec<IoOp>>) {
    let size = bytes.len() as u64;
    let mut store = MemoryStore::new();
    store.objects.insert("f".into(), bytes);
    let machine = Machine::new("read", move |io: Io<arrow_array::RecordBatch>| async move {
        let mut r =
            DataFileReader::open(&io, "f", size, format, projection.as_deref(), batch_size).await?;
        while let Some(b) = r.next_batch(&io).await? {
            io.emit(b);
        }
        Ok(())
    });
    run_recording(&mut store, machine)
}

fn read_ranges_of(round: &[IoOp]) -> Vec<std::ops::Range<u64>> {
    round
        .iter()
        .map(|op| match op {
            IoOp::Read { range: Some(r), .. } => r.clone(),
            other => panic!("{other:?}"),
        })
        .collect()
}

/// Small batch sizes split row groups / stripes / blocks without changing the rows.
#[test]
fn small_batches_give_the_same_rows() {
    for table in [
        "all_types_parquet",
        "all_types_orc",
        "all_types_avro",
        "pk_dedup_orc",
        "pk_dedup_avro",
    ] {
        let expected = load_expected(table);
        let table_dir = corpus_dir().join(expected["path"].as_str().unwrap());
        for f in expected["files"].as_array().unwrap() {
            let path = table_dir
                .join(format!("bucket-{}", f["bucket"]))
                .join(f["file_path"].as_str().unwrap());
            let bytes = Bytes::from(std::fs::read(&path).unwrap());
            let format = FileFormat::from_path(&path.to_string_lossy()).unwrap();
            let whole = decode_data_file(bytes.clone(), "f", format, None, 0).unwrap();
            let small = decode_data_file(bytes, "f", format, None, 3).unwrap();
            assert!(small.batches.iter().all(|b| b.num_rows() <= 3));
            let rows = |d: &paimon_kernel::format::data_file::DecodedDataFile| {
                d.batches.iter().flat_map(render_batch).collect::<Vec<_>>()
            };
            assert_eq!(rows(&whole), rows(&small), "{table}");
            assert_eq!(
                rows(&whole).len() as i64,
                f["record_count"].as_i64().unwrap(),
                "{table}"
            );
        }
    }
}

/// Primary-key files carry `_KEY_*`, `_SEQUENCE_NUMBER`, `_VALUE_KIND` before the value
/// columns; a projection by name picks them in the requested order, in every format.
#[test]
fn primary_key_system_columns_project_by_name() {
    for table in ["pk_dedup", "pk_dedup_orc", "pk_dedup_avro"] {
        let expected = load_expected(table);
        let table_dir = corpus_dir().join(expected["path"].as_str().unwrap());
        let f = &expected["files"][0];
        let path = table_dir
            .join(format!("bucket-{}", f["bucket"]))
            .join(f["file_path"].as_str().unwrap());
        let d = decode_file(
            &path,
            Some(&["_VALUE_KIND".to_string(), "_SEQUENCE_NUMBER".to_string()]),
        )
        .unwrap();
        let names: Vec<_> = d
            .file_schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert!(names[0].starts_with("_KEY_"), "{table}: {names:?}");
        assert_eq!(
            names[names.iter().position(|n| n == "_SEQUENCE_NUMBER").unwrap() + 1],
            "_VALUE_KIND"
        );
        let got: Vec<_> = d
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(got, ["_VALUE_KIND", "_SEQUENCE_NUMBER"], "{table}");
        let seq = d.batches[0].column(1);
        let seq = arrow_cast::cast(seq, &arrow_schema::DataType::Int64).unwrap();
        let seq = seq
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        let (min, max) = (
            f["min_sequence_number"].as_i64().unwrap(),
            f["max_sequence_number"].as_i64().unwrap(),
        );
        assert!(
            seq.values().iter().all(|s| (min..=max).contains(s)),
            "{table}"
        );
    }
}

/// ORC: one suffix read for the tail, then one read per stripe, each exactly the stripe.
#[test]
fn orc_reads_tail_then_one_range_per_stripe() {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
    ]));
    let mut buf = Vec::new();
    let mut w = orc_rust::ArrowWriterBuilder::new(&mut buf, schema.clone())
        .with_stripe_byte_size(64 * 1024)
        .try_build()
        .unwrap();
    let n = 60_000i64;
    for chunk in 0..6 {
        let a: Vec<i64> = (chunk * n / 6..(chunk + 1) * n / 6).collect();
        let s: Vec<Option<String>> = a
            .iter()
            .map(|v| (v % 7 != 0).then(|| format!("value-{v}")))
            .collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(a)) as ArrayRef,
                Arc::new(StringArray::from(s)),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.flush_stripe().unwrap();
    }
    w.close().unwrap();
    let size = buf.len() as u64;
    let bytes = Bytes::from(buf);
    let (batches, rounds) = read_recorded(
        bytes.clone(),
        FileFormat::Orc,
        Some(vec!["s".into(), "a".into()]),
        0,
    );
    let tail = read_ranges_of(&rounds[0]);
    assert_eq!(tail, vec![size.saturating_sub(64 * 1024)..size]);
    let meta = orc_rust::reader::metadata::read_metadata(&mut bytes.clone()).unwrap();
    let stripes: Vec<_> = meta
        .stripe_metadatas()
        .iter()
        .map(|s| s.offset()..s.offset() + s.index_length() + s.data_length() + s.footer_length())
        .collect();
    assert!(stripes.len() >= 6);
    // Every stripe outside the tail is read, in order, as one range; those inside are not.
    let outside: Vec<_> = stripes
        .iter()
        .filter(|s| s.start < size - 64 * 1024)
        .cloned()
        .collect();
    assert!(outside.len() >= 5, "{stripes:?}");
    let got: Vec<_> = rounds[1..]
        .iter()
        .map(|r| {
            let v = read_ranges_of(r);
            assert_eq!(v.len(), 1);
            v[0].clone()
        })
        .collect();
    assert_eq!(got, outside);
    let mut expect = 0i64;
    for b in &batches {
        assert_eq!(b.schema().field(0).name(), "s");
        let a = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        let s = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..b.num_rows() {
            assert_eq!(a.value(i), expect);
            assert_eq!(arrow_array::Array::is_null(s, i), expect % 7 == 0);
            expect += 1;
        }
    }
    assert_eq!(expect, n);
}

/// Avro: the header window, then one window per 1 MiB of blocks; values survive blocks that
/// straddle window boundaries.
#[test]
fn avro_reads_windows_across_many_blocks() {
    let schema = apache_avro::Schema::parse_str(
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":"long"},{"name":"s","type":["null","string"]},{"name":"m","type":{"type":"map","values":"int"}}]}"#,
    )
    .unwrap();
    let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), apache_avro::Codec::Null);
    let n = 60_000i64;
    for a in 0..n {
        let mut rec = apache_avro::types::Record::new(&schema).unwrap();
        rec.put("a", a);
        let s = if a % 5 == 0 {
            apache_avro::types::Value::Union(0, Box::new(apache_avro::types::Value::Null))
        } else {
            apache_avro::types::Value::Union(
                1,
                Box::new(apache_avro::types::Value::String(format!(
                    "row {a} {}",
                    "x".repeat(20)
                ))),
            )
        };
        rec.put("s", s);
        let mut m = std::collections::HashMap::new();
        m.insert(
            "k".to_string(),
            apache_avro::types::Value::Int((a % 100) as i32),
        );
        rec.put("m", apache_avro::types::Value::Map(m));
        w.append(rec).unwrap();
    }
    let buf = w.into_inner().unwrap();
    let size = buf.len() as u64;
    assert!(size > 3 * 1024 * 1024 / 2, "{size}");
    let (batches, rounds) = read_recorded(Bytes::from(buf), FileFormat::Avro, None, 1000);
    assert_eq!(read_ranges_of(&rounds[0]), vec![0..1024 * 1024]);
    assert!(rounds.iter().all(|r| r.len() == 1));
    let read: u64 = rounds
        .iter()
        .map(|r| read_ranges_of(r)[0].end - read_ranges_of(r)[0].start)
        .sum();
    // Every byte is read about once (a block straddling a window is read again).
    assert!(read < size + size / 4, "read {read} of {size}");
    let mut expect = 0i64;
    for b in &batches {
        let rows = render_batch(b);
        for row in rows {
            assert_eq!(row["a"], expect);
            if expect % 5 == 0 {
                assert!(row["s"].is_null());
            } else {
                assert_eq!(row["s"], format!("row {expect} {}", "x".repeat(20)));
            }
            assert_eq!(row["m"], serde_json::json!([["k", expect % 100]]));
            expect += 1;
        }
    }
    assert_eq!(expect, n);
}

/// Schema evolution over real files: `evo_append` has files of 3 schemas (added, renamed,
/// dropped and re-added columns, INT->BIGINT, FLOAT->DOUBLE). Columns are resolved by field id
/// through each file's own schema, missing ones read as NULL, and `cast_batch_to` converts the
/// rest; the rows must equal the expected rows.
#[test]
fn evolved_files_cast_to_the_latest_schema() {
    use arrow_array::{ArrayRef, RecordBatch, new_null_array};
    let expected = load_expected("evo_append");
    let fields = parse_fields(&expected["fields"]);
    let target = paimon_to_arrow_schema(&fields).unwrap();
    let table_dir = corpus_dir().join(expected["path"].as_str().unwrap());
    let mut got = Vec::new();
    for f in expected["files"].as_array().unwrap() {
        let schema_file = table_dir.join(format!("schema/schema-{}", f["schema_id"]));
        let file_schema: Value =
            serde_json::from_str(&std::fs::read_to_string(schema_file).unwrap()).unwrap();
        let file_fields = parse_fields(&file_schema["fields"]);
        // Target field -> name of the same field id in the file's schema.
        let names: Vec<Option<String>> = fields
            .iter()
            .map(|t| {
                file_fields
                    .iter()
                    .find(|ff| ff.id == t.id)
                    .map(|ff| ff.name.clone())
            })
            .collect();
        let projection: Vec<String> = names.iter().flatten().cloned().collect();
        let path = table_dir
            .join(format!("bucket-{}", f["bucket"]))
            .join(f["file_path"].as_str().unwrap());
        let decoded = decode_file(&path, Some(&projection)).unwrap();
        for batch in &decoded.batches {
            let mut k = 0;
            let columns: Vec<ArrayRef> = names
                .iter()
                .zip(target.fields())
                .map(|(n, t)| match n {
                    Some(_) => {
                        k += 1;
                        batch.column(k - 1).clone()
                    }
                    None => new_null_array(t.data_type(), batch.num_rows()),
                })
                .collect();
            let file_batch = RecordBatch::try_new_with_options(
                Arc::new(arrow_schema::Schema::new(
                    columns
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            arrow_schema::Field::new(format!("c{i}"), c.data_type().clone(), true)
                        })
                        .collect::<Vec<_>>(),
                )),
                columns,
                &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
            )
            .unwrap();
            let cast = cast_batch_to(&file_batch, &target, &path.to_string_lossy()).unwrap();
            got.extend(render_batch(&cast));
        }
    }
    let mut want = expected["rows"].as_array().unwrap().clone();
    assert_eq!(got.len(), want.len());
    for row in &got {
        let i = want
            .iter()
            .position(|w| w == row)
            .unwrap_or_else(|| panic!("unexpected row {row}"));
        want.swap_remove(i);
    }
}

/// A `file_size` larger than the stored object (stale or wrong metadata) is an IO error naming
/// the file, in every format.
#[test]
fn file_size_beyond_the_object_is_an_error() {
    for table in ["append_parquet", "append_orc", "append_avro"] {
        let expected = load_expected(table);
        let table_dir = corpus_dir().join(expected["path"].as_str().unwrap());
        let path = table_dir
            .join("bucket-0")
            .join(expected["files"][0]["file_path"].as_str().unwrap());
        let bytes = Bytes::from(std::fs::read(&path).unwrap());
        let format = FileFormat::from_path(&path.to_string_lossy()).unwrap();
        let size = bytes.len() as u64 + 100;
        let mut store = MemoryStore::new();
        store.objects.insert("t/f".into(), bytes);
        let machine = Machine::new("read", move |io: Io<()>| async move {
            let mut r = DataFileReader::open(&io, "t/f", size, format, None, 0).await?;
            while r.next_batch(&io).await?.is_some() {}
            Ok(())
        });
        let err = store.run(machine).unwrap_err().to_string();
        assert!(err.contains("t/f"), "{table}: {err}");
    }
}

/// Drive `machine` over `store`, running [`Step::Work`] items on their own threads and
/// joining them only when the machine waits; returns what it emitted and the work items.
fn run_threaded<T: Send + 'static>(
    store: &mut MemoryStore,
    mut machine: Machine<T>,
) -> (Vec<T>, usize) {
    let (mut out, mut running, mut items) = (Vec::new(), std::collections::VecDeque::new(), 0);
    loop {
        match machine.step().unwrap() {
            Step::NeedIo(round) => {
                for req in round {
                    let answer = store.answer(&req.op);
                    machine.provide(req.id, answer).unwrap();
                }
            }
            Step::Emit(item) => out.push(item),
            Step::Work(work) => {
                for w in work {
                    items += 1;
                    running.push_back(std::thread::spawn(move || w.run()));
                }
            }
            Step::Wait => running.pop_front().expect("work running").join().unwrap(),
            Step::Done => return (out, items),
        }
    }
}

/// With parallel work, a Parquet file is decoded as column groups on other threads, one batch
/// ahead: the batches (sizes, values, projection order) equal those of one decoder inline.
#[test]
fn parquet_column_groups_decode_like_one_decoder() {
    use arrow_array::builder::{Int32Builder, ListBuilder};
    use arrow_array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    let n: i64 = 300_000;
    let mut lists = ListBuilder::new(Int32Builder::new());
    for i in 0..n {
        if i % 11 == 0 {
            lists.append_null();
        } else {
            for j in 0..(i % 4) {
                lists.values().append_value((i * 31 + j) as i32);
            }
            lists.append(true);
        }
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Utf8, true),
        Field::new("c", DataType::Int64, false),
        Field::new(
            "d",
            DataType::List(Arc::new(Field::new_list_field(DataType::Int32, true))),
            true,
        ),
        Field::new("e", DataType::Boolean, true),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| i.wrapping_mul(0x1E37_79B9_7F4A_7C15)),
            )) as ArrayRef,
            Arc::new(StringArray::from_iter((0..n).map(|i| {
                (i % 5 != 0).then(|| format!("{:x}", i.wrapping_mul(7919)))
            }))),
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 3))),
            Arc::new(lists.finish()),
            Arc::new(BooleanArray::from_iter(
                (0..n).map(|i| (i % 7 != 0).then_some(i % 3 == 0)),
            )),
        ],
    )
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(110_000))
        .set_compression(parquet::basic::Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false)
        .build();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let bytes = Bytes::from(buf);
    let size = bytes.len() as u64;
    let projection: Vec<String> = ["e", "b", "a", "d"].iter().map(|s| s.to_string()).collect();
    let machine = |parallelism: usize| {
        let projection = projection.clone();
        Machine::new("read", move |io: Io<RecordBatch>| async move {
            let mut r =
                DataFileReader::open(&io, "f", size, FileFormat::Parquet, Some(&projection), 4096)
                    .await?;
            while let Some(b) = r.next_batch(&io).await? {
                io.emit(b);
            }
            Ok(())
        })
        .with_parallelism(parallelism)
    };
    let mut store = MemoryStore::new();
    store.objects.insert("f".into(), bytes);
    let inline = store.run(machine(1)).unwrap();
    let (parallel, items) = run_threaded(&mut store, machine(3));
    // 3 row groups of 110,000 / 110,000 / 80,000 rows in batches of at most 4,096.
    let sizes: Vec<usize> = inline.iter().map(RecordBatch::num_rows).collect();
    assert_eq!(sizes.len(), 27 + 27 + 20);
    assert_eq!(sizes.iter().sum::<usize>(), n as usize);
    assert_eq!(
        parallel
            .iter()
            .map(RecordBatch::num_rows)
            .collect::<Vec<_>>(),
        sizes
    );
    assert_eq!(inline, parallel);
    let all = arrow_select::concat::concat_batches(&parallel[0].schema(), &parallel).unwrap();
    let expected = batch.project(&[4, 1, 0, 3]).unwrap();
    assert_eq!(all.columns(), expected.columns());
    // Three column groups (a, b, c+d+e by size), each decoding every row group in chunks
    // of about 2 MiB: at least one work item per group and row group.
    assert!(items >= 3 * 3, "{items} work items");
}
