//! System tables as SQL tables: `t$snapshots`, `t$schemas`, `t$tags`, `t$manifests`,
//! `t$files`, with Java 2.0's columns (names, order, types, nullability).
//!
//! Source: Java `org.apache.paimon.table.system.{SnapshotsTable, SchemasTable, TagsTable,
//! ManifestsTable, FilesTable}` (release-2.0.0). Java renders `TIMESTAMP(3)` columns of commit
//! and update times in the JVM's time zone; here they are UTC (the same values under
//! `TZ=UTC`). `$files` and `$manifests` describe the snapshot the table provider reads (the
//! latest one unless opened at a snapshot, tag or time).

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::catalog::memory::MemorySourceConfig;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use paimon_kernel::spec::snapshot::{JavaDuration, LocalDateTime};

use crate::error::{Error, Result};
use crate::table::TableScan;

/// Which system table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemTableKind {
    /// `$snapshots`: every snapshot still present.
    Snapshots,
    /// `$schemas`: every schema file.
    Schemas,
    /// `$tags`: tags and the snapshots they pin.
    Tags,
    /// `$manifests`: the data manifests of the snapshot read.
    Manifests,
    /// `$files`: the live data files of the snapshot read.
    Files,
}

impl SystemTableKind {
    /// Every kind, in the order listed by a catalog.
    pub const ALL: [SystemTableKind; 5] = [
        SystemTableKind::Snapshots,
        SystemTableKind::Schemas,
        SystemTableKind::Tags,
        SystemTableKind::Manifests,
        SystemTableKind::Files,
    ];

    /// The suffix after `$` (Java's names).
    pub fn name(self) -> &'static str {
        match self {
            SystemTableKind::Snapshots => "snapshots",
            SystemTableKind::Schemas => "schemas",
            SystemTableKind::Tags => "tags",
            SystemTableKind::Manifests => "manifests",
            SystemTableKind::Files => "files",
        }
    }

    /// The kind named `name` (case-insensitive), if we have it.
    pub fn parse(name: &str) -> Option<SystemTableKind> {
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }

    /// The columns, as Java declares them.
    pub fn schema(self) -> SchemaRef {
        let s = |name: &str, nullable| Field::new(name, DataType::Utf8, nullable);
        let i64 = |name: &str, nullable| Field::new(name, DataType::Int64, nullable);
        let ts = |name: &str, nullable| {
            Field::new(
                name,
                DataType::Timestamp(TimeUnit::Millisecond, None),
                nullable,
            )
        };
        let fields = match self {
            SystemTableKind::Snapshots => vec![
                i64("snapshot_id", false),
                i64("schema_id", false),
                s("commit_user", false),
                i64("commit_identifier", false),
                s("commit_kind", false),
                ts("commit_time", false),
                s("base_manifest_list", false),
                s("delta_manifest_list", false),
                s("changelog_manifest_list", true),
                i64("total_record_count", true),
                i64("delta_record_count", true),
                i64("changelog_record_count", true),
                i64("watermark", true),
                i64("next_row_id", true),
                s("operation", true),
            ],
            SystemTableKind::Schemas => vec![
                i64("schema_id", false),
                s("fields", false),
                s("partition_keys", false),
                s("primary_keys", false),
                s("options", false),
                s("comment", true),
                ts("update_time", false),
            ],
            SystemTableKind::Tags => vec![
                s("tag_name", false),
                i64("snapshot_id", false),
                i64("schema_id", false),
                ts("commit_time", false),
                i64("record_count", true),
                ts("create_time", true),
                s("time_retained", true),
            ],
            SystemTableKind::Manifests => vec![
                s("file_name", false),
                i64("file_size", false),
                i64("num_added_files", false),
                i64("num_deleted_files", false),
                i64("schema_id", false),
                s("min_partition_stats", true),
                s("max_partition_stats", true),
                i64("min_row_id", true),
                i64("max_row_id", true),
            ],
            SystemTableKind::Files => vec![
                s("partition", true),
                Field::new("bucket", DataType::Int32, false),
                s("file_path", false),
                s("file_format", false),
                i64("schema_id", false),
                Field::new("level", DataType::Int32, false),
                i64("record_count", false),
                i64("file_size_in_bytes", false),
                s("min_key", true),
                s("max_key", true),
                s("null_value_counts", false),
                s("min_value_stats", false),
                s("max_value_stats", false),
                i64("min_sequence_number", true),
                i64("max_sequence_number", true),
                ts("creation_time", true),
                i64("deleteRowCount", true),
                s("file_source", true),
                i64("first_row_id", true),
                Field::new(
                    "write_cols",
                    DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true))),
                    true,
                ),
            ],
        };
        Arc::new(Schema::new(fields))
    }
}

/// A system table of one Paimon table, computed when scanned.
#[derive(Debug, Clone)]
pub struct SystemTable {
    scan: TableScan,
    kind: SystemTableKind,
    schema: SchemaRef,
}

impl SystemTable {
    /// System table `kind` of the table (and snapshot) of `scan`.
    pub fn new(scan: TableScan, kind: SystemTableKind) -> Self {
        SystemTable {
            scan,
            kind,
            schema: kind.schema(),
        }
    }

