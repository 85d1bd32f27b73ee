import { z } from "@hono/zod-openapi";
import { PageFields, Timestamp } from "../../openapi.js";

const Hash = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .openapi({ description: "SHA-256, lowercase hex" });

export const Block = z
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
    merkleRoot: Hash.nullable().openapi({
      description: "RFC 9162 tree hash of the salted leaves, recorded at sealing, before any entry was served",
    }),
    seedHash: Hash.nullable().openapi({
      description: "SHA-256 of the 32-byte seed (the cycle's for finite_pool), recorded at sealing",
    }),
    sealedAt: Timestamp,
    firstServedAt: Timestamp.nullable(),
    exhaustedAt: Timestamp.nullable(),
    revealedAt: Timestamp.nullable(),
    seed: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .openapi({
        description: "The seed, lowercase hex; null until revealed (and on blocks sealed before provable fairness)",
      }),
    cycle: z
      .object({
        cycleId: z.number().int().openapi({ description: "The cycle's number within the game, from 1" }),
        seedHash: Hash.nullable(),
        blocks: z.number().int().openapi({ description: "Blocks cut from the cycle so far" }),
        revealed: z.boolean().openapi({ description: "Every block of the cycle is exhausted and the seed shown" }),
        offset: z.number().int().openapi({ description: "Position of this block's first entry in the cycle" }),
      })
      .optional()
      .openapi({
        description: "finite_pool blocks only: one seed per cycle, revealed when all its blocks are exhausted",
      }),
  })
  .openapi("Block", {
    description:
      "A sealed block of outcomes and its commitments. Blocks sealed before provable fairness have null " +
      "merkleRoot, seedHash and seed, are never revealed, and their spins have no proof.",
  });

export const BlockList = z.object({ blocks: z.array(Block), ...PageFields }).openapi("BlockList");

export const RevealedEntries = z
  .object({
    blockId: z.number().int(),
    seed: z.string().openapi({ description: "The seed every entry and salt derives from, lowercase hex" }),
    entries: z.array(
      z.object({
        index: z.number().int(),
        prizeTier: z.string(),
        multiplier: z.number(),
        reelSymbols: z.array(z.array(z.string())),
        salt: z.string().openapi({ description: "16 bytes, lowercase hex" }),
        spinId: z.string().nullable().openapi({ description: "The spin served this entry; null if never served" }),
      }),
    ),
  })
  .openapi("RevealedEntries");

export const SpinProof = z
  .object({
    spinId: z.string(),
    blockId: z.number().int(),
    index: z.number().int(),
    outcomeText: z.string().openapi({ example: "1042|17|T1|2|BAR1,LEMON,BELL/SEVEN,LEMON,BLANK/BAR2,LEMON,CHERRY" }),
    salt: z.string().openapi({ description: "16 bytes, lowercase hex" }),
    leaf: Hash.openapi({ description: "SHA-256(0x00 ‖ salt ‖ UTF-8(outcomeText))" }),
    auditPath: z.array(Hash).openapi({ description: "RFC 9162 inclusion proof: sibling hashes, leaf to root" }),
    merkleRoot: Hash,
    treeSize: z.number().int(),
  })
  .openapi("SpinProof");

export const BlockParams = z.object({
  gameId: z.string().openapi({ param: { name: "gameId", in: "path" }, example: "1" }),
  blockId: z.string().openapi({ param: { name: "blockId", in: "path" }, example: "1042" }),
});

export const SpinParams = z.object({
  spinId: z.string().openapi({ param: { name: "spinId", in: "path" }, example: "spn_0T9xYz12AbCdEfGhIjKlMn" }),
});
