//! Files a writer hands to the host, and the streamed (multipart) write of large ones.
//!
//! A writer's output file ([`FileToPut`]) is either whole bytes, written with one
//! [`IoOp::Put`](crate::io::IoOp::Put) (create-new), or a [`StreamedFile`]: a list of pieces,
//! some of them byte ranges of *other* objects (the blob bytes of a blob descriptor given as
//! input) and CRC32 checksums over earlier bytes that are only known once those bytes went by.
//! [`put_file`] writes such a file in parts ([`IoOp::PutPart`](crate::io::IoOp::PutPart) …
//! [`IoOp::PutComplete`](crate::io::IoOp::PutComplete)), reading each copied range in chunks,
//! so a file is never held whole: memory stays at about one part (the part being filled, and
//! the chunk read into it) whatever its size.
//!
//! ```text
//! pieces:  Bytes(magic) | Copy(uri, 0..1 GiB) | Bytes(length) | Crc32(from 0) | Bytes(index…)
//! IO:      Read(uri, 0..8M) PutPart(0) Read(uri, 8M..16M) PutPart(1) … PutComplete(n)
//! ```
//!
//! A streamed file not larger than one part is assembled and written with a single `Put`.
//! On any failure after the first part, the upload is aborted
//! ([`IoOp::PutAbort`](crate::io::IoOp::PutAbort)) and nothing appears at the path.
//!
//! Source: Java `org.apache.paimon.format.blob.BlobFormatWriter` (blob bytes copied from the
//! blob's input stream through a buffer while the record CRC is computed).

use std::ops::Range;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::io::{Io, PutMode};

/// Default part size of a streamed write: 8 MiB.
pub const DEFAULT_PUT_PART_BYTES: usize = 8 << 20;

/// A file the host must write (create-new) before the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileToPut {
    /// Path relative to the table root, or a full path outside it (a data file under
    /// `data-file.external-paths`, see [`crate::write::external`] and [`crate::io::is_absolute`]).
    pub path: String,
    /// What to write.
    pub content: FileContent,
}

impl FileToPut {
    /// A file of whole bytes.
    pub fn whole(path: impl Into<String>, bytes: impl Into<Bytes>) -> Self {
        FileToPut {
            path: path.into(),
            content: FileContent::Bytes(bytes.into()),
        }
    }

    /// Part `part` of a file streamed while it is encoded (see [`FilePart`]).
    pub fn part(path: impl Into<String>, part: u32, bytes: impl Into<Bytes>, last: bool) -> Self {
        FileToPut {
            path: path.into(),
            content: FileContent::Part(FilePart {
                part,
                bytes: bytes.into(),
                last,
            }),
        }
    }

