//! Writing a commit's metadata files: manifests (rolling at the target size), manifest lists
//! and index manifests under `manifest/`, with deterministic names.
//!
//! Source: Java `ManifestFile#write` (`RollingFileWriterImpl`: the size is checked every
//! 1000 entries), `ManifestFile.ManifestEntryWriter#result`, `ManifestList#write`,
//! `IndexManifestFile#writeWithoutRolling`, `FileStorePathFactory` (one UUID per committer,
//! one counter per file kind: `manifest-<uuid>-<n>`, `manifest-list-<uuid>-<n>`,
//! `index-manifest-<uuid>-<n>`).
//!
//! Every file is `Put` with [`PutMode::CreateNew`]: an existing object is never replaced. If a
//! name is taken (a rerun with the same seed after a crash left it behind), the next name of
//! that kind is used; the taken object is not ours and is never deleted. The paths of every
//! `Put` that succeeded or whose outcome is unknown are recorded, so a failed attempt can
//! delete what it wrote.

use bytes::Bytes;
use futures_util::future::join_all;

use crate::error::{Error, Result};
use crate::io::{Io, PutMode};
use crate::scan::planner::MANIFEST_DIR;
use crate::spec::file_names::{MANIFEST_FILE_PREFIX, MANIFEST_LIST_PREFIX};
use crate::spec::manifest_list::manifest_file_meta_for;
use crate::spec::{
    AvroWriteOptions, DataType, IndexManifestEntry, ManifestCodec, ManifestEntry, ManifestFileMeta,
    encode_index_manifest, encode_manifest, encode_manifest_list,
};
use crate::util::NameSource;

/// Entries between two size checks of a rolling manifest writer (Java
/// `RollingFileWriter.CHECK_ROLLING_RECORD_CNT`).
pub const CHECK_ROLLING_RECORD_COUNT: usize = 1000;

/// How many taken names of one file are skipped before giving up.
const MAX_NAME_TRIES: usize = 64;

/// The kind of a metadata file, for its name prefix and counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetaKind {
    /// `manifest-<uuid>-<n>`
    Manifest,
    /// `manifest-list-<uuid>-<n>`
    ManifestList,
    /// `index-manifest-<uuid>-<n>`
    IndexManifest,
}

/// Writes the metadata files of one commit and remembers what it wrote.
#[derive(Debug)]
pub(crate) struct MetaWriter {
    names: NameSource,
    uuid: String,
    counters: [u64; 3],
    codec: ManifestCodec,
    target_size_bytes: i64,
    partition_types: Vec<DataType>,
    /// Paths `Put` by the current attempt (done or outcome unknown), in order.
    written: Vec<String>,
}

/// Path of a metadata file under `manifest/`.
pub(crate) fn manifest_path(file_name: &str) -> String {
    format!("{MANIFEST_DIR}/{file_name}")
}

impl MetaWriter {
    pub(crate) fn new(
        mut names: NameSource,
        codec: ManifestCodec,
        target_size_bytes: i64,
        partition_types: Vec<DataType>,
    ) -> Self {
        let uuid = names.uuid();
        MetaWriter {
            names,
            uuid,
            counters: [0; 3],
            codec,
            target_size_bytes,
            partition_types,
            written: Vec::new(),
        }
    }

    /// A random-looking UUID for the snapshot (`uuid` field).
    pub(crate) fn next_uuid(&mut self) -> String {
        self.names.uuid()
    }

    fn next_name(&mut self, kind: MetaKind) -> String {
        let (prefix, i) = match kind {
            MetaKind::Manifest => (MANIFEST_FILE_PREFIX, 0),
            MetaKind::ManifestList => (MANIFEST_LIST_PREFIX, 1),
            MetaKind::IndexManifest => ("index-manifest-", 2),
        };
        let n = self.counters[i];
        self.counters[i] += 1;
        format!("{prefix}{}-{n}", self.uuid)
    }

    fn avro_options(&mut self) -> AvroWriteOptions {
        AvroWriteOptions {
            codec: self.codec,
            sync_marker: self.names.next_bytes(),
        }
    }

    /// How many paths the current attempt wrote so far.
    pub(crate) fn written_len(&self) -> usize {
        self.written.len()
    }

    /// The paths the current attempt wrote after it had written `mark` of them.
    pub(crate) fn written_since(&self, mark: usize) -> Vec<String> {
        self.written.get(mark..).unwrap_or_default().to_vec()
    }

    /// Take the list of paths written by the current attempt (and start a new one).
    pub(crate) fn take_written(&mut self) -> Vec<String> {
        std::mem::take(&mut self.written)
    }

