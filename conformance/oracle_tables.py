#!/usr/bin/env python3
"""Extra oracle tables: shapes and options that make_corpus.py does not write.

Usage:
    python3 oracle_tables.py OUT [--only a,b] [--seed S] [--force]
    python3 oracle_tables.py OUT --profile wide [--seed S]   # make_corpus tables, other shapes

Writes a warehouse in the layout of make_corpus.py (OUT/manifest.json,
OUT/<table>.expected.json, OUT/corpus.db/<table>/), so the corpus_scan harness checks
it unchanged:

    PAIMON_WAREHOUSE=OUT cargo test -p paimon-conformance --test corpus_scan

Expected rows are pypaimon 2.1.0's own reads (the live oracle), cross-checked against a
plain-Python model where one is given ("model_check"). Builders that pypaimon cannot write
are reported and skipped, not fatal. Reuses make_corpus.py (same directory) for the table
machinery and the canonical value encoding.
"""

import argparse
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyarrow as pa  # noqa: E402

import make_corpus as mc  # noqa: E402
from make_corpus import (D, Schema, TableBuild, dedup_apply, maybe, pk_field,  # noqa: E402
                         rdate, rdouble, rstr)
from pypaimon.schema.data_types import AtomicType  # noqa: E402

UTC = datetime.timezone.utc
OX: list = []


def ox(fn):
    OX.append(fn)
    return fn


class WideProfile(mc.Profile):
    """Other shapes for the make_corpus.py builders."""
    name = "oracle-wide"
    seed = 424242
    rows_per_commit = 37
    pk_buckets = 3
    pk_commits = 6
    fixed_append_buckets = 5
    dyn_target_rows = 7
    postpone_buckets = 3
    regions = ["eu west", "us/east", "a=b", "\u00fcml\u00e4ut", "", None]
    years = [-1, 0, 2024, None]
    blob_sizes = [0, 3, 255, 256, 8191, 8192, 100000]
    words = ["", " ", "a", "zz", "\u65e5\u672c", "tab\tx", "quote\"", "\U0001F680", "back\\slash",
             "new\nline", "%41", "comma,semi;"]


def _dedup_pk(ctx, name, schema_fields, key_cols, gen_row, *, opts, commits=3,
              n_first=12, n_upd=6, features=(), sort_key=None, partition_keys=None,
              description="", projections=()):
    rng = ctx.rng_for(name)
    schema = pa.schema(schema_fields)
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(
        schema, primary_keys=key_cols, partition_keys=partition_keys or [], options=opts),
        features=list(features), sort_key=sort_key or key_cols, description=description)
    for p in projections:
        tb.projections.append(p)
    state = {}
    for c in range(commits):
        rows = [gen_row(rng, c, i) for i in range(n_first if c == 0 else n_upd)]
        if c > 0 and state:
            # updates of existing keys
            for r in rng.sample(sorted(state.values(), key=lambda r: repr(r)),
                                min(len(state), n_upd)):
                nr = gen_row(rng, c, 1000 + len(rows))
                for k in key_cols:
                    nr[k] = r[k]
                rows.append(nr)
        tb.write(rows)
        dedup_apply(state, rows, key_cols)
        tb.snap(list(state.values()))
    return tb


# ---------------------------------------------------------------------------
# primary keys of many types (merge order = key order)
# ---------------------------------------------------------------------------

KEY_STRINGS = ["", " ", "A", "Z", "a", "a ", "aa", "ab", "b", "\u00e4", "\u00e9t\u00e9",
               "\u65e5\u672c", "\U0001F680", "~", "0", "10", "9", "-1", "a\u0000b"]


def _strkey(fmt):
    def build(ctx):
        def gen(rng, c, i):
            return {"k": rng.choice(KEY_STRINGS) + rng.choice(["", "x", "\u00ff"]),
                    "v": "c%d-%d" % (c, i), "n": maybe(rng, rng.randint(-5, 5))}
        return _dedup_pk(ctx, "ox_pk_strkey_" + fmt,
                         [pk_field("k", pa.string()), ("v", pa.string()), ("n", pa.int32())],
                         ["k"], gen, opts={"bucket": "1", "file.format": fmt}, commits=4,
                         n_first=20, n_upd=10,
                         features=["primary-key", "key:string", "format:" + fmt],
                         description="PK on STRING keys (empty, unicode, NUL, prefixes), "
                                     "one bucket, 4 overlapping commits.")
    build.__name__ = "ox_pk_strkey_" + fmt
    return build


for _f in ("parquet", "orc", "avro"):
    ox(_strkey(_f))


def _multikey(fmt):
    def build(ctx):
        def gen(rng, c, i):
            return {
                "b": rng.random() < 0.5,
                "t": rng.choice([-128, -1, 0, 1, 127]),
                "dec": D(rng.choice([-99999, -1, 0, 1, 12345, 99999])) / 100,
                "dt": rng.choice([datetime.date(1969, 12, 31), datetime.date(1970, 1, 1),
                                  datetime.date(2024, 2, 29)]),
                "big": rng.choice([-2 ** 63, -1, 0, 2 ** 40, 2 ** 63 - 1]),
                "v": "c%d-%d" % (c, i),
            }
        return _dedup_pk(ctx, "ox_pk_multikey_" + fmt,
                         [pk_field("b", pa.bool_()), pk_field("t", pa.int8()),
                          pk_field("dec", pa.decimal128(10, 2)), pk_field("dt", pa.date32()),
                          pk_field("big", pa.int64()), ("v", pa.string())],
                         ["b", "t", "dec", "dt", "big"], gen,
                         opts={"bucket": "2", "file.format": fmt}, commits=4, n_first=40,
                         n_upd=20,
                         features=["primary-key", "composite-key", "key:boolean,tinyint,"
                                   "decimal,date,bigint", "format:" + fmt],
                         description="PK of 5 columns of different types incl. negative "
                                     "numbers; keys collide across commits.",
                         projections=[["v", "dt"]])
    build.__name__ = "ox_pk_multikey_" + fmt
    return build


for _f in ("parquet", "orc", "avro"):
    ox(_multikey(_f))


