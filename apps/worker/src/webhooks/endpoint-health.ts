import {
  type ClaimedAttempt,
  type Database,
  disableWebhook,
  failingTooLong,
  noteFailedAttempt,
  type RolloutSwitch,
} from "@outcomes/db";
import { notifyEvents, type Producers } from "@outcomes/queue";
import type { Logger } from "@outcomes/runtime";

export interface EndpointHealthDeps {
  db: Database;
  producers: Producers;
  rollout: RolloutSwitch;
  logger: Logger;
  /** WEBHOOK_DISABLE_AFTER_HOURS. */
  disableAfterHours: number;
  /** The clock of endpoint health (tests move it; retries keep real time). */
  now: () => Date;
}

const GONE = 410;

/**
 * After a failed attempt: a 410 Gone disables the endpoint at once; otherwise the failure is noted
 * on the webhook's health, and an endpoint failing for WEBHOOK_DISABLE_AFTER_HOURS with at least 10
 * failed attempts is disabled (CONTRACT §18). Off until release 2's processes are gone (its
 * partners could not enable the webhook again, nor subscribe to `webhook.disabled`). True when this
 * attempt disabled it: the delivery was closed with the rest of the webhook's open ones.
 */
export async function afterFailedAttempt(
  deps: EndpointHealthDeps,
  claim: ClaimedAttempt,
  outcome: { status?: number | undefined; error: string },
): Promise<boolean> {
  if (!(await deps.rollout.on("webhook-endpoint-health"))) return false;
  const at = deps.now();
  let reason: string | undefined;
  if (outcome.status === GONE) reason = "Receiver answered HTTP 410 Gone";
  else {
    const health = await noteFailedAttempt(deps.db, claim.webhookId, at);
    if (health && failingTooLong(health, at, deps.disableAfterHours)) {
      reason = `No attempt succeeded for ${deps.disableAfterHours} hours, since ${health.failingSince.toISOString()} (last: ${outcome.error})`;
    }
  }
  if (!reason) return false;
  const disabled = await disableWebhook(deps.db, claim.webhookId, {
    at,
    reason,
    lastResponseStatus: outcome.status ?? null,
  });
  if (!disabled) return false;
  deps.logger.warn({ webhookId: claim.webhookId, partnerId: disabled.partnerId, reason }, "webhook disabled");
  // The `webhook.disabled` event goes out now rather than at the next poll.
  await notifyEvents(deps.producers);
  return true;
}
