import { z } from "@hono/zod-openapi";
import { ENVIRONMENTS, EVENT_TYPES } from "@outcomes/core";
import { TimestampSchema } from "./fields.js";

/** An event as the event log lists it and a webhook body carries it (`EventEnvelope` in core). */
export const EventSchema = z
  .object({
    id: z.string().openapi({ example: "evt_0VbemLSzdCLq6R9z4t6IYn" }),
    sequence: z.number().int().openapi({
      description: "Strictly increasing per partner and environment; the same number in the webhook body",
      example: 42,
    }),
    type: z.enum(EVENT_TYPES),
    createdAt: TimestampSchema,
    environment: z.enum(ENVIRONMENTS),
    data: z.record(z.string(), z.unknown()).openapi({ description: "As in the webhook body of this type" }),
  })
  .openapi("Event");
