//! Managed BLOB columns of primary-key tables: payloads go to `.managed.blob` packs before the
//! rows enter the write buffer, the rows keep blob descriptors, and every data file lists the
//! packs its rows reference in a `.blobref` sidecar.
//!
//! * Which columns: every `BLOB` column of a primary-key table that is not stored inline
//!   (`blob-descriptor-field` / `blob.stored-descriptor-fields` / `blob-view-field`).
//!   `ARRAY<BLOB>` and `MAP<K, BLOB>` columns are managed in Java too; writing them is
//!   unsupported here (an error names the column).
//! * Externalizing (per input row, per managed column, in column order): a null stays null; a
//!   retraction (`-U`, `-D`) gets null and writes nothing; any other value is appended to the
//!   column's open pack of its bucket writer and replaced by a version-2 blob descriptor
//!   `(full pack URI, payload offset, payload length)`. An input value is the blob bytes, or a
//!   serialized blob descriptor (a file reference, as Java's engines read such input with
//!   `Blob.fromBytes`): then the bytes it points at are copied into the pack when the pack is
//!   written (streamed, never held in memory; the length must be known, see
//!   [`crate::blob::references`]). A blob view struct is refused as unsupported.
//! * Packs: one open pack per bucket writer and column, opened at its first value, named
//!   `<data-file.prefix><uuid>-<n>.managed.blob` with the bucket writer's UUID and file
//!   counter, in the bucket directory; finished once its records reach
//!   `blob.target-file-size` (default `target-file-size` when set, else 256 MiB) and at
//!   prepare-commit, so no pack spans two commits.
//! * Sidecars: a data file's sidecar lists the packs named by the descriptors of its
//!   non-retract rows (sorted, deduplicated; empty when none), written as
//!   `<data file>.blobref` and listed in the file's extra files. Changelog files get none.
//!
//! Memory: the bytes of an open pack are sent as parts of a streamed `Put` once they reach a
//! part ([`crate::write::TableWrite::with_put_part_bytes`], 8 MiB), as long as no value of the
//! pack is a reference; the referenced bytes are copied while the pack is written (see
//! [`crate::io::put`]). So a bucket writer holds less than a part of inline blob bytes per
//! managed column, or, once a pack took a reference, the inline bytes added to it after that.
//!
//! See `/spec/managed-blob.md`. Source: Java `org.apache.paimon.blob.PrimaryKeyBlobExternalizer`,
//! `ManagedBlobReferenceCollector`, `org.apache.paimon.io.KeyValueFileWriterFactory`.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, LargeBinaryArray};

use crate::encode::parts::FileParts;
use crate::error::{Error, Result};
use crate::format::blob::{BlobElementKind, BlobFileWriter, BlobInput};
use crate::format::blob_descriptor::BlobDescriptor;
use crate::format::blob_ref::{BlobRefCollector, blobref_file_name};
use crate::io::FileToPut;
use crate::spec::{CoreOptions, TableSchema};

use crate::spec::file_names::MANAGED_BLOB_SUFFIX;

/// Default `blob.target-file-size` of managed packs when `target-file-size` is unset: 256 MiB.
const DEFAULT_PACK_SIZE: u64 = 256 << 20;

/// The managed BLOB columns of a primary-key table: positions in the table's columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManagedBlobColumns {
    /// (position in the table's fields, name, kind), in table order.
    pub(crate) columns: Vec<(usize, String, BlobElementKind)>,
    /// `blob.target-file-size` of the packs, in bytes.
    pub(crate) target_file_size: u64,
}

