//! Table schema files (`schema/schema-<id>`).
//!
//! Source: Java `org.apache.paimon.schema.TableSchema`, `SchemaSerializer`. Format per
//! `spec/table-layout.md` §2: a pretty-printed JSON object with `version`, `id`, `fields`,
//! `highestFieldId`, `partitionKeys`, `primaryKeys`, `options`, optional `comment` and
//! `timeMillis`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::spec::json::{describe, to_jackson_pretty};
use crate::spec::options::CoreOptions;
use crate::spec::types::{DataField, field_by_id, field_by_name};

/// Schema format version written by current Java (Paimon ≥ 0.9).
pub const CURRENT_SCHEMA_VERSION: i32 = 3;

/// The schema of a table at one schema id.
///
/// Source: Java `org.apache.paimon.schema.TableSchema`. Equality ignores
/// [`TableSchema::raw_json`].
#[derive(Debug, Clone)]
pub struct TableSchema {
    /// `version`: 1 (Paimon 0.7, also when absent), 2 (0.8) or 3 (current).
    pub version: i32,
    /// `id`: the schema id (`schema-<id>`).
    pub id: i64,
    /// `fields`: top-level columns in order.
    pub fields: Vec<DataField>,
    /// `highestFieldId`: the largest field id ever assigned (incl. dropped and nested fields).
    pub highest_field_id: i32,
    /// `partitionKeys`: partition column names in order.
    pub partition_keys: Vec<String>,
    /// `primaryKeys`: primary key column names in order (empty for append tables).
    pub primary_keys: Vec<String>,
    /// `options`: table options, after the read-compatibility rules (see [`decode_schema`]).
    pub options: BTreeMap<String, String>,
    /// `comment`; `null` or absent → `None`.
    pub comment: Option<String>,
    /// `timeMillis`: creation time in epoch millis; absent → 0.
    pub time_millis: i64,
    /// The exact text of the file this schema was decoded from (`None` when built in code).
    /// Print this to show the schema as stored.
    pub raw_json: Option<String>,
}

impl PartialEq for TableSchema {
    fn eq(&self, o: &Self) -> bool {
        self.version == o.version
            && self.id == o.id
            && self.fields == o.fields
            && self.highest_field_id == o.highest_field_id
            && self.partition_keys == o.partition_keys
            && self.primary_keys == o.primary_keys
            && self.options == o.options
            && self.comment == o.comment
            && self.time_millis == o.time_millis
    }
}

impl Eq for TableSchema {}

impl TableSchema {
    /// Typed view of [`TableSchema::options`].
    pub fn core_options(&self) -> CoreOptions {
        CoreOptions::new(self.options.clone())
    }

    /// True when the table has a primary key.
    pub fn is_primary_key_table(&self) -> bool {
        !self.primary_keys.is_empty()
    }

    /// Names of the top-level fields in order.
    pub fn field_names(&self) -> Vec<&str> {
        self.fields.iter().map(|f| f.name.as_str()).collect()
    }

    /// The top-level field named `name`.
    pub fn field(&self, name: &str) -> Option<&DataField> {
        field_by_name(&self.fields, name)
    }

    /// The top-level field with id `id`.
    pub fn field_by_id(&self, id: i32) -> Option<&DataField> {
        field_by_id(&self.fields, id)
    }

    /// Primary keys minus partition keys: the key columns of primary-key data files
    /// (Java `TableSchema.trimmedPrimaryKeys`). Empty for append tables.
    ///
    /// # Errors
    /// [`Error::Invalid`] when every primary key is a partition key.
    pub fn trimmed_primary_keys(&self) -> Result<Vec<String>> {
        if self.primary_keys.is_empty() {
            return Ok(Vec::new());
        }
        let trimmed: Vec<String> = self
            .primary_keys
            .iter()
            .filter(|pk| !self.partition_keys.contains(pk))
            .cloned()
            .collect();
        if trimmed.is_empty() {
            return Err(Error::invalid(format!(
                "schema {}: primary key {:?} should not be the same as partition keys {:?}, \
                 this would keep only one record per partition",
                self.id, self.primary_keys, self.partition_keys
            )));
        }
        Ok(trimmed)
    }

