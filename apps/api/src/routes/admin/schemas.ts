import { z } from "@hono/zod-openapi";
import { ENVIRONMENTS } from "@outcomes/core";
import { Timestamp } from "../../openapi.js";

/** Shapes shared by the operator route groups (CONTRACT "Record shapes"). */
export const Environment = z.enum(ENVIRONMENTS).openapi({ example: "sandbox" });

export const Partner = z
  .object({
    id: z.string().openapi({ example: "ptr_0Qx7kLm2AbCdEfGhIjKlMnOp" }),
    slug: z.string().openapi({ example: "acme" }),
    name: z.string().openapi({ example: "Acme Gaming" }),
    contactEmail: z.string().nullable().openapi({ example: "ops@acme.example" }),
    isActive: z.boolean(),
    createdAt: Timestamp,
  })
  .openapi("Partner");

export const ApiKey = z
  .object({
    id: z.string().openapi({ example: "key_0Qx7kLm2AbCdEfGhIjKlMnOp" }),
    prefix: z.string().openapi({ example: "ks_sandbox_AbC1", description: "First characters, to recognise the key" }),
    environment: Environment,
    expiresAt: Timestamp,
    revokedAt: Timestamp.nullable(),
    lastUsedAt: Timestamp.nullable().openapi({ description: "Updated at most once a minute per API process" }),
    createdAt: Timestamp,
  })
  .openapi("ApiKey");

export const IssuedApiKey = z
  .object({
    id: z.string(),
    key: z.string().openapi({ description: "The whole key. Shown only in this answer; store it now." }),
    prefix: z.string(),
    environment: Environment,
    expiresAt: Timestamp,
    createdAt: Timestamp,
  })
  .openapi("IssuedApiKey");

const pathId = (name: string, example: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name, in: "path" }, example });

export const PartnerParams = z.object({ partnerId: pathId("partnerId", "ptr_0Qx7kLm2AbCdEfGhIjKlMnOp") });
export const PartnerKeyParams = PartnerParams.extend({ keyId: pathId("keyId", "key_0Qx7kLm2AbCdEfGhIjKlMnOp") });

/** An absolute ISO-8601 date-time with its offset (`2027-01-31T00:00:00Z`). */
export const FutureTimestamp = z.iso
  .datetime({ offset: true })
  .openapi({ format: "date-time", description: "Must lie in the future" });
