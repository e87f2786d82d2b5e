//! Corpus helpers: where the corpus is, the `fields` of an expected file, and rows in the
//! corpus' canonical JSON encoding (rendered by [`paimon_kernel::canonical`]).

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use paimon_kernel::spec::types::DataField;
use serde_json::Value;

/// `conformance/tables` of this repository.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

/// Every row of `batch` as canonical JSON (panics on a type without a rendering).
pub fn render_batch(batch: &RecordBatch) -> Vec<Value> {
    paimon_kernel::canonical::rows(batch).expect("canonical JSON of the batch")
}

/// The `fields` of an expected file (the schema file's field list: id, name, type).
pub fn parse_fields(fields: &Value) -> Vec<DataField> {
    fields
        .as_array()
        .expect("fields array")
        .iter()
        .map(|f| DataField::from_json(f).expect("a schema field"))
        .collect()
}
