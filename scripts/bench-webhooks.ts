import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { newId } from "@outcomes/core";
import {
  apiKeys,
  createDatabase,
  insertEvents,
  newWebhookSecret,
  partners,
  webhookDeliveries,
  webhooks,
} from "@outcomes/db";
import { createWorkerRedis, deleteKeysUnder } from "@outcomes/queue";
import { parseEnv } from "@outcomes/runtime";
import { verifyStandardWebhook, verifyWebhookSignature } from "@outcomes/sdk";
import { count } from "drizzle-orm";
import { loadAverage, processCpuMs } from "./bench/cpu.js";
import { benchDeployment, startWebhooksWorker } from "./bench/webhooks-worker.js";

/**
 * `npx tsx scripts/bench-webhooks.ts [--events 20000 --webhooks 1 --delay-ms 0 --worker-bundle <main.js>]`
 *
 * How many deliveries per second one `webhooks` worker process sustains against a local receiver.
 * Seeds a throwaway database (`outcomes_bench_webhooks_<run id>`) with a backlog of undispatched outbox
 * events, starts the worker exactly as `npm run start:worker -- --role webhooks` does (the bundle,
 * its own process, default settings), and times fan-out plus signed delivery of every event to a node:http
 * receiver on loopback that answers 200 after `--delay-ms`. Then checks nothing was lost or sent
 * twice and every signature verifies, and cleans up. `--profile` writes the worker's CPU profile
 * to bench-results/.
 */
const { values: args } = parseArgs({
  options: {
    events: { type: "string", default: "20000" },
    webhooks: { type: "string", default: "1" },
    "delay-ms": { type: "string", default: "0" },
    /** Writes a V8 CPU profile of the worker process to bench-results/. */
    profile: { type: "boolean", default: false },
    /** Runs this worker bundle instead of building this tree's (an A/B against another commit's build). */
    "worker-bundle": { type: "string" },
    /** Also writes the figures to this file (`npm run bench` includes them in its results). */
    json: { type: "string" },
  },
});
const eventCount = Number(args.events);
const webhookCount = Number(args.webhooks);
const delayMs = Number(args["delay-ms"]);
const expected = eventCount * webhookCount;

/** The partner's endpoint: records each request's raw bytes and answers 200 after the delay. */
async function startReceiver() {
  const received: Array<{ at: number; headers: Record<string, string>; body: Buffer }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({
        at: performance.now(),
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks),
      });
      const answer = () => res.writeHead(200).end();
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

async function seed(db: ReturnType<typeof createDatabase>["db"], url: string) {
  const partnerId = newId("ptr");
  await db.insert(partners).values({ id: partnerId, slug: `bench-${randomBytes(3).toString("hex")}`, name: "Bench" });
  // Keys are not used here; one keeps the data shaped like a real partner's.
  await db.insert(apiKeys).values({
    id: newId("key"),
    partnerId,
    environment: "sandbox",
    keyHash: randomBytes(32).toString("hex"),
    prefix: "ks_sandbox_bnch",
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  const secrets = new Map<string, string>();
  for (let i = 0; i < webhookCount; i++) {
    const id = newId("whk");
    const secret = newWebhookSecret();
    secrets.set(id, secret);
    await db
      .insert(webhooks)
      .values({ id, partnerId, environment: "sandbox", url, events: ["spin.large_win"], secret });
  }
  for (let start = 0; start < eventCount; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, eventCount - start) }, (_, i) => ({
      partnerId,
      environment: "sandbox" as const,
      type: "spin.large_win" as const,
      data: { spinId: newId("spn"), gameId: 1, playerId: `p-${start + i}`, wagerUsd: 10, payoutUsd: 5000 },
    }));
    await insertEvents(db, batch);
  }
  return secrets;
}

async function startWorker(): Promise<{ child: ChildProcess; startedAt: number }> {
  const nodeFlags = args.profile ? ["--cpu-prof", "--cpu-prof-dir", "bench-results"] : [];
  const child = await startWebhooksWorker({ deployment, bundle: args["worker-bundle"], nodeFlags });
  return { child, startedAt: performance.now() };
}

const deployment = await benchDeployment("webhooks");
const database = createDatabase(deployment.databaseUrl, { max: 2 });
const redis = createWorkerRedis(
  parseEnv({ REDIS_URL: deployment.redisUrl, REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES }),
);
const receiver = await startReceiver();
let worker: ChildProcess | undefined;
try {
  const secrets = await seed(database.db, receiver.url);
  const started = await startWorker();
  worker = started.child;
  const deadline = Date.now() + 600_000;
  while (receiver.received.length < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const workerCpuMs = processCpuMs(worker.pid);
  // Give a duplicate, if any, the time to show up before counting.
  await new Promise((resolve) => setTimeout(resolve, 1000));

  const { received } = receiver;
  const first = received[0]?.at ?? started.startedAt;
  const last = received[received.length - 1]?.at ?? first;
  const deliverySeconds = (last - first) / 1000;
  const endToEndSeconds = (last - started.startedAt) / 1000;
  const distinct = new Set(received.map((request) => request.headers["x-service-delivery-id"])).size;
  const [rows] = await database.db.select({ n: count() }).from(webhookDeliveries);
  // Both header families verify with the secret of the webhook that was sent to.
  const signed = received.every((request) =>
    [...secrets.values()].some(
      (secret) =>
        verifyWebhookSignature({
          rawBody: request.body,
          signatureHeader: request.headers["x-service-signature"],
          secret,
        }) &&
        verifyStandardWebhook({ rawBody: request.body, headers: request.headers, secret, toleranceSeconds: 3600 }),
    ),
  );

  console.log(`\nwebhooks worker: ${eventCount} events × ${webhookCount} webhook(s), receiver delay ${delayMs} ms`);
  console.log(
    `delivered        ${received.length} requests, ${distinct} distinct delivery ids, ${rows?.n} delivery rows`,
  );
  console.log(
    `delivery rate    ${Math.round(received.length / deliverySeconds)}/s (first to last request, ${deliverySeconds.toFixed(2)} s)`,
  );
  console.log(
    `with fan-out     ${Math.round(received.length / endToEndSeconds)}/s (worker start to last request, ${endToEndSeconds.toFixed(2)} s)`,
  );
  console.log(
    `worker CPU       ${workerCpuMs === null ? "?" : Math.round((workerCpuMs * 1000) / received.length)} µs per delivery (start-up and fan-out included), load average ${loadAverage()}`,
  );
  console.log(`signatures       ${signed ? "all verify" : "SOME DO NOT VERIFY"}`);
  const consistent = received.length === expected && distinct === expected && rows?.n === expected && signed;
  if (args.json) {
    writeFileSync(
      args.json,
      JSON.stringify({
        events: eventCount,
        webhooks: webhookCount,
        receiverDelayMs: delayMs,
        deliveries: received.length,
        perSecond: Math.round(received.length / deliverySeconds),
        withFanOutPerSecond: Math.round(received.length / endToEndSeconds),
        workerCpuUsPerDelivery: workerCpuMs === null ? null : Math.round((workerCpuMs * 1000) / received.length),
        loadAverage: loadAverage(),
        consistent,
      }),
    );
  }
  if (!consistent) {
    console.log("INCONSISTENT: lost or duplicated deliveries");
    process.exitCode = 1;
  }
} finally {
  if (worker && worker.exitCode === null) {
    worker.kill("SIGTERM");
    await once(worker, "exit");
  }
  receiver.server.closeAllConnections();
  receiver.server.close();
  await deleteKeysUnder(redis, deployment.prefix);
  await redis.quit();
  await database.close();
  await deployment.drop();
}
