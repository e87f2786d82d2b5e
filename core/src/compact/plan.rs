//! The compaction plan as JSON: one shape for every table kind, so that plans of different
//! implementations (ours, the Java oracle's) compare as values.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::spec::{BinaryRow, DataField, DataType, Datum};

/// The compaction planned for one snapshot of a table.
///
/// JSON: `{"snapshot": N, "units": [...]}`; `units` sorted by (partition JSON, bucket,
/// first file name) so two plans compare as values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionPlan {
    /// The snapshot the plan was made on (`None` for a table without snapshots).
    pub snapshot: Option<i64>,
    /// The compaction units (tasks), one per rewrite or upgrade.
    pub units: Vec<CompactionUnitSummary>,
}

/// One compaction unit of a [`CompactionPlan`].
///
/// Source: the unit shape of Java `org.apache.paimon.compact.CompactUnit` (primary-key
/// tables) and of the append / data-evolution compaction tasks (`output_level` `None`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionUnitSummary {
    /// Partition values by partition key, as canonical JSON values (an empty object when
    /// the table is unpartitioned).
    pub partition: serde_json::Map<String, serde_json::Value>,
    /// The bucket.
    pub bucket: i32,
    /// The level the outputs go to (primary-key tables); `None` for append and
    /// data-evolution tasks.
    pub output_level: Option<i32>,
    /// Whether the unit only moves its single file to `output_level` without rewriting it.
    pub upgrade: bool,
    /// The input data files' names, sorted.
    pub files: Vec<String>,
}

impl CompactionPlan {
    /// Sorts the units into the canonical order (partition JSON, bucket, first file).
    pub fn sort(&mut self) {
        self.units.sort_by(|a, b| {
            let pa = serde_json::Value::Object(a.partition.clone()).to_string();
            let pb = serde_json::Value::Object(b.partition.clone()).to_string();
            (pa, a.bucket, a.files.first()).cmp(&(pb, b.bucket, b.files.first()))
        });
        for u in &mut self.units {
            u.files.sort();
        }
    }
}

/// Partition values as a JSON object keyed by partition key: integers and booleans as JSON
/// values, NULL as `null`, other types as their string form (the plan JSON's convention).
///
/// # Errors
/// [`crate::Error::Corrupt`] when the row does not decode with `fields`' types.
pub fn partition_json(
    partition: &BinaryRow,
    fields: &[DataField],
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let mut out = serde_json::Map::new();
    if fields.is_empty() {
        return Ok(out);
    }
    let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
    for (f, v) in fields.iter().zip(partition.fields(&types)?) {
        let j = match &v {
            Datum::Null => serde_json::Value::Null,
            Datum::Boolean(b) => serde_json::Value::Bool(*b),
            Datum::TinyInt(x) => serde_json::Value::from(*x),
            Datum::SmallInt(x) => serde_json::Value::from(*x),
            Datum::Int(x) => serde_json::Value::from(*x),
            Datum::BigInt(x) => serde_json::Value::from(*x),
            other => other
                .cast_to_string(&f.data_type)
                .map_or(serde_json::Value::Null, serde_json::Value::String),
        };
        out.insert(f.name.clone(), j);
    }
    Ok(out)
}
