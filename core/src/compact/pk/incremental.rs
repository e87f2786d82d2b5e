//! Incremental selection: an opt-in compaction policy of ours (not Java's) that compacts
//! small recent sorted runs while large historical runs stay in place.
//!
//! Enabled per table with [`INCREMENTAL_SELECTION`] = `true` (default `false`; Java keeps
//! the unknown key in the schema and ignores it). Only normal compaction changes; a full
//! compaction is Java's. With the option off, or for a table it does not apply to, plans
//! are Java's plans.
//!
//! A normal compaction first asks the table's Java strategy ([`super::CompactStrategy`]);
//! when that picks nothing, nothing is compacted. When it picks, the bucket's sorted runs
//! (newest first) are walked with the universal size ratio
//! (`compaction.size-ratio` + the off-peak ratio): a run is *selected* while the selected
//! runs' size × (100 + ratio) / 100 is not below its size, otherwise it is *retained
//! history*. When Java's unit holds no retained run, the plan is Java's. Otherwise:
//!
//! * **Lookup tables** ([`Regrouping::Lookup`]: `first-row` with `changelog-producer`
//!   `none` or `lookup`; `partial-update` / `aggregation` with `changelog-producer = lookup`
//!   or `force-lookup`; not deletion-vector tables). The walk stops at the first retained
//!   run: the unit is the leading runs (every level-0 run and the small runs after them),
//!   written one level above the first retained run, whose files and every file above are
//!   the task's lookup files. First-row: a level-0 key that retained history holds is a
//!   lookup hit and is dropped (no data, no changelog); a level-0 file whose keys all exist
//!   leaves nothing. Partial-update / aggregation: a key's nearest positive-level state (a
//!   selected run's, else the lookup hit in the retained runs) is merged with its level-0
//!   records in sequence order and the result is materialised at the output level; older
//!   states are never merged again (Java's `LookupMergeFunction` reads only the nearest).
//!   When the first retained run is at level 1 there is no level above it: the unit is
//!   Java's forced level-0 pick (level 0 with level 1). A bucket whose leading run is not
//!   level 0 and is alone in the selection is left alone.
//! * **Plain tables** ([`Regrouping::Plain`]: `partial-update` / `aggregation` without
//!   lookup, `changelog-producer` `none` or `input`) in the safe subset only (see
//!   [`selection`]): the walk goes on past retained runs, so the selected runs need not be
//!   adjacent; their records are merged with each other and history is left to the merge at
//!   query time. The output goes to the highest level that no retained run occupies, and
//!   retractions are kept. This is only right when every value field merges commutatively
//!   and associatively: regrouped states then give the rows of a full merge. At least two
//!   runs must be selected, else nothing is compacted.
//!
//! Every other table (deduplicate, deletion vectors, `changelog-producer =
//! full-compaction`, plain tables outside the safe subset) keeps Java's selection
//! ([`Selection::Conservative`] says why).
//!
//! Rows carry their level through the merge as the level of the run source's batch
//! ([`crate::merge::RunSource::batch_level`]; every batch comes from one data file of one
//! level), the per-batch form of Java's `_LEVEL` column (`KeyValue.schemaWithLevel`,
//! field id 2147483644); lookup hits are the records of levels above the task's output
//! level.

use std::collections::{BTreeMap, BTreeSet};

use super::levels::LevelSortedRun;
use super::strategy::{CompactUnit, UniversalCompaction};
use crate::error::{Error, Result};
use crate::merge::{MergeConfig, MergeEngine};
use crate::predicate::value_stats_fields;
use crate::spec::options::ChangelogProducer;
use crate::spec::{DataField, DataFileMeta, Datum, TableSchema, TypeKind};

/// Table option (ours): `true` turns incremental selection on; default `false`.
pub const INCREMENTAL_SELECTION: &str = "kernel.compaction.incremental-selection";

