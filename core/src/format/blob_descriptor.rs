//! Blob descriptors and blob view structs: the small byte strings that point at blob bytes.
//!
//! * [`BlobDescriptor`] `(uri, offset, length)`: a byte range of a file or URL. Version 2
//!   (written) is `02 | magic "CSEDBOLB" | uriLength i32 | uri | offset i64 | length i64`;
//!   version 1 (read only) lacks the magic. All integers little-endian.
//! * [`BlobViewStruct`] `(identifier, field id, row id)`: a BLOB cell of another table.
//!
//! See `spec/blob-descriptor.md`. Source: Java `org.apache.paimon.data.BlobDescriptor`,
//! `org.apache.paimon.data.BlobViewStruct`, `org.apache.paimon.data.Blob#fromBytes`.

use crate::error::{Error, Result};

/// Magic of a v2 descriptor, int64 LE at offset 1 (bytes `43 53 45 44 42 4f 4c 42`).
pub const BLOB_DESCRIPTOR_MAGIC: i64 = 0x424C_4F42_4445_5343;
/// The descriptor version written by [`BlobDescriptor::serialize`].
pub const BLOB_DESCRIPTOR_VERSION: u8 = 2;
/// Magic of a blob view struct, int64 LE at offset 1 (bytes `57 45 49 56 42 4f 4c 42`).
pub const BLOB_VIEW_MAGIC: i64 = 0x424C_4F42_5649_4557;
/// The only blob view struct version.
pub const BLOB_VIEW_VERSION: u8 = 1;

const FORMAT: &str = "blob-descriptor";
const VIEW_FORMAT: &str = "blob-view";

fn bad(format: &'static str, reason: impl Into<String>) -> Error {
    Error::corrupt("<inline blob bytes>", format, reason)
}

fn magic_at_1(bytes: &[u8]) -> Option<i64> {
    let s = bytes.get(1..9)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(i64::from_le_bytes(a))
}

/// A cursor over untrusted bytes with precise "too short" errors.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> usize {
        self.b.len() - self.at
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn i32(&mut self) -> Option<i32> {
        self.take(4)
            .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn i64(&mut self) -> Option<i64> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Some(i64::from_le_bytes(a))
    }
}

/// A reference to `length` bytes (−1 = to the end) at `offset` of `uri`.
///
/// Equality includes the version a descriptor was decoded with (as in Java): a v1-decoded
/// descriptor is not equal to the same triple made with [`BlobDescriptor::new`].
///
/// Source: Java `org.apache.paimon.data.BlobDescriptor`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlobDescriptor {
    version: u8,
    uri: String,
    offset: i64,
    length: i64,
}

impl BlobDescriptor {
    /// A version-2 descriptor.
    pub fn new(uri: impl Into<String>, offset: i64, length: i64) -> Self {
        BlobDescriptor {
            version: BLOB_DESCRIPTOR_VERSION,
            uri: uri.into(),
            offset,
            length,
        }
    }

    /// The version it was made or decoded with (1 or 2; 0 and bytes ≥ 0x80 decode as v1-shaped).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// Target path or URL.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Byte offset into the target.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// Number of bytes; −1 means "to the end of the target".
    pub fn length(&self) -> i64 {
        self.length
    }

