//! Rows a user hands to a writer, as Arrow record batches: an Arrow IPC stream or file, a
//! Parquet file, CSV or JSON lines, read from bytes in hand or any [`BufRead`]. Shared by the
//! CLI's `write`/`update` input (files, stdin) and the browser host (a dropped file). Pure: the
//! host opens the input and hands over its bytes.
//!
//! * **Arrow IPC** ([`InputFormat::Arrow`]; `.arrow`, `.arrows`, `.ipc`): a stream, or a file
//!   when the bytes start with [`ARROW_FILE_MAGIC`]. Batches come back as written.
//! * **Parquet** ([`InputFormat::Parquet`]; `.parquet`): read a row group at a time through the
//!   core's Parquet reader ([`DataFileReader`], arrow-rs' push decoder), batches of
//!   [`BATCH_ROWS`] rows. Parquet needs its footer: the host answers reads at any offset
//!   ([`parquet_batches`]).
//! * **JSON lines** ([`InputFormat::Jsonl`]; `.jsonl`, `.ndjson`, `.json`): one JSON object per
//!   line keyed by column name, values in the canonical JSON of [`crate::canonical`] or the
//!   hand-written forms of [`crate::canonical::parse`]; blank lines are skipped. Numbers are
//!   read from their text where the column is numeric, so `DECIMAL(38, 10)` numbers keep every
//!   digit.
//! * **CSV** ([`InputFormat::Csv`]; `.csv`): a header line of column names, then one record per
//!   row; each cell is the canonical value as text: strings and binaries (hex) as they are,
//!   nested values (ARRAY, MAP, ROW, VARIANT) as their JSON text, an empty unquoted cell is
//!   NULL and `""` the empty string. RFC 4180 quoting (`"a,b"`, `"say ""hi"""`, line breaks
//!   inside quotes). A UTF-8 byte order mark before the header is dropped.
//!
//! Arrow and Parquet batches keep their own types (a writer casts them); CSV and JSON lines
//! are converted to exactly the target schema. Columns of the input that the target schema
//! does not have are an error naming them; columns it lacks are left to the writer (NULL for
//! CSV and JSON lines).
//!
//! Every error is an [`Error::Context`] whose context names the input and, for CSV and JSON
//! lines, the 1-based line: `reading input rows.csv, line 3: column 'k', row 1: cannot read
//! "x" as BIGINT: not an integer` (see [`input_error`]). The iterators end after their first
//! error.
//!
//! Round trip: rows written as JSON lines by [`crate::canonical::rows`] read back to the same
//! values (NaN and infinite floats cannot be written as JSON lines).
//!
//! Source: the CLI's input formats; no Java counterpart.

use std::io::{BufRead, Cursor};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use serde_json::{Map, Value};

use crate::canonical::parse::batch_from_rows_at;
use crate::format::data_file::{DataFileReader, FileFormat};
use crate::io::{Io, IoAnswer, IoErrorKind, IoOp, Machine, Step, Work};
use crate::{Error, Result};

/// Rows per batch read from CSV, JSON lines and Parquet.
pub const BATCH_ROWS: usize = 8192;

/// The first bytes of an Arrow IPC file (an IPC stream starts otherwise).
pub const ARROW_FILE_MAGIC: &[u8] = b"ARROW1";

/// The formats of row input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
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
    /// The format named `name`: `arrow` (also `ipc`, `arrows`), `parquet`, `csv`, `jsonl` (also
    /// `ndjson`, `json`); any case. `None` for another name.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "arrow" | "arrows" | "ipc" => Self::Arrow,
            "parquet" => Self::Parquet,
            "csv" => Self::Csv,
            "jsonl" | "ndjson" | "json" => Self::Jsonl,
            _ => return None,
        })
    }

    /// The format of a file from the extension of its name (`.arrow`/`.arrows`/`.ipc`,
    /// `.parquet`, `.csv`, `.jsonl`/`.ndjson`/`.json`; any case); `path` may have directories
    /// (`/` or `\` separated). `None` for other extensions and names without one.
    pub fn from_path(path: &str) -> Option<Self> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        Self::from_name(name.rsplit_once('.')?.1)
    }
}

