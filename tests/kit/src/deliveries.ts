import { newId } from "@outcomes/core";
import { type Database, insertEvent, webhookDeliveries } from "@outcomes/db";
import { eq, sql } from "drizzle-orm";
import type { TestApi } from "./api.js";

export type TestDeliveryStatus = "pending" | "retrying" | "succeeded" | "failed";

/**
 * The shared fixture of delivery tests that run no webhooks worker: a partner with a webhook
 * registered over HTTP, and one `block.low_reserve` event per status given with its delivery as the
 * worker's fan-out writes it and the attempts leave it, oldest first, a minute apart (the last one a
 * minute ago). A finished delivery has made all 5 attempts.
 */
export async function webhookWithDeliveries(api: TestApi, statuses: TestDeliveryStatus[]) {
  const { partnerId, apiKey } = await api.createPartner();
  const registered = await api.request("/api/partner/v1/webhooks", {
    method: "POST",
    apiKey,
    json: { url: "https://hooks.partner.test/", events: ["block.low_reserve"] },
  });
  const webhookId = registered.body.id as string;
  const deliveryIds: string[] = [];
  for (const [i, status] of statuses.entries()) {
    const event = await insertEvent(api.database.db, {
      partnerId,
      environment: "sandbox",
      type: "block.low_reserve",
      data: { gameId: i + 1, readyBlocks: 1, minReadyBlocks: 2, remainingOutcomes: 10 },
    });
    const id = newId("dlv");
    const done = status === "failed" || status === "succeeded";
    const at = new Date(Date.now() - (statuses.length - i) * 60_000);
    await api.database.db.insert(webhookDeliveries).values({
      id,
      webhookId,
      eventId: event.id,
      eventCreatedAt: new Date(event.createdAt),
      eventType: event.type,
      body: JSON.stringify(event),
      status,
      attempts: status === "pending" ? 0 : done ? 5 : 1,
      lastResponseStatus: status === "pending" ? null : status === "succeeded" ? 200 : 500,
      completedAt: done ? at : null,
      createdAt: at,
    });
    deliveryIds.push(id);
  }
  return { partnerId, apiKey, webhookId, deliveryIds };
}

/** A delivery row as stored. */
export async function deliveryRow(api: TestApi, id: string) {
  const [found] = await api.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return found;
}

/**
 * A backlog of `count` failed deliveries to one webhook in one statement (generate_series): one
 * `block.low_reserve` event each, written with its sequence as the outbox writes it, and its
 * delivery failed after 5 attempts. Created a millisecond apart from two hours ago, each failed a
 * minute after it was made. Foreign keys are not checked for this statement (each delivery refers
 * to the event the same statement makes): that check is most of the time of 200,000 rows. The
 * deliveries' statistics are brought up to date after it.
 */
export async function seedFailedDeliveries(
  api: { database: { db: Database } },
  target: { partnerId: string; webhookId: string; count: number },
): Promise<void> {
  const tag = newId("bk").slice(3);
  await api.database.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await tx.execute(sql`set local statement_timeout = 0`);
    await tx.execute(sql`
      with counter as (
        insert into event_sequences (partner_id, environment, last_sequence)
        values (${target.partnerId}, 'sandbox', ${target.count})
        on conflict (partner_id, environment)
          do update set last_sequence = event_sequences.last_sequence + excluded.last_sequence
        returning last_sequence - ${target.count} as base
      ),
      made as (
        insert into events (id, partner_id, environment, type, sequence, payload, dispatched_at, created_at)
        select id, ${target.partnerId}, 'sandbox', 'block.low_reserve', sequence,
          jsonb_build_object('id', id, 'sequence', sequence, 'type', 'block.low_reserve',
            'createdAt', to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'environment', 'sandbox',
            'data', jsonb_build_object('gameId', g, 'readyBlocks', 1, 'minReadyBlocks', 2, 'remainingOutcomes', 10)),
          at, at
        from counter, generate_series(1, ${target.count}) g,
          lateral (select 'evt_' || ${tag} || g as id, counter.base + g as sequence,
            now() - interval '2 hours' + g * interval '1 millisecond' as at) s
        returning id, created_at, payload
      )
      insert into webhook_deliveries
        (id, webhook_id, event_id, event_created_at, event_type, body, status, attempts,
         last_response_status, last_error, completed_at, created_at)
      select 'dlv_' || substr(id, 5), ${target.webhookId}, id, created_at, 'block.low_reserve', payload::text,
        'failed', 5, 500, 'Receiver answered HTTP 500', created_at + interval '1 minute', created_at
      from made`);
  });
  // As autovacuum soon would after such a load: plans then see the table as it is.
  await api.database.db.execute(sql`analyze webhook_deliveries`);
}

/**
 * How the webhook's first deliveries were delivered again: `originals` (first deliveries) and
 * `copies` (new deliveries) of the webhook; `missing` failed originals without a copy, `twice`
 * originals with more than one; `wrong` copies that are not a delivery of their original's event
 * with its bytes; `open` deliveries not finished.
 */
export async function redeliveryTally(api: TestApi, webhookId: string) {
  const [tally] = await api.database.db.execute<{
    originals: number;
    copies: number;
    missing: number;
    twice: number;
    wrong: number;
    open: number;
  }>(sql`
    select
      count(*) filter (where redelivery_of is null)::int as originals,
      count(*) filter (where redelivery_of is not null)::int as copies,
      count(*) filter (where redelivery_of is null and status = 'failed' and not exists
        (select 1 from webhook_deliveries c where c.redelivery_of = d.id))::int as missing,
      (select count(*)::int from (select redelivery_of from webhook_deliveries
        where webhook_id = ${webhookId} and redelivery_of is not null
        group by redelivery_of having count(*) > 1) repeated) as twice,
      (select count(*)::int from webhook_deliveries c join webhook_deliveries o on o.id = c.redelivery_of
        where c.webhook_id = ${webhookId}
          and (o.webhook_id <> c.webhook_id or o.event_id <> c.event_id or o.body <> c.body)) as wrong,
      count(*) filter (where status in ('pending', 'retrying'))::int as open
    from webhook_deliveries d where webhook_id = ${webhookId}`);
  return tally!;
}
