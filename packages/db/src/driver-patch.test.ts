import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./testing.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

// patches/postgres+3.4.9.patch: unpatched, a write scheduled on a connection whose backend died
// throws from a timer (porsager/postgres#1208) and takes the whole process down.
it("rejects queries on a dead reserved connection instead of crashing the process", async () => {
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  const killer = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    const reserved = await sql.reserve();
    const [row] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await killer`select pg_terminate_backend(${row?.pid ?? 0})`;
    await reserved`select 1`.catch(() => {});
    await expect(reserved`select 1`).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    reserved.release();
  } finally {
    await Promise.all([sql.end({ timeout: 1 }), killer.end({ timeout: 1 })]);
  }
});
