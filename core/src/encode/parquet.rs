//! Parquet data files as Java Paimon writes them.
//!
//! Schema: built here from the Paimon fields (not derived from Arrow), as Java's
//! `ParquetSchemaConverter` builds it: message `paimon_schema`, field ids on every element,
//! 3-level lists `list`/`element`, maps `key_value`/`key`/`value`, DECIMAL(1..9) on `int32`,
//! TIMESTAMP/TIMESTAMP_LTZ with precision > 6 as `int96` (see the [parent module](super) for
//! the whole table). No key-value metadata in the footer (Java writes none: no `ARROW:schema`).
//!
//! Encoding: the parquet crate's Arrow column writers (`ArrowRowGroupWriterFactory`,
//! `compute_leaves`), one row group at a time; `int96` columns, which those writers cannot
//! encode, go through the crate's typed `Int96` column writer with definition levels computed
//! here (so an `int96` timestamp inside an ARRAY or MAP is unsupported; inside ROWs it works).
//! Values are written as Java's `ParquetRowDataWriter` does: TIMESTAMP(0) as milliseconds, INT96
//! as (nanos of day, Julian day) little-endian from the epoch milliseconds split with Java's
//! truncating division.
//!
//! Options (Java `RowDataParquetBuilder` / `ParquetFileFormat`, parquet-mr defaults):
//!
//! | option | default | effect |
//! |---|---|---|
//! | `file.compression` (or the explicit compression) | `zstd` | codec; `parquet.compression` wins; `none`/`uncompressed`, `snappy`, `gzip`, `lz4` (Hadoop framing), `lz4_raw`, `zstd`, `brotli` (`lzo`: unsupported) |
//! | `parquet.compression.codec.zstd.level`, else `file.compression.zstd-level` | 1 | zstd level (1..=22) |
//! | `file.block-size`, else `parquet.block.size` | 128 MiB | row group size: a row group is closed once its estimated encoded size reaches it |
//! | `parquet.page.size` | 1 MiB | data page size |
//! | `parquet.page.row.count.limit` | 20000 | rows per data page |
//! | `parquet.dictionary.page.size` | 1 MiB | dictionary page size |
//! | `parquet.enable.dictionary` (and `#<column.path>`) | true | dictionary encoding |
//! | `parquet.compression#<column.path>` | | per-column codec |
//! | `parquet.writer.version` | `v1` | `v1`/`PARQUET_1_0` (data page v1) or `v2`/`PARQUET_2_0` |
//! | `parquet.bloom.filter.enabled` (and `#<column.path>`), `parquet.bloom.filter.expected.ndv#`, `parquet.bloom.filter.fpp#` | false | bloom filters |
//! | `parquet.statistics.truncate.length` | none | min/max truncation of column chunk statistics |
//! | `parquet.columnindex.truncate.length` | 64 | min/max truncation in the column index |
//!
//! Column chunk statistics and the page index (column and offset index) are written, as
//! parquet-mr does by default. Not reproduced: page checksums (parquet-mr writes CRCs by
//! default), the `created_by` string (`parquet-rs version …` here).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampNanosecondType;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType as ArrowType, Field, Fields, SchemaRef, TimeUnit};
use parquet::arrow::arrow_writer::{ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::basic::{
    Compression, GzipLevel, LogicalType, Repetition, TimeUnit as ParquetTimeUnit,
    Type as PhysicalType, ZstdLevel,
};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::Int96;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type, TypePtr};

use super::{array_element_field_id, encode_error, map_key_field_id, map_value_field_id};
use crate::error::{Error, Result};
use crate::spec::options::parse_memory_size;
use crate::spec::{CoreOptions, DataField, DataType, TypeKind};
use crate::types::{cast_column_to, paimon_to_arrow_field};

/// Name of the Parquet message (Java `ParquetSchemaConverter.PAIMON_SCHEMA`).
pub const PARQUET_MESSAGE_NAME: &str = "paimon_schema";
/// Repeated group of a map (Java `MAP_REPEATED_NAME`).
const MAP_REPEATED_NAME: &str = "key_value";
/// Repeated group of a list (parquet-mr `ConversionPatterns.listOfElements`).
const LIST_REPEATED_NAME: &str = "list";
/// Element of a list (Java `LIST_ELEMENT_NAME`).
const LIST_ELEMENT_NAME: &str = "element";

