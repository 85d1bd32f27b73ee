import { createRoute, z } from "@hono/zod-openapi";
import { rotateWebhookSecret } from "@outcomes/db";
import { TimestampSchema } from "@outcomes/records";
import { errorResponses, jsonResponse, optionalJsonBody } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { WEBHOOK_COMMAND_ERRORS, WebhookParams } from "./webhook-schemas.js";

/** A webhook's signing secret, rotated with an overlap (CONTRACT §11). */

const tags = ["Webhooks"];

const MAX_OVERLAP_SECONDS = 604_800;
const DEFAULT_OVERLAP_SECONDS = 86_400;

const RotateSecretBody = z
  .strictObject({
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_OVERLAP_SECONDS)
      .optional()
      .openapi({
        example: DEFAULT_OVERLAP_SECONDS,
        description: `How long deliveries stay signed with the old secret too (default ${DEFAULT_OVERLAP_SECONDS}, at most ${MAX_OVERLAP_SECONDS})`,
      }),
  })
  .openapi("RotateWebhookSecret");

const RotatedSecret = z
  .object({
    webhookId: z.string(),
    secret: z.string().openapi({
      example: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oDsRxDRyXnQxk=",
      description: "The new signing secret; shown only in this response",
    }),
    previousSecretExpiresAt: TimestampSchema.openapi({
      description: "Until then webhook-signature also carries a signature with the old secret",
    }),
  })
  .openapi("RotatedWebhookSecret");

export const webhookSecretsRouter = createRouter();

webhookSecretsRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks/{webhookId}/rotate-secret",
    operationId: "rotateWebhookSecret",
    tags,
    summary: "Rotate the signing secret, with an overlap",
    description:
      "A new secret, shown only here. Until `previousSecretExpiresAt` every attempt (retries of earlier " +
      "deliveries too) carries both signatures in webhook-signature (`v1,<new> v1,<old>`), so a receiver " +
      "holding either secret verifies it; X-Service-Signature is signed with the new one. Rotating again " +
      "within the overlap retires the oldest secret at once. A deleted webhook is 404 KS-4206.",
    request: {
      params: WebhookParams,
      body: optionalJsonBody(RotateSecretBody, { overlapSeconds: DEFAULT_OVERLAP_SECONDS }),
    },
    responses: {
      200: jsonResponse(RotatedSecret, "The new secret"),
      ...errorResponses(...WEBHOOK_COMMAND_ERRORS),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const overlapSeconds = c.req.valid("json").overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    const rotated = await rotateWebhookSecret(deps.db, partner, c.req.valid("param").webhookId, overlapSeconds);
    return c.json(
      {
        webhookId: rotated.id,
        secret: rotated.secret,
        previousSecretExpiresAt: rotated.previousSecretExpiresAt!.toISOString(),
      },
      200,
    );
  },
);
