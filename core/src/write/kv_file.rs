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

use crate::error::Result;
use crate::spec::CoreOptions;

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
    options.get(CHANGELOG_FILE_PREFIX).unwrap_or("changelog-")
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
