// The anatomy views of the wasm API (levels, compaction preview, field groups, timeline,
// managed blobs) over corpus tables, checked against the tables' metadata (files(), the
// expected files written by pypaimon) and against `paimon-kernel plan-compaction`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { loadWasm, tableFiles, expected, corpusTables, corpusDir, serveDir, repo } from "./common.mjs";

const { Table } = await loadWasm();
const targetDir = process.env.CARGO_TARGET_DIR || join(repo, "target");
const bin = process.env.PAIMON_KERNEL_BIN || join(targetDir, "debug", "paimon-kernel");

const count = (m, k) => m.set(k, (m.get(k) || 0) + 1);
const sorted = (m) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

test("levels: files per (partition, bucket, level) equal files() and the expected file, for every table", async () => {
  for (const name of corpusTables()) {
    const t = await Table.openMemory(tableFiles(name));
    const v = await t.levels();
    const files = await t.files();
    const got = new Map(), want = new Map(), fromExpected = new Map();
    for (const p of v.partitions) {
      for (const b of p.buckets) {
        let n = 0;
        for (const r of b.runs) {
          for (const f of r.files) { count(got, `${p.partition}|${b.bucket}|${f.level}`); n++; }
          // A run is one level; level-0 runs of primary-key tables hold one file each.
          if (v.tableKind === "primary-key" && r.level === 0) assert.equal(r.files.length, 1, name);
        }
        assert.equal(b.fileCount, n, name);
        assert.deepEqual(Object.values(b.filesPerLevel).reduce((a, x) => a + x, 0), n, name);
        if (v.tableKind === "primary-key") {
          const level0 = b.filesPerLevel["0"] || 0;
          const higher = Object.keys(b.filesPerLevel).filter((l) => l !== "0").length;
          assert.equal(b.sortedRunCount, level0 + higher, `${name} bucket ${b.bucket}`);
          for (const f of b.runs.flatMap((r) => r.files)) {
            assert.ok(f.x0 >= 0 && f.x0 <= f.x1 && f.x1 <= 1, `${name} ${f.fileName} ${f.x0} ${f.x1}`);
            assert.ok(f.minKey !== null, name);
          }
        }
      }
    }
    for (const f of files.files) count(want, `${f.partition}|${f.bucket}|${f.level}`);
    for (const f of expected(name).files) count(fromExpected, `${f.bucket}|${f.level}`);
    assert.deepEqual(sorted(got), sorted(want), name);
    const noPartition = new Map();
    for (const [k, n] of got) { const [, b, l] = k.split("|"); noPartition.set(`${b}|${l}`, (noPartition.get(`${b}|${l}`) || 0) + n); }
    assert.deepEqual(sorted(noPartition), sorted(fromExpected), name);
    assert.equal(v.snapshotId, expected(name).snapshot_id, name);
    // Deletion vectors marked on exactly the files the index manifest names.
    const dvFiles = new Set(files.indexFiles.flatMap((i) => (i.deletionVectors || []).map((d) => d.dataFile)));
    const marked = new Set(v.partitions.flatMap((p) => p.buckets.flatMap((b) => b.runs.flatMap((r) => r.files.filter((f) => f.deletionVector).map((f) => f.fileName)))));
    const live = new Set(files.files.map((f) => f.fileName));
    assert.deepEqual([...marked].sort(), [...dvFiles].filter((f) => live.has(f)).sort(), name);
  }
});

test("levels: one partition", async () => {
  const t = await Table.openMemory(tableFiles("pk_dedup_partitioned"));
  const all = await t.levels();
  assert.ok(all.allPartitions.length > 1);
  const one = await t.levels({ partition: all.allPartitions[1] });
  assert.equal(one.partitions.length, 1);
  assert.deepEqual(one.partitions[0], all.partitions[1]);
  await assert.rejects(t.levels({ partition: "{nope}" }), /no partition \{nope\}/);
  await assert.rejects(t.levels({ partiton: "x" }), /unknown field `partiton`/);
});

function cliPlan(name, full) {
  try {
    const out = execFileSync(bin, ["plan-compaction", ...(full ? ["--full"] : []), join(corpusDir, name)], { stdio: ["ignore", "pipe", "pipe"] });
    return { plan: JSON.parse(out) };
  } catch (e) {
    return { error: String(e.stderr) };
  }
}

