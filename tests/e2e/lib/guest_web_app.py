#!/usr/bin/env python3
"""A web app for the real Debian guest (e2e.debian_guest), Python's standard library only:
the files of a directory, /headers (the request's headers as the app got them, as JSON) and
/ws (a WebSocket echo). What a preview URL must carry: pages, headers, an Upgrade.

Usage: guest_web_app.py PORT DIRECTORY
"""
import base64
import functools
import hashlib
import json
import struct
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455's


class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real app server

    def do_GET(self):
        if self.path == "/headers":
            body = json.dumps(dict(self.headers.items())).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
            self.close_connection = True
            self.echo()
            return
        super().do_GET()

    def frame(self, opcode, data):
        head = bytes([0x80 | opcode])
        if len(data) < 126:
            head += bytes([len(data)])
        elif len(data) < 65536:
            head += bytes([126]) + struct.pack("!H", len(data))
        else:
            head += bytes([127]) + struct.pack("!Q", len(data))
        self.wfile.write(head + data)
        self.wfile.flush()

    def echo(self):
        key = self.headers["Sec-WebSocket-Key"] + GUID
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept",
                         base64.b64encode(hashlib.sha1(key.encode()).digest()).decode())
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            opcode, size = head[0] & 0x0F, head[1] & 0x7F
            if size == 126:
                size = struct.unpack("!H", self.rfile.read(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(size)))
            if opcode == 8:  # close
                self.frame(8, b"")
                return
            if opcode == 9:  # ping
                self.frame(10, data)
            elif opcode in (1, 2):
                self.frame(opcode, data)


def main():
    port, directory = int(sys.argv[1]), sys.argv[2]
    handler = functools.partial(Handler, directory=directory)
    ThreadingHTTPServer(("", port), handler).serve_forever()


if __name__ == "__main__":
    main()
