// Paimon table inspector: every byte is read in the browser by the wasm core (no server code).
// Sources: a URL (fetch + Range), a picked folder, or the bundled demo table. `?url=...` opens a
// table on load. window.inspector exposes state and timings for tests.
import init, { Table } from "./pkg/paimon_wasm.js";
import { levelsHtml, fieldGroupsHtml, timelineSvg, taskFiles, levelColor, syntheticLevels, sniff, tipFor } from "./views.js";

const $ = (s) => document.querySelector(s);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
};
const fmtBytes = (n) => n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`;
const fmtTime = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace("Z", "") : "");
const state = { table: null, snapshots: [], tags: [], page: 0, timings: {}, ready: false, tab: "snapshots", views: {}, viewsReady: {} };
window.inspector = state;

function status(text, error = false) {
  const s = $("#status");
  s.textContent = text;
  s.classList.toggle("error", error);
}
function progress(p) {
  status(`${p.op}: round ${p.round}, ${p.requests} request(s), ${fmtBytes(p.bytes)} — total ${p.totalRequests} requests, ${fmtBytes(p.totalBytes)}`);
}
function fail(e) {
  console.error(e);
  status(`Error: ${e && e.message ? e.message : e}`, true);
}

const wasmReady = init();

async function open(opener, label) {
  try {
    await wasmReady;
    const t0 = performance.now();
    status(`opening ${label}…`);
    state.ready = false;
    state.table = await opener();
    state.label = label;
    state.timings.open = performance.now() - t0;
    await showTable(label);
    state.timings.total = performance.now() - t0;
    state.ready = true;
    status(`${label}: opened in ${state.timings.open.toFixed(0)} ms, ${state.table.stats().requests} requests, ${fmtBytes(state.table.stats().bytes)}`);
  } catch (e) {
    fail(e);
  }
}

function travelQuery() {
  const v = $("#travel").value;
  if (!v) return {};
  if (v.startsWith("tag:")) return { tag: v.slice(4) };
  return { snapshotId: Number(v) };
}

async function showTable(label) {
  const t = state.table;
  const info = t.info();
  $("#main").hidden = false;
  $("#summary").replaceChildren(
    el("div", {}, el("b", {}, label), ` — ${info.tableKind} table, latest snapshot `, el("b", { id: "latest" }, info.snapshotId ?? "none"),
      `, ${info.totalRecordCount ?? 0} records, schema ${info.schemaId}`,
      info.primaryKeys.length ? `, primary key (${info.primaryKeys.join(", ")})` : "",
      info.partitionKeys.length ? `, partitioned by (${info.partitionKeys.join(", ")})` : "",
      `, source: ${info.source}`),
  );
  $("[data-tab=fieldgroups]").hidden = !(info.tableKind === "data-evolution" || info.options["row-tracking.enabled"] === "true");
  $("[data-tab=write]").hidden = !t.writable;
  $("#compact-now").hidden = !t.writable;
  $("#download-zip").hidden = !t.writable;
  $("#levels-mode").dataset.auto = "1";
  if ($(`[data-tab=${state.tab}]`)?.hidden) switchTab("snapshots");
  state.snapshots = await t.snapshots();
  state.tags = info.canList ? await t.tags().catch(() => []) : [];
  const tagsBy = new Map();
  for (const g of state.tags) tagsBy.set(g.snapshotId, [...(tagsBy.get(g.snapshotId) || []), g.name]);
  $("#snapshots tbody").replaceChildren(...state.snapshots.map((s) => el("tr", {},
    el("td", { class: "num" }, s.id), el("td", {}, s.commitKind), el("td", {}, fmtTime(s.timeMillis)),
    el("td", { class: "num" }, s.totalRecordCount), el("td", { class: "num" }, s.deltaRecordCount),
    el("td", { class: "num" }, s.schemaId), el("td", { class: "num" }, s.nextRowId ?? ""),
    el("td", {}, (tagsBy.get(s.id) || []).map((n) => el("span", { class: "tag" }, n))))));
  const travel = $("#travel");
  travel.replaceChildren(el("option", { value: "" }, `latest (${info.snapshotId ?? "none"})`),
    ...[...state.snapshots].reverse().map((s) => el("option", { value: String(s.id) }, `#${s.id} ${s.commitKind} ${fmtTime(s.timeMillis)}`)),
    ...state.tags.map((g) => el("option", { value: `tag:${g.name}` }, `tag ${g.name} (#${g.snapshotId})`)));
  await refresh();
}

