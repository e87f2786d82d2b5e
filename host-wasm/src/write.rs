//! Writing from the page: create a table in memory, write rows from a dropped file, compact,
//! and take the table away as a zip of its directory.
//!
//! ```js
//! const t = await Table.create(JSON.stringify({fields: [...], primaryKeys: ["k"], options: {bucket: "2"}}));
//! await t.write(csvBytes, { format: "csv" });          // one APPEND snapshot (+ COMPACT for lookup tables)
//! await t.write(jsonl, { format: "jsonl", overwrite: true, partition: { dt: "2024-01-01" } });
//! await t.compact({ full: true });                      // one COMPACT snapshot
//! const zip = await t.exportZip("my_table");            // Uint8Array, entries my_table/...
//! ```
//!
//! The writes and compactions are the core's one-shot jobs
//! ([`paimon_kernel::job`]): the same writers, compaction tasks and commit as the
//! native host, over the table's source. Writable sources: an in-memory table (`create`,
//! `openMemory`) and a directory handle (`openDirectory`: a picked folder with write
//! permission, or the origin-private file system). The page is the only writer of such a
//! table: create-new on a directory handle is a check then a write, not atomic against another
//! writer. URL and file-list sources stay read-only.
//!
//! Time, the commit user and the seed of new names default to the page's clock
//! (`Date.now()`), a random UUID and `Math.random()`; a test passes them (`timeMillis`,
//! `commitUser`, `seed`) to get the same bytes on every run.

use std::cell::RefCell;
use std::rc::Rc;

use bytes::Bytes;
use js_sys::{Function, Promise, Uint8Array};
use paimon_kernel::canonical::input::InputFormat;
use paimon_kernel::io::{Machine, MemoryStore};
use paimon_kernel::job::{JobSettings, RowInput, WriteMode, compact_job, write_input_job};
use paimon_kernel::schema::create::{create_table_machine, new_table_schema};
use paimon_kernel::util::NameSource;
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::source::{Source, js_message};
use crate::{Inner, Table, js_err, js_err_text, to_js};

#[wasm_bindgen(typescript_custom_section)]
const TS_WRITE_TYPES: &str = r#"
/** Who commits, when, and the seed of new file names (all optional). */
export interface JobOptions {
  /** Commit user (default: a random UUID). As in Java, a batch commit is applied once per
   * user: a second write with the same user commits nothing (use a new user per write). */
  commitUser?: string;
  /** "Now" in epoch millis (default: Date.now()). */
  timeMillis?: number;
  /** Seed of new file names (default: random). */
  seed?: number;
  /** The URI the table will be read at (e.g. "file:///warehouse/db.db/t"): managed BLOB
   * descriptors name their packs by full URI, so tables with managed BLOB columns need it. */
  tableUri?: string;
}
export interface WriteOptions extends JobOptions {
  /** "csv" | "jsonl" | "parquet" | "arrow" (default: from `name`'s extension). */
  format?: string;
  /** The input's name, for errors and the format (default "input"). */
  name?: string;
  /** INSERT OVERWRITE instead of an append. */
  overwrite?: boolean;
  /** With overwrite: the static partition to replace, e.g. {dt: "2024-01-01"}. */
  partition?: Record<string, string>;
}
export interface CompactOptions extends JobOptions {
  /** Full compaction: every sorted run of each bucket to the max level. */
  full?: boolean;
}
export interface CommitOutcome { snapshotIds: number[]; maintenanceWarning?: string; [key: string]: unknown }
export interface WriteResult { rows: number; dataFiles: number; commit: CommitOutcome }
export interface CompactResult { baseSnapshot: number | null; tasks: number; filesIn: number; filesOut: number; commit: CommitOutcome }
"#;

/// The options of `write` and `compact`, as JSON.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JobQuery {
    commit_user: Option<String>,
    time_millis: Option<i64>,
    seed: Option<u64>,
    format: Option<String>,
    name: Option<String>,
    #[serde(default)]
    overwrite: bool,
    partition: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default)]
    full: bool,
    table_uri: Option<String>,
}

fn job_query(v: &JsValue) -> Result<JobQuery, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(JobQuery::default());
    }
    let text = js_sys::JSON::stringify(v)
        .map_err(|e| js_err_text(format!("options are not JSON: {}", js_message(&e))))?;
    let text = text.as_string().unwrap_or_default();
    serde_json::from_str(&text).map_err(|e| js_err_text(format!("options: {e}")))
}

