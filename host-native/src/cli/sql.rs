//! `sql`: run one SQL statement (DataFusion) over tables and a warehouse.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use datafusion::physical_plan::{ExecutionPlan, displayable};
use futures::StreamExt;
use paimon_native::sql::{self, PaimonScanExec};

use super::error_chain;
use super::scan::{Fail, Format, Writer, arrow_fail};

/// Arguments of `sql`.
#[derive(Debug, Args)]
pub(crate) struct SqlArgs {
    /// The statement: SELECT (joins, GROUP BY, ORDER BY, LIMIT, ...), INSERT INTO t SELECT
    /// / VALUES, INSERT OVERWRITE t SELECT, EXPLAIN, SHOW TABLES.
    query: String,
    /// Register the table at URI as NAME (and its system tables as NAME$snapshots,
    /// NAME$schemas, NAME$tags, NAME$manifests, NAME$files); repeatable.
    #[arg(long = "table", value_name = "NAME=URI")]
    tables: Vec<String>,
    /// Register a filesystem warehouse: its databases' tables resolve as `db.table` (and
    /// `paimon.db.table`).
    #[arg(long, value_name = "DIR")]
    warehouse: Option<String>,
    /// Output format (default: table; jsonl with --json).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the physical plan, what each Paimon scan pushed down (columns, filters and
    /// whether DataFusion still applies them, limit) and the data files it prunes, instead of
    /// running the query.
    #[arg(long)]
    explain: bool,
}

/// Run `sql`; `Err` holds the message for stderr (exit code 1).
pub(crate) async fn run(args: SqlArgs, json: bool) -> Result<(), String> {
    match run_query(args, json).await {
        Ok(()) | Err(Fail::Quiet) => Ok(()),
        Err(Fail::Msg(m)) => Err(m),
    }
}

fn df_error(e: datafusion::common::DataFusionError) -> String {
    // External errors are ours: their text already names the table and cause.
    match e {
        datafusion::common::DataFusionError::External(inner) => inner.to_string(),
        datafusion::common::DataFusionError::Context(c, inner) => {
            format!("{c}: {}", df_error(*inner))
        }
        other => other.to_string(),
    }
}

async fn run_query(args: SqlArgs, json: bool) -> Result<(), Fail> {
    let ctx = sql::session();
    if let Some(w) = &args.warehouse {
        sql::register_warehouse(&ctx, w)
            .await
            .map_err(|e| error_chain(&e))?;
    }
    for t in &args.tables {
        let (name, uri) = t
            .split_once('=')
            .filter(|(n, u)| !n.trim().is_empty() && !u.trim().is_empty())
            .ok_or_else(|| format!("--table: '{t}' is not NAME=URI"))?;
        sql::register_table(&ctx, name.trim(), uri.trim())
            .await
            .map_err(|e| error_chain(&e))?;
    }
    let frame = ctx.sql(&args.query).await.map_err(df_error)?;
    let (sink, what): (Box<dyn Write>, String) = match &args.output {
        Some(path) => {
            let file =
                File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            (Box::new(file), path.display().to_string())
        }
        None => (Box::new(std::io::stdout().lock()), "stdout".to_string()),
    };
    let mut out = BufWriter::with_capacity(1 << 16, sink);
    if args.explain {
        let plan = frame.create_physical_plan().await.map_err(df_error)?;
        let text = explain(&plan).await?;
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| arrow_fail(&what, e.into()))?;
        return Ok(());
    }
    let format = args
        .format
        .unwrap_or(if json { Format::Jsonl } else { Format::Table });
    if format == Format::Count {
        return Err(Fail::Msg(
            "--format count is for scan; use SELECT count(*) in SQL".into(),
        ));
    }
    let mut stream = frame.execute_stream().await.map_err(df_error)?;
    let schema = stream.schema();
    let mut writer = Writer::new(format, out, &schema).map_err(|e| arrow_fail(&what, e))?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(df_error)?;
        writer.write(&batch).map_err(|e| arrow_fail(&what, e))?;
    }
    writer.finish().map_err(|e| arrow_fail(&what, e))?;
    Ok(())
}

/// The plan, then each Paimon scan's pushdown and pruning.
async fn explain(plan: &Arc<dyn ExecutionPlan>) -> Result<String, Fail> {
    let mut text = format!(
        "physical plan:\n{}\n",
        displayable(plan.as_ref()).indent(true)
    );
    let mut scans = Vec::new();
    collect_scans(plan, &mut scans);
    for scan in scans {
        let p = scan.pushdown();
        text.push_str(&format!("scan of {}:\n", scan.table().location()));
        text.push_str(&format!("  columns read: {}\n", p.projection.join(", ")));
        if p.filters.is_empty() {
            text.push_str("  filters pushed: none\n");
        }
        for (f, exact) in &p.filters {
            text.push_str(&format!(
                "  filter pushed: {f} ({})\n",
                if *exact {
                    "exact: DataFusion does not filter again"
                } else {
                    "inexact: prunes; DataFusion filters the rows again"
                }
            ));
        }
        text.push_str(&format!(
            "  limit pushed: {}\n",
            p.limit.map_or("none".to_string(), |l| l.to_string())
        ));
        let Some(plan) = scan.plan() else {
            text.push_str("  reads a fallback branch: planned when read\n");
            continue;
        };
        let read: usize = plan.splits.iter().map(|s| s.data_files.len()).sum();
        text.push_str(&format!(
            "  snapshot {}: {} splits in {} partitions, {read} of {} data files read \
             (pruned: {} by partition, {} by statistics)\n",
            plan.snapshot
                .as_ref()
                .map_or("none".to_string(), |s| s.id.to_string()),
            plan.splits.len(),
            scan.partition_splits().len(),
            plan.pruned.live_files,
            plan.pruned.by_partition,
            plan.pruned.by_stats,
        ));
        for f in scan.pruned_files().await.map_err(|e| error_chain(&e))? {
            text.push_str(&format!("  not read: {f}\n"));
        }
    }
    Ok(text)
}

/// Every Paimon scan in `plan`, depth first.
fn collect_scans<'a>(plan: &'a Arc<dyn ExecutionPlan>, out: &mut Vec<&'a PaimonScanExec>) {
    let any: &dyn std::any::Any = plan.as_ref();
    if let Some(scan) = any.downcast_ref::<PaimonScanExec>() {
        out.push(scan);
    }
    for child in plan.children() {
        collect_scans(child, out);
    }
}
