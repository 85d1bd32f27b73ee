import type { Owner } from "@outcomes/core";
import { and, eq, sql } from "drizzle-orm";
import type { Database, Executor } from "../client.js";
import { spinRefusals } from "../schema/spin-refusals.js";

/** Counts one spin refused by player protection, on the database's UTC day. */
export async function countSpinRefusal(db: Database, owner: Owner, errorCode: string): Promise<void> {
  await db
    .insert(spinRefusals)
    .values({
      partnerId: owner.partnerId,
      environment: owner.environment,
      day: sql`(now() at time zone 'UTC')::date`,
      errorCode,
      refused: 1,
    })
    .onConflictDoUpdate({
      target: [spinRefusals.partnerId, spinRefusals.environment, spinRefusals.day, spinRefusals.errorCode],
      set: { refused: sql`${spinRefusals.refused} + 1` },
    });
}

/** A day's refused spins of one partner and environment, by code. */
export async function refusedSpinsOf(db: Executor, owner: Owner, day: string): Promise<Record<string, number>> {
  const rows = await db
    .select({ errorCode: spinRefusals.errorCode, refused: spinRefusals.refused })
    .from(spinRefusals)
    .where(
      and(
        eq(spinRefusals.partnerId, owner.partnerId),
        eq(spinRefusals.environment, owner.environment),
        eq(spinRefusals.day, day),
      ),
    );
  return Object.fromEntries(rows.map((row) => [row.errorCode, row.refused]));
}

/** Whether two days' refused-spin counts are the same. */
export function sameCounts(a: Record<string, number>, b: Record<string, number>): boolean {
  const codes = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...codes].every((code) => (a[code] ?? 0) === (b[code] ?? 0));
}
