//! `compact` and `plan-compaction`: compaction of primary-key, append and data-evolution
//! tables.

use std::collections::BTreeMap;

use clap::Args;
use paimon_native::Table;
use paimon_native::compact::CompactOptions;

use super::error_chain;
use super::text_table::TextTable;

/// `paimon-kernel compact TABLE [--full] [--partition k=v,...] [--bucket N] [--prepare-only FILE]`.
#[derive(Debug, Args)]
pub(crate) struct CompactArgs {
    /// Table directory or URL.
    table: String,
    /// Full compaction: every sorted run of a bucket to the max level (default: the table's
    /// strategy picks per bucket).
    #[arg(long)]
    full: bool,
    /// Only this partition, `k=v,k2=v2`.
    #[arg(long, value_name = "SPEC")]
    partition: Option<String>,
    /// Only this bucket.
    #[arg(long, value_name = "N")]
    bucket: Option<i32>,
    /// Commit user (default: a random UUID).
    #[arg(long, value_name = "USER")]
    commit_user: Option<String>,
    /// Write the compaction's files and its commit messages (Java `CommitMessageSerializer`
    /// bytes, as `write --prepare-only`) to FILE (`-`: stdout) without committing; `commit
    /// --messages FILE` commits them.
    #[arg(long, value_name = "FILE")]
    prepare_only: Option<String>,
}

/// `paimon-kernel plan-compaction TABLE [--full]`.
#[derive(Debug, Args)]
pub(crate) struct PlanCompactionArgs {
    /// Table directory or URL.
    table: String,
    /// Plan a full compaction.
    #[arg(long)]
    full: bool,
}

/// Parse `k=v,k2=v2`.
fn parse_partition(spec: &str) -> Result<BTreeMap<String, String>, String> {
    spec.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| format!("--partition: '{p}' is not k=v"))?;
            Ok((k.trim().to_owned(), v.to_owned()))
        })
        .collect()
}

/// Run `plan-compaction`: the plan as JSON (always).
pub(crate) async fn plan(a: PlanCompactionArgs) -> Result<(), String> {
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let plan = table
        .plan_compaction(a.full)
        .await
        .map_err(|e| error_chain(&e))?;
    let out = serde_json::to_string_pretty(&plan).map_err(|e| format!("plan JSON: {e}"))?;
    super::print(&out);
    Ok(())
}

/// Run `compact`.
pub(crate) async fn compact(a: CompactArgs, json: bool) -> Result<(), String> {
    let partition = match &a.partition {
        Some(p) => parse_partition(p)?,
        None => BTreeMap::new(),
    };
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let options = CompactOptions {
        full: a.full,
        partition,
        bucket: a.bucket,
        commit_user: a.commit_user,
        now_millis: None,
    };
    if let Some(path) = &a.prepare_only {
        let messages = table
            .prepare_compaction(options)
            .await
            .map_err(|e| error_chain(&e))?;
        super::write::write_messages(path, &messages).map_err(|e| error_chain(&e))?;
        if json {
            super::print(
                &serde_json::json!({"messages": messages.len(), "file": path}).to_string(),
            );
        } else if path != "-" {
            super::print(&format!(
                "{} commit message(s) in {path} (not committed)",
                messages.len()
            ));
        }
        return Ok(());
    }
    let report = table.compact(options).await.map_err(|e| error_chain(&e))?;
    if let Some(w) = &report.maintenance_warning {
        eprintln!("warning: the compaction stands, but its maintenance (expiry, tags) failed: {w}");
    }
    if json {
        let out = serde_json::to_string(&report).map_err(|e| format!("report JSON: {e}"))?;
        super::print(&out);
        return Ok(());
    }
    let Some(snapshot) = report.snapshot else {
        super::print("nothing to compact; no snapshot");
        return Ok(());
    };
    let mut t = TextTable::new([
        "partition",
        "bucket",
        "level",
        "files_in",
        "bytes_in",
        "files_out",
        "bytes_out",
        "upgraded",
        "changelog_rows",
        "levels_after",
    ]);
    for b in &report.buckets {
        let partition = serde_json::Value::Object(b.partition.clone()).to_string();
        let levels: Vec<String> = b
            .levels_after
            .iter()
            .map(|(l, n)| format!("L{l}:{n}"))
            .collect();
        t.push([
            partition,
            b.bucket.to_string(),
            b.output_level.to_string(),
            b.files_in.to_string(),
            b.bytes_in.to_string(),
            b.files_out.to_string(),
            b.bytes_out.to_string(),
            b.upgraded_files.to_string(),
            b.changelog_rows.to_string(),
            levels.join(" "),
        ]);
    }
    super::print(&format!("{}compacted into snapshot {snapshot}", t.render()));
    Ok(())
}
