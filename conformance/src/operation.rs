//! What a case runs: an [`Operation`] is a fixed sequence of core machines, each driven by a
//! [`Driver`] under a label (`plan`, `split-0`, `split-1`...; `create`, `restore-0`,
//! `write-0`, `commit-0`... for writes). The sequence depends only on
//! the operation and on what earlier machines emitted, never on host scheduling: a host that
//! reads splits in parallel records the same sections as one that reads them in turn.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;
use paimon_kernel::io::{Io, Machine};
use paimon_kernel::predicate::Predicate;
use paimon_kernel::read::{ReadContext, read_split};
use paimon_kernel::scan::snapshot_resolver::{
    TimeTravel, list_snapshots, list_tags, read_schema, resolve_snapshot,
};
use paimon_kernel::scan::{Plan, ScanRequest, plan_scan};
use paimon_kernel::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::write::{CommitSpec, CreateSpec, run_write};

/// An operation of a case with its parameters (`case.json` `operation`).
///
/// Time travel: at most one of `snapshot_id` and `tag`; `options` are further table option
/// overrides (e.g. `scan.timestamp-millis`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Operation {
    /// Every snapshot still present. Sections: `snapshots`.
    Snapshots,
    /// Every tag with its snapshot. Sections: `tags`.
    Tags,
    /// The snapshot a read sees and its schema. Sections: `schema`.
    Schema {
        /// Snapshot id, `None` for the latest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot_id: Option<i64>,
        /// Tag name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
    },
    /// A scan plan (splits and their files). Sections: `plan`.
    Plan {
        /// Snapshot id, `None` for the latest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot_id: Option<i64>,
        /// Tag name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
        /// Further option overrides.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        options: BTreeMap<String, String>,
    },
    /// A full read. Sections: `plan`, then `split-<i>` for each split in plan order until
    /// `limit` rows were read.
    Scan {
        /// Snapshot id, `None` for the latest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot_id: Option<i64>,
        /// Tag name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
        /// Further option overrides.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        options: BTreeMap<String, String>,
        /// Output columns, `None` for every field of the read schema.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        columns: Option<Vec<String>>,
        /// Row filter in the `--where` syntax ([`Predicate::parse`]).
        #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
        filter: Option<String>,
        /// At most this many rows in total.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u64>,
        /// Rows per batch (0: the core's default).
        #[serde(default)]
        batch_size: usize,
    },
    /// Create a table (when `create` is given), write and commit rows (one write and commit
    /// per entry of `commits`), then read the table back. Sections: `create`; per commit `i`
    /// `restore-i`, `write-i`, `commit-i`; then `snapshots`, `plan`, `split-<n>` (see
    /// [`crate::write`]).
    Write {
        /// The table to create first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        create: Option<CreateSpec>,
        /// The writes and commits, in order.
        commits: Vec<CommitSpec>,
    },
}

impl Operation {
    /// A scan of the latest snapshot with defaults.
    pub fn scan() -> Operation {
        Operation::Scan {
            snapshot_id: None,
            tag: None,
            options: BTreeMap::new(),
            columns: None,
            filter: None,
            limit: None,
            batch_size: 0,
        }
    }
}

/// The result of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Canonical JSON view (`expected/result.json`): pretty-printed, ending in a newline.
    pub json: String,
    /// Arrow IPC stream of the rows (`expected/result.arrows`), for scans.
    pub arrow: Option<Vec<u8>>,
}

/// Drives one machine to its end and returns what it emitted, in order. Implemented by the
/// recording host (answers from a real store and records), the replayer (answers from a
/// transcript) and the fault-injecting host.
pub trait Driver {
    /// Drive `machine`, the next machine of the operation, labelled `label`.
    ///
    /// # Errors
    /// The machine's error, or the driver's own (IO drift in replay, as
    /// [`Error::Protocol`]).
    fn drive<T: Send + 'static>(
        &mut self,
        label: &str,
        machine: Machine<T>,
    ) -> impl Future<Output = Result<Vec<T>>>;
}

