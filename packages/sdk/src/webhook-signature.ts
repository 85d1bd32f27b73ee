import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Webhook signatures, shared by the service (which signs) and receivers (which verify), so both
 * sides run the same code. Two header families are sent on every delivery:
 * - `X-Service-Signature: sha256=<hex>`: HMAC-SHA256 over the raw body, keyed with the UTF-8 bytes
 *   of the whole secret string (`whsec_…`), as the service signs it;
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`): HMAC-SHA256
 *   over `{id}.{timestamp}.{body}`, keyed with the base64-decoded bytes after `whsec_`, so off-the-shelf
 *   libraries verify it and refuse replays.
 * After a secret rotation, until the old secret expires, `webhook-signature` carries a signature
 * with each (`v1,<new> v1,<old>`) and `X-Service-Signature` the new one. The verifiers take one
 * secret or several (`[new, old]` during a rotation) and accept any that matches.
 * Node built-ins only: this file is published with the SDK.
 */

export type RawBody = string | Uint8Array;
/** The secret a receiver holds, or all it holds while a rotation overlaps (`[new, old]`). */
export type Secrets = string | readonly string[];

const SECRET_PREFIX = "whsec_";
const SIGNATURE_PREFIX = "sha256=";

const bytes = (body: RawBody): Buffer => (typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body));
const secretList = (secrets: Secrets): readonly string[] => (typeof secrets === "string" ? [secrets] : secrets);

/** `sha256=<hex>` for `X-Service-Signature`. */
export function signPayload(rawBody: RawBody, secret: string): string {
  const digest = createHmac("sha256", Buffer.from(secret, "utf8")).update(bytes(rawBody)).digest("hex");
  return `${SIGNATURE_PREFIX}${digest}`;
}

/** The key Standard Webhooks uses: the bytes the secret's base64 part encodes. */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

/** `v1,<base64>` for `webhook-signature`; `timestamp` is in whole seconds. */
export function signStandardWebhook(input: {
  id: string;
  timestamp: number;
  rawBody: RawBody;
  secret: string;
}): string {
  const digest = createHmac("sha256", standardKey(input.secret))
    .update(`${input.id}.${input.timestamp}.`)
    .update(bytes(input.rawBody))
    .digest("base64");
  return `v1,${digest}`;
}

/**
 * Every signature header of one delivery attempt, keyed by header name. `messageId` is the
 * Standard Webhooks message id (`webhook-id`): the event's id, the same on every attempt,
 * redelivery and recover of that event, so a receiver de-duplicates on it. `previousSecret` (a
 * rotated secret not expired yet) adds its signature after the current one in `webhook-signature`.
 */
export function signatureHeaders(input: {
  messageId: string;
  timestamp: number;
  rawBody: RawBody;
  secret: string;
  previousSecret?: string | null | undefined;
}): Record<string, string> {
  const signWith = (secret: string) =>
    signStandardWebhook({ id: input.messageId, timestamp: input.timestamp, rawBody: input.rawBody, secret });
  return {
    "X-Service-Signature": signPayload(input.rawBody, input.secret),
    "webhook-id": input.messageId,
    "webhook-timestamp": String(input.timestamp),
    "webhook-signature": [input.secret, ...(input.previousSecret ? [input.previousSecret] : [])]
      .map(signWith)
      .join(" "),
  };
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Verifies `X-Service-Signature` over the raw body bytes (before any JSON parsing) in constant
 * time, with any of the secrets given. A header that does not start with `sha256=` is refused.
 */
export function verifyWebhookSignature(input: {
  rawBody: RawBody;
  signatureHeader: string | null | undefined;
  secret: Secrets;
}): boolean {
  const header = input.signatureHeader;
  if (typeof header !== "string" || !header.startsWith(SIGNATURE_PREFIX)) return false;
  const presented = header.slice(SIGNATURE_PREFIX.length);
  if (!/^[0-9a-f]{64}$/i.test(presented)) return false;
  const digest = Buffer.from(presented.toLowerCase(), "hex");
  return secretList(input.secret).some((secret) =>
    safeEqual(digest, Buffer.from(signPayload(input.rawBody, secret).slice(SIGNATURE_PREFIX.length), "hex")),
  );
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Verifies the Standard Webhooks headers: the timestamp within `toleranceSeconds` of now (replays
 * refused) and any `v1,` signature of the space-separated list matching any of the secrets given,
 * compared in constant time.
 */
export function verifyStandardWebhook(input: {
  rawBody: RawBody;
  headers: HeaderSource;
  secret: Secrets;
  toleranceSeconds?: number;
  now?: Date;
}): boolean {
  const id = header(input.headers, "webhook-id");
  const timestampText = header(input.headers, "webhook-timestamp");
  const signatures = header(input.headers, "webhook-signature");
  if (!id || !timestampText || !signatures || !/^\d+$/.test(timestampText)) return false;
  const timestamp = Number(timestampText);
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (input.toleranceSeconds ?? 300)) return false;
  const expected = secretList(input.secret).map((secret) =>
    Buffer.from(signStandardWebhook({ id, timestamp, rawBody: input.rawBody, secret }).slice(3), "base64"),
  );
  return signatures.split(" ").some((entry) => {
    const [version, value] = entry.split(",", 2);
    if (version !== "v1" || value === undefined) return false;
    const presented = Buffer.from(value, "base64");
    return expected.some((digest) => safeEqual(presented, digest));
  });
}
