//! Blob values given as file references: checked, and their lengths resolved, before a write.
//!
//! A value of a stored BLOB column (a `.blob`-file column of an append or data-evolution table,
//! a managed column of a primary-key table; every BLOB-file-shaped column not named by
//! `blob-descriptor-field`, `blob.stored-descriptor-fields` or `blob-view-field`) whose bytes
//! are a serialized blob descriptor `(uri, offset, length)` stands for the bytes it points at,
//! as in Java's engines (`Blob.fromBytes`: a `BlobRef` whose bytes the writer copies through a
//! buffer). The writers copy those bytes while the file is written ([`crate::io::put`]), so
//! they need each length up front: [`resolve_blob_references`] asks the size of every object
//! referenced (one `Head` per distinct URI, in one round), rejects references to missing objects
//! and ranges past the end, and replaces a length of `-1` ("to the end") with the exact length.
//! Elements of `ARRAY<BLOB>` and values of `MAP<K, BLOB>` columns are references the same way.
//! Retractions (`-U`, `-D`) of primary-key tables keep no payload: their values are skipped.
//!
//! Source: Java `org.apache.paimon.data.Blob#fromBytes`, `BlobRef`, `BlobDescriptor`,
//! `org.apache.paimon.format.blob.BlobFormatWriter` (the copy).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, LargeBinaryArray, RecordBatch, StructArray};
use futures_util::future::join_all;

use crate::error::{Error, Result};
use crate::format::blob::BlobElementKind;
use crate::format::blob_descriptor::{BlobDescriptor, is_blob_descriptor};
use crate::io::Io;
use crate::spec::TableSchema;

/// The stored BLOB columns of `schema` whose input values may be references: (position in the
/// table's fields, name, kind).
pub fn stored_blob_columns(schema: &TableSchema) -> Vec<(usize, String, BlobElementKind)> {
    let inline = crate::blob::validation::blob_inline_fields(&schema.core_options());
    schema
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| !inline.contains(&f.name))
        .filter_map(|(i, f)| {
            BlobElementKind::try_from_data_type(&f.data_type)
                .ok()
                .map(|k| (i, f.name.clone(), k))
        })
        .collect()
}

/// The rows of `batch` that are retractions (`-U`, `-D`) of a primary-key table, by the
/// table's `rowkind.field` or the `_ROW_KIND` column; `None` when there are none to tell (or
/// the kinds do not parse: the write reports that). Retractions keep no blob payload, so their
/// values are neither checked nor copied.
fn retractions(schema: &TableSchema, batch: &RecordBatch) -> Option<Vec<bool>> {
    if !schema.is_primary_key_table() {
        return None;
    }
    let options = schema.core_options();
    let name = options
        .rowkind_field()
        .map(str::to_owned)
        .unwrap_or_else(|| crate::spec::special_fields::ROW_KIND_COLUMN.to_owned());
    let col = batch.column_by_name(&name)?;
    let kinds = crate::encode::row::row_kinds(col, &name).ok()?;
    let kinds = kinds.as_primitive::<arrow_array::types::Int8Type>();
    Some(
        (0..kinds.len())
            .map(|r| matches!(kinds.value(r), 1 | 3))
            .collect(),
    )
}

