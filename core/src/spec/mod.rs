//! Table metadata: data types, schema, snapshot, manifests, data file meta, binary rows and
//! options.

pub(crate) mod json;
pub mod options;
pub mod schema;
pub mod snapshot;
pub mod types;

pub use options::{ChangelogProducer, CoreOptions, MergeEngine};
pub use schema::{TableSchema, decode_schema, encode_schema};
pub use snapshot::{CommitKind, Snapshot, Tag, decode_hint, decode_snapshot, decode_tag};
pub use types::{DataField, DataType, TypeKind};
