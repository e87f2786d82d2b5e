//! `expire`, `expire-partitions`, `remove-orphans`, `tag create|delete|list` and `rollback`.

use clap::{Args, Subcommand};
use paimon_kernel::maintenance::{RemovedFile, RollbackTarget};
use paimon_kernel::util::parse_duration_millis;
use paimon_native::Table;
use paimon_native::maintenance::{DEFAULT_ORPHAN_OLDER_THAN_MILLIS, ExpireOptions};
use serde_json::json;

use super::{error_chain, print};

/// `paimon-kernel expire TABLE [--retain-max N] [--retain-min N] [--older-than DURATION]
/// [--max-deletes N]`.
#[derive(Debug, Args)]
pub(crate) struct ExpireArgs {
    /// Table directory or URL.
    table: String,
    /// Keep at most N snapshots (default: `snapshot.num-retained.max`).
    #[arg(long, value_name = "N")]
    retain_max: Option<i64>,
    /// Keep at least N snapshots (default: `snapshot.num-retained.min`, 10).
    #[arg(long, value_name = "N")]
    retain_min: Option<i64>,
    /// Expire snapshots older than this (overrides `snapshot.time-retained`, default 1 h),
    /// e.g. `1 d`, `2 h`, `30 min`, `0 s`, `100ms`.
    #[arg(long, value_name = "DURATION")]
    older_than: Option<String>,
    /// Expire at most N snapshots (default: `snapshot.expire.limit`, 50).
    #[arg(long, value_name = "N")]
    max_deletes: Option<i64>,
}

