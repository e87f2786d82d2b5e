#!/usr/bin/env python3
"""Read every table of a warehouse with pypaimon-rust 0.4.0 and print canonical rows (the
encoding of `<table>.expected.json`, see mbcanon.py), or dump on-disk facts of managed BLOBs.

Usage: read_back.py WAREHOUSE [--json] [--check] [--facts] [--table T]... [--copy-to DIR]
       (python: the pypaimon-rust venv, e.g. ~/.cache/paimon-kernel/venv-rust/bin/python)

  (default)   per table a line `== <db>.<table> (N rows)`, then one JSON row per line
  --json      one JSON document: {"tables": {"<table>": {"database", "rows"}}}
  --check     compare with WAREHOUSE/<table>.expected.json ("rows"); `ok`/`FAIL` per table;
              tables without an expected file are only read
  --facts     per table: the data files of the latest snapshot (bucket, level, extra_files from
              the manifest entries), each `.blobref` sidecar in hex and decoded (magic, version,
              count, references, CRC32 check, Java sort order, trailing bytes), whether the
              sidecar equals the set of packs referenced by the file's non-retract rows, the
              descriptors in the file, and the `.managed.blob` packs of each bucket directory
  --table T   only these tables (repeatable)
  --copy-to DIR  first copy WAREHOUSE to DIR (which must not exist) and read the copy; use
              `--copy-to /tmp/pk-managed-blob-wh` for conformance/managed-blob/tables, whose
              pack URIs name that directory

Exit status: 0 when every table was read (and, with --check, matched), 1 otherwise.
"""

import argparse
import json
import os
import shutil
import sys

import pyarrow as pa
from pypaimon_rust.datafusion import PaimonCatalog

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import avro_mini  # noqa: E402
import mbcanon  # noqa: E402

RETRACT_KINDS = (1, 3)


def list_tables(wh):
    out = []
    for db in sorted(os.listdir(wh)):
        if not db.endswith(".db") or not os.path.isdir(os.path.join(wh, db)):
            continue
        for t in sorted(os.listdir(os.path.join(wh, db))):
            if os.path.isdir(os.path.join(wh, db, t, "schema")):
                out.append((db[:-3], t))
    return out


def read_rows(table):
    rb = table.new_read_builder()
    plan = rb.new_scan().plan()
    rows = []
    for b in rb.new_read().read(plan.splits()):
        rows.extend(pa.Table.from_batches([b]).to_pylist())
    schema = table.schema()
    kinds = [(f.name(), mbcanon.kind_of_paimon_type(f.field_type())) for f in schema.fields()]
    # inline descriptor/view columns are resolved by the reader as well: all render as cells
    return mbcanon.canon_rows(rows, kinds, schema.primary_keys())


# ---------------------------------------------------------------------------------------------
# facts

def latest_data_files(table_dir):
    snap_dir = os.path.join(table_dir, "snapshot")
    with open(os.path.join(snap_dir, "LATEST")) as f:
        sid = int(f.read().strip())
    with open(os.path.join(snap_dir, "snapshot-%d" % sid)) as f:
        snap = json.load(f)
    files = {}
    for key in ("baseManifestList", "deltaManifestList"):
        name = snap.get(key)
        if not name:
            continue
        _, metas = avro_mini.read_avro(os.path.join(table_dir, "manifest", name))
        for m in metas:
            _, entries = avro_mini.read_avro(os.path.join(table_dir, "manifest", m["_FILE_NAME"]))
            for e in entries:
                ident = (e["_PARTITION"], e["_BUCKET"], e["_FILE"]["_FILE_NAME"])
                if e["_KIND"] == 0:
                    files[ident] = e
                else:
                    files.pop(ident, None)
    return sid, snap, list(files.values())


def partition_dir(table_dir, entry, data_file_name):
    """Find the directory holding the data file (partition path from the file system: the
    BinaryRow partition would need the schema to decode)."""
    for root, _dirs, names in os.walk(table_dir):
        if data_file_name in names and os.path.basename(root) == "bucket-%d" % entry["_BUCKET"]:
            return root
    return None


