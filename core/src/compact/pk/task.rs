//! Executing one primary-key compaction task: the inputs are read through the read side's
//! file reader, merged by the read side's [`MergeReader`] (key-value output) and written as
//! rolling files at the output level; large files are upgraded (a metadata-only level
//! change). The result is a [`CommitMessage`] whose `compact_increment` lists the inputs
//! (`compact_before`) and outputs (`compact_after`), committed with kind `COMPACT`.
//!
//! Rounds: per rewrite, the footers and column chunks of the input files (one batch per
//! sorted run in flight, as a read), a `Put` (create-new) per output file as soon as it is
//! complete. Lookup tables read the bucket's files above the output level that overlap a
//! section alongside it (lookup-only runs). Changelog files (`changelog-producer` `lookup`
//! or `full-compaction`) roll beside the outputs. On an error the outputs written so far are
//! deleted (best effort).
//!
//! Deletion-vector tables: files are read with their deletion vectors applied (rows they
//! mark are gone). The task keeps the bucket's vectors as Java's `BucketedDvMaintainer`
//! does: a rewritten input's vector is dropped; a key of level-0 records that a file above
//! the output level holds gets that row marked deleted (the lookup-only runs report file
//! positions), also when the level-0 file is upgraded rather than rewritten; a level-0 file
//! that may hold retractions is rewritten, not upgraded. When the vectors changed, the
//! message replaces the bucket's index files by one new file (`index-<uuid>-0` in `index/`,
//! or in the bucket directory with `index-file-in-data-file-dir`) holding all of them.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.MergeTreeCompactTask` (sections,
//! upgrade rules), `FileRewriteCompactTask`, `MergeTreeCompactRewriter` (merge, drop
//! delete, rolling writer at the output level), `ChangelogMergeTreeRewriter`,
//! `LookupMergeTreeCompactRewriter` (upgrade strategies: level-0 files of lookup tables other
//! than plain deduplicate are rewritten below the max level; a level-0 file moved up is read
//! for its changelog) and `FullChangelogMergeTreeCompactRewriter`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Int8Type;
use arrow_buffer::ScalarBuffer;
use arrow_schema::SchemaRef;
use futures_util::future::BoxFuture;

use super::levels::decode_key;
use super::planner::{PkCompactTask, must_rewrite};
use crate::commit::{CommitMessage, CompactIncrement};
use crate::error::{Error, Result};
use crate::format::deletion_vector::{DeletionVector, decode_deletion_vector_index};
use crate::io::DEFAULT_PUT_PART_BYTES;
use crate::io::{Io, Machine};
use crate::merge::{ChangelogMode, MergeConfig, MergeReader, RunSource};
use crate::read::{FileColumn, FileRead, FileReadSpec};
use crate::scan::planner::{DeletionFile, INDEX_DIR};
use crate::scan::split::{KeyedFile, interval_partition};
use crate::spec::file_names::{DATA_FILE_PREFIX, INDEX_FILE_PREFIX};
use crate::spec::special_fields::{
    KEY_FIELD_PREFIX, SEQUENCE_NUMBER, VALUE_KIND, key_value_fields,
};
use crate::spec::{
    ChangelogProducer, CoreOptions, DataField, DataFileMeta, DataType, Datum, DeletionVectorMeta,
    FileSource, IndexFileMeta, TableSchema,
};
use crate::util::NameSource;
use crate::write::append::deletion_vectors::put_dv_index_file;
use crate::write::external::{DataFilePlacer, ExternalPaths};
use crate::write::kv::file::{FinishedKvFile, KvFileBuilder, KvFileSpec, changelog_prefix};

/// What every task of one compaction shares: schemas, options and the host's inputs.
#[derive(Debug, Clone)]
pub struct PkCompactContext {
    /// The table's latest schema: outputs are written with it.
    pub schema: TableSchema,
    /// Schemas of the input files, by id (must hold every `schema_id` of the inputs).
    pub schemas: BTreeMap<i64, TableSchema>,
    /// Seed of the output file names (each task should get its own).
    pub seed: u64,
    /// Creation time of the outputs (epoch millis).
    pub time_millis: i64,
    /// Rows per merged batch.
    pub batch_size: usize,
}

/// What a task did, besides its commit message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PkCompactStats {
    /// Files read and rewritten.
    pub rewritten_files: usize,
    /// Files moved to the output level without a rewrite.
    pub upgraded_files: usize,
}

/// A machine running `task`: emits one [`CommitMessage`] (its `compact_increment`).
///
/// # Errors
/// Reading the inputs (IO, corrupt files, schema evolution), merge errors (e.g. retractions
/// in a first-row table), encoding and `Put` failures; an output that already exists is
/// [`Error::Invalid`] (a name collision: use another seed).
pub fn compact_task_machine(
    ctx: Arc<PkCompactContext>,
    task: PkCompactTask,
) -> Machine<(CommitMessage, PkCompactStats)> {
    Machine::once("PkCompactTask", move |io| async move {
        run_compact_task(&io, &ctx, &task).await
    })
}

