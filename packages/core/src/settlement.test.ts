import { describe, expect, it } from "vitest";
import { ServiceError } from "./errors.js";
import {
  applySettlementAction,
  isFutureReportDate,
  isProvisionalReport,
  parseReportDate,
  presentSettlementFigures,
  previousUtcDay,
  reissueSettlementStatus,
  requireReportDate,
  requireSettleableReportDate,
  type SettlementAction,
  type SettlementStatus,
  utcDayBounds,
} from "./settlement.js";

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return error.code;
    throw error;
  }
  return "no error";
}

const acknowledge: SettlementAction = { type: "acknowledge" };
const dispute = (reason: unknown): SettlementAction => ({ type: "dispute", reason });

describe("applySettlementAction: the specification's table, cell by cell", () => {
  it.each(["GENERATED", "PENDING"] as const)("%s + acknowledge → acknowledged", (status) => {
    expect(applySettlementAction(status, acknowledge)).toEqual({ status: "acknowledged" });
  });

  it.each(["GENERATED", "PENDING"] as const)("%s + dispute with a reason → disputed", (status) => {
    expect(applySettlementAction(status, dispute("  wager totals differ from our ledger "))).toEqual({
      status: "disputed",
      disputeReason: "wager totals differ from our ledger",
    });
  });

  it.each([
    ["GENERATED", undefined],
    ["GENERATED", null],
    ["GENERATED", ""],
    ["PENDING", "   "],
  ] as const)("%s + dispute without a reason (%j) → KS-4102", (status, reason) => {
    expect(codeOf(() => applySettlementAction(status, dispute(reason)))).toBe("KS-4102");
  });

  it("refuses a reason that is not a string or is too long with KS-4101", () => {
    expect(codeOf(() => applySettlementAction("GENERATED", dispute(42)))).toBe("KS-4101");
    expect(codeOf(() => applySettlementAction("GENERATED", dispute("x".repeat(2001))))).toBe("KS-4101");
    expect(applySettlementAction("GENERATED", dispute("x".repeat(2000)))).toMatchObject({ status: "disputed" });
  });

  it("acknowledged + acknowledge or dispute (with or without reason) → KS-4302", () => {
    expect(codeOf(() => applySettlementAction("acknowledged", acknowledge))).toBe("KS-4302");
    expect(codeOf(() => applySettlementAction("acknowledged", dispute("late spins")))).toBe("KS-4302");
    expect(codeOf(() => applySettlementAction("acknowledged", dispute(undefined)))).toBe("KS-4302");
  });

  it("disputed + dispute (with or without reason) → KS-4303", () => {
    expect(codeOf(() => applySettlementAction("disputed", dispute("again")))).toBe("KS-4303");
    expect(codeOf(() => applySettlementAction("disputed", dispute(null)))).toBe("KS-4303");
  });

  it("disputed + acknowledge → KS-4304 (the catch-all row)", () => {
    expect(codeOf(() => applySettlementAction("disputed", acknowledge))).toBe("KS-4304");
  });
});

describe("reissueSettlementStatus", () => {
  it("moves a disputed report to PENDING", () => {
    expect(reissueSettlementStatus("disputed")).toBe("PENDING");
  });

  it.each(["GENERATED", "PENDING", "acknowledged"] as SettlementStatus[])("refuses %s with KS-4304", (status) => {
    expect(codeOf(() => reissueSettlementStatus(status))).toBe("KS-4304");
  });
});

