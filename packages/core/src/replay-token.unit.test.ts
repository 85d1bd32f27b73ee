import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newId } from "./ids.js";
import { ReplayTokens, redactReplayTokens } from "./replay-token.js";

const secret = () => randomBytes(32);
const inAWeek = () => new Date(Math.floor(Date.now() / 1000) * 1000 + 7 * 86_400_000);

describe("replay-link tokens", () => {
  it("open to the spin and expiry they were sealed with, and show neither", () => {
    const tokens = new ReplayTokens([secret()]);
    const link = { spinId: newId("spn"), expiresAt: inAWeek() };
    const token = tokens.seal(link);
    expect(token).toMatch(/^[A-Za-z0-9_-]{63}$/);
    expect(tokens.open(token)).toEqual(link);
    const bytes = Buffer.from(token, "base64url");
    expect(bytes.includes(Buffer.from(link.spinId))).toBe(false);
    expect(bytes.includes(Buffer.from(link.spinId.slice(4, 12)))).toBe(false);
  });

  it("refuse every altered byte, every altered character, and texts that are no token", () => {
    const tokens = new ReplayTokens([secret()]);
    const token = tokens.seal({ spinId: newId("spn"), expiresAt: inAWeek() });
    const bytes = Buffer.from(token, "base64url");
    for (let at = 0; at < bytes.length; at++) {
      for (const bit of [0x01, 0x80]) {
        const altered = Buffer.from(bytes);
        altered[at] = (altered[at] as number) ^ bit;
        expect(tokens.open(altered.toString("base64url")), `byte ${at}`).toBeNull();
      }
    }
    // The last character's unused low bits: the same bytes, another spelling.
    const last = token.at(-1) as string;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const sibling = alphabet[alphabet.indexOf(last) ^ 1] as string;
    expect(Buffer.from(token.slice(0, -1) + sibling, "base64url")).toEqual(bytes);
    expect(tokens.open(token.slice(0, -1) + sibling)).toBeNull();
    for (const text of ["", "x", `${token}A`, token.slice(0, -1), `${token}=`, "a".repeat(5000), "../../etc"]) {
      expect(tokens.open(text), text).toBeNull();
    }
  });

  it("refuse an expired link", () => {
    const tokens = new ReplayTokens([secret()]);
    const expiresAt = inAWeek();
    const token = tokens.seal({ spinId: newId("spn"), expiresAt });
    expect(tokens.open(token, expiresAt.getTime() - 1)).not.toBeNull();
    expect(tokens.open(token, expiresAt.getTime())).toBeNull();
  });

  it("rotate: the new secret signs, the previous one still opens its links, a dropped one opens none", () => {
    const [older, newer] = [secret(), secret()];
    const link = { spinId: newId("spn"), expiresAt: inAWeek() };
    const before = new ReplayTokens([older]).seal(link);
    const rotated = new ReplayTokens([newer, older]);
    expect(rotated.open(before)).toEqual(link);
    const after = rotated.seal(link);
    expect(after).not.toBe(before);
    expect(new ReplayTokens([newer]).open(after)).toEqual(link);
    expect(new ReplayTokens([newer]).open(before)).toBeNull();
    expect(new ReplayTokens([older]).open(after)).toBeNull();
  });
});

describe("redactReplayTokens", () => {
  it("keeps a replay link's token out of a logged path, and everything else as it is", () => {
    const token = new ReplayTokens([secret()]).seal({ spinId: newId("spn"), expiresAt: inAWeek() });
    expect(redactReplayTokens(`/replay/${token}`)).toBe("/replay/[redacted]");
    expect(redactReplayTokens(`/replay/${token}.json`)).toBe("/replay/[redacted].json");
    expect(redactReplayTokens("/replay/assets/replay-check.0123456789abcdef.js")).toBe(
      "/replay/assets/replay-check.0123456789abcdef.js",
    );
    expect(redactReplayTokens("/api/partner/v1/spins/spn_1/replay-link")).toBe(
      "/api/partner/v1/spins/spn_1/replay-link",
    );
  });
});
