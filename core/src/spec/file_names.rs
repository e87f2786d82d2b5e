//! How the files of a table are named: the prefixes of data, changelog, index and metadata
//! files, the bucket directory prefix, and the suffixes that tell a file's kind (`.blob`,
//! `.managed.blob`, `.blobref`, `.vector.`). Every layer takes them from here.
//!
//! Source: Java `org.apache.paimon.io.DataFilePathFactory` (data and changelog file prefixes,
//! `.blob` / `.vector.` files), `CoreOptions` (`data-file.prefix`, `changelog-file.prefix`
//! defaults), `org.apache.paimon.utils.FileStorePathFactory` (`bucket-`, `manifest-`,
//! `manifest-list-`, `index-`), `SnapshotManager` / `SchemaManager` (`snapshot-`, `schema-`),
//! `BlobFileFormat.isBlobFile`, `VectorType.isVectorStoreFile`; the managed-BLOB pack and
//! `.blobref` sidecar suffixes of `spec/managed-blob.md`.

/// Default name prefix of data files (`data-file.prefix`).
pub const DATA_FILE_PREFIX: &str = "data-";
/// Default name prefix of changelog files (`changelog-file.prefix`).
pub const CHANGELOG_FILE_PREFIX: &str = "changelog-";
/// Name prefix of index files (`index-<uuid>-<n>`).
pub const INDEX_FILE_PREFIX: &str = "index-";
/// Name prefix of manifest files (`manifest-<uuid>-<n>`).
pub const MANIFEST_FILE_PREFIX: &str = "manifest-";
/// Name prefix of manifest lists (`manifest-list-<uuid>-<n>`).
pub const MANIFEST_LIST_PREFIX: &str = "manifest-list-";
/// Name prefix of snapshot files (`snapshot/snapshot-<id>`) and, below `changelog/`, of
/// long-lived changelog files (`changelog/changelog-<id>`, see [`CHANGELOG_FILE_PREFIX`]).
pub const SNAPSHOT_FILE_PREFIX: &str = "snapshot-";
/// Name prefix of schema files (`schema/schema-<id>`).
pub const SCHEMA_FILE_PREFIX: &str = "schema-";
/// Name prefix of bucket directories (`bucket-<n>`, `bucket-postpone`).
pub const BUCKET_DIR_PREFIX: &str = "bucket-";

/// File-name suffix of a dedicated BLOB file of a data-evolution table.
pub const BLOB_SUFFIX: &str = ".blob";
/// File-name suffix of a managed-BLOB pack.
pub const MANAGED_BLOB_SUFFIX: &str = ".managed.blob";
/// File-name suffix of a reference sidecar (`<data file name>.blobref`).
pub const BLOBREF_SUFFIX: &str = ".blobref";
/// What the name of a dedicated vector-store file contains.
pub const VECTOR_STORE_MARK: &str = ".vector.";

/// Dedicated BLOB files (Java `BlobFileFormat.isBlobFile`).
pub fn is_blob_file(file_name: &str) -> bool {
    file_name.ends_with(BLOB_SUFFIX)
}

/// Dedicated vector-store files (Java `VectorType.isVectorStoreFile`).
pub fn is_vector_store_file(file_name: &str) -> bool {
    file_name.contains(VECTOR_STORE_MARK)
}