impl ManagedBlobColumns {
    /// The managed columns of `schema` (a primary-key table), `None` when it has none.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad `blob.target-file-size` / `target-file-size`.
    pub(crate) fn try_new(schema: &TableSchema, options: &CoreOptions) -> Result<Option<Self>> {
        if !schema.is_primary_key_table() {
            return Ok(None);
        }
        let inline = crate::blob::validation::blob_inline_fields(options);
        let mut columns = Vec::new();
        for (i, f) in schema.fields.iter().enumerate() {
            if inline.contains(&f.name) {
                continue;
            }
            if let Ok(kind) = BlobElementKind::try_from_data_type(&f.data_type) {
                columns.push((i, f.name.clone(), kind));
            }
        }
        if columns.is_empty() {
            return Ok(None);
        }
        let size = |key: &str| -> Result<Option<u64>> {
            options
                .get(key)
                .map(|v| {
                    crate::spec::options::parse_memory_size(v)
                        .ok()
                        .and_then(|b| u64::try_from(b).ok())
                        .ok_or_else(|| {
                            Error::invalid(format!("option '{key}' = '{v}' is not a memory size"))
                        })
                })
                .transpose()
        };
        let target_file_size = match size("blob.target-file-size")? {
            Some(s) => s,
            None => size("target-file-size")?.unwrap_or(DEFAULT_PACK_SIZE),
        };
        Ok(Some(ManagedBlobColumns {
            columns,
            target_file_size: target_file_size.max(1),
        }))
    }

    /// Positions of the managed columns in a key-value file's columns, given the number of
    /// key columns `k` (values start after the key, `_SEQUENCE_NUMBER` and `_VALUE_KIND`).
    pub(crate) fn file_positions(&self, k: usize) -> Vec<(usize, BlobElementKind)> {
        self.columns
            .iter()
            .map(|(i, _, kind)| (k + 2 + i, *kind))
            .collect()
    }
}

/// The open packs of one bucket writer, one slot per managed column.
#[derive(Debug, Default)]
pub(crate) struct PackWriters {
    open: Vec<Option<OpenPack>>,
}

#[derive(Debug)]
struct OpenPack {
    /// File name in the bucket directory.
    name: String,
    /// Full URI written into descriptors.
    uri: String,
    writer: BlobFileWriter,
    /// Parts of the pack sent while it is written.
    parts: FileParts,
}

/// Where a bucket writer's packs go and how they are named.
pub(crate) struct PackTarget<'a> {
    /// Bucket directory relative to the table root (`dt=1/bucket-0`).
    pub(crate) bucket_dir: &'a str,
    /// The table's root URI as Java writes it (`file:/tmp/t`, `s3://b/t`), no trailing `/`.
    pub(crate) table_uri: &'a str,
    /// Next file name of the bucket writer without suffix (`data-<uuid>-<n>`).
    pub(crate) next_stem: &'a mut dyn FnMut() -> String,
    /// Part size of packs streamed while they are written, in bytes (see
    /// [`crate::encode::parts::FileParts`]).
    pub(crate) part_bytes: usize,
}

impl PackWriters {
    /// Externalize the managed columns of `columns` (a bucket's rows in table column order)
    /// in place; `kinds` are the rows' row-kind bytes (`None`: all inserts). Finished packs
    /// are appended to `done`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a managed column whose Arrow type is not binary.
    pub(crate) fn externalize(
        &mut self,
        layout: &ManagedBlobColumns,
        columns: &mut [ArrayRef],
        kinds: Option<&ArrayRef>,
        target: &mut PackTarget<'_>,
        done: &mut Vec<FileToPut>,
    ) -> Result<()> {
        if self.open.len() < layout.columns.len() {
            self.open.resize_with(layout.columns.len(), || None);
        }
        let rows = columns.first().map_or(0, |c| c.len());
        let kinds = kinds.map(|k| k.as_primitive::<arrow_array::types::Int8Type>());
        let mut inputs: Vec<ColumnInput> = layout
            .columns
            .iter()
            .map(|(i, name, kind)| ColumnInput::try_new(&columns[*i], name, *kind))
            .collect::<Result<_>>()?;
        for r in 0..rows {
            let retract = kinds.is_some_and(|k| matches!(k.value(r), 1 | 3));
            for (c, input) in inputs.iter_mut().enumerate() {
                let slot = &mut self.open[c];
                input.externalize_row(r, retract, &mut |payload: &[u8]| {
                    write_payload(slot, payload, layout.target_file_size, target, done)
                })?;
            }
        }
        for ((i, _, _), input) in layout.columns.iter().zip(inputs) {
            columns[*i] = input.finish()?;
        }
        Ok(())
    }

