//! The input of `paimon-kernel write`: rows from an Arrow IPC stream or file, a Parquet file, CSV
//! or JSON lines, streamed as Arrow record batches.
//!
//! * **Arrow IPC** (`.arrow`, `.arrows`, `.ipc`; the default for `-`): a stream, or a file when
//!   the bytes start with `ARROW1`. Batches come back as written.
//! * **Parquet** (`.parquet`): read a row group at a time through the core's Parquet reader
//!   (arrow-rs' push decoder), batches of [`BATCH_ROWS`] rows. From stdin the file is read
//!   into memory first (Parquet needs its footer).
//! * **JSON lines** (`.jsonl`, `.ndjson`, `.json`): one JSON object per line keyed by column
//!   name, values in the canonical JSON of [`paimon_kernel::canonical`] or the hand-written
//!   forms of [`paimon_kernel::canonical::parse`]; blank lines are skipped. Numbers are read
//!   from their text where the column is numeric, so `DECIMAL(38, 10)` numbers keep every
//!   digit.
//! * **CSV** (`.csv`): a header line of column names, then one record per row; each cell is the
//!   canonical value as text: strings and binaries (hex) as they are, nested values (ARRAY,
//!   MAP, ROW, VARIANT) as their JSON text, an empty unquoted cell is NULL and `""` the empty
//!   string. RFC 4180 quoting (`"a,b"`, `"say ""hi"""`, line breaks inside quotes).
//!
//! Arrow and Parquet batches keep their own types (the writer casts them); CSV and JSON lines
//! are converted to exactly the target schema. Columns of the input that the target schema
//! does not have are an error naming them; columns it lacks are left to the writer (NULL for
//! CSV and JSON lines). Errors name the input and, for CSV and JSON lines, the line.
//!
//! Round trip: `scan --format jsonl` reads back to the same values (NaN and infinite floats
//! cannot be written as JSON lines). `scan --format csv` reads back for columns of scalar types,
//! except that it writes empty strings and empty binaries like NULL (an empty unquoted cell):
//! they come back as NULL. Its nested columns are Arrow's display text (`{k: v}`, strings
//! unquoted), which is not JSON and does not read back.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use paimon_kernel::canonical::parse::batch_from_rows_at;
use paimon_kernel::format::data_file::{DataFileReader, FileFormat};
use paimon_kernel::io::{Io, IoAnswer, IoErrorKind, IoOp, Machine, Step, Work};
use paimon_native::{Error, Result};
use serde_json::{Map, Value};

/// Rows per batch read from CSV, JSON lines and Parquet.
pub(crate) const BATCH_ROWS: usize = 8192;

/// The batches of an input, in order.
pub(crate) type Batches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

/// Formats `read_input` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputFormat {
    /// Arrow IPC stream (or file, recognized by its `ARROW1` magic).
    Arrow,
    /// Apache Parquet.
    Parquet,
    /// CSV with a header line.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

impl InputFormat {
    /// `arrow` (also `ipc`, `arrows`), `parquet`, `csv`, `jsonl` (also `ndjson`, `json`); any
    /// case.
    ///
    /// # Errors
    /// Another name, listing the accepted ones.
    pub(crate) fn from_name(name: &str) -> Result<Self> {
        Self::parse(name).ok_or_else(|| {
            Error::kernel(
                "input format",
                paimon_kernel::Error::invalid(format!(
                    "unknown input format {name:?} (arrow, parquet, csv or jsonl)"
                )),
            )
        })
    }

    /// The format of a file from its extension (`.arrow`/`.arrows`/`.ipc`, `.parquet`,
    /// `.csv`, `.jsonl`/`.ndjson`/`.json`; any case), `None` for others.
    pub(crate) fn from_path(path: &str) -> Option<Self> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        Self::parse(name.rsplit_once('.')?.1)
    }

    fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "arrow" | "arrows" | "ipc" => InputFormat::Arrow,
            "parquet" => InputFormat::Parquet,
            "csv" => InputFormat::Csv,
            "jsonl" | "ndjson" | "json" => InputFormat::Jsonl,
            _ => return None,
        })
    }
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
            input.error(
                None,
                paimon_kernel::Error::invalid(
                    "cannot tell the format from the file extension (.arrow, .parquet, .csv, \
                     .jsonl); give the format",
                ),
            )
        })?,
    };
    match format {
        InputFormat::Arrow => arrow_input(input, schema),
        InputFormat::Parquet => parquet_input(input, schema),
        InputFormat::Csv => {
            let reader = input.open_buffered()?;
            Ok(Box::new(CsvRows::open(input, reader, Arc::clone(schema))?))
        }
        InputFormat::Jsonl => {
            let reader = input.open_buffered()?;
            Ok(Box::new(JsonLines {
                input,
                reader,
                schema: Arc::clone(schema),
                line: String::new(),
                line_no: 0,
                rows_read: 0,
                done: false,
            }))
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

    /// `source` as an error of this input, at `line` (1-based) if known.
    fn error(&self, line: Option<u64>, source: paimon_kernel::Error) -> Error {
        let context = match line {
            Some(l) => format!("reading input {}, line {l}", self.name()),
            None => format!("reading input {}", self.name()),
        };
        Error::kernel(context, source)
    }

    fn io_error(&self, line: Option<u64>, e: &std::io::Error) -> Error {
        let kind = match e.kind() {
            std::io::ErrorKind::NotFound => IoErrorKind::NotFound,
            _ => IoErrorKind::Other,
        };
        self.error(
            line,
            paimon_kernel::Error::io(self.name(), kind, e.to_string()),
        )
    }

    fn open(&self) -> Result<Box<dyn Read + Send>> {
        match &self.path {
            None => Ok(Box::new(std::io::stdin())),
            Some(p) => Ok(Box::new(
                File::open(p).map_err(|e| self.io_error(None, &e))?,
            )),
        }
    }

    fn open_buffered(&self) -> Result<Box<dyn BufRead + Send>> {
        Ok(Box::new(BufReader::with_capacity(1 << 16, self.open()?)))
    }
}

/// An error if `input_schema` has columns that `schema` does not.
fn check_columns(input: &Input, input_schema: &Schema, schema: &Schema) -> Result<()> {
    let unknown: Vec<&str> = input_schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| schema.field_with_name(n).is_err())
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(input.error(
        None,
        paimon_kernel::Error::invalid(format!(
            "the input has columns the table does not: {} (table columns: {})",
            quoted_list(&unknown),
            column_names(schema)
        )),
    ))
}

