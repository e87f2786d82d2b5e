//! Aborting: deleting the files of commit messages that will not be committed.
//!
//! Source: Java `FileStoreCommitImpl#abort`. Deletes, in one round of `Delete` requests (a
//! missing file is fine, other failures are ignored: this is cleanup), for every message:
//! the new data files and their extra files, the changelog files, the compaction outputs and
//! their extra files, and the new index files of writes and compactions. Unlike Java, a
//! compaction output that is also one of the message's compaction inputs (a file upgraded to
//! another level keeps its name) is not deleted: it is a live file of the table.
//!
//! Managed BLOB packs (primary-key tables with BLOB columns) are named by no message: Java
//! leaves the packs of an aborted commit to orphan cleaning. Here the packs named by the
//! `.blobref` sidecars of the messages' *new* data files (not compaction outputs, whose
//! sidecars name packs of committed files) in their own bucket directory are deleted too: a
//! writer only ever references packs it wrote itself (input blobs, references included, are
//! copied into new packs), so no other file can reference them.

use std::collections::BTreeSet;

use futures_util::future::join_all;

use crate::error::Result;
use crate::io::{Io, Machine};
use crate::scan::planner::INDEX_DIR;
use crate::spec::partition::{bucket_path, partition_path};
use crate::spec::{DataField, DataFileMeta, TableSchema};

use super::message::CommitMessage;

/// A machine running [`abort`]; it emits nothing.
pub fn abort_machine(schema: TableSchema, messages: Vec<CommitMessage>) -> Machine<()> {
    Machine::new("CommitAbort", move |io: Io<()>| async move {
        abort(&io, &schema, &messages).await
    })
}

/// The paths [`abort`] deletes, in order, without duplicates.
///
/// # Errors
/// [`crate::Error::Invalid`] / [`crate::Error::Corrupt`] when a partition does not decode
/// with the schema's partition keys or an option is invalid.
pub fn abort_paths(schema: &TableSchema, messages: &[CommitMessage]) -> Result<Vec<String>> {
    let options = schema.core_options();
    let keys: Vec<DataField> = schema.partition_fields()?.into_iter().cloned().collect();
    let naming = options.partition_naming()?;
    let data_root = options.data_root();
    let index_in_bucket = options.index_file_in_data_file_dir()?;
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut push = |p: String| {
        if seen.insert(p.clone()) {
            out.push(p);
        }
    };
    for m in messages {
        let bucket_dir = bucket_path(
            &data_root,
            &partition_path(&keys, &m.partition, &naming)?,
            m.bucket,
        );
        let d = &m.data_increment;
        let c = &m.compact_increment;
        let inputs: BTreeSet<&str> = c
            .compact_before
            .iter()
            .map(|f| f.file_name.as_str())
            .collect();
        let files: Vec<&DataFileMeta> = d
            .new_files
            .iter()
            .chain(&d.changelog_files)
            .chain(
                c.compact_after
                    .iter()
                    .filter(|f| !inputs.contains(f.file_name.as_str())),
            )
            .chain(&c.changelog_files)
            .collect();
        for f in files {
            push(f.path_in_bucket(&bucket_dir));
            for extra in f.extra_file_paths(&bucket_dir) {
                push(extra);
            }
        }
        let index_dir = if index_in_bucket {
            bucket_dir.as_str()
        } else {
            INDEX_DIR
        };
        for f in d.new_index_files.iter().chain(&c.new_index_files) {
            push(f.path_in(index_dir));
        }
    }
    Ok(out)
}

/// Delete the files `messages` added (see the module docs).
///
/// # Errors
/// As [`abort_paths`]; delete failures are ignored.
pub async fn abort<T>(io: &Io<T>, schema: &TableSchema, messages: &[CommitMessage]) -> Result<()> {
    let mut paths = abort_paths(schema, messages)?;
    paths.extend(written_packs(io, schema, messages).await?);
    let _ = join_all(paths.iter().map(|p| io.delete(p))).await;
    Ok(())
}

/// The managed BLOB packs the new data files of `messages` reference in their own bucket
/// directory (see the module docs), read from their `.blobref` sidecars; unreadable sidecars
/// are skipped (cleanup is best effort).
///
/// # Errors
/// As [`abort_paths`].
async fn written_packs<T>(
    io: &Io<T>,
    schema: &TableSchema,
    messages: &[CommitMessage],
) -> Result<Vec<String>> {
    use crate::format::blob_ref::decode_blobref;
    use crate::spec::file_names::BLOBREF_SUFFIX;
    let options = schema.core_options();
    let keys: Vec<DataField> = schema.partition_fields()?.into_iter().cloned().collect();
    let naming = options.partition_naming()?;
    let data_root = options.data_root();
    let mut sidecars = Vec::new();
    for m in messages {
        let bucket_dir = bucket_path(
            &data_root,
            &partition_path(&keys, &m.partition, &naming)?,
            m.bucket,
        );
        for f in &m.data_increment.new_files {
            for extra in f.extra_file_paths(&bucket_dir) {
                if extra.ends_with(BLOBREF_SUFFIX) {
                    sidecars.push((bucket_dir.clone(), extra));
                }
            }
        }
    }
    let read = join_all(sidecars.iter().map(|(_, p)| io.read(p))).await;
    let mut packs = BTreeSet::new();
    for ((bucket_dir, path), bytes) in sidecars.iter().zip(read) {
        let Ok(refs) = bytes.and_then(|b| decode_blobref(&b, path)) else {
            continue;
        };
        for r in refs {
            let root = r.storage_root_id.trim_end_matches('/');
            if root == bucket_dir || root.ends_with(&format!("/{bucket_dir}")) {
                packs.insert(format!("{bucket_dir}/{}", r.relative_path));
            }
        }
    }
    Ok(packs.into_iter().collect())
}