/// Run `task` within an operation that has its own [`Io`] (several tasks awaited together
/// share the IO rounds): its [`CommitMessage`] (the `compact_increment`) and statistics. On
/// an error the files the task wrote are deleted (best effort) before it is returned.
///
/// # Errors
/// As [`compact_task_machine`].
pub async fn run_compact_task<T: Send + 'static>(
    io: &Io<T>,
    ctx: &PkCompactContext,
    task: &PkCompactTask,
) -> Result<(CommitMessage, PkCompactStats)> {
    let mut run = TaskRun::try_new(ctx, task)?;
    match run.execute(io).await {
        Ok(out) => Ok(out),
        Err(e) => {
            for path in &run.written {
                // Best effort: the error at hand is the one to report.
                let _ = io.delete(path).await;
            }
            for path in &run.uploading {
                let _ = io.put_abort(path).await;
            }
            Err(e)
        }
    }
}

/// A file with its decoded min and max keys.
type KeyRangeFile = (Vec<Datum>, Vec<Datum>, DataFileMeta);

/// One execution of a task.
struct TaskRun<'a> {
    ctx: &'a PkCompactContext,
    task: &'a PkCompactTask,
    options: CoreOptions,
    merge: MergeConfig,
    /// `_KEY_` fields (not null), `_SEQUENCE_NUMBER`, `_VALUE_KIND`, the table's fields.
    file_fields: Vec<DataField>,
    plain_key_fields: Vec<DataField>,
    file_schema: SchemaRef,
    read_spec: Arc<FileReadSpec>,
    name_prefix: String,
    /// UUID of the output names (changelog files of the data format share it).
    name_uuid: String,
    files_named: u32,
    /// Changelog files use their own UUID and counter when their format differs.
    changelog_names: Option<(String, u32)>,
    /// `changelog-producer`.
    producer: ChangelogProducer,
    /// The lookup files ([`PkCompactTask::lookup_files`]) level by level (ascending), each
    /// level's files with their decoded key ranges in key order.
    lookup_levels: Vec<Vec<KeyRangeFile>>,
    /// Changelog files written.
    changelog_files: Vec<DataFileMeta>,
    /// Managed BLOB tables: positions of the managed columns in the file layout (every
    /// output gets a `.blobref` sidecar of the packs its rows reference).
    managed_positions: Option<Vec<(usize, crate::format::blob::BlobElementKind)>>,
    before: Vec<DataFileMeta>,
    after: Vec<DataFileMeta>,
    written: Vec<String>,
    /// Outputs whose streamed `Put` is open (parts sent, not completed).
    uploading: BTreeSet<String>,
    stats: PkCompactStats,
    /// Deletion-vector tables: the bucket's vectors, loaded when the task starts.
    vectors: Option<BucketVectors>,
    /// UUID of the new index file's name.
    index_uuid: String,
    /// Where outputs and changelog files go (the bucket directory or
    /// `data-file.external-paths`, as Java's per-bucket writer factory).
    placer: DataFilePlacer,
    /// `changelog-producer.row-deduplicate`: the merge-output columns compared (the value
    /// columns but `changelog-producer.row-deduplicate-ignore-fields`).
    row_dedup: Option<Vec<usize>>,
    /// A `-U` changelog row waiting for its `+U` ([`TaskRun::deduplicate_changelog`]).
    held_before: Option<RecordBatch>,
}

/// The deletion vectors of the task's bucket (Java `BucketedDvMaintainer`).
#[derive(Default)]
struct BucketVectors {
    /// Vector by data file name.
    by_file: BTreeMap<String, DeletionVector>,
    /// A vector was added, extended or dropped.
    modified: bool,
}

