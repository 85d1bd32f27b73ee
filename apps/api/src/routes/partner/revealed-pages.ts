import { type Database, type RevealedBlock, revealedEntryRange } from "@outcomes/db";
import { presentRevealedEntriesPage } from "@outcomes/records";
import { ByteBoundedCache } from "../../byte-bounded-cache.js";

/**
 * Serialised pages of revealed entries, per API process. In-process rather than in Redis: Redis
 * holds the games' outcome queues, which must never be pushed out or starved of memory by a cache,
 * and a miss is cheap (one page's bytes and spins read, ~1,000 entries decoded), so sharing pages
 * between the service's copies would save little. 16 MiB holds about 85 pages of 1,000 entries of
 * a 3×3 game. A revealed block never changes; pages are kept under the row's version anyway, so
 * none outlives a change to the record.
 */
const REVEALED_PAGE_CACHE_BYTES = 16 * 2 ** 20;

export const revealedPageCache = () => new ByteBoundedCache(REVEALED_PAGE_CACHE_BYTES);

/** The largest page of `GET …/entries`: a page is bounded work whatever the block's size. */
export const MAX_ENTRIES_PER_PAGE = 1000;

/**
 * The JSON of one page of a revealed block's entries: kept, or read and kept. A page past the end
 * answers no entries (with the block's `total`) and is not kept: it costs nothing to answer.
 */
export async function revealedEntriesPage(
  db: Database,
  cache: ByteBoundedCache,
  block: RevealedBlock,
  page: { page: number; limit: number },
): Promise<Uint8Array<ArrayBuffer>> {
  const first = (page.page - 1) * page.limit;
  const count = Math.max(0, Math.min(page.limit, block.size - first));
  if (count === 0) return Buffer.from(JSON.stringify(presentRevealedEntriesPage(block, [], page)));
  const key = `${block.blockId}:${block.version}:${page.page}:${page.limit}`;
  const kept = cache.get(key);
  if (kept) return kept;
  const entries = await revealedEntryRange(db, block, first, count);
  const body = Buffer.from(JSON.stringify(presentRevealedEntriesPage(block, entries, page)));
  cache.set(key, body);
  return body;
}
