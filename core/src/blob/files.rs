//! BLOB columns of data-evolution append tables: the normal data file gets the other columns,
//! each BLOB column goes to its own rolling `.blob` files.
//!
//! Source: Java `org.apache.paimon.append.DedicatedFormatRollingFileWriter` (one normal file
//! plus the blob files of its rows; rolling the normal file closes the blob files too),
//! `MultipleBlobFileWriter` (one rolling writer per blob column, rolling at
//! `blob.target-file-size`), `RowDataFileWriter` (the files' `DataFileMeta`),
//! `org.apache.paimon.operation.BlobFileContext` (which columns go to `.blob` files).
//!
//! Layout written for a normal file of `n` rows (see `/spec/data-evolution.md` §3–4):
//!
//! * the normal file holds the non-blob columns and has `write_cols` = their names;
//! * for each blob column, in table order, one or more `.blob` files (`write_cols` = `[column]`)
//!   holding the column's `n` values in row order, rolling when a file's records reach
//!   `blob.target-file-size` (default `target-file-size`);
//! * the commit message lists the normal file, then the blob files of each column in column
//!   order. No file carries a first row id: the commit gives the normal file the next row ids
//!   and each column's blob files the same range, in order
//!   ([`crate::commit::row_tracking::assign_row_tracking`]).
//!
//! A `.blob` file's `DataFileMeta` is that of Java's `RowDataFileWriter` with a `none` stats
//! collector: no column statistics (dense store: empty stats and `value_stats_cols = []`),
//! the table's schema id, `file_source = APPEND`, `delete_row_count = 0`, level 0, and the
//! sequence numbers of a fresh per-file counter (`0 ..= row_count - 1`; data-evolution
//! writers start every file at 0, the commit replaces them with the snapshot id).
//!
//! File names come from the bucket writer's path factory: `<data-file.prefix><uuid>-<n>.blob`
//! with the same UUID and counter as the normal files (Java `DataFilePathFactory#newBlobPath`);
//! a blob file takes its number when its first row is written.
//!
//! Memory: a `.blob` file's records go out as parts of a streamed `Put` once they reach a part
//! ([`crate::encode::parts::FileParts`]), as long as none of its values is a reference (whose
//! bytes are copied when the file is written); finished files wait, with their last bytes,
//! until the normal file closes (the commit lists them after it).

use crate::encode::parts::FileParts;
use crate::io::{FileContent, FileToPut};
use arrow_array::ArrayRef;

use crate::encode::stats::StatsCollector;
use crate::error::{Error, Result};
use crate::format::blob::{BlobElementKind, BlobFileWriter};
use crate::spec::{
    BinaryRow, CoreOptions, DataField, DataFileMeta, DataType, FileSource, SimpleStats,
    TableSchema, TypeKind,
};

/// Which columns of a table go to the normal file and which to `.blob` files.
#[derive(Debug, Clone)]
pub(crate) struct BlobLayout {
    /// Positions (table order) of the columns of the normal file.
    pub(crate) normal_idx: Vec<usize>,
    /// The fields of the normal file.
    pub(crate) normal_fields: Vec<DataField>,
    /// Their names: the normal file's `write_cols`.
    pub(crate) normal_names: Vec<String>,
    columns: Vec<BlobColumn>,
    target_file_size: u64,
    /// The statistics of a `.blob` file (none, per `metadata.stats-dense-store`).
    stats: (SimpleStats, Option<Vec<String>>),
    /// Values that are serialized blob descriptors are file references (input rows); false
    /// for rewrites of stored bytes (compaction), which are never interpreted.
    pub(crate) references: bool,
}

#[derive(Debug, Clone)]
struct BlobColumn {
    /// Position in the table's columns.
    idx: usize,
    name: String,
    kind: BlobElementKind,
}

