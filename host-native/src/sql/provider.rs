//! [`PaimonTableProvider`]: a Paimon table (at its latest snapshot, a snapshot, a tag or a
//! timestamp; on a branch) as a DataFusion table.

use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::{DataFusionError, Statistics};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use paimon_kernel::predicate::Predicate;
use paimon_kernel::scan::branch::{SCAN_FALLBACK_BRANCH, SCAN_PRIMARY_BRANCH};
use paimon_kernel::scan::snapshot_resolver::TimeTravel;
use paimon_kernel::spec::{DataField, TableSchema, TypeKind};
use paimon_kernel::types::paimon_to_arrow_field;

use super::exec::{PaimonScanExec, Pushdown};
use super::filter::translate;
use super::sink::PaimonSink;
use crate::error::{Error, Result};
use crate::table::{Table, TableScan};

/// A Paimon table as a DataFusion [`TableProvider`].
///
/// * Schema: the table's columns (the latest schema, or the schema of the snapshot a time
///   travel reads), Paimon types as the reader returns them (`BLOB` as `LargeBinary`,
///   `TIMESTAMP_LTZ` as a UTC timestamp...), partition columns included.
/// * Every query plans the snapshot anew (the latest one unless the provider was opened at a
///   snapshot, tag or time), so rows committed since registration are seen. A query after a
///   schema change fails with a message to register the table again.
/// * Pushdown: projection; filters translated to our [`Predicate`] (exact or inexact, see
///   [`super::filter`]) prune partitions and files by manifest statistics and are applied to
///   rows by our reader; `LIMIT` (DataFusion pushes it only when every filter is exact).
/// * Execution: [`PaimonScanExec`], whose partitions are groups of our splits read by our
///   split reader; row and byte statistics from the plan.
/// * `INSERT INTO` / `INSERT OVERWRITE` ([`PaimonSink`]): through [`crate::TableWriter`] and
///   one commit; refused for a provider opened at a snapshot, tag or time, or on a branch.
///
/// Source: the read and write paths of Java `org.apache.paimon.table.FileStoreTable` (batch
/// scan and `BatchWriteBuilder`), exposed as Flink's and Spark's Paimon sources and sinks do.
#[derive(Debug, Clone)]
pub struct PaimonTableProvider {
    scan: TableScan,
    schema: TableSchema,
    arrow: SchemaRef,
}

impl PaimonTableProvider {
    /// The table at `location`, at its latest snapshot.
    ///
    /// # Errors
    /// As [`Table::open`] and [`Table::schema`].
    pub async fn open(location: &str) -> Result<Self> {
        Self::try_new(Table::open(location).await?.scan()).await
    }

    /// The table and snapshot of `scan` (only its time travel is used: projection, filter and
    /// limit come from each query).
    ///
    /// # Errors
    /// As [`TableScan::snapshot`]; `Unsupported` for a column type that has no Arrow form.
    pub async fn try_new(scan: TableScan) -> Result<Self> {
        let schema = match scan.snapshot().await? {
            Some((_, schema)) => schema,
            None => scan.table.schema().await?,
        };
        let arrow = arrow_schema(&schema).map_err(|e| Error::kernel(scan.reading(), e))?;
        let scan = TableScan {
            table: scan.table,
            travel: scan.travel,
            read: Default::default(),
        };
        Ok(PaimonTableProvider {
            scan,
            schema,
            arrow,
        })
    }

    /// The table read.
    pub fn table(&self) -> &Table {
        &self.scan.table
    }

    /// The Paimon schema the columns come from.
    pub fn table_schema(&self) -> &TableSchema {
        &self.schema
    }

    /// Whether this provider reads the latest snapshot of the main branch (the only kind that
    /// takes `INSERT`).
    fn writable(&self) -> std::result::Result<(), String> {
        if self.scan.table.branch() != paimon_kernel::scan::branch::MAIN_BRANCH {
            return Err(format!(
                "branch {} of table {} is read-only in SQL: INSERT writes the main branch",
                self.scan.table.branch(),
                self.scan.table.location()
            ));
        }
        if self.scan.travel != TimeTravel::Latest {
            return Err(format!(
                "table {} is opened at {}: INSERT needs the table at its latest snapshot",
                self.scan.table.location(),
                self.scan.travel
            ));
        }
        Ok(())
    }

    /// Whether a scan of this table may read another branch's partitions.
    fn reads_two_branches(&self) -> bool {
        let set = |k: &str| {
            self.schema
                .options
                .get(k)
                .is_some_and(|v| !v.trim().is_empty())
        };
        set(SCAN_FALLBACK_BRANCH) || set(SCAN_PRIMARY_BRANCH)
    }

