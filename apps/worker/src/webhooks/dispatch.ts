import { type EventEnvelope, newId, serializeEnvelope, WEBHOOK_MAX_ATTEMPTS } from "@outcomes/core";
import { type Database, events, webhookDeliveries, webhooks } from "@outcomes/db";
import { and, asc, eq, gte, inArray, isNull, sql } from "drizzle-orm";

export const DISPATCH_BATCH_SIZE = 200;

/**
 * Fans a batch of outbox events out to deliveries: one per active, non-deleted webhook of the
 * event's partner and environment that subscribes to its type. Events are claimed with
 * `FOR UPDATE SKIP LOCKED`, so any number of workers dispatch side by side without waiting on or
 * repeating each other; the unique (webhook, event) index makes a re-run insert nothing twice.
 * Returns the new delivery ids, to be queued after the commit.
 */
export async function dispatchEvents(
  db: Database,
  batchSize = DISPATCH_BATCH_SIZE,
): Promise<{ events: number; deliveryIds: string[] }> {
  return db.transaction(async (tx) => {
    const batch = await tx
      .select({
        id: events.id,
        partnerId: events.partnerId,
        environment: events.environment,
        type: events.type,
        payload: events.payload,
        createdAt: events.createdAt,
      })
      .from(events)
      .where(isNull(events.dispatchedAt))
      .orderBy(asc(events.createdAt))
      .limit(batchSize)
      .for("update", { skipLocked: true });
    if (batch.length === 0) return { events: 0, deliveryIds: [] };

    const partnerIds = [...new Set(batch.map((event) => event.partnerId))];
    const targets = await tx
      .select({
        id: webhooks.id,
        partnerId: webhooks.partnerId,
        environment: webhooks.environment,
        events: webhooks.events,
      })
      .from(webhooks)
      .where(and(inArray(webhooks.partnerId, partnerIds), eq(webhooks.isActive, true), isNull(webhooks.deletedAt)));

    const now = new Date();
    const rows = batch.flatMap((event) => {
      const body = serializeEnvelope(event.payload as EventEnvelope<unknown>);
      return targets
        .filter(
          (t) =>
            t.partnerId === event.partnerId && t.environment === event.environment && t.events.includes(event.type),
        )
        .map((target) => ({
          id: newId("dlv"),
          webhookId: target.id,
          eventId: event.id,
          eventCreatedAt: event.createdAt,
          eventType: event.type,
          body,
          maxAttempts: WEBHOOK_MAX_ATTEMPTS,
          nextAttemptAt: now,
        }));
    });
    const inserted =
      rows.length === 0
        ? []
        : await tx
            .insert(webhookDeliveries)
            .values(rows)
            .onConflictDoNothing({
              target: [webhookDeliveries.webhookId, webhookDeliveries.eventId],
              where: sql`redelivery_of is null`,
            })
            .returning({ id: webhookDeliveries.id });
    await tx
      .update(events)
      .set({ dispatchedAt: now })
      .where(
        and(
          inArray(
            events.id,
            batch.map((event) => event.id),
          ),
          // The batch's time range: only its partitions are searched.
          gte(events.createdAt, batch[0]!.createdAt),
        ),
      );
    return { events: batch.length, deliveryIds: inserted.map((row) => row.id) };
  });
}
