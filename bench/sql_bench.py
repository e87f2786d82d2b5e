#!/usr/bin/env python3
"""SQL benchmark (issue 40): a group-by with a filter and a top-k (sql_queries.py) over
pk_dedup_1m and append_2m, answered by

  kernel     paimon-kernel sql "..." --warehouse WH --format csv (release build)
  kernelpy   paimon_kernel.sql from Python (release wheel; --py-kernel)
  pyrust     pypaimon-rust 0.4.0's DataFusion (SQLContext over the warehouse)
  duckdb     DuckDB over pypaimon 2.1.0's to_arrow()
  dfparquet  DataFusion 55 (datafusion-python) over the same rows as plain Parquet

Every engine's result is checked against ours first (rows sorted, floats to 9 significant
digits); then each command is run 1 + RUNS times under /usr/bin/time and the medians of wall
time, CPU time and peak RSS are printed as a markdown table, with the machine's load average.

usage: sql_bench.py --kernel BIN --wh WAREHOUSE [--runs 5] [--tables pk_dedup_1m,append_2m]
                    [--engines kernel,pyrust,duckdb,dfparquet] [--parquet DIR]
                    [--py-rust PY] [--py PY] [--py-kernel PY]
"""
import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile

from sql_queries import QUERIES

HERE = os.path.dirname(os.path.abspath(__file__))


def command(engine, args, table, query):
    peer = os.path.join(HERE, "sql_peer.py")
    if engine == "kernel":
        return [args.kernel, "sql", QUERIES[query].format(t="bench." + table),
                "--warehouse", args.wh, "--format", "csv"]
    if engine == "pyrust":
        return [args.py_rust, peer, "pyrust", args.wh, table, query]
    if engine == "kernelpy":
        return [args.py_kernel, peer, "kernelpy", args.wh, table, query]
    if engine == "duckdb":
        return [args.py, peer, "duckdb", args.wh, table, query]
    if engine == "dfparquet":
        return [args.py, peer, "dfparquet", args.wh, table, query, parquet_dir(args, table)]
    raise SystemExit("unknown engine " + engine)


def parquet_dir(args, table):
    return os.path.join(args.parquet, table)


def export_parquet(args, table):
    """The table's rows as plain Parquet: append_2m's own data files (an append table reads
    exactly them), a merged copy of a primary-key table (written once from our read)."""
    out = parquet_dir(args, table)
    if os.path.isdir(out) and os.listdir(out):
        return
    os.makedirs(out, exist_ok=True)
    src = os.path.join(args.wh, "bench.db", table)
    schemas = sorted(os.listdir(os.path.join(src, "schema")), key=lambda n: int(n.split("-")[-1]))
    schema = json.load(open(os.path.join(src, "schema", schemas[-1])))
    if not schema.get("primaryKeys"):
        for root, _, files in os.walk(src):
            for f in files:
                if f.startswith("data-") and f.endswith(".parquet"):
                    os.link(os.path.join(root, f), os.path.join(out, f))
        return
    code = (
        "import sys, pyarrow as pa, pyarrow.ipc as ipc, pyarrow.parquet as pq\n"
        "t = ipc.open_stream(sys.stdin.buffer).read_all()\n"
        "pq.write_table(t, sys.argv[1], compression='zstd')\n"
    )
    scan = subprocess.Popen([args.kernel, "scan", src, "--format", "arrow"], stdout=subprocess.PIPE)
    subprocess.run([args.py, "-c", code, os.path.join(out, "part-0.parquet")], stdin=scan.stdout,
                   check=True)
    if scan.wait() != 0:
        raise SystemExit("scan of %s failed" % src)


def normalized(text):
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return []
    out = []
    for r in rows[1:]:
        cells = []
        for c in r:
            try:
                f = float(c)
                cells.append("%.9g" % f)
            except ValueError:
                cells.append(c)
        out.append(tuple(cells))
    return sorted(out)


def timed(cmd):
    """(wall s, cpu s, peak KiB) of one run."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as f:
        subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", f.name] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        wall, user, sys_, peak = f.read().split()[-4:]
    return float(wall), float(user) + float(sys_), int(peak)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kernel", required=True)
    p.add_argument("--wh", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--tables", default="pk_dedup_1m,append_2m")
    p.add_argument("--engines", default="kernel,pyrust,duckdb,dfparquet")
    p.add_argument("--parquet", default=os.path.join(HERE, "data", "parquet"))
    p.add_argument("--py-rust", default=os.path.expanduser("~/.cache/paimon-kernel/venv-rust/bin/python"))
    p.add_argument("--py", default=sys.executable)
    p.add_argument("--py-kernel", default=sys.executable,
                   help="python with paimon_kernel (a release wheel) for the kernelpy engine")
    args = p.parse_args()
    engines = args.engines.split(",")
    tables = args.tables.split(",")
    results = []
    for table in tables:
        if "dfparquet" in engines:
            export_parquet(args, table)
        for query in QUERIES:
            ours = None
            for engine in engines:
                cmd = command(engine, args, table, query)
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    raise SystemExit("%s failed on %s/%s: %s" % (engine, table, query, out.stderr))
                rows = normalized(out.stdout)
                if ours is None:
                    ours = rows
                elif rows != ours:
                    raise SystemExit("%s's result differs on %s/%s:\n%s\nvs\n%s"
                                     % (engine, table, query, rows[:5], ours[:5]))
            for engine in engines:
                cmd = command(engine, args, table, query)
                timed(cmd)  # warm-up
                runs = [timed(cmd) for _ in range(args.runs)]
                med = [statistics.median(r[i] for r in runs) for i in range(3)]
                results.append((table, query, engine, med))
                print("%s %s %s wall %.3f s cpu %.3f s peak %.0f MiB" %
                      (table, query, engine, med[0], med[1], med[2] / 1024), file=sys.stderr)
    load = open("/proc/loadavg").read().split()[:3]
    print("load average at the end: %s" % " ".join(load))
    print()
    print("| table | query | engine | wall s | cpu s | peak MiB | wall vs kernel |")
    print("|---|---|---|---|---|---|---|")
    base = {(t, q): m[0] for t, q, e, m in results if e == "kernel"}
    for t, q, e, m in results:
        ratio = m[0] / base[(t, q)] if (t, q) in base and base[(t, q)] > 0 else float("nan")
        print("| %s | %s | %s | %.3f | %.3f | %.0f | %.2fx |" % (t, q, e, m[0], m[1], m[2] / 1024, ratio))


if __name__ == "__main__":
    main()