    /// The column read for a scan that outputs none (`COUNT(*)`): the first primary key, else
    /// the first partition key, else the first column of a primitive type, else the first.
    fn count_column(&self) -> String {
        let primitive = |f: &&DataField| {
            !matches!(
                f.data_type.kind,
                TypeKind::Blob
                    | TypeKind::Array(_)
                    | TypeKind::Map(_, _)
                    | TypeKind::Multiset(_)
                    | TypeKind::Row(_)
                    | TypeKind::Variant
                    | TypeKind::Vector { .. }
                    | TypeKind::Other(_)
            )
        };
        self.schema
            .primary_keys
            .first()
            .or(self.schema.partition_keys.first())
            .cloned()
            .or_else(|| {
                self.schema
                    .fields
                    .iter()
                    .find(primitive)
                    .map(|f| f.name.clone())
            })
            .or_else(|| self.schema.fields.first().map(|f| f.name.clone()))
            .unwrap_or_default()
    }

    /// Plan a read: the physical scan with what DataFusion pushed.
    ///
    /// # Errors
    /// As [`TableScan::plan`]; `Invalid` when the table's schema changed since the provider
    /// was made.
    pub async fn scan_exec(
        &self,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        target_partitions: usize,
    ) -> Result<PaimonScanExec> {
        let mut pushed: Vec<(Predicate, bool)> = Vec::new();
        for f in filters {
            if let Some(p) = translate(f, &self.arrow) {
                let exact = p.pushdown == TableProviderFilterPushDown::Exact;
                pushed.push((p.predicate, exact));
            }
        }
        let (names, output): (Vec<String>, SchemaRef) = match projection {
            None => (
                self.schema.fields.iter().map(|f| f.name.clone()).collect(),
                Arc::clone(&self.arrow),
            ),
            Some(p) if p.is_empty() => (vec![self.count_column()], Arc::new(Schema::empty())),
            Some(p) => {
                let projected = self
                    .arrow
                    .project(p)
                    .map_err(|e| self.invalid(format!("projection {p:?}: {e}")))?;
                (
                    projected
                        .fields()
                        .iter()
                        .map(|f| f.name().clone())
                        .collect(),
                    Arc::new(projected),
                )
            }
        };
        let mut scan = self.scan.clone().with_projection(names.clone());
        let filter = match pushed.len() {
            0 => None,
            1 => Some(pushed[0].0.clone()),
            _ => Some(Predicate::And(pushed.iter().map(|p| p.0.clone()).collect())),
        };
        if let Some(f) = &filter {
            scan = scan.with_filter(f.clone());
        }
        if let Some(l) = limit {
            scan = scan.with_limit(l as u64);
        }
        let plan = if self.reads_two_branches() {
            None
        } else {
            let plan = scan.plan_with(filter).await?;
            if plan.schema.fields != self.schema.fields {
                return Err(self.invalid(format!(
                    "the table's columns changed since it was registered (schema {} now, {} \
                     then): register the table again",
                    plan.schema.id, self.schema.id
                )));
            }
            Some(plan)
        };
        let pushdown = Pushdown {
            projection: names,
            filters: pushed.iter().map(|(p, e)| (p.to_string(), *e)).collect(),
            limit,
        };
        Ok(PaimonScanExec::new(
            scan,
            plan,
            output,
            pushdown,
            target_partitions,
        ))
    }

    fn invalid(&self, detail: String) -> Error {
        Error::kernel(self.scan.reading(), paimon_kernel::Error::invalid(detail))
    }
}

/// The Arrow schema of a table's columns, as our reader returns them.
pub(crate) fn arrow_schema(schema: &TableSchema) -> paimon_kernel::Result<SchemaRef> {
    let fields = schema
        .fields
        .iter()
        .map(paimon_to_arrow_field)
        .collect::<paimon_kernel::Result<Vec<_>>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

#[async_trait]
impl TableProvider for PaimonTableProvider {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.arrow)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let target = state.config().target_partitions();
        let exec = self
            .scan_exec(projection, filters, limit, target)
            .await
            .map_err(super::to_df)?;
        Ok(Arc::new(exec))
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::common::Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                translate(f, &self.arrow)
                    .map_or(TableProviderFilterPushDown::Unsupported, |p| p.pushdown)
            })
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        None
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        self.writable().map_err(DataFusionError::Plan)?;
        let overwrite = match insert_op {
            InsertOp::Append => false,
            InsertOp::Overwrite => true,
            InsertOp::Replace => {
                return Err(DataFusionError::NotImplemented(format!(
                    "REPLACE INTO table {}: Paimon tables take INSERT INTO and INSERT OVERWRITE",
                    self.scan.table.location()
                )));
            }
        };
        let sink = PaimonSink::new(self.scan.table.clone(), Arc::clone(&self.arrow), overwrite);
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }
}
