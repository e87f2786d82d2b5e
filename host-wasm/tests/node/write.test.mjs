// Writing from wasm: tables created in memory, written from CSV, JSON lines and Arrow IPC and
// compacted by the core's jobs, then exported to disk and read by the native CLI, pypaimon
// (and Java Paimon where java-check is installed: `javaRead` of common.mjs) against a model of
// the rows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir, homedir } from "node:os";
import { dirname, join } from "node:path";
import { loadWasm, canon, corpusTables, repo, tableFiles, javaRead } from "./common.mjs";

const { Table } = await loadWasm();
const targetDir = process.env.CARGO_TARGET_DIR || join(repo, "target");
const bin = process.env.PAIMON_KERNEL_BIN || join(targetDir, "debug", "paimon-kernel");
const python = join(process.env.PAIMON_VENV || join(homedir(), ".cache", "paimon-kernel", "venv"), "bin", "python");
const enc = new TextEncoder();

const csv = (header, rows) => enc.encode([header.join(","), ...rows.map((r) => r.join(","))].join("\n") + "\n");
const jsonl = (rows) => enc.encode(rows.map((r) => JSON.stringify(r)).join("\n") + "\n");

/** Deterministic job options: the same bytes on every run. */
let step = 0;
const job = (extra = {}) => ({ commitUser: `wasm-test-${step + 1}`, timeMillis: 1767225600000 + 1000 * ++step, seed: 1000 + step, ...extra });

/** Primary-key model: the last row of each key wins; -D / -U remove it. */
function pkModel(keys) {
  const rows = new Map();
  return {
    apply(batch, firstRow = false) {
      for (const r of batch) {
        const k = JSON.stringify(keys.map((c) => r[c]));
        const { _ROW_KIND: kind = "+I", ...row } = r;
        if (kind === "-D" || kind === "-U") rows.delete(k);
        else if (!(firstRow && rows.has(k))) rows.set(k, row);
      }
    },
    rows: () => [...rows.values()],
  };
}

/** Write `t`'s files under `dir` (a table directory). */
function exportTo(t, dir) {
  rmSync(dir, { recursive: true, force: true });
  for (const [path, bytes] of t.exportFiles()) {
    const p = join(dir, path);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, bytes);
  }
}

