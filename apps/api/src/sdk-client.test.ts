import { PartnerApiError, PartnerClient, type PartnerClientOptions } from "@outcomes/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addBlock, createGame } from "./spins/testing.js";
import { startTestApi, type TestApi } from "./testing.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_REQUESTS_PER_SECOND: "5" });
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
    const { apiKey } = await api.createPartner();
    // Drain the 5-per-second bucket, so the client's first attempt is refused.
    for (let i = 0; i < 5; i++) await api.request("/api/partner/v1/players/nobody", { apiKey });
    const { client, attempts, waits } = sdkFor(apiKey, { onSleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
    await expect(client.players.get("nobody")).rejects.toMatchObject({ errorCode: "KS-4204" });
    expect(waits).toEqual([1000]);
    expect(attempts).toEqual(["GET /api/partner/v1/players/nobody", "GET /api/partner/v1/players/nobody"]);
  });

  it("retries a read through maintenance (503 KS-5002) after its Retry-After", async () => {
    const { apiKey } = await api.createPartner();
    await api.deps.maintenance.set(true);
    const { client, attempts, waits } = sdkFor(apiKey, { onSleep: () => api.deps.maintenance.set(false) });
    await expect(client.players.get("nobody")).rejects.toMatchObject({ errorCode: "KS-4204" });
    expect(waits).toEqual([60_000]);
    expect(attempts).toHaveLength(2);
  });

  it("does not retry a spin on an empty queue (503 KS-4203) without an Idempotency-Key", async () => {
    const { apiKey, gameId } = await partnerWithGame([]);
    const { client, attempts } = sdkFor(apiKey);
    await expect(client.spin({ gameId, playerId: "p", wagerUsd: 1 })).rejects.toMatchObject({
      status: 503,
      errorCode: "KS-4203",
    });
    expect(attempts).toHaveLength(1);
  });

  it("retries a spin with a generated Idempotency-Key once outcomes are back, spinning once", async () => {
    const { apiKey, gameId } = await partnerWithGame([]);
    const { client, attempts, waits } = sdkFor(apiKey, {
      autoIdempotencyKeys: true,
      onSleep: async () => {
        await addBlock(api, gameId, [["T1", 1]]);
      },
    });
    const result = await client.spin({ gameId, playerId: "retry-player", wagerUsd: 1 });
    expect(result.outcome.prizeTier).toBe("T1");
    expect(attempts).toHaveLength(2);
    expect(waits).toHaveLength(1);
    await expect(client.players.get("retry-player")).resolves.toMatchObject({ totalSpins: 1 });
  });
});
