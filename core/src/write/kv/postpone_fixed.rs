//! Batch writes of postpone-bucket tables straight into real buckets
//! (`postpone.batch-write-fixed-bucket`, default `true`).
//!
//! Java's engines write a batch job into a postpone-bucket table (`bucket = -2`) as a
//! fixed-bucket table whose bucket count is chosen per partition, so the rows are readable
//! without a compaction; streaming writes, and batch writes with the option `false`, write
//! `bucket-postpone` files ([`crate::write::kv::postpone`]). What Java 2.0 does, and this does
//! (a [`crate::write::table_write::TableWrite`] turned into this mode with
//! `TableWrite::into_postpone_fixed_bucket`):
//!
//! * **Bucket count of a partition** ([`PostponeBucketPlanner`]): the `_TOTAL_BUCKETS` of
//!   the partition's real-bucket files when it has some (files written for two counts are
//!   an error); otherwise inferred from the rows the write brings to the partition, as
//!   Spark's batch writer does: with `postpone.target-row-num-per-bucket` = `T`,
//!   `ceil((rows + postpone rows) / T)`; else from their serialized size (the Paimon
//!   `BinaryRow` of every row, uncompressed), `ceil(size × (rows + postpone rows) / rows /
//!   postpone.target-size-per-bucket)` (default 1 GiB), where "postpone rows" are the rows of
//!   the partition's `bucket-postpone` files not yet compacted (none for an overwrite); at
//!   least 1 and at most `postpone.batch-write-fixed-bucket.max-parallelism` (default 2048).
//!   When that maximum is 1, and for an unpartitioned table that already has real-bucket
//!   files, nothing is inferred: 1 bucket (Spark's partition count, which a single writer
//!   has one of), or the known count. `postpone.default-bucket-num` is not used (it is the
//!   count of compactions).
//! * **Rows** go to `bucket = hash(bucket key) mod count` with the table's bucket function,
//!   into level-0 files, sorted and merged per key like any fixed-bucket write, sequence
//!   numbers continuing after the bucket's largest. The writer is write-only (Java's
//!   `PostponeUtils#tableForFixBucketWrite`): no compaction, also for lookup and
//!   deletion-vector tables (whose batch reads skip level 0 until a `compact`).
//! * **Commit messages** carry the partition's count as `_TOTAL_BUCKETS`; the commit checks
//!   appends for conflicts (Java's `appendCommitCheckConflict(true)`), so two writers that
//!   chose different counts for one new partition do not both commit.
//!
//! Rows of partitions whose count is not known yet are kept in memory until
//! `prepare_commit` (Spark persists the input for the same reason).
//!
//! Source: Java 2.0 `PaimonSparkWriter#preparePostponeBucketAssignment`,
//! `computeBucketNumBySize`, `computeBucketNumByRowCount`, `PostponeUtils`
//! (`getKnownNumBuckets`, `getPostponeRowCounts`, `tableForFixBucketWrite`,
//! `tableForCommit`), Flink's `PostponeBatchWriteOperator` and `FlinkSinkBuilder`.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::spec::options::parse_memory_size;
use crate::spec::partition::POSTPONE_BUCKET;
use crate::spec::{CoreOptions, ManifestEntry, TableSchema};

/// `postpone.batch-write-fixed-bucket`.
pub const BATCH_WRITE_FIXED_BUCKET: &str = "postpone.batch-write-fixed-bucket";
/// `postpone.batch-write-fixed-bucket.max-parallelism`.
pub const MAX_PARALLELISM: &str = "postpone.batch-write-fixed-bucket.max-parallelism";
/// `postpone.target-row-num-per-bucket`.
pub const TARGET_ROW_NUM: &str = "postpone.target-row-num-per-bucket";
/// `postpone.target-size-per-bucket`.
pub const TARGET_SIZE: &str = "postpone.target-size-per-bucket";

/// Whether a batch write of `schema` goes straight into real buckets: a primary-key table
/// with `bucket = -2` and `postpone.batch-write-fixed-bucket` (default `true`).
///
/// # Errors
/// [`Error::Invalid`] naming the option when it is not a boolean, or `bucket` is invalid.
pub fn writes_fixed_buckets(schema: &TableSchema) -> Result<bool> {
    let options = schema.core_options();
    if !schema.is_primary_key_table() || options.bucket()? != POSTPONE_BUCKET {
        return Ok(false);
    }
    match options.get(BATCH_WRITE_FIXED_BUCKET).map(str::trim) {
        None => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(Error::invalid(format!(
            "option '{BATCH_WRITE_FIXED_BUCKET}' = '{v}' is not a boolean"
        ))),
    }
}

