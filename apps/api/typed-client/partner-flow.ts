/**
 * A partner's everyday calls written against the types openapi-typescript generates from the served
 * document (`paths`). The generated file is not kept: openapi-clients.test.ts writes it beside a copy
 * of this file and type-checks the two, so this compiles only while the document describes the API as
 * partners call it (integer ids, `Idempotency-Key` as spelled), then runs the flow against the service.
 * No DOM or Node types: the check compiles this file and the generated one alone.
 */
import type { paths } from "./partner-api.js";

/** What the flow needs of `fetch`. */
export type Fetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ status: number; json(): Promise<unknown> }>;

type Method = "get" | "post" | "patch" | "delete";
type Path = keyof paths;
/** The methods a path has (the generated path items mark the others `?: never`). */
type MethodOf<P extends Path> = { [M in Method]-?: [NonNullable<paths[P][M]>] extends [never] ? never : M }[Method];
type Operation<P extends Path, M extends MethodOf<P>> = NonNullable<paths[P][M]>;

type JsonOf<T> = T extends { content: { "application/json": infer Body } } ? Body : never;
type ParametersOf<O> = O extends { parameters: infer P } ? Omit<P, "cookie"> : object;
type RequestBody<O> = O extends { requestBody: infer R }
  ? { body: JsonOf<R> }
  : O extends { requestBody?: infer R }
    ? { body?: JsonOf<NonNullable<R>> }
    : object;
type Init<O> = ParametersOf<O> & RequestBody<O>;
type Success<O> = O extends { responses: infer R } ? JsonOf<R[keyof R & (200 | 201 | 202)]> : never;

type Loose = {
  path?: Record<string, string | number>;
  query?: Record<string, string | number>;
  header?: Record<string, string>;
  body?: unknown;
};

/**
 * A client whose every call is typed by the document: path, method, parameters, body and answer.
 * `baseUrl` is the deployment's address plus the document's server URL (`/api/partner/v1`).
 */
export function partnerClient(baseUrl: string, apiKey: string, fetch: Fetch) {
  return async function call<P extends Path, M extends MethodOf<P>>(
    method: M,
    path: P,
    init: Init<Operation<P, M>>,
  ): Promise<Success<Operation<P, M>>> {
    const { path: params = {}, query = {}, header = {}, body } = init as Loose;
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
    const search = Object.entries(query)
      .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`)
      .join("&");
    const response = await fetch(`${baseUrl}${filled}${search ? `?${search}` : ""}`, {
      method: method.toUpperCase(),
      headers: {
        "X-API-Key": apiKey,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        ...header,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = await response.json();
    if (response.status >= 300) throw new Error(`${method} ${filled}: ${response.status} ${JSON.stringify(answer)}`);
    return answer as Success<Operation<P, M>>;
  };
}

type Call = ReturnType<typeof partnerClient>;
type ParSheetDocument = JsonOf<Operation<"/par-sheets", "post">["requestBody"]>;

/** Uploads a sandbox sheet (ACTIVE at once) and registers a game on it; the game's id. */
export async function registerGame(call: Call, sheet: ParSheetDocument): Promise<number> {
  const uploaded = await call("post", "/par-sheets", { body: sheet });
  const game = await call("post", "/games", {
    body: { parSheetId: uploaded.id, name: "Lucky Sevens", minWagerUsd: 0.1, maxWagerUsd: 100 },
  });
  const again = await call("get", "/games/{gameId}", { path: { gameId: game.gameConfigId } });
  return again.gameConfigId;
}

/** Spins once (retry-safe), then reads the player, their spins, the spin's block and its inclusion proof. */
export async function spinAndAudit(call: Call, gameId: number) {
  const spin = await call("post", "/spins", {
    header: { "Idempotency-Key": `flow-${gameId}-1` },
    body: { gameId, playerId: "player-42", wagerUsd: 1.5 },
  });
  const player = await call("get", "/players/{playerId}", { path: { playerId: spin.playerId } });
  const spins = await call("get", "/players/{playerId}/spins", {
    path: { playerId: spin.playerId },
    query: { page: 1, limit: 10 },
  });
  if (!spin.fairness) throw new Error("a spin drawn from a block names it");
  const block = await call("get", "/games/{gameId}/blocks/{blockId}", {
    path: { gameId: spin.gameId, blockId: spin.fairness.blockId },
  });
  const blocks = await call("get", "/games/{gameId}/blocks", { path: { gameId }, query: { limit: 5 } });
  const proof = await call("get", "/spins/{spinId}/proof", { path: { spinId: spin.spinId } });
  return {
    spinId: spin.spinId,
    balanceUsd: player.balanceUsd,
    listed: spins.spins.map((listed) => listed.spinId),
    blockId: block.blockId,
    blockIds: blocks.blocks.map((listed) => listed.blockId),
    proof: { blockId: proof.blockId, index: proof.index },
  };
}
