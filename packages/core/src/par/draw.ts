import { randomBytes } from "node:crypto";
import { CompiledSheet, SEED_BYTES, writeEntries } from "@outcomes/sdk";
import type { Outcome } from "../outcome.js";
import type { ParSheetAnalysis } from "./analyze.js";
import { EntryCodec } from "./entries.js";

/**
 * A PAR sheet ready to draw blocks from: the SDK's compiled sheet (the derivation partners re-run,
 * docs/fairness.md) and the stored form of its entries (entries.ts), whose layout is the
 * derivation's own (a tier byte, then one byte per cell reel by reel), so entries are written
 * straight into the stored bytes: a few integer writes per outcome and no per-outcome objects.
 */
export class OutcomeDrawer {
  readonly sheet: CompiledSheet;
  readonly codec: EntryCodec;

  constructor(analysis: ParSheetAnalysis) {
    this.sheet = new CompiledSheet(analysis.document);
    this.codec = new EntryCodec({
      reels: this.sheet.reels,
      rows: this.sheet.rows,
      symbols: this.sheet.symbols,
      tiers: analysis.tiers,
    });
  }

  /**
   * One complete outcome of the named tier, drawn as a block's entries are (`writeEntries`) from a
   * fresh 32-byte seed of the OS CSPRNG: a forced sandbox spin's, which no block commits to. Null
   * when the sheet has no such tier.
   */
  drawOutcomeOfTier(tierName: string): Outcome | null {
    const tier = this.sheet.tiers.findIndex((candidate) => candidate.name === tierName);
    if (tier < 0) return null;
    const entry = Buffer.allocUnsafe(this.codec.entryBytes);
    writeEntries(this.sheet, randomBytes(SEED_BYTES), 0, Uint8Array.of(tier), entry, 0);
    return this.codec.decode(entry, 0, 1)[0] as Outcome;
  }
}
