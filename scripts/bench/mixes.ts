import { createFreeRoundGrant, createGame, type Database, jurisdictions, partners } from "@outcomes/db";
import { eq } from "drizzle-orm";
import { cpuOfPids, cpuSince } from "./cpu.js";
import type { RequestSpec } from "./http-client.js";
import { type LoadResult, runLoad } from "./load.js";
import type { BenchSeed } from "./seed.js";

/**
 * What partners send besides plain spins, each kind a closed-loop run of its own with the same
 * clients, in this order every round: plain spins first (the base of the round's ratios), spins
 * with a fresh `Idempotency-Key` each, forced top-tier sandbox spins each raising a large-win event,
 * free-round spins (each uses a round of a grant in its own statement), plain spins of a partner
 * whose every player is checked by player protection (`protectEveryPlayer`), then the reads (they list what the spins wrote): a player's spins (20 rows), a spin's replay
 * page (HTML, no API key), the event log (100 rows), a game's blocks (20 rows) and `/metrics`.
 */
export const MIX_KINDS = [
  "spins",
  "keyedSpins",
  "largeWinSpins",
  "freeRoundSpins",
  "protectedSpins",
  "playerSpins",
  "replayPage",
  "eventLog",
  "blocks",
  "metrics",
] as const;
export type MixKind = (typeof MIX_KINDS)[number];

/** The kinds that are spins (each 200 one spin row). */
export const SPIN_KINDS: readonly MixKind[] = [
  "spins",
  "keyedSpins",
  "largeWinSpins",
  "freeRoundSpins",
  "protectedSpins",
];

const WAGER_USD = 1;
/** The sample sheet's top tier pays 1,000 × the wager. */
const TOP_TIER = { tier: "T6", multiplier: 1000 };

/**
 * A sandbox game of the seeded sheet whose large-win threshold is exactly a top-tier payout of the
 * mix's wager, so every forced top-tier spin raises a `spin.large_win` event. It has no blocks:
 * forced spins take no outcome.
 */
export async function createLargeWinGame(db: Database, seeded: BenchSeed): Promise<number> {
  const game = await db.transaction((tx) =>
    createGame(
      tx,
      { partnerId: seeded.partnerId, environment: "sandbox" },
      {
        parSheetId: seeded.parSheetId,
        name: "Bench large wins",
        minWagerMicros: null,
        maxWagerMicros: 100_000_000,
        largeWinThresholdMicros: WAGER_USD * TOP_TIER.multiplier * 1_000_000,
      },
    ),
  );
  return game.id;
}

/** A grant holds at most 1,000 players: the free-round mix spins for the first of them. */
const FREE_ROUND_PLAYERS = 1000;

/**
 * A free-round grant on the bench game for the mix's players, 1,000 rounds each (far more than a
 * run uses), at the mix's wager.
 */
export async function createBenchGrant(db: Database, seeded: BenchSeed, players: number): Promise<string> {
  const grant = await db.transaction((tx) =>
    createFreeRoundGrant(
      tx,
      { partnerId: seeded.partnerId, environment: "sandbox" },
      {
        gameId: seeded.gameId,
        playerIds: Array.from({ length: Math.min(players, FREE_ROUND_PLAYERS) }, (_, n) => `player-${n}`),
        rounds: 1000,
        wagerMicros: WAGER_USD * 1_000_000,
        expiresAt: new Date(Date.now() + 86_400_000),
      },
    ),
  );
  return grant.id;
}

export interface MixSetup {
  apiUrl: string;
  /** Where the API serves `/metrics` (API_METRICS_PORT). */
  metricsUrl: string;
  apiKey: string;
  gameId: number;
  largeWinGameId: number;
  freeRoundsId: string;
  players: number;
  /** The partner whose players are all checked, and its game. */
  protectedSpins: { apiKey: string; gameId: number };
  /** A replay page's path (`/replay/{token}`) of one of the seeded spins. */
  replayPath: string;
  /** Unique to the bench run and the load: makes each keyed spin's key fresh. */
  keyPrefix: string;
}

