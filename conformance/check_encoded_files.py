#!/usr/bin/env python3
"""pypaimon and pyarrow read the data files paimon-kernel's `DataFileEncoder` wrote.

DIR holds, per sample `<name>`: data files `<name>.parquet` / `.orc` / `.avro`,
`<name>.fields.json` (the Paimon fields, schema JSON) and `<name>.arrow` (the rows written, Arrow
IPC file). Write them with
`cargo test -p paimon-kernel --lib write::encode::tests::dump_sample_files -- --ignored`
(into `$TMPDIR/paimon-encoded-files`).

Each data file is read with pypaimon's own format readers (`FormatPyArrowReader` for Parquet and
ORC, `FormatAvroReader` for Avro) and compared, column by column, with the rows written (NaN
equals NaN; fields pypaimon has no Arrow type for, e.g. MULTISET, are left out). Then the plain
readers pypaimon builds on (pyarrow.parquet, pyarrow.orc, fastavro) open it, and for Parquet the
physical schema and the `PARQUET:field_id` of every column are printed (`--schema` prints the
whole Parquet schema as pyarrow sees it: physical and logical types, field ids, repetition).

Usage: check_encoded_files.py DIR [--schema]
Prints one line per file and closes with `N passed, N failed`; exit 1 on any failure.
"""

import glob
import json
import os
import sys

import fastavro
import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
from pypaimon.filesystem.local_file_io import LocalFileIO
from pypaimon.read.reader.format_avro_reader import FormatAvroReader
from pypaimon.read.reader.format_pyarrow_reader import FormatPyArrowReader
from pypaimon.schema.data_types import DataField, PyarrowFieldParser


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return a == b


def read_with_pypaimon(path, fmt, fields):
    io = LocalFileIO()
    if fmt == "avro":
        reader = FormatAvroReader(io, path, [f.name for f in fields], fields, None)
    else:
        reader = FormatPyArrowReader(io, fmt, path, fields, None)
    batches = []
    while True:
        batch = reader.read_arrow_batch()
        if batch is None:
            break
        batches.append(batch)
    reader.close()
    schema = PyarrowFieldParser.from_paimon_schema(fields)
    table = pa.Table.from_batches(batches) if batches else schema.empty_table()
    return table.combine_chunks()


def differences(got, expected, fields):
    out = []
    for i, f in enumerate(fields):
        g, e = got.column(i), expected.column(i)
        if g.type != e.type:
            try:
                g = g.cast(e.type)
            except Exception:  # noqa: BLE001
                # ORC types carry no NOT NULL: nested fields read back nullable.
                if str(g.type).replace(" not null", "") != str(e.type).replace(" not null", ""):
                    out.append(f"{f.name}: type {got.column(i).type}, expected {e.type}")
                    continue
        if g.equals(e):
            continue
        if not all(same(a, b) for a, b in zip(g.to_pylist(), e.to_pylist())):
            out.append(f"{f.name}: got {g.to_pylist()[:5]}, expected {e.to_pylist()[:5]}")
    return out


def plain_read(path, fmt, show_schema):
    if fmt == "parquet":
        pf = pq.ParquetFile(path)
        if show_schema:
            print(pf.schema)
        ids = [dict(f.metadata or {}).get(b"PARQUET:field_id", b"-").decode() for f in pq.read_schema(path)]
        md = pf.metadata
        return (f"pyarrow.parquet: {pf.read().num_rows} rows, {md.num_row_groups} row group(s), "
                f"field ids {ids}, footer metadata {md.metadata}")
    if fmt == "orc":
        f = orc.ORCFile(path)
        ids = [dict(x.metadata or {}).get(b"paimon.id", b"-").decode() for x in f.schema]
        return f"pyarrow.orc: {f.read().num_rows} rows, {f.nstripes} stripe(s), paimon.id {ids}"
    with open(path, "rb") as fh:
        reader = fastavro.reader(fh)
        rows = sum(1 for _ in reader)
        return f"fastavro: {rows} rows, codec {reader.codec}"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    show_schema = "--schema" in sys.argv
    directory = args[0]
    passed = failed = 0
    for fields_json in sorted(glob.glob(os.path.join(directory, "*.fields.json"))):
        name = os.path.basename(fields_json)[: -len(".fields.json")]
        fields, left_out = [], []
        with open(fields_json, encoding="utf-8") as fh:
            for j in json.load(fh):
                f = DataField.from_dict(j)
                try:
                    PyarrowFieldParser.from_paimon_field(f)
                    fields.append(f)
                except Exception:  # noqa: BLE001
                    left_out.append(f"{f.name} {f.type}")
        expected = pa.ipc.open_file(os.path.join(directory, name + ".arrow")).read_all()
        expected = expected.select([f.name for f in fields]).combine_chunks()
        for path in sorted(glob.glob(os.path.join(directory, name + ".*"))):
            fmt = path.rsplit(".", 1)[1]
            if fmt not in ("parquet", "orc", "avro"):
                continue
            try:
                got = read_with_pypaimon(path, fmt, fields)
                diffs = differences(got, expected, fields)
                plain = plain_read(path, fmt, show_schema)
            except Exception as e:  # noqa: BLE001
                diffs, plain, got = [f"{type(e).__name__}: {e}"], "", None
            note = f" (left out: {left_out})" if left_out else ""
            if diffs:
                failed += 1
                print(f"FAIL {os.path.basename(path)}{note}")
                for d in diffs:
                    print(f"    {d}")
            else:
                passed += 1
                print(f"ok   {os.path.basename(path)}: {got.num_rows} rows{note}")
            if plain:
                print(f"     {plain}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
