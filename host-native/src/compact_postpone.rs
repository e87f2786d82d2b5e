//! Compaction of postpone-bucket primary-key tables (`bucket = -2`) from the host: the rows
//! of the `bucket-postpone` files are replayed into real buckets and the buckets written
//! are compacted; one `COMPACT` snapshot removes the postpone files and adds the results.
//! The steps and Java's sources are in [`paimon_kernel::compact::pk::postpone`].

use std::sync::Arc;

use paimon_kernel::commit::CommitMessage;
use paimon_kernel::compact::CompactionPlan;
use paimon_kernel::compact::pk::postpone::{
    PostponePartition, fold_bucket_message, partition_json, plan_postpone_compaction,
    postpone_plan_summary, read_postpone_file, real_bucket_path, remove_postpone_files,
    schema_with_buckets,
};
use paimon_kernel::spec::{DataFileMeta, TableSchema};
use paimon_kernel::write::{TableWrite, WriteOptions, WriteRestore};

use crate::compact::{
    BucketCompaction, CompactOptions, CompactReport, compact_buckets, levels_after,
};
use crate::error::{Error, Result};
use crate::table::{DataFiles, Table};
use crate::write::{TableWriter, delete_paths, now_millis, random_seed};

/// The plan of [`run`] on the latest snapshot (see
/// [`paimon_kernel::compact::pk::postpone::postpone_plan_summary`]).
///
/// # Errors
/// Reading the snapshot; `Unsupported` / `Invalid` from the planner.
pub(crate) async fn plan(table: &Table, options: &CompactOptions) -> Result<CompactionPlan> {
    let Some((files, partitions)) = plan_partitions(table, options).await? else {
        return Ok(CompactionPlan::default());
    };
    postpone_plan_summary(&files.schema, Some(files.snapshot.id), &partitions)
        .map_err(|e| Error::kernel(context(table), e))
}

/// Compact a postpone-bucket table (see the module docs). Nothing to compact: no commit.
///
/// # Errors
/// `Invalid` for `options.bucket` (a postpone compaction moves whole partitions); as
/// [`plan`]; read, write and compaction errors (everything written is deleted); commit
/// errors, e.g. a conflict with a concurrent compaction that removed the same postpone files
/// (everything written is deleted, nothing is visible).
pub(crate) async fn run(table: &Table, options: &CompactOptions) -> Result<CompactReport> {
    let Some((files, partitions)) = plan_partitions(table, options).await? else {
        return Ok(CompactReport::default());
    };
    let base = Some(files.snapshot.id);
    if partitions.is_empty() {
        return Ok(CompactReport {
            base_snapshot: base,
            ..Default::default()
        });
    }
    // Deletion-vector tables: where the buckets' vectors are.
    let index_entries = table
        .dv_index_entries(&files.schema, &files.snapshot)
        .await?;
    let mut written: Vec<String> = Vec::new();
    let mut messages: Vec<CommitMessage> = Vec::new();
    let mut stats: Vec<(usize, usize)> = Vec::new();
    for p in &partitions {
        let replayed =
            replay_partition(table, &files, p, &index_entries, options, &mut written).await;
        match replayed {
            Ok((m, s)) => {
                messages.extend(m);
                stats.extend(s);
            }
            Err(e) => {
                let _ = delete_paths(table.host(), written).await;
                return Err(e);
            }
        }
    }
    let real: Vec<CommitMessage> = messages.clone();
    for p in &partitions {
        messages.extend(remove_postpone_files(p));
    }
    let commit = table.new_commit(options.commit_user.clone());
    let outcome = match commit.commit(messages).await {
        Ok(o) => o,
        Err(e) => {
            let _ = delete_paths(table.host(), written).await;
            return Err(e);
        }
    };
    let mut buckets = Vec::new();
    for p in &partitions {
        let partition = partition_json(&files.schema, &p.partition)
            .map_err(|e| Error::kernel(context(table), e))?;
        if !p.postpone_files.is_empty() {
            buckets.push(BucketCompaction {
                partition: partition.clone(),
                bucket: paimon_kernel::spec::partition::POSTPONE_BUCKET,
                output_level: 0,
                files_in: p.postpone_files.len(),
                bytes_in: size(&p.postpone_files),
                rewritten_files: p.postpone_files.len(),
                ..Default::default()
            });
        }
        for (m, (upgraded, rewritten)) in real.iter().zip(&stats) {
            if m.partition != p.partition {
                continue;
            }
            let c = &m.compact_increment;
            let levels_after = levels_after(&p.real_entries, m);
            buckets.push(BucketCompaction {
                partition: partition.clone(),
                bucket: m.bucket,
                output_level: c.compact_after.iter().map(|f| f.level).max().unwrap_or(0),
                files_in: c.compact_before.len(),
                bytes_in: size(&c.compact_before),
                files_out: c.compact_after.len(),
                bytes_out: size(&c.compact_after),
                upgraded_files: *upgraded,
                rewritten_files: *rewritten,
                levels_after,
                changelog_files: c.changelog_files.len(),
                changelog_rows: c.changelog_files.iter().map(|f| f.row_count).sum(),
            });
        }
    }
    Ok(CompactReport {
        base_snapshot: base,
        snapshot: outcome.snapshot_ids.last().copied(),
        buckets,
        maintenance_warning: outcome.maintenance_warning,
    })
}

fn context(table: &Table) -> String {
    format!(
        "compacting the postpone bucket of table {}",
        table.location()
    )
}

