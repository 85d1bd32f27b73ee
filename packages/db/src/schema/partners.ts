import { boolean, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt } from "./columns.js";

export const partners = pgTable("partners", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  contactEmail: text("contact_email"),
  isActive: boolean("is_active").notNull().default(true),
  createdAt: createdAt(),
});
