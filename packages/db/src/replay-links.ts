import { type ReplayLink, ReplayTokens } from "@outcomes/core";
import type { Database } from "./client.js";
import { replayLinkSecrets } from "./repositories/service-secrets.js";

/** How long a replay link lasts unless asked otherwise, and at most (CONTRACT §17), in hours. */
export const REPLAY_LINK_DEFAULT_HOURS = 168;
export const REPLAY_LINK_MAX_HOURS = 2160;

/** Where a replay page is, below the deployment's address; its data is the same path with `.json`. */
export const replayPath = (token: string) => `/replay/${token}`;

/**
 * Makes and opens replay links with the deployment's secrets (REPLAY_SECRETS, else the one kept in
 * Postgres), read once per process on first use: every process signs and accepts the same links.
 */
export class ReplayLinks {
  private tokens: Promise<ReplayTokens> | undefined;

  constructor(
    private readonly db: Database,
    private readonly configuredSecrets: readonly string[] | undefined,
  ) {}

  /** A link to the spin's page at `baseUrl` (no trailing slash), for `hours` from `now`. */
  async link(
    spinId: string,
    options: { baseUrl: string; hours?: number; now?: number },
  ): Promise<{ url: string; expiresAt: Date }> {
    const hours = options.hours ?? REPLAY_LINK_DEFAULT_HOURS;
    // Whole seconds, as the token keeps them: the expiry answered is the one it will be held to.
    const expiresAt = new Date(Math.floor(((options.now ?? Date.now()) + hours * 3_600_000) / 1000) * 1000);
    const token = (await this.load()).seal({ spinId, expiresAt });
    return { url: `${options.baseUrl}${replayPath(token)}`, expiresAt };
  }

  /** The link a token names; null for an expired, altered or unknown one alike. */
  async open(token: string, now = Date.now()): Promise<ReplayLink | null> {
    return (await this.load()).open(token, now);
  }

  private load(): Promise<ReplayTokens> {
    if (!this.tokens) {
      const loading = replayLinkSecrets(this.db, this.configuredSecrets).then((secrets) => new ReplayTokens(secrets));
      // A failed read (Postgres down) is tried again by the next request.
      loading.catch(() => {
        if (this.tokens === loading) this.tokens = undefined;
      });
      this.tokens = loading;
    }
    return this.tokens;
  }
}
