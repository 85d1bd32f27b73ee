import { describe, expect, it } from "vitest";
import { assertPositiveWager, exactWager, hasAtMostSixDecimals, wagerMicrosWithin } from "./wager.js";

const codeOf = (run: () => unknown) => {
  try {
    run();
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

describe("wagers", () => {
  it("accepts at most 6 decimals, exactly", () => {
    expect([0.1, 1.000001, 123456.5, 1e-6].map(hasAtMostSixDecimals)).toEqual([true, true, true, true]);
    expect([1.0000001, 1e-7, 0.1 + 0.2].map(hasAtMostSixDecimals)).toEqual([false, false, false]);
    expect([exactWager(0.1), exactWager(1.5), exactWager(1e21)]).toEqual(["100000", "1500000", `1${"0".repeat(27)}`]);
  });

  it("checks [min, max] inclusively in micros, with no minimum meaning any positive amount", () => {
    const limits = { minWagerMicros: 500_000, maxWagerMicros: 100_000_000 };
    expect(wagerMicrosWithin(0.5, limits)).toBe(500_000);
    expect(wagerMicrosWithin(100, limits)).toBe(100_000_000);
    expect([0.499999, 100.000001, 1e30].map((usd) => codeOf(() => wagerMicrosWithin(usd, limits)))).toEqual([
      "KS-4103",
      "KS-4103",
      "KS-4103",
    ]);
    const open = { minWagerMicros: null, maxWagerMicros: 1_000_000 };
    expect(wagerMicrosWithin(0.000001, open)).toBe(1);
    expect(codeOf(() => wagerMicrosWithin(1.0000001, open))).toBe("KS-4101");
  });

  it("refuses zero and negative wagers before any look-up", () => {
    expect([0, -0, -1].map((usd) => codeOf(() => assertPositiveWager(usd)))).toEqual(["KS-4103", "KS-4103", "KS-4103"]);
    expect(codeOf(() => assertPositiveWager(0.000001))).toBe("ok");
  });
});
