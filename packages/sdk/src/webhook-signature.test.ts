import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  signatureHeaders,
  signPayload,
  signStandardWebhook,
  verifyStandardWebhook,
  verifyWebhookSignature,
} from "./webhook-signature.js";

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const body = '{"id":"evt_1","type":"spin.large_win","data":{"payoutUsd":1500.5}}';

describe("X-Service-Signature", () => {
  it("is the hex HMAC-SHA256 of the raw body keyed with the whole secret string", () => {
    const expected = createHmac("sha256", secret).update(body).digest("hex");
    expect(signPayload(body, secret)).toBe(`sha256=${expected}`);
    expect(signPayload(Buffer.from(body), secret)).toBe(`sha256=${expected}`);
  });

  it("verifies over the raw bytes and refuses any change", () => {
    const header = signPayload(body, secret);
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader: header, secret })).toBe(true);
    expect(
      verifyWebhookSignature({
        rawBody: Buffer.from(body),
        signatureHeader: header.toUpperCase().replace("SHA256=", "sha256="),
        secret,
      }),
    ).toBe(true);
    expect(verifyWebhookSignature({ rawBody: `${body} `, signatureHeader: header, secret })).toBe(false);
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader: header, secret: `${secret}x` })).toBe(false);
    // Re-serialised JSON is other bytes: receivers must verify before parsing.
    expect(
      verifyWebhookSignature({ rawBody: JSON.stringify(JSON.parse(body), null, 1), signatureHeader: header, secret }),
    ).toBe(false);
  });

  it("refuses a header without the sha256= prefix or with a malformed digest", () => {
    const digest = signPayload(body, secret).slice("sha256=".length);
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader: digest, secret })).toBe(false);
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader: `sha1=${digest}`, secret })).toBe(false);
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader: `sha256=${digest.slice(2)}`, secret })).toBe(false);
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader: undefined, secret })).toBe(false);
  });
});

describe("Standard Webhooks", () => {
  it("matches the specification's published test vector", () => {
    const signature = signStandardWebhook({
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: 1614265330,
      rawBody: '{"test": 2432232314}',
      secret,
    });
    expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("verifies fresh deliveries and refuses stale, tampered or unsigned ones", () => {
    const now = new Date("2026-06-01T00:00:00Z");
    const timestamp = Math.floor(now.getTime() / 1000);
    const headers = signatureHeaders({ messageId: "evt_1", timestamp, rawBody: body, secret });
    const verify = (overrides: Record<string, string>, rawBody = body, at = now) =>
      verifyStandardWebhook({ rawBody, headers: { ...headers, ...overrides }, secret, now: at });
    expect(verify({})).toBe(true);
    expect(verifyStandardWebhook({ rawBody: body, headers: new Headers(headers), secret, now })).toBe(true);
    expect(verify({ "webhook-signature": `v1,bm90aGluZw== ${headers["webhook-signature"]}` })).toBe(true);
    expect(verify({}, `${body}x`)).toBe(false);
    expect(verify({ "webhook-id": "evt_2" })).toBe(false);
    expect(verify({}, body, new Date(now.getTime() + 301_000))).toBe(false);
    expect(verify({ "webhook-timestamp": "soon" })).toBe(false);
    expect(verify({ "webhook-signature": headers["webhook-signature"]!.replace("v1,", "v2,") })).toBe(false);
  });
});

describe("secret rotation", () => {
  const previousSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
  const now = new Date("2026-06-01T00:00:00Z");
  const timestamp = Math.floor(now.getTime() / 1000);

  it("signs webhook-signature with the new then the old secret, and X-Service-Signature with the new one", () => {
    const headers = signatureHeaders({ messageId: "evt_1", timestamp, rawBody: body, secret, previousSecret });
    const sign = (key: string) => signStandardWebhook({ id: "evt_1", timestamp, rawBody: body, secret: key });
    expect(headers["webhook-signature"]).toBe(`${sign(secret)} ${sign(previousSecret)}`);
    expect(headers["X-Service-Signature"]).toBe(signPayload(body, secret));
    expect(signatureHeaders({ messageId: "evt_1", timestamp, rawBody: body, secret })["webhook-signature"]).toBe(
      sign(secret),
    );
  });

  it("verifies with whichever secret the receiver holds, or with its list of both", () => {
    const headers = signatureHeaders({ messageId: "evt_1", timestamp, rawBody: body, secret, previousSecret });
    for (const held of [secret, previousSecret, [secret, previousSecret], [previousSecret, secret]]) {
      expect(verifyStandardWebhook({ rawBody: body, headers, secret: held, now })).toBe(true);
    }
    expect(
      verifyStandardWebhook({ rawBody: body, headers, secret: "whsec_dW5yZWxhdGVkIHNlY3JldCBieXRlcw==", now }),
    ).toBe(false);
    expect(verifyStandardWebhook({ rawBody: body, headers, secret: [], now })).toBe(false);

    const signatureHeader = headers["X-Service-Signature"];
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader, secret: [previousSecret, secret] })).toBe(true);
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader, secret: previousSecret })).toBe(false);
    // A delivery signed before the rotation still verifies for a receiver holding both.
    const before = signatureHeaders({ messageId: "evt_1", timestamp, rawBody: body, secret: previousSecret });
    expect(verifyStandardWebhook({ rawBody: body, headers: before, secret: [secret, previousSecret], now })).toBe(true);
    expect(
      verifyWebhookSignature({
        rawBody: body,
        signatureHeader: before["X-Service-Signature"],
        secret: [secret, previousSecret],
      }),
    ).toBe(true);
  });
});