describe("report dates", () => {
  it("accepts real calendar days only", () => {
    expect(parseReportDate("2024-02-29")).toBe("2024-02-29");
    expect(parseReportDate("2000-02-29")).toBe("2000-02-29");
    expect(parseReportDate("0001-01-01")).toBe("0001-01-01");
    for (const bad of ["2023-02-29", "1900-02-29", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00"]) {
      expect(parseReportDate(bad)).toBeNull();
    }
    for (const bad of ["0000-01-01", "2024-1-01", "24-01-01", "2024/01/01", "2024-01-01T00:00:00Z", " 2024-01-01"]) {
      expect(parseReportDate(bad)).toBeNull();
    }
    expect(parseReportDate(20240101)).toBeNull();
    expect(parseReportDate(null)).toBeNull();
  });

  it("throws KS-4105 for a bad date", () => {
    expect(codeOf(() => requireReportDate("2024-02-30"))).toBe("KS-4105");
    expect(requireReportDate("2024-02-28")).toBe("2024-02-28");
  });

  it("bounds a day as the half-open UTC interval", () => {
    const { start, end } = utcDayBounds("2024-12-31");
    expect(start.toISOString()).toBe("2024-12-31T00:00:00.000Z");
    expect(end.toISOString()).toBe("2025-01-01T00:00:00.000Z");
  });

  it("settles the previous UTC day and knows the future", () => {
    expect(previousUtcDay(new Date("2024-03-01T00:00:00.000Z"))).toBe("2024-02-29");
    expect(previousUtcDay(new Date("2024-03-01T23:59:59.999Z"))).toBe("2024-02-29");
    const now = new Date("2024-03-01T12:00:00.000Z");
    expect(isFutureReportDate("2024-03-01", now)).toBe(false);
    expect(isFutureReportDate("2024-03-02", now)).toBe(true);
  });

  it("lets an operator settle a day that has begun, and nothing else", () => {
    const now = new Date("2024-03-01T00:00:00.000Z");
    expect(requireSettleableReportDate("2024-03-01", now)).toBe("2024-03-01");
    expect(requireSettleableReportDate("1999-12-31", now)).toBe("1999-12-31");
    expect(codeOf(() => requireSettleableReportDate("2024-03-02", now))).toBe("KS-4105");
    expect(codeOf(() => requireSettleableReportDate("2024-02-30", now))).toBe("KS-4105");
    expect(codeOf(() => requireSettleableReportDate(20240301, now))).toBe("KS-4105");
  });
});

describe("presentSettlementFigures", () => {
  const noVoids = {
    voidedSpins: 0,
    voidedWageredMicros: 0n,
    voidedPaidMicros: 0n,
    freeRoundSpins: 0,
    freeRoundWagerMicros: 0n,
  };

  it("converts exactly and subtracts in integers", () => {
    expect(
      presentSettlementFigures({ totalSpins: 3, totalWageredMicros: 300_000n, totalPaidMicros: 100_001n, ...noVoids }),
    ).toEqual({
      totalSpins: 3,
      totalWageredUsd: 0.3,
      totalPaidUsd: 0.100001,
      voidedSpins: 0,
      voidedWageredUsd: 0,
      voidedPaidUsd: 0,
      freeRoundSpins: 0,
      freeRoundWagerUsd: 0,
      netUsd: 0.199999,
      rtp: 100_001 / 300_000,
      exact: {
        totalWageredUsd: "0.3",
        totalPaidUsd: "0.100001",
        voidedWageredUsd: "0",
        voidedPaidUsd: "0",
        freeRoundWagerUsd: "0",
        netUsd: "0.199999",
      },
      figuresExact: true,
    });
  });

  it("shows a negative net when the partner paid out more than it took", () => {
    const view = presentSettlementFigures({
      totalSpins: 1,
      totalWageredMicros: 1_000_000n,
      totalPaidMicros: 25_500_000n,
      ...noVoids,
    });
    expect([view.netUsd, view.exact.netUsd, view.rtp]).toEqual([-24.5, "-24.5", 25.5]);
  });

  it("takes the day's voids out of the net, not out of the spins, totals or rtp; free rounds' wagers stay out", () => {
    const view = presentSettlementFigures({
      totalSpins: 4,
      totalWageredMicros: 4_000_000n,
      totalPaidMicros: 2_500_000n,
      voidedSpins: 2,
      voidedWageredMicros: 3_000_001n,
      voidedPaidMicros: 5_000_000n,
      freeRoundSpins: 1,
      freeRoundWagerMicros: 1_000_000n,
    });
    expect(view).toMatchObject({
      totalSpins: 4,
      totalWageredUsd: 4,
      totalPaidUsd: 2.5,
      voidedSpins: 2,
      voidedWageredUsd: 3.000001,
      voidedPaidUsd: 5,
      freeRoundSpins: 1,
      freeRoundWagerUsd: 1,
      // (4 − 3.000001) − (2.5 − 5): a void of a win of another day gives its payout back to the partner.
      netUsd: 3.499999,
      rtp: 0.625,
    });
  });

  it("has rtp null when nothing was wagered", () => {
    const view = presentSettlementFigures({ totalSpins: 0, totalWageredMicros: 0n, totalPaidMicros: 0n, ...noVoids });
    expect([view.rtp, view.netUsd, view.exact.netUsd, view.figuresExact]).toEqual([null, 0, "0", true]);
  });

  it("shows every amount exactly as a decimal string past 2^53 − 1 micro-USD, and says the numbers are not", () => {
    // Issue 33: two spins of 9,007,199,254.74 and 5,000,000,000 USD in one day.
    const wagered = 9_007_199_254_740_000n + 5_000_000_000_000_000n;
    const view = presentSettlementFigures({
      totalSpins: 2,
      totalWageredMicros: wagered,
      totalPaidMicros: 14_007_199n,
      ...noVoids,
      voidedSpins: 1,
      voidedWageredMicros: 5_000_000_000_000_000n,
    });
    expect(view.exact).toEqual({
      totalWageredUsd: "14007199254.74",
      totalPaidUsd: "14.007199",
      voidedWageredUsd: "5000000000",
      voidedPaidUsd: "0",
      freeRoundWagerUsd: "0",
      netUsd: "9007199240.732801",
    });
    expect(view.figuresExact).toBe(false);
    // The numbers are the nearest doubles of the exact decimals.
    expect(view.totalWageredUsd).toBe(Number("14007199254.74"));
    expect(view.netUsd).toBe(Number("9007199240.732801"));
    expect(Math.abs(view.rtp! / (14.007199 / 14_007_199_254.74) - 1)).toBeLessThan(1e-15);
    // Below the bound the numbers are exact, except a 16-digit amount a double cannot hold.
    const near = (micros: bigint) =>
      presentSettlementFigures({ totalSpins: 1, totalWageredMicros: micros, totalPaidMicros: 0n, ...noVoids });
    expect(near(9_007_199_254_740_000n)).toMatchObject({ figuresExact: true, totalWageredUsd: 9_007_199_254.74 });
    expect(near(BigInt(Number.MAX_SAFE_INTEGER))).toMatchObject({
      figuresExact: false,
      exact: { totalWageredUsd: "9007199254.740991" },
    });
  });
});

describe("provisional reports (CONTRACT §8)", () => {
  const report = (generatedAt: string, provisional: boolean | null) => ({
    reportDate: "2026-05-01",
    generatedAt: new Date(generatedAt),
    provisional,
  });

  it("is what the run stored, or for a row without it (release 2), whether it was computed before the day ended", () => {
    expect(isProvisionalReport(report("2026-05-02T03:00:00.000Z", true))).toBe(true);
    expect(isProvisionalReport(report("2026-05-01T12:00:00.000Z", false))).toBe(false);
    expect(isProvisionalReport(report("2026-05-01T23:59:59.999Z", null))).toBe(true);
    expect(isProvisionalReport(report("2026-05-02T00:00:00.000Z", null))).toBe(false);
  });

  it("refuses acknowledge and dispute of an open provisional report with KS-4305 saying when its day ends", () => {
    const dayEnd = new Date("2026-05-02T00:00:00.000Z");
    for (const action of [acknowledge, dispute("totals differ"), dispute(undefined)]) {
      let thrown: unknown;
      try {
        applySettlementAction("GENERATED", action, dayEnd);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({
        code: "KS-4305",
        message: expect.stringMatching(/^Report is provisional until its day ends at 2026-05-02T00:00:00\.000Z/),
      });
    }
    // The table's own errors come first: a provisional report acknowledged by release 2 is KS-4302.
    expect(codeOf(() => applySettlementAction("acknowledged", acknowledge, dayEnd))).toBe("KS-4302");
    expect(applySettlementAction("PENDING", acknowledge, null)).toEqual({ status: "acknowledged" });
  });
});
