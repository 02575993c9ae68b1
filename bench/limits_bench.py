#!/usr/bin/env python3
"""What a hostile client's weight does to a real `bowline server` (bench/run section 10).

Usage: limits_bench.py URL TOKEN SPACE_ID SERVER_PID [IDLE] [FLOOD_MB]

1. Idle connections: a normal client's GET /api/v1/whoami latency (keep-alive, p50/p99 of 300
   requests) before, while IDLE (default 2000) connections are held open without a byte sent,
   and after they are closed. (The header timeout cuts idle connections at 10 s, so they are
   measured inside that window.)
2. A console flood: FLOOD_MB (default 1024) MiB typed at the space's console WebSocket, whose
   guest reads nothing (libvirt's test driver has no console): the server drops the viewer once
   its input limit is reached, the client connects again and goes on. The server's RSS before,
   at its peak and after says whether the flood grew it.
Prints one JSON object.
"""
import base64
import json
import os
import resource
import socket
import statistics
import sys
import time
import urllib.parse

url, token, space_id, server_pid = sys.argv[1:5]
idle_count = int(sys.argv[5]) if len(sys.argv) > 5 else 2000
flood_mb = int(sys.argv[6]) if len(sys.argv) > 6 else 1024
u = urllib.parse.urlsplit(url)
host, port = u.hostname, u.port


def rss_kib():
    with open("/proc/%s/status" % server_pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def latencies(n=300):
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    request = ("GET /api/v1/whoami HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n\r\n"
               % (host, port, token)).encode()
    out, buffer = [], b""
    for _ in range(n):
        t0 = time.perf_counter()
        s.sendall(request)
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end >= 0:
                head = buffer[:end].decode()
                length = int([h.split(":")[1] for h in head.split("\r\n")
                              if h.lower().startswith("content-length")][0])
                if len(buffer) >= end + 4 + length:
                    if not head.startswith("HTTP/1.1 200"):
                        raise RuntimeError("whoami answered " + head.split("\r\n")[0])
                    buffer = buffer[end + 4 + length:]
                    break
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("the server closed the normal client's connection")
            buffer += chunk
        out.append((time.perf_counter() - t0) * 1000)
    s.close()
    q = statistics.quantiles(out, n=100)
    return {"p50_ms": round(q[49], 3), "p99_ms": round(q[98], 3)}


def idle_connections():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, idle_count + 256)), hard))
    before = latencies()
    held = []
    for _ in range(idle_count):
        held.append(socket.create_connection((host, port)))
    t_opened = time.time()
    during = latencies()
    within = time.time() - t_opened
    alive = sum(1 for s in held if not _closed(s))
    for s in held:
        s.close()
    time.sleep(0.5)
    after = latencies()
    return {"idle": idle_count, "held_open_while_measured": alive,
            "seconds_measured_after_opening": round(within, 2),
            "before": before, "during": during, "after": after}


def _closed(s):
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    finally:
        s.setblocking(True)


def ws_connect(path):
    s = socket.create_connection((host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "Authorization: Bearer %s\r\n\r\n" % (path, host, port, key, token)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            raise RuntimeError("no answer to the console's upgrade")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError("the console answered " + head.split(b"\r\n")[0].decode())
    return s


def console_flood():
    chunk = 64 * 1024
    # A zero mask leaves the payload as it is (RFC 6455 allows any mask key): no XOR in Python.
    frame = bytes([0x82, 0x80 | 127]) + chunk.to_bytes(8, "big") + b"\0\0\0\0" + b"k" * chunk
    total, sent, drops, peak = flood_mb * 1024 * 1024, 0, 0, 0
    before = rss_kib()
    path = "/api/v1/spaces/%s/console" % space_id
    t0 = time.time()
    while sent < total and time.time() - t0 < 600:
        s = ws_connect(path)
        try:
            while sent < total:
                s.sendall(frame)
                sent += chunk
                if sent % (16 * 1024 * 1024) == 0:
                    peak = max(peak, rss_kib())
        except (BrokenPipeError, ConnectionResetError):
            drops += 1  # the server dropped this viewer: its input limit was reached
        finally:
            s.close()
        peak = max(peak, rss_kib())
    time.sleep(1)
    return {"flooded_mb": sent // (1024 * 1024), "viewers_dropped": drops,
            "rss_before_mib": round(before / 1024, 1), "rss_peak_mib": round(peak / 1024, 1),
            "rss_after_mib": round(rss_kib() / 1024, 1),
            "seconds": round(time.time() - t0, 1)}


print(json.dumps({"idle_connections": idle_connections(), "console_flood": console_flood()}))
