import { ErrorCode, ServiceError } from "@outcomes/core";
import type { Database } from "../client.js";
import { requirePartner } from "./partners.js";
import type { ReportKey, SettlementReportRecord } from "./settlement-figures.js";
import {
  type GenerationResult,
  generateSettlementReport,
  partnerHasGames,
  reissueSettlementReport,
} from "./settlements.js";

/**
 * What an operator's "generate" does (operator API and CLI alike): unknown partner 404 KS-4209, no
 * game in the environment 404 KS-4214, a settled report 409 KS-4304. The caller hints the webhooks
 * worker (`notifyEvents`) when the result is created or updated.
 */
export async function operatorGenerateSettlement(db: Database, key: ReportKey): Promise<GenerationResult> {
  await requirePartner(db, key.partnerId);
  if (!(await partnerHasGames(db, key.partnerId, key.environment))) {
    throw new ServiceError(ErrorCode.NoGamesRegistered, {
      message: `No games registered for this partner in ${key.environment}`,
    });
  }
  return asGenerationFailure(() => generateSettlementReport(db, key, "refuse"));
}

/** An operator's reissue of a disputed report: unknown partner KS-4209, no report KS-4301, not disputed KS-4304. */
export async function operatorReissueSettlement(db: Database, key: ReportKey): Promise<SettlementReportRecord> {
  await requirePartner(db, key.partnerId);
  return asGenerationFailure(() => reissueSettlementReport(db, key));
}

/** Unexpected failures of a generation are KS-5009 (retryable), not the generic KS-5001. */
async function asGenerationFailure<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError(ErrorCode.ReportGenerationFailed, { cause: error });
  }
}
