#!/usr/bin/env python3
"""bench/run's summary: medians of the repetitions (rep 0 is the warm-up), ratios against the
targets of the server races, and the test-driver figures. Usage: report.py RESULTS.jsonl REPS"""
import json
import statistics
import sys

RAW_TARGET = 1.10  # bowline within 1.10x of the raw libvirt floor
VIRT_INSTALL_TARGET = 1.5  # and at least 1.5x faster than the virt-install pipeline
LIST_P99_TARGET_MS = 20.0
VNC_RATIO_TARGET = 0.80  # the VNC bridge moves >= 80% of a direct connection's bytes/s
CONSOLE_ADDED_P99_TARGET_MS = 2.0  # the console bridge adds < 2 ms at p99
TUNNEL_RATIO_TARGET = 0.8  # the tunnel carries >= 0.8 of a straight connection's throughput
TUNNEL_ADDED_P99_TARGET_MS = 2.0


def verdict(ok):
    return "meets target" if ok else "MISSES target"


def report_preview(rows):
    """A preview URL's relay against the tunnel under bowline forward, and straight."""
    for row in rows:
        f = row["figures"]
        if "note" in f:
            print("== preview: " + f["note"] + " ==")
            continue
        print("== preview: a TCP echo service after an Upgrade, through a preview host's relay ==")
        print("  %d MiB each way: straight %.0f MB/s, forward's tunnel %.0f MB/s, preview %.0f MB/s:"
              " preview/forward %.2f  %s"
              % (f["megabytes_each_way"], f["direct_median_Bps"] / 1e6, f["forward_median_Bps"] / 1e6,
                 f["preview_median_Bps"] / 1e6, f["preview_over_forward"],
                 verdict(f["preview_over_forward"] >= TUNNEL_RATIO_TARGET)))
        print("  %d one-byte round trips, p99: straight %.3f, forward %.3f, preview %.3f ms;"
              " preview's added p99 over forward %.3f ms  %s"
              % (f["rounds"], f["direct_p99_ms"], f["forward_p99_ms"], f["preview_p99_ms"],
                 f["added_p99_ms_over_forward"],
                 verdict(f["added_p99_ms_over_forward"] < TUNNEL_ADDED_P99_TARGET_MS)))