@ox
def ox_pk_tskey(ctx):
    def gen(rng, c, i):
        base = datetime.datetime(1969, 12, 31, 23, 59, 59)
        return {"ts": base + datetime.timedelta(microseconds=rng.choice(
                    [0, 1, 999999, 1000000, 10 ** 9, -1])),
                "bin": rng.choice([b"", b"\x00", b"\x00\x00", b"\x7f", b"\x80", b"\xff",
                                   b"ab"]),
                "v": "c%d-%d" % (c, i)}
    return _dedup_pk(ctx, "ox_pk_tskey",
                     [pk_field("ts", pa.timestamp("us")), pk_field("bin", pa.binary()),
                      ("v", pa.string())],
                     ["ts", "bin"], gen, opts={"bucket": "1"}, commits=4, n_first=30,
                     n_upd=15, features=["primary-key", "key:timestamp,bytes"],
                     description="PK (TIMESTAMP(6), BYTES): unsigned byte order, pre-epoch.")


@ox
def ox_pk_bigmerge(ctx):
    """Many rows so merges cross reader batch boundaries (8192)."""
    name = "ox_pk_bigmerge"
    rng = ctx.rng_for(name)
    schema = pa.schema([pk_field("k", pa.int64()), ("v", pa.string()), ("n", pa.int64())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(
        schema, primary_keys=["k"], options={"bucket": "2"}),
        features=["primary-key", "large", "batch-boundaries"], sort_key=["k"],
        description="20000 keys, 3 commits that update/delete-free-rewrite 1/3 of keys.")
    state = {}
    rows = [{"k": k, "v": "c0-%d" % k, "n": k} for k in range(20000)]
    tb.write(rows)
    dedup_apply(state, rows, ["k"])
    tb.snap(list(state.values()))
    for c in (1, 2):
        ks = sorted(rng.sample(range(25000), 7000))
        rows = [{"k": k, "v": "c%d-%d" % (c, k), "n": maybe(rng, -k)} for k in ks]
        tb.write(rows)
        dedup_apply(state, rows, ["k"])
        tb.snap(list(state.values()))
    return tb


@ox
def ox_append_big(ctx):
    name = "ox_append_big"
    rng = ctx.rng_for(name)
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("d", pa.float64())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema),
                    features=["append", "large"], sort_key=["id"],
                    description="30000 rows in one file + a second commit.")
    rows = [{"id": i, "s": maybe(rng, "s%d" % (i % 977)), "d": maybe(rng, rdouble(rng))}
            for i in range(30000)]
    tb.write(rows)
    tb.snap(rows)
    more = [{"id": 30000 + i, "s": None, "d": float(i)} for i in range(100)]
    tb.write(more)
    tb.snap(rows + more)
    tb.projections.append(["d"])
    return tb


def _wide_row(rng, k, tag):
    """A row of about 100 bytes: big enough files are decoded in column groups on several
    threads by the native host (core/src/format/parquet.rs, MIN_COLUMN_GROUP_BYTES)."""
    return {"k": k, "name": maybe(rng, "%s-%08x" % (tag, rng.getrandbits(32))),
            "note": "".join(rng.choice("abcdefghij ") for _ in range(60)),
            "amount": maybe(rng, rdouble(rng)), "qty": rng.randint(-1000, 1000)}


_WIDE_SCHEMA = [("name", pa.string()), ("note", pa.string()), ("amount", pa.float64()),
                ("qty", pa.int32())]


@ox
def ox_pk_wide_files(ctx):
    name = "ox_pk_wide_files"
    rng = ctx.rng_for(name)
    schema = pa.schema([pk_field("k", pa.int64())] + _WIDE_SCHEMA)
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(
        schema, primary_keys=["k"], options={"bucket": "1"}),
        features=["primary-key", "large", "parallel-decode"], sort_key=["k"],
        description="60000 keys of ~100-byte rows, 2 overlapping commits: sorted runs of "
                    "several MB, merged while their column groups decode in parallel.")
    state = {}
    rows = [_wide_row(rng, k, "c0") for k in range(60000)]
    tb.write(rows)
    dedup_apply(state, rows, ["k"])
    for c in (1, 2):
        ks = sorted(rng.sample(range(70000), 20000))
        rows = [_wide_row(rng, k, "c%d" % c) for k in ks]
        tb.write(rows)
        dedup_apply(state, rows, ["k"])
    tb.snap(list(state.values()))
    tb.projections.append(["qty", "k"])
    return tb


@ox
def ox_append_wide_file(ctx):
    name = "ox_append_wide_file"
    rng = ctx.rng_for(name)
    schema = pa.schema([("k", pa.int64())] + _WIDE_SCHEMA)
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema),
                    features=["append", "large", "parallel-decode"], sort_key=["k"],
                    description="80000 rows of ~100 bytes in one file (column groups).")
    rows = [_wide_row(rng, k, "a") for k in range(80000)]
    tb.write(rows)
    tb.snap(rows)
    tb.projections.append(["note", "k"])
    return tb


# ---------------------------------------------------------------------------
# file rolling, codecs, prefixes, manifest options
# ---------------------------------------------------------------------------

@ox
def ox_pk_rolling(ctx):
    def gen(rng, c, i):
        return {"k": rng.randint(0, 300), "v": "c%d-%d" % (c, i), "x": rdouble(rng)}
    return _dedup_pk(ctx, "ox_pk_rolling",
                     [pk_field("k", pa.int32()), ("v", pa.string()), ("x", pa.float64())],
                     ["k"], gen, opts={"bucket": "2", "target-file-size": "600 b"},
                     commits=4, n_first=120, n_upd=60,
                     features=["primary-key", "target-file-size", "several-files-per-commit"],
                     description="target-file-size=600b: each commit writes many files per "
                                 "bucket.")


@ox
def ox_append_rolling(ctx):
    name = "ox_append_rolling"
    rng = ctx.rng_for(name)
    schema = pa.schema([("id", pa.int32()), ("s", pa.string())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options={
        "target-file-size": "1 kb", "data-file.prefix": "part-"}),
        features=["append", "target-file-size", "data-file.prefix"], sort_key=["id"],
        description="target-file-size=1kb, data-file.prefix=part-")
    rows = [{"id": i, "s": rstr(rng, mc.Profile.words) * 5} for i in range(400)]
    tb.write(rows)
    tb.snap(rows)
    return tb


def _codec(fmt, codec, extra=None):
    def build(ctx):
        opts = {"file.compression": codec}
        opts.update(extra or {})
        return mc._append_basic(ctx, "ox_codec_%s_%s" % (fmt, codec.replace("-", "_")), fmt,
                                opts, features=["append", "format:" + fmt,
                                                "compression:" + codec], commits=1)
    build.__name__ = "ox_codec_%s_%s" % (fmt, codec)
    return build


