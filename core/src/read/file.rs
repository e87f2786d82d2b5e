//! Reading one data file into the read schema: field-id mapping across schema versions,
//! casts, null columns for fields the file lacks, deletion vectors and row positions.
//!
//! Source: Java `org.apache.paimon.utils.FormatReaderMapping`,
//! `org.apache.paimon.schema.SchemaEvolutionUtil`, `ApplyDeletionVectorReader`.

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{Field, Schema, SchemaRef};

use crate::error::{Error, Result};
use crate::format::data_file::{DataFileReader, FileFormat};
use crate::format::deletion_vector::DeletionVector;
use crate::io::Io;
use crate::scan::DeletionFile;
use crate::spec::{DataField, DataFileMeta, DeletionVectorMeta, TableSchema};
use crate::types::{cast_column_to, paimon_to_arrow_field};

/// Name of the sequence number column of key-value files.
pub const SEQUENCE_NUMBER: &str = "_SEQUENCE_NUMBER";
/// Name of the row kind column of key-value files.
pub const VALUE_KIND: &str = "_VALUE_KIND";
/// Name of the row id system column (row tracking).
pub const ROW_ID: &str = "_ROW_ID";
/// Name of the [`FileColumn::Position`] column.
pub const POSITION: &str = "_POSITION";

/// A column of a file read: a table field (by id, resolved against the file's schema) or a
/// physical system column read by name.
#[derive(Debug, Clone)]
pub enum FileColumn {
    /// A table field of the read schema.
    Field(DataField),
    /// A physical column of key-value files, read by its name, kept as stored
    /// (`_SEQUENCE_NUMBER` Int64, `_VALUE_KIND` Int8).
    System(&'static str),
    /// A row-tracking column (`_ROW_ID`, `_SEQUENCE_NUMBER`) a compaction of a row-tracking
    /// table wrote into the file: read by its name (Int64, nullable) when the file's
    /// `write_cols` list it, else all null (the reader then derives it from the file's
    /// metadata).
    ///
    /// Source: Java `RawFileSplitRead` (row-tracking files read with
    /// `SpecialFields.rowTypeWithRowTracking(.., true, true)`).
    Tracking(&'static str),
    /// The position of the row in the file (Int64), computed, not stored.
    Position,
}

/// How one file is read: the columns wanted, in output order, and the batch schema.
#[derive(Debug, Clone)]
pub struct FileReadSpec {
    /// Output columns, in order.
    pub columns: Vec<FileColumn>,
    /// Arrow schema of the batches produced.
    pub schema: SchemaRef,
}

impl FileReadSpec {
    /// A spec producing `columns`; the Arrow types of fields follow the Paimon→Arrow mapping
    /// of the read schema.
    ///
    /// Errors: a field type without an Arrow mapping.
    pub fn try_new(columns: Vec<FileColumn>) -> Result<Self> {
        let fields = columns
            .iter()
            .map(|c| {
                Ok(match c {
                    FileColumn::Field(f) => paimon_to_arrow_field(f)?,
                    FileColumn::System(name) if *name == VALUE_KIND => {
                        Field::new(*name, arrow_schema::DataType::Int8, false)
                    }
                    FileColumn::System(name) => {
                        Field::new(*name, arrow_schema::DataType::Int64, false)
                    }
                    FileColumn::Tracking(name) => {
                        Field::new(*name, arrow_schema::DataType::Int64, true)
                    }
                    FileColumn::Position => {
                        Field::new(POSITION, arrow_schema::DataType::Int64, false)
                    }
                })
            })
            .collect::<Result<Vec<Field>>>()?;
        Ok(FileReadSpec {
            columns,
            schema: Arc::new(Schema::new(fields)),
        })
    }
}

/// Where each output column comes from in the file.
#[derive(Debug, Clone)]
enum Source {
    /// Index into the projected file batch.
    Column(usize),
    /// Absent from the file: nulls.
    Null,
    /// Row position.
    Position,
}

/// A streaming reader of one data file in a [`FileReadSpec`] layout.
pub struct FileRead {
    path: String,
    reader: DataFileReader,
    sources: Vec<Source>,
    schema: SchemaRef,
    deletion_vector: Option<DeletionVector>,
    /// Position in the file of the next row the decoder returns.
    next_position: u64,
    /// [`FileRead::track_positions`]: the file positions of the rows of the last batch.
    last_positions: Option<ScalarBuffer<i64>>,
}

impl std::fmt::Debug for FileRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileRead")
            .field("path", &self.path)
            .field("next_position", &self.next_position)
            .finish()
    }
}

