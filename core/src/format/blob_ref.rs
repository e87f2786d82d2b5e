//! Managed-BLOB reference sidecars (`<data file>.blobref`): which `.managed.blob` packs one
//! primary-key data file references.
//!
//! A primary-key table copies the payload of every managed BLOB value into shared pack files
//! (`*.managed.blob`) and stores only a descriptor in the data file. Each data file gets a
//! sidecar listing exactly the packs its rows point at, so a collector can later tell which
//! packs are still in use. See `spec/managed-blob.md` §4.
//!
//! Layout (Java `DataOutputStream`, big-endian):
//!
//! ```text
//! magic: i32 = 0x50424C52 ("PBLR") | version: u8 = 1 | count: i32
//! | (storageRootId: writeUTF, relativePath: writeUTF) × count
//! | checksum: i32 = CRC32 of the bytes from version through the last reference
//! ```
//!
//! `writeUTF` is Java's *modified UTF-8*: a 2-byte big-endian length (≤ 65535) of the encoded
//! bytes, then each UTF-16 code unit as 1 byte (`U+0001..U+007F`), 2 bytes (`U+0000`,
//! `U+0080..U+07FF`) or 3 bytes (the rest, including each half of a surrogate pair, so a
//! character above U+FFFF takes 6 bytes). Nothing may follow the checksum.
//!
//! Writers sort references by `(storageRootId, relativePath)` in Java `String.compareTo` order
//! (UTF-16 code units, which differs from byte order for characters above U+FFFF against
//! U+E000..U+FFFF) and drop duplicates, so the same set of packs always gives the same bytes.
//! An empty sidecar (count 0) means "references nothing"; a missing one means "unknown".
//!
//! Source: Java `org.apache.paimon.blob.ManagedBlobReferenceFile`,
//! `org.apache.paimon.blob.ManagedBlobReferenceCollector`, `org.apache.paimon.fs.Path`
//! (how a descriptor URI splits into parent directory and file name).

use std::cmp::Ordering;
use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::spec::file_names::{BLOBREF_SUFFIX, MANAGED_BLOB_SUFFIX};

/// Sidecar magic, written as int32 big-endian (`50 42 4c 52`).
pub const BLOBREF_MAGIC: i32 = 0x5042_4C52;
/// The only sidecar version.
pub const BLOBREF_VERSION: u8 = 1;
/// Largest encoded length of one `writeUTF` string, in bytes.
pub const MAX_UTF_BYTES: usize = 65_535;

const FORMAT: &str = "blobref";
const INVALID_ENTRY: &str = "Invalid managed BLOB reference entry.";

/// One managed-BLOB pack a data file references: the pack's parent directory as a path string
/// (`file:/warehouse/db.db/t/bucket-0`, `oss://bucket/db.db/t/dt=1/bucket-1`) and its file name
/// (`data-<uuid>-3.managed.blob`).
///
/// Valid references have a non-empty `storage_root_id` and a `relative_path` that is a plain
/// file name: non-empty, no `/`, no `:`, not `.` or `..` (see [`BlobReference::try_new`]).
/// Ordering is Java's: `storage_root_id`, then `relative_path`, each compared by UTF-16 code
/// units.
///
/// Source: Java `org.apache.paimon.blob.ManagedBlobReferenceFile.Reference`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlobReference {
    /// The pack's parent directory, as Java's `Path#getParent().toString()` gives it.
    pub storage_root_id: String,
    /// The pack's file name.
    pub relative_path: String,
}

impl BlobReference {
    /// A validated reference.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `storage_root_id` is empty ("Managed BLOB storage root must not
    /// be empty.") or `relative_path` is not a file name ("Managed BLOB relative path must be a
    /// file name: …."): empty, containing `/` or `:` (Java's `Path` would read a scheme), or
    /// `.`/`..`.
    pub fn try_new(
        storage_root_id: impl Into<String>,
        relative_path: impl Into<String>,
    ) -> Result<Self> {
        let reference = BlobReference {
            storage_root_id: storage_root_id.into(),
            relative_path: relative_path.into(),
        };
        reference.validate()?;
        Ok(reference)
    }

