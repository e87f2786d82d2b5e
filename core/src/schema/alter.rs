//! Altering a table: schema changes become the next schema file, `schema/schema-<id+1>`.
//!
//! Source: Java `org.apache.paimon.schema.SchemaManager` (`commitChanges`,
//! `generateTableSchema`, `checkAlterTableOption`, `checkResetTableOption`,
//! `applyRenameColumnsToOptions`, `applyMove`), `org.apache.paimon.schema.SchemaChange`,
//! `org.apache.paimon.types.DataTypeCasts` and `org.apache.paimon.casting.CastExecutors` (which
//! column type changes are allowed), `ReassignFieldId` (ids of the fields nested in an added
//! column) and `Schema`'s key normalization.
//!
//! [`apply_schema_changes`] is pure: the latest schema and a list of [`SchemaChange`]s in, the
//! next schema out (or an error naming the column, option or types). [`alter_table_machine`]
//! reads the latest schema, applies the changes and writes the result with a create-new `Put`;
//! when another writer took that schema id first, it reads the new latest schema and applies
//! the changes again, as Java's `commitChanges` loop does.
//!
//! Design notes:
//!
//! * Changes apply in order to one working copy, and the whole list becomes **one** new
//!   schema. Rules that Java checks against the schema before the changes (partition and
//!   primary keys, the options a `SetOption` compares with) use the old schema here too.
//! * Only top-level columns can be changed (Java also takes nested paths such as `r.x`).
//! * A type change must be allowed by Paimon (Java's `DataTypeCasts.supportsCast` with
//!   explicit casts unless `disable-explicit-type-casting`, and a `CastExecutors` rule) **and**
//!   be a conversion this crate's reader performs on files written before the change
//!   ([`crate::types::cast::evolution_supported`]); the latter is an `Unsupported` error, checked only
//!   when the table has snapshots.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::io::{Io, Machine, PutMode};
use crate::scan::snapshot_resolver::{latest_snapshot_id, read_latest_schema};
use crate::schema::create::{SCHEMA_VERSION, validate_new_schema};
use crate::spec::schema::schema_path;
use crate::spec::{DataField, DataType, TableSchema, TypeKind, encode_schema};

/// Attempts of [`alter_table_machine`] when other writers keep taking the next schema id
/// (Java retries without limit).
pub const MAX_ALTER_ATTEMPTS: usize = 64;

/// Where a column goes (Java `SchemaChange.Move`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnMove {
    /// First column.
    First,
    /// Last column.
    Last,
    /// Right after the named column.
    After(String),
    /// Right before the named column.
    Before(String),
}

/// One change of a table's schema (Java `org.apache.paimon.schema.SchemaChange`, top-level
/// columns only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaChange {
    /// Set a table option (Java `SetOption`).
    SetOption {
        /// Option key.
        key: String,
        /// New value.
        value: String,
    },
    /// Remove a table option, back to its default (Java `RemoveOption`).
    RemoveOption {
        /// Option key.
        key: String,
    },
    /// Set or clear the table comment (Java `UpdateComment`).
    UpdateComment {
        /// The new comment.
        comment: Option<String>,
    },
    /// Add a nullable column with a new field id (Java `AddColumn`). Without `position` it
    /// goes last (before the partition columns when `add-column-before-partition` is set).
    AddColumn {
        /// Column name.
        name: String,
        /// Its type; must be nullable.
        data_type: DataType,
        /// Column comment.
        description: Option<String>,
        /// Where it goes.
        position: Option<ColumnMove>,
    },
    /// Rename a column; its field id stays (Java `RenameColumn`).
    RenameColumn {
        /// Current name.
        name: String,
        /// New name.
        new_name: String,
    },
    /// Drop a column (Java `DropColumn`).
    DropColumn {
        /// Column name.
        name: String,
    },
    /// Change a column's type (Java `UpdateColumnType`).
    UpdateColumnType {
        /// Column name.
        name: String,
        /// The new type.
        data_type: DataType,
        /// Keep the column's nullability instead of `data_type`'s.
        keep_nullability: bool,
    },
    /// Make a column nullable or NOT NULL (Java `UpdateColumnNullability`).
    UpdateColumnNullability {
        /// Column name.
        name: String,
        /// `true` for nullable.
        nullable: bool,
    },
    /// Set or clear a column comment (Java `UpdateColumnComment`).
    UpdateColumnComment {
        /// Column name.
        name: String,
        /// The new comment.
        comment: Option<String>,
    },
    /// Move a column (Java `UpdateColumnPosition`).
    UpdateColumnPosition {
        /// Column name.
        name: String,
        /// Where it goes.
        position: ColumnMove,
    },
}

