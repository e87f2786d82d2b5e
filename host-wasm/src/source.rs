//! Where the bytes come from in JS: HTTP(S) with `Range` requests, a picked directory (File
//! System Access handle or an `<input webkitdirectory>` file list), or an in-memory map.
//!
//! Every source answers one [`IoOp`] with an [`IoAnswer`]; a failure of the JS side (a
//! rejected promise, an exception) becomes an `IoAnswer::Error` with the JS message as detail,
//! never a panic. A round is answered with up to [`ROUND_CONCURRENCY`] requests in flight.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;

use futures_util::StreamExt;
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use paimon_kernel::io::{
    IoAnswer, IoErrorKind, IoOp, IoRequest, MemoryStore, ObjectMeta, is_absolute,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Requests of one round in flight at once (browsers queue more per origin anyway).
pub const ROUND_CONCURRENCY: usize = 16;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (window, worker or Node ≥ 18).
    #[wasm_bindgen(js_name = fetch)]
    fn js_fetch(url: &str, init: &JsValue) -> Promise;

    /// The global `setTimeout`.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, ms: i32) -> JsValue;

    /// A fetch `Response`.
    type Response;
    #[wasm_bindgen(method, getter)]
    fn status(this: &Response) -> u16;
    #[wasm_bindgen(method, getter)]
    fn headers(this: &Response) -> Headers;
    #[wasm_bindgen(method, catch, js_name = arrayBuffer)]
    fn response_bytes(this: &Response) -> Result<Promise, JsValue>;

    /// Response headers.
    type Headers;
    #[wasm_bindgen(method, catch)]
    fn get(this: &Headers, name: &str) -> Result<Option<String>, JsValue>;

    /// A `Blob` / `File`.
    #[derive(Clone)]
    pub type JsBlob;
    #[wasm_bindgen(method, getter)]
    fn size(this: &JsBlob) -> f64;
    #[wasm_bindgen(method, catch)]
    fn slice(this: &JsBlob, start: f64, end: f64) -> Result<JsBlob, JsValue>;
    #[wasm_bindgen(method, catch, js_name = arrayBuffer)]
    fn blob_bytes(this: &JsBlob) -> Result<Promise, JsValue>;

    /// A File System Access `FileSystemDirectoryHandle`.
    #[derive(Clone)]
    pub type DirHandle;
    #[wasm_bindgen(method, catch, js_name = getDirectoryHandle)]
    fn get_directory_handle(this: &DirHandle, name: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch, js_name = getFileHandle)]
    fn get_file_handle(this: &DirHandle, name: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn values(this: &DirHandle) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = getDirectoryHandle)]
    fn get_directory_handle_with(
        this: &DirHandle,
        name: &str,
        options: &JsValue,
    ) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch, js_name = getFileHandle)]
    fn get_file_handle_with(
        this: &DirHandle,
        name: &str,
        options: &JsValue,
    ) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch, js_name = removeEntry)]
    fn remove_entry(this: &DirHandle, name: &str) -> Result<Promise, JsValue>;

    /// A File System Access `FileSystemFileHandle`.
    type FileHandle;
    #[wasm_bindgen(method, catch, js_name = getFile)]
    fn get_file(this: &FileHandle) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch, js_name = createWritable)]
    fn create_writable(this: &FileHandle) -> Result<Promise, JsValue>;

    /// A `FileSystemWritableFileStream`.
    type WritableStream;
    #[wasm_bindgen(method, catch)]
    fn write(this: &WritableStream, data: &Uint8Array) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn close(this: &WritableStream) -> Result<Promise, JsValue>;
}

/// Text of a JS error or thrown value.
pub fn js_message(v: &JsValue) -> String {
    if let Some(e) = v.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    v.as_string().unwrap_or_else(|| format!("{v:?}"))
}

/// `name` of a thrown DOMException (e.g. `NotFoundError`).
fn js_error_name(v: &JsValue) -> Option<String> {
    Reflect::get(v, &JsValue::from_str("name"))
        .ok()
        .and_then(|n| n.as_string())
}

