//! K1 of the write bench: latency of one commit adding many files to a table with many
//! snapshots and live files, through the paimon-native library API (no CLI, so the commit is
//! timed apart from writing the files).
//!
//! usage:
//!   kbench build TABLE COMMITS FILES_PER_COMMIT
//!       creates TABLE (append, bucket = FILES_PER_COMMIT, bucket-key id, the read bench's
//!       append schema) and makes COMMITS commits; each writes 10 rows per bucket
//!       (one writer, 10 * FILES_PER_COMMIT rows: one ~2 KB Parquet file per bucket).
//!       Prints one line per 100 commits (seconds so far). When TABLE already holds snapshots,
//!       the build continues from its latest one (COMMITS counts the commits already made).
//!   kbench build TABLE COMMITS FILES_PER_COMMIT daily
//!       as `build`, partitioned by `qty`: commit c writes only rows with qty = (c + 310) % 1000
//!       (ids qty + 1000 j), so each commit adds FILES_PER_COMMIT files to one new partition, as
//!       a table partitioned by day does; with 700 commits the last 10 write qty 0..=9, the
//!       partitions `kbench commit TABLE 1 1` writes (its ids 1,000,000,000..+10).
//!   kbench build TABLE COMMITS FILES_PER_COMMIT unaware
//!       as `build`, but `bucket` = -1 with `target-file-size` = 1b: the one writer of a commit
//!       writes FILES_PER_COMMIT batches of 10 rows, and each becomes its own file (its
//!       messages are taken after every batch). Writers of
//!       such a table restore nothing, so the build's commits stay as fast at snapshot 1,000 as
//!       at snapshot 1 (a fixed-bucket writer plans every live file of its partition first).
//!   kbench commit TABLE WRITERS BUCKETS
//!       WRITERS writers each write 10 * BUCKETS rows to TABLE in batches of 10 rows (so about
//!       WRITERS * BUCKETS files, on a fixed-bucket and on an `unaware` table), then ONE commit
//!       of all their messages is timed.
//!   kbench plan TABLE
//!       plans a scan of TABLE's latest snapshot (`TableScan::plan`: snapshot, manifest lists,
//!       every manifest, splits) and prints the splits, the data files and the in-process
//!       milliseconds (case K2 without any output formatting; run it under `/usr/bin/time -v`
//!       for CPU and peak RSS).
//!   kbench scan TABLE [SPLITS_IN_FLIGHT [IN_FLIGHT_MIB]]
//!       streams every row of TABLE's latest snapshot (`TableScan::to_stream`, batches counted
//!       and dropped) on a runtime with a worker per available core, as the CLI's `scan` does
//!       without its output encoding (run it with `MALLOC_ARENA_MAX=1`, the CLI's arena cap);
//!       optionally with `with_splits_in_flight` / `with_in_flight_bytes` (MiB).
//!   kbench compact TABLE
//!       full compaction of every bucket of TABLE, committed (`Table::compact` with `full`, the
//!       CLI's `compact --full`); prints the buckets, input files and in-process milliseconds.
//!       Run it on a fresh copy of the table each time.
//!   kbench write TABLE SCHEMA_JSON INPUT.arrow
//!       creates TABLE with the schema in file SCHEMA_JSON, writes the batches of the Arrow IPC
//!       file INPUT in one writer and commits them: `paimon-kernel create` + `write --input`
//!       through the library (the write bench's W1/W2 without the CLI's SQL build), printing
//!       rows, files and seconds.
//! Every write holds real rows and real files; nothing is synthesized.
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use paimon_kernel::commit::CommitMessage;
use paimon_kernel::spec::options::CoreOptions;
use paimon_native::Table;
use std::sync::Arc;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("city", DataType::Utf8, true),
        Field::new("amount", DataType::Float64, true),
        Field::new("qty", DataType::Int32, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("flag", DataType::Boolean, true),
        Field::new("note", DataType::Utf8, true),
    ]))
}

const SCHEMA_JSON: &str = r#"{"fields": [
 {"name": "id", "type": "BIGINT"}, {"name": "name", "type": "STRING"},
 {"name": "city", "type": "STRING"}, {"name": "amount", "type": "DOUBLE"},
 {"name": "qty", "type": "INT"}, {"name": "ts", "type": "TIMESTAMP(6)"},
 {"name": "flag", "type": "BOOLEAN"}, {"name": "note", "type": "STRING"}],
 "options": {"bucket": "BUCKETS", "bucket-key": "id"}}"#;

/// `n` rows with ids from `first`.
fn batch(first: i64, n: usize) -> Res<RecordBatch> {
    batch_of((first..first + n as i64).collect())
}

