#!/usr/bin/env python3
"""The crash campaign: a real `bowline server` on qemu:///system is killed with SIGKILL at a
random moment inside an operation, started again and left to settle; then every invariant below
is checked against the API, libvirt (virsh), the images path and nftables.

Operations: create, start, stop, restart, delete, set-ip, snapshot, restore, clone, suspend,
resume, disk create, disk delete, export, import. Each kill point picks an operation its spaces
allow, starts it, waits a random delay (up to the operation's usual length) and kills the server.

Invariants (each kill point checks all):
  ops-ended      every operation the campaign started ended: succeeded, or failed with a reason
  settled        no space stays in a passing state (pending, creating, starting, ...)
  state=domain   each space's state matches its libvirt domain (running: running; stopped:
                 shut off; suspended: shut off with a managed save; error: any)
  no-orphan-dom  libvirt's domains of the run are exactly the spaces' domains
  no-orphan-dir  the images path's space directories are exactly the spaces' domains
  no-staging     no half-made file: *.part, *.tmp, volumes/staging/*
  disks=files    the disk objects' files are exactly the API's disks
  snapshots      each space's snapshots in the API are its domain's in libvirt
  addresses      no address is held by two spaces
  guard          the guest guard's nftables chains are exactly the spaces' NICs
  quota          the owner's usage (spaces, cpus, memory) equals what the spaces are

The seed is printed; `--seed N` replays the same choices (the server's timing may differ).
Exit status 1 when an invariant failed.
"""
import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

PASSING = {"pending", "creating", "starting", "stopping", "deleting", "suspending"}
MAX_SPACES = 3
INVARIANTS = ["ops-ended", "settled", "state=domain", "no-orphan-dom", "no-orphan-dir",
              "no-staging", "disks=files", "snapshots", "addresses", "guard", "quota"]


def sh(*cmd, check=False):
    # A bounded wait: a libvirtd stuck on a domain's job must fail the check, not hang the run.
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        if check:
            raise RuntimeError(f"{cmd}: no answer in 120 s")
        return ""
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd}: {r.stderr.strip()}")
    return r.stdout


