import {
  assertValidParSheet,
  blockQueueItems,
  drawBlock,
  drawIndependentBlock,
  OutcomeDrawer,
  SAMPLE_PAR_SHEET,
} from "@outcomes/core";
import { describe, expect, it } from "vitest";
import { blockRpush, type ItemScratch, rpushOf } from "./rpush.js";

const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
const itemsOf = (entries: Uint8Array | string, blockId: number) =>
  blockQueueItems(entries, blockId).toString("latin1").split("\n");

describe("blockRpush", () => {
  it("writes a block's queue items as one RESP RPUSH of the list, skipped ones left out, like rpushOf", () => {
    const draft = drawIndependentBlock(drawer, 300);
    const skip = (index: number) => index % 7 === 0;
    const expected = itemsOf(draft.entries, 42).filter((_, index) => !skip(index));
    const command = blockRpush(draft.entries, 42, "ks:outcomes:{7}", { skip });
    expect(command.count).toBe(expected.length);
    const wire = [`*${expected.length + 2}`, "$5", "RPUSH", "$15", "ks:outcomes:{7}"];
    for (const item of expected) wire.push(`$${item.length}`, item);
    expect(command.wire.toString("latin1")).toBe(`${wire.join("\r\n")}\r\n`);
    expect(rpushOf("ks:outcomes:{7}", expected)).toEqual(command);
    expect(blockRpush(drawBlock(drawer, Buffer.alloc(32), new Uint8Array(0), 0).entries, 1, "l").count).toBe(0);
  });

  it("frames items whose lengths have different digit counts (a legacy JSON block)", () => {
    const legacy = JSON.stringify([
      { t: "T", m: 0, r: [["A"]] },
      { t: "T", m: 0, r: [["B".repeat(90)]] },
      { t: "T", m: 0, r: [["C"]] },
    ]);
    const items = itemsOf(legacy, 5);
    expect(items.map((item) => String(item.length).length)).toEqual([2, 3, 2]);
    expect(blockRpush(legacy, 5, "list")).toEqual(rpushOf("list", items));
    expect(blockRpush(legacy, 5, "list", { skip: (index) => index === 0 })).toEqual(rpushOf("list", items.slice(1)));
  });

  it("writes into a lent buffer, grown when a block needs more", () => {
    const scratch: ItemScratch = { bytes: Buffer.alloc(0) };
    for (const size of [10, 200, 10]) {
      const { entries } = drawIndependentBlock(drawer, size);
      expect(blockRpush(entries, size, "list", { scratch })).toEqual(blockRpush(entries, size, "list"));
    }
    expect(scratch.bytes.length).toBeGreaterThan(0);
  });
});
