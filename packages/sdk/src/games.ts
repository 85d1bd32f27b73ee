import { type CreateOptions, type PartnerRequests, pageQuery, segment } from "./requests.js";
import type {
  Block,
  Game,
  PageInfo,
  PageRequest,
  ParSheet,
  ParSheetDocument,
  ParSheetWithDocument,
  RegisterGameInput,
  RevealedEntries,
  RevealedEntriesPage,
  RevealedEntry,
  UpdateGameInput,
} from "./types.js";

/** The largest page of a revealed block's entries: a block takes as few requests as possible. */
const ENTRIES_MAX_LIMIT = 1000;

/** `client.games`: the games registered from your PAR sheets. */
export function gameRequests(api: PartnerRequests) {
  return {
    list: (page?: PageRequest) => api.get<{ games: Game[] } & PageInfo>("/games", pageQuery(page)),
    get: (gameId: number) => api.get<Game>(`/games/${segment(gameId)}`),
    register: (input: RegisterGameInput, options: CreateOptions = {}) => api.create<Game>("/games", input, options),
    update: (gameId: number, input: UpdateGameInput) => api.write<Game>("PATCH", `/games/${segment(gameId)}`, input),
  };
}

/** `client.blocks`: a game's outcome blocks and their commitments (docs/fairness.md); check them with `verifyRevealedBlock`. */
export function blockRequests(api: PartnerRequests) {
  /** One page of a revealed block's entries: `limit` 1..1000 (default 1000), `total` the block's size. */
  const entriesPage = (gameId: number, blockId: number, page?: PageRequest) =>
    api.get<RevealedEntriesPage>(`/games/${segment(gameId)}/blocks/${segment(blockId)}/entries`, pageQuery(page));
  return {
    list: (gameId: number, page?: PageRequest) =>
      api.get<{ blocks: Block[] } & PageInfo>(`/games/${segment(gameId)}/blocks`, pageQuery(page)),
    get: (gameId: number, blockId: number) => api.get<Block>(`/games/${segment(gameId)}/blocks/${segment(blockId)}`),
    /**
     * Every entry of a revealed block in index order, fetched page after page (1,000 a page), ready
     * for `verifyRevealedBlock`. 409 KS-4216 until the block (finite_pool: its cycle) is exhausted
     * and its seed revealed.
     */
    entries: async (gameId: number, blockId: number): Promise<RevealedEntries> => {
      const entries: RevealedEntry[] = [];
      for (let page = 1; ; page++) {
        const answer = await entriesPage(gameId, blockId, { page, limit: ENTRIES_MAX_LIMIT });
        for (const entry of answer.entries) entries.push(entry);
        if (answer.entries.length < ENTRIES_MAX_LIMIT || entries.length >= answer.total) {
          return { blockId: answer.blockId, seed: answer.seed, entries };
        }
      }
    },
    entriesPage,
  };
}

/** `client.parSheets`: the PAR sheets games are registered from. */
export function parSheetRequests(api: PartnerRequests) {
  return {
    upload: (document: ParSheetDocument, options: CreateOptions = {}) =>
      api.create<ParSheet>("/par-sheets", document, options),
    list: (page?: PageRequest) => api.get<{ parSheets: ParSheet[] } & PageInfo>("/par-sheets", pageQuery(page)),
    get: (parSheetId: string) => api.get<ParSheetWithDocument>(`/par-sheets/${segment(parSheetId)}`),
  };
}

export type GameRequests = ReturnType<typeof gameRequests>;

export type BlockRequests = ReturnType<typeof blockRequests>;

export type ParSheetRequests = ReturnType<typeof parSheetRequests>;
