//! Partial-column updates of data-evolution tables: new values for some columns of rows that
//! already have row ids.
//!
//! An update touches row-id ranges of live normal files. For each touched range the writer
//! writes files that cover **exactly** that range (the commit's row-id checks require it:
//! `spec/data-evolution.md` §9), with `first_row_id` = the range's start and `write_cols` = the
//! updated columns, so a data-evolution read takes those columns from the new files (newest
//! wins) and the others from the older layers:
//!
//! * one normal file with the updated non-BLOB columns and BLOB columns stored inline
//!   (`blob-descriptor-field`, `blob-view-field`: descriptors or view structs, checked and
//!   stored as [`crate::blob::inline`] says), holding every row of the range (the host
//!   passes the current values of the rows it does not change, stored descriptors for inline
//!   BLOB columns);
//! * per updated BLOB column, `.blob` files holding the new value of each changed row and a
//!   placeholder (`-2`) for every other row, so untouched blobs are neither read nor copied
//!   (an explicit NULL writes `-1`).
//!
//! Sequence numbers count from 0 in each file; the commit stamps them with the snapshot id
//! (`min == 0` → `(S, S)`), and keeps the given `first_row_id`s. Commit with
//! [`crate::commit::CommitOptions::with_check_from_snapshot`] set to the snapshot the update
//! was computed on, so concurrent updates of the same columns and rows conflict.
//!
//! Source: the partial-column writes of Java's data-evolution tables
//! (`BaseAppendFileStoreWrite#withWriteType`, the `MERGE INTO`/`UPDATE` writer of
//! paimon-spark's `DataEvolutionPaimonWriter`), `BlobFormatWriter` placeholders.

use std::collections::BTreeMap;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::Schema;

use crate::blob::files::BlobLayout;
use crate::blob::inline::{InlineBlobColumns, encode_column};
use crate::commit::{CommitMessage, DataIncrement};
use crate::encode::DataFileEncoder;
use crate::encode::stats::StatsCollector;
use crate::error::{Error, Result};
use crate::io::FileToPut;
use crate::spec::file_names::DATA_FILE_PREFIX;
use crate::spec::partition::{PartitionNaming, bucket_path, partition_path};
use crate::spec::{BinaryRow, DataField, DataFileMeta, FileSource, SimpleStats, TableSchema};
use crate::types::paimon_to_arrow_schema;
use crate::util::NameSource;
use crate::write::WriteOptions;
use crate::write::external::{DataFilePlacer, ExternalPaths};

/// New values of some columns for every row of one row-id range.
#[derive(Debug, Clone)]
pub struct RangeUpdate {
    /// Partition of the range's files.
    pub partition: BinaryRow,
    /// Bucket of the range's files (0 for data-evolution tables).
    pub bucket: i32,
    /// `_ROW_ID` of the range's first row.
    pub first_row_id: i64,
    /// `(column, values)` for every updated column, in the table's column order; each array
    /// has one value per row of the range (row `i` is `_ROW_ID` `first_row_id + i`). For a
    /// non-BLOB column, rows not changed carry their current value; for a BLOB column they are
    /// ignored (`touched` unset: a placeholder is written).
    pub columns: Vec<(String, ArrayRef)>,
    /// Per row of the range: whether the update changes it.
    pub touched: Vec<bool>,
}

/// Writes the files of partial-column updates of a data-evolution table.
#[derive(Debug)]
pub struct UpdateWriter {
    schema: TableSchema,
    format: String,
    options: crate::spec::CoreOptions,
    blob: Option<BlobLayout>,
    /// BLOB columns stored inline: normal columns whose values are encoded as stored.
    inline: Option<InlineBlobColumns>,
    naming: PartitionNaming,
    data_root: String,
    partition_fields: Vec<DataField>,
    time_millis: i64,
    /// `data-<uuid>-` of this writer's files and their counter.
    prefix: String,
    files_named: u32,
    /// `data-file.external-paths`: the roots new files go to, `None` for the table directory.
    external: Option<ExternalPaths>,
    /// Seeds the external-path choosers.
    names: NameSource,
    /// Where the files of each (partition, bucket) go.
    placers: BTreeMap<(Vec<u8>, i32), DataFilePlacer>,
    new_files: BTreeMap<(Vec<u8>, i32), (BinaryRow, Vec<DataFileMeta>)>,
    done: Vec<FileToPut>,
}