/// Rows with these ids.
fn batch_of(ids: Vec<i64>) -> Res<RecordBatch> {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.clone())),
        Arc::new(StringArray::from_iter_values(
            ids.iter().map(|i| format!("user_{i}")),
        )),
        Arc::new(StringArray::from_iter_values(
            ids.iter().map(|i| format!("city_{:03}", i % 100)),
        )),
        Arc::new(Float64Array::from_iter_values(
            ids.iter().map(|i| (*i % 1000) as f64 * 0.5),
        )),
        Arc::new(Int32Array::from_iter_values(
            ids.iter().map(|i| (*i % 1000) as i32),
        )),
        Arc::new(TimestampMicrosecondArray::from_iter_values(
            ids.iter().map(|i| 1_700_000_000_000_000 + i * 1000),
        )),
        Arc::new(BooleanArray::from_iter(
            ids.iter().map(|i| Some(i % 2 == 0)),
        )),
        Arc::new(StringArray::from_iter_values(
            ids.iter().map(|i| format!("alpha bravo #{i}")),
        )),
    ];
    Ok(RecordBatch::try_new(schema(), cols)?)
}

/// One writer of `rows` rows with ids from `first`, given in batches of 10 rows (on a
/// fixed-bucket table each bucket's rows go to one file).
async fn write_once(table: &Table, first: i64, rows: usize) -> Res<Vec<CommitMessage>> {
    let mut w = table.new_write().await?;
    for start in (0..rows).step_by(10) {
        w.write(&batch(first + start as i64, 10.min(rows - start))?)
            .await?;
    }
    Ok(w.prepare_commit().await?)
}

/// As [`write_once`], one file per 10-row batch: the writer's messages are taken after every
/// batch (a rolling writer checks its file size every 1,000 rows, as Java's does, so
/// `target-file-size` = 1b alone no longer makes a file of each small batch).
async fn write_file_per_batch(table: &Table, first: i64, rows: usize) -> Res<Vec<CommitMessage>> {
    let mut w = table.new_write().await?;
    let mut msgs = Vec::new();
    for start in (0..rows).step_by(10) {
        w.write(&batch(first + start as i64, 10.min(rows - start))?)
            .await?;
        msgs.extend(w.prepare_commit().await?);
    }
    Ok(msgs)
}

/// The messages of one writer of `rows` rows from `first`: a file per 10-row batch on an
/// `unaware` table ([`write_file_per_batch`]), a file per bucket otherwise ([`write_once`]).
async fn write_rows(
    table: &Table,
    unaware: bool,
    first: i64,
    rows: usize,
) -> Res<Vec<CommitMessage>> {
    if unaware {
        write_file_per_batch(table, first, rows).await
    } else {
        write_once(table, first, rows).await
    }
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    // `scan` runs on the CLI's runtime (a worker per available core); the others on two.
    if args.get(1).map(String::as_str) != Some("scan") {
        rt.worker_threads(2);
    }
    rt.enable_all().build()?.block_on(run(args))
}

