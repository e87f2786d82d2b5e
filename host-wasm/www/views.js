// Pictures of a table's anatomy, drawn as plain SVG from the view models the wasm core
// computes (Table.levels, compactionPreview, fieldGroups, timeline). Drawing functions are
// pure (view model in, SVG markup out) so that they can be timed on synthesized models.

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
export const fmtBytes = (n) => n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : n < 1073741824 ? `${(n / 1048576).toFixed(1)} MiB` : `${(n / 1073741824).toFixed(2)} GiB`;
const fmtTime = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace("Z", "") : "");

/** Colour of an LSM level (level 0 warm, higher levels cooler). */
export const levelColor = (l) => ["#e4572e", "#f3a712", "#a8c256", "#29a19c", "#2e86ab", "#5a4fcf", "#8e44ad", "#555"][Math.min(l, 7)];
/** Colour of a commit kind. */
export const kindColor = (k) => ({ APPEND: "#2e86ab", COMPACT: "#a8c256", OVERWRITE: "#e4572e", ANALYZE: "#888" })[k] || "#555";

const LEFT = 64, RUN_H = 18, GAP = 4, WIDTH = 1000;

function fileTitle(f) {
  const lines = [
    f.fileName,
    `level ${f.level}, ${fmtBytes(f.fileSize)}, ${f.rowCount} rows`,
    `sequence ${f.minSequenceNumber}..${f.maxSequenceNumber}, schema ${f.schemaId}`,
  ];
  if (f.minKey !== null && f.minKey !== undefined) lines.push(`keys ${f.minKey} .. ${f.maxKey}`);
  if (f.deleteRowCount !== null && f.deleteRowCount !== undefined) lines.push(`delete rows ${f.deleteRowCount}`);
  if (f.deletionVector) lines.push(`deletion vector: ${f.deletionVector.cardinality ?? "?"} rows deleted (${f.deletionVector.indexFile})`);
  if (f.fileSource) lines.push(`source ${f.fileSource}`);
  if (f.firstRowId !== null && f.firstRowId !== undefined) lines.push(`first row id ${f.firstRowId}`);
  if (f.creationTimeMillis) lines.push(`created ${fmtTime(f.creationTimeMillis)}`);
  return lines.join("\n");
}

// Files of recent drawings, for their hover text: render id → [[file, task output level]].
const renders = new Map();
let renderSeq = 0;
function newRender() {
  const r = { id: ++renderSeq, files: [] };
  renders.set(r.id, r);
  for (const id of renders.keys()) if (renders.size > 16) renders.delete(id);
  return r;
}

/** The hover text of a drawn file (its `data-ref`), or null when it is no longer known. */
export function tipFor(ref) {
  const [id, i] = String(ref).split(":").map(Number);
  const entry = renders.get(id)?.files[i];
  if (!entry) return null;
  const [f, task] = entry;
  return fileTitle(f) + (task !== undefined && task !== null ? `\ncompaction: → level ${task}` : task === null ? "\ncompaction: rewritten" : "");
}

/**
 * One bucket's runs as SVG: a row per sorted run, a rectangle per file. `mode` "key" places
 * files by their key range (x0..x1 from the core), "size" lays a run's files side by side,
 * width by size. `highlight`: Map fileName → output level of the compaction task holding it.
 */
