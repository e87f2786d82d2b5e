#!/usr/bin/env python3
"""Write, compaction and commit benchmark of paimon-kernel side by side with its peers (issue 18).

usage: python wbench.py [--runs N] [--cases W1,W2,W3,W4,C1,C2,C3,K1,K2] [--writers a,b,...]
                        [--skip-verify] [--java-repeat N]
Run with the pypaimon 2.1.0 venv's python (~/.cache/paimon-kernel/venv). See README.md
("Writing, compaction and commit").

Env: DATA (default /work/wbench-data: inputs in DATA/in, tables in DATA/wh/bench.db, logs in
DATA/res), BIN (dir of the release paimon-kernel and of kbench's kbench, encode_floor,
decode_floor), PEER_BIN (dir of peer's paimon_write), KBENCH (the kbench binary), JAVA_RUN
(bench/peer-java/run), PYRUST (python of the pypaimon-rust 0.4.0 venv, W4).

Per case: the prepared tables are built once by our CLI (untimed); then one warm-up round in
which every writer's output is verified (read back by `paimon-kernel scan --format arrow`
and compared with the model computed from the inputs; our outputs also read by pypaimon), then
--runs counted rounds, the writers interleaved (A B C A B C ...) so that drift of the shared
machine hits all of them alike. Each run: /usr/bin/time -v (wall, user, sys, peak RSS) and the
1-minute load average before it. Java additionally runs --java-repeat jobs in one JVM (the
first is the cold JIT, the others warm). Results: DATA/res/wresults.jsonl (one line per run),
DATA/res/wsummary.md (the tables).
"""
import argparse, hashlib, json, os, shutil, subprocess, sys, time
import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_tables as g
import gen_write_inputs as gi

DATA = os.path.abspath(os.environ.get("DATA", "/work/wbench-data"))
IN = os.path.join(DATA, "in")
WH = os.path.join(DATA, "wh")
DB = os.path.join(WH, "bench.db")
RES = os.path.join(DATA, "res")
BIN = os.environ.get("BIN", "/work/target-bench/release")
PEER_BIN = os.environ.get("PEER_BIN", BIN)
KBENCH = os.environ.get("KBENCH", os.path.join(BIN, "kbench"))
JAVA_RUN = os.environ.get("JAVA_RUN", os.path.join(HERE, "peer-java", "run"))
PK = os.path.join(BIN, "paimon-kernel")
PY = sys.executable
PYRUST = os.environ.get("PYRUST", os.path.expanduser("~/.cache/paimon-kernel/venv-rust/bin/python"))
JAVA_CHECK = os.environ.get("PAIMON_JAVA_CHECK_DIR", os.path.expanduser("~/.cache/paimon-kernel/java-check-2.0.0"))

FIELDS = [("id", "BIGINT"), ("name", "STRING"), ("city", "STRING"), ("amount", "DOUBLE"),
          ("qty", "INT"), ("ts", "TIMESTAMP(6)"), ("flag", "BOOLEAN"), ("note", "STRING")]


def schema_json(pk=False, options=None):
    fields = [{"name": n, "type": t + (" NOT NULL" if pk and n == "id" else "")} for n, t in FIELDS]
    s = {"fields": fields, "options": dict(options or {})}
    if pk:
        s["primaryKeys"] = ["id"]
    return json.dumps(s)


# W4: managed-BLOB primary-key table (README "Primary-key tables with BLOB ..."), one bucket, so
# each writer seals one pack of the 100 MiB.
W4_SCHEMA = json.dumps({"fields": [{"name": "id", "type": "BIGINT NOT NULL"},
                                   {"name": "name", "type": "STRING"},
                                   {"name": "data", "type": "BLOB"}],
                        "primaryKeys": ["id"], "options": {"bucket": "1"}})

DE_OPTS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
C1_OPTS = {
    "dedup": {"bucket": "1", "merge-engine": "deduplicate"},
    "partial": {"bucket": "1", "merge-engine": "partial-update"},
    "agg": {"bucket": "1", "merge-engine": "aggregation", "fields.amount.aggregate-function": "sum",
            "fields.qty.aggregate-function": "max"},
}


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s %s" % (" ".join(cmd), r.returncode, r.stdout[-2000:],
                                                      r.stderr[-2000:]))
    return r.stdout


