import { randomBytes } from "node:crypto";
import { API_CONNECTION_LIMITS, createDatabase, type DatabaseClient } from "@outcomes/db";
import { createWorkerRedis, deleteKeysUnder, type RedisClient, type RedisTarget } from "@outcomes/queue";
import { parseEnv } from "@outcomes/runtime";
import postgres from "postgres";

/**
 * Test databases: vitest's global setup migrates one template database; each test file copies it
 * (`CREATE DATABASE … TEMPLATE`, a file copy, milliseconds) so files run in parallel, isolated.
 */
function templateName(): string {
  return process.env.TEST_TEMPLATE_DATABASE ?? "outcomes_test_template";
}

function withDatabase(url: string, name: string): string {
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}

export function templateDatabaseUrl(baseUrl: string): string {
  return withDatabase(baseUrl, templateName());
}

export interface TestDatabase extends DatabaseClient {
  url: string;
  drop: () => Promise<void>;
}

export async function createTestDatabase(baseUrl = requiredEnv("DATABASE_URL")): Promise<TestDatabase> {
  const name = `outcomes_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}" template "${templateName()}"`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(baseUrl, name);
  // The API's limits: the test API runs on this client, as production runs on its own.
  const client = createDatabase(url, { max: 10, limits: API_CONNECTION_LIMITS });
  return {
    ...client,
    url,
    drop: async () => {
      await client.close();
      const cleanup = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });
      try {
        await cleanup.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

/**
 * A Redis key prefix of its own for one test file. On a cluster too it isolates files: every key
 * starts with it (hash tags come after it), and BullMQ's are under `{prefix:bull}`.
 */
export function testRedisPrefix(): string {
  return `test:${randomBytes(6).toString("hex")}`;
}

/**
 * The Redis the tests run against: REDIS_URL, or the cluster of REDIS_CLUSTER_NODES when the global
 * setup started one (the `cluster` vitest projects).
 */
export function testRedisTarget(): RedisTarget {
  return parseEnv({ REDIS_URL: requiredEnv("REDIS_URL"), REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES });
}

/** A connection to the tests' Redis (one server or the cluster), as workers open it. */
export function testRedis(): RedisClient {
  return createWorkerRedis(testRedisTarget());
}

/** Removes every key of a test prefix (BullMQ's included), on each master of a cluster. */
export async function deleteTestKeys(prefix: string): Promise<void> {
  const redis = testRedis();
  try {
    await deleteKeysUnder(redis, prefix);
  } finally {
    await redis.quit();
  }
}

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set for tests (vitest global setup sets it)`);
  return value;
}
