//! The physical scan of a Paimon table: DataFusion partitions made of our splits, each read
//! by our split reader (merge-on-read, deletion vectors, data evolution, blob fallback).

use std::fmt;
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Statistics};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::{StreamExt, TryStreamExt};
use paimon_kernel::predicate::Predicate;
use paimon_kernel::scan::{DataSplit, Plan, TableKind};

use crate::table::TableScan;

/// What a scan pushed into our reader, for `EXPLAIN` and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Pushdown {
    /// Columns read, in output order (the one column read for a `COUNT(*)` without columns
    /// is named here, though no column is output).
    pub projection: Vec<String>,
    /// The filters pushed, as our predicate text, each with `exact` or `inexact`.
    pub filters: Vec<(String, bool)>,
    /// Rows asked for (`LIMIT` pushed down), if any.
    pub limit: Option<usize>,
}

/// Reads the splits of one plan as DataFusion partitions.
///
/// Partition `i` reads the splits of group `i` in plan order, through the same bounded,
/// read-ahead stream as [`TableScan::to_stream`]. Splits are spread over at most
/// `target_partitions` groups of about equal data-file bytes (one group when a `LIMIT` was
/// pushed, so that only the first splits are read). Tables that read a second branch
/// (`scan.fallback-branch`) are read as one partition through [`TableScan::to_stream`].
#[derive(Debug)]
pub struct PaimonScanExec {
    /// The scan, with projection, filter and limit set.
    scan: TableScan,
    /// The plan (`None` for a fallback-branch table: planned again when read).
    plan: Option<Arc<Plan>>,
    /// Split indices of each partition.
    groups: Vec<Vec<usize>>,
    /// The output schema (may have no columns: `COUNT(*)`).
    schema: SchemaRef,
    /// What was pushed, for display.
    pushdown: Pushdown,
    /// Splits read concurrently within one partition.
    splits_in_flight: usize,
    properties: Arc<PlanProperties>,
}

impl PaimonScanExec {
    /// A scan of `plan` (`None`: a fallback-branch table) reading `scan` into `schema`.
    pub(crate) fn new(
        scan: TableScan,
        plan: Option<Plan>,
        schema: SchemaRef,
        pushdown: Pushdown,
        target_partitions: usize,
    ) -> Self {
        let groups = match &plan {
            None => vec![Vec::new()],
            Some(p) if pushdown.limit.is_some() => vec![(0..p.splits.len()).collect()],
            Some(p) => group_by_bytes(&split_bytes(&p.splits), target_partitions.max(1)),
        };
        // Small LIMITs read one split at a time: the first split usually holds the rows.
        let first_rows = plan
            .as_ref()
            .and_then(|p| p.splits.first())
            .map_or(0, |s| s.row_count());
        let splits_in_flight = match pushdown.limit {
            Some(l) if (l as i64) <= first_rows => 1,
            _ => (crate::scan::default_splits_in_flight() / groups.len().max(1)).max(1),
        };
        let properties = PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(groups.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        PaimonScanExec {
            scan,
            plan: plan.map(Arc::new),
            groups,
            schema,
            pushdown,
            splits_in_flight,
            properties: Arc::new(properties),
        }
    }

    /// The plan read (`None` for a table reading a fallback branch).
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_deref()
    }

    /// What was pushed into the read.
    pub fn pushdown(&self) -> &Pushdown {
        &self.pushdown
    }

    /// Splits of each partition (indices into [`Plan::splits`]).
    pub fn partition_splits(&self) -> &[Vec<usize>] {
        &self.groups
    }

