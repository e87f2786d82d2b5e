//! Resolving descriptor-backed BLOB columns after the merge: a primary-key table's managed
//! BLOBs (values in `.managed.blob` packs) and `blob-descriptor-field` columns store blob
//! descriptors in the data file; a read replaces each surviving descriptor by the bytes it
//! points at (one ranged read per value, the values of a batch in one round, so the host can
//! coalesce them), unless `blob-as-descriptor` asks for the descriptors.
//!
//! `BLOB` columns are `LargeBinary`; `ARRAY<BLOB>` columns lists of them (each non-null
//! element resolved); `MAP<K, BLOB>` columns maps whose non-null values are resolved.
//!
//! A stored value that is a blob view struct (a `blob-descriptor-field` column may hold one,
//! as Java's writers store it) is returned as its struct bytes, unresolved, as Java's engines
//! return an unresolved `BlobView` (`Blob.fromBytes` checks for a view struct first).
//!
//! A descriptor URI under the table root (the read context's `blob_descriptor_uri_prefix`,
//! compared after normalizing scheme case, `file:/` vs `file:///`, `.` and `..`) is read by its
//! path relative to the root; any other URI is handed to the host as an absolute path, and a
//! managed pack whose URI is not found (or not readable by the host: a table copied elsewhere
//! or served over HTTP) is then read from the same bucket directory of this table.
//!
//! Source: Java `org.apache.paimon.data.columnar.ColumnarRow#getBlob`,
//! `org.apache.paimon.data.BlobRef` (reading a descriptor through the table's file IO).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, LargeBinaryArray, RecordBatch};

use crate::error::{Error, Result};
use crate::format::blob::BlobElementKind;
use crate::format::blob_descriptor::{
    BlobDescriptor, is_blob_view_struct, read_blob_descriptor, relative_to_root,
};
use crate::io::Io;
use crate::spec::CoreOptions;
use crate::spec::file_names::BUCKET_DIR_PREFIX;

/// Most bytes of resolved BLOB values per emitted batch: 16 MiB (a row holding more is a
/// batch of its own).
pub const RESOLVE_BYTES_PER_BATCH: u64 = 16 << 20;

/// The binary leaves (descriptor bytes) of a descriptor-backed column and, per row, the range
/// of leaf positions that belong to it.
pub(crate) fn leaves(
    col: &ArrayRef,
    kind: BlobElementKind,
) -> Result<(ArrayRef, Vec<Range<usize>>)> {
    let rows = col.len();
    let unexpected = || {
        Error::invalid(format!(
            "a {kind:?} BLOB column was read as {}",
            col.data_type()
        ))
    };
    match kind {
        BlobElementKind::Blob => Ok((Arc::clone(col), (0..rows).map(|r| r..r + 1).collect())),
        BlobElementKind::Array => {
            if let Some(l) = col.as_list_opt::<i32>() {
                let o = l.value_offsets();
                Ok((
                    Arc::clone(l.values()),
                    (0..rows)
                        .map(|r| o[r] as usize..o[r + 1] as usize)
                        .collect(),
                ))
            } else if let Some(l) = col.as_list_opt::<i64>() {
                let o = l.value_offsets();
                Ok((
                    Arc::clone(l.values()),
                    (0..rows)
                        .map(|r| o[r] as usize..o[r + 1] as usize)
                        .collect(),
                ))
            } else {
                Err(unexpected())
            }
        }
        BlobElementKind::Map(_) => {
            let m = col.as_map_opt().ok_or_else(unexpected)?;
            let o = m.value_offsets();
            Ok((
                Arc::clone(m.values()),
                (0..rows)
                    .map(|r| o[r] as usize..o[r + 1] as usize)
                    .collect(),
            ))
        }
    }
}

/// The descriptor stored at `i`: `None` for a null or a blob view struct (kept as stored).
fn descriptor_at(values: &LargeBinaryArray, i: usize) -> Result<Option<BlobDescriptor>> {
    if values.is_null(i) || is_blob_view_struct(values.value(i)) {
        Ok(None)
    } else {
        BlobDescriptor::deserialize(values.value(i)).map(Some)
    }
}

fn as_large_binary(a: &ArrayRef) -> Result<&LargeBinaryArray> {
    a.as_binary_opt::<i64>().ok_or_else(|| {
        Error::invalid(format!(
            "BLOB values were read as {} instead of LargeBinary",
            a.data_type()
        ))
    })
}

