//! Writing `.blob` files: [`BlobFileWriter`] and the BLOB column encoders.
//!
//! Source: Java `org.apache.paimon.format.blob.BlobFormatWriter`.

use super::*;

/// Builds one `.blob` file, row by row.
///
/// The writer never interprets payload bytes on its own: [`BlobFileWriter::push_payload`]
/// always writes a record, and a placeholder entry (`-2`) is only written by an explicit
/// [`BlobFileWriter::push_placeholder`]. A writer made by [`BlobFileWriter::with_references`]
/// reads values that are serialized blob descriptors as references to the bytes to store (as
/// Java's engines turn such input into a `BlobRef`): those bytes are copied in when the file is
/// written ([`crate::io::put_file`]), never held in memory, and the file's content is
/// then a [`StreamedFile`].
///
/// Source: Java `org.apache.paimon.format.blob.BlobFormatWriter`.
#[derive(Debug, Default, Clone)]
pub struct BlobFileWriter {
    /// Bytes after the last finished piece.
    buf: Vec<u8>,
    /// Finished pieces (only when a reference was written).
    file: StreamedFile,
    entries: Vec<i64>,
    /// Values that are blob descriptors are references.
    references: bool,
    /// Bytes handed out by [`BlobFileWriter::take_laid_out`].
    taken: u64,
}

/// A byte range of another object whose bytes a blob value stores: a blob descriptor given as
/// input, with its length known (resolved against the object's size when it was `-1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferencedBytes {
    /// The object (an absolute URI, or a path relative to the host root).
    pub uri: String,
    /// First byte, in bytes.
    pub offset: u64,
    /// Number of bytes.
    pub length: u64,
}

impl ReferencedBytes {
    /// The reference a serialized blob descriptor stands for.
    ///
    /// # Errors
    /// The errors of [`BlobDescriptor::deserialize`]; [`Error::Invalid`] for a negative
    /// offset, or a length of `-1` (unknown: resolve it against the object's size first, see
    /// [`crate::blob::references`]) or below.
    pub fn from_descriptor_bytes(bytes: &[u8]) -> Result<Self> {
        let d = BlobDescriptor::deserialize(bytes)?;
        let offset = u64::try_from(d.offset()).map_err(|_| {
            Error::invalid(format!(
                "blob descriptor of {} has a negative offset {}",
                d.uri(),
                d.offset()
            ))
        })?;
        let length = u64::try_from(d.length()).map_err(|_| {
            Error::invalid(format!(
                "blob descriptor of {} has the unresolved length {} (the size of the object \
                 must be looked up before writing)",
                d.uri(),
                d.length()
            ))
        })?;
        Ok(ReferencedBytes {
            uri: d.uri().to_owned(),
            offset,
            length,
        })
    }
}

/// One part of a record payload: bytes, or the bytes of a [`ReferencedBytes`].
#[derive(Debug, Clone, Copy)]
pub enum PayloadPart<'a> {
    /// These bytes.
    Bytes(&'a [u8]),
    /// The referenced bytes.
    Reference(&'a ReferencedBytes),
}

impl PayloadPart<'_> {
    fn len(&self) -> u64 {
        match self {
            PayloadPart::Bytes(b) => b.len() as u64,
            PayloadPart::Reference(r) => r.length,
        }
    }
}

/// A blob value of an input row: bytes, or a reference to the bytes.
#[derive(Debug, Clone)]
pub enum BlobInput<'a> {
    /// The blob bytes.
    Bytes(&'a [u8]),
    /// The bytes of a byte range of another object.
    Reference(ReferencedBytes),
}

impl<'a> BlobInput<'a> {
    /// Read an input value: a serialized blob descriptor is a reference when `references` is
    /// set, anything else is bytes.
    ///
    /// # Errors
    /// As [`ReferencedBytes::from_descriptor_bytes`]; [`Error::Unsupported`] for a blob view
    /// struct (a reference to another table's BLOB cell) when `references` is set.
    pub fn from_bytes(bytes: &'a [u8], references: bool) -> Result<Self> {
        if !references {
            return Ok(BlobInput::Bytes(bytes));
        }
        if is_blob_view_struct(bytes) {
            return Err(Error::unsupported(
                "writing a blob view struct (a reference to another table's BLOB cell) as the \
                 value of a stored BLOB column",
            ));
        }
        if is_blob_descriptor(bytes) {
            return ReferencedBytes::from_descriptor_bytes(bytes).map(BlobInput::Reference);
        }
        Ok(BlobInput::Bytes(bytes))
    }

