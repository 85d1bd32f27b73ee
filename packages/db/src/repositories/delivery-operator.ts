import { couldBeId, type Environment, ErrorCode, ServiceError } from "@outcomes/core";
import { and, count, desc, eq, gte, inArray } from "drizzle-orm";
import type { Database } from "../client.js";
import { webhookDeliveries, webhooks } from "../schema/webhooks.js";
import type { DeliveryRecord } from "./deliveries.js";
import { replayFailedOnce } from "./delivery-replay.js";
import type { PageWindow } from "./paging.js";
import { createRedelivery } from "./webhooks.js";

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
  const notFound = () => new ServiceError(ErrorCode.NotFound, { message: "Webhook delivery not found" });
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
 * at most once (`replayFailedOnce`): repeating the command, two operators running it at once, or a
 * partner's recover at the same time send nothing twice. Oldest failure first.
 */
export async function replayFailedDeliveries(
  db: Database,
  filter: { since?: Date | undefined; webhookId?: string | undefined; partnerId?: string | undefined },
): Promise<{ replayed: DeliveryWithOwner[]; more: boolean }> {
  return db.transaction(async (tx) => {
    const { replayed, more } = await replayFailedOnce(
      tx,
      and(
        filter.since ? gte(webhookDeliveries.completedAt, filter.since) : undefined,
        filter.webhookId !== undefined ? eq(webhookDeliveries.webhookId, filter.webhookId) : undefined,
        filter.partnerId !== undefined ? eq(webhooks.partnerId, filter.partnerId) : undefined,
      ),
      BULK_REPLAY_MAX,
    );
    if (replayed.length === 0) return { replayed: [], more };
    const rows = await tx
      .select({ delivery: webhookDeliveries, partnerId: webhooks.partnerId, environment: webhooks.environment })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(
        inArray(
          webhookDeliveries.id,
          replayed.map((replay) => replay.id),
        ),
      );
    const byId = new Map(rows.map((row) => [row.delivery.id, row]));
    return { replayed: replayed.map((replay) => byId.get(replay.id)!), more };
  });
}