/// parquet-mr `ParquetWriter.DEFAULT_BLOCK_SIZE`.
const DEFAULT_BLOCK_SIZE_BYTES: i64 = 128 << 20;
/// parquet-mr `ParquetWriter.DEFAULT_PAGE_SIZE`.
const DEFAULT_PAGE_SIZE_BYTES: i64 = 1 << 20;
/// parquet-mr `ParquetProperties.DEFAULT_PAGE_ROW_COUNT_LIMIT`.
const DEFAULT_PAGE_ROW_COUNT_LIMIT: i64 = 20_000;
/// parquet-mr `ParquetProperties.DEFAULT_DICTIONARY_PAGE_SIZE`.
const DEFAULT_DICTIONARY_PAGE_SIZE_BYTES: i64 = 1 << 20;
/// parquet-mr `ParquetProperties.DEFAULT_COLUMN_INDEX_TRUNCATE_LENGTH`.
const DEFAULT_COLUMN_INDEX_TRUNCATE_LENGTH: i64 = 64;

/// parquet-mr `ParquetProperties.DEFAULT_MAXIMUM_RECORD_COUNT_FOR_CHECK`.
const MAX_ROWS_BEFORE_SIZE_CHECK: usize = 10_000;

const JULIAN_EPOCH_OFFSET_DAYS: i64 = 2_440_588;
const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_MILLI: i64 = 1_000_000;

/// How one Parquet leaf column is encoded.
#[derive(Debug, Clone)]
enum LeafPlan {
    /// By the parquet crate's Arrow column writer.
    Arrow,
    /// As `int96` by this module: the leaf is reached from the top-level column through the
    /// struct children `path`; `optional[i]` tells whether node `i` (0 = the column, last =
    /// the leaf) is `OPTIONAL`.
    Int96 {
        path: Vec<usize>,
        optional: Vec<bool>,
    },
}

/// Buffered `int96` values and definition levels of one leaf of the open row group.
#[derive(Debug, Default)]
struct Int96Buffer {
    values: Vec<Int96>,
    def_levels: Vec<i16>,
}

/// The open row group.
#[derive(Debug)]
struct RowGroup {
    /// One per leaf (those of `int96` leaves are unused).
    writers: Vec<ArrowColumnWriter>,
    /// One per leaf, `Some` for `int96` leaves.
    int96: Vec<Option<Int96Buffer>>,
    rows: usize,
}

impl RowGroup {
    fn estimated_bytes(&self) -> usize {
        let arrow: usize = self
            .writers
            .iter()
            .zip(&self.int96)
            .filter(|(_, i)| i.is_none())
            .map(|(w, _)| w.get_estimated_total_bytes())
            .sum();
        let int96: usize = self
            .int96
            .iter()
            .flatten()
            .map(|b| b.values.len() * 12 + b.def_levels.len() * 2)
            .sum();
        arrow + int96
    }
}

/// Streaming Parquet encoder, see the [module docs](self).
pub(crate) struct ParquetEncoder {
    writer: SerializedFileWriter<Vec<u8>>,
    factory: ArrowRowGroupWriterFactory,
    /// The Arrow fields as handed to the column writers (TIMESTAMP(0) as milliseconds).
    write_schema: SchemaRef,
    /// Per top-level column: its first leaf and whether it needs converting to
    /// `write_schema`'s type.
    columns: Vec<ColumnPlan>,
    leaves: Vec<LeafPlan>,
    in_progress: Option<RowGroup>,
    max_row_group_bytes: usize,
    /// Bytes already handed out by [`ParquetEncoder::take_laid_out`].
    taken: usize,
}

#[derive(Debug)]
struct ColumnPlan {
    first_leaf: usize,
    leaf_count: usize,
    convert: bool,
    has_int96: bool,
}

impl std::fmt::Debug for ParquetEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetEncoder")
            .field("write_schema", &self.write_schema)
            .field("leaves", &self.leaves)
            .field("max_row_group_bytes", &self.max_row_group_bytes)
            .field(
                "buffered_rows",
                &self.in_progress.as_ref().map_or(0, |r| r.rows),
            )
            .finish_non_exhaustive()
    }
}

impl ParquetEncoder {
    pub(crate) fn try_new(
        fields: &[DataField],
        compression: &str,
        options: &CoreOptions,
    ) -> Result<Self> {
        let root = parquet_schema(fields)?;
        let mut leaves = Vec::new();
        let mut columns = Vec::with_capacity(fields.len());
        let mut write_fields = Vec::with_capacity(fields.len());
        for field in fields {
            let first_leaf = leaves.len();
            leaf_plans(
                &field.data_type,
                Some(Vec::new()),
                Vec::new(),
                &field.name,
                &mut leaves,
            )?;
            let arrow = paimon_to_arrow_field(field)?;
            let write_type = parquet_arrow_type(arrow.data_type());
            let convert = &write_type != arrow.data_type();
            write_fields.push(arrow.with_data_type(write_type));
            columns.push(ColumnPlan {
                first_leaf,
                leaf_count: leaves.len() - first_leaf,
                convert,
                has_int96: leaves[first_leaf..]
                    .iter()
                    .any(|l| matches!(l, LeafPlan::Int96 { .. })),
            });
        }
        let write_schema = Arc::new(arrow_schema::Schema::new(write_fields));
        let props = writer_properties(compression, options)?;
        let max_row_group_bytes = block_size_bytes(options)?;
        let writer = SerializedFileWriter::new(Vec::new(), root, Arc::new(props))
            .map_err(|e| encode_error("parquet", e))?;
        let factory = ArrowRowGroupWriterFactory::new(&writer, Arc::clone(&write_schema));
        if writer.schema_descr().num_columns() != leaves.len() {
            return Err(Error::invalid(format!(
                "internal: {} Parquet leaves for {} planned leaf columns",
                writer.schema_descr().num_columns(),
                leaves.len()
            )));
        }
        Ok(ParquetEncoder {
            writer,
            factory,
            write_schema,
            columns,
            leaves,
            in_progress: None,
            max_row_group_bytes,
            taken: 0,
        })
    }