/// `batch` cut into row ranges whose descriptor-backed values (`columns`: output position and
/// kind) add up to at most [`RESOLVE_BYTES_PER_BATCH`].
///
/// # Errors
/// [`Error::Corrupt`]/[`Error::Unsupported`] for a stored value that is not a descriptor.
pub(crate) fn descriptor_parts(
    batch: &RecordBatch,
    columns: &[(usize, BlobElementKind)],
) -> Result<Vec<RecordBatch>> {
    let rows = batch.num_rows();
    let mut sizes = vec![0u64; rows];
    for (i, kind) in columns {
        let (values, ranges) = leaves(batch.column(*i), *kind)?;
        let values = as_large_binary(&values)?;
        for (r, range) in ranges.into_iter().enumerate() {
            if batch.column(*i).is_null(r) {
                continue;
            }
            for j in range {
                if let Some(d) = descriptor_at(values, j)? {
                    sizes[r] = sizes[r].saturating_add(d.length().max(0) as u64);
                }
            }
        }
    }
    let mut parts = Vec::new();
    let (mut start, mut acc) = (0usize, 0u64);
    for (r, size) in sizes.iter().enumerate() {
        if r > start && acc.saturating_add(*size) > RESOLVE_BYTES_PER_BATCH {
            parts.push(batch.slice(start, r - start));
            (start, acc) = (r, 0);
        }
        acc = acc.saturating_add(*size);
    }
    if start < rows || rows == 0 {
        parts.push(batch.slice(start, rows - start));
    }
    Ok(parts)
}

/// What resolving the descriptors of a read needs to know of the table read (from the read's
/// [`ReadContext`](crate::read::ReadContext)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResolveTarget<'a> {
    /// The table root descriptor URIs are resolved against
    /// (`ReadContext::blob_descriptor_uri_prefix`).
    pub(crate) uri_prefix: &'a str,
    /// Output columns whose values are descriptors, with their BLOB shape
    /// (`ReadContext::descriptor_columns`).
    pub(crate) columns: &'a [(usize, BlobElementKind)],
    /// How many partition keys the table has.
    pub(crate) partition_keys: usize,
    /// The table's effective options.
    pub(crate) options: &'a CoreOptions,
}

