import { ErrorCode, microsToUsd, parseScaledDecimal, ServiceError, usdToMicros } from "@outcomes/core";

/** A JSON number has at most 6 decimals (checked by the request schema: more is KS-4101). */
export function hasAtMostSixDecimals(usd: number): boolean {
  return usdToMicros(usd) !== null || (Number.isFinite(usd) && parseScaledDecimal(String(usd), 6) !== null);
}

/** The wager as an exact decimal string of micro-USD (whatever its size), e.g. 1.5 → "1500000". */
export function exactWager(usd: number): string {
  const micros = parseScaledDecimal(String(usd), 6);
  if (micros === null)
    throw new ServiceError(ErrorCode.InvalidRequest, { message: "wagerUsd has more than 6 decimal places" });
  return micros.toString();
}

export interface WagerLimits {
  minWagerMicros: number | null;
  maxWagerMicros: number;
}

/**
 * The wager in micro-USD, or KS-4103 when it is zero, negative or outside the game's [min, max]
 * (both inclusive; no minimum means any positive amount up to the maximum). Compared as bigint, so
 * an absurd wager such as 1e30 is "out of range" rather than an overflow.
 */
export function wagerMicrosWithin(wagerUsd: number, limits: WagerLimits): number {
  const micros = usdToMicros(wagerUsd) ?? parseScaledDecimal(String(wagerUsd), 6);
  if (micros === null)
    throw new ServiceError(ErrorCode.InvalidRequest, { message: "wagerUsd has more than 6 decimal places" });
  // A bigint here is past the exact range: out of any game's bounds, compared without overflow.
  if (micros <= 0 || micros < (limits.minWagerMicros ?? 1) || micros > limits.maxWagerMicros) {
    throw new ServiceError(ErrorCode.WagerOutOfRange, {
      details: [{ path: "wagerUsd", message: wagerRangeText(limits) }],
    });
  }
  return Number(micros);
}

/** Zero or negative is refused before the game is even looked up. */
export function assertPositiveWager(wagerUsd: number): void {
  if (!(wagerUsd > 0)) {
    throw new ServiceError(ErrorCode.WagerOutOfRange, {
      details: [{ path: "wagerUsd", message: "must be greater than 0" }],
    });
  }
}

function wagerRangeText(limits: WagerLimits): string {
  const max = microsToUsd(limits.maxWagerMicros);
  return limits.minWagerMicros === null
    ? `must be greater than 0 and at most ${max}`
    : `must be between ${microsToUsd(limits.minWagerMicros)} and ${max}`;
}
