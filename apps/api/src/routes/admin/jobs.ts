import { createRoute, z } from "@hono/zod-openapi";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonResponse } from "../../openapi.js";
import { createRouter } from "../../router.js";

/** Operator triggers of the scheduled jobs: each queues the same job its scheduler queues. */
const QueuedJob = z.object({ jobId: z.string().openapi({ example: "42" }) }).openapi("QueuedJob");

const tags = ["Operator: jobs"];

export const jobsRouter = createRouter();

jobsRouter.openapi(
  createRoute({
    method: "post",
    path: "/jobs/key-expiry/run",
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
    const job = await c.var.deps.producers.add("key-expiry.sweep", {});
    return c.json({ jobId: job.id ?? "" }, 202);
  },
);