impl SchemaChange {
    /// [`SchemaChange::SetOption`].
    pub fn set_option(key: impl Into<String>, value: impl Into<String>) -> Self {
        SchemaChange::SetOption {
            key: key.into(),
            value: value.into(),
        }
    }

    /// [`SchemaChange::RemoveOption`].
    pub fn remove_option(key: impl Into<String>) -> Self {
        SchemaChange::RemoveOption { key: key.into() }
    }

    /// [`SchemaChange::AddColumn`] at the default position, without comment.
    pub fn add_column(name: impl Into<String>, data_type: DataType) -> Self {
        SchemaChange::AddColumn {
            name: name.into(),
            data_type,
            description: None,
            position: None,
        }
    }

    /// [`SchemaChange::RenameColumn`].
    pub fn rename_column(name: impl Into<String>, new_name: impl Into<String>) -> Self {
        SchemaChange::RenameColumn {
            name: name.into(),
            new_name: new_name.into(),
        }
    }

    /// [`SchemaChange::DropColumn`].
    pub fn drop_column(name: impl Into<String>) -> Self {
        SchemaChange::DropColumn { name: name.into() }
    }

    /// [`SchemaChange::UpdateColumnType`] taking `data_type`'s nullability (Java's
    /// `updateColumnType(name, type)`).
    pub fn update_column_type(name: impl Into<String>, data_type: DataType) -> Self {
        SchemaChange::UpdateColumnType {
            name: name.into(),
            data_type,
            keep_nullability: false,
        }
    }

    /// Whether applying this change depends on the table having snapshots.
    fn needs_snapshot_check(&self) -> bool {
        matches!(
            self,
            SchemaChange::SetOption { .. }
                | SchemaChange::RemoveOption { .. }
                | SchemaChange::UpdateColumnType { .. }
        )
    }
}

/// Option keys Java never lets change once the table has snapshots (the options annotated
/// `@Immutable` in Java's `CoreOptions`).
pub const IMMUTABLE_OPTIONS: [&str; 21] = [
    "type",
    "bucket-key",
    "bucket-function.type",
    "data-file.path-directory",
    "merge-engine",
    "sequence.snapshot-ordering",
    "aggregation.remove-record-on-delete",
    "partial-update.remove-record-on-delete",
    "partial-update.remove-record-on-sequence-group",
    "rowkind.field",
    "primary-key",
    "partition",
    "dynamic-bucket.initial-buckets",
    "force-lookup",
    "row-tracking.enabled",
    "data-evolution.enabled",
    "index-file-in-data-file-dir",
    "blob-field",
    "blob-descriptor-field",
    "blob-view-field",
    "pk-clustering-override",
];

/// Java's `Boolean.parseBoolean`: `true` (any case) is true, anything else false.
fn java_bool(v: Option<&String>, default: bool) -> bool {
    v.map_or(default, |v| v.eq_ignore_ascii_case("true"))
}

fn not_found(name: &str, fields: &[DataField]) -> Error {
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    Error::invalid(format!(
        "column '{name}' does not exist in the table (columns: {names:?})"
    ))
}

fn index_of(fields: &[DataField], name: &str) -> Option<usize> {
    fields.iter().position(|f| f.name == name)
}

fn field_mut<'a>(fields: &'a mut [DataField], name: &str) -> Result<&'a mut DataField> {
    match index_of(fields, name) {
        Some(i) => Ok(&mut fields[i]),
        None => Err(not_found(name, fields)),
    }
}

fn assert_not_exists(fields: &[DataField], name: &str) -> Result<()> {
    if index_of(fields, name).is_some() {
        return Err(Error::invalid(format!(
            "column '{name}' already exists in the table"
        )));
    }
    Ok(())
}

