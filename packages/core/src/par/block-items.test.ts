import { describe, expect, it } from "vitest";
import { encodeCompactItem, encodeQueuedOutcome, parseQueueItem } from "../outcome.js";
import { assertValidParSheet } from "./analyze.js";
import {
  blockQueueItems,
  codecOfBlockHead,
  decodeBlockEntries,
  draftBlock,
  drawBlock,
  drawIndependentBlock,
  queuedItems,
  queuedItemsText,
  queueItemOutcome,
} from "./block.js";
import { OutcomeDrawer } from "./draw.js";
import { BLOCK_HEADER_MAX_BYTES, EntryCodec } from "./entries.js";
import { SAMPLE_PAR_SHEET } from "./sample-sheet.js";

describe("queuedItemsText", () => {
  const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
  const sealed = (size: number, blockId: number) => draftBlock(drawer, drawIndependentBlock(drawer, size), blockId);

  it("is the queue items joined by newlines, byte for byte", () => {
    const draft = sealed(1_000, 1_234_567_890);
    const text = queuedItemsText(draft).toString("latin1");
    expect(text.split("\n")).toEqual(queuedItems(draft));
    // Each is the compact item of its entry's stored bytes, and reads back as that entry's outcome.
    const outcomes = decodeBlockEntries(draft.entries);
    const { codec, bodyStart } = EntryCodec.read(draft.entries);
    text.split("\n").forEach((item, index) => {
      const entry = draft.entries.subarray(
        bodyStart + index * codec.entryBytes,
        bodyStart + (index + 1) * codec.entryBytes,
      );
      expect(item).toBe(encodeCompactItem(1_234_567_890, index, entry));
      expect(item.length).toBeLessThanOrEqual(44); // one allocation in Redis
      const parsed = parseQueueItem(item);
      expect(parsed).toMatchObject({ blockId: 1_234_567_890, index });
      expect(queueItemOutcome(parsed, codec)).toEqual(outcomes[index]);
    });
  });

  it("holds one item for a block of one and nothing for an empty block", () => {
    const one = sealed(1, 5);
    expect(queuedItemsText(one).toString("latin1")).toBe(queuedItems(one)[0]);
    const empty = drawBlock(drawer, Buffer.alloc(32), new Uint8Array(0), 0);
    expect(queuedItemsText({ ...empty, blockId: 5 }).length).toBe(0);
  });

  it("leaves out the indexes a rebuild skips", () => {
    const draft = sealed(10, 9);
    const all = queuedItems(draft);
    const kept = blockQueueItems(draft.entries, 9, (index) => index % 3 === 0).toString("latin1");
    expect(kept.split("\n")).toEqual(all.filter((_, index) => index % 3 !== 0));
  });

  it("reads back every outcome of a wide layout (20 symbols, 2 reels of 5 rows)", () => {
    const symbols = Array.from({ length: 20 }, (_, index) => `S${index}`);
    const codec = new EntryCodec({
      reels: 2,
      rows: 5,
      symbols,
      tiers: [
        { name: "T0", multiplierMillionths: 0 },
        { name: "T1", multiplierMillionths: 2_500_000 },
      ],
    });
    const body = Buffer.from(Array.from({ length: 3 * codec.entryBytes }, (_, at) => (at % 11 === 0 ? 1 : at % 20)));
    const entries = Buffer.concat([codec.headerFor(3), body]);
    const outcomes = decodeBlockEntries(entries);
    expect(outcomes[0]?.reelSymbols[1]).toHaveLength(5);
    const items = blockQueueItems(entries, 4).toString("latin1").split("\n");
    expect(items.map((item) => queueItemOutcome(parseQueueItem(item), codec))).toEqual(outcomes);
  });

  it("fits the largest header a PAR sheet allows in BLOCK_HEADER_MAX_BYTES, and reads a codec from a block's head", () => {
    const largest = new EntryCodec({
      reels: 5,
      rows: 5,
      symbols: Array.from({ length: 256 }, (_, index) => `S${index}`.padEnd(32, "X")),
      tiers: Array.from({ length: 256 }, (_, index) => ({
        name: `T${index}`,
        multiplierMillionths: 1_000_000_000_000,
      })),
    });
    expect(largest.headerFor(10_000).length).toBe(13_216);
    expect(largest.headerFor(10_000).length).toBeLessThanOrEqual(BLOCK_HEADER_MAX_BYTES);
    const draft = sealed(100, 12);
    const head = draft.entries.subarray(0, Math.min(draft.entries.length, 300));
    expect(codecOfBlockHead(head)?.header.equals(drawer.codec.header)).toBe(true);
    expect(codecOfBlockHead(Buffer.from("[]"))).toBeNull();
  });

  it("refuses items that are neither form, and entries that are not of the block's layout", () => {
    for (const bad of ["", "~1.2.", "~1.2.0", "~1.2.zz", "~a.2.00", "{", '{"b":"x"}', "~1.2.00\n"]) {
      expect(() => parseQueueItem(bad), bad).toThrow();
    }
    const codec = drawer.codec;
    const tooShort = parseQueueItem("~1.2.0001");
    expect(() => queueItemOutcome(tooShort, codec)).toThrow(/bytes/);
    const outOfRange = parseQueueItem(`~1.2.ff${"00".repeat(codec.entryBytes - 1)}`);
    expect(() => queueItemOutcome(outOfRange, codec)).toThrow(/out of range/);
    expect(() => queueItemOutcome(outOfRange, null)).toThrow(/no binary entries/);
  });

  it("writes the same items of a legacy block stored as JSON text", () => {
    const outcomes = decodeBlockEntries(drawIndependentBlock(drawer, 5).entries);
    const legacy = JSON.stringify(outcomes.map((o) => ({ t: o.tier, m: o.multiplierMillionths, r: o.reelSymbols })));
    const items = outcomes.map((outcome, index) => encodeQueuedOutcome({ ...outcome, blockId: 3, index }));
    const kept = blockQueueItems(Buffer.from(legacy, "latin1"), 3, (index) => index === 1).toString("latin1");
    expect(kept.split("\n")).toEqual(items.filter((_, index) => index !== 1));
    expect(blockQueueItems("[]", 3).length).toBe(0);
  });
});