    /// Paths of the open packs whose first parts went out (uploads to abort on a failure).
    pub(crate) fn open_uploads(&self) -> impl Iterator<Item = &str> {
        self.open.iter().flatten().filter_map(|p| p.parts.path())
    }

    /// Finish every open pack (prepare-commit: a pack never spans two commits).
    ///
    /// # Errors
    /// As [`BlobFileWriter::finish`].
    pub(crate) fn finish_all(&mut self, bucket_dir: &str, done: &mut Vec<FileToPut>) -> Result<()> {
        for slot in &mut self.open {
            if let Some(p) = slot.take() {
                done.push(finish_pack(p, bucket_dir)?);
            }
        }
        Ok(())
    }
}

/// Append one payload to the column's pack (opening it first), returning its descriptor
/// bytes; finishes the pack once it reaches `target_file_size`.
fn write_payload(
    slot: &mut Option<OpenPack>,
    payload: &[u8],
    target_file_size: u64,
    target: &mut PackTarget<'_>,
    done: &mut Vec<FileToPut>,
) -> Result<Vec<u8>> {
    let pack = match slot {
        Some(p) => p,
        None => {
            let name = format!("{}{MANAGED_BLOB_SUFFIX}", (target.next_stem)());
            let uri = format!("{}/{}/{name}", target.table_uri, target.bucket_dir);
            slot.insert(OpenPack {
                name,
                uri,
                writer: BlobFileWriter::with_references(),
                parts: FileParts::default(),
            })
        }
    };
    let value = BlobInput::from_bytes(payload, true)?;
    let range = pack.writer.push_blob(&value);
    if let Some(bytes) = pack.writer.take_laid_out(target.part_bytes) {
        let path = format!("{}/{}", target.bucket_dir, pack.name);
        done.push(pack.parts.push(bytes, || (path, None)));
    }
    let descriptor = BlobDescriptor::new(
        pack.uri.clone(),
        range.start as i64,
        (range.end - range.start) as i64,
    );
    if pack.writer.position() >= target_file_size
        && let Some(p) = slot.take()
    {
        done.push(finish_pack(p, target.bucket_dir)?);
    }
    Ok(descriptor.serialize())
}

/// One managed column of an input batch being externalized row by row.
enum ColumnInput {
    Blob {
        input: LargeBinaryArray,
        out: Vec<Option<Vec<u8>>>,
    },
    Array {
        field: arrow_schema::FieldRef,
        offsets: Vec<i32>,
        values: LargeBinaryArray,
        list_nulls: Vec<bool>,
        out: Vec<Option<Vec<u8>>>,
        out_offsets: Vec<i32>,
        name: String,
    },
    Map {
        map: Box<arrow_array::MapArray>,
        keys: Box<arrow_row::Rows>,
        values: LargeBinaryArray,
        /// Kept entries (positions in the input's entries) and their new values.
        kept: Vec<u32>,
        out: Vec<Option<Vec<u8>>>,
        out_offsets: Vec<i32>,
        valid: Vec<bool>,
    },
}

fn large_binary(a: &ArrayRef, name: &str) -> Result<LargeBinaryArray> {
    let a = match a.data_type() {
        arrow_schema::DataType::LargeBinary => Arc::clone(a),
        arrow_schema::DataType::Binary | arrow_schema::DataType::BinaryView => {
            arrow_cast::cast(a.as_ref(), &arrow_schema::DataType::LargeBinary)
                .map_err(|e| Error::arrow(format!("column '{name}'"), e))?
        }
        other => {
            return Err(Error::unsupported(format!(
                "Arrow type {other} for the BLOB values of the managed column '{name}'"
            )));
        }
    };
    Ok(a.as_binary::<i64>().clone())
}

