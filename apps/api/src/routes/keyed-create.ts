import { z } from "@hono/zod-openapi";
import type { GateName } from "@outcomes/core";
import type { Context } from "hono";
import type { AppEnv } from "../context.js";
import { validationError } from "../errors.js";
import type { Created } from "../idempotency.js";
import { idempotencyKeyHeader } from "./partner/spins.js";

// The HTTP side of the keyed-create concern (idempotency.ts): the `Idempotency-Key` of a create
// and the mark of a replayed answer.

/**
 * The optional `Idempotency-Key` of a create behind a release gate, as the OpenAPI document shows
 * it. The route's validator does not check it (it would, gate or not): `createKeyOf` does.
 */
export function gatedKeyHeader(what: string) {
  return z.object({
    "Idempotency-Key": z
      .string()
      .optional()
      .openapi({
        minLength: 1,
        maxLength: 255,
        description:
          `1 to 255 characters (not only spaces), one per intended ${what}. The same key and body within 24 h ` +
          "answer the first result (`Idempotent-Replayed: true`) and make nothing more; another body is KS-4101",
      }),
  });
}

/**
 * The create's key, checked as a spin's (empty, blank or over 255 characters: 400 KS-4101). While
 * `gate` is closed the header is ignored, as the previous release ignores it (docs/upgrades.md).
 */
export async function createKeyOf(c: Context<AppEnv>, what: string, gate: GateName): Promise<string | undefined> {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined || !(await c.var.deps.rollout.on(gate))) return undefined;
  const parsed = idempotencyKeyHeader(what).safeParse({ "Idempotency-Key": key });
  if (!parsed.success) throw validationError(parsed.error, key, "header");
  return key;
}

/** Says in `Idempotent-Replayed` that the create's answer is its key's first request's (nothing was made now). */
export function markReplay(c: Context<AppEnv>, created: Created<unknown, unknown>): void {
  if (created.replayed) c.header("Idempotent-Replayed", "true");
}