/// `batch` with the descriptors of `target.columns` replaced by the bytes they point at:
/// every non-null value (or element) of the visible rows read in one round.
///
/// # Errors
/// A value that is not a descriptor; IO errors of the reads (naming the path); a descriptor
/// range past the end of its file.
pub(crate) async fn resolve_descriptors<T>(
    io: &Io<T>,
    target: ResolveTarget<'_>,
    batch: RecordBatch,
) -> Result<RecordBatch> {
    let root = target.uri_prefix;
    let mut columns = batch.columns().to_vec();
    for (i, kind) in target.columns {
        let col = Arc::clone(&columns[*i]);
        let (values, ranges) = leaves(&col, *kind)?;
        let values = as_large_binary(&values)?;
        // Only the leaves of visible, non-null rows are read (a sliced list keeps its whole
        // child array).
        let mut wanted = vec![false; values.len()];
        for (r, range) in ranges.iter().enumerate() {
            if !col.is_null(r) {
                for j in range.clone() {
                    wanted[j] = true;
                }
            }
        }
        // Per leaf: Err(Hidden) = a hidden non-null leaf (kept non-null, empty), Err(Null) =
        // null, Err(View) = a view struct (kept as stored), Ok(descriptor) = read.
        let descriptors = (0..values.len())
            .map(|j| {
                if values.is_null(j) {
                    Ok(Err(Kept::Null))
                } else if !wanted[j] {
                    Ok(Err(Kept::Hidden))
                } else if is_blob_view_struct(values.value(j)) {
                    Ok(Err(Kept::View(j)))
                } else {
                    BlobDescriptor::deserialize(values.value(j)).map(Ok)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let reads = descriptors.iter().map(|d| async move {
            match d {
                Err(Kept::Null) => Ok(None),
                Err(Kept::Hidden) => Ok(Some(bytes::Bytes::new())),
                Err(Kept::View(j)) => Ok(Some(bytes::Bytes::copy_from_slice(values.value(*j)))),
                Ok(d) => {
                    let relative = if root.is_empty() {
                        None
                    } else {
                        relative_to_root(root, d.uri())
                    };
                    if let Some(path) = relative {
                        return read_blob_descriptor(io, &path, d).await.map(Some);
                    }
                    match read_blob_descriptor(io, d.uri(), d).await {
                        Err(e) if moved_table_error(&e) => match pack_in_table(target, d.uri()) {
                            Some(path) => read_blob_descriptor(io, &path, d).await.map(Some),
                            None => Err(e),
                        },
                        other => other.map(Some),
                    }
                }
            }
        });
        let bytes = futures_util::future::try_join_all(reads).await?;
        let resolved: ArrayRef = Arc::new(LargeBinaryArray::from_iter(
            bytes.iter().map(|v| v.as_deref()),
        ));
        columns[*i] = replace_leaves(&col, *kind, resolved)?;
    }
    RecordBatch::try_new(batch.schema(), columns)
        .map_err(|e| Error::arrow("resolving blob descriptors", e))
}

/// A leaf that is not read: null, not visible, or a blob view struct (its position).
enum Kept {
    Null,
    Hidden,
    View(usize),
}

/// An error of reading a descriptor's absolute URI that a moved (copied, served) table gives:
/// the file is not there, or the host cannot read that URI at all.
fn moved_table_error(e: &Error) -> bool {
    matches!(
        e,
        Error::Io {
            kind: crate::io::IoErrorKind::NotFound | crate::io::IoErrorKind::Unsupported,
            ..
        }
    )
}

/// A managed pack's path in this table for a descriptor URI outside the table root: packs are
/// written into the bucket directory of their data files, so the URI's last `partition keys +
/// 2` segments (`k=v/.../bucket-N/<pack>.managed.blob`, under `data-file.path-directory` when
/// set) name it relative to the table. Used only when the URI itself cannot be read (a table
/// copied elsewhere or served over HTTP keeps the URIs of where it was written). `None` for
/// other URIs.
fn pack_in_table(target: ResolveTarget<'_>, uri: &str) -> Option<String> {
    if !uri.ends_with(crate::spec::file_names::MANAGED_BLOB_SUFFIX) {
        return None;
    }
    let segments: Vec<&str> = uri.split('/').filter(|s| !s.is_empty()).collect();
    let keep = target.partition_keys + 2;
    if segments.len() <= keep || !segments[segments.len() - 2].starts_with(BUCKET_DIR_PREFIX) {
        return None;
    }
    let tail = segments[segments.len() - keep..].join("/");
    Some(match target.options.get("data-file.path-directory") {
        Some(dir) if !dir.trim().is_empty() => format!("{}/{tail}", dir.trim_end_matches('/')),
        _ => tail,
    })
}

/// `col` with its binary leaves replaced by `leaves` (same length and positions).
fn replace_leaves(col: &ArrayRef, kind: BlobElementKind, leaves: ArrayRef) -> Result<ArrayRef> {
    use arrow_array::{LargeListArray, ListArray, MapArray, StructArray};
    let err = |e| Error::arrow("rebuilding a resolved BLOB column", e);
    Ok(match kind {
        BlobElementKind::Blob => {
            // Keep the column's nulls (equal to the leaves' by construction).
            leaves
        }
        BlobElementKind::Array => {
            let field = match col.data_type() {
                arrow_schema::DataType::List(f) | arrow_schema::DataType::LargeList(f) => {
                    Arc::clone(f)
                }
                other => {
                    return Err(Error::invalid(format!(
                        "an ARRAY<BLOB> column was read as {other}"
                    )));
                }
            };
            if let Some(l) = col.as_list_opt::<i32>() {
                Arc::new(
                    ListArray::try_new(field, l.offsets().clone(), leaves, l.nulls().cloned())
                        .map_err(err)?,
                )
            } else if let Some(l) = col.as_list_opt::<i64>() {
                Arc::new(
                    LargeListArray::try_new(field, l.offsets().clone(), leaves, l.nulls().cloned())
                        .map_err(err)?,
                )
            } else {
                return Err(Error::invalid("an ARRAY<BLOB> column is not a list"));
            }
        }
        BlobElementKind::Map(_) => {
            let m = col
                .as_map_opt()
                .ok_or_else(|| Error::invalid("a MAP<K, BLOB> column is not a map"))?;
            let entries = m.entries();
            let arrow_schema::DataType::Map(entries_field, ordered) = col.data_type() else {
                return Err(Error::invalid("a MAP<K, BLOB> column is not a map"));
            };
            let arrow_schema::DataType::Struct(fields) = entries_field.data_type() else {
                return Err(Error::invalid("map entries are not a struct"));
            };
            let new_entries = StructArray::try_new(
                fields.clone(),
                vec![Arc::clone(entries.column(0)), leaves],
                entries.nulls().cloned(),
            )
            .map_err(err)?;
            Arc::new(
                MapArray::try_new(
                    Arc::clone(entries_field),
                    m.offsets().clone(),
                    new_entries,
                    m.nulls().cloned(),
                    *ordered,
                )
                .map_err(err)?,
            )
        }
    })
}
