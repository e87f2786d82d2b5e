//! Row tracking at commit time: sequence numbers from the snapshot id and consecutive
//! `first_row_id`s for new files.
//!
//! Source: Java `org.apache.paimon.operation.commit.RowTrackingCommitUtils`.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::spec::file_names::{is_blob_file, is_vector_store_file};
use crate::spec::special_fields::ROW_ID;
use crate::spec::{FileSource, ManifestEntry};

/// Assign row tracking to the delta entries of a commit that becomes snapshot `snapshot_id`,
/// numbering new rows from `first_row_id_start` (the latest snapshot's `nextRowId`, or 0).
/// Returns the entries (same order) and the new `nextRowId`.
///
/// 1. Sequence numbers: a file with `min_sequence_number == 0` gets `snapshot_id` as both
///    bounds; else one with `max_sequence_number == 0` gets `snapshot_id` as its max; other
///    files keep theirs (DELETE entries included, as Java does).
/// 2. Row ids, in entry order, for `APPEND`-source files without a first row id whose
///    `write_cols` do not hold `_ROW_ID`: a normal file takes the next `row_count` ids; a
///    `.blob` file takes ids from the start of the normal file written before it, continuing
///    per blob column (its first write column) while blob files of that column follow; a
///    `.vector.` file takes ids from a running counter over vector files. Other files
///    (compaction output, files with ids) are unchanged.
///
/// # Errors
/// [`Error::Invalid`] for an entry without a file source (Java: "file source field for
/// row-tracking table must present"), a blob file without write columns, or a blob/vector
/// file that is not preceded by enough normal rows (its ids would not belong to rows).
pub fn assign_row_tracking(
    snapshot_id: i64,
    first_row_id_start: i64,
    entries: Vec<ManifestEntry>,
) -> Result<(Vec<ManifestEntry>, i64)> {
    let mut start = first_row_id_start;
    let mut blob_start_default = first_row_id_start;
    let mut blob_starts: BTreeMap<String, i64> = BTreeMap::new();
    let mut vector_start = first_row_id_start;
    let mut out = Vec::with_capacity(entries.len());
    for mut e in entries {
        let f = &mut e.file;
        if f.min_sequence_number == 0 {
            f.min_sequence_number = snapshot_id;
            f.max_sequence_number = snapshot_id;
        } else if f.max_sequence_number == 0 {
            f.max_sequence_number = snapshot_id;
        }
        let Some(source) = f.file_source else {
            return Err(Error::invalid(format!(
                "data file {} has no file source; a row-tracking table needs it on every file",
                f.file_name
            )));
        };
        let writes_row_id = f
            .write_cols
            .as_ref()
            .is_some_and(|c| c.iter().any(|n| n == ROW_ID));
        if source == FileSource::Append && f.first_row_id.is_none() && !writes_row_id {
            let rows = f.row_count;
            if is_blob_file(&f.file_name) {
                let Some(column) = f.write_cols.as_ref().and_then(|c| c.first()).cloned() else {
                    return Err(Error::invalid(format!(
                        "blob file {} has no write columns; its blob column is unknown",
                        f.file_name
                    )));
                };
                let blob_start = blob_starts
                    .get(&column)
                    .copied()
                    .unwrap_or(blob_start_default);
                if blob_start >= start {
                    return Err(Error::invalid(format!(
                        "blob file {} (column {column}) starts at row id {blob_start}, not below \
                         the next row id {start}: it must follow the data file of its rows",
                        f.file_name
                    )));
                }
                f.first_row_id = Some(blob_start);
                blob_starts.insert(column, blob_start.saturating_add(rows));
            } else if is_vector_store_file(&f.file_name) {
                if vector_start >= start {
                    return Err(Error::invalid(format!(
                        "vector-store file {} starts at row id {vector_start}, not below the \
                         next row id {start}: it must follow the data file of its rows",
                        f.file_name
                    )));
                }
                f.first_row_id = Some(vector_start);
                vector_start = vector_start.saturating_add(rows);
            } else {
                f.first_row_id = Some(start);
                blob_start_default = start;
                blob_starts.clear();
                start = start.checked_add(rows).ok_or_else(|| {
                    Error::invalid(format!("row id overflow assigning {}", f.file_name))
                })?;
            }
        }
        out.push(e);
    }
    Ok((out, start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{BinaryRow, DataFileMeta, FileKind, SimpleStats};

    pub(crate) fn file(name: &str, rows: i64, cols: Option<&[&str]>) -> ManifestEntry {
        ManifestEntry {
            kind: FileKind::Add,
            partition: BinaryRow::empty(),
            bucket: 0,
            total_buckets: -1,
            file: DataFileMeta {
                file_name: name.into(),
                file_size: 1,
                row_count: rows,
                min_key: BinaryRow::empty(),
                max_key: BinaryRow::empty(),
                key_stats: SimpleStats::empty(),
                value_stats: SimpleStats::empty(),
                min_sequence_number: 0,
                max_sequence_number: 0,
                schema_id: 0,
                level: 0,
                extra_files: vec![],
                creation_time_millis: None,
                delete_row_count: Some(0),
                embedded_index: None,
                file_source: Some(FileSource::Append),
                value_stats_cols: None,
                external_path: None,
                first_row_id: None,
                write_cols: cols.map(|c| c.iter().map(|s| s.to_string()).collect()),
                write_cols_sequences: None,
            },
        }
    }

    #[test]
    fn normal_blob_and_vector_files() {
        let entries = vec![
            file("data-1.parquet", 10, None),
            file("data-2.blob", 4, Some(&["img"])),
            file("data-3.blob", 6, Some(&["img"])),
            file("data-4.blob", 10, Some(&["doc"])),
            file("data-5.parquet", 5, None),
            file("data-6.blob", 5, Some(&["img"])),
            file("data-7.vector.lance", 15, Some(&["v"])),
        ];
        let (out, next) = assign_row_tracking(7, 100, entries).unwrap();
        let ids: Vec<Option<i64>> = out.iter().map(|e| e.file.first_row_id).collect();
        assert_eq!(
            ids,
            vec![
                Some(100),
                Some(100),
                Some(104),
                Some(100),
                Some(110),
                Some(110),
                Some(100)
            ]
        );
        assert_eq!(next, 115);
        assert!(
            out.iter()
                .all(|e| (e.file.min_sequence_number, e.file.max_sequence_number) == (7, 7))
        );
    }

    #[test]
    fn compact_files_and_files_with_ids_are_kept() {
        let mut compact = file("c.parquet", 10, None);
        compact.file.file_source = Some(FileSource::Compact);
        compact.file.first_row_id = Some(3);
        compact.file.min_sequence_number = 2;
        compact.file.max_sequence_number = 5;
        let mut with_row_id = file("u.parquet", 4, Some(&["a", ROW_ID]));
        with_row_id.file.min_sequence_number = 3;
        let (out, next) = assign_row_tracking(9, 20, vec![compact, with_row_id]).unwrap();
        assert_eq!(next, 20);
        assert_eq!(out[0].file.first_row_id, Some(3));
        assert_eq!(
            (
                out[0].file.min_sequence_number,
                out[0].file.max_sequence_number
            ),
            (2, 5)
        );
        assert_eq!(out[1].file.first_row_id, None);
        assert_eq!(
            (
                out[1].file.min_sequence_number,
                out[1].file.max_sequence_number
            ),
            (3, 9)
        );
        let mut no_source = file("x.parquet", 1, None);
        no_source.file.file_source = None;
        assert!(assign_row_tracking(1, 0, vec![no_source]).is_err());
        assert!(assign_row_tracking(1, 0, vec![file("b.blob", 1, Some(&["img"]))]).is_err());
    }
}
