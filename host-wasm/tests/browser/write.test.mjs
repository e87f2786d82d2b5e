// Writing from the inspector page in headless chromium (playwright-core): a table created in
// memory and one in the origin-private file system, rows dropped as CSV and JSON-lines files,
// a full compaction from the compaction tab, the table downloaded as a zip; the unzipped
// directory must read with the native CLI (and pypaimon) as the model of the rows says.
// Screenshots go to host-wasm/test-artifacts/ (or $PAIMON_TEST_ARTIFACTS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir, homedir } from "node:os";
import { join } from "node:path";
import { bin, artifacts, useBrowser } from "./harness.mjs";
import { repo, canon, javaRead } from "../node/common.mjs";

const python = join(process.env.PAIMON_VENV || join(homedir(), ".cache", "paimon-kernel", "venv"), "bin", "python");
const env = useBrowser({ acceptDownloads: true });

const SCHEMA = {
  fields: [{ name: "k", type: "INT" }, { name: "name", type: "STRING" }, { name: "dt", type: "STRING" }],
  partitionKeys: ["dt"], primaryKeys: ["k", "dt"],
  options: { bucket: "2", "file.format": "parquet", "deletion-vectors.enabled": "true" },
};

async function waitIdle(page, what) {
  await page.waitForFunction(() => window.inspector && !window.inspector.busy && (window.inspector.ready || document.querySelector("#status.error")), null, { timeout: 120000 });
  assert.ok(await page.evaluate(() => window.inspector.ready), `${what}: ${await page.textContent("#status")}`);
}

async function dropFile(page, name, text, count) {
  await page.setInputFiles("#write-file", { name, mimeType: "text/plain", buffer: Buffer.from(text) });
  await page.waitForFunction((n) => window.inspector.writes.length >= n && !window.inspector.busy, count, { timeout: 120000 });
  const w = await page.evaluate(() => window.inspector.writes.at(-1));
  assert.ok(!w.error, `${name}: ${w.error}`);
  return w;
}

/** Create a table from the page's form, write two files, compact fully, download the zip. */
async function scenario(where, tableName) {
  const page = await env.context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${env.base}/`);
  await page.waitForFunction(() => window.inspector);
  await page.click("#new-table");
  await page.fill("#create-schema", JSON.stringify(SCHEMA, null, 2));
  await page.fill("#create-name", tableName);
  await page.check(`input[name=create-where][value=${where}]`);
  await page.click("#create button[type=submit]");
  await waitIdle(page, `create ${where}`);
  assert.equal(await page.isVisible("#tab-write"), true);
  const model = new Map();
  const apply = (rows) => {
    for (const r of rows) {
      const { _ROW_KIND: kind = "+I", ...row } = r;
      const key = `${row.k}|${row.dt}`;
      if (kind === "-D") model.delete(key); else model.set(key, row);
    }
  };
  const first = await dropFile(page, "first.csv", "k,name,dt\n1,a,d1\n2,b,d1\n3,c,d2\n", 1);
  apply([{ k: 1, name: "a", dt: "d1" }, { k: 2, name: "b", dt: "d1" }, { k: 3, name: "c", dt: "d2" }]);
  assert.equal(first.rows, 3);
  const second = [{ k: 2, name: "b2", dt: "d1" }, { k: 3, name: "c", dt: "d2", _ROW_KIND: "-D" }, { k: 4, name: "d", dt: "d2" }];
  const w2 = await dropFile(page, "second.jsonl", second.map((r) => JSON.stringify(r)).join("\n"), 2);
  apply(second);
  // Deletion-vector table: each write compacts level 0 before its commit (APPEND + COMPACT).
  assert.equal(w2.commit.snapshotIds.length, 2, JSON.stringify(w2));
  assert.equal(await page.textContent("#latest"), String(w2.commit.snapshotIds.at(-1)));
  // A bad file: rejected with the line, nothing committed.
  await page.setInputFiles("#write-file", { name: "bad.csv", mimeType: "text/plain", buffer: Buffer.from("k,name,dt\nx,a,d1\n") });
  await page.waitForFunction(() => window.inspector.writes.length >= 3 && !window.inspector.busy);
  const bad = await page.evaluate(() => window.inspector.writes.at(-1));
  assert.match(bad.error, /bad\.csv.*line 2/);
  assert.equal(await page.textContent("#latest"), String(w2.commit.snapshotIds.at(-1)));
  await page.click("[data-tab=write]");
  await page.screenshot({ path: join(artifacts, `write-${where}-written.png`), fullPage: true });
  // Compact from the compaction tab (full).
  await page.click("[data-tab=compaction]");
  await page.check("#compaction-full");
  await page.waitForFunction(() => window.inspector.viewsReady.compaction);
  await page.click("#compact-now");
  await page.waitForFunction(() => window.inspector.lastCompaction && !window.inspector.busy, null, { timeout: 120000 });
  await waitIdle(page, "compact");
  const c = await page.evaluate(() => window.inspector.lastCompaction);
  assert.ok(c.tasks >= 1 && c.commit.snapshotIds.length === 1, JSON.stringify(c));
  await page.click("[data-tab=snapshots]");
  const kinds = await page.locator("#snapshots tbody tr td:nth-child(2)").allTextContents();
  assert.equal(kinds.at(-1), "COMPACT");
  await page.screenshot({ path: join(artifacts, `write-${where}-compacted.png`), fullPage: true });
  // Download the table as a zip and read it natively.
  await page.click("[data-tab=write]");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-zip")]);
  const dir = mkdtempSync(join(tmpdir(), `wasm-page-${where}-`));
  try {
    const zip = join(dir, "table.zip");
    await download.saveAs(zip);
    const warehouse = join(dir, "wh", "corpus.db");
    mkdirSync(warehouse, { recursive: true });
    execFileSync("python3", ["-m", "zipfile", "-e", zip, warehouse]);
    const tableDir = join(warehouse, tableName);
    assert.ok(existsSync(join(tableDir, "schema", "schema-0")), "zip entries under the table name");
    const out = execFileSync(bin, ["scan", tableDir, "--format", "jsonl"], { encoding: "utf8" });
    const rows = out.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    assert.deepEqual(canon(rows), canon([...model.values()]));
    if (existsSync(javaRead)) {
      // Java Paimon 2.0.0 (java-check, installed by scripts/install-deps.sh).
      const out = execFileSync(javaRead, [tableDir], { encoding: "utf8" });
      assert.deepEqual(canon(out.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l))), canon([...model.values()]), "Java read");
    } else {
      assert.ok(!process.env.CI, `java-check missing at ${javaRead}`);
    }
    if (existsSync(python)) {
      writeFileSync(join(dir, "wh", `${tableName}.expected.json`), JSON.stringify({ table: tableName, database: "corpus", rows: [...model.values()] }));
      const py = execFileSync(python, [join(repo, "conformance", "pypaimon_read_back.py"), join(dir, "wh")], { encoding: "utf8" });
      assert.match(py, /^1 passed, 0 failed$/m, py);
    } else {
      assert.ok(!process.env.CI, `pypaimon venv missing at ${python}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(errors, []);
  await page.close();
}

test("page: a table created in memory, written from dropped files, compacted, downloaded as a zip", async () => {
  await scenario("memory", "page_memory");
});

test("page: a table in the origin-private file system, written, compacted, downloaded as a zip", async () => {
  await scenario("opfs", `page_opfs_${Date.now()}`);
});
