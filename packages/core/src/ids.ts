import { randomBytes } from "node:crypto";
import { ErrorCode, ServiceError } from "./errors.js";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

const RANDOM_CHARS = 14;
/** CSPRNG bytes fetched 256 ids at a time: one `randomBytes` call per id was ~4% of a spin's CPU. */
const POOL_BYTES = RANDOM_CHARS * 256;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** The next unused 14 bytes of the pool (each byte is handed out once). */
function randomChunk(): { bytes: Buffer; start: number } {
  if (poolOffset + RANDOM_CHARS > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const start = poolOffset;
  poolOffset += RANDOM_CHARS;
  return { bytes: pool, start };
}

/**
 * Prefixed, time-ordered ids (`spn_…`, `whk_…`): 8 base62 characters of milliseconds, then 14
 * random ones from the CSPRNG. Sorting by id sorts by creation time; index inserts stay local.
 * `now` is the clock unless the row is dated otherwise (a fixture of another day).
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = now;
  let head = "";
  for (let i = 0; i < 8; i++) {
    head = BASE62[time % 62] + head;
    time = Math.floor(time / 62);
  }
  const random = randomChunk();
  let tail = "";
  for (let i = random.start; i < random.start + RANDOM_CHARS; i++) tail += BASE62[(random.bytes[i] as number) % 62];
  return `${prefix}_${head}${tail}`;
}

/** The millisecond an id of `newId` was made, or null for text that is not such an id. */
export function timeOfId(id: string): number | null {
  const match = /^[a-z]+_([0-9A-Za-z]{8})[0-9A-Za-z]{14}$/.exec(id);
  if (!match) return null;
  let time = 0;
  for (const char of match[1] as string) time = time * 62 + BASE62.indexOf(char);
  return time;
}

/**
 * Whether `text` has the shape of an id this service makes (letters, digits and `_`). Anything else
 * names nothing stored, so look-ups answer "not found" without a query, and text Postgres cannot
 * hold (U+0000) never reaches it.
 */
export function couldBeId(text: string): boolean {
  return /^[A-Za-z0-9_]{1,64}$/.test(text);
}

/** games.id is an int4. */
export const MAX_GAME_ID = 2_147_483_647;

/**
 * A game id given as text (a path segment, a CLI argument) as a number. Anything that cannot be a
 * game id names no game, so it is answered like any other game the caller cannot see (`unknown`:
 * KS-4006 partner, KS-4201 operator).
 */
export function parseGameId(text: string, unknown: ErrorCode): number {
  const id = /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(id <= MAX_GAME_ID)) throw new ServiceError(unknown);
  return id;
}

/** A block id given as text (a path segment): a positive integer within exact range, else 404 KS-4215. */
export function parseBlockId(text: string): number {
  const id = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(id <= Number.MAX_SAFE_INTEGER)) throw new ServiceError(ErrorCode.NotFound, { message: "Block not found" });
  return id;
}
