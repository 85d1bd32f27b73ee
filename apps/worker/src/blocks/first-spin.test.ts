import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { startRole } from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBlocksRole } from "./index.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "10000", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "2" });
});
afterAll(async () => {
  await api.close();
});

/** The README's walkthrough: upload the sample sheet, register a game, spin at once. */
async function registerAndSpin() {
  const { apiKey } = await api.createPartner();
  const sheet = await api.request("/api/partner/v1/par-sheets", { method: "POST", apiKey, json: SAMPLE_PAR_SHEET });
  const started = performance.now();
  const game = await api.request("/api/partner/v1/games", {
    method: "POST",
    apiKey,
    json: { parSheetId: sheet.body.id, name: "Lucky Sevens", minWagerUsd: 0.1, maxWagerUsd: 100 },
  });
  const registrationMs = performance.now() - started;
  expect(game.status).toBe(201);
  const spin = await api.request("/api/partner/v1/spins", {
    method: "POST",
    apiKey,
    headers: { "Idempotency-Key": "first-spin" },
    json: { gameId: game.body.gameConfigId, playerId: "player-42", wagerUsd: 1.25 },
  });
  return { registrationMs, spin };
}

describe("the first spin after POST /games", () => {
  it("without a blocks worker: registration answers at once and the spin is 503 KS-4203", async () => {
    const { registrationMs, spin } = await registerAndSpin();
    expect(registrationMs).toBeLessThan(2_000);
    expect([spin.status, spin.body.errorCode]).toEqual([503, "KS-4203"]);
    expect(spin.headers.get("retry-after")).not.toBeNull();
  });

  it("with a blocks worker running: registration waits for the first block, and the spin succeeds at once", async () => {
    const role = await startRole(api, startBlocksRole);
    try {
      for (let round = 0; round < 3; round++) {
        const { spin } = await registerAndSpin();
        expect([spin.status, spin.body.errorCode]).toEqual([200, undefined]);
      }
    } finally {
      await role.close();
    }
  });
});
