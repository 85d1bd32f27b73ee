import type { z } from "zod";
import { ErrorCode, type ErrorDetail, ServiceError } from "../errors.js";
import { parseScaledDecimal } from "../money.js";
import { decimalOf, type Rational, rational, toDecimalString, toNumber, withinTolerance } from "./rational.js";
import { type DrawMode, MULTIPLIER_DECIMALS, type ParSheetDocument, ParSheetDocumentSchema } from "./schema.js";

/** GLI-11: every tier must have a probability of at least 1 in 100 million. */
const TIER_PROBABILITY_FLOOR = 100_000_000n;
/** |RTP − certifiedRtp| may be at most 0.00005. */
const RTP_TOLERANCE: Rational = { num: 5n, den: 100_000n };
/** finite_pool keeps one byte per outcome of a cycle (in memory and in Postgres): at most this many. */
const MAX_FINITE_POOL_CYCLE = 10_000_000n;

export interface TierFigures {
  name: string;
  multiplierMillionths: number;
  weight: number;
}

/** A valid sheet and its exact figures. */
export interface ParSheetAnalysis {
  document: ParSheetDocument;
  drawMode: DrawMode;
  tiers: TierFigures[];
  /** Σ tier weights: the cycle. */
  cycle: bigint;
  rtp: Rational;
  /** RTP as a decimal string (exact when it terminates within 12 places, else rounded there). */
  rtpDecimal: string;
  /** certifiedRtp exactly, as the plain decimal of its shortest form (see `decimalOf`). */
  certifiedRtpDecimal: string;
  /** Share of the cycle that is not T0. */
  hitFrequency: number;
  /** Standard deviation of the multiplier (from the exact variance). */
  volatility: number;
}

export type ParSheetCheck = { ok: true; sheet: ParSheetAnalysis } | { ok: false; details: ErrorDetail[] };

/** Checks a PAR sheet document completely; every problem is reported with its JSON path. */
export function analyzeParSheet(input: unknown): ParSheetCheck {
  const parsed = ParSheetDocumentSchema.safeParse(input);
  if (!parsed.success) return { ok: false, details: shapeProblems(parsed.error) };
  const document = parsed.data;
  const details = [...namingProblems(document), ...combinationProblems(document)];
  const tiers = document.prizeTiers.map((tier) => ({
    name: tier.tier,
    multiplierMillionths: multiplierMillionths(tier.multiplier),
    weight: tier.weight,
  }));
  const cycle = tiers.reduce((sum, tier) => sum + BigInt(tier.weight), 0n);
  details.push(...probabilityProblems(document, tiers, cycle));
  const rtp = rtpOf(tiers, cycle);
  const certified = decimalOf(document.certifiedRtp);
  const certifiedRtpDecimal = toDecimalString(certified.value, certified.places);
  if (!withinTolerance(rtp, certified.value, RTP_TOLERANCE)) {
    details.push({
      path: "certifiedRtp",
      message: `computed RTP ${toDecimalString(rtp)} differs from certifiedRtp ${certifiedRtpDecimal} by more than 0.00005`,
    });
  }
  if (details.length > 0) return { ok: false, details };
  return {
    ok: true,
    sheet: {
      document,
      drawMode: document.drawMode ?? "independent",
      tiers,
      cycle,
      rtp,
      rtpDecimal: toDecimalString(rtp),
      certifiedRtpDecimal,
      hitFrequency: toNumber(rational(cycle - BigInt(tiers[0]?.weight ?? 0), cycle)),
      volatility: Math.sqrt(toNumber(varianceOf(tiers, cycle))),
    },
  };
}

/** A multiplier the schema accepted (at most 6 decimals) in millionths, exactly. */
function multiplierMillionths(multiplier: number): number {
  return Number(parseScaledDecimal(String(multiplier), MULTIPLIER_DECIMALS));
}

/** The largest multiplier of a valid sheet, in millionths: it bounds a game's maxWager (`maxWagerWithinMicros`). */
export function largestMultiplierMillionths(document: Pick<ParSheetDocument, "prizeTiers">): number {
  return Math.max(0, ...document.prizeTiers.map((tier) => multiplierMillionths(tier.multiplier)));
}

/** For callers that want the sheet or a 400 KS-4104 with every problem in `details`. */
export function assertValidParSheet(input: unknown): ParSheetAnalysis {
  const check = analyzeParSheet(input);
  if (!check.ok) throw new ServiceError(ErrorCode.InvalidParSheet, { details: check.details });
  return check.sheet;
}

/** Σ weight × multiplier / cycle, with multipliers in millionths. */
function rtpOf(tiers: TierFigures[], cycle: bigint): Rational {
  const paid = tiers.reduce((sum, tier) => sum + BigInt(tier.weight) * BigInt(tier.multiplierMillionths), 0n);
  return rational(paid, cycle * 1_000_000n);
}

