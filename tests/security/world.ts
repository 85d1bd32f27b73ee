import { type Environment, type HostResolver, newId } from "@outcomes/core";
import { insertEvent, webhookDeliveries } from "@outcomes/db";
import type { TestApi } from "@outcomes/testkit/api";
import { registerTestGame } from "@outcomes/testkit/games";

/**
 * One partner's resources in one environment, each created through the real API (the delivery is
 * the only row written directly: it needs the webhooks worker otherwise). Security and hostile-input
 * tests point requests at these ids.
 */
export interface World {
  partnerId: string;
  environment: Environment;
  apiKey: string;
  parSheetId: string;
  gameId: number;
  /** The game's first block, and the world's one spin (drawn from it). */
  blockId: number;
  spinId: string;
  playerId: string;
  webhookId: string;
  deliveryId: string;
  eventId: string;
  reportDate: string;
  /** A free-round grant of the game to the world's player. */
  freeRoundsId: string;
}

/** Webhook hosts resolve without DNS: `*.internal.test` to a private address, anything else public. */
export const testResolver: HostResolver = async (host) =>
  host.endsWith(".internal.test") ? [{ address: "10.1.2.3", family: 4 }] : [{ address: "93.184.216.34", family: 4 }];

/** Env overrides for APIs that build worlds: small blocks, so a game's reserve fills in milliseconds. */
export const WORLD_ENV = { BLOCK_SIZE: "150", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "2" };

/** A UTC day `daysAgo` before today, as YYYY-MM-DD. */
export const utcDay = (daysAgo = 0) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

async function call(api: TestApi, path: string, init: Parameters<TestApi["request"]>[1], expected: number) {
  const response = await api.request(path, init);
  if (response.status !== expected) {
    throw new Error(`${init?.method ?? "GET"} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

/**
 * Builds a world for `partner` in the environment its key selects: a PAR sheet and a game (its
 * reserve filled, so it has blocks), a player with one spin and a free-round grant, a webhook with one delivery
 * of an event, and the settlement report of `reportDate` (default today). Player ids are unique per partner and environment.
 */
export async function buildWorld(
  api: TestApi,
  partner: { partnerId: string; apiKey: string },
  environment: Environment,
  reportDate = utcDay(),
): Promise<World> {
  api.deps.resolveHost = testResolver;
  const { apiKey, partnerId } = partner;
  const game = await registerTestGame(api, { partner, game: { name: `World ${newId("g")}`, maxWagerUsd: 50 } });
  const playerId = `player-${partnerId}-${environment}`;
  const spin = await call(
    api,
    "/api/partner/v1/spins",
    { method: "POST", apiKey, json: { gameId: game.gameId, playerId, wagerUsd: 1 } },
    200,
  );
  const grant = await call(
    api,
    "/api/partner/v1/free-rounds",
    {
      method: "POST",
      apiKey,
      json: {
        gameId: game.gameId,
        playerIds: [playerId],
        rounds: 3,
        wagerUsd: 1,
        expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      },
    },
    201,
  );
  const webhook = await call(
    api,
    "/api/partner/v1/webhooks",
    { method: "POST", apiKey, json: { url: "https://hooks.example.com/outcomes", events: ["spin.large_win"] } },
    201,
  );
  const event = await insertEvent(api.database.db, {
    partnerId,
    environment,
    type: "spin.large_win",
    data: { spinId: newId("spn") },
  });
  const deliveryId = newId("dlv");
  await api.database.db.insert(webhookDeliveries).values({
    id: deliveryId,
    webhookId: webhook.id,
    eventId: event.id,
    eventCreatedAt: new Date(event.createdAt),
    eventType: event.type,
    body: JSON.stringify(event),
    status: "succeeded",
    attempts: 1,
  });
  await call(
    api,
    `/api/admin/v1/partners/${partnerId}/settlements`,
    { method: "POST", admin: true, json: { reportDate, environment } },
    201,
  );
  return {
    partnerId,
    environment,
    apiKey,
    parSheetId: game.parSheetId,
    gameId: game.gameId,
    blockId: spin.fairness.blockId,
    spinId: spin.spinId,
    playerId,
    webhookId: webhook.id,
    deliveryId,
    eventId: event.id,
    reportDate,
    freeRoundsId: grant.freeRoundsId,
  };
}
