//! BLOB columns stored inline in the data file: `blob-descriptor-field` (fallback key
//! `blob.stored-descriptor-fields`) and `blob-view-field` columns, on append (data-evolution)
//! and primary-key tables alike.
//!
//! Such a column is an ordinary binary column of the normal data file (Parquet `BINARY`, ORC
//! binary, Avro `bytes`): it never goes to `.blob` files (append tables) nor to
//! `.managed.blob` packs (primary-key tables), and each value is a small reference:
//!
//! | input value (Arrow `LargeBinary`; hex in JSON lines / CSV) | stored bytes |
//! |---|---|
//! | NULL | NULL |
//! | a blob view struct (`01`, magic `BLOBVIEW`, identifier, field id, row id) | the struct, re-serialized (the same bytes) |
//! | a version-2 blob descriptor (`02`, magic `BLOBDESC`, uri, offset, length) | the descriptor, re-serialized as version 2 (bytes after `length` dropped) |
//! | anything else: raw blob bytes, a version-1 descriptor (it has no magic) | refused: [`Error::Invalid`] naming the column and row |
//!
//! This is what Java stores: engines turn input bytes into a `Blob` with
//! `Blob.fromBytes(bytes, ..)` (a view struct if it looks like one, else a descriptor if it
//! looks like one, else raw data: Flink `FlinkRowWrapper#getBlob`, Spark `SparkRow#getBlob`),
//! and the format writers store `Blob.serializeBlob(blob)` (view struct bytes for a view, the
//! version-2 descriptor otherwise), which fails for raw data with "BLOB inline fields
//! configured by blob-descriptor-field or blob-view-field require values to be a
//! BlobDescriptor or BlobViewStruct." (Parquet `ParquetRowDataWriter.BlobDescriptorWriter`,
//! ORC and Avro `FieldWriterFactory`). Java 2.0 has no option that copies raw bytes of an
//! inline column anywhere: payload bytes are never read or copied at write time, and a
//! descriptor's target is not checked.
//!
//! Where we differ from Java 2.0 (stricter, never laxer):
//! * a blob descriptor in a `blob-view-field` column is refused: Java's writer stores it, but
//!   Java's data-evolution reader then fails with "blob-view-field requires blob field value
//!   to be a serialized BlobViewStruct." A view struct in a `blob-descriptor-field` column is
//!   stored, as in Java (readers return it unresolved, as its struct bytes);
//! * `blob-write-null-on-missing-file` = `true` (Flink writes NULL for a descriptor whose file
//!   does not exist) is unsupported: the writer does no IO to look;
//! * a view struct whose identifier has no database (or the `unknown` one) is refused, as
//!   Java's `BlobViewStruct#serialize` does, and so is one whose identifier is not UTF-8.
//!
//! Source: Java `org.apache.paimon.data.Blob` (`fromBytes`, `serializeBlob`),
//! `BlobDescriptor`, `BlobViewStruct`, `org.apache.paimon.CoreOptions#blobInlineField`,
//! `org.apache.paimon.operation.BlobFileContext` (inline columns need no blob file),
//! `org.apache.paimon.io.KeyValueFileWriterFactory#managedBlobFields` (inline columns are not
//! managed), `org.apache.paimon.table.source.DataEvolutionTableRead` (view fields);
//! `/spec/blob-descriptor.md` §3-4.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, LargeBinaryArray};

use crate::blob::validation::{
    BLOB_DESCRIPTOR_FIELD, BLOB_DESCRIPTOR_FIELD_FALLBACK, BLOB_VIEW_FIELD, comma_set,
};
use crate::error::{Error, Result};
use crate::format::blob_descriptor::{
    BlobDescriptor, BlobViewStruct, is_blob_descriptor, is_blob_view_struct,
};
use crate::spec::{CoreOptions, TableSchema, TypeKind};

