#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Origin: /work/shared/corpus/make_corpus.py (the generator of conformance/tables), copied
# unchanged for the CI oracle step of scripts/test-all.sh (sha256 of the original:
# 0002105c1551e01461869beb3b648dc182af9c8dcb8ba0710b7c7d63f35f3263, before these lines).
"""Build a corpus of real Apache Paimon tables with pypaimon (the official
Python implementation) plus expected read results, for conformance testing
of another Paimon implementation.

Usage:
    python3 make_corpus.py OUT                 # small conformance corpus
    python3 make_corpus.py OUT --large 100000  # benchmark tables only
    python3 make_corpus.py OUT --only pk_dedup,blob_single   # subset (debug)

OUT is a Paimon filesystem-catalog warehouse root.  The tables go to
OUT/<db>.db/<table>/ (db = "corpus" in small mode, "large" in --large mode);
next to them the script writes OUT/<table>.expected.json and
OUT/manifest.json.  See README.md (same directory) for the file formats.

Everything that can be fixed is fixed: data comes from constant lists and a
seeded random.Random, so two runs produce the same rows, snapshot ids,
schemas and file layout (file names contain random UUIDs and snapshots
contain wall-clock times; those differ between runs).

Every expected result is produced by reading the table back with pypaimon
AND cross-checked against an independent in-script model of the
operations that were applied (plain Python dicts/lists).  A mismatch makes
the script exit non-zero; the expected files then carry
"model_check": "MISMATCH" for the affected reads.
"""

import argparse
import copy
import datetime
import decimal
import hashlib
import json
import math
import os
import random
import shutil
import struct
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

os.environ.setdefault("TZ", "UTC")
if hasattr(time, "tzset"):
    time.tzset()

import pyarrow as pa  # noqa: E402

import pypaimon  # noqa: E402
from pypaimon import CatalogFactory, Schema  # noqa: E402
from pypaimon.schema.data_types import (  # noqa: E402
    AtomicType, PyarrowFieldParser,
)

D = decimal.Decimal
UTC = datetime.timezone.utc
EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=UTC)

FORMAT_VERSION = 1
PYPAIMON_REQUIRED = "2.1.0"


# ---------------------------------------------------------------------------
# Profile: the "shape" knobs.  The held-out set uses another Profile.
# ---------------------------------------------------------------------------

class Profile:
    name = "shared"
    seed = 20250607
    db = "corpus"
    rows_per_commit = 8          # base number of rows written per commit
    pk_buckets = 2               # fixed-bucket PK tables
    pk_commits = 4               # commits for the main dedup table
    fixed_append_buckets = 3
    dyn_target_rows = 4          # dynamic-bucket.target-row-num
    postpone_buckets = 2         # postpone.default-bucket-num
    regions = ["eu", "us", "apac", None]
    years = [2023, 2024, None]
    blob_sizes = [0, 1, 17, 100, 1000, 4096, 65536, 262144]
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta",
             "theta", "iota", "kappa", "lambda", "mu", "\u00f1u",
             "\u03bei", "omicron", "\u03c0"]
    large_pk_buckets = 4
    large_pk_commits = 6
    large_append_commits = 5


# ---------------------------------------------------------------------------
# Canonical JSON encoding of Arrow values (documented in README.md)
# ---------------------------------------------------------------------------

BLOB_INLINE_HEX_MAX = 64


def _epoch_nanos(v, unit: str, tz) -> int:
    if isinstance(v, int):
        mult = {"s": 10 ** 9, "ms": 10 ** 6, "us": 10 ** 3, "ns": 1}[unit]
        return v * mult
    if hasattr(v, "value") and type(v).__name__ == "Timestamp":   # pandas
        return int(v.value)
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            delta = v - EPOCH_UTC
        else:
            delta = v - EPOCH_NAIVE
        micros = delta // datetime.timedelta(microseconds=1)
        return micros * 1000
    raise TypeError("unexpected timestamp value %r" % (v,))


def format_timestamp(nanos: int, with_tz: bool) -> str:
    secs, frac = divmod(nanos, 10 ** 9)
    dt = EPOCH_NAIVE + datetime.timedelta(seconds=secs)
    s = "%04d-%02d-%02dT%02d:%02d:%02d.%09d" % (
        dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, frac)
    return s + "Z" if with_tz else s


def canon_value(v, t: pa.DataType):
    if v is None:
        return None
    if pa.types.is_boolean(t):
        return bool(v)
    if pa.types.is_integer(t):
        return int(v)
    if pa.types.is_floating(t):
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return f
    if pa.types.is_decimal(t):
        return format(v, "f")
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return v
    if pa.types.is_large_binary(t):          # BLOB
        b = bytes(v)
        out = {"len": len(b), "sha256": hashlib.sha256(b).hexdigest()}
        if len(b) <= BLOB_INLINE_HEX_MAX:
            out["hex"] = b.hex()
        return out
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return bytes(v).hex()
    if pa.types.is_date(t):
        return v.isoformat()
    if pa.types.is_time(t):
        return "%02d:%02d:%02d.%03d" % (v.hour, v.minute, v.second,
                                        v.microsecond // 1000)
    if pa.types.is_timestamp(t):
        return format_timestamp(_epoch_nanos(v, t.unit, t.tz), t.tz is not None)
    if pa.types.is_map(t):
        items = v.items() if isinstance(v, dict) else v
        return [[canon_value(k, t.key_type), canon_value(x, t.item_type)]
                for k, x in items]
    if (pa.types.is_list(t) or pa.types.is_large_list(t)
            or pa.types.is_fixed_size_list(t)):
        return [canon_value(x, t.value_type) for x in v]
    if pa.types.is_struct(t):
        return {t.field(i).name: canon_value(v.get(t.field(i).name),
                                             t.field(i).type)
                for i in range(t.num_fields)}
    raise TypeError("no canonical encoding for %s" % t)


def canon_table(tbl: pa.Table) -> List[dict]:
    schema = tbl.schema
    out = []
    for row in tbl.to_pylist():
        out.append({f.name: canon_value(row[f.name], f.type) for f in schema})
    return out


def _sortable(v):
    if v is None:
        return (0, "")
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, float)):
        return (1, v)
    if isinstance(v, str):
        return (2, v)
    return (3, json.dumps(v, sort_keys=True, ensure_ascii=False))


def sort_rows(rows: List[dict], sort_key: List[str]) -> List[dict]:
    def key(r):
        return tuple(_sortable(r.get(c)) for c in sort_key) + (
            json.dumps(r, ensure_ascii=False, separators=(",", ":")),)
    return sorted(rows, key=key)


def rows_sha256(rows: List[dict]) -> str:
    h = hashlib.sha256()
    for r in rows:
        h.update(json.dumps(r, ensure_ascii=False,
                            separators=(",", ":")).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


# ---------------------------------------------------------------------------
# Small helpers around pypaimon
# ---------------------------------------------------------------------------

def paimon_arrow_schema(table, cols: Optional[List[str]] = None) -> pa.Schema:
    schema = PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)
    if cols is None:
        return schema
    return pa.schema([schema.field(c) for c in cols])


def read_arrow(table, options: Optional[dict] = None,
               projection: Optional[List[str]] = None) -> pa.Table:
    t = table.copy(options) if options else table
    rb = t.new_read_builder()
    if projection is not None:
        rb = rb.with_projection(projection)
    splits = rb.new_scan().plan().splits()
    return rb.new_read().to_arrow(splits)


def latest_snapshot_id(table) -> Optional[int]:
    snap = table.snapshot_manager().get_latest_snapshot()
    return None if snap is None else snap.id


def blob_lengths(path: str) -> List[int]:
    """Decode the length index at the end of a Paimon .blob file."""
    from pypaimon.common.delta_varint_compressor import DeltaVarintCompressor
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(size - 5)
        header = f.read(5)
        index_len = struct.unpack("<I", header[:4])[0]
        f.seek(size - 5 - index_len)
        return list(DeltaVarintCompressor.decompress(f.read(index_len)))


def _jsonable(v):
    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, D):
        return format(v, "f")
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


# ---------------------------------------------------------------------------
# Table building
# ---------------------------------------------------------------------------

class TableBuild:
    """One corpus table: creation, writes, model snapshots, metadata."""

    def __init__(self, ctx, name: str, schema: Schema, *, features: List[str],
                 sort_key: List[str], description: str,
                 row_tracking: bool = False, history: bool = True):
        self.ctx = ctx
        self.name = name
        self.ident = "%s.%s" % (ctx.db, name)
        ctx.catalog.create_table(self.ident, schema, False)
        self.features = list(features)
        self.sort_key = list(sort_key)
        self.description = description
        self.row_tracking = row_tracking
        self.history = history
        # snapshot id -> model rows (list of dicts, user columns by name,
        # plus "_ROW_ID" for row-tracking tables)
        self.models: Dict[int, List[dict]] = {}
        self.tags: Dict[str, int] = {}
        self.notes: List[str] = []
        self.projections: List[List[str]] = []   # extra projected reads (latest)
        self.rows_mode = "full"          # or "summary" for large tables
        self.summary_fn: Optional[Callable] = None

    # -- access ------------------------------------------------------------
    @property
    def table(self):
        return self.ctx.catalog.get_table(self.ident)

    def schema_of(self, cols=None) -> pa.Schema:
        return paimon_arrow_schema(self.table, cols)

    def latest_id(self) -> Optional[int]:
        return latest_snapshot_id(self.table)

    def arrow(self, rows: List[dict], cols: Optional[List[str]] = None):
        return pa.Table.from_pylist(rows, schema=self.schema_of(cols))

    # -- operations --------------------------------------------------------
    def write(self, rows, *, cols=None, overwrite=None, builder=None) -> int:
        table = self.table
        data = rows if isinstance(rows, pa.Table) else self.arrow(rows, cols)
        wb = builder(table) if builder is not None else table.new_batch_write_builder()
        if overwrite is not None:
            wb = wb.overwrite(overwrite)
        w = wb.new_write()
        if cols is not None:
            w.with_write_type(cols)
        c = wb.new_commit()
        try:
            w.write_arrow(data)
            c.commit(w.prepare_commit())
        finally:
            w.close()
            c.close()
        return self.latest_id()

    def update(self, fn) -> int:
        table = self.table
        wb = table.new_batch_write_builder()
        u = wb.new_update()
        msgs = fn(u)
        c = wb.new_commit()
        try:
            c.commit(msgs)
        finally:
            c.close()
        return self.latest_id()

    def alter(self, changes):
        self.ctx.catalog.alter_table(self.ident, changes)

    def snap(self, rows: List[dict], sid: Optional[int] = None):
        """Record the model state of the table at snapshot ``sid``."""
        sid = self.latest_id() if sid is None else sid
        self.models[sid] = copy.deepcopy(rows)

    def tag(self, tag_name: str, sid: Optional[int] = None):
        self.table.create_tag(tag_name, sid)
        self.tags[tag_name] = sid if sid is not None else self.latest_id()


class Context:
    def __init__(self, out: str, profile, mode: str):
        self.out = os.path.abspath(out)
        self.profile = profile
        self.mode = mode
        self.db = profile.db if mode == "small" else "large"
        self.rng = random.Random(profile.seed)
        self.catalog = CatalogFactory.create({"warehouse": self.out})
        self.catalog.create_database(self.db, True)
        self.entries: List[dict] = []
        self.failures: List[str] = []
        self.not_produced: List[dict] = []

    # deterministic per-table RNG (independent of table order / --only)
    def rng_for(self, name: str) -> random.Random:
        h = hashlib.sha256(("%s/%s" % (self.profile.seed, name)).encode()).hexdigest()
        return random.Random(int(h[:16], 16))


# ---------------------------------------------------------------------------
# Finalisation: read back, cross-check, write expected file
# ---------------------------------------------------------------------------

def _model_table(rows: List[dict], schema: pa.Schema) -> pa.Table:
    clean = [{f.name: r.get(f.name) for f in schema} for r in rows]
    return pa.Table.from_pylist(clean, schema=schema)


def _compare(label, got_rows, model_rows, read_schema, sort_key, failures,
             table_name):
    if model_rows is None:
        return "n/a"
    try:
        model = sort_rows(canon_table(_model_table(model_rows, read_schema)),
                          sort_key)
    except Exception as e:  # model could not even be encoded
        failures.append("%s/%s: model encoding failed: %s" % (table_name, label, e))
        return "MISMATCH"
    if model == got_rows:
        return "passed"
    failures.append("%s/%s: pypaimon read differs from model" % (table_name, label))
    print("  MODEL MISMATCH in %s / %s" % (table_name, label), file=sys.stderr)
    gs = {json.dumps(r, sort_keys=True) for r in got_rows}
    ms = {json.dumps(r, sort_keys=True) for r in model}
    for r in sorted(gs - ms)[:10]:
        print("    only in pypaimon: " + r, file=sys.stderr)
    for r in sorted(ms - gs)[:10]:
        print("    only in model:    " + r, file=sys.stderr)
    return "MISMATCH"


def _system_rows(ctx, tb, suffix):
    try:
        t = ctx.catalog.get_table("%s$%s" % (tb.ident, suffix))
        return read_arrow(t).to_pylist()
    except Exception as e:  # pragma: no cover - diagnostic only
        return [{"error": "%s: %s" % (type(e).__name__, e)}]


def _schema_json(table_path, schema_id):
    with open(os.path.join(table_path, "schema", "schema-%d" % schema_id)) as f:
        return json.load(f)