/// `paimon-kernel expire-partitions TABLE --expiration-time DUR [--timestamp-formatter F]
/// [--timestamp-pattern P] [--strategy values-time|update-time] [--max-expires N]
/// [--dry-run]` (Java's `expire_partitions` procedure).
#[derive(Debug, Args)]
pub(crate) struct ExpirePartitionsArgs {
    /// Table directory or URL.
    table: String,
    /// Partitions older than this go (overrides `partition.expiration-time`), e.g. `7 d`.
    #[arg(long, value_name = "DURATION")]
    expiration_time: Option<String>,
    /// Java `DateTimeFormatter` pattern of the partition time, e.g. `yyyyMMdd` (overrides
    /// `partition.timestamp-formatter`).
    #[arg(long, value_name = "F")]
    timestamp_formatter: Option<String>,
    /// Partition time built from the values, e.g. `$dt $hour:00:00` (overrides
    /// `partition.timestamp-pattern`).
    #[arg(long, value_name = "P")]
    timestamp_pattern: Option<String>,
    /// `values-time` or `update-time` (overrides `partition.expiration-strategy`).
    #[arg(long, value_name = "STRATEGY")]
    strategy: Option<String>,
    /// Expire at most N partitions (overrides `partition.expiration-max-num`, default 100).
    #[arg(long, value_name = "N")]
    max_expires: Option<i32>,
    /// List the partitions that would expire; commit nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `paimon-kernel remove-orphans TABLE [--older-than DURATION] [--dry-run]`.
#[derive(Debug, Args)]
pub(crate) struct RemoveOrphansArgs {
    /// Table directory or URL.
    table: String,
    /// Only files last modified longer ago than this (default `1 d`).
    #[arg(long, value_name = "DURATION")]
    older_than: Option<String>,
    /// List what would be deleted; delete nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `paimon-kernel collect-packs TABLE [--older-than DURATION] [--dry-run]`.
#[derive(Debug, Args)]
pub(crate) struct CollectPacksArgs {
    /// Table directory or URL.
    table: String,
    /// Only packs last modified longer ago than this (default `1 d`).
    #[arg(long, value_name = "DURATION")]
    older_than: Option<String>,
    /// List what would be deleted; delete nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `paimon-kernel tag create|delete|list TABLE ...`.
#[derive(Debug, Args)]
pub(crate) struct TagArgs {
    #[command(subcommand)]
    action: TagAction,
}

#[derive(Debug, Subcommand)]
enum TagAction {
    /// Create a tag on a snapshot (the latest by default).
    Create {
        /// Table directory or URL.
        table: String,
        /// Tag name.
        name: String,
        /// Snapshot to tag (default: the latest).
        #[arg(long, value_name = "N")]
        snapshot: Option<i64>,
        /// Retention of the tag (`tagTimeRetained`), e.g. `7 d`.
        #[arg(long, value_name = "DURATION")]
        time_retained: Option<String>,
    },
    /// Delete a tag (and the files only it kept alive).
    Delete {
        /// Table directory or URL.
        table: String,
        /// Tag name.
        name: String,
    },
    /// List the tags.
    List {
        /// Table directory or URL.
        table: String,
    },
}

/// `paimon-kernel rollback TABLE --snapshot N | --tag T`.
#[derive(Debug, Args)]
pub(crate) struct RollbackArgs {
    /// Table directory or URL.
    table: String,
    /// Roll back to this snapshot.
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "tag",
        required_unless_present = "tag"
    )]
    snapshot: Option<i64>,
    /// Roll back to this tag.
    #[arg(long, value_name = "T")]
    tag: Option<String>,
}

fn duration(text: &str, flag: &str) -> Result<i64, String> {
    parse_duration_millis(text).map_err(|e| format!("{flag}: {e}"))
}

fn files_json(files: &[RemovedFile]) -> Vec<serde_json::Value> {
    files
        .iter()
        .map(|f| json!({"path": f.path, "size_bytes": f.size_bytes}))
        .collect()
}

fn bytes(files: &[RemovedFile]) -> u64 {
    paimon_kernel::maintenance::total_bytes(files)
}

/// Run `expire`.
pub(crate) async fn expire(a: ExpireArgs, json_out: bool) -> Result<(), String> {
    let older_than_millis = a
        .older_than
        .as_deref()
        .map(|t| duration(t, "--older-than"))
        .transpose()?;
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let outcome = table
        .expire(&ExpireOptions {
            retain_max: a.retain_max,
            retain_min: a.retain_min,
            older_than_millis,
            max_deletes: a.max_deletes,
        })
        .await
        .map_err(|e| error_chain(&e))?;
    if json_out {
        print(
            &json!({
                "expired_snapshots": outcome.expired_snapshots,
                "earliest_snapshot": outcome.earliest_snapshot,
                "deleted_files": outcome.deleted_files.len(),
                "deleted_bytes": outcome.deleted_bytes(),
                "files": files_json(&outcome.deleted_files),
            })
            .to_string(),
        );
    } else if outcome.expired_snapshots.is_empty() {
        print(&format!(
            "expired 0 snapshots; deleted {} files ({} bytes)",
            outcome.deleted_files.len(),
            outcome.deleted_bytes()
        ));
    } else {
        let first = outcome.expired_snapshots.first().copied().unwrap_or(0);
        let last = outcome.expired_snapshots.last().copied().unwrap_or(0);
        print(&format!(
            "expired {} snapshots ({first}..={last}); deleted {} files ({} bytes); earliest snapshot now {}",
            outcome.expired_snapshots.len(),
            outcome.deleted_files.len(),
            outcome.deleted_bytes(),
            outcome
                .earliest_snapshot
                .map_or_else(|| "-".to_string(), |e| e.to_string())
        ));
    }
    Ok(())
}

/// `--older-than` of `remove-orphans` and `collect-packs`: default one day.
fn older_than_or_default(arg: Option<&str>) -> Result<i64, String> {
    match arg {
        Some(t) => duration(t, "--older-than"),
        None => Ok(DEFAULT_ORPHAN_OLDER_THAN_MILLIS),
    }
}

/// One `deleted PATH (N bytes)` (or `would delete ...`) line per removed file.
fn removed_lines(removed: &[RemovedFile], dry_run: bool) -> String {
    let verb = if dry_run { "would delete" } else { "deleted" };
    removed
        .iter()
        .map(|f| format!("{verb} {} ({} bytes)\n", f.path, f.size_bytes.unwrap_or(0)))
        .collect()
}

/// Run `collect-packs`.
pub(crate) async fn collect_packs(a: CollectPacksArgs, json_out: bool) -> Result<(), String> {
    let older_than = older_than_or_default(a.older_than.as_deref())?;
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let outcome = table
        .collect_packs(older_than, a.dry_run)
        .await
        .map_err(|e| error_chain(&e))?;
    if json_out {
        print(
            &json!({
                "dry_run": outcome.dry_run,
                "files": files_json(&outcome.removed),
                "deleted_files": if outcome.dry_run { 0 } else { outcome.removed.len() },
                "deleted_bytes": if outcome.dry_run { 0 } else { outcome.removed_bytes() },
                "packs": outcome.packs,
                "referenced": outcome.referenced,
                "unreferenced_packs": outcome.removed.len(),
                "unreferenced_bytes": outcome.removed_bytes(),
                "too_young": outcome.too_young,
                "sidecars_read": outcome.sidecars_read,
            })
            .to_string(),
        );
        return Ok(());
    }
    let mut out = removed_lines(&outcome.removed, outcome.dry_run);
    out.push_str(&format!(
        "{} {} unreferenced packs ({} bytes) of {}; {} referenced by the {} sidecars in use; \
         {} unreferenced packs younger than the cut-off kept",
        if outcome.dry_run {
            "dry run: would delete"
        } else {
            "deleted"
        },
        outcome.removed.len(),
        outcome.removed_bytes(),
        outcome.packs,
        outcome.referenced,
        outcome.sidecars_read,
        outcome.too_young
    ));
    print(&out);
    Ok(())
}

/// Run `expire-partitions`.
pub(crate) async fn expire_partitions(
    a: ExpirePartitionsArgs,
    json_out: bool,
) -> Result<(), String> {
    let mut overrides = Vec::new();
    let mut put = |key: &str, value: Option<String>| {
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            overrides.push((key.to_string(), v));
        }
    };
    put("partition.expiration-time", a.expiration_time);
    put("partition.timestamp-formatter", a.timestamp_formatter);
    put("partition.timestamp-pattern", a.timestamp_pattern);
    put("partition.expiration-strategy", a.strategy);
    put(
        "partition.expiration-max-num",
        a.max_expires.map(|n| n.to_string()),
    );
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let config = table
        .partition_expire_config(&overrides)
        .await
        .map_err(|e| error_chain(&e))?;
    let outcome = table
        .expire_partitions(config, paimon_native::write::now_millis(), a.dry_run)
        .await
        .map_err(|e| error_chain(&e))?;
    let shown: Vec<String> = outcome.partitions.iter().map(|p| p.display()).collect();
    if json_out {
        let partitions: Vec<serde_json::Value> = outcome
            .partitions
            .iter()
            .map(|p| {
                serde_json::Value::Object(
                    p.values
                        .iter()
                        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                        .collect(),
                )
            })
            .collect();
        print(
            &json!({
                "dry_run": a.dry_run,
                "expired_partitions": shown,
                "partitions": partitions,
                "snapshot_ids": outcome.snapshot_ids,
            })
            .to_string(),
        );
        return Ok(());
    }
    if shown.is_empty() {
        print("No expired partitions.");
        return Ok(());
    }
    let mut out: String = shown.iter().map(|p| format!("{p}\n")).collect();
    out.push_str(&if a.dry_run {
        format!("dry run: would expire {} partitions", shown.len())
    } else {
        format!(
            "expired {} partitions in snapshots {:?}",
            shown.len(),
            outcome.snapshot_ids
        )
    });
    print(&out);
    Ok(())
}

