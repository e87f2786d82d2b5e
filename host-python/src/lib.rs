//! # paimon-python
//!
//! The native part of the `paimon_kernel` Python package (`paimon_kernel._native`): PyO3
//! classes over [`paimon_native`]. No table logic lives here: every operation is one call
//! of the native host's library API, run on a shared tokio runtime with the GIL released.
//! Arrow crosses the boundary through the Arrow C data / C stream interfaces
//! (`__arrow_c_stream__`, `__arrow_c_array__`, `__arrow_c_schema__` PyCapsules, via
//! `arrow-pyarrow`): no copies, no row-by-row Python.
//!
//! Plans, splits, commit messages and compaction tasks are values: [`PySplit`],
//! [`PyCommitMessage`] and [`PyCompactTask`] pickle as their bytes, so a driver can hand them
//! to Ray or Daft workers and commit once.
//!
//! Rust callers (e.g. a DataFusion table provider) reach the native table a Python `Table`
//! wraps with [`PyTable::native`].

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod convert;
mod errors;
mod sql;
mod values;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_pyarrow::{FromPyArrow, IntoPyArrow, ToPyArrow};
use arrow_schema::{ArrowError, SchemaRef};
use futures::StreamExt;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use paimon_kernel::maintenance::RollbackTarget;
use paimon_native::compact::CompactOptions;
use paimon_native::maintenance::ExpireOptions;
use paimon_native::{RecordBatchStream, Table, TableWriter};

use crate::convert::{conform_batch, input_batches, json_to_py};
use crate::errors::{PyResultExt, register_exceptions, to_py_err};
use crate::values::{OverwriteSpec, PyCommitMessage, PyCompactTask, PySplit, plan_of_split};

/// What `__reduce__` returns to pickle: the callable that rebuilds the value and its
/// arguments.
type Reduced<A> = (Py<PyAny>, A);

/// The runtime every blocking call runs on (multi-threaded, one worker per core).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("paimon-kernel")
            .build()
            .unwrap_or_else(|e| panic!("cannot start the tokio runtime: {e}"))
    })
}

/// Run `f` to completion on the runtime with the GIL released.
fn block<F, T>(py: Python<'_>, f: F) -> T
where
    F: std::future::Future<Output = T> + Send,
    T: Send,
{
    py.detach(|| runtime().block_on(f))
}

/// A `pyarrow.RecordBatchReader` over a native stream: each `read_next_batch` blocks on the
/// runtime (pyarrow calls it without the GIL).
struct StreamReader {
    schema: SchemaRef,
    stream: Option<RecordBatchStream>,
}

impl Iterator for StreamReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let stream = self.stream.as_mut()?;
        match runtime().block_on(stream.next()) {
            Some(Ok(b)) => Some(Ok(b)),
            Some(Err(e)) => {
                self.stream = None;
                Some(Err(ArrowError::ExternalError(Box::new(e))))
            }
            None => {
                self.stream = None;
                None
            }
        }
    }
}

impl RecordBatchReader for StreamReader {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

fn reader_to_py(py: Python<'_>, stream: RecordBatchStream) -> PyResult<Py<PyAny>> {
    let reader: Box<dyn RecordBatchReader + Send> = Box::new(StreamReader {
        schema: stream.schema(),
        stream: Some(stream),
    });
    Ok(reader.into_pyarrow(py)?.unbind())
}

/// Collect a stream into a `pyarrow.Table` (the schema kept when there are no rows).
fn collect_to_py(py: Python<'_>, stream: RecordBatchStream) -> PyResult<Py<PyAny>> {
    let schema = stream.schema();
    let batches: Vec<RecordBatch> = block(py, async move {
        use futures::TryStreamExt;
        stream.try_collect().await
    })
    .py_err()?;
    let table = arrow_pyarrow::Table::try_new(batches, schema)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    Ok(table.into_pyarrow(py)?.unbind())
}

/// A Paimon table (a directory or URL). Opened by `paimon_kernel.open_table`.
///
/// Source: Java `org.apache.paimon.table.FileStoreTable` (through paimon-native's `Table`).
#[pyclass(name = "Table", module = "paimon_kernel._native", frozen)]
pub struct PyTable {
    inner: Arc<Table>,
    /// The location and store options it was opened with (for pickling).
    uri: String,
    options: Vec<(String, String)>,
}

impl PyTable {
    /// The native table this Python object wraps (shared; cheap to clone).
    pub fn native(&self) -> Arc<Table> {
        Arc::clone(&self.inner)
    }

