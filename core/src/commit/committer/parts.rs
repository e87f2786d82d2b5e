//! Planning the parts of one commit: the changes of its messages become the snapshots to
//! publish (an append or overwrite part, a compact part), as Java's `commit` /
//! `overwritePartition` build them.
//!
//! Source: Java `org.apache.paimon.operation.FileStoreCommitImpl#commit`,
//! `#overwritePartition`.

use super::*;

/// One snapshot to publish.
#[derive(Debug, Clone)]
pub(super) struct Part {
    pub(super) kind: CommitKind,
    pub(super) table_files: Vec<ManifestEntry>,
    pub(super) changelog: Vec<ManifestEntry>,
    pub(super) index: Vec<IndexManifestEntry>,
    pub(super) detect_conflicts: bool,
    /// Overwrite: also delete the live files (and index files) of these partitions.
    pub(super) overwrite: Option<PartitionFilter>,
}

/// The parts of a commit, as Java's `commit` / `overwritePartition` build them.
pub(super) fn plan_parts(
    table: &TableSettings,
    messages: &[CommitMessage],
    mode: &CommitMode,
    options: &CommitOptions,
) -> Result<Vec<Part>> {
    let c = EntryChanges::collect(messages, table.bucket);
    let mut parts = Vec::new();
    match mode {
        CommitMode::Append => {
            if !options.ignore_empty_commit
                || !c.append_table_files.is_empty()
                || !c.append_changelog.is_empty()
                || !c.append_index_files.is_empty()
            {
                let deletes = c
                    .append_table_files
                    .iter()
                    .any(|e| e.kind == FileKind::Delete)
                    || c.append_index_files
                        .iter()
                        .any(|e| e.index_file.index_type == DELETION_VECTORS_INDEX);
                let global_index_add = c
                    .append_index_files
                    .iter()
                    .any(|e| e.kind == FileKind::Add && e.index_file.global_index.is_some());
                // A postpone-bucket table's batch write into real buckets is checked as
                // Spark's commit of it is (`appendCommitCheckConflict(true)`): two writers
                // that chose different bucket counts for one partition conflict.
                let postpone_fixed = table.bucket == crate::spec::partition::POSTPONE_BUCKET
                    && c.append_table_files.iter().any(|e| e.bucket >= 0);
                parts.push(Part {
                    kind: if deletes {
                        CommitKind::Overwrite
                    } else {
                        CommitKind::Append
                    },
                    table_files: c.append_table_files,
                    changelog: c.append_changelog,
                    index: c.append_index_files,
                    detect_conflicts: options.check_append_conflicts
                        || deletes
                        || global_index_add
                        || postpone_fixed,
                    overwrite: None,
                });
            }
            if !c.compact_table_files.is_empty()
                || !c.compact_changelog.is_empty()
                || !c.compact_index_files.is_empty()
            {
                parts.push(Part {
                    kind: CommitKind::Compact,
                    table_files: c.compact_table_files,
                    changelog: c.compact_changelog,
                    index: c.compact_index_files,
                    detect_conflicts: true,
                    overwrite: None,
                });
            }
        }
        CommitMode::Overwrite {
            partition_filter,
            dynamic,
        } => {
            let fields = &table.partition_fields;
            let filter = if !fields.is_empty() && *dynamic {
                if c.append_table_files.is_empty() {
                    None
                } else {
                    Some(PartitionFilter::Set(
                        c.append_table_files
                            .iter()
                            .map(|e| e.partition.clone())
                            .collect(),
                    ))
                }
            } else {
                let filter = PartitionFilter::from_spec(
                    &partition_filter.clone().unwrap_or_default(),
                    fields,
                    &table.default_partition_name,
                )?;
                for e in &c.append_table_files {
                    if !filter.test(&e.partition, fields)? {
                        let where_ = crate::spec::partition::render_partition(fields, &e.partition)
                            .unwrap_or_else(|_| format!("{:?}", e.partition));
                        return Err(Error::invalid(format!(
                            "overwrite of {partition_filter:?}: file {} in partition {where_} \
                             does not belong to the overwritten partitions",
                            e.file.file_name
                        )));
                    }
                }
                Some(filter)
            };
            let with_compact =
                !c.compact_table_files.is_empty() || !c.compact_index_files.is_empty();
            let mut files = c.append_table_files;
            if !with_compact
                && table.overwrite_upgrade
                && let Some(key_types) = &table.key_types
            {
                files = upgrade_for_overwrite(files, key_types, table.max_level)?;
            }
            if let Some(filter) = filter {
                parts.push(Part {
                    kind: CommitKind::Overwrite,
                    table_files: files,
                    changelog: Vec::new(),
                    index: c.append_index_files,
                    detect_conflicts: true,
                    overwrite: Some(filter),
                });
            }
            if with_compact {
                parts.push(Part {
                    kind: CommitKind::Compact,
                    table_files: c.compact_table_files,
                    changelog: Vec::new(),
                    index: c.compact_index_files,
                    detect_conflicts: true,
                    overwrite: None,
                });
            }
        }
        CommitMode::DropPartitions { partitions } => {
            if table.partition_fields.is_empty() {
                return Err(Error::invalid(
                    "dropping partitions of an unpartitioned table",
                ));
            }
            if partitions.is_empty() {
                return Err(Error::invalid("dropping partitions: no partition given"));
            }
            if !messages.is_empty() {
                return Err(Error::invalid(format!(
                    "dropping partitions takes no commit messages ({} given)",
                    messages.len()
                )));
            }
            parts.push(Part {
                kind: CommitKind::Overwrite,
                table_files: Vec::new(),
                changelog: Vec::new(),
                index: Vec::new(),
                detect_conflicts: true,
                overwrite: Some(PartitionFilter::Set(partitions.clone())),
            });
        }
    }
    Ok(parts)
}