def _snapshot_json(table_path, sid):
    with open(os.path.join(table_path, "snapshot", "snapshot-%d" % sid)) as f:
        return json.load(f)


def java_orc_char_columns(table_path, schema_id) -> List[str]:
    """The top-level CHAR(n) columns of an ORC table (empty for other formats).

    Java Paimon 2.0 reads ORC files with a read schema built from the table type, and ORC's
    conversion to char(n) removes trailing spaces, whatever ORC type the writer used;
    pypaimon 2.1.0 writes CHAR as a plain ORC string and reads its spaces back. Java is the
    reference, so the expected rows hold Java's value."""
    schema = _schema_json(table_path, schema_id)
    if schema.get("options", {}).get("file.format", "parquet").lower() != "orc":
        return []
    return [f["name"] for f in schema["fields"]
            if str(f["type"]).upper().startswith("CHAR(")]


def trim_chars(rows, columns):
    """`rows` (dicts) with the trailing spaces of the string values of `columns` removed."""
    if rows is None or not columns:
        return rows
    return [{k: (v.rstrip(" ") if k in columns and isinstance(v, str) else v)
             for k, v in r.items()} for r in rows]


def finalize(ctx: Context, tb: TableBuild):
    table = tb.table
    table_path = table.table_path
    latest = tb.latest_id()
    reads = []
    checks = []
    orc_chars = java_orc_char_columns(
        table_path, _snapshot_json(table_path, latest)["schemaId"]) if latest is not None else []

    def do_read(label, options, projection, model, snapshot_id):
        arrow_tbl = read_arrow(table, options, projection)
        sk = [c for c in tb.sort_key if projection is None or c in projection]
        rows = sort_rows(trim_chars(canon_table(arrow_tbl), orc_chars), sk)
        model = trim_chars(model, orc_chars)
        check = _compare(label, rows, model, arrow_tbl.schema, sk,
                         ctx.failures, tb.name)
        checks.append(check)
        entry = {
            "label": label,
            "options": options or {},
            "projection": projection,
            "sort_key": sk,
            "snapshot_id": snapshot_id,
            "schema_id": (_snapshot_json(table_path, snapshot_id)["schemaId"]
                          if snapshot_id is not None else None),
            "row_count": len(rows),
            "rows_sha256": rows_sha256(rows),
            "model_check": check,
        }
        if tb.rows_mode == "full":
            entry["rows"] = rows
        else:
            entry["summary"] = tb.summary_fn(arrow_tbl) if tb.summary_fn else {}
        return entry, arrow_tbl

    def strip_row_id(rows):
        if rows is None:
            return None
        return [{k: v for k, v in r.items() if k != "_ROW_ID"} for r in rows]

    # 1. latest snapshot, default projection
    latest_model = tb.models.get(latest)
    main, main_arrow = do_read("latest", None, None, strip_row_id(latest_model), latest)
    # 2. time travel to every modelled snapshot (and tags)
    if tb.history:
        for sid in sorted(tb.models):
            if sid == latest:
                continue
            e, _ = do_read("snapshot-%d" % sid, {"scan.snapshot-id": str(sid)},
                           None, strip_row_id(tb.models[sid]), sid)
            reads.append(e)
        for tag_name, sid in sorted(tb.tags.items()):
            e, _ = do_read("tag-%s" % tag_name, {"scan.tag-name": tag_name},
                           None, strip_row_id(tb.models.get(sid)), sid)
            reads.append(e)
    # 3. projected reads of the latest snapshot
    for proj in tb.projections:
        e, _ = do_read("latest-projection-" + "-".join(proj), None, proj,
                       strip_row_id(latest_model), latest)
        reads.append(e)
    # 4. row tracking: latest with _ROW_ID
    if tb.row_tracking:
        proj = ["_ROW_ID"] + [f.name for f in table.table_schema.fields]
        e, _ = do_read("latest-with-row-id", None, proj, latest_model, latest)
        reads.append(e)

    # metadata
    schema_id = _snapshot_json(table_path, latest)["schemaId"] if latest else 0
    schema = _schema_json(table_path, schema_id)
    snap_dir = os.path.join(table_path, "snapshot")
    snapshot_ids = sorted(int(n.split("-")[1]) for n in os.listdir(snap_dir)
                          if n.startswith("snapshot-"))
    snapshots = []
    for sid in snapshot_ids:
        s = _snapshot_json(table_path, sid)
        snapshots.append({k: s.get(k) for k in (
            "id", "schemaId", "commitKind", "totalRecordCount",
            "deltaRecordCount", "changelogRecordCount", "nextRowId",
            "indexManifest") if s.get(k) is not None or k in ("id", "schemaId")})
    files = []
    file_cols = ["partition", "bucket", "file_path", "file_format", "schema_id",
                 "level", "record_count", "min_sequence_number",
                 "max_sequence_number", "deleteRowCount", "first_row_id",
                 "write_cols"]
    for r in _system_rows(ctx, tb, "files"):
        if "error" in r:
            files.append(r)
            continue
        rec = {c: _jsonable(r.get(c)) for c in file_cols}
        # the $files table reports the table's file.format for every file;
        # report the real format from the file name instead
        fname = str(r.get("file_path"))
        rec["file_format"] = ("blob" if fname.endswith(".blob")
                              else fname.rsplit(".", 1)[-1])
        files.append(rec)
    files.sort(key=lambda r: (str(r.get("partition")), r.get("bucket") or 0,
                              r.get("first_row_id") if r.get("first_row_id") is not None else -1,
                              r.get("min_sequence_number") or 0,
                              str(r.get("file_path"))))
    index_files = []
    for r in _system_rows(ctx, tb, "table_indexes"):
        if "error" in r:
            index_files.append(r)
            continue
        index_files.append({c: _jsonable(r.get(c)) for c in (
            "partition", "bucket", "index_type", "file_name", "row_count",
            "dv_ranges")})
    # physical files on disk (by kind)
    kinds: Dict[str, int] = {}
    blob_files = []
    total_bytes = 0
    by_name = {os.path.basename(str(f.get("file_path"))): f for f in files}
    for root, _dirs, names in os.walk(table_path):
        for n in names:
            p = os.path.join(root, n)
            total_bytes += os.path.getsize(p)
            rel = os.path.relpath(p, table_path)
            top = rel.split(os.sep)[0]
            if n.endswith(".blob"):
                kind = "blob"
            elif n.startswith("changelog-"):
                kind = "changelog"
            elif n.startswith("data-"):
                kind = "data"
            elif n.startswith("index-manifest"):
                kind = "index-manifest"
            elif n.startswith("index-"):
                kind = "index"
            else:
                kind = top
            kinds[kind] = kinds.get(kind, 0) + 1
            if n.endswith(".blob"):
                lens = blob_lengths(p)
                meta = by_name.get(n, {})
                blob_files.append({
                    "file": rel,
                    "first_row_id": meta.get("first_row_id"),
                    "write_cols": meta.get("write_cols"),
                    "entries": len(lens),
                    "null_entries": sum(1 for x in lens if x == -1),
                    "placeholder_entries": sum(1 for x in lens if x == -2),
                    "referenced_by_latest_snapshot": n in by_name,
                })
    blob_files.sort(key=lambda b: (b["first_row_id"] if b["first_row_id"] is not None else -1,
                                   b["file"]))
    options = dict(schema.get("options", {}))
    fmt = options.get("file.format", "parquet")
    model_check = ("passed" if all(c == "passed" for c in checks + [main["model_check"]])
                   else ("MISMATCH" if "MISMATCH" in checks + [main["model_check"]]
                         else "n/a"))
    expected = {
        "format_version": FORMAT_VERSION,
        "generator": ctx_generator_info(ctx),
        "table": tb.name,
        "database": ctx.db,
        "identifier": tb.ident,
        "path": os.path.relpath(table_path, ctx.out),
        "description": tb.description,
        "features": tb.features,
        "notes": tb.notes,
        "table_type": "primary-key" if schema.get("primaryKeys") else "append",
        "file_format": fmt,
        "partition_keys": schema.get("partitionKeys", []),
        "primary_keys": schema.get("primaryKeys", []),
        "options": options,
        "schema_id": schema_id,
        "fields": schema["fields"],
        "sort_key": tb.sort_key,
        "snapshot_id": latest,
        "row_count": main["row_count"],
        "rows_sha256": main["rows_sha256"],
        "model_check": model_check,
    }
    if tb.rows_mode == "full":
        expected["rows"] = main["rows"]
    else:
        expected["summary"] = main["summary"]
    expected["additional_reads"] = reads
    expected["tags"] = tb.tags
    expected["snapshots"] = snapshots
    expected["files"] = files
    expected["index_files"] = index_files
    expected["blob_files"] = blob_files
    expected["physical_files"] = dict(sorted(kinds.items()))
    expected["table_bytes"] = total_bytes
    exp_name = "%s.expected.json" % tb.name
    with open(os.path.join(ctx.out, exp_name), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")
    ctx.entries.append({
        "name": tb.name,
        "identifier": tb.ident,
        "path": expected["path"],
        "expected": exp_name,
        "table_type": expected["table_type"],
        "format": fmt,
        "features": tb.features,
        "partition_keys": expected["partition_keys"],
        "primary_keys": expected["primary_keys"],
        "bucket": options.get("bucket", "-1"),
        "row_count": main["row_count"],
        "snapshot_count": len(snapshot_ids),
        "latest_snapshot_id": latest,
        "schema_count": len([n for n in os.listdir(os.path.join(table_path, "schema"))
                             if n.startswith("schema-")]),
        "tags": sorted(tb.tags),
        "model_check": model_check,
        "table_bytes": total_bytes,
        "description": tb.description,
    })
    print("  %-32s rows=%-6d snapshots=%-2d check=%s" % (
        tb.name, main["row_count"], len(snapshot_ids), model_check))


def ctx_generator_info(ctx):
    return {
        "tool": "make_corpus.py",
        "pypaimon": getattr(pypaimon, "__version__", None) or _pypaimon_version(),
        "pyarrow": pa.__version__,
        "profile": ctx.profile.name,
        "seed": ctx.profile.seed,
        "mode": ctx.mode,
    }


def _pypaimon_version():
    try:
        from importlib.metadata import version
        return version("pypaimon")
    except Exception:
        return None


# ---------------------------------------------------------------------------
# Value generators
# ---------------------------------------------------------------------------

def rstr(rng, words):
    return "%s-%d" % (rng.choice(words), rng.randint(0, 999))


def maybe(rng, v, p_null=0.15):
    return None if rng.random() < p_null else v


def rdouble(rng):
    return round(rng.uniform(-1000, 1000), 3)


def rts_us(rng):
    base = datetime.datetime(2024, 1, 1)
    return base + datetime.timedelta(microseconds=rng.randint(0, 366 * 86400 * 10 ** 6))


def rdate(rng):
    return datetime.date(2020, 1, 1) + datetime.timedelta(days=rng.randint(0, 2000))


def pk_field(name, pa_type):
    return pa.field(name, pa_type, nullable=False)


# ---------------------------------------------------------------------------
# Model helpers (independent re-implementation of the merge semantics)
# ---------------------------------------------------------------------------

def dedup_apply(state: Dict, rows: List[dict], key_cols, op_col=None):
    for r in rows:
        k = tuple(r[c] for c in key_cols)
        if op_col is not None and r.get(op_col) in ("-D", "-U"):
            state.pop(k, None)
        else:
            state[k] = dict(r)


def partial_update_apply(state: Dict, rows: List[dict], key_cols):
    for r in rows:
        k = tuple(r[c] for c in key_cols)
        cur = state.get(k)
        if cur is None:
            state[k] = dict(r)
        else:
            for c, v in r.items():
                if v is not None:
                    cur[c] = v


# ---------------------------------------------------------------------------
# Registry of table builders
# ---------------------------------------------------------------------------

BUILDERS: List[Callable] = []


def builder(fn):
    BUILDERS.append(fn)
    return fn


# ---------------------------------------------------------------------------
# a. append tables, one per file format
# ---------------------------------------------------------------------------

def _append_basic(ctx: Context, name: str, fmt: str, extra_opts=None,
                  features=None, commits=2, description=None):
    p = ctx.profile
    rng = ctx.rng_for(name)
    schema = pa.schema([
        ("id", pa.int32()), ("name", pa.string()), ("score", pa.float64()),
        ("qty", pa.int64()), ("flag", pa.bool_()), ("created", pa.timestamp("us")),
        ("day", pa.date32()), ("price", pa.decimal128(10, 2)),
    ])
    opts = {"file.format": fmt}
    opts.update(extra_opts or {})
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options=opts),
                    features=features or ["append", "unpartitioned", "projection",
                                          "bucket-unaware", "format:" + fmt,
                                          "multiple-commits", "nulls"],
                    sort_key=["id"],
                    description=description or (
                        "Append-only table, %s, unpartitioned, %d commits." % (fmt, commits)))
    if features is None:
        tb.projections.append(["price", "id", "name"])
    state = []
    next_id = 1
    for _c in range(commits):
        rows = []
        for _ in range(p.rows_per_commit):
            rows.append({
                "id": next_id,
                "name": maybe(rng, rstr(rng, p.words)),
                "score": maybe(rng, rdouble(rng)),
                "qty": maybe(rng, rng.randint(-10 ** 12, 10 ** 12)),
                "flag": maybe(rng, rng.random() < 0.5),
                "created": maybe(rng, rts_us(rng)),
                "day": maybe(rng, rdate(rng)),
                "price": maybe(rng, D(rng.randint(-99999999, 99999999)) / 100),
            })
            next_id += 1
        rng.shuffle(rows)
        tb.write(rows)
        state += rows
        tb.snap(state)
    return tb


