#!/usr/bin/env python3
"""What the stats sampler costs the server (bench/run section 11, `stats`).

Usage: stats_bench.py URL TOKEN SERVER_PID TEMPLATE INTERVAL SPACES SECONDS

Creates SPACES started spaces of TEMPLATE (libvirt's test:///default driver, whose domains live
in the server's own process, so the figure is bowline's alone), waits until they all run, lets
the creates settle, then measures the server's CPU time (its threads' schedstat run time) over
SECONDS of otherwise idle time, and reads the sampler's own figures from /metrics (its rounds,
their CPU time on its thread, the history's memory). INTERVAL is the server's
--stats-interval, echoed into the result. Prints one JSON object.
"""
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request

url, token, pid, template, interval, spaces, seconds = sys.argv[1:8]
spaces, seconds = int(spaces), float(seconds)
CLIENTS = 4  # concurrent creates: enough to keep the server's workers busy on 2 cores


def request(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url.rstrip("/") + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as answer:
        return answer.read().decode()


def create_all():
    """SPACES creates from CLIENTS threads; returns how many were refused."""
    names = iter(range(spaces))
    lock = threading.Lock()
    refused = []

    def client():
        while True:
            with lock:
                i = next(names, None)
            if i is None:
                return
            try:
                request("POST", "/api/v1/spaces", {"template": template, "name": "s%d" % i})
            except urllib.error.HTTPError as e:
                refused.append("s%d: %d %s" % (i, e.code, e.read().decode()[:200]))

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for line in refused[:3]:
        print("stats_bench: create " + line, file=sys.stderr)
    return len(refused)


def running_count():
    return sum(1 for s in json.loads(request("GET", "/api/v1/spaces?all=1")) if s["state"] == "running")


def cpu_seconds():
    """The server's CPU time in nanoseconds' resolution: the sum of its threads' run time
    (/proc/PID/task/*/schedstat). /proc/PID/stat counts clock ticks (10 ms), and an idle server
    with 200 spaces spends tens of them a minute: too coarse for a difference. (A thread that
    ends inside the window takes its time with it; the idle server's threads stay.)"""
    total = 0
    for task in os.listdir("/proc/%s/task" % pid):
        try:
            with open("/proc/%s/task/%s/schedstat" % (pid, task)) as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return total / 1e9


def cpu_ticks_seconds():
    with open("/proc/%s/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def rss_kib():
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def metrics():
    out = {}
    for line in request("GET", "/metrics").splitlines():
        if line.startswith("bowline_stats_"):
            name, value = line.split(" ", 1)
            out[name] = float(value)
    return out


def main():
    refused = create_all() if spaces else 0
    deadline = time.time() + 600
    running = running_count()
    while running < spaces and time.time() < deadline:
        time.sleep(1)
        running = running_count()
    if running < spaces:
        print(json.dumps({"note": "not measured: %d of %d spaces running (%d creates refused)"
                                  % (running, spaces, refused)}))
        return
    # The creates' last events settle, and the sampler has its baseline round behind it.
    time.sleep(max(5.0, 1.5 * float(interval)))
    m0 = metrics()
    before, ticks_before = cpu_seconds(), cpu_ticks_seconds()
    t0 = time.time()
    time.sleep(seconds)
    elapsed = time.time() - t0
    after, ticks_after = cpu_seconds(), cpu_ticks_seconds()
    m1 = metrics()

    def delta(name):
        return m1.get(name, 0) - m0.get(name, 0)

    rounds = delta("bowline_stats_rounds_total")
    print(json.dumps({
        "interval": float(interval),
        "spaces": running,
        "seconds": elapsed,
        "cpu_s": after - before,
        "cpu_percent": 100 * (after - before) / elapsed,
        "cpu_ticks_s": ticks_after - ticks_before,
        "rounds": rounds,
        "round_cpu_ms": 1000 * delta("bowline_stats_round_cpu_seconds_total") / rounds if rounds else None,
        "round_wall_ms": 1000 * delta("bowline_stats_round_seconds_total") / rounds if rounds else None,
        "sampled_spaces": m1.get("bowline_stats_spaces", 0),
        "history_bytes": m1.get("bowline_stats_history_bytes", 0),
        "rss_kib": rss_kib(),
    }))


if __name__ == "__main__":
    main()
