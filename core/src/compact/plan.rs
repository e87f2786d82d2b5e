//! The compaction plan as JSON: one shape for every table kind, so that plans of different
//! implementations (ours, the Java oracle's) compare as values.

use serde::{Deserialize, Serialize};

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
