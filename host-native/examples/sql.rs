//! SQL over Paimon tables with the library API: a table, a tag and a warehouse registered in a
//! DataFusion `SessionContext`, and the one-call [`paimon_native::sql::sql`].
//!
//! ```sh
//! cargo run -p paimon-native --example sql -- [WAREHOUSE]
//! ```
//!
//! WAREHOUSE is a filesystem warehouse (databases `WAREHOUSE/<db>.db`); without it the example
//! reads the conformance corpus shipped in the repo (`conformance/tables`, database `corpus`).

use datafusion::arrow::util::pretty::pretty_format_batches;
use paimon_native::Table;
use paimon_native::sql::{self, PaimonTableProvider};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let warehouse = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/tables").into());
    let table = |name: &str| format!("{warehouse}/corpus.db/{name}");

    // A session with `information_schema` on; one table at its latest snapshot, with its
    // system tables (`dedup$snapshots`, `dedup$files`, ...).
    let ctx = sql::session();
    sql::register_table(&ctx, "dedup", &table("pk_dedup")).await?;
    let batches = ctx
        .sql("SELECT op, count(*) AS n, round(sum(val), 3) AS total FROM dedup WHERE k > 2 GROUP BY op ORDER BY op")
        .await?
        .collect()
        .await?;
    println!("{}", pretty_format_batches(&batches)?);
    let batches = ctx
        .sql("SELECT snapshot_id, commit_kind, total_record_count FROM \"dedup$snapshots\"")
        .await?
        .collect()
        .await?;
    println!("{}", pretty_format_batches(&batches)?);

    // A table at a tag (time travel), registered through its scan.
    let tagged = Table::open(&table("append_tags_rollback")).await?;
    sql::register_scan(&ctx, "at_v1", tagged.scan().with_tag("v1")).await?;
    // The provider itself, registered under a name of our choosing.
    let provider = PaimonTableProvider::open(&table("append_tags_rollback")).await?;
    ctx.register_table("latest", std::sync::Arc::new(provider))?;
    let batches = ctx
        .sql("SELECT (SELECT count(*) FROM at_v1) AS rows_at_v1, (SELECT count(*) FROM latest) AS rows_now")
        .await?
        .collect()
        .await?;
    println!("{}", pretty_format_batches(&batches)?);

    // A warehouse: its databases are schemas, so `corpus.pk_dedup` resolves.
    sql::register_warehouse(&ctx, &warehouse).await?;
    let batches = ctx
        .sql("SELECT p.k, p.name, a.s_sum FROM corpus.pk_dedup p JOIN corpus.pk_aggregation a ON p.k = a.k ORDER BY p.k LIMIT 3")
        .await?
        .collect()
        .await?;
    println!("{}", pretty_format_batches(&batches)?);

    // One call, no context to hold: tables by name and location, an optional warehouse.
    let batches = sql::sql(
        "SELECT count(*) AS n FROM t",
        &[("t".to_string(), table("append_partitioned"))],
        None,
    )
    .await?;
    println!("{}", pretty_format_batches(&batches)?);
    Ok(())
}
