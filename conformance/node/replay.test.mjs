// Replays every recorded conformance case through the core compiled to wasm32 (host-wasm's
// `replayCase`) and checks that the result is byte-identical to expected/ (Arrow IPC stream
// for scans and writes, canonical JSON otherwise), as the native replay test does. Write cases
// run the writer and the commit under wasm: every Put they make must carry the recorded bytes
// (the replayer compares each request, body SHA-256 and length included, with the transcript).
// Run: (cd conformance && node --test node/)   after scripts/build-wasm.sh
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const conformance = join(here, "..");
const repo = join(conformance, "..");
const pkgDir = process.env.PAIMON_WASM_PKG || join(repo, "host-wasm", "pkg");

const wasm = await import(join(pkgDir, "paimon_wasm.js"));
wasm.initSync({ module: readFileSync(join(pkgDir, "paimon_wasm_bg.wasm")) });

/** The files of one case as a bundle (see paimon_conformance::replay::decode_bundle). */
function bundle(dir) {
  const files = [];
  const add = (name, path) => files.push([name, readFileSync(path)]);
  add("case.json", join(dir, "case.json"));
  add("transcript.jsonl", join(dir, "transcript.jsonl"));
  add("expected/result.json", join(dir, "expected", "result.json"));
  if (existsSync(join(dir, "expected", "result.arrows"))) {
    add("expected/result.arrows", join(dir, "expected", "result.arrows"));
  }
  const text = readFileSync(join(dir, "transcript.jsonl"), "utf8");
  const hashes = new Set([...text.matchAll(/"sha256":"([0-9a-f]{64})"/g)].map((m) => m[1]));
  for (const h of hashes) add(`blobs/${h}`, join(conformance, "blobs", h));
  const enc = new TextEncoder();
  let size = 0;
  const parts = files.map(([name, body]) => {
    const n = enc.encode(name);
    size += 8 + n.length + body.length;
    return [n, body];
  });
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const [n, body] of parts) {
    view.setUint32(at, n.length, true);
    out.set(n, at + 4);
    at += 4 + n.length;
    view.setUint32(at, body.length, true);
    out.set(body, at + 4);
    at += 4 + body.length;
  }
  return out;
}

const casesDir = join(conformance, "cases");
const cases = readdirSync(casesDir).filter((n) => existsSync(join(casesDir, n, "case.json"))).sort();

test("there are at least 60 recorded cases", () => {
  assert.ok(cases.length >= 60, `only ${cases.length} cases`);
});

test("every case replays under wasm byte-identically to expected/", () => {
  const failures = [];
  for (const name of cases) {
    const dir = join(casesDir, name);
    try {
      const got = wasm.replayCase(bundle(dir));
      const arrows = join(dir, "expected", "result.arrows");
      const want = existsSync(arrows) ? readFileSync(arrows) : readFileSync(join(dir, "expected", "result.json"));
      if (Buffer.compare(Buffer.from(got), want) !== 0) {
        failures.push(`${name}: ${got.length} bytes, expected ${want.length}`);
      }
    } catch (e) {
      failures.push(`${name}: ${e}`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases failed under wasm`);
});

const writeCases = cases.filter((n) => JSON.parse(readFileSync(join(casesDir, n, "case.json"), "utf8")).operation.op === "write");

test("write cases replay under wasm with the recorded Put bytes", () => {
  assert.ok(writeCases.length >= 3, `only ${writeCases.length} write cases`);
  for (const name of writeCases) {
    const dir = join(casesDir, name);
    const text = readFileSync(join(dir, "transcript.jsonl"), "utf8");
    const puts = [...text.matchAll(/"op":"put","path":"([^"]+)","mode":"[a-z_]+","sha256":"([0-9a-f]{64})"/g)];
    assert.ok(puts.length > 0, `${name}: no puts`);
    const got = wasm.replayCase(bundle(dir));
    assert.equal(Buffer.compare(Buffer.from(got), readFileSync(join(dir, "expected", "result.arrows"))), 0, name);
    // A recorded body hash that is not what the core under wasm writes is a drift.
    const [put, path, sha] = puts.find(([, p]) => p.includes("data-"));
    const other = sha.slice(0, 63) + (sha[63] === "0" ? "1" : "0");
    const text2 = Buffer.from(bundle(dir)).toString("latin1").replace(put, put.replace(sha, other));
    assert.throws(() => wasm.replayCase(Buffer.from(text2, "latin1")), /transcript drift/, `${name}: ${path}`);
  }
});

test("a transcript drift is reported under wasm", () => {
  const dir = join(casesDir, "append_parquet.scan-latest");
  const b = bundle(dir);
  // Change the first request's path in the bundled transcript (same length keeps the layout).
  const text = Buffer.from(b).toString("latin1").replace('"path":"snapshot/LATEST"', '"path":"snapshot/LATESX"');
  assert.throws(() => wasm.replayCase(Buffer.from(text, "latin1")), /transcript drift/);
});
