// Write / update with apache/paimon-rust (crate `paimon` 0.4.0) into an existing table (created by
// `paimon-kernel create`), reading an Arrow IPC file.
// usage: paimon_write <warehouse> <database> <table> write|update <input.arrow> [threads]
//   write : WriteBuilder::new_write -> write_arrow_batch per input batch -> prepare_commit -> commit
//   update: WriteBuilder::new_update -> update_by_arrow_with_row_id(all batches) -> commit
//   threads: tokio worker threads (default 2)
use arrow_ipc::reader::FileReader;
use paimon::catalog::Identifier;
use paimon::{Catalog, CatalogFactory, CatalogOptions, Options};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 6 {
        eprintln!("usage: paimon_write <warehouse> <database> <table> write|update <input.arrow> [threads]");
        std::process::exit(2);
    }
    let threads: usize = args.get(6).map(|s| s.parse().unwrap()).unwrap_or(2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()?;
    rt.block_on(run(&args[1], &args[2], &args[3], &args[4], &args[5]))
}

async fn run(wh: &str, db: &str, tbl: &str, mode: &str, input: &str) -> Result<(), Box<dyn std::error::Error>> {
    let t0 = Instant::now();
    let mut options = Options::new();
    options.set(CatalogOptions::WAREHOUSE, wh.to_string());
    let catalog = CatalogFactory::create(options).await?;
    let table = catalog.get_table(&Identifier::new(db, tbl)).await?;
    let reader = FileReader::try_new(std::fs::File::open(input)?, None)?;
    let wb = table.new_write_builder();
    let mut rows = 0u64;
    let t1 = Instant::now();
    let msgs = match mode {
        "write" => {
            let mut w = wb.new_write()?;
            for b in reader {
                let b = b?;
                rows += b.num_rows() as u64;
                w.write_arrow_batch(&b).await?;
            }
            w.prepare_commit().await?
        }
        "update" => {
            let batches: Vec<_> = reader.collect::<Result<_, _>>()?;
            rows = batches.iter().map(|b| b.num_rows() as u64).sum();
            wb.new_update()?.update_by_arrow_with_row_id(batches).await?
        }
        m => return Err(format!("unknown mode {m}").into()),
    };
    let t2 = Instant::now();
    let n = msgs.len();
    wb.new_commit().commit(msgs).await?;
    let t3 = Instant::now();
    println!(
        "writer=paimon-rust-0.4.0 mode={mode} rows={rows} messages={n} write_s={:.3} commit_s={:.3} total_s={:.3}",
        (t2 - t1).as_secs_f64(),
        (t3 - t2).as_secs_f64(),
        (t3 - t0).as_secs_f64()
    );
    Ok(())
}