#[cfg(test)]
thread_local! {
    /// Tests only: skip the safe-subset and per-bucket checks of plain tables, to show that
    /// each check is needed.
    pub(crate) static BYPASS_CHECKS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
thread_local! {
    /// Tests only: how many picks differed from Java's unit.
    pub(crate) static NON_JAVA_PICKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
fn count_non_java_pick() {
    NON_JAVA_PICKS.with(|c| c.set(c.get() + 1));
}

#[cfg(not(test))]
fn count_non_java_pick() {}

#[cfg(test)]
fn bypass() -> bool {
    BYPASS_CHECKS.with(|b| b.get())
}

#[cfg(not(test))]
fn bypass() -> bool {
    false
}

/// How a table may regroup states when incremental selection is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Regrouping {
    /// Lookup tables: the selection is the leading runs (a prefix of the sorted runs).
    Lookup,
    /// Plain partial-update / aggregation tables in the safe subset: any runs the size
    /// ratio selects, adjacent or not, after the per-bucket checks.
    Plain {
        /// Value fields aggregated with integer `sum` (latest schema): a bucket regroups
        /// only when its files' statistics bound every partial sum within the type.
        int_sums: Vec<DataField>,
        /// `partial-update` without `ignore-delete`: a bucket regroups only when none of its
        /// files holds a retraction (`delete_row_count` = 0 for every file).
        no_retractions: bool,
    },
}

/// Whether and how a table uses incremental selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The option is off: Java's selection.
    Java,
    /// The option is on and applies.
    Incremental(Regrouping),
    /// The option is on but the table keeps Java's selection; the reason.
    Conservative(String),
}

/// The aggregate functions whose merge is commutative and associative (integer `sum`
/// only under the per-bucket overflow bound).
fn regroupable_function(name: &str, field: &DataField) -> Option<bool> {
    match name {
        "min" | "max" | "bool_and" | "bool_or" => Some(false),
        "sum" => matches!(
            field.data_type.kind,
            TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::BigInt
        )
        .then_some(true),
        _ => None,
    }
}

/// Decide how `schema`'s table selects with [`INCREMENTAL_SELECTION`].
///
/// The safe subset of plain tables (every rule but the last has a counterexample in the
/// tests, `unsafe_configurations_give_wrong_rows_when_regrouped`):
/// * no `sequence.field` (a global ordering would reorder regrouped states);
/// * the partition keys are primary keys;
/// * `aggregation`: no `aggregation.remove-record-on-delete` (a reset depends on what came
///   before it); every value field (not a primary key) has `min`, `max`, `bool_and`,
///   `bool_or` or an integer `sum` (explicitly or by `fields.default-aggregate-function`)
///   and no `ignore-retract`; `first_value`, `last_non_null_value` (the default) and the
///   others depend on order, floating-point and decimal sums are not associative or
///   overflow-checked;
/// * `partial-update`: no `partial-update.remove-record-on-delete` nor
///   `remove-record-on-sequence-group`; deletes ignored (`ignore-delete`) or, per bucket,
///   absent; every value field is either an ordering field of a sequence group (it keeps
///   the group's winning sequence) that no group protects, or protected by exactly one
///   group and aggregated with one of the functions above (a protected field without a
///   function takes the winner's value, which depends on order for equal sequences; a
///   field outside any group is a sparse overwrite). An ordering field that another group
///   also protects is refused too, though no wrong rows were found for it here (60 seeded
///   cases with the checks bypassed regrouped to the same rows): our merge takes the groups
///   in option-key order, so the field's own group decides it when it comes after the
///   protecting group and the other order is refused ("defined repeatedly"), while Java
///   takes the groups in hash order, so the same table may be read otherwise there.
///
/// # Errors
/// [`Error::Invalid`] for a malformed option value (the option itself, the merge options,
/// `changelog-producer`).
pub fn selection(schema: &TableSchema) -> Result<Selection> {
    let options = schema.core_options();
    let on = match options.get(INCREMENTAL_SELECTION).map(|v| v.trim()) {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(v) => {
            return Err(Error::invalid(format!(
                "option '{INCREMENTAL_SELECTION}' = '{v}' is not a boolean"
            )));
        }
    };
    if !on {
        return Ok(Selection::Java);
    }
    let conservative = |why: &str| Ok(Selection::Conservative(why.to_owned()));
    if options.deletion_vectors_enabled()? {
        return conservative("deletion-vector tables keep Java's selection");
    }
    let producer = options.changelog_producer()?;
    let config = MergeConfig::from_table_schema(schema)?;
    let force_lookup = options
        .get("force-lookup")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    match config.engine {
        MergeEngine::Deduplicate => {
            conservative("deduplicate tables keep Java's selection (nothing to regroup)")
        }
        MergeEngine::FirstRow => match producer {
            ChangelogProducer::None | ChangelogProducer::Lookup => {
                Ok(Selection::Incremental(Regrouping::Lookup))
            }
            _ => {
                conservative("first-row tables regroup with changelog-producer none or lookup only")
            }
        },
        MergeEngine::PartialUpdate | MergeEngine::Aggregation => {
            if producer == ChangelogProducer::Lookup || force_lookup {
                return Ok(Selection::Incremental(Regrouping::Lookup));
            }
            if producer == ChangelogProducer::FullCompaction {
                return conservative("changelog-producer = full-compaction keeps Java's selection");
            }
            match plain_regrouping(schema, &config) {
                Ok(r) => Ok(Selection::Incremental(r)),
                Err(_) if bypass() => Ok(Selection::Incremental(Regrouping::Plain {
                    int_sums: Vec::new(),
                    no_retractions: false,
                })),
                Err(why) => Ok(Selection::Conservative(why)),
            }
        }
    }
}

