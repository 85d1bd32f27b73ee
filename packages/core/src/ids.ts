import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * Prefixed, time-ordered ids (`spn_…`, `whk_…`): 8 base62 characters of milliseconds, then 14
 * random ones from the CSPRNG. Sorting by id sorts by creation time; index inserts stay local.
 */
export function newId(prefix: string): string {
  let time = Date.now();
  let head = "";
  for (let i = 0; i < 8; i++) {
    head = BASE62[time % 62] + head;
    time = Math.floor(time / 62);
  }
  const random = randomBytes(14);
  let tail = "";
  for (const byte of random) tail += BASE62[byte % 62];
  return `${prefix}_${head}${tail}`;
}

/**
 * Whether `text` has the shape of an id this service makes (letters, digits and `_`). Anything else
 * names nothing stored, so look-ups answer "not found" without a query, and text Postgres cannot
 * hold (U+0000) never reaches it.
 */
export function couldBeId(text: string): boolean {
  return /^[A-Za-z0-9_]{1,64}$/.test(text);
}
