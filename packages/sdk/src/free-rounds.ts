import { type CreateOptions, type PartnerRequests, pageQuery, segment } from "./requests.js";
import type { FreeRoundGrant, FreeRoundPlayer, GrantFreeRoundsInput, PageInfo, PageRequest } from "./types.js";

/** `client.freeRounds` (docs/free-rounds.md): spin one with `spin({ gameId, playerId, freeRoundsId })`. */
export function freeRoundRequests(api: PartnerRequests) {
  return {
    /** Retried safely with its `Idempotency-Key` (given, or generated): one grant, whatever the retries. */
    grant: (input: GrantFreeRoundsInput, options: CreateOptions = {}) => {
      const expiresAt = input.expiresAt instanceof Date ? input.expiresAt.toISOString() : input.expiresAt;
      return api.create<FreeRoundGrant>("/free-rounds", { ...input, expiresAt }, options);
    },
    list: (page?: PageRequest) => api.get<{ freeRounds: FreeRoundGrant[] } & PageInfo>("/free-rounds", pageQuery(page)),
    get: (freeRoundsId: string) => api.get<FreeRoundGrant>(`/free-rounds/${segment(freeRoundsId)}`),
    /** 404 KS-4204 when the player is not in the grant. */
    player: (freeRoundsId: string, playerId: string) =>
      api.get<FreeRoundPlayer>(`/free-rounds/${segment(freeRoundsId)}/players/${segment(playerId)}`),
    /** No round of the grant can be spun any more. Safe to retry: a cancelled grant answers its first cancel. */
    cancel: (freeRoundsId: string) => api.repeatable<FreeRoundGrant>(`/free-rounds/${segment(freeRoundsId)}/cancel`),
  };
}

export type FreeRoundRequests = ReturnType<typeof freeRoundRequests>;
