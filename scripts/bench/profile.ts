import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Which part of the stack a function belongs to, from its source URL. */
export function componentOf(url: string, name: string): string {
  if (url.includes("/hono/") || url.includes("@hono/")) return "hono / routing / node-server";
  if (url.includes("/postgres/")) return "postgres driver";
  if (url.includes("/ioredis/") || url.includes("redis-parser") || url.includes("/bullmq/")) return "redis (ioredis)";
  if (url.includes("/pino") || url.includes("sonic-boom")) return "logging (pino)";
  if (url.includes("/zod/")) return "zod validation";
  if (url.includes("/drizzle-orm/")) return "drizzle";
  if (url.includes("/undici/") || url.includes("internal/deps/undici")) return "undici (web Request/Response)";
  if (url.includes("/prom-client/")) return "metrics (prom-client)";
  if (url.includes("/apps/api/src/middleware") || url.includes("/apps/api/src/auth"))
    return "auth / rate limit / guards";
  if (url.includes("/apps/") || url.includes("/packages/")) return "our code";
  if (name === "(garbage collector)") return "garbage collection";
  if (name === "(idle)" || name === "(program)") return name;
  if (name === "JSON.parse" || name === "stringify" || name === "parse") return "JSON";
  if (url.startsWith("node:") || url === "") return "node core / native (sockets, streams)";
  return "other";
}

/**
 * Summarises a V8 `.cpuprofile`: self time per component and the top functions, as µs per request
 * when `requests` is given. Idle time, and the first `skipMs` (start-up, module compilation, warm-up),
 * are left out.
 */
export function summariseProfile(path: string, requests: number, skipMs = 0, top = 15) {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let elapsedUs = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    elapsedUs += delta;
    if (elapsedUs >= skipMs * 1000) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const components = new Map<string, number>();
  const functions = new Map<string, { us: number; component: string }>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const component = componentOf(url, functionName);
    if (component === "(idle)") continue;
    components.set(component, (components.get(component) ?? 0) + us);
    const file = url.split("/node_modules/").pop()?.split("/work/main/").pop() ?? url;
    const key = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    const entry = functions.get(key) ?? { us: 0, component };
    entry.us += us;
    functions.set(key, entry);
  }
  const per = (us: number) => Math.round((us / Math.max(1, requests)) * 10) / 10;
  return {
    components: [...components].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, usPerRequest: per(us) })),
    functions: [...functions]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([name, entry]) => ({ name, component: entry.component, usPerRequest: per(entry.us) })),
  };
}

// `npx tsx scripts/bench/profile.ts <file.cpuprofile> <requests> [skipMs]`
if (process.argv[1]?.endsWith("profile.ts") && process.argv[2]) {
  const [, , path, requests, skipMs] = process.argv;
  console.log(JSON.stringify(summariseProfile(path as string, Number(requests ?? 1), Number(skipMs ?? 0)), null, 2));
}
