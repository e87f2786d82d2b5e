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

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use parquet::DecodeResult;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::push_decoder::{ParquetPushDecoder, ParquetPushDecoderBuilder};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

use crate::error::{Error, Result};
use crate::format::data_file::{
    ResolvedProjection, check_range, extend_tail, read_ranges, read_tail,
};
use crate::io::Io;

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
    decoder: ParquetPushDecoder,
    rows_returned: u64,
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
        let mut reader = Self::from_metadata(path, file_size, metadata, projection, batch_size)?;
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
        self.decoder
            .push_range(range, bytes)
            .map_err(|e| Error::corrupt(&self.path, FORMAT, e.to_string()))
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
        let mask = ProjectionMask::roots(
            arrow_metadata.parquet_schema(),
            projection.roots.iter().copied(),
        );
        let decoder = ParquetPushDecoderBuilder::new_with_metadata(arrow_metadata)
            .with_projection(mask)
            .with_batch_size(batch_size.max(1))
            .build()
            .map_err(|e| Error::corrupt(path, FORMAT, format!("cannot build the decoder: {e}")))?;
        Ok(ParquetFileReader {
            path: path.to_string(),
            file_size,
            metadata,
            file_schema,
            projection,
            decoder,
            rows_returned: 0,
        })
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
            let step = self.decoder.try_decode().map_err(|e| {
                Error::corrupt(
                    &self.path,
                    FORMAT,
                    format!("{}: {e}", self.current_row_group()),
                )
            })?;
            match step {
                DecodeResult::NeedsData(ranges) => {
                    for r in &ranges {
                        check_range(
                            &self.path,
                            FORMAT,
                            "requested range",
                            r.start,
                            r.end.saturating_sub(r.start),
                            self.file_size,
                        )?;
                    }
                    let data: Vec<Bytes> = read_ranges(io, &self.path, &ranges).await?;
                    self.decoder.push_ranges(ranges, data).map_err(|e| {
                        Error::corrupt(
                            &self.path,
                            FORMAT,
                            format!("{}: {e}", self.current_row_group()),
                        )
                    })?;
                }
                DecodeResult::Data(batch) => {
                    self.rows_returned += batch.num_rows() as u64;
                    return self.projection.apply(&batch, &self.path, FORMAT).map(Some);
                }
                DecodeResult::Finished => return Ok(None),
            }
        }
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