/// Comma-separated key list as Java's `Schema` normalizes the `primary-key` / `partition`
/// options.
fn key_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Java `SchemaManager.isUnchangedNormalizedKey`: setting `type` to its current value (case
/// insensitive; unset is `table`), or `primary-key` / `partition` to the keys the schema
/// already has, changes nothing.
fn unchanged_normalized_key(
    key: &str,
    old: Option<&String>,
    new: &str,
    schema: &TableSchema,
) -> bool {
    if key == "type" {
        return new.eq_ignore_ascii_case(old.map_or("table", String::as_str));
    }
    if old.is_some() {
        return false;
    }
    match key {
        "primary-key" => key_list(new) == schema.primary_keys,
        "partition" => key_list(new) == schema.partition_keys,
        _ => false,
    }
}

/// Java `SchemaManager.checkAlterTableOption` (applied when the table has snapshots).
fn check_alter_option(
    options: &BTreeMap<String, String>,
    key: &str,
    old: Option<&String>,
    new: &str,
) -> Result<()> {
    if IMMUTABLE_OPTIONS.contains(&key) {
        return Err(Error::invalid(format!(
            "option '{key}' cannot be changed on a table that has snapshots"
        )));
    }
    match key {
        "bucket" => {
            let parse = |v: &str| {
                v.trim().parse::<i32>().map_err(|_| {
                    Error::invalid(format!("option 'bucket' = '{v}' is not an integer"))
                })
            };
            let old_bucket = old.map(|v| parse(v)).transpose()?.unwrap_or(-1);
            let new_bucket = parse(new)?;
            if old_bucket == -1 {
                return Err(Error::invalid(
                    "option 'bucket' cannot be changed when it is -1 (dynamic or unaware \
                     buckets) on a table that has snapshots",
                ));
            }
            if new_bucket == -1 {
                return Err(Error::invalid(
                    "option 'bucket' cannot be changed to -1 on a table that has snapshots",
                ));
            }
        }
        "deletion-vectors.enabled" => {
            let modifiable = java_bool(options.get("deletion-vectors.modifiable"), false);
            let (was, will) = (java_bool(old, false), new.eq_ignore_ascii_case("true"));
            if !modifiable && was != will {
                return Err(Error::invalid(format!(
                    "option 'deletion-vectors.enabled' cannot change from {was} to {will} on a \
                     table that has snapshots (rows could be duplicated without a full \
                     compaction); set 'deletion-vectors.modifiable' = 'true' to allow it"
                )));
            }
        }
        "ignore-delete" | "ignore-update-before"
            if java_bool(old, false) && !new.eq_ignore_ascii_case("true") =>
        {
            return Err(Error::invalid(format!(
                "option '{key}' cannot change from true to false"
            )));
        }
        "clustering.columns" if options.contains_key("pk-clustering-override") => {
            return Err(Error::invalid(
                "option 'clustering.columns' cannot change when 'pk-clustering-override' is set",
            ));
        }
        _ => {}
    }
    Ok(())
}

/// Java `SchemaManager.checkResetTableOption` (applied when the table has snapshots).
fn check_reset_option(options: &BTreeMap<String, String>, key: &str) -> Result<()> {
    if IMMUTABLE_OPTIONS.contains(&key) {
        return Err(Error::invalid(format!(
            "option '{key}' cannot be changed on a table that has snapshots"
        )));
    }
    if key == "bucket" {
        return Err(Error::invalid(
            "option 'bucket' cannot be reset on a table that has snapshots",
        ));
    }
    if key == "clustering.columns" && options.contains_key("pk-clustering-override") {
        return Err(Error::invalid(
            "option 'clustering.columns' cannot be reset when 'pk-clustering-override' is set",
        ));
    }
    Ok(())
}

/// Java `assertNullabilityChange`: NULL → NOT NULL only when
/// `alter-column-null-to-not-null.disabled` is false.
fn check_nullability_change(was: bool, will: bool, name: &str, disabled: bool) -> Result<()> {
    if disabled && was && !will {
        return Err(Error::invalid(format!(
            "column '{name}' cannot change from nullable to NOT NULL; set table option \
             'alter-column-null-to-not-null.disabled' = 'false' to allow it"
        )));
    }
    Ok(())
}

/// Give the fields nested in an added column's type new ids after `highest`, as Java's
/// `ReassignFieldId` does: a row's fields in order, each after the fields nested in its own
/// type.
fn reassign_ids(t: &DataType, highest: &mut i32) -> DataType {
    let kind = match &t.kind {
        TypeKind::Array(e) => TypeKind::Array(Box::new(reassign_ids(e, highest))),
        TypeKind::Multiset(e) => TypeKind::Multiset(Box::new(reassign_ids(e, highest))),
        TypeKind::Vector { element, length } => TypeKind::Vector {
            element: Box::new(reassign_ids(element, highest)),
            length: *length,
        },
        TypeKind::Map(k, v) => {
            let k = reassign_ids(k, highest);
            let v = reassign_ids(v, highest);
            TypeKind::Map(Box::new(k), Box::new(v))
        }
        TypeKind::Row(fields) => TypeKind::Row(
            fields
                .iter()
                .map(|f| {
                    let data_type = reassign_ids(&f.data_type, highest);
                    *highest += 1;
                    DataField {
                        id: *highest,
                        data_type,
                        ..f.clone()
                    }
                })
                .collect(),
        ),
        other => other.clone(),
    };
    DataType {
        nullable: t.nullable,
        kind,
    }
}

/// Java's `DataTypeRoot` families, as used by the cast rules.
mod family {
    use crate::spec::TypeKind;

    pub(super) fn char_string(t: &TypeKind) -> bool {
        matches!(t, TypeKind::Char { .. } | TypeKind::VarChar { .. })
    }
    pub(super) fn binary_string(t: &TypeKind) -> bool {
        matches!(t, TypeKind::Binary { .. } | TypeKind::VarBinary { .. })
    }
    pub(super) fn integer(t: &TypeKind) -> bool {
        matches!(
            t,
            TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::BigInt
        )
    }
    pub(super) fn approximate(t: &TypeKind) -> bool {
        matches!(t, TypeKind::Float | TypeKind::Double)
    }
    pub(super) fn numeric(t: &TypeKind) -> bool {
        integer(t) || approximate(t) || matches!(t, TypeKind::Decimal { .. })
    }
    pub(super) fn timestamp(t: &TypeKind) -> bool {
        matches!(
            t,
            TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. }
        )
    }
    pub(super) fn time(t: &TypeKind) -> bool {
        matches!(t, TypeKind::Time { .. })
    }
    pub(super) fn datetime(t: &TypeKind) -> bool {
        timestamp(t) || time(t) || matches!(t, TypeKind::Date)
    }
    pub(super) fn constructed(t: &TypeKind) -> bool {
        matches!(
            t,
            TypeKind::Array(_)
                | TypeKind::Vector { .. }
                | TypeKind::Multiset(_)
                | TypeKind::Map(..)
                | TypeKind::Row(_)
        )
    }
    pub(super) fn predefined(t: &TypeKind) -> bool {
        !constructed(t) && !matches!(t, TypeKind::Other(_))
    }
    /// Same `DataTypeRoot` (parameters aside).
    pub(super) fn same_root(a: &TypeKind, b: &TypeKind) -> bool {
        std::mem::discriminant(a) == std::mem::discriminant(b)
    }
}

