import { z } from "@hono/zod-openapi";
import { DRAW_MODES, PAR_SHEET_STATUSES } from "@outcomes/core";
import type { ParSheetRecord } from "@outcomes/db";
import { OwnerFields, TimestampSchema } from "./fields.js";

export const ParSheetSchema = z
  .object({
    id: z.string().openapi({ example: "par_0Nf3kQ2h7yXwz3KpL0aBcDeFg1" }),
    name: z.string(),
    version: z.string(),
    status: z.enum(PAR_SHEET_STATUSES),
    drawMode: z.enum(DRAW_MODES),
    rtp: z.number().openapi({ description: "Σ weight × multiplier / cycle, exact (12 places if it does not end)" }),
    certifiedRtp: z.number(),
    hitFrequency: z.number().openapi({ description: "Share of the cycle that is not T0" }),
    volatility: z.number().openapi({ description: "Standard deviation of the multiplier" }),
    createdAt: TimestampSchema,
    approvedAt: TimestampSchema.nullable(),
    retiredAt: TimestampSchema.nullable(),
  })
  .openapi("ParSheet");
export type ParSheetView = z.infer<typeof ParSheetSchema>;

export const ParSheetWithDocumentSchema = ParSheetSchema.extend({
  document: z.record(z.string(), z.unknown()).openapi({ description: "The document as uploaded" }),
}).openapi("ParSheetWithDocument");
export type ParSheetWithDocumentView = z.infer<typeof ParSheetWithDocumentSchema>;

/** A sheet as operators see it: the partner's view plus whose it is. */
export const OperatorParSheetSchema = ParSheetSchema.extend(OwnerFields).openapi("OperatorParSheet");
export type OperatorParSheetView = z.infer<typeof OperatorParSheetSchema>;

export function presentParSheet(record: ParSheetRecord): ParSheetView {
  return {
    id: record.id,
    name: record.name,
    version: record.version,
    status: record.status,
    drawMode: record.drawMode,
    rtp: Number(record.rtp),
    certifiedRtp: Number(record.certifiedRtp),
    hitFrequency: record.hitFrequency,
    volatility: record.volatility,
    createdAt: record.createdAt.toISOString(),
    approvedAt: record.approvedAt?.toISOString() ?? null,
    retiredAt: record.retiredAt?.toISOString() ?? null,
  };
}

export function presentParSheetWithDocument(record: ParSheetRecord): ParSheetWithDocumentView {
  // A JSON object: the upload was checked against the PAR sheet schema before it was stored.
  return { ...presentParSheet(record), document: record.document as Record<string, unknown> };
}

export function presentOperatorParSheet(record: ParSheetRecord): OperatorParSheetView {
  return { ...presentParSheet(record), partnerId: record.partnerId, environment: record.environment };
}
