import { index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { at, createdAt, environment } from "./columns.js";
import { ownerPartnerId } from "./partners.js";

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    partnerId: ownerPartnerId(),
    environment: environment(),
    /** SHA-256 hex of the whole key; the key itself is never stored. */
    keyHash: text("key_hash").notNull().unique(),
    /** Display prefix, e.g. `ks_sandbox_AbC1`, to recognise a key in listings. */
    prefix: text("prefix").notNull(),
    expiresAt: at("expires_at").notNull(),
    revokedAt: at("revoked_at"),
    lastUsedAt: at("last_used_at"),
    /** Set on the old key when it was rotated into this one. */
    rotatedToKeyId: text("rotated_to_key_id"),
    createdAt: createdAt(),
  },
  (table) => [index("api_keys_partner_idx").on(table.partnerId, table.createdAt)],
);

/** One row per key and threshold (30, 7, 1 days): the primary key makes each notice happen once. */
export const apiKeyExpiryNotices = pgTable(
  "api_key_expiry_notices",
  {
    apiKeyId: text("api_key_id")
      .notNull()
      .references(() => apiKeys.id),
    daysBeforeExpiry: integer("days_before_expiry").notNull(),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.apiKeyId, table.daysBeforeExpiry] })],
);
