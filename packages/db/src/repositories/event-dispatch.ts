import { type EventEnvelope, type EventType, newId, serializeEnvelope } from "@outcomes/core";
import type { Database } from "../client.js";
import { type FanOutDelivery, insertDeliveries } from "./deliveries.js";
import { sqlClientOf } from "./sql-client.js";

export const DISPATCH_BATCH_SIZE = 200;

/**
 * The oldest events not yet fanned out, locked: another dispatcher skips them. `created_at` is
 * also read as Postgres writes it, to be given back exactly (the deliveries' reference to the
 * event, the batch's range).
 */
const CLAIM_UNDISPATCHED = `
  select id, partner_id, environment, type, payload, created_at::text as created_at_text from events
  where dispatched_at is null order by created_at limit $1 for update skip locked`;
/** The active, non-deleted webhooks of these partners: fan-out's targets. */
const TARGETS = `
  select id, partner_id, environment, events, rate_limit_per_second from webhooks
  where partner_id = any($1::text[]) and is_active and deleted_at is null`;
/** The batch's time range bounds the search to its partitions. */
const MARK_DISPATCHED = `
  update events set dispatched_at = $1::timestamptz
  where id = any($2::text[]) and created_at >= $3::timestamptz`;

/** What a fan-out made: the new deliveries, and the batches that make their first attempts. */
export interface Dispatched {
  events: number;
  deliveryIds: string[];
  batches: Array<{ batchId: string; deliveryIds: string[] }>;
  /** Paced webhooks' new deliveries, in event order: each gets a job of its own at its turn. */
  paced: Array<{ webhookId: string; ratePerSecond: number; deliveryIds: string[] }>;
}

/**
 * Fans a batch of outbox events out to deliveries: one per active, non-deleted webhook of the
 * event's partner and environment that subscribes to its type. Events are claimed with
 * `FOR UPDATE SKIP LOCKED`, so any number of workers dispatch side by side without waiting on or
 * repeating each other; the unique (webhook, event) index makes a re-run insert nothing twice.
 * Every `deliveriesPerBatch` deliveries share a batch id (recorded on the rows), the job id of
 * their first attempts. Returns what it made, to be queued after the commit.
 */
export async function dispatchEvents(db: Database, batchSize: number, deliveriesPerBatch: number): Promise<Dispatched> {
  return sqlClientOf(db).begin(async (tx) => {
    const batch = await tx.unsafe<
      {
        id: string;
        partner_id: string;
        environment: string;
        type: EventType;
        payload: unknown;
        created_at_text: string;
      }[]
    >(CLAIM_UNDISPATCHED, [batchSize], { prepare: true });
    if (batch.length === 0) return { events: 0, deliveryIds: [], batches: [], paced: [] };

    const partnerIds = [...new Set(batch.map((event) => event.partner_id))];
    const targets = await tx.unsafe<
      { id: string; partner_id: string; environment: string; events: string[]; rate_limit_per_second: number | null }[]
    >(TARGETS, [partnerIds], { prepare: true });
    const rates = new Map(targets.map((target) => [target.id, target.rate_limit_per_second]));

    const now = new Date();
    const rows = batch.flatMap((event): FanOutDelivery[] => {
      const body = serializeEnvelope(event.payload as EventEnvelope<unknown>);
      return targets
        .filter(
          (t) =>
            t.partner_id === event.partner_id && t.environment === event.environment && t.events.includes(event.type),
        )
        .map((target) => ({
          id: newId("dlv"),
          webhookId: target.id,
          eventId: event.id,
          eventCreatedAt: event.created_at_text,
          eventType: event.type,
          body,
          batchId: "",
        }));
    });
    // A paced webhook's deliveries take no batch: each waits for its turn in a job of its own.
    const batched = rows.filter((row) => rates.get(row.webhookId) === null);
    for (const row of rows) if (rates.get(row.webhookId) !== null) row.batchId = null;
    for (let start = 0; start < batched.length; start += deliveriesPerBatch) {
      const batchId = newId("dlb");
      for (const row of batched.slice(start, start + deliveriesPerBatch)) row.batchId = batchId;
    }
    const inserted = rows.length === 0 ? [] : await insertDeliveries(tx, rows, now);
    await tx.unsafe(MARK_DISPATCHED, [now.toISOString(), batch.map((event) => event.id), batch[0]!.created_at_text], {
      prepare: true,
    });
    const batches = new Map<string, string[]>();
    const paced = new Map<string, string[]>();
    const webhookOf = new Map(rows.map((row) => [row.id, row.webhookId]));
    for (const { id, batchId } of inserted) {
      const key = batchId ?? webhookOf.get(id)!;
      const group = batchId ? batches : paced;
      const ids = group.get(key);
      if (ids) ids.push(id);
      else group.set(key, [id]);
    }
    return {
      events: batch.length,
      deliveryIds: inserted.map((row) => row.id),
      batches: [...batches].map(([batchId, deliveryIds]) => ({ batchId, deliveryIds })),
      paced: [...paced].map(([webhookId, deliveryIds]) => ({
        webhookId,
        ratePerSecond: rates.get(webhookId)!,
        deliveryIds,
      })),
    };
  });
}