for _fmt, _codec_name, _extra in [("parquet", "brotli", None), ("parquet", "lz4", None),
                                  ("parquet", "zstd", {"file.compression.zstd-level": "9"}),
                                  ("orc", "zstd", None), ("orc", "uncompressed", None),
                                  ("avro", "bzip2", None), ("avro", "xz", None),
                                  ("avro", "zstd", None), ("avro", "deflate", None)]:
    ox(_codec(_fmt, _codec_name, _extra))


@ox
def ox_pk_many_commits(ctx):
    def gen(rng, c, i):
        return {"k": rng.randint(0, 40), "v": "c%d-%d" % (c, i), "op": "+I"}
    return _dedup_pk(ctx, "ox_pk_many_commits",
                     [pk_field("k", pa.int32()), ("v", pa.string()), ("op", pa.string())],
                     ["k"], gen, opts={"bucket": "2", "manifest-sort.enabled": "true",
                                       "manifest.target-file-size": "2 kb"},
                     commits=35, n_first=10, n_upd=3,
                     features=["primary-key", "many-commits", "manifest-sort"],
                     description="35 small commits (manifest-sort, small manifests).")


# ---------------------------------------------------------------------------
# partitions
# ---------------------------------------------------------------------------

@ox
def ox_part_types(ctx):
    name = "ox_part_types"
    rng = ctx.rng_for(name)
    schema = pa.schema([("d", pa.date32()), ("b", pa.bool_()), ("t", pa.int8()),
                        ("dec", pa.decimal128(10, 2)), ("s", pa.string()),
                        ("id", pa.int32()), ("v", pa.string())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(
        schema, partition_keys=["d", "b", "t", "dec", "s"]),
        features=["append", "partition:date,boolean,tinyint,decimal,string", "null-partitions"],
        sort_key=["id"], description="5 partition keys of different types incl NULL and ''.")
    state = []
    nid = 0
    for c in range(2):
        rows = []
        for _ in range(25):
            rows.append({"d": maybe(rng, rdate(rng), 0.3), "b": maybe(rng, rng.random() < 0.5, 0.3),
                         "t": maybe(rng, rng.choice([-128, -1, 0, 127]), 0.3),
                         "dec": maybe(rng, D(rng.choice([-12345, 0, 5, 99999])) / 100, 0.3),
                         "s": maybe(rng, rng.choice(["", "x y", "a/b", "\u00e9", "k=v", "%"]), 0.3),
                         "id": nid, "v": "c%d" % c})
            nid += 1
        tb.write(rows)
        state += rows
        tb.snap(state)
    tb.projections.append(["s", "id"])
    tb.projections.append(["dec", "d"])
    return tb


@ox
def ox_part_default_name(ctx):
    name = "ox_part_default_name"
    schema = pa.schema([("p", pa.string()), ("q", pa.int32()), ("id", pa.int32())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(
        schema, partition_keys=["p", "q"], options={"partition.default-name": "NULLP"}),
        features=["append", "partition.default-name"], sort_key=["id"],
        description="partition.default-name=NULLP")
    rows = [{"p": p, "q": q, "id": i} for i, (p, q) in enumerate(
        [(None, 1), ("", 2), ("NULLP", None), ("x", None), (None, None), ("y", 3)])]
    tb.write(rows)
    tb.snap(rows)
    return tb


@ox
def ox_pk_part_types(ctx):
    def gen(rng, c, i):
        return {"d": rng.choice([datetime.date(2024, 1, 1), datetime.date(1999, 12, 31)]),
                "g": rng.choice([-5, 7]),
                "k": rng.randint(0, 12), "v": "c%d-%d" % (c, i)}
    return _dedup_pk(ctx, "ox_pk_part_types",
                     [pk_field("d", pa.date32()), pk_field("g", pa.int64()),
                      pk_field("k", pa.int32()), ("v", pa.string())],
                     ["d", "g", "k"], gen, opts={"bucket": "2"}, partition_keys=["d", "g"],
                     commits=3, n_first=30, n_upd=15,
                     features=["primary-key", "partition:date,bigint"],
                     description="PK table partitioned by DATE and BIGINT (negative).",
                     projections=[["k", "d"]])


@ox
def ox_dyn_bucket_part(ctx):
    def gen(rng, c, i):
        return {"p": rng.choice(["a", "b"]), "k": rng.randint(0, 40), "v": "c%d-%d" % (c, i)}
    return _dedup_pk(ctx, "ox_dyn_bucket_part",
                     [pk_field("p", pa.string()), pk_field("k", pa.int32()), ("v", pa.string())],
                     ["p", "k"], gen, opts={"bucket": "-1", "dynamic-bucket.target-row-num": "5"},
                     partition_keys=["p"], commits=4, n_first=30, n_upd=12,
                     features=["primary-key", "bucket:dynamic", "partitioned"],
                     description="dynamic bucket, partitioned.")


@ox
def ox_append_bucket_multikey(ctx):
    name = "ox_append_bucket_multikey"
    rng = ctx.rng_for(name)
    schema = pa.schema([("a", pa.string()), ("b", pa.int64()), ("v", pa.float32())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options={
        "bucket": "4", "bucket-key": "a,b", "file.format": "orc"}),
        features=["append", "bucket-key:a,b", "format:orc"], sort_key=["a", "b", "v"],
        description="fixed-bucket ORC append table with a composite bucket key.")
    rows = [{"a": rng.choice(["x", "y", None]), "b": rng.randint(-3, 3),
             "v": rng.choice([0.5, -1.25, None])} for _ in range(40)]
    tb.write(rows)
    tb.snap(rows)
    return tb


# ---------------------------------------------------------------------------
# merge engines and their options
# ---------------------------------------------------------------------------

@ox
def ox_seq_multi(ctx):
    name = "ox_seq_multi"
    rng = ctx.rng_for(name)
    schema = pa.schema([pk_field("k", pa.int32()), ("s1", pa.int32()), ("s2", pa.int64()),
                        ("v", pa.string())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
        "bucket": "2", "sequence.field": "s1,s2"}),
        features=["primary-key", "sequence.field:2 fields"], sort_key=["k"],
        description="sequence.field=s1,s2 (lexicographic), NULLs in sequence fields.")
    state = {}
    for c in range(4):
        rows = [{"k": rng.randint(0, 9), "s1": maybe(rng, rng.choice([1, 2, 3]), 0.2),
                 "s2": maybe(rng, rng.choice([10, 20]), 0.2), "v": "c%d-%d" % (c, i)}
                for i in range(10)]
        tb.write(rows)
        tb.models[tb.latest_id()] = None
    return tb


@ox
def ox_seq_desc(ctx):
    name = "ox_seq_desc"
    rng = ctx.rng_for(name)
    schema = pa.schema([pk_field("k", pa.int32()), ("s", pa.int64()), ("v", pa.string())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
        "bucket": "1", "sequence.field": "s", "sequence.field.sort-order": "descending"}),
        features=["primary-key", "sequence.field.sort-order=descending"], sort_key=["k"],
        description="descending sequence field: the smallest s wins.")
    state = {}
    for c in range(3):
        rows = [{"k": rng.randint(0, 8), "s": rng.choice([5, 10, 20]), "v": "c%d-%d" % (c, i)}
                for i in range(12)]
        tb.write(rows)
        for r in rows:
            cur = state.get(r["k"])
            if cur is None or r["s"] <= cur["s"]:
                state[r["k"]] = dict(r)
        tb.snap(list(state.values()))
    return tb