    pub(crate) fn write(&mut self, columns: &[ArrayRef], rows: usize) -> Result<()> {
        let mut converted = Vec::with_capacity(columns.len());
        for ((column, plan), field) in columns
            .iter()
            .zip(&self.columns)
            .zip(self.write_schema.fields())
        {
            converted.push(if plan.convert {
                cast_column_to(column, field, "<parquet data file being written>")?
            } else {
                Arc::clone(column)
            });
        }
        self.write_rows(&converted, 0, rows)
    }

    /// Write rows `[offset, offset + len)` of `columns`, closing row groups at the block size
    /// (parquet-mr checks the buffered size as rows arrive; the average row size of the open
    /// row group tells how many more rows fit).
    fn write_rows(
        &mut self,
        columns: &[ArrayRef],
        mut offset: usize,
        mut len: usize,
    ) -> Result<()> {
        while len > 0 {
            let (buffered_rows, current) = {
                let group = self.open_row_group()?;
                (group.rows, group.estimated_bytes())
            };
            // Like parquet-mr, look at the size again after at most 10000 rows when nothing
            // tells the row size yet.
            let mut take = len.min(MAX_ROWS_BEFORE_SIZE_CHECK);
            if let Some(average) = current.checked_div(buffered_rows) {
                if current >= self.max_row_group_bytes {
                    self.flush_row_group()?;
                    continue;
                }
                take = len;
                if let Some(fit) = (self.max_row_group_bytes - current).checked_div(average) {
                    if fit == 0 {
                        self.flush_row_group()?;
                        continue;
                    }
                    take = take.min(fit);
                }
            }
            let slice: Vec<ArrayRef> =
                if offset == 0 && take == columns.first().map_or(0, |c| c.len()) {
                    columns.to_vec()
                } else {
                    columns.iter().map(|c| c.slice(offset, take)).collect()
                };
            self.write_to_row_group(&slice, take)?;
            offset += take;
            len -= take;
            if self
                .in_progress
                .as_ref()
                .is_some_and(|g| g.estimated_bytes() >= self.max_row_group_bytes)
            {
                self.flush_row_group()?;
            }
        }
        Ok(())
    }

    fn open_row_group(&mut self) -> Result<&mut RowGroup> {
        if self.in_progress.is_none() {
            let writers = self
                .factory
                .create_column_writers(self.writer.flushed_row_groups().len())
                .map_err(|e| encode_error("parquet", e))?;
            let int96 = self
                .leaves
                .iter()
                .map(|l| match l {
                    LeafPlan::Arrow => None,
                    LeafPlan::Int96 { .. } => Some(Int96Buffer::default()),
                })
                .collect();
            self.in_progress = Some(RowGroup {
                writers,
                int96,
                rows: 0,
            });
        }
        self.in_progress
            .as_mut()
            .ok_or_else(|| Error::invalid("internal: no open row group"))
    }

    fn write_to_row_group(&mut self, columns: &[ArrayRef], rows: usize) -> Result<()> {
        let Some(group) = self.in_progress.as_mut() else {
            return Err(Error::invalid("internal: no open row group"));
        };
        for ((column, plan), field) in columns
            .iter()
            .zip(&self.columns)
            .zip(self.write_schema.fields())
        {
            if plan.has_int96 && plan.leaf_count == 1 {
                // A top-level int96 timestamp: no Arrow leaf to compute.
                if let LeafPlan::Int96 { path, optional } = &self.leaves[plan.first_leaf] {
                    let buffer = group.int96[plan.first_leaf]
                        .as_mut()
                        .ok_or_else(|| Error::invalid("internal: no int96 buffer"))?;
                    buffer_int96(column, path, optional, field.name(), buffer)?;
                }
                continue;
            }
            let leaves = compute_leaves(field, column).map_err(|e| encode_error("parquet", e))?;
            if leaves.len() != plan.leaf_count {
                return Err(Error::invalid(format!(
                    "internal: column {} has {} leaves, {} planned",
                    field.name(),
                    leaves.len(),
                    plan.leaf_count
                )));
            }
            for (i, leaf) in leaves.iter().enumerate() {
                let index = plan.first_leaf + i;
                match &self.leaves[index] {
                    LeafPlan::Int96 { path, optional } => {
                        let buffer = group.int96[index]
                            .as_mut()
                            .ok_or_else(|| Error::invalid("internal: no int96 buffer"))?;
                        buffer_int96(column, path, optional, field.name(), buffer)?;
                    }
                    LeafPlan::Arrow => group.writers[index]
                        .write(leaf)
                        .map_err(|e| encode_error("parquet", e))?,
                }
            }
        }
        group.rows += rows;
        Ok(())
    }