    /// Row and byte statistics of the splits in `indices` (all splits when `None`).
    fn stats(&self, indices: Option<&[usize]>) -> Statistics {
        let mut stats = Statistics::new_unknown(&self.schema);
        let Some(plan) = &self.plan else {
            return stats;
        };
        let splits: Vec<&DataSplit> = match indices {
            Some(i) => i.iter().filter_map(|&i| plan.splits.get(i)).collect(),
            None => plan.splits.iter().collect(),
        };
        let rows: i64 = splits.iter().map(|s| s.row_count()).sum();
        let bytes: i64 = splits
            .iter()
            .flat_map(|s| s.data_files.iter().map(|f| f.file_size))
            .sum();
        // Rows are exact only when every stored row is returned: an append table without
        // deletion vectors, nothing filtered or limited.
        let exact = plan.table_kind == TableKind::Append
            && splits.iter().all(|s| {
                s.deletion_files
                    .as_ref()
                    .is_none_or(|d| d.iter().all(Option::is_none))
            })
            && plan.row_ranges.is_none()
            && self.pushdown.filters.is_empty();
        let rows = usize::try_from(rows).unwrap_or(0);
        stats.num_rows = match self.pushdown.limit {
            Some(l) if l < rows => Precision::Inexact(l),
            _ if exact => Precision::Exact(rows),
            _ => Precision::Inexact(rows),
        };
        stats.total_byte_size = Precision::Inexact(usize::try_from(bytes).unwrap_or(0));
        stats
    }

    /// The stream of partition `partition`.
    fn stream(&self, partition: usize) -> crate::Result<crate::RecordBatchStream> {
        let scan = self
            .scan
            .clone()
            .with_splits_in_flight(self.splits_in_flight);
        let Some(plan) = &self.plan else {
            let stream = futures::stream::once(async move { scan.to_stream().await })
                .try_flatten()
                .boxed();
            return Ok(crate::RecordBatchStream::from_parts(
                Arc::clone(&self.schema),
                stream,
            ));
        };
        let mut part = Plan::clone(plan);
        let indices = self.groups.get(partition).cloned().unwrap_or_default();
        let mut splits: Vec<Option<DataSplit>> = std::mem::take(&mut part.splits)
            .into_iter()
            .map(Some)
            .collect();
        part.splits = indices
            .iter()
            .filter_map(|&i| splits.get_mut(i).and_then(Option::take))
            .collect();
        let filter: Option<Predicate> = scan.predicate()?;
        scan.stream_plan(part, filter.as_ref())
    }
}

/// Data-file bytes of each split.
fn split_bytes(splits: &[DataSplit]) -> Vec<i64> {
    splits
        .iter()
        .map(|s| s.data_files.iter().map(|f| f.file_size).sum())
        .collect()
}

/// Spread splits of `bytes` over at most `n` groups of about equal bytes (largest split
/// first into the lightest group); each group keeps plan order.
fn group_by_bytes(bytes: &[i64], n: usize) -> Vec<Vec<usize>> {
    let n = n.min(bytes.len()).max(1);
    let mut order: Vec<(i64, usize)> = bytes.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut groups: Vec<(i64, Vec<usize>)> = vec![(0, Vec::new()); n];
    for (bytes, i) in order {
        if let Some(g) = groups.iter_mut().min_by_key(|g| g.0) {
            g.0 += bytes;
            g.1.push(i);
        }
    }
    groups
        .into_iter()
        .map(|(_, mut g)| {
            g.sort_unstable();
            g
        })
        .collect()
}

impl DisplayAs for PaimonScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.pushdown;
        let filters: Vec<String> = p
            .filters
            .iter()
            .map(|(text, exact)| format!("{text} ({})", if *exact { "exact" } else { "inexact" }))
            .collect();
        let sep = match t {
            DisplayFormatType::TreeRender => "\n",
            _ => ", ",
        };
        if !matches!(t, DisplayFormatType::TreeRender) {
            write!(f, "PaimonScanExec: ")?;
        }
        write!(f, "table={}", self.scan.table.location())?;
        let Some(plan) = &self.plan else {
            return write!(
                f,
                "{sep}projection=[{}]{sep}filters=[{}]{sep}limit={}{sep}reads a fallback branch",
                p.projection.join(", "),
                filters.join(", "),
                p.limit.map_or("none".to_string(), |l| l.to_string())
            );
        };
        let files: usize = plan.splits.iter().map(|s| s.data_files.len()).sum();
        let pruned = &plan.pruned;
        write!(
            f,
            "{sep}snapshot={}{sep}projection=[{}]{sep}filters=[{}]{sep}limit={}{sep}\
             splits={}{sep}partitions={}{sep}files={files} of {} (pruned {} by partition, \
             {} by stats)",
            plan.snapshot
                .as_ref()
                .map_or("none".to_string(), |s| s.id.to_string()),
            p.projection.join(", "),
            filters.join(", "),
            p.limit.map_or("none".to_string(), |l| l.to_string()),
            plan.splits.len(),
            self.groups.len(),
            pruned.live_files,
            pruned.by_partition,
            pruned.by_stats,
        )
    }
}