    fn scan_of(
        &self,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        limit: Option<u64>,
    ) -> paimon_native::TableScan {
        let mut scan = self.inner.scan();
        if let Some(c) = columns {
            scan = scan.with_projection(c);
        }
        if let Some(f) = filter {
            scan = scan.with_filter(f);
        }
        if let Some(l) = limit {
            scan = scan.with_limit(l);
        }
        scan
    }
}

/// Open the table at `uri` with object-store `options` (see the README's S3 section).
#[pyfunction]
#[pyo3(signature = (uri, options=None))]
fn open_table(
    py: Python<'_>,
    uri: String,
    options: Option<BTreeMap<String, String>>,
) -> PyResult<PyTable> {
    let options: Vec<(String, String)> = options.unwrap_or_default().into_iter().collect();
    let (u, o) = (uri.clone(), options.clone());
    let table = block(py, async move {
        let host = paimon_native::ObjectStoreHost::open_with_options(&u, &o)?;
        Table::open_with_host(host).await
    })
    .py_err()?;
    Ok(PyTable {
        inner: Arc::new(table),
        uri,
        options,
    })
}

/// Create a table at `uri` from Paimon's schema JSON and open it.
#[pyfunction]
#[pyo3(signature = (uri, schema_json, options=None))]
fn create_table(
    py: Python<'_>,
    uri: String,
    schema_json: String,
    options: Option<BTreeMap<String, String>>,
) -> PyResult<PyTable> {
    let options: Vec<(String, String)> = options.unwrap_or_default().into_iter().collect();
    let (u, o) = (uri.clone(), options.clone());
    let table = block(py, async move {
        let host = paimon_native::ObjectStoreHost::open_with_options(&u, &o)?;
        Table::create_with_host(host, schema_json.as_bytes()).await
    })
    .py_err()?;
    Ok(PyTable {
        inner: Arc::new(table),
        uri,
        options,
    })
}

#[pymethods]
impl PyTable {
    /// The location as given.
    #[getter]
    fn uri(&self) -> &str {
        &self.uri
    }

    /// The store options given to `open_table`.
    #[getter]
    fn store_options(&self) -> BTreeMap<String, String> {
        self.options.iter().cloned().collect()
    }

    /// The branch read (`main` for the main branch).
    #[getter]
    fn branch(&self) -> &str {
        self.inner.branch()
    }

    /// The table's columns as a `pyarrow.Schema` (latest schema).
    #[getter]
    fn schema(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let table = self.native();
        let schema = block(py, async move { table.schema().await }).py_err()?;
        let arrow =
            paimon_kernel::types::paimon_to_arrow_schema(&schema.fields).map_err(to_py_err)?;
        Ok(arrow.as_ref().to_pyarrow(py)?.unbind())
    }

    /// Primary key columns (empty for append tables).
    #[getter]
    fn primary_keys(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let table = self.native();
        Ok(block(py, async move { table.schema().await })
            .py_err()?
            .primary_keys)
    }

    /// Partition key columns.
    #[getter]
    fn partition_keys(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let table = self.native();
        Ok(block(py, async move { table.schema().await })
            .py_err()?
            .partition_keys)
    }

    /// The table options of the latest schema.
    #[getter]
    fn options(&self, py: Python<'_>) -> PyResult<BTreeMap<String, String>> {
        let table = self.native();
        Ok(block(py, async move { table.schema().await })
            .py_err()?
            .options
            .into_iter()
            .collect())
    }

