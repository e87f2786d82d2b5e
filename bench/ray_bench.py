#!/usr/bin/env python3
"""paimon_kernel on Ray and Daft next to pypaimon 2.1.0's connectors, in one run on one
local Ray cluster of 2 CPUs (not CI).

usage: python bench/ray_bench.py WAREHOUSE [--runs N] [--cli PATH] [--only read,write,compact,daft,floor]

WAREHOUSE holds bench.db/append_2m and bench.db/pk_dedup_1m (bench/gen_tables.py WAREHOUSE
append_2m pk_dedup_1m). Install the package with a release build (`pip install ./host-python`)
next to ray[data], daft and pypaimon in the same venv. For every measure: wall seconds after
ray.init (best of N runs and the median), rows/s, and the peak RSS of the cluster (sum over the
raylet's worker processes and the driver, sampled every 50 ms).

Cases:
  read   case 1 (append_2m) and case 2 (pk_dedup_1m): read_paimon(...).materialize()
  write  2 M rows append; 1 M rows PK (bucket 4): write_paimon of a materialized dataset
  compact  full compaction of a copy of pk_dedup_1m: paimon_kernel.ray.compact vs the CLI
  daft   case 1 read (to_arrow) and the 2 M-row append write: ours vs pypaimon.daft
  floor  Ray's own Parquet datasource (ray.data.read_parquet) over case 1's and case 2's data
         files, materialized: what Ray costs for the same bytes with no Paimon at all (case 2
         without merging, so a lower bound only); and Ray alone: case 1's decoded rows as
         memory-mapped Arrow IPC files read by a minimal Datasource (no decoding); with
         write: Dataset.write_parquet of the 2 M append rows (Ray's own Parquet sink)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

import psutil
import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class PeakRss:
    """Sum of RSS of this process and every Ray process (raylet, workers), sampled."""

    def __init__(self):
        self.peak = 0
        self._stop = threading.Event()

    def _rss(self):
        total = 0
        for p in psutil.process_iter(["name", "cmdline"]):
            try:
                cmd = " ".join(p.info["cmdline"] or [])
                if p.pid == os.getpid() or "ray::" in cmd or "default_worker.py" in cmd or "raylet" in cmd:
                    total += p.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return total

    def __enter__(self):
        def run():
            while not self._stop.is_set():
                self.peak = max(self.peak, self._rss())
                time.sleep(0.05)

        self._t = threading.Thread(target=run, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *a):
        self._stop.set()
        self._t.join()


def timed(fn, runs):
    times, peaks, rows = [], [], None
    for _ in range(runs):
        with PeakRss() as m:
            t0 = time.perf_counter()
            rows = fn()
            times.append(time.perf_counter() - t0)
        peaks.append(m.peak)
    return min(times), statistics.median(times), max(peaks), rows


def report(results, name, ours, theirs):
    o, t = results[ours], results[theirs]
    print(f"| {name} | {o['rows']:,} | {o['best']:.2f} / {o['median']:.2f} | {o['rows'] / o['best'] / 1e6:.2f} | {o['rss'] / 2**20:.0f} "
          f"| {t['best']:.2f} / {t['median']:.2f} | {t['rows'] / t['best'] / 1e6:.2f} | {t['rss'] / 2**20:.0f} | {t['best'] / o['best']:.2f}x |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("warehouse")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cli", default=None)
    ap.add_argument("--only", default="read,write,compact,daft,floor")
    args = ap.parse_args()
    only = set(args.only.split(","))
    wh = os.path.abspath(args.warehouse)
    db = os.path.join(wh, "bench.db")

    import ray

    import paimon_kernel as pk
    import paimon_kernel.ray as pkr
    from pypaimon import CatalogFactory, Schema
    import pypaimon.ray as ppr

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    from ray.data import DataContext

    DataContext.get_current().enable_progress_bars = False
    catalog_opts = {"warehouse": wh}
    catalog = CatalogFactory.create(catalog_opts)
    res = {}
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (2 cores)")

    if "read" in only:
        for table in ("append_2m", "pk_dedup_1m"):
            path = os.path.join(db, table)
            b, m, r, n = timed(lambda: pkr.read_paimon(path).materialize().count(), args.runs)
            res[f"k_read_{table}"] = dict(best=b, median=m, rss=r, rows=n)
            b, m, r, n = timed(lambda: ppr.read_paimon(f"bench.{table}", catalog_opts).materialize().count(), args.runs)
            res[f"p_read_{table}"] = dict(best=b, median=m, rss=r, rows=n)

    if "floor" in only:
        import glob

        for table in ("append_2m", "pk_dedup_1m"):
            files = sorted(glob.glob(os.path.join(db, table, "**", "*.parquet"), recursive=True))
            b, m, r, n = timed(lambda: ray.data.read_parquet(files).materialize().count(), args.runs)
            res[f"f_read_{table}"] = dict(best=b, median=m, rss=r, rows=n)
        # Ray's cost alone: the same decoded rows (our read of case 1) in 4 Arrow IPC files on
        # local disk, memory-mapped by each read task (no decoding), materialized.
        import pyarrow.ipc as ipc
        from ray.data import Datasource, ReadTask
        from ray.data.block import BlockMetadata

        rows = pk.open_table(os.path.join(db, "append_2m")).scan().to_arrow()
        ipc_dir = os.path.join(wh, "ipc_floor")
        os.makedirs(ipc_dir, exist_ok=True)
        ipc_files = []
        step = (rows.num_rows + 3) // 4
        for i in range(4):
            f = os.path.join(ipc_dir, f"part-{i}.arrow")
            with ipc.new_file(f, rows.schema) as w:
                w.write_table(rows.slice(i * step, step), max_chunksize=8192)
            ipc_files.append(f)
        schema = rows.schema
        del rows

        class IpcSource(Datasource):
            def estimate_inmemory_data_size(self):
                return None

            def get_read_tasks(self, parallelism, **_kw):
                def read(f):
                    return [ipc.open_file(pa.memory_map(f)).read_all()]

                return [ReadTask(lambda f=f: read(f), BlockMetadata(num_rows=None, size_bytes=None, input_files=[f], exec_stats=None), schema=schema) for f in ipc_files]

        b, m, r, n = timed(lambda: ray.data.read_datasource(IpcSource()).materialize().count(), args.runs)
        res["i_read_append_2m"] = dict(best=b, median=m, rss=r, rows=n)

    if "write" in only or "daft" in only:
        from gen_tables import PK_SCHEMA, SCHEMA, make_batch
        import numpy as np

        append_src = pa.concat_tables([make_batch(np.arange(i * 500_000, (i + 1) * 500_000, dtype=np.int64), i, SCHEMA) for i in range(4)])
        pk_src = make_batch(np.random.default_rng(1).permutation(1_000_000).astype(np.int64), 9, PK_SCHEMA)

    def fresh(name, schema, pks, options):
        catalog.create_database("bench", True)
        p = os.path.join(db, name)
        shutil.rmtree(p, ignore_errors=True)
        catalog.create_table(f"bench.{name}", Schema.from_pyarrow_schema(schema, primary_keys=pks, options=options), False)
        return p

    if "write" in only:
        ds_append = ray.data.from_arrow(append_src).repartition(4).materialize()
        ds_pk = ray.data.from_arrow(pk_src).repartition(4).materialize()

        def ours_write(ds, schema, pks, options, n):
            def run():
                p = fresh("w_bench", schema, pks, options)
                pkr.write_paimon(ds, p)
                return n
            return run

        def theirs_write(ds, schema, pks, options, n, **kw):
            def run():
                fresh("w_bench", schema, pks, options)
                ppr.write_paimon(ds, "bench.w_bench", catalog_opts, **kw)
                return n
            return run

        for label, ds, schema, pks, options, kw, n in (
            ("append_2m", ds_append, SCHEMA, None, {}, {}, 2_000_000),
            ("pk_1m_4b", ds_pk, PK_SCHEMA, ["id"], {"bucket": "4"}, {"hash_fixed_precluster": "map_groups"}, 1_000_000),
        ):
            b, m, r, _ = timed(ours_write(ds, schema, pks, options, n), args.runs)
            res[f"k_write_{label}"] = dict(best=b, median=m, rss=r, rows=n)
            b, m, r, _ = timed(theirs_write(ds, schema, pks, options, n, **kw), args.runs)
            res[f"p_write_{label}"] = dict(best=b, median=m, rss=r, rows=n)
        if "floor" in only:
            # Ray's own Parquet sink (pyarrow's writer) of the same append blocks: no table.
            def ray_parquet():
                out = os.path.join(wh, "parquet_floor")
                shutil.rmtree(out, ignore_errors=True)
                ds_append.write_parquet(out)
                return 2_000_000

            b, m, r, _ = timed(ray_parquet, args.runs)
            res["f_write_append_2m"] = dict(best=b, median=m, rss=r, rows=2_000_000)

    if "compact" in only:
        src = os.path.join(db, "pk_dedup_1m")

        def copy(name):
            p = os.path.join(db, name)
            shutil.rmtree(p, ignore_errors=True)
            shutil.copytree(src, p)
            return p

        def ours():
            p = copy("c_bench")
            pkr.compact(p, full=True)
            return 1_000_000

        def cli():
            p = copy("c_bench")
            subprocess.run([args.cli or "paimon-kernel", "compact", p, "--full"], check=True, capture_output=True)
            return 1_000_000

        b, m, r, n = timed(ours, args.runs)
        res["k_compact"] = dict(best=b, median=m, rss=r, rows=n)
        b, m, r, n = timed(cli, args.runs)
        res["c_compact"] = dict(best=b, median=m, rss=r, rows=n)

    if "daft" in only:
        import daft

        import paimon_kernel.daft as pkd
        import pypaimon.daft as ppd

        path = os.path.join(db, "append_2m")
        b, m, r, n = timed(lambda: pkd.read_paimon(path).to_arrow().num_rows, args.runs)
        res["k_daft_read"] = dict(best=b, median=m, rss=r, rows=n)
        b, m, r, n = timed(lambda: ppd.read_paimon("bench.append_2m", catalog_opts).to_arrow().num_rows, args.runs)
        res["p_daft_read"] = dict(best=b, median=m, rss=r, rows=n)
        df = daft.from_arrow(append_src)

        def ours_w():
            p = fresh("d_bench", SCHEMA, None, {})
            pkd.write_paimon(df, p)
            return 2_000_000

        def theirs_w():
            fresh("d_bench", SCHEMA, None, {})
            ppd.write_paimon(df, "bench.d_bench", catalog_opts)
            return 2_000_000

        b, m, r, n = timed(ours_w, args.runs)
        res["k_daft_write"] = dict(best=b, median=m, rss=r, rows=n)
        b, m, r, n = timed(theirs_w, args.runs)
        res["p_daft_write"] = dict(best=b, median=m, rss=r, rows=n)

    print()
    print("| case | rows | ours s (best / median) | M rows/s | peak RSS MiB | peer s (best / median) | M rows/s | peak RSS MiB | peer / ours |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, name in (("read_append_2m", "Ray read, case 1 (append_2m)"), ("read_pk_dedup_1m", "Ray read, case 2 (pk_dedup_1m)"),
                      ("write_append_2m", "Ray write, 2 M append"), ("write_pk_1m_4b", "Ray write, 1 M PK bucket 4")):
        if f"k_{key}" in res:
            report(res, name, f"k_{key}", f"p_{key}")
    for table in ("append_2m", "pk_dedup_1m"):
        if f"f_read_{table}" in res and f"k_read_{table}" in res:
            report(res, f"Ray read {table}: ours vs ray.data.read_parquet of its files (peer column = Ray's Parquet)", f"k_read_{table}", f"f_read_{table}")
    if "f_write_append_2m" in res and "k_write_append_2m" in res:
        report(res, "Ray write, 2 M append: ours vs Dataset.write_parquet (peer column = Ray's Parquet sink)", "k_write_append_2m", "f_write_append_2m")
    if "i_read_append_2m" in res and "k_read_append_2m" in res:
        report(res, "Ray read append_2m: ours vs memory-mapped Arrow IPC of the same rows (peer column = Ray alone)", "k_read_append_2m", "i_read_append_2m")
    if "k_compact" in res:
        report(res, "full compaction of pk_dedup_1m: Ray vs CLI (peer column = CLI)", "k_compact", "c_compact")
    if "k_daft_read" in res:
        report(res, "Daft read, case 1", "k_daft_read", "p_daft_read")
        report(res, "Daft write, 2 M append", "k_daft_write", "p_daft_write")
    load = os.getloadavg()
    print(f"\nload average at end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (2 cores)")


if __name__ == "__main__":
    main()
