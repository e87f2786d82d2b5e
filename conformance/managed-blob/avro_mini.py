"""A small Avro object-container-file reader (enough for Paimon manifests and manifest lists).

Standard library plus pyarrow (for the zstandard/snappy codecs), so it runs in the
pypaimon-rust venv, which has no fastavro. Supports the codecs null, deflate, zstandard, snappy.
"""

import json
import struct
import zlib


class _Buf:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def read(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("avro: unexpected end of data")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def long(self):
        shift, acc = 0, 0
        while True:
            b = self.read(1)[0]
            acc |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
        return (acc >> 1) ^ -(acc & 1)

    def bytes_(self):
        return self.read(self.long())


def _decode(buf, schema, names):
    if isinstance(schema, str):
        if schema == "null":
            return None
        if schema == "boolean":
            return buf.read(1)[0] != 0
        if schema in ("int", "long"):
            return buf.long()
        if schema == "float":
            return struct.unpack("<f", buf.read(4))[0]
        if schema == "double":
            return struct.unpack("<d", buf.read(8))[0]
        if schema == "bytes":
            return buf.bytes_()
        if schema == "string":
            return buf.bytes_().decode("utf-8")
        if schema in names:
            return _decode(buf, names[schema], names)
        raise ValueError("avro: unknown type %r" % schema)
    if isinstance(schema, list):
        return _decode(buf, schema[buf.long()], names)
    t = schema["type"]
    if t == "record":
        names[schema["name"]] = schema
        if "namespace" in schema:
            names[schema["namespace"] + "." + schema["name"]] = schema
        return {f["name"]: _decode(buf, f["type"], names) for f in schema["fields"]}
    if t in ("array", "map"):
        out = [] if t == "array" else {}
        while True:
            n = buf.long()
            if n == 0:
                break
            if n < 0:
                n = -n
                buf.long()
            for _ in range(n):
                if t == "array":
                    out.append(_decode(buf, schema["items"], names))
                else:
                    k = buf.bytes_().decode("utf-8")
                    out[k] = _decode(buf, schema["values"], names)
        return out
    if t == "enum":
        return schema["symbols"][buf.long()]
    if t == "fixed":
        return buf.read(schema["size"])
    return _decode(buf, t, names)


def _decompress(codec, data):
    if codec in (None, "null"):
        return data
    if codec == "deflate":
        return zlib.decompress(data, -15)
    import pyarrow as pa
    if codec == "zstandard":
        import io
        out = io.BytesIO()
        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as s:
            out.write(s.read())
        return out.getvalue()
    if codec == "snappy":
        body = data[:-4]
        # raw snappy: the uncompressed length is the leading varint
        n, shift, i = 0, 0, 0
        while True:
            b = body[i]
            n |= (b & 0x7F) << shift
            i += 1
            if not b & 0x80:
                break
            shift += 7
        return pa.Codec("snappy").decompress(body, decompressed_size=n).to_pybytes()
    raise ValueError("avro: unsupported codec %r" % codec)


def read_avro(path):
    """Returns (metadata dict, list of records)."""
    with open(path, "rb") as f:
        buf = _Buf(f.read())
    if buf.read(4) != b"Obj\x01":
        raise ValueError("%s: not an Avro object container file" % path)
    meta = {}
    while True:
        n = buf.long()
        if n == 0:
            break
        if n < 0:
            n = -n
            buf.long()
        for _ in range(n):
            k = buf.bytes_().decode("utf-8")
            meta[k] = buf.bytes_()
    sync = buf.read(16)
    schema = json.loads(meta["avro.schema"].decode("utf-8"))
    codec = meta.get("avro.codec", b"null").decode("utf-8")
    records = []
    while buf.pos < len(buf.data):
        count = buf.long()
        size = buf.long()
        block = _Buf(_decompress(codec, buf.read(size)))
        for _ in range(count):
            records.append(_decode(block, schema, {}))
        if buf.read(16) != sync:
            raise ValueError("%s: bad sync marker" % path)
    return {k: v.decode("utf-8", "replace") for k, v in meta.items()}, records