def read_data_file(path):
    """Rows of a data file as python dicts (parquet/orc through pyarrow, avro by avro_mini)."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq
        return pq.read_table(path).to_pylist()
    if path.endswith(".orc"):
        import pyarrow.orc as po
        return po.read_table(path).to_pylist()
    if path.endswith(".avro"):
        return avro_mini.read_avro(path)[1]
    raise ValueError("unknown data file format: %s" % path)


def descriptor_uris(value):
    """Descriptors inside a BLOB / ARRAY<BLOB> / MAP<K,BLOB> cell as decoded tuples."""
    out = []
    if value is None:
        return out
    if isinstance(value, (bytes, bytearray)):
        d = mbcanon.decode_descriptor(value)
        if d:
            out.append(d)
    elif isinstance(value, list):
        for e in value:
            if isinstance(e, tuple) and len(e) == 2:      # pyarrow map entry (k, v)
                out.extend(descriptor_uris(e[1]))
            elif isinstance(e, dict) and "value" in e:    # avro map-as-array entry
                out.extend(descriptor_uris(e["value"]))
            else:
                out.extend(descriptor_uris(e))
    elif isinstance(value, dict):
        for e in value.values():
            out.extend(descriptor_uris(e))
    return out


def facts_for_table(wh, db, name, table):
    tdir = os.path.join(wh, db + ".db", name)
    schema = table.schema()
    blob_cols = [f.name() for f in schema.fields()
                 if mbcanon.kind_of_paimon_type(f.field_type()) != "scalar"]
    sid, snap, entries = latest_data_files(tdir)
    out = {"table": "%s.%s" % (db, name), "snapshot": sid, "options": schema.options(),
           "blob_columns": blob_cols, "data_files": [], "packs": {}}
    for e in sorted(entries, key=lambda e: (e["_BUCKET"], e["_FILE"]["_FILE_NAME"])):
        fm = e["_FILE"]
        d = partition_dir(tdir, e, fm["_FILE_NAME"])
        info = {"file": os.path.relpath(os.path.join(d, fm["_FILE_NAME"]), tdir) if d else
                fm["_FILE_NAME"], "bucket": e["_BUCKET"], "total_buckets": e["_TOTAL_BUCKETS"],
                "level": fm["_LEVEL"], "row_count": fm["_ROW_COUNT"],
                "extra_files": fm["_EXTRA_FILES"], "embedded_file_index":
                fm.get("_EMBEDDED_FILE_INDEX") is not None,
                "file_source": fm.get("_FILE_SOURCE")}
        if d:
            rows = read_data_file(os.path.join(d, fm["_FILE_NAME"]))
            refs, descs = set(), []
            for r in rows:
                kind = r.get("_VALUE_KIND", 0)
                for c in blob_cols:
                    for v, uri, off, ln in descriptor_uris(r.get(c)):
                        descs.append({"column": c, "row_kind": kind, "version": v, "uri": uri,
                                      "offset": off, "length": ln})
                        if kind not in RETRACT_KINDS and uri.endswith(".managed.blob"):
                            root, _, fname = uri.rpartition("/")
                            refs.add((root, fname))
            info["descriptors"] = descs
            side = os.path.join(d, fm["_FILE_NAME"] + ".blobref")
            if os.path.exists(side):
                with open(side, "rb") as f:
                    dec = mbcanon.decode_blobref(f.read())
                info["blobref"] = dec
                got = {tuple(r) for r in dec.get("references", [])}
                info["blobref_equals_row_references"] = got == refs
            else:
                info["blobref"] = None
        out["data_files"].append(info)
    for root, _dirs, names in os.walk(tdir):
        packs = sorted(n for n in names if n.endswith(".managed.blob"))
        if packs:
            lst = []
            for n in packs:
                with open(os.path.join(root, n), "rb") as f:
                    chk = mbcanon.check_pack(f.read())
                chk["name"] = n
                lst.append(chk)
            out["packs"][os.path.relpath(root, tdir)] = lst
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("warehouse")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--facts", action="store_true")
    ap.add_argument("--table", action="append", default=[])
    ap.add_argument("--copy-to")
    args = ap.parse_args()
    wh = os.path.abspath(args.warehouse)
    if args.copy_to:
        dst = os.path.abspath(args.copy_to)
        if os.path.exists(dst):
            sys.exit("read_back.py: --copy-to %s exists" % dst)
        shutil.copytree(wh, dst)
        wh = dst
    catalog = PaimonCatalog({"warehouse": "file:" + wh})
    failed = 0
    doc = {"tables": {}}
    facts = []
    for db, name in list_tables(wh):
        if args.table and name not in args.table:
            continue
        try:
            table = catalog.get_table("%s.%s" % (db, name))
            rows = read_rows(table)
            if args.facts:
                facts.append(facts_for_table(wh, db, name, table))
        except Exception as e:  # noqa: BLE001 - reported per table
            msg = (str(e).strip().splitlines() or [""])[0]
            print("FAIL %s.%s: %s: %s" % (db, name, type(e).__name__, msg))
            failed += 1
            continue
        doc["tables"][name] = {"database": db, "rows": rows}
        if args.check:
            exp_path = os.path.join(wh, "%s.expected.json" % name)
            if os.path.exists(exp_path):
                with open(exp_path, encoding="utf-8") as f:
                    want = json.load(f)["rows"]
                if want == rows:
                    print("ok   %s.%s (%d rows)" % (db, name, len(rows)))
                else:
                    failed += 1
                    print("FAIL %s.%s: read %d rows, expected %d" % (db, name, len(rows),
                                                                     len(want)))
                    for r in [r for r in rows if r not in want][:3]:
                        print("  unexpected:", json.dumps(r)[:300])
                    for r in [r for r in want if r not in rows][:3]:
                        print("  missing   :", json.dumps(r)[:300])
            else:
                print("read %s.%s (%d rows, no expected file)" % (db, name, len(rows)))
        elif not args.json and not args.facts:
            print("== %s.%s (%d rows)" % (db, name, len(rows)))
            for r in rows:
                print(json.dumps(r, ensure_ascii=False, separators=(",", ":")))
    if args.facts:
        sys.stdout.write(mbcanon.dumps(facts))
    elif args.json:
        sys.stdout.write(mbcanon.dumps(doc))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
