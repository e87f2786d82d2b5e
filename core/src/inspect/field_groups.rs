//! The field-groups view of data-evolution (and other row-tracking) tables: the row-id axis
//! against the table's columns, one band per data file (its row-id range × the columns it
//! wrote), cut into the row-id groups the reader merges ([`row_id_groups`]), with the order
//! in which each column's value is looked up in a group: the `.blob` files of a BLOB column
//! first (newest layer first; a placeholder falls back to an older layer), then the normal
//! files newest (largest max sequence number) first. The first file holding a column is the
//! one whose values are read.
//!
//! Blob placeholders are recorded inside the `.blob` files (their index), not in the
//! manifest, so this view does not show them ([`FieldGroupsView::placeholders`] says so).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{DeletionVectorView, dv_index, partition_fields, partition_forms, table_kind_name};
use crate::error::{Error, Result};
use crate::read::evolution::row_id_groups;
use crate::spec::{
    BinaryRow, DataFileMeta, IndexManifestEntry, ManifestEntry, TableSchema, TypeKind,
};

/// What the view says about blob placeholders.
pub const PLACEHOLDERS_NOT_IN_METADATA: &str = "blob placeholders are stored in the .blob \
    files' index, not in the manifest: not shown here (the blob view resolves them per row)";

/// The field groups of one snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldGroupsView {
    /// The snapshot the files are from.
    pub snapshot_id: Option<i64>,
    /// `append`, `primary-key` or `data-evolution`.
    pub table_kind: String,
    /// The columns of the snapshot's schema, in schema order (the view's rows).
    pub columns: Vec<FieldColumn>,
    /// The buckets shown, in (partition bytes, bucket) order.
    pub buckets: Vec<FieldGroupBucket>,
    /// Every partition of the snapshot, rendered, in the same order.
    pub all_partitions: Vec<String>,
    /// Placeholder information: [`PLACEHOLDERS_NOT_IN_METADATA`].
    pub placeholders: String,
}

/// One column of the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldColumn {
    /// Column name in the snapshot's schema.
    pub name: String,
    /// Field id.
    pub field_id: i32,
    /// Whether the column is a BLOB (stored in `.blob` files).
    pub blob: bool,
}

/// The files of one (partition, bucket).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldGroupBucket {
    /// The partition as `$files` renders it.
    pub partition: String,
    /// The partition values by key.
    pub partition_values: serde_json::Map<String, serde_json::Value>,
    /// The bucket.
    pub bucket: i32,
    /// Smallest first row id of the files.
    pub row_id_min: i64,
    /// Largest last row id of the files.
    pub row_id_max: i64,
    /// The row-id groups, by range.
    pub groups: Vec<FieldGroup>,
    /// Every file, one band each: by group, then lookup order (blob layers, normal files
    /// newest first).
    pub files: Vec<FieldGroupFile>,
}

/// One row-id group: files whose ranges overlap, merged column-wise by the reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldGroup {
    /// First row id of the group's range.
    pub first_row_id: i64,
    /// Last row id of the group's range.
    pub last_row_id: i64,
    /// The oldest normal file (by max sequence number, then name): the file whose deletion
    /// vector applies to the group.
    pub anchor: Option<String>,
    /// For each column held by some file of the group: the files holding it, in lookup
    /// order (the first one supplies the values).
    pub sources: Vec<ColumnSource>,
}

/// The files a column is looked up in, in a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnSource {
    /// The column.
    pub column: String,
    /// File names, first = the supplier.
    pub files: Vec<String>,
}

/// One file (band) of the view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldGroupFile {
    /// File name.
    pub file_name: String,
    /// Index of its group in [`FieldGroupBucket::groups`].
    pub group: usize,
    /// Layer in its group, 0 = newest: normal files by max sequence number; `.blob` files
    /// by max sequence number among the group's `.blob` files of the same column.
    pub layer: usize,
    /// First row id.
    pub first_row_id: i64,
    /// Last row id.
    pub last_row_id: i64,
    /// Rows.
    pub row_count: i64,
    /// The columns it holds, named as in the snapshot's schema (matched by field id through
    /// the file's schema; dropped columns are left out).
    pub columns: Vec<String>,
    /// `_WRITE_COLS` as stored (`None` = every column of the file's schema).
    pub write_cols: Option<Vec<String>>,
    /// A `.blob` file.
    pub blob: bool,
    /// Min sequence number.
    pub min_sequence_number: i64,
    /// Max sequence number (the layer key).
    pub max_sequence_number: i64,
    /// Schema the file was written with.
    pub schema_id: i64,
    /// Bytes.
    pub file_size: i64,
    /// Its deletion vector, if one is live.
    pub deletion_vector: Option<DeletionVectorView>,
}