function cliRows(dir) {
  const out = execFileSync(bin, ["scan", dir, "--format", "jsonl"], { encoding: "utf8" });
  return out.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

const SHAPES = {
  pk_parts: {
    schema: { fields: [{ name: "k", type: "INT" }, { name: "name", type: "STRING" }, { name: "dt", type: "STRING" }],
      partitionKeys: ["dt"], primaryKeys: ["k", "dt"], options: { bucket: "2", "file.format": "parquet" } },
    keys: ["k", "dt"],
  },
  pk_dv_orc: {
    schema: { fields: [{ name: "k", type: "INT" }, { name: "v", type: "BIGINT" }, { name: "s", type: "STRING" }],
      primaryKeys: ["k"], options: { bucket: "1", "file.format": "orc", "deletion-vectors.enabled": "true" } },
    keys: ["k"], lookup: true,
  },
  first_row: {
    schema: { fields: [{ name: "k", type: "INT" }, { name: "s", type: "STRING" }],
      primaryKeys: ["k"], options: { bucket: "1", "merge-engine": "first-row", "file.format": "avro" } },
    keys: ["k"], firstRow: true, lookup: true,
  },
  append_unaware: {
    schema: { fields: [{ name: "id", type: "INT" }, { name: "s", type: "STRING" }, { name: "d", type: "DECIMAL(10, 2)" }],
      options: { bucket: "-1", "file.format": "parquet" } },
    decimals: ["d"],
  },
};

/** Three writes (CSV, JSON lines, Arrow IPC from the table's own scan) and a full compaction. */
async function build(name) {
  const shape = SHAPES[name];
  const t = await Table.create(JSON.stringify(shape.schema));
  assert.equal(t.writable, true);
  const model = shape.keys ? pkModel(shape.keys) : { all: [], apply(b) { this.all.push(...b); }, rows() { return this.all; } };
  const snapshots = [];
  if (name === "pk_parts") {
    const first = [[1, "a", "d1"], [2, "b", "d1"], [3, "c", "d2"], [1, "a2", "d2"]];
    snapshots.push(await t.write(csv(["k", "name", "dt"], first), job({ name: "first.csv" })));
    model.apply(first.map(([k, n, dt]) => ({ k, name: n, dt })));
    const second = [{ k: 2, name: "b2", dt: "d1" }, { k: 3, name: "c", dt: "d2", _ROW_KIND: "-D" }, { k: 4, name: null, dt: "d2" }];
    snapshots.push(await t.write(jsonl(second), job({ format: "jsonl" })));
    model.apply(second);
  } else if (name === "pk_dv_orc") {
    const first = Array.from({ length: 50 }, (_, i) => [i, i * 10, `s${i}`]);
    snapshots.push(await t.write(csv(["k", "v", "s"], first), job({ name: "first.csv" })));
    model.apply(first.map(([k, v, s]) => ({ k, v, s })));
    const second = [{ k: 5, v: 2 ** 40, s: "big" }, { k: 7, v: 0, s: "x", _ROW_KIND: "-D" }, { k: 60, v: -1, s: null }];
    snapshots.push(await t.write(jsonl(second), job({ format: "jsonl" })));
    model.apply(second);
  } else if (name === "first_row") {
    const first = [[1, "first"], [2, "two"]];
    snapshots.push(await t.write(csv(["k", "s"], first), job({ name: "first.csv" })));
    model.apply(first.map(([k, s]) => ({ k, s })), true);
    const second = [{ k: 1, s: "later" }, { k: 3, s: "three" }];
    snapshots.push(await t.write(jsonl(second), job({ format: "jsonl" })));
    model.apply(second, true);
  } else {
    const first = [[1, "a", "1.50"], [2, "", "-3.25"], [3, "c", ""]];
    snapshots.push(await t.write(csv(["id", "s", "d"], first), job({ name: "first.csv" })));
    model.apply([{ id: 1, s: "a", d: "1.50" }, { id: 2, s: null, d: "-3.25" }, { id: 3, s: "c", d: null }]);
    const second = [{ id: 4, s: "\"quoted\", comma", d: "99999999.99" }];
    snapshots.push(await t.write(jsonl(second), job({ format: "jsonl" })));
    model.apply(second);
  }
  // Arrow IPC: five of the table's own rows written again.
  const again = (await t.scanRows({ limit: 5 })).rows;
  const ipc = await t.scan({ limit: 5 });
  snapshots.push(await t.write(ipc, job({ format: "arrow" })));
  model.apply(again, shape.firstRow);
  let compaction = null, preview = null;
  if (shape.keys) {
    preview = await t.compactionPreview({ full: true });
    compaction = await t.compact(job({ full: true }));
  }
  return { t, model, snapshots, compaction, preview };
}

for (const name of Object.keys(SHAPES)) {
  test(`wasm write: ${name} reads back the model in wasm, the native CLI, pypaimon and Java`, async () => {
    const { t, model, snapshots, compaction, preview } = await build(name);
    const want = canon(model.rows());
    assert.deepEqual(canon((await t.scanRows({})).rows), want, "wasm read");
    for (const s of snapshots) assert.ok(s.commit.snapshotIds.length >= 1, JSON.stringify(s));
    const info = t.info();
    if (compaction) {
      // The compaction runs the plan the preview shows.
      // (Lookup tables compact level 0 at every write: their full compaction may have
      // nothing left to do.)
      if (!SHAPES[name].lookup) assert.ok(preview.tasks.length >= 1, JSON.stringify(preview));
      assert.equal(compaction.tasks, preview.tasks.length, JSON.stringify(compaction));
      assert.equal(compaction.filesIn, preview.tasks.reduce((n, t) => n + t.files.length, 0));
      if (compaction.tasks) {
        assert.equal(info.snapshotId, compaction.commit.snapshotIds.at(-1));
        assert.equal((await t.snapshots()).at(-1).commitKind, "COMPACT");
      } else {
        assert.deepEqual(compaction.commit.snapshotIds, []);
      }
      // After a full compaction every live file of a primary-key table is at the max level.
      const files = await t.files({});
      const max = Math.max(...files.files.map((f) => f.level));
      assert.ok(files.files.every((f) => f.level === max && max > 0), JSON.stringify(files.files.map((f) => f.level)));
    }
    if (SHAPES[name].schema.options["deletion-vectors.enabled"]) {
      // The lookup write compacted level 0 before its commit: APPEND then COMPACT snapshots.
      assert.equal(snapshots[1].commit.snapshotIds.length, 2, JSON.stringify(snapshots[1]));
    }
    const warehouse = mkdtempSync(join(tmpdir(), "wasm-write-"));
    try {
      const dir = join(warehouse, "corpus.db", name);
      exportTo(t, dir);
      // `scan --format jsonl` prints decimals as JSON numbers (exact digits).
      const numeric = (rows) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, SHAPES[name].decimals?.includes(k) && v !== null ? Number(v) : v])));
      assert.deepEqual(canon(cliRows(dir)), canon(numeric(model.rows())), "native CLI read");
      if (existsSync(python)) {
        writeFileSync(join(warehouse, `${name}.expected.json`), JSON.stringify({ table: name, database: "corpus", rows: model.rows() }));
        const out = execFileSync(python, [join(repo, "conformance", "pypaimon_read_back.py"), warehouse], { encoding: "utf8" });
        assert.match(out, /^1 passed, 0 failed$/m, out);
      } else {
        assert.ok(!process.env.CI, `pypaimon venv missing at ${python}`);
      }
      if (existsSync(javaRead)) {
        // Java Paimon 2.0.0 (java-check, installed by scripts/install-deps.sh).
        const out = execFileSync(javaRead, [dir], { encoding: "utf8" });
        const rows = out.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
        assert.deepEqual(canon(rows), want, "Java read");
      } else {
        assert.ok(!process.env.CI, `java-check missing at ${javaRead}`);
      }
    } finally {
      rmSync(warehouse, { recursive: true, force: true });
    }
  });
}

