//! Recording: building a transcript while a real host answers, and writing a case directory.
//!
//! The recording host of `paimon-native` (`paimon_native::recording`) answers rounds with the
//! object_store host and hands each round to a [`Recorder`]; [`StoreDriver`] does the same
//! over an in-memory copy of a table (tests, fault injection).

use std::path::Path;

use bytes::Bytes;
use paimon_kernel::Result;
use paimon_kernel::io::{IoAnswer, IoRequest, Machine, MemoryStore, RequestId, Step};

use crate::driver::{Driver, Outcome};
use crate::format::{
    Blobs, Case, RESULT_ARROW, RESULT_JSON, Round, Section, Transcript, encode_answer,
    encode_request,
};

/// Accumulates the sections and rounds of one operation.
#[derive(Debug, Default, Clone)]
pub struct Recorder {
    /// The transcript so far.
    pub transcript: Transcript,
    /// Bodies of every `bytes` answer and `put` request so far.
    pub blobs: Blobs,
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Start the section of the next machine.
    pub fn begin(&mut self, label: &str) {
        self.transcript.sections.push(Section {
            label: label.to_string(),
            rounds: Vec::new(),
        });
    }

    /// Record one round of the current section: its requests as handed out, and the answers
    /// in any order (stored sorted by id).
    pub fn round(&mut self, requests: &[IoRequest], answers: &[(RequestId, IoAnswer)]) {
        let mut answers: Vec<&(RequestId, IoAnswer)> = answers.iter().collect();
        answers.sort_by_key(|(id, _)| *id);
        let round = Round {
            requests: requests
                .iter()
                .map(|r| encode_request(r, &mut self.blobs))
                .collect(),
            answers: answers
                .into_iter()
                .map(|(id, a)| encode_answer(*id, a, &mut self.blobs))
                .collect(),
        };
        if self.transcript.sections.is_empty() {
            self.begin("unlabelled");
        }
        if let Some(s) = self.transcript.sections.last_mut() {
            s.rounds.push(round);
        }
    }

    /// Write the case: `case_dir/{case.json, transcript.jsonl, expected/}` and the blobs
    /// into `blobs_dir` (existing blobs are kept: content-addressed). Files of an earlier
    /// recording in `case_dir/expected` are replaced.
    ///
    /// # Errors
    /// File system errors.
    pub fn write(
        &self,
        case: &Case,
        outcome: &Outcome,
        case_dir: &Path,
        blobs_dir: &Path,
    ) -> std::io::Result<()> {
        let expected = case_dir.join("expected");
        std::fs::create_dir_all(&expected)?;
        std::fs::create_dir_all(blobs_dir)?;
        let mut case_json = serde_json::to_string_pretty(case).map_err(std::io::Error::other)?;
        case_json.push('\n');
        std::fs::write(case_dir.join("case.json"), case_json)?;
        std::fs::write(
            case_dir.join("transcript.jsonl"),
            self.transcript.to_jsonl(),
        )?;
        std::fs::write(expected.join(RESULT_JSON), &outcome.json)?;
        let arrow_path = expected.join(RESULT_ARROW);
        match &outcome.arrow {
            Some(bytes) => std::fs::write(&arrow_path, bytes)?,
            None => {
                if arrow_path.exists() {
                    std::fs::remove_file(&arrow_path)?;
                }
            }
        }
        for (hash, body) in &self.blobs {
            let p = blobs_dir.join(hash);
            if !p.exists() {
                std::fs::write(p, body)?;
            }
        }
        Ok(())
    }
}

/// Load every file under `dir` into a [`MemoryStore`], keyed by `/`-separated paths relative
/// to `dir` (a table directory becomes a store rooted at the table).
///
/// # Errors
/// File system errors.
pub fn load_dir(dir: &Path) -> std::io::Result<MemoryStore> {
    fn walk(root: &Path, dir: &Path, store: &mut MemoryStore) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(root, &path, store)?;
            } else {
                let rel = path
                    .strip_prefix(root)
                    .map_err(std::io::Error::other)?
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                store
                    .objects
                    .insert(rel, Bytes::from(std::fs::read(&path)?));
            }
        }
        Ok(())
    }
    let mut store = MemoryStore::new();
    walk(dir, dir, &mut store)?;
    Ok(store)
}

/// A [`Driver`] answering from a [`MemoryStore`], optionally recording.
pub struct StoreDriver<'a> {
    /// The store answering.
    pub store: &'a mut MemoryStore,
    /// Where rounds are recorded, if anywhere.
    pub recorder: Option<&'a mut Recorder>,
}

impl Driver for StoreDriver<'_> {
    async fn drive<T: Send + 'static>(
        &mut self,
        label: &str,
        mut machine: Machine<T>,
    ) -> Result<Vec<T>> {
        if let Some(r) = self.recorder.as_deref_mut() {
            r.begin(label);
        }
        let mut out = Vec::new();
        loop {
            match machine.step()? {
                Step::NeedIo(round) => {
                    let answers: Vec<(RequestId, IoAnswer)> = round
                        .iter()
                        .map(|r| (r.id, self.store.answer(&r.op)))
                        .collect();
                    if let Some(rec) = self.recorder.as_deref_mut() {
                        rec.round(&round, &answers);
                    }
                    for (id, a) in answers {
                        machine.provide(id, a)?;
                    }
                }
                Step::Emit(item) => out.push(item),
                Step::Work(items) => items.into_iter().for_each(|w| w.run()),
                Step::Wait => {}
                Step::Done => return Ok(out),
            }
        }
    }
}
