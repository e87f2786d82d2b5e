//! Values that travel between processes: splits, commit messages, compaction tasks. Each
//! pickles as its bytes (a small closure for Ray and Daft tasks: no table object inside).

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde::{Deserialize, Serialize};

use paimon_kernel::commit::CommitMessage;
use paimon_kernel::commit::serializer;
use paimon_kernel::scan::{DataSplit, Plan};
use paimon_kernel::spec::partition::partition_values;

use crate::convert::json_err;
use crate::errors::{CorruptFile, InvalidInput, to_py_err};

/// Prefix of [`PySplit::to_bytes`].
const SPLIT_MAGIC: &[u8] = b"PKSPLIT1";
/// Prefix of a pickled [`PyCommitMessage`].
const MESSAGE_MAGIC: &[u8] = b"PKMSG1";
/// Prefix of [`PyCompactTask::to_bytes`].
const TASK_MAGIC: &[u8] = b"PKTASK1";

fn corrupt(what: &str, detail: impl std::fmt::Display) -> PyErr {
    CorruptFile::new_err(format!("corrupt {what} bytes: {detail}"))
}

/// Decode `magic ‖ JSON` bytes.
fn decode_json<T: for<'de> Deserialize<'de>>(
    what: &str,
    magic: &[u8],
    bytes: &[u8],
) -> PyResult<T> {
    let body = bytes.strip_prefix(magic).ok_or_else(|| {
        corrupt(
            what,
            format!(
                "they do not start with {:?}",
                String::from_utf8_lossy(magic)
            ),
        )
    })?;
    serde_json::from_slice(body).map_err(|e| corrupt(what, e))
}

fn encode_json<T: Serialize>(magic: &[u8], value: &T) -> PyResult<Vec<u8>> {
    let mut out = magic.to_vec();
    serde_json::to_writer(&mut out, value).map_err(json_err)?;
    Ok(out)
}

/// Call `paimon_kernel.<name>(bytes)` on unpickling.
fn reduce_with<'py>(
    py: Python<'py>,
    name: &str,
    bytes: Vec<u8>,
) -> PyResult<(Py<PyAny>, (Py<PyAny>,))> {
    let f = py.import("paimon_kernel")?.getattr(name)?.unbind();
    Ok((f, (PyBytes::new(py, &bytes).into_any().unbind(),)))
}

/// One split of a plan: the data files of one partition and bucket, with the read context
/// (schemas, options) a reader needs: readable by `Table.read_split` in any process.
/// Picklable; `to_bytes` / `Split.from_bytes` give its bytes.
///
/// Source: Java `org.apache.paimon.table.source.DataSplit`.
#[pyclass(name = "Split", module = "paimon_kernel._native", frozen)]
pub struct PySplit {
    /// A plan holding exactly this split.
    plan: Arc<Plan>,
}

impl PySplit {
    fn split(&self) -> &DataSplit {
        &self.plan.splits[0]
    }
}

/// The splits of a plan, each with the plan's read context.
pub fn splits_of_plan(mut plan: Plan) -> PyResult<Vec<PySplit>> {
    let splits = std::mem::take(&mut plan.splits);
    Ok(splits
        .into_iter()
        .map(|s| {
            let mut p = plan.clone();
            p.splits = vec![s];
            PySplit { plan: Arc::new(p) }
        })
        .collect())
}

/// The one-split plan of a split.
pub fn plan_of_split(split: &PySplit) -> Plan {
    split.plan.as_ref().clone()
}

#[pymethods]
impl PySplit {
    /// Rows in the split's files (before merging primary keys or applying deletion vectors).
    #[getter]
    fn row_count(&self) -> i64 {
        self.split().row_count()
    }

    /// Bytes of the split's data files.
    #[getter]
    fn file_size(&self) -> i64 {
        self.split().data_files.iter().map(|f| f.file_size).sum()
    }

    /// Partition values by key (as in partition directory names; empty when unpartitioned).
    #[getter]
    fn partition(&self) -> PyResult<BTreeMap<String, String>> {
        let schema = &self.plan.schema;
        let fields: Vec<_> = schema
            .partition_fields()
            .map_err(to_py_err)?
            .into_iter()
            .cloned()
            .collect();
        let naming = schema
            .core_options()
            .partition_naming()
            .map_err(to_py_err)?;
        Ok(partition_values(&fields, &self.split().partition, &naming)
            .map_err(to_py_err)?
            .into_iter()
            .collect())
    }

