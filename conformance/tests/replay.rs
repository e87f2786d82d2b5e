//! Every recorded case replays from its transcript alone and reproduces `expected/` byte for
//! byte (write cases: every `Put` body too); scan results agree with the corpus expected rows;
//! IO drift is reported.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use paimon_conformance::Operation;
use paimon_conformance::format::Transcript;
use paimon_conformance::replay::{LoadedCase, ReplayError, replay_case};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn case_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("cases"))
        .expect("conformance/cases exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    dirs
}

fn load(dir: &Path) -> LoadedCase {
    LoadedCase::load(dir, &root().join("blobs"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

#[test]
fn every_case_replays_byte_identically() {
    let dirs = case_dirs();
    assert!(dirs.len() >= 60, "only {} cases", dirs.len());
    let mut failures = Vec::new();
    for dir in &dirs {
        let case = load(dir);
        if let Err(e) = case.check() {
            failures.push(format!("{}: {e}", case.case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed (if the core changed its IO or results on purpose, re-record: conformance/record-all.sh, and review the diff):\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
    println!("{} cases replayed byte-identically", dirs.len());
}

/// Canonical rows of a scan case, sorted as strings (the corpus sorts by its own key).
fn sorted_rows(json: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(json).expect("result.json parses");
    let mut rows: Vec<String> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r.to_string())
        .collect();
    rows.sort();
    rows
}

#[test]
fn scan_cases_agree_with_the_corpus_expected_rows() {
    let mut checked = 0;
    for dir in case_dirs() {
        let case = load(&dir);
        let Operation::Scan {
            snapshot_id,
            tag,
            options,
            columns,
            filter: None,
            limit: None,
            ..
        } = &case.case.operation
        else {
            continue;
        };
        let expected_file = root()
            .join("tables")
            .join(format!("{}.expected.json", case.case.table));
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(expected_file).unwrap()).unwrap();
        // The corpus read with the same options and projection.
        let mut want_options = serde_json::Map::new();
        if let Some(id) = snapshot_id {
            want_options.insert("scan.snapshot-id".into(), Value::from(id.to_string()));
        }
        if let Some(t) = tag {
            want_options.insert("scan.tag-name".into(), Value::from(t.clone()));
        }
        for (k, v) in options {
            want_options.insert(k.clone(), Value::from(v.clone()));
        }
        let projection = columns
            .as_ref()
            .map(|c| Value::from(c.iter().map(|s| Value::from(s.clone())).collect::<Vec<_>>()))
            .unwrap_or(Value::Null);
        let rows = if want_options.is_empty() && projection.is_null() {
            Some(expected["rows"].clone())
        } else {
            expected["additional_reads"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| {
                    r["options"] == Value::Object(want_options.clone())
                        && r["projection"] == projection
                })
                .map(|r| r["rows"].clone())
        };
        let Some(rows) = rows else { continue };
        let mut want: Vec<String> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.to_string())
            .collect();
        want.sort();
        assert_eq!(
            sorted_rows(&case.expected_json),
            want,
            "{}: recorded rows differ from the corpus expected rows",
            case.case.name
        );
        checked += 1;
    }
    assert!(
        checked >= 50,
        "only {checked} scan cases matched a corpus read"
    );
    println!("{checked} scan cases agree with the corpus expected rows");
}

#[test]
fn io_drift_is_an_error_naming_the_round() {
    let dir = root().join("cases/append_parquet.scan-latest");
    let case = load(&dir);
    // A changed path in the first round.
    let mut t: Transcript = case.transcript.clone();
    t.sections[0].rounds[0].requests[0].path = Some("snapshot/OTHER".into());
    let err = replay_case(&case.case, &t, &case.blobs)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("transcript drift") && err.contains("snapshot/OTHER"),
        "{err}"
    );
    // A missing last round.
    let mut t = case.transcript.clone();
    let last = t.sections.len() - 1;
    t.sections[last].rounds.pop();
    let err = replay_case(&case.case, &t, &case.blobs)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("transcript drift") && err.contains("split-"),
        "{err}"
    );
    // An extra section nobody asks for.
    let mut t = case.transcript.clone();
    t.sections.push(t.sections[0].clone());
    let err = replay_case(&case.case, &t, &case.blobs)
        .unwrap_err()
        .to_string();
    assert!(err.contains("sections unused"), "{err}");
    // A changed expected result is a mismatch.
    let mut changed = case.clone();
    changed.expected_json = changed
        .expected_json
        .replacen("\"id\": 1,", "\"id\": 2,", 1);
    assert!(matches!(changed.check(), Err(ReplayError::Mismatch(_))));
}

#[test]
fn write_cases_check_every_put_body() {
    let dirs: Vec<PathBuf> = case_dirs()
        .into_iter()
        .filter(|d| {
            d.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("write.")
        })
        .collect();
    assert!(dirs.len() >= 3, "only {} write cases", dirs.len());
    for dir in dirs {
        let case = load(&dir);
        assert!(matches!(case.case.operation, Operation::Write { .. }));
        // Every put of the transcript, in turn, with another recorded body (length): the core
        // writes other bytes than recorded, a drift naming the section.
        let puts: Vec<(usize, usize, usize)> = case
            .transcript
            .sections
            .iter()
            .enumerate()
            .flat_map(|(s, sec)| {
                sec.rounds.iter().enumerate().flat_map(move |(r, round)| {
                    round
                        .requests
                        .iter()
                        .enumerate()
                        .filter(|(_, q)| q.op == "put")
                        .map(move |(q, _)| (s, r, q))
                })
            })
            .collect();
        assert!(puts.len() >= 5, "{}: {} puts", case.case.name, puts.len());
        for (s, r, q) in puts {
            let mut t = case.transcript.clone();
            let req = &mut t.sections[s].rounds[r].requests[q];
            req.len = req.len.map(|l| l + 1);
            let err = replay_case(&case.case, &t, &case.blobs)
                .unwrap_err()
                .to_string();
            let label = &case.transcript.sections[s].label;
            assert!(
                err.contains("transcript drift") && err.contains(label.as_str()),
                "{}: {err}",
                case.case.name
            );
        }
    }
}
