#!/usr/bin/env python3
"""Markdown summary of run.sh's results.tsv: one table per bench table, then the ratios.

usage: python summarize.py results.tsv [blob_io.tsv]
Ratios use medians of the same run. kernel = paimon-kernel CLI on both cores; kernel1c = the
same pinned to one core (taskset -c 0); floor1/floor2 = parquet crate decode on 1/2 threads.
The last line of a reader wins when results.tsv holds several runs of it.
Case 4: blob_100m is the full read (MB/s over the .parquet + .blob bytes), blob_one the
extraction of one blob (MB/s over the blob's bytes); blob_io.tsv (from blob_io.py) adds the
requests and bytes each reader fetched.
"""
import csv, sys

rows = {}
order = []
io = {}
if len(sys.argv) > 2:
    try:
        for r in csv.DictReader(open(sys.argv[2]), delimiter="\t"):
            io.setdefault(r["table"], {})[r["reader"]] = r
    except FileNotFoundError:
        pass
for r in csv.DictReader(open(sys.argv[1]), delimiter="\t"):
    if r["table"] not in order:
        order.append(r["table"])
    rows.setdefault(r["table"], {})[r["reader"]] = r

NAMES = {
    "cat": "cat (read the bytes)", "floor1": "parquet decode floor, 1 thread",
    "floor2": "parquet decode floor, 2 threads", "kernel": "paimon-kernel, 2 cores",
    "kernel1c": "paimon-kernel, pinned to 1 core",
    "kcount": "paimon-kernel, 2 cores, rows counted (`--format count`)",
    "ksif1": "paimon-kernel, 2 cores, `--splits-in-flight 1`", "kfiles": "paimon-kernel `files` (planning only)",
    "paimon": "`paimon` crate 0.4.0, 2 threads, streaming", "pypaimon": "pypaimon 2.1.0 (to_arrow)",
    "kblob": "paimon-kernel `blob`, local", "kblob_http": "paimon-kernel `blob`, HTTP Range",
    "pyblob": "pypaimon 2.1.0, row range + to_arrow, local",
}


def med(t, r):
    x = rows[t].get(r)
    return float(x["median_s"]) if x and x["ok"] == "ok" else None


for t in order:
    print("\n### %s\n" % t)
    print("| reader | median s | min s | max s | rows/s | MB/s (data files) | peak RSS MiB (median / max) |")
    print("|---|---|---|---|---|---|---|")
    for k, r in rows[t].items():
        if r["ok"] != "ok":
            print("| %s | failed | | | | | |" % NAMES.get(k, k))
            continue
        print("| %s | %s | %s | %s | %s | %s | %s / %s |" % (
            NAMES.get(k, k), r["median_s"], r["min_s"], r["max_s"],
            "{:,}".format(int(r["rows_per_s"])), r["MB_per_s"], r["median_rss_MiB"], r["max_rss_MiB"]))
    k2, k1 = med(t, "kernel"), med(t, "kernel1c")
    ratios = []
    for name, a, b in [
        ("kernel 1 core / floor 1 thread", k1, med(t, "floor1")),
        ("kernel 2 cores / floor 2 threads", k2, med(t, "floor2")),
        ("kernel 2 cores / floor 1 thread", k2, med(t, "floor1")),
        ("kernel 2 cores / cat", k2, med(t, "cat")),
        ("`paimon` crate / kernel 2 cores (speed-up)", med(t, "paimon"), k2),
        ("`paimon` crate / kernel counting rows (speed-up, both drop the batches)",
         med(t, "paimon"), med(t, "kcount")),
        ("pypaimon / kernel 2 cores (speed-up)", med(t, "pypaimon"), k2),
    ]:
        if a and b:
            ratios.append("%s = **%.2f×**" % (name, a / b))
    if t == "blob_one":
        kb = med(t, "kblob")
        for name, a, b in [("pypaimon / kernel local (speed-up)", med(t, "pyblob"), kb),
                           ("kernel HTTP / kernel local", med(t, "kblob_http"), kb)]:
            if a and b:
                ratios.append("%s = **%.2f×**" % (name, a / b))
    if ratios:
        print("\nRatios: " + "; ".join(ratios) + ".")
    if t in io:
        print("\nIO of one run (`.blob` reads: HTTP requests counted by the server, local reads "
              "counted as read system calls by strace; `--io-stats`: our host's own counters):\n")
        print("| reader | .blob reads | .blob bytes | all reads | all bytes | `--io-stats` |")
        print("|---|---|---|---|---|---|")
        for k, r in io[t].items():
            print("| %s | %s | %s | %s | %s | %s |" % (
                NAMES.get(k, k), r["blob_requests"], "{:,}".format(int(r["blob_bytes"])),
                r["all_requests"], "{:,}".format(int(r["all_bytes"])), r["io_stats"]))
