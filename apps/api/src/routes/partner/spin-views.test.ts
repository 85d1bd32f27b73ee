import { PartnerClient, verifySpinProof } from "@outcomes/sdk";
import { startTestApi } from "@outcomes/testkit/api";
import { cliAgainst } from "@outcomes/testkit/cli";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { REPLAY_ENV, type ReplaySpins, replaySpins } from "@outcomes/testkit/replays";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * One request gives a verifier what it needs (issue #33: `GET /spins/{id}`, its proof and its block
 * took three requests a spin under a 20 requests/s limit): `?include=proof` on a spin and on a page
 * of a player's spins, each one request of the rate limit; `?replayLinks=true` on the page (CONTRACT
 * §17: the last ten spins with a replay link each).
 */
const api = testApiForFile(REPLAY_ENV);
let world: ReplaySpins;
beforeAll(async () => {
  world = await replaySpins(api);
});

const get = (path: string, apiKey = world.game.apiKey) => api.request(`/api/partner/v1${path}`, { apiKey });

describe("?include=proof", () => {
  it("adds the spin's proof and block to GET /spins/{spinId}: verifySpinProof needs nothing else", async () => {
    const { won, forced } = world;
    const [spin, proof, block] = await Promise.all([
      get(`/spins/${won.spinId}?include=proof`),
      get(`/spins/${won.spinId}/proof`),
      get(`/games/${won.gameId}/blocks/${won.fairness.blockId}`),
    ]);
    expect(spin.body).toEqual({ ...won, proof: proof.body, block: block.body });
    expect(verifySpinProof(spin.body, spin.body.proof, spin.body.block)).toEqual({ ok: true, reason: null });
    expect((await get(`/spins/${forced.spinId}?include=proof`)).body).toEqual({ ...forced, proof: null, block: null });
    expect((await get(`/spins/${won.spinId}`)).body).toEqual(won);
    const bad = await get(`/spins/${won.spinId}?include=everything`);
    expect([bad.status, bad.body.errorCode]).toEqual([400, "KS-4101"]);
  });

  it("adds every listed spin's proof and block to a player's page, in one request of the rate limit", async () => {
    // A process of the deployment at 5 requests a second: the bucket is full (the requests before
    // drew at 10,000 a second), and this request draws exactly one of the five.
    const limited = await startTestApi({ ...REPLAY_ENV, RATE_LIMIT_REQUESTS_PER_SECOND: "5" }, { shareWith: api });
    const page = await limited
      .request(`/api/partner/v1/players/${world.playerId}/spins?limit=100&include=proof`, { apiKey: world.game.apiKey })
      .finally(() => limited.close());
    expect(page.status).toBe(200);
    expect(page.headers.get("x-ratelimit-remaining")).toBe("4");
    const reader = new PartnerClient({ apiKey: world.game.apiKey, baseUrl: api.baseUrl });
    const spins = page.body.spins as Array<Record<string, any>>;
    expect(spins).toHaveLength(world.spins.length + 2);
    for (const spin of spins) {
      if (spin.forced) {
        expect([spin.proof, spin.block]).toEqual([null, null]);
        continue;
      }
      expect(verifySpinProof(spin as never, spin.proof, spin.block), spin.spinId).toEqual({ ok: true, reason: null });
      expect(spin.proof).toEqual(await reader.spinProof(spin.spinId));
    }
    // Spins of one block carry that block, its seed once revealed.
    const revealed = spins.find((spin) => spin.spinId === world.revealed.spinId)!;
    expect(revealed.block.seed).toMatch(/^[0-9a-f]{64}$/);
    const unrevealed = spins.find((spin) => spin.spinId === world.unrevealed.spinId)!;
    expect(unrevealed.block.seed).toBeNull();
  });
});

