//! Parquet data files to Arrow, over fetched byte ranges.
//!
//! Uses the parquet crate's sans-IO push decoder
//! (`parquet::arrow::push_decoder::ParquetPushDecoder`): its `NeedsData(ranges)` are forwarded
//! as one round of `read_range` requests and the bytes pushed back.
//!
//! Rounds made by one file:
//! 1. `Read path [size - min(64 KiB, size), size)`: the footer (8-byte tail and the Thrift
//!    `FileMetaData`);
//! 2. only if the metadata is longer than that suffix: `Read` of the rest of it;
//! 3. per row group with at least one row: the byte ranges of the projected column chunks
//!    that are not inside the suffix already read, all in one round (none at all for a file
//!    smaller than the suffix). No page index and no unprojected column chunk is ever read
//!    beyond that suffix.
//!
//! Accepts Parquet format versions 1 and 2, data page v1 and v2, every codec the parquet crate
//! is built with (uncompressed, snappy, gzip, zstd, lz4, lz4_raw, brotli). Encrypted files are
//! unsupported. Column types are the parquet crate's Arrow mapping (honouring the embedded
//! `ARROW:schema` written by pyarrow).
//!
//! Source: Java `org.apache.paimon.format.parquet.ParquetReaderFactory`.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use parquet::DecodeResult;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::push_decoder::{ParquetPushDecoder, ParquetPushDecoderBuilder};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

use crate::error::{Error, Result};
use crate::format::reading::{
    ResolvedProjection, check_range, extend_tail, read_ranges, read_tail,
};
use crate::io::{Io, WorkHandle};

const FORMAT: &str = "parquet";
const FOOTER_LEN: u64 = 8;
const MAGIC: &[u8; 4] = b"PAR1";
const ENCRYPTED_MAGIC: &[u8; 4] = b"PARE";

/// Streaming reader of one Parquet data file (see the module docs for its rounds).
pub struct ParquetFileReader {
    path: String,
    file_size: u64,
    metadata: Arc<ParquetMetaData>,
    file_schema: SchemaRef,
    projection: ResolvedProjection,
    /// Decoders of disjoint sets of the projected root columns (one unless the machine has
    /// parallel work, see [`column_groups`]); their batches line up row for row.
    groups: Vec<ColumnGroup>,
    /// For each projected root (in `projection.roots` order): its group and its column
    /// index in that group's batches.
    slots: Vec<(usize, usize)>,
    /// Whether to start decoding the next batches before returning one (parallel work only).
    decode_ahead: bool,
    /// Batches each group decodes per work item (see [`WORK_CHUNK_BYTES`]); 1 inline.
    chunk_batches: usize,
    batch_size: usize,
    rows_returned: u64,
}

/// Uncompressed bytes of column chunks (all groups together) a round of work items decodes
/// before handing its batches back: 4 MiB, a few milliseconds of decoding. Hand-offs between
/// threads cost tens to hundreds of microseconds (more on virtual machines), so one batch per
/// hand-off would waste a core. Every group decodes the same rows per item, so that the
/// groups run side by side.
pub const WORK_CHUNK_BYTES: u64 = 4 << 20;

/// How a work item's run of decoder steps ended.
enum ChunkEnd {
    /// It decoded its batches; call again for more.
    More,
    /// The decoder needs these byte ranges (the next row group's column chunks).
    NeedsData(Vec<std::ops::Range<u64>>),
    /// The file is decoded.
    Finished,
    /// The decoder failed.
    Failed(parquet::errors::ParquetError),
}

/// What a work item gives back: the decoder, the batches it decoded and how it stopped.
type Chunk = (ParquetPushDecoder, Vec<RecordBatch>, ChunkEnd);

/// Run `decoder` until it decoded `max_batches` batches, needs data, ends or fails.
fn decode_chunk(mut decoder: ParquetPushDecoder, max_batches: usize) -> Chunk {
    let mut batches = Vec::new();
    loop {
        match decoder.try_decode() {
            Ok(DecodeResult::Data(batch)) => {
                batches.push(batch);
                if batches.len() >= max_batches {
                    return (decoder, batches, ChunkEnd::More);
                }
            }
            Ok(DecodeResult::NeedsData(ranges)) => {
                return (decoder, batches, ChunkEnd::NeedsData(ranges));
            }
            Ok(DecodeResult::Finished) => return (decoder, batches, ChunkEnd::Finished),
            Err(e) => return (decoder, batches, ChunkEnd::Failed(e)),
        }
    }
}

