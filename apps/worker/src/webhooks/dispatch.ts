import { type EventEnvelope, newId, serializeEnvelope, WEBHOOK_MAX_ATTEMPTS } from "@outcomes/core";
import { type Database, drizzleTransactionOn, events, type SqlTransaction, sqlClientOf, webhooks } from "@outcomes/db";
import { and, asc, eq, gte, inArray, isNull } from "drizzle-orm";

export const DISPATCH_BATCH_SIZE = 200;

/**
 * The new deliveries of a batch of events, one row per array index; a (webhook, event) pair that
 * already has its delivery gets none (the unique fan-out index).
 */
const INSERT_DELIVERIES = `
  insert into webhook_deliveries
    (id, webhook_id, event_id, event_created_at, event_type, body, max_attempts, next_attempt_at)
  select id, webhook_id, event_id, event_created_at, event_type, body, $7, $8
  from unnest($1::text[], $2::text[], $3::text[], $4::text[]::timestamptz[], $5::text[], $6::text[])
    as x(id, webhook_id, event_id, event_created_at, event_type, body)
  on conflict (webhook_id, event_id) where redelivery_of is null do nothing
  returning id`;

type Row = {
  id: string;
  webhookId: string;
  eventId: string;
  /** The event's partition key, part of the delivery's reference to it (ISO 8601, exact to the ms). */
  eventCreatedAt: string;
  eventType: string;
  body: string;
};

/** One prepared statement for the whole batch: drizzle built a many-row insert value by value, a quarter of the worker's CPU. */
async function insertDeliveries(tx: SqlTransaction, rows: Row[], now: Date): Promise<string[]> {
  const column = (name: keyof Row) => rows.map((row) => row[name]);
  const inserted = await tx.unsafe<{ id: string }[]>(
    INSERT_DELIVERIES,
    [
      column("id"),
      column("webhookId"),
      column("eventId"),
      column("eventCreatedAt"),
      column("eventType"),
      column("body"),
      WEBHOOK_MAX_ATTEMPTS,
      now.toISOString(),
    ],
    { prepare: true },
  );
  return inserted.map((row) => row.id);
}

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
  return sqlClientOf(db).begin(async (sqlTx) => {
    const tx = drizzleTransactionOn(sqlTx);
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
          eventCreatedAt: event.createdAt.toISOString(),
          eventType: event.type,
          body,
        }));
    });
    const inserted = rows.length === 0 ? [] : await insertDeliveries(sqlTx, rows, now);
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
    return { events: batch.length, deliveryIds: inserted };
  });
}
