import { BLOCK_HEADER_MAX_BYTES, codecOfBlockHead, type EntryCodec } from "@outcomes/core";
import { blockSizeAndHead, type SqlClient } from "@outcomes/db";
import { setBounded } from "../bounded-map.js";

/** A process serves a handful of blocks at a time; older entries are simply dropped. */
const MAX_ENTRIES = 1000;

/** A header that cannot be read gives no codec: the block's compact items are then dropped as unusable. */
function codecOrNull(head: Uint8Array): EntryCodec | null {
  try {
    return codecOfBlockHead(head);
  } catch {
    return null;
  }
}

/** What the spin path needs of a sealed block: its size, and the codec its compact queue items are read with. */
export interface BlockFacts {
  size: number;
  /** Null for a legacy JSON block: its queue items carry their outcomes. */
  codec: EntryCodec | null;
}

/**
 * Facts of sealed blocks, read once per block and process. A block never changes after it is
 * sealed, so the cache can never be stale. The size tells the spin path whether an outcome is the
 * first or last of its block (the only ones that need block bookkeeping in their transaction); the
 * codec reads its compact queue items (outcome.ts).
 */
export class BlockFactsCache {
  private readonly facts = new Map<number, BlockFacts | null>();
  /** Reads in flight, each with the client it runs on. */
  private readonly reading = new Map<number, { client: SqlClient; facts: Promise<BlockFacts | null> }>();

  /**
   * The block's facts; null when no such block was ever sealed (its outcome can never be recorded).
   * A miss is read on `client`: inside a transaction that is the transaction itself, never a second
   * connection of the pool (which, with every connection in such a transaction, would never come).
   * So a read in flight is shared only by callers on the same client: the pool's concurrent misses
   * (a cold start under load) make one read, but a transaction never awaits a read queued on the pool.
   */
  async of(blockId: number, client: SqlClient): Promise<BlockFacts | null> {
    const known = this.facts.get(blockId);
    if (known !== undefined) return known;
    const inFlight = this.reading.get(blockId);
    if (inFlight?.client === client) return inFlight.facts;
    const facts = this.read(blockId, client);
    if (!inFlight) this.reading.set(blockId, { client, facts });
    try {
      return await facts;
    } finally {
      if (this.reading.get(blockId)?.facts === facts) this.reading.delete(blockId);
    }
  }

  private async read(blockId: number, client: SqlClient): Promise<BlockFacts | null> {
    const row = await blockSizeAndHead(client, blockId, BLOCK_HEADER_MAX_BYTES);
    const facts = row ? { size: row.size, codec: codecOrNull(row.head) } : null;
    setBounded(this.facts, blockId, facts, MAX_ENTRIES);
    return facts;
  }
}