    fn flush_row_group(&mut self) -> Result<()> {
        let Some(group) = self.in_progress.take() else {
            return Ok(());
        };
        let mut row_group = self
            .writer
            .next_row_group()
            .map_err(|e| encode_error("parquet", e))?;
        for (writer, int96) in group.writers.into_iter().zip(group.int96) {
            match int96 {
                None => writer
                    .close()
                    .and_then(|chunk| chunk.append_to_row_group(&mut row_group))
                    .map_err(|e| encode_error("parquet", e))?,
                Some(buffer) => {
                    drop(writer);
                    let mut column = row_group
                        .next_column()
                        .map_err(|e| encode_error("parquet", e))?
                        .ok_or_else(|| Error::invalid("internal: missing int96 column"))?;
                    let ColumnWriter::Int96ColumnWriter(typed) = column.untyped() else {
                        return Err(Error::invalid("internal: int96 leaf is not int96"));
                    };
                    let def_levels =
                        (!buffer.def_levels.is_empty()).then_some(buffer.def_levels.as_slice());
                    typed
                        .write_batch(&buffer.values, def_levels, None)
                        .map_err(|e| encode_error("parquet", e))?;
                    column.close().map_err(|e| encode_error("parquet", e))?;
                }
            }
        }
        row_group.close().map_err(|e| encode_error("parquet", e))?;
        Ok(())
    }

    pub(crate) fn estimated_size_bytes(&self) -> u64 {
        let buffered = self
            .in_progress
            .as_ref()
            .map_or(0, RowGroup::estimated_bytes);
        (self.writer.bytes_written() + buffered) as u64
    }

    /// Bytes laid out (magic and closed row groups) and not yet taken.
    pub(crate) fn laid_out_bytes(&self) -> usize {
        self.writer.bytes_written() - self.taken
    }

    /// Take the bytes laid out since the last take: the file continues after them. The
    /// writer keeps counting offsets over every byte written, taken or not.
    pub(crate) fn take_laid_out(&mut self) -> Result<Vec<u8>> {
        self.writer
            .flush()
            .map_err(|e| encode_error("parquet", e))?;
        let out = std::mem::take(self.writer.inner_mut());
        self.taken += out.len();
        Ok(out)
    }

    /// The bytes of the file not yet taken.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>> {
        self.flush_row_group()?;
        self.writer
            .into_inner()
            .map_err(|e| encode_error("parquet", e))
    }
}

/// The Arrow type handed to the column writers: TIMESTAMP(0) (Arrow seconds) is written as
/// milliseconds, like Java (`TimestampMillsWriter` for precision ≤ 3).
fn parquet_arrow_type(t: &ArrowType) -> ArrowType {
    match t {
        ArrowType::Timestamp(TimeUnit::Second, tz) => {
            ArrowType::Timestamp(TimeUnit::Millisecond, tz.clone())
        }
        ArrowType::List(f) => ArrowType::List(Arc::new(field_with(f, parquet_arrow_type))),
        ArrowType::FixedSizeList(f, n) => {
            ArrowType::FixedSizeList(Arc::new(field_with(f, parquet_arrow_type)), *n)
        }
        ArrowType::Map(f, sorted) => {
            ArrowType::Map(Arc::new(field_with(f, parquet_arrow_type)), *sorted)
        }
        ArrowType::Struct(fields) => ArrowType::Struct(
            fields
                .iter()
                .map(|f| field_with(f, parquet_arrow_type))
                .collect::<Fields>(),
        ),
        other => other.clone(),
    }
}

fn field_with(f: &Field, map: fn(&ArrowType) -> ArrowType) -> Field {
    f.clone().with_data_type(map(f.data_type()))
}

