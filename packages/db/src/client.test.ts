import { createTestDatabase, type TestDatabase } from "@outcomes/testkit/databases";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionLimits, createDatabase, type DatabaseClient, PoolTimeoutError } from "./client.js";

const LIMITS: ConnectionLimits = {
  statementTimeoutMs: 2_000,
  lockTimeoutMs: 300,
  idleInTransactionTimeoutMs: 1_000,
  acquireTimeoutMs: 300,
};

let database: TestDatabase;
let client: DatabaseClient;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await client?.close();
  await database?.drop();
});

/** A pool of one connection with tight limits: the mistakes below would otherwise hang it for good. */
function onePool(limits: Partial<ConnectionLimits> = {}): DatabaseClient {
  client = createDatabase(database.url, { max: 1, limits: { ...LIMITS, ...limits } });
  return client;
}

async function elapsed<T>(work: Promise<T>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now();
  const error = await work.then(
    () => null,
    (failure: unknown) => failure,
  );
  return { ms: Date.now() - started, error };
}

describe("connection limits turn a hung pool into errors within seconds", () => {
  it("fails a query that a transaction waits for on a second connection of its own pool, and recovers", async () => {
    const { sql } = onePool();
    // The mistake: inside a transaction, a statement sent to the pool instead of the transaction.
    const { ms, error } = await elapsed(sql.begin(async () => sql`select 1 as one`));
    expect(error).toMatchObject({ code: "57014" });
    expect(ms).toBeLessThan(3_000);
    expect(await sql`select 2 as two`).toEqual([{ two: 2 }]);
    await client.close();
  });

  it("rejects a transaction that finds no free connection, and never runs it later", async () => {
    const { sql } = onePool();
    let ranLate = false;
    const holder = sql.begin(async (tx) => tx`select pg_sleep(0.8)`);
    const { ms, error } = await elapsed(
      sql.begin(async () => {
        ranLate = true;
      }),
    );
    expect(error).toBeInstanceOf(PoolTimeoutError);
    expect(ms).toBeLessThan(2_000);
    await holder;
    expect(await sql`select 3 as three`).toEqual([{ three: 3 }]);
    expect(ranLate).toBe(false);
    await client.close();
  });

  it("ends a session left idle inside a transaction, freeing its connection", async () => {
    // Room for the reconnection on a busy machine: seen under load, a query given up while its
    // connection was still being opened left the pool's one connection unusable for good.
    const { sql } = onePool({ acquireTimeoutMs: 3_000 });
    let release: () => void = () => {};
    const stuck = sql.begin(async (tx) => {
      await tx`select 1`;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      await tx`select 1`;
    });
    const outcome = stuck.then(
      () => "committed",
      (error: { code?: string }) => error.code ?? "error",
    );
    // Postgres ends the session after 1 s idle in the transaction; the pool reconnects.
    const answered = await waitFor(async () => (await sql`select 4 as four`)[0]?.four === 4, 6_000);
    expect(answered).toBe(true);
    release();
    expect(await outcome).not.toBe("committed");
    await client.close();
  });

  it("cancels a statement that runs past statement_timeout", async () => {
    const { sql } = onePool();
    const { error } = await elapsed(sql`select pg_sleep(3)`);
    expect(error).toMatchObject({ code: "57014" });
    await client.close();
  });
});

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}
