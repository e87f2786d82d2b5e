//! Reading rows: plan with the core's planner, read with the core's split readers, hand out
//! Arrow IPC bytes or JSON rows.
//!
//! Row ids (`rowIds: "0-9,42"`) of row-tracking tables are pushed down to the planner and the
//! readers (`ScanRequest::row_ranges`): files outside them are skipped, rows outside them are
//! dropped.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use paimon_kernel::io::Machine;
use paimon_kernel::predicate::Predicate;
use paimon_kernel::read::{OutputColumn, ReadContext, read_splits};
use paimon_kernel::scan::{DataSplit, Plan, ScanRequest, plan_scan};
use paimon_kernel::spec::row_range::parse_row_ranges;
use paimon_kernel::spec::{DataType, TypeKind};
use paimon_kernel::{Error, Result};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;

use crate::ops::Query;
use crate::{Inner, Table, js_err, query_from_js, to_js};
use js_sys::{Promise, Uint8Array};
use std::rc::Rc;
use wasm_bindgen_futures::future_to_promise;

/// The result of a scan: batches of `schema`, the Paimon type of each column.
pub struct ScanOutput {
    /// Snapshot read (`None` for a table without snapshots).
    pub snapshot_id: Option<i64>,
    /// Schema of the batches.
    pub schema: SchemaRef,
    /// Name and Paimon type of each column.
    pub columns: Vec<(String, DataType)>,
    /// The rows.
    pub batches: Vec<RecordBatch>,
}

/// What to read, worked out from a plan and a query.
pub struct ReadSetup {
    /// The read context (projection, filter, limit, row ranges).
    pub ctx: ReadContext,
    /// Splits to read.
    pub splits: Vec<DataSplit>,
}

/// The scan request of a query (time travel, options, filter for pruning, row ids).
///
/// # Errors
/// A filter or row id list that does not parse.
pub fn scan_request(q: &Query) -> Result<ScanRequest> {
    Ok(ScanRequest {
        options: q.table_options(),
        filter: q.filter.as_deref().map(Predicate::parse).transpose()?,
        row_ranges: q.row_ids.as_deref().map(parse_row_ranges).transpose()?,
        all_levels: false,
    })
}

/// Work out the read of `q` over `plan`.
///
/// # Errors
/// Unknown columns, row ids on a table without row tracking, a filter that does not bind.
pub fn setup(plan: &Plan, q: &Query) -> Result<ReadSetup> {
    let filter = q.filter.as_deref().map(Predicate::parse).transpose()?;
    let ctx = ReadContext::try_new(
        plan,
        q.columns.as_deref(),
        filter.as_ref(),
        q.limit,
        q.batch_size.unwrap_or(0),
    )?;
    Ok(ReadSetup {
        ctx,
        splits: plan.splits.clone(),
    })
}

fn columns_of(setup: &ReadSetup) -> Vec<(String, DataType)> {
    setup
        .ctx
        .columns
        .iter()
        .map(|c| match c {
            OutputColumn::Field(f) => (f.name.clone(), f.data_type.clone()),
            other => (
                other.name().to_string(),
                DataType {
                    kind: TypeKind::BigInt,
                    nullable: false,
                },
            ),
        })
        .collect()
}

/// Plan and read `q` over the table's source.
pub(crate) async fn scan(inner: &Inner, q: &Query) -> std::result::Result<ScanOutput, JsValue> {
    let request = scan_request(q).map_err(js_err)?;
    let plan = inner
        .run_once(Machine::once("plan", |io| async move {
            plan_scan(&io, &request).await
        }))
        .await?;
    let setup = setup(&plan, q).map_err(js_err)?;
    let batches = inner
        .run(read_splits(
            Arc::new(setup.ctx.clone()),
            setup.splits.clone(),
        ))
        .await?;
    Ok(ScanOutput {
        snapshot_id: plan.snapshot.as_ref().map(|s| s.id),
        schema: setup.ctx.output_schema.clone(),
        columns: columns_of(&setup),
        batches,
    })
}

/// Arrow IPC stream bytes of a scan (schema message, batches, end marker).
///
/// # Errors
/// Arrow write errors.
pub fn to_ipc(out: &ScanOutput) -> Result<Vec<u8>> {
    let ipc = |e| Error::arrow("writing the Arrow IPC stream", e);
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &out.schema).map_err(ipc)?;
    for b in &out.batches {
        w.write(b).map_err(ipc)?;
    }
    w.finish().map_err(ipc)?;
    w.into_inner().map_err(ipc)
}

/// JSON of a scan: `{snapshotId, columns: [{name, type}], rows, rowCount}`.
///
/// # Errors
/// As [`paimon_kernel::canonical::rows`].
pub fn to_json(out: &ScanOutput) -> Result<Value> {
    let rows = paimon_kernel::canonical::batches_rows(&out.batches)?;
    Ok(json!({
        "snapshotId": out.snapshot_id,
        "columns": out.columns.iter().map(|(n, t)| json!({"name": n, "type": t.sql_string()})).collect::<Vec<_>>(),
        "rowCount": rows.len(),
        "rows": rows,
    }))
}

#[wasm_bindgen]
impl Table {
    /// Read rows as an Arrow IPC stream (`arrow-ipc` StreamWriter bytes): `{columns, limit,
    /// rowIds, filter}` plus an optional snapshot.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array>")]
    pub fn scan(&self, #[wasm_bindgen(unchecked_param_type = "Query")] query: JsValue) -> Promise {
        let inner = Rc::clone(&self.inner);
        let q = query_from_js(&query);
        future_to_promise(async move {
            let q = q?;
            let out = scan(&inner, &q).await?;
            let ipc = to_ipc(&out).map_err(js_err)?;
            Ok(Uint8Array::from(ipc.as_slice()).into())
        })
    }

    /// Read rows as JSON: `{snapshotId, columns: [{name, type}], rows, rowCount}`, values in
    /// the corpus' canonical encoding, except that BIGINT values (and `_ROW_ID`) beyond
    /// ±(2^53 − 1) are decimal strings instead of rounded JS numbers (see the crate docs).
    #[wasm_bindgen(js_name = scanRows, unchecked_return_type = "Promise<Rows>")]
    pub fn scan_rows(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Query")] query: JsValue,
    ) -> Promise {
        let inner = Rc::clone(&self.inner);
        let q = query_from_js(&query);
        future_to_promise(async move {
            let q = q?;
            let out = scan(&inner, &q).await?;
            to_js(&to_json(&out).map_err(js_err)?)
        })
    }
}

#[cfg(test)]
mod tests;
