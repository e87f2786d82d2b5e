//! SQL over Paimon tables through [DataFusion](datafusion) (feature `sql`, on by default).
//!
//! * [`PaimonTableProvider`]: a table as a DataFusion `TableProvider` (projection, filter and
//!   `LIMIT` pushdown, partition and statistics pruning, our split reader in parallel,
//!   `INSERT INTO` / `INSERT OVERWRITE`).
//! * [`SystemTable`]: `t$snapshots`, `t$schemas`, `t$tags`, `t$manifests`, `t$files`.
//! * [`WarehouseCatalog`]: a filesystem warehouse as a catalog (`db.table`).
//! * [`session`], [`register_table`], [`register_warehouse`], [`register_catalog`], [`sql`]: a
//!   ready session.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use paimon_native::sql;
//!
//! let ctx = sql::session();
//! sql::register_table(&ctx, "orders", "/warehouse/db.db/orders").await?;
//! let rows = ctx
//!     .sql("SELECT status, count(*) FROM orders WHERE dt = '2024-01-01' GROUP BY status")
//!     .await?
//!     .collect()
//!     .await?;
//! let snapshots = ctx.sql("SELECT snapshot_id, commit_kind FROM orders$snapshots").await?;
//! # Ok(())
//! # }
//! ```
//!
//! The core (`paimon-kernel`) knows nothing of DataFusion: filters are translated into its
//! [`Predicate`](paimon_kernel::predicate::Predicate) here ([`filter`]).

pub mod catalog;
pub mod exec;
pub mod filter;
pub mod provider;
pub mod sink;
pub mod system;

use std::sync::Arc;

use datafusion::common::{DataFusionError, TableReference};
use datafusion::execution::context::SessionContext;
use datafusion::prelude::SessionConfig;

pub use catalog::{DatabaseSchema, WarehouseCatalog};
pub use exec::{PaimonScanExec, Pushdown};
pub use provider::PaimonTableProvider;
pub use sink::PaimonSink;
pub use system::{SystemTable, SystemTableKind};

use crate::error::Result;
use crate::table::{Table, TableScan};

/// Name of the catalog a warehouse is registered as (besides its databases being schemas of
/// the default catalog, so that `db.table` resolves).
pub const WAREHOUSE_CATALOG: &str = "paimon";

/// Our error as DataFusion's (its text, with every cause, is kept).
pub(crate) fn to_df(e: crate::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A DataFusion session with `information_schema` on (`SHOW TABLES`, `SHOW COLUMNS`).
pub fn session() -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_information_schema(true))
}

/// Register the table at `location` (latest snapshot) as `name`, and its system tables as
/// `name$snapshots`, `name$schemas`, `name$tags`, `name$manifests`, `name$files`. The name is
/// taken as written (no case folding; SQL folds unquoted names to lower case).
///
/// # Errors
/// As [`Table::open`] and [`PaimonTableProvider::try_new`]; a name already registered.
pub async fn register_table(ctx: &SessionContext, name: &str, location: &str) -> Result<()> {
    register_scan(ctx, name, Table::open(location).await?.scan()).await
}

/// Register the table and snapshot of `scan` (a time travel, a branch) as `name`, with its
/// system tables (see [`register_table`]).
///
/// # Errors
/// As [`register_table`].
pub async fn register_scan(ctx: &SessionContext, name: &str, scan: TableScan) -> Result<()> {
    let provider = PaimonTableProvider::try_new(scan.clone()).await?;
    let register = |n: String, p: Arc<dyn datafusion::datasource::TableProvider>| {
        ctx.register_table(TableReference::bare(n.clone()), p)
            .map(|_| ())
            .map_err(|e| {
                crate::Error::kernel(
                    format!("registering table {n}"),
                    paimon_kernel::Error::invalid(e.to_string()),
                )
            })
    };
    register(name.to_string(), Arc::new(provider))?;
    for kind in SystemTableKind::ALL {
        register(
            format!("{name}${}", kind.name()),
            Arc::new(SystemTable::new(scan.clone(), kind)),
        )?;
    }
    Ok(())
}

/// Register the warehouse at `location`: as catalog [`WAREHOUSE_CATALOG`] (`paimon.db.t`), and
/// each database as a schema of the session's default catalog (`db.t`).
///
/// # Errors
/// As [`WarehouseCatalog::open`]; a database name the default catalog already has.
pub async fn register_warehouse(ctx: &SessionContext, location: &str) -> Result<()> {
    register_catalog(ctx, Arc::new(WarehouseCatalog::open(location).await?))
}

/// Register a warehouse already opened (as [`register_warehouse`] does after opening it):
/// as catalog [`WAREHOUSE_CATALOG`], and each database as a schema of the default catalog.
///
/// # Errors
/// A database name the default catalog already has.
pub fn register_catalog(ctx: &SessionContext, catalog: Arc<WarehouseCatalog>) -> Result<()> {
    let location = catalog.location().to_string();
    let default = ctx
        .state()
        .config()
        .options()
        .catalog
        .default_catalog
        .clone();
    if let Some(current) = ctx.catalog(&default) {
        for (name, db) in catalog.databases() {
            current
                .register_schema(name, Arc::clone(db) as _)
                .map_err(|e| {
                    crate::Error::kernel(
                        format!("registering database {name} of warehouse {location}"),
                        paimon_kernel::Error::invalid(e.to_string()),
                    )
                })?;
        }
    }
    ctx.register_catalog(WAREHOUSE_CATALOG, catalog);
    Ok(())
}

/// Run `query` over `tables` (name → location) and the warehouse at `warehouse`, if any, in
/// a new [`session`], and collect the result.
///
/// # Errors
/// As [`register_table`] and [`register_warehouse`]; DataFusion's error for bad SQL, an
/// unknown table or column, a type mismatch, or a failed read (as
/// [`crate::Error::Kernel`] with the cause).
pub async fn sql(
    query: &str,
    tables: &[(String, String)],
    warehouse: Option<&str>,
) -> std::result::Result<Vec<arrow_array::RecordBatch>, DataFusionError> {
    let ctx = session();
    if let Some(w) = warehouse {
        register_warehouse(&ctx, w).await.map_err(to_df)?;
    }
    for (name, location) in tables {
        register_table(&ctx, name, location).await.map_err(to_df)?;
    }
    ctx.sql(query).await?.collect().await
}
