// Preview URLs in Debian's Chromium against a web app in the real Debian guest
// (tests/e2e/lib/guest_web_app.py on port 8000, `http: true`): the owner logs in to the UI; the
// space page links the port's preview; opening it goes through the UI's authorize step (the
// UI's SameSite=Strict cookie stays behind on the redirect, so the UI itself sends the browser
// on) and shows the guest's page on the preview's own origin; the app sees its own cookie and
// never bowline's; a WebSocket from the page echoes through the guest; the page cannot read the
// UI's API (another origin). Started by tests/e2e/debian_guest_test.sh. Prints "N passed, M
// failed".
import { env, check, testRun, launchBrowser, login } from "./lib.mjs";

const BASE = env("BASE_URL");
const SPACE_ID = env("SPACE_ID");
const USERNAME = env("USERNAME");
const PASSWORD = env("PASSWORD");
const PREVIEW_URL = env("PREVIEW_URL");

const { step, finish } = testRun("preview");

async function main() {
  const browser = await launchBrowser();
  const page = await (await browser.newContext()).newPage();
  await step("the owner logs in to the UI", () => login(page, BASE, USERNAME, PASSWORD));
  await step("the space page links the port's preview", async () => {
    await page.goto(`${BASE}/#/spaces/${SPACE_ID}`);
    const link = page.locator('a[data-preview="8000"]');
    await link.waitFor({ timeout: 20000 });
    const href = await link.getAttribute("href");
    check(href === PREVIEW_URL, `the link is ${href}, not ${PREVIEW_URL}`);
  });
  await step("the preview shows the guest's page on its own origin, after the UI's login step", async () => {
    await page.goto(PREVIEW_URL + "hello.txt");
    await page.waitForURL(PREVIEW_URL + "hello.txt", { timeout: 30000 });
    const text = (await page.textContent("body")).trim();
    check(text === "served from the guest", `the page says ${JSON.stringify(text)}`);
  });
  await step("the guest's app gets its own cookie and none of bowline's", async () => {
    await page.evaluate(() => { document.cookie = "app=from-the-page; path=/"; });
    await page.goto(PREVIEW_URL + "headers");
    const headers = JSON.parse(await page.textContent("body"));
    check(headers.Cookie === "app=from-the-page", `Cookie: ${headers.Cookie}`);
    check(headers["X-Forwarded-Proto"] === "https", `X-Forwarded-Proto: ${headers["X-Forwarded-Proto"]}`);
  });
  await step("a WebSocket from the page echoes through the guest", async () => {
    const got = await page.evaluate(() => new Promise((resolve, reject) => {
      const ws = new WebSocket(location.origin.replace(/^http/, "ws") + "/ws");
      ws.onopen = () => ws.send("ping through the preview");
      ws.onmessage = (e) => { resolve(e.data); ws.close(); };
      ws.onerror = () => reject(new Error("the WebSocket failed"));
      setTimeout(() => reject(new Error("no echo within 15 s")), 15000);
    }));
    check(got === "ping through the preview", `the echo was ${JSON.stringify(got)}`);
  });
  await step("the preview's page cannot read the UI's API (another origin)", async () => {
    const got = await page.evaluate(async (base) => {
      try {
        const r = await fetch(base + "/api/v1/session", { credentials: "include" });
        return `read ${r.status}: ${await r.text()}`;
      } catch (e) {
        return "blocked";
      }
    }, BASE);
    check(got === "blocked", got);
  });
  await browser.close();
}

finish(main);
