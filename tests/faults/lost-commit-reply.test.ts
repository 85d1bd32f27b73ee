import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { World } from "./harness/http.js";
import { PostgresProxy } from "./harness/pg-proxy.js";
import { type Stack, startWorld } from "./harness/stack.js";

/**
 * The connection between the API and Postgres breaks after a spin's write (or its COMMIT) reached
 * Postgres and before the answer came back: the spin committed, and the API must not answer
 * KS-5003 ("not deducted") for it. A TCP proxy loses exactly that one reply.
 */
let proxy: PostgresProxy;
let stack: Stack;
let world: World;

beforeAll(async () => {
  proxy = await PostgresProxy.beforeTestPostgres();
  ({ stack, world } = await startWorld({
    stack: { databaseUrlFor: (url) => proxy.urlFor(url) },
    worker: { name: "worker", roles: ["blocks"] },
    readyBlocks: 2,
  }));
  // Past the block's first outcome, whose spin commits in a transaction with the block's status.
  expect((await spin("warm-up")).status).toBe(200);
});
afterAll(async () => {
  await stack?.close();
  await proxy?.close();
});

async function spinRows(playerId: string) {
  return stack.sql<{ id: string; balance_after_micros: string }[]>`
    select s.id, s.balance_after_micros from spins s join players p on p.id = s.player_id
    where p.external_id = ${playerId}`;
}

const spin = (playerId: string, idempotencyKey?: string) =>
  stack.api.call("POST", "/api/partner/v1/spins", {
    apiKey: world.apiKey,
    json: { gameId: world.gameId, playerId, wagerUsd: 1 },
    headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : {},
  });

describe("a spin whose commit was not acknowledged", () => {
  it("answers the committed spin (group commit: the reply to the autocommit statement is lost)", async () => {
    const playerId = "lost-reply-plain";
    const lost = proxy.loseReply([playerId]);
    const answer = await spin(playerId);
    await lost;
    const rows = await spinRows(playerId);
    expect(rows).toHaveLength(1);
    expect([answer.status, answer.body.spinId]).toEqual([200, rows[0]?.id]);
    expect(answer.body.balance.balanceUsd).toBe(Number(rows[0]?.balance_after_micros) / 1_000_000);
  });

  it("answers the committed spin, and its retry replays it (keyed: the reply to COMMIT is lost)", async () => {
    const playerId = "lost-reply-keyed";
    const key = "lost-commit-reply-key";
    // The key and `spinId` are both in the Bind of the statement saving the key's record; COMMIT follows.
    const lost = proxy.loseReply([key, "spinId"], 1);
    const answer = await spin(playerId, key);
    await lost;
    const rows = await spinRows(playerId);
    expect(rows).toHaveLength(1);
    expect([answer.status, answer.body.spinId]).toEqual([200, rows[0]?.id]);
    const retry = await spin(playerId, key);
    expect([retry.status, retry.body.spinId, retry.headers.get("idempotent-replayed")]).toEqual([
      200,
      rows[0]?.id,
      "true",
    ]);
    expect(await spinRows(playerId)).toHaveLength(1);
  });
});
