import { describe, expect, it } from "vitest";
import { ServiceError } from "./errors.js";
import { couldBeId, newId, parseGameId, timeOfId } from "./ids.js";

describe("couldBeId", () => {
  it("accepts every id newId makes", () => {
    for (const prefix of ["whk", "dlv", "par", "ptr", "key", "spn"]) expect(couldBeId(newId(prefix))).toBe(true);
  });

  it("refuses text no id has: empty, too long, NUL, separators, non-ASCII", () => {
    for (const text of ["", "x".repeat(65), "whk_\u0000", "\u0000", "a-b", "a b", "a/b", "..", "whk_😀", "%00"]) {
      expect(couldBeId(text), JSON.stringify(text)).toBe(false);
    }
  });
});

describe("timeOfId", () => {
  it("reads back the millisecond an id was made at", () => {
    const before = Date.now();
    const time = timeOfId(newId("spn"))!;
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
    expect(timeOfId(newId("spn", Date.parse("2026-01-15T23:59:59.999Z")))).toBe(Date.parse("2026-01-15T23:59:59.999Z"));
    expect(timeOfId("spn_short")).toBeNull();
  });
});

describe("parseGameId", () => {
  it("reads a positive int4 and answers anything else with the caller's code", () => {
    expect(parseGameId("1", "KS-4201")).toBe(1);
    expect(parseGameId("2147483647", "KS-4006")).toBe(2_147_483_647);
    for (const text of ["0", "-1", "01", "1.5", "1e3", "2147483648", "99999999999", "", " 1", "abc"]) {
      expect(() => parseGameId(text, "KS-4201"), text).toThrow(ServiceError);
      try {
        parseGameId(text, "KS-4006");
      } catch (error) {
        expect((error as ServiceError).code).toBe("KS-4006");
      }
    }
  });
});

describe("timeOfId", () => {
  it("reads back the millisecond newId was called in", () => {
    const before = Date.now();
    const id = newId("spn");
    const after = Date.now();
    const time = timeOfId(id) as number;
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  });

  it("is null for text no id of newId has", () => {
    for (const text of [
      "",
      "spn_",
      "spn_short",
      "spn_00000000000000000000000",
      "SPN_0000000000000000000000",
      "spn-0000000000000000000000",
    ]) {
      expect(timeOfId(text), text).toBeNull();
    }
  });
});
