import { checkWebhookUrl, type Environment } from "@outcomes/core";
import { type Database, WEBHOOK_DELETED_ERROR, webhookDeliveries, webhooks } from "@outcomes/db";
import type { JobPayload } from "@outcomes/queue";
import { countWebhookAttempt, type Logger } from "@outcomes/runtime";
import { signatureHeaders } from "@outcomes/sdk";
import { UnrecoverableError } from "bullmq";
import { and, eq, inArray, lt, sql } from "drizzle-orm";
import { AttemptFailedError, retryDelayMs } from "./backoff.js";
import { describeFailure, type WebhookHttpClient } from "./http-client.js";

export interface DeliverDeps {
  db: Database;
  http: WebhookHttpClient;
  delaysMs: readonly number[];
  timeoutMs: number;
  logger: Logger;
}

const open = inArray(webhookDeliveries.status, ["pending", "retrying"]);

interface ClaimedAttempt {
  attempt: number;
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
 * Counts the attempt in Postgres before anything is sent, and only while the delivery is open and
 * its webhook is active and not deleted: the attempt number in the header is the one recorded.
 * The secrets are read here, at every attempt, so a retry after a rotation is signed as a new
 * delivery would be.
 */
async function claimAttempt(db: Database, deliveryId: string): Promise<ClaimedAttempt | undefined> {
  const [claimed] = await db
    .update(webhookDeliveries)
    .set({ attempts: sql`${webhookDeliveries.attempts} + 1` })
    .from(webhooks)
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        eq(webhooks.id, webhookDeliveries.webhookId),
        open,
        lt(webhookDeliveries.attempts, webhookDeliveries.maxAttempts),
        eq(webhooks.isActive, true),
        sql`${webhooks.deletedAt} is null`,
      ),
    )
    .returning({
      attempt: webhookDeliveries.attempts,
      maxAttempts: webhookDeliveries.maxAttempts,
      body: webhookDeliveries.body,
      eventType: webhookDeliveries.eventType,
      url: webhooks.url,
      secret: webhooks.secret,
      previousSecret: sql<
        string | null
      >`case when ${webhooks.previousSecretExpiresAt} > now() then ${webhooks.previousSecret} end`,
      environment: webhooks.environment,
    });
  return claimed;
}

/** Why a delivery could not be claimed: already finished (a duplicate job), or it must stop now. */
async function explainUnclaimed(db: Database, deliveryId: string): Promise<{ finished: true } | { stop: string }> {
  const [row] = await db
    .select({
      status: webhookDeliveries.status,
      attempts: webhookDeliveries.attempts,
      maxAttempts: webhookDeliveries.maxAttempts,
      isActive: webhooks.isActive,
      deletedAt: webhooks.deletedAt,
    })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(eq(webhookDeliveries.id, deliveryId));
  if (!row) return { stop: "Delivery not found" };
  if (row.status === "succeeded" || row.status === "failed") return { finished: true };
  if (row.deletedAt) return { stop: WEBHOOK_DELETED_ERROR };
  if (!row.isActive) return { stop: "Webhook is inactive; no further attempts are made" };
  return { stop: `All ${row.maxAttempts} attempts were made` };
}

async function closeAsFailed(db: Database, deliveryId: string, lastError: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: "failed", lastError, nextAttemptAt: null, completedAt: new Date() })
    .where(and(eq(webhookDeliveries.id, deliveryId), open));
}

/** Sends one attempt of a delivery; its headers, body and signature as CONTRACT §7 says. */
async function send(deps: DeliverDeps, deliveryId: string, claim: ClaimedAttempt) {
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
  return async ({ deliveryId }: JobPayload<"webhook.deliver">) => {
    const claim = await claimAttempt(deps.db, deliveryId);
    if (!claim) {
      const why = await explainUnclaimed(deps.db, deliveryId);
      if ("finished" in why) return { skipped: "already finished" };
      await closeAsFailed(deps.db, deliveryId, why.stop);
      throw new UnrecoverableError(why.stop);
    }
    const outcome = await send(deps, deliveryId, claim);
    const now = new Date();
    if ("ok" in outcome) {
      await deps.db
        .update(webhookDeliveries)
        .set({
          status: "succeeded",
          lastResponseStatus: outcome.status,
          lastError: null,
          nextAttemptAt: null,
          completedAt: now,
        })
        .where(and(eq(webhookDeliveries.id, deliveryId), open));
      countWebhookAttempt("succeeded", claim.attempt);
      return { status: outcome.status, attempt: claim.attempt };
    }
    const last = claim.attempt >= claim.maxAttempts;
    const nextAttemptAt = last ? null : new Date(now.getTime() + retryDelayMs(deps.delaysMs, claim.attempt));
    const updated = await deps.db
      .update(webhookDeliveries)
      .set({
        status: last ? "failed" : "retrying",
        lastResponseStatus: outcome.status ?? null,
        lastError: outcome.error,
        nextAttemptAt,
        completedAt: last ? now : null,
      })
      .where(and(eq(webhookDeliveries.id, deliveryId), open))
      .returning({ id: webhookDeliveries.id });
    deps.logger.info({ deliveryId, attempt: claim.attempt, status: outcome.status, last }, "webhook attempt failed");
    countWebhookAttempt(last ? "failed" : "retrying", claim.attempt);
    // Closed meanwhile (the webhook was deleted): no retry either.
    if (last || updated.length === 0) throw new UnrecoverableError(outcome.error);
    throw new AttemptFailedError(claim.attempt, outcome.error);
  };
}
