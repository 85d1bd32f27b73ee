import { hash, randomBytes, randomInt } from "node:crypto";
import {
  assertValidParSheet,
  draftBlock,
  drawIndependentBlock,
  OutcomeDrawer,
  SAMPLE_PAR_SHEET,
  treeInputOf,
} from "@outcomes/core";
import { blockTreeLevels, merkleLevels, nodeCryptoSha256Batch } from "@outcomes/sdk";
import { loadError, type Sha256BatchBinding, sha256Batch } from "@outcomes/sha256-batch";
import { describe, expect, it } from "vitest";
import { draftOffThread, treeHashing } from "./tree-hasher.js";

const sha256 = (bytes: Uint8Array) => hash("sha256", bytes, "buffer");

/** The binding `npm ci` builds; these tests need it (a missing compiler would otherwise go unseen). */
function native(): Sha256BatchBinding {
  if (!sha256Batch) throw new Error(`@outcomes/sha256-batch is not built: ${loadError}`);
  return sha256Batch;
}

describe("native batch SHA-256 (@outcomes/sha256-batch)", () => {
  it("is built and is what the tree threads hash with", () => {
    expect(loadError).toBeNull();
    expect(treeHashing).toEqual({ hasher: "native batch (@outcomes/sha256-batch)" });
  });

  it("hashes every message of a batch as node:crypto does, wherever the messages lie", () => {
    // Lengths around the SHA-256 block edges (55/56, 64, 119/120), empty ones, and a view at an odd offset.
    const backing = randomBytes(5_001);
    const input = backing.subarray(1);
    const lengths = [0, 1, 31, 55, 56, 63, 64, 65, 119, 120, 200, 0, 1_000];
    const bounds: number[] = [];
    for (const length of lengths) {
      const start = randomInt(0, input.length - length + 1);
      bounds.push(start, start + length);
    }
    const out = Buffer.alloc(lengths.length * 32);
    native().hashMany(input, Uint32Array.from(bounds), out);
    lengths.forEach((_, message) => {
      const expected = sha256(input.subarray(bounds[2 * message], bounds[2 * message + 1]));
      expect(out.subarray(message * 32, (message + 1) * 32).toString("hex")).toBe(expected.toString("hex"));
    });
  });

  it("hashes inner nodes SHA-256(0x01 ‖ left ‖ right) as node:crypto does", () => {
    const level = randomBytes(7 * 32);
    const out = Buffer.alloc(3 * 32);
    native().hashPairs(level, 3, out);
    for (let pair = 0; pair < 3; pair++) {
      const expected = sha256(Buffer.concat([Buffer.of(1), level.subarray(pair * 64, (pair + 1) * 64)]));
      expect(out.subarray(pair * 32, (pair + 1) * 32).equals(expected)).toBe(true);
    }
  });

  it("refuses arguments it cannot honour, writing nothing", () => {
    const out = Buffer.alloc(64);
    const bad: [() => void, ErrorConstructor, RegExp][] = [
      [() => native().hashMany("text" as never, new Uint32Array(2), out), TypeError, /Uint8Array/],
      [() => native().hashMany(Buffer.alloc(8), Uint32Array.of(0), out), TypeError, /pairs/],
      [() => native().hashMany(Buffer.alloc(8), new Uint8Array(2) as never, out), TypeError, /Uint32Array/],
      [() => native().hashMany(Buffer.alloc(8), Uint32Array.of(0, 9), out), RangeError, /within input/],
      [() => native().hashMany(Buffer.alloc(8), Uint32Array.of(0, 8, 5, 4), out), RangeError, /at most its end/],
      [() => native().hashMany(Buffer.alloc(8), Uint32Array.of(0, 1, 0, 2, 0, 3), out), RangeError, /fewer digests/],
      [() => native().hashPairs(Buffer.alloc(64), 2, out), RangeError, /pairs/],
      [() => native().hashPairs(Buffer.alloc(192), 3, out), RangeError, /pairs/],
      [() => native().hashPairs(Buffer.alloc(64), -1, out), RangeError, /pairs/],
      [() => (native().hashPairs as (...args: unknown[]) => void)(Buffer.alloc(64)), TypeError, /hashPairs/],
    ];
    for (const [call, type, message] of bad) {
      expect(call).toThrow(type);
      expect(call).toThrow(message);
    }
    expect(out.equals(Buffer.alloc(64))).toBe(true);
  });

  it("builds the same block trees as node:crypto, on this thread and on the tree threads", async () => {
    const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
    for (const size of [1, 2, 3, 17, 1_000, 4_099]) {
      const drawn = drawIndependentBlock(drawer, size);
      const input = treeInputOf(drawer, drawn, 9_000 + size);
      const slow = blockTreeLevels(input, nodeCryptoSha256Batch);
      const fast = blockTreeLevels(input, native());
      expect(fast.map((level) => level.toString("hex"))).toEqual(slow.map((level) => level.toString("hex")));
      expect(
        merkleLevels(slow[0] as Buffer, native())
          .at(-1)
          ?.toString("hex"),
      ).toBe(slow.at(-1)?.toString("hex"));
      // The tree threads (native) and the SDK's default (node:crypto) on this thread agree on every commitment.
      const offThread = await draftOffThread(drawer, drawn, 9_000 + size);
      const onThread = draftBlock(drawer, drawn, 9_000 + size);
      expect(offThread.merkleRoot).toBe(onThread.merkleRoot);
      expect(offThread.merkleLevels.equals(onThread.merkleLevels)).toBe(true);
    }
  });
});