describe("?replayLinks=true", () => {
  it("gives each of the player's last ten spins a replay link that opens it", async () => {
    const page = await get(`/players/${world.playerId}/spins?limit=10&replayLinks=true`);
    expect(page.status).toBe(200);
    const spins = page.body.spins as Array<{ spinId: string; replayUrl: string }>;
    expect(spins).toHaveLength(10);
    for (const spin of spins.slice(0, 3)) {
      expect(spin.replayUrl).toMatch(new RegExp(`^${api.baseUrl}/replay/[A-Za-z0-9_-]{63}$`));
      const replay = await api.request(`${new URL(spin.replayUrl).pathname}.json`);
      expect(replay.body.spinId).toBe(spin.spinId);
      expect(Date.parse(replay.body.expiresAt) - Date.now()).toBeGreaterThan(167 * 3_600_000);
    }
    const plain = await get(`/players/${world.playerId}/spins?limit=10&replayLinks=false`);
    expect(plain.body.spins.map((spin: object) => "replayUrl" in spin)).toEqual(Array(10).fill(false));
  });

  it("starts links with PUBLIC_BASE_URL when it is set", async () => {
    const behind = await startTestApi(
      { ...REPLAY_ENV, PUBLIC_BASE_URL: "https://outcomes.example.com/" },
      { shareWith: api },
    );
    try {
      const page = await behind.request(`/api/partner/v1/players/${world.playerId}/spins?limit=1&replayLinks=true`, {
        apiKey: world.game.apiKey,
      });
      expect(page.body.spins[0].replayUrl).toMatch(/^https:\/\/outcomes\.example\.com\/replay\/[A-Za-z0-9_-]{63}$/);
    } finally {
      await behind.close();
    }
  });
});

describe("the SDK", () => {
  it("makes replay links and reads spins with their proofs in one request each", async () => {
    const client = new PartnerClient({ apiKey: world.game.apiKey, baseUrl: api.baseUrl });
    const link = await client.createReplayLink(world.lost.spinId, { expiresInHours: 2 });
    expect(Math.round((Date.parse(link.expiresAt) - Date.now()) / 3_600_000)).toBe(2);
    const replay = await client.getReplay(link.url);
    expect(replay).toEqual(await fetch(`${link.url}.json`).then((answer) => answer.json()));
    expect(replay).toMatchObject({ spinId: world.lost.spinId, outcome: world.lost.outcome });

    const spin = await client.getSpin(world.lost.spinId, { include: "proof" });
    expect(verifySpinProof(spin, spin.proof!, spin.block!)).toEqual({ ok: true, reason: null });
    const page = await client.players.spins(world.playerId, { limit: 10, include: "proof", replayLinks: true });
    expect(page.spins).toHaveLength(10);
    for (const listed of page.spins) {
      expect(listed.replayUrl).toMatch(/\/replay\/[A-Za-z0-9_-]{63}$/);
      if (listed.forced) expect(listed.proof).toBeNull();
      else expect(verifySpinProof(listed, listed.proof!, listed.block!)).toEqual({ ok: true, reason: null });
    }
  });
});

describe("npm run cli -- spins replay-link", () => {
  const { cli, cliJson } = cliAgainst(() => api);

  it("makes a link to any partner's spin that the API opens; unknown KS-4215, bad hours refused", async () => {
    const link = await cliJson("spins", "replay-link", world.won.spinId, "--hours", "3");
    expect(link.url).toMatch(/^\/replay\/[A-Za-z0-9_-]{63}$/);
    expect(Math.round((Date.parse(link.expiresAt) - Date.now()) / 3_600_000)).toBe(3);
    expect((await api.request(`${link.url}.json`)).body.spinId).toBe(world.won.spinId);
    const based = await cliAgainst(() => api, { PUBLIC_BASE_URL: "https://outcomes.example.com" }).cliJson(
      "spins",
      "replay-link",
      world.won.spinId,
    );
    expect(based.url).toMatch(/^https:\/\/outcomes\.example\.com\/replay\//);
    const unknown = await cli("spins", "replay-link", "spn_0000000000000000000000");
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining("KS-4215")]);
    for (const hours of ["0", "2161", "1.5"]) {
      expect((await cli("spins", "replay-link", world.won.spinId, "--hours", hours)).code).not.toBe(0);
    }
  });
});
