//! The inspector's table operations as IO-generic `async` functions over the core: each takes
//! an [`Io`] handle and returns plain JSON values (what the JS API hands out). They run inside
//! a [`paimon_kernel::io::Machine`] driven by any host, so they are tested natively over a
//! [`paimon_kernel::io::MemoryStore`] as well as in the browser.
//!
//! Shapes (keys are camelCase, as in Paimon's own JSON files):
//! * [`summary`]: `{snapshotId, earliestSnapshotId, schemaId, tableKind, primaryKeys,
//!   partitionKeys, fields: [{id, name, type}], options}`.
//! * [`snapshots`]: every snapshot file still present, oldest first, as stored (Java keys).
//! * [`schema`]: the schema a snapshot uses, see [`schema_json`].
//! * [`files`]: `{snapshotId, schemaId, files: [...], indexFiles: [...]}`, see [`files`].
//! * [`tags`]: `[{name, snapshotId, schemaId, commitKind, timeMillis, totalRecordCount}]`.
//! * [`blob`]: one blob's bytes by row id and column.

use std::collections::BTreeMap;

use bytes::Bytes;
use paimon_kernel::format::blob::{
    BlobElementKind, BlobEntry, BlobReadOptions, read_blob_index, read_blob_rows,
};
use paimon_kernel::io::Io;
use paimon_kernel::scan::TableKind;
use paimon_kernel::scan::planner::{INDEX_DIR, read_index_entries, read_live_entries};
use paimon_kernel::scan::snapshot_resolver::{
    earliest_snapshot_id, list_snapshots, list_tags, read_latest_schema, read_schema, read_tag,
    resolve,
};
use paimon_kernel::spec::partition::{bucket_path, partition_path, render_partition};
use paimon_kernel::spec::snapshot::{Snapshot, Tag};
use paimon_kernel::spec::{CoreOptions, DataField, TableSchema, TypeKind};
use paimon_kernel::{Error, Result};
use serde::Deserialize;
use serde_json::{Value, json};

/// What a call asks for: which snapshot (at most one of `snapshotId`, `tag`,
/// `timestampMillis`; none = the latest), extra table options, and for scans the columns,
/// limit, row ids and filter; for [`blob`] the row id and column.
///
/// Unknown keys are rejected (a misspelt `snapshotID` must not silently read the latest).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Query {
    /// `scan.snapshot-id`.
    pub snapshot_id: Option<i64>,
    /// `scan.tag-name`.
    pub tag: Option<String>,
    /// `scan.timestamp-millis`: the latest snapshot at or before this epoch-millis time.
    pub timestamp_millis: Option<i64>,
    /// Any other table option for this read (e.g. `{"scan.version": "3"}`).
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Output columns (scan); `None` = every column of the read schema. May name `_ROW_ID`
    /// on row-tracking tables.
    pub columns: Option<Vec<String>>,
    /// At most this many rows (scan).
    pub limit: Option<u64>,
    /// Only these row ids (scan, row-tracking tables): `"0-9,42"`.
    pub row_ids: Option<String>,
    /// A `--where` filter (scan), e.g. `k > 3 AND name IS NOT NULL`.
    pub filter: Option<String>,
    /// Rows per Arrow batch (scan); 0 or absent = the core's default.
    pub batch_size: Option<usize>,
    /// Row id of the blob ([`blob`]).
    pub row_id: Option<i64>,
    /// Blob column ([`blob`]).
    pub column: Option<String>,
}

impl Query {
    /// Parse a JSON object (absent / `null` → the default query).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the bad key or value.
    pub fn from_json(text: Option<&str>) -> Result<Query> {
        match text {
            None => Ok(Query::default()),
            Some(t) if t.trim().is_empty() || t.trim() == "null" || t.trim() == "undefined" => {
                Ok(Query::default())
            }
            Some(t) => serde_json::from_str(t)
                .map_err(|e| Error::invalid(format!("invalid options object: {e}"))),
        }
    }

    /// The table options this query sets: `options` plus the time-travel keys.
    pub fn table_options(&self) -> BTreeMap<String, String> {
        let mut o = self.options.clone();
        if let Some(id) = self.snapshot_id {
            o.insert("scan.snapshot-id".into(), id.to_string());
        }
        if let Some(t) = &self.tag {
            o.insert("scan.tag-name".into(), t.clone());
        }
        if let Some(t) = self.timestamp_millis {
            o.insert("scan.timestamp-millis".into(), t.to_string());
        }
        o
    }
}

