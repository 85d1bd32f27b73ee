import { z } from "@hono/zod-openapi";
import type { BlockRow, RevealedBlock, RevealedEntryRow, SpinProofView } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

const HashSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .openapi({ description: "SHA-256, lowercase hex" });

const SaltSchema = z.string().openapi({ description: "16 bytes, lowercase hex" });

export const BlockCycleSchema = z
  .object({
    cycleId: z.number().int().openapi({ description: "The cycle's number within the game, from 1" }),
    seedHash: HashSchema.nullable(),
    blocks: z.number().int().openapi({ description: "Blocks cut from the cycle so far" }),
    revealed: z.boolean().openapi({ description: "Every block of the cycle is exhausted and the seed shown" }),
    offset: z.number().int().openapi({ description: "Position of this block's first entry in the cycle" }),
  })
  .openapi("BlockCycle", {
    description: "finite_pool blocks only: one seed per cycle, revealed when all its blocks are exhausted",
  });

export const BlockSchema = z
  .object({
    blockId: z.number().int().openapi({ example: 1042, description: "Part of every leaf: `blockId|index|…`" }),
    gameId: z.number().int(),
    sequence: z.number().int().openapi({ description: "Serving order within the game, from 1" }),
    size: z.number().int().openapi({ description: "Entries, and leaves of the Merkle tree (treeSize)" }),
    status: z.enum(["ready", "serving", "exhausted", "retired"]).openapi({
      description:
        "`ready`: none served; `serving`: being served; `exhausted`: every entry served or retired (an entry " +
        "left unserved after a crash is retired and listed with spinId null); `retired`: taken out of service " +
        "unserved (not done by this deployment)",
    }),
    drawMode: z.enum(["independent", "finite_pool"]),
    merkleRoot: HashSchema.nullable().openapi({
      description: "RFC 9162 tree hash of the salted leaves, recorded at sealing, before any entry was served",
    }),
    seedHash: HashSchema.nullable().openapi({
      description: "SHA-256 of the 32-byte seed (the cycle's for finite_pool), recorded at sealing",
    }),
    sealedAt: TimestampSchema,
    firstServedAt: TimestampSchema.nullable(),
    exhaustedAt: TimestampSchema.nullable(),
    revealedAt: TimestampSchema.nullable(),
    seed: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .openapi({
        description: "The seed, lowercase hex; null until revealed (and on blocks sealed before provable fairness)",
      }),
    cycle: BlockCycleSchema.optional(),
  })
  .openapi("Block", {
    description:
      "A sealed block of outcomes and its commitments. Blocks sealed before provable fairness have null " +
      "merkleRoot, seedHash and seed, are never revealed, and their spins have no proof.",
  });
export type BlockView = z.infer<typeof BlockSchema>;

const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

/**
 * The block's public status: `exhausted` once every entry is served or retired (closed by the
 * reveal sweep), so a block whose last index is taken shows `serving` until then. Blocks sealed
 * before provable fairness are never closed: they show their status as recorded.
 */
export function presentBlock(row: BlockRow): BlockView {
  const legacy = row.seed_hash === null;
  const closed = row.closed_at !== null || (legacy && row.status === "exhausted");
  const status = closed ? "exhausted" : row.status === "exhausted" ? "serving" : row.status;
  return {
    blockId: Number(row.id),
    gameId: row.game_id,
    sequence: row.sequence,
    size: row.size,
    status,
    drawMode: row.cycle > 0 ? "finite_pool" : "independent",
    merkleRoot: row.merkle_root,
    seedHash: row.seed_hash,
    sealedAt: iso(row.created_at) as string,
    firstServedAt: iso(row.started_at),
    exhaustedAt: iso(row.closed_at ?? (closed ? row.exhausted_at : null)),
    revealedAt: iso(row.revealed_at),
    seed: row.seed ? row.seed.toString("hex") : null,
    ...(row.cycle > 0 && {
      cycle: {
        cycleId: row.cycle,
        seedHash: row.cycle_seed_hash,
        blocks: row.cycle_blocks ?? 0,
        revealed: row.cycle_revealed_at !== null,
        offset: row.cycle_offset,
      },
    }),
  };
}

export const RevealedEntrySchema = z
  .object({
    index: z.number().int(),
    prizeTier: z.string(),
    multiplier: z.number(),
    reelSymbols: z.array(z.array(z.string())),
    salt: SaltSchema,
    spinId: z.string().nullable().openapi({ description: "The spin served this entry; null if never served" }),
    voided: z.boolean().openapi({
      description:
        "True when that spin was voided (`POST /spins/{spinId}/void`): the entry stays used, never served again, " +
        "and its proof still verifies; a void undoes the money, not the draw",
    }),
  })
  .openapi("RevealedEntry");

export const RevealedEntriesPageSchema = z
  .object({
    blockId: z.number().int(),
    seed: z.string().openapi({ description: "The seed every entry and salt derives from, lowercase hex" }),
    entries: z.array(RevealedEntrySchema).openapi({ description: "The page's entries, in index order" }),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int().openapi({ description: "Entries in the block: its size" }),
  })
  .openapi("RevealedEntriesPage");
export type RevealedEntriesPageView = z.infer<typeof RevealedEntriesPageSchema>;

/** A page of a revealed block's entries (`entries`: the page's, read by `revealedEntryRange`). */
export function presentRevealedEntriesPage(
  block: RevealedBlock,
  entries: RevealedEntryRow[],
  page: { page: number; limit: number },
): RevealedEntriesPageView {
  return {
    blockId: block.blockId,
    seed: block.seed.toString("hex"),
    entries,
    page: page.page,
    limit: page.limit,
    total: block.size,
  };
}

export const SpinProofSchema = z
  .object({
    spinId: z.string(),
    blockId: z.number().int(),
    index: z.number().int(),
    outcomeText: z.string().openapi({ example: "1042|17|T1|2|BAR1,LEMON,BELL/SEVEN,LEMON,BLANK/BAR2,LEMON,CHERRY" }),
    salt: SaltSchema,
    leaf: HashSchema.openapi({ description: "SHA-256(0x00 ‖ salt ‖ UTF-8(outcomeText))" }),
    auditPath: z.array(HashSchema).openapi({ description: "RFC 9162 inclusion proof: sibling hashes, leaf to root" }),
    merkleRoot: HashSchema,
    treeSize: z.number().int(),
  })
  .openapi("SpinProof");
export type SpinProofBody = z.infer<typeof SpinProofSchema>;

export const presentSpinProof = (proof: SpinProofView): SpinProofBody => proof;
