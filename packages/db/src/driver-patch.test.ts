import { setTimeout as sleep } from "node:timers/promises";
import { testDatabaseForFile } from "@outcomes/testkit/file-fixture";
import postgres from "postgres";
import { expect, it } from "vitest";

const database = testDatabaseForFile();

/** Settles within `ms`, so a driver that never answers fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms = 5_000): Promise<T> {
  return Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`no answer within ${ms} ms`)))]);
}

// patches/postgres+3.4.9.patch: unpatched, a query written on a reserved connection whose backend
// has died throws from a timer (porsager/postgres#1208) and takes the whole process down.
it("rejects queries on a dead reserved connection instead of crashing the process", async () => {
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  const killer = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    const reserved = await sql.reserve();
    const [row] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const pid = row?.pid ?? 0;
    await killer`select pg_terminate_backend(${pid})`;
    // Wait until the backend is gone and the client has seen its socket close.
    for (let i = 0; i < 100; i++) {
      const [alive] = await killer<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where pid = ${pid}`;
      if (alive?.n === 0) break;
      await sleep(50);
    }
    await sleep(200);
    await expect(within(reserved`select 1`)).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    await expect(within(reserved`select 1`)).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    reserved.release();
  } finally {
    await Promise.all([sql.end({ timeout: 1 }), killer.end({ timeout: 1 })]);
  }
});