/// The snapshot a query reads (`None` for a table without snapshots) and its schema.
///
/// # Errors
/// As [`resolve`]: no table here, an unknown snapshot/tag, invalid options, IO, corrupt files.
pub async fn resolve_query<T>(io: &Io<T>, q: &Query) -> Result<(Option<Snapshot>, TableSchema)> {
    let options = CoreOptions::new(q.table_options());
    match resolve(io, &options).await? {
        Some((s, schema)) => Ok((Some(s), schema)),
        None => match read_latest_schema(io).await? {
            Some(schema) => Ok((None, schema)),
            None => Err(Error::invalid(
                "no Paimon table here: neither snapshot/ nor schema/ files were found",
            )),
        },
    }
}

fn table_kind_name(schema: &TableSchema) -> Result<&'static str> {
    Ok(match TableKind::of(schema)? {
        TableKind::Append => "append",
        TableKind::PrimaryKey => "primary-key",
        TableKind::DataEvolution => "data-evolution",
    })
}

fn field_json(f: &DataField) -> Value {
    json!({
        "id": f.id,
        "name": f.name,
        "type": f.data_type.sql_string(),
        "nullable": f.data_type.nullable,
        "description": f.description,
    })
}

/// A summary of the table at its latest snapshot (what the page shows first).
///
/// # Errors
/// As [`resolve_query`].
pub async fn summary<T>(io: &Io<T>) -> Result<Value> {
    let (snapshot, schema) = resolve_query(io, &Query::default()).await?;
    let earliest = match &snapshot {
        Some(_) => earliest_snapshot_id(io).await?,
        None => None,
    };
    Ok(json!({
        "snapshotId": snapshot.as_ref().map(|s| s.id),
        "earliestSnapshotId": earliest,
        "totalRecordCount": snapshot.as_ref().map(|s| s.total_record_count),
        "schemaId": schema.id,
        "tableKind": table_kind_name(&schema)?,
        "primaryKeys": schema.primary_keys,
        "partitionKeys": schema.partition_keys,
        "fields": schema.fields.iter().map(field_json).collect::<Vec<_>>(),
        "options": schema.options,
    }))
}

/// Every snapshot still present, oldest first, as stored (Java's keys: `id`, `schemaId`,
/// `commitKind`, `timeMillis`, `totalRecordCount`, `deltaRecordCount`, ...).
///
/// # Errors
/// IO failures and corrupt snapshot files (naming the file).
pub async fn snapshots<T>(io: &Io<T>) -> Result<Value> {
    let all = list_snapshots(io).await?;
    serde_json::to_value(all).map_err(|e| Error::invalid(format!("snapshot to JSON: {e}")))
}

/// A schema as JSON: `{id, version, fields: [{id, name, type, nullable, description}],
/// highestFieldId, partitionKeys, primaryKeys, bucketKeys, options, comment, timeMillis,
/// tableKind, raw}` (`raw` = the schema file's text).
///
/// # Errors
/// Invalid options (table kind, bucket keys).
pub fn schema_json(schema: &TableSchema) -> Result<Value> {
    Ok(json!({
        "id": schema.id,
        "version": schema.version,
        "fields": schema.fields.iter().map(field_json).collect::<Vec<_>>(),
        "highestFieldId": schema.highest_field_id,
        "partitionKeys": schema.partition_keys,
        "primaryKeys": schema.primary_keys,
        "bucketKeys": schema.bucket_keys()?,
        "options": schema.options,
        "comment": schema.comment,
        "timeMillis": schema.time_millis,
        "tableKind": table_kind_name(schema)?,
        "raw": schema.raw_json,
    }))
}

/// The schema the queried snapshot uses (the latest schema for a table without snapshots);
/// `schemaId` in the query options is not needed: use [`schema_by_id`].
///
/// # Errors
/// As [`resolve_query`].
pub async fn schema<T>(io: &Io<T>, q: &Query) -> Result<Value> {
    let (_, schema) = resolve_query(io, q).await?;
    schema_json(&schema)
}

/// Schema `id` (`schema/schema-<id>`).
///
/// # Errors
/// NotFound / corrupt schema file.
pub async fn schema_by_id<T>(io: &Io<T>, id: i64) -> Result<Value> {
    schema_json(&read_schema(io, id).await?)
}

