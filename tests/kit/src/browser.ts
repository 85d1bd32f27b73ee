import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, type BrowserContextOptions, chromium, type Page } from "playwright-core";

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
  options: Pick<BrowserContextOptions, "httpCredentials" | "viewport" | "javaScriptEnabled" | "timezoneId"> = {},
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

/** A rule axe-core found broken on the page, and where. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * What axe-core (Deque's accessibility engine) finds against WCAG 2.1 A and AA on the page as it is.
 * The engine is evaluated over the DevTools protocol, which no Content-Security-Policy of the page
 * refuses, and it reads only the page.
 */
export async function wcagViolations(page: Page): Promise<AxeViolation[]> {
  const engine = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(engine);
  return page.evaluate(async () => {
    const page = globalThis as unknown as {
      axe: { run: (context: unknown, options: unknown) => Promise<any> };
      document: unknown;
    };
    const results = await page.axe.run(page.document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    });
    return results.violations.map((violation: any) => ({
      id: violation.id,
      impact: violation.impact ?? null,
      help: violation.help,
      targets: violation.nodes.map((node: any) => String(node.target)),
    }));
  });
}
