//! Reading one data file into the read schema: field-id mapping across schema versions,
//! casts, null columns for fields the file lacks, deletion vectors and row positions.
//!
//! Source: Java `org.apache.paimon.utils.FormatReaderMapping`,
//! `org.apache.paimon.schema.SchemaEvolutionUtil`, `ApplyDeletionVectorReader`.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{Field, Schema, SchemaRef};

use crate::error::{Error, Result};
use crate::format::avro_map_order;
use crate::format::data_file::{DataFileReader, FileFormat};
use crate::format::deletion_vector::DeletionVector;
use crate::format::shared_map::SharedMapLayout;
use crate::format::variant;
use crate::io::Io;
use crate::scan::DeletionFile;
use crate::spec::special_fields::VALUE_KIND;
use crate::spec::{DataField, DataFileMeta, DataType, DeletionVectorMeta, TableSchema, TypeKind};
use crate::types::cast::evolve_column;
use crate::types::{cast_column_to, paimon_to_arrow_field};

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
    /// Index into the projected file batch of a field whose type changed since the file was
    /// written: the type in the file, the read type.
    Evolved(usize, DataType, DataType),
    /// Absent from the file: nulls.
    Null,
    /// Row position.
    Position,
}

/// A streaming reader of one data file in a [`FileReadSpec`] layout.
pub struct FileRead {
    path: String,
    reader: DataFileReader,
    /// Per decoded column, the physical layout to undo first (none for most columns).
    layouts: Vec<Option<Layout>>,
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
        // The type in the file of each projected table field (physical layouts are undone
        // by that type).
        let mut projected_types: Vec<Option<DataType>> = Vec::new();
        let mut sources = Vec::with_capacity(spec.columns.len());
        for c in &spec.columns {
            let mut evolved = None;
            let mut file_type = None;
            let name = match c {
                FileColumn::Field(f) => file_field(f, file_schema, write_cols).map(|ff| {
                    if ff.data_type.kind != f.data_type.kind {
                        evolved = Some((ff.data_type.clone(), f.data_type.clone()));
                    }
                    file_type = Some(ff.data_type.clone());
                    ff.name.clone()
                }),
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
                            projected_types.push(file_type);
                            projection.len() - 1
                        }
                    };
                    sources.push(match evolved {
                        Some((from, to)) => Source::Evolved(i, from, to),
                        None => Source::Column(i),
                    });
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
        let layouts = physical_layouts(reader.schema(), &projected_types, format, path)?;
        Ok(FileRead {
            path: path.to_string(),
            reader,
            layouts,
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
            let batch = self.undo_layouts(batch)?;
            let rows = batch.num_rows();
            let start = self.next_position;
            self.next_position += rows as u64;
            let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.sources.len());
            for (source, target) in self.sources.iter().zip(self.schema.fields()) {
                columns.push(match source {
                    Source::Column(i) => cast_column_to(batch.column(*i), target, &self.path)?,
                    Source::Evolved(i, from, to) => {
                        evolve_column(batch.column(*i), from, to, target, &self.path)?
                    }
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

/// A physical layout of a logical column in a data file, undone right after decoding.
#[derive(Debug, Clone)]
enum Layout {
    /// A MAP stored with `map.storage-layout = shared-shredding`.
    SharedMap(SharedMapLayout),
    /// A type holding VARIANT values, some of which may be shredded.
    Variants(DataType),
    /// A type holding maps read from Avro, whose entries Java returns in its hash map's order
    /// ([`avro_map_order`]).
    AvroMaps(DataType),
    /// A type holding `CHAR(n)` values read from ORC, right-trimmed as Java's ORC reader does
    /// whatever ORC type the writer chose ([`crate::format::orc::trim_chars_of_table_type`]).
    OrcChars(DataType),
}

/// The layout of each decoded column of `schema` (the file's projected columns), given the
/// type each has in the file's table schema (`None`: a system column).
fn physical_layouts(
    schema: &SchemaRef,
    file_types: &[Option<DataType>],
    format: FileFormat,
    path: &str,
) -> Result<Vec<Option<Layout>>> {
    schema
        .fields()
        .iter()
        .zip(file_types)
        .map(|(field, ty)| {
            let Some(ty) = ty else {
                return Ok(None);
            };
            if let Some(l) = SharedMapLayout::from_field(field, path)? {
                return Ok(Some(Layout::SharedMap(l)));
            }
            if format == FileFormat::Avro && avro_map_order::reorders(ty) {
                return Ok(Some(Layout::AvroMaps(ty.clone())));
            }
            if format == FileFormat::Orc && crate::format::orc::table_type_holds_char(ty) {
                return Ok(Some(Layout::OrcChars(ty.clone())));
            }
            Ok(holds_variant(ty).then(|| Layout::Variants(ty.clone())))
        })
        .collect()
}

fn holds_variant(t: &DataType) -> bool {
    match &t.kind {
        TypeKind::Variant => true,
        TypeKind::Array(e) | TypeKind::Multiset(e) => holds_variant(e),
        TypeKind::Vector { element, .. } => holds_variant(element),
        TypeKind::Map(k, v) => holds_variant(k) || holds_variant(v),
        TypeKind::Row(fields) => fields.iter().any(|f| holds_variant(&f.data_type)),
        _ => false,
    }
}

/// `array` (decoded with the file's physical types for `t`) with every shredded VARIANT
/// inside it rebuilt.
fn rebuild_variants(array: &ArrayRef, t: &DataType, path: &str, name: &str) -> Result<ArrayRef> {
    use arrow_array::cast::AsArray;
    let rebuilt = |a: &ArrayRef, t: &DataType| rebuild_variants(a, t, path, name);
    let err =
        |e: arrow_schema::ArrowError| Error::arrow(format!("reading {path}: column {name}"), e);
    Ok(match (&t.kind, array.data_type()) {
        (TypeKind::Variant, dt) if variant::is_shredded(dt) => {
            variant::rebuild_column(array, path, name)?
        }
        (TypeKind::Row(fields), arrow_schema::DataType::Struct(arrow_fields)) => {
            let s = array.as_struct();
            let mut new_fields = Vec::with_capacity(arrow_fields.len());
            let mut columns = Vec::with_capacity(arrow_fields.len());
            for (af, c) in arrow_fields.iter().zip(s.columns()) {
                let c = match fields.iter().find(|f| &f.name == af.name()) {
                    Some(f) if holds_variant(&f.data_type) => rebuilt(c, &f.data_type)?,
                    _ => Arc::clone(c),
                };
                new_fields.push(Arc::new(
                    af.as_ref().clone().with_data_type(c.data_type().clone()),
                ));
                columns.push(c);
            }
            Arc::new(
                arrow_array::StructArray::try_new(new_fields.into(), columns, s.nulls().cloned())
                    .map_err(err)?,
            )
        }
        (TypeKind::Array(e), arrow_schema::DataType::List(item)) => {
            let l = array.as_list::<i32>();
            let values = rebuilt(l.values(), e)?;
            let item = Arc::new(
                item.as_ref()
                    .clone()
                    .with_data_type(values.data_type().clone()),
            );
            Arc::new(
                arrow_array::ListArray::try_new(
                    item,
                    l.offsets().clone(),
                    values,
                    l.nulls().cloned(),
                )
                .map_err(err)?,
            )
        }
        (TypeKind::Map(_, v), arrow_schema::DataType::Map(entries, sorted)) => {
            let m = array.as_map();
            let values = rebuilt(m.values(), v)?;
            let arrow_schema::DataType::Struct(kv) = entries.data_type() else {
                return Ok(Arc::clone(array));
            };
            let kv: arrow_schema::Fields = vec![
                Arc::clone(&kv[0]),
                Arc::new(
                    kv[1]
                        .as_ref()
                        .clone()
                        .with_data_type(values.data_type().clone()),
                ),
            ]
            .into();
            let entries_struct = arrow_array::StructArray::try_new(
                kv.clone(),
                vec![Arc::clone(m.keys()), values],
                None,
            )
            .map_err(err)?;
            let entries = Arc::new(
                entries
                    .as_ref()
                    .clone()
                    .with_data_type(arrow_schema::DataType::Struct(kv)),
            );
            Arc::new(
                arrow_array::MapArray::try_new(
                    entries,
                    m.offsets().clone(),
                    entries_struct,
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(err)?,
            )
        }
        _ => Arc::clone(array),
    })
}

impl FileRead {
    /// `batch` with the physical layouts of its columns undone (the schema follows).
    fn undo_layouts(&self, batch: RecordBatch) -> Result<RecordBatch> {
        if self.layouts.iter().all(Option::is_none) {
            return Ok(batch);
        }
        let schema = batch.schema();
        let mut fields = Vec::with_capacity(batch.num_columns());
        let mut columns = Vec::with_capacity(batch.num_columns());
        for (i, (field, column)) in schema.fields().iter().zip(batch.columns()).enumerate() {
            let column = match self.layouts.get(i).and_then(Option::as_ref) {
                None => Arc::clone(column),
                Some(Layout::SharedMap(l)) => l.assemble(column, &self.path, field.name())?,
                Some(Layout::Variants(t)) => rebuild_variants(column, t, &self.path, field.name())?,
                Some(Layout::AvroMaps(t)) => {
                    avro_map_order::java_entry_order(column, t).map_err(|e| {
                        Error::arrow(format!("reading {}: column {}", self.path, field.name()), e)
                    })?
                }
                Some(Layout::OrcChars(t)) => {
                    crate::format::orc::trim_chars_of_table_type(column, t).map_err(|e| {
                        Error::arrow(format!("reading {}: column {}", self.path, field.name()), e)
                    })?
                }
            };
            fields.push(Field::new(
                field.name(),
                column.data_type().clone(),
                field.is_nullable(),
            ));
            columns.push(column);
        }
        RecordBatch::try_new_with_options(
            Arc::new(Schema::new(fields)),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )
        .map_err(|e| Error::arrow(format!("reading {}", self.path), e))
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

#[cfg(test)]
mod tests;
