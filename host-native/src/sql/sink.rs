//! `INSERT INTO` / `INSERT OVERWRITE`: DataFusion's rows through our writer and one commit.

use std::fmt;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use datafusion::common::DataFusionError;
use datafusion::datasource::sink::DataSink;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, SendableRecordBatchStream};
use futures::StreamExt;

use crate::error::Result;
use crate::table::Table;
use crate::write::TableWriter;

/// Writes the rows of an `INSERT` into a table and commits them as one batch commit.
///
/// The rows go through [`Table::new_write`] (the table's own writer: buckets, merge engine,
/// file format, level-0 compaction of lookup tables) and [`crate::TableCommit::commit`] (or
/// [`crate::TableCommit::overwrite`] for `INSERT OVERWRITE`: with `dynamic-partition-overwrite`
/// on, the default, only the partitions written to are replaced; an unpartitioned table is
/// replaced whole). A failure anywhere (a value that does not fit, a store error, a commit
/// conflict) deletes the files written and leaves no snapshot: nothing becomes visible.
/// Returns the number of rows written.
pub struct PaimonSink {
    table: Table,
    schema: SchemaRef,
    overwrite: bool,
}

impl PaimonSink {
    /// A sink writing rows of `schema` (the provider's) into `table`.
    pub fn new(table: Table, schema: SchemaRef, overwrite: bool) -> Self {
        PaimonSink {
            table,
            schema,
            overwrite,
        }
    }

    /// Write every batch of `data`, then commit; on failure, delete what was written.
    async fn write_commit(&self, mut data: SendableRecordBatchStream) -> Result<u64> {
        let commit = self.table.new_commit(None);
        let mut writer = self.table.new_write_as(Some(commit.commit_user())).await?;
        if self.overwrite {
            writer = writer.for_overwrite();
        }
        let written: std::result::Result<_, crate::Error> = async {
            while let Some(batch) = data.next().await {
                let batch = batch.map_err(|e| {
                    crate::Error::kernel(
                        format!("INSERT into table {}", self.table.location()),
                        paimon_kernel::Error::invalid(format!("the query failed: {e}")),
                    )
                })?;
                if batch.num_rows() > 0 {
                    writer.write(&batch).await?;
                }
            }
            writer.prepare_commit().await
        }
        .await;
        let messages = match written {
            Ok(m) => m,
            Err(e) => return Err(abort(writer, e).await),
        };
        let rows = writer.rows_written();
        if messages.is_empty() && !self.overwrite {
            return Ok(0);
        }
        let run = || async {
            if self.overwrite {
                commit.overwrite(None, messages.clone()).await
            } else {
                commit.commit(messages.clone()).await
            }
        };
        // A failed commit may have published its snapshot (an unknown outcome of the
        // snapshot's Put): the same user and identifier are applied once, so a second run
        // tells which it was before the data files are deleted.
        match run().await {
            Ok(_) => Ok(rows),
            Err(first) => match run().await {
                Ok(_) => Ok(rows),
                Err(_) if is_partly_published(&first) => Err(first),
                Err(_) => Err(abort(writer, first).await),
            },
        }
    }
}

/// Whether `e` says the write's first snapshot is in the table (its files must stay).
fn is_partly_published(e: &crate::Error) -> bool {
    matches!(
        e.as_kernel(),
        Some(paimon_kernel::Error::PartlyPublished { .. })
    )
}

/// Delete what `writer` wrote and return `e` (with the cleanup's failure, if any, added).
async fn abort(writer: TableWriter, e: crate::Error) -> crate::Error {
    if is_partly_published(&e) {
        return e;
    }
    match writer.abort().await {
        Ok(()) => e,
        Err(cleanup) => crate::Error::kernel(
            format!("{e}; deleting the files written also failed"),
            paimon_kernel::Error::invalid(cleanup.to_string()),
        ),
    }
}

impl fmt::Debug for PaimonSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PaimonSink")
            .field("table", &self.table.location())
            .field("overwrite", &self.overwrite)
            .finish()
    }
}

impl DisplayAs for PaimonSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PaimonSink: table={}, {}",
            self.table.location(),
            if self.overwrite {
                "overwrite"
            } else {
                "append"
            }
        )
    }
}

#[async_trait]
impl DataSink for PaimonSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        _context: &Arc<TaskContext>,
    ) -> datafusion::common::Result<u64> {
        self.write_commit(data)
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))
    }
}
