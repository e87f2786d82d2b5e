//! `scan`: read rows of a table and write them as a human table, JSON lines, CSV or an Arrow
//! IPC stream.

use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, MapArray, RecordBatch, StringArray, StructArray};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use clap::{Args, ValueEnum};
use futures::StreamExt;
use paimon_native::Table;

use super::error_chain;

/// Arguments of `scan`.
#[derive(Debug, Args)]
pub(crate) struct ScanArgs {
    /// Table directory or URL (s3://, gs://, az://, abfs://, http(s)://, file://).
    table: String,
    /// Read this snapshot id instead of the latest.
    #[arg(long, value_name = "N", conflicts_with_all = ["tag", "timestamp_millis"])]
    snapshot: Option<i64>,
    /// Read the snapshot of this tag.
    #[arg(long, value_name = "T", conflicts_with = "timestamp_millis")]
    tag: Option<String>,
    /// Read the latest snapshot committed at or before this time (epoch milliseconds).
    #[arg(long, value_name = "MILLIS", allow_negative_numbers = true)]
    timestamp_millis: Option<i64>,
    /// Comma-separated output columns (may name _ROW_ID on row-tracking tables).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Row filter, e.g. "k > 2 AND name IS NOT NULL" (see `Predicate::parse`).
    #[arg(long = "where", value_name = "EXPR")]
    filter: Option<String>,
    /// Return at most N rows.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Output format (default: table; jsonl with --json).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Rows per batch read.
    #[arg(long, value_name = "N")]
    batch_size: Option<usize>,
    /// Splits (parts) read concurrently (default: the cores, 2 to 4); fewer use less memory.
    #[arg(long, value_name = "N")]
    splits_in_flight: Option<usize>,
    /// Read-ahead budget in MiB for decoded batches of the parts behind the one being
    /// written (default 4).
    #[arg(long, value_name = "MIB")]
    read_ahead_mib: Option<usize>,
    /// Data files in MiB that the parts read concurrently may hold together; the first part
    /// always runs (default 16).
    #[arg(long, value_name = "MIB")]
    in_flight_mib: Option<u64>,
    /// Only rows with these `_ROW_ID`s (row-tracking tables): ids and inclusive ranges,
    /// e.g. `0-9,42`.
    #[arg(long, value_name = "RANGES")]
    row_ids: Option<String>,
    /// Blob columns as serialized blob descriptors instead of bytes.
    #[arg(long)]
    blob_as_descriptor: bool,
    /// Read this branch (`branch/branch-NAME/`) instead of main.
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
}

/// Output formats of `scan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Aligned columns for people (long cells truncated, wide rows split).
    Table,
    /// One JSON object per row.
    Jsonl,
    /// CSV with a header line (nested values as text).
    Csv,
    /// Arrow IPC stream (schema first, also without rows).
    Arrow,
    /// Only the number of rows read, one line (the batches are decoded, merged and dropped).
    Count,
}

/// Why `scan` stopped early.
pub(crate) enum Fail {
    /// The reader of our output went away (`| head`): not an error.
    Quiet,
    /// A message for stderr.
    Msg(String),
}

impl From<String> for Fail {
    fn from(s: String) -> Self {
        Fail::Msg(s)
    }
}

fn io_fail(what: &str, e: std::io::Error) -> Fail {
    if e.kind() == ErrorKind::BrokenPipe {
        Fail::Quiet
    } else {
        Fail::Msg(format!("cannot write {what}: {e}"))
    }
}

pub(crate) fn arrow_fail(what: &str, e: ArrowError) -> Fail {
    match e {
        ArrowError::IoError(_, io) => io_fail(what, io),
        ArrowError::ExternalError(inner) => match inner.downcast::<std::io::Error>() {
            Ok(io) => io_fail(what, *io),
            Err(inner) => Fail::Msg(format!("cannot write {what}: {inner}")),
        },
        other => {
            // arrow-csv wraps IO failures in text.
            if other.to_string().contains("Broken pipe") {
                Fail::Quiet
            } else {
                Fail::Msg(format!("cannot write {what}: {other}"))
            }
        }
    }
}

/// Run `scan`; `Err` holds the message for stderr (exit code 1). A closed stdout is success.
pub(crate) async fn run(args: ScanArgs, json: bool, io_stats: bool) -> Result<(), String> {
    match scan(args, json, io_stats).await {
        Ok(()) | Err(Fail::Quiet) => Ok(()),
        Err(Fail::Msg(m)) => Err(m),
    }
}

