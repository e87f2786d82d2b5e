"""Shared helpers of gen_tables.py and read_back.py (managed-BLOB primary-key tables).

Canonical row encoding (the format of every `<table>.expected.json` and of read_back.py):

* a BLOB cell is `{"len": N, "sha256": "<hex>"}` or null;
* ARRAY<BLOB> is a JSON list of such cells (null elements stay null);
* MAP<K, BLOB> is a JSON list of `[key, cell]` pairs sorted by key (a JSON object could not
  keep INT keys; sorting makes the encoding independent of the entry order of a reader);
* INT/BIGINT/STRING/BOOLEAN are JSON scalars;
* rows are JSON objects in schema column order, sorted by the primary key.

Only the Python standard library and pyarrow are used, so the module runs in the pypaimon-rust
venv and in the pypaimon venv alike.
"""

import hashlib
import json
import struct
import zlib


def blob_cell(b):
    if b is None:
        return None
    b = bytes(b)
    return {"len": len(b), "sha256": hashlib.sha256(b).hexdigest()}


def _sortable(v):
    if v is None:
        return (0, "")
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, float)):
        return (1, v)
    if isinstance(v, str):
        return (2, v)
    return (3, json.dumps(v, sort_keys=True))


def canon_value(v, kind):
    """`kind` is 'blob', 'array_blob', 'map_blob' or 'scalar'."""
    if v is None:
        return None
    if kind == "blob":
        return blob_cell(v)
    if kind == "array_blob":
        return [blob_cell(e) for e in v]
    if kind == "map_blob":
        pairs = [[k, blob_cell(e)] for k, e in (v.items() if isinstance(v, dict) else v)]
        # stable: equal keys (a reader that kept duplicates) keep their order
        return sorted(pairs, key=lambda p: _sortable(p[0]))
    if isinstance(v, bytes):
        return v.hex()
    return v


def kind_of_paimon_type(t):
    """Classify a Paimon type string from the schema file ('BLOB', 'ARRAY<BLOB>', ...)."""
    u = t.upper().replace(" NOT NULL", "").replace(" ", "")
    if u == "BLOB":
        return "blob"
    if u == "ARRAY<BLOB>":
        return "array_blob"
    if u.startswith("MAP<") and u.endswith(",BLOB>"):
        return "map_blob"
    return "scalar"


def canon_rows(rows, columns, primary_keys):
    """rows: list of dicts (python values); columns: list of (name, kind)."""
    out = [{n: canon_value(r.get(n), k) for n, k in columns} for r in rows]
    return sort_rows(out, primary_keys)


def sort_rows(rows, primary_keys):
    def key(r):
        return tuple(_sortable(r.get(c)) for c in primary_keys) + (
            json.dumps(r, separators=(",", ":")),)
    return sorted(rows, key=key)


