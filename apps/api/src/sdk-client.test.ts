import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { insertEvents } from "@outcomes/db";
import { PartnerApiError, PartnerClient, type PartnerClientOptions } from "@outcomes/sdk";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { fillTestGameQueue } from "@outcomes/testkit/games";
import { addBlock, createGame } from "@outcomes/testkit/spin-path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_REQUESTS_PER_SECOND: "50" });
});
afterAll(async () => {
  await api.close();
});

/** A client over the real server that records every attempt and every wait it asked for. */
function sdkFor(
  apiKey: string,
  options: Partial<PartnerClientOptions> & { onSleep?: (ms: number) => Promise<void> } = {},
) {
  const attempts: string[] = [];
  const waits: number[] = [];
  const client = new PartnerClient({
    apiKey,
    baseUrl: api.baseUrl,
    fetch: (input, init) => {
      attempts.push(`${init.method} ${new URL(input).pathname}`);
      return fetch(input, init);
    },
    sleep: async (ms) => {
      waits.push(ms);
      await options.onSleep?.(ms);
    },
    ...options,
  });
  return { client, attempts, waits };
}

async function partnerWithGame(outcomes: Array<[string, number | string]>) {
  const { partnerId, apiKey } = await api.createPartner();
  const { gameId } = await createGame(api, partnerId);
  if (outcomes.length > 0) await addBlock(api, gameId, outcomes);
  return { apiKey, gameId };
}

