#!/usr/bin/env python3
"""WebSocket checks of a space's console and display for the end-to-end tests (stdlib only).

  ws_access.py status  SERVER TOKEN PATH [ORIGIN]   prints the handshake's HTTP status
  ws_access.py console SERVER TOKEN SPACE_ID TAG    two viewers see the console and each
                                                    other's typing; a late joiner gets scrollback
  ws_access.py vnc     SERVER TOKEN SPACE_ID        RFB 3.8 handshake with security None, a full
                                                    FramebufferUpdate whose pixels are not uniform
  ws_access.py viewer  SERVER OWNER_TOKEN VIEWER_TOKEN SPACE_ID TAG
                                                    a viewer's typing never reaches the console;
                                                    the owner's typing and output reach the viewer
  ws_access.py hold    SERVER TOKEN PATH            prints the handshake's status, then waits for
                                                    the server to close the socket, and says so
Each check prints "ok: ..." or "FAIL: ..." lines; the exit status is 1 when one failed.
"""
import base64
import os
import socket
import struct
import sys
import time
import urllib.parse


class Ws:
    def __init__(self, server, token, path, origin=None):
        url = urllib.parse.urlparse(server)
        self.sock = socket.create_connection((url.hostname, url.port or 80), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        head = (f"GET {path} HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n")
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        if origin:
            head += f"Origin: {origin}\r\n"
        self.sock.sendall((head + "\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            more = self.sock.recv(65536)
            if not more:
                break
            self.buf += more
        end = self.buf.find(b"\r\n\r\n")
        self.head = self.buf[:end].decode(errors="replace")
        self.buf = self.buf[end + 4:]
        self.status = int(self.head.split(" ", 2)[1])
        self.closed = False

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            header = struct.pack("!BB", 0x82, 0x80 | n)
        elif n < 65536:
            header = struct.pack("!BBH", 0x82, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x82, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(header + mask + masked)

    def _frame(self):
        if len(self.buf) < 2:
            return None
        op = self.buf[0] & 0x0F
        n = self.buf[1] & 0x7F
        at = 2
        if n == 126:
            if len(self.buf) < 4:
                return None
            n = struct.unpack("!H", self.buf[2:4])[0]
            at = 4
        elif n == 127:
            if len(self.buf) < 10:
                return None
            n = struct.unpack("!Q", self.buf[2:10])[0]
            at = 10
        if len(self.buf) < at + n:
            return None
        payload = self.buf[at:at + n]
        self.buf = self.buf[at + n:]
        return op, payload

    def recv(self, timeout):
        """The next data frame's payload; None on timeout or close."""
        deadline = time.time() + timeout
        while True:
            frame = self._frame()
            if frame:
                op, payload = frame
                if op == 8:
                    self.closed = True
                    return None
                if op == 9:  # ping: answer as a browser would
                    mask = os.urandom(4)
                    self.sock.sendall(struct.pack("!BB", 0x8A, 0x80 | len(payload)) + mask +
                                      bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                    continue
                if op in (1, 2, 0):
                    return payload
                continue
            left = deadline - time.time()
            if left <= 0 or self.closed:
                return None
            self.sock.settimeout(left)
            try:
                more = self.sock.recv(262144)
            except socket.timeout:
                return None
            if not more:
                self.closed = True
                return None
            self.buf += more

    def read_exactly(self, n, timeout=30):
        """RFB over frames: n bytes, however the frames split them."""
        deadline = time.time() + timeout
        while len(getattr(self, "stream", b"")) < n:
            got = self.recv(max(0.1, deadline - time.time()))
            if got is None:
                raise RuntimeError(f"display: wanted {n} bytes, the stream ended or stalled")
            self.stream = getattr(self, "stream", b"") + got
        out, self.stream = self.stream[:n], self.stream[n:]
        return out

    def until(self, needle, timeout):
        seen = b""
        deadline = time.time() + timeout
        while needle not in seen:
            left = deadline - time.time()
            if left <= 0:
                break
            got = self.recv(left)
            if got is None:
                if self.closed:
                    break
                continue
            seen += got
        return seen

    def close(self):
        try:
            self.sock.sendall(struct.pack("!BB", 0x88, 0x80) + os.urandom(4))
        except OSError:
            pass
        self.sock.close()


failed = 0


def check(ok, what, detail=""):
    global failed
    if ok:
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}" + (f"\n    {detail}" if detail else ""))


def tail(data):
    return repr(data[-300:])


def console(server, token, space, tag):
    path = f"/api/v1/spaces/{space}/console"
    a = Ws(server, token, path)
    b = Ws(server, token, path)
    check(a.status == 101 and b.status == 101, "two console viewers connected",
          f"{a.status} {b.status}")
    # A new line makes getty print its prompt again, whatever it printed before we came.
    a.send("\r")
    sa = a.until(b"login:", 120)
    sb = b.until(b"login:", 60)
    check(b"login:" in sa, "viewer 1 sees the login prompt", tail(sa))
    check(b"login:" in sb, "viewer 2 sees the login prompt", tail(sb))
    a.send("root\r")
    time.sleep(0)  # the tiny guest logs root in without a password
    sa = a.until(b"#", 60)
    b.until(b"#", 30)
    marker = f"typed-{tag}".encode()
    # Split the command so the output (joined) differs from the echo of the keystrokes.
    b.send(f"echo typed-''{tag}\r")
    sa = a.until(marker + b"\r\n", 60)
    sb = b.until(marker + b"\r\n", 30)
    check(marker in sa, "what viewer 2 typed ran, and viewer 1 sees its output", tail(sa))
    check(marker in sb, "viewer 2 sees the output of its own typing", tail(sb))
    late = Ws(server, token, path)
    first = late.recv(30) or b""
    check(late.status == 101 and marker in first,
          "a late joiner first gets the scrollback with earlier output", tail(first))
    a.send(f"echo again-''{tag}\r")
    sl = late.until(f"again-{tag}".encode(), 60)
    check(f"again-{tag}".encode() in sl, "the late joiner sees new output live", tail(sl))
    for ws in (a, b, late):
        ws.close()


def viewer(server, owner_token, viewer_token, space, tag):
    path = f"/api/v1/spaces/{space}/console"
    owner = Ws(server, owner_token, path)
    seer = Ws(server, viewer_token, path)
    check(owner.status == 101 and seer.status == 101, "the owner and a viewer opened the console",
          f"{owner.status} {seer.status}")
    owner.send("\r")
    seen = owner.until(b"login:", 120)
    if b"login:" in seen:  # the tiny guest logs root in without a password
        owner.send("root\r")
    owner.until(b"#", 60)
    # Split words, so only the command's output (not the echo of keys) joins them.
    seer.send(f"echo view''er-{tag}\r")
    leaked = owner.until(f"viewer-{tag}".encode(), 5)
    check(f"viewer-{tag}".encode() not in leaked, "what the viewer typed did not reach the guest",
          tail(leaked))
    owner.send(f"echo own''er-{tag}\r")
    seen = seer.until(f"owner-{tag}".encode() + b"\r\n", 60)
    check(f"owner-{tag}".encode() + b"\r\n" in seen, "the viewer sees the owner's typing and output",
          tail(seen))
    owner.close()
    seer.close()


def hold(server, token, path):
    ws = Ws(server, token, path)
    print(ws.status, flush=True)
    if ws.status != 101:
        return
    while not ws.closed:
        ws.recv(3600)
    print("closed", flush=True)


def vnc(server, token, space):
    ws = Ws(server, token, f"/api/v1/spaces/{space}/vnc")
    check(ws.status == 101, "display WebSocket upgraded", ws.head)
    if ws.status != 101:
        return
    banner = ws.read_exactly(12)
    check(banner == b"RFB 003.008\n", "RFB banner 003.008", repr(banner))
    ws.send(b"RFB 003.008\n")
    count = ws.read_exactly(1)[0]
    types = list(ws.read_exactly(count)) if count else []
    check(1 in types, "security type None offered (no VNC password: SKIPAUTH)", str(types))
    ws.send(bytes([1]))
    result = struct.unpack("!I", ws.read_exactly(4))[0]
    check(result == 0, "security handshake succeeded", str(result))
    ws.send(bytes([1]))  # ClientInit: shared
    width, height = struct.unpack("!HH", ws.read_exactly(4))
    pixel_format = ws.read_exactly(16)
    name_length = struct.unpack("!I", ws.read_exactly(4))[0]
    name = ws.read_exactly(name_length)
    bpp = pixel_format[0]
    check(width > 0 and height > 0 and bpp in (8, 16, 32),
          f"ServerInit: {width}x{height}, {bpp} bits a pixel, name {name.decode(errors='replace')}")
    # No SetEncodings: the server must answer in Raw. Ask for the whole screen.
    ws.send(struct.pack("!BBHHHH", 3, 0, 0, 0, width, height))
    kind = ws.read_exactly(1)[0]
    while kind != 0:  # skip anything else (e.g. a bell) until the update
        if kind == 2:
            kind = ws.read_exactly(1)[0]
            continue
        raise RuntimeError(f"unexpected server message {kind}")
    ws.read_exactly(1)
    rects = struct.unpack("!H", ws.read_exactly(2))[0]
    pixels = set()
    total = 0
    for _ in range(rects):
        x, y, w, h, encoding = struct.unpack("!HHHHi", ws.read_exactly(12))
        if encoding != 0:
            raise RuntimeError(f"rectangle in encoding {encoding}, not Raw")
        data = ws.read_exactly(w * h * bpp // 8, timeout=120)
        total += w * h
        step = bpp // 8
        for i in range(0, len(data), step * 7):
            pixels.add(data[i:i + step])
    check(rects > 0 and total > 0, f"FramebufferUpdate: {rects} rectangles, {total} pixels")
    check(len(pixels) > 1, f"the screen is not uniform ({len(pixels)} distinct pixel values)")
    ws.close()


def main():
    what = sys.argv[1]
    if what == "status":
        origin = sys.argv[5] if len(sys.argv) > 5 else None
        ws = Ws(sys.argv[2], sys.argv[3], sys.argv[4], origin)
        print(ws.status)
        ws.close()
        return 0
    try:
        if what == "console":
            console(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
        elif what == "viewer":
            viewer(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6])
        elif what == "hold":
            hold(sys.argv[2], sys.argv[3], sys.argv[4])
        elif what == "vnc":
            vnc(sys.argv[2], sys.argv[3], sys.argv[4])
        else:
            print(__doc__)
            return 2
    except Exception as e:  # a check that could not finish is a failure too
        check(False, f"{what} check ended early", str(e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