    /// Check the invariants of [`BlobReference::try_new`] (the fields are public).
    ///
    /// # Errors
    /// As [`BlobReference::try_new`].
    pub fn validate(&self) -> Result<()> {
        if self.storage_root_id.is_empty() {
            return Err(Error::invalid(
                "Managed BLOB storage root must not be empty.",
            ));
        }
        let rel = self.relative_path.as_str();
        // Java: `relativePath.equals(new Path(relativePath).getName())`. A `/` makes the name a
        // suffix; a `:` makes `Path` read a scheme (or fail); `.`/`..` are excluded explicitly.
        if rel.is_empty() || rel.contains('/') || rel.contains(':') || rel == "." || rel == ".." {
            return Err(Error::invalid(format!(
                "Managed BLOB relative path must be a file name: {rel}."
            )));
        }
        Ok(())
    }

    /// The reference of a descriptor URI, `None` when the URI's file name does not end with
    /// `.managed.blob` (an ordinary `.blob` file, an external file: not a pack).
    ///
    /// The URI is split as Java's `org.apache.paimon.fs.Path` does: an optional `scheme:`
    /// (a `:` before the first `/`), an optional `//authority` (an empty one is dropped, so
    /// `file:///t/x` is `file:/t/x`), then the path with repeated `/` collapsed, a trailing `/`
    /// removed and `.`/`..` segments resolved. `storage_root_id` is the parent path with the
    /// scheme and authority (`/` for a file at the root), `relative_path` the last segment.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a pack URI that has no parent directory (`x.managed.blob`), an
    /// invalid scheme or a scheme with a relative path (`oss:dir/x.managed.blob`), or whose name
    /// is not a valid file name (see [`BlobReference::try_new`]), as Java's `Path` and
    /// reference constructor reject them.
    pub fn from_uri(uri: &str) -> Result<Option<Self>> {
        let parsed = JavaPath::parse(uri);
        let (parent, name) = match parsed.path.rfind('/') {
            Some(0) => ("/", &parsed.path[1..]),
            Some(i) => (&parsed.path[..i], &parsed.path[i + 1..]),
            None => ("", parsed.path.as_str()),
        };
        if !name.ends_with(MANAGED_BLOB_SUFFIX) {
            return Ok(None);
        }
        if let Some(s) = &parsed.scheme {
            let mut chars = s.chars();
            let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
            if !valid || !parsed.path.starts_with('/') {
                return Err(Error::invalid(format!(
                    "managed BLOB pack URI '{uri}' is not a valid path: a scheme needs a valid \
                     name and an absolute path"
                )));
            }
        }
        if parent.is_empty() {
            return Err(Error::invalid(format!(
                "managed BLOB pack URI '{uri}' has no parent directory: \
                 Managed BLOB storage root must not be empty."
            )));
        }
        let mut root = String::with_capacity(uri.len());
        if let Some(s) = &parsed.scheme {
            root.push_str(s);
            root.push(':');
        }
        if let Some(a) = &parsed.authority {
            root.push_str("//");
            root.push_str(a);
        }
        root.push_str(parent);
        Self::try_new(root, name)
            .map(Some)
            .map_err(|e| Error::invalid(format!("managed BLOB pack URI '{uri}': {e}")))
    }
}

