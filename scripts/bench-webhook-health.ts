import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { newId } from "@outcomes/core";
import {
  createDatabase,
  type Database,
  insertEvents,
  newWebhookSecret,
  partners,
  requestRecovery,
  webhookDeliveries,
  webhooks,
} from "@outcomes/db";
import { createWorkerRedis, deleteKeysUnder, enqueueRecovery, notifyEvents, Producers } from "@outcomes/queue";
import { parseEnv } from "@outcomes/runtime";
import { seedFailedDeliveries } from "@outcomes/testkit/deliveries";
import { count, eq } from "drizzle-orm";
import { loadAverage } from "./bench/cpu.js";
import { benchDeployment, startWebhooksWorker } from "./bench/webhooks-worker.js";

/**
 * `npx tsx scripts/bench-webhook-health.ts --scenario paced|slow|recover [--backlog 10000 --rate 5 --probes 300]`
 *
 * Measurements of webhook endpoint health (CONTRACT §18, issue #36) and of recover's memory (#33
 * item 8), each on a throwaway database and Redis prefix, against one `webhooks` worker process run
 * as production runs it (the bundle) and a node:http receiver on loopback.
 *
 * - `paced`: a webhook paced at `--rate`/s with a backlog of `--backlog` events, beside a normal
 *   webhook of the same partner and one of another partner. `--probes` events for each of those two
 *   arrive at 20/s meanwhile; prints their delivery latency (event written → request received), p50
 *   and p99. `--backlog 0` is the same run without the backlog: the baseline.
 * - `slow`: the same with an unpaced webhook that never answers (each send ends at the worker's
 *   WEBHOOK_TIMEOUT_MS) in place of the paced one.
 * - `recover`: `--backlog` failed deliveries recovered and delivered; prints the worker's RSS idle,
 *   at its peak and at the end (from /proc).
 */
const { values: args } = parseArgs({
  options: {
    scenario: { type: "string", default: "paced" },
    backlog: { type: "string", default: "10000" },
    rate: { type: "string", default: "5" },
    probes: { type: "string", default: "300" },
    "worker-bundle": { type: "string" },
    /** Writes the worker's output (its log, and `--trace-gc` lines with that flag) to this file. */
    "worker-log": { type: "string" },
    /** A node flag for the worker process (repeatable), e.g. `--worker-flag=--trace-gc`. */
    "worker-flag": { type: "string", multiple: true, default: [] },
  },
});
const backlog = Number(args.backlog);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records when each request arrived, by path (one path per webhook), and answers 200 at once (`/slow`: never). */
async function startReceiver() {
  const received = new Map<string, Array<{ at: number; body: Buffer }>>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const list = received.get(req.url ?? "") ?? [];
      list.push({ at: Date.now(), body: Buffer.concat(chunks) });
      received.set(req.url ?? "", list);
      if (req.url !== "/slow") res.writeHead(200).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const requests = (path: string) => received.get(path)?.length ?? 0;
  return { server, received, base, count: requests };
}

function startWorker(): Promise<ChildProcess> {
  return startWebhooksWorker({
    deployment,
    bundle: args["worker-bundle"],
    nodeFlags: args["worker-flag"],
    logFile: args["worker-log"],
  });
}

/** Resident set of a process now, in MB (VmRSS). */
function rssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function addPartner(db: Database) {
  const partnerId = newId("ptr");
  await db.insert(partners).values({ id: partnerId, slug: `bench-${randomBytes(4).toString("hex")}`, name: "Bench" });
  return partnerId;
}

