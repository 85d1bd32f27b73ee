import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import { runKeyExpiryNow, runSettlementsNow } from "@outcomes/queue";
import { ReportDateSchema } from "@outcomes/records";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonResponse, optionalJsonBody } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { reportDateBodyGuard } from "../settlement-schemas.js";

/** Operator triggers of the scheduled jobs: each queues the same job its scheduler queues. */
const QueuedJob = z.object({ jobId: z.string().openapi({ example: "42" }) }).openapi("QueuedJob");

const RunSettlementsBody = z
  .strictObject({
    reportDate: ReportDateSchema.optional().openapi({ description: "Default: the previous UTC day" }),
  })
  .openapi("RunSettlements");

const tags = ["Operator: jobs"];

export const jobsRouter = createRouter();

jobsRouter.openapi(
  createRoute({
    method: "post",
    path: "/jobs/settlements/run",
    operationId: "runSettlementJob",
    tags,
    summary: "Run the daily settlement now",
    description:
      "Queues `settlement.generate`: the `settlements` worker builds the day's report for every partner and " +
      "environment with registered games, leaving acknowledged and disputed reports unchanged. Progress is on " +
      "the job (dashboard at /admin/queues).",
    middleware: [reportDateBodyGuard],
    request: { body: optionalJsonBody(RunSettlementsBody, { reportDate: "2026-05-01" }) },
    responses: {
      202: jsonResponse(QueuedJob, "Queued"),
      ...errorResponses(...ADMIN_COMMON_ERRORS, ErrorCode.InvalidRequest, ErrorCode.InvalidDate),
    },
  }),
  async (c) => {
    const { reportDate } = c.req.valid("json");
    return c.json({ jobId: await runSettlementsNow(c.var.deps.producers, reportDate) }, 202);
  },
);

jobsRouter.openapi(
  createRoute({
    method: "post",
    path: "/jobs/key-expiry/run",
    operationId: "runKeyExpiryJob",
    tags,
    summary: "Run the key-expiry notice sweep now",
    description:
      "Queues `key-expiry.sweep` (also run on KEY_EXPIRY_CRON, UTC): each unrevoked key within 30, 7 or 1 days " +
      "of expiry gets its `api_key.expiring` event once per threshold, however often the sweep runs.",
    responses: {
      202: jsonResponse(QueuedJob, "Queued"),
      ...errorResponses(...ADMIN_COMMON_ERRORS),
    },
  }),
  async (c) => {
    return c.json({ jobId: await runKeyExpiryNow(c.var.deps.producers) }, 202);
  },
);
