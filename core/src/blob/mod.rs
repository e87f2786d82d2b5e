//! BLOBs: large binary values (`BLOB`, `ARRAY<BLOB>`, `MAP<K, BLOB>` columns) kept out of the
//! data file, and how they are written, checked and read back.
//!
//! A BLOB-file-shaped column is stored in one of three ways (see [`validation`]):
//!
//! * **`.blob` files** (append tables with data evolution): each BLOB column gets its own
//!   rolling `.blob` files beside the normal data file ([`files`]);
//! * **managed BLOBs** (primary-key tables): the payloads go to `.managed.blob` packs, the
//!   data file keeps blob descriptors and lists the packs its rows use in a `.blobref`
//!   sidecar ([`managed`]);
//! * **inline** (`blob-descriptor-field`, `blob-view-field`): the column is an ordinary binary
//!   column of the data file holding descriptors or blob view structs ([`inline`]).
//!
//! An input value may also be a *reference* (a serialized descriptor of bytes elsewhere): its
//! length is resolved before the write and its bytes copied while the file is written
//! ([`references`]). A read replaces stored descriptors by the bytes they point at
//! ([`resolve`]).
//!
//! The byte layouts are codecs in [`crate::format`]: [`crate::format::blob`] (`.blob` files),
//! [`crate::format::blob_descriptor`] (descriptors, view structs),
//! [`crate::format::blob_ref`] (`.blobref` sidecars); file-name suffixes are in
//! [`crate::spec::file_names`]. Operations over BLOBs live with their operation:
//! data-evolution reads with blob fallback ([`crate::read::evolution::blob_fallback`]),
//! compaction of `.blob` files (`compact::data_evolution::blob`), pack collection
//! (`maintenance::packs`), the inspector's view (`inspect::blobs`).
//!
//! Source: Java `org.apache.paimon.data.Blob`, `BlobDescriptor`, `BlobRef`, `BlobView`;
//! `org.apache.paimon.append.DedicatedFormatRollingFileWriter`, `MultipleBlobFileWriter`;
//! `org.apache.paimon.operation.BlobFileContext`; `org.apache.paimon.types.BlobType`;
//! `org.apache.paimon.schema.SchemaValidation` (the BLOB rules); `spec/managed-blob.md`.

pub(crate) mod files;
pub mod inline;
pub mod managed;
pub mod references;
pub mod resolve;
pub mod validation;
