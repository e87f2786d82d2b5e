//! The compaction preview: what `compact` would do on a snapshot, from the planners the
//! native host's `plan-compaction` and `compact` run, as tasks of input file names and
//! output level (for the page to highlight on the levels and field-group views).
//!
//! Which planner: primary-key tables [`plan_pk_compaction`] (the table's strategy, or a full
//! compaction with `full`; deletion-vector tables are always compacted fully); fixed-bucket
//! append tables [`plan_bucketed`]; unaware-bucket append tables [`plan_unaware`];
//! data-evolution tables [`data_evolution::plan`]. A planner that refuses the table
//! (`Unsupported`: e.g. postpone buckets with BLOB columns) makes the preview
//! *unavailable* with the planner's reason instead of failing the view.

use serde::{Deserialize, Serialize};

use super::{partition_fields, partition_forms, table_kind_name};
use crate::compact::append::{AppendCompactOptions, AppendDvIndex, plan_bucketed, plan_unaware};
use crate::compact::data_evolution::{self, DataEvolutionCompactOptions};
use crate::compact::pk::{PkCompactRequest, is_pure_upgrade, plan_pk_compaction};
use crate::error::{Error, Result};
use crate::scan::TableKind;
use crate::spec::{
    BinaryRow, DataField, DataFileMeta, IndexManifestEntry, ManifestEntry, TableSchema,
};

/// The compaction a snapshot would get.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionPreview {
    /// The snapshot planned on.
    pub snapshot_id: Option<i64>,
    /// `append`, `primary-key` or `data-evolution`.
    pub table_kind: String,
    /// Whether a full compaction was asked for.
    pub full: bool,
    /// The planner used: `primary-key-full`, `primary-key-universal`,
    /// `primary-key-force-up-level-0`, `primary-key-deletion-vectors`, `primary-key-postpone`
    /// (postpone files per partition, bucket -2, and real buckets with level-0 files),
    /// `append-bucketed-full`, `append-bucketed`, `append-unaware`, `data-evolution`.
    pub planner: String,
    /// False when the planner refuses the table; `tasks` is then empty.
    pub available: bool,
    /// Why the preview is unavailable (the planner's `unsupported` message).
    pub unavailable_reason: Option<String>,
    /// The tasks, sorted by (partition JSON, bucket, first file name) as `plan-compaction`
    /// sorts its units.
    pub tasks: Vec<PreviewTask>,
}

/// One compaction task of a [`CompactionPreview`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewTask {
    /// The partition as `$files` renders it.
    pub partition: String,
    /// The partition values by key (the plan JSON's form).
    pub partition_values: serde_json::Map<String, serde_json::Value>,
    /// The bucket (0 for unaware-bucket and data-evolution tasks).
    pub bucket: i32,
    /// The level the outputs go to (primary-key tables); `None` otherwise.
    pub output_level: Option<i32>,
    /// Whether the task only moves one file to `output_level` without rewriting it.
    pub upgrade: bool,
    /// The input files' names, sorted.
    pub files: Vec<String>,
    /// Σ input file sizes, bytes.
    pub input_bytes: i64,
    /// Σ input row counts.
    pub input_rows: i64,
}

fn task(
    pfields: &[DataField],
    partition: &BinaryRow,
    bucket: i32,
    output_level: Option<i32>,
    upgrade: bool,
    files: &[DataFileMeta],
) -> Result<PreviewTask> {
    let (text, values) = partition_forms(pfields, partition)?;
    let mut names: Vec<String> = files.iter().map(|f| f.file_name.clone()).collect();
    names.sort();
    Ok(PreviewTask {
        partition: text,
        partition_values: values,
        bucket,
        output_level,
        upgrade,
        files: names,
        input_bytes: files
            .iter()
            .fold(0i64, |a, f| a.saturating_add(f.file_size)),
        input_rows: files
            .iter()
            .fold(0i64, |a, f| a.saturating_add(f.row_count)),
    })
}

/// Plan the compaction of `entries` (the live data files of snapshot `snapshot_id`, in
/// manifest order) with the table's planner; `index_entries` are the snapshot's index
/// manifest entries (deletion vectors); `now_millis` the planning time (early full
/// compaction and off-peak hours of primary-key tables).
///
/// # Errors
/// [`Error::Invalid`] for malformed options or inconsistent row-id ranges; [`Error::Corrupt`]
/// for partitions or keys that do not decode. `Unsupported` from a planner is not an error:
/// the preview is unavailable.
pub fn compaction_preview(
    schema: &TableSchema,
    snapshot_id: Option<i64>,
    entries: &[ManifestEntry],
    index_entries: &[IndexManifestEntry],
    full: bool,
    now_millis: i64,
) -> Result<CompactionPreview> {
    compaction_preview_with_schemas(
        schema,
        snapshot_id,
        entries,
        index_entries,
        &std::collections::BTreeMap::new(),
        full,
        now_millis,
    )
}

