// The inspector's anatomy views in headless chromium (playwright-core) against
// `paimon-kernel serve`: a primary-key, a data-evolution and an append table opened by URL
// (and one from a picked folder, whose tags can be listed), each view's SVG elements counted
// against the table's metadata (expected files, `paimon-kernel plan-compaction`), screenshots
// saved to host-wasm/test-artifacts/ (or $PAIMON_TEST_ARTIFACTS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bin, artifacts, useBrowser } from "./harness.mjs";
import { corpusDir, expected } from "../node/common.mjs";

const env = useBrowser();

async function waitReady(page, what) {
  await page.waitForFunction(() => window.inspector && (window.inspector.ready || document.querySelector("#status.error")), null, { timeout: 120000 });
  assert.ok(await page.evaluate(() => window.inspector.ready), `${what}: ${await page.textContent("#status")}`);
}

async function openTable(table) {
  const page = await env.context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${env.base}/?url=/data/${table}`);
  await waitReady(page, table);
  return { page, errors };
}

/** Click a view tab and wait until it is drawn. */
async function view(page, name) {
  await page.evaluate((n) => { window.inspector.viewsReady[n] = false; }, name);
  await page.click(`[data-tab=${name}]`);
  await page.waitForFunction((n) => window.inspector.viewsReady[n] === true || document.querySelector("#status.error"), name, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.querySelector("#status.error")?.textContent ?? null), null);
}

const perLevel = (files) => {
  const m = {};
  for (const f of files) m[`${f.bucket}|${f.level}`] = (m[`${f.bucket}|${f.level}`] || 0) + 1;
  return m;
};

/** Rectangles drawn per "bucket|level". */
const drawnPerLevel = (page, sel) => page.evaluate((s) => {
  const m = {};
  for (const svg of document.querySelectorAll(s)) {
    for (const r of svg.querySelectorAll("rect.file")) {
      const k = `${svg.dataset.bucket}|${r.dataset.level}`;
      m[k] = (m[k] || 0) + 1;
    }
  }
  return m;
}, sel);

function cliPlan(table, full) {
  return JSON.parse(execFileSync(bin, ["plan-compaction", ...(full ? ["--full"] : []), join(corpusDir, table)]));
}

test("primary-key table (pk_dv): levels per bucket, deletion vectors, full-compaction preview, timeline", async () => {
  const table = "pk_dv";
  const exp = expected(table);
  const { page, errors } = await openTable(table);
  await view(page, "levels");
  assert.deepEqual(await drawnPerLevel(page, "#levels-view svg.levels"), perLevel(exp.files));
  // Every level-0 file is its own sorted run; the heading's run count matches the rows drawn.
  for (const b of await page.locator("#levels-view .bucket").all()) {
    const runs = Number(await b.locator("b.runs").textContent());
    assert.equal(await b.locator("text.run-label").count(), runs);
  }
  // pypaimon wrote no deletion vector into pk_dv: none marked (see the de_dv_delete test).
  assert.equal(await page.locator("#levels-view path.dv-mark").count(), exp.index_files.length);
  // Hovering a file shows its metadata.
  const first = exp.files[0].file_path.split("/").pop();
  await page.hover(`#levels-view rect.file[data-file='${first}']`);
  assert.match(await page.textContent("#tooltip"), new RegExp(`^${first}\nlevel \\d+, .*rows\nsequence \\d+\\.\\.\\d+, schema 0`));
  assert.equal(await page.locator("#tooltip").isVisible(), true);
  await page.screenshot({ path: join(artifacts, "views-pk_dv-levels.png"), fullPage: true });

  await view(page, "compaction");
  const plan = cliPlan(table, false);
  const inPlan = plan.units.flatMap((u) => u.files).sort();
  assert.deepEqual((await page.locator("#compaction-view rect.file.in-task").evaluateAll((rs) => rs.map((r) => r.dataset.file))).sort(), inPlan);
  assert.equal(await page.locator("#compaction-tasks tbody tr").count(), plan.units.length);
  assert.equal(await page.locator("#compaction-view rect.file.not-in-task").count(), exp.files.length - inPlan.length);
  await page.screenshot({ path: join(artifacts, "views-pk_dv-compaction.png"), fullPage: true });

  await view(page, "timeline");
  assert.equal(await page.locator("#timeline-view circle.snap").count(), exp.snapshots.length);
  assert.deepEqual(await page.locator("#timeline-view circle.snap").evaluateAll((cs) => cs.map((c) => c.dataset.kind)), exp.snapshots.map((s) => s.commitKind));
  assert.deepEqual(errors, []);
  await page.close();
});

