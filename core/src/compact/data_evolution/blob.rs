//! Blob tasks of data-evolution compaction (`blob-compaction.enabled`): the `.blob` files of
//! one BLOB column over one contiguous row-id range, read through the data-evolution read
//! (newest layer first, placeholders falling back to older layers, rows that are
//! placeholders in every layer read as NULL), written again as exactly one `.blob` file
//! holding the values themselves. `BLOB` columns are read as blob descriptors into the input
//! files and copied by reference while the output is written (streamed, see
//! [`crate::io::put`]), so a task never holds its blobs in memory.
//!
//! The output has the range's first row id, the inputs' (min of minimum, max of maximum)
//! sequence numbers, `write_cols` = the column, `file_source` = COMPACT, the latest schema id
//! and no column statistics (as every `.blob` file), and is named
//! `<data-file.prefix><uuid>-0.blob` in the bucket directory.
//!
//! Source: Java `DataEvolutionBlobCompactTask#doCompact` (release-2.0.0).

use std::sync::Arc;

use super::{DataEvolutionCompactTask, DataEvolutionTaskKind};
use crate::blob::files::blob_file_stats;
use crate::commit::{CommitMessage, CompactIncrement};
use crate::error::{Error, Result};
use crate::format::blob::{BlobElementKind, BlobFileWriter};
use crate::io::{Io, next_emitted};
use crate::read::{ReadContext, read_split};
use crate::scan::{DataSplit, Plan};
use crate::spec::data_file::join;
use crate::spec::file_names::DATA_FILE_PREFIX;
use crate::spec::{BinaryRow, DataField, DataFileMeta, FileSource, SimpleStats};
use crate::util::NameSource;

/// Run one blob task of `plan` (the scan plan it was planned on): read, write, `Put`
/// (create-new) the output into `bucket_path`, and build the `COMPACT` message. The path
/// written is added to `written`.
///
/// # Errors
/// [`Error::Invalid`] for a task that is not a blob task, holds fewer than two files, files
/// of different columns or a range with gaps, a column that is not a BLOB-file column of the
/// latest schema, or an output whose row count differs from the range's;
/// [`Error::Unsupported`] with `data-file.external-paths`; read and IO errors.
pub async fn run_blob_task<T>(
    io: &Io<T>,
    plan: &Plan,
    task: &DataEvolutionCompactTask,
    bucket_path: &str,
    seeds: &mut NameSource,
    time_millis: i64,
    written: &mut Vec<String>,
) -> Result<CommitMessage> {
    if task.kind != DataEvolutionTaskKind::Blob || task.files.len() < 2 {
        return Err(Error::invalid(
            "a blob compaction task needs at least two .blob files",
        ));
    }
    let schema = &plan.schema;
    let options = schema.core_options();
    if options
        .get("data-file.external-paths")
        .is_some_and(|v| !v.trim().is_empty())
    {
        return Err(Error::unsupported(
            "compacting .blob files of a table with 'data-file.external-paths'",
        ));
    }
    let mut files = task.files.clone();
    files.sort_by_key(|f| f.first_row_id);
    let (from, to) = contiguous_range(&files)?;
    let field = blob_field(plan, &files)?;
    let kind = BlobElementKind::try_from_data_type(&field.data_type)?;

    let mut ctx =
        ReadContext::try_new(plan, Some(std::slice::from_ref(&field.name)), None, None, 0)?;
    // A BLOB column is read as descriptors into the input files (relative paths: the URI
    // prefix is empty) and written as references, so the bytes are copied while the output
    // is written, never held (Java reads the inputs with `blob-as-descriptor` too). ARRAY and
    // MAP payloads are read as bytes.
    let by_reference = kind == BlobElementKind::Blob;
    ctx.blob_as_descriptor = by_reference;
    ctx.blob_descriptor_uri_prefix = String::new();
    let split = DataSplit {
        snapshot_id: plan.snapshot.as_ref().map_or(0, |s| s.id),
        partition: task.partition.clone(),
        bucket: 0,
        bucket_path: bucket_path.to_owned(),
        total_buckets: None,
        data_files: files.clone(),
        deletion_files: None,
        raw_convertible: false,
    };
    let mut read = read_split(Arc::new(ctx), split);
    let mut writer = if by_reference {
        BlobFileWriter::with_references()
    } else {
        BlobFileWriter::new()
    };
    while let Some(batch) = next_emitted(io, &mut read).await? {
        let values = batch.column(0);
        for row in 0..batch.num_rows() {
            writer.push_value(values.as_ref(), row, kind)?;
        }
    }
    let rows = writer.row_count();
    let want = to - from + 1;
    if i64::try_from(rows).ok() != Some(want) {
        return Err(Error::invalid(format!(
            "blob compaction of rows [{from}, {to}] read {rows} rows, not {want}"
        )));
    }
    let content = writer.finish_content()?;
    let file_size = content.len();
    let file_name = format!(
        "{}{}-0.blob",
        options.get("data-file.prefix").unwrap_or(DATA_FILE_PREFIX),
        seeds.uuid()
    );
    let path = join(bucket_path, &file_name);
    let file = crate::io::FileToPut {
        path: path.clone(),
        content,
    };
    if !crate::io::put_file(io, file).await? {
        return Err(Error::invalid(format!(
            "blob compaction output {path} already exists (file-name seed reused)"
        )));
    }
    written.push(path);
    let (value_stats, value_stats_cols) = blob_file_stats(&field, &options)?;
    let out = DataFileMeta {
        file_name,
        file_size: file_size as i64,
        row_count: want,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: SimpleStats::empty(),
        value_stats,
        min_sequence_number: files
            .iter()
            .map(|f| f.min_sequence_number)
            .min()
            .unwrap_or(0),
        max_sequence_number: files
            .iter()
            .map(|f| f.max_sequence_number)
            .max()
            .unwrap_or(0),
        schema_id: schema.id,
        level: 0,
        extra_files: Vec::new(),
        creation_time_millis: Some(time_millis),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(FileSource::Compact),
        value_stats_cols,
        external_path: None,
        first_row_id: Some(from),
        write_cols: Some(vec![field.name.clone()]),
        write_cols_sequences: None,
    };
    Ok(CommitMessage {
        partition: task.partition.clone(),
        bucket: 0,
        total_buckets: None,
        data_increment: Default::default(),
        compact_increment: CompactIncrement {
            compact_before: files,
            compact_after: vec![out],
            ..CompactIncrement::default()
        },
    })
}