    /// Bucket key columns (Java `TableSchema.bucketKeys`): the `bucket-key` option split at
    /// `,` when set and not blank, else the trimmed primary keys (empty for append tables
    /// without `bucket-key`).
    ///
    /// # Errors
    /// [`Error::Invalid`] when a bucket key is not a field, is a partition key, or (on
    /// primary-key tables) is not a primary key; or as [`TableSchema::trimmed_primary_keys`].
    pub fn bucket_keys(&self) -> Result<Vec<String>> {
        let Some(raw) = self
            .options
            .get("bucket-key")
            .filter(|k| !k.trim().is_empty())
        else {
            return self.trimmed_primary_keys();
        };
        let keys: Vec<String> = raw.split(',').map(str::to_string).collect();
        for k in &keys {
            if self.field(k).is_none() {
                return Err(Error::invalid(format!(
                    "schema {}: bucket key '{k}' is not a field of {:?}",
                    self.id,
                    self.field_names()
                )));
            }
            if self.partition_keys.contains(k) {
                return Err(Error::invalid(format!(
                    "schema {}: bucket key '{k}' must not be a partition key",
                    self.id
                )));
            }
            if !self.primary_keys.is_empty() && !self.primary_keys.contains(k) {
                return Err(Error::invalid(format!(
                    "schema {}: bucket key '{k}' must be one of the primary keys {:?}",
                    self.id, self.primary_keys
                )));
            }
        }
        Ok(keys)
    }

    /// Fields that are partition keys, in partition-key order.
    ///
    /// # Errors
    /// [`Error::Invalid`] when a partition key names no field.
    pub fn partition_fields(&self) -> Result<Vec<&DataField>> {
        self.partition_keys
            .iter()
            .map(|k| {
                self.field(k).ok_or_else(|| {
                    Error::invalid(format!(
                        "schema {}: partition key '{k}' is not a field",
                        self.id
                    ))
                })
            })
            .collect()
    }
}