impl BlobLayout {
    /// The layout of `schema`, `None` when it has no `BLOB`, `ARRAY<BLOB>` or `MAP<K, BLOB>`
    /// column other than those stored inline in the normal file (`blob-descriptor-field`,
    /// `blob.stored-descriptor-fields`, `blob-view-field`: normal columns here, see
    /// [`crate::blob::inline`]; as Java's `BlobFileContext#create`, a table whose BLOB
    /// columns are all inline writes whole-row files). `target_file_size` is the table's
    /// `target-file-size`, the default of `blob.target-file-size`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for BLOB columns (inline ones too) of a table without data
    /// evolution, BLOBs nested elsewhere (e.g. `ROW<BLOB>`); [`Error::Invalid`] for a bad
    /// `blob.target-file-size`, a table whose columns are all blob columns, or a blob
    /// partition key (Java's rules cover inline columns too).
    pub(crate) fn try_new(
        schema: &TableSchema,
        options: &CoreOptions,
        target_file_size: u64,
    ) -> Result<Option<Self>> {
        let inline = crate::blob::validation::blob_inline_fields(options);
        let mut columns = Vec::new();
        let mut normal_idx = Vec::new();
        for (idx, f) in schema.fields.iter().enumerate() {
            match BlobElementKind::try_from_data_type(&f.data_type) {
                Ok(kind) => columns.push(BlobColumn {
                    idx,
                    name: f.name.clone(),
                    kind,
                }),
                Err(_) if contains_blob(&f.data_type) => {
                    return Err(Error::unsupported(format!(
                        "writing column '{}' ({}): a BLOB nested other than in ARRAY<BLOB> or \
                         MAP<K, BLOB>",
                        f.name, f.data_type
                    )));
                }
                Err(_) => normal_idx.push(idx),
            }
        }
        if columns.is_empty() {
            return Ok(None);
        }
        if !options.data_evolution_enabled()? {
            return Err(Error::unsupported(
                "writing BLOB columns to a table without data evolution \
                 (data-evolution.enabled = false)",
            ));
        }
        if normal_idx.is_empty() {
            return Err(Error::invalid(
                "a table with BLOB columns needs other (normal) columns",
            ));
        }
        if let Some(c) = columns
            .iter()
            .find(|c| schema.partition_keys.contains(&c.name))
        {
            return Err(Error::invalid(format!(
                "the BLOB column '{}' cannot be a partition key",
                c.name
            )));
        }
        // Inline columns are normal columns of the normal file.
        let (inline_columns, columns): (Vec<BlobColumn>, Vec<BlobColumn>) =
            columns.into_iter().partition(|c| inline.contains(&c.name));
        if !inline_columns.is_empty() {
            normal_idx.extend(inline_columns.iter().map(|c| c.idx));
            normal_idx.sort_unstable();
        }
        if columns.is_empty() {
            return Ok(None);
        }
        let target_file_size = match options.get("blob.target-file-size") {
            None => target_file_size,
            Some(v) => crate::spec::options::parse_memory_size(v)
                .ok()
                .and_then(|b| u64::try_from(b).ok())
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "option 'blob.target-file-size' = '{v}' is not a memory size"
                    ))
                })?,
        };
        // Statistics do not depend on the rows: compute them once, on the first blob field.
        let stats = blob_file_stats(&schema.fields[columns[0].idx], options)?;
        let normal_fields: Vec<DataField> = normal_idx
            .iter()
            .map(|i| schema.fields[*i].clone())
            .collect();
        let normal_names = normal_fields.iter().map(|f| f.name.clone()).collect();
        Ok(Some(BlobLayout {
            normal_idx,
            normal_fields,
            normal_names,
            columns,
            target_file_size,
            stats,
            references: true,
        }))
    }

    /// Whether `name` is a column this layout writes to `.blob` files.
    pub(crate) fn is_blob_column(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c.name == name)
    }

    /// The `.blob` files of one BLOB column of a partial-column update of the rows
    /// `first_row_id ..` (one per row of `values`): row `i` holds `values[i]` when `touched`
    /// is set (a null value writes `-1`), else a placeholder (`-2`: "not updated here, read
    /// the older layer"). Rolls at `blob.target-file-size`; each file's `first_row_id` is
    /// `first_row_id` plus the rows of the files before it. Names come from `next_name`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown column or a mask of another length;
    /// [`Error::Unsupported`] for an Arrow type that does not fit the column.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write_update_column(
        &self,
        name: &str,
        values: &ArrayRef,
        touched: &[bool],
        first_row_id: i64,
        schema_id: i64,
        time_millis: i64,
        next_name: &mut dyn FnMut() -> String,
    ) -> Result<Vec<BlobFileOut>> {
        let col = self
            .columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| Error::invalid(format!("'{name}' is not a BLOB column")))?;
        if values.len() != touched.len() {
            return Err(Error::invalid(format!(
                "update of BLOB column '{name}': {} values for {} rows",
                values.len(),
                touched.len()
            )));
        }
        let mut files: Vec<(String, FileContent, u64)> = Vec::new();
        let mut open: Option<(String, BlobFileWriter)> = None;
        for (row, t) in touched.iter().enumerate() {
            let (_, file) =
                open.get_or_insert_with(|| (next_name(), BlobFileWriter::with_references()));
            if *t {
                file.push_value(values.as_ref(), row, col.kind)?;
            } else {
                file.push_placeholder();
            }
            if file.position() >= self.target_file_size
                && let Some((n, f)) = open.take()
            {
                let rows = f.row_count();
                files.push((n, f.finish_content()?, rows));
            }
        }
        if let Some((n, f)) = open.take() {
            let rows = f.row_count();
            files.push((n, f.finish_content()?, rows));
        }
        let mut next_row_id = first_row_id;
        let mut out = Vec::new();
        for (file_name, content, rows) in files {
            let rows = rows as i64;
            out.push(BlobFileOut {
                meta: blob_file_meta(
                    file_name,
                    content.len() as i64,
                    rows,
                    &self.stats,
                    schema_id,
                    time_millis,
                    Some(next_row_id),
                    name.to_owned(),
                ),
                content,
                parts: FileParts::default(),
            });
            next_row_id += rows;
        }
        Ok(out)
    }

    /// The columns of the normal file, out of the table's columns.
    pub(crate) fn normal_columns(&self, columns: &[ArrayRef]) -> Vec<ArrayRef> {
        self.normal_idx
            .iter()
            .map(|i| ArrayRef::clone(&columns[*i]))
            .collect()
    }

    /// Rolling writers for the blob columns of one normal file.
    pub(crate) fn new_files(&self) -> BlobFiles {
        BlobFiles {
            columns: self
                .columns
                .iter()
                .map(|_| RollingBlobColumn::default())
                .collect(),
        }
    }
}

