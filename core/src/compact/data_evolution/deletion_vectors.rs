//! Deletion vectors of data-evolution compactions: the vector of each compacted row-id group
//! moves to the task's output file.
//!
//! A data-evolution table keys the vector of a row-id group by the group's **anchor** (its
//! oldest normal file by `(max_sequence_number, file name)`), with positions relative to the
//! group's first row id. A compaction task reads its groups without their vectors (every
//! row keeps its row id) and writes one file over the whole range, so the anchors' vectors
//! must follow: each anchor vector's positions are shifted by the anchor's first row id minus
//! the output's, merged into one vector for the output, and the anchors' vectors removed.
//! The index files that held them are replaced (their other vectors written again), and the
//! new vectors go into new index files; both roll at
//! `deletion-vector.index-file.target-size`. The changes of each partition are one extra
//! commit message (bucket 0, no total buckets, index changes in its compact increment),
//! committed with the compaction's messages.
//!
//! A materialized task (Java 2.0 with `data-evolution.compaction.rewrite-row-ids`: the
//! deleted rows dropped, the outputs new rows without first row ids) only removes its
//! anchors' vectors.
//!
//! Source: Java `DataEvolutionCompactDeletionVectorRewriter` (release-2.0.0) with
//! `AppendDeleteFileMaintainer#notifyRemovedDeletionVector`, `#notifyNewDeletionVector` and
//! `#persist` (`writeUnchangedDeletionVector`, then the new vectors, each with
//! `DeletionVectorsIndexFile#writeWithRolling`).

use std::collections::BTreeMap;

use futures_util::future::join_all;

use super::DataEvolutionCompactOptions;
use crate::commit::{CommitMessage, CompactIncrement};
use crate::compact::append::AppendDvIndex;
use crate::error::{Error, Result};
use crate::format::deletion_vector::{DeletionVector, decode_deletion_vector_index};
use crate::io::Io;
use crate::scan::planner::INDEX_DIR;
use crate::spec::file_names::INDEX_FILE_PREFIX;
use crate::spec::{BinaryRow, DataFileMeta, IndexFileMeta, IndexManifestEntry};
use crate::util::NameSource;
use crate::write::append::deletion_vectors::{put_dv_index_file, roll_index_entries};

/// One anchor vector to move: the anchor's name and first row id, the output it moves to
/// (`None`: a materialized task dropped the deleted rows, the vector just goes).
#[derive(Debug)]
struct Move {
    anchor: String,
    anchor_first_row_id: i64,
    output: Option<usize>,
}

/// The changes of one partition.
#[derive(Debug, Default)]
struct PartitionChanges {
    /// Index files holding a moved vector, first-seen order.
    touched: Vec<IndexManifestEntry>,
    moves: Vec<Move>,
    /// Outputs of the partition's tasks: (file name, first row id, row count).
    outputs: Vec<(String, i64, i64)>,
}