/// `blob-write-null-on-missing-file` (Java `CoreOptions.BLOB_WRITE_NULL_ON_MISSING_FILE`,
/// default false).
pub const BLOB_WRITE_NULL_ON_MISSING_FILE: &str = "blob-write-null-on-missing-file";

/// How an inline BLOB column is declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlineBlobKind {
    /// Named by `blob-descriptor-field` (or `blob.stored-descriptor-fields`): blob
    /// descriptors of user-owned bytes.
    Descriptor,
    /// Named by `blob-view-field`: blob view structs, BLOB cells of other tables.
    View,
}

impl InlineBlobKind {
    /// The option that declares this kind.
    pub fn option(self) -> &'static str {
        match self {
            InlineBlobKind::Descriptor => BLOB_DESCRIPTOR_FIELD,
            InlineBlobKind::View => BLOB_VIEW_FIELD,
        }
    }
}

/// The bytes Java stores for one non-null input value of an inline BLOB column of `kind`
/// (see the module docs): a view struct or version-2 descriptor, re-serialized.
///
/// # Errors
/// [`Error::Invalid`] (without column or row: callers add them) for raw bytes (Java's message:
/// "BLOB inline fields configured by blob-descriptor-field or blob-view-field require values
/// to be a BlobDescriptor or BlobViewStruct."), a descriptor in a view column, and a struct
/// or descriptor that does not deserialize (e.g. "Invalid BlobDescriptor data: too short").
pub fn encode_inline_blob(value: &[u8], kind: InlineBlobKind) -> Result<Vec<u8>> {
    let reason = |e: Error| Error::invalid(e.to_string());
    if is_blob_view_struct(value) {
        let view = BlobViewStruct::deserialize(value).map_err(reason)?;
        return view.serialize().map_err(reason);
    }
    if is_blob_descriptor(value) {
        if kind == InlineBlobKind::View {
            return Err(Error::invalid(
                "blob-view-field requires blob field value to be a serialized BlobViewStruct \
                 (the value is a blob descriptor)",
            ));
        }
        return BlobDescriptor::deserialize(value)
            .map(|d| d.serialize())
            .map_err(reason);
    }
    Err(Error::invalid(
        "BLOB inline fields configured by blob-descriptor-field or blob-view-field require \
         values to be a BlobDescriptor or BlobViewStruct (the value is neither: raw blob \
         bytes are not stored inline)",
    ))
}

/// The inline BLOB columns of a table: positions in its columns, names and kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InlineBlobColumns {
    /// (position in the table's fields, name, kind), in table order.
    pub(crate) columns: Vec<(usize, String, InlineBlobKind)>,
}

