import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SAMPLE_PAR_SHEET as SAMPLE } from "../sample-par-sheet.js";
import type { ParSheetDocument } from "../types.js";
import { deriveBlockEntries, drawTiers, entryBytes, seedHashOf, shuffleCycle, writeEntries } from "./derive.js";
import { Keystream, STREAMS, saltsAt } from "./keystream.js";
import { entryLeafHashes, leafHash, outcomeText } from "./leaves.js";
import { merkleRoot } from "./merkle.js";
import { CompiledSheet } from "./sheet.js";

/** The sample with T4's combinations 3 : 1, so a weighted combination pick is exercised. */
const WEIGHTED: ParSheetDocument = {
  ...SAMPLE,
  combinations: SAMPLE.combinations.map((combination, index) =>
    index === 3 ? { ...combination, weight: 3 } : combination,
  ),
};
/** A small finite_pool sheet: a cycle of 2,000 entries, a 5×3 window and a 1.5× tier. */
const POOL: ParSheetDocument = {
  ...SAMPLE,
  layout: { reels: 5, rows: 3 },
  prizeTiers: [
    { tier: "T0", multiplier: 0, weight: 1500 },
    { tier: "T1", multiplier: 1.5, weight: 450 },
    { tier: "T2", multiplier: 9.999999, weight: 50 },
  ],
  combinations: [
    { tier: "T1", symbols: ["LEMON", "LEMON", "LEMON", "LEMON", "LEMON"], weight: 1 },
    { tier: "T2", symbols: ["BELL", "BELL", "BELL", "BELL", "BELL"], weight: 2 },
    { tier: "T2", symbols: ["SEVEN", "SEVEN", "SEVEN", "SEVEN", "SEVEN"], weight: 1 },
  ],
  drawMode: "finite_pool",
};

/**
 * docs/fairness.md's derivation written again, independently of derive.ts: the keystream as AES-256
 * of each counter block (ECB, no CTR mode), arithmetic on BigInt, weighted picks by a linear scan.
 */
function referenceStream(seed: Buffer, stream: number, position: number) {
  const aes = createCipheriv("aes-256-ecb", seed, null).setAutoPadding(false);
  let block = 0n;
  let words: number[] = [];
  const next = (): bigint => {
    if (words.length === 0) {
      const counter = Buffer.alloc(16);
      counter.writeUInt32BE(stream, 0);
      counter.writeUInt32BE(position, 4);
      counter.writeBigUInt64BE(block++, 8);
      const out = aes.update(counter);
      words = [0, 4, 8, 12].map((at) => out.readUInt32LE(at));
    }
    return BigInt(words.shift() as number);
  };
  const uniform = (n: number): number => {
    const limit = 2n ** 32n - (2n ** 32n % BigInt(n));
    for (;;) {
      const word = next();
      if (word < limit) return Number(word % BigInt(n));
    }
  };
  const weighted = (weights: number[]): number => {
    let position = uniform(weights.reduce((sum, weight) => sum + weight, 0));
    for (const [index, weight] of weights.entries()) {
      if (position < weight) return index;
      position -= weight;
    }
    throw new Error("unreachable");
  };
  return { uniform, weighted };
}

function referenceEntries(seed: Buffer, sheet: ParSheetDocument, size: number, offset: number) {
  const tierNames = sheet.prizeTiers.map((tier) => tier.tier);
  const ids = sheet.symbols.map((symbol) => symbol.id);
  const tiersStream = referenceStream(seed, 1, 0);
  let tiers: number[];
  if (sheet.drawMode === "finite_pool") {
    const cycle = sheet.prizeTiers.flatMap((tier, index) => Array<number>(tier.weight).fill(index));
    for (let last = cycle.length - 1; last > 0; last--) {
      const pick = tiersStream.uniform(last + 1);
      [cycle[last], cycle[pick]] = [cycle[pick] as number, cycle[last] as number];
    }
    tiers = cycle.slice(offset, offset + size);
  } else {
    tiers = Array.from({ length: size }, () => tiersStream.weighted(sheet.prizeTiers.map((tier) => tier.weight)));
  }
  const windows = referenceStream(seed, 2, offset);
  const winning = new Set(sheet.combinations.map((combination) => combination.symbols.join(",")));
  const aes = createCipheriv("aes-256-ecb", seed, null).setAutoPadding(false);
  return tiers.map((tier, index) => {
    let line: string[];
    if (tier === 0) {
      do line = Array.from({ length: sheet.layout.reels }, () => ids[windows.uniform(ids.length)] as string);
      while (winning.has(line.join(",")));
    } else {
      const options = sheet.combinations.filter((combination) => combination.tier === tierNames[tier]);
      const chosen = options.length > 1 ? windows.weighted(options.map((option) => option.weight)) : 0;
      line = [...(options[chosen] as { symbols: readonly string[] }).symbols];
    }
    const middle = Math.floor(sheet.layout.rows / 2);
    const reelSymbols = line.map((payline) =>
      Array.from({ length: sheet.layout.rows }, (_, row) =>
        row === middle ? payline : (ids[windows.uniform(ids.length)] as string),
      ),
    );
    const counter = Buffer.alloc(16);
    counter.writeUInt32BE(3, 0);
    counter.writeBigUInt64BE(BigInt(offset + index), 8);
    const prizeTier = sheet.prizeTiers[tier] as ParSheetDocument["prizeTiers"][number];
    return {
      index,
      prizeTier: prizeTier.tier,
      multiplier: prizeTier.multiplier,
      reelSymbols,
      salt: aes.update(counter).toString("hex"),
    };
  });
}