/// Run `remove-orphans`.
pub(crate) async fn remove_orphans(a: RemoveOrphansArgs, json_out: bool) -> Result<(), String> {
    let older_than = older_than_or_default(a.older_than.as_deref())?;
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let outcome = table
        .remove_orphans(older_than, a.dry_run)
        .await
        .map_err(|e| error_chain(&e))?;
    if json_out {
        print(
            &json!({
                "dry_run": outcome.dry_run,
                "files": files_json(&outcome.removed),
                "deleted_files": if outcome.dry_run { 0 } else { outcome.removed.len() },
                "deleted_bytes": if outcome.dry_run { 0 } else { outcome.removed_bytes() },
                "orphan_files": outcome.removed.len(),
                "orphan_bytes": outcome.removed_bytes(),
                "too_young": outcome.too_young,
            })
            .to_string(),
        );
        return Ok(());
    }
    let mut out = removed_lines(&outcome.removed, outcome.dry_run);
    out.push_str(&format!(
        "{} {} orphan files ({} bytes); {} unused files younger than the cut-off kept",
        if outcome.dry_run {
            "dry run: would delete"
        } else {
            "deleted"
        },
        outcome.removed.len(),
        outcome.removed_bytes(),
        outcome.too_young
    ));
    print(&out);
    Ok(())
}