/// `'a', 'b'`.
fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn column_names(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

// --- Arrow IPC ---

const ARROW_FILE_MAGIC: &[u8] = b"ARROW1";

fn arrow_input(input: Input, schema: &SchemaRef) -> Result<Batches> {
    let arrow_err =
        |input: &Input, e| input.error(None, paimon_kernel::Error::arrow("Arrow IPC", e));
    let mut reader = input.open()?;
    let mut magic = Vec::with_capacity(ARROW_FILE_MAGIC.len());
    (&mut reader)
        .take(ARROW_FILE_MAGIC.len() as u64)
        .read_to_end(&mut magic)
        .map_err(|e| input.io_error(None, &e))?;
    if magic == ARROW_FILE_MAGIC {
        // The IPC file format: its footer is at the end. A file is read where it lies; stdin
        // has to be held in memory.
        let file: Box<dyn ReadSeek> = match &input.path {
            Some(p) => {
                let mut f = File::open(p).map_err(|e| input.io_error(None, &e))?;
                f.seek(SeekFrom::Start(0))
                    .map_err(|e| input.io_error(None, &e))?;
                Box::new(BufReader::new(f))
            }
            None => {
                let mut all = magic;
                reader
                    .read_to_end(&mut all)
                    .map_err(|e| input.io_error(None, &e))?;
                Box::new(Cursor::new(all))
            }
        };
        let r =
            arrow_ipc::reader::FileReader::try_new(file, None).map_err(|e| arrow_err(&input, e))?;
        check_columns(&input, &r.schema(), schema)?;
        return Ok(Box::new(ArrowBatches { input, inner: r }));
    }
    let stream = BufReader::with_capacity(1 << 16, Cursor::new(magic).chain(reader));
    let r = arrow_ipc::reader::StreamReader::try_new(stream, None).map_err(|e| {
        if input.path.is_none() {
            input.error(
                None,
                paimon_kernel::Error::arrow(
                    "Arrow IPC stream (the default for stdin; other input needs --format csv, \
                     jsonl or parquet)",
                    e,
                ),
            )
        } else {
            arrow_err(&input, e)
        }
    })?;
    check_columns(&input, &r.schema(), schema)?;
    Ok(Box::new(ArrowBatches { input, inner: r }))
}

trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// An Arrow IPC reader with errors naming the input.
struct ArrowBatches<I> {
    input: Input,
    inner: I,
}

impl<I> Iterator for ArrowBatches<I>
where
    I: Iterator<Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>>,
{
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.inner.next()?.map_err(|e| {
            self.input
                .error(None, paimon_kernel::Error::arrow("Arrow IPC", e))
        }))
    }
}

// --- Parquet ---

/// The bytes of a Parquet input: the file, or stdin read into memory.
enum ParquetBytes {
    File(File),
    Memory(Bytes),
}

impl ParquetBytes {
    fn read(&mut self, op: &IoOp, size: u64) -> IoAnswer {
        let IoOp::Read { range, .. } = op else {
            return IoAnswer::error(IoErrorKind::Unsupported);
        };
        let range = range.clone().unwrap_or(0..size);
        if range.start > range.end || range.end > size {
            return IoAnswer::Error {
                kind: IoErrorKind::Other,
                detail: format!("range {range:?} outside the {size} bytes of the input"),
            };
        }
        match self {
            ParquetBytes::Memory(b) => {
                // Checked above: the range lies inside the bytes.
                let (start, end) = (range.start as usize, range.end as usize);
                IoAnswer::bytes(b.slice(start..end))
            }
            ParquetBytes::File(f) => {
                let mut buf = vec![0; (range.end - range.start) as usize];
                match f
                    .seek(SeekFrom::Start(range.start))
                    .and_then(|_| f.read_exact(&mut buf))
                {
                    Ok(()) => IoAnswer::bytes(buf),
                    Err(e) => IoAnswer::Error {
                        kind: IoErrorKind::Other,
                        detail: e.to_string(),
                    },
                }
            }
        }
    }
}