/// Java `DataTypeCasts.supportsCast(source, target, allow_explicit)`: identical types (up to
/// nullability), the implicit (widening) casts, and with `allow_explicit` the SQL `CAST`s. A
/// nullable source cannot become NOT NULL without `allow_explicit`.
pub fn supports_cast(source: &DataType, target: &DataType, allow_explicit: bool) -> bool {
    use family::*;
    if source.nullable && !target.nullable && !allow_explicit {
        return false;
    }
    if source.kind == target.kind {
        return true;
    }
    let (s, t) = (&source.kind, &target.kind);
    let ts_or_bool = |s: &TypeKind| timestamp(s) || matches!(s, TypeKind::Boolean);
    let (implicit, explicit) = match t {
        TypeKind::Char { .. } => (
            matches!(s, TypeKind::Char { .. }),
            predefined(s) || constructed(s),
        ),
        TypeKind::VarChar { .. } => (char_string(s), predefined(s) || constructed(s)),
        TypeKind::Boolean => (false, char_string(s) || integer(s)),
        TypeKind::Binary { .. } => (
            matches!(s, TypeKind::Binary { .. }),
            char_string(s) || matches!(s, TypeKind::VarBinary { .. }),
        ),
        TypeKind::VarBinary { .. } => (binary_string(s), char_string(s)),
        TypeKind::Decimal { .. } => (numeric(s), char_string(s) || ts_or_bool(s)),
        TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::BigInt => {
            let rank = |k: &TypeKind| match k {
                TypeKind::TinyInt => 1,
                TypeKind::SmallInt => 2,
                TypeKind::Int => 3,
                TypeKind::BigInt => 4,
                _ => 0,
            };
            (
                integer(s) && rank(s) <= rank(t),
                numeric(s) || char_string(s) || ts_or_bool(s),
            )
        }
        TypeKind::Float => (
            integer(s) || matches!(s, TypeKind::Float | TypeKind::Decimal { .. }),
            numeric(s) || char_string(s) || ts_or_bool(s),
        ),
        TypeKind::Double => (numeric(s), char_string(s) || ts_or_bool(s)),
        TypeKind::Date => (
            matches!(s, TypeKind::Date | TypeKind::Timestamp { .. }),
            timestamp(s) || char_string(s),
        ),
        TypeKind::Time { .. } => (
            matches!(s, TypeKind::Time { .. } | TypeKind::Timestamp { .. }),
            time(s) || timestamp(s) || char_string(s),
        ),
        TypeKind::Timestamp { .. } | TypeKind::LocalZonedTimestamp { .. } => {
            (timestamp(s), datetime(s) || char_string(s) || numeric(s))
        }
        _ => (false, false),
    };
    // Every root casts implicitly to itself (other parameters, e.g. VARCHAR(10) → (20)).
    implicit || same_root(s, t) || allow_explicit && explicit
}