/// The safe-subset checks of a plain table; `Err` is the reason it is not safe.
fn plain_regrouping(
    schema: &TableSchema,
    config: &MergeConfig,
) -> std::result::Result<Regrouping, String> {
    if !config.sequence_fields.is_empty() {
        return Err(
            "sequence.field orders records globally: regrouped states would be \
                    reordered"
                .into(),
        );
    }
    if let Some(p) = schema
        .partition_keys
        .iter()
        .find(|p| !schema.primary_keys.contains(p))
    {
        return Err(format!("partition key '{p}' is not a primary key"));
    }
    let value_fields: Vec<&DataField> = schema
        .fields
        .iter()
        .filter(|f| !schema.primary_keys.contains(&f.name))
        .collect();
    let function = |f: &DataField| -> Option<String> {
        config
            .field_options
            .get(&f.name)
            .and_then(|o| o.aggregate_function.clone())
            .or_else(|| config.default_aggregate_function.clone())
            .map(|s| s.trim().to_ascii_lowercase())
    };
    let ignore_retract = |f: &DataField| {
        config
            .field_options
            .get(&f.name)
            .is_some_and(|o| o.ignore_retract)
    };
    let mut int_sums = Vec::new();
    let mut check_function = |f: &DataField| -> std::result::Result<(), String> {
        let name = function(f).unwrap_or_else(|| "last_non_null_value".to_owned());
        if ignore_retract(f) {
            return Err(format!(
                "field '{}' ignores retractions (fields.{}.ignore-retract)",
                f.name, f.name
            ));
        }
        match regroupable_function(&name, f) {
            Some(true) => {
                int_sums.push(f.clone());
                Ok(())
            }
            Some(false) => Ok(()),
            None => Err(format!(
                "field '{}' merges with '{name}' on {}, which depends on the order of \
                 records (only min, max, bool_and, bool_or and integer sum regroup)",
                f.name, f.data_type
            )),
        }
    };
    match config.engine {
        MergeEngine::Aggregation => {
            if config.aggregation_remove_record_on_delete {
                return Err("aggregation.remove-record-on-delete resets a key's state".into());
            }
            for f in &value_fields {
                check_function(f)?;
            }
            Ok(Regrouping::Plain {
                int_sums,
                no_retractions: false,
            })
        }
        MergeEngine::PartialUpdate => {
            if config.partial_update_remove_record_on_delete
                || !config
                    .partial_update_remove_record_on_sequence_group
                    .is_empty()
            {
                return Err("partial-update removes records on delete".into());
            }
            let ordering: BTreeSet<&str> = config
                .sequence_groups
                .iter()
                .flat_map(|g| g.ordering.iter().map(String::as_str))
                .collect();
            let mut protected: BTreeMap<&str, usize> = BTreeMap::new();
            for g in &config.sequence_groups {
                for p in &g.protected {
                    *protected.entry(p.as_str()).or_default() += 1;
                }
            }
            for f in &value_fields {
                let name = f.name.as_str();
                let guards = protected.get(name).copied().unwrap_or(0);
                if ordering.contains(name) {
                    if guards > 0 {
                        return Err(format!(
                            "field '{name}' is an ordering field of a sequence group and \
                             protected by another"
                        ));
                    }
                    continue;
                }
                match guards {
                    0 => {
                        return Err(format!(
                            "field '{name}' is in no sequence group (a sparse overwrite)"
                        ));
                    }
                    1 => {}
                    _ => {
                        return Err(format!(
                            "field '{name}' is protected by more than one sequence group"
                        ));
                    }
                }
                if function(f).is_none() {
                    return Err(format!(
                        "field '{name}' has no aggregate function: it takes the value of the \
                         winning record, which depends on order for equal sequences"
                    ));
                }
                check_function(f)?;
            }
            Ok(Regrouping::Plain {
                int_sums,
                no_retractions: !config.ignore_delete,
            })
        }
        _ => Err("only partial-update and aggregation regroup plain tables".into()),
    }
}