export function levelsSvg(bucket, { mode = "key", highlight = null, render = newRender() } = {}) {
  const runs = bucket.runs;
  const h = runs.length * (RUN_H + GAP) + 22;
  const maxRun = Math.max(1, ...runs.map((r) => r.files.reduce((a, f) => a + f.fileSize, 0)));
  const out = [`<svg class="levels" xmlns="http://www.w3.org/2000/svg" width="${WIDTH + LEFT + 10}" height="${h}" data-bucket="${bucket.bucket}">`];
  const span = WIDTH;
  runs.forEach((r, i) => {
    const y = i * (RUN_H + GAP) + 4;
    out.push(`<text class="run-label" x="4" y="${y + RUN_H - 5}">L${r.level}</text>`);
    out.push(`<rect class="run-bg" x="${LEFT}" y="${y}" width="${span}" height="${RUN_H}"/>`);
    let x = LEFT;
    for (const f of r.files) {
      let fx, fw;
      if (mode === "key") {
        fx = LEFT + f.x0 * span;
        fw = Math.max(3, (f.x1 - f.x0) * span);
      } else {
        fx = x;
        fw = Math.max(2, (f.fileSize / maxRun) * span);
        x += fw;
      }
      const task = highlight && highlight.get(f.fileName);
      const cls = ["file", highlight ? (task !== undefined ? "in-task" : "not-in-task") : "", f.deletionVector ? "has-dv" : ""].filter(Boolean).join(" ");
      // The hover text is made on hover (tipFor): a reference, not a <title> element per file,
      // keeps the markup of 10,000 files small; the page shows it in one floating tooltip.
      const ref = `${render.id}:${render.files.push([f, task]) - 1}`;
      out.push(`<rect class="${cls}" data-file="${esc(f.fileName)}" data-level="${f.level}" x="${fx.toFixed(1)}" y="${y}" width="${fw.toFixed(1)}" height="${RUN_H}" fill="${levelColor(f.level)}" data-ref="${ref}"/>`);
      if (f.deletionVector) out.push(`<path class="dv-mark" d="M${(fx + fw).toFixed(1)} ${y} l-6 0 l6 6 z"><title>deletion vector of ${esc(f.fileName)}</title></path>`);
    }
  });
  const axisY = runs.length * (RUN_H + GAP) + 16;
  out.push(`<text class="axis" x="${LEFT}" y="${axisY}">${mode === "key" ? "key →" : "files by sequence, width by size →"}</text>`);
  out.push("</svg>");
  return out.join("");
}

/** The levels view of one partition: a heading and an SVG per bucket. */
export function levelsHtml(view, partition, opts = {}) {
  const p = view.partitions.find((x) => x.partition === partition) || view.partitions[0];
  if (!p) return `<p class="empty">no data files in snapshot ${view.snapshotId ?? "none"}</p>`;
  const tasks = opts.tasksByBucket || new Map();
  const render = newRender();
  return p.buckets.map((b) => {
    const task = tasks.get(`${p.partition}|${b.bucket}`);
    const levels = Object.entries(b.filesPerLevel).map(([l, n]) => `L${l}: ${n}`).join(", ");
    const runs = b.sortedRunCount === null ? "" : `, <b class="runs">${b.sortedRunCount}</b> sorted runs`;
    const plan = task ? ` — <span class="task-note">compaction: ${task.files.length} files → ${task.outputLevel === null ? "rewritten" : `level ${task.outputLevel}`}${task.upgrade ? " (upgrade)" : ""}</span>` : "";
    return `<div class="bucket" data-bucket="${b.bucket}"><h4>bucket ${b.bucket}: ${b.fileCount} files, ${fmtBytes(b.totalBytes)}, ${b.totalRows} rows${runs} (${levels})${plan}</h4>${levelsSvg(b, { ...opts, render })}</div>`;
  }).join("");
}

/** Map fileName → output level (null for append / data-evolution) of the preview's tasks. */
export function taskFiles(preview) {
  const m = new Map();
  for (const t of preview?.tasks || []) for (const f of t.files) m.set(f, t.outputLevel);
  return m;
}

const LANE_H = 24;
/** A distinct colour per file of a bucket (golden-angle hues). */
export const fileColor = (i, blob) => `hsl(${(i * 137.508) % 360} ${blob ? 45 : 60}% ${blob ? 38 : 45}%)`;
/**
 * One bucket of the field-groups view: x = row ids, y = a lane per column; each file is a
 * band (`g.band`) of rectangles over its row range in the lanes of its columns. In a group a
 * lane is split between the files holding the column, in lookup order (top = the file whose
 * values are read, drawn solid; the older layers below it, faded).
 */
