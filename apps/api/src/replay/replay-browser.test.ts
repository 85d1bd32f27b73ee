import { fileURLToPath } from "node:url";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { browserMissing, type OfflineBrowser, openOffline, wcagViolations } from "@outcomes/testkit/browser";
import { REPLAY_ENV, type ReplaySpins, replayLink, replaySpins } from "@outcomes/testkit/replays";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Replay pages in headless Chromium with every request to another host refused (CONTRACT §17):
 * the figures, the in-browser proof check (and its failure on an altered outcome), the revealed
 * seed's check, a phone's width, WCAG 2.1 AA by axe-core. `REPLAY_SCREENSHOTS=1` also writes the
 * screenshots of docs/ (docs/fairness.md, README.md).
 */
let api: TestApi;
let world: ReplaySpins;
beforeAll(async () => {
  if (browserMissing) return;
  api = await startTestApi(REPLAY_ENV);
  world = await replaySpins(api);
});
afterAll(async () => {
  await api?.close();
});

const PHONE = { width: 390, height: 844 };
const SCREENSHOTS = process.env.REPLAY_SCREENSHOTS
  ? fileURLToPath(new URL("../../../../docs/", import.meta.url))
  : null;

async function withPage<T>(
  options: Parameters<typeof openOffline>[1],
  use: (browser: OfflineBrowser) => Promise<T>,
): Promise<T> {
  const browser = await openOffline(api.baseUrl, options);
  try {
    const result = await use(browser);
    expect(browser.external).toEqual([]);
    expect(browser.errors).toEqual([]);
    return result;
  } finally {
    await browser.close();
  }
}

async function openReplay(page: Page, spinId: string): Promise<string> {
  const { url } = await replayLink(api, world.game.apiKey, spinId);
  await page.goto(url, { waitUntil: "networkidle" });
  return url;
}

/** The check's verdict once it has run, and the words it said. */
async function checkResult(page: Page): Promise<{ result: string; text: string }> {
  const box = page.locator("#check[data-result]");
  await box.waitFor();
  return { result: (await box.getAttribute("data-result")) as string, text: (await box.allInnerTexts()).join("\n") };
}

/** The text the page shows (as rendered: no hidden element, no data). */
const shownText = async (page: Page) => (await page.locator("main").allInnerTexts()).join("\n");

const widthOverflow = (page: Page) =>
  page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

