import { describe, expect, it } from "vitest";
import { type ErrorDetail, ServiceError } from "../errors.js";
import { analyzeParSheet, assertValidParSheet } from "./analyze.js";
import { SAMPLE_PAR_SHEET, sampleParSheet } from "./sample-sheet.js";

function problemsOf(sheet: unknown) {
  const check = analyzeParSheet(sheet);
  if (check.ok) throw new Error("expected the sheet to be refused");
  return check.details;
}

function pathsOf(sheet: unknown): string[] {
  return problemsOf(sheet).map((detail) => detail.path);
}

describe("PAR sheet figures", () => {
  it("computes the sample's RTP as exactly 24/25", () => {
    const sheet = assertValidParSheet(SAMPLE_PAR_SHEET);
    expect(sheet.rtp).toEqual({ num: 24n, den: 25n });
    expect(sheet.rtpDecimal).toBe("0.96");
    expect(sheet.certifiedRtpDecimal).toBe("0.96");
    expect(sheet.cycle).toBe(1_000_000n);
    expect(sheet.drawMode).toBe("independent");
  });

  it("reports hit frequency and the standard deviation of the multiplier", () => {
    const sheet = assertValidParSheet(SAMPLE_PAR_SHEET);
    expect(sheet.hitFrequency).toBe(0.35331);
    // E[m²] = (4·300000 + 16·40000 + 100·11000 + 625·2000 + 10⁴·300 + 10⁶·10) / 10⁶ = 17.19; E[m] = 0.96.
    expect(sheet.volatility).toBeCloseTo(Math.sqrt(17.19 - 0.96 ** 2), 12);
  });

  it("takes multipliers exactly: thirds of a cycle with 1.5× and 0.3× sum without float error", () => {
    const sheet = sampleParSheet();
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 1 },
      { tier: "T1", multiplier: 1.5, weight: 1 },
      { tier: "T2", multiplier: 0.3, weight: 1 },
    ];
    sheet.combinations = [
      { tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 },
      { tier: "T2", symbols: ["BELL", "BELL", "BELL"], weight: 1 },
    ];
    sheet.certifiedRtp = 0.6;
    const analysis = assertValidParSheet(sheet);
    expect(analysis.rtp).toEqual({ num: 3n, den: 5n });
    sheet.certifiedRtp = 0.60006;
    expect(pathsOf(sheet)).toEqual(["certifiedRtp"]);
    sheet.certifiedRtp = 0.60005;
    expect(analyzeParSheet(sheet).ok).toBe(true);
  });

  it("rounds a non-terminating RTP to 12 places for display and still compares it exactly", () => {
    const sheet = sampleParSheet();
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 2 },
      { tier: "T1", multiplier: 2, weight: 1 },
    ];
    sheet.combinations = [{ tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 }];
    sheet.certifiedRtp = 0.66667;
    const analysis = assertValidParSheet(sheet);
    expect(analysis.rtp).toEqual({ num: 2n, den: 3n });
    expect(analysis.rtpDecimal).toBe("0.666666666667");
  });

  it("takes certifiedRtp as the exact decimal of its shortest form, however many decimals it has", () => {
    const sheet = sampleParSheet();
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 2 },
      { tier: "T1", multiplier: 2.89, weight: 1 },
    ];
    sheet.combinations = [{ tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 }];
    sheet.certifiedRtp = 0.9633333333333334; // 2.89 / 3 as a double: 16 decimals
    const analysis = assertValidParSheet(sheet);
    expect(analysis.rtp).toEqual({ num: 289n, den: 300n });
    expect(analysis.certifiedRtpDecimal).toBe("0.9633333333333334");
    sheet.certifiedRtp = 1e-7;
    expect(problemsOf(sheet)).toEqual([
      {
        path: "certifiedRtp",
        message: "computed RTP 0.963333333333 differs from certifiedRtp 0.0000001 by more than 0.00005",
      },
    ]);
  });

  it("compares the decimal written, not the double's binary value: 0.59995 is exactly 0.00005 from 0.6", () => {
    const sheet = sampleParSheet();
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 4 },
      { tier: "T1", multiplier: 3, weight: 1 },
    ];
    sheet.combinations = [{ tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 }];
    // The double nearest 0.59995 is 0.59994999999999998…: as a binary fraction it would miss by more.
    sheet.certifiedRtp = 0.59995;
    expect(assertValidParSheet(sheet).certifiedRtpDecimal).toBe("0.59995");
    sheet.certifiedRtp = 0.5999499999999999;
    expect(pathsOf(sheet)).toEqual(["certifiedRtp"]);
    sheet.certifiedRtp = 0.6000500000000001;
    expect(pathsOf(sheet)).toEqual(["certifiedRtp"]);
  });

  it("accepts finite_pool and refuses an unknown draw mode", () => {
    expect(assertValidParSheet({ ...SAMPLE_PAR_SHEET, drawMode: "finite_pool" }).drawMode).toBe("finite_pool");
    expect(pathsOf({ ...SAMPLE_PAR_SHEET, drawMode: "lottery" })).toEqual(["drawMode"]);
  });
});