    /// Size of the file in bytes (of the part, for a [`FileContent::Part`]).
    pub fn len(&self) -> u64 {
        self.content.len()
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The content of a [`FileToPut`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    /// The whole file, in memory.
    Bytes(Bytes),
    /// A file assembled while it is written (see the module docs).
    Streamed(StreamedFile),
    /// One part of a file sent while it is still being written (see [`FilePart`]).
    Part(FilePart),
    /// The end of a file whose first parts went out as [`FilePart`]s: the rest, written as
    /// parts numbered from `first_part` (copying what its pieces reference), then completed.
    StreamedRest {
        /// Number of the first part of the rest (the parts sent before it).
        first_part: u32,
        /// The rest; its [`StreamedFile::base`] is the bytes sent before it.
        file: StreamedFile,
    },
}

/// One part of a file (a data file, a `.blob` file, a managed pack) that a writer sends while
/// it writes the rest: the host sends it as [`IoOp::PutPart`](crate::io::IoOp::PutPart) `part`
/// of the path, and completes the file
/// ([`IoOp::PutComplete`](crate::io::IoOp::PutComplete) after `part + 1` parts) after the
/// `last` one (or after a [`FileContent::StreamedRest`]). Parts of one path come in order, in
/// the same or later takes of the writer's files, each but the last at least the writer's part
/// size ([`crate::write::TableWrite::with_put_part_bytes`], default
/// [`DEFAULT_PUT_PART_BYTES`]); they must be sent one after the other. A writer only streams a
/// file once its laid-out bytes reach a part (files smaller than that stay whole `Put`s), and
/// a file is never visible before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePart {
    /// Part number, from 0.
    pub part: u32,
    /// The part's bytes.
    pub bytes: Bytes,
    /// True for the file's last part: complete the file after it.
    pub last: bool,
}

impl FileContent {
    /// Size of the file in bytes (of the part, for [`FileContent::Part`]).
    pub fn len(&self) -> u64 {
        match self {
            FileContent::Bytes(b) => b.len() as u64,
            FileContent::Streamed(s) => s.size,
            FileContent::Part(p) => p.bytes.len() as u64,
            FileContent::StreamedRest { file, .. } => file.size,
        }
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of a whole file, `None` for a streamed one or a part.
    pub fn bytes(&self) -> Option<&Bytes> {
        match self {
            FileContent::Bytes(b) => Some(b),
            FileContent::Streamed(_) | FileContent::Part(_) | FileContent::StreamedRest { .. } => {
                None
            }
        }
    }
}

/// One piece of a [`StreamedFile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilePiece {
    /// These bytes.
    Bytes(Bytes),
    /// `length` bytes at `offset` of the object `uri` (an absolute URI or a path relative to
    /// the host root), read while the file is written.
    Copy {
        /// The source object.
        uri: String,
        /// First byte, in bytes from the start of the source.
        offset: u64,
        /// Number of bytes.
        length: u64,
    },
    /// 4 bytes: the CRC32 (zlib) of the file's bytes from position `start` up to this piece,
    /// little-endian. Two CRC pieces never cover overlapping ranges.
    Crc32 {
        /// Position in the file where the checksummed range starts.
        start: u64,
    },
}

impl FilePiece {
    /// Number of bytes this piece adds to the file.
    pub fn len(&self) -> u64 {
        match self {
            FilePiece::Bytes(b) => b.len() as u64,
            FilePiece::Copy { length, .. } => *length,
            FilePiece::Crc32 { .. } => 4,
        }
    }

    /// True for a piece that adds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file made of [`FilePiece`]s, written by [`put_file`]; or the rest of one whose first
/// [`StreamedFile::base`] bytes went out as [`FilePart`]s ([`FileContent::StreamedRest`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamedFile {
    pieces: Vec<FilePiece>,
    size: u64,
    base: u64,
}

impl StreamedFile {
    /// An empty file.
    pub fn new() -> Self {
        Self::default()
    }

    /// The rest of a file after its first `base` bytes: CRC pieces count positions from the
    /// start of the whole file.
    pub fn starting_at(base: u64) -> Self {
        StreamedFile {
            base,
            ..Self::default()
        }
    }

    /// Position in the whole file of this file's first byte (0 unless a rest).
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Append a piece (empty byte pieces are dropped).
    pub fn push(&mut self, piece: FilePiece) {
        if piece.is_empty() {
            return;
        }
        self.size += piece.len();
        self.pieces.push(piece);
    }

    /// The pieces, in file order.
    pub fn pieces(&self) -> &[FilePiece] {
        &self.pieces
    }

