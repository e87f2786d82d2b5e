// Rows through the wasm API (in-memory source) against the expected files: the latest read
// and every additional read (time travel, tags, projections, _ROW_ID) of every corpus table.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadWasm, tableFiles, expected, corpusTables, canon, tablesDir } from "./common.mjs";

const { Table } = await loadWasm();

test("every corpus table: scanRows equals the expected rows, every additional read too", async () => {
  const results = [];
  for (const name of corpusTables()) {
    const exp = expected(name);
    const t = await Table.openMemory(tableFiles(name));
    const reads = [{ label: "latest", options: {}, projection: null, rows: exp.rows, snapshot_id: exp.snapshot_id }, ...exp.additional_reads];
    for (const r of reads) {
      const q = { options: r.options };
      if (r.projection) q.columns = r.projection;
      const got = await t.scanRows(q).catch((e) => { throw new Error(`${name} ${r.label}: ${e.message}`); });
      assert.equal(got.snapshotId, r.snapshot_id, `${name} ${r.label}`);
      assert.equal(got.rowCount, r.rows.length, `${name} ${r.label}`);
      assert.deepEqual(canon(got.rows), canon(r.rows), `${name} ${r.label}`);
      results.push(`${name}:${r.label}`);
    }
  }
  assert.ok(results.length > 100, `${results.length} reads`);
});

test("scan returns an Arrow IPC stream; limit, columns and row ids apply", async () => {
  const t = await Table.openMemory(tableFiles("pk_dedup"));
  const ipc = await t.scan({ columns: ["k", "name"], limit: 5 });
  assert.ok(ipc instanceof Uint8Array);
  // Stream format: a schema message first (continuation marker 0xFFFFFFFF), end marker last.
  assert.deepEqual([...ipc.subarray(0, 4)], [0xff, 0xff, 0xff, 0xff]);
  assert.deepEqual([...ipc.subarray(ipc.length - 8)], [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
  const text = new TextDecoder("latin1").decode(ipc);
  assert.ok(text.includes("name") && !text.includes("cnt"), "projected schema");
  const rows = await t.scanRows({ columns: ["k", "name"], limit: 5 });
  assert.equal(rows.rowCount, 5);
  assert.deepEqual(rows.columns, [{ name: "k", type: "BIGINT NOT NULL" }, { name: "name", type: "STRING" }]);
  const all = expected("pk_dedup").rows;
  const want = new Map(all.map((r) => [r.k, r.name]));
  for (const r of rows.rows) assert.equal(r.name, want.get(r.k));
  const filtered = await t.scanRows({ filter: "k > 10" });
  assert.deepEqual(canon(filtered.rows), canon(all.filter((r) => r.k > 10)));
  await assert.rejects(t.scanRows({ rowIds: "0-3" }), /row-tracking/);
  await assert.rejects(t.scanRows({ columns: ["nope"] }), /unknown column 'nope'/);

  const b = await Table.openMemory(tableFiles("blob_single"));
  const withIds = expected("blob_single").additional_reads.find((r) => r.label === "latest-with-row-id").rows;
  const sel = await b.scanRows({ columns: ["_ROW_ID", "id", "data"], rowIds: "0-2,7" });
  const picked = withIds.filter((r) => [0, 1, 2, 7].includes(r._ROW_ID));
  assert.ok(picked.length >= 2);
  assert.deepEqual(canon(sel.rows), canon(picked.map((r) => ({ _ROW_ID: r._ROW_ID, id: r.id, data: r.data }))));
});

test("BIGINT beyond 2^53 arrives as an exact decimal string, safe values as numbers", async () => {
  for (const table of ["all_types_parquet", "all_types_orc", "all_types_avro"]) {
    // The expected file's own text, not JSON.parse (which would round the same way).
    const text = readFileSync(join(tablesDir, `${table}.expected.json`), "utf8");
    const literals = [...text.matchAll(/"t_bigint":\s*(-?\d+)/g)].map((m) => m[1]);
    assert.ok(literals.includes("9223372036854775807") && literals.includes("-9223372036854775808"), table);
    const t = await Table.openMemory(tableFiles(table));
    const got = await t.scanRows({ columns: ["id", "t_bigint"] });
    const want = expected(table).rows;
    assert.equal(got.rowCount, want.length);
    let unsafe = 0;
    for (const w of want) {
      const g = got.rows.find((r) => r.id === w.id);
      if (typeof w.t_bigint === "string") {
        unsafe++;
        assert.equal(typeof g.t_bigint, "string", `${table} id ${w.id}`);
        assert.ok(!Number.isSafeInteger(Number(g.t_bigint)));
        assert.equal(BigInt(g.t_bigint), BigInt(w.t_bigint));
        assert.ok(literals.includes(g.t_bigint), `${table}: ${g.t_bigint} is a literal of the expected file`);
      } else {
        assert.equal(g.t_bigint, w.t_bigint, `${table} id ${w.id}`);
        assert.ok(w.t_bigint === null || Number.isSafeInteger(g.t_bigint));
      }
    }
    assert.ok(unsafe >= 2, `${table}: ${unsafe} values beyond 2^53`);
    // Plain JSON: survives a JSON round trip unchanged.
    assert.deepEqual(JSON.parse(JSON.stringify(got.rows)), got.rows);
  }
  // Snapshot metadata follows the same rule (commitIdentifier is Long.MAX_VALUE in pypaimon's
  // batch commits).
  const t = await Table.openMemory(tableFiles("append_parquet"));
  const snaps = await t.snapshots();
  assert.equal(snaps[0].commitIdentifier, "9223372036854775807");
});