    /// Its rows, as one batch.
    ///
    /// # Errors
    /// As the [`crate::Table`] call that reads them (a missing or corrupt metadata file).
    pub async fn batch(&self) -> Result<RecordBatch> {
        let columns: Vec<ArrayRef> = match self.kind {
            SystemTableKind::Snapshots => snapshots(&self.scan.table.snapshots().await?),
            SystemTableKind::Schemas => schemas(&self.scan.table.all_schemas().await?),
            SystemTableKind::Tags => tags(&self.scan.table.tags().await?),
            SystemTableKind::Manifests => manifests(&self.scan.manifest_rows().await?),
            SystemTableKind::Files => files(&self.scan.files().await?),
        };
        RecordBatch::try_new(Arc::clone(&self.schema), columns).map_err(|e| {
            Error::kernel(
                format!("building ${} of {}", self.kind.name(), self.scan.reading()),
                paimon_kernel::Error::invalid(e.to_string()),
            )
        })
    }
}

fn strings<I: IntoIterator<Item = Option<String>>>(v: I) -> ArrayRef {
    Arc::new(v.into_iter().collect::<StringArray>())
}

fn longs<I: IntoIterator<Item = Option<i64>>>(v: I) -> ArrayRef {
    Arc::new(v.into_iter().collect::<Int64Array>())
}

fn millis<I: IntoIterator<Item = Option<i64>>>(v: I) -> ArrayRef {
    Arc::new(v.into_iter().collect::<TimestampMillisecondArray>())
}

fn snapshots(rows: &[paimon_kernel::spec::Snapshot]) -> Vec<ArrayRef> {
    vec![
        longs(rows.iter().map(|s| Some(s.id))),
        longs(rows.iter().map(|s| Some(s.schema_id))),
        strings(rows.iter().map(|s| Some(s.commit_user.clone()))),
        longs(rows.iter().map(|s| Some(s.commit_identifier))),
        strings(rows.iter().map(|s| Some(s.commit_kind.to_string()))),
        millis(rows.iter().map(|s| Some(s.time_millis))),
        strings(rows.iter().map(|s| Some(s.base_manifest_list.clone()))),
        strings(rows.iter().map(|s| Some(s.delta_manifest_list.clone()))),
        strings(rows.iter().map(|s| s.changelog_manifest_list.clone())),
        longs(rows.iter().map(|s| Some(s.total_record_count))),
        longs(rows.iter().map(|s| Some(s.delta_record_count))),
        longs(rows.iter().map(|s| s.changelog_record_count)),
        longs(rows.iter().map(|s| s.watermark)),
        longs(rows.iter().map(|s| s.next_row_id)),
        strings(rows.iter().map(|s| s.operation.clone())),
    ]
}

fn schemas(rows: &[paimon_kernel::spec::TableSchema]) -> Vec<ArrayRef> {
    let json = |v: serde_json::Result<String>| Some(v.unwrap_or_default());
    vec![
        longs(rows.iter().map(|s| Some(s.id))),
        strings(rows.iter().map(|s| json(serde_json::to_string(&s.fields)))),
        strings(
            rows.iter()
                .map(|s| json(serde_json::to_string(&s.partition_keys))),
        ),
        strings(
            rows.iter()
                .map(|s| json(serde_json::to_string(&s.primary_keys))),
        ),
        strings(rows.iter().map(|s| json(serde_json::to_string(&s.options)))),
        strings(rows.iter().map(|s| s.comment.clone())),
        millis(rows.iter().map(|s| Some(s.time_millis))),
    ]
}

fn tags(rows: &[(String, paimon_kernel::spec::Tag)]) -> Vec<ArrayRef> {
    vec![
        strings(rows.iter().map(|(n, _)| Some(n.clone()))),
        longs(rows.iter().map(|(_, t)| Some(t.snapshot.id))),
        longs(rows.iter().map(|(_, t)| Some(t.snapshot.schema_id))),
        millis(rows.iter().map(|(_, t)| Some(t.snapshot.time_millis))),
        longs(
            rows.iter()
                .map(|(_, t)| Some(t.snapshot.total_record_count)),
        ),
        millis(
            rows.iter()
                .map(|(_, t)| t.tag_create_time.as_ref().map(local_millis)),
        ),
        strings(
            rows.iter()
                .map(|(_, t)| t.tag_time_retained.as_ref().map(java_duration)),
        ),
    ]
}

fn manifests(rows: &[crate::system::ManifestRow]) -> Vec<ArrayRef> {
    vec![
        strings(rows.iter().map(|r| Some(r.file_name.clone()))),
        longs(rows.iter().map(|r| Some(r.file_size))),
        longs(rows.iter().map(|r| Some(r.num_added_files))),
        longs(rows.iter().map(|r| Some(r.num_deleted_files))),
        longs(rows.iter().map(|r| Some(r.schema_id))),
        strings(rows.iter().map(|r| r.min_partition_stats.clone())),
        strings(rows.iter().map(|r| r.max_partition_stats.clone())),
        longs(rows.iter().map(|r| r.min_row_id)),
        longs(rows.iter().map(|r| r.max_row_id)),
    ]
}