/// Rows and serialized bytes a write brings to one partition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartitionStats {
    /// Rows.
    pub rows: i64,
    /// Σ size of the rows as Paimon `BinaryRow`s (the table's columns), bytes.
    pub serialized_bytes: i64,
}

/// The bucket count of each partition of a fixed-bucket batch write of a postpone-bucket
/// table (see the module docs). Partitions are keyed by their serialized `BinaryRow`.
///
/// Source: Java 2.0 `PaimonSparkWriter#preparePostponeBucketAssignment`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostponeBucketPlanner {
    /// Counts known (real-bucket files) or already planned.
    counts: BTreeMap<Vec<u8>, i32>,
    /// Rows of the `bucket-postpone` files per partition.
    postpone_rows: BTreeMap<Vec<u8>, i64>,
    target_rows: Option<i64>,
    target_size: i64,
    max_buckets: i32,
    /// Infer counts from the rows written (else [`Self::default_buckets`]).
    infer: bool,
}

impl PostponeBucketPlanner {
    /// The planner of a write to `schema` after the live `entries` of the latest snapshot
    /// (real-bucket and postpone files); `overwrite`: the postpone rows are not counted.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the option for a non-positive or malformed
    /// `postpone.batch-write-fixed-bucket.max-parallelism`,
    /// `postpone.target-row-num-per-bucket` or `postpone.target-size-per-bucket`;
    /// [`Error::Corrupt`] when a partition's real-bucket files were written for different
    /// bucket counts.
    pub fn try_new(
        schema: &TableSchema,
        entries: &[ManifestEntry],
        overwrite: bool,
    ) -> Result<Self> {
        let options = schema.core_options();
        let max_buckets = positive_int(&options, MAX_PARALLELISM, 2048)?;
        let target_rows = options
            .get(TARGET_ROW_NUM)
            .map(|v| {
                v.trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "option '{TARGET_ROW_NUM}' = '{v}': Option \
                             'postpone.target-row-num-per-bucket' must be greater than 0."
                        ))
                    })
            })
            .transpose()?;
        let target_size = match options.get(TARGET_SIZE) {
            None => 1 << 30,
            Some(v) => parse_memory_size(v)
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "option '{TARGET_SIZE}' = '{v}': Option \
                         'postpone.target-size-per-bucket' must be greater than 0."
                    ))
                })?,
        };
        let mut counts: BTreeMap<Vec<u8>, i32> = BTreeMap::new();
        let mut postpone_rows: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
        for e in entries {
            let key = e.partition.to_serialized();
            if e.bucket == POSTPONE_BUCKET {
                if !overwrite {
                    *postpone_rows.entry(key).or_default() += e.file.row_count;
                }
                continue;
            }
            if e.total_buckets < 0 {
                continue;
            }
            match counts.insert(key, e.total_buckets) {
                Some(old) if old != e.total_buckets => {
                    return Err(Error::corrupt(
                        "manifest",
                        "manifest",
                        format!(
                            "a partition has files written for {old} and for {} buckets",
                            e.total_buckets
                        ),
                    ));
                }
                _ => {}
            }
        }
        let unpartitioned_known = schema.partition_keys.is_empty() && !counts.is_empty();
        Ok(Self {
            counts,
            postpone_rows,
            target_rows,
            target_size,
            max_buckets,
            infer: max_buckets != 1 && !unpartitioned_known,
        })
    }

    /// The count of a partition without real-bucket files when nothing is inferred (Spark's
    /// `min(input partitions, max)`; one writer).
    fn default_buckets(&self) -> i32 {
        1
    }

    /// The bucket count of `partition` (serialized) if it is known or planned; without
    /// inference, the default for any other partition.
    pub fn count(&self, partition: &[u8]) -> Option<i32> {
        match self.counts.get(partition) {
            Some(n) => Some(*n),
            None if !self.infer => Some(self.default_buckets()),
            None => None,
        }
    }

    /// Forget the rows of the postpone files (an overwrite replaces them; Spark counts none
    /// then).
    pub fn ignore_postpone_rows(&mut self) {
        self.postpone_rows.clear();
    }

    /// Whether the rows' serialized sizes are needed ([`Self::plan`] by size).
    pub fn needs_sizes(&self) -> bool {
        self.infer && self.target_rows.is_none()
    }

    /// Plan the partitions of `stats` (the write's rows of partitions without a count):
    /// afterwards [`Self::count`] knows them.
    pub fn plan(&mut self, stats: &BTreeMap<Vec<u8>, PartitionStats>) {
        for (partition, s) in stats {
            if self.count(partition).is_some() {
                continue;
            }
            let postpone = self.postpone_rows.get(partition).copied().unwrap_or(0);
            let n = match self.target_rows {
                Some(t) => buckets_by_rows(s.rows.saturating_add(postpone), t, self.max_buckets),
                None => buckets_by_size(*s, postpone, self.target_size, self.max_buckets),
            };
            self.counts.insert(partition.clone(), n);
        }
    }
}