    /// Size of the file in bytes (of the rest, after [`StreamedFile::base`]).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// True when no piece copies bytes of another object.
    pub fn is_self_contained(&self) -> bool {
        !self
            .pieces
            .iter()
            .any(|p| matches!(p, FilePiece::Copy { .. }))
    }
}

/// Write `file` (create-new) with [`DEFAULT_PUT_PART_BYTES`] parts; see [`put_file_in_parts`].
///
/// # Errors
/// As [`put_file_in_parts`].
pub async fn put_file<T>(io: &Io<T>, file: FileToPut) -> Result<bool> {
    put_file_in_parts(io, file, DEFAULT_PUT_PART_BYTES).await
}

/// Write `file` (create-new): whole bytes with one `Put`; a streamed file not larger than
/// `part_bytes` assembled and written with one `Put`; a larger one in parts of at least
/// `part_bytes` bytes (the last may be smaller). Copied ranges are read in chunks of at most
/// `part_bytes`. Returns `Ok(false)` when an object exists at the path already (nothing was
/// written then). Hosts on S3 need `part_bytes` ≥ [`crate::io::MIN_PUT_PART_BYTES`].
///
/// # Errors
/// [`Error::Io`] naming the path of a failed `Put`/part, or the source URI of a failed read
/// (a missing source, a range past its end); the upload is aborted first.
pub async fn put_file_in_parts<T>(io: &Io<T>, file: FileToPut, part_bytes: usize) -> Result<bool> {
    let part_bytes = part_bytes.max(1);
    let FileToPut { path, content } = file;
    let (streamed, first_part) = match content {
        FileContent::Bytes(b) => return io.put(&path, b, PutMode::CreateNew).await,
        FileContent::Streamed(s) => (s, 0),
        FileContent::Part(p) => return put_part(io, &path, p).await,
        FileContent::StreamedRest { first_part, file } => (file, first_part),
    };
    if first_part == 0 && streamed.size <= part_bytes as u64 {
        let mut sink = Sink::Whole(Vec::with_capacity(streamed.size as usize));
        assemble(io, &path, &streamed, part_bytes, &mut sink).await?;
        let Sink::Whole(whole) = sink else {
            return Err(Error::invalid("streamed write: sink changed kind"));
        };
        return io.put(&path, Bytes::from(whole), PutMode::CreateNew).await;
    }
    let mut sink = Sink::Parts(PartSender {
        io,
        path: &path,
        part_bytes,
        buf: Vec::new(),
        sent: first_part,
        first: first_part,
    });
    let result = async {
        assemble(io, &path, &streamed, part_bytes, &mut sink).await?;
        let sent = match &mut sink {
            Sink::Parts(p) => p.finish().await?,
            Sink::Whole(_) => 0,
        };
        io.put_complete(&path, sent).await
    }
    .await;
    if !matches!(result, Ok(true)) {
        // Nothing must appear: drop the parts (a failure to abort is not the first error).
        let _ = io.put_abort(&path).await;
    }
    result
}

/// Send one [`FilePart`]; after the last one, complete the file (`Ok(false)`: an object
/// exists at the path already). On a failure the upload is aborted.
async fn put_part<T>(io: &Io<T>, path: &str, p: FilePart) -> Result<bool> {
    let result = async {
        io.put_part(path, p.part, p.bytes).await?;
        if p.last {
            io.put_complete(path, p.part + 1).await
        } else {
            Ok(true)
        }
    }
    .await;
    if !matches!(result, Ok(true)) {
        let _ = io.put_abort(path).await;
    }
    result
}

/// Put `files` in order, one after the other, stopping at the first failure or name taken.
/// For the files of one path ([`FilePart`]s), which must not be sent at once.
///
/// # Errors
/// As [`put_file`].
pub async fn put_files_in_order<T>(io: &Io<T>, files: Vec<FileToPut>) -> Result<bool> {
    for f in files {
        if !put_file(io, f).await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `files` grouped by path, in their order: the [`FilePart`]s of one path form one group,
/// to be sent in order, and the groups can be sent at once.
pub fn group_by_path(files: Vec<FileToPut>) -> Vec<Vec<FileToPut>> {
    let mut groups: Vec<Vec<FileToPut>> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for f in files {
        match index.get(&f.path) {
            Some(&i) => groups[i].push(f),
            None => {
                index.insert(f.path.clone(), groups.len());
                groups.push(vec![f]);
            }
        }
    }
    groups
}

/// True when `group` (one path's files from [`group_by_path`]) finishes the file at its
/// path: a whole or assembled file, or a last part. A group of other parts leaves an upload
/// open, to be completed by a later take (or aborted).
pub fn completes_file(group: &[FileToPut]) -> bool {
    group.last().is_some_and(|f| match &f.content {
        FileContent::Part(p) => p.last,
        FileContent::Bytes(_) | FileContent::Streamed(_) | FileContent::StreamedRest { .. } => true,
    })
}

/// Where [`assemble`] sends the bytes of a streamed file.
enum Sink<'a, T> {
    /// Collected whole (small files).
    Whole(Vec<u8>),
    /// Sent in parts.
    Parts(PartSender<'a, T>),
}

impl<T> Sink<'_, T> {
    /// Bytes that still fit into the part being filled (at least 1): copies are read in
    /// chunks of at most this size, so a part buffer never grows past the part size.
    fn room(&self) -> usize {
        match self {
            Sink::Whole(_) => usize::MAX,
            Sink::Parts(p) => p.part_bytes.saturating_sub(p.buf.len()).max(1),
        }
    }

    async fn push(&mut self, chunk: Bytes) -> Result<()> {
        match self {
            Sink::Whole(v) => {
                v.extend_from_slice(&chunk);
                Ok(())
            }
            Sink::Parts(p) => p.push(chunk).await,
        }
    }
}

/// Cuts the bytes of a streamed file into parts of at least `part_bytes` and sends them.
struct PartSender<'a, T> {
    io: &'a Io<T>,
    path: &'a str,
    part_bytes: usize,
    buf: Vec<u8>,
    sent: u32,
    /// The part this sender started at (a rest continues an upload).
    first: u32,
}

impl<T> PartSender<'_, T> {
    /// Add `chunk`; a chunk that is a whole part by itself (nothing buffered) is sent as it
    /// is, without a copy.
    async fn push(&mut self, chunk: Bytes) -> Result<()> {
        if self.buf.is_empty() && chunk.len() >= self.part_bytes {
            self.io.put_part(self.path, self.sent, chunk).await?;
            self.sent += 1;
            return Ok(());
        }
        if self.buf.is_empty() {
            self.buf.reserve_exact(self.part_bytes.max(chunk.len()));
        }
        self.buf.extend_from_slice(&chunk);
        if self.buf.len() >= self.part_bytes {
            let full = std::mem::take(&mut self.buf);
            self.io
                .put_part(self.path, self.sent, Bytes::from(full))
                .await?;
            self.sent += 1;
        }
        Ok(())
    }

