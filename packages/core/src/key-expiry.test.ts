import { describe, expect, it } from "vitest";
import { dueExpiryThreshold, settledThresholds } from "./key-expiry.js";

const now = new Date("2026-05-01T00:00:00.000Z");
const inDays = (days: number) => new Date(now.getTime() + days * 24 * 3_600_000);

describe("dueExpiryThreshold", () => {
  it("picks the smallest threshold the remaining time is within", () => {
    expect(dueExpiryThreshold(inDays(31), now)).toBeNull();
    expect(dueExpiryThreshold(inDays(30), now)).toBe(30);
    expect(dueExpiryThreshold(inDays(8), now)).toBe(30);
    expect(dueExpiryThreshold(inDays(7), now)).toBe(7);
    expect(dueExpiryThreshold(inDays(1.5), now)).toBe(7);
    expect(dueExpiryThreshold(inDays(1), now)).toBe(1);
    expect(dueExpiryThreshold(inDays(0.01), now)).toBe(1);
  });

  it("gives nothing for an expired key", () => {
    expect(dueExpiryThreshold(now, now)).toBeNull();
    expect(dueExpiryThreshold(inDays(-1), now)).toBeNull();
  });
});

describe("settledThresholds", () => {
  it("counts larger thresholds as passed", () => {
    expect(settledThresholds(30)).toEqual([30]);
    expect(settledThresholds(7)).toEqual([30, 7]);
    expect(settledThresholds(1)).toEqual([30, 7, 1]);
  });
});
