import { connect, type Socket } from "node:net";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Clients that send slowly, or not at all, hold nothing for long (issue 38, item 2), on raw sockets
 * since no HTTP client sends like this: a request without a key or token is answered from its
 * headers (its body never read), and the server's header and request timeouts and connection cap
 * (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_MAX_CONNECTIONS) close the rest. The
 * timeouts are short here; the defaults are 10 s and 30 s.
 */
const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;

let api: TestApi;
let apiKey: string;
beforeAll(async () => {
  api = await startTestApi({
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  });
  apiKey = (await api.createPartner()).apiKey;
});
afterAll(async () => {
  await api?.close();
});

interface Connection {
  socket: Socket;
  /** What the server sent so far. */
  received: () => string;
  /** Milliseconds from connecting to the first byte of an answer (rejects when closed without one). */
  answered: Promise<number>;
  /** Milliseconds from connecting to the server closing the connection. */
  closed: Promise<number>;
}

async function open(api: TestApi, head = ""): Promise<Connection> {
  const { hostname, port } = new URL(api.baseUrl);
  const socket = connect(Number(port), hostname);
  socket.on("error", () => {}); // a reset is a close here
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const started = performance.now();
  let text = "";
  const answered = new Promise<number>((resolve, reject) => {
    socket.once("data", () => resolve(performance.now() - started));
    socket.once("close", () => reject(new Error("closed without an answer")));
  });
  answered.catch(() => {});
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString("latin1");
  });
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(performance.now() - started)));
  if (head) socket.write(head);
  return { socket, received: () => text, answered, closed };
}

/** Request line and headers of a POST announcing a body of `length` bytes, none of it sent. */
const postHead = (path: string, length: number, headers: Record<string, string> = {}) =>
  `POST ${path} HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${Object.entries(
    headers,
  )
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;

/** Resolves with the value, or rejects once `ms` have passed. */
const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)),
  ]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a request without credentials is refused from its headers, its body never read", () => {
  it.each([
    ["a partner spin without a key", "/api/partner/v1/spins", {}, "KS-4001"],
    ["a partner spin with an unknown key", "/api/partner/v1/spins", { "X-API-Key": "ks_sandbox_nope" }, "KS-4002"],
    ["an operator write without a token", "/api/admin/v1/partners", {}, "KS-4001"],
    ["a dashboard write without credentials", "/admin/queues/api/queues/settlements/add", {}, "KS-4001"],
  ])("%s: 401 at once, Content-Length 1000000 and no byte of it sent", async (_, path, headers, code) => {
    const connection = await open(api, postHead(path, 1_000_000, headers));
    // Well before the request timeout, which is when a server waiting for the body would give up.
    const ms = await within(connection.answered, REQUEST_TIMEOUT_MS - 500, path);
    await within(connection.closed, 1_000, `${path} closing`);
    const answer = connection.received();
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain(`"errorCode":"${code}"`);
    expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS - 500);
  });
});

describe("the server's timeouts close stalled connections", () => {
  it("a body sent one byte at a time: closed at the request timeout", async () => {
    const connection = await open(api, postHead("/api/partner/v1/spins", 200, { "X-API-Key": apiKey }));
    const trickle = setInterval(() => connection.socket.write("{"), 200);
    try {
      const ms = await within(connection.closed, REQUEST_TIMEOUT_MS + 3_000, "slow body");
      expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
      expect(connection.received()).not.toMatch(/^HTTP\/1\.1 2/);
    } finally {
      clearInterval(trickle);
    }
  });

  it("headers that never end: closed at the headers timeout", async () => {
    const connection = await open(api, "GET /healthz HTTP/1.1\r\nHost: api.test\r\n");
    let line = 0;
    const trickle = setInterval(() => connection.socket.write(`X-Padding-${line++}: x\r\n`), 100);
    try {
      const ms = await within(connection.closed, HEADERS_TIMEOUT_MS + 3_000, "endless headers");
      expect(ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
      expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS);
    } finally {
      clearInterval(trickle);
    }
  });

  it("a connection that sends nothing: closed at the headers timeout", async () => {
    const connection = await open(api);
    const ms = await within(connection.closed, HEADERS_TIMEOUT_MS + 3_000, "silent connection");
    expect(ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(connection.received()).toBe("");
  });
});

describe("the connection cap", () => {
  it("past HTTP_MAX_CONNECTIONS a new connection is closed as it arrives; one closing makes room", async () => {
    const capped = await startTestApi({ HTTP_MAX_CONNECTIONS: "3" }, { shareWith: api });
    const held: Connection[] = [];
    try {
      for (let i = 0; i < 3; i++) held.push(await open(capped));
      await sleep(100); // the server has accepted all three
      const refused = await open(capped, "GET /healthz HTTP/1.1\r\nHost: api.test\r\n\r\n");
      await within(refused.closed, 2_000, "a connection over the cap");
      expect(refused.received()).toBe("");

      held.pop()?.socket.destroy();
      await sleep(100);
      const admitted = await open(capped, "GET /healthz HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n");
      await within(admitted.closed, 2_000, "a connection under the cap");
      expect(admitted.received()).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const connection of held) connection.socket.destroy();
      await capped.close();
    }
  });
});