impl ExecutionPlan for PaimonScanExec {
    fn name(&self) -> &str {
        "PaimonScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> datafusion::common::Result<TreeNodeRecursion>,
    ) -> datafusion::common::Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "PaimonScanExec has no children".into(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> datafusion::common::Result<SendableRecordBatchStream> {
        if partition >= self.groups.len().max(1) {
            return Err(DataFusionError::Internal(format!(
                "PaimonScanExec: partition {partition} of {}",
                self.groups.len()
            )));
        }
        let stream = self.stream(partition).map_err(super::to_df)?;
        let schema = Arc::clone(&self.schema);
        let out = Arc::clone(&schema);
        let stream = stream.map(move |batch| {
            let batch = batch.map_err(super::to_df)?;
            if out.fields().is_empty() {
                // COUNT(*): the column read only carries the row count.
                let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
                return RecordBatch::try_new_with_options(Arc::clone(&out), Vec::new(), &options)
                    .map_err(DataFusionError::from);
            }
            Ok(batch)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> datafusion::common::Result<Arc<Statistics>> {
        Ok(Arc::new(match args.partition() {
            Some(p) => self.stats(Some(self.groups.get(p).map_or(&[][..], |g| &g[..]))),
            None => self.stats(None),
        }))
    }
}

impl PaimonScanExec {
    /// The table read.
    pub fn table(&self) -> &crate::Table {
        &self.scan.table
    }

    /// Live data files of the planned snapshot that this scan does not read (pruned by
    /// partition or statistics, or skipped by a batch scan's level rules), as paths relative
    /// to the table (or absolute for external files), in manifest order.
    ///
    /// # Errors
    /// As [`TableScan::files`].
    pub async fn pruned_files(&self) -> crate::Result<Vec<String>> {
        let Some(snapshot) = self.plan.as_ref().and_then(|p| p.snapshot.as_ref()) else {
            return Ok(Vec::new());
        };
        let read: std::collections::BTreeSet<&str> = self
            .plan
            .iter()
            .flat_map(|p| p.splits.iter())
            .flat_map(|s| s.data_files.iter().map(|f| f.file_name.as_str()))
            .collect();
        let rows = self
            .scan
            .table
            .scan()
            .with_snapshot_id(snapshot.id)
            .files()
            .await?;
        let root = format!("{}/", self.scan.table.location().trim_end_matches('/'));
        Ok(rows
            .into_iter()
            .filter(|r| {
                let name = r.file_path.rsplit('/').next().unwrap_or(&r.file_path);
                !read.contains(name)
            })
            .map(|r| {
                r.file_path
                    .strip_prefix(&root)
                    .map_or(r.file_path.clone(), str::to_string)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::group_by_bytes;

    #[test]
    fn splits_spread_by_bytes_and_keep_plan_order() {
        let bytes = [10, 50, 20, 30, 40];
        // 50 + 20 + 10 against 40 + 30.
        assert_eq!(group_by_bytes(&bytes, 2), vec![vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(group_by_bytes(&bytes, 9).len(), 5);
        assert_eq!(group_by_bytes(&[], 4), vec![Vec::<usize>::new()]);
    }
}
