import type { Environment } from "@outcomes/core";
import { type Database, lookUpFreeRoundGrant } from "@outcomes/db";
import { setBounded } from "../bounded-map.js";

/** What a spin needs to know about the grant whose round it uses: the parts of a grant that never change. */
export interface FreeRoundTerms {
  id: string;
  partnerId: string;
  environment: Environment;
  gameId: number;
  wagerMicros: number;
}

const MAX_ENTRIES = 10_000;

/**
 * A grant's terms never change once made, so they are kept without expiry (bounded in number); what
 * does change (cancelled, expired, rounds used) is decided by the spin's own statement. Unknown ids
 * are not kept: a grant made a moment later must be found. Concurrent misses share one query.
 */
export class FreeRoundCache {
  private readonly entries = new Map<string, Promise<FreeRoundTerms | null>>();

  constructor(private readonly db: Database) {}

  get(grantId: string): Promise<FreeRoundTerms | null> {
    const cached = this.entries.get(grantId);
    if (cached) return cached;
    const terms = this.load(grantId);
    setBounded(this.entries, grantId, terms, MAX_ENTRIES);
    terms.then(
      (found) => {
        if (found === null) this.entries.delete(grantId);
      },
      () => this.entries.delete(grantId),
    );
    return terms;
  }

  private async load(grantId: string): Promise<FreeRoundTerms | null> {
    // Text no id of ours is answered without a query (lookUpFreeRoundGrant).
    const grant = await lookUpFreeRoundGrant(this.db, grantId);
    if (!grant) return null;
    const { id, partnerId, environment, gameId, wagerMicros } = grant;
    return { id, partnerId, environment, gameId, wagerMicros };
  }
}
