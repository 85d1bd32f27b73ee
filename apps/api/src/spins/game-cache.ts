import { type Database, findGameSpinSettings, type GameSpinSettings } from "@outcomes/db";
import { setBounded } from "../bounded-map.js";

/** What a spin needs to know about its game: its settings, the large-win threshold always set. */
export interface GameRules extends Omit<GameSpinSettings, "largeWinThresholdMicros"> {
  /** The game's own threshold, or the deployment's default when it sets none. */
  largeWinThresholdMicros: number;
}

/**
 * An entry lives at most this long. A PATCH forgets the game in its own process before it answers
 * and tells the others (`game:<id>`, see invalidation.ts); a lost message only delays them this long.
 */
const TTL_MS = 1000;
/** Unknown ids are cached too (as null); the map is bounded so random ids cannot grow it forever. */
const MAX_ENTRIES = 10_000;
/** `games.id` is an int4: anything outside cannot exist, and must not reach Postgres as a parameter. */
const MAX_GAME_ID = 2_147_483_647;

/**
 * Games are read on every spin; this keeps one look-up per game, process and second. Concurrent
 * misses share one query (the promise is cached), so an expiry never stampedes Postgres.
 */
export class GameCache {
  private readonly entries = new Map<number, { loadedAt: number; rules: Promise<GameRules | null> }>();

  constructor(
    private readonly db: Database,
    private readonly defaultLargeWinThresholdMicros: number,
  ) {}

  /** Drops the game's entry, including a look-up still in flight, so the next spin reads it anew. */
  forget(gameId: number): void {
    this.entries.delete(gameId);
  }

  get(gameId: number, now = Date.now()): Promise<GameRules | null> {
    if (!Number.isSafeInteger(gameId) || gameId < 1 || gameId > MAX_GAME_ID) return Promise.resolve(null);
    const cached = this.entries.get(gameId);
    if (cached && now - cached.loadedAt < TTL_MS) return cached.rules;
    const rules = this.load(gameId);
    const entry = { loadedAt: now, rules };
    setBounded(this.entries, gameId, entry, MAX_ENTRIES);
    // A failed read is not remembered: the next spin tries again.
    rules.catch(() => {
      if (this.entries.get(gameId) === entry) this.entries.delete(gameId);
    });
    return rules;
  }

  private async load(gameId: number): Promise<GameRules | null> {
    const row = await findGameSpinSettings(this.db, gameId);
    if (!row) return null;
    return { ...row, largeWinThresholdMicros: row.largeWinThresholdMicros ?? this.defaultLargeWinThresholdMicros };
  }
}
