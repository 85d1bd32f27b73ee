import { SAMPLE_PAR_SHEET } from "@outcomes/sdk";

/** The contract's sample PAR sheet lives in the SDK, whose fairness test vector is drawn from it. */
export { SAMPLE_PAR_SHEET };

/** A fresh, mutable copy, loosely typed so tests can break it in place. */
export function sampleParSheet(): Record<string, any> {
  return structuredClone(SAMPLE_PAR_SHEET);
}
