import { randomBytes } from "node:crypto";
import { couldBeId, type Environment, ErrorCode, type EventType, newId, ServiceError } from "@outcomes/core";
import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import type { Database, Executor } from "../client.js";
import { webhookDeliveries, webhooks } from "../schema/webhooks.js";
import { closeOpenDeliveriesOfWebhook, type DeliveryRecord, insertRedelivery } from "./deliveries.js";
import type { PageWindow } from "./paging.js";

export type WebhookRecord = typeof webhooks.$inferSelect;

/** The caller a webhook must belong to: a partner in one environment. */
export interface WebhookOwner {
  partnerId: string;
  environment: Environment;
}

/** `whsec_` + base64 of 32 CSPRNG bytes, the Standard Webhooks secret format. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export async function createWebhook(
  db: Executor,
  owner: WebhookOwner,
  input: { url: string; events: EventType[]; rateLimitPerSecond?: number | undefined },
): Promise<WebhookRecord> {
  const [created] = await db
    .insert(webhooks)
    .values({
      id: newId("whk"),
      ...owner,
      url: input.url,
      events: input.events,
      secret: newWebhookSecret(),
      rateLimitPerSecond: input.rateLimitPerSecond ?? null,
    })
    .returning();
  return created!;
}

/** `PATCH /webhooks/{id}`: only the fields given change. A deleted webhook is 404 KS-4206. */
export async function updateWebhook(
  db: Database,
  owner: WebhookOwner,
  webhookId: string,
  changes: { rateLimitPerSecond?: number | null | undefined },
): Promise<WebhookRecord> {
  const current = await requireOwnWebhook(db, owner, webhookId);
  assertNotDeleted(current);
  if (changes.rateLimitPerSecond === undefined) return current;
  const [updated] = await db
    .update(webhooks)
    .set({ rateLimitPerSecond: changes.rateLimitPerSecond })
    .where(and(eq(webhooks.id, webhookId), isNull(webhooks.deletedAt)))
    .returning();
  if (!updated) throw deletedWebhook();
  return updated;
}

/** Newest first, soft-deleted ones included (they are the audit trail). */
export async function listWebhooks(db: Database, owner: WebhookOwner, page: PageWindow) {
  const mine = and(eq(webhooks.partnerId, owner.partnerId), eq(webhooks.environment, owner.environment));
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(webhooks)
      .where(mine)
      .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ value: count() }).from(webhooks).where(mine),
  ]);
  return { rows, total: total?.value ?? 0 };
}

/**
 * The caller's webhook, or the error the contract names: another environment's (or no) webhook
 * 404 KS-4206, as if it did not exist; another partner's 403 KS-4207. `lock` takes a row lock of
 * that strength.
 */
export async function requireOwnWebhook(
  executor: Executor,
  owner: WebhookOwner,
  webhookId: string,
  options: { lock?: "update" | "share" } = {},
): Promise<WebhookRecord> {
  if (!couldBeId(webhookId)) throw new ServiceError(ErrorCode.WebhookNotFound);
  const query = executor.select().from(webhooks).where(eq(webhooks.id, webhookId));
  const [record] = options.lock ? await query.for(options.lock) : await query;
  if (!record || record.environment !== owner.environment) throw new ServiceError(ErrorCode.WebhookNotFound);
  if (record.partnerId !== owner.partnerId) throw new ServiceError(ErrorCode.WebhookNotOwned);
  return record;
}

/**
 * Soft delete: the record stays for audit, nothing more is sent to it. Open deliveries are closed
 * as failed in the same transaction, so the list says at once that no retry will come. Repeating
 * it changes nothing (the first `deletedAt` stays).
 */