/// Buffer the `int96` values of the leaf at `path` of `column` with their definition levels.
fn buffer_int96(
    column: &ArrayRef,
    path: &[usize],
    optional: &[bool],
    name: &str,
    out: &mut Int96Buffer,
) -> Result<()> {
    let mut nodes: Vec<&dyn Array> = vec![column.as_ref()];
    for &child in path {
        let Some(parent) = nodes.last().and_then(|n| n.as_struct_opt()) else {
            return Err(Error::invalid(format!(
                "internal: column {name}: int96 path is not a struct path"
            )));
        };
        nodes.push(parent.column(child).as_ref());
    }
    let Some(leaf) = nodes
        .last()
        .and_then(|n| n.as_primitive_opt::<TimestampNanosecondType>())
    else {
        return Err(Error::invalid(format!(
            "internal: column {name}: int96 leaf is not a nanosecond timestamp"
        )));
    };
    let max_def = optional.iter().filter(|o| **o).count();
    let values = leaf.values();
    for row in 0..column.len() {
        let mut level: i16 = 0;
        let mut present = true;
        for (node, &is_optional) in nodes.iter().zip(optional) {
            if node.is_null(row) {
                if !is_optional {
                    return Err(Error::invalid(format!(
                        "writing column {name}: NULL in a NOT NULL field"
                    )));
                }
                present = false;
                break;
            }
            if is_optional {
                level += 1;
            }
        }
        if present {
            out.values.push(int96_of_nanos(values[row]));
        }
        if max_def > 0 {
            out.def_levels.push(level);
        }
    }
    Ok(())
}

/// Java `ParquetRowDataWriter.timestampToInt96`: epoch milliseconds (floor) and the nanos of
/// that millisecond, split into a Julian day and nanos of day with truncating division (nanos
/// of day are negative before 1970; readers add both parts, so the instant is exact).
fn int96_of_nanos(nanos: i64) -> Int96 {
    let millis = nanos.div_euclid(NANOS_PER_MILLI);
    let nano_of_milli = nanos.rem_euclid(NANOS_PER_MILLI);
    // Truncating division, like Java's `/` and `%` on long.
    let julian_day = (millis / MILLIS_PER_DAY + JULIAN_EPOCH_OFFSET_DAYS) as i32;
    let nanos_of_day = (millis % MILLIS_PER_DAY) * NANOS_PER_MILLI + nano_of_milli;
    let mut value = Int96::new();
    value.set_data(
        nanos_of_day as u32,
        (nanos_of_day >> 32) as u32,
        julian_day as u32,
    );
    value
}

/// Plan the leaves of a column of type `t` in Parquet leaf order. `struct_path` is the path
/// of struct children from the top-level column (`None` below a list or map); `optional` the
/// repetition of the nodes on the way.
fn leaf_plans(
    t: &DataType,
    struct_path: Option<Vec<usize>>,
    mut optional: Vec<bool>,
    name: &str,
    out: &mut Vec<LeafPlan>,
) -> Result<()> {
    optional.push(t.nullable);
    match &t.kind {
        TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision }
            if *precision > 6 =>
        {
            match struct_path {
                Some(path) => out.push(LeafPlan::Int96 { path, optional }),
                None => {
                    return Err(Error::unsupported(format!(
                        "writing {t} inside an ARRAY or MAP (column {name}) to parquet: Java \
                         writes it as int96, which is only supported outside lists and maps here"
                    )));
                }
            }
        }
        TypeKind::Array(e) | TypeKind::Vector { element: e, .. } => {
            leaf_plans(e, None, Vec::new(), name, out)?;
        }
        TypeKind::Map(k, v) => {
            leaf_plans(&k.with_nullable(false), None, Vec::new(), name, out)?;
            leaf_plans(v, None, Vec::new(), name, out)?;
        }
        TypeKind::Multiset(e) => {
            leaf_plans(&e.with_nullable(false), None, Vec::new(), name, out)?;
            out.push(LeafPlan::Arrow);
        }
        TypeKind::Row(fields) => {
            for (i, f) in fields.iter().enumerate() {
                let path = struct_path.as_ref().map(|p| {
                    let mut p = p.clone();
                    p.push(i);
                    p
                });
                leaf_plans(&f.data_type, path, optional.clone(), name, out)?;
            }
        }
        TypeKind::Variant => {
            out.push(LeafPlan::Arrow);
            out.push(LeafPlan::Arrow);
        }
        _ => out.push(LeafPlan::Arrow),
    }
    Ok(())
}

/// The Parquet message of `fields` (Java `ParquetSchemaConverter.convertToParquetMessageType`).
///
/// # Errors
/// [`Error::Unsupported`] for BLOB and types Java cannot write to Parquet.
pub fn parquet_schema(fields: &[DataField]) -> Result<TypePtr> {
    let children = fields
        .iter()
        .map(|f| parquet_type(&f.name, &f.data_type, f.id, 0, f.id).map(Arc::new))
        .collect::<Result<Vec<_>>>()?;
    Type::group_type_builder(PARQUET_MESSAGE_NAME)
        .with_fields(children)
        .build()
        .map(Arc::new)
        .map_err(|e| encode_error("parquet", e))
}

