//! SQL through DataFusion: `paimon_kernel.sql(...)`, and a table or a warehouse handed to
//! datafusion-python (PyPI `datafusion` 55) as datafusion-ffi capsules.
//!
//! The providers are paimon-native's ([`paimon_native::sql`]); this module only moves them
//! across the boundary: `Table.__datafusion_table_provider__(session)` returns a
//! `datafusion_table_provider` capsule holding an `FFI_TableProvider`, and
//! `Warehouse.__datafusion_catalog_provider__(session)` a `datafusion_catalog_provider` capsule
//! holding an `FFI_CatalogProvider`. Both run on the package's tokio runtime.

use std::ptr::NonNull;
use std::sync::Arc;

use datafusion::catalog::{CatalogProvider, TableProvider};
use datafusion::common::DataFusionError;
use datafusion_ffi::catalog_provider::FFI_CatalogProvider;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use arrow_pyarrow::IntoPyArrow;
use paimon_native::sql::{PaimonTableProvider, WarehouseCatalog};

use crate::errors::{InvalidInput, PaimonError, PyResultExt, Unsupported, native_err};
use crate::{PyTable, block, runtime};

/// Capsule name of a logical extension codec (datafusion-ffi).
const CODEC_CAPSULE: &std::ffi::CStr = c"datafusion_logical_extension_codec";

/// The logical extension codec of the datafusion-python session the provider is registered
/// with: `session.__datafusion_logical_extension_codec__()` when it has one, else `session`
/// itself as the codec capsule (datafusion-python 55 passes either).
///
/// # Errors
/// `InvalidInput` when the object is neither.
fn logical_codec(session: &Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    const ATTR: &str = "__datafusion_logical_extension_codec__";
    let capsule = if session.hasattr(ATTR)? {
        session.getattr(ATTR)?.call0()?
    } else {
        session.clone()
    };
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        InvalidInput::new_err(
            "expected a datafusion-python SessionContext or a datafusion_logical_extension_codec capsule (datafusion 55)",
        )
    })?;
    let ptr: NonNull<FFI_LogicalExtensionCodec> =
        capsule.pointer_checked(Some(CODEC_CAPSULE))?.cast();
    // SAFETY: the capsule's name is checked above: datafusion-python stores an
    // `FFI_LogicalExtensionCodec` under that name, alive as long as the capsule, which we
    // hold while cloning it (a clone is an independent handle with its own release).
    let codec = unsafe { ptr.as_ref() };
    Ok(codec.clone())
}

/// The table provider of `table` (latest snapshot of its branch) as a
/// `datafusion_table_provider` capsule.
pub fn table_provider_capsule<'py>(
    py: Python<'py>,
    table: &PyTable,
    session: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let codec = logical_codec(session)?;
    let scan = table.native().scan();
    let provider = block(py, PaimonTableProvider::try_new(scan)).py_err()?;
    let provider: Arc<dyn TableProvider> = Arc::new(provider);
    let ffi = FFI_TableProvider::new_with_ffi_codec(
        provider,
        true,
        Some(runtime().handle().clone()),
        codec,
    );
    PyCapsule::new_with_value(py, ffi, c"datafusion_table_provider")
}

/// A filesystem warehouse (`<warehouse>/<db>.db/<table>`) for SQL: its databases are schemas,
/// its tables are tables (`db.table`, and `db.table$snapshots` etc.). Register it with
/// datafusion-python (`ctx.register_catalog_provider("paimon", Warehouse(uri))`) or pass it
/// to `paimon_kernel.sql(..., warehouse=...)`.
///
/// Source: the layout of Java `org.apache.paimon.catalog.FileSystemCatalog`.
#[pyclass(name = "Warehouse", module = "paimon_kernel._native", frozen)]
pub struct PyWarehouse {
    catalog: Arc<WarehouseCatalog>,
}

#[pymethods]
impl PyWarehouse {
    /// List the databases and tables of the warehouse at `uri` (a directory or URL).
    #[new]
    fn new(py: Python<'_>, uri: String) -> PyResult<Self> {
        let catalog = block(py, async move { WarehouseCatalog::open(&uri).await }).py_err()?;
        Ok(PyWarehouse {
            catalog: Arc::new(catalog),
        })
    }