    /// `Put` every file (create-new) in one round, then the ones whose name was taken again
    /// under new names. Returns the final file names, in order.
    async fn put_all<T>(
        &mut self,
        io: &Io<T>,
        files: Vec<(MetaKind, Bytes)>,
    ) -> Result<Vec<String>> {
        let mut names: Vec<String> = files.iter().map(|(k, _)| self.next_name(*k)).collect();
        let mut pending: Vec<usize> = (0..files.len()).collect();
        for _ in 0..MAX_NAME_TRIES {
            if pending.is_empty() {
                return Ok(names);
            }
            let paths: Vec<String> = pending.iter().map(|&i| manifest_path(&names[i])).collect();
            let results = join_all(
                pending
                    .iter()
                    .zip(&paths)
                    .map(|(&i, path)| io.put(path, files[i].1.clone(), PutMode::CreateNew)),
            )
            .await;
            let mut taken = Vec::new();
            let mut first_error = None;
            for (&i, r) in pending.iter().zip(results) {
                match r {
                    Ok(true) => self.written.push(manifest_path(&names[i])),
                    Ok(false) => taken.push(i),
                    Err(e) => {
                        // Outcome unknown: the object may exist, so it is ours to clean.
                        self.written.push(manifest_path(&names[i]));
                        first_error.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = first_error {
                return Err(e);
            }
            for &i in &taken {
                names[i] = self.next_name(files[i].0);
            }
            pending = taken;
        }
        Err(Error::invalid(format!(
            "cannot find a free name for a new metadata file under {MANIFEST_DIR}/ after \
             {MAX_NAME_TRIES} tries (is the commit seed reused?)"
        )))
    }

    /// Encode `entries` into manifest files, rolling as Java does: after every
    /// [`CHECK_ROLLING_RECORD_COUNT`] entries the file is closed once it reached the target
    /// size. Returns the files' entries and bytes (not yet written).
    fn encode_rolling(&mut self, entries: &[ManifestEntry]) -> Result<Vec<(usize, usize, Bytes)>> {
        let mut cuts: Vec<(usize, usize)> = Vec::new();
        if entries.len() <= CHECK_ROLLING_RECORD_COUNT {
            if !entries.is_empty() {
                cuts.push((0, entries.len()));
            }
        } else {
            // Size of the current file estimated as the sum of its chunks encoded alone.
            let mut file_start = 0;
            let mut estimate: i64 = 0;
            let mut pos = 0;
            while pos < entries.len() {
                let end = (pos + CHECK_ROLLING_RECORD_COUNT).min(entries.len());
                if end - pos == CHECK_ROLLING_RECORD_COUNT {
                    let probe = encode_manifest(
                        &entries[pos..end],
                        &AvroWriteOptions {
                            codec: self.codec,
                            sync_marker: [0; 16],
                        },
                    )?;
                    estimate = estimate.saturating_add(probe.len() as i64);
                    if estimate >= self.target_size_bytes {
                        cuts.push((file_start, end));
                        file_start = end;
                        estimate = 0;
                    }
                }
                pos = end;
            }
            if file_start < entries.len() {
                cuts.push((file_start, entries.len()));
            }
        }
        cuts.into_iter()
            .map(|(a, b)| {
                let options = self.avro_options();
                Ok((
                    a,
                    b,
                    Bytes::from(encode_manifest(&entries[a..b], &options)?),
                ))
            })
            .collect()
    }

    /// The [`ManifestFileMeta`] of a manifest holding `entries`: as
    /// [`manifest_file_meta_for`], with Java's schema id (the largest of the entries', or
    /// `empty_schema_id`) and row-id bounds (none as soon as one entry has no first row id).
    fn meta_of(
        &self,
        name: &str,
        size: usize,
        entries: &[ManifestEntry],
        empty_schema_id: i64,
    ) -> Result<ManifestFileMeta> {
        let schema_id = entries
            .iter()
            .map(|e| e.file.schema_id)
            .max()
            .unwrap_or(empty_schema_id);
        let mut meta =
            manifest_file_meta_for(name, size as i64, schema_id, entries, &self.partition_types)?;
        if entries.iter().any(|e| e.file.first_row_id.is_none()) {
            meta.min_row_id = None;
            meta.max_row_id = None;
        }
        Ok(meta)
    }

    /// Write several groups of entries as manifests (each group rolling on its own), all in
    /// one round. Returns the manifests of each group. An empty group gives no manifest.
    pub(crate) async fn write_manifests<T>(
        &mut self,
        io: &Io<T>,
        groups: &[&[ManifestEntry]],
        schema_id: i64,
    ) -> Result<Vec<Vec<ManifestFileMeta>>> {
        let mut encoded = Vec::new();
        for (g, entries) in groups.iter().enumerate() {
            for (a, b, bytes) in self.encode_rolling(entries)? {
                encoded.push((g, a, b, bytes));
            }
        }
        let names = self
            .put_all(
                io,
                encoded
                    .iter()
                    .map(|(_, _, _, b)| (MetaKind::Manifest, b.clone()))
                    .collect(),
            )
            .await?;
        let mut out: Vec<Vec<ManifestFileMeta>> = vec![Vec::new(); groups.len()];
        for ((g, a, b, bytes), name) in encoded.iter().zip(names) {
            out[*g].push(self.meta_of(&name, bytes.len(), &groups[*g][*a..*b], schema_id)?);
        }
        Ok(out)
    }

    /// Write manifest lists and (optionally) an index manifest in one round. Returns
    /// `(name, size)` of each list, then the index manifest's name.
    pub(crate) async fn write_lists<T>(
        &mut self,
        io: &Io<T>,
        lists: &[&[ManifestFileMeta]],
        index: Option<&[IndexManifestEntry]>,
    ) -> Result<(Vec<(String, i64)>, Option<String>)> {
        let mut files = Vec::new();
        for metas in lists {
            let options = self.avro_options();
            files.push((
                MetaKind::ManifestList,
                Bytes::from(encode_manifest_list(metas, &options)?),
            ));
        }
        if let Some(entries) = index {
            let options = self.avro_options();
            files.push((
                MetaKind::IndexManifest,
                Bytes::from(encode_index_manifest(entries, &options)?),
            ));
        }
        let sizes: Vec<i64> = files.iter().map(|(_, b)| b.len() as i64).collect();
        let names = self.put_all(io, files).await?;
        let mut lists_out: Vec<(String, i64)> = names
            .iter()
            .zip(&sizes)
            .map(|(n, s)| (n.clone(), *s))
            .collect();
        let index_name = if index.is_some() {
            lists_out.pop().map(|(n, _)| n)
        } else {
            None
        };
        Ok((lists_out, index_name))
    }
}
