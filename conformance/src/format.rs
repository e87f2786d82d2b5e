//! The transcript format, version 1 (see `conformance/README.md` for the prose version).
//!
//! A case is a directory:
//!
//! ```text
//! cases/<name>/case.json          Case: format tag, version, name, table, operation
//! cases/<name>/transcript.jsonl   one JSON object a line: section headers and rounds
//! cases/<name>/expected/result.json    canonical JSON view of the result
//! cases/<name>/expected/result.arrows  Arrow IPC stream of the result (scan operations)
//! blobs/<sha256>                  bodies of `bytes` answers, content-addressed, shared
//! ```

use std::collections::BTreeMap;
use std::ops::Range;

use bytes::Bytes;
use paimon_kernel::io::{IoAnswer, IoErrorKind, IoOp, IoRequest, ObjectMeta, PutMode, RequestId};
use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::operation::Operation;

/// The `format` tag of `case.json`.
pub const FORMAT_NAME: &str = "paimon-kernel-conformance";
/// The version of the format this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// File name of the Arrow IPC stream of a result, under `expected/`.
pub const RESULT_ARROW: &str = "result.arrows";
/// File name of the canonical JSON view of a result, under `expected/`.
pub const RESULT_JSON: &str = "result.json";

/// `case.json`: what a case runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// Format version, [`FORMAT_VERSION`].
    pub version: u32,
    /// Case name (the directory name).
    pub name: String,
    /// The corpus table the case was recorded from (informative: replay needs only the
    /// transcript; paths in it are relative to the table root).
    pub table: String,
    /// The operation and its parameters.
    pub operation: Operation,
}

/// A request as stored in the transcript.
///
/// `{"id":0,"op":"read","path":"snapshot/LATEST"}`, `{"id":3,"op":"read","path":"…",
/// "range":[4,1204]}`, `{"id":1,"op":"head","path":"…"}`, `{"id":2,"op":"list","prefix":"tag/"}`,
/// `{"id":5,"op":"put","path":"…","mode":"create_new","sha256":"…","len":12}`,
/// `{"id":6,"op":"delete","path":"…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// Request id (sequential per machine from 0).
    pub id: u64,
    /// `read`, `head`, `list`, `put`, `delete`, `put_part`, `put_complete` or `put_abort`.
    pub op: String,
    /// Object path (all but `list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `[start, end)` in bytes, for ranged reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[u64; 2]>,
    /// Prefix of a `list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// `create_new` or `overwrite`, for `put`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<PutMode>,
    /// Content hash of a `put` body (the body itself is stored as a blob).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Length of a `put` body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<u64>,
    /// Part number of a `put_part` (from 0), number of parts of a `put_complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<u32>,
}

/// An answer as stored in the transcript.
///
/// `{"id":0,"answer":"bytes","sha256":"…","len":1204}`, `{"id":1,"answer":"head",
/// "size_bytes":9}`, `{"id":2,"answer":"list","objects":[{"path":"…","size_bytes":9}]}`,
/// `{"id":5,"answer":"done"}`, `{"id":0,"answer":"error","kind":"not_found"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedAnswer {
    /// The request id answered.
    pub id: u64,
    /// `bytes`, `head`, `list`, `done` or `error`.
    pub answer: String,
    /// SHA-256 (lowercase hex) of the body of a `bytes` answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Body length of a `bytes` answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<u64>,
    /// Size of a `head` answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// Objects of a `list` answer, sorted by path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<Vec<ObjectMeta>>,
    /// Error kind of an `error` answer: `not_found`, `already_exists`, `unsupported`,
    /// `transient`, `other`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<IoErrorKind>,
}

