import { request } from "node:http";
import type { ApiInstance } from "./deployment.js";

/** Sends of one request, at most: enough to go round two releases' APIs twice. */
const MAX_SENDS = 4;

/** An HTTP answer and the release whose API process gave it. */
export interface BalancedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  servedBy: string;
  /** Sends that failed before this answer: refused connections, and resets by a stopping process. */
  resent: { refused: number; reset: number };
}

export interface BalancedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  json?: unknown;
  timeoutMs: number;
}

/**
 * What a load balancer in front of the API processes does during a rollout. Each request goes to
 * the next process in rotation. A process is taken out of rotation as its SIGTERM is sent (an
 * orchestrator removes the endpoint while it signals); requests already on their way still reach it:
 * - a refused connection (it no longer listens) never reached it: the request goes to the next one;
 * - a connection it resets without an answer (accepted but not yet read when it closed: the kernel's
 *   backlog, or a socket Node counts as idle) is sent to the next one too. A request it had read, it
 *   answers before it exits (graceful stop), so a resent request spins once: the ledger check
 *   proves it, as a spin stored that no client saw succeed is a violation.
 * Any other failure, or a reset by a process in rotation, is the client's to see.
 * One connection per request (no keep-alive), so a stopping process never closes a pooled
 * connection under a request that had already been sent on it.
 */
export class Balancer {
  private rotation: ApiInstance[] = [];
  private readonly stopping = new Set<ApiInstance>();
  private next = 0;

  add(api: ApiInstance): void {
    this.rotation = [...this.rotation, api];
  }

  /** Out of rotation, as its SIGTERM is sent. */
  retire(api: ApiInstance): void {
    this.rotation = this.rotation.filter((member) => member !== api);
    this.stopping.add(api);
  }

  /** Sends to the next process (or to `to` alone); a refusal or a stopping process's reset moves on. */
  async send(options: BalancedRequest, to?: ApiInstance): Promise<BalancedAnswer> {
    const resent = { refused: 0, reset: 0 };
    for (let attempt = 0; attempt < MAX_SENDS; attempt++) {
      const api = to ?? this.pick();
      if (!api) break;
      try {
        return { ...(await send(api, options)), servedBy: api.release.label, resent };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ECONNREFUSED") resent.refused++;
        else if (code === "ECONNRESET" && this.stopping.has(api)) resent.reset++;
        else throw error;
        if (to) break;
      }
    }
    throw Object.assign(new Error(`no API process answered (${JSON.stringify(resent)})`), { code: "NO_ANSWER" });
  }

  private pick(): ApiInstance | undefined {
    const members = this.rotation;
    return members.length === 0 ? undefined : members[this.next++ % members.length];
  }
}

/** One request on a connection of its own; a timeout rejects with code "TIMEOUT". */
function send(api: ApiInstance, options: BalancedRequest): Promise<Omit<BalancedAnswer, "servedBy" | "resent">> {
  const url = new URL(options.path, api.client.baseUrl);
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method,
        path: url.pathname + url.search,
        agent: false,
        headers: { ...options.headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        timeout: options.timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: parsed });
        });
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(Object.assign(new Error("no answer in time"), { code: "TIMEOUT" })));
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}
