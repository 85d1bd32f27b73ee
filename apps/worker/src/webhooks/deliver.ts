import { randomInt } from "node:crypto";
import { checkWebhookUrl } from "@outcomes/core";
import {
  type ClaimedAttempt,
  type ClaimResult,
  closeDeliveryAsFailed,
  type Database,
  recordFailedAttempt,
  sqlClientOf,
  whyNotClaimed,
} from "@outcomes/db";
import { enqueueDeliveryRetry, type JobPayload, type Producers } from "@outcomes/queue";
import { countWebhookAttempt, type Logger } from "@outcomes/runtime";
import { signatureHeaders } from "@outcomes/sdk";
import { DelayedError, type Job, UnrecoverableError } from "bullmq";
import pLimit from "p-limit";
import type { JobRun } from "../queue-worker.js";
import { AttemptStatements, type Claim } from "./attempt-statements.js";
import { AttemptFailedError, retryDelayMs } from "./backoff.js";
import { afterFailedAttempt, type EndpointHealthDeps } from "./endpoint-health.js";
import { EndpointLoad, type EndpointLoadOptions } from "./endpoint-load.js";
import { describeFailure, type WebhookHttpClient } from "./http-client.js";
import type { SendPacer } from "./pacing.js";

export interface DeliverDeps extends EndpointHealthDeps {
  db: Database;
  http: WebhookHttpClient;
  delaysMs: readonly number[];
  timeoutMs: number;
  logger: Logger;
}

type SendOutcome = { ok: true; status: number } | { ok?: undefined; status?: number; error: string };

/** Sends one attempt of a delivery; its headers, body and signature as CONTRACT §7 says. */
async function send(deps: DeliverDeps, deliveryId: string, claim: ClaimedAttempt): Promise<SendOutcome> {
  const check = checkWebhookUrl(claim.url, claim.environment);
  if (!check.ok) return { error: `Refused: URL ${check.reason}` };
  const headers = {
    "Content-Type": "application/json",
    "User-Agent": "PartnerOutcomes-Webhooks/1.0",
    "X-Service-Event": claim.eventType,
    "X-Service-Delivery-Id": deliveryId,
    "X-Service-Attempt": String(claim.attempt),
    ...signatureHeaders({
      // Standard Webhooks' message id: the event's, so a receiver sees a retry, a redelivery or a
      // recover of the event as the same message (CONTRACT §18).
      messageId: claim.eventId,
      timestamp: Math.floor(Date.now() / 1000),
      rawBody: claim.body,
      secret: claim.secret,
      previousSecret: claim.previousSecret,
    }),
  };
  try {
    const response = await deps.http.post(check.url, check.allowLoopback, headers, claim.body);
    return response.status >= 200 && response.status < 300
      ? { ok: true as const, status: response.status }
      : { status: response.status, error: `Receiver answered HTTP ${response.status}` };
  } catch (error) {
    return { error: describeFailure(error, deps.timeoutMs, check.allowLoopback) };
  }
}

/** An attempt sent, and how the receiver answered. */
type Sent = { claim: ClaimedAttempt; outcome: SendOutcome };
/** How far ahead a slow endpoint's waiting deliveries get turns (see `claimAndSend`). */
const HELD_TURNS_AHEAD_MS = 60_000;

/** A delivery whose turn (for attempt `pacedAttempt`) comes in `waitMs`: paced, or its endpoint slow. */
type Paced = { pacedAttempt: number; waitMs: number };

/** An attempt's end: delivered, or failed with the time of the next attempt (null after the last). */
type AttemptEnd = { ok: true; status: number } | { ok: false; error: string; retryAt: Date | null; stillOpen: boolean };