/// [`compaction_preview`] with the schemas of the live files by id (`schemas`; the table's
/// latest schema need not be there): primary-key tables with record-level expiry
/// (`record-level.expire-time`) read the statistics of files of older schemas with them.
///
/// # Errors
/// As [`compaction_preview`]; with record-level expiry, [`Error::Invalid`] for a file whose
/// schema is not in `schemas`.
pub fn compaction_preview_with_schemas(
    schema: &TableSchema,
    snapshot_id: Option<i64>,
    entries: &[ManifestEntry],
    index_entries: &[IndexManifestEntry],
    schemas: &std::collections::BTreeMap<i64, TableSchema>,
    full: bool,
    now_millis: i64,
) -> Result<CompactionPreview> {
    let kind = TableKind::of(schema)?;
    let options = schema.core_options();
    let pfields = partition_fields(schema)?;
    let mut preview = CompactionPreview {
        snapshot_id,
        table_kind: table_kind_name(schema)?.to_owned(),
        full,
        planner: String::new(),
        available: true,
        unavailable_reason: None,
        tasks: Vec::new(),
    };
    let postpone = kind == TableKind::PrimaryKey
        && options.bucket()? == crate::spec::partition::POSTPONE_BUCKET;
    let planned = match kind {
        // Postpone buckets: the postpone files per partition (bucket -2) and the real buckets
        // holding level-0 files, as `plan-compaction` lists them.
        TableKind::PrimaryKey if postpone => {
            preview.planner = "primary-key-postpone".to_owned();
            crate::compact::pk::postpone::plan_postpone_compaction(
                schema,
                entries,
                &std::collections::BTreeMap::new(),
            )
            .and_then(|partitions| {
                let mut out = Vec::new();
                for p in &partitions {
                    if !p.postpone_files.is_empty() {
                        out.push(task(
                            &pfields,
                            &p.partition,
                            crate::spec::partition::POSTPONE_BUCKET,
                            Some(0),
                            false,
                            &p.postpone_files,
                        )?);
                    }
                    for b in &p.level0_buckets {
                        let files: Vec<DataFileMeta> = p
                            .real_entries
                            .iter()
                            .filter(|e| e.bucket == *b && e.file.level == 0)
                            .map(|e| e.file.clone())
                            .collect();
                        out.push(task(&pfields, &p.partition, *b, None, false, &files)?);
                    }
                }
                Ok(out)
            })
        }
        TableKind::PrimaryKey => {
            let dv = options.deletion_vectors_enabled()?;
            let request = PkCompactRequest {
                full,
                now_millis,
                index_entries: index_entries.to_vec(),
                schemas: schemas.clone(),
                ..PkCompactRequest::default()
            };
            preview.planner = if dv {
                "primary-key-deletion-vectors".to_owned()
            } else if full {
                "primary-key-full".to_owned()
            } else {
                let opts =
                    crate::compact::pk::PkCompactOptions::try_new(&options, now_millis, &[])?;
                match opts.strategy {
                    crate::compact::pk::CompactStrategy::Universal(_) => "primary-key-universal",
                    crate::compact::pk::CompactStrategy::ForceUpLevel0 { .. } => {
                        "primary-key-force-up-level-0"
                    }
                }
                .to_owned()
            };
            plan_pk_compaction(schema, entries, &request).and_then(|tasks| {
                tasks
                    .iter()
                    .map(|t| {
                        task(
                            &pfields,
                            &t.partition,
                            t.bucket,
                            Some(t.unit.output_level),
                            is_pure_upgrade(t),
                            &t.unit.files,
                        )
                    })
                    .collect::<Result<Vec<_>>>()
            })
        }
        TableKind::Append | TableKind::DataEvolution => plan_append(
            schema,
            kind,
            entries,
            index_entries,
            full,
            &pfields,
            &mut preview,
        ),
    };
    match planned {
        Ok(mut tasks) => {
            tasks.sort_by(|a, b| {
                let pa = serde_json::Value::Object(a.partition_values.clone()).to_string();
                let pb = serde_json::Value::Object(b.partition_values.clone()).to_string();
                (pa, a.bucket, a.files.first()).cmp(&(pb, b.bucket, b.files.first()))
            });
            preview.tasks = tasks;
        }
        Err(Error::Unsupported { feature }) => {
            preview.available = false;
            preview.unavailable_reason = Some(format!("unsupported: {feature}"));
        }
        Err(e) => return Err(e),
    }
    Ok(preview)
}

/// The append and data-evolution planners, with the native host's refusals.
fn plan_append(
    schema: &TableSchema,
    kind: TableKind,
    entries: &[ManifestEntry],
    index_entries: &[IndexManifestEntry],
    full: bool,
    pfields: &[DataField],
    preview: &mut CompactionPreview,
) -> Result<Vec<PreviewTask>> {
    let options = schema.core_options();
    let de = kind == TableKind::DataEvolution;
    let bucketed = !de && options.bucket()? > 0;
    preview.planner = match (de, bucketed, full) {
        (true, _, _) => "data-evolution",
        (false, true, true) => "append-bucketed-full",
        (false, true, false) => "append-bucketed",
        (false, false, _) => "append-unaware",
    }
    .to_owned();
    if de {
        let settings = DataEvolutionCompactOptions::from_options(&options)?;
        // Only the latest schema is at hand: `.blob` files of older schemas make the preview
        // unavailable (their columns cannot be resolved).
        let schemas = std::collections::BTreeMap::from([(schema.id, schema.clone())]);
        let blob_fields = data_evolution::BlobFields::new(schema, &schemas);
        let dvs = if settings.materialize_deletions {
            AppendDvIndex::try_new(index_entries, &options, true)?
        } else {
            AppendDvIndex::default()
        };
        data_evolution::plan_with_blobs(entries, &settings, Some(&blob_fields), Some(&dvs))?
            .iter()
            .map(|t| task(pfields, &t.partition, 0, None, false, &t.files))
            .collect()
    } else {
        let settings = AppendCompactOptions::from_options(&options)?;
        let dvs = if settings.deletion_vectors {
            AppendDvIndex::try_new(index_entries, &options, !bucketed)?
        } else {
            AppendDvIndex::default()
        };
        let tasks = if bucketed {
            plan_bucketed(entries, &dvs, &settings, full)
        } else {
            plan_unaware(entries, &dvs, &settings)
        };
        tasks
            .iter()
            .map(|t| task(pfields, &t.partition, t.bucket, None, false, &t.files))
            .collect()
    }
}
