//! `delete`: delete the rows matching a filter, in one commit.

use clap::Args;
use paimon_native::Table;

use super::error_chain;

/// `paimon-kernel delete TABLE --where EXPR [--commit-user U]`.
#[derive(Debug, Args)]
pub(crate) struct DeleteArgs {
    /// Table directory or URL.
    table: String,
    /// Rows to delete: a filter as `scan --where` takes it, e.g. `k > 2 AND dt = '2024-01-01'`.
    #[arg(long = "where", value_name = "EXPR")]
    filter: String,
    /// Commit user (default: a random UUID, as Java's batch writes).
    #[arg(long, value_name = "USER")]
    commit_user: Option<String>,
}

/// Run `delete`.
pub(crate) async fn run(a: DeleteArgs, json: bool) -> Result<(), String> {
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let outcome = table
        .delete_where(a.filter.as_str(), a.commit_user)
        .await
        .map_err(|e| error_chain(&e))?;
    if json {
        super::print(
            &serde_json::json!({
                "rows": outcome.rows_deleted,
                "snapshots": outcome.commit.snapshot_ids,
            })
            .to_string(),
        );
    } else if outcome.commit.snapshot_ids.is_empty() {
        super::print(&format!(
            "deleted {} rows; no snapshot (nothing to commit)",
            outcome.rows_deleted
        ));
    } else {
        let snaps: Vec<String> = outcome
            .commit
            .snapshot_ids
            .iter()
            .map(ToString::to_string)
            .collect();
        super::print(&format!(
            "deleted {} rows; snapshot {}",
            outcome.rows_deleted,
            snaps.join(", ")
        ));
    }
    Ok(())
}
