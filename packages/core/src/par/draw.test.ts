import { randomBytes } from "node:crypto";
import { deriveBlockEntries, drawTiers, seedHashOf } from "@outcomes/sdk";
import { describe, expect, it } from "vitest";
import { microsToUsd } from "../money.js";
import { parseQueueItem } from "../outcome.js";
import { assertValidParSheet } from "./analyze.js";
import {
  commitmentOf,
  type DrawnBlock,
  decodeBlockEntries,
  draftBlock,
  drawBlock,
  drawIndependentBlock,
  queuedItems,
  queueItemOutcome,
  verifyBlock,
} from "./block.js";
import { OutcomeDrawer } from "./draw.js";
import { EntryCodec } from "./entries.js";
import { SAMPLE_PAR_SHEET, sampleParSheet } from "./sample-sheet.js";

const sample = assertValidParSheet(SAMPLE_PAR_SHEET);
const winningPaylines = new Set(SAMPLE_PAR_SHEET.combinations.map((combination) => combination.symbols.join("-")));
const comboByTier = new Map<string, string[]>();
for (const combination of SAMPLE_PAR_SHEET.combinations) {
  comboByTier.set(combination.tier, [...(comboByTier.get(combination.tier) ?? []), combination.symbols.join("-")]);
}

/** χ² critical values at significance 10⁻⁶ (a correct generator fails about once in a million runs). */
const CHI_SQUARE_CRITICAL_1E6: Record<number, number> = { 1: 23.93, 4: 33.38, 6: 38.26 };

const outcomesOf = (drawn: DrawnBlock) => decodeBlockEntries(drawn.entries);
/** A block of exactly these tiers, its windows drawn from a fresh seed. */
const withTiers = (drawer: OutcomeDrawer, tiers: Uint8Array) => drawBlock(drawer, randomBytes(32), tiers, 0);

function chiSquare(observed: number[], expected: number[]): number {
  return observed.reduce(
    (sum, count, index) => sum + (count - (expected[index] as number)) ** 2 / (expected[index] as number),
    0,
  );
}

describe("drawing one outcome of a named tier (forced sandbox spins)", () => {
  it("shows a combination of that tier chosen by weight, a losing payline for T0, and nothing for unknown tiers", () => {
    const drawer = new OutcomeDrawer(sample);
    const paylines = new Map<string, number>();
    for (let draw = 0; draw < 2000; draw++) {
      const outcome = drawer.drawOutcomeOfTier("T4");
      expect(outcome).toMatchObject({ tier: "T4", multiplierMillionths: 25_000_000 });
      expect(outcome?.reelSymbols.map((reel) => reel.length)).toEqual([3, 3, 3]);
      const payline = outcome?.reelSymbols.map((reel) => reel[1]).join("-") ?? "";
      paylines.set(payline, (paylines.get(payline) ?? 0) + 1);
    }
    // T4 has two combinations of weight 1 each: both show, about equally (χ² with 1 degree of freedom).
    expect([...paylines.keys()].sort()).toEqual(comboByTier.get("T4")?.sort());
    const counts = [...paylines.values()];
    expect(chiSquare(counts, [1000, 1000])).toBeLessThan(CHI_SQUARE_CRITICAL_1E6[1] as number);
    for (let draw = 0; draw < 500; draw++) {
      const payline =
        drawer
          .drawOutcomeOfTier("T0")
          ?.reelSymbols.map((reel) => reel[1])
          .join("-") ?? "";
      expect(winningPaylines.has(payline)).toBe(false);
    }
    expect(drawer.drawOutcomeOfTier("T7")).toBeNull();
    expect(drawer.drawOutcomeOfTier("")).toBeNull();
  });
});

