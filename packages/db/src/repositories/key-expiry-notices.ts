import { type Environment, type KeyExpiryThreshold, settledThresholds } from "@outcomes/core";
import { and, gt, isNull, lte, sql } from "drizzle-orm";
import type { Database } from "../client.js";
import { apiKeyExpiryNotices, apiKeys } from "../schema/api-keys.js";
import { insertEvent } from "./events.js";

/** An unrevoked key the sweep looks at, with the thresholds already recorded for it. */
export interface ExpiringKey {
  id: string;
  partnerId: string;
  environment: Environment;
  prefix: string;
  expiresAt: Date;
  notified: number[];
}

/** Unrevoked keys that expire after `now` and at or before `until`. */
export async function unrevokedKeysExpiring(db: Database, now: Date, until: Date): Promise<ExpiringKey[]> {
  return db
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
    .where(and(isNull(apiKeys.revokedAt), gt(apiKeys.expiresAt, now), lte(apiKeys.expiresAt, until)));
}

export interface ExpiryNotice {
  apiKeyId: string;
  daysBeforeExpiry: KeyExpiryThreshold;
  eventId: string;
}

/**
 * The key's notice at threshold `due`, in a transaction of its own: the rows of `due` and every
 * larger threshold (those count as passed) go in with `ON CONFLICT DO NOTHING RETURNING`, and the
 * `api_key.expiring` event is written only by the transaction whose `due` row went in, so a doubled
 * or concurrent sweep sends each notice once. Null when another one had recorded it.
 */
export async function recordExpiryNotice(
  db: Database,
  key: ExpiringKey,
  due: KeyExpiryThreshold,
  now: Date,
): Promise<ExpiryNotice | null> {
  return db.transaction(async (tx) => {
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
}
