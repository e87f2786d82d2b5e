#!/usr/bin/env python3
"""Writes the scenarios of conformance/scenarios/ (see README.md there): table histories in the
scenario language of `paimon-kernel run`, each checkpoint carrying the rows a model of the
table's semantics expects (computed here, independently of any Paimon implementation).

    python3 conformance/scenarios/gen_scenarios.py   # rewrites conformance/scenarios/*.json

Deterministic: the same files on every run (random.Random with fixed seeds).
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
FORMATS = ["parquet", "orc", "avro"]


class Scenario:
    """Steps plus a model of one table (`db.t`): rows by key for PK tables, a list for append
    tables, row ids for data-evolution tables."""

    def __init__(self, name, description, schema, pk=None, engine="deduplicate", java=True,
                 pypaimon=True, java_write=True, agg=None, seq_field=None, ignore_delete=False, row_ids=False):
        self.name, self.table = name, "db.t"
        self.doc = {"format_version": 1, "name": name, "description": description,
                    "java": java, "pypaimon": pypaimon, "java_write": java_write, "steps": []}
        self.schema = schema
        self.fields = [f["name"] for f in schema["fields"]]
        self.pk = pk
        self.engine, self.agg, self.seq_field = engine, agg or {}, seq_field
        self.ignore_delete = ignore_delete
        self.rows = {} if pk else []
        self.row_ids = row_ids
        self.partition_keys = schema.get("partitionKeys", [])
        self.step({"op": "create", "schema": schema})

    def step(self, s):
        s = {"op": s.pop("op"), "table": self.table, **s}
        self.doc["steps"].append(s)

    # ---- model ----------------------------------------------------------------------------
    def _key(self, r):
        return tuple(r[k] for k in self.pk)

    def _full(self, r):
        return {f: r.get(f) for f in self.fields}

    def _apply_pk(self, r):
        kind = r.get("_ROW_KIND", "+I")
        row = self._full(r)
        key = self._key(row)
        old = self.rows.get(key)
        if kind in ("-D", "-U"):
            if self.engine == "partial-update" and self.ignore_delete:
                return
            if self.engine == "first-row":
                return
            if self.engine == "aggregation":
                raise ValueError("the model has no retractions for aggregation")
            if self.seq_field and old is not None and old[self.seq_field] > row[self.seq_field]:
                return
            self.rows.pop(key, None)
            return
        if old is None:
            if self.engine == "aggregation":
                self.rows[key] = {f: (row[f] if f in self.pk else None) for f in self.fields}
                old = self.rows[key]
            else:
                self.rows[key] = row
                return
        if self.engine == "deduplicate":
            if self.seq_field and old[self.seq_field] > row[self.seq_field]:
                return
            self.rows[key] = row
        elif self.engine == "first-row":
            return
        elif self.engine == "partial-update":
            for f in self.fields:
                if row[f] is not None:
                    old[f] = row[f]
        elif self.engine == "aggregation":
            for f in self.fields:
                if f in self.pk:
                    continue
                fn, v, o = self.agg.get(f, "last_non_null_value"), row[f], old[f]
                if v is None:
                    continue
                if o is None:
                    old[f] = v
                elif fn == "sum":
                    old[f] = o + v
                elif fn == "max":
                    old[f] = max(o, v)
                elif fn == "min":
                    old[f] = min(o, v)
                elif fn in ("last_value", "last_non_null_value"):
                    old[f] = v
                elif fn == "first_non_null_value":
                    pass
                else:
                    raise ValueError(fn)

    def write(self, rows, overwrite=False, partition=None, dynamic=True):
        s = {"op": "write", "rows": rows}
        if overwrite:
            s["overwrite"] = True
            if partition:
                s["partition"] = ",".join(f"{k}={v}" for k, v in partition.items())
        self.step(s)
        if self.pk:
            if overwrite:
                self._overwrite_filter(rows, partition, dynamic, lambda r: r, is_pk=True)
            for r in rows:
                self._apply_pk(r)
        else:
            if overwrite:
                self._overwrite_filter(rows, partition, dynamic, lambda r: r, is_pk=False)
            start = len(self.rows)
            for i, r in enumerate(rows):
                row = self._full(r)
                if self.row_ids:
                    row["_ROW_ID"] = start + i
                self.rows.append(row)

    def _overwrite_filter(self, rows, partition, dynamic, _f, is_pk):
        pks = self.partition_keys
        if partition:
            drop = lambda r: all(str(r[k]) == str(v) for k, v in partition.items())
        elif dynamic and pks:
            touched = {tuple(r[k] for k in pks) for r in rows}
            drop = lambda r: tuple(r[k] for k in pks) in touched
        else:
            drop = lambda r: True
        if is_pk:
            self.rows = {k: v for k, v in self.rows.items() if not drop(v)}
        else:
            self.rows = [r for r in self.rows if not drop(r)]

    def delete(self, where, pred):
        self.step({"op": "delete", "where": where})
        if self.pk:
            self.rows = {k: v for k, v in self.rows.items() if not pred(v)}
        else:
            self.rows = [r for r in self.rows if not pred(r)]

    def update(self, rows):
        self.step({"op": "update", "rows": rows})
        by_id = {r["_ROW_ID"]: r for r in self.rows}
        for u in rows:
            for f, v in u.items():
                if f != "_ROW_ID":
                    by_id[u["_ROW_ID"]][f] = v

    def alter(self, changes, rename=None, add=None, drop=None, cast=None):
        self.step({"op": "alter", "changes": changes})
        rows = list(self.rows.values()) if self.pk else self.rows
        if add:
            self.fields.append(add)
            for r in rows:
                r[add] = None
        if rename:
            old, new = rename
            self.fields[self.fields.index(old)] = new
            for r in rows:
                r[new] = r.pop(old)
        if drop:
            self.fields.remove(drop)
            for r in rows:
                r.pop(drop)
        if cast:
            f, fn = cast
            for r in rows:
                if r[f] is not None:
                    r[f] = fn(r[f])

    def compact(self, full=True):
        self.step({"op": "compact", "full": full})

    def checkpoint(self, name):
        rows = list(self.rows.values()) if self.pk else self.rows
        out = []
        for r in rows:
            row = {f: r.get(f) for f in self.fields}
            out.append(row)
        out.sort(key=lambda r: json.dumps(r, separators=(",", ":")))
        self.step({"op": "checkpoint", "name": name, "rows": out})

    def save(self):
        path = os.path.join(HERE, self.name + ".json")
        with open(path, "w") as f:
            json.dump(self.doc, f, indent=1)
            f.write("\n")
        return path


def schema(fields, pk=None, partition=None, **options):
    s = {"fields": [{"name": n, "type": t} for n, t in fields], "options": dict(options)}
    if pk:
        s["primaryKeys"] = pk
    if partition:
        s["partitionKeys"] = partition
    return s


NAMES = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]


def kv_rows(rng, keys, n, nulls=0.0, kinds=False, cols=("name", "v")):
    out = []
    for _ in range(n):
        r = {"k": rng.choice(keys)}
        for c in cols:
            if rng.random() < nulls:
                r[c] = None
            elif c == "name":
                r[c] = f"{rng.choice(NAMES)}-{rng.randrange(1000)}"
            else:
                r[c] = rng.randrange(-1000, 1000)
        out.append(r)
    return out


def append_rows(rng, start, n, dts=None):
    out = []
    for i in range(n):
        r = {"id": start + i, "name": f"{rng.choice(NAMES)}-{rng.randrange(1000)}",
             "v": rng.randrange(-10**6, 10**6)}
        if dts:
            r["dt"] = rng.choice(dts)
        out.append(r)
    return out


def gen():
    written = []

    # ---- append tables ------------------------------------------------------------------
    for fmt in FORMATS:
        for bucket in ("-1", "2"):
            rng = random.Random(f"append-{fmt}-{bucket}")
            opts = {"file.format": fmt, "bucket": bucket}
            if bucket != "-1":
                opts["bucket-key"] = "id"
            s = Scenario(f"append_{fmt}_bucket{bucket.replace('-', 'm')}",
                         f"append table, {fmt}, bucket {bucket}: three commits",
                         schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT")], **opts))
            for c in range(3):
                s.write(append_rows(rng, 100 * c, 20))
                s.checkpoint(f"commit-{c + 1}")
            written.append(s.save())

    dts = ["2026-01-01", "2026-01-02", "2026-01-03"]
    for dyn in (True, False):
        rng = random.Random(f"append-overwrite-{dyn}")
        s = Scenario(f"append_partitioned_overwrite_{'dynamic' if dyn else 'static'}",
                     "partitioned append table: writes, a static-partition overwrite, then an "
                     f"overwrite without a partition (dynamic-partition-overwrite={str(dyn).lower()})",
                     schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT"), ("dt", "STRING")],
                            partition=["dt"], **{"dynamic-partition-overwrite": str(dyn).lower()}))
        s.write(append_rows(rng, 0, 30, dts))
        s.checkpoint("written")
        s.write(append_rows(rng, 100, 5, ["2026-01-02"]), overwrite=True,
                partition={"dt": "2026-01-02"})
        s.checkpoint("static-overwrite")
        s.write(append_rows(rng, 200, 4, ["2026-01-03", "2026-01-04"]), overwrite=True,
                dynamic=dyn)
        s.checkpoint("overwrite")
        written.append(s.save())

    rng = random.Random("append-evolution")
    s = Scenario("append_schema_evolution",
                 "append table: add a column, rename one, widen INT to BIGINT, drop one, "
                 "writing between the changes",
                 schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT")]))
    s.write(append_rows(rng, 0, 10))
    s.alter([["add-column", "extra STRING"]], add="extra")
    s.write([dict(r, extra=f"x{r['id']}") for r in append_rows(rng, 100, 5)])
    s.checkpoint("added")
    s.alter([["rename-column", "name=label"]], rename=("name", "label"))
    s.write([{"id": 200 + i, "label": f"l{i}", "v": i, "extra": None} for i in range(3)])
    s.checkpoint("renamed")
    s.alter([["alter-type", "v BIGINT"]])
    s.write([{"id": 300, "label": "big", "v": 2**40, "extra": "e"}])
    s.checkpoint("widened")
    s.alter([["drop-column", "extra"]], drop="extra")
    s.write([{"id": 400, "label": "after drop", "v": 1}])
    s.checkpoint("dropped")
    written.append(s.save())

    for fmt in FORMATS:
        rng = random.Random(f"append-dv-{fmt}")
        s = Scenario(f"append_dv_delete_{fmt}",
                     f"append table with deletion vectors ({fmt}): deletes by filter",
                     schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT")],
                            **{"file.format": fmt, "deletion-vectors.enabled": "true"}))
        s.write(append_rows(rng, 0, 40))
        s.write(append_rows(rng, 100, 40))
        s.checkpoint("written")
        s.delete("id < 10", lambda r: r["id"] < 10)
        s.checkpoint("deleted-1")
        s.delete("v > 0 AND id >= 100", lambda r: r["v"] > 0 and r["id"] >= 100)
        s.checkpoint("deleted-2")
        written.append(s.save())

    rng = random.Random("append-compact")
    s = Scenario("append_compact", "append table: twelve small commits, then a full compaction",
                 schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT")]))
    for c in range(12):
        s.write(append_rows(rng, 10 * c, 5))
    s.checkpoint("written")
    s.compact(full=True)
    s.checkpoint("compacted")
    written.append(s.save())

    for fmt in ("parquet", "orc"):
        rng = random.Random(f"de-{fmt}")
        s = Scenario(f"data_evolution_update_{fmt}",
                     f"data-evolution table ({fmt}): two commits, then updates of one column "
                     "by _ROW_ID", schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT")],
                                          **{"file.format": fmt, "row-tracking.enabled": "true",
                                             "data-evolution.enabled": "true"}),
                     row_ids=True, pypaimon=True)
        s.write(append_rows(rng, 0, 20))
        s.write(append_rows(rng, 100, 20))
        s.checkpoint("written")
        s.update([{"_ROW_ID": i, "v": -i} for i in range(0, 40, 3)])
        s.checkpoint("updated-v")
        s.update([{"_ROW_ID": i, "name": f"renamed-{i}"} for i in range(5, 40, 7)])
        s.checkpoint("updated-name")
        written.append(s.save())

    # ---- primary-key tables ---------------------------------------------------------------
    kv = [("k", "INT NOT NULL"), ("name", "STRING"), ("v", "BIGINT")]
    for fmt in FORMATS:
        for bucket in ("1", "2", "4"):
            rng = random.Random(f"pk-{fmt}-{bucket}")
            s = Scenario(f"pk_dedup_{fmt}_bucket{bucket}",
                         f"primary-key table, deduplicate, {fmt}, {bucket} buckets: upserts, "
                         "retractions (-U/+U/-D) and a delete by filter",
                         schema(kv, pk=["k"], **{"file.format": fmt, "bucket": bucket}), pk=["k"])
            keys = list(range(40))
            s.write(kv_rows(rng, keys, 60))
            s.checkpoint("upserts")
            batch = kv_rows(rng, keys, 30, nulls=0.2)
            for r in batch[:8]:
                r["_ROW_KIND"] = rng.choice(["-D", "-U", "+U"])
            s.write(batch)
            s.checkpoint("retractions")
            s.delete("k >= 30", lambda r: r["k"] >= 30)
            s.checkpoint("deleted")
            if bucket == "2":
                s.compact(full=True)
                s.checkpoint("compacted")
            written.append(s.save())

    rng = random.Random("pk-seq")
    s = Scenario("pk_dedup_sequence_field",
                 "deduplicate with sequence.field: a later commit with a smaller sequence loses",
                 schema([("k", "INT NOT NULL"), ("name", "STRING"), ("ts", "BIGINT")], pk=["k"],
                        bucket="2", **{"sequence.field": "ts"}), pk=["k"], seq_field="ts")
    s.write([{"k": k, "name": f"first-{k}", "ts": 100 + k} for k in range(20)])
    s.write([{"k": k, "name": f"second-{k}", "ts": 100 + k + (5 if k % 2 else -5)}
             for k in range(20)])
    s.checkpoint("merged")
    written.append(s.save())

    for part in ("partitioned", "cross_partition"):
        rng = random.Random(f"pk-{part}")
        if part == "partitioned":
            sch = schema([("k", "INT NOT NULL"), ("dt", "STRING NOT NULL"), ("v", "BIGINT")],
                         pk=["k", "dt"], partition=["dt"], bucket="2")
            pk = ["k", "dt"]
        else:
            sch = schema([("k", "INT NOT NULL"), ("dt", "STRING NOT NULL"), ("v", "BIGINT")],
                         pk=["k"], partition=["dt"], bucket="-1")
            pk = ["k"]
        s = Scenario(f"pk_{part}" + ("_parquet" if part == "partitioned" else ""),
                     "partitioned primary-key table" + (
                         " (bucket -1, the key without the partition: a row moves partitions)"
                         if part == "cross_partition" else ""), sch, pk=pk,
                     java_write=(part == "partitioned"))
        for c in range(3):
            s.write([{"k": rng.randrange(15), "dt": rng.choice(dts), "v": rng.randrange(100)}
                     for _ in range(25)])
            s.checkpoint(f"commit-{c + 1}")
        written.append(s.save())

    rng = random.Random("pk-dynamic")
    s = Scenario("pk_dynamic_bucket", "primary-key table with dynamic buckets (bucket -1), "
                 "small dynamic-bucket.target-row-num so keys spread over buckets",
                 schema(kv, pk=["k"], bucket="-1", **{"dynamic-bucket.target-row-num": "10"}),
                 pk=["k"], java_write=False)
    for c in range(3):
        s.write(kv_rows(rng, list(range(50)), 40))
        s.checkpoint(f"commit-{c + 1}")
    written.append(s.save())

    for fmt in FORMATS:
        rng = random.Random(f"pu-{fmt}")
        s = Scenario(f"pk_partial_update_{fmt}",
                     f"partial-update ({fmt}): sparse columns fill in over commits",
                     schema([("k", "INT NOT NULL"), ("a", "STRING"), ("b", "BIGINT"),
                             ("c", "STRING")], pk=["k"], bucket="2",
                            **{"merge-engine": "partial-update", "file.format": fmt}),
                     pk=["k"], engine="partial-update")
        for c in range(3):
            rows = []
            for _ in range(25):
                r = {"k": rng.randrange(20)}
                for col in ("a", "b", "c"):
                    if rng.random() < 0.5:
                        r[col] = rng.randrange(100) if col == "b" else f"{col}{rng.randrange(100)}"
                rows.append(r)
            s.write(rows)
            s.checkpoint(f"commit-{c + 1}")
        s.compact(full=True)
        s.checkpoint("compacted")
        written.append(s.save())

    rng = random.Random("pu-ignore-delete")
    s = Scenario("pk_partial_update_ignore_delete",
                 "partial-update with ignore-delete: -D rows change nothing",
                 schema([("k", "INT NOT NULL"), ("a", "STRING"), ("b", "BIGINT")], pk=["k"],
                        bucket="2", **{"merge-engine": "partial-update", "ignore-delete": "true"}),
                 pk=["k"], engine="partial-update", ignore_delete=True,
                 pypaimon=False)  # pypaimon 2.1.0: "options that pypaimon does not yet implement"
    s.write([{"k": k, "a": f"a{k}"} for k in range(10)])
    s.write([{"k": k, "b": k * 10} for k in range(0, 10, 2)]
            + [{"_ROW_KIND": "-D", "k": k} for k in range(1, 10, 3)])
    s.checkpoint("merged")
    written.append(s.save())

    for fmt in FORMATS:
        rng = random.Random(f"agg-{fmt}")
        agg = {"s": "sum", "mx": "max", "mn": "min", "last": "last_non_null_value",
               "first": "first_non_null_value"}
        opts = {"merge-engine": "aggregation", "file.format": fmt}
        for f, fn in agg.items():
            opts[f"fields.{f}.aggregate-function"] = fn
        s = Scenario(f"pk_aggregation_{fmt}",
                     f"aggregation ({fmt}): sum, max, min, last_non_null_value, "
                     "first_non_null_value",
                     schema([("k", "INT NOT NULL"), ("s", "BIGINT"), ("mx", "INT"), ("mn", "INT"),
                             ("last", "STRING"), ("first", "STRING")], pk=["k"], bucket="2",
                            **opts), pk=["k"], engine="aggregation", agg=agg)
        for c in range(3):
            rows = []
            for _ in range(30):
                r = {"k": rng.randrange(15)}
                for col in agg:
                    if rng.random() < 0.7:
                        r[col] = (f"{col}{rng.randrange(100)}" if col in ("last", "first")
                                  else rng.randrange(-500, 500))
                rows.append(r)
            s.write(rows)
            s.checkpoint(f"commit-{c + 1}")
        s.compact(full=True)
        s.checkpoint("compacted")
        written.append(s.save())

    for fmt in FORMATS:
        rng = random.Random(f"first-row-{fmt}")
        s = Scenario(f"pk_first_row_{fmt}",
                     f"first-row ({fmt}): the writer compacts level 0 before its commit (batch "
                     "reads skip level 0), so the first row of each key is visible at once",
                     schema(kv, pk=["k"], bucket="2",
                            **{"merge-engine": "first-row", "file.format": fmt}),
                     pk=["k"], engine="first-row")
        for c in range(3):
            s.write(kv_rows(rng, list(range(30)), 25))
            s.checkpoint(f"commit-{c + 1}")
        written.append(s.save())

    for fmt in FORMATS:
        rng = random.Random(f"pk-dv-{fmt}")
        s = Scenario(f"pk_deletion_vectors_{fmt}",
                     f"deduplicate with deletion vectors ({fmt}): level-0 compaction in the "
                     "writer, older rows marked deleted",
                     schema(kv, pk=["k"], bucket="2",
                            **{"deletion-vectors.enabled": "true", "file.format": fmt}),
                     pk=["k"])
        for c in range(3):
            batch = kv_rows(rng, list(range(30)), 25)
            if c == 2:
                for r in batch[:5]:
                    r["_ROW_KIND"] = "-D"
            s.write(batch)
            s.checkpoint(f"commit-{c + 1}")
        s.delete("k < 5", lambda r: r["k"] < 5)
        s.checkpoint("deleted")
        written.append(s.save())

    for producer in ("input", "lookup", "full-compaction"):
        rng = random.Random(f"changelog-{producer}")
        s = Scenario(f"pk_changelog_{producer.replace('-', '_')}",
                     f"deduplicate with changelog-producer={producer}",
                     schema(kv, pk=["k"], bucket="2", **{"changelog-producer": producer}),
                     pk=["k"])
        for c in range(3):
            s.write(kv_rows(rng, list(range(20)), 20))
            s.checkpoint(f"commit-{c + 1}")
        s.compact(full=True)
        s.checkpoint("compacted")
        written.append(s.save())

    rng = random.Random("pk-postpone")
    s = Scenario("pk_postpone_bucket",
                 "postpone bucket (-2): rows land in bucket-postpone, compactions move them to "
                 "real buckets",
                 schema(kv, pk=["k"], bucket="-2"), pk=["k"])
    s.write(kv_rows(rng, list(range(30)), 40))
    # Before compaction, batch reads see the postpone files' rows (Java 1.4.2's as well).
    s.checkpoint("written")
    s.compact(full=True)
    s.checkpoint("compacted")
    s.write(kv_rows(rng, list(range(30)), 20))
    s.compact(full=True)
    s.checkpoint("compacted-2")
    written.append(s.save())

    rng = random.Random("pk-evolution")
    s = Scenario("pk_schema_evolution",
                 "primary-key table: add a column, rename a value column, set an option",
                 schema(kv, pk=["k"], bucket="2"), pk=["k"])
    s.write(kv_rows(rng, list(range(20)), 20))
    s.alter([["add-column", "extra INT"]], add="extra")
    s.write([dict(r, extra=r["k"] * 2) for r in kv_rows(rng, list(range(20)), 10)])
    s.checkpoint("added")
    s.alter([["rename-column", "name=label"], ["set", "write-buffer-size=4mb"]],
            rename=("name", "label"))
    s.write([{"k": k, "label": f"L{k}", "v": k, "extra": None} for k in range(15, 25)])
    s.checkpoint("renamed")
    s.compact(full=True)
    s.checkpoint("compacted")
    written.append(s.save())

    rng = random.Random("pk-rowkind-field")
    s = Scenario("pk_rowkind_field",
                 "deduplicate with rowkind.field: the column 'op' gives each row's kind",
                 schema([("k", "INT NOT NULL"), ("v", "BIGINT"), ("op", "STRING")], pk=["k"],
                        bucket="1", **{"rowkind.field": "op"}), pk=["k"])
    rows = [{"k": k, "v": k, "op": "+I"} for k in range(10)]
    s.write(rows)
    s.write([{"k": 1, "v": 1, "op": "-D"}, {"k": 2, "v": 2, "op": "-U"},
             {"k": 2, "v": 20, "op": "+U"}, {"k": 11, "v": 11, "op": "+I"}])
    # The model: op decides the kind, and the row keeps its op column.
    s.rows = {}
    for r in rows:
        s.rows[(r["k"],)] = dict(r)
    s.rows.pop((1,))
    s.rows[(2,)] = {"k": 2, "v": 20, "op": "+U"}
    s.rows[(11,)] = {"k": 11, "v": 11, "op": "+I"}
    s.checkpoint("merged")
    written.append(s.save())

    rng = random.Random("pk-tag-rollback")
    s = Scenario("pk_tag_rollback", "tag a snapshot, write more, roll back to the tag",
                 schema(kv, pk=["k"], bucket="2"), pk=["k"])
    s.write(kv_rows(rng, list(range(20)), 20))
    s.step({"op": "tag", "name": "t1"})
    saved = {k: dict(v) for k, v in s.rows.items()}
    s.checkpoint("tagged")
    s.write(kv_rows(rng, list(range(20)), 20))
    s.checkpoint("more")
    s.step({"op": "rollback", "tag": "t1"})
    s.rows = saved
    s.checkpoint("rolled-back")
    written.append(s.save())

    # ---- more variants -------------------------------------------------------------------
    for fmt in FORMATS:
        rng = random.Random(f"append-partitioned-{fmt}")
        s = Scenario(f"append_partitioned_{fmt}",
                     f"partitioned append table, {fmt}, 2 fixed buckets: partition values with "
                     "'/', '=' and spaces",
                     schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT"), ("dt", "STRING")],
                            partition=["dt"], bucket="2", **{"bucket-key": "id",
                                                              "file.format": fmt}))
        odd = ["a/b", "k=v", "with space", "plain"]
        for c in range(2):
            s.write(append_rows(rng, 50 * c, 25, odd))
            s.checkpoint(f"commit-{c + 1}")
        written.append(s.save())

    for fmt in ("orc", "avro"):
        rng = random.Random(f"pk-partitioned-{fmt}")
        s = Scenario(f"pk_partitioned_{fmt}", f"partitioned primary-key table ({fmt})",
                     schema([("k", "INT NOT NULL"), ("dt", "STRING NOT NULL"), ("v", "BIGINT")],
                            pk=["k", "dt"], partition=["dt"], bucket="2",
                            **{"file.format": fmt}), pk=["k", "dt"])
        for c in range(3):
            s.write([{"k": rng.randrange(15), "dt": rng.choice(dts), "v": rng.randrange(100)}
                     for _ in range(25)])
            s.checkpoint(f"commit-{c + 1}")
        written.append(s.save())

    rng = random.Random("pk-write-only")
    s = Scenario("pk_write_only", "deduplicate with write-only=true: level-0 files pile up "
                 "(no compaction in the writer), then a full compaction",
                 schema(kv, pk=["k"], bucket="2", **{"write-only": "true"}), pk=["k"])
    for c in range(6):
        s.write(kv_rows(rng, list(range(25)), 15))
    s.checkpoint("written")
    s.compact(full=True)
    s.checkpoint("compacted")
    written.append(s.save())

    rng = random.Random("first-row-lookup")
    s = Scenario("pk_first_row_changelog_lookup", "first-row with changelog-producer=lookup",
                 schema(kv, pk=["k"], bucket="2", **{"merge-engine": "first-row",
                                                     "changelog-producer": "lookup"}),
                 pk=["k"], engine="first-row")
    for c in range(3):
        s.write(kv_rows(rng, list(range(25)), 20))
        s.checkpoint(f"commit-{c + 1}")
    written.append(s.save())

    agg = {"s": "sum", "mx": "max", "last": "last_non_null_value"}
    rng = random.Random("agg-lookup")
    opts = {"merge-engine": "aggregation", "changelog-producer": "lookup"}
    for f, fn in agg.items():
        opts[f"fields.{f}.aggregate-function"] = fn
    s = Scenario("pk_aggregation_changelog_lookup", "aggregation with changelog-producer=lookup",
                 schema([("k", "INT NOT NULL"), ("s", "BIGINT"), ("mx", "INT"),
                         ("last", "STRING")], pk=["k"], bucket="2", **opts),
                 pk=["k"], engine="aggregation", agg=agg)
    for c in range(3):
        s.write([{"k": rng.randrange(12), "s": rng.randrange(100), "mx": rng.randrange(100),
                  "last": f"l{rng.randrange(100)}"} for _ in range(20)])
        s.checkpoint(f"commit-{c + 1}")
    written.append(s.save())

    rng = random.Random("pu-lookup")
    s = Scenario("pk_partial_update_changelog_lookup",
                 "partial-update with changelog-producer=lookup",
                 schema([("k", "INT NOT NULL"), ("a", "STRING"), ("b", "BIGINT")], pk=["k"],
                        bucket="2", **{"merge-engine": "partial-update",
                                       "changelog-producer": "lookup"}),
                 pk=["k"], engine="partial-update")
    for c in range(3):
        s.write([{"k": rng.randrange(12), **({"a": f"a{rng.randrange(50)}"} if rng.random() < .5
                                             else {"b": rng.randrange(50)})} for _ in range(20)])
        s.checkpoint(f"commit-{c + 1}")
    written.append(s.save())

    rng = random.Random("pk-dv-lookup")
    s = Scenario("pk_deletion_vectors_changelog_lookup",
                 "deduplicate with deletion vectors and changelog-producer=lookup, partitioned",
                 schema([("k", "INT NOT NULL"), ("dt", "STRING NOT NULL"), ("v", "BIGINT")],
                        pk=["k", "dt"], partition=["dt"], bucket="2",
                        **{"deletion-vectors.enabled": "true", "changelog-producer": "lookup"}),
                 pk=["k", "dt"])
    for c in range(3):
        s.write([{"k": rng.randrange(15), "dt": rng.choice(dts), "v": rng.randrange(100)}
                 for _ in range(25)])
        s.checkpoint(f"commit-{c + 1}")
    s.delete("v < 20", lambda r: r["v"] < 20)
    s.checkpoint("deleted")
    written.append(s.save())

    rng = random.Random("append-dv-compact")
    s = Scenario("append_dv_compact", "append table with deletion vectors: deletes, then a full "
                 "compaction drops the deleted rows from the files",
                 schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT")],
                        **{"deletion-vectors.enabled": "true"}))
    for c in range(4):
        s.write(append_rows(rng, 20 * c, 20))
    s.delete("v < 0", lambda r: r["v"] < 0)
    s.checkpoint("deleted")
    s.compact(full=True)
    s.checkpoint("compacted")
    written.append(s.save())

    rng = random.Random("append-tag-rollback")
    s = Scenario("append_tag_rollback", "append table: tag, write, roll back to a snapshot",
                 schema([("id", "BIGINT"), ("name", "STRING"), ("v", "INT")]))
    s.write(append_rows(rng, 0, 10))
    s.step({"op": "tag", "name": "first"})
    saved = [dict(r) for r in s.rows]
    s.write(append_rows(rng, 10, 10))
    s.checkpoint("two-commits")
    s.step({"op": "rollback", "snapshot": 1})
    s.rows = saved
    s.checkpoint("rolled-back")
    s.write(append_rows(rng, 20, 5))
    s.checkpoint("after-rollback")
    written.append(s.save())

    rng = random.Random("pk-overwrite")
    s = Scenario("pk_static_overwrite", "partitioned primary-key table: overwrite one partition",
                 schema([("k", "INT NOT NULL"), ("dt", "STRING NOT NULL"), ("v", "BIGINT")],
                        pk=["k", "dt"], partition=["dt"], bucket="2"), pk=["k", "dt"])
    s.write([{"k": k, "dt": d, "v": k} for k in range(10) for d in dts])
    s.checkpoint("written")
    s.write([{"k": k, "dt": "2026-01-02", "v": 100 + k} for k in range(3)], overwrite=True,
            partition={"dt": "2026-01-02"})
    s.checkpoint("overwritten")
    written.append(s.save())

    return written


if __name__ == "__main__":
    for old in os.listdir(HERE):
        if old.endswith(".json"):
            os.remove(os.path.join(HERE, old))
    paths = gen()
    print(f"{len(paths)} scenarios in {HERE}")
