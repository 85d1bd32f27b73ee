import { execSync } from "node:child_process";
import { migrateDatabase } from "@outcomes/db";
import postgres from "postgres";
import { templateDatabaseUrl } from "./databases.js";

/**
 * Integration tests run against DATABASE_URL / REDIS_URL (the machine's services, as on CI).
 * Where those are unset and Docker runs (a contributor's laptop), testcontainers provides them.
 * The template database is migrated once here; each test file copies it.
 */
export default async function setup() {
  const stops: Array<() => Promise<unknown>> = [];
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
    if (dockerAvailable()) {
      const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
      const { RedisContainer } = await import("@testcontainers/redis");
      if (!process.env.DATABASE_URL) {
        const pg = await new PostgreSqlContainer("postgres:17-alpine").start();
        process.env.DATABASE_URL = pg.getConnectionUri();
        stops.push(() => pg.stop());
      }
      if (!process.env.REDIS_URL) {
        const redis = await new RedisContainer("redis:7-alpine").start();
        process.env.REDIS_URL = redis.getConnectionUrl();
        stops.push(() => redis.stop());
      }
    }
    process.env.DATABASE_URL ??= "postgres://postgres@127.0.0.1:5432/postgres";
    process.env.REDIS_URL ??= "redis://127.0.0.1:6379";
  }

  // A template of this run's own, so two test runs on one machine never share one.
  process.env.TEST_TEMPLATE_DATABASE = `outcomes_test_template_${process.pid}`;
  const baseUrl = process.env.DATABASE_URL;
  await dropDatabase(baseUrl, process.env.TEST_TEMPLATE_DATABASE);
  await migrateDatabase(templateDatabaseUrl(baseUrl));

  return async () => {
    await dropDatabase(baseUrl, process.env.TEST_TEMPLATE_DATABASE ?? "");
    for (const stop of stops) await stop();
  };
}

function dockerAvailable(): boolean {
  try {
    execSync("docker info", { stdio: "ignore", timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

async function dropDatabase(baseUrl: string, name: string) {
  const url = new URL(baseUrl);
  url.pathname = "/postgres";
  const admin = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
}
