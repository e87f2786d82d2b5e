"""Write one blob given as a file reference (a serialized blob descriptor) into a new
data-evolution table, with pypaimon 2.1.0 or by preparing the input for paimon-kernel.

  python bench/blob_ref.py input SRC OUT.parquet     # the input row for `paimon-kernel write`
  python bench/blob_ref.py pypaimon SRC WAREHOUSE    # pypaimon writes bench.blob_ref

The row is (id = 1, b = descriptor(file:SRC, 0, -1)): the writer copies the whole file into
the table's .blob file. The descriptor is Java's BlobDescriptor version 2:
02 | magic "CSEDBOLB" (int64 LE 0x424C4F4244455343) | uri length int32 LE | uri | offset int64
LE | length int64 LE.
"""
import os
import shutil
import struct
import sys

import pyarrow as pa

MAGIC = 0x424C4F4244455343
SCHEMA = pa.schema([("id", pa.int32()), ("b", pa.large_binary())])
OPTS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}


def descriptor(path, offset=0, length=-1):
    uri = ("file:" + os.path.abspath(path)).encode()
    return (bytes([2]) + struct.pack("<q", MAGIC) + struct.pack("<i", len(uri)) + uri
            + struct.pack("<q", offset) + struct.pack("<q", length))


def rows(src):
    return pa.Table.from_pydict({"id": [1], "b": [descriptor(src)]}, schema=SCHEMA)


def main():
    mode, src, out = sys.argv[1:4]
    if mode == "input":
        import pyarrow.parquet as pq
        pq.write_table(rows(src), out)
        return
    from pypaimon import CatalogFactory, Schema
    shutil.rmtree(out, ignore_errors=True)
    catalog = CatalogFactory.create({"warehouse": out})
    catalog.create_database("bench", True)
    catalog.create_table("bench.blob_ref", Schema.from_pyarrow_schema(SCHEMA, options=OPTS), False)
    t = catalog.get_table("bench.blob_ref")
    wb = t.new_batch_write_builder()
    w = wb.new_write()
    c = wb.new_commit()
    w.write_arrow(rows(src))
    c.commit(w.prepare_commit())
    w.close()
    c.close()


if __name__ == "__main__":
    main()