test("compactionPreview: the same tasks as `paimon-kernel plan-compaction` (with and without --full), for every table", async (t) => {
  if (!existsSync(bin)) {
    t.skip(`${bin} missing: build paimon-native to compare with plan-compaction`);
    return;
  }
  let tasks = 0, unavailable = 0;
  for (const name of corpusTables()) {
    const table = await Table.openMemory(tableFiles(name));
    for (const full of [false, true]) {
      const p = await table.compactionPreview({ full });
      const cli = cliPlan(name, full);
      if (cli.error) {
        assert.equal(p.available, false, `${name} full=${full}: CLI says ${cli.error}`);
        const reason = /unsupported: (.*)/.exec(cli.error)[1].trim();
        assert.ok(p.unavailableReason.includes(reason), `${name}: ${p.unavailableReason} vs ${reason}`);
        unavailable++;
        continue;
      }
      assert.equal(p.available, true, `${name}: ${p.unavailableReason}`);
      assert.equal(p.snapshotId, cli.plan.snapshot, name);
      assert.deepEqual(
        p.tasks.map((u) => ({ partition: u.partitionValues, bucket: u.bucket, output_level: u.outputLevel, upgrade: u.upgrade, files: u.files })),
        cli.plan.units, `${name} full=${full}`);
      tasks += p.tasks.length;
    }
  }
  // Every corpus table is planned now; unavailable previews are covered by the core's
  // inspector tests (a postpone-bucket table whose record-level expiry has no time field).
  assert.ok(tasks >= 10, `${tasks} tasks compared`);
  console.log(`# compactionPreview: ${tasks} tasks equal to plan-compaction's, ${unavailable} unavailable previews with the CLI's reason`);
});

test("compactionPreview: task files are live files of their bucket", async () => {
  const t = await Table.openMemory(tableFiles("pk_dedup_partitioned"));
  const p = await t.compactionPreview({ full: true });
  const files = await t.files();
  const where = new Map(files.files.map((f) => [f.fileName, `${f.partition}|${f.bucket}`]));
  assert.ok(p.tasks.length > 0);
  for (const task of p.tasks) {
    for (const f of task.files) assert.equal(where.get(f), `${task.partition}|${task.bucket}`);
    assert.equal(task.inputBytes, task.files.reduce((a, f) => a + files.files.find((x) => x.fileName === f).fileSize, 0));
  }
});

test("fieldGroups: one band per file, groups by row-id range, for the row-tracking tables", async () => {
  const names = corpusTables().filter((n) => {
    const e = expected(n);
    return e.files.length > 0 && e.files.every((f) => f.first_row_id !== null && f.first_row_id !== undefined);
  });
  assert.ok(names.length >= 5, names.join(" "));
  for (const name of names) {
    const t = await Table.openMemory(tableFiles(name));
    const v = await t.fieldGroups();
    const files = await t.files();
    const bands = v.buckets.flatMap((b) => b.files);
    assert.equal(bands.length, files.files.length, name);
    assert.deepEqual(bands.map((f) => f.fileName).sort(), files.files.map((f) => f.fileName).sort(), name);
    for (const b of v.buckets) {
      // Groups are disjoint, ordered, and each file lies inside its group.
      for (let i = 1; i < b.groups.length; i++) assert.ok(b.groups[i].firstRowId > b.groups[i - 1].lastRowId, name);
      for (const f of b.files) {
        const g = b.groups[f.group];
        assert.ok(f.firstRowId >= g.firstRowId && f.lastRowId <= g.lastRowId, `${name} ${f.fileName}`);
        const meta = files.files.find((x) => x.fileName === f.fileName);
        assert.equal(f.firstRowId, meta.firstRowId);
        assert.equal(f.lastRowId, meta.lastRowId);
        assert.equal(f.blob, meta.kind === "blob");
      }
      // The supplier of each column holds it, and normal files come newest first.
      for (const g of b.groups) {
        for (const s of g.sources) {
          const first = b.files.find((f) => f.fileName === s.files[0]);
          assert.ok(first.columns.includes(s.column), `${name} ${s.column}`);
          const normal = s.files.map((n) => b.files.find((f) => f.fileName === n)).filter((f) => !f.blob);
          for (let i = 1; i < normal.length; i++) assert.ok(normal[i - 1].maxSequenceNumber >= normal[i].maxSequenceNumber, name);
        }
      }
    }
    assert.equal(v.columns.length, (await t.schema()).fields.length, name);
  }
  // A primary-key table has no row ids.
  const pk = await Table.openMemory(tableFiles("pk_dedup"));
  await assert.rejects(pk.fieldGroups(), /first_row_id/);
});

