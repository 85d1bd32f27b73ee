import { newId } from "@outcomes/core";
import { and, asc, count, eq, gte, lt, lte, type SQL, sql } from "drizzle-orm";
import type { PgUpdateSetSource } from "drizzle-orm/pg-core";
import type { Database, Executor, Transaction } from "../client.js";
import { type WebhookRecoveryRecord, webhookRecoveries } from "../schema/webhook-recoveries.js";
import { webhookDeliveries, webhooks } from "../schema/webhooks.js";
import { notRedelivered, replayFailedOnce } from "./delivery-replay.js";
import { assertNotDeleted, assertNotDisabled, requireOwnWebhook, type WebhookOwner } from "./webhooks.js";

/**
 * The recovery's cut-off as its `created_at` stores it (a timestamp of 3 digits rounds `now()`), so
 * the request counts with the very bound the job walks by.
 */
const REQUESTED_NOW = sql`now()::timestamptz(3)`;

const iso = (at: Date) => sql`${at.toISOString()}::timestamptz`;

/**
 * The webhook's deliveries a recovery with this `since` and cut-off covers: created at or after
 * `since` and failed by the cut-off. Failed is final, so the set grows no more once the cut-off is
 * past; the failed-deliveries index serves the range.
 */
function coveredBy(webhookId: string, since: Date, cutoff: SQL): SQL {
  return and(
    eq(webhookDeliveries.webhookId, webhookId),
    eq(webhookDeliveries.status, "failed"),
    gte(webhookDeliveries.createdAt, since),
    lte(webhookDeliveries.createdAt, cutoff),
    lte(webhookDeliveries.completedAt, cutoff),
  )!;
}

/** Not covered by a running recovery of the webhook: that one makes their new deliveries. */
const notCoveredByRunning = (webhookId: string) => sql`not exists (
  select 1 from ${webhookRecoveries} running
  where running.webhook_id = ${webhookId} and running.status = 'running'
    and ${webhookDeliveries.createdAt} >= running.since and ${webhookDeliveries.completedAt} <= running.created_at)`;

/**
 * The partner's recover (CONTRACT §11), as a request: counts the webhook's deliveries that ended
 * `failed`, were created at or after `since`, have no new delivery yet and are not left to a
 * recovery still running, and records the request for the worker (one count over the
 * failed-deliveries index; no delivery is written or locked here). Recovers of one webhook take
 * turns on an advisory lock, so each counts after the one before it was recorded and two at once
 * never both count a delivery. Nothing to recover records nothing: `recoveryId` null. A deleted
 * webhook is 404 KS-4206.
 */
export async function requestRecovery(
  db: Database,
  owner: WebhookOwner,
  webhookId: string,
  since: Date,
): Promise<{ recoveryId: string | null; counted: number }> {
  return db.transaction(async (tx) => {
    const webhook = await requireOwnWebhook(tx, owner, webhookId, { lock: "share" });
    assertNotDeleted(webhook);
    assertNotDisabled(webhook);
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-recover:${webhook.id}`}, 0))`);
    // A statement after the lock: its snapshot sees the recovery the previous holder committed.
    const [found] = await tx
      .select({ value: count() })
      .from(webhookDeliveries)
      .where(and(coveredBy(webhook.id, since, REQUESTED_NOW), notRedelivered, notCoveredByRunning(webhook.id)));
    const counted = found?.value ?? 0;
    if (counted === 0) return { recoveryId: null, counted };
    const recoveryId = newId("rcv");
    await tx.insert(webhookRecoveries).values({ id: recoveryId, webhookId: webhook.id, since, counted });
    return { recoveryId, counted };
  });
}

/** What one chunk did: the new deliveries (to be queued after the commit) and the recovery after it. */
export interface RecoveryStep {
  deliveryIds: string[];
  recovery: WebhookRecoveryRecord;
}