describe("deriveBlockEntries", () => {
  it("is docs/fairness.md's derivation: independent blocks, 20 seeds of 500 entries", () => {
    for (let run = 0; run < 20; run++) {
      const seed = randomBytes(32);
      expect(deriveBlockEntries(seed, WEIGHTED, { size: 500 })).toEqual(referenceEntries(seed, WEIGHTED, 500, 0));
    }
  });

  it("is docs/fairness.md's derivation: finite_pool blocks cut at any offset of the cycle", () => {
    const seed = randomBytes(32);
    for (const [offset, size] of [
      [0, 700],
      [700, 700],
      [1400, 600],
    ] as const) {
      expect(deriveBlockEntries(seed.toString("hex"), POOL, { size, offset })).toEqual(
        referenceEntries(seed, POOL, size, offset),
      );
    }
    expect(() => deriveBlockEntries(seed, POOL, { size: 601, offset: 1400 })).toThrow(/past the end of its cycle/);
    const sheet = new CompiledSheet(POOL);
    const cycle = shuffleCycle(sheet, seed);
    expect([0, 1, 2].map((tier) => cycle.filter((value) => value === tier).length)).toEqual([1500, 450, 50]);
  });

  it("answers the same entries for the same seed, and a seed as bytes or hex", () => {
    const seed = randomBytes(32);
    const entries = deriveBlockEntries(seed, SAMPLE, { size: 50 });
    expect(deriveBlockEntries(seed.toString("hex").toUpperCase(), SAMPLE, { size: 50 })).toEqual(entries);
    expect(deriveBlockEntries(randomBytes(32), SAMPLE, { size: 50 })).not.toEqual(entries);
    expect(() => deriveBlockEntries("abcd", SAMPLE, { size: 1 })).toThrow(/32 bytes/);
    expect(seedHashOf(seed)).toBe(createHash("sha256").update(seed).digest("hex"));
  });

  it("fixes the test vector published in docs/fairness.md: seed 00 01 … 1f, the sample sheet, block 1", () => {
    const seed = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    const entries = deriveBlockEntries(seed, SAMPLE, { size: 8 });
    const texts = entries.map((entry) => outcomeText({ blockId: 1, ...entry }));
    const leaves = entries.map((entry, index) => leafHash(entry.salt, texts[index] as string));
    expect({
      texts,
      salt0: entries[0]?.salt,
      leaf0: leaves[0],
      root: merkleRoot(Buffer.from(leaves.join(""), "hex")),
    }).toMatchInlineSnapshot(`
        {
          "leaf0": "5e4bb60c34e6de13d0af81663779b70cc53d08133b57d1e190115c8e696bbc19",
          "root": "75f6265f397fa5a55777dd3fe929618fe746858fa80f84a4e2825703eb9426b5",
          "salt0": "22a519ae4e443095820596936975b11d",
          "texts": [
            "1|0|T0|0|BAR1,BLANK,CHERRY/BELL,BLANK,BAR3/BAR2,BELL,BELL",
            "1|1|T0|0|BAR1,BAR2,BAR2/SEVEN,BAR1,BELL/BAR1,CHERRY,SEVEN",
            "1|2|T0|0|BELL,BAR2,SEVEN/BELL,BAR3,CHERRY/BLANK,LEMON,LEMON",
            "1|3|T0|0|BELL,SEVEN,BAR2/LEMON,BAR1,BLANK/BAR1,CHERRY,BLANK",
            "1|4|T1|2|BAR2,LEMON,SEVEN/BLANK,LEMON,SEVEN/BLANK,LEMON,BELL",
            "1|5|T1|2|SEVEN,LEMON,CHERRY/BAR1,LEMON,BAR2/BLANK,LEMON,BELL",
            "1|6|T1|2|SEVEN,LEMON,BAR3/LEMON,LEMON,CHERRY/BAR1,LEMON,BLANK",
            "1|7|T1|2|BAR2,LEMON,BLANK/BAR1,LEMON,LEMON/BAR2,LEMON,CHERRY",
          ],
        }
      `);
  });
});