@builder
def append_parquet(ctx):
    return _append_basic(ctx, "append_parquet", "parquet")


@builder
def append_orc(ctx):
    return _append_basic(ctx, "append_orc", "orc")


@builder
def append_avro(ctx):
    return _append_basic(ctx, "append_avro", "avro")


@builder
def codec_tables(ctx):
    out = []
    for fmt, codec in [("parquet", "snappy"), ("parquet", "gzip"),
                       ("parquet", "none"), ("orc", "zlib"), ("orc", "snappy"),
                       ("orc", "lz4"), ("avro", "snappy"), ("avro", "deflate"),
                       ("avro", "null")]:
        name = "codec_%s_%s" % (fmt, codec)
        if not ctx.wanted(name):
            continue
        out.append(_append_basic(
            ctx, name, fmt, {"file.compression": codec},
            features=["append", "format:" + fmt, "compression:" + codec],
            commits=1,
            description="Append table, %s with file.compression=%s (1 commit)." % (fmt, codec)))
    return out


# ---------------------------------------------------------------------------
# b. partitioned append table
# ---------------------------------------------------------------------------

@builder
def append_partitioned(ctx):
    p = ctx.profile
    rng = ctx.rng_for("append_partitioned")
    schema = pa.schema([("region", pa.string()), ("yr", pa.int32()),
                        ("id", pa.int64()), ("payload", pa.string()),
                        ("amount", pa.float64())])
    tb = TableBuild(
        ctx, "append_partitioned",
        Schema.from_pyarrow_schema(schema, partition_keys=["region", "yr"]),
        features=["append", "partitioned", "partition:string", "partition:int",
                  "null-partition-value(__DEFAULT_PARTITION__)", "multiple-commits",
                  "format:parquet"],
        sort_key=["id"],
        description="Append table partitioned by (region STRING, yr INT); 3 commits "
                    "over several partitions, including NULL partition values "
                    "stored as __DEFAULT_PARTITION__.")
    combos = [(r, y) for r in p.regions for y in p.years]
    state = []
    nid = 1
    for c in range(3):
        rows = []
        for i in range(p.rows_per_commit + 2):
            # make sure the first commit touches the null partitions
            region, yr = combos[(c * 5 + i * 7) % len(combos)] if i < 4 else rng.choice(combos)
            rows.append({"region": region, "yr": yr, "id": nid,
                         "payload": maybe(rng, rstr(rng, p.words)),
                         "amount": maybe(rng, rdouble(rng))})
            nid += 1
        tb.write(rows)
        state += rows
        tb.snap(state)
    return tb


@builder
def append_fixed_bucket(ctx):
    p = ctx.profile
    rng = ctx.rng_for("append_fixed_bucket")
    schema = pa.schema([("id", pa.int32()), ("v", pa.string()), ("n", pa.int64())])
    tb = TableBuild(
        ctx, "append_fixed_bucket",
        Schema.from_pyarrow_schema(schema, options={
            "bucket": str(p.fixed_append_buckets), "bucket-key": "id"}),
        features=["append", "bucket:fixed", "bucket-key", "duplicates", "format:parquet"],
        sort_key=["id", "v"],
        description="Append table with bucket=%d, bucket-key=id; 2 commits with "
                    "repeated ids (append tables keep duplicates)." % p.fixed_append_buckets)
    state = []
    for c in range(2):
        rows = [{"id": rng.randint(0, 3 * p.rows_per_commit),
                 "v": "c%d-%d" % (c, i), "n": maybe(rng, rng.randint(0, 10 ** 6))}
                for i in range(2 * p.rows_per_commit)]
        tb.write(rows)
        state += rows
        tb.snap(state)
    return tb


@builder
def append_row_tracking(ctx):
    p = ctx.profile
    rng = ctx.rng_for("append_row_tracking")
    schema = pa.schema([("id", pa.int32()), ("v", pa.string())])
    tb = TableBuild(
        ctx, "append_row_tracking",
        Schema.from_pyarrow_schema(schema, options={"row-tracking.enabled": "true"}),
        features=["append", "row-tracking", "_ROW_ID", "first_row_id"],
        sort_key=["id"], row_tracking=True,
        description="Append table with row-tracking.enabled=true (no data evolution); "
                    "2 commits. Expected results include a read with the _ROW_ID "
                    "system column (first_row_id of the file + position).")
    state = []
    rid = 0
    for c in range(2):
        rows = [{"id": 100 * c + i, "v": maybe(rng, rstr(rng, p.words))}
                for i in range(p.rows_per_commit)]
        tb.write(rows)
        for r in rows:
            r["_ROW_ID"] = rid
            rid += 1
        state += rows
        tb.snap(state)
    return tb


# ---------------------------------------------------------------------------
# k. snapshots, tags, overwrite, rollback
# ---------------------------------------------------------------------------

@builder
def append_tags_rollback(ctx):
    p = ctx.profile
    rng = ctx.rng_for("append_tags_rollback")
    schema = pa.schema([("p", pa.string()), ("id", pa.int32()), ("v", pa.string())])
    tb = TableBuild(
        ctx, "append_tags_rollback",
        Schema.from_pyarrow_schema(schema, partition_keys=["p"]),
        features=["append", "partitioned", "tags", "time-travel",
                  "overwrite-partition(OVERWRITE commit, DELETE manifest entries)",
                  "rollback(snapshot removed and re-committed)"],
        sort_key=["id"],
        description="Partitioned append table with history: APPEND, APPEND, "
                    "OVERWRITE of partition p=a, APPEND (+ tag), APPEND that is rolled "
                    "back, then a new APPEND reusing the rolled-back snapshot id. "
                    "Tags v1 (snapshot 1) and v4 (snapshot 4). Every snapshot and tag "
                    "has an expected time-travel read.")
    nid = [1]

    def mk(part, n):
        rows = []
        for _ in range(n):
            rows.append({"p": part, "id": nid[0], "v": rstr(rng, p.words)})
            nid[0] += 1
        return rows

    state = []
    rows = mk("a", 3) + mk("b", 3)
    tb.write(rows)
    state += rows
    tb.snap(state)
    tb.tag("v1")
    rows = mk("a", 2) + mk("c", 2)
    tb.write(rows)
    state += rows
    tb.snap(state)
    rows = mk("a", 2)
    tb.write(rows, overwrite={"p": "a"})
    state = [r for r in state if r["p"] != "a"] + rows
    tb.snap(state)
    rows = mk("d", 3)
    tb.write(rows)
    state += rows
    tb.snap(state)
    tb.tag("v4")
    rolled = mk("b", 4)
    tb.write(rolled)               # snapshot 5 ...
    tb.table.rollback_to(4)        # ... is removed again
    rows = mk("e", 2)
    tb.write(rows)                 # new snapshot 5
    state += rows
    tb.snap(state)
    tb.notes.append("Rows with ids %d..%d were committed in a snapshot 5 that was "
                    "rolled back; they must not be visible anywhere."
                    % (rolled[0]["id"], rolled[-1]["id"]))
    return tb


# ---------------------------------------------------------------------------
# c. primary-key tables, one per merge engine
# ---------------------------------------------------------------------------

def _pk_dedup_generic(ctx, name, fmt="parquet", commits=None, buckets=None,
                      description=None, extra_features=(), extra_opts=None,
                      deletes=True, visible=True):
    p = ctx.profile
    rng = ctx.rng_for(name)
    commits = commits or p.pk_commits
    buckets = buckets or p.pk_buckets
    schema = pa.schema([pk_field("k", pa.int64()), ("name", pa.string()),
                        ("val", pa.float64()), ("cnt", pa.int32()), ("op", pa.string())])
    opts = {"bucket": str(buckets), "file.format": fmt, "rowkind.field": "op"}
    opts.update(extra_opts or {})
    tb = TableBuild(
        ctx, name,
        Schema.from_pyarrow_schema(schema, primary_keys=["k"], options=opts),
        features=["primary-key", "merge-engine:deduplicate", "bucket:fixed",
                  "buckets:%d" % buckets, "format:" + fmt, "merge-on-read",
                  "overlapping-sorted-runs", "rowkind.field(+I/+U/-U/-D)",
                  "delete-rows", "duplicate-keys-in-one-commit"] + list(extra_features),
        sort_key=["k"],
        description=description or (
            "PK table (deduplicate), bucket=%d, %s, %d commits with overlapping keys, "
            "updates and -D/-U rows given through rowkind.field=op. All files are "
            "level-0 sorted runs, so reads must merge them." % (buckets, fmt, commits)))
    if not visible:
        tb.features = [f for f in tb.features
                       if f not in ("merge-on-read", "overlapping-sorted-runs")]
    if name == "pk_dedup":
        tb.features.append("projection")
        tb.projections.append(["val", "k"])
        tb.projections.append(["name"])
    state: Dict = {}
    n = p.rows_per_commit
    keys_seen = []
    for c in range(commits):
        rows = []
        if c == 0:
            for k in range(1, 2 * n + 1):
                rows.append({"k": k, "name": rstr(rng, p.words), "val": rdouble(rng),
                             "cnt": rng.randint(0, 100), "op": "+I"})
        else:
            existing = sorted(k for (k,) in state.keys())
            for k in rng.sample(existing, min(len(existing), n)):
                rows.append({"k": k, "name": maybe(rng, rstr(rng, p.words)),
                             "val": maybe(rng, rdouble(rng)),
                             "cnt": maybe(rng, rng.randint(0, 100)), "op": "+U"})
            if deletes:
                for k in rng.sample(existing, 2):
                    rows.append({"k": k, "name": None, "val": None, "cnt": None,
                                 "op": "-D"})
                # a -U row (UPDATE_BEFORE) as the last record of a key also
                # removes it from a deduplicate read
                if c == 2:
                    k = rng.choice(existing)
                    rows.append({"k": k, "name": "before", "val": None, "cnt": None,
                                 "op": "-U"})
                # delete of a key that never existed
                rows.append({"k": 10 ** 6 + c, "name": None, "val": None,
                             "cnt": None, "op": "-D"})
                # re-insert a key deleted in an earlier commit
                gone = [k for k in keys_seen if (k,) not in state]
                if gone:
                    k = rng.choice(sorted(gone))
                    rows.append({"k": k, "name": "reborn", "val": 0.5, "cnt": c,
                                 "op": "+I"})
            for j in range(n // 2):
                rows.append({"k": 100 * (c + 1) + j, "name": rstr(rng, p.words),
                             "val": rdouble(rng), "cnt": rng.randint(0, 100),
                             "op": "+I"})
            # same key twice in one commit: the later row wins
            k = rng.choice(existing)
            rows.append({"k": k, "name": "dup-first", "val": 1.0, "cnt": 1, "op": "+U"})
            rows.append({"k": k, "name": "dup-second", "val": 2.0, "cnt": 2, "op": "+U"})
        rng.shuffle(rows)
        # keep the two dup rows in order (shuffle may swap them)
        dup_idx = [i for i, r in enumerate(rows) if r["name"] in ("dup-first", "dup-second")]
        if len(dup_idx) == 2 and rows[dup_idx[0]]["name"] == "dup-second":
            rows[dup_idx[0]], rows[dup_idx[1]] = rows[dup_idx[1]], rows[dup_idx[0]]
        tb.write(rows)
        dedup_apply(state, rows, ["k"], "op")
        keys_seen += [r["k"] for r in rows if r["op"] in ("+I", "+U")]
        tb.snap(list(state.values()) if visible else [])
    return tb


@builder
def pk_dedup(ctx):
    return _pk_dedup_generic(ctx, "pk_dedup")


@builder
def pk_dedup_orc(ctx):
    return _pk_dedup_generic(ctx, "pk_dedup_orc", fmt="orc", commits=3)


@builder
def pk_dedup_avro(ctx):
    return _pk_dedup_generic(ctx, "pk_dedup_avro", fmt="avro", commits=3)


@builder
def pk_dedup_partitioned(ctx):
    p = ctx.profile
    rng = ctx.rng_for("pk_dedup_partitioned")
    schema = pa.schema([pk_field("dt", pa.string()), pk_field("hr", pa.int32()),
                        pk_field("id", pa.int64()), ("v", pa.string()),
                        ("amount", pa.decimal128(12, 3))])
    tb = TableBuild(
        ctx, "pk_dedup_partitioned",
        Schema.from_pyarrow_schema(schema, partition_keys=["dt", "hr"],
                                   primary_keys=["dt", "hr", "id"],
                                   options={"bucket": str(p.pk_buckets)}),
        features=["primary-key", "merge-engine:deduplicate", "partitioned",
                  "partition:string", "partition:int", "bucket:fixed",
                  "merge-on-read", "overlapping-sorted-runs"],
        sort_key=["dt", "hr", "id"],
        description="PK table partitioned by (dt STRING, hr INT), PK (dt, hr, id), "
                    "bucket=%d; 3 commits updating keys in several partitions."
                    % p.pk_buckets)
    parts = [("2024-01-01", 0), ("2024-01-01", 13), ("2024-01-02", 0), ("2024-01-03", 23)]
    state: Dict = {}
    for c in range(3):
        rows = []
        for _ in range(p.rows_per_commit + 4):
            dt, hr = rng.choice(parts)
            rows.append({"dt": dt, "hr": hr, "id": rng.randint(1, 6),
                         "v": "c%d-%s" % (c, rstr(rng, p.words)),
                         "amount": maybe(rng, D(rng.randint(-10 ** 8, 10 ** 8)) / 1000)})
        tb.write(rows)
        dedup_apply(state, rows, ["dt", "hr", "id"])
        tb.snap(list(state.values()))
    return tb


@builder
def pk_dedup_seqfield(ctx):
    p = ctx.profile
    rng = ctx.rng_for("pk_dedup_seqfield")
    schema = pa.schema([pk_field("k", pa.int32()), ("seq", pa.int64()), ("v", pa.string())])
    tb = TableBuild(
        ctx, "pk_dedup_seqfield",
        Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
            "bucket": str(p.pk_buckets), "sequence.field": "seq"}),
        features=["primary-key", "merge-engine:deduplicate", "sequence.field",
                  "out-of-order-updates", "merge-on-read"],
        sort_key=["k"],
        description="PK table with sequence.field=seq: later commits carry lower seq "
                    "values for some keys, which must lose against the older row; "
                    "equal seq falls back to commit order (later wins).")
    state: Dict = {}
    for c in range(3):
        rows = []
        for k in range(1, p.rows_per_commit + 3):
            if c > 0 and rng.random() < 0.3:
                continue
            rows.append({"k": k, "seq": rng.choice([5, 10, 10, 20, 30]),
                         "v": "c%d-k%d" % (c, k)})
        tb.write(rows)
        for r in rows:
            cur = state.get(r["k"])
            if cur is None or r["seq"] >= cur["seq"]:
                state[r["k"]] = dict(r)
        tb.snap(list(state.values()))
    return tb


