import { execFile } from "node:child_process";
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { isFree } from "./ports.js";

const SCRIPT = fileURLToPath(new URL("../../../scripts/redis-cluster.sh", import.meta.url));
const run = promisify(execFile);

/** A local Redis Cluster started by scripts/redis-cluster.sh: 3 masters with a replica each. */
export interface LocalCluster {
  /** The REDIS_CLUSTER_NODES value that reaches it. */
  nodes: string;
  /** Ports of its six nodes. */
  ports: number[];
  /** kill -9 of one node: what it had not replicated yet is gone; its replica takes over. */
  kill: (port: number) => void;
  stop: () => Promise<void>;
}

/**
 * Starts a cluster on six free ports (a node also listens on its port + 10000 for the cluster
 * bus), in a temp dir, without persistence; resolves once cluster_state is ok everywhere.
 */
export async function startLocalCluster(options: { nodeTimeoutMs?: number } = {}): Promise<LocalCluster> {
  const base = await freePortBase();
  const env = { ...process.env, NODE_TIMEOUT_MS: String(options.nodeTimeoutMs ?? 1000) };
  const { stdout } = await run("bash", [SCRIPT, "start", String(base)], { env, timeout: 60_000 });
  const nodes = /REDIS_CLUSTER_NODES=(\S+)/.exec(stdout)?.[1];
  if (!nodes) throw new Error(`scripts/redis-cluster.sh start printed no nodes:\n${stdout}`);
  return {
    nodes,
    ports: Array.from({ length: 6 }, (_, index) => base + index),
    kill: (port) => {
      // The script's directory for this base (TMPDIR as the script sees it).
      const pidFile = join(tmpdir(), `redis-cluster-${base}`, `${port}.pid`);
      process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGKILL");
    },
    stop: async () => {
      await run("bash", [SCRIPT, "stop", String(base)], { timeout: 30_000 });
    },
  };
}

/** A base port whose six ports and their cluster-bus ports (+10000) are all free just now. */
async function freePortBase(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Bases below 20,000 keep the bus ports (+10,000) below the ephemeral range too (ports.ts).
    const base = 10_000 + randomInt(5_000) * 2;
    const ports = Array.from({ length: 6 }, (_, index) => base + index);
    const free = await Promise.all([...ports, ...ports.map((port) => port + 10_000)].map(isFree));
    if (free.every(Boolean)) return base;
  }
  throw new Error("no six consecutive free ports for a Redis Cluster");
}
