import { GCProfiler, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import {
  type DerivedEntry,
  deriveBlockEntries,
  PartnerClient,
  type RevealedEntriesPage,
  verifyRevealedBlock,
} from "@outcomes/sdk";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { sealRevealedBlock } from "@outcomes/testkit/blocks";
import { registerTestGame } from "@outcomes/testkit/games";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Revealed entries come in pages (CONTRACT §10): a page costs the same in a block of any size, up to
// BLOCK_SIZE's maximum of 1,000,000 entries. The API runs in this process, so its heap and CPU are
// this process's.

// The heap figures start from a collected heap: gc() is exposed at run time.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const LARGEST_BLOCK = 1_000_000;
const MiB = 2 ** 20;
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "1" });
});
afterAll(async () => {
  await api.close();
});

const entriesPath = (gameId: number, blockId: number, query = "") =>
  `/api/partner/v1/games/${gameId}/blocks/${blockId}/entries${query}`;

/**
 * One GET, with the CPU the process spent on it (the API's and the client's), its wall time, and
 * the most the heap held above a collected heap meanwhile: the heap only grows between collections,
 * so that is the larger of its size before each collection during the request and its size after.
 */
async function measuredGet(path: string, apiKey: string) {
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  const profiler = new GCProfiler();
  profiler.start();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const answer = await api.request(path, { apiKey });
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const collections = profiler.stop().statistics.map((gc) => gc.beforeGC.heapStatistics.usedHeapSize);
  const heapPeak = Math.max(process.memoryUsage().heapUsed, ...collections);
  return { ...answer, cpuMs: (used.user + used.system) / 1000, wallMs, heapGrowth: heapPeak - heapBefore };
}

/**
 * What a page of entries must hold: the derivation's entries of its range, with the spins that used
 * them (none of them voided).
 */
function expectedEntries(derived: DerivedEntry[], first: number, count: number, spinIds: Map<number, string>) {
  return derived
    .slice(first, first + count)
    .map((entry) => ({ ...entry, spinId: spinIds.get(entry.index) ?? null, voided: false }));
}