async function finish(
  tx: Transaction,
  id: string,
  status: "done" | "cancelled",
  set: PgUpdateSetSource<typeof webhookRecoveries> = {},
) {
  const [finished] = await tx
    .update(webhookRecoveries)
    .set({ ...set, status, finishedAt: sql`now()` })
    .where(eq(webhookRecoveries.id, id))
    .returning();
  return finished!;
}

/**
 * One chunk of a recovery, in a transaction of its own: the next `chunkSize` deliveries it covers
 * by (created_at, id) after its cursor, a new delivery for each that has none yet
 * (`replayFailedOnce`: never twice, also beside an operator's replay or a previous release's
 * recover), and the cursor moved past them, all committed together. The recovery row is locked
 * first, so two copies of the job take turns chunk by chunk and each starts where the other
 * stopped; the webhook is share-locked for the chunk alone, so a delete waits at most one chunk and
 * then closes what it made, and the next chunk finds it deleted and cancels. A finished recovery
 * makes nothing; an unknown one is null.
 */
export async function recoverNextChunk(
  db: Database,
  recoveryId: string,
  chunkSize: number,
): Promise<RecoveryStep | null> {
  return db.transaction(async (tx) => {
    const [recovery] = await tx
      .select()
      .from(webhookRecoveries)
      .where(eq(webhookRecoveries.id, recoveryId))
      .for("update");
    if (!recovery) return null;
    if (recovery.status !== "running") return { deliveryIds: [], recovery };
    const [webhook] = await tx
      .select({ isActive: webhooks.isActive, deletedAt: webhooks.deletedAt })
      .from(webhooks)
      .where(eq(webhooks.id, recovery.webhookId))
      .for("share");
    if (!webhook?.isActive || webhook.deletedAt) {
      return { deliveryIds: [], recovery: await finish(tx, recoveryId, "cancelled") };
    }

    const after = recovery.cursorCreatedAt
      ? sql`(${webhookDeliveries.createdAt}, ${webhookDeliveries.id}) > (${iso(recovery.cursorCreatedAt)}, ${recovery.cursorId})`
      : undefined;
    const page = await tx
      .select({ createdAt: webhookDeliveries.createdAt, id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(coveredBy(recovery.webhookId, recovery.since, iso(recovery.createdAt)), after))
      .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
      .limit(chunkSize);
    const last = page.at(-1);
    if (!last) return { deliveryIds: [], recovery: await finish(tx, recoveryId, "done") };

    // By the page's ids (one array parameter): the primary key finds them, and each one's
    // redelivery is looked up in its index. Given the key range instead, the planner misjudged the
    // page and hashed every delivery of the table for each chunk (0.3 s at 400,000 rows).
    const ids = page.map((row) => row.id);
    const { replayed } = await replayFailedOnce(tx, sql`${webhookDeliveries.id} = any(${sql.param(ids)}::text[])`);
    const progress = {
      cursorCreatedAt: last.createdAt,
      cursorId: last.id,
      redelivered: sql`${webhookRecoveries.redelivered} + ${replayed.length}`,
    };
    // A short page is the last one: no empty chunk after it.
    const [moved] =
      page.length < chunkSize
        ? [await finish(tx, recoveryId, "done", progress)]
        : await tx.update(webhookRecoveries).set(progress).where(eq(webhookRecoveries.id, recoveryId)).returning();
    return { deliveryIds: replayed.map((replay) => replay.id), recovery: moved! };
  });
}

/**
 * Running recoveries requested before `before`, oldest first: the reconciler checks that each
 * still has its job (Redis may have lost it, or the request's enqueue failed after its commit).
 */
export async function runningRecoveries(db: Executor, before: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: webhookRecoveries.id })
    .from(webhookRecoveries)
    .where(and(eq(webhookRecoveries.status, "running"), lt(webhookRecoveries.createdAt, before)))
    .orderBy(asc(webhookRecoveries.createdAt))
    .limit(limit);
  return rows.map((row) => row.id);
}