test("wasm write: the same inputs and settings give the same bytes", async () => {
  const run = async () => {
    step = 100;
    const { t } = await build("pk_parts");
    return t.exportFiles();
  };
  const a = await run();
  const b = await run();
  // schema-0 carries the creation time of Date.now(); every other file is deterministic.
  a.delete("schema/schema-0");
  b.delete("schema/schema-0");
  assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
  for (const [k, v] of a) assert.deepEqual(Buffer.from(v), Buffer.from(b.get(k)), k);
});

test("wasm write: a row that does not fit is rejected naming line and column; nothing is written", async () => {
  const t = await Table.create(JSON.stringify(SHAPES.pk_parts.schema));
  await t.write(csv(["k", "name", "dt"], [[1, "a", "d1"]]), job({ name: "ok.csv" }));
  const before = t.exportFiles();
  await assert.rejects(
    t.write(csv(["k", "name", "dt"], [[2, "b", "d1"], ["x", "c", "d1"]]), job({ name: "bad.csv" })),
    (e) => /bad\.csv/.test(e.message) && /line 3/.test(e.message) && /'k'|column k|\bk\b/.test(e.message),
  );
  await assert.rejects(t.write(csv(["k", "nope"], [[1, 2]]), job({ name: "cols.csv" })), /nope/);
  const after = t.exportFiles();
  assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort());
  assert.equal(t.info().snapshotId, 1);
});

test("wasm write: overwrite of a static partition replaces only that partition", async () => {
  const t = await Table.create(JSON.stringify(SHAPES.pk_parts.schema));
  await t.write(csv(["k", "name", "dt"], [[1, "a", "d1"], [2, "b", "d2"]]), job({ name: "a.csv" }));
  const r = await t.write(csv(["k", "name", "dt"], [[9, "z", "d1"]]), job({ name: "b.csv", overwrite: true, partition: { dt: "d1" } }));
  assert.equal((await t.snapshots()).at(-1).commitKind, "OVERWRITE");
  assert.equal(r.rows, 1);
  assert.deepEqual(canon((await t.scanRows({})).rows), canon([{ k: 9, name: "z", dt: "d1" }, { k: 2, name: "b", dt: "d2" }]));
});

test("wasm write: read-only sources reject writes; postpone tables reject compaction", async () => {
  const ro = await Table.openFiles([], "").catch(() => null);
  if (ro) assert.equal(ro.writable, false);
  const t = await Table.openMemory(tableFiles("pk_postpone"));
  assert.equal(t.writable, true);
  await assert.rejects(t.compact(job()), /unsupported/i);
  const zip = await t.exportZip("pk_postpone");
  assert.equal(Buffer.from(zip.subarray(0, 4)).toString("latin1"), "PK\u0003\u0004");
});