impl ColumnInput {
    fn try_new(col: &ArrayRef, name: &str, kind: BlobElementKind) -> Result<Self> {
        let rows = col.len();
        match kind {
            BlobElementKind::Blob => Ok(ColumnInput::Blob {
                input: large_binary(col, name)?,
                out: Vec::with_capacity(rows),
            }),
            BlobElementKind::Array => {
                let list = col.as_list_opt::<i32>().ok_or_else(|| {
                    Error::unsupported(format!(
                        "Arrow type {} for the managed ARRAY<BLOB> column '{name}'",
                        col.data_type()
                    ))
                })?;
                let arrow_schema::DataType::List(field) = col.data_type() else {
                    return Err(Error::invalid(format!("column '{name}' is not a list")));
                };
                Ok(ColumnInput::Array {
                    field: Arc::new(
                        field
                            .as_ref()
                            .clone()
                            .with_data_type(arrow_schema::DataType::LargeBinary),
                    ),
                    offsets: list.value_offsets().to_vec(),
                    values: large_binary(list.values(), name)?,
                    list_nulls: (0..rows).map(|r| list.is_valid(r)).collect(),
                    out: Vec::new(),
                    out_offsets: vec![0],
                    name: name.to_owned(),
                })
            }
            BlobElementKind::Map(_) => {
                let map = col.as_map_opt().ok_or_else(|| {
                    Error::unsupported(format!(
                        "Arrow type {} for the managed MAP<K, BLOB> column '{name}'",
                        col.data_type()
                    ))
                })?;
                let converter = arrow_row::RowConverter::new(vec![arrow_row::SortField::new(
                    map.keys().data_type().clone(),
                )])
                .map_err(|e| Error::arrow(format!("keys of column '{name}'"), e))?;
                let keys = converter
                    .convert_columns(&[Arc::clone(map.keys())])
                    .map_err(|e| Error::arrow(format!("keys of column '{name}'"), e))?;
                Ok(ColumnInput::Map {
                    values: large_binary(map.values(), name)?,
                    map: Box::new(map.clone()),
                    keys: Box::new(keys),
                    kept: Vec::new(),
                    out: Vec::new(),
                    out_offsets: vec![0],
                    valid: Vec::with_capacity(rows),
                })
            }
        }
    }

    /// Externalize row `r` (`retract`: null, nothing written).
    fn externalize_row(
        &mut self,
        r: usize,
        retract: bool,
        write: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>,
    ) -> Result<()> {
        match self {
            ColumnInput::Blob { input, out } => {
                if retract || input.is_null(r) {
                    out.push(None);
                } else {
                    out.push(Some(write(input.value(r))?));
                }
            }
            ColumnInput::Array {
                offsets,
                values,
                list_nulls,
                out,
                out_offsets,
                ..
            } => {
                if retract || !list_nulls[r] {
                    list_nulls[r] = false;
                } else {
                    for j in offsets[r] as usize..offsets[r + 1] as usize {
                        if values.is_null(j) {
                            out.push(None);
                        } else {
                            out.push(Some(write(values.value(j))?));
                        }
                    }
                }
                out_offsets.push(out.len() as i32);
            }
            ColumnInput::Map {
                map,
                keys,
                values,
                kept,
                out,
                out_offsets,
                valid,
            } => {
                if retract || map.is_null(r) {
                    valid.push(false);
                } else {
                    let o = map.value_offsets();
                    let (start, end) = (o[r] as usize, o[r + 1] as usize);
                    // Duplicate keys: the last entry wins, at the position of the first.
                    let mut entries: Vec<(usize, usize)> = Vec::new();
                    for j in start..end {
                        match entries
                            .iter_mut()
                            .find(|(first, _)| keys.row(*first) == keys.row(j))
                        {
                            Some(e) => e.1 = j,
                            None => entries.push((j, j)),
                        }
                    }
                    for (first, last) in entries {
                        kept.push(first as u32);
                        if values.is_null(last) {
                            out.push(None);
                        } else {
                            out.push(Some(write(values.value(last))?));
                        }
                    }
                    valid.push(true);
                }
                out_offsets.push(out.len() as i32);
            }
        }
        Ok(())
    }

