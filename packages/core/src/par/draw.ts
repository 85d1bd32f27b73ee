import { CompiledSheet } from "@outcomes/sdk";
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
}