def report_anatomy(by):
    """The floor's own time split by libvirt's steps, and QEMU alone answering the queries of the
    largest step: what no way of starting this domain on this host can go below."""
    starts = [s for row in by.get("anatomy", []) for s in row["figures"].get("starts", [])]
    if not starts:
        for row in by.get("anatomy", []):
            print("  where the floor's time goes: %s" % row["figures"].get("note", "not measured"))
        return
    total = statistics.median(s["total_ms"] for s in starts)
    monitor = statistics.median(s["monitor_ms"] for s in starts)
    check = statistics.median(s["cpu_check_ms"] for s in starts)
    print("  where the floor's time goes (libvirtd's debug log, median of %d more raw starts):" % len(starts))
    print("    libvirt's start %.0f ms: QEMU up and its monitor answering %.0f ms, libvirt reading the"
          % (total, monitor))
    print("    guest CPU back from QEMU %.0f ms (%.0f%%), the rest %.0f ms" % (check, 100 * check / total,
                                                                          total - monitor - check))
    for row in by.get("qom", []):
        f = row["figures"]
        if "qom_gets" in f:
            print("    QEMU alone (no libvirt) answers that check's %d qom-get queries, one per CPU feature,"
                  % f["qom_gets"])
            print("    in %.0f ms (%.2f ms each): a cost of QEMU's that every way of starting the domain pays"
                  % (f["ms"], f["ms"] / max(f["qom_gets"], 1)))
    for row in by.get("virt_install_alone", []):
        values = row["figures"].get("ms", [])
        if values:
            print("  virt-install's own time (the same command with --print-xml: no define, no start): %.0f ms [%s]"
                  % (statistics.median(values), ", ".join("%.0f" % v for v in values)))


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    by = {}
    for row in rows:
        by.setdefault(row["method"], []).append(row)

    def median(method, key):
        values = [r["figures"][key] for r in by.get(method, []) if r["rep"] > 0 and key in r["figures"]]
        return (statistics.median(values), values) if values else (None, [])

    for row in by.get("load", []):
        f = row["figures"]
        print("load average (1, 5, 15 min) on %d CPUs: %s at the start, %s at the end"
              % (f["cpus"], f["start"], f["end"]))
    medians = {}
    if any(m in by for m in ("raw", "virsh", "virt-install", "bowline")):
        print("== create -> domain running (control plane; libvirt's STARTED event), median of %s =="
              % sys.argv[2])
    for method, label in [("raw", "raw libvirt (C API define+start)"),
                          ("virsh", "virsh define + start"),
                          ("virt-install", "virt-install pipeline"),
                          ("bowline", "bowline (POST /api/v1/spaces)")]:
        m, values = median(method, "running_ms")
        medians[method] = m
        if m is not None:
            print("  %-36s %7.0f ms   [%s]" % (label, m, ", ".join("%.0f" % v for v in values)))
    if medians.get("raw") and medians.get("bowline"):
        r = medians["bowline"] / medians["raw"]
        print("  bowline / raw          %.2fx  (target <= %.2fx: %s)" % (r, RAW_TARGET, verdict(r <= RAW_TARGET)))
    if medians.get("virt-install") and medians.get("bowline"):
        r = medians["virt-install"] / medians["bowline"]
        print("  virt-install / bowline %.2fx  (target >= %.1fx: %s)" % (r, VIRT_INSTALL_TARGET,
                                                                      verdict(r >= VIRT_INSTALL_TARGET)))
    if medians.get("virsh") and medians.get("raw"):
        print("  virsh / raw            %.2fx" % (medians["virsh"] / medians["raw"]))
    report_anatomy(by)

    if "bowline" in by:
        print("== bowline, the same spaces (median) ==")
    for key, label in [("accepted_ms", "create request answered (202)"),
                       ("state_running_ms", "create -> state running on /events"),
                       ("ready_ms", "create -> ready (cloud-init finished)"),
                       ("stop_to_off_ms", "stop -> domain off (ACPI in the guest)"),
                       ("off_to_stopped_ms", "domain off -> state stopped on /events"),
                       ("stop_to_stopped_ms", "stop -> state stopped")]:
        m, values = median("bowline", key)
        if m is not None:
            print("  %-40s %8.0f ms   [%s]" % (label, m, ", ".join("%.0f" % v for v in values)))

    steps = {}
    for r in by.get("bowline", []):
        if r["rep"] > 0:
            for step, ms in r["figures"].get("steps_ms", {}).items():
                steps.setdefault(step, []).append(ms)
    if steps:
        print("  create's steps on the event stream (median ms after the request):")
        print("    " + ", ".join("%s %.0f" % (step, statistics.median(v))
                               for step, v in sorted(steps.items(), key=lambda kv: statistics.median(kv[1]))))

    for row in by.get("api", []):
        f = row["figures"]
        print("== libvirt test:///default driver ==")
        c = f["create"]
        print("  create %d spaces (started), %d clients: %.1f s, %.0f spaces/s (answers in %.1f s), %d failed"
              % (c["count"], c["clients"], c["done_s"], c["per_s"], c["accept_s"], c["failed"]))
        fill = f["fill"]
        print("  create %d more (not started): %.1f s, %.0f spaces/s, %d failed"
              % (fill["count"], fill["done_s"], fill["per_s"], fill["failed"]))
        print("  GET /api/v1/spaces with %s spaces in the store (p99 target < %.0f ms):"
              % (f["list_all_idle"]["items"], LIST_P99_TARGET_MS))
        for key, label in [("list_all_idle", "admin ?all=1, idle"),
                           ("list_own_idle", "alice's own, idle"),
                           ("list_none_idle", "carol's (none), idle"),
                           ("list_all_loaded", "admin ?all=1, 2 clients creating"),
                           ("list_own_loaded", "alice's own, 2 clients creating")]:
            l = f[key]
            print("    %-34s %5d items %5.2f MB: p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms  %s"
                  % (label, l["items"], l["bytes"] / 1e6, l["p50_ms"], l["p99_ms"], l["max_ms"],
                     verdict(l["p99_ms"] < LIST_P99_TARGET_MS)))
        print("    (%d spaces created by the 2 clients meanwhile)" % f["creates_while_loaded"])
        print("  server RSS: %.0f MiB after the 10,000 creates, %.0f MiB at the end (peak %.0f MiB)"
              % (f["rss_after_creates_kib"] / 1024, f["rss_kib"] / 1024, f["rss_peak_kib"] / 1024))
    for row in by.get("list_json", []):
        print("== the list's JSON text alone (no HTTP; Google Benchmark) ==")
        for name, (real, cpu) in row["figures"].items():
            # CPU time is what the list costs; wall time adds waiting for a core.
            print("  %-24s %7.2f ms CPU, %7.2f ms wall" % (name, cpu, real))
    for row in by.get("pool", []):
        print("== pool claim -> ready (target < 1 s) ==")
        f = row["figures"]
        if "note" in f:
            print("  " + f["note"])
        else:
            claim_verdict = verdict(f["claim_ms"] < 1000 and f["ready"])
            print(f"  claim -> {f['owner']}'s space {f['state']}, ready={f['ready']}: "
                  f"{f['claim_ms']:.0f} ms  {claim_verdict}")

    for row in by.get("vnc", []):
        print("== VNC: RFB Raw throughput from the same QEMU VNC server (target bridge/direct TCP >= %.2f) =="
              % VNC_RATIO_TARGET)
        f = row["figures"]
        if "note" in f:
            print("  " + f["note"])
            continue
        print("  screen %s, %.2f MB a frame, %d interleaved rounds of %.0f s, %d requests in flight"
              % (f["screen"], f["frame_bytes"] / 1e6, len(f["bridge_Bps"]), f["seconds"], f["in_flight"]))
        for key, label in [("tcp", "direct TCP (127.0.0.1, VNC auth)"),
                           ("direct", "direct virDomainOpenGraphicsFD"),
                           ("bridge", "bowline WebSocket bridge")]:
            if key + "_Bps" not in f:
                continue
            print("  %-34s %7.1f MB/s  [%s]  frames/s %s"
                  % (label, f[key + "_median_Bps"] / 1e6,
                     ", ".join("%.1f" % (v / 1e6) for v in f[key + "_Bps"]),
                     ", ".join("%.1f" % (u / f["seconds"]) for u in f[key + "_updates"])))
        print("  bridge / direct TCP %.2f  %s" % (f["ratio"], verdict(f["ratio"] >= VNC_RATIO_TARGET)))
        if "ratio_fd" in f:
            print("  bridge / direct fd  %.2f  (the bridge alone: the fd is what it reads from)" % f["ratio_fd"])
    for row in by.get("vnc_capacity", []):
        f = row["figures"]
        if "note" in f:
            print("  the bridge's ceiling: " + f["note"])
            continue
        print("  the bridge's ceiling (an in-process RFB server answering at once, %s, %.1f MB frames):"
              % (f["screen"], f["frame_bytes"] / 1e6))
        print("    socketpair read directly %7.0f MB/s [%s]; through HttpServer + VncBridge %5.0f MB/s [%s]"
              % (f["direct_median_Bps"] / 1e6, ", ".join("%.0f" % (v / 1e6) for v in f["direct_Bps"]),
                 f["bridge_median_Bps"] / 1e6, ", ".join("%.0f" % (v / 1e6) for v in f["bridge_Bps"])))
    for row in by.get("console", []):
        f = row["figures"]
        if "note" in f:
            print("== console: " + f["note"] + " ==")
            continue
        print("== console: one-byte round trips, %d each way (target: the bridge adds < %.0f ms at p99) =="
              % (f["rounds"], CONSOLE_ADDED_P99_TARGET_MS))
        for key, label in [("direct", "echo console alone"),
                           ("bridge", "through HttpServer + ConsoleHub")]:
            print("  %-32s p50 %6.3f ms  p99 %6.3f ms  max %6.3f ms"
                  % (label, f[key + "_p50_ms"], f[key + "_p99_ms"], f[key + "_max_ms"]))
        print("  added by the bridge: p50 %.3f ms, p99 %.3f ms  %s"
              % (f["added_p50_ms"], f["added_p99_ms"], verdict(f["added_p99_ms"] < CONSOLE_ADDED_P99_TARGET_MS)))
    for row in by.get("tunnel", []):
        f = row["figures"]
        if "note" in f:
            print("== tunnel: " + f["note"] + " ==")
            continue
        print("== tunnel: a TCP echo service through the tunnel route and straight ==")
        print("  %d MiB each way: straight %.0f MB/s, through the tunnel %.0f MB/s: ratio %.2f  %s"
              % (f["megabytes_each_way"], f["direct_median_Bps"] / 1e6, f["tunnel_median_Bps"] / 1e6,
                 f["throughput_ratio"], verdict(f["throughput_ratio"] >= TUNNEL_RATIO_TARGET)))
        print("  %d one-byte round trips: straight p50 %.3f p99 %.3f ms; tunnel p50 %.3f p99 %.3f ms"
              % (f["rounds"], f["direct_p50_ms"], f["direct_p99_ms"], f["tunnel_p50_ms"], f["tunnel_p99_ms"]))
        print("  added by the tunnel: p50 %.3f ms, p99 %.3f ms  %s"
              % (f["added_p50_ms"], f["added_p99_ms"], verdict(f["added_p99_ms"] < TUNNEL_ADDED_P99_TARGET_MS)))
    report_preview(by.get("preview", []))
    report_scp(by.get("tunnel_scp", []))
    report_limits(by.get("limits", []))
    report_stats(by.get("stats", []))
    report_state(by.get("state", []))