class Server:
    def __init__(self, a):
        self.a = a
        self.proc = None
        self.base = None
        self.token = None
        self.starts = 0

    def start(self):
        self.starts += 1
        log = os.path.join(self.a.work, f"server-{self.starts}.log")
        out = open(log, "wb")
        self.proc = subprocess.Popen(
            [self.a.bowline, "server", "--listen", "127.0.0.1:0", "--data-dir", self.a.data,
             "--images-path", self.a.images, "--libvirt-uri", "qemu:///system",
             "--domain-type", "qemu", "--stop-timeout", "5", "--resolvers", self.a.gateway],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, close_fds=True)
        out.close()
        deadline = time.time() + 60
        while time.time() < deadline:
            with open(log, "rb") as f:
                m = re.search(rb"listening on (http://127\.0\.0\.1:[0-9]+)", f.read())
            if m:
                self.base = m.group(1).decode()
                with open(os.path.join(self.a.data, "admin.token")) as f:
                    self.token = f.read().strip()
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"the server did not come up; see {log}")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if self.proc:
            self.proc.wait()
        self.proc = None

    def api(self, method, path, body=None, timeout=30):
        """(status, json or text); status 0 when the server did not answer."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                raw = r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            raw, status = e.read(), e.code
        except Exception as e:  # killed mid-request: no answer
            return 0, str(e)
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def cli(self, *args):
        env = dict(os.environ, BOWLINE_SERVER=self.base, BOWLINE_TOKEN=self.token)
        return subprocess.Popen([self.a.bowline, *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


class Campaign:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.s = Server(a)
        self.ops = []  # operation ids the campaign started
        self.n = 0  # names
        self.tried = {}  # operation -> kill points
        self.failed = {}  # operation -> kill points with a failed invariant
        self.held = {i: 0 for i in INVARIANTS}
        self.broken = {i: 0 for i in INVARIANTS}
        self.failures = []
        self.archive = None  # an exported archive, for imports
        self.unsettled = ""  # what the last settle still waited for at its deadline

    def name(self, kind):
        self.n += 1
        return f"{kind}{self.n}"

    # -- state ----------------------------------------------------------------------------------
    def spaces(self):
        st, body = self.s.api("GET", "/api/v1/spaces")
        if st != 200:
            raise RuntimeError(f"GET /spaces: {st} {body}")
        return body

    def disks(self):
        st, body = self.s.api("GET", "/api/v1/disks")
        return body if st == 200 else []

    def snapshots(self, sid):
        st, body = self.s.api("GET", f"/api/v1/spaces/{sid}/snapshots")
        return [x["name"] for x in body] if st == 200 else []

    # -- operations -----------------------------------------------------------------------------
    def choices(self, spaces):
        by = lambda *states: [x for x in spaces if x["state"] in states]
        c = []
        if len(spaces) < MAX_SPACES:
            c.append(("create", None))
            c += [("clone", x) for x in by("running", "stopped") if x.get("startedOnce", True)]
            if self.archive:
                c.append(("import", None))
        c += [("start", x) for x in by("stopped")]
        c += [("stop", x) for x in by("running")]
        c += [("restart", x) for x in by("running")]
        c += [("suspend", x) for x in by("running")]
        c += [("resume", x) for x in by("suspended")]
        c += [("delete", x) for x in by("running", "stopped", "suspended", "error")]
        c += [("set-ip", x) for x in by("stopped")]
        c += [("snapshot", x) for x in by("running", "stopped")]
        c += [("restore", x) for x in by("stopped") if self.snapshots(x["id"])]
        c += [("export", x) for x in by("stopped")]
        c.append(("disk-create", None))
        c += [("disk-delete", d) for d in self.disks() if not d.get("spaces")]
        return c

    def free_ip(self, spaces):
        taken = {x.get("ip") for x in spaces}
        pre, lo = self.a.range_start.rsplit(".", 1)
        hi = int(self.a.range_end.rsplit(".", 1)[1])
        free = [f"{pre}.{i}" for i in range(int(lo), hi + 1) if f"{pre}.{i}" not in taken]
        return self.rng.choice(free) if free else self.a.range_start

    def launch(self, op, x, spaces):
        """Starts op; returns (thread or process, delay ceiling in seconds)."""
        api = self.s.api
        sid = x["id"] if x and "id" in x else None
        calls = {
            "create": lambda: api("POST", "/api/v1/spaces", {"template": "crash",
                                                              "name": self.name("c")}),
            "clone": lambda: api("POST", f"/api/v1/spaces/{sid}/clone", {"name": self.name("k")}),
            "start": lambda: api("POST", f"/api/v1/spaces/{sid}/start"),
            "resume": lambda: api("POST", f"/api/v1/spaces/{sid}/start"),
            "stop": lambda: api("POST", f"/api/v1/spaces/{sid}/stop"),
            "restart": lambda: api("POST", f"/api/v1/spaces/{sid}/restart"),
            "suspend": lambda: api("POST", f"/api/v1/spaces/{sid}/suspend"),
            "delete": lambda: api("DELETE", f"/api/v1/spaces/{sid}"),
            "set-ip": lambda: api("PUT", f"/api/v1/spaces/{sid}/ip", {"ip": self.free_ip(spaces)}),
            "snapshot": lambda: api("POST", f"/api/v1/spaces/{sid}/snapshots",
                                    {"name": self.name("s")}),
            "restore": lambda: api("POST", f"/api/v1/spaces/{sid}/snapshots/"
                                   f"{self.snapshots(sid)[-1]}/restore", {}),
            "disk-create": lambda: api("POST", "/api/v1/disks", {"name": self.name("d"),
                                                                  "size": "64M"}),
            "disk-delete": lambda: api("DELETE", f"/api/v1/disks/{x['name'] if x else ''}"),
        }
        ceiling = {"create": 4, "clone": 4, "start": 3, "resume": 3, "stop": 3, "restart": 4,
                   "suspend": 3, "delete": 2, "snapshot": 3, "restore": 2, "export": 3,
                   "import": 3}.get(op, 0.5)
        if op == "export":
            path = os.path.join(self.a.work, "export.tar")
            return self.s.cli("space", "export", x["name"], "-o", path), ceiling
        if op == "import":
            return self.s.cli("space", "import", self.archive, "--name", self.name("i")), ceiling
        result = {}

        def run():
            result["answer"] = calls[op]()

        t = threading.Thread(target=run, daemon=True)
        t.result = result
        t.start()
        return t, ceiling

    def note_operation(self, answer):
        st, body = answer
        if isinstance(body, dict) and isinstance(body.get("operation"), dict):
            self.ops.append(body["operation"]["id"])

    # -- settling and invariants ----------------------------------------------------------------
    def settle(self, timeout):
        """True once settled; else what it still waited for at the deadline (self.unsettled)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.unsettled = self.waiting_for()
            if not self.unsettled:
                return True
            time.sleep(0.3)
        return False

    def waiting_for(self):
        passing = [f"{x['name']}={x['state']}" for x in self.spaces() if x["state"] in PASSING]
        if passing:
            return "spaces " + ", ".join(passing)
        for o in self.ops:
            st, op = self.s.api("GET", f"/api/v1/operations/{o}")
            if st == 404:
                continue  # its space was deleted, and the operation with it
            if not (isinstance(op, dict) and op.get("state") in ("succeeded", "failed")):
                return f"operation {o}: {st} {op}"
        busy = self.libvirt_busy()
        return f"libvirt job on {busy}" if busy else ""

    def libvirt_busy(self):
        """Whether libvirt still runs a job on a domain of the run: a save or a snapshot a
        killed server asked for goes on without it, and its end is part of settling."""
        for d in self.domains():
            out = sh("virsh", "-c", "qemu:///system", "domjobinfo", d)
            # "Job type:         None": no job (a lookahead after \s+ would backtrack into
            # the spaces and see one on every running domain).
            m = re.search(r"^Job type:\s+(\S+)", out, re.M)
            if m and m.group(1) != "None":
                return d
        return ""

    def domains(self):
        out = sh("virsh", "-c", "qemu:///system", "list", "--all", "--name")
        return {d for d in out.split() if d.startswith(self.a.prefix + "-")}

    def check(self, settled):
        bad = {}
        spaces = self.spaces()
        doms = {x["domain"] for x in spaces}
        # ops-ended
        wrong = []
        for o in self.ops:
            st, op = self.s.api("GET", f"/api/v1/operations/{o}")
            if st == 404:
                continue  # its space was deleted, and the operation with it
            if not isinstance(op, dict) or op.get("state") not in ("succeeded", "failed") or (
                    op["state"] == "failed" and not op.get("error")):
                wrong.append(f"{o}: {op}")
        bad["ops-ended"] = wrong
        bad["settled"] = [] if settled else [
            f"{x['name']}={x['state']}" for x in spaces if x["state"] in PASSING]
        # state=domain
        wrong = []
        for x in spaces:
            dom = sh("virsh", "-c", "qemu:///system", "domstate", x["domain"]).strip()
            want = {"running": "running", "stopped": "shut off", "suspended": "shut off"}
            if x["state"] in want and dom != want[x["state"]]:
                wrong.append(f"{x['name']} {x['state']} but domain '{dom or 'missing'}'")
            if x["state"] == "suspended" and "Managed save:   yes" not in sh(
                    "virsh", "-c", "qemu:///system", "dominfo", x["domain"]):
                wrong.append(f"{x['name']} suspended without a managed save")
            if x["state"] == "error" and not x.get("error"):
                wrong.append(f"{x['name']} in error without a reason")
        bad["state=domain"] = wrong
        have = self.domains()
        # A space in error may have lost its domain and directory (an interrupted clone's are
        # removed, the row says why); any other must have both, and nothing may be unowned.
        live = {x["domain"] for x in spaces if x["state"] != "error"}
        bad["no-orphan-dom"] = sorted([f"orphan {d}" for d in have - doms] +
                                      [f"missing {d}" for d in live - have])
        dirs = {d for d in os.listdir(self.a.images)
                if os.path.isdir(os.path.join(self.a.images, d)) and
                d not in ("base", "cloud-images", "volumes")}
        bad["no-orphan-dir"] = sorted([f"orphan {d}" for d in dirs - doms] +
                                      [f"missing {d}" for d in live - dirs])
        half = []
        for root, _, files in os.walk(self.a.images):
            for f in files:
                if f.endswith(".part") or ".tmp" in f or root.endswith("/volumes/staging"):
                    half.append(os.path.join(root, f))
        bad["no-staging"] = half
        vol = os.path.join(self.a.images, "volumes")
        files = set()
        for root, _, fs in os.walk(vol):
            if not root.endswith("staging"):
                files |= {f[:-6] for f in fs if f.endswith(".qcow2")}
        bad["disks=files"] = sorted(files ^ {d["name"] for d in self.disks()})
        wrong = []
        for x in spaces:
            if x["domain"] not in have:
                continue
            lv = set(sh("virsh", "-c", "qemu:///system", "snapshot-list", "--name",
                        x["domain"]).split())
            api = set(self.snapshots(x["id"]))
            if lv != api:
                wrong.append(f"{x['name']}: api {sorted(api)} libvirt {sorted(lv)}")
        bad["snapshots"] = wrong
        ips = [x["ip"] for x in spaces if x.get("ip")]
        bad["addresses"] = sorted({i for i in ips if ips.count(i) > 1})
        bad["guard"] = self.guard_problems(spaces, have)
        st, me = self.s.api("GET", "/api/v1/whoami")
        use = me.get("usage", {}) if isinstance(me, dict) else {}
        want = {"spaces": len(spaces)}
        bad["quota"] = [f"{k}: usage {use.get(k)} but {v}" for k, v in want.items()
                        if use.get(k) != v]
        return bad

    def guard_problems(self, spaces, have):
        taps = set()
        for x in spaces:
            if x["domain"] in have:
                xml = sh("virsh", "-c", "qemu:///system", "dumpxml", "--inactive", x["domain"])
                for iface in re.findall(r"<interface .*?</interface>", xml, re.S):
                    taps |= set(re.findall(r"<target dev='([^']+)'", iface))
        out = sh("nft", "-j", "list", "ruleset")
        try:
            rules = json.loads(out)["nftables"]
        except (ValueError, KeyError):
            return ["nft -j list ruleset unreadable"]
        tables = {"bowline_" + self.guard_tag()}
        chains = set()
        for r in rules:
            c = r.get("chain")
            if c and c["table"] in tables and c["family"] == "bridge":
                m = re.match(r"^(?:in|out)_(.+)$", c["name"])
                if m:
                    chains.add(m.group(1))
        if not taps and not chains:
            return []
        return sorted(taps ^ chains)

    def guard_tag(self):
        try:
            with open(os.path.join(self.a.data, "guest-guard.tag")) as f:
                return f.read().strip()
        except OSError:
            return "none"

    # -- the campaign ---------------------------------------------------------------------------
    def setup(self):
        self.s.start()
        a = self.a
        tmpl = f"""name: {a.prefix}-${{{{ .space.name }}}}
hostname: ${{{{ .space.name }}}}
image: bwe2e-tiny
memory: 128M
cpus: 1
network:
  mode: bridged
  bridge: {a.bridge}
  cidr: {a.cidr}
  ip_range_start: {a.range_start}
  ip_range_end: {a.range_end}
  gateway: {a.gateway}
console: true
"""
        st, body = self.s.api("POST", "/api/v1/templates", {"name": "crash", "yaml": tmpl})
        if st not in (200, 201):
            raise RuntimeError(f"template: {st} {body}")

    def kill_point(self, i):
        spaces = self.spaces()
        # An operation first, then its target: each operation gets its share of kill points
        # whatever the spaces' states allow most.
        choices = self.choices(spaces)
        op = self.rng.choice(sorted({c[0] for c in choices}))
        op, x = self.rng.choice([c for c in choices if c[0] == op])
        job, ceiling = self.launch(op, x, spaces)
        delay = self.rng.uniform(0, ceiling)
        time.sleep(delay)
        self.s.kill()
        if isinstance(job, subprocess.Popen):
            try:
                job.wait(timeout=10)
            except subprocess.TimeoutExpired:
                job.kill()
                job.wait()
            out = job.stdout.read().decode(errors="replace")
            if op == "export" and job.returncode == 0:
                self.archive = os.path.join(self.a.work, "export.tar")
        else:
            job.join(timeout=30)
            if "answer" in job.result:
                self.note_operation(job.result["answer"])
        t_kill = time.time()
        self.s.start()
        t_up = time.time()
        settled = self.settle(self.a.settle)
        t_settled = time.time()
        bad = self.check(settled)
        timing = (f"[up {t_up - t_kill:.1f}s, settle {t_settled - t_up:.1f}s"
                  + ("" if settled else f" (still waiting for {self.unsettled})")
                  + f", check {time.time() - t_settled:.1f}s]")
        self.tried[op] = self.tried.get(op, 0) + 1
        broke = {k: v for k, v in bad.items() if v}
        for k in INVARIANTS:
            if bad[k]:
                self.broken[k] += 1
            else:
                self.held[k] += 1
        target = x["name"] if x else ""
        print(f"kill {i + 1}: {op} {target} after {delay:.2f}s: "
              + ("ok" if not broke else "FAILED " + json.dumps(broke)) + " " + timing,
              flush=True)
        if broke:
            self.failed[op] = self.failed.get(op, 0) + 1
            self.failures.append((i + 1, op, target, delay, broke))
        # Finished operations need not be asked again.
        self.ops = [o for o in self.ops if not self.ended(o)]

    def ended(self, o):
        st, op = self.s.api("GET", f"/api/v1/operations/{o}")
        return st == 404 or (isinstance(op, dict) and op.get("state") in ("succeeded", "failed"))

    def table(self, seconds):
        print()
        print(f"crash campaign: seed {self.a.seed}, {sum(self.tried.values())} kill points, "
              f"{seconds:.0f} s")
        print(f"{'operation':<12} {'kill points':>11} {'failed':>7}")
        for op in sorted(self.tried):
            print(f"{op:<12} {self.tried[op]:>11} {self.failed.get(op, 0):>7}")
        print()
        print(f"{'invariant':<14} {'held':>5} {'broken':>7}")
        for k in INVARIANTS:
            print(f"{k:<14} {self.held[k]:>5} {self.broken[k]:>7}")
        print()
        for i, op, target, delay, broke in self.failures:
            print(f"FAILED kill {i} ({op} {target}, {delay:.2f}s): {json.dumps(broke)}"
                  f"  [--seed {self.a.seed}]")
        print(f"{len(self.failures)} kill points failed an invariant (seed {self.a.seed})")


