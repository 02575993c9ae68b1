#!/usr/bin/env python3
"""A stand-in Kubernetes API server for the HTTPS tests.

Usage: https_server.py CERT KEY LOG [CLIENT_CA]

Listens on 127.0.0.1, port chosen by the kernel, prints the port on one line, then serves
until killed. Each request is appended to LOG as one JSON line: method, path, query, the
Content-Type, Authorization and Accept headers, the body and the client certificate's CN
(with CLIENT_CA given, a client certificate is asked for and checked against it).

Answers like the API server: PATCH -> 201 the first time a path is applied, 200 after,
echoing the body and keeping it (with a metadata.uid); GET -> what was applied there, else
404; DELETE -> 200 for what was applied (forgetting it), else 404; a name ending in
"-invalid" -> 422 with a Status body to PATCH and DELETE.
"""
import http.server
import json
import ssl
import sys
import urllib.parse

cert, key, log_path = sys.argv[1:4]
client_ca = sys.argv[4] if len(sys.argv) > 4 else None
applied = {}  # path -> the object, as applied


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body):
        url = urllib.parse.urlsplit(self.path)
        peer = self.connection.getpeercert() or {}
        cn = ""
        for rdn in peer.get("subject", ()):
            for name, value in rdn:
                if name == "commonName":
                    cn = value
        entry = {
            "method": self.command,
            "path": url.path,
            "query": urllib.parse.parse_qs(url.query),
            "content_type": self.headers.get("Content-Type", ""),
            "authorization": self.headers.get("Authorization", ""),
            "accept": self.headers.get("Accept", ""),
            "body": body,
            "client_cn": cn,
        }
        with open(log_path, "a") as log:
            log.write(json.dumps(entry) + "\n")
        return url.path

    def reply(self, status, payload):
        data = payload.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(length).decode() if length else ""

    def refused(self, path):
        if path.endswith("-invalid"):
            self.reply(422, json.dumps({"kind": "Status", "status": "Failure", "reason": "Invalid",
                                        "message": "the object is invalid", "code": 422}))
            return True
        return False

    def do_PATCH(self):
        body = self.body()
        path = self.record(body)
        if self.refused(path):
            return
        status = 200 if path in applied else 201
        obj = json.loads(body)
        obj["metadata"]["uid"] = applied[path]["metadata"]["uid"] if path in applied \
            else "uid-%d" % (len(applied) + 1)
        applied[path] = obj
        self.reply(status, body)

    def not_found(self):
        self.reply(404, json.dumps({"kind": "Status", "reason": "NotFound", "code": 404}))

    def do_GET(self):
        path = self.record(self.body())
        if path in applied:
            self.reply(200, json.dumps(applied[path]))
        else:
            self.not_found()

    def do_DELETE(self):
        path = self.record(self.body())
        if self.refused(path):
            return
        if path in applied:
            del applied[path]
            self.reply(200, json.dumps({"kind": "Status", "status": "Success"}))
        else:
            self.not_found()


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
if client_ca:
    context.verify_mode = ssl.CERT_OPTIONAL
    context.load_verify_locations(client_ca)
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