/// The index changes that move the vectors of the anchors compacted by `messages` (the
/// commit messages of the data-evolution tasks, in task order) to their outputs, given the
/// planned snapshot's vectors `dvs`. Index files are named `index-<uuid>-<n>` (uuid from
/// `seed`); every path written is added to `written`, also on failure. Returns one message
/// per partition with changes, in first-seen order; none when no anchor had a vector or the
/// table has no deletion vectors.
///
/// Rounds: one `Read` of each replaced index file (whole, concurrently), then one round of
/// `Put`s (create-new) per partition.
///
/// # Errors
/// [`Error::Invalid`] for a task message without exactly one normal output, a row-id group
/// without a normal file, a vector position outside the output's range; `Corrupt` for index
/// files that do not decode; IO errors.
///
/// Source: Java `DataEvolutionCompactDeletionVectorRewriter#rewriteDeletionVectors`.
pub async fn rewrite_deletion_vectors<T: Send + 'static>(
    io: &Io<T>,
    dvs: &AppendDvIndex,
    messages: &[CommitMessage],
    options: &DataEvolutionCompactOptions,
    seed: u64,
    written: &mut Vec<String>,
) -> Result<Vec<CommitMessage>> {
    if !options.deletion_vectors || dvs.is_empty() {
        return Ok(Vec::new());
    }
    let mut partitions: Vec<(BinaryRow, PartitionChanges)> = Vec::new();
    for m in messages {
        let before: Vec<&DataFileMeta> = m
            .compact_increment
            .compact_before
            .iter()
            .filter(|f| !f.is_blob_file())
            .collect();
        let after: Vec<&DataFileMeta> = m
            .compact_increment
            .compact_after
            .iter()
            .filter(|f| !f.is_blob_file())
            .collect();
        if before.is_empty() && after.is_empty() {
            continue;
        }
        // Java `#isMaterialized`: outputs without first row ids are new rows.
        let materialized = !before.is_empty()
            && m.compact_increment
                .compact_after
                .iter()
                .all(|f| f.first_row_id.is_none());
        if materialized {
            let at = partition_index(&mut partitions, &m.partition);
            let changes = &mut partitions[at].1;
            for group in groups_by_range(&before)? {
                let anchor = anchor_of(&group)?;
                if let Some((entry, _)) = dvs.holder(&m.partition, 0, &anchor.file_name) {
                    changes.touch(entry);
                    changes.moves.push(Move {
                        anchor: anchor.file_name.clone(),
                        anchor_first_row_id: anchor.first_row_id.unwrap_or_default(),
                        output: None,
                    });
                }
            }
            continue;
        }
        let [out] = after.as_slice() else {
            return Err(Error::invalid(format!(
                "a data-evolution compaction task wrote {} normal files, not one",
                after.len()
            )));
        };
        let out_first = out.first_row_id.ok_or_else(|| {
            Error::invalid(format!(
                "compaction output {} has no first row id",
                out.file_name
            ))
        })?;
        let at = partition_index(&mut partitions, &m.partition);
        let changes = &mut partitions[at].1;
        let output = changes.outputs.len();
        changes
            .outputs
            .push((out.file_name.clone(), out_first, out.row_count));
        for group in groups_by_range(&before)? {
            let anchor = anchor_of(&group)?;
            let Some((entry, _)) = dvs.holder(&m.partition, 0, &anchor.file_name) else {
                continue;
            };
            changes.touch(entry);
            changes.moves.push(Move {
                anchor: anchor.file_name.clone(),
                anchor_first_row_id: anchor.first_row_id.unwrap_or_default(),
                output: Some(output),
            });
        }
    }
    partitions.retain(|(_, c)| !c.moves.is_empty());
    if partitions.is_empty() {
        return Ok(Vec::new());
    }

    // Every replaced index file, read once.
    let touched: Vec<&IndexFileMeta> = partitions
        .iter()
        .flat_map(|(_, c)| c.touched.iter().map(|e| &e.index_file))
        .collect();
    let reads = join_all(touched.iter().map(|f| async move {
        let path = f.path_in(INDEX_DIR);
        let bytes = io.read(&path).await;
        (path, bytes)
    }))
    .await;
    let mut vectors: BTreeMap<String, Vec<(String, DeletionVector)>> = BTreeMap::new();
    for (f, (path, bytes)) in touched.iter().zip(reads) {
        let ranges = f.dv_ranges.clone().unwrap_or_default();
        vectors.insert(
            f.file_name.clone(),
            decode_deletion_vector_index(&bytes?, &ranges, &path, false)?,
        );
    }

    let uuid = NameSource::new(seed).uuid();
    let mut next_file = 0u32;
    let mut out = Vec::new();
    for (partition, changes) in partitions {
        let moved: Vec<&str> = changes.moves.iter().map(|m| m.anchor.as_str()).collect();
        let mut merged: Vec<DeletionVector> = vec![DeletionVector::new(); changes.outputs.len()];
        for mv in &changes.moves {
            let Some(output) = mv.output else {
                continue;
            };
            let old = changes
                .touched
                .iter()
                .filter_map(|e| vectors.get(&e.index_file.file_name))
                .flatten()
                .find(|(name, _)| *name == mv.anchor)
                .map(|(_, dv)| dv)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "the deletion vector of data file {} is not in its index file",
                        mv.anchor
                    ))
                })?;
            let (out_name, out_first, out_rows) = &changes.outputs[output];
            let shift = mv.anchor_first_row_id - out_first;
            let mut positions = Vec::with_capacity(old.cardinality() as usize);
            for p in old.iter() {
                let moved = i64::try_from(p)
                    .ok()
                    .and_then(|p| p.checked_add(shift))
                    .filter(|p| (0..*out_rows).contains(p))
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "deleted position {p} of data file {} falls outside the rows of \
                             compaction output {out_name}",
                            mv.anchor
                        ))
                    })?;
                positions.push(moved as u64);
            }
            let target = &mut merged[output];
            *target = target.union(&DeletionVector::from_positions(positions));
        }
        // Java's persist: the touched files' other vectors first, then the new ones.
        let mut chunks: Vec<Vec<(String, DeletionVector)>> = Vec::new();
        for e in &changes.touched {
            let kept: Vec<(String, DeletionVector)> = vectors
                .get(&e.index_file.file_name)
                .into_iter()
                .flatten()
                .filter(|(name, _)| !moved.contains(&name.as_str()))
                .cloned()
                .collect();
            chunks.extend(roll_index_entries(
                kept,
                options.dv_bitmap64,
                options.dv_index_file_target_size,
            )?);
        }
        let fresh: Vec<(String, DeletionVector)> = changes
            .outputs
            .iter()
            .zip(merged)
            .filter(|(_, dv)| !dv.is_empty())
            .map(|((name, _, _), dv)| (name.clone(), dv))
            .collect();
        chunks.extend(roll_index_entries(
            fresh,
            options.dv_bitmap64,
            options.dv_index_file_target_size,
        )?);
        let mut new_index_files = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let name = format!("{INDEX_FILE_PREFIX}{uuid}-{next_file}");
            next_file += 1;
            let (meta, path) =
                put_dv_index_file(io, INDEX_DIR, name, &chunk, options.dv_bitmap64).await?;
            written.push(path);
            new_index_files.push(meta);
        }
        out.push(CommitMessage {
            partition,
            bucket: 0,
            total_buckets: None,
            data_increment: Default::default(),
            compact_increment: CompactIncrement {
                new_index_files,
                deleted_index_files: changes
                    .touched
                    .iter()
                    .map(|e| e.index_file.clone())
                    .collect(),
                ..CompactIncrement::default()
            },
        });
    }
    Ok(out)
}

