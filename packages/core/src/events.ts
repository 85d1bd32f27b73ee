import type { Environment } from "./api-key.js";
import { newId } from "./ids.js";

/** The event types a webhook can subscribe to (CONTRACT §7, `spin.voided` §13, `webhook.disabled` §18). */
export const EVENT_TYPES = [
  "spin.large_win",
  "settlement.report_ready",
  "block.low_reserve",
  "api_key.expiring",
  "spin.voided",
  "webhook.disabled",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The `data` of a `webhook.disabled` event: written once, in the SDK its receivers read it with. */
export type { WebhookDisabledData } from "@outcomes/sdk";

/** Attempts per delivery: 1 initial + 4 retries (the specification's schedule). */
export const WEBHOOK_MAX_ATTEMPTS = 5;

/** An endpoint failing for WEBHOOK_DISABLE_AFTER_HOURS is disabled only after this many failed attempts too (CONTRACT §18). */
export const WEBHOOK_DISABLE_MIN_ATTEMPTS = 10;

/** A delivery is pending until its first attempt, retrying after a failed one, then succeeded or failed. */
export const DELIVERY_STATUSES = ["pending", "retrying", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * The webhook body of every event, and an entry of the event log (`GET /events`):
 * `{id, sequence, type, createdAt, environment, data}`; `id` is the event id, `sequence` its place
 * in the partner's and environment's log (strictly increasing, assigned when the event is stored).
 */
export interface EventEnvelope<D = Record<string, unknown>> {
  id: string;
  sequence: number;
  type: EventType;
  createdAt: string;
  environment: Environment;
  data: D;
}

/** An envelope before it is stored: its sequence is assigned in the transaction that stores it. */
export type UnsequencedEnvelope<D = Record<string, unknown>> = Omit<EventEnvelope<D>, "sequence">;

export function newEventEnvelope<D>(
  type: EventType,
  environment: Environment,
  data: D,
  now = new Date(),
): UnsequencedEnvelope<D> {
  return { id: newId("evt"), type, createdAt: now.toISOString(), environment, data };
}

/** The envelope's fields in their documented order (Postgres `jsonb` reorders keys). */
export function orderedEnvelope<D>(envelope: EventEnvelope<D>): EventEnvelope<D> {
  const { id, sequence, type, createdAt, environment, data } = envelope;
  return { id, sequence, type, createdAt, environment, data };
}

/** The exact bytes a delivery sends: the stored payload re-serialised once, then the bytes are kept. */
export function serializeEnvelope(envelope: EventEnvelope<unknown>): string {
  return JSON.stringify(orderedEnvelope(envelope));
}