fn scan_request(
    snapshot_id: Option<i64>,
    tag: Option<&str>,
    options: &BTreeMap<String, String>,
) -> ScanRequest {
    let mut request = ScanRequest::default();
    for (k, v) in options {
        request = request.with_option(k, v);
    }
    if let Some(id) = snapshot_id {
        request = request.with_snapshot_id(id);
    }
    if let Some(tag) = tag {
        request = request.with_tag(tag);
    }
    request
}

pub(crate) fn one<T>(mut items: Vec<T>, label: &str) -> Result<T> {
    match (items.pop(), items.is_empty()) {
        (Some(item), true) => Ok(item),
        _ => Err(Error::Protocol {
            detail: format!("{label}: expected exactly one result"),
        }),
    }
}

pub(crate) fn pretty(value: &Value) -> Result<String> {
    let mut s = serde_json::to_string_pretty(value)
        .map_err(|e| Error::invalid(format!("cannot render the result: {e}")))?;
    s.push('\n');
    Ok(s)
}

pub(crate) fn to_value<S: Serialize>(v: &S) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::invalid(format!("cannot render the result: {e}")))
}

/// Run `op` through `driver`.
///
/// # Errors
/// Whatever a machine or the driver returns; [`Error::Invalid`] for a bad filter or column.
pub async fn run_operation<D: Driver>(driver: &mut D, op: &Operation) -> Result<Outcome> {
    match op {
        Operation::Snapshots => {
            let m = Machine::once(
                "snapshots",
                |io: Io<_>| async move { list_snapshots(&io).await },
            );
            let snapshots = one(driver.drive("snapshots", m).await?, "snapshots")?;
            Ok(Outcome {
                json: pretty(&to_value(&snapshots)?)?,
                arrow: None,
            })
        }
        Operation::Tags => {
            let m = Machine::once("tags", |io: Io<_>| async move { list_tags(&io).await });
            let tags = one(driver.drive("tags", m).await?, "tags")?;
            let rendered: Vec<Value> = tags
                .iter()
                .map(|(name, tag)| {
                    Ok(json!({
                        "name": name,
                        "snapshot": to_value(&tag.snapshot)?,
                        "tag_create_time": format!("{:?}", tag.tag_create_time),
                        "tag_time_retained": format!("{:?}", tag.tag_time_retained),
                    }))
                })
                .collect::<Result<_>>()?;
            Ok(Outcome {
                json: pretty(&Value::Array(rendered))?,
                arrow: None,
            })
        }
        Operation::Schema { snapshot_id, tag } => {
            let travel = match (snapshot_id, tag) {
                (Some(id), _) => TimeTravel::SnapshotId(*id),
                (None, Some(t)) => TimeTravel::Tag(t.clone()),
                (None, None) => TimeTravel::Latest,
            };
            let m = Machine::once("schema", move |io: Io<_>| async move {
                let Some(snapshot) = resolve_snapshot(&io, &travel).await? else {
                    return Ok(None);
                };
                let schema = read_schema(&io, snapshot.schema_id).await?;
                Ok(Some((snapshot.id, schema)))
            });
            let got = one(driver.drive("schema", m).await?, "schema")?;
            let value = match got {
                None => Value::Null,
                Some((id, schema)) => json!({"snapshot_id": id, "schema": to_value(&schema)?}),
            };
            Ok(Outcome {
                json: pretty(&value)?,
                arrow: None,
            })
        }
        Operation::Plan {
            snapshot_id,
            tag,
            options,
        } => {
            let plan =
                run_plan(driver, scan_request(*snapshot_id, tag.as_deref(), options)).await?;
            Ok(Outcome {
                json: pretty(&to_value(&plan)?)?,
                arrow: None,
            })
        }
        Operation::Scan { .. } => run_scan(driver, op).await,
        Operation::Write { create, commits } => run_write(driver, create.as_ref(), commits).await,
    }
}