/// A seed from `Math.random()` (53 random bits).
fn random_seed() -> u64 {
    let hi = (js_sys::Math::random() * f64::from(1u32 << 26)) as u64;
    let lo = (js_sys::Math::random() * f64::from(1u32 << 27)) as u64;
    (hi << 27) | lo
}

impl JobQuery {
    fn settings(&self) -> JobSettings {
        let seed = self.seed.unwrap_or_else(random_seed);
        JobSettings {
            commit_user: self
                .commit_user
                .clone()
                .unwrap_or_else(|| NameSource::new(seed ^ 0x7573_6572).uuid()),
            time_millis: self
                .time_millis
                .unwrap_or_else(|| js_sys::Date::now() as i64),
            seed,
            table_uri: self.table_uri.clone(),
        }
    }
}

/// An error unless `inner`'s source takes writes.
fn check_writable(inner: &Inner) -> Result<(), JsValue> {
    match inner.source {
        Source::Memory(_) | Source::Directory(_) => Ok(()),
        _ => Err(js_err_text(format!(
            "the {} source is read-only: write to a table created in memory (Table.create), \
             opened from memory (Table.openMemory) or from a directory handle",
            inner.source.kind()
        ))),
    }
}

/// Re-read the summary after a commit.
async fn refresh(inner: &Inner) -> Result<(), JsValue> {
    let mut summary = inner
        .run_once(Machine::once("summary", |io| async move {
            crate::ops::summary(&io).await
        }))
        .await?;
    if let Value::Object(m) = &mut summary {
        m.insert("source".into(), inner.source.kind().into());
        m.insert("canList".into(), inner.source.can_list().into());
    }
    *inner.summary.borrow_mut() = summary;
    Ok(())
}

/// A serde value in the page's camelCase keys.
fn camel(v: Value) -> Value {
    fn key(k: &str) -> String {
        let mut out = String::with_capacity(k.len());
        let mut up = false;
        for c in k.chars() {
            if c == '_' {
                up = true;
            } else if up {
                out.extend(c.to_uppercase());
                up = false;
            } else {
                out.push(c);
            }
        }
        out
    }
    match v {
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, x)| (key(&k), camel(x))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(camel).collect()),
        other => other,
    }
}

#[wasm_bindgen]
impl Table {
    /// Create a table from Paimon's schema JSON (`fields`, `partitionKeys`, `primaryKeys`,
    /// `options`, `comment`: what Java's `Schema` and the CLI's `create` take) and open it:
    /// in memory, or in `directory` (a `FileSystemDirectoryHandle` with write access, e.g. a
    /// folder of the origin-private file system) when given. Rejects with the core's message
    /// for a schema Paimon would refuse, and when the directory holds a table already.
    pub async fn create(
        #[wasm_bindgen(js_name = schemaJson)] schema_json: String,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "(p: Progress) => void")]
        on_progress: Option<Function>,
        #[wasm_bindgen(unchecked_param_type = "FileSystemDirectoryHandle")] directory: JsValue,
    ) -> Result<Table, JsValue> {
        let now = js_sys::Date::now() as i64;
        let schema = new_table_schema(schema_json.as_bytes(), now).map_err(js_err)?;
        let source = if directory.is_undefined() || directory.is_null() {
            Source::Memory(RefCell::new(MemoryStore::new()))
        } else if directory.is_object() {
            Source::Directory(directory.unchecked_into())
        } else {
            return Err(js_err_text("expected a FileSystemDirectoryHandle"));
        };
        let inner = Rc::new(Inner {
            source,
            progress: RefCell::new(on_progress),
            totals: Default::default(),
            summary: RefCell::new(Value::Null),
        });
        inner.run(create_table_machine(schema)).await?;
        refresh(&inner).await?;
        Ok(Table { inner })
    }

    /// Whether `write` and `compact` work on this table's source.
    #[wasm_bindgen(getter)]
    pub fn writable(&self) -> bool {
        check_writable(&self.inner).is_ok()
    }

