#!/usr/bin/env python3
"""Count the IO of one run of a case-4 reader (bench/run.sh, after the timed runs).

usage: python blob_io.py <out.tsv> <table> <reader> <http_log|-> -- <command ...>
Runs <command> once and appends one line to <out.tsv>:
  table, reader,
  blob_requests, blob_bytes : reads of `.blob` files: for HTTP readers (http_log given) the
                              GET requests for *.blob paths in the server's log and their body
                              bytes; otherwise the read/pread64/readv/preadv system calls on
                              file descriptors of `.blob` files (strace -f -y) and the bytes
                              they returned,
  all_requests, all_bytes   : the same over every file of the table (HTTP: every request),
  io_stats                  : the reader's own `--io-stats` line when it prints one.
strace counts system calls, so a reader that splits one logical read into several calls is
charged for each; for the readers measured here one call per logical read was observed.
"""
import os, re, subprocess, sys, tempfile

out, table, reader, http_log = sys.argv[1:5]
assert sys.argv[5] == "--"
cmd = sys.argv[6:]
stats = ""

if http_log != "-":
    start = os.path.getsize(http_log)
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(http_log) as f:
        f.seek(start)
        lines = f.read().splitlines()
    reqs = [(l.split()[1], int(re.search(r"status=\d+ bytes=(\d+)$", l).group(1))) for l in lines]
    blob = [b for path, b in reqs if path.endswith(".blob")]
    counts = (len(blob), sum(blob), len(reqs), sum(b for _, b in reqs))
else:
    with tempfile.NamedTemporaryFile(suffix=".strace") as tmp:
        p = subprocess.run(["strace", "-f", "-y", "-qq", "-e", "trace=read,pread64,readv,preadv",
                            "-o", tmp.name] + cmd, capture_output=True, text=True)
        trace = open(tmp.name).read().splitlines()
    # strace -f: "PID read(FD<path>, ..., N) = BYTES", or split by another thread into
    # "PID read(FD<path>, <unfinished ...>" and "PID <... read resumed>..., N) = BYTES".
    whole = re.compile(r"^(\d+)\s+(?:read|pread64|readv|preadv)\(\d+<([^>]*)>.*\)\s+=\s+(\d+)")
    start_ = re.compile(r"^(\d+)\s+(?:read|pread64|readv|preadv)\(\d+<([^>]*)>.*<unfinished \.\.\.>")
    resumed = re.compile(r"^(\d+)\s+<\.\.\. (?:read|pread64|readv|preadv) resumed>.*=\s+(\d+)")
    tdir = "/bench.db/" + table.replace("blob_one", "blob_100m") + "/"
    calls, pending = [], {}
    for line in trace:
        m = whole.search(line)
        if m:
            calls.append((m.group(2), int(m.group(3))))
            continue
        m = start_.search(line)
        if m:
            pending[m.group(1)] = m.group(2)
            continue
        m = resumed.search(line)
        if m and m.group(1) in pending:
            calls.append((pending.pop(m.group(1)), int(m.group(2))))
    tbl = [(f, b) for f, b in calls if tdir in f]
    blob = [b for f, b in tbl if f.endswith(".blob")]
    counts = (len(blob), sum(blob), len(tbl), sum(b for _, b in tbl))
if p.returncode != 0:
    sys.exit("%s failed: %s" % (" ".join(cmd), p.stderr[-500:]))
m = re.search(r"^io: .*$", p.stderr, re.M)
stats = m.group(0) if m else ""
new = not os.path.exists(out)
with open(out, "a") as f:
    if new:
        f.write("table\treader\tblob_requests\tblob_bytes\tall_requests\tall_bytes\tio_stats\n")
    f.write("%s\t%s\t%d\t%d\t%d\t%d\t%s\n" % ((table, reader) + counts + (stats,)))
print("%s %s: .blob reads %d (%d bytes), all table reads %d (%d bytes) %s"
      % ((table, reader) + counts + (stats,)))
