//! The managed-BLOB view: which data files list `.blobref` sidecars in their extra files.
//! Decoding the sidecars (which packs they reference) is not part of this view yet; without
//! sidecars the view says there are no managed-blob packs.

use serde::{Deserialize, Serialize};

use super::{partition_fields, partition_forms};
use crate::error::Result;
use crate::spec::{ManifestEntry, TableSchema};

/// What the view says when no data file lists a `.blobref` sidecar.
pub const NO_MANAGED_BLOBS: &str = "no managed-blob packs";

/// Data files with `.blobref` sidecars.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedBlobsView {
    /// One entry per data file with sidecars, in manifest order.
    pub files: Vec<BlobRefFile>,
    /// [`NO_MANAGED_BLOBS`] when `files` is empty; otherwise what is (not) shown.
    pub note: String,
}

/// A data file and its `.blobref` sidecars.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobRefFile {
    /// The partition as `$files` renders it.
    pub partition: String,
    /// The bucket.
    pub bucket: i32,
    /// The data file.
    pub data_file: String,
    /// Its `.blobref` extra files.
    pub blobrefs: Vec<String>,
}

/// The data files of `entries` that list `.blobref` extra files.
///
/// # Errors
/// [`crate::Error::Corrupt`] for partitions that do not decode.
pub fn managed_blobs(schema: &TableSchema, entries: &[ManifestEntry]) -> Result<ManagedBlobsView> {
    let pfields = partition_fields(schema)?;
    let mut files = Vec::new();
    for e in entries {
        let refs: Vec<String> = e
            .file
            .extra_files
            .iter()
            .filter(|x| x.ends_with(".blobref"))
            .cloned()
            .collect();
        if refs.is_empty() {
            continue;
        }
        files.push(BlobRefFile {
            partition: partition_forms(&pfields, &e.partition)?.0,
            bucket: e.bucket,
            data_file: e.file.file_name.clone(),
            blobrefs: refs,
        });
    }
    let note = if files.is_empty() {
        NO_MANAGED_BLOBS.to_owned()
    } else {
        "data files with .blobref sidecars; the packs they reference are not decoded by this view yet"
            .to_owned()
    };
    Ok(ManagedBlobsView { files, note })
}
