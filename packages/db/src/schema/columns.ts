import { ENVIRONMENTS } from "@outcomes/core";
import { bigint, text, timestamp } from "drizzle-orm/pg-core";

/** Money is integer micro-USD; JS numbers hold it exactly up to ~9 billion USD per value. */
export const micros = (name: string) => bigint(name, { mode: "number" });
export const environment = () => text("environment", { enum: ENVIRONMENTS }).notNull();
export const createdAt = () => timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow();
export const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });
