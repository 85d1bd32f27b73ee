/**
 * Exact non-negative rationals as BigInt pairs, only as far as the PAR math needs them:
 * comparisons are done by cross-multiplying, never through floats.
 */
export interface Rational {
  num: bigint;
  den: bigint;
}

export function rational(num: bigint, den: bigint): Rational {
  if (den <= 0n) throw new RangeError("denominator must be positive");
  const divisor = gcd(num < 0n ? -num : num, den);
  return { num: num / divisor, den: den / divisor };
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x === 0n ? 1n : x;
}

/**
 * A finite number as the exact value of its shortest decimal form (`String(value)`, the digits a
 * JSON document writes for it), with the decimal places that form has. So 0.59995 is 59995/100000,
 * not the binary fraction the double holds (0.59994999999999998…).
 */
export function decimalOf(value: number): { value: Rational; places: number } {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!match) throw new RangeError(`not a finite number: ${value}`);
  const [, sign, whole = "", fraction = "", exponent = "0"] = match;
  const digits = BigInt(`${sign}${whole}${fraction}`);
  const shift = Number(exponent) - fraction.length;
  if (shift >= 0) return { value: { num: digits * 10n ** BigInt(shift), den: 1n }, places: 0 };
  return { value: rational(digits, 10n ** BigInt(-shift)), places: -shift };
}

/** |a − b| ≤ c, exactly. */
export function withinTolerance(a: Rational, b: Rational, tolerance: Rational): boolean {
  const diff = a.num * b.den - b.num * a.den;
  const absDiff = diff < 0n ? -diff : diff;
  return absDiff * tolerance.den <= tolerance.num * a.den * b.den;
}

/** The rational as a decimal string, rounded half up to `places` decimals, without trailing zeros. */
export function toDecimalString(value: Rational, places = 12): string {
  const negative = value.num < 0n;
  const abs = negative ? -value.num : value.num;
  const scale = 10n ** BigInt(places);
  const scaled = (abs * scale * 2n + value.den) / (value.den * 2n);
  const whole = scaled / scale;
  const fraction = (scaled % scale).toString().padStart(places, "0").replace(/0+$/, "");
  return `${negative && scaled !== 0n ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** Nearest double, for reported figures only (about 15 significant digits are kept). */
export function toNumber(value: Rational): number {
  const scale = 10n ** 30n;
  return Number((value.num * scale) / value.den) / 1e30;
}
