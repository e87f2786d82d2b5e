//! # paimon-wasm
//!
//! The [`paimon_kernel`] core in the browser (and Node): a `Table` class driving the same
//! core machines as the native host, over bytes from a base URL (`fetch` with `Range`, no
//! listing), a picked directory (File System Access handle or `<input webkitdirectory>`
//! files) or an in-memory map.
//!
//! ```js
//! import init, { Table } from "./pkg/paimon_wasm.js";
//! await init();
//! const t = await Table.openUrl("http://127.0.0.1:8080/data/pk_dedup", p => console.log(p));
//! t.info();                                   // summary of the latest snapshot
//! await t.snapshots();                        // every snapshot, oldest first
//! await t.schema({ snapshotId: 1 });          // the schema snapshot 1 uses
//! await t.files({ tag: "v1" });               // live data files and index files
//! const ipc = await t.scan({ columns: ["k", "name"], limit: 10 });  // Arrow IPC stream
//! const { rows } = await t.scanRows({ limit: 10 });                 // JSON rows
//! const bytes = await t.blob({ rowId: 3, column: "data" });         // Uint8Array | null
//! await t.levels({ partition: "{2024-01-01}" }); // sorted runs per bucket (crate::views)
//! await t.compactionPreview({ full: true });      // the plan-compaction planners' tasks
//! await t.fieldGroups();                          // data-evolution bands and layers
//! await t.timeline();                             // snapshots, file counts, tags
//! ```
//!
//! Every call returns a `Promise`; failures reject with a JS `Error` carrying the core's
//! message (which names the file and what was expected). Between IO rounds the driver yields
//! to the event loop (`setTimeout(0)`) so the page stays responsive, and reports progress to
//! the optional callback: `{op, round, requests, bytes, totalRequests, totalBytes}`.
//!
//! **64-bit integers.** Results are plain JSON values (`JSON.stringify` works on them).
//! Integers are JS numbers while they are safe integers (`Number.isSafeInteger`, |n| ≤
//! 2^53 − 1) and decimal **strings** beyond that, so that no value is rounded: a BIGINT row
//! value `9223372036854775807` arrives as `"9223372036854775807"`, as does a snapshot's
//! `commitIdentifier` of `Long.MAX_VALUE`. Read such a value with `BigInt(v)` (which accepts
//! both forms). Everything else (floats, decimals as strings, dates...) follows the corpus'
//! canonical encoding (see [`paimon_kernel::canonical`]). `scan` (Arrow IPC) carries BIGINT
//! columns as Int64 and is exact too.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod conformance;
pub mod ops;
pub mod scan;
pub mod source;
pub mod views;
pub mod write;
pub mod zip_dir;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise, Uint8Array};
use paimon_kernel::io::{IoAnswer, Machine, Step};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::ops::Query;
use crate::source::{DirHandle, Source, js_message};

/// Install the panic hook (panics are bugs: no input should reach one, but if one does it is
/// reported on the console with its message instead of an opaque `unreachable`).
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = r#"
/** Which snapshot to read and how (all keys optional; at most one of snapshotId/tag/timestampMillis). */
export interface Query {
  snapshotId?: number;
  tag?: string;
  timestampMillis?: number;
  /** Extra table options for this read, e.g. {"scan.version": "3"}. */
  options?: Record<string, string>;
  /** scan: output columns (may include "_ROW_ID" on row-tracking tables). */
  columns?: string[];
  /** scan: at most this many rows. */
  limit?: number;
  /** scan: only these row ids, e.g. "0-9,42" (row-tracking tables). */
  rowIds?: string;
  /** scan: a filter, e.g. "k > 3 AND name IS NOT NULL". */
  filter?: string;
  /** scan: rows per Arrow batch. */
  batchSize?: number;
  /** blob: the row id. */
  rowId?: number;
  /** blob: the BLOB column. */
  column?: string;
}
export interface Progress {
  op: string; round: number; requests: number; bytes: number;
  totalRequests: number; totalBytes: number; source: string;
}
export interface Field { id: number; name: string; type: string; nullable: boolean; description?: string | null }
export interface Summary {
  snapshotId: number | null; earliestSnapshotId: number | null; totalRecordCount: number | null;
  schemaId: number; tableKind: "append" | "primary-key" | "data-evolution";
  primaryKeys: string[]; partitionKeys: string[]; fields: Field[]; options: Record<string, string>;
  source: string; canList: boolean;
}
export interface Schema {
  id: number; version: number; fields: Field[]; highestFieldId: number; partitionKeys: string[];
  primaryKeys: string[]; bucketKeys: string[]; options: Record<string, string>;
  comment: string | null; timeMillis: number; tableKind: string; raw: string | null;
}
export interface Snapshot {
  id: number; schemaId: number; commitKind: string; timeMillis: number; totalRecordCount: number;
  deltaRecordCount: number; changelogRecordCount?: number; nextRowId?: number;
  baseManifestList: string; deltaManifestList: string; indexManifest?: string;
  commitUser: string; commitIdentifier: number | string; [key: string]: unknown;
}
export interface DataFile {
  partition: string; partitionPath: string; bucket: number; totalBuckets: number; level: number;
  fileName: string; path: string; format: string; kind: "data" | "blob"; fileSize: number;
  rowCount: number; minSequenceNumber: number; maxSequenceNumber: number; schemaId: number;
  firstRowId: number | null; lastRowId: number | null; writeCols: string[] | null;
  fileSource: string | null; creationTimeMillis: number | null; deleteRowCount: number | null;
  externalPath: string | null; extraFiles: string[];
}
export interface IndexFile {
  partition: string; bucket: number; indexType: string; fileName: string; path: string;
  fileSize: number; rowCount: number;
  deletionVectors: { dataFile: string; offset: number; length: number; cardinality: number | null }[] | null;
}
export interface Files { snapshotId: number | null; schemaId: number; files: DataFile[]; indexFiles: IndexFile[] }
export interface TagInfo { name: string; snapshotId: number; schemaId: number; commitKind: string; timeMillis: number; totalRecordCount: number }
export interface Column { name: string; type: string }
/** Rows in the corpus' canonical JSON; BIGINT values beyond ±(2^53 − 1) are decimal strings. */
export interface Rows { snapshotId: number | null; columns: Column[]; rows: Record<string, unknown>[]; rowCount: number }
"#;

