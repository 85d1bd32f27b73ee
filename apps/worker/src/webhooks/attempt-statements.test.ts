import { type ClaimedAttempt, sqlClientOf, webhooks } from "@outcomes/db";
import { createLogger } from "@outcomes/runtime";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { deliveryRow, webhookWithDeliveries } from "@outcomes/testkit/deliveries";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttemptStatements } from "./attempt-statements.js";
import { EndpointLoad } from "./endpoint-load.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const SLOW = { slowSendMs: 1000, slowInFlight: 2, timeoutMs: 5000 };
const newLoad = () => new EndpointLoad(SLOW, createLogger("silent", "attempt-statements-test"));

describe("attempt statements shared by the deliveries in flight", () => {
  it("answers each claim with its own delivery, counts a repeated delivery twice, and claims nothing closed", async () => {
    const { deliveryIds } = await webhookWithDeliveries(api, ["pending", "pending", "retrying", "succeeded"]);
    const [first, second, retrying, succeeded] = deliveryIds as [string, string, string, string];
    const statements = new AttemptStatements(sqlClientOf(api.database.db), newLoad());

    // All in one turn of the event loop: the repeated id waits for the next statement (the two
    // statements may reach Postgres in either order; the row lock orders the two counts).
    const claims = (await Promise.all([
      statements.claim({ id: first }),
      statements.claim({ id: second }),
      statements.claim({ id: first }),
      statements.claim({ id: retrying }),
      statements.claim({ id: succeeded }),
    ])) as Array<ClaimedAttempt | undefined>;
    expect([claims[0]?.attempt, claims[2]?.attempt].sort()).toEqual([1, 2]);
    expect([claims[1]?.attempt, claims[3]?.attempt, claims[4]]).toEqual([1, 2, undefined]);
    expect(JSON.parse(claims[1]!.body).id).toBe(JSON.parse((await deliveryRow(api, second))!.body).id);
    expect((await deliveryRow(api, first))?.attempts).toBe(2);
    expect((await deliveryRow(api, succeeded))?.attempts).toBe(5);
  });

  it("claims a paced webhook's delivery only for the attempt whose send slot was reserved", async () => {
    const { webhookId, deliveryIds } = await webhookWithDeliveries(api, ["pending", "retrying"]);
    const [pending, retrying] = deliveryIds as [string, string];
    await api.database.db.update(webhooks).set({ rateLimitPerSecond: 5 }).where(eq(webhooks.id, webhookId));
    const statements = new AttemptStatements(sqlClientOf(api.database.db), newLoad());

    const paced = await Promise.all([statements.claim({ id: pending }), statements.claimFirst({ id: pending })]);
    const turn = { paced: { webhookId, ratePerSecond: 5, nextAttempt: 1 } };
    expect(paced).toEqual([turn, turn]);
    expect(await statements.claim({ id: retrying })).toEqual({ paced: { ...turn.paced, nextAttempt: 2 } });
    // A slot reserved for another attempt (a stale one) claims nothing either.
    expect(await statements.claim({ id: retrying, cleared: 1 })).toEqual({ paced: { ...turn.paced, nextAttempt: 2 } });
    expect((await deliveryRow(api, pending))?.attempts).toBe(0);

    const claimed = (await Promise.all([
      statements.claim({ id: pending, cleared: 1 }),
      statements.claim({ id: retrying, cleared: 2 }),
    ])) as ClaimedAttempt[];
    expect(claimed.map((claim) => [claim.attempt, claim.webhookId])).toEqual([
      [1, webhookId],
      [2, webhookId],
    ]);
    expect((await deliveryRow(api, retrying))?.attempts).toBe(2);
  });

  it("claims a slow endpoint's deliveries up to its room in this process and holds the rest, unclaimed", async () => {
    const slow = await webhookWithDeliveries(api, ["pending", "pending", "pending", "retrying"]);
    const other = await webhookWithDeliveries(api, ["pending", "pending", "pending"]);
    const load = newLoad();
    const statements = new AttemptStatements(sqlClientOf(api.database.db), load);
    // Its sends time out: one still out, so one more fits its two at once.
    load.claimed(slow.webhookId);
    load.claimed(slow.webhookId);
    load.answered(slow.webhookId, 5000);

    const results = await Promise.all([
      ...slow.deliveryIds.map((id) => statements.claim({ id })),
      ...other.deliveryIds.map((id) => statements.claimFirst({ id })),
    ]);
    const [slowResults, otherResults] = [results.slice(0, 4), results.slice(4)];
    const claimed = slowResults.filter((result) => result && "attempt" in result);
    const held = slowResults.filter((result) => result && "held" in result);
    expect([claimed.length, held.length]).toEqual([1, 3]);
    expect(held.map((result) => result && "held" in result && result.held.webhookId)).toEqual(
      Array(3).fill(slow.webhookId),
    );
    // Every other endpoint's are claimed without limit.
    expect(otherResults.every((result) => result && "attempt" in result)).toBe(true);
    const attempts = await Promise.all(slow.deliveryIds.map(async (id) => (await deliveryRow(api, id))!.attempts));
    expect(attempts.reduce((sum, n) => sum + n, 0)).toBe(1 + 1); // the retrying one had 1; one claim more

    // Full now (two sends in flight): every delivery is held until a send ends.
    expect(await statements.claim({ id: slow.deliveryIds[0]! })).toMatchObject({ held: { webhookId: slow.webhookId } });
    load.answered(slow.webhookId, 5000);
    const again = await Promise.all(slow.deliveryIds.map((id) => statements.claim({ id })));
    expect(again.filter((result) => result && "attempt" in result)).toHaveLength(1);
  });

  it("marks each delivery succeeded with its own status and time, and leaves one closed after another attempt alone", async () => {
    const { deliveryIds } = await webhookWithDeliveries(api, ["pending", "retrying", "failed", "failed"]);
    const [pending, retrying, failed, closedInFlight] = deliveryIds as [string, string, string, string];
    const statements = new AttemptStatements(sqlClientOf(api.database.db), newLoad());
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678));

    await Promise.all([
      statements.succeeded({ id: pending, status: 200, at, attempt: 1 }),
      statements.succeeded({ id: retrying, status: 204, at: new Date(at.getTime() + 1), attempt: 2 }),
      // An answer to attempt 4 of a delivery whose attempt 5 was counted and failed: it stays failed.
      statements.succeeded({ id: failed, status: 200, at, attempt: 4 }),
      // Closed while its last counted attempt was on its way (its webhook deleted): the answer wins.
      statements.succeeded({ id: closedInFlight, status: 202, at, attempt: 5 }),
    ]);
    const rows = await Promise.all(deliveryIds.map((id) => deliveryRow(api, id)));
    expect(rows.map((row) => [row?.status, row?.lastResponseStatus, row?.completedAt?.getTime()])).toEqual([
      ["succeeded", 200, at.getTime()],
      ["succeeded", 204, at.getTime() + 1],
      ["failed", 500, rows[2]?.completedAt?.getTime()],
      ["succeeded", 202, at.getTime()],
    ]);
    expect(rows[1]?.lastError).toBeNull();
    expect(rows[1]?.nextAttemptAt).toBeNull();
  });
});