test("timeline: one point per snapshot, live files of the latest equal files(), tags marked", async () => {
  for (const name of corpusTables()) {
    const exp = expected(name);
    const t = await Table.openMemory(tableFiles(name));
    const v = await t.timeline();
    assert.deepEqual(v.points.map((p) => [p.snapshotId, p.commitKind, p.totalRecordCount, p.deltaRecordCount]),
      exp.snapshots.map((s) => [s.id, s.commitKind, s.totalRecordCount, s.deltaRecordCount]), name);
    assert.equal(v.fileCounts, true);
    assert.equal(v.tagsListed, true);
    if (v.points.length) assert.equal(v.points.at(-1).liveFiles, exp.files.length, name);
    const tags = Object.fromEntries([...v.points.flatMap((p) => p.tags.map((g) => [g, p.snapshotId])), ...v.detachedTags]);
    assert.deepEqual(tags, exp.tags, name);
    // Each point's live files: the previous point's plus added minus deleted.
    for (let i = 1; i < v.points.length; i++) {
      const [a, b] = [v.points[i - 1], v.points[i]];
      if (b.snapshotId === a.snapshotId + 1 && b.commitKind !== "OVERWRITE") assert.equal(b.liveFiles, a.liveFiles + b.addedFiles - b.deletedFiles, `${name} ${b.snapshotId}`);
    }
  }
  const t = await Table.openMemory(tableFiles("pk_dedup"));
  assert.equal((await t.timeline({ fileCounts: false })).points[0].liveFiles, null);
});

test("managedBlobs: no managed-blob packs in the corpus", async () => {
  for (const name of ["blob_single", "pk_dedup"]) {
    const t = await Table.openMemory(tableFiles(name));
    const v = await t.managedBlobs();
    assert.deepEqual(v.files, []);
    assert.equal(v.note, "no managed-blob packs");
  }
});

test("views over HTTP: no tag listing, the same levels", async () => {
  const server = await serveDir(corpusDir);
  try {
    const t = await Table.openUrl(`${server.url}/pk_dedup`);
    const v = await t.timeline();
    assert.equal(v.tagsListed, false);
    assert.equal(v.points.length, expected("pk_dedup").snapshots.length);
    const m = await Table.openMemory(tableFiles("pk_dedup"));
    assert.deepEqual(await t.levels(), await m.levels());
    assert.deepEqual(await t.levels({ snapshotId: 2 }), await m.levels({ snapshotId: 2 }));
  } finally {
    await server.close();
  }
});

// The page's drawing functions (www/views.js) are pure: view model in, SVG markup out.
const www = await import(join(repo, "host-wasm", "www", "views.js"));