export async function deleteWebhook(db: Database, owner: WebhookOwner, webhookId: string): Promise<WebhookRecord> {
  return db.transaction(async (tx) => {
    const current = await requireOwnWebhook(tx, owner, webhookId, { lock: "update" });
    if (current.deletedAt) return current;
    const now = new Date();
    const [deleted] = await tx
      .update(webhooks)
      .set({ isActive: false, deletedAt: now })
      .where(eq(webhooks.id, webhookId))
      .returning();
    await closeOpenDeliveriesOfWebhook(tx, webhookId, now);
    return deleted!;
  });
}

const deletedWebhook = () =>
  new ServiceError(ErrorCode.WebhookNotFound, { message: "Webhook was deleted; it receives nothing more" });

/**
 * Recover, rotate-secret and update answer a deleted webhook 404 KS-4206 (CONTRACT §11): it is gone
 * for them. A disabled one is still there (CONTRACT §18).
 */
export function assertNotDeleted(webhook: WebhookRecord): void {
  if (webhook.deletedAt || (!webhook.isActive && !webhook.disabledAt)) throw deletedWebhook();
}

/** Disabled by the service (CONTRACT §18), not deleted: `enable` turns it back on. */
export function isDisabled(webhook: WebhookRecord): boolean {
  return !webhook.isActive && webhook.disabledAt !== null && webhook.deletedAt === null;
}

/** Recover and redeliver to a disabled webhook: nothing can be sent to it until it is enabled. */
export function assertNotDisabled(webhook: WebhookRecord): void {
  if (!isDisabled(webhook)) return;
  throw new ServiceError(ErrorCode.InvalidRequest, {
    message: "Webhook is disabled: enable it first (POST /webhooks/{webhookId}/enable)",
  });
}

/**
 * A new signing secret (CONTRACT §11). The replaced one keeps signing deliveries too, beside the
 * new one, for `overlapSeconds`; rotating again within that time makes the secret just replaced
 * the previous one, and the one before it stops at once. One UPDATE swaps the two, so concurrent
 * rotations chain (each one's previous secret is the one the other made) instead of losing one.
 */
export async function rotateWebhookSecret(
  db: Database,
  owner: WebhookOwner,
  webhookId: string,
  overlapSeconds: number,
): Promise<WebhookRecord> {
  assertNotDeleted(await requireOwnWebhook(db, owner, webhookId));
  const [rotated] = await db
    .update(webhooks)
    .set({
      secret: newWebhookSecret(),
      previousSecret: sql`${webhooks.secret}`,
      previousSecretExpiresAt: sql`now() + make_interval(secs => ${overlapSeconds})`,
    })
    .where(and(eq(webhooks.id, webhookId), isNull(webhooks.deletedAt)))
    .returning();
  // Deleted between the check and the update.
  if (!rotated) throw deletedWebhook();
  return rotated;
}

/** Newest first. */
export async function listDeliveries(db: Database, webhookId: string, page: PageWindow) {
  const ofWebhook = eq(webhookDeliveries.webhookId, webhookId);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(webhookDeliveries)
      .where(ofWebhook)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ value: count() }).from(webhookDeliveries).where(ofWebhook),
  ]);
  return { rows, total: total?.value ?? 0 };
}

/**
 * A new delivery (new id, fresh attempts) of the same event with the very same body bytes. Unknown
 * delivery, or one of another webhook: 404 KS-4215; a deleted webhook can receive nothing: KS-4101.
 */
export async function createRedelivery(
  db: Executor,
  webhook: WebhookRecord,
  deliveryId: string,
): Promise<DeliveryRecord> {
  if (!couldBeId(deliveryId)) throw new ServiceError(ErrorCode.NotFound, { message: "Webhook delivery not found" });
  const [original] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhook.id)));
  if (!original) throw new ServiceError(ErrorCode.NotFound, { message: "Webhook delivery not found" });
  assertNotDisabled(webhook);
  if (webhook.deletedAt || !webhook.isActive) {
    throw new ServiceError(ErrorCode.InvalidRequest, { message: "Webhook is deleted: nothing can be delivered to it" });
  }
  return insertRedelivery(db, original);
}
