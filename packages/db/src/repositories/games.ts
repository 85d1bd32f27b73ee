import {
  type DrawMode,
  type Environment,
  ErrorCode,
  formatScaledDecimal,
  largestMultiplierMillionths,
  maxWagerWithinMicros,
  type ParSheetDocument,
  ServiceError,
  spinCeilingOf,
} from "@outcomes/core";
import { and, asc, count, eq, sql } from "drizzle-orm";
import type { Database, Executor, Transaction } from "../client.js";
import { games } from "../schema/games.js";
import { parSheets } from "../schema/par-sheets.js";
import { partners } from "../schema/partners.js";
import type { PageWindow } from "./paging.js";
import type { SheetOwner } from "./par-sheets.js";
import { isUniqueViolation } from "./pg-errors.js";

export type GameRecord = typeof games.$inferSelect;

export interface GameOwner {
  partnerId: string;
  environment: Environment;
}

/** Wager bounds and threshold in micro-USD; null means "none" (min) or "the default" (threshold). */
export interface GameLimits {
  minWagerMicros: number | null;
  maxWagerMicros: number;
  largeWinThresholdMicros: number | null;
}

/** A game with the figures of its sheet it is shown with. */
export type GameWithRtp = GameRecord & { rtp: string; drawMode: DrawMode };

/** min < max, or 400 KS-4109. */
function assertWagerBounds(limits: Pick<GameLimits, "minWagerMicros" | "maxWagerMicros">): void {
  if (limits.minWagerMicros !== null && limits.minWagerMicros >= limits.maxWagerMicros) {
    throw new ServiceError(ErrorCode.WagerBoundsInverted, {
      details: [{ path: "minWagerUsd", message: "must be less than maxWagerUsd" }],
    });
  }
}

/** The sheet's tiers as uploaded (the text JSON.parse'd as at upload, so multipliers are the same numbers). */
const prizeTiersText = sql<string>`(${parSheets.document} -> 'prizeTiers')::text`;

/**
 * maxWager and maxWager × the sheet's largest multiplier within the partner's spin ceiling (at most
 * 2^53 − 1 micro-USD, so payouts, balances and their sums stay exact JS integers), or 400 KS-4101
 * naming the largest maxWagerUsd allowed and the ceiling.
 */
function assertWithinSpinCeiling(prizeTiersJson: string, maxWagerMicros: number, ceilingMicros: number): void {
  const prizeTiers = JSON.parse(prizeTiersJson) as ParSheetDocument["prizeTiers"];
  const multiplier = largestMultiplierMillionths({ prizeTiers });
  const bound = maxWagerWithinMicros(multiplier, ceilingMicros);
  if (maxWagerMicros <= bound) return;
  const message =
    `must be at most ${formatScaledDecimal(bound)} with this PAR sheet: one spin may stake or pay at most ` +
    `${formatScaledDecimal(ceilingMicros)} USD (the partner's spin ceiling), and the sheet's largest multiplier ` +
    `is ${formatScaledDecimal(multiplier)}×`;
  throw new ServiceError(ErrorCode.InvalidRequest, {
    message: `maxWagerUsd ${message}`,
    details: [{ path: "maxWagerUsd", message }],
  });
}

/** The owner's spin ceiling, share-locked until the caller's transaction ends (an operator's change waits for it). */
async function spinCeilingFor(tx: Executor, owner: GameOwner): Promise<number> {
  const [partner] = await tx
    .select({ spinCeilingMicros: partners.spinCeilingMicros })
    .from(partners)
    .where(eq(partners.id, owner.partnerId))
    .for("share");
  if (!partner) throw new Error(`partner ${owner.partnerId} not found`);
  return spinCeilingOf(partner);
}

/**
 * Registers a game from the owner's ACTIVE sheet, in the caller's transaction (the keyed-create
 * concern's). The sheet row is share-locked until the insert commits, so an operator retiring it
 * concurrently either happens before (KS-4208) or after. The name is unique per partner and
 * environment (the unique index decides: 409 KS-4108).
 */
export async function createGame(
  tx: Transaction,
  owner: GameOwner,
  input: GameLimits & { parSheetId: string; name: string },
): Promise<GameWithRtp> {
  assertWagerBounds(input);
  const [sheet] = await tx
    .select({
      status: parSheets.status,
      rtp: parSheets.rtp,
      drawMode: parSheets.drawMode,
      prizeTiers: prizeTiersText,
    })
    .from(parSheets)
    .where(ownedSheet(owner, input.parSheetId))
    .for("share")
    .limit(1);
  if (!sheet) throw new ServiceError(ErrorCode.ParSheetNotFound);
  if (sheet.status !== "ACTIVE") {
    throw new ServiceError(ErrorCode.ParSheetNotActive, {
      message: `PAR sheet is not active (status ${sheet.status})`,
    });
  }
  assertWithinSpinCeiling(sheet.prizeTiers, input.maxWagerMicros, await spinCeilingFor(tx, owner));
  try {
    const [game] = await tx
      .insert(games)
      .values({ ...owner, ...input })
      .returning();
    if (!game) throw new Error("game insert returned no row");
    return { ...game, rtp: sheet.rtp, drawMode: sheet.drawMode };
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new ServiceError(ErrorCode.GameNameTaken, {
        details: [{ path: "name", message: `"${input.name}" is already used` }],
      });
    }
    throw error;
  }
}

