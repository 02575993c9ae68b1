#!/usr/bin/env python3
"""A raw HTTPS client for preview hosts (e2e.preview): what curl cannot show.

  preview_client.py CA HOST PORT PASS stream PATH
      GET PATH; prints the seconds between the answer's first line of body and its last
      (a relay that buffered the answer would print ~0).
  preview_client.py CA HOST PORT PASS upgrade
      an Upgrade request to an echo service (busybox nc -e cat), then raw bytes: prints what
      came back (the request as the guest got it, then the raw bytes).
  preview_client.py CA HOST PORT PASS twice
      two requests on one connection to the echo service, the second with a body: prints what
      came back (both requests as the guest got them).
  preview_client.py CA HOST PORT PASS hold
      GET PATH and waits; prints "closed after S" once the server ends the connection (an
      unshare), or "open" after 20 s.

The TLS connection goes to 127.0.0.1:PORT with SNI HOST and verifies against CA (a bundle):
the server must have picked the preview certificate by name. PASS is the preview cookie's
value ("-": none).
"""
import socket
import ssl
import sys
import time


def connect(ca, host, port):
    context = ssl.create_default_context(cafile=ca)
    raw = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
    return context.wrap_socket(raw, server_hostname=host)


def request(host, port, path, cookie, extra=""):
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "X-Forwarded-For: 6.6.6.6"]
    if cookie != "-":
        lines.append(f"Cookie: app=1; __Host-bowline_preview={cookie}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def read_until(s, marker):
    """What arrives until `marker` has, the end of the stream or 10 s of silence."""
    s.settimeout(10)
    data = b""
    try:
        while marker not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    return data.decode(errors="replace")


def main():
    ca, host, port, cookie, mode = sys.argv[1:6]
    s = connect(ca, host, port)
    if mode == "stream":
        s.sendall(request(host, port, sys.argv[6], cookie, "Connection: close\r\n"))
        first = last = None
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            now = time.monotonic()
            if b"first" in data and first is None:
                first = now
            if b"second" in data:
                last = now
                break
        print(f"{(last or 0) - (first or 0):.1f}" if first and last else "incomplete: " + data.decode(errors="replace"))
    elif mode == "upgrade":
        s.sendall(request(host, port, "/ws", cookie, "Upgrade: websocket\r\nConnection: Upgrade\r\n"))
        s.sendall(b"RAW-BYTES-AFTER-UPGRADE\n")
        sys.stdout.write(read_until(s, b"RAW-BYTES-AFTER-UPGRADE"))
    elif mode == "twice":
        # Two requests on one connection to the echo service: both come back as the guest
        # got them (the second with its body).
        s.sendall(request(host, port, "/one", cookie))
        s.sendall(request(host, port, "/two", cookie, "Content-Length: 11\r\n") + b"BODY-OF-TWO")
        sys.stdout.write(read_until(s, b"BODY-OF-TWO"))
    elif mode == "hold":
        s.sendall(request(host, port, "/ws", cookie, "Upgrade: websocket\r\nConnection: Upgrade\r\n"))
        s.settimeout(1)
        print("open", flush=True)
        start = time.monotonic()
        closed = None
        while time.monotonic() - start < 30 and closed is None:
            try:
                if not s.recv(65536):
                    closed = time.time()
            except socket.timeout:
                pass
            except (ConnectionError, ssl.SSLError):
                closed = time.time()
        print(f"closed at {closed:.3f}" if closed else "still open", flush=True)


if __name__ == "__main__":
    main()
