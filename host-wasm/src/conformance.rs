//! Conformance replay under wasm: one recorded case (a bundle of its files, see
//! `paimon_conformance::replay::decode_bundle`) replayed through the core from its transcript
//! alone, as the native `cargo test -p paimon-conformance` does.

use paimon_conformance::replay::LoadedCase;
use wasm_bindgen::prelude::*;

/// Replay a conformance case and check it against its `expected/` files.
///
/// `bundle`: the case's files as `name_len u32 LE, name, body_len u32 LE, body` records
/// (`case.json`, `transcript.jsonl`, `expected/result.json`, `expected/result.arrows`,
/// `blobs/<sha256>`). Returns the result's Arrow IPC stream bytes (scans) or its canonical
/// JSON bytes (other operations), so that the caller can compare them on its side too.
///
/// # Errors
/// A message for a malformed bundle, IO drift (the core asked for other IO than recorded), a
/// core error, or a result that differs from `expected/`.
#[wasm_bindgen(js_name = replayCase)]
pub fn replay_case(bundle: &[u8]) -> Result<Vec<u8>, JsValue> {
    let case = LoadedCase::from_bundle(bundle).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let outcome = case
        .check()
        .map_err(|e| JsValue::from_str(&format!("{}: {e}", case.case.name)))?;
    Ok(outcome.arrow.unwrap_or_else(|| outcome.json.into_bytes()))
}