async function refresh() {
  state.views = {};
  state.viewsReady = {};
  await showSchema();
  await showFiles();
  state.page = 0;
  await showData(true);
  if (VIEWS[state.tab]) await showView(state.tab);
}

async function showSchema() {
  const s = await state.table.schema(travelQuery());
  state.schema = s;
  const keys = new Set(s.primaryKeys), parts = new Set(s.partitionKeys);
  $("#tab-schema").replaceChildren(
    el("p", {}, `schema ${s.id} (version ${s.version}), ${s.tableKind}, highest field id ${s.highestFieldId}`,
      s.primaryKeys.length ? `; primary key: ${s.primaryKeys.join(", ")}` : "",
      s.partitionKeys.length ? `; partition keys: ${s.partitionKeys.join(", ")}` : "",
      s.bucketKeys.length ? `; bucket keys: ${s.bucketKeys.join(", ")}` : "",
      s.comment ? `; comment: ${s.comment}` : ""),
    el("table", { id: "schema-fields" }, el("thead", {}, el("tr", {}, ["id", "name", "type", "nullable", "key", "description"].map((h) => el("th", {}, h)))),
      el("tbody", {}, s.fields.map((f) => el("tr", {}, el("td", { class: "num" }, f.id), el("td", { class: "name" }, f.name), el("td", {}, f.type),
        el("td", {}, f.nullable ? "yes" : "no"), el("td", {}, keys.has(f.name) ? "primary" : parts.has(f.name) ? "partition" : ""), el("td", {}, f.description ?? ""))))),
    el("h3", {}, "options"),
    el("table", {}, el("tbody", {}, Object.entries(s.options).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, v))))));
}

async function showFiles() {
  const r = await state.table.files(travelQuery());
  const groups = new Map();
  for (const f of r.files) {
    const key = f.partition;
    if (!groups.has(key)) groups.set(key, new Map());
    const buckets = groups.get(key);
    if (!buckets.has(f.bucket)) buckets.set(f.bucket, new Map());
    const levels = buckets.get(f.bucket);
    if (!levels.has(f.level)) levels.set(f.level, []);
    levels.get(f.level).push(f);
  }
  const sum = (fs, k) => fs.reduce((a, f) => a + f[k], 0);
  const fileTable = (fs) => el("table", {}, el("thead", {}, el("tr", {}, ["file", "kind", "format", "size", "rows", "seq", "row ids", "schema", "write cols"].map((h) => el("th", {}, h)))),
    el("tbody", {}, fs.map((f) => el("tr", {}, el("td", { title: f.path }, f.fileName), el("td", {}, f.kind), el("td", {}, f.format),
      el("td", { class: "num" }, fmtBytes(f.fileSize)), el("td", { class: "num" }, f.rowCount),
      el("td", {}, `${f.minSequenceNumber}..${f.maxSequenceNumber}`), el("td", {}, f.firstRowId === null ? "" : `${f.firstRowId}..${f.lastRowId}`),
      el("td", { class: "num" }, f.schemaId), el("td", {}, f.writeCols ? f.writeCols.join(", ") : "all")))));
  const all = r.files;
  $("#tab-files").replaceChildren(
    el("p", { id: "files-summary" }, `snapshot ${r.snapshotId}: ${all.length} files (${all.filter((f) => f.kind === "blob").length} blob), ${fmtBytes(sum(all, "fileSize"))}, ${sum(all, "rowCount")} rows; ${r.indexFiles.length} index files`),
    ...[...groups].map(([p, buckets]) => el("details", { open: "" }, el("summary", {}, `partition ${p}`),
      ...[...buckets].map(([b, levels]) => el("details", { open: "" }, el("summary", {}, `bucket ${b}`),
        ...[...levels].map(([l, fs]) => el("details", { open: "" }, el("summary", {}, `level ${l}: ${fs.length} files, ${fmtBytes(sum(fs, "fileSize"))}, ${sum(fs, "rowCount")} rows`), fileTable(fs))))))),
    r.indexFiles.length ? el("details", {}, el("summary", {}, "index files"),
      el("table", {}, el("tbody", {}, r.indexFiles.map((i) => el("tr", {}, el("td", {}, i.indexType), el("td", {}, i.fileName), el("td", {}, `partition ${i.partition} bucket ${i.bucket}`),
        el("td", { class: "num" }, fmtBytes(i.fileSize)), el("td", { class: "num" }, i.rowCount)))))) : "",
    el("h3", {}, "Managed BLOBs"), el("p", { id: "managed-blobs", class: "note" }, "…"));
  // Only tables whose files list .blobref sidecars read them (Table.managedBlobs()).
  if (!r.files.some((f) => f.extraFiles.some((x) => x.endsWith(".blobref")))) {
    $("#managed-blobs").replaceChildren("no managed-blob packs");
    return;
  }
  const mb = await state.table.managedBlobs(travelQuery());
  state.managedBlobs = mb;
  $("#managed-blobs").replaceChildren(mb.note,
    el("table", { id: "packs" }, el("thead", {}, el("tr", {}, ["partition", "bucket", "pack", "size", "referenced by"].map((h) => el("th", {}, h)))),
      el("tbody", {}, mb.packs.map((p) => el("tr", {}, el("td", {}, p.partition), el("td", { class: "num" }, p.bucket),
        el("td", { title: `${p.storageRoot}/${p.pack}` }, p.pack), el("td", { class: "num" }, p.sizeBytes === null ? "missing" : fmtBytes(p.sizeBytes)),
        el("td", {}, p.referencedBy.map((f) => el("div", {}, f))))))));
}

