import type { Environment } from "@outcomes/core";
import { and, eq, sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { players } from "../schema/players.js";
import { preparedPerHandle } from "./prepared.js";

export type PlayerRecord = typeof players.$inferSelect;

const playerByExternalId = preparedPerHandle((db) =>
  db
    .select()
    .from(players)
    .where(
      and(
        eq(players.partnerId, sql.placeholder("partnerId")),
        eq(players.environment, sql.placeholder("environment")),
        eq(players.externalId, sql.placeholder("externalId")),
      ),
    )
    .limit(1)
    .prepare("player_by_external_id"),
);

/** A player of one partner in one environment, by the partner's own id; null when it never spun there. */
export async function findPlayer(
  db: Executor,
  owner: { partnerId: string; environment: Environment },
  externalId: string,
): Promise<PlayerRecord | null> {
  const [row] = await playerByExternalId(db).execute({
    partnerId: owner.partnerId,
    environment: owner.environment,
    externalId,
  });
  return row ?? null;
}