@builder
def pk_partial_update(ctx):
    p = ctx.profile
    rng = ctx.rng_for("pk_partial_update")
    schema = pa.schema([pk_field("k", pa.int64()), ("a", pa.string()), ("b", pa.int32()),
                        ("c", pa.float64()), ("d", pa.date32()), ("e", pa.bool_())])
    tb = TableBuild(
        ctx, "pk_partial_update",
        Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
            "bucket": str(p.pk_buckets), "merge-engine": "partial-update"}),
        features=["primary-key", "merge-engine:partial-update", "nulls-do-not-overwrite",
                  "merge-on-read", "overlapping-sorted-runs", "bucket:fixed"],
        sort_key=["k"],
        description="PK table, merge-engine=partial-update, bucket=%d; 4 commits each "
                    "setting a random subset of columns (others NULL). NULL never "
                    "overwrites; keys whose columns were never set stay NULL."
                    % p.pk_buckets)
    state: Dict = {}
    cols = ["a", "b", "c", "d", "e"]
    gens = {"a": lambda: rstr(rng, p.words), "b": lambda: rng.randint(-1000, 1000),
            "c": lambda: rdouble(rng), "d": lambda: rdate(rng), "e": lambda: rng.random() < 0.5}
    for c in range(4):
        rows = []
        for k in rng.sample(range(1, 2 * p.rows_per_commit + 1), p.rows_per_commit + 2):
            r = {"k": k}
            for col in cols:
                r[col] = gens[col]() if rng.random() < 0.4 else None
            rows.append(r)
        if c == 3:  # two partial rows for one key inside one commit
            k = rows[0]["k"]
            rows.append({"k": k, "a": "same-commit-1", "b": None, "c": None, "d": None, "e": None})
            rows.append({"k": k, "a": None, "b": 4242, "c": None, "d": None, "e": None})
        tb.write(rows)
        partial_update_apply(state, rows, ["k"])
        tb.snap(list(state.values()))
    tb.notes.append("partial-update with fields.<f>.sequence-group is not supported by "
                    "pypaimon 2.1.0 (NotImplementedError), so no sequence-group table.")
    return tb


AGG_FUNCS = {
    "s_sum": "sum", "d_sum": "sum", "p_prod": "product", "mx": "max",
    "mx_s": "max", "mn": "min", "mn_d": "min", "lv": "last_value",
    "lnn": "last_non_null_value", "fv": "first_value",
    "fnn": "first_non_null_value", "la": "listagg", "ba": "bool_and",
    "bo": "bool_or", "coll": "collect",
}


def _agg(fn, acc, inp, first, delim=","):
    """Model of one aggregation step (acc, input) -> acc."""
    if fn == "last_value":
        return inp
    if fn == "last_non_null_value":
        return acc if inp is None else inp
    if fn == "first_value":
        return inp if first else acc
    if fn == "first_non_null_value":
        return acc if acc is not None else inp
    if fn == "listagg":
        # Java FieldListaggAgg: NULL or blank input keeps the accumulator;
        # NULL or blank accumulator is replaced by the input
        if inp is None or all(ch.isspace() for ch in inp):
            return acc
        if acc is None or all(ch.isspace() for ch in acc):
            return inp
        return acc + delim + inp
    if acc is None or inp is None:
        return acc if inp is None else inp
    if fn == "sum":
        return acc + inp
    if fn == "product":
        return acc * inp
    if fn == "max":
        return max(acc, inp)
    if fn == "min":
        return min(acc, inp)
    if fn == "bool_and":
        return acc and inp
    if fn == "bool_or":
        return acc or inp
    if fn == "collect":
        return list(acc) + list(inp)
    raise ValueError(fn)


@builder
def pk_aggregation(ctx):
    p = ctx.profile
    rng = ctx.rng_for("pk_aggregation")
    schema = pa.schema([
        pk_field("k", pa.int64()), ("s_sum", pa.int64()), ("d_sum", pa.decimal128(12, 3)),
        ("p_prod", pa.int64()), ("mx", pa.int32()), ("mx_s", pa.string()),
        ("mn", pa.float64()), ("mn_d", pa.date32()), ("lv", pa.string()),
        ("lnn", pa.string()), ("fv", pa.string()), ("fnn", pa.string()),
        ("la", pa.string()), ("ba", pa.bool_()), ("bo", pa.bool_()),
        ("coll", pa.list_(pa.int32())), ("note", pa.string()),
    ])
    opts = {"bucket": str(p.pk_buckets), "merge-engine": "aggregation",
            "fields.la.list-agg-delimiter": ","}
    for col, fn in AGG_FUNCS.items():
        opts["fields.%s.aggregate-function" % col] = fn
    tb = TableBuild(
        ctx, "pk_aggregation",
        Schema.from_pyarrow_schema(schema, primary_keys=["k"], options=opts),
        features=["primary-key", "merge-engine:aggregation", "merge-on-read",
                  "bucket:fixed"] + ["agg:%s" % f for f in sorted(set(AGG_FUNCS.values()))]
        + ["agg:default(last_non_null_value)"],
        sort_key=["k"],
        description="PK table, merge-engine=aggregation, bucket=%d, 4 commits (and "
                    "repeated keys inside commits). Columns use sum (BIGINT and "
                    "DECIMAL), product, max (INT, STRING), min (DOUBLE, DATE), last_value, "
                    "last_non_null_value, first_value, first_non_null_value, listagg "
                    "(delimiter ','), bool_and, bool_or, collect (ARRAY<INT>, not "
                    "distinct); column 'note' has no function and uses the default "
                    "last_non_null_value." % p.pk_buckets)
    gens = {
        "s_sum": lambda: rng.randint(-1000, 1000),
        "d_sum": lambda: D(rng.randint(-100000, 100000)) / 1000,
        "p_prod": lambda: rng.choice([-2, -1, 1, 2, 3]),
        "mx": lambda: rng.randint(-50, 50),
        "mx_s": lambda: rstr(rng, p.words),
        "mn": lambda: rdouble(rng),
        "mn_d": lambda: rdate(rng),
        "lv": lambda: rstr(rng, p.words),
        "lnn": lambda: rstr(rng, p.words),
        "fv": lambda: rstr(rng, p.words),
        "fnn": lambda: rstr(rng, p.words),
        "la": lambda: rng.choice(p.words),
        "ba": lambda: rng.random() < 0.7,
        "bo": lambda: rng.random() < 0.3,
        "coll": lambda: [rng.randint(0, 9) for _ in range(rng.randint(0, 3))],
        "note": lambda: rstr(rng, p.words),
    }
    state: Dict = {}
    for c in range(4):
        rows = []
        keys = rng.sample(range(1, p.rows_per_commit + 5), p.rows_per_commit)
        keys += rng.sample(keys, 2)          # repeated keys in one commit
        for k in keys:
            r = {"k": k}
            for col in gens:
                r[col] = gens[col]() if rng.random() < 0.75 else None
            rows.append(r)
        tb.write(rows)
        for r in rows:
            k = r["k"]
            cur = state.get(k)
            if cur is None:
                cur = {"k": k}
                for col in gens:
                    fn = AGG_FUNCS.get(col, "last_non_null_value")
                    cur[col] = _agg(fn, None, r[col], True)
                state[k] = cur
            else:
                for col in gens:
                    fn = AGG_FUNCS.get(col, "last_non_null_value")
                    cur[col] = _agg(fn, cur[col], r[col], False)
        tb.snap(list(state.values()))
    tb.notes.append("Rows with -D/-U row kinds are not written: pypaimon's aggregation "
                    "engine rejects retractions (NotImplementedError).")
    return tb


@builder
def pk_agg_merge_map(ctx):
    p = ctx.profile
    rng = ctx.rng_for("pk_agg_merge_map")
    schema = pa.schema([pk_field("k", pa.int32()),
                        ("m", pa.map_(pa.string(), pa.int32())),
                        ("total", pa.int64())])
    tb = TableBuild(
        ctx, "pk_agg_merge_map",
        Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
            "bucket": "1", "merge-engine": "aggregation",
            "fields.m.aggregate-function": "merge_map",
            "fields.total.aggregate-function": "sum"}),
        features=["primary-key", "merge-engine:aggregation", "agg:merge_map", "agg:sum",
                  "map-type"],
        sort_key=["k"],
        description="Aggregation table with a MAP<STRING,INT> merged by merge_map "
                    "(later value wins per map key) and a sum column; 3 commits, every "
                    "key present in every commit.")
    tb.notes.append("Every key is written in every commit with a non-NULL map: pypaimon "
                    "2.1.0 fails to read (ArrowTypeError) when one merge batch mixes "
                    "merged and un-merged MAP values.")
    state: Dict = {}
    keys = list(range(1, 5))
    for c in range(3):
        rows = []
        for k in keys:
            m = [(rng.choice(["a", "b", "c", "d"]), rng.randint(0, 99)) for _ in range(2)]
            dm = {}
            for mk, mv in m:
                dm[mk] = mv
            rows.append({"k": k, "m": list(dm.items()), "total": rng.randint(0, 10)})
        tb.write(rows)
        for r in rows:
            cur = state.get(r["k"])
            if cur is None:
                state[r["k"]] = {"k": r["k"], "m": dict(r["m"]), "total": r["total"]}
            else:
                cur["m"].update(dict(r["m"]))
                cur["total"] += r["total"]
        tb.snap([{"k": v["k"], "m": list(v["m"].items()), "total": v["total"]}
                 for v in state.values()])
    return tb


def _first_row_table(ctx, name, dv_mor: bool):
    p = ctx.profile
    rng = ctx.rng_for(name)
    schema = pa.schema([pk_field("k", pa.int64()), ("v", pa.string()), ("ts", pa.timestamp("ms"))])
    opts = {"bucket": str(p.pk_buckets), "merge-engine": "first-row"}
    feats = ["primary-key", "merge-engine:first-row", "bucket:fixed"]
    if dv_mor:
        opts.update({"deletion-vectors.enabled": "true",
                     "deletion-vectors.merge-on-read": "true"})
        feats += ["deletion-vectors.enabled", "deletion-vectors.merge-on-read",
                  "merge-on-read", "overlapping-sorted-runs"]
        desc = ("first-row PK table with deletion-vectors.enabled=true and "
                "deletion-vectors.merge-on-read=true: level-0 files are read and "
                "merged, the first written row per key wins.")
    else:
        feats += ["batch-scan-skips-level-0"]
        desc = ("first-row PK table written only by pypaimon (no compaction): every "
                "file is level 0 and a batch scan of a first-row table skips level-0 "
                "files (CoreOptions.batchScanSkipLevel0), so the expected result is "
                "EMPTY at every snapshot.")
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(
        schema, primary_keys=["k"], options=opts), features=feats, sort_key=["k"],
        description=desc)
    state: Dict = {}
    base = datetime.datetime(2024, 5, 1)
    for c in range(3):
        rows = []
        for k in rng.sample(range(1, 2 * p.rows_per_commit), p.rows_per_commit):
            rows.append({"k": k, "v": "c%d-%s" % (c, rstr(rng, p.words)),
                         "ts": base + datetime.timedelta(milliseconds=rng.randint(0, 10 ** 9))})
        k = rows[0]["k"]
        rows.append({"k": k, "v": "c%d-dup-loses" % c, "ts": base})
        tb.write(rows)
        for r in rows:
            state.setdefault(r["k"], dict(r))
        tb.snap(list(state.values()) if dv_mor else [])
    return tb


@builder
def pk_first_row(ctx):
    return _first_row_table(ctx, "pk_first_row", dv_mor=False)