fn parquet_input(input: Input, schema: &SchemaRef) -> Result<Batches> {
    let (bytes, size) = match &input.path {
        Some(p) => {
            let f = File::open(p).map_err(|e| input.io_error(None, &e))?;
            let size = f.metadata().map_err(|e| input.io_error(None, &e))?.len();
            (ParquetBytes::File(f), size)
        }
        None => {
            let mut all = Vec::new();
            std::io::stdin()
                .read_to_end(&mut all)
                .map_err(|e| input.io_error(None, &e))?;
            let size = all.len() as u64;
            (ParquetBytes::Memory(Bytes::from(all)), size)
        }
    };
    let path = input.name().to_string();
    let machine = Machine::new(
        "read_input_parquet",
        move |io: Io<RecordBatch>| async move {
            let mut reader =
                DataFileReader::open(&io, &path, size, FileFormat::Parquet, None, BATCH_ROWS)
                    .await?;
            // The schema first, so that its columns are checked before any row is read.
            io.emit_and_yield(RecordBatch::new_empty(Arc::clone(reader.schema())))
                .await;
            while let Some(batch) = reader.next_batch(&io).await? {
                io.emit_and_yield(batch).await;
            }
            Ok(())
        },
    );
    let mut batches = ParquetBatches {
        input,
        machine,
        bytes,
        size,
        done: false,
    };
    match batches.next() {
        Some(Ok(empty)) => check_columns(&batches.input, &empty.schema(), schema)?,
        Some(Err(e)) => return Err(e),
        None => {}
    }
    Ok(Box::new(batches))
}

/// Drives the core's Parquet reader over the input's bytes.
struct ParquetBatches {
    input: Input,
    machine: Machine<RecordBatch>,
    bytes: ParquetBytes,
    size: u64,
    done: bool,
}

impl Iterator for ParquetBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let step = self.machine.step().and_then(|step| {
                if let Step::NeedIo(requests) = &step {
                    for r in requests {
                        let answer = self.bytes.read(&r.op, self.size);
                        self.machine.provide(r.id, answer)?;
                    }
                }
                Ok(step)
            });
            match step {
                Ok(Step::NeedIo(_) | Step::Wait) => {}
                Ok(Step::Work(items)) => items.into_iter().for_each(Work::run),
                Ok(Step::Emit(batch)) => return Some(Ok(batch)),
                Ok(Step::Done) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(self.input.error(None, e)));
                }
            }
        }
        None
    }
}

// --- JSON lines and CSV: rows as canonical JSON ---

/// Convert `rows` (the rows numbered from `first_row`, read from `lines`) into a batch; an
/// error names the line of the row that failed.
fn rows_to_batch(
    input: &Input,
    rows: &[Map<String, Value>],
    lines: &[u64],
    schema: &SchemaRef,
    first_row: usize,
) -> Result<RecordBatch> {
    match batch_from_rows_at(rows, schema, first_row) {
        Ok(batch) => Ok(batch),
        Err(e) => {
            // Find the row: the core converts a column at a time and cannot say which line.
            for (i, (row, line)) in rows.iter().zip(lines).enumerate() {
                if let Err(e) = batch_from_rows_at(std::slice::from_ref(row), schema, first_row + i)
                {
                    return Err(input.error(Some(*line), e));
                }
            }
            Err(input.error(None, e))
        }
    }
}

/// JSON lines, [`BATCH_ROWS`] rows per batch.
struct JsonLines {
    input: Input,
    reader: Box<dyn BufRead + Send>,
    schema: SchemaRef,
    line: String,
    /// Lines read so far.
    line_no: u64,
    /// Rows returned so far.
    rows_read: usize,
    done: bool,
}

impl JsonLines {
    fn fail(&mut self, e: Error) -> Option<Result<RecordBatch>> {
        self.done = true;
        Some(Err(e))
    }
}

impl Iterator for JsonLines {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        while rows.len() < BATCH_ROWS {
            self.line.clear();
            match self.reader.read_line(&mut self.line) {
                Ok(0) => {
                    self.done = true;
                    break;
                }
                Ok(_) => self.line_no += 1,
                Err(e) => {
                    let e = self.input.io_error(Some(self.line_no + 1), &e);
                    return self.fail(e);
                }
            }
            let text = self.line.trim();
            if text.is_empty() {
                continue;
            }
            match json_row(text, &self.schema) {
                Ok(row) => {
                    rows.push(row);
                    lines.push(self.line_no);
                }
                Err(e) => {
                    let e = self.input.error(Some(self.line_no), e);
                    return self.fail(e);
                }
            }
        }
        if rows.is_empty() {
            self.done = true;
            return None;
        }
        let first_row = self.rows_read;
        self.rows_read += rows.len();
        match rows_to_batch(&self.input, &rows, &lines, &self.schema, first_row) {
            Ok(batch) => Some(Ok(batch)),
            Err(e) => self.fail(e),
        }
    }
}

/// One line of JSON lines: an object, its numbers read exactly (see [`protect_numbers`]).
fn json_row(text: &str, schema: &Schema) -> paimon_kernel::Result<Map<String, Value>> {
    let protected = protect_numbers(text);
    let value = match serde_json::from_str::<Value>(protected.as_deref().unwrap_or(text)) {
        Ok(v) => v,
        // Report the error at its place in the text as written.
        Err(e) => {
            return Err(json_error(
                serde_json::from_str::<Value>(text).err().unwrap_or(e),
            ));
        }
    };
    let Value::Object(mut row) = value else {
        return Err(paimon_kernel::Error::invalid(format!(
            "expected a JSON object keyed by column name, got {}",
            short(text)
        )));
    };
    if protected.is_some() {
        for (k, v) in row.iter_mut() {
            let t = schema.field_with_name(k).ok().map(Field::data_type);
            restore_numbers(v, t);
        }
    }
    Ok(row)
}