describe("leaves", () => {
  it("writes the same leaves from stored entries as outcomeText and leafHash do, on both draw modes", () => {
    const cases: [ParSheetDocument, number][] = [
      [SAMPLE, 0],
      [POOL, 900],
    ];
    for (const [document, offset] of cases) {
      const sheet = new CompiledSheet(document);
      const seed = randomBytes(32);
      const size = 300;
      const tiers =
        document.drawMode === "finite_pool"
          ? shuffleCycle(sheet, seed).subarray(offset, offset + size)
          : drawTiers(sheet, seed, size);
      const body = new Uint8Array(7 + size * entryBytes(sheet));
      writeEntries(sheet, seed, offset, tiers, body, 7);
      const fast = entryLeafHashes(sheet.layout, 123_456_789, 0, body, 7, size, saltsAt(seed, offset, size));
      const slow = deriveBlockEntries(seed, document, { size, offset }).map((entry) =>
        leafHash(entry.salt, outcomeText({ blockId: 123_456_789, ...entry })),
      );
      expect(fast.toString("hex")).toBe(slow.join(""));
    }
  });

  it("writes the same leaves for long symbol ids without a column table, from any first index, with salts at any offset", () => {
    // 17 symbols: 17^3 columns is past the column table's limit, so cells are written one by one.
    const extra = Array.from({ length: 9 }, (_, index) => ({ id: `EXTRA_LONG_SYMBOL_ID_${index}`, name: "Extra" }));
    const wide: ParSheetDocument = { ...SAMPLE, symbols: [...SAMPLE.symbols, ...extra] };
    const sheet = new CompiledSheet(wide);
    const seed = randomBytes(32);
    const size = 40;
    const body = new Uint8Array(size * entryBytes(sheet));
    writeEntries(sheet, seed, 0, drawTiers(sheet, seed, size), body, 0);
    // A view whose byte offset is not a multiple of 4: salts are then copied byte by byte.
    const salts = Buffer.concat([Buffer.alloc(1), saltsAt(seed, 0, size)]).subarray(1);
    // Indexes 985 … 1024 carry the index's digits over from 999 to 1000.
    const fast = entryLeafHashes(sheet.layout, 77, 985, body, 0, size, salts);
    const slow = deriveBlockEntries(seed, wide, { size }).map((entry) =>
      leafHash(entry.salt, outcomeText({ blockId: 77, ...entry, index: 985 + entry.index })),
    );
    expect(fast.toString("hex")).toBe(slow.join(""));
  });

  it("writes the multiplier's shortest exact decimal and the reels as the contract says", () => {
    expect(
      outcomeText({
        blockId: 7,
        index: 12,
        prizeTier: "T2",
        multiplier: 9.999999,
        reelSymbols: [
          ["A", "B"],
          ["C", "D"],
        ],
      }),
    ).toBe("7|12|T2|9.999999|A,B/C,D");
    expect(outcomeText({ blockId: 7, index: 0, prizeTier: "T0", multiplier: 0, reelSymbols: [["A"]] })).toBe(
      "7|0|T0|0|A",
    );
    expect(outcomeText({ blockId: 7, index: 0, prizeTier: "T1", multiplier: 1.5, reelSymbols: [["A"]] })).toBe(
      "7|0|T1|1.5|A",
    );
    expect(outcomeText({ blockId: 7, index: 0, prizeTier: "T9", multiplier: 1000, reelSymbols: [["A"]] })).toBe(
      "7|0|T9|1000|A",
    );
  });
});

describe("the keystream", () => {
  it("is the same stream however it is chunked (a forced spin's draw reads a few hundred bytes)", () => {
    const seed = randomBytes(32);
    const read = (expectedBytes?: number) => {
      const stream = new Keystream(seed, STREAMS.windows, 7, expectedBytes);
      return Array.from({ length: 20_000 }, () => stream.nextUint32());
    };
    const whole = read();
    for (const expectedBytes of [1, 16, 100, 144, 4096, 1_000_000]) expect(read(expectedBytes)).toEqual(whole);
  });

  it("draws uniformly below n (χ² over 60,000 draws below 6 at significance 10⁻⁶)", () => {
    const stream = new Keystream(randomBytes(32), STREAMS.windows);
    const counts = new Array<number>(6).fill(0);
    for (let draw = 0; draw < 60_000; draw++) {
      const value = stream.below(6);
      counts[value] = (counts[value] ?? 0) + 1;
    }
    const chiSquare = counts.reduce((sum, count) => sum + (count - 10_000) ** 2 / 10_000, 0);
    expect(chiSquare).toBeLessThan(35.89); // df 5
  });

  it("draws below bounds past 2^32 (tier weights that sum past it), covering both halves", () => {
    const stream = new Keystream(randomBytes(32), STREAMS.tiers);
    const bound = 2n ** 60n + 12_345n;
    let high = 0;
    for (let draw = 0; draw < 2000; draw++) {
      const value = stream.belowBig(bound);
      expect(value >= 0n && value < bound).toBe(true);
      if (value >= bound / 2n) high++;
    }
    expect(high).toBeGreaterThan(850);
    expect(high).toBeLessThan(1150);
    const heavy = new CompiledSheet({
      ...SAMPLE,
      prizeTiers: SAMPLE.prizeTiers.map((tier) => ({ ...tier, weight: tier.weight * 2 ** 30 })),
    });
    const tiers = drawTiers(heavy, randomBytes(32), 20_000);
    expect(tiers.filter((tier) => tier === 0).length / 20_000).toBeCloseTo(0.64669, 1);
  });
});
