//! The writer of one (partition, bucket): its file names, sequence numbers and new files,
//! created on the first row for it; append rows written to its rolling file, primary-key
//! rows buffered.
//!
//! Source: Java `org.apache.paimon.operation.AbstractFileStoreWrite#createWriterContainer`,
//! `org.apache.paimon.append.AppendOnlyWriter`, `RowDataRollingFileWriter`,
//! `org.apache.paimon.io.DataFilePathFactory`.

use super::*;

#[derive(Debug)]
pub(super) struct BucketWriter {
    pub(super) partition: BinaryRow,
    pub(super) bucket: i32,
    pub(super) bucket_dir: String,
    /// Where the writer's data, changelog and `.blob` files go (the bucket directory or
    /// `data-file.external-paths`).
    pub(super) placer: DataFilePlacer,
    /// `<data-file.prefix><uuid>-`: one UUID per bucket writer, as Java's path factory.
    pub(super) name_prefix: String,
    /// The UUID of `name_prefix`.
    pub(super) uuid: String,
    /// Extension: `.<format>`.
    pub(super) name_suffix: String,
    pub(super) files_named: u32,
    pub(super) next_sequence: i64,
    pub(super) new_files: Vec<DataFileMeta>,
    /// Append: the open file.
    pub(super) open: Option<OpenFile>,
    /// Append: records taken by the rolling writer since a flush or commit last closed its
    /// file (Java `RollingFileWriterImpl#recordCount`).
    pub(super) append_records: u64,
    /// Postpone-bucket key-value: buffered rows in the file layout, in input order.
    pub(super) buffer: Vec<RecordBatch>,
    /// Other key-value: buffered rows in the file layout, each batch sorted by key as it
    /// came.
    pub(super) sorted: Vec<RecordBatch>,
    /// Key-value with `changelog-producer = input`: changelog files written so far.
    pub(super) changelog_files: Vec<DataFileMeta>,
    /// Key-value with `changelog-producer = input`: how changelog files are named (set at the
    /// first flush).
    pub(super) changelog_names: Option<ChangelogNames>,
    /// Managed BLOB columns: the open `.managed.blob` packs.
    pub(super) packs: PackWriters,
}

#[derive(Debug)]
pub(super) struct OpenFile {
    pub(super) name: String,
    pub(super) encoder: DataFileEncoder,
    pub(super) stats: StatsCollector,
    pub(super) min_sequence: i64,
    pub(super) max_sequence: i64,
    /// The `.blob` files of this file's rows (tables with BLOB columns).
    pub(super) blobs: Option<BlobFiles>,
    /// Parts of the file sent while it is encoded.
    pub(super) parts: FileParts,
}

impl TableWrite {
    pub(super) fn writer(&mut self, partition: Vec<u8>, bucket: i32) -> Result<&mut BucketWriter> {
        let key = (partition, bucket);
        if !self.writers.contains_key(&key) {
            let row = BinaryRow::from_serialized(&key.0, "partition of the input")?;
            let ppath = partition_path(&self.partition_fields, &row, &self.naming)?;
            let next_sequence = if !self.restores_files() {
                0
            } else if self.restored.as_ref().is_some_and(|r| !r.contains(&key.0)) {
                return Err(Error::invalid(format!(
                    "partition '{}' of the input is not restored: give its files to \
                     TableWrite::restore_partitions first",
                    ppath.trim_end_matches('/')
                )));
            } else {
                self.restore
                    .max_sequence_numbers
                    .get(&key)
                    .map_or(0, |m| m.saturating_add(1))
            };
            let mut prefix = self
                .options
                .get("data-file.prefix")
                .unwrap_or(DATA_FILE_PREFIX)
                .to_owned();
            let mut format = self.format.clone();
            if let Some(p) = &self.postpone {
                prefix = p.file_prefix(&prefix);
                format.clone_from(&p.format);
            }
            let uuid = self.names.uuid();
            let name_prefix = format!("{prefix}{uuid}-");
            let bucket_dir = bucket_path(&self.data_root, &ppath, bucket);
            let placer = DataFilePlacer::new(&bucket_dir, self.external.as_ref(), &mut self.names);
            self.writers.insert(
                key.clone(),
                BucketWriter {
                    partition: row,
                    bucket,
                    bucket_dir,
                    placer,
                    name_prefix,
                    uuid,
                    name_suffix: format!(".{format}"),
                    files_named: 0,
                    next_sequence,
                    new_files: Vec::new(),
                    open: None,
                    append_records: 0,
                    buffer: Vec::new(),
                    sorted: Vec::new(),
                    changelog_files: Vec::new(),
                    changelog_names: None,
                    packs: PackWriters::default(),
                },
            );
        }
        self.writers
            .get_mut(&key)
            .ok_or_else(|| Error::invalid("bucket writer vanished"))
    }