/// One push decoder over a subset of the projected root columns.
struct ColumnGroup {
    /// `None` while the decoder is inside a work item (`pending`).
    decoder: Option<ParquetPushDecoder>,
    pending: Option<WorkHandle<Chunk>>,
    /// Decoded batches waiting for the other groups' batches of the same rows.
    ready: std::collections::VecDeque<RecordBatch>,
    /// Byte ranges the decoder asked for, not yet fetched.
    needs: Option<Vec<std::ops::Range<u64>>>,
    finished: bool,
}

impl ColumnGroup {
    /// Start decoding the next chunk as work, unless one is running or the decoder waits
    /// for data or ended.
    ///
    /// `parallel`: hand the chunk to the host as work; otherwise decode it right here.
    fn start<T>(
        &mut self,
        io: &Io<T>,
        max_batches: usize,
        parallel: bool,
    ) -> std::result::Result<(), parquet::errors::ParquetError> {
        if self.finished || self.needs.is_some() || self.pending.is_some() {
            return Ok(());
        }
        if let Some(decoder) = self.decoder.take() {
            if parallel {
                self.pending = Some(io.spawn_work(move || decode_chunk(decoder, max_batches)));
            } else {
                self.take_chunk(decode_chunk(decoder, max_batches))?;
            }
        }
        Ok(())
    }

    /// Take the running chunk's result into `ready` / `needs` / `finished`.
    async fn collect(&mut self) -> std::result::Result<(), parquet::errors::ParquetError> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let chunk = pending.await;
        self.take_chunk(chunk)
    }

    /// Decode ahead: when the running chunk finished, take it and start the next one while
    /// fewer than two chunks of batches wait, so a group whose columns decode faster runs
    /// ahead of the others instead of idling.
    fn run_ahead<T>(
        &mut self,
        io: &Io<T>,
        max_batches: usize,
    ) -> std::result::Result<(), parquet::errors::ParquetError> {
        if let Some(pending) = self.pending.as_mut()
            && let Some(chunk) = pending.try_take()
        {
            self.pending = None;
            self.take_chunk(chunk)?;
        }
        if self.ready.len() < 2 * max_batches {
            self.start(io, max_batches, true)?;
        }
        Ok(())
    }

    fn take_chunk(
        &mut self,
        chunk: Chunk,
    ) -> std::result::Result<(), parquet::errors::ParquetError> {
        let (decoder, batches, end) = chunk;
        self.decoder = Some(decoder);
        self.ready.extend(batches);
        match end {
            ChunkEnd::More => {}
            ChunkEnd::NeedsData(ranges) => self.needs = Some(ranges),
            ChunkEnd::Finished => self.finished = true,
            ChunkEnd::Failed(e) => return Err(e),
        }
        Ok(())
    }
}

/// Smallest uncompressed bytes of column chunks worth a column group of their own: below
/// it, handing the group's work to another thread costs more than the decoding it moves.
pub const MIN_COLUMN_GROUP_BYTES: u64 = 1 << 20;

