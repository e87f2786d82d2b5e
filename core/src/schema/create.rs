//! Creating a table: Paimon's schema JSON becomes `schema/schema-0`.
//!
//! Source: Java `org.apache.paimon.schema.Schema` (normalization of primary and partition keys,
//! primary key columns made NOT NULL), `Schema.Builder` (field id assignment),
//! `SchemaManager#createTable`, `TableSchema#create` and a subset of `SchemaValidation`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::io::{Io, Machine, PutMode};
use crate::spec::schema::schema_path;
use crate::spec::{DataField, TableSchema, encode_schema};

/// Current schema file version (Java `TableSchema.CURRENT_VERSION`).
pub const SCHEMA_VERSION: i32 = 3;

/// Parse Paimon's schema JSON (the JSON of Java's `Schema`: `fields`, `partitionKeys`,
/// `primaryKeys`, `options`, `comment`) into schema 0 of a new table created at `time_millis`
/// (epoch millis, from the host).
///
/// Fields are Paimon `DataField` JSON objects (`{"id": 0, "name": "k", "type": "INT NOT NULL"}`,
/// nested types as Paimon's type JSON). Field ids may be left out everywhere: they are then
/// assigned as Java's `Schema.Builder` does (each top-level column takes the next id, then the
/// fields nested in its type); either every field has an id or none does. The `primary-key`
/// and `partition` options are moved into the key lists as Java does; primary key columns
/// become NOT NULL.
///
/// # Errors
/// [`Error::Invalid`] naming the offending field, key or option: unparsable JSON or types,
/// duplicate names, keys that are not columns, a `bucket` that is not `-2`, `-1` or positive,
/// bucket keys that break Java's rules, and the other checks of [`validate_new_schema`].
pub fn new_table_schema(json: &[u8], time_millis: i64) -> Result<TableSchema> {
    let mut value: Value =
        serde_json::from_slice(json).map_err(|e| Error::invalid(format!("schema JSON: {e}")))?;
    let Value::Object(map) = &mut value else {
        return Err(Error::invalid("schema JSON must be an object"));
    };
    let mut options: BTreeMap<String, String> = match map.get("options") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => {
                        return Err(Error::invalid(format!("schema option '{k}' is null")));
                    }
                    other => other.to_string(),
                };
                Ok((k.clone(), v))
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(Error::invalid(format!(
                "schema 'options' must be an object, got {other}"
            )));
        }
    };
    let list = |key: &str| -> Result<Vec<String>> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(Error::invalid(format!(
                        "schema '{key}' holds a non-string {other}"
                    ))),
                })
                .collect(),
            Some(other) => Err(Error::invalid(format!(
                "schema '{key}' must be an array of names, got {other}"
            ))),
        }
    };
    let partition_keys = from_option(list("partitionKeys")?, &mut options, "partition")?;
    let primary_keys = from_option(list("primaryKeys")?, &mut options, "primary-key")?;
    let comment = match map.get("comment") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(Error::invalid(format!(
                "schema 'comment' must be a string, got {other}"
            )));
        }
    };
    let Some(Value::Array(raw_fields)) = map.get_mut("fields") else {
        return Err(Error::invalid("schema JSON needs a 'fields' array"));
    };
    assign_missing_ids(raw_fields)?;
    let mut fields = raw_fields
        .iter()
        .map(DataField::from_json)
        .collect::<Result<Vec<_>>>()?;
    for f in &mut fields {
        if primary_keys.contains(&f.name) && f.data_type.nullable {
            f.data_type = f.data_type.with_nullable(false);
        }
    }
    let highest_field_id = highest_field_id(&fields);
    let schema = TableSchema {
        version: SCHEMA_VERSION,
        id: 0,
        fields,
        highest_field_id,
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

/// Keys given as a table option (`partition`, `primary-key`: comma-separated) instead of in
/// the key list; both at once is an error, as in Java.
fn from_option(
    keys: Vec<String>,
    options: &mut BTreeMap<String, String>,
    option: &str,
) -> Result<Vec<String>> {
    let Some(raw) = options.remove(option) else {
        return Ok(keys);
    };
    if !keys.is_empty() {
        return Err(Error::invalid(format!(
            "cannot define '{option}' both in the schema's key list and as a table option"
        )));
    }
    Ok(raw
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Give every field without an `id` one, in Java `Schema.Builder` order: a column takes the
/// next id, then the row fields nested in its type, depth first.
fn assign_missing_ids(fields: &mut [Value]) -> Result<()> {
    fn has_id(v: &Value) -> bool {
        v.get("id").is_some_and(|id| !id.is_null())
    }
    fn walk_type(ty: &mut Value, next: &mut i32) {
        match ty {
            Value::Object(obj) => {
                if let Some(Value::Array(nested)) = obj.get_mut("fields") {
                    for f in nested {
                        assign(f, next);
                    }
                }
                for key in ["element", "key", "value"] {
                    if let Some(t) = obj.get_mut(key) {
                        walk_type(t, next);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|t| walk_type(t, next)),
            _ => {}
        }
    }
    fn assign(field: &mut Value, next: &mut i32) {
        if let Value::Object(obj) = field {
            obj.insert("id".into(), Value::from(*next));
            *next += 1;
            if let Some(t) = obj.get_mut("type") {
                // A nested type written as a string (`ROW<x INT>`): its row fields need ids
                // too, so take its JSON object form first.
                if let Value::String(text) = t
                    && text.to_ascii_uppercase().contains("ROW")
                    && let Ok(parsed) = crate::spec::DataType::parse_sql(text)
                {
                    *t = parsed.to_json();
                }
                walk_type(t, next);
            }
        }
    }
    let with_ids = fields.iter().filter(|f| has_id(f)).count();
    if with_ids == fields.len() {
        return Ok(());
    }
    if with_ids > 0 {
        return Err(Error::invalid(
            "schema fields: give an 'id' to every field or to none",
        ));
    }
    let mut next = 0;
    for f in fields {
        assign(f, &mut next);
    }
    Ok(())
}

/// Largest field id of `fields`, nested row fields included (Java
/// `RowType.currentHighestFieldId`); `-1` without fields.
pub fn highest_field_id(fields: &[DataField]) -> i32 {
    fields
        .iter()
        .map(|f| {
            let nested = f.data_type.row_fields().map(highest_field_id).unwrap_or(-1);
            f.id.max(nested).max(nested_in_collections(&f.data_type))
        })
        .max()
        .unwrap_or(-1)
}

fn nested_in_collections(ty: &crate::spec::DataType) -> i32 {
    use crate::spec::TypeKind;
    match &ty.kind {
        TypeKind::Array(e) | TypeKind::Multiset(e) => e
            .row_fields()
            .map(highest_field_id)
            .unwrap_or(-1)
            .max(nested_in_collections(e)),
        TypeKind::Map(k, v) => [k.as_ref(), v.as_ref()]
            .iter()
            .map(|t| {
                t.row_fields()
                    .map(highest_field_id)
                    .unwrap_or(-1)
                    .max(nested_in_collections(t))
            })
            .max()
            .unwrap_or(-1),
        _ => -1,
    }
}

/// The checks Java runs before it creates a table (a subset of `SchemaValidation`): unique
/// column and key names, keys that are columns, primary keys that include the partition keys
/// only if something is left, a valid `bucket` (`-2`, `-1` or positive), bucket keys that are
/// columns and not partition keys (and primary key columns on primary-key tables), known
/// `merge-engine`, `sequence.field` columns that exist, a `record-level.time-field` naming an
/// `INT`, `BIGINT`, `TIMESTAMP` or `TIMESTAMP_LTZ` column, and the BLOB rules of
/// [`crate::blob::validation::validate_blob_fields`] (also run on every altered schema).
///
/// # Errors
/// [`Error::Invalid`] naming the offending column or option; [`Error::Unsupported`] for
/// options we do not support writing with.
pub fn validate_new_schema(schema: &TableSchema) -> Result<()> {
    let names: Vec<&str> = schema.field_names();
    let mut seen = std::collections::BTreeSet::new();
    for n in &names {
        if !seen.insert(*n) {
            return Err(Error::invalid(format!(
                "duplicate column '{n}' in the schema"
            )));
        }
    }
    for (what, keys) in [
        ("partition key", &schema.partition_keys),
        ("primary key", &schema.primary_keys),
    ] {
        let mut seen = std::collections::BTreeSet::new();
        for k in keys {
            if !names.contains(&k.as_str()) {
                return Err(Error::invalid(format!(
                    "{what} '{k}' is not a column of the schema (columns: {names:?})"
                )));
            }
            if !seen.insert(k) {
                return Err(Error::invalid(format!("duplicate {what} '{k}'")));
            }
        }
    }
    schema.trimmed_primary_keys()?;
    let options = schema.core_options();
    let bucket = options.bucket()?;
    if bucket == 0 || bucket < -2 {
        return Err(Error::invalid(format!(
            "option 'bucket' = {bucket}: must be -2 (postpone), -1 (dynamic or unaware) or a \
             positive bucket count"
        )));
    }
    let bucket_keys = schema.bucket_keys()?;
    if bucket > 0 && schema.primary_keys.is_empty() && bucket_keys.is_empty() {
        return Err(Error::invalid(format!(
            "option 'bucket' = {bucket} on a table without primary key needs 'bucket-key'"
        )));
    }
    options.merge_engine()?;
    for f in options.sequence_field() {
        if !names.contains(&f.as_str()) {
            return Err(Error::invalid(format!(
                "option 'sequence.field': column '{f}' does not exist"
            )));
        }
    }
    crate::read::expire::validate_time_field(schema, &options)?;
    crate::blob::validation::validate_blob_fields(schema)?;
    Ok(())
}

/// Create a table: `Put schema/schema-0` create-new (paths relative to the table root).
/// Emits nothing; finishes when the schema file is written.
///
/// # Errors
/// [`Error::Invalid`] "table already exists" when `schema/schema-0` is there (another
/// creator won, or the table existed); IO errors of the `Put`.
pub fn create_table_machine(schema: TableSchema) -> Machine<()> {
    Machine::new("create table", move |io: Io<()>| async move {
        let bytes = encode_schema(&schema)?;
        let path = schema_path(schema.id);
        if !io.put(&path, bytes.into(), PutMode::CreateNew).await? {
            return Err(Error::invalid(format!(
                "table already exists: {path} is present"
            )));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_rows_written_as_type_strings_get_their_own_ids() {
        let s = new_table_schema(
            br#"{"fields": [{"name": "a", "type": "INT"},
                {"name": "m", "type": "MAP<STRING, ARRAY<INT>>"},
                {"name": "r", "type": "ROW<x INT, y STRING>"}]}"#,
            0,
        )
        .unwrap();
        let nested: Vec<i32> = s.fields[2]
            .data_type
            .row_fields()
            .unwrap()
            .iter()
            .map(|f| f.id)
            .collect();
        assert_eq!(
            (s.fields.iter().map(|f| f.id).collect::<Vec<_>>(), nested),
            (vec![0, 1, 2], vec![3, 4])
        );
        assert_eq!(s.highest_field_id, 4);
    }

    #[test]
    fn ids_assigned_like_the_java_builder_and_pk_not_null() {
        let s = new_table_schema(
            br#"{"fields": [
                {"name": "k", "type": "INT"},
                {"name": "r", "type": {"type": "ROW", "fields": [
                    {"name": "x", "type": "INT"}, {"name": "y", "type": "STRING"}]}},
                {"name": "v", "type": "STRING"}],
              "primaryKeys": ["k"], "options": {"bucket": "2"}}"#,
            42,
        )
        .unwrap();
        let ids: Vec<i32> = s.fields.iter().map(|f| f.id).collect();
        assert_eq!(ids, vec![0, 1, 4]);
        let nested: Vec<i32> = s.fields[1]
            .data_type
            .row_fields()
            .unwrap()
            .iter()
            .map(|f| f.id)
            .collect();
        assert_eq!(nested, vec![2, 3]);
        assert_eq!(s.highest_field_id, 4);
        assert!(!s.fields[0].data_type.nullable);
        assert_eq!(s.time_millis, 42);
        assert_eq!(s.version, 3);
    }

    #[test]
    fn keys_from_options_and_errors_name_the_column() {
        let s = new_table_schema(
            br#"{"fields": [{"id": 0, "name": "a", "type": "INT"}, {"id": 1, "name": "p", "type": "STRING"}],
                 "options": {"primary-key": "a, p", "partition": "p"}}"#,
            0,
        )
        .unwrap();
        assert_eq!(s.primary_keys, vec!["a", "p"]);
        assert_eq!(s.partition_keys, vec!["p"]);
        assert!(!s.options.contains_key("primary-key"));
        let e = new_table_schema(
            br#"{"fields": [{"name": "a", "type": "INT"}], "primaryKeys": ["b"]}"#,
            0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("'b'"), "{e}");
        let e = new_table_schema(
            br#"{"fields": [{"name": "a", "type": "INT"}], "options": {"bucket": "4"}}"#,
            0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("bucket-key"), "{e}");
    }
}
