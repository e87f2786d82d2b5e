#!/usr/bin/env python3
"""Markdown tables of wbench.py's results (medians of the counted runs, runs >= 1).

usage: python wsummarize.py DATA/res/wresults.jsonl

Per case and writer: wall seconds (median, min, max), CPU seconds (user + sys, median), rows/s
over wall and rows per CPU second (the per-core throughput: robust on a loaded machine), peak
RSS, the 1-minute load average seen before the runs. Then the ratios the issue asks for,
on CPU seconds and on wall seconds: kernel / floor (compactions: floor = decode + encode),
Java / kernel, pypaimon / kernel, paimon crate / kernel. W4 (100 blobs of 1 MiB) adds the MiB/s
of blob bytes and the ratios to its second floor (dd) and to pypaimon-rust.
"""
import json, sys
from collections import defaultdict

ROWS = {"W1": 2_000_000, "W2": 1_000_000, "W3": 200_000, "C1_dedup": 1_000_000,
        "C1_partial": 1_000_000, "C1_agg": 1_000_000, "C2": 1_000_000, "C3": 2_000_000, "W4": 100}
BLOB_MIB = {"W4": 100}
NAMES = {"kernel": "paimon-kernel CLI (2 cores)", "kernel1c": "paimon-kernel CLI, `taskset -c 0`",
         "paimon": "`paimon` crate 0.4.0", "pypaimon": "pypaimon 2.1.0", "java": "Java Paimon 2.0.0 (process)",
         "floor": "encode floor (arrow-rs, 1 thread)",
         "floor4": "encode floor into the 4 files of 4 buckets (arrow-rs, 1 thread)", "floor_decode": "decode floor (1 thread)",
         "floor_encode": "encode floor of the output (1 thread)", "kfiles": "`paimon-kernel files --json`",
         "kcount": "`paimon-kernel scan --format count`", "pyplan": "pypaimon 2.1.0 `plan()`",
         "javafiles": "Java 2.0.0 `$files` (java-check, JVM start + printing)",
         "pyrust": "pypaimon-rust 0.4.0"}
W4_NAMES = {"floor": "copy floor: `cp` of the 100 MiB of blob bytes",
            "floor_dd": "copy floor: `dd bs=8M` (read + write)"}