/// Decode a schema file.
///
/// Accepts versions 1-3 (absent `version` → 1). Read compatibility as Java's
/// `SchemaSerializer`: version ≤ 1 without a `bucket` option gets `bucket = 1`; version ≤ 2
/// without `file.format` gets `file.format = orc`. Option values that are JSON numbers or
/// booleans are taken as their text. Unknown keys are ignored. `raw_json` keeps `bytes`.
///
/// # Errors
/// [`Error::Corrupt`] (format `schema`) naming `path` for invalid or truncated JSON, a
/// missing or mistyped key, or an unparsable field type.
pub fn decode_schema(bytes: &[u8], path: &str) -> Result<TableSchema> {
    let corrupt = |reason: String| Error::corrupt(path, "schema", reason);
    let value: Value = serde_json::from_slice(bytes).map_err(|e| corrupt(describe(&e)))?;
    let Value::Object(map) = &value else {
        return Err(corrupt("not a JSON object".into()));
    };
    let int = |key: &str, required: bool| -> Result<Option<i64>> {
        match map.get(key) {
            None | Some(Value::Null) if !required => Ok(None),
            Some(Value::Number(n)) => n
                .as_i64()
                .map(Some)
                .ok_or_else(|| corrupt(format!("'{key}' is not an integer: {n}"))),
            Some(other) => Err(corrupt(format!("'{key}' must be an integer, got {other}"))),
            None => Err(corrupt(format!("missing '{key}'"))),
        }
    };
    let int32 = |key: &str, v: i64| -> Result<i32> {
        i32::try_from(v).map_err(|_| corrupt(format!("'{key}' {v} does not fit an int")))
    };
    let strings = |key: &str| -> Result<Vec<String>> {
        match map.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(corrupt(format!("'{key}' holds a non-string {other}"))),
                })
                .collect(),
            Some(other) => Err(corrupt(format!("'{key}' must be an array, got {other}"))),
            None => Err(corrupt(format!("missing '{key}'"))),
        }
    };

    let version = match int("version", false)? {
        Some(v) => int32("version", v)?,
        None => 1,
    };
    let id = int("id", true)?.unwrap_or_default();
    let fields = match map.get("fields") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|f| DataField::from_json(f).map_err(|e| corrupt(format!("fields: {e}"))))
            .collect::<Result<Vec<_>>>()?,
        Some(other) => return Err(corrupt(format!("'fields' must be an array, got {other}"))),
        None => return Err(corrupt("missing 'fields'".into())),
    };
    let highest_field_id = int32(
        "highestFieldId",
        int("highestFieldId", true)?.unwrap_or_default(),
    )?;
    let partition_keys = strings("partitionKeys")?;
    let primary_keys = strings("primaryKeys")?;
    let mut options = BTreeMap::new();
    match map.get("options") {
        Some(Value::Object(o)) => {
            for (k, v) in o {
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(_) | Value::Bool(_) => v.to_string(),
                    other => {
                        return Err(corrupt(format!(
                            "option '{k}' must be a string, got {other}"
                        )));
                    }
                };
                options.insert(k.clone(), text);
            }
        }
        Some(other) => return Err(corrupt(format!("'options' must be an object, got {other}"))),
        None => return Err(corrupt("missing 'options'".into())),
    }
    if version <= 1 && !options.contains_key("bucket") {
        options.insert("bucket".into(), "1".into());
    }
    if version <= 2 && !options.contains_key("file.format") {
        options.insert("file.format".into(), "orc".into());
    }
    let comment = match map.get("comment") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(corrupt(format!("'comment' must be a string, got {other}"))),
    };
    let time_millis = int("timeMillis", false)?.unwrap_or(0);
    Ok(TableSchema {
        version,
        id,
        fields,
        highest_field_id,
        partition_keys,
        primary_keys,
        options,
        comment,
        time_millis,
        raw_json: Some(String::from_utf8_lossy(bytes).into_owned()),
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SchemaJson<'a> {
    version: i32,
    id: i64,
    fields: &'a [DataField],
    highest_field_id: i32,
    partition_keys: &'a [String],
    primary_keys: &'a [String],
    options: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<&'a str>,
    time_millis: i64,
}

/// Encode a schema the way Java's `SchemaSerializer` + `JsonSerdeUtil.toJson` write it:
/// Jackson pretty printing, keys in Java's order, `comment` only when set, options in key
/// order. [`TableSchema::raw_json`] is not used.
///
/// # Errors
/// Only if JSON serialization fails, which it does not for these types ([`Error::Invalid`]).
pub fn encode_schema(schema: &TableSchema) -> Result<Vec<u8>> {
    let json = SchemaJson {
        version: schema.version,
        id: schema.id,
        fields: &schema.fields,
        highest_field_id: schema.highest_field_id,
        partition_keys: &schema.partition_keys,
        primary_keys: &schema.primary_keys,
        options: &schema.options,
        comment: schema.comment.as_deref(),
        time_millis: schema.time_millis,
    };
    to_jackson_pretty(&json).map_err(|e| Error::invalid(format!("cannot encode schema: {e}")))
}

/// Path of schema `id` relative to the table root: `schema/schema-<id>`.
pub fn schema_path(id: i64) -> String {
    format!("schema/schema-{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of Paimon's docs/concepts/spec/schema.md, written by Java.
    const JAVA_DOC_SCHEMA: &str = r#"{
  "version" : 3,
  "id" : 0,
  "fields" : [ {
    "id" : 0,
    "name" : "order_id",
    "type" : "BIGINT NOT NULL"
  }, {
    "id" : 1,
    "name" : "order_name",
    "type" : "STRING"
  }, {
    "id" : 2,
    "name" : "order_user_id",
    "type" : "BIGINT"
  }, {
    "id" : 3,
    "name" : "order_shop_id",
    "type" : "BIGINT"
  } ],
  "highestFieldId" : 3,
  "partitionKeys" : [ ],
  "primaryKeys" : [ "order_id" ],
  "options" : {
    "bucket" : "5"
  },
  "comment" : "",
  "timeMillis" : 1720496663041
}"#;

    #[test]
    fn java_doc_example_round_trips_byte_for_byte() {
        let s = decode_schema(JAVA_DOC_SCHEMA.as_bytes(), "schema/schema-0").unwrap();
        assert_eq!(s.version, 3);
        assert_eq!(s.fields.len(), 4);
        assert_eq!(s.fields[0].data_type.to_string(), "BIGINT NOT NULL");
        assert_eq!(s.primary_keys, vec!["order_id"]);
        assert_eq!(s.comment.as_deref(), Some(""));
        assert_eq!(s.time_millis, 1720496663041);
        assert_eq!(s.raw_json.as_deref(), Some(JAVA_DOC_SCHEMA));
        assert_eq!(
            String::from_utf8(encode_schema(&s).unwrap()).unwrap(),
            JAVA_DOC_SCHEMA
        );
        assert_eq!(s.trimmed_primary_keys().unwrap(), vec!["order_id"]);
        assert_eq!(s.bucket_keys().unwrap(), vec!["order_id"]);
    }

    #[test]
    fn compatibility_defaults() {
        let v1 = r#"{"id": 0, "fields": [], "highestFieldId": -1, "partitionKeys": [], "primaryKeys": [], "options": {}}"#;
        let s = decode_schema(v1.as_bytes(), "p").unwrap();
        assert_eq!(s.version, 1);
        assert_eq!(s.options.get("bucket").map(String::as_str), Some("1"));
        assert_eq!(
            s.options.get("file.format").map(String::as_str),
            Some("orc")
        );
        assert_eq!(s.time_millis, 0);
        assert_eq!(s.comment, None);

        let v2 = r#"{"version": 2, "id": 1, "fields": [], "highestFieldId": -1, "partitionKeys": [], "primaryKeys": [], "options": {"file.format": "parquet"}}"#;
        let s = decode_schema(v2.as_bytes(), "p").unwrap();
        assert_eq!(s.options.get("bucket"), None);
        assert_eq!(
            s.options.get("file.format").map(String::as_str),
            Some("parquet")
        );

        let v3 = r#"{"version": 3, "id": 1, "fields": [], "highestFieldId": -1, "partitionKeys": [], "primaryKeys": [], "options": {}, "comment": null}"#;
        let s = decode_schema(v3.as_bytes(), "p").unwrap();
        assert!(s.options.is_empty());
    }

    #[test]
    fn trimmed_primary_keys_rules() {
        let json = r#"{"version": 3, "id": 0, "fields": [{"id": 0, "name": "p", "type": "INT"}, {"id": 1, "name": "k", "type": "INT"}], "highestFieldId": 1, "partitionKeys": ["p"], "primaryKeys": ["p", "k"], "options": {}}"#;
        let s = decode_schema(json.as_bytes(), "p").unwrap();
        assert_eq!(s.trimmed_primary_keys().unwrap(), vec!["k"]);
        let mut only_partition = s.clone();
        only_partition.primary_keys = vec!["p".into()];
        assert!(matches!(
            only_partition.trimmed_primary_keys(),
            Err(Error::Invalid(_))
        ));
        let mut bad_bucket_key = s.clone();
        bad_bucket_key
            .options
            .insert("bucket-key".into(), "p".into());
        assert!(bad_bucket_key.bucket_keys().is_err());
    }

    #[test]
    fn corrupt_inputs_name_the_file() {
        let full = JAVA_DOC_SCHEMA.as_bytes();
        for bad in [
            &full[..full.len() / 2],
            b"".as_slice(),
            b"[]".as_slice(),
            br#"{"id": 0}"#.as_slice(),
            br#"{"id": 0, "fields": [{"id": 0, "name": "a", "type": "NOPE"}], "highestFieldId": 0, "partitionKeys": [], "primaryKeys": [], "options": {}}"#.as_slice(),
            br#"{"id": "x", "fields": [], "highestFieldId": 0, "partitionKeys": [], "primaryKeys": [], "options": {}}"#.as_slice(),
        ] {
            let err = decode_schema(bad, "t/schema/schema-7").unwrap_err();
            assert!(
                matches!(&err, Error::Corrupt { path, format: "schema", .. } if path == "t/schema/schema-7"),
                "{err:?}"
            );
        }
        let err = decode_schema(
            br#"{"id": 0, "fields": [{"id": 0, "name": "a", "type": "NOPE"}], "highestFieldId": 0, "partitionKeys": [], "primaryKeys": [], "options": {}}"#,
            "s",
        )
        .unwrap_err();
        assert!(err.to_string().contains("NOPE"), "{err}");
    }
}
