import { createHash } from "node:crypto";
import {
  type Environment,
  encodeQueuedOutcome,
  generateApiKey,
  newId,
  type QueuedOutcome,
  usdToMicros,
} from "@outcomes/core";
import { apiKeys, blocks, games } from "@outcomes/db";
import { eq, sql } from "drizzle-orm";
import type postgres from "postgres";
import { expect, vi } from "vitest";
import type { TestApi } from "./api.js";
import { insertFixtureParSheet } from "./spin-rows.js";

/**
 * Test fixture for the spin path: rows inserted directly (no PAR math, no worker) and outcomes
 * the test chooses, pushed to the game's queue, so every payout and balance is known exactly.
 */

/** An outcome by tier and multiplier (a decimal string or number, e.g. "2.5"). */
export type OutcomeSpec = [tier: string, multiplier: number | string];

export interface FixtureGame {
  gameId: number;
  partnerId: string;
  environment: Environment;
}

function micros(usd: number | string): number {
  const value = usdToMicros(Number(usd));
  if (value === null) throw new Error(`not a 6-decimal amount: ${usd}`);
  return value;
}

/** A 3×3 window whose payline (middle row) names the tier, so assertions can read it back. */
export function windowFor(tier: string): string[][] {
  return [0, 1, 2].map((reel) => [`TOP${reel}`, tier === "T0" ? `MISS${reel}` : `WIN_${tier}`, `BOTTOM${reel}`]);
}

export interface FixtureGameOptions {
  environment?: Environment;
  minWagerUsd?: number | null;
  maxWagerUsd?: number;
  largeWinThresholdUsd?: number | null;
  isActive?: boolean;
}

export async function createGame(
  api: TestApi,
  partnerId: string,
  options: FixtureGameOptions = {},
): Promise<FixtureGame> {
  const environment = options.environment ?? "sandbox";
  const { db } = api.database;
  const parSheetId = await insertFixtureParSheet(db, { partnerId, environment, rtp: "0.96" });
  const [game] = await db
    .insert(games)
    .values({
      partnerId,
      environment,
      parSheetId,
      name: newId("game"),
      minWagerMicros: options.minWagerUsd === null ? null : micros(options.minWagerUsd ?? 0.1),
      maxWagerMicros: micros(options.maxWagerUsd ?? 100),
      largeWinThresholdMicros: options.largeWinThresholdUsd == null ? null : micros(options.largeWinThresholdUsd),
      isActive: options.isActive ?? true,
    })
    .returning({ id: games.id });
  if (!game) throw new Error("game insert returned nothing");
  return { gameId: game.id, partnerId, environment };
}

/** One partner, its sandbox key and one fixture game of it: where most spin-path files start. */
export async function partnerWithGame(
  api: TestApi,
  options: FixtureGameOptions = {},
): Promise<{ apiKey: string; game: FixtureGame }> {
  const partner = await api.createPartner();
  return { apiKey: partner.apiKey, game: await createGame(api, partner.partnerId, options) };
}

/**
 * Seals a block of the given outcomes (status ready) and RPUSHes them, in order, to the game's
 * queue. Returns the queued outcomes exactly as pushed.
 */
export async function addBlock(api: TestApi, gameId: number, specs: OutcomeSpec[]): Promise<QueuedOutcome[]> {
  const { db } = api.database;
  const [next] = await db
    .select({ sequence: sql<number>`coalesce(max(${blocks.sequence}), 0)::int + 1` })
    .from(blocks)
    .where(eq(blocks.gameId, gameId));
  const entries = Buffer.from(JSON.stringify(specs)); // a legacy (JSON text) block: what these fixtures need
  const [block] = await db
    .insert(blocks)
    .values({
      gameId,
      sequence: next?.sequence ?? 1,
      size: specs.length,
      entries,
      commitment: createHash("sha256").update(entries).digest("hex"),
    })
    .returning({ id: blocks.id });
  if (!block) throw new Error("block insert returned nothing");
  const outcomes = specs.map(([tier, multiplier], index) => ({
    blockId: block.id,
    index,
    tier,
    multiplierMillionths: micros(multiplier),
    reelSymbols: windowFor(tier),
  }));
  if (outcomes.length > 0) {
    await api.deps.redis.rpush(
      api.deps.keys.outcomeQueue(await api.gameOwner(gameId)),
      ...outcomes.map(encodeQueuedOutcome),
    );
  }
  return outcomes;
}

export async function queueLength(api: TestApi, gameId: number): Promise<number> {
  return api.deps.redis.llen(api.deps.keys.outcomeQueue(await api.gameOwner(gameId)));
}

/** A game's outcome queue, every item as pushed. */
export async function queueItems(api: TestApi, gameId: number): Promise<string[]> {
  return api.deps.redis.lrange(api.deps.keys.outcomeQueue(await api.gameOwner(gameId)), 0, -1);
}

/** A second key for an existing partner (e.g. the production key of a sandbox partner). */
export async function issueKey(api: TestApi, partnerId: string, environment: Environment): Promise<string> {
  const generated = generateApiKey(environment);
  await api.database.db.insert(apiKeys).values({
    id: newId("key"),
    partnerId,
    environment,
    keyHash: generated.hash,
    prefix: generated.displayPrefix,
    expiresAt: new Date(Date.now() + 24 * 3600 * 1000),
  });
  return generated.key;
}

/** POST /spins with a JSON body (anything, to test validation) and optional Idempotency-Key. */
export function spin(api: TestApi, apiKey: string, json: unknown, idempotencyKey?: string) {
  return api.request("/api/partner/v1/spins", {
    method: "POST",
    apiKey,
    json,
    headers: idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey },
  });
}

/**
 * Waits until `count` other sessions of this database wait for a lock: a statement the caller's
 * transaction `tx` now blocks (so the test can act while it is held up).
 */
export async function waitForLockWaiters(tx: postgres.TransactionSql, count: number): Promise<void> {
  await vi.waitFor(
    async () => {
      // pg_stat_activity is read once per transaction and kept: without clearing that snapshot, a
      // spin that reaches the lock after the first look is never seen (the loaded machine's case).
      await tx`select pg_stat_clear_snapshot()`;
      const [row] = await tx`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
      expect(row?.n).toBe(count);
    },
    { timeout: 5_000, interval: 20 },
  );
}

/** A spin's answer as reads show it (`GET /spins/{spinId}`, listings): without the session, which only the spin's own answer carries. */
export function asRead<T extends { session?: unknown }>(answer: T): Omit<T, "session"> {
  const { session: _session, ...read } = answer;
  return read;
}