async fn await_promise(p: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(p).await
}

/// Let the event loop run (rendering, input) before the next round: a `setTimeout(0)` task.
pub async fn yield_to_event_loop() {
    let p = Promise::new(&mut |resolve, _reject| {
        set_timeout(&resolve, 0);
    });
    let _ = await_promise(p).await;
}

fn other(detail: impl Into<String>) -> IoAnswer {
    IoAnswer::Error {
        kind: IoErrorKind::Other,
        detail: detail.into(),
    }
}

fn unsupported(detail: &str) -> IoAnswer {
    IoAnswer::Error {
        kind: IoErrorKind::Unsupported,
        detail: detail.to_string(),
    }
}

/// Check and cut `whole` to `range` (for servers that ignore `Range` and for whole files).
fn cut(whole: Vec<u8>, range: &Option<Range<u64>>, path: &str) -> IoAnswer {
    match range {
        None => IoAnswer::bytes(whole),
        Some(r) => {
            let len = whole.len() as u64;
            if r.start > r.end || r.end > len {
                return other(format!(
                    "range {}..{} out of bounds of {path} ({len} bytes)",
                    r.start, r.end
                ));
            }
            // In bounds of a Vec, so the casts are exact.
            IoAnswer::bytes(whole[r.start as usize..r.end as usize].to_vec())
        }
    }
}

/// One source of bytes.
pub enum Source {
    /// Path → bytes (tests, the demo table bundled with the page).
    Memory(RefCell<MemoryStore>),
    /// A base URL; no listing.
    Http {
        /// Base URL without trailing `/`.
        base: String,
    },
    /// Files of an `<input webkitdirectory>` (or any `File[]` with relative paths), by path
    /// relative to the table root.
    Files(BTreeMap<String, JsBlob>),
    /// A File System Access directory handle of the table root.
    Directory(DirHandle),
}

