#!/usr/bin/env python3
"""Copy the tables GenNested wrote (conformance/java-check/src/main/java/check/GenNested.java)
into conformance/java-tables and capture Java's rows of every read into <table>.expected.json.

    capture_nested.py --read 'READER' WAREHOUSE [TABLE ...]

READER is the java-check reader built against Java Paimon 2.0.0 (`check.Main`, the same
command line as `read`, see conformance/java-check/README.md); it is split on spaces. WAREHOUSE
is GenNested's warehouse (tables under WAREHOUSE/db.db/). The manifest.json entries are added
for tables not listed yet. See conformance/java-tables/README.md.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

WRITTEN_BY = {
    "j200_nested_append": (
        "GenNested (Java Paimon 2.0.0 catalog API), append table, file.format = {fmt}: columns id INT, "
        "r ROW<x INT, y STRING, z ROW<a INT, b STRING>, d STRING>, ar ARRAY<ROW<p INT, q STRING>>, "
        "m MAP<STRING, ROW<u INT, v STRING>>, mk MAP<ROW<k1 INT, k2 STRING>, STRING>, "
        "aa ARRAY<ARRAY<ROW<e INT, f STRING>>>. Snapshot 1: ids 1-5 (schema 0). Schema 1: add r.w INT, "
        "rename r.y -> yy, rename ar.element.q -> qq, r.x INT -> BIGINT, rename m.value.v -> vv, rename "
        "aa.element.element.f -> ff, drop r.d; schema 2: rename r.z.b -> bb; snapshot 2: ids 6-8. "
        "Schema 3: add r.d STRING (a new id for a dropped name), drop and re-add ar.element.p, rename "
        "r.z -> zz, drop and re-add r.zz.a (now STRING), add m.value.t INT; snapshot 3: ids 9-10."
    ),
    "j200_nested_pk": (
        "GenNested (Java Paimon 2.0.0 catalog API), primary key id, bucket 1, merge-engine = "
        "partial-update, file.format = {fmt}; the columns and schema changes of j200_nested_append. "
        "Snapshot 1: ids 1-5 (schema 0); snapshot 2: ids 2, 6 and id 3 with r NULL (schema 2); "
        "snapshot 3: ids 4, 7 and ids 5, 6 with r NULL (schema 3). No compaction: one level-0 file "
        "per schema, merged on read."
    ),
    "j200_nested_dv": (
        "GenNested (Java Paimon 2.0.0 catalog API), primary key id, bucket 1, "
        "deletion-vectors.enabled = true, file.format = {fmt}; the columns and schema changes of "
        "j200_nested_append. Snapshot 1: ids 1-6 (schema 0), snapshot 2: full compaction; snapshot 3: "
        "ids 2, 3, 7, 8 (schema 2), snapshot 4: compaction (deletion vectors on the schema-0 file); "
        "snapshot 5: ids 4, 7, 9 (schema 3), snapshot 6: compaction."
    ),
    "j200_nested_de": (
        "GenNested (Java Paimon 2.0.0 catalog API), append table with row-tracking.enabled and "
        "data-evolution.enabled, file.format = {fmt}: columns id INT, r ROW<x INT, y STRING, "
        "z ROW<a INT, b STRING>>, ar ARRAY<ROW<p INT, q STRING>>, v STRING. Snapshot 1: row ids 0-4, "
        "every column (schema 0). Schema 1: rename r.y -> yy, add r.w INT, r.x INT -> BIGINT; "
        "schema 2: rename ar.element.q -> qq. Snapshot 2: column v alone of row ids 0-4; snapshot 3: "
        "column ar alone of row ids 0-4 (field groups: BatchTableWrite.withWriteType, the files' "
        "first row id set to 0; Avro writes them as [null, record]). Schema 3: rename r.z -> zz, "
        "drop and re-add r.zz.a (STRING), drop and re-add ar.element.p. Snapshot 4: row ids 5-6, "
        "every column."
    ),
    "j200_agg": (
        "GenNested (Java Paimon 2.0.0 catalog API), primary key k, bucket 1, merge-engine = "
        "aggregation, file.format = {fmt}: collect with distinct = true over ARRAY<INT, STRING, BIGINT, "
        "DOUBLE, FLOAT, DECIMAL(10, 2), DECIMAL(30, 3), TIMESTAMP(3), TIMESTAMP(6), DATE, SMALLINT, "
        "TINYINT, BOOLEAN, ROW<a INT, b STRING>> (ci..crow), collect (cl), nested_update with "
        "nested-key id (nu) and k1,k2 (nu2), nested_partial_update with nested-key id and "
        "ignore-retract (npu); elements and nested keys drawn from pools with colliding hashes "
        "(tree bins of Java's HashMap). Snapshot 1: keys 1-4; snapshots 2-4: keys 1-3 (snapshot 4 "
        "retracts key 2: a DELETE record); snapshot 5: full compaction; snapshot 6: keys 1-3 and a "
        "new key 5."
    ),
}

# (label, our CLI args, Java reader args) of the additional reads of each kind of table.
READS = {
    "j200_nested_append": [
        ("projection r", ["--columns", "r"], ["--columns", "r"]),
        ("projection id,ar,m", ["--columns", "id,ar,m"], ["--columns", "id,ar,m"]),
        ("snapshot 2", ["--snapshot", "2"], ["--option", "scan.snapshot-id=2"]),
    ],
    "j200_nested_pk": [
        ("projection id,r", ["--columns", "id,r"], ["--columns", "id,r"]),
        ("snapshot 2", ["--snapshot", "2"], ["--option", "scan.snapshot-id=2"]),
    ],
    "j200_nested_dv": [
        ("projection r,ar", ["--columns", "r,ar"], ["--columns", "r,ar"]),
        ("snapshot 4", ["--snapshot", "4"], ["--option", "scan.snapshot-id=4"]),
    ],
    "j200_nested_de": [
        ("projection r,v", ["--columns", "r,v"], ["--columns", "r,v"]),
        ("projection ar,id", ["--columns", "ar,id"], ["--columns", "ar,id"]),
        ("snapshot 2", ["--snapshot", "2"], ["--option", "scan.snapshot-id=2"]),
    ],
    "j200_agg": [
        ("snapshot 1 (one record per key)", ["--snapshot", "1"], ["--option", "scan.snapshot-id=1"]),
        ("snapshot 4 (merge-on-read)", ["--snapshot", "4"], ["--option", "scan.snapshot-id=4"]),
    ],
}


def kind_of(name):
    for k in READS:
        if name.startswith(k + "_"):
            return k, name[len(k) + 1:]
    raise SystemExit(f"unknown table {name}")


def java_rows(read, table, args):
    out = subprocess.run(read + [table] + args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(read)} {table} {args}: {out.stderr}")
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, ensure_ascii=False))


def rows_text(rows, indent):
    pad = " " * indent
    body = ",\n".join(pad + " " + json.dumps(r, ensure_ascii=False) for r in rows)
    return "[\n" + body + "\n" + pad + "]"


def render(expected):
    """The expected file: pretty at the top, one compact line per row."""
    parts = []
    for k, v in expected.items():
        if k == "rows":
            parts.append(f' "rows": {rows_text(v, 1)}')
        elif k == "additional_reads":
            reads = []
            for r in v:
                fields = [f'   {json.dumps(rk)}: {json.dumps(rv, ensure_ascii=False)}' for rk, rv in r.items() if rk != "rows"]
                fields.append(f'   "rows": {rows_text(r["rows"], 3)}')
                reads.append("  {\n" + ",\n".join(fields) + "\n  }")
            parts.append(' "additional_reads": [\n' + ",\n".join(reads) + "\n ]")
        else:
            parts.append(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--read", required=True)
    ap.add_argument("warehouse")
    ap.add_argument("tables", nargs="*")
    a = ap.parse_args()
    read = a.read.split()
    src = os.path.join(a.warehouse, "db.db")
    names = a.tables or sorted(os.listdir(src))
    manifest_path = os.path.join(HERE, "manifest.json")
    manifest = json.load(open(manifest_path))
    listed = {t["path"] for t in manifest["tables"]}
    for name in names:
        kind, fmt = kind_of(name)
        dest = os.path.join(HERE, name)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(os.path.join(src, name), dest)
        expected = {
            "table": name,
            "path": name,
            "paimon_version": "2.0.0",
            "written_by": WRITTEN_BY[kind].format(fmt=fmt),
            "expected_rows_from": "Java Paimon 2.0.0 (java-check's check.Main built against paimon-bundle 2.0.0)",
            "rows": java_rows(read, dest, []),
            "additional_reads": [],
        }
        for label, args, java_args in READS[kind]:
            entry = {"label": label, "args": args}
            options = [java_args[i + 1] for i in range(0, len(java_args), 2) if java_args[i] == "--option"]
            if options:
                entry["java_options"] = options
            others = [x for i in range(0, len(java_args), 2) if java_args[i] != "--option" for x in java_args[i:i + 2]]
            if others:
                entry["java_args"] = others
            entry["rows"] = java_rows(read, dest, java_args)
            expected["additional_reads"].append(entry)
        with open(os.path.join(HERE, name + ".expected.json"), "w") as f:
            f.write(render(expected))
        if name not in listed:
            manifest["tables"].append({"path": name, "expected": name + ".expected.json"})
            listed.add(name)
        print(f"{name}: {len(expected['rows'])} rows, {len(expected['additional_reads'])} more reads", file=sys.stderr)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
