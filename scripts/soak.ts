/**
 * Soak: `npm run soak [-- --minutes 10 --clients 6]`. Starts the real API and an all-roles worker
 * over a database and Redis prefix of their own, drives mixed load (spins, listings, and webhook
 * traffic to a receiver that fails ~30 % of deliveries), and reports per minute: answers by code,
 * latency percentiles per kind, API and worker RSS. Checks the ledger at the end; writes
 * bench-results/soak.json. Not part of `npm test`.
 */
import { randomInt, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { microsToUsd } from "@outcomes/core";
import { migrateDatabase } from "@outcomes/db";
import { bullPrefix } from "@outcomes/queue";
import { freePort } from "@outcomes/testkit/ports";
import { Redis } from "ioredis";
import postgres from "postgres";
import { ApiClient, createWorld, FAULT_ADMIN_TOKEN } from "../tests/faults/harness/http.js";
import { checkLedger } from "../tests/faults/harness/invariants.js";
import { ServiceProcess, sleep, startApi } from "../tests/faults/harness/processes.js";
import { Receiver } from "../tests/faults/harness/receiver.js";
import { LatencyBucket, round, rssMiB } from "./soak/stats.js";

const { values } = parseArgs({
  options: { minutes: { type: "string", default: "10" }, clients: { type: "string", default: "6" } },
});
const minutes = Number(values.minutes);
const clients = Number(values.clients);
const baseDatabaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const suffix = randomUUID().slice(0, 8);
const databaseUrl = Object.assign(new URL(baseDatabaseUrl), { pathname: `/outcomes_soak_${suffix}` }).toString();
const redisPrefix = `soak:${suffix}`;

interface Minute {
  answers: Record<string, number>;
  latency: Record<string, LatencyBucket>;
  apiRssMiB: number | null;
  workerRssMiB: number | null;
}

const admin = postgres(Object.assign(new URL(baseDatabaseUrl), { pathname: "/postgres" }).toString(), { max: 1 });
await admin.unsafe(`create database "outcomes_soak_${suffix}"`);
await migrateDatabase(databaseUrl);
const port = await freePort();
const env = {
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  REDIS_PREFIX: redisPrefix,
  PORT: String(port),
  ADMIN_TOKEN: FAULT_ADMIN_TOKEN,
  RATE_LIMIT_SPINS_PER_SECOND: "100000",
  RATE_LIMIT_REQUESTS_PER_SECOND: "100000",
  WEBHOOK_RETRY_DELAYS_MS: "500,1000,2000,4000",
  WORKER_METRICS_PORT: "0",
  LOG_LEVEL: "warn",
};
const api = ServiceProcess.api("api", { ...env, LOG_LEVEL: "info" });
const worker = ServiceProcess.worker("worker", ["all"], { ...env, LOG_LEVEL: "info" });
const receiver = await Receiver.start(() => (randomInt(10) < 3 ? 500 : 204));
const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
const redis = new Redis(redisUrl);
const client = new ApiClient(`http://127.0.0.1:${port}`);
const report: Record<string, unknown> = { minutes, clients, startedAt: new Date().toISOString() };

try {
  await worker.start("role started");
  await startApi(api, client.baseUrl);
  const world = await createWorld(client);
  // A low large-win threshold turns a share of spins into webhook deliveries.
  await client.expect(200, "PATCH", `/api/partner/v1/games/${world.gameId}`, {
    apiKey: world.apiKey,
    json: { largeWinThresholdUsd: 5 },
  });
  const webhook = await client.expect(201, "POST", "/api/partner/v1/webhooks", {
    apiKey: world.apiKey,
    json: { url: receiver.url, events: ["spin.large_win", "block.low_reserve"] },
  });
  await sleep(3_000);

  const perMinute: Minute[] = [];
  const accepted = new Map<string, { playerId: string; wagerMicros: number }>();
  const startedAt = Date.now();
  const endAt = startedAt + minutes * 60_000;
  const minuteOf = () => {
    const index = Math.min(Math.ceil(minutes) - 1, Math.floor((Date.now() - startedAt) / 60_000));
    perMinute[index] ??= { answers: {}, latency: {}, apiRssMiB: null, workerRssMiB: null };
    return perMinute[index]!;
  };
  const timed = async (kind: string, run: () => Promise<{ status: number; body: any }>) => {
    const started = performance.now();
    const answer = await run().catch(() => ({ status: 0, body: { errorCode: "network" } }));
    const minute = minuteOf();
    minute.latency[kind] ??= new LatencyBucket();
    minute.latency[kind].add(performance.now() - started);
    const label = answer.status >= 200 && answer.status < 300 ? "2xx" : `${answer.status} ${answer.body?.errorCode}`;
    minute.answers[label] = (minute.answers[label] ?? 0) + 1;
    return answer;
  };

  const loop = async (clientIndex: number) => {
    for (let n = 0; Date.now() < endAt; n++) {
      const playerId = `soak-c${clientIndex}-p${n % 50}`;
      const pick = randomInt(100);
      if (pick < 80) {
        const wagerMicros = [250_000, 1_000_000, 2_370_000][randomInt(3)]!;
        const answer = await timed("spin", () =>
          client.call("POST", "/api/partner/v1/spins", {
            apiKey: world.apiKey,
            json: { gameId: world.gameId, playerId, wagerUsd: microsToUsd(wagerMicros) },
            retryIdleReset: false,
          }),
        );
        if (answer.status === 200) accepted.set(answer.body.spinId, { playerId, wagerMicros });
      } else if (pick < 90) {
        await timed("player-spins", () =>
          client.call("GET", `/api/partner/v1/players/${playerId}/spins?limit=20`, { apiKey: world.apiKey }),
        );
      } else if (pick < 95) {
        await timed("games", () => client.call("GET", "/api/partner/v1/games", { apiKey: world.apiKey }));
      } else {
        await timed("deliveries", () =>
          client.call("GET", `/api/partner/v1/webhooks/${webhook.id}/deliveries?limit=50`, { apiKey: world.apiKey }),
        );
      }
      await sleep(2);
    }
  };
  const sampler = setInterval(() => {
    const minute = minuteOf();
    minute.apiRssMiB = rssMiB(api.pid);
    minute.workerRssMiB = rssMiB(worker.pid);
  }, 5_000);
  await Promise.all(Array.from({ length: clients }, (_, index) => loop(index)));
  clearInterval(sampler);
  await sleep(10_000); // let the last deliveries and retries land

  const ledger = await checkLedger(sql, world.partnerId, accepted);
  const deliveries = await sql<{ status: string; n: number }[]>`
    select status, count(*)::int as n from webhook_deliveries group by status order by status`;
  const rows = perMinute.map((minute, index) => ({
    minute: index + 1,
    answers: minute.answers,
    latencyMs: Object.fromEntries(Object.entries(minute.latency).map(([kind, bucket]) => [kind, bucket.summary()])),
    apiRssMiB: minute.apiRssMiB,
    workerRssMiB: minute.workerRssMiB,
  }));
  const steady = rows.slice(Math.min(1, rows.length - 1));
  const growth = (key: "apiRssMiB" | "workerRssMiB") => {
    const first = steady[0]?.[key];
    const last = steady.at(-1)?.[key];
    return first && last ? round(((last - first) / first) * 100) : null;
  };
  Object.assign(report, {
    perMinute: rows,
    rssGrowthPercentAfterFirstMinute: { api: growth("apiRssMiB"), worker: growth("workerRssMiB") },
    webhookDeliveries: Object.fromEntries(deliveries.map((row) => [row.status, row.n])),
    receiverRequests: receiver.received.length,
    receiverDistinctDeliveries: new Set(receiver.received.map((r) => r.deliveryId)).size,
    ledger: { ...ledger, missing: ledger.missing.length, mismatched: ledger.mismatched.length },
    serverErrorLines: [...api.linesWith('"level":50'), ...worker.linesWith('"level":50')].length,
  });
  for (const row of rows) {
    const spin = row.latencyMs.spin;
    console.log(
      `minute ${row.minute}: ${JSON.stringify(row.answers)} spin p50 ${spin?.p50} p99 ${spin?.p99} max ${spin?.max} ms; RSS api ${row.apiRssMiB} MiB, worker ${row.workerRssMiB} MiB`,
    );
  }
  console.log(JSON.stringify({ ...report, perMinute: undefined }, null, 2));
  mkdirSync("bench-results", { recursive: true });
  writeFileSync("bench-results/soak.json", `${JSON.stringify(report, null, 2)}\n`);
  const healthy =
    ledger.missing.length === 0 && ledger.balanceMismatches.length === 0 && ledger.duplicateOutcomes === 0;
  if (!healthy) process.exitCode = 1;
} finally {
  await api.kill("SIGTERM");
  await worker.kill("SIGTERM");
  await receiver.close();
  await sql.end();
  for (const pattern of [`${redisPrefix}:*`, `${bullPrefix(redisPrefix)}*`]) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  }
  redis.disconnect();
  await admin.unsafe(`drop database if exists "outcomes_soak_${suffix}" with (force)`);
  await admin.end();
}