impl UpdateWriter {
    /// A writer for `schema` (the table's latest schema).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the table is not a data-evolution table
    /// (`row-tracking.enabled` and `data-evolution.enabled`); as the append writer for
    /// options it does not support; an invalid `data-file.external-paths*` option.
    pub fn try_new(schema: TableSchema, options: WriteOptions) -> Result<Self> {
        let core = schema.core_options();
        if !(core.row_tracking_enabled()? && core.data_evolution_enabled()?) {
            return Err(Error::invalid(
                "updating columns by _ROW_ID needs a data-evolution table \
                 ('row-tracking.enabled' and 'data-evolution.enabled' = true)",
            ));
        }
        let external = ExternalPaths::from_options(&core)?;
        let target_file_size = crate::spec::options::parse_memory_size(
            core.get("target-file-size").unwrap_or("256 mb"),
        )
        .ok()
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(|| Error::invalid("option 'target-file-size' is not a memory size"))?;
        let blob = BlobLayout::try_new(&schema, &core, target_file_size)?;
        let inline = InlineBlobColumns::try_new(&schema, &core)?;
        let partition_fields = schema
            .partition_keys
            .iter()
            .map(|k| {
                schema
                    .fields
                    .iter()
                    .find(|f| &f.name == k)
                    .cloned()
                    .ok_or_else(|| Error::invalid(format!("partition key '{k}' is not a field")))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut names = NameSource::new(options.seed);
        let prefix = format!(
            "{}{}-",
            core.get("data-file.prefix").unwrap_or(DATA_FILE_PREFIX),
            names.uuid()
        );
        Ok(UpdateWriter {
            format: core.file_format().to_ascii_lowercase(),
            naming: core.partition_naming()?,
            data_root: core
                .get("data-file.path-directory")
                .map(str::to_owned)
                .unwrap_or_default(),
            options: core,
            blob,
            inline,
            partition_fields,
            time_millis: options.time_millis,
            prefix,
            files_named: 0,
            external,
            names,
            placers: BTreeMap::new(),
            new_files: BTreeMap::new(),
            done: Vec::new(),
            schema,
        })
    }

    /// Write the files of one range (see the module docs).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the column: an unknown column, a partition column, a column
    /// given twice, values or `touched` of another length than the range, a NULL in a NOT NULL
    /// column, no column at all; encoding errors.
    pub fn write_range(&mut self, update: RangeUpdate) -> Result<()> {
        let rows = update.touched.len();
        if rows == 0 {
            return Err(Error::invalid("an update range of 0 rows"));
        }
        if update.columns.is_empty() {
            return Err(Error::invalid("an update sets no column"));
        }
        let mut normal_fields = Vec::new();
        let mut normal_values = Vec::new();
        let mut blob_columns = Vec::new();
        let mut last_pos = None;
        for (name, values) in &update.columns {
            let pos = self
                .schema
                .fields
                .iter()
                .position(|f| &f.name == name)
                .ok_or_else(|| Error::invalid(format!("column '{name}' is not in the table")))?;
            if last_pos.is_some_and(|p| p >= pos) {
                return Err(Error::invalid(format!(
                    "update columns must be distinct and in table order ('{name}')"
                )));
            }
            last_pos = Some(pos);
            if self.schema.partition_keys.contains(name) {
                return Err(Error::invalid(format!(
                    "column '{name}' is a partition key and cannot be updated"
                )));
            }
            if values.len() != rows {
                return Err(Error::invalid(format!(
                    "column '{name}': {} values for a range of {rows} rows",
                    values.len()
                )));
            }
            let field = &self.schema.fields[pos];
            if self.blob.as_ref().is_some_and(|b| b.is_blob_column(name)) {
                blob_columns.push((name.clone(), values.clone()));
                continue;
            }
            if !field.data_type.nullable && values.null_count() > 0 {
                return Err(Error::invalid(format!(
                    "column '{name}' is NOT NULL but the update sets NULL"
                )));
            }
            normal_fields.push(field.clone());
            match self.inline.as_ref().and_then(|i| i.kind_of(name)) {
                // Every row's value, updated or not, is written as stored (the caller passes
                // the stored descriptors of the rows not updated).
                Some(kind) => normal_values.push(encode_column(values, name, kind)?),
                None => normal_values.push(values.clone()),
            }
        }
        let ppath = partition_path(&self.partition_fields, &update.partition, &self.naming)?;
        let bucket_dir = bucket_path(&self.data_root, &ppath, update.bucket);
        let placer_key = (update.partition.to_serialized(), update.bucket);
        let schema_id = self.schema.id;
        let time_millis = self.time_millis;
        let mut metas = Vec::new();
        if !normal_fields.is_empty() {
            let name = self.next_name(&format!(".{}", self.format));
            let arrow = paimon_to_arrow_schema(&normal_fields)?;
            let values = normal_values
                .iter()
                .zip(arrow.fields())
                .map(|(v, f)| conform(v, f.data_type(), f.name()))
                .collect::<Result<Vec<_>>>()?;
            let batch = RecordBatch::try_new(
                std::sync::Arc::new(Schema::new(arrow.fields().clone())),
                values,
            )
            .map_err(|e| Error::arrow("building the rows of an update", e))?;
            let mut encoder =
                DataFileEncoder::try_new(&normal_fields, &self.format, &self.options)?;
            let mut stats = StatsCollector::new(&normal_fields, &self.options)?;
            encoder.write(&batch)?;
            stats.update(batch.columns())?;
            let (value_stats, value_stats_cols) = stats.finish()?;
            let bytes = encoder.finish()?;
            let (path, external_path) = self.place(&placer_key, &bucket_dir, &name);
            metas.push(DataFileMeta {
                file_name: name.clone(),
                file_size: bytes.len() as i64,
                row_count: rows as i64,
                min_key: BinaryRow::empty(),
                max_key: BinaryRow::empty(),
                key_stats: SimpleStats::empty(),
                value_stats,
                min_sequence_number: 0,
                max_sequence_number: rows as i64 - 1,
                schema_id,
                level: 0,
                extra_files: Vec::new(),
                creation_time_millis: Some(time_millis),
                delete_row_count: Some(0),
                embedded_index: None,
                file_source: Some(FileSource::Append),
                value_stats_cols,
                external_path,
                first_row_id: Some(update.first_row_id),
                write_cols: Some(normal_fields.iter().map(|f| f.name.clone()).collect()),
                write_cols_sequences: None,
            });
            self.done.push(FileToPut::whole(path, bytes));
        }
        for (name, values) in blob_columns {
            let layout = self
                .blob
                .take()
                .ok_or_else(|| Error::invalid("blob layout vanished"))?;
            let prefix = self.prefix.clone();
            let counter = &mut self.files_named;
            let mut next_name = || {
                let n = *counter;
                *counter += 1;
                format!("{prefix}{n}.blob")
            };
            let written = layout.write_update_column(
                &name,
                &values,
                &update.touched,
                update.first_row_id,
                schema_id,
                time_millis,
                &mut next_name,
            );
            self.blob = Some(layout);
            for f in written? {
                let mut meta = f.meta;
                let (path, external_path) = self.place(&placer_key, &bucket_dir, &meta.file_name);
                meta.external_path = external_path;
                self.done.push(FileToPut {
                    path,
                    content: f.content,
                });
                metas.push(meta);
            }
        }
        let key = (update.partition.to_serialized(), update.bucket);
        self.new_files
            .entry(key)
            .or_insert_with(|| (update.partition.clone(), Vec::new()))
            .1
            .extend(metas);
        Ok(())
    }

    /// Where a new file `name` of the bucket `key` (directory `bucket_dir`) goes: the path to
    /// `Put` and its `_EXTERNAL_PATH`.
    fn place(
        &mut self,
        key: &(Vec<u8>, i32),
        bucket_dir: &str,
        name: &str,
    ) -> (String, Option<String>) {
        let external = self.external.as_ref();
        let names = &mut self.names;
        self.placers
            .entry(key.clone())
            .or_insert_with(|| DataFilePlacer::new(bucket_dir, external, names))
            .place(name)
    }

    /// Files completed so far, to be written by the host (create-new) before the commit.
    pub fn take_files(&mut self) -> Vec<FileToPut> {
        std::mem::take(&mut self.done)
    }

    /// One commit message per (partition, bucket) updated since the last call.
    pub fn prepare_commit(&mut self) -> Vec<CommitMessage> {
        std::mem::take(&mut self.new_files)
            .into_iter()
            .map(|((_, bucket), (partition, files))| CommitMessage {
                partition,
                bucket,
                total_buckets: None,
                data_increment: DataIncrement {
                    new_files: files,
                    ..DataIncrement::default()
                },
                compact_increment: Default::default(),
            })
            .collect()
    }

    fn next_name(&mut self, suffix: &str) -> String {
        let n = self.files_named;
        self.files_named += 1;
        format!("{}{n}{suffix}", self.prefix)
    }
}

/// `values` as Arrow type `ty` (casting where the types differ), naming `column`.
fn conform(values: &ArrayRef, ty: &arrow_schema::DataType, column: &str) -> Result<ArrayRef> {
    if values.data_type() == ty {
        return Ok(values.clone());
    }
    arrow_cast::cast(values.as_ref(), ty)
        .map_err(|e| Error::invalid(format!("column '{column}': {e}")))
}
