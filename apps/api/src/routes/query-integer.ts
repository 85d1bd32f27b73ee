import { z } from "@hono/zod-openapi";

/**
 * An integer query parameter: plain digits within [min, max], `fallback` when absent; anything else
 * is 400 KS-4101. `z.coerce` (`Number()`) would also take `0x10`, `1e3`, `2.0` or an empty value (0),
 * so a typo would become a value; the env schema (packages/runtime env.ts) is as strict.
 */
export function queryInteger(range: { min: number; max: number; fallback: number; description?: string }) {
  return z
    .string()
    .regex(/^\d+$/, "must be a whole number in plain digits")
    .transform(Number)
    .pipe(z.number().min(range.min).max(range.max))
    .default(range.fallback)
    .openapi({
      type: "integer",
      minimum: range.min,
      maximum: range.max,
      default: range.fallback,
      example: range.fallback,
      ...(range.description ? { description: range.description } : {}),
    });
}
