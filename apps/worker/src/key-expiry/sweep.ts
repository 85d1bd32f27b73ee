import {
  dueExpiryThreshold,
  KEY_EXPIRY_THRESHOLDS_DAYS,
  type KeyExpiryThreshold,
  settledThresholds,
} from "@outcomes/core";
import { apiKeyExpiryNotices, apiKeys, type Database, insertEvent } from "@outcomes/db";
import { eachApart, type Logger, PartialFailure } from "@outcomes/runtime";
import { and, gt, isNull, lte, sql } from "drizzle-orm";

const DAY_MS = 24 * 3_600_000;
const LARGEST_THRESHOLD = Math.max(...KEY_EXPIRY_THRESHOLDS_DAYS);

export interface ExpiryNotice {
  apiKeyId: string;
  daysBeforeExpiry: KeyExpiryThreshold;
  eventId: string;
}

/**
 * The key-expiry sweep (CONTRACT §7): each unrevoked, unexpired key gets one `api_key.expiring`
 * event for the smallest threshold it has reached, unless that one was already sent; the larger
 * thresholds are recorded as passed without events. Each key is settled in its own transaction:
 * the notice rows go in with `ON CONFLICT DO NOTHING RETURNING`, and the event is written only by
 * the transaction whose row went in, so a doubled or concurrent sweep sends each notice once.
 */
export async function sweepExpiringKeys(
  db: Database,
  now = new Date(),
  logger?: Pick<Logger, "error">,
): Promise<ExpiryNotice[]> {
  const candidates = await db
    .select({
      id: apiKeys.id,
      partnerId: apiKeys.partnerId,
      environment: apiKeys.environment,
      prefix: apiKeys.prefix,
      expiresAt: apiKeys.expiresAt,
      notified: sql<
        number[]
      >`coalesce((select array_agg(n.days_before_expiry) from ${apiKeyExpiryNotices} n where n.api_key_id = ${apiKeys.id}), '{}')`,
    })
    .from(apiKeys)
    .where(
      and(
        isNull(apiKeys.revokedAt),
        gt(apiKeys.expiresAt, now),
        lte(apiKeys.expiresAt, new Date(now.getTime() + LARGEST_THRESHOLD * DAY_MS)),
      ),
    );

  const notices: ExpiryNotice[] = [];
  const due = candidates.flatMap((key) => {
    const threshold = dueExpiryThreshold(key.expiresAt, now);
    return threshold === null || key.notified.includes(threshold) ? [] : [{ key, due: threshold }];
  });
  // One partner's key that cannot be settled never holds back another partner's notice.
  const { failed } = await eachApart(
    due,
    async ({ key, due }) => {
      const notice = await db.transaction(async (tx) => {
        const inserted = await tx
          .insert(apiKeyExpiryNotices)
          .values(settledThresholds(due).map((daysBeforeExpiry) => ({ apiKeyId: key.id, daysBeforeExpiry })))
          .onConflictDoNothing()
          .returning({ days: apiKeyExpiryNotices.daysBeforeExpiry });
        if (!inserted.some((row) => row.days === due)) return null;
        const event = await insertEvent(tx, {
          partnerId: key.partnerId,
          environment: key.environment,
          type: "api_key.expiring",
          data: {
            apiKeyId: key.id,
            prefix: key.prefix,
            environment: key.environment,
            expiresAt: key.expiresAt.toISOString(),
            daysBeforeExpiry: due,
          },
          now,
        });
        return { apiKeyId: key.id, daysBeforeExpiry: due, eventId: event.id };
      });
      if (notice) notices.push(notice);
    },
    (item, error) => logger?.error({ err: error, apiKeyId: item.key.id }, "key-expiry notice failed"),
  );
  if (failed > 0) throw new PartialFailure("key-expiry notices", failed, due.length);
  return notices;
}