impl InlineBlobColumns {
    /// The inline columns of `schema` (any table kind), `None` when it has none. The options
    /// must name scalar `BLOB` columns (checked by
    /// [`crate::blob::validation::validate_blob_fields`] when they name any).
    ///
    /// # Errors
    /// [`Error::Invalid`] with Java's messages for options naming unknown or non-BLOB columns
    /// (and the other BLOB schema rules); [`Error::Unsupported`] for
    /// `blob-write-null-on-missing-file` = `true`.
    pub(crate) fn try_new(schema: &TableSchema, options: &CoreOptions) -> Result<Option<Self>> {
        let descriptors = comma_set(
            options,
            &[BLOB_DESCRIPTOR_FIELD, BLOB_DESCRIPTOR_FIELD_FALLBACK],
        );
        let views = comma_set(options, &[BLOB_VIEW_FIELD]);
        if descriptors.is_empty() && views.is_empty() {
            return Ok(None);
        }
        crate::blob::validation::validate_blob_fields(schema)?;
        let mut columns = Vec::new();
        for (i, f) in schema.fields.iter().enumerate() {
            let kind = if descriptors.contains(&f.name) {
                InlineBlobKind::Descriptor
            } else if views.contains(&f.name) {
                InlineBlobKind::View
            } else {
                continue;
            };
            if !matches!(f.data_type.kind, TypeKind::Blob) {
                // validate_blob_fields refuses this; keep the writer safe on its own.
                return Err(Error::invalid(format!(
                    "Field '{}' in '{}' must be a BLOB field in table schema.",
                    f.name,
                    kind.option()
                )));
            }
            columns.push((i, f.name.clone(), kind));
        }
        if columns.is_empty() {
            return Ok(None);
        }
        match options.get(BLOB_WRITE_NULL_ON_MISSING_FILE) {
            Some(v) if v.trim().eq_ignore_ascii_case("true") => {
                return Err(Error::unsupported(format!(
                    "writing BLOB columns stored inline ({}) with \
                     '{BLOB_WRITE_NULL_ON_MISSING_FILE}' = true: the writer does not check \
                     that descriptor targets exist",
                    columns
                        .iter()
                        .map(|(_, n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            Some(v) if !v.trim().eq_ignore_ascii_case("false") => {
                return Err(Error::invalid(format!(
                    "invalid value '{v}' for option '{BLOB_WRITE_NULL_ON_MISSING_FILE}': \
                     expected true or false"
                )));
            }
            _ => {}
        }
        Ok(Some(InlineBlobColumns { columns }))
    }

    /// The kind of column `name`, if inline.
    pub(crate) fn kind_of(&self, name: &str) -> Option<InlineBlobKind> {
        self.columns
            .iter()
            .find(|(_, n, _)| n == name)
            .map(|(_, _, k)| *k)
    }

    /// Replace the inline columns of `columns` (the table's columns in table order, cast to
    /// their Arrow types) by the bytes to store ([`encode_inline_blob`]).
    ///
    /// # Errors
    /// As [`encode_column`].
    pub(crate) fn encode_columns(&self, columns: &mut [ArrayRef]) -> Result<()> {
        for (i, name, kind) in &self.columns {
            let col = columns
                .get(*i)
                .ok_or_else(|| Error::invalid(format!("no input for column '{name}'")))?;
            columns[*i] = encode_column(col, name, *kind)?;
        }
        Ok(())
    }
}

/// One inline column (`LargeBinary`) with every non-null value replaced by the bytes to
/// store ([`encode_inline_blob`]); `name` names the column in errors.
///
/// # Errors
/// [`Error::Invalid`] naming the column, the (0-based) row and the reason, for the first value
/// that cannot be stored; a column that is not `LargeBinary`.
pub(crate) fn encode_column(col: &ArrayRef, name: &str, kind: InlineBlobKind) -> Result<ArrayRef> {
    let bad_type = || {
        Error::invalid(format!(
            "column '{name}' ({}): values of a BLOB column must be binary, got {}",
            kind.option(),
            col.data_type()
        ))
    };
    let col = match col.data_type() {
        arrow_schema::DataType::LargeBinary => Arc::clone(col),
        arrow_schema::DataType::Binary
        | arrow_schema::DataType::BinaryView
        | arrow_schema::DataType::FixedSizeBinary(_) => {
            arrow_cast::cast(col.as_ref(), &arrow_schema::DataType::LargeBinary)
                .map_err(|_| bad_type())?
        }
        _ => return Err(bad_type()),
    };
    let col = &col;
    let values = col.as_binary_opt::<i64>().ok_or_else(bad_type)?;
    let mut changed = false;
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(values.len());
    for row in 0..values.len() {
        if values.is_null(row) {
            out.push(None);
            continue;
        }
        let v = values.value(row);
        let stored = encode_inline_blob(v, kind).map_err(|e| {
            Error::invalid(format!(
                "column '{name}' ({}), row {row}: {}",
                kind.option(),
                e
            ))
        })?;
        changed |= stored != v;
        out.push(Some(stored));
    }
    if !changed {
        return Ok(Arc::clone(col));
    }
    Ok(Arc::new(LargeBinaryArray::from_iter(out)))
}

#[cfg(test)]
mod tests;