    /// Send the last part; returns the number of parts sent.
    async fn finish(&mut self) -> Result<u32> {
        if !self.buf.is_empty() || self.sent == self.first {
            let last = Bytes::from(std::mem::take(&mut self.buf));
            self.io.put_part(self.path, self.sent, last).await?;
            self.sent += 1;
        }
        Ok(self.sent)
    }
}

/// The bytes of `file` in order, handed to `sink` in chunks; CRC pieces computed on the way.
async fn assemble<T>(
    io: &Io<T>,
    path: &str,
    file: &StreamedFile,
    chunk_bytes: usize,
    sink: &mut Sink<'_, T>,
) -> Result<()> {
    let mut crc = CrcTracker::new(file);
    let mut pos = file.base;
    for piece in &file.pieces {
        match piece {
            FilePiece::Bytes(b) => {
                crc.feed(pos, b);
                sink.push(b.clone()).await?;
                pos += b.len() as u64;
            }
            FilePiece::Copy {
                uri,
                offset,
                length,
            } => {
                let mut done = 0u64;
                while done < *length {
                    let n = (*length - done)
                        .min(chunk_bytes as u64)
                        .min(sink.room() as u64);
                    let range: Range<u64> = offset + done..offset + done + n;
                    let chunk = io.read_range(uri, range).await?;
                    crc.feed(pos, &chunk);
                    sink.push(chunk).await?;
                    pos += n;
                    done += n;
                }
            }
            FilePiece::Crc32 { start } => {
                let value = crc.finish(*start, pos, path)?;
                let b = value.to_le_bytes();
                crc.feed(pos, &b);
                sink.push(Bytes::copy_from_slice(&b)).await?;
                pos += 4;
            }
        }
    }
    Ok(())
}

/// Running CRC32s over the ranges the CRC pieces of a file ask for.
struct CrcTracker {
    /// Starts of the checksummed ranges, in file order, and which is next.
    starts: Vec<u64>,
    next: usize,
    /// The range being checksummed: its start and the hasher.
    open: Option<(u64, crc32fast::Hasher)>,
}

impl CrcTracker {
    fn new(file: &StreamedFile) -> Self {
        let starts = file
            .pieces
            .iter()
            .filter_map(|p| match p {
                FilePiece::Crc32 { start } => Some(*start),
                _ => None,
            })
            .collect();
        CrcTracker {
            starts,
            next: 0,
            open: None,
        }
    }

    /// Bytes `b` at file position `pos`.
    fn feed(&mut self, pos: u64, b: &[u8]) {
        let end = pos + b.len() as u64;
        if self.open.is_none()
            && let Some(&s) = self.starts.get(self.next)
            && s >= pos
            && s < end
        {
            self.open = Some((s, crc32fast::Hasher::new()));
        }
        if let Some((s, h)) = &mut self.open {
            let from = s.saturating_sub(pos) as usize;
            h.update(&b[from.min(b.len())..]);
        }
    }

