import { describe, expect, it } from "vitest";
import { changeWaits, PROTECTION_COOLDOWN_MS, settingAfter, settingInForce } from "./protection.js";

const NOW = Date.UTC(2026, 10, 28, 12);
const HOUR = 3_600_000;

describe("changeWaits: what protects the player less waits 24 h", () => {
  it.each([
    ["lossDaily", 10, 5, false, "a cut"],
    ["lossDaily", null, 5, false, "a new limit"],
    ["lossDaily", 10, 20, true, "a raise"],
    ["wagerMonthly", 10, null, true, "a removal"],
    ["lossWeekly", 10, 10, false, "the same"],
    ["selfExcludedUntil", null, NOW + HOUR, false, "a start"],
    ["selfExcludedUntil", NOW + HOUR, NOW + 2 * HOUR, false, "a lengthening"],
    ["selfExcludedUntil", NOW + 2 * HOUR, NOW + HOUR, true, "an early end"],
    ["coolingOffUntil", NOW + HOUR, null, true, "an end now"],
    ["coolingOffUntil", NOW - HOUR, null, false, "the end of one already over"],
  ] as const)("%s %s → %s waits: %s (%s)", (name, current, wanted, waits, _why) => {
    expect(changeWaits(name, current, wanted, NOW)).toBe(waits);
  });
});

describe("settingAfter and settingInForce", () => {
  const none = { value: null, next: null, nextAt: null };

  it("keeps the value in force and the raise waiting, which takes over after its 24 h", () => {
    const after = settingAfter("lossDaily", { ...none, value: 10 }, 20, NOW);
    expect(after).toEqual({ value: 10, next: 20, nextAt: NOW + PROTECTION_COOLDOWN_MS });
    expect(settingInForce(after, NOW + PROTECTION_COOLDOWN_MS - 1)).toBe(10);
    expect(settingInForce(after, NOW + PROTECTION_COOLDOWN_MS)).toBe(20);
  });

  it("keeps the waiting raise's time when asked again, and a cut replaces it at once", () => {
    const waiting = settingAfter("lossDaily", { ...none, value: 10 }, 20, NOW);
    expect(settingAfter("lossDaily", waiting, 20, NOW + HOUR)).toBe(waiting);
    expect(settingAfter("lossDaily", waiting, 5, NOW + HOUR)).toEqual({ value: 5, next: null, nextAt: null });
    expect(settingAfter("lossDaily", waiting, 10, NOW + HOUR)).toEqual({ value: 10, next: null, nextAt: null });
  });

  it("folds a change whose time has come in before judging the next", () => {
    const due = { value: 10, next: 20, nextAt: NOW - 1 };
    expect(settingAfter("lossDaily", due, 15, NOW)).toEqual({ value: 15, next: null, nextAt: null });
  });
});