fn files(rows: &[crate::system::FileRow]) -> Vec<ArrayRef> {
    let mut write_cols = ListBuilder::new(StringBuilder::new());
    for r in rows {
        match &r.write_cols {
            Some(cols) => {
                for c in cols {
                    write_cols.values().append_value(c);
                }
                write_cols.append(true);
            }
            None => write_cols.append(false),
        }
    }
    vec![
        strings(rows.iter().map(|r| Some(r.partition.clone()))),
        Arc::new(rows.iter().map(|r| Some(r.bucket)).collect::<Int32Array>()),
        strings(rows.iter().map(|r| Some(r.file_path.clone()))),
        strings(rows.iter().map(|r| Some(r.file_format.clone()))),
        longs(rows.iter().map(|r| Some(r.schema_id))),
        Arc::new(rows.iter().map(|r| Some(r.level)).collect::<Int32Array>()),
        longs(rows.iter().map(|r| Some(r.record_count))),
        longs(rows.iter().map(|r| Some(r.file_size_in_bytes))),
        strings(rows.iter().map(|r| r.min_key.clone())),
        strings(rows.iter().map(|r| r.max_key.clone())),
        strings(rows.iter().map(|r| Some(r.null_value_counts.clone()))),
        strings(rows.iter().map(|r| Some(r.min_value_stats.clone()))),
        strings(rows.iter().map(|r| Some(r.max_value_stats.clone()))),
        longs(rows.iter().map(|r| Some(r.min_sequence_number))),
        longs(rows.iter().map(|r| Some(r.max_sequence_number))),
        millis(rows.iter().map(|r| r.creation_time)),
        longs(rows.iter().map(|r| r.delete_row_count)),
        strings(rows.iter().map(|r| r.file_source.clone())),
        longs(rows.iter().map(|r| r.first_row_id)),
        Arc::new(write_cols.finish()),
    ]
}

/// Milliseconds since 1970-01-01T00:00 of a wall-clock time (read as UTC).
fn local_millis(t: &LocalDateTime) -> i64 {
    let days = days_from_civil(i64::from(t.year), i64::from(t.month), i64::from(t.day));
    let seconds =
        days * 86_400 + i64::from(t.hour) * 3_600 + i64::from(t.minute) * 60 + i64::from(t.second);
    seconds * 1_000 + i64::from(t.nano / 1_000_000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Java `Duration#toString`: `PT8H6M12.345S`, `PT0S`.
fn java_duration(d: &JavaDuration) -> String {
    if d.seconds == 0 && d.nanos == 0 {
        return "PT0S".to_string();
    }
    // Java normalizes a negative duration to negative seconds and positive nanos.
    let (mut secs, mut nanos) = (d.seconds, i64::from(d.nanos));
    let negative = secs < 0;
    if negative && nanos > 0 {
        secs += 1;
        nanos = 1_000_000_000 - nanos;
    }
    let hours = secs / 3_600;
    let minutes = (secs % 3_600) / 60;
    let seconds = secs % 60;
    let mut out = String::from("PT");
    if hours != 0 {
        out.push_str(&format!("{hours}H"));
    }
    if minutes != 0 {
        out.push_str(&format!("{minutes}M"));
    }
    if seconds == 0 && nanos == 0 && out.len() > 2 {
        return out;
    }
    if negative && seconds == 0 && nanos > 0 {
        out.push_str("-0");
    } else {
        out.push_str(&seconds.to_string());
    }
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    out.push('S');
    out
}

#[async_trait]
impl TableProvider for SystemTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let batch = self.batch().await.map_err(super::to_df)?;
        let exec = MemorySourceConfig::try_new_exec(
            &[vec![batch]],
            Arc::clone(&self.schema),
            projection.cloned(),
        )?;
        Ok(exec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_java_does() {
        let d = |seconds, nanos| java_duration(&JavaDuration { seconds, nanos });
        assert_eq!(d(0, 0), "PT0S");
        assert_eq!(d(3_600, 0), "PT1H");
        assert_eq!(d(86_400 * 2, 0), "PT48H");
        assert_eq!(d(29_172, 345_000_000), "PT8H6M12.345S");
        assert_eq!(d(90, 0), "PT1M30S");
        assert_eq!(d(-1, 500_000_000), "PT-0.5S");
    }

    #[test]
    fn wall_clock_times_count_from_the_epoch() {
        let t = LocalDateTime {
            year: 2024,
            month: 3,
            day: 1,
            hour: 12,
            minute: 30,
            second: 15,
            nano: 250_000_000,
        };
        assert_eq!(local_millis(&t), 1_709_296_215_250);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }

    #[test]
    fn every_kind_has_java_names() {
        for k in SystemTableKind::ALL {
            assert_eq!(SystemTableKind::parse(k.name()), Some(k));
        }
        let files = SystemTableKind::Files.schema();
        assert_eq!(files.fields().len(), 20);
        assert_eq!(files.field(16).name(), "deleteRowCount");
        assert_eq!(SystemTableKind::Snapshots.schema().fields().len(), 15);
    }
}