    /// Serialize as version 2 (always, whatever version it was decoded from): `29 + uri bytes`
    /// bytes.
    pub fn serialize(&self) -> Vec<u8> {
        let uri = self.uri.as_bytes();
        let mut out = Vec::with_capacity(29 + uri.len());
        out.push(BLOB_DESCRIPTOR_VERSION);
        out.extend_from_slice(&BLOB_DESCRIPTOR_MAGIC.to_le_bytes());
        out.extend_from_slice(&(uri.len() as i32).to_le_bytes());
        out.extend_from_slice(uri);
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.length.to_le_bytes());
        out
    }

    /// Deserialize version 1 or 2. Trailing bytes after `length` are ignored.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a version > 2 ("…less than or equal to 2, but found V.");
    /// [`Error::Corrupt`] (format `blob-descriptor`) for "too short", a missing magic header,
    /// "negative URI length", "URI length exceeds data size", "missing offset/length" or a URI
    /// that is not UTF-8.
    pub fn deserialize(bytes: &[u8]) -> Result<Self> {
        let mut c = Cursor { b: bytes, at: 0 };
        let Some(&v) = bytes.first() else {
            return Err(bad(FORMAT, "Invalid BlobDescriptor data: too short"));
        };
        c.at = 1;
        let signed = v as i8;
        if signed > BLOB_DESCRIPTOR_VERSION as i8 {
            return Err(Error::unsupported(format!(
                "Expecting BlobDescriptor version to be less than or equal to {BLOB_DESCRIPTOR_VERSION}, but found {signed}."
            )));
        }
        if signed > 1 {
            let magic = c
                .i64()
                .ok_or_else(|| bad(FORMAT, "Invalid BlobDescriptor data: too short"))?;
            if magic != BLOB_DESCRIPTOR_MAGIC {
                return Err(bad(
                    FORMAT,
                    format!("Invalid BlobDescriptor: missing magic header (found {magic:#x})"),
                ));
            }
        }
        let uri_len = c
            .i32()
            .ok_or_else(|| bad(FORMAT, "Invalid BlobDescriptor data: too short"))?;
        let uri_len = usize::try_from(uri_len).map_err(|_| {
            bad(
                FORMAT,
                format!("Invalid BlobDescriptor data: negative URI length {uri_len}"),
            )
        })?;
        if uri_len > c.remaining() {
            return Err(bad(
                FORMAT,
                format!(
                    "Invalid BlobDescriptor data: URI length exceeds data size ({uri_len} > {})",
                    c.remaining()
                ),
            ));
        }
        let uri = c.take(uri_len).unwrap_or_default();
        let uri = std::str::from_utf8(uri)
            .map_err(|e| bad(FORMAT, format!("Invalid BlobDescriptor URI: {e}")))?;
        let (Some(offset), Some(length)) = (c.i64(), c.i64()) else {
            return Err(bad(
                FORMAT,
                "Invalid BlobDescriptor data: missing offset/length",
            ));
        };
        Ok(BlobDescriptor {
            version: v,
            uri: uri.to_string(),
            offset,
            length,
        })
    }
}

/// True iff `bytes` look like a v2 blob descriptor: at least 9 bytes, signed `bytes[0] ≤ 2`
/// and the magic at offset 1. (v1 descriptors have no magic and are not detected.)
///
/// Source: Java `org.apache.paimon.data.BlobDescriptor#isBlobDescriptor`.
pub fn is_blob_descriptor(bytes: &[u8]) -> bool {
    bytes.len() >= 9
        && (bytes[0] as i8) <= BLOB_DESCRIPTOR_VERSION as i8
        && magic_at_1(bytes) == Some(BLOB_DESCRIPTOR_MAGIC)
}

/// A reference to a BLOB cell of another table: `(identifier full name, field id, row id)`.
///
/// Source: Java `org.apache.paimon.data.BlobViewStruct`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlobViewStruct {
    /// Upstream table full name, `database.table` (optionally with a branch suffix).
    pub identifier: String,
    /// Field id of the BLOB column in the upstream table.
    pub field_id: i32,
    /// Upstream `_ROW_ID`.
    pub row_id: i64,
}