/// Live data files of the queried snapshot (what Java's `$files` lists, postpone bucket and
/// level 0 included) and its index files.
///
/// `files[]`: `{partition, partitionPath, bucket, level, fileName, path, format, kind
/// ("data" | "blob"), fileSize, rowCount, minSequenceNumber, maxSequenceNumber, schemaId,
/// firstRowId, lastRowId, writeCols, fileSource, creationTimeMillis, deleteRowCount,
/// externalPath, extraFiles}` in manifest order. `indexFiles[]`: `{partition, bucket,
/// indexType, fileName, path, fileSize, rowCount, deletionVectors}`.
///
/// # Errors
/// As [`resolve_query`]; IO / corrupt manifests.
pub async fn files<T>(io: &Io<T>, q: &Query) -> Result<Value> {
    let (snapshot, schema) = resolve_query(io, q).await?;
    let Some(snapshot) = snapshot else {
        return Ok(
            json!({"snapshotId": null, "schemaId": schema.id, "files": [], "indexFiles": []}),
        );
    };
    let keys: Vec<DataField> = schema.partition_fields()?.into_iter().cloned().collect();
    let options = schema.core_options();
    let naming = options.partition_naming()?;
    let data_root = options.data_root();
    let (entries, index) = futures_util::future::try_join(
        read_live_entries(io, &snapshot),
        read_index_entries(io, &snapshot),
    )
    .await?;
    let mut files = Vec::with_capacity(entries.len());
    for e in &entries {
        let f = &e.file;
        let ppath = partition_path(&keys, &e.partition, &naming)?;
        let bpath = bucket_path(&data_root, &ppath, e.bucket);
        files.push(json!({
            "partition": render_partition(&keys, &e.partition)?,
            "partitionPath": ppath.trim_end_matches('/'),
            "bucket": e.bucket,
            "totalBuckets": e.total_buckets,
            "level": f.level,
            "fileName": f.file_name,
            "path": f.path_in_bucket(&bpath),
            "format": f.file_format(),
            "kind": if f.is_blob_file() { "blob" } else { "data" },
            "fileSize": f.file_size,
            "rowCount": f.row_count,
            "minSequenceNumber": f.min_sequence_number,
            "maxSequenceNumber": f.max_sequence_number,
            "schemaId": f.schema_id,
            "firstRowId": f.first_row_id,
            "lastRowId": f.row_id_range().map(|r| *r.end()),
            "writeCols": f.write_cols,
            "fileSource": f.file_source.map(|s| format!("{s:?}").to_uppercase()),
            "creationTimeMillis": f.creation_time_millis,
            "deleteRowCount": f.delete_row_count,
            "externalPath": f.external_path,
            "extraFiles": f.extra_files,
        }));
    }
    let in_bucket_dir = options.index_file_in_data_file_dir()?;
    let mut index_files = Vec::with_capacity(index.len());
    for e in &index {
        let i = &e.index_file;
        let index_dir = if in_bucket_dir {
            let ppath = partition_path(&keys, &e.partition, &naming)?;
            bucket_path(&data_root, &ppath, e.bucket)
        } else {
            INDEX_DIR.to_string()
        };
        let dvs: Option<Vec<Value>> = i.dv_ranges.as_ref().map(|v| {
            v.iter()
                .map(|r| {
                    json!({
                        "dataFile": r.data_file_name,
                        "offset": r.offset,
                        "length": r.length,
                        "cardinality": r.cardinality,
                    })
                })
                .collect()
        });
        index_files.push(json!({
            "partition": render_partition(&keys, &e.partition)?,
            "bucket": e.bucket,
            "indexType": i.index_type,
            "fileName": i.file_name,
            "path": i.path_in(&index_dir),
            "fileSize": i.file_size,
            "rowCount": i.row_count,
            "deletionVectors": dvs,
        }));
    }
    Ok(json!({
        "snapshotId": snapshot.id,
        "schemaId": schema.id,
        "files": files,
        "indexFiles": index_files,
    }))
}

fn tag_json(name: &str, tag: &Tag) -> Value {
    let s = &tag.snapshot;
    json!({
        "name": name,
        "snapshotId": s.id,
        "schemaId": s.schema_id,
        "commitKind": s.commit_kind,
        "timeMillis": s.time_millis,
        "totalRecordCount": s.total_record_count,
    })
}

/// Tags: every tag when the source can list files (`names` = `None`), else (or when names
/// are given) just the named ones; a named tag that does not exist is an error.
///
/// # Errors
/// [`Error::Unsupported`] listing over a source without listing (plain HTTP): name the tags;
/// [`Error::Invalid`] for an unknown tag name; IO / corrupt tag files.
pub async fn tags<T>(io: &Io<T>, names: Option<Vec<String>>) -> Result<Value> {
    let out: Vec<Value> = match names {
        None => list_tags(io)
            .await?
            .iter()
            .map(|(n, t)| tag_json(n, t))
            .collect(),
        Some(names) => {
            let read =
                futures_util::future::try_join_all(names.iter().map(|n| read_tag(io, n))).await?;
            let mut out = Vec::new();
            for (n, t) in names.iter().zip(read) {
                match t {
                    Some(t) => out.push(tag_json(n, &t)),
                    None => return Err(Error::invalid(format!("tag '{n}' doesn't exist"))),
                }
            }
            out
        }
    };
    Ok(Value::Array(out))
}

