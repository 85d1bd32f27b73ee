import { verifyStandardWebhook, verifyWebhookSignature } from "@outcomes/sdk";
import { registerTestGame } from "@outcomes/testkit/games";
import { deliveriesOf, eventually, registerWebhook, webhooksWorldForFile } from "@outcomes/testkit/workers";
import { describe, expect, it } from "vitest";

const world = webhooksWorldForFile({ BLOCK_SIZE: "500", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "2" });

describe("a large win, end to end", () => {
  it("reaches the partner's webhook as a verifiable signed spin.large_win", async () => {
    const target = await world.receiver();
    const partner = await registerWebhook(world.api, target.url, ["spin.large_win"]);
    const { webhookId, secret } = partner;
    const game = await registerTestGame(world.api, { partner, game: { largeWinThresholdUsd: 2 } });

    let win: Record<string, any> | undefined;
    for (let i = 0; i < 500 && !win; i++) {
      const spin = await world.api.request("/api/partner/v1/spins", {
        method: "POST",
        apiKey: partner.apiKey,
        json: { gameId: game.gameId, playerId: "lucky-player", wagerUsd: 1 },
      });
      expect(spin.status).toBe(200);
      if (spin.body.outcome.payoutUsd >= 2) win = spin.body;
    }
    expect(win).toBeDefined();

    const request = await eventually(() => target.requests[0]);
    const headers = request.headers as Record<string, string>;
    expect(
      verifyWebhookSignature({ rawBody: request.rawBody, signatureHeader: headers["x-service-signature"], secret }),
    ).toBe(true);
    expect(verifyStandardWebhook({ rawBody: request.rawBody, headers, secret })).toBe(true);
    const body = JSON.parse(request.rawBody.toString("utf8"));
    expect(body).toMatchObject({
      type: "spin.large_win",
      environment: "sandbox",
      data: {
        spinId: win!.spinId,
        gameId: game.gameId,
        playerId: "lucky-player",
        wagerUsd: 1,
        payoutUsd: win!.outcome.payoutUsd,
        prizeTier: win!.outcome.prizeTier,
        multiplier: win!.outcome.multiplier,
      },
    });
    expect(body.id).toMatch(/^evt_/);
    // The body is the event log's entry, sequence included, byte for byte in the same key order.
    const log = await world.api.request("/api/partner/v1/events", { apiKey: partner.apiKey });
    expect(log.body).toEqual({ events: [body], nextAfter: 1 });
    expect(request.rawBody.toString("utf8")).toBe(JSON.stringify(log.body.events[0]));
    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(world.api, partner.apiKey, webhookId);
      return list[0]?.status === "succeeded" && list;
    });
    expect(delivery!.id).toBe(headers["x-service-delivery-id"]);
    // The spins before it paid less than the threshold: nothing was pushed for them.
    expect(target.requests).toHaveLength(1);
  });

  it("is pushed for a forced sandbox spin, so a partner can test its receiver on demand", async () => {
    const target = await world.receiver();
    const partner = await registerWebhook(world.api, target.url);
    const game = await registerTestGame(world.api, { partner, game: { largeWinThresholdUsd: 100 } });
    const spin = await world.api.request("/api/partner/v1/spins", {
      method: "POST",
      apiKey: partner.apiKey,
      json: { gameId: game.gameId, playerId: "tester", wagerUsd: 1, forceTier: "T6" },
    });
    expect(spin.body).toMatchObject({ forced: true, outcome: { prizeTier: "T6", payoutUsd: 1000 } });
    const request = await eventually(() =>
      target.requests.find((received) => received.rawBody.toString("utf8").includes(spin.body.spinId)),
    );
    const headers = request.headers as Record<string, string>;
    expect(verifyStandardWebhook({ rawBody: request.rawBody, headers, secret: partner.secret })).toBe(true);
    expect(JSON.parse(request.rawBody.toString("utf8"))).toMatchObject({
      sequence: 1,
      type: "spin.large_win",
      data: { spinId: spin.body.spinId, prizeTier: "T6", multiplier: 1000, payoutUsd: 1000 },
    });
  });
});
