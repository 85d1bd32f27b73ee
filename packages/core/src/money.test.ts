import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatScaledDecimal,
  maxWagerWithinMicros,
  microsToUsd,
  parseScaledDecimal,
  payoutMicros,
  showsExactly,
  usdToMicros,
} from "./money.js";

describe("parseScaledDecimal", () => {
  it("scales plain and exponent forms exactly", () => {
    expect(parseScaledDecimal("12.50", 2)).toBe(1250n);
    expect(parseScaledDecimal("1.5e2", 0)).toBe(150n);
    expect(parseScaledDecimal("25e-2", 2)).toBe(25n);
    expect(parseScaledDecimal("-0.000001")).toBe(-1n);
    expect(parseScaledDecimal("0.1234567891", 10)).toBe(1_234_567_891n);
  });

  it("refuses more decimals than the scale, and text that is not a decimal", () => {
    expect(parseScaledDecimal("0.0000001")).toBeNull();
    expect(parseScaledDecimal("1.005", 2)).toBeNull();
    expect(parseScaledDecimal("1.")).toBeNull();
    expect(parseScaledDecimal("0x10")).toBeNull();
    expect(parseScaledDecimal("")).toBeNull();
  });

  it("ignores trailing zeros when counting decimals", () => {
    expect(parseScaledDecimal("1.2300000000", 2)).toBe(123n);
  });
});

describe("usdToMicros", () => {
  it("converts through the shortest decimal form, so binary fractions do not leak in", () => {
    expect(usdToMicros(0.1)).toBe(100_000);
    expect(usdToMicros(0.1 + 0.2)).toBeNull(); // 0.30000000000000004 has 17 decimals
    expect(usdToMicros(1.234567)).toBe(1_234_567);
    expect(usdToMicros(-2.5)).toBe(-2_500_000);
    expect(usdToMicros(1e-6)).toBe(1);
    expect(usdToMicros(0)).toBe(0);
  });

  it("returns null for more than 6 decimals, non-finite numbers and amounts past exact integers", () => {
    expect(usdToMicros(1.2345678)).toBeNull();
    expect(usdToMicros(1e-7)).toBeNull();
    expect(usdToMicros(Number.NaN)).toBeNull();
    expect(usdToMicros(Number.POSITIVE_INFINITY)).toBeNull();
    expect(usdToMicros(1e30)).toBeNull();
  });

  it("answers every double as the exact decimal text does (micro amounts, near-misses, huge, random bits)", () => {
    const byText = (usd: number) => {
      const micros = Number.isFinite(usd) ? parseScaledDecimal(String(usd), 6) : null;
      return micros === null || micros > BigInt(Number.MAX_SAFE_INTEGER) || micros < -BigInt(Number.MAX_SAFE_INTEGER)
        ? null
        : Number(micros);
    };
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -(2 ** 53), max: 2 ** 53 }).map((micros) => micros / 1_000_000),
          fc.integer({ min: -(2 ** 53), max: 2 ** 53 }).map((micros) => micros / 10_000_000),
          fc.double(),
          fc.double({ min: 2 ** 51 / 1e6, max: 2 ** 54 / 1e6 }),
        ),
        (usd) => {
          expect(usdToMicros(usd)).toBe(byText(usd));
        },
      ),
      { numRuns: 20_000 },
    );
  });
});