export async function listGames(
  db: Database,
  owner: GameOwner,
  page: PageWindow,
): Promise<{ rows: GameWithRtp[]; total: number }> {
  const mine = and(eq(games.partnerId, owner.partnerId), eq(games.environment, owner.environment));
  const [rows, [totals]] = await Promise.all([
    db
      .select({ game: games, rtp: parSheets.rtp, drawMode: parSheets.drawMode })
      .from(games)
      .innerJoin(parSheets, eq(parSheets.id, games.parSheetId))
      .where(mine)
      .orderBy(asc(games.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(games).where(mine),
  ]);
  return {
    rows: rows.map((row) => ({ ...row.game, rtp: row.rtp, drawMode: row.drawMode })),
    total: totals?.total ?? 0,
  };
}

/** The owner's game, or 403 KS-4006 (unknown, another partner's, another environment's). */
export async function requireOwnGame(db: Executor, owner: GameOwner, gameId: number): Promise<GameWithRtp> {
  const [row] = await db
    .select({ game: games, rtp: parSheets.rtp, drawMode: parSheets.drawMode })
    .from(games)
    .innerJoin(parSheets, eq(parSheets.id, games.parSheetId))
    .where(and(eq(games.id, gameId), eq(games.partnerId, owner.partnerId), eq(games.environment, owner.environment)))
    .limit(1);
  if (!row) throw new ServiceError(ErrorCode.GameNotOwned);
  return { ...row.game, rtp: row.rtp, drawMode: row.drawMode };
}

/**
 * Applies a partial update under the game's row lock: the bounds are checked after merging with
 * the stored ones, so two concurrent PATCHes cannot leave min ≥ max.
 */
export async function updateGame(
  db: Database,
  owner: GameOwner,
  gameId: number,
  patch: Partial<GameLimits> & { isActive?: boolean },
): Promise<GameWithRtp> {
  return db.transaction(async (tx) => {
    const [locked] = await tx
      .select({ id: games.id })
      .from(games)
      .where(and(eq(games.id, gameId), eq(games.partnerId, owner.partnerId), eq(games.environment, owner.environment)))
      .for("no key update");
    if (!locked) throw new ServiceError(ErrorCode.GameNotOwned);
    // Read after the lock: the statement sees any PATCH committed while we waited.
    const current = await requireOwnGame(tx, owner, gameId);
    const merged = {
      minWagerMicros: patch.minWagerMicros !== undefined ? patch.minWagerMicros : current.minWagerMicros,
      maxWagerMicros: patch.maxWagerMicros ?? current.maxWagerMicros,
    };
    assertWagerBounds(merged);
    if (patch.maxWagerMicros !== undefined) {
      const [sheet] = await tx
        .select({ prizeTiers: prizeTiersText })
        .from(parSheets)
        .where(eq(parSheets.id, current.parSheetId));
      if (!sheet) throw new Error(`game ${gameId} has no PAR sheet`);
      assertWithinSpinCeiling(sheet.prizeTiers, patch.maxWagerMicros, await spinCeilingFor(tx, owner));
    }
    if (Object.keys(patch).length === 0) return current;
    const [game] = await tx.update(games).set(patch).where(eq(games.id, gameId)).returning();
    if (!game) throw new ServiceError(ErrorCode.GameNotOwned);
    return { ...game, rtp: current.rtp, drawMode: current.drawMode };
  });
}

/** Any game by id (operator look-ups), or null. */
export async function findGame(db: Executor, gameId: number): Promise<GameWithRtp | null> {
  const [row] = await db
    .select({ game: games, rtp: parSheets.rtp, drawMode: parSheets.drawMode })
    .from(games)
    .innerJoin(parSheets, eq(parSheets.id, games.parSheetId))
    .where(eq(games.id, gameId))
    .limit(1);
  return row ? { ...row.game, rtp: row.rtp, drawMode: row.drawMode } : null;
}

function ownedSheet(owner: SheetOwner, id: string) {
  return and(
    eq(parSheets.id, id),
    eq(parSheets.partnerId, owner.partnerId),
    eq(parSheets.environment, owner.environment),
  );
}

/** What a spin reads of its game (the API keeps it a second per process: game-cache.ts). */
export interface GameSpinSettings {
  id: number;
  partnerId: string;
  environment: Environment;
  parSheetId: string;
  isActive: boolean;
  minWagerMicros: number | null;
  maxWagerMicros: number;
  /** Null: the deployment's default applies. */
  largeWinThresholdMicros: number | null;
}

/** The game's spin settings, or null when there is no such game. */
export async function findGameSpinSettings(db: Executor, gameId: number): Promise<GameSpinSettings | null> {
  const [row] = await db
    .select({
      id: games.id,
      partnerId: games.partnerId,
      environment: games.environment,
      parSheetId: games.parSheetId,
      isActive: games.isActive,
      minWagerMicros: games.minWagerMicros,
      maxWagerMicros: games.maxWagerMicros,
      largeWinThresholdMicros: games.largeWinThresholdMicros,
    })
    .from(games)
    .where(eq(games.id, gameId))
    .limit(1);
  return row ?? null;
}
