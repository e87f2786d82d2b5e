//! Compaction of postpone-bucket primary-key tables (`bucket = -2`): the rows of the
//! `bucket-postpone` files move into real buckets, where batch reads see them.
//!
//! Source: Java `org.apache.paimon.table.PostponeUtils` (bucket count of a partition, level-0
//! buckets), the Flink postpone compaction (`CompactAction#buildForPostponeBucketCompaction`,
//! `PostponeBucketCompactSplitSource`, `PostponeBucketCompactOperator`,
//! `RemovePostponeBucketFilesOperator`) and `org.apache.paimon.postpone.BucketFiles`.
//!
//! What Java does, and this module plans (the host drives it, see `paimon-native`'s
//! `Table::compact`):
//! 1. On the latest snapshot, the partitions to compact are those with postpone files and
//!    those whose real buckets hold level-0 files ([`plan_postpone_compaction`]).
//! 2. Each partition gets a bucket count: the `_TOTAL_BUCKETS` its real-bucket files already
//!    have (files written for two counts are an error); else, with
//!    `postpone.target-row-num-per-bucket`, `ceil(postpone rows / target)`; else
//!    `postpone.default-bucket-num` (default 1).
//! 3. The postpone files are replayed in creation-time order (ties keep manifest order), each
//!    file's records in file order with their row kinds ([`read_postpone_file`]), into a
//!    fixed-bucket writer of that bucket count ([`schema_with_buckets`]) that continues after
//!    the bucket's largest sequence number: the replay gives the records new sequence
//!    numbers, so a later write of a key wins as it would have in a fixed-bucket table.
//! 4. Every bucket the replay wrote to, and every bucket with level-0 files, is compacted once
//!    with the table's strategy (Java's `compact(partition, bucket, false)`).
//! 5. One message per real bucket puts everything in the compact increment
//!    ([`fold_bucket_message`]: new files not compacted away, compaction outputs, changelog);
//!    one message per partition removes its postpone files ([`remove_postpone_files`]). All
//!    are committed together as one `COMPACT` snapshot.
//!
//! Deletion-vector tables: the bucket compactions keep the buckets' vectors as for any
//! deletion-vector table (level 0 is forced up, replaced rows above it are marked).
//!
//! Managed BLOB columns: the postpone files hold blob descriptors into the packs of
//! `bucket-postpone`; the replay hands them to the fixed-bucket writer as file references
//! (see [`crate::blob::references`]), which copies their bytes into new packs of the real
//! buckets (streamed, never held in memory), as Java's `MergeTreeWriter` externalizes every
//! record it writes, the replayed ones included. The postpone packs are left to pack
//! collection once no snapshot names the postpone files.
//!
//! Record-level expiry (`record-level.expire-time`): the replay writes every record (as
//! Java's writer does); the bucket compactions of step 4 drop the expired ones as any
//! primary-key compaction does ([`crate::read::expire`]).
//!
//! Unsupported (errors saying so): external data paths with `index-file-in-data-file-dir`.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use arrow_schema::{DataType as ArrowType, Field, Schema};

use crate::commit::changes::PartitionFilter;
use crate::commit::{CommitMessage, CompactIncrement};
use crate::error::{Error, Result};
use crate::io::Io;
use crate::read::{FileColumn, FileRead, FileReadSpec};
use crate::spec::partition::{POSTPONE_BUCKET, PartitionNaming, bucket_path, partition_path};
use crate::spec::special_fields::{ROW_KIND_COLUMN, VALUE_KIND};
use crate::spec::{BinaryRow, DataField, DataFileMeta, ManifestEntry, TableSchema};

/// One partition of a postpone-bucket table to compact.
#[derive(Debug, Clone, PartialEq)]
pub struct PostponePartition {
    /// The partition.
    pub partition: BinaryRow,
    /// The bucket count the partition's rows go to.
    pub total_buckets: i32,
    /// Directory of the partition's postpone bucket, relative to the table root.
    pub postpone_bucket_path: String,
    /// The postpone files, in replay order (creation time, then manifest order).
    pub postpone_files: Vec<DataFileMeta>,
    /// `_TOTAL_BUCKETS` of the postpone files' entries (Java writes `-2`).
    pub postpone_total_buckets: i32,
    /// The live files of the partition's real buckets.
    pub real_entries: Vec<ManifestEntry>,
    /// Real buckets holding level-0 files (compacted even when the replay writes none).
    pub level0_buckets: Vec<i32>,
}