impl<'a> TaskRun<'a> {
    fn try_new(ctx: &'a PkCompactContext, task: &'a PkCompactTask) -> Result<Self> {
        let schema = &ctx.schema;
        let options = schema.core_options();
        let merge = MergeConfig::from_table_schema(schema)?;
        let trimmed = schema.trimmed_primary_keys()?;
        let mut plain_key_fields = Vec::new();
        for k in &trimmed {
            let f = schema
                .field(k)
                .ok_or_else(|| Error::invalid(format!("primary key '{k}' is not a column")))?;
            plain_key_fields.push(f.clone());
        }
        let file_fields = key_value_fields(&plain_key_fields, &schema.fields);
        let file_schema = crate::types::paimon_to_arrow_schema(&file_fields)?;
        // Read layout: keys from their value columns (named _KEY_x), system columns, every
        // table field.
        let mut columns = Vec::new();
        for f in &plain_key_fields {
            let mut k = f.clone();
            k.name = format!("{KEY_FIELD_PREFIX}{}", f.name);
            columns.push(FileColumn::Field(k));
        }
        columns.push(FileColumn::System(SEQUENCE_NUMBER));
        columns.push(FileColumn::System(VALUE_KIND));
        columns.extend(schema.fields.iter().cloned().map(FileColumn::Field));
        let read_spec = Arc::new(FileReadSpec::try_new(columns)?);
        let mut names = NameSource::new(ctx.seed);
        let prefix = options
            .get("data-file.prefix")
            .unwrap_or(DATA_FILE_PREFIX)
            .to_owned();
        let name_uuid = names.uuid();
        let name_prefix = format!("{prefix}{name_uuid}-");
        let changelog_names = (KvFileSpec::changelog(&options)?.format
            != KvFileSpec::for_level(&options, task.unit.output_level)?.format)
            .then(|| (names.uuid(), 0));
        let index_uuid = names.uuid();
        let placer = DataFilePlacer::new(
            &task.bucket_path,
            ExternalPaths::from_options(&options)?.as_ref(),
            &mut names,
        );
        let dedup_key = "changelog-producer.row-deduplicate";
        let row_dedup = match options.get(dedup_key).map(str::trim) {
            None => false,
            Some(v) if v.eq_ignore_ascii_case("true") => true,
            Some(v) if v.eq_ignore_ascii_case("false") => false,
            Some(v) => {
                return Err(Error::invalid(format!(
                    "option '{dedup_key}' = '{v}' is not a boolean"
                )));
            }
        }
        .then(|| {
            let ignored: Vec<&str> = options
                .get("changelog-producer.row-deduplicate-ignore-fields")
                .map(|v| v.split(',').map(str::trim).collect())
                .unwrap_or_default();
            schema
                .fields
                .iter()
                .enumerate()
                .filter(|(_, f)| !ignored.contains(&f.name.as_str()))
                .map(|(i, _)| trimmed.len() + 2 + i)
                .collect()
        });
        let producer = options.changelog_producer()?;
        let mut lookup_levels: BTreeMap<i32, Vec<KeyRangeFile>> = BTreeMap::new();
        let plain_key_types: Vec<DataType> = trimmed
            .iter()
            .filter_map(|k| schema.field(k).map(|f| f.data_type.clone()))
            .collect();
        for f in &task.lookup_files {
            lookup_levels.entry(f.level).or_default().push((
                decode_key(&f.min_key, &plain_key_types)?,
                decode_key(&f.max_key, &plain_key_types)?,
                f.clone(),
            ));
        }
        let lookup_levels: Vec<_> = lookup_levels
            .into_values()
            .map(|mut files| {
                files.sort_by(|a, b| a.0.cmp(&b.0));
                files
            })
            .collect();
        let managed_positions =
            crate::blob::managed::ManagedBlobColumns::try_new(schema, &options)?
                .map(|m| m.file_positions(trimmed.len()));
        Ok(TaskRun {
            managed_positions,
            ctx,
            task,
            options,
            merge,
            file_fields,
            plain_key_fields,
            file_schema,
            read_spec,

            name_prefix,
            name_uuid,
            files_named: 0,
            changelog_names,
            producer,
            lookup_levels,
            changelog_files: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            written: Vec::new(),
            uploading: BTreeSet::new(),
            stats: PkCompactStats::default(),
            vectors: None,
            index_uuid,
            placer,
            row_dedup,
            held_before: None,
        })
    }

