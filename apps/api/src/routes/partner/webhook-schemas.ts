import { z } from "@hono/zod-openapi";
import {
  checkWebhookUrl,
  type Environment,
  ErrorCode,
  EVENT_TYPES,
  type EventType,
  type HostResolver,
  loopbackPortAllowed,
  ServiceError,
  vetAddresses,
} from "@outcomes/core";
import { resolveWithin, systemResolver } from "@outcomes/runtime";
import type { Context } from "hono";
import type { ZodError } from "zod";
import type { AppDeps, AppEnv } from "../../context.js";
import { formatPath, validationError } from "../../errors.js";
import { PARTNER_COMMON_ERRORS } from "../../openapi.js";

export const WEBHOOK_OWNERSHIP_ERRORS = [ErrorCode.WebhookNotFound, ErrorCode.WebhookNotOwned] as const;

/** What a command on one webhook with a JSON body can answer besides its success (a bad body, a webhook not its own). */
export const WEBHOOK_COMMAND_ERRORS: ErrorCode[] = [
  ...PARTNER_COMMON_ERRORS,
  ErrorCode.InvalidRequest,
  ErrorCode.RequiredFieldMissing,
  ...WEBHOOK_OWNERSHIP_ERRORS,
];

/** Registration waits at most this long for DNS; a host that does not answer is vetted at delivery. */
const REGISTRATION_DNS_TIMEOUT_MS = 2000;

/** Deliveries per second a webhook takes at most (CONTRACT §18); the rest wait their turn. */
export const MAX_RATE_LIMIT_PER_SECOND = 1000;
const RateLimitPerSecond = z
  .number()
  .int()
  .min(1)
  .max(MAX_RATE_LIMIT_PER_SECOND)
  .openapi({
    example: 50,
    description:
      "Deliveries per second at most (1..1000), evenly spaced; the rest wait in order, without counting as " +
      "failed attempts. Leave out for no pacing.",
  });

export const RegisterWebhookBody = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .openapi({
        example: "https://hooks.example.com/outcomes",
        description:
          "HTTPS URL. Sandbox also accepts http://localhost, http://127.0.0.1 and http://[::1] on any port " +
          "the deployment allows (SANDBOX_LOOPBACK_PORTS; by default any). URLs pointing at private, loopback, " +
          "link-local, CGNAT or reserved addresses are refused (KS-4106: must resolve to a public address).",
      }),
    events: z
      .array(z.enum(EVENT_TYPES))
      .min(1)
      .refine((events) => new Set(events).size === events.length, "must not repeat an event type")
      .openapi({ example: ["spin.large_win", "block.low_reserve"] }),
    rateLimitPerSecond: RateLimitPerSecond.optional(),
  })
  .openapi("RegisterWebhook");

export const UpdateWebhookBody = z
  .strictObject({
    rateLimitPerSecond: RateLimitPerSecond.nullable()
      .optional()
      .openapi({ description: "1..1000 deliveries per second at most; null stops pacing" }),
  })
  .openapi("UpdateWebhook", { description: "Only the fields sent change; unknown fields are refused (KS-4101)." });

export const WebhookParams = z.object({
  webhookId: z
    .string()
    .min(1)
    .openapi({ param: { in: "path" } }),
});
export const DeliveryParams = WebhookParams.extend({
  deliveryId: z
    .string()
    .min(1)
    .openapi({ param: { in: "path" } }),
});

/**
 * Until release 2's processes are gone (the `webhook-endpoint-health` gate) a registration answers
 * as release 2 does: `webhook.disabled` is an unknown event type (KS-4107), `rateLimitPerSecond` an
 * unknown field (KS-4101).
 */
export async function refuseUnreleasedFields(
  deps: AppDeps,
  body: { events: readonly EventType[]; rateLimitPerSecond?: number | null | undefined },
): Promise<void> {
  const at = body.events.indexOf("webhook.disabled");
  if ((at === -1 && body.rateLimitPerSecond === undefined) || (await deps.rollout.on("webhook-endpoint-health")))
    return;
  const message = "is available once the rollout has finished";
  if (at !== -1) {
    throw new ServiceError(ErrorCode.InvalidWebhookEvents, {
      details: [{ path: `events[${at}]`, message: `webhook.disabled ${message}` }],
    });
  }
  throw new ServiceError(ErrorCode.InvalidRequest, {
    details: [{ path: "rateLimitPerSecond", message: `rateLimitPerSecond ${message}` }],
  });
}

const absent = (value: unknown) => value === undefined || value === null || value === "";

/**
 * Registration's own codes (CONTRACT §4): a missing field is KS-4102; a bad `url` KS-4106; bad
 * `events` (empty, unknown or repeated) KS-4107; anything else (unknown fields, wrong body) KS-4101.
 */
export function registrationHook(
  result: { success: true } | { success: false; error: ZodError; data?: unknown; target: string },
  _c: Context<AppEnv>,
): undefined {
  if (result.success) return undefined;
  const input = result.data;
  const body = input && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : null;
  const fault = (field: string) => result.error.issues.filter((issue) => issue.path[0] === field);
  const details = (issues: ZodError["issues"]) =>
    issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
  if (body && !absent(body.url) && !absent(body.events)) {
    if (fault("url").length > 0)
      throw new ServiceError(ErrorCode.InvalidWebhookUrl, { details: details(fault("url")) });
    if (fault("events").length > 0)
      throw new ServiceError(ErrorCode.InvalidWebhookEvents, { details: details(fault("events")) });
  }
  throw validationError(result.error, input, result.target);
}

/**
 * The URL rules of CONTRACT §7. A host name is resolved and each address vetted; a name that does
 * not resolve (yet) is accepted, since every delivery attempt resolves and vets again before it
 * connects. A sandbox loopback URL must use a port of `loopbackPorts` (SANDBOX_LOOPBACK_PORTS).
 */
export async function assertWebhookUrl(
  url: string,
  environment: Environment,
  resolver: HostResolver = systemResolver,
  loopbackPorts?: readonly number[],
): Promise<void> {
  const check = checkWebhookUrl(url, environment);
  if (!check.ok)
    throw new ServiceError(ErrorCode.InvalidWebhookUrl, { details: [{ path: "url", message: check.reason }] });
  if (check.allowLoopback && !loopbackPortAllowed(check.url, loopbackPorts)) {
    const message =
      loopbackPorts?.length === 0
        ? "this deployment takes no loopback webhooks (SANDBOX_LOOPBACK_PORTS)"
        : `loopback webhooks may use only ports ${loopbackPorts?.join(", ")} here (SANDBOX_LOOPBACK_PORTS)`;
    throw new ServiceError(ErrorCode.InvalidWebhookUrl, { details: [{ path: "url", message }] });
  }
  if (check.literal || check.allowLoopback) return;
  const addresses = await resolveWithin(resolver, check.host, REGISTRATION_DNS_TIMEOUT_MS);
  const refusal = addresses && vetAddresses(addresses, false);
  if (refusal) throw new ServiceError(ErrorCode.InvalidWebhookUrl, { details: [{ path: "url", message: refusal }] });
}