    /// Write rows of one bucket: append rows to its rolling file, primary-key rows to its
    /// write buffer. `order`: the rows were taken sorted ([`KvLayout::input_order`]); row
    /// `p` was the `order[p]`-th of the bucket's rows in input order (its sequence number
    /// counts from there), and the buffer takes the batch as it is.
    pub(super) fn write_bucket(
        &mut self,
        partition: Vec<u8>,
        bucket: i32,
        columns: Vec<ArrayRef>,
        kinds: Option<ArrayRef>,
        order: Option<&[u32]>,
    ) -> Result<()> {
        let rows = columns.first().map_or(0, |c| c.len());
        let mut columns = columns;
        if let Some(managed) = self.managed.clone() {
            let table_uri = self.table_uri.clone().ok_or_else(|| {
                Error::invalid(
                    "writing managed BLOB columns needs the table's URI (TableWrite::with_table_uri)",
                )
            })?;
            let mut packs = Vec::new();
            let part_bytes = self.part_bytes;
            let w = self.writer(partition.clone(), bucket)?;
            let (prefix, counter) = (w.name_prefix.clone(), &mut w.files_named);
            let mut next_stem = || {
                let n = *counter;
                *counter += 1;
                format!("{prefix}{n}")
            };
            let mut target = PackTarget {
                bucket_dir: &w.bucket_dir,
                table_uri: &table_uri,
                next_stem: &mut next_stem,
                part_bytes,
            };
            w.packs.externalize(
                &managed,
                &mut columns,
                kinds.as_ref(),
                &mut target,
                &mut packs,
            )?;
            self.done.extend(packs);
        }
        if let Some(kv) = self.kv.clone() {
            let key_cols = kv.key.columns(&columns)?;
            let file_schema = Arc::clone(&kv.file_schema);
            let postpone = self.postpone.is_some();
            let w = self.writer(partition, bucket)?;
            let first = w.next_sequence;
            w.next_sequence += rows as i64;
            let seq: ArrayRef = match order {
                Some(order) => Arc::new(Int64Array::from_iter_values(
                    order.iter().map(|j| first + i64::from(*j)),
                )),
                None => Arc::new(Int64Array::from_iter_values(first..first + rows as i64)),
            };
            let kinds = kinds.unwrap_or_else(|| Arc::new(Int8Array::from(vec![0i8; rows])));
            let mut cols = key_cols;
            cols.push(seq);
            cols.push(kinds);
            cols.extend(columns);
            let batch = RecordBatch::try_new(file_schema, cols)
                .map_err(|e| Error::arrow("building the key-value rows of a bucket", e))?;
            // What the buffer is charged is the batch as written (its sort keys, about the
            // size of the key columns, are not counted, as when they were made at flush).
            let size = batch.get_array_memory_size();
            if postpone {
                w.buffer.push(batch);
            } else {
                let sorted = match order {
                    Some(_) => Some(kv.without_ignored(batch)?).filter(|b| b.num_rows() > 0),
                    None => kv.sorted_batch(batch)?,
                };
                w.sorted.extend(sorted);
            }
            self.buffered_bytes += size as u64;
            return Ok(());
        }
        self.write_append_rolling(partition, bucket, columns, rows)
    }