async fn scan(args: ScanArgs, json: bool, io_stats: bool) -> Result<(), Fail> {
    let format = args
        .format
        .unwrap_or(if json { Format::Jsonl } else { Format::Table });
    let mut table = Table::open(&args.table)
        .await
        .map_err(|e| error_chain(&e))?;
    if let Some(b) = &args.branch {
        table = table.with_branch(b).await.map_err(|e| error_chain(&e))?;
    }
    let mut scan = table.scan();
    if let Some(id) = args.snapshot {
        scan = scan.with_snapshot_id(id);
    } else if let Some(tag) = &args.tag {
        scan = scan.with_tag(tag.clone());
    } else if let Some(t) = args.timestamp_millis {
        scan = scan.with_timestamp_millis(t);
    }
    if let Some(cols) = &args.columns {
        scan = scan.with_projection(cols.iter().map(|c| c.trim().to_string()));
    }
    if let Some(f) = &args.filter {
        scan = scan.with_filter(f.as_str());
    }
    if let Some(n) = args.limit {
        scan = scan.with_limit(n);
    }
    if let Some(n) = args.batch_size {
        scan = scan.with_batch_size(n);
    }
    if let Some(n) = args.splits_in_flight {
        scan = scan.with_splits_in_flight(n);
    }
    if let Some(n) = args.in_flight_mib {
        scan = scan.with_in_flight_bytes(n.saturating_mul(1 << 20));
    }
    if let Some(n) = args.read_ahead_mib {
        scan = scan.with_read_ahead_bytes(n.saturating_mul(1 << 20));
    }
    if let Some(r) = &args.row_ids {
        let ranges = paimon_kernel::spec::row_range::parse_row_ranges(r)
            .map_err(|e| format!("--row-ids: {e}"))?;
        scan = scan.with_row_ranges(ranges);
    }
    if args.blob_as_descriptor {
        scan = scan.with_blob_as_descriptor(true);
    }
    let mut stream = scan.to_stream().await.map_err(|e| error_chain(&e))?;
    let schema = stream.schema();

    let (sink, what): (Box<dyn Write>, String) = match &args.output {
        Some(path) => {
            let file =
                File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            (Box::new(file), path.display().to_string())
        }
        None => (Box::new(std::io::stdout().lock()), "stdout".to_string()),
    };
    let out = BufWriter::with_capacity(1 << 16, sink);
    let mut writer = Writer::new(format, out, &schema).map_err(|e| arrow_fail(&what, e))?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(|e| error_chain(&e))?;
        writer.write(&batch).map_err(|e| arrow_fail(&what, e))?;
    }
    writer.finish().map_err(|e| arrow_fail(&what, e))?;
    if io_stats {
        super::print_io_stats(&table);
    }
    Ok(())
}

/// The writer of one output format (one per run: the size difference does not matter).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Writer<W: Write> {
    Arrow(arrow_ipc::writer::StreamWriter<W>),
    Jsonl(arrow_json::LineDelimitedWriter<W>),
    Csv(arrow_csv::Writer<W>),
    Table(TableWriter<W>),
    Count(W, u64),
}

impl<W: Write> Writer<W> {
    pub(crate) fn new(format: Format, out: W, schema: &SchemaRef) -> Result<Self, ArrowError> {
        Ok(match format {
            Format::Arrow => Writer::Arrow(arrow_ipc::writer::StreamWriter::try_new(out, schema)?),
            Format::Jsonl => Writer::Jsonl(
                arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(out),
            ),
            Format::Csv => {
                Writer::Csv(arrow_csv::WriterBuilder::new().with_header(true).build(out))
            }
            Format::Table => Writer::Table(TableWriter::new(out, schema)),
            Format::Count => Writer::Count(out, 0),
        })
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        match self {
            Writer::Arrow(w) => w.write(batch),
            Writer::Jsonl(w) => w.write(&json_safe(batch)?),
            Writer::Csv(w) => w.write(&csv_safe(batch)?),
            Writer::Table(w) => w.write(batch),
            Writer::Count(_, rows) => {
                *rows += batch.num_rows() as u64;
                Ok(())
            }
        }
    }

    pub(crate) fn finish(self) -> Result<(), ArrowError> {
        match self {
            Writer::Arrow(mut w) => {
                w.finish()?;
                w.get_mut().flush()?;
            }
            Writer::Jsonl(mut w) => {
                w.finish()?;
                w.get_mut().flush()?;
            }
            Writer::Csv(w) => {
                let mut out = w.into_inner();
                out.flush()?;
            }
            Writer::Table(w) => w.finish()?,
            Writer::Count(mut out, rows) => {
                writeln!(out, "{rows}")?;
                out.flush()?;
            }
        }
        Ok(())
    }
}