def _rowkind_table(ctx, name, opts, rows_by_commit, model_fn, features, description,
                   fmt="parquet"):
    schema = pa.schema([pk_field("k", pa.int32()), ("a", pa.string()), ("b", pa.int64()),
                        ("op", pa.string())])
    o = {"bucket": "2", "rowkind.field": "op", "file.format": fmt}
    o.update(opts)
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, primary_keys=["k"], options=o),
                    features=features, sort_key=["k"], description=description)
    state = {}
    for rows in rows_by_commit:
        tb.write(rows)
        if model_fn is not None:
            model_fn(state, rows)
            tb.snap(list(state.values()))
        else:
            tb.models[tb.latest_id()] = None
    return tb


def _r(k, a, b, op="+I"):
    return {"k": k, "a": a, "b": b, "op": op}


@ox
def ox_pk_only_deletes(ctx):
    commits = [
        [_r(1, None, None, "-D"), _r(2, None, None, "-D")],
        [_r(1, "x", 1), _r(2, "y", 2), _r(3, "z", 3)],
        [_r(1, None, None, "-D"), _r(2, None, None, "-U"), _r(3, None, None, "-D")],
    ]
    return _rowkind_table(ctx, "ox_pk_only_deletes", {"bucket": "1"}, commits,
                          lambda st, rows: (_raw_then_dedup(st, rows),
                                            st.pop("__raw", None)) and None,
                          ["primary-key", "only-deletes", "empty-result"],
                          "First commit holds only deletes of absent keys; last deletes all.")


def _raw_then_dedup(st, rows):
    """Model of a one-bucket deduplicate table: the first commit is one file, read raw
    (the writer keeps the last row per key, every row kind stays); later reads merge."""
    if not st:
        for r in rows:
            st[(r["k"],)] = dict(r)
        st["__raw"] = True
        return
    merged = {}
    dedup_apply(merged, [v for k, v in sorted(st.items(), key=lambda kv: str(kv[0]))
                         if k != "__raw"], ["k"], "op")
    dedup_apply(merged, rows, ["k"], "op")
    st.clear()
    st.update(merged)


@ox
def ox_pk_single_file_deletes(ctx):
    """A bucket with a single file is read raw (Java rawConvertible): its -D/-U rows show.

    pypaimon records deleteRowCount=0 for every file, so Java and pypaimon read a split of
    one level-0 file without merging and keep the stored delete rows; once a second file
    lands in the bucket the split is merged and they are dropped.
    """
    commits = [
        [_r(1, "a", 1), _r(1, "b", 2, "+U"), _r(2, "x", 3), _r(2, None, None, "-D"),
         _r(3, "y", 4, "-U"), _r(4, "z", 5)],
        [_r(4, "z2", 6, "+U"), _r(5, None, None, "-D")],
    ]

    tb = _rowkind_table(ctx, "ox_pk_single_file_deletes", {"bucket": "1"}, [], None,
                        ["primary-key", "raw-convertible-split", "delete-rows-visible"],
                        "bucket=1; snapshot 1 is one file holding +U/-D/-U rows (read raw, "
                        "they stay); snapshot 2 adds a file, the merged read drops them.")
    st = {}
    for rows in commits:
        tb.write(rows)
        _raw_then_dedup(st, rows)
        tb.snap([v for k, v in st.items() if k != "__raw"])
    return tb


@ox
def ox_dedup_ignore_delete(ctx):
    commits = [
        [_r(1, "x", 1), _r(2, "y", 2), _r(3, "z", 3)],
        [_r(1, None, None, "-D"), _r(2, "y2", 20, "+U"), _r(4, None, None, "-D")],
    ]

    def model(st, rows):
        dedup_apply(st, [r for r in rows if r["op"] not in ("-D", "-U")], ["k"], "op")
    return _rowkind_table(ctx, "ox_dedup_ignore_delete", {"ignore-delete": "true"}, commits,
                          model, ["primary-key", "ignore-delete"], "ignore-delete=true")


@ox
def ox_first_row_mor_ignore_delete(ctx):
    commits = [
        [_r(1, "x", 1), _r(2, "y", 2)],
        [_r(1, "x2", 10), _r(2, None, None, "-D"), _r(3, "z", 3)],
    ]

    def model(st, rows):
        for r in rows:
            if r["op"] in ("-D", "-U"):
                continue
            st.setdefault(r["k"], dict(r))
    return _rowkind_table(ctx, "ox_first_row_mor_ignore_delete",
                          {"merge-engine": "first-row", "ignore-delete": "true",
                           "deletion-vectors.enabled": "true",
                           "deletion-vectors.merge-on-read": "true"}, commits, model,
                          ["primary-key", "first-row", "ignore-delete"],
                          "first-row (DV merge-on-read), ignore-delete")


