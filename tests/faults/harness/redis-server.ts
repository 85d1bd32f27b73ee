import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@outcomes/testkit/ports";
import { Redis } from "ioredis";
import { eventually } from "./processes.js";

/**
 * A private redis-server for one test file, so killing or flushing it touches nobody else (the
 * machine's Redis on 6379 is shared). AOF with fsync on every write, as production runs it
 * (compose.yaml): a kill -9 and restart keeps what was acknowledged, BullMQ jobs included.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), "faults-redis-"));

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--dir", this.dir];
    args.push("--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction");
    this.child = spawn("redis-server", args, { stdio: "ignore" });
    await eventually(async () => (await this.command(["PING"])) === "PONG", 10_000, "private redis-server");
  }

  /** kill -9: what is not in the AOF is gone; clients see their connections drop. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }

  async command(args: string[]): Promise<unknown> {
    const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await client.connect();
      const [name, ...rest] = args;
      return await client.call(name!, ...rest);
    } finally {
      client.disconnect();
    }
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