/// Java `ParquetSchemaConverter.convertToParquetType(name, type, fieldId, depth)` followed by
/// `withId(own_id)`: `field_id` and `depth` derive the ids of list elements and map keys and
/// values, `own_id` is the id of this element.
fn parquet_type(name: &str, t: &DataType, field_id: i32, depth: i32, own_id: i32) -> Result<Type> {
    let repetition = if t.nullable {
        Repetition::OPTIONAL
    } else {
        Repetition::REQUIRED
    };
    let primitive = |physical: PhysicalType, logical: Option<LogicalType>| {
        Type::primitive_type_builder(name, physical)
            .with_repetition(repetition)
            .with_logical_type(logical)
            .with_id(Some(own_id))
    };
    let built = match &t.kind {
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => {
            primitive(PhysicalType::BYTE_ARRAY, Some(LogicalType::String)).build()
        }
        TypeKind::Boolean => primitive(PhysicalType::BOOLEAN, None).build(),
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } => {
            primitive(PhysicalType::BYTE_ARRAY, None).build()
        }
        TypeKind::Decimal { precision, scale } => {
            let (p, s) = (*precision as i32, *scale as i32);
            let logical = Some(LogicalType::decimal(s, p));
            let builder = if *precision <= 9 {
                primitive(PhysicalType::INT32, logical)
            } else if *precision <= 18 {
                primitive(PhysicalType::INT64, logical)
            } else {
                primitive(PhysicalType::FIXED_LEN_BYTE_ARRAY, logical)
                    .with_length(min_bytes_for_decimal_precision(*precision))
            };
            builder.with_precision(p).with_scale(s).build()
        }
        TypeKind::TinyInt => {
            primitive(PhysicalType::INT32, Some(LogicalType::integer(8, true))).build()
        }
        TypeKind::SmallInt => {
            primitive(PhysicalType::INT32, Some(LogicalType::integer(16, true))).build()
        }
        TypeKind::Int => primitive(PhysicalType::INT32, None).build(),
        TypeKind::BigInt => primitive(PhysicalType::INT64, None).build(),
        TypeKind::Float => primitive(PhysicalType::FLOAT, None).build(),
        TypeKind::Double => primitive(PhysicalType::DOUBLE, None).build(),
        TypeKind::Date => primitive(PhysicalType::INT32, Some(LogicalType::Date)).build(),
        TypeKind::Time { .. } => primitive(
            PhysicalType::INT32,
            Some(LogicalType::time(true, ParquetTimeUnit::MILLIS)),
        )
        .build(),
        TypeKind::Timestamp { precision } => {
            let (physical, logical) = timestamp_type(*precision, false);
            primitive(physical, logical).build()
        }
        TypeKind::LocalZonedTimestamp { precision } => {
            let (physical, logical) = timestamp_type(*precision, true);
            primitive(physical, logical).build()
        }
        TypeKind::Array(element) | TypeKind::Vector { element, .. } => {
            let element = parquet_type(
                LIST_ELEMENT_NAME,
                element,
                field_id,
                depth + 1,
                array_element_field_id(field_id, depth + 1),
            )?;
            let repeated = Type::group_type_builder(LIST_REPEATED_NAME)
                .with_repetition(Repetition::REPEATED)
                .with_fields(vec![Arc::new(element)])
                .build()
                .map_err(|e| encode_error("parquet", e))?;
            Type::group_type_builder(name)
                .with_repetition(repetition)
                .with_logical_type(Some(LogicalType::List))
                .with_fields(vec![Arc::new(repeated)])
                .with_id(Some(own_id))
                .build()
        }
        TypeKind::Map(key, value) => {
            map_type(name, repetition, own_id, field_id, depth, key, value)?
        }
        TypeKind::Multiset(element) => {
            let count = DataType::not_null(TypeKind::Int);
            map_type(name, repetition, own_id, field_id, depth, element, &count)?
        }
        TypeKind::Row(fields) => {
            let children = fields
                .iter()
                .map(|f| parquet_type(&f.name, &f.data_type, f.id, 0, f.id).map(Arc::new))
                .collect::<Result<Vec<_>>>()?;
            Type::group_type_builder(name)
                .with_repetition(repetition)
                .with_fields(children)
                .with_id(Some(own_id))
                .build()
        }
        TypeKind::Variant => {
            let part = |part_name: &str, id: i32| {
                Type::primitive_type_builder(part_name, PhysicalType::BYTE_ARRAY)
                    .with_repetition(Repetition::REQUIRED)
                    .with_id(Some(id))
                    .build()
                    .map(Arc::new)
            };
            let value = part("value", 0).map_err(|e| encode_error("parquet", e))?;
            let metadata = part("metadata", 1).map_err(|e| encode_error("parquet", e))?;
            Type::group_type_builder(name)
                .with_repetition(repetition)
                .with_fields(vec![value, metadata])
                .with_id(Some(own_id))
                .build()
        }
        TypeKind::Blob | TypeKind::Other(_) => {
            return Err(Error::unsupported(format!(
                "writing {t} (column {name}) to a parquet data file"
            )));
        }
    };
    built.map_err(|e| encode_error("parquet", e))
}