export function fieldGroupsSvg(view, bucket, { highlight = null } = {}) {
  const cols = view.columns;
  const lo = bucket.rowIdMin, hi = bucket.rowIdMax + 1;
  const sx = (r) => LEFT + 60 + ((r - lo) / Math.max(1, hi - lo)) * (WIDTH - 60);
  const h = cols.length * LANE_H + 30;
  const laneOf = new Map(cols.map((c, i) => [c.name, i]));
  const out = [`<svg class="field-groups" xmlns="http://www.w3.org/2000/svg" width="${WIDTH + LEFT + 10}" height="${h}">`];
  cols.forEach((c, i) => {
    out.push(`<text class="lane-label" x="4" y="${i * LANE_H + 16}">${esc(c.name)}${c.blob ? " (blob)" : ""}</text>`);
    out.push(`<rect class="lane-bg" x="${LEFT + 60}" y="${i * LANE_H + 2}" width="${WIDTH - 60}" height="${LANE_H - 4}"/>`);
  });
  // Position of each file in each column's lookup order, per group.
  const slot = new Map();
  bucket.groups.forEach((g) => {
    for (const s of g.sources) s.files.forEach((f, j) => slot.set(`${f}|${s.column}`, [j, s.files.length]));
  });
  bucket.files.forEach((f, fi) => {
    const color = fileColor(fi, f.blob);
    const task = highlight && highlight.has(f.fileName);
    const cls = ["band", f.blob ? "blob" : "normal", highlight ? (task ? "in-task" : "not-in-task") : ""].filter(Boolean).join(" ");
    const x = sx(f.firstRowId), w = Math.max(2, sx(f.lastRowId + 1) - x);
    const parts = [];
    for (const c of f.columns) {
      const lane = laneOf.get(c);
      const [j, k] = slot.get(`${f.fileName}|${c}`) || [0, 1];
      if (lane === undefined) continue;
      const sh = (LANE_H - 4) / k;
      const y = lane * LANE_H + 2 + j * sh;
      parts.push(`<rect class="${j === 0 ? "supplier" : "shadowed"}" data-column="${esc(c)}" fill="${color}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${w.toFixed(1)}" height="${sh.toFixed(1)}"/>`);
    }
    const title = [f.fileName, `${f.blob ? ".blob file" : "data file"}, rows ${f.firstRowId}..${f.lastRowId} (${f.rowCount})`,
      `columns: ${f.columns.join(", ")}${f.writeCols ? "" : " (write_cols null: all)"}`, `layer ${f.layer} of group ${f.group}, max sequence ${f.maxSequenceNumber}, schema ${f.schemaId}`,
      `${fmtBytes(f.fileSize)}`, f.deletionVector ? `deletion vector: ${f.deletionVector.cardinality ?? "?"} rows deleted` : ""].filter(Boolean).join("\n");
    out.push(`<g class="${cls}${f.deletionVector ? " has-dv" : ""}" data-file="${esc(f.fileName)}" data-layer="${f.layer}"><title>${esc(title)}</title>${parts.join("")}</g>`);
  });
  for (const g of bucket.groups) {
    const x = sx(g.firstRowId);
    out.push(`<line class="group-edge" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="0" y2="${cols.length * LANE_H}"/>`);
    out.push(`<text class="axis" x="${x.toFixed(1)}" y="${cols.length * LANE_H + 14}">${g.firstRowId}</text>`);
  }
  out.push(`<text class="axis" x="${(WIDTH + LEFT - 40).toFixed(1)}" y="${cols.length * LANE_H + 26}">row id →</text></svg>`);
  return out.join("");
}

