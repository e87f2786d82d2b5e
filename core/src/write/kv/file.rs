//! Which format, compression and name the level-0 files of a primary-key bucket writer get:
//! its data files and, with `changelog-producer = input`, its changelog files.
//!
//! Source: Java `org.apache.paimon.io.KeyValueFileWriterFactory` (format, compression and
//! stats mode per level, changelog options first for changelog files; one
//! `DataFilePathFactory` per format), `org.apache.paimon.io.DataFilePathFactory`
//! (`<prefix><uuid>-<n>.<format>`, data and changelog files of one factory share the UUID and
//! the counter), `org.apache.paimon.mergetree.MergeTreeWriter#flushWriteBuffer` (the changelog
//! writer of the input producer gets every buffered record, sorted, before the merge).
//!
//! # Changelog files of `changelog-producer = input`
//!
//! When a bucket's write buffer is flushed, the records it holds (after `ignore-delete` dropped
//! retractions, as Java's `RowKindFilter` does before the buffer) are written twice: sorted by
//! (key, `sequence.field`, sequence number) but **not merged**, with their own row kinds, as
//! changelog files `<changelog-file.prefix><uuid>-<n>.<format>`; and merged per key as the
//! level-0 data files. Changelog files are level 0 with file source `APPEND`, key-value layout
//! like data files, roll at `target-file-size`, and are listed in
//! [`crate::commit::DataIncrement::changelog_files`]. Batch reads never read them.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int8Type, Int64Type};
use arrow_array::{ArrayRef, RecordBatch};

use crate::blob::managed::SidecarCollector;
use crate::encode::DataFileEncoder;
use crate::encode::parts::FileParts;
use crate::encode::row::BinaryRowEncoder;
use crate::encode::stats::StatsCollector;
use crate::error::Result;
use crate::format::blob::BlobElementKind;
use crate::io::FileToPut;
use crate::spec::{
    BinaryRow, CoreOptions, DataField, DataFileMeta, DataType, FileSource, SimpleStats,
};

/// `changelog-file.prefix` (default `changelog-`).
pub const CHANGELOG_FILE_PREFIX: &str = "changelog-file.prefix";
/// `changelog-file.format` (default: the level-0 data file format).
pub const CHANGELOG_FILE_FORMAT: &str = "changelog-file.format";
/// `changelog-file.compression` (default: the level-0 data file compression).
pub const CHANGELOG_FILE_COMPRESSION: &str = "changelog-file.compression";
const FILE_FORMAT_PER_LEVEL: &str = "file.format.per.level";
const FILE_COMPRESSION_PER_LEVEL: &str = "file.compression.per.level";

/// Format and compression of one kind of level-0 key-value file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KvFileSpec {
    /// Lower-case format name (`parquet`, `orc`, `avro`).
    pub(crate) format: String,
    /// Compression name for the encoder.
    pub(crate) compression: String,
}

impl KvFileSpec {
    /// Data files of `level`: the `level` entries of `file.format.per.level` /
    /// `file.compression.per.level`, else `file.format` / `file.compression` (Java
    /// `KeyValueFileWriterFactory`, used by compaction outputs).
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for a malformed per-level option.
    pub(crate) fn for_level(options: &CoreOptions, level: i32) -> Result<Self> {
        let format = level_option(options, FILE_FORMAT_PER_LEVEL, level)?
            .map(|f| f.to_lowercase())
            .unwrap_or_else(|| options.file_format().to_lowercase());
        let compression = level_option(options, FILE_COMPRESSION_PER_LEVEL, level)?
            .unwrap_or_else(|| options.file_compression().to_owned());
        Ok(KvFileSpec {
            format,
            compression,
        })
    }

    /// Level-0 changelog files: `changelog-file.format` / `changelog-file.compression`, else
    /// the level-0 entries of `file.format.per.level` / `file.compression.per.level`, else
    /// `file.format` / `file.compression`.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for a malformed per-level option.
    pub(crate) fn changelog(options: &CoreOptions) -> Result<Self> {
        let format = match options.get(CHANGELOG_FILE_FORMAT) {
            Some(f) => f.to_lowercase(),
            None => level_option(options, FILE_FORMAT_PER_LEVEL, 0)?
                .map(|f| f.to_lowercase())
                .unwrap_or_else(|| options.file_format()),
        };
        let compression = match options.get(CHANGELOG_FILE_COMPRESSION) {
            Some(c) => c.to_owned(),
            None => level_option(options, FILE_COMPRESSION_PER_LEVEL, 0)?
                .unwrap_or_else(|| options.file_compression().to_owned()),
        };
        Ok(KvFileSpec {
            format,
            compression,
        })
    }
}

