import { createRoute, z } from "@hono/zod-openapi";
import { couldBeId, ErrorCode, ServiceError } from "@outcomes/core";
import { REPLAY_LINK_DEFAULT_HOURS, REPLAY_LINK_MAX_HOURS, requireOwnSpin } from "@outcomes/db";
import { ReplayLinkSchema } from "@outcomes/records";
import { keyedRequest } from "../../idempotency.js";
import { gated } from "../../middleware/gated.js";
import { errorResponses, jsonResponse, optionalJsonBody, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { createKeyOf, gatedKeyHeader, markReplay } from "../keyed-create.js";
import { publicBaseUrl } from "./spin-views.js";

// Replay links (CONTRACT §17, docs/fairness.md "Replay pages"): a signed link per spin to a page
// anyone can open, with the spin as played and its proof checked by the browser.

const ReplayLinkBody = z
  .object({
    expiresInHours: z
      .number()
      .int()
      .min(1)
      .max(REPLAY_LINK_MAX_HOURS)
      .optional()
      .openapi({
        description: `How long the link works, in hours: 1..${REPLAY_LINK_MAX_HOURS} (90 days), default ${REPLAY_LINK_DEFAULT_HOURS} (7 days)`,
        example: 24,
      }),
  })
  .openapi("CreateReplayLink");

const SpinParams = z.object({
  spinId: z.string().openapi({ param: { name: "spinId", in: "path" }, example: "spn_0T9xYz12AbCdEfGhIjKlMn" }),
});

export const replayLinksRouter = createRouter();

replayLinksRouter.openapi(
  createRoute({
    method: "post",
    path: "/spins/{spinId}/replay-link",
    operationId: "createReplayLink",
    tags: ["Spins"],
    summary: "Make a replay link: the spin as played, its proof checked in the browser",
    description:
      "A link to a page anyone can open (a player, a support agent, a regulator; no API key), on a phone too: the " +
      "game's name, the time, wager, reels, tier, multiplier, payout, balance after, whether the spin was voided or " +
      "a free round, and the spin's inclusion proof checked by the browser itself (and the block's seed, once " +
      "revealed). The page shows no player id and nothing of your account; the token is signed and encrypted, so " +
      "it cannot be guessed, altered or read. Add `.json` to the URL for the same facts and the proof. An expired " +
      "link answers 404, as an unknown one. Available once `release finish` has run for release 3 (until then 404). " +
      "Another partner's or environment's spin, or an unknown id: 404 KS-4215. With `Idempotency-Key` (kept 24 h) " +
      "a repeat of the same request answers the first link (`Idempotent-Replayed: true`).",
    middleware: [gated("replay-pages")],
    request: {
      params: SpinParams,
      headers: gatedKeyHeader("replay link"),
      body: optionalJsonBody(ReplayLinkBody, { expiresInHours: 24 }),
    },
    responses: {
      201: jsonResponse(ReplayLinkSchema, "The link and when it stops working"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ErrorCode.NotFound,
      ),
    },
  }),
  async (c) => {
    const { spinId } = c.req.valid("param");
    if (!couldBeId(spinId)) throw new ServiceError(ErrorCode.NotFound, { message: "Spin not found" });
    const hours = c.req.valid("json").expiresInHours;
    const { deps, partner } = c.var;
    const key = await createKeyOf(c, "replay link", "keyed-creates");
    const created = await deps.creates.createOnce({
      key: keyedRequest(partner, key, { route: "POST /spins/{spinId}/replay-link", spinId, hours: hours ?? "default" }),
      admit: async () => {
        await requireOwnSpin(deps.db, partner, spinId);
        // A link is signed, not stored: the transaction holds only the key's record.
        return async () => deps.replayLinks.link(spinId, { baseUrl: publicBaseUrl(c), hours });
      },
      present: (link) => ({ url: link.url, expiresAt: link.expiresAt.toISOString() }),
      replay: (stored) => ReplayLinkSchema.parse(stored),
    });
    markReplay(c, created);
    return c.json(created.body, 201);
  },
);
