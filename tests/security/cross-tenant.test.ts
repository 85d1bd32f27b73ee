import type { Environment } from "@outcomes/core";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { issueKey } from "@outcomes/testkit/spin-path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectHarmless, send } from "./probe.js";
import {
  describeRoute,
  type Foreign,
  fillPath,
  PARTNER_ROUTES,
  type PartnerRoute,
  uncoveredRoutes,
} from "./route-table.js";
import { buildWorld, utcDay, WORLD_ENV, type World } from "./world.js";

/**
 * Cross-partner and cross-environment access on every partner route (issue 8, item 6; CONTRACT
 * §2): four worlds (partners A and B, each in sandbox and production, with every kind of resource)
 * and every ordered pair of them. A request naming another world's resource is refused with the
 * contract's code and changes nothing; a list never shows another world's resources; what one world
 * creates, no other sees.
 */
type Relation = "other partner" | "other environment" | "other partner and environment";

let api: TestApi;
const worlds: World[] = [];

beforeAll(async () => {
  api = await startTestApi(WORLD_ENV);
  const a = await api.createPartner({ environment: "sandbox" });
  const b = await api.createPartner({ environment: "sandbox" });
  const keys: Array<[{ partnerId: string; apiKey: string }, Environment]> = [
    [a, "sandbox"],
    [{ partnerId: a.partnerId, apiKey: await issueKey(api, a.partnerId, "production") }, "production"],
    [b, "sandbox"],
    [{ partnerId: b.partnerId, apiKey: await issueKey(api, b.partnerId, "production") }, "production"],
  ];
  // A report day of its own per world: report paths name a day, not an id, so a shared day would
  // name the caller's own report.
  for (const [index, [partner, environment]] of keys.entries()) {
    worlds.push(await buildWorld(api, partner, environment, utcDay(index + 1)));
  }
}, 60_000);
afterAll(async () => {
  await api?.close();
});

function relation(attacker: World, victim: World): Relation {
  if (attacker.partnerId === victim.partnerId) return "other environment";
  return attacker.environment === victim.environment ? "other partner" : "other partner and environment";
}

function pairs(): Array<[World, World]> {
  return worlds.flatMap((attacker) =>
    worlds.filter((victim) => victim !== attacker).map((victim): [World, World] => [attacker, victim]),
  );
}

/** CONTRACT §2, §4 and §14: another environment's resources do not exist; another partner's webhook is 403. */
function refusal(kind: Exclude<Foreign["kind"], "list" | "create" | "namespaced">, why: Relation): [number, string] {
  switch (kind) {
    case "game":
      return [403, "KS-4006"];
    case "parSheet":
      return [404, "KS-4205"];
    case "player":
      return [404, "KS-4204"];
    case "report":
      return [404, "KS-4301"];
    case "spin":
      return [404, "KS-4215"];
    case "freeRounds":
      return [404, "KS-4219"];
    case "webhook":
      return why === "other partner" ? [403, "KS-4207"] : [404, "KS-4206"];
  }
}

function requestFor(route: PartnerRoute, world: World) {
  const params = Object.fromEntries(
    Object.entries(route.params?.(world) ?? {}).map(([name, value]) => [name, encodeURIComponent(value)]),
  );
  const query = route.query ? `?${new URLSearchParams(route.query)}` : "";
  const body = route.body ? JSON.stringify(route.body(world)) : undefined;
  return {
    method: route.method.toUpperCase(),
    url: fillPath(route.path, params) + query,
    headers: (body === undefined ? {} : { "Content-Type": "application/json" }) as Record<string, string>,
    body,
  };
}

async function listIds(route: { path: string }, field: string, world: World, idOf: (item: any) => unknown) {
  const answer = await send(api, { method: "GET", url: `${route.path}?limit=100`, headers: {} }, world.apiKey);
  expect(answer.status).toBe(200);
  return (answer.body[field] as unknown[]).map(idOf);
}

describe("cross-partner and cross-environment access", () => {
  it("the table covers every declared partner route", () => {
    expect(uncoveredRoutes()).toEqual({ missing: [], stale: [] });
  });

  for (const route of PARTNER_ROUTES) {
    const { foreign } = route;
    it(`${describeRoute(route)} (${foreign.kind})`, async () => {
      for (const [attacker, victim] of pairs()) {
        const why = relation(attacker, victim);
        const context = `${attacker.environment} key of ${attacker.partnerId} → ${victim.environment} ${why}`;
        if (foreign.kind === "list") {
          const seen = await listIds(route, foreign.field, attacker, foreign.idOf);
          expect(seen, `${context}: own resources listed`).toEqual(expect.arrayContaining(foreign.ids(attacker)));
          for (const id of foreign.ids(victim)) expect(seen, context).not.toContain(id);
        } else if (foreign.kind === "create") {
          const created = await send(api, requestFor(route, attacker), attacker.apiKey);
          expect(created.status, `${context}: ${created.text.slice(0, 200)}`).toBe(201);
          const idOf = (item: { id: string }) => item.id;
          expect(await listIds({ path: foreign.listPath }, foreign.field, attacker, idOf)).toContain(created.body.id);
          expect(await listIds({ path: foreign.listPath }, foreign.field, victim, idOf)).not.toContain(created.body.id);
        } else if (foreign.kind === "namespaced") {
          const read = { ...requestFor({ ...route, method: "get", path: foreign.read, body: undefined }, victim) };
          const before = await send(api, read, victim.apiKey);
          const answer = await send(api, requestFor(route, victim), attacker.apiKey);
          expect(answer.status, context).toBe(200);
          expect((await send(api, read, victim.apiKey)).body, context).toEqual(before.body);
        } else {
          const request = requestFor(route, victim);
          const answer = await expectHarmless(api, { ...request, mutation: context }, attacker.apiKey);
          expect([answer.status, answer.body?.errorCode], context).toEqual(refusal(foreign.kind, why));
        }
      }
    });
  }

  it("a redelivery through one's own webhook of another world's delivery is 404 KS-4215", async () => {
    for (const [attacker, victim] of pairs()) {
      const url = `/api/partner/v1/webhooks/${attacker.webhookId}/deliveries/${victim.deliveryId}/redeliver`;
      const answer = await expectHarmless(api, { method: "POST", url, headers: {} }, attacker.apiKey);
      expect([answer.status, answer.body.errorCode]).toEqual([404, "KS-4215"]);
    }
  });

  it("every world still reaches its own resources (the refusals above are not blanket ones)", async () => {
    for (const world of worlds) {
      for (const route of PARTNER_ROUTES.filter((entry) => entry.method === "get")) {
        const answer = await send(api, requestFor(route, world), world.apiKey);
        expect(answer.status, `${describeRoute(route)} as ${world.environment} ${world.partnerId}`).toBe(
          route.ownStatus ?? 200,
        );
      }
    }
  });
});
