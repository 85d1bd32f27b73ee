import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";

export interface Received {
  deliveryId: string;
  event: string;
  attempt: number;
  body: any;
  at: number;
}

/** What the receiver does with the n-th request: answer with a status, or never answer. */
export type ReceiverPolicy = (index: number, headers: IncomingHttpHeaders) => number | "hang";

/** A webhook receiver on loopback that records X-Service-Delivery-Id of every request. */
export class Receiver {
  readonly received: Received[] = [];
  private readonly hanging = new Set<ServerResponse>();
  private readonly server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const index = this.received.length;
      const text = Buffer.concat(chunks).toString("utf8");
      this.received.push({
        deliveryId: String(request.headers["x-service-delivery-id"]),
        event: String(request.headers["x-service-event"]),
        attempt: Number(request.headers["x-service-attempt"]),
        body: text ? JSON.parse(text) : undefined,
        at: Date.now(),
      });
      const action = this.policy(index, request.headers);
      if (action === "hang") this.hanging.add(response);
      else response.writeHead(action).end();
    });
  });

  private constructor(private readonly policy: ReceiverPolicy) {}

  static async start(policy: ReceiverPolicy = () => 204): Promise<Receiver> {
    const receiver = new Receiver(policy);
    receiver.server.listen(0, "127.0.0.1");
    await once(receiver.server, "listening");
    return receiver;
  }

  get url(): string {
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("receiver not listening");
    return `http://127.0.0.1:${address.port}/hooks`;
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
