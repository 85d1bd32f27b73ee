import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import fc from "fast-check";
import stableStringify from "safe-stable-stringify";
import { describe, expect, it } from "vitest";

/**
 * The form a keyed `POST /par-sheets` is compared in (its document parsed, every object's keys in
 * code-unit order, no whitespace), written out by hand: the request hashes stored under keys must
 * not change when the library that writes it does (safe-stable-stringify 2 → 3 in release 3).
 */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

describe("a keyed PAR sheet's compared form", () => {
  it("is the document with its keys sorted, for the sample sheet and any JSON a partner may send", () => {
    expect(stableStringify(SAMPLE_PAR_SHEET)).toBe(canonical(SAMPLE_PAR_SHEET));
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const parsed: unknown = JSON.parse(JSON.stringify(value));
        expect(stableStringify(parsed)).toBe(canonical(parsed));
      }),
      { numRuns: 2000 },
    );
  });
});