/// The columns (snapshot-schema names) `f` holds: its `write_cols` (or every field of its
/// schema) matched by field id through the file's schema from `schemas`, or by name when
/// that schema is not given.
fn file_columns(
    f: &DataFileMeta,
    schema: &TableSchema,
    schemas: &BTreeMap<i64, TableSchema>,
) -> Vec<String> {
    let file_schema = schemas.get(&f.schema_id);
    let names: Vec<String> = match (&f.write_cols, file_schema) {
        (Some(cols), _) => cols.clone(),
        (None, Some(s)) => s.fields.iter().map(|x| x.name.clone()).collect(),
        (None, None) => schema.fields.iter().map(|x| x.name.clone()).collect(),
    };
    names
        .iter()
        .filter_map(|n| match file_schema {
            Some(s) => s
                .field(n)
                .and_then(|fd| schema.field_by_id(fd.id))
                .map(|fd| fd.name.clone()),
            None => schema.field(n).map(|fd| fd.name.clone()),
        })
        .collect()
}

/// The field-groups view of `entries` (live data files of snapshot `snapshot_id`, read with
/// `schema`); `schemas` are the schemas of the files by id (for renamed and dropped columns;
/// a missing one matches columns by name); deletion vectors from `index_entries`.
/// `partition` (rendered) and `bucket` keep one partition / bucket.
///
/// # Errors
/// [`Error::Invalid`] for a file without `first_row_id` (the table does not track row ids),
/// for normal files of one group covering different ranges (as the reader), for an unknown
/// partition or bucket; [`Error::Corrupt`] for partitions that do not decode.
pub fn field_groups(
    schema: &TableSchema,
    schemas: &BTreeMap<i64, TableSchema>,
    snapshot_id: Option<i64>,
    entries: &[ManifestEntry],
    index_entries: &[IndexManifestEntry],
    partition: Option<&str>,
    bucket: Option<i32>,
) -> Result<FieldGroupsView> {
    let pfields = partition_fields(schema)?;
    let dvs = dv_index(index_entries);
    let columns: Vec<FieldColumn> = schema
        .fields
        .iter()
        .map(|f| FieldColumn {
            name: f.name.clone(),
            field_id: f.id,
            blob: f.data_type.kind == TypeKind::Blob,
        })
        .collect();
    let mut by_bucket: BTreeMap<(Vec<u8>, i32), (BinaryRow, Vec<DataFileMeta>)> = BTreeMap::new();
    for e in entries {
        by_bucket
            .entry((e.partition.to_serialized(), e.bucket))
            .or_insert_with(|| (e.partition.clone(), Vec::new()))
            .1
            .push(e.file.clone());
    }
    let mut all_partitions: Vec<String> = Vec::new();
    let mut buckets = Vec::new();
    for ((pbytes, b), (prow, files)) in by_bucket {
        let (text, values) = partition_forms(&pfields, &prow)?;
        if all_partitions.last() != Some(&text) {
            all_partitions.push(text.clone());
        }
        if partition.is_some_and(|p| p != text) || bucket.is_some_and(|x| x != b) {
            continue;
        }
        buckets.push(bucket_view(
            schema, schemas, &dvs, &pbytes, b, text, values, &files,
        )?);
    }
    if buckets.is_empty() && (partition.is_some() || bucket.is_some()) {
        return Err(Error::invalid(format!(
            "no files in partition {} bucket {} of snapshot {}; partitions: {}",
            partition.unwrap_or("(any)"),
            bucket.map_or_else(|| "(any)".to_owned(), |b| b.to_string()),
            snapshot_id.map_or_else(|| "none".to_owned(), |s| s.to_string()),
            all_partitions.join(" ")
        )));
    }
    Ok(FieldGroupsView {
        snapshot_id,
        table_kind: table_kind_name(schema)?.to_owned(),
        columns,
        buckets,
        all_partitions,
        placeholders: PLACEHOLDERS_NOT_IN_METADATA.to_owned(),
    })
}

