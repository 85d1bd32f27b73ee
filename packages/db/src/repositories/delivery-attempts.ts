import type { Environment } from "@outcomes/core";
import type { SqlClient } from "./sql-client.js";

/**
 * Each attempt's statements on a delivery's row (the rest of its life is in deliveries.ts): the
 * claim that counts an attempt before it is sent, and the success after it. The webhooks worker
 * groups them across the attempts in flight (one statement for many deliveries).
 */

/** A delivery's attempt as counted in Postgres, with what sending it needs. */
export interface ClaimedAttempt {
  attempt: number;
  webhookId: string;
  /** The event's id: `webhook-id` (Standard Webhooks' message id), the same on every delivery of the event. */
  eventId: string;
  maxAttempts: number;
  body: string;
  eventType: string;
  url: string;
  secret: string;
  /** A rotated secret until it expires: attempts are signed with it too. */
  previousSecret: string | null;
  environment: Environment;
}

/**
 * A delivery whose webhook is paced (`rate_limit_per_second`) and whose next attempt has no send
 * slot yet: not claimed. The caller reserves one (`nextAttempt`'s) and claims it when it is due.
 */
export interface PacedDelivery {
  paced: { webhookId: string; ratePerSecond: number; nextAttempt: number };
}

/** A delivery of a slow endpoint beyond its room (`rooms`): not claimed; it waits for a turn. */
export interface HeldDelivery {
  held: { webhookId: string; nextAttempt: number };
}

/**
 * Counts one attempt of each delivery that is open, has attempts left, whose webhook is active and
 * not deleted, and, if the webhook is paced, whose attempt's send slot was reserved ($3, $4: the
 * deliveries and attempt numbers cleared); returns them. The secrets are read here, at every
 * attempt, so a retry after a rotation is signed as a new delivery would be. A slow endpoint's
 * deliveries ($5, $6: the webhooks and how many more each may have) are claimed up to its room, the
 * rest held. The paced ones not cleared and the held ones are returned too (no body), unclaimed: the
 * same snapshot, the complement of the claim's last conditions.
 */
const CLAIM_ATTEMPTS = `
  with held as (
    select id from (
      select d.id, row_number() over (partition by d.webhook_id order by d.id) as nth, room.room
      from webhook_deliveries d join unnest($5::text[], $6::int[]) as room(webhook_id, room)
        on room.webhook_id = d.webhook_id
      where d.id = any($1::text[])) ranked
    where nth > room),
  claimed as (
    update webhook_deliveries d set attempts = d.attempts + 1
    from webhooks w
    where d.id = any($1::text[]) and w.id = d.webhook_id and d.status in ('pending', 'retrying')
      and d.attempts < d.max_attempts and w.is_active and w.deleted_at is null
      and (not $2::boolean or d.attempts = 0)
      and (w.rate_limit_per_second is null
        or (d.id, d.attempts + 1) in (select * from unnest($3::text[], $4::int[])))
      and d.id not in (select id from held)
    returning d.id, d.attempts, d.webhook_id, d.event_id, d.max_attempts, d.body, d.event_type, w.url, w.secret,
      case when w.previous_secret_expires_at > now() then w.previous_secret end as previous_secret, w.environment,
      null::int as paced_per_second, false as held)
  select * from claimed
  union all
  select d.id, d.attempts, d.webhook_id, d.event_id, d.max_attempts, null, d.event_type, null, null, null,
    w.environment, w.rate_limit_per_second, d.id in (select id from held)
  from webhook_deliveries d join webhooks w on w.id = d.webhook_id
  where d.id = any($1::text[]) and d.status in ('pending', 'retrying')
    and d.attempts < d.max_attempts and w.is_active and w.deleted_at is null
    and (not $2::boolean or d.attempts = 0)
    and (d.id in (select id from held)
      or (w.rate_limit_per_second is not null
        and (d.id, d.attempts + 1) not in (select * from unnest($3::text[], $4::int[]))))`;

/** What a claim of one delivery found: its attempt counted, or a send slot to reserve first. */
export type ClaimResult = ClaimedAttempt | PacedDelivery | HeldDelivery;

/**
 * Counts the next attempt of each of these deliveries before anything is sent, only while the
 * delivery is open and its webhook active and not deleted (see `CLAIM_ATTEMPTS`): the attempt
 * number in the header is the one recorded. A paced webhook's delivery is claimed only for the
 * attempt `cleared` names (its slot reserved); otherwise it comes back as paced. A slow endpoint's
 * beyond its room in `rooms` come back held. Those that could not be claimed are missing.
 */
