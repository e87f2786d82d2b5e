//! Table metadata: data types, schema, snapshot, manifests, data file meta, binary rows and
//! options.

pub mod types;

pub use types::{DataField, DataType, TypeKind};
