//! Blob files: the index at the end, then every record it points to.
#![no_main]
use libfuzzer_sys::fuzz_target;
use paimon_kernel::format::blob::{decode_blob_file_index, decode_blob_record};

fuzz_target!(|data: &[u8]| {
    if let Ok(index) = decode_blob_file_index(data, "fuzz.blob") {
        let _ = format!("{index:?}");
    }
    let _ = decode_blob_record(data, "fuzz.blob", 0);
});
