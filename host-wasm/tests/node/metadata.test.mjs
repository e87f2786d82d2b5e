// The wasm API's metadata calls over corpus tables (in-memory and HTTP sources), checked
// against the expected files written by pypaimon.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadWasm, tableFiles, expected, corpusTables, corpusDir, serveDir } from "./common.mjs";

const { Table } = await loadWasm();

test("every corpus table: snapshots, schema, files and tags match the expected file", async () => {
  const tables = corpusTables();
  assert.ok(tables.length >= 40, `corpus has ${tables.length} tables`);
  for (const name of tables) {
    const exp = expected(name);
    const t = await Table.openMemory(tableFiles(name));
    const info = t.info();
    assert.equal(info.snapshotId, exp.snapshot_id, name);
    assert.equal(info.schemaId, exp.schema_id, name);
    assert.equal(info.source, "memory");
    assert.equal(info.canList, true);

    const snaps = await t.snapshots();
    assert.deepEqual(
      snaps.map((s) => [s.id, s.schemaId, s.commitKind, s.totalRecordCount, s.deltaRecordCount]),
      exp.snapshots.map((s) => [s.id, s.schemaId, s.commitKind, s.totalRecordCount, s.deltaRecordCount]),
      name,
    );

    const schema = await t.schema();
    // Types as stored (nested types are JSON objects there).
    assert.deepEqual(JSON.parse(schema.raw).fields.map((f) => [f.id, f.name, f.type]), exp.fields.map((f) => [f.id, f.name, f.type]), name);
    if (name === "pk_dedup") {
      assert.deepEqual(schema.fields.map((f) => f.type), ["BIGINT NOT NULL", "STRING", "DOUBLE", "INT", "STRING"]);
    }
    assert.deepEqual(schema.primaryKeys, exp.primary_keys, name);
    assert.deepEqual(schema.partitionKeys, exp.partition_keys, name);

    const files = await t.files();
    const key = (n, b, l, c) => `${n}|${b}|${l}|${c}`;
    assert.deepEqual(
      files.files.map((f) => key(f.fileName, f.bucket, f.level, f.rowCount)).sort(),
      exp.files.map((f) => key(f.file_path.split("/").pop(), f.bucket, f.level, f.record_count)).sort(),
      name,
    );
    assert.equal(files.indexFiles.length, exp.index_files.length, name);

    const tags = await t.tags();
    assert.deepEqual(Object.fromEntries(tags.map((x) => [x.name, x.snapshotId])), exp.tags, name);

    // Time travel: the schema of every earlier snapshot read.
    for (const r of exp.additional_reads) {
      if (!r.options["scan.snapshot-id"] && !r.options["scan.tag-name"]) continue;
      const s = await t.schema({ options: r.options });
      assert.equal(s.id, r.schema_id, `${name} ${r.label}`);
    }
  }
});

test("blob bytes by row id match the expected rows", async () => {
  const { createHash } = await import("node:crypto");
  for (const name of ["blob_single", "blob_update", "blob_multi"]) {
    const exp = expected(name);
    const t = await Table.openMemory(tableFiles(name));
    const read = exp.additional_reads.find((r) => r.label === "latest-with-row-id");
    const blobCols = exp.fields.filter((f) => f.type.startsWith("BLOB")).map((f) => f.name);
    assert.ok(blobCols.length > 0, name);
    let checked = 0;
    for (const row of read.rows) {
      for (const col of blobCols) {
        const bytes = await t.blob({ rowId: row._ROW_ID, column: col });
        const want = row[col];
        if (want === null) { assert.equal(bytes, null, `${name} ${row._ROW_ID} ${col}`); continue; }
        assert.ok(bytes instanceof Uint8Array);
        assert.equal(bytes.length, want.len, `${name} ${row._ROW_ID} ${col}`);
        assert.equal(createHash("sha256").update(bytes).digest("hex"), want.sha256);
        checked++;
      }
    }
    assert.ok(checked >= 4, `${name}: ${checked}`);
  }
});

test("errors are JS Errors with the core's message", async () => {
  await assert.rejects(Table.openMemory(new Map()), (e) => e instanceof Error && /no Paimon table/.test(e.message));
  await assert.rejects(Table.openMemory(42), (e) => e instanceof Error && /Map or an object/.test(e.message));
  await assert.rejects(Table.openMemory({ "schema/schema-0": "text" }), /not a Uint8Array/);
  const files = tableFiles("pk_dedup");
  files.set("snapshot/snapshot-4", new TextEncoder().encode("{\"id\": 4"));
  const t = await Table.openMemory(files).catch((e) => e);
  assert.ok(t instanceof Error && /snapshot-4/.test(t.message), String(t));
  const ok = await Table.openMemory(tableFiles("pk_dedup"));
  await assert.rejects(ok.schema({ snapshotId: 99 }), /out of the available snapshot id range \[1, 4\]/);
  await assert.rejects(ok.schema({ snapshotID: 1 }), /unknown field `snapshotID`/);
  await assert.rejects(ok.tags(["nope"]), /tag 'nope' doesn't exist/);
  await assert.rejects(ok.blob({ rowId: 0, column: "name" }), /needs|not BLOB/);
});

test("HTTP source: Range reads, no listing, concurrent rounds", async () => {
  const server = await serveDir(corpusDir);
  try {
    const progress = [];
    const t = await Table.openUrl(`${server.url}/pk_dedup/`, (p) => progress.push(p));
    const exp = expected("pk_dedup");
    assert.equal(t.info().snapshotId, exp.snapshot_id);
    assert.equal(t.info().canList, false);
    assert.equal((await t.snapshots()).length, exp.snapshots.length);
    const files = await t.files();
    assert.equal(files.files.length, exp.files.length);
    assert.ok(progress.length > 0 && progress.every((p) => p.source === "http"));
    assert.ok(t.stats().bytes > 0);
    // Listing tags needs a listable source; a named tag still works elsewhere.
    await assert.rejects(t.tags(), /listing tags needs a source that can list/);
    assert.ok(server.log.some((l) => l.startsWith("GET /pk_dedup/snapshot/LATEST")), server.log.join("\n"));

    const b = await Table.openUrl(`${server.url}/blob_single`);
    const big = expected("blob_single").rows.find((r) => r.data && r.data.len === 262144);
    const row = expected("blob_single").additional_reads.find((r) => r.label === "latest-with-row-id")
      .rows.find((r) => r.id === big.id);
    const before = server.log.length;
    const bytes = await b.blob({ rowId: row._ROW_ID, column: "data" });
    assert.equal(bytes.length, 262144);
    const ranged = server.log.slice(before).filter((l) => l.includes(".blob"));
    assert.ok(ranged.length > 0 && ranged.every((l) => / bytes=\d+-\d+$/.test(l)), ranged.join("\n"));

    await assert.rejects(Table.openUrl(`${server.url}/no_such_table`), /no Paimon table/);
  } finally {
    await server.close();
  }
});
