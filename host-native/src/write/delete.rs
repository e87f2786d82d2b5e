//! Changing the rows or the schema of a table: alter, delete (written back as `-D` rows or as
//! deletion vectors) and partial-column updates of data-evolution tables.
//!
//! Source: Java `org.apache.paimon.schema.SchemaManager#commitChanges`,
//! `org.apache.paimon.deletionvectors.append.AppendDeleteFileMaintainer`.

use super::*;

impl Table {
    /// Apply `changes` to the table's latest schema and write the result as the next schema
    /// (`schema/schema-<id+1>`, create-new; a concurrent alter that took the id is retried on
    /// the new latest schema). Returns the new schema; later writes use it and reads evolve
    /// older files to it by field id. See
    /// [`paimon_kernel::schema::alter::apply_schema_changes`] for the rules.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid` naming the column, option or types of a change that breaks
    /// Paimon's rules (nothing is written); `Unsupported` for a type change this reader cannot
    /// apply to old files; store errors.
    pub async fn alter(
        &self,
        changes: Vec<paimon_kernel::schema::alter::SchemaChange>,
    ) -> Result<paimon_kernel::spec::TableSchema> {
        let machine = paimon_kernel::schema::alter::alter_table_machine(changes, now_millis())
            .describe(format!("altering table {}", self.location()));
        self.host().run_once(machine).await
    }

    /// Delete the rows matching `filter` (a [`crate::Filter`]: predicate text such as
    /// `k > 2 AND dt = '2024-01-01'`, or a built predicate) in one commit.
    ///
    /// Primary-key tables: the matching rows (of the latest snapshot, merged, read with the
    /// latest schema) are written back as `-D` rows and committed as one `APPEND` snapshot, as
    /// Java's batch delete on a primary-key table does. The merge engine must drop deleted
    /// keys (Java `PrimaryKeyTableUtils.validatePKUpsertDeletable`): `deduplicate`,
    /// `partial-update` with `partial-update.remove-record-on-delete` (or
    /// `partial-update.remove-record-on-sequence-group`), `aggregation` with
    /// `aggregation.remove-record-on-delete`. No matching row: nothing is committed.
    ///
    /// Append tables with `deletion-vectors.enabled` (`bucket` = -1 or > 0): the matching rows
    /// of each live data file get deletion vectors, written as new DV index files and committed
    /// as index changes only (an `OVERWRITE` snapshot, as Java's commit of DV changes; see
    /// [`paimon_kernel::write::append::deletion_vectors`]). On data-evolution tables a matching row is
    /// deleted in the vector of its row-id group's anchor (the oldest normal file), at its
    /// `_ROW_ID` minus the group's first row id. `rows_deleted` counts rows not deleted
    /// before. No matching row: nothing is committed.
    ///
    /// # Errors
    /// [`Error::Kernel`] with `Unsupported` for append tables (data evolution included)
    /// without `deletion-vectors.enabled` and tables [`Table::new_write`] cannot write; `Invalid` for a merge engine that keeps deleted keys, `ignore-delete` tables and a
    /// filter that does not parse or names an unknown column; `CommitConflict` when another
    /// commit changed the deletion vectors of the same data files (or bucket) meanwhile; read,
    /// write and commit errors (the files written are deleted then).
    pub async fn delete_where(
        &self,
        filter: impl Into<crate::Filter>,
        commit_user: Option<String>,
    ) -> Result<DeleteOutcome> {
        let schema = self.schema().await?;
        let context = format!("deleting rows of table {}", self.location());
        if schema.primary_keys.is_empty() {
            return self
                .delete_with_deletion_vectors(filter.into(), commit_user, &schema, &context)
                .await;
        }
        check_deletable(&schema).map_err(|e| Error::kernel(&context, e))?;
        let mut writer = self.new_write().await?;
        let rows: Result<u64> = async {
            // Stored blob descriptors, not the bytes they point at: a `-D` row carries the
            // values as stored (managed BLOB columns are nulled on retractions anyway).
            let mut stream = self
                .scan()
                .with_filter(filter)
                .with_blob_as_descriptor(true)
                .to_stream()
                .await?;
            let mut rows = 0u64;
            while let Some(batch) = futures::TryStreamExt::try_next(&mut stream).await? {
                if batch.num_rows() == 0 {
                    continue;
                }
                let deletes = as_deletes(&batch, &writer.input_schema(), &schema)
                    .map_err(|e| Error::kernel(&context, e))?;
                writer.write(&deletes).await?;
                rows += batch.num_rows() as u64;
            }
            Ok(rows)
        }
        .await;
        let rows = match rows {
            Ok(rows) => rows,
            Err(e) => {
                let _ = writer.abort().await;
                return Err(e);
            }
        };
        if rows == 0 {
            writer.abort().await?;
            return Ok(DeleteOutcome {
                rows_deleted: 0,
                commit: CommitOutcome::default(),
            });
        }
        let committed: Result<CommitOutcome> = async {
            let messages = writer.prepare_commit().await?;
            self.new_commit(commit_user).commit(messages).await
        }
        .await;
        match committed {
            Ok(commit) => Ok(DeleteOutcome {
                rows_deleted: rows,
                commit,
            }),
            Err(e) => {
                // A partly published commit references the written files: keep them.
                if !matches!(
                    e.as_kernel(),
                    Some(paimon_kernel::Error::PartlyPublished { .. })
                ) {
                    let _ = writer.abort().await;
                }
                Err(e)
            }
        }
    }
}