/// The statistics of every `.blob` file of `field` (Java's `none` stats collector): none,
/// laid out per `metadata.stats-dense-store` (dense: empty stats and `value_stats_cols = []`).
///
/// # Errors
/// [`Error::Invalid`] for a bad `metadata.stats-dense-store`.
pub(crate) fn blob_file_stats(
    field: &DataField,
    options: &CoreOptions,
) -> Result<(SimpleStats, Option<Vec<String>>)> {
    let mut none = CoreOptions::from_pairs([("metadata.stats-mode", "none")]);
    if let Some(dense) = options.get("metadata.stats-dense-store") {
        none = none.with("metadata.stats-dense-store", dense);
    }
    StatsCollector::new(std::slice::from_ref(field), &none)?.finish()
}

/// The data file meta of a `.blob` file of `column` (written as Java's blob writer does: an
/// append file of level 0, sequence numbers `0..rows-1`, no keys, `write_cols` the column).
#[allow(clippy::too_many_arguments)]
fn blob_file_meta(
    file_name: String,
    file_size: i64,
    rows: i64,
    stats: &(SimpleStats, Option<Vec<String>>),
    schema_id: i64,
    time_millis: i64,
    first_row_id: Option<i64>,
    column: String,
) -> DataFileMeta {
    let (value_stats, value_stats_cols) = stats.clone();
    DataFileMeta {
        file_name,
        file_size,
        row_count: rows,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: SimpleStats::empty(),
        value_stats,
        min_sequence_number: 0,
        max_sequence_number: rows - 1,
        schema_id,
        level: 0,
        extra_files: Vec::new(),
        creation_time_millis: Some(time_millis),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(FileSource::Append),
        value_stats_cols,
        external_path: None,
        first_row_id,
        write_cols: Some(vec![column]),
        write_cols_sequences: None,
    }
}

/// True if `t` holds a BLOB at any depth.
fn contains_blob(t: &DataType) -> bool {
    match &t.kind {
        TypeKind::Blob => true,
        TypeKind::Array(e) | TypeKind::Multiset(e) => contains_blob(e),
        TypeKind::Map(k, v) => contains_blob(k) || contains_blob(v),
        TypeKind::Row(fields) => fields.iter().any(|f| contains_blob(&f.data_type)),
        _ => false,
    }
}

/// The `.blob` files of one normal file, one rolling writer per blob column.
#[derive(Debug, Default)]
pub(crate) struct BlobFiles {
    columns: Vec<RollingBlobColumn>,
}

