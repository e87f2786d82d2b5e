//! Writing: rows (Arrow) become data files and commit messages.
//!
//! Writers are pure: they buffer rows, encode files into bytes and hand them to the host as
//! `Put` requests; the names of new files come from a host-given seed ([`ids::NameSource`]).

pub mod alter;
pub mod blob_refs;
pub mod blob_validation;
pub(crate) mod blob_write;
pub mod bucket;
pub mod create;
pub mod cross_partition;
pub mod deletion_vectors;
pub mod dynamic_bucket;
pub mod encode;
pub mod external;
pub mod file;
pub mod ids;
pub mod inline_blob;
pub mod job;
pub mod kv_file;
pub mod managed_blob;
pub mod postpone;
pub mod postpone_fixed;
pub mod restore;
pub mod row;
pub mod stats;
pub mod table_write;
pub mod update;

pub use file::{
    FileContent, FilePart, FilePiece, StreamedFile, completes_file, group_by_path, put_file,
    put_file_in_parts, put_file_machine, put_files_in_order,
};
pub use ids::NameSource;
pub use table_write::{FileToPut, TableWrite, WriteOptions, WriteRestore};

#[cfg(test)]
mod streamed_tests;