@builder
def pk_first_row_dv_mor(ctx):
    return _first_row_table(ctx, "pk_first_row_dv_mor", dv_mor=True)


# ---------------------------------------------------------------------------
# d. dynamic bucket, postpone bucket
# ---------------------------------------------------------------------------

@builder
def pk_dynamic_bucket(ctx):
    p = ctx.profile
    rng = ctx.rng_for("pk_dynamic_bucket")
    schema = pa.schema([pk_field("k", pa.int64()), ("v", pa.string()), ("n", pa.int32())])
    tb = TableBuild(
        ctx, "pk_dynamic_bucket",
        Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
            "bucket": "-1", "dynamic-bucket.target-row-num": str(p.dyn_target_rows)}),
        features=["primary-key", "bucket:dynamic(-1)", "HASH-index-files",
                  "merge-engine:deduplicate", "merge-on-read"],
        sort_key=["k"],
        description="PK table with dynamic bucket mode (bucket=-1, "
                    "dynamic-bucket.target-row-num=%d) so keys spread over several "
                    "buckets with HASH index files; 3 commits with updates that must "
                    "land in the key's existing bucket." % p.dyn_target_rows)
    state: Dict = {}
    nk = 3 * p.rows_per_commit // 2
    for c in range(3):
        rows = []
        if c == 0:
            ks = list(range(1, nk + 1))
        else:
            ks = rng.sample(sorted(k for (k,) in state), nk // 2) + \
                list(range(nk * c + 1, nk * c + 4))
        for k in ks:
            rows.append({"k": k, "v": "c%d-%s" % (c, rstr(rng, p.words)),
                         "n": maybe(rng, rng.randint(0, 1000))})
        tb.write(rows)
        dedup_apply(state, rows, ["k"])
        tb.snap(list(state.values()))
    return tb


@builder
def pk_postpone(ctx):
    p = ctx.profile
    rng = ctx.rng_for("pk_postpone")
    schema = pa.schema([pk_field("k", pa.int64()), ("v", pa.string())])
    tb = TableBuild(
        ctx, "pk_postpone",
        Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
            "bucket": "-2", "postpone.default-bucket-num": str(p.postpone_buckets)}),
        features=["primary-key", "bucket:postpone(-2)", "postpone-fixed-bucket-write",
                  "bucket-postpone-files-invisible", "merge-on-read"],
        sort_key=["k"],
        description="Postpone-bucket PK table (bucket=-2). Commits 1-2 were written "
                    "with pypaimon's postpone fixed-bucket writer (real buckets, "
                    "postpone.default-bucket-num=%d); commit 3 used the normal batch "
                    "writer, which stores rows in bucket-postpone. Batch reads only "
                    "read real buckets, so commit 3 is invisible." % p.postpone_buckets)
    state: Dict = {}
    fixed = lambda t: t.new_postpone_fixed_bucket_write_builder()  # noqa: E731
    rows = [{"k": k, "v": "c0-%d" % k} for k in range(1, p.rows_per_commit + 1)]
    tb.write(rows, builder=fixed)
    dedup_apply(state, rows, ["k"])
    tb.snap(list(state.values()))
    rows = [{"k": k, "v": "c1-%d" % k} for k in rng.sample(range(1, 2 * p.rows_per_commit), p.rows_per_commit)]
    tb.write(rows, builder=fixed)
    dedup_apply(state, rows, ["k"])
    tb.snap(list(state.values()))
    rows = [{"k": k, "v": "c2-postponed-%d" % k} for k in range(1, 4 * p.rows_per_commit, 3)]
    tb.write(rows)
    tb.snap(list(state.values()))
    return tb


# ---------------------------------------------------------------------------
# e. deletion vectors on PK tables
# ---------------------------------------------------------------------------

@builder
def pk_dv(ctx):
    return _pk_dedup_generic(
        ctx, "pk_dv", commits=3,
        extra_opts={"deletion-vectors.enabled": "true"},
        extra_features=["deletion-vectors.enabled", "batch-scan-skips-level-0"],
        visible=False,
        description="Deduplicate PK table with deletion-vectors.enabled=true written "
                    "only by pypaimon: no compaction ran, so there are no deletion "
                    "vector files and every data file is level 0. A batch scan of a DV "
                    "table skips level 0 (unless deletion-vectors.merge-on-read), so "
                    "the expected result is EMPTY at every snapshot.")


@builder
def pk_dv_mor(ctx):
    return _pk_dedup_generic(
        ctx, "pk_dv_mor", commits=3,
        extra_opts={"deletion-vectors.enabled": "true",
                    "deletion-vectors.merge-on-read": "true"},
        extra_features=["deletion-vectors.enabled", "deletion-vectors.merge-on-read"],
        description="Deduplicate PK table with deletion-vectors.enabled=true and "
                    "deletion-vectors.merge-on-read=true: level-0 files are read with "
                    "merge-on-read (same semantics as pk_dedup).")


@builder
def pk_changelog_input(ctx):
    return _pk_dedup_generic(
        ctx, "pk_changelog_input", commits=3,
        extra_opts={"changelog-producer": "input"},
        extra_features=["changelog-producer:input", "changelog-files"],
        description="Deduplicate PK table with changelog-producer=input: every commit "
                    "also writes changelog-*.parquet files and a changelog manifest "
                    "list. Batch reads ignore the changelog.")


# ---------------------------------------------------------------------------
# f. schema evolution
# ---------------------------------------------------------------------------

@builder
def evo_append(ctx):
    from pypaimon.schema.schema_change import Move, SchemaChange
    p = ctx.profile
    rng = ctx.rng_for("evo_append")
    schema = pa.schema([("id", pa.int32()), ("a", pa.string()), ("b", pa.int32()),
                        ("c", pa.float32())])
    tb = TableBuild(
        ctx, "evo_append", Schema.from_pyarrow_schema(schema),
        features=["append", "schema-evolution", "add-column", "rename-column",
                  "drop-column", "type-promotion(INT->BIGINT)", "move-column",
                  "re-added-column-name(new field id)", "time-travel-old-schema"],
        sort_key=["id"],
        description="Append table across 3 schemas. schema-0 (id INT, a STRING, b INT, "
                    "c FLOAT); schema-1: add d STRING, rename a->a2, b INT->BIGINT, drop c; "
                    "schema-2: add a NEW column named c (DOUBLE, new field id, must read "
                    "NULL for old rows) and move d first. One commit per schema; each "
                    "snapshot is also read by time travel with its own schema.")
    tb.projections.append(["c", "a2", "id"])
    tb.features.append("projection")
    rows0 = [{"id": i, "a": rstr(rng, p.words), "b": rng.randint(-100, 100),
              "c": rng.choice([0.5, 1.25, -3.0, None])} for i in range(1, 6)]
    tb.write(rows0)
    tb.snap(rows0)
    tb.alter([SchemaChange.add_column("d", AtomicType("STRING")),
              SchemaChange.rename_column("a", "a2"),
              SchemaChange.update_column_type("b", AtomicType("BIGINT")),
              SchemaChange.drop_column("c")])
    rows1 = [{"id": i, "a2": rstr(rng, p.words), "b": 10 ** 10 + i, "d": "d%d" % i}
             for i in range(6, 10)]
    tb.write(rows1)
    state = [{"id": r["id"], "a2": r["a"], "b": r["b"], "d": None} for r in rows0] + rows1
    tb.snap(state)
    tb.alter([SchemaChange.add_column("c", AtomicType("DOUBLE")),
              SchemaChange.update_column_position(Move.first("d"))])
    rows2 = [{"d": "x%d" % i, "id": i, "a2": None, "b": -i, "c": i + 0.25}
             for i in range(10, 13)]
    tb.write(rows2)
    state = [dict(r, c=None) for r in state] + rows2
    tb.snap(state)
    return tb


@builder
def evo_pk(ctx):
    from pypaimon.schema.schema_change import SchemaChange
    p = ctx.profile
    rng = ctx.rng_for("evo_pk")
    schema = pa.schema([pk_field("k", pa.int64()), ("v1", pa.string()), ("v2", pa.int32())])
    tb = TableBuild(
        ctx, "evo_pk", Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
            "bucket": str(p.pk_buckets)}),
        features=["primary-key", "schema-evolution", "add-column", "rename-column",
                  "type-promotion(INT->BIGINT)", "drop-column",
                  "merge-across-schema-versions"],
        sort_key=["k"],
        description="Deduplicate PK table (bucket=%d) whose schema changes between "
                    "commits: schema-1 adds v3 DOUBLE, renames v1->name and widens v2 "
                    "INT->BIGINT; schema-2 drops v3. Level-0 files of different schema "
                    "versions must be merged per key." % p.pk_buckets)
    rows = [{"k": k, "v1": rstr(rng, p.words), "v2": rng.randint(0, 99)}
            for k in range(1, 9)]
    tb.write(rows)
    state = {r["k"]: dict(r) for r in rows}
    tb.snap(list(state.values()))
    tb.alter([SchemaChange.add_column("v3", AtomicType("DOUBLE")),
              SchemaChange.rename_column("v1", "name"),
              SchemaChange.update_column_type("v2", AtomicType("BIGINT"))])
    state = {k: {"k": k, "name": r["v1"], "v2": r["v2"], "v3": None} for k, r in state.items()}
    rows = [{"k": k, "name": "s1-%d" % k, "v2": 2 ** 40 + k, "v3": k / 4}
            for k in (2, 4, 6, 10)]
    tb.write(rows)
    for r in rows:
        state[r["k"]] = dict(r)
    tb.snap(list(state.values()))
    tb.alter([SchemaChange.drop_column("v3")])
    state = {k: {kk: vv for kk, vv in r.items() if kk != "v3"} for k, r in state.items()}
    rows = [{"k": k, "name": "s2-%d" % k, "v2": -k} for k in (1, 4, 11)]
    tb.write(rows)
    for r in rows:
        state[r["k"]] = dict(r)
    tb.snap(list(state.values()))
    return tb


# ---------------------------------------------------------------------------
# g. all data types
# ---------------------------------------------------------------------------

AVRO_UNSUPPORTED = ("t_binary4", "t_ts9", "t_ltz9", "t_map_str_int", "t_map_int_arr",
                    "t_row_nested")


def _strip_null_elements(v):
    """Avro arrays written by pypaimon 2.1.0 cannot hold NULL elements."""
    if isinstance(v, list):
        return [_strip_null_elements(x) for x in v if x is not None]
    if isinstance(v, dict):
        return {k: _strip_null_elements(x) for k, x in v.items()}
    return v


def _all_types_schema(fmt: str) -> Schema:
    fields = [
        ("id", pa.int32()), ("t_tinyint", pa.int8()), ("t_smallint", pa.int16()),
        ("t_int", pa.int32()), ("t_bigint", pa.int64()), ("t_float", pa.float32()),
        ("t_double", pa.float64()),
        ("t_dec_4_2", pa.decimal128(4, 2)), ("t_dec_9_2", pa.decimal128(9, 2)),
        ("t_dec_18_6", pa.decimal128(18, 6)), ("t_dec_20_0", pa.decimal128(20, 0)),
        ("t_dec_38_10", pa.decimal128(38, 10)),
        ("t_string", pa.string()), ("t_varchar", pa.string()), ("t_char", pa.string()),
        ("t_bytes", pa.binary()), ("t_varbinary", pa.binary()),
        ("t_binary4", pa.binary(4)),
        ("t_boolean", pa.bool_()), ("t_date", pa.date32()), ("t_time", pa.time32("ms")),
        ("t_ts0", pa.timestamp("s")), ("t_ts3", pa.timestamp("ms")),
        ("t_ts6", pa.timestamp("us")), ("t_ts9", pa.timestamp("ns")),
        ("t_ltz3", pa.timestamp("ms", tz="UTC")), ("t_ltz6", pa.timestamp("us", tz="UTC")),
        ("t_ltz9", pa.timestamp("ns", tz="UTC")),
        ("t_array_int", pa.list_(pa.int32())), ("t_array_str", pa.list_(pa.string())),
        ("t_array_array", pa.list_(pa.list_(pa.int64()))),
        ("t_map_str_int", pa.map_(pa.string(), pa.int64())),
        ("t_map_int_arr", pa.map_(pa.int32(), pa.list_(pa.string()))),
        ("t_row", pa.struct([("x", pa.int32()), ("y", pa.string()),
                             ("z", pa.list_(pa.float64()))])),
        ("t_row_nested", pa.struct([("inner", pa.struct([("a", pa.int64()),
                                                         ("b", pa.date32())])),
                                    ("m", pa.map_(pa.string(), pa.string()))])),
        ("t_array_row", pa.list_(pa.struct([("k", pa.string()), ("v", pa.int32())]))),
    ]
    if fmt == "avro":
        # pypaimon 2.1.0 cannot write BINARY(n) (fixed_size_binary) nor
        # nanosecond timestamps (TIMESTAMP(7..9)) to Avro
        fields = [f for f in fields if f[0] not in AVRO_UNSUPPORTED]
    s = Schema.from_pyarrow_schema(pa.schema(fields), options={"file.format": fmt})
    retype = {"t_varchar": "VARCHAR(20)", "t_char": "CHAR(5)",
              "t_varbinary": "VARBINARY(16)", "t_time": "TIME(3)"}
    for f in s.fields:
        if f.name in retype:
            f.type = AtomicType(retype[f.name], f.type.nullable)
    return s


