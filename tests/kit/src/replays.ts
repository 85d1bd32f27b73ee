import type { TestApi } from "./api.js";
import { registerTestGame, revealTestBlocks, type TestGame } from "./games.js";
import { asRead } from "./spin-path.js";

/** Outcomes per block the replay fixture needs: its first block is spun dry and revealed. */
export const REPLAY_BLOCK_SIZE = 16;

/** The test API's env overrides for `replaySpins`. */
export const REPLAY_ENV = {
  BLOCK_SIZE: String(REPLAY_BLOCK_SIZE),
  MIN_READY_BLOCKS: "1",
  TARGET_READY_BLOCKS: "3",
};

type Spin = Record<string, any> & { spinId: string };

export interface ReplaySpins {
  game: TestGame;
  playerId: string;
  /** Every plain spin, in order: the first block's 16 (revealed), then 4 of the second. */
  spins: Spin[];
  won: Spin;
  lost: Spin;
  /** A spin of the revealed first block. */
  revealed: Spin;
  /** A spin of the second block, not revealed. */
  unrevealed: Spin;
  voided: Spin;
  freeRound: Spin;
  forced: Spin;
}

/**
 * A sandbox game with the spins a replay page shows differently: 20 plain spins of 1.25 USD (the
 * first block spun dry and revealed; among them wins and losses, whatever the draw: a loss of all
 * 20 has odds of 1 in 6,000, reported by name), a voided one, a free round and a forced T6.
 */
export async function replaySpins(api: TestApi): Promise<ReplaySpins> {
  const game = await registerTestGame(api, { game: { name: "Lucky Sevens" } });
  const playerId = "player-42";
  const call = async (path: string, json: unknown, expected = 200) => {
    const answer = await api.request(`/api/partner/v1${path}`, { method: "POST", apiKey: game.apiKey, json });
    if (answer.status !== expected) throw new Error(`POST ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body as Spin;
  };
  // As a read of the spin shows it (a spin's answer alone carries the player's session).
  const spin = async (extra: Record<string, unknown> = {}) =>
    asRead(
      (await call("/spins", { gameId: game.gameId, playerId, wagerUsd: 1.25, ...extra })) as Spin & {
        session?: unknown;
      },
    ) as Spin;

  const spins: Spin[] = [];
  for (let count = 0; count < REPLAY_BLOCK_SIZE + 4; count++) spins.push(await spin());
  await revealTestBlocks(api);
  const won = spins.find((spin) => spin.outcome.payoutUsd > 0);
  const lost = spins.find((spin) => spin.outcome.payoutUsd === 0);
  if (!won || !lost) throw new Error("20 spins of the sample sheet without both a win and a loss");

  const toVoid = spins.at(-1) as Spin;
  const voided = await call(`/spins/${toVoid.spinId}/void`, { reason: "Wallet refused the debit: insufficient funds" });
  const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
  const grant = await call(
    "/free-rounds",
    { gameId: game.gameId, playerIds: [playerId], rounds: 3, wagerUsd: 0.5, expiresAt },
    201,
  );
  const freeRound = await spin({ freeRoundsId: grant.freeRoundsId, wagerUsd: undefined });
  const forced = await spin({ forceTier: "T6" });
  return {
    game,
    playerId,
    spins,
    won,
    lost,
    revealed: spins[0] as Spin,
    unrevealed: spins[REPLAY_BLOCK_SIZE] as Spin,
    voided,
    freeRound,
    forced,
  };
}

/** A replay link of the spin, made through the partner API. */
export async function replayLink(
  api: TestApi,
  apiKey: string,
  spinId: string,
  body?: unknown,
): Promise<{ url: string; expiresAt: string; path: string; token: string }> {
  const answer = await api.request(`/api/partner/v1/spins/${spinId}/replay-link`, {
    method: "POST",
    apiKey,
    ...(body === undefined ? {} : { json: body }),
  });
  if (answer.status !== 201) throw new Error(`replay link: ${answer.status} ${JSON.stringify(answer.body)}`);
  const path = new URL(answer.body.url).pathname;
  return { ...answer.body, path, token: path.slice("/replay/".length) };
}