def create(path, sjson):
    shutil.rmtree(path, ignore_errors=True)
    f = os.path.join(RES, "schema.%d.json" % os.getpid())
    with open(f, "w") as fh:
        fh.write(sjson)
    sh([PK, "create", path, "--schema", f])


def copytree(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    sh(["cp", "-r", src, dst])


def t(name):
    return os.path.join(DB, name)


def inp(name, ext="arrow"):
    return os.path.join(IN, "%s.%s" % (name, ext))


# ---------------------------------------------------------------- prepared tables (untimed)

def prepare(case):
    """Builds the pristine tables a case starts from (once; kept across runs of wbench.py)."""
    def once(name, build):
        if os.path.exists(os.path.join(t(name), "snapshot", "LATEST")):
            return
        t0 = time.time()
        build(t(name))
        print("  prepared %s in %.1fs" % (name, time.time() - t0), flush=True)
    if case == "W3":
        def b(p):
            create(p, schema_json(options=DE_OPTS))
            sh([PK, "write", p, "--input", inp("w1_append_2m")])
        once("p_w3_base", b)
    elif case == "C1":
        for eng in C1_OPTS:
            def b(p, eng=eng):
                create(p, schema_json(pk=True, options=C1_OPTS[eng]))
                for k in range(5):
                    src = "c1_partial_run%d" % k if eng == "partial" else "c1_run%d" % k
                    sh([PK, "write", p, "--input", inp(src)])
            once("p_c1_" + eng, b)
    elif case == "C2":
        def b(p):
            create(p, schema_json(options=DE_OPTS))
            sh([PK, "write", p, "--input", inp("c2_base")])
            for u in range(1, 10):
                sh([PK, "update", p, "--input", inp("c2_upd%d" % u)])
        once("p_c2_de", b)
    elif case == "C3":
        def b(p):
            create(p, schema_json(options={"target-file-size": "1kb"}))
            sh([PK, "write", p, "--input", inp("c3_small")])
            sh([PK, "alter", p, "--reset", "target-file-size"])
        once("p_c3_small", b)
    elif case in ("K1", "K2"):
        def b(p):
            shutil.rmtree(p, ignore_errors=True)
            # `unaware` (bucket -1): its writers restore nothing, so the 1,000 build commits stay
            # linear; a fixed-bucket build plans every live file before each commit (quadratic,
            # stopped at 700 snapshots in results/2026-12-01.md). K1_BUILD=fixed builds that one.
            kind = os.environ.get("K1_BUILD", "unaware")
            out = sh([KBENCH, "build", p, "1000", "100"] + ([] if kind == "fixed" else [kind]))
            print("   ", out.strip().splitlines()[-1])
        once("p_k1", b)


# ---------------------------------------------------------------- models and verification

def read_arrow_stream(path):
    with open(path, "rb") as f:
        return ipc.open_stream(f).read_all()


def read_arrow_file(path):
    return ipc.open_file(path).read_all()


_models = {}


def model(name):
    """Expected rows (a pyarrow Table) of the output of case `name`."""
    if name in _models:
        return _models[name]
    if name in ("W1", "C3"):
        m = read_arrow_file(inp("w1_append_2m"))
    elif name == "W2":
        m = read_arrow_file(inp("w2_pk_1m"))
    elif name == "W3":
        base = read_arrow_file(inp("w1_append_2m"))
        upd = read_arrow_file(inp("w3_update"))
        amount = base.column("amount").to_numpy().copy()
        amount[upd.column("_ROW_ID").to_numpy()] = upd.column("amount").to_numpy()
        m = base.set_column(base.schema.get_field_index("amount"), "amount", pa.array(amount))
    elif name.startswith("C1_"):
        eng = name[3:]
        parts = []
        for k in range(5):
            b = read_arrow_file(inp(("c1_partial_run%d" if eng == "partial" else "c1_run%d") % k))
            parts.append(b.append_column("commit", pa.array(np.full(b.num_rows, k))))
        df = pa.concat_tables(parts).to_pandas().sort_values(["id", "commit"], kind="stable")
        if eng == "dedup":
            e = df.drop_duplicates("id", keep="last")
        else:
            grp = df.groupby("id", sort=True)
            e = grp.last()
            if eng == "agg":
                e["amount"] = grp["amount"].sum()
                e["qty"] = grp["qty"].max()
            e = e.reset_index()
        e = e.drop(columns="commit").reset_index(drop=True)
        m = pa.Table.from_pandas(e, schema=g.PK_SCHEMA, preserve_index=False)
    elif name == "C2":
        m = read_arrow_file(inp("c2_base"))
        for u in range(1, 10):
            col = gi.C2_COLS[u - 1]
            m = m.set_column(m.schema.get_field_index(col), col,
                             read_arrow_file(inp("c2_upd%d" % u)).column(col))
    else:
        raise KeyError(name)
    _models[name] = m
    return m


def checksum(tbl):
    """sha256 over the canonical text of a few aggregates per column of the id-sorted rows."""
    h = hashlib.sha256()
    for f in tbl.schema:
        a = tbl.column(f.name).combine_chunks()
        h.update(("%s:%d:" % (f.name, a.null_count)).encode())
        if pa.types.is_string(a.type) or pa.types.is_large_string(a.type):
            h.update(hashlib.sha256("\x00".join(x or "" for x in a.to_pylist()).encode()).digest())
        else:
            v = a.cast(pa.float64() if pa.types.is_floating(a.type) else pa.int64())
            h.update(np.ascontiguousarray(v.fill_null(0).to_numpy(zero_copy_only=False)).tobytes())
    return h.hexdigest()[:16]


def compare(got, exp, float_sum=False):
    got = got.select([f.name for f in exp.schema]).sort_by("id")
    exp = exp.sort_by("id")
    if got.num_rows != exp.num_rows:
        return False, "rows %d != expected %d" % (got.num_rows, exp.num_rows)
    for f in exp.schema:
        a = got.column(f.name).combine_chunks()
        b = exp.column(f.name).combine_chunks().cast(a.type)
        if float_sum and f.name == "amount":
            same = (a.null_count == b.null_count and np.allclose(
                a.to_numpy(zero_copy_only=False), b.to_numpy(zero_copy_only=False),
                rtol=1e-12, atol=1e-9, equal_nan=True))
        else:
            same = a.equals(b)
        if not same:
            return False, "column %s differs" % f.name
    exp_c = exp.cast(pa.schema([pa.field(f.name, got.schema.field(f.name).type) for f in exp.schema]))
    return True, "rows=%d checksum=%s" % (got.num_rows, checksum(exp_c))


def blob_digests(tbl):
    """{id: (name, len, sha256)} of a W4 table's rows."""
    out = {}
    for i, n, d in zip(tbl.column("id").to_pylist(), tbl.column("name").to_pylist(),
                       tbl.column("data").to_pylist()):
        out[i] = (n, None if d is None else len(d), None if d is None else hashlib.sha256(d).hexdigest())
    return out


def verify_w4(table_path, writer, log):
    """W4: our scan and pypaimon-rust's read of table_path, every blob's sha256 against the input;
    also what the writer left on disk (packs, data files)."""
    exp = blob_digests(read_arrow_file(inp("w4_blob_100")))
    out = os.path.join(RES, "verify.%d.arrow" % os.getpid())
    sh([PK, "scan", table_path, "--format", "arrow", "--output", out])
    got = blob_digests(read_arrow_stream(out))
    os.remove(out)
    ok = got == exp
    line = "verify W4 %s (paimon-kernel scan): %s rows=%d blobs_sha256_equal=%d" % (
        writer, "OK" if ok else "DIFFERS", len(got), sum(1 for k in exp if got.get(k) == exp[k]))
    jf = os.path.join(RES, "verify.%d.json" % os.getpid())
    r = subprocess.run([PYRUST, os.path.join(HERE, "pyrust_blob.py"), "read", WH,
                        "bench." + os.path.basename(table_path), jf], capture_output=True, text=True)
    if r.returncode == 0:
        got2 = {int(k): tuple(v) for k, v in json.load(open(jf)).items()}
        os.remove(jf)
        ok2 = got2 == exp
        line += "; pypaimon-rust 0.4.0 read: %s rows=%d" % ("OK" if ok2 else "DIFFERS", len(got2))
        ok = ok and ok2
    else:
        line += "; pypaimon-rust 0.4.0 read FAILED: %s" % r.stderr.strip()[-300:]
        # Java's tables are checked by our read alone; pypaimon-rust failing on them is a fact
        # about pypaimon-rust, printed, not a failed run.
        ok = ok and writer == "java"
    files = []
    for d, _, fs in os.walk(table_path):
        if os.path.basename(d).startswith("bucket-"):
            files += [(f, os.path.getsize(os.path.join(d, f))) for f in fs]
    packs = [sz for f, sz in files if f.endswith(".managed.blob")]
    data = [sz for f, sz in files if not f.endswith(".managed.blob")]
    line += "; on disk: %d pack(s) %d bytes, %d other bucket file(s) %d bytes" % (
        len(packs), sum(packs), len(data), sum(data))
    print("  " + line, flush=True)
    log.write(line + "\n")
    if not ok:
        raise RuntimeError(line)


def verify(case, table_path, writer, log):
    """Reads table_path back with our CLI (and pypaimon for our own output) and compares it with
    the case's model; raises on a difference."""
    if case == "W4":
        return verify_w4(table_path, writer, log)
    out = os.path.join(RES, "verify.%d.arrow" % os.getpid())
    sh([PK, "scan", table_path, "--format", "arrow", "--output", out])
    got = read_arrow_stream(out)
    os.remove(out)
    ok, msg = compare(got, model(case), float_sum=case == "C1_agg")
    line = "verify %s %s (paimon-kernel scan): %s %s" % (case, writer, "OK" if ok else "DIFFERS", msg)
    if ok and writer.startswith("kernel"):
        name = os.path.basename(table_path)
        r = subprocess.run([PY, "-c", PYREAD, WH, "bench." + name, out], capture_output=True,
                           text=True)
        if r.returncode == 0:
            ok2, msg2 = compare(read_arrow_stream(out), model(case), float_sum=case == "C1_agg")
            os.remove(out)
            line += "; pypaimon 2.1.0 read: %s %s" % ("OK" if ok2 else "DIFFERS", msg2)
            ok = ok and ok2
        else:
            line += "; pypaimon 2.1.0 read FAILED: %s" % r.stderr.strip()[-300:]
            ok = False
    print("  " + line, flush=True)
    log.write(line + "\n")
    if not ok:
        raise RuntimeError(line)


PYREAD = """
import sys, pyarrow as pa
from pypaimon import CatalogFactory
t = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table(sys.argv[2])
rb = t.new_read_builder()
tbl = rb.new_read().to_arrow(rb.new_scan().plan().splits())
with pa.OSFile(sys.argv[3], "wb") as f, pa.ipc.new_stream(f, tbl.schema) as w:
    w.write_table(tbl)
"""


# ---------------------------------------------------------------- timing

def timed(cmd, log):
    tf = os.path.join(RES, "time.%d.tmp" % os.getpid())
    load = os.getloadavg()[0]
    r = subprocess.run(["/usr/bin/time", "-v", "-o", tf] + cmd, capture_output=True, text=True)
    info = {}
    for ln in open(tf):
        k, _, v = ln.strip().rpartition(": ")
        info[k.strip()] = v
    el = info.get("Elapsed (wall clock) time (h:mm:ss or m:ss)", "0:0")
    parts = [float(x) for x in el.split(":")]
    wall = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    log.write("$ %s\n%s%s\n" % (" ".join(cmd), r.stdout[-1500:], r.stderr[-1500:]))
    return {"wall_s": wall, "user_s": float(info.get("User time (seconds)", 0)),
            "sys_s": float(info.get("System time (seconds)", 0)),
            "rss_mib": int(info.get("Maximum resident set size (kbytes)", 0)) / 1024.0,
            "load1": load, "rc": r.returncode, "stdout": r.stdout.strip()[-4000:]}


def w4_parquet():
    """W4's input as Parquet for the Java writer (uncompressed, row groups of 10 rows)."""
    p = inp("w4_blob_100", "parquet")
    if not os.path.exists(p):
        import pyarrow.parquet as pq
        tbl = read_arrow_file(inp("w4_blob_100"))
        tbl = tbl.cast(pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()),
                                  ("data", pa.binary())]))
        pq.write_table(tbl, p, compression="none", row_group_size=10)
    return p