fn size(files: &[DataFileMeta]) -> i64 {
    files.iter().map(|f| f.file_size).sum()
}

/// The latest snapshot's files and the partitions to compact (`None` without snapshots).
async fn plan_partitions(
    table: &Table,
    options: &CompactOptions,
) -> Result<Option<(DataFiles, Vec<PostponePartition>)>> {
    if let Some(b) = options.bucket {
        return Err(Error::kernel(
            context(table),
            paimon_kernel::Error::invalid(format!(
                "a postpone-bucket table is compacted by partition: bucket {b} cannot be \
                 chosen (leave the bucket out)"
            )),
        ));
    }
    let Some(files) = table.scan().data_files().await? else {
        return Ok(None);
    };
    let partitions = plan_postpone_compaction(&files.schema, &files.entries, &options.partition)
        .map_err(|e| Error::kernel(context(table), e))?;
    Ok(Some((files, partitions)))
}

/// Replay partition `p`'s postpone files into its real buckets and compact the buckets
/// written (and those with level-0 files). Returns one folded message per real bucket with
/// (files upgraded, files rewritten) of its compaction; every path written goes to
/// `written` as soon as it exists.
async fn replay_partition(
    table: &Table,
    files: &DataFiles,
    p: &PostponePartition,
    index_entries: &[paimon_kernel::spec::IndexManifestEntry],
    options: &CompactOptions,
    written: &mut Vec<String>,
) -> Result<(Vec<CommitMessage>, Vec<(usize, usize)>)> {
    let ctx = || context(table);
    let schema = schema_with_buckets(&files.schema, p.total_buckets);
    let restore = WriteRestore::from_entries(&p.real_entries);
    let inner = TableWrite::try_new(
        schema.clone(),
        restore,
        WriteOptions {
            seed: random_seed(),
            time_millis: now_millis(),
        },
    )
    .map(|w| w.with_table_uri(table.location()))
    .map_err(|e| Error::kernel(ctx(), e))?;
    let mut writer = TableWriter::with_inner(table, inner);
    let result = replay_files(table, files, p, &schema, &mut writer).await;
    written.extend(writer.take_written());
    result?;
    let prepared = writer.prepare_commit_uncompacted().await;
    written.extend(writer.take_written());
    let mut messages = prepared?;
    // Buckets with level-0 files but no new rows are compacted too.
    for b in &p.level0_buckets {
        if !messages.iter().any(|m| m.bucket == *b) {
            messages.push(CommitMessage {
                partition: p.partition.clone(),
                bucket: *b,
                total_buckets: Some(p.total_buckets),
                data_increment: Default::default(),
                compact_increment: Default::default(),
            });
        }
    }
    messages.sort_by_key(|m| m.bucket);
    let touched: Vec<(Vec<u8>, i32)> = messages
        .iter()
        .map(|m| (m.partition.to_serialized(), m.bucket))
        .collect();
    let (messages, outputs) = compact_buckets(
        table,
        &schema,
        files.schemas.clone(),
        p.real_entries.clone(),
        index_entries
            .iter()
            .filter(|e| e.partition == p.partition)
            .cloned()
            .collect(),
        messages,
        &touched,
        options.full,
        options.now_millis.unwrap_or_else(now_millis),
    )
    .await?;
    written.extend(outputs);
    let mut out = Vec::new();
    let mut stats = Vec::new();
    let mut consumed_paths = Vec::new();
    for m in messages {
        let (folded, consumed) = fold_bucket_message(m);
        if folded.is_empty() {
            continue;
        }
        let dir = real_bucket_path(&schema, &folded.partition, folded.bucket)
            .map_err(|e| Error::kernel(ctx(), e))?;
        consumed_paths.extend(consumed.iter().map(|f| f.path_in_bucket(&dir)));
        let c = &folded.compact_increment;
        let upgraded = c
            .compact_after
            .iter()
            .filter(|a| c.compact_before.iter().any(|b| b.file_name == a.file_name))
            .count();
        stats.push((upgraded, c.compact_before.len() - upgraded + consumed.len()));
        out.push(folded);
    }
    // New files the compaction consumed: no snapshot will name them (Java deletes them too).
    written.retain(|w| !consumed_paths.contains(w));
    delete_paths(table.host(), consumed_paths).await?;
    Ok((out, stats))
}

/// Feed `p`'s postpone files, in replay order, to `writer`.
async fn replay_files(
    table: &Table,
    files: &DataFiles,
    p: &PostponePartition,
    schema: &TableSchema,
    writer: &mut TableWriter,
) -> Result<()> {
    let p = Arc::new(p.clone());
    let schema = Arc::new(schema.clone());
    for f in p.postpone_files.clone() {
        let file_schema = files.schemas.get(&f.schema_id).cloned().ok_or_else(|| {
            Error::kernel(
                context(table),
                paimon_kernel::Error::invalid(format!(
                    "postpone file {} names schema {}, which was not read",
                    f.file_name, f.schema_id
                )),
            )
        })?;
        let (p2, s2) = (Arc::clone(&p), Arc::clone(&schema));
        let name = f.file_name.clone();
        let batches = table
            .run(
                "PostponeRead",
                format!("reading postpone file {name}"),
                move |io| async move {
                    read_postpone_file(
                        &io,
                        &p2,
                        &f,
                        &file_schema,
                        &s2,
                        paimon_kernel::read::DEFAULT_BATCH_SIZE,
                    )
                    .await
                },
            )
            .await?;
        for b in &batches {
            writer.write(b).await?;
        }
    }
    Ok(())
}
