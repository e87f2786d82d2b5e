// Physical floor: decode every *.parquet file under a directory with arrow-rs `parquet`
// (sync ArrowReaderBuilder, all columns incl. Paimon system columns) into Arrow batches.
// usage: decode_floor <dir> [threads]   (bench/peer/src/parquet_floor.rs built with parquet 59)
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { walk(&p, out); }
        else if p.extension().map(|x| x == "parquet").unwrap_or(false) { out.push(p); }
    }
}

fn decode(p: &Path) -> (u64, u64, u64) {
    let f = std::fs::File::open(p).unwrap();
    let len = f.metadata().unwrap().len();
    let r = ParquetRecordBatchReaderBuilder::try_new(f).unwrap().with_batch_size(8192).build().unwrap();
    let (mut rows, mut mem) = (0u64, 0u64);
    for b in r { let b = b.unwrap(); rows += b.num_rows() as u64; mem += b.get_array_memory_size() as u64; }
    (rows, len, mem)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(1);
    let mut files = Vec::new();
    walk(Path::new(&args[1]), &mut files);
    files.sort();
    let t0 = Instant::now();
    let chunks: Vec<Vec<PathBuf>> = (0..threads).map(|i| files.iter().skip(i).step_by(threads).cloned().collect()).collect();
    let res: Vec<(u64,u64,u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = chunks.iter().map(|c| s.spawn(move || {
            let mut acc = (0,0,0);
            for p in c { let r = decode(p); acc.0 += r.0; acc.1 += r.1; acc.2 += r.2; }
            acc
        })).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let el = t0.elapsed().as_secs_f64();
    let rows: u64 = res.iter().map(|r| r.0).sum();
    let bytes: u64 = res.iter().map(|r| r.1).sum();
    let mem: u64 = res.iter().map(|r| r.2).sum();
    println!("reader=arrow-rs-parquet-floor files={} rows={} file_bytes={} arrow_bytes={} threads={} total_s={:.3} rows_per_s={:.0} MB_per_s={:.1}",
        files.len(), rows, bytes, mem, threads, el, rows as f64/el, bytes as f64/1e6/el);
}