export function fieldGroupsHtml(view, opts = {}) {
  if (!view.buckets.length) return `<p class="empty">no data files</p>`;
  const legend = (b) => b.files.length > 60 ? "" : `<div class="file-legend">${b.files.map((f, i) => `<span style="background:${fileColor(i, f.blob)}" title="${esc(f.fileName)}">${esc(f.fileName.replace(/^data-/, "").slice(0, 8))}${f.blob ? " .blob" : ""} · seq ${f.maxSequenceNumber}${f.deletionVector ? " · DV" : ""}</span>`).join("")}</div>`;
  return view.buckets.map((b) => `<div class="bucket" data-bucket="${b.bucket}"><h4>partition ${esc(b.partition)} bucket ${b.bucket}: ${b.files.length} files in ${b.groups.length} row-id groups, row ids ${b.rowIdMin}..${b.rowIdMax}</h4>${fieldGroupsSvg(view, b, opts)}${legend(b)}</div>`).join("")
    + `<p class="note">Top of a lane: the file whose values are read; below it the older layers it hides. ${esc(view.placeholders)}.</p>`;
}

/**
 * The snapshot timeline: a point per snapshot (x in commit order, y = total records),
 * coloured by commit kind, tags flagged above their snapshot, live files as bars below.
 */
export function timelineSvg(view, current) {
  const pts = view.points;
  const n = Math.max(1, pts.length - 1);
  const maxRec = Math.max(1, ...pts.map((p) => p.totalRecordCount));
  const maxFiles = Math.max(1, ...pts.map((p) => p.liveFiles || 0));
  const X = (i) => LEFT + (pts.length === 1 ? WIDTH / 2 : (i / n) * WIDTH);
  const top = 30, ph = 160, barTop = top + ph + 20, bh = 50;
  const Y = (r) => top + ph - (r / maxRec) * ph;
  const out = [`<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="${WIDTH + LEFT + 30}" height="${barTop + bh + 40}">`];
  out.push(`<text class="axis" x="4" y="${top + 8}">${maxRec}</text><text class="axis" x="4" y="${top + ph}">0</text><text class="axis" x="4" y="${top + ph / 2}">records</text>`);
  if (pts.length > 1) out.push(`<polyline class="records" points="${pts.map((p, i) => `${X(i).toFixed(1)},${Y(p.totalRecordCount).toFixed(1)}`).join(" ")}"/>`);
  if (view.fileCounts) out.push(`<text class="axis" x="4" y="${barTop + bh / 2}">live files</text>`);
  pts.forEach((p, i) => {
    const x = X(i);
    if (p.liveFiles !== null) {
      const hh = (p.liveFiles / maxFiles) * bh;
      out.push(`<rect class="files-bar" x="${(x - 3).toFixed(1)}" y="${(barTop + bh - hh).toFixed(1)}" width="6" height="${hh.toFixed(1)}"><title>snapshot ${p.snapshotId}: ${p.liveFiles} live files (+${p.addedFiles} −${p.deletedFiles})</title></rect>`);
    }
    const title = [`snapshot ${p.snapshotId} ${p.commitKind}${p.operation ? ` (${p.operation})` : ""}`, fmtTime(p.timeMillis), `total ${p.totalRecordCount} records, delta ${p.deltaRecordCount}`,
      p.liveFiles === null ? "" : `live files ${p.liveFiles}, added ${p.addedFiles}, deleted ${p.deletedFiles}`, `schema ${p.schemaId}, user ${p.commitUser}`,
      p.tags.length ? `tags: ${p.tags.join(", ")}` : "", "click: open this snapshot in the other views"].filter(Boolean).join("\n");
    out.push(`<circle class="snap${p.snapshotId === current ? " current" : ""}" data-snapshot="${p.snapshotId}" data-kind="${p.commitKind}" cx="${x.toFixed(1)}" cy="${Y(p.totalRecordCount).toFixed(1)}" r="6" fill="${kindColor(p.commitKind)}"><title>${esc(title)}</title></circle>`);
    p.tags.forEach((t, j) => out.push(`<text class="tag-mark" data-tag="${esc(t)}" x="${(x + 4).toFixed(1)}" y="${(Y(p.totalRecordCount) - 10 - j * 12).toFixed(1)}">⚑ ${esc(t)}</text>`));
    if (pts.length <= 60 || i % Math.ceil(pts.length / 60) === 0) out.push(`<text class="axis" x="${(x - 4).toFixed(1)}" y="${barTop + bh + 14}">${p.snapshotId}</text>`);
  });
  out.push(`<text class="axis" x="${LEFT}" y="${barTop + bh + 32}">snapshot id (commit order) →  ${pts.length ? `${esc(fmtTime(pts[0].timeMillis))} … ${esc(fmtTime(pts.at(-1).timeMillis))} UTC` : ""}</text>`);
  const kinds = [...new Set(pts.map((p) => p.commitKind))];
  kinds.forEach((k, i) => out.push(`<circle cx="${LEFT + 10 + i * 110}" cy="12" r="5" fill="${kindColor(k)}"/><text class="axis" x="${LEFT + 18 + i * 110}" y="16">${k}</text>`));
  out.push("</svg>");
  return out.join("");
}

