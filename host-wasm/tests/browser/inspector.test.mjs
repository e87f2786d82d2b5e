// End to end in a real browser: Debian's chromium driven by playwright-core, against
// `paimon-kernel serve` on 127.0.0.1, opening corpus tables by URL in the inspector page.
// Screenshots go to host-wasm/test-artifacts/ (or $PAIMON_TEST_ARTIFACTS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { artifacts, useBrowser } from "./harness.mjs";
import { expected } from "../node/common.mjs";

const env = useBrowser();

async function openTable(page, table) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const t0 = Date.now();
  await page.goto(`${env.base}/?url=/data/${table}`);
  await page.waitForFunction(() => window.inspector && (window.inspector.ready || document.querySelector("#status.error")), null, { timeout: 120000 });
  const status = await page.textContent("#status");
  assert.ok(await page.evaluate(() => window.inspector.ready), `${table}: ${status}`);
  assert.deepEqual(errors, []);
  return { wallMs: Date.now() - t0, timings: await page.evaluate(() => window.inspector.timings) };
}

const cellText = (v) => (v === null ? "null" : typeof v === "object" ? JSON.stringify(v) : String(v));

test("pk_dedup by URL: snapshots, schema, preview rows", async () => {
  const page = await env.context.newPage();
  const exp = expected("pk_dedup");
  const { wallMs, timings } = await openTable(page, "pk_dedup");
  assert.equal(await page.locator("#snapshots tbody tr").count(), exp.snapshots.length);
  assert.equal(await page.textContent("#latest"), String(exp.snapshot_id));
  await page.click("[data-tab=schema]");
  assert.deepEqual(await page.locator("#schema-fields td.name").allTextContents(), exp.fields.map((f) => f.name));
  await page.click("[data-tab=files]");
  assert.match(await page.textContent("#files-summary"), new RegExp(`^snapshot ${exp.snapshot_id}: ${exp.files.length} files`));
  await page.click("[data-tab=data]");
  const header = await page.locator("#preview thead th").allTextContents();
  assert.deepEqual(header, exp.fields.map((f) => f.name));
  const rows = await page.locator("#preview tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.equal(rows.length, exp.rows.length);
  const want = new Set(exp.rows.map((r) => JSON.stringify(header.map((h) => cellText(r[h])))));
  for (const r of rows) assert.ok(want.has(JSON.stringify(r)), `unexpected row ${r}`);
  await page.screenshot({ path: join(artifacts, "inspector-pk_dedup.png"), fullPage: true });
  const figures = { table: "pk_dedup", wallMsToPreview: wallMs, ...timings };
  writeFileSync(join(artifacts, "timings-pk_dedup.json"), JSON.stringify(figures, null, 2));
  console.log(`# pk_dedup: open+preview ${wallMs} ms wall (open ${timings.open.toFixed(0)} ms, preview ${timings.preview.toFixed(0)} ms)`);
  await page.close();
});

test("blob_single by URL: schema, preview rows with row ids, a blob's bytes", async () => {
  const page = await env.context.newPage();
  const exp = expected("blob_single");
  await openTable(page, "blob_single");
  assert.equal(await page.locator("#snapshots tbody tr").count(), exp.snapshots.length);
  await page.click("[data-tab=schema]");
  assert.deepEqual(await page.locator("#schema-fields td.name").allTextContents(), exp.fields.map((f) => f.name));
  await page.click("[data-tab=data]");
  const header = await page.locator("#preview thead th").allTextContents();
  assert.deepEqual(header, ["_ROW_ID", "id", "label", "data"]);
  const rows = await page.locator("#preview tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 3).map((td) => td.textContent)));
  const withIds = exp.additional_reads.find((r) => r.label === "latest-with-row-id").rows;
  assert.equal(rows.length, withIds.length);
  const want = new Set(withIds.map((r) => JSON.stringify([r._ROW_ID, r.id, r.label].map(cellText))));
  for (const r of rows) assert.ok(want.has(JSON.stringify(r)), `unexpected row ${r}`);
  const big = withIds.find((r) => r.data && r.data.len === 262144);
  await page.click("[data-tab=blobs]");
  await page.fill("#blob-row", String(big._ROW_ID));
  await page.click("#blob-form button");
  await page.waitForSelector("#blob-size");
  assert.equal(await page.getAttribute("#blob-size", "data-bytes"), "262144");
  await page.screenshot({ path: join(artifacts, "inspector-blob_single.png"), fullPage: true });
  await page.close();
});
