"""Writes the golden Avro files of core/tests/it/avro_codecs.rs with fastavro (run with the
pypaimon venv: `python make.py`; the files are checked in, CI does not run this).

* `data-<codec>.avro` for codecs bzip2 and xz: 1,000 rows of a Paimon-style data file schema
  (`_KEY_k` int, `_SEQUENCE_NUMBER` long, `_VALUE_KIND` int (tinyint as int), `k` int,
  `v` nullable string, `d` nullable double), in blocks of ~2 KB so the file has many blocks.
  Row i: k = i, sequence number = 1000 + i, value kind = i % 4 (0..3), v = "v-<i>" or null
  when i % 7 == 0, d = i * 0.5 or null when i % 11 == 0.
* `manifest-<codec>` for codecs bzip2 and xz: the corpus manifest
  `conformance/tables/corpus.db/append_avro/manifest/manifest-167febd0-...-0` re-encoded with
  the same writer schema and records, only the codec changed.
"""
import os

import fastavro

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
MANIFEST = os.path.join(ROOT, "conformance", "tables", "corpus.db", "append_avro", "manifest",
                        "manifest-167febd0-b5dc-4d80-bbcb-297435668f37-0")

DATA_SCHEMA = {
    "type": "record", "name": "record", "namespace": "org.apache.paimon.avro.generated",
    "fields": [
        {"name": "_KEY_k", "type": "int"},
        {"name": "_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_VALUE_KIND", "type": "int"},
        {"name": "k", "type": "int"},
        {"name": "v", "type": ["null", "string"], "default": None},
        {"name": "d", "type": ["null", "double"], "default": None},
    ],
}


def row(i):
    return {"_KEY_k": i, "_SEQUENCE_NUMBER": 1000 + i, "_VALUE_KIND": i % 4, "k": i,
            "v": None if i % 7 == 0 else "v-%d" % i,
            "d": None if i % 11 == 0 else i * 0.5}


def main():
    for codec in ("bzip2", "xz"):
        with open(os.path.join(HERE, "data-%s.avro" % codec), "wb") as f:
            fastavro.writer(f, fastavro.parse_schema(DATA_SCHEMA), (row(i) for i in range(1000)),
                            codec=codec, sync_interval=2000)
        with open(MANIFEST, "rb") as src:
            reader = fastavro.reader(src)
            schema = reader.writer_schema
            records = list(reader)
        with open(os.path.join(HERE, "manifest-%s" % codec), "wb") as f:
            fastavro.writer(f, fastavro.parse_schema(schema), records, codec=codec)


if __name__ == "__main__":
    main()
