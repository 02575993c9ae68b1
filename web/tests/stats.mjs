// What a space uses, in Debian's Chromium (playwright-core) and from the CLI, against a real
// server sampling every 2 s and a real tiny guest spinning a CPU loop; started by
// tests/e2e/web_stats_test.sh, which makes the server, the user alice and her running space
// SPACE_ID. Prints "N passed, M failed".
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { env, check, testRun, launchBrowser, watchErrors, login as loginAt } from "./lib.mjs";

const BASE = env("BASE_URL");
const SHOTS = env("SCREENSHOT_DIR");
const ALICE_PASSWORD = env("ALICE_PASSWORD");
const ADMIN_TOKEN = env("ADMIN_TOKEN");
const SPACE_ID = env("SPACE_ID");
const BOWLINE = env("BOWLINE");
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const { step, finish } = testRun("web_stats_test");

// A chart's state as the page shows it: its points, its newest figure and what its canvas holds.
const chartState = (page, chart) => page.evaluate((id) => {
  const figure = document.querySelector(`figure[data-chart="${id}"]`);
  if (!figure) return null;
  const canvas = figure.querySelector("canvas");
  return {
    points: Number(figure.dataset.points),
    last: figure.dataset.last === "" ? null : Number(figure.dataset.last),
    now: figure.querySelector(".now").textContent,
    pixels: canvas ? canvas.toDataURL() : "",
  };
}, chart);

const cli = (...args) => execFileSync(BOWLINE, args, {
  env: { ...process.env, BOWLINE_SERVER: BASE, BOWLINE_TOKEN: ADMIN_TOKEN }, encoding: "utf8", timeout: 60000,
});

async function main() {
  const browser = await launchBrowser();
  const errors = [];
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  watchErrors(page, errors);

  await step("the space page draws its charts from live data: they change while the guest spins", async () => {
    await loginAt(page, BASE, "alice", ALICE_PASSWORD);
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    // Drawn from the second sample on (a single point has no time axis to speak of).
    const cpu = page.locator('figure[data-chart="cpu"] canvas');
    await cpu.waitFor({ timeout: 60000 });
    for (const id of ["memory", "disk", "network"])
      check(await page.locator(`figure[data-chart="${id}"] canvas`).count() === 1, `no ${id} chart`);
    // Three points with a CPU figure, then more: the page polls and redraws.
    await page.waitForFunction(() => Number(document.querySelector('figure[data-chart="cpu"]').dataset.points) >= 3,
      null, { timeout: 60000, polling: 500 });
    const before = await chartState(page, "cpu");
    await page.waitForFunction((n) => Number(document.querySelector('figure[data-chart="cpu"]').dataset.points) >= n + 2,
      before.points, { timeout: 60000, polling: 500 });
    const after = await chartState(page, "cpu");
    await page.screenshot({ path: path.join(SHOTS, "stats-charts.png") });
    check(after.points > before.points, `points ${before.points} -> ${after.points}`);
    check(after.pixels !== before.pixels, "the CPU chart's canvas did not change with new points");
    check(after.last !== null && after.last > 20, `CPU ${after.last} %: the guest's loop should keep it busy (${after.now})`);
    // The figures themselves move: the history the page drew has more than one CPU value.
    const body = await page.evaluate(async (id) => (await fetch(`/api/v1/spaces/${id}/stats`)).json(), SPACE_ID);
    const values = body.history.cpuPercent.filter((v) => v != null);
    check(values.length >= 3 && new Set(values).size > 1, `CPU history ${JSON.stringify(values)}`);
    check(errors.length === 0, `page errors: ${errors.join("; ")}`);
  });

  await step("memory comes from the guest's balloon driver (used and available)", async () => {
    await page.waitForFunction(() => document.querySelector('figure[data-chart="memory"]').dataset.last !== "",
      null, { timeout: 60000, polling: 1000 });
    const memory = await chartState(page, "memory");
    check(memory.last > 1 << 20 && memory.last < 256 << 20, `memory used ${memory.last} (${memory.now})`);
  });

  await step("the space list has CPU and memory columns", async () => {
    await page.goto(`${BASE}/#/spaces`);
    const row = page.locator('tr[data-space="stats"]');
    await row.waitFor({ timeout: 30000 });
    await page.waitForFunction(() => /\d+\.\d %/.test(document.querySelector('tr[data-space="stats"] td.cpu').textContent),
      null, { timeout: 30000, polling: 500 });
    const memory = (await row.locator("td.memory").textContent()).trim();
    check(/MiB \/ .*MiB/.test(memory), `memory cell "${memory}"`);
    await page.screenshot({ path: path.join(SHOTS, "stats-list.png") });
  });

  await step("/metrics parsed by prometheus_client: one series per running space", async () => {
    const text = await (await fetch(`${BASE}/metrics`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bwstats-"));
    const file = path.join(dir, "metrics.txt");
    fs.writeFileSync(file, text);
    let parsed;
    try {
      parsed = execFileSync("/usr/bin/python3", [path.join(ROOT, "tests/unit/api/parse_metrics.py"), file],
        { encoding: "utf8" });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const families = Object.fromEntries(JSON.parse(parsed).map((f) => [f.name, f]));
    for (const [name, type] of [["bowline_space_cpu_seconds", "counter"], ["bowline_space_memory_used_bytes", "gauge"],
      ["bowline_space_disk_read_bytes", "counter"], ["bowline_space_network_receive_bytes", "counter"]]) {
      const family = families[name];
      check(family && family.type === type, `${name} (${type}) in /metrics`);
      check(family.samples.length === 1, `${name}: ${family.samples.length} series for one running space`);
      const { labels, value } = family.samples[0];
      check(labels.space === "stats" && labels.owner === "alice" && labels.node === "local",
        `${name} labels ${JSON.stringify(labels)}`);
      check(value > 0 || name.includes("network"), `${name} = ${value}`);
    }
  });

  await step("bowline space top and space info show the figures", async () => {
    const top = cli("space", "top", "--all", "-n", "2", "-d", "2");
    const rounds = top.split("bowline space top - ").filter(Boolean);
    check(rounds.length === 2, `two rounds:\n${top}`);
    check(!top.includes("\x1b["), "escape codes in plain output");
    const row = rounds[1].split("\n").find((l) => l.startsWith("stats "));
    check(row && /running\s+\d+\.\d\s+[\d.]+ MiB \/ [\d.]+ MiB/.test(row), `top's row: ${row}\n${top}`);
    const info = cli("space", "info", SPACE_ID);
    check(/^cpu: +\d+\.\d% of 1 vCPU$/m.test(info), `space info:\n${info}`);
    check(/^memory: +[\d.]+ MiB used of [\d.]+ MiB/m.test(info), `space info:\n${info}`);
    check(/^disk: +read .* IOPS\), write /m.test(info) && /^network: +in /m.test(info), `space info:\n${info}`);
  });

  await browser.close();
}

finish(main);
