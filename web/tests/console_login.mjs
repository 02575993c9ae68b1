// The browser's ways into a real Debian guest, in Debian's Chromium: the space's owner logs in to
// the UI; VM Terminal gives a shell over SSH with no password (`id -un`, `stty size` before and
// after the window is resized, a second tab); the Connect panel says port 22 is open and shows
// the pinned fingerprint; VM Console shows getty's login prompt, takes the username and service
// password and runs `hostname; id -un`, whose output must appear on the terminal's screen.
// Started by tests/e2e/web_console_debian_test.sh (which makes the server, the user, the
// template with `console: true` and the running space SPACE_ID). Prints "N passed, M failed".
import path from "node:path";
import { env, check, testRun, launchBrowser, watchErrors, login, openViewer, consoleShows, awaitLoginPrompt } from "./lib.mjs";

const BASE = env("BASE_URL");
const SHOTS = env("SCREENSHOT_DIR");
const SPACE_ID = env("SPACE_ID");
const USERNAME = env("USERNAME");
const PASSWORD = env("PASSWORD");
const SERVICE_PASSWORD = env("SERVICE_PASSWORD");
const GUEST_HOSTNAME = env("GUEST_HOSTNAME");

const { step, finish } = testRun("web_console_debian_test");
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const screen = (popup) => popup.evaluate(() => window.bowlineConsoleText());
const terminalText = (popup) => popup.evaluate(() => window.bowlineTerminalText());
// Waits until the terminal's text matches `pattern`; false when it did not within `timeout` ms.
const terminalShows = (popup, pattern, timeout) =>
  popup.waitForFunction(([source, flags]) => new RegExp(source, flags).test(window.bowlineTerminalText()),
    [pattern.source, pattern.flags], { timeout, polling: 300 }).then(() => true, () => false);
// `stty size` in the terminal: [rows, cols] from the line after the last time it was asked.
async function sttySize(popup, marker) {
  await popup.keyboard.type(`echo ${marker}; stty size`);
  await popup.keyboard.press("Enter");
  const re = new RegExp(`^${marker}\\n(\\d+) (\\d+)$`, "m");
  if (!(await terminalShows(popup, re, 30000))) return null;
  const m = re.exec(await terminalText(popup));
  return [Number(m[1]), Number(m[2])];
}