test("wasm write: append and data-evolution corpus tables compact from the page as the preview plans, rows unchanged", async () => {
  const checked = [];
  for (const [name, options] of [["append_parquet", { "compaction.min.file-num": "2" }], ["append_avro", { "compaction.min.file-num": "2" }], ["de_update", {}], ["de_merge_into", {}], ["evo_append", { "compaction.min.file-num": "2" }]]) {
    const files = tableFiles(name);
    // Options as `alter --set`: a new schema file with the options added.
    const latest = Math.max(...[...files.keys()].filter((p) => p.startsWith("schema/schema-")).map((p) => Number(p.slice(14))));
    const raw = JSON.parse(new TextDecoder().decode(files.get(`schema/schema-${latest}`)));
    if (Object.keys(options).length) {
      files.set(`schema/schema-${latest + 1}`, enc.encode(JSON.stringify({ ...raw, id: latest + 1, options: { ...raw.options, ...options } })));
    }
    const t = await Table.openMemory(files);
    const before = canon((await t.scanRows({})).rows);
    const full = false;
    const preview = await t.compactionPreview({ full });
    assert.ok(preview.available && preview.tasks.length >= 1, `${name}: ${JSON.stringify(preview)}`);
    const c = await t.compact(job({ full }));
    assert.equal(c.tasks, preview.tasks.length, name);
    assert.equal(c.filesIn, preview.tasks.reduce((n, x) => n + x.files.length, 0), name);
    assert.equal((await t.snapshots()).at(-1).commitKind, "COMPACT", name);
    assert.deepEqual(canon((await t.scanRows({})).rows), before, name);
    const live = new Set((await t.files({})).files.map((f) => f.fileName));
    for (const task of preview.tasks) for (const f of task.files) assert.ok(!live.has(f), `${name}: ${f} still live`);
    checked.push(name);
  }
  assert.equal(checked.length, 5);
});

/** `(table prefix, reason)` of conformance/pending-writes.txt. */
function pendingWrites() {
  return readFileSync(join(repo, "conformance", "pending-writes.txt"), "utf8").split("\n")
    .filter((l) => l.trim() && !l.startsWith("#")).map((l) => l.split("\t").map((x) => x.trim()));
}

test("wasm write: every corpus table written again in wasm (its rows as Arrow IPC) reads back the same", async () => {
  const pending = pendingWrites();
  let passed = 0, skipped = 0;
  const failures = [];
  for (const name of corpusTables()) {
    const files = tableFiles(name);
    const src = await Table.openMemory(files);
    const latest = Math.max(...[...files.keys()].filter((p) => p.startsWith("schema/schema-")).map((p) => Number(p.slice(14))));
    const raw = JSON.parse(new TextDecoder().decode(files.get(`schema/schema-${latest}`)));
    const create = { fields: raw.fields, partitionKeys: raw.partitionKeys, primaryKeys: raw.primaryKeys, options: raw.options, comment: raw.comment };
    const why = pending.find(([p]) => name.startsWith(p));
    try {
      const t = await Table.create(JSON.stringify(create));
      const ipc = await src.scan({});
      await t.write(ipc, job({ format: "arrow" }));
      // ORC CHAR: pypaimon's source holds CHAR values as plain ORC strings, the written-again
      // file as padded ORC char(n); both read right-trimmed, as Java reads them.
      const got = canon((await t.scanRows({})).rows);
      // Postpone-bucket tables: a batch write goes to real buckets (postpone.batch-write-fixed-bucket,
      // default true); with the option false its rows wait in bucket-postpone, invisible.
      const postponed = raw.options.bucket === "-2" && raw.options["postpone.batch-write-fixed-bucket"] === "false";
      const want = postponed ? [] : canon((await src.scanRows({})).rows);
      if (JSON.stringify(got) !== JSON.stringify(want)) failures.push(`${name}: rows differ`);
      else passed++;
    } catch (e) {
      if (why && /unsupported/i.test(e.message)) skipped++;
      else failures.push(`${name}: ${e.message}`);
    }
  }
  console.log(`wasm write-back: ${passed} tables read back the same, ${skipped} pending`);
  assert.deepEqual(failures, []);
  assert.ok(passed >= 35, `${passed} passed`);
});

