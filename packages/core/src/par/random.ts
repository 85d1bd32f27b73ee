import { randomInt } from "node:crypto";

/**
 * Uniform draws from the OS CSPRNG through `crypto.randomInt` only (it rejection-samples, so there
 * is no modulo bias). randomInt accepts ranges below 2^48; larger ranges are composed from
 * several draws and rejection-sampled here.
 */
const RANDOM_INT_LIMIT = 2 ** 48;
const CHUNK_BITS = 47;

/** A uniform integer in [0, n). */
export function uniformBelow(n: bigint): bigint {
  if (n <= 0n) throw new RangeError("range must be positive");
  if (n < BigInt(RANDOM_INT_LIMIT)) return BigInt(randomInt(Number(n)));
  const bits = (n - 1n).toString(2).length;
  for (;;) {
    let value = 0n;
    for (let remaining = bits; remaining > 0; remaining -= CHUNK_BITS) {
      const take = Math.min(remaining, CHUNK_BITS);
      value = (value << BigInt(take)) | BigInt(randomInt(2 ** take));
    }
    if (value < n) return value;
  }
}

/** Picks an index with probability weight / Σ weights. */
export class WeightedPicker {
  private readonly small: Float64Array | null;
  private readonly big: bigint[] | null;
  /** Uniform positions in [0, Σ weights) when the sum is below 2^48 (several per randomInt call). */
  private readonly positions: DigitSource | null;

  constructor(weights: readonly number[]) {
    if (weights.length === 0) throw new RangeError("needs at least one weight");
    const total = weights.reduce((sum, weight) => sum + BigInt(weight), 0n);
    // Below 2^48 every partial sum is an exact double and a position is a uniform digit of one
    // randomInt draw (DigitSource: as many positions per call as fit below 2^48).
    if (total < BigInt(RANDOM_INT_LIMIT)) {
      this.small = new Float64Array(weights.length);
      let running = 0;
      weights.forEach((weight, index) => {
        running += weight;
        (this.small as Float64Array)[index] = running;
      });
      this.big = null;
      this.positions = new DigitSource(running);
    } else {
      let running = 0n;
      this.big = weights.map((weight) => {
        running += BigInt(weight);
        return running;
      });
      this.small = null;
      this.positions = null;
    }
  }

  pick(): number {
    if (this.small) return firstAbove(this.small, (this.positions as DigitSource).next());
    const cumulative = this.big as bigint[];
    const position = uniformBelow(cumulative[cumulative.length - 1] as bigint);
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((cumulative[mid] as bigint) > position) high = mid;
      else low = mid + 1;
    }
    return low;
  }
}

/** Index of the first cumulative weight above `position`. */
function firstAbove(cumulative: Float64Array, position: number): number {
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((cumulative[mid] as number) > position) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * Uniform digits in [0, base): one randomInt over base^k yields k independent uniform digits, so a
 * reel window needs one call instead of one per cell.
 */
export class DigitSource {
  private readonly perDraw: number;
  private readonly range: number;
  private value = 0;
  private left = 0;

  constructor(private readonly base: number) {
    if (!Number.isInteger(base) || base < 1) throw new RangeError("base must be a positive integer");
    let digits = 0;
    let range = 1;
    while (base > 1 && range * base < RANDOM_INT_LIMIT) {
      range *= base;
      digits++;
    }
    this.perDraw = digits;
    this.range = range;
  }

  next(): number {
    if (this.base === 1) return 0;
    if (this.left === 0) {
      this.value = randomInt(this.range);
      this.left = this.perDraw;
    }
    const digit = this.value % this.base;
    this.value = (this.value - digit) / this.base;
    this.left--;
    return digit;
  }
}
