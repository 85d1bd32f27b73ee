import { describe, expect, it } from "vitest";
import { displayPrefix, generateApiKey, hashApiKey, parseApiKey, redactApiKeys, toBase62 } from "./api-key.js";

describe("API key format", () => {
  it("generates keys of each environment that parse back", () => {
    const sandbox = generateApiKey("sandbox");
    const production = generateApiKey("production");
    expect(sandbox.key).toMatch(/^ks_sandbox_[0-9A-Za-z]{38}$/);
    expect(production.key).toMatch(/^kp_prod_[0-9A-Za-z]{38}$/);
    expect(parseApiKey(sandbox.key)).toBe("sandbox");
    expect(parseApiKey(production.key)).toBe("production");
  });

  it("stores the SHA-256 hex and a display prefix only", () => {
    const { key, hash, displayPrefix: prefix } = generateApiKey("sandbox");
    expect(hash).toBe(hashApiKey(key));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(prefix).toBe(key.slice(0, "ks_sandbox_".length + 4));
    expect(displayPrefix(key)).toBe(prefix);
  });

  it("refuses a key with one character changed, a wrong length or a foreign prefix", () => {
    const { key } = generateApiKey("sandbox");
    const position = 15;
    const changed = key.slice(0, position) + (key[position] === "a" ? "b" : "a") + key.slice(position + 1);
    expect(parseApiKey(changed)).toBeNull();
    expect(parseApiKey(key.slice(0, -1))).toBeNull();
    expect(parseApiKey(`${key}0`)).toBeNull();
    expect(parseApiKey(key.replace("ks_sandbox_", "kp_prod_"))).toBeNull();
    expect(parseApiKey(`sk_live_${key.slice(11)}`)).toBeNull();
  });

  it("encodes the checksum as left-padded base62", () => {
    expect(toBase62(0, 6)).toBe("000000");
    expect(toBase62(61, 6)).toBe("00000z");
    expect(toBase62(62, 6)).toBe("000010");
    expect(toBase62(0xffffffff, 6)).toBe("4gfFC3");
  });
});

describe("redactApiKeys", () => {
  it("removes keys of both environments from text, valid or not", () => {
    const sandbox = generateApiKey("sandbox").key;
    const production = generateApiKey("production").key;
    const text = `/players/${sandbox}/spins?x=${production} and ks_sandbox_typo1234`;
    const redacted = redactApiKeys(text);
    expect(redacted).toBe("/players/ks_sandbox_[redacted]/spins?x=kp_prod_[redacted] and ks_sandbox_[redacted]");
  });

  it("leaves other text alone", () => {
    expect(redactApiKeys("/api/partner/v1/games/12")).toBe("/api/partner/v1/games/12");
  });
});
