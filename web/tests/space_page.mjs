// The spaces list and a space's page in Debian's Chromium (playwright-core) against a real
// bowline server on libvirt's test driver (no guest boots); started by
// tests/e2e/web_space_page_test.sh, which makes the server (sampling once an hour, so no
// samples yet), the user alice and her running NAT space SPACE_NAME (id SPACE_ID) whose
// template lists ports 22 and 8080. Each step could fail on what a laptop user saw:
//   - the list shows no address for a space whose page shows one;
//   - the page offers http://127.0.0.1:22/ for port 22 (SSH);
//   - charts without samples draw a time axis of years (uPlot spreads one point over ~3 years);
//   - sharing: a colleague (bob, BOB_PASSWORD) is offered what his role forbids, a change of
//     role does not reach him, leaving leaves the space in his list.
// Prints "N passed, M failed".
import path from "node:path";
import { env, check, testRun, launchBrowser, watchErrors, login } from "./lib.mjs";

const BASE = env("BASE_URL");
const SHOTS = env("SCREENSHOT_DIR");
const ALICE_PASSWORD = env("ALICE_PASSWORD");
const SPACE_ID = env("SPACE_ID");
const SPACE_NAME = env("SPACE_NAME");
const BOB_PASSWORD = env("BOB_PASSWORD");

const { step, finish } = testRun("web_space_page_test");

// What GET /spaces/{id}/stats answers with `times` sample times (ms) and these figures.
function statsAnswer(times, figures) {
  const keys = ["cpuPercent", "memoryUsedBytes", "memoryAvailableBytes", "diskReadBytesPerSecond",
    "diskWriteBytesPerSecond", "networkReceiveBytesPerSecond", "networkTransmitBytesPerSecond"];
  const history = { time: times };
  for (const k of keys) history[k] = figures[k] || times.map(() => null);
  return { space: SPACE_ID, node: "local", enabled: true, intervalSeconds: 10, historySeconds: 3600,
    running: true, reason: null, current: null, totals: null, history };
}

// Each chart's figure as the page shows it: its points, whether uPlot drew it, its placeholder.
const charts = (page) => page.evaluate(() => [...document.querySelectorAll("figure.chart")].map((f) => ({
  id: f.dataset.chart,
  points: Number(f.dataset.points),
  drawn: f.querySelector(".uplot, canvas") !== null,
  placeholder: (f.querySelector("[data-no-samples]") || { textContent: "" }).textContent.trim(),
})));

