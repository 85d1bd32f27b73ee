import { randomBytes } from "node:crypto";
import {
  auditPath,
  deriveBlockEntries,
  leafHash,
  merkleLevels,
  outcomeText,
  type ParSheetDocument,
  shuffleCycle,
  verifyInclusion,
} from "@outcomes/sdk";
import { describe, expect, it } from "vitest";
import { assertValidParSheet } from "./analyze.js";
import { draftBlock, drawBlock, drawIndependentBlock } from "./block.js";
import { OutcomeDrawer } from "./draw.js";
import { EntryCodec } from "./entries.js";
import { entryProof, proofReads, revealedEntriesOf } from "./fairness.js";
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

describe("entryProof", () => {
  it("proves every entry of blocks of any size as the whole tree does, from a few hundred bytes read", () => {
    const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
    for (const size of [1, 2, 3, 15, 16, 17, 31, 33, 100, 1000]) {
      const drawn = drawIndependentBlock(drawer, size);
      const draft = draftBlock(drawer, drawn, 1042);
      const derived = deriveBlockEntries(drawn.seed, SAMPLE_PAR_SHEET, { size });
      const leaves = Buffer.concat(
        derived.map((entry) => Buffer.from(leafHash(entry.salt, outcomeText({ blockId: 1042, ...entry })), "hex")),
      );
      const levels = merkleLevels(leaves);
      const root = (levels.at(-1) as Buffer).toString("hex");
      const block = {
        blockId: 1042,
        entries: draft.entries,
        seed: drawn.seed,
        position: 0,
        merkleLevels: draft.merkleLevels,
      };
      for (let index = 0; index < size; index += size > 100 ? 37 : 1) {
        const proof = entryProof(block, index);
        const path = auditPath(levels, index).map((node) => node.toString("hex"));
        expect(proof, `${size}/${index}`).toEqual({
          outcomeText: outcomeText({ blockId: 1042, ...derived[index]! }),
          salt: derived[index]!.salt,
          leaf: leaves.toString("hex", index * 32, index * 32 + 32),
          auditPath: path,
          merkleRoot: root,
          treeSize: size,
        });
        expect(verifyInclusion({ ...proof, index, root })).toBe(true);
        const reads = proofReads(size, index);
        expect(reads.count).toBeLessThanOrEqual(16);
        expect(reads.nodeOffsets.length).toBeLessThanOrEqual(Math.ceil(Math.log2(size)) + 2);
      }
    }
  });

  it("refuses stored levels that do not match the entries", () => {
    const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
    const drawn = drawIndependentBlock(drawer, 40);
    const draft = draftBlock(drawer, drawn, 7);
    const levels = Buffer.from(draft.merkleLevels);
    levels[0] = (levels[0] as number) ^ 1;
    const block = { blockId: 7, entries: draft.entries, seed: drawn.seed, position: 0, merkleLevels: levels };
    expect(() => entryProof(block, 3)).toThrow(/do not match its entries/);
    expect(() => entryProof({ ...block, merkleLevels: levels.subarray(1) }, 3)).toThrow(/stored Merkle levels hold/);
  });
});