test("wasm write: managed BLOBs of a primary-key table; managedBlobs() reads the .blobref sidecars", async () => {
  const warehouse = mkdtempSync(join(tmpdir(), "wasm-mb-"));
  try {
    const dir = join(warehouse, "mb");
    const tableUri = `file://${dir}`;
    const t = await Table.create(JSON.stringify({ fields: [{ name: "k", type: "INT" }, { name: "b", type: "BLOB" }],
      primaryKeys: ["k"], options: { bucket: "2" } }));
    const rows = Array.from({ length: 20 }, (_, k) => ({ k, b: Buffer.from(`payload-${k}`).toString("hex") }));
    await assert.rejects(t.write(jsonl(rows), job({ format: "jsonl" })), /URI/);
    await t.write(jsonl(rows), job({ format: "jsonl", tableUri }));
    await t.write(jsonl([{ k: 3, b: "0102" }, { k: 4, b: null }]), job({ format: "jsonl", tableUri }));
    const v = await t.managedBlobs({});
    const files = await t.files({});
    const stored = t.exportFiles();
    // Every data file has a sidecar; every pack referenced is in the table with its size; the
    // files each pack lists reference it, and every file's packs are listed.
    assert.equal(v.files.length, files.files.length, JSON.stringify(v));
    assert.ok(v.packs.length >= 2, JSON.stringify(v.packs));
    for (const p of v.packs) {
      assert.equal(p.sizeBytes, stored.get(p.path).length, p.path);
      assert.ok(p.pack.endsWith(".managed.blob") && p.storageRoot.startsWith(`file:${dir}`), JSON.stringify(p));
      for (const f of p.referencedBy) assert.ok(v.files.find((x) => x.dataFile === f).packs.includes(p.pack));
    }
    for (const f of v.files) for (const pack of f.packs) assert.ok(v.packs.some((p) => p.pack === pack && p.referencedBy.includes(f.dataFile)));
    // The same counts from the CLI's collect-packs (dry run) over the exported table.
    exportTo(t, dir);
    const report = JSON.parse(execFileSync(bin, ["--json", "collect-packs", dir, "--older-than", "0 s", "--dry-run"], { encoding: "utf8" }));
    assert.equal(report.referenced, v.packs.length, JSON.stringify(report));
    const want = rows.map((r) => ({ ...r })).filter((r) => r.k !== 3 && r.k !== 4).concat([{ k: 3, b: "0102" }, { k: 4, b: null }]);
    const got = cliRows(dir);
    assert.deepEqual(canon(got), canon(want));
  } finally {
    rmSync(warehouse, { recursive: true, force: true });
  }
});

test("wasm write: a BLOB given as a file reference is copied in by a streamed write (parts of 8 MiB)", async () => {
  // A source object inside the in-memory table (the browser host reads no absolute URI).
  const t0 = await Table.create(JSON.stringify({ fields: [{ name: "id", type: "INT" }, { name: "b", type: "BLOB" }],
    options: { "row-tracking.enabled": "true", "data-evolution.enabled": "true" } }));
  const files = t0.exportFiles();
  const source = Buffer.alloc((9 << 20) + 123);
  for (let i = 0; i < source.length; i++) source[i] = (i * 31 + (i >> 12)) & 0xff;
  files.set("ext/source.bin", new Uint8Array(source));
  const t = await Table.openMemory(files);
  // Java's BlobDescriptor v2: 02 | "CSEDBOLB" | uri length i32 LE | uri | offset i64 LE | length i64 LE.
  const descriptor = (uri, offset, length) => {
    const u = Buffer.from(uri);
    const b = Buffer.alloc(1 + 8 + 4 + u.length + 16);
    b[0] = 2;
    b.writeBigInt64LE(0x424C4F4244455343n, 1);
    b.writeInt32LE(u.length, 9);
    u.copy(b, 13);
    b.writeBigInt64LE(BigInt(offset), 13 + u.length);
    b.writeBigInt64LE(BigInt(length), 21 + u.length);
    return b.toString("hex");
  };
  await t.write(jsonl([{ id: 1, b: descriptor("ext/source.bin", 0, -1) }, { id: 2, b: descriptor("ext/source.bin", 5, 10) }]),
    job({ format: "jsonl" }));
  await assert.rejects(t.write(jsonl([{ id: 3, b: descriptor("ext/missing.bin", 0, -1) }]), job({ format: "jsonl" })),
    /does not exist/);
  const dir = mkdtempSync(join(tmpdir(), "wasm-ref-"));
  try {
    exportTo(t, dir);
    const blob = (rowId) => execFileSync(bin, ["blob", dir, "--row-id", String(rowId), "--column", "b"], { maxBuffer: 64 << 20 });
    assert.ok(Buffer.compare(blob(0), source) === 0, "the whole source");
    assert.deepEqual(blob(1), source.subarray(5, 15));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
