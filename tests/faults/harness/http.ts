import { randomUUID } from "node:crypto";
import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { readAnswer } from "@outcomes/testkit/http-answer";
import { eventually } from "./processes.js";

export const FAULT_ADMIN_TOKEN = "faults-admin-token-0123456789";

export interface CallOptions {
  json?: unknown;
  apiKey?: string;
  admin?: boolean;
  headers?: Record<string, string>;
  timeoutMs?: number;
  retryIdleReset?: boolean;
}

function isSocketReset(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } })?.cause;
  return cause?.code === "UND_ERR_SOCKET" || cause?.code === "ECONNRESET";
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** JSON over HTTP to one API address; `admin` adds the operator token, `apiKey` the partner key. */
export class ApiClient {
  constructor(readonly baseUrl: string) {}

  /**
   * One request. Control calls (`retryIdleReset`, default on) are re-sent once when a pooled
   * keep-alive socket was reset: the server closes sockets idle for 5 s, and a request racing that
   * close never reached it. Load clients turn this off and record the failure instead.
   */
  async call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    try {
      return await this.once(method, path, options);
    } catch (error) {
      if (options.retryIdleReset === false || !isSocketReset(error)) throw error;
      return this.once(method, path, options);
    }
  }

  private async once(method: string, path: string, options: CallOptions): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.json !== undefined) headers["content-type"] = "application/json";
    if (options.apiKey) headers["x-api-key"] = options.apiKey;
    if (options.admin) headers.authorization = `Bearer ${FAULT_ADMIN_TOKEN}`;
    const response = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
    return readAnswer(response);
  }

  /** Same as `call`, but anything other than `expected` throws with the answer. */
  async expect(expected: number, method: string, path: string, options: CallOptions = {}) {
    const answer = await this.call(method, path, options);
    if (answer.status !== expected) {
      throw new Error(`${method} ${path}: expected ${expected}, got ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    return answer.body;
  }
}

export interface World {
  partnerId: string;
  apiKey: string;
  gameId: number;
}

/** A partner (slug `${slugPrefix}-…`) and a sandbox key of it, through the operator API. */
export async function createPartnerWithKey(api: ApiClient, slugPrefix: string) {
  const slug = `${slugPrefix}-${randomUUID().slice(0, 8)}`;
  const partner = await api.expect(201, "POST", "/api/admin/v1/partners", { admin: true, json: { slug, name: slug } });
  const key = await api.expect(201, "POST", `/api/admin/v1/partners/${partner.id}/api-keys`, {
    admin: true,
    json: { environment: "sandbox" },
  });
  return { partnerId: partner.id as string, apiKey: key.key as string };
}

/** A partner, a sandbox key and a game of the sample PAR sheet, all through the operator and partner APIs. */
export async function createWorld(api: ApiClient, options: { maxWagerUsd?: number } = {}): Promise<World> {
  const { partnerId, apiKey } = await createPartnerWithKey(api, "faults");
  const sheet = await api.expect(201, "POST", "/api/partner/v1/par-sheets", { apiKey, json: SAMPLE_PAR_SHEET });
  const gameId = await registerGame(api, apiKey, sheet.id, options.maxWagerUsd ?? 100);
  return { partnerId, apiKey, gameId };
}

export async function registerGame(api: ApiClient, apiKey: string, parSheetId: string, maxWagerUsd = 100) {
  const game = await api.expect(201, "POST", "/api/partner/v1/games", {
    apiKey,
    json: { parSheetId, name: `game-${randomUUID().slice(0, 8)}`, maxWagerUsd },
  });
  return game.gameConfigId as number;
}

/**
 * A webhook of the world's partner for `api_key.expiring` at `receiverUrl`, and a new key of it that
 * expires in 3 days, so the next key-expiry sweep raises one notice; answers the issued key.
 */
export async function expiringKeyWatched(api: ApiClient, world: World, receiverUrl: string) {
  await api.expect(201, "POST", "/api/partner/v1/webhooks", {
    apiKey: world.apiKey,
    json: { url: receiverUrl, events: ["api_key.expiring"] },
  });
  return api.expect(201, "POST", `/api/admin/v1/partners/${world.partnerId}/api-keys`, {
    admin: true,
    json: { environment: "sandbox", expiresAt: new Date(Date.now() + 3 * 86_400_000).toISOString() },
  });
}

/** Waits until the blocks worker has filled the game's reserve to `readyBlocks` (operator reserve view). */
export async function waitForReserve(api: ApiClient, gameId: number, readyBlocks: number, timeoutMs = 30_000) {
  return eventually(
    async () => {
      const reserve = await api.expect(200, "GET", `/api/admin/v1/games/${gameId}/reserve`, { admin: true });
      return reserve.readyBlocks >= readyBlocks && reserve.queuedOutcomes > 0 && reserve;
    },
    timeoutMs,
    `game ${gameId} to reach ${readyBlocks} ready blocks`,
  );
}
