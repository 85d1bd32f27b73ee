import type { Environment } from "@outcomes/core";
import type { Database } from "../client.js";
import type { players } from "../schema/players.js";
import { sqlClientOf } from "./sql-client.js";

export type PlayerRecord = Pick<
  typeof players.$inferSelect,
  | "id"
  | "partnerId"
  | "environment"
  | "externalId"
  | "balanceMicros"
  | "totalSpins"
  | "totalWageredMicros"
  | "totalPaidMicros"
  | "createdAt"
  | "updatedAt"
>;

/** A player as its spin listing needs it: also how many of its spins were voided. */
export type ListedPlayer = PlayerRecord & { voidedSpins: number };

type Owner = { partnerId: string; environment: Environment };

/** postgres.js answers int8 as text, and timestamps as text on a drizzle-wrapped client. */
type PlayerRow = {
  id: string;
  balance_micros: string;
  total_spins: number;
  total_wagered_micros: string;
  total_paid_micros: string;
  created_at: string;
  updated_at: string;
};
const PLAYER_COLUMNS =
  "id, balance_micros, total_spins, total_wagered_micros, total_paid_micros, created_at, updated_at";
const BY_EXTERNAL_ID = "from players where partner_id = $1 and environment = $2 and external_id = $3";
const PLAYER = `select ${PLAYER_COLUMNS} ${BY_EXTERNAL_ID}`;
/** A void removes its spin from `total_spins` and adds its row in one transaction: one snapshot sees both. */
const LISTED_PLAYER = `
  select ${PLAYER_COLUMNS}, (select count(*)::int from spin_voids v where v.player_id = players.id) as voided_spins
  ${BY_EXTERNAL_ID}`;

function playerOf(owner: Owner, externalId: string, row: PlayerRow): PlayerRecord {
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

/**
 * A player of one partner in one environment, by the partner's own id; null when it never spun there.
 * Prepared, read through postgres.js and mapped here (it precedes every player read).
 */
export async function findPlayer(db: Database, owner: Owner, externalId: string): Promise<PlayerRecord | null> {
  const [row] = await sqlClientOf(db).unsafe<PlayerRow[]>(PLAYER, [owner.partnerId, owner.environment, externalId], {
    prepare: true,
  });
  return row ? playerOf(owner, externalId, row) : null;
}

/** `findPlayer`, and how many of the player's spins were voided, read in the same statement. */
export async function findListedPlayer(db: Database, owner: Owner, externalId: string): Promise<ListedPlayer | null> {
  const [row] = await sqlClientOf(db).unsafe<(PlayerRow & { voided_spins: number })[]>(
    LISTED_PLAYER,
    [owner.partnerId, owner.environment, externalId],
    { prepare: true },
  );
  return row ? { ...playerOf(owner, externalId, row), voidedSpins: row.voided_spins } : null;
}