/// The bytes of one BLOB value: column `q.column` of the row with `_ROW_ID` `q.row_id` in the
/// queried snapshot. `Ok(None)` for a NULL value.
///
/// The `.blob` files of the column covering the row id are tried newest first (by max
/// sequence number); a placeholder (-2) falls back to the next older layer, as the reader
/// does. Each file costs at most three range reads (tail, rest of the index, the record).
///
/// # Errors
/// [`Error::Invalid`] without `rowId` / `column`, for a column that is not a BLOB, or when no
/// `.blob` file of the column covers the row id; IO / corrupt `.blob` files (naming file and
/// row).
pub async fn blob<T>(io: &Io<T>, q: &Query) -> Result<Option<Bytes>> {
    let (Some(row_id), Some(column)) = (q.row_id, q.column.as_deref()) else {
        return Err(Error::invalid("blob() needs both rowId and column"));
    };
    let (snapshot, schema) = resolve_query(io, q).await?;
    let field = schema.field(column).ok_or_else(|| {
        Error::invalid(format!(
            "unknown column '{column}'; the table has: {}",
            schema.field_names().join(", ")
        ))
    })?;
    if field.data_type.kind != TypeKind::Blob {
        return Err(Error::invalid(format!(
            "column '{column}' is {}, not BLOB",
            field.data_type.sql_string()
        )));
    }
    let Some(snapshot) = snapshot else {
        return Err(Error::invalid("the table has no snapshot"));
    };
    let keys: Vec<DataField> = schema.partition_fields()?.into_iter().cloned().collect();
    let options = schema.core_options();
    let naming = options.partition_naming()?;
    let data_root = options.data_root();
    let mut candidates = Vec::new();
    for e in read_live_entries(io, &snapshot).await? {
        let f = &e.file;
        let holds_column = f
            .write_cols
            .as_ref()
            .is_some_and(|c| c.iter().any(|c| c == column));
        if f.is_blob_file() && holds_column && f.row_id_range().is_some_and(|r| r.contains(&row_id))
        {
            let ppath = partition_path(&keys, &e.partition, &naming)?;
            let path = f.path_in_bucket(&bucket_path(&data_root, &ppath, e.bucket));
            candidates.push((f.max_sequence_number, path, f.clone()));
        }
    }
    // Newest layer first; ties (should not happen) by path for determinism.
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    for (_, path, f) in &candidates {
        let (Ok(size), Ok(rows)) = (u64::try_from(f.file_size), u64::try_from(f.row_count)) else {
            return Err(Error::corrupt(
                path.clone(),
                "manifest",
                "negative file size or row count",
            ));
        };
        let first = f.first_row_id.unwrap_or_default();
        let pos = u64::try_from(row_id - first).map_err(|_| {
            Error::invalid(format!("row id {row_id} is before the first row of {path}"))
        })?;
        let index = read_blob_index(io, path, size, Some(rows)).await?;
        match index.entry(pos)? {
            BlobEntry::Placeholder => continue,
            BlobEntry::Null => return Ok(None),
            BlobEntry::Record { .. } => {
                let got = read_blob_rows(
                    io,
                    &index,
                    BlobElementKind::Blob,
                    Some(&[pos]),
                    &BlobReadOptions::default(),
                )
                .await?;
                let values = got
                    .values
                    .as_any()
                    .downcast_ref::<arrow_array::LargeBinaryArray>()
                    .ok_or_else(|| Error::invalid("blob values are not LargeBinary"))?;
                use arrow_array::Array;
                if values.is_empty() || values.is_null(0) {
                    return Ok(None);
                }
                return Ok(Some(Bytes::copy_from_slice(values.value(0))));
            }
        }
    }
    if candidates.is_empty() {
        Err(Error::invalid(format!(
            "no .blob file of column '{column}' covers row id {row_id} in snapshot {}",
            snapshot.id
        )))
    } else {
        // Every layer is a placeholder: the value was never written (reads as NULL).
        Ok(None)
    }
}

#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
pub(crate) use tests as tests_support;