impl Source {
    /// Short name for progress reports (`memory`, `http`, `files`, `directory`).
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Memory(_) => "memory",
            Source::Http { .. } => "http",
            Source::Files(_) => "files",
            Source::Directory(_) => "directory",
        }
    }

    /// Whether `List` works.
    pub fn can_list(&self) -> bool {
        !matches!(self, Source::Http { .. })
    }

    /// Answer a whole round, up to [`ROUND_CONCURRENCY`] requests at once; answers in
    /// request order.
    pub async fn answer_round(&self, round: &[IoRequest]) -> Vec<IoAnswer> {
        futures_util::stream::iter(round.iter().map(|r| self.answer(&r.op)))
            .buffered(ROUND_CONCURRENCY)
            .collect()
            .await
    }

    /// Answer one operation. An absolute path (an external data or index file, see
    /// [`is_absolute`]) is answered `Unsupported` with the path in the detail: these sources
    /// hold only the table directory (a memory source answers it when it holds that key).
    pub async fn answer(&self, op: &IoOp) -> IoAnswer {
        if is_absolute(op.path()) {
            let held =
                matches!(self, Source::Memory(m) if m.borrow().objects.contains_key(op.path()));
            if !held {
                return unsupported(&format!(
                    "external path {:?} (data-file.external-paths): the {} source reads only \
                     files under the table root",
                    op.path(),
                    self.kind()
                ));
            }
        }
        match op {
            IoOp::Put { .. }
            | IoOp::Delete { .. }
            | IoOp::PutPart { .. }
            | IoOp::PutComplete { .. }
            | IoOp::PutAbort { .. } => match self {
                Source::Memory(m) => m.borrow_mut().answer(op),
                Source::Directory(dir) => dir_write(dir, op).await,
                _ => unsupported("this source is read-only"),
            },
            _ => match self {
                Source::Memory(m) => m.borrow_mut().answer(op),
                Source::Http { base } => http_answer(base, op).await,
                Source::Files(files) => files_answer(files, op).await,
                Source::Directory(dir) => dir_answer(dir, op).await,
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

/// `base/path`, each path segment percent-encoded.
pub fn join_url(base: &str, path: &str) -> String {
    let mut url = base.trim_end_matches('/').to_string();
    for seg in path.split('/') {
        url.push('/');
        url.push_str(&String::from(js_sys::encode_uri_component(seg)));
    }
    url
}

fn fetch_init(method: &str, range: Option<&Range<u64>>, mutable: bool) -> Result<Object, JsValue> {
    let init = Object::new();
    Reflect::set(&init, &"method".into(), &method.into())?;
    if mutable {
        // Hint files and snapshots change; data files never do.
        Reflect::set(&init, &"cache".into(), &"no-cache".into())?;
    }
    if let Some(r) = range {
        let headers = Object::new();
        let value = format!("bytes={}-{}", r.start, r.end - 1);
        Reflect::set(&headers, &"Range".into(), &value.into())?;
        Reflect::set(&init, &"headers".into(), &headers)?;
    }
    Ok(init)
}

fn is_mutable(path: &str) -> bool {
    ["snapshot/", "tag/", "schema/", "branch/", "changelog/"]
        .iter()
        .any(|p| path.starts_with(p))
}

async fn fetch(url: &str, init: &Object) -> Result<Response, String> {
    let resp = await_promise(js_fetch(url, init))
        .await
        .map_err(|e| format!("fetch {url} failed: {}", js_message(&e)))?;
    resp.dyn_into::<Response>()
        .map_err(|_| format!("fetch {url} did not return a Response"))
}

async fn body(resp: &Response, url: &str) -> Result<Vec<u8>, String> {
    let p = resp
        .response_bytes()
        .map_err(|e| format!("reading {url}: {}", js_message(&e)))?;
    let buf = await_promise(p)
        .await
        .map_err(|e| format!("reading {url}: {}", js_message(&e)))?;
    Ok(Uint8Array::new(&buf).to_vec())
}

fn header(resp: &Response, name: &str) -> Option<String> {
    resp.headers().get(name).ok().flatten()
}

async fn http_answer(base: &str, op: &IoOp) -> IoAnswer {
    match op {
        IoOp::Read { path, range } => {
            if let Some(r) = range
                && r.start >= r.end
            {
                return if r.start == r.end {
                    IoAnswer::bytes(Vec::new())
                } else {
                    other(format!("invalid range {}..{} of {path}", r.start, r.end))
                };
            }
            let url = join_url(base, path);
            let init = match fetch_init("GET", range.as_ref(), is_mutable(path)) {
                Ok(i) => i,
                Err(e) => return other(js_message(&e)),
            };
            let resp = match fetch(&url, &init).await {
                Ok(r) => r,
                Err(e) => return other(e),
            };
            match resp.status() {
                404 | 410 => IoAnswer::error(IoErrorKind::NotFound),
                200 => match body(&resp, &url).await {
                    // The server ignored Range (or none was asked): cut it here.
                    Ok(b) => cut(b, range, path),
                    Err(e) => other(e),
                },
                206 => match body(&resp, &url).await {
                    Ok(b) => IoAnswer::bytes(b),
                    Err(e) => other(e),
                },
                416 => other(format!("HTTP 416: range not satisfiable for {url}")),
                s => other(format!("HTTP {s} for {url}")),
            }
        }
        IoOp::Head { path } => {
            let url = join_url(base, path);
            let init = match fetch_init("HEAD", None, true) {
                Ok(i) => i,
                Err(e) => return other(js_message(&e)),
            };
            let resp = match fetch(&url, &init).await {
                Ok(r) => r,
                Err(e) => return other(e),
            };
            match resp.status() {
                // Object stores answer 403 for a missing key when listing is not allowed.
                404 | 410 | 403 => IoAnswer::error(IoErrorKind::NotFound),
                200 => {
                    if let Some(n) = header(&resp, "content-length").and_then(|v| v.parse().ok()) {
                        return IoAnswer::Head { size_bytes: n };
                    }
                    // No length (compressed transfer): ask for one byte and read the total.
                    let init = match fetch_init("GET", Some(&(0..1)), true) {
                        Ok(i) => i,
                        Err(e) => return other(js_message(&e)),
                    };
                    match fetch(&url, &init).await {
                        Ok(r) => match header(&r, "content-range")
                            .and_then(|v| v.rsplit('/').next().and_then(|t| t.parse().ok()))
                        {
                            Some(n) => IoAnswer::Head { size_bytes: n },
                            None => other(format!("{url}: the server reports no size")),
                        },
                        Err(e) => other(e),
                    }
                }
                s => other(format!("HTTP {s} for HEAD {url}")),
            }
        }
        IoOp::List { .. } => unsupported("HTTP sources cannot list files"),
        IoOp::Put { .. }
        | IoOp::Delete { .. }
        | IoOp::PutPart { .. }
        | IoOp::PutComplete { .. }
        | IoOp::PutAbort { .. } => unsupported("read-only"),
    }
}

// ---------------------------------------------------------------------------------------------
// Files of a picked folder
// ---------------------------------------------------------------------------------------------

async fn read_blob(blob: &JsBlob, range: &Option<Range<u64>>, path: &str) -> IoAnswer {
    let size = blob.size() as u64;
    let part = match range {
        None => blob.clone(),
        Some(r) => {
            if r.start > r.end || r.end > size {
                return other(format!(
                    "range {}..{} out of bounds of {path} ({size} bytes)",
                    r.start, r.end
                ));
            }
            match blob.slice(r.start as f64, r.end as f64) {
                Ok(b) => b,
                Err(e) => return other(js_message(&e)),
            }
        }
    };
    let p = match part.blob_bytes() {
        Ok(p) => p,
        Err(e) => return other(js_message(&e)),
    };
    match await_promise(p).await {
        Ok(buf) => IoAnswer::bytes(Uint8Array::new(&buf).to_vec()),
        Err(e) => other(format!("reading {path}: {}", js_message(&e))),
    }
}

async fn files_answer(files: &BTreeMap<String, JsBlob>, op: &IoOp) -> IoAnswer {
    match op {
        IoOp::Read { path, range } => match files.get(path) {
            None => IoAnswer::error(IoErrorKind::NotFound),
            Some(b) => read_blob(b, range, path).await,
        },
        IoOp::Head { path } => match files.get(path) {
            None => IoAnswer::error(IoErrorKind::NotFound),
            Some(b) => IoAnswer::Head {
                size_bytes: b.size() as u64,
            },
        },
        IoOp::List { prefix } => IoAnswer::List {
            objects: files
                .range(prefix.clone()..)
                .take_while(|(k, _)| k.starts_with(prefix.as_str()))
                .map(|(k, b)| ObjectMeta {
                    path: k.clone(),
                    size_bytes: b.size() as u64,
                    modified_millis: None,
                })
                .collect(),
        },
        IoOp::Put { .. }
        | IoOp::Delete { .. }
        | IoOp::PutPart { .. }
        | IoOp::PutComplete { .. }
        | IoOp::PutAbort { .. } => unsupported("read-only"),
    }
}

/// Files by path relative to the table root from a `FileList` / `File[]`: each file's
/// `webkitRelativePath` (or `name`) minus its first segment (the picked folder), then only
/// those under `sub` (a table directory inside the picked folder, `""` = the folder itself)
/// with `sub/` removed.
///
/// # Errors
/// A value that is not a list of files.
pub fn files_by_path(list: &JsValue, sub: &str) -> Result<BTreeMap<String, JsBlob>, String> {
    let arr = Array::from(list);
    let sub = sub.trim_matches('/');
    let mut out = BTreeMap::new();
    for v in arr.iter() {
        let rel = Reflect::get(&v, &"webkitRelativePath".into())
            .ok()
            .and_then(|p| p.as_string())
            .filter(|p| !p.is_empty())
            .or_else(|| {
                Reflect::get(&v, &"name".into())
                    .ok()
                    .and_then(|p| p.as_string())
                    .map(|n| format!("./{n}"))
            })
            .ok_or_else(|| "expected File objects (a FileList or an array of File)".to_string())?;
        let Some((_, inside)) = rel.split_once('/') else {
            continue;
        };
        let inside = if sub.is_empty() {
            inside
        } else {
            match inside.strip_prefix(sub).and_then(|r| r.strip_prefix('/')) {
                Some(r) => r,
                None => continue,
            }
        };
        let blob: JsBlob = v.unchecked_into();
        out.insert(inside.to_string(), blob);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// File System Access directory handle
// ---------------------------------------------------------------------------------------------

enum Lookup<T> {
    Found(T),
    NotFound,
    Failed(String),
}

async fn sub_dir(dir: &DirHandle, name: &str) -> Lookup<DirHandle> {
    let p = match dir.get_directory_handle(name) {
        Ok(p) => p,
        Err(e) => return classify(&e),
    };
    match await_promise(p).await {
        Ok(h) => Lookup::Found(h.unchecked_into()),
        Err(e) => classify(&e),
    }
}

fn classify<T>(e: &JsValue) -> Lookup<T> {
    match js_error_name(e).as_deref() {
        Some("NotFoundError" | "TypeMismatchError") => Lookup::NotFound,
        _ => Lookup::Failed(js_message(e)),
    }
}

async fn dir_file(root: &DirHandle, path: &str) -> Lookup<JsBlob> {
    let mut dir = root.clone();
    let segs: Vec<&str> = path.split('/').collect();
    let Some((last, parents)) = segs.split_last() else {
        return Lookup::NotFound;
    };
    for s in parents {
        if s.is_empty() || *s == "." || *s == ".." {
            return Lookup::NotFound;
        }
        dir = match sub_dir(&dir, s).await {
            Lookup::Found(d) => d,
            Lookup::NotFound => return Lookup::NotFound,
            Lookup::Failed(e) => return Lookup::Failed(e),
        };
    }
    let p = match dir.get_file_handle(last) {
        Ok(p) => p,
        Err(e) => return classify(&e),
    };
    let fh: FileHandle = match await_promise(p).await {
        Ok(h) => h.unchecked_into(),
        Err(e) => return classify(&e),
    };
    let p = match fh.get_file() {
        Ok(p) => p,
        Err(e) => return classify(&e),
    };
    match await_promise(p).await {
        Ok(f) => Lookup::Found(f.unchecked_into()),
        Err(e) => classify(&e),
    }
}

/// Every file under directory `dir` (whose path is `at`, ending in `/` or empty), recursively.
async fn walk(dir: DirHandle, at: String, out: &mut Vec<ObjectMeta>) -> Result<(), String> {
    let mut stack = vec![(dir, at)];
    while let Some((dir, at)) = stack.pop() {
        let iter = dir.values().map_err(|e| js_message(&e))?;
        let next: Function = Reflect::get(&iter, &"next".into())
            .map_err(|e| js_message(&e))?
            .dyn_into()
            .map_err(|_| "directory iterator has no next()".to_string())?;
        loop {
            let p = next.call0(&iter).map_err(|e| js_message(&e))?;
            let r = await_promise(Promise::resolve(&p))
                .await
                .map_err(|e| js_message(&e))?;
            let done = Reflect::get(&r, &"done".into())
                .map_err(|e| js_message(&e))?
                .is_truthy();
            if done {
                break;
            }
            let entry = Reflect::get(&r, &"value".into()).map_err(|e| js_message(&e))?;
            let kind = Reflect::get(&entry, &"kind".into())
                .ok()
                .and_then(|k| k.as_string());
            let name = Reflect::get(&entry, &"name".into())
                .ok()
                .and_then(|k| k.as_string())
                .unwrap_or_default();
            match kind.as_deref() {
                Some("directory") => stack.push((entry.unchecked_into(), format!("{at}{name}/"))),
                Some("file") => {
                    let fh: FileHandle = entry.unchecked_into();
                    let p = fh.get_file().map_err(|e| js_message(&e))?;
                    let f: JsBlob = await_promise(p)
                        .await
                        .map_err(|e| js_message(&e))?
                        .unchecked_into();
                    out.push(ObjectMeta {
                        path: format!("{at}{name}"),
                        size_bytes: f.size() as u64,
                        modified_millis: None,
                    });
                }
                _ => {}
            }
        }
    }
    Ok(())
}

async fn dir_answer(root: &DirHandle, op: &IoOp) -> IoAnswer {
    match op {
        IoOp::Read { path, range } => match dir_file(root, path).await {
            Lookup::Found(f) => read_blob(&f, range, path).await,
            Lookup::NotFound => IoAnswer::error(IoErrorKind::NotFound),
            Lookup::Failed(e) => other(format!("{path}: {e}")),
        },
        IoOp::Head { path } => match dir_file(root, path).await {
            Lookup::Found(f) => IoAnswer::Head {
                size_bytes: f.size() as u64,
            },
            Lookup::NotFound => IoAnswer::error(IoErrorKind::NotFound),
            Lookup::Failed(e) => other(format!("{path}: {e}")),
        },
        IoOp::List { prefix } => {
            // Walk from the deepest directory named by the prefix.
            let (dir_part, _) = prefix.rsplit_once('/').unwrap_or(("", prefix));
            let mut dir = root.clone();
            let mut at = String::new();
            for s in dir_part.split('/').filter(|s| !s.is_empty()) {
                dir = match sub_dir(&dir, s).await {
                    Lookup::Found(d) => d,
                    Lookup::NotFound => return IoAnswer::List { objects: vec![] },
                    Lookup::Failed(e) => return other(format!("{prefix}: {e}")),
                };
                at.push_str(s);
                at.push('/');
            }
            let mut all = Vec::new();
            if let Err(e) = walk(dir, at, &mut all).await {
                return other(format!("listing {prefix}: {e}"));
            }
            all.retain(|o| o.path.starts_with(prefix.as_str()));
            IoAnswer::List { objects: all }
        }
        IoOp::Put { .. }
        | IoOp::Delete { .. }
        | IoOp::PutPart { .. }
        | IoOp::PutComplete { .. }
        | IoOp::PutAbort { .. } => unsupported("read-only"),
    }
}

/// `{create: true}`.
fn create_option() -> JsValue {
    let o = Object::new();
    // Setting a property on a fresh plain object cannot fail.
    let _ = Reflect::set(&o, &"create".into(), &JsValue::TRUE);
    o.into()
}

/// The directory holding `path`'s file (created when `create`) and the file's name; `None`
/// when a directory on the way is missing (and not created).
async fn parent_dir<'p>(
    root: &DirHandle,
    path: &'p str,
    create: bool,
) -> Result<Option<(DirHandle, &'p str)>, String> {
    let segs: Vec<&str> = path.split('/').collect();
    let Some((last, parents)) = segs.split_last() else {
        return Ok(None);
    };
    let mut dir = root.clone();
    for s in parents {
        if s.is_empty() || *s == "." || *s == ".." {
            return Err(format!("{path}: not a plain relative path"));
        }
        let p = if create {
            dir.get_directory_handle_with(s, &create_option())
        } else {
            dir.get_directory_handle(s)
        };
        let got = match p {
            Ok(p) => await_promise(p).await,
            Err(e) => Err(e),
        };
        dir = match got {
            Ok(d) => d.unchecked_into(),
            Err(e) => match classify::<()>(&e) {
                Lookup::NotFound => return Ok(None),
                _ => return Err(format!("{path}: {}", js_message(&e))),
            },
        };
    }
    Ok(Some((dir, *last)))
}

thread_local! {
    /// Streamed writes in progress to directory handles (the page runs on one thread).
    static DIR_UPLOADS: RefCell<PartBuffers> = RefCell::new(PartBuffers::default());
}

/// The parts of streamed writes ([`IoOp::PutPart`]) received so far, by path, for a target
/// that only takes whole files: the parts are checked to come in order and joined.
#[derive(Debug, Default)]
pub(crate) struct PartBuffers {
    open: BTreeMap<String, (u32, Vec<u8>)>,
}

impl PartBuffers {
    /// Add part `part` of `path` (part 0 starts a new upload, replacing an abandoned one).
    pub(crate) fn part(&mut self, path: &str, part: u32, bytes: &[u8]) -> Result<(), String> {
        if part == 0 {
            self.open.insert(path.to_owned(), (0, Vec::new()));
        }
        let Some((next, buf)) = self.open.get_mut(path) else {
            return Err(format!(
                "part {part} of {path}: no streamed write is open there"
            ));
        };
        if *next != part {
            return Err(format!(
                "part {part} of {path} out of order (expected part {next})"
            ));
        }
        *next += 1;
        buf.extend_from_slice(bytes);
        Ok(())
    }

    /// The whole file of `path` after `parts` parts; the upload is closed either way.
    pub(crate) fn complete(&mut self, path: &str, parts: u32) -> Result<Vec<u8>, IoAnswer> {
        match self.open.remove(path) {
            None => Err(IoAnswer::error(IoErrorKind::NotFound)),
            Some((n, _)) if n != parts => Err(other(format!(
                "{path}: completed after {parts} parts, {n} received"
            ))),
            Some((_, bytes)) => Ok(bytes),
        }
    }

    /// Drop the parts of `path` (nothing open is fine).
    pub(crate) fn abort(&mut self, path: &str) {
        self.open.remove(path);
    }
}

/// Write a whole file under `root` (`CreateNew`: `AlreadyExists` when one is there).
async fn dir_put(
    root: &DirHandle,
    path: &str,
    bytes: &[u8],
    mode: paimon_kernel::io::PutMode,
) -> IoAnswer {
    if mode == paimon_kernel::io::PutMode::CreateNew {
        match dir_file(root, path).await {
            Lookup::Found(_) => return IoAnswer::error(IoErrorKind::AlreadyExists),
            Lookup::NotFound => {}
            Lookup::Failed(e) => return other(format!("{path}: {e}")),
        }
    }
    let (dir, name) = match parent_dir(root, path, true).await {
        Ok(Some(x)) => x,
        Ok(None) => return other(format!("{path}: no such directory")),
        Err(e) => return other(e),
    };
    match write_file(&dir, name, bytes).await {
        Ok(()) => IoAnswer::Done,
        Err(e) => other(format!("writing {path}: {}", js_message(&e))),
    }
}

/// `Put` and `Delete` on a directory handle; the parts of a streamed write are buffered
/// ([`PartBuffers`]) and the file put whole when it completes. A create-new `Put` checks that
/// the file is absent, then writes it: not atomic against another writer of the same
/// directory (the page is the only writer of its tables).
async fn dir_write(root: &DirHandle, op: &IoOp) -> IoAnswer {
    match op {
        IoOp::Put { path, bytes, mode } => dir_put(root, path, bytes, *mode).await,
        IoOp::Delete { path } => {
            let (dir, name) = match parent_dir(root, path, false).await {
                Ok(Some(x)) => x,
                Ok(None) => return IoAnswer::error(IoErrorKind::NotFound),
                Err(e) => return other(e),
            };
            let r = match dir.remove_entry(name) {
                Ok(p) => await_promise(p).await,
                Err(e) => Err(e),
            };
            match r {
                Ok(_) => IoAnswer::Done,
                Err(e) => match classify::<()>(&e) {
                    Lookup::NotFound => IoAnswer::error(IoErrorKind::NotFound),
                    _ => other(format!("deleting {path}: {}", js_message(&e))),
                },
            }
        }
        // Directory handles get whole files: the parts of a streamed write are buffered and
        // the file written (create-new) when it completes.
        IoOp::PutPart { path, part, bytes } => {
            match DIR_UPLOADS.with(|u| u.borrow_mut().part(path, *part, bytes)) {
                Ok(()) => IoAnswer::Done,
                Err(e) => other(e),
            }
        }
        IoOp::PutComplete { path, parts } => {
            let bytes = match DIR_UPLOADS.with(|u| u.borrow_mut().complete(path, *parts)) {
                Ok(b) => b,
                Err(a) => return a,
            };
            dir_put(root, path, &bytes, paimon_kernel::io::PutMode::CreateNew).await
        }
        IoOp::PutAbort { path } => {
            DIR_UPLOADS.with(|u| u.borrow_mut().abort(path));
            IoAnswer::Done
        }
        _ => unsupported("not a write"),
    }
}

async fn write_file(dir: &DirHandle, name: &str, bytes: &[u8]) -> Result<(), JsValue> {
    let fh: FileHandle = await_promise(dir.get_file_handle_with(name, &create_option())?)
        .await?
        .unchecked_into();
    let w: WritableStream = await_promise(fh.create_writable()?).await?.unchecked_into();
    let data = Uint8Array::from(bytes);
    if let Err(e) = await_promise(w.write(&data)?).await {
        // Best effort: the write's error is the one to report.
        if let Ok(p) = w.close() {
            let _ = await_promise(p).await;
        }
        return Err(e);
    }
    await_promise(w.close()?).await?;
    Ok(())
}

/// Build a memory store from a JS `Map<string, Uint8Array|ArrayBuffer>` or a plain object.
///
/// # Errors
/// A value that is neither, or a value that is not bytes (naming the path).
pub fn memory_from_js(value: &JsValue) -> Result<MemoryStore, String> {
    let entries: Vec<(JsValue, JsValue)> = if let Some(map) = value.dyn_ref::<js_sys::Map>() {
        let mut v = Vec::new();
        map.for_each(&mut |val, key| v.push((key, val)));
        v
    } else if value.is_object() {
        Object::entries(value.unchecked_ref())
            .iter()
            .map(|e| {
                let pair = Array::from(&e);
                (pair.get(0), pair.get(1))
            })
            .collect()
    } else {
        return Err("expected a Map or an object of path → Uint8Array".into());
    };
    let mut store = MemoryStore::new();
    for (k, v) in entries {
        let path = k
            .as_string()
            .ok_or_else(|| "memory source keys must be strings".to_string())?;
        let bytes = if let Some(a) = v.dyn_ref::<Uint8Array>() {
            a.to_vec()
        } else if v.is_instance_of::<js_sys::ArrayBuffer>() {
            Uint8Array::new(&v).to_vec()
        } else {
            return Err(format!(
                "memory source value of '{path}' is not a Uint8Array"
            ));
        };
        store
            .objects
            .insert(path.trim_start_matches('/').to_string(), bytes.into());
    }
    Ok(store)
}

#[cfg(test)]
mod part_buffer_tests {
    use super::*;

    #[test]
    fn parts_in_order_make_the_file_and_out_of_order_ones_are_refused() {
        let mut b = PartBuffers::default();
        b.part("a", 0, b"he").unwrap();
        b.part("a", 1, b"llo").unwrap();
        assert!(b.part("a", 3, b"x").unwrap_err().contains("out of order"));
        assert!(
            b.part("b", 1, b"x")
                .unwrap_err()
                .contains("no streamed write")
        );
        assert_eq!(b.complete("a", 2).unwrap(), b"hello");
        assert!(matches!(
            b.complete("a", 2),
            Err(IoAnswer::Error {
                kind: IoErrorKind::NotFound,
                ..
            })
        ));
        b.part("c", 0, b"x").unwrap();
        assert!(b.complete("c", 2).is_err(), "a missing part");
        b.part("d", 0, b"x").unwrap();
        b.abort("d");
        assert!(b.complete("d", 1).is_err(), "aborted");
        // Part 0 again restarts an abandoned upload.
        b.part("e", 0, b"old").unwrap();
        b.part("e", 0, b"new").unwrap();
        assert_eq!(b.complete("e", 1).unwrap(), b"new");
    }
}
