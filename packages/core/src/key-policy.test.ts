import { describe, expect, it } from "vitest";
import {
  DEFAULT_KEY_LIFETIME_DAYS,
  defaultKeyExpiry,
  expiryProblem,
  MAX_ROTATION_OVERLAP_HOURS,
  overlapProblem,
  rotatedKeyExpiry,
} from "./key-policy.js";

const now = new Date("2026-03-01T12:00:00.000Z");
const hours = (count: number) => count * 3_600_000;

describe("key lifetime", () => {
  it("defaults to 365 days", () => {
    expect(DEFAULT_KEY_LIFETIME_DAYS).toBe(365);
    expect(defaultKeyExpiry(now).toISOString()).toBe("2027-03-01T12:00:00.000Z");
  });

  it("refuses an expiry that is not in the future", () => {
    expect(expiryProblem(new Date(now.getTime() + 1), now)).toBeNull();
    expect(expiryProblem(now, now)?.path).toBe("expiresAt");
    expect(expiryProblem(new Date("2020-01-01T00:00:00Z"), now)?.message).toBe("must be in the future");
    expect(expiryProblem(new Date("nonsense"), now)?.message).toContain("ISO-8601");
  });
});

describe("rotation", () => {
  it("keeps the old key for the overlap", () => {
    const current = new Date(now.getTime() + hours(24 * 100));
    expect(rotatedKeyExpiry(current, now, 24).getTime()).toBe(now.getTime() + hours(24));
    expect(rotatedKeyExpiry(current, now, 0).getTime()).toBe(now.getTime());
    expect(rotatedKeyExpiry(current, now, 1.5).getTime()).toBe(now.getTime() + hours(1.5));
  });

  it("never extends a key that expires sooner than the overlap", () => {
    const soon = new Date(now.getTime() + hours(2));
    expect(rotatedKeyExpiry(soon, now, 24)).toEqual(soon);
  });

  it("bounds the overlap", () => {
    expect(overlapProblem(0)).toBeNull();
    expect(overlapProblem(MAX_ROTATION_OVERLAP_HOURS)).toBeNull();
    expect(overlapProblem(-1)?.path).toBe("overlapHours");
    expect(overlapProblem(MAX_ROTATION_OVERLAP_HOURS + 1)?.path).toBe("overlapHours");
    expect(overlapProblem(Number.NaN)?.path).toBe("overlapHours");
  });
});
