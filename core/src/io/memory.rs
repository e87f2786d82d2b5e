//! An in-memory object store that answers a machine's requests (tests, docs, the wasm host's
//! in-memory source).

use std::collections::BTreeMap;

use bytes::Bytes;

use super::{IoAnswer, IoErrorKind, IoOp, Machine, ObjectMeta, PutMode, Step, Work};
use crate::error::Result;

/// An in-memory object store answering requests: for tests, docs and the wasm in-memory source.
///
/// Paths are keys; `List` returns every key starting with the prefix.
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    /// Objects by path.
    pub objects: BTreeMap<String, Bytes>,
    /// Streamed writes in progress: path → (parts received, bytes so far).
    pub uploads: BTreeMap<String, (u32, Vec<u8>)>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answer one operation, mutating the store for `Put`/`Delete`.
    pub fn answer(&mut self, op: &IoOp) -> IoAnswer {
        match op {
            IoOp::Read { path, range } => match self.objects.get(path) {
                None => IoAnswer::error(IoErrorKind::NotFound),
                Some(b) => match range {
                    None => IoAnswer::bytes(b.clone()),
                    Some(r) => {
                        let len = b.len() as u64;
                        if r.start > r.end || r.end > len {
                            IoAnswer::Error {
                                kind: IoErrorKind::Other,
                                detail: format!(
                                    "range {}..{} out of bounds of {len} bytes",
                                    r.start, r.end
                                ),
                            }
                        } else {
                            IoAnswer::bytes(b.slice(r.start as usize..r.end as usize))
                        }
                    }
                },
            },
            IoOp::Head { path } => match self.objects.get(path) {
                None => IoAnswer::error(IoErrorKind::NotFound),
                Some(b) => IoAnswer::Head {
                    size_bytes: b.len() as u64,
                },
            },
            IoOp::List { prefix } => IoAnswer::List {
                objects: self
                    .objects
                    .range(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(prefix.as_str()))
                    .map(|(k, v)| ObjectMeta {
                        path: k.clone(),
                        size_bytes: v.len() as u64,
                        modified_millis: None,
                    })
                    .collect(),
            },
            IoOp::Put { path, bytes, mode } => {
                if *mode == PutMode::CreateNew && self.objects.contains_key(path) {
                    IoAnswer::error(IoErrorKind::AlreadyExists)
                } else {
                    self.objects.insert(path.clone(), bytes.clone());
                    IoAnswer::Done
                }
            }
            IoOp::Delete { path } => match self.objects.remove(path) {
                Some(_) => IoAnswer::Done,
                None => IoAnswer::error(IoErrorKind::NotFound),
            },
            IoOp::PutPart { path, part, bytes } => {
                let upload = self.uploads.entry(path.clone()).or_default();
                if *part != upload.0 {
                    return IoAnswer::Error {
                        kind: IoErrorKind::Other,
                        detail: format!(
                            "part {part} of {path} out of order (expected {})",
                            upload.0
                        ),
                    };
                }
                upload.0 += 1;
                upload.1.extend_from_slice(bytes);
                IoAnswer::Done
            }
            IoOp::PutComplete { path, parts } => match self.uploads.remove(path) {
                Some((n, _)) if n != *parts => IoAnswer::Error {
                    kind: IoErrorKind::Other,
                    detail: format!("{path}: completed after {parts} parts, {n} received"),
                },
                Some(_) if self.objects.contains_key(path) => {
                    IoAnswer::error(IoErrorKind::AlreadyExists)
                }
                Some((_, bytes)) => {
                    self.objects.insert(path.clone(), Bytes::from(bytes));
                    IoAnswer::Done
                }
                None => IoAnswer::error(IoErrorKind::NotFound),
            },
            IoOp::PutAbort { path } => {
                self.uploads.remove(path);
                IoAnswer::Done
            }
        }
    }

    /// Drive `machine` to the end over this store, collecting what it emits.
    pub fn run<T: Send + 'static>(&mut self, mut machine: Machine<T>) -> Result<Vec<T>> {
        let mut out = Vec::new();
        loop {
            match machine.step()? {
                Step::NeedIo(round) => {
                    for req in round {
                        let answer = self.answer(&req.op);
                        machine.provide(req.id, answer)?;
                    }
                }
                Step::Emit(item) => out.push(item),
                Step::Work(items) => items.into_iter().for_each(Work::run),
                Step::Wait => {}
                Step::Done => return Ok(out),
            }
        }
    }
}