def med(xs):
    xs = sorted(xs)
    return xs[(len(xs) - 1) // 2] if xs else float("nan")


def main():
    runs = defaultdict(list)
    reps = {}
    k1 = []
    for ln in open(sys.argv[1]):
        r = json.loads(ln)
        if r["writer"] == "java_repeat":
            reps[r["case"]] = r
        elif r["case"] == "K1":
            k1.append(r)
        elif r.get("run", 0) >= 1 and r.get("rc", 0) == 0:
            runs[(r["case"], r["writer"])].append(r)
    cases = []
    for (c, _w) in runs:
        if c not in cases:
            cases.append(c)
    for c in cases:
        rows = ROWS.get(c)
        print("\n#### %s\n" % c)
        print("| writer | runs | wall s median (min-max) | CPU s (user+sys) | rows/s (wall) | rows per CPU s | peak RSS MiB median / max | load1 |")
        print("|---|---|---|---|---|---|---|---|")
        st = {}
        for (cc, w), rs in runs.items():
            if cc != c:
                continue
            wall = med([r["wall_s"] for r in rs])
            cpu = med([r["user_s"] + r["sys_s"] for r in rs])
            rss = [r["rss_mib"] for r in rs]
            st[w] = (wall, cpu)
            loads = [r["load1"] for r in rs]
            print("| %s | %d | %.2f (%.2f-%.2f) | %.2f | %s | %s | %.0f / %.0f | %.1f-%.1f |" % (
                (W4_NAMES.get(w) if c in BLOB_MIB else None) or NAMES.get(w, w), len(rs), wall, min(r["wall_s"] for r in rs), max(r["wall_s"] for r in rs),
                cpu, "{:,.0f}".format(rows / wall) if rows else "-",
                "{:,.0f}".format(rows / cpu) if rows and cpu else "-", med(rss), max(rss),
                min(loads), max(loads)))
        if c in BLOB_MIB:
            print("\nBlob bytes per wall second: " + ", ".join(
                "%s %.0f MiB/s" % (w, BLOB_MIB[c] / st[w][0]) for w in st if st[w][0] > 0) + ".")
        if (c, "java") in runs:
            cold = []
            for r in runs[(c, "java")]:
                kv = dict(x.split("=", 1) for x in r["stdout"].split() if "=" in x)
                if "total_ms" in kv:
                    cold.append(int(kv["total_ms"]) - int(kv.get("create_ms", 0)))
            if cold:
                print("\nJava, one job per JVM (the process rows above): the job itself (in-process ms, "
                      "without JVM start and table creation) median %d ms." % med(cold))
        if c in reps:
            its = reps[c]["iterations_ms"]
            p = reps[c]["process"]
            print("\nJava, jobs %s in one JVM (job ms, in-process, without the untimed copy/create): %s; "
                  "warm (last) = %d ms; process peak RSS %.0f MiB." % (
                      ",".join(str(i) for i, _ in its), ", ".join("%d" % ms for _, ms in its),
                      its[-1][1], p["rss_mib"]))
            cpu = reps[c].get("iterations_cpu_ms") or []
            if cpu:
                print("Java CPU per job in that JVM (all its threads, JIT and GC included): %s ms; "
                      "warm (last) = %d CPU ms." % (", ".join("%d" % ms for _, ms in cpu), cpu[-1][1]))
        rat = []
        def r_(a, b, label):
            if a in st and b in st and st[b][0] > 0 and st[b][1] > 0:
                rat.append("%s = **%.2f×** CPU, %.2f× wall" % (label, st[a][1] / st[b][1], st[a][0] / st[b][0]))
        floor = None
        if "floor" in st:
            floor = st["floor"]
        elif "floor_decode" in st and "floor_encode" in st:
            floor = tuple(st["floor_decode"][i] + st["floor_encode"][i] for i in range(2))
            st["floor_sum"] = floor
        if floor:
            f = "floor" if "floor" in st else "floor_sum"
            r_("kernel", f, "kernel / floor")
            r_("kernel1c", f, "kernel 1 core / floor")
            r_("kernel", "floor4", "kernel / 4-file floor")
        r_("java", "kernel", "Java / kernel")
        r_("java", "kernel1c", "Java / kernel 1 core")
        r_("paimon", "kernel", "`paimon` crate / kernel")
        r_("pypaimon", "kernel", "pypaimon / kernel")
        r_("kernel", "floor_dd", "kernel / dd floor")
        r_("kernel1c", "floor_dd", "kernel 1 core / dd floor")
        r_("pyrust", "kernel", "pypaimon-rust / kernel")
        if "pyrust" in st and "kernel" in st:
            rat.append("peak RSS kernel / pypaimon-rust = %.2f" % (
                med([r["rss_mib"] for r in runs[(c, "kernel")]]) / med([r["rss_mib"] for r in runs[(c, "pyrust")]])))
        if "java" in st and "kernel" in st:
            rj = [r["rss_mib"] for r in runs[(c, "java")]]
            rk = [r["rss_mib"] for r in runs[(c, "kernel")]]
            rat.append("peak RSS kernel / Java = %.2f" % (med(rk) / med(rj)))
        if rat:
            print("\nRatios (medians): " + "; ".join(rat) + ".")
    if k1:
        print("\n#### K1 (one commit of 1,000 files on the K1 table; its size: see the text)\n")
        print("| run | files | commit ms (in process) | write s (10 writers, not part of the commit) | snapshot | process peak RSS MiB | load1 |")
        print("|---|---|---|---|---|---|---|")
        for r in k1:
            print("| %d | %s | %s | %s | %s | %.0f | %.1f |" % (r["run"], r.get("files"), r.get("commit_ms"),
                                                        r.get("write_s"), r.get("snapshots"), r["rss_mib"], r["load1"]))


if __name__ == "__main__":
    main()
