import { type PartnerRequests, pageQuery, segment } from "./requests.js";
import type { ListedSpin, PageInfo, Player, PlayerSpinsQuery } from "./types.js";

/** `client.players`: players are created on their first spin. */
export function playerRequests(api: PartnerRequests) {
  return {
    get: (playerId: string) => api.get<Player>(`/players/${segment(playerId)}`),
    /**
     * A page of the player's spins, newest first (the last game and the nine before it: `{ limit: 10 }`).
     * `include: "proof"` adds each spin's proof and block (`verifySpinProof(spin, spin.proof, spin.block)`),
     * `replayLinks: true` a `replayUrl`; one request either way.
     */
    spins: (playerId: string, query: PlayerSpinsQuery = {}) =>
      api.get<{ spins: ListedSpin[] } & PageInfo>(`/players/${segment(playerId)}/spins`, {
        ...pageQuery(query),
        include: query.include,
        replayLinks: query.replayLinks ? "true" : undefined,
      }),
  };
}

export type PlayerRequests = ReturnType<typeof playerRequests>;
