//! Table metadata: data types, schema, snapshot, manifests, data file meta, binary rows and
//! options.

mod avro;
pub(crate) mod avro_codec;
pub mod avro_write;
pub mod binary_row;
pub mod data_file;
pub mod external_paths;
pub mod file_names;
pub mod index_manifest;
pub(crate) mod json;
pub mod manifest;
pub mod manifest_columnar;
pub mod manifest_list;
pub mod murmur;
pub mod options;
pub mod partition;
pub mod row_range;
pub mod schema;
pub mod snapshot;
pub mod special_fields;
pub mod types;

pub use avro_write::{AvroWriteOptions, ManifestCodec};
pub use binary_row::{BinaryRow, Datum, RowOrigin};
pub use data_file::{DataFileMeta, FileSource, NullCounts, SimpleStats};
pub use index_manifest::{
    DeletionVectorMeta, GlobalIndexMeta, IndexFileMeta, IndexManifestEntry, combine_index_entries,
    decode_index_manifest, encode_index_manifest,
};
pub use manifest::{
    FileIdentifier, FileKind, ManifestEntry, decode_manifest, decode_manifest_into,
    encode_manifest, merge_entries,
};
pub use manifest_list::{ManifestFileMeta, decode_manifest_list, encode_manifest_list};
pub use options::{ChangelogProducer, CoreOptions, MergeEngine};
pub use schema::{TableSchema, decode_schema, encode_schema};
pub use snapshot::{CommitKind, Snapshot, Tag, decode_hint, decode_snapshot, decode_tag};
pub use types::{DataField, DataType, TypeKind};
