import { newId, WEBHOOK_MAX_ATTEMPTS } from "@outcomes/core";
import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { Database, Executor, Transaction } from "../client.js";
import { webhookDeliveries, webhooks } from "../schema/webhooks.js";
import type { SqlClient } from "./sql-client.js";

/**
 * Every write of a webhook delivery row, in the order of its life: made (fan-out, a redelivery, a
 * replay), each attempt counted as it is claimed, then closed once: `succeeded`, or `retrying`
 * until the last attempt has `failed`, or `failed` at once when it can go no further (its webhook
 * deactivated or deleted). Open means `pending` or `retrying`; every change after the insert is
 * made only while the row is still open, so a delivery closed by one writer stays as it closed.
 */
export type DeliveryRecord = typeof webhookDeliveries.$inferSelect;

export const WEBHOOK_DELETED_ERROR = "Webhook was deleted; no further attempts are made";

const open = inArray(webhookDeliveries.status, ["pending", "retrying"]);

/** A first delivery of an event to a webhook, as fan-out makes it. */
export interface FanOutDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  /** The event's partition key, part of the delivery's reference to it (as Postgres wrote it: exact). */
  eventCreatedAt: string;
  eventType: string;
  body: string;
  /** The `webhook.deliver-batch` job that makes its first attempt, or null for a job of its own. */
  batchId: string | null;
}

/**
 * The new deliveries of a batch of events, one row per array index; a (webhook, event) pair that
 * already has its delivery gets none (the unique fan-out index).
 */
const INSERT_DELIVERIES = `
  insert into webhook_deliveries
    (id, webhook_id, event_id, event_created_at, event_type, body, batch_id, max_attempts, next_attempt_at)
  select id, webhook_id, event_id, event_created_at, event_type, body, batch_id, $8, $9
  from unnest($1::text[], $2::text[], $3::text[], $4::text[]::timestamptz[], $5::text[], $6::text[], $7::text[])
    as x(id, webhook_id, event_id, event_created_at, event_type, body, batch_id)
  on conflict (webhook_id, event_id) where redelivery_of is null do nothing
  returning id, batch_id`;

/**
 * Fan-out's deliveries, in one prepared statement for the whole batch (drizzle built a many-row
 * insert value by value, a quarter of the worker's CPU). Returns those made, with their batch.
 */
export async function insertDeliveries(
  tx: SqlClient,
  rows: FanOutDelivery[],
  now: Date,
): Promise<Array<{ id: string; batchId: string | null }>> {
  const column = (name: keyof FanOutDelivery) => rows.map((row) => row[name]);
  const inserted = await tx.unsafe<{ id: string; batch_id: string | null }[]>(
    INSERT_DELIVERIES,
    [
      column("id"),
      column("webhookId"),
      column("eventId"),
      column("eventCreatedAt"),
      column("eventType"),
      column("body"),
      column("batchId"),
      WEBHOOK_MAX_ATTEMPTS,
      now.toISOString(),
    ],
    { prepare: true },
  );
  return inserted.map((row) => ({ id: row.id, batchId: row.batch_id }));
}

/** A new delivery (new id, fresh attempts) of `original`'s event, with the very same body bytes. */
export async function insertRedelivery(db: Executor, original: DeliveryRecord): Promise<DeliveryRecord> {
  const [created] = await db
    .insert(webhookDeliveries)
    .values({
      id: newId("dlv"),
      webhookId: original.webhookId,
      eventId: original.eventId,
      eventCreatedAt: original.eventCreatedAt,
      eventType: original.eventType,
      body: original.body,
      maxAttempts: WEBHOOK_MAX_ATTEMPTS,
      nextAttemptAt: new Date(),
      redeliveryOf: original.id,
    })
    .returning();
  return created!;
}

/**
 * A new delivery for each pair's failed original, unless the original has one already: this
 * statement checks again, and sees what a transaction that held the originals' locks before
 * committed (see `replayFailedOnce`). Returns the ids made; the pairs travel as one JSON parameter.
 */
