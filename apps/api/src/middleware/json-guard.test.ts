import { describe, expect, it } from "vitest";
import { findUnstorableText, jsonDepth } from "./json-guard.js";

describe("jsonDepth", () => {
  it("counts nesting of arrays and objects, not brackets inside strings", () => {
    expect(jsonDepth("1")).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[[{{{{"}')).toBe(1);
    expect(jsonDepth('{"a":"\\"[[[["}')).toBe(1);
    expect(jsonDepth('["\\\\",[[]]]')).toBe(3);
    expect(jsonDepth("[".repeat(100_000))).toBe(100_000);
  });
});

describe("findUnstorableText", () => {
  it("finds U+0000 and unpaired surrogates in values and keys, with their path", () => {
    expect(findUnstorableText({ a: [1, "ok", { b: "x\u0000" }] })).toBe("a[2].b");
    expect(findUnstorableText({ a: "\ud800" })).toBe("a");
    expect(findUnstorableText({ a: "x\udc00" })).toBe("a");
    expect(findUnstorableText({ "k\u0000": 1 })).toBe("k\u0000");
    expect(findUnstorableText("\u0000")).toBe("(body)");
  });

  it("accepts paired surrogates and ordinary text", () => {
    expect(findUnstorableText({ a: "😀🎰", b: ["é", "\\u0000"], c: null, d: 1.5 })).toBeNull();
  });

  it("walks very deep values without overflowing the stack", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findUnstorableText(deep)).toMatch(/^\[0\]/);
  });
});
