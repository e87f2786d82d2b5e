//! The input of `paimon-kernel write` and `update`: rows from an Arrow IPC stream or file, a
//! Parquet file, CSV or JSON lines, streamed as Arrow record batches. The parsing is the
//! core's ([`paimon_kernel::canonical::input`], which documents the formats); this module
//! opens the input and hands its bytes over:
//!
//! * a file is read where it lies: CSV and JSON lines through a buffered reader, Parquet by
//!   seeking to the ranges the core's reader asks for, an Arrow IPC file (`ARROW1` magic) by
//!   seeking to its footer, an Arrow IPC stream as it comes;
//! * `-` is stdin, an Arrow IPC stream by default. Parquet and an Arrow IPC file on stdin are
//!   read into memory first (both need their footer).
//!
//! Errors name the input (the path, or `stdin`) and, for CSV and JSON lines, the line.
//!
//! Round trip: `scan --format jsonl` reads back to the same values (NaN and infinite floats
//! cannot be written as JSON lines). `scan --format csv` reads back for columns of scalar types,
//! except that it writes empty strings and empty binaries like NULL (an empty unquoted cell):
//! they come back as NULL. Its nested columns are Arrow's display text (`{k: v}`, strings
//! unquoted), which is not JSON and does not read back.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
pub(crate) use paimon_kernel::canonical::input::InputFormat;
use paimon_kernel::canonical::input::{
    ARROW_FILE_MAGIC, arrow_ipc_batches, csv_batches, input_error, jsonl_batches, parquet_batches,
};
use paimon_kernel::io::IoErrorKind;
use paimon_native::{Error, Result};

/// The batches of an input, in order.
pub(crate) type Batches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

/// The format named `name` (`arrow`, `ipc`, `arrows`, `parquet`, `csv`, `jsonl`, `ndjson`,
/// `json`; any case; see [`InputFormat::from_name`]).
///
/// # Errors
/// Another name, listing the accepted ones.
pub(crate) fn input_format(name: &str) -> Result<InputFormat> {
    InputFormat::from_name(name).ok_or_else(|| {
        Error::kernel(
            "input format",
            paimon_kernel::Error::invalid(format!(
                "unknown input format {name:?} (arrow, parquet, csv or jsonl)"
            )),
        )
    })
}

/// The rows of `source` (a file path, or `-` for stdin) as record batches for a table whose
/// input columns are `schema` (the table's columns, maybe with a `_ROW_KIND` column).
/// `format` defaults to the file extension's, and to an Arrow IPC stream for `-`.
///
/// CSV and JSON lines come back in exactly `schema`; Arrow and Parquet in the input's own
/// types. See the module docs.
///
/// # Errors
/// When the input cannot be opened, its format cannot be told, its header or schema has a
/// column `schema` does not have, or it is not valid in its format. The iterator's errors name
/// the input and (CSV, JSON lines) the line; the iterator ends after one.
pub(crate) fn read_input(
    source: &str,
    format: Option<InputFormat>,
    schema: &SchemaRef,
) -> Result<Batches> {
    let input = Input::new(source);
    let format = match format {
        Some(f) => f,
        None if input.is_stdin() => InputFormat::Arrow,
        None => InputFormat::from_path(source).ok_or_else(|| {
            input.error(paimon_kernel::Error::invalid(
                "cannot tell the format from the file extension (.arrow, .parquet, .csv, \
                 .jsonl); give the format",
            ))
        })?,
    };
    match format {
        InputFormat::Arrow => arrow_input(input, schema),
        InputFormat::Parquet => parquet_input(input, schema),
        InputFormat::Csv => {
            let reader = input.open_buffered()?;
            let rows = csv_batches(input.name(), reader, Arc::clone(schema))
                .map_err(|e| input.core_error(e))?;
            Ok(input.batches(rows))
        }
        InputFormat::Jsonl => {
            let reader = input.open_buffered()?;
            let rows = jsonl_batches(input.name(), reader, Arc::clone(schema));
            Ok(input.batches(rows))
        }
    }
}

/// Where the rows come from, and how errors name it.
struct Input {
    /// The path, or `None` for stdin.
    path: Option<String>,
}