/** Var = E[m²] − E[m]² = (Σw·M² · C − (Σw·M)²) / (C² · 10¹²), M the multiplier in millionths. */
function varianceOf(tiers: TierFigures[], cycle: bigint): Rational {
  let first = 0n;
  let second = 0n;
  for (const tier of tiers) {
    const weight = BigInt(tier.weight);
    const millionths = BigInt(tier.multiplierMillionths);
    first += weight * millionths;
    second += weight * millionths * millionths;
  }
  return rational(second * cycle - first * first, cycle * cycle * 1_000_000_000_000n);
}

function shapeProblems(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({ path: jsonPath(issue.path), message: issue.message }));
}

export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  const text = path.reduce<string>((out, part) => {
    if (typeof part === "number") return `${out}[${part}]`;
    return out ? `${out}.${String(part)}` : String(part);
  }, "");
  return text || "$";
}

function namingProblems(document: ParSheetDocument): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  document.prizeTiers.forEach((tier, index) => {
    if (tier.tier !== `T${index}`) {
      details.push({
        path: `prizeTiers[${index}].tier`,
        message: `must be "T${index}": tiers are named T0..Tn in order`,
      });
    }
    if (index === 0 && tier.multiplier !== 0) {
      details.push({ path: "prizeTiers[0].multiplier", message: "T0 is the losing tier: its multiplier must be 0" });
    }
    if (index > 0 && tier.multiplier === 0) {
      details.push({
        path: `prizeTiers[${index}].multiplier`,
        message: "a winning tier must pay more than 0 (T0 is the only losing tier)",
      });
    }
  });
  const firstById = new Map<string, number>();
  document.symbols.forEach((symbol, index) => {
    const first = firstById.get(symbol.id);
    if (first === undefined) firstById.set(symbol.id, index);
    else
      details.push({ path: `symbols[${index}].id`, message: `duplicate symbol id "${symbol.id}" (symbols[${first}])` });
  });
  return details;
}

function combinationProblems(document: ParSheetDocument): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const { reels } = document.layout;
  const symbolIds = new Set(document.symbols.map((symbol) => symbol.id));
  const tierIndex = new Map(document.prizeTiers.map((tier, index) => [tier.tier, index] as const));
  const combinationsPerTier = document.prizeTiers.map(() => 0);
  const firstBySymbols = new Map<string, number>();
  document.combinations.forEach((combination, index) => {
    const path = `combinations[${index}]`;
    const tier = tierIndex.get(combination.tier);
    if (tier === undefined) details.push({ path: `${path}.tier`, message: `unknown tier "${combination.tier}"` });
    else if (tier === 0) {
      details.push({ path: `${path}.tier`, message: "T0 has no combinations: its payline matches none" });
    } else combinationsPerTier[tier] = (combinationsPerTier[tier] ?? 0) + 1;
    if (combination.symbols.length !== reels) {
      details.push({ path: `${path}.symbols`, message: `must name exactly ${reels} symbols, one per reel` });
    }
    combination.symbols.forEach((symbol, reel) => {
      if (!symbolIds.has(symbol))
        details.push({ path: `${path}.symbols[${reel}]`, message: `unknown symbol "${symbol}"` });
    });
    const key = combination.symbols.join("\u0000");
    const first = firstBySymbols.get(key);
    if (first === undefined) firstBySymbols.set(key, index);
    else {
      const firstTier = document.combinations[first]?.tier;
      details.push({
        path: `${path}.symbols`,
        message:
          firstTier === combination.tier
            ? `repeats combinations[${first}]`
            : `already belongs to tier ${firstTier} (combinations[${first}]); a combination belongs to one tier`,
      });
    }
  });
  combinationsPerTier.forEach((count, index) => {
    if (index > 0 && count === 0) {
      details.push({
        path: `prizeTiers[${index}]`,
        message: `tier ${document.prizeTiers[index]?.tier} has no combination`,
      });
    }
  });
  const paylines = BigInt(symbolIds.size) ** BigInt(reels);
  if (paylines <= BigInt(firstBySymbols.size)) {
    details.push({
      path: "combinations",
      message: "every possible payline is a winning combination: T0 needs a payline that matches none",
    });
  }
  return details;
}

function probabilityProblems(document: ParSheetDocument, tiers: TierFigures[], cycle: bigint): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  tiers.forEach((tier, index) => {
    if (BigInt(tier.weight) * TIER_PROBABILITY_FLOOR < cycle) {
      details.push({
        path: `prizeTiers[${index}].weight`,
        message: `probability ${tier.weight}/${cycle} is below the floor of 1 in 100,000,000 (GLI-11)`,
      });
    }
  });
  if (document.drawMode === "finite_pool" && cycle > MAX_FINITE_POOL_CYCLE) {
    details.push({
      path: "drawMode",
      message: `a finite_pool cycle (the sum of tier weights, here ${cycle}) may hold at most ${MAX_FINITE_POOL_CYCLE} outcomes`,
    });
  }
  return details;
}