/// The name a read field has in a file written with `file_schema` and `write_cols`, with its
/// type there; `None` when the file does not hold it (added later, or not written).
pub fn file_field<'a>(
    field: &DataField,
    file_schema: &'a TableSchema,
    write_cols: Option<&[String]>,
) -> Option<&'a DataField> {
    let f = file_schema.field_by_id(field.id)?;
    match write_cols {
        Some(cols) if !cols.iter().any(|c| c == &f.name) => None,
        _ => Some(f),
    }
}

impl FileRead {
    /// Open `file` at `path` (relative to the table root), written with `file_schema`, to
    /// produce `spec`. The deletion vector, if any, is read in the same round as the footer.
    ///
    /// Errors: IO failures, corrupt footers, a deletion vector that does not decode, a column
    /// whose stored type cannot be cast to the read type.
    pub async fn open<T>(
        io: &Io<T>,
        path: &str,
        file: &DataFileMeta,
        file_schema: &TableSchema,
        spec: &FileReadSpec,
        deletion_file: Option<&DeletionFile>,
        batch_size: usize,
    ) -> Result<FileRead> {
        let format = FileFormat::from_name(&file.file_format()).map_err(|_| {
            Error::unsupported(format!(
                "data file {path}: format '{}' is not supported (parquet, orc, avro)",
                file.file_format()
            ))
        })?;
        let write_cols = file.write_cols.as_deref();
        let mut projection: Vec<String> = Vec::new();
        let mut sources = Vec::with_capacity(spec.columns.len());
        for c in &spec.columns {
            let name = match c {
                FileColumn::Field(f) => {
                    file_field(f, file_schema, write_cols).map(|f| f.name.clone())
                }
                FileColumn::System(n) => Some((*n).to_string()),
                FileColumn::Tracking(n) => write_cols
                    .is_some_and(|cols| cols.iter().any(|c| c == n))
                    .then(|| (*n).to_string()),
                FileColumn::Position => {
                    sources.push(Source::Position);
                    continue;
                }
            };
            match name {
                Some(n) => {
                    let i = match projection.iter().position(|p| *p == n) {
                        Some(i) => i,
                        None => {
                            projection.push(n);
                            projection.len() - 1
                        }
                    };
                    sources.push(Source::Column(i));
                }
                None => sources.push(Source::Null),
            }
        }
        let file_size = u64::try_from(file.file_size).map_err(|_| {
            Error::corrupt(
                path,
                "manifest",
                format!("negative file size {}", file.file_size),
            )
        })?;
        let open = DataFileReader::open(io, path, file_size, format, Some(&projection), batch_size);
        let (reader, deletion_vector) = match deletion_file {
            None => (open.await?, None),
            Some(dv) => {
                let (reader, dv) = futures_util::future::try_join(
                    open,
                    read_deletion_vector(io, dv, &file.file_name),
                )
                .await?;
                (reader, Some(dv))
            }
        };
        Ok(FileRead {
            path: path.to_string(),
            reader,
            sources,
            schema: Arc::clone(&spec.schema),
            deletion_vector,
            next_position: 0,
            last_positions: None,
        })
    }

    /// Keep the file position (0-based row index in the file, counting rows a deletion
    /// vector removes) of each row of each batch, for [`FileRead::last_positions`].
    pub fn track_positions(mut self) -> Self {
        self.last_positions = Some(ScalarBuffer::from(Vec::<i64>::new()));
        self
    }

    /// With [`FileRead::track_positions`]: the file position of each row of the batch the
    /// last [`FileRead::next_batch`] returned (same length); `None` without tracking.
    pub fn last_positions(&self) -> Option<&ScalarBuffer<i64>> {
        self.last_positions.as_ref()
    }

