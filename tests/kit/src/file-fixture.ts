import { afterAll, beforeAll } from "vitest";
import { startTestApi, type TestApi, type TestApiOptions } from "./api.js";
import { createTestDatabase, type TestDatabase } from "./databases.js";

/**
 * A fixture the whole test file shares: `start`ed in a `beforeAll` and `stop`ped in an `afterAll`,
 * both registered by this call, so call it at the top level of the file. What it returns stands for
 * the started fixture (each property is read from it), usable from the file's next `beforeAll` on,
 * so the file needs no `let` to assign in its hooks.
 */
export function fileFixture<T extends object>(start: () => Promise<T>, stop: (fixture: T) => Promise<void>): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    if (started) await stop(started);
  });
  const current = () => {
    if (!started) throw new Error("a file fixture was used before its beforeAll ran");
    return started;
  };
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(current(), key),
    set: (_target, key, value) => Reflect.set(current(), key, value),
  });
}

/** The file's test API (as `startTestApi`), started before its tests and closed after them. */
export function testApiForFile(env: Record<string, string> = {}, options: TestApiOptions = {}): TestApi {
  return fileFixture(
    () => startTestApi(env, options),
    (api) => api.close(),
  );
}

/** The file's test database (a copy of the template), made before its tests and dropped after them. */
export function testDatabaseForFile(): TestDatabase {
  return fileFixture(
    () => createTestDatabase(),
    (database) => database.drop(),
  );
}
