#!/usr/bin/env python3
"""Read-only HTTP file server with Range support and a request log (bench case 4).

usage: python range_server.py <root> <port> <log>
Serves the files under <root> at http://127.0.0.1:<port>/<path> (GET and HEAD; a single
`Range: bytes=a-b` / `bytes=a-` / `bytes=-n` is answered 206 with that slice, anything else
200 with the whole file); other methods (WebDAV PROPFIND listing, writes) get 405. Appends one line per request to <log>:
    <method> <path> range=<Range header or -> status=<code> bytes=<body bytes sent>
so the number of requests and the bytes a reader fetched are counted by the server, not by
the reader. Directory listings are not served (404), as on a plain object store endpoint.
"""
import os, re, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

ROOT = os.path.realpath(sys.argv[1])
PORT = int(sys.argv[2])
LOG = open(sys.argv[3], "a", buffering=1)
LOCK = threading.Lock()
CHUNK = 1 << 20


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY, Nagle + delayed ACK
    # add ~40 ms to every keep-alive response.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _log(self, status, sent):
        with LOCK:
            LOG.write("%s %s range=%s status=%d bytes=%d\n" % (
                self.command, self.path, self.headers.get("Range", "-"), status, sent))

    def _file(self):
        p = os.path.realpath(os.path.join(ROOT, unquote(self.path.split("?")[0]).lstrip("/")))
        if not p.startswith(ROOT + os.sep) or not os.path.isfile(p):
            return None
        return p

    def _fail(self, code):
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self._log(code, 0)

    def _serve(self, body):
        p = self._file()
        if p is None:
            return self._fail(404)
        size = os.path.getsize(p)
        start, end, status = 0, size, 200
        rng = self.headers.get("Range")
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng or "")
        if m and (m.group(1) or m.group(2)):
            if m.group(1):
                start = int(m.group(1))
                end = min(size, int(m.group(2)) + 1) if m.group(2) else size
            else:
                start = max(0, size - int(m.group(2)))
            if start >= size or start >= end:
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return self._log(416, 0)
            status = 206
        self.send_response(status)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Last-Modified", self.date_time_string(int(os.path.getmtime(p))))
        self.send_header("ETag", '"%x-%x"' % (size, int(os.path.getmtime(p) * 1e6)))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, size))
        self.end_headers()
        sent = 0
        if body:
            with open(p, "rb") as f:
                f.seek(start)
                while sent < end - start:
                    b = f.read(min(CHUNK, end - start - sent))
                    if not b:
                        break
                    self.wfile.write(b)
                    sent += len(b)
        self._log(status, sent)

    def do_GET(self):
        self._serve(True)

    def do_HEAD(self):
        self._serve(False)

    def _not_allowed(self):
        # 405 like nginx or `paimon-kernel serve` (http.server's default 501 is a 5xx, which
        # object_store retries ten times before the host gives up listing).
        self.close_connection = True
        self._fail(405)

    do_PROPFIND = do_POST = do_PUT = do_DELETE = do_PATCH = _not_allowed


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
