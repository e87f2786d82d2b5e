//! Reading rows: plan with the core's planner, read with the core's split readers, hand out
//! Arrow IPC bytes or JSON rows.
//!
//! Row ids (`rowIds: "0-9,42"`) select rows of row-tracking tables: splits whose files hold
//! none of the ids are skipped, then rows are kept by their `_ROW_ID` (added to the read when
//! not asked for, and removed again); the limit applies after that selection.
//!
//! Data-evolution tables: `.blob` files hold only BLOB columns, so a read that projects no
//! BLOB column leaves them out of the splits; a split whose remaining files have disjoint
//! row-id ranges is then a plain append read.

use std::sync::Arc;

use arrow_array::{Array, BooleanArray, Int64Array, RecordBatch};
use arrow_schema::{Schema, SchemaRef};
use paimon_kernel::evolution::row_range::{RowRange, parse_row_ranges, sort_and_merge};
use paimon_kernel::io::Machine;
use paimon_kernel::predicate::Predicate;
use paimon_kernel::read::{OutputColumn, ROW_ID, ReadContext, read_splits};
use paimon_kernel::scan::{DataSplit, Plan, ScanRequest, TableKind, plan_scan};
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
    /// The read context (projection incl. an added `_ROW_ID`, filter, limit).
    pub ctx: ReadContext,
    /// Splits to read.
    pub splits: Vec<DataSplit>,
    /// Row id selection, sorted and merged.
    pub row_ranges: Option<Vec<RowRange>>,
    /// Index of `_ROW_ID` in the read's columns when it was added for the selection only.
    pub drop_column: Option<usize>,
    /// Limit to apply after the row id selection.
    pub limit: Option<u64>,
}

/// The scan request of a query (time travel, options, filter for pruning).
///
/// # Errors
/// A filter that does not parse.
pub fn scan_request(q: &Query) -> Result<ScanRequest> {
    Ok(ScanRequest {
        options: q.table_options(),
        filter: q.filter.as_deref().map(Predicate::parse).transpose()?,
    })
}

fn strip_blob_files(split: &mut DataSplit) {
    split.data_files.retain(|f| !f.is_blob_file());
    if let Some(d) = &mut split.deletion_files {
        // Deletion files are per data file, in order; blob files never carry one here, but keep
        // the two lists aligned if they did.
        d.truncate(split.data_files.len());
    }
    let mut ranges: Vec<(i64, i64)> = split
        .data_files
        .iter()
        .filter_map(|f| f.row_id_range().map(|r| (*r.start(), *r.end())))
        .collect();
    ranges.sort();
    let disjoint =
        ranges.len() == split.data_files.len() && ranges.windows(2).all(|w| w[0].1 < w[1].0);
    if disjoint {
        split.raw_convertible = true;
    }
}

/// Work out the read of `q` over `plan`.
///
/// # Errors
/// Unknown columns, `rowIds` on a table without row tracking or malformed, a filter that does
/// not parse or bind.
pub fn setup(plan: &Plan, q: &Query) -> Result<ReadSetup> {
    let filter = q.filter.as_deref().map(Predicate::parse).transpose()?;
    let row_ranges = q
        .row_ids
        .as_deref()
        .map(|s| parse_row_ranges(s).map(|r| sort_and_merge(&r)))
        .transpose()?;
    let mut projection: Option<Vec<String>> = q.columns.clone();
    let mut drop_column = None;
    if row_ranges.is_some() {
        let mut cols = projection
            .unwrap_or_else(|| plan.schema.fields.iter().map(|f| f.name.clone()).collect());
        if !cols.iter().any(|c| c == ROW_ID) {
            drop_column = Some(cols.len());
            cols.push(ROW_ID.to_string());
        }
        projection = Some(cols);
    }
    let read_limit = if row_ranges.is_some() { None } else { q.limit };
    let ctx = ReadContext::try_new(
        plan,
        projection.as_deref(),
        filter.as_ref(),
        read_limit,
        q.batch_size.unwrap_or(0),
    )?;
    let mut splits = plan.splits.clone();
    if let Some(ranges) = &row_ranges {
        splits.retain(|s| {
            s.data_files.iter().any(|f| {
                f.row_id_range().is_some_and(|r| {
                    ranges
                        .iter()
                        .any(|x| x.from <= *r.end() && *r.start() <= x.to)
                })
            })
        });
    }
    let projects_blob = ctx.columns.iter().any(|c| match c {
        OutputColumn::Field(f) => contains_blob(&f.data_type),
        _ => false,
    });
    if ctx.table_kind == TableKind::DataEvolution && !projects_blob {
        for s in &mut splits {
            strip_blob_files(s);
        }
        splits.retain(|s| !s.data_files.is_empty());
    }
    Ok(ReadSetup {
        ctx,
        splits,
        row_ranges,
        drop_column,
        limit: q.limit,
    })
}

