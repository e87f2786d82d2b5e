//! The common front of the data-file readers: one [`DataFileReader`] over Parquet, ORC and Avro
//! data files, fed by byte ranges fetched through [`Io`].
//!
//! # Driving order
//!
//! 1. [`DataFileReader::open`]: reads the file's footer (Parquet, ORC: one suffix range read of
//!    the last [`FOOTER_PREFETCH_BYTES`], plus one more range read when the footer is larger;
//!    Avro: the first window of the file holding the header) and resolves the projection.
//! 2. [`DataFileReader::next_batch`] until it returns `Ok(None)`: each call decodes the next
//!    batch of at most `batch_size` rows. When the next row group (Parquet), stripe (ORC) or
//!    block window (Avro) is needed, its byte ranges are read in **one round** (concurrent
//!    `read_range` requests); only projected column chunks are read for Parquet. Memory is
//!    bounded by one row group / stripe / window plus one batch.
//!
//! Output batches carry the file's own Arrow types (see [`DataFileReader::schema`]); the caller
//! maps file column names to field ids and converts with [`crate::types::cast_batch_to`].
//!
//! Projection is by **file column name** (pypaimon files carry no Parquet field ids): the output
//! columns are the requested names in the requested order; names the file does not have are
//! left out (the caller fills them with NULLs or reports them). `None` reads every column in
//! file order.
//!
//! Source: Java `org.apache.paimon.format.FormatReaderFactory` and the per-format readers in
//! `paimon-format` (`ParquetReaderFactory`, `OrcReaderFactory`, `AvroBulkFormat`).

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::avro_data::AvroFileReader;
use crate::format::orc::OrcFileReader;
use crate::format::parquet::ParquetFileReader;
use crate::io::{Io, Machine, MemoryStore};

pub use crate::format::reading::FOOTER_PREFETCH_BYTES;

/// Rows per decoded batch when the caller passes `0`: 8192, the batch size of Java Paimon's
/// readers (`read.batch-size` default 1024 is for vectorized ORC; pyarrow and arrow-rs use
/// larger batches) and of arrow-rs' Parquet and ORC readers.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// The `file.format` of a data file.
///
/// Source: Java `org.apache.paimon.format.FileFormat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    /// Apache Parquet.
    Parquet,
    /// Apache ORC.
    Orc,
    /// Apache Avro object container file.
    Avro,
}

impl FileFormat {
    /// Parse a `file.format` option value (`parquet`, `orc`, `avro`; case-insensitive).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for other formats (`csv`, `json`, `lance`...).
    pub fn from_name(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "parquet" => Ok(FileFormat::Parquet),
            "orc" => Ok(FileFormat::Orc),
            "avro" => Ok(FileFormat::Avro),
            other => Err(Error::unsupported(format!("data file format {other:?}"))),
        }
    }

    /// The format of a data file from its extension (`.parquet`, `.orc`, `.avro`), as Paimon
    /// names data files; `None` for other extensions.
    pub fn from_path(path: &str) -> Option<Self> {
        let ext = path.rsplit_once('.')?.1;
        Self::from_name(ext).ok()
    }

    /// The lowercase name (`parquet`, `orc`, `avro`).
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Parquet => "parquet",
            FileFormat::Orc => "orc",
            FileFormat::Avro => "avro",
        }
    }
}

enum Inner {
    Parquet(Box<ParquetFileReader>),
    Orc(Box<OrcFileReader>),
    Avro(Box<AvroFileReader>),
}

/// A reader of one data file, streaming Arrow record batches of the file's own types.
///
/// See the module docs for the rounds it makes. Errors from bad bytes are
/// [`Error::Corrupt`] naming the file (and the row group / stripe / block and column where
/// known); a file shorter than `file_size` surfaces as the host's range error.
pub struct DataFileReader {
    path: String,
    inner: Inner,
}

impl std::fmt::Debug for DataFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataFileReader")
            .field("path", &self.path)
            .field("format", &self.format())
            .finish()
    }
}