/// `source` as an error of the input `name`, at `line` (1-based) if known: an
/// [`Error::Context`] with the context `reading input NAME[, line N]`.
pub fn input_error(name: &str, line: Option<u64>, source: Error) -> Error {
    let context = match line {
        Some(l) => format!("reading input {name}, line {l}"),
        None => format!("reading input {name}"),
    };
    Error::context(context, source)
}

/// A failure of reading the input `name` itself (`NotFound`, a broken pipe, text that is not
/// UTF-8), at `line` if known.
fn io_error(name: &str, line: Option<u64>, e: &std::io::Error) -> Error {
    let kind = match e.kind() {
        std::io::ErrorKind::NotFound => IoErrorKind::NotFound,
        _ => IoErrorKind::Other,
    };
    input_error(name, line, Error::io(name, kind, e.to_string()))
}

/// Check that every column of `input_schema` (the schema an Arrow or Parquet input declares)
/// is a column of `schema` (the table's input columns).
///
/// # Errors
/// [`Error::Invalid`] under [`input_error`] naming the columns `schema` does not have and the
/// columns it has: `reading input NAME: the input has columns the table does not: 'x', 'y'
/// (table columns: a, b)`.
pub fn check_columns(name: &str, input_schema: &Schema, schema: &Schema) -> Result<()> {
    let unknown: Vec<&str> = input_schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| schema.field_with_name(n).is_err())
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(input_error(
        name,
        None,
        Error::invalid(format!(
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

/// Every batch of the input `name` in `format`, from its complete bytes (a file dropped on a
/// page, stdin read to its end). CSV and JSON lines come back in exactly `schema`, Arrow IPC
/// and Parquet in the input's own types (see the module docs).
///
/// Arrow IPC is a file when `bytes` start with [`ARROW_FILE_MAGIC`], else a stream; Parquet is
/// read through [`parquet_batches`]; CSV and JSON lines through [`csv_batches`] and
/// [`jsonl_batches`].
///
/// # Errors
/// As [`arrow_ipc_batches`] (also for bytes that are not Arrow IPC: [`Error::Arrow`]),
/// [`parquet_batches`], [`csv_batches`] and [`jsonl_batches`]: an [`Error::Context`] naming
/// `name` (and the line for CSV and JSON lines).
pub fn batches_from_bytes(
    name: &str,
    bytes: Bytes,
    format: InputFormat,
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    match format {
        InputFormat::Arrow => {
            let arrow_err = |e| input_error(name, None, Error::arrow("Arrow IPC", e));
            if bytes.starts_with(ARROW_FILE_MAGIC) {
                let reader = arrow_ipc::reader::FileReader::try_new(Cursor::new(bytes), None)
                    .map_err(arrow_err)?;
                arrow_ipc_batches(name, reader, schema)?.collect()
            } else {
                let reader = arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None)
                    .map_err(arrow_err)?;
                arrow_ipc_batches(name, reader, schema)?.collect()
            }
        }
        InputFormat::Parquet => {
            let size_bytes = bytes.len() as u64;
            // `parquet_batches` asks only for ranges inside the `size_bytes` bytes.
            let read = move |range: Range<u64>| -> std::io::Result<Bytes> {
                Ok(bytes.slice(range.start as usize..range.end as usize))
            };
            parquet_batches(name, size_bytes, read, schema)?.collect()
        }
        InputFormat::Csv => csv_batches(name, Cursor::new(bytes), Arc::clone(schema))?.collect(),
        InputFormat::Jsonl => jsonl_batches(name, Cursor::new(bytes), Arc::clone(schema)).collect(),
    }
}

// --- Arrow IPC ---

/// The batches of an Arrow IPC reader (`arrow_ipc::reader::StreamReader` or `FileReader`) of
/// the input `name`, after checking its schema against `schema` (the table's input columns).
/// Batches come back as written, in the input's own types.
///
/// # Errors
/// As [`check_columns`]. The iterator's errors are [`Error::Arrow`] (context `Arrow IPC`: a
/// truncated stream, a bad message) under [`input_error`].
pub fn arrow_ipc_batches<I: RecordBatchReader>(
    name: &str,
    reader: I,
    schema: &Schema,
) -> Result<ArrowIpcBatches<I>> {
    check_columns(name, &reader.schema(), schema)?;
    Ok(ArrowIpcBatches {
        name: name.to_string(),
        inner: reader,
    })
}

/// An Arrow IPC reader with errors naming the input; see [`arrow_ipc_batches`].
#[derive(Debug)]
pub struct ArrowIpcBatches<I> {
    name: String,
    inner: I,
}

impl<I: RecordBatchReader> Iterator for ArrowIpcBatches<I> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next()?
                .map_err(|e| input_error(&self.name, None, Error::arrow("Arrow IPC", e))),
        )
    }
}