def report_stats(rows):
    """The stats sampler's cost: the server's CPU with the sampler on, off, and with no spaces."""
    if not rows:
        return
    runs = {row["figures"].get("label"): row["figures"] for row in rows}
    print("== stats: the sampler's cost on test:///default (the server's CPU while idle) ==")
    for label, what in [("on", "running spaces, sampler on"), ("off", "running spaces, sampler off"),
                        ("none", "no spaces, sampler on")]:
        f = runs.get(label)
        if f is None:
            continue
        if "note" in f:
            print("  %-28s %s" % (what, f["note"]))
            continue
        line = "  %-28s %3d spaces: %6.3f %% CPU over %.0f s" % (what, f["spaces"], f["cpu_percent"],
                                                               f["seconds"])
        if f.get("rounds"):
            line += "; %d rounds every %.0f s, %.1f ms CPU (%.1f ms wall) each" % (
                f["rounds"], f["interval"], f["round_cpu_ms"], f["round_wall_ms"])
        print(line + "; RSS %.0f MiB" % (f["rss_kib"] / 1024))
    on, off, none = runs.get("on"), runs.get("off"), runs.get("none")
    if on and off and "note" not in on and "note" not in off:
        ratio = on["cpu_percent"] / off["cpu_percent"] if off["cpu_percent"] else float("inf")
        print("  sampler on - off: %+.3f points of one CPU (on/off %.2fx)"
              % (on["cpu_percent"] - off["cpu_percent"], ratio))
        if on.get("rounds"):
            print("  the sampler's own thread: %.3f %% of one CPU, %.0f us per space a round; history "
                  "%.2f MiB for %d spaces"
                  % (100 * on["round_cpu_ms"] / 1000 / on["interval"], 1000 * on["round_cpu_ms"] / on["spaces"],
                     on["history_bytes"] / 1048576, on["sampled_spaces"]))
    if on and none and "note" not in on and "note" not in none:
        print("  %d spaces - none, both sampled: %+.3f points of one CPU"
              % (on["spaces"], on["cpu_percent"] - none["cpu_percent"]))


