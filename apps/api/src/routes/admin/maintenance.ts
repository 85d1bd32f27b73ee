import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import { announceChange } from "../../invalidation.js";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonBody, jsonResponse } from "../../openapi.js";
import { createRouter } from "../../router.js";

const MaintenanceState = z.object({ enabled: z.boolean() }).openapi("MaintenanceState");
const SetMaintenanceBody = z.strictObject({ enabled: z.boolean() }).openapi("SetMaintenance");

const tags = ["Operator: maintenance"];
const description =
  "While on, partner calls answer 503 KS-5002 with `Retry-After: 60` on every API process within 1 s; " +
  "the operator API, health, metrics and the dashboard stay up.";

export const maintenanceRouter = createRouter();

maintenanceRouter.openapi(
  createRoute({
    method: "post",
    path: "/maintenance",
    operationId: "setMaintenance",
    tags,
    summary: "Turn maintenance mode on or off",
    description,
    request: { body: jsonBody(SetMaintenanceBody, { enabled: true }) },
    responses: {
      200: jsonResponse(MaintenanceState, "The state now in force"),
      ...errorResponses(...ADMIN_COMMON_ERRORS, ErrorCode.InvalidRequest, ErrorCode.RequiredFieldMissing),
    },
  }),
  async (c) => {
    const { enabled } = c.req.valid("json");
    await c.var.deps.maintenance.set(enabled);
    await announceChange(c.var.deps, "maintenance");
    return c.json({ enabled }, 200);
  },
);

maintenanceRouter.openapi(
  createRoute({
    method: "get",
    path: "/maintenance",
    operationId: "getMaintenance",
    tags,
    summary: "Whether maintenance mode is on",
    description,
    responses: {
      200: jsonResponse(MaintenanceState, "The state in Redis (what every API process follows)"),
      ...errorResponses(...ADMIN_COMMON_ERRORS),
    },
  }),
  async (c) => c.json({ enabled: await c.var.deps.maintenance.read() }, 200),
);
