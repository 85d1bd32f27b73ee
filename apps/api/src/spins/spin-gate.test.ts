import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { addBlock, createGame, queueLength, spin } from "@outcomes/testkit/spin-path";
import { describe, expect, it } from "vitest";

const api = testApiForFile({ RATE_LIMIT_SPINS_PER_SECOND: "2" });

// The spin bucket is drawn in the LPOP's script; answers that take no outcome draw it afterwards.
describe("the spin bucket drawn with the outcome", () => {
  it("still draws for refused spins, with headers, and answers KS-4291 over the limit", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId);
    await addBlock(api, game.gameId, [["T0", 0]]);
    const unknownGame = { gameId: 2_000_000_000, playerId: "gate", wagerUsd: 1 };
    const answers = await Promise.all([1, 2, 3].map(() => spin(api, apiKey, unknownGame)));
    const statuses = answers.map((answer) => [answer.status, answer.body.errorCode]).sort();
    expect(statuses).toEqual([
      [403, "KS-4006"],
      [403, "KS-4006"],
      [429, "KS-4291"],
    ]);
    for (const answer of answers) expect(answer.headers.get("ratelimit-policy")).toBe('"spin";q=2;w=1');

    // The bucket is empty now: a valid spin is refused and takes nothing.
    const refused = await spin(api, apiKey, { gameId: game.gameId, playerId: "gate", wagerUsd: 1 });
    expect([refused.status, refused.body.errorCode]).toEqual([429, "KS-4291"]);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await queueLength(api, game.gameId)).toBe(1);

    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const served = await spin(api, apiKey, { gameId: game.gameId, playerId: "gate", wagerUsd: 1 });
    expect([served.status, served.headers.get("x-ratelimit-limit")]).toEqual([200, "2"]);
    expect(await queueLength(api, game.gameId)).toBe(0);
  });
});
