import { couldBeId, type Environment, ServiceError } from "@outcomes/core";
import { and, asc, count, desc, eq, gte, sql } from "drizzle-orm";
import type { Database } from "../client.js";
import { webhookDeliveries, webhooks } from "../schema/webhooks.js";
import type { PageWindow } from "./paging.js";
import { createRedelivery, type DeliveryRecord } from "./webhooks.js";

export interface DeliveryFilter {
  status?: DeliveryRecord["status"] | undefined;
  partnerId?: string | undefined;
  webhookId?: string | undefined;
}

/** A delivery with the partner and environment of the webhook it went to. */
export type DeliveryWithOwner = { delivery: DeliveryRecord; partnerId: string; environment: Environment };

/** Every partner's deliveries, newest first, narrowed by any of the filters. */
export async function listDeliveriesForOperator(
  db: Database,
  filter: DeliveryFilter,
  page: PageWindow,
): Promise<{ rows: DeliveryWithOwner[]; total: number }> {
  const where = and(
    filter.status !== undefined ? eq(webhookDeliveries.status, filter.status) : undefined,
    filter.partnerId !== undefined ? eq(webhooks.partnerId, filter.partnerId) : undefined,
    filter.webhookId !== undefined ? eq(webhookDeliveries.webhookId, filter.webhookId) : undefined,
  );
  const owner = { partnerId: webhooks.partnerId, environment: webhooks.environment };
  const [rows, [total]] = await Promise.all([
    db
      .select({ delivery: webhookDeliveries, ...owner })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(where)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(page.limit)
      .offset(page.offset),
    db
      .select({ value: count() })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(where),
  ]);
  return { rows, total: total?.value ?? 0 };
}

/**
 * An operator's replay of one delivery: the partner API's redeliver (a new delivery of the same
 * event, same body bytes) without the ownership check. Unknown 404 KS-4215; deleted webhook KS-4101.
 */
export async function operatorRedelivery(db: Database, deliveryId: string): Promise<DeliveryWithOwner> {
  const notFound = () => new ServiceError("KS-4215", { message: "Webhook delivery not found" });
  if (!couldBeId(deliveryId)) throw notFound();
  const [found] = await db
    .select({ webhook: webhooks })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(eq(webhookDeliveries.id, deliveryId));
  if (!found) throw notFound();
  const delivery = await createRedelivery(db, found.webhook, deliveryId);
  return { delivery, partnerId: found.webhook.partnerId, environment: found.webhook.environment };
}

/** At most this many replays per bulk run; a second run takes the rest (replayed ones are skipped). */
const BULK_REPLAY_MAX = 1000;

/**
 * Replays failed deliveries (failed since `since`, if given) to webhooks that are still active, each
 * at most once: a delivery that already has a redelivery (by an earlier run, or the partner's own
 * redeliver) is skipped, so repeating the command, or two operators running it at once, sends
 * nothing twice. Each replay locks its original row and re-checks under the lock.
 */
export async function replayFailedDeliveries(
  db: Database,
  filter: { since?: Date | undefined; webhookId?: string | undefined; partnerId?: string | undefined },
): Promise<{ replayed: DeliveryWithOwner[]; more: boolean }> {
  const notReplayed = sql`not exists (select 1 from ${webhookDeliveries} r where r.redelivery_of = ${webhookDeliveries.id})`;
  const candidates = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(
      and(
        eq(webhookDeliveries.status, "failed"),
        eq(webhooks.isActive, true),
        sql`${webhooks.deletedAt} is null`,
        filter.since ? gte(webhookDeliveries.completedAt, filter.since) : undefined,
        filter.webhookId !== undefined ? eq(webhookDeliveries.webhookId, filter.webhookId) : undefined,
        filter.partnerId !== undefined ? eq(webhooks.partnerId, filter.partnerId) : undefined,
        notReplayed,
      ),
    )
    .orderBy(asc(webhookDeliveries.completedAt), asc(webhookDeliveries.id))
    .limit(BULK_REPLAY_MAX + 1);
  const replayed: DeliveryWithOwner[] = [];
  for (const { id } of candidates.slice(0, BULK_REPLAY_MAX)) {
    const row = await db.transaction(async (tx) => {
      const [locked] = await tx
        .select({ webhook: webhooks })
        .from(webhookDeliveries)
        .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
        .where(eq(webhookDeliveries.id, id))
        .for("update", { of: webhookDeliveries });
      // A new statement sees what a concurrent run committed while we waited for the lock.
      const [already] = await tx
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.redeliveryOf, id))
        .limit(1);
      if (!locked || already || !locked.webhook.isActive || locked.webhook.deletedAt) return null;
      const delivery = await createRedelivery(tx, locked.webhook, id);
      return { delivery, partnerId: locked.webhook.partnerId, environment: locked.webhook.environment };
    });
    if (row) replayed.push(row);
  }
  return { replayed, more: candidates.length > BULK_REPLAY_MAX };
}