/** The request a run of `kind` repeats (`{n}`: a player, `{seq}`: the request's number). */
export function mixRequest(kind: MixKind, setup: MixSetup): RequestSpec {
  const partner = `${setup.apiUrl}/api/partner/v1`;
  const key = { "x-api-key": setup.apiKey };
  const spin = (gameId: number, extra: Record<string, unknown> = {}) => ({
    url: `${partner}/spins`,
    method: "POST" as const,
    headers: { "content-type": "application/json", ...key },
    body: JSON.stringify({ gameId, playerId: "player-{n}", wagerUsd: WAGER_USD, ...extra }),
    distinct: setup.players,
  });
  const read = (path: string) => ({ url: `${partner}${path}`, method: "GET" as const, headers: key });
  switch (kind) {
    case "spins":
      return spin(setup.gameId);
    case "keyedSpins": {
      const plain = spin(setup.gameId);
      return { ...plain, headers: { ...plain.headers, "Idempotency-Key": `${setup.keyPrefix}-{seq}` } };
    }
    case "largeWinSpins":
      return spin(setup.largeWinGameId, { forceTier: TOP_TIER.tier });
    case "freeRoundSpins": {
      const free = spin(setup.gameId, { freeRoundsId: setup.freeRoundsId });
      return { ...free, distinct: Math.min(setup.players, FREE_ROUND_PLAYERS) };
    }
    case "protectedSpins": {
      const plain = spin(setup.protectedSpins.gameId);
      return { ...plain, headers: { ...plain.headers, "x-api-key": setup.protectedSpins.apiKey } };
    }
    case "playerSpins":
      return { ...read("/players/player-{n}/spins"), distinct: setup.players };
    case "replayPage":
      return { url: `${setup.apiUrl}${setup.replayPath}`, method: "GET", headers: {} };
    case "eventLog":
      return read("/events?limit=100");
    case "blocks":
      return read(`/games/${setup.gameId}/blocks`);
    case "metrics":
      return { url: `${setup.metricsUrl}/metrics`, method: "GET", headers: {} };
  }
}

export interface MixRun {
  result: LoadResult;
  /** CPU per request over the run, µs, of the API and of its Postgres backends (null where /proc cannot be read). */
  apiCpuUs: number | null;
  postgresCpuUs: number | null;
}
export type MixRound = { loadAverage: string; runs: Record<MixKind, MixRun> };

/**
 * Each kind once for `warmupMs` (as the spins are warmed up: JIT, prepared statements), then
 * `rounds` rounds of every kind in `MIX_KINDS` order, each run `durationMs` at `connections`;
 * `apiCpuMs` reads the CPU time the API used so far, `postgresPids` lists its Postgres backends.
 * None with `rounds` 0.
 */
export async function runMixRounds(options: {
  rounds: number;
  connections: number;
  warmupMs: number;
  durationMs: number;
  request: (kind: MixKind, run: string) => RequestSpec;
  apiCpuMs: () => number | null;
  postgresPids: () => Promise<number[]>;
  loadAverage: () => string;
  step: (what: string) => void;
}): Promise<{ warm: Partial<Record<MixKind, LoadResult>>; rounds: MixRound[] }> {
  const load = (kind: MixKind, run: string, durationMs: number) =>
    runLoad({ ...options.request(kind, run), connections: options.connections, durationMs });
  const warm: Partial<Record<MixKind, LoadResult>> = {};
  const rounds: MixRound[] = [];
  if (options.rounds === 0) return { warm, rounds };
  options.step(`mixes warm-up, ${options.connections} connections`);
  for (const kind of MIX_KINDS) warm[kind] = await load(kind, "warm", options.warmupMs);
  for (let i = 0; i < options.rounds; i++) {
    const loadAverage = options.loadAverage();
    const runs = {} as Record<MixKind, MixRun>;
    for (const kind of MIX_KINDS) {
      options.step(`mix round ${i + 1} of ${options.rounds}, ${options.connections} connections: ${kind}`);
      // Listed again for every run: the pool opens connections as the load needs them.
      const postgresBefore = cpuOfPids(await options.postgresPids());
      const before = options.apiCpuMs();
      const result = await load(kind, `${i}`, options.durationMs);
      const after = options.apiCpuMs();
      const postgresMs = cpuSince(postgresBefore, cpuOfPids(await options.postgresPids()));
      runs[kind] = {
        result,
        apiCpuUs: before === null || after === null ? null : perRequestUs(after - before, result.completed),
        postgresCpuUs: postgresMs === null ? null : perRequestUs(postgresMs, result.completed),
      };
    }
    rounds.push({ loadAverage, runs });
  }
  return { warm, rounds };
}

/** CPU µs per request from the ms a run used. */
const perRequestUs = (ms: number, requests: number) => Math.round((ms * 1000) / Math.max(1, requests));

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const round1 = (n: number) => Math.round(n * 10) / 10;

