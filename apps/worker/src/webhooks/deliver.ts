import { checkWebhookUrl } from "@outcomes/core";
import {
  type ClaimedAttempt,
  closeDeliveryAsFailed,
  type Database,
  recordFailedAttempt,
  sqlClientOf,
  whyNotClaimed,
} from "@outcomes/db";
import type { JobPayload } from "@outcomes/queue";
import { countWebhookAttempt, type Logger } from "@outcomes/runtime";
import { signatureHeaders } from "@outcomes/sdk";
import { UnrecoverableError } from "bullmq";
import { AttemptStatements } from "./attempt-statements.js";
import { AttemptFailedError, retryDelayMs } from "./backoff.js";
import { describeFailure, type WebhookHttpClient } from "./http-client.js";

export interface DeliverDeps {
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
      deliveryId,
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
    return { error: describeFailure(error, deps.timeoutMs) };
  }
}

/**
 * The `webhook.deliver` job. 2xx: `succeeded`. Otherwise `retrying` with `nextAttemptAt`, and
 * BullMQ waits the scheduled delay (AttemptFailedError); after the last attempt `failed` and
 * UnrecoverableError. A webhook deleted or deactivated meanwhile gets nothing more.
 */
export function deliverProcessor(deps: DeliverDeps) {
  // Claims and successes of the deliveries in flight share their statements (the common path);
  // failures, rare, are written one by one.
  const statements = new AttemptStatements(sqlClientOf(deps.db));
  return async ({ deliveryId }: JobPayload<"webhook.deliver">) => {
    const claim = await statements.claim(deliveryId);
    if (!claim) {
      const why = await whyNotClaimed(deps.db, deliveryId);
      if ("finished" in why) return { skipped: "already finished" };
      await closeDeliveryAsFailed(deps.db, deliveryId, why.stop);
      throw new UnrecoverableError(why.stop);
    }
    const outcome = await send(deps, deliveryId, claim);
    const now = new Date();
    if (outcome.ok) {
      await statements.succeeded(deliveryId, outcome.status, now);
      countWebhookAttempt("succeeded", claim.attempt);
      return { status: outcome.status, attempt: claim.attempt };
    }
    const last = claim.attempt >= claim.maxAttempts;
    const nextAttemptAt = last ? null : new Date(now.getTime() + retryDelayMs(deps.delaysMs, claim.attempt));
    const stillOpen = await recordFailedAttempt(deps.db, deliveryId, {
      status: outcome.status ?? null,
      error: outcome.error,
      at: now,
      nextAttemptAt,
    });
    deps.logger.info({ deliveryId, attempt: claim.attempt, status: outcome.status, last }, "webhook attempt failed");
    countWebhookAttempt(last ? "failed" : "retrying", claim.attempt);
    // Closed meanwhile (the webhook was deleted): no retry either.
    if (last || !stillOpen) throw new UnrecoverableError(outcome.error);
    throw new AttemptFailedError(claim.attempt, outcome.error);
  };
}