def _all_types_rows(rng, fmt):
    ts = datetime.datetime
    # pyarrow's ORC writer goes through nanoseconds: keep ORC timestamps in
    # the int64-nanosecond range (years 1678..2261)
    far = fmt != "orc"
    rows = [
        {  # 1: ordinary values
            "id": 1, "t_tinyint": 7, "t_smallint": -300, "t_int": 123456, "t_bigint": 9876543210,
            "t_float": 1.5, "t_double": -2.25,
            "t_dec_4_2": D("12.34"), "t_dec_9_2": D("1234567.89"),
            "t_dec_18_6": D("123456789012.345678"), "t_dec_20_0": D("12345678901234567890"),
            "t_dec_38_10": D("1234567890123456789012345678.0123456789"),
            "t_string": "h\u00e9llo w\u00f6rld", "t_varchar": "varchar", "t_char": "abcde",
            "t_bytes": b"\x00\x01\x02\xff", "t_varbinary": b"vb", "t_binary4": b"abcd",
            "t_boolean": True, "t_date": datetime.date(2024, 2, 29),
            "t_time": datetime.time(12, 34, 56, 789000),
            "t_ts0": ts(2024, 1, 2, 3, 4, 5), "t_ts3": ts(2024, 1, 2, 3, 4, 5, 678000),
            "t_ts6": ts(2024, 1, 2, 3, 4, 5, 678901), "t_ts9": 1704164645678901234,
            "t_ltz3": ts(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
            "t_ltz6": ts(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
            "t_ltz9": 1704164645678901234,
            "t_array_int": [1, None, 3], "t_array_str": ["a", None, ""],
            "t_array_array": [[1, 2], [], None, [3]],
            "t_map_str_int": [("k1", 1), ("k2", None)],
            "t_map_int_arr": [(1, ["x", "y"]), (-2, [])],
            "t_row": {"x": 1, "y": "s", "z": [1.0, -0.5]},
            "t_row_nested": {"inner": {"a": 5, "b": datetime.date(2000, 1, 1)},
                             "m": [("a", "b")]},
            "t_array_row": [{"k": "a", "v": 1}, {"k": None, "v": None}],
        },
        {"id": 2},  # 2: every column NULL
        {  # 3: extremes
            "id": 3, "t_tinyint": -128, "t_smallint": 32767, "t_int": -2 ** 31,
            "t_bigint": 2 ** 63 - 1, "t_float": float("nan"), "t_double": float("-inf"),
            "t_dec_4_2": D("-99.99"), "t_dec_9_2": D("9999999.99"),
            "t_dec_18_6": D("-999999999999.999999"), "t_dec_20_0": D("-99999999999999999999"),
            "t_dec_38_10": D("-9999999999999999999999999999.9999999999"),
            "t_string": "", "t_varchar": "\u65e5\u672c\u8a9e \U0001F680", "t_char": "     ",
            "t_bytes": b"", "t_varbinary": b"\xff" * 16, "t_binary4": b"\x00\x00\x00\x00",
            "t_boolean": False, "t_date": datetime.date(1900, 1, 1),
            "t_time": datetime.time(23, 59, 59, 999000),
            "t_ts0": ts(1900, 1, 1, 0, 0, 0), "t_ts3": ts(1969, 12, 31, 23, 59, 59, 999000),
            "t_ts6": (ts(9999, 12, 31, 23, 59, 59, 999999) if far
                      else ts(2261, 12, 31, 23, 59, 59, 999999)), "t_ts9": -1,
            "t_ltz3": ts(1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC),
            "t_ltz6": ts(1899, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            "t_ltz9": 7258118400123456789,
            "t_array_int": [], "t_array_str": [], "t_array_array": [],
            "t_map_str_int": [], "t_map_int_arr": [],
            "t_row": {"x": None, "y": None, "z": None},
            "t_row_nested": {"inner": None, "m": None}, "t_array_row": [],
        },
        {  # 4: more extremes
            "id": 4, "t_tinyint": 127, "t_smallint": -32768, "t_int": 2 ** 31 - 1,
            "t_bigint": -2 ** 63, "t_float": float("inf"), "t_double": -0.0,
            "t_dec_4_2": D("0.01"), "t_dec_9_2": D("-0.10"), "t_dec_18_6": D("0.000001"),
            "t_dec_20_0": D("0"), "t_dec_38_10": D("0.0000000001"),
            "t_string": "x" * 1000, "t_varchar": "tab\tnew\nline\"quote", "t_char": "\u00e9\u00e9\u00e9\u00e9\u00e9",
            "t_bytes": bytes(range(256)), "t_varbinary": None, "t_binary4": b"\xff\xfe\xfd\xfc",
            "t_boolean": None, "t_date": datetime.date(9999, 12, 31),
            "t_time": datetime.time(0, 0, 0), "t_ts0": ts(2262, 4, 11, 0, 0, 0),
            "t_ts3": ts(1, 1, 1, 0, 0, 0, 1000) if far else ts(1678, 1, 1, 0, 0, 0, 1000),
            "t_ts6": ts(1970, 1, 1, 0, 0, 0, 1), "t_ts9": 0,
            "t_ltz3": None, "t_ltz6": ts(2038, 1, 19, 3, 14, 8, 0, tzinfo=UTC),
            "t_ltz9": -9223372036854775807,
            "t_array_int": [None], "t_array_str": [None], "t_array_array": [None, []],
            "t_map_str_int": [("", 0)], "t_map_int_arr": [(0, None)],
            "t_row": None, "t_row_nested": {"inner": {"a": None, "b": None}, "m": []},
            "t_array_row": [None],
        },
    ]
    for i in range(5, 9):  # some random rows
        rows.append({
            "id": i, "t_tinyint": rng.randint(-128, 127), "t_smallint": rng.randint(-2 ** 15, 2 ** 15 - 1),
            "t_int": rng.randint(-2 ** 31, 2 ** 31 - 1), "t_bigint": rng.randint(-2 ** 63, 2 ** 63 - 1),
            "t_float": rng.choice([0.125, 3.0, -7.5, 1e10]), "t_double": rng.uniform(-1e6, 1e6),
            "t_dec_4_2": D(rng.randint(-9999, 9999)) / 100,
            "t_dec_9_2": D(rng.randint(-10 ** 9 + 1, 10 ** 9 - 1)) / 100,
            "t_dec_18_6": D(rng.randint(-10 ** 18 + 1, 10 ** 18 - 1)) / 10 ** 6,
            "t_dec_20_0": D(rng.randint(-10 ** 20 + 1, 10 ** 20 - 1)),
            "t_dec_38_10": D(rng.randint(-10 ** 38 + 1, 10 ** 38 - 1)) / 10 ** 10,
            "t_string": rstr(rng, ["r", "s", "t"]), "t_varchar": "v%d" % i, "t_char": "c%04d" % i,
            "t_bytes": bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 8))),
            "t_varbinary": bytes([i]), "t_binary4": bytes([i, i, i, i]),
            "t_boolean": rng.random() < 0.5, "t_date": rdate(rng),
            "t_time": datetime.time(rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59),
                                    rng.randint(0, 999) * 1000),
            "t_ts0": ts(2000, 1, 1) + datetime.timedelta(seconds=rng.randint(0, 10 ** 9)),
            "t_ts3": ts(2000, 1, 1) + datetime.timedelta(milliseconds=rng.randint(0, 10 ** 12)),
            "t_ts6": rts_us(rng), "t_ts9": rng.randint(-10 ** 18, 4 * 10 ** 18),
            "t_ltz3": ts(2000, 1, 1, tzinfo=UTC) + datetime.timedelta(milliseconds=rng.randint(0, 10 ** 12)),
            "t_ltz6": rts_us(rng).replace(tzinfo=UTC), "t_ltz9": rng.randint(0, 4 * 10 ** 18),
            "t_array_int": [rng.randint(0, 9) for _ in range(rng.randint(0, 4))],
            "t_array_str": [rng.choice(["p", "q", None]) for _ in range(2)],
            "t_array_array": [[rng.randint(0, 5)] for _ in range(2)],
            "t_map_str_int": [("m%d" % j, rng.randint(0, 9)) for j in range(rng.randint(0, 3))],
            "t_map_int_arr": [(j, ["e%d" % j]) for j in range(rng.randint(0, 2))],
            "t_row": {"x": i, "y": "y%d" % i, "z": [float(i)]},
            "t_row_nested": {"inner": {"a": -i, "b": rdate(rng)}, "m": [("k", "v%d" % i)]},
            "t_array_row": [{"k": "k%d" % i, "v": i}],
        })
    if fmt == "avro":
        for r in rows:
            for c in AVRO_UNSUPPORTED:
                r.pop(c, None)
            for c in list(r):
                r[c] = _strip_null_elements(r[c])
    return rows


def _all_types(ctx, fmt):
    name = "all_types_%s" % fmt
    rng = ctx.rng_for(name)
    tb = TableBuild(
        ctx, name, _all_types_schema(fmt),
        features=["append", "format:" + fmt, "all-types", "decimal", "timestamp",
                  "timestamp_ltz", "time", "nested-types", "array", "map", "row",
                  "extreme-values", "NaN/Infinity", "unicode"],
        sort_key=["id"],
        description="Every Paimon data type that pypaimon can write to %s: TINYINT.."
                    "BIGINT, FLOAT, DOUBLE, DECIMAL(4,2)/(9,2)/(18,6)/(20,0)/(38,10), "
                    "STRING, VARCHAR(20), CHAR(5), BYTES, VARBINARY(16)%s, BOOLEAN, DATE, "
                    "TIME(3), TIMESTAMP(0/3/6/9), TIMESTAMP_LTZ(3/6/9), ARRAY (incl. "
                    "nested), MAP, ROW (incl. nested) and ARRAY<ROW>. Row 2 is all NULL, "
                    "rows 3-4 hold extreme values (min/max, NaN, +-Infinity, -0.0, "
                    "empty strings/arrays/maps, far dates).%s"
                    % (fmt, "" if fmt == "avro" else ", BINARY(4)",
                       " Avro subset: see notes." if fmt == "avro" else ""))
    tb.projections.append(["t_row", "t_ts6", "id"])
    rows = _all_types_rows(rng, fmt)
    tb.write(rows[:4])
    tb.snap(rows[:4])
    tb.write(rows[4:])
    tb.snap(rows)
    if fmt == "avro":
        tb.notes.append("Left out for Avro because pypaimon 2.1.0 cannot write them: "
                        "BINARY(4) ('Unsupported pyarrow type for Avro conversion: "
                        "fixed_size_binary[4]'), TIMESTAMP(9)/TIMESTAMP_LTZ(9) ('Avro does "
                        "not support pyarrow timestamp with unit ns'), every MAP column "
                        "(t_map_str_int, t_map_int_arr, and t_row_nested which contains a "
                        "map) and NULL array elements (its Avro schema declares array "
                        "items non-nullable), so arrays here have no NULL elements.")
    if fmt == "orc":
        tb.notes.append("ORC timestamps stay within 1678..2261: pyarrow's ORC writer "
                        "converts through int64 nanoseconds and silently wraps values "
                        "outside that range (e.g. 9999-12-31 reads back as 1816-03-30).")
    tb.notes.append("TIME(3) is written as Arrow time32[ms]; pypaimon maps every Arrow "
                    "time type to TIME(0) when deriving schemas, so the column type was "
                    "set explicitly.")
    return tb


@builder
def all_types_parquet(ctx):
    return _all_types(ctx, "parquet")


@builder
def all_types_orc(ctx):
    return _all_types(ctx, "orc")


@builder
def all_types_avro(ctx):
    return _all_types(ctx, "avro")


@builder
def variant_parquet(ctx):
    from pypaimon.data.generic_variant import GenericVariant
    schema = pa.schema([("id", pa.int32()),
                        ("payload", pa.struct([pa.field("value", pa.binary(), nullable=False),
                                               pa.field("metadata", pa.binary(), nullable=False)]))])
    tb = TableBuild(
        ctx, "variant_parquet", Schema.from_pyarrow_schema(schema),
        features=["append", "format:parquet", "variant-type"],
        sort_key=["id"],
        description="VARIANT column (unshredded Parquet Variant binary: struct of value "
                    "and metadata). Expected rows carry the raw bytes as hex; the "
                    "decoded JSON of each value is given in notes.")
    values = [{"city": "Berlin", "n": 3, "tags": ["a", "b"], "nested": {"x": None}},
              [1, 2.5, "three", True, None], "just a string", 42, None]
    gv = [GenericVariant.from_python(v) if v is not None else None for v in values]
    data = pa.table({"id": pa.array(list(range(1, len(values) + 1)), pa.int32()),
                     "payload": GenericVariant.to_arrow_array(gv)})
    tb.write(data)
    model = [{"id": i + 1, "payload": (None if g is None else
                                        {"value": g.value(), "metadata": g.metadata()})}
             for i, g in enumerate(gv)]
    tb.snap(model)
    tb.notes.append("decoded payloads by id: " + json.dumps(
        {str(i + 1): v for i, v in enumerate(values)}, ensure_ascii=False))
    return tb


# ---------------------------------------------------------------------------
# h. blob tables
# ---------------------------------------------------------------------------

DE_OPTS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}


def _blob(rng, size):
    return bytes(rng.getrandbits(8) for _ in range(size)) if size < 4096 else \
        rng.getrandbits(8 * size).to_bytes(size, "little")


