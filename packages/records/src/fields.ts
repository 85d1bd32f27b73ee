import { z } from "@hono/zod-openapi";
import { ENVIRONMENTS } from "@outcomes/core";

/** Timestamps are ISO-8601 strings in every record. */
export const TimestampSchema = z.string().openapi({ format: "date-time" });

export const EnvironmentSchema = z.enum(ENVIRONMENTS).openapi({ example: "sandbox" });
