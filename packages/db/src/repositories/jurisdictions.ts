import { asc, eq, sql } from "drizzle-orm";
import type { Database } from "../client.js";
import { jurisdictions } from "../schema/jurisdictions.js";

export type JurisdictionRecord = typeof jurisdictions.$inferSelect;

/** A profile's figures as an operator sets them. */
export interface JurisdictionFigures {
  name: string;
  minRoundMs: number;
  maxWagerMicros: number | null;
  sessionReminderMinutes: number | null;
}

/** Every profile, built-in and the operators', by code. */
export function listJurisdictions(db: Database): Promise<JurisdictionRecord[]> {
  return db.select().from(jurisdictions).orderBy(asc(jurisdictions.code));
}

export async function findJurisdiction(db: Database, code: string): Promise<JurisdictionRecord | null> {
  const [row] = await db.select().from(jurisdictions).where(eq(jurisdictions.code, code)).limit(1);
  return row ?? null;
}

/** Defines a profile or changes its figures (a built-in stays built in). */
export async function putJurisdiction(
  db: Database,
  code: string,
  figures: JurisdictionFigures,
): Promise<JurisdictionRecord> {
  const [row] = await db
    .insert(jurisdictions)
    .values({ code, ...figures })
    .onConflictDoUpdate({ target: jurisdictions.code, set: { ...figures, updatedAt: sql`now()` } })
    .returning();
  return row!;
}
