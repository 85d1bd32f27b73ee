import type { Environment } from "@outcomes/core";
import { and, eq } from "drizzle-orm";
import type { Executor } from "../client.js";
import { players } from "../schema/players.js";

export type PlayerRecord = typeof players.$inferSelect;

/** A player of one partner in one environment, by the partner's own id; null when it never spun there. */
export async function findPlayer(
  db: Executor,
  owner: { partnerId: string; environment: Environment },
  externalId: string,
): Promise<PlayerRecord | null> {
  const [row] = await db
    .select()
    .from(players)
    .where(
      and(
        eq(players.partnerId, owner.partnerId),
        eq(players.environment, owner.environment),
        eq(players.externalId, externalId),
      ),
    )
    .limit(1);
  return row ?? null;
}
