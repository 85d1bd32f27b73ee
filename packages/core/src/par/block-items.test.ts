import { describe, expect, it } from "vitest";
import { decodeQueuedOutcome, encodeQueuedOutcome } from "../outcome.js";
import { assertValidParSheet } from "./analyze.js";
import { decodeBlockEntries, draftBlock, entriesTextOf, queuedItems, queuedItemsText } from "./block.js";
import { OutcomeDrawer } from "./draw.js";
import { SAMPLE_PAR_SHEET } from "./sample-sheet.js";

describe("queuedItemsText", () => {
  const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));

  it("is the queue items joined by newlines, byte for byte", () => {
    const draft = draftBlock(drawer, drawer.drawTiers(1_000));
    const text = queuedItemsText(draft, 1_234_567_890).toString("latin1");
    expect(text.split("\n")).toEqual(queuedItems(draft, 1_234_567_890));
    const outcomes = decodeBlockEntries(entriesTextOf(draft));
    text.split("\n").forEach((item, index) => {
      expect(item).toBe(encodeQueuedOutcome({ ...outcomes[index]!, blockId: 1_234_567_890, index }));
      expect(decodeQueuedOutcome(item).index).toBe(index);
    });
  });

  it("holds one item for a block of one and nothing for an empty block", () => {
    const one = draftBlock(drawer, drawer.drawTiers(1));
    expect(queuedItemsText(one, 5).toString("latin1")).toBe(queuedItems(one, 5)[0]);
    expect(queuedItemsText(draftBlock(drawer, new Uint8Array(0)), 5).length).toBe(0);
  });
});
