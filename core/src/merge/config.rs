//! Merge configuration of a primary-key table: merge engine, sequence fields, per-field
//! aggregate functions and their options.
//!
//! Source: Java `org.apache.paimon.CoreOptions` (merge-engine, sequence.field, ignore-delete,
//! `fields.*` options) and the merge function factories in
//! `org.apache.paimon.mergetree.compact`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};

use crate::error::{Error, Result};
use crate::spec::{DataField, TableSchema};
use crate::types::paimon_to_arrow_field;

/// The merge engine of a primary-key table (option `merge-engine`).
///
/// Source: Java `org.apache.paimon.CoreOptions.MergeEngine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeEngine {
    /// `deduplicate` (default): the newest record per key wins.
    Deduplicate,
    /// `partial-update`: non-null fields of newer records overwrite older ones.
    PartialUpdate,
    /// `aggregation`: every field is folded with its aggregate function.
    Aggregation,
    /// `first-row`: the oldest record per key wins.
    FirstRow,
}

impl MergeEngine {
    /// Parse the value of option `merge-engine` (case-insensitive).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an unknown engine name.
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "deduplicate" => Ok(MergeEngine::Deduplicate),
            "partial-update" => Ok(MergeEngine::PartialUpdate),
            "aggregation" => Ok(MergeEngine::Aggregation),
            "first-row" => Ok(MergeEngine::FirstRow),
            other => Err(Error::unsupported(format!("merge-engine '{other}'"))),
        }
    }
}

/// Options of one field under `fields.<name>.*`.
///
/// Source: Java `CoreOptions.fieldAggFunc`, `fieldAggIgnoreRetract`,
/// `fieldCollectAggDistinct`, `fieldListAggDelimiter`, `fieldNestedUpdateAgg*`,
/// `fieldMergeMapTsField`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMergeOptions {
    /// `fields.<f>.aggregate-function`.
    pub aggregate_function: Option<String>,
    /// `fields.<f>.ignore-retract` (default false).
    pub ignore_retract: bool,
    /// `fields.<f>.distinct` (default false; `collect` and `listagg`).
    pub distinct: bool,
    /// `fields.<f>.list-agg-delimiter` (default `,`).
    pub list_agg_delimiter: Option<String>,
    /// `fields.<f>.nested-key` (comma list, trimmed; `nested_update`, `nested_partial_update`).
    pub nested_key: Vec<String>,
    /// `fields.<f>.nested-key-null-strategy` (`merge` default, `ignore`, `error`).
    pub nested_key_null_strategy: Option<String>,
    /// `fields.<f>.nested-sequence-field` (comma list, trimmed; `nested_update`).
    pub nested_sequence_field: Vec<String>,
    /// `fields.<f>.count-limit` (`nested_update`, default unlimited).
    pub count_limit: Option<i32>,
    /// `fields.<f>.ts-field` (`merge_map_with_keytime`, default the last row field).
    pub map_ts_field: Option<String>,
}

/// A partial-update sequence group: `fields.<ordering>.sequence-group = <protected>`.
///
/// Source: Java `PartialUpdateMergeFunction` (sequence groups).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceGroup {
    /// Ordering fields (the `a,b` of `fields.a,b.sequence-group`).
    pub ordering: Vec<String>,
    /// Fields protected by the group (the option value).
    pub protected: Vec<String>,
}

/// Everything the merge of a primary-key table needs to know about the table.
///
/// Fill it from the table schema and options with [`MergeConfig::from_table_options`], or
/// field by field.
///
/// Source: Java `org.apache.paimon.table.PrimaryKeyTableUtils.createMergeFunctionFactory` and
/// the options read by the merge function factories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeConfig {
    /// The merge engine.
    pub engine: MergeEngine,
    /// All table fields in schema order (the value columns of the key-value files).
    pub fields: Vec<DataField>,
    /// Primary key field names, in primary-key order (including partition keys).
    pub primary_keys: Vec<String>,
    /// Partition key field names. The key columns of the data files (`_KEY_<pk>`) are the
    /// primary keys without these (trimmed primary keys).
    pub partition_keys: Vec<String>,
    /// `sequence.field` (comma list).
    pub sequence_fields: Vec<String>,
    /// `sequence.field.sort-order` is `ascending` (default true).
    pub sequence_ascending: bool,
    /// `ignore-delete` (with fallback keys `first-row.ignore-delete`,
    /// `deduplicate.ignore-delete`, `partial-update.ignore-delete`), default false.
    pub ignore_delete: bool,
    /// `partial-update.remove-record-on-delete`, default false.
    pub partial_update_remove_record_on_delete: bool,
    /// `partial-update.remove-record-on-sequence-group` (comma list of ordering fields).
    pub partial_update_remove_record_on_sequence_group: Vec<String>,
    /// `aggregation.remove-record-on-delete`, default false.
    pub aggregation_remove_record_on_delete: bool,
    /// `fields.default-aggregate-function`.
    pub default_aggregate_function: Option<String>,
    /// Partial-update sequence groups, in option-key order.
    pub sequence_groups: Vec<SequenceGroup>,
    /// Per-field options (`fields.<f>.*`), by field name.
    pub field_options: BTreeMap<String, FieldMergeOptions>,
    /// Java's lookup merge (`LookupMergeFunction`): the table needs lookup
    /// (`changelog-producer = lookup`, `deletion-vectors.enabled` or `force-lookup`) and the
    /// engine is not `first-row`. Of a key's records from positive levels only the one of
    /// the lowest level takes part in the merge (it already holds the merged history of the
    /// levels below it), besides every level-0 record. Needs the run sources to report
    /// levels ([`super::RunSource::batch_level`]).
    pub lookup: bool,
}

fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(Error::invalid(format!(
            "option '{key}' must be true or false, got '{other}'"
        ))),
    }
}

fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `fields.<f>.<suffix>` suffixes that carry a per-field option.
const FIELD_SUFFIXES: &[&str] = &[
    "aggregate-function",
    "ignore-retract",
    "distinct",
    "list-agg-delimiter",
    "nested-key",
    "nested-key-null-strategy",
    "nested-sequence-field",
    "count-limit",
    "ts-field",
    "sequence-group",
];

impl MergeConfig {
    /// A configuration of `engine` with every option at its default.
    pub fn new(
        engine: MergeEngine,
        fields: Vec<DataField>,
        primary_keys: Vec<String>,
        partition_keys: Vec<String>,
    ) -> Self {
        MergeConfig {
            engine,
            fields,
            primary_keys,
            partition_keys,
            sequence_fields: Vec::new(),
            sequence_ascending: true,
            ignore_delete: false,
            partial_update_remove_record_on_delete: false,
            partial_update_remove_record_on_sequence_group: Vec::new(),
            aggregation_remove_record_on_delete: false,
            default_aggregate_function: None,
            sequence_groups: Vec::new(),
            field_options: BTreeMap::new(),
            lookup: false,
        }
    }

    /// Read the merge configuration from a table's fields, keys and options.
    ///
    /// Recognised keys: `merge-engine`, `sequence.field`, `sequence.field.sort-order`,
    /// `ignore-delete` (and its fallback keys), `partial-update.remove-record-on-delete`,
    /// `partial-update.remove-record-on-sequence-group`, `aggregation.remove-record-on-delete`,
    /// `fields.default-aggregate-function` and `fields.<f>.{aggregate-function,
    /// ignore-retract, distinct, list-agg-delimiter, nested-key, nested-key-null-strategy,
    /// nested-sequence-field, count-limit, ts-field, sequence-group}`; `changelog-producer`,
    /// `deletion-vectors.enabled` and `force-lookup` for [`MergeConfig::lookup`].
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an unknown merge engine; [`Error::Invalid`] for a malformed
    /// boolean/integer/sort-order value.
    pub fn from_table_options(
        fields: Vec<DataField>,
        primary_keys: Vec<String>,
        partition_keys: Vec<String>,
        options: &BTreeMap<String, String>,
    ) -> Result<Self> {
        let engine = match options.get("merge-engine") {
            Some(v) => MergeEngine::parse(v)?,
            None => MergeEngine::Deduplicate,
        };
        let mut cfg = MergeConfig::new(engine, fields, primary_keys, partition_keys);
        if let Some(v) = options.get("sequence.field") {
            cfg.sequence_fields = split_list(v);
        }
        if let Some(v) = options.get("sequence.field.sort-order") {
            cfg.sequence_ascending = match v.trim().to_ascii_lowercase().as_str() {
                "ascending" => true,
                "descending" => false,
                other => {
                    return Err(Error::invalid(format!(
                        "option 'sequence.field.sort-order' must be ascending or descending, got '{other}'"
                    )));
                }
            };
        }
        for key in [
            "ignore-delete",
            "first-row.ignore-delete",
            "deduplicate.ignore-delete",
            "partial-update.ignore-delete",
        ] {
            if let Some(v) = options.get(key) {
                cfg.ignore_delete = parse_bool(key, v)?;
                break;
            }
        }
        if let Some(v) = options.get("partial-update.remove-record-on-delete") {
            cfg.partial_update_remove_record_on_delete =
                parse_bool("partial-update.remove-record-on-delete", v)?;
        }
        if let Some(v) = options.get("partial-update.remove-record-on-sequence-group") {
            cfg.partial_update_remove_record_on_sequence_group = split_list(v);
        }
        if let Some(v) = options.get("aggregation.remove-record-on-delete") {
            cfg.aggregation_remove_record_on_delete =
                parse_bool("aggregation.remove-record-on-delete", v)?;
        }
        if let Some(v) = options.get("fields.default-aggregate-function") {
            cfg.default_aggregate_function = Some(v.trim().to_string());
        }
        let flag = |key: &str| -> Result<bool> {
            options.get(key).map_or(Ok(false), |v| parse_bool(key, v))
        };
        let changelog_lookup = options
            .get("changelog-producer")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("lookup"));
        cfg.lookup = engine != MergeEngine::FirstRow
            && (changelog_lookup || flag("deletion-vectors.enabled")? || flag("force-lookup")?);
        for (key, value) in options {
            let Some(rest) = key.strip_prefix("fields.") else {
                continue;
            };
            if rest == "default-aggregate-function" {
                continue;
            }
            let Some((name, suffix)) = FIELD_SUFFIXES.iter().find_map(|s| {
                rest.strip_suffix(s)
                    .and_then(|n| n.strip_suffix('.'))
                    .filter(|n| !n.is_empty())
                    .map(|n| (n, *s))
            }) else {
                continue;
            };
            if suffix == "sequence-group" {
                cfg.sequence_groups.push(SequenceGroup {
                    ordering: split_list(name),
                    protected: split_list(value),
                });
                continue;
            }
            let fo = cfg.field_options.entry(name.to_string()).or_default();
            match suffix {
                "aggregate-function" => fo.aggregate_function = Some(value.trim().to_string()),
                "ignore-retract" => fo.ignore_retract = parse_bool(key, value)?,
                "distinct" => fo.distinct = parse_bool(key, value)?,
                "list-agg-delimiter" => fo.list_agg_delimiter = Some(value.clone()),
                "nested-key" => fo.nested_key = split_list(value),
                "nested-key-null-strategy" => {
                    fo.nested_key_null_strategy = Some(value.trim().to_string())
                }
                "nested-sequence-field" => fo.nested_sequence_field = split_list(value),
                "count-limit" => {
                    fo.count_limit = Some(value.trim().parse::<i32>().map_err(|_| {
                        Error::invalid(format!("option '{key}' must be an integer, got '{value}'"))
                    })?)
                }
                "ts-field" => fo.map_ts_field = Some(value.trim().to_string()),
                _ => {}
            }
        }
        Ok(cfg)
    }

    /// [`MergeConfig::from_table_options`] over a decoded table schema.
    ///
    /// # Errors
    /// As [`MergeConfig::from_table_options`].
    pub fn from_table_schema(schema: &TableSchema) -> Result<Self> {
        Self::from_table_options(
            schema.fields.clone(),
            schema.primary_keys.clone(),
            schema.partition_keys.clone(),
            &schema.options,
        )
    }

    /// Names of the key columns of the data files, without the `_KEY_` prefix: the primary
    /// keys minus the partition keys, in primary-key order.
    ///
    /// Source: Java `TableSchema.trimmedPrimaryKeys`.
    pub fn trimmed_primary_keys(&self) -> Vec<String> {
        let trimmed: Vec<String> = self
            .primary_keys
            .iter()
            .filter(|k| !self.partition_keys.contains(k))
            .cloned()
            .collect();
        if trimmed.is_empty() {
            self.primary_keys.clone()
        } else {
            trimmed
        }
    }

    /// The value columns a read must supply to the merge for the output `projection` (field
    /// names): the projection, then the `sequence.field` fields and the ordering fields of
    /// the sequence groups protecting projected fields that the projection lacks, in table
    /// order. The projection comes first, so the reader's output columns are
    /// `0..projection.len()`.
    ///
    /// Source: Java `PartialUpdateMergeFunction.Factory.adjustReadType` and the sequence
    /// field handling of `MergeFileSplitRead`.
    pub fn read_fields(&self, projection: &[String]) -> Vec<String> {
        let mut out: Vec<String> = projection.to_vec();
        let mut extra: Vec<&String> = self.sequence_fields.iter().collect();
        if self.engine == MergeEngine::PartialUpdate {
            for g in &self.sequence_groups {
                let touched = g
                    .protected
                    .iter()
                    .chain(g.ordering.iter())
                    .any(|f| projection.contains(f));
                if touched {
                    extra.extend(g.ordering.iter());
                }
            }
        }
        for f in &self.fields {
            if extra.contains(&&f.name) && !out.contains(&f.name) {
                out.push(f.name.clone());
            }
        }
        out
    }

    /// The Arrow schema of the merge input for the value columns `read_fields` (see
    /// [`MergeConfig::read_fields`]): `_KEY_<k>` for each trimmed primary key (the key field's
    /// type), `_SEQUENCE_NUMBER` (Int64, not null), `_VALUE_KIND` (Int8, not null), then the
    /// read fields, with the Arrow types of [`crate::types::paimon_to_arrow_field`].
    ///
    /// # Errors
    /// [`Error::Invalid`] for a key or read field that is not a table field; type mapping
    /// errors of [`crate::types::paimon_to_arrow_field`].
    pub fn input_schema(&self, read_fields: &[String]) -> Result<SchemaRef> {
        let field = |name: &str| {
            self.fields
                .iter()
                .find(|f| f.name == name)
                .ok_or_else(|| Error::invalid(format!("merge: '{name}' is not a table field")))
        };
        let mut out = Vec::new();
        for k in self.trimmed_primary_keys() {
            out.push(paimon_to_arrow_field(field(&k)?)?.with_name(format!("_KEY_{k}")));
        }
        out.push(Field::new("_SEQUENCE_NUMBER", ArrowType::Int64, false));
        out.push(Field::new("_VALUE_KIND", ArrowType::Int8, false));
        for name in read_fields {
            out.push(paimon_to_arrow_field(field(name)?)?);
        }
        Ok(Arc::new(Schema::new(out)))
    }

    /// The options of field `name` (defaults when none are set).
    pub fn field_options(&self, name: &str) -> FieldMergeOptions {
        self.field_options.get(name).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::spec::{DataType, TypeKind};

    fn field(id: i32, name: &str, kind: TypeKind) -> DataField {
        DataField {
            id,
            name: name.into(),
            data_type: DataType::nullable(kind),
            description: None,
            default_value: None,
        }
    }

    #[test]
    fn parses_options() {
        let opts: BTreeMap<String, String> = [
            ("merge-engine", "partial-update"),
            ("fields.a,b.sequence-group", "c, d"),
            ("fields.c.aggregate-function", "sum"),
            ("fields.c.ignore-retract", "TRUE"),
            ("fields.my.field.list-agg-delimiter", ";"),
            ("fields.default-aggregate-function", "last_value"),
            ("partial-update.ignore-delete", "true"),
            ("sequence.field", "a"),
            ("sequence.field.sort-order", "descending"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let fields = vec![field(0, "k", TypeKind::Int), field(1, "a", TypeKind::Int)];
        let cfg = MergeConfig::from_table_options(fields, vec!["k".into()], vec![], &opts)
            .expect("parse");
        assert_eq!(cfg.engine, MergeEngine::PartialUpdate);
        assert_eq!(
            cfg.sequence_groups,
            vec![SequenceGroup {
                ordering: vec!["a".into(), "b".into()],
                protected: vec!["c".into(), "d".into()]
            }]
        );
        let c = cfg.field_options("c");
        assert_eq!(c.aggregate_function.as_deref(), Some("sum"));
        assert!(c.ignore_retract);
        assert_eq!(
            cfg.field_options("my.field").list_agg_delimiter.as_deref(),
            Some(";")
        );
        assert_eq!(
            cfg.default_aggregate_function.as_deref(),
            Some("last_value")
        );
        assert!(cfg.ignore_delete);
        assert!(!cfg.sequence_ascending);
        assert_eq!(cfg.sequence_fields, vec!["a".to_string()]);
        let bad: BTreeMap<String, String> =
            [("merge-engine".to_string(), "nope".to_string())].into();
        assert!(matches!(
            MergeConfig::from_table_options(vec![], vec![], vec![], &bad),
            Err(Error::Unsupported { .. })
        ));
    }

    #[test]
    fn trimmed_keys_and_read_fields() {
        let mut cfg = MergeConfig::new(
            MergeEngine::PartialUpdate,
            vec![
                field(0, "dt", TypeKind::Int),
                field(1, "k", TypeKind::Int),
                field(2, "g", TypeKind::Int),
                field(3, "v", TypeKind::Int),
                field(4, "w", TypeKind::Int),
            ],
            vec!["dt".into(), "k".into()],
            vec!["dt".into()],
        );
        assert_eq!(cfg.trimmed_primary_keys(), vec!["k".to_string()]);
        cfg.sequence_groups.push(SequenceGroup {
            ordering: vec!["g".into()],
            protected: vec!["v".into()],
        });
        assert_eq!(
            cfg.read_fields(&["v".into(), "k".into()]),
            vec!["v".to_string(), "k".into(), "g".into()]
        );
        assert_eq!(cfg.read_fields(&["w".into()]), vec!["w".to_string()]);
    }
}
