import { z } from "@hono/zod-openapi";
import type { ApiKeyRecord, IssuedApiKey } from "@outcomes/db";
import { EnvironmentSchema, TimestampSchema } from "./fields.js";

/** A key as listed: never its secret or hash (CONTRACT "Record shapes"). */
export const ApiKeySchema = z
  .object({
    id: z.string().openapi({ example: "key_0Qx7kLm2AbCdEfGhIjKlMnOp" }),
    prefix: z.string().openapi({ example: "ks_sandbox_AbC1", description: "First characters, to recognise the key" }),
    environment: EnvironmentSchema,
    expiresAt: TimestampSchema,
    revokedAt: TimestampSchema.nullable(),
    lastUsedAt: TimestampSchema.nullable().openapi({ description: "Updated at most once a minute per API process" }),
    createdAt: TimestampSchema,
  })
  .openapi("ApiKey");
export type ApiKeyView = z.infer<typeof ApiKeySchema>;

/** The answer to issue and rotate: the only time the whole key is shown. */
export const IssuedApiKeySchema = z
  .object({
    id: z.string(),
    key: z.string().openapi({ description: "The whole key. Shown only in this answer; store it now." }),
    prefix: z.string(),
    environment: EnvironmentSchema,
    expiresAt: TimestampSchema,
    createdAt: TimestampSchema,
  })
  .openapi("IssuedApiKey");
export type IssuedApiKeyView = z.infer<typeof IssuedApiKeySchema>;

export function presentApiKey(record: ApiKeyRecord): ApiKeyView {
  return {
    id: record.id,
    prefix: record.prefix,
    environment: record.environment,
    expiresAt: record.expiresAt.toISOString(),
    revokedAt: record.revokedAt?.toISOString() ?? null,
    lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
    createdAt: record.createdAt.toISOString(),
  };
}

export function presentIssuedKey({ record, key }: IssuedApiKey): IssuedApiKeyView {
  return {
    id: record.id,
    key,
    prefix: record.prefix,
    environment: record.environment,
    expiresAt: record.expiresAt.toISOString(),
    createdAt: record.createdAt.toISOString(),
  };
}