function blobColumns() {
  return (state.schema?.fields || []).filter((f) => f.type.startsWith("BLOB")).map((f) => f.name);
}
function rowTracking() {
  return state.schema?.options["row-tracking.enabled"] === "true";
}

async function showData(rebuildColumns) {
  const s = state.schema;
  if (rebuildColumns) {
    const blobs = new Set(blobColumns());
    $("#columns").replaceChildren("columns: ", ...s.fields.map((f) => el("label", {},
      el("input", { type: "checkbox", value: f.name, ...(blobs.has(f.name) ? {} : { checked: "" }), onchange: () => { state.page = 0; showData(false).catch(fail); } }), f.name, " ")));
    $("#blob-column").replaceChildren(...blobColumns().map((c) => el("option", {}, c)));
    $("[data-tab=blobs]").hidden = blobColumns().length === 0;
  }
  const chosen = [...document.querySelectorAll("#columns input:checked")].map((i) => i.value);
  const size = Number($("#page-size").value);
  const cols = rowTracking() ? ["_ROW_ID", ...chosen] : chosen;
  const t0 = performance.now();
  const r = await state.table.scanRows({ ...travelQuery(), columns: cols, limit: (state.page + 1) * size + 1 });
  state.timings.preview = performance.now() - t0;
  const rows = r.rows.slice(state.page * size, (state.page + 1) * size);
  const blobs = new Set(blobColumns());
  const unselectedBlobs = blobColumns().filter((c) => !chosen.includes(c));
  $("#preview thead").replaceChildren(el("tr", {}, r.columns.map((c) => el("th", { title: c.type }, c.name)), unselectedBlobs.map((c) => el("th", {}, c))));
  $("#preview tbody").replaceChildren(...rows.map((row) => el("tr", {},
    r.columns.map((c) => cell(row[c.name], blobs.has(c.name), row._ROW_ID, c.name)),
    unselectedBlobs.map((c) => el("td", {}, row._ROW_ID === undefined ? "" : el("button", { onclick: () => showBlob(c, row._ROW_ID) }, "load"))))));
  $("#page-info").textContent = `rows ${state.page * size + 1}–${state.page * size + rows.length}${r.rowCount > (state.page + 1) * size ? "+" : ""}`;
  $("#prev").disabled = state.page === 0;
  $("#next").disabled = r.rowCount <= (state.page + 1) * size;
}