impl PartitionChanges {
    /// Record `entry` as replaced (once).
    fn touch(&mut self, entry: &IndexManifestEntry) {
        if !self
            .touched
            .iter()
            .any(|e| e.index_file.file_name == entry.index_file.file_name)
        {
            self.touched.push(entry.clone());
        }
    }
}

/// The position of `partition` in `partitions`, added when missing.
fn partition_index(
    partitions: &mut Vec<(BinaryRow, PartitionChanges)>,
    partition: &BinaryRow,
) -> usize {
    match partitions.iter().position(|(p, _)| p == partition) {
        Some(i) => i,
        None => {
            partitions.push((partition.clone(), PartitionChanges::default()));
            partitions.len() - 1
        }
    }
}

/// The anchor of a row-id group: its oldest normal file by `(max_sequence_number, name)`.
fn anchor_of<'a>(group: &[&'a DataFileMeta]) -> Result<&'a DataFileMeta> {
    group
        .iter()
        .copied()
        .min_by(|a, b| {
            (a.max_sequence_number, &a.file_name).cmp(&(b.max_sequence_number, &b.file_name))
        })
        .ok_or_else(|| Error::invalid("an empty row-id group"))
}

/// Normal files grouped by overlapping row-id ranges (Java `RangeHelper` over
/// `nonNullRowIdRange`), each group's files in input order.
fn groups_by_range<'a>(files: &[&'a DataFileMeta]) -> Result<Vec<Vec<&'a DataFileMeta>>> {
    let keyed = files
        .iter()
        .map(|f| Ok((*f, super::row_range(f, false)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(super::merge_overlapping(&keyed))
}