describe("independent draws", () => {
  it("follows the tier weights: χ² over 1,000,000 draws at significance 10⁻⁶", () => {
    const drawer = new OutcomeDrawer(sample);
    const draws = 1_000_000;
    const counts = new Array<number>(sample.tiers.length).fill(0);
    const tiers = drawTiers(drawer.sheet, randomBytes(32), draws);
    for (const tier of tiers) counts[tier] = (counts[tier] ?? 0) + 1;
    const expected = sample.tiers.map((tier) => (draws * tier.weight) / Number(sample.cycle));
    expect(Math.min(...expected)).toBeGreaterThanOrEqual(5);
    expect(chiSquare(counts, expected)).toBeLessThan(CHI_SQUARE_CRITICAL_1E6[6] as number);
  });

  it("builds complete outcomes: window, payline of the tier's combination, T0 payline never winning", () => {
    const drawer = new OutcomeDrawer(sample);
    const outcomes = outcomesOf(drawIndependentBlock(drawer, 100_000));
    expect(outcomes).toHaveLength(100_000);
    const problems: string[] = [];
    let losing = 0;
    for (const outcome of outcomes) {
      const shape = outcome.reelSymbols.map((reel) => reel.length).join("x");
      const payline = outcome.reelSymbols.map((reel) => reel[1]).join("-");
      const tier = sample.tiers[Number(outcome.tier.slice(1))];
      if (shape !== "3x3x3") problems.push(`window ${shape}`);
      if (outcome.multiplierMillionths !== tier?.multiplierMillionths) problems.push(`multiplier of ${outcome.tier}`);
      if (outcome.tier === "T0") {
        losing++;
        if (winningPaylines.has(payline)) problems.push(`T0 shows winning payline ${payline}`);
      } else if (!comboByTier.get(outcome.tier)?.includes(payline)) {
        problems.push(`${outcome.tier} shows ${payline}`);
      }
    }
    expect(problems).toEqual([]);
    expect(losing).toBeGreaterThan(60_000);
  });

  it("picks a tier's combinations by their relative weights", () => {
    const sheet = sampleParSheet();
    sheet.combinations[3].weight = 3; // T4: BAR2 3 : BAR1 1
    const drawer = new OutcomeDrawer(assertValidParSheet(sheet));
    const tiers = new Uint8Array(40_000).fill(4);
    const outcomes = outcomesOf(withTiers(drawer, tiers));
    const bar2 = outcomes.filter((outcome) => outcome.reelSymbols[0]?.[1] === "BAR2").length;
    const observed = [bar2, outcomes.length - bar2];
    expect(chiSquare(observed, [30_000, 10_000])).toBeLessThan(CHI_SQUARE_CRITICAL_1E6[1] as number);
  });

  it("fills the rows off the payline uniformly over the symbols", () => {
    const drawer = new OutcomeDrawer(sample);
    const outcomes = outcomesOf(drawIndependentBlock(drawer, 50_000));
    const counts = new Map<string, number>();
    for (const outcome of outcomes) {
      for (const reel of outcome.reelSymbols) {
        for (const row of [0, 2]) counts.set(reel[row] as string, (counts.get(reel[row] as string) ?? 0) + 1);
      }
    }
    const observed = SAMPLE_PAR_SHEET.symbols.map((symbol) => counts.get(symbol.id) ?? 0);
    const expected = observed.map(() => (50_000 * 6) / 8);
    expect(chiSquare(observed, expected)).toBeLessThan(42.0); // df 7 at 10⁻⁶
  });

  it("draws a non-winning T0 payline on a large layout (rejection path)", () => {
    const sheet = sampleParSheet();
    sheet.layout = { reels: 6, rows: 5 };
    sheet.combinations = sheet.combinations.map((combination: { symbols: string[] }) => ({
      ...combination,
      symbols: Array.from({ length: 6 }, () => combination.symbols[0]),
    }));
    const drawer = new OutcomeDrawer(assertValidParSheet(sheet));
    const outcomes = outcomesOf(withTiers(drawer, new Uint8Array(20_000)));
    const shapes = new Set(outcomes.map((outcome) => outcome.reelSymbols.map((reel) => reel.length).join("x")));
    expect([...shapes]).toEqual(["5x5x5x5x5x5"]);
    // Every winning combination is one symbol six times: a losing payline is never one of them
    // (six BLANKs, say, can occur: BLANK wins nothing).
    const winning = new Set(
      sheet.combinations.map((combination: { symbols: string[] }) => combination.symbols.join("-")),
    );
    const paylines = outcomes.map((outcome) => outcome.reelSymbols.map((reel) => reel[2]).join("-"));
    expect(paylines.filter((payline) => winning.has(payline))).toEqual([]);
  });
});