describe("microsToUsd", () => {
  it("is the exact decimal of the micros", () => {
    expect(microsToUsd(100_000)).toBe(0.1);
    expect(microsToUsd(123_456_789n)).toBe(123.456789);
    expect(microsToUsd(-1)).toBe(-0.000001);
    expect(microsToUsd(0)).toBe(0);
  });

  it("answers a number exactly as the parse of the decimal text, over random and edge safe integers", () => {
    const textOf = (micros: number) => Number(formatScaledDecimal(micros));
    const edges = [
      0,
      -0,
      1,
      -1,
      5,
      999_999,
      1_000_001,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
      2 ** 52 + 1,
      9_007_199_254_740_990,
    ];
    const random = Array.from({ length: 200_000 }, (_, n) => {
      const magnitude = 10 ** ((n % 16) + 1);
      return Math.floor((Math.random() - 0.5) * 2 * Math.min(magnitude, Number.MAX_SAFE_INTEGER));
    });
    for (const micros of [...edges, ...random]) {
      if (!Object.is(microsToUsd(micros), textOf(micros)))
        expect([micros, microsToUsd(micros)]).toEqual([micros, textOf(micros)]);
    }
    expect(Object.is(microsToUsd(-0), 0)).toBe(true);
  });

  it("round-trips with usdToMicros", () => {
    for (const micros of [1, 999_999, 1_000_000, 12_345_678_901, -42]) {
      expect(usdToMicros(microsToUsd(micros))).toBe(micros);
    }
  });
});

describe("payoutMicros", () => {
  it("multiplies in integers and floors to the micro", () => {
    expect(payoutMicros(1_000_000, 2_500_000)).toBe(2_500_000);
    expect(payoutMicros(333_333, 1_500_000)).toBe(499_999); // 499,999.5 floored
    expect(payoutMicros(10_000_000, 0)).toBe(0);
    // 100,000 USD at 1,000,000×: the product (1e23) is past exact doubles, the result is not.
    expect(payoutMicros(100_000_000_000, 1_000_000_000_000)).toBe(100_000_000_000_000_000);
  });
});

describe("maxWagerWithinMicros", () => {
  it("is the largest wager whose payout stays within 2^53 − 1 micro-USD", () => {
    const bound = maxWagerWithinMicros(1_000_000_000); // 1000×
    expect(bound).toBe(9_007_199_254_740);
    expect(BigInt(bound) * 1000n).toBeLessThanOrEqual(BigInt(Number.MAX_SAFE_INTEGER));
    expect(BigInt(bound + 1) * 1000n).toBeGreaterThan(BigInt(Number.MAX_SAFE_INTEGER));
    expect(maxWagerWithinMicros(1_000_000_000_000)).toBe(9_007_199_254); // the schema's largest, 1,000,000×
  });

  it("is capped at 2^53 − 1 for multipliers up to 1×", () => {
    expect(maxWagerWithinMicros(500_000)).toBe(Number.MAX_SAFE_INTEGER);
    expect(maxWagerWithinMicros(0)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("keeps the wager and its largest payout within a ceiling", () => {
    const million = 1_000_000_000_000; // 1,000,000 USD
    expect(maxWagerWithinMicros(1_000_000_000, million)).toBe(1_000_000_000); // 1000×: 1000 USD
    expect(maxWagerWithinMicros(1, million)).toBe(million); // 0.000001×: the wager alone binds
    expect(maxWagerWithinMicros(3_000_000, 10_000_000)).toBe(3_333_333); // floored: 3 × 3.333333 ≤ 10
    expect(maxWagerWithinMicros(1, Number.MAX_SAFE_INTEGER + 10)).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe("showsExactly", () => {
  it("is true when the JSON number of an amount reads back as the amount", () => {
    expect(showsExactly(1_234_567n)).toBe(true);
    expect(showsExactly(-24_500_000n)).toBe(true);
    expect(showsExactly(9_007_199_254_740_000n)).toBe(true);
    // A double holds about 16 significant digits: 9007199254.740991 is shown as 9007199254.740992.
    expect(showsExactly(BigInt(Number.MAX_SAFE_INTEGER))).toBe(false);
    expect(showsExactly(BigInt(Number.MAX_SAFE_INTEGER) + 9n)).toBe(false);
    expect(showsExactly(10n ** 30n)).toBe(false);
  });
});

describe("formatScaledDecimal", () => {
  it("writes the exact plain decimal, past 2^53 too", () => {
    expect(formatScaledDecimal(9_007_199_254_740)).toBe("9007199.25474");
    expect(formatScaledDecimal(1_000_000_000n)).toBe("1000");
    expect(formatScaledDecimal(-1n)).toBe("-0.000001");
    expect(formatScaledDecimal(2n ** 60n)).toBe("1152921504606.846976");
  });
});
