#!/usr/bin/env python3
"""A stateful stand-in for a Kubernetes API server with KubeVirt, over HTTPS.

Usage: fake_apiserver.py CERT KEY LOG TOKEN

Listens on 127.0.0.1 (port chosen by the kernel), prints the port on one line and serves until
killed. Every API request is appended to LOG as one JSON line: method, path, query, the
Content-Type and Authorization headers and the body. A request without "Bearer TOKEN" gets 401.

What it keeps, as the API server and KubeVirt's controllers would:
- objects by path, each with a metadata.uid: server-side apply (PATCH,
  application/apply-patch+yaml, with a fieldManager, a body whose apiVersion, kind, name and
  namespace match the URL, else 400) creates (201) or replaces (200) one; applying over an
  object another manager made is a 409 conflict unless force=true (which takes it over); a
  merge patch (application/merge-patch+json) changes an existing one; GET reads it, DELETE
  removes it (404 when absent; 409 when a DeleteOptions body's preconditions.uid differs);
- a VirtualMachine's power: runStrategy Always, RerunOnFailure and Once run it, Halted stops
  it, Manual leaves it as it is; status.printableStatus and status.ready say which;
- the subresources PUT .../virtualmachines/NAME/{start,stop,restart} as virt-api answers them
  (start on Halted switches runStrategy to Always, 409 when already running; restart counts in
  status.restarts, 409 when not running);
- discovery: /version, /apis/kubevirt.io/v1, /apis/cdi.kubevirt.io/v1beta1, and VM lists;
- GET .../virtualmachineinstances/NAME/portforward/PORT/tcp as a WebSocket (subprotocol
  plain.kubevirt.io, binary frames) to the address a cue gave for that VM's port, while the VM
  runs (400 when it does not, as virt-api answers: "VMI is not running"); requests are served
  one at a time except these streams, which go on beside them.

Cues for tests (not logged, no token needed):
- POST /fake/refuse {"method", "contains", "status", "reason", "message"}: requests with that
  method whose path contains the text are answered with a Status of that code until cleared;
- POST /fake/status {"name", "printableStatus"}: a VM reports that status from now on;
- POST /fake/forget {"name"}: the VM vanishes (as if deleted behind bowline's back);
- POST /fake/portforward {"name", "port", "to": "HOST:PORT"}: where that VM's port leads;
- POST /fake/put {"path", "object", "manager"}: the object is there, made by that field
  manager (another tool, say), as the API server would keep it;
- POST /fake/clear: no refusals, no forced statuses.
"""
import base64
import hashlib
import http.server
import socket
import struct
import threading
import json
import re
import ssl
import sys
import ctypes
import os
import signal

# Die with the test process: a test that crashes never runs the destructor that kills this
# server, and an orphan would keep ctest's output pipe open (ctest then waits for ever).
ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() == 1:
    sys.exit(1)
import urllib.parse
import uuid

cert, key, log_path, token = sys.argv[1:5]

objects = {}  # path -> object
managers = {}  # path -> the field manager that made or last forced it
running = {}  # VM path -> bool
forced_status = {}  # VM name -> printableStatus
refusals = []
forwards = {}  # (VM name, port) -> (host, port)
serial = threading.Lock()  # requests one at a time, so the log keeps their order

VM_PATH = re.compile(r"^/apis/kubevirt\.io/v1/namespaces/([^/]+)/virtualmachines/([^/]+)$")
VM_LIST = re.compile(r"^/apis/kubevirt\.io/v1/namespaces/([^/]+)/virtualmachines$")
PORTFORWARD = re.compile(
    r"^/apis/subresources\.kubevirt\.io/v1/namespaces/([^/]+)/virtualmachineinstances/([^/]+)/"
    r"portforward/([0-9]+)/tcp$")
SUBRESOURCE = re.compile(
    r"^/apis/subresources\.kubevirt\.io/v1/namespaces/([^/]+)/virtualmachines/([^/]+)/"
    r"(start|stop|restart)$")


# The resource in a URL and the apiVersion and kind an object of it has.
RESOURCE_KIND = {
    "virtualmachines": ("kubevirt.io/v1", "VirtualMachine"),
    "datavolumes": ("cdi.kubevirt.io/v1beta1", "DataVolume"),
    "secrets": ("v1", "Secret"),
    "services": ("v1", "Service"),
}


def status_body(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
            "message": message, "code": code}


def store(path, obj, manager):
    """Keeps an object as the API server does: its uid stays while it exists."""
    old = objects.get(path)
    obj.setdefault("metadata", {})["uid"] = old["metadata"]["uid"] if old else str(uuid.uuid4())
    objects[path] = obj
    managers[path] = manager


def strategy(vm):
    return vm.get("spec", {}).get("runStrategy", "Halted")


def settle(path):
    """KubeVirt's controller: runStrategy decides whether the VM runs."""
    s = strategy(objects[path])
    if s in ("Always", "RerunOnFailure", "Once"):
        running[path] = True
    elif s == "Halted":
        running[path] = False
    else:
        running.setdefault(path, False)