    /// The externalized column.
    fn finish(self) -> Result<ArrayRef> {
        let err = |e| Error::arrow("building an externalized BLOB column", e);
        Ok(match self {
            ColumnInput::Blob { out, .. } => Arc::new(LargeBinaryArray::from_iter(out)),
            ColumnInput::Array {
                field,
                list_nulls,
                out,
                out_offsets,
                name,
                ..
            } => {
                let values: ArrayRef = Arc::new(LargeBinaryArray::from_iter(out));
                let list = arrow_array::ListArray::try_new(
                    field,
                    arrow_buffer::OffsetBuffer::new(out_offsets.into()),
                    values,
                    Some(arrow_buffer::NullBuffer::from(list_nulls)),
                )
                .map_err(|e| Error::arrow(format!("column '{name}'"), e))?;
                // Back to the column's declared element type.
                Arc::new(list)
            }
            ColumnInput::Map {
                map,
                kept,
                out,
                out_offsets,
                valid,
                ..
            } => {
                let arrow_schema::DataType::Map(entries_field, ordered) = map.data_type() else {
                    return Err(Error::invalid("a MAP<K, BLOB> column is not a map"));
                };
                let arrow_schema::DataType::Struct(fields) = entries_field.data_type() else {
                    return Err(Error::invalid("map entries are not a struct"));
                };
                let idx = arrow_array::UInt32Array::from(kept);
                let keys =
                    arrow_select::take::take(map.keys().as_ref(), &idx, None).map_err(err)?;
                let values: ArrayRef = Arc::new(LargeBinaryArray::from_iter(out));
                // Values are descriptors now: LargeBinary, whatever binary type came in.
                let fields: arrow_schema::Fields = fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        if i == 1 {
                            Arc::new(
                                f.as_ref()
                                    .clone()
                                    .with_data_type(arrow_schema::DataType::LargeBinary),
                            )
                        } else {
                            Arc::clone(f)
                        }
                    })
                    .collect();
                let entries_field = Arc::new(
                    entries_field
                        .as_ref()
                        .clone()
                        .with_data_type(arrow_schema::DataType::Struct(fields.clone())),
                );
                let entries = arrow_array::StructArray::try_new(fields, vec![keys, values], None)
                    .map_err(err)?;
                Arc::new(
                    arrow_array::MapArray::try_new(
                        entries_field,
                        arrow_buffer::OffsetBuffer::new(out_offsets.into()),
                        entries,
                        Some(arrow_buffer::NullBuffer::from(valid)),
                        *ordered,
                    )
                    .map_err(err)?,
                )
            }
        })
    }
}

fn finish_pack(p: OpenPack, bucket_dir: &str) -> Result<FileToPut> {
    let rest = p.writer.finish_content()?;
    let path = format!("{bucket_dir}/{}", p.name);
    Ok(p.parts.finish_content(rest, || (path, None)).0)
}

/// Collects the pack references of the rows written to one data file.
#[derive(Debug, Default)]
pub(crate) struct SidecarCollector {
    uris: BTreeSet<String>,
}