    /// The next batch in the spec's layout with deleted rows removed (never empty), or `None`
    /// at the end of the file.
    pub async fn next_batch<T>(&mut self, io: &Io<T>) -> Result<Option<RecordBatch>> {
        loop {
            let Some(batch) = self.reader.next_batch(io).await? else {
                return Ok(None);
            };
            let rows = batch.num_rows();
            let start = self.next_position;
            self.next_position += rows as u64;
            let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.sources.len());
            for (source, target) in self.sources.iter().zip(self.schema.fields()) {
                columns.push(match source {
                    Source::Column(i) => cast_column_to(batch.column(*i), target, &self.path)?,
                    Source::Null => {
                        if !target.is_nullable() {
                            return Err(Error::corrupt(
                                &self.path,
                                "data-file",
                                format!("column {} is NOT NULL in the read schema but absent from the file", target.name()),
                            ));
                        }
                        arrow_array::new_null_array(target.data_type(), rows)
                    }
                    Source::Position => Arc::new(Int64Array::from_iter_values(
                        (start..start + rows as u64).map(|p| p as i64),
                    )),
                });
            }
            let out = RecordBatch::try_new_with_options(
                Arc::clone(&self.schema),
                columns,
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )
            .map_err(|e| Error::arrow(format!("reading {}", self.path), e))?;
            let out = match &self.deletion_vector {
                Some(dv) => {
                    let keep: BooleanArray = (start..start + rows as u64)
                        .map(|p| Some(!dv.is_deleted(p)))
                        .collect();
                    if self.last_positions.is_some() {
                        self.last_positions = Some(
                            (start..start + rows as u64)
                                .filter(|p| !dv.is_deleted(*p))
                                .map(|p| p as i64)
                                .collect(),
                        );
                    }
                    arrow_select::filter::filter_record_batch(&out, &keep)
                        .map_err(|e| Error::arrow(format!("deletion vector of {}", self.path), e))?
                }
                None => {
                    if self.last_positions.is_some() {
                        self.last_positions =
                            Some((start as i64..(start + rows as u64) as i64).collect());
                    }
                    out
                }
            };
            if out.num_rows() > 0 {
                return Ok(Some(out));
            }
        }
    }
}

/// The index-file entry of data file `data_file_name`'s deletion vector `dv`.
///
/// # Errors
/// [`Error::Corrupt`] naming the index file when the offset or length exceeds `i32`.
pub(crate) fn deletion_vector_meta(
    dv: &DeletionFile,
    data_file_name: &str,
) -> Result<DeletionVectorMeta> {
    let out_of_range = |what: &str, v: i64| {
        Error::corrupt(
            &dv.path,
            "deletion-vector",
            format!("{what} {v} out of range"),
        )
    };
    Ok(DeletionVectorMeta {
        data_file_name: data_file_name.to_string(),
        offset: i32::try_from(dv.offset).map_err(|_| out_of_range("offset", dv.offset))?,
        length: i32::try_from(dv.length).map_err(|_| out_of_range("length", dv.length))?,
        cardinality: dv.cardinality,
    })
}

/// Read and decode the deletion vector of data file `data_file_name` from its index file.
pub async fn read_deletion_vector<T>(
    io: &Io<T>,
    dv: &DeletionFile,
    data_file_name: &str,
) -> Result<DeletionVector> {
    let meta = deletion_vector_meta(dv, data_file_name)?;
    let size = u64::try_from(dv.index_file_size).unwrap_or(0);
    let range = crate::format::deletion_vector::dv_entry_range(&meta, size);
    let bytes = io.read_range(&dv.path, range).await?;
    let vector = DeletionVector::decode_entry(&bytes, meta.length, &dv.path, false)?;
    if let Some(c) = dv.cardinality
        && u64::try_from(c).ok() != Some(vector.cardinality())
    {
        return Err(Error::corrupt(
            &dv.path,
            "deletion-vector",
            format!(
                "deletion vector of {data_file_name} has {} positions, the index manifest says {c}",
                vector.cardinality()
            ),
        ));
    }
    Ok(vector)
}