    /// Length of the blob in bytes.
    pub fn len(&self) -> u64 {
        match self {
            BlobInput::Bytes(b) => b.len() as u64,
            BlobInput::Reference(r) => r.length,
        }
    }

    /// True for an empty blob.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn part(&self) -> PayloadPart<'_> {
        match self {
            BlobInput::Bytes(b) => PayloadPart::Bytes(b),
            BlobInput::Reference(r) => PayloadPart::Reference(r),
        }
    }
}

impl BlobFileWriter {
    /// An empty writer; values are always bytes.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer that reads values that are serialized blob descriptors as references
    /// (see the type docs).
    pub fn with_references() -> Self {
        BlobFileWriter {
            references: true,
            ..Self::default()
        }
    }

    /// Whether values that are blob descriptors are references.
    pub fn reads_references(&self) -> bool {
        self.references
    }

    /// Append a null row (index entry `-1`, no record).
    pub fn push_null(&mut self) {
        self.entries.push(BLOB_NULL_LENGTH);
    }

    /// Append a placeholder row (index entry `-2`, no record).
    pub fn push_placeholder(&mut self) {
        self.entries.push(BLOB_PLACEHOLDER_LENGTH);
    }

    /// Append a record holding `payload` (blob bytes, or an array/map payload from
    /// [`encode_array_payload`]/[`encode_map_payload`]). Returns the payload's byte range in
    /// the file (what a blob descriptor of this value points at).
    pub fn push_payload(&mut self, payload: &[u8]) -> Range<u64> {
        self.push_parts(&[PayloadPart::Bytes(payload)])
    }

    /// Append a record holding one blob value (bytes or a reference); returns the payload's
    /// byte range in the file.
    pub fn push_blob(&mut self, value: &BlobInput<'_>) -> Range<u64> {
        self.push_parts(&[value.part()])
    }