/// The per-bucket checks of [`Regrouping::Plain`] over the bucket's live `files`: every
/// partial sum of every integer-`sum` field is bounded by Σ row count × max(|min|, |max|)
/// over the files' value statistics (read with each file's schema), which must fit the
/// field's type; with `no_retractions`, no file holds a retraction. Missing statistics
/// fail the check.
///
/// # Errors
/// [`Error::Invalid`] for a file whose schema is not in `schemas`.
pub fn plain_bucket_regroups(
    regrouping: &Regrouping,
    files: &[DataFileMeta],
    current: &TableSchema,
    schemas: &BTreeMap<i64, TableSchema>,
) -> Result<bool> {
    let Regrouping::Plain {
        int_sums,
        no_retractions,
    } = regrouping
    else {
        return Ok(true);
    };
    if bypass() {
        return Ok(true);
    }
    if *no_retractions && files.iter().any(|f| f.delete_row_count != Some(0)) {
        return Ok(false);
    }
    for field in int_sums {
        let limit: i128 = match field.data_type.kind {
            TypeKind::TinyInt => i128::from(i8::MAX),
            TypeKind::SmallInt => i128::from(i16::MAX),
            TypeKind::Int => i128::from(i32::MAX),
            _ => i128::from(i64::MAX),
        };
        let mut bound: i128 = 0;
        for f in files {
            let Some(magnitude) = max_magnitude(f, field, current, schemas)? else {
                return Ok(false);
            };
            bound = bound.saturating_add(magnitude.saturating_mul(i128::from(f.row_count)));
            if bound > limit {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// max(|min|, |max|) of `field` in `file`'s value statistics; `Some(0)` when the file's
/// schema does not have the field (its values read as null) or every value is null;
/// `None` when the statistics do not say.
fn max_magnitude(
    file: &DataFileMeta,
    field: &DataField,
    current: &TableSchema,
    schemas: &BTreeMap<i64, TableSchema>,
) -> Result<Option<i128>> {
    let file_schema = if file.schema_id == current.id {
        current
    } else {
        schemas.get(&file.schema_id).ok_or_else(|| {
            Error::invalid(format!(
                "data file {} has schema id {} that was not loaded",
                file.file_name, file.schema_id
            ))
        })?
    };
    if !file_schema.fields.iter().any(|f| f.id == field.id) {
        return Ok(Some(0));
    }
    let Some(fields) = value_stats_fields(file, &file_schema.fields) else {
        return Ok(None);
    };
    let stats = &file.value_stats;
    if stats.min_values.arity() != fields.len() || stats.max_values.arity() != fields.len() {
        return Ok(None);
    }
    let Some((pos, f)) = fields.iter().enumerate().find(|(_, f)| f.id == field.id) else {
        return Ok(None);
    };
    let nulls = stats.null_counts.get(pos);
    let value = |d: Result<Datum>| -> Option<Option<i128>> {
        match d.ok()? {
            Datum::Null => Some(None),
            Datum::TinyInt(v) => Some(Some(i128::from(v))),
            Datum::SmallInt(v) => Some(Some(i128::from(v))),
            Datum::Int(v) => Some(Some(i128::from(v))),
            Datum::BigInt(v) => Some(Some(i128::from(v))),
            _ => None,
        }
    };
    let (Some(min), Some(max)) = (
        value(stats.min_values.field(pos, &f.data_type)),
        value(stats.max_values.field(pos, &f.data_type)),
    ) else {
        return Ok(None);
    };
    Ok(match (min, max) {
        (Some(a), Some(b)) => Some(a.abs().max(b.abs())),
        // No min/max: only an all-null column says nothing is summed.
        _ if nulls == Some(file.row_count) => Some(0),
        _ => None,
    })
}

/// What [`pick`] chose for one bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct IncrementalPick {
    /// The unit to run.
    pub unit: CompactUnit,
    /// The unit is not the bucket's leading runs (plain tables): runs older than some of
    /// its inputs stay in place, so the output keeps retractions whatever its level.
    pub keep_retractions: bool,
}

/// The selected and retained runs of `runs` by the size ratio of `universal`: with
/// `prefix`, the walk stops at the first retained run (which with everything after it is
/// retained); the leading level-0 runs are always selected. Returns the indexes of the
/// selected runs, ascending.
fn walk(universal: &UniversalCompaction, runs: &[LevelSortedRun], prefix: bool) -> Vec<usize> {
    let factor = (100 + universal.size_ratio + universal.off_peak_ratio) as f64 / 100.0;
    let leading = runs.iter().take_while(|r| r.level == 0).count().max(1);
    let mut selected: Vec<usize> = (0..leading.min(runs.len())).collect();
    let mut candidate: i64 = selected.iter().map(|i| runs[*i].run.total_size()).sum();
    for (i, r) in runs.iter().enumerate().skip(leading) {
        let size = r.run.total_size();
        if candidate as f64 * factor >= size as f64 {
            selected.push(i);
            candidate = candidate.saturating_add(size);
        } else if prefix {
            break;
        }
    }
    selected
}

/// Incremental selection for one bucket (normal compaction), given Java's unit `java`
/// ([`super::CompactStrategy::pick`] of the same runs). `None`: nothing to compact. See
/// the module docs for the rules; with no retained run in Java's unit, Java's unit.
pub fn pick(
    regrouping: &Regrouping,
    universal: &UniversalCompaction,
    num_levels: i32,
    runs: &[LevelSortedRun],
    java: Option<CompactUnit>,
) -> Option<IncrementalPick> {
    let java = java?;
    let lookup = matches!(regrouping, Regrouping::Lookup);
    let selected = walk(universal, runs, lookup);
    let retained: BTreeSet<&str> = runs
        .iter()
        .enumerate()
        .filter(|(i, _)| !selected.contains(i))
        .flat_map(|(_, r)| r.run.files.iter().map(|f| f.file_name.as_str()))
        .collect();
    if !java
        .files
        .iter()
        .any(|f| retained.contains(f.file_name.as_str()))
    {
        return Some(IncrementalPick {
            unit: java,
            keep_retractions: false,
        });
    }
    count_non_java_pick();
    let take = |indexes: &[usize], output_level: i32| CompactUnit {
        output_level,
        files: indexes
            .iter()
            .flat_map(|i| runs[*i].run.files.iter().cloned())
            .collect(),
        file_rewrite: false,
    };
    if lookup {
        let count = selected.len();
        if count == 1 && runs[0].level > 0 {
            return None;
        }
        let output_level = runs[count].level - 1;
        if output_level < 1 {
            // No level above the retained run: Java's forced level-0 pick (with level 1).
            return universal
                .force_pick_l0(num_levels, runs)
                .map(|unit| IncrementalPick {
                    unit,
                    keep_retractions: false,
                });
        }
        return Some(IncrementalPick {
            unit: take(&selected, output_level),
            keep_retractions: false,
        });
    }
    if selected.len() < 2 {
        return None;
    }
    let occupied: BTreeSet<i32> = runs
        .iter()
        .enumerate()
        .filter(|(i, r)| !selected.contains(i) && r.level > 0)
        .map(|(_, r)| r.level)
        .collect();
    // Every level above 0 holds retained history: Java's unit.
    let Some(output_level) = (1..num_levels).rev().find(|l| !occupied.contains(l)) else {
        return Some(IncrementalPick {
            unit: java,
            keep_retractions: false,
        });
    };
    Some(IncrementalPick {
        unit: take(&selected, output_level),
        keep_retractions: true,
    })
}

#[cfg(test)]
#[path = "incremental_tests.rs"]
mod tests;