/// `batch` with every top-level map column whose keys are not strings given string keys
/// (arrow-json writes maps as JSON objects, which need them).
fn json_safe(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    // JSON has no NaN or infinity; arrow-json would write them as null, which loses data.
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if has_non_finite(column.as_ref()) {
            return Err(ArrowError::InvalidArgumentError(format!(
                "column {} holds NaN or infinite values, which JSON cannot represent; \
                 use --format arrow or csv",
                field.name()
            )));
        }
    }
    if !batch
        .columns()
        .iter()
        .any(|c| matches!(c.data_type(), DataType::Map(..)))
    {
        return Ok(batch.clone());
    }
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let column = match column.data_type() {
            DataType::Map(..) => string_keyed_map(column.as_map())?,
            _ => Arc::clone(column),
        };
        fields.push(Field::new(
            field.name(),
            column.data_type().clone(),
            field.is_nullable(),
        ));
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// True if `array` (or a nested child) holds a NaN or infinite float.
fn has_non_finite(array: &dyn Array) -> bool {
    use arrow_array::types::{Float32Type, Float64Type};
    let data = array.to_data();
    let array = arrow_array::make_array(data.clone());
    match array.data_type() {
        DataType::Float32 => array
            .as_primitive::<Float32Type>()
            .iter()
            .any(|v| v.is_some_and(|v| !v.is_finite())),
        DataType::Float64 => array
            .as_primitive::<Float64Type>()
            .iter()
            .any(|v| v.is_some_and(|v| !v.is_finite())),
        _ => data
            .child_data()
            .iter()
            .any(|c| has_non_finite(arrow_array::make_array(c.clone()).as_ref())),
    }
}

fn string_keyed_map(map: &MapArray) -> Result<ArrayRef, ArrowError> {
    let keys = map.keys();
    if matches!(keys.data_type(), DataType::Utf8 | DataType::LargeUtf8) {
        return Ok(Arc::new(map.clone()));
    }
    let keys = arrow_cast::cast(keys, &DataType::Utf8)?;
    let values = Arc::clone(map.values());
    let entries_fields = map.entries().fields();
    let key_field = Field::new(entries_fields[0].name(), DataType::Utf8, false);
    let value_field = Arc::clone(&entries_fields[1]);
    let entries = StructArray::try_new(
        vec![Arc::new(key_field), value_field].into(),
        vec![keys, values],
        None,
    )?;
    let DataType::Map(entry_field, ordered) = map.data_type() else {
        return Ok(Arc::new(map.clone()));
    };
    let entry_field = Field::new(
        entry_field.name(),
        entries.data_type().clone(),
        entry_field.is_nullable(),
    );
    Ok(Arc::new(MapArray::try_new(
        Arc::new(entry_field),
        map.offsets().clone(),
        entries,
        map.nulls().cloned(),
        *ordered,
    )?))
}

/// `batch` with nested and binary columns rendered as text (CSV has no nesting).
fn csv_safe(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    if !batch.columns().iter().any(|c| needs_text(c.data_type())) {
        return Ok(batch.clone());
    }
    let options = FormatOptions::default().with_null("null");
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if needs_text(column.data_type()) {
            let f = ArrayFormatter::try_new(column.as_ref(), &options)?;
            let text: StringArray = (0..column.len())
                .map(|i| (!column.is_null(i)).then(|| f.value(i).to_string()))
                .collect();
            fields.push(Field::new(field.name(), DataType::Utf8, true));
            columns.push(Arc::new(text));
        } else {
            fields.push(field.as_ref().clone());
            columns.push(Arc::clone(column));
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

fn needs_text(t: &DataType) -> bool {
    t.is_nested()
}

/// Widest cell shown in a human table; longer values end in `…`.
const MAX_CELL_CHARS: usize = 48;
/// Rows per human-table page (header repeated).
const PAGE_ROWS: usize = 1000;

/// Human table output: pages of at most [`PAGE_ROWS`] rows; columns that do not fit the width
/// (`$COLUMNS`, else 120) go to further tables of the same rows.
pub(crate) struct TableWriter<W: Write> {
    out: W,
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
    total: u64,
    width: usize,
}

impl<W: Write> TableWriter<W> {
    fn new(out: W, schema: &SchemaRef) -> Self {
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse::<usize>().ok())
            .filter(|w| *w >= 20)
            .unwrap_or(120);
        TableWriter {
            out,
            headers: schema.fields().iter().map(|f| f.name().clone()).collect(),
            rows: Vec::new(),
            total: 0,
            width,
        }
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        let options = FormatOptions::default().with_null("NULL");
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            let cells = batch
                .columns()
                .iter()
                .zip(&formatters)
                .map(|(col, f)| cell(col.as_ref(), f, row))
                .collect();
            self.rows.push(cells);
            self.total += 1;
            if self.rows.len() >= PAGE_ROWS {
                self.flush_page()?;
            }
        }
        Ok(())
    }

    fn flush_page(&mut self) -> Result<(), ArrowError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let text = render_page(&self.headers, &self.rows, self.width);
        self.rows.clear();
        self.out.write_all(text.as_bytes())?;
        Ok(())
    }

    fn finish(mut self) -> Result<(), ArrowError> {
        if self.total == 0 {
            self.rows.clear();
            let text = render_page(&self.headers, &self.rows, self.width);
            self.out.write_all(text.as_bytes())?;
        } else {
            self.flush_page()?;
        }
        let plural = if self.total == 1 { "" } else { "s" };
        writeln!(self.out, "({} row{plural})", self.total)?;
        self.out.flush()?;
        Ok(())
    }
}