    /// The latest schema as Paimon's schema JSON (a string).
    fn schema_json(&self, py: Python<'_>) -> PyResult<String> {
        let table = self.native();
        let schema = block(py, async move { table.schema().await }).py_err()?;
        let bytes = paimon_kernel::spec::encode_schema(&schema).map_err(to_py_err)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Every snapshot still present (dicts in Paimon's snapshot JSON form), by id.
    fn snapshots(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let table = self.native();
        let snaps = block(py, async move { table.snapshots().await }).py_err()?;
        json_to_py(py, &serde_json::to_value(snaps).map_err(convert::json_err)?)
    }

    /// The latest snapshot id, `None` for a table without snapshots.
    fn latest_snapshot_id(&self, py: Python<'_>) -> PyResult<Option<i64>> {
        let table = self.native();
        Ok(block(py, async move { table.latest_snapshot().await })
            .py_err()?
            .map(|s| s.id))
    }

    /// Every tag (dicts: name, snapshot id, creation time, retention).
    fn tags(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let table = self.native();
        let tags = block(py, async move { table.tag_infos().await }).py_err()?;
        json_to_py(py, &serde_json::to_value(tags).map_err(convert::json_err)?)
    }

    /// `$files` rows of the latest snapshot (or `snapshot_id`'s) as dicts.
    #[pyo3(signature = (snapshot_id=None))]
    fn files(&self, py: Python<'_>, snapshot_id: Option<i64>) -> PyResult<Py<PyAny>> {
        let mut scan = self.inner.scan();
        if let Some(id) = snapshot_id {
            scan = scan.with_snapshot_id(id);
        }
        let rows = block(py, async move { scan.files().await }).py_err()?;
        json_to_py(py, &serde_json::to_value(rows).map_err(convert::json_err)?)
    }

    /// The same table on branch `name`.
    fn with_branch(&self, py: Python<'_>, name: String) -> PyResult<PyTable> {
        let table = self.native();
        let branch = block(py, async move { table.with_branch(&name).await }).py_err()?;
        Ok(PyTable {
            inner: Arc::new(branch),
            uri: self.uri.clone(),
            options: self.options.clone(),
        })
    }

    /// Plan the scan (see `Scan.plan`): the splits; `travel` is
    /// `("latest"|"snapshot"|"tag"|"timestamp", value)`; `split_target_size` in bytes
    /// (`source.split.target-size` for this plan).
    #[pyo3(signature = (columns=None, filter=None, travel_kind=None, travel_value=None, split_target_size=None))]
    fn _plan(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        travel_kind: Option<String>,
        travel_value: Option<String>,
        split_target_size: Option<u64>,
    ) -> PyResult<Vec<PySplit>> {
        let mut scan = travel(
            self.scan_of(columns, filter, None),
            travel_kind,
            travel_value,
        )?;
        if let Some(bytes) = split_target_size {
            scan = scan.with_split_target_size(bytes);
        }
        let (plan, second) = block(py, async move { scan.plan_with_fallback().await }).py_err()?;
        if second.is_some() {
            return Err(to_py_err(paimon_kernel::Error::unsupported(
                "splits of a table read with 'scan.fallback-branch' or 'scan.primary-branch' \
                 (read it with to_arrow / to_reader)",
            )));
        }
        values::splits_of_plan(plan)
    }

    /// Stream the scan: a `pyarrow.RecordBatchReader`.
    #[pyo3(signature = (columns=None, filter=None, travel_kind=None, travel_value=None, limit=None))]
    fn _to_reader(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        travel_kind: Option<String>,
        travel_value: Option<String>,
        limit: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        let scan = travel(
            self.scan_of(columns, filter, limit),
            travel_kind,
            travel_value,
        )?;
        let stream = block(py, async move { scan.to_stream().await }).py_err()?;
        reader_to_py(py, stream)
    }

    /// Read the scan into a `pyarrow.Table`.
    #[pyo3(signature = (columns=None, filter=None, travel_kind=None, travel_value=None, limit=None))]
    fn _to_arrow(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        travel_kind: Option<String>,
        travel_value: Option<String>,
        limit: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        let scan = travel(
            self.scan_of(columns, filter, limit),
            travel_kind,
            travel_value,
        )?;
        let stream = block(py, async move { scan.to_stream().await }).py_err()?;
        collect_to_py(py, stream)
    }

    /// Read one split: a `pyarrow.RecordBatchReader` (columns and a text filter applied).
    #[pyo3(signature = (split, columns=None, filter=None, limit=None))]
    fn read_split(
        &self,
        py: Python<'_>,
        split: &PySplit,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        limit: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        let scan = self.scan_of(columns, filter, limit);
        let plan = plan_of_split(split);
        let stream = block(py, async move { scan.read_plan(plan) }).py_err()?;
        reader_to_py(py, stream)
    }

    /// Java `DataSplit#serialize` bytes of `split` (version 8, what Java 1.4 and 2.0 read).
    fn split_to_java_bytes<'py>(
        &self,
        py: Python<'py>,
        split: &PySplit,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let plan = plan_of_split(split);
        let bytes = paimon_kernel::commit::split_serializer::encode(
            &plan.splits[0],
            &self.inner.java_root(),
        )
        .map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A split of this table from Java `DataSplit#serialize` bytes (read with the table's
    /// latest schema, as Java's `TableRead`); `CorruptFile` for malformed bytes.
    fn split_from_java_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<PySplit> {
        let split = paimon_kernel::commit::split_serializer::decode(data, &self.inner.java_root())
            .map_err(to_py_err)?;
        let table = self.native();
        let plan = block(py, async move { table.plan_for_split(split).await }).py_err()?;
        let mut splits = values::splits_of_plan(plan)?;
        splits
            .pop()
            .ok_or_else(|| to_py_err(paimon_kernel::Error::invalid("no split")))
    }

    /// A writer (see `TableWrite`).
    #[pyo3(signature = (overwrite=false, static_partition=None, commit_user=None))]
    fn new_write(
        &self,
        py: Python<'_>,
        overwrite: bool,
        static_partition: Option<BTreeMap<String, String>>,
        commit_user: Option<String>,
    ) -> PyResult<PyTableWrite> {
        let table = self.native();
        let user = commit_user.clone();
        let writer =
            block(py, async move { table.new_write_as(user.as_deref()).await }).py_err()?;
        let overwrite = (overwrite || static_partition.is_some()).then_some(OverwriteSpec {
            partition: static_partition,
        });
        let writer = if overwrite.is_some() {
            writer.for_overwrite()
        } else {
            writer
        };
        Ok(PyTableWrite {
            table: self.native(),
            writer: Mutex::new(Some(writer)),
            overwrite,
        })
    }

    /// Commit messages from any number of writers as one commit.
    #[pyo3(signature = (messages, commit_identifier=None, commit_user=None))]
    fn commit(
        &self,
        py: Python<'_>,
        messages: Vec<PyRef<'_, PyCommitMessage>>,
        commit_identifier: Option<i64>,
        commit_user: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let overwrite = values::overwrite_of(&messages)?;
        let msgs: Vec<_> = messages.iter().map(|m| m.inner.clone()).collect();
        let table = self.native();
        let outcome = block(py, async move {
            let commit = table.new_commit(commit_user);
            match (overwrite, commit_identifier) {
                (Some(spec), _) => commit.overwrite(spec.partition, msgs).await,
                (None, Some(id)) => commit.commit_with_identifier(id, msgs).await,
                (None, None) => commit.commit(msgs).await,
            }
        })
        .py_err()?;
        json_to_py(
            py,
            &serde_json::to_value(outcome).map_err(convert::json_err)?,
        )
    }

    /// Delete the files the messages wrote (they will not be committed).
    fn abort(&self, py: Python<'_>, messages: Vec<PyRef<'_, PyCommitMessage>>) -> PyResult<()> {
        let msgs: Vec<_> = messages.iter().map(|m| m.inner.clone()).collect();
        let table = self.native();
        block(py, async move { table.new_commit(None).abort(msgs).await }).py_err()
    }

    /// Delete rows matching `filter` (text) in one commit: the number of rows deleted.
    #[pyo3(signature = (filter, commit_user=None))]
    fn delete(&self, py: Python<'_>, filter: String, commit_user: Option<String>) -> PyResult<u64> {
        let table = self.native();
        let out = block(
            py,
            async move { table.delete_where(filter, commit_user).await },
        )
        .py_err()?;
        Ok(out.rows_deleted)
    }

    /// Set columns of existing rows of a data-evolution table by `_ROW_ID`: the rows updated.
    #[pyo3(signature = (data, commit_user=None))]
    fn update(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        commit_user: Option<String>,
    ) -> PyResult<u64> {
        let batches = input_batches(data)?;
        let Some(first) = batches.first() else {
            return Ok(0);
        };
        let batch = arrow_select::concat::concat_batches(&first.schema(), &batches)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        let table = self.native();
        let out = block(py, async move { table.update(&batch, commit_user).await }).py_err()?;
        Ok(out.rows_updated)
    }

    /// Plan the compaction as tasks (see `CompactTask`).
    #[pyo3(signature = (full=false, partition=None, bucket=None))]
    fn plan_compaction(
        &self,
        py: Python<'_>,
        full: bool,
        partition: Option<BTreeMap<String, String>>,
        bucket: Option<i32>,
    ) -> PyResult<Vec<PyCompactTask>> {
        let table = self.native();
        let options = CompactOptions {
            full,
            partition: partition.unwrap_or_default(),
            bucket,
            ..Default::default()
        };
        let tasks = block(
            py,
            async move { table.plan_compaction_tasks(&options).await },
        )
        .py_err()?;
        Ok(tasks.into_iter().map(PyCompactTask::new).collect())
    }

    /// Run one compaction task: its commit messages (nothing committed).
    fn run_compaction_task(
        &self,
        py: Python<'_>,
        task: &PyCompactTask,
    ) -> PyResult<Vec<PyCommitMessage>> {
        let table = self.native();
        let t = task.inner.as_ref().clone();
        let msgs = block(py, async move { table.run_compaction_task(&t).await }).py_err()?;
        Ok(msgs
            .into_iter()
            .map(|m| PyCommitMessage::new(m, None))
            .collect())
    }

    /// Compact in this process (plan, run, one commit): the report as a dict.
    #[pyo3(signature = (full=false, partition=None, bucket=None, commit_user=None))]
    fn compact(
        &self,
        py: Python<'_>,
        full: bool,
        partition: Option<BTreeMap<String, String>>,
        bucket: Option<i32>,
        commit_user: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let table = self.native();
        let options = CompactOptions {
            full,
            partition: partition.unwrap_or_default(),
            bucket,
            commit_user,
            now_millis: None,
        };
        let report = block(py, async move { table.compact(options).await }).py_err()?;
        json_to_py(
            py,
            &serde_json::to_value(report).map_err(convert::json_err)?,
        )
    }

    /// Expire snapshots (table options, overridden by the arguments): the outcome as a dict.
    #[pyo3(signature = (retain_max=None, retain_min=None, older_than_millis=None, max_deletes=None))]
    fn expire_snapshots(
        &self,
        py: Python<'_>,
        retain_max: Option<i64>,
        retain_min: Option<i64>,
        older_than_millis: Option<i64>,
        max_deletes: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let table = self.native();
        let options = ExpireOptions {
            retain_max,
            retain_min,
            older_than_millis,
            max_deletes,
        };
        let out = block(py, async move { table.expire(&options).await }).py_err()?;
        json_to_py(py, &serde_json::to_value(out).map_err(convert::json_err)?)
    }

    /// Delete files no snapshot, tag, branch or in-flight write can reach that are older than
    /// `older_than_millis` (default one day): the outcome as a dict.
    #[pyo3(signature = (older_than_millis=None, dry_run=false))]
    fn remove_orphan_files(
        &self,
        py: Python<'_>,
        older_than_millis: Option<i64>,
        dry_run: bool,
    ) -> PyResult<Py<PyAny>> {
        let table = self.native();
        let older = older_than_millis
            .unwrap_or(paimon_native::maintenance::DEFAULT_ORPHAN_OLDER_THAN_MILLIS);
        let out = block(
            py,
            async move { table.remove_orphans(older, dry_run).await },
        )
        .py_err()?;
        json_to_py(py, &serde_json::to_value(out).map_err(convert::json_err)?)
    }

    /// Create tag `name` on `snapshot_id` (the latest when `None`).
    #[pyo3(signature = (name, snapshot_id=None, time_retained_millis=None))]
    fn create_tag(
        &self,
        py: Python<'_>,
        name: String,
        snapshot_id: Option<i64>,
        time_retained_millis: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let table = self.native();
        let out = block(py, async move {
            table
                .create_tag(&name, snapshot_id, time_retained_millis)
                .await
        })
        .py_err()?;
        json_to_py(py, &serde_json::to_value(out).map_err(convert::json_err)?)
    }

    /// Delete tag `name` (and files only it kept).
    fn delete_tag(&self, py: Python<'_>, name: String) -> PyResult<Py<PyAny>> {
        let table = self.native();
        let out = block(py, async move { table.delete_tag(&name).await }).py_err()?;
        json_to_py(py, &serde_json::to_value(out).map_err(convert::json_err)?)
    }

    /// Roll the table back to a snapshot id (int) or a tag (str).
    fn rollback_to(&self, py: Python<'_>, target: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let target = if let Ok(id) = target.extract::<i64>() {
            RollbackTarget::Snapshot(id)
        } else {
            RollbackTarget::Tag(target.extract::<String>()?)
        };
        let table = self.native();
        let out = block(py, async move { table.rollback_to(target).await }).py_err()?;
        json_to_py(py, &serde_json::to_value(out).map_err(convert::json_err)?)
    }

    /// The bucket of every row of `data` (fixed-bucket tables; Java's
    /// `FixedBucketRowKeyExtractor`), as a list of ints; `None` for tables without fixed
    /// buckets.
    fn buckets_of(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        let table = self.native();
        let schema = block(py, async move { table.schema().await }).py_err()?;
        if schema.core_options().bucket().map_err(to_py_err)? <= 0 {
            return Ok(None);
        }
        let extractor = paimon_kernel::write::bucket::FixedBucketRowKeyExtractor::try_new(&schema)
            .map_err(to_py_err)?;
        let arrow =
            paimon_kernel::types::paimon_to_arrow_schema(&schema.fields).map_err(to_py_err)?;
        let mut out: Vec<i32> = Vec::new();
        for batch in input_batches(data)? {
            let batch = conform_batch(&batch, &arrow)?;
            let columns: Vec<_> = schema
                .fields
                .iter()
                .map(|f| {
                    batch.column_by_name(&f.name).cloned().unwrap_or_else(|| {
                        arrow_array::new_null_array(
                            &convert::arrow_type_of(&arrow, &f.name),
                            batch.num_rows(),
                        )
                    })
                })
                .collect();
            out.extend(extractor.buckets(&columns).map_err(to_py_err)?);
        }
        Ok(Some(PyList::new(py, out)?.into_any().unbind()))
    }

    fn __repr__(&self) -> String {
        format!("Table({:?})", self.inner.location())
    }

    /// The table (latest snapshot of its branch) as a datafusion-python table provider
    /// (`datafusion_table_provider` capsule, datafusion-ffi 55): `session` is the
    /// `SessionContext` it is registered with (or its logical-extension-codec capsule).
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        sql::table_provider_capsule(py, self, session)
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<Reduced<(String, Py<PyAny>)>> {
        let f = py
            .import("paimon_kernel._native")?
            .getattr("open_table")?
            .unbind();
        let opts = PyDict::new(py);
        for (k, v) in &self.options {
            opts.set_item(k, v)?;
        }
        Ok((f, (self.uri.clone(), opts.into_any().unbind())))
    }
}

fn travel(
    scan: paimon_native::TableScan,
    kind: Option<String>,
    value: Option<String>,
) -> PyResult<paimon_native::TableScan> {
    let bad = |m: String| to_py_err(paimon_kernel::Error::invalid(m));
    let value = || {
        value
            .clone()
            .ok_or_else(|| bad("time travel without a value".into()))
    };
    let int = |v: String| {
        v.parse::<i64>()
            .map_err(|_| bad(format!("not an integer: {v}")))
    };
    Ok(match kind.as_deref() {
        None | Some("latest") => scan,
        Some("snapshot") => scan.with_snapshot_id(int(value()?)?),
        Some("tag") => scan.with_tag(value()?),
        Some("timestamp") => scan.with_timestamp_millis(int(value()?)?),
        Some(other) => return Err(bad(format!("unknown time travel {other:?}"))),
    })
}

/// Writes rows to a table; `prepare_commit` returns the commit messages. Made by
/// `Table.new_write`.
///
/// Source: Java `org.apache.paimon.table.sink.BatchTableWrite`.
#[pyclass(name = "TableWrite", module = "paimon_kernel._native", frozen)]
pub struct PyTableWrite {
    table: Arc<Table>,
    writer: Mutex<Option<TableWriter>>,
    overwrite: Option<OverwriteSpec>,
}

impl PyTableWrite {
    /// The open writer (locked); `InvalidInput` after `abort`.
    fn writer(&self) -> PyResult<std::sync::MutexGuard<'_, Option<TableWriter>>> {
        let guard = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            return Err(to_py_err(paimon_kernel::Error::invalid(
                "the writer was closed (aborted)",
            )));
        }
        Ok(guard)
    }
}

#[pymethods]
impl PyTableWrite {
    /// The Arrow schema input rows should have (`pyarrow.Schema`).
    #[getter]
    fn input_schema(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let guard = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(w) = guard.as_ref() else {
            return Err(to_py_err(paimon_kernel::Error::invalid(
                "the writer was closed (aborted)",
            )));
        };
        Ok(w.input_schema().as_ref().to_pyarrow(py)?.unbind())
    }

