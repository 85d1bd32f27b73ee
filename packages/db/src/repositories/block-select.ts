// A block as partners read it (CONTRACT §10): its row and its cycle's, for the statements of
// fairness.ts and proofs.ts. Not exported from the package: the repositories' statements use it.

/** A block row with its cycle's commitment, as `presentBlock` (packages/records) shows it. */
export type BlockRow = {
  id: string;
  game_id: number;
  sequence: number;
  size: number;
  status: "ready" | "serving" | "exhausted";
  cycle: number;
  cycle_offset: number;
  seed_hash: string | null;
  merkle_root: string | null;
  created_at: Date;
  started_at: Date | null;
  exhausted_at: Date | null;
  closed_at: Date | null;
  revealed_at: Date | null;
  seed: Buffer | null;
  cycle_seed_hash: string | null;
  cycle_revealed_at: Date | null;
  cycle_blocks: number | null;
};

/** A block and its cycle; the seed only once revealed (it never leaves the database before). */
export const BLOCK_COLUMNS = `
    b.id, b.game_id, b.sequence, b.size, b.status, b.cycle, b.cycle_offset, b.seed_hash, b.merkle_root,
    b.created_at, b.started_at, b.exhausted_at, b.closed_at, b.revealed_at,
    case when b.revealed_at is not null then coalesce(b.seed, c.seed) end as seed,
    c.seed_hash as cycle_seed_hash, c.revealed_at as cycle_revealed_at,
    case when b.cycle > 0 then
      (select count(*) from blocks k where k.game_id = b.game_id and k.cycle = b.cycle)::int end as cycle_blocks`;
export const BLOCK_FROM = "from blocks b left join pool_cycles c on c.game_id = b.game_id and c.cycle = b.cycle";