/// Split the projected `roots` (file root column indices, ascending) into at most
/// `parallelism` groups of about equal uncompressed size (all row groups; decompressing and
/// decoding cost grows with it, whatever the compression ratio), each at least
/// [`MIN_COLUMN_GROUP_BYTES`]; every group ascending. One group when the file is small, has
/// one projected root or `parallelism` is 1.
fn column_groups(
    metadata: &ParquetMetaData,
    roots: &[usize],
    parallelism: usize,
) -> Vec<Vec<usize>> {
    let schema = metadata.file_metadata().schema_descr();
    let mut weight = vec![0u64; schema.root_schema().get_fields().len()];
    for rg in metadata.row_groups() {
        for (leaf, column) in rg.columns().iter().enumerate() {
            if leaf >= schema.num_columns() {
                break;
            }
            let root = schema.get_column_root_idx(leaf);
            if let Some(w) = weight.get_mut(root) {
                *w = w.saturating_add(u64::try_from(column.uncompressed_size()).unwrap_or(0));
            }
        }
    }
    let total: u64 = roots
        .iter()
        .map(|&r| weight.get(r).copied().unwrap_or(0))
        .sum();
    let n = parallelism
        .min(roots.len())
        .min(usize::try_from(total / MIN_COLUMN_GROUP_BYTES).unwrap_or(usize::MAX))
        .max(1);
    if n == 1 {
        return vec![roots.to_vec()];
    }
    // Longest first, each onto the lightest group.
    let mut by_weight = roots.to_vec();
    by_weight.sort_by_key(|&r| std::cmp::Reverse(weight.get(r).copied().unwrap_or(0)));
    let mut groups: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); n];
    for r in by_weight {
        if let Some(g) = groups.iter_mut().min_by_key(|(w, _)| *w) {
            g.0 += weight.get(r).copied().unwrap_or(0);
            g.1.push(r);
        }
    }
    let mut groups: Vec<Vec<usize>> = groups
        .into_iter()
        .map(|(_, mut g)| {
            g.sort_unstable();
            g
        })
        .filter(|g| !g.is_empty())
        .collect();
    groups.sort();
    groups
}

impl std::fmt::Debug for ParquetFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetFileReader")
            .field("path", &self.path)
            .field("file_size", &self.file_size)
            .field("rows_returned", &self.rows_returned)
            .finish()
    }
}

/// Where the Thrift metadata of a Parquet file lies, from its last 8 bytes.
///
/// Returns the length of the suffix holding the metadata and the footer
/// (`metadata_len + 8`).
///
/// # Errors
/// [`Error::Corrupt`] for a file shorter than 12 bytes, a missing `PAR1` magic or a metadata
/// length that does not fit in the file; [`Error::Unsupported`] for encrypted footers.
pub fn decode_parquet_footer_tail(path: &str, file_size: u64, last8: &[u8]) -> Result<u64> {
    if file_size < 12 {
        return Err(Error::corrupt(
            path,
            FORMAT,
            format!("file of {file_size} bytes is too small to be Parquet"),
        ));
    }
    let Some(tail) = last8
        .get(last8.len().saturating_sub(8)..)
        .filter(|t| t.len() == 8)
    else {
        return Err(Error::corrupt(path, FORMAT, "footer shorter than 8 bytes"));
    };
    let magic = &tail[4..8];
    if magic == ENCRYPTED_MAGIC {
        return Err(Error::unsupported(format!("encrypted Parquet file {path}")));
    }
    if magic != MAGIC {
        return Err(Error::corrupt(
            path,
            FORMAT,
            format!("missing PAR1 magic at the end of the file (found {magic:02x?})"),
        ));
    }
    let metadata_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    let needed = metadata_len + FOOTER_LEN;
    // The file starts with a 4-byte magic too.
    if needed + 4 > file_size {
        return Err(Error::corrupt(
            path,
            FORMAT,
            format!("metadata length {metadata_len} does not fit in a file of {file_size} bytes"),
        ));
    }
    Ok(needed)
}

