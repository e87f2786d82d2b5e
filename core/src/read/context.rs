//! What every split read shares: the [`ReadContext`] built once per scan (schemas, options,
//! output columns, filter, limit, row ranges, BLOB handling), the [`Sink`] that filters,
//! projects, limits and emits the batches of a split, and a split's deletion files.
//! `read/mod.rs` dispatches a split to its read (append, primary key, data evolution); each
//! of them takes these from here.
//!
//! Source: Java `org.apache.paimon.operation.SplitRead` (the shared read settings).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema, SchemaRef};

use crate::blob::resolve::{ResolveTarget, descriptor_parts, resolve_descriptors};
use crate::error::{Error, Result};
use crate::io::Io;
use crate::merge::MergeConfig;
use crate::predicate::{BoundPredicate, Predicate};
use crate::scan::{DataSplit, DeletionFile, Plan, TableKind};
use crate::spec::row_range::{RowRange, RowRangeIndex};
use crate::spec::special_fields::{ROW_ID, SEQUENCE_NUMBER};
use crate::spec::{CoreOptions, DataField, DataFileMeta, TableSchema};
use crate::types::paimon_to_arrow_field;

/// Default rows per output batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// A column of the output.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputColumn {
    /// A field of the read schema.
    Field(DataField),
    /// `_ROW_ID` (row-tracking tables): `first_row_id + position in the file`.
    RowId,
    /// `_SEQUENCE_NUMBER` (row-tracking tables): the file's max sequence number.
    SequenceNumber,
}

impl OutputColumn {
    /// Column name in the output.
    pub fn name(&self) -> &str {
        match self {
            OutputColumn::Field(f) => &f.name,
            OutputColumn::RowId => ROW_ID,
            OutputColumn::SequenceNumber => SEQUENCE_NUMBER,
        }
    }
}

/// Everything a split reader needs besides bytes: shared by every split of a scan.
#[derive(Debug, Clone)]
pub struct ReadContext {
    /// The read schema (the schema of the planned snapshot).
    pub schema: TableSchema,
    /// Schemas of the data files, by id.
    pub schemas: BTreeMap<i64, TableSchema>,
    /// Effective options.
    pub options: CoreOptions,
    /// How rows are read.
    pub table_kind: TableKind,
    /// Output columns, in order.
    pub columns: Vec<OutputColumn>,
    /// Arrow schema of the emitted batches.
    pub output_schema: SchemaRef,
    /// Row filter (applied after merging on primary-key tables).
    pub filter: Option<BoundPredicate>,
    /// Stop after this many rows (per split reader).
    pub limit: Option<u64>,
    /// Rows per batch.
    pub batch_size: usize,
    /// Merge configuration of primary-key tables.
    pub merge: Option<MergeConfig>,
    /// Row-range pushdown of row-tracking tables (from [`Plan::row_ranges`]): only rows whose
    /// `_ROW_ID` lies in one of these ranges are read.
    pub row_ranges: Option<RowRangeIndex>,
    /// `blob-as-descriptor`: blob columns read from `.blob` files return serialized blob
    /// descriptors instead of bytes.
    pub blob_as_descriptor: bool,
    /// Prefix of the URI written into blob descriptors (the descriptor's URI is this prefix
    /// followed by the file path relative to the table root); empty by default. Also the
    /// table root that stored descriptors are resolved against: a descriptor URI under it is
    /// read by its relative path.
    pub blob_descriptor_uri_prefix: String,
    /// Output columns whose stored values are blob descriptors resolved to bytes after the
    /// merge (managed BLOBs of primary-key tables, `blob-descriptor-field` columns): pairs of
    /// (position in the output, kind). Empty with `blob-as-descriptor`.
    pub descriptor_columns: Vec<(usize, crate::format::blob::BlobElementKind)>,
}