impl Table {
    /// The append-table branch of [`Table::delete_where`]: the matching rows get deletion
    /// vectors ([`paimon_kernel::write::append::deletion_vectors`]) committed as one snapshot with
    /// index changes only. Index files written for a commit that fails are deleted.
    async fn delete_with_deletion_vectors(
        &self,
        filter: crate::Filter,
        commit_user: Option<String>,
        schema: &paimon_kernel::spec::TableSchema,
        context: &str,
    ) -> Result<DeleteOutcome> {
        use paimon_kernel::write::append::deletion_vectors::{
            check_dv_deletable, dv_delete_machine,
        };
        let kernel = |e| Error::kernel(context, e);
        let kind = paimon_kernel::scan::TableKind::Append;
        check_dv_deletable(kind, &schema.core_options()).map_err(kernel)?;
        let predicate = match &filter {
            crate::Filter::Predicate(p) => p.clone(),
            crate::Filter::Text(t) => {
                paimon_kernel::predicate::Predicate::parse(t).map_err(kernel)?
            }
        };
        let plan = self.scan().with_filter(filter).plan().await?;
        let machine =
            dv_delete_machine(plan, predicate, random_seed()).describe(context.to_string());
        let delete = self.host().run_once(machine).await?;
        if delete.messages.is_empty() {
            return Ok(DeleteOutcome::default());
        }
        match self.new_commit(commit_user).commit(delete.messages).await {
            Ok(commit) => Ok(DeleteOutcome {
                rows_deleted: delete.rows_deleted,
                commit,
            }),
            Err(e) => {
                let _ = delete_paths(self.host(), delete.written).await;
                Err(e)
            }
        }
    }
}

/// What [`Table::delete_where`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOutcome {
    /// Rows that matched the filter and were deleted.
    pub rows_deleted: u64,
    /// The commit (no snapshot when nothing matched).
    pub commit: CommitOutcome,
}

