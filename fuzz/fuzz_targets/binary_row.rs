//! BinaryRow: a serialized row read as every field type of the corpus' partition keys and
//! stats.
#![no_main]
use libfuzzer_sys::fuzz_target;
use paimon_kernel::spec::{BinaryRow, DataType};

const TYPES: &[&str] = &[
    "INT", "BIGINT", "SMALLINT", "TINYINT", "BOOLEAN", "FLOAT", "DOUBLE", "STRING", "BYTES",
    "DECIMAL(10, 2)", "DECIMAL(38, 10)", "DATE", "TIME(3)", "TIMESTAMP(3)", "TIMESTAMP(9)",
    "TIMESTAMP(6) WITH LOCAL TIME ZONE", "CHAR(3)", "VARBINARY(8)",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let Ok(row) = BinaryRow::from_serialized(bytes, "fuzz") else {
        return;
    };
    let types: Vec<DataType> = TYPES
        .iter()
        .filter_map(|t| DataType::parse_sql(t).ok())
        .collect();
    for pos in 0..row.arity().min(64) {
        let ty = &types[(usize::from(selector) + pos) % types.len()];
        let _ = row.field(pos, ty);
    }
});