impl BlobViewStruct {
    /// Serialize (version 1): `17 + 8 + identifier bytes` bytes.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the identifier has no database part or uses the `unknown`
    /// database.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        match self.identifier.split_once('.') {
            Some((db, table)) if !db.is_empty() && db != "unknown" && !table.is_empty() => {}
            _ => {
                return Err(Error::invalid(format!(
                    "blob view identifier '{}' must include database name",
                    self.identifier
                )));
            }
        }
        let id = self.identifier.as_bytes();
        let mut out = Vec::with_capacity(25 + id.len());
        out.push(BLOB_VIEW_VERSION);
        out.extend_from_slice(&BLOB_VIEW_MAGIC.to_le_bytes());
        out.extend_from_slice(&(id.len() as i32).to_le_bytes());
        out.extend_from_slice(id);
        out.extend_from_slice(&self.field_id.to_le_bytes());
        out.extend_from_slice(&self.row_id.to_le_bytes());
        Ok(out)
    }

    /// Deserialize a version-1 blob view struct.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a version other than 1; [`Error::Corrupt`] (format
    /// `blob-view`) for too short input, a wrong magic, "negative identifier length",
    /// "identifier length exceeds data size", "missing fieldId/rowId" or bad UTF-8.
    pub fn deserialize(bytes: &[u8]) -> Result<Self> {
        let Some(&v) = bytes.first() else {
            return Err(bad(VIEW_FORMAT, "Invalid BlobViewStruct data: too short"));
        };
        if v != BLOB_VIEW_VERSION {
            return Err(Error::unsupported(format!(
                "Expecting BlobViewStruct version to be {BLOB_VIEW_VERSION}, but found {}.",
                v as i8
            )));
        }
        let mut c = Cursor { b: bytes, at: 1 };
        let magic = c
            .i64()
            .ok_or_else(|| bad(VIEW_FORMAT, "Invalid BlobViewStruct data: too short"))?;
        if magic != BLOB_VIEW_MAGIC {
            return Err(bad(
                VIEW_FORMAT,
                "Invalid BlobViewStruct: missing magic header",
            ));
        }
        let n = c
            .i32()
            .ok_or_else(|| bad(VIEW_FORMAT, "Invalid BlobViewStruct data: too short"))?;
        let n = usize::try_from(n).map_err(|_| {
            bad(
                VIEW_FORMAT,
                format!("Invalid BlobViewStruct data: negative identifier length {n}"),
            )
        })?;
        if n > c.remaining() {
            return Err(bad(
                VIEW_FORMAT,
                "Invalid BlobViewStruct data: identifier length exceeds data size",
            ));
        }
        let id = c.take(n).unwrap_or_default();
        let identifier = std::str::from_utf8(id)
            .map_err(|e| {
                bad(
                    VIEW_FORMAT,
                    format!("Invalid BlobViewStruct identifier: {e}"),
                )
            })?
            .to_string();
        let (Some(field_id), Some(row_id)) = (c.i32(), c.i64()) else {
            return Err(bad(
                VIEW_FORMAT,
                "Invalid BlobViewStruct data: missing fieldId/rowId",
            ));
        };
        Ok(BlobViewStruct {
            identifier,
            field_id,
            row_id,
        })
    }
}

/// True iff `bytes` look like a blob view struct: at least 9 bytes, `bytes[0] == 1` and the
/// view magic at offset 1.
pub fn is_blob_view_struct(bytes: &[u8]) -> bool {
    bytes.len() >= 9 && bytes[0] == BLOB_VIEW_VERSION && magic_at_1(bytes) == Some(BLOB_VIEW_MAGIC)
}

/// What stored BLOB bytes mean, decided in Java's order (`Blob.fromBytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredBlob<'a> {
    /// A reference to another table's BLOB cell (resolved later).
    View(BlobViewStruct),
    /// A reference to a byte range of a file or URL.
    Descriptor(BlobDescriptor),
    /// Inline blob bytes.
    Raw(&'a [u8]),
}

/// Interpret stored BLOB bytes: a blob view struct if detected, else a descriptor if detected
/// or if `allow_raw` is false (Parquet/ORC/Avro data files: inline columns always hold
/// references, v1 included), else raw bytes.
///
/// # Errors
/// The deserialization errors of [`BlobViewStruct::deserialize`] /
/// [`BlobDescriptor::deserialize`].
pub fn decode_stored_blob(bytes: &[u8], allow_raw: bool) -> Result<StoredBlob<'_>> {
    if is_blob_view_struct(bytes) {
        return BlobViewStruct::deserialize(bytes).map(StoredBlob::View);
    }
    if is_blob_descriptor(bytes) || !allow_raw {
        return BlobDescriptor::deserialize(bytes).map(StoredBlob::Descriptor);
    }
    Ok(StoredBlob::Raw(bytes))
}

/// Largest descriptor length that can be materialized as one byte array (Java
/// `Integer.MAX_VALUE - 8`).
pub const MAX_MATERIALIZED_BLOB_BYTES: i64 = i32::MAX as i64 - 8;

