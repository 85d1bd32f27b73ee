import type { ParSheetDocument } from "./types.js";

/**
 * A sample PAR sheet (RTP exactly 24/25): the example of the docs, the input of the
 * provable-fairness test vector (docs/fairness.md), and the service's own test fixture.
 */
export const SAMPLE_PAR_SHEET = {
  name: "Lucky Sevens Classic",
  version: "1.0.0",
  layout: { reels: 3, rows: 3 },
  symbols: [
    { id: "SEVEN", name: "Red Seven" },
    { id: "BAR3", name: "Triple Bar" },
    { id: "BAR2", name: "Double Bar" },
    { id: "BAR1", name: "Single Bar" },
    { id: "BELL", name: "Bell" },
    { id: "CHERRY", name: "Cherry" },
    { id: "LEMON", name: "Lemon" },
    { id: "BLANK", name: "Blank" },
  ],
  prizeTiers: [
    { tier: "T0", multiplier: 0, weight: 646690 },
    { tier: "T1", multiplier: 2, weight: 300000 },
    { tier: "T2", multiplier: 4, weight: 40000 },
    { tier: "T3", multiplier: 10, weight: 11000 },
    { tier: "T4", multiplier: 25, weight: 2000 },
    { tier: "T5", multiplier: 100, weight: 300 },
    { tier: "T6", multiplier: 1000, weight: 10 },
  ],
  combinations: [
    { tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 },
    { tier: "T2", symbols: ["CHERRY", "CHERRY", "CHERRY"], weight: 1 },
    { tier: "T3", symbols: ["BELL", "BELL", "BELL"], weight: 1 },
    { tier: "T4", symbols: ["BAR2", "BAR2", "BAR2"], weight: 1 },
    { tier: "T4", symbols: ["BAR1", "BAR1", "BAR1"], weight: 1 },
    { tier: "T5", symbols: ["BAR3", "BAR3", "BAR3"], weight: 1 },
    { tier: "T6", symbols: ["SEVEN", "SEVEN", "SEVEN"], weight: 1 },
  ],
  certifiedRtp: 0.96,
} as const satisfies ParSheetDocument;