/// `[from, to]` of files whose ranges overlap or follow each other without a gap (Java
/// `DataEvolutionUtils#checkContiguousRowRange`); `files` sorted by first row id.
fn contiguous_range(files: &[DataFileMeta]) -> Result<(i64, i64)> {
    let mut range: Option<(i64, i64)> = None;
    for f in files {
        let (start, end) = super::row_range(f, false)?;
        range = match range {
            None => Some((start, end)),
            Some((from, to)) if start <= to.saturating_add(1) => Some((from, to.max(end))),
            Some((from, to)) => {
                return Err(Error::invalid(format!(
                    "blob compaction files should have a contiguous row range, but [{from}, \
                     {to}] and {} [{start}, {end}] leave a gap",
                    f.file_name
                )));
            }
        };
    }
    range.ok_or_else(|| Error::invalid("a blob compaction task without files"))
}

/// The task's column in the latest schema: every file's `write_cols[0]`, by field id through
/// its own schema, must be the same BLOB-file column of the latest schema.
fn blob_field(plan: &Plan, files: &[DataFileMeta]) -> Result<DataField> {
    let mut id = None;
    for f in files {
        let column = match f.write_cols.as_deref() {
            Some([c]) => c,
            _ => {
                return Err(Error::invalid(format!(
                    "blob file {} should name exactly one write column",
                    f.file_name
                )));
            }
        };
        let this = plan
            .schemas
            .get(&f.schema_id)
            .and_then(|s| s.field(column))
            .map(|field| field.id)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "blob file {} holds column {column}, which its schema {} does not have",
                    f.file_name, f.schema_id
                ))
            })?;
        match id {
            None => id = Some(this),
            Some(i) if i != this => {
                return Err(Error::invalid(format!(
                    "blob compaction files hold different columns ({} holds field {this}, \
                     others field {i})",
                    f.file_name
                )));
            }
            Some(_) => {}
        }
    }
    let id = id.ok_or_else(|| Error::invalid("a blob compaction task without files"))?;
    plan.schema
        .fields
        .iter()
        .find(|f| f.id == id)
        .filter(|f| BlobElementKind::try_from_data_type(&f.data_type).is_ok())
        .cloned()
        .ok_or_else(|| {
            Error::invalid(format!(
                "field {id} of the blob compaction task is not a BLOB column of the latest schema"
            ))
        })
}