/** Records how a sent attempt went: `succeeded`, or `retrying` / `failed`. */
async function record(
  deps: DeliverDeps,
  statements: AttemptStatements,
  deliveryId: string,
  { claim, outcome }: Sent,
): Promise<AttemptEnd> {
  const now = new Date();
  if (outcome.ok) {
    await statements.succeeded({ id: deliveryId, status: outcome.status, at: now, attempt: claim.attempt });
    countWebhookAttempt("succeeded", claim.attempt);
    return outcome;
  }
  const last = claim.attempt >= claim.maxAttempts;
  const retryAt = last ? null : new Date(now.getTime() + retryDelayMs(deps.delaysMs, claim.attempt));
  const stillOpen = await recordFailedAttempt(deps.db, deliveryId, {
    status: outcome.status ?? null,
    error: outcome.error,
    at: now,
    nextAttemptAt: retryAt,
  });
  deps.logger.info({ deliveryId, attempt: claim.attempt, status: outcome.status, last }, "webhook attempt failed");
  countWebhookAttempt(last ? "failed" : "retrying", claim.attempt);
  // Disabling the endpoint closes this delivery too: no retry.
  const disabled = await afterFailedAttempt(deps, claim, outcome);
  return { ok: false, error: outcome.error, retryAt, stillOpen: stillOpen && !disabled };
}

/** Why a delivery could not be claimed; one that can go no further is closed as failed. */
async function unclaimed(deps: DeliverDeps, deliveryId: string) {
  const why = await whyNotClaimed(deps.db, deliveryId);
  if ("stop" in why) await closeDeliveryAsFailed(deps.db, deliveryId, why.stop);
  return why;
}

/**
 * The two jobs that make attempts. They share the process's `inFlight` sends (the role's
 * `concurrency`) and the statements of the attempts in flight (claims and successes grouped;
 * failures, rare, written one by one).
 *
 * `webhook.deliver`: one attempt of one delivery. 2xx: `succeeded`. Otherwise `retrying` with
 * `nextAttemptAt`, and BullMQ waits the scheduled delay (AttemptFailedError); after the last attempt
 * `failed` and UnrecoverableError. A webhook deleted or deactivated meanwhile gets nothing more.
 *
 * `webhook.deliver-batch`: the first attempts of fan-out's deliveries. A delivery that fails gets a
 * `webhook.deliver` job of its own, delayed to its next attempt, for the rest of its schedule; if
 * queueing it fails, the reconciler queues it.
 */