export async function claimDeliveryAttempts(
  sql: SqlClient,
  claims: ReadonlyArray<{ id: string; cleared?: number | undefined }>,
  /** Only deliveries with no attempt yet (a batch's first attempts; a retry has a job of its own). */
  firstOnly = false,
  /** Slow endpoints' webhook ids and how many more of their deliveries may be claimed now. */
  rooms: ReadonlyMap<string, number> = new Map(),
): Promise<Map<string, ClaimResult>> {
  const cleared = claims.filter((claim) => claim.cleared !== undefined);
  const rows = await sql.unsafe<
    Array<{
      id: string;
      attempts: number;
      webhook_id: string;
      event_id: string;
      max_attempts: number;
      body: string;
      event_type: string;
      url: string;
      secret: string;
      previous_secret: string | null;
      environment: Environment;
      paced_per_second: number | null;
      held: boolean;
    }>
  >(
    CLAIM_ATTEMPTS,
    [
      claims.map((claim) => claim.id),
      firstOnly,
      cleared.map((claim) => claim.id),
      cleared.map((claim) => claim.cleared!),
      [...rooms.keys()],
      [...rooms.values()],
    ],
    { prepare: true },
  );
  return new Map(
    rows.map((row): [string, ClaimResult] => [
      row.id,
      row.held
        ? { held: { webhookId: row.webhook_id, nextAttempt: row.attempts + 1 } }
        : row.paced_per_second !== null
          ? { paced: { webhookId: row.webhook_id, ratePerSecond: row.paced_per_second, nextAttempt: row.attempts + 1 } }
          : {
              attempt: row.attempts,
              webhookId: row.webhook_id,
              eventId: row.event_id,
              maxAttempts: row.max_attempts,
              body: row.body,
              eventType: row.event_type,
              url: row.url,
              secret: row.secret,
              previousSecret: row.previous_secret,
              environment: row.environment,
            },
    ]),
  );
}

/**
 * Closes deliveries as succeeded, each with its answer's status and time: an open one, or one closed
 * as `failed` while this very attempt was on its way (its webhook deleted or disabled meanwhile: no
 * later attempt was counted, so `attempts` is still this one's). The receiver accepted it; that is
 * what the record says, whatever happened to the webhook after the send began.
 */
const MARK_SUCCEEDED = `
  with succeeded as (
    update webhook_deliveries d set status = 'succeeded', last_response_status = x.status, last_error = null,
      next_attempt_at = null, completed_at = x.at
    from unnest($1::text[], $2::int[], $3::text[]::timestamptz[], $4::int[]) as x(id, status, at, attempt)
    where d.id = x.id and (d.status in ('pending', 'retrying') or (d.status = 'failed' and d.attempts = x.attempt))
    returning d.webhook_id)
  update webhooks w set failing_since = null, failed_attempts = 0
  where w.id in (select webhook_id from succeeded) and w.failing_since is not null`;

/** An attempt the receiver answered 2xx: its status, the answer's time, and the attempt's number. */
export interface DeliverySuccess {
  id: string;
  status: number;
  at: Date;
  attempt: number;
}

/**
 * `succeeded`, each with the receiver's status and the answer's time (see `MARK_SUCCEEDED`); a
 * failing webhook that answered is healthy again (its row is written only then).
 */
export async function markDeliveriesSucceeded(sql: SqlClient, successes: readonly DeliverySuccess[]): Promise<void> {
  await sql.unsafe(
    MARK_SUCCEEDED,
    [
      successes.map((each) => each.id),
      successes.map((each) => each.status),
      successes.map((each) => each.at.toISOString()),
      successes.map((each) => each.attempt),
    ],
    { prepare: true },
  );
}

/**
 * Paced deliveries' turns: `next_attempt_at` is when the send slot reserved for each comes, so the
 * list says when it will be tried and the reconciler does not take a delivery waiting its turn
 * for a lost one. Only while still open.
 */
const MARK_PACED = `
  update webhook_deliveries d set next_attempt_at = x.at
  from unnest($1::text[], $2::text[]::timestamptz[]) as x(id, at)
  where d.id = x.id and d.status in ('pending', 'retrying')`;

export async function markDeliveriesPaced(sql: SqlClient, turns: readonly { id: string; at: Date }[]): Promise<void> {
  await sql.unsafe(MARK_PACED, [turns.map((turn) => turn.id), turns.map((turn) => turn.at.toISOString())], {
    prepare: true,
  });
}
