/**
 * Money is integer micro-USD (1 USD = 1,000,000) everywhere inside the service.
 * JSON numbers are converted through their shortest decimal form, so `0.1` is exactly 100000.
 */
const MICROS_PER_USD_BIG = 1_000_000n;

/** Parses a decimal string with at most `scale` decimals into an integer scaled by 10^scale; null if not one. */
export function parseScaledDecimal(text: string, scale = 6): bigint | null {
  const match = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return null;
  const [, sign, intPart = "", fracPart = "", expPart] = match;
  const exponent = expPart ? Number(expPart) : 0;
  // Shift the decimal point by the exponent, then require at most `scale` significant decimals.
  let digits = intPart + fracPart;
  let pointAt = intPart.length + exponent;
  if (pointAt < 0) {
    digits = "0".repeat(-pointAt) + digits;
    pointAt = 0;
  }
  if (pointAt > digits.length) digits += "0".repeat(pointAt - digits.length);
  const whole = digits.slice(0, pointAt) || "0";
  const fraction = digits.slice(pointAt).replace(/0+$/, "");
  if (fraction.length > scale) return null;
  const value = BigInt(whole) * 10n ** BigInt(scale) + BigInt(fraction.padEnd(scale, "0") || "0");
  return sign ? -value : value;
}

/**
 * The common case of `usdToMicros` without text: `micros / 10^6` is the double nearest the decimal
 * with those micros (IEEE division rounds correctly), so it equals `usd` exactly when `usd`'s
 * shortest form has at most 6 decimals; below 2^52 the product's rounding cannot reach the next
 * integer. Null: let the exact path decide (more decimals, huge values).
 */
function commonMicros(usd: number): number | null {
  const micros = Math.round(usd * 1_000_000);
  return Math.abs(micros) < 2 ** 52 && micros / 1_000_000 === usd ? micros + 0 : null;
}

/** USD as a JSON number → micro-USD; null when it is not finite or has more than 6 decimals. */
export function usdToMicros(usd: number): number | null {
  const common = commonMicros(usd);
  if (common !== null) return common;
  if (!Number.isFinite(usd)) return null;
  const micros = parseScaledDecimal(String(usd), 6);
  if (micros === null) return null;
  if (micros > BigInt(Number.MAX_SAFE_INTEGER) || micros < -BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(micros);
}

/** The inverse of `parseScaledDecimal`: an integer scaled by 10^scale as a plain decimal, without trailing zeros. */
export function formatScaledDecimal(value: number | bigint, scale = 6): string {
  const big = BigInt(value);
  const unit = 10n ** BigInt(scale);
  const abs = big < 0n ? -big : big;
  const fraction = (abs % unit).toString().padStart(scale, "0").replace(/0+$/, "");
  return `${big < 0n ? "-" : ""}${abs / unit}${fraction ? `.${fraction}` : ""}`;
}

/**
 * micro-USD → USD as a JSON number (exact decimal, at most 6 places). For a safe integer the
 * division is that number already: an IEEE division of two exact doubles, like the parse of the
 * exact decimal text, rounds the same quotient to the nearest double (`+ 0` turns -0 into 0, as
 * the text does); 0.3–0.45 µs less per call, four calls per spin shown.
 */
export function microsToUsd(micros: number | bigint): number {
  if (typeof micros === "number" && Number.isSafeInteger(micros)) return micros / 1_000_000 + 0;
  return Number(formatScaledDecimal(micros));
}

/** The largest micro-USD amount a JSON number shows exactly (2^53 − 1, CONTRACT §9). */
export const MAX_EXACT_MICROS = BigInt(Number.MAX_SAFE_INTEGER);

/** Whether micro-USD shown as a JSON number of USD stays exact: within ±(2^53 − 1). */
export function isExactMicros(micros: bigint): boolean {
  return micros <= MAX_EXACT_MICROS && micros >= -MAX_EXACT_MICROS;
}

/**
 * Whether the JSON number `microsToUsd` shows for an amount reads back as that amount exactly. Past
 * 2^53 − 1 micro-USD never; just below it not always either (a double holds about 16 significant
 * digits: 9007199254.740991 reads back as 9007199254.740992).
 */
export function showsExactly(micros: bigint): boolean {
  return isExactMicros(micros) && parseScaledDecimal(String(microsToUsd(micros))) === micros;
}

/** Payout of a wager at a multiplier given in millionths, floored to the micro-USD. */
export function payoutMicros(wagerMicros: number, multiplierMillionths: number): number {
  return Number((BigInt(wagerMicros) * BigInt(multiplierMillionths)) / MICROS_PER_USD_BIG);
}

/**
 * The largest wager that, and whose payout at `multiplierMillionths`, stay within `ceilingMicros`
 * (default and at most 2^53 − 1 micro-USD, so payouts and wagers are exact JS integers). A game's
 * maxWager and maxWager × its sheet's largest multiplier must stay within its partner's spin ceiling.
 */
export function maxWagerWithinMicros(multiplierMillionths: number, ceilingMicros = Number.MAX_SAFE_INTEGER): number {
  const ceiling = BigInt(Math.min(ceilingMicros, Number.MAX_SAFE_INTEGER));
  if (multiplierMillionths <= 0) return Number(ceiling);
  const bound = (ceiling * MICROS_PER_USD_BIG) / BigInt(multiplierMillionths);
  return Number(bound < ceiling ? bound : ceiling);
}