/// Counters of one table's IO.
#[derive(Default)]
struct Totals {
    requests: Cell<u64>,
    bytes: Cell<u64>,
}

pub(crate) struct Inner {
    source: Source,
    progress: RefCell<Option<Function>>,
    totals: Totals,
    summary: RefCell<Value>,
}

pub(crate) fn js_err(e: paimon_kernel::Error) -> JsValue {
    js_sys::Error::new(&e.to_string()).into()
}

pub(crate) fn js_err_text(e: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&e.to_string()).into()
}

/// `v` as a JS value, integers beyond the safe range as strings (see [`js_safe_integers`]).
pub(crate) fn to_js(v: &Value) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(&js_safe_integers(v.clone())).map_err(js_err_text)?;
    js_sys::JSON::parse(&text)
}

/// JS `Number.MAX_SAFE_INTEGER`, 2^53 − 1.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// `v` with every integer outside ±[`MAX_SAFE_INTEGER`] replaced by its decimal string, at
/// any depth (a JS number would round it). Floats, in range integers and everything else are
/// unchanged.
pub fn js_safe_integers(v: Value) -> Value {
    match v {
        Value::Number(n) => {
            let unsafe_int = match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => i.unsigned_abs() > MAX_SAFE_INTEGER,
                (None, Some(u)) => u > MAX_SAFE_INTEGER,
                (None, None) => false,
            };
            if unsafe_int {
                Value::String(n.to_string())
            } else {
                Value::Number(n)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(js_safe_integers).collect()),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, x)| (k, js_safe_integers(x)))
                .collect(),
        ),
        other => other,
    }
}

/// The JSON text of a JS options value (`undefined`/`null` → `None`).
pub(crate) fn query_from_js(v: &JsValue) -> Result<Query, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(Query::default());
    }
    let text = js_sys::JSON::stringify(v)
        .map_err(|e| js_err_text(format!("options are not JSON: {}", js_message(&e))))?;
    Query::from_json(text.as_string().as_deref()).map_err(js_err)
}

impl Inner {
    fn report(&self, op: &str, round: u64, requests: usize, bytes: u64) {
        let cb = self.progress.borrow().clone();
        if let Some(cb) = cb {
            let ev = json!({
                "op": op,
                "round": round,
                "requests": requests,
                "bytes": bytes,
                "totalRequests": self.totals.requests.get(),
                "totalBytes": self.totals.bytes.get(),
                "source": self.source.kind(),
            });
            if let Ok(v) = to_js(&ev) {
                // A throwing callback must not break the read.
                let _ = cb.call1(&JsValue::NULL, &v);
            }
        }
    }