export async function insertRedeliveriesOnce(
  tx: Transaction,
  pairs: readonly { id: string; original: string }[],
): Promise<Set<string>> {
  const inserted = await tx.execute<{ id: string }>(sql`
    insert into ${webhookDeliveries}
      (id, webhook_id, event_id, event_created_at, event_type, body, max_attempts, next_attempt_at, redelivery_of)
    select pair.id, d.webhook_id, d.event_id, d.event_created_at, d.event_type, d.body, ${WEBHOOK_MAX_ATTEMPTS}, now(), d.id
    from jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) as pair(id text, original text)
    join ${webhookDeliveries} d on d.id = pair.original
    where not exists (select 1 from ${webhookDeliveries} r where r.redelivery_of = d.id)
    returning id`);
  return new Set(inserted.map((row) => row.id));
}

/**
 * An attempt that got no 2xx: `retrying` until `nextAttemptAt`, or `failed` when it was the last
 * (`nextAttemptAt` null). False when the delivery was closed meanwhile (its webhook deleted).
 */
export async function recordFailedAttempt(
  db: Database,
  deliveryId: string,
  attempt: { status: number | null; error: string; at: Date; nextAttemptAt: Date | null },
): Promise<boolean> {
  const last = attempt.nextAttemptAt === null;
  const updated = await db
    .update(webhookDeliveries)
    .set({
      status: last ? "failed" : "retrying",
      lastResponseStatus: attempt.status,
      lastError: attempt.error,
      nextAttemptAt: attempt.nextAttemptAt,
      completedAt: last ? attempt.at : null,
    })
    .where(and(eq(webhookDeliveries.id, deliveryId), open))
    .returning({ id: webhookDeliveries.id });
  return updated.length > 0;
}

/**
 * Why a delivery could not be claimed: already finished (a duplicate job), taken (its first attempt
 * was claimed before: by an earlier run of its batch, or a job of its own), or it must stop now.
 */
export async function whyNotClaimed(
  db: Database,
  deliveryId: string,
): Promise<{ finished: true } | { taken: true; nextAttemptAt: Date | null } | { stop: string }> {
  const [row] = await db
    .select({
      status: webhookDeliveries.status,
      nextAttemptAt: webhookDeliveries.nextAttemptAt,
      attempts: webhookDeliveries.attempts,
      maxAttempts: webhookDeliveries.maxAttempts,
      isActive: webhooks.isActive,
      deletedAt: webhooks.deletedAt,
      disabledReason: webhooks.disabledReason,
    })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(eq(webhookDeliveries.id, deliveryId));
  if (!row) return { stop: "Delivery not found" };
  if (row.status === "succeeded" || row.status === "failed") return { finished: true };
  if (row.deletedAt) return { stop: WEBHOOK_DELETED_ERROR };
  if (!row.isActive && row.disabledReason) {
    return { stop: `Webhook was disabled (${row.disabledReason}); no further attempts are made` };
  }
  if (!row.isActive) return { stop: "Webhook is inactive; no further attempts are made" };
  if (row.attempts < row.maxAttempts) return { taken: true, nextAttemptAt: row.nextAttemptAt };
  return { stop: `All ${row.maxAttempts} attempts were made` };
}

/** `failed` with `lastError` and no attempt to come, if it is still open. */
export async function closeDeliveryAsFailed(db: Database, deliveryId: string, lastError: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: "failed", lastError, nextAttemptAt: null, completedAt: new Date() })
    .where(and(eq(webhookDeliveries.id, deliveryId), open));
}

/** Every open delivery of a webhook being deleted or disabled (in its transaction): `failed`, nothing more will be sent. */
export async function closeOpenDeliveriesOfWebhook(
  tx: Transaction,
  webhookId: string,
  at: Date,
  lastError = WEBHOOK_DELETED_ERROR,
): Promise<void> {
  await tx
    .update(webhookDeliveries)
    .set({ status: "failed", lastError, nextAttemptAt: null, completedAt: at })
    .where(and(eq(webhookDeliveries.webhookId, webhookId), open));
}

/** An open delivery the reconciler checks: its batch job is looked for while it has had no attempt. */
export interface OverdueDelivery {
  id: string;
  attempts: number;
  batchId: string | null;
}

/** Open deliveries whose next attempt was due before `before`, most overdue first: the reconciler checks their jobs. */
export async function overdueDeliveries(db: Executor, before: Date, limit: number): Promise<OverdueDelivery[]> {
  return db
    .select({ id: webhookDeliveries.id, attempts: webhookDeliveries.attempts, batchId: webhookDeliveries.batchId })
    .from(webhookDeliveries)
    .where(and(open, lt(webhookDeliveries.nextAttemptAt, before)))
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(limit);
}
