import type { SqlClient } from "@outcomes/db";

/** A process serves a handful of blocks at a time; older entries are simply dropped. */
const MAX_ENTRIES = 1000;
const SIZE_OF_BLOCK = "select size from blocks where id = $1";

/**
 * Sizes of sealed blocks, read once per block and process. A block's size never changes after it
 * is sealed, so the cache can never be stale; it tells the spin path whether an outcome is the
 * first or last of its block (the only ones that need block bookkeeping in their transaction).
 */
export class BlockSizes {
  private readonly sizes = new Map<number, Promise<number | null>>();

  /**
   * The block's size; null when no such block was ever sealed (its outcome can never be recorded).
   * A miss is read on `client`: inside a transaction that is the transaction itself, never a second
   * connection of the pool (which, with every connection in such a transaction, would never come).
   */
  sizeOf(blockId: number, client: SqlClient): Promise<number | null> {
    const cached = this.sizes.get(blockId);
    if (cached) return cached;
    if (this.sizes.size >= MAX_ENTRIES) this.sizes.delete(this.sizes.keys().next().value as number);
    const size = this.load(blockId, client);
    this.sizes.set(blockId, size);
    size.catch(() => {
      if (this.sizes.get(blockId) === size) this.sizes.delete(blockId);
    });
    return size;
  }

  private async load(blockId: number, client: SqlClient): Promise<number | null> {
    const [row] = await client.unsafe<{ size: number }[]>(SIZE_OF_BLOCK, [blockId], { prepare: true });
    return row?.size ?? null;
  }
}