impl PostponePartition {
    /// Σ rows of the postpone files.
    pub fn postpone_rows(&self) -> i64 {
        self.postpone_files.iter().map(|f| f.row_count).sum()
    }
}

/// Refuse postpone-bucket tables whose compaction is not implemented.
///
/// # Errors
/// [`Error::Invalid`] for a table that is not a postpone-bucket primary-key table;
/// [`Error::Unsupported`] naming the feature (external data paths with
/// `index-file-in-data-file-dir`); [`Error::Invalid`] for bad record-level expiry options.
pub fn check_postpone_supported(schema: &TableSchema) -> Result<()> {
    let options = schema.core_options();
    if !schema.is_primary_key_table() || options.bucket()? != POSTPONE_BUCKET {
        return Err(Error::invalid(
            "postpone compaction needs a primary-key table with 'bucket' = -2",
        ));
    }
    crate::read::expire::RecordLevelExpire::try_from_schema(schema, 0)?;
    super::planner::check_compaction_options(&options)
}

/// Plan the compaction of a postpone-bucket table from the live `Add` entries of a snapshot
/// (see the module docs): one [`PostponePartition`] per partition with postpone files or
/// real-bucket level-0 files, in partition-bytes order, restricted to partitions matching
/// `partition_spec` (`key → value` text; empty: all).
///
/// # Errors
/// As [`check_postpone_supported`]; [`Error::Invalid`] for bad options or a bad partition
/// spec; [`Error::Corrupt`] when a partition's real-bucket files were written for different
/// bucket counts, or a partition does not decode.
pub fn plan_postpone_compaction(
    schema: &TableSchema,
    entries: &[ManifestEntry],
    partition_spec: &BTreeMap<String, String>,
) -> Result<Vec<PostponePartition>> {
    check_postpone_supported(schema)?;
    let options = schema.core_options();
    let default_buckets = options.postpone_default_bucket_num()?;
    let target_rows = options.postpone_target_row_num_per_bucket()?;
    let partition_fields = partition_fields(schema)?;
    let filter = PartitionFilter::from_spec(
        partition_spec,
        &partition_fields,
        options.partition_default_name(),
    )?;

    struct Acc {
        partition: BinaryRow,
        known: Option<i32>,
        postpone: Vec<(usize, DataFileMeta)>,
        postpone_total: i32,
        real: Vec<ManifestEntry>,
        level0: Vec<i32>,
    }
    let mut by_partition: BTreeMap<Vec<u8>, Acc> = BTreeMap::new();
    for (order, e) in entries.iter().enumerate() {
        if !filter.test(&e.partition, &partition_fields)? {
            continue;
        }
        let acc = by_partition
            .entry(e.partition.to_serialized())
            .or_insert_with(|| Acc {
                partition: e.partition.clone(),
                known: None,
                postpone: Vec::new(),
                postpone_total: POSTPONE_BUCKET,
                real: Vec::new(),
                level0: Vec::new(),
            });
        if e.bucket == POSTPONE_BUCKET {
            acc.postpone.push((order, e.file.clone()));
            acc.postpone_total = e.total_buckets;
            continue;
        }
        if e.total_buckets >= 0 {
            match acc.known {
                None => acc.known = Some(e.total_buckets),
                Some(n) if n != e.total_buckets => {
                    return Err(Error::corrupt(
                        e.file.file_name.clone(),
                        "manifest entry",
                        format!(
                            "partition '{}' has files written for {n} and for {} buckets",
                            describe_partition(&e.partition, &partition_fields, schema)?,
                            e.total_buckets,
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        if e.bucket >= 0
            && e.total_buckets > 0
            && e.file.level == 0
            && !acc.level0.contains(&e.bucket)
        {
            acc.level0.push(e.bucket);
        }
        acc.real.push(e.clone());
    }

    let naming = naming(&options)?;
    let data_root = options
        .data_file_path_directory()
        .unwrap_or_default()
        .to_owned();
    let mut out = Vec::new();
    for acc in by_partition.into_values() {
        if acc.postpone.is_empty() && acc.level0.is_empty() {
            continue;
        }
        let mut postpone = acc.postpone;
        postpone.sort_by_key(|(order, f)| (f.creation_time_millis.unwrap_or(i64::MIN), *order));
        let postpone_files: Vec<DataFileMeta> = postpone.into_iter().map(|(_, f)| f).collect();
        let total_buckets = match (acc.known, target_rows) {
            (Some(n), _) => n,
            (None, Some(target)) => {
                let rows: i64 = postpone_files.iter().map(|f| f.row_count).sum();
                buckets_for_rows(rows, target)?
            }
            (None, None) => default_buckets,
        };
        let ppath = partition_path(&partition_fields, &acc.partition, &naming)?;
        let mut level0 = acc.level0;
        level0.sort_unstable();
        out.push(PostponePartition {
            postpone_bucket_path: bucket_path(&data_root, &ppath, POSTPONE_BUCKET),
            partition: acc.partition,
            total_buckets,
            postpone_files,
            postpone_total_buckets: acc.postpone_total,
            real_entries: acc.real,
            level0_buckets: level0,
        });
    }
    Ok(out)
}

/// Java `PostponeUtils.computeBucketNumByRowCount`: `ceil(rows / target)`, at least 1.
fn buckets_for_rows(rows: i64, target: i64) -> Result<i32> {
    let n = if rows <= 0 {
        1
    } else {
        (rows - 1) / target + 1
    };
    i32::try_from(n).map_err(|_| {
        Error::invalid(format!(
            "postpone compaction would give a partition {n} buckets (more than {}): raise \
             'postpone.target-row-num-per-bucket'",
            i32::MAX
        ))
    })
}

/// `schema` with `bucket` = `total_buckets` and `write-only` = false: the fixed-bucket table
/// the replay writes and the bucket compactions plan with (Java
/// `PostponeUtils.tableForPostponeCompact`).
pub fn schema_with_buckets(schema: &TableSchema, total_buckets: i32) -> TableSchema {
    let mut out = schema.clone();
    out.options
        .insert("bucket".to_owned(), total_buckets.to_string());
    out.options
        .insert("write-only".to_owned(), "false".to_owned());
    out
}

/// Read one postpone file of `partition` (written with `file_schema`) as input of a table
/// writer of `schema` (the table's latest schema): every column of `schema` in order, then
/// `_ROW_KIND` (Int8, the records' value kinds), rows in file order, nothing merged.
///
/// # Errors
/// Read and decode errors naming the file.
pub async fn read_postpone_file<T: Send + 'static>(
    io: &Io<T>,
    partition: &PostponePartition,
    file: &DataFileMeta,
    file_schema: &TableSchema,
    schema: &TableSchema,
    batch_size: usize,
) -> Result<Vec<RecordBatch>> {
    let mut columns: Vec<FileColumn> = schema
        .fields
        .iter()
        .cloned()
        .map(FileColumn::Field)
        .collect();
    columns.push(FileColumn::System(VALUE_KIND));
    let spec = FileReadSpec::try_new(columns)?;
    let mut fields: Vec<Field> = spec.schema.fields()[..schema.fields.len()]
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new(ROW_KIND_COLUMN, ArrowType::Int8, false));
    let out_schema = std::sync::Arc::new(Schema::new(fields));
    let path = file.path_in_bucket(&partition.postpone_bucket_path);
    let mut read = FileRead::open(io, &path, file, file_schema, &spec, None, batch_size).await?;
    let mut out = Vec::new();
    while let Some(b) = read.next_batch(io).await? {
        let batch = RecordBatch::try_new(out_schema.clone(), b.columns().to_vec())
            .map_err(|e| Error::arrow(format!("postpone data file {path}"), e))?;
        out.push(batch);
    }
    Ok(out)
}

/// One real bucket's message after the replay and its compaction, in Java's `BucketFiles`
/// form: an empty data increment; `compact_before` = the bucket's old files the compaction
/// consumed; `compact_after` = the replay's new files that the compaction did not consume,
/// then the compaction's outputs; changelog and index files of both increments. Also
/// returns the new files the compaction consumed (to delete: no snapshot will name them).
pub fn fold_bucket_message(message: CommitMessage) -> (CommitMessage, Vec<DataFileMeta>) {
    let CommitMessage {
        partition,
        bucket,
        total_buckets,
        data_increment: data,
        compact_increment: compact,
    } = message;
    let mut new_files = data.new_files;
    let mut compact_before = Vec::new();
    let mut consumed = Vec::new();
    for f in compact.compact_before {
        match new_files.iter().position(|n| n.file_name == f.file_name) {
            Some(i) => consumed.push(new_files.remove(i)),
            None => compact_before.push(f),
        }
    }
    // A consumed new file that comes out again (an upgrade to another level) stays.
    consumed.retain(|c| {
        !compact
            .compact_after
            .iter()
            .any(|a| a.file_name == c.file_name)
    });
    let mut compact_after = new_files;
    compact_after.extend(compact.compact_after);
    let mut changelog_files = data.changelog_files;
    changelog_files.extend(compact.changelog_files);
    let mut new_index_files = data.new_index_files;
    new_index_files.extend(compact.new_index_files);
    let mut deleted_index_files = data.deleted_index_files;
    deleted_index_files.extend(compact.deleted_index_files);
    (
        CommitMessage {
            partition,
            bucket,
            total_buckets,
            data_increment: Default::default(),
            compact_increment: CompactIncrement {
                compact_before,
                compact_after,
                changelog_files,
                new_index_files,
                deleted_index_files,
            },
        },
        consumed,
    )
}

/// The message removing `partition`'s postpone files (a compact increment with only
/// `compact_before`; Java `RemovePostponeBucketFilesOperator`). `None` without postpone files.
pub fn remove_postpone_files(partition: &PostponePartition) -> Option<CommitMessage> {
    if partition.postpone_files.is_empty() {
        return None;
    }
    Some(CommitMessage {
        partition: partition.partition.clone(),
        bucket: POSTPONE_BUCKET,
        total_buckets: Some(partition.postpone_total_buckets),
        data_increment: Default::default(),
        compact_increment: CompactIncrement {
            compact_before: partition.postpone_files.clone(),
            ..Default::default()
        },
    })
}

/// Directory of real bucket `bucket` of `partition`, relative to the table root.
///
/// # Errors
/// [`Error::Corrupt`] when the partition does not decode; bad partition options.
pub fn real_bucket_path(
    schema: &TableSchema,
    partition: &BinaryRow,
    bucket: i32,
) -> Result<String> {
    let options = schema.core_options();
    let naming = naming(&options)?;
    let ppath = partition_path(&partition_fields(schema)?, partition, &naming)?;
    Ok(bucket_path(
        options.data_file_path_directory().unwrap_or_default(),
        &ppath,
        bucket,
    ))
}

fn partition_fields(schema: &TableSchema) -> Result<Vec<DataField>> {
    Ok(schema.partition_fields()?.into_iter().cloned().collect())
}

fn naming(options: &crate::spec::CoreOptions) -> Result<PartitionNaming> {
    options.partition_naming()
}

fn describe_partition(
    partition: &BinaryRow,
    fields: &[DataField],
    schema: &TableSchema,
) -> Result<String> {
    let options = schema.core_options();
    let naming = naming(&options)?;
    partition_path(fields, partition, &naming).map(|p| p.trim_end_matches('/').to_owned())
}

/// Partition values of `partition` as a JSON object (the `partition` of plan units and
/// reports).
///
/// # Errors
/// [`Error::Corrupt`] when the partition does not decode.
pub fn partition_json(
    schema: &TableSchema,
    partition: &BinaryRow,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    crate::compact::plan::partition_json(partition, &partition_fields(schema)?)
}

/// The `plan-compaction` summary of a postpone compaction: per partition, one unit of its
/// postpone files (bucket `-2`, output level 0: their rows go to level 0 of the real
/// buckets) and one unit per real bucket with level-0 files (its level-0 files; the bucket
/// is compacted with the table's strategy after the replay, so the output level is left
/// `None`).
///
/// # Errors
/// [`Error::Corrupt`] when a partition does not decode.
pub fn postpone_plan_summary(
    schema: &TableSchema,
    snapshot: Option<i64>,
    partitions: &[PostponePartition],
) -> Result<crate::compact::CompactionPlan> {
    let mut units = Vec::new();
    for p in partitions {
        let partition = partition_json(schema, &p.partition)?;
        if !p.postpone_files.is_empty() {
            units.push(crate::compact::plan::CompactionUnitSummary {
                partition: partition.clone(),
                bucket: POSTPONE_BUCKET,
                output_level: Some(0),
                upgrade: false,
                files: p
                    .postpone_files
                    .iter()
                    .map(|f| f.file_name.clone())
                    .collect(),
            });
        }
        for b in &p.level0_buckets {
            units.push(crate::compact::plan::CompactionUnitSummary {
                partition: partition.clone(),
                bucket: *b,
                output_level: None,
                upgrade: false,
                files: p
                    .real_entries
                    .iter()
                    .filter(|e| e.bucket == *b && e.file.level == 0)
                    .map(|e| e.file.file_name.clone())
                    .collect(),
            });
        }
    }
    let mut plan = crate::compact::CompactionPlan { snapshot, units };
    plan.sort();
    Ok(plan)
}