    /// Write the rows of `data` (a CSV, JSON-lines, Parquet or Arrow IPC file, in the formats
    /// of the CLI's `write`) and commit them: one `APPEND` (or `OVERWRITE`) snapshot, plus a
    /// `COMPACT` snapshot for lookup tables. Primary-key input may carry a `_ROW_KIND` column.
    /// Rejects naming the line and column of a row that does not fit; nothing is visible
    /// then.
    #[wasm_bindgen(unchecked_return_type = "Promise<WriteResult>")]
    pub fn write(
        &self,
        data: Uint8Array,
        #[wasm_bindgen(unchecked_param_type = "WriteOptions")] options: JsValue,
    ) -> Promise {
        let inner = Rc::clone(&self.inner);
        let q = job_query(&options);
        let bytes = Bytes::from(data.to_vec());
        future_to_promise(async move {
            let q = q?;
            check_writable(&inner)?;
            let name = q.name.clone().unwrap_or_else(|| "input".to_string());
            let format = match &q.format {
                Some(f) => InputFormat::from_name(f).ok_or_else(|| {
                    js_err_text(format!(
                        "unknown input format {f:?} (csv, jsonl, parquet or arrow)"
                    ))
                })?,
                None => InputFormat::from_path(&name).ok_or_else(|| {
                    js_err_text(format!(
                        "cannot tell the format of {name} from its extension: give `format`"
                    ))
                })?,
            };
            let mode = if q.overwrite {
                WriteMode::Overwrite {
                    partition: q.partition.clone(),
                }
            } else {
                if q.partition.is_some() {
                    return Err(js_err_text("`partition` is for overwrite: true"));
                }
                WriteMode::Append
            };
            let settings = q.settings();
            let input = RowInput {
                name,
                bytes,
                format,
            };
            let outcome = inner
                .run_once(Machine::once("write", move |io| async move {
                    write_input_job(&io, &input, &mode, &settings).await
                }))
                .await?;
            refresh(&inner).await?;
            to_js(&camel(serde_json::to_value(&outcome).map_err(js_err_text)?))
        })
    }

    /// Compact the table once and commit the result as one `COMPACT` snapshot: the plan
    /// `compactionPreview` shows (`{full: true}`: a full compaction), for primary-key, append
    /// and data-evolution tables; postpone-bucket tables reject as unsupported.
    #[wasm_bindgen(unchecked_return_type = "Promise<CompactResult>")]
    pub fn compact(
        &self,
        #[wasm_bindgen(unchecked_param_type = "CompactOptions")] options: JsValue,
    ) -> Promise {
        let inner = Rc::clone(&self.inner);
        let q = job_query(&options);
        future_to_promise(async move {
            let q = q?;
            check_writable(&inner)?;
            let settings = q.settings();
            let full = q.full;
            let outcome = inner
                .run_once(Machine::once("compact", move |io| async move {
                    compact_job(&io, full, &settings).await
                }))
                .await?;
            refresh(&inner).await?;
            to_js(&camel(serde_json::to_value(&outcome).map_err(js_err_text)?))
        })
    }

    /// Every file of an in-memory table: a `Map` of path (relative to the table root) →
    /// bytes.
    #[wasm_bindgen(js_name = exportFiles, unchecked_return_type = "Map<string, Uint8Array>")]
    pub fn export_files(&self) -> Result<JsValue, JsValue> {
        let Source::Memory(store) = &self.inner.source else {
            return Err(js_err_text(format!(
                "only an in-memory table can be exported (this one is a {} source)",
                self.inner.source.kind()
            )));
        };
        let map = js_sys::Map::new();
        for (path, bytes) in &store.borrow().objects {
            map.set(&path.into(), &Uint8Array::from(bytes.as_ref()).into());
        }
        Ok(map.into())
    }

    /// The table's directory as a zip (entries stored, not compressed: Paimon's files are
    /// compressed already), every entry under `prefix/` (no prefix: at the top). In-memory
    /// and directory-handle tables (the sources that can list their files).
    #[wasm_bindgen(js_name = exportZip, unchecked_return_type = "Promise<Uint8Array>")]
    pub fn export_zip(&self, prefix: Option<String>) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            if !matches!(inner.source, Source::Memory(_) | Source::Directory(_)) {
                return Err(js_err_text(format!(
                    "only an in-memory or directory table can be exported (this one is a {} \
                     source)",
                    inner.source.kind()
                )));
            }
            let objects = inner
                .run_once(Machine::once("export", |io| async move {
                    let listed = io.list("").await?.unwrap_or_default();
                    let bytes =
                        futures_util::future::try_join_all(listed.iter().map(|o| io.read(&o.path)))
                            .await?;
                    Ok(listed
                        .into_iter()
                        .map(|o| o.path)
                        .zip(bytes)
                        .collect::<std::collections::BTreeMap<String, Bytes>>())
                }))
                .await?;
            let prefix = prefix
                .map(|p| p.trim_matches('/').to_string())
                .filter(|p| !p.is_empty());
            let zip =
                crate::zip_dir::zip_objects(&objects, prefix.as_deref()).map_err(js_err_text)?;
            Ok(Uint8Array::from(zip.as_slice()).into())
        })
    }
}
