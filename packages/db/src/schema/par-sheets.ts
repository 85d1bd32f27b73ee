import { DRAW_MODES, PAR_SHEET_STATUSES } from "@outcomes/core";
import { doublePrecision, index, json, pgTable, text } from "drizzle-orm/pg-core";
import { at, createdAt, environment } from "./columns.js";
import { ownerPartnerId } from "./partners.js";

export const parSheets = pgTable(
  "par_sheets",
  {
    id: text("id").primaryKey(),
    partnerId: ownerPartnerId(),
    environment: environment(),
    name: text("name").notNull(),
    version: text("version").notNull(),
    status: text("status", { enum: PAR_SHEET_STATUSES }).notNull(),
    drawMode: text("draw_mode", { enum: DRAW_MODES }).notNull(),
    /** The document as uploaded (json, not jsonb, keeps it byte for byte). */
    document: json("document").notNull(),
    /** Exact RTP as a decimal string (from the rational), and the reported figures. */
    rtp: text("rtp").notNull(),
    certifiedRtp: text("certified_rtp").notNull(),
    hitFrequency: doublePrecision("hit_frequency").notNull(),
    volatility: doublePrecision("volatility").notNull(),
    approvedAt: at("approved_at"),
    retiredAt: at("retired_at"),
    createdAt: createdAt(),
  },
  (table) => [index("par_sheets_partner_idx").on(table.partnerId, table.environment, table.createdAt)],
);