    /// The warehouse location.
    #[getter]
    fn uri(&self) -> &str {
        self.catalog.location()
    }

    /// The databases found when opened, by name, each with its table names.
    fn databases(&self) -> std::collections::BTreeMap<String, Vec<String>> {
        use datafusion::catalog::SchemaProvider;
        self.catalog
            .databases()
            .iter()
            .map(|(name, db)| (name.clone(), db.table_names()))
            .collect()
    }

    /// The catalog as a `datafusion_catalog_provider` capsule for datafusion-python.
    fn __datafusion_catalog_provider__<'py>(
        &self,
        py: Python<'py>,
        session: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = logical_codec(session)?;
        let provider: Arc<dyn CatalogProvider> = Arc::clone(&self.catalog) as _;
        let ffi = FFI_CatalogProvider::new_with_ffi_codec(
            provider,
            Some(runtime().handle().clone()),
            codec,
        );
        PyCapsule::new_with_value(py, ffi, c"datafusion_catalog_provider")
    }

    fn __repr__(&self) -> String {
        format!("Warehouse({:?})", self.catalog.location())
    }
}

/// A DataFusion error as the exception of its kind: our own error (a failed read, an
/// unknown table directory) as its class, bad SQL, an unknown name or a type mismatch as
/// `InvalidInput`, what DataFusion does not implement as `Unsupported`.
fn df_err(e: DataFusionError) -> PyErr {
    let message = e.to_string();
    match e.find_root() {
        DataFusionError::External(inner) => match inner.downcast_ref::<paimon_native::Error>() {
            Some(native) => crate::errors::native_err_with(native, message),
            None => PaimonError::new_err(message),
        },
        DataFusionError::NotImplemented(_) => Unsupported::new_err(message),
        DataFusionError::SQL(..)
        | DataFusionError::Plan(_)
        | DataFusionError::SchemaError(..)
        | DataFusionError::Configuration(_)
        | DataFusionError::ArrowError(..) => InvalidInput::new_err(message),
        _ => PaimonError::new_err(message),
    }
}

/// Run `query` over `tables` (name, table) and the warehouse, if any, in a new DataFusion
/// session; the result as a `pyarrow.Table` (its schema kept when there are no rows).
#[pyfunction]
#[pyo3(signature = (query, tables, warehouse=None))]
pub fn _sql(
    py: Python<'_>,
    query: String,
    tables: Vec<(String, PyRef<'_, PyTable>)>,
    warehouse: Option<PyRef<'_, PyWarehouse>>,
) -> PyResult<Py<PyAny>> {
    let tables: Vec<(String, Arc<paimon_native::Table>)> = tables
        .iter()
        .map(|(name, t)| (name.clone(), t.native()))
        .collect();
    let warehouse = warehouse.map(|w| Arc::clone(&w.catalog));
    let (schema, batches) = block(py, async move {
        let ctx = paimon_native::sql::session();
        if let Some(catalog) = warehouse {
            paimon_native::sql::register_catalog(&ctx, catalog).map_err(Outcome::Native)?;
        }
        for (name, table) in tables {
            paimon_native::sql::register_scan(&ctx, &name, table.scan())
                .await
                .map_err(Outcome::Native)?;
        }
        let df = ctx.sql(&query).await.map_err(Outcome::Sql)?;
        let schema = Arc::new(df.schema().as_arrow().clone());
        let batches = df.collect().await.map_err(Outcome::Sql)?;
        Ok::<_, Outcome>((schema, batches))
    })
    .map_err(|o| match o {
        Outcome::Native(e) => native_err(e),
        Outcome::Sql(e) => df_err(e),
    })?;
    let table = arrow_pyarrow::Table::try_new(batches, schema)
        .map_err(|e| PaimonError::new_err(e.to_string()))?;
    Ok(table.into_pyarrow(py)?.unbind())
}

/// Why `_sql` failed: registering a table, or the query.
enum Outcome {
    Native(paimon_native::Error),
    Sql(DataFusionError),
}