def dumps(obj):
    return json.dumps(obj, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


# ---------------------------------------------------------------------------------------------
# .blobref sidecar decoding (spec managed-blob.md §4.1)

MAGIC = 0x50424C52


def decode_java_utf(buf, pos):
    """Java DataInput.readUTF: u16 BE length, then modified UTF-8 (CESU-8 surrogates)."""
    (n,) = struct.unpack_from(">H", buf, pos)
    pos += 2
    raw = buf[pos:pos + n]
    if len(raw) != n:
        raise ValueError("truncated modified-UTF-8 string")
    units = []
    i = 0
    while i < n:
        c = raw[i]
        if c < 0x80 and c != 0:
            units.append(c)
            i += 1
        elif c & 0xE0 == 0xC0 and i + 1 < n and raw[i + 1] & 0xC0 == 0x80:
            units.append(((c & 0x1F) << 6) | (raw[i + 1] & 0x3F))
            i += 2
        elif (c & 0xF0 == 0xE0 and i + 2 < n and raw[i + 1] & 0xC0 == 0x80
              and raw[i + 2] & 0xC0 == 0x80):
            units.append(((c & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F))
            i += 3
        else:
            raise ValueError("invalid modified-UTF-8 byte %02x at %d" % (c, i))
    s = struct.pack("<%dH" % len(units), *units).decode("utf-16-le", "surrogatepass")
    return s, pos + n


def java_string_key(s):
    """Java String.compareTo order = UTF-16 code unit order."""
    return s.encode("utf-16-be", "surrogatepass")


def decode_blobref(data):
    """Decode a sidecar; returns a dict with the fields and the checks of spec §4.4."""
    out = {"size": len(data), "hex": data.hex()}
    if len(data) < 13:
        out["error"] = "too short"
        return out
    (magic,) = struct.unpack_from(">I", data, 0)
    out["magic"] = "%08x" % magic
    out["magic_ok"] = magic == MAGIC
    out["version"] = data[4]
    (count,) = struct.unpack_from(">i", data, 5)
    out["count"] = count
    pos = 9
    refs = []
    try:
        for _ in range(max(count, 0)):
            root, pos = decode_java_utf(data, pos)
            name, pos = decode_java_utf(data, pos)
            refs.append([root, name])
    except (ValueError, struct.error) as e:
        out["error"] = "bad reference: %s" % e
        return out
    out["references"] = refs
    if pos + 4 > len(data):
        out["error"] = "missing checksum"
        return out
    (stored,) = struct.unpack_from(">I", data, pos)
    computed = zlib.crc32(data[4:pos]) & 0xFFFFFFFF
    out["crc32_stored"] = stored
    out["crc32_computed"] = computed
    out["crc32_ok"] = stored == computed
    out["trailing_bytes"] = len(data) - (pos + 4)
    keys = [(java_string_key(r), java_string_key(n)) for r, n in refs]
    out["sorted_java_order"] = keys == sorted(keys)
    out["distinct"] = len(set(keys)) == len(keys)
    return out


# ---------------------------------------------------------------------------------------------
# BlobDescriptor (blob-descriptor.md §1)

DESC_MAGIC = 0x424C4F4244455343


def encode_descriptor(uri, offset, length):
    u = uri.encode("utf-8")
    return (b"\x02" + struct.pack("<q", DESC_MAGIC) + struct.pack("<i", len(u)) + u
            + struct.pack("<qq", offset, length))


def decode_descriptor(b):
    """Returns (version, uri, offset, length) or None if `b` is not a v2 descriptor."""
    b = bytes(b)
    if len(b) < 9 or b[0] > 2 or struct.unpack_from("<q", b, 1)[0] != DESC_MAGIC:
        return None
    (n,) = struct.unpack_from("<i", b, 9)
    uri = b[13:13 + n].decode("utf-8")
    off, ln = struct.unpack_from("<qq", b, 13 + n)
    return b[0], uri, off, ln


# ---------------------------------------------------------------------------------------------
# .managed.blob pack check (blob-format.md §2-§3: records magic|payload|len|crc, delta-varint
# index, int32 LE index length, version byte)

def check_pack(data):
    out = {"size": len(data)}
    if len(data) < 5:
        out["error"] = "too short"
        return out
    out["version"] = data[-1]
    (ilen,) = struct.unpack_from("<i", data, len(data) - 5)
    index = data[len(data) - 5 - ilen:len(data) - 5]
    entries, prev, pos = [], 0, 0
    while pos < len(index):
        acc, shift = 0, 0
        while True:
            b = index[pos]
            pos += 1
            acc |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        prev += (acc >> 1) ^ -(acc & 1)
        entries.append(prev)
    out["records"] = len(entries)
    off, ok = 0, True
    for n in entries:
        rec = data[off:off + n]
        magic_ok = rec[:4] == bytes.fromhex("cf114e58")
        (inner,) = struct.unpack_from("<q", rec, n - 12)
        (crc,) = struct.unpack_from("<I", rec, n - 4)
        ok = ok and magic_ok and inner == n and crc == (zlib.crc32(rec[:n - 4]) & 0xFFFFFFFF)
        off += n
    out["payload_lengths"] = [n - 16 for n in entries]
    out["records_ok"] = ok
    out["data_region_exact"] = off == len(data) - 5 - ilen
    return out