describe("revealed entries, page by page", () => {
  it("pages a 10,000-entry block in index order; the pages concatenate to the derivation and the SDK verifies it from them", async () => {
    const game = await registerTestGame(api, { fill: false });
    const served = [0, 1, 999, 1000, 5432, 9999];
    const { blockId, spinIds } = await sealRevealedBlock(api, game.gameId, 10_000, served);
    const client = new PartnerClient({ apiKey: game.apiKey, baseUrl: api.baseUrl });
    const block = await client.blocks.get(game.gameId, blockId);
    const derived = deriveBlockEntries(block.seed as string, SAMPLE_PAR_SHEET, { size: block.size });

    const pages: RevealedEntriesPage[] = [];
    for (let page = 1; page <= 10; page++) {
      const answer = await api.request(entriesPath(game.gameId, blockId, page === 1 ? "" : `?page=${page}`), {
        apiKey: game.apiKey,
      });
      expect(answer.status).toBe(200);
      pages.push(answer.body);
    }
    expect(pages.map(({ entries, ...fields }) => [fields, entries.length])).toEqual(
      pages.map((_, at) => [{ blockId, seed: block.seed, page: at + 1, limit: 1000, total: 10_000 }, 1000]),
    );
    expect(pages.flatMap((page) => page.entries)).toEqual(expectedEntries(derived, 0, 10_000, spinIds));
    expect(Object.keys(pages[0] as object)).toEqual(["blockId", "seed", "entries", "page", "limit", "total"]);

    const odd = await api.request(entriesPath(game.gameId, blockId, "?page=3&limit=7"), { apiKey: game.apiKey });
    expect(odd.body).toEqual({
      blockId,
      seed: block.seed,
      entries: expectedEntries(derived, 14, 7, spinIds),
      page: 3,
      limit: 7,
      total: 10_000,
    });
    const last = await client.blocks.entriesPage(game.gameId, blockId, { page: 1429, limit: 7 });
    expect(last.entries.map((entry) => [entry.index, entry.spinId])).toEqual([
      [9996, null],
      [9997, null],
      [9998, null],
      [9999, spinIds.get(9999)],
    ]);
    for (const query of ["?page=11", "?page=1430&limit=7", "?page=999999999"]) {
      const past = await api.request(entriesPath(game.gameId, blockId, query), { apiKey: game.apiKey });
      expect([past.status, past.body.entries, past.body.total], query).toEqual([200, [], 10_000]);
    }

    // The SDK fetches every page and verifies the block from them.
    const revealed = await client.blocks.entries(game.gameId, blockId);
    expect(revealed.entries.map((entry) => entry.index)).toEqual(derived.map((entry) => entry.index));
    expect(revealed.entries.filter((entry) => entry.spinId !== null).map((entry) => entry.index)).toEqual(served);
    expect(verifyRevealedBlock(block, revealed, SAMPLE_PAR_SHEET)).toEqual({ ok: true, reason: null });
    const cut = { ...revealed, entries: revealed.entries.slice(0, 9000) };
    expect(verifyRevealedBlock(block, cut, SAMPLE_PAR_SHEET)).toEqual({
      ok: false,
      reason: "9000 entries revealed, the block has 10000",
    });
  });

  it("refuses a limit outside 1..1000 and a page below 1 with 400 KS-4101", async () => {
    const game = await registerTestGame(api, { fill: false });
    const { blockId } = await sealRevealedBlock(api, game.gameId, 10);
    for (const query of ["?limit=0", "?limit=1001", "?limit=abc", "?page=0", "?page=-1", "?page=1.5", "?page=abc"]) {
      const answer = await api.request(entriesPath(game.gameId, blockId, query), { apiKey: game.apiKey });
      expect([answer.status, answer.body.errorCode], query).toEqual([400, "KS-4101"]);
    }
    const fine = await api.request(entriesPath(game.gameId, blockId, "?limit=1000&page=1"), { apiKey: game.apiKey });
    expect([fine.status, fine.body.entries.length, fine.body.total]).toEqual([200, 10, 10]);
  });

  it("serves the largest block (1,000,000 entries) a page at a time in bounded heap, CPU and time", async () => {
    const game = await registerTestGame(api, { fill: false });
    const served = [0, 123_456, 999_999];
    const { blockId, spinIds } = await sealRevealedBlock(api, game.gameId, LARGEST_BLOCK, served);
    // Stored uncompressed (migration 0012): Postgres reads a page's slice from the chunks that hold it.
    const [stored] = await api.database.sql<{ compression: string | null; bytes: number }[]>`
      select pg_column_compression(entries) as compression, pg_column_size(entries) as bytes
      from blocks where id = ${blockId}`;
    expect(stored).toEqual({ compression: null, bytes: 10_000_137 });
    // The first, middle and last of its 1,000 pages and some between, one entry, and past the end.
    const queries = [1, 2, 124, 250, 500, 501, 750, 999, 1000].map((page) => ({ page, limit: 1000 }));
    queries.push({ page: 123_457, limit: 1 }, { page: 1001, limit: 1000 });
    const answers: Array<{ query: (typeof queries)[number] } & Awaited<ReturnType<typeof measuredGet>>> = [];
    for (const query of queries) {
      const path = entriesPath(game.gameId, blockId, `?page=${query.page}&limit=${query.limit}`);
      const answer = await measuredGet(path, game.apiKey);
      expect(answer.status, path).toBe(200);
      answers.push({ query, ...answer });
    }
    const worst = (figure: "heapGrowth" | "cpuMs" | "wallMs") => Math.max(...answers.map((answer) => answer[figure]));
    // Answering the whole block at once held ~190 MB of entries and ~190 MB of JSON and took seconds of CPU.
    expect(worst("heapGrowth")).toBeLessThan(50 * MiB);
    expect(worst("cpuMs")).toBeLessThan(250);
    expect(worst("wallMs")).toBeLessThan(2000);
    expect(api.deps.revealedPages.bytes).toBeGreaterThan(0);
    expect(api.deps.revealedPages.bytes).toBeLessThanOrEqual(api.deps.revealedPages.maxBytes);

    const block = await new PartnerClient({ apiKey: game.apiKey, baseUrl: api.baseUrl }).blocks.get(
      game.gameId,
      blockId,
    );
    const derived = deriveBlockEntries(block.seed as string, SAMPLE_PAR_SHEET, { size: LARGEST_BLOCK });
    for (const { query, body } of answers) {
      const first = (query.page - 1) * query.limit;
      const count = Math.max(0, Math.min(query.limit, LARGEST_BLOCK - first));
      expect(body, `page ${query.page}`).toEqual({
        blockId,
        seed: block.seed,
        entries: expectedEntries(derived, first, count, spinIds),
        ...query,
        total: LARGEST_BLOCK,
      });
    }
  });
});
