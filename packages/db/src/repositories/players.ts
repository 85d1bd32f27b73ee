import type { Environment } from "@outcomes/core";
import type { Database } from "../client.js";
import type { players } from "../schema/players.js";
import { sqlClientOf } from "./sql-client.js";

export type PlayerRecord = typeof players.$inferSelect;

/** postgres.js answers int8 as text, and timestamps as text on a drizzle-wrapped client. */
const PLAYER_BY_EXTERNAL_ID = `
  select id, balance_micros, total_spins, total_wagered_micros, total_paid_micros, created_at, updated_at
  from players where partner_id = $1 and environment = $2 and external_id = $3`;

/**
 * A player of one partner in one environment, by the partner's own id; null when it never spun there.
 * Prepared, read through postgres.js and mapped here (it precedes every player read).
 */
export async function findPlayer(
  db: Database,
  owner: { partnerId: string; environment: Environment },
  externalId: string,
): Promise<PlayerRecord | null> {
  const [row] = await sqlClientOf(db).unsafe<
    {
      id: string;
      balance_micros: string;
      total_spins: number;
      total_wagered_micros: string;
      total_paid_micros: string;
      created_at: string;
      updated_at: string;
    }[]
  >(PLAYER_BY_EXTERNAL_ID, [owner.partnerId, owner.environment, externalId], { prepare: true });
  if (!row) return null;
  return {
    id: Number(row.id),
    partnerId: owner.partnerId,
    environment: owner.environment,
    externalId,
    balanceMicros: Number(row.balance_micros),
    totalSpins: row.total_spins,
    totalWageredMicros: Number(row.total_wagered_micros),
    totalPaidMicros: Number(row.total_paid_micros),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