    /// The CRC of `start..pos`, closing the range.
    fn finish(&mut self, start: u64, pos: u64, path: &str) -> Result<u32> {
        match self.open.take() {
            Some((s, h)) if s == start => {
                self.next += 1;
                Ok(h.finalize())
            }
            _ if start == pos => {
                self.next += 1;
                Ok(crc32fast::hash(&[]))
            }
            _ => Err(Error::invalid(format!(
                "streamed file {path}: checksum from {start} to {pos} overlaps another"
            ))),
        }
    }
}

/// [`put_file_in_parts`] as a machine emitting whether the file was written (`false`: an
/// object exists at the path already).
pub fn put_file_machine(file: FileToPut, part_bytes: usize) -> crate::io::Machine<bool> {
    crate::io::Machine::once("PutFile", move |io| async move {
        put_file_in_parts(&io, file, part_bytes).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::blob::{
        BlobElementKind, BlobFileWriter, BlobInput, decode_blob_file_index, encode_array_payload,
    };
    use crate::format::blob_descriptor::{BlobDescriptor, BlobViewStruct};
    use crate::io::{IoOp, MemoryStore, Step};
    use arrow_array::{ArrayRef, LargeBinaryArray, ListArray};
    use std::sync::Arc;

    /// Bytes that differ at every position, so a copy from a wrong offset shows.
    fn source(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    fn store_with_source(bytes: &[u8]) -> MemoryStore {
        let mut s = MemoryStore::new();
        s.objects
            .insert("file:/src/big.bin".into(), Bytes::copy_from_slice(bytes));
        s
    }

    /// Write `file` over `store` with parts of `part` bytes; returns the ops sent.
    fn put(store: &mut MemoryStore, file: FileToPut, part: usize) -> (Result<bool>, Vec<IoOp>) {
        let mut m = put_file_machine(file, part);
        let mut ops = Vec::new();
        let mut out = None;
        loop {
            match m.step() {
                Err(e) => return (Err(e), ops),
                Ok(Step::NeedIo(round)) => {
                    for r in round {
                        let a = store.answer(&r.op);
                        ops.push(r.op);
                        m.provide(r.id, a).unwrap();
                    }
                }
                Ok(Step::Emit(v)) => out = Some(v),
                Ok(Step::Done) => return (Ok(out.unwrap()), ops),
                Ok(_) => {}
            }
        }
    }

    fn descriptor(offset: i64, length: i64) -> Vec<u8> {
        BlobDescriptor::new("file:/src/big.bin", offset, length).serialize()
    }

    #[test]
    fn a_referenced_blob_is_copied_into_the_same_bytes_as_an_inline_one() {
        let src = source(100_000);
        // Rows: inline bytes, a reference to 10..60010, null, a reference to the last 5 bytes.
        let rows: Vec<Option<Vec<u8>>> = vec![
            Some(b"inline".to_vec()),
            Some(descriptor(10, 60_000)),
            None,
            Some(descriptor(99_995, 5)),
        ];
        let mut refs = BlobFileWriter::with_references();
        let mut plain = BlobFileWriter::new();
        let arr: ArrayRef = Arc::new(LargeBinaryArray::from_iter(
            rows.iter().map(|r| r.as_deref()),
        ));
        let mut ranges = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            refs.push_value(arr.as_ref(), i, BlobElementKind::Blob)
                .unwrap();
            match row {
                None => plain.push_null(),
                Some(v) => {
                    let bytes: &[u8] = match i {
                        1 => &src[10..60_010],
                        3 => &src[99_995..],
                        _ => v,
                    };
                    ranges.push(plain.push_payload(bytes));
                }
            }
        }
        let expected = plain.finish().unwrap();
        let content = refs.finish_content().unwrap();
        let FileContent::Streamed(streamed) = &content else {
            panic!("a file with references must be streamed");
        };
        assert_eq!(streamed.size(), expected.len() as u64);
        assert!(!streamed.is_self_contained());
        for part in [1usize, 7, 4096, 60_004, 1 << 20] {
            let mut store = store_with_source(&src);
            let file = FileToPut {
                path: "bucket-0/data-1.blob".into(),
                content: content.clone(),
            };
            let (r, ops) = put(&mut store, file, part);
            assert!(r.unwrap(), "part size {part}");
            let got = &store.objects["bucket-0/data-1.blob"];
            assert_eq!(got.as_ref(), expected.as_slice(), "part size {part}");
            // The index decodes to the same entries, so readers find the same payloads.
            let index = decode_blob_file_index(got, "x").unwrap();
            assert_eq!(index.row_count(), 4);
            let parts = ops
                .iter()
                .filter(|o| matches!(o, IoOp::PutPart { .. }))
                .count();
            if (expected.len()) <= part {
                assert_eq!(parts, 0, "a file of one part is one Put");
                assert!(ops.iter().any(|o| matches!(o, IoOp::Put { .. })));
            } else {
                assert!(parts >= 2, "part size {part}");
                // No part but the last is smaller than the part size.
                for o in &ops {
                    if let IoOp::PutPart { bytes, part: n, .. } = o
                        && (*n as usize) + 1 < parts
                    {
                        assert!(bytes.len() >= part);
                    }
                }
                // Copies are read in chunks no larger than a part.
                for o in &ops {
                    if let IoOp::Read { range: Some(r), .. } = o {
                        assert!(r.end - r.start <= part as u64);
                    }
                }
            }
            assert!(store.uploads.is_empty());
        }
        // The payload ranges (what descriptors of packs point at) are the same too.
        assert_eq!(ranges[1], 6 + 16 + 4..6 + 16 + 4 + 60_000);
    }

    #[test]
    fn array_and_map_elements_may_be_references() {
        let src = source(5000);
        let values = LargeBinaryArray::from_iter([
            Some(b"a".as_slice()),
            Some(descriptor(100, 2000).as_slice()),
            None,
        ]);
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::new(arrow_schema::Field::new(
                "element",
                arrow_schema::DataType::LargeBinary,
                true,
            )),
            arrow_buffer::OffsetBuffer::from_lengths([3]),
            Arc::new(values),
            None,
        ));
        let mut w = BlobFileWriter::with_references();
        w.push_value(list.as_ref(), 0, BlobElementKind::Array)
            .unwrap();
        let mut plain = BlobFileWriter::new();
        plain.push_payload(&encode_array_payload(&[
            Some(b"a".as_slice()),
            Some(&src[100..2100]),
            None,
        ]));
        let expected = plain.finish().unwrap();
        let mut store = store_with_source(&src);
        let file = FileToPut {
            path: "x.blob".into(),
            content: w.finish_content().unwrap(),
        };
        assert!(put(&mut store, file, 1000).0.unwrap());
        assert_eq!(store.objects["x.blob"].as_ref(), expected.as_slice());
    }

    #[test]
    fn a_failed_copy_aborts_the_upload_and_writes_nothing() {
        let src = source(50_000);
        let mut w = BlobFileWriter::with_references();
        let arr = LargeBinaryArray::from_iter([Some(descriptor(0, 50_000))]);
        w.push_value(&arr, 0, BlobElementKind::Blob).unwrap();
        let content = w.finish_content().unwrap();
        // The source shrank after the write was planned: the copy runs past its end.
        let mut store = store_with_source(&src[..30_000]);
        let file = FileToPut {
            path: "bucket-0/data-2.blob".into(),
            content,
        };
        let (r, ops) = put(&mut store, file, 8192);
        let e = r.unwrap_err().to_string();
        assert!(e.contains("file:/src/big.bin"), "{e}");
        assert!(ops.iter().any(|o| matches!(o, IoOp::PutPart { .. })));
        assert!(matches!(ops.last(), Some(IoOp::PutAbort { .. })));
        assert!(!store.objects.contains_key("bucket-0/data-2.blob"));
        assert!(store.uploads.is_empty());
    }

    #[test]
    fn values_that_are_not_descriptors_stay_bytes_and_views_are_refused() {
        let d = descriptor(1, 2);
        assert!(matches!(
            BlobInput::from_bytes(&d, false).unwrap(),
            BlobInput::Bytes(_)
        ));
        assert!(matches!(
            BlobInput::from_bytes(&d, true).unwrap(),
            BlobInput::Reference(_)
        ));
        assert!(matches!(
            BlobInput::from_bytes(b"plain", true).unwrap(),
            BlobInput::Bytes(_)
        ));
        let unknown = BlobDescriptor::new("file:/x", 0, -1).serialize();
        let e = BlobInput::from_bytes(&unknown, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unresolved length"), "{e}");
        let view = BlobViewStruct {
            identifier: "db.t".into(),
            field_id: 1,
            row_id: 2,
        }
        .serialize()
        .unwrap();
        let e = BlobInput::from_bytes(&view, true).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    }
}