    /// Append a record whose payload is `parts` in order; returns the payload's byte range.
    pub fn push_parts(&mut self, parts: &[PayloadPart<'_>]) -> Range<u64> {
        let start = self.position();
        let payload_len: u64 = parts.iter().map(PayloadPart::len).sum();
        let record_len = payload_len + BLOB_MIN_RECORD_LEN;
        let buf_start = self.buf.len();
        self.buf.extend_from_slice(&BLOB_RECORD_MAGIC.to_le_bytes());
        let has_reference = parts.iter().any(|p| matches!(p, PayloadPart::Reference(_)));
        for part in parts {
            match part {
                PayloadPart::Bytes(b) => self.buf.extend_from_slice(b),
                PayloadPart::Reference(r) => {
                    self.flush_buf();
                    self.file.push(FilePiece::Copy {
                        uri: r.uri.clone(),
                        offset: r.offset,
                        length: r.length,
                    });
                }
            }
        }
        self.buf
            .extend_from_slice(&(record_len as i64).to_le_bytes());
        if has_reference {
            self.flush_buf();
            self.file.push(FilePiece::Crc32 { start });
        } else {
            let crc = crc32fast::hash(&self.buf[buf_start..]);
            self.buf.extend_from_slice(&crc.to_le_bytes());
        }
        self.entries.push(record_len as i64);
        start + 4..start + 4 + payload_len
    }

    fn flush_buf(&mut self) {
        if !self.buf.is_empty() {
            let b = std::mem::take(&mut self.buf);
            self.file.push(FilePiece::Bytes(Bytes::from(b)));
        }
    }

    /// Bytes of records written so far (footer not counted): what rolling compares with the
    /// target file size.
    pub fn position(&self) -> u64 {
        self.taken + self.file.size() + self.buf.len() as u64
    }

    /// The records' bytes so far, once they reach `min_bytes` and while no value was a
    /// reference (whose bytes are only copied when the file is written): taken, so that the
    /// caller sends them as the first parts of a streamed `Put` while later records are added.
    /// The file is every take, in order, followed by [`BlobFileWriter::finish_content`]'s
    /// content (a [`StreamedFile`] then starts at the bytes taken); its bytes are the same as
    /// those of a file never taken from.
    pub fn take_laid_out(&mut self, min_bytes: usize) -> Option<Vec<u8>> {
        if !self.file.pieces().is_empty() || self.buf.len() < min_bytes.max(1) {
            return None;
        }
        let out = std::mem::take(&mut self.buf);
        self.taken += out.len() as u64;
        self.file = StreamedFile::starting_at(self.taken);
        Some(out)
    }

    /// Rows written so far.
    pub fn row_count(&self) -> u64 {
        self.entries.len() as u64
    }

    /// Finish the file: records, delta-varint index, index length (i32 LE), version byte.
    /// Whole bytes when no value was a reference, else a [`StreamedFile`]; after
    /// [`BlobFileWriter::take_laid_out`], only what was not taken.
    ///
    /// # Errors
    /// [`Error::Invalid`] if the index exceeds 2^31-1 bytes.
    pub fn finish_content(mut self) -> Result<FileContent> {
        let index = encode_delta_varint(&self.entries);
        let index_len = i32::try_from(index.len())
            .map_err(|_| Error::invalid("blob file index exceeds 2^31-1 bytes"))?;
        self.buf.extend_from_slice(&index);
        self.buf.extend_from_slice(&index_len.to_le_bytes());
        self.buf.push(BLOB_FILE_VERSION);
        if self.file.pieces().is_empty() {
            return Ok(FileContent::Bytes(Bytes::from(self.buf)));
        }
        self.flush_buf();
        Ok(FileContent::Streamed(self.file))
    }

    /// As [`BlobFileWriter::finish_content`], for a file of bytes only.
    ///
    /// # Errors
    /// As [`BlobFileWriter::finish_content`]; [`Error::Invalid`] when a value was a reference.
    pub fn finish(self) -> Result<Vec<u8>> {
        match self.finish_content()? {
            FileContent::Bytes(b) => Ok(b.to_vec()),
            FileContent::Streamed(_) | FileContent::Part(_) | FileContent::StreamedRest { .. } => {
                Err(Error::invalid(
                    "blob file holds references: write it with io::put_file",
                ))
            }
        }
    }
}

/// Encode a `BLOB` column as a whole `.blob` file: null slots become `-1`, and rows whose
/// `placeholders` bit is set become `-2` (the mask is the only way to ask for placeholders).
///
/// # Errors
/// [`Error::Invalid`] when the mask length differs from the array length.
pub fn encode_blob_column(
    values: &LargeBinaryArray,
    placeholders: Option<&BooleanBuffer>,
) -> Result<Vec<u8>> {
    if let Some(m) = placeholders
        && m.len() != values.len()
    {
        return Err(Error::invalid(format!(
            "placeholder mask has {} rows, values have {}",
            m.len(),
            values.len()
        )));
    }
    let mut w = BlobFileWriter::new();
    for i in 0..values.len() {
        if placeholders.is_some_and(|m| m.value(i)) {
            w.push_placeholder();
        } else if values.is_null(i) {
            w.push_null();
        } else {
            w.push_payload(values.value(i));
        }
    }
    w.finish()
}

/// Encode an Arrow column as a whole `.blob` file, for any [`BlobElementKind`]: `LargeBinary` or
/// `Binary` for `BLOB`; `List`/`LargeList` of binary for `ARRAY<BLOB>`; `Map` with binary values
/// and keys of the kind's type (`Int8`, `Int16`, `Int32`, `Date32`, `Time32(ms)`, `Int64`,
/// `Boolean`, `Decimal128`, `Binary`/`LargeBinary`, `Utf8`/`LargeUtf8`) for `MAP<K, BLOB>`.
/// Null slots become `-1`; rows whose `placeholders` bit is set become `-2` (the only way to ask
/// for placeholders: values are never interpreted).
///
/// # Errors
/// [`Error::Invalid`] for a mask of the wrong length, duplicate map keys or a decimal key that
/// does not fit; [`Error::Unsupported`] for an Arrow type that does not match `kind`.
pub fn encode_blob_array(
    values: &dyn Array,
    kind: BlobElementKind,
    placeholders: Option<&BooleanBuffer>,
) -> Result<Vec<u8>> {
    if let Some(m) = placeholders
        && m.len() != values.len()
    {
        return Err(Error::invalid(format!(
            "placeholder mask has {} rows, values have {}",
            m.len(),
            values.len()
        )));
    }
    let mut w = BlobFileWriter::new();
    for i in 0..values.len() {
        if placeholders.is_some_and(|m| m.value(i)) {
            w.push_placeholder();
        } else {
            w.push_value(values, i, kind)?;
        }
    }
    w.finish()
}

impl BlobFileWriter {
    /// Append row `i` of an Arrow column of kind `kind` (the Arrow types of
    /// [`encode_blob_array`]): a null slot becomes `-1`, any other value a record. Values are
    /// never read as placeholders.
    ///
    /// # Errors
    /// As [`encode_blob_array`].
    pub fn push_value(
        &mut self,
        values: &dyn Array,
        i: usize,
        kind: BlobElementKind,
    ) -> Result<()> {
        use arrow_array::cast::AsArray;
        if values.is_null(i) {
            self.push_null();
            return Ok(());
        }
        let unsupported = || {
            Error::unsupported(format!(
                "Arrow type {} for a {kind:?} blob file column",
                values.data_type()
            ))
        };
        let w = self;
        let refs = w.references;
        match kind {
            BlobElementKind::Blob => {
                let b = binary_at(values, i).ok_or_else(unsupported)?;
                let value = BlobInput::from_bytes(b, refs)?;
                w.push_blob(&value);
            }
            BlobElementKind::Array => {
                let items = if let Some(l) = values.as_list_opt::<i32>() {
                    l.value(i)
                } else if let Some(l) = values.as_list_opt::<i64>() {
                    l.value(i)
                } else {
                    return Err(unsupported());
                };
                let elems = (0..items.len())
                    .map(|j| {
                        if items.is_null(j) {
                            Ok(None)
                        } else {
                            let b = binary_at(items.as_ref(), j).ok_or_else(unsupported)?;
                            BlobInput::from_bytes(b, refs).map(Some)
                        }
                    })
                    .collect::<Result<Vec<_>>>()?;
                if elems
                    .iter()
                    .flatten()
                    .all(|e| matches!(e, BlobInput::Bytes(_)))
                {
                    let plain: Vec<Option<&[u8]>> = elems
                        .iter()
                        .map(|e| match e {
                            Some(BlobInput::Bytes(b)) => Some(*b),
                            _ => None,
                        })
                        .collect();
                    w.push_payload(&encode_array_payload(&plain));
                } else {
                    let lens: Vec<Option<u64>> = elems
                        .iter()
                        .map(|e| e.as_ref().map(BlobInput::len))
                        .collect();
                    let (head, tail) = array_payload_frame(&lens);
                    let mut parts = vec![PayloadPart::Bytes(&head)];
                    parts.extend(elems.iter().flatten().map(BlobInput::part));
                    parts.push(PayloadPart::Bytes(&tail));
                    w.push_parts(&parts);
                }
            }
            BlobElementKind::Map(key_kind) => {
                let map = values.as_map_opt().ok_or_else(unsupported)?;
                let entries = map.value(i);
                let (keys, vals) = (entries.column(0), entries.column(1));
                let mut key_bytes = Vec::with_capacity(keys.len());
                for j in 0..keys.len() {
                    key_bytes.push(if keys.is_null(j) {
                        None
                    } else {
                        Some(
                            encode_map_key(keys.as_ref(), j, key_kind)
                                .ok_or_else(unsupported)??,
                        )
                    });
                }
                let mut values_in = Vec::with_capacity(keys.len());
                for j in 0..keys.len() {
                    values_in.push(if vals.is_null(j) {
                        None
                    } else {
                        let b = binary_at(vals.as_ref(), j).ok_or_else(unsupported)?;
                        Some(BlobInput::from_bytes(b, refs)?)
                    });
                }
                let plain = values_in
                    .iter()
                    .flatten()
                    .all(|v| matches!(v, BlobInput::Bytes(_)));
                if plain {
                    let mut pairs = Vec::with_capacity(keys.len());
                    for (k, v) in key_bytes.iter().zip(&values_in) {
                        let v = match v {
                            Some(BlobInput::Bytes(b)) => Some(*b),
                            _ => None,
                        };
                        pairs.push((k.as_deref(), v));
                    }
                    w.push_payload(&encode_map_payload(&pairs)?);
                } else {
                    let keys: Vec<Option<&[u8]>> = key_bytes.iter().map(|k| k.as_deref()).collect();
                    let lens: Vec<Option<u64>> = values_in
                        .iter()
                        .map(|v| v.as_ref().map(BlobInput::len))
                        .collect();
                    let (head, tail) = map_payload_frame(&keys, &lens)?;
                    let mut parts = vec![PayloadPart::Bytes(&head)];
                    parts.extend(values_in.iter().flatten().map(BlobInput::part));
                    parts.push(PayloadPart::Bytes(&tail));
                    w.push_parts(&parts);
                }
            }
        }
        Ok(())
    }
}

fn binary_at(a: &dyn Array, i: usize) -> Option<&[u8]> {
    use arrow_array::cast::AsArray;
    if let Some(b) = a.as_binary_opt::<i64>() {
        Some(b.value(i))
    } else {
        a.as_binary_opt::<i32>().map(|b| b.value(i))
    }
}

/// Serialized key `i` of `keys` per `kind`; `None` when the Arrow type does not fit the kind.
fn encode_map_key(keys: &dyn Array, i: usize, kind: BlobMapKeyKind) -> Option<Result<Vec<u8>>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Date32Type, Decimal128Type, Int8Type, Int16Type, Int32Type, Int64Type,
        Time32MillisecondType,
    };
    Some(Ok(match kind {
        BlobMapKeyKind::TinyInt => keys
            .as_primitive_opt::<Int8Type>()?
            .value(i)
            .to_le_bytes()
            .to_vec(),
        BlobMapKeyKind::SmallInt => keys
            .as_primitive_opt::<Int16Type>()?
            .value(i)
            .to_le_bytes()
            .to_vec(),
        BlobMapKeyKind::Int => keys
            .as_primitive_opt::<Int32Type>()?
            .value(i)
            .to_le_bytes()
            .to_vec(),
        BlobMapKeyKind::Date => keys
            .as_primitive_opt::<Date32Type>()?
            .value(i)
            .to_le_bytes()
            .to_vec(),
        BlobMapKeyKind::Time => keys
            .as_primitive_opt::<Time32MillisecondType>()?
            .value(i)
            .to_le_bytes()
            .to_vec(),
        BlobMapKeyKind::BigInt => keys
            .as_primitive_opt::<Int64Type>()?
            .value(i)
            .to_le_bytes()
            .to_vec(),
        BlobMapKeyKind::Boolean => vec![u8::from(keys.as_boolean_opt()?.value(i))],
        BlobMapKeyKind::Decimal { precision, .. } => {
            let v = keys.as_primitive_opt::<Decimal128Type>()?.value(i);
            let limit = 10u128
                .checked_pow(u32::from(precision))
                .unwrap_or(u128::MAX);
            if v.unsigned_abs() >= limit {
                return Some(Err(Error::invalid(format!(
                    "decimal map key {v} does not fit precision {precision}"
                ))));
            }
            if precision <= 18 {
                (v as i64).to_le_bytes().to_vec()
            } else {
                crate::util::minimal_twos_complement(&v.to_be_bytes()).to_vec()
            }
        }
        BlobMapKeyKind::Binary => binary_at(keys, i)?.to_vec(),
        BlobMapKeyKind::String => {
            if let Some(s) = keys.as_string_opt::<i32>() {
                s.value(i).as_bytes().to_vec()
            } else {
                keys.as_string_opt::<i64>()?.value(i).as_bytes().to_vec()
            }
        }
    }))
}
