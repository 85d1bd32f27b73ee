import { randomBytes } from "node:crypto";
import { deriveBlockEntries, type ParSheetDocument, shuffleCycle } from "@outcomes/sdk";
import { describe, expect, it } from "vitest";
import { assertValidParSheet } from "./analyze.js";
import { drawBlock, drawIndependentBlock } from "./block.js";
import { OutcomeDrawer } from "./draw.js";
import { EntryCodec } from "./entries.js";
import { revealedEntriesOf } from "./fairness.js";
import { SAMPLE_PAR_SHEET, sampleParSheet } from "./sample-sheet.js";

/** Entries `first` to `first + count − 1` of stored entries, as a page reads them: their bytes only. */
function rangeOf(entries: Buffer, first: number, count: number) {
  const { codec, bodyStart } = EntryCodec.read(entries);
  const at = bodyStart + first * codec.entryBytes;
  return { codec, body: entries.subarray(at, at + count * codec.entryBytes), first };
}

describe("revealedEntriesOf", () => {
  it("answers any range of an independent block as the SDK derives it from the seed", () => {
    const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
    const block = drawIndependentBlock(drawer, 3000);
    const derived = deriveBlockEntries(block.seed, SAMPLE_PAR_SHEET, { size: 3000 });
    for (const [first, count] of [
      [0, 1000],
      [1000, 1000],
      [2999, 1],
      [1234, 567],
    ] as const) {
      const range = revealedEntriesOf({ ...rangeOf(block.entries, first, count), seed: block.seed, position: 0 });
      expect(range).toEqual(derived.slice(first, first + count));
    }
  });

  it("salts a finite_pool block's range by its position in the cycle", () => {
    const sheet = sampleParSheet();
    sheet.drawMode = "finite_pool";
    const drawer = new OutcomeDrawer(assertValidParSheet(sheet));
    const seed = randomBytes(32);
    const offset = 5000;
    const block = drawBlock(drawer, seed, shuffleCycle(drawer.sheet, seed).subarray(offset, offset + 2000), offset);
    const derived = deriveBlockEntries(seed, sheet as ParSheetDocument, { size: 2000, offset });
    const range = revealedEntriesOf({ ...rangeOf(block.entries, 1500, 500), seed, position: offset });
    expect(range).toEqual(derived.slice(1500));
  });

  it("refuses bytes that are not a whole number of entries", () => {
    const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
    const block = drawIndependentBlock(drawer, 10);
    const { codec, body } = rangeOf(block.entries, 0, 10);
    expect(() => revealedEntriesOf({ codec, body: body.subarray(1), first: 0, seed: block.seed, position: 0 })).toThrow(
      /whole number of entries/,
    );
  });
});
