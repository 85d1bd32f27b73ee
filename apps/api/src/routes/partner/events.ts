import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode, EVENT_TYPES, ServiceError } from "@outcomes/core";
import { eventLogPage } from "@outcomes/db";
import { EventSchema } from "@outcomes/records";
import type { JSONParsed } from "hono/utils/types";
import { errorResponses, jsonResponse, PARTNER_COMMON_ERRORS, serialisedJson } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { queryInteger } from "../query-integer.js";

const EventLog = z
  .object({
    events: z.array(EventSchema),
    nextAfter: z.number().int().openapi({
      description: "The last sequence returned, or `after` when none: pass it as `after` to read on",
    }),
  })
  .openapi("EventLog");

const EventLogQuery = z.object({
  after: queryInteger({
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    fallback: 0,
    description: "Events with a larger sequence (default 0: from the first)",
  }),
  limit: queryInteger({ min: 1, max: 1000, fallback: 100 }),
  type: z.enum(EVENT_TYPES).optional().openapi({ description: "Only events of this type" }),
});

const listEventsRoute = createRoute({
  method: "get",
  path: "/events",
  operationId: "listEvents",
  tags: ["Events"],
  summary: "Read the event log, in ascending sequence",
  description:
    "Every event of the partner and environment (the same events webhooks deliver), kept at least 30 days. " +
    "Call again with `after=nextAfter` to read on: a reader that does so sees every event exactly once, in " +
    "sequence order, even while new events are being written (an event never appears behind one already " +
    "listed). An empty page means the reader is caught up; ask again later with the same `after`.",
  request: { query: EventLogQuery },
  responses: {
    200: jsonResponse(EventLog, "Up to `limit` events after `after`"),
    ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.InvalidRequest),
  },
});

export const eventsRouter = createRouter().openapi(listEventsRoute, async (c) => {
  const { partner, deps } = c.var;
  const query = c.req.valid("query");
  // Release 2 knows no such type (KS-4101) and none is written before the gate opens.
  if (query.type === "webhook.disabled" && !(await deps.rollout.on("webhook-endpoint-health"))) {
    throw new ServiceError(ErrorCode.InvalidRequest, {
      details: [{ path: "type", message: "webhook.disabled is available once the rollout has finished" }],
    });
  }
  // Any replica shows a prefix of the primary's commits, and sequences follow commit order: a lagging
  // read returns fewer events, never a gap (docs/partitioning.md).
  const page = await eventLogPage(deps.readDb, {
    partnerId: partner.partnerId,
    environment: partner.environment,
    ...query,
  });
  const body = `{"events":${page.json},"nextAfter":${page.lastSequence ?? query.after}}`;
  return serialisedJson<JSONParsed<z.infer<typeof EventLog>>>(c, body);
});