impl SidecarCollector {
    /// Add the descriptor URIs of the non-retract rows of a key-value `batch` (file layout:
    /// `k` key columns, `_SEQUENCE_NUMBER`, `_VALUE_KIND`, values), managed columns at
    /// `positions`.
    ///
    /// # Errors
    /// [`Error::Corrupt`]/[`Error::Unsupported`] for a managed value that is not a blob
    /// descriptor.
    pub(crate) fn add_batch(
        &mut self,
        batch: &arrow_array::RecordBatch,
        k: usize,
        positions: &[(usize, BlobElementKind)],
    ) -> Result<()> {
        let kinds = batch
            .column(k + 1)
            .as_primitive::<arrow_array::types::Int8Type>();
        for (p, kind) in positions {
            let col = batch.column(*p);
            let (leaves, ranges) = crate::blob::resolve::leaves(col, *kind)?;
            let Some(values) = leaves.as_binary_opt::<i64>() else {
                return Err(Error::unsupported(format!(
                    "Arrow type {} for a managed BLOB column",
                    col.data_type()
                )));
            };
            for (r, range) in ranges.into_iter().enumerate() {
                if col.is_null(r) || matches!(kinds.value(r), 1 | 3) {
                    continue;
                }
                for j in range {
                    if values.is_null(j) {
                        continue;
                    }
                    let d = BlobDescriptor::deserialize(values.value(j))?;
                    if !self.uris.contains(d.uri()) {
                        self.uris.insert(d.uri().to_owned());
                    }
                }
            }
        }
        Ok(())
    }

    /// The sidecar of a data file named `file_name` in `bucket_dir`: the file to `Put` and the
    /// extra-file name to list in the data file's meta.
    ///
    /// # Errors
    /// Encoding errors of the sidecar (a reference string over 65,535 encoded bytes).
    pub(crate) fn finish(self, bucket_dir: &str, file_name: &str) -> Result<(FileToPut, String)> {
        let mut c = BlobRefCollector::new();
        for u in &self.uris {
            c.add_uri(u)?;
        }
        let name = blobref_file_name(file_name);
        let bytes = c.finish()?;
        Ok((
            FileToPut::whole(format!("{bucket_dir}/{name}"), bytes),
            name,
        ))
    }
}

/// The columns of a table whose stored values are blob descriptors that a read resolves to
/// bytes (unless `blob-as-descriptor`): on primary-key tables every `BLOB`, `ARRAY<BLOB>` and
/// `MAP<K, BLOB>` column except `blob-view-field` ones (managed columns and
/// `blob-descriptor-field` columns); on other tables the `blob-descriptor-field` columns.
/// Pairs of (column name, kind).
pub(crate) fn descriptor_backed_fields(
    schema: &TableSchema,
    options: &CoreOptions,
) -> Vec<(String, BlobElementKind)> {
    use crate::blob::validation::{
        BLOB_DESCRIPTOR_FIELD, BLOB_DESCRIPTOR_FIELD_FALLBACK, BLOB_VIEW_FIELD, comma_set,
    };
    let views = comma_set(options, &[BLOB_VIEW_FIELD]);
    let descriptors = comma_set(
        options,
        &[BLOB_DESCRIPTOR_FIELD, BLOB_DESCRIPTOR_FIELD_FALLBACK],
    );
    let pk = schema.is_primary_key_table();
    schema
        .fields
        .iter()
        .filter(|f| !views.contains(&f.name) && (pk || descriptors.contains(&f.name)))
        .filter_map(|f| {
            BlobElementKind::try_from_data_type(&f.data_type)
                .ok()
                .map(|k| (f.name.clone(), k))
        })
        .collect()
}

