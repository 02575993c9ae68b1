// The web UI in Debian's Chromium (playwright-core, headless, no outside connections) against a
// real bowline server and guest; started by tests/e2e/web_ui_test.sh, which makes the server,
// the users alice (use-vnc, use-web-terminal) and bob (neither) and the template TEMPLATE
// (display and console on). Prints "N passed, M failed" (and the skipped cases with why).
import path from "node:path";
import { execFileSync } from "node:child_process";
import {
  env, Skip, check, testRun, launchBrowser, upgradeStatus as upgradeAt, watchErrors, login as loginAt,
  openViewer as openViewerAt, awaitLoginPrompt, consoleShows,
} from "./lib.mjs";

const BASE = env("BASE_URL");
const TEMPLATE = env("TEMPLATE");
const SHOTS = env("SCREENSHOT_DIR");
const ALICE_PASSWORD = env("ALICE_PASSWORD");
const BOB_PASSWORD = env("BOB_PASSWORD");
const ADMIN_TOKEN = env("ADMIN_TOKEN");
const CHOSEN_IP = env("CHOSEN_IP");  // in the template's range, for a space with a chosen address
// Optional: the tool that has libvirtd drop a process's connections, and the server's pid.
const DROP_LIBVIRT_CLIENTS = process.env.DROP_LIBVIRT_CLIENTS || "";
const SERVER_PID = process.env.SERVER_PID || "";
const TAG = String(process.pid);
const BOOT_TIMEOUT = Number(process.env.BOOT_TIMEOUT || 300) * 1000;  // TCG on busy cores

const { step, finish } = testRun("web_ui_test");
const upgradeStatus = (p, opts) => upgradeAt(BASE, p, opts);
const login = (page, username, password) => loginAt(page, BASE, username, password);

// Whether the noVNC canvas shows at least `min` distinct colours (1: a blank screen).
// A predicate function, not a string: a string predicate is evaluated with eval
// in the page, which the UI's Content-Security-Policy rightly refuses.
const screenHasContent = (min) => {
  const c = document.querySelector(".screen canvas");
  if (!c || !c.width || !c.height) return false;
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  const seen = new Set();
  for (let i = 0; i < d.length && seen.size < 50; i += 4 * 7) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  return seen.size >= min;
};