    /// The bucket.
    #[getter]
    fn bucket(&self) -> i32 {
        self.split().bucket
    }

    /// The snapshot planned.
    #[getter]
    fn snapshot_id(&self) -> i64 {
        self.split().snapshot_id
    }

    /// Data file names, in read order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.split()
            .data_files
            .iter()
            .map(|f| f.file_name.clone())
            .collect()
    }

    /// Data file paths relative to the table root (absolute for external files).
    #[getter]
    fn file_paths(&self) -> Vec<String> {
        let s = self.split();
        s.data_files.iter().map(|f| s.file_path(f)).collect()
    }

    /// Whether the files can be read without merging.
    #[getter]
    fn raw_convertible(&self) -> bool {
        self.split().raw_convertible
    }

    /// The split's bytes (`PKSPLIT1` ‖ JSON of the split and its read context).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            &encode_json(SPLIT_MAGIC, self.plan.as_ref())?,
        ))
    }

    /// A split from `to_bytes`; `CorruptFile` for anything else.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<PySplit> {
        let plan: Plan = decode_json("split", SPLIT_MAGIC, bytes)?;
        if plan.splits.len() != 1 {
            return Err(corrupt(
                "split",
                format!("{} splits where one was expected", plan.splits.len()),
            ));
        }
        Ok(PySplit {
            plan: Arc::new(plan),
        })
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (Py<PyAny>,))> {
        reduce_with(
            py,
            "_split_from_bytes",
            encode_json(SPLIT_MAGIC, self.plan.as_ref())?,
        )
    }

    fn __repr__(&self) -> String {
        let s = self.split();
        format!(
            "Split(snapshot={}, bucket={}, files={}, rows={})",
            s.snapshot_id,
            s.bucket,
            s.data_files.len(),
            s.row_count()
        )
    }
}

/// What an overwrite replaces: `partition` (`None`: the partitions written, or the whole
/// table, per `dynamic-partition-overwrite`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverwriteSpec {
    /// Static partition (`key → value`).
    pub partition: Option<BTreeMap<String, String>>,
}