async function addWebhook(db: Database, partnerId: string, url: string, events: string[], rate?: number) {
  const id = newId("whk");
  await db.insert(webhooks).values({
    id,
    partnerId,
    environment: "sandbox",
    url,
    events: events as never,
    secret: newWebhookSecret(),
    rateLimitPerSecond: rate ?? null,
  });
  return id;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/** A paced or a slow webhook (`--scenario`) with a backlog, beside two others that get probes. */
async function besideBacklog(db: Database, producers: Producers, receiver: Awaited<ReturnType<typeof startReceiver>>) {
  const probes = Number(args.probes);
  const scenario = args.scenario === "slow" ? "slow" : "paced";
  const [one, other] = [await addPartner(db), await addPartner(db)];
  const rate = scenario === "paced" ? Number(args.rate) : undefined;
  const backlogId = await addWebhook(db, one, `${receiver.base}/${scenario}`, ["block.low_reserve"], rate);
  await addWebhook(db, one, `${receiver.base}/same-partner`, ["spin.large_win"]);
  await addWebhook(db, other, `${receiver.base}/other-partner`, ["spin.large_win"]);
  const lowReserve = { gameId: 1, readyBlocks: 1, minReadyBlocks: 2, remainingOutcomes: 10 };
  for (let start = 0; start < backlog; start += 1000) {
    const size = Math.min(1000, backlog - start);
    const event = {
      partnerId: one,
      environment: "sandbox" as const,
      type: "block.low_reserve" as const,
      data: lowReserve,
    };
    await insertEvents(db, Array(size).fill(event));
  }
  const worker = await startWorker();
  const startedAt = Date.now();
  // Fan-out (and the paced webhook's turns handed out: the backlog then waits in the delayed set).
  await notifyEvents(producers);
  const made = async () =>
    (await db.select({ n: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, backlogId)))[0]!.n;
  while ((await made()) < backlog) await sleep(50);
  console.log(`\nbacklog of ${backlog} fanned out in ${Date.now() - startedAt} ms`);
  const written = new Map<string, number>();
  for (let i = 0; i < probes; i++) {
    for (const partnerId of [one, other]) {
      const data = { spinId: newId("spn"), payoutUsd: 5000 };
      const [event] = await insertEvents(db, [{ partnerId, environment: "sandbox", type: "spin.large_win", data }]);
      written.set(event!.id, Date.now());
    }
    await notifyEvents(producers);
    await sleep(50);
  }
  while (receiver.count("/same-partner") + receiver.count("/other-partner") < 2 * probes) await sleep(50);
  const backlogSent = receiver.count(`/${scenario}`);
  const seconds = (Date.now() - startedAt) / 1000;
  worker.kill("SIGTERM");
  await once(worker, "exit");
  const what = scenario === "paced" ? `paced webhook at ${args.rate}/s` : "webhook that never answers";
  console.log(`\n${what} with a backlog of ${backlog}; ${probes} probe events per other webhook`);
  // The probes written in the first half and in the second: a slow endpoint's first sends hold
  // the slots until they time out, which the first half shows and the second no longer should.
  const half = startedAt + (Date.now() - startedAt) / 2;
  for (const path of ["/same-partner", "/other-partner"]) {
    const received = (receiver.received.get(path) ?? []).map((request) => {
      const at = written.get(JSON.parse(request.body.toString("utf8")).id)!;
      return { at, latency: request.at - at };
    });
    const summary = (list: typeof received) => {
      const latencies = list.map((each) => each.latency).sort((a, b) => a - b);
      return `${latencies.length} delivered, latency p50 ${percentile(latencies, 0.5)} ms, p99 ${percentile(latencies, 0.99)} ms, max ${latencies.at(-1)} ms`;
    };
    console.log(`${path.slice(1).padEnd(14)} ${summary(received)}`);
    const [early, late] = [received.filter((each) => each.at < half), received.filter((each) => each.at >= half)];
    console.log(`${"".padEnd(14)} first half: ${summary(early)}; second half: ${summary(late)}`);
  }
  console.log(
    `${scenario.padEnd(14)} ${backlogSent} sent in ${seconds.toFixed(1)} s (${(backlogSent / seconds).toFixed(2)}/s)`,
  );
}

async function recover(db: Database, producers: Producers, receiver: Awaited<ReturnType<typeof startReceiver>>) {
  const partnerId = await addPartner(db);
  const webhookId = await addWebhook(db, partnerId, `${receiver.base}/recovered`, ["block.low_reserve"]);
  await seedFailedDeliveries({ database: { db } }, { partnerId, webhookId, count: backlog });
  const worker = await startWorker();
  await sleep(3000);
  const idle = rssMb(worker.pid);
  const started = Date.now();
  const owner = { partnerId, environment: "sandbox" as const };
  const { recoveryId } = await requestRecovery(db, owner, webhookId, new Date(Date.now() - 3 * 3_600_000));
  await enqueueRecovery(producers, recoveryId!);
  let peak = idle;
  while (receiver.count("/recovered") < backlog) {
    peak = Math.max(peak, rssMb(worker.pid));
    await sleep(100);
  }
  const seconds = (Date.now() - started) / 1000;
  const end = rssMb(worker.pid);
  worker.kill("SIGTERM");
  await once(worker, "exit");
  console.log(`\nrecover of ${backlog} failed deliveries, all delivered in ${seconds.toFixed(1)} s`);
  console.log(`worker RSS: idle ${idle.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, at the end ${end.toFixed(0)} MB`);
}

const deployment = await benchDeployment("health");
const database = createDatabase(deployment.databaseUrl, { max: 4 });
const redis = createWorkerRedis(
  parseEnv({ REDIS_URL: deployment.redisUrl, REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES }),
);
const producers = new Producers(redis, deployment.prefix);
const receiver = await startReceiver();
try {
  if (args.scenario === "recover") await recover(database.db, producers, receiver);
  else await besideBacklog(database.db, producers, receiver);
  console.log(`load average ${loadAverage()}`);
} finally {
  receiver.server.closeAllConnections();
  receiver.server.close();
  await producers.close();
  await database.close();
  await deleteKeysUnder(redis, deployment.prefix);
  redis.disconnect();
  await deployment.drop();
}
