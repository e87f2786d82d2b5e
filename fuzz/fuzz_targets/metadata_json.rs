//! Snapshot, schema and tag JSON, and the LATEST/EARLIEST hints.
#![no_main]
use libfuzzer_sys::fuzz_target;
use paimon_kernel::spec::schema::decode_schema;
use paimon_kernel::spec::snapshot::{decode_hint, decode_snapshot, decode_tag};

fuzz_target!(|data: &[u8]| {
    let _ = decode_snapshot(data, "snapshot/snapshot-1");
    let _ = decode_tag(data, "tag/tag-t");
    if let Ok(schema) = decode_schema(data, "schema/schema-0") {
        let _ = paimon_kernel::spec::schema::encode_schema(&schema);
    }
    let _ = decode_hint(data);
});