    /// Read the bucket's deletion vectors (each index file once).
    async fn load_vectors<T: Send + 'static>(&mut self, io: &Io<T>) -> Result<()> {
        let mut by_path: BTreeMap<&str, Vec<DeletionVectorMeta>> = BTreeMap::new();
        for (name, d) in &self.task.deletion_files {
            by_path
                .entry(d.path.as_str())
                .or_default()
                .push(crate::read::file::deletion_vector_meta(d, name)?);
        }
        let mut by_file = BTreeMap::new();
        for (path, metas) in by_path {
            let bytes = io.read(path).await?;
            by_file.extend(decode_deletion_vector_index(&bytes, &metas, path, false)?);
        }
        self.vectors = Some(BucketVectors {
            by_file,
            modified: false,
        });
        Ok(())
    }

    /// The index changes of the task: one new index file with all the bucket's vectors
    /// replacing the live ones, when the vectors changed.
    async fn write_vectors<T: Send + 'static>(
        &mut self,
        io: &Io<T>,
    ) -> Result<(Vec<IndexFileMeta>, Vec<IndexFileMeta>)> {
        let Some(vectors) = self.vectors.take().filter(|v| v.modified) else {
            return Ok((Vec::new(), Vec::new()));
        };
        let dir = if self.options.index_file_in_data_file_dir()? {
            self.task.bucket_path.clone()
        } else {
            INDEX_DIR.to_owned()
        };
        let all: Vec<(String, DeletionVector)> = vectors.by_file.into_iter().collect();
        let (meta, path) = put_dv_index_file(
            io,
            &dir,
            format!("{INDEX_FILE_PREFIX}{}-0", self.index_uuid),
            &all,
            self.options.deletion_vectors_bitmap64()?,
        )
        .await?;
        self.written.push(path);
        Ok((vec![meta], self.task.deleted_index_files.clone()))
    }

    async fn execute<T: Send + 'static>(
        &mut self,
        io: &Io<T>,
    ) -> Result<(CommitMessage, PkCompactStats)> {
        let task = self.task;
        if task.deletion_vectors {
            self.load_vectors(io).await?;
        }
        if task.unit.file_rewrite {
            for f in &task.unit.files {
                self.rewrite(io, vec![vec![vec![f.clone()]]], true).await?;
            }
        } else {
            let sections = self.sections()?;
            let mut candidate: Vec<Vec<Vec<DataFileMeta>>> = Vec::new();
            for mut section in sections {
                if section.len() > 1 {
                    candidate.push(section);
                    continue;
                }
                let Some(run) = section.pop() else {
                    continue;
                };
                for f in run {
                    if f.file_size < task.compaction_file_size {
                        candidate.push(vec![vec![f]]);
                    } else {
                        self.flush_candidate(io, &mut candidate).await?;
                        self.upgrade(io, f).await?;
                    }
                }
            }
            self.flush_candidate(io, &mut candidate).await?;
        }
        let (new_index_files, deleted_index_files) = self.write_vectors(io).await?;
        let message = CommitMessage {
            partition: task.partition.clone(),
            bucket: task.bucket,
            total_buckets: task.total_buckets,
            data_increment: Default::default(),
            compact_increment: CompactIncrement {
                compact_before: std::mem::take(&mut self.before),
                compact_after: std::mem::take(&mut self.after),
                changelog_files: std::mem::take(&mut self.changelog_files),
                new_index_files,
                deleted_index_files,
            },
        };
        Ok((message, std::mem::take(&mut self.stats)))
    }

    /// The unit's files cut into sections of overlapping key ranges, each a list of sorted
    /// runs.
    fn sections(&self) -> Result<Vec<Vec<Vec<DataFileMeta>>>> {
        let key_types: Vec<DataType> = self
            .plain_key_fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        let mut keyed = Vec::with_capacity(self.task.unit.files.len());
        for f in &self.task.unit.files {
            keyed.push(KeyedFile {
                min_key: decode_key(&f.min_key, &key_types)?,
                max_key: decode_key(&f.max_key, &key_types)?,
                file: f.clone(),
            });
        }
        Ok(interval_partition(keyed)
            .into_iter()
            .map(|section| {
                section
                    .into_iter()
                    .map(|run| run.into_iter().map(|k| k.file).collect())
                    .collect()
            })
            .collect())
    }

    /// Rewrite the accumulated candidates; a single section of a single run is upgraded
    /// file by file instead.
    async fn flush_candidate<T: Send + 'static>(
        &mut self,
        io: &Io<T>,
        candidate: &mut Vec<Vec<Vec<DataFileMeta>>>,
    ) -> Result<()> {
        if candidate.is_empty() {
            return Ok(());
        }
        if candidate.len() == 1 && candidate[0].len() <= 1 {
            let files = candidate
                .pop()
                .and_then(|mut s| s.pop())
                .unwrap_or_default();
            for f in files {
                self.upgrade(io, f).await?;
            }
            return Ok(());
        }
        let sections = std::mem::take(candidate);
        self.rewrite(io, sections, true).await
    }

    /// How this task's rewrites derive changelog (Java: the full-compaction rewriter only
    /// when the output is the max level; the lookup rewriter when the output is not level
    /// 0, for keys with level-0 records).
    fn changelog_mode(&self) -> Option<ChangelogMode> {
        let out = self.task.unit.output_level;
        match self.producer {
            ChangelogProducer::Lookup if out != 0 => Some(ChangelogMode::Lookup),
            ChangelogProducer::FullCompaction if out == self.task.max_level => {
                Some(ChangelogMode::FullCompaction { max_level: out })
            }
            _ => None,
        }
    }

    /// Whether moving `f` to the output level without a rewrite still reads it for
    /// changelog (Java's `CHANGELOG_NO_REWRITE`).
    fn upgrade_needs_changelog(&self, f: &DataFileMeta) -> bool {
        match self.changelog_mode() {
            Some(ChangelogMode::Lookup) => f.level == 0,
            Some(ChangelogMode::FullCompaction { .. }) => true,
            None => false,
        }
    }

    /// Lookup-only runs for a section: per lookup level, its files overlapping the
    /// section's key range.
    fn lookup_runs_for(&self, section: &[Vec<DataFileMeta>]) -> Result<Vec<Vec<DataFileMeta>>> {
        if self.lookup_levels.is_empty() {
            return Ok(Vec::new());
        }
        let key_types: Vec<DataType> = self
            .plain_key_fields
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        let mut lo: Option<Vec<Datum>> = None;
        let mut hi: Option<Vec<Datum>> = None;
        for f in section.iter().flatten() {
            let min = decode_key(&f.min_key, &key_types)?;
            let max = decode_key(&f.max_key, &key_types)?;
            if lo.as_ref().is_none_or(|l| min < *l) {
                lo = Some(min);
            }
            if hi.as_ref().is_none_or(|h| max > *h) {
                hi = Some(max);
            }
        }
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Ok(Vec::new());
        };
        Ok(self
            .lookup_levels
            .iter()
            .map(|files| {
                files
                    .iter()
                    .filter(|(min, max, _)| !(*max < lo || *min > hi))
                    .map(|(_, _, f)| f.clone())
                    .collect::<Vec<_>>()
            })
            .filter(|run| !run.is_empty())
            .collect())
    }

    /// Move `f` to the output level, or rewrite it alone when the rules say so.
    async fn upgrade<T: Send + 'static>(&mut self, io: &Io<T>, f: DataFileMeta) -> Result<()> {
        let out = self.task.unit.output_level;
        let format_changes = self.task.rewrite_level0_upgrades
            && f.level == 0
            && KvFileSpec::for_level(&self.options, out)?.format
                != KvFileSpec::for_level(&self.options, 0)?.format;
        if must_rewrite(self.task, &f) || format_changes {
            return self.rewrite(io, vec![vec![vec![f]]], true).await;
        }
        if f.level != out {
            // Deletion vectors: the level-0 records still replace rows above the output.
            let marks =
                self.task.deletion_vectors && f.level == 0 && !self.lookup_levels.is_empty();
            if self.upgrade_needs_changelog(&f) || marks {
                self.rewrite(io, vec![vec![vec![f.clone()]]], false).await?;
            }
            let mut up = f.clone();
            up.level = out;
            self.before.push(f);
            self.after.push(up);
            self.stats.upgraded_files += 1;
        }
        Ok(())
    }

    /// Merge `sections` (in key order) into rolling files at the output level, and into
    /// changelog files when the table's changelog producer says so. Without `write_data`
    /// only the changelog is written (an upgrade that produces changelog) and the inputs
    /// are not recorded as rewritten.
    async fn rewrite<T: Send + 'static>(
        &mut self,
        io: &Io<T>,
        sections: Vec<Vec<Vec<DataFileMeta>>>,
        write_data: bool,
    ) -> Result<()> {
        let out_level = self.task.unit.output_level;
        let spec = KvFileSpec::for_level(&self.options, out_level)?;
        let changelog_spec = KvFileSpec::changelog(&self.options)?;
        let changelog = self.changelog_mode();
        let mut writer: Option<KvFileBuilder> = None;
        let mut changelog_writer: Option<KvFileBuilder> = None;
        let value_names: Vec<String> = self
            .ctx
            .schema
            .fields
            .iter()
            .map(|f| f.name.clone())
            .collect();
        let output_columns: Vec<usize> = (0..value_names.len()).collect();
        // Record-level expiry: the time field's column in the read layout (keys, sequence
        // number, value kind, the table's fields). First-row tables look up unfiltered.
        let expire = match &self.task.record_level_expire {
            Some(x) => {
                let pos = self
                    .ctx
                    .schema
                    .fields
                    .iter()
                    .position(|f| f.id == x.time_field.id)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "record-level expiry: time field '{}' is not in the latest schema",
                            x.time_field.name
                        ))
                    })?;
                Some((Arc::new(x.clone()), self.plain_key_fields.len() + 2 + pos))
            }
            None => None,
        };
        let first_row = self.options.merge_engine()? == crate::spec::MergeEngine::FirstRow;
        for section in &sections {
            let lookup_runs = self.lookup_runs_for(section)?;
            let lookup_count = lookup_runs.len();
            let track_from = if self.task.deletion_vectors {
                section.len()
            } else {
                usize::MAX
            };
            let runs: Vec<Box<dyn RunSource>> = section
                .iter()
                .chain(lookup_runs.iter())
                .enumerate()
                .map(|(i, run)| {
                    let files = run
                        .iter()
                        .map(|f| {
                            let schema = self.ctx.schemas.get(&f.schema_id).ok_or_else(|| {
                                Error::invalid(format!(
                                    "data file {} has schema id {} that was not loaded",
                                    f.file_name, f.schema_id
                                ))
                            })?;
                            Ok((
                                f.path_in_bucket(&self.task.bucket_path),
                                f.clone(),
                                schema.clone(),
                                self.task.deletion_files.get(&f.file_name).cloned(),
                            ))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    Ok(Box::new(CompactRunSource {
                        io: io.clone(),
                        spec: Arc::clone(&self.read_spec),
                        files: files.into(),
                        current: None,
                        batch_size: self.ctx.batch_size,
                        level: 0,
                        file_name: None,
                        track_positions: i >= track_from,
                        expire: expire.clone().filter(|_| i < section.len() || !first_row),
                        kept_positions: None,
                    }) as Box<dyn RunSource>)
                })
                .collect::<Result<_>>()?;
            let mut merge = MergeReader::try_new(
                &self.merge,
                Arc::clone(&self.read_spec.schema),
                output_columns.clone(),
                runs,
                self.ctx.batch_size,
            )?
            .with_key_value_output(!self.task.drop_delete);
            if lookup_count > 0 || changelog.is_some() {
                merge = merge.with_compaction_lookup(lookup_count, changelog)?;
            }
            let marks = self.task.deletion_vectors && lookup_count > 0;
            if marks {
                merge = merge.with_deletion_vector_marks()?;
            }
            while let Some(batch) = merge.next_batch().await? {
                let (data, log) = if changelog.is_some() {
                    split_changelog(&batch)?
                } else {
                    (batch, None)
                };
                if write_data && data.num_rows() > 0 {
                    let data = RecordBatch::try_new(
                        Arc::clone(&self.file_schema),
                        data.columns().to_vec(),
                    )
                    .map_err(|e| Error::arrow("compaction: building an output batch", e))?;
                    if writer.is_none() {
                        writer = Some(self.open_output(&spec, out_level, false)?);
                    }
                    if let Some(w) = writer.as_mut() {
                        w.write(&data)?;
                        self.send_part(io, w).await?;
                        if w.estimated_size_bytes() >= self.task.target_file_size as u64
                            && let Some(w) = writer.take()
                        {
                            self.close_output(io, w, false).await?;
                        }
                    }
                }
                if let Some(log) = log.filter(|b| b.num_rows() > 0) {
                    let log = self.deduplicate_changelog(log)?;
                    self.write_changelog(io, &mut changelog_writer, &changelog_spec, log)
                        .await?;
                }
            }
            if let Some(held) = self.held_before.take() {
                self.write_changelog(io, &mut changelog_writer, &changelog_spec, held)
                    .await?;
            }
            if marks {
                let new = merge.take_deletion_vector_marks()?;
                if let Some(vectors) = self.vectors.as_mut() {
                    for (file, positions) in new {
                        let old = vectors.by_file.get(&*file);
                        let fresh: Vec<u64> = positions
                            .into_iter()
                            .filter(|p| old.is_none_or(|dv| !dv.is_deleted(*p)))
                            .collect();
                        if !fresh.is_empty() {
                            let fresh = DeletionVector::from_positions(fresh);
                            let dv = match old {
                                Some(dv) => dv.union(&fresh),
                                None => fresh,
                            };
                            vectors.by_file.insert(file.to_string(), dv);
                            vectors.modified = true;
                        }
                    }
                }
            }
        }
        if let Some(w) = writer.take() {
            self.close_output(io, w, false).await?;
        }
        if let Some(w) = changelog_writer.take() {
            self.close_output(io, w, true).await?;
        }
        if write_data {
            for f in sections.into_iter().flatten().flatten() {
                if let Some(vectors) = self.vectors.as_mut()
                    && vectors.by_file.remove(&f.file_name).is_some()
                {
                    vectors.modified = true;
                }
                self.stats.rewritten_files += 1;
                self.before.push(f);
            }
        }
        Ok(())
    }

    /// `changelog-producer.row-deduplicate`: drop each `-U`/`+U` pair of `log` (changelog
    /// rows in key order, a pair always adjacent) whose compared value columns are equal; a
    /// trailing `-U` is held back until the next batch (or the end of the merge) brings its
    /// `+U`. Without the option `log` is returned as is.
    ///
    /// Source: Java `LookupChangelogMergeFunctionWrapper` / `FullChangelogMergeFunctionWrapper`
    /// with the `RecordEqualiser` of `ValueEqualiserSupplier#fromIgnoreFields`.
    fn deduplicate_changelog(&mut self, log: RecordBatch) -> Result<RecordBatch> {
        let Some(compared) = &self.row_dedup else {
            return Ok(log);
        };
        let log = match self.held_before.take() {
            None => log,
            Some(held) => arrow_select::concat::concat_batches(&log.schema(), [&held, &log])
                .map_err(|e| Error::arrow("compaction: changelog row deduplicate", e))?,
        };
        let n = log.num_rows();
        let kind_col = self.plain_key_fields.len() + 1;
        let kinds = log
            .column(kind_col)
            .as_primitive_opt::<Int8Type>()
            .ok_or_else(|| Error::invalid("compaction: changelog _VALUE_KIND is not Int8"))?
            .clone();
        let (upu, upa) = (
            crate::merge::RowKind::UpdateBefore.to_byte(),
            crate::merge::RowKind::UpdateAfter.to_byte(),
        );
        let mut end = n;
        if n > 0 && kinds.value(n - 1) == upu {
            self.held_before = Some(log.slice(n - 1, 1));
            end = n - 1;
        }
        let mut keep = vec![true; end];
        let mut i = 0;
        while i + 1 < end {
            if kinds.value(i) == upu && kinds.value(i + 1) == upa {
                let same = compared.iter().all(|c| {
                    let col = log.column(*c);
                    col.slice(i, 1).to_data() == col.slice(i + 1, 1).to_data()
                });
                if same {
                    keep[i] = false;
                    keep[i + 1] = false;
                }
                i += 2;
            } else {
                i += 1;
            }
        }
        arrow_select::filter::filter_record_batch(
            &log.slice(0, end),
            &arrow_array::BooleanArray::from(keep),
        )
        .map_err(|e| Error::arrow("compaction: changelog row deduplicate", e))
    }

    /// Write changelog rows (merge output layout) to the rolling changelog file.
    async fn write_changelog<T: Send + 'static>(
        &mut self,
        io: &Io<T>,
        writer: &mut Option<KvFileBuilder>,
        spec: &KvFileSpec,
        log: RecordBatch,
    ) -> Result<()> {
        if log.num_rows() == 0 {
            return Ok(());
        }
        let log = RecordBatch::try_new(Arc::clone(&self.file_schema), log.columns().to_vec())
            .map_err(|e| Error::arrow("compaction: building a changelog batch", e))?;
        if writer.is_none() {
            *writer = Some(self.open_output(spec, self.task.unit.output_level, true)?);
        }
        if let Some(w) = writer.as_mut() {
            w.write(&log)?;
            self.send_part(io, w).await?;
            if w.estimated_size_bytes() >= self.task.target_file_size as u64
                && let Some(w) = writer.take()
            {
                self.close_output(io, w, true).await?;
            }
        }
        Ok(())
    }

    /// A new output file at `level`: a data file, or (`changelog`) a changelog file
    /// (`<changelog-file.prefix><uuid>-<n>.<format>`, sharing the data files' UUID and
    /// counter when the formats agree, as Java's per-format path factories).
    fn open_output(
        &mut self,
        spec: &KvFileSpec,
        level: i32,
        changelog: bool,
    ) -> Result<KvFileBuilder> {
        let name = if !changelog {
            let n = self.files_named;
            self.files_named += 1;
            format!("{}{n}.{}", self.name_prefix, spec.format)
        } else {
            let prefix = changelog_prefix(&self.options);
            match &mut self.changelog_names {
                Some((uuid, count)) => {
                    let n = *count;
                    *count += 1;
                    format!("{prefix}{uuid}-{n}.{}", spec.format)
                }
                None => {
                    let n = self.files_named;
                    self.files_named += 1;
                    format!("{prefix}{}-{n}.{}", self.name_uuid, spec.format)
                }
            }
        };
        KvFileBuilder::try_new(
            name,
            &self.file_fields,
            &self.plain_key_fields,
            spec,
            &self.options,
            level,
            changelog,
            if changelog {
                None
            } else {
                self.managed_positions.clone()
            },
        )
    }

    /// After a write to `w`: send its laid-out bytes as the next part of its streamed `Put`
    /// once they reach a part ([`crate::encode::parts::FileParts`]).
    async fn send_part<T: Send + 'static>(
        &mut self,
        io: &Io<T>,
        w: &mut KvFileBuilder,
    ) -> Result<()> {
        let name = w.name.clone();
        let managed = w.has_refs();
        let bucket_path = &self.task.bucket_path;
        let placer = &mut self.placer;
        let part = w.next_part(DEFAULT_PUT_PART_BYTES, || {
            if managed {
                (format!("{bucket_path}/{name}"), None)
            } else {
                placer.place(&name)
            }
        })?;
        if let Some(part) = part {
            self.uploading.insert(part.path.clone());
            // A part is never refused (only the completion can find the name taken).
            crate::io::put_file(io, part).await?;
        }
        Ok(())
    }

    /// Finish `w` and `Put` it (and its sidecar); record it as an output or (`changelog`) a
    /// changelog file.
    async fn close_output<T: Send + 'static>(
        &mut self,
        io: &Io<T>,
        w: KvFileBuilder,
        changelog: bool,
    ) -> Result<()> {
        // Java writes compaction changelog files with file source APPEND.
        let source = if changelog {
            FileSource::Append
        } else {
            FileSource::Compact
        };
        let FinishedKvFile {
            mut meta,
            tail,
            refs,
            parts,
        } = w.finish(
            self.task.unit.output_level,
            source,
            self.ctx.schema.id,
            self.ctx.time_millis,
        )?;
        if let Some(refs) = refs {
            let (sidecar, name) = refs.finish(&self.task.bucket_path, &meta.file_name)?;
            let path = sidecar.path.clone();
            if !crate::io::put_file(io, sidecar).await? {
                return Err(Error::invalid(format!(
                    "compaction output {} already exists (file name collision)",
                    path
                )));
            }
            self.written.push(path);
            meta.extra_files.push(name);
        }
        let managed = !meta.extra_files.is_empty();
        let bucket_path = &self.task.bucket_path;
        let placer = &mut self.placer;
        let (put, external_path) = parts.finish(tail, || {
            if managed {
                // A file with a sidecar stays next to it, in the bucket directory.
                (format!("{bucket_path}/{}", meta.file_name), None)
            } else {
                placer.place(&meta.file_name)
            }
        });
        meta.external_path = external_path;
        let path = put.path.clone();
        self.uploading.remove(&path);
        if !crate::io::put_file(io, put).await? {
            return Err(Error::invalid(format!(
                "compaction output {path} already exists (file name collision)"
            )));
        }
        self.written.push(path);
        if changelog {
            self.changelog_files.push(meta);
        } else {
            self.after.push(meta);
        }
        Ok(())
    }
}