async function main() {
  const browser = await launchBrowser();
  const errors = [];
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  watchErrors(page, errors);
  let popup = null;

  await step("VM Terminal: a shell as the owner over SSH, no password typed", async () => {
    await login(page, BASE, USERNAME, PASSWORD);
    const term = await openViewer(page, BASE, SPACE_ID, "terminal", errors);
    await term.setViewportSize({ width: 1000, height: 700 });
    await term.locator('[data-status="connected"]').waitFor({ timeout: 90000 });
    await term.locator(".term").click();
    await term.keyboard.type("id -un");
    await term.keyboard.press("Enter");
    const ran = await terminalShows(term, new RegExp(`^${escape(USERNAME)}$`, "m"), 30000);
    await term.screenshot({ path: path.join(SHOTS, "debian-terminal-id.png") });
    check(ran, `no "${USERNAME}" line after id -un; the terminal shows:\n${await terminalText(term)}`);

    const before = await sttySize(term, "size-one");
    check(before, `no stty size answer; the terminal shows:\n${await terminalText(term)}`);
    await term.setViewportSize({ width: 640, height: 420 });
    await term.waitForTimeout(1000);  // the fit, then the resize frame
    const after = await sttySize(term, "size-two");
    check(after, `no stty size answer after the resize; the terminal shows:\n${await terminalText(term)}`);
    check(after[0] < before[0] && after[1] < before[1],
      `stty size did not follow the window: ${before} then ${after}`);

    // A second tab is a shell of its own (its own tty).
    const second = await openViewer(page, BASE, SPACE_ID, "terminal", errors);
    await second.locator('[data-status="connected"]').waitFor({ timeout: 90000 });
    await second.locator(".term").click();
    await second.keyboard.type("echo tty-two $(tty)");
    await second.keyboard.press("Enter");
    await term.keyboard.type("echo tty-one $(tty)");
    await term.keyboard.press("Enter");
    const one = /tty-one (\/dev\/pts\/\d+)/, two = /tty-two (\/dev\/pts\/\d+)/;
    check(await terminalShows(term, one, 20000) && await terminalShows(second, two, 20000),
      "no tty lines in the two tabs");
    const ttyOne = one.exec(await terminalText(term))[1], ttyTwo = two.exec(await terminalText(second))[1];
    check(ttyOne !== ttyTwo, `both tabs share ${ttyOne}`);
    await second.close();
    await term.keyboard.type("exit");
    await term.keyboard.press("Enter");
    await term.locator('[data-status="disconnected"]').waitFor({ timeout: 20000 });
    await term.close();
  });

  await step("the space page says how to connect: ssh line, port 22 open, pinned fingerprint", async () => {
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    await page.locator('[data-connect="ssh-port"][data-state="open"]').waitFor({ timeout: 30000 });
    const ssh = await page.locator('[data-connect="ssh"]').textContent();
    check(ssh === "bowline ssh dev", `the ssh line is "${ssh}"`);
    const fp = await page.locator('[data-connect="fingerprint"]').textContent();
    check(/^SHA256:[A-Za-z0-9+/]{43}$/.test(fp), `the fingerprint is "${fp}"`);
    await page.screenshot({ path: path.join(SHOTS, "debian-space-connect.png") });
  });

  await step("the owner opens VM Console and sees the guest's login prompt", async () => {
    popup = await openViewer(page, BASE, SPACE_ID, "console", errors);
    await popup.locator('[data-status="connected"]').waitFor({ timeout: 60000 });
    const ok = await awaitLoginPrompt(popup);
    await popup.screenshot({ path: path.join(SHOTS, "debian-console-login.png") });
    check(ok, `no login: prompt; the terminal shows:\n${await screen(popup)}`);
  });

  await step("logs in with their username and service password and runs a command", async () => {
    check(popup, "no console viewer");
    await popup.locator(".term").click();
    await popup.keyboard.type(USERNAME);
    await popup.keyboard.press("Enter");
    check(await consoleShows(popup, /Password:\s*$/m, 30000),
      `no Password: prompt; the terminal shows:\n${await screen(popup)}`);
    await popup.keyboard.type(SERVICE_PASSWORD);
    await popup.keyboard.press("Enter");
    // bash's prompt: user@host:~$ (a refused login would print "Login incorrect").
    const prompt = new RegExp(`${escape(USERNAME)}@${escape(GUEST_HOSTNAME)}:~\\$`);
    const loggedIn = await consoleShows(popup, prompt, 60000);
    if (!loggedIn) await popup.screenshot({ path: path.join(SHOTS, "debian-console-after-password.png") });
    check(loggedIn, `no shell prompt after the password; the terminal shows:\n${await screen(popup)}`);
    await popup.keyboard.type("hostname; id -un");
    await popup.keyboard.press("Enter");
    // The output lines alone: the command's echo shares its line with the prompt.
    const output = new RegExp(`^${escape(GUEST_HOSTNAME)}\\n${escape(USERNAME)}$`, "m");
    const ran = await consoleShows(popup, output, 30000);
    await popup.screenshot({ path: path.join(SHOTS, "debian-console-command.png") });
    check(ran, `no "${GUEST_HOSTNAME}" then "${USERNAME}" lines; the terminal shows:\n${await screen(popup)}`);
    await popup.keyboard.type("exit");
    await popup.keyboard.press("Enter");
  });

  await step("no Content-Security-Policy violations or script errors", async () => {
    check(errors.length === 0, errors.join("\n"));
  });
  await browser.close();
}

finish(main);
