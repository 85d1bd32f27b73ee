import type { Environment } from "./api-key.js";
import type { ServiceError } from "./errors.js";

/** Whose a resource is: a partner in one environment (a sandbox and a production resource are strangers). */
export interface Owner {
  partnerId: string;
  environment: Environment;
}

/**
 * The one ownership check of records read outside SQL (caches): the caller's own record, or the
 * refusal the resource names (an unknown id and another's look alike). Look-ups in SQL filter by
 * owner in their statement instead (`requireOwn*` in packages/db).
 */
export function requireOwned<T extends Owner>(
  owner: Owner,
  record: T | null | undefined,
  refusal: () => ServiceError,
): T {
  if (!record || record.partnerId !== owner.partnerId || record.environment !== owner.environment) throw refusal();
  return record;
}
