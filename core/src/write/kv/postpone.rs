//! Writing postpone-bucket primary-key tables (`bucket = -2`).
//!
//! Source: Java `org.apache.paimon.postpone.PostponeBucketFileStoreWrite` and
//! `PostponeBucketWriter`, `org.apache.paimon.KeyValueFileStore#newWrite`,
//! `org.apache.paimon.table.PrimaryKeyFileStoreTable#newWrite`.
//!
//! A write of a postpone-bucket table with `postpone.batch-write-fixed-bucket` = `false` (or
//! a streaming write in Java; batch writes default to real buckets, see
//! [`crate::write::kv::postpone_fixed`]) does not pick buckets: every row goes to the directory `bucket-postpone` (bucket `-2`, `_TOTAL_BUCKETS = -2` in the commit message) of
//! its partition, and a later compaction ([`crate::compact::pk::postpone`]) moves the rows
//! into real buckets.
//! Until then batch reads, which only read real buckets, do not see them.
//!
//! What the writer does (as Java's):
//! * **no sort and no merge**: records are written in input order, with their own row kinds
//!   (`ignore-delete` still drops retractions first, as Java's `RowKindFilter`);
//! * **sequence number `-1`** for every record (Java `KeyValue.UNKNOWN_SEQUENCE`: the postpone
//!   writer never assigns one; the compaction reads the files in order and gives the rows new
//!   sequence numbers). pypaimon 2.1.0 writes `0, 1, …` instead;
//! * **Avro files with `metadata.stats-mode = none`** ([`postpone_bucket_options`]) when the
//!   key-value row converts to Avro, else the table's format and mode;
//! * file names `<data-file.prefix>-u-<commitUser>-s-<writeId>-w-<uuid>-<n>.<format>`: the
//!   commit user of the commit the files go to, and a write id, which a batch write (no write
//!   id given) draws at random in `[0, i32::MAX)` once per table write; `<uuid>-<n>` as for
//!   every data file (one UUID per bucket writer). With the default prefix names start with
//!   `data--u-`.

use crate::encode::DataFileEncoder;
use crate::encode::stats::postpone_bucket_options;
use crate::error::{Error, Result};
use crate::spec::{CoreOptions, DataField};
use crate::util::NameSource;

/// What every bucket writer of one postpone-bucket table write shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PostponeWrite {
    /// The commit user in the file names.
    pub(crate) commit_user: String,
    /// The write id in the file names.
    pub(crate) write_id: i32,
    /// The options the files are written with (Avro, stats mode none; or the table's).
    pub(crate) options: CoreOptions,
    /// Lower-case format of the files.
    pub(crate) format: String,
}

impl PostponeWrite {
    /// The writer state for a table with these key-value `file_fields` and table `options`;
    /// the commit user and write id come from `names` until
    /// [`PostponeWrite::with_commit_user`].
    pub(crate) fn new(
        file_fields: &[DataField],
        options: &CoreOptions,
        names: &mut NameSource,
    ) -> Self {
        let avro = postpone_bucket_options(options);
        // Java keeps the table's format and stats mode when Avro cannot hold the row.
        let options = match DataFileEncoder::try_new(file_fields, "avro", &avro) {
            Ok(_) => avro,
            Err(_) => options.clone(),
        };
        let format = options.file_format();
        PostponeWrite {
            commit_user: names.uuid(),
            write_id: (names.next_u64() % i32::MAX as u64) as i32,
            options,
            format,
        }
    }

    /// Use `commit_user` in the file names.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty user.
    pub(crate) fn with_commit_user(mut self, commit_user: &str) -> Result<Self> {
        if commit_user.is_empty() {
            return Err(Error::invalid("the commit user is empty"));
        }
        self.commit_user = commit_user.to_owned();
        Ok(self)
    }

    /// `<data-file.prefix>-u-<commitUser>-s-<writeId>-w-`: the data file prefix of every
    /// bucket writer of this write (the UUID and counter follow).
    pub(crate) fn file_prefix(&self, data_file_prefix: &str) -> String {
        format!(
            "{data_file_prefix}-u-{}-s-{}-w-",
            self.commit_user, self.write_id
        )
    }
}

#[cfg(test)]
mod tests;
