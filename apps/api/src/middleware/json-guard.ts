import { ErrorCode, ServiceError } from "@outcomes/core";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { formatPath } from "../errors.js";

/** A surrogate code unit without its pair: UTF-8 (and so Postgres) cannot hold it. */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function unstorable(text: string): boolean {
  return text.includes("\0") || UNPAIRED_SURROGATE.test(text);
}

interface Visit {
  value: unknown;
  key: PropertyKey | null;
  parent: Visit | null;
}

function pathOf(visit: Visit): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let at: Visit | null = visit; at?.key != null; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * The path of the first string or key of a parsed JSON value that Postgres cannot store (U+0000 or
 * an unpaired surrogate), or null. Iterative, with paths built only on a hit: bodies may nest tens
 * of thousands of levels deep.
 */
export function findUnstorableText(value: unknown): string | null {
  const stack: Visit[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const current = visit.value;
    if (typeof current === "string") {
      if (unstorable(current)) return formatPath(pathOf(visit)) || "(body)";
    } else if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index++) {
        stack.push({ value: current[index], key: index, parent: visit });
      }
    } else if (current !== null && typeof current === "object") {
      for (const [key, item] of Object.entries(current)) {
        if (unstorable(key)) return formatPath([...pathOf(visit), key]);
        stack.push({ value: item, key, parent: visit });
      }
    }
  }
  return null;
}

/** Deeper than any document of this API (a PAR sheet is 4 levels) by a wide margin. */
const MAX_JSON_DEPTH = 32;

/** The deepest nesting of arrays and objects in JSON text, brackets inside strings not counted. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c)
        i++; // a backslash escapes the next character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (char === 0x5d || char === 0x7d) depth--;
  }
  return deepest;
}

/**
 * Refuses JSON bodies no field could hold (400 KS-4101), which Postgres would otherwise fail on as
 * a 500, or store and then fail to read back:
 * - nesting deeper than MAX_JSON_DEPTH (jsonb input and output recurse; a PAR sheet's unknown
 *   fields are stored as sent);
 * - U+0000 or unpaired surrogates in any string or key. Raw control characters are invalid JSON
 *   and undecodable bytes become U+FFFD, so only a `\u` escape can produce them: bodies without
 *   one are not parsed twice.
 */
export function jsonGuard(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!/\bjson\b/i.test(c.req.header("Content-Type") ?? "")) return next();
    // Cached by Hono: the route's own JSON validator reads the same text.
    const text = await c.req.text();
    if (jsonDepth(text) > MAX_JSON_DEPTH) {
      throw new ServiceError(ErrorCode.InvalidRequest, {
        message: `JSON is nested more than ${MAX_JSON_DEPTH} levels deep`,
      });
    }
    if (!text.includes("\\u")) return next();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Malformed JSON is the validator's to refuse.
      return next();
    }
    const path = findUnstorableText(parsed);
    if (path !== null) {
      throw new ServiceError(ErrorCode.InvalidRequest, {
        message: "Text must not contain U+0000 or unpaired surrogate characters",
        details: [{ path, message: "contains U+0000 or an unpaired surrogate" }],
      });
    }
    await next();
  };
}
