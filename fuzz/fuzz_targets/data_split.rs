//! Java `DataSplit#serialize` bytes: decoded, and every split that decodes encodes again to
//! the same bytes' split.
#![no_main]
use libfuzzer_sys::fuzz_target;
use paimon_kernel::commit::split_serializer::{decode, encode};

fuzz_target!(|data: &[u8]| {
    let Ok(split) = decode(data, "file:/t") else {
        return;
    };
    if let Ok(bytes) = encode(&split, "file:/t") {
        let again = decode(&bytes, "file:/t").expect("our own bytes decode");
        assert_eq!(again, split);
    }
});