@builder
def blob_single(ctx):
    p = ctx.profile
    rng = ctx.rng_for("blob_single")
    schema = pa.schema([("id", pa.int32()), ("label", pa.string()), ("data", pa.large_binary())])
    tb = TableBuild(
        ctx, "blob_single", Schema.from_pyarrow_schema(schema, options=dict(DE_OPTS)),
        features=["append", "blob", "blob-file(.blob)", "row-tracking", "data-evolution",
                  "empty-blob", "null-blob"],
        sort_key=["id"], row_tracking=True,
        description="BLOB column stored in dedicated .blob files; sizes %s bytes plus "
                    "NULLs, over 2 commits." % p.blob_sizes)
    state = []
    rid = 0
    sizes = list(p.blob_sizes)
    half = len(sizes) // 2
    nid = 1
    for c, chunk in enumerate([sizes[:half], sizes[half:]]):
        rows = []
        for s in chunk:
            rows.append({"id": nid, "label": "size-%d" % s, "data": _blob(rng, s)})
            nid += 1
        rows.insert(1, {"id": nid, "label": "null", "data": None})
        nid += 1
        tb.write(rows)
        for r in rows:
            r["_ROW_ID"] = rid
            rid += 1
        state += rows
        tb.snap(state)
    return tb


@builder
def blob_multi(ctx):
    rng = ctx.rng_for("blob_multi")
    schema = pa.schema([("id", pa.int32()), ("thumb", pa.large_binary()),
                        ("name", pa.string()), ("full", pa.large_binary())])
    tb = TableBuild(
        ctx, "blob_multi", Schema.from_pyarrow_schema(schema, options=dict(DE_OPTS)),
        features=["append", "blob", "multiple-blob-columns", "row-tracking",
                  "data-evolution", "null-blob", "empty-blob"],
        sort_key=["id"], row_tracking=True,
        description="Two BLOB columns (one .blob file per column per write) with "
                    "independent NULL/empty patterns; 2 commits.")
    state = []
    rid = 0
    for c in range(2):
        rows = []
        for i in range(4):
            n = 4 * c + i + 1
            rows.append({"id": n,
                         "thumb": None if n % 3 == 0 else _blob(rng, 16 * n),
                         "name": "item-%d" % n,
                         "full": b"" if n % 4 == 0 else (None if n == 2 else _blob(rng, 3000 * n))})
        tb.write(rows)
        for r in rows:
            r["_ROW_ID"] = rid
            rid += 1
        state += rows
        tb.snap(state)
    return tb


@builder
def blob_nested(ctx):
    rng = ctx.rng_for("blob_nested")
    schema = pa.schema([("id", pa.int32()), ("parts", pa.list_(pa.large_binary())),
                        ("named", pa.map_(pa.string(), pa.large_binary()))])
    tb = TableBuild(
        ctx, "blob_nested", Schema.from_pyarrow_schema(schema, options=dict(DE_OPTS)),
        features=["append", "blob", "ARRAY<BLOB>", "MAP<STRING,BLOB>", "row-tracking",
                  "data-evolution"],
        sort_key=["id"], row_tracking=True,
        description="ARRAY<BLOB> and MAP<STRING, BLOB> columns (nested blob layouts in "
                    ".blob files) with NULL elements, empty blobs and empty collections.")
    rows = [
        {"id": 1, "parts": [_blob(rng, 10), b""], "named": [("k", _blob(rng, 5000))]},
        {"id": 2, "parts": None, "named": None},
        {"id": 3, "parts": [None, _blob(rng, 70)], "named": [("a", None), ("b", b"")]},
        {"id": 4, "parts": [], "named": []},
        {"id": 5, "parts": [_blob(rng, 1)] * 3, "named": [("x", _blob(rng, 33)), ("y", _blob(rng, 2))]},
    ]
    tb.write(rows)
    for i, r in enumerate(rows):
        r["_ROW_ID"] = i
    tb.snap(rows)
    return tb


# ---------------------------------------------------------------------------
# i. data evolution: partial column updates, blob updates with placeholders
# ---------------------------------------------------------------------------

def _row_id_table(rows, cols, schema):
    data = {"_ROW_ID": [r["_ROW_ID"] for r in rows]}
    fields = [pa.field("_ROW_ID", pa.int64())]
    for c in cols:
        data[c] = [r[c] for r in rows]
        fields.append(schema.field(c))
    return pa.Table.from_pydict(data, schema=pa.schema(fields))


@builder
def blob_update(ctx):
    rng = ctx.rng_for("blob_update")
    schema = pa.schema([("id", pa.int32()), ("label", pa.string()),
                        ("data", pa.large_binary()), ("size", pa.int64())])
    tb = TableBuild(
        ctx, "blob_update", Schema.from_pyarrow_schema(schema, options=dict(DE_OPTS)),
        features=["append", "blob", "data-evolution", "row-tracking",
                  "update-by-row-id", "blob-partial-update",
                  "blob-placeholder(-2) entries", "field-groups"],
        sort_key=["id"], row_tracking=True,
        description="Blob table updated by _ROW_ID: commit 3 rewrites only the BLOB "
                    "column of some rows, which writes a newer .blob layer whose "
                    "untouched positions are placeholders (length -2) that fall back to "
                    "the older .blob file; commit 4 updates label+size (a new parquet "
                    "field group for the same row-id range); commit 5 updates data again "
                    "in the second file group.")
    state = []
    rid = 0
    for c, n in enumerate([6, 4]):
        rows = []
        for i in range(n):
            sz = rng.choice([0, 5, 64, 700, 5000])
            nid = rid + 1
            rows.append({"id": nid, "label": "orig-%d" % nid,
                         "data": None if nid == 3 else _blob(rng, sz),
                         "size": None if nid == 3 else sz})
            rows[-1]["_ROW_ID"] = rid
            rid += 1
        tb.write([{k: v for k, v in r.items() if k != "_ROW_ID"} for r in rows])
        state += rows
        tb.snap(state)
    sch = tb.schema_of()
    by_rid = {r["_ROW_ID"]: r for r in state}

    def upd(rids, cols, make):
        ups = []
        for x in rids:
            r = dict(by_rid[x])
            r.update(make(x))
            ups.append(r)
        t = _row_id_table(ups, cols, sch)
        tb.update(lambda u: u.with_update_type(cols).update_by_arrow_with_row_id(t))
        for r in ups:
            for c in cols:
                by_rid[r["_ROW_ID"]][c] = r[c]
        tb.snap([dict(by_rid[r["_ROW_ID"]]) for r in state])

    upd([1, 3], ["data"], lambda x: {"data": b"NEW-%d" % x})
    upd([0, 2, 4, 7], ["label", "size"], lambda x: {"label": "upd-%d" % x, "size": -x})
    upd([7, 8], ["data"], lambda x: {"data": _blob(rng, 100 + x) if x == 7 else None})
    return tb


@builder
def de_update(ctx):
    p = ctx.profile
    rng = ctx.rng_for("de_update")
    schema = pa.schema([("id", pa.int32()), ("a", pa.string()), ("b", pa.int64()),
                        ("c", pa.float64()), ("d", pa.string())])
    tb = TableBuild(
        ctx, "de_update", Schema.from_pyarrow_schema(schema, options=dict(DE_OPTS)),
        features=["append", "data-evolution", "row-tracking", "with_write_type",
                  "update-by-row-id", "update-by-predicate", "field-groups",
                  "partial-column-files(write_cols)"],
        sort_key=["id"], row_tracking=True,
        description="Data-evolution table: commit 1 writes all columns, commit 2 writes "
                    "only (id, a) (a file with write_cols=[id,a]; b,c,d read as NULL), "
                    "commits 3-4 update column subsets by _ROW_ID across both row-id "
                    "ranges, commit 5 is an update_by_predicate. Reads must stitch the "
                    "newest version of each column from several files that share the "
                    "same first_row_id range.")
    rows = [{"id": i, "a": rstr(rng, p.words), "b": rng.randint(0, 10 ** 6),
             "c": rdouble(rng), "d": "d%d" % i} for i in range(1, 7)]
    tb.write(rows)
    for i, r in enumerate(rows):
        r["_ROW_ID"] = i
    state = rows
    tb.snap(state)
    rows2 = [{"id": i, "a": rstr(rng, p.words)} for i in range(7, 11)]
    tb.write(rows2, cols=["id", "a"])
    for i, r in enumerate(rows2):
        r.update({"b": None, "c": None, "d": None, "_ROW_ID": 6 + i})
    state = state + rows2
    tb.snap(state)
    sch = tb.schema_of()
    by_rid = {r["_ROW_ID"]: r for r in state}

    def upd(rids, cols, make):
        ups = []
        for x in rids:
            r = dict(by_rid[x])
            r.update(make(x))
            ups.append(r)
        t = _row_id_table(ups, cols, sch)
        tb.update(lambda u: u.with_update_type(cols).update_by_arrow_with_row_id(t))
        for r in ups:
            for c in cols:
                by_rid[r["_ROW_ID"]][c] = r[c]
        tb.snap([dict(by_rid[r["_ROW_ID"]]) for r in state])

    upd([1, 3, 7, 8], ["b", "c"], lambda x: {"b": 1000 + x, "c": None if x == 3 else x / 8})
    upd([0, 9], ["d"], lambda x: {"d": "D-%d" % x})

    def by_pred(u):
        pb = u.new_predicate_builder()
        return u.update_by_predicate(pb.is_in("id", [2, 5, 9]), {"a": "via-predicate"})
    tb.update(by_pred)
    for r in state:
        if r["id"] in (2, 5, 9):
            r["a"] = "via-predicate"
    tb.snap([dict(r) for r in state])
    return tb


@builder
def de_dv_delete(ctx):
    p = ctx.profile
    rng = ctx.rng_for("de_dv_delete")
    schema = pa.schema([("id", pa.int32()), ("grp", pa.string()), ("score", pa.int64())])
    opts = dict(DE_OPTS)
    opts["deletion-vectors.enabled"] = "true"
    tb = TableBuild(
        ctx, "de_dv_delete", Schema.from_pyarrow_schema(schema, options=opts),
        features=["append", "data-evolution", "row-tracking", "deletion-vectors",
                  "deletion-vector-index-files", "delete-by-row-id",
                  "delete-by-predicate", "update-after-delete"],
        sort_key=["id"], row_tracking=True,
        description="Data-evolution table with deletion-vectors.enabled=true: rows are "
                    "deleted with delete_by_row_id and delete_by_predicate, which write "
                    "DELETION_VECTORS index files (bitmaps per data file); afterwards a "
                    "column update by _ROW_ID touches surviving rows of the same file.")
    state = []
    rid = 0
    for c in range(2):
        rows = [{"id": 10 * c + i, "grp": rng.choice(["x", "y", "z"]),
                 "score": rng.randint(0, 100)} for i in range(p.rows_per_commit)]
        tb.write(rows)
        for r in rows:
            r["_ROW_ID"] = rid
            rid += 1
        state += rows
        tb.snap(state)
    tb.update(lambda u: u.delete_by_row_id([1, p.rows_per_commit + 2]))
    state = [r for r in state if r["_ROW_ID"] not in (1, p.rows_per_commit + 2)]
    tb.snap(state)

    def del_pred(u):
        pb = u.new_predicate_builder()
        return u.delete_by_predicate(pb.greater_or_equal("score", 80))
    tb.update(del_pred)
    state = [r for r in state if r["score"] < 80]
    tb.snap(state)
    sch = tb.schema_of()
    survivors = [r["_ROW_ID"] for r in state][:3]
    ups = []
    for r in state:
        if r["_ROW_ID"] in survivors:
            r["score"] = -r["_ROW_ID"]
            ups.append(r)
    t = _row_id_table(ups, ["score"], sch)
    tb.update(lambda u: u.with_update_type(["score"]).update_by_arrow_with_row_id(t))
    tb.snap(state)
    return tb


@builder
def de_merge_into(ctx):
    from pypaimon.table.data_evolution_merge_into import (WhenMatched, WhenNotMatched,
                                                          source_col)
    p = ctx.profile
    rng = ctx.rng_for("de_merge_into")
    schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("age", pa.int32())])
    opts = dict(DE_OPTS)
    opts["deletion-vectors.enabled"] = "true"
    tb = TableBuild(
        ctx, "de_merge_into", Schema.from_pyarrow_schema(schema, options=opts),
        features=["append", "data-evolution", "row-tracking", "merge-into",
                  "upsert-by-key", "deletion-vectors", "field-groups"],
        sort_key=["id"], row_tracking=True,
        description="Data-evolution table changed with MERGE INTO (update matched "
                    "'name' only + insert unmatched), upsert_by_arrow_with_key, and a "
                    "MERGE INTO whose matched clause deletes (deletion vectors).")
    rows = [{"id": i, "name": rstr(rng, p.words), "age": rng.randint(18, 90)}
            for i in range(1, 7)]
    tb.write(rows)
    for i, r in enumerate(rows):
        r["_ROW_ID"] = i
    state = rows
    tb.snap(state)
    nxt = [len(state)]
    src = [{"id": 2, "name": "merged-2", "age": 1}, {"id": 5, "name": "merged-5", "age": 2},
           {"id": 20, "name": "new-20", "age": 20}, {"id": 21, "name": "new-21", "age": None}]
    src_t = pa.Table.from_pylist(src, schema=schema)
    tb.update(lambda u: u.merge_into(
        src_t, on=["id"], when_matched=[WhenMatched.update({"name": source_col("name")})],
        when_not_matched=[WhenNotMatched(insert="*")]))
    for s in src:
        hit = [r for r in state if r["id"] == s["id"]]
        if hit:
            hit[0]["name"] = s["name"]
        else:
            state.append(dict(s, _ROW_ID=nxt[0]))
            nxt[0] += 1
    tb.snap(state)
    ups = [{"id": 3, "name": "upsert-3", "age": 33}, {"id": 30, "name": "upsert-30", "age": 30}]
    ups_t = pa.Table.from_pylist(ups, schema=schema)
    tb.update(lambda u: u.upsert_by_arrow_with_key(ups_t, upsert_keys=["id"]))
    for s in ups:
        hit = [r for r in state if r["id"] == s["id"]]
        if hit:
            hit[0].update({k: v for k, v in s.items()})
        else:
            state.append(dict(s, _ROW_ID=nxt[0]))
            nxt[0] += 1
    tb.snap(state)
    dels = pa.Table.from_pylist([{"id": 1, "name": None, "age": None},
                                 {"id": 20, "name": None, "age": None}], schema=schema)
    tb.update(lambda u: u.merge_into(dels, on=["id"], when_matched=[WhenMatched.delete()]))
    state = [r for r in state if r["id"] not in (1, 20)]
    tb.snap(state)
    return tb


