//! Open a Paimon table and print what the library API sees.
//!
//! ```sh
//! cargo run -p paimon-native --example inspect_table -- [TABLE]
//! ```
//!
//! TABLE is a directory or URL (`s3://…`, `gs://…`, `az://…`, `https://…`); without it the
//! example reads a table of the conformance corpus (`append_tags_rollback`).

use paimon_native::Table;

#[tokio::main]
async fn main() -> paimon_native::Result<()> {
    let location = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../conformance/tables/corpus.db/append_tags_rollback"
        )
        .to_string()
    });
    let table = Table::open(&location).await?;
    println!("table {}", table.location());

    let schema = table.schema().await?;
    println!(
        "schema {}: {} columns, partition keys {:?}, primary keys {:?}",
        schema.id,
        schema.fields.len(),
        schema.partition_keys,
        schema.primary_keys
    );

    for snapshot in table.snapshots().await? {
        println!(
            "snapshot {:>3}  {:<9}  {:>8} rows  schema {}",
            snapshot.id,
            snapshot.commit_kind.to_string(),
            snapshot.total_record_count,
            snapshot.schema_id
        );
    }

    let tags = table.tags().await?;
    for (name, tag) in &tags {
        println!("tag {name} -> snapshot {}", tag.snapshot.id);
    }

    // Time travel: the live data files at the first tag, else at the latest snapshot.
    let scan = match tags.first() {
        Some((name, _)) => table.scan().with_tag(name.clone()),
        None => table.scan(),
    };
    let files = scan.files().await?;
    let rows: i64 = files.iter().map(|f| f.record_count).sum();
    println!("{} live data files, {rows} rows", files.len());
    for f in &files {
        println!(
            "  {} bucket {} level {}: {}",
            f.partition, f.bucket, f.level, f.file_path
        );
    }
    Ok(())
}
