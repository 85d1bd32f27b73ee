import { newId } from "@outcomes/core";
import { and, asc, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { Transaction } from "../client.js";
import { webhookDeliveries, webhooks } from "../schema/webhooks.js";
import { insertRedeliveriesOnce } from "./deliveries.js";

/** A failed delivery nothing has delivered again yet (redeliver, recover, an operator's replay). */
export const notRedelivered = sql`not exists (select 1 from ${webhookDeliveries} r where r.redelivery_of = ${webhookDeliveries.id})`;

/** A new delivery made by a replay, and the failed one it repeats. */
export interface Replay {
  id: string;
  redeliveryOf: string;
}

/**
 * Replays failed deliveries to active webhooks (those `scope` selects), each at most once: a failed
 * delivery that already has a redelivery (an earlier replay, or the partner's own redeliver) is
 * skipped. The partner's recover (a chunk per call, webhook-recovery.ts) and the operator's bulk
 * replay both come here, so neither repeats what the other did, and two runs at once replay nothing
 * twice: the candidates are locked in one order (completion time, id), so runs never deadlock, and
 * the insert checks again for a redelivery in a statement of its own, which sees what a run holding
 * the locks before committed. Run it in a transaction (the locks last until its end); new
 * deliveries in lock order; `more` when `max` left some for another run.
 */
export async function replayFailedOnce(
  tx: Transaction,
  scope: SQL | undefined,
  max = Number.POSITIVE_INFINITY,
): Promise<{ replayed: Replay[]; more: boolean }> {
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
        notRedelivered,
      ),
    )
    .orderBy(asc(webhookDeliveries.completedAt), asc(webhookDeliveries.id))
    .for("update", { of: webhookDeliveries });
  const locked = Number.isFinite(max) ? await candidates.limit(max + 1) : await candidates;
  const pairs = locked.slice(0, max).map(({ id }) => ({ id: newId("dlv"), original: id }));
  if (pairs.length === 0) return { replayed: [], more: false };
  const made = await insertRedeliveriesOnce(tx, pairs);
  return {
    replayed: pairs.filter((pair) => made.has(pair.id)).map((pair) => ({ id: pair.id, redeliveryOf: pair.original })),
    more: locked.length > max,
  };
}
