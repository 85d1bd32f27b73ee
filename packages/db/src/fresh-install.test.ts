import { CURRENT_RELEASE } from "@outcomes/core";
import { databaseBeforeMigration } from "@outcomes/testkit/migrations";
import { afterEach, describe, expect, it } from "vitest";
import { createDatabase } from "./client.js";
import { migrateDatabase } from "./migrate.js";
import { newestFinishedRelease } from "./repositories/release-rollouts.js";

/**
 * Which rollout a migration run records (docs/upgrades.md): a fresh install has no earlier release
 * beside it, so the current release's features are on from the start; a database an earlier release
 * migrated waits for `release finish`.
 */
const scratches: Array<Awaited<ReturnType<typeof databaseBeforeMigration>>> = [];
afterEach(async () => {
  for (const scratch of scratches.splice(0)) await scratch.drop();
});

async function finishedAfterMigrating(url: string): Promise<number> {
  await migrateDatabase(url);
  const database = createDatabase(url, { max: 1 });
  try {
    return await newestFinishedRelease(database.db);
  } finally {
    await database.close();
  }
}

describe("the rollout a migration run records", () => {
  it("is finished for the current release on an empty database, and stays so when migrated again", async () => {
    const scratch = await databaseBeforeMigration("0001_superb_sally_floyd");
    scratches.push(scratch);
    expect(await finishedAfterMigrating(scratch.url)).toBe(CURRENT_RELEASE);
    expect(await finishedAfterMigrating(scratch.url)).toBe(CURRENT_RELEASE);
  });

  it("is left running on a database an earlier release migrated", async () => {
    const scratch = await databaseBeforeMigration("0012_player_bounds_numeric_rollups");
    scratches.push(scratch);
    await scratch.migrateBefore(); // release 1's migrations, 0000 to 0011
    expect(await finishedAfterMigrating(scratch.url)).toBe(0);
  });
});