def main():
    p = argparse.ArgumentParser()
    for f in ("bowline", "work", "images", "data", "prefix", "bridge", "cidr", "gateway",
              "range-start", "range-end"):
        p.add_argument("--" + f, required=True)
    p.add_argument("--kills", type=int, default=50)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--settle", type=float, default=90)
    # A time budget for the kill points (0: none): the suite's short form must end inside its
    # ctest timeout on a slow machine; it stops starting kill points once the budget is spent
    # and fails only when fewer than --min-kills were done.
    p.add_argument("--budget", type=float, default=0)
    p.add_argument("--min-kills", type=int, default=1)
    a = p.parse_args()
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1, 2**31)
    print(f"crash campaign: seed {a.seed} (rerun with --seed {a.seed})", flush=True)
    c = Campaign(a)
    t0 = time.time()
    try:
        c.setup()
        for i in range(a.kills):
            if a.budget and time.time() - t0 > a.budget:
                print(f"time budget of {a.budget:.0f} s spent after {i} kill points", flush=True)
                break
            c.kill_point(i)
    finally:
        c.s.kill()
    c.table(time.time() - t0)
    done = sum(c.tried.values())
    if done < a.min_kills:
        print(f"only {done} kill points in the budget (at least {a.min_kills} wanted)")
        sys.exit(1)
    sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    main()