fn contains_blob(t: &DataType) -> bool {
    match &t.kind {
        TypeKind::Blob => true,
        TypeKind::Array(e) | TypeKind::Multiset(e) => contains_blob(e),
        TypeKind::Vector { element, .. } => contains_blob(element),
        TypeKind::Map(k, v) => contains_blob(k) || contains_blob(v),
        TypeKind::Row(fields) => fields.iter().any(|f| contains_blob(&f.data_type)),
        _ => false,
    }
}

/// Apply the row id selection, drop the helper column and apply the limit.
///
/// # Errors
/// A batch without an Int64 `_ROW_ID` column where one is needed.
pub fn finish(
    setup: &ReadSetup,
    batches: Vec<RecordBatch>,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let mut schema = setup.ctx.output_schema.clone();
    if let Some(i) = setup.drop_column {
        let mut fields: Vec<_> = schema.fields().iter().cloned().collect();
        fields.remove(i);
        schema = Arc::new(Schema::new(fields));
    }
    let row_id_at = setup
        .ctx
        .columns
        .iter()
        .position(|c| matches!(c, OutputColumn::RowId));
    let mut out = Vec::new();
    let mut left = setup.limit;
    for mut b in batches {
        if let Some(ranges) = &setup.row_ranges {
            let ids = row_id_at
                .and_then(|i| b.column(i).as_any().downcast_ref::<Int64Array>())
                .ok_or_else(|| {
                    Error::invalid("row id selection: the read has no _ROW_ID column")
                })?;
            let keep: BooleanArray = ids
                .iter()
                .map(|id| Some(id.is_some_and(|id| ranges.iter().any(|r| r.contains(id)))))
                .collect();
            b = arrow_select::filter::filter_record_batch(&b, &keep)
                .map_err(|e| Error::arrow("row id selection", e))?;
        }
        if let Some(i) = setup.drop_column {
            b.remove_column(i);
        }
        if let Some(l) = left {
            if l == 0 {
                break;
            }
            let n = (b.num_rows() as u64).min(l);
            b = b.slice(0, n as usize);
            left = Some(l - n);
        }
        if b.num_rows() > 0 {
            out.push(b);
        }
    }
    Ok((schema, out))
}

fn columns_of(setup: &ReadSetup) -> Vec<(String, DataType)> {
    let mut cols: Vec<(String, DataType)> = setup
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
        .collect();
    if let Some(i) = setup.drop_column {
        cols.remove(i);
    }
    cols
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
    let (schema, batches) = finish(&setup, batches).map_err(js_err)?;
    Ok(ScanOutput {
        snapshot_id: plan.snapshot.as_ref().map(|s| s.id),
        schema,
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
/// As [`crate::rows::to_rows`].
pub fn to_json(out: &ScanOutput) -> Result<Value> {
    let rows = crate::rows::to_rows(&out.batches, &out.columns)?;
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
    /// the corpus' canonical encoding (BIGINT beyond 2^53 loses precision in JS numbers).
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
