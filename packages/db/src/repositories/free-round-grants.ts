import { eq } from "drizzle-orm";
import type { Executor } from "../client.js";
import { freeRoundGrants } from "../schema/free-rounds.js";

// Free-round grants (CONTRACT §14, docs/free-rounds.md).

export type FreeRoundGrantRecord = typeof freeRoundGrants.$inferSelect;

/** A grant by its id, whoever owns it (callers check the owner). */
export async function findFreeRoundGrant(db: Executor, grantId: string): Promise<FreeRoundGrantRecord | null> {
  const [row] = await db.select().from(freeRoundGrants).where(eq(freeRoundGrants.id, grantId));
  return row ?? null;
}
