//! The scan of a table as a case runs it: the plan (section `plan`), then one read per split
//! in plan order (sections `split-<n>`), the rows cut at the limit; and the canonical outcome
//! of the rows.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;
use paimon_kernel::io::{Io, Machine};
use paimon_kernel::predicate::Predicate;
use paimon_kernel::read::{ReadContext, read_split};
use paimon_kernel::scan::{Plan, ScanRequest, plan_scan};
use paimon_kernel::{Error, Result};
use serde_json::{Value, json};

use crate::driver::{Driver, Outcome, one, pretty};

/// What a scan reads: the fields of [`crate::Operation::Scan`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanArgs<'a> {
    /// Read this snapshot (default: the latest).
    pub snapshot_id: Option<i64>,
    /// Read this tag.
    pub tag: Option<&'a str>,
    /// Options of the scan (`scan.*`, ...).
    pub options: Option<&'a BTreeMap<String, String>>,
    /// Columns to read, in order (default: all).
    pub columns: Option<&'a [String]>,
    /// Row filter (`--where` syntax).
    pub filter: Option<&'a str>,
    /// Stop after this many rows.
    pub limit: Option<u64>,
    /// Rows per batch (0: the reader's default).
    pub batch_size: usize,
}

/// Run a scan (sections `plan`, `split-<n>`).
///
/// # Errors
/// Whatever a machine or the driver returns; [`Error::Invalid`] for a bad filter or column.
pub async fn run_scan<D: Driver>(driver: &mut D, args: ScanArgs<'_>) -> Result<Outcome> {
    let empty = BTreeMap::new();
    let ScanArgs {
        snapshot_id,
        tag,
        options,
        columns,
        filter,
        limit,
        batch_size,
    } = args;
    let options = options.unwrap_or(&empty);
    let filter = filter.map(Predicate::parse).transpose()?;
    let plan = run_plan(driver, scan_request(snapshot_id, tag, options)).await?;
    let ctx = Arc::new(ReadContext::try_new(
        &plan,
        columns,
        filter.as_ref(),
        limit,
        batch_size,
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

pub(crate) fn scan_request(
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

pub(crate) async fn run_plan<D: Driver>(driver: &mut D, request: ScanRequest) -> Result<Plan> {
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