/// True when some stored BLOB value of `batch` (columns by name) is a serialized blob
/// descriptor: then [`resolve_blob_references`] must run before the batch is written.
///
/// # Errors
/// [`Error::Invalid`] for a stored BLOB column of an Arrow type that holds no binary values.
pub fn has_blob_references(schema: &TableSchema, batch: &RecordBatch) -> Result<bool> {
    let retract = retractions(schema, batch);
    for (_, name, kind) in stored_blob_columns(schema) {
        let Some(col) = batch.column_by_name(&name) else {
            continue;
        };
        let (leaves, ranges) = crate::blob::resolve::leaves(col, kind)?;
        let values = binary_values(&leaves, &name)?;
        for (row, range) in ranges.into_iter().enumerate() {
            if retract.as_ref().is_some_and(|r| r[row]) {
                continue;
            }
            if range
                .into_iter()
                .any(|j| values.is_valid(j) && is_blob_descriptor(values.value(j)))
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Check every blob reference of `batch` (see the module docs) and return the batch with each
/// length `-1` replaced by the referenced object's size minus the offset. A batch without
/// references comes back unchanged (no IO).
///
/// # Errors
/// [`Error::Invalid`] naming the column, row and URI for a reference to a missing object, a
/// negative offset, a length below `-1`, or a range past the end of the object;
/// [`Error::Io`] for a failed `Head`; the descriptor decoding errors ([`Error::Corrupt`]).
pub async fn resolve_blob_references<T>(
    io: &Io<T>,
    schema: &TableSchema,
    batch: &RecordBatch,
) -> Result<RecordBatch> {
    // Every reference: (column position in the batch, leaf index, row, descriptor).
    let mut refs: Vec<(usize, usize, usize, BlobDescriptor)> = Vec::new();
    let retract = retractions(schema, batch);
    for (_, name, kind) in stored_blob_columns(schema) {
        let Some((pos, _)) = batch.schema().column_with_name(&name) else {
            continue;
        };
        let col = batch.column(pos);
        let (leaves, ranges) = crate::blob::resolve::leaves(col, kind)?;
        let values = binary_values(&leaves, &name)?;
        for (row, range) in ranges.into_iter().enumerate() {
            if retract.as_ref().is_some_and(|r| r[row]) {
                continue;
            }
            for j in range {
                if values.is_valid(j) && is_blob_descriptor(values.value(j)) {
                    refs.push((pos, j, row, BlobDescriptor::deserialize(values.value(j))?));
                }
            }
        }
    }
    if refs.is_empty() {
        return Ok(batch.clone());
    }
    let mut uris: Vec<&str> = refs.iter().map(|(_, _, _, d)| d.uri()).collect();
    uris.sort_unstable();
    uris.dedup();
    let sizes: Vec<Result<Option<u64>>> = join_all(uris.iter().map(|u| io.head(u))).await;
    let mut size_of: BTreeMap<&str, Option<u64>> = BTreeMap::new();
    for (u, s) in uris.iter().zip(sizes) {
        size_of.insert(u, s?);
    }
    // New descriptor bytes per (column position, leaf index), for lengths of -1.
    let mut replaced: BTreeMap<usize, BTreeMap<usize, Vec<u8>>> = BTreeMap::new();
    let schema_ref = batch.schema();
    for (pos, j, row, d) in &refs {
        let name = schema_ref.field(*pos).name();
        let at = || format!("column '{name}', row {row}: blob descriptor of {}", d.uri());
        let Some(size) = size_of.get(d.uri()).copied().flatten() else {
            return Err(Error::invalid(format!(
                "{}: the object does not exist",
                at()
            )));
        };
        let offset = u64::try_from(d.offset())
            .map_err(|_| Error::invalid(format!("{}: negative offset {}", at(), d.offset())))?;
        let length = match d.length() {
            -1 => size.checked_sub(offset).ok_or_else(|| {
                Error::invalid(format!(
                    "{}: offset {offset} is past the end of the object ({size} bytes)",
                    at()
                ))
            })?,
            l => u64::try_from(l)
                .map_err(|_| Error::invalid(format!("{}: invalid length {l}", at())))?,
        };
        if offset.checked_add(length).is_none_or(|end| end > size) {
            return Err(Error::invalid(format!(
                "{}: bytes {offset}..{} are past the end of the object ({size} bytes)",
                at(),
                offset.saturating_add(length)
            )));
        }
        if d.length() == -1 {
            let exact = BlobDescriptor::new(d.uri(), d.offset(), length as i64).serialize();
            replaced.entry(*pos).or_default().insert(*j, exact);
        }
    }
    if replaced.is_empty() {
        return Ok(batch.clone());
    }
    let mut columns = batch.columns().to_vec();
    for (pos, new_values) in replaced {
        let name = schema_ref.field(pos).name().clone();
        columns[pos] = with_leaves_replaced(&columns[pos], &name, &new_values)?;
    }
    let fields: Vec<_> = columns
        .iter()
        .zip(schema_ref.fields())
        .map(|(c, f)| f.as_ref().clone().with_data_type(c.data_type().clone()))
        .collect();
    let schema = Arc::new(arrow_schema::Schema::new_with_metadata(
        fields,
        schema_ref.metadata().clone(),
    ));
    RecordBatch::try_new(schema, columns).map_err(|e| Error::arrow("blob references", e))
}

/// The binary leaf values of a stored BLOB column, as `LargeBinary`.
fn binary_values(leaves: &ArrayRef, name: &str) -> Result<LargeBinaryArray> {
    let a = match leaves.data_type() {
        arrow_schema::DataType::LargeBinary => Arc::clone(leaves),
        arrow_schema::DataType::Binary | arrow_schema::DataType::BinaryView => {
            arrow_cast::cast(leaves.as_ref(), &arrow_schema::DataType::LargeBinary)
                .map_err(|e| Error::arrow(format!("column '{name}'"), e))?
        }
        other => {
            return Err(Error::invalid(format!(
                "column '{name}': Arrow type {other} holds no BLOB values"
            )));
        }
    };
    Ok(a.as_binary::<i64>().clone())
}

/// `col` with the leaf values at the given indexes replaced (leaves as
/// [`crate::blob::resolve::leaves`] gives them); the leaves become `LargeBinary`.
fn with_leaves_replaced(
    col: &ArrayRef,
    name: &str,
    new_values: &BTreeMap<usize, Vec<u8>>,
) -> Result<ArrayRef> {
    let rebuild = |leaves: &ArrayRef| -> Result<ArrayRef> {
        let old = binary_values(leaves, name)?;
        let values: LargeBinaryArray = (0..old.len())
            .map(|j| match new_values.get(&j) {
                Some(b) => Some(b.as_slice()),
                None => old.is_valid(j).then(|| old.value(j)),
            })
            .collect();
        Ok(Arc::new(values))
    };
    let err = |e| Error::arrow(format!("column '{name}'"), e);
    let large = |f: &arrow_schema::FieldRef| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(arrow_schema::DataType::LargeBinary),
        )
    };
    if let Some(l) = col.as_list_opt::<i32>() {
        let arrow_schema::DataType::List(f) = l.data_type() else {
            return Err(Error::invalid(format!("column '{name}': not a list")));
        };
        let list = arrow_array::ListArray::try_new(
            large(f),
            l.offsets().clone(),
            rebuild(l.values())?,
            l.nulls().cloned(),
        )
        .map_err(err)?;
        return Ok(Arc::new(list));
    }
    if let Some(l) = col.as_list_opt::<i64>() {
        let arrow_schema::DataType::LargeList(f) = l.data_type() else {
            return Err(Error::invalid(format!("column '{name}': not a list")));
        };
        let list = arrow_array::LargeListArray::try_new(
            large(f),
            l.offsets().clone(),
            rebuild(l.values())?,
            l.nulls().cloned(),
        )
        .map_err(err)?;
        return Ok(Arc::new(list));
    }
    if let Some(m) = col.as_map_opt() {
        let arrow_schema::DataType::Map(entries_field, ordered) = m.data_type() else {
            return Err(Error::invalid(format!("column '{name}': not a map")));
        };
        let entries = m.entries();
        let arrow_schema::DataType::Struct(fields) = entries_field.data_type() else {
            return Err(Error::invalid(format!("column '{name}': map entries")));
        };
        let mut fields: Vec<arrow_schema::FieldRef> = fields.iter().cloned().collect();
        if fields.len() != 2 {
            return Err(Error::invalid(format!("column '{name}': map entries")));
        }
        fields[1] = large(&fields[1]);
        let new_entries = StructArray::try_new(
            fields.clone().into(),
            vec![Arc::clone(entries.column(0)), rebuild(entries.column(1))?],
            entries.nulls().cloned(),
        )
        .map_err(err)?;
        let entries_field = Arc::new(
            entries_field
                .as_ref()
                .clone()
                .with_data_type(arrow_schema::DataType::Struct(fields.into())),
        );
        let map = arrow_array::MapArray::try_new(
            entries_field,
            m.offsets().clone(),
            new_entries,
            m.nulls().cloned(),
            *ordered,
        )
        .map_err(err)?;
        return Ok(Arc::new(map));
    }
    rebuild(col)
}

/// [`resolve_blob_references`] as a machine emitting the resolved batch once.
pub fn resolve_blob_references_machine(
    schema: TableSchema,
    batch: RecordBatch,
) -> crate::io::Machine<RecordBatch> {
    crate::io::Machine::once("ResolveBlobReferences", move |io| async move {
        resolve_blob_references(&io, &schema, &batch).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::append::CompactRewriter;
    use crate::io::FileContent;
    use crate::io::MemoryStore;
    use crate::schema::create::new_table_schema;
    use crate::spec::BinaryRow;
    use crate::write::{TableWrite, WriteOptions, WriteRestore};

    fn de_schema() -> TableSchema {
        new_table_schema(
            br#"{"fields": [{"name": "id", "type": "INT"}, {"name": "b", "type": "BLOB"}],
                 "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}"#,
            0,
        )
        .unwrap()
    }

    fn input(values: Vec<Option<Vec<u8>>>) -> RecordBatch {
        let ids: ArrayRef = Arc::new(arrow_array::Int32Array::from_iter_values(
            0..values.len() as i32,
        ));
        let b: ArrayRef = Arc::new(LargeBinaryArray::from_iter(values));
        RecordBatch::try_from_iter([("id", ids), ("b", b)]).unwrap()
    }

    fn options() -> WriteOptions {
        WriteOptions {
            seed: 3,
            time_millis: 0,
        }
    }

    #[test]
    fn lengths_are_resolved_and_bad_references_rejected() {
        let mut store = MemoryStore::new();
        store
            .objects
            .insert("file:/x/src.bin".into(), bytes::Bytes::from(vec![7u8; 500]));
        let schema = de_schema();
        let d = |uri: &str, o: i64, l: i64| Some(BlobDescriptor::new(uri, o, l).serialize());
        let batch = input(vec![
            Some(b"raw".to_vec()),
            d("file:/x/src.bin", 100, -1),
            None,
            d("file:/x/src.bin", 0, 500),
        ]);
        assert!(has_blob_references(&schema, &batch).unwrap());
        assert!(!has_blob_references(&schema, &input(vec![Some(b"raw".to_vec())])).unwrap());
        let out = store
            .run(resolve_blob_references_machine(schema.clone(), batch))
            .unwrap()
            .remove(0);
        let b = out.column(1).as_binary::<i64>();
        assert_eq!(b.value(0), b"raw");
        let resolved = BlobDescriptor::deserialize(b.value(1)).unwrap();
        assert_eq!((resolved.offset(), resolved.length()), (100, 400));
        assert!(b.is_null(2));
        assert_eq!(
            BlobDescriptor::deserialize(b.value(3)).unwrap().length(),
            500
        );
        for (bad, want) in [
            (
                d("file:/x/none.bin", 0, 1),
                "row 0: blob descriptor of file:/x/none.bin: the object does not exist",
            ),
            (
                d("file:/x/src.bin", 400, 101),
                "bytes 400..501 are past the end of the object (500 bytes)",
            ),
            (d("file:/x/src.bin", 501, -1), "offset 501 is past the end"),
            (d("file:/x/src.bin", -1, 5), "negative offset -1"),
            (d("file:/x/src.bin", 0, -2), "invalid length -2"),
        ] {
            let e = store
                .run(resolve_blob_references_machine(
                    schema.clone(),
                    input(vec![bad]),
                ))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want) && e.contains("column 'b'"), "{e}");
        }
    }

    /// A table write copies the bytes a descriptor names; a compaction rewrite keeps stored
    /// bytes that look like a descriptor as they are.
    #[test]
    fn compaction_rewrites_never_read_stored_bytes_as_references() {
        let looks_like = BlobDescriptor::new("file:/x/src.bin", 0, 3).serialize();
        let batch = input(vec![Some(looks_like.clone())]);
        let blob_content = |files: Vec<crate::io::FileToPut>| {
            files
                .into_iter()
                .find(|f| f.path.ends_with(".blob"))
                .unwrap()
                .content
        };
        let mut w = TableWrite::try_new(de_schema(), WriteRestore::default(), options()).unwrap();
        w.write(&batch).unwrap();
        w.prepare_commit().unwrap();
        assert!(matches!(
            blob_content(w.take_files()),
            FileContent::Streamed(_)
        ));
        let mut r =
            CompactRewriter::try_new(de_schema(), BinaryRow::empty(), 0, None, true, options())
                .unwrap();
        r.write(&batch).unwrap();
        r.finish().unwrap();
        let FileContent::Bytes(bytes) = blob_content(r.take_files()) else {
            panic!("a compaction rewrite must store the bytes");
        };
        assert!(
            bytes
                .windows(looks_like.len())
                .any(|w| w == looks_like.as_slice())
        );
    }

    /// Retractions of a primary-key table keep no payload: their descriptors are not looked
    /// up (a `-D` naming a pack that is gone must not fail the write).
    #[test]
    fn retractions_are_not_looked_up() {
        let schema = new_table_schema(
            br#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
                 "primaryKeys": ["id"], "options": {"bucket": "1"}}"#,
            0,
        )
        .unwrap();
        let mut store = MemoryStore::new();
        store
            .objects
            .insert("file:/x/src.bin".into(), bytes::Bytes::from(vec![1u8; 10]));
        let gone = BlobDescriptor::new("file:/x/gone.bin", 0, 5).serialize();
        let live = BlobDescriptor::new("file:/x/src.bin", 0, -1).serialize();
        let batch = |kinds: Vec<&str>, blobs: Vec<Vec<u8>>| {
            let ids: ArrayRef = Arc::new(arrow_array::Int32Array::from_iter_values(
                0..kinds.len() as i32,
            ));
            let b: ArrayRef = Arc::new(LargeBinaryArray::from_iter_values(blobs));
            let k: ArrayRef = Arc::new(arrow_array::StringArray::from(kinds));
            RecordBatch::try_from_iter([("id", ids), ("b", b), ("_ROW_KIND", k)]).unwrap()
        };
        let only_retract = batch(vec!["-D"], vec![gone.clone()]);
        assert!(!has_blob_references(&schema, &only_retract).unwrap());
        let mixed = batch(vec!["+I", "-D", "-U"], vec![live, gone.clone(), gone]);
        assert!(has_blob_references(&schema, &mixed).unwrap());
        let out = store
            .run(resolve_blob_references_machine(schema, mixed))
            .unwrap()
            .remove(0);
        let b = out.column(1).as_binary::<i64>();
        assert_eq!(
            BlobDescriptor::deserialize(b.value(0)).unwrap().length(),
            10
        );
    }
}