/// The overwrite all of `messages` ask for (`None`: a plain commit).
///
/// # Errors
/// `InvalidInput` when they disagree.
pub fn overwrite_of(messages: &[PyRef<'_, PyCommitMessage>]) -> PyResult<Option<OverwriteSpec>> {
    let mut specs = messages.iter().map(|m| &m.overwrite);
    let Some(first) = specs.next() else {
        return Ok(None);
    };
    if specs.any(|s| s != first) {
        return Err(InvalidInput::new_err(
            "the messages mix overwrite and append writes (or different static partitions)",
        ));
    }
    Ok(first.clone())
}

#[derive(Serialize, Deserialize)]
struct MessageEnvelope {
    message: CommitMessage,
    overwrite: Option<OverwriteSpec>,
}

/// The files one writer wrote to one partition and bucket, to commit. Picklable;
/// `to_bytes()` gives Java's `CommitMessageSerializer` bytes.
///
/// Source: Java `org.apache.paimon.table.sink.CommitMessageImpl`.
#[pyclass(name = "CommitMessage", module = "paimon_kernel._native", frozen)]
pub struct PyCommitMessage {
    pub(crate) inner: CommitMessage,
    pub(crate) overwrite: Option<OverwriteSpec>,
}

impl PyCommitMessage {
    /// Wrap a message (`overwrite`: from an overwrite writer).
    pub fn new(inner: CommitMessage, overwrite: Option<OverwriteSpec>) -> Self {
        PyCommitMessage { inner, overwrite }
    }
}

#[pymethods]
impl PyCommitMessage {
    /// The bucket.
    #[getter]
    fn bucket(&self) -> i32 {
        self.inner.bucket
    }

    /// Names of the new data files.
    #[getter]
    fn new_files(&self) -> Vec<String> {
        self.inner
            .data_increment
            .new_files
            .iter()
            .map(|f| f.file_name.clone())
            .collect()
    }

    /// Names of the files a compaction wrote.
    #[getter]
    fn compact_after(&self) -> Vec<String> {
        self.inner
            .compact_increment
            .compact_after
            .iter()
            .map(|f| f.file_name.clone())
            .collect()
    }

    /// Names of the files a compaction replaces.
    #[getter]
    fn compact_before(&self) -> Vec<String> {
        self.inner
            .compact_increment
            .compact_before
            .iter()
            .map(|f| f.file_name.clone())
            .collect()
    }

    /// Rows in the new data files.
    #[getter]
    fn row_count(&self) -> i64 {
        self.inner
            .data_increment
            .new_files
            .iter()
            .map(|f| f.row_count)
            .sum()
    }

    /// Whether the message changes nothing.
    fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Whether it comes from an overwrite writer.
    #[getter]
    fn is_overwrite(&self) -> bool {
        self.overwrite.is_some()
    }

    /// Java `CommitMessageSerializer#serialize` bytes at `version` (default 12, Java 2.0;
    /// 11 for Java 1.4).
    #[pyo3(signature = (version=None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        version: Option<i32>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = serializer::encode_version(version.unwrap_or(serializer::VERSION), &self.inner)
            .map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Decode Java `CommitMessageSerializer` bytes of `version` (default 12);
    /// `CorruptFile` for malformed bytes.
    #[staticmethod]
    #[pyo3(signature = (bytes, version=None))]
    fn from_bytes(bytes: &[u8], version: Option<i32>) -> PyResult<PyCommitMessage> {
        let inner =
            serializer::decode(version.unwrap_or(serializer::VERSION), bytes).map_err(to_py_err)?;
        Ok(PyCommitMessage {
            inner,
            overwrite: None,
        })
    }

    /// The pickled form (lossless: every field, and the overwrite intent).
    fn _envelope<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let env = MessageEnvelope {
            message: self.inner.clone(),
            overwrite: self.overwrite.clone(),
        };
        Ok(PyBytes::new(py, &encode_json(MESSAGE_MAGIC, &env)?))
    }

    /// Decode `_envelope` bytes.
    #[staticmethod]
    fn _from_envelope(bytes: &[u8]) -> PyResult<PyCommitMessage> {
        let env: MessageEnvelope = decode_json("commit message", MESSAGE_MAGIC, bytes)?;
        Ok(PyCommitMessage {
            inner: env.message,
            overwrite: env.overwrite,
        })
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (Py<PyAny>,))> {
        let env = MessageEnvelope {
            message: self.inner.clone(),
            overwrite: self.overwrite.clone(),
        };
        reduce_with(
            py,
            "_message_from_envelope",
            encode_json(MESSAGE_MAGIC, &env)?,
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "CommitMessage(bucket={}, new_files={}, compact_after={})",
            self.inner.bucket,
            self.inner.data_increment.new_files.len(),
            self.inner.compact_increment.compact_after.len()
        )
    }
}

/// One compaction task planned by `Table.plan_compaction`: run it anywhere with
/// `Table.run_compaction_task`, commit every task's messages once. Picklable.
///
/// Source: Java `org.apache.paimon.compact.CompactTask` / `AppendCompactTask`.
#[pyclass(name = "CompactTask", module = "paimon_kernel._native", frozen)]
pub struct PyCompactTask {
    pub(crate) inner: Arc<paimon_native::CompactTask>,
}

impl PyCompactTask {
    /// Wrap a task.
    pub fn new(task: paimon_native::CompactTask) -> Self {
        PyCompactTask {
            inner: Arc::new(task),
        }
    }
}

#[pymethods]
impl PyCompactTask {
    /// The bucket.
    #[getter]
    fn bucket(&self) -> i32 {
        self.inner.bucket
    }

    /// Input data file names.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.inner.files.clone()
    }

    /// The snapshot planned on.
    #[getter]
    fn snapshot_id(&self) -> Option<i64> {
        self.inner.snapshot_id
    }

    /// Rows of the inputs (before merging).
    #[getter]
    fn input_rows(&self) -> i64 {
        self.inner.input_rows()
    }

    /// Bytes of the inputs.
    #[getter]
    fn input_bytes(&self) -> i64 {
        self.inner.input_bytes()
    }

    /// The task's bytes (`PKTASK1` ‖ JSON).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            &encode_json(TASK_MAGIC, self.inner.as_ref())?,
        ))
    }

    /// A task from `to_bytes`; `CorruptFile` for anything else.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<PyCompactTask> {
        Ok(PyCompactTask::new(decode_json(
            "compaction task",
            TASK_MAGIC,
            bytes,
        )?))
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (Py<PyAny>,))> {
        reduce_with(
            py,
            "_task_from_bytes",
            encode_json(TASK_MAGIC, self.inner.as_ref())?,
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "CompactTask(bucket={}, files={})",
            self.inner.bucket,
            self.inner.files.len()
        )
    }
}