def writers_for(case):
    """[(writer, prep(), cmd, output table or None)] of a case."""
    ws = []
    if case in ("W1", "W2"):
        pk = case == "W2"
        src = "w2_pk_1m" if pk else "w1_append_2m"
        sj = schema_json(pk=pk, options={"bucket": "4"} if pk else None)
        for w in ("kernel", "kernel1c", "paimon", "pypaimon"):
            name = "%s_%s" % (case.lower(), w)
            cmd = {
                "kernel": [PK, "write", t(name), "--input", inp(src)],
                "kernel1c": ["taskset", "-c", "0", PK, "write", t(name), "--input", inp(src)],
                "paimon": [os.path.join(PEER_BIN, "paimon_write"), WH, "bench", name, "write", inp(src)],
                "pypaimon": [PY, os.path.join(HERE, "pypaimon_write.py"), WH, "bench." + name, "write",
                             inp(src)],
            }[w]
            ws.append((w, (lambda p=t(name): create(p, sj)), cmd, t(name)))
        jn = "%s_java" % case.lower()
        ws.append(("java", (lambda p=t(jn): shutil.rmtree(p, ignore_errors=True)),
                   [JAVA_RUN, "write", "pk" if pk else "append", t(jn), inp(src, "parquet")], t(jn)))
        out = os.path.join(RES, "floor.%d.parquet" % os.getpid())
        ws.append(("floor", (lambda: None), [os.path.join(BIN, "encode_floor"), inp(src),
                                              out, "pk" if pk else "append"], None))
        if pk:
            # The 4 files a table of 4 buckets writes: each its own dictionaries and stats.
            out4 = os.path.join(RES, "floor4.%d.parquet" % os.getpid())
            ws.append(("floor4", (lambda: None), [os.path.join(BIN, "encode_floor"), inp(src),
                                                   out4, "pk4"], None))
    elif case == "W4":
        src = inp("w4_blob_100")
        # No pypaimon 2.1.0 row: its Python writer refuses BLOB columns of primary-key tables
        # ("Primary-key Blob writes require the native writer; enable write.native.enabled"),
        # and its native writer is pypaimon-rust's (the `pyrust` row), absent from its venv.
        for w in ("kernel", "kernel1c", "pyrust"):
            name = "w4_%s" % w
            cmd = {
                "kernel": [PK, "write", t(name), "--input", src],
                "kernel1c": ["taskset", "-c", "0", PK, "write", t(name), "--input", src],
                "pyrust": [PYRUST, os.path.join(HERE, "pyrust_blob.py"), "write", WH, "bench." + name, src],
            }[w]
            ws.append((w, (lambda p=t(name): create(p, W4_SCHEMA)), cmd, t(name)))
        # Java 2.0 (PrimaryKeyBlobExternalizer): the same rows from Parquet, `data` as BYTES.
        ws.append(("java", (lambda p=t("w4_java"): shutil.rmtree(p, ignore_errors=True)),
                   [JAVA_RUN, "write", "blob", t("w4_java"), w4_parquet()], t("w4_java")))
        # floors: the blob bytes copied once (cp: copy_file_range; dd: read + write, 8 MiB blocks)
        dst = os.path.join(WH, "w4_floor.bin")
        rm = lambda: os.path.exists(dst) and os.remove(dst)
        ws.append(("floor", rm, ["cp", inp("w4_blobs", "bin"), dst], None))
        ws.append(("floor_dd", rm, ["dd", "if=" + inp("w4_blobs", "bin"), "of=" + dst, "bs=8M"], None))
    elif case == "W3":
        for w in ("kernel", "kernel1c", "paimon", "pypaimon"):
            name = "w3_%s" % w
            cmd = {
                "kernel": [PK, "update", t(name), "--input", inp("w3_update")],
                "kernel1c": ["taskset", "-c", "0", PK, "update", t(name), "--input", inp("w3_update")],
                "paimon": [os.path.join(PEER_BIN, "paimon_write"), WH, "bench", name, "update",
                           inp("w3_update")],
                "pypaimon": [PY, os.path.join(HERE, "pypaimon_write.py"), WH, "bench." + name, "update",
                             inp("w3_update")],
            }[w]
            ws.append((w, (lambda p=t(name): copytree(t("p_w3_base"), p)), cmd, t(name)))
    elif case.startswith("C"):
        src = {"C2": "p_c2_de", "C3": "p_c3_small"}.get(case) or "p_c1_" + case[3:]
        kind = {"C2": "de", "C3": "append"}.get(case, "pk")
        for w in ("kernel", "kernel1c", "java"):
            name = "%s_%s" % (case.lower(), w)
            cmd = {
                "kernel": [PK, "compact", t(name), "--full"],
                "kernel1c": ["taskset", "-c", "0", PK, "compact", t(name), "--full"],
                "java": [JAVA_RUN, "compact", kind, "-", t(name)],
            }[w]
            ws.append((w, (lambda p=t(name), s=t(src): copytree(s, p)), cmd, t(name)))
        ws.append(("floor_decode", (lambda: None),
                   [os.path.join(BIN, "decode_floor"), t(src), "1"], None))
        ws.append(("floor_encode", (lambda: None),
                   [os.path.join(BIN, "encode_floor"), os.path.join(RES, case + ".model.arrow"),
                    os.path.join(RES, "floor.%d.parquet" % os.getpid()), kind if kind == "pk" else "append"], None))
    elif case == "K2":
        ws.append(("kfiles", (lambda: None), [PK, "files", t("p_k1"), "--json"], None))
        ws.append(("kcount", (lambda: None), [PK, "scan", t("p_k1"), "--format", "count"], None))
        ws.append(("pyplan", (lambda: None), [PY, "-c", PYPLAN, WH, "bench.p_k1"], None))
        ws.append(("javafiles", (lambda: None), [JAVA_CHECK + "/files", t("p_k1")], None))
    return ws