impl ReadContext {
    /// Build the context of a scan.
    ///
    /// * `projection`: output column names (`None` = every field of the read schema); may
    ///   name `_ROW_ID` and `_SEQUENCE_NUMBER` on row-tracking tables.
    /// * `filter`: a predicate over fields of the read schema.
    ///
    /// Errors: an unknown column, a system column on a table without row tracking, a filter
    /// that does not bind, invalid merge options.
    pub fn try_new(
        plan: &Plan,
        projection: Option<&[String]>,
        filter: Option<&Predicate>,
        limit: Option<u64>,
        batch_size: usize,
    ) -> Result<ReadContext> {
        let schema = plan.schema.clone();
        let options = CoreOptions::new(plan.options.clone());
        let row_tracking = options.row_tracking_enabled()?;
        if plan.row_ranges.is_some() && !row_tracking {
            return Err(Error::invalid(
                "row ranges need a table with row-tracking.enabled",
            ));
        }
        let columns: Vec<OutputColumn> = match projection {
            None => schema
                .fields
                .iter()
                .cloned()
                .map(OutputColumn::Field)
                .collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    if let Some(f) = schema.field(n) {
                        return Ok(OutputColumn::Field(f.clone()));
                    }
                    match n.as_str() {
                        ROW_ID if row_tracking => Ok(OutputColumn::RowId),
                        SEQUENCE_NUMBER if row_tracking => Ok(OutputColumn::SequenceNumber),
                        ROW_ID | SEQUENCE_NUMBER => Err(Error::invalid(format!(
                            "column {n} exists only on tables with row-tracking.enabled"
                        ))),
                        _ => Err(Error::invalid(format!(
                            "unknown column '{n}'; the table has: {}",
                            schema.field_names().join(", ")
                        ))),
                    }
                })
                .collect::<Result<_>>()?,
        };
        let fields = columns
            .iter()
            .map(|c| match c {
                OutputColumn::Field(f) => paimon_to_arrow_field(f),
                OutputColumn::RowId => Ok(Field::new(ROW_ID, arrow_schema::DataType::Int64, false)),
                OutputColumn::SequenceNumber => Ok(Field::new(
                    SEQUENCE_NUMBER,
                    arrow_schema::DataType::Int64,
                    false,
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let filter = filter.map(|p| p.bind(&schema.fields)).transpose()?;
        let blob_as_descriptor = options.blob_as_descriptor()?;
        let descriptor_columns = if blob_as_descriptor {
            Vec::new()
        } else {
            let backed = crate::blob::managed::descriptor_backed_fields(&schema, &options);
            columns
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    backed
                        .iter()
                        .find(|(n, _)| n == c.name())
                        .map(|(_, k)| (i, *k))
                })
                .collect()
        };
        let merge = if plan.table_kind == TableKind::PrimaryKey {
            Some(MergeConfig::from_table_options(
                schema.fields.clone(),
                schema.primary_keys.clone(),
                schema.partition_keys.clone(),
                options.map(),
            )?)
        } else {
            None
        };
        Ok(ReadContext {
            schema,
            schemas: plan.schemas.clone(),
            options,
            table_kind: plan.table_kind,
            columns,
            output_schema: Arc::new(Schema::new(fields)),
            filter,
            limit,
            batch_size: if batch_size == 0 {
                DEFAULT_BATCH_SIZE
            } else {
                batch_size
            },
            merge,
            row_ranges: plan.row_ranges.as_deref().map(RowRangeIndex::new),
            blob_as_descriptor,
            blob_descriptor_uri_prefix: String::new(),
            descriptor_columns,
        })
    }

    /// Restrict the read to rows whose `_ROW_ID` lies in `ranges` (inclusive; any order,
    /// overlapping and adjacent ranges merge). Replaces the plan's ranges.
    pub fn with_row_ranges(mut self, ranges: &[RowRange]) -> Self {
        self.row_ranges = Some(RowRangeIndex::new(ranges));
        self
    }

    /// Blob descriptors (`blob-as-descriptor`) carry `prefix` + the file path as their URI,
    /// e.g. the table location `s3://bucket/warehouse/db.db/t/`.
    pub fn with_blob_descriptor_uri_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.blob_descriptor_uri_prefix = prefix.into();
        self
    }

    /// The schema a file was written with.
    pub fn file_schema(&self, file: &DataFileMeta) -> Result<&TableSchema> {
        self.schemas.get(&file.schema_id).ok_or_else(|| {
            Error::invalid(format!(
                "data file {} was written with schema {}, which the plan does not hold",
                file.file_name, file.schema_id
            ))
        })
    }

    /// Fields of the read schema named by the output and the filter, without duplicates, in
    /// output order then filter order.
    pub(crate) fn needed_fields(&self) -> Vec<DataField> {
        let mut out: Vec<DataField> = Vec::new();
        let mut push = |f: &DataField| {
            if !out.iter().any(|o| o.id == f.id) {
                out.push(f.clone());
            }
        };
        for c in &self.columns {
            if let OutputColumn::Field(f) = c {
                push(f);
            }
        }
        if let Some(p) = &self.filter {
            for f in p.referenced_fields() {
                push(f);
            }
        }
        out
    }
}

/// Filters, projects, limits and emits batches.
pub(crate) struct Sink<'a> {
    ctx: &'a ReadContext,
    io: &'a Io<RecordBatch>,
    emitted: u64,
}

impl<'a> Sink<'a> {
    pub(crate) fn new(ctx: &'a ReadContext, io: &'a Io<RecordBatch>) -> Self {
        Sink {
            ctx,
            io,
            emitted: 0,
        }
    }

    pub(crate) fn full(&self) -> bool {
        self.ctx.limit.is_some_and(|l| self.emitted >= l)
    }

    /// `batch` holds at least the output columns and filter columns, by name.
    pub(crate) async fn push(&mut self, batch: RecordBatch) -> Result<()> {
        let batch = match &self.ctx.filter {
            Some(p) => p.filter_batch(&batch)?,
            None => batch,
        };
        if batch.num_rows() == 0 || self.full() {
            return Ok(());
        }
        let columns =
            self.ctx
                .columns
                .iter()
                .map(|c| {
                    batch.column_by_name(c.name()).cloned().ok_or_else(|| {
                        Error::invalid(format!("read produced no column {}", c.name()))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
        let mut out = RecordBatch::try_new_with_options(
            Arc::clone(&self.ctx.output_schema),
            columns,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )
        .map_err(|e| Error::arrow("projecting the output", e))?;
        if let Some(limit) = self.ctx.limit {
            let room = limit - self.emitted;
            if (out.num_rows() as u64) > room {
                out = out.slice(0, room as usize);
            }
        }
        self.emitted += out.num_rows() as u64;
        if self.ctx.descriptor_columns.is_empty() {
            self.io.emit_and_yield(out).await;
            return Ok(());
        }
        let target = ResolveTarget {
            uri_prefix: &self.ctx.blob_descriptor_uri_prefix,
            columns: &self.ctx.descriptor_columns,
            partition_keys: self.ctx.schema.partition_keys.len(),
            options: &self.ctx.options,
        };
        for part in descriptor_parts(&out, &self.ctx.descriptor_columns)? {
            let part = resolve_descriptors(self.io, target, part).await?;
            self.io.emit_and_yield(part).await;
        }
        Ok(())
    }
}

pub(crate) fn deletion_file(split: &DataSplit, i: usize) -> Option<&DeletionFile> {
    split
        .deletion_files
        .as_ref()
        .and_then(|d| d.get(i))
        .and_then(|d| d.as_ref())
}