export function deliverProcessors(
  deps: DeliverDeps & {
    producers: Producers;
    inFlight: number;
    pacer: SendPacer;
    slowEndpoints: Omit<EndpointLoadOptions, "timeoutMs">;
  },
) {
  const load = new EndpointLoad({ ...deps.slowEndpoints, timeoutMs: deps.timeoutMs }, deps.logger);
  const statements = new AttemptStatements(sqlClientOf(deps.db), load);
  const sending = pLimit(deps.inFlight);
  const waitTurn = async (deliveryId: string, nextAttempt: number, waitMs: number): Promise<Paced> => {
    await statements.paced(deliveryId, new Date(Date.now() + waitMs));
    return { pacedAttempt: nextAttempt, waitMs };
  };
  // A send slot is held from the claim (the attempt counted, the secrets read) to the answer; the
  // outcome is written after the slot is free for the next send. A delivery whose turn has not come
  // holds none: it gets its turn and waits for it in BullMQ's delayed set. That is a paced webhook's
  // delivery, and a slow endpoint's beyond its sends at once here (EndpointLoad), whose turns come
  // as fast as its sends free up.
  const claimAndSend = (claimOf: (claim: Claim) => Promise<ClaimResult | undefined>, claim: Claim) =>
    sending(async (): Promise<Sent | Paced | undefined> => {
      let claimed = await claimOf(claim);
      if (claimed && "paced" in claimed) {
        const { webhookId, ratePerSecond, nextAttempt } = claimed.paced;
        const waitMs = await deps.pacer.reserve(webhookId, ratePerSecond);
        if (waitMs > 0) return waitTurn(claim.id, nextAttempt, waitMs);
        claimed = await claimOf({ id: claim.id, cleared: nextAttempt });
      }
      if (claimed && "held" in claimed) {
        const { webhookId, nextAttempt } = claimed.held;
        const turnsPerSecond = load.turnsPerSecond(webhookId);
        // Turns booked at most a minute ahead: the rate is an estimate, and an endpoint quick again
        // must not leave its deliveries booked for later. Beyond that, it asks again in a minute or two.
        const waitMs = await deps.pacer.reserveWithin(webhookId, turnsPerSecond, HELD_TURNS_AHEAD_MS);
        if (waitMs === null)
          return waitTurn(claim.id, nextAttempt, HELD_TURNS_AHEAD_MS + randomInt(HELD_TURNS_AHEAD_MS + 1));
        // At least one turn's gap: a turn due now would find the endpoint as full as it is.
        return waitTurn(claim.id, nextAttempt, Math.max(waitMs, Math.ceil(1000 / turnsPerSecond)));
      }
      if (!claimed || "paced" in claimed) return undefined;
      const startedAt = performance.now();
      try {
        return { claim: claimed, outcome: await send(deps, claim.id, claimed) };
      } finally {
        load.answered(claimed.webhookId, performance.now() - startedAt);
      }
    });

  const deliver = async ({ deliveryId, pacedAttempt }: JobPayload<"webhook.deliver">, job: Job, run: JobRun) => {
    const sent = await claimAndSend((claim) => statements.claim(claim), { id: deliveryId, cleared: pacedAttempt });
    if (sent && "waitMs" in sent) {
      // Its turn is later: back to the delayed set until then, not counted as an attempt (BullMQ's
      // own or ours), and the next run claims the attempt the slot was reserved for.
      await job.updateData({ deliveryId, pacedAttempt: sent.pacedAttempt });
      await job.moveToDelayed(Date.now() + sent.waitMs, run.token);
      throw new DelayedError();
    }
    if (!sent) {
      const why = await unclaimed(deps, deliveryId);
      if ("stop" in why) throw new UnrecoverableError(why.stop);
      return { skipped: "finished" in why ? "already finished" : "claimed by another job" };
    }
    const end = await record(deps, statements, deliveryId, sent);
    if (end.ok) return { status: end.status, attempt: sent.claim.attempt };
    // Closed meanwhile (the webhook was deleted or disabled): no retry either.
    if (!end.retryAt || !end.stillOpen) throw new UnrecoverableError(end.error);
    throw new AttemptFailedError(sent.claim.attempt, end.error);
  };

  const deliverBatch = async ({ deliveryIds }: JobPayload<"webhook.deliver-batch">, job: Job) => {
    const tally = { succeeded: 0, retrying: 0, failed: 0, skipped: 0, paced: 0 };
    const handOver = (deliveryId: string, at: Date | null, pacedAttempt?: number) =>
      enqueueDeliveryRetry(
        deps.producers,
        deliveryId,
        Math.max(0, (at?.getTime() ?? 0) - Date.now()),
        pacedAttempt,
      ).catch((error: unknown) =>
        deps.logger.warn({ err: error, deliveryId }, "retry job not queued; the reconciler will"),
      );
    // Every delivery settles before the job ends: a send still running when the job failed would
    // otherwise meet the re-run's hand-over, which could send it again at once.
    const settled = await Promise.allSettled(
      deliveryIds.map(async (deliveryId) => {
        // Claimed as its send begins (the secrets read then), only while it has had no attempt:
        // a re-run of the job after a crash sends none of those the dead run claimed.
        const sent = await claimAndSend((claim) => statements.claimFirst(claim), { id: deliveryId });
        if (sent && "waitMs" in sent) {
          // A paced webhook's: a job of its own makes the attempt in its turn.
          tally.paced += 1;
          await handOver(deliveryId, new Date(Date.now() + sent.waitMs), sent.pacedAttempt);
          return;
        }
        if (!sent) {
          const why = await unclaimed(deps, deliveryId);
          // Claimed by this job's run that died (its attempt counts: the receiver may have seen it),
          // or failed there: a job of its own takes it on, at its next attempt's time. A job it
          // already has keeps its id, so queueing again changes nothing.
          if ("taken" in why) await handOver(deliveryId, why.nextAttemptAt);
          tally["stop" in why ? "failed" : "skipped"] += 1;
          return;
        }
        const end = await record(deps, statements, deliveryId, sent);
        if (end.ok) tally.succeeded += 1;
        else if (!end.retryAt || !end.stillOpen) tally.failed += 1;
        else {
          tally.retrying += 1;
          await handOver(deliveryId, end.retryAt);
        }
      }),
    );
    await job.updateProgress(tally).catch(() => {});
    // Postgres or Redis failed for some: the job runs again, and its claim skips those it sent.
    const failure = settled.find((each) => each.status === "rejected");
    if (failure) throw failure.reason;
    return tally;
  };

  return { deliver, deliverBatch };
}
