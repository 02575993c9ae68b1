// Single sign-on in Debian's Chromium against a real OpenID Connect provider
// (web/tests/oidc_provider.mjs): the login page offers it; carol logs in through the provider's
// own login and consent pages and lands in the UI as herself; a provider user named like
// bowline's local admin is refused on the login page, saying why; and the device login that
// `bowline login --sso` started (its words in DEVICE_FILE) is approved in the browser as olga.
// Started by tests/e2e/sso_test.sh. Prints "N passed, M failed".
import fs from "node:fs";
import { env, check, testRun, launchBrowser } from "./lib.mjs";

const BASE = env("BASE_URL");
const DEVICE_FILE = env("DEVICE_FILE");

const { step, finish } = testRun("sso");

// The provider's development pages: a login form (any password), then a consent form.
async function provider(page, login) {
  await page.waitForSelector('input[name="login"]', { timeout: 20000 });
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', "any password");
  await page.click('button[type="submit"]');
  await page.waitForSelector('button[type="submit"]', { timeout: 20000 });
  if ((await page.content()).includes('name="prompt" value="consent"')) await page.click('button[type="submit"]');
}

async function deviceUrl() {
  for (let i = 0; i < 100; i++) {
    const text = fs.existsSync(DEVICE_FILE) ? fs.readFileSync(DEVICE_FILE, "utf8") : "";
    const m = /\(or open (\S+)\)/.exec(text);
    if (m) return m[1];
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`bowline login --sso printed no address in ${DEVICE_FILE}`);
}

async function main() {
  const browser = await launchBrowser();
  const page = await (await browser.newContext()).newPage();
  await step("the login page offers single sign-on", async () => {
    await page.goto(BASE + "/");
    await page.waitForSelector("a[data-sso]", { timeout: 20000 });
  });
  await step("carol logs in at the provider and lands in the UI as herself", async () => {
    await page.click("a[data-sso]");
    await provider(page, "carol");
    await page.waitForSelector("header.top .who", { timeout: 30000 });
    const who = await page.textContent("header.top .who");
    check(who.includes("carol"), `the UI says ${who}`);
  });
  await step("a provider user named like the local admin is refused, and told why", async () => {
    const fresh = await (await browser.newContext()).newPage();
    await fresh.goto(BASE + "/");
    await fresh.click("a[data-sso]");
    await provider(fresh, "admin");
    const alert = fresh.locator('form[aria-label="Log in"] [role="alert"]');
    await alert.waitFor({ timeout: 30000 });
    const text = await alert.textContent();
    check(/account named admin exists already/.test(text), text);
  });
  await step("the CLI's device login is approved in the browser as olga", async () => {
    const device = await (await browser.newContext()).newPage();
    await device.goto(await deviceUrl());
    // The code comes in the address: the provider asks to confirm it first.
    await device.waitForSelector('button[type="submit"], button[autofocus]', { timeout: 20000 });
    await device.click('button[autofocus]');
    await provider(device, "olga");
    await device.waitForFunction(() => /success|signed in|you can close/i.test(document.body.innerText),
      null, { timeout: 30000 });
  });
  await browser.close();
}

finish(main);
