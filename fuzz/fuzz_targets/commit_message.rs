//! Java `CommitMessageSerializer` bytes at every version the decoder reads: one message and
//! lists (the first byte picks the version).
#![no_main]
use libfuzzer_sys::fuzz_target;
use paimon_kernel::commit::serializer::{MIN_DECODE_VERSION, VERSION, decode, decode_list};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let span = VERSION - MIN_DECODE_VERSION + 1;
    let version = MIN_DECODE_VERSION + i32::from(selector) % span;
    let _ = decode(version, bytes);
    let _ = decode_list(version, bytes);
});