impl PartialOrd for BlobReference {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BlobReference {
    /// Java order: `storage_root_id`, then `relative_path`, by UTF-16 code units.
    fn cmp(&self, other: &Self) -> Ordering {
        java_string_cmp(&self.storage_root_id, &other.storage_root_id)
            .then_with(|| java_string_cmp(&self.relative_path, &other.relative_path))
    }
}

/// Java `String.compareTo`: lexicographic by UTF-16 code unit, a proper prefix first.
pub fn java_string_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// A descriptor URI split like Java's `Path(String)` constructor.
struct JavaPath {
    scheme: Option<String>,
    authority: Option<String>,
    path: String,
}

impl JavaPath {
    fn parse(uri: &str) -> Self {
        let mut start = 0;
        let mut scheme = None;
        if let Some(colon) = uri.find(':')
            && uri.find('/').is_none_or(|slash| colon < slash)
        {
            scheme = Some(uri[..colon].to_string());
            start = colon + 1;
        }
        let mut authority = None;
        if uri[start..].starts_with("//") && uri.len() - start > 2 {
            let end = uri[start + 2..]
                .find('/')
                .map_or(uri.len(), |i| start + 2 + i);
            let a = &uri[start + 2..end];
            // `java.net.URI` parses an empty authority (`file:///x`) as none.
            authority = (!a.is_empty()).then(|| a.to_string());
            start = end;
        }
        JavaPath {
            scheme,
            authority,
            path: normalize_path(&uri[start..]),
        }
    }
}

/// Java `Path#normalizePath` (collapse `/+`, drop a trailing `/` of a non-root path) followed by
/// `java.net.URI#normalize` (remove `.` segments, resolve `seg/..`).
fn normalize_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut segments: Vec<&str> = Vec::new();
    let raw: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let last = raw.len().saturating_sub(1);
    let mut trailing_slash = false;
    for (i, seg) in raw.iter().enumerate() {
        match *seg {
            "." => trailing_slash = i == last,
            ".." if segments.last().is_some_and(|s| *s != "..") => {
                segments.pop();
                trailing_slash = i == last;
            }
            s => {
                segments.push(s);
                trailing_slash = false;
            }
        }
    }
    let mut out = String::with_capacity(path.len());
    if absolute {
        out.push('/');
    } else if segments.first().is_some_and(|s| s.contains(':')) {
        // `URI#normalize` keeps a relative path from reading as `scheme:`.
        out.push_str("./");
    }
    out.push_str(&segments.join("/"));
    if trailing_slash && !segments.is_empty() {
        out.push('/');
    }
    out
}

/// The sidecar name of a data file: its file name (the part after the last `/` of a path or
/// URI) plus `.blobref` (`bucket-0/data-a.avro` → `data-a.avro.blobref`). The sidecar lives
/// in the data file's directory.
pub fn blobref_file_name(data_file_name: &str) -> String {
    let name = data_file_name
        .rsplit_once('/')
        .map_or(data_file_name, |(_, n)| n);
    format!("{name}{BLOBREF_SUFFIX}")
}

/// Whether a file (a name, or a path/URI whose last segment is taken) is a managed-BLOB pack:
/// its name ends with `.managed.blob`. Packs are shared between data files and are never
/// deleted as orphans or with a data file.
pub fn is_managed_blob_pack(name: &str) -> bool {
    let trimmed = name.trim_end_matches('/');
    let last = trimmed.rsplit_once('/').map_or(trimmed, |(_, n)| n);
    last.ends_with(MANAGED_BLOB_SUFFIX)
}

/// Append Java's `writeUTF` encoding of `s`.
fn write_utf(out: &mut Vec<u8>, s: &str) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&[0, 0]);
    for unit in s.encode_utf16() {
        match unit {
            0x0001..=0x007F => out.push(unit as u8),
            0x0000 | 0x0080..=0x07FF => {
                out.push(0xC0 | (unit >> 6) as u8);
                out.push(0x80 | (unit & 0x3F) as u8);
            }
            _ => {
                out.push(0xE0 | (unit >> 12) as u8);
                out.push(0x80 | ((unit >> 6) & 0x3F) as u8);
                out.push(0x80 | (unit & 0x3F) as u8);
            }
        }
    }
    let len = out.len() - start - 2;
    let Ok(len16) = u16::try_from(len) else {
        return Err(Error::invalid(format!(
            "managed BLOB reference: encoded string too long: {len} bytes (writeUTF allows at \
             most {MAX_UTF_BYTES}); string starts with '{}'",
            s.chars().take(80).collect::<String>()
        )));
    };
    out[start..start + 2].copy_from_slice(&len16.to_be_bytes());
    Ok(())
}

/// Encode a sidecar listing `refs`: sorted in Java order, duplicates removed.
///
/// # Errors
/// [`Error::Invalid`] for a reference that breaks [`BlobReference::validate`] or a string
/// whose modified UTF-8 encoding exceeds 65535 bytes (Java's `UTFDataFormatException`).
pub fn encode_blobref(refs: &[BlobReference]) -> Result<Vec<u8>> {
    let mut sorted: Vec<&BlobReference> = refs.iter().collect();
    sorted.sort();
    sorted.dedup();
    encode_sorted(sorted.into_iter(), refs.len())
}