impl DataFileReader {
    /// Open the data file `path` of `file_size` bytes (from `DataFileMeta.file_size`): read its
    /// footer / header and resolve `projection` (file column names, `None` for all).
    ///
    /// `batch_size` is the maximum rows per batch; `0` means [`DEFAULT_BATCH_SIZE`].
    ///
    /// # Errors
    /// [`Error::Io`] when a read fails (e.g. the file is missing), [`Error::Corrupt`] when the
    /// footer or header is not valid.
    pub async fn open<T>(
        io: &Io<T>,
        path: &str,
        file_size: u64,
        format: FileFormat,
        projection: Option<&[String]>,
        batch_size: usize,
    ) -> Result<Self> {
        let batch_size = if batch_size == 0 {
            DEFAULT_BATCH_SIZE
        } else {
            batch_size
        };
        let inner = match format {
            FileFormat::Parquet => Inner::Parquet(Box::new(
                ParquetFileReader::open(io, path, file_size, projection, batch_size).await?,
            )),
            FileFormat::Orc => Inner::Orc(Box::new(
                OrcFileReader::open(io, path, file_size, projection, batch_size).await?,
            )),
            FileFormat::Avro => Inner::Avro(Box::new(
                AvroFileReader::open(io, path, file_size, projection, batch_size).await?,
            )),
        };
        Ok(DataFileReader {
            path: path.to_string(),
            inner,
        })
    }

    /// The next batch (at most `batch_size` rows, never empty), or `Ok(None)` at the end.
    ///
    /// # Errors
    /// As [`DataFileReader::open`]; after an error the reader must not be used again.
    pub async fn next_batch<T>(&mut self, io: &Io<T>) -> Result<Option<RecordBatch>> {
        loop {
            let batch = match &mut self.inner {
                Inner::Parquet(r) => r.next_batch(io).await?,
                Inner::Orc(r) => r.next_batch(io).await?,
                Inner::Avro(r) => r.next_batch(io).await?,
            };
            match batch {
                Some(b) if b.num_rows() == 0 => continue,
                other => return Ok(other),
            }
        }
    }

    /// The file's own Arrow schema: every top-level column, in file order, with the types the
    /// decoder produces (before [`crate::types::cast_batch_to`]).
    pub fn file_schema(&self) -> &SchemaRef {
        match &self.inner {
            Inner::Parquet(r) => r.file_schema(),
            Inner::Orc(r) => r.file_schema(),
            Inner::Avro(r) => r.file_schema(),
        }
    }

    /// The schema of the batches returned by [`DataFileReader::next_batch`]: the projected
    /// columns of [`DataFileReader::file_schema`] in projection order.
    pub fn schema(&self) -> &SchemaRef {
        match &self.inner {
            Inner::Parquet(r) => r.schema(),
            Inner::Orc(r) => r.schema(),
            Inner::Avro(r) => r.schema(),
        }
    }

    /// Rows in the file according to its footer (Avro: unknown until read, `None`).
    pub fn row_count(&self) -> Option<u64> {
        match &self.inner {
            Inner::Parquet(r) => Some(r.row_count()),
            Inner::Orc(r) => Some(r.row_count()),
            Inner::Avro(_) => None,
        }
    }

    /// The file's format.
    pub fn format(&self) -> FileFormat {
        match &self.inner {
            Inner::Parquet(_) => FileFormat::Parquet,
            Inner::Orc(_) => FileFormat::Orc,
            Inner::Avro(_) => FileFormat::Avro,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// A whole data file decoded in memory: its schema and its batches.
#[derive(Debug, Clone)]
pub struct DecodedDataFile {
    /// The file's own schema, see [`DataFileReader::file_schema`].
    pub file_schema: SchemaRef,
    /// The output schema, see [`DataFileReader::schema`].
    pub schema: SchemaRef,
    /// Every batch, in file order.
    pub batches: Vec<RecordBatch>,
}

/// Decode a data file held in memory (tests, tools, the wasm in-memory source), through the
/// same code path as [`DataFileReader`].
///
/// `path` is only used in error messages.
///
/// # Errors
/// As [`DataFileReader::open`] and [`DataFileReader::next_batch`].
pub fn decode_data_file(
    bytes: Bytes,
    path: &str,
    format: FileFormat,
    projection: Option<&[String]>,
    batch_size: usize,
) -> Result<DecodedDataFile> {
    let mut store = MemoryStore::new();
    let file_size = bytes.len() as u64;
    store.objects.insert(path.to_string(), bytes);
    let path = path.to_string();
    let projection = projection.map(<[String]>::to_vec);
    let machine = Machine::once(
        "decode_data_file",
        move |io: Io<DecodedDataFile>| async move {
            let mut reader = DataFileReader::open(
                &io,
                &path,
                file_size,
                format,
                projection.as_deref(),
                batch_size,
            )
            .await?;
            let mut batches = Vec::new();
            while let Some(batch) = reader.next_batch(&io).await? {
                batches.push(batch);
            }
            Ok(DecodedDataFile {
                file_schema: Arc::clone(reader.file_schema()),
                schema: Arc::clone(reader.schema()),
                batches,
            })
        },
    );
    store
        .run(machine)?
        .pop()
        .ok_or_else(|| Error::invalid("decode_data_file produced no result"))
}
