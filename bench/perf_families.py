#!/usr/bin/env python3
"""Self time of a perf profile grouped by symbol family (the profiles of results/2026-12-01.md).

usage: perf report -i perf.data --stdio --no-children --sort sym -g none > r.txt; python3 perf_families.py r.txt
Families are regular expressions over symbol names (first match wins); "[k]" symbols are the Linux kernel.
"""
import sys, re, collections
cats = collections.OrderedDict([
 ("zstd compress", r"ZSTD_(compress|encode|seqTo|ldm|count|hash|fill|buildSeq|rescale|Huf)|HIST_|HUF_compress|FSE_(build|compress|normalize|write)|HUF_(build|write|opt|sort|set)"),
 ("zstd decompress", r"ZSTD_decompress|ZSTD_decode|HUF_decompress|FSE_decode|HUF_read|ZSTD_build|ZSTD_exec"),
 ("parquet encode (dictionary interning, hashing, byte-array gather, levels, page build)", r"parquet::(util::interner|arrow::arrow_writer|column::writer|encodings::encoding|encodings::rle|data_type|util::bit_util::BitWriter|file::writer|column::page|file::metadata|basic)|ahash|hashbrown|__memcmp|RandomState"),
 ("parquet decode", r"parquet::(arrow::array_reader|arrow::record_reader|arrow::arrow_reader|column::reader|encodings::decoding|arrow::buffer|arrow::decoder|util::bit_util::BitReader|file::serialized_reader|arrow::push_decoder)|decode_.*plain|DictionaryDecoder|RleDecoder"),
 ("merge / sort (loser tree, row keys, take/interleave/concat)", r"paimon_kernel::merge|arrow_row|arrow_ord|sort|take|interleave|concat|arrow_select"),
 ("statistics", r"stats|min_max|Statistics"),
 ("memcpy/memset/alloc", r"__mem(move|cpy|set)|malloc|free|_int_|realloc|cfree|alloc"),
 ("kernel: file IO, page faults, scheduling", r"^\[k\]"),
 ("arrow IPC input", r"arrow_ipc"),
])
tot = collections.Counter(); other = []
for ln in open(sys.argv[1]):
    m = re.match(r"\s+([\d.]+)%\s+(\[[k.]\])\s+(.*)", ln)
    if not m: continue
    pct, kind, sym = float(m.group(1)), m.group(2), m.group(3)
    s = kind + " " + sym
    for c, rx in cats.items():
        if re.search(rx, s if c.startswith("kernel") else sym):
            tot[c] += pct; break
    else:
        tot["other"] += pct; other.append((pct, sym))
for c, v in tot.most_common():
    print("%5.1f%%  %s" % (v, c))
print("top other:", "; ".join("%.1f %s" % (p, s[:60]) for p, s in sorted(other, reverse=True)[:6]))
