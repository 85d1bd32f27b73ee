import { describe, expect, it } from "vitest";
import { couldBeId, newId } from "./ids.js";

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