fn json_error(e: serde_json::Error) -> paimon_kernel::Error {
    let text = e.to_string();
    // The message ends in " at line 1 column N"; the line is the input's.
    let cause = text.split(" at line ").next().unwrap_or(&text);
    paimon_kernel::Error::invalid(format!("not valid JSON: {cause} at column {}", e.column()))
}

fn short(text: &str) -> String {
    const MAX_CHARS: usize = 80;
    if text.chars().count() <= MAX_CHARS {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(MAX_CHARS).collect();
        s.push('…');
        s
    }
}

/// What a number's text becomes in [`protect_numbers`]: a string starting with this mark.
const NUMBER_MARK: &str = "\u{0}#num:";
/// [`NUMBER_MARK`] as JSON text.
const NUMBER_MARK_JSON: &str = "\\u0000#num:";

/// `serde_json::Value` holds a number with a fraction, an exponent or more than 18 digits as a
/// double, which loses digits of a `DECIMAL(38, 10)`. This rewrites each such number of the
/// JSON text `text` into a string holding a mark and the number's text; [`restore_numbers`]
/// then turns it back into that text (numeric columns, read exactly) or a JSON number (any
/// other place). `None` when there is nothing to rewrite, or when the text holds a `\u0000`
/// escape (a string that could look like the mark; numbers are then read as doubles, and the
/// decimal reader refuses those that may have lost digits).
fn protect_numbers(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let (mut last, mut i, mut in_string) = (0, 0, false);
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' if b[i + 1..].starts_with(b"u0000") => return None,
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let number = &text[start..i];
                if is_json_number(number)
                    && (number.contains(['.', 'e', 'E'])
                        || number.bytes().filter(u8::is_ascii_digit).count() > 18)
                {
                    let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 64));
                    o.push_str(&text[last..start]);
                    o.push('"');
                    o.push_str(NUMBER_MARK_JSON);
                    o.push_str(number);
                    o.push('"');
                    last = i;
                }
            }
            _ => i += 1,
        }
    }
    let mut o = out?;
    o.push_str(&text[last..]);
    Some(o)
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
fn is_json_number(s: &str) -> bool {
    fn digits(s: &[u8]) -> usize {
        s.iter().take_while(|b| b.is_ascii_digit()).count()
    }
    let mut b = s.as_bytes();
    if let Some(rest) = b.strip_prefix(b"-") {
        b = rest;
    }
    let n = digits(b);
    if n == 0 || (n > 1 && b[0] == b'0') {
        return false;
    }
    b = &b[n..];
    if let Some(rest) = b.strip_prefix(b".") {
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        b = &rest[n..];
    }
    if let Some(rest) = b.strip_prefix(b"e").or_else(|| b.strip_prefix(b"E")) {
        let rest = rest
            .strip_prefix(b"+")
            .or_else(|| rest.strip_prefix(b"-"))
            .unwrap_or(rest);
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        b = &rest[n..];
    }
    b.is_empty()
}

/// Undo [`protect_numbers`] in `v`, a value of type `t` (`None`: not known).
fn restore_numbers(v: &mut Value, t: Option<&DataType>) {
    match v {
        Value::String(s) => {
            if let Some(number) = s.strip_prefix(NUMBER_MARK) {
                let restored = if t.is_some_and(DataType::is_numeric) {
                    Value::String(number.to_string())
                } else {
                    serde_json::from_str(number).unwrap_or_else(|_| Value::String(number.into()))
                };
                *v = restored;
            }
        }
        Value::Array(items) => match t {
            Some(DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _)) => {
                for item in items {
                    restore_numbers(item, Some(f.data_type()));
                }
            }
            Some(DataType::Map(entries, _)) => {
                let (k, val) = map_types(entries);
                for item in items {
                    match item {
                        Value::Array(pair) if pair.len() == 2 => {
                            restore_numbers(&mut pair[0], k);
                            restore_numbers(&mut pair[1], val);
                        }
                        other => restore_numbers(other, None),
                    }
                }
            }
            _ => items.iter_mut().for_each(|i| restore_numbers(i, None)),
        },
        Value::Object(m) => match t {
            Some(DataType::Struct(fields)) => {
                for (k, x) in m.iter_mut() {
                    restore_numbers(x, fields.find(k).map(|(_, f)| f.data_type()));
                }
            }
            Some(DataType::Map(entries, _)) => {
                let (_, val) = map_types(entries);
                m.values_mut().for_each(|x| restore_numbers(x, val));
            }
            _ => m.values_mut().for_each(|x| restore_numbers(x, None)),
        },
        _ => {}
    }
}

/// Key and value types of a map's entries field.
fn map_types(entries: &Field) -> (Option<&DataType>, Option<&DataType>) {
    match entries.data_type() {
        DataType::Struct(kv) => (
            kv.first().map(|f| f.data_type()),
            kv.get(1).map(|f| f.data_type()),
        ),
        _ => (None, None),
    }
}

/// One CSV cell: its text (quotes removed) and whether it was quoted.
#[derive(Debug)]
struct CsvCell {
    text: String,
    quoted: bool,
}

/// CSV rows, [`BATCH_ROWS`] per batch.
struct CsvRows {
    input: Input,
    reader: Box<dyn BufRead + Send>,
    schema: SchemaRef,
    /// The header's column names, with their fields in `schema`.
    columns: Vec<Field>,
    line: String,
    line_no: u64,
    rows_read: usize,
    done: bool,
}

