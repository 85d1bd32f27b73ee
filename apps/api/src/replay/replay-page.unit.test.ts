import type { ReplayBody } from "@outcomes/records";
import { describe, expect, it } from "vitest";
import { formatMultiplier, formatUsd, notFoundPage, replayPage } from "./replay-page.js";

const ASSETS = { script: "/replay/assets/replay-check.0.js", style: "/replay/assets/replay.0.css" };

function replay(overrides: Partial<ReplayBody> = {}): ReplayBody {
  return {
    spinId: "spn_0T9xYz12AbCdEfGhIjKlMn",
    environment: "production",
    game: { gameId: 7, name: "Lucky Sevens", symbols: [{ id: "BELL", name: "Bell" }] },
    createdAt: "2026-11-28T14:03:07.120Z",
    wagerUsd: 1.25,
    outcome: { prizeTier: "T3", multiplier: 10, payoutUsd: 12.5 },
    presentation: {
      comboString: "BELL-BELL-BELL",
      reelSymbols: [["BELL"], ["BELL"], ["BELL"]],
      animationHints: { winLine: [0, 0, 0], celebration: "big", highlight: [[true], [true], [true]] },
    },
    balance: { balanceUsd: -3.75, currency: "USD" },
    forced: true,
    freeRound: false,
    voided: null,
    fairness: null,
    proof: null,
    block: null,
    expiresAt: "2026-12-05T14:03:07.000Z",
    ...overrides,
  };
}

describe("the replay page's figures", () => {
  it("writes money exactly, with at least two decimals and grouping", () => {
    expect([1.25, 12.5, 0, 0.000001, -3.75, 1234567.5, 9007199254.74, 98765432.123457].map(formatUsd)).toEqual([
      "$1.25",
      "$12.50",
      "$0.00",
      "$0.000001",
      "−$3.75",
      "$1,234,567.50",
      "$9,007,199,254.74",
      "$98,765,432.123457",
    ]);
    expect([10, 1.5, 0, 9.999999].map(formatMultiplier)).toEqual(["×10", "×1.5", "×0", "×9.999999"]);
  });

  it("escapes whatever a partner or a sheet wrote, and nothing in the data can close its element", async () => {
    const hostile = "</script><script>alert(1)</script><img src=x onerror=alert(2)>&\u2028";
    const page = String(
      await replayPage(
        replay({
          game: { gameId: 7, name: hostile, symbols: [{ id: "BELL", name: hostile }] },
          voided: { voidedAt: "2026-11-28T15:00:00.000Z", reason: hostile },
        }),
        ASSETS,
        "token.json",
      ),
    );
    expect(page).not.toContain("<script>alert");
    expect(page).not.toContain("<img");
    expect(page.match(/<script/g)).toHaveLength(2);
    expect(page).toContain("&lt;/script&gt;&lt;script&gt;alert(1)");
    const data = /<script type="application\/json" id="replay-data">(.*?)<\/script>/s.exec(page)?.[1] ?? "";
    expect(data).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(data).game.name).toBe(hostile);
  });

  it("says a forced spin has no proof and offers no check; shows UTC time, the balance after and the status", async () => {
    const page = String(await replayPage(replay(), ASSETS, "token.json"));
    expect(page).toContain("so it has no proof to check");
    expect(page).not.toContain('id="check"');
    expect(page).toContain("2026-11-28 14:03:07 UTC");
    expect(page).toContain("−$3.75");
    expect(page).toContain('<a href="token.json">');
    expect(page).not.toContain("sandbox (test)");
  });

  it("is one page for every link that opens nothing", async () => {
    expect(String(await notFoundPage(ASSETS))).toBe(String(await notFoundPage(ASSETS)));
  });
});