/// One key-value file being written, batch after batch: its encoder, statistics, key range,
/// sequence number range, retraction count and (managed BLOB tables) the packs its rows
/// reference. Used by the writers' level-0 files and by compaction outputs, so both roll at
/// `target-file-size` on the encoder's size estimate ([`Self::estimated_size_bytes`]).
///
/// Batches are in the key-value file layout: `k` key columns `_KEY_*`, `_SEQUENCE_NUMBER`,
/// `_VALUE_KIND`, then the value columns, sorted by key across all batches of the file.
///
/// Source: Java `org.apache.paimon.io.KeyValueDataFileWriter` (min/max key, key and value
/// statistics, sequence number range, delete row count) under a `RollingFileWriter`.
pub(crate) struct KvFileBuilder {
    /// The file name.
    pub(crate) name: String,
    encoder: DataFileEncoder,
    stats: StatsCollector,
    key_types: Vec<DataType>,
    min_key: Option<BinaryRow>,
    max_key: Option<BinaryRow>,
    min_seq: i64,
    max_seq: i64,
    deletes: i64,
    rows: i64,
    /// Managed BLOB tables: the managed columns' positions and the file's pack references.
    refs: Option<(Vec<(usize, BlobElementKind)>, SidecarCollector)>,
    /// Parts of the file sent while it is encoded.
    parts: FileParts,
}

/// A finished key-value file: what [`KvFileBuilder::finish`] returns.
#[derive(Debug)]
pub(crate) struct FinishedKvFile {
    /// Its metadata (`file_size` counts the parts sent too).
    pub(crate) meta: DataFileMeta,
    /// Its bytes not sent as parts yet (the whole file when none were).
    pub(crate) tail: Vec<u8>,
    /// The pack references of its rows (managed BLOB tables).
    pub(crate) refs: Option<SidecarCollector>,
    /// The parts sent, and where.
    pub(crate) parts: FileParts,
}

