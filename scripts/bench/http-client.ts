import { connect, type Socket } from "node:net";
import { createHistogram } from "node:perf_hooks";

/**
 * What every request of a load sends. In the URL's path, the header values and the body, `{n}` is
 * replaced by the request's number modulo `distinct` (e.g. a player id) and `{seq}` by the request's
 * number itself (e.g. a fresh idempotency key each).
 */
export interface RequestSpec {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  distinct?: number;
}

export interface LatencySummary {
  completed: number;
  /** Responses by HTTP status, and transport failures as `error:<code>`. */
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

const HEADER_END = Buffer.from("\r\n\r\n");

/**
 * The length of the first complete HTTP/1.1 response in `data` and its status, or null while it is
 * incomplete. Answers carry `Content-Length` or are chunked (both are handled).
 */
function completeResponse(data: Buffer): { length: number; status: number; close: boolean } | null {
  const headerEnd = data.indexOf(HEADER_END);
  if (headerEnd < 0) return null;
  const head = data.toString("latin1", 0, headerEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const close = head.includes("\r\nconnection: close");
  const bodyStart = headerEnd + 4;
  const declared = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (declared) {
    const length = bodyStart + Number(declared[1]);
    return data.length >= length ? { length, status, close } : null;
  }
  if (!head.includes("\r\ntransfer-encoding: chunked")) return { length: bodyStart, status, close };
  let at = bodyStart;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", at);
    if (lineEnd < 0) return null;
    const size = Number.parseInt(data.toString("latin1", at, lineEnd), 16);
    at = lineEnd + 2 + size + 2;
    if (at > data.length) return null;
    if (size === 0) return { length: at, status, close };
  }
}

/**
 * One keep-alive connection sending one request at a time: raw bytes on a socket, no `http.Agent`.
 * The load generator shares the machine's cores with the service, so its own cost per request is
 * kept small (a few µs, against ~50 µs through node:http's client).
 */
class Connection {
  private socket: Socket | null = null;
  private received: Buffer | null = null;
  private pending: ((status: string) => void) | null = null;

  constructor(private readonly target: URL) {}

  send(request: Buffer): Promise<string> {
    return new Promise((resolve) => {
      this.pending = resolve;
      (this.socket ?? this.open()).write(request);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  private open(): Socket {
    const socket = connect({ host: this.target.hostname, port: Number(this.target.port), noDelay: true });
    this.socket = socket;
    this.received = null;
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    // Only the current socket's end fails the pending request (one closed on purpose is replaced).
    const fail = (code: string) => {
      if (this.socket !== socket) return;
      this.socket = null;
      socket.destroy();
      this.settle(`error:${code}`);
    };
    socket.on("error", (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
    socket.on("close", () => fail("ECONNRESET"));
    return socket;
  }

  private onData(chunk: Buffer): void {
    this.received = this.received ? Buffer.concat([this.received, chunk]) : chunk;
    const response = completeResponse(this.received);
    if (!response) return;
    this.received = response.length < this.received.length ? this.received.subarray(response.length) : null;
    if (response.close) this.close();
    this.settle(String(response.status));
  }

  private settle(status: string): void {
    const pending = this.pending;
    this.pending = null;
    pending?.(status);
  }
}

/**
 * Keep-alive requests over at most `maxConnections` connections, each latency recorded from the
 * time the caller says it started (the send time for a closed loop, the scheduled time for an open
 * one); a request finding every connection busy waits for one, and that wait counts.
 */
export function createLoadClient(spec: RequestSpec, maxConnections: number) {
  const target = new URL(spec.url);
  // The path as written: URL would percent-encode the placeholders' braces.
  const path = spec.url.slice(target.origin.length) || "/";
  const head = [
    `${spec.method} ${path} HTTP/1.1`,
    `Host: ${target.host}`,
    ...Object.entries(spec.headers).map(([name, value]) => `${name}: ${value}`),
  ].join("\r\n");
  const fill = (text: string, n: number) =>
    text.replace("{n}", String(n % (spec.distinct ?? 1))).replace("{seq}", String(n));
  const requestBytes = (n: number): Buffer => {
    const filled = fill(head, n);
    if (spec.body === undefined) return Buffer.from(`${filled}\r\n\r\n`, "latin1");
    const body = fill(spec.body, n);
    return Buffer.from(`${filled}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  };
  const latency = createHistogram();
  const statuses: Record<string, number> = {};
  const idle: Connection[] = [];
  const waiting: Array<(connection: Connection) => void> = [];
  const all: Connection[] = [];
  let sent = 0;

  const acquire = (): Promise<Connection> | Connection => {
    const free = idle.pop();
    if (free) return free;
    if (all.length < maxConnections) {
      const connection = new Connection(target);
      all.push(connection);
      return connection;
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const release = (connection: Connection) => {
    const next = waiting.shift();
    if (next) next(connection);
    else idle.push(connection);
  };

  const send = async (startedAt: number): Promise<void> => {
    const request = requestBytes(sent++);
    const connection = await acquire();
    const status = await connection.send(request);
    // Microseconds: the histogram records integers ≥ 1.
    latency.record(Math.max(1, Math.round((performance.now() - startedAt) * 1000)));
    statuses[status] = (statuses[status] ?? 0) + 1;
    release(connection);
  };

  const summary = (): LatencySummary => ({
    completed: Object.values(statuses).reduce((sum, n) => sum + n, 0),
    statuses,
    p50Ms: latency.percentile(50) / 1000,
    p99Ms: latency.percentile(99) / 1000,
    p999Ms: latency.percentile(99.9) / 1000,
    maxMs: latency.max / 1000,
  });

  const close = () => {
    for (const connection of all) connection.close();
  };
  return { send, summary, sent: () => sent, close };
}
