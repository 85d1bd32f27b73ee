import { customType, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt } from "./columns.js";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/**
 * Secrets the deployment generates for itself, one per purpose (`name`), written once by whichever
 * process needs one first (`INSERT … ON CONFLICT DO NOTHING`) and read by all, so every API process
 * signs and accepts the same. `replay-links` signs replay links while REPLAY_SECRETS is unset.
 */
export const serviceSecrets = pgTable("service_secrets", {
  name: text("name").primaryKey(),
  secret: bytea("secret").notNull(),
  createdAt: createdAt(),
});