/// One cell: blobs as `<blob N bytes>`, control characters escaped, long text truncated.
fn cell(column: &dyn Array, f: &ArrayFormatter<'_>, row: usize) -> String {
    if column.is_null(row) {
        return "NULL".to_string();
    }
    if let DataType::LargeBinary = column.data_type() {
        return format!(
            "<blob {} bytes>",
            column.as_binary::<i64>().value(row).len()
        );
    }
    let text = f.value(row).to_string();
    let mut out = String::new();
    for (chars, c) in text.chars().enumerate() {
        if chars >= MAX_CELL_CHARS {
            out.push('…');
            return out;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// Render rows as one or more aligned tables, splitting columns to fit `width`.
fn render_page(headers: &[String], rows: &[Vec<String>], width: usize) -> String {
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .chain([headers[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let numeric: Vec<bool> = (0..headers.len())
        .map(|i| {
            rows.iter().all(|r| {
                r.get(i)
                    .is_none_or(|c| c == "NULL" || c.parse::<f64>().is_ok())
            })
        })
        .collect();
    // Column groups that fit the width (at least one column each).
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut used = 0;
    for (i, w) in widths.iter().enumerate() {
        let extra = if current.is_empty() { *w } else { w + 2 };
        if !current.is_empty() && used + extra > width {
            groups.push(std::mem::take(&mut current));
            used = 0;
        }
        used += if current.is_empty() { *w } else { w + 2 };
        current.push(i);
    }
    if !current.is_empty() || groups.is_empty() {
        groups.push(current);
    }
    let mut out = String::new();
    for (g, cols) in groups.iter().enumerate() {
        if g > 0 {
            out.push('\n');
        }
        let line = |cells: &dyn Fn(usize) -> String, header: bool| {
            let mut s = String::new();
            for (n, &i) in cols.iter().enumerate() {
                let c = cells(i);
                let pad = widths[i].saturating_sub(c.chars().count());
                if n > 0 {
                    s.push_str("  ");
                }
                if numeric[i] && !header {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(&c);
                } else {
                    s.push_str(&c);
                    s.push_str(&" ".repeat(pad));
                }
            }
            let mut s = s.trim_end().to_string();
            s.push('\n');
            s
        };
        out.push_str(&line(&|i| headers[i].clone(), true));
        out.push_str(&line(&|i| "-".repeat(widths[i]), true));
        for row in rows {
            out.push_str(&line(&|i| row.get(i).cloned().unwrap_or_default(), false));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn wide_rows_split_into_several_tables_and_cells_truncate() {
        let headers: Vec<String> = ["id", "a", "b"].iter().map(|s| s.to_string()).collect();
        let rows = vec![vec!["1".to_string(), "x".repeat(15), "y".repeat(15)]];
        let text = render_page(&headers, &rows, 20);
        assert_eq!(
            text,
            format!(
                "id  a\n--  {}\n 1  {}\n\nb\n{}\n{}\n",
                "-".repeat(15),
                "x".repeat(15),
                "-".repeat(15),
                "y".repeat(15)
            )
        );
        let long = StringArray::from(vec![Some("z".repeat(100)), None, Some("a\nb".into())]);
        let f = ArrayFormatter::try_new(&long, &FormatOptions::default()).unwrap();
        assert_eq!(
            cell(&long, &f, 0),
            format!("{}…", "z".repeat(MAX_CELL_CHARS))
        );
        assert_eq!(cell(&long, &f, 1), "NULL");
        assert_eq!(cell(&long, &f, 2), "a\\nb");
    }
}
