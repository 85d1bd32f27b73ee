import { createCipheriv, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/**
 * Replay-link tokens (CONTRACT §17, docs/fairness.md "Replay pages"): a token names a spin and an
 * expiry, signed with HMAC-SHA256 under a server secret and encrypted, so the link is unforgeable,
 * unguessable and shows nothing of the spin (its id carries its time) to whoever sees the URL.
 *
 * The construction is SIV (RFC 5297's, with HMAC-SHA256 as the PRF): `tag` = the first 16 bytes of
 * HMAC-SHA256(macKey, version ‖ payload), the payload encrypted with AES-256-CTR under encKey with
 * `tag` as its counter block. The token is base64url(version ‖ tag ‖ ciphertext), 63 characters for
 * a spin id; payload = u32be(expiry, Unix seconds) ‖ UTF-8(spin id). Both keys are derived from the
 * secret with HKDF-SHA256. The same spin and expiry give the same token, which tells nothing more.
 */
const VERSION = 1;
const TAG_BYTES = 16;
const EXPIRY_BYTES = 4;
/** A longer text is no token of ours: refused before any work. */
const MAX_TOKEN_CHARS = 200;

interface Keys {
  encryption: Buffer;
  signature: Buffer;
}

export interface ReplayLink {
  spinId: string;
  /** Whole seconds: the token keeps Unix seconds. */
  expiresAt: Date;
}

const derive = (secret: Buffer, purpose: string) =>
  Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), `replay-link ${purpose}`, 32));

export class ReplayTokens {
  private readonly keys: Keys[];

  /** `secrets`: the first signs, every one opens (a rotation keeps the previous one for its links). */
  constructor(secrets: readonly Buffer[]) {
    if (secrets.length === 0) throw new Error("replay links need at least one secret");
    this.keys = secrets.map((secret) => ({
      encryption: derive(secret, "encryption"),
      signature: derive(secret, "signature"),
    }));
  }

  seal(link: ReplayLink): string {
    const keys = this.keys[0] as Keys;
    const seconds = Math.floor(link.expiresAt.getTime() / 1000);
    const payload = Buffer.alloc(EXPIRY_BYTES + Buffer.byteLength(link.spinId));
    payload.writeUInt32BE(seconds, 0);
    payload.write(link.spinId, EXPIRY_BYTES, "utf8");
    const tag = tagOf(keys, payload);
    return Buffer.concat([Buffer.of(VERSION), tag, ctr(keys, tag, payload)]).toString("base64url");
  }

  /**
   * The link a token names, or null for any token that is not one this deployment's secrets sealed
   * (altered, made up, of a secret since dropped) or that has expired: callers answer all alike.
   */
  open(token: string, now = Date.now()): ReplayLink | null {
    if (token.length > MAX_TOKEN_CHARS || !/^[A-Za-z0-9_-]+$/.test(token)) return null;
    const bytes = Buffer.from(token, "base64url");
    // One spelling per token: the unused low bits of a last character would otherwise alter it unseen.
    if (bytes.toString("base64url") !== token) return null;
    if (bytes.length <= 1 + TAG_BYTES + EXPIRY_BYTES || bytes[0] !== VERSION) return null;
    const tag = bytes.subarray(1, 1 + TAG_BYTES);
    const sealed = bytes.subarray(1 + TAG_BYTES);
    for (const keys of this.keys) {
      const payload = ctr(keys, tag, sealed);
      if (!timingSafeEqual(tagOf(keys, payload), tag)) continue;
      const expiresAt = new Date(payload.readUInt32BE(0) * 1000);
      if (expiresAt.getTime() <= now) return null;
      return { spinId: payload.toString("utf8", EXPIRY_BYTES), expiresAt };
    }
    return null;
  }
}

function tagOf(keys: Keys, payload: Buffer): Buffer {
  return createHmac("sha256", keys.signature)
    .update(Buffer.of(VERSION))
    .update(payload)
    .digest()
    .subarray(0, TAG_BYTES);
}

/** AES-256-CTR with the tag as the initial counter block: its own inverse. */
function ctr(keys: Keys, tag: Buffer, input: Buffer): Buffer {
  const cipher = createCipheriv("aes-256-ctr", keys.encryption, tag);
  return Buffer.concat([cipher.update(input), cipher.final()]);
}

/**
 * A path as it may be logged: a replay link's token is its permission (anyone holding it opens the
 * page), so it is replaced, as API keys are (`redactApiKeys`). The page's assets are named by their
 * content, not a token, and kept.
 */
export function redactReplayTokens(path: string): string {
  return path.replace(
    /^\/replay\/(?!assets\/)[^/]+?(\.json)?$/,
    (_match, json: string | undefined) => `/replay/[redacted]${json ?? ""}`,
  );
}
