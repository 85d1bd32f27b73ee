import { dueExpiryThreshold, KEY_EXPIRY_THRESHOLDS_DAYS } from "@outcomes/core";
import { type Database, type ExpiryNotice, recordExpiryNotice, unrevokedKeysExpiring } from "@outcomes/db";
import { eachApart, type Logger, PartialFailure } from "@outcomes/runtime";

const DAY_MS = 24 * 3_600_000;
const LARGEST_THRESHOLD = Math.max(...KEY_EXPIRY_THRESHOLDS_DAYS);

/**
 * The key-expiry sweep (CONTRACT §7): each unrevoked, unexpired key gets one `api_key.expiring`
 * event for the smallest threshold it has reached, unless that one was already sent; the larger
 * thresholds are recorded as passed without events. Each key is settled in its own transaction
 * (`recordExpiryNotice`), so a doubled or concurrent sweep sends each notice once.
 */
export async function sweepExpiringKeys(
  db: Database,
  now = new Date(),
  logger?: Pick<Logger, "error">,
): Promise<ExpiryNotice[]> {
  const candidates = await unrevokedKeysExpiring(db, now, new Date(now.getTime() + LARGEST_THRESHOLD * DAY_MS));

  const notices: ExpiryNotice[] = [];
  const due = candidates.flatMap((key) => {
    const threshold = dueExpiryThreshold(key.expiresAt, now);
    return threshold === null || key.notified.includes(threshold) ? [] : [{ key, due: threshold }];
  });
  // One partner's key that cannot be settled never holds back another partner's notice.
  const { failed } = await eachApart(
    due,
    async ({ key, due }) => {
      const notice = await recordExpiryNotice(db, key, due, now);
      if (notice) notices.push(notice);
    },
    (item, error) => logger?.error({ err: error, apiKeyId: item.key.id }, "key-expiry notice failed"),
  );
  if (failed > 0) throw new PartialFailure("key-expiry notices", failed, due.length);
  return notices;
}