impl CsvRows {
    /// Read the header.
    fn open(input: Input, reader: Box<dyn BufRead + Send>, schema: SchemaRef) -> Result<Self> {
        let mut rows = CsvRows {
            input,
            reader,
            schema,
            columns: Vec::new(),
            line: String::new(),
            line_no: 0,
            rows_read: 0,
            done: false,
        };
        let Some((line, header)) = rows.record()? else {
            // No header: no rows.
            rows.done = true;
            return Ok(rows);
        };
        let names: Vec<String> = header
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let name = match i {
                    0 => c.text.trim_start_matches('\u{feff}').to_string(),
                    _ => c.text,
                };
                // `a, b`: spaces around a name that is a column only without them.
                let trimmed = name.trim();
                if trimmed != name
                    && rows.schema.field_with_name(&name).is_err()
                    && rows.schema.field_with_name(trimmed).is_ok()
                {
                    trimmed.to_string()
                } else {
                    name
                }
            })
            .collect();
        let header_error = |msg: String| {
            Err(rows
                .input
                .error(Some(line), paimon_kernel::Error::invalid(msg)))
        };
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return header_error(format!("header: column '{n}' appears twice"));
            }
        }
        let unknown: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| rows.schema.field_with_name(n).is_err())
            .collect();
        if !unknown.is_empty() {
            return header_error(format!(
                "header: the input has columns the table does not: {} (table columns: {})",
                quoted_list(&unknown),
                column_names(&rows.schema)
            ));
        }
        rows.columns = names
            .iter()
            .filter_map(|n| rows.schema.field_with_name(n).ok().cloned())
            .collect();
        Ok(rows)
    }

    /// The next record and the line it starts on; `None` at the end. Blank lines are skipped.
    fn record(&mut self) -> Result<Option<(u64, Vec<CsvCell>)>> {
        let mut cells = Vec::new();
        let mut cell = String::new();
        let (mut quoted, mut in_quotes) = (false, false);
        let mut start = None;
        loop {
            self.line.clear();
            let n = self
                .reader
                .read_line(&mut self.line)
                .map_err(|e| self.input.io_error(Some(self.line_no + 1), &e))?;
            if n == 0 {
                return match (start, in_quotes) {
                    (None, _) => Ok(None),
                    (Some(s), true) => Err(self.input.error(
                        Some(s),
                        paimon_kernel::Error::invalid(
                            "a quoted cell is not closed before the end of the input",
                        ),
                    )),
                    (Some(s), false) => {
                        cells.push(CsvCell { text: cell, quoted });
                        Ok(Some((s, cells)))
                    }
                };
            }
            self.line_no += 1;
            if start.is_none() {
                if self.line.trim_end_matches(['\r', '\n']).is_empty() {
                    continue;
                }
                start = Some(self.line_no);
            }
            let mut chars = self.line.chars().peekable();
            while let Some(c) = chars.next() {
                if in_quotes {
                    if c != '"' {
                        cell.push(c);
                    } else if chars.peek() == Some(&'"') {
                        chars.next();
                        cell.push('"');
                    } else {
                        in_quotes = false;
                    }
                    continue;
                }
                match c {
                    ',' => {
                        cells.push(CsvCell {
                            text: std::mem::take(&mut cell),
                            quoted,
                        });
                        quoted = false;
                    }
                    '"' if cell.is_empty() && !quoted => (in_quotes, quoted) = (true, true),
                    '\n' => {}
                    '\r' if matches!(chars.peek(), None | Some('\n')) => {}
                    c => cell.push(c),
                }
            }
            if !in_quotes {
                cells.push(CsvCell { text: cell, quoted });
                return Ok(Some((start.unwrap_or(self.line_no), cells)));
            }
        }
    }

    fn fail(&mut self, e: Error) -> Option<Result<RecordBatch>> {
        self.done = true;
        Some(Err(e))
    }
}

impl Iterator for CsvRows {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        while rows.len() < BATCH_ROWS {
            let (line, cells) = match self.record() {
                Ok(Some(r)) => r,
                Ok(None) => {
                    self.done = true;
                    break;
                }
                Err(e) => return self.fail(e),
            };
            if cells.len() != self.columns.len() {
                let e = self.input.error(
                    Some(line),
                    paimon_kernel::Error::invalid(format!(
                        "{} cells, the header has {} columns",
                        cells.len(),
                        self.columns.len()
                    )),
                );
                return self.fail(e);
            }
            let row_no = self.rows_read + rows.len();
            let mut row = Map::with_capacity(cells.len());
            for (cell, field) in cells.into_iter().zip(&self.columns) {
                match csv_value(cell, field, row_no) {
                    Ok(v) => {
                        row.insert(field.name().clone(), v);
                    }
                    Err(e) => {
                        let e = self.input.error(Some(line), e);
                        return self.fail(e);
                    }
                }
            }
            rows.push(row);
            lines.push(line);
        }
        if rows.is_empty() {
            self.done = true;
            return None;
        }
        let first_row = self.rows_read;
        self.rows_read += rows.len();
        match rows_to_batch(&self.input, &rows, &lines, &self.schema, first_row) {
            Ok(batch) => Some(Ok(batch)),
            Err(e) => self.fail(e),
        }
    }
}

