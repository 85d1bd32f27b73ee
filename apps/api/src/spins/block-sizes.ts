import type { SqlClient } from "@outcomes/db";
import { setBounded } from "../bounded-map.js";

/** A process serves a handful of blocks at a time; older entries are simply dropped. */
const MAX_ENTRIES = 1000;
const SIZE_OF_BLOCK = "select size from blocks where id = $1";

/**
 * Sizes of sealed blocks, read once per block and process. A block's size never changes after it
 * is sealed, so the cache can never be stale; it tells the spin path whether an outcome is the
 * first or last of its block (the only ones that need block bookkeeping in their transaction).
 */
export class BlockSizes {
  private readonly sizes = new Map<number, number | null>();
  /** Reads in flight, each with the client it runs on. */
  private readonly reading = new Map<number, { client: SqlClient; size: Promise<number | null> }>();

  /**
   * The block's size; null when no such block was ever sealed (its outcome can never be recorded).
   * A miss is read on `client`: inside a transaction that is the transaction itself, never a second
   * connection of the pool (which, with every connection in such a transaction, would never come).
   * So a read in flight is shared only by callers on the same client: the pool's concurrent misses
   * (a cold start under load) make one read, but a transaction never awaits a read queued on the pool.
   */
  async sizeOf(blockId: number, client: SqlClient): Promise<number | null> {
    const known = this.sizes.get(blockId);
    if (known !== undefined) return known;
    const inFlight = this.reading.get(blockId);
    if (inFlight?.client === client) return inFlight.size;
    const size = this.read(blockId, client);
    if (!inFlight) this.reading.set(blockId, { client, size });
    try {
      return await size;
    } finally {
      if (this.reading.get(blockId)?.size === size) this.reading.delete(blockId);
    }
  }

  private async read(blockId: number, client: SqlClient): Promise<number | null> {
    const [row] = await client.unsafe<{ size: number }[]>(SIZE_OF_BLOCK, [blockId], { prepare: true });
    const size = row?.size ?? null;
    setBounded(this.sizes, blockId, size, MAX_ENTRIES);
    return size;
  }
}
