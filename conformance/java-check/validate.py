#!/usr/bin/env python3
"""Checks the installed java-check reader against the repository's tables (see README.md).

  validate.py java-tables [--read PATH]
      every table of conformance/java-tables: the reader's rows (default read and each
      additional read, given as Java dynamic options) equal the rows of *.expected.json,
      captured from Java Paimon 1.4.2 or 2.0.0 (still equal to what 2.0.0 reads).
  validate.py compacted --cli PATH [--read PATH]
      every case of conformance/java-tables/compactions.json: a copy of the table compacted
      by our CLI (`rollback`, `alter --set`, `compact` as the case says) reads with the reader
      (a Java 2.0.0 reader: the default) as the expected read the case names.
  validate.py corpus --cli PATH --canonical PATH [--read PATH] [--tables DIR]
      every table of conformance/tables/corpus.db (or DIR/*/): the reader's rows equal our
      reader's canonical rows (`paimon-kernel scan TABLE --format arrow` through the
      `canonical_rows` example of paimon-conformance), line for line as strings (sorted), for
      the default read and for each additional read of *.expected.json (snapshot, tag,
      projection). (`scan --format jsonl` is arrow_json's encoding, not the canonical one:
      decimals as numbers, timestamps with the unit's digits, maps as objects, blobs as hex.)

Prints one line per read and ends with `N passed, N failed, N skipped` (skipped: a read Java
refuses, or one our CLI fails; each with the first line of its error).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.dirname(HERE)


def run(cmd, pipe_to=None):
    if pipe_to:
        first = subprocess.run(cmd, capture_output=True)
        if first.returncode != 0:
            err = first.stderr.decode(errors="replace").strip().splitlines()
            return first.returncode, [], err[0] if err else ""
        cmd, given = pipe_to, first.stdout
        p = subprocess.run(cmd, input=given, capture_output=True)
        p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode(errors="replace")
    else:
        p = subprocess.run(cmd, capture_output=True, text=True)
    lines = sorted(l for l in p.stdout.splitlines() if l.strip())
    errs = [l for l in p.stderr.splitlines() if l.strip()]
    # The reader's own error line ("read: ..."), else the first line (log lines may precede it).
    err = next((l for l in errs if l.startswith("read:")), errs[0] if errs else "")
    return p.returncode, lines, err


def key(value):
    """A comparable form of a parsed JSON value that tells -0.0 from 0.0 and 1 from 1.0."""
    if isinstance(value, float):
        return ("f", repr(value))
    if isinstance(value, list):
        return ("l", tuple(key(v) for v in value))
    if isinstance(value, dict):
        return ("o", tuple((k, key(v)) for k, v in value.items()))
    return (type(value).__name__, value)


def first_difference(a, b):
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))
    return only_a[:3], only_b[:3]


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def ok(self, what, n):
        self.passed += 1
        print(f"ok    {what}: {n} rows")

    def fail(self, what, detail):
        self.failed += 1
        print(f"FAIL  {what}: {detail}")

    def skip(self, what, why):
        self.skipped += 1
        print(f"skip  {what}: {why}")

    def close(self):
        print(f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped")
        return 1 if self.failed else 0


def java_tables(args):
    base = os.path.join(CONFORMANCE, "java-tables")
    manifest = json.load(open(os.path.join(base, "manifest.json")))
    t = Tally()
    for entry in manifest["tables"]:
        expected = json.load(open(os.path.join(base, entry["expected"])))
        table = os.path.join(base, entry["path"])
        reads = [("latest", [], expected["rows"])]
        for r in expected.get("additional_reads", []):
            reads.append((r["label"], r.get("java_options", []), r["rows"], r.get("java_args", [])))
        for label, options, rows, *extra in reads:
            what = f"{entry['path']} [{label}]"
            cmd = [args.read, table] + (extra[0] if extra else [])
            for o in options:
                cmd += ["--option", o]
            check_read(t, what, cmd, rows)
    return t.close()


def check_read(t, what, cmd, rows):
    """Run the reader command `cmd` and tally whether its rows equal `rows` (any order)."""
    code, lines, err = run(cmd)
    if code != 0:
        t.fail(what, err)
        return
    got = sorted(key(json.loads(l)) for l in lines)
    want = sorted(key(r) for r in rows)
    if got == want:
        t.ok(what, len(lines))
    else:
        t.fail(what, "rows differ: %s" % (first_difference(got, want),))


def compacted(args):
    base = os.path.join(CONFORMANCE, "java-tables")
    spec = json.load(open(os.path.join(base, "compactions.json")))
    t = Tally()
    work = tempfile.mkdtemp(prefix="compacted-")
    for case in spec["cases"]:
        for fmt in spec["formats"]:
            name = f"{case['table']}_{fmt}"
            what = f"{name} [{json.dumps({k: v for k, v in case.items() if k != 'table'})}]"
            table = os.path.join(work, name)
            shutil.rmtree(table, ignore_errors=True)
            shutil.copytree(os.path.join(base, name), table)
            steps = []
            if "rollback" in case:
                steps.append(["rollback", table, "--snapshot", str(case["rollback"])])
            for o in case.get("set", []):
                steps.append(["alter", table, "--set", o])
            steps.append(["compact", table] + (["--full"] if case["full"] else []))
            failed = None
            for step in steps:
                p = subprocess.run([args.cli] + step, capture_output=True, text=True)
                if p.returncode != 0:
                    failed = f"{step[0]}: {p.stderr.strip().splitlines()[-1:]}"
                    break
            if failed is None and "compacted into snapshot" not in p.stdout:
                failed = f"nothing compacted: {p.stdout.strip()}"
            if failed:
                t.fail(what, failed)
                continue
            expected = json.load(open(os.path.join(base, name + ".expected.json")))
            if case["expect"] == "latest":
                rows = expected["rows"]
            else:
                rows = next(r["rows"] for r in expected["additional_reads"] if r["label"] == case["expect"])
            check_read(t, what, [args.read, table], rows)
    shutil.rmtree(work, ignore_errors=True)
    return t.close()


def corpus(args):
    tables = args.tables or os.path.join(CONFORMANCE, "tables", "corpus.db")
    expected_dir = os.path.dirname(tables)
    t = Tally()
    for name in sorted(os.listdir(tables)):
        table = os.path.join(tables, name)
        if not os.path.isdir(os.path.join(table, "schema")):
            continue
        reads = [("latest", {}, None)]
        exp_path = os.path.join(expected_dir, name + ".expected.json")
        if os.path.exists(exp_path):
            for r in json.load(open(exp_path)).get("additional_reads", []):
                reads.append((r["label"], r.get("options") or {}, r.get("projection")))
        for label, options, projection in reads:
            what = f"{name} [{label}]"
            java = [args.read, table]
            cli = [args.cli, "scan", table, "--format", "arrow"]
            unsupported = [k for k in options if k not in ("scan.snapshot-id", "scan.tag-name")]
            if unsupported:
                t.skip(what, f"no CLI flag for {unsupported}")
                continue
            for k, v in options.items():
                java += ["--option", f"{k}={v}"]
                cli += ["--snapshot" if k == "scan.snapshot-id" else "--tag", v]
            if projection:
                java += ["--columns", ",".join(projection)]
                cli += ["--columns", ",".join(projection)]
            ccode, ours, cerr = run(cli, pipe_to=[args.canonical])
            if ccode != 0:
                t.skip(what, f"CLI: {cerr}")
                continue
            jcode, theirs, jerr = run(java)
            if jcode != 0:
                t.skip(what, f"Java: {jerr}")
                continue
            if theirs == ours:
                t.ok(what, len(ours))
            elif sorted(map(key, map(json.loads, theirs))) == sorted(
                map(key, map(json.loads, ours))
            ):
                t.fail(what, "same values, other JSON text: %s" % (first_difference(theirs, ours),))
            else:
                t.fail(what, "rows differ (Java only, CLI only): %s" % (first_difference(theirs, ours),))
    return t.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("mode", choices=["java-tables", "compacted", "corpus"])
    ap.add_argument("--read", default=os.path.join(os.environ.get("PAIMON_JAVA_CHECK_DIR", os.path.expanduser("~/.cache/paimon-kernel/java-check-2.0.0")), "read"))
    ap.add_argument("--cli", help="the paimon-kernel binary (corpus and compacted modes)")
    ap.add_argument("--canonical", help="the canonical_rows example binary (corpus mode)")
    ap.add_argument("--tables", help="a directory of tables (corpus mode; default the corpus)")
    args = ap.parse_args()
    if args.mode == "corpus" and not (args.cli and args.canonical):
        ap.error("corpus needs --cli and --canonical")
    if args.mode == "compacted" and not args.cli:
        ap.error("compacted needs --cli")
    modes = {"java-tables": java_tables, "compacted": compacted, "corpus": corpus}
    sys.exit(modes[args.mode](args))


if __name__ == "__main__":
    main()
