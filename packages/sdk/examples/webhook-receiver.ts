/**
 * A webhook receiver for the Partner Game Outcome Service, with Node's own HTTP server.
 *
 *   WEBHOOK_SECRET=whsec_… PORT=8080 \
 *   OUTCOMES_API_KEY=ks_sandbox_… OUTCOMES_BASE_URL=https://outcomes.example.com STATE_FILE=receiver-state.json \
 *   npx tsx webhook-receiver.ts
 *
 * While a secret rotation overlaps, give it both, new first: WEBHOOK_SECRET=whsec_new,whsec_old.
 *
 * It verifies the signature over the raw body bytes before parsing anything, refuses stale or
 * replayed deliveries (Standard Webhooks timestamp) and answers 2xx at once. Webhooks are fast but
 * may be lost (a receiver down longer than the five attempts, about 81 minutes): with an API key it
 * also reads the event log, at start and every CATCH_UP_SECONDS (default 300), so every event is
 * handled after any downtime. Each event is handled once, whichever way it arrives first, and
 * whether it arrives again by a retry, a redelivery or the log.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { PartnerClient, verifyStandardWebhook, verifyWebhookSignature, type WebhookEvent } from "@outcomes/sdk";

const secret = process.env.WEBHOOK_SECRET?.split(",").filter(Boolean);
if (!secret?.length) {
  process.stderr.write("Set WEBHOOK_SECRET to the secret returned when the webhook was registered\n");
  process.exit(1);
}
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * What has been handled, by sequence (one key's events: one partner and environment). `cursor`:
 * every event up to it was handled (it only moves as the log is read, in order); `handled`: events
 * above it that came by webhook first. Keep this in your database in production, updated in the
 * same transaction as the work an event causes; a file will do for the example.
 */
interface State {
  cursor: number;
  handled: number[];
}
const stateFile = process.env.STATE_FILE;
const state: State = stateFile ? loadState(stateFile) : { cursor: 0, handled: [] };
const handledAbove = new Set(state.handled);

function loadState(path: string): State {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as State;
  } catch {
    return { cursor: 0, handled: [] };
  }
}

function saveState(): void {
  if (stateFile) writeFileSync(stateFile, JSON.stringify({ cursor: state.cursor, handled: [...handledAbove] }));
}

function handle(event: WebhookEvent, via: "webhook" | "event log"): void {
  if (event.sequence <= state.cursor || handledAbove.has(event.sequence)) {
    console.log(`duplicate event ${event.id} (${via}): already handled`);
    return;
  }
  handledAbove.add(event.sequence);
  switch (event.type) {
    case "spin.large_win":
      console.log(`large win #${event.sequence} (${via}): ${JSON.stringify(event.data)}`);
      break;
    case "settlement.report_ready":
      console.log(`settlement ready for ${String(event.data.reportDate)}: fetch it, then acknowledge or dispute`);
      break;
    case "block.low_reserve":
    case "api_key.expiring":
      console.log(`${event.type} #${event.sequence} (${via}): ${JSON.stringify(event.data)}`);
      break;
  }
}

/** Reads the event log from the cursor to its end: whatever the webhooks missed is handled now. */
async function catchUp(client: PartnerClient): Promise<void> {
  let read = 0;
  for await (const event of client.events({ after: state.cursor })) {
    handle(event, "event log");
    handledAbove.delete(event.sequence);
    state.cursor = event.sequence;
    read++;
  }
  saveState();
  console.log(`caught up: ${read} events read, cursor at ${state.cursor}`);
}

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
  // Answer first, work after: the service waits only a few seconds before it counts a failure.
  response.writeHead(204).end();
  handle(JSON.parse(body.toString("utf8")) as WebhookEvent, "webhook");
  saveState();
});

server.listen(Number(process.env.PORT ?? 8080), () => {
  const address = server.address();
  console.log(`listening on port ${typeof address === "object" && address ? address.port : "?"}`);
});

const apiKey = process.env.OUTCOMES_API_KEY;
const baseUrl = process.env.OUTCOMES_BASE_URL;
if (apiKey && baseUrl) {
  const client = new PartnerClient({ apiKey, baseUrl });
  const everyMs = Number(process.env.CATCH_UP_SECONDS ?? 300) * 1000;
  let running = false;
  const run = async () => {
    if (running) return; // the previous catch-up is still reading
    running = true;
    try {
      await catchUp(client);
    } catch (error) {
      console.log(`catch-up failed, retried later: ${error}`);
    } finally {
      running = false;
    }
  };
  void run();
  const timer = setInterval(() => void run(), everyMs);
  server.on("close", () => clearInterval(timer));
}
process.on("SIGTERM", () => server.close(() => process.exit(0)));
