import { z } from "@hono/zod-openapi";
import { ENVIRONMENTS } from "@outcomes/core";

/** Timestamps are ISO-8601 strings in every record. */
export const TimestampSchema = z.string().openapi({ format: "date-time" });

export const EnvironmentSchema = z.enum(ENVIRONMENTS).openapi({ example: "sandbox" });

/** What an operator's view of a partner's record adds to the partner's own: whose it is, in which environment. */
export const OwnerFields = { partnerId: z.string(), environment: z.enum(ENVIRONMENTS) };
