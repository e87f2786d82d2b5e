//! Orc data files to Arrow (not implemented yet).

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::{Error, Result};
use crate::io::Io;

/// Streaming reader of one Orc data file.
#[derive(Debug)]
pub struct OrcFileReader {
    schema: SchemaRef,
}

impl OrcFileReader {
    /// Open the file.
    ///
    /// # Errors
    /// Always unsupported for now.
    pub async fn open<T>(
        _io: &Io<T>,
        path: &str,
        _file_size: u64,
        _projection: Option<&[String]>,
        _batch_size: usize,
    ) -> Result<Self> {
        Err(Error::unsupported(format!("reading Orc data file {path}")))
    }

    /// The next batch.
    ///
    /// # Errors
    /// Never.
    pub async fn next_batch<T>(&mut self, _io: &Io<T>) -> Result<Option<RecordBatch>> {
        Ok(None)
    }

    /// The file's schema.
    pub fn file_schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The output schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows in the file.
    pub fn row_count(&self) -> u64 {
        0
    }
}