@ox
def ox_agg_types(ctx):
    name = "ox_agg_types"
    rng = ctx.rng_for(name)
    schema = pa.schema([
        pk_field("k", pa.int32()), ("s8", pa.int8()), ("s16", pa.int16()), ("s32", pa.int32()),
        ("sf", pa.float32()), ("sd", pa.float64()), ("sdec", pa.decimal128(20, 4)),
        ("mx_ts", pa.timestamp("us")), ("mn_dec", pa.decimal128(10, 2)), ("mx_dt", pa.date32()),
        ("coll_d", pa.list_(pa.string())), ("la_d", pa.string()), ("dflt", pa.int64()),
    ])
    opts = {"bucket": "2", "merge-engine": "aggregation",
            "fields.default-aggregate-function": "sum",
            "fields.mx_ts.aggregate-function": "max", "fields.mn_dec.aggregate-function": "min",
            "fields.mx_dt.aggregate-function": "max",
            "fields.coll_d.aggregate-function": "collect", "fields.coll_d.distinct": "true",
            "fields.la_d.aggregate-function": "listagg", "fields.la_d.distinct": "true",
            "fields.la_d.list-agg-delimiter": "|"}
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, primary_keys=["k"],
                                                          options=opts),
                    features=["primary-key", "aggregation", "default-aggregate-function=sum",
                              "collect distinct", "listagg distinct", "sum small ints/floats"],
                    sort_key=["k"], description="aggregation over more types/options")
    for c in range(4):
        rows = []
        for k in rng.sample(range(6), 5):
            rows.append({
                "k": k, "s8": maybe(rng, rng.randint(-3, 3)), "s16": maybe(rng, rng.randint(-300, 300)),
                "s32": maybe(rng, rng.randint(-10 ** 6, 10 ** 6)),
                "sf": maybe(rng, rng.choice([0.5, 1.25, -2.0])), "sd": maybe(rng, rng.choice([0.1, 0.2, -3.5])),
                "sdec": maybe(rng, D(rng.randint(-10 ** 9, 10 ** 9)) / 10000),
                "mx_ts": maybe(rng, mc.rts_us(rng)), "mn_dec": maybe(rng, D(rng.randint(-999, 999)) / 100),
                "mx_dt": maybe(rng, rdate(rng)),
                "coll_d": maybe(rng, [rng.choice(["a", "b", "c"]) for _ in range(rng.randint(0, 3))]),
                "la_d": maybe(rng, rng.choice(["x", "y", "z", ""])),
                "dflt": maybe(rng, rng.randint(0, 9)),
            })
        tb.write(rows)
        tb.models[tb.latest_id()] = None
    return tb


@ox
def ox_agg_nested_update(ctx):
    name = "ox_agg_nested_update"
    rng = ctx.rng_for(name)
    item = pa.struct([("id", pa.int32()), ("name", pa.string()), ("qty", pa.int32())])
    schema = pa.schema([pk_field("k", pa.int32()), ("items", pa.list_(item)),
                        ("items_p", pa.list_(item)), ("total", pa.int64())])
    opts = {"bucket": "1", "merge-engine": "aggregation",
            "fields.items.aggregate-function": "nested_update",
            "fields.items.nested-key": "id",
            "fields.items_p.aggregate-function": "nested_partial_update",
            "fields.items_p.nested-key": "id",
            "fields.total.aggregate-function": "sum"}
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, primary_keys=["k"], options=opts),
                    features=["aggregation", "nested_update", "nested_partial_update"],
                    sort_key=["k"], description="nested_update / nested_partial_update with key id")
    for c in range(3):
        rows = []
        for k in range(3):
            its = [{"id": rng.randint(0, 3), "name": maybe(rng, "n%d-%d" % (c, k)),
                    "qty": maybe(rng, rng.randint(0, 5))} for _ in range(2)]
            rows.append({"k": k, "items": its, "items_p": its, "total": c + k})
        tb.write(rows)
    return tb


# ---------------------------------------------------------------------------
# schema evolution in ORC / Avro, more widenings
# ---------------------------------------------------------------------------

def _evo(fmt):
    def build(ctx):
        from pypaimon.schema.schema_change import SchemaChange
        name = "ox_evo_" + fmt
        rng = ctx.rng_for(name)
        schema = pa.schema([("id", pa.int32()), ("a", pa.string()), ("s", pa.int16()),
                            ("f", pa.float32()), ("i", pa.int32()), ("gone", pa.string())])
        tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options={"file.format": fmt}),
                        features=["schema-evolution", "format:" + fmt, "rename", "widen"],
                        sort_key=["id"], description="rename/widen/drop/re-add in " + fmt)
        rows0 = [{"id": i, "a": rstr(rng, mc.Profile.words), "s": rng.randint(-300, 300),
                  "f": rng.choice([0.5, -1.5, None]), "i": rng.randint(-10, 10), "gone": "g%d" % i}
                 for i in range(4)]
        tb.write(rows0)
        tb.snap(rows0)
        tb.alter([SchemaChange.rename_column("a", "a_new"),
                  SchemaChange.update_column_type("s", AtomicType("INT")),
                  SchemaChange.update_column_type("f", AtomicType("DOUBLE")),
                  SchemaChange.update_column_type("i", AtomicType("BIGINT")),
                  SchemaChange.drop_column("gone")])
        rows1 = [{"id": 10 + i, "a_new": "n%d" % i, "s": 70000 + i, "f": 1e300, "i": 2 ** 40}
                 for i in range(2)]
        tb.write(rows1)
        st = [{"id": r["id"], "a_new": r["a"], "s": r["s"], "f": r["f"], "i": r["i"]}
              for r in rows0] + rows1
        tb.snap(st)
        tb.alter([SchemaChange.add_column("gone", AtomicType("STRING")),
                  SchemaChange.rename_column("id", "ident")])
        rows2 = [{"ident": 20, "a_new": "x", "s": 1, "f": 2.0, "i": 3, "gone": "back"}]
        tb.write(rows2)
        st = [dict({("ident" if k == "id" else k): v for k, v in r.items()}, gone=None)
              for r in st] + rows2
        tb.snap(st)
        tb.sort_key = ["ident"]
        tb.projections.append(["gone", "a_new"])
        return tb
    build.__name__ = "ox_evo_" + fmt
    return build


for _f in ("parquet", "orc", "avro"):
    ox(_evo(_f))


@ox
def ox_evo_pk_avro(ctx):
    from pypaimon.schema.schema_change import SchemaChange
    name = "ox_evo_pk_avro"
    schema = pa.schema([pk_field("k", pa.int64()), ("v1", pa.string()), ("v2", pa.int32())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
        "bucket": "2", "file.format": "avro"}), features=["schema-evolution", "pk", "avro"],
        sort_key=["k"], description="evo_pk in avro")
    rows = [{"k": k, "v1": "a%d" % k, "v2": k} for k in range(6)]
    tb.write(rows)
    st = {r["k"]: dict(r) for r in rows}
    tb.snap(list(st.values()))
    tb.alter([SchemaChange.rename_column("v1", "name"),
              SchemaChange.update_column_type("v2", AtomicType("BIGINT")),
              SchemaChange.add_column("v3", AtomicType("DOUBLE"))])
    st = {k: {"k": k, "name": r["v1"], "v2": r["v2"], "v3": None} for k, r in st.items()}
    rows = [{"k": k, "name": "b%d" % k, "v2": 2 ** 33 + k, "v3": 0.5} for k in (1, 3, 9)]
    tb.write(rows)
    for r in rows:
        st[r["k"]] = dict(r)
    tb.snap(list(st.values()))
    return tb