fn map_type(
    name: &str,
    repetition: Repetition,
    own_id: i32,
    field_id: i32,
    depth: i32,
    key: &DataType,
    value: &DataType,
) -> Result<parquet::errors::Result<Type>> {
    // Parquet has no nullable map keys: Java writes the key REQUIRED whatever its type says.
    let key = parquet_type(
        "key",
        &key.with_nullable(false),
        field_id,
        depth + 1,
        map_key_field_id(field_id, depth + 1),
    )?;
    let value = parquet_type(
        "value",
        value,
        field_id,
        depth + 1,
        map_value_field_id(field_id, depth + 1),
    )?;
    let repeated = Type::group_type_builder(MAP_REPEATED_NAME)
        .with_repetition(Repetition::REPEATED)
        .with_fields(vec![Arc::new(key), Arc::new(value)])
        .build()
        .map_err(|e| encode_error("parquet", e))?;
    Ok(Type::group_type_builder(name)
        .with_repetition(repetition)
        .with_logical_type(Some(LogicalType::Map))
        .with_fields(vec![Arc::new(repeated)])
        .with_id(Some(own_id))
        .build())
}

/// Java `createTimestampWithLogicalType`: `int64` millis (p ≤ 3), `int64` micros (p ≤ 6),
/// else `int96` without a logical type.
fn timestamp_type(precision: u32, adjusted_to_utc: bool) -> (PhysicalType, Option<LogicalType>) {
    let unit = match precision {
        0..=3 => ParquetTimeUnit::MILLIS,
        4..=6 => ParquetTimeUnit::MICROS,
        _ => return (PhysicalType::INT96, None),
    };
    (
        PhysicalType::INT64,
        Some(LogicalType::timestamp(adjusted_to_utc, unit)),
    )
}

/// Java `ParquetSchemaConverter.computeMinBytesForDecimalPrecision`: the fewest bytes whose
/// two's complement holds every `precision`-digit unscaled value.
pub(crate) fn min_bytes_for_decimal_precision(precision: u32) -> i32 {
    let mut bytes = 1;
    while 2f64.powi(8 * bytes - 1) < 10f64.powi(precision as i32) {
        bytes += 1;
    }
    bytes
}

/// `parquet.*` option `key` of `options`.
fn option<'a>(options: &'a CoreOptions, key: &str) -> Option<&'a str> {
    options.get(key).map(str::trim)
}

fn long_option(options: &CoreOptions, key: &str, default: i64) -> Result<i64> {
    match option(options, key) {
        None => Ok(default),
        Some(v) => parse_memory_size(v)
            .map_err(|e| Error::invalid(format!("option {key}='{v}': expected {e}"))),
    }
}

fn positive_usize_option(options: &CoreOptions, key: &str, default: i64) -> Result<usize> {
    let v = long_option(options, key, default)?;
    usize::try_from(v)
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| Error::invalid(format!("option {key}={v}: expected a positive number")))
}

/// Hadoop `Configuration.getBoolean`: `true`/`false` (any case), anything else is the default.
fn bool_option(options: &CoreOptions, key: &str, default: bool) -> bool {
    match option(options, key) {
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        _ => default,
    }
}

/// The row group size: `file.block-size` (Paimon puts it into `parquet.block.size`), else
/// `parquet.block.size`, else 128 MiB.
fn block_size_bytes(options: &CoreOptions) -> Result<usize> {
    let key = if options.contains("file.block-size") {
        "file.block-size"
    } else {
        "parquet.block.size"
    };
    positive_usize_option(options, key, DEFAULT_BLOCK_SIZE_BYTES)
}

/// The codec of a `file.compression` / `parquet.compression` value (parquet-mr
/// `CompressionCodecName.fromConf`, `none` is uncompressed).
fn codec(name: &str, zstd_level: i32) -> Result<Compression> {
    Ok(match name.trim().to_ascii_lowercase().as_str() {
        "none" | "uncompressed" => Compression::UNCOMPRESSED,
        "snappy" => Compression::SNAPPY,
        "gzip" => Compression::GZIP(GzipLevel::default()),
        "lz4" => Compression::LZ4,
        "lz4_raw" => Compression::LZ4_RAW,
        "brotli" => Compression::BROTLI(Default::default()),
        "zstd" => Compression::ZSTD(ZstdLevel::try_new(zstd_level).map_err(|_| {
            Error::unsupported(format!(
                "parquet zstd level {zstd_level} (the parquet crate takes 1..=22)"
            ))
        })?),
        other => {
            return Err(Error::unsupported(format!(
                "compression '{other}' for parquet data files"
            )));
        }
    })
}