    /// Write Arrow data (anything exposing `__arrow_c_stream__` or `__arrow_c_array__`).
    /// string/large_string/string_view and binary/large_binary/binary_view inputs are cast to
    /// the table's types. A batch that does not fit is refused naming the column; nothing of
    /// it is written.
    fn write(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u64> {
        let schema = {
            let guard = self
                .writer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match guard.as_ref() {
                Some(w) => w.input_schema(),
                None => {
                    return Err(to_py_err(paimon_kernel::Error::invalid(
                        "the writer was closed (aborted)",
                    )));
                }
            }
        };
        let mut reader = convert::input_reader(data)?;
        let mut rows = 0u64;
        loop {
            let next = py.detach(|| reader.next());
            let Some(batch) = next else { break };
            let batch =
                batch.map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
            let batch = conform_batch(&batch, &schema)?;
            rows += batch.num_rows() as u64;
            let mut guard = self.writer()?;
            if let Some(w) = guard.as_mut() {
                block(py, w.write(&batch)).py_err()?;
            }
        }
        Ok(rows)
    }

    /// Flush and return the commit messages (one per partition and bucket written).
    fn prepare_commit(&self, py: Python<'_>) -> PyResult<Vec<PyCommitMessage>> {
        let mut guard = self.writer()?;
        let msgs = match guard.as_mut() {
            Some(w) => block(py, w.prepare_commit()).py_err()?,
            None => Vec::new(),
        };
        Ok(msgs
            .into_iter()
            .map(|m| PyCommitMessage::new(m, self.overwrite.clone()))
            .collect())
    }

    /// Delete every file this writer wrote; the writer cannot be used afterwards.
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        match writer {
            Some(w) => block(py, w.abort()).py_err(),
            None => Ok(()),
        }
    }

