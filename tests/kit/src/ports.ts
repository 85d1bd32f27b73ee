import { randomInt } from "node:crypto";
import { createServer } from "node:net";

/**
 * Ports for a child process to listen on, chosen below Linux's ephemeral range (32768–60999).
 * A port the kernel handed out by binding port 0 comes from that range, so between our check and
 * the child's listen (seconds, for a `tsx` start or a restart on the same port) any outgoing
 * connection on the machine could take it as its source port: CI saw an API fail to start with
 * "PORT … is in use" that way. Below the range only another listener can take it.
 */
const LOW = 20_000;
const HIGH = 32_000;

/** Ports this process handed out already, so two callers here never get the same one. */
const handedOut = new Set<number>();

export function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A loopback port nothing listens on just now, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = randomInt(LOW, HIGH);
    if (handedOut.has(port) || !(await isFree(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port in ${LOW}–${HIGH}`);
}