/// Materialize the bytes a descriptor points at. `path` is the descriptor's URI mapped to a
/// path of the host (the caller owns that mapping, e.g. stripping the table root).
///
/// IO: one range read `offset .. offset + length` when `length ≥ 0`; a `Head` for the size
/// then one range read when `length = -1` ("to the end").
///
/// # Errors
/// [`Error::Invalid`] for a negative offset, a length below -1 or above
/// [`MAX_MATERIALIZED_BLOB_BYTES`] ("Blob is too large to materialize"; checked before any
/// IO), a range past the end of the object; IO errors (a short answer is a protocol error).
pub async fn read_blob_descriptor<T>(
    io: &crate::io::Io<T>,
    path: &str,
    descriptor: &BlobDescriptor,
) -> Result<bytes::Bytes> {
    let (offset, length) = (descriptor.offset, descriptor.length);
    let start = u64::try_from(offset).map_err(|_| {
        Error::invalid(format!(
            "blob descriptor of {} has negative offset {offset}",
            descriptor.uri
        ))
    })?;
    if length < -1 {
        return Err(Error::invalid(format!(
            "blob descriptor of {} has invalid length {length}",
            descriptor.uri
        )));
    }
    if length > MAX_MATERIALIZED_BLOB_BYTES {
        return Err(Error::invalid(format!(
            "Blob is too large to materialize as byte[]: {length} bytes of {}",
            descriptor.uri
        )));
    }
    let end = if length >= 0 {
        start.checked_add(length as u64)
    } else {
        let size = io
            .head(path)
            .await?
            .ok_or_else(|| Error::io(path, crate::io::IoErrorKind::NotFound, ""))?;
        if size < start {
            return Err(Error::invalid(format!(
                "blob descriptor offset {start} is past the end of {path} ({size} bytes)"
            )));
        }
        if size - start > MAX_MATERIALIZED_BLOB_BYTES as u64 {
            return Err(Error::invalid(format!(
                "Blob is too large to materialize as byte[]: {} bytes of {path}",
                size - start
            )));
        }
        Some(size)
    }
    .ok_or_else(|| Error::invalid(format!("blob descriptor range of {path} overflows")))?;
    io.read_range(path, start..end).await
}

/// Split a URI into (lowercase scheme, authority, normalized path segments). `None` when a
/// `..` climbs above the root.
fn split_uri(uri: &str) -> Option<(String, String, Vec<&str>)> {
    let (scheme, rest) = match uri.split_once(':') {
        Some((s, r))
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (s.to_ascii_lowercase(), r)
        }
        _ => (String::new(), uri),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(i) => (r[..i].to_string(), &r[i..]),
            None => (r.to_string(), ""),
        },
        None => (String::new(), rest),
    };
    let mut segs: Vec<&str> = Vec::new();
    for s in path.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segs.pop()?;
            }
            s => segs.push(s),
        }
    }
    Some((scheme, authority, segs))
}

/// The path of `uri` relative to `table_root` (`a/b.blob`) when it lies strictly inside it
/// (same rules as [`validate_table_root`]: scheme case-insensitive, same authority, `.`/`..`
/// normalized; `file:///t` and `file:/t` are the same root); `None` otherwise.
pub fn relative_to_root(table_root: &str, uri: &str) -> Option<String> {
    let (rs, ra, rp) = split_uri(table_root)?;
    let (us, ua, up) = split_uri(uri)?;
    if rs != us || ra != ua || up.len() <= rp.len() || up[..rp.len()] != rp[..] {
        return None;
    }
    Some(up[rp.len()..].join("/"))
}