impl Input {
    fn new(source: &str) -> Self {
        Input {
            path: (source != "-").then(|| source.to_string()),
        }
    }

    fn is_stdin(&self) -> bool {
        self.path.is_none()
    }

    fn name(&self) -> &str {
        self.path.as_deref().unwrap_or("stdin")
    }

    /// `source` as an error of this input (the core's wording: `reading input NAME: ...`).
    fn error(&self, source: paimon_kernel::Error) -> Error {
        self.core_error(input_error(self.name(), None, source))
    }

    /// An error of the core's input readers, whose context names the input (and line), as
    /// this host's error with that context.
    fn core_error(&self, e: paimon_kernel::Error) -> Error {
        from_core(self.name(), e)
    }

    fn io_error(&self, e: &std::io::Error) -> Error {
        let kind = match e.kind() {
            std::io::ErrorKind::NotFound => IoErrorKind::NotFound,
            _ => IoErrorKind::Other,
        };
        self.error(paimon_kernel::Error::io(self.name(), kind, e.to_string()))
    }

    fn open(&self) -> Result<Box<dyn Read + Send>> {
        match &self.path {
            None => Ok(Box::new(std::io::stdin())),
            Some(p) => Ok(Box::new(File::open(p).map_err(|e| self.io_error(&e))?)),
        }
    }

    fn open_buffered(&self) -> Result<Box<dyn BufRead + Send>> {
        Ok(Box::new(BufReader::with_capacity(1 << 16, self.open()?)))
    }

    /// `rows` (one of the core's readers over this input) with this host's errors.
    fn batches<I>(&self, rows: I) -> Batches
    where
        I: Iterator<Item = paimon_kernel::Result<RecordBatch>> + Send + 'static,
    {
        let name = self.name().to_string();
        Box::new(rows.map(move |r| r.map_err(|e| from_core(&name, e))))
    }
}

/// An error of the core's input readers as this host's error: the core's context (`reading
/// input NAME, line N`) becomes this host's, so the text stays `CONTEXT: CAUSE`.
fn from_core(name: &str, e: paimon_kernel::Error) -> Error {
    match e {
        paimon_kernel::Error::Context { context, source } => Error::kernel(context, *source),
        e => Error::kernel(format!("reading input {name}"), e),
    }
}

// --- Arrow IPC ---

fn arrow_input(input: Input, schema: &SchemaRef) -> Result<Batches> {
    let arrow_err = |input: &Input, e| input.error(paimon_kernel::Error::arrow("Arrow IPC", e));
    let mut reader = input.open()?;
    let mut magic = Vec::with_capacity(ARROW_FILE_MAGIC.len());
    (&mut reader)
        .take(ARROW_FILE_MAGIC.len() as u64)
        .read_to_end(&mut magic)
        .map_err(|e| input.io_error(&e))?;
    if magic == ARROW_FILE_MAGIC {
        // The IPC file format: its footer is at the end. A file is read where it lies; stdin
        // has to be held in memory.
        let file: Box<dyn ReadSeek> = match &input.path {
            Some(p) => {
                let mut f = File::open(p).map_err(|e| input.io_error(&e))?;
                f.seek(SeekFrom::Start(0)).map_err(|e| input.io_error(&e))?;
                Box::new(BufReader::new(f))
            }
            None => {
                let mut all = magic;
                reader
                    .read_to_end(&mut all)
                    .map_err(|e| input.io_error(&e))?;
                Box::new(Cursor::new(all))
            }
        };
        let r =
            arrow_ipc::reader::FileReader::try_new(file, None).map_err(|e| arrow_err(&input, e))?;
        let rows = arrow_ipc_batches(input.name(), r, schema).map_err(|e| input.core_error(e))?;
        return Ok(input.batches(rows));
    }
    let stream = BufReader::with_capacity(1 << 16, Cursor::new(magic).chain(reader));
    let r = arrow_ipc::reader::StreamReader::try_new(stream, None).map_err(|e| {
        if input.is_stdin() {
            input.error(paimon_kernel::Error::arrow(
                "Arrow IPC stream (the default for stdin; other input needs --format csv, \
                 jsonl or parquet)",
                e,
            ))
        } else {
            arrow_err(&input, e)
        }
    })?;
    let rows = arrow_ipc_batches(input.name(), r, schema).map_err(|e| input.core_error(e))?;
    Ok(input.batches(rows))
}

trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

// --- Parquet ---

/// The bytes of a Parquet input: the file, or stdin read into memory.
enum ParquetBytes {
    File(File),
    Memory(Bytes),
}

impl ParquetBytes {
    /// The bytes of `range`, which the core checked to lie inside the input.
    fn read(&mut self, range: Range<u64>) -> std::io::Result<Bytes> {
        match self {
            ParquetBytes::Memory(b) => Ok(b.slice(range.start as usize..range.end as usize)),
            ParquetBytes::File(f) => {
                let mut buf = vec![0; (range.end - range.start) as usize];
                f.seek(SeekFrom::Start(range.start))?;
                f.read_exact(&mut buf)?;
                Ok(Bytes::from(buf))
            }
        }
    }
}

fn parquet_input(input: Input, schema: &SchemaRef) -> Result<Batches> {
    let (mut bytes, size) = match &input.path {
        Some(p) => {
            let f = File::open(p).map_err(|e| input.io_error(&e))?;
            let size = f.metadata().map_err(|e| input.io_error(&e))?.len();
            (ParquetBytes::File(f), size)
        }
        None => {
            let mut all = Vec::new();
            std::io::stdin()
                .read_to_end(&mut all)
                .map_err(|e| input.io_error(&e))?;
            let size = all.len() as u64;
            (ParquetBytes::Memory(Bytes::from(all)), size)
        }
    };
    let rows = parquet_batches(input.name(), size, move |r| bytes.read(r), schema)
        .map_err(|e| input.core_error(e))?;
    Ok(input.batches(rows))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::{Path, PathBuf};

    use arrow_array::{ArrayRef, Int32Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use paimon_kernel::canonical;
    use paimon_kernel::canonical::input::BATCH_ROWS;
    use paimon_kernel::format::data_file::FileFormat;
    use serde_json::Value;

    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> String {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn schema(fields: Vec<Field>) -> SchemaRef {
        Arc::new(Schema::new(fields))
    }

    fn simple_schema() -> SchemaRef {
        schema(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("amount", DataType::Decimal128(38, 10), true),
            Field::new("tags", DataType::new_list(DataType::Utf8, true), true),
        ])
    }

    /// Every row of the input as canonical JSON text, one string per row.
    fn rows_of(path: &str, format: Option<InputFormat>, schema: &SchemaRef) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for batch in read_input(path, format, schema)? {
            for row in canonical::rows(&batch?).unwrap() {
                out.push(row.to_string());
            }
        }
        Ok(out)
    }

    fn err_of(path: &str, format: Option<InputFormat>, schema: &SchemaRef) -> String {
        match rows_of(path, format, schema) {
            Ok(rows) => panic!("read {rows:?}"),
            Err(e) => super::super::error_chain(&e),
        }
    }

    #[test]
    fn formats_by_name_and_extension() {
        assert_eq!(input_format("IPC").unwrap(), InputFormat::Arrow);
        assert_eq!(input_format("ndjson").unwrap(), InputFormat::Jsonl);
        assert_eq!(
            super::super::error_chain(&input_format("orc").unwrap_err()),
            "input format: unknown input format \"orc\" (arrow, parquet, csv or jsonl)"
        );
        let d = dir();
        let path = write_file(d.path(), "rows.txt", b"{\"k\": 1}");
        let e = err_of(&path, None, &simple_schema());
        assert_eq!(
            e,
            format!(
                "reading input {path}: cannot tell the format from the file extension (.arrow, \
                 .parquet, .csv, .jsonl); give the format"
            )
        );
        // A format given overrides the extension.
        assert_eq!(
            rows_of(&path, Some(InputFormat::Jsonl), &simple_schema()).unwrap(),
            [r#"{"k":1,"name":null,"amount":null,"tags":null}"#]
        );
        let missing = d
            .path()
            .join("missing.jsonl")
            .to_string_lossy()
            .into_owned();
        let e = rows_of(&missing, None, &simple_schema()).unwrap_err();
        assert_eq!(e.io_kind(), Some(IoErrorKind::NotFound));
        let e = super::super::error_chain(&e);
        assert!(
            e.starts_with(&format!("reading input {missing}: IO error on {missing}: ")),
            "{e}"
        );
    }

    #[test]
    fn csv_and_json_lines_errors_name_the_file_and_line() {
        // The parsing is the core's (tested there); the CLI's text of its errors.
        let d = dir();
        let s = simple_schema();
        for (name, text, want) in [
            (
                "e.jsonl",
                "{\"k\": 1}\n{\"k\": 2,}\n",
                "line 2: not valid JSON: trailing comma at column 9",
            ),
            (
                "e.jsonl",
                "{\"k\": 1}\n\n{\"k\": \"x\"}\n",
                "line 3: column 'k', row 1: cannot read \"x\" as BIGINT: not an integer",
            ),
            (
                "e.csv",
                "k,nmae\n1,a\n",
                "line 1: header: the input has columns the table does not: 'nmae' (table \
                 columns: k, name, amount, tags)",
            ),
            (
                "e.csv",
                "k,name\n1,a\n2\n",
                "line 3: 1 cells, the header has 2 columns",
            ),
        ] {
            let path = write_file(d.path(), name, text.as_bytes());
            assert_eq!(
                err_of(&path, None, &s),
                format!("reading input {path}, {want}")
            );
        }
        // Good rows, in exactly the table's types, batches of BATCH_ROWS.
        let mut text = String::from("k,name\n");
        for i in 0..10_000 {
            text.push_str(&format!("{i},n{i}\n"));
        }
        let path = write_file(d.path(), "many.csv", text.as_bytes());
        let batches: Vec<RecordBatch> = read_input(&path, None, &s)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[0].num_rows(), BATCH_ROWS);
        assert_eq!(batches[0].schema(), s);
    }

    fn sample_batch() -> RecordBatch {
        let s = schema(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("name", DataType::Utf8, true),
        ]);
        RecordBatch::try_new(
            s,
            vec![
                Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
                Arc::new(StringArray::from(vec![Some("a"), None])),
            ],
        )
        .unwrap()
    }

    fn ipc(file_format: bool, batches: &[RecordBatch]) -> Vec<u8> {
        let mut out = Vec::new();
        let schema = batches[0].schema();
        if file_format {
            let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &schema).unwrap();
            batches.iter().for_each(|b| w.write(b).unwrap());
            w.finish().unwrap();
        } else {
            let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &schema).unwrap();
            batches.iter().for_each(|b| w.write(b).unwrap());
            w.finish().unwrap();
        }
        out
    }

    #[test]
    fn arrow_streams_and_files_come_back_as_written() {
        let d = dir();
        let target = schema(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("_ROW_KIND", DataType::Utf8, true),
        ]);
        let b = sample_batch();
        for (file_format, name) in [(false, "s.arrows"), (true, "f.arrow"), (true, "f.ipc")] {
            let path = write_file(d.path(), name, &ipc(file_format, &[b.clone(), b.clone()]));
            let got: Vec<RecordBatch> = read_input(&path, None, &target)
                .unwrap()
                .map(|b| b.unwrap())
                .collect();
            // As written: Int32 stays Int32 (the writer casts).
            assert_eq!(got, [b.clone(), b.clone()], "{name}");
            let got = read_input(&path, Some(InputFormat::Arrow), &target)
                .unwrap()
                .count();
            assert_eq!(got, 2);
        }
        // Columns the table does not have.
        let narrow = schema(vec![Field::new("k", DataType::Int64, false)]);
        let path = write_file(d.path(), "s.arrow", &ipc(false, std::slice::from_ref(&b)));
        let e = super::super::error_chain(&read_input(&path, None, &narrow).err().unwrap());
        assert_eq!(
            e,
            format!(
                "reading input {path}: the input has columns the table does not: 'name' (table \
                 columns: k)"
            )
        );
        // Not Arrow at all.
        let path = write_file(d.path(), "bad.arrow", b"{\"k\": 1}\n");
        let e = super::super::error_chain(&read_input(&path, None, &target).err().unwrap());
        assert!(
            e.starts_with(&format!("reading input {path}: arrow error")),
            "{e}"
        );
        // A truncated stream fails in the iterator.
        let bytes = ipc(false, &[b.clone(), b]);
        let path = write_file(d.path(), "cut.arrow", &bytes[..bytes.len() - 20]);
        let results: Vec<_> = read_input(&path, None, &target).unwrap().collect();
        assert!(results.iter().any(|r| r.is_err()), "{results:?}");
    }

    fn corpus() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables/corpus.db")
    }

    /// The Arrow schema of a corpus table (its latest schema).
    fn table_schema(table: &str) -> SchemaRef {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let t = paimon_native::Table::open(&corpus().join(table).to_string_lossy())
                .await
                .unwrap();
            let s = t.schema().await.unwrap();
            paimon_kernel::types::paimon_to_arrow_schema(&s.fields).unwrap()
        })
    }

    #[test]
    fn parquet_files_read_through_the_core_reader() {
        let table = corpus().join("append_parquet");
        let mut files: Vec<PathBuf> = std::fs::read_dir(table.join("bucket-0"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
            .collect();
        files.sort();
        assert!(!files.is_empty());
        let target = table_schema("append_parquet");
        for f in &files {
            let path = f.to_string_lossy().into_owned();
            let got: Vec<RecordBatch> = read_input(&path, None, &target)
                .unwrap()
                .map(|b| b.unwrap())
                .collect();
            let want = paimon_kernel::format::data_file::decode_data_file(
                Bytes::from(std::fs::read(f).unwrap()),
                &path,
                FileFormat::Parquet,
                None,
                BATCH_ROWS,
            )
            .unwrap();
            assert_eq!(got, want.batches, "{path}");
            assert!(got.iter().map(RecordBatch::num_rows).sum::<usize>() > 0);
        }
        // A table without the file's columns.
        let path = files[0].to_string_lossy().into_owned();
        let narrow = schema(vec![target.field(0).clone()]);
        let e = super::super::error_chain(&read_input(&path, None, &narrow).err().unwrap());
        assert!(
            e.starts_with(&format!(
                "reading input {path}: the input has columns the table does not: "
            )),
            "{e}"
        );
        // Not Parquet.
        let d = dir();
        let bad = write_file(d.path(), "bad.parquet", b"not a parquet file at all");
        let e = super::super::error_chain(&read_input(&bad, None, &target).err().unwrap());
        assert!(
            e.starts_with(&format!("reading input {bad}: corrupt parquet")),
            "{e}"
        );
    }

    /// Run `paimon-kernel scan TABLE ARGS... --output FILE` and return FILE.
    fn scan_to(table: &str, out: &Path, args: &[&str]) -> String {
        use clap::Parser;
        #[derive(Parser)]
        struct Scan {
            #[command(flatten)]
            args: super::super::scan::ScanArgs,
        }
        let out = out.to_string_lossy().into_owned();
        let table = corpus().join(table).to_string_lossy().into_owned();
        let mut argv = vec!["scan", table.as_str()];
        argv.extend(args);
        argv.extend(["--output", out.as_str()]);
        let scan = Scan::try_parse_from(argv).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(super::super::scan::run(scan.args, false, false))
            .unwrap();
        out
    }

    /// The rows `scan` reads (Arrow → canonical JSON), with the same arguments.
    fn scan_rows(table: &str, args: &[&str]) -> Vec<String> {
        let d = dir();
        let arrow = scan_to(
            table,
            &d.path().join("rows.arrow"),
            &[args, &["--format", "arrow"]].concat(),
        );
        let schema = table_schema(table);
        let mut out = Vec::new();
        for b in read_input(&arrow, None, &schema).unwrap() {
            out.extend(
                canonical::rows(&b.unwrap())
                    .unwrap()
                    .iter()
                    .map(Value::to_string),
            );
        }
        out
    }

    /// The table schema projected as `--columns` says.
    fn projected(table: &str, args: &[&str]) -> SchemaRef {
        let s = table_schema(table);
        match args.iter().position(|a| *a == "--columns") {
            None => s,
            Some(i) => {
                let names: Vec<&str> = args[i + 1].split(',').collect();
                let fields: Vec<Field> = names
                    .iter()
                    .map(|n| s.field_with_name(n).unwrap().clone())
                    .collect();
                schema(fields)
            }
        }
    }

    #[test]
    fn scan_jsonl_reads_back_to_the_same_rows() {
        for (table, args) in [
            ("pk_dedup", vec![]),
            ("append_partitioned", vec![]),
            ("evo_append", vec![]),
            ("pk_agg_merge_map", vec![]),
            ("blob_nested", vec![]),
            ("variant_parquet", vec![]),
            // NaN and infinities (rows 3, 4) cannot be JSON lines.
            ("all_types_parquet", vec!["--where", "id NOT IN (3, 4)"]),
            ("all_types_orc", vec!["--where", "id NOT IN (3, 4)"]),
            (
                "all_types_avro",
                vec![
                    "--where",
                    "id IN (3, 4)",
                    "--columns",
                    "id,t_dec_38_10,t_dec_20_0,t_string,t_bytes,t_ts6,t_ltz6,t_row,t_array_row",
                ],
            ),
        ] {
            let d = dir();
            let jsonl = scan_to(
                table,
                &d.path().join("rows.jsonl"),
                &[&args[..], &["--format", "jsonl"]].concat(),
            );
            let got = rows_of(&jsonl, None, &projected(table, &args)).unwrap();
            let want = scan_rows(table, &args);
            assert!(!want.is_empty(), "{table}");
            assert_eq!(got, want, "{table} {args:?}");
        }
    }

    #[test]
    fn scan_csv_reads_back_for_scalar_columns() {
        let scalars = "id,t_tinyint,t_smallint,t_int,t_bigint,t_float,t_double,t_dec_4_2,t_dec_9_2,\
                       t_dec_18_6,t_dec_20_0,t_dec_38_10,t_string,t_varchar,t_char,t_bytes,\
                       t_varbinary,t_binary4,t_boolean,t_date,t_time,t_ts0,t_ts3,t_ts6,t_ts9,\
                       t_ltz3,t_ltz6,t_ltz9,t_array_int,t_array_array";
        for (table, args) in [
            ("pk_dedup", vec![]),
            ("append_partitioned", vec![]),
            ("pk_partial_update", vec![]),
            // With NaN, infinities, -0.0, extreme values; ARRAY<INT> and ARRAY<ARRAY<INT>> are
            // printed as JSON-compatible text too.
            ("all_types_parquet", vec!["--columns", scalars]),
            ("all_types_orc", vec!["--columns", scalars]),
        ] {
            let d = dir();
            let csv = scan_to(
                table,
                &d.path().join("rows.csv"),
                &[&args[..], &["--format", "csv"]].concat(),
            );
            let got = rows_of(&csv, None, &projected(table, &args)).unwrap();
            let mut want = scan_rows(table, &args);
            assert!(!want.is_empty(), "{table}");
            if got != want && table.starts_with("all_types") {
                // Known loss of `scan --format csv` today: an empty string or binary is
                // written as an empty cell, like NULL, and reads back as NULL (row id 3:
                // t_string, t_bytes, and in ORC t_char, whose five spaces read as "" as
                // Java reads them; row id 4: t_varbinary).
                for row in &mut want {
                    let mut v: Value = serde_json::from_str(row).unwrap();
                    for c in ["t_string", "t_bytes", "t_varbinary", "t_char"] {
                        if v[c] == "" {
                            v[c] = Value::Null;
                        }
                    }
                    *row = v.to_string();
                }
            }
            assert_eq!(got, want, "{table}");
        }
        // Nested columns other than lists of numbers are written by `scan --format csv` as
        // Arrow's display text today (`{k1: 1, k2: null}`, strings unquoted), which is not
        // JSON: an error naming the cell, unless scan writes JSON text.
        let d = dir();
        let args = [
            "--columns",
            "id,t_map_str_int,t_array_str,t_row",
            "--format",
            "csv",
        ];
        let csv = scan_to("all_types_parquet", &d.path().join("m.csv"), &args);
        match rows_of(&csv, None, &projected("all_types_parquet", &args)) {
            Ok(got) => assert_eq!(got, scan_rows("all_types_parquet", &args[..2])),
            Err(e) => {
                let e = super::super::error_chain(&e);
                assert!(
                    e.contains(
                        "line 2: column 't_map_str_int', row 0: \"{k1: 1, k2: null}\" is not \
                         JSON text"
                    ),
                    "{e}"
                );
            }
        }
    }
}
