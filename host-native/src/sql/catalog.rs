//! A filesystem warehouse as a DataFusion catalog: databases (`<warehouse>/<db>.db/`) are
//! schemas, table directories are tables, `table$snapshots` (and the other system tables) are
//! tables too.
//!
//! Source: the layout of Java `org.apache.paimon.catalog.FileSystemCatalog`
//! (`<warehouse>/<database>.db/<table>`).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::common::DataFusionError;
use datafusion::datasource::TableProvider;
use object_store::path::Path;

use super::provider::PaimonTableProvider;
use super::system::{SystemTable, SystemTableKind};
use crate::error::{Error, Result};
use crate::host::ObjectStoreHost;
use crate::table::Table;

/// Suffix of a database directory.
pub const DATABASE_SUFFIX: &str = ".db";

/// The databases of a warehouse (listed once, when opened).
#[derive(Debug)]
pub struct WarehouseCatalog {
    location: String,
    databases: BTreeMap<String, Arc<DatabaseSchema>>,
}

/// The tables of one database (listed once, when the warehouse is opened; a table created
/// later is still found by name).
#[derive(Debug)]
pub struct DatabaseSchema {
    /// `<warehouse>/<db>.db`.
    location: String,
    tables: Vec<String>,
}

/// `base` and `name` joined with one `/`.
fn join(base: &str, name: &str) -> String {
    format!("{}/{name}", base.trim_end_matches('/'))
}

impl WarehouseCatalog {
    /// List the databases and tables of the warehouse at `location` (a directory or URL).
    ///
    /// # Errors
    /// A bad location; a store error while listing.
    pub async fn open(location: &str) -> Result<Self> {
        let host = ObjectStoreHost::open(location)?;
        let store = Arc::clone(host.store());
        let list = |prefix: Option<Path>| {
            let store = Arc::clone(&store);
            async move {
                store
                    .list_with_delimiter(prefix.as_ref())
                    .await
                    .map_err(|source| Error::ObjectStore {
                        location: location.to_string(),
                        source,
                    })
            }
        };
        let mut databases = BTreeMap::new();
        for dir in list(None).await?.common_prefixes {
            let Some(name) = dir.filename().and_then(|f| f.strip_suffix(DATABASE_SUFFIX)) else {
                continue;
            };
            let name = name.to_string();
            let tables: Vec<String> = list(Some(dir.clone()))
                .await?
                .common_prefixes
                .iter()
                .filter_map(|t| t.filename().map(str::to_string))
                .collect();
            let db = DatabaseSchema {
                location: join(location, &format!("{name}{DATABASE_SUFFIX}")),
                tables,
            };
            databases.insert(name, Arc::new(db));
        }
        Ok(WarehouseCatalog {
            location: location.to_string(),
            databases,
        })
    }

    /// The warehouse location.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The databases found, by name.
    pub fn databases(&self) -> &BTreeMap<String, Arc<DatabaseSchema>> {
        &self.databases
    }
}

impl CatalogProvider for WarehouseCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.databases.keys().cloned().collect()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        self.databases
            .get(name)
            .map(|d| Arc::clone(d) as Arc<dyn SchemaProvider>)
    }
}

impl DatabaseSchema {
    /// The provider of `name`: a table, or `table$kind` for a system table; `None` when the
    /// directory holds no table.
    ///
    /// # Errors
    /// An unknown system table; a table that cannot be read.
    pub async fn open_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let (base, system) = match name.split_once('$') {
            Some((b, s)) => (b, Some(s)),
            None => (name, None),
        };
        let location = join(&self.location, base);
        let table = match Table::open(&location).await {
            Ok(t) => t,
            Err(Error::NotATable { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(Some(match system {
            None => Arc::new(PaimonTableProvider::try_new(table.scan()).await?),
            Some(s) => {
                let kind = SystemTableKind::parse(s).ok_or_else(|| {
                    Error::kernel(
                        format!("opening {name}"),
                        paimon_kernel::Error::unsupported(format!(
                            "system table ${s}: the system tables are {}",
                            SystemTableKind::ALL
                                .map(|k| format!("${}", k.name()))
                                .join(", ")
                        )),
                    )
                })?;
                Arc::new(SystemTable::new(table.scan(), kind))
            }
        }))
    }
}

#[async_trait]
impl SchemaProvider for DatabaseSchema {
    fn table_names(&self) -> Vec<String> {
        self.tables.clone()
    }

    async fn table(
        &self,
        name: &str,
    ) -> std::result::Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        self.open_table(name).await.map_err(super::to_df)
    }

    fn table_exist(&self, name: &str) -> bool {
        let base = name.split_once('$').map_or(name, |(b, _)| b);
        self.tables.iter().any(|t| t == base)
    }
}