/// Decode the Parquet metadata from the last bytes of a file (`suffix` must hold at least the
/// `decode_parquet_footer_tail` length), and check every column chunk lies inside the file.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` (and the row group / column of a bad chunk).
pub fn decode_parquet_metadata(
    path: &str,
    file_size: u64,
    suffix: &[u8],
) -> Result<ParquetMetaData> {
    let needed = decode_parquet_footer_tail(path, file_size, suffix)?;
    let start = usize::try_from(suffix.len() as u64 - needed.min(suffix.len() as u64))
        .map_err(|_| Error::corrupt(path, FORMAT, "footer too large"))?;
    if (suffix.len() as u64) < needed {
        return Err(Error::corrupt(path, FORMAT, "footer bytes missing"));
    }
    let end = suffix.len() - FOOTER_LEN as usize;
    let metadata = ParquetMetaDataReader::decode_metadata(&suffix[start..end])
        .map_err(|e| Error::corrupt(path, FORMAT, format!("invalid footer metadata: {e}")))?;
    let data_end = file_size - needed;
    for (i, rg) in metadata.row_groups().iter().enumerate() {
        for column in rg.columns() {
            let what = format!("row group {i} column chunk {}", column.column_path());
            // `ColumnChunkMetaData::byte_range` asserts these are not negative: check first.
            let start = column
                .dictionary_page_offset()
                .unwrap_or(column.data_page_offset());
            let len = column.compressed_size();
            let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(len)) else {
                return Err(Error::corrupt(
                    path,
                    FORMAT,
                    format!("{what} has a negative offset {start} or length {len}"),
                ));
            };
            check_range(path, FORMAT, &what, start, len, data_end)?;
        }
        if rg.num_rows() < 0 {
            return Err(Error::corrupt(
                path,
                FORMAT,
                format!("row group {i} has a negative row count"),
            ));
        }
    }
    Ok(metadata)
}

impl ParquetFileReader {
    /// Read the footer of `path` (`file_size` bytes) and prepare to decode the columns named in
    /// `projection` (`None`: all), `batch_size` rows per batch.
    ///
    /// # Errors
    /// [`Error::Io`] from the reads; [`Error::Corrupt`] for an invalid footer or an Arrow schema
    /// that cannot be derived from it.
    pub async fn open<T>(
        io: &Io<T>,
        path: &str,
        file_size: u64,
        projection: Option<&[String]>,
        batch_size: usize,
    ) -> Result<Self> {
        if file_size < 12 {
            return Err(Error::corrupt(
                path,
                FORMAT,
                format!("file of {file_size} bytes is too small to be Parquet"),
            ));
        }
        let tail = read_tail(io, path, file_size).await?;
        let needed = decode_parquet_footer_tail(path, file_size, &tail)?;
        let suffix = extend_tail(io, path, file_size, tail, needed).await?;
        let metadata = Arc::new(decode_parquet_metadata(path, file_size, &suffix)?);
        let mut reader = Self::from_metadata(path, file_size, metadata, projection, batch_size)?
            .with_parallelism(io.parallelism())?;
        // The suffix often holds column chunks too (all of a small file): keep it so that the
        // decoder does not ask for those bytes again.
        let suffix_start = file_size - suffix.len() as u64;
        if suffix.len() as u64 > needed {
            reader.push_fetched(suffix_start..file_size, suffix)?;
        }
        Ok(reader)
    }

    /// Hand bytes `range` of the file, already fetched, to the decoder: column chunks inside
    /// `range` are then not requested.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `range` and `bytes` differ in length.
    pub fn push_fetched(&mut self, range: std::ops::Range<u64>, bytes: Bytes) -> Result<()> {
        if range.end.checked_sub(range.start) != Some(bytes.len() as u64)
            || range.end > self.file_size
        {
            return Err(Error::invalid(format!(
                "{}: {} bytes pushed for range {range:?}",
                self.path,
                bytes.len()
            )));
        }
        for group in &mut self.groups {
            if let Some(decoder) = group.decoder.as_mut() {
                decoder
                    .push_range(range.clone(), bytes.clone())
                    .map_err(|e| Error::corrupt(&self.path, FORMAT, e.to_string()))?;
            }
        }
        Ok(())
    }

    /// Build the reader from already decoded metadata (no IO).
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the Arrow schema cannot be derived from the metadata.
    pub fn from_metadata(
        path: &str,
        file_size: u64,
        metadata: Arc<ParquetMetaData>,
        projection: Option<&[String]>,
        batch_size: usize,
    ) -> Result<Self> {
        let options = ArrowReaderOptions::new();
        let arrow_metadata =
            ArrowReaderMetadata::try_new(Arc::clone(&metadata), options).map_err(|e| {
                Error::corrupt(path, FORMAT, format!("cannot derive the Arrow schema: {e}"))
            })?;
        let file_schema = Arc::clone(arrow_metadata.schema());
        let projection = ResolvedProjection::new(&file_schema, projection);
        let mut reader = ParquetFileReader {
            path: path.to_string(),
            file_size,
            metadata,
            file_schema,
            projection,
            groups: Vec::new(),
            slots: Vec::new(),
            decode_ahead: false,
            chunk_batches: 1,
            batch_size,
            rows_returned: 0,
        };
        reader.build_groups(
            arrow_metadata,
            vec![reader.projection.roots.clone()],
            batch_size,
        )?;
        Ok(reader)
    }

