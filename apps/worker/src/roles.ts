import type { RoleStarter } from "./context.js";

/** Every worker role; each runs as its own process in production (`--role`), or all in one (`all`). */
export const ROLES: Record<string, RoleStarter> = {};

export const ROLE_NAMES = ["blocks", "settlements", "webhooks", "key-expiry"] as const;
export type RoleName = (typeof ROLE_NAMES)[number];
