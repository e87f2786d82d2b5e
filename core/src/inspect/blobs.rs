//! The managed-BLOB view: which data files list `.blobref` sidecars in their extra files
//! ([`managed_blobs`], from the manifests alone), and which packs those sidecars reference,
//! with the data files referencing each ([`read_managed_blobs`], which reads the sidecars).

use std::collections::BTreeMap;

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

use super::{partition_fields, partition_forms};
use crate::error::Result;
use crate::format::blob_ref::decode_blobref;
use crate::io::Io;
use crate::spec::file_names::BLOBREF_SUFFIX;
use crate::spec::partition::{bucket_path, partition_path};
use crate::spec::{ManifestEntry, TableSchema};

/// What the view says when no data file lists a `.blobref` sidecar.
pub const NO_MANAGED_BLOBS: &str = "no managed-blob packs";

/// Data files with `.blobref` sidecars and, when read, the packs they reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedBlobsView {
    /// One entry per data file with sidecars, in manifest order.
    pub files: Vec<BlobRefFile>,
    /// Every pack a live sidecar references, by partition, bucket and pack name
    /// ([`read_managed_blobs`]; empty from [`managed_blobs`]).
    #[serde(default)]
    pub packs: Vec<PackUse>,
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
    /// The pack names its sidecars reference, sorted ([`read_managed_blobs`]; empty from
    /// [`managed_blobs`]).
    #[serde(default)]
    pub packs: Vec<String>,
}

/// A managed-BLOB pack and the live data files whose sidecars reference it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackUse {
    /// The partition as `$files` renders it.
    pub partition: String,
    /// The bucket.
    pub bucket: i32,
    /// The pack's file name (the reference's relative path).
    pub pack: String,
    /// The reference's storage root (the writer's URI of the pack's directory).
    pub storage_root: String,
    /// Where the view looked for the pack: the referencing files' bucket directory, relative
    /// to the table root.
    pub path: String,
    /// The pack's size in bytes; `None` when it is not there (collected, or written
    /// elsewhere).
    pub size_bytes: Option<u64>,
    /// The data files referencing it, in manifest order.
    pub referenced_by: Vec<String>,
}

/// The data files of `entries` that list `.blobref` extra files (no sidecar is read).
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
            .filter(|x| x.ends_with(BLOBREF_SUFFIX))
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
            packs: Vec::new(),
        });
    }
    let note = if files.is_empty() {
        NO_MANAGED_BLOBS.to_owned()
    } else {
        "data files with .blobref sidecars (their packs are not read by this view)".to_owned()
    };
    Ok(ManagedBlobsView {
        files,
        packs: Vec::new(),
        note,
    })
}

/// (partition, bucket, pack, storage root) of a referenced pack; mapped to the bucket
/// directory and the referencing files.
type PackKey = (String, i32, String, String);

/// [`managed_blobs`] with the sidecars read: one round reads every sidecar of `entries`
/// (the live data files of a snapshot), a second `Head`s every referenced pack in the bucket
/// directory of the files referencing it. Each file lists its packs; each pack its size and
/// referencing files.
///
/// # Errors
/// IO errors and corrupt sidecars (naming the file); a missing sidecar is an error too (a
/// live file's sidecar must exist). A missing pack is not an error (`size_bytes` = `None`).
pub async fn read_managed_blobs<T>(
    io: &Io<T>,
    schema: &TableSchema,
    entries: &[ManifestEntry],
) -> Result<ManagedBlobsView> {
    let mut view = managed_blobs(schema, entries)?;
    if view.files.is_empty() {
        return Ok(view);
    }
    let options = schema.core_options();
    let keys = partition_fields(schema)?;
    let naming = options.partition_naming()?;
    let data_root = options.data_root();
    // (index in view.files, bucket directory, sidecar path) for every sidecar.
    let mut sidecars = Vec::new();
    let mut at = 0;
    for e in entries {
        let Some(f) = view.files.get(at) else { break };
        if f.data_file != e.file.file_name || f.bucket != e.bucket {
            continue;
        }
        let dir = bucket_path(
            &data_root,
            &partition_path(&keys, &e.partition, &naming)?,
            e.bucket,
        );
        for p in e.file.extra_file_paths(&dir) {
            if p.ends_with(BLOBREF_SUFFIX) {
                sidecars.push((at, dir.clone(), p));
            }
        }
        at += 1;
    }
    let bytes = join_all(sidecars.iter().map(|(_, _, p)| io.read(p))).await;
    let mut packs: BTreeMap<PackKey, (String, Vec<String>)> = BTreeMap::new();
    for ((i, dir, path), b) in sidecars.iter().zip(bytes) {
        let refs = decode_blobref(&b?, path)?;
        let f = &mut view.files[*i];
        for r in refs {
            if !f.packs.contains(&r.relative_path) {
                f.packs.push(r.relative_path.clone());
            }
            let use_ = packs
                .entry((
                    f.partition.clone(),
                    f.bucket,
                    r.relative_path.clone(),
                    r.storage_root_id.clone(),
                ))
                .or_insert_with(|| (dir.clone(), Vec::new()));
            if !use_.1.contains(&f.data_file) {
                use_.1.push(f.data_file.clone());
            }
        }
        f.packs.sort();
    }
    let paths: Vec<String> = packs
        .iter()
        .map(|((_, _, pack, _), (dir, _))| format!("{dir}/{pack}"))
        .collect();
    let sizes = join_all(paths.iter().map(|p| io.head(p))).await;
    for ((((partition, bucket, pack, storage_root), (_, referenced_by)), path), size) in
        packs.into_iter().zip(paths).zip(sizes)
    {
        view.packs.push(PackUse {
            partition,
            bucket,
            pack,
            storage_root,
            path,
            size_bytes: size?,
            referenced_by,
        });
    }
    view.note = format!(
        "{} data file(s) with .blobref sidecars reference {} pack(s)",
        view.files.len(),
        view.packs.len()
    );
    Ok(view)
}