async function main() {
  const browser = await launchBrowser();
  const errors = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  watchErrors(page, errors);
  let listed = "";

  await step("the spaces list shows the address the space's page shows", async () => {
    await login(page, BASE, "alice", ALICE_PASSWORD);
    // The list as it loads, before any page of the space was opened (whose answer the list
    // would take over).
    const row = page.locator(`tr[data-space="${SPACE_NAME}"]`);
    await row.waitFor({ timeout: 30000 });
    await page.waitForFunction((name) => {
      const cell = document.querySelector(`tr[data-space="${name}"] td.ip`);
      return cell && cell.textContent.trim() !== "";
    }, SPACE_NAME, { timeout: 15000, polling: 250 }).catch(() => {});
    listed = (await row.locator("td.ip").textContent()).trim();
    const info = await page.evaluate(async (id) => (await (await fetch(`/api/v1/spaces/${id}`)).json()), SPACE_ID);
    const list = await page.evaluate(async () => (await (await fetch("/api/v1/spaces")).json()));
    const fromList = list.find((s) => s.id === SPACE_ID) || {};
    check(info.info && info.info.address, `the space's info has an address: ${JSON.stringify(info.info)}`);
    check(fromList.address === info.info.address,
      `GET /spaces says ${JSON.stringify(fromList.address)}, the space's info ${info.info.address}`);
    check(listed === info.info.address, `the list's IP cell says "${listed}", the space's info ${info.info.address}`);
    await page.screenshot({ path: path.join(SHOTS, "space-page-list.png") });
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    const shown = (await page.locator("dd.ip").first().textContent()).trim();
    check(shown === listed, `the page says ${shown}, the list ${listed}`);
  });

  await step("port 22 is SSH: the page offers no http:// link to it, but the ssh command", async () => {
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    await page.locator('[data-connect="ssh-port"]').waitFor({ timeout: 30000 });
    await page.locator('a[href="http://127.0.0.1:8080/"]').waitFor({ timeout: 10000 });  // the ports are listed
    check(await page.locator('a[href^="http://127.0.0.1:22"]').count() === 0, "a link to http://127.0.0.1:22/");
    const forwards = await page.locator('[data-connect="forward"]').allTextContents();
    check(!forwards.some((f) => / 22$/.test(f.trim())), `a forward of port 22: ${JSON.stringify(forwards)}`);
    // How to reach it instead: the ssh lines.
    const ssh = (await page.locator('[data-connect="ssh"]').textContent()).trim();
    check(ssh === `bowline ssh ${SPACE_NAME}`, `the SSH line says "${ssh}"`);
    const host = (await page.locator('[data-connect="ssh-host"]').textContent()).trim();
    check(host === `ssh ${SPACE_NAME}.bowline`, `the ssh config line says "${host}"`);
    // Other listed ports keep their forward and link.
    const web = page.locator('dd[data-port="8080"]');
    check(await web.locator('a[href="http://127.0.0.1:8080/"]').count() === 1, "port 8080 has no link");
    check((await web.locator('[data-connect="forward"]').textContent()).includes(`bowline forward ${SPACE_NAME} 8080`),
      "port 8080's forward line");
    // The sshPort state is one the page has words for (the test driver's guest answers nothing).
    const state = await page.locator('[data-connect="ssh-port"]').getAttribute("data-state");
    const words = (await page.locator('[data-connect="ssh-port"]').textContent()).trim();
    check(state !== "open", `port 22 is "${state}" with no sshd anywhere`);
    check(words !== state || state === "", `port 22's state "${state}" has no words of its own`);
    await page.screenshot({ path: path.join(SHOTS, "space-page-connect.png") });
  });

  await step("charts with no samples yet say so instead of drawing a time axis", async () => {
    // The server's own answer: it samples once an hour, and has not yet since the space started.
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    const none = page.locator('[data-stats="none"]');
    await none.waitFor({ timeout: 30000 });
    check((await none.textContent()).trim() === "no samples yet", "the section's words");
    check(await page.locator("section.use .uplot, section.use canvas").count() === 0, "a chart was drawn");
    await page.screenshot({ path: path.join(SHOTS, "space-page-no-samples.png") });
  });

  await step("one sample alone draws no chart (uPlot would spread it over years); two do", async () => {
    const now = Date.now();
    let answer = statsAnswer([now], { memoryUsedBytes: [40 << 20], memoryAvailableBytes: [200 << 20] });
    await page.route(/\/api\/v1\/spaces\/[^/]+\/stats/, (route) =>
      route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(answer) }));
    await page.goto(`${BASE}/#/`);
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    await page.locator('figure[data-chart="cpu"]').waitFor({ timeout: 30000 });
    let seen = await charts(page);
    check(seen.length === 4, `charts: ${JSON.stringify(seen)}`);
    for (const c of seen) {
      check(c.points === 1 && !c.drawn, `chart ${c.id} was drawn from one point: ${JSON.stringify(c)}`);
    }
    const byId = Object.fromEntries(seen.map((c) => [c.id, c]));
    check(byId.cpu.placeholder === "no samples yet", `the CPU chart says "${byId.cpu.placeholder}"`);
    check(byId.disk.placeholder === "no samples yet", `the disk chart says "${byId.disk.placeholder}"`);
    check(/one sample/.test(byId.memory.placeholder), `the memory chart says "${byId.memory.placeholder}"`);
    await page.screenshot({ path: path.join(SHOTS, "space-page-one-sample.png") });
    // Two samples: a time axis of ten seconds, drawn.
    answer = statsAnswer([now - 10000, now], { cpuPercent: [null, 12.5],
      memoryUsedBytes: [40 << 20, 41 << 20], memoryAvailableBytes: [200 << 20, 200 << 20] });
    await page.goto(`${BASE}/#/`);
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    await page.waitForFunction(() => document.querySelector('figure[data-chart="cpu"] canvas') !== null,
      null, { timeout: 30000, polling: 250 });
    seen = await charts(page);
    const drawn = Object.fromEntries(seen.map((c) => [c.id, c]));
    check(drawn.cpu.drawn && drawn.memory.drawn, `two samples: ${JSON.stringify(seen)}`);
    check(drawn.disk.placeholder === "no samples yet" && !drawn.disk.drawn, `disk without figures: ${JSON.stringify(drawn.disk)}`);
    await page.unroute(/\/api\/v1\/spaces\/[^/]+\/stats/);
    check(errors.length === 0, `page errors: ${errors.join("; ")}`);
  });

  await step("alice shares her space with bob: he sees what his role allows, and may leave", async () => {
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    const form = page.locator("form.share");
    await form.waitFor({ timeout: 30000 });
    check(await page.locator("section.shares .empty").count() === 1, "a share before any was made");
    await form.locator('input[name="user"]').fill("nobody");
    await form.locator('button[type="submit"]').click();
    const refused = page.locator("section.shares .error");
    await refused.waitFor({ timeout: 10000 });
    check(/nobody/.test(await refused.textContent()), `a share with no such user: "${await refused.textContent()}"`);
    await form.locator('input[name="user"]').fill("bob");
    await form.locator('select[name="role"]').selectOption("viewer");
    await form.locator('button[type="submit"]').click();
    await page.locator('tr[data-share="bob"]').waitFor({ timeout: 10000 });
    check(await page.locator('tr[data-share="bob"] select').inputValue() === "viewer", "bob's role in the list");

    const bobContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const bob = await bobContext.newPage();
    watchErrors(bob, errors);
    await login(bob, BASE, "bob", BOB_PASSWORD);
    const row = bob.locator(`tr[data-space="${SPACE_NAME}"]`);
    await row.waitFor({ timeout: 30000 });
    check((await row.locator("td.owner").textContent()).trim() === "alice", "bob's list names alice as the owner");
    await bob.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    await bob.locator('section.shares [data-role="viewer"]').waitFor({ timeout: 30000 });
    const button = (text) => bob.locator("nav.menu .actions button", { hasText: text });
    check(await button("Stop").isDisabled(), "a viewer is offered Stop");
    check(await button("Delete").isDisabled(), "a viewer is offered Delete");
    check(await bob.locator("form.take-snapshot, form.clone, form.share").count() === 0,
      "a viewer is offered snapshots, clones or sharing");
    await bob.screenshot({ path: path.join(SHOTS, "space-page-shared-viewer.png") });

    await page.locator('tr[data-share="bob"] select').selectOption("user");
    await page.locator("section.shares .ok", { hasText: "bob is now user" }).waitFor({ timeout: 10000 });
    await bob.reload();
    await bob.locator('section.shares [data-role="user"]').waitFor({ timeout: 30000 });
    check(!(await button("Stop").isDisabled()), "a user of a running space may not stop it");
    check(await button("Delete").isDisabled(), "a user is offered Delete");

    bob.once("dialog", (d) => d.accept());
    await bob.locator("section.shares button", { hasText: "Leave" }).click();
    await bob.waitForFunction(() => location.hash === "#/spaces", null, { timeout: 10000 });
    await bob.waitForFunction((name) => !document.querySelector(`tr[data-space="${name}"]`), SPACE_NAME,
      { timeout: 10000, polling: 250 });
    const left = await page.evaluate(async (id) => (await (await fetch(`/api/v1/spaces/${id}/shares`)).json()), SPACE_ID);
    check(Array.isArray(left) && left.length === 0, `alice's space is still shared: ${JSON.stringify(left)}`);
    check(errors.length === 0, `page errors: ${errors.join("; ")}`);
    await bobContext.close();
  });

  await browser.close();
}

finish(main);
