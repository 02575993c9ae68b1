#!/usr/bin/env python3
"""Prints the kinds of the events the server's store holds (GET /api/v1/events?since=0).

Usage: events.py SERVER_URL TOKEN
The stream stays open for live events: it is read until it has been quiet for 2 seconds.
"""
import json
import socket
import sys
import urllib.request


def main():
    server, token = sys.argv[1:3]
    request = urllib.request.Request(server.rstrip("/") + "/api/v1/events?since=0",
                                     headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=2) as stream:
        try:
            for raw in stream:
                line = raw.decode().rstrip("\n")
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    print(event.get("kind"), json.dumps(event.get("payload")))
        except (socket.timeout, TimeoutError):
            pass


if __name__ == "__main__":
    main()