    /// Decode in up to `parallelism` column groups (see `column_groups`), each group's
    /// batches decoded [`WORK_CHUNK_BYTES`] at a time as pieces of work (see
    /// [`Io::spawn_work`]) and up to two such chunks ahead of the reader. A file that makes
    /// one group (small, one column) and `parallelism` 1 keep a single decoder working
    /// inline, batch by batch. Call before any batch was read.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a decoder cannot be built.
    pub fn with_parallelism(mut self, parallelism: usize) -> Result<Self> {
        if parallelism <= 1 || self.rows_returned > 0 {
            return Ok(self);
        }
        let groups = column_groups(&self.metadata, &self.projection.roots, parallelism);
        if groups.len() < 2 {
            // A small file (or one column): handing its decoding to other threads costs more
            // than it gains; it stays inline.
            return Ok(self);
        }
        let arrow_metadata =
            ArrowReaderMetadata::try_new(Arc::clone(&self.metadata), ArrowReaderOptions::new())
                .map_err(|e| {
                    Error::corrupt(
                        &self.path,
                        FORMAT,
                        format!("cannot derive the Arrow schema: {e}"),
                    )
                })?;
        let batch_size = self.batch_size;
        self.build_groups(arrow_metadata, groups, batch_size)?;
        self.decode_ahead = true;
        self.chunk_batches = self.batches_per_chunk();
        Ok(self)
    }