/// Split a merge output with a `_CHANGELOG` last column into its merged records and its
/// changelog records (both without the column).
fn split_changelog(batch: &RecordBatch) -> Result<(RecordBatch, Option<RecordBatch>)> {
    let n = batch.num_columns();
    let flags = batch
        .column(n.saturating_sub(1))
        .as_boolean_opt()
        .ok_or_else(|| Error::invalid("compaction: the merge output has no _CHANGELOG column"))?
        .clone();
    let body = batch
        .project(&(0..n - 1).collect::<Vec<_>>())
        .map_err(|e| Error::arrow("compaction: dropping _CHANGELOG", e))?;
    let not = arrow_arith::boolean::not(&flags)
        .map_err(|e| Error::arrow("compaction: splitting changelog", e))?;
    let data = arrow_select::filter::filter_record_batch(&body, &not)
        .map_err(|e| Error::arrow("compaction: splitting changelog", e))?;
    let log = arrow_select::filter::filter_record_batch(&body, &flags)
        .map_err(|e| Error::arrow("compaction: splitting changelog", e))?;
    Ok((data, Some(log)))
}

/// A sorted run of a compaction, read file after file.
struct CompactRunSource<T> {
    io: Io<T>,
    spec: Arc<FileReadSpec>,
    /// (path, file, its schema, its deletion vector).
    files: std::collections::VecDeque<(String, DataFileMeta, TableSchema, Option<DeletionFile>)>,
    current: Option<FileRead>,
    batch_size: usize,
    /// Level of the file being read.
    level: i32,
    /// Name of the file being read.
    file_name: Option<Arc<str>>,
    /// Report file positions ([`RunSource::batch_positions`]).
    track_positions: bool,
    /// Record-level expiry: drop the expired rows of every batch (the time field's column
    /// index in the read layout).
    expire: Option<(Arc<crate::read::expire::RecordLevelExpire>, usize)>,
    /// With `expire`, the file positions of the rows kept of the last batch.
    kept_positions: Option<ScalarBuffer<i64>>,
}

