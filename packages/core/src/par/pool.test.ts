import { randomBytes } from "node:crypto";
import { shuffleCycle } from "@outcomes/sdk";
import { describe, expect, it } from "vitest";
import { payoutMicros } from "../money.js";
import { assertValidParSheet } from "./analyze.js";
import { decodeBlockEntries, drawBlock } from "./block.js";
import { OutcomeDrawer } from "./draw.js";
import { sampleParSheet } from "./sample-sheet.js";

/** The sample sheet scaled down to a 100,000-outcome cycle; RTP still exactly 0.96. */
function smallPoolSheet() {
  const sheet = sampleParSheet();
  sheet.drawMode = "finite_pool";
  const weights = [64_669, 30_000, 4_000, 1_100, 200, 30, 1];
  sheet.prizeTiers.forEach((tier: { weight: number }, index: number) => {
    tier.weight = weights[index] as number;
  });
  return assertValidParSheet(sheet);
}

describe("finite_pool cycles", () => {
  it("holds exactly `weight` entries of each tier, shuffled", () => {
    const sheet = smallPoolSheet();
    const { sheet: compiled } = new OutcomeDrawer(sheet);
    const cycle = shuffleCycle(compiled, randomBytes(32));
    expect(cycle.length).toBe(100_000);
    const counts = new Array<number>(sheet.tiers.length).fill(0);
    for (const tier of cycle) counts[tier] = (counts[tier] ?? 0) + 1;
    expect(counts).toEqual(sheet.tiers.map((tier) => tier.weight));
    // Shuffled: T1 (30%) spreads over both halves, and two cycles differ.
    const firstHalfT1 = cycle.subarray(0, 50_000).filter((tier) => tier === 1).length;
    expect(firstHalfT1).toBeGreaterThan(14_000);
    expect(firstHalfT1).toBeLessThan(16_000);
    expect(Buffer.from(shuffleCycle(compiled, randomBytes(32))).equals(Buffer.from(cycle))).toBe(false);
  });

  it("served completely, pays back exactly certifiedRtp × total wagered, with exact per-tier counts", () => {
    const sheet = smallPoolSheet();
    const drawer = new OutcomeDrawer(sheet);
    const seed = randomBytes(32);
    const cycle = shuffleCycle(drawer.sheet, seed);
    const wagerMicros = 1_250_000;
    const counts = new Map<string, number>();
    let paid = 0n;
    let served = 0;
    for (let offset = 0; offset < cycle.length; offset += 1000) {
      const block = drawBlock(drawer, seed, cycle.subarray(offset, offset + 1000), offset);
      for (const outcome of decodeBlockEntries(block.entries)) {
        counts.set(outcome.tier, (counts.get(outcome.tier) ?? 0) + 1);
        paid += BigInt(payoutMicros(wagerMicros, outcome.multiplierMillionths));
        served++;
      }
    }
    const wagered = BigInt(served) * BigInt(wagerMicros);
    expect(served).toBe(100_000);
    expect(paid * 25n).toBe(wagered * 24n);
    expect(paid).toBe(120_000_000_000n);
    expect(sheet.tiers.map((tier) => counts.get(tier.name))).toEqual(sheet.tiers.map((tier) => tier.weight));
  });
});
