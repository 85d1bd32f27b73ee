import fc from "fast-check";
import {
  BOM_BODY,
  encodeSegment,
  fromValue,
  hostileKey,
  hostileQueryValue,
  hostileSegment,
  hostileValue,
  type Json,
  Obj,
  RAW_QUERIES,
  toText,
  UNPARSEABLE_BODIES,
  WRONG_SHAPE_BODIES,
} from "./hostile.js";
import { fillPath, type PartnerRoute } from "./route-table.js";
import type { World } from "./world.js";

/** One request as sent: everything but the API key is in here. */
export interface HostileRequest {
  method: string;
  /** Path and query, already encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** What was made hostile, for the failure message. */
  mutation: string;
}

type BodyMutation =
  | { kind: "replace"; at: number; value: Json }
  | { kind: "remove"; at: number }
  | { kind: "add"; at: number; key: string; value: Json }
  | { kind: "duplicate"; at: number; value: Json }
  | { kind: "whole"; value: Json }
  | { kind: "malformed"; text: string };

/** A node's place: its container and index there. */
interface Slot {
  parent: Obj | Json[];
  index: number;
}

function slots(json: Json, out: Slot[] = []): Slot[] {
  const children = json instanceof Obj ? json.entries.map(([, value]) => value) : Array.isArray(json) ? json : [];
  children.forEach((child, index) => {
    out.push({ parent: json as Obj | Json[], index });
    slots(child, out);
  });
  return out;
}

function objects(json: Json, out: Obj[] = []): Obj[] {
  if (json instanceof Obj) out.push(json);
  const children = json instanceof Obj ? json.entries.map(([, value]) => value) : Array.isArray(json) ? json : [];
  for (const child of children) objects(child, out);
  return out;
}

function setAt(slot: Slot, value: Json) {
  if (slot.parent instanceof Obj) slot.parent.entries[slot.index]![1] = value;
  else slot.parent[slot.index] = value;
}

/** Applies a mutation to a fresh copy of the valid body; returns the text to send. */
function mutateBody(valid: unknown, mutation: BodyMutation): string {
  if (mutation.kind === "malformed") return mutation.text;
  if (mutation.kind === "whole") return toText(mutation.value);
  const body = fromValue(valid);
  const all = slots(body);
  if (mutation.kind === "add") {
    const targets = objects(body);
    const target = targets[mutation.at % targets.length]!;
    target.entries.push([mutation.key, mutation.value]);
    return toText(body);
  }
  if (all.length === 0) return toText(body);
  const slot = all[mutation.at % all.length]!;
  if (mutation.kind === "replace") setAt(slot, mutation.value);
  else if (mutation.kind === "remove") {
    if (slot.parent instanceof Obj) slot.parent.entries.splice(slot.index, 1);
    else slot.parent.splice(slot.index, 1);
  } else if (slot.parent instanceof Obj) {
    // The same key again with another value: parsers keep the last one.
    const [key] = slot.parent.entries[slot.index]!;
    slot.parent.entries.push([key, mutation.value]);
  } else slot.parent.push(mutation.value);
  return toText(body);
}

const bodyMutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("replace"), at: fc.nat(), value: hostileValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove"), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("add"), at: fc.nat(), key: hostileKey, value: hostileValue }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("duplicate"), at: fc.nat(), value: hostileValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("whole"), value: hostileValue }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("malformed"),
      text: fc.constantFrom(...UNPARSEABLE_BODIES, ...WRONG_SHAPE_BODIES, BOM_BODY),
    }),
  },
) as fc.Arbitrary<BodyMutation>;

/** Media types that are not JSON: the body is not read as JSON, whatever it holds. */
export const NON_JSON_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "",
];
/** Media types of the JSON family: accepted, and the body is judged on its content. */
const JSON_FAMILY_TYPES = ["application/JSON", "application/json; charset=utf-16", "application/merge-patch+json"];
const WRONG_CONTENT_TYPES = [...NON_JSON_TYPES, ...JSON_FAMILY_TYPES];

/** Printable Latin-1: what an HTTP client lets into a header value (no controls, no DEL). */
const headerChar = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
  .map((code) => String.fromCharCode(code));

const hostileHeaderValue = fc.oneof(
  fc.constantFrom("", " ", "x".repeat(256), "x".repeat(8000), "ÿþ", "__proto__", "a;b,c", "%0d%0a"),
  fc.string({ unit: headerChar, maxLength: 300 }),
);

function encodedParams(route: PartnerRoute, world: World): Record<string, string> {
  return Object.fromEntries(Object.entries(route.params?.(world) ?? {}).map(([k, v]) => [k, encodeSegment(v)]));
}

function withQuery(path: string, query: string): string {
  return query ? `${path}?${query}` : path;
}

/** Requests to `route` with exactly one hostile part; everything else is valid for `world`. */
export function hostileRequests(route: PartnerRoute, world: World): fc.Arbitrary<HostileRequest> {
  const method = route.method.toUpperCase();
  const params = encodedParams(route, world);
  const path = fillPath(route.path, params);
  const validQuery = new URLSearchParams(route.query ?? {}).toString();
  const validBody = route.body ? JSON.stringify(route.body(world)) : undefined;
  const json = { "Content-Type": "application/json" };
  const base = (mutation: string, part: Partial<HostileRequest>): HostileRequest => ({
    method,
    url: withQuery(path, validQuery),
    headers: validBody === undefined ? {} : json,
    ...(validBody === undefined ? {} : { body: validBody }),
    mutation,
    ...part,
  });
  const choices: Array<fc.Arbitrary<HostileRequest>> = [];

  if (route.body) {
    const valid = route.body(world);
    choices.push(
      bodyMutation.map((mutation) => {
        const body = mutateBody(valid, mutation);
        return base(`body ${mutation.kind}: ${body.slice(0, 300)}`, { body });
      }),
      fc
        .constantFrom(...WRONG_CONTENT_TYPES)
        .map((type) => base(`content-type ${JSON.stringify(type)}`, { headers: type ? { "Content-Type": type } : {} })),
    );
  }
  for (const name of Object.keys(params)) {
    choices.push(
      hostileSegment.map((segment) =>
        base(`path {${name}} = ${segment.slice(0, 200)}`, {
          url: withQuery(fillPath(route.path, { ...params, [name]: segment }), validQuery),
        }),
      ),
    );
  }
  if (route.query) {
    choices.push(
      fc.tuple(fc.constantFrom(...Object.keys(route.query)), hostileQueryValue).map(([name, value]) => {
        const query = new URLSearchParams({ ...route.query, [name]: value }).toString();
        return base(`query ${query}`, { url: withQuery(path, query) });
      }),
      fc.constantFrom(...RAW_QUERIES).map((query) => base(`query ${query}`, { url: withQuery(path, query) })),
    );
  }
  if (route.path.endsWith("/spins") && method === "POST") {
    choices.push(
      hostileHeaderValue.map((value) =>
        base(`Idempotency-Key ${JSON.stringify(value.slice(0, 60))} (${value.length})`, {
          headers: { ...json, "Idempotency-Key": value },
        }),
      ),
    );
  }
  // A route that takes nothing (GET /jurisdictions) still gets stray query strings.
  if (choices.length === 0) {
    choices.push(
      fc.constantFrom(...RAW_QUERIES).map((query) => base(`query ${query}`, { url: withQuery(path, query) })),
    );
  }
  return fc.oneof(...choices);
}