def with_status(path):
    vm = dict(objects[path])
    name = vm["metadata"]["name"]
    status = dict(vm.get("status", {}))
    printable = forced_status.get(name) or ("Running" if running.get(path) else "Stopped")
    status["printableStatus"] = printable
    status["ready"] = printable == "Running"
    vm["status"] = status
    return vm


def merge(target, patch):
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        elif isinstance(v, dict) and isinstance(target.get(k), dict):
            merge(target[k], v)
        else:
            target[k] = v


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, payload):
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        if self.headers.get("Upgrade", "").lower() == "websocket":
            with serial:
                accepted = self.upgrade()
            if accepted:
                self.relay(*accepted)
            return
        with serial:
            self.dispatch()

    def upgrade(self):
        """Logs and checks a portforward upgrade; its socket and target when accepted."""
        path = urllib.parse.urlsplit(self.path).path
        with open(log_path, "a") as log:
            log.write(json.dumps({
                "method": self.command, "path": path, "query": {}, "content_type": "",
                "authorization": self.headers.get("Authorization", ""), "body": "",
                "upgrade": self.headers.get("Sec-WebSocket-Protocol", "")}) + "\n")
        if self.headers.get("Authorization", "") != "Bearer " + token:
            return self.reply(401, status_body(401, "Unauthorized", "Unauthorized"))
        m = PORTFORWARD.match(path)
        if not m:
            return self.reply(404, status_body(404, "NotFound", path))
        vm_path = "/apis/kubevirt.io/v1/namespaces/%s/virtualmachines/%s" % (m[1], m[2])
        if not running.get(vm_path):
            return self.reply(400, status_body(400, "BadRequest", "VMI is not running"))
        target = forwards.get((m[2], int(m[3])))
        if target is None:
            return self.reply(502, status_body(502, "BadGateway", "nothing listens there"))
        accept = base64.b64encode(hashlib.sha1(
            (self.headers["Sec-WebSocket-Key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()
        ).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.send_header("Sec-WebSocket-Protocol", "plain.kubevirt.io")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        return socket.create_connection(target, timeout=5), target

    def relay(self, guest, _):
        """Binary frames from the client to the guest's port and its bytes back, until either ends."""
        lock = threading.Lock()

        def send_frame(opcode, payload):
            head = bytes([0x80 | opcode])
            n = len(payload)
            head += bytes([n]) if n < 126 else (bytes([126]) + struct.pack(">H", n) if n < 65536
                                                else bytes([127]) + struct.pack(">Q", n))
            with lock:
                self.wfile.write(head + payload)
                self.wfile.flush()

        def back():
            try:
                while True:
                    data = guest.recv(65536)
                    if not data:
                        break
                    send_frame(2, data)
                send_frame(8, b"\x03\xe8")
            except OSError:
                pass

        guest.settimeout(None)
        threading.Thread(target=back, daemon=True).start()
        try:
            while True:
                head = self.rfile.read(2)
                if len(head) < 2:
                    break
                opcode, n = head[0] & 0x0F, head[1] & 0x7F
                if n == 126:
                    n = struct.unpack(">H", self.rfile.read(2))[0]
                elif n == 127:
                    n = struct.unpack(">Q", self.rfile.read(8))[0]
                mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
                if opcode == 8:
                    break
                if opcode in (0, 1, 2):
                    guest.sendall(payload)
        except OSError:
            pass
        try:
            guest.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def dispatch(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode() if length else ""
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        if path.startswith("/fake/"):
            return self.cue(path, json.loads(body) if body else {})
        with open(log_path, "a") as log:
            log.write(json.dumps({
                "method": self.command, "path": path, "query": urllib.parse.parse_qs(url.query),
                "content_type": self.headers.get("Content-Type", ""),
                "authorization": self.headers.get("Authorization", ""), "body": body}) + "\n")
        if self.headers.get("Authorization", "") != "Bearer " + token:
            return self.reply(401, status_body(401, "Unauthorized", "Unauthorized"))
        for r in refusals:
            if r["method"] == self.command and r["contains"] in path:
                return self.reply(r["status"], status_body(r["status"], r["reason"], r["message"]))
        handler = getattr(self, "api_" + self.command.lower(), None)
        if handler is None:
            return self.reply(405, status_body(405, "MethodNotAllowed", self.command))
        return handler(path, body)

    do_GET = do_PATCH = do_PUT = do_DELETE = do_POST = handle_any

    def cue(self, path, data):
        if path == "/fake/refuse":
            refusals.append(data)
        elif path == "/fake/status":
            forced_status[data["name"]] = data["printableStatus"]
        elif path == "/fake/forget":
            for p in [p for p, o in objects.items() if o["metadata"]["name"] == data["name"]
                      and o["kind"] == "VirtualMachine"]:
                del objects[p]
                managers.pop(p, None)
                running.pop(p, None)
        elif path == "/fake/portforward":
            host, port = data["to"].rsplit(":", 1)
            forwards[(data["name"], int(data["port"]))] = (host, int(port))
        elif path == "/fake/put":
            store(data["path"], data["object"], data["manager"])
        elif path == "/fake/clear":
            refusals.clear()
            forced_status.clear()
        else:
            return self.reply(404, {})
        return self.reply(200, {})

    def api_get(self, path, _):
        if path == "/version":
            return self.reply(200, {"major": "1", "minor": "30", "gitVersion": "v1.30.0-fake"})
        if path == "/apis/kubevirt.io/v1":
            return self.reply(200, {"kind": "APIResourceList", "groupVersion": "kubevirt.io/v1",
                                    "resources": [{"name": "virtualmachines", "namespaced": True,
                                                   "kind": "VirtualMachine"}]})
        if path == "/apis/cdi.kubevirt.io/v1beta1":
            return self.reply(200, {"kind": "APIResourceList",
                                    "groupVersion": "cdi.kubevirt.io/v1beta1",
                                    "resources": [{"name": "datavolumes", "namespaced": True}]})
        if VM_LIST.match(path):
            items = [with_status(p) for p in objects if p.startswith(path + "/")]
            return self.reply(200, {"kind": "VirtualMachineList", "items": items})
        if path not in objects:
            return self.reply(404, status_body(404, "NotFound", path + " not found"))
        return self.reply(200, with_status(path) if VM_PATH.match(path) else objects[path])

    def api_patch(self, path, body):
        content_type = self.headers.get("Content-Type", "")
        try:
            patch = json.loads(body)  # the apply body is YAML; bowline sends JSON, which is YAML
        except ValueError as e:
            return self.reply(400, status_body(400, "BadRequest", str(e)))
        if content_type == "application/apply-patch+yaml":
            # As the API server: an apply names its manager, and the body the object of the URL.
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            if not query.get("fieldManager"):
                return self.reply(400, status_body(
                    400, "BadRequest", "PATCH requests with apply content type must have fieldManager"))
            meta = patch.get("metadata", {}) if isinstance(patch, dict) else {}
            parts = path.split("/")
            if meta.get("name") != parts[-1] or meta.get("namespace") != parts[-3]:
                return self.reply(400, status_body(
                    400, "BadRequest", "the name or namespace of the object does not match the URL"))
            if RESOURCE_KIND.get(parts[-2]) != (patch.get("apiVersion"), patch.get("kind")):
                return self.reply(400, status_body(
                    400, "BadRequest", "the object's apiVersion and kind do not match the URL"))
            created = path not in objects
            manager = query["fieldManager"][0]
            if not created and managers[path] != manager and query.get("force") != ["true"]:
                return self.reply(409, status_body(
                    409, "Conflict", 'Apply failed with 1 conflict: conflict with "%s"'
                    % managers[path]))
            store(path, patch, manager)
            code = 201 if created else 200
        elif content_type == "application/merge-patch+json":
            if path not in objects:
                return self.reply(404, status_body(404, "NotFound", path + " not found"))
            merge(objects[path], patch)
            code = 200
        else:
            return self.reply(415, status_body(415, "UnsupportedMediaType", content_type))
        if VM_PATH.match(path):
            settle(path)
            return self.reply(code, with_status(path))
        return self.reply(code, objects[path])

    def api_put(self, path, _):
        m = SUBRESOURCE.match(path)
        if not m:
            return self.reply(404, status_body(404, "NotFound", path))
        vm_path = "/apis/kubevirt.io/v1/namespaces/%s/virtualmachines/%s" % (m[1], m[2])
        if vm_path not in objects:
            return self.reply(404, status_body(404, "NotFound", "virtualmachine " + m[2]))
        vm, verb, on = objects[vm_path], m[3], running.get(vm_path, False)
        if verb == "start":
            if on:
                return self.reply(409, status_body(409, "Conflict", "VM is already running"))
            if strategy(vm) == "Halted":
                vm["spec"]["runStrategy"] = "Always"
            running[vm_path] = True
        elif verb == "stop":
            if not on:
                return self.reply(409, status_body(409, "Conflict", "VM is not running"))
            if strategy(vm) in ("Always", "RerunOnFailure"):
                vm["spec"]["runStrategy"] = "Halted"
            running[vm_path] = False
        else:
            if not on:
                return self.reply(409, status_body(409, "Conflict", "VM is not running"))
            vm.setdefault("status", {})["restarts"] = vm.get("status", {}).get("restarts", 0) + 1
        return self.reply(202, {})

    def api_delete(self, path, body):
        if path not in objects:
            return self.reply(404, status_body(404, "NotFound", path + " not found"))
        wanted = (json.loads(body) if body else {}).get("preconditions", {}).get("uid")
        if wanted is not None and wanted != objects[path]["metadata"]["uid"]:
            return self.reply(409, status_body(409, "Conflict", "Precondition failed: UID in "
                                               "precondition: %s, UID in object meta: %s"
                                               % (wanted, objects[path]["metadata"]["uid"])))
        del objects[path]
        managers.pop(path, None)
        running.pop(path, None)
        return self.reply(200, {"kind": "Status", "status": "Success"})


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
