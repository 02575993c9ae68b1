#!/usr/bin/env python3
"""Where a domain start's time goes, for bench/run's floor (raw libvirt define + start).

  start_anatomy.py phases LOG     libvirtd's debug log (filter 1:qemu.qemu_process) of some
                                  starts: per start, its length and the two phases that take
                                  most of it, as one JSON line
  start_anatomy.py qom-gets       QEMU alone (no libvirt): start qemu-system-x86_64 paused, ask
                                  its QMP monitor for every boolean property of the vCPU, one
                                  qom-get each, as libvirt's check of the guest CPU does; the
                                  count and time as one JSON line

The phases are read from libvirt's own debug messages, so they name libvirt's steps, not ours:
  monitor    "Waiting for monitor to show up" -> "setting up hotpluggable cpus": QEMU starting
             until its monitor has answered libvirt's first queries
  cpu_check  "Verifying and updating provided guest CPU" -> "Detecting IOThread PIDs": libvirt
             reading the guest CPU's features back from QEMU (x86, every start)
"""
import datetime
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

MARKS = {
    "qemuProcessStart:": "start",
    "Waiting for monitor to show up": "monitor_begin",
    "setting up hotpluggable cpus": "monitor_end",
    "Verifying and updating provided guest CPU": "cpu_begin",
    "Detecting IOThread PIDs": "cpu_end",
}


def stamp(line):
    """The line's time, or None for a line without libvirt's timestamp (a continuation)."""
    try:
        return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f")
    except ValueError:
        return None


def phases(path):
    starts, current = [], None
    for line in open(path, errors="replace"):
        if stamp(line) is None:
            continue
        if "Transitioned guest" in line and "into running state" in line and current:
            current["running"] = stamp(line)
            starts.append(current)
            current = None
            continue
        for text, mark in MARKS.items():
            if text in line:
                if mark == "start":
                    current = {}
                if current is not None:
                    current[mark] = stamp(line)
    out = []
    for s in starts:
        if not all(k in s for k in ("start", "monitor_begin", "monitor_end", "cpu_begin", "cpu_end", "running")):
            continue

        def ms(a, b):
            return (s[b] - s[a]).total_seconds() * 1000

        out.append({"total_ms": ms("start", "running"), "monitor_ms": ms("monitor_begin", "monitor_end"),
                    "cpu_check_ms": ms("cpu_begin", "cpu_end")})
    print(json.dumps({"starts": out}))


def qom_gets():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "qmp.sock")
        qemu = subprocess.Popen(["qemu-system-x86_64", "-machine", "q35,accel=tcg", "-cpu", "qemu64",
                                 "-m", "256", "-S", "-nodefaults", "-display", "none",
                                 "-qmp", "unix:%s,server=on,wait=off" % path],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(500):
                if os.path.exists(path):
                    break
                time.sleep(0.01)
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(path)
            stream = sock.makefile("rw")

            def command(name, **arguments):
                stream.write(json.dumps({"execute": name, "arguments": arguments}) + "\n")
                stream.flush()
                while True:
                    reply = json.loads(stream.readline())
                    if "return" in reply:
                        return reply["return"]
                    if "error" in reply:
                        raise RuntimeError("%s: %s" % (name, reply["error"]))

            stream.readline()  # the greeting
            command("qmp_capabilities")
            vcpu = "/machine/unattached/device[0]"
            names = [p["name"] for p in command("qom-list", path=vcpu) if p["type"] == "bool"]
            t0 = time.monotonic()
            for name in names:
                command("qom-get", path=vcpu, property=name)
            elapsed = (time.monotonic() - t0) * 1000
            command("quit")
        except BaseException:
            qemu.kill()
            raise
        finally:
            try:
                qemu.wait(timeout=10)
            except subprocess.TimeoutExpired:
                qemu.kill()
                qemu.wait()
    print(json.dumps({"qom_gets": len(names), "ms": elapsed}))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "phases":
        phases(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "qom-gets":
        qom_gets()
    else:
        sys.exit(__doc__)
