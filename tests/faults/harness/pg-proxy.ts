import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * Loses one reply: after a client message containing every `markers` string (e.g. a spin's player id
 * in its Bind), the client's `thenMessages`-th next message is forwarded and Postgres' answer to it
 * is swallowed, with both sockets closed: the statement (or COMMIT) ran, and the client never hears.
 */
interface ReplyTrap {
  markers: string[];
  thenMessages: number;
  fired: () => void;
}

/**
 * A TCP proxy between the service processes and Postgres: `cut()` drops every open connection and
 * refuses new ones (as a network partition or a Postgres restart looks to a client), `resume()`
 * lets connections through again, `loseReply()` loses one chosen answer. The machine's Postgres
 * itself is never touched.
 */
export class PostgresProxy {
  private readonly sockets = new Set<Socket>();
  private cutOff = false;
  private trap: ReplyTrap | null = null;
  private readonly server: Server;
  port = 0;

  private constructor(target: { host: string; port: number }) {
    this.server = createServer((client) => {
      if (this.cutOff) {
        client.destroy();
        return;
      }
      const upstream = createConnection(target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      // Messages after the trap's match on this connection still to forward before losing the reply.
      let countdown: number | null = null;
      let matched: ReplyTrap | null = null;
      let swallowing = false;
      client.on("data", (chunk: Buffer) => {
        const trap = this.trap;
        if (countdown !== null) countdown--;
        else if (trap?.markers.every((marker) => chunk.includes(marker))) {
          this.trap = null;
          countdown = trap.thenMessages;
          matched = trap;
        }
        if (countdown === 0) swallowing = true;
        upstream.write(chunk);
      });
      upstream.on("data", (chunk: Buffer) => {
        if (!swallowing) {
          client.write(chunk);
          return;
        }
        client.destroy();
        upstream.destroy();
        matched?.fired();
      });
    });
  }

  /**
   * Arms a one-time trap (see `ReplyTrap`); resolves once a reply was lost. `thenMessages` 0 loses
   * the answer to the matching message itself.
   */
  loseReply(markers: string[], thenMessages = 0): Promise<void> {
    return new Promise((fired) => {
      this.trap = { markers, thenMessages, fired };
    });
  }

  static async start(target: { host: string; port: number }): Promise<PostgresProxy> {
    const proxy = new PostgresProxy(target);
    proxy.server.listen(0, "127.0.0.1");
    await once(proxy.server, "listening");
    const address = proxy.server.address();
    if (address === null || typeof address === "string") throw new Error("proxy has no port");
    proxy.port = address.port;
    return proxy;
  }

  /** A proxy in front of the tests' Postgres (DATABASE_URL, else 127.0.0.1:5432). */
  static async beforeTestPostgres(): Promise<PostgresProxy> {
    const direct = new URL(process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432");
    return PostgresProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) });
  }

  /** The same database URL, through the proxy. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.host = `127.0.0.1:${this.port}`;
    return url.toString();
  }

  /** Drops every connection and refuses new ones; returns how many sockets were cut. */
  cut(): number {
    this.cutOff = true;
    const dropped = this.sockets.size;
    for (const socket of this.sockets) socket.destroy();
    return dropped;
  }

  resume(): void {
    this.cutOff = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
