import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectLedgerIntact } from "./harness/expect-intact.js";
import { expiringKeyWatched, type World } from "./harness/http.js";
import { checkLedger, checkOutcomes } from "./harness/invariants.js";
import { SpinLoad } from "./harness/load.js";
import { PostgresProxy } from "./harness/pg-proxy.js";
import { eventually, sleep } from "./harness/processes.js";
import { Receiver } from "./harness/receiver.js";
import { type Stack, startWorld } from "./harness/stack.js";

const CLIENTS = 6;
let proxy: PostgresProxy;
let stack: Stack;
let world: World;
let receiver: Receiver;

beforeAll(async () => {
  proxy = await PostgresProxy.beforeTestPostgres();
  receiver = await Receiver.start();
  ({ stack, world } = await startWorld({
    stack: { databaseUrlFor: (url) => proxy.urlFor(url) },
    worker: { name: "worker", roles: ["blocks", "webhooks", "key-expiry"] },
  }));
});
afterAll(async () => {
  await stack?.close();
  await proxy?.close();
  await receiver?.close();
});

describe("Postgres unreachable for 3 s under spin load (a TCP proxy cut between the processes and Postgres)", () => {
  it("fails spins without deducting, turns /readyz red and back, and the workers finish their jobs after it", async () => {
    const expiring = await expiringKeyWatched(stack.api, world, receiver.url);

    const load = new SpinLoad(stack.api, world, { clients: CLIENTS, keyedEvery: 2 }).start();
    await sleep(1_000);
    const cutAt = Date.now();
    const dropped = proxy.cut();
    const readiness: number[] = [];
    // The sweep is queued while Postgres is away: its job fails, backs off, and runs again later.
    const sweep = await stack.api.call("POST", "/api/admin/v1/jobs/key-expiry/run", { admin: true });
    while (Date.now() - cutAt < 3_000) {
      readiness.push((await stack.api.call("GET", "/readyz")).status);
      await sleep(250);
    }
    proxy.resume();
    const resumedAt = Date.now();
    await eventually(async () => (await stack.api.call("GET", "/readyz")).status === 200, 15_000, "/readyz 200");
    const readyAfterMs = Date.now() - resumedAt;
    await eventually(() => load.records.some((r) => r.sentAt > resumedAt && r.status === 200), 15_000, "a 200 spin");
    await sleep(500);
    await load.stop();
    const keyed = await load.settleKeyed();
    const notice = await eventually(
      () => receiver.received.find((r) => r.event === "api_key.expiring" && r.body?.data?.apiKeyId === expiring.id),
      30_000,
      "the api_key.expiring delivery",
    );
    await stack.runGeneration(world.gameId);

    const outage = load.between(cutAt, resumedAt);
    const ledger = await checkLedger(stack.sql, world.partnerId, load.accepted());
    const outcomes = await checkOutcomes(stack.sql, stack.redis, stack.redisPrefix, world.gameId);
    const events =
      await stack.sql`select id from events where type = 'api_key.expiring' and payload->'data'->>'apiKeyId' = ${expiring.id}`;
    console.log(
      [
        `FAULT postgres-outage: proxy cut for 3 s (${dropped} open connections dropped, new ones refused) under ${CLIENTS} spin clients`,
        `  answers during the cut: ${JSON.stringify(load.summary(outage))}`,
        `  /readyz during the cut: ${JSON.stringify(readiness)}; 200 again ${readyAfterMs} ms after resume`,
        `  key-expiry sweep queued during the cut: ${sweep.status}; its notice delivered ${notice.at - resumedAt} ms after resume`,
        `  keyed retries after the fault: ${JSON.stringify(keyed)}`,
        `  ledger: ${JSON.stringify(ledger)}`,
        `  outcomes: ${JSON.stringify({ ...outcomes, sequences: outcomes.sequences.length })}`,
      ].join("\n"),
    );

    // Failures are 500 KS-5003 (spin) or KS-5004 (the key store), never a KS-5001.
    expect(outage.some((record) => record.status !== 200)).toBe(true);
    const failures = load.records.filter((record) => record.status !== 200);
    expect(failures.filter((r) => !(r.status === 500 && (r.code === "KS-5003" || r.code === "KS-5004")))).toEqual([]);
    expect(readiness).toContain(503);
    // Failed key look-ups are logged without the bound parameters (the presented key's hash).
    const keyHash = createHash("sha256").update(world.apiKey).digest("hex");
    expect(stack.logLinesWith("KS-5004").length).toBeGreaterThan(0);
    expect(stack.logLinesWith(keyHash)).toEqual([]);
    expect(sweep.status).toBe(202);
    expect(events).toHaveLength(1);
    // Nothing deducted for a failure: every spin in Postgres is one a client saw (keyed ones were
    // retried: a replay would mean a commit whose answer was lost).
    expectLedgerIntact(ledger, { unacknowledged: load.unresolved() });
    expect(outcomes.duplicateQueued).toBe(0);
    expect(outcomes.foreignQueued).toBe(0);
    // An outcome is given back only when its spin failed; one whose commit went through unseen
    // would be given back although used (then dropped when popped): bounded by those commits.
    expect(outcomes.queuedButSpent).toBeLessThanOrEqual(ledger.unacknowledged + keyed.replayed);
    expect(outcomes.stranded).toBeLessThanOrEqual(CLIENTS);
  });
});