/// Writer properties from the options, see the [module docs](self).
fn writer_properties(compression: &str, options: &CoreOptions) -> Result<WriterProperties> {
    let zstd_level_text = option(options, "parquet.compression.codec.zstd.level")
        .or_else(|| option(options, "file.compression.zstd-level"))
        .unwrap_or("1");
    let zstd_level: i32 = zstd_level_text
        .parse()
        .map_err(|_| Error::invalid(format!("zstd level '{zstd_level_text}': expected an int")))?;
    let codec_name = option(options, "parquet.compression").unwrap_or(compression);
    let writer_version = match option(options, "parquet.writer.version") {
        None => WriterVersion::PARQUET_1_0,
        Some(v) if v.eq_ignore_ascii_case("v1") || v.eq_ignore_ascii_case("PARQUET_1_0") => {
            WriterVersion::PARQUET_1_0
        }
        Some(v) if v.eq_ignore_ascii_case("v2") || v.eq_ignore_ascii_case("PARQUET_2_0") => {
            WriterVersion::PARQUET_2_0
        }
        Some(v) => {
            return Err(Error::invalid(format!(
                "option parquet.writer.version='{v}': expected v1 or v2"
            )));
        }
    };
    let statistics_truncate = match option(options, "parquet.statistics.truncate.length") {
        None => None,
        Some(_) => Some(positive_usize_option(
            options,
            "parquet.statistics.truncate.length",
            0,
        )?),
    };
    let mut builder = WriterProperties::builder()
        .set_writer_version(writer_version)
        .set_compression(codec(codec_name, zstd_level)?)
        .set_data_page_size_limit(positive_usize_option(
            options,
            "parquet.page.size",
            DEFAULT_PAGE_SIZE_BYTES,
        )?)
        .set_data_page_row_count_limit(positive_usize_option(
            options,
            "parquet.page.row.count.limit",
            DEFAULT_PAGE_ROW_COUNT_LIMIT,
        )?)
        .set_dictionary_page_size_limit(positive_usize_option(
            options,
            "parquet.dictionary.page.size",
            DEFAULT_DICTIONARY_PAGE_SIZE_BYTES,
        )?)
        .set_dictionary_enabled(bool_option(options, "parquet.enable.dictionary", true))
        .set_bloom_filter_enabled(bool_option(options, "parquet.bloom.filter.enabled", false))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_statistics_truncate_length(statistics_truncate)
        .set_column_index_truncate_length(Some(positive_usize_option(
            options,
            "parquet.columnindex.truncate.length",
            DEFAULT_COLUMN_INDEX_TRUNCATE_LENGTH,
        )?))
        // Row groups are closed by this module at the block size, never by row count.
        .set_max_row_group_row_count(None);
    // Per-column settings `<key>#<column.path>` (Java `ColumnConfigParser`).
    for (key, value) in options.map() {
        let Some((root, path)) = key.split_once('#') else {
            continue;
        };
        let column = ColumnPath::new(path.split('.').map(str::to_string).collect());
        let value = value.trim();
        builder =
            match root {
                "parquet.compression" => {
                    builder.set_column_compression(column, codec(value, zstd_level)?)
                }
                "parquet.enable.dictionary" => builder
                    .set_column_dictionary_enabled(column, value.eq_ignore_ascii_case("true")),
                "parquet.bloom.filter.enabled" => builder
                    .set_column_bloom_filter_enabled(column, value.eq_ignore_ascii_case("true")),
                "parquet.bloom.filter.expected.ndv" => match value.parse::<u64>() {
                    Ok(ndv) => builder.set_column_bloom_filter_max_ndv(column, ndv),
                    Err(_) => builder,
                },
                "parquet.bloom.filter.fpp" => match value.parse::<f64>() {
                    Ok(fpp) if fpp > 0.0 && fpp < 1.0 => {
                        builder.set_column_bloom_filter_fpp(column, fpp)
                    }
                    _ => {
                        return Err(Error::invalid(format!(
                            "option {key}='{value}': expected a probability between 0 and 1"
                        )));
                    }
                },
                _ => builder,
            };
    }
    Ok(builder.build())
}

#[cfg(test)]
pub(super) fn test_int96(nanos: i64) -> Int96 {
    int96_of_nanos(nanos)
}