    /// Batches of `batch_size` rows whose projected columns hold about [`WORK_CHUNK_BYTES`]
    /// uncompressed (from the footer's sizes over all row groups), at least 1.
    fn batches_per_chunk(&self) -> usize {
        let schema = self.metadata.file_metadata().schema_descr();
        let (mut bytes, mut rows) = (0u64, 0u64);
        for rg in self.metadata.row_groups() {
            rows = rows.saturating_add(u64::try_from(rg.num_rows()).unwrap_or(0));
            for (leaf, column) in rg.columns().iter().enumerate() {
                if leaf < schema.num_columns()
                    && self
                        .projection
                        .roots
                        .contains(&schema.get_column_root_idx(leaf))
                {
                    let size = u64::try_from(column.uncompressed_size()).unwrap_or(0);
                    bytes = bytes.saturating_add(size);
                }
            }
        }
        let per_batch = (bytes / rows.max(1))
            .max(1)
            .saturating_mul(self.batch_size.max(1) as u64);
        usize::try_from(WORK_CHUNK_BYTES / per_batch.max(1))
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// One decoder per group of root columns (each ascending, together `projection.roots`).
    fn build_groups(
        &mut self,
        arrow_metadata: ArrowReaderMetadata,
        groups: Vec<Vec<usize>>,
        batch_size: usize,
    ) -> Result<()> {
        let mut slots = vec![(0, 0); self.projection.roots.len()];
        let mut built = Vec::with_capacity(groups.len());
        for (g, roots) in groups.iter().enumerate() {
            for (i, root) in roots.iter().enumerate() {
                if let Some(slot) = self.projection.roots.iter().position(|r| r == root) {
                    slots[slot] = (g, i);
                }
            }
            let mask =
                ProjectionMask::roots(arrow_metadata.parquet_schema(), roots.iter().copied());
            let decoder = ParquetPushDecoderBuilder::new_with_metadata(arrow_metadata.clone())
                .with_projection(mask)
                .with_batch_size(batch_size.max(1))
                .build()
                .map_err(|e| {
                    Error::corrupt(&self.path, FORMAT, format!("cannot build the decoder: {e}"))
                })?;
            built.push(ColumnGroup {
                decoder: Some(decoder),
                pending: None,
                ready: std::collections::VecDeque::new(),
                needs: None,
                finished: false,
            });
        }
        self.groups = built;
        self.slots = slots;
        self.batch_size = batch_size;
        Ok(())
    }

    /// The row group holding the next row to return, for error messages.
    fn current_row_group(&self) -> String {
        let mut before = 0u64;
        for (i, rg) in self.metadata.row_groups().iter().enumerate() {
            before = before.saturating_add(u64::try_from(rg.num_rows()).unwrap_or(0));
            if self.rows_returned < before {
                return format!("row group {i}");
            }
        }
        "the last row group".to_string()
    }

    /// The next batch of projected columns, or `None` at the end of the file.
    ///
    /// # Errors
    /// [`Error::Io`] from the reads; [`Error::Corrupt`] naming the row group for pages that do
    /// not decode.
    pub async fn next_batch<T>(&mut self, io: &Io<T>) -> Result<Option<RecordBatch>> {
        loop {
            // Every group without a batch: start decoding (all of them before waiting for
            // any, so that they run at once), then take the results.
            for g in 0..self.groups.len() {
                if self.groups[g].ready.is_empty() {
                    let started = self.groups[g].start(io, self.chunk_batches, self.decode_ahead);
                    started.map_err(|e| self.decode_error(e))?;
                }
            }
            for g in 0..self.groups.len() {
                if self.groups[g].ready.is_empty() {
                    let collected = self.groups[g].collect().await;
                    collected.map_err(|e| self.decode_error(e))?;
                }
            }
            if self.groups.iter().any(|g| g.needs.is_some()) {
                self.fetch_needed(io).await?;
                continue;
            }
            if self
                .groups
                .iter()
                .any(|g| g.ready.is_empty() && !g.finished)
            {
                continue;
            }
            return self.assemble(io);
        }
    }

    /// Fetch the byte ranges the groups asked for in one round (ascending offsets) and push
    /// them to their decoders.
    async fn fetch_needed<T>(&mut self, io: &Io<T>) -> Result<()> {
        let wanted: Vec<(usize, Vec<std::ops::Range<u64>>)> = self
            .groups
            .iter_mut()
            .enumerate()
            .filter_map(|(g, group)| group.needs.take().map(|r| (g, r)))
            .collect();
        let mut all: Vec<(usize, std::ops::Range<u64>)> = wanted
            .iter()
            .flat_map(|(_, r)| r.iter().cloned())
            .enumerate()
            .collect();
        all.sort_by_key(|(_, r)| (r.start, r.end));
        for (_, r) in &all {
            check_range(
                &self.path,
                FORMAT,
                "requested range",
                r.start,
                r.end.saturating_sub(r.start),
                self.file_size,
            )?;
        }
        let sorted: Vec<std::ops::Range<u64>> = all.iter().map(|(_, r)| r.clone()).collect();
        let mut data: Vec<Option<Bytes>> = vec![None; all.len()];
        for ((i, _), bytes) in all.iter().zip(read_ranges(io, &self.path, &sorted).await?) {
            data[*i] = Some(bytes);
        }
        let mut data = data.into_iter().flatten();
        for (g, ranges) in wanted {
            let bytes: Vec<Bytes> = data.by_ref().take(ranges.len()).collect();
            if let Some(decoder) = self.groups[g].decoder.as_mut() {
                decoder
                    .push_ranges(ranges, bytes)
                    .map_err(|e| self.decode_error(e))?;
            }
        }
        Ok(())
    }

    /// Put the groups' next batches (all ready, or all finished) together into one batch of
    /// the projection, and start decoding ahead when the machine has parallel work.
    fn assemble<T>(&mut self, io: &Io<T>) -> Result<Option<RecordBatch>> {
        let batches: Vec<Option<RecordBatch>> = self
            .groups
            .iter_mut()
            .map(|g| g.ready.pop_front())
            .collect();
        if batches.iter().all(Option::is_none) {
            return Ok(None);
        }
        let mut rows = None;
        for b in &batches {
            let n = b.as_ref().map_or(0, RecordBatch::num_rows);
            if *rows.get_or_insert(n) != n {
                return Err(Error::corrupt(
                    &self.path,
                    FORMAT,
                    format!(
                        "{}: column chunks hold different numbers of rows",
                        self.current_row_group()
                    ),
                ));
            }
        }
        let rows = rows.unwrap_or(0);
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.slots.len());
        for &(g, i) in &self.slots {
            let column = batches
                .get(g)
                .and_then(Option::as_ref)
                .and_then(|b| b.columns().get(i));
            match column {
                Some(c) => columns.push(Arc::clone(c)),
                None => {
                    return Err(Error::corrupt(
                        &self.path,
                        FORMAT,
                        format!("decoder returned no column #{i} of group {g}"),
                    ));
                }
            }
        }
        self.rows_returned += rows as u64;
        if self.decode_ahead {
            for g in 0..self.groups.len() {
                let ahead = self.groups[g].run_ahead(io, self.chunk_batches);
                ahead.map_err(|e| self.decode_error(e))?;
            }
        }
        self.projection
            .apply_columns(&columns, rows, &self.path, FORMAT)
            .map(Some)
    }