async fn run(args: Vec<String>) -> Res<()> {
    match args.get(1).map(String::as_str) {
        Some("build") => {
            let (dir, commits, files): (&str, usize, usize) =
                (&args[2], args[3].parse()?, args[4].parse()?);
            let t0 = Instant::now();
            let daily = args.get(5).map(String::as_str) == Some("daily");
            let unaware = args.get(5).map(String::as_str) == Some("unaware");
            let mut json = SCHEMA_JSON.replace("BUCKETS", &files.to_string());
            if daily {
                json = json.replace(r#""options""#, r#""partitionKeys": ["qty"], "options""#);
            }
            if unaware {
                json = SCHEMA_JSON.replace(
                    r#""bucket": "BUCKETS", "bucket-key": "id""#,
                    r#""bucket": "-1", "target-file-size": "1b""#,
                );
            }
            // An existing TABLE is continued: commits already made count towards COMMITS (a
            // long build stopped part way goes on where it stopped).
            let (table, done) = if std::path::Path::new(dir).join("snapshot").exists() {
                let table = Table::open(dir).await?;
                let done = table.latest_snapshot().await?.map_or(0, |s| s.id as usize);
                (table, done)
            } else {
                (Table::create(dir, json.as_bytes()).await?, 0)
            };
            let rows = 10 * files;
            for c in done..commits {
                let msgs = if daily {
                    let qty = (c as i64 + 310) % 1000;
                    let ids = (0..rows as i64).map(|j| qty + 1000 * j).collect();
                    let mut w = table.new_write().await?;
                    w.write(&batch_of(ids)?).await?;
                    w.prepare_commit().await?
                } else {
                    write_rows(&table, unaware, (c * rows) as i64, rows).await?
                };
                table.new_commit(None).commit(msgs).await?;
                if (c + 1) % 100 == 0 {
                    println!(
                        "commits={} elapsed_s={:.1}",
                        c + 1,
                        t0.elapsed().as_secs_f64()
                    );
                }
            }
        }
        Some("commit") => {
            let (dir, writers, buckets): (&str, usize, usize) =
                (&args[2], args[3].parse()?, args[4].parse()?);
            let table = Table::open(dir).await?;
            // Each 10-row batch a file on an `unaware` table, as `build` makes them.
            let unaware = CoreOptions::new(table.schema().await?.options).bucket()? == -1;
            let t0 = Instant::now();
            let mut msgs = Vec::new();
            let mut files = 0usize;
            for k in 0..writers {
                // 10 rows per bucket on average, ids past the build's range.
                let rows = 10 * buckets;
                let m =
                    write_rows(&table, unaware, 1_000_000_000 + (k * rows) as i64, rows).await?;
                files += m
                    .iter()
                    .map(|m| m.data_increment.new_files.len())
                    .sum::<usize>();
                msgs.extend(m);
            }
            let t_write = t0.elapsed();
            let t1 = Instant::now();
            let out = table.new_commit(None).commit(msgs).await?;
            let t_commit = t1.elapsed();
            println!(
                "files={files} write_s={:.3} commit_ms={:.1} snapshots={:?} attempts={}",
                t_write.as_secs_f64(),
                t_commit.as_secs_f64() * 1000.0,
                out.snapshot_ids,
                out.attempts
            );
        }
        Some("write") => {
            let t0 = Instant::now();
            let json = std::fs::read(&args[3])?;
            let table = Table::create(&args[2], &json).await?;
            let reader =
                arrow_ipc::reader::FileReader::try_new(std::fs::File::open(&args[4])?, None)?;
            let mut w = table.new_write().await?;
            for b in reader {
                w.write(&b?).await?;
            }
            let msgs = w.prepare_commit().await?;
            let files: usize = msgs.iter().map(|m| m.data_increment.new_files.len()).sum();
            let out = table.new_commit(None).commit(msgs).await?;
            println!(
                "rows={} files={files} snapshots={:?} s={:.3}",
                w.rows_written(),
                out.snapshot_ids,
                t0.elapsed().as_secs_f64()
            );
        }
        Some("plan") => {
            let table = Table::open(&args[2]).await?;
            let t0 = Instant::now();
            let plan = table.scan().plan().await?;
            let ms = t0.elapsed().as_secs_f64() * 1000.0;
            let files: usize = plan.splits.iter().map(|s| s.data_files.len()).sum();
            println!("splits={} files={files} plan_ms={ms:.1}", plan.splits.len());
        }
        Some("compact") => {
            // kbench compact TABLE: full compaction of every bucket, committed.
            let table = Table::open(&args[2]).await?;
            let t0 = Instant::now();
            let report = table
                .compact(paimon_native::compact::CompactOptions {
                    full: true,
                    ..Default::default()
                })
                .await?;
            let files_in: usize = report.buckets.iter().map(|b| b.files_in).sum();
            println!(
                "buckets={} files_in={files_in} snapshot={:?} ms={:.1}",
                report.buckets.len(),
                report.snapshot,
                t0.elapsed().as_secs_f64() * 1000.0
            );
        }
        Some("scan") => {
            // kbench scan TABLE [SPLITS_IN_FLIGHT [IN_FLIGHT_MIB]]
            let table = Table::open(&args[2]).await?;
            let mut scan = table.scan();
            if let Some(n) = args.get(3) {
                scan = scan.with_splits_in_flight(n.parse()?);
            }
            if let Some(mib) = args.get(4) {
                scan = scan.with_in_flight_bytes(mib.parse::<u64>()? << 20);
            }
            let t0 = Instant::now();
            let mut stream = scan.to_stream().await?;
            let (mut rows, mut batches) = (0usize, 0usize);
            while let Some(b) = futures::StreamExt::next(&mut stream).await {
                rows += b?.num_rows();
                batches += 1;
            }
            println!(
                "rows={rows} batches={batches} ms={:.1}",
                t0.elapsed().as_secs_f64() * 1000.0
            );
        }
        _ => {
            eprintln!(
                "usage: kbench build TABLE COMMITS FILES_PER_COMMIT [daily|unaware] | kbench commit TABLE WRITERS BUCKETS | kbench write TABLE SCHEMA_JSON INPUT.arrow | kbench plan TABLE | kbench scan TABLE [SPLITS_IN_FLIGHT [IN_FLIGHT_MIB]] | kbench compact TABLE"
            );
            std::process::exit(2);
        }
    }
    Ok(())
}
