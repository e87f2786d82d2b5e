// Shared helpers of the Node tests: load the wasm package, corpus tables and expected files.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer } from "node:http";

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, "..", "..", "..");
export const tablesDir = join(repo, "conformance", "tables");
export const corpusDir = join(tablesDir, "corpus.db");

/** java-check's `read` script (Java Paimon 2.0.0): `$PAIMON_JAVA_CHECK_DIR`, else
 * `~/.cache/paimon-kernel/java-check-2.0.0` (where scripts/install-deps.sh installs it), as
 * host-native/tests/it/oracle.rs finds it. May not exist; when it exists it must be a 2.0.0
 * build (its `paimon.version`), else loading this module throws. */
export const javaRead = (() => {
  const dir = process.env.PAIMON_JAVA_CHECK_DIR
    || join(homedir(), ".cache", "paimon-kernel", "java-check-2.0.0");
  const read = join(dir, "read");
  if (existsSync(read)) {
    const version = existsSync(join(dir, "paimon.version"))
      ? readFileSync(join(dir, "paimon.version"), "utf8").trim() : "";
    if (version !== "2.0.0") {
      throw new Error(`${dir} is not a java-check of Java Paimon 2.0.0 (reinstall it with conformance/java-check/install.sh)`);
    }
  }
  return read;
})();
const pkgDir = process.env.PAIMON_WASM_PKG || join(repo, "host-wasm", "pkg");

let wasm;
/** The wasm module (web target, initialized synchronously from the .wasm bytes). */
export async function loadWasm() {
  if (!wasm) {
    wasm = await import(join(pkgDir, "paimon_wasm.js"));
    wasm.initSync({ module: readFileSync(join(pkgDir, "paimon_wasm_bg.wasm")) });
  }
  return wasm;
}

/** Every file of a corpus table: Map of path relative to the table root → bytes. */
export function tableFiles(table) {
  const root = join(corpusDir, table);
  const out = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(root, p).split("\\").join("/"), new Uint8Array(readFileSync(p)));
    }
  };
  walk(root);
  return out;
}

/** The expected file of a table, parsed with {@link parseExact}. */
export function expected(table) {
  return parseExact(readFileSync(join(tablesDir, `${table}.expected.json`), "utf8"));
}

/**
 * JSON.parse, except that integer literals beyond Number.MAX_SAFE_INTEGER become their decimal
 * strings (exact), as the wasm API returns them, instead of rounded numbers.
 */
export function parseExact(text) {
  const token = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
  return JSON.parse(text.replace(token, (t) =>
    t[0] === '"' || /[.eE]/.test(t) || Number.isSafeInteger(Number(t)) ? t : `"${t}"`));
}

export function corpusTables() {
  return JSON.parse(readFileSync(join(tablesDir, "manifest.json"), "utf8")).tables.map((t) => t.name);
}

/** Rows compared as multisets: each row's JSON with sorted keys, sorted. */
export function canon(rows) {
  const sortKeys = (v) =>
    Array.isArray(v) ? v.map(sortKeys)
      : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]))
        : v;
  return rows.map((r) => JSON.stringify(sortKeys(r))).sort();
}

/**
 * A static file server with Range support over `root` (for the HTTP source), on 127.0.0.1.
 * Returns {url, close, log}; `log` records "METHOD path range" of every request.
 */
export async function serveDir(root) {
  const log = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    log.push(`${req.method} ${path} ${req.headers.range || ""}`);
    const file = join(root, path);
    if (!file.startsWith(root)) { res.writeHead(403); res.end(); return; }
    let bytes;
    try { bytes = readFileSync(file); } catch { res.writeHead(404); res.end(); return; }
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range || "");
    if (m) {
      const a = Number(m[1]), b = Math.min(Number(m[2]), bytes.length - 1);
      res.writeHead(206, { "content-length": b - a + 1, "content-range": `bytes ${a}-${b}/${bytes.length}` });
      res.end(req.method === "HEAD" ? undefined : bytes.subarray(a, b + 1));
    } else {
      res.writeHead(200, { "content-length": bytes.length });
      res.end(req.method === "HEAD" ? undefined : bytes);
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)), log };
}
