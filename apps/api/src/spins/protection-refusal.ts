import { ErrorCode, microsToUsd, ServiceError } from "@outcomes/core";
import type { ProtectionVerdict } from "@outcomes/db";

/** The codes a spin refused by player protection answers (CONTRACT §16); settlement reports count them. */
export const PROTECTION_CODES = [
  ErrorCode.WagerAboveJurisdictionLimit,
  ErrorCode.PlayerRestricted,
  ErrorCode.PlayerLimitReached,
  ErrorCode.RoundTooSoon,
] as const;

/** A protection verdict as the partner is told it; nothing was written and no outcome used. */
export function protectionRefusal(verdict: ProtectionVerdict): ServiceError {
  switch (verdict.check) {
    case "restricted":
      return new ServiceError(ErrorCode.PlayerRestricted, {
        details: { restriction: verdict.restriction, until: new Date(verdict.until).toISOString() },
      });
    case "stake":
      return new ServiceError(ErrorCode.WagerAboveJurisdictionLimit, {
        details: { jurisdiction: verdict.jurisdiction, maxWagerUsd: microsToUsd(verdict.maxWagerMicros) },
      });
    case "pace":
      return new ServiceError(ErrorCode.RoundTooSoon, {
        details: { retryAfterMs: verdict.retryAfterMs },
        retryAfterSeconds: Math.ceil(verdict.retryAfterMs / 1000),
      });
    case "limit":
      return new ServiceError(ErrorCode.PlayerLimitReached, {
        details: { limit: verdict.limit, period: verdict.period, remainingUsd: microsToUsd(verdict.remainingMicros) },
      });
  }
}