    /// Drive `machine` to the end over the source: each round answered concurrently, then a
    /// yield to the event loop; returns everything emitted.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        mut machine: Machine<T>,
    ) -> Result<Vec<T>, JsValue> {
        let mut out = Vec::new();
        let mut round_no = 0u64;
        loop {
            match machine.step().map_err(js_err)? {
                Step::NeedIo(round) => {
                    round_no += 1;
                    let answers = self.source.answer_round(&round).await;
                    let mut bytes = 0u64;
                    for (req, answer) in round.iter().zip(answers) {
                        if let IoAnswer::Bytes { bytes: b } = &answer {
                            bytes += b.len() as u64;
                        }
                        machine.provide(req.id, answer).map_err(js_err)?;
                    }
                    self.totals
                        .requests
                        .set(self.totals.requests.get() + round.len() as u64);
                    self.totals.bytes.set(self.totals.bytes.get() + bytes);
                    self.report(machine.name(), round_no, round.len(), bytes);
                    source::yield_to_event_loop().await;
                }
                Step::Emit(item) => out.push(item),
                Step::Work(items) => items.into_iter().for_each(|w| w.run()),
                Step::Wait => {}
                Step::Done => return Ok(out),
            }
        }
    }

    /// Run a machine that emits exactly one value.
    pub(crate) async fn run_once<T: Send + 'static>(
        &self,
        machine: Machine<T>,
    ) -> Result<T, JsValue> {
        let name = machine.name();
        self.run(machine)
            .await?
            .pop()
            .ok_or_else(|| js_err_text(format!("{name} finished without a result")))
    }

    async fn json_op<F, Fut>(&self, name: &'static str, body: F) -> Result<JsValue, JsValue>
    where
        F: FnOnce(paimon_kernel::io::Io<Value>) -> Fut,
        Fut: std::future::Future<Output = paimon_kernel::Result<Value>> + Send + 'static,
    {
        let v = self.run_once(Machine::once(name, body)).await?;
        to_js(&v)
    }
}

/// A Paimon table opened over one source. Obtain one with `Table.openUrl`,
/// `Table.openFiles`, `Table.openDirectory` or `Table.openMemory`.
#[wasm_bindgen]
pub struct Table {
    pub(crate) inner: Rc<Inner>,
}

async fn open(source: Source, progress: Option<Function>) -> Result<Table, JsValue> {
    let inner = Rc::new(Inner {
        source,
        progress: RefCell::new(progress),
        totals: Totals::default(),
        summary: RefCell::new(Value::Null),
    });
    let mut summary = inner
        .run_once(Machine::once("open", |io| async move {
            ops::summary(&io).await
        }))
        .await?;
    if let Value::Object(m) = &mut summary {
        m.insert("source".into(), inner.source.kind().into());
        m.insert("canList".into(), inner.source.can_list().into());
    }
    *inner.summary.borrow_mut() = summary;
    Ok(Table { inner })
}