export interface MixFigures {
  perSecond: number;
  /** req/s ÷ the same round's plain spins/s, per round, then the median. */
  overSpins: number;
  p50Ms: number;
  p99Ms: number;
  apiCpuUsPerRequest: number | null;
  postgresCpuUsPerRequest: number | null;
  rounds: Array<{
    perSecond: number;
    p50Ms: number;
    p99Ms: number;
    apiCpuUs: number | null;
    postgresCpuUs: number | null;
    statuses: object;
  }>;
}

/** Per kind, the medians over the rounds (see `MixFigures`), and every round's figures. */
export function summariseMixes(rounds: MixRound[], connections: number) {
  const kinds = {} as Record<MixKind, MixFigures>;
  for (const kind of MIX_KINDS) {
    const runs = rounds.map((round) => round.runs[kind]);
    const medianOf = (values: Array<number | null>) => {
      const known = values.filter((value): value is number => value !== null);
      return known.length ? Math.round(median(known)) : null;
    };
    const ratios = rounds.map((round) => round.runs[kind].result.perSecond / round.runs.spins.result.perSecond);
    kinds[kind] = {
      perSecond: Math.round(median(runs.map((run) => run.result.perSecond))),
      overSpins: Math.round(median(ratios) * 1000) / 1000,
      p50Ms: round1(median(runs.map((run) => run.result.p50Ms))),
      p99Ms: round1(median(runs.map((run) => run.result.p99Ms))),
      apiCpuUsPerRequest: medianOf(runs.map((run) => run.apiCpuUs)),
      postgresCpuUsPerRequest: medianOf(runs.map((run) => run.postgresCpuUs)),
      rounds: runs.map((run) => ({
        perSecond: Math.round(run.result.perSecond),
        p50Ms: round1(run.result.p50Ms),
        p99Ms: round1(run.result.p99Ms),
        apiCpuUs: run.apiCpuUs,
        postgresCpuUs: run.postgresCpuUs,
        statuses: run.result.statuses,
      })),
    };
  }
  return { connections, loadAverages: rounds.map((round) => round.loadAverage), kinds };
}

/** A replay page of one of the seeded player's spins (the link made through the API, as a partner would). */
export async function replayPathOfASpin(apiUrl: string, apiKey: string): Promise<string> {
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  const listed = await fetch(`${apiUrl}/api/partner/v1/players/player-0/spins?limit=1`, { headers });
  const [spin] = ((await listed.json()) as { spins: Array<{ spinId: string }> }).spins;
  if (!spin) throw new Error("the seeded history has no spin of player-0 to replay");
  const made = await fetch(`${apiUrl}/api/partner/v1/spins/${spin.spinId}/replay-link`, {
    method: "POST",
    headers,
    body: "{}",
  });
  if (made.status !== 201) throw new Error(`replay link: ${made.status} ${await made.text()}`);
  return new URL(((await made.json()) as { url: string }).url).pathname;
}

/**
 * Makes every spin of `seeded`'s partner go through all of player protection's checks (CONTRACT §16):
 * its default is an operator profile with a stake limit and session reminders, and each of the
 * mix's players has loss and wager limits per day, week and month (set through the API, as a
 * partner would), all far above what a run spends, so no spin is refused.
 */
export async function protectEveryPlayer(db: Database, seeded: BenchSeed, apiUrl: string, players: number) {
  await db
    .insert(jurisdictions)
    .values({
      code: "BENCH-FULL",
      name: "Bench: every check",
      minRoundMs: 0,
      maxWagerMicros: 100_000_000,
      sessionReminderMinutes: 60,
    })
    .onConflictDoNothing();
  await db.update(partners).set({ defaultJurisdiction: "BENCH-FULL" }).where(eq(partners.id, seeded.partnerId));
  const limits = { daily: 1_000_000, weekly: 5_000_000, monthly: 10_000_000 };
  const body = JSON.stringify({ lossLimitUsd: limits, wagerLimitUsd: limits });
  const headers = { "x-api-key": seeded.apiKey, "content-type": "application/json" };
  for (let start = 0; start < players; start += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, players - start) }, async (_, i) => {
        const url = `${apiUrl}/api/partner/v1/players/player-${start + i}/protection`;
        const answer = await fetch(url, { method: "PUT", headers, body });
        if (answer.status !== 200)
          throw new Error(`protection of player-${start + i}: ${answer.status} ${await answer.text()}`);
      }),
    );
  }
}