/// Run a [`Operation::Scan`] (sections `plan`, `split-<n>`); any other operation is an
/// [`Error::Invalid`].
///
/// # Errors
/// As [`run_operation`].
pub async fn run_scan<D: Driver>(driver: &mut D, op: &Operation) -> Result<Outcome> {
    let Operation::Scan {
        snapshot_id,
        tag,
        options,
        columns,
        filter,
        limit,
        batch_size,
    } = op
    else {
        return Err(Error::invalid("run_scan needs a scan operation"));
    };
    let filter = filter.as_deref().map(Predicate::parse).transpose()?;
    let plan = run_plan(driver, scan_request(*snapshot_id, tag.as_deref(), options)).await?;
    let ctx = Arc::new(ReadContext::try_new(
        &plan,
        columns.as_deref(),
        filter.as_ref(),
        *limit,
        *batch_size,
    )?);
    let mut batches: Vec<RecordBatch> = Vec::new();
    let mut rows: u64 = 0;
    for (i, split) in plan.splits.iter().enumerate() {
        if limit.is_some_and(|l| rows >= l) {
            break;
        }
        let label = format!("split-{i}");
        let got = driver
            .drive(&label, read_split(Arc::clone(&ctx), split.clone()))
            .await?;
        for batch in got {
            let take = match limit {
                Some(l) => (l - rows).min(batch.num_rows() as u64),
                None => batch.num_rows() as u64,
            };
            if take == 0 {
                break;
            }
            let batch = if take < batch.num_rows() as u64 {
                batch.slice(0, take as usize)
            } else {
                batch
            };
            rows += take;
            batches.push(batch);
        }
    }
    scan_outcome(&ctx.output_schema, &batches)
}

async fn run_plan<D: Driver>(driver: &mut D, request: ScanRequest) -> Result<Plan> {
    let m = Machine::once("plan_scan", move |io: Io<Plan>| async move {
        plan_scan(&io, &request).await
    });
    one(driver.drive("plan", m).await?, "plan")
}

/// The outcome of a scan: the IPC stream of `batches` under `schema` and the canonical view.
///
/// # Errors
/// [`Error::Arrow`] when IPC encoding fails; [`Error::Unsupported`] for a type without a
/// canonical rendering.
pub fn scan_outcome(schema: &arrow_schema::SchemaRef, batches: &[RecordBatch]) -> Result<Outcome> {
    let arrow_err = |source| Error::Arrow {
        context: "writing the Arrow IPC stream of the result".to_string(),
        source,
    };
    let mut writer = StreamWriter::try_new(Vec::new(), schema).map_err(arrow_err)?;
    for b in batches {
        writer.write(b).map_err(arrow_err)?;
    }
    writer.finish().map_err(arrow_err)?;
    let arrow = writer.into_inner().map_err(arrow_err)?;
    let mut rows = Vec::new();
    for b in batches {
        rows.extend(paimon_kernel::canonical::rows(b)?);
    }
    let columns: Vec<Value> = schema
        .fields()
        .iter()
        .map(|f| json!({"name": f.name(), "type": f.data_type().to_string(), "nullable": f.is_nullable()}))
        .collect();
    let value = json!({
        "columns": columns,
        "row_count": rows.len(),
        "batches": batches.len(),
        "rows": rows,
    });
    Ok(Outcome {
        json: pretty(&value)?,
        arrow: Some(arrow),
    })
}

/// Poll a future that never waits (every [`Driver`] of this crate answers synchronously) to
/// its end with a no-op waker.
///
/// # Errors
/// [`Error::Protocol`] if the future is still pending after polling (a driver that waits).
pub fn block_on_ready<F: Future>(fut: F) -> Result<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Ok(v),
        std::task::Poll::Pending => Err(Error::Protocol {
            detail: "a synchronous driver suspended".to_string(),
        }),
    }
}