PYPLAN = """
import sys, time
t0 = time.perf_counter()
from pypaimon import CatalogFactory
t = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table(sys.argv[2])
splits = t.new_read_builder().new_scan().plan().splits()
print("pypaimon plan splits=%d files=%d total_s=%.3f" % (len(splits), sum(len(s.files) for s in splits), time.perf_counter() - t0))
"""


def write_model_ipc(case):
    """The model rows as an Arrow IPC file (input of the encode floor of a compaction)."""
    p = os.path.join(RES, case + ".model.arrow")
    if not os.path.exists(p):
        m = model(case).combine_chunks()
        with ipc.new_file(p, m.schema) as w:
            for b in m.to_batches(max_chunksize=8192):
                w.write_batch(b)
    return p


def java_repeat(case, n, log):
    """Java jobs in one JVM: iterations_ms [(iteration, ms)] (iteration 0 = cold) and
    iterations_cpu_ms [(iteration, CPU ms of the whole JVM during the job)]."""
    if case in ("W1", "W2"):
        cmd = [JAVA_RUN, "write", "pk" if case == "W2" else "append", t("%s_javarep" % case.lower()),
               inp("w2_pk_1m" if case == "W2" else "w1_append_2m", "parquet"), "--repeat", str(n)]
        key = ("write_ms", "commit_ms")
    elif case == "W4":
        cmd = [JAVA_RUN, "write", "blob", t("w4_javarep"), w4_parquet(), "--repeat", str(n)]
        key = ("write_ms", "commit_ms")
    elif case.startswith("C"):
        src = {"C2": "p_c2_de", "C3": "p_c3_small"}.get(case) or "p_c1_" + case[3:]
        kind = {"C2": "de", "C3": "append"}.get(case, "pk")
        cmd = [JAVA_RUN, "compact", kind, t(src), t("%s_javarep" % case.lower()), "--repeat", str(n)]
        key = ("compact_ms", "commit_ms")
    else:
        return None
    r = timed(cmd, log)
    its, cpu = [], []
    for ln in r["stdout"].splitlines():
        kv = dict(x.split("=", 1) for x in ln.split() if "=" in x)
        if "iter" in kv:
            its.append((int(kv["iter"]), sum(int(kv[k]) for k in key)))
            if "cpu_ms" in kv:
                cpu.append((int(kv["iter"]), int(kv["cpu_ms"])))
    return {"iterations_ms": its, "iterations_cpu_ms": cpu, "process": r}


