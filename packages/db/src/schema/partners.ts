import { boolean, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt, micros } from "./columns.js";

export const partners = pgTable("partners", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  contactEmail: text("contact_email"),
  isActive: boolean("is_active").notNull().default(true),
  /**
   * The most one spin of this partner's games may stake or pay, in micro-USD (a game's maxWager and
   * maxWager × its sheet's largest multiplier stay within it); null: the default, 1,000,000 USD.
   */
  spinCeilingMicros: micros("spin_ceiling_micros"),
  /** The jurisdiction profile of the partner's players without one of their own (CONTRACT §16). */
  defaultJurisdiction: text("default_jurisdiction").notNull().default("NONE"),
  createdAt: createdAt(),
});

/** The column of a record a partner owns: its partner, a foreign key to `partners`. */
export const ownerPartnerId = () =>
  text("partner_id")
    .notNull()
    .references(() => partners.id);