    /// Append rows to the bucket's open file as Java's `RollingFileWriterImpl#write` does row
    /// by row: the file's size is checked against `target-file-size` only when the bucket's
    /// rolling writer has taken a multiple of [`super::flush::ROLL_CHECK_RECORDS`] records (the count runs
    /// on across rolled files and restarts when a flush or commit closes the file). So the
    /// rows are written in pieces cut at those counts, unless even twice their in-memory size
    /// cannot bring the open file to the target (then no check inside can roll).
    fn write_append_rolling(
        &mut self,
        partition: Vec<u8>,
        bucket: i32,
        columns: Vec<ArrayRef>,
        rows: usize,
    ) -> Result<()> {
        let target = self.target_file_size;
        let bound = 2 * columns
            .iter()
            .map(|c| c.get_array_memory_size() as u64)
            .sum::<u64>()
            + (64 << 10);
        let w = self.writer(partition.clone(), bucket)?;
        let open_size = w
            .open
            .as_ref()
            .map_or(0, |f| f.encoder.estimated_size_bytes());
        if open_size.saturating_add(bound) < target {
            w.append_records += rows as u64;
            return self.write_append(partition, bucket, columns, rows, false);
        }
        let mut start = 0;
        while start < rows {
            let w = self.writer(partition.clone(), bucket)?;
            let to_check = super::flush::ROLL_CHECK_RECORDS
                - w.append_records % super::flush::ROLL_CHECK_RECORDS;
            let len = (rows - start).min(to_check as usize);
            w.append_records += len as u64;
            let check = w
                .append_records
                .is_multiple_of(super::flush::ROLL_CHECK_RECORDS);
            let piece = columns.iter().map(|c| c.slice(start, len)).collect();
            self.write_append(partition.clone(), bucket, piece, len, check)?;
            start += len;
        }
        Ok(())
    }

    /// [`Self::write_append_rolling`] of one piece of `rows` rows; with `check`, the file is
    /// closed once its estimated size reaches `target-file-size`.
    fn write_append(
        &mut self,
        partition: Vec<u8>,
        bucket: i32,
        columns: Vec<ArrayRef>,
        rows: usize,
        check: bool,
    ) -> Result<()> {
        let format = self.format.clone();
        let options = self.options.clone();
        let target = self.target_file_size;
        let time_millis = self.time_millis;
        let schema_id = self.schema.id;
        let sequence_per_file = self.sequence_per_file;
        let part_bytes = self.part_bytes;
        let blob = self.blob.clone();
        // Tables with BLOB columns: the normal file holds the other columns.
        let (fields, file_arrow, file_columns) = match &blob {
            Some(b) => (
                b.normal_fields.clone(),
                paimon_to_arrow_schema(&b.normal_fields)?,
                b.normal_columns(&columns),
            ),
            None => (
                self.schema.fields.clone(),
                Arc::clone(&self.table_arrow),
                columns.clone(),
            ),
        };
        let batch = RecordBatch::try_new(file_arrow, file_columns)
            .map_err(|e| Error::arrow("building the rows of a bucket", e))?;
        let w = self.writer(partition, bucket)?;
        if w.open.is_none() {
            let first = if sequence_per_file {
                0
            } else {
                w.next_sequence
            };
            w.open = Some(OpenFile {
                name: w.next_file_name(),
                encoder: DataFileEncoder::try_new(&fields, &format, &options)?,
                stats: StatsCollector::new(&fields, &options)?,
                min_sequence: first,
                max_sequence: first - 1,
                blobs: blob.as_ref().map(BlobLayout::new_files),
                parts: FileParts::default(),
            });
        }
        let Some(open) = w.open.as_mut() else {
            return Err(Error::invalid("no open file"));
        };
        open.encoder.write(&batch)?;
        open.stats.update(batch.columns())?;
        let placer = &mut w.placer;
        let mut parts: Vec<FileToPut> = open
            .parts
            .next_part(&mut open.encoder, part_bytes, || placer.place(&open.name))?
            .into_iter()
            .collect();
        if let (Some(layout), Some(files)) = (&blob, open.blobs.as_mut()) {
            let (prefix, counter) = (&w.name_prefix, &mut w.files_named);
            let mut next_name = || {
                let n = *counter;
                *counter += 1;
                format!("{prefix}{n}.blob")
            };
            let mut place = |name: &str| placer.place(name);
            files.write(
                layout,
                &columns,
                &mut next_name,
                part_bytes,
                &mut place,
                &mut parts,
            )?;
        }
        open.max_sequence += rows as i64;
        w.next_sequence += rows as i64;
        let files = if check && open.encoder.estimated_size_bytes() >= target {
            close_append_file(w, blob.as_ref(), schema_id, time_millis)?
        } else {
            Vec::new()
        };
        self.done.extend(parts);
        self.done.extend(files);
        Ok(())
    }
}

