/**
 * A webhook receiver for the Partner Game Outcome Service, with Node's own HTTP server.
 *
 *   WEBHOOK_SECRET=whsec_… PORT=8080 npx tsx webhook-receiver.ts
 *
 * While a secret rotation overlaps, give it both, new first: WEBHOOK_SECRET=whsec_new,whsec_old.
 *
 * It verifies the signature over the raw body bytes before parsing anything, refuses stale or
 * replayed deliveries (Standard Webhooks timestamp), answers 2xx at once and de-duplicates on
 * `X-Service-Delivery-Id`, since a delivery may arrive more than once.
 */
import { createServer, type IncomingMessage } from "node:http";
import { verifyStandardWebhook, verifyWebhookSignature, type WebhookEvent } from "@outcomes/sdk";

const secret = process.env.WEBHOOK_SECRET?.split(",").filter(Boolean);
if (!secret?.length) {
  process.stderr.write("Set WEBHOOK_SECRET to the secret returned when the webhook was registered\n");
  process.exit(1);
}
const MAX_BODY_BYTES = 1024 * 1024;
/** Use your database in production: this set forgets on restart and is not shared between copies. */
const processed = new Set<string>();

async function rawBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function handle(event: WebhookEvent): void {
  switch (event.type) {
    case "spin.large_win":
      console.log(`large win: ${JSON.stringify(event.data)}`);
      break;
    case "settlement.report_ready":
      console.log(`settlement ready for ${String(event.data.reportDate)}: fetch it, then acknowledge or dispute`);
      break;
    case "block.low_reserve":
    case "api_key.expiring":
      console.log(`${event.type}: ${JSON.stringify(event.data)}`);
      break;
  }
}

const server = createServer(async (request, response) => {
  if (request.method !== "POST") return void response.writeHead(405).end();
  const body = await rawBody(request);
  if (!body) return void response.writeHead(413).end();

  // Either check alone is enough; this receiver insists on both.
  const signed = verifyWebhookSignature({
    rawBody: body,
    signatureHeader: request.headers["x-service-signature"] as string | undefined,
    secret,
  });
  const fresh = verifyStandardWebhook({ rawBody: body, headers: request.headers, secret, toleranceSeconds: 300 });
  if (!signed || !fresh) {
    console.log("refused: bad signature or stale timestamp");
    return void response.writeHead(401).end();
  }

  const deliveryId = String(request.headers["x-service-delivery-id"] ?? "");
  if (processed.has(deliveryId)) {
    console.log(`duplicate delivery ${deliveryId}: already handled`);
    return void response.writeHead(204).end();
  }
  processed.add(deliveryId);
  // Answer first, work after: the service waits only a few seconds before it counts a failure.
  response.writeHead(204).end();
  handle(JSON.parse(body.toString("utf8")) as WebhookEvent);
});

server.listen(Number(process.env.PORT ?? 8080), () => {
  const address = server.address();
  console.log(`listening on port ${typeof address === "object" && address ? address.port : "?"}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
