import { randomInt } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { API_CONNECTION_LIMITS, createDatabase, type DatabaseClient, events, insertEvent } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { issueKey } from "@outcomes/testkit/spin-path";
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const WRITERS = 24;
const POOL_CONNECTIONS = 4;
const TRANSACTIONS_PER_WRITER = 8;

let api: TestApi;
let writers: DatabaseClient;
beforeAll(async () => {
  api = await startTestApi();
  // More writers than connections: transactions queue for the pool as well as for each other.
  writers = createDatabase(api.database.url, { max: POOL_CONNECTIONS, limits: API_CONNECTION_LIMITS });
});
afterAll(async () => {
  await writers.close();
  await api.close();
});

class RolledBack extends Error {}

/**
 * One writer: transactions that wait a random time, store an event, then hold the transaction
 * open a random time before committing (or, one in five, rolling back), so commits interleave
 * with other writers' inserts in every order the counter allows.
 */
async function write(partnerId: string, environment: "sandbox" | "production", writer: number): Promise<void> {
  for (let n = 0; n < TRANSACTIONS_PER_WRITER; n++) {
    await writers.db
      .transaction(async (tx) => {
        await tx.execute(sql`select pg_sleep(${randomInt(0, 6) / 1000})`);
        await insertEvent(tx, { partnerId, environment, type: "spin.large_win", data: { writer, n } });
        await tx.execute(sql`select pg_sleep(${randomInt(0, 15) / 1000})`);
        if (randomInt(5) === 0) throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      });
  }
}

interface Listed {
  id: string;
  sequence: number;
}

describe("the event log under concurrent writers", () => {
  it("gives a reader following nextAfter every committed event exactly once, in strictly increasing sequence", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const productionKey = await issueKey(api, partnerId, "production");
    const seen: Listed[] = [];
    let after = 0;
    let pages = 0;
    const readPage = async (key: string, from: number) => {
      const limit = randomInt(1, 40);
      const response = await api.request(`/api/partner/v1/events?after=${from}&limit=${limit}`, { apiKey: key });
      expect(response.status).toBe(200);
      return response.body as { events: Listed[]; nextAfter: number };
    };

    let writing = true;
    const allWritten = Promise.all(
      Array.from({ length: WRITERS }, (_, writer) =>
        write(partnerId, writer % 4 === 0 ? "production" : "sandbox", writer),
      ),
    ).finally(() => {
      writing = false;
    });
    allWritten.catch(() => {}); // a writer's failure is thrown below, once the reader has stopped
    // The reader pages all the while, and once more after the last commit until it is caught up.
    for (;;) {
      const stillWriting = writing;
      const page = await readPage(apiKey, after);
      pages++;
      for (const event of page.events) {
        expect(event.sequence).toBeGreaterThan(seen.at(-1)?.sequence ?? 0);
        seen.push({ id: event.id, sequence: event.sequence });
      }
      expect(page.nextAfter).toBe(page.events.at(-1)?.sequence ?? after);
      after = page.nextAfter;
      if (!stillWriting && page.events.length === 0) break;
      if (page.events.length === 0) await sleep(randomInt(0, 5));
    }
    await allWritten;

    const committed = await api.database.db
      .select({ id: events.id, sequence: events.sequence, environment: events.environment })
      .from(events)
      .where(eq(events.partnerId, partnerId))
      .orderBy(asc(events.sequence));
    const sandbox = committed
      .filter((row) => row.environment === "sandbox")
      .map(({ id, sequence }) => ({ id, sequence }));
    expect(seen).toEqual(sandbox);
    // Rolled-back transactions leave no gap: the counter's increment rolls back with them.
    expect(seen.map((event) => event.sequence)).toEqual(sandbox.map((_, i) => i + 1));
    expect(sandbox.length).toBeGreaterThan(WRITERS * TRANSACTIONS_PER_WRITER * 0.5);
    expect(pages).toBeGreaterThan(10);

    const production: Listed[] = [];
    for (let from = 0; ; ) {
      const page = await readPage(productionKey, from);
      if (page.events.length === 0) break;
      production.push(...page.events.map(({ id, sequence }) => ({ id, sequence })));
      from = page.nextAfter;
    }
    expect(production.map((event) => event.id)).toEqual(
      committed.filter((row) => row.environment === "production").map((row) => row.id),
    );
  });
});