function cell(v, isBlob, rowId, column) {
  if (v === null || v === undefined) return el("td", { class: "null" }, "null");
  if (isBlob && typeof v === "object") return el("td", {}, `${fmtBytes(v.len)} `, rowId === undefined ? "" : el("button", { onclick: () => showBlob(column, rowId) }, "view"));
  if (typeof v === "number") return el("td", { class: "num" }, v);
  return el("td", {}, typeof v === "string" ? v : JSON.stringify(v));
}

function hexDump(b, max = 512) {
  const lines = [];
  for (let i = 0; i < Math.min(b.length, max); i += 16) {
    const chunk = [...b.subarray(i, Math.min(i + 16, b.length))];
    lines.push(`${i.toString(16).padStart(8, "0")}  ${chunk.map((x) => x.toString(16).padStart(2, "0")).join(" ").padEnd(48)}  ${chunk.map((x) => (x >= 32 && x < 127 ? String.fromCharCode(x) : ".")).join("")}`);
  }
  if (b.length > max) lines.push(`… ${b.length - max} more bytes`);
  return lines.join("\n");
}

async function showBlob(column, rowId) {
  switchTab("blobs");
  $("#blob-column").value = column;
  $("#blob-row").value = rowId;
  const view = $("#blob-view");
  view.replaceChildren("loading…");
  try {
    const bytes = await state.table.blob({ ...travelQuery(), column, rowId: Number(rowId) });
    if (bytes === null) { view.replaceChildren(el("p", { id: "blob-size" }, "NULL")); return; }
    const type = sniff(bytes) || "application/octet-stream";
    const url = URL.createObjectURL(new Blob([bytes], { type }));
    const preview = type.startsWith("image/") ? el("img", { src: url, alt: `${column} of row ${rowId}` })
      : type.startsWith("audio/") ? el("audio", { src: url, controls: "" })
        : type === "text/plain" ? el("pre", { class: "blob-text" }, new TextDecoder().decode(bytes.subarray(0, 65536)), bytes.length > 65536 ? `\n… ${bytes.length - 65536} more bytes` : "")
          : el("div", { class: "hex" }, hexDump(bytes));
    view.replaceChildren(
      el("p", {}, `row ${rowId}, column ${column}: `, el("b", { id: "blob-size", "data-bytes": bytes.length, "data-type": type }, `${bytes.length} bytes`), ` (${type}) `,
        el("a", { href: url, download: `${column}-${rowId}.bin` }, "download")),
      preview);
  } catch (e) {
    view.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

function switchTab(name) {
  state.tab = name;
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll(".tab")) s.hidden = s.id !== `tab-${name}`;
  if (VIEWS[name] && state.table) showView(name).catch(fail);
}

// ---- Anatomy views (computed by the wasm core, drawn as SVG by views.js) ----

/** The snapshot the views show: the travel choice, or the latest. */
function currentSnapshotId() {
  const v = $("#travel").value;
  if (!v) return state.table?.info().snapshotId ?? null;
  if (v.startsWith("tag:")) return state.tags.find((g) => g.name === v.slice(4))?.snapshotId ?? null;
  return Number(v);
}

async function cached(key, load) {
  if (!(key in state.views)) state.views[key] = await load();
  return state.views[key];
}

function fillSelect(sel, values, keep) {
  const prev = keep ? sel.value : "";
  sel.replaceChildren(...values.map((v) => el("option", { value: v }, v)));
  if (values.includes(prev)) sel.value = prev;
  sel.parentElement.hidden = values.length <= 1;
}

async function showLevels() {
  const v = await cached("levels", () => state.table.levels(travelQuery()));
  fillSelect($("#levels-partition"), v.allPartitions, true);
  const mode = $("#levels-mode");
  if (mode.dataset.auto) mode.value = v.keyAxis === "none" ? "size" : "key";
  const t0 = performance.now();
  $("#levels-legend").innerHTML = Array.from({ length: Math.max(1, v.numLevels) }, (_, l) => `<span style="background:${levelColor(l)}">L${l}</span>`).join("") + '<span style="background:#b00020">deletion vector</span>';
  $("#levels-summary").textContent = `snapshot ${v.snapshotId ?? "none"}: ${v.tableKind}, ${v.keyColumns.length ? `key (${v.keyColumns.join(", ")}), ` : ""}${v.numLevels} levels, key axis: ${v.keyAxis === "value" ? "key values" : v.keyAxis === "rank" ? "key order (ranks)" : "none (files in sequence order)"}`;
  $("#levels-view").innerHTML = levelsHtml(v, $("#levels-partition").value, { mode: mode.value });
  state.timings.drawLevels = performance.now() - t0;
}

async function showCompaction() {
  const full = $("#compaction-full").checked;
  const p = await cached(`compaction-${full}`, () => state.table.compactionPreview({ ...travelQuery(), full }));
  state.preview = p;
  const sum = $("#compaction-summary");
  if (!p.available) {
    sum.replaceChildren(el("p", { class: "unavailable", id: "compaction-unavailable" }, `No preview: ${p.unavailableReason}`));
  } else {
    sum.replaceChildren(
      el("p", { id: "compaction-plan" }, `snapshot ${p.snapshotId ?? "none"}, planner ${p.planner}: ${p.tasks.length} task(s)${p.tasks.length ? "" : " — nothing to compact"}`),
      p.tasks.length ? el("table", { id: "compaction-tasks" }, el("thead", {}, el("tr", {}, ["partition", "bucket", "files", "bytes", "rows", "output"].map((h) => el("th", {}, h)))),
        el("tbody", {}, p.tasks.map((t) => el("tr", {}, el("td", {}, t.partition), el("td", { class: "num" }, t.bucket), el("td", { class: "num", title: t.files.join("\n") }, t.files.length),
          el("td", { class: "num" }, fmtBytes(t.inputBytes)), el("td", { class: "num" }, t.inputRows),
          el("td", {}, t.outputLevel === null ? "rewritten (level 0)" : `level ${t.outputLevel}${t.upgrade ? " (upgrade)" : ""}`))))) : "");
  }
  // Highlight only when there is something to compact (otherwise every file would fade).
  const highlight = p.available && p.tasks.length ? taskFiles(p) : null;
  const tasksByBucket = new Map(p.tasks.map((t) => [`${t.partition}|${t.bucket}`, t]));
  const t0 = performance.now();
  if (p.tableKind === "data-evolution") {
    const fg = await cached("fieldgroups", () => state.table.fieldGroups(travelQuery()));
    $("#compaction-partition").parentElement.hidden = true;
    $("#compaction-view").innerHTML = fieldGroupsHtml(fg, { highlight });
  } else {
    const v = await cached("levels", () => state.table.levels(travelQuery()));
    const sel = $("#compaction-partition");
    const withTasks = v.allPartitions.filter((x) => p.tasks.some((t) => t.partition === x));
    fillSelect(sel, v.allPartitions, true);
    if (!sel.dataset.touched && withTasks.length) sel.value = withTasks[0];
    $("#compaction-view").innerHTML = levelsHtml(v, sel.value, { mode: v.keyAxis === "none" ? "size" : "key", highlight, tasksByBucket });
  }
  state.timings.drawCompaction = performance.now() - t0;
}

async function showFieldGroups() {
  const sel = $("#fg-partition");
  const all = await cached("fieldgroups", () => state.table.fieldGroups(travelQuery()));
  fillSelect(sel, all.allPartitions, true);
  const partition = sel.value || all.allPartitions[0];
  const view = all.allPartitions.length > 1 ? { ...all, buckets: all.buckets.filter((b) => b.partition === partition) } : all;
  const t0 = performance.now();
  $("#fg-view").innerHTML = fieldGroupsHtml(view);
  state.timings.drawFieldGroups = performance.now() - t0;
}

async function showTimeline() {
  const v = await cached("timeline", () => state.table.timeline());
  const t0 = performance.now();
  $("#timeline-view").innerHTML = timelineSvg(v, currentSnapshotId());
  state.timings.drawTimeline = performance.now() - t0;
  const notes = [`${v.points.length} snapshots. Click a point to open that snapshot in the other views.`,
    v.fileCounts ? "Live files from the manifest lists." : "File counts not read (many snapshots).", `Live bytes: ${v.liveBytes}.`];
  if (!v.tagsListed) notes.push("Tags not shown: this source cannot list the tag directory.");
  if (v.detachedTags.length) notes.push(`Tags of expired snapshots: ${v.detachedTags.map(([n, id]) => `${n} (#${id})`).join(", ")}.`);
  $("#timeline-notes").textContent = notes.join(" ");
}

const VIEWS = { levels: showLevels, compaction: showCompaction, fieldgroups: showFieldGroups, timeline: showTimeline };

async function showView(name) {
  state.viewsReady[name] = false;
  await VIEWS[name]();
  state.viewsReady[name] = true;
}

/**
 * Time drawing a synthesized levels view of `n` files into the levels tab: `ms` = markup and
 * DOM, `paintMs` = until the frame after next (layout and paint included).
 */
state.benchmark = async (n) => {
  const v = syntheticLevels(n);
  const t0 = performance.now();
  $("#levels-view").innerHTML = levelsHtml(v, "{}", { mode: "key" });
  const drawn = document.querySelectorAll("#levels-view rect.file").length;
  const ms = performance.now() - t0;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return { files: n, drawn, ms, paintMs: performance.now() - t0 };
};

// --- Writing from the page: the core's write and compaction jobs on a writable table ---
state.writes = [];
async function afterCommit(what) {
  await showTable(state.label);
  status(`${state.label}: ${what}`);
}
async function writeFile(file) {
  const log = $("#write-log");
  state.busy = true;
  try {
    status(`writing ${file.name}…`);
    const bytes = new Uint8Array(await file.arrayBuffer());
    const uri = $("#write-uri").value.trim();
    const r = await state.table.write(bytes, { name: file.name, overwrite: $("#write-overwrite").checked, ...(uri ? { tableUri: uri } : {}) });
    state.writes.push({ file: file.name, ...r });
    const what = `${file.name}: ${r.rows} rows in ${r.dataFiles} data file(s), snapshot ${r.commit.snapshotIds.join(", ") || "none (nothing to commit)"}` +
      (r.commit.maintenanceWarning ? ` (maintenance after the commit failed: ${r.commit.maintenanceWarning})` : "");
    log.prepend(el("p", { class: "ok" }, what));
    await afterCommit(what);
  } catch (e) {
    state.writes.push({ file: file.name, error: String(e && e.message ? e.message : e) });
    log.prepend(el("p", { class: "error" }, `${file.name}: ${e && e.message ? e.message : e}`));
    fail(e);
  } finally {
    state.busy = false;
  }
}
$("#write-file").addEventListener("change", (e) => { const f = e.target.files[0]; e.target.value = ""; if (f) writeFile(f); });
const drop = $("#drop");
drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (e) => {
  e.preventDefault();
  drop.classList.remove("over");
  const f = e.dataTransfer.files[0];
  if (f) writeFile(f);
});
$("#compact-now").addEventListener("click", async () => {
  state.busy = true;
  try {
    const full = $("#compaction-full").checked;
    status(`compacting${full ? " (full)" : ""}…`);
    const r = await state.table.compact({ full });
    state.lastCompaction = r;
    await afterCommit(r.tasks ? `compacted: ${r.tasks} task(s), ${r.filesIn} file(s) in, ${r.filesOut} out, snapshot ${r.commit.snapshotIds.join(", ")}` : "nothing to compact");
  } catch (e) {
    fail(e);
  } finally {
    state.busy = false;
  }
});
$("#download-zip").addEventListener("click", async () => {
  try {
    const name = (state.label || "table").replace(/^.*[:/]\s*/, "") || "table";
    const bytes = await state.table.exportZip(name);
    const a = el("a", { href: URL.createObjectURL(new Blob([bytes], { type: "application/zip" })), download: `${name}.zip` });
    document.body.append(a);
    a.click();
    a.remove();
  } catch (e) { fail(e); }
});
$("#new-table").addEventListener("click", () => { $("#create").hidden = !$("#create").hidden; });
if (navigator.storage && navigator.storage.getDirectory) $("#create-opfs-label").hidden = false;
$("#create").addEventListener("submit", (e) => {
  e.preventDefault();
  const schema = $("#create-schema").value;
  const name = $("#create-name").value.trim() || "my_table";
  const where = document.querySelector("input[name=create-where]:checked").value;
  if (where === "opfs") {
    open(async () => {
      const root = await navigator.storage.getDirectory();
      const dir = await (await root.getDirectoryHandle("tables", { create: true })).getDirectoryHandle(name, { create: true });
      // An existing table there is opened as it is.
      try { return await Table.openDirectory(dir, "", progress); } catch { return Table.create(schema, progress, dir); }
    }, `private storage: ${name}`).then(() => { if (state.table) switchTab("write"); });
  } else {
    open(() => Table.create(schema, progress), `memory: ${name}`).then(() => { if (state.table) switchTab("write"); });
  }
  $("#create").hidden = true;
});

$("#tabs").addEventListener("click", (e) => { if (e.target.dataset.tab) switchTab(e.target.dataset.tab); });
$("#travel").addEventListener("change", () => refresh().catch(fail));
// One floating tooltip for the drawn files of the levels view (their data-ref).
const tooltip = document.body.appendChild(el("div", { id: "tooltip", hidden: "" }));
document.addEventListener("mouseover", (e) => {
  const t = e.target.closest?.("[data-ref]");
  const text = t && tipFor(t.dataset.ref);
  tooltip.hidden = !text;
  if (text) tooltip.textContent = text;
});
document.addEventListener("mousemove", (e) => {
  if (!tooltip.hidden) { tooltip.style.left = `${e.pageX + 12}px`; tooltip.style.top = `${e.pageY + 12}px`; }
});
$("#levels-partition").addEventListener("change", () => showLevels().catch(fail));
$("#levels-mode").addEventListener("change", () => { delete $("#levels-mode").dataset.auto; showLevels().catch(fail); });
$("#compaction-full").addEventListener("change", () => showCompaction().catch(fail));
$("#compaction-partition").addEventListener("change", () => { $("#compaction-partition").dataset.touched = "1"; showCompaction().catch(fail); });
$("#fg-partition").addEventListener("change", () => showFieldGroups().catch(fail));
$("#timeline-view").addEventListener("click", (e) => {
  const c = e.target.closest("circle.snap");
  if (!c) return;
  const travel = $("#travel");
  const latest = state.table.info().snapshotId;
  travel.value = Number(c.dataset.snapshot) === latest ? "" : c.dataset.snapshot;
  refresh().catch(fail);
});
$("#page-size").addEventListener("change", () => { state.page = 0; showData(false).catch(fail); });
$("#prev").addEventListener("click", () => { state.page--; showData(false).catch(fail); });
$("#next").addEventListener("click", () => { state.page++; showData(false).catch(fail); });
$("#blob-form").addEventListener("submit", (e) => { e.preventDefault(); showBlob($("#blob-column").value, $("#blob-row").value); });
$("#source").addEventListener("submit", (e) => {
  e.preventDefault();
  const url = new URL($("#url").value, location.href).href;
  history.replaceState(null, "", `?url=${encodeURIComponent($("#url").value)}`);
  open(() => Table.openUrl(url, progress), $("#url").value);
});
$("#demo").addEventListener("click", () => open(() => Table.openUrl(new URL("demo/pk_dedup", location.href).href, progress), "demo: pk_dedup"));
$("#folder").addEventListener("change", (e) => {
  const files = [...e.target.files];
  if (!files.length) return;
  // The table root: the picked folder, or the one directory inside it that holds schema/.
  const roots = new Set(files.map((f) => f.webkitRelativePath.split("/")).filter((p) => p.includes("schema")).map((p) => p.slice(1, p.indexOf("schema")).join("/")));
  const sub = roots.has("") ? "" : [...roots][0] || "";
  open(() => Table.openFiles(files, sub, progress), `${files[0].webkitRelativePath.split("/")[0]}/${sub}`);
});
if (window.showDirectoryPicker) {
  $("#pick").hidden = false;
  $("#pick").addEventListener("click", async () => {
    try {
      const handle = await window.showDirectoryPicker();
      open(() => Table.openDirectory(handle, "", progress), handle.name);
    } catch (e) { if (e.name !== "AbortError") fail(e); }
  });
}
const initial = new URLSearchParams(location.search).get("url");
if (initial) {
  $("#url").value = initial;
  open(() => Table.openUrl(new URL(initial, location.href).href, progress), initial);
} else {
  $("#url").value = "/data/";
}