# ---------------------------------------------------------------------------
# data evolution / row tracking in ORC and Avro
# ---------------------------------------------------------------------------

def _de(fmt):
    def build(ctx):
        name = "ox_de_" + fmt
        schema = pa.schema([("id", pa.int32()), ("a", pa.string()), ("b", pa.int64())])
        opts = dict(mc.DE_OPTS)
        opts["file.format"] = fmt
        tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options=opts),
                        features=["data-evolution", "format:" + fmt], sort_key=["id"],
                        row_tracking=True, description="data evolution updates in " + fmt)
        rows = [{"id": i, "a": "a%d" % i, "b": i} for i in range(6)]
        tb.write(rows)
        for i, r in enumerate(rows):
            r["_ROW_ID"] = i
        tb.snap(rows)
        sch = tb.schema_of()
        ups = [dict(rows[1], b=100), dict(rows[4], b=None)]
        t = mc._row_id_table(ups, ["b"], sch)
        tb.update(lambda u: u.with_update_type(["b"]).update_by_arrow_with_row_id(t))
        rows[1]["b"] = 100
        rows[4]["b"] = None
        tb.snap(rows)
        rows2 = [{"id": 10 + i, "a": "n%d" % i} for i in range(3)]
        tb.write(rows2, cols=["id", "a"])
        for i, r in enumerate(rows2):
            r.update({"b": None, "_ROW_ID": 6 + i})
        rows = rows + rows2
        tb.snap(rows)
        return tb
    build.__name__ = "ox_de_" + fmt
    return build


for _f in ("orc", "avro"):
    ox(_de(_f))


@ox
def ox_row_tracking_orc(ctx):
    name = "ox_row_tracking_orc"
    schema = pa.schema([("id", pa.int32()), ("v", pa.string())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options={
        "row-tracking.enabled": "true", "file.format": "orc"}),
        features=["row-tracking", "orc"], sort_key=["id"], row_tracking=True,
        description="row tracking, ORC, 3 commits")
    st = []
    rid = 0
    for c in range(3):
        rows = [{"id": 10 * c + i, "v": "v%d" % i} for i in range(3 + c)]
        tb.write(rows)
        for r in rows:
            r["_ROW_ID"] = rid
            rid += 1
        st += rows
        tb.snap(st)
    return tb


# ---------------------------------------------------------------------------
# empty / odd histories
# ---------------------------------------------------------------------------

@ox
def ox_ltz_time_types(ctx):
    name = "ox_ltz_time_types"
    schema = pa.schema([("id", pa.int32()), ("t0", pa.time32("s")), ("t3", pa.time32("ms")),
                        ("t6", pa.time64("us")), ("ts1", pa.timestamp("ms")),
                        ("ltz0", pa.timestamp("s", tz="UTC")), ("c", pa.string()),
                        ("vb", pa.binary()), ("dec38", pa.decimal128(38, 0)),
                        ("dec1", pa.decimal128(1, 1)), ("dec19", pa.decimal128(19, 19))])
    s = Schema.from_pyarrow_schema(schema)
    retype = {"t0": "TIME(0)", "t3": "TIME(3)", "t6": "TIME(6)", "ts1": "TIMESTAMP(1)",
              "c": "CHAR(3)", "vb": "BINARY(3)"}
    for f in s.fields:
        if f.name in retype:
            f.type = AtomicType(retype[f.name], f.type.nullable)
    tb = TableBuild(ctx, name, s, features=["types:time(0/3/6),timestamp(1),ltz(0),char,"
                                               "decimal edge"],
                    sort_key=["id"], description="more type parameters")
    rows = [{"id": 1, "t0": datetime.time(1, 2, 3), "t3": datetime.time(23, 59, 59, 999000),
             "t6": datetime.time(12, 0, 0, 123456), "ts1": datetime.datetime(2020, 5, 5, 5, 5, 5, 500000),
             "ltz0": datetime.datetime(1960, 1, 1, tzinfo=UTC), "c": "ab", "vb": b"xyz",
             "dec38": D("99999999999999999999999999999999999999"), "dec1": D("-0.9"),
             "dec19": D("0.1234567890123456789")},
            {"id": 2}]
    try:
        tb.write(pa.Table.from_pylist(rows, schema=schema))
    except Exception:
        tb.write(rows)
    tb.models[tb.latest_id()] = None
    return tb


@ox
def ox_time_travel_ts(ctx):
    """Snapshots with distinct commit times; reads by scan.timestamp-millis."""
    import time
    name = "ox_time_travel_ts"
    schema = pa.schema([("id", pa.int32())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema),
                    features=["time-travel:timestamp"], sort_key=["id"],
                    description="3 commits 50 ms apart; reads at commit times")
    st = []
    for c in range(3):
        rows = [{"id": 10 * c + i} for i in range(2)]
        tb.write(rows)
        st += rows
        tb.snap(st)
        time.sleep(0.05)
    tb.ts_reads = True
    return tb


# ---------------------------------------------------------------------------
# physical layouts: shredding, external paths, no snapshot
# ---------------------------------------------------------------------------

@ox
def ox_map_shared_shredding(ctx):
    name = "ox_map_shared_shredding"
    schema = pa.schema([("id", pa.int32()), ("m", pa.map_(pa.string(), pa.int64()))])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options={
        "fields.m.map.storage-layout": "shared-shredding"}),
        features=["map.storage-layout=shared-shredding"], sort_key=["id"],
        description="MAP column stored with pypaimon's shared-shredding parquet layout")
    rows = [{"id": 1, "m": [("a", 1), ("b", 2)]}, {"id": 2, "m": None}, {"id": 3, "m": []},
            {"id": 4, "m": [("c", None), ("a", 5)]}]
    tb.write(rows)
    tb.models[tb.latest_id()] = None  # the layout stores map entries in its own order
    return tb


