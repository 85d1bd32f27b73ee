import { describe, expect, it } from "vitest";
import { ByteBoundedCache } from "./byte-bounded-cache.js";

const bytes = (length: number) => new Uint8Array(length);

describe("ByteBoundedCache", () => {
  it("never holds more than its bound: the least recently used go first", () => {
    const cache = new ByteBoundedCache(100);
    cache.set("a", bytes(40));
    cache.set("b", bytes(40));
    expect(cache.get("a")?.length).toBe(40); // now b is the least recently used
    cache.set("c", bytes(40));
    expect([cache.get("a")?.length, cache.get("b"), cache.get("c")?.length]).toEqual([40, undefined, 40]);
    expect(cache.bytes).toBe(80);
    cache.set("d", bytes(100));
    expect([cache.get("a"), cache.get("c"), cache.get("d")?.length, cache.bytes]).toEqual([
      undefined,
      undefined,
      100,
      100,
    ]);
  });

  it("keeps nothing larger than the bound, and counts a replaced value once", () => {
    const cache = new ByteBoundedCache(100);
    cache.set("a", bytes(30));
    cache.set("big", bytes(101));
    expect([cache.get("big"), cache.get("a")?.length, cache.bytes]).toEqual([undefined, 30, 30]);
    cache.set("a", bytes(50));
    expect([cache.get("a")?.length, cache.bytes]).toEqual([50, 50]);
    cache.set("a", bytes(101));
    expect([cache.get("a"), cache.bytes]).toEqual([undefined, 0]);
  });
});
