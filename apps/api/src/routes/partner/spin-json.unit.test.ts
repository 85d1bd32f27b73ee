import { ServiceError } from "@outcomes/core";
import { presentSpin } from "@outcomes/records";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseSpinRequest, SpinRequestBody, serializeSpinResult } from "./spin-json.js";

const JSON_TYPE = "application/json";

/** Bodies near and far from a valid spin request: each field mostly valid, else missing, null or of another kind. */
const field = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof(
    { arbitrary: valid, weight: 24 },
    fc.constant(undefined),
    fc.constant(null),
    fc.string(),
    fc.double(),
    fc.boolean(),
    fc.integer(),
  );
const spinBodies = fc.record(
  {
    gameId: field(fc.integer({ min: -5, max: 2 ** 31 })),
    playerId: field(fc.stringMatching(/^[A-Za-z0-9\-_.:@]{0,130}$/)),
    wagerUsd: field(
      fc.oneof(
        fc.double({ min: -1, max: 1e7, noNaN: true }),
        fc.integer({ min: 0, max: 10_000 }).map((cents) => cents / 100),
      ),
    ),
    freeRoundsId: field(fc.string({ maxLength: 70 })),
    forceTier: field(fc.string({ maxLength: 20 })),
    extra: field(fc.string()),
  },
  { requiredKeys: [] },
);

/** What the zod schema makes of a body: its data, or the error's code. */
function byZod(body: unknown): unknown {
  const parsed = SpinRequestBody.safeParse(body);
  return parsed.success ? parsed.data : "refused";
}

function byParser(text: string): unknown {
  try {
    return parseSpinRequest(JSON_TYPE, text);
  } catch (error) {
    if (error instanceof ServiceError) return "refused";
    throw error;
  }
}

describe("POST /spins's compiled body parser", () => {
  it("accepts exactly what the zod schema accepts, with the same fields", () => {
    const verdicts = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(spinBodies, (body) => {
        const text = JSON.stringify(body);
        const parsed = byParser(text);
        const expected = byZod(JSON.parse(text));
        if (expected === "refused") expect(parsed).toBe("refused");
        else expect(parsed).toMatchObject(expected as object);
        verdicts[expected === "refused" ? "refused" : "accepted"]++;
      }),
      { numRuns: 3000 },
    );
    // Both sides of the line are exercised, not only the refusals.
    expect(verdicts.accepted).toBeGreaterThan(100);
    expect(verdicts.refused).toBeGreaterThan(100);
  });

  it("answers a malformed body, another media type and no body as the other routes do", () => {
    const codeOf = (contentType: string | undefined, text: string) => {
      try {
        parseSpinRequest(contentType, text);
        return "accepted";
      } catch (error) {
        return `${(error as ServiceError).code} ${(error as ServiceError).message}`;
      }
    };
    expect(codeOf(JSON_TYPE, "{")).toBe("KS-4101 Malformed JSON in request body");
    expect(codeOf("text/plain", "{}")).toBe("KS-4101 Unsupported Media Type");
    expect(codeOf(undefined, '{"gameId":1}')).toBe("KS-4101 Unsupported Media Type");
    expect(codeOf(undefined, "")).toMatch(/^KS-4102 /);
    expect(codeOf("application/json; charset=utf-8", '{"gameId":1,"playerId":"p","wagerUsd":1}')).toBe("accepted");
  });
});

/** Spin results of every shape: won, lost, forced, voided, a free round, odd strings. */
const spinResults = fc
  .record({
    id: fc.string(),
    gameId: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    externalPlayerId: fc.string(),
    wagerMicros: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    prizeTier: fc.string(),
    multiplierMillionths: fc.integer({ min: 0, max: 10 ** 12 }),
    payoutMicros: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    balanceAfterMicros: fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    comboString: fc.string(),
    reels: fc.array(fc.array(fc.string(), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
    winLine: fc.option(fc.array(fc.integer({ min: 0, max: 5 }))),
    celebration: fc.constantFrom("none", "small", "big", "mega"),
    createdAt: fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }),
    position: fc.option(fc.record({ blockId: fc.integer({ min: 1 }), index: fc.integer({ min: 0 }) })),
    voided: fc.option(fc.record({ voidedAt: fc.date({ noInvalidDate: true }), reason: fc.string() })),
    freeRound: fc.option(fc.record({ freeRoundsId: fc.string(), roundsLeft: fc.nat() })),
  })
  .map((spin) =>
    presentSpin({
      ...spin,
      presentation: {
        comboString: spin.comboString,
        reelSymbols: spin.reels,
        animationHints: {
          winLine: spin.winLine,
          celebration: spin.celebration as "none",
          highlight: spin.reels.map((reel) => reel.map((symbol) => symbol.length % 2 === 0)),
        },
      },
    }),
  );

describe("the compiled spin result serialiser", () => {
  it("writes the same text as JSON.stringify", () => {
    fc.assert(
      fc.property(spinResults, (body) => {
        expect(serializeSpinResult(body)).toBe(JSON.stringify(body));
      }),
      { numRuns: 3000 },
    );
  });
});
