import { startBlocksRole } from "./blocks/index.js";
import type { RoleStarter } from "./context.js";
import { startKeyExpiryRole } from "./key-expiry/index.js";
import { startSettlementsRole } from "./settlements/index.js";
import { startWebhooksRole } from "./webhooks/index.js";

/** Every worker role; each runs as its own process in production (`--role`), or all in one (`all`). */
export const ROLES = {
  blocks: startBlocksRole,
  webhooks: startWebhooksRole,
  "key-expiry": startKeyExpiryRole,
  settlements: startSettlementsRole,
} satisfies Record<RoleName, RoleStarter>;

export const ROLE_NAMES = ["blocks", "settlements", "webhooks", "key-expiry"] as const;
export type RoleName = (typeof ROLE_NAMES)[number];
