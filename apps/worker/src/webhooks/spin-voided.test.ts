import { verifyStandardWebhook, verifyWebhookSignature } from "@outcomes/sdk";
import { registerTestGame } from "@outcomes/testkit/games";
import { deliveriesOf, eventually, registerWebhook, webhooksWorldForFile } from "@outcomes/testkit/workers";
import { describe, expect, it } from "vitest";

const world = webhooksWorldForFile({ BLOCK_SIZE: "100", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "1" });

describe("a void, end to end", () => {
  it("reaches a webhook subscribed to spin.voided as a verifiable signed event, once", async () => {
    const target = await world.receiver();
    const partner = await registerWebhook(world.api, target.url, ["spin.voided"]);
    const { webhookId, secret } = partner;
    const game = await registerTestGame(world.api, { partner });
    const spin = await world.api.request("/api/partner/v1/spins", {
      method: "POST",
      apiKey: partner.apiKey,
      json: { gameId: game.gameId, playerId: "refused-player", wagerUsd: 2.5 },
    });
    const voidPath = `/api/partner/v1/spins/${spin.body.spinId}/void`;
    const voided = await world.api.request(voidPath, {
      method: "POST",
      apiKey: partner.apiKey,
      json: { reason: "Wallet refused the debit: insufficient funds" },
    });
    expect(voided.status).toBe(200);
    // Asked again: the same void, no second event.
    await world.api.request(voidPath, { method: "POST", apiKey: partner.apiKey, json: { reason: "again" } });

    const request = await eventually(() => target.requests[0]);
    const headers = request.headers as Record<string, string>;
    expect(
      verifyWebhookSignature({ rawBody: request.rawBody, signatureHeader: headers["x-service-signature"], secret }),
    ).toBe(true);
    expect(verifyStandardWebhook({ rawBody: request.rawBody, headers, secret })).toBe(true);
    expect(headers["x-service-event"]).toBe("spin.voided");
    const body = JSON.parse(request.rawBody.toString("utf8"));
    expect(body).toEqual({
      id: expect.stringMatching(/^evt_/),
      sequence: expect.any(Number),
      type: "spin.voided",
      createdAt: voided.body.voided.voidedAt,
      environment: "sandbox",
      data: {
        spinId: spin.body.spinId,
        gameId: game.gameId,
        playerId: "refused-player",
        wagerUsd: 2.5,
        payoutUsd: spin.body.outcome.payoutUsd,
        prizeTier: spin.body.outcome.prizeTier,
        reason: "Wallet refused the debit: insufficient funds",
        voidedAt: voided.body.voided.voidedAt,
      },
    });
    // The body is the event log's entry, byte for byte.
    const log = await world.api.request("/api/partner/v1/events?type=spin.voided", { apiKey: partner.apiKey });
    expect(request.rawBody.toString("utf8")).toBe(JSON.stringify(log.body.events[0]));
    expect(log.body.events).toHaveLength(1);
    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(world.api, partner.apiKey, webhookId);
      return list[0]?.status === "succeeded" && list;
    });
    expect(delivery).toMatchObject({ id: headers["x-service-delivery-id"], event: "spin.voided" });
    expect(target.requests).toHaveLength(1);
  });
});