async function main() {
  const browser = await launchBrowser();
  const errors = [];
  const alice = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await alice.newPage();
  watchErrors(page, errors);
  let spaceId = "";
  let sessions = true;

  await step("the UI is served with a strict Content-Security-Policy", async () => {
    const r = await fetch(BASE + "/");
    check(r.status === 200, `GET / is ${r.status}`);
    const csp = r.headers.get("content-security-policy") || "";
    check(/default-src 'self'/.test(csp) && /script-src 'self'/.test(csp) && !/unsafe-inline/.test(csp.split("script-src")[1].split(";")[0]),
      `CSP: ${csp}`);
    const s = await fetch(BASE + "/api/v1/session", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    if (s.status === 404) sessions = false;
  });

  await step("log in, create a space from the template, see it reach running without reloading", async () => {
    if (!sessions) throw new Skip("the server has no POST /api/v1/session yet");
    await login(page, "alice", ALICE_PASSWORD);
    await page.evaluate(() => { window.__sameDocument = true; });
    await page.click("text=New space");
    await page.selectOption("form.create select[name=template]", TEMPLATE);
    await page.fill("form.create input[name=name]", "webbox");
    await page.keyboard.press("Enter");
    const row = page.locator('tr[data-space="webbox"]');
    await row.waitFor();
    await page.screenshot({ path: path.join(SHOTS, "spaces-creating.png") });
    await row.locator('[data-state="running"]').waitFor({ timeout: BOOT_TIMEOUT });
    check(await page.evaluate(() => window.__sameDocument === true), "the page was reloaded");
    const ip = (await row.locator("td.ip").textContent()).trim();
    check(/^198\.51\.100\.\d+$/.test(ip), `the list shows the IP "${ip}"`);
    await page.screenshot({ path: path.join(SHOTS, "spaces-running.png") });
    spaceId = (await row.locator("a").first().getAttribute("href")).split("/").pop();
  });

  const openViewer = (kind) => openViewerAt(page, BASE, spaceId, kind, errors);

  await step("VM Display: the guest's screen, its resolution, 1:1/Fit remembered", async () => {
    if (!spaceId) throw new Skip("no running space");
    const s = await upgradeStatus(`/spaces/${spaceId}/vnc`, { token: ADMIN_TOKEN });
    if (s === 404) throw new Skip("the server has no /vnc WebSocket route yet (404 on upgrade)");
    const popup = await openViewer("display");
    await popup.locator('[data-status="connected"]').waitFor({ timeout: 60000 });
    await popup.waitForFunction(() => document.querySelector(".resolution").dataset.resolution !== "", null, { timeout: 60000 });
    const res = await popup.locator(".resolution").getAttribute("data-resolution");
    const [w, h] = res.split("x").map(Number);
    check(w >= 320 && h >= 200, `resolution ${res}`);
    check(/^\d+ × \d+$/.test((await popup.locator(".resolution").textContent()).trim()), "the toolbar shows the resolution");
    // The guest's text console (a login prompt on tty1) is on the screen: not one colour.
    await popup.waitForFunction(screenHasContent, 2, { timeout: BOOT_TIMEOUT, polling: 1000 });
    await popup.screenshot({ path: path.join(SHOTS, "display-native.png") });
    // 1:1 shows native pixels: the canvas is the framebuffer's size.
    const scale = popup.locator("button.scale");
    if ((await scale.getAttribute("data-scale")) === "fit") await scale.click();
    check((await scale.getAttribute("data-scale")) === "native", "1:1 after a click");
    const canvasSize = () => popup.evaluate(() => {
      const c = document.querySelector(".screen canvas");
      return { w: c.clientWidth, h: c.clientHeight };
    });
    let size = await canvasSize();
    check(size.w === w && size.h === h, `1:1 canvas ${size.w}x${size.h}, framebuffer ${res}`);
    // Fit: scaled into a window smaller than the framebuffer.
    await popup.setViewportSize({ width: Math.floor(w / 2), height: Math.floor(h / 2) + 60 });
    await scale.click();
    check((await scale.getAttribute("data-scale")) === "fit", "Fit after a click");
    await popup.waitForFunction((fw) => document.querySelector(".screen canvas").clientWidth < fw, w);
    size = await canvasSize();
    check(size.w <= Math.floor(w / 2) && size.h < h, `Fit canvas ${size.w}x${size.h}`);
    await popup.screenshot({ path: path.join(SHOTS, "display-fit.png") });
    // Remembered by this browser.
    await popup.reload();
    await popup.locator('[data-status="connected"]').waitFor({ timeout: 60000 });
    check((await popup.locator("button.scale").getAttribute("data-scale")) === "fit", "Fit after a reload");
    await popup.locator("button.scale").click();
    await popup.reload();
    await popup.locator('[data-status="connected"]').waitFor({ timeout: 60000 });
    check((await popup.locator("button.scale").getAttribute("data-scale")) === "native", "1:1 after a reload");
    await popup.close();
  });

  await step("VM Console: the guest's login prompt", async () => {
    if (!spaceId) throw new Skip("no running space");
    const s = await upgradeStatus(`/spaces/${spaceId}/console`, { token: ADMIN_TOKEN });
    if (s === 404) throw new Skip("the server has no /console WebSocket route yet (404 on upgrade)");
    const popup = await openViewer("console");
    await popup.locator('[data-status="connected"]').waitFor({ timeout: 60000 });
    const ok = await awaitLoginPrompt(popup);
    await popup.screenshot({ path: path.join(SHOTS, "console.png") });
    check(ok, `no login: prompt; the terminal shows:\n${await popup.evaluate(() => window.bowlineConsoleText())}`);
    await popup.close();
  });

  // libvirtd dropping the server's connection kills its console stream; a guest reboot sends
  // a whole new boot through it. The open viewer must keep showing the guest's output and
  // taking keystrokes, on the same WebSocket (the page has no automatic reconnect).
  await step("VM Console survives libvirtd dropping the server's connection and a guest reboot", async () => {
    if (!spaceId) throw new Skip("no running space");
    if (!DROP_LIBVIRT_CLIENTS || !SERVER_PID) throw new Skip("DROP_LIBVIRT_CLIENTS and SERVER_PID are not set");
    const popup = await openViewer("console");
    await popup.locator('[data-status="connected"]').waitFor({ timeout: 60000 });
    const text = () => popup.evaluate(() => window.bowlineConsoleText());
    const stillConnected = async () => (await popup.locator(".status").getAttribute("data-status")) === "connected";
    // Types `echo WORD` (quoted so the echo of the keystrokes differs from the output) until
    // the output line appears: keystrokes sent while the stream is reopened may be lost.
    const runEcho = async (word) => {
      const output = new RegExp(`^${word}$`, "m");
      for (let i = 0; i < 20; i++) {
        await popup.keyboard.type(`echo ${word.slice(0, 3)}''${word.slice(3)}`);
        await popup.keyboard.press("Enter");
        if (await consoleShows(popup, output, 5000)) return true;
      }
      return false;
    };
    await popup.locator(".term").click();
    check(await awaitLoginPrompt(popup), `no login: prompt:\n${await text()}`);
    await popup.keyboard.type("root");
    await popup.keyboard.press("Enter");
    check(await runEcho(`before-${TAG}`), `no output before the drop:\n${await text()}`);

    const dropped = Number(execFileSync(DROP_LIBVIRT_CLIENTS, [SERVER_PID], { encoding: "utf8" }).trim());
    check(dropped >= 1, `libvirtd dropped ${dropped} connections of the server`);
    check(await runEcho(`dropped-${TAG}`), `no output after libvirtd dropped the connection:\n${await text()}`);
    check(await stillConnected(), "the viewer's WebSocket closed when libvirtd dropped the connection");

    const boots = (t) => (t.match(/TEST: init start/g) || []).length;
    const before = boots(await text());
    await popup.keyboard.type("reboot");
    await popup.keyboard.press("Enter");
    const rebooted = await popup.waitForFunction((n) => (window.bowlineConsoleText().match(/TEST: init start/g) || []).length > n,
      before, { timeout: BOOT_TIMEOUT, polling: 1000 }).then(() => true, () => false);
    check(rebooted, `no new boot on the console after reboot:\n${await text()}`);
    // The new boot's prompt (the old one is in the scrollback); Enter asks getty for another.
    const promptAfterBoot = () => popup.waitForFunction(() => {
      const t = window.bowlineConsoleText();
      return /login:/.test(t.slice(t.lastIndexOf("TEST: init start")));
    }, null, { timeout: 30000, polling: 500 }).then(() => true, () => false);
    let prompted = false;
    for (let i = 0; !prompted && i < BOOT_TIMEOUT / 30000; i++) {
      prompted = await promptAfterBoot();
      if (!prompted) await popup.keyboard.press("Enter");
    }
    check(prompted, `no login: prompt after the reboot:\n${await text()}`);
    await popup.keyboard.type("root");
    await popup.keyboard.press("Enter");
    check(await runEcho(`rebooted-${TAG}`), `typing after the reboot:\n${await text()}`);
    check(await stillConnected(), "the viewer's WebSocket closed over the reboot");
    await popup.screenshot({ path: path.join(SHOTS, "console-after-drop-and-reboot.png") });
    await popup.close();
  });

  await step("a user without use-vnc / use-web-terminal gets neither item, and sockets are refused", async () => {
    if (!sessions) throw new Skip("the server has no POST /api/v1/session yet");
    const bobContext = await browser.newContext();
    const bob = await bobContext.newPage();
    watchErrors(bob, errors);
    await login(bob, "bob", BOB_PASSWORD);
    await bob.click("text=New space");
    await bob.selectOption("form.create select[name=template]", TEMPLATE);
    await bob.fill("form.create input[name=name]", "bobbox");
    await bob.uncheck("form.create input[name=start]");
    await bob.check("form.create input[name=ipmode] >> nth=1");  // "chosen"
    await bob.fill("form.create input[name=ip]", CHOSEN_IP);
    await bob.locator("form.create button[type=submit]").click();
    const row = bob.locator('tr[data-space="bobbox"]');
    await row.locator('[data-state="stopped"]').waitFor({ timeout: 120000 });
    check((await row.locator("td.ip").textContent()).trim() === CHOSEN_IP, "bob's space has the chosen IP");
    const bobSpace = (await row.locator("a").first().getAttribute("href")).split("/").pop();
    await bob.goto(`${BASE}/#/spaces/${bobSpace}`);
    await bob.locator("nav.menu").getByRole("button", { name: "Start", exact: true }).waitFor();
    check(await bob.locator('button[data-menu="display"]').count() === 0, "bob sees VM Display");
    check(await bob.locator('button[data-menu="console"]').count() === 0, "bob sees VM Console");
    await bob.screenshot({ path: path.join(SHOTS, "space-without-permissions.png") });
    // The same page for alice has both (the template enables them).
    if (spaceId) {
      await page.goto(`${BASE}/#/spaces/${spaceId}`);
      await page.locator('button[data-menu="display"]').waitFor();
      await page.locator('button[data-menu="console"]').waitFor();
    }
    const vnc = await upgradeStatus(`/spaces/${spaceId || bobSpace}/vnc`, { token: ADMIN_TOKEN });
    if (vnc === 404) throw new Skip("the server has no WebSocket routes yet (404 on upgrade)");
    // Straight at the sockets with bob's session, as his browser would connect.
    const cookie = (await bobContext.cookies(BASE)).map((c) => `${c.name}=${c.value}`).join("; ");
    for (const kind of ["vnc", "console"]) {
      const own = await upgradeStatus(`/spaces/${bobSpace}/${kind}`, { cookie, origin: BASE });
      check(own === 403, `bob's own space /${kind}: ${own}, expected 403`);
      if (spaceId) {
        const other = await upgradeStatus(`/spaces/${spaceId}/${kind}`, { cookie, origin: BASE });
        check(other === 404, `alice's space /${kind} for bob: ${other}, expected 404`);
      }
      const opened = await bob.evaluate((url) => new Promise((resolve) => {
        const ws = new WebSocket(url);
        ws.onopen = () => { ws.close(); resolve(true); };
        ws.onerror = () => resolve(false);
        ws.onclose = () => resolve(false);
      }), `${BASE.replace(/^http/, "ws")}/api/v1/spaces/${bobSpace}/${kind}`);
      check(!opened, `bob's browser opened /${kind}`);
    }
    await bobContext.close();
  });

  await step("delete with progress: the row goes away without reloading", async () => {
    if (!spaceId) throw new Skip("no space");
    await page.goto(`${BASE}/#/spaces`);
    await page.evaluate(() => { window.__sameDocument = true; });
    page.once("dialog", (d) => d.accept());
    const row = page.locator('tr[data-space="webbox"]');
    await row.locator("button", { hasText: "Delete" }).click();
    await row.waitFor({ state: "detached", timeout: 120000 });
    check(await page.evaluate(() => window.__sameDocument === true), "the page was reloaded");
  });

  await step("no Content-Security-Policy violations or script errors", async () => {
    check(errors.length === 0, errors.join("\n"));
  });

  await browser.close();
  // Whatever is left (bob's space) goes with the server's data directory; the domains with
  // the test's prefix are removed by the shell script.
}

finish(main);