/// Whether Java's `CastExecutors.resolve(source, target)` returns an executor: the conversion
/// Java runs on values written before the change ([`crate::types::cast::has_cast_executor`],
/// the same rules the reader applies).
pub fn has_cast_rule(source: &DataType, target: &DataType) -> bool {
    crate::types::cast::has_cast_executor(source, target)
}

/// Whether this crate's reader converts values of files written with `source` to `target`
/// ([`crate::types::cast::evolution_supported`]).
fn reader_converts(source: &DataType, target: &DataType) -> bool {
    crate::types::cast::evolution_supported(source, target)
}

/// Java `SchemaManager.applyMove`.
fn apply_move(fields: &mut Vec<DataField>, name: &str, position: &ColumnMove) -> Result<()> {
    let from = index_of(fields, name).ok_or_else(|| not_found(name, fields))?;
    let itself = || Error::invalid(format!("cannot move column '{name}' relative to itself"));
    let reference = |r: &str| {
        let i = index_of(fields, r).ok_or_else(|| not_found(r, fields))?;
        if i == from {
            return Err(itself());
        }
        Ok(i)
    };
    let to = match position {
        ColumnMove::First => {
            if from == 0 {
                return Err(itself());
            }
            0
        }
        ColumnMove::Last => {
            if from == fields.len() - 1 {
                return Err(itself());
            }
            fields.len() - 1
        }
        ColumnMove::After(r) => {
            let r = reference(r)?;
            if from > r { r + 1 } else { r }
        }
        ColumnMove::Before(r) => {
            let r = reference(r)?;
            if from < r { r - 1 } else { r }
        }
    };
    let field = fields.remove(from);
    fields.insert(to.min(fields.len()), field);
    Ok(())
}

/// Java `applyNotNestedColumnRename`: each name mapped once through the renames of the change
/// list (old name → new name; a later rename of the same old name wins).
fn rename_list<'a>(
    names: impl IntoIterator<Item = &'a str>,
    renames: &BTreeMap<String, String>,
) -> Vec<String> {
    names
        .into_iter()
        .map(|n| renames.get(n).cloned().unwrap_or_else(|| n.to_owned()))
        .collect()
}

/// Option keys `fields.<name>.<suffix>` that follow a column rename (Java
/// `applyRenameColumnsToOptions`, case 2).
const RENAMED_FIELD_OPTION_SUFFIXES: [&str; 7] = [
    "aggregate-function",
    "ignore-retract",
    "distinct",
    "list-agg-delimiter",
    "map.storage-layout",
    "map.shared-shredding.max-columns",
    "map.shared-shredding.column-placement-policy",
];

/// Java `applyRenameColumnsToOptions`: `bucket-key` and `sequence.field` values,
/// `fields.<name>.<suffix>` keys, and both key and value of `fields.<names>.sequence-group` /
/// `fields.<names>.nested-key`.
fn rename_in_options(
    options: BTreeMap<String, String>,
    renames: &[(String, String)],
) -> BTreeMap<String, String> {
    if renames.is_empty() {
        return options;
    }
    let mapping: BTreeMap<String, String> = renames.iter().cloned().collect();
    let mut out = options.clone();
    for key in ["bucket-key", "sequence.field"] {
        if let Some(v) = options.get(key).filter(|v| !v.trim().is_empty()) {
            out.insert(
                key.to_owned(),
                rename_list(v.split(','), &mapping).join(","),
            );
        }
    }
    for (old, new) in renames {
        for suffix in RENAMED_FIELD_OPTION_SUFFIXES {
            if let Some(v) = out.remove(&format!("fields.{old}.{suffix}")) {
                out.insert(format!("fields.{new}.{suffix}"), v);
            }
        }
    }
    for key in options.keys() {
        let Some(rest) = key.strip_prefix("fields.") else {
            continue;
        };
        let Some(names) = ["sequence-group", "nested-key"]
            .iter()
            .find_map(|s| rest.strip_suffix(s)?.strip_suffix('.').map(|n| (n, *s)))
        else {
            continue;
        };
        let (names, suffix) = names;
        if let Some(value) = out.remove(key) {
            let names = rename_list(names.split(','), &mapping).join(",");
            let value = rename_list(value.split(','), &mapping).join(",");
            out.insert(format!("fields.{names}.{suffix}"), value);
        }
    }
    out
}

