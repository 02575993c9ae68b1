#!/usr/bin/env python3
"""A file server over HTTPS for the image download tests.

Usage: https_server.py CERT KEY ROOT LOG

Listens on 127.0.0.1 twice, ports chosen by the kernel: HTTPS, and plain HTTP with the same
behaviours. Prints "HTTPS_PORT HTTP_PORT" on one line, then serves the files in ROOT until
killed. Each request is appended to LOG as one JSON line (method, path, the Range header, the
status answered, the scheme) before its body is sent.

The first path segment picks a behaviour; the rest names a file in ROOT, or when ROOT has no
such file, the last segment does:
  /plain/F      honours Range (206 with Content-Range; 416 past the end)
  /norange/F    ignores Range: always 200 with the whole file
  /drop-once/F  the first request for this path stops halfway through the body and drops
                the connection (no TLS close); later requests are served like /plain/
  /stall/F      sends half of the body, then nothing for a minute
  /hold/F       makes ROOT/F.waiting, waits until ROOT/F.release exists, then serves like
                /plain/
  /nolength/F   like /plain/ without Range, sends no Content-Length and ends the body by
                closing the connection
  /redirect-http/F   302 to http://127.0.0.1:HTTP_PORT/plain/F
  /redirect-https/F  302 to /plain/F on the same server (a relative Location)
A missing file is 404.
"""
import http.server
import json
import os
import re
import socket
import ssl
import sys
import threading
import time

cert, key, root, log_path = sys.argv[1:5]
lock = threading.Lock()
seen = {}
CHUNK = 64 * 1024
ports = {}  # scheme -> port


def find(parts):
    """The file the path after the mode names: ROOT/<all of it>, else ROOT/<last segment>."""
    rest, name = parts[1:], parts[-1]
    if not name or any(p.startswith(".") for p in rest):
        return None
    for path in (os.path.join(root, *rest), os.path.join(root, name)):
        if os.path.isfile(path):
            return path
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, status):
        entry = {"method": self.command, "path": self.path,
                 "range": self.headers.get("Range", ""), "status": status,
                 "scheme": self.server.scheme}
        with lock:
            with open(log_path, "a") as log:
                log.write(json.dumps(entry) + "\n")

    def do_GET(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        mode, name = (parts[0], parts[-1]) if len(parts) >= 2 else ("", "")
        with lock:
            seen[self.path] = seen.get(self.path, 0) + 1
            first = seen[self.path] == 1
        path = find(parts) if name else None
        if path is None:
            self.record(404)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode in ("redirect-http", "redirect-https"):
            rest = "/".join(parts[1:])
            self.record(302)
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:%d/plain/%s" % (ports["http"], rest)
                             if mode == "redirect-http" else "/plain/" + rest)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "nolength":
            return self.send_without_length(path)
        if mode == "hold":
            open(path + ".waiting", "w").close()
            while not os.path.exists(path + ".release"):
                time.sleep(0.02)
        with open(path, "rb") as f:
            data = f.read()
        size = len(data)
        start = 0
        status = 200
        wanted = self.headers.get("Range", "")
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted)
        if match and mode != "norange":
            start = int(match.group(1))
            if start >= size:
                self.record(416)
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        body = data[start:]
        self.record(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
        self.send_header("Accept-Ranges", "none" if mode == "norange" else "bytes")
        self.end_headers()
        cut = len(body)
        if (mode == "drop-once" and first) or mode == "stall":
            cut = len(body) // 2
        for offset in range(0, cut, CHUNK):
            self.wfile.write(body[offset:min(offset + CHUNK, cut)])
        self.wfile.flush()
        if mode == "stall":
            time.sleep(60)
        if cut < len(body):
            # Drop the connection without TLS's close_notify, as a broken link would.
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)


    def send_without_length(self, path):
        with open(path, "rb") as f:
            data = f.read()
        self.record(200)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for offset in range(0, len(data), CHUNK):
                self.wfile.write(data[offset:offset + CHUNK])
            self.wfile.flush()
        except OSError:
            pass  # the client stopped reading: what the size limit tests are about


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # dropped connections are what some tests are about


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
secure = Server(("127.0.0.1", 0), Handler)
secure.socket = context.wrap_socket(secure.socket, server_side=True)
secure.scheme = "https"
plain = Server(("127.0.0.1", 0), Handler)
plain.scheme = "http"
ports["https"], ports["http"] = secure.server_address[1], plain.server_address[1]
threading.Thread(target=plain.serve_forever, daemon=True).start()
print(ports["https"], ports["http"], flush=True)
secure.serve_forever()