@ox
def ox_variant_shredded(ctx):
    from pypaimon.data.generic_variant import GenericVariant
    import json
    name = "ox_variant_shredded"
    shred = {"type": "ROW", "fields": [{"name": "payload", "type": {"type": "ROW", "fields": [
        {"name": "city", "type": "STRING"}, {"name": "n", "type": "BIGINT"}]}}]}
    schema = pa.schema([("id", pa.int32()),
                        ("payload", pa.struct([pa.field("value", pa.binary(), nullable=False),
                                               pa.field("metadata", pa.binary(), nullable=False)]))])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options={
        "variant.shreddingSchema": json.dumps(shred)}),
        features=["variant", "variant-shredding"], sort_key=["id"],
        description="VARIANT with static shredding of city/n")
    values = [{"city": "Berlin", "n": 3}, {"other": True}, None,
              {"city": "Paris", "n": 2 ** 40, "extra": [1, 2]}, {"n": 7}]
    gv = [GenericVariant.from_python(v) if v is not None else None for v in values]
    data = pa.table({"id": pa.array(list(range(1, len(values) + 1)), pa.int32()),
                     "payload": GenericVariant.to_arrow_array(gv)})
    tb.write(data)
    tb.models[tb.latest_id()] = None
    return tb


@ox
def ox_external_paths(ctx):
    name = "ox_external_paths"
    ext = os.path.join(ctx.out, "external-data")
    os.makedirs(ext, exist_ok=True)
    schema = pa.schema([pk_field("k", pa.int32()), ("v", pa.string())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, primary_keys=["k"], options={
        "bucket": "1", "data-file.external-paths": "file://" + ext,
        "data-file.external-paths.strategy": "round-robin"}),
        features=["data-file.external-paths"], sort_key=["k"],
        description="data files under an absolute external path")
    st = {}
    for c in range(2):
        rows = [{"k": k, "v": "c%d-%d" % (c, k)} for k in range(c, 5 + c)]
        tb.write(rows)
        dedup_apply(st, rows, ["k"])
        tb.snap(list(st.values()))
    return tb


@ox
def ox_blob_orc(ctx):
    name = "ox_blob_orc"
    rng = ctx.rng_for(name)
    schema = pa.schema([("id", pa.int32()), ("data", pa.large_binary())])
    opts = dict(mc.DE_OPTS)
    opts["file.format"] = "orc"
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options=opts),
                    features=["blob", "format:orc"], sort_key=["id"], row_tracking=True,
                    description="blob table whose normal columns are ORC")
    rows = [{"id": i, "data": None if i == 2 else mc._blob(rng, 10 * i)} for i in range(5)]
    tb.write(rows)
    for i, r in enumerate(rows):
        r["_ROW_ID"] = i
    tb.snap(rows)
    return tb


@ox
def ox_pk_orc_partitioned_dv_mor(ctx):
    def gen(rng, c, i):
        return {"p": rng.choice(["x", "y"]), "k": rng.randint(0, 15),
                "ts": datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=rng.randint(0, 10 ** 6)),
                "v": "c%d-%d" % (c, i)}
    return _dedup_pk(ctx, "ox_pk_orc_partitioned_dv_mor",
                     [pk_field("p", pa.string()), pk_field("k", pa.int32()),
                      ("ts", pa.timestamp("ms")), ("v", pa.string())],
                     ["p", "k"], gen, opts={"bucket": "2", "file.format": "orc",
                                            "deletion-vectors.enabled": "true",
                                            "deletion-vectors.merge-on-read": "true"},
                     partition_keys=["p"], commits=3, n_first=20, n_upd=10,
                     features=["primary-key", "orc", "partitioned", "dv-mor"],
                     description="partitioned ORC PK table, DV merge-on-read")


def _manifest_codec(codec):
    def build(ctx):
        name = "ox_manifest_codec_%s" % codec

        def gen(rng, c, i):
            return {"k": rng.randint(0, 15), "v": "c%d-%d" % (c, i)}
        return _dedup_pk(ctx, name, [pk_field("k", pa.int32()), ("v", pa.string())], ["k"],
                         gen, opts={"bucket": "2", "manifest.compression": codec},
                         commits=3, n_first=12, n_upd=6,
                         features=["primary-key", "manifest.compression:" + codec],
                         description="manifests and manifest lists in Avro with codec %s" % codec)
    build.__name__ = "ox_manifest_codec_%s" % codec
    return build


for _codec_name in ("bzip2", "xz"):
    ox(_manifest_codec(_codec_name))


@ox
def ox_external_paths_partitioned(ctx):
    # Two external directories, entropy-injected file paths; partition values with ':' and
    # '%' are escaped in directory names, and pypaimon then writes the external path of a
    # local file without its file: scheme (a plain absolute path, taken literally).
    name = "ox_external_paths_partitioned"
    ext = [os.path.join(ctx.out, "external-data-%d" % i) for i in range(2)]
    for d in ext:
        os.makedirs(d, exist_ok=True)
    schema = pa.schema([("p", pa.string()), ("id", pa.int32()), ("v", pa.string())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, partition_keys=["p"], options={
        "data-file.external-paths": ",".join("file://" + d for d in ext),
        "data-file.external-paths.strategy": "entropy-inject"}),
        features=["data-file.external-paths", "partitioned"], sort_key=["id"],
        description="append table, partitions with escaped names, files under two external "
                    "directories (entropy-inject)")
    st = []
    for c in range(2):
        rows = [{"p": ["a:b", "50%", "plain"][i % 3], "id": c * 10 + i, "v": "c%d-%d" % (c, i)}
                for i in range(6)]
        tb.write(rows)
        st += rows
        tb.snap(list(st))
    return tb