/** A synthesized primary-key levels view of `n` files in one bucket (for the benchmark). */
export function syntheticLevels(n) {
  const runs = [];
  const l0 = Math.min(5, n);
  for (let i = 0; i < l0; i++) runs.push({ level: 0, files: [synthFile(`l0-${i}`, 0, Math.random() * 0.5, 0.5 + Math.random() * 0.5)] });
  const rest = n - l0;
  const per = [0.01, 0.09, 0.9].map((x) => Math.round(x * rest));
  per[2] = rest - per[0] - per[1];
  per.forEach((m, k) => {
    const files = [];
    for (let i = 0; i < m; i++) files.push(synthFile(`l${k + 3}-${i}`, k + 3, i / m, (i + 0.9) / m));
    if (m) runs.push({ level: k + 3, files });
  });
  const filesPerLevel = {};
  for (const r of runs) filesPerLevel[r.level] = (filesPerLevel[r.level] || 0) + r.files.length;
  return {
    snapshotId: 1, tableKind: "primary-key", keyColumns: ["k"], keyAxis: "value", numLevels: 6, allPartitions: ["{}"],
    partitions: [{ partition: "{}", partitionValues: {}, buckets: [{ bucket: 0, totalBuckets: 1, fileCount: n, totalBytes: n * 1e6, totalRows: n * 1000, sortedRunCount: runs.length, filesPerLevel, keyAxis: "value", runs }] }],
  };
}

function synthFile(name, level, x0, x1) {
  return { fileName: `data-${name}.parquet`, level, fileSize: 500000 + Math.floor(Math.random() * 1e6), rowCount: 1000, minKey: `[${Math.floor(x0 * 1e6)}]`, maxKey: `[${Math.floor(x1 * 1e6)}]`, x0, x1,
    minSequenceNumber: 0, maxSequenceNumber: 10, schemaId: 0, deleteRowCount: 0, deletionVector: level === 5 && Math.random() < 0.05 ? { cardinality: 3, indexFile: "index-0" } : null,
    creationTimeMillis: 0, fileSource: "COMPACT", firstRowId: null, extraFiles: [] };
}

// What the bytes are, by their magic numbers: an image, audio, UTF-8 text, or null (hex).
export function sniff(b) {
  const starts = (...sig) => sig.every((x, i) => b[i] === x);
  const ascii = (at, text) => [...text].every((c, i) => b[at + i] === c.charCodeAt(0));
  if (starts(0x89, 0x50, 0x4e, 0x47)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (ascii(0, "GIF8")) return "image/gif";
  if (ascii(0, "RIFF") && ascii(8, "WEBP")) return "image/webp";
  if (ascii(0, "RIFF") && ascii(8, "WAVE")) return "audio/wav";
  if (ascii(0, "ID3") || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && b.length > 3)) return "audio/mpeg";
  if (ascii(0, "OggS")) return "audio/ogg";
  if (ascii(0, "fLaC")) return "audio/flac";
  if (ascii(0, "<svg")) return "image/svg+xml";
  if (b.length === 0) return "text/plain";
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(b);
    // Text: no control characters other than tab, newline, carriage return, form feed.
    if (!/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text)) return "text/plain";
  } catch { /* not UTF-8 */ }
  return null;
}
