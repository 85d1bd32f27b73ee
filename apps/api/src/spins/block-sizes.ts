import { blocks, type Database } from "@outcomes/db";
import { eq } from "drizzle-orm";

/** A process serves a handful of blocks at a time; older entries are simply dropped. */
const MAX_ENTRIES = 1000;

/**
 * Sizes of sealed blocks, read once per block and process. A block's size never changes after it
 * is sealed, so the cache can never be stale; it tells the spin path whether an outcome is the
 * first or last of its block (the only ones that need block bookkeeping in their transaction).
 */
export class BlockSizes {
  private readonly sizes = new Map<number, Promise<number | null>>();

  constructor(private readonly db: Database) {}

  /** The block's size; null when no such block was ever sealed (its outcome can never be recorded). */
  sizeOf(blockId: number): Promise<number | null> {
    const cached = this.sizes.get(blockId);
    if (cached) return cached;
    if (this.sizes.size >= MAX_ENTRIES) this.sizes.delete(this.sizes.keys().next().value as number);
    const size = this.load(blockId);
    this.sizes.set(blockId, size);
    size.catch(() => {
      if (this.sizes.get(blockId) === size) this.sizes.delete(blockId);
    });
    return size;
  }

  private async load(blockId: number): Promise<number | null> {
    const [row] = await this.db.select({ size: blocks.size }).from(blocks).where(eq(blocks.id, blockId)).limit(1);
    return row?.size ?? null;
  }
}