test("primary-key table (pk_dedup_partitioned): a partition at a time, normal and full compaction", async () => {
  const table = "pk_dedup_partitioned";
  const exp = expected(table);
  const { page, errors } = await openTable(table);
  await view(page, "levels");
  const partitions = await page.locator("#levels-partition option").evaluateAll((os) => os.map((o) => o.value));
  assert.ok(partitions.length > 1);
  let drawn = 0;
  for (const p of partitions) {
    await page.evaluate(() => { window.inspector.viewsReady.levels = false; });
    await page.selectOption("#levels-partition", p);
    await page.waitForFunction(() => window.inspector.timings.drawLevels !== undefined && document.querySelector("#levels-view svg"));
    drawn += await page.locator("#levels-view rect.file").count();
  }
  assert.equal(drawn, exp.files.length);
  await view(page, "compaction");
  assert.equal(await page.locator("#compaction-view rect.file.in-task").count(), 0, "no normal compaction due");
  await page.evaluate(() => { window.inspector.viewsReady.compaction = false; });
  await page.check("#compaction-full");
  await page.waitForFunction(() => document.querySelector("#compaction-tasks"));
  const plan = cliPlan(table, true);
  assert.equal(await page.locator("#compaction-tasks tbody tr").count(), plan.units.length);
  const shown = await page.locator("#compaction-partition").inputValue();
  const inShown = plan.units.filter((u) => `{${Object.values(u.partition).join(", ")}}` === shown).flatMap((u) => u.files).sort();
  await page.waitForFunction(() => document.querySelector("#compaction-view rect.file.in-task"));
  assert.deepEqual((await page.locator("#compaction-view rect.file.in-task").evaluateAll((rs) => rs.map((r) => r.dataset.file))).sort(), inShown);
  await page.screenshot({ path: join(artifacts, "views-pk_dedup_partitioned-compaction.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("data-evolution table (de_update): field-group bands, compaction highlight, time travel from the timeline", async () => {
  const table = "de_update";
  const exp = expected(table);
  const { page, errors } = await openTable(table);
  assert.equal(await page.locator("[data-tab=fieldgroups]").isVisible(), true);
  await view(page, "fieldgroups");
  assert.equal(await page.locator("#fg-view g.band").count(), exp.files.length);
  assert.deepEqual((await page.locator("#fg-view g.band").evaluateAll((gs) => gs.map((g) => g.dataset.file))).sort(),
    exp.files.map((f) => f.file_path.split("/").pop()).sort());
  // One lane per column; every band draws one rectangle per column it holds.
  const schema = await page.evaluate(() => window.inspector.schema.fields.length);
  assert.equal(await page.locator("#fg-view text.lane-label").count(), schema);
  const groups = await page.evaluate(async () => (await window.inspector.table.fieldGroups()).buckets.reduce((a, b) => a + b.groups.length, 0));
  assert.equal(await page.locator("#fg-view line.group-edge").count(), groups);
  // In each lane of a group exactly one file supplies the values.
  const suppliers = await page.locator("#fg-view rect.supplier").count();
  const sources = await page.evaluate(async () => (await window.inspector.table.fieldGroups()).buckets.flatMap((b) => b.groups.flatMap((g) => g.sources)).length);
  assert.equal(suppliers, sources);
  await page.screenshot({ path: join(artifacts, "views-de_update-fieldgroups.png"), fullPage: true });

  await view(page, "compaction");
  const plan = cliPlan(table, false);
  assert.deepEqual((await page.locator("#compaction-view g.band.in-task").evaluateAll((gs) => gs.map((g) => g.dataset.file))).sort(), plan.units.flatMap((u) => u.files).sort());
  await page.screenshot({ path: join(artifacts, "views-de_update-compaction.png"), fullPage: true });

  await view(page, "timeline");
  assert.equal(await page.locator("#timeline-view circle.snap").count(), exp.snapshots.length);
  // Clicking snapshot 2 opens it: the field groups show that snapshot's files.
  const snap2 = exp.additional_reads.find((r) => r.options["scan.snapshot-id"] === "2");
  await page.click("#timeline-view circle.snap[data-snapshot='2']");
  await page.waitForFunction(() => document.querySelector("#travel").value === "2" && window.inspector.viewsReady.timeline === true);
  assert.ok(await page.locator("#timeline-view circle.snap.current[data-snapshot='2']").count() === 1);
  await view(page, "fieldgroups");
  const files2 = await page.evaluate(async () => (await window.inspector.table.files({ snapshotId: 2 })).files.length);
  assert.equal(await page.locator("#fg-view g.band").count(), files2);
  if (snap2) assert.ok(files2 <= exp.files.length);
  assert.deepEqual(errors, []);
  await page.close();
});

test("deletion vectors (de_dv_delete): marked on exactly the files the index manifest names", async () => {
  const table = "de_dv_delete";
  const exp = expected(table);
  const dvFiles = exp.index_files.flatMap((i) => i.dv_ranges.map((r) => r.f0)).sort();
  assert.ok(dvFiles.length > 0);
  const { page, errors } = await openTable(table);
  await view(page, "levels");
  assert.equal(await page.locator("#levels-view path.dv-mark").count(), dvFiles.length);
  assert.deepEqual((await page.locator("#levels-view rect.file.has-dv").evaluateAll((rs) => rs.map((r) => r.dataset.file))).sort(), dvFiles);
  await view(page, "fieldgroups");
  assert.deepEqual((await page.locator("#fg-view g.band.has-dv").evaluateAll((gs) => gs.map((g) => g.dataset.file))).sort(), dvFiles);
  // Planned like any data-evolution table (the vectors move to the outputs when a task
  // runs): its three files are fewer than compaction.min.file-num (5).
  await view(page, "compaction");
  assert.match(await page.textContent("#compaction-plan"), /planner data-evolution: 0 task\(s\) — nothing to compact/);
  await page.screenshot({ path: join(artifacts, "views-de_dv_delete-fieldgroups.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("append table (append_fixed_bucket): files by order and size, preview, 10,000-file drawing benchmark", async () => {
  const table = "append_fixed_bucket";
  const exp = expected(table);
  const { page, errors } = await openTable(table);
  await view(page, "levels");
  assert.equal(await page.locator("#levels-mode").inputValue(), "size");
  assert.deepEqual(await drawnPerLevel(page, "#levels-view svg.levels"), perLevel(exp.files));
  await page.screenshot({ path: join(artifacts, "views-append_fixed_bucket-levels.png"), fullPage: true });
  await view(page, "compaction");
  const plan = cliPlan(table, false);
  assert.match(await page.textContent("#compaction-plan"), new RegExp(`${plan.units.length} task\\(s\\)`));
  assert.equal(await page.locator("[data-tab=fieldgroups]").isVisible(), false);
  await view(page, "levels");
  const runs = [];
  for (const n of [1000, 10000, 10000]) runs.push(await page.evaluate(async (k) => await window.inspector.benchmark(k), n));
  for (const r of runs) assert.equal(r.drawn, r.files);
  await page.screenshot({ path: join(artifacts, "views-benchmark-10000.png") });
  writeFileSync(join(artifacts, "timings-views.json"), JSON.stringify(runs, null, 2));
  console.log(`# drawing a levels view: ${runs.map((r) => `${r.files} files in ${r.ms.toFixed(0)} ms (painted after ${r.paintMs.toFixed(0)} ms)`).join(", ")}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("timeline from a picked folder (tags listed): a point per snapshot, tags flagged", async () => {
  const table = "append_tags_rollback";
  const exp = expected(table);
  const page = await env.context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${env.base}/`);
  await page.setInputFiles("#folder", join(corpusDir, table));
  await waitReady(page, table);
  await view(page, "timeline");
  assert.equal(await page.locator("#timeline-view circle.snap").count(), exp.snapshots.length);
  const live = new Set(exp.snapshots.map((s) => s.id));
  const flagged = await page.locator("#timeline-view text.tag-mark").evaluateAll((ts) => ts.map((t) => t.dataset.tag));
  assert.deepEqual(flagged.sort(), Object.entries(exp.tags).filter(([, id]) => live.has(id)).map(([n]) => n).sort());
  await page.screenshot({ path: join(artifacts, "views-append_tags_rollback-timeline.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});
