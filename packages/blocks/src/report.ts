import { type DrawMode, ErrorCode, ServiceError } from "@outcomes/core";
import { type Database, findGame, reserveFigures } from "@outcomes/db";
import type { RedisClient, RedisKeys } from "@outcomes/queue";

/** A game's outcome reserve as operators see it (operator API `GET /games/{gameId}/reserve`, CLI). */
export interface ReserveReport {
  gameId: number;
  drawMode: DrawMode;
  readyBlocks: number;
  servingBlocks: number;
  exhaustedBlocks: number;
  remainingOutcomes: number;
  queuedOutcomes: number;
  lastSequence: number;
  blockSize: number;
  minReadyBlocks: number;
  targetReadyBlocks: number;
  lowReserve: boolean;
}

export interface ReserveReportSettings {
  BLOCK_SIZE: number;
  MIN_READY_BLOCKS: number;
  TARGET_READY_BLOCKS: number;
}

/** Postgres figures (the record) beside the Redis list's length (the serving queue); unknown game 404 KS-4201. */
export async function reserveReport(
  db: Database,
  redis: RedisClient,
  keys: RedisKeys,
  settings: ReserveReportSettings,
  gameId: number,
): Promise<ReserveReport> {
  const game = await findGame(db, gameId);
  if (!game) throw new ServiceError(ErrorCode.GameNotFound);
  const [figures, queuedOutcomes] = await Promise.all([
    reserveFigures(db, gameId),
    redis.llen(keys.outcomeQueue(game)),
  ]);
  return {
    gameId,
    drawMode: game.drawMode,
    readyBlocks: figures.readyBlocks,
    servingBlocks: figures.servingBlocks,
    exhaustedBlocks: figures.exhaustedBlocks,
    remainingOutcomes: figures.remainingOutcomes,
    queuedOutcomes,
    lastSequence: figures.lastSequence,
    blockSize: settings.BLOCK_SIZE,
    minReadyBlocks: settings.MIN_READY_BLOCKS,
    targetReadyBlocks: settings.TARGET_READY_BLOCKS,
    lowReserve: figures.readyBlocks < settings.MIN_READY_BLOCKS,
  };
}
