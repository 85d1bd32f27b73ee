import { createCipheriv } from "node:crypto";
import { endianness } from "node:os";

/**
 * The DRBG every draw of a block comes from (docs/fairness.md, "Derivation"): AES-256-CTR keyed by
 * the 32-byte seed, read as little-endian uint32 words. A stream is selected by its initial
 * counter block, `u32be(stream) ‖ u32be(position) ‖ u64be(0)`, so streams never overlap (each uses
 * far fewer than 2^64 blocks).
 */
export const STREAMS = {
  /** independent: the tier of each entry; finite_pool: the Fisher–Yates shuffle of the cycle. */
  tiers: 1,
  /** The combination, losing payline and off-payline cells of each entry (position: the block's offset in its cycle). */
  windows: 2,
  /** Salts: the 16-byte keystream block q is the salt of the entry at cycle position q. */
  salts: 3,
} as const;

const TWO_32 = 4_294_967_296;
/** Keystream read per AES call at most: 64 KiB, 16,384 words. */
const CHUNK_BYTES = 65_536;
/** AES's block: a chunk is a whole number of them. */
const AES_BLOCK_BYTES = 16;
const BIG_ENDIAN_HOST = endianness() === "BE";
const ZEROS = Buffer.alloc(CHUNK_BYTES);

export const SEED_BYTES = 32;
export const SALT_BYTES = 16;

function counterBlock(stream: number, position: number, block = 0): Buffer {
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(stream, 0);
  iv.writeUInt32BE(position, 4);
  iv.writeBigUInt64BE(BigInt(block), 8);
  return iv;
}

function cipherOf(seed: Uint8Array, iv: Buffer) {
  if (seed.length !== SEED_BYTES) throw new RangeError(`a seed is ${SEED_BYTES} bytes`);
  return createCipheriv("aes-256-ctr", seed, iv);
}

/** Uniform integers from one stream of a seed, by rejection sampling (no modulo bias). */
export class Keystream {
  private readonly cipher: ReturnType<typeof createCipheriv>;
  private words = new Uint32Array(0);
  private at = 0;
  private readonly zeros: Buffer;

  /**
   * `expectedBytes`: about how much of the stream the caller reads. Chunks are that size (in whole AES
   * blocks, at most 64 KiB), so a draw of one entry encrypts a few hundred bytes rather than 64 KiB;
   * the stream itself is the same however it is chunked (CTR), and reading past the estimate simply
   * takes more chunks.
   */
  constructor(seed: Uint8Array, stream: number, position = 0, expectedBytes = CHUNK_BYTES) {
    this.cipher = cipherOf(seed, counterBlock(stream, position));
    const blocks = Math.max(1, Math.ceil(Math.min(expectedBytes, CHUNK_BYTES) / AES_BLOCK_BYTES));
    this.zeros = ZEROS.subarray(0, blocks * AES_BLOCK_BYTES);
  }

  /** The next word of the stream. */
  nextUint32(): number {
    if (this.at === this.words.length) {
      // Copied into a word array of its own: aligned, and read in the host's order once swapped to it.
      const chunk = Buffer.from(this.cipher.update(this.zeros));
      if (BIG_ENDIAN_HOST) chunk.swap32();
      this.words = new Uint32Array(chunk.buffer, chunk.byteOffset, chunk.length / 4);
      this.at = 0;
    }
    return this.words[this.at++] as number;
  }

  /**
   * A uniform integer in [0, n), 1 ≤ n ≤ 2^32: words at or above 2^32 − (2^32 mod n) are skipped,
   * then the word mod n. Always reads at least one word.
   */
  below(n: number): number {
    // Floor divisions rather than `%`: on doubles (words above 2^31 are doubles) V8 runs `%` as a
    // call to fmod, several times slower. limit = 2^32 − (2^32 mod n).
    const limit = Math.floor(TWO_32 / n) * n;
    for (;;) {
      const word = this.nextUint32();
      if (word < limit) return word - Math.floor(word / n) * n;
    }
  }

  /**
   * A uniform integer in [0, n) for any n ≥ 1: with k the bit length of n − 1, ⌈k/32⌉ words
   * big-endian (the first keeps only its low k mod 32 bits, all 32 when that is 0); retried while ≥ n.
   */
  belowBig(n: bigint): bigint {
    if (n <= BigInt(TWO_32)) return BigInt(this.below(Number(n)));
    const bits = (n - 1n).toString(2).length;
    const words = Math.ceil(bits / 32);
    const topMask = 2n ** BigInt(bits - 32 * (words - 1)) - 1n;
    for (;;) {
      let value = BigInt(this.nextUint32()) & topMask;
      for (let word = 1; word < words; word++) value = (value << 32n) | BigInt(this.nextUint32());
      if (value < n) return value;
    }
  }
}

/** The salts of `count` entries from cycle position `position` on: 16 bytes each, in order. */
export function saltsAt(seed: Uint8Array, position: number, count: number): Buffer {
  const cipher = cipherOf(seed, counterBlock(STREAMS.salts, 0, position));
  return Buffer.concat([cipher.update(Buffer.alloc(count * SALT_BYTES)), cipher.final()]);
}
