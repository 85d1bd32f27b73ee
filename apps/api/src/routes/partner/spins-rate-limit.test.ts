import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { addBlock, createGame, queueLength, spin } from "@outcomes/testkit/spin-path";
import { describe, expect, it } from "vitest";

const api = testApiForFile({ RATE_LIMIT_SPINS_PER_SECOND: "2", RATE_LIMIT_REQUESTS_PER_SECOND: "50" });

describe("POST /spins rate limit", () => {
  it("draws from the spin bucket: KS-4291 with Retry-After, nothing taken, other routes unaffected", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId);
    await addBlock(api, game.gameId, [
      ["T0", 0],
      ["T0", 0],
      ["T0", 0],
    ]);
    const body = { gameId: game.gameId, playerId: "busy", wagerUsd: 1 };
    // At once, so the bucket (2, refilling one per 500 ms) cannot refill between them.
    const answers = await Promise.all([spin(api, apiKey, body), spin(api, apiKey, body), spin(api, apiKey, body)]);
    answers.sort((a, b) => a.status - b.status);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    const limited = answers[2]!;
    expect(limited.body.errorCode).toBe("KS-4291");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get("ratelimit-policy")).toBe('"spin";q=2;w=1');
    expect(answers[0]!.headers.get("x-ratelimit-limit")).toBe("2");
    expect(await queueLength(api, game.gameId)).toBe(1);

    const player = await api.request("/api/partner/v1/players/busy", { apiKey });
    expect([player.status, player.body.totalSpins]).toEqual([200, 2]);
    expect(player.headers.get("ratelimit-policy")).toBe('"default";q=50;w=1');
  });

  it("draws from the spin bucket for a forced spin too, before anything is written", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId);
    const body = { gameId: game.gameId, playerId: "forcing", wagerUsd: 1, forceTier: "T1" };
    const answers = await Promise.all([spin(api, apiKey, body), spin(api, apiKey, body), spin(api, apiKey, body)]);
    answers.sort((a, b) => a.status - b.status);
    expect(answers.map((answer) => [answer.status, answer.body.errorCode])).toEqual([
      [200, undefined],
      [200, undefined],
      [429, "KS-4291"],
    ]);
    expect(answers[0]!.headers.get("ratelimit-policy")).toBe('"spin";q=2;w=1');
    const player = await api.request("/api/partner/v1/players/forcing", { apiKey });
    expect(player.body.totalSpins).toBe(2);
  });
});