/// Run `tag ...`.
pub(crate) async fn tag(a: TagArgs, json_out: bool) -> Result<(), String> {
    match a.action {
        TagAction::Create {
            table,
            name,
            snapshot,
            time_retained,
        } => {
            let retained = time_retained
                .as_deref()
                .map(|t| duration(t, "--time-retained"))
                .transpose()?;
            let table = Table::open(&table).await.map_err(|e| error_chain(&e))?;
            let info = table
                .create_tag(&name, snapshot, retained)
                .await
                .map_err(|e| error_chain(&e))?;
            if json_out {
                print(&json!({"tag": info.name, "snapshot": info.snapshot_id}).to_string());
            } else {
                print(&format!(
                    "created tag {} on snapshot {}",
                    info.name, info.snapshot_id
                ));
            }
        }
        TagAction::Delete { table, name } => {
            let table = Table::open(&table).await.map_err(|e| error_chain(&e))?;
            let outcome = table.delete_tag(&name).await.map_err(|e| error_chain(&e))?;
            if json_out {
                print(
                    &json!({
                        "tag": name,
                        "snapshot": outcome.snapshot_id,
                        "deleted_files": outcome.deleted_files.len(),
                        "deleted_bytes": bytes(&outcome.deleted_files),
                    })
                    .to_string(),
                );
            } else {
                print(&format!(
                    "deleted tag {name} (snapshot {}); deleted {} files ({} bytes)",
                    outcome.snapshot_id,
                    outcome.deleted_files.len(),
                    bytes(&outcome.deleted_files)
                ));
            }
        }
        TagAction::List { table } => {
            let table = Table::open(&table).await.map_err(|e| error_chain(&e))?;
            let tags = table.tag_infos().await.map_err(|e| error_chain(&e))?;
            if json_out {
                print(&serde_json::to_string(&tags).map_err(|e| e.to_string())?);
            } else if tags.is_empty() {
                print("no tags");
            } else {
                let lines: Vec<String> = tags
                    .iter()
                    .map(|t| {
                        format!(
                            "{}\tsnapshot {}\t{} records",
                            t.name, t.snapshot_id, t.record_count
                        )
                    })
                    .collect();
                print(&lines.join("\n"));
            }
        }
    }
    Ok(())
}

/// Run `rollback`.
pub(crate) async fn rollback(a: RollbackArgs, json_out: bool) -> Result<(), String> {
    let target = match (a.snapshot, a.tag) {
        (Some(id), None) => RollbackTarget::Snapshot(id),
        (None, Some(tag)) => RollbackTarget::Tag(tag),
        _ => return Err("give exactly one of --snapshot N or --tag T".to_string()),
    };
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let outcome = table
        .rollback_to(target)
        .await
        .map_err(|e| error_chain(&e))?;
    if json_out {
        print(&serde_json::to_string(&outcome).map_err(|e| e.to_string())?);
    } else {
        print(&format!(
            "rolled back to snapshot {}; deleted {} snapshots, {} changelogs, {} tags{}",
            outcome.snapshot_id,
            outcome.deleted_snapshots.len(),
            outcome.deleted_changelogs.len(),
            outcome.deleted_tags.len(),
            if outcome.restored_snapshot {
                "; restored the snapshot file from the tag"
            } else {
                ""
            }
        ));
    }
    Ok(())
}