/// Encode references already sorted and unique.
fn encode_sorted<'a>(
    refs: impl ExactSizeIterator<Item = &'a BlobReference>,
    size_hint: usize,
) -> Result<Vec<u8>> {
    let count = i32::try_from(refs.len()).map_err(|_| {
        Error::invalid(format!(
            "managed BLOB reference sidecar: {} references do not fit an int32 count",
            refs.len()
        ))
    })?;
    let mut out = Vec::with_capacity(13 + size_hint.min(1 << 16) * 64);
    out.extend_from_slice(&BLOBREF_MAGIC.to_be_bytes());
    out.push(BLOBREF_VERSION);
    out.extend_from_slice(&count.to_be_bytes());
    for r in refs {
        r.validate()?;
        write_utf(&mut out, &r.storage_root_id)?;
        write_utf(&mut out, &r.relative_path)?;
    }
    let crc = crc32fast::hash(&out[4..]);
    out.extend_from_slice(&crc.to_be_bytes());
    Ok(out)
}

/// A cursor over sidecar bytes; every short read is an error naming the file.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    file: &'a str,
}

impl<'a> Reader<'a> {
    fn corrupt(&self, reason: impl Into<String>) -> Error {
        Error::corrupt(self.file, FORMAT, reason)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.corrupt(format!(
                "unexpected end of file reading {what} at offset {} ({n} bytes needed, {} left)",
                self.at,
                self.bytes.len() - self.at
            )));
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn i32(&mut self, what: &str) -> Result<i32> {
        let s = self.take(4, what)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// Java `DataInputStream#readUTF`.
    fn utf(&mut self, what: &str) -> Result<String> {
        let len = self.take(2, what)?;
        let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
        let at = self.at;
        let bytes = self.take(len, what)?;
        let malformed = |i: usize| {
            self.corrupt(format!(
                "{what}: malformed modified UTF-8 around byte {}",
                at + i
            ))
        };
        let mut units: Vec<u16> = Vec::with_capacity(len);
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            match c >> 4 {
                0..=7 => {
                    units.push(u16::from(c));
                    i += 1;
                }
                12 | 13 => {
                    let c2 = *bytes
                        .get(i + 1)
                        .ok_or_else(|| self.corrupt(format!("{what}: partial character at end")))?;
                    if c2 & 0xC0 != 0x80 {
                        return Err(malformed(i + 1));
                    }
                    units.push((u16::from(c & 0x1F) << 6) | u16::from(c2 & 0x3F));
                    i += 2;
                }
                14 => {
                    let (Some(c2), Some(c3)) = (bytes.get(i + 1), bytes.get(i + 2)) else {
                        return Err(self.corrupt(format!("{what}: partial character at end")));
                    };
                    if c2 & 0xC0 != 0x80 || c3 & 0xC0 != 0x80 {
                        return Err(malformed(i + 1));
                    }
                    units.push(
                        (u16::from(c & 0x0F) << 12)
                            | (u16::from(c2 & 0x3F) << 6)
                            | u16::from(c3 & 0x3F),
                    );
                    i += 3;
                }
                _ => return Err(malformed(i)),
            }
        }
        String::from_utf16(&units).map_err(|_| {
            self.corrupt(format!(
                "{what}: an unpaired UTF-16 surrogate (valid for Java, not representable here)"
            ))
        })
    }
}