/// `primary-key` / `partition` given as options become the schema's key lists (Java `Schema`
/// normalization); defining them both ways is an error.
fn keys_from_option(
    keys: &[String],
    options: &mut BTreeMap<String, String>,
    option: &str,
) -> Result<Vec<String>> {
    let Some(raw) = options.remove(option) else {
        return Ok(keys.to_vec());
    };
    if !keys.is_empty() {
        return Err(Error::invalid(format!(
            "cannot set option '{option}': the table already defines its {}",
            if option == "partition" {
                "partition keys"
            } else {
                "primary key"
            }
        )));
    }
    Ok(key_list(&raw))
}

/// Apply `changes` to `old` (the table's latest schema) and return the next schema (id + 1,
/// created at `time_millis`), mirroring Java's `SchemaManager.generateTableSchema`.
/// `has_snapshots` says whether the table has a snapshot (option changes are then checked as
/// Java's `checkAlterTableOption` / `checkResetTableOption` do).
///
/// Rules:
/// * options: `type` and `path` never change; with snapshots, the options of
///   [`IMMUTABLE_OPTIONS`] cannot change, `bucket` cannot change from or to -1 nor be reset,
///   `deletion-vectors.enabled` changes only with `deletion-vectors.modifiable`,
///   `ignore-delete` / `ignore-update-before` cannot go back from true. Setting
///   `primary-key` / `partition` to the current keys is a no-op.
/// * add column: nullable only, a new name; field id `highestFieldId + 1` (nested fields
///   after it); `FIRST` / `AFTER c` / `BEFORE c` / `LAST`.
/// * rename: not a partition column nor a BLOB column; primary keys, `bucket-key`,
///   `sequence.field` and the `fields.<name>.*` options follow.
/// * drop: not a partition or primary key column, not the last column.
/// * type: not a partition or primary key column nor BLOB; the cast must be allowed (see
///   [`supports_cast`], [`has_cast_rule`]); NULL → NOT NULL only when
///   `alter-column-null-to-not-null.disabled` = false. With snapshots, this reader must also
///   convert old files (else `Unsupported`).
/// * nullability: a primary key column stays NOT NULL; NULL → NOT NULL as for types.
///
/// The result then passes [`validate_new_schema`] (keys exist, bucket keys, `sequence.field`
/// columns exist, ...).
///
/// # Errors
/// [`Error::Invalid`] naming the column, option or types of the change that breaks a rule;
/// [`Error::Unsupported`] for a type change this reader cannot apply to old files.
pub fn apply_schema_changes(
    old: &TableSchema,
    changes: &[SchemaChange],
    has_snapshots: bool,
    time_millis: i64,
) -> Result<TableSchema> {
    let old_options = &old.options;
    let disable_null_to_not_null = java_bool(
        old_options.get("alter-column-null-to-not-null.disabled"),
        true,
    );
    let allow_explicit_cast = !java_bool(old_options.get("disable-explicit-type-casting"), false);
    let add_before_partition = java_bool(old_options.get("add-column-before-partition"), false);
    let mut options = old_options.clone();
    let mut fields = old.fields.clone();
    let mut highest = old.highest_field_id;
    let mut comment = old.comment.clone();
    let mut renames: Vec<(String, String)> = Vec::new();
    let is_partition = |n: &str| old.partition_keys.iter().any(|k| k == n);
    let is_primary = |n: &str| old.primary_keys.iter().any(|k| k == n);

    for change in changes {
        match change {
            SchemaChange::SetOption { key, value } => {
                let was = old_options.get(key);
                let unchanged =
                    was == Some(value) || unchanged_normalized_key(key, was, value, old);
                if unchanged {
                    continue;
                }
                if key == "type" {
                    return Err(Error::invalid("option 'type' cannot be changed"));
                }
                if key.eq_ignore_ascii_case("path") {
                    return Err(Error::invalid("option 'path' cannot be changed"));
                }
                if has_snapshots {
                    check_alter_option(old_options, key, was, value)?;
                }
                options.insert(key.clone(), value.clone());
            }
            SchemaChange::RemoveOption { key } => {
                if key == "type" {
                    return Err(Error::invalid("option 'type' cannot be changed"));
                }
                if key.eq_ignore_ascii_case("path") {
                    return Err(Error::invalid("option 'path' cannot be changed"));
                }
                if has_snapshots {
                    check_reset_option(old_options, key)?;
                }
                options.remove(key);
            }
            SchemaChange::UpdateComment { comment: c } => comment.clone_from(c),
            SchemaChange::AddColumn {
                name,
                data_type,
                description,
                position,
            } => {
                if !data_type.nullable {
                    return Err(Error::invalid(format!(
                        "column '{name}' cannot be added as NOT NULL ({data_type}): columns \
                         added to a table are nullable"
                    )));
                }
                assert_not_exists(&fields, name)?;
                highest += 1;
                let id = highest;
                let data_type = reassign_ids(data_type, &mut highest);
                let field = DataField {
                    id,
                    name: name.clone(),
                    data_type,
                    description: description.clone(),
                    default_value: None,
                };
                let at = match position {
                    Some(ColumnMove::First) => 0,
                    Some(ColumnMove::Last) => fields.len(),
                    Some(ColumnMove::After(r)) => {
                        index_of(&fields, r).ok_or_else(|| not_found(r, &fields))? + 1
                    }
                    Some(ColumnMove::Before(r)) => {
                        index_of(&fields, r).ok_or_else(|| not_found(r, &fields))?
                    }
                    None if add_before_partition && !old.partition_keys.is_empty() => fields
                        .iter()
                        .position(|f| is_partition(&f.name))
                        .unwrap_or(fields.len()),
                    None => fields.len(),
                };
                fields.insert(at, field);
            }
            SchemaChange::RenameColumn { name, new_name } => {
                if is_partition(name) {
                    return Err(Error::invalid(format!(
                        "cannot rename partition column '{name}'"
                    )));
                }
                let field = index_of(&fields, name)
                    .map(|i| &fields[i])
                    .ok_or_else(|| not_found(name, &fields))?;
                if field.data_type.kind == TypeKind::Blob {
                    return Err(Error::invalid(format!(
                        "cannot rename BLOB column '{name}'"
                    )));
                }
                assert_not_exists(&fields, new_name)?;
                field_mut(&mut fields, name)?.name.clone_from(new_name);
                renames.push((name.clone(), new_name.clone()));
            }
            SchemaChange::DropColumn { name } => {
                if is_partition(name) || is_primary(name) {
                    return Err(Error::invalid(format!(
                        "cannot drop column '{name}': it is a {} key",
                        if is_partition(name) {
                            "partition"
                        } else {
                            "primary"
                        }
                    )));
                }
                let i = index_of(&fields, name).ok_or_else(|| not_found(name, &fields))?;
                fields.remove(i);
                if fields.is_empty() {
                    return Err(Error::invalid(format!(
                        "cannot drop column '{name}': a table needs at least one column"
                    )));
                }
            }
            SchemaChange::UpdateColumnType {
                name,
                data_type,
                keep_nullability,
            } => {
                if is_partition(name) || is_primary(name) {
                    return Err(Error::invalid(format!(
                        "cannot change the type of column '{name}': it is a {} key",
                        if is_partition(name) {
                            "partition"
                        } else {
                            "primary"
                        }
                    )));
                }
                let field = field_mut(&mut fields, name)?;
                let source = field.data_type.clone();
                if source.kind == TypeKind::Blob || data_type.kind == TypeKind::Blob {
                    return Err(Error::invalid(format!(
                        "cannot change the type of column '{name}' from {source} to \
                         {data_type}: BLOB types cannot change"
                    )));
                }
                let target = if *keep_nullability {
                    data_type.with_nullable(source.nullable)
                } else {
                    check_nullability_change(
                        source.nullable,
                        data_type.nullable,
                        name,
                        disable_null_to_not_null,
                    )?;
                    data_type.clone()
                };
                if !(supports_cast(&source, &target, allow_explicit_cast)
                    && has_cast_rule(&source, &target))
                {
                    return Err(Error::invalid(format!(
                        "cannot change the type of column '{name}' from {source} to {target}: \
                         Paimon does not convert {source} values to {target}{}",
                        if allow_explicit_cast {
                            ""
                        } else {
                            " without explicit casts ('disable-explicit-type-casting' is set)"
                        }
                    )));
                }
                if has_snapshots && !reader_converts(&source, &target) {
                    return Err(Error::unsupported(format!(
                        "changing the type of column '{name}' from {source} to {target}: this \
                         reader cannot convert the values of files written before the change"
                    )));
                }
                field.data_type = target;
            }
            SchemaChange::UpdateColumnNullability { name, nullable } => {
                if *nullable && is_primary(name) {
                    return Err(Error::invalid(format!(
                        "primary key column '{name}' cannot become nullable"
                    )));
                }
                let field = field_mut(&mut fields, name)?;
                check_nullability_change(
                    field.data_type.nullable,
                    *nullable,
                    name,
                    disable_null_to_not_null,
                )?;
                field.data_type = field.data_type.with_nullable(*nullable);
            }
            SchemaChange::UpdateColumnComment { name, comment } => {
                field_mut(&mut fields, name)?
                    .description
                    .clone_from(comment);
            }
            SchemaChange::UpdateColumnPosition { name, position } => {
                apply_move(&mut fields, name, position)?;
            }
        }
    }

    let mapping: BTreeMap<String, String> = renames.iter().cloned().collect();
    let mut options = rename_in_options(options, &renames);
    let primary_keys = rename_list(old.primary_keys.iter().map(String::as_str), &mapping);
    let partition_keys = keys_from_option(&old.partition_keys, &mut options, "partition")?;
    let primary_keys = keys_from_option(&primary_keys, &mut options, "primary-key")?;
    for f in &mut fields {
        if primary_keys.contains(&f.name) && f.data_type.nullable {
            f.data_type = f.data_type.with_nullable(false);
        }
    }
    let schema = TableSchema {
        version: SCHEMA_VERSION,
        id: old.id + 1,
        fields,
        highest_field_id: highest,
        partition_keys,
        primary_keys,
        options,
        comment,
        time_millis,
        raw_json: None,
    };
    validate_new_schema(&schema)?;
    Ok(schema)
}