// --- Parquet ---

/// The batches of a Parquet input `name` of `size_bytes` bytes, read a row group at a time
/// through [`DataFileReader`] in batches of [`BATCH_ROWS`] rows, in the file's own types.
/// `read` answers a byte range of the input; it is only asked for ranges inside
/// `0..size_bytes` (the footer first, then the column chunks of each row group), one at a
/// time. In memory: `move |r| Ok(bytes.slice(r.start as usize..r.end as usize))`.
///
/// The file's schema is checked against `schema` (the table's input columns) before any row
/// is read.
///
/// # Errors
/// [`Error::Corrupt`] (format `parquet`, path `name`) when the bytes are not Parquet, an
/// [`Error::Io`] of kind `Other` with its text when `read` fails, or as [`check_columns`];
/// each under [`input_error`]. The iterator's errors are the same; it ends after one.
pub fn parquet_batches<F>(
    name: &str,
    size_bytes: u64,
    read: F,
    schema: &SchemaRef,
) -> Result<ParquetBatches<F>>
where
    F: FnMut(Range<u64>) -> std::io::Result<Bytes>,
{
    let path = name.to_string();
    let machine = Machine::new(
        "read_input_parquet",
        move |io: Io<RecordBatch>| async move {
            let mut reader = DataFileReader::open(
                &io,
                &path,
                size_bytes,
                FileFormat::Parquet,
                None,
                BATCH_ROWS,
            )
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
        name: name.to_string(),
        machine,
        read,
        size_bytes,
        done: false,
    };
    match batches.next() {
        Some(Ok(empty)) => check_columns(name, &empty.schema(), schema)?,
        Some(Err(e)) => return Err(e),
        None => {}
    }
    Ok(batches)
}

/// Drives the core's Parquet reader over an input's bytes; see [`parquet_batches`].
pub struct ParquetBatches<F> {
    name: String,
    machine: Machine<RecordBatch>,
    read: F,
    size_bytes: u64,
    done: bool,
}

impl<F> std::fmt::Debug for ParquetBatches<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetBatches")
            .field("name", &self.name)
            .field("size_bytes", &self.size_bytes)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<F> ParquetBatches<F>
where
    F: FnMut(Range<u64>) -> std::io::Result<Bytes>,
{
    /// The answer to `op`: the bytes of its range, checked to lie inside the input.
    fn answer(&mut self, op: &IoOp) -> IoAnswer {
        let IoOp::Read { range, .. } = op else {
            return IoAnswer::error(IoErrorKind::Unsupported);
        };
        let size = self.size_bytes;
        let range = range.clone().unwrap_or(0..size);
        if range.start > range.end || range.end > size {
            return IoAnswer::Error {
                kind: IoErrorKind::Other,
                detail: format!("range {range:?} outside the {size} bytes of the input"),
            };
        }
        match (self.read)(range) {
            Ok(bytes) => IoAnswer::bytes(bytes),
            Err(e) => IoAnswer::Error {
                kind: IoErrorKind::Other,
                detail: e.to_string(),
            },
        }
    }
}

impl<F> Iterator for ParquetBatches<F>
where
    F: FnMut(Range<u64>) -> std::io::Result<Bytes>,
{
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let step = self.machine.step().and_then(|step| {
                if let Step::NeedIo(requests) = &step {
                    for r in requests {
                        let answer = self.answer(&r.op);
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
                    return Some(Err(input_error(&self.name, None, e)));
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
    name: &str,
    rows: &[Map<String, Value>],
    lines: &[u64],
    schema: &SchemaRef,
    first_row: usize,
) -> Result<RecordBatch> {
    match batch_from_rows_at(rows, schema, first_row) {
        Ok(batch) => Ok(batch),
        Err(e) => {
            // Find the row: the conversion goes a column at a time and cannot say which line.
            for (i, (row, line)) in rows.iter().zip(lines).enumerate() {
                if let Err(e) = batch_from_rows_at(std::slice::from_ref(row), schema, first_row + i)
                {
                    return Err(input_error(name, Some(*line), e));
                }
            }
            Err(input_error(name, None, e))
        }
    }
}

/// The batches of the JSON lines input `name` read from `reader`, [`BATCH_ROWS`] rows per
/// batch, in exactly `schema` (the table's input columns): each line is a JSON object keyed by
/// column name (a missing column is NULL), blank lines are skipped. See the module docs.
///
/// The iterator is `Send` when `R` is.
///
/// # Errors
/// The iterator's errors are under [`input_error`] with the line: [`Error::Invalid`] for text
/// that is not JSON (`not valid JSON: trailing comma at column 9`), a line that is not an
/// object, a key that is not a column, a value its column cannot hold (the messages of
/// [`crate::canonical::parse`], naming the column and the 0-based row); [`Error::Io`] when
/// `reader` fails or the text is not UTF-8. The iterator ends after one.
pub fn jsonl_batches<R: BufRead>(name: &str, reader: R, schema: SchemaRef) -> JsonlBatches<R> {
    JsonlBatches {
        name: name.to_string(),
        reader,
        schema,
        line: String::new(),
        line_no: 0,
        rows_read: 0,
        done: false,
    }
}

/// JSON lines, [`BATCH_ROWS`] rows per batch; see [`jsonl_batches`].
#[derive(Debug)]
pub struct JsonlBatches<R> {
    name: String,
    reader: R,
    schema: SchemaRef,
    line: String,
    /// Lines read so far.
    line_no: u64,
    /// Rows returned so far.
    rows_read: usize,
    done: bool,
}

impl<R: BufRead> JsonlBatches<R> {
    fn fail(&mut self, e: Error) -> Option<Result<RecordBatch>> {
        self.done = true;
        Some(Err(e))
    }
}

impl<R: BufRead> Iterator for JsonlBatches<R> {
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
                    let e = io_error(&self.name, Some(self.line_no + 1), &e);
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
                    let e = input_error(&self.name, Some(self.line_no), e);
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
        match rows_to_batch(&self.name, &rows, &lines, &self.schema, first_row) {
            Ok(batch) => Some(Ok(batch)),
            Err(e) => self.fail(e),
        }
    }
}

/// One line of JSON lines: an object, its numbers read exactly (see [`protect_numbers`]).
fn json_row(text: &str, schema: &Schema) -> Result<Map<String, Value>> {
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
        return Err(Error::invalid(format!(
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

fn json_error(e: serde_json::Error) -> Error {
    let text = e.to_string();
    // The message ends in " at line 1 column N"; the line is the input's.
    let cause = text.split(" at line ").next().unwrap_or(&text);
    Error::invalid(format!("not valid JSON: {cause} at column {}", e.column()))
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
///
/// Never panics: `i` only grows, every index is checked against the length, and slices of
/// `text` start and end at ASCII bytes outside strings (char boundaries).
fn protect_numbers(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let (mut last, mut i, mut in_string) = (0, 0, false);
    while let Some(&c) = b.get(i) {
        if in_string {
            match c {
                b'\\' if b.get(i + 1..).is_some_and(|r| r.starts_with(b"u0000")) => return None,
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
                while b
                    .get(i)
                    .is_some_and(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                {
                    i += 1;
                }
                let number = text.get(start..i)?;
                if is_json_number(number)
                    && (number.contains(['.', 'e', 'E'])
                        || number.bytes().filter(u8::is_ascii_digit).count() > 18)
                {
                    let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 64));
                    o.push_str(text.get(last..start)?);
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
    o.push_str(text.get(last..)?);
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
    if n == 0 || (n > 1 && b.first() == Some(&b'0')) {
        return false;
    }
    b = b.get(n..).unwrap_or_default();
    if let Some(rest) = b.strip_prefix(b".") {
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        b = rest.get(n..).unwrap_or_default();
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
        b = rest.get(n..).unwrap_or_default();
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
                        Value::Array(pair) => match pair.as_mut_slice() {
                            [key, value] => {
                                restore_numbers(key, k);
                                restore_numbers(value, val);
                            }
                            others => others.iter_mut().for_each(|x| restore_numbers(x, None)),
                        },
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

/// The batches of the CSV input `name` read from `reader`, [`BATCH_ROWS`] rows per batch, in
/// exactly `schema` (the table's input columns). The header is read here: its names are
/// columns of `schema` (a column it lacks is NULL); spaces around a name are dropped when the
/// name is a column only without them. See the module docs for the cells.
///
/// The iterator is `Send` when `R` is.
///
/// # Errors
/// Under [`input_error`] with line 1: [`Error::Invalid`] for a header naming a column twice
/// (`header: column 'k' appears twice`) or columns `schema` does not have (`header: the input
/// has columns the table does not: 'x' (table columns: k, name)`); [`Error::Io`] when `reader`
/// fails or the text is not UTF-8. The iterator's errors name the line a record starts on: a
/// record with another number of cells than the header, a quoted cell not closed before the
/// end, a cell that is not JSON text in a nested column, a value its column cannot hold (the
/// messages of [`crate::canonical::parse`]). The iterator ends after one.
pub fn csv_batches<R: BufRead>(name: &str, reader: R, schema: SchemaRef) -> Result<CsvBatches<R>> {
    let mut rows = CsvBatches {
        name: name.to_string(),
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
    let header_error = |msg: String| Err(input_error(name, Some(line), Error::invalid(msg)));
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

/// CSV rows, [`BATCH_ROWS`] per batch; see [`csv_batches`].
#[derive(Debug)]
pub struct CsvBatches<R> {
    name: String,
    reader: R,
    schema: SchemaRef,
    /// The header's column names, with their fields in `schema`.
    columns: Vec<Field>,
    line: String,
    line_no: u64,
    rows_read: usize,
    done: bool,
}

impl<R: BufRead> CsvBatches<R> {
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
                .map_err(|e| io_error(&self.name, Some(self.line_no + 1), &e))?;
            if n == 0 {
                return match (start, in_quotes) {
                    (None, _) => Ok(None),
                    (Some(s), true) => Err(input_error(
                        &self.name,
                        Some(s),
                        Error::invalid("a quoted cell is not closed before the end of the input"),
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

impl<R: BufRead> Iterator for CsvBatches<R> {
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
                let e = input_error(
                    &self.name,
                    Some(line),
                    Error::invalid(format!(
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
                        let e = input_error(&self.name, Some(line), e);
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
        match rows_to_batch(&self.name, &rows, &lines, &self.schema, first_row) {
            Ok(batch) => Some(Ok(batch)),
            Err(e) => self.fail(e),
        }
    }
}

/// The canonical JSON value of a CSV cell of `field` (row `row` of the input).
fn csv_value(cell: CsvCell, field: &Field, row: usize) -> Result<Value> {
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
        Err(e) => Err(Error::invalid(format!(
            "column '{}', row {row}: {} is not JSON text ({}); nested values are written as JSON",
            field.name(),
            serde_json::to_string(&short(&cell.text)).unwrap_or_default(),
            json_error(e)
        ))),
    }
}

#[cfg(test)]
mod tests;