def report_limits(rows):
    """A normal client's latency around many idle connections; RSS through a console flood."""
    for row in rows:
        f = row["figures"]
        if "note" in f:
            print("== limits: " + f["note"] + " ==")
            continue
        i, c = f["idle_connections"], f["console_flood"]
        print("== limits: %d idle connections, then a %d MiB console flood ==" % (i["idle"], c["flooded_mb"]))
        for when in ("before", "during", "after"):
            print("  GET /whoami %-6s p50 %.3f ms  p99 %.3f ms" % (when, i[when]["p50_ms"], i[when]["p99_ms"]))
        print("  (%d of them still open while measured, %.1f s after opening)"
              % (i["held_open_while_measured"], i["seconds_measured_after_opening"]))
        print("  console flood: %d viewers dropped at the input limit; server RSS %.1f MiB before, "
              "%.1f peak, %.1f after (growth %.1f MiB)"
              % (c["viewers_dropped"], c["rss_before_mib"], c["rss_peak_mib"], c["rss_after_mib"],
                 c["rss_peak_mib"] - c["rss_before_mib"]))


def report_scp(rows):
    """scp through bowline ssh's tunnel against scp straight to the guest, medians of each."""
    if not rows:
        return
    if "note" in rows[0]["figures"]:
        print("== tunnel_scp: " + rows[0]["figures"]["note"] + " ==")
        return
    times = {"tunnel": [], "direct": []}
    for row in rows:
        times[row["figures"]["way"]].append(row["figures"]["ns"] / 1e9)
    mb = rows[0]["figures"]["mb"]
    if not times["tunnel"] or not times["direct"]:
        print("== tunnel_scp: incomplete ==")
        return
    tunnel = mb * 1.048576 / statistics.median(times["tunnel"])
    direct = mb * 1.048576 / statistics.median(times["direct"])
    print("== tunnel_scp: scp of %d MiB to a Debian 12 guest, %d times each way ==" % (mb, len(times["tunnel"])))
    print("  straight to the guest %.1f MB/s, through bowline ssh's tunnel %.1f MB/s: ratio %.2f  %s"
          % (direct, tunnel, tunnel / direct, verdict(tunnel / direct >= TUNNEL_RATIO_TARGET)))