/// The table-root URI Java writes into pack descriptors, from a host location URL:
/// `file:///tmp/t/` → `file:/tmp/t`, other schemes unchanged (trailing `/` removed).
pub fn java_table_uri(location: &str) -> String {
    let l = location.trim_end_matches('/');
    match l.strip_prefix("file://") {
        Some(rest) if rest.starts_with('/') => format!("file:{rest}"),
        _ => l.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(kinds: &[BlobElementKind], target: u64) -> ManagedBlobColumns {
        ManagedBlobColumns {
            columns: kinds
                .iter()
                .enumerate()
                .map(|(i, k)| (i, format!("c{i}"), *k))
                .collect(),
            target_file_size: target,
        }
    }

    fn run(
        layout: &ManagedBlobColumns,
        columns: &mut [ArrayRef],
        kinds: Option<&ArrayRef>,
    ) -> Vec<FileToPut> {
        let mut packs = PackWriters::default();
        let mut n = 0;
        let mut stem = || {
            n += 1;
            format!("data-u-{}", n - 1)
        };
        let mut target = PackTarget {
            bucket_dir: "bucket-0",
            table_uri: "file:/t",
            next_stem: &mut stem,
            part_bytes: usize::MAX,
        };
        let mut done = Vec::new();
        packs
            .externalize(layout, columns, kinds, &mut target, &mut done)
            .unwrap();
        packs.finish_all("bucket-0", &mut done).unwrap();
        done
    }

    fn descriptor(b: &[u8]) -> BlobDescriptor {
        BlobDescriptor::deserialize(b).unwrap()
    }

    #[test]
    fn values_become_descriptors_into_packs_retractions_become_null() {
        let l = layout(&[BlobElementKind::Blob], 1 << 20);
        let input: ArrayRef = Arc::new(LargeBinaryArray::from(vec![
            Some(&b"hello"[..]),
            None,
            Some(&b"gone"[..]),
            Some(&b""[..]),
        ]));
        let kinds: ArrayRef = Arc::new(arrow_array::Int8Array::from(vec![0i8, 0, 3, 2]));
        let mut cols = vec![input];
        let done = run(&l, &mut cols, Some(&kinds));
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].path, "bucket-0/data-u-0.managed.blob");
        let out = cols[0].as_binary::<i64>();
        let d0 = descriptor(out.value(0));
        assert_eq!(d0.uri(), "file:/t/bucket-0/data-u-0.managed.blob");
        assert_eq!((d0.offset(), d0.length()), (4, 5));
        assert_eq!(&done[0].content.bytes().unwrap()[4..9], b"hello");
        assert!(
            out.is_null(1) && out.is_null(2),
            "null and -D rows hold null"
        );
        let d3 = descriptor(out.value(3));
        // record of "hello": magic 4 + 5 + length 8 + crc 4 = 21 bytes; the next payload at 25.
        assert_eq!((d3.offset(), d3.length()), (25, 0));
    }

    #[test]
    fn packs_roll_at_the_target_size_and_take_the_writer_counter() {
        let l = layout(&[BlobElementKind::Blob, BlobElementKind::Blob], 10);
        let a: ArrayRef = Arc::new(LargeBinaryArray::from(vec![Some(&b"0123456789ab"[..]); 2]));
        let b: ArrayRef = Arc::new(LargeBinaryArray::from(vec![None, Some(&b"x"[..])]));
        let mut cols = vec![a, b];
        let done = run(&l, &mut cols, None);
        // Row 0: c0 opens pack 0 (rolls right away); row 1: c0 opens pack 1, c1 opens pack 2.
        let paths: Vec<&str> = done.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "bucket-0/data-u-0.managed.blob",
                "bucket-0/data-u-1.managed.blob",
                "bucket-0/data-u-2.managed.blob"
            ]
        );
        let c1 = descriptor(cols[1].as_binary::<i64>().value(1));
        assert!(c1.uri().ends_with("data-u-2.managed.blob"));
    }

    #[test]
    fn duplicate_map_keys_keep_the_last_value_and_never_write_the_overridden_one() {
        use arrow_array::builder::{BinaryBuilder, Int32Builder, MapBuilder};
        let mut m = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
        m.keys().append_value(1);
        m.values().append_value(b"overridden");
        m.keys().append_value(1);
        m.values().append_value(b"last");
        m.keys().append_value(2);
        m.values().append_null();
        m.append(true).unwrap();
        let map: ArrayRef = Arc::new(m.finish());
        let kind = BlobElementKind::try_from_data_type(&crate::spec::DataType::nullable(
            crate::spec::TypeKind::Map(
                Box::new(crate::spec::DataType::not_null(crate::spec::TypeKind::Int)),
                Box::new(crate::spec::DataType::nullable(crate::spec::TypeKind::Blob)),
            ),
        ))
        .unwrap();
        let l = layout(&[kind], 1);
        let mut cols = vec![map];
        let done = run(&l, &mut cols, None);
        assert_eq!(done.len(), 1, "one payload written: 'overridden' never was");
        let out = cols[0].as_map();
        assert_eq!(out.value_offsets(), &[0, 2]);
        let keys = out.keys().as_primitive::<arrow_array::types::Int32Type>();
        assert_eq!(keys.values(), &[1, 2]);
        let values = out.values().as_binary::<i64>();
        let d = descriptor(values.value(0));
        assert_eq!(d.length(), 4);
        assert_eq!(&done[0].content.bytes().unwrap()[4..8], b"last");
        assert!(values.is_null(1));
    }

    #[test]
    fn array_elements_are_externalized_one_by_one() {
        use arrow_array::builder::{LargeBinaryBuilder, ListBuilder};
        let mut b = ListBuilder::new(LargeBinaryBuilder::new());
        b.values().append_value(b"a");
        b.values().append_null();
        b.values().append_value(b"bc");
        b.append(true);
        b.append(false);
        b.values().append_value(b"retracted");
        b.append(true);
        let list: ArrayRef = Arc::new(b.finish());
        let kinds: ArrayRef = Arc::new(arrow_array::Int8Array::from(vec![0i8, 0, 1]));
        let mut cols = vec![list];
        let done = run(
            &layout(&[BlobElementKind::Array], 1 << 20),
            &mut cols,
            Some(&kinds),
        );
        let out = cols[0].as_list::<i32>();
        assert!(out.is_valid(0) && out.is_null(1) && out.is_null(2));
        let items = out.value(0);
        let items = items.as_binary::<i64>();
        assert_eq!(items.len(), 3);
        assert!(items.is_null(1));
        assert_eq!(descriptor(items.value(2)).length(), 2);
        assert_eq!(done.len(), 1);
        assert!(
            !done[0]
                .content
                .bytes()
                .unwrap()
                .windows(9)
                .any(|w| w == b"retracted")
        );
    }

    #[test]
    fn sidecars_list_the_packs_of_non_retract_rows() {
        let d = |n: &str| BlobDescriptor::new(format!("file:/t/bucket-0/{n}"), 4, 1).serialize();
        let batch = arrow_array::RecordBatch::try_from_iter(vec![
            (
                "_KEY_id",
                Arc::new(arrow_array::Int32Array::from(vec![1, 2, 3])) as ArrayRef,
            ),
            (
                "_SEQUENCE_NUMBER",
                Arc::new(arrow_array::Int64Array::from(vec![1, 2, 3])) as ArrayRef,
            ),
            (
                "_VALUE_KIND",
                Arc::new(arrow_array::Int8Array::from(vec![0i8, 3, 0])) as ArrayRef,
            ),
            (
                "b",
                Arc::new(LargeBinaryArray::from(vec![
                    Some(d("b.managed.blob").as_slice()),
                    Some(d("gone.managed.blob").as_slice()),
                    Some(d("a.managed.blob").as_slice()),
                ])) as ArrayRef,
            ),
        ])
        .unwrap();
        let mut c = SidecarCollector::default();
        c.add_batch(&batch, 1, &[(3, BlobElementKind::Blob)])
            .unwrap();
        let (file, name) = c.finish("bucket-0", "data-1.parquet").unwrap();
        assert_eq!(name, "data-1.parquet.blobref");
        assert_eq!(file.path, "bucket-0/data-1.parquet.blobref");
        let refs =
            crate::format::blob_ref::decode_blobref(file.content.bytes().unwrap(), &name).unwrap();
        let names: Vec<&str> = refs.iter().map(|r| r.relative_path.as_str()).collect();
        assert_eq!(names, ["a.managed.blob", "b.managed.blob"]);
        assert!(refs.iter().all(|r| r.storage_root_id == "file:/t/bucket-0"));
    }

    #[test]
    fn java_uri_of_local_locations() {
        assert_eq!(
            java_table_uri("file:///tmp/wh/db.db/t/"),
            "file:/tmp/wh/db.db/t"
        );
        assert_eq!(java_table_uri("s3://b/wh/t"), "s3://b/wh/t");
    }
}
