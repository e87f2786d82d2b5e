//! Manifest lists, manifests and index manifests (Avro object container files).
#![no_main]
use libfuzzer_sys::fuzz_target;
use paimon_kernel::spec::{decode_index_manifest, decode_manifest, decode_manifest_list};

fuzz_target!(|data: &[u8]| {
    let _ = decode_manifest_list(data, "manifest/manifest-list-fuzz");
    let _ = decode_manifest(data, "manifest/manifest-fuzz");
    let _ = decode_index_manifest(data, "manifest/index-manifest-fuzz");
});
