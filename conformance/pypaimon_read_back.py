#!/usr/bin/env python3
"""pypaimon reads the tables paimon-kernel wrote: every `<table>.expected.json` of WAREHOUSE
(written by conformance/tests/write_back.rs, layout `corpus.db/<table>/`) is opened with
pypaimon's filesystem catalog, read at its latest snapshot, rendered canonically (the encoding
of make_corpus.py) and compared, sorted, with the expected rows (the CHAR columns of ORC tables right-trimmed on
both sides, as Java reads them: make_corpus.py's `trim_chars`).

Usage: pypaimon_read_back.py WAREHOUSE
Prints one line per table and closes with `N passed, N failed`; exit 1 on any failure.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_corpus import canon_table, java_orc_char_columns, read_arrow, trim_chars  # noqa: E402
from pypaimon import CatalogFactory  # noqa: E402


def latest_schema_id(table_path):
    """The id of the newest `schema/schema-N` file of the table at `table_path`."""
    return max(int(n[len("schema-"):]) for n in os.listdir(os.path.join(table_path, "schema"))
               if n.startswith("schema-"))


def key(row):
    return json.dumps(row, sort_keys=False, ensure_ascii=False, separators=(",", ":"))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    wh = sys.argv[1]
    catalog = CatalogFactory.create({"warehouse": wh})
    passed, failed = 0, 0
    for name in sorted(os.listdir(wh)):
        if not name.endswith(".expected.json"):
            continue
        with open(os.path.join(wh, name), encoding="utf-8") as f:
            exp = json.load(f)
        table = exp["table"]
        try:
            t = catalog.get_table("%s.%s" % (exp.get("database", "corpus"), table))
            got = canon_table(read_arrow(t))
            path = os.path.join(wh, exp.get("path") or "%s.db/%s" % (exp.get("database", "corpus"), table))
            chars = java_orc_char_columns(path, latest_schema_id(path))
            got = trim_chars(got, chars)
            exp["rows"] = trim_chars(exp["rows"], chars)
        except Exception as e:  # noqa: BLE001 - reported per table
            print("FAIL %s: pypaimon could not read it: %s: %s" % (table, type(e).__name__, e))
            failed += 1
            continue
        want = sorted(key(r) for r in exp["rows"])
        have = sorted(key(r) for r in got)
        if want == have:
            print("ok   %s (%d rows)" % (table, len(have)))
            passed += 1
        else:
            missing = [r for r in want if r not in have][:3]
            extra = [r for r in have if r not in want][:3]
            print("FAIL %s: pypaimon read %d rows, want %d\n  missing: %s\n  unexpected: %s"
                  % (table, len(have), len(want), missing, extra))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