    fn decode_error(&self, e: parquet::errors::ParquetError) -> Error {
        Error::corrupt(
            &self.path,
            FORMAT,
            format!("{}: {e}", self.current_row_group()),
        )
    }

    /// The file's Arrow schema (all columns).
    pub fn file_schema(&self) -> &SchemaRef {
        &self.file_schema
    }

    /// The schema of the returned batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.projection.schema
    }

    /// Rows in the file per its footer.
    pub fn row_count(&self) -> u64 {
        u64::try_from(self.metadata.file_metadata().num_rows()).unwrap_or(0)
    }

    /// The decoded footer.
    pub fn metadata(&self) -> &Arc<ParquetMetaData> {
        &self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, Int64Array};
    use arrow_schema::{DataType, Field, Schema};

    /// Column sizes 4, 2, 2, 2 MB (plain uncompressed Int64 / Int32 columns) in 2 row groups.
    /// (Uncompressed, so compressed and uncompressed sizes agree.)
    fn metadata() -> ParquetMetaData {
        let n = 500_000i64;
        let schema = Arc::new(Schema::new(vec![
            Field::new("big", DataType::Int64, false),
            Field::new("mid1", DataType::Int32, false),
            Field::new("mid2", DataType::Int32, false),
            Field::new("small", DataType::Int32, false),
        ]));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
                Arc::new(Int32Array::from_iter_values((0..n).map(|i| i as i32))),
                Arc::new(Int32Array::from_iter_values((0..n).map(|i| -i as i32))),
                Arc::new(Int32Array::from_iter_values((0..n).map(|i| (i % 7) as i32))),
            ],
        )
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(250_000))
            .set_compression(parquet::basic::Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_writer_version(parquet::file::properties::WriterVersion::PARQUET_1_0)
            .build();
        let mut buf = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        ParquetMetaDataReader::new()
            .parse_and_finish(&Bytes::from(buf))
            .unwrap()
    }

    #[test]
    fn column_groups_balance_uncompressed_bytes() {
        let m = metadata();
        // Inline: one group. Two, largest first onto the lightest group (ties: the first):
        // big | mid1, mid2 | small joins big.
        assert_eq!(column_groups(&m, &[0, 1, 2, 3], 1), vec![vec![0, 1, 2, 3]]);
        assert_eq!(
            column_groups(&m, &[0, 1, 2, 3], 2),
            vec![vec![0, 3], vec![1, 2]]
        );
        // Three: big, mid1 + small, mid2 (each group ascending, groups sorted).
        assert_eq!(
            column_groups(&m, &[0, 1, 2, 3], 3),
            vec![vec![0], vec![1, 3], vec![2]]
        );
        // Never more groups than roots, never a group under MIN_COLUMN_GROUP_BYTES.
        assert_eq!(column_groups(&m, &[1, 3], 8), vec![vec![1], vec![3]]);
        assert_eq!(column_groups(&m, &[3], 8), vec![vec![3]]);
        assert_eq!(column_groups(&m, &[], 8), vec![Vec::<usize>::new()]);
    }
}
