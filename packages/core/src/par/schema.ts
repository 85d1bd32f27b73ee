import { z } from "zod";
import { parseScaledDecimal } from "../money.js";

/**
 * The PAR sheet document as partners upload it (CONTRACT §5). This schema checks shape and types;
 * the cross-field rules (tier names, RTP, combinations, the GLI-11 floor) are in `analyzeParSheet`.
 * Unknown top-level fields are kept in the stored document and otherwise ignored.
 */
export const DRAW_MODES = ["independent", "finite_pool"] as const;
export type DrawMode = (typeof DRAW_MODES)[number];

/** A stored sheet's status: a sandbox upload is ACTIVE at once, a production one waits for an operator. */
export const PAR_SHEET_STATUSES = ["ACTIVE", "PENDING_APPROVAL", "RETIRED"] as const;
export type ParSheetStatus = (typeof PAR_SHEET_STATUSES)[number];

/** Decimals allowed in a multiplier (it becomes an integer number of millionths). */
export const MULTIPLIER_DECIMALS = 6;
/** Largest multiplier: keeps `wager × multiplier` far inside exact integer range. */
const MAX_MULTIPLIER = 1_000_000;
const MAX_REELS = 10;
const MAX_ROWS = 9;
const MAX_SYMBOLS = 256;
/** Tier indexes are stored one byte per outcome (finite_pool cycles), so at most 256 tiers. */
const MAX_TIERS = 256;
const MAX_COMBINATIONS = 10_000;

const decimalWith = (decimals: number) => (value: number) => parseScaledDecimal(String(value), decimals) !== null;

/** Letters, digits and `_`: ids are joined with `-` in `comboString`, so they must not contain it. */
const SymbolId = z.string().regex(/^[A-Za-z0-9_]{1,32}$/, "must be 1 to 32 letters, digits or underscores");

const Weight = z.number().int("must be an integer").positive("must be positive");

const Multiplier = z
  .number()
  .nonnegative("must not be negative")
  .max(MAX_MULTIPLIER, `must be at most ${MAX_MULTIPLIER}`)
  .refine(decimalWith(MULTIPLIER_DECIMALS), `must have at most ${MULTIPLIER_DECIMALS} decimal places`);

export const ParSheetDocumentSchema = z.object({
  name: z.string().trim().min(1, "must not be empty").max(200),
  version: z.string().trim().min(1, "must not be empty").max(50),
  layout: z.object({
    reels: z.number().int("must be an integer").min(1).max(MAX_REELS),
    rows: z
      .number()
      .int("must be an integer")
      .min(1)
      .max(MAX_ROWS)
      .refine((rows) => rows % 2 === 1, "must be odd: the payline is the middle row"),
  }),
  symbols: z
    .array(z.object({ id: SymbolId, name: z.string().trim().min(1, "must not be empty").max(100) }))
    .min(1, "needs at least one symbol")
    .max(MAX_SYMBOLS),
  prizeTiers: z
    .array(z.object({ tier: z.string(), multiplier: Multiplier, weight: Weight }))
    .min(2, "needs T0 and at least one winning tier")
    .max(MAX_TIERS),
  combinations: z
    .array(z.object({ tier: z.string(), symbols: z.array(z.string()).min(1), weight: Weight }))
    .max(MAX_COMBINATIONS),
  /** Any positive number: compared exactly as the decimal it is written as (`decimalOf`). */
  certifiedRtp: z.number().positive("must be positive"),
  drawMode: z.enum(DRAW_MODES).optional(),
});

export type ParSheetDocument = z.infer<typeof ParSheetDocumentSchema>;