/// Whether rows of a table with `schema` can be deleted by writing `-D` rows.
fn check_deletable(schema: &paimon_kernel::spec::TableSchema) -> paimon_kernel::Result<()> {
    use paimon_kernel::spec::MergeEngine;
    if schema.primary_keys.is_empty() {
        return Err(paimon_kernel::Error::unsupported(
            "deleting rows of a table without primary key needs 'deletion-vectors.enabled'",
        ));
    }
    let options = schema.core_options();
    let flag = |key: &str| {
        schema
            .options
            .get(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    };
    if flag("ignore-delete") {
        return Err(paimon_kernel::Error::invalid(
            "the table sets 'ignore-delete' = 'true': its merge would drop the deletes",
        ));
    }
    match options.merge_engine()? {
        MergeEngine::Deduplicate => Ok(()),
        MergeEngine::PartialUpdate
            if flag("partial-update.remove-record-on-delete")
                || schema
                    .options
                    .contains_key("partial-update.remove-record-on-sequence-group") =>
        {
            Ok(())
        }
        MergeEngine::PartialUpdate => Err(paimon_kernel::Error::invalid(
            "merge engine partial-update keeps keys on delete: set \
             'partial-update.remove-record-on-delete' = 'true' (without sequence groups) or \
             'partial-update.remove-record-on-sequence-group' to delete rows",
        )),
        MergeEngine::Aggregation if flag("aggregation.remove-record-on-delete") => Ok(()),
        MergeEngine::Aggregation => Err(paimon_kernel::Error::invalid(
            "merge engine aggregation keeps keys on delete: set \
             'aggregation.remove-record-on-delete' = 'true' to delete rows",
        )),
        other => Err(paimon_kernel::Error::invalid(format!(
            "merge engine {} cannot delete rows",
            other.as_str()
        ))),
    }
}

/// `batch` (rows read with the table's schema) as writer input: the writer's columns by name
/// and a `_ROW_KIND` column of `-D` (the `rowkind.field` column too, when the table has one).
fn as_deletes(
    batch: &RecordBatch,
    input: &SchemaRef,
    schema: &paimon_kernel::spec::TableSchema,
) -> paimon_kernel::Result<RecordBatch> {
    use arrow_array::{ArrayRef, StringArray};
    use paimon_kernel::spec::special_fields::ROW_KIND_COLUMN;
    let deletes: ArrayRef = std::sync::Arc::new(StringArray::from(vec!["-D"; batch.num_rows()]));
    let rowkind_field = schema.options.get("rowkind.field");
    let mut fields = Vec::with_capacity(input.fields().len() + 1);
    let mut columns = Vec::with_capacity(input.fields().len() + 1);
    for field in input.fields() {
        let column = if rowkind_field == Some(field.name()) {
            std::sync::Arc::clone(&deletes)
        } else {
            let i = batch.schema().index_of(field.name()).map_err(|_| {
                paimon_kernel::Error::invalid(format!(
                    "the rows read have no column '{}'",
                    field.name()
                ))
            })?;
            std::sync::Arc::clone(batch.column(i))
        };
        fields.push(arrow_schema::Field::new(
            field.name(),
            column.data_type().clone(),
            field.is_nullable(),
        ));
        columns.push(column);
    }
    fields.push(arrow_schema::Field::new(
        ROW_KIND_COLUMN,
        arrow_schema::DataType::Utf8,
        false,
    ));
    columns.push(deletes);
    RecordBatch::try_new(
        std::sync::Arc::new(arrow_schema::Schema::new(fields)),
        columns,
    )
    .map_err(|e| paimon_kernel::Error::arrow("building the delete rows", e))
}

/// What [`Table::update`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateOutcome {
    /// Rows whose columns were set.
    pub rows_updated: u64,
    /// Row-id ranges (live normal files) that got new files.
    pub ranges: usize,
    /// The commit.
    pub commit: CommitOutcome,
}

