import { z } from "@hono/zod-openapi";
import { microsToUsd, spinCeilingOf } from "@outcomes/core";
import type { PartnerRecord } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

/** The partner as the operator API and CLI show it (CONTRACT "Record shapes"). */
export const PartnerSchema = z
  .object({
    id: z.string().openapi({ example: "ptr_0Qx7kLm2AbCdEfGhIjKlMnOp" }),
    slug: z.string().openapi({ example: "acme" }),
    name: z.string().openapi({ example: "Acme Gaming" }),
    contactEmail: z.string().nullable().openapi({ example: "ops@acme.example" }),
    isActive: z.boolean(),
    spinCeilingUsd: z.number().openapi({
      example: 1_000_000,
      description:
        "The most one spin of this partner's games may stake or pay (default 1000000): registering or updating a " +
        "game whose maxWagerUsd, or maxWagerUsd × its sheet's largest multiplier, passes it is 400 KS-4101",
    }),
    defaultJurisdiction: z.string().openapi({
      example: "NONE",
      description: "The jurisdiction profile of the partner's players without one of their own",
    }),
    createdAt: TimestampSchema,
  })
  .openapi("Partner");
export type PartnerView = z.infer<typeof PartnerSchema>;

export function presentPartner(partner: PartnerRecord): PartnerView {
  return {
    id: partner.id,
    slug: partner.slug,
    name: partner.name,
    contactEmail: partner.contactEmail,
    isActive: partner.isActive,
    spinCeilingUsd: microsToUsd(spinCeilingOf(partner)),
    defaultJurisdiction: partner.defaultJurisdiction,
    createdAt: partner.createdAt.toISOString(),
  };
}