describe("blocks", () => {
  it("seals canonical binary entries with a SHA-256 commitment that verifies, and refuses tampering", () => {
    const drawer = new OutcomeDrawer(sample);
    const draft = draftBlock(drawer, drawIndependentBlock(drawer, 1000), 1);
    expect(draft.commitment).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyBlock(draft.entries, draft.commitment)).toBe(true);
    const { codec, size, bodyStart } = EntryCodec.read(draft.entries);
    expect(size).toBe(1000);
    const { reels, rows } = SAMPLE_PAR_SHEET.layout;
    expect(draft.entries.length).toBe(bodyStart + 1000 * (1 + reels * rows));
    expect(codec.layout.symbols).toEqual(SAMPLE_PAR_SHEET.symbols.map((symbol) => symbol.id));
    const outcomes = decodeBlockEntries(draft.entries);
    expect(outcomes).toHaveLength(1000);
    // One byte changed: the commitment no longer matches.
    const tampered = Buffer.from(draft.entries);
    tampered[bodyStart + 3] = ((tampered[bodyStart + 3] as number) + 1) % SAMPLE_PAR_SHEET.symbols.length;
    expect(verifyBlock(tampered, draft.commitment)).toBe(false);
    // Right hash, not a canonical block: an index out of range, a truncated body.
    const outOfRange = Buffer.from(draft.entries);
    outOfRange[bodyStart] = 200;
    expect(verifyBlock(outOfRange, commitmentOf(outOfRange))).toBe(false);
    const truncated = draft.entries.subarray(0, draft.entries.length - 1);
    expect(verifyBlock(truncated, commitmentOf(truncated))).toBe(false);
  });

  it("draws exactly what the SDK re-derives from the seed, and commits to the seed and the Merkle root", () => {
    const drawer = new OutcomeDrawer(sample);
    const draft = draftBlock(drawer, drawIndependentBlock(drawer, 300), 42);
    const again = draftBlock(drawer, drawBlock(drawer, draft.seed, drawTiers(drawer.sheet, draft.seed, 300), 0), 42);
    expect(again.entries.equals(draft.entries)).toBe(true);
    expect(again.merkleRoot).toBe(draft.merkleRoot);
    expect(draft.seedHash).toBe(seedHashOf(draft.seed));
    expect(draft.merkleRoot).toMatch(/^[0-9a-f]{64}$/);
    // Levels from nodes of 16 leaves up: 19 + 10 + 5 + 3 + 2 + 1 nodes for 300 entries.
    expect(draft.merkleLevels.length).toBe((19 + 10 + 5 + 3 + 2 + 1) * 32);
    const derived = deriveBlockEntries(draft.seed, SAMPLE_PAR_SHEET, { size: 300 });
    expect(
      decodeBlockEntries(draft.entries).map((outcome) => ({
        prizeTier: outcome.tier,
        multiplier: microsToUsd(outcome.multiplierMillionths),
        reelSymbols: outcome.reelSymbols,
      })),
    ).toEqual(derived.map(({ prizeTier, multiplier, reelSymbols }) => ({ prizeTier, multiplier, reelSymbols })));
    // The block id is part of every leaf: another id, another root.
    expect(draftBlock(drawer, draft, 43).merkleRoot).not.toBe(draft.merkleRoot);
  });

  it("still decodes and verifies a legacy block stored as canonical JSON text", () => {
    const outcomes = outcomesOf(withTiers(new OutcomeDrawer(sample), new Uint8Array([0, 1, 2])));
    const text = JSON.stringify(outcomes.map((o) => ({ t: o.tier, m: o.multiplierMillionths, r: o.reelSymbols })));
    const bytes = Buffer.from(text, "latin1");
    expect(verifyBlock(bytes, commitmentOf(text))).toBe(true);
    expect(decodeBlockEntries(bytes)).toEqual(outcomes);
    const spaced = Buffer.from(text.replace(",", ", "), "latin1");
    expect(verifyBlock(spaced, commitmentOf(spaced))).toBe(false);
  });

  it("builds queue items that read back as the block's outcomes, in order", () => {
    const drawer = new OutcomeDrawer(sample);
    const draft = draftBlock(drawer, drawIndependentBlock(drawer, 500), 77);
    const items = queuedItems(draft).map(parseQueueItem);
    expect(items.map((item) => [item.blockId, item.index])).toEqual(items.map((_, index) => [77, index]));
    expect(items.map((item) => queueItemOutcome(item, drawer.codec))).toEqual(outcomesOf(draft));
  });
});