describe("the SDK against the running service", () => {
  it("spins and reads the player and their spins back", async () => {
    const { apiKey, gameId } = await partnerWithGame([["T2", "2.5"]]);
    const { client } = sdkFor(apiKey);
    const result = await client.spin({ gameId, playerId: "sdk-player", wagerUsd: 2 });
    expect(result.outcome).toEqual({ prizeTier: "T2", multiplier: 2.5, payoutUsd: 5 });
    expect(result.balance).toEqual({ balanceUsd: 3, currency: "USD" });
    await expect(client.players.get("sdk-player")).resolves.toMatchObject({ totalSpins: 1, balanceUsd: 3 });
    const page = await client.players.spins("sdk-player", { limit: 5 });
    expect(page).toMatchObject({ page: 1, limit: 5, total: 1 });
    expect(page.spins[0]?.spinId).toBe(result.spinId);
    expect([result.forced, result.fairness?.index]).toEqual([false, 0]);
    const forced = await client.spin({ gameId, playerId: "sdk-player", wagerUsd: 2, forceTier: "T6" });
    expect(forced).toMatchObject({ forced: true, fairness: null, outcome: { prizeTier: "T6", payoutUsd: 2000 } });
  });

  it("grants free rounds, reads them back and cancels them", async () => {
    const { apiKey, gameId } = await partnerWithGame([]);
    const { client } = sdkFor(apiKey);
    const expiresAt = new Date(Date.now() + 86_400_000);
    const grant = await client.freeRounds.grant({
      gameId,
      playerIds: ["sdk-a", "sdk-b"],
      rounds: 3,
      wagerUsd: 1,
      expiresAt,
    });
    expect(grant).toMatchObject({
      gameId,
      rounds: 3,
      playerCount: 2,
      status: "active",
      expiresAt: expiresAt.toISOString(),
    });
    await expect(client.freeRounds.get(grant.freeRoundsId)).resolves.toEqual(grant);
    await expect(client.freeRounds.list({ limit: 5 })).resolves.toEqual({
      freeRounds: [grant],
      page: 1,
      limit: 5,
      total: 1,
    });
    await expect(client.freeRounds.player(grant.freeRoundsId, "sdk-a")).resolves.toMatchObject({ roundsLeft: 3 });
    const cancelled = await client.freeRounds.cancel(grant.freeRoundsId);
    expect(cancelled.status).toBe("cancelled");
    await expect(client.freeRounds.cancel(grant.freeRoundsId)).resolves.toEqual(cancelled);
    const outsider = await client.freeRounds.player(grant.freeRoundsId, "sdk-c").catch((error) => error);
    expect(outsider).toMatchObject({ status: 404, errorCode: "KS-4204" });
  });

  it("raises PartnerApiError with the code and request id, and never retries a 4xx", async () => {
    const { apiKey, gameId } = await partnerWithGame([["T0", 0]]);
    const { client, attempts } = sdkFor(apiKey);
    const failure = await client.spin({ gameId, playerId: "p", wagerUsd: 1_000_000 }).catch((error) => error);
    expect(failure).toBeInstanceOf(PartnerApiError);
    expect(failure).toMatchObject({ status: 400, errorCode: "KS-4103", retryable: false });
    expect(failure.requestId).toMatch(/.+/);
    const missing = await client.players.get("nobody").catch((error) => error);
    expect(missing).toMatchObject({ status: 404, errorCode: "KS-4204" });
    expect(attempts).toHaveLength(2);
  });

  it("waits Retry-After on 429 and then succeeds", async () => {
    // A deployment of its own with one request per second, so the bucket cannot refill unseen.
    const strict = await startTestApi({ RATE_LIMIT_REQUESTS_PER_SECOND: "1" });
    try {
      const { apiKey } = await strict.createPartner();
      await strict.request("/api/partner/v1/players/nobody", { apiKey });
      const attempts: number[] = [];
      const waits: number[] = [];
      const client = new PartnerClient({
        apiKey,
        baseUrl: strict.baseUrl,
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          attempts.push(response.status);
          return response;
        },
        sleep: (ms) => {
          waits.push(ms);
          return new Promise((resolve) => setTimeout(resolve, ms));
        },
      });
      await expect(client.players.get("nobody")).rejects.toMatchObject({ errorCode: "KS-4204" });
      expect(attempts).toEqual([429, 404]);
      expect(waits).toEqual([1000]);
    } finally {
      await strict.close();
    }
  });

  it("retries a read through maintenance (503 KS-5002) after its Retry-After", async () => {
    const { apiKey } = await api.createPartner();
    await api.deps.maintenance.set(true);
    const { client, attempts, waits } = sdkFor(apiKey, { onSleep: () => api.deps.maintenance.set(false) });
    await expect(client.players.get("nobody")).rejects.toMatchObject({ errorCode: "KS-4204" });
    expect(waits).toEqual([60_000]);
    expect(attempts).toHaveLength(2);
  });

  it.each([
    ["without an Idempotency-Key: nothing was taken", false, "unkeyed-player"],
    ["with a generated Idempotency-Key once outcomes are back, spinning once", true, "retry-player"],
  ])("retries a spin on an empty queue (503 KS-4203) %s", async (_case, autoIdempotencyKeys, playerId) => {
    const { apiKey, gameId } = await partnerWithGame([]);
    const { client, attempts, waits } = sdkFor(apiKey, {
      autoIdempotencyKeys,
      onSleep: async () => {
        await addBlock(api, gameId, [["T1", 1]]);
      },
    });
    const result = await client.spin({ gameId, playerId, wagerUsd: 1 });
    expect(result.outcome.prizeTier).toBe("T1");
    expect(attempts).toHaveLength(2);
    expect(waits).toHaveLength(1);
    await expect(client.players.get(playerId)).resolves.toMatchObject({ totalSpins: 1 });
  });

  it("uploads a PAR sheet, registers and updates a game, spins, and manages a webhook", async () => {
    const { apiKey } = await api.createPartner();
    const { client } = sdkFor(apiKey, { onSleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) });
    const sheet = await client.parSheets.upload(SAMPLE_PAR_SHEET);
    expect(sheet).toMatchObject({ status: "ACTIVE", certifiedRtp: SAMPLE_PAR_SHEET.certifiedRtp });
    expect((await client.parSheets.get(sheet.id)).document.name).toBe(SAMPLE_PAR_SHEET.name);
    expect((await client.parSheets.list()).parSheets.map((listed) => listed.id)).toEqual([sheet.id]);

    const game = await client.games.register({ parSheetId: sheet.id, name: "SDK game", maxWagerUsd: 50 });
    expect(game).toMatchObject({ name: "SDK game", minWagerUsd: null, maxWagerUsd: 50, isActive: true });
    const updated = await client.games.update(game.gameConfigId, { minWagerUsd: 0.5 });
    expect(updated.minWagerUsd).toBe(0.5);
    expect(await client.games.get(game.gameConfigId)).toEqual(updated);
    const all: number[] = [];
    for await (const listed of client.all((page) => client.games.list(page), "games")) all.push(listed.gameConfigId);
    expect(all).toEqual([game.gameConfigId]);

    await fillTestGameQueue(api, game.gameConfigId);
    const result = await client.spin({ gameId: game.gameConfigId, playerId: "flow", wagerUsd: 1 });
    expect(result.balance.currency).toBe("USD");

    const webhook = await client.webhooks.register({
      url: "https://hooks.example.com/outcomes",
      events: ["spin.large_win"],
    });
    expect(webhook.secret).toMatch(/^whsec_/);
    expect((await client.webhooks.list()).webhooks[0]).not.toHaveProperty("secret");
    expect((await client.webhooks.deliveries(webhook.id)).deliveries).toEqual([]);
    expect(await client.webhooks.recover(webhook.id, { since: new Date(Date.now() - 60_000) })).toEqual({
      recovered: 0,
    });
    const rotated = await client.webhooks.rotateSecret(webhook.id, { overlapSeconds: 60 });
    expect(rotated).toMatchObject({ webhookId: webhook.id, secret: expect.stringMatching(/^whsec_/) });
    expect(await client.webhooks.delete(webhook.id)).toMatchObject({ id: webhook.id, isActive: false });
    expect((await client.settlements.list()).reports).toEqual([]);
    await expect(client.settlements.get("2020-01-01")).rejects.toMatchObject({ errorCode: "KS-4301" });
  });

  it("reads the event log page by page, and to the end with the events iterator", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const stored = await insertEvents(
      api.database.db,
      Array.from({ length: 1003 }, (_, i) => ({
        partnerId,
        environment: "sandbox" as const,
        type: i % 2 === 0 ? ("block.low_reserve" as const) : ("spin.large_win" as const),
        data: { i },
      })),
    );
    const { client, attempts } = sdkFor(apiKey);
    const page = await client.listEvents({ after: 1, limit: 2, type: "spin.large_win" });
    expect(page).toEqual({ events: [stored[1], stored[3]], nextAfter: 4 });

    const all = [];
    for await (const event of client.events()) all.push(event);
    expect(all).toEqual(stored);
    expect(attempts.slice(1)).toEqual(["GET /api/partner/v1/events", "GET /api/partner/v1/events"]);
    const wins = [];
    for await (const event of client.events({ after: 998, type: "spin.large_win" })) wins.push(event.sequence);
    expect(wins).toEqual([1000, 1002]);
  });

  it("has a method for every partner operation of the OpenAPI document, on its documented path", async () => {
    const described = await api.request("/api/partner/v1/openapi.json");
    expect(described.status).toBe(200);
    const documented = described.body.paths as Record<string, { servers?: { url: string }[] }>;
    const operations = Object.entries(documented).flatMap(([path, item]) => {
      // Relative to the path item's server when it names one (the replay pages: the site root), else the document's.
      const server = (item.servers?.[0]?.url ?? described.body.servers[0].url).replace(/\/$/, "");
      return Object.keys(item)
        .filter((key) => key !== "servers")
        .map((method) => ({ method: method.toUpperCase(), pattern: templateRegex(`${server}${path}`), path }));
    });
    const seen: string[] = [];
    const client = new PartnerClient({
      apiKey: "ks_sandbox_x",
      baseUrl: "https://outcomes.test",
      fetch: async (input, init) => {
        seen.push(`${init.method} ${new URL(input).pathname}`);
        return new Response("{}", { status: 200 });
      },
    });
    const spin = { gameId: 1, playerId: "p", wagerUsd: 1 };
    await Promise.all([
      client.games.list(),
      client.games.get(1),
      client.games.register({ parSheetId: "par_1", name: "g", maxWagerUsd: 1 }),
      client.games.update(1, { isActive: false }),
      client.parSheets.upload(SAMPLE_PAR_SHEET),
      client.parSheets.list(),
      client.parSheets.get("par_1"),
      client.spin(spin),
      client.blocks.list(1),
      client.blocks.get(1, 2),
      client.blocks.entriesPage(1, 2),
      client.spinProof("spn_1"),
      client.getSpin("spn_1"),
      client.voidSpin("spn_1", { reason: "wallet refused" }),
      client.createReplayLink("spn_1"),
      client.getReplay("https://outcomes.test/replay/abc"),
      client.players.get("p"),
      client.players.spins("p"),
      client.protection.jurisdictions(),
      client.protection.get("p"),
      client.protection.set("p", { lossLimitUsd: { daily: 10 } }),
      client.webhooks.register({ url: "https://x.test", events: ["spin.large_win"] }),
      client.webhooks.list(),
      client.webhooks.update("whk_1", { rateLimitPerSecond: 5 }),
      client.webhooks.delete("whk_1"),
      client.webhooks.enable("whk_1"),
      client.webhooks.deliveries("whk_1"),
      client.webhooks.redeliver("whk_1", "dlv_1"),
      client.webhooks.recover("whk_1", { since: new Date() }),
      client.webhooks.rotateSecret("whk_1"),
      client.settlements.list(),
      client.settlements.get("2026-01-01"),
      client.settlements.acknowledge("2026-01-01"),
      client.settlements.dispute("2026-01-01", "numbers differ"),
      client.listEvents(),
      client.freeRounds.grant({ gameId: 1, playerIds: ["p"], rounds: 1, wagerUsd: 1, expiresAt: new Date() }),
      client.freeRounds.list(),
      client.freeRounds.get("fr_1"),
      client.freeRounds.player("fr_1", "p"),
      client.freeRounds.cancel("fr_1"),
    ]);
    for (const call of seen) {
      const [method, path] = call.split(" ");
      expect(
        operations.some((op) => op.method === method && op.pattern.test(path ?? "")),
        call,
      ).toBe(true);
    }
    // The replay page is for people (HTML); its data has `getReplay`.
    const pages = ["/openapi.json", "/replay/{token}"];
    for (const op of operations.filter((candidate) => !pages.some((page) => candidate.path.endsWith(page)))) {
      const covered = seen.some(
        (call) => call.startsWith(`${op.method} `) && op.pattern.test(call.split(" ")[1] ?? ""),
      );
      expect(covered, `${op.method} ${op.path} has no SDK method`).toBe(true);
    }
  });
});

function templateRegex(path: string): RegExp {
  return new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`);
}
