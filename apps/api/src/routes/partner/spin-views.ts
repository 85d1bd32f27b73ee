import { z } from "@hono/zod-openapi";
import { type Database, spinVerifications } from "@outcomes/db";
import { type ListedSpinBody, presentVerification, type SpinResultBody } from "@outcomes/records";
import type { Context } from "hono";
import type { AppEnv } from "../../context.js";

// What a spin answer may carry beside the spin when asked (issue #33: one request gives a verifier
// what it needs; CONTRACT §17: a replay link per listed spin). Off until `release finish` (the gate
// "replay-pages"): release 2 ignores both parameters, so until then every process ignores them.

export const includeProof = z
  .enum(["proof"])
  .optional()
  .openapi({
    param: { name: "include", in: "query" },
    description:
      "`proof`: add each spin's inclusion `proof` and its `block` (commitments, and the seed once revealed), so " +
      "`verifySpinProof(spin, spin.proof, spin.block)` needs no other request. Counted once by the rate limit",
  });

export const replayLinksParam = z
  .enum(["true", "false"])
  .optional()
  .openapi({
    param: { name: "replayLinks", in: "query" },
    description: "`true`: add `replayUrl` to each spin, a replay link with the default expiry (168 hours)",
  });

export interface SpinViews {
  proof: boolean;
  replayLinks: boolean;
}

/** The views asked for, once the gate is open. */
export async function askedViews(
  c: Context<AppEnv>,
  query: { include?: "proof" | undefined; replayLinks?: "true" | "false" | undefined },
): Promise<SpinViews> {
  const proof = query.include === "proof";
  const replayLinks = query.replayLinks === "true";
  if (!(proof || replayLinks) || !(await c.var.deps.rollout.on("replay-pages"))) {
    return { proof: false, replayLinks: false };
  }
  return { proof, replayLinks };
}

/** Where replay links point: PUBLIC_BASE_URL, else the address this request was sent to. */
export function publicBaseUrl(c: Context<AppEnv>): string {
  return c.var.deps.env.PUBLIC_BASE_URL ?? new URL(c.req.url).origin;
}

/** The spins with the views asked for; the proofs of spins of one block are read together. */
export async function withViews(
  c: Context<AppEnv>,
  db: Database,
  spins: SpinResultBody[],
  views: SpinViews,
): Promise<ListedSpinBody[]> {
  if (!views.proof && !views.replayLinks) return spins;
  const positions = spins.flatMap((spin) => (spin.fairness ? [{ spinId: spin.spinId, ...spin.fairness }] : []));
  const [verifications, links] = await Promise.all([
    views.proof ? spinVerifications(db, positions) : undefined,
    views.replayLinks
      ? Promise.all(spins.map((spin) => c.var.deps.replayLinks.link(spin.spinId, { baseUrl: publicBaseUrl(c) })))
      : undefined,
  ]);
  return spins.map((spin, at) => ({
    ...spin,
    ...(verifications && presentVerification(verifications.get(spin.spinId) ?? null)),
    ...(links && { replayUrl: links[at]?.url }),
  }));
}