/// One line of `transcript.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    /// Starts the section of one machine: `{"kind":"section","index":0,"label":"plan"}`.
    Section {
        /// 0-based position of the machine in the operation.
        index: usize,
        /// The machine's label in the operation (`plan`, `split-3`, `snapshots`...).
        label: String,
    },
    /// One round of the current section: the requests in id order and their answers in id
    /// order.
    Round {
        /// The requests of the round (one `Step::NeedIo`).
        requests: Vec<RecordedRequest>,
        /// One answer per request, in id order.
        answers: Vec<RecordedAnswer>,
    },
}

/// One round: requests and answers (both in id order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// The requests.
    pub requests: Vec<RecordedRequest>,
    /// The answers.
    pub answers: Vec<RecordedAnswer>,
}

/// The rounds of one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The machine's label.
    pub label: String,
    /// Its rounds in order.
    pub rounds: Vec<Round>,
}

/// A parsed `transcript.jsonl`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    /// Sections in machine order.
    pub sections: Vec<Section>,
}

impl Transcript {
    /// Parse `transcript.jsonl`.
    ///
    /// # Errors
    /// A message naming the line when a line is not valid, a round precedes every section,
    /// or section indexes are not 0, 1, 2...
    pub fn parse(text: &str) -> Result<Transcript, String> {
        let mut sections: Vec<Section> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed: Line = serde_json::from_str(line)
                .map_err(|e| format!("transcript.jsonl line {}: {e}", n + 1))?;
            match parsed {
                Line::Section { index, label } => {
                    if index != sections.len() {
                        return Err(format!(
                            "transcript.jsonl line {}: section index {index}, expected {}",
                            n + 1,
                            sections.len()
                        ));
                    }
                    sections.push(Section {
                        label,
                        rounds: Vec::new(),
                    });
                }
                Line::Round { requests, answers } => match sections.last_mut() {
                    Some(s) => s.rounds.push(Round { requests, answers }),
                    None => {
                        return Err(format!(
                            "transcript.jsonl line {}: a round before any section",
                            n + 1
                        ));
                    }
                },
            }
        }
        Ok(Transcript { sections })
    }

    /// Render as `transcript.jsonl` (one line per section header and per round).
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for (index, s) in self.sections.iter().enumerate() {
            push_line(
                &mut out,
                &Line::Section {
                    index,
                    label: s.label.clone(),
                },
            );
            for r in &s.rounds {
                push_line(
                    &mut out,
                    &Line::Round {
                        requests: r.requests.clone(),
                        answers: r.answers.clone(),
                    },
                );
            }
        }
        out
    }

    /// Every blob hash the transcript refers to (answers and put bodies), sorted.
    pub fn blob_hashes(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .sections
            .iter()
            .flat_map(|s| &s.rounds)
            .flat_map(|r| {
                r.answers
                    .iter()
                    .filter_map(|a| a.sha256.clone())
                    .chain(r.requests.iter().filter_map(|q| q.sha256.clone()))
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Total requests over all sections.
    pub fn request_count(&self) -> usize {
        self.sections
            .iter()
            .flat_map(|s| &s.rounds)
            .map(|r| r.requests.len())
            .sum()
    }
}

fn push_line(out: &mut String, line: &Line) {
    // Serializing these plain structs cannot fail.
    if let Ok(s) = serde_json::to_string(line) {
        out.push_str(&s);
        out.push('\n');
    }
}

/// Blob bodies by hash, collected while recording or loaded for replay.
pub type Blobs = BTreeMap<String, Bytes>;

/// Encode a request; a `put` body goes into `blobs`.
pub fn encode_request(req: &IoRequest, blobs: &mut Blobs) -> RecordedRequest {
    let mut r = RecordedRequest {
        id: req.id.0,
        op: String::new(),
        path: None,
        range: None,
        prefix: None,
        mode: None,
        sha256: None,
        len: None,
        part: None,
    };
    match &req.op {
        IoOp::Read { path, range } => {
            r.op = "read".into();
            r.path = Some(path.clone());
            r.range = range.as_ref().map(|x| [x.start, x.end]);
        }
        IoOp::Head { path } => {
            r.op = "head".into();
            r.path = Some(path.clone());
        }
        IoOp::List { prefix } => {
            r.op = "list".into();
            r.prefix = Some(prefix.clone());
        }
        IoOp::Put { path, bytes, mode } => {
            r.op = "put".into();
            r.path = Some(path.clone());
            r.mode = Some(*mode);
            let hash = sha256_hex(bytes);
            r.sha256 = Some(hash.clone());
            r.len = Some(bytes.len() as u64);
            blobs.insert(hash, bytes.clone());
        }
        IoOp::Delete { path } => {
            r.op = "delete".into();
            r.path = Some(path.clone());
        }
        IoOp::PutPart { path, part, bytes } => {
            r.op = "put_part".into();
            r.path = Some(path.clone());
            r.part = Some(*part);
            let hash = sha256_hex(bytes);
            r.sha256 = Some(hash.clone());
            r.len = Some(bytes.len() as u64);
            blobs.insert(hash, bytes.clone());
        }
        IoOp::PutComplete { path, parts } => {
            r.op = "put_complete".into();
            r.path = Some(path.clone());
            r.part = Some(*parts);
        }
        IoOp::PutAbort { path } => {
            r.op = "put_abort".into();
            r.path = Some(path.clone());
        }
    }
    r
}

/// Encode an answer; a `bytes` body goes into `blobs`. Error details are dropped (they hold
/// host-specific text such as absolute paths).
pub fn encode_answer(id: RequestId, answer: &IoAnswer, blobs: &mut Blobs) -> RecordedAnswer {
    let mut a = RecordedAnswer {
        id: id.0,
        answer: String::new(),
        sha256: None,
        len: None,
        size_bytes: None,
        objects: None,
        kind: None,
    };
    match answer {
        IoAnswer::Bytes { bytes } => {
            a.answer = "bytes".into();
            let hash = sha256_hex(bytes);
            a.sha256 = Some(hash.clone());
            a.len = Some(bytes.len() as u64);
            blobs.insert(hash, bytes.clone());
        }
        IoAnswer::Head { size_bytes } => {
            a.answer = "head".into();
            a.size_bytes = Some(*size_bytes);
        }
        IoAnswer::List { objects } => {
            a.answer = "list".into();
            let mut objects = objects.clone();
            objects.sort();
            a.objects = Some(objects);
        }
        IoAnswer::Done => a.answer = "done".into(),
        IoAnswer::Error { kind, .. } => {
            a.answer = "error".into();
            a.kind = Some(*kind);
        }
    }
    a
}

/// The request the transcript records as a core [`IoOp`] (a `put` body is looked up in
/// `blobs`).
///
/// # Errors
/// A message when the record is malformed or a blob is missing.
pub fn decode_request(r: &RecordedRequest, blobs: &dyn BlobSource) -> Result<IoOp, String> {
    let path = || {
        r.path
            .clone()
            .ok_or_else(|| format!("request {}: {} without a path", r.id, r.op))
    };
    Ok(match r.op.as_str() {
        "read" => IoOp::Read {
            path: path()?,
            range: r.range.map(|[a, b]| Range { start: a, end: b }),
        },
        "head" => IoOp::Head { path: path()? },
        "list" => IoOp::List {
            prefix: r
                .prefix
                .clone()
                .ok_or_else(|| format!("request {}: list without a prefix", r.id))?,
        },
        "put" => IoOp::Put {
            path: path()?,
            bytes: blob(blobs, r.sha256.as_deref(), r.len, r.id)?,
            mode: r
                .mode
                .ok_or_else(|| format!("request {}: put without a mode", r.id))?,
        },
        "delete" => IoOp::Delete { path: path()? },
        "put_part" => IoOp::PutPart {
            path: path()?,
            part: r
                .part
                .ok_or_else(|| format!("request {}: put_part without a part", r.id))?,
            bytes: blob(blobs, r.sha256.as_deref(), r.len, r.id)?,
        },
        "put_complete" => IoOp::PutComplete {
            path: path()?,
            parts: r
                .part
                .ok_or_else(|| format!("request {}: put_complete without a part count", r.id))?,
        },
        "put_abort" => IoOp::PutAbort { path: path()? },
        other => return Err(format!("request {}: unknown op '{other}'", r.id)),
    })
}

/// The answer the transcript records, as a core [`IoAnswer`].
///
/// # Errors
/// A message when the record is malformed or its blob is missing or does not hash to the
/// recorded value.
pub fn decode_answer(a: &RecordedAnswer, blobs: &dyn BlobSource) -> Result<IoAnswer, String> {
    Ok(match a.answer.as_str() {
        "bytes" => IoAnswer::Bytes {
            bytes: blob(blobs, a.sha256.as_deref(), a.len, a.id)?,
        },
        "head" => IoAnswer::Head {
            size_bytes: a
                .size_bytes
                .ok_or_else(|| format!("answer {}: head without size_bytes", a.id))?,
        },
        "list" => IoAnswer::List {
            objects: a
                .objects
                .clone()
                .ok_or_else(|| format!("answer {}: list without objects", a.id))?,
        },
        "done" => IoAnswer::Done,
        "error" => IoAnswer::error(
            a.kind
                .ok_or_else(|| format!("answer {}: error without kind", a.id))?,
        ),
        other => return Err(format!("answer {}: unknown answer '{other}'", a.id)),
    })
}

/// Where blob bodies come from during replay.
pub trait BlobSource {
    /// The body with this hash, if present.
    fn blob(&self, sha256: &str) -> Option<Bytes>;
}

impl BlobSource for Blobs {
    fn blob(&self, sha256: &str) -> Option<Bytes> {
        self.get(sha256).cloned()
    }
}

fn blob(
    blobs: &dyn BlobSource,
    sha: Option<&str>,
    len: Option<u64>,
    id: u64,
) -> Result<Bytes, String> {
    let sha = sha.ok_or_else(|| format!("record {id}: body without sha256"))?;
    let body = blobs
        .blob(sha)
        .ok_or_else(|| format!("record {id}: blob {sha} is missing"))?;
    if let Some(len) = len
        && body.len() as u64 != len
    {
        return Err(format!(
            "record {id}: blob {sha} has {} bytes, the transcript says {len}",
            body.len()
        ));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_inputs() {
        // FIPS 180-2 appendix B.1 and the empty string.
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn lines_round_trip_and_parse_checks_order() {
        let mut blobs = Blobs::new();
        let req = IoRequest {
            id: RequestId(0),
            op: IoOp::Read {
                path: "snapshot/snapshot-1".into(),
                range: Some(2..5),
            },
        };
        let r = encode_request(&req, &mut blobs);
        let a = encode_answer(RequestId(0), &IoAnswer::bytes(&b"abc"[..]), &mut blobs);
        let t = Transcript {
            sections: vec![Section {
                label: "plan".into(),
                rounds: vec![Round {
                    requests: vec![r.clone()],
                    answers: vec![a.clone()],
                }],
            }],
        };
        let text = t.to_jsonl();
        assert_eq!(
            text.lines().next().unwrap(),
            r#"{"kind":"section","index":0,"label":"plan"}"#
        );
        assert!(text.contains(r#""range":[2,5]"#), "{text}");
        assert_eq!(Transcript::parse(&text).unwrap(), t);
        assert_eq!(decode_request(&r, &blobs).unwrap(), req.op);
        assert_eq!(
            decode_answer(&a, &blobs).unwrap(),
            IoAnswer::bytes(&b"abc"[..])
        );
        let bad = r#"{"kind":"section","index":1,"label":"x"}"#;
        assert!(Transcript::parse(bad).unwrap_err().contains("line 1"));
        assert!(
            decode_answer(&a, &Blobs::new())
                .unwrap_err()
                .contains("missing")
        );
    }
}