impl<T: Send + 'static> RunSource for CompactRunSource<T> {
    fn batch_level(&self) -> i32 {
        self.level
    }

    fn batch_positions(&self) -> Option<(Arc<str>, ScalarBuffer<i64>)> {
        let positions = match &self.expire {
            Some(_) => self.kept_positions.clone()?,
            None => self.current.as_ref()?.last_positions()?.clone(),
        };
        Some((Arc::clone(self.file_name.as_ref()?), positions))
    }

    fn next_batch(&mut self) -> BoxFuture<'_, Result<Option<RecordBatch>>> {
        Box::pin(async move {
            loop {
                if let Some(reader) = &mut self.current {
                    if let Some(b) = reader.next_batch(&self.io).await? {
                        let Some((expire, column)) = &self.expire else {
                            return Ok(Some(b));
                        };
                        let time = b.columns().get(*column).ok_or_else(|| {
                            Error::invalid("record-level expiry: the time column is not read")
                        })?;
                        let keep = expire.keep_mask(time)?;
                        if keep.true_count() == 0 {
                            continue;
                        }
                        if let Some(p) = reader.last_positions() {
                            let p = p.clone();
                            self.kept_positions = Some(
                                p.iter()
                                    .zip(keep.values().iter())
                                    .filter(|(_, k)| *k)
                                    .map(|(p, _)| *p)
                                    .collect(),
                            );
                        }
                        if keep.true_count() == b.num_rows() {
                            return Ok(Some(b));
                        }
                        let b = arrow_select::filter::filter_record_batch(&b, &keep)
                            .map_err(|e| Error::arrow("record-level expiry: filtering", e))?;
                        return Ok(Some(b));
                    }
                    self.current = None;
                }
                let Some((path, file, schema, dv)) = self.files.pop_front() else {
                    return Ok(None);
                };
                self.level = file.level;
                self.file_name = Some(Arc::from(file.file_name.as_str()));
                let read = FileRead::open(
                    &self.io,
                    &path,
                    &file,
                    &schema,
                    &self.spec,
                    dv.as_ref(),
                    self.batch_size,
                )
                .await?;
                self.current = Some(if self.track_positions {
                    read.track_positions()
                } else {
                    read
                });
            }
        })
    }
}
