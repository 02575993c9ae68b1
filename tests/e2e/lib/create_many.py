#!/usr/bin/env python3
"""POST /api/v1/spaces N times at once (a barrier releases every thread together).

Usage: create_many.py SERVER_URL TOKEN TEMPLATE N NAME [same]
Space names are NAME000, NAME001, ...; with "same", every request asks for NAME itself.
Prints one JSON line per request: {"status", "name", "ip", "error"}; status 0 means no HTTP answer.
"""
import json
import sys
import threading
import urllib.error
import urllib.request


def main():
    server, token, template, count, prefix = sys.argv[1:6]
    same = sys.argv[6:7] == ["same"]
    count = int(count)
    barrier = threading.Barrier(count)
    results = [None] * count

    def one(i):
        name = prefix if same else f"{prefix}{i:03d}"
        request = urllib.request.Request(
            server.rstrip("/") + "/api/v1/spaces",
            data=json.dumps({"template": template, "name": name}).encode(),
            method="POST",
            headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
        )
        barrier.wait()
        try:
            with urllib.request.urlopen(request, timeout=300) as answer:
                status, body = answer.status, json.load(answer)
        except urllib.error.HTTPError as e:
            status, body = e.code, json.loads(e.read() or b"{}")
        except Exception as e:  # no answer at all: reported, never hidden
            status, body = 0, {"error": repr(e)}
        space = body.get("space") or {}
        results[i] = {"status": status, "name": name, "ip": space.get("ip"),
                      "error": body.get("error")}

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