/// Decode a sidecar. `file_name` names the file in errors. References come back in stored
/// order (writers store them sorted and unique; readers do not require it).
///
/// # Errors
/// [`Error::Corrupt`] (format `blobref`, path `file_name`) with Java's texts:
/// "Invalid managed BLOB reference file magic: M" (M as a signed int32),
/// "Unsupported managed BLOB reference file version: V",
/// "Invalid managed BLOB reference count: C", "Invalid managed BLOB reference entry." (plus
/// the broken rule), "Invalid managed BLOB reference file checksum. Expected E but computed
/// A." (unsigned), "Unexpected trailing bytes in managed BLOB reference file."; and for
/// truncated files or malformed modified UTF-8, an error saying which.
pub fn decode_blobref(bytes: &[u8], file_name: &str) -> Result<Vec<BlobReference>> {
    let mut r = Reader {
        bytes,
        at: 0,
        file: file_name,
    };
    let magic = r.i32("the magic")?;
    if magic != BLOBREF_MAGIC {
        return Err(r.corrupt(format!(
            "Invalid managed BLOB reference file magic: {magic}"
        )));
    }
    let version = r.take(1, "the version")?[0];
    if version != BLOBREF_VERSION {
        return Err(r.corrupt(format!(
            "Unsupported managed BLOB reference file version: {version}"
        )));
    }
    let count = r.i32("the reference count")?;
    let Ok(count) = usize::try_from(count) else {
        return Err(r.corrupt(format!("Invalid managed BLOB reference count: {count}")));
    };
    let mut refs = Vec::with_capacity(count.min(1024));
    for i in 0..count {
        let root = r.utf(&format!("the storage root of reference {i}"))?;
        let rel = r.utf(&format!("the relative path of reference {i}"))?;
        let reference = BlobReference::try_new(root, rel)
            .map_err(|e| r.corrupt(format!("{INVALID_ENTRY} (reference {i}: {e})")))?;
        refs.push(reference);
    }
    let computed = crc32fast::hash(&bytes[4..r.at]);
    let expected = r.i32("the checksum")? as u32;
    if expected != computed {
        return Err(r.corrupt(format!(
            "Invalid managed BLOB reference file checksum. Expected {expected} but computed \
             {computed}."
        )));
    }
    if r.at != bytes.len() {
        return Err(r.corrupt("Unexpected trailing bytes in managed BLOB reference file."));
    }
    Ok(refs)
}

/// Collects the packs referenced by the rows written to one data file and encodes its
/// sidecar.
///
/// The key-value file writer calls [`BlobRefCollector::add_uri`] with the URI of every
/// descriptor of a managed field (scalar value, non-null array element, non-null map value)
/// of every **non-retract** row it writes to the file (retract rows carry no payload), then
/// [`BlobRefCollector::finish`] when the file is closed; the bytes go to
/// [`blobref_file_name`] of the data file, which is listed in its `extra_files`. URIs that are
/// not packs are ignored; repeated URIs cost one comparison.
///
/// Source: Java `org.apache.paimon.blob.ManagedBlobReferenceCollector`.
#[derive(Debug, Clone, Default)]
pub struct BlobRefCollector {
    refs: BTreeSet<BlobReference>,
    last_uri: Option<String>,
}

impl BlobRefCollector {
    /// An empty collector (its sidecar lists nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Record the pack behind a descriptor URI (ignored when the URI is not a pack).
    ///
    /// # Errors
    /// As [`BlobReference::from_uri`]: a pack URI without parent directory or with an invalid
    /// name.
    pub fn add_uri(&mut self, uri: &str) -> Result<()> {
        if self.last_uri.as_deref() == Some(uri) {
            return Ok(());
        }
        if let Some(r) = BlobReference::from_uri(uri)? {
            self.refs.insert(r);
        }
        match &mut self.last_uri {
            Some(last) => {
                last.clear();
                last.push_str(uri);
            }
            None => self.last_uri = Some(uri.to_string()),
        }
        Ok(())
    }

    /// The references collected so far, in Java order, unique.
    pub fn references(&self) -> impl ExactSizeIterator<Item = &BlobReference> {
        self.refs.iter()
    }

    /// Number of distinct packs collected.
    pub fn len(&self) -> usize {
        self.refs.len()
    }

    /// True when no pack was collected.
    pub fn is_empty(&self) -> bool {
        self.refs.is_empty()
    }

    /// The sidecar bytes (sorted, unique; a valid empty sidecar when nothing was collected).
    ///
    /// # Errors
    /// [`Error::Invalid`] when a string's modified UTF-8 encoding exceeds 65535 bytes.
    pub fn finish(self) -> Result<Vec<u8>> {
        encode_sorted(self.refs.iter(), self.refs.len())
    }
}

#[cfg(test)]
mod tests;
