// Console login on a real Debian guest in Debian's Chromium: the space's owner logs in to the
// UI, opens VM Console, sees getty's login prompt, logs in with their username and service
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

async function main() {
  const browser = await launchBrowser();
  const errors = [];
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  watchErrors(page, errors);
  let popup = null;

  await step("the owner opens VM Console and sees the guest's login prompt", async () => {
    await login(page, BASE, USERNAME, PASSWORD);
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
