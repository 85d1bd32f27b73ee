import { z } from "@hono/zod-openapi";

/** Path parameters and request fields shared by the operator route groups. */

const pathId = (name: string, example: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name, in: "path" }, example });

export const PartnerParams = z.object({ partnerId: pathId("partnerId", "ptr_0Qx7kLm2AbCdEfGhIjKlMnOp") });
export const PartnerKeyParams = PartnerParams.extend({ keyId: pathId("keyId", "key_0Qx7kLm2AbCdEfGhIjKlMnOp") });

/** An absolute ISO-8601 date-time with its offset (`2027-01-31T00:00:00Z`). */
export const FutureTimestamp = z.iso
  .datetime({ offset: true })
  .openapi({ format: "date-time", description: "Must lie in the future" });
