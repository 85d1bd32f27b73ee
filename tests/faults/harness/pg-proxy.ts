import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy between the service processes and Postgres: `cut()` drops every open connection and
 * refuses new ones (as a network partition or a Postgres restart looks to a client), `resume()`
 * lets connections through again. The machine's Postgres itself is never touched.
 */
export class PostgresProxy {
  private readonly sockets = new Set<Socket>();
  private cutOff = false;
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
      client.pipe(upstream);
      upstream.pipe(client);
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
