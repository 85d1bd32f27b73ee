import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's Chromium (`apt-get install -y chromium`): playwright-core drives it, no browser download. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Why browser tests cannot run on this machine, if they cannot. On CI they run and fail instead. */
export const browserMissing =
  existsSync(CHROMIUM_PATH) || process.env.CI
    ? undefined
    : `no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`;

export interface OfflineBrowser {
  page: Page;
  /** Every request the page tried to make to another origin than the service's, aborted. */
  external: string[];
  /** Console errors and uncaught exceptions of the page (a refused load, a CSP violation). */
  errors: string[];
  close: () => Promise<void>;
}

/**
 * Headless Chromium as on an air-gapped operator network: only `origin` (the test server) answers;
 * any other request is aborted and recorded.
 */
export async function openOffline(
  origin: string,
  options: { httpCredentials?: { username: string; password: string } } = {},
): Promise<OfflineBrowser> {
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  // Well under the test's own timeout, so a step that never happens is named in the failure.
  page.setDefaultTimeout(10_000);
  const external: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    external.push(url);
    return route.abort("internetdisconnected");
  });
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return { page, external, errors, close: () => browser.close() };
}

/**
 * The status of the icon a browser shows for the page: the one it names, else `/favicon.ico` (where
 * browsers look; a 404 there is a console error in a real browser, which headless Chromium skips).
 */
export function iconStatus(page: Page): Promise<number> {
  return page.evaluate(`(async () => {
    const link = document.querySelector('link[rel~="icon"]');
    return (await fetch(link ? link.href : "/favicon.ico", { credentials: "include" })).status;
  })()`);
}