EXPORT_RATIO_TARGET = 0.9
RESUME_RATIO_TARGET = 20.0


def report_state(rows):
    """Snapshots and export on a Debian 12 guest with data written since its base: medians."""
    if not rows:
        return
    if "note" in rows[0]["figures"]:
        print("== state: " + rows[0]["figures"]["note"] + " ==")
        return
    seconds, sizes = {}, {}
    for row in rows:
        f = row["figures"]
        seconds.setdefault(f["what"], []).append(f["ns"] / 1e9)
        if "bytes" in f:
            sizes.setdefault(f["what"], []).append(f["bytes"])
    print("== state: a Debian 12 guest with data written since its base ==")
    for what, label in (("snapshot_running", "snapshot of the running guest (frozen)"),
                        ("restore_stopped", "restore of a disk snapshot (stopped)")):
        if what in seconds:
            print("  %s: median %.2f s of %d" % (label, statistics.median(seconds[what]), len(seconds[what])))
    if "export" in seconds and "convert" in seconds:
        # Times of the same disk: the export's archive is smaller (it keeps the base's
        # compressed clusters compressed), so bytes per second would undersell it.
        def line(mine, theirs, label):
            m, t = statistics.median(seconds[mine]), statistics.median(seconds[theirs])
            print("  %s: export %.2f s (%.0f MB), qemu-img convert %.2f s (%.0f MB): %.2fx convert's "
                  "speed  %s" % (label, m, statistics.median(sizes[mine]) / 1e6, t,
                                  statistics.median(sizes[theirs]) / 1e6, t / m,
                                  verdict(t / m >= EXPORT_RATIO_TARGET)))
        line("export", "convert", "returning once past the page cache (export; convert's default)")
        if "export_sync" in seconds and "convert_direct" in seconds:
            line("export_sync", "convert_direct", "on the disk when it returns (export --sync; convert -t none)")
    resumes = [("resume_to_banner", "cold_to_banner", "until SSH answers (sshd's banner through the tunnel)"),
               ("resume_to_ssh", "cold_to_ssh", "until SSH runs a command (bowline ssh SPACE true)")]
    measured = False
    for resume_key, cold_key, label in resumes:
        if resume_key not in seconds or cold_key not in seconds:
            continue
        measured = True
        resume = statistics.median(seconds[resume_key])
        cold = statistics.median(seconds[cold_key])
        print("  %s: resume from suspend median %.2f s %s, cold start median %.2f s %s:"
              " resume %.1fx faster  %s"
              % (label, resume, runs(seconds[resume_key]), cold, runs(seconds[cold_key]),
                 cold / resume, verdict(cold / resume >= RESUME_RATIO_TARGET)))
    if not measured:
        print("  resume from suspend against a cold start: not measured (the suspend or the start failed)")


def runs(values):
    return "[" + " ".join("%.2f" % v for v in values) + "]"


if __name__ == "__main__":
    main()