#[wasm_bindgen]
impl Table {
    /// Open the table at a base URL (`http(s)://.../table`). Bytes are fetched with `Range`
    /// requests; nothing is listed (snapshots are found from the hint files and by probing).
    #[wasm_bindgen(js_name = openUrl)]
    pub async fn open_url(
        url: String,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "(p: Progress) => void")]
        on_progress: Option<Function>,
    ) -> Result<Table, JsValue> {
        let base = url.trim_end_matches('/').to_string();
        if base.is_empty() {
            return Err(js_err_text("empty URL"));
        }
        open(Source::Http { base }, on_progress).await
    }

    /// Open a table from the files of an `<input type=file webkitdirectory>` (a `FileList`
    /// or `File[]` with `webkitRelativePath`). `subPath` is the table directory inside the
    /// picked folder (`""` = the picked folder is the table).
    #[wasm_bindgen(js_name = openFiles)]
    pub async fn open_files(
        #[wasm_bindgen(unchecked_param_type = "FileList | File[]")] files: JsValue,
        #[wasm_bindgen(js_name = subPath)] sub_path: Option<String>,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "(p: Progress) => void")]
        on_progress: Option<Function>,
    ) -> Result<Table, JsValue> {
        let map = source::files_by_path(&files, sub_path.as_deref().unwrap_or(""))
            .map_err(js_err_text)?;
        open(Source::Files(map), on_progress).await
    }

    /// Open a table from a File System Access directory handle
    /// (`await showDirectoryPicker()`); `subPath` as in `openFiles`.
    #[wasm_bindgen(js_name = openDirectory)]
    pub async fn open_directory(
        #[wasm_bindgen(unchecked_param_type = "FileSystemDirectoryHandle")] handle: JsValue,
        #[wasm_bindgen(js_name = subPath)] sub_path: Option<String>,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "(p: Progress) => void")]
        on_progress: Option<Function>,
    ) -> Result<Table, JsValue> {
        if !handle.is_object() {
            return Err(js_err_text("expected a FileSystemDirectoryHandle"));
        }
        let mut dir: DirHandle = handle.unchecked_into();
        for seg in sub_path
            .as_deref()
            .unwrap_or("")
            .split('/')
            .filter(|s| !s.is_empty())
        {
            let p = dir_step(&dir, seg)?;
            dir = wasm_bindgen_futures::JsFuture::from(p)
                .await
                .map_err(|e| js_err_text(format!("{seg}: {}", js_message(&e))))?
                .unchecked_into();
        }
        open(Source::Directory(dir), on_progress).await
    }

    /// Open a table from a `Map<string, Uint8Array>` (or a plain object) of path (relative to
    /// the table root) → bytes.
    #[wasm_bindgen(js_name = openMemory)]
    pub async fn open_memory(
        #[wasm_bindgen(
            unchecked_param_type = "Map<string, Uint8Array> | Record<string, Uint8Array>"
        )]
        files: JsValue,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "(p: Progress) => void")]
        on_progress: Option<Function>,
    ) -> Result<Table, JsValue> {
        let store = source::memory_from_js(&files).map_err(js_err_text)?;
        open(Source::Memory(RefCell::new(store)), on_progress).await
    }

    /// Replace the progress callback (`null` to remove it).
    #[wasm_bindgen(js_name = setProgress)]
    pub fn set_progress(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((p: Progress) => void) | null")] cb: Option<
            Function,
        >,
    ) {
        *self.inner.progress.borrow_mut() = cb;
    }

    /// Summary of the latest snapshot, as found when the table was opened.
    #[wasm_bindgen(unchecked_return_type = "Summary")]
    pub fn info(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.summary.borrow())
    }

    /// IO done so far: `{requests, bytes}`.
    #[wasm_bindgen(unchecked_return_type = "{requests: number, bytes: number}")]
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        to_js(&json!({
            "requests": self.inner.totals.requests.get(),
            "bytes": self.inner.totals.bytes.get(),
        }))
    }

    /// Every snapshot file still present, oldest first (Java's keys).
    #[wasm_bindgen(unchecked_return_type = "Promise<Snapshot[]>")]
    pub fn snapshots(&self) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            inner
                .json_op("snapshots", |io| async move { ops::snapshots(&io).await })
                .await
        })
    }

    /// The schema the queried snapshot uses (`{snapshotId}` / `{tag}` / nothing = latest).
    #[wasm_bindgen(unchecked_return_type = "Promise<Schema>")]
    pub fn schema(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Query")] query: JsValue,
    ) -> Promise {
        let inner = Rc::clone(&self.inner);
        let q = query_from_js(&query);
        future_to_promise(async move {
            let q = q?;
            inner
                .json_op("schema", |io| async move { ops::schema(&io, &q).await })
                .await
        })
    }

    /// Schema file `schema/schema-<id>`.
    #[wasm_bindgen(js_name = schemaById, unchecked_return_type = "Promise<Schema>")]
    pub fn schema_by_id(&self, id: i32) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            inner
                .json_op("schema", move |io| async move {
                    ops::schema_by_id(&io, i64::from(id)).await
                })
                .await
        })
    }

    /// Live data files and index files of the queried snapshot.
    #[wasm_bindgen(unchecked_return_type = "Promise<Files>")]
    pub fn files(&self, #[wasm_bindgen(unchecked_param_type = "Query")] query: JsValue) -> Promise {
        let inner = Rc::clone(&self.inner);
        let q = query_from_js(&query);
        future_to_promise(async move {
            let q = q?;
            inner
                .json_op("files", |io| async move { ops::files(&io, &q).await })
                .await
        })
    }

    /// Tags: all of them when the source can list; otherwise (or when `names` is given) the
    /// named ones.
    #[wasm_bindgen(unchecked_return_type = "Promise<TagInfo[]>")]
    pub fn tags(&self, names: Option<Vec<String>>) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            inner
                .json_op("tags", |io| async move { ops::tags(&io, names).await })
                .await
        })
    }

    /// The bytes of one BLOB value (`{rowId, column}` plus an optional snapshot); `null` for a
    /// NULL value.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array | null>")]
    pub fn blob(&self, #[wasm_bindgen(unchecked_param_type = "Query")] query: JsValue) -> Promise {
        let inner = Rc::clone(&self.inner);
        let q = query_from_js(&query);
        future_to_promise(async move {
            let q = q?;
            let got = inner
                .run_once(Machine::once("blob", |io| async move {
                    ops::blob(&io, &q).await
                }))
                .await?;
            Ok(match got {
                Some(b) => Uint8Array::from(b.as_ref()).into(),
                None => JsValue::NULL,
            })
        })
    }
}

fn dir_step(dir: &DirHandle, seg: &str) -> Result<Promise, JsValue> {
    let f: Function = js_sys::Reflect::get(dir, &"getDirectoryHandle".into())?
        .dyn_into()
        .map_err(|_| js_err_text("expected a FileSystemDirectoryHandle"))?;
    f.call1(dir, &seg.into())?
        .dyn_into::<Promise>()
        .map_err(|_| js_err_text("getDirectoryHandle did not return a promise"))
}