test("page: levels SVG draws one rectangle per file, highlights task files, marks deletion vectors", async () => {
  const t = await Table.openMemory(tableFiles("de_dv_delete"));
  const v = await t.levels();
  const b = v.partitions[0].buckets[0];
  const svg = www.levelsSvg(b, { mode: "size" });
  assert.equal((svg.match(/<rect class="file/g) || []).length, b.fileCount);
  const dv = b.runs.flatMap((r) => r.files).filter((f) => f.deletionVector).length;
  assert.ok(dv > 0);
  assert.equal((svg.match(/class="dv-mark"/g) || []).length, dv);
  const first = b.runs[0].files[0].fileName;
  const marked = www.levelsSvg(b, { highlight: new Map([[first, 5]]) });
  assert.equal((marked.match(/class="file in-task/g) || []).length, 1);
  assert.equal((marked.match(/class="file not-in-task/g) || []).length, b.fileCount - 1);
  // Hover text: the file's metadata, made from the drawn rectangle's reference.
  const f0 = b.runs[0].files[0];
  const ref = /data-ref="([^"]+)"/.exec(marked)[1];
  assert.ok(www.tipFor(ref).startsWith(`${f0.fileName}\nlevel ${f0.level}, ${www.fmtBytes(f0.fileSize)}, ${f0.rowCount} rows\nsequence ${f0.minSequenceNumber}..${f0.maxSequenceNumber}`));
  assert.match(www.tipFor(ref), /compaction: → level 5$/);
  assert.equal(www.tipFor("999999:0"), null);
  // Key positions come from the core: x = LEFT + x0 × width.
  const pk = await (await Table.openMemory(tableFiles("pk_dedup"))).levels();
  const f = pk.partitions[0].buckets[0].runs[0].files[0];
  assert.ok(www.levelsSvg(pk.partitions[0].buckets[0]).includes(`x="${(64 + f.x0 * 1000).toFixed(1)}"`));
});

test("page: field-group bands, timeline points and tags", async () => {
  const t = await Table.openMemory(tableFiles("blob_update"));
  const v = await t.fieldGroups();
  const html = www.fieldGroupsHtml(v);
  assert.equal((html.match(/<g class="band/g) || []).length, v.buckets[0].files.length);
  const sources = v.buckets.flatMap((b) => b.groups.flatMap((g) => g.sources)).length;
  assert.equal((html.match(/class="supplier"/g) || []).length, sources);
  assert.equal((html.match(/class="band blob/g) || []).length, v.buckets[0].files.filter((f) => f.blob).length);
  const tl = await (await Table.openMemory(tableFiles("append_tags_rollback"))).timeline();
  const svg = www.timelineSvg(tl, 4);
  assert.equal((svg.match(/<circle class="snap/g) || []).length, tl.points.length);
  assert.equal((svg.match(/class="snap current"/g) || []).length, 1);
  assert.equal((svg.match(/class="tag-mark"/g) || []).length, tl.points.reduce((a, p) => a + p.tags.length, 0));
});

test("page: blob sniffing", () => {
  const b = (...x) => new Uint8Array(x);
  const ascii = (s, pad = 0) => new Uint8Array([...s].map((c) => c.charCodeAt(0)).concat(Array(pad).fill(0)));
  const riff = (kind) => { const a = ascii("RIFF\0\0\0\0" + kind, 4); return a; };
  assert.equal(www.sniff(b(0x89, 0x50, 0x4e, 0x47, 13, 10)), "image/png");
  assert.equal(www.sniff(b(0xff, 0xd8, 0xff, 0xe0)), "image/jpeg");
  assert.equal(www.sniff(ascii("GIF89a")), "image/gif");
  assert.equal(www.sniff(riff("WEBP")), "image/webp");
  assert.equal(www.sniff(riff("WAVE")), "audio/wav");
  assert.equal(www.sniff(ascii("ID3\x04", 8)), "audio/mpeg");
  assert.equal(www.sniff(b(0xff, 0xfb, 0x90, 0x64, 0)), "audio/mpeg");
  assert.equal(www.sniff(ascii("OggS", 8)), "audio/ogg");
  assert.equal(www.sniff(ascii("fLaC", 8)), "audio/flac");
  assert.equal(www.sniff(new TextEncoder().encode("héllo\nwörld\t!")), "text/plain");
  assert.equal(www.sniff(b(0xc3, 0x28, 0x41)), null, "invalid UTF-8");
  assert.equal(www.sniff(b(0x41, 0x00, 0x42)), null, "control bytes");
});

test("page: drawing a synthesized 10,000-file levels view (string building only)", () => {
  const v = www.syntheticLevels(10000);
  const t0 = performance.now();
  const html = www.levelsHtml(v, "{}", { mode: "key" });
  const ms = performance.now() - t0;
  assert.equal((html.match(/<rect class="file/g) || []).length, 10000);
  console.log(`# levelsHtml of 10,000 files: ${ms.toFixed(0)} ms (markup only; the browser test times the DOM too)`);
});
