//! `blob`: write the bytes of one blob of a data-evolution table, found by `_ROW_ID` and
//! column, with ranged reads only (the plan is restricted to the row; then the `.blob` file's
//! footer and index and the one record).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use paimon_native::Table;

use super::{error_chain, print_io_stats};

/// Arguments of `blob`.
#[derive(Debug, Args)]
pub(crate) struct BlobArgs {
    /// Table directory or URL (s3://, gs://, az://, abfs://, http(s)://, file://).
    table: String,
    /// `_ROW_ID` of the row.
    #[arg(long, value_name = "N")]
    row_id: i64,
    /// The BLOB column.
    #[arg(long, value_name = "C")]
    column: String,
    /// Read this snapshot id instead of the latest.
    #[arg(long, value_name = "N", conflicts_with = "tag")]
    snapshot: Option<i64>,
    /// Read the snapshot of this tag.
    #[arg(long, value_name = "T")]
    tag: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Run `blob`; `Err` holds the message for stderr (exit code 1). A NULL blob is an error
/// ("is NULL"), so that empty output always means an empty blob. With `io_stats`, the IO
/// done (rounds, requests, bytes) goes to stderr once the blob is read.
pub(crate) async fn run(args: BlobArgs, io_stats: bool) -> Result<(), String> {
    let table = Table::open(&args.table)
        .await
        .map_err(|e| error_chain(&e))?;
    let mut scan = table.scan();
    if let Some(id) = args.snapshot {
        scan = scan.with_snapshot_id(id);
    } else if let Some(tag) = &args.tag {
        scan = scan.with_tag(tag.clone());
    }
    let bytes = scan
        .read_blob(args.row_id, &args.column)
        .await
        .map_err(|e| error_chain(&e))?
        .ok_or_else(|| format!("column {} of row id {} is NULL", args.column, args.row_id))?;
    if io_stats {
        print_io_stats(&table);
    }
    match &args.output {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(&bytes).and_then(|()| out.flush()) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(format!("cannot write stdout: {e}")),
            }
        }
    }
}