/// Alter the table at the IO root: apply `changes` to its latest schema and write the result
/// as the next schema file; emits the new schema.
///
/// Rounds: `List schema/` (or `Head` probes without listing) and `Read schema/schema-<n>`;
/// when a change depends on it (options, column types), whether a snapshot exists (see
/// [`latest_snapshot_id`]), once; then `Put schema/schema-<n+1>` create-new. An
/// `AlreadyExists` answer (another writer took id `n+1`) starts over from the new latest
/// schema, at most [`MAX_ALTER_ATTEMPTS`] times.
///
/// # Errors
/// [`Error::Invalid`] "no table" without a schema file; the errors of
/// [`apply_schema_changes`]; [`Error::Invalid`] when every attempt lost its race; IO errors.
pub fn alter_table_machine(changes: Vec<SchemaChange>, time_millis: i64) -> Machine<TableSchema> {
    Machine::once("alter table", move |io: Io<TableSchema>| async move {
        alter_table(&io, &changes, time_millis).await
    })
}

/// The operation of [`alter_table_machine`], on any [`Io`].
///
/// # Errors
/// As [`alter_table_machine`].
pub async fn alter_table<T>(
    io: &Io<T>,
    changes: &[SchemaChange],
    time_millis: i64,
) -> Result<TableSchema> {
    let needs_snapshots = changes.iter().any(SchemaChange::needs_snapshot_check);
    let mut has_snapshots: Option<bool> = None;
    for _ in 0..MAX_ALTER_ATTEMPTS {
        let check_snapshots = needs_snapshots && has_snapshots.is_none();
        let (old, latest_snapshot) =
            futures_util::future::try_join(read_latest_schema(io), async {
                if check_snapshots {
                    latest_snapshot_id(io).await
                } else {
                    Ok(None)
                }
            })
            .await?;
        let old =
            old.ok_or_else(|| Error::invalid("no table here: schema/ holds no schema file"))?;
        if check_snapshots {
            has_snapshots = Some(latest_snapshot.is_some());
        }
        let new = apply_schema_changes(&old, changes, has_snapshots.unwrap_or(false), time_millis)?;
        let bytes = encode_schema(&new)?;
        if io
            .put(&schema_path(new.id), bytes.into(), PutMode::CreateNew)
            .await?
        {
            return Ok(new);
        }
    }
    Err(Error::invalid(format!(
        "altering the table lost the race for the next schema id {MAX_ALTER_ATTEMPTS} times in \
         a row"
    )))
}

#[cfg(test)]
mod tests;