impl BucketWriter {
    /// `<prefix><uuid>-<n>.<format>`, `n` counting this writer's files from 0 (Java
    /// `DataFilePathFactory#newPath`).
    pub(super) fn next_file_name(&mut self) -> String {
        let n = self.files_named;
        self.files_named += 1;
        format!("{}{n}{}", self.name_prefix, self.name_suffix)
    }

    /// The next changelog file name: `<changelog-file.prefix><uuid>-<n>.<format>`, sharing
    /// the data files' UUID and counter when the changelog format is `data_format` (Java
    /// keeps one `DataFilePathFactory` per format), else with a UUID and counter of its own.
    pub(super) fn next_changelog_name(
        &mut self,
        options: &CoreOptions,
        spec: &KvFileSpec,
        data_format: &str,
        name_source: &mut NameSource,
    ) -> String {
        let names = self.changelog_names.get_or_insert_with(|| {
            let prefix = changelog_prefix(options);
            if spec.format == data_format {
                ChangelogNames::Shared {
                    prefix: format!("{prefix}{}-", self.uuid),
                }
            } else {
                ChangelogNames::Own {
                    prefix: format!("{prefix}{}-", name_source.uuid()),
                    count: 0,
                }
            }
        });
        let n = match names {
            ChangelogNames::Shared { .. } => {
                let n = self.files_named;
                self.files_named += 1;
                n
            }
            ChangelogNames::Own { count, .. } => {
                let n = *count;
                *count += 1;
                n
            }
        };
        let (ChangelogNames::Shared { prefix } | ChangelogNames::Own { prefix, .. }) = names;
        format!("{prefix}{n}.{}", spec.format)
    }
}

/// Close the open file of an append bucket writer: the data file, then (tables with BLOB
/// columns) the `.blob` files of its rows, column by column, the order the commit's row-id
/// assignment expects.
pub(super) fn close_append_file(
    w: &mut BucketWriter,
    blob: Option<&BlobLayout>,
    schema_id: i64,
    time_millis: i64,
) -> Result<Vec<FileToPut>> {
    let Some(open) = w.open.take() else {
        return Err(Error::invalid("no open file to close"));
    };
    let row_count = open.encoder.row_count() as i64;
    let (value_stats, value_stats_cols) = open.stats.finish()?;
    let tail = open.encoder.finish()?;
    let file_size = open.parts.file_size(&tail) as i64;
    let (put, external_path) = open.parts.finish(tail, || w.placer.place(&open.name));
    let meta = DataFileMeta {
        file_name: open.name.clone(),
        file_size,
        row_count,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: SimpleStats::empty(),
        value_stats,
        min_sequence_number: open.min_sequence,
        max_sequence_number: open.max_sequence,
        schema_id,
        level: 0,
        extra_files: Vec::new(),
        creation_time_millis: Some(time_millis),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(FileSource::Append),
        value_stats_cols,
        external_path,
        // Row tracking: the commit assigns it.
        first_row_id: None,
        write_cols: blob.map(|b| b.normal_names.clone()),
        write_cols_sequences: None,
    };
    let mut out = vec![put];
    w.new_files.push(meta);
    if let (Some(layout), Some(files)) = (blob, open.blobs) {
        for f in files.finish(layout, row_count, schema_id, time_millis)? {
            let mut meta = f.meta;
            let (put, external_path, size) = f
                .parts
                .finish_content(f.content, || w.placer.place(&meta.file_name));
            meta.external_path = external_path;
            meta.file_size = size as i64;
            out.push(put);
            w.new_files.push(meta);
        }
    }
    Ok(out)
}