describe("PAR sheet refusals: every problem with its path", () => {
  it("answers KS-4104 with details through assertValidParSheet", () => {
    const sheet = sampleParSheet();
    sheet.certifiedRtp = 0.5;
    try {
      assertValidParSheet(sheet);
      throw new Error("should have thrown");
    } catch (error) {
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).code).toBe("KS-4104");
      expect(((error as ServiceError).details as ErrorDetail[] | undefined)?.[0]?.message).toMatch(
        /computed RTP 0.96 differs from certifiedRtp 0.5/,
      );
    }
  });

  it("reports every shape problem at once", () => {
    const sheet = sampleParSheet();
    delete sheet.name;
    sheet.layout.rows = 2;
    sheet.prizeTiers[2].weight = 1.5;
    sheet.prizeTiers[3].multiplier = "10";
    sheet.prizeTiers[4].multiplier = 2.1234567;
    sheet.symbols[0].id = "RED-SEVEN";
    sheet.combinations[1].weight = 0;
    expect(pathsOf(sheet).sort()).toEqual(
      [
        "name",
        "layout.rows",
        "prizeTiers[2].weight",
        "prizeTiers[3].multiplier",
        "prizeTiers[4].multiplier",
        "symbols[0].id",
        "combinations[1].weight",
      ].sort(),
    );
  });

  it("refuses a document that is not an object", () => {
    expect(pathsOf([1, 2])).toEqual(["$"]);
    expect(pathsOf(null)).toEqual(["$"]);
  });

  it("refuses an RTP that misses certifiedRtp by more than 0.00005", () => {
    const sheet = sampleParSheet();
    sheet.certifiedRtp = 0.96006;
    expect(pathsOf(sheet)).toEqual(["certifiedRtp"]);
    sheet.certifiedRtp = 0.95995;
    expect(analyzeParSheet(sheet).ok).toBe(true);
  });

  it("requires tiers named T0..Tn in order, T0 paying 0 and winning tiers paying more", () => {
    const sheet = sampleParSheet();
    sheet.prizeTiers[0].multiplier = 1;
    sheet.prizeTiers[2].tier = "T9";
    sheet.prizeTiers[3].multiplier = 0;
    const details = problemsOf(sheet);
    expect(details.map((detail) => detail.path)).toEqual(
      expect.arrayContaining(["prizeTiers[0].multiplier", "prizeTiers[2].tier", "prizeTiers[3].multiplier"]),
    );
  });

  it("requires a combination for every winning tier", () => {
    const sheet = sampleParSheet();
    sheet.combinations = sheet.combinations.filter((combination: { tier: string }) => combination.tier !== "T3");
    sheet.certifiedRtp = 0.96;
    expect(problemsOf(sheet)).toEqual([{ path: "prizeTiers[3]", message: "tier T3 has no combination" }]);
  });

  it("requires known symbols and tiers, one symbol per reel", () => {
    const sheet = sampleParSheet();
    sheet.combinations[0].symbols = ["LEMON", "LEMON"];
    sheet.combinations[1].symbols[2] = "PLUM";
    sheet.combinations[2].tier = "T42";
    sheet.combinations.push({ tier: "T0", symbols: ["BLANK", "BLANK", "BLANK"], weight: 1 });
    expect(pathsOf(sheet)).toEqual([
      "combinations[0].symbols",
      "combinations[1].symbols[2]",
      "combinations[2].tier",
      "combinations[7].tier",
      "prizeTiers[3]",
    ]);
  });

  it("refuses a combination listed under two tiers, and duplicate symbol ids", () => {
    const sheet = sampleParSheet();
    sheet.combinations.push({ tier: "T2", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 });
    sheet.symbols.push({ id: "BELL", name: "Another bell" });
    const details = problemsOf(sheet);
    expect(details).toContainEqual({
      path: "combinations[7].symbols",
      message: "already belongs to tier T1 (combinations[0]); a combination belongs to one tier",
    });
    expect(details).toContainEqual({ path: "symbols[8].id", message: 'duplicate symbol id "BELL" (symbols[4])' });
  });

  it("refuses a layout where every payline wins (no losing payline for T0)", () => {
    const sheet = sampleParSheet();
    sheet.layout = { reels: 1, rows: 1 };
    sheet.symbols = [
      { id: "A", name: "A" },
      { id: "B", name: "B" },
    ];
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 1 },
      { tier: "T1", multiplier: 1, weight: 1 },
      { tier: "T2", multiplier: 1, weight: 1 },
    ];
    sheet.combinations = [
      { tier: "T1", symbols: ["A"], weight: 1 },
      { tier: "T2", symbols: ["B"], weight: 1 },
    ];
    sheet.certifiedRtp = 0.66667;
    expect(pathsOf(sheet)).toEqual(["combinations"]);
  });

  it("enforces the GLI-11 floor of 1 in 100 million per tier, exactly at the boundary", () => {
    const sheet = sampleParSheet();
    // cycle = 99,999,999 + 1 = 10^8: T1's 1/10^8 is exactly at the floor.
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 99_999_999 },
      { tier: "T1", multiplier: 1, weight: 1 },
    ];
    sheet.combinations = [{ tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 }];
    sheet.certifiedRtp = 0.00001;
    expect(analyzeParSheet(sheet).ok).toBe(true);
    sheet.prizeTiers[0].weight = 100_000_000;
    const details = problemsOf(sheet);
    expect(details).toEqual([
      {
        path: "prizeTiers[1].weight",
        message: "probability 1/100000001 is below the floor of 1 in 100,000,000 (GLI-11)",
      },
    ]);
  });

  it("caps finite_pool cycles at 10 million outcomes", () => {
    const sheet = sampleParSheet();
    sheet.drawMode = "finite_pool";
    for (const tier of sheet.prizeTiers) tier.weight *= 11;
    expect(pathsOf(sheet)).toEqual(["drawMode"]);
    sheet.drawMode = "independent";
    expect(analyzeParSheet(sheet).ok).toBe(true);
  });
});
