//! Deletion vectors: one index-file entry (32- and 64-bit roaring bitmaps), CRC checked and
//! not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use paimon_kernel::format::deletion_vector::DeletionVector;

fuzz_target!(|data: &[u8]| {
    let Some((len, entry)) = data.split_first_chunk::<4>() else {
        return;
    };
    let meta_length = i32::from_be_bytes(*len);
    for verify in [true, false] {
        if let Ok(dv) = DeletionVector::decode_entry(entry, meta_length, "index/fuzz", verify) {
            let _ = dv.cardinality();
            let _ = dv.max_position();
            let _ = dv.iter().take(1000).count();
        }
    }
});
