import { newId, WEBHOOK_MAX_ATTEMPTS } from "@outcomes/core";
import { and, asc, eq, gte, isNull, type SQL, sql } from "drizzle-orm";
import type { Database, Transaction } from "../client.js";
import { webhookDeliveries, webhooks } from "../schema/webhooks.js";
import { assertNotDeleted, requireOwnWebhook, type WebhookOwner } from "./webhooks.js";

/** A new delivery made by a replay, and the failed one it repeats. */
export interface Replay {
  id: string;
  redeliveryOf: string;
}

/**
 * Replays failed deliveries to active webhooks (those `scope` selects), each at most once: a failed
 * delivery that already has a redelivery (an earlier replay, or the partner's own redeliver) is
 * skipped. The partner's recover and the operator's bulk replay both come here, so neither repeats
 * what the other did, and two runs at once replay nothing twice: the candidates are locked in one
 * order (completion time, id), so runs never deadlock, and the insert checks again for a
 * redelivery in a statement of its own, which sees what a run holding the locks before committed.
 * Run it in a transaction (the locks last until its end); new deliveries in lock order; `more`
 * when `max` left some for another run.
 */
export async function replayFailedOnce(
  tx: Transaction,
  scope: SQL | undefined,
  max = Number.POSITIVE_INFINITY,
): Promise<{ replayed: Replay[]; more: boolean }> {
  const notReplayed = sql`not exists (select 1 from ${webhookDeliveries} r where r.redelivery_of = ${webhookDeliveries.id})`;
  const candidates = tx
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(
      and(
        scope,
        eq(webhookDeliveries.status, "failed"),
        eq(webhooks.isActive, true),
        isNull(webhooks.deletedAt),
        notReplayed,
      ),
    )
    .orderBy(asc(webhookDeliveries.completedAt), asc(webhookDeliveries.id))
    .for("update", { of: webhookDeliveries });
  const locked = Number.isFinite(max) ? await candidates.limit(max + 1) : await candidates;
  const pairs = locked.slice(0, max).map(({ id }) => ({ id: newId("dlv"), original: id }));
  if (pairs.length === 0) return { replayed: [], more: false };
  // One statement for any number of replays: the pairs travel as one JSON parameter.
  const inserted = await tx.execute<{ id: string }>(sql`
    insert into ${webhookDeliveries}
      (id, webhook_id, event_id, event_created_at, event_type, body, max_attempts, next_attempt_at, redelivery_of)
    select pair.id, d.webhook_id, d.event_id, d.event_created_at, d.event_type, d.body, ${WEBHOOK_MAX_ATTEMPTS}, now(), d.id
    from jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) as pair(id text, original text)
    join ${webhookDeliveries} d on d.id = pair.original
    where not exists (select 1 from ${webhookDeliveries} r where r.redelivery_of = d.id)
    returning id`);
  const made = new Set(inserted.map((row) => row.id));
  return {
    replayed: pairs.filter((pair) => made.has(pair.id)).map((pair) => ({ id: pair.id, redeliveryOf: pair.original })),
    more: locked.length > max,
  };
}

/**
 * The partner's recover (CONTRACT §11): a new delivery of the same event for each delivery of the
 * webhook that ended `failed`, was created at or after `since` and was not replayed yet. Returns the
 * new delivery ids, to be queued after the commit. The webhook is share-locked, so a concurrent
 * delete waits and then closes what was recovered, instead of the two crossing; a deleted webhook
 * is 404 KS-4206.
 */
export async function recoverFailedDeliveries(
  db: Database,
  owner: WebhookOwner,
  webhookId: string,
  since: Date,
): Promise<string[]> {
  return db.transaction(async (tx) => {
    const webhook = await requireOwnWebhook(tx, owner, webhookId, { lock: "share" });
    assertNotDeleted(webhook);
    const { replayed } = await replayFailedOnce(
      tx,
      and(eq(webhookDeliveries.webhookId, webhook.id), gte(webhookDeliveries.createdAt, since)),
    );
    return replayed.map((replay) => replay.id);
  });
}
