import type { RequestSpec, Transport } from "./transport.js";
import type { PageRequest } from "./types.js";

/** A create's key (same key and body within 24 h: the first result); your own keeps it safe across your restarts. */
export interface CreateOptions {
  idempotencyKey?: string;
}

/** Every partner endpoint's path starts with it. */
export const PARTNER_PREFIX = "/api/partner/v1";

/** A path segment from an id or a date, escaped. */
export const segment = (value: string | number) => encodeURIComponent(String(value));

/** A list endpoint's `page` and `limit` query. */
export const pageQuery = (page: PageRequest = {}) => ({ page: page.page, limit: page.limit });

/**
 * The requests the client's resource groups make, each with the retry safety its kind allows
 * (transport.ts, `RequestSpec.safety`). Paths are under the partner prefix. A new resource group is
 * a function of this (see games.ts), wired in client.ts with one line.
 */
export class PartnerRequests {
  constructor(private readonly transport: Transport) {}

  /** A create (game, sheet, grant, webhook), always keyed (given, or generated for the call): its retries make no second one. */
  create<T>(path: string, body: unknown, options: CreateOptions) {
    const headers = { "Idempotency-Key": options.idempotencyKey ?? globalThis.crypto.randomUUID() };
    return this.send<T>({ method: "POST", path: PARTNER_PREFIX + path, body, headers, safety: "idempotent" });
  }

  get<T>(path: string, query?: Record<string, string | number | undefined>) {
    return this.send<T>({ method: "GET", path: PARTNER_PREFIX + path, query, safety: "idempotent" });
  }

  /** Writes the service does not de-duplicate: a 5xx is only retried when its code says nothing was done. */
  write<T>(method: "POST" | "PATCH" | "DELETE", path: string, body?: unknown) {
    const safety = method === "DELETE" ? "idempotent" : "write";
    return this.send<T>({ method, path: PARTNER_PREFIX + path, body, safety });
  }

  /** A POST whose repeat answers as the first did and changes nothing more (a cancel, a void): retried as a read. */
  repeatable<T>(path: string, body?: unknown) {
    return this.send<T>({ method: "POST", path: PARTNER_PREFIX + path, body, safety: "idempotent" });
  }

  /** Any request, its path as given (from the site root). */
  send<T>(spec: RequestSpec) {
    return this.transport.request<T>(spec);
  }
}
