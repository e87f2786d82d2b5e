//! Parquet footer handling through our code path: the tail length, then the metadata with
//! its column-chunk bounds checks, as if `data` were the whole file.
#![no_main]
use libfuzzer_sys::fuzz_target;
use paimon_kernel::format::parquet::{decode_parquet_footer_tail, decode_parquet_metadata};

fuzz_target!(|data: &[u8]| {
    let size = data.len() as u64;
    if let Some(last8) = data.len().checked_sub(8).and_then(|s| data.get(s..)) {
        let _ = decode_parquet_footer_tail("fuzz.parquet", size, last8);
    }
    let _ = decode_parquet_metadata("fuzz.parquet", size, data);
});
