//! Schema rules for BLOB columns, checked when a table is created or altered.
//!
//! A column is *BLOB-file-shaped* when its type is `BLOB`, `ARRAY<BLOB>` or `MAP<K, BLOB>`
//! (Java `BlobType.isBlobFileField`). Such a column is stored either
//!
//! * inline in the data file: named in `blob-descriptor-field` (fallback key
//!   `blob.stored-descriptor-fields`) or `blob-view-field`, scalar `BLOB` only; or
//! * in `.blob` files (append tables with data evolution), or, in primary-key tables, as a
//!   *managed* BLOB: payloads copied to `.managed.blob` packs, descriptors in the data file.
//!
//! [`validate_blob_fields`] applies every BLOB rule of Java's `SchemaValidation`
//! (`spec/managed-blob.md` §7), with Java's messages:
//!
//! | rule | tables |
//! |---|---|
//! | `fields.<a,b>.sequence-group` ordering fields contain no BLOB anywhere in their type | partial-update |
//! | BLOB only as top-level `BLOB`, `ARRAY<BLOB>`, `MAP<K, BLOB>` (shared-shredding maps hold none) | all |
//! | `blob-field` names BLOB-file-shaped columns | all |
//! | `blob-descriptor-field` / `blob-view-field` name scalar `BLOB` columns, disjoint | all |
//! | managed fields are not primary, bucket or sequence keys | primary key |
//! | merge engine deduplicate, partial-update or first-row; changelog-producer none; no `data-file.external-paths` (even empty); no `pk-clustering-override` | primary key with a managed field |
//! | partial-update without ignore-delete: a managed field protected by a sequence group uses no aggregate function, `last_value`, or `fields.<f>.ignore-retract = true` | primary key with a managed field |
//! | append tables need data evolution (which needs row tracking); other columns exist; no BLOB-file-shaped partition key | all with a BLOB-file-shaped column |
//!
//! Java 2.0.0 is stricter than the rules above (Java's main line after 2.0, which the spec
//! follows): it allows only the deduplicate merge engine for managed BLOBs and does not check
//! sequence-group ordering fields or aggregate functions.
//!
//! Source: Java `org.apache.paimon.schema.SchemaValidation` (`validateSequenceGroupOrderingFields`,
//! `validateBlobFields`, `validateBlobNesting`, `validateBlobDescriptorFields`,
//! `validateBlobViewFields`, `validatePrimaryKeyBlobKeyConfiguration`,
//! `validatePrimaryKeyBlobConfiguration`, the BLOB part of `validateRowTracking`),
//! `org.apache.paimon.types.BlobType` (`isBlobFileField`, `fieldNamesInBlobFile`).

use crate::error::{Error, Result};
use crate::spec::external_paths::DATA_FILE_EXTERNAL_PATHS;
use crate::spec::options::{CHANGELOG_PRODUCER, MERGE_ENGINE};
use crate::spec::{
    ChangelogProducer, CoreOptions, DataField, DataType, MergeEngine, TableSchema, TypeKind,
};

/// `blob-field`: BLOB columns stored in `.blob` files / managed packs.
pub const BLOB_FIELD: &str = "blob-field";
/// `blob-descriptor-field`: scalar BLOB columns holding descriptor bytes inline.
pub const BLOB_DESCRIPTOR_FIELD: &str = "blob-descriptor-field";
/// Fallback key of [`BLOB_DESCRIPTOR_FIELD`].
pub const BLOB_DESCRIPTOR_FIELD_FALLBACK: &str = "blob.stored-descriptor-fields";
/// `blob-view-field`: scalar BLOB columns holding blob view structs inline.
pub const BLOB_VIEW_FIELD: &str = "blob-view-field";
/// `pk-clustering-override`, default false.
pub const PK_CLUSTERING_OVERRIDE: &str = "pk-clustering-override";

/// Whether a column of type `ty` is BLOB-file-shaped: `BLOB`, `ARRAY<BLOB>` or
/// `MAP<K, BLOB>` (nullability ignored).
///
/// Source: Java `BlobType.isBlobFileField`.
pub fn is_blob_file_field(ty: &DataType) -> bool {
    match &ty.kind {
        TypeKind::Blob => true,
        TypeKind::Array(e) => e.is_blob(),
        TypeKind::Map(_, v) => v.is_blob(),
        _ => false,
    }
}

