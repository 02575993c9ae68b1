// The web UI in Debian's Chromium (playwright-core, headless, no outside connections) against a
// real bowline server and guest; started by tests/e2e/web_ui_test.sh, which makes the server,
// the users alice (use-vnc, use-web-terminal), bob (neither) and ada (admin) and the template TEMPLATE
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
const ADA_PASSWORD = env("ADA_PASSWORD");  // ada: an admin who logs in to the UI
const CHOSEN_IP = env("CHOSEN_IP");  // in the template's range, for a space with a chosen address
const NEW_IP = env("NEW_IP");  // another free address in the range: set-ip from the space's page
const OUTSIDE_IP = env("OUTSIDE_IP");  // in the subnet, outside the range: refused
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
  // Records the viewer's requests to fit its window around the guest's screen.
  await alice.addInitScript(() => {
    window.__resizes = [];
    const resize = window.resizeTo.bind(window);
    window.resizeTo = (w, h) => {
      window.__resizes.push([w, h]);
      resize(w, h);
    };
  });
  const page = await alice.newPage();
  watchErrors(page, errors);
  let spaceId = "";
  let bobSpaceId = "";  // bob's stopped bridged space
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

  await step("a node's warning (software emulation) is shown above the pages", async () => {
    if (!sessions) throw new Skip("the server has no POST /api/v1/session yet");
    const r = await fetch(BASE + "/api/v1/nodes", { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const warnings = (await r.json()).flatMap((n) => n.warnings || []);
    if (warnings.length) {
      const notice = page.locator(".notice").first();
      await notice.waitFor({ timeout: 10000 });
      const text = (await notice.textContent()).trim();
      check(text.includes("software emulation") && text.includes("several times slower"), `the notice reads "${text}"`);
    } else {
      check(await page.locator(".notice").count() === 0, "a notice is shown although no node warns");
    }
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
    // The window is fitted around the guest's screen (and the toolbar), within the screen.
    const fit = await popup.evaluate(() => ({
      calls: window.__resizes, availW: screen.availWidth, availH: screen.availHeight,
      chromeW: Math.max(0, window.outerWidth - window.innerWidth),
    }));
    check(fit.calls.length > 0, "the viewer asked to fit its window to the guest's screen");
    if (fit.calls.length > 0) {
      const [rw, rh] = fit.calls[fit.calls.length - 1];
      check(rw === Math.min(w + fit.chromeW, fit.availW), `window width ${rw} for a ${w}-wide screen`);
      check(rh <= fit.availH && (h >= fit.availH ? rh === fit.availH : rh > h),
        `window height ${rh} for a ${h}-high screen and its toolbar`);
    }
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
    // Ctrl-C first: a line garbled by keystrokes that raced the prompt (an odd quote leaves
    // the shell waiting for the rest of a string) must not swallow the next attempt.
    const runEcho = async (word) => {
      const output = new RegExp(`^${word}$`, "m");
      for (let i = 0; i < 20; i++) {
        await popup.keyboard.press("Control+C");
        await popup.keyboard.type(`echo ${word.slice(0, 3)}''${word.slice(3)}`);
        await popup.keyboard.press("Enter");
        if (await consoleShows(popup, output, 5000)) return true;
      }
      return false;
    };
    // Types the user name until the shell's prompt follows the last login: prompt (what is
    // typed while login is still starting can be lost).
    const logIn = async () => {
      for (let i = 0; i < 5; i++) {
        await popup.keyboard.type("root");
        await popup.keyboard.press("Enter");
        const shell = await popup.waitForFunction(() => {
          const t = window.bowlineConsoleText();
          return /~ #/.test(t.slice(t.lastIndexOf("login:")));
        }, null, { timeout: 15000, polling: 250 }).then(() => true, () => false);
        if (shell) return true;
        await popup.keyboard.press("Enter");  // a fresh login: prompt
      }
      return false;
    };
    await popup.locator(".term").click();
    check(await awaitLoginPrompt(popup), `no login: prompt:\n${await text()}`);
    check(await logIn(), `no shell prompt after logging in:\n${await text()}`);
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
    check(await logIn(), `no shell prompt after logging in again:\n${await text()}`);
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
    bobSpaceId = bobSpace;
    await bob.goto(`${BASE}/#/spaces/${bobSpace}`);
    await bob.locator("nav.menu").getByRole("button", { name: "Start", exact: true }).waitFor();
    check(await bob.locator('button[data-menu="display"]').count() === 0, "bob sees VM Display");
    check(await bob.locator('button[data-menu="console"]').count() === 0, "bob sees VM Console");
    // A libvirt space's readiness is known (from its console log): never "unknown".
    const known = await bob.locator("dd.readiness", { hasText: "not booted" })
      .waitFor({ timeout: 10000 }).then(() => true, () => false);
    check(known, `bob's stopped space reads "${(await bob.locator("dd.readiness").textContent()).trim()}"`);
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

  await step("set-ip: a stopped bridged space's page changes its address; a refusal shows by the field", async () => {
    if (!bobSpaceId) throw new Skip("bob has no stopped space (the previous step failed)");
    const ctx = await browser.newContext();
    const bob = await ctx.newPage();
    watchErrors(bob, errors);
    await login(bob, "bob", BOB_PASSWORD);
    await bob.goto(`${BASE}/#/spaces/${bobSpaceId}`);
    const form = bob.locator('form[aria-label="Change the IP address"]');
    await form.waitFor();
    await form.locator("input[name=ip]").fill(OUTSIDE_IP);
    await form.locator("button[type=submit]").click();
    const refusal = form.locator('[role="alert"]');
    await refusal.waitFor();
    const why = (await refusal.textContent()).trim();
    check(why.includes(OUTSIDE_IP) && /outside the template's address range/.test(why), `the refusal reads "${why}"`);
    check(await form.locator("input[name=ip]").getAttribute("aria-invalid") === "true", "the field is not marked invalid");
    await bob.screenshot({ path: path.join(SHOTS, "set-ip-refused.png") });
    await form.locator("input[name=ip]").fill(NEW_IP);
    await form.locator("button[type=submit]").click();
    await form.locator('[role="status"].ok').waitFor();
    check(await refusal.count() === 0, "the old refusal is still shown");
    await bob.locator("dd.ip", { hasText: NEW_IP }).waitFor({ timeout: 10000 });
    const r = await fetch(`${BASE}/api/v1/spaces/${bobSpaceId}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    check((await r.json()).ip === NEW_IP, "the server does not have the new address");
    // The list shows it too, and a running space's page has no form.
    await bob.goto(`${BASE}/#/spaces`);
    await bob.locator('tr[data-space="bobbox"] td.ip', { hasText: NEW_IP }).waitFor({ timeout: 10000 });
    await bob.screenshot({ path: path.join(SHOTS, "set-ip-done.png") });
    await ctx.close();
    if (spaceId) {
      await page.goto(`${BASE}/#/spaces/${spaceId}`);
      await page.locator("dd.ip").waitFor();  // a running space has a second dl.facts (Connect)
      check(await page.locator('form[aria-label="Change the IP address"]').count() === 0, "a running space offers set-ip");
    }
  });

  await step("snapshots: a running space's page takes, lists, refuses a taken name and deletes a snapshot", async () => {
    if (!spaceId) throw new Skip("no space");
    await page.goto(`${BASE}/#/spaces/${spaceId}`);
    const form = page.locator('form[aria-label="Take a snapshot"]');
    await form.waitFor();
    await form.locator("input[name=name]").fill("ui-snap");
    await form.locator("button[type=submit]").click();
    const row = page.locator('tr[data-snapshot="ui-snap"]');
    await row.waitFor({ timeout: 120000 });
    const cells = (await row.locator("td").allTextContents()).map((t) => t.trim());
    check(cells[2] === "running", `the snapshot was taken "${cells[2]}", expected running`);
    const r = await fetch(`${BASE}/api/v1/spaces/${spaceId}/snapshots`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const listed = await r.json();
    check(listed.length === 1 && listed[0].name === "ui-snap" && listed[0].running === true, `the API lists ${JSON.stringify(listed)}`);
    await page.screenshot({ path: path.join(SHOTS, "snapshot-taken.png") });
    await form.locator("input[name=name]").fill("ui-snap");
    await form.locator("button[type=submit]").click();
    const refusal = page.locator('section.snapshots [role="alert"]');
    await refusal.waitFor({ timeout: 20000 });
    check(/already has a snapshot named ui-snap/.test(await refusal.textContent()), `the refusal reads "${await refusal.textContent()}"`);
    page.once("dialog", (d) => d.accept());
    await row.locator("button.danger").click();
    await row.waitFor({ state: "detached", timeout: 60000 });
    const after = await (await fetch(`${BASE}/api/v1/spaces/${spaceId}/snapshots`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
    check(after.length === 0, `after the delete the API lists ${JSON.stringify(after)}`);
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

  // The admin pages, as the admin ada (no guest needed).
  let admin = null;
  let natTemplate = "";  // saved by the templates step; pools take NAT templates only
  const apiGet = async (p) => {
    const r = await fetch(`${BASE}/api/v1${p}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    return { status: r.status, body: r.status === 200 ? await r.json() : null };
  };
  const adminPage = async () => {
    if (!sessions) throw new Skip("the server has no POST /api/v1/session yet");
    if (!admin) {
      admin = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      watchErrors(admin, errors);
      await login(admin, "ada", ADA_PASSWORD);
    }
    return admin;
  };

  await step("templates: an invalid template's line:column error is shown at its line; a valid one is saved", async () => {
    const adm = await adminPage();
    const name = `tpl-${TAG}`;
    await adm.goto(`${BASE}/#/templates/new`);
    const area = adm.locator('textarea[aria-label="Template YAML"]');
    await area.waitFor();
    await adm.locator("section.template > label input").fill(name);
    const bad = "name: x-${{ .space.name }}\nimage: tiny\nmemory: 256M\ncpus: many\nnetwork:\n  mode: nat\n  bridge: default\n";
    await area.fill(bad);
    await adm.getByRole("button", { name: "Validate", exact: true }).click();
    const item = adm.locator(".diagnostics li.error");
    await item.first().waitFor();
    check(await item.count() === 1, `${await item.count()} errors listed`);
    const where = (await item.locator(".pos").textContent()).trim();
    check(where === "4:7", `the error is at ${where}, expected 4:7 (the value of cpus)`);
    check(/cpus/.test(await item.textContent()) && /many/.test(await item.textContent()), await item.textContent());
    const marked = await adm.locator(".gutter div.error").allTextContents();
    check(marked.join(",") === "4", `the gutter marks lines [${marked}], expected [4]`);
    check(/4:7/.test(await adm.locator(".gutter div.error").getAttribute("title")), "the marked line's title names 4:7");
    await adm.screenshot({ path: path.join(SHOTS, "template-invalid.png") });
    // The error's button puts the cursor on the value.
    await item.locator("button").click();
    const caret = await area.evaluate((a) => a.selectionStart);
    check(caret === bad.indexOf("many"), `the cursor is at ${caret}, expected ${bad.indexOf("many")}`);

    await area.fill(bad.replace("cpus: many", "cpus: 1"));
    await adm.getByRole("button", { name: "Validate", exact: true }).click();
    await adm.locator('[role="status"].ok', { hasText: "Valid." }).waitFor();
    check(await adm.locator(".gutter div.error").count() === 0, "lines still marked after the fix");
    await adm.getByRole("button", { name: "Save", exact: true }).click();
    await adm.waitForFunction((n) => location.hash === `#/templates/${n}`, name);
    await adm.locator(".bar span", { hasText: "revision 1" }).waitFor();
    const saved = await apiGet(`/templates/${name}`);
    check(saved.status === 200 && /cpus: 1/.test(saved.body.yaml), `GET /templates/${name}: ${saved.status}`);
    await adm.goto(`${BASE}/#/templates`);
    await adm.locator(`tr[data-template="${name}"]`).waitFor();
    await adm.screenshot({ path: path.join(SHOTS, "templates.png") });
    natTemplate = name;
  });

  await step("pools: an admin creates a pool (no members kept ready) and deletes it", async () => {
    if (!natTemplate) throw new Skip("no NAT template (the templates step failed)");
    const adm = await adminPage();
    const name = `pool-${TAG}`;
    await adm.goto(`${BASE}/#/pools`);
    const form = adm.locator('form[aria-label="New pool"]');
    await form.waitFor();
    await form.locator("input[name=name]").fill(name);
    await form.locator("select[name=template]").selectOption(natTemplate);
    await form.locator("input[name=size]").fill("0");
    await form.locator("button[type=submit]").click();
    const row = adm.locator(`tr[data-pool="${name}"]`);
    const refusal = form.locator('[role="alert"]');
    await row.or(refusal).first().waitFor();
    if (await refusal.count()) throw new Error(`the pool was refused: ${await refusal.first().textContent()}`);
    check((await row.locator("td").nth(1).textContent()).trim() === natTemplate, "the row shows the template");
    check(/0 of 0/.test(await row.textContent()), `the row shows ${await row.textContent()}`);
    check(await row.locator("button", { hasText: "Claim" }).isDisabled(), "Claim is enabled with nothing ready");
    const pool = await apiGet(`/pools/${name}`);
    check(pool.status === 200 && pool.body.size === 0 && pool.body.template === natTemplate, `GET /pools/${name}: ${pool.status}`);
    await adm.screenshot({ path: path.join(SHOTS, "pools.png") });
    adm.once("dialog", (d) => d.accept());
    await row.locator("button", { hasText: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    check((await apiGet(`/pools/${name}`)).status === 404, "the pool is still there after Delete");
  });

  await step("users: an admin creates a user with a permission and grants another; others see no Users page", async () => {
    const adm = await adminPage();
    const username = `dave${TAG}`;
    await adm.goto(`${BASE}/#/users`);
    const form = adm.locator('form[aria-label="New user"]');
    await form.waitFor();
    await form.locator("input[name=username]").fill(username);
    await form.locator("input[name=password]").fill(`dave-${TAG}-password`);
    await form.locator("input[name=new-use-vnc]").check();
    await form.locator("button[type=submit]").click();
    await adm.locator(".ok code").waitFor();  // the first API token, shown once
    const row = adm.locator(`tr[data-user="${username}"]`);
    await row.waitFor();
    check(await row.locator(`input[name="${username}-use-vnc"]`).isChecked(), "use-vnc is not ticked in the row");
    check(!(await row.locator(`input[name="${username}-use-web-terminal"]`).isChecked()), "use-web-terminal is ticked");
    await row.locator(`input[name="${username}-use-web-terminal"]`).check();
    let perms = [];
    for (let i = 0; i < 50; i++) {
      perms = ((await apiGet(`/users/${username}`)).body?.permissions || []).slice().sort();
      if (perms.length === 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    check(perms.join(",") === "use-vnc,use-web-terminal", `the user's permissions: [${perms}]`);
    check((await apiGet(`/users/${username}`)).body.hasPassword === true, "no password set");
    // The quota: set in the row, kept by the server, shown as use against it.
    await row.locator(".quota-form summary").click();
    const quota = row.locator(`form[aria-label="Quota of ${username}"]`);
    await quota.locator("input[name=spaces]").fill("2");
    await quota.locator("input[name=memory]").fill("8G");
    await quota.locator("button[type=submit]").click();
    await row.locator('[data-quota="spaces"]', { hasText: "spaces 0 of 2" }).waitFor();
    const limits = (await apiGet(`/users/${username}`)).body.quota;
    check(limits.spaces.limit === 2 && limits.spaces.source === "user", `spaces quota: ${JSON.stringify(limits.spaces)}`);
    check(limits.memory.limit === 8 * 1024 ** 3, `memory quota: ${JSON.stringify(limits.memory)}`);
    check(limits.cpus.source === "default", `cpus quota: ${JSON.stringify(limits.cpus)}`);
    check(/memory 0 B of 8 GiB/.test(await row.textContent()), `the row shows ${await row.textContent()}`);
    await adm.screenshot({ path: path.join(SHOTS, "users.png") });
    // alice is no admin: no Users link; her own use shows on the spaces page.
    await page.goto(`${BASE}/#/spaces`);
    await page.locator("header.top nav").waitFor();
    await page.locator('.yours [data-quota="spaces"]').waitFor();
    check(await page.locator("header.top nav a", { hasText: "Users" }).count() === 0, "alice sees Users");
  });

  await step("lists sort by a column's header and filter by a text box (users, spaces)", async () => {
    const adm = await adminPage();
    await adm.goto(`${BASE}/#/users`);
    const names = async () => (await adm.locator("tr[data-user]").evaluateAll((rows) => rows.map((r) => r.dataset.user)));
    await adm.locator('tr[data-user="alice"]').waitFor();
    const byName = (a, b) => a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
    const initial = await names();
    check(initial.length >= 4, `users listed: [${initial}]`);
    check(initial.join() === [...initial].sort(byName).join(), `not sorted by name at first: [${initial}]`);
    const header = adm.locator('th[data-sort="username"] button');
    await header.click();
    check((await names()).join() === [...initial].sort(byName).reverse().join(), `not descending after a click: [${await names()}]`);
    check(await adm.locator('th[data-sort="username"]').getAttribute("aria-sort") === "descending", "aria-sort is not descending");
    await header.click();
    check((await names()).join() === [...initial].sort(byName).join(), `not ascending after a second click: [${await names()}]`);
    // Sorted by a number: SSH keys, then created (oldest first: the first admin).
    await adm.locator('th[data-sort="createdAt"] button').click();
    check((await names())[0] === "admin", `the oldest user first: [${await names()}]`);
    const filter = adm.locator('input[aria-label="Filter users"]');
    await filter.fill("ALI");
    await adm.locator(".count", { hasText: `1 of ${initial.length}` }).waitFor();
    check((await names()).join() === "alice", `filtered by "ALI": [${await names()}]`);
    await filter.fill("use-vnc alice");  // every word, in any column
    check((await names()).join() === "alice", `filtered by "use-vnc alice": [${await names()}]`);
    await filter.fill("nobody-has-this");
    check((await names()).length === 0, `filtered by nothing: [${await names()}]`);
    await adm.screenshot({ path: path.join(SHOTS, "users-filtered.png") });
    await filter.fill("");
    check((await names()).length === initial.length, "the filter, emptied, still hides users");
    // The spaces list (bob's stopped space, as the admin sees everyone's).
    await adm.goto(`${BASE}/#/spaces`);
    await adm.locator('tr[data-space="bobbox"]').waitFor();
    const spacesFilter = adm.locator('input[aria-label="Filter spaces"]');
    await spacesFilter.fill("stopped bob");
    check(await adm.locator("tr[data-space]").count() === 1, "filtering spaces by state and owner");
    await spacesFilter.fill("running-nowhere");
    check(await adm.locator("tr[data-space]").count() === 0, "a filter that matches nothing still shows spaces");
  });

  await step("nodes: an admin sees every check of each node with its status and fix, and its warnings", async () => {
    const adm = await adminPage();
    const nodes = (await apiGet("/nodes")).body;
    check(Array.isArray(nodes) && nodes.length >= 1, "GET /nodes");
    await adm.goto(`${BASE}/#/nodes`);
    for (const node of nodes) {
      const section = adm.locator(`section.node[data-node="${node.name}"]`);
      await section.waitFor();
      const rows = section.locator("tr[data-check]");
      check(await rows.count() === node.checks.length, `${node.name}: ${await rows.count()} checks shown, ${node.checks.length} reported`);
      for (const c of node.checks) {
        const row = section.locator(`tr[data-check="${c.name}"]`);
        check(await row.getAttribute("data-status") === c.status, `${c.name}: status ${await row.getAttribute("data-status")}, reported ${c.status}`);
        check((await row.locator("td.status").textContent()).trim() === { ok: "ok", warn: "warning", missing: "missing" }[c.status], `${c.name}: the status reads "${await row.locator("td.status").textContent()}"`);
        if (c.detail) check((await row.locator("td.detail").textContent()).includes(c.detail), `${c.name}: detail missing`);
        if (c.status !== "ok" && c.fix) check((await row.locator("td.fix").textContent()).includes(c.fix), `${c.name}: the fix "${c.fix}" is not shown`);
      }
      const warnings = await section.locator(".warnings li").allTextContents();
      check(warnings.join("|") === (node.warnings || []).join("|"), `${node.name}: warnings [${warnings}] vs [${node.warnings}]`);
      // Sorted by status at first (missing before ok before warn, alphabetically) and filtered.
      const statuses = await rows.evaluateAll((rs) => rs.map((r) => r.dataset.status));
      check(statuses.join() === [...statuses].sort().join(), `checks not sorted by status: [${statuses}]`);
      const first = node.checks[0];
      await section.locator(`input[aria-label="Filter checks of ${node.name}"]`).fill(first.title || first.name);
      check(await section.locator(`tr[data-check="${first.name}"]`).count() === 1, `filtering the checks by "${first.title}"`);
    }
    check(await adm.locator("tr[data-node-row]").count() === nodes.length, "the nodes table");
    await adm.screenshot({ path: path.join(SHOTS, "nodes.png"), fullPage: true });
    // Not for others: alice has no Nodes link.
    await page.goto(`${BASE}/#/spaces`);
    await page.locator("header.top nav").waitFor();
    check(await page.locator("header.top nav a", { hasText: "Nodes" }).count() === 0, "alice sees Nodes");
  });

  await step("no Content-Security-Policy violations or script errors", async () => {
    check(errors.length === 0, errors.join("\n"));
  });

  await browser.close();
  // Whatever is left (bob's space) goes with the server's data directory; the domains with
  // the test's prefix are removed by the shell script.
}

finish(main);
