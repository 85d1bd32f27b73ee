import { createRoute, z } from "@hono/zod-openapi";
import { CURRENT_RELEASE } from "@outcomes/core";
import { finishRollout, type RolloutState, rolloutState } from "@outcomes/db";
import { TimestampSchema } from "@outcomes/records";
import { announceChange } from "../../invalidation.js";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonResponse } from "../../openapi.js";
import { createRouter } from "../../router.js";

const ReleaseState = z
  .object({
    release: z.number().int().openapi({ description: "This release's number (RELEASES.md)", example: CURRENT_RELEASE }),
    rolloutFinished: z.boolean().openapi({
      description: "True once the last step of its rollout ran: no process of the previous release is left",
    }),
    finishedAt: TimestampSchema.nullable(),
  })
  .openapi("ReleaseState");

const tags = ["Operator: release"];
const description =
  "A rolling upgrade runs the previous release beside this one (docs/upgrades.md). Its last step, once no " +
  "process of the previous release is left, declares the rollout finished: features of this release that the " +
  "previous one would misread are refused until then, and come on within 1 s on every process after it.";

const stateBody = (state: RolloutState) => ({
  release: state.release,
  rolloutFinished: state.finishedAt !== null,
  finishedAt: state.finishedAt?.toISOString() ?? null,
});

export const releaseRouter = createRouter();

releaseRouter.openapi(
  createRoute({
    method: "get",
    path: "/release",
    operationId: "getRelease",
    tags,
    summary: "This release and whether its rollout has finished",
    description,
    responses: {
      200: jsonResponse(ReleaseState, "As stored now"),
      ...errorResponses(...ADMIN_COMMON_ERRORS),
    },
  }),
  async (c) => c.json(stateBody(await rolloutState(c.var.deps.db, CURRENT_RELEASE)), 200),
);

releaseRouter.openapi(
  createRoute({
    method: "post",
    path: "/release/finish",
    operationId: "finishReleaseRollout",
    tags,
    summary: "Declare this release's rollout finished",
    description: `${description} Repeating it changes nothing (the first \`finishedAt\` stays).`,
    responses: {
      200: jsonResponse(ReleaseState, "The rollout is finished"),
      ...errorResponses(...ADMIN_COMMON_ERRORS),
    },
  }),
  async (c) => {
    const state = await finishRollout(c.var.deps.db, CURRENT_RELEASE);
    await announceChange(c.var.deps, "rollout");
    return c.json(stateBody(state), 200);
  },
);
