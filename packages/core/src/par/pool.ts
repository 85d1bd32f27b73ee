import { randomInt } from "node:crypto";
import type { TierFigures } from "./analyze.js";

/**
 * A finite_pool cycle: exactly `weight` entries of each tier, Fisher–Yates shuffled with
 * `crypto.randomInt`. One byte per entry (the tier index), so a cycle of 10 million outcomes
 * takes 10 MB; blocks are cut from it in order and their outcomes drawn from these tiers.
 */
export function shuffledCycle(tiers: readonly TierFigures[]): Uint8Array {
  const size = tiers.reduce((sum, tier) => sum + tier.weight, 0);
  const cycle = new Uint8Array(size);
  let offset = 0;
  tiers.forEach((tier, index) => {
    cycle.fill(index, offset, offset + tier.weight);
    offset += tier.weight;
  });
  for (let last = size - 1; last > 0; last--) {
    const pick = randomInt(last + 1);
    const kept = cycle[last] as number;
    cycle[last] = cycle[pick] as number;
    cycle[pick] = kept;
  }
  return cycle;
}
