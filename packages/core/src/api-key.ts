import { hash, randomInt } from "node:crypto";
import { crc32 } from "node:zlib";

/**
 * API keys: `ks_sandbox_` or `kp_prod_`, 32 base62 characters from the CSPRNG, then a 6-character
 * base62 CRC32 of everything before it (GitHub's token design), so a mistyped key is refused
 * without a store look-up. Only the SHA-256 of the whole key is stored.
 */
export const ENVIRONMENTS = ["sandbox", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

const KEY_PREFIXES: Record<Environment, string> = {
  sandbox: "ks_sandbox_",
  production: "kp_prod_",
};

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
/** Characters of the key shown in listings and logs to recognise it: the prefix and 4 random ones. */
const DISPLAY_RANDOM_CHARS = 4;

export function toBase62(value: number, width: number): string {
  let out = "";
  let rest = value;
  do {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  return out.padStart(width, "0");
}

function checksum(body: string): string {
  return toBase62(crc32(body) >>> 0, CHECKSUM_LENGTH);
}

function randomBase62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

export interface GeneratedKey {
  key: string;
  hash: string;
  displayPrefix: string;
}

export function generateApiKey(environment: Environment): GeneratedKey {
  const body = KEY_PREFIXES[environment] + randomBase62(RANDOM_LENGTH);
  const key = body + checksum(body);
  return { key, hash: hashApiKey(key), displayPrefix: displayPrefix(key) };
}

/** SHA-256 hex of the whole key; `crypto.hash` (one call, no Hash object) costs a third of `createHash` on every request. */
export function hashApiKey(key: string): string {
  return hash("sha256", key, "hex");
}

export function displayPrefix(key: string): string {
  const environment = environmentOfKey(key);
  const prefixLength = environment ? KEY_PREFIXES[environment].length : 0;
  return key.slice(0, prefixLength + DISPLAY_RANDOM_CHARS);
}

function environmentOfKey(key: string): Environment | null {
  for (const environment of ENVIRONMENTS) {
    if (key.startsWith(KEY_PREFIXES[environment])) return environment;
  }
  return null;
}

/** The key's environment when its shape and checksum are right; null for anything mistyped. */
export function parseApiKey(key: string): Environment | null {
  const environment = environmentOfKey(key);
  if (!environment) return null;
  const expectedLength = KEY_PREFIXES[environment].length + RANDOM_LENGTH + CHECKSUM_LENGTH;
  if (key.length !== expectedLength || !/^[0-9A-Za-z]+$/.test(key.slice(KEY_PREFIXES[environment].length))) {
    return null;
  }
  const body = key.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === key.slice(-CHECKSUM_LENGTH) ? environment : null;
}

/** Anything shaped like a key (prefix + base62 run), so pasted keys are caught even when mistyped. */
const KEY_LIKE = /\b(ks_sandbox_|kp_prod_)[0-9A-Za-z]{4,}/g;

/**
 * Replaces every key-shaped run in text meant for logs (request paths, messages) by its prefix, so a
 * key pasted into a URL by mistake never reaches the log store.
 */
export function redactApiKeys(text: string): string {
  return text.replace(KEY_LIKE, (_match, prefix: string) => `${prefix}[redacted]`);
}