def med(xs):
    xs = sorted(xs)
    return xs[(len(xs) - 1) // 2] if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", default="W1,W2,W3,W4,C1_dedup,C1_partial,C1_agg,C2,C3,K1,K2")
    ap.add_argument("--writers", default="")
    ap.add_argument("--skip-verify", action="store_true")
    ap.add_argument("--java-repeat", type=int, default=4)
    ap.add_argument("--slow-runs", type=int, default=1,
                    help="counted runs of pypaimon (minutes per run)")
    ap.add_argument("--k1-runs", type=int, default=5)
    a = ap.parse_args()
    os.makedirs(RES, exist_ok=True)
    if a.cases == "W4":
        if not os.path.exists(inp("w4_blobs", "bin")):
            subprocess.run([PY, os.path.join(HERE, "gen_write_inputs.py"), IN, "w4"], check=True)
    elif not os.path.exists(inp("k1_rows")):
        subprocess.run([PY, os.path.join(HERE, "gen_write_inputs.py"), IN], check=True)
    only = set(a.writers.split(",")) if a.writers else None
    log = open(os.path.join(RES, "wbench.log"), "a")
    res = open(os.path.join(RES, "wresults.jsonl"), "a")
    for case in a.cases.split(","):
        print("== %s" % case, flush=True)
        prepare(case.split("_")[0] if case.startswith("C1") else case)
        if case == "K1":
            def nfiles():
                return int(subprocess.run("find %s -name '*.parquet' | wc -l" % t("p_k1"), shell=True,
                                          capture_output=True, text=True).stdout)
            for i in range(a.k1_runs):
                before = nfiles()
                r = timed([KBENCH, "commit", t("p_k1"), "10", "100"], log)
                kv = dict(x.split("=", 1) for x in r["stdout"].split() if "=" in x)
                kv["files"] = str(nfiles() - before)  # kbench's own count reads 0 (files_written)
                r["stdout"] = r["stdout"].replace("files=0 ", "files=%s " % kv["files"])
                rec = {"case": "K1", "writer": "kernel_api", "run": i, **r, **kv}
                res.write(json.dumps(rec) + "\n"); res.flush()
                print("  K1 run %d: %s (load %.2f, rss %.0f MiB)" % (i, r["stdout"], r["load1"], r["rss_mib"]),
                      flush=True)
            continue
        if case.startswith("C"):
            write_model_ipc(case)
        ws = [w for w in writers_for(case) if only is None or w[0] in only]
        for rnd in range(a.runs + 1):
            for (w, prep, cmd, out) in ws:
                if w == "pypaimon" and rnd > a.slow_runs:
                    continue
                prep()
                r = timed(cmd, log)
                rec = {"case": case, "writer": w, "run": rnd, **r}
                res.write(json.dumps(rec) + "\n"); res.flush()
                print("  %s round %d %-12s wall %.2fs user %.2f sys %.2f rss %.0f MiB load %.2f rc %d | %s" % (
                    case, rnd, w, r["wall_s"], r["user_s"], r["sys_s"], r["rss_mib"], r["load1"], r["rc"],
                    r["stdout"].splitlines()[-1][:160] if r["stdout"] else ""), flush=True)
                if r["rc"] != 0:
                    print("  %s %s FAILED, see %s" % (case, w, log.name), flush=True)
                    continue
                if rnd == 0 and out is not None and not a.skip_verify:
                    verify(case, out, w, log)
        if any(w[0] == "java" for w in ws) and a.java_repeat > 1:
            jr = java_repeat(case, a.java_repeat, log)
            if jr:
                rec = {"case": case, "writer": "java_repeat", **jr}
                res.write(json.dumps(rec) + "\n"); res.flush()
                print("  %s java in one JVM: %s (process wall %.1fs, rss %.0f MiB)" % (
                    case, jr["iterations_ms"], jr["process"]["wall_s"], jr["process"]["rss_mib"]), flush=True)


if __name__ == "__main__":
    main()