/// `ceil(rows / target)`, at least 1, at most `max` (Java `computeBucketNumByRowCount`).
fn buckets_by_rows(rows: i64, target: i64, max: i32) -> i32 {
    let n = if rows <= 0 {
        1
    } else {
        (rows - 1) / target + 1
    };
    n.min(i64::from(max)) as i32
}

/// The bucket count by serialized size: the postpone rows are estimated at the average
/// size of the written rows (Java `PaimonSparkWriter#computeBucketNumBySize`).
fn buckets_by_size(stats: PartitionStats, postpone_rows: i64, target: i64, max: i32) -> i32 {
    let rows = i128::from(stats.rows.max(1));
    let numerator =
        i128::from(stats.serialized_bytes) * (i128::from(stats.rows) + i128::from(postpone_rows));
    let estimated = (numerator + rows - 1) / rows;
    let n = if estimated == 0 {
        1
    } else {
        (estimated - 1) / i128::from(target) + 1
    };
    n.min(i128::from(max)) as i32
}

fn positive_int(options: &CoreOptions, key: &str, default: i32) -> Result<i32> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                Error::invalid(format!("option '{key}' = '{v}' must be a positive integer"))
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(partitioned: bool, options: &str) -> TableSchema {
        let json = format!(
            r#"{{"fields": [{{"name": "dt", "type": "STRING"}}, {{"name": "k", "type": "INT NOT NULL"}}],
            "partitionKeys": {}, "primaryKeys": {},
            "options": {{"bucket": "-2"{options}}}}}"#,
            if partitioned { r#"["dt"]"# } else { "[]" },
            if partitioned {
                r#"["dt", "k"]"#
            } else {
                r#"["k"]"#
            },
        );
        crate::schema::create::new_table_schema(json.as_bytes(), 0).unwrap()
    }

    fn entry(partition: &str, bucket: i32, total: i32, rows: i64) -> ManifestEntry {
        use crate::spec::{BinaryRow, DataType, Datum};
        let p = BinaryRow::encode(
            &[Datum::String(partition.into())],
            &[DataType::parse_sql("STRING").unwrap()],
        )
        .unwrap();
        let file = crate::spec::DataFileMeta {
            file_name: "f".into(),
            file_size: 1,
            row_count: rows,
            min_key: BinaryRow::empty(),
            max_key: BinaryRow::empty(),
            key_stats: crate::spec::SimpleStats::empty(),
            value_stats: crate::spec::SimpleStats::empty(),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id: 0,
            level: 0,
            extra_files: Vec::new(),
            creation_time_millis: Some(0),
            delete_row_count: Some(0),
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        };
        ManifestEntry {
            kind: crate::spec::FileKind::Add,
            partition: p,
            bucket,
            total_buckets: total,
            file,
        }
    }

    fn key(partition: &str) -> Vec<u8> {
        use crate::spec::{BinaryRow, DataType, Datum};
        BinaryRow::encode(
            &[Datum::String(partition.into())],
            &[DataType::parse_sql("STRING").unwrap()],
        )
        .unwrap()
        .to_serialized()
    }

    #[test]
    fn option_default_and_values() {
        assert!(writes_fixed_buckets(&schema(true, "")).unwrap());
        assert!(
            !writes_fixed_buckets(&schema(
                true,
                r#", "postpone.batch-write-fixed-bucket": "false""#
            ))
            .unwrap()
        );
        let e = writes_fixed_buckets(&schema(
            true,
            r#", "postpone.batch-write-fixed-bucket": "yes""#,
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("'postpone.batch-write-fixed-bucket' = 'yes'"),
            "{e}"
        );
    }

    #[test]
    fn counts_as_spark_plans_them() {
        // Known counts win; the postpone rows of a partition count with its new rows.
        let entries = [
            entry("a", 0, 3, 10),
            entry("a", 2, 3, 10),
            entry("b", POSTPONE_BUCKET, POSTPONE_BUCKET, 150),
        ];
        let s = schema(true, r#", "postpone.target-row-num-per-bucket": "100""#);
        let mut p = PostponeBucketPlanner::try_new(&s, &entries, false).unwrap();
        assert_eq!(p.count(&key("a")), Some(3));
        assert_eq!(p.count(&key("b")), None);
        assert!(!p.needs_sizes());
        let stats = |rows, bytes| PartitionStats {
            rows,
            serialized_bytes: bytes,
        };
        p.plan(&BTreeMap::from([
            (key("a"), stats(1000, 0)),
            (key("b"), stats(51, 0)),
            (key("c"), stats(100, 0)),
        ]));
        // a: known; b: 51 + 150 rows → 3; c: 100 rows → 1.
        assert_eq!(p.count(&key("a")), Some(3));
        assert_eq!(p.count(&key("b")), Some(3));
        assert_eq!(p.count(&key("c")), Some(1));
        // An overwrite does not count the postpone rows.
        let mut p = PostponeBucketPlanner::try_new(&s, &entries, true).unwrap();
        p.plan(&BTreeMap::from([(key("b"), stats(51, 0))]));
        assert_eq!(p.count(&key("b")), Some(1));

        // By size (default 1 GiB per bucket), capped by max-parallelism.
        let s = schema(
            true,
            r#", "postpone.target-size-per-bucket": "1 kb",
            "postpone.batch-write-fixed-bucket.max-parallelism": "4""#,
        );
        let mut p = PostponeBucketPlanner::try_new(&s, &entries, false).unwrap();
        assert!(p.needs_sizes());
        p.plan(&BTreeMap::from([
            // 10 rows of 150 bytes, and 150 postpone rows estimated at 150 bytes: 24000 B.
            (key("b"), stats(10, 1500)),
            (key("c"), stats(10, 2048)),
            (key("d"), stats(10, 2049)),
            (key("e"), stats(1, 0)),
        ]));
        assert_eq!(p.count(&key("b")), Some(4));
        assert_eq!(p.count(&key("c")), Some(2));
        assert_eq!(p.count(&key("d")), Some(3));
        assert_eq!(p.count(&key("e")), Some(1));
        assert_eq!(buckets_by_size(stats(10, 1500), 150, 1024, 2048), 24);

        // Max parallelism 1: no inference, every new partition gets 1 bucket.
        let s = schema(
            true,
            r#", "postpone.batch-write-fixed-bucket.max-parallelism": "1""#,
        );
        let p = PostponeBucketPlanner::try_new(&s, &entries, false).unwrap();
        assert_eq!(p.count(&key("z")), Some(1));
        assert_eq!(p.count(&key("a")), Some(3));
    }

    #[test]
    fn bad_options_and_mixed_counts() {
        for (opt, name) in [
            (
                r#", "postpone.batch-write-fixed-bucket.max-parallelism": "0""#,
                MAX_PARALLELISM,
            ),
            (
                r#", "postpone.target-row-num-per-bucket": "-5""#,
                TARGET_ROW_NUM,
            ),
            (r#", "postpone.target-size-per-bucket": "0 b""#, TARGET_SIZE),
        ] {
            let e = PostponeBucketPlanner::try_new(&schema(true, opt), &[], false)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("'{name}'")), "{e}");
        }
        let e = PostponeBucketPlanner::try_new(
            &schema(true, ""),
            &[entry("a", 0, 3, 1), entry("a", 1, 4, 1)],
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("written for 3 and for 4 buckets"), "{e}");
    }
}
