import { describe, expect, it } from "vitest";
import {
  decodeQueuedOutcome,
  encodeCompactItem,
  encodeQueuedOutcome,
  parseQueueItem,
  presentationOf,
  type QueuedOutcome,
} from "./outcome.js";

const window = [
  ["A", "SEVEN", "B"],
  ["C", "SEVEN", "D"],
  ["E", "SEVEN", "F"],
];

describe("queued outcomes", () => {
  it("encode as compact JSON in a fixed key order and decode back", () => {
    const outcome: QueuedOutcome = {
      blockId: 7,
      index: 3,
      tier: "T6",
      multiplierMillionths: 1_000_000_000,
      reelSymbols: window,
    };
    const item = encodeQueuedOutcome(outcome);
    expect(item).toBe(
      '{"b":7,"i":3,"t":"T6","m":1000000000,"r":[["A","SEVEN","B"],["C","SEVEN","D"],["E","SEVEN","F"]]}',
    );
    expect(decodeQueuedOutcome(item)).toEqual(outcome);
    const { blockId, index, ...rest } = outcome;
    expect(parseQueueItem(item)).toEqual({ blockId, index, outcome: rest });
  });

  it("encode compact: the position, then the entry's stored bytes in hex", () => {
    const item = encodeCompactItem(1_234_567, 9_999, Uint8Array.of(1, 0, 15, 255));
    expect(item).toBe("~1234567.9999.01000fff");
    expect(parseQueueItem(item)).toEqual({ blockId: 1_234_567, index: 9_999, entry: Buffer.from("01000fff", "hex") });
  });
});

describe("presentationOf", () => {
  it("reads the payline from the middle row and highlights it on a win", () => {
    const presentation = presentationOf({ tier: "T1", multiplierMillionths: 2_000_000, reelSymbols: window });
    expect(presentation.comboString).toBe("SEVEN-SEVEN-SEVEN");
    expect(presentation.reelSymbols).toBe(window);
    expect(presentation.animationHints).toEqual({
      winLine: [1, 1, 1],
      celebration: "small",
      highlight: [
        [false, true, false],
        [false, true, false],
        [false, true, false],
      ],
    });
  });

  it("shows no win line and no highlight on a loss", () => {
    const { animationHints } = presentationOf({ tier: "T0", multiplierMillionths: 0, reelSymbols: window });
    expect(animationHints.winLine).toBeNull();
    expect(animationHints.celebration).toBe("none");
    expect(animationHints.highlight.flat().some(Boolean)).toBe(false);
  });

  it("celebrates by multiplier: small below 10×, big below 100×, mega from 100×", () => {
    const celebration = (multiplierMillionths: number) =>
      presentationOf({ tier: "T1", multiplierMillionths, reelSymbols: window }).animationHints.celebration;
    expect([9_999_999, 10_000_000, 99_999_999, 100_000_000].map(celebration)).toEqual(["small", "big", "big", "mega"]);
  });
});