#[derive(Debug, Default)]
struct RollingBlobColumn {
    /// The open file: its name, writer and the parts of it sent so far.
    open: Option<(String, BlobFileWriter, FileParts)>,
    /// Finished files: name, content not sent yet, row count, parts sent.
    done: Vec<(String, FileContent, u64, FileParts)>,
}

/// A finished `.blob` file: its metadata (no first row id, and a `file_size` of what is not
/// sent yet: [`FileParts::finish_content`] gives the whole), content not sent yet, and the
/// parts sent while it was written.
#[derive(Debug)]
pub(crate) struct BlobFileOut {
    pub(crate) meta: DataFileMeta,
    pub(crate) content: FileContent,
    pub(crate) parts: FileParts,
}

impl BlobFiles {
    /// Write the blob columns of rows (`columns` are all the table's columns), naming new files
    /// with `next_name` (`<prefix><uuid>-<n>.blob`). Once a file's records reach
    /// `part_bytes`, they go to `parts` as the next part of its streamed `Put` (placed with
    /// `place` at the first one).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an Arrow type that does not fit a column;
    /// [`Error::Invalid`] for duplicate map keys.
    pub(crate) fn write(
        &mut self,
        layout: &BlobLayout,
        columns: &[ArrayRef],
        next_name: &mut dyn FnMut() -> String,
        part_bytes: usize,
        place: &mut dyn FnMut(&str) -> (String, Option<String>),
        parts: &mut Vec<FileToPut>,
    ) -> Result<()> {
        let rows = columns.first().map_or(0, |c| c.len());
        for (col, w) in layout.columns.iter().zip(&mut self.columns) {
            let values = columns
                .get(col.idx)
                .ok_or_else(|| Error::invalid(format!("no input for column '{}'", col.name)))?;
            for row in 0..rows {
                let (name, file, sent) = w.open.get_or_insert_with(|| {
                    let writer = if layout.references {
                        BlobFileWriter::with_references()
                    } else {
                        BlobFileWriter::new()
                    };
                    (next_name(), writer, FileParts::default())
                });
                file.push_value(values.as_ref(), row, col.kind)?;
                if let Some(bytes) = file.take_laid_out(part_bytes) {
                    parts.push(sent.push(bytes, || place(name)));
                }
                if file.position() >= layout.target_file_size {
                    w.roll()?;
                }
            }
        }
        Ok(())
    }

    /// Finish every file: the blob files of each column, columns in table order, each column's
    /// files in row order. `row_count` is the normal file's; every column must have as many.
    ///
    /// # Errors
    /// [`Error::Invalid`] if a column's files do not hold `row_count` rows (a writer bug).
    pub(crate) fn finish(
        mut self,
        layout: &BlobLayout,
        row_count: i64,
        schema_id: i64,
        time_millis: i64,
    ) -> Result<Vec<BlobFileOut>> {
        let mut out = Vec::new();
        for (col, w) in layout.columns.iter().zip(&mut self.columns) {
            w.roll()?;
            let rows: u64 = w.done.iter().map(|(_, _, n, _)| n).sum();
            if i64::try_from(rows).ok() != Some(row_count) {
                return Err(Error::invalid(format!(
                    "blob files of column '{}' hold {rows} rows, the data file {row_count}",
                    col.name
                )));
            }
            for (name, content, rows, parts) in std::mem::take(&mut w.done) {
                let rows = rows as i64;
                out.push(BlobFileOut {
                    meta: blob_file_meta(
                        name,
                        content.len() as i64,
                        rows,
                        &layout.stats,
                        schema_id,
                        time_millis,
                        None,
                        col.name.clone(),
                    ),
                    content,
                    parts,
                });
            }
        }
        Ok(out)
    }

    /// Paths of the files whose first parts went out and whose end did not (uploads to abort
    /// on a failure).
    pub(crate) fn open_uploads(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.columns {
            out.extend(
                c.open
                    .iter()
                    .filter_map(|(_, _, p)| p.path())
                    .map(str::to_owned),
            );
            out.extend(
                c.done
                    .iter()
                    .filter_map(|(_, _, _, p)| p.path())
                    .map(str::to_owned),
            );
        }
        out
    }
}

impl RollingBlobColumn {
    fn roll(&mut self) -> Result<()> {
        if let Some((name, file, parts)) = self.open.take() {
            let rows = file.row_count();
            self.done.push((name, file.finish_content()?, rows, parts));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
