import { ErrorCode, ServiceError, WEBHOOK_DISABLE_MIN_ATTEMPTS, type WebhookDisabledData } from "@outcomes/core";
import { and, count, desc, eq, isNotNull, isNull } from "drizzle-orm";
import type { Database } from "../client.js";
import { webhooks } from "../schema/webhooks.js";
import { closeOpenDeliveriesOfWebhook } from "./deliveries.js";
import { insertEvent } from "./events.js";
import type { Paged, PageWindow } from "./paging.js";
import { sqlClientOf } from "./sql-client.js";
import { requireOwnWebhook, type WebhookOwner, type WebhookRecord } from "./webhooks.js";

/**
 * Endpoint health (CONTRACT §18). A webhook is failing from its first failed attempt after a
 * success (`failing_since`); a success clears it (`markDeliveriesSucceeded`). Failing for
 * WEBHOOK_DISABLE_AFTER_HOURS with at least WEBHOOK_DISABLE_MIN_ATTEMPTS failed attempts, or
 * answered 410 Gone, it is disabled: `is_active` false (so both releases send it nothing),
 * `disabled_at` and `disabled_reason` set, its open deliveries closed, `webhook.disabled` written.
 */

/**
 * Marks a failed attempt on its webhook's health and returns the health after it. The count stops at
 * the threshold, so an endpoint failing at a high rate writes its row a few times, not per failure.
 */
const NOTE_FAILURE = `
  with marked as (
    update webhooks set failing_since = coalesce(failing_since, $2::timestamptz), failed_attempts = failed_attempts + 1
    where id = $1 and (failing_since is null or failed_attempts < $3)
    returning failing_since, failed_attempts)
  select failing_since, failed_attempts from marked
  union all
  select failing_since, failed_attempts from webhooks where id = $1 and not exists (select 1 from marked)`;

export interface WebhookHealth {
  failingSince: Date;
  /** Failed attempts since `failingSince`, counted up to WEBHOOK_DISABLE_MIN_ATTEMPTS. */
  failedAttempts: number;
}

export async function noteFailedAttempt(db: Database, webhookId: string, at: Date): Promise<WebhookHealth | undefined> {
  const rows = await sqlClientOf(db).unsafe<{ failing_since: Date | null; failed_attempts: number }[]>(
    NOTE_FAILURE,
    [webhookId, at.toISOString(), WEBHOOK_DISABLE_MIN_ATTEMPTS],
    { prepare: true },
  );
  const row = rows[0];
  return row?.failing_since
    ? { failingSince: new Date(row.failing_since), failedAttempts: row.failed_attempts }
    : undefined;
}

/** Whether a failing endpoint has failed long enough, and often enough, to be disabled. */
export function failingTooLong(health: WebhookHealth, at: Date, disableAfterHours: number): boolean {
  return (
    health.failedAttempts >= WEBHOOK_DISABLE_MIN_ATTEMPTS &&
    at.getTime() - health.failingSince.getTime() >= disableAfterHours * 3_600_000
  );
}

/**
 * Disables an active webhook, in one transaction: the record, its open deliveries closed as failed
 * (`lastError` says why), and a `webhook.disabled` event in the outbox and the event log, which
 * fan-out sends to the partner's other active webhooks subscribed to it. Undefined when it was no
 * longer active (deleted, or disabled by another attempt first): nothing is written twice.
 */
export async function disableWebhook(
  db: Database,
  webhookId: string,
  cause: { at: Date; reason: string; lastResponseStatus: number | null },
): Promise<WebhookRecord | undefined> {
  return db.transaction(async (tx) => {
    const [disabled] = await tx
      .update(webhooks)
      .set({
        isActive: false,
        disabledAt: cause.at,
        disabledReason: cause.reason,
        failingSince: null,
        failedAttempts: 0,
      })
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.isActive, true), isNull(webhooks.deletedAt)))
      .returning();
    if (!disabled) return undefined;
    const lastError = `Webhook was disabled (${cause.reason}); no further attempts are made`;
    // Completed now by the record's clock, as every delivery is (`cause.at` is the health clock).
    await closeOpenDeliveriesOfWebhook(tx, webhookId, new Date(), lastError);
    const data: WebhookDisabledData = {
      webhookId,
      url: disabled.url,
      disabledAt: cause.at.toISOString(),
      reason: cause.reason,
      lastResponseStatus: cause.lastResponseStatus,
    };
    // Last: it takes the partner's event counter until the commit (see insertEvents).
    await insertEvent(tx, {
      partnerId: disabled.partnerId,
      environment: disabled.environment,
      type: "webhook.disabled",
      data,
    });
    return disabled;
  });
}

/**
 * Turns a disabled webhook back on (the partner's `POST /webhooks/{id}/enable`): active, healthy,
 * `disabledAt` and `disabledReason` cleared. An active one is returned as it is; a deleted one is
 * 404 KS-4206, as for recover.
 */
export async function enableWebhook(db: Database, owner: WebhookOwner, webhookId: string): Promise<WebhookRecord> {
  return db.transaction(async (tx) => {
    const current = await requireOwnWebhook(tx, owner, webhookId, { lock: "update" });
    if (current.deletedAt) {
      throw new ServiceError(ErrorCode.WebhookNotFound, { message: "Webhook was deleted; it cannot be enabled" });
    }
    if (current.isActive) return current;
    const [enabled] = await tx
      .update(webhooks)
      .set({ isActive: true, disabledAt: null, disabledReason: null, failingSince: null, failedAttempts: 0 })
      .where(eq(webhooks.id, webhookId))
      .returning();
    return enabled!;
  });
}

/** Disabled (not deleted) webhooks of every partner, most recently disabled first: what operators look at. */
export async function listDisabledWebhooks(db: Database, page: PageWindow): Promise<Paged<WebhookRecord>> {
  const disabled = and(isNotNull(webhooks.disabledAt), isNull(webhooks.deletedAt), eq(webhooks.isActive, false));
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(webhooks)
      .where(disabled)
      .orderBy(desc(webhooks.disabledAt), desc(webhooks.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ value: count() }).from(webhooks).where(disabled),
  ]);
  return { rows, total: total?.value ?? 0 };
}