impl KvFileBuilder {
    /// A new file `name` of `spec`'s format and compression: `file_fields` is the file
    /// layout (keys first), `plain_key_fields` the primary-key columns as the table names
    /// them; `level` and `changelog` choose the statistics mode; `managed` (data files of
    /// managed BLOB tables) the managed columns whose pack references are collected.
    ///
    /// # Errors
    /// An unsupported format, compression or statistics option.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn try_new(
        name: String,
        file_fields: &[DataField],
        plain_key_fields: &[DataField],
        spec: &KvFileSpec,
        options: &CoreOptions,
        level: i32,
        changelog: bool,
        managed: Option<Vec<(usize, BlobElementKind)>>,
    ) -> Result<Self> {
        let k = plain_key_fields.len();
        let encoder = DataFileEncoder::try_new_with_compression(
            file_fields,
            &spec.format,
            &spec.compression,
            options,
        )?;
        let stats = StatsCollector::for_key_value(
            plain_key_fields,
            &file_fields[k + 2..],
            options,
            level,
            changelog,
        )?;
        Ok(KvFileBuilder {
            name,
            encoder,
            stats,
            key_types: file_fields[..k]
                .iter()
                .map(|f| f.data_type.clone())
                .collect(),
            min_key: None,
            max_key: None,
            min_seq: i64::MAX,
            max_seq: i64::MIN,
            deletes: 0,
            rows: 0,
            refs: managed.map(|p| (p, SidecarCollector::default())),
            parts: FileParts::default(),
        })
    }

    /// Append a sorted batch in the file layout.
    ///
    /// # Errors
    /// An encoding failure, or a managed value that is not a blob descriptor.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let k = self.key_types.len();
        let key_cols: Vec<ArrayRef> = batch.columns()[..k].to_vec();
        let keys = BinaryRowEncoder::try_new(&key_cols, &self.key_types)?;
        if self.min_key.is_none() {
            self.min_key = Some(keys.encode(0)?);
        }
        self.max_key = Some(keys.encode(n - 1)?);
        let seq = batch.column(k).as_primitive::<Int64Type>();
        for s in seq.values().iter() {
            self.min_seq = self.min_seq.min(*s);
            self.max_seq = self.max_seq.max(*s);
        }
        let kinds = batch.column(k + 1).as_primitive::<Int8Type>();
        self.deletes += kinds
            .values()
            .iter()
            .filter(|b| **b == 1 || **b == 3)
            .count() as i64;
        self.rows += n as i64;
        if let Some((positions, refs)) = &mut self.refs {
            refs.add_batch(batch, k, positions)?;
        }
        self.stats.update(batch.columns())?;
        self.encoder.write(batch)
    }

    /// After a write: the next part of the file to send while the rest is encoded, once the
    /// encoder's laid-out bytes reach `part_bytes` (see [`FileParts`]); `place` gives the
    /// path and `_EXTERNAL_PATH` at the first part.
    ///
    /// # Errors
    /// A failure flushing the encoder.
    pub(crate) fn next_part(
        &mut self,
        part_bytes: usize,
        place: impl FnOnce() -> (String, Option<String>),
    ) -> Result<Option<FileToPut>> {
        self.parts.next_part(&mut self.encoder, part_bytes, place)
    }

    /// The file's path once a part of it went out.
    pub(crate) fn parts_path(&self) -> Option<&str> {
        self.parts.path()
    }

    /// True for a data file of a managed BLOB table (it gets a sidecar and stays in the
    /// bucket directory).
    pub(crate) fn has_refs(&self) -> bool {
        self.refs.is_some()
    }

    /// The encoder's estimate of the file's size so far, in bytes.
    pub(crate) fn estimated_size_bytes(&self) -> u64 {
        self.encoder.estimated_size_bytes()
    }

    /// Finish the file: its metadata (`level`, `file_source`; no extra files, no external
    /// path: the caller places the file, or finds it placed in the returned parts), its bytes
    /// not sent as parts, and the pack references of its rows (managed BLOB tables).
    ///
    /// # Errors
    /// An encoding or statistics failure.
    pub(crate) fn finish(
        self,
        level: i32,
        file_source: FileSource,
        schema_id: i64,
        time_millis: i64,
    ) -> Result<FinishedKvFile> {
        let (value_stats, value_stats_cols) = self.stats.finish()?;
        let key_stats = self.stats.finish_key_stats()?;
        let tail = self.encoder.finish()?;
        let empty = self.rows == 0;
        let meta = DataFileMeta {
            file_name: self.name,
            file_size: self.parts.file_size(&tail) as i64,
            row_count: self.rows,
            min_key: self.min_key.unwrap_or_else(BinaryRow::empty),
            max_key: self.max_key.unwrap_or_else(BinaryRow::empty),
            key_stats,
            value_stats: if empty {
                SimpleStats::empty()
            } else {
                value_stats
            },
            min_sequence_number: if empty { 0 } else { self.min_seq },
            max_sequence_number: if empty { 0 } else { self.max_seq },
            schema_id,
            level,
            extra_files: Vec::new(),
            creation_time_millis: Some(time_millis),
            delete_row_count: Some(self.deletes),
            embedded_index: None,
            file_source: Some(file_source),
            value_stats_cols,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        };
        Ok(FinishedKvFile {
            meta,
            tail,
            refs: self.refs.map(|(_, r)| r),
            parts: self.parts,
        })
    }
}

/// Names of the changelog files of one bucket writer.
///
/// Java keeps one path factory per format: when the changelog format is the data files'
/// format, changelog files share the data files' UUID and counter (`data-U-0.parquet`,
/// `changelog-U-1.parquet`, …); otherwise they get their own UUID and counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChangelogNames {
    /// Same path factory as the data files: `<changelog prefix><data uuid>-`.
    Shared {
        /// `<changelog-file.prefix><uuid>-`.
        prefix: String,
    },
    /// A path factory of its own.
    Own {
        /// `<changelog-file.prefix><uuid>-`.
        prefix: String,
        /// The next `n`.
        count: u32,
    },
}

/// `changelog-file.prefix`, default `changelog-`.
pub(crate) fn changelog_prefix(options: &CoreOptions) -> &str {
    options
        .get(CHANGELOG_FILE_PREFIX)
        .unwrap_or(crate::spec::file_names::CHANGELOG_FILE_PREFIX)
}

/// The value for `level` of a `level:value,...` option.
fn level_option(options: &CoreOptions, key: &str, level: i32) -> Result<Option<String>> {
    let Some(raw) = options.get(key) else {
        return Ok(None);
    };
    for entry in raw.split(',').filter(|e| !e.trim().is_empty()) {
        let parsed = entry
            .split_once(':')
            .and_then(|(k, v)| k.trim().parse::<i32>().ok().map(|k| (k, v)));
        let Some((k, v)) = parsed else {
            return Err(crate::error::Error::invalid(format!(
                "option {key} = '{raw}': expected <level>:<value>,..."
            )));
        };
        if k == level {
            return Ok(Some(v.trim().to_owned()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
