// Shared parts of the browser tests (e2e.mjs, console_login.mjs): Debian's Chromium through
// playwright-core with no outside connections, steps that pass, fail or skip, and the UI's
// login, viewers and WebSocket upgrades.
import { chromium } from "playwright-core";
import http from "node:http";

export const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

export class Skip extends Error {}

export function check(condition, message) {
  if (!condition) throw new Error(message);
}

// One test run: `step` records each named step, `finish` prints "N passed, M failed" and exits.
export function testRun(name) {
  const results = [];
  const log = (...a) => console.log(`${name}:`, ...a);
  async function step(title, fn) {
    const t0 = Date.now();
    try {
      await fn();
      results.push({ title, ok: true });
      log(`PASS ${title} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      return true;
    } catch (e) {
      if (e instanceof Skip) {
        results.push({ title, skipped: e.message });
        log(`SKIP ${title}: ${e.message}`);
        return false;
      }
      results.push({ title, ok: false });
      log(`FAIL ${title}: ${e.stack || e}`);
      return false;
    }
  }
  function finish(main) {
    main().catch((e) => {
      results.push({ title: "run", ok: false });
      log(`FAIL: ${e.stack || e}`);
    }).finally(() => {
      const passed = results.filter((r) => r.ok).length;
      const failed = results.filter((r) => r.ok === false).length;
      const skipped = results.filter((r) => r.skipped).length;
      console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
      process.exit(failed ? 1 : 0);
    });
  }
  return { log, step, finish };
}

// SERVER_SPKI (base64 SHA-256 of a certificate's public key, or several, comma-separated): those
// certificates are trusted, as pins, and no other (a server's self-signed certificate, without touching any trust store).
export function launchBrowser() {
  const pinned = process.env.SERVER_SPKI ? [`--ignore-certificate-errors-spki-list=${process.env.SERVER_SPKI}`] : [];
  // RESOLVE: host-resolver rules ("MAP *.preview.test 198.51.100.17"): names without DNS.
  if (process.env.RESOLVE) pinned.push(`--host-resolver-rules=${process.env.RESOLVE}`);
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [...pinned,
      "--no-sandbox", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--disable-default-apps", "--disable-extensions", "--no-first-run",
      "--disable-domain-reliability", "--disable-client-side-phishing-detection",
      "--metrics-recording-only", "--no-pings", "--disable-features=Translate,OptimizationHints,MediaRouter",
    ],
  });
}

// The server's answer to a WebSocket upgrade of `p` under BASE/api/v1: its status code (101:
// accepted). With a cookie header and the page's Origin, as a browser would send them, or
// with a bearer token.
export function upgradeStatus(base, p, { cookie, token, origin } = {}) {
  return new Promise((resolve, reject) => {
    const headers = {
      Connection: "Upgrade",
      Upgrade: "websocket",
      "Sec-WebSocket-Version": "13",
      "Sec-WebSocket-Key": Buffer.from(String(Math.random()).slice(0, 16)).toString("base64"),
    };
    if (cookie) headers.Cookie = cookie;
    if (token) headers.Authorization = `Bearer ${token}`;
    if (origin) headers.Origin = origin;
    const req = http.request(`${base}/api/v1${p}`, { headers });
    req.on("upgrade", (res, socket) => { socket.destroy(); resolve(101); });
    req.on("response", (res) => { res.resume(); resolve(res.statusCode); });
    req.on("error", reject);
    req.setTimeout(15000, () => { req.destroy(new Error("upgrade timed out")); });
    req.end();
  });
}

// Pages must not trip the Content-Security-Policy nor throw.
export function watchErrors(page, errors) {
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
}

export async function login(page, base, username, password) {
  await page.goto(base + "/");
  // Keyboard only: the username field has focus; Tab to the password; Enter submits.
  await page.waitForSelector('form[aria-label="Log in"] input[name=username]:focus');
  await page.keyboard.type(username);
  await page.keyboard.press("Tab");
  await page.keyboard.type(password);
  await page.keyboard.press("Enter");
  await page.waitForSelector("header.top nav");
}

// Opens the space's VM Display or VM Console (`kind`: "display" | "console") from its menu;
// returns the viewer's window.
export async function openViewer(page, base, spaceId, kind, errors) {
  await page.goto(`${base}/#/spaces/${spaceId}`);
  const item = page.locator(`button[data-menu="${kind}"]`);
  await item.waitFor();
  const [popup] = await Promise.all([page.waitForEvent("popup"), item.click()]);
  watchErrors(popup, errors);
  await popup.waitForLoadState();
  return popup;
}

// Waits until the console viewer's terminal text matches `pattern`; false when it did not
// within `timeout` ms.
export function consoleShows(popup, pattern, timeout) {
  return popup.waitForFunction(([source, flags]) => new RegExp(source, flags).test(window.bowlineConsoleText()),
    [pattern.source, pattern.flags], { timeout, polling: 500 }).then(() => true, () => false);
}

// The console viewer's login prompt: in the scrollback when the guest printed it before the
// viewer came; Enter asks getty for a fresh one otherwise (the guest may still be booting).
export async function awaitLoginPrompt(popup, tries = 10) {
  let ok = await consoleShows(popup, /login:/, 20000);
  for (let i = 0; !ok && i < tries; i++) {
    await popup.locator(".term").click();
    await popup.keyboard.press("Enter");
    ok = await consoleShows(popup, /login:/, 20000);
  }
  return ok;
}