/// Whether `ty` holds a `BLOB` anywhere (itself, elements, map keys and values, row fields).
pub fn contains_blob(ty: &DataType) -> bool {
    match &ty.kind {
        TypeKind::Blob => true,
        TypeKind::Array(e) | TypeKind::Multiset(e) => contains_blob(e),
        TypeKind::Vector { element, .. } => contains_blob(element),
        TypeKind::Map(k, v) => contains_blob(k) || contains_blob(v),
        TypeKind::Row(fields) => fields.iter().any(|f| contains_blob(&f.data_type)),
        _ => false,
    }
}

/// Split like Java's `String.split(",")`: trailing empty strings are dropped (`"a,"` → `[a]`,
/// `""` → `[""]`).
fn java_split(s: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(',').collect();
    while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    if parts == [""] && !s.is_empty() {
        // Only commas: Java returns an empty array.
        parts.clear();
    }
    parts
}

/// A comma-separated option as a set of trimmed, non-empty names in first-seen order (Java
/// `CoreOptions#parseCommaSeparatedSet`); the first of `keys` that is set wins.
pub(crate) fn comma_set(options: &CoreOptions, keys: &[&str]) -> Vec<String> {
    let Some(raw) = keys.iter().find_map(|k| options.get(k)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for name in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// The names of `blob-descriptor-field` (or its fallback key `blob.stored-descriptor-fields`)
/// and `blob-view-field`: the BLOB columns stored inline in the data file (Java
/// `CoreOptions#blobInlineField`).
pub fn blob_inline_fields(options: &CoreOptions) -> Vec<String> {
    let mut out = comma_set(
        options,
        &[BLOB_DESCRIPTOR_FIELD, BLOB_DESCRIPTOR_FIELD_FALLBACK],
    );
    for v in comma_set(options, &[BLOB_VIEW_FIELD]) {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The managed BLOB fields of a primary-key table, in column order: BLOB-file-shaped columns
/// not stored inline ([`blob_inline_fields`]). Empty for append tables (their BLOB columns go
/// to `.blob` files, not managed packs).
///
/// Source: Java `BlobType.fieldNamesInBlobFile(rowType, options.blobInlineField())` as used
/// by `PrimaryKeyBlobExternalizer` and `SchemaValidation`.
pub fn managed_blob_fields(schema: &TableSchema) -> Vec<&DataField> {
    if schema.primary_keys.is_empty() {
        return Vec::new();
    }
    let inline = blob_inline_fields(&schema.core_options());
    schema
        .fields
        .iter()
        .filter(|f| is_blob_file_field(&f.data_type) && !inline.contains(&f.name))
        .collect()
}

fn parse_bool(options: &CoreOptions, key: &str) -> Result<bool> {
    match options.get(key) {
        None => Ok(false),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(Error::invalid(format!(
            "invalid value '{v}' for option '{key}': expected true or false"
        ))),
    }
}

fn java_list(names: &[&str]) -> String {
    format!("[{}]", names.join(", "))
}

/// Check every BLOB rule of Java's `SchemaValidation` on a new or altered schema (see the
/// module docs for the list). Tables without BLOB columns and without partial-update
/// sequence groups pass untouched.
///
/// # Errors
/// [`Error::Invalid`] with Java's message, naming the rule, the option and the column (e.g.
/// "Managed BLOB fields cannot be primary keys: \[payload\].", "Primary-key managed BLOB tables
/// do not support 'data-file.external-paths'.") or an invalid option value it had to read.
pub fn validate_blob_fields(schema: &TableSchema) -> Result<()> {
    let options = schema.core_options();
    validate_sequence_group_ordering_fields(schema, &options)?;
    validate_blob_nesting(schema, &options)?;
    validate_blob_field_option(schema, &options)?;
    validate_inline_fields(schema, &options)?;
    let managed: Vec<&str> = managed_blob_fields(schema)
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    if !managed.is_empty() {
        validate_primary_key_blob_keys(schema, &options, &managed)?;
        validate_primary_key_blob_configuration(&options, &managed)?;
    }
    validate_blob_table_shape(schema, &options)
}

/// Partial-update only: fields ordering a sequence group (`fields.<a,b>.sequence-group`) must
/// exist and hold no BLOB.
fn validate_sequence_group_ordering_fields(
    schema: &TableSchema,
    options: &CoreOptions,
) -> Result<()> {
    if options.merge_engine()? != MergeEngine::PartialUpdate {
        return Ok(());
    }
    for key in options.map().keys() {
        // Java `isSequenceGroupOptionCandidate`, then `sequenceGroupOrderingFields`.
        if !(key.starts_with("fields") && key.ends_with("sequence-group")) {
            continue;
        }
        let inner = key
            .strip_prefix("fields.")
            .and_then(|r| r.strip_suffix(".sequence-group"))
            .ok_or_else(|| Error::invalid(format!("Invalid sequence-group option: {key}")))?;
        for name in java_split(inner) {
            let field = schema
                .field(name)
                .ok_or_else(|| Error::invalid(format!("Cannot find field: {name}")))?;
            if contains_blob(&field.data_type) {
                return Err(Error::invalid(format!(
                    "Field '{name}' with type {} cannot be used as a sequence-group ordering \
                     field in option '{key}'.",
                    field.data_type
                )));
            }
        }
    }
    Ok(())
}

/// BLOB only as a top-level `BLOB`, `ARRAY<BLOB>` or `MAP<K, BLOB>`; a MAP column with the
/// shared-shredding storage layout holds no BLOB at all.
fn validate_blob_nesting(schema: &TableSchema, options: &CoreOptions) -> Result<()> {
    for f in &schema.fields {
        let layout = options.get(&format!("fields.{}.map.storage-layout", f.name));
        if layout.is_some_and(|l| l.eq_ignore_ascii_case("shared-shredding")) {
            if !contains_blob(&f.data_type) {
                continue;
            }
            return Err(Error::invalid(match f.data_type.kind {
                TypeKind::Map(..) => {
                    "MAP shared-shredding currently cannot contain BLOB fields.".to_string()
                }
                _ => format!(
                    "Column '{}' is configured with map.storage-layout but its type is not MAP.",
                    f.name
                ),
            }));
        }
        if !is_blob_file_field(&f.data_type) && contains_blob(&f.data_type) {
            return Err(Error::invalid(format!(
                "Field '{}' has unsupported nested BLOB type {}. BLOB is only supported as a \
                 top-level BLOB, ARRAY<BLOB>, or MAP<X, BLOB> field.",
                f.name, f.data_type
            )));
        }
    }
    Ok(())
}

/// Every name of `blob-field` (split at `,` and trimmed, empty names included, as Java) is a
/// BLOB-file-shaped column.
fn validate_blob_field_option(schema: &TableSchema, options: &CoreOptions) -> Result<()> {
    let Some(raw) = options.get(BLOB_FIELD) else {
        return Ok(());
    };
    for name in java_split(raw).into_iter().map(str::trim) {
        let ok = schema
            .field(name)
            .is_some_and(|f| is_blob_file_field(&f.data_type));
        if !ok {
            return Err(Error::invalid(format!(
                "Field '{name}' in '{BLOB_FIELD}' must be a BLOB, ARRAY<BLOB> or MAP<X, BLOB> \
                 field in table schema."
            )));
        }
    }
    Ok(())
}

/// `blob-descriptor-field` and `blob-view-field` name scalar BLOB columns and are disjoint.
fn validate_inline_fields(schema: &TableSchema, options: &CoreOptions) -> Result<()> {
    let scalar_blob = |name: &str| schema.field(name).is_some_and(|f| f.data_type.is_blob());
    let descriptor = comma_set(
        options,
        &[BLOB_DESCRIPTOR_FIELD, BLOB_DESCRIPTOR_FIELD_FALLBACK],
    );
    for (key, names) in [
        (BLOB_DESCRIPTOR_FIELD, &descriptor),
        (BLOB_VIEW_FIELD, &comma_set(options, &[BLOB_VIEW_FIELD])),
    ] {
        for name in names {
            if !scalar_blob(name) {
                return Err(Error::invalid(format!(
                    "Field '{name}' in '{key}' must be a BLOB field in table schema. \
                     ARRAY<BLOB> and MAP<X, BLOB> are only supported by '{BLOB_FIELD}'."
                )));
            }
            if key == BLOB_VIEW_FIELD && descriptor.contains(name) {
                return Err(Error::invalid(format!(
                    "Field '{name}' in '{BLOB_VIEW_FIELD}' can not also be in \
                     '{BLOB_DESCRIPTOR_FIELD}'."
                )));
            }
        }
    }
    Ok(())
}

/// Managed fields are not primary keys, bucket keys or sequence fields.
fn validate_primary_key_blob_keys(
    schema: &TableSchema,
    options: &CoreOptions,
    managed: &[&str],
) -> Result<()> {
    // Java `TableSchema#bucketKeys`: `bucket-key` split at `,`, else the trimmed primary keys
    // (whether they are primary keys is checked elsewhere).
    let bucket_keys = match options.bucket_key() {
        Some(keys) => keys,
        None => schema.trimmed_primary_keys()?,
    };
    let sequence = options.sequence_field();
    for (what, keys) in [
        ("primary keys", &schema.primary_keys),
        ("bucket keys", &bucket_keys),
        ("sequence fields", &sequence),
    ] {
        let hits: Vec<&str> = managed
            .iter()
            .copied()
            .filter(|n| keys.iter().any(|k| k == n))
            .collect();
        if !hits.is_empty() {
            return Err(Error::invalid(format!(
                "Managed BLOB fields cannot be {what}: {}.",
                java_list(&hits)
            )));
        }
    }
    Ok(())
}

/// Merge engine, changelog producer, external paths, clustering override and the
/// partial-update retract rule of tables with a managed field.
fn validate_primary_key_blob_configuration(options: &CoreOptions, managed: &[&str]) -> Result<()> {
    let merge_engine = options.merge_engine()?;
    if merge_engine == MergeEngine::Aggregation {
        return Err(Error::invalid(format!(
            "Primary-key managed BLOB tables only support the deduplicate, partial-update or \
             first-row merge engine. (option '{MERGE_ENGINE}' = '{merge_engine}')"
        )));
    }
    let producer = options.changelog_producer()?;
    if producer != ChangelogProducer::None {
        return Err(Error::invalid(format!(
            "Primary-key managed BLOB tables only support changelog-producer 'none'. (option \
             '{CHANGELOG_PRODUCER}' = '{}')",
            producer.as_str()
        )));
    }
    if options.contains(DATA_FILE_EXTERNAL_PATHS) {
        return Err(Error::invalid(format!(
            "Primary-key managed BLOB tables do not support '{DATA_FILE_EXTERNAL_PATHS}'."
        )));
    }
    if parse_bool(options, PK_CLUSTERING_OVERRIDE)? {
        return Err(Error::invalid(format!(
            "Primary-key managed BLOB tables do not support '{PK_CLUSTERING_OVERRIDE}'."
        )));
    }
    if merge_engine != MergeEngine::PartialUpdate || options.ignore_delete()? {
        return Ok(());
    }
    // Fields protected by any well-formed `fields.<x>.sequence-group` (Java
    // `isSequenceGroupOption`; values split at `,`, not trimmed).
    let mut protected: Vec<&str> = Vec::new();
    for (key, value) in options.map() {
        if key.starts_with("fields.") && key.ends_with(".sequence-group") {
            protected.extend(java_split(value));
        }
    }
    for field in managed {
        if !protected.contains(field) {
            continue;
        }
        let function = options
            .field_aggregate_function(field)
            .or_else(|| options.fields_default_aggregate_function());
        let Some(function) = function else {
            continue;
        };
        if function == "last_value" || options.field_ignore_retract(field)? {
            continue;
        }
        return Err(Error::invalid(format!(
            "Managed BLOB field '{field}' cannot use aggregate function '{function}' because \
             managed BLOB payloads are not retained in retract messages. Set \
             'fields.{field}.ignore-retract' to true to ignore retract messages."
        )));
    }
    Ok(())
}

/// Tables with a BLOB-file-shaped column: append tables need data evolution (which needs row
/// tracking); some other column exists; no such column is a partition key.
fn validate_blob_table_shape(schema: &TableSchema, options: &CoreOptions) -> Result<()> {
    let blob_names: Vec<&str> = schema
        .fields
        .iter()
        .filter(|f| is_blob_file_field(&f.data_type))
        .map(|f| f.name.as_str())
        .collect();
    if blob_names.is_empty() {
        return Ok(());
    }
    let data_evolution = options.data_evolution_enabled()?;
    if data_evolution && !options.row_tracking_enabled()? {
        return Err(Error::invalid(
            "Data evolution config must enabled with row-tracking.enabled",
        ));
    }
    if schema.primary_keys.is_empty() && !data_evolution {
        return Err(Error::invalid(
            "Data evolution config must enabled for table with BLOB, ARRAY<BLOB> or \
             MAP<X, BLOB> type column.",
        ));
    }
    if schema.fields.len() <= blob_names.len() {
        return Err(Error::invalid(
            "Table with BLOB, ARRAY<BLOB> or MAP<X, BLOB> type column must have other normal \
             columns.",
        ));
    }
    if let Some(p) = blob_names
        .iter()
        .find(|n| schema.partition_keys.iter().any(|k| k == *n))
    {
        return Err(Error::invalid(format!(
            "The BLOB, ARRAY<BLOB> or MAP<X, BLOB> type column can not be part of partition \
             keys. (column '{p}')"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
