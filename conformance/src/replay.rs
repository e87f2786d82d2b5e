//! The strict replayer: runs a case's operation with every answer taken from its transcript.
//!
//! Each machine must ask for exactly the recorded rounds: same requests (ids, operations,
//! paths, ranges), in the same rounds, in the same section order. Anything else is IO
//! drift, reported as [`Error::Protocol`] naming the section, round and first difference.
//! The result must then equal `expected/` byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use paimon_kernel::io::{Machine, Step};
use paimon_kernel::{Error, Result};

use crate::driver::{Driver, Outcome, block_on_ready};
use crate::format::{
    BlobSource, Blobs, Case, RESULT_ARROW, RESULT_JSON, Section, Transcript, decode_answer,
    encode_request,
};
use crate::operation::run_operation;

/// Why a case did not replay.
#[derive(Debug)]
pub enum ReplayError {
    /// The case files could not be read or parsed.
    Load(String),
    /// The core failed, or asked for IO the transcript does not have next (drift).
    Core(Error),
    /// The core finished, but its result differs from `expected/`.
    Mismatch(String),
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Load(s) => write!(f, "cannot load the case: {s}"),
            ReplayError::Core(e) => write!(f, "replay failed: {e}"),
            ReplayError::Mismatch(s) => write!(f, "result differs from expected/: {s}"),
        }
    }
}

impl std::error::Error for ReplayError {}

/// A case with everything needed to replay it, loaded in memory.
#[derive(Debug, Clone)]
pub struct LoadedCase {
    /// `case.json`.
    pub case: Case,
    /// `transcript.jsonl`.
    pub transcript: Transcript,
    /// The blobs the transcript refers to.
    pub blobs: Blobs,
    /// `expected/result.json`.
    pub expected_json: String,
    /// `expected/result.arrows`, when present.
    pub expected_arrow: Option<Vec<u8>>,
}

fn drift(detail: String) -> Error {
    Error::Protocol {
        detail: format!("transcript drift: {detail}"),
    }
}

/// A [`Driver`] answering from a transcript, strictly.
pub struct ReplayDriver<'a> {
    sections: &'a [Section],
    blobs: &'a dyn BlobSource,
    next: usize,
}

impl<'a> ReplayDriver<'a> {
    /// A driver over `transcript`, with bodies from `blobs`.
    pub fn new(transcript: &'a Transcript, blobs: &'a dyn BlobSource) -> Self {
        ReplayDriver {
            sections: &transcript.sections,
            blobs,
            next: 0,
        }
    }

    /// Sections not consumed yet.
    pub fn remaining_sections(&self) -> usize {
        self.sections.len().saturating_sub(self.next)
    }

    fn run<T: Send + 'static>(&mut self, label: &str, mut machine: Machine<T>) -> Result<Vec<T>> {
        let Some(section) = self.sections.get(self.next) else {
            return Err(drift(format!(
                "the core runs machine '{label}' but the transcript has only {} sections",
                self.sections.len()
            )));
        };
        let index = self.next;
        self.next += 1;
        if section.label != label {
            return Err(drift(format!(
                "section {index}: the core runs machine '{label}', the transcript has '{}'",
                section.label
            )));
        }
        let mut out = Vec::new();
        let mut round_no = 0usize;
        loop {
            match machine.step()? {
                Step::NeedIo(round) => {
                    let Some(recorded) = section.rounds.get(round_no) else {
                        let first = round
                            .first()
                            .map(|r| format!("{:?}", r.op))
                            .unwrap_or_default();
                        return Err(drift(format!(
                            "section '{label}': the core asks for round {round_no} ({} requests, first {first}) but the transcript has {} rounds",
                            round.len(),
                            section.rounds.len()
                        )));
                    };
                    let mut scratch = Blobs::new();
                    let asked: Vec<_> = round
                        .iter()
                        .map(|r| encode_request(r, &mut scratch))
                        .collect();
                    if asked != recorded.requests {
                        let n = asked
                            .iter()
                            .zip(&recorded.requests)
                            .position(|(a, b)| a != b)
                            .unwrap_or(asked.len().min(recorded.requests.len()));
                        let show = |r: Option<&crate::format::RecordedRequest>| {
                            r.and_then(|r| serde_json::to_string(r).ok())
                                .unwrap_or_else(|| "nothing".to_string())
                        };
                        return Err(drift(format!(
                            "section '{label}' round {round_no}: request {n}: the core asks for {} ({} requests in the round), the transcript has {} ({} requests)",
                            show(asked.get(n)),
                            asked.len(),
                            show(recorded.requests.get(n)),
                            recorded.requests.len()
                        )));
                    }
                    for (req, ans) in round.iter().zip(&recorded.answers) {
                        if ans.id != req.id.0 {
                            return Err(drift(format!(
                                "section '{label}' round {round_no}: answer for id {} where id {} was asked",
                                ans.id, req.id.0
                            )));
                        }
                        let answer = decode_answer(ans, self.blobs).map_err(|e| {
                            drift(format!("section '{label}' round {round_no}: {e}"))
                        })?;
                        machine.provide(req.id, answer)?;
                    }
                    if recorded.answers.len() != round.len() {
                        return Err(drift(format!(
                            "section '{label}' round {round_no}: {} answers for {} requests",
                            recorded.answers.len(),
                            round.len()
                        )));
                    }
                    round_no += 1;
                }
                Step::Emit(item) => out.push(item),
                Step::Work(items) => items.into_iter().for_each(|w| w.run()),
                Step::Wait => {}
                Step::Done => break,
            }
        }
        if round_no != section.rounds.len() {
            return Err(drift(format!(
                "section '{label}': the machine finished after {round_no} rounds, the transcript has {}",
                section.rounds.len()
            )));
        }
        Ok(out)
    }
}