/// Check that a descriptor URI lies inside `table_root` (same scheme, case-insensitive, same
/// authority, and a path strictly below the root after normalizing `.`/`..`), as required
/// before handing out presigned URLs.
///
/// # Errors
/// [`Error::Invalid`] naming both URIs otherwise.
///
/// Source: Java `org.apache.paimon.utils.BlobDescriptorUtils#validateTableRoot`.
pub fn validate_table_root(table_root: &str, uri: &str) -> Result<()> {
    let reject = || {
        Error::invalid(format!(
            "blob URI {uri} is not inside the table root {table_root}"
        ))
    };
    let (rs, ra, rp) = split_uri(table_root).ok_or_else(reject)?;
    let (us, ua, up) = split_uri(uri).ok_or_else(reject)?;
    if rs != us || ra != ua || up.len() <= rp.len() || up[..rp.len()] != rp[..] {
        return Err(reject());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::unhex;

    fn h(s: &str) -> Vec<u8> {
        unhex(&s.replace(' ', "")).unwrap()
    }

    const V1: &str = "01 0a000000 2f746573742f70617468 6400000000000000 c800000000000000";
    const V2: &str =
        "02 43534544424f4c42 0a000000 2f746573742f70617468 6400000000000000 c800000000000000";

    #[test]
    fn v1_resource_decodes_and_reserializes_as_v2() {
        let d = BlobDescriptor::deserialize(&h(V1)).unwrap();
        assert_eq!(
            (d.uri(), d.offset(), d.length(), d.version()),
            ("/test/path", 100, 200, 1)
        );
        assert!(!is_blob_descriptor(&h(V1)));
        let re = d.serialize();
        assert_eq!(re[0], 2);
        assert!(is_blob_descriptor(&re));
        assert_eq!(re, h(V2));
        assert_ne!(d, BlobDescriptor::new("/test/path", 100, 200));
    }

    #[test]
    fn v2_golden_both_directions() {
        let d = BlobDescriptor::new("/test/path", 100, 200);
        assert_eq!(d.serialize(), h(V2));
        assert_eq!(d.serialize().len(), 39);
        assert_eq!(BlobDescriptor::deserialize(&h(V2)).unwrap(), d);
        // Trailing bytes are ignored.
        let mut long = h(V2);
        long.extend_from_slice(b"xyz");
        assert_eq!(BlobDescriptor::deserialize(&long).unwrap(), d);
    }

    #[test]
    fn descriptor_errors() {
        let msg = |b: &[u8]| BlobDescriptor::deserialize(b).unwrap_err().to_string();
        let mut v3 = h(V2);
        v3[0] = 3;
        let e = BlobDescriptor::deserialize(&v3).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }));
        assert!(
            e.to_string()
                .contains("less than or equal to 2, but found 3."),
            "{e}"
        );
        assert!(msg(&[]).contains("too short"));
        let first9 = &h(V2)[..9];
        assert!(is_blob_descriptor(first9));
        assert!(msg(first9).contains("too short"));
        let mut empty = BlobDescriptor::new("", 1, 2).serialize();
        empty[9..13].copy_from_slice(&(-1i32).to_le_bytes());
        assert!(msg(&empty).contains("negative URI length"));
        empty[9..13].copy_from_slice(&100i32.to_le_bytes());
        assert!(msg(&empty).contains("URI length exceeds data size"));
        let v2 = h(V2);
        assert!(msg(&v2[..v2.len() - 8]).contains("missing offset/length"));
        assert!(msg(&h("01 10000000")).contains("URI length exceeds data size"));
        let mut bad_magic = h(V2);
        bad_magic[3] ^= 1;
        assert!(msg(&bad_magic).contains("missing magic header"));
    }

    #[test]
    fn view_struct_golden_both_directions() {
        let golden = h(
            "01 57454956424f4c42 0e000000 64656661756c742e736f75726365 07000000 0500000000000000",
        );
        let v = BlobViewStruct {
            identifier: "default.source".into(),
            field_id: 7,
            row_id: 5,
        };
        assert_eq!(v.serialize().unwrap(), golden);
        assert!(is_blob_view_struct(&golden));
        assert!(!is_blob_descriptor(&golden));
        assert_eq!(BlobViewStruct::deserialize(&golden).unwrap(), v);
        assert!(
            BlobViewStruct::deserialize(&golden[..golden.len() - 1])
                .unwrap_err()
                .to_string()
                .contains("missing fieldId/rowId")
        );
        let mut v2 = golden.clone();
        v2[0] = 2;
        assert!(matches!(
            BlobViewStruct::deserialize(&v2),
            Err(Error::Unsupported { .. })
        ));
        for id in ["source", "unknown.source"] {
            let v = BlobViewStruct {
                identifier: id.into(),
                field_id: 1,
                row_id: 1,
            };
            assert!(v.serialize().unwrap_err().to_string().contains("database"));
        }
    }

    #[test]
    fn table_root_validation() {
        let root = "oss://bucket/table";
        assert!(validate_table_root(root, "oss://bucket/table/bucket-0/data.blob").is_ok());
        assert_eq!(
            relative_to_root("file:///t/wh/", "file:/t/wh/bucket-0/x.managed.blob").as_deref(),
            Some("bucket-0/x.managed.blob")
        );
        assert_eq!(relative_to_root("file:///t/wh/", "file:/t/other/x"), None);
        assert!(validate_table_root("OSS://bucket/table/", "oss://bucket/table/./a.blob").is_ok());
        for bad in [
            "oss://bucket/table-copy/data.blob",
            "oss://bucket/table/../other/data.blob",
            "oss://other/table/data.blob",
            "s3://bucket/table/data.blob",
            "oss://bucket/table",
            "oss://bucket/../../x",
        ] {
            let e = validate_table_root(root, bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn descriptor_materialization_is_one_range_read() {
        use crate::io::{Io, IoOp, Machine, MemoryStore, Step};
        let source: Vec<u8> = (0..8194u32).map(|i| (i % 256) as u8).collect();
        let mut store = MemoryStore::new();
        store.objects.insert("src".into(), source.clone().into());
        let run = |d: BlobDescriptor| {
            let mut m: Machine<bytes::Bytes> =
                Machine::once("d", move |io: Io<bytes::Bytes>| async move {
                    read_blob_descriptor(&io, "src", &d).await
                });
            let mut store = store.clone();
            let mut ops = Vec::new();
            loop {
                match m.step() {
                    Err(e) => return (Err(e), ops),
                    Ok(Step::NeedIo(r)) => {
                        for q in r {
                            ops.push(q.op.clone());
                            let a = store.answer(&q.op);
                            m.provide(q.id, a).unwrap();
                        }
                    }
                    Ok(Step::Emit(b)) => return (Ok(b), ops),
                    Ok(Step::Work(items)) => items.into_iter().for_each(|w| w.run()),
                    Ok(Step::Wait) => {}
                    Ok(Step::Done) => unreachable!(),
                }
            }
        };
        let (b, ops) = run(BlobDescriptor::new("test", 2, 8192));
        assert_eq!(&b.unwrap()[..], &source[2..8194]);
        assert_eq!(ops.len(), 1);
        assert!(matches!(&ops[0], IoOp::Read { range: Some(r), .. } if *r == (2..8194)));
        let (b, ops) = run(BlobDescriptor::new("test", 8000, -1));
        assert_eq!(&b.unwrap()[..], &source[8000..]);
        assert_eq!(ops.len(), 2);
        let (e, ops) = run(BlobDescriptor::new("test", 0, i32::MAX as i64 - 6));
        assert!(e.unwrap_err().to_string().contains("too large"));
        assert!(ops.is_empty(), "rejected before any IO");
    }

    #[test]
    fn stored_blob_decision_order() {
        let view = h(
            "01 57454956424f4c42 0e000000 64656661756c742e736f75726365 07000000 0500000000000000",
        );
        assert!(matches!(
            decode_stored_blob(&view, true).unwrap(),
            StoredBlob::View(_)
        ));
        assert!(matches!(
            decode_stored_blob(&h(V2), true).unwrap(),
            StoredBlob::Descriptor(_)
        ));
        // v1 is not detected: raw when raw data is allowed, a descriptor otherwise.
        assert_eq!(
            decode_stored_blob(&h(V1), true).unwrap(),
            StoredBlob::Raw(&h(V1))
        );
        assert!(matches!(
            decode_stored_blob(&h(V1), false).unwrap(),
            StoredBlob::Descriptor(d) if d.uri() == "/test/path"
        ));
        assert!(decode_stored_blob(b"hello", false).is_err());
    }
}