/// The canonical JSON value of a CSV cell of `field` (row `row` of the input).
fn csv_value(cell: CsvCell, field: &Field, row: usize) -> paimon_kernel::Result<Value> {
    if cell.text.is_empty() && !cell.quoted {
        return Ok(Value::Null);
    }
    let t = field.data_type();
    let json = t.is_nested()
        || (matches!(t, DataType::LargeBinary) && cell.text.trim_start().starts_with('{'));
    if !json {
        return Ok(Value::String(cell.text));
    }
    let protected = protect_numbers(&cell.text);
    match serde_json::from_str::<Value>(protected.as_deref().unwrap_or(&cell.text)) {
        Ok(mut v) => {
            if protected.is_some() {
                restore_numbers(&mut v, Some(t));
            }
            Ok(v)
        }
        Err(e) => Err(paimon_kernel::Error::invalid(format!(
            "column '{}', row {row}: {} is not JSON text ({}); nested values are written as JSON",
            field.name(),
            serde_json::to_string(&short(&cell.text)).unwrap_or_default(),
            json_error(e)
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::{Path, PathBuf};

    use arrow_array::{ArrayRef, Decimal128Array, Int32Array, StringArray};
    use paimon_kernel::canonical;

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
        for (name, f) in [
            ("arrow", InputFormat::Arrow),
            ("IPC", InputFormat::Arrow),
            ("arrows", InputFormat::Arrow),
            ("parquet", InputFormat::Parquet),
            ("csv", InputFormat::Csv),
            ("jsonl", InputFormat::Jsonl),
            ("ndjson", InputFormat::Jsonl),
            ("json", InputFormat::Jsonl),
        ] {
            assert_eq!(InputFormat::from_name(name).unwrap(), f);
        }
        assert!(
            InputFormat::from_name("orc")
                .unwrap_err()
                .to_string()
                .contains("unknown input format \"orc\"")
        );
        assert_eq!(
            InputFormat::from_path("/tmp/x.y/rows.ARROWS"),
            Some(InputFormat::Arrow)
        );
        assert_eq!(InputFormat::from_path("a.ipc"), Some(InputFormat::Arrow));
        assert_eq!(
            InputFormat::from_path("d/a.parquet"),
            Some(InputFormat::Parquet)
        );
        assert_eq!(
            InputFormat::from_path("rows.ndjson"),
            Some(InputFormat::Jsonl)
        );
        assert_eq!(
            InputFormat::from_path("rows.json"),
            Some(InputFormat::Jsonl)
        );
        assert_eq!(InputFormat::from_path("rows.csv"), Some(InputFormat::Csv));
        assert_eq!(InputFormat::from_path("rows.txt"), None);
        assert_eq!(InputFormat::from_path("a.csv/rows"), None);
        let d = dir();
        let path = write_file(d.path(), "rows.txt", b"{}");
        let e = err_of(&path, None, &simple_schema());
        assert!(e.contains("cannot tell the format"), "{e}");
        let e = err_of(
            &d.path().join("missing.jsonl").to_string_lossy(),
            None,
            &simple_schema(),
        );
        assert!(
            e.contains("missing.jsonl") && e.contains("not found"),
            "{e}"
        );
    }

    #[test]
    fn json_lines_read_canonical_and_hand_written_values() {
        let d = dir();
        let path = write_file(
            d.path(),
            "rows.jsonl",
            concat!(
                "{\"k\": 1, \"name\": \"a\", \"amount\": 1234567890123456789012345678.0123456789, \"tags\": [\"x\"]}\r\n",
                "\n",
                "   \n",
                "{\"name\": \"\", \"k\": \"2\", \"amount\": \"-0.5\"}\n",
                "{\"k\": 3, \"amount\": 12, \"tags\": null, \"name\": null}",
            )
            .as_bytes(),
        );
        assert_eq!(
            rows_of(&path, None, &simple_schema()).unwrap(),
            [
                r#"{"k":1,"name":"a","amount":"1234567890123456789012345678.0123456789","tags":["x"]}"#,
                r#"{"k":2,"name":"","amount":"-0.5000000000","tags":null}"#,
                r#"{"k":3,"name":null,"amount":"12.0000000000","tags":null}"#,
            ]
        );
    }

    #[test]
    fn json_numbers_keep_their_digits_where_the_column_is_numeric() {
        let t = schema(vec![
            Field::new("d", DataType::Decimal128(38, 2), true),
            Field::new("f", DataType::Float32, true),
            Field::new("big", DataType::Decimal128(20, 0), true),
            Field::new(
                "r",
                DataType::Struct(
                    vec![
                        Field::new("x", DataType::Decimal128(30, 3), true),
                        Field::new("s", DataType::Utf8, true),
                    ]
                    .into(),
                ),
                true,
            ),
            Field::new(
                "m",
                DataType::Map(
                    Arc::new(Field::new(
                        "entries",
                        DataType::Struct(
                            vec![
                                Field::new("key", DataType::Decimal128(25, 1), false),
                                Field::new("value", DataType::Float64, true),
                            ]
                            .into(),
                        ),
                        false,
                    )),
                    false,
                ),
                true,
            ),
            Field::new("s", DataType::Utf8, true),
        ]);
        let d = dir();
        let path = write_file(
            d.path(),
            "n.jsonl",
            concat!(
                r#"{"d": 123456789012345678901234567890.12, "f": 0.1, "big": -99999999999999999999, "#,
                r#""r": {"x": 1234567890123456789012345.678, "s": "1.5e3 \"q\" \\u0000"}, "#,
                r#""m": [[123456789012345678901234.5, 1e-3]], "s": "-1.25"}"#,
                "\n",
                r#"{"m": {"1.5": 2.5}}"#,
            )
            .as_bytes(),
        );
        assert_eq!(
            rows_of(&path, None, &t).unwrap(),
            [
                r#"{"d":"123456789012345678901234567890.12","f":0.10000000149011612,"big":"-99999999999999999999","r":{"x":"1234567890123456789012345.678","s":"1.5e3 \"q\" \\u0000"},"m":[["123456789012345678901234.5",0.001]],"s":"-1.25"}"#,
                r#"{"d":null,"f":null,"big":null,"r":null,"m":[["1.5",2.5]],"s":null}"#,
            ]
        );
        // A number is still not a string.
        let path = write_file(d.path(), "bad.jsonl", b"{\"s\": 1.5}\n");
        let e = err_of(&path, None, &t);
        assert!(
            e.contains("line 1") && e.contains("column 's', row 0") && e.contains("1.5"),
            "{e}"
        );
        // A line with a \u0000 escape reads numbers as doubles: a decimal that may have lost
        // digits is refused rather than rounded.
        let path = write_file(
            d.path(),
            "nul.jsonl",
            b"{\"s\": \"\\u0000\", \"d\": 1.25}\n{\"s\": \"\\u0000\", \"d\": 123456789012345678.25}\n",
        );
        let e = err_of(&path, None, &t);
        assert!(
            e.contains("line 2") && e.contains("column 'd', row 1") && e.contains("as a string"),
            "{e}"
        );
    }

    #[test]
    fn protected_numbers_are_only_valid_json_numbers() {
        assert_eq!(protect_numbers(r#"{"a": 1, "b": -20}"#), None);
        assert_eq!(
            protect_numbers(r#"{"a":1.5,"b":"2.5","c":[1e3,-0.0]}"#).unwrap(),
            r#"{"a":"\u0000#num:1.5","b":"2.5","c":["\u0000#num:1e3","\u0000#num:-0.0"]}"#
        );
        assert_eq!(
            protect_numbers(r#"{"a":12345678901234567890}"#).unwrap(),
            r#"{"a":"\u0000#num:12345678901234567890"}"#
        );
        // Not numbers: left for serde_json to reject.
        for bad in ["1.2.3", "01.5", "1.", ".5", "1e", "--1", "1e+"] {
            assert!(!is_json_number(bad), "{bad}");
            assert_eq!(protect_numbers(&format!("[{bad}]")), None, "{bad}");
        }
        for good in ["0", "-0", "10", "1.5", "-0.25e-7", "6E+2"] {
            assert!(is_json_number(good), "{good}");
        }
        // A string that looks like the mark needs a \u0000 escape, which turns the rewrite
        // off; an escaped backslash before "u0000" does not.
        assert_eq!(protect_numbers(r#"{"s":"\u0000#num:1.5","d":1.5}"#), None);
        assert!(protect_numbers(r#"{"s":"\\u0000","d":1.5}"#).is_some());
        let s = schema(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Decimal128(5, 1), true),
        ]);
        let row = json_row(r#"{"s": "\u0000#num:1.5", "d": 1.5}"#, &s).unwrap();
        assert_eq!(row["s"], "\u{0}#num:1.5");
        assert_eq!(row["d"], 1.5);
    }

    #[test]
    fn json_lines_errors_name_the_line_and_row() {
        let d = dir();
        let s = simple_schema();
        // 20 000 rows: batches of 8192; a bad value on line 9002 (row 9000: two blank lines).
        let mut text = String::from("\n\n");
        for i in 0..20_000 {
            if i == 9_000 {
                text.push_str("{\"k\": \"nine\"}\n");
            } else {
                text.push_str(&format!("{{\"k\": {i}}}\n"));
            }
        }
        let path = write_file(d.path(), "many.jsonl", text.as_bytes());
        let mut batches = read_input(&path, None, &s).unwrap();
        assert_eq!(batches.next().unwrap().unwrap().num_rows(), BATCH_ROWS);
        let e = super::super::error_chain(&batches.next().unwrap().unwrap_err());
        assert_eq!(
            e,
            format!(
                "reading input {path}, line 9003: column 'k', row 9000: cannot read \"nine\" as \
                 BIGINT: not an integer"
            )
        );
        assert!(batches.next().is_none(), "the iterator ends after an error");

        // Sizes of good batches.
        let good = text.replace("{\"k\": \"nine\"}", "{\"k\": 9000}");
        let path = write_file(d.path(), "good.jsonl", good.as_bytes());
        let sizes: Vec<usize> = read_input(&path, None, &s)
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .collect();
        assert_eq!(sizes, [8192, 8192, 3616]);

        for (text, want) in [
            (
                "{\"k\": 1}\n{\"k\": 2,}\n",
                "line 2: not valid JSON: trailing comma at column 9",
            ),
            (
                "{\"k\": 1}\n[1, 2]\n",
                "line 2: expected a JSON object keyed by column name, got [1, 2]",
            ),
            (
                "{\"k\": 1, \"nmae\": \"x\"}\n",
                "line 1: column 'nmae', row 0: there is no such column (columns: k, name, amount, tags)",
            ),
            (
                "{\"name\": \"x\"}\n",
                "line 1: column 'k', row 0: NULL in a NOT NULL field of type BIGINT",
            ),
            (
                "{\"k\": 1, \"amount\": \"1.00000000001\"}\n",
                "line 1: column 'amount', row 0: cannot read \"1.00000000001\" as DECIMAL(38, 10): more than 10 fraction digits",
            ),
            (
                "{\"k\": 1, \"tags\": [\"a\", 5]}\n",
                "line 1: column 'tags[]', row 0: cannot read 5 as STRING: expected a JSON string",
            ),
        ] {
            let path = write_file(d.path(), "e.jsonl", text.as_bytes());
            let e = err_of(&path, None, &s);
            assert!(
                e.starts_with(&format!("reading input {path}, ")) && e.ends_with(want),
                "{e}"
            );
        }
        // Not UTF-8.
        let path = write_file(d.path(), "bin.jsonl", b"{\"k\": 1}\n{\"name\": \"\xff\"}\n");
        let e = err_of(&path, None, &s);
        assert!(e.contains("line 2") && e.contains("UTF-8"), "{e}");
        // Empty input: no batches.
        let path = write_file(d.path(), "empty.jsonl", b"\n");
        assert!(rows_of(&path, None, &s).unwrap().is_empty());
    }

    #[test]
    fn csv_cells_quotes_nulls_and_nested_json() {
        let d = dir();
        let s = simple_schema();
        let path = write_file(
            d.path(),
            "rows.csv",
            concat!(
                "\u{feff}name,k,tags,amount\r\n",
                "a,1,\"[\"\"x\"\", null]\",1.5\r\n",
                "\"\",2,,\r\n",
                "\n",
                ",3,[],-0.1\n",
                "\"multi\nline, \"\"quoted\"\"\",4,\"[\"\"a,b\"\"]\",\"12\"\n",
                "  padded  ,5,,  7  \n",
                "last,6,,",
            )
            .as_bytes(),
        );
        assert_eq!(
            rows_of(&path, None, &s).unwrap(),
            [
                r#"{"k":1,"name":"a","amount":"1.5000000000","tags":["x",null]}"#,
                r#"{"k":2,"name":"","amount":null,"tags":null}"#,
                r#"{"k":3,"name":null,"amount":"-0.1000000000","tags":[]}"#,
                r#"{"k":4,"name":"multi\nline, \"quoted\"","amount":"12.0000000000","tags":["a,b"]}"#,
                r#"{"k":5,"name":"  padded  ","amount":"7.0000000000","tags":null}"#,
                r#"{"k":6,"name":"last","amount":null,"tags":null}"#,
            ]
        );
        // A header without some columns: those are NULL. Spaces around names are dropped.
        let path = write_file(d.path(), "part.csv", b"k\n1\n");
        let spaced = write_file(d.path(), "spaced.csv", b"name , k\nx,1\n");
        assert_eq!(
            rows_of(&spaced, None, &s).unwrap(),
            [r#"{"k":1,"name":"x","amount":null,"tags":null}"#]
        );
        assert_eq!(
            rows_of(&path, None, &s).unwrap(),
            [r#"{"k":1,"name":null,"amount":null,"tags":null}"#]
        );
        // Only a header, or nothing: no rows.
        for text in ["k,name\n", ""] {
            let path = write_file(d.path(), "h.csv", text.as_bytes());
            assert!(rows_of(&path, None, &s).unwrap().is_empty());
        }
    }

    #[test]
    fn csv_errors_name_the_line() {
        let d = dir();
        let s = simple_schema();
        for (text, want) in [
            (
                "k,nmae,x\n1,a,b\n",
                "line 1: header: the input has columns the table does not: 'nmae', 'x' (table columns: k, name, amount, tags)",
            ),
            ("k,k\n1,1\n", "line 1: header: column 'k' appears twice"),
            (
                "k,name\n1,a\n2\n",
                "line 3: 1 cells, the header has 2 columns",
            ),
            (
                "k,name\n1,\"a\nb\n2,c\n",
                "line 2: a quoted cell is not closed before the end of the input",
            ),
            (
                "k,name\n1,\"a\nb\"\nx,c\n",
                "line 4: column 'k', row 1: cannot read \"x\" as BIGINT: not an integer",
            ),
            (
                "k,tags\n1,[a]\n",
                "line 2: column 'tags', row 0: \"[a]\" is not JSON text (not valid JSON: expected value at column 2); nested values are written as JSON",
            ),
            (
                "k,name\n,a\n",
                "line 2: column 'k', row 0: NULL in a NOT NULL field of type BIGINT",
            ),
        ] {
            let path = write_file(d.path(), "e.csv", text.as_bytes());
            let e = err_of(&path, None, &s);
            assert!(
                e.starts_with(&format!("reading input {path}, ")) && e.ends_with(want),
                "{e}"
            );
        }
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
                // t_string, t_bytes; row id 4: t_varbinary).
                for row in &mut want {
                    let mut v: Value = serde_json::from_str(row).unwrap();
                    for c in ["t_string", "t_bytes", "t_varbinary"] {
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

    #[test]
    fn decimals_and_row_kinds_through_csv() {
        // Wide decimals as CSV text are exact; `_ROW_KIND` is a plain string column.
        let d = dir();
        let s = schema(vec![
            Field::new("d", DataType::Decimal128(38, 0), true),
            Field::new("_ROW_KIND", DataType::Utf8, true),
        ]);
        let path = write_file(
            d.path(),
            "k.csv",
            b"_ROW_KIND,d\n+I,99999999999999999999999999999999999999\n-D,-1\n",
        );
        let batches: Vec<RecordBatch> = read_input(&path, None, &s)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
        let d = batches[0]
            .column(0)
            .as_any()
            .downcast_ref::<Decimal128Array>()
            .unwrap();
        assert_eq!(d.value(0), 10_i128.pow(38) - 1);
        assert_eq!(d.value(1), -1);
        assert_eq!(batches[0].schema(), s);
    }
}