# ---------------------------------------------------------------------------
# l. large mode
# ---------------------------------------------------------------------------

def _summary_fn(key_col, sum_cols):
    def fn(t: pa.Table):
        import pyarrow.compute as pc
        out = {"row_count": t.num_rows}
        keys = sorted(t.column(key_col).to_pylist())
        h = hashlib.sha256()
        for k in keys:
            h.update(("%d\n" % k).encode())
        out["key_set_sha256(decimal keys, ascending, newline-terminated)"] = h.hexdigest()
        out["key_min"] = keys[0] if keys else None
        out["key_max"] = keys[-1] if keys else None
        for c in sum_cols:
            col = t.column(c)
            s = pc.sum(col).as_py()
            out["sum(%s)" % c] = round(s, 6) if isinstance(s, float) else s
        out["null_counts"] = {f.name: t.column(f.name).null_count for f in t.schema}
        return out
    return fn


def build_large(ctx: Context, n: int):
    p = ctx.profile
    rng = ctx.rng_for("large")
    t0 = time.time()
    schema = pa.schema([pk_field("k", pa.int64()), ("name", pa.string()),
                        ("val", pa.float64()), ("cnt", pa.int32()),
                        ("ts", pa.timestamp("us"))])
    tb = TableBuild(
        ctx, "large_pk", Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
            "bucket": str(p.large_pk_buckets)}),
        features=["primary-key", "merge-engine:deduplicate", "bucket:fixed",
                  "buckets:%d" % p.large_pk_buckets, "benchmark", "merge-on-read"],
        sort_key=["k"], history=False,
        description="Benchmark PK table: %d distinct keys after %d commits; every "
                    "commit after the first also updates ~%d existing keys."
                    % (n, p.large_pk_commits, n // (2 * p.large_pk_commits)))
    tb.rows_mode = "summary"
    tb.summary_fn = _summary_fn("k", ["cnt"])
    per = n // p.large_pk_commits
    state_cnt = {}
    perm = list(range(1, n + 1))
    rng.shuffle(perm)
    base = datetime.datetime(2024, 1, 1)
    for c in range(p.large_pk_commits):
        new = perm[c * per: (c + 1) * per if c < p.large_pk_commits - 1 else n]
        upd = rng.sample(perm[:c * per], min(c * per, per // 2)) if c else []
        ks = new + upd
        cnt = [rng.randint(0, 1000) for _ in ks]
        data = pa.table({
            "k": pa.array(ks, pa.int64()),
            "name": pa.array(["n%d-%d" % (k % 9973, c) for k in ks]),
            "val": pa.array([k * 0.5 + c for k in ks], pa.float64()),
            "cnt": pa.array(cnt, pa.int32()),
            "ts": pa.array([base + datetime.timedelta(seconds=k + c) for k in ks],
                           pa.timestamp("us")),
        }, schema=tb.schema_of())
        tb.write(data)
        for k, x in zip(ks, cnt):
            state_cnt[k] = x
        print("    large_pk commit %d: %d rows (%.1fs)" % (c + 1, len(ks), time.time() - t0))
    tb.expected_summary = {"row_count": len(state_cnt), "sum(cnt)": sum(state_cnt.values())}
    tb.models = {}
    finalize_large(ctx, tb)
    print("    large_pk done in %.1fs" % (time.time() - t0))

    t1 = time.time()
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("val", pa.float64()),
                        ("cat", pa.int32())])
    tb2 = TableBuild(
        ctx, "large_append", Schema.from_pyarrow_schema(schema),
        features=["append", "bucket-unaware", "benchmark"], sort_key=["id"], history=False,
        description="Benchmark append table: %d rows in %d commits."
                    % (n, p.large_append_commits))
    tb2.rows_mode = "summary"
    tb2.summary_fn = _summary_fn("id", ["cat"])
    per = n // p.large_append_commits
    total_cat = 0
    for c in range(p.large_append_commits):
        lo = c * per
        hi = (c + 1) * per if c < p.large_append_commits - 1 else n
        ids = list(range(lo, hi))
        cats = [rng.randint(0, 50) for _ in ids]
        total_cat += sum(cats)
        data = pa.table({"id": pa.array(ids, pa.int64()),
                         "name": pa.array(["row-%d" % i for i in ids]),
                         "val": pa.array([i / 3 for i in ids], pa.float64()),
                         "cat": pa.array(cats, pa.int32())}, schema=tb2.schema_of())
        tb2.write(data)
    tb2.expected_summary = {"row_count": n, "sum(cat)": total_cat}
    finalize_large(ctx, tb2)
    print("    large_append done in %.1fs" % (time.time() - t1))


def finalize_large(ctx, tb):
    finalize(ctx, tb)
    exp_path = os.path.join(ctx.out, "%s.expected.json" % tb.name)
    with open(exp_path) as f:
        exp = json.load(f)
    got = exp["summary"]
    ok = all(got.get(k) == v for k, v in tb.expected_summary.items())
    exp["model_check"] = "passed" if ok else "MISMATCH"
    exp["model_summary"] = tb.expected_summary
    if not ok:
        ctx.failures.append("%s: summary differs from model %s vs %s"
                            % (tb.name, got, tb.expected_summary))
    with open(exp_path, "w") as f:
        json.dump(exp, f, ensure_ascii=False, indent=1)
        f.write("\n")
    ctx.entries[-1]["model_check"] = exp["model_check"]
    print("  %-32s summary check=%s" % (tb.name, exp["model_check"]))


# ---------------------------------------------------------------------------
# Things pypaimon 2.1.0 cannot produce (documented in manifest.json)
# ---------------------------------------------------------------------------

NOT_PRODUCED = [
    {"feature": "partial-update with fields.<f>.sequence-group",
     "reason": "pypaimon 2.1.0 raises NotImplementedError for sequence-group (and for "
               "per-field aggregate functions) on the partial-update engine "
               "(common/merge_engine_dispatch.py, read/merge_engine_support.py)."},
    {"feature": "partial-update / aggregation with DELETE or UPDATE_BEFORE rows",
     "reason": "PartialUpdateMergeFunction and AggregateMergeFunction raise "
               "NotImplementedError on retract rows; ignore-delete, "
               "partial-update.remove-record-on-delete, aggregation.remove-record-on-delete "
               "and fields.<f>.ignore-retract are rejected."},
    {"feature": "aggregate function rbm64",
     "reason": "not in pypaimon's supported aggregator list."},
    {"feature": "compaction (levels > 0, COMPACT snapshots) and snapshot expiration",
     "reason": "pypaimon 2.1.0 has no compaction and no expire-snapshots action; every "
               "data file it writes is level 0 and snapshots are never expired (only "
               "rollback removes snapshots, see append_tags_rollback)."},
    {"feature": "deletion vector files for primary-key tables",
     "reason": "PK deletion vectors are produced by compaction (lookup), which pypaimon "
               "does not implement. pk_dv / pk_dv_mor are DV-enabled PK tables without DV "
               "files; real DV index files are produced for data-evolution append tables "
               "(de_dv_delete, de_merge_into)."},
    {"feature": "deletion vectors on plain (non data-evolution) append tables",
     "reason": "pypaimon only writes DVs through TableUpdate.delete_* which requires "
               "row-tracking + data-evolution."},
    {"feature": "first-row table with readable data without deletion vectors",
     "reason": "batch scans of first-row tables skip level 0 and pypaimon cannot compact, "
               "so pk_first_row reads empty; pk_first_row_dv_mor shows first-row merging."},
    {"feature": "cross-partition update PK table (PK not containing all partition keys)",
     "reason": "ValueError: CROSS_PARTITION primary-key writes require a persistent global "
               "primary-key index, which PyPaimon does not yet support."},
    {"feature": "managed BLOBs in primary-key tables (.managed.blob packs, .blobref)",
     "reason": "FileStoreWrite raises NotImplementedError('Primary-key Blob writes require "
               "the native writer'); the native writer is the optional pypaimon-rust "
               "package (a Rust implementation), which was deliberately not used so the "
               "corpus stays an independent reference. The pure-Python reader also defers "
               "PK managed packs to Rust (read/split_read.py)."},
    {"feature": "BINARY(n) columns in Avro files",
     "reason": "pypaimon 2.1.0: 'Unsupported pyarrow type for Avro conversion: "
               "fixed_size_binary'."},
    {"feature": "ORC file.compression=none / Avro file.compression=none",
     "reason": "rejected by pypaimon (ORC: 'Unknown CompressionKind: NONE'; Avro accepts "
               "'null' instead, which is covered by codec_avro_null)."},
    {"feature": "MAP columns merged by aggregation when a merge batch mixes merged and "
                "single-row keys",
     "reason": "pypaimon 2.1.0 read fails with ArrowTypeError (merge_map result dict vs "
               "raw map value); pk_agg_merge_map therefore writes every key in every commit."},
]


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def run(out: str, profile=None, mode: str = "small", large_n: int = 0,
        only: Optional[List[str]] = None, extra_builders=(), force=False,
        skip_builders=()):
    profile = profile or Profile()
    if os.path.exists(out):
        if os.listdir(out):
            if not force:
                raise SystemExit("%s exists and is not empty (use --force to wipe it)" % out)
            shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)
    ctx = Context(out, profile, mode)
    ctx.wanted = lambda name: (only is None or name in only)
    t0 = time.time()
    if mode == "large":
        build_large(ctx, large_n)
    else:
        for fn in list(BUILDERS) + list(extra_builders):
            if fn.__name__ in skip_builders:
                continue
            if only is not None and fn.__name__ not in only and fn.__name__ != "codec_tables":
                continue
            try:
                res = fn(ctx)
            except Exception as e:
                traceback.print_exc()
                ctx.failures.append("%s: build failed: %s: %s" % (fn.__name__, type(e).__name__, e))
                continue
            for tb in (res if isinstance(res, list) else [res]):
                try:
                    finalize(ctx, tb)
                except Exception as e:
                    traceback.print_exc()
                    ctx.failures.append("%s: finalize failed: %s: %s" % (tb.name, type(e).__name__, e))
    elapsed = time.time() - t0
    total = 0
    for root, _d, names in os.walk(out):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
    manifest = {
        "format_version": FORMAT_VERSION,
        "generator": ctx_generator_info(ctx),
        "warehouse": ".",
        "database": ctx.db,
        "catalog_options": {"warehouse": "<this directory>"},
        "tables": ctx.entries,
        "not_produced": NOT_PRODUCED if mode == "small" else [],
        "failures": ctx.failures,
        "generation_seconds": round(elapsed, 1),
        "total_bytes": total,
    }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("%d tables, %.1f MB, %.1fs, %d failure(s)" % (
        len(ctx.entries), total / 1e6, elapsed, len(ctx.failures)))
    for msg in ctx.failures:
        print("FAILURE: " + msg, file=sys.stderr)
    return ctx


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output warehouse directory")
    ap.add_argument("--large", type=int, metavar="N", default=0,
                    help="build only the benchmark tables with N rows each")
    ap.add_argument("--seed", type=int, default=None, help="override the profile seed")
    ap.add_argument("--only", default=None, help="comma separated builder/table names")
    ap.add_argument("--force", action="store_true", help="wipe OUT if it is not empty")
    args = ap.parse_args(argv)
    installed = _pypaimon_version()
    if installed != PYPAIMON_REQUIRED:
        print("warning: pypaimon %s installed, corpus is specified for %s"
              % (installed, PYPAIMON_REQUIRED), file=sys.stderr)
    try:
        import pypaimon_rust  # noqa: F401
        print("warning: pypaimon_rust is importable; make_corpus.py never enables the "
              "native writer, but check that no *.native.enabled option is set",
              file=sys.stderr)
    except ImportError:
        pass
    profile = Profile()
    if args.seed is not None:
        profile.seed = args.seed
    only = args.only.split(",") if args.only else None
    ctx = run(args.out, profile, "large" if args.large else "small", args.large,
              only=only, force=args.force)
    return 1 if ctx.failures else 0


if __name__ == "__main__":
    sys.exit(main())