impl Driver for ReplayDriver<'_> {
    async fn drive<T: Send + 'static>(
        &mut self,
        label: &str,
        machine: Machine<T>,
    ) -> Result<Vec<T>> {
        self.run(label, machine)
    }
}

/// Replay `case` from `transcript` and return its result (not compared).
///
/// # Errors
/// The core's error, or [`Error::Protocol`] "transcript drift" when the core asks for other
/// IO than recorded, finishes early or leaves sections unused.
pub fn replay_case(
    case: &Case,
    transcript: &Transcript,
    blobs: &dyn BlobSource,
) -> Result<Outcome> {
    let mut driver = ReplayDriver::new(transcript, blobs);
    let outcome = block_on_ready(run_operation(&mut driver, &case.operation))??;
    if driver.remaining_sections() != 0 {
        return Err(drift(format!(
            "the operation finished with {} transcript sections unused",
            driver.remaining_sections()
        )));
    }
    Ok(outcome)
}

/// Compare an outcome with the expected result.
///
/// # Errors
/// [`ReplayError::Mismatch`] naming the first differing line of the JSON view or the first
/// differing byte of the Arrow stream.
pub fn compare(
    outcome: &Outcome,
    expected_json: &str,
    expected_arrow: Option<&[u8]>,
) -> std::result::Result<(), ReplayError> {
    if outcome.json != expected_json {
        let line = outcome
            .json
            .lines()
            .zip(expected_json.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| {
                outcome
                    .json
                    .lines()
                    .count()
                    .min(expected_json.lines().count())
            });
        return Err(ReplayError::Mismatch(format!(
            "result.json line {}: got {:?}, expected {:?}",
            line + 1,
            outcome.json.lines().nth(line).unwrap_or("<end>"),
            expected_json.lines().nth(line).unwrap_or("<end>")
        )));
    }
    match (&outcome.arrow, expected_arrow) {
        (None, None) => Ok(()),
        (Some(got), Some(want)) if got.as_slice() == want => Ok(()),
        (Some(got), Some(want)) => {
            let at = got
                .iter()
                .zip(want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            Err(ReplayError::Mismatch(format!(
                "result.arrows: {} bytes vs {} expected, first difference at byte {at}",
                got.len(),
                want.len()
            )))
        }
        (Some(_), None) => Err(ReplayError::Mismatch(
            "an Arrow result but no expected/result.arrows".to_string(),
        )),
        (None, Some(_)) => Err(ReplayError::Mismatch(
            "no Arrow result but expected/result.arrows exists".to_string(),
        )),
    }
}

impl LoadedCase {
    /// Replay and compare with `expected/`.
    ///
    /// # Errors
    /// [`ReplayError::Core`] (drift included) or [`ReplayError::Mismatch`].
    pub fn check(&self) -> std::result::Result<Outcome, ReplayError> {
        let outcome =
            replay_case(&self.case, &self.transcript, &self.blobs).map_err(ReplayError::Core)?;
        compare(
            &outcome,
            &self.expected_json,
            self.expected_arrow.as_deref(),
        )?;
        Ok(outcome)
    }

    /// Load a case directory; blobs come from `blobs_dir`.
    ///
    /// # Errors
    /// [`ReplayError::Load`] naming the file that is missing or malformed.
    pub fn load(dir: &Path, blobs_dir: &Path) -> std::result::Result<LoadedCase, ReplayError> {
        let read = |p: PathBuf| {
            std::fs::read(&p).map_err(|e| ReplayError::Load(format!("{}: {e}", p.display())))
        };
        let text = |p: PathBuf| {
            read(p.clone()).and_then(|b| {
                String::from_utf8(b).map_err(|e| ReplayError::Load(format!("{}: {e}", p.display())))
            })
        };
        let case: Case = serde_json::from_str(&text(dir.join("case.json"))?)
            .map_err(|e| ReplayError::Load(format!("{}/case.json: {e}", dir.display())))?;
        let transcript =
            Transcript::parse(&text(dir.join("transcript.jsonl"))?).map_err(ReplayError::Load)?;
        let mut blobs = BTreeMap::new();
        for hash in transcript.blob_hashes() {
            blobs.insert(hash.clone(), Bytes::from(read(blobs_dir.join(&hash))?));
        }
        let expected = dir.join("expected");
        let expected_json = text(expected.join(RESULT_JSON))?;
        let arrow_path = expected.join(RESULT_ARROW);
        let expected_arrow = if arrow_path.exists() {
            Some(read(arrow_path)?)
        } else {
            None
        };
        Ok(LoadedCase {
            case,
            transcript,
            blobs,
            expected_json,
            expected_arrow,
        })
    }

    /// Decode a bundle (see [`decode_bundle`]) into a case.
    ///
    /// # Errors
    /// [`ReplayError::Load`] for a malformed bundle or case.
    pub fn from_bundle(bundle: &[u8]) -> std::result::Result<LoadedCase, ReplayError> {
        let mut files = decode_bundle(bundle).map_err(ReplayError::Load)?;
        let mut take_text = |name: &str| {
            files
                .remove(name)
                .ok_or_else(|| ReplayError::Load(format!("bundle has no {name}")))
                .and_then(|b| {
                    String::from_utf8(b.to_vec())
                        .map_err(|e| ReplayError::Load(format!("{name}: {e}")))
                })
        };
        let case: Case = serde_json::from_str(&take_text("case.json")?)
            .map_err(|e| ReplayError::Load(format!("case.json: {e}")))?;
        let transcript =
            Transcript::parse(&take_text("transcript.jsonl")?).map_err(ReplayError::Load)?;
        let expected_json = take_text("expected/result.json")?;
        let expected_arrow = files.remove("expected/result.arrows").map(|b| b.to_vec());
        let blobs = files
            .into_iter()
            .filter_map(|(k, v)| k.strip_prefix("blobs/").map(|h| (h.to_string(), v)))
            .collect();
        Ok(LoadedCase {
            case,
            transcript,
            blobs,
            expected_json,
            expected_arrow,
        })
    }
}

/// Decode a bundle: the files of one case in one buffer, for hosts without a file system
/// (the wasm replayer). Layout: repeated `name_len: u32 LE, name (UTF-8), body_len: u32 LE,
/// body`. Names: `case.json`, `transcript.jsonl`, `expected/result.json`,
/// `expected/result.arrows` (optional), `blobs/<sha256>`.
///
/// # Errors
/// A message when a length runs past the end or a name is not UTF-8.
pub fn decode_bundle(mut buf: &[u8]) -> std::result::Result<BTreeMap<String, Bytes>, String> {
    let mut out = BTreeMap::new();
    let take = |buf: &mut &[u8], what: &str| -> std::result::Result<Vec<u8>, String> {
        let (len_bytes, rest) = buf
            .split_at_checked(4)
            .ok_or_else(|| format!("bundle: truncated {what} length"))?;
        let len = u32::from_le_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]);
        let (body, rest) = rest
            .split_at_checked(len as usize)
            .ok_or_else(|| format!("bundle: {what} of {len} bytes runs past the end"))?;
        *buf = rest;
        Ok(body.to_vec())
    };
    while !buf.is_empty() {
        let name = String::from_utf8(take(&mut buf, "name")?)
            .map_err(|e| format!("bundle: file name: {e}"))?;
        let body = take(&mut buf, "body")?;
        out.insert(name, Bytes::from(body));
    }
    Ok(out)
}

/// Encode files as a bundle (see [`decode_bundle`]).
pub fn encode_bundle<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, body) in files {
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(body);
    }
    out
}