def _dv_index_location(name, extra_opts, description, external_dirs=0, index_external=False):
    # Deletion vectors written by delete_by_row_id / delete_by_predicate (data-evolution
    # table), with the index files placed by index-file-in-data-file-dir and external paths.
    def build(ctx):
        rng = ctx.rng_for(name)
        schema = pa.schema([("p", pa.string()), ("id", pa.int32()), ("score", pa.int64())])
        opts = dict(mc.DE_OPTS)
        opts["deletion-vectors.enabled"] = "true"
        opts.update(extra_opts)
        if external_dirs:
            ext = [os.path.join(ctx.out, "%s-ext-%d" % (name, i)) for i in range(external_dirs)]
            for d in ext:
                os.makedirs(d, exist_ok=True)
            opts["data-file.external-paths"] = ",".join("file://" + d for d in ext)
            opts["data-file.external-paths.strategy"] = "round-robin"
        if index_external:
            d = os.path.join(ctx.out, name + "-index")
            os.makedirs(d, exist_ok=True)
            opts["global-index.external-path"] = "file://" + d
        tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, partition_keys=["p"],
                                                              options=opts),
                        features=["append", "data-evolution", "row-tracking",
                                  "deletion-vectors", "partitioned"] + sorted(extra_opts),
                        sort_key=["id"], row_tracking=True, description=description)
        state = []
        rid = 0
        # One partition per commit: row ids are then handed out in this order.
        for c in range(4):
            rows = [{"p": ["a:b", "q"][c % 2], "id": 10 * c + i, "score": rng.randint(0, 100)}
                    for i in range(5)]
            tb.write(rows)
            for r in rows:
                r["_ROW_ID"] = rid
                rid += 1
            state += rows
            tb.snap(state)
        tb.update(lambda u: u.delete_by_row_id([1, 10]))
        state = [r for r in state if r["_ROW_ID"] not in (1, 10)]
        tb.snap(state)

        def del_pred(u):
            pb = u.new_predicate_builder()
            return u.delete_by_predicate(pb.greater_or_equal("score", 70))
        tb.update(del_pred)
        state = [r for r in state if r["score"] < 70]
        tb.snap(state)
        return tb
    build.__name__ = name
    return build


ox(_dv_index_location("ox_dv_index_in_data_dir", {"index-file-in-data-file-dir": "true"},
                      "deletion-vector index files in the bucket directories "
                      "(index-file-in-data-file-dir)"))
ox(_dv_index_location("ox_dv_index_external", {"index-file-in-data-file-dir": "true"},
                      "data files and deletion-vector index files under external paths",
                      external_dirs=2))
ox(_dv_index_location("ox_dv_index_global_external", {},
                      "deletion-vector index files under global-index.external-path",
                      index_external=True))


@ox
def ox_external_paths_blob(ctx):
    # BLOB column in .blob files; data and blob files under an external directory.
    name = "ox_external_paths_blob"
    rng = ctx.rng_for(name)
    ext = os.path.join(ctx.out, name + "-ext")
    os.makedirs(ext, exist_ok=True)
    opts = dict(mc.DE_OPTS)
    opts.update({"data-file.external-paths": "file://" + ext,
                 "data-file.external-paths.strategy": "round-robin"})
    schema = pa.schema([("id", pa.int32()), ("label", pa.string()), ("data", pa.large_binary())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, options=opts),
                    features=["append", "blob", "row-tracking", "data-evolution",
                              "data-file.external-paths"],
                    sort_key=["id"], row_tracking=True,
                    description="BLOB column, data and .blob files under an external path")
    state = []
    rid = 0
    for c in range(2):
        rows = [{"id": 10 * c + i, "label": "l%d" % i,
                 "data": None if i == 2 else bytes(rng.getrandbits(8) for _ in range(7 * i))}
                for i in range(4)]
        tb.write(rows)
        for r in rows:
            r["_ROW_ID"] = rid
            rid += 1
        state += rows
        tb.snap(state)
    return tb


@ox
def ox_postpone_partitioned(ctx):
    name = "ox_postpone_partitioned"
    schema = pa.schema([pk_field("p", pa.int32()), pk_field("k", pa.int64()), ("v", pa.string())])
    tb = TableBuild(ctx, name, Schema.from_pyarrow_schema(schema, primary_keys=["p", "k"],
                                                          partition_keys=["p"], options={
        "bucket": "-2", "postpone.default-bucket-num": "3"}),
        features=["postpone", "partitioned"], sort_key=["p", "k"],
        description="postpone bucket, partitioned")
    st = {}
    fixed = lambda t: t.new_postpone_fixed_bucket_write_builder()  # noqa: E731
    rows = [{"p": k % 2, "k": k, "v": "c0-%d" % k} for k in range(10)]
    tb.write(rows, builder=fixed)
    dedup_apply(st, rows, ["p", "k"])
    tb.snap(list(st.values()))
    rows = [{"p": k % 2, "k": k, "v": "c1-%d" % k} for k in range(5, 14)]
    tb.write(rows, builder=fixed)
    dedup_apply(st, rows, ["p", "k"])
    tb.snap(list(st.values()))
    rows = [{"p": 0, "k": 100, "v": "postponed"}]
    tb.write(rows)
    tb.snap(list(st.values()))
    return tb



def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--only", default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--profile", choices=["extra", "wide"], default="extra",
                    help="extra: the oracle tables of this file; wide: make_corpus.py's "
                         "tables with other shapes (WideProfile)")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    only = args.only.split(",") if args.only else None
    if args.profile == "wide":
        profile = WideProfile()
        if args.seed is not None:
            profile.seed = args.seed
        ctx = mc.run(args.out, profile, "small", only=only, force=args.force)
        return 1 if ctx.failures else 0
    profile = mc.Profile()
    profile.name = "oracle-extra"
    if args.seed is not None:
        profile.seed = args.seed
    builders = [b for b in OX if only is None or b.__name__ in only]
    # no make_corpus builders: skip them all
    skip = {b.__name__ for b in mc.BUILDERS}
    real_finalize = mc.finalize

    def finalize(ctx, tb):
        real_finalize(ctx, tb)
        if getattr(tb, "ts_reads", False):
            _extra_ts_reads(ctx, tb)
    mc.finalize = finalize
    ctx = mc.run(args.out, profile, "small", extra_builders=builders, force=args.force,
                 skip_builders=skip, only=None)
    return 1 if ctx.failures else 0


def _extra_ts_reads(ctx, tb):
    import json
    path = os.path.join(ctx.out, "%s.expected.json" % tb.name)
    with open(path) as f:
        exp = json.load(f)
    table = tb.table
    for s in exp["snapshots"]:
        snap = mc._snapshot_json(table.table_path, s["id"])
        ms = str(snap["timeMillis"])
        arrow_tbl = mc.read_arrow(table, {"scan.timestamp-millis": ms}, None)
        rows = mc.sort_rows(mc.canon_table(arrow_tbl), tb.sort_key)
        exp["additional_reads"].append({
            "label": "timestamp-%s" % s["id"], "options": {"scan.timestamp-millis": ms},
            "projection": None, "sort_key": tb.sort_key, "snapshot_id": s["id"],
            "schema_id": snap["schemaId"], "row_count": len(rows),
            "rows_sha256": mc.rows_sha256(rows), "model_check": "n/a", "rows": rows})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(exp, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
