import type { FreeRoundGrantWithStatus, NewFreeRoundGrant, Transaction } from "@outcomes/db";
import { describe, expect, it } from "vitest";
import type { CreateCommand, Created } from "../idempotency.js";
import type { GameRules } from "../spins/game-cache.js";
import { GrantService } from "./grant-service.js";

/** The grant's rules with fakes (no Postgres): the keyed-create concern runs the command as createOnce would. */
const owner = { partnerId: "ptr_1", environment: "sandbox" } as const;
const NOW = Date.parse("2026-11-01T00:00:00.000Z");
const DAY = 86_400_000;
const game = {
  id: 7,
  partnerId: "ptr_1",
  environment: "sandbox",
  isActive: true,
  minWagerMicros: 100_000,
  maxWagerMicros: 5_000_000,
} as GameRules;
const request = {
  gameId: 7,
  playerIds: ["p-1", "p-2"],
  rounds: 3,
  wagerUsd: 0.5,
  expiresAt: new Date(NOW + 7 * DAY).toISOString(),
};

function service(found: GameRules | null = game) {
  const made: NewFreeRoundGrant[] = [];
  const commands: Array<CreateCommand<FreeRoundGrantWithStatus, unknown>> = [];
  const grants = new GrantService({
    games: { get: async (gameId) => (found && found.id === gameId ? found : null) },
    creates: {
      createOnce: async <Made, Body>(command: CreateCommand<Made, Body>): Promise<Created<Made, Body>> => {
        commands.push(command as unknown as CreateCommand<FreeRoundGrantWithStatus, unknown>);
        const writes = await command.admit();
        const created = await writes({} as Transaction);
        return { made: created, body: command.present(created), replayed: false };
      },
    },
    createGrant: async (_tx, grantOwner, grant) => {
      made.push(grant);
      return {
        id: "fr_1",
        ...grantOwner,
        gameId: grant.gameId,
        wagerMicros: grant.wagerMicros,
        rounds: grant.rounds,
        playerCount: grant.playerIds.length,
        expiresAt: grant.expiresAt,
        createdAt: new Date(NOW),
        cancelledAt: null,
        status: "active",
      } as FreeRoundGrantWithStatus;
    },
    now: () => NOW,
  });
  return { grants, made, commands };
}

describe("GrantService", () => {
  it("grants the game's rounds at its wager in micro-USD, until the expiry", async () => {
    const { grants, made } = service();
    const answer = await grants.grant(owner, request);
    expect(made).toEqual([
      { gameId: 7, wagerMicros: 500_000, rounds: 3, expiresAt: new Date(request.expiresAt), playerIds: ["p-1", "p-2"] },
    ]);
    expect(answer.body).toMatchObject({ freeRoundsId: "fr_1", wagerUsd: 0.5, playerCount: 2, status: "active" });
  });

  it("keys the grant as understood: 0.5 and 0.50, or another spelling of the instant, are one request", async () => {
    const { grants, commands } = service();
    await grants.grant(owner, request, "k");
    await grants.grant(owner, { ...request, expiresAt: request.expiresAt.replace("Z", "+00:00") }, "k");
    await grants.grant(owner, { ...request, rounds: 4 }, "k");
    const [first, same, other] = commands.map((command) => command.key);
    expect(first?.scope).toEqual({ ...owner, key: "k" });
    expect(same?.hash).toBe(first?.hash);
    expect(other?.hash).not.toBe(first?.hash);
    await grants.grant(owner, request);
    expect(commands[3]?.key).toBeNull();
  });

  it("refuses another's or an unknown game (403 KS-4006) and an inactive one (400 KS-4202), making nothing", async () => {
    const strangers = service({ ...game, partnerId: "ptr_2" });
    await expect(strangers.grants.grant(owner, request)).rejects.toMatchObject({ code: "KS-4006" });
    const production = service({ ...game, environment: "production" });
    await expect(production.grants.grant(owner, request)).rejects.toMatchObject({ code: "KS-4006" });
    await expect(service(null).grants.grant(owner, request)).rejects.toMatchObject({ code: "KS-4006" });
    const inactive = service({ ...game, isActive: false });
    await expect(inactive.grants.grant(owner, request)).rejects.toMatchObject({ code: "KS-4202" });
    expect([...strangers.made, ...production.made, ...inactive.made]).toEqual([]);
  });

  it("refuses a wager outside the game's bounds (400 KS-4103)", async () => {
    const { grants, made } = service();
    await expect(grants.grant(owner, { ...request, wagerUsd: 0.05 })).rejects.toMatchObject({ code: "KS-4103" });
    await expect(grants.grant(owner, { ...request, wagerUsd: 6 })).rejects.toMatchObject({ code: "KS-4103" });
    expect(made).toEqual([]);
  });

  it("takes an expiry in the future up to 90 days ahead (a minute of skew allowed), else 400 KS-4101", async () => {
    const { grants, made } = service();
    const at = (ms: number) => ({ ...request, expiresAt: new Date(NOW + ms).toISOString() });
    await expect(grants.grant(owner, at(0))).rejects.toMatchObject({
      code: "KS-4101",
      details: [{ path: "expiresAt", message: "must be in the future" }],
    });
    await expect(grants.grant(owner, at(90 * DAY + 60_001))).rejects.toMatchObject({
      code: "KS-4101",
      details: [{ path: "expiresAt", message: "must be at most 90 days ahead" }],
    });
    await grants.grant(owner, at(90 * DAY + 60_000));
    await grants.grant(owner, at(1));
    expect(made).toHaveLength(2);
  });
});
