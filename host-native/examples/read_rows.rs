//! Read rows of a Paimon table with the library API: projection, filter, limit, time travel,
//! streamed as Arrow record batches.
//!
//! ```sh
//! cargo run -p paimon-native --example read_rows -- [TABLE]
//! ```
//!
//! TABLE is a directory or URL (`s3://…`, `gs://…`, `az://…`, `https://…`); without it the
//! example reads the primary-key table `pk_dedup` of the conformance corpus.

use futures::TryStreamExt;
use paimon_native::Table;

#[tokio::main]
async fn main() -> paimon_native::Result<()> {
    let location = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../conformance/tables/corpus.db/pk_dedup"
        )
        .to_string()
    });
    let table = Table::open(&location).await?;

    // Every row of the latest snapshot, split by split, as they are read.
    let mut stream = table.scan().to_stream().await?;
    println!("schema: {:?}", stream.schema().fields());
    let mut rows = 0;
    while let Some(batch) = stream.try_next().await? {
        rows += batch.num_rows();
    }
    println!("latest snapshot: {rows} rows");

    // The plan: which snapshot and splits a read covers.
    let plan = table.scan().plan().await?;
    println!(
        "snapshot {:?}: {} splits",
        plan.snapshot.as_ref().map(|s| s.id),
        plan.splits.len()
    );

    // Two columns of the first snapshot whose first column is above 2, at most 5 rows.
    let first = plan.schema.fields.first().map(|f| f.name.clone());
    if let Some(first) = first {
        let mut scan = table
            .scan()
            .with_projection([first.clone()])
            .with_filter(format!("{first} > 2"))
            .with_limit(5);
        if let Some(snapshot) = table.snapshots().await?.first() {
            scan = scan.with_snapshot_id(snapshot.id);
        }
        for batch in scan.to_batches().await? {
            println!("{batch:?}");
        }
    }
    Ok(())
}