#[allow(clippy::too_many_arguments)]
fn bucket_view(
    schema: &TableSchema,
    schemas: &BTreeMap<i64, TableSchema>,
    dvs: &super::DvIndex,
    pbytes: &[u8],
    bucket: i32,
    partition: String,
    partition_values: serde_json::Map<String, serde_json::Value>,
    files: &[DataFileMeta],
) -> Result<FieldGroupBucket> {
    let groups = row_id_groups(files, |f| f.file_name.clone())?;
    let cols: Vec<Vec<String>> = files
        .iter()
        .map(|f| file_columns(f, schema, schemas))
        .collect();
    let mut out_groups = Vec::with_capacity(groups.len());
    let mut out_files = Vec::with_capacity(files.len());
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for (gi, g) in groups.iter().enumerate() {
        lo = lo.min(g.range.from);
        hi = hi.max(g.range.to);
        let mut sources = Vec::new();
        for c in &schema.fields {
            let holds = |i: &usize| cols.get(*i).is_some_and(|v| v.contains(&c.name));
            let mut blob: Vec<usize> = g.blob.iter().copied().filter(holds).collect();
            // Newest layer first (stable: by range start within a layer).
            blob.sort_by_key(|i| std::cmp::Reverse(files[*i].max_sequence_number));
            let normal = g.normal.iter().copied().filter(holds);
            let order: Vec<String> = blob
                .into_iter()
                .chain(normal)
                .map(|i| files[i].file_name.clone())
                .collect();
            if !order.is_empty() {
                sources.push(ColumnSource {
                    column: c.name.clone(),
                    files: order,
                });
            }
        }
        // Layers: normal files by their newest-first position; blob files by distinct max
        // sequence numbers among the group's blob files sharing a column.
        let mut layered: Vec<(usize, usize)> = g
            .normal
            .iter()
            .enumerate()
            .map(|(layer, i)| (*i, layer))
            .collect();
        for i in &g.blob {
            let mut seqs: Vec<i64> = g
                .blob
                .iter()
                .filter(|j| cols[**j].iter().any(|c| cols[*i].contains(c)))
                .map(|j| files[*j].max_sequence_number)
                .collect();
            seqs.sort_by(|a, b| b.cmp(a));
            seqs.dedup();
            let layer = seqs
                .iter()
                .position(|s| *s == files[*i].max_sequence_number)
                .unwrap_or(0);
            layered.push((*i, layer));
        }
        layered.sort_by_key(|(i, layer)| (!files[*i].is_blob_file(), *layer));
        for (i, layer) in layered {
            let f = &files[i];
            let first = f.first_row_id.unwrap_or(g.range.from);
            out_files.push(FieldGroupFile {
                file_name: f.file_name.clone(),
                group: gi,
                layer,
                first_row_id: first,
                last_row_id: f.row_id_range().map_or(first, |r| *r.end()),
                row_count: f.row_count,
                columns: cols[i].clone(),
                write_cols: f.write_cols.clone(),
                blob: f.is_blob_file(),
                min_sequence_number: f.min_sequence_number,
                max_sequence_number: f.max_sequence_number,
                schema_id: f.schema_id,
                file_size: f.file_size,
                deletion_vector: dvs
                    .get(&(pbytes.to_vec(), bucket, f.file_name.clone()))
                    .cloned(),
            });
        }
        out_groups.push(FieldGroup {
            first_row_id: g.range.from,
            last_row_id: g.range.to,
            anchor: g.anchor(files).map(|i| files[i].file_name.clone()),
            sources,
        });
    }
    Ok(FieldGroupBucket {
        partition,
        partition_values,
        bucket,
        row_id_min: if lo == i64::MAX { 0 } else { lo },
        row_id_max: if hi == i64::MIN { 0 } else { hi },
        groups: out_groups,
        files: out_files,
    })
}