impl Table {
    /// Set columns of existing rows of a data-evolution table by `_ROW_ID`, in one commit.
    ///
    /// `batch` has a non-null `_ROW_ID` column (BIGINT) and the columns to set (by name, any
    /// order; Arrow types cast to the columns' types). Each touched row-id range (a live
    /// normal file's range) gets files covering exactly that range with only those columns
    /// (`write_cols`): the non-BLOB ones hold every row of the range (the current value where
    /// the row is not updated), each BLOB one its new values and placeholders for the other
    /// rows (see [`paimon_kernel::write::append::update`]). The commit checks, from the snapshot the
    /// update was computed on, that no other commit wrote the same columns of those rows
    /// meanwhile (a commit conflict otherwise).
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid` for a table without data evolution, a missing or null
    /// `_ROW_ID`, a `_ROW_ID` given twice or not in the table, an unknown or partition column,
    /// NULL in a NOT NULL column, a `_ROW_ID` deleted by a deletion vector; a commit
    /// conflict; store errors (the files written are deleted after any failure).
    pub async fn update(
        &self,
        batch: &RecordBatch,
        commit_user: Option<String>,
    ) -> Result<UpdateOutcome> {
        use arrow_array::Array;
        use arrow_array::cast::AsArray;
        use paimon_kernel::write::append::update::{RangeUpdate, UpdateWriter};

        let context = format!("updating table {}", self.location());
        let invalid = |m: String| Error::kernel(&context, paimon_kernel::Error::invalid(m));
        let schema = self.schema().await?;
        let mut writer = UpdateWriter::try_new(
            schema.clone(),
            WriteOptions {
                seed: random_seed(),
                time_millis: now_millis(),
            },
        )
        .map_err(|e| Error::kernel(&context, e))?;
        let resolved;
        let batch =
            if has_blob_references(&schema, batch).map_err(|e| Error::kernel(&context, e))? {
                let machine = resolve_blob_references_machine(schema.clone(), batch.clone())
                    .describe(context.clone());
                resolved = self.host().run_once(machine).await?;
                &resolved
            } else {
                batch
            };
        let input = batch.schema();
        let row_id_col = input
            .index_of("_ROW_ID")
            .map_err(|_| invalid("the input has no _ROW_ID column".into()))?;
        let row_ids = arrow_cast::cast(batch.column(row_id_col), &arrow_schema::DataType::Int64)
            .map_err(|e| invalid(format!("column _ROW_ID: {e}")))?;
        if row_ids.null_count() > 0 {
            return Err(invalid("column _ROW_ID has NULL values".into()));
        }
        let row_ids = row_ids
            .as_primitive::<arrow_array::types::Int64Type>()
            .clone();
        // Update columns in table order.
        let mut columns: Vec<(usize, usize)> = Vec::new(); // (table position, input position)
        for (i, f) in input.fields().iter().enumerate() {
            if i == row_id_col {
                continue;
            }
            let pos = schema
                .fields
                .iter()
                .position(|t| &t.name == f.name())
                .ok_or_else(|| invalid(format!("column '{}' is not in the table", f.name())))?;
            columns.push((pos, i));
        }
        if columns.is_empty() {
            return Err(invalid("the input sets no column besides _ROW_ID".into()));
        }
        columns.sort_unstable();
        let Some(files) = self.scan().data_files().await? else {
            return Err(invalid("the table has no rows to update".into()));
        };
        let base_snapshot = files.snapshot.id;
        // Live normal-file ranges: (first row id, row count) → (partition, bucket).
        let mut ranges: BTreeMap<i64, (i64, paimon_kernel::spec::BinaryRow, i32)> = BTreeMap::new();
        for e in &files.entries {
            if e.file.file_name.ends_with(".blob") {
                continue;
            }
            let Some(first) = e.file.first_row_id else {
                continue;
            };
            ranges
                .entry(first)
                .or_insert_with(|| (e.file.row_count, e.partition.clone(), e.bucket));
        }
        // Input rows by range (a row id given twice is found below, per range).
        let mut by_range: BTreeMap<i64, Vec<(i64, usize)>> = BTreeMap::new();
        for (i, id) in row_ids.values().iter().enumerate() {
            let start = ranges
                .range(..=*id)
                .next_back()
                .filter(|(first, (count, _, _))| *id < **first + *count)
                .map(|(first, _)| *first)
                .ok_or_else(|| invalid(format!("_ROW_ID {id} (row {i}) is not in the table")))?;
            by_range.entry(start).or_default().push((*id, i));
        }
        // Current values of the update columns over the touched ranges, except BLOB columns
        // in `.blob` files (placeholders keep theirs); columns stored inline are copied as
        // stored (descriptors, view structs: read with `blob-as-descriptor`).
        let table_arrow = paimon_kernel::types::paimon_to_arrow_schema(&schema.fields)
            .map_err(|e| Error::kernel(&context, e))?;
        let inline = paimon_kernel::blob::validation::blob_inline_fields(&schema.core_options());
        let is_blob = |pos: usize| {
            let field = &schema.fields[pos];
            !inline.contains(&field.name)
                && (matches!(field.data_type.kind, paimon_kernel::spec::TypeKind::Blob)
                    || paimon_kernel::format::blob::BlobElementKind::try_from_data_type(
                        &field.data_type,
                    )
                    .is_ok())
        };
        let copied: Vec<usize> = columns
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| !is_blob(*p))
            .collect();
        let current = if copied.is_empty() {
            None
        } else {
            let mut names: Vec<String> = copied
                .iter()
                .map(|p| schema.fields[*p].name.clone())
                .collect();
            names.push("_ROW_ID".into());
            let wanted: Vec<RowRange> = by_range
                .keys()
                .map(|first| RowRange {
                    from: *first,
                    to: *first + ranges[first].0 - 1,
                })
                .collect();
            let batches = self
                .scan()
                .with_projection(names)
                .with_row_ranges(wanted)
                .with_blob_as_descriptor(true)
                .to_batches()
                .await?;
            let all = arrow_select::concat::concat_batches(
                &std::sync::Arc::new(
                    batches
                        .first()
                        .map_or_else(arrow_schema::Schema::empty, |b| b.schema().as_ref().clone()),
                ),
                &batches,
            )
            .map_err(|e| invalid(format!("reading the current values: {e}")))?;
            Some(all)
        };
        // Position in `current` of each row of the touched ranges, a dense slot per row of
        // each range (`NOT_READ`: the read did not return it: a deletion vector hides it).
        const NOT_READ: u32 = u32::MAX;
        // (first row id, slots), ascending by first row id.
        let mut current_pos: Vec<(i64, Vec<u32>)> = Vec::new();
        if let Some(cur) = &current {
            for first in by_range.keys() {
                let n = usize::try_from(ranges[first].0)
                    .map_err(|_| invalid("bad row count".into()))?;
                current_pos.push((*first, vec![NOT_READ; n]));
            }
            let ids = cur
                .column_by_name("_ROW_ID")
                .ok_or_else(|| invalid("the read returned no _ROW_ID".into()))?
                .as_primitive::<arrow_array::types::Int64Type>();
            // Rows come a split at a time, in row-id order within a range: keep the range of
            // the previous row and search only when a row lies outside it.
            let mut last = 0usize;
            for (i, id) in ids.values().iter().enumerate() {
                let i = u32::try_from(i)
                    .ok()
                    .filter(|i| *i != NOT_READ)
                    .ok_or_else(|| invalid("more than 2^32 - 1 current rows".into()))?;
                let within = |(first, slots): &(i64, Vec<u32>)| {
                    usize::try_from(*id - *first)
                        .ok()
                        .filter(|k| *k < slots.len())
                };
                if current_pos.get(last).and_then(within).is_none() {
                    last = current_pos
                        .partition_point(|(first, _)| *first <= *id)
                        .saturating_sub(1);
                }
                // A row outside every touched range is not needed (the read returns only
                // theirs; nothing to place if it did not).
                if let Some(slot) = current_pos.get_mut(last).and_then(|range| {
                    let k = within(range)?;
                    range.1.get_mut(k)
                }) {
                    *slot = i;
                }
            }
        }
        let mut rows_updated = 0u64;
        for (first, touched_rows) in &by_range {
            let (count, partition, bucket) = ranges[first].clone();
            let n = usize::try_from(count).map_err(|_| invalid("bad row count".into()))?;
            let mut touched = vec![false; n];
            let mut from_input: Vec<Option<u32>> = vec![None; n];
            for (id, i) in touched_rows {
                let at = (*id - *first) as usize;
                if touched[at] {
                    return Err(invalid(format!("_ROW_ID {id} is given twice")));
                }
                touched[at] = true;
                from_input[at] = Some(*i as u32);
            }
            let slots = current_pos
                .binary_search_by_key(first, |(f, _)| *f)
                .ok()
                .and_then(|k| current_pos.get(k))
                .map(|(_, slots)| slots);
            rows_updated += touched_rows.len() as u64;
            let mut cols = Vec::new();
            for (pos, input_pos) in &columns {
                let field = &schema.fields[*pos];
                let target = table_arrow.field(*pos).data_type().clone();
                let given = arrow_cast::cast(batch.column(*input_pos), &target)
                    .map_err(|e| invalid(format!("column '{}': {e}", field.name)))?;
                let picked = arrow_select::take::take(
                    given.as_ref(),
                    &arrow_array::UInt32Array::from(from_input.clone()),
                    None,
                )
                .map_err(|e| invalid(format!("column '{}': {e}", field.name)))?;
                let values = if is_blob(*pos) {
                    picked
                } else {
                    let cur = current
                        .as_ref()
                        .and_then(|c| c.column_by_name(&field.name))
                        .ok_or_else(|| invalid(format!("no current values of '{}'", field.name)))?;
                    // A row deleted by a deletion vector stays deleted (the vector is the
                    // anchor's, which an update does not replace): its slot holds NULL, or
                    // for a NOT NULL column the first updated row's value, never read.
                    let first_touched = touched.iter().position(|t| *t).unwrap_or_default();
                    let mut idx: Vec<(usize, usize)> = Vec::with_capacity(n);
                    for (r, t) in touched.iter().enumerate() {
                        let at = slots
                            .and_then(|s| s.get(r))
                            .copied()
                            .filter(|at| *at != NOT_READ);
                        if *t {
                            if at.is_none() {
                                let id = *first + r as i64;
                                return Err(invalid(format!(
                                    "_ROW_ID {id} was deleted (a deletion vector hides it)"
                                )));
                            }
                            idx.push((1, r));
                        } else if let Some(at) = at {
                            idx.push((0, at as usize));
                        } else if field.data_type.nullable {
                            idx.push((2, 0));
                        } else {
                            idx.push((1, first_touched));
                        }
                    }
                    let null = arrow_array::new_null_array(&target, 1);
                    let cur = arrow_cast::cast(cur, &target)
                        .map_err(|e| invalid(format!("column '{}': {e}", field.name)))?;
                    arrow_select::interleave::interleave(
                        &[cur.as_ref(), picked.as_ref(), null.as_ref()],
                        &idx,
                    )
                    .map_err(|e| invalid(format!("column '{}': {e}", field.name)))?
                };
                cols.push((field.name.clone(), values));
            }
            writer
                .write_range(RangeUpdate {
                    partition,
                    bucket,
                    first_row_id: *first,
                    columns: cols,
                    touched,
                })
                .map_err(|e| Error::kernel(&context, e))?;
        }
        // Put the files, then commit; any failure deletes them.
        let mut written: Vec<String> = Vec::new();
        let result: Result<CommitOutcome> = async {
            for f in writer.take_files() {
                let path = f.path.clone();
                put_new_file(self.host(), f, &context).await?;
                written.push(path);
            }
            let messages = writer.prepare_commit();
            self.new_commit(commit_user)
                .run_checked(
                    messages,
                    CommitMode::Append,
                    BATCH_COMMIT_IDENTIFIER,
                    Some(base_snapshot),
                )
                .await
        }
        .await;
        match result {
            Ok(commit) => Ok(UpdateOutcome {
                rows_updated,
                ranges: by_range.len(),
                commit,
            }),
            Err(e) => {
                let _ = delete_paths(self.host(), written).await;
                Err(e)
            }
        }
    }
}