    /// Rows written so far.
    #[getter]
    fn rows_written(&self) -> u64 {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map_or(0, TableWriter::rows_written)
    }

    /// The table written.
    #[getter]
    fn table_uri(&self) -> String {
        self.table.location().to_string()
    }
}

/// Import a `pyarrow.Schema` (or anything with `__arrow_c_schema__`) — used by tests.
#[pyfunction]
fn _schema_roundtrip(py: Python<'_>, schema: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let s = arrow_schema::Schema::from_pyarrow_bound(schema)?;
    Ok(s.to_pyarrow(py)?.unbind())
}

/// The commit-message bytes of a list (Java `CommitMessageSerializer#serializeList`).
#[pyfunction]
fn _encode_message_list<'py>(
    py: Python<'py>,
    messages: Vec<PyRef<'py, PyCommitMessage>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let msgs: Vec<_> = messages.iter().map(|m| m.inner.clone()).collect();
    let bytes = paimon_kernel::commit::serializer::encode_list(&msgs).map_err(to_py_err)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The module `paimon_kernel._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_exceptions(m)?;
    m.add_class::<PyTable>()?;
    m.add_class::<PyTableWrite>()?;
    m.add_class::<PySplit>()?;
    m.add_class::<PyCommitMessage>()?;
    m.add_class::<PyCompactTask>()?;
    m.add_class::<sql::PyWarehouse>()?;
    m.add_function(wrap_pyfunction!(sql::_sql, m)?)?;
    m.add_function(wrap_pyfunction!(open_table, m)?)?;
    m.add_function(wrap_pyfunction!(create_table, m)?)?;
    m.add_function(wrap_pyfunction!(_schema_roundtrip, m)?)?;
    m.add_function(wrap_pyfunction!(_encode_message_list, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