describe("a replay page in a browser without internet", () => {
  it("shows the spin's figures and checks its proof in the browser", async ({ skip }) => {
    skip(browserMissing !== undefined, browserMissing);
    await withPage({}, async ({ page }) => {
      await openReplay(page, world.won.spinId);
      const text = await shownText(page);
      expect(text).toContain("Lucky Sevens");
      expect(text).toContain("$1.25");
      expect(text).toContain(world.won.outcome.prizeTier);
      expect(text).toContain(`×${world.won.outcome.multiplier}`);
      expect(text).toContain(`Won $${world.won.outcome.payoutUsd.toFixed(2)}`);
      expect((await page.locator("#local-time").allInnerTexts()).join("")).not.toBe("");
      const symbols = await page
        .locator("#reels tbody td")
        .evaluateAll((cells) => cells.map((cell) => cell.getAttribute("data-symbol")));
      const reels = world.won.presentation.reelSymbols as string[][];
      expect(symbols).toEqual(reels[0]!.flatMap((_, row) => reels.map((reel) => reel[row])));
      const check = await checkResult(page);
      expect(check.result).toBe("verified");
      expect(check.text).toContain("Verified in your browser");
      // Each step says its verdict in words too, for a screen reader (the mark is for the eye).
      expect(await page.locator("#check").textContent()).toContain(
        "Passed: The outcome, written as the leaf commits to it",
      );
      expect(check.text).toContain("leads from that leaf to the block's committed Merkle root");
    });
  });

  it("reports failure once one byte of the shown outcome is changed in the page's data", async ({ skip }) => {
    skip(browserMissing !== undefined, browserMissing);
    await withPage({}, async ({ page }) => {
      const { url } = await replayLink(api, world.game.apiKey, world.unrevealed.spinId);
      const first = (world.unrevealed.presentation.reelSymbols as string[][])[0]![0] as string;
      // One byte of the first reel's top symbol, in the data and in the table alike.
      const altered = `${first.slice(0, -1)}${first.endsWith("X") ? "Y" : "X"}`;
      await page.route(url, async (route) => {
        const response = await route.fetch();
        const html = (await response.text())
          .replace(`"reelSymbols":[["${first}"`, `"reelSymbols":[["${altered}"`)
          .replace(`data-symbol="${first}"`, `data-symbol="${altered}"`);
        await route.fulfill({ response, body: html });
      });
      await page.goto(url, { waitUntil: "networkidle" });
      const check = await checkResult(page);
      expect(check.result).toBe("failed");
      expect(check.text).toContain("Check failed");
      expect(check.text).toContain(`but the proof is of "${world.unrevealed.fairness.blockId}|`);
    });
  });

  it("checks a revealed block's seed, and says an unrevealed one will be checked later", async ({ skip }) => {
    skip(browserMissing !== undefined, browserMissing);
    await withPage({}, async ({ page }) => {
      await openReplay(page, world.revealed.spinId);
      const revealed = await checkResult(page);
      expect(revealed.result, revealed.text).toBe("verified");
      expect(revealed.text).toContain("The revealed seed hashes to the seed hash committed at sealing");
      expect(revealed.text).toContain("The leaf's salt is the one the seed derives for this entry");
      await openReplay(page, world.unrevealed.spinId);
      const unrevealed = await checkResult(page);
      expect(unrevealed.result).toBe("verified");
      expect(unrevealed.text).toContain("seed is not revealed yet");
    });
  });

  it("says a forced sandbox spin has no proof, and shows voided and free-round spins as such", async ({ skip }) => {
    skip(browserMissing !== undefined, browserMissing);
    await withPage({}, async ({ page }) => {
      await openReplay(page, world.forced.spinId);
      expect(await shownText(page)).toContain("so it has no proof to check");
      expect(await page.locator("#check").count()).toBe(0);
      await openReplay(page, world.voided.spinId);
      const voided = await shownText(page);
      expect(voided).toContain("Voided on");
      expect(voided).toContain("Wallet refused the debit: insufficient funds");
      const voidedCheck = await checkResult(page);
      expect(voidedCheck.result, voidedCheck.text).toBe("verified");
      await openReplay(page, world.freeRound.spinId);
      expect(await shownText(page)).toContain("a free round: paid by the operator");
    });
  });

  it("reads well at 390 px, without scrolling sideways, and axe-core finds no WCAG 2.1 AA violation", async ({
    skip,
  }) => {
    skip(browserMissing !== undefined, browserMissing);
    await withPage({ viewport: PHONE, timezoneId: "Europe/Berlin" }, async ({ page }) => {
      for (const [name, spin] of Object.entries({
        won: world.won,
        lost: world.lost,
        voided: world.voided,
        "free-round": world.freeRound,
        forced: world.forced,
      })) {
        await openReplay(page, spin.spinId);
        if (spin.fairness) await checkResult(page);
        await page
          .locator("details summary")
          .first()
          .click({ timeout: 1000 })
          .catch(() => {});
        expect(await widthOverflow(page), name).toBe(0);
        expect(await wcagViolations(page), name).toEqual([]);
        if (SCREENSHOTS && name !== "forced") {
          await page
            .locator("details")
            .first()
            .evaluate((details) => details.removeAttribute("open"))
            .catch(() => {});
          await page.screenshot({ path: `${SCREENSHOTS}replay-${name}.png`, fullPage: true });
        }
      }
    });
  });

  it("is readable without JavaScript: every figure is in the page as served", async ({ skip }) => {
    skip(browserMissing !== undefined, browserMissing);
    await withPage({ javaScriptEnabled: false }, async ({ page }) => {
      await openReplay(page, world.voided.spinId);
      const text = await shownText(page);
      for (const figure of ["Lucky Sevens", "Played", "UTC", "$1.25", "Payout", "Balance after", "Voided on"]) {
        expect(text).toContain(figure);
      }
      expect(text).toContain("Your browser checks the proof when JavaScript is on");
      expect(await page.locator("#local-time").isVisible()).toBe(false);
    });
  });
});
