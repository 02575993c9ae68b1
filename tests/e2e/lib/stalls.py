#!/usr/bin/env python3
"""Clients that try to stall bowline's HTTP server, for the end-to-end tests (stdlib only).

  stalls.py keys DB NAME...                  for each space: "NAME IP FILE" with its host key
                                             written to FILE (beside DB), 0600
  stalls.py terminals SERVER TOKEN ID...     opens a browser terminal into each space, types
                                             320 KiB into each (far more than a stalled shell's
                                             window), prints "stalled N"; on a line "close" on
                                             stdin closes them all and prints "closed"
  stalls.py flood HOST PORT COUNT SECONDS    keeps COUNT connections open that never finish
                                             their header, from 127.0.0.2 to 127.0.0.9, opening a
                                             new one for each the server closes; prints
                                             "opened N closed-by-server M" at the end
"""
import base64
import os
import resource
import selectors
import socket
import sqlite3
import struct
import sys
import time
import urllib.parse


def keys(db, names):
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    for name in names:
        row = conn.execute("SELECT ip, host_key FROM spaces WHERE name = ?", (name,)).fetchone()
        path = os.path.join(os.path.dirname(db), f"hostkey-{name}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(row[1])
        print(name, row[0], path)


def frame(payload, opcode=2):
    """One masked client frame."""
    mask = os.urandom(4)
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def terminal(server, token, space):
    url = urllib.parse.urlparse(server)
    sock = socket.create_connection((url.hostname, url.port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /api/v1/spaces/{space}/terminal?cols=80&rows=24 HTTP/1.1\r\n"
                  f"Host: {url.hostname}:{url.port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  f"Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        more = sock.recv(4096)
        if not more:
            raise RuntimeError(f"terminal {space}: the server closed the handshake")
        head += more
    status = head.split(b"\r\n", 1)[0].decode()
    if " 101 " not in status + " ":
        raise RuntimeError(f"terminal {space}: {status}: {head.decode(errors='replace')}")
    typed = b"\x00" + b"y" * (16 * 1024)
    sock.settimeout(10)
    for _ in range(20):
        sock.sendall(frame(typed))
    return sock


def terminals(server, token, spaces):
    socks = [terminal(server, token, s) for s in spaces]
    time.sleep(1)  # the pumps have filled the guests' windows by now
    print(f"stalled {len(socks)}", flush=True)
    for line in sys.stdin:
        if line.strip() == "close":
            break
    for s in socks:
        s.close()  # no close frame: the client just goes, as a closed tab's does
    print("closed", flush=True)


def flood(host, port, count, seconds):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    opened = closed = 0
    n = 0

    def open_one():
        nonlocal opened, n
        n += 1
        s = socket.socket()
        s.bind((f"127.0.0.{2 + n % 8}", 0))
        s.setblocking(False)
        try:
            s.connect((host, port))
        except BlockingIOError:
            pass
        sel.register(s, selectors.EVENT_WRITE, "connecting")
        opened += 1

    for _ in range(count):
        open_one()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            if key.data == "connecting":
                try:
                    s.send(b"GET / HTTP/1.1\r\nHost: x\r\nX-Never: ")  # never the end
                    sel.modify(s, selectors.EVENT_READ, "open")
                    continue
                except OSError:
                    pass
            else:
                try:
                    if s.recv(4096):
                        continue
                except OSError:
                    pass
            sel.unregister(s)
            s.close()
            closed += 1
            open_one()
    print(f"opened {opened} closed-by-server {closed}", flush=True)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "keys":
        keys(sys.argv[2], sys.argv[3:])
    elif cmd == "terminals":
        terminals(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == "flood":
        flood(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        sys.exit(f"unknown command {cmd}")
